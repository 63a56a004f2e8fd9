#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: the TCP transport under load, our module against the
# distribution's, in the same boot.  Each round, each module (alternating
# which goes first) gets a tunnel over TCP with AES-128-GCM, then:
# - idle: pings through the tunnel every 0.2 s for SECONDS;
# - loaded: the same pings while one iperf3 stream fills the tunnel;
# - shared: 2, then 4 iperf3 streams at once, one process and server port
#   each, their throughputs apart and Jain's fairness index
#   (sum x)^2 / (n * sum x^2), 1 when they share equally.
# One JSON line a measurement in $OVPN_LAB_OUT/latency.jsonl, and a table
# of the medians over the rounds in $OVPN_LAB_OUT/latency.txt:
#	{"round": 1, "module": "ours", "what": "loaded", "streams": 1,
#	 "rtt_ms": [..], "mbps": [..], "tx_dropped": N, "retransmits": N}
# (tx_dropped: what the tunnel device dropped meanwhile; retransmits: the
# inner streams' own, as iperf3 reports them; null for idle).
#
# With RATE, in Mbit/s, a's veth sends at that rate through a token bucket
# whose queue holds 50 ms: the outer path is slower than the CPUs, and the
# queues in front of it fill as an operator's uplink's do.
#
# Usage: guest-latency.sh ROUNDS SECONDS [RATE]

. "$(dirname "$0")/bench-lib.sh"

rounds=${1:-3}
secs=${2:-10}
rate=${3:-}
jsonl=$OVPN_LAB_OUT/latency.jsonl

trap 'bench_tunnel_down; bench_netns_del; rm -rf "$BENCH_TMP"' EXIT

# pings: the RTTs, in ms, of a ping every 0.2 s for $secs seconds; a lost
# one is not listed.
pings()
{
	in_a ping -n -i 0.2 -c $((secs * 5)) -W 5 5.5.0.2 |
		sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p'
}

# iperf_start N: N single-stream iperf3 clients in the background, one per
# server port (see guest-throughput.sh for why not -P).
iperf_start()
{
	local i

	for i in $(seq "$1"); do
		in_a timeout $((secs * 10 + 60)) iperf3 -c 5.5.0.2 \
			-p $((5200 + i)) -t "$secs" -J \
			>"$BENCH_TMP/iperf-$i.json" 2>&1 &
		echo $! >"$BENCH_TMP/iperf-$i.pid"
	done
}

# tx_dropped: what tun-a has dropped on its way out so far.
tx_dropped() { in_a cat /sys/class/net/tun-a/statistics/tx_dropped; }

# iperf_retrans N: the segments the N clients retransmitted, in all.
iperf_retrans()
{
	local i

	for i in $(seq "$1"); do
		jq '.end.sum_sent.retransmits // 0' \
			"$BENCH_TMP/iperf-$i.json" 2>/dev/null || echo 0
	done | awk '{ n += $1 } END { print n + 0 }'
}

# iperf_mbps N: wait for the N clients; each one's Mbit/s, a line each
# (null for one that failed).
iperf_mbps()
{
	local i

	for i in $(seq "$1"); do
		wait "$(cat "$BENCH_TMP/iperf-$i.pid")" || true
		jq '(.end.sum_received.bits_per_second // null) |
		    if . == null then null else . / 1e6 end' \
			"$BENCH_TMP/iperf-$i.json" 2>/dev/null || echo null
	done
}

# record ROUND MODULE WHAT STREAMS RTT_FILE MBPS_FILE [DROPPED RETRANS]
record()
{
	jq -cn --argjson round "$1" --arg module "$2" --arg what "$3" \
		--argjson streams "$4" \
		--slurpfile rtt "$5" --slurpfile mbps "$6" \
		--argjson dropped "${7:-null}" --argjson retrans "${8:-null}" \
		'{round: $round, module: $module, what: $what,
		  streams: $streams, rtt_ms: $rtt, mbps: $mbps,
		  tx_dropped: $dropped, retransmits: $retrans}' >>"$jsonl"
}

