#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two P2P peers over UDP: every cipher and key size, the socket's mark on
# the encrypted packets, a large inner MTU, no allocation in ovpn's code
# per packet, a peer replaced by a new one
# on another socket, the transport socket closed under the module, and
# the device in another namespace than its peer's socket.
#
#   ns a: tun-a (P2P, 5.5.6.1) -- veth 10.10.6.1 == 10.10.6.2 -- ns b: tun-b
#   (P2P, 5.5.6.2); a knows b as peer 2, b knows a as peer 1.  Namespace c
#   is where tun-b goes for a while, its peer's socket staying in b.

source "$(dirname "$0")/lib.sh"

NA=ovpn-pa-$$
NB=ovpn-pb-$$
NC=ovpn-pc-$$
KEY=$OVPN_DIR/key.hex
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }
in_nc() { ip netns exec "$NC" "$@"; }

setup_topology()
{
	ipv4_pair "$NA" veth-a 10.10.6.1 "$NB" veth-b 10.10.6.2
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3001 \
		10.10.6.2 3002 tx_id 1 mark 1056 stay
	# Tracked: p2p_peer_replaced closes this socket alone.
	start_tracked "$TMPDIR/b.log" ip netns exec "$NB" "$OVPN_CLI" \
		new_peer tun-b 1 3002 10.10.6.1 3001 tx_id 2 stay
	link_up "$NA" tun-a 5.5.6.1
	link_up "$NB" tun-b 5.5.6.2
	expect_eq "carrier with a peer" 1 \
		"$(in_a cat /sys/class/net/tun-a/carrier)"
}

# Install key KEY_ID with ALG on both ends as primary and ping through it.
ping_with()
{
	local alg=$1 id=$2

	in_a "$OVPN_CLI" new_key tun-a 2 primary "$id" "$alg" 0 "$KEY"
	in_b "$OVPN_CLI" new_key tun-b 1 primary "$id" "$alg" 1 "$KEY"
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.6.2
	in_a "$OVPN_CLI" get_key tun-a 2 primary | grep -q " key_id=$id " ||
		fail "key $id is not the primary"
}

aes_128_gcm() { ping_with aes128 1; }
aes_192_gcm() { ping_with aes192 2; }
aes_256_gcm() { ping_with aes256 3; }
chacha20_poly1305() { ping_with chachapoly 4; }

# a's socket has SO_MARK 1056 (setup): every encrypted packet carries it,
# for netfilter and policy routing, and none goes out unmarked.
MARK_COUNTERS='table ip ovpn_mark {
	chain out {
		type filter hook output priority 0;
		udp dport 3002 meta mark 1056 counter
		udp dport 3002 meta mark != 1056 counter
	}
}'

socket_mark()
{
	local marked unmarked

	in_a nft -f - <<<"$MARK_COUNTERS"
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.6.2
	read -r marked unmarked <<<"$(in_a nft list table ip ovpn_mark |
		sed -n 's/.* counter packets \([0-9]*\) .*/\1/p' | xargs)"
	in_a nft delete table ip ovpn_mark
	# The pings, and whatever else the stack sent through the tunnel.
	[ "$marked" -ge 3 ] || fail "packets marked 1056: $marked"
	expect_eq "packets not marked 1056" 0 "$unmarked"
}

# Ends using different ciphers for the same key id cannot talk.
cipher_mismatch()
{
	in_a "$OVPN_CLI" new_key tun-a 2 primary 5 aes256 0 "$KEY"
	in_b "$OVPN_CLI" new_key tun-b 1 primary 5 chachapoly 1 "$KEY"
	! in_a ping -q -c 2 -W 1 5.5.6.2 || fail "mismatched ciphers talked"
	ping_with chachapoly 5
}

# A 1500-byte inner MTU: the encrypted packets exceed the veth's MTU and
# are fragmented on the outside.
large_mtu()
{
	in_a ip link set tun-a mtu 1500
	in_b ip link set tun-b mtu 1500
	in_a ping -q -c 3 -i 0.2 -W 2 -M "do" -s 1472 5.5.6.2
	in_a ip link set tun-a mtu 1416
	in_b ip link set tun-b mtu 1416
}

