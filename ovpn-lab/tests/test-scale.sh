#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scale: one MP device with 100,000 peers on one UDP socket.  One of them
# is a real P2P client in another namespace; the others are addresses
# nobody answers from, reached through that client's namespace.
#
#   ns srv: tun0 (MP), 5.5.5.1/24 and 100.64.0.1/10
#     |  veth 10.10.1.1/24 == 10.10.1.2 -- ns c1: tun1 (P2P), 5.5.5.2
#     peer 1: the client, VPN 5.5.5.2
#     peer N (2..100000): transport 10.20.N/256%256.N%256, port
#       1194 + N/65536 (routed to c1, which drops it), VPN 100.64.0.0 + N
#       (in 100.64.0.0/10, over three octets)
#
# Checks that every peer is added and dumped, that the real client's
# traffic passes, that packets to a sample of the others leave through
# exactly their peer (its counters), that peers moving in the tables or
# making them resize hide no other peer from a lookup, that keepalive
# expires a thousand peers by their own timers, that closing a socket
# removes its 10,000 peers, and that deleting the device takes every
# peer away.  The times of add, dump and delete and the memory per
# peer (per-CPU memory and slab, from /proc/meminfo) are printed as
# diagnostics, never asserted, the times also per peer.

source "$(dirname "$0")/lib.sh"

PEERS=${OVPN_SCALE_PEERS:-100000}
# Across the octets of both addresses and, past 65,536, the port.
SAMPLE="2 255 256 $((PEERS / 2)) $((PEERS - 1)) $PEERS"
[ "$PEERS" -le 65538 ] || SAMPLE="$SAMPLE 65536 65538"
SRV=ovpn-srv-$$
C1=ovpn-c1-$$

ovpn_workdir

# meminfo FIELD: a /proc/meminfo field, in KiB.
meminfo()
{
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# took T0 WHAT: a note that WHAT took the time since T0 (date +%s%N),
# in all and per peer.
took()
{
	local ns=$(($(date +%s%N) - $1))

	ktap_note "$2 in $((ns / 1000000)) ms," \
		"$((ns / PEERS / 1000)).$((ns / PEERS % 1000 / 100)) us per peer"
}

# vpn_addr N: the VPN address of peer N, as peers_file gives it.
vpn_addr()
{
	echo "100.$((64 + $1 / 65536)).$(($1 / 256 % 256)).$(($1 % 256))"
}

# The peers, in new_multi_peer's format; awk, because a shell loop costs
# minutes under emulation.
peers_file()
{
	awk -v n="$PEERS" 'BEGIN {
		print "1 10.10.1.2 2001 5.5.5.2 -"
		for (i = 2; i <= n; i++) {
			hi = int(i / 65536)
			lo = sprintf("%d.%d", int(i / 256) % 256, i % 256)
			printf "%d 10.20.%s %d 100.%d.%s -\n", i, lo,
			       1194 + hi, 64 + hi, lo
		}
	}'
}

setup_topology()
{
	ns_add "$SRV"
	ns_add "$C1"
	veth_pair "$SRV" veth1 10.10.1.1 "$C1" eth0 10.10.1.2
	in_srv ip route add 10.20.0.0/16 via 10.10.1.2
	peers_file >"$TMPDIR/peers.txt"
}

add_peers()
{
	local t0 percpu slab n

	# Settle what the set-up freed before taking the baseline.
	sleep 1
	percpu=$(meminfo Percpu)
	slab=$(meminfo Slab)
	in_srv "$OVPN_CLI" new_iface tun0 mp
	t0=$(date +%s%N)
	OVPN_READY_SECS=600 start_ready "$TMPDIR/srv.log" in_srv "$OVPN_CLI" \
		new_multi_peer tun0 1194 "$TMPDIR/peers.txt" stay
	took "$t0" "added $PEERS peers"
	n=$(in_srv "$OVPN_CLI" get_peer tun0 | grep -c '^peer ')
	expect_eq "peers dumped" "$PEERS" "$n"
	sleep 1
	ktap_note "per peer: $((($(meminfo Percpu) - percpu) * 1024 / PEERS))" \
		"bytes of per-CPU memory, $((($(meminfo Slab) - slab) * 1024 / \
		PEERS)) bytes of slab ($(nproc) CPUs online, possible: $(cat \
		/sys/devices/system/cpu/possible))"
	echo "$percpu $slab" >"$TMPDIR/baseline"
	link_up "$SRV" tun0 5.5.5.1
	in_srv ip addr add 100.64.0.1/10 dev tun0

	ip netns exec "$C1" "$OVPN_CLI" new_iface tun1
	start_ready "$TMPDIR/c1.log" ip netns exec "$C1" "$OVPN_CLI" \
		new_peer tun1 1 2001 10.10.1.1 1194 stay
	link_up "$C1" tun1 5.5.5.2
	key_pair "$SRV" tun0 1 "$C1" tun1 1 primary 1 aes128
}

