#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data channel over TCP: an MP server accepts the connections of four
# P2P clients, two over IPv4 and two over IPv6, and adds each client as a
# peer on its own connection.  Data records stay in the kernel at both
# ends; control records pass between the two userspaces intact.
#
#                       +-- veth 10.10.1.1/24 == 10.10.1.2 -- ns c1: tun1 (P2P)
#   ns srv: tun0 (MP) --+-- veth 10.10.2.1/24 == 10.10.2.2 -- ns c2: tun2 (P2P)
#   tcp_listen :1194    +-- veth fd00:3::1/64 == fd00:3::2 -- ns c3: tun3 (P2P)
#                       +-- veth fd00:4::1/64 == fd00:4::2 -- ns c4: tun4 (P2P)
#
#   VPN: server 5.5.5.1, client N 5.5.5.(N+1); fd00:5::1, fd00:5::(N+1)
#   peer ids: the server knows client N as N and sends it id 10+N; client N
#   knows the server as 10+N and sends it id N (asymmetric ids).  Client 4
#   uses ChaCha20-Poly1305, the others $OVPN_ALG (AES-256-GCM).
#   Each end sends the other one control record once its peer is added.
#   Spare peers 21 and 22 of the server: connections from 10.10.1.3 and
#   10.10.1.4 (in c1) that tcp-inject.py makes.

source "$(dirname "$0")/lib.sh"

ALG=${OVPN_ALG:-aes256}
INJECT=$OVPN_DIR/tcp-inject.py
SRV=ovpn-tsrv-$$
CLIENTS="1 2 3 4"
SRV_PORT=1194
# P_CONTROL_HARD_RESET_SERVER_V2 and _CLIENT_V2 (opcodes 8 and 7, key 0),
# then a few bytes that say who sent them.
SRV_CTRL=40a1a2a3a4a5a6a7
# The record tcp-inject.py sends in modes ctrl, many and split, as shown.
INJ_REC="16 000e3811111111111111111111111111"
# How long an injector waits for a close that must not come: the test
# ends it first.
INJ_WAIT=300
ovpn_workdir



client_transport() { star_transport "$1" "3 4"; }

# vpn_addr 4|6 N: the VPN address of the server (0) or of client N.
vpn_addr()
{
	if [ "$1" = 4 ]; then
		echo "5.5.5.$(($2 + 1))"
	else
		echo "fd00:5::$(($2 + 1))"
	fi
}

client_alg()
{
	if [ "$1" = 4 ]; then
		echo chachapoly
	else
		echo "$ALG"
	fi
}

client_ctrl() { echo "38b1b2b3b4b5b60$1"; }

