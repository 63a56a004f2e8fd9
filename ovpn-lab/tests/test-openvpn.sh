#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The real daemon: an unmodified openvpn (2.6 or later) drives the module
# under test, as a server and as a client, over UDP and TCP on IPv4 and
# IPv6 transports, with AES-256-GCM and ChaCha20-Poly1305; and the module
# talks to openvpn's own userspace data channel (--disable-dco) at the
# other end, server or client, which proves the wire format against the
# reference implementation.
#
# Four servers in ns srv, each listening on IPv6 and IPv4 (udp6 and
# tcp6-server sockets are dual-stack), and twelve clients, one namespace
# each, with a veth to srv: 10.10.N.2 == 10.10.N.1, fd00:N::2 == fd00:N::1.
#
#   server  device  data channel      transport  VPN          keepalive
#   dcoudp  dcoudp  DCO (our module)  udp6 1194  10.8.1.0/24  1 5
#   dcotcp  dcotcp  DCO (our module)  tcp6 1194  10.8.2.0/24  1 5
#   usudp   usudp   userspace (tun)   udp6 1195  10.8.3.0/24  ping 2
#   ustcp   ustcp   userspace (tun)   tcp6 1195  10.8.4.0/24  ping 2
#
# Each client is one cell of the matrix role x transport x cipher x other
# side (the CELLS table).  In each cell, ping passes both ways, the module's
# counters move at each DCO end and iperf3 measures the throughput from
# client to server, printed as a diagnostic.  Then, on some of the
# clients: openvpn's keepalive settings reach the module (PEER_SET), a
# client floats to a new address (PEER_FLOAT_NTF), keys renegotiate under
# traffic, clients leave (SIGTERM: USERSPACE over UDP, the connection's
# end over TCP) or die (SIGKILL: the server expires them, EXPIRED).

source "$(dirname "$0")/openvpn-lib.sh"

SRV=ovpn-osrv-$$
IPERF_PORT=5201
IPERF_SECS=${OVPN_IPERF_SECS:-3}
# N  server  transport  cipher  client
CELLS="
1  dco  udp4  AES-256-GCM        dco
2  dco  udp6  CHACHA20-POLY1305  dco
3  dco  udp4  CHACHA20-POLY1305  us
4  dco  udp6  AES-256-GCM        us
5  dco  tcp4  CHACHA20-POLY1305  dco
6  dco  tcp6  AES-256-GCM        dco
7  dco  tcp4  AES-256-GCM        us
8  dco  tcp6  CHACHA20-POLY1305  us
9  us   udp4  CHACHA20-POLY1305  dco
10 us   udp6  AES-256-GCM        dco
11 us   tcp4  AES-256-GCM        dco
12 us   tcp6  CHACHA20-POLY1305  dco
"
# Roles of some clients in the tests after the matrix.
C_FLOAT=1	# UDP, DCO at both ends: moves to 10.10.1.3, then leaves
C_RENEG=2	# renegotiates every RENEG_SEC s
C_PING=9	# its own --ping 3 --ping-restart 17, with a userspace server
C_TCP_EXIT=6	# TCP, DCO at both ends: leaves
C_KILLED=4	# userspace client of a DCO server: killed
# Ten seconds, stretched on a slow kernel (OVPN_SLOW): there a TLS
# handshake takes most of ten seconds, and the renegotiations would
# overlap before the test could see one complete.
RENEG_SEC=$(secs 10)
openvpn_workdir

ns() { echo "ovpn-oc$1-$$"; }

in_c() { local c=$1; shift; ip netns exec "$(ns "$c")" "$@"; }

# cell N: "server transport cipher client" of client N.
cell()
{
	awk -v n="$1" '$1 == n { print $2, $3, $4, $5 }' <<<"$CELLS"
}

cell_ids() { awk 'NF { print $1 }' <<<"$CELLS"; }

# server_of TYPE TRANSPORT: the server a client of that kind connects to.
server_of() { echo "$1${2%[46]}"; }

# server_net NAME: the third byte of the server's VPN subnet.
server_net()
{
	case $1 in
	dcoudp) echo 1 ;;
	dcotcp) echo 2 ;;
	usudp) echo 3 ;;
	ustcp) echo 4 ;;
	esac
}

