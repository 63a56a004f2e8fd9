#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's KUnit tests ("./lab kunit"), as netdev's CI runs KUnit:
# kunit.py builds a User-Mode Linux kernel from the lab root's clean
# linux-source (kunit.py builds out of tree, which ktree.sh's tree, built
# in place, does not allow) with this repository laid over it and
# drivers/net/ovpn/.kunitconfig, runs it as a process and parses its KTAP.
# UML runs the tests on the host without a VM and without loading a module
# into the host's kernel; Debian's kernels have no KUnit.  The build
# directory is cached under $OVPN_LAB_CACHE, keyed by the source tree,
# so a later run only rebuilds what changed.  Ends with kunit.py's
# summary; fails if a test failed or did not run.
#
# Usage: kunit.sh

. "$(dirname "$0")/../host/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
tree=$(ls -d "$root"/usr/src/linux-source-*/ | sort -V | tail -n1)
tree=${tree%/}
[ -f "$tree/Makefile" ] || lab_die "no linux-source tree in the lab root"
version=$(lab_chroot "$root" dpkg-query -W -f '${Version}' \
	"$(basename "$tree")")
build=$OVPN_LAB_CACHE/kunit-um-$version
mkdir -p "$build"

t0=$(date +%s)
set +e
lab_chroot_overlaid -b "$build:.kunit" "$root" "$tree" /bin/sh -c \
	"cd /ktree && tools/testing/kunit/kunit.py run \
		--kunitconfig=drivers/net/ovpn --build_dir=.kunit \
		--jobs=$(nproc) --timeout=600"
rc=$?
set -e
lab_log "kunit took $(($(date +%s) - t0)) s"
exit "$rc"
