#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The parallel path of a P2P device, turned on by its "parallel-crypto"
# private flag (off by default, refused by an MP device): one flow's
# packets are encrypted and decrypted by the workers of more than one CPU,
# and still come out in the order they went in, every one counted; turned
# off, the workers run no more; keys swapped and deleted, a device
# deleted and a peer deleted while packets are in flight.
#
#   ns a: tun-a (P2P, 5.5.8.1) -- veth 10.10.8.1 == 10.10.8.2 -- ns b: tun-b
#   (P2P, 5.5.8.2); a knows b as peer 2, b knows a as peer 1.

source "$(dirname "$0")/lib.sh"

NA=ovpn-qa-$$
NB=ovpn-qb-$$
SEQ=$OVPN_DIR/udp-seq.py
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	ipv4_pair "$NA" veth-a 10.10.8.1 "$NB" veth-b 10.10.8.2
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3201 \
		10.10.8.2 3202 tx_id 1 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3202 \
		10.10.8.1 3201 tx_id 2 stay
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 primary 1 aes256
	in_a ip addr add 5.5.8.1/24 dev tun-a
	in_b ip addr add 5.5.8.2/24 dev tun-b
	in_a ip link set tun-a up
	in_b ip link set tun-b up
	in_a ping -q -c 2 -i 0.2 -W 2 5.5.8.2
}

# priv_flag NS IFNAME: the device's parallel-crypto flag, "on" or "off".
priv_flag()
{
	ip netns exec "$1" ethtool --show-priv-flags "$2" |
		sed -n 's/^parallel-crypto *: *//p'
}

# Off by default; an MP device has no parallel path to turn on; on at
# both ends for what follows.
private_flag()
{
	command -v ethtool >/dev/null || {
		echo "no ethtool"
		return "$KSFT_SKIP"
	}
	expect_eq "a's flag by default" off "$(priv_flag "$NA" tun-a)"
	in_a "$OVPN_CLI" new_iface tun-mp mp
	! in_a ethtool --set-priv-flags tun-mp parallel-crypto on ||
		fail "an MP device took the flag"
	expect_eq "the MP device's flag" off "$(priv_flag "$NA" tun-mp)"
	in_a ip link del tun-mp
	in_a ethtool --set-priv-flags tun-a parallel-crypto on
	in_b ethtool --set-priv-flags tun-b parallel-crypto on
	expect_eq "a's flag set" on "$(priv_flag "$NA" tun-a)"
}

# wq_trace 1|0: record which CPU runs each work item, or stop.
wq_trace()
{
	local tr=/sys/kernel/tracing

	[ -d "$tr/events" ] || mount -t tracefs nodev "$tr"
	[ -d "$tr/events/workqueue/workqueue_execute_start" ] || return 1
	[ "$1" = 0 ] || : >"$tr/trace"
	echo "$1" >"$tr/events/workqueue/workqueue_execute_start/enable"
}

# crypt_cpus: the CPUs that ran ovpn's crypto workers while traced.
crypt_cpus()
{
	sed -n 's/.*\[\([0-9]*\)\].*function ovpn_crypt_work.*/\1/p' \
		/sys/kernel/tracing/trace | sort -u | xargs
}

# seq_flow N: N datagrams in bursts of 64 from one sender on CPU 0, all
# received in order and counted once by b's peer.
seq_flow()
{
	local n=$1 before after

	before=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	start_ready "$TMPDIR/recv.log" in_b python3 "$SEQ" recv 5.5.8.2 \
		4000 "$n" "$(secs 5)"
	in_a taskset -c 0 python3 "$SEQ" send 5.5.8.2 4000 "$n" 0.005
	wait_until log_has "$TMPDIR/recv.log" '^got='
	after=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	cat "$TMPDIR/recv.log"
	expect_eq "datagrams received" "got=$n late=0" \
		"$(grep '^got=' "$TMPDIR/recv.log")"
	expect_eq "packets b's peer received" "$n" \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
}