server_vpn() { echo "10.8.$(server_net "$1").1"; }

# client_server N: the server of client N.
client_server()
{
	local type tr

	read -r type tr _ <<<"$(cell "$1")"
	server_of "$type" "$tr"
}

# dco_alg CIPHER: how ovpn-cli names openvpn's cipher.
dco_alg()
{
	case $1 in
	AES-256-GCM) echo aes-gcm ;;
	CHACHA20-POLY1305) echo chacha20-poly1305 ;;
	esac
}

side()
{
	case $1 in
	dco) echo dco ;;
	us) echo userspace ;;
	esac
}

srv_ifindex() { in_srv cat "/sys/class/net/$1/ifindex"; }

# peer_del_ntf SRV_DEV ID REASON: the pattern of the notification of the
# server's SRV_DEV deleting its peer ID for REASON (its counters follow).
peer_del_ntf()
{
	echo "^ntf peer_del ifindex=$(srv_ifindex "$1") id=$2 reason=$3 "
}

# client_vpn N: the VPN address the server gave client N.
client_vpn() { dev_addr4 "$(ns "$1")" vpn0; }

# srv_peer N: the server's peer line for client N (DCO servers only).
srv_peer() { ovpn_peer "$SRV" "$(client_server "$1")" "$(client_vpn "$1")"; }

setup_topology()
{
	local c

	ovpn_pki
	ns_add "$SRV"
	for c in $(cell_ids); do
		ns_add "$(ns "$c")"
		ip link add "veth$c" netns "$SRV" type veth peer name eth0 \
			netns "$(ns "$c")"
		link_up "$SRV" "veth$c" "10.10.$c.1" "fd00:$c::1"
		link_up "$(ns "$c")" eth0 "10.10.$c.2" "fd00:$c::2"
	done
}

servers_up()
{
	local s port proto opts

	for s in dcoudp dcotcp usudp ustcp; do
		case $s in
		dco*)
			# ping 1 s, ping-restart 5 s, pushed to clients; the
			# server's own timeout is twice that.  Verb 4 for the
			# log line of a float.
			port=1194
			opts=(--keepalive 1 5 --verb 4)
			;;
		*)
			# Pings, not pushed: client 9's own ping-restart
			# must see traffic from its server.
			port=1195
			opts=(--disable-dco --ping 2)
			;;
		esac
		case $s in
		*udp) proto=udp6 ;;
		*) proto=tcp6-server ;;
		esac
		ovpn_server "$s" "$SRV" "$s" "$proto" "$port" \
			"10.8.$(server_net "$s").0" "${opts[@]}"
	done
	for s in dcoudp dcotcp usudp ustcp; do
		ovpn_wait_up "$s"
		if [ "${s#dco}" != "$s" ]; then
			ovpn_uses_dco "$s" "$SRV" "$s"
			expect_eq "mode of $s" mp \
				"$(in_srv "$OVPN_CLI" get_mode "$s")"
		else
			ovpn_uses_tun "$s" "$SRV" "$s"
		fi
	done
}

# start_client N: client N as its cell says, and the extra options of its
# role.
start_client()
{
	local c=$1 type tr cipher cli srv proto remote port

	read -r type tr cipher cli <<<"$(cell "$c")"
	srv=$(server_of "$type" "$tr")
	case $tr in
	udp*) proto=$tr; set -- --explicit-exit-notify 1 ;;
	tcp*) proto=$tr-client; set -- ;;
	esac
	case $tr in
	*4) remote=10.10.$c.1 ;;
	*6) remote=fd00:$c::1 ;;
	esac
	port=1194
	[ "$type" = us ] && port=1195
	[ "$cli" = us ] && set -- "$@" --disable-dco
	[ "$c" = "$C_RENEG" ] && set -- "$@" --reneg-sec "$RENEG_SEC"
	[ "$c" = "$C_PING" ] && set -- "$@" --ping 3 --ping-restart 17
	ovpn_client "c$c" "$(ns "$c")" vpn0 "$proto" "$remote" "$port" \
		"$cipher" "$@"
}

