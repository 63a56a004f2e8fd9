#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The upstream-readiness check ("./lab upstream-check"): lay this
# repository over the lab's prepared linux-source tree (ktree.sh) and run
# netdev's mechanical checks on it in-tree (intree-check.sh).  The cached
# tree itself is never written: the overlay lives in an overlayfs whose
# upper layer is thrown away afterwards.  Ends with "N findings"; fails
# unless N is 0.
#
# Usage: upstream-check.sh

. "$(dirname "$0")/../host/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
tree=$("$LAB_DIR/upstream/ktree.sh")
sparse=$("$LAB_DIR/upstream/sparse.sh")

t0=$(date +%s)
set +e
lab_chroot_overlaid -f "$sparse:.ovpn-lab/sparse" "$root" "$tree" \
	/src/ovpn-lab/upstream/intree-check.sh
rc=$?
set -e
lab_log "upstream check took $(($(date +%s) - t0)) s"
exit "$rc"
