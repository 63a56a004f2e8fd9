#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The AEAD usage limit of a key: openvpn 2.7 renegotiates once the packets
# plus 16-byte plaintext blocks under an AES-GCM key pass 7/8 of 2^36 - 1,
# in either direction; the driver sends KEY_SWAP_NTF there (openvpn's
# answer to it is a renegotiation) and refuses to encrypt past the limit.
# No traffic in the lab reaches 2^36 blocks: the module under test is a
# variant (the lab's build.sh -u) whose new AES-GCM keys start their
# accounts short of the thresholds, by these numbers of blocks:
#   sending, key id 0: the limit - 90; any other key id: threshold - 45;
#   receiving, every key: threshold - 45.
# Each datagram below is a 128-byte IPv4 packet, and its packet id counts
# one more.  The receiver counts its 8 blocks: q + s grows by 9 a packet.
# The sender counts it as openvpn does, with the 8 bytes of header and
# packet id in front: 136 bytes, 9 blocks, 10 a packet.  So the sender
# passes the threshold at a key's 5th packet (50 > 45), the receiver at
# its 6th (54 > 45; 45 at the 5th is not past), and key 0 sends 9 packets
# (90, not past) and refuses the 10th.
# ChaCha20-Poly1305 has no limit: its keys count nothing.
# Failed verifications count under any cipher: the variant starts every
# key 2 short of openvpn's threshold for them, key id 4 2 short of the
# limit past which the key decrypts nothing.
#
#   ns a: tun-a (P2P, 5.5.8.1) -- veth-a 10.10.8.1 == veth-b 10.10.8.2 --
#   ns b: tun-b (P2P, 5.5.8.2); a knows b as peer 2, b knows a as peer 1.
#   Only a sends: UDP datagrams to a socket b holds open, which nothing
#   answers.  tun-s, in each namespace, only gets the short-lived peers
#   that mark the end of a series of notifications.
#
# Last, the real daemon: an openvpn server and client on the variant
# renegotiate when the driver asks them to (skipped without openvpn).
#
#   ns srv: openvpn server, dcosrv, 10.8.18.1 -- veth-s 10.10.18.1 ==
#   ns cli: veth-c 10.10.18.2 -- openvpn client, dcocli
#
# Environment: OVPN_KO_USAGE_END, that variant (the script skips without
# it).  At the end the module the other scripts test is loaded again.

source "$(dirname "$0")/openvpn-lib.sh"

variant_require OVPN_KO_USAGE_END \
	"keys near their usage limit (the lab's build.sh -u)"

NA=ovpn-ua-$$
NB=ovpn-ub-$$
NS=ovpn-us-$$
NC=ovpn-uc-$$
PORT=4000

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	lab_is_loaded "$OVPN_KO_USAGE_END" ||
		fail "the loaded module is not $OVPN_KO_USAGE_END"
	ipv4_pair "$NA" veth-a 10.10.8.1 "$NB" veth-b 10.10.8.2
	in_a "$OVPN_CLI" new_iface tun-a
	in_a "$OVPN_CLI" new_iface tun-s
	in_b "$OVPN_CLI" new_iface tun-b
	in_b "$OVPN_CLI" new_iface tun-s
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3011 \
		10.10.8.2 3012 tx_id 1 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3012 \
		10.10.8.1 3011 tx_id 2 stay
	link_up "$NA" tun-a 5.5.8.1
	link_up "$NB" tun-b 5.5.8.2
	# A socket for the datagrams, so that b answers none of them.
	bg_start "$TMPDIR/sink" in_b python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind(('5.5.8.2', $PORT))
time.sleep(3600)"
	wait_until sink_open || fail "no socket on b's port $PORT"
}

sink_open() { in_b ss -Hlun "sport = :$PORT" | grep -q .; }

# keys SLOT KEY_ID ALG: a new key in SLOT at both ends.
keys() { key_pair "$NA" tun-a 2 "$NB" tun-b 1 "$1" "$2" "$3"; }

# send COUNT: COUNT datagrams of 100 bytes from a to b's socket.
send()
{
	in_a python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range($1):
    try:
        s.sendto(b'u' * 100, ('5.5.8.2', $PORT))
    except OSError:
        pass"
}

# listen COUNT_A COUNT_B: listeners in a and b, collecting that many
# notifications: those expected, and the sentinel.
listen()
{
	ntf_listen "$TMPDIR/ntf.a" "$1" in_a
	ntf_listen "$TMPDIR/ntf.b" "$2" in_b
}

