#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest, booted with the ovpn-count plugin's coherence model
# (lines=1): cache-line transfers between vCPUs per packet, through one
# peer, on our module and on the distribution's, in the same boot.  Each
# workload is one window of the plugin; windows.txt says which is which:
#
#	<window> <kind> <module> <transport> <workload> <packets> <tx> <rx>
#
# <tx> and <rx> are the CPUs (comma-separated) whose work is the sending
# side's and the receiving side's.  Workloads, inner traffic being UDP
# datagrams of ovpn-flow (no acknowledgements cross the tunnel):
#
#   ping     a flood ping from a, pinned to CPU 0, no RPS: a packet is
#            received on the CPU that sent it, so the whole round trip
#            could stay on CPU 0 (UDP transport only)
#   tx-N     TX fan-in: N streams through the one peer, sent from every
#            CPU but the last; b receives them on the last (RPS on its
#            veth, receivers pinned there)
#   rx-rps   RX fan-out: 8 streams sent from CPU 0, decrypted on the last
#            CPU (RPS on b's veth), then spread by RPS on tun-b over
#            CPUs 1 to last, where their receivers are pinned
#   par-N    our module only, UDP: tx-N (N = 1, 8) and rx-rps (par-rps)
#            again with both P2P devices' "parallel-crypto" private flag
#            on, so that the AEAD runs on every CPU's crypto worker
#   mp-64    64 peers: a's tun-a is a multipoint device with 64 peers, b
#            has a P2P device for each (tun-b1..64, 5.5.1.<i>, each on its
#            own port); one stream per peer, sent from every CPU but the
#            last as tx-N, received on the last (UDP transport only)
#
# A window whose datagrams did not all arrive (upstream's TCP transport
# drops what its socket cannot take at once) is recorded as kind "lossy",
# with the datagrams received; a lost burst leaves its stream idle for
# ovpn-flow's 10 s time-out, whose timer ticks the window counts too.
#
# The first window proves the model (count-check lines): its handoffs
# between CPUs 0 and 1 must move one line 4 times each, and the counter
# incremented atomically with each turn twice; selftest.txt says
# "<window> <handoffs each way> <the line's address> <the counter's>" for
# lines-analyze.py to check.
#
# /proc/kallsyms after each module load goes to kallsyms-<module>.txt, to
# name the instructions and static data.
#
# Usage: guest-lines.sh [packets] [size]   (default 512 datagrams a window,
#                                           of 1000 bytes)

. "$(dirname "$0")/bench-lib.sh"

packets=${1:-512}
size=${2:-1000}
out=$OVPN_LAB_OUT
flow=/src/.build/bench/ovpn-flow
last=$(($(nproc) - 1))
window=0

trap 'bench_tunnel_down; bench_netns_del; rm -rf "$BENCH_TMP"' EXIT

# cpu_list FIRST LAST: "FIRST,...,LAST"
cpu_list() { seq -s, "$1" "$2"; }

# record KIND MODULE TRANSPORT WORKLOAD PACKETS TX RX
record()
{
	echo "$window $*" >>"$out/windows.txt"
	window=$((window + 1))
}