real_client_traffic()
{
	ip netns exec "$C1" ping -q -c 3 -i 0.2 -W 2 5.5.5.1
}

# Each sampled peer gets a key; one ping to its VPN address must leave
# through that peer and no other (nobody answers it).
sample_traffic()
{
	local i before after

	for i in $SAMPLE; do
		in_srv "$OVPN_CLI" new_key tun0 "$i" primary 1 aes128 0 \
			"$OVPN_DIR/key.hex"
	done
	before=$(peer_stat "$SRV" tun0 1 link_tx_packets)
	for i in $SAMPLE; do
		in_srv ping -q -c 1 -W 1 "$(vpn_addr "$i")" >/dev/null || true
		expect_eq "peer $i link_tx_packets" 1 \
			"$(peer_stat "$SRV" tun0 "$i" link_tx_packets)"
		expect_eq "peer $i vpn_tx_packets" 1 \
			"$(peer_stat "$SRV" tun0 "$i" vpn_tx_packets)"
	done
	# Peer 3 has no key: its packet is dropped before it is counted.
	in_srv ping -q -c 1 -W 1 "$(vpn_addr 3)" >/dev/null || true
	expect_eq "keyless peer 3 link_tx_packets" 0 \
		"$(peer_stat "$SRV" tun0 3 link_tx_packets)"
	after=$(peer_stat "$SRV" tun0 1 link_tx_packets)
	expect_eq "peer 1 link_tx_packets" "$before" "$after"
}

dump_peers()
{
	local t0 n

	t0=$(date +%s%N)
	n=$(in_srv "$OVPN_CLI" get_peer tun0 | grep -c '^peer ')
	took "$t0" "dumped $n peers"
	expect_eq "peers dumped" "$PEERS" "$n"
}

# Peers that move in the tables, or make them resize, never hide the
# others from a lookup.  On a device of its own, small enough for a
# thousand peers to resize its tables many times over: 16 peers stay, 16
# others are moved to another VPN address and back by PEER_SET, and 1024
# more are added and deleted again, round after round (rehash-race.py),
# as fast as netlink answers, while packets go to the 16 that stay.  Each
# of those finds its peer: its vpn_tx_packets counts every packet sent
# to it.  Before hlist_nulls, a lookup standing on a mover as it moved
# followed it into another bucket and missed the rest of its own chain;
# a resize moves every peer of a table to a new one.
rehash_keeps_others()
{
	local race=$LAB_TESTS_DIR/rehash-race.py
	local pfx=$TMPDIR/rehash id n got sent=0 bad=0

	in_srv "$OVPN_CLI" new_iface tun5 mp
	in_srv ip link set tun5 up
	in_srv ip route add 100.126.0.0/15 dev tun5
	python3 "$race" peers $((PEERS + 1)) 16 16 1195 "$pfx"
	start_ready "$TMPDIR/rehash.log" in_srv "$OVPN_CLI" new_multi_peer \
		tun5 1195 "$pfx.peers" stay
	bg_start "$pfx.move" in_srv python3 "$race" move tun5 "$pfx" "$(secs 10)"
	bg_start "$pfx.churn" in_srv python3 "$race" churn tun5 \
		$((PEERS + 100)) 1024 "$(secs 10)"
	in_srv python3 "$race" send "$pfx" "$(secs 10)" \
		>"$pfx.sent"
	wait "$(cat "$pfx.move.pid")" || fail "$(cat "$pfx.move")"
	wait "$(cat "$pfx.churn.pid")" || fail "$(cat "$pfx.churn")"
	while read -r _ id n; do
		got=$(peer_stat "$SRV" tun5 "$id" vpn_tx_packets)
		sent=$((sent + n))
		[ "$got" = "$n" ] && continue
		echo "peer $id: $n packets sent, $got found it"
		bad=$((bad + 1))
	done <"$pfx.sent"
	ktap_note "$sent packets to peers that stay while the others made" \
		"$(sed -n 's/^moves //p' "$pfx.move") moves and" \
		"$(sed -n 's/^rounds //p' "$pfx.churn") rounds of 1024 peers" \
		"added and deleted"
	in_srv ip link del tun5
	[ "$bad" = 0 ] || fail "$bad of 16 peers that stay missed packets"
}