# 3000 datagrams through the parallel path: all in order, and the workers
# that ran the AEAD ran on more than one CPU.
in_order()
{
	local cpus

	[ "$(priv_flag "$NA" tun-a 2>/dev/null)" = on ] || {
		echo "parallel-crypto is not on"
		return "$KSFT_SKIP"
	}

	wq_trace 1 || true
	seq_flow 3000
	wq_trace 0 || true

	[ -r /sys/kernel/tracing/trace ] &&
		grep -q workqueue_execute_start /sys/kernel/tracing/trace || {
		echo "no workqueue events to trace"
		return "$KSFT_SKIP"
	}
	[ "$(nproc)" -gt 1 ] || { echo "one CPU"; return "$KSFT_SKIP"; }
	cpus=$(crypt_cpus)
	ktap_note "CPUs that ran ovpn's crypto workers: ${cpus:-none}"
	[ "$(wc -w <<<"$cpus")" -ge 2 ] ||
		fail "crypto workers ran on CPUs '$cpus' only"
}

# Turned off at both ends: the next datagrams are processed inline, no
# crypto worker runs, and they still arrive in order; then on again.
turned_off()
{
	command -v ethtool >/dev/null || {
		echo "no ethtool"
		return "$KSFT_SKIP"
	}
	in_a ethtool --set-priv-flags tun-a parallel-crypto off
	in_b ethtool --set-priv-flags tun-b parallel-crypto off
	wq_trace 1 || {
		echo "no workqueue events to trace"
		return "$KSFT_SKIP"
	}
	seq_flow 500
	wq_trace 0
	expect_eq "CPUs that ran crypto workers while off" "" "$(crypt_cpus)"
	in_a ethtool --set-priv-flags tun-a parallel-crypto on
	in_b ethtool --set-priv-flags tun-b parallel-crypto on
}

# blast_start FROM_NS DST: datagrams as fast as a sender goes, until
# blast_stop.
blast_start()
{
	bg_start "$TMPDIR/blast.log" ip netns exec "$1" python3 "$SEQ" \
		send "$2" 4001 0 0
	# Under way: packets in the rings before anything changes.
	sleep "$(secs 1)"
}

blast_stop() { bg_stop "$TMPDIR/blast.log"; }

# While a blasts at b: a secondary key, swapped in on both ends, and the
# old one deleted.  The tunnel carries on with the new key.
key_swap_under_load()
{
	blast_start "$NA" 5.5.8.2
	key_pair "$NA" tun-a 2 "$NB" tun-b 1 secondary 2 chachapoly
	in_a "$OVPN_CLI" swap_keys tun-a 2
	in_b "$OVPN_CLI" swap_keys tun-b 1
	sleep "$(secs 1)"
	in_a "$OVPN_CLI" del_key tun-a 2 secondary
	in_b "$OVPN_CLI" del_key tun-b 1 secondary
	sleep "$(secs 1)"
	blast_stop
	in_a "$OVPN_CLI" get_key tun-a 2 primary | grep -q " key_id=2 " ||
		fail "key 2 is not a's primary"
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.8.2
}

# b's device deleted while a blasts at it: what b had in flight is
# drained with the device.
device_deleted_under_load()
{
	blast_start "$NA" 5.5.8.2
	in_b ip link del tun-b
	sleep "$(secs 1)"
	blast_stop
	! in_b ip link show tun-b 2>/dev/null || fail "tun-b still exists"
}

# a's peer deleted while a blasts at it: what a had in flight is drained
# with the peer, and the device loses its carrier.
peer_deleted_under_load()
{
	blast_start "$NA" 5.5.8.2
	in_a "$OVPN_CLI" del_peer tun-a 2
	sleep "$(secs 1)"
	blast_stop
	expect_errno ENOENT in_a "$OVPN_CLI" get_peer tun-a 2
	expect_eq "carrier without a peer" 0 \
		"$(in_a cat /sys/class/net/tun-a/carrier)"
}

ovpn_require

ktap_plan 8
run_test setup setup_topology
run_test private_flag private_flag
run_noted in_order in_order
run_test turned_off turned_off
run_test key_swap_under_load key_swap_under_load
run_test device_deleted_under_load device_deleted_under_load
run_test peer_deleted_under_load peer_deleted_under_load
run_test teardown ns_teardown
ktap_finish
