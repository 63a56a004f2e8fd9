#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A key that runs out of packet ids.  The module under test is a variant
# whose sender counter starts at 0xfffffff0 (the lab's build.sh -x): each
# new key hands out ids 0xfffffff1 to 0xffffffff, 15 of them, and the 16th
# packet finds none.  That packet is dropped, the key leaves its slot and
# one KEY_SWAP_NTF asks userspace for a new key; later packets find no
# primary key and are dropped too.  The secondary key survives and takes
# over on a swap, as openvpn does on that notification, and a key with the
# id of the exhausted one, installed after it, carries traffic.
#
#   ns a: tun-a (P2P, 5.5.7.1) -- veth-a 10.10.7.1 == veth-b 10.10.7.2 --
#   ns b: tun-b (P2P, 5.5.7.2); a knows b as peer 2, b knows a as peer 1.
#   a sends the echo requests and its keys run out; b answers each one
#   that arrives with a fresh key of its own, never more than 15.
#   tun-s, in a, only gets the short-lived peers that mark the end of a
#   series of notifications.
#
# Environment: OVPN_KO_PKTID_END, that variant (the script skips without
# it).  At the end the installed module, the one "modprobe ovpn" finds and
# the other scripts test, is loaded again in place of the variant.

source "$(dirname "$0")/lib.sh"

variant_require OVPN_KO_PKTID_END \
	"a sender counter starting at 0xfffffff0 (the lab's build.sh -x)"

NA=ovpn-xa-$$
NB=ovpn-xb-$$
ALG=aes256
# The ids of a new key in the variant, and the echo requests sent to
# exhaust one.
IDS=15
SENT=20

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	lab_is_loaded "$OVPN_KO_PKTID_END" ||
		fail "the loaded module is not $OVPN_KO_PKTID_END"
	ipv4_pair "$NA" veth-a 10.10.7.1 "$NB" veth-b 10.10.7.2
	in_a "$OVPN_CLI" new_iface tun-a
	in_a "$OVPN_CLI" new_iface tun-s
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3001 \
		10.10.7.2 3002 tx_id 1 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3002 \
		10.10.7.1 3001 tx_id 2 stay
	link_up "$NA" tun-a 5.5.7.1
	link_up "$NB" tun-b 5.5.7.2
}

# keys SLOT KEY_ID: a new key in SLOT at both ends.
keys() { key_pair "$NA" tun-a 2 "$NB" tun-b 1 "$1" "$2" "$ALG"; }

# pings COUNT PINGERS: COUNT echo requests from a to b, split between
# PINGERS processes on as many CPUs (as far as there are), each sending one
# every 0.1 s.  Prints the replies they got.
pings()
{
	local n=$(($1 / $2)) cpus i pids=()

	cpus=$(nproc)
	for ((i = 0; i < $2; i++)); do
		in_a taskset -c $((i % cpus)) ping -n -c "$n" -i 0.1 \
			-W "$(secs 1)" 5.5.7.2 >"$TMPDIR/ping.$i" &
		pids+=($!)
	done
	# Lost replies make ping fail: the counts tell.
	wait "${pids[@]}" || true
	cat "$TMPDIR"/ping.* | sed -n 's/.*, \([0-9]*\) received,.*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
	rm -f "$TMPDIR"/ping.*
}

# sentinel ID: a notification after all that a's packets sent so far
# caused: peer ID of tun-s, made on the socket of an ovpn-cli that exits
# at once, goes with that socket.
sentinel()
{
	expect_eq "sentinel peer $1" READY \
		"$(in_a "$OVPN_CLI" new_peer tun-s "$1" 0 10.10.7.2 3099 |
		   cut -d' ' -f1)"
}

# exhaust KEY_ID PINGERS: a sends $SENT echo requests with its primary
# key KEY_ID, fresh, from PINGERS processes; a listener in a collects
# notifications until the sentinel, peer 100 + KEY_ID.  Saves both peers
# and a's tx_dropped before and after, the replies and the notifications
# in $TMPDIR/ex.*.
exhaust()
{
	local ex=$TMPDIR/ex

	ntf_listen "$ex.ntf" 2 in_a
	in_a "$OVPN_CLI" get_peer tun-a 2 >"$ex.a0"
	in_b "$OVPN_CLI" get_peer tun-b 1 >"$ex.b0"
	link_dropped "$NA" tun-a tx >"$ex.drop0"
	link_dropped "$NA" tun-a rx >"$ex.rdrop0"
	pings "$SENT" "$2" >"$ex.replies"
	in_a "$OVPN_CLI" get_peer tun-a 2 >"$ex.a1"
	in_b "$OVPN_CLI" get_peer tun-b 1 >"$ex.b1"
	link_dropped "$NA" tun-a tx >"$ex.drop1"
	link_dropped "$NA" tun-a rx >"$ex.rdrop1"
	sentinel $((100 + $1))
	wait "$(cat "$ex.ntf.pid")" || true
	cat "$ex.ntf"
}

# delta NS FIELD: how much FIELD of the peer in NS (a or b) grew.
delta()
{
	peer_delta "$2" "$(cat "$TMPDIR/ex.${1}0")" "$(cat "$TMPDIR/ex.${1}1")"
}

