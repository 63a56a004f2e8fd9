#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data channel over UDP: an MP server and P2P clients exchanging
# traffic through ovpn devices, over IPv4 and IPv6 transports.
#
#                       +-- veth 10.10.1.1/24 == 10.10.1.2 -- ns c1: tun1 (P2P)
#   ns srv: tun0 (MP) --+-- veth 10.10.2.1/24 == 10.10.2.2 -- ns c2: tun2 (P2P)
#   one UDP socket :1194+-- veth fd00:3::1/64 == fd00:3::2 -- ns c3: tun3 (P2P)
#                       +-- veth fd00:4::1/64 == fd00:4::2 -- ns c4: tun4 (P2P)
#
#   VPN: server 5.5.5.1, client N 5.5.5.(N+1); fd00:5::1, fd00:5::(N+1)
#   peer ids: server knows client N as N; clients send with tx_id N and
#   expect the server to send them id 10+N (asymmetric ids).

source "$(dirname "$0")/lib.sh"

ALG=${OVPN_ALG:-aes256}
KEY=$OVPN_DIR/key.hex
SRV=ovpn-srv-$$
CLIENTS="1 2 3 4"
SRV_PORT=1194
ovpn_workdir

client_transport() { star_transport "$1" "3 4"; }

setup_topology()
{
	local c peers=$TMPDIR/peers.txt
	local caddr saddr

	star_links "3 4" $CLIENTS
	in_srv "$OVPN_CLI" new_iface tun0 mp
	: >"$peers"
	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		# peer_id raddr rport vpn4 vpn6 tx_id
		echo "$c $caddr $((2000 + c)) 5.5.5.$((c + 1))" \
			"fd00:5::$((c + 1)) $((10 + c))" >>"$peers"
	done

	start_ready "$TMPDIR/srv.log" in_srv "$OVPN_CLI" new_multi_peer tun0 \
		"$SRV_PORT" "$peers" stay
	link_up "$SRV" tun0 5.5.5.1 fd00:5::1

	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		in_c "$c" "$OVPN_CLI" new_iface "tun$c"
		start_ready "$TMPDIR/c$c.log" in_c "$c" "$OVPN_CLI" new_peer \
			"tun$c" $((10 + c)) $((2000 + c)) "$saddr" "$SRV_PORT" \
			tx_id "$c" stay
		link_up "$(client_ns "$c")" "tun$c" "5.5.5.$((c + 1))" \
			"fd00:5::$((c + 1))"
	done
}

install_keys()
{
	local c

	for c in $CLIENTS; do
		in_srv "$OVPN_CLI" new_key tun0 "$c" primary 1 "$ALG" 0 "$KEY"
		in_c "$c" "$OVPN_CLI" new_key "tun$c" $((10 + c)) primary 1 \
			"$ALG" 1 "$KEY"
	done
}

ping_ipv4()
{
	local c

	for c in $CLIENTS; do
		in_c "$c" ping -q -c 3 -i 0.2 -W 2 5.5.5.1
		in_srv ping -q -c 3 -i 0.2 -W 2 "5.5.5.$((c + 1))"
	done
}

ping_ipv6()
{
	local c

	for c in $CLIENTS; do
		in_c "$c" ping -6 -q -c 3 -i 0.2 -W 2 fd00:5::1
	done
}

ping_large()
{
	local c

	# Floods of 3000-byte inner packets, larger than the MTU: fragmented
	# before encryption.  Every reply must arrive.
	for c in $CLIENTS; do
		in_c "$c" ping -q "$(burst)" -c 50 -w "$(secs 30)" -s 3000 \
			5.5.5.1
	done
}

