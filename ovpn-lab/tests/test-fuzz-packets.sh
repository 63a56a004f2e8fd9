#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet fuzzer: by default 100,000 hostile packets, 70,000 UDP datagrams
# and 30,000 TCP records from fuzz-packets.py (random bytes, every opcode
# with every key id, data packets with our peer id and with others, bad
# tags, cuts at every length of header, packet id and tag, replays and
# far-future packet ids of genuine packets, oversized packets, broken TCP
# framing), into the peers of two MP servers while real traffic flows
# through the same devices.  Checks that the real traffic keeps flowing
# during the fuzzing and after it, and that the driver's counters account
# for each fuzzed packet exactly: the device's rx_dropped for every drop,
# the link counters of the peer a failed data packet names, the socket's
# owner for every packet that is not data, a removed peer for every TCP
# stream that cannot be parsed.
#
#   ns srv: veth1 10.10.1.1, fd00:1::1 == ns cli: eth0 10.10.1.2 (the
#                                         client), 10.10.1.3, 10.10.1.4,
#                                         fd00:1::2 (the fuzzer)
#     tun0 (MP, UDP port 1194), 5.5.5.1/24
#       peer 1: tun1 of cli (P2P, 5.5.5.2) from 10.10.1.2:2001, key id 1
#       peer 2: 10.10.1.3:2002, 5.5.5.3, no key, nobody behind it
#     tun2 (MP, TCP port 1195), 5.5.6.1/24
#       peer 20: tun3 of cli (P2P, 5.5.6.2), key id 1
#       peer 100: the fuzzer's first connection, from 10.10.1.4, 5.5.6.100,
#         key id 1, the same key both ways (so that what the server sends
#         is genuine when it comes back)
#       peers 101 on: its connections with a broken stream, keyless
#
# Environment: OVPN_FUZZ_UDP (datagrams, 70000), OVPN_FUZZ_TCP (records,
# 30000), OVPN_FUZZ_BROKEN (broken TCP streams, 18, at most 154),
# OVPN_FUZZ_SEED (a new one each run unless given; printed),
# OVPN_FUZZ_SECS (the longest a fuzzer may run, 600, secs).

source "$(dirname "$0")/lib.sh"