# side_peers N FIRST: a peers file of N peers from id FIRST, transport
# 10.31.0.0/16 port 1194 (nobody), VPN 100.101.0.0/16.
side_peers()
{
	awk -v n="$1" -v f="$2" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "%d 10.31.%d.%d 1194 100.101.%d.%d -\n", f + i,
			       int(i / 256), i % 256, int(i / 256), i % 256
	}'
}

# peers_on IFNAME: how many peers a dump of the device lists.
peers_on()
{
	in_srv "$OVPN_CLI" get_peer "$1" | grep -c '^peer ' || true
}

peers_count_is() { [ "$(peers_on "$1")" = "$2" ]; }

# peers_left IFNAME N: the device is down to N peers, polled every second
# (a dump of thousands of peers is not free) for up to a minute.
peers_left()
{
	wait_every 1 60 peers_count_is "$1" "$2" && return 0
	fail "$(peers_on "$1") peers left on $1, $2 expected"
}

# Every peer has a keepalive timer of its own, no scan walks them: 1000
# peers on a device of their own with a keepalive timeout of 2 s, whose
# remote never answers, all expire, each notified; the device's other
# peer, without keepalive, stays.
keepalive_timers()
{
	local log=$TMPDIR/ka.log

	side_peers 1000 1 >"$TMPDIR/ka.peers"
	echo "5000 10.31.250.1 1194 100.101.250.1 -" >"$TMPDIR/ka-stay.peers"
	in_srv "$OVPN_CLI" new_iface tun6 mp
	start_ready "$TMPDIR/ka-stay.log" in_srv "$OVPN_CLI" new_multi_peer \
		tun6 1197 "$TMPDIR/ka-stay.peers" stay
	ntf_listen "$log" 1 in_srv
	start_ready "$TMPDIR/ka-srv.log" in_srv "$OVPN_CLI" new_multi_peer \
		tun6 1196 "$TMPDIR/ka.peers" keepalive 1 2 stay
	ntf_wait "$log" '^ntf peer_del .* reason=expired' ||
		fail "no expiry notification"
	peers_left tun6 1 || return
	expect_eq "the peer without keepalive" 1 \
		"$(in_srv "$OVPN_CLI" get_peer tun6 5000 | grep -c '^peer ')"
}

# Closing a socket removes its peers, in chunks that let the CPU go:
# 10,000 peers on one socket of the keepalive test's device; killing the
# process that holds the socket takes them all away, each notified with
# reason transport_disconnect, and leaves the device's other peer.
socket_close()
{
	local log=$TMPDIR/close.log t0

	side_peers 10000 10001 >"$TMPDIR/close.peers"
	OVPN_READY_SECS=600 start_tracked "$TMPDIR/close-srv.log" \
		ip netns exec "$SRV" "$OVPN_CLI" new_multi_peer tun6 1198 \
		"$TMPDIR/close.peers" stay
	expect_eq "peers on the socket's device" 10001 "$(peers_on tun6)"
	ntf_listen "$log" 1 in_srv
	t0=$(date +%s%N)
	bg_stop "$TMPDIR/close-srv.log"
	peers_left tun6 1 || return
	ktap_note "closed a socket and its 10000 peers in" \
		"$((($(date +%s%N) - t0) / 1000000)) ms (polled)"
	ntf_wait "$log" '^ntf peer_del .* reason=transport_disconnect' ||
		fail "no transport_disconnect notification"
	in_srv ip link del tun6
}

delete_device()
{
	local t0 percpu slab

	t0=$(date +%s%N)
	in_srv ip link del tun0
	took "$t0" "deleted the device and its $PEERS peers"
	! in_srv ip link show tun0 2>/dev/null || fail "tun0 still exists"
	read -r percpu slab <"$TMPDIR/baseline"
	# Peers are freed after a grace period, on the module's workqueue.
	sleep 2
	ktap_note "since before the device: per-CPU memory" \
		"$(($(meminfo Percpu) - percpu)) KiB, slab" \
		"$(($(meminfo Slab) - slab)) KiB"
}

ovpn_require
ktap_plan 9
run_test setup setup_topology
run_noted add_peers add_peers
run_test real_client_traffic real_client_traffic
run_test sample_traffic sample_traffic
run_noted dump dump_peers
run_noted rehash_keeps_others rehash_keeps_others
run_test keepalive_timers keepalive_timers
run_noted socket_close socket_close
run_noted delete_device delete_device
ktap_finish