# module_turn ROUND MODULE
module_turn()
{
	local round=$1 module=$2 n drop0 drops

	bench_load "$module"
	bench_tunnel tcp aes128

	pings >"$BENCH_TMP/rtt"
	: >"$BENCH_TMP/mbps"
	record "$round" "$module" idle 0 "$BENCH_TMP/rtt" "$BENCH_TMP/mbps"

	drop0=$(tx_dropped)
	iperf_start 1
	# Pings only once the stream is under way.
	sleep 1
	pings >"$BENCH_TMP/rtt"
	iperf_mbps 1 >"$BENCH_TMP/mbps"
	record "$round" "$module" loaded 1 "$BENCH_TMP/rtt" "$BENCH_TMP/mbps" \
		$(($(tx_dropped) - drop0)) "$(iperf_retrans 1)"
	bench_log "round $round $module: loaded RTT median" \
		"$(sort -n "$BENCH_TMP/rtt" | awk '{ a[NR] = $1 }
			END { print a[int((NR + 1) / 2)] }') ms," \
		"$(cat "$BENCH_TMP/mbps") Mbit/s"

	for n in 2 4; do
		drop0=$(tx_dropped)
		iperf_start "$n"
		iperf_mbps "$n" >"$BENCH_TMP/mbps"
		drops=$(($(tx_dropped) - drop0))
		: >"$BENCH_TMP/rtt"
		record "$round" "$module" shared "$n" "$BENCH_TMP/rtt" \
			"$BENCH_TMP/mbps" "$drops" "$(iperf_retrans "$n")"
		bench_log "round $round $module, $n streams:" \
			"$(xargs <"$BENCH_TMP/mbps") Mbit/s, $drops dropped"
	done
	bench_tunnel_down
	bench_unload
}

# The table: per module, medians over the rounds of each round's median
# and 90th percentile RTT, the loaded stream's Mbit/s, and Jain's index
# of 2 and 4 streams.
table()
{
	jq -rs '
	def median: sort | if length == 0 then null
		else .[(length - 1) / 2 | floor] end;
	def pct(p): sort | if length == 0 then null
		else .[((length - 1) * p) | floor] end;
	def jain: map(select(. != null)) |
		if length == 0 then null
		else (add * add) / (length * (map(. * .) | add)) end;
	def r2: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
	group_by(.module)[] | .[0].module as $m |
	[$m,
	 (map(select(.what == "idle") | .rtt_ms | median) | median | r2),
	 (map(select(.what == "loaded") | .rtt_ms | median) | median | r2),
	 (map(select(.what == "loaded") | .rtt_ms | pct(0.9)) | median | r2),
	 (map(select(.what == "loaded") | .mbps[0]) | median | r2),
	 (map(select(.what == "shared" and .streams == 2) | .mbps | jain)
	  | median | r2),
	 (map(select(.what == "shared" and .streams == 4) | .mbps | jain)
	  | median | r2)] | @tsv' "$jsonl" |
	{
		printf 'module\tidle RTT ms\tloaded RTT ms\tloaded p90 ms\t'
		printf 'Mbit/s\tJain 2\tJain 4\n'
		cat
	}
}

: >"$jsonl"
bench_netns
if [ -n "$rate" ]; then
	in_a tc qdisc add dev veth-a root tbf rate "${rate}mbit" \
		burst 16kb latency 50ms
	bench_log "veth-a shaped to $rate Mbit/s"
fi
for i in 1 2 3 4; do
	in_b iperf3 -s -D -p $((5200 + i)) --pidfile "$BENCH_TMP/iperf3-$i.pid"
done
sleep 1

noop() { :; }
bench_alternate "$rounds" noop module_turn
for i in 1 2 3 4; do
	kill "$(cat "$BENCH_TMP/iperf3-$i.pid")"
done
table >"$OVPN_LAB_OUT/latency.txt"
cat "$OVPN_LAB_OUT/latency.txt" >&2
bench_log "done: $(wc -l <"$jsonl") measurements"
