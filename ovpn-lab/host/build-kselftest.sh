#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs the selftests as netdev's CI does: "make kselftest-install"
# of TARGETS=net/ovpn in a kernel tree carrying the driver (the prepared
# tree of ktree.sh with the repository laid over it), so that the guest
# runs them through kselftest's own runner, run_kselftest.sh, which
# honours "settings".  ovpn-cli is built there, by lib.mk, against the
# tree's exported headers.  Prints the install directory, relative to
# the repository: .build/kselftest.

. "$(dirname "$0")/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
tree=$("$LAB_DIR/upstream/ktree.sh")
work=$(mktemp -d "$OVPN_LAB_CACHE/kselftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/upper" "$work/work" "$work/merged"
rm -rf "$REPO_DIR/.build/kselftest"
mkdir -p "$REPO_DIR/.build"

unshare --mount --propagation private -- /bin/bash -c '
	set -e
	lab=$1 root=$2 tree=$3 work=$4
	mount -t overlay overlay \
		-o "lowerdir=$tree,upperdir=$work/upper,workdir=$work/work" \
		"$work/merged"
	"$lab/upstream/overlay.sh" "$work/merged" >/dev/null
	. "$lab/host/common.sh"
	lab_chroot_tree "$root" "$work/merged" /bin/sh -c \
		"cd /ktree && \
		 make -s kselftest-install TARGETS=net/ovpn \
			KSFT_INSTALL_PATH=/src/.build/kselftest"
' build-kselftest "$LAB_DIR" "$root" "$tree" "$work" >&2 ||
	lab_die "make kselftest-install TARGETS=net/ovpn failed"
[ -x "$REPO_DIR/.build/kselftest/run_kselftest.sh" ] ||
	lab_die "no run_kselftest.sh in .build/kselftest"
echo .build/kselftest
