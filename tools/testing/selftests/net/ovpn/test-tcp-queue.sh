#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The TCP transport on a path slower than its sender: a's side of the
# transport's path sends 20 Mbit/s (a token bucket), as an operator's
# uplink does.  A bulk TCP transfer through the tunnel arrives whole,
# while the bytes the transport socket holds unsent stay bounded (the
# send buffer's share of the driver's bound is about 4 ms of the
# connection's pacing rate, 16 KiB at least; the check allows twice that
# plus the one segment TCP may still fill), instead of the send buffer's
# hundreds of kilobytes; a ping through the loaded tunnel is
# answered, and the peer stays.  The ping's RTT, the transfer's time and
# the records dropped at the bound (tun-a's tx_dropped) are shown, never
# asserted.  With the transport stalled, a flood through the tunnel
# loses records at the bound, and pings beside it lose none.
#
#   ns a: tun-a (P2P over TCP, connects, 5.5.12.1)
#     veth-a 10.10.12.1/24, tbf 20 Mbit/s ==
#   ns b: tun-b (P2P over TCP, listens, 5.5.12.2)
#     veth-b 10.10.12.2/24
#   a knows b as peer 2, b knows a as peer 1.

source "$(dirname "$0")/lib.sh"

NA=ovpn-qa-$$
NB=ovpn-qb-$$
PORT=3312
BYTES=12000000
XFER=$OVPN_DIR/tcp-mss.py
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	ns_add "$NA" || return
	ns_add "$NB" || return
	veth_pair "$NA" veth-a 10.10.12.1 "$NB" veth-b 10.10.12.2
	in_a tc qdisc add dev veth-a root tbf rate 20mbit burst 16kb \
		latency 50ms

	echo "1 10.10.12.1 - -" >"$TMPDIR/peers"
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" tcp_listen tun-b $PORT \
		"$TMPDIR/peers" stay
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_tcp_peer tun-a 2 \
		10.10.12.2 $PORT tx_id 1 stay
	log_wait "$TMPDIR/b.log" '^PEER 1$'
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 1 aes256
	link_up "$NA" tun-a 5.5.12.1
	link_up "$NB" tun-b 5.5.12.2
	in_a ping -q -c 2 -i 0.2 -W 2 5.5.12.2
}

# socket_look: the transport socket in a, as "UNSENT RATE": its unsent
# bytes and its pacing rate in bytes/s (ss shows bits/s).  Nothing when
# the socket is gone.
socket_look()
{
	in_a ss -tinH state established "( dport = :$PORT )" |
		tr ' ' '\n' | awk '
		function bits(v) {
			if (v ~ /Gbps$/) return v * 1e9
			if (v ~ /Mbps$/) return v * 1e6
			if (v ~ /Kbps$/) return v * 1e3
			return v + 0
		}
		/^notsent:/ { split($0, f, ":"); unsent = f[2] }
		/^pacing_rate$/ { getline; rate = bits($0) / 8 }
		END { if (rate != "") printf "%d %d\n", unsent, rate }'
}