peer_field()
{
	sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

# counters_grew BEFORE AFTER N VPN_BYTES: between two lines of a peer's
# counters (PEER_GET, or a notification carrying them), N packets went
# each way, of VPN_BYTES each (24 more on the link), and nothing else.
counters_grew()
{
	local before=$1 after=$2 n=$3 b=$4 f

	for f in vpn_rx_packets vpn_tx_packets \
		 link_rx_packets link_tx_packets; do
		expect_eq "$f delta" "$n" \
			"$(peer_delta $f "$before" "$after")" || return
	done
	for f in vpn_rx_bytes vpn_tx_bytes; do
		expect_eq "$f delta" $((n * b)) \
			"$(peer_delta $f "$before" "$after")" || return
	done
	for f in link_rx_bytes link_tx_bytes; do
		expect_eq "$f delta" $((n * (b + 24))) \
			"$(peer_delta $f "$before" "$after")" || return
	done
}

# exact_counters C DST: client C pings DST through the tunnel.  The peer
# and the device count each packet once: the device's TX counters, like
# the peer's vpn_tx ones, by the plaintext length, whatever the transport.
exact_counters()
{
	local c=$1 dst=$2 before after n=5 txp txb

	before=$(in_c "$c" "$OVPN_CLI" get_peer "tun$c" $((10 + c)))
	txp=$(link_stat "$(client_ns "$c")" "tun$c" tx packets)
	txb=$(link_stat "$(client_ns "$c")" "tun$c" tx bytes)
	in_c "$c" ping -q -c $n -i 0.2 -W 2 -s 100 "$dst"
	after=$(in_c "$c" "$OVPN_CLI" get_peer "tun$c" $((10 + c)))
	echo "before: $before"
	echo "after:  $after"
	# 100 bytes of ICMP payload + 8 ICMP + 20 IP, both ways.
	counters_grew "$before" "$after" $n 128
	expect_eq "device tx_packets delta" $n \
		$(($(link_stat "$(client_ns "$c")" "tun$c" tx packets) - txp))
	expect_eq "device tx_bytes delta" $((n * 128)) \
		$(($(link_stat "$(client_ns "$c")" "tun$c" tx bytes) - txb))
}

dump_lists_all_peers()
{
	local out

	out=$(in_srv "$OVPN_CLI" get_peer tun0)
	echo "$out"
	expect_eq "peers in dump" 4 "$(grep -c '^peer ' <<<"$out")"
	grep -q ' id=3 .*remote=\[fd00:3::2\]:2003' <<<"$out" ||
		fail "IPv6 peer not reported with its endpoint"
	grep -q ' id=1 tx_id=11 ' <<<"$out" || fail "tx_id of peer 1"
}

missing_peer_is_enoent()
{
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 99
	expect_err ENOENT in_srv "$OVPN_CLI" del_peer tun0 99
}

# A LAN behind client 1, routed by the server with client 1's VPN address
# as gateway (an openvpn "iroute").
lan_behind_client()
{
	in_c 1 ip addr add 11.11.11.11/32 dev lo
	in_srv ip route add 11.11.11.0/24 via 5.5.5.2 dev tun0
	in_srv ping -q -c 3 -i 0.2 -W 2 11.11.11.11
	# Client 2 may not use client 1's LAN as its source: reverse path.
	! in_c 2 ping -q -c 2 -W 1 -I 11.11.11.11 5.5.5.1 2>/dev/null ||
		fail "spoofed source accepted"
}

# Start a capture of one UDP packet whose first payload word is $3.
capture_start()
{
	local c=$1 log=$2 word=$3

	in_c "$c" timeout "$(secs 20)" tcpdump -nni eth0 -c 1 \
		"udp and udp[8:4] = $word" >"$log" 2>&1 &
	echo $! >"$log.pid"
	log_wait "$log" 'listening on'
}

capture_wait()
{
	local log=$1

	wait "$(cat "$log.pid")" 2>/dev/null
	cat "$log"
	grep -q '1 packet captured' "$log"
}

# DATA_V2 is opcode 9, so the first byte is 0x48 | key id; the server
# writes the tx id it was given for the client (10 + N), the client its own
# tx id (N).
wire_format()
{
	local log=$TMPDIR/cap

	capture_start 1 "$log.out" 0x49000001
	capture_start 1 "$log.in" 0x4900000b
	in_c 1 ping -q -c 2 -i 0.2 -W 2 5.5.5.1
	capture_wait "$log.out" || fail "client 1 did not send 49 00 00 01"
	capture_wait "$log.in" || fail "server did not send 49 00 00 0b"
}

key_get()
{
	"$@" | sed -n 's/.* key_id=\([0-9]*\).*/\1/p'
}

# New key (id 2) on both ends as secondary; only the client swaps.  The
# server decrypts by key id with its secondary slot; the client keeps
# decrypting the server's old key with its own secondary slot.
key_rollover()
{
	in_srv "$OVPN_CLI" new_key tun0 1 secondary 2 "$ALG" 0 "$KEY"
	in_c 1 "$OVPN_CLI" new_key tun1 11 secondary 2 "$ALG" 1 "$KEY"
	in_c 1 "$OVPN_CLI" swap_keys tun1 11
	expect_eq "client primary key" 2 \
		"$(key_get in_c 1 "$OVPN_CLI" get_key tun1 11 primary)"
	expect_eq "client secondary key" 1 \
		"$(key_get in_c 1 "$OVPN_CLI" get_key tun1 11 secondary)"
	in_c 1 ping -q -c 3 -i 0.2 -W 2 5.5.5.1

	# Without the old key the client cannot read the server any more...
	in_c 1 "$OVPN_CLI" del_key tun1 11 secondary
	expect_err ENOENT in_c 1 "$OVPN_CLI" get_key tun1 11 secondary
	! in_c 1 ping -q -c 2 -W 1 5.5.5.1 || fail "old key still accepted"
	# ...until the server swaps too.
	in_srv "$OVPN_CLI" swap_keys tun0 1
	in_c 1 ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	# Deleting an empty slot is not an error.
	in_c 1 "$OVPN_CLI" del_key tun1 11 secondary
}

# Client 1 moves to a new address; the server follows it and says so.
float_peer()
{
	local log=$TMPDIR/float.log

	ntf_listen "$log" 1 in_srv
	# Keep the new address when the old, primary one goes.
	in_c 1 sysctl -qw net.ipv4.conf.eth0.promote_secondaries=1
	in_c 1 ip addr add 10.10.1.3/24 dev eth0
	in_c 1 ip addr del 10.10.1.2/24 dev eth0
	in_c 1 ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	ntf_wait "$log" '^ntf peer_float .* id=1 remote=10.10.1.3:2001' ||
		fail "no float notification for peer 1"
	in_srv "$OVPN_CLI" get_peer tun0 1 | grep -q 'remote=10.10.1.3:2001' ||
		fail "server still sends to the old address"
	in_srv ping -q -c 2 -i 0.2 -W 2 5.5.5.2
}

# The notification carries the peer's final counters: the daemon's
# PEER_GET after it would find no peer.
delete_peer_notifies()
{
	local log=$TMPDIR/ntf.log before n=3

	before=$(in_srv "$OVPN_CLI" get_peer tun0 2)
	in_c 2 ping -q -c $n -i 0.2 -W 2 -s 100 5.5.5.1
	ntf_listen "$log" 1 in_srv
	in_srv "$OVPN_CLI" del_peer tun0 2
	ntf_wait "$log" '^ntf peer_del .* id=2 reason=userspace' ||
		fail "no userspace peer_del notification for peer 2" || return
	counters_grew "$before" "$(grep ' id=2 ' "$log")" $n 128 || return
	! in_c 2 ping -q -c 1 -W 1 5.5.5.1 ||
		fail "deleted peer still reachable"
	in_c 1 ping -q -c 1 -W 2 5.5.5.1
}

# Delete the server's side of client 1 under a flood of pings.
delete_under_traffic()
{
	in_c 1 ping -q -f -w 6 5.5.5.1 >/dev/null 2>&1 &
	sleep 1
	in_srv "$OVPN_CLI" del_peer tun0 1
	wait $! || true
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 1
}

# The server sends keepalives to client 3 every second and expires it
# after 6 s of silence.  Client 3 receives them as link traffic only: a
# keepalive is consumed, never delivered.  6 s, not 3: under emulation
# on a loaded host the scan that should send the second keepalive can run
# late enough to find the peer expired instead.
keepalive_expiry_mp()
{
	local log=$TMPDIR/ka-mp.log before after

	before=$(in_c 3 "$OVPN_CLI" get_peer tun3 13)
	ntf_listen "$log" 1 in_srv
	in_srv "$OVPN_CLI" set_peer tun0 3 keepalive 1 6
	ntf_wait "$log" '^ntf peer_del .* id=3 reason=expired' ||
		fail "no expiry notification for peer 3"
	after=$(in_c 3 "$OVPN_CLI" get_peer tun3 13)
	echo "client 3 before: $before"
	echo "client 3 after:  $after"
	[ $(($(peer_field link_rx_packets <<<"$after") - \
	     $(peer_field link_rx_packets <<<"$before"))) -ge 2 ] ||
		fail "client 3 got fewer than 2 keepalives"
	expect_eq "keepalives delivered to the stack" \
		"$(peer_field vpn_rx_packets <<<"$before")" \
		"$(peer_field vpn_rx_packets <<<"$after")"
}

# Client 1 lost its server (deleted above): its own peer expires.
keepalive_expiry_p2p()
{
	local log=$TMPDIR/ka-p2p.log

	ntf_listen "$log" 1 in_c 1
	in_c 1 "$OVPN_CLI" set_peer tun1 11 keepalive 1 2
	ntf_wait "$log" '^ntf peer_del .* id=11 reason=expired' ||
		fail "no expiry notification for client 1's peer"
	expect_eq "carrier after expiry" 0 \
		"$(in_c 1 cat /sys/class/net/tun1/carrier)"
}

# Closing a socket removes its 1,000 peers at once, each notified with
# its final counters.  Peer 1001 sends pings that nobody answers: they
# are routed to client 1, which drops them.
mass_close_counts()
{
	local log=$TMPDIR/mass.log peers=$TMPDIR/mass.peers before ntf n=3

	# peer_id raddr rport vpn4 vpn6
	awk 'BEGIN { for (i = 1; i <= 1000; i++)
		printf "%d 10.31.%d.%d 1194 100.101.%d.%d -\n", 1000 + i,
		       int(i / 256), i % 256, int(i / 256), i % 256 }' >"$peers"
	in_srv ip route add 10.31.0.0/16 via 10.10.1.2
	in_srv "$OVPN_CLI" new_iface tun7 mp
	start_tracked "$TMPDIR/mass-srv.log" ip netns exec "$SRV" \
		"$OVPN_CLI" new_multi_peer tun7 1199 "$peers" stay || return
	in_srv ip addr add 100.101.255.254/16 dev tun7
	in_srv ip link set tun7 up
	in_srv "$OVPN_CLI" new_key tun7 1001 primary 1 aes128 0 "$KEY"
	in_srv ping -q -c 1 -W 1 100.101.0.1 >/dev/null || true
	before=$(in_srv "$OVPN_CLI" get_peer tun7 1001)
	in_srv ping -q -c $n -i 0.2 -W 1 100.101.0.1 >/dev/null || true
	ntf_listen "$log" 1000 in_srv || return
	bg_stop "$TMPDIR/mass-srv.log"
	wait "$(cat "$log.pid")"
	ntf='^ntf peer_del .* reason=transport_disconnect .* link_tx_packets='
	expect_eq "notifications with counters" 1000 \
		"$(grep -c "$ntf" "$log")" || return
	ntf=$(grep '^ntf peer_del .* id=1001 ' "$log")
	echo "before: $before"
	echo "ntf:    $ntf"
	# 56 bytes of ICMP payload + 8 ICMP + 20 IP, 24 bytes of overhead
	expect_eq "vpn_tx_packets since the last get" $n \
		"$(peer_delta vpn_tx_packets "$before" "$ntf")" || return
	expect_eq "link_tx_packets since the last get" $n \
		"$(peer_delta link_tx_packets "$before" "$ntf")" || return
	expect_eq "vpn_tx_bytes since the last get" $((n * 84)) \
		"$(peer_delta vpn_tx_bytes "$before" "$ntf")" || return
	expect_eq "link_tx_bytes since the last get" $((n * 108)) \
		"$(peer_delta link_tx_bytes "$before" "$ntf")" || return
	expect_eq "vpn_rx_packets" 0 "$(peer_val vpn_rx_packets "$ntf")" ||
		return
	in_srv ip link del tun7
}

ovpn_require

ktap_plan 18
run_test setup_topology setup_topology
run_test install_keys install_keys
run_test ping_ipv4 ping_ipv4
run_test ping_ipv6 ping_ipv6
run_test ping_large ping_large
run_test exact_counters_ipv4_transport exact_counters 1 5.5.5.1
run_test exact_counters_ipv6_transport exact_counters 3 5.5.5.1
run_test dump_lists_all_peers dump_lists_all_peers
run_test lan_behind_client lan_behind_client
run_test wire_format wire_format
run_test key_rollover key_rollover
run_test float_peer float_peer
run_test missing_peer_is_enoent missing_peer_is_enoent
run_test delete_peer_notifies delete_peer_notifies
run_test delete_under_traffic delete_under_traffic
run_test keepalive_expiry_mp keepalive_expiry_mp
run_test keepalive_expiry_p2p keepalive_expiry_p2p
run_test mass_close_counts mass_close_counts
ktap_finish
