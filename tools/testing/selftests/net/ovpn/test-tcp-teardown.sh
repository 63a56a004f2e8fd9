#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How TCP connections carrying peers end, under traffic: whichever way a
# connection goes (its userspace closes it, its process dies, the server
# removes the peer and then closes it, the client's namespace goes, the
# server's device goes), the peers on it are removed, and the
# notifications at each end give the reason.
#
#   ns srv: tun0 (MP, 5.5.5.1, fd00:5::1); one tcp_listen process for each
#   client, on port 1190+N for client N, so that one connection can be
#   closed alone.
#   ns cN: tunN (P2P, 5.5.5.(N+1), fd00:5::(N+1)), a veth to srv:
#     N = 1, 2, 5, 7: 10.10.N.2 == 10.10.N.1
#     N = 3, 4, 6: fd00:N::2 == fd00:N::1
#   peer ids: the server knows client N as N, client N the server as 10+N.
#
#   client 1: its userspace closes the socket (SIGUSR1), process alive
#   client 2: its process is killed (SIGKILL)
#   client 3: the server deletes its peer during a bulk transfer; the
#             server's userspace closes the connection later
#   client 4: its namespace is deleted, then its process ends
#   clients 5 and 6: the server's device is deleted
#   client 7: its userspace shuts the sending side down (SIGUSR2), so
#             the kernel's next record cannot be written

source "$(dirname "$0")/lib.sh"

ALG=${OVPN_ALG:-aes256}
SRV=ovpn-dsrv-$$
CLIENTS="1 2 3 4 5 6 7"
ovpn_workdir



client_transport() { star_transport "$1" "3 4 6"; }

setup_topology()
{
	local c caddr saddr

	star_links "3 4 6" $CLIENTS
	in_srv "$OVPN_CLI" new_iface tun0 mp
	link_up "$SRV" tun0 5.5.5.1 fd00:5::1
	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		# peer_id raddr vpn4 vpn6 tx_id
		echo "$c $caddr 5.5.5.$((c + 1)) fd00:5::$((c + 1))" \
			"$((10 + c))" >"$TMPDIR/peers$c"
		start_tracked "$TMPDIR/s$c.log" ip netns exec "$SRV" \
			"$OVPN_CLI" tcp_listen tun0 $((1190 + c)) \
			"$TMPDIR/peers$c" stay

		in_c "$c" "$OVPN_CLI" new_iface "tun$c"
		start_tracked "$TMPDIR/c$c.log" ip netns exec \
			"$(client_ns "$c")" "$OVPN_CLI" new_tcp_peer "tun$c" \
			$((10 + c)) "$saddr" $((1190 + c)) tx_id "$c" stay
		link_up "$(client_ns "$c")" "tun$c" "5.5.5.$((c + 1))" \
			"fd00:5::$((c + 1))"
	done
}

peers_up()
{
	local c

	for c in $CLIENTS; do
		log_wait "$TMPDIR/s$c.log" "^PEER $c\$"
		key_pair "$SRV" tun0 "$c" "$(client_ns "$c")" "tun$c" \
			$((10 + c)) primary 1 "$ALG"
		in_c "$c" ping -q -c 2 -i 0.2 -W 2 5.5.5.1
	done
}

# flowing NS IFNAME ID: traffic runs: the peer's vpn_rx_packets grows by
# 50 from now.
flowing()
{
	local base

	base=$(peer_stat "$1" "$2" "$3" vpn_rx_packets) || return 1
	wait_until peer_stat_ge "$1" "$2" "$3" vpn_rx_packets $((base + 50)) ||
		fail "no traffic on peer $3 of $2"
}

