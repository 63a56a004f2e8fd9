#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: iperf3 TCP throughput through one peer, our module
# against the distribution's, in the same boot; N streams are N iperf3
# clients at once, each to its own server.  Each round measures the
# plain veth (the ceiling), then both modules one after the other, the
# order swapped every round so that a drift of the host's load does not
# favour either; each module is loaded afresh for its turn.  One JSON
# object a run (bench_run) is appended to
# $OVPN_LAB_OUT/throughput.jsonl.
#
# Usage: guest-throughput.sh ROUNDS SECONDS "STREAMS..."

. "$(dirname "$0")/bench-lib.sh"

rounds=${1:-3}
secs=${2:-5}
streams=${3:-1 4 8 16}
jsonl=$OVPN_LAB_OUT/throughput.jsonl

trap 'bench_tunnel_down; bench_netns_del; rm -rf "$BENCH_TMP"' EXIT

# streams_once DEST N: N single-stream iperf3 clients at once, one per
# server port, their throughputs summed, in Mbit/s.  One process per
# stream: under emulation, iperf3's own -P threads starve its timer and
# the server loses track of the test (the run stretches to 40 s, then
# fails with "select failed").
streams_once()
{
	local dest=$1 n=$2 i pids=

	for i in $(seq "$n"); do
		in_a timeout $((secs * 10 + 60)) iperf3 -c "$dest" \
			-p $((5200 + i)) -t "$secs" -J \
			>"$BENCH_TMP/iperf-$i.json" 2>&1 &
		pids="$pids $!"
	done
	for i in $pids; do
		wait "$i" || return 1
	done
	for i in $(seq "$n"); do
		jq '.end.sum_received.bits_per_second' "$BENCH_TMP/iperf-$i.json"
	done | awk '{ s += $1 } END { printf "%.3f\n", s / 1e6 }'
}

# veth_turn ROUND: every stream count on the plain veth.
veth_turn()
{
	local n

	for n in $streams; do
		bench_run "$jsonl" "$1" veth - - "$n" \
			streams_once 10.10.0.2 "$n"
	done
}

# module_turn ROUND MODULE: every transport, cipher and stream count.
module_turn()
{
	local round=$1 module=$2 transport cipher n

	bench_load "$module"
	for transport in udp tcp; do
		for cipher in aes128 chachapoly; do
			bench_tunnel "$transport" "$cipher"
			for n in $streams; do
				bench_run "$jsonl" "$round" "$module" \
					"$transport" "$cipher" "$n" \
					streams_once 5.5.0.2 "$n"
			done
		done
	done
	bench_tunnel_down
	bench_unload
}

: >"$jsonl"
bench_netns
max=$(echo "$streams" | tr ' ' '\n' | sort -n | tail -n1)
for i in $(seq "$max"); do
	in_b iperf3 -s -D -p $((5200 + i)) --pidfile "$BENCH_TMP/iperf3-$i.pid"
done
sleep 1

bench_alternate "$rounds" veth_turn module_turn
for i in $(seq "$max"); do
	kill "$(cat "$BENCH_TMP/iperf3-$i.pid")"
done
bench_log "done: $(wc -l <"$jsonl") runs"
