#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the benchmark's tools in the lab root, into .build/bench/: the
# ovpn-count QEMU plugin (against the root's glib and the qemu-plugin.h
# mkroot.sh took from QEMU's source), ovpn-flow and count-check.
#
# Usage: build-tools.sh ROOT

. "$(dirname "$0")/../host/common.sh"

root=$1
mkdir -p "$REPO_DIR/.build/bench"
lab_chroot "$root" /bin/sh -c "set -e
	cd /src/ovpn-lab/bench
	cc -O2 -Wall -Wextra -Werror -pthread -o /src/.build/bench/ovpn-flow \\
		ovpn-flow.c
	cc -O2 -Wall -Wextra -Werror -pthread \\
		-o /src/.build/bench/count-check \\
		count-check.c
	cc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC \\
		\$(pkg-config --cflags glib-2.0) -I/usr/local/include \\
		-o /src/.build/bench/ovpn-count.so ovpn-count.c" ||
	lab_die "the benchmark's tools do not build"
