#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Keys in openvpn 2.7's epoch data format (KEY_NEW with an epoch secret
# in both key directions), between two P2P peers over UDP and over TCP.
# The counts are exact: every echo request and reply arrives and is
# counted once, and each outer packet is 28 bytes longer than the inner
# one (header, 64-bit packet id, tag), not DATA_V2's 24.  A key in one
# format does not understand the other; replayed packets and forgeries
# claiming the current, a future or an unknown epoch are dropped and
# counted, and move nothing: traffic goes on.  Epochs rolling over under
# traffic need a variant of the module (the lab's test-epoch-rollover.sh).
#
#   ns a: tun-a (P2P, 5.5.8.1) -- veth 10.10.8.1 == 10.10.8.2 -- ns b:
#   tun-b (P2P, 5.5.8.2), over UDP: a knows b as peer 2, b knows a as
#   peer 1.  Over TCP, the same namespaces: tun-ta (5.5.9.1) connects to
#   tun-tb (5.5.9.2), which listens; the same peer ids.

source "$(dirname "$0")/lib.sh"

NA=ovpn-ea-$$
NB=ovpn-eb-$$
KEY=$OVPN_DIR/key.hex
INJECT=$OVPN_DIR/udp-inject.py
PORT_A=3801
PORT_B=3802
PORT_TCP=3803
# Echo requests a test sends, and their ICMP payload: 128-byte IPv4
# packets inside.
N=20
SIZE=100
INNER=$((SIZE + 28))
EPOCH_OVERHEAD=28
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	ipv4_pair "$NA" veth-a 10.10.8.1 "$NB" veth-b 10.10.8.2 &&
		udp_p2p "$NA" tun-a 5.5.8.1 10.10.8.1 $PORT_A \
			"$NB" tun-b 5.5.8.2 10.10.8.2 $PORT_B
}

# keys IFA IFB KEY_ID ALG [FORMAT_B]: key.hex in the primary slots at both
# ends, direction 0 at a, in the epoch format; at b in FORMAT_B if given.
keys()
{
	in_a "$OVPN_CLI" new_key "$1" 2 primary "$3" "$4" 0 "$KEY" epoch &&
		in_b "$OVPN_CLI" new_key "$2" 1 primary "$3" "$4" 1 "$KEY" \
			"${5:-epoch}"
}

# pings_counted IFA IFB DST: $N echo requests from a to DST, all answered;
# b's peer counted each request and reply once, in VPN packets and in
# link bytes of the epoch format.
pings_counted()
{
	local before after out

	before=$(in_b "$OVPN_CLI" get_peer "$2" 1)
	out=$(in_a ping -q -c $N -i 0.05 -W 5 -s $SIZE "$3") ||
		fail "pings lost: $out" || return
	after=$(in_b "$OVPN_CLI" get_peer "$2" 1)
	expect_eq "echo requests b got" $N \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
	expect_eq "echo replies b sent" $N \
		"$(peer_delta vpn_tx_packets "$before" "$after")"
	expect_eq "link bytes b received" $((N * (INNER + EPOCH_OVERHEAD))) \
		"$(peer_delta link_rx_bytes "$before" "$after")"
	expect_eq "link bytes b sent" $((N * (INNER + EPOCH_OVERHEAD))) \
		"$(peer_delta link_tx_bytes "$before" "$after")"
}

udp_aes_gcm()
{
	keys tun-a tun-b 1 aes256 &&
		pings_counted tun-a tun-b 5.5.8.2
}

udp_aes128_gcm()
{
	keys tun-a tun-b 2 aes128 &&
		pings_counted tun-a tun-b 5.5.8.2
}

udp_chacha20_poly1305()
{
	keys tun-a tun-b 3 chachapoly &&
		pings_counted tun-a tun-b 5.5.8.2
}

