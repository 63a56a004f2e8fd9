#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# TCP MSS clamping: the transport's path has an MTU of 1400, less than a
# full-sized tunnel packet needs once encapsulated.  A TCP connection
# through the tunnel agrees on an MSS whose segments fit, exactly, and
# leaves no outer fragment behind; each end clamps what it sends and what
# it receives, to the path's MTU as it is when the connection opens; a
# peer's mssfix lowers the bound or turns clamping off, and then the outer
# packets are fragmented.  Over UDP (IPv4 and IPv6
# outside) and TCP transports, IPv4 and IPv6 inside.  TCP timestamps are
# off, so that the MSS a connection uses is the one its SYNs agreed on.
#
#   ns a: tun-a (P2P, 5.5.9.1, fd00:9::1), tun-ta (P2P over TCP, 5.5.10.1),
#     tun-6a (P2P over UDP and IPv6, 5.5.11.1)
#     veth-a 10.10.9.1/24, fd00:99::1/64, MTU 1400 ==
#     veth-b 10.10.9.2/24, fd00:99::2/64, MTU 1400
#   ns b: tun-b (P2P, 5.5.9.2, fd00:9::2), tun-tb (P2P over TCP, 5.5.10.2),
#     tun-6b (5.5.11.2)
#   UDP: a knows b as peer 2, b knows a as peer 1; TCP: a knows b as peer
#   4, b knows a as peer 3; UDP over IPv6: peers 6 and 5.

source "$(dirname "$0")/lib.sh"

NA=ovpn-ma-$$
NB=ovpn-mb-$$
MSS=$OVPN_DIR/tcp-mss.py
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	local ns

	for ns in "$NA" "$NB"; do
		ns_add "$ns" || return
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_timestamps=0
	done
	veth_pair "$NA" veth-a 10.10.9.1 "$NB" veth-b 10.10.9.2
	in_a ip addr add fd00:99::1/64 dev veth-a nodad
	in_b ip addr add fd00:99::2/64 dev veth-b nodad
	in_a ip link set veth-a mtu 1400
	in_b ip link set veth-b mtu 1400

	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3301 \
		10.10.9.2 3302 tx_id 1 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3302 \
		10.10.9.1 3301 tx_id 2 stay
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 1 aes256
	link_up "$NA" tun-a 5.5.9.1 fd00:9::1
	link_up "$NB" tun-b 5.5.9.2 fd00:9::2

	echo "3 10.10.9.1 - -" >"$TMPDIR/tcp.peers"
	in_a "$OVPN_CLI" new_iface tun-ta
	in_b "$OVPN_CLI" new_iface tun-tb
	start_ready "$TMPDIR/tb.log" in_b "$OVPN_CLI" tcp_listen tun-tb 3310 \
		"$TMPDIR/tcp.peers" stay
	start_ready "$TMPDIR/ta.log" in_a "$OVPN_CLI" new_tcp_peer tun-ta 4 \
		10.10.9.2 3310 tx_id 3 stay
	log_wait "$TMPDIR/tb.log" '^PEER 3$'
	key_pair "$NA" tun-ta 4 "$NB" tun-tb 3 primary 1 aes256
	link_up "$NA" tun-ta 5.5.10.1
	link_up "$NB" tun-tb 5.5.10.2

	in_a "$OVPN_CLI" new_iface tun-6a
	in_b "$OVPN_CLI" new_iface tun-6b
	start_ready "$TMPDIR/6a.log" in_a "$OVPN_CLI" new_peer tun-6a 6 3321 \
		fd00:99::2 3322 tx_id 5 stay
	start_ready "$TMPDIR/6b.log" in_b "$OVPN_CLI" new_peer tun-6b 5 3322 \
		fd00:99::1 3321 tx_id 6 stay
	key_pair "$NA" tun-6a 6 "$NB" tun-6b 5 primary 1 aes256
	link_up "$NA" tun-6a 5.5.11.1
	link_up "$NB" tun-6b 5.5.11.2

	in_a ping -q -c 2 -i 0.2 -W 2 5.5.9.2
	in_a ping -q -c 2 -i 0.2 -W 2 fd00:9::2
	in_a ping -q -c 2 -i 0.2 -W 2 5.5.10.2
	in_a ping -q -c 2 -i 0.2 -W 2 5.5.11.2
}

# frag_creates NS: the IPv4 and IPv6 fragments NS made so far.
frag_creates()
{
	local v4 v6

	v4=$(ip netns exec "$1" awk '$1 == "Ip:" {
		if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 }
		else print $col["FragCreates"] }' /proc/net/snmp)
	v6=$(ip netns exec "$1" awk '$1 == "Ip6FragCreates" { print $2 }' \
		/proc/net/snmp6)
	echo $((v4 + v6))
}

# transfer DST PORT BYTES: a sends BYTES to b's DST:PORT over one TCP
# connection; A_MSS and B_MSS are the MSS each end sent with.
transfer()
{
	local log=$TMPDIR/serve-$2.log out

	start_ready "$log" in_b "$MSS" serve "$1" "$2" || return
	out=$(in_a "$MSS" send "$1" "$2" "$3") || return
	wait_until log_has "$log" '^mss=' || fail "no end of transfer" ||
		return
	cat "$log"
	A_MSS=$(sed -n 's/^mss=//p' <<<"$out")
	B_MSS=$(sed -n 's/^mss=\([0-9]*\) .*/\1/p' "$log")
	expect_eq "bytes received" "$3" "$(sed -n 's/.* bytes=//p' "$log")"
}