clients_up()
{
	local c cli

	for c in $(cell_ids); do
		start_client "$c"
	done
	for c in $(cell_ids); do
		ovpn_wait_up "c$c"
		read -r _ _ _ cli <<<"$(cell "$c")"
		if [ "$cli" = dco ]; then
			ovpn_uses_dco "c$c" "$(ns "$c")" vpn0
			expect_eq "mode of client $c" p2p \
				"$(in_c "$c" "$OVPN_CLI" get_mode vpn0)"
		else
			ovpn_uses_tun "c$c" "$(ns "$c")" vpn0
		fi
	done
	# The cells' iperf3 server starts only now: its first test times out
	# (--rcv-timeout, 120 s) counting from when it began to listen, and on
	# a debug kernel the clients take longer than that to come up.
	iperf_server "$SRV" "$IPERF_PORT"
}

# key_is NS DEV PEER_LINE CIPHER: the primary key of that peer uses CIPHER.
key_is()
{
	local id key

	id=$(peer_val id "$3") || return
	key=$(ovpn_key "$1" "$2" "$id" primary) || fail "$2: $key" || return
	echo "$2: $key"
	grep -q " cipher=$(dco_alg "$4")\$" <<<"$key" ||
		fail "$2: peer $id does not use $4"
}

# One cell: client N and its server talk through the tunnel, each DCO end
# counts it, and iperf3 measures it.
cell_test()
{
	local c=$1 type tr cipher cli srv svpn cvpn json bytes mbits
	local sb sa cb ca

	read -r type tr cipher cli <<<"$(cell "$c")"
	srv=$(server_of "$type" "$tr")
	svpn=$(server_vpn "$srv")
	cvpn=$(client_vpn "$c")
	log_has "$(ovpn_log "c$c")" "Data Channel: cipher '$cipher'" ||
		fail "client $c: openvpn did not settle on $cipher" || return
	if [ "$type" = dco ]; then
		sb=$(srv_peer "$c")
		key_is "$SRV" "$srv" "$sb" "$cipher"
	fi
	if [ "$cli" = dco ]; then
		cb=$(ovpn_peer "$(ns "$c")" vpn0)
		key_is "$(ns "$c")" vpn0 "$cb" "$cipher"
	fi

	in_c "$c" ping -q -c 3 -i 0.2 -W 5 "$svpn"
	in_srv ping -q -c 3 -i 0.2 -W 5 "$cvpn"
	json=$TMPDIR/iperf-c$c.json
	iperf_run "$(ns "$c")" "$svpn" "$IPERF_PORT" "$IPERF_SECS" "$json"
	bytes=$(jq -r '.end.sum_received.bytes' "$json")
	mbits=$(iperf_mbits "$json")

	# Both pings (6 packets each way) and the bulk transfer went through
	# the module at each DCO end: at least the bytes iperf3 moved.
	if [ "$type" = dco ]; then
		sa=$(srv_peer "$c")
		printf 'server before: %s\nserver after:  %s\n' "$sb" "$sa"
		expect_moved "server" "$sb" "$sa" 6 vpn_rx_packets \
			vpn_tx_packets link_rx_packets link_tx_packets
		expect_moved "server" "$sb" "$sa" "$bytes" vpn_rx_bytes
	fi
	if [ "$cli" = dco ]; then
		ca=$(ovpn_peer "$(ns "$c")" vpn0)
		printf 'client before: %s\nclient after:  %s\n' "$cb" "$ca"
		expect_moved "client" "$cb" "$ca" 6 vpn_rx_packets \
			vpn_tx_packets link_rx_packets link_tx_packets
		expect_moved "client" "$cb" "$ca" "$bytes" vpn_tx_bytes
	fi
	ktap_note "cell server=$(side "$type") client=$(side "$cli")" \
		"transport=$tr cipher=$cipher: $mbits Mbit/s"
}

