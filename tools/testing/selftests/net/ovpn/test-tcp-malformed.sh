#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed and hostile TCP streams sent to an MP server, each on the
# connection of a peer of its own: a stream that cannot be OpenVPN's
# removes its peer for a transport error, one cut short by its sender for
# a disconnect; control records and data that fails authentication keep
# the peer.  A real client of the same device is not disturbed.
#
#   ns srv: tun0 (MP, 5.5.5.1), tcp_listen on port 1194
#     veth1 10.10.1.1/24, fd00:1::1/64 == ns inj: eth0 10.10.1.2 (primary)
#       and more, fd00:1::2 and fd00:1::16: the injectors, no ovpn device
#     veth2 10.10.2.1/24 == ns cli: eth0 10.10.2.2, tun1 (P2P, 5.5.5.2)
#
#   injector peers of the server: N = 1 to 9, from 10.10.1.(10+N), but 6
#   from fd00:1::16 and 7 from 10.10.1.2; VPN address 5.5.5.(10+N), no
#   key.  The client is peer 20 (tx_id 30) for the server, the server
#   peer 30 (tx_id 20) for the client.

source "$(dirname "$0")/lib.sh"

SRV=ovpn-tmsrv-$$
INJ=ovpn-tminj-$$
CLI=ovpn-tmcli-$$
INJECT=$OVPN_DIR/tcp-inject.py
PORT=1194
# How long an injector waits for a close: longer than any test, which
# ends it first.
INJ_WAIT=300
ovpn_workdir

# inj_src N: where injector peer N connects from.
inj_src()
{
	case $1 in
	6) echo fd00:1::16 ;;
	7) echo 10.10.1.2 ;;
	*) echo "10.10.1.$((10 + $1))" ;;
	esac
}

setup_topology()
{
	local n peers=$TMPDIR/peers

	ns_add "$SRV"
	ns_add "$INJ"
	ns_add "$CLI"
	veth_pair "$SRV" veth1 10.10.1.1 "$INJ" eth0 10.10.1.2
	link_up "$SRV" veth1 fd00:1::1
	link_up "$INJ" eth0 fd00:1::2 fd00:1::16
	veth_pair "$SRV" veth2 10.10.2.1 "$CLI" eth0 10.10.2.2

	: >"$peers"
	for n in 1 2 3 4 5 6 7 8 9; do
		case $(inj_src "$n") in
		10.10.1.2|*:*) ;;
		*) ip -n "$INJ" addr add "$(inj_src "$n")/24" dev eth0 ;;
		esac
		# peer_id raddr vpn4 vpn6
		echo "$n $(inj_src "$n") 5.5.5.$((10 + n)) -" >>"$peers"
	done
	echo "20 10.10.2.2 5.5.5.2 - 30" >>"$peers"

	in_srv "$OVPN_CLI" new_iface tun0 mp
	in_cli "$OVPN_CLI" new_iface tun1
	start_tracked "$TMPDIR/srv.log" ip netns exec "$SRV" "$OVPN_CLI" \
		tcp_listen tun0 "$PORT" "$peers" stay
	start_tracked "$TMPDIR/cli.log" ip netns exec "$CLI" "$OVPN_CLI" \
		new_tcp_peer tun1 30 10.10.2.1 "$PORT" tx_id 20 stay
	log_wait "$TMPDIR/srv.log" '^PEER 20$'
	key_pair "$SRV" tun0 20 "$CLI" tun1 30 primary 1 aes256
	ipv4_tunnel_up tun0 5.5.5.1 tun1 5.5.5.2
}

# inject LOG N MODE: tcp-inject.py's MODE as injector peer N, in the
# background; the server adds the peer on its connection.
inject()
{
	local src dst=10.10.1.1

	src=$(inj_src "$2")
	case $src in
	*:*) dst=fd00:1::1 ;;
	esac
	bg_start "$1" ip netns exec "$INJ" python3 "$INJECT" --src "$src" \
		--wait "$INJ_WAIT" "$dst" "$PORT" "$3"
	log_wait "$TMPDIR/srv.log" "^PEER $2\$"
}

# broken_stream N MODE: the stream of MODE is none of OpenVPN's: peer N
# goes for a transport error.  The connection is userspace's again then
# (the kernel closes nothing); the test ends the injector.
broken_stream()
{
	local log=$TMPDIR/inject-$1

	ntf_listen "$log.ntf" 1 in_srv
	inject "$log" "$1" "$2"
	ntf_expect "$log.ntf" "^ntf peer_del .* id=$1 reason=transport_error"
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 "$1"
	bg_stop "$log"
}

# Record lengths that cannot hold an opcode: 0, 1, 3 bytes.
zero_length_record() { broken_stream 1 len0; }
one_byte_record() { broken_stream 2 len1; }
short_record() { broken_stream 3 short; }

# A length no data packet can have.
oversized_record() { broken_stream 4 huge; }