# sentinels ID: a notification in each namespace after all that the
# packets sent so far caused: peer ID of tun-s, made on the socket of an
# ovpn-cli that exits at once, goes with that socket.  Waits for both
# listeners.
sentinels()
{
	local ns

	for ns in in_a in_b; do
		expect_eq "sentinel peer $1" READY \
			"$($ns "$OVPN_CLI" new_peer tun-s "$1" 0 10.10.8.9 3099 |
			   cut -d' ' -f1)"
	done
	wait "$(cat "$TMPDIR/ntf.a.pid")" || true
	wait "$(cat "$TMPDIR/ntf.b.pid")" || true
	grep -q "^ntf peer_del .* id=$1 " "$TMPDIR/ntf.a" ||
		fail "no sentinel in a: notifications still coming?"
	grep -q "^ntf peer_del .* id=$1 " "$TMPDIR/ntf.b" ||
		fail "no sentinel in b: notifications still coming?"
}

# swaps NS COUNT KEY_ID: the listener of NS (a or b) got COUNT
# KEY_SWAP_NTF, each for the other end's peer and KEY_ID.
swaps()
{
	local ntf=$TMPDIR/ntf.$1 dev=tun-$1 id=2 ns=$NA ifindex

	[ "$1" = b ] && dev=tun-b id=1 ns=$NB
	ifindex=$(ip netns exec "$ns" cat "/sys/class/net/$dev/ifindex")
	expect_eq "KEY_SWAP_NTF in $1" "$2" "$(grep -c '^ntf key_swap' "$ntf")"
	expect_eq "KEY_SWAP_NTF in $1 for peer $id key $3" "$2" \
		"$(grep -cx "ntf key_swap ifindex=$ifindex peer_id=$id key_id=$3" \
		   "$ntf")"
}

# received TOTAL: b's peer has decrypted TOTAL packets since setup.
received()
{
	wait_until peer_stat_ge "$NB" tun-b 1 vpn_rx_packets "$1" || true
	expect_eq "packets b decrypted" "$1" \
		"$(peer_stat "$NB" tun-b 1 vpn_rx_packets)"
}

# Key 1, 45 blocks short of the threshold both ways: 4 packets stay
# below it at both ends.
quiet_below_threshold()
{
	keys primary 1 aes256
	listen 1 1
	send 4
	received 4
	sentinels 101
	swaps a 0 1
	swaps b 0 1
}

# The 5th packet passes it at the sender, which asks for a new key for
# its sending side; the receiver, exactly at it, does not.
sender_first()
{
	listen 2 1
	send 1
	received 5
	sentinels 102
	swaps a 1 1
	swaps b 0 1
}

# The 6th passes it at the receiver, which asks for its receiving side;
# each end has asked once, and the traffic goes on.
receiver_next()
{
	listen 1 2
	send 1
	received 6
	send 4
	received 10
	sentinels 103
	swaps a 0 1
	swaps b 1 1
}

# Key 0 sends 90 short of the limit: 9 packets, each past the threshold
# already (said once), then the 10th is refused and the key is done: it
# leaves its slot with a second KEY_SWAP_NTF, and the 11th finds no key.
# Both are counted as dropped.  b's side of key 0 says its threshold at
# the 6th, as key 1's did.
limit_refuses()
{
	local before drop0

	keys primary 0 aes256
	listen 3 2
	before=$(in_a "$OVPN_CLI" get_peer tun-a 2)
	drop0=$(link_dropped "$NA" tun-a tx)
	send 11
	received 19
	sentinels 104
	expect_eq "packets a sent encrypted" 9 \
		"$(peer_delta link_tx_packets "$before" \
		   "$(in_a "$OVPN_CLI" get_peer tun-a 2)")"
	expect_eq "tx_dropped of tun-a" 2 \
		$(($(link_dropped "$NA" tun-a tx) - drop0))
	swaps a 2 0
	swaps b 1 0
	expect_err ENOENT in_a "$OVPN_CLI" get_key tun-a 2 primary
}

# A ChaCha20-Poly1305 key has no limit: it counts nothing and says
# nothing, although the variant's AES-GCM keys would have.
chacha_unlimited()
{
	keys primary 2 chachapoly
	listen 1 1
	send 20
	received 39
	sentinels 105
	swaps a 0 2
	swaps b 0 2
}