# The key sent as many packets as it had ids, the others reached the peer
# and went no further, and b answered each one it got.  The key goes both
# ways: a reply that comes back after a request found no id finds no key
# and is dropped.  On a slow kernel, or with two senders, the last replies
# can be that late; each reply is either received or dropped.
sent_ids_left()
{
	local got dropped

	got=$(delta a vpn_rx_packets)
	dropped=$(($(cat "$TMPDIR/ex.rdrop1") - $(cat "$TMPDIR/ex.rdrop0")))
	expect_eq "packets a's peer got" "$SENT" "$(delta a vpn_tx_packets)"
	expect_eq "packets a sent encrypted" "$IDS" \
		"$(delta a link_tx_packets)"
	expect_eq "echo requests b decrypted" "$IDS" \
		"$(delta b vpn_rx_packets)"
	expect_eq "echo replies b sent" "$IDS" "$(delta b link_tx_packets)"
	expect_eq "echo replies a got or dropped" "$IDS" $((got + dropped))
	expect_eq "echo replies ping counted" "$got" \
		"$(cat "$TMPDIR/ex.replies")"
}

# The packet that found no id and those that found no key since are
# counted as dropped by the device.
rest_dropped()
{
	expect_eq "tx_dropped of tun-a" $((SENT - IDS)) \
		$(($(cat "$TMPDIR/ex.drop1") - $(cat "$TMPDIR/ex.drop0")))
}

# one_key_swap_ntf KEY_ID: one KEY_SWAP_NTF, for a's peer and the key
# that ran out, before the sentinel: the packets after the first one that
# found no id caused none.
one_key_swap_ntf()
{
	local ntf=$TMPDIR/ex.ntf ifindex

	ifindex=$(in_a cat /sys/class/net/tun-a/ifindex)
	expect_eq "KEY_SWAP_NTF" 1 "$(grep -c '^ntf key_swap' "$ntf")"
	grep -qx "ntf key_swap ifindex=$ifindex peer_id=2 key_id=$1" "$ntf" ||
		fail "no KEY_SWAP_NTF for peer 2 key $1 on ifindex $ifindex"
	grep -q "^ntf peer_del .* id=$((100 + $1)) " "$ntf" ||
		fail "no sentinel: notifications still coming?"
}

# The key that ran out left the primary slot; the peer stays.
exhausted_key_removed()
{
	expect_err ENOENT in_a "$OVPN_CLI" get_key tun-a 2 primary
	in_a "$OVPN_CLI" get_peer tun-a 2 >/dev/null
}

# check_exhaustion KEY_ID: all of the above.
check_exhaustion()
{
	sent_ids_left
	rest_dropped
	one_key_swap_ntf "$1"
	exhausted_key_removed
}

# has_key SLOT KEY_ID: a's SLOT holds key KEY_ID.
has_key()
{
	in_a "$OVPN_CLI" get_key tun-a 2 "$1" | grep -q " key_id=$2 " ||
		fail "key $2 is not a's $1 key"
}

# ping_all COUNT: COUNT echo requests, each answered, COUNT packets sent
# encrypted.
ping_all()
{
	local before

	before=$(in_a "$OVPN_CLI" get_peer tun-a 2)
	expect_eq "echo replies" "$1" "$(pings "$1" 1)"
	expect_eq "packets a sent encrypted" "$1" \
		"$(peer_delta link_tx_packets "$before" \
		   "$(in_a "$OVPN_CLI" get_peer tun-a 2)")"
}

fresh_key_runs_out()
{
	keys primary 1
	exhaust 1 1
	sent_ids_left
}

# Exhaustion kills the primary slot alone: the secondary key stays.
secondary_key_survives()
{
	keys primary 2
	keys secondary 3
	exhaust 2 1
	check_exhaustion 2
	has_key secondary 3
}

# openvpn's answer to KEY_SWAP_NTF, the new key being installed already:
# swap.  The secondary key carries the traffic, the empty slot becomes
# the secondary one.
swap_to_secondary()
{
	in_a "$OVPN_CLI" swap_keys tun-a 2
	in_b "$OVPN_CLI" swap_keys tun-b 1
	has_key primary 3
	expect_err ENOENT in_a "$OVPN_CLI" get_key tun-a 2 secondary
	ping_all 3
}

# A key runs out under two senders on two CPUs, so that several packets
# may find no id at once: one of them removes the key, the others find it
# gone and say nothing.  A new key with the same id then works, from its
# own first id.
same_key_id_reinstalled()
{
	keys primary 4
	exhaust 4 2
	check_exhaustion 4
	keys primary 4
	has_key primary 4
	ping_all 5
}

variant_start "$OVPN_KO_PKTID_END"

ktap_plan 9
run_test setup setup_topology
run_test fresh_key_runs_out fresh_key_runs_out
run_test rest_dropped rest_dropped
run_test one_key_swap_ntf one_key_swap_ntf 1
run_test exhausted_key_removed exhausted_key_removed
run_test secondary_key_survives secondary_key_survives
run_test swap_to_secondary swap_to_secondary
run_test same_key_id_reinstalled same_key_id_reinstalled
run_test module_unloads module_unloads
ktap_finish