# DATA_V1 is neither offloaded nor userspace's, over IPv4 and IPv6.
data_v1_record() { broken_stream 5 datav1; }
data_v1_record_ipv6() { broken_stream 6 datav1; }

# Half a record, then the end of the stream: a disconnect.  Written here
# rather than by tcp-inject.py, which closes at once: the connection must
# still be established when the server adds the peer, so the stream
# starts only once the server says it did (PEER 7).  The injector's
# address 10.10.1.2 is the source bash's /dev/tcp gets.
truncated_record()
{
	local log=$TMPDIR/truncated

	ntf_listen "$log.ntf" 1 in_srv
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$INJ" bash -c '
		set -e
		source "$1/lib.sh"
		exec 3<>"/dev/tcp/10.10.1.1/$2"
		log_wait "$3" "^PEER 7\$"
		# 100 bytes announced, a DATA_V2 opcode and 49 more sent
		printf "\x00\x64\x48" >&3
		head -c 49 /dev/zero >&3
		exec 3>&-' - "$OVPN_DIR" "$PORT" "$TMPDIR/srv.log"
	ntf_expect "$log.ntf" \
		'^ntf peer_del .* id=7 reason=transport_disconnect'
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 7
}

# ntf_hangup LOG N: the injector of LOG hangs up: peer N goes for a
# disconnect, which the listener of LOG.ntf saw.
ntf_hangup()
{
	bg_stop "$1"
	ntf_expect "$1.ntf" "^ntf peer_del .* id=$2 reason=transport_disconnect"
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 "$2"
}

# A control record goes to the server's userspace whole; the peer stays.
control_record_kept()
{
	local log=$TMPDIR/inject-8

	ntf_listen "$log.ntf" 1 in_srv
	inject "$log" 8 ctrl
	log_wait "$TMPDIR/srv.log" \
		'^CTRL 8 16 000e3811111111111111111111111111$'
	in_srv "$OVPN_CLI" get_peer tun0 8 | grep -q ' id=8 ' ||
		fail "peer 8 is gone"
	ntf_hangup "$log" 8
}

rx_dropped() { link_dropped "$SRV" tun0 rx; }

rx_dropped_is() { [ "$(rx_dropped)" = "$1" ]; }

# A data record that cannot be decrypted (peer 9 has no key) is dropped
# and counted; nothing reaches the stack, and the peer stays.
garbage_data_dropped()
{
	local log=$TMPDIR/inject-9 drop

	drop=$(rx_dropped)
	ntf_listen "$log.ntf" 1 in_srv
	inject "$log" 9 garbage-data
	wait_until rx_dropped_is $((drop + 1)) ||
		fail "rx_dropped: $drop before, $(rx_dropped) now"
	expect_eq "packets delivered for peer 9" 0 \
		"$(peer_stat "$SRV" tun0 9 vpn_rx_packets)"
	ntf_hangup "$log" 9
}

# Every injector peer is gone, the client's is the one left, and it
# still talks both ways.
client_undisturbed()
{
	local out

	out=$(in_srv "$OVPN_CLI" get_peer tun0)
	echo "$out"
	expect_eq "peers of the server" 1 "$(grep -c '^peer ' <<<"$out")"
	grep -q ' id=20 ' <<<"$out" || fail "the client's peer is gone"
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	in_srv ping -q -c 3 -i 0.2 -W 2 5.5.5.2
	expect_eq "records the client got" 0 \
		"$(grep -c '^CTRL' "$TMPDIR/cli.log")"
}

# A peer floods the server's userspace with 60,000-byte control records
# that it does not read (tcp-control.py): they are charged to the socket
# and bounded by its receive buffer, the sender blocks, and once read
# every record arrives intact and in order; none is dropped.
control_flood_bounded()
{
	local out drop

	drop=$(rx_dropped)
	out=$(in_srv python3 "$OVPN_DIR/tcp-control.py" tun0 10 5.5.5.30 \
		"$OVPN_SLOW" flood) || { echo "$out"; return 1; }
	echo "$out"
	ktap_note "$(sed -n 's/^# //p' <<<"$out")"
	expect_eq "checks passed" 5 "$(grep -c '^ok ' <<<"$out")"
	expect_eq "rx_dropped growth" 0 $(($(rx_dropped) - drop))
}

ovpn_require

ktap_plan 13
run_test setup setup_topology
run_test zero_length_record zero_length_record
run_test one_byte_record one_byte_record
run_test short_record short_record
run_test oversized_record oversized_record
run_test data_v1_record data_v1_record
run_test data_v1_record_ipv6 data_v1_record_ipv6
run_test truncated_record truncated_record
run_test control_record_kept control_record_kept
run_test garbage_data_dropped garbage_data_dropped
run_test client_undisturbed client_undisturbed
run_noted control_flood_bounded control_flood_bounded
run_test module_unloads module_unloads
ktap_finish