# b_drops COUNT WHAT CMD...: CMD makes b drop COUNT received packets
# (WHAT they are), and no more; waits until it has.
b_drops()
{
	local n=$1 what=$2 drop0

	shift 2
	drop0=$(link_dropped "$NB" tun-b rx)
	"$@"
	wait_until link_dropped_ge "$NB" tun-b rx $((drop0 + n)) || true
	expect_eq "$what b dropped" "$n" \
		$(($(link_dropped "$NB" tun-b rx) - drop0))
}

# inject_forged COUNT KEY_ID: COUNT packets to b that say they are a's,
# under KEY_ID, and cannot authenticate (udp-inject.py's garbage tag).
inject_forged()
{
	in_a python3 "$OVPN_DIR/udp-inject.py" 10.10.8.2 3012 "$1" \
		data 1 "$2" 1 64 >/dev/null
}

# forge COUNT KEY_ID: inject_forged, and b drops them all.
forge() { b_drops "$1" forgeries inject_forged "$1" "$2"; }

# Every packet that claims a key and fails to authenticate counts against
# that key, whatever its cipher: openvpn asks for a new key past 2^35 of
# them.  The variant's key 3 starts 2 short: the 2nd forgery reaches the
# threshold quietly, the 3rd passes it and b asks, once; the key goes on
# decrypting a's packets.
forgeries_renegotiate()
{
	keys primary 3 chachapoly
	listen 1 1
	forge 2 3
	sentinels 106
	swaps b 0 3
	listen 1 2
	forge 2 3
	send 1
	received 40
	sentinels 107
	swaps a 0 3
	swaps b 1 3
}

# Past 2^36 failures openvpn refuses to decrypt under the key at all.
# The variant's key 4 starts 2 short: after 2 forgeries it still
# decrypts; after the 3rd, b drops a's authentic packets under it too,
# and counts them.
forgeries_spend_key()
{
	keys primary 4 aes256
	forge 2 4
	send 1
	received 41
	forge 1 4
	b_drops 2 "authentic packets" send 2
	received 41
}

# key_renewed ID: the client's peer ID has a key other than key 0, the
# first one openvpn negotiates, in its primary slot.
key_renewed()
{
	local id

	id=$(key_id "$NC" dcocli "$1" primary) && [ "$id" != 0 ]
}

# openvpn answers a KEY_SWAP_NTF with a renegotiation.  Both ends are
# DCO on the variant, over UDP with AES-256-GCM: key 0 starts past its
# threshold on the sending side, so the first packets each end sends ask
# for a new key, and nothing else would make openvpn renegotiate within
# the hour (--reneg-sec).  Every key after it asks again at its own
# threshold, 45 blocks on; pings pass between renegotiations.
openvpn_renegotiates()
{
	local id

	command -v "$OPENVPN" >/dev/null ||
		{ echo "no openvpn"; return "$KSFT_SKIP"; }
	ipv4_pair "$NS" veth-s 10.10.18.1 "$NC" veth-c 10.10.18.2
	ovpn_pki
	ovpn_server srv "$NS" dcosrv udp4 1194 10.8.18.0 --keepalive 2 30
	ovpn_wait_up srv
	ovpn_client cli "$NC" dcocli udp4 10.10.18.1 1194 AES-256-GCM
	ovpn_wait_up cli
	ovpn_uses_dco cli "$NC" dcocli
	id=$(peer_val id "$(ovpn_peer "$NC" dcocli)")
	ovpn_wait key_renewed "$id" || {
		tail -n 20 "$(ovpn_log cli)"
		fail "key 0 is still the client's primary key"
		return
	}
	ovpn_wait ip netns exec "$NC" ping -q -c 1 -W 2 10.8.18.1 ||
		fail "no ping through after the renegotiation" || return
	ktap_note "the client's primary key:" \
		"$(ovpn_key "$NC" dcocli "$id" primary)"
	ovpn_stop cli
	ovpn_stop srv
}

variant_start "$OVPN_KO_USAGE_END"

ktap_plan 10
run_test setup setup_topology
run_test quiet_below_threshold quiet_below_threshold
run_test sender_first sender_first
run_test receiver_next receiver_next
run_test limit_refuses limit_refuses
run_test chacha_unlimited chacha_unlimited
run_test forgeries_renegotiate forgeries_renegotiate
run_test forgeries_spend_key forgeries_spend_key
run_noted openvpn_renegotiates openvpn_renegotiates
run_test module_unloads module_unloads
ktap_finish
