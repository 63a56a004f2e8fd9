#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed and hostile UDP datagrams sent to an MP server: each one is
# dropped and counted in the device's rx_dropped, none reaches the stack,
# and real traffic keeps flowing.  Control packets (any opcode but data)
# go through to the userspace socket untouched.
#
#   ns srv: tun0 (MP, 5.5.5.1)  veth 10.10.1.1 == 10.10.1.2  ns cli: tun1
#                                                            (P2P, 5.5.5.2)
#   the client is peer 1 for the server (key id 1); the server is peer 11
#   for the client.

source "$(dirname "$0")/lib.sh"

SRV=ovpn-msrv-$$
CLI=ovpn-mcli-$$
KEY=$OVPN_DIR/key.hex
INJECT=$OVPN_DIR/udp-inject.py
N=5
ovpn_workdir

setup_topology()
{
	ns_add "$SRV"
	ns_add "$CLI"
	veth_pair "$SRV" veth1 10.10.1.1 "$CLI" eth0 10.10.1.2

	echo "1 10.10.1.2 2001 5.5.5.2 - 11" >"$TMPDIR/peers"
	in_srv "$OVPN_CLI" new_iface tun0 mp
	in_cli "$OVPN_CLI" new_iface tun1
	start_ready "$TMPDIR/srv.log" in_srv "$OVPN_CLI" new_multi_peer tun0 \
		1194 "$TMPDIR/peers" stay
	start_ready "$TMPDIR/cli.log" in_cli "$OVPN_CLI" new_peer tun1 11 \
		2001 10.10.1.1 1194 tx_id 1 stay
	in_srv "$OVPN_CLI" new_key tun0 1 primary 1 aes256 0 "$KEY"
	in_cli "$OVPN_CLI" new_key tun1 11 primary 1 aes256 1 "$KEY"
	ipv4_tunnel_up tun0 5.5.5.1 tun1 5.5.5.2
}

rx_dropped()
{
	in_srv ip -s -j link show dev tun0 | jq '.[0].stats64.rx.dropped'
}

vpn_rx()
{
	in_srv "$OVPN_CLI" get_peer tun0 1 |
		sed -n 's/.* vpn_rx_packets=\([0-9]*\).*/\1/p'
}

# inject ARGS...: send $N copies of a datagram from the client's netns and
# check that exactly $N more packets were dropped, none delivered.
inject()
{
	local drop0 drop1 rx0 rx1

	drop0=$(rx_dropped)
	rx0=$(vpn_rx)
	in_cli python3 "$INJECT" 10.10.1.1 1194 "$N" "$@"
	# Dropping happens in softirq: let it settle before counting.
	sleep 0.5
	drop1=$(rx_dropped)
	rx1=$(vpn_rx)
	expect_eq "rx_dropped delta for $*" "$N" "$((drop1 - drop0))"
	expect_eq "packets delivered for $*" 0 "$((rx1 - rx0))"
}

too_short()
{
	inject hex 48
	inject hex 480000
}

data_v1()
{
	# Opcode 6: never offloaded, never passed to userspace either.
	inject hex 3100000102030405060708
}

unknown_peer_id()
{
	inject data 0x99 1 1 64
}

unknown_key_id()
{
	inject data 1 5 1 64
}

bad_tag()
{
	inject data 1 1 1000 64
}

no_ciphertext()
{
	inject data 1 1 1001 0
}

replayed_packet()
{
	local cap=$TMPDIR/cap.pcap drop0 drop1

	in_srv timeout "$(secs 20)" tcpdump -nni veth1 -c 3 -w "$cap" \
		"udp dst port 1194 and udp[8] = 0x49" \
		>"$TMPDIR/tcpdump.log" 2>&1 &
	echo $! >"$TMPDIR/tcpdump.pid"
	log_wait "$TMPDIR/tcpdump.log" 'listening on' || true
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	wait "$(cat "$TMPDIR/tcpdump.pid")"
	# Three genuine packets, already accepted once: each replay is refused.
	drop0=$(rx_dropped)
	in_cli python3 "$INJECT" 10.10.1.1 1194 1 pcap "$cap"
	sleep 0.5
	drop1=$(rx_dropped)
	expect_eq "replayed packets dropped" 3 "$((drop1 - drop0))"
}

control_goes_to_userspace()
{
	# P_CONTROL_V1 (opcode 4) with a few bytes of payload.
	in_cli python3 "$INJECT" 10.10.1.1 1194 1 hex 2011223344556677
	wait_for 2 log_has "$TMPDIR/srv.log" '^CTRL 8 2011223344556677' &&
		return 0
	cat "$TMPDIR/srv.log"
	fail "the control packet did not reach the server's socket"
}

traffic_still_flows()
{
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.5.1
}

# Everything above came from another source port; only an authentic, new
# packet may move the peer.
no_float_from_forgeries()
{
	in_srv "$OVPN_CLI" get_peer tun0 1 |
		grep -q ' remote=10.10.1.2:2001 ' ||
		fail "the peer floated to a forger"
}

ovpn_require

ktap_plan 11
run_test setup setup_topology
run_test too_short too_short
run_test data_v1 data_v1
run_test unknown_peer_id unknown_peer_id
run_test unknown_key_id unknown_key_id
run_test bad_tag bad_tag
run_test no_ciphertext no_ciphertext
run_test replayed_packet replayed_packet
run_test control_goes_to_userspace control_goes_to_userspace
run_test traffic_still_flows traffic_still_flows
run_test no_float_from_forgeries no_float_from_forgeries
ktap_finish