# One end in each format: b cannot authenticate a single request, and
# drops each one.
formats_apart()
{
	local d0 d1

	keys tun-a tun-b 4 aes256 v2 || return
	d0=$(link_dropped "$NB" tun-b rx)
	in_a ping -q -c 5 -i 0.05 -W 1 5.5.8.2 &&
		fail "a DATA_V2 key understood the epoch format"
	d1=$(link_dropped "$NB" tun-b rx)
	expect_eq "requests b dropped" 5 $((d1 - d0))
}

# What KEY_NEW refuses: an epoch secret in one direction only.
half_epoch_key()
{
	expect_err EINVAL in_a "$OVPN_CLI" new_key tun-a 2 primary 5 aes256 \
		0 "$KEY" epoch-encrypt-only
}

# inject_dropped WHAT ARGS...: udp-inject.py ARGS from a to b's socket,
# $1 datagrams; b dropped each, delivered none.
inject_dropped()
{
	local n=$1 d0 d1 rx0 rx1

	shift
	d0=$(link_dropped "$NB" tun-b rx)
	rx0=$(peer_stat "$NB" tun-b 1 vpn_rx_packets)
	in_a python3 "$INJECT" 10.10.8.2 $PORT_B "$@" >/dev/null
	sleep 0.5
	d1=$(link_dropped "$NB" tun-b rx)
	rx1=$(peer_stat "$NB" tun-b 1 vpn_rx_packets)
	expect_eq "dropped: $*" "$n" $((d1 - d0))
	expect_eq "delivered: $*" 0 $((rx1 - rx0))
}

# Three genuine packets of epoch 1, replayed; then forgeries under key id
# 6 claiming epoch 1, epoch 2 (a future one b has the key of), epoch 100
# (too far ahead), epoch 0 (never valid) and counter 0.  None may move
# b's window of epochs: real traffic passes after them.
replays_and_forgeries()
{
	local cap=$TMPDIR/epoch.pcap

	keys tun-a tun-b 6 aes256 || return
	in_b timeout "$(secs 20)" tcpdump -nni veth-b -c 3 -w "$cap" \
		"udp dst port $PORT_B and udp[8] = 0x4e" \
		>"$TMPDIR/tcpdump.log" 2>&1 &
	echo $! >"$TMPDIR/tcpdump.pid"
	log_wait "$TMPDIR/tcpdump.log" 'listening on' || true
	in_a ping -q -c 3 -i 0.2 -W 2 5.5.8.2
	wait "$(cat "$TMPDIR/tcpdump.pid")"
	inject_dropped 3 1 pcap "$cap"
	inject_dropped 1 1 epoch 1 6 1 1000 64
	inject_dropped 1 1 epoch 1 6 2 1 64
	inject_dropped 1 1 epoch 1 6 100 1 64
	inject_dropped 1 1 epoch 1 6 0 1 64
	inject_dropped 1 1 epoch 1 6 1 0 64
	pings_counted tun-a tun-b 5.5.8.2
}

setup_tcp()
{
	tcp_p2p "$NA" tun-ta 5.5.9.1 10.10.8.1 "$NB" tun-tb 5.5.9.2 10.10.8.2 \
		$PORT_TCP
}

tcp_aes_gcm()
{
	keys tun-ta tun-tb 1 aes256 &&
		pings_counted tun-ta tun-tb 5.5.9.2
}

tcp_chacha20_poly1305()
{
	keys tun-ta tun-tb 2 chachapoly &&
		pings_counted tun-ta tun-tb 5.5.9.2
}

ovpn_require

ktap_plan 11
run_test setup setup_topology
run_test udp_aes_gcm udp_aes_gcm
run_test udp_aes128_gcm udp_aes128_gcm
run_test udp_chacha20_poly1305 udp_chacha20_poly1305
run_test formats_apart formats_apart
run_test half_epoch_key half_epoch_key
run_test replays_and_forgeries replays_and_forgeries
run_test setup_tcp setup_tcp
run_test tcp_aes_gcm tcp_aes_gcm
run_test tcp_chacha20_poly1305 tcp_chacha20_poly1305
run_test teardown ns_teardown
ktap_finish