# keepalive N INTERVAL TIMEOUT [MP_INTERVAL MP_TIMEOUT]: client N's peer,
# and the server's peer for it if given, have these keepalive settings.
keepalive()
{
	local c=$1 line

	line=$(ovpn_peer "$(ns "$c")" vpn0)
	echo "client $c: $line"
	expect_eq "client $c keepalive interval" "$2" \
		"$(peer_val keepalive_interval "$line")"
	expect_eq "client $c keepalive timeout" "$3" \
		"$(peer_val keepalive_timeout "$line")"
	[ $# -gt 3 ] || return 0
	line=$(srv_peer "$c")
	echo "server of $c: $line"
	expect_eq "server keepalive interval for $c" "$4" \
		"$(peer_val keepalive_interval "$line")"
	expect_eq "server keepalive timeout for $c" "$5" \
		"$(peer_val keepalive_timeout "$line")"
}

# "--keepalive 1 5" on a server: ping 1, ping-restart 10 for itself, ping
# 1 and ping-restart 5 pushed to the client; a client's own --ping and
# --ping-restart when its server pushes none.
keepalive_settings()
{
	keepalive 1 1 5 1 10
	keepalive 5 1 5 1 10
	keepalive "$C_PING" 3 17
}

# Client 1 moves from 10.10.1.2 to 10.10.1.3: the server's module sees
# its next packet come from there and says so, openvpn follows, and
# traffic goes on both ways.
float_client()
{
	local c=$C_FLOAT log=$TMPDIR/float.ntf id ifx

	id=$(peer_val id "$(srv_peer "$c")")
	ifx=$(srv_ifindex dcoudp)
	ntf_listen "$log" 1 in_srv
	in_c "$c" sysctl -qw net.ipv4.conf.eth0.promote_secondaries=1
	in_c "$c" ip addr add "10.10.$c.3/24" dev eth0
	in_c "$c" ip addr del "10.10.$c.2/24" dev eth0
	in_c "$c" ping -q -c 3 -i 0.2 -W 5 "$(server_vpn dcoudp)"
	ntf_expect "$log" \
		"^ntf peer_float ifindex=$ifx id=$id remote=10.10.$c.3:[0-9]*\$"
	srv_peer "$c" | grep -q " remote=10.10.$c.3:" ||
		fail "the server's peer did not move"
	ovpn_wait_log dcoudp "peer $id (.*) floated from .* to .*10\.10\.$c\.3"
	in_srv ping -q -c 3 -i 0.2 -W 5 "$(client_vpn "$c")"
}

# slots NS DEV ID: the key ids in both slots of a peer, primary first.
slots()
{
	echo "$(key_id "$1" "$2" "$3" primary)" \
		"$(key_id "$1" "$2" "$3" secondary)"
}

client_slots()
{
	local id

	id=$(peer_val id "$(ovpn_peer "$(ns "$C_RENEG")" vpn0)") &&
		slots "$(ns "$C_RENEG")" vpn0 "$id"
}

# renegotiated ID KEY: the server's peer ID made a new key its primary,
# with KEY, the old primary, as its secondary; client C_RENEG holds the
# same two keys.
renegotiated()
{
	local srv cli primary secondary

	srv=$(slots "$SRV" dcoudp "$1") && cli=$(client_slots) || return
	read -r primary secondary <<<"$srv"
	[ "$secondary" = "$2" ] && [ "$primary" != "$2" ] || return
	[ "$(tr ' ' '\n' <<<"$srv" | sort)" = \
		"$(tr ' ' '\n' <<<"$cli" | sort)" ]
}

# Client 2 renegotiates every $RENEG_SEC s.  Under a stream of pings the
# server installs the new key as its secondary, then swaps: the new key
# sends, the old one still decrypts what the client sends with it (until
# openvpn makes the client switch, min(hand-window, reneg-sec / 2) after
# the renegotiation started), and the pings barely notice.
renegotiation_under_pings()
{
	local c=$C_RENEG log=$TMPDIR/reneg-ping id old srv cli sent got before
	local num='\([0-9]*\)'

	id=$(peer_val id "$(srv_peer "$c")")
	old=$(key_id "$SRV" dcoudp "$id" primary)
	bg_start "$log" ip netns exec "$(ns "$c")" ping -i 0.2 \
		-c $((1000 * OVPN_SLOW)) -W 5 \
		"$(server_vpn dcoudp)"
	ovpn_wait renegotiated "$id" "$old" || {
		echo "server: $(slots "$SRV" dcoudp "$id")," \
			"client: $(client_slots)"
		fail "no new key replaced key $old"
		return
	}
	srv=$(slots "$SRV" dcoudp "$id")
	cli=$(client_slots)
	# Traffic after the swap too, then the count.
	before=$(peer_val vpn_rx_packets "$(srv_peer "$c")")
	wait_until peer_stat_ge "$SRV" dcoudp "$id" vpn_rx_packets \
		$((before + 5))
	bg_stop "$log" INT
	cat "$log"
	read -r sent got <<<"$(sed -n \
		"s/^$num packets transmitted, $num received.*/\1 \2/p" "$log")"
	ktap_note "renegotiation: key ids (primary secondary)" \
		"server $srv, client $cli;" "$got of $sent pings answered"
	[ "${got:-0}" -ge $((sent - 1)) ] || fail \
		"$((sent - got)) of $sent pings lost across the renegotiation"
}

# expect_peer_gone SRV_DEV N VPN4: the server has no peer for client N.
expect_peer_gone()
{
	! ovpn_peer "$SRV" "$1" "$3" >/dev/null 2>&1 ||
		fail "$1 still has a peer for client $2"
}

# Client 1 (UDP, --explicit-exit-notify) is stopped: it tells the server,
# which deletes its peer (USERSPACE); its own device goes with it.
udp_client_exit()
{
	local c=$C_FLOAT log=$TMPDIR/exit.ntf id vpn

	vpn=$(client_vpn "$c")
	id=$(peer_val id "$(srv_peer "$c")")
	ntf_listen "$log" 1 in_srv
	ovpn_stop "c$c"
	log_has "$(ovpn_log "c$c")" 'sending exit notification to peer' ||
		fail "client $c sent no exit notification"
	ntf_expect "$log" "$(peer_del_ntf dcoudp "$id" userspace)"
	expect_peer_gone dcoudp "$c" "$vpn"
	! in_c "$c" ip link show vpn0 2>/dev/null ||
		fail "vpn0 of client $c left"
}

# Client 6 (TCP, DCO) is stopped: its connection ends, and so does the
# server's peer on it (TRANSPORT_DISCONNECT); openvpn drops the client.
tcp_client_exit()
{
	local c=$C_TCP_EXIT log=$TMPDIR/tcp-exit.ntf id vpn

	vpn=$(client_vpn "$c")
	id=$(peer_val id "$(srv_peer "$c")")
	ntf_listen "$log" 1 in_srv
	ovpn_stop "c$c"
	ntf_expect "$log" "$(peer_del_ntf dcotcp "$id" transport_disconnect)"
	# The module hands the socket back: openvpn sees the connection end.
	ovpn_wait_log dcotcp "c$c/.* Connection reset"
	expect_peer_gone dcotcp "$c" "$vpn"
}

# Client 4 (userspace, UDP) dies without a word: the server's module
# expires its peer after the ping-restart time (EXPIRED) and openvpn drops
# the client.  A userspace client, because a killed DCO client's peer
# lives on in its kernel and keeps the server's peer alive with its
# keepalives, as it should.
killed_client_expires()
{
	local c=$C_KILLED log=$TMPDIR/kill.ntf id vpn

	vpn=$(client_vpn "$c")
	id=$(peer_val id "$(srv_peer "$c")")
	ntf_listen "$log" 1 in_srv
	ovpn_stop "c$c" KILL
	ntf_expect "$log" "$(peer_del_ntf dcoudp "$id" expired)"
	ovpn_wait_log dcoudp 'ping expired'
	expect_peer_gone dcoudp "$c" "$vpn"
}

ovpn_require
openvpn_require

ktap_plan $((10 + $(cell_ids | wc -l)))
run_test setup setup_topology
run_test servers_up servers_up
run_test clients_up clients_up
for c in $(cell_ids); do
	read -r type tr cipher cli <<<"$(cell "$c")"
	run_noted "cell_${c}_srv_${type}_cli_${cli}_${tr}_${cipher,,}" \
		cell_test "$c"
done
run_test keepalive_settings keepalive_settings
run_test float_client float_client
run_noted renegotiation renegotiation_under_pings
run_test udp_client_exit udp_client_exit
run_test tcp_client_exit tcp_client_exit
run_test killed_client_expires killed_client_expires
run_test module_unloads module_unloads
ktap_finish