# With either cipher, the packets of 40 round trips (160 encryptions and
# decryptions) allocate nothing in ovpn's code: the AEAD requests are in
# the CPUs' buffers.  The kmem tracepoints name each allocation's caller;
# the stack's own allocations for the pings show the tracing works.
no_allocation_per_packet()
{
	local tr=/sys/kernel/tracing alg ev n_all n_ovpn

	[ -d "$tr/events/kmem" ] || mount -t tracefs nodev "$tr"
	for alg in aes128 chachapoly; do
		in_a "$OVPN_CLI" new_key tun-a 2 primary 6 "$alg" 0 "$KEY"
		in_b "$OVPN_CLI" new_key tun-b 1 primary 6 "$alg" 1 "$KEY"
		in_a ping -q -c 2 -i 0.2 -W 2 5.5.6.2
		echo 0 >"$tr/tracing_on"
		: >"$tr/trace"
		for ev in kmalloc kmem_cache_alloc; do
			echo 1 >"$tr/events/kmem/$ev/enable"
		done
		echo 1 >"$tr/tracing_on"
		in_a ping -q -c 40 -i 0.02 -W 2 5.5.6.2
		echo 0 >"$tr/tracing_on"
		for ev in kmalloc kmem_cache_alloc; do
			echo 0 >"$tr/events/kmem/$ev/enable"
		done
		n_all=$(grep -c 'call_site=' "$tr/trace" || true)
		n_ovpn=$(grep 'call_site=' "$tr/trace" | grep -c '\[ovpn\]' ||
			 true)
		grep 'call_site=' "$tr/trace" | grep '\[ovpn\]' | head -n 5
		: >"$tr/trace"
		echo 1 >"$tr/tracing_on"
		[ "$n_all" -ge 80 ] ||
			fail "$alg: $n_all allocations traced in all"
		expect_eq "$alg: allocations in ovpn's code" 0 "$n_ovpn"
	done
}

# The vpn_rx_packets and vpn_tx_packets of b's peer 1 grow by exactly
# 3 while a pings b 3 times through the tunnel.
ping_through_b_peer()
{
	local before after

	before=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.6.2
	after=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	expect_eq "echo requests b's peer got" 3 \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
	expect_eq "echo replies b's peer sent" 3 \
		"$(peer_delta vpn_tx_packets "$before" "$after")"
}

# A second PEER_NEW on a P2P device replaces its peer, the old one going
# with reason TEARDOWN.  The old peer's socket closes afterwards: that
# removes the peers of that socket, and the new peer, on a socket of its
# own, is none of them.  It keeps the device's carrier, and carries the
# traffic once it has a key.
p2p_peer_replaced()
{
	local log=$TMPDIR/replace.ntf

	ntf_listen "$log" 1 in_b
	start_tracked "$TMPDIR/b2.log" ip netns exec "$NB" "$OVPN_CLI" \
		new_peer tun-b 1 3004 10.10.6.1 3001 tx_id 2 stay
	ntf_expect "$log" '^ntf peer_del .* id=1 reason=teardown'
	in_b "$OVPN_CLI" get_peer tun-b 1 | grep -q ' local_port=3004 ' ||
		fail "peer 1 is not the new one"
	# The process is gone once its socket was released.
	bg_stop "$TMPDIR/b.log"
	in_b "$OVPN_CLI" get_peer tun-b 1 | grep -q ' local_port=3004 ' ||
		fail "closing the old socket took the new peer"
	expect_eq "carrier after the old socket closed" 1 \
		"$(in_b cat /sys/class/net/tun-b/carrier)"
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 6 aes256
	in_a "$OVPN_CLI" set_peer tun-a 2 remote 10.10.6.2 3004
	ping_through_b_peer
}