# fan KIND MODULE TRANSPORT WORKLOAD STREAMS TX RX: one window of STREAMS
# streams from a on the CPUs TX to receivers in b spread over the CPUs RX,
# to 5.5.0.2 or $FAN_DEST (ovpn-flow fan's address).
fan()
{
	local kind=$1 module=$2 transport=$3 workload=$4 streams=$5
	local tx=$6 rx=$7 per i cpu got
	local -a rxcpus pids=()

	IFS=, read -r -a rxcpus <<<"$rx"
	per=$((packets / streams))
	[ "$kind" = warm ] && per=16
	[ "$per" -ge 16 ] || per=16
	for i in $(seq 0 $((streams - 1))); do
		cpu=${rxcpus[$((i % ${#rxcpus[@]}))]}
		rm -f "$BENCH_TMP/ack.$i"
		mkfifo "$BENCH_TMP/ack.$i"
		in_b taskset -c "$cpu" "$flow" recv $((7000 + i)) "$per" \
			"$BENCH_TMP/ack.$i" >"$BENCH_TMP/recv.$i.log" 2>&1 &
		pids+=($!)
		log_wait "$BENCH_TMP/recv.$i.log" '^READY' >/dev/null
	done
	if ! in_a "$flow" fan "${FAN_DEST:-5.5.0.2}" 7000 "$streams" "$per" \
		"$size" "$tx" "$BENCH_TMP/ack" >/dev/null; then
		bench_log "$module $transport $workload: datagrams lost"
		[ "$kind" = warm ] || kind=lossy
	fi
	wait "${pids[@]}" || true
	got=$(cat "$BENCH_TMP"/recv.*.log |
		awk '/^received/ { n += $2 } END { print n + 0 }')
	rm -f "$BENCH_TMP"/recv.*.log
	[ "$got" -gt 0 ] || lab_fail "$module $transport $workload: nothing came"
	record "$kind" "$module" "$transport" "$workload" "$got" "$tx" "$rx"
}

# ping_window MODULE: a flood ping from CPU 0.
ping_window()
{
	in_a sysctl -qw net.ipv4.ping_group_range="0 0"
	in_a taskset -c 0 "$flow" ping 5.5.0.2 32 "$size" >/dev/null
	record warm "$1" udp ping 32 0 0
	in_a taskset -c 0 "$flow" ping 5.5.0.2 "$packets" "$size" >/dev/null
	record count "$1" udp ping "$packets" 0 0
}

# mp_tunnels: a's multipoint tun-a with 64 peers, peer i being b's P2P
# device tun-b<i> at 10.10.0.2, port BENCH_PORT + i, VPN address 5.5.1.i;
# b's device knows a as peer i too.
mp_tunnels()
{
	local i

	bench_tunnel_down
	for i in $(seq 64); do
		echo "$i 10.10.0.2 $((BENCH_PORT + i)) 5.5.1.$i -"
	done >"$BENCH_TMP/peers"
	in_a "$OVPN_CLI" new_iface tun-a mp
	start_ready "$BENCH_TMP/a.log" in_a "$OVPN_CLI" new_multi_peer tun-a \
		"$BENCH_PORT" "$BENCH_TMP/peers" stay
	for i in $(seq 64); do
		in_b "$OVPN_CLI" new_iface "tun-b$i"
		start_ready "$BENCH_TMP/b$i.log" in_b "$OVPN_CLI" new_peer \
			"tun-b$i" "$i" $((BENCH_PORT + i)) 10.10.0.1 \
			"$BENCH_PORT" stay
		in_a "$OVPN_CLI" new_key tun-a "$i" primary 1 aes128 0 \
			"$BENCH_KEY" >/dev/null
		in_b "$OVPN_CLI" new_key "tun-b$i" "$i" primary 1 aes128 1 \
			"$BENCH_KEY" >/dev/null
		in_b ip addr add "5.5.1.$i/32" dev "tun-b$i"
		in_b ip link set "tun-b$i" mtu 1400 up
	done
	in_a ip addr add 5.5.0.1/16 dev tun-a
	in_a ip link set tun-a mtu 1400 up
}

# mp_tunnels_down: what mp_tunnels set up.
mp_tunnels_down()
{
	local i

	bench_tunnel_down
	for i in $(seq 64); do
		in_b ip link del "tun-b$i" 2>/dev/null || true
	done
}

# workloads MODULE TRANSPORT: the fan-in and fan-out windows.
workloads()
{
	local module=$1 transport=$2 streams

	for streams in 1 8 32; do
		bench_log "$module $transport: tx-$streams"
		fan warm "$module" "$transport" tx-$streams "$streams" \
			"$(cpu_list 0 $((last - 1)))" "$last"
		fan count "$module" "$transport" tx-$streams "$streams" \
			"$(cpu_list 0 $((last - 1)))" "$last"
	done
	bench_log "$module $transport: rx-rps"
	printf '%x' $(((1 << (last + 1)) - 2)) >"$BENCH_TMP/rps-tun"
	in_b sh -c "cat $BENCH_TMP/rps-tun \
		>/sys/class/net/tun-b/queues/rx-0/rps_cpus"
	fan warm "$module" "$transport" rx-rps 8 0 "$(cpu_list 1 "$last")"
	fan count "$module" "$transport" rx-rps 8 0 "$(cpu_list 1 "$last")"
}

# par_workloads: our module's parallel path, over the UDP tunnel that
# bench_tunnel set up: par-1, par-8 and par-rps, as tx-1, tx-8 and rx-rps.
par_workloads()
{
	local streams

	in_a ethtool --set-priv-flags tun-a parallel-crypto on
	in_b ethtool --set-priv-flags tun-b parallel-crypto on
	for streams in 1 8; do
		bench_log "ours udp: par-$streams"
		fan warm ours udp par-$streams "$streams" \
			"$(cpu_list 0 $((last - 1)))" "$last"
		fan count ours udp par-$streams "$streams" \
			"$(cpu_list 0 $((last - 1)))" "$last"
	done
	bench_log "ours udp: par-rps"
	in_b sh -c "cat $BENCH_TMP/rps-tun \
		>/sys/class/net/tun-b/queues/rx-0/rps_cpus"
	fan warm ours udp par-rps 8 0 "$(cpu_list 1 "$last")"
	fan count ours udp par-rps 8 0 "$(cpu_list 1 "$last")"
}

# mp_workload MODULE: the 64 peers' window.
mp_workload()
{
	bench_log "$1 udp: mp-64"
	mp_tunnels
	FAN_DEST=5.5.1.1+ fan warm "$1" udp mp-64 64 \
		"$(cpu_list 0 $((last - 1)))" "$last"
	FAN_DEST=5.5.1.1+ fan count "$1" udp mp-64 64 \
		"$(cpu_list 0 $((last - 1)))" "$last"
	mp_tunnels_down
}

: >"$out/windows.txt"
lines=$(taskset -c 0,1 /src/.build/bench/count-check lines 1000 |
	sed -n 's/.*line at \(0x[0-9a-f]*\), counter at \(0x[0-9a-f]*\)$/\1 \2/p')
[ -n "$lines" ] || lab_fail "count-check lines failed"
echo "$window 1000 $lines" >"$out/selftest.txt"
record selftest - - lines 1000 0 1
echo "guest: $(nproc) CPUs, kernel $(uname -r), $packets datagrams" \
	"of $size bytes a window" >"$out/lines-env.txt"
for module in ours upstream; do
	bench_load "$module"
	cat /proc/kallsyms >"$out/kallsyms-$module.txt"
	bench_log "$module: ping"
	bench_netns
	bench_tunnel udp aes128
	ping_window "$module"
	bench_netns split
	for transport in udp tcp; do
		bench_tunnel "$transport" aes128
		workloads "$module" "$transport"
		if [ "$module" = ours ] && [ "$transport" = udp ]; then
			bench_tunnel udp aes128
			par_workloads
		fi
	done
	mp_workload "$module"
	bench_tunnel_down
	bench_unload
done
bench_log "done: $window windows"
