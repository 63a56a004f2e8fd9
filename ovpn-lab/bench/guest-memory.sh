#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: the memory per peer, key included, of our module
# and then of the distribution kernel's (upstream's), in the same boot
# (guest-memory.py), each unloaded before the next is loaded.  Appends
# to memory.txt one line a module:
#
#	<module> <possible CPUs> <online CPUs> <peers> <per-CPU B> <slab B>
#		<meminfo Percpu B> <meminfo Slab B>
#
# the bytes being per peer (traced; meminfo's for reference).
#
# Usage: guest-memory.sh [peers]     (default 2000)

. "$(dirname "$0")/bench-lib.sh"

peers=${1:-2000}
trap 'rm -rf "$BENCH_TMP"' EXIT

for module in ours upstream; do
	bench_load "$module"
	bench_log "$module: $peers peers with a key each"
	echo "$module $(python3 /src/ovpn-lab/bench/guest-memory.py "$peers")" \
		>>"$OVPN_LAB_OUT/memory.txt"
	# The namespace, its device and its peers go asynchronously.
	bench_unload
done
cat "$OVPN_LAB_OUT/memory.txt"