SRV=ovpn-fzsrv-$$
CLI=ovpn-fzcli-$$
FUZZ=$LAB_TESTS_DIR/fuzz-packets.py
UDP_COUNT=${OVPN_FUZZ_UDP:-70000}
TCP_COUNT=${OVPN_FUZZ_TCP:-30000}
BROKEN=${OVPN_FUZZ_BROKEN:-18}
SEED=${OVPN_FUZZ_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
FUZZ_SECS=${OVPN_FUZZ_SECS:-$(secs 600)}
UDP_PORT=1194
TCP_PORT=1195
# The fuzzer's first TCP connection; the broken ones follow.
FUZZ_PEER=100
ovpn_workdir

setup_topology()
{
	local n peers=$TMPDIR/peers-udp tpeers=$TMPDIR/peers-tcp

	ns_add "$SRV"
	ns_add "$CLI"
	veth_pair "$SRV" veth1 10.10.1.1 "$CLI" eth0 10.10.1.2
	link_up "$SRV" veth1 fd00:1::1
	link_up "$CLI" eth0 10.10.1.3 10.10.1.4 fd00:1::2

	# peer_id raddr rport vpn4 vpn6 [tx_id]
	echo "1 10.10.1.2 2001 5.5.5.2 - 11" >"$peers"
	echo "2 10.10.1.3 2002 5.5.5.3 -" >>"$peers"
	in_srv "$OVPN_CLI" new_iface tun0 mp
	start_ready "$TMPDIR/srv-udp.log" ip netns exec "$SRV" "$OVPN_CLI" \
		new_multi_peer tun0 "$UDP_PORT" "$peers" stay
	in_cli "$OVPN_CLI" new_iface tun1
	start_ready "$TMPDIR/cli-udp.log" ip netns exec "$CLI" "$OVPN_CLI" \
		new_peer tun1 11 2001 10.10.1.1 "$UDP_PORT" tx_id 1 stay
	key_pair "$SRV" tun0 1 "$CLI" tun1 11 primary 1 aes256

	# peer_id raddr vpn4 vpn6 [tx_id]
	echo "20 10.10.1.2 5.5.6.2 - 30" >"$tpeers"
	for n in $(seq "$FUZZ_PEER" $((FUZZ_PEER + BROKEN))); do
		echo "$n 10.10.1.4 5.5.6.$n -" >>"$tpeers"
	done
	in_srv "$OVPN_CLI" new_iface tun2 mp
	start_tracked "$TMPDIR/srv-tcp.log" ip netns exec "$SRV" "$OVPN_CLI" \
		tcp_listen tun2 "$TCP_PORT" "$tpeers" stay
	in_cli "$OVPN_CLI" new_iface tun3
	start_ready "$TMPDIR/cli-tcp.log" ip netns exec "$CLI" "$OVPN_CLI" \
		new_tcp_peer tun3 30 10.10.1.1 "$TCP_PORT" tx_id 20 stay
	log_wait "$TMPDIR/srv-tcp.log" '^PEER 20$'
	key_pair "$SRV" tun2 20 "$CLI" tun3 30 primary 1 aes256

	ipv4_tunnel_up tun0 5.5.5.1 tun1 5.5.5.2
	ipv4_tunnel_up tun2 5.5.6.1 tun3 5.5.6.2
}

rx_dropped() { link_dropped "$SRV" "$1" rx; }

# ctrl_seen LOG [PEER]: "ctrl=N ctrl_bytes=B", the control packets an
# ovpn-cli printed in LOG (of PEER, for a TCP server) and their bytes.
ctrl_seen()
{
	awk -v p="${2:-}" '$1 == "CTRL" && (p == "" || $2 == p) {
		n++; b += (p == "" ? $2 : $3)
	} END { printf "ctrl=%d ctrl_bytes=%d\n", n, b }' "$1"
}

# sock_drops PORT: the datagrams the server's UDP socket had no room for.
sock_drops()
{
	# shellcheck disable=SC2016 # an awk program
	in_srv awk -v p="$(printf ':%04X' "$1")" \
		'substr($2, length($2) - 4) == p { print $NF }' /proc/net/udp6
}

# expected KEY FILE: the value of KEY in the EXPECT line of a fuzzer.
expected()
{
	sed -n "s/^EXPECT .*\\b$1=\\([0-9]*\\).*/\\1/p" "$2"
}

# note_fuzz LOG: the fuzzer's figures, as notes.
note_fuzz()
{
	local total ms rate

	ktap_note "seed $(sed -n 's/^SEED //p' "$1")," \
		"$(sed -n 's/^\(CAPTURED\|GENUINE\) /genuine packets: /p' "$1")"
	ktap_note "per class: $(awk '$1 == "CLASS" {
		printf "%s%s %s", s, $2, $3; s = ", " }' "$1")"
	read -r _ total ms rate <<<"$(grep '^TOTAL ' "$1")"
	ktap_note "$total packets in $ms ms, $rate per second"
	ktap_note "model: $(sed -n 's/^EXPECT //p' "$1")"
}

# flood_note LOG WHAT: what a ping flood, stopped by SIGINT, says of
# itself.
flood_note()
{
	ktap_note "$2 ping flood: $(grep 'packets transmitted' "$1")"
}

# fuzz_wait LOG PID WHEN: the fuzzer PID printed the line WHEN, within
# $FUZZ_SECS seconds.
fuzz_wait()
{
	local deadline=$((SECONDS + FUZZ_SECS))

	until grep -q "$3" "$1"; do
		if proc_gone "$2" || [ "$SECONDS" -ge "$deadline" ]; then
			cat "$1"
			fail "the fuzzer did not finish"
			return
		fi
		sleep 0.5
	done
}

