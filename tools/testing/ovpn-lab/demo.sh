#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job ("./lab demo"): build everything, boot the lab kernel with
# our module and show what it does today.  Until the data path exists this
# brings up an MP and a P2P ovpn device, reads them back over rtnetlink
# and generic netlink, and reports boot and load times.

. "$(dirname "$0")/common.sh"

root=$("$LAB_DIR/mkroot.sh")
ko=$("$LAB_DIR/build.sh" amd64)
lab_chroot "$root" /bin/sh -c "cd /src/tools/testing/selftests/net/ovpn && \
	cc -O2 -Wall -I/src/include/uapi \
	\$(pkg-config --cflags libnl-3.0 libnl-genl-3.0) -o /src/.build/ovpn-cli \
	ovpn-cli.c \$(pkg-config --libs libnl-3.0 libnl-genl-3.0)"

out=.build/out/demo
"$LAB_DIR/boot.sh" -o "$out" -- OVPN_KO=/src/$ko \
	tools/testing/ovpn-lab/guest-demo.sh 2>/dev/null | grep -v '^\[' || true
[ -r "$REPO_DIR/$out/report.txt" ] || lab_die "the guest wrote no report"
echo
cat "$REPO_DIR/$out/report.txt"