# client_ends C SIG: client C's process gets SIG while it floods the
# server with pings: both ends remove the peer, for a disconnect.
client_ends()
{
	local c=$1 log=$TMPDIR/end$1

	ntf_listen "$log.c.ntf" 1 in_c "$c"
	ntf_listen "$log.s.ntf" 1 in_srv
	bg_start "$log.ping" ip netns exec "$(client_ns "$c")" \
		ping -q -f 5.5.5.1
	flowing "$(client_ns "$c")" "tun$c" $((10 + c))
	bg_signal "$2" "$TMPDIR/c$c.log"
	if [ "$2" = USR1 ]; then
		log_wait "$TMPDIR/c$c.log" '^CLOSED$'
	fi
	ntf_expect "$log.c.ntf" \
		"^ntf peer_del .* id=$((10 + c)) reason=transport_disconnect"
	ntf_expect "$log.s.ntf" \
		"^ntf peer_del .* id=$c reason=transport_disconnect"
	bg_stop "$log.ping"
	expect_err ENOENT in_c "$c" "$OVPN_CLI" get_peer "tun$c" $((10 + c))
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 "$c"
	expect_eq "carrier of client $c" 0 \
		"$(in_c "$c" cat "/sys/class/net/tun$c/carrier")"
}

# Closed by its userspace, which lives on.
client_closes_socket() { client_ends 1 USR1; }

# Closed by the end of its process.
client_killed() { client_ends 2 KILL; }

veth_gone() { ! in_srv ip link show "veth$1" >/dev/null 2>&1; }

# The name of client 4's namespace goes first; the namespace lives on
# with the processes in it, until the client ends.  Then the namespace
# goes with its devices, the veth to the server too.
client_netns_deleted()
{
	local log=$TMPDIR/end4

	ntf_listen "$log.c.ntf" 1 in_c 4
	ntf_listen "$log.s.ntf" 1 in_srv
	bg_start "$log.ping" ip netns exec "$(client_ns 4)" \
		ping -6 -q -f fd00:5::1
	flowing "$(client_ns 4)" tun4 14
	ip netns del "$(client_ns 4)"
	bg_stop "$TMPDIR/c4.log"
	bg_stop "$log.ping"
	ntf_expect "$log.c.ntf" \
		'^ntf peer_del .* id=14 reason=transport_disconnect'
	ntf_expect "$log.s.ntf" \
		'^ntf peer_del .* id=4 reason=transport_disconnect'
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 4
	wait_until veth_gone 4 || fail "client 4's namespace does not go"
}

# bulk_start LOG: a bulk transfer from the server to client 3 in the
# background: iperf3 where there is one, else a flood of large pings.
bulk_start()
{
	if command -v iperf3 >/dev/null; then
		bg_start "$1.srv" ip netns exec "$(client_ns 3)" iperf3 -s -1
		wait_until tcp_listening "$(client_ns 3)" 5201 ||
			fail "iperf3 does not listen"
		bg_start "$1" ip netns exec "$SRV" iperf3 -c fd00:5::4 -t 600
	else
		bg_start "$1" ip netns exec "$SRV" ping -6 -q -f -l 16 -s 1400 \
			fd00:5::4
	fi
}

# Killed: nothing waits for a tunnel that is gone.
bulk_stop()
{
	bg_stop "$1" KILL
	if [ -f "$1.srv.pid" ]; then
		bg_stop "$1.srv" KILL
	fi
}

# The server removes client 3's peer in the middle of a transfer; the
# connection is then its userspace's again, and when that closes it, the
# client's peer goes too.
server_deletes_peer()
{
	local log=$TMPDIR/del3

	ntf_listen "$log.s.ntf" 1 in_srv
	ntf_listen "$log.c.ntf" 1 in_c 3
	bulk_start "$log.bulk"
	flowing "$SRV" tun0 3
	in_srv "$OVPN_CLI" del_peer tun0 3
	ntf_expect "$log.s.ntf" '^ntf peer_del .* id=3 reason=userspace'
	bulk_stop "$log.bulk"
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 3
	bg_signal USR1 "$TMPDIR/s3.log"
	log_wait "$TMPDIR/s3.log" '^CLOSED$'
	ntf_expect "$log.c.ntf" \
		'^ntf peer_del .* id=13 reason=transport_disconnect'
	expect_err ENOENT in_c 3 "$OVPN_CLI" get_peer tun3 13
}