# traffic_during LOG: real traffic flowed while the fuzzer ran: the
# client's vpn_rx_packets, which the fuzzer read as it started and as it
# ended (PROBE lines), grew.
traffic_during()
{
	local before after

	before=$(peer_val vpn_rx_packets "$(grep '^PROBE before' "$1")") &&
	after=$(peer_val vpn_rx_packets "$(grep '^PROBE after' "$1")") ||
		return
	ktap_note "real traffic: the client received $((after - before))" \
		"packets through the tunnel while the fuzzer ran"
	[ "$after" -gt "$before" ] ||
		fail "no real traffic while the fuzzer ran"
}

# settle COMMAND...: COMMAND succeeds within 60 s: what was sent last may
# still be on its way, or in a queue for userspace.
settle()
{
	local deadline=$((SECONDS + 60))

	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}

# fuzz_noted udp|tcp: once a transport's fuzzer and ping flood have ended,
# what they did, as notes, and that real traffic flowed meanwhile; then
# the counters before and after, once they add up (udp_settled or
# tcp_settled keeps them in udp.after or tcp.after for the test points
# that follow).
fuzz_noted()
{
	flood_note "$TMPDIR/$1-flood" "${1^^}"
	note_fuzz "$TMPDIR/$1.out"
	traffic_during "$TMPDIR/$1.out"
	settle "$1_settled" || true
	ktap_note "counters: before $(cat "$TMPDIR/$1.before")"
	ktap_note "counters: after  $(cat "$TMPDIR/$1.after")"
}

# UDP: the datagrams come from the client's namespace, many of them with
# its address and port (raw sockets).

udp_state()
{
	local p1 p2

	p1=$(in_srv "$OVPN_CLI" get_peer tun0 1) || return
	p2=$(in_srv "$OVPN_CLI" get_peer tun0 2) || return
	echo "drops=$(rx_dropped tun0)" \
		"link1=$(peer_val link_rx_packets "$p1")" \
		"vpn1=$(peer_val vpn_rx_packets "$p1")" \
		"link2=$(peer_val link_rx_packets "$p2")" \
		"vpn2=$(peer_val vpn_rx_packets "$p2")" \
		"$(ctrl_seen "$TMPDIR/srv-udp.log")" \
		"sock_drops=$(sock_drops "$UDP_PORT")"
}

# stack_drops: where the server's stack could lose a datagram before the
# driver sees it, a diagnostic for a count that does not add up: failed
# reassemblies, UDP errors (the socket's drops among them), and the
# per-CPU backlogs' drops (all namespaces).
stack_drops()
{
	local dropped n=0

	in_srv nstat -asz IpReasmFails UdpInErrors Udp6InErrors |
		awk '!/^#/ { printf "%s=%s ", $1, $2 }'
	while read -r _ dropped _; do
		n=$((n + 0x$dropped))
	done </proc/net/softnet_stat
	echo "backlog_drops=$n"
}

# state_delta KEY BEFORE AFTER: how much KEY grew between two states.
state_delta()
{
	peer_delta "$1" "$2" "$3"
}

# Every datagram is in: drops and control packets add up.
udp_settled()
{
	local now

	now=$(udp_state) || return
	echo "$now" >"$TMPDIR/udp.after"
	[ "$(state_delta drops "$(cat "$TMPDIR/udp.before")" "$now")" = \
	  "$(expected drops "$TMPDIR/udp.out")" ] &&
	[ $(($(state_delta ctrl "$(cat "$TMPDIR/udp.before")" "$now") + \
	     $(state_delta sock_drops "$(cat "$TMPDIR/udp.before")" "$now"))) \
	  = "$(expected ctrl "$TMPDIR/udp.out")" ]
}

