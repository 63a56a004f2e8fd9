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
rm -rf "$REPO_DIR/.build/kselftest"
mkdir -p "$REPO_DIR/.build"
lab_chroot_overlaid "$root" "$tree" /bin/sh -c "cd /ktree && \
	make -s kselftest-install TARGETS=net/ovpn \
		KSFT_INSTALL_PATH=/src/.build/kselftest" >&2 ||
	lab_die "make kselftest-install TARGETS=net/ovpn failed"
[ -x "$REPO_DIR/.build/kselftest/run_kselftest.sh" ] ||
	lab_die "no run_kselftest.sh in .build/kselftest"
echo .build/kselftest
