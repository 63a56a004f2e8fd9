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
work=$(mktemp -d "$OVPN_LAB_CACHE/intree.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/upper" "$work/work" "$work/merged"

t0=$(date +%s)
set +e
unshare --mount --propagation private -- /bin/bash -c '
	set -e
	lab=$1 root=$2 tree=$3 work=$4 sparse=$5
	mount -t overlay overlay \
		-o "lowerdir=$tree,upperdir=$work/upper,workdir=$work/work" \
		"$work/merged"
	"$lab/upstream/overlay.sh" "$work/merged"
	install -D "$sparse" "$work/merged/.ovpn-lab/sparse"
	. "$lab/host/common.sh"
	lab_chroot_tree "$root" "$work/merged" /src/ovpn-lab/upstream/intree-check.sh
' upstream-check "$LAB_DIR" "$root" "$tree" "$work" "$sparse"
rc=$?
set -e
lab_log "upstream check took $(($(date +%s) - t0)) s"
exit "$rc"
