#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two P2P peers over UDP: every cipher and key size, the socket's mark on
# the encrypted packets, a large inner MTU, and the transport socket
# closed under the module.
#
#   ns a: tun-a (P2P, 5.5.6.1) -- veth 10.10.6.1 == 10.10.6.2 -- ns b: tun-b
#   (P2P, 5.5.6.2); a knows b as peer 2, b knows a as peer 1.

source "$(dirname "$0")/lib.sh"

NA=ovpn-pa-$$
NB=ovpn-pb-$$
KEY=$OVPN_DIR/key.hex
TMPDIR=$(mktemp -d)
OVPN_PIDS=$TMPDIR/pids

cleanup()
{
	kill_started
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$TMPDIR"
}
trap cleanup EXIT

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	ip netns add "$NA"
	ip netns add "$NB"
	ip link add veth-a netns "$NA" type veth peer name veth-b netns "$NB"
	in_a ip addr add 10.10.6.1/24 dev veth-a
	in_b ip addr add 10.10.6.2/24 dev veth-b
	in_a ip link set veth-a up
	in_b ip link set veth-b up
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3001 \
		10.10.6.2 3002 tx_id 1 mark 1056 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3002 \
		10.10.6.1 3001 tx_id 2 stay
	in_a ip addr add 5.5.6.1/24 dev tun-a
	in_b ip addr add 5.5.6.2/24 dev tun-b
	in_a ip link set tun-a up
	in_b ip link set tun-b up
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
	in_a ping -q -c 3 -i 0.2 -W 2 -M do -s 1472 5.5.6.2
	in_a ip link set tun-a mtu 1416
	in_b ip link set tun-b mtu 1416
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

ovpn_require

ktap_plan 9
run_test setup setup_topology
run_test aes_128_gcm aes_128_gcm
run_test aes_192_gcm aes_192_gcm
run_test aes_256_gcm aes_256_gcm
run_test chacha20_poly1305 chacha20_poly1305
run_test socket_mark socket_mark
run_test cipher_mismatch cipher_mismatch
run_test large_mtu large_mtu
run_test socket_closed_under_module socket_closed_under_module
ktap_finish
