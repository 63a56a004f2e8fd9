#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest, booted with the ovpn-count QEMU plugin: the per-packet
# cost of each module, as counts.  A fixed number of UDP datagrams crosses
# from namespace a (CPU 0) to namespace b (the last CPU), first over the
# plain veth (the baseline), then through the tunnel on our module and on
# the distribution's, for each transport and cipher.  Every run is one
# window of the plugin; windows.txt says which is which:
#
#	<window> <kind> <module> <transport> <cipher> <packets>
#
# kind "count" is a measured run, "warm" a warm-up and "alloc" a run with
# the kernel's allocation tracepoints on, whose per-CPU event counts go
# to allocs.txt:
#
#	<window> <module> <transport> <cipher> <packets> <cpu> <all> <in-ovpn>
#
# /proc/kallsyms after each module load goes to kallsyms-<module>.txt, to
# name the atomic sites.
#
# Usage: guest-count.sh [packets] [size]     (default 2000 datagrams of
#                                             1000 bytes)

. "$(dirname "$0")/bench-lib.sh"

packets=${1:-2000}
size=${2:-1000}
out=$OVPN_LAB_OUT
flow=/src/.build/bench/ovpn-flow
tracing=/sys/kernel/tracing
last=$(($(nproc) - 1))
window=0

trap 'bench_tunnel_down; bench_netns_del; rm -rf "$BENCH_TMP"' EXIT

# flow KIND MODULE TRANSPORT CIPHER DEST [trace]: one window.
flow()
{
	local kind=$1 module=$2 transport=$3 cipher=$4 dest=$5 trace=${6:-}
	local n=$packets

	[ "$kind" = warm ] && n=200
	rm -f "$BENCH_TMP/ack"
	mkfifo "$BENCH_TMP/ack"
	in_b taskset -c "$last" "$flow" recv 7000 "$n" "$BENCH_TMP/ack" \
		>"$BENCH_TMP/recv.log" 2>&1 &
	log_wait "$BENCH_TMP/recv.log" '^READY' >/dev/null
	if ! in_a taskset -c 0 "$flow" send "$dest" 7000 "$n" "$size" \
		"$BENCH_TMP/ack" $trace 3>"$tracing/tracing_on"; then
		cat "$BENCH_TMP/recv.log" >&2
		return 1
	fi
	wait $!
	echo "$window $kind $module $transport $cipher $n" >>"$out/windows.txt"
	window=$((window + 1))
}

tracing_setup()
{
	[ -e "$tracing/tracing_on" ] || mount -t tracefs nodev "$tracing"
	echo 0 >"$tracing/tracing_on"
	echo 16384 >"$tracing/buffer_size_kb"
	echo 1 >"$tracing/events/kmem/kmalloc/enable"
	echo 1 >"$tracing/events/kmem/kmem_cache_alloc/enable"
}

# allocs MODULE TRANSPORT CIPHER DEST: the allocations of one run, by CPU.
allocs()
{
	local cpu all mine

	echo >"$tracing/trace"
	flow alloc "$@" trace
	for cpu in 0 "$last"; do
		all=$(grep -vc '^#' "$tracing/per_cpu/cpu$cpu/trace" || true)
		mine=$(grep -v '^#' "$tracing/per_cpu/cpu$cpu/trace" |
			grep -c 'call_site=[^ ]* \[ovpn\]' || true)
		echo "$((window - 1)) $* $packets $cpu $all $mine" |
			cut -d' ' -f1-4,6- >>"$out/allocs.txt"
	done
	grep -v '^#' "$tracing/trace" |
		sed -n 's/.*call_site=\([^ ]*\) \[ovpn\].*/\1/p' |
		sed 's/+.*//' | sort | uniq -c |
		sed "s/^/$* /" >>"$out/alloc-sites.txt" || true
}

# measure MODULE TRANSPORT CIPHER DEST: warm-up, count, allocations.
measure()
{
	bench_log "counting $1 $2 $3"
	flow warm "$@"
	flow count "$@"
	allocs "$@"
}

: >"$out/windows.txt"
: >"$out/allocs.txt"
: >"$out/alloc-sites.txt"
tracing_setup
bench_netns split
cat /proc/kallsyms >"$out/kallsyms-veth.txt"
measure veth - - 10.10.0.2

for module in ours upstream; do
	bench_load "$module"
	cat /proc/kallsyms >"$out/kallsyms-$module.txt"
	for transport in udp tcp; do
		for cipher in aes128 chachapoly; do
			bench_tunnel "$transport" "$cipher"
			measure "$module" "$transport" "$cipher" 5.5.0.2
		done
	done
	bench_tunnel_down
	bench_unload
done
measure veth - - 10.10.0.2
echo "guest: $(nproc) CPUs, kernel $(uname -r), $packets datagrams of $size bytes" \
	>"$out/count-env.txt"
bench_log "done: $window windows"
