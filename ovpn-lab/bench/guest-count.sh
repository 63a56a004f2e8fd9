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
# With "scale", the same datagrams cross an MP device instead, in a, with
# many peers: the real one, b's P2P device (peer 1, VPN 5.5.0.2, added
# first), and filler peers from the peers files of scale-peers.py in
# .build/bench/scale-peers (set random-100 and random-100000: 100 and
# 100,000 peers in all; collide: 10,000 in the real peer's buckets, in
# front of it in each chain).  Each set is counted on each module, over
# UDP with AES-128-GCM, both ways: "tx" a to b (a's MP lookup by VPN
# address) and "rx" b to a (a's lookup by peer id); a's work is CPU 0's
# both ways.  Its windows say "<window> <kind> <module> <set> <tx|rx>
# <packets>", scale-sets.txt "<module> <set> <peers>"; no veth runs, no
# allocations.
#
# Usage: guest-count.sh [scale] [packets] [size]
#                                     (default 2000 datagrams of 1000 bytes)

. "$(dirname "$0")/bench-lib.sh"

mode=count
if [ "${1:-}" = scale ]; then
	mode=scale
	shift
fi
packets=${1:-2000}
size=${2:-1000}
out=$OVPN_LAB_OUT
flow=/src/.build/bench/ovpn-flow
tracing=/sys/kernel/tracing
last=$(($(nproc) - 1))
window=0

trap 'bench_tunnel_down; bench_netns_del; rm -rf "$BENCH_TMP"' EXIT

# flow KIND MODULE TRANSPORT CIPHER DEST [trace]: one window, from a on
# CPU 0 to b on the last CPU, or the other way round with FLOW_BACK=1.
flow()
{
	local kind=$1 module=$2 transport=$3 cipher=$4 dest=$5 trace=${6:-}
	local n=$packets to=in_b to_cpu=$last from=in_a from_cpu=0

	[ "$kind" = warm ] && n=200
	if [ "${FLOW_BACK:-0}" = 1 ]; then
		to=in_a to_cpu=0 from=in_b from_cpu=$last
	fi
	rm -f "$BENCH_TMP/ack"
	mkfifo "$BENCH_TMP/ack"
	$to taskset -c "$to_cpu" "$flow" recv 7000 "$n" "$BENCH_TMP/ack" \
		>"$BENCH_TMP/recv.log" 2>&1 &
	log_wait "$BENCH_TMP/recv.log" '^READY' >/dev/null
	if ! $from taskset -c "$from_cpu" "$flow" send "$dest" 7000 "$n" \
		"$size" "$BENCH_TMP/ack" $trace 3>"$tracing/tracing_on"; then
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

# scale_set MODULE SET: a's MP device with the real peer and SET's
# fillers, b's P2P device, both ways counted.
scale_set()
{
	local file=/src/.build/bench/scale-peers/$2.txt

	[ "$2" != collide ] || file=${file%.txt}-$1.txt
	bench_tunnel_down
	{
		echo "1 10.10.0.2 $BENCH_PORT 5.5.0.2 -"
		cat "$file"
	} >"$BENCH_TMP/peers"
	echo "$1 $2 $(wc -l <"$BENCH_TMP/peers")" >>"$out/scale-sets.txt"
	bench_log "$1: $2, $(wc -l <"$BENCH_TMP/peers") peers"
	in_a "$OVPN_CLI" new_iface tun-a mp
	in_b "$OVPN_CLI" new_iface tun-b
	OVPN_READY_SECS=1800 start_ready "$BENCH_TMP/a.log" in_a "$OVPN_CLI" \
		new_multi_peer tun-a "$BENCH_PORT" "$BENCH_TMP/peers" stay
	start_ready "$BENCH_TMP/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 \
		"$BENCH_PORT" 10.10.0.1 "$BENCH_PORT" stay
	bench_tunnel_up 1 1 aes128
	flow warm "$1" "$2" tx 5.5.0.2
	flow count "$1" "$2" tx 5.5.0.2
	FLOW_BACK=1 flow warm "$1" "$2" rx 5.5.0.1
	FLOW_BACK=1 flow count "$1" "$2" rx 5.5.0.1
}

: >"$out/windows.txt"
echo "guest: $(nproc) CPUs, kernel $(uname -r), $packets datagrams" \
	"of $size bytes" >"$out/count-env.txt"
bench_netns split
if [ "$mode" = scale ]; then
	# Upstream's module waits for an RCU grace period for each peer its
	# device deletion releases (ovpn_socket_release()): minutes for
	# 10,000 peers under emulation, the kernel complaining each 10 s
	# that the device is still in use, and after 120 s that "ip link del"
	# hangs (either fails the boot) unless told to wait longer; half an
	# hour for 100,000.  Its last device,
	# with 100,000 peers, is left for the power-off: upstream goes last,
	# that set last.  And each peer deleted is logged at KERN_INFO, which
	# the emulated serial console would take minutes to print: warnings
	# and worse still go there.
	trap 'rm -rf "$BENCH_TMP"' EXIT
	sysctl -qw net.core.netdev_unregister_timeout_secs=1800 \
		kernel.hung_task_timeout_secs=1800
	dmesg -n 5
	: >"$out/scale-sets.txt"
	for module in ours upstream; do
		bench_tunnel_down
		bench_load "$module"
		cat /proc/kallsyms >"$out/kallsyms-$module.txt"
		for peers in random-100 collide random-100000; do
			scale_set "$module" "$peers"
		done
	done
	bench_log "done: $window windows"
	exit 0
fi
: >"$out/allocs.txt"
: >"$out/alloc-sites.txt"
tracing_setup
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
bench_log "done: $window windows"