# Twelve megabytes, and a look at the socket every 0.1 s while they go,
# after the first second: until then the pacing rate is the idle
# connection's, far above the path's, and so is the bound.  The RTT of
# pings meanwhile.  The bound checked: about 8 ms of the pacing rate,
# 32 KiB at least (twice the send buffer's share), plus one 64 KiB segment
# that TCP fills without asking again.  The bytes were let in at the
# rate of their time, and a look can come after the rate fell: the
# highest rate seen counts, three times over, for a higher one between
# two looks (the most seen was 116 KB, where the highest rate seen gave
# a share of 20 KB).  The previous version of the driver, which bounded
# nothing, left 321778 and 554464 bytes unsent, against bounds of 160
# and 295 KB.
bulk_transfer()
{
	local log=$TMPDIR/serve.log most=0 fastest=0 n=0 bound drops pid ping
	local t u r

	drops=$(link_dropped "$NA" tun-a tx)
	start_ready "$log" in_b "$XFER" serve 5.5.12.2 5010 || return
	t=$(date +%s%N)
	in_a "$XFER" send 5.5.12.2 5010 $BYTES >"$TMPDIR/send.out" &
	pid=$!
	in_a ping -n -i 0.2 -c 10 -W 5 5.5.12.2 >"$TMPDIR/ping.out" &
	ping=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ $(($(date +%s%N) - t)) -lt 1000000000 ]; then
			sleep 0.1
			continue
		fi
		read -r u r < <(socket_look) || true
		if [ -n "$u" ]; then
			n=$((n + 1))
			[ "$u" -le "$most" ] || most=$u
			[ "$r" -le "$fastest" ] || fastest=$r
		fi
		sleep 0.1
	done
	wait "$pid" || fail "the transfer failed" || return
	t=$((($(date +%s%N) - t) / 1000000))
	wait "$ping" || true
	wait_until log_has "$log" '^mss=' || fail "no end of transfer" ||
		return
	expect_eq "bytes received" $BYTES \
		"$(sed -n 's/.* bytes=//p' "$log")" || return
	[ "$n" -ge 3 ] || fail "only $n looks at the socket" || return
	bound=$((fastest / 128 > 32768 ? fastest / 128 : 32768))
	bound=$((3 * bound + 65536))
	ktap_note "$n looks: at most $most bytes unsent, bound $bound"
	ktap_note "records dropped: $(($(link_dropped "$NA" tun-a tx) - drops))"
	[ "$most" -le "$bound" ] ||
		fail "$most bytes unsent, over the bound of $bound" || return
	[ "$(ping_received "$TMPDIR/ping.out")" -gt 0 ] ||
		fail "no ping answered under load" || return
	ktap_note "ping under load: $(grep rtt "$TMPDIR/ping.out")"
	ktap_note "$BYTES bytes in $t ms"
}

# a drops every segment b sends, ACKs included: nothing a queued for the
# transport can leave.  A flood of datagrams through the tunnel fills the
# send buffer up to its bound, then the queue in front of it, and the
# rest is dropped.  Three pings as large as the flood's packets come
# next: each has a queue of its own and holds one record, never the most
# held, so the records dropped to let them in are the flood's.  Once b's
# segments pass again, the three are answered.  The driver before, with
# one tail-drop queue, dropped each of them: 0 of 3 answered.
stall_spares_ping()
{
	local drops tx pid got

	tcp_stall "$NA" $PORT || return
	drops=$(link_dropped "$NA" tun-a tx)
	tx=$(peer_stat "$NA" tun-a 2 link_tx_packets)
	send_dgrams "$NA" 5.5.12.2 2000 ||
		fail "the flood did not get out" || return
	wait_until link_dropped_ge "$NA" tun-a tx $((drops + 1)) ||
		fail "the stalled queue dropped nothing" || return
	in_a ping -n -s 1300 -i 0.2 -c 3 -W "$(secs 60)" 5.5.12.2 \
		>"$TMPDIR/stall-ping.out" &
	pid=$!
	wait_until peer_stat_ge "$NA" tun-a 2 link_tx_packets \
		$((tx + 2003)) || fail "the pings were not encrypted"
	tcp_unstall "$NA"
	wait "$pid" || true
	got=$(ping_received "$TMPDIR/stall-ping.out")
	ktap_note "records dropped: $(($(link_dropped "$NA" tun-a tx) - drops))"
	ktap_note "pings: $(grep rtt "$TMPDIR/stall-ping.out")"
	expect_eq "pings answered once the stall ended" 3 "$got"
}

# The peer is still there and carries a ping at once.
peer_stays()
{
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.12.2 ||
		fail "no ping after the transfer"
}

ovpn_require

ktap_plan 4
run_test setup_topology setup_topology
run_noted bulk_transfer bulk_transfer
run_noted stall_spares_ping stall_spares_ping
run_test peer_stays peer_stays
ktap_finish
