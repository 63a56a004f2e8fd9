#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The parallel path's bounded queues, overflowed.  The module under test
# is a variant whose device crypt rings hold 2 packets and whose peer
# ordered queues hold 8 (the lab's build.sh -r; 1024 each in the driver).
# A burst of 64 datagrams reaches the device in one go (udp-burst.py):
# the first two fill the crypt ring, the next ones wait in the ordered
# queue and are posted as drops when the crypt ring refuses them, and
# those after them find the ordered queue full and are dropped at once.
# How many of each depends on how fast the other CPU's worker starts;
# what may not vary: every packet is sent or counted as dropped, what is
# sent arrives, in order, and the tunnel carries on.
#
#   ns a: tun-a (P2P, 5.5.9.1) -- veth 10.10.9.1 == 10.10.9.2 -- ns b: tun-b
#   (P2P, 5.5.9.2); a knows b as peer 2, b knows a as peer 1.
#
# Environment: OVPN_KO_SMALL_RINGS, that variant (the script skips
# without it).  At the end the installed module is loaded again in place
# of the variant.

source "$(dirname "$0")/lib.sh"

variant_require OVPN_KO_SMALL_RINGS \
	"crypt rings of 2 packets (the lab's build.sh -r)"

NA=ovpn-oa-$$
NB=ovpn-ob-$$
SEQ=$OVPN_DIR/udp-seq.py
BURST=$LAB_TESTS_DIR/udp-burst.py
# The datagrams of a burst, all the stack takes in one send.
N=64

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	lab_is_loaded "$OVPN_KO_SMALL_RINGS" ||
		fail "the loaded module is not $OVPN_KO_SMALL_RINGS"
	command -v ethtool >/dev/null || fail "no ethtool"
	[ "$(nproc)" -gt 1 ] || fail "one CPU: no parallel path"
	ipv4_pair "$NA" veth-a 10.10.9.1 "$NB" veth-b 10.10.9.2 &&
		udp_p2p "$NA" tun-a 5.5.9.1 10.10.9.1 3901 \
			"$NB" tun-b 5.5.9.2 10.10.9.2 3902 &&
		key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 1 aes256 &&
		in_a ping -q -c 2 -i 0.2 -W "$(secs 2)" 5.5.9.2
}

# parallel NS IFNAME on|off
parallel() { ip netns exec "$1" ethtool --set-priv-flags "$2" \
	parallel-crypto "$3"; }

# burst: N datagrams from a to b in one send; b's receiver prints what it
# got in $TMPDIR/recv.log.
burst()
{
	start_ready "$TMPDIR/recv.log" in_b python3 "$SEQ" recv 5.5.9.2 \
		4000 $N "$(secs 3)"
	in_a python3 "$BURST" 5.5.9.2 4000 $N
	wait_until log_has "$TMPDIR/recv.log" '^got='
	cat "$TMPDIR/recv.log"
}

# sent_or_dropped WHAT SENT DROPPED: SENT + DROPPED is the burst, and
# DROPPED is not 0: the queues overflowed.
sent_or_dropped()
{
	ktap_note "$1: $2 through, $3 dropped"
	expect_eq "$1: packets through plus dropped" $N $(($2 + $3))
	[ "$3" -gt 0 ] || fail "$1: no packet dropped: no queue overflowed"
}

# a encrypts on the parallel path, b decrypts inline: a's device counts
# what its queues refused as TX drops, and its peer sends the rest, which
# b receives in order.
tx_overflow()
{
	local before after dropped sent

	parallel "$NA" tun-a on && parallel "$NB" tun-b off || return
	dropped=$(link_dropped "$NA" tun-a tx)
	before=$(in_a "$OVPN_CLI" get_peer tun-a 2)
	burst
	after=$(in_a "$OVPN_CLI" get_peer tun-a 2)
	dropped=$(($(link_dropped "$NA" tun-a tx) - dropped))
	sent=$(peer_delta link_tx_packets "$before" "$after")
	expect_eq "packets a's device took" $N \
		"$(peer_delta vpn_tx_packets "$before" "$after")"
	sent_or_dropped "a's queues" "$sent" "$dropped"
	expect_eq "datagrams b received" "got=$sent late=0" \
		"$(grep '^got=' "$TMPDIR/recv.log")"
}

# a encrypts inline and sends all of the burst; b decrypts on the parallel
# path: b's device counts what its queues refused as RX drops, and its
# peer delivers the rest, in order.
rx_overflow()
{
	local before after dropped got

	parallel "$NA" tun-a off && parallel "$NB" tun-b on || return
	dropped=$(link_dropped "$NB" tun-b rx)
	before=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	burst
	after=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	dropped=$(($(link_dropped "$NB" tun-b rx) - dropped))
	got=$(peer_delta vpn_rx_packets "$before" "$after")
	expect_eq "packets b's peer received on the link" $N \
		"$(peer_delta link_rx_packets "$before" "$after")"
	sent_or_dropped "b's queues" "$got" "$dropped"
	expect_eq "datagrams b received" "got=$got late=0" \
		"$(grep '^got=' "$TMPDIR/recv.log")"
}

# Both ends on the parallel path after the overflows: one packet at a
# time passes both ways.
tunnel_carries_on()
{
	parallel "$NA" tun-a on && parallel "$NB" tun-b on || return
	in_a ping -q -c 5 -i 0.2 -W "$(secs 2)" 5.5.9.2
}

variant_start "$OVPN_KO_SMALL_RINGS"

ktap_plan 5
run_test setup setup_topology
run_noted tx_overflow tx_overflow
run_noted rx_overflow rx_overflow
run_test tunnel_carries_on tunnel_carries_on
run_test module_unloads module_unloads
ktap_finish