udp_fuzz()
{
	local out=$TMPDIR/udp.out

	udp_state >"$TMPDIR/udp.before"
	stack_drops >"$TMPDIR/stack.before"
	# The real traffic, from before the fuzzing to after it; the fuzzer
	# captures its first packets, to replay them.
	bg_start "$TMPDIR/udp-flood" ip netns exec "$CLI" ping -f -q 5.5.5.1
	bg_start "$out" ip netns exec "$CLI" python3 "$FUZZ" udp \
		--seed "$SEED" --count "$UDP_COUNT" --server 10.10.1.1 \
		--server6 fd00:1::1 --port "$UDP_PORT" --key-id 1 \
		--peer 1@10.10.1.2:2001 --peer 2@10.10.1.3:2002 \
		--src6 fd00:1::2 --capture eth0 \
		--probe "$OVPN_CLI get_peer tun1 11"
	fuzz_wait "$out" "$(cat "$out.pid")" '^EXPECT'
	wait "$(cat "$out.pid")" || fail "the fuzzer failed" || return
	bg_stop "$TMPDIR/udp-flood" INT
	fuzz_noted udp
	ktap_note "stack: before $(cat "$TMPDIR/stack.before"), after" \
		"$(stack_drops)"
}

# udp_check KEY DESCRIPTION: KEY grew as much as the model expects.
udp_check()
{
	expect_eq "$2" "$(expected "$1" "$TMPDIR/udp.out")" \
		"$(state_delta "$1" "$(cat "$TMPDIR/udp.before")" \
		   "$(cat "$TMPDIR/udp.after")")"
}

# Too short, DATA_V1, no such peer, no such key, not authentic, replayed:
# each one dropped and counted once, whatever real traffic did meanwhile
# (real packets are never dropped, and of a replay and its original, one
# gets in).
udp_drops_counted()
{
	udp_check drops "tun0 rx_dropped growth"
}

# A data packet that finds a peer, by its id or, with the undefined id,
# by its source, shows in that peer's link counters, never further: the
# peer with no key delivers nothing; the client's peer delivers its real
# traffic only (and a replay instead of its original, if it overtook it).
udp_peer_counters()
{
	local before after

	before=$(cat "$TMPDIR/udp.before")
	after=$(cat "$TMPDIR/udp.after")
	expect_eq "peer 1 link_rx_packets growth beyond vpn_rx_packets" \
		"$(expected link1 "$TMPDIR/udp.out")" \
		$(($(state_delta link1 "$before" "$after") - \
		   $(state_delta vpn1 "$before" "$after")))
	udp_check link2 "peer 2 link_rx_packets growth"
	expect_eq "peer 2 vpn_rx_packets growth" 0 \
		"$(state_delta vpn2 "$before" "$after")"
}

# Every opcode but the data ones goes to the socket's owner as it came:
# each one was printed or, if the socket had no room, counted there.
udp_control_to_userspace()
{
	local before after sock

	before=$(cat "$TMPDIR/udp.before")
	after=$(cat "$TMPDIR/udp.after")
	sock=$(state_delta sock_drops "$before" "$after")
	ktap_note "control datagrams: $(state_delta ctrl "$before" "$after")" \
		"read by the server's ovpn-cli, $sock dropped by its socket"
	expect_eq "control datagrams read or dropped by the socket" \
		"$(expected ctrl "$TMPDIR/udp.out")" \
		$(($(state_delta ctrl "$before" "$after") + sock))
	# All read: their lengths too.
	[ "$sock" != 0 ] || udp_check ctrl_bytes "control bytes read"
}

udp_traffic_after()
{
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	# Forgeries from the client's address never moved its peer.
	in_srv "$OVPN_CLI" get_peer tun0 1 |
		grep -q ' remote=10.10.1.2:2001 ' || fail "peer 1 floated"
	expect_eq "tun0 rx_dropped after the fuzzing" \
		"$(peer_val drops "$(cat "$TMPDIR/udp.after")")" \
		"$(rx_dropped tun0)"
}

# TCP: the fuzzer's own connections, from 10.10.1.4.

tcp_state()
{
	local p

	p=$(in_srv "$OVPN_CLI" get_peer tun2 "$FUZZ_PEER") || return
	echo "drops=$(rx_dropped tun2)" \
		"data=$(peer_val link_rx_packets "$p")" \
		"vpn=$(peer_val vpn_rx_packets "$p")" \
		"$(ctrl_seen "$TMPDIR/srv-tcp.log" "$FUZZ_PEER")"
}