# clamped DST PORT MSS: a connection to DST:PORT agrees on MSS at both
# ends, and a megabyte through it leaves no outer fragment.
clamped()
{
	local f

	f=$(frag_creates "$NA")
	transfer "$1" "$2" 1000000 || return
	expect_eq "a's MSS" "$3" "$A_MSS" || return
	expect_eq "b's MSS" "$3" "$B_MSS" || return
	expect_eq "outer fragments" 0 $(($(frag_creates "$NA") - f))
}

# bulk_frags DST PORT: one iperf3 stream from a to DST:PORT for 3 s (10
# on a slow kernel); BULK_FRAGS is the number of outer fragments a made
# meanwhile, and its rate is noted.  BULK_FRAGS is empty without iperf3.
bulk_frags()
{
	local json=$TMPDIR/iperf-$2.json f bps

	BULK_FRAGS=
	command -v iperf3 >/dev/null || { ktap_note "no iperf3"; return; }
	in_b iperf3 -s -D -1 -p "$2"
	wait_until tcp_listening "$NB" "$2" ||
		fail "iperf3 does not listen" || return
	f=$(frag_creates "$NA")
	in_a timeout "$(secs 60)" iperf3 -c "$1" -p "$2" \
		-t "$(on_slow 3 10)" -J >"$json" || fail "iperf3 failed" ||
		return
	bps=$(jq -e '.end.sum_received.bits_per_second | floor' "$json") ||
		fail "no result from iperf3" || return
	BULK_FRAGS=$(($(frag_creates "$NA") - f))
	ktap_note "iperf3 to $1: $((bps / 1000000)) Mbit/s," \
		"$BULK_FRAGS outer fragments"
}

# mssfix NS IFNAME ID VALUE: set a peer's mssfix and read it back.
mssfix()
{
	ip netns exec "$1" "$OVPN_CLI" set_peer "$2" "$3" mssfix "$4" &&
		expect_eq "$2's mssfix" "$4" \
			"$(peer_stat "$1" "$2" "$3" mssfix)"
}

# 1400 - 20 (IP) - 8 (UDP) - 24 (ovpn) - 20 (IP) - 20 (TCP) = 1308.
# A bulk iperf3 stream leaves no outer fragment either.
udp_ipv4()
{
	expect_eq "default mssfix" 65535 \
		"$(peer_stat "$NA" tun-a 2 mssfix)" || return
	clamped 5.5.9.2 5001 1308 || return
	bulk_frags 5.5.9.2 5011 || return
	[ -z "$BULK_FRAGS" ] || expect_eq "outer fragments" 0 "$BULK_FRAGS"
}

# An IPv6 header is 20 bytes longer.
udp_ipv6() { clamped fd00:9::2 5002 1288; }

# The path's MTU falls to 1300 at a, as PMTU discovery leaves a route
# behind: the next connection agrees on 1300 - 92 = 1208 at both ends (a
# clamps its own SYN and b's reply), and none fragments; once the route
# is gone, the MSS is 1308 again.
path_mtu_change()
{
	in_a ip route add 10.10.9.2/32 dev veth-a mtu 1300 || return
	clamped 5.5.9.2 5008 1208 || return
	in_a ip route del 10.10.9.2/32 dev veth-a || return
	clamped 5.5.9.2 5009 1308
}

# a clamps nothing: b clamps a's SYN as it comes in, and its own reply.
by_one_end()
{
	mssfix "$NA" tun-a 2 0 || return
	clamped 5.5.9.2 5003 1308
}

# b's bound of 1300 bytes: 1300 - 28 - 24 - 40 = 1208.
mssfix_value()
{
	mssfix "$NB" tun-b 1 1300 || return
	clamped 5.5.9.2 5004 1208
}

# Clamping off at both ends: a full-sized tunnel packet (the device's
# MTU, 1416) leaves a in two outer fragments, and so do an iperf3
# stream's.
unclamped_fragments()
{
	local f

	mssfix "$NB" tun-b 1 0 || return
	f=$(frag_creates "$NA")
	transfer 5.5.9.2 5005 1000000 || return
	expect_eq "a's MSS" 1376 "$A_MSS" || return
	[ $(($(frag_creates "$NA") - f)) -gt 0 ] ||
		fail "no outer fragment without clamping" || return
	bulk_frags 5.5.9.2 5012 || return
	[ -z "$BULK_FRAGS" ] || [ "$BULK_FRAGS" -gt 0 ] ||
		fail "no outer fragment under iperf3 without clamping"
}

# Over IPv6, the outer header is 20 bytes longer: 1288.
udp_over_ipv6() { clamped 5.5.11.2 5007 1288; }

# Over TCP, the outer connection's MSS (1400 - 40) bounds a record with
# its 2-byte length: 1358 - 24 - 40 = 1294.
tcp_transport() { clamped 5.5.10.2 5006 1294; }

# Between 0 and 576, an mssfix is refused, with a reason.
bad_mssfix()
{
	expect_err EINVAL in_a "$OVPN_CLI" set_peer tun-a 2 mssfix 100 ||
		return
	expect_eq "mssfix kept" 0 "$(peer_stat "$NA" tun-a 2 mssfix)"
}

ovpn_require

ktap_plan 10
run_test setup_topology setup_topology
run_noted udp_ipv4 udp_ipv4
run_test udp_ipv6 udp_ipv6
run_test path_mtu_change path_mtu_change
run_test by_one_end by_one_end
run_test mssfix_value mssfix_value
run_noted unclamped_fragments unclamped_fragments
run_test tcp_transport tcp_transport
run_test udp_over_ipv6 udp_over_ipv6
run_test bad_mssfix bad_mssfix
ktap_finish