# Client 7's userspace shuts its connection's sending side down; the next
# packet into the tunnel cannot be written.  The peer goes for a transport
# error, the packet counts as dropped, and the process that sent it is
# not sent SIGPIPE (ping would die of it, status 141).  The server sees
# the end of the stream: a disconnect there.
client_write_fails()
{
	local log=$TMPDIR/end7 dropped rc=0

	ntf_listen "$log.c.ntf" 1 in_c 7
	ntf_listen "$log.s.ntf" 1 in_srv
	dropped=$(link_dropped "$(client_ns 7)" tun7 tx)
	bg_signal USR2 "$TMPDIR/c7.log"
	log_wait "$TMPDIR/c7.log" '^SHUT$'
	in_c 7 ping -q -c 1 -W 1 5.5.5.1 >/dev/null 2>&1 || rc=$?
	expect_eq "ping's status (1: no reply)" 1 "$rc"
	ntf_expect "$log.c.ntf" \
		'^ntf peer_del .* id=17 reason=transport_error'
	ntf_expect "$log.s.ntf" \
		'^ntf peer_del .* id=7 reason=transport_disconnect'
	# At least: packets the stack sends on its own may fail too.
	[ "$(link_dropped "$(client_ns 7)" tun7 tx)" -gt "$dropped" ] ||
		fail "tx_dropped stays at $dropped"
	expect_err ENOENT in_c 7 "$OVPN_CLI" get_peer tun7 17
}

# tcp_control IFNAME MODE: tcp-control.py MODE on a new P2P device IFNAME
# of the server; its output goes to $TMPDIR/tcp-control.out and is shown,
# its figures are noted, and its exit status is returned.
tcp_control()
{
	local out=$TMPDIR/tcp-control.out rc=0

	in_srv "$OVPN_CLI" new_iface "$1"
	in_srv python3 "$OVPN_DIR/tcp-control.py" "$1" 1 - \
		"$OVPN_SLOW" "$2" >"$out" || rc=$?
	cat "$out"
	ktap_note "$(sed -n 's/^# //p' "$out")"
	return "$rc"
}

# A device goes while a reader of an attached socket waits in recv() and
# a writer's copy of its record waits for a page (tcp-control.py): the
# deletion does not wait for either, the reader wakes with an error, and
# the writer finishes once its page comes.
blocked_reader_writer()
{
	tcp_control tunb blocked || return
	expect_eq "checks passed" 5 \
		"$(grep -c '^ok ' "$TMPDIR/tcp-control.out")"
}

# The server's device goes while clients 5 and 6 are connected, 6
# sending: both peers go with it.  Their connections stay the server's
# userspace's: closing one ends the client's peer.
device_deleted()
{
	local log=$TMPDIR/teardown

	ntf_listen "$log.s.ntf" 2 in_srv
	ntf_listen "$log.c.ntf" 1 in_c 5
	bg_start "$log.ping" ip netns exec "$(client_ns 6)" \
		ping -6 -q -f fd00:5::1
	flowing "$(client_ns 6)" tun6 16
	in_srv ip link del tun0
	ntf_expect "$log.s.ntf" '^ntf peer_del .* id=5 reason=teardown' \
		'^ntf peer_del .* id=6 reason=teardown'
	bg_stop "$log.ping"
	bg_signal USR1 "$TMPDIR/s5.log"
	log_wait "$TMPDIR/s5.log" '^CLOSED$'
	ntf_expect "$log.c.ntf" \
		'^ntf peer_del .* id=15 reason=transport_disconnect'
}

# The module is unloaded while a reader waits in recv() on an attached
# socket and a writer's copy of its record waits for a page: the reader
# wakes, and the unloading waits for the writer, which sleeps inside the
# module's code, rather than free that code under it.  Then the module is
# loaded again for the last test.
unload_with_blocked_writer()
{
	local rc=0

	tcp_control tunu unload || rc=$?
	ovpn_load
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || return "$rc"
	expect_eq "checks passed" 6 \
		"$(grep -c '^ok ' "$TMPDIR/tcp-control.out")"
}

ovpn_require

ktap_plan 11
run_test setup_topology setup_topology
run_test peers_up peers_up
run_test client_closes_socket client_closes_socket
run_test client_killed client_killed
run_test client_netns_deleted client_netns_deleted
run_test server_deletes_peer server_deletes_peer
run_test client_write_fails client_write_fails
run_noted blocked_reader_writer blocked_reader_writer
run_test device_deleted device_deleted
run_noted unload_with_blocked_writer unload_with_blocked_writer
run_test module_unloads module_unloads
ktap_finish
