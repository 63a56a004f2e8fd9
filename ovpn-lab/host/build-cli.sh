#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the selftests' ovpn-cli inside the lab root, against our uapi
# header, with every warning an error.  Prints its path, relative to the
# repository (.build/ovpn-cli).
#
# Usage: build-cli.sh

. "$(dirname "$0")/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
mkdir -p "$REPO_DIR/.build"
lab_chroot "$root" /bin/sh -c "cd /src/tools/testing/selftests/net/ovpn && \
	cc -O2 -Wall -Wextra -Werror -I/src/include/uapi \
	\$(pkg-config --cflags libnl-3.0 libnl-genl-3.0) -o /src/.build/ovpn-cli \
	ovpn-cli.c \$(pkg-config --libs libnl-3.0 libnl-genl-3.0)" >&2
echo .build/ovpn-cli