# record_shown HEX: how a CTRL line shows the control record of payload
# HEX: its length with the 2-byte prefix, then its bytes, prefix first.
record_shown()
{
	local n=$((${#1} / 2))

	printf '%d %04x%s\n' $((n + 2)) "$n" "$1"
}

setup_topology()
{
	local c s caddr saddr peers=$TMPDIR/peers

	star_links "3 4" $CLIENTS
	# Client to client goes through the server's stack, with no ICMP
	# redirect (a VPN packet too) for the clients.
	in_srv sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.send_redirects=0 \
		net.ipv4.conf.default.send_redirects=0
	in_srv "$OVPN_CLI" new_iface tun0 mp
	: >"$peers"
	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		# peer_id raddr vpn4 vpn6 tx_id
		echo "$c $caddr $(vpn_addr 4 "$c") $(vpn_addr 6 "$c")" \
			"$((10 + c))" >>"$peers"
	done
	for s in 3 4; do
		in_c 1 ip addr add "10.10.1.$s/24" dev eth0
		echo "$((18 + s)) 10.10.1.$s 5.5.5.$((18 + s)) -" >>"$peers"
	done

	start_tracked "$TMPDIR/srv.log" ip netns exec "$SRV" "$OVPN_CLI" \
		tcp_listen tun0 "$SRV_PORT" "$peers" ctrl "$SRV_CTRL" stay
	link_up "$SRV" tun0 5.5.5.1 fd00:5::1

	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		in_c "$c" "$OVPN_CLI" new_iface "tun$c"
		start_tracked "$TMPDIR/c$c.log" ip netns exec \
			"$(client_ns "$c")" "$OVPN_CLI" new_tcp_peer "tun$c" \
			$((10 + c)) "$saddr" "$SRV_PORT" tx_id "$c" \
			ctrl "$(client_ctrl "$c")" stay
		link_up "$(client_ns "$c")" "tun$c" "$(vpn_addr 4 "$c")" \
			"$(vpn_addr 6 "$c")"
	done
}

all_peers_connected()
{
	local c out

	for c in $CLIENTS; do
		log_wait "$TMPDIR/srv.log" "^PEER $c\$"
	done
	out=$(in_srv "$OVPN_CLI" get_peer tun0)
	echo "$out"
	expect_eq "peers of the server" 4 "$(grep -c '^peer ' <<<"$out")"
	for c in $CLIENTS; do
		grep -q " id=$c tx_id=$((10 + c)) " <<<"$out" ||
			fail "peer $c or its tx_id missing"
		grep -q " vpn4=5.5.5.$((c + 1)) vpn6=fd00:5::$((c + 1)) " \
			<<<"$out" || fail "VPN addresses of peer $c"
		in_c "$c" "$OVPN_CLI" get_peer "tun$c" $((10 + c)) |
			grep -q " id=$((10 + c)) tx_id=$c " ||
			fail "client $c: no peer $((10 + c)) with tx_id $c"
		expect_eq "carrier of client $c" 1 \
			"$(in_c "$c" cat "/sys/class/net/tun$c/carrier")"
	done
}

# key_of C SLOT KEY_ID: a key for the server and client C.
key_of()
{
	key_pair "$SRV" tun0 "$1" "$(client_ns "$1")" "tun$1" $((10 + $1)) \
		"$2" "$3" "$(client_alg "$1")"
}

install_keys()
{
	local c

	for c in $CLIENTS; do
		key_of "$c" primary 1
	done
}

# ping_each 4|6: each client pings the server, the server each client.
ping_each()
{
	local c

	for c in $CLIENTS; do
		in_c "$c" ping "-$1" -q -c 3 -i 0.2 -W 2 "$(vpn_addr "$1" 0)"
		in_srv ping "-$1" -q -c 3 -i 0.2 -W 2 "$(vpn_addr "$1" "$c")"
	done
}

ping_ipv4() { ping_each 4; }
ping_ipv6() { ping_each 6; }

# In on one peer of tun0, routed by the server, out on another: across
# transports of both families.
client_to_client()
{
	in_c 1 ping -q -c 3 -i 0.2 -W 2 5.5.5.3
	in_c 3 ping -6 -q -c 3 -i 0.2 -W 2 fd00:5::5
	in_c 4 ping -q -c 3 -i 0.2 -W 2 5.5.5.2
	in_c 2 ping -6 -q -c 3 -i 0.2 -W 2 fd00:5::4
}

# Floods: inner packets of the MTU exactly, and 3000-byte ones fragmented
# before encryption.  Every reply must arrive.
ping_large()
{
	local c mtu

	for c in $CLIENTS; do
		mtu=$(in_c "$c" cat "/sys/class/net/tun$c/mtu")
		in_c "$c" ping -q "$(burst)" -c 200 -w "$(secs 60)" -M "do" \
			-s $((mtu - 28)) 5.5.5.1
		in_c "$c" ping -q "$(burst)" -c 50 -w "$(secs 60)" -s 3000 \
			5.5.5.1
	done
	mtu=$(in_srv cat /sys/class/net/tun0/mtu)
	in_srv ping -6 -q "$(burst)" -c 200 -w "$(secs 60)" -M "do" \
		-s $((mtu - 48)) fd00:5::4
}

# Five pings of client 1, counted at both ends: the length prefix of a
# record is not part of OpenVPN's packet, so the link counters are those
# of UDP.  100 bytes of ICMP payload + 8 ICMP + 20 IP make 128 bytes
# inside; 24 bytes of overhead make 152 on the link.
exact_counters()
{
	local n=5 cb ca sb sa f want ctx stx

	cb=$(in_c 1 "$OVPN_CLI" get_peer tun1 11)
	sb=$(in_srv "$OVPN_CLI" get_peer tun0 1)
	ctx=$(link_stat "$(client_ns 1)" tun1 tx bytes)
	stx=$(link_stat "$SRV" tun0 tx bytes)
	in_c 1 ping -q -c "$n" -i 0.2 -W 2 -s 100 5.5.5.1
	ca=$(in_c 1 "$OVPN_CLI" get_peer tun1 11)
	sa=$(in_srv "$OVPN_CLI" get_peer tun0 1)
	# The devices count what they sent once, by the plaintext length.
	expect_eq "client device tx_bytes delta" $((n * 128)) \
		$(($(link_stat "$(client_ns 1)" tun1 tx bytes) - ctx))
	expect_eq "server device tx_bytes delta" $((n * 128)) \
		$(($(link_stat "$SRV" tun0 tx bytes) - stx))
	printf 'client before: %s\nclient after:  %s\n' "$cb" "$ca"
	printf 'server before: %s\nserver after:  %s\n' "$sb" "$sa"
	for f in vpn_tx_packets:1 vpn_rx_packets:1 link_tx_packets:1 \
		 link_rx_packets:1 vpn_tx_bytes:128 vpn_rx_bytes:128 \
		 link_tx_bytes:152 link_rx_bytes:152; do
		want=$((n * ${f#*:}))
		f=${f%:*}
		expect_eq "client $f delta" "$want" \
			"$(peer_delta "$f" "$cb" "$ca")"
		expect_eq "server $f delta" "$want" \
			"$(peer_delta "$f" "$sb" "$sa")"
	done
}

# capture LOG FILTER: one TCP segment of client 1's side matching FILTER.
capture()
{
	bg_start "$1" ip netns exec "$(client_ns 1)" timeout "$(secs 20)" \
		tcpdump -nni eth0 -c 1 "$2"
	log_wait "$1" 'listening on'
}

captured()
{
	wait "$(cat "$1.pid")" || true
	cat "$1"
	grep -q '^1 packet captured' "$1"
}

# A segment starts with a record here: its length (152 for a 128-byte
# ping) and DATA_V2, key 1, then the receiver's id as the sender was told
# it: client 1 writes 1, the server 11.
wire_format()
{
	local log=$TMPDIR/cap rec='tcp[((tcp[12] & 0xf0) >> 2):2] = 152'
	local op='tcp[((tcp[12] & 0xf0) >> 2) + 2:4]'

	capture "$log.out" \
		"tcp dst port $SRV_PORT and $rec and $op = 0x49000001"
	capture "$log.in" \
		"tcp src port $SRV_PORT and $rec and $op = 0x4900000b"
	in_c 1 ping -q -c 2 -i 0.2 -W 2 -s 100 5.5.5.1
	captured "$log.out" || fail "client 1 did not send 00 98 49 00 00 01"
	captured "$log.in" || fail "server did not send 00 98 49 00 00 0b"
}

# The control records both ends sent at the start, each received whole,
# prefix included, in one recv(); after all the traffic above, still the
# only records either userspace got: data never reaches it.
control_passthrough()
{
	local c srv_rec cli_rec

	srv_rec=$(record_shown "$SRV_CTRL")
	for c in $CLIENTS; do
		cli_rec=$(record_shown "$(client_ctrl "$c")")
		log_wait "$TMPDIR/c$c.log" "^CTRL $srv_rec\$"
		log_wait "$TMPDIR/srv.log" "^CTRL $c $cli_rec\$"
		expect_eq "records client $c got" 1 \
			"$(grep -c '^CTRL ' "$TMPDIR/c$c.log")"
		expect_eq "records the server got from client $c" 1 \
			"$(grep -c "^CTRL $c " "$TMPDIR/srv.log")"
	done
}

# inject_records MODE ID SRC COUNT: tcp-inject.py's MODE from SRC, spare
# peer ID of the server, gives the server's userspace COUNT control
# records, one recv() each; the peer stays until the injector hangs up.
inject_records()
{
	local mode=$1 id=$2 src=$3 n=$4 log=$TMPDIR/inject-$1

	ntf_listen "$log.ntf" 1 in_srv
	bg_start "$log" ip netns exec "$(client_ns 1)" python3 "$INJECT" \
		--src "$src" --wait "$INJ_WAIT" 10.10.1.1 "$SRV_PORT" "$mode"
	log_wait "$TMPDIR/srv.log" "^PEER $id\$"
	log_wait "$log" '^SENT$'
	log_wait "$TMPDIR/srv.log" "^CTRL $id $INJ_REC\$" "$n"
	expect_eq "records of peer $id" "$n" \
		"$(grep -c "^CTRL $id " "$TMPDIR/srv.log")"
	in_srv "$OVPN_CLI" get_peer tun0 "$id" | grep -q " id=$id " ||
		fail "peer $id is gone"
	bg_stop "$log"
	ntf_expect "$log.ntf" \
		"^ntf peer_del .* id=$id reason=transport_disconnect"
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 "$id"
}

# 200 records in one write: cut apart.
many_control_records() { inject_records many 21 10.10.1.3 200; }

# One record a byte a write: put together.
split_control_record() { inject_records split 22 10.10.1.4 1; }

# Key 2 as the secondary at both ends, then swapped at both: client 4
# (ChaCha20-Poly1305) keeps talking through each step, and once the old
# key is gone.
key_rollover()
{
	key_of 4 secondary 2
	in_c 4 "$OVPN_CLI" swap_keys tun4 14
	in_c 4 ping -q -c 3 -i 0.2 -W 2 5.5.5.1
	in_srv "$OVPN_CLI" swap_keys tun0 4
	in_srv ping -q -c 3 -i 0.2 -W 2 5.5.5.5
	in_srv "$OVPN_CLI" get_key tun0 4 primary | grep -q ' key_id=2 ' ||
		fail "server: key 2 is not the primary"
	in_c 4 "$OVPN_CLI" get_key tun4 14 primary | grep -q ' key_id=2 ' ||
		fail "client 4: key 2 is not the primary"
	in_srv "$OVPN_CLI" del_key tun0 4 secondary
	in_c 4 "$OVPN_CLI" del_key tun4 14 secondary
	expect_err ENOENT in_c 4 "$OVPN_CLI" get_key tun4 14 secondary
	in_c 4 ping -6 -q -c 3 -i 0.2 -W 2 fd00:5::1
}

delete_peer_notifies()
{
	local log=$TMPDIR/del.ntf

	ntf_listen "$log" 1 in_srv
	in_srv "$OVPN_CLI" del_peer tun0 2
	ntf_expect "$log" '^ntf peer_del .* id=2 reason=userspace'
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 2
	! in_c 2 ping -q -c 1 -W 1 5.5.5.1 ||
		fail "deleted peer still reachable"
	in_c 1 ping -q -c 1 -W 2 5.5.5.1
}

# The server sends keepalives to client 3 every second and expires it
# after 3 s of silence (client 3 sends none).  Client 3 gets them as link
# traffic only.
keepalive_expiry_mp()
{
	local log=$TMPDIR/ka-mp.ntf before after

	before=$(in_c 3 "$OVPN_CLI" get_peer tun3 13)
	ntf_listen "$log" 1 in_srv
	in_srv "$OVPN_CLI" set_peer tun0 3 keepalive 1 3
	ntf_expect "$log" '^ntf peer_del .* id=3 reason=expired'
	after=$(in_c 3 "$OVPN_CLI" get_peer tun3 13)
	printf 'client 3 before: %s\nclient 3 after:  %s\n' "$before" "$after"
	[ "$(peer_delta link_rx_packets "$before" "$after")" -ge 1 ] ||
		fail "client 3 got no keepalive"
	expect_eq "keepalives delivered to client 3's stack" 0 \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
}

# Client 3's server is gone (above), its connection is not: client 3's
# own peer expires.
keepalive_expiry_p2p()
{
	local log=$TMPDIR/ka-p2p.ntf

	ntf_listen "$log" 1 in_c 3
	in_c 3 "$OVPN_CLI" set_peer tun3 13 keepalive 1 2
	ntf_expect "$log" '^ntf peer_del .* id=13 reason=expired'
	expect_eq "carrier after expiry" 0 \
		"$(in_c 3 cat /sys/class/net/tun3/carrier)"
}

# Bulk TCP from both CPUs at once: records are written to the transport
# socket from softirq and from inside the sending task's own TCP sendmsg(),
# and must never take pages from that task's page fragment.  Four iperf3
# streams from two clients; the kernel log must stay clean and every
# stream must move data.  Two streams share each client's transport
# socket.  On debug-rt that socket carried 44 to 96 KB/s, and unbounded
# senders overran it: the queue in front of it tail-drops, and one stream
# (once iperf3's control connection) was starved for the whole run.  On a
# slow kernel each stream is held to 64 kbit/s, under what the socket
# carries, for 30 s; ACKs still clock records out from softirq beside the
# senders' own sendmsg().  Elsewhere the streams run unbounded for 8 s.
# What each moved is printed.
parallel_bulk_streams()
{
	local c i t rate bytes bad pids=()

	command -v iperf3 >/dev/null ||
		{ echo "no iperf3"; return "$KSFT_SKIP"; }
	bad=$(dmesg | grep -c 'BUG:' || true)
	t=$(on_slow 8 30)
	rate=$(on_slow 0 64K)
	for i in 1 2 3 4; do
		in_srv iperf3 -s -D -1 -p $((5300 + i))
	done
	wait_until tcp_listening "$SRV" 5301 5304 ||
		fail "iperf3 does not listen"
	for i in 1 2 3 4; do
		c=$(((i - 1) / 2 + 1))
		in_c "$c" timeout "$(secs 60)" iperf3 -c 5.5.5.1 \
			-p $((5300 + i)) -t "$t" -b "$rate" \
			-J >"$TMPDIR/bulk$i.json" \
			2>"$TMPDIR/bulk$i.err" &
		pids[i]=$!
	done
	for i in 1 2 3 4; do
		wait "${pids[i]}" && continue
		jq -r '.error // empty' "$TMPDIR/bulk$i.json" || true
		head -c 300 "$TMPDIR/bulk$i.err"
		fail "stream $i failed"
	done
	for i in 1 2 3 4; do
		bytes=$(jq -e '.end.sum_received.bytes' \
			"$TMPDIR/bulk$i.json") ||
			fail "stream $i: no result from iperf3"
		ktap_note "stream $i: $bytes bytes received in $t s"
		[ "$bytes" -gt 0 ] || fail "stream $i moved nothing"
	done
	expect_eq "kernel BUG reports" "$bad" \
		"$(dmesg | grep -c 'BUG:' || true)"
	in_c 1 ping -q -c 2 -W 2 5.5.5.1
}

# Client 1's stream stalls: it drops every segment of the server's, ACKs
# included, so its send buffer (at most 4 MiB, tcp_wmem) fills and then
# the queue in front of it.  12,000 datagrams of 1000 bytes (13 MB of
# records) must overflow both: what does not fit is dropped and counted in
# tx_dropped, never queued without bound.  Once the segments pass again,
# every record that was accepted reaches the server, whole and in order:
# its link_rx grows by exactly what client 1 sent less what it dropped.
# send_dgrams gives the sender a send buffer with room for all of them:
# with the default one (212 KiB) it would wait for the stream long
# before the queue filled.
TX_STALL_DGRAMS=12000

# Encryption may finish asynchronously (cryptd): the sender's counters
# are read once all its records were encrypted and written or dropped.
tx_queue_overflow()
{
	local n=$TX_STALL_DGRAMS c1 tx0 tx1 rx0 d0 dropped want

	c1=$(client_ns 1)
	tcp_stall "$c1" 1194
	tx0=$(peer_stat "$c1" tun1 11 link_tx_packets)
	rx0=$(peer_stat "$SRV" tun0 1 link_rx_packets)
	d0=$(link_dropped "$c1" tun1 tx)
	send_dgrams "$c1" 5.5.5.1 "$n" ||
		fail "the sender did not get its datagrams out"
	wait_until peer_stat_ge "$c1" tun1 11 link_tx_packets $((tx0 + n)) ||
		fail "client 1 did not encrypt $n records"
	dropped=$(($(link_dropped "$c1" tun1 tx) - d0))
	tx1=$(peer_stat "$c1" tun1 11 link_tx_packets)
	tcp_unstall "$c1"
	want=$((n - dropped))
	ktap_note "$n records, $dropped dropped in front of the stalled stream"
	expect_eq "records encrypted" "$n" $((tx1 - tx0))
	[ "$dropped" -gt 0 ] || fail "a stalled stream dropped nothing"
	wait_for 120 peer_stat_ge "$SRV" tun0 1 link_rx_packets \
		$((rx0 + want)) ||
		fail "the server got fewer than $want records"
	expect_eq "records the server got" "$want" \
		$(($(peer_stat "$SRV" tun0 1 link_rx_packets) - rx0))
	# The stream works again.  Ping until the first reply: the stream may
	# take seconds to recover on a debug kernel (on debug-rt, two pings
	# with 2 s to answer each went unanswered).
	in_c 1 ping -q -c 1 -w "$(secs 20)" 5.5.5.1
}

# The route to the server's address points into client 1's own tunnel,
# as a VPN that takes the default route without a host route to its
# server does: the connection's own segments come back to the device,
# which drops and counts them (it would otherwise take the socket's
# spinlock that their sender holds, and hang).  With the route gone, the
# connection carries traffic again.
transport_route_loop()
{
	local drop

	drop=$(link_dropped "$(client_ns 1)" tun1 tx)
	in_c 1 ip route add 10.10.1.1/32 dev tun1
	! in_c 1 ping -q -c 2 -i 0.2 -W 1 5.5.5.1 >/dev/null ||
		fail "traffic went through a tunnel routed into itself"
	in_c 1 ip route del 10.10.1.1/32 dev tun1
	[ "$(link_dropped "$(client_ns 1)" tun1 tx)" -gt "$drop" ] ||
		fail "no segment of the connection dropped"
	echo "tun1 tx_dropped: $drop," \
		"then $(link_dropped "$(client_ns 1)" tun1 tx)"
	in_c 1 ping -q -c 3 -i 0.2 -w "$(secs 20)" 5.5.5.1
}

ovpn_require

ktap_plan 20
run_test setup_topology setup_topology
run_test all_peers_connected all_peers_connected
run_test install_keys install_keys
run_test ping_ipv4 ping_ipv4
run_test ping_ipv6 ping_ipv6
run_test client_to_client client_to_client
run_test ping_large ping_large
run_test exact_counters exact_counters
run_test wire_format wire_format
run_test control_passthrough control_passthrough
run_test many_control_records many_control_records
run_test split_control_record split_control_record
run_noted parallel_bulk_streams parallel_bulk_streams
run_noted tx_queue_overflow tx_queue_overflow
run_test transport_route_loop transport_route_loop
run_test key_rollover key_rollover
run_test delete_peer_notifies delete_peer_notifies
run_test keepalive_expiry_mp keepalive_expiry_mp
run_test keepalive_expiry_p2p keepalive_expiry_p2p
run_test module_unloads module_unloads
ktap_finish