# Every record is in: the drops and the control records add up.
tcp_settled()
{
	local now before

	before=$(cat "$TMPDIR/tcp.before")
	now=$(tcp_state) || return
	echo "$now" >"$TMPDIR/tcp.after"
	[ "$(state_delta data "$before" "$now")" = \
	  "$(expected data "$TMPDIR/tcp.out")" ] &&
	[ $(($(state_delta drops "$before" "$now") + \
	     $(state_delta ctrl "$before" "$now"))) = \
	  $(($(expected drops "$TMPDIR/tcp.out") + \
	     $(expected broken_counted "$TMPDIR/tcp.out") + \
	     $(expected ctrl "$TMPDIR/tcp.out"))) ]
}

# The fuzzer's first peer gets a key of the same two directions.
sym_key()
{
	grep -v '^#' "$OVPN_DIR/key.hex" |
		awk 'NR == 1 { k = $0 } NR == 3 { t = $0 }
		     END { print k; print k; print t; print t }'
}

tcp_fuzz()
{
	local out=$TMPDIR/tcp.out ntf=$TMPDIR/tcp.ntf

	bg_start "$ntf" ip netns exec "$SRV" "$OVPN_CLI" listen_mcast \
		"$FUZZ_SECS" count "$BROKEN"
	log_wait "$ntf" READY
	sym_key >"$TMPDIR/sym.key"
	bg_start "$out" ip netns exec "$CLI" python3 "$FUZZ" tcp \
		--seed "$SEED" --count "$TCP_COUNT" --server 10.10.1.1 \
		--port "$TCP_PORT" --key-id 1 --src 10.10.1.4 \
		--peer-id "$FUZZ_PEER" --sessions "$BROKEN" \
		--srv-log "$TMPDIR/srv-tcp.log" --ntf-log "$ntf" \
		--go-file "$TMPDIR/go" --probe "$OVPN_CLI get_peer tun3 30" \
		--drops "ip netns exec $SRV ip -j -s link show dev tun2"
	log_wait "$out" "^CONNECTED $FUZZ_PEER\$"
	in_srv "$OVPN_CLI" new_key tun2 "$FUZZ_PEER" primary 1 aes256 0 \
		"$TMPDIR/sym.key"
	tcp_state >"$TMPDIR/tcp.before"
	# What the server sends the fuzzer, for it to send back; and the
	# real traffic.
	bg_start "$TMPDIR/tcp-echo" ip netns exec "$SRV" ping -q -i 0.05 \
		"5.5.6.$FUZZ_PEER"
	bg_start "$TMPDIR/tcp-flood" ip netns exec "$CLI" ping -f -q 5.5.6.1
	echo go >"$TMPDIR/go"
	fuzz_wait "$out" "$(cat "$out.pid")" '^DONE'
	bg_stop "$TMPDIR/tcp-flood" INT
	bg_stop "$TMPDIR/tcp-echo" INT
	fuzz_noted tcp
	ktap_note "in all: $(awk '$1 == "TOTAL" { n += $2 } END { print n }' \
		"$TMPDIR/udp.out" "$out") packets fuzzed, UDP and TCP"
}

tcp_delta()
{
	state_delta "$1" "$(cat "$TMPDIR/tcp.before")" \
		"$(cat "$TMPDIR/tcp.after")"
}

# Each data record of the first connection is dropped and counted once;
# control records never are (tcp_control_to_userspace).  What the broken
# streams added is theirs (tcp_broken_streams_counted).
tcp_drops_counted()
{
	expect_eq "tun2 rx_dropped growth" \
		$(($(expected drops "$TMPDIR/tcp.out") + \
		   $(expected broken_counted "$TMPDIR/tcp.out"))) \
		"$(tcp_delta drops)"
}