# Userspace closes b's socket: b's peer goes with it.
socket_closed_under_module()
{
	local log=$TMPDIR/ntf.log

	ntf_listen "$log" 1 in_b
	kill_started
	ntf_wait "$log" '^ntf peer_del .* id=1 reason=transport_disconnect' ||
		fail "no transport_disconnect notification"
	expect_err ENOENT in_b "$OVPN_CLI" get_peer tun-b 1
	expect_eq "carrier without a peer" 0 \
		"$(in_b cat /sys/class/net/tun-b/carrier)"
}

# move_tun_b FROM TO: tun-b changes namespace; back in b, with its
# address again and up.
move_tun_b()
{
	ip -n "$1" link set tun-b netns "$2"
	[ "$2" = "$NB" ] || return 0
	link_up "$NB" tun-b 5.5.6.2
}

# Seen from c, the peer's socket is in another namespace: the dump and a
# single get carry its id, the one c gives b.
socket_netnsid_from_c()
{
	local dump nsid

	dump=$(in_nc "$OVPN_CLI" get_peer tun-b)
	echo "$dump"
	nsid=$(peer_val netnsid "$dump")
	expect_eq "c's id of b" "$nsid" \
		"$(in_nc ip -j netns list-id |
		   jq ".[] | select(.name == \"$NB\") | .nsid")"
	expect_eq "netnsid of a single get" "$nsid" \
		"$(peer_stat "$NC" tun-b 1 netnsid)"
}

# PEER_DEL from c: the notification goes to b, the socket's namespace.  A
# listener in c gets nothing from it: the first notification c sees is
# that of peer 7, whose socket is in c (new_peer's, closed when it exits).
del_notified_in_socket_netns()
{
	local blog=$TMPDIR/in-b.ntf clog=$TMPDIR/in-c.ntf ntf

	ntf="^ntf peer_del ifindex=$(in_nc cat /sys/class/net/tun-b/ifindex)"
	ntf_listen "$blog" 1 in_b
	ntf_listen "$clog" 1 in_nc
	in_nc "$OVPN_CLI" del_peer tun-b 1
	expect_eq "peer 7 on a socket of c" READY \
		"$(in_nc "$OVPN_CLI" new_peer tun-b 7 0 10.10.6.1 3011 |
		   cut -d' ' -f1)"
	ntf_expect "$blog" "$ntf id=1 reason=userspace"
	ntf_expect "$clog" "$ntf id=7 reason=transport_disconnect"
}

# tun-b away from the socket of its peer (new peers on both ends: the
# last test took them), and back.
socket_in_other_netns()
{
	start_ready "$TMPDIR/a3.log" in_a "$OVPN_CLI" new_peer tun-a 2 3011 \
		10.10.6.2 3012 tx_id 1 stay
	start_ready "$TMPDIR/b3.log" in_b "$OVPN_CLI" new_peer tun-b 1 3012 \
		10.10.6.1 3011 tx_id 2 stay
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 7 aes256
	ns_add "$NC"
	move_tun_b "$NB" "$NC"
	socket_netnsid_from_c
	move_tun_b "$NC" "$NB"
	! in_b "$OVPN_CLI" get_peer tun-b | grep ' netnsid=' ||
		fail "netnsid, with the socket in the same namespace"
	ping_through_b_peer
	move_tun_b "$NB" "$NC"
	del_notified_in_socket_netns
	move_tun_b "$NC" "$NB"
	expect_eq "carrier without a peer" 0 \
		"$(in_b cat /sys/class/net/tun-b/carrier)"
}

ovpn_require

ktap_plan 12
run_test setup setup_topology
run_test aes_128_gcm aes_128_gcm
run_test aes_192_gcm aes_192_gcm
run_test aes_256_gcm aes_256_gcm
run_test chacha20_poly1305 chacha20_poly1305
run_test socket_mark socket_mark
run_test cipher_mismatch cipher_mismatch
run_test large_mtu large_mtu
run_test no_allocation_per_packet no_allocation_per_packet
run_test p2p_peer_replaced p2p_peer_replaced
run_test socket_closed_under_module socket_closed_under_module
run_test socket_in_other_netns socket_in_other_netns
ktap_finish