# A stream that cannot be parsed counts one drop for its break, and one
# for each data record before it (its peer has no key): measured by the
# fuzzer around each connection, when nothing else drops anything.
tcp_broken_streams_counted()
{
	local peer kind records want got bad=0

	while read -r _ peer kind records want got; do
		[ "$want" = "$got" ] && continue
		echo "peer $peer, $kind after $((records - 1)) records:" \
			"$got drops counted, $want expected"
		bad=$((bad + 1))
	done < <(grep '^BROKEN ' "$TMPDIR/tcp.out")
	ktap_note "broken streams: $(expected broken "$TMPDIR/tcp.out")" \
		"drops expected, $(expected broken_counted "$TMPDIR/tcp.out")" \
		"counted"
	[ "$bad" = 0 ] || fail "$bad of $BROKEN broken streams miscounted"
}

# Data records reach the peer of their connection and no further: the
# genuine ones sent back come from the server's own address (not the
# peer's) or are replays.
tcp_peer_counters()
{
	expect_eq "peer $FUZZ_PEER link_rx_packets growth" \
		"$(expected data "$TMPDIR/tcp.out")" "$(tcp_delta data)"
	expect_eq "peer $FUZZ_PEER vpn_rx_packets growth" 0 \
		"$(tcp_delta vpn)"
}

# Every control record reaches the owner of the socket, intact: the queue
# for userspace is bounded by the socket's receive buffer, and a full one
# holds the stream back rather than dropping a record.
tcp_control_to_userspace()
{
	local seen ctrl

	seen=$(tcp_delta ctrl)
	ctrl=$(expected ctrl "$TMPDIR/tcp.out")
	ktap_note "control records: $seen of $ctrl read by the server's" \
		"ovpn-cli"
	expect_eq "control records read" "$ctrl" "$seen"
	expect_eq "control bytes read" \
		"$(expected ctrl_bytes "$TMPDIR/tcp.out")" \
		"$(tcp_delta ctrl_bytes)"
}

# Each stream that could not be parsed removed its peer, for a transport
# error, and nothing else went.
tcp_broken_streams()
{
	local n ntf=$TMPDIR/tcp.ntf

	cat "$ntf"
	expect_eq "peers removed" "$BROKEN" \
		"$(grep -c '^ntf peer_del .* reason=transport_error' "$ntf")"
	for n in $(seq $((FUZZ_PEER + 1)) $((FUZZ_PEER + BROKEN))); do
		grep -q "^ntf peer_del .* id=$n reason=transport_error" \
			"$ntf" || fail "peer $n was not removed for an error"
		expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun2 "$n"
	done
}

tcp_traffic_after()
{
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.6.1
	in_srv ping -q -c 3 -i 0.2 -W 2 5.5.6.2
	in_srv "$OVPN_CLI" get_peer tun2 "$FUZZ_PEER" >/dev/null ||
		fail "the fuzzer's first peer is gone"
	expect_eq "tun2 rx_dropped after the fuzzing" \
		"$(peer_val drops "$(cat "$TMPDIR/tcp.after")")" \
		"$(rx_dropped tun2)"
}

ovpn_require

ktap_plan 14
echo "# seed $SEED (OVPN_FUZZ_SEED), $UDP_COUNT datagrams, $TCP_COUNT" \
	"records, $BROKEN broken streams"
run_test setup setup_topology
run_noted udp_fuzz udp_fuzz
run_test udp_drops_counted udp_drops_counted
run_test udp_peer_counters udp_peer_counters
run_noted udp_control_to_userspace udp_control_to_userspace
run_test udp_traffic_after udp_traffic_after
run_noted tcp_fuzz tcp_fuzz
run_test tcp_drops_counted tcp_drops_counted
run_test tcp_peer_counters tcp_peer_counters
run_noted tcp_control_to_userspace tcp_control_to_userspace
run_noted tcp_broken_streams_counted tcp_broken_streams_counted
run_test tcp_broken_streams tcp_broken_streams
run_test tcp_traffic_after tcp_traffic_after
run_test module_unloads module_unloads
ktap_finish
