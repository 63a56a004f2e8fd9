#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Churn under traffic.  While iperf3 streams run through a UDP and a TCP
# tunnel and UDP keeps the peers of a second MP device busy, each kind of
# churn is repeated a bounded number of rounds: peers added and deleted,
# keys replaced, peers rehashed and floated by PEER_SET, transport sockets
# closed, devices deleted, namespaces deleted, the module unloaded and
# loaded again.  Each round checks that what it deleted is gone, and a
# tunnel it rebuilt carries traffic; after each kind every tunnel does.  At
# the end rmmod succeeds, no device ever waited to be freed, and per-CPU
# memory and slab are back where they were after a warm-up round.
#
# The tunnel devices live in namespaces of their own (vs, vu, vt), their
# transport sockets in the namespaces with the links (srv, cu, ct), as in
# a container: each device is created next to its socket's process, gets
# its peer there and is moved.  So deleting vs, vu or vt dismantles ovpn
# devices that still have peers and traffic, and TCP connections inside
# the tunnels close over tunnels that still work.  Notifications go to
# the namespace of the peer's socket.
#
#   ns vs:  tun0 (MP) 5.5.5.1    tun1 (MP) 5.5.6.1    iperf3 servers, pings
#   ns srv: their sockets, UDP :1194 and TCP :1195;   tun2 (MP) 100.64.0.1,
#           veth1 10.10.1.1      veth2 10.10.2.1      sink0 (a veth)
#                  |                    |
#   ns cu:  eth0 10.10.1.2       ns ct: eth0 10.10.2.2
#           tunu's UDP :2001            tunt's TCP
#   ns vu:  tunu (P2P) 5.5.5.2   ns vt: tunt (P2P) 5.5.6.2
#           iperf3 client, ping         iperf3 client, ping
#
#   Peer id 1 at both ends of each tunnel.  tun2's peers are each round's
#   own, ids 1000 R + i, VPN 100.64.0.(10 + i), remote endpoints 10.30.x.y
#   routed to sink0, on a UDP socket of one process in srv; a sender in
#   srv sends to all their VPN addresses all the time.
#
# Environment (defaults, then those on a slow kernel): OVPN_CHURN_ROUNDS
# (12, 4) rounds of peer add/del, key swaps and PEER_SET each;
# OVPN_CHURN_TEARDOWNS (4, 2) of socket close and device delete, each of
# which rebuilds a tunnel; OVPN_CHURN_HEAVY (2, 1) of namespace delete and
# module reload; OVPN_CHURN_PEERS (32) peers a round;
# OVPN_CHURN_STREAMS (4) and OVPN_CHURN_RATE (1M, per stream) of iperf3.
# On a slow kernel (OVPN_SLOW, lib.sh) the traffic is that much lighter:
# the rate, the pings and the sender.  At full rate the lab's debug kernel
# spent all its time carrying it, and the churn itself crawled: its
# warm-up ran for an hour.  And there are fewer rounds: on that kernel a
# round of peer add/del takes half a minute and rebuilding a tunnel two,
# and the defaults would run past the hour a script gets there.

source "$(dirname "$0")/lib.sh"

ALG=${OVPN_ALG:-aes256}
KEY=$OVPN_DIR/key.hex
ROUNDS=${OVPN_CHURN_ROUNDS:-$(on_slow 12 4)}
TEARDOWNS=${OVPN_CHURN_TEARDOWNS:-$(on_slow 4 2)}
HEAVY=${OVPN_CHURN_HEAVY:-$(on_slow 2 1)}
NPEERS=${OVPN_CHURN_PEERS:-32}
STREAMS=${OVPN_CHURN_STREAMS:-4}
RATE=${OVPN_CHURN_RATE:-$((1000 / OVPN_SLOW))K}
# Seconds between pings, and between the sender's bursts of 8 datagrams.
PING_GAP=$(awk -v f="$OVPN_SLOW" 'BEGIN { print 0.05 * f }')
SEND_GAP=$(awk -v f="$OVPN_SLOW" 'BEGIN { print 0.01 * f }')
SRV=ovpn-chs-$$
VS=ovpn-chvs-$$
CU=ovpn-chu-$$
VU=ovpn-chvu-$$
CT=ovpn-cht-$$
VT=ovpn-chvt-$$
# What one peer costs (test-scale.sh): per-CPU bytes per possible CPU,
# and slab bytes.  The unit of the leak bounds.
PEER_PERCPU=112
PEER_SLAB=662
WAITING='unregister_netdevice: waiting for'
START=$EPOCHSECONDS
ovpn_workdir

# UDP to the VPN addresses $1.$2 to $1.($2 + $3 - 1), a few at a time with
# a pause: load on every peer, not a flood that starves the rest.  Errors
# (no route while tun2 is rebuilt) only slow it down.
SENDER='import socket, sys, time
dsts = ["%s.%d" % (sys.argv[1], int(sys.argv[2]) + i)
        for i in range(int(sys.argv[3]))]
gap = float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
i = 0
while True:
    for _ in range(8):
        try:
            s.sendto(b"churn" * 40, (dsts[i % len(dsts)], 9))
        except OSError:
            time.sleep(0.1)
        i += 1
    time.sleep(gap)'

cli() { local ns=$1; shift; in_netns "$ns" "$OVPN_CLI" "$@"; }

# tunnel_vars u|t: set the caller's sdev, cns, crole, vns, vrole, cdev,
# saddr and caddr to, of the UDP or the TCP tunnel: the server device, the
# client's namespace (of its socket) and role (the prefix of its processes'
# logs), the client's VPN namespace (of its device) and role, the client
# device, the server's and the client's VPN address.
tunnel_vars()
{
	if [ "$1" = u ]; then
		sdev=tun0 cns=$CU crole=cu vns=$VU vrole=vu cdev=tunu
		saddr=5.5.5.1 caddr=5.5.5.2
	else
		sdev=tun1 cns=$CT crole=ct vns=$VT vrole=vt cdev=tunt
		saddr=5.5.6.1 caddr=5.5.6.2
	fi
}

meminfo()
{
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# Totals live in files: test points run in subshells.
count_add()
{
	local n=0

	[ -f "$TMPDIR/n.$1" ] && read -r n <"$TMPDIR/n.$1"
	echo $((n + $2)) >"$TMPDIR/n.$1"
}

count_of()
{
	local n=0

	[ -f "$TMPDIR/n.$1" ] && read -r n <"$TMPDIR/n.$1"
	echo "$n"
}

link_exists() { ip -n "$1" link show dev "$2" >/dev/null 2>&1; }

# field NAME LINE: the value of NAME in a "key=value ..." line.
field()
{
	[[ " $2 " =~ \ $1=([^ ]*)\  ]] || fail "no $1 in '$2'" >&2 ||
		return
	echo "${BASH_REMATCH[1]}"
}

# rx_of NS IFNAME: vpn_rx_packets of peer 1.
rx_of()
{
	local out

	out=$(cli "$1" get_peer "$2" 1) || return
	field vpn_rx_packets "$out"
}

rx_reached() { local n; n=$(rx_of "$1" "$2") && [ "$n" -ge "$3" ]; }

# flowing u|t: traffic runs through the tunnel now: the server's peer
# receives 10 more packets.
flowing()
{
	local sdev cns crole vns vrole cdev saddr caddr base

	tunnel_vars "$1"
	base=$(rx_of "$VS" "$sdev")
	wait_until rx_reached "$VS" "$sdev" $((base + 10)) ||
		fail "no traffic through $sdev"
}

# count_peers NS IFNAME: how many peers a dump of IFNAME lists; nothing
# if the dump fails.
count_peers()
{
	local out

	out=$(cli "$1" get_peer "$2") || return 1
	grep -c '^peer ' <<<"$out" || true
}

# tally NS IFNAME CLASS: add the bytes IFNAME carried, both ways, to the
# total of CLASS, before the device goes.
tally()
{
	local b

	link_exists "$1" "$2" || return 0
	b=$(ip -n "$1" -s -j link show dev "$2" |
	    jq '.[0].stats64 | .rx.bytes + .tx.bytes')
	count_add "bytes.$3" "$b"
}

tally_all()
{
	tally "$VU" tunu tunnel
	tally "$VT" tunt tunnel
	tally "$SRV" tun2 sink
}

# alive LOG: the process of LOG.pid runs.
alive()
{
	local pid

	[ -f "$1.pid" ] || return 1
	read -r pid <"$1.pid"
	! proc_gone "$pid"
}

# proc_stop LOG: stop the process of LOG.pid, if any, and forget it.
proc_stop()
{
	[ -f "$1.pid" ] || return 0
	bg_stop "$1"
	rm -f "$1.pid"
}

# roles_stop ROLE...: every process of these roles (srv, vs, cu, vu, ct,
# vt), all signalled first, then waited for.
roles_stop()
{
	local r f pid

	for r in "$@"; do
		for f in "$TMPDIR/$r".*.log.pid; do
			[ -f "$f" ] || continue
			read -r pid <"$f"
			kill "$pid" 2>/dev/null || true
		done
	done
	for r in "$@"; do
		for f in "$TMPDIR/$r".*.log.pid; do
			[ -f "$f" ] || continue
			read -r pid <"$f"
			wait_until proc_gone "$pid" ||
				fail "process $pid does not end"
			rm -f "$f"
		done
	done
}

# pids_prune: forget the processes that ended, so that the exit does not
# wait for each of them again.
pids_prune()
{
	local pid keep=

	while read -r pid; do
		[ -d "/proc/$pid" ] && keep="$keep $pid"
	done <"$OVPN_PIDS"
	echo "$keep" | tr ' ' '\n' >"$OVPN_PIDS"
}

# net_up: whichever of the namespaces, links and the sink is missing.
# A closed connection whose end is gone retransmits its FIN only twice
# (tcp_orphan_retries): at the default of 8, over a tunnel loaded enough
# to stretch the retransmission timeout, that took more than the 150 s
# tcp_settle allows, and the namespace stayed until it gave up.
net_up()
{
	local ns

	for ns in "$SRV" "$VS" "$CU" "$VU" "$CT" "$VT"; do
		[ -e "/run/netns/$ns" ] && continue
		ns_add "$ns"
		in_netns "$ns" sysctl -qw net.ipv4.tcp_orphan_retries=2
	done
	link_exists "$SRV" veth1 ||
		veth_pair "$SRV" veth1 10.10.1.1 "$CU" eth0 10.10.1.2
	link_exists "$SRV" veth2 ||
		veth_pair "$SRV" veth2 10.10.2.1 "$CT" eth0 10.10.2.2
	link_exists "$SRV" sink0 && return 0
	# What leaves through sink0 is gone: no ARP, and its frames are
	# addressed to sink0 itself, which sink1 does not take.
	ip -n "$SRV" -b - <<-EOF
		link add sink0 type veth peer name sink1
		link set sink0 arp off up
		link set sink1 up
		route add 10.30.0.0/16 dev sink0
	EOF
}

# dev_new NS IFNAME p2p|mp: a new ovpn device, instead of any old one.  A
# P2P one gets its parallel path (the "parallel-crypto" private flag),
# so that the churn deletes devices, peers and keys, namespaces and the
# module with packets queued there too.
dev_new()
{
	ip -n "$1" link del "$2" 2>/dev/null || true
	cli "$1" new_iface "$2" "$3" >/dev/null
	[ "$3" != p2p ] ||
		in_netns "$1" ethtool --set-priv-flags "$2" parallel-crypto on
}

# dev_move NS IFNAME TO ADDR: move the device to namespace TO, where it
# gets its address and goes up.
dev_move()
{
	ip -n "$1" link set "$2" netns "$3"
	ip -n "$3" -b - <<-EOF
		addr add $4/24 dev $2
		link set $2 up
	EOF
}

# keys_both SNS SDEV CNS CDEV SLOT KEY_ID: a key for both ends of a tunnel,
# direction 0 at the server.
keys_both()
{
	cli "$1" new_key "$2" 1 "$5" "$6" "$ALG" 0 "$KEY"
	cli "$3" new_key "$4" 1 "$5" "$6" "$ALG" 1 "$KEY"
}

# tunnel_up u|t: both ends afresh, with key 1; a ping passes.  The ends
# of a tunnel start afresh together: a new end's packet ids start at 1,
# which the other end's replay window would refuse.  Each device is made
# next to its socket's process, gets its peer there and is moved to its
# VPN namespace.
tunnel_up()
{
	local sdev cns crole vns vrole cdev saddr caddr peer listen connect
	local slog=$TMPDIR/srv.$1.log clog peers=$TMPDIR/peers.$1

	tunnel_vars "$1"
	clog=$TMPDIR/$crole.cli.log
	if [ "$1" = u ]; then
		# The IPv6 VPN address is never used: PEER_SET rehashes it.
		peer="1 10.10.1.2 2001 $caddr fd00:5::2"
		listen=(new_multi_peer "$sdev" 1194)
		connect=(new_peer "$cdev" 1 2001 10.10.1.1 1194)
	else
		peer="1 10.10.2.2 $caddr -"
		listen=(tcp_listen "$sdev" 1195)
		connect=(new_tcp_peer "$cdev" 1 10.10.2.1 1195)
	fi
	proc_stop "$slog"
	proc_stop "$clog"
	ip -n "$VS" link del "$sdev" 2>/dev/null || true
	ip -n "$vns" link del "$cdev" 2>/dev/null || true
	dev_new "$SRV" "$sdev" mp
	dev_new "$cns" "$cdev" p2p
	echo "$peer" >"$peers"
	start_tracked "$slog" nsenter --net="/run/netns/$SRV" \
		"$OVPN_CLI" "${listen[@]}" "$peers" stay
	start_tracked "$clog" nsenter --net="/run/netns/$cns" \
		"$OVPN_CLI" "${connect[@]}" stay
	# The TCP server has its peer once it has accepted the connection.
	if [ "$1" = t ]; then
		log_wait "$slog" '^PEER 1$'
	fi
	dev_move "$SRV" "$sdev" "$VS" "$saddr"
	dev_move "$cns" "$cdev" "$vns" "$caddr"
	keys_both "$VS" "$sdev" "$vns" "$cdev" primary 1
	echo 1 >"$TMPDIR/kid.$1"
	in_netns "$vns" ping -q -c 1 -w "$(secs 10)" "$saddr" >/dev/null ||
		fail "tunnel $1 carries no ping"
}

# iperf_up u|t: the iperf3 server and client of a tunnel, (re)started
# together: a server whose client vanished may wait for it long.
iperf_up()
{
	local sdev cns crole vns vrole cdev saddr caddr port=5201

	tunnel_vars "$1"
	[ "$1" = t ] && port=5202
	proc_stop "$TMPDIR/$vrole.iperf.log"
	proc_stop "$TMPDIR/vs.iperf-$1.log"
	bg_start "$TMPDIR/vs.iperf-$1.log" nsenter --net="/run/netns/$VS" \
		iperf3 -s -p "$port"
	wait_until tcp_listening "$VS" "$port" ||
		fail "iperf3 does not listen"
	bg_start "$TMPDIR/$vrole.iperf.log" nsenter --net="/run/netns/$vns" \
		iperf3 -c "$saddr" -p "$port" -P "$STREAMS" -b "$RATE" \
		-t 3600 -i 0
}

# traffic_up: whatever traffic is not running (its namespace went) starts
# again: iperf3 and a 20 Hz ping (PING_GAP) each way through each tunnel,
# the sender to tun2's peers.
traffic_up()
{
	local t sdev cns crole vns vrole cdev saddr caddr

	for t in u t; do
		tunnel_vars "$t"
		if ! alive "$TMPDIR/$vrole.iperf.log" ||
		   ! alive "$TMPDIR/vs.iperf-$t.log"; then
			iperf_up "$t"
		fi
		alive "$TMPDIR/$vrole.ping.log" ||
			bg_start "$TMPDIR/$vrole.ping.log" nsenter \
				--net="/run/netns/$vns" ping -q -i "$PING_GAP" \
				"$saddr"
		alive "$TMPDIR/vs.ping-$t.log" ||
			bg_start "$TMPDIR/vs.ping-$t.log" nsenter \
				--net="/run/netns/$VS" ping -q -i "$PING_GAP" \
				"$caddr"
	done
	alive "$TMPDIR/srv.send.log" ||
		bg_start "$TMPDIR/srv.send.log" nsenter \
			--net="/run/netns/$SRV" python3 -c "$SENDER" 100.64.0 \
			11 "$NPEERS" "$SEND_GAP"
}

mp_dev_up()
{
	link_exists "$SRV" tun2 && return 0
	cli "$SRV" new_iface tun2 mp >/dev/null
	link_up "$SRV" tun2 100.64.0.1
}

everything_up()
{
	net_up
	mp_dev_up
	tunnel_up u
	tunnel_up t
	traffic_up
}

# all_sane: pings pass both ways through both tunnels, each server device
# has its one peer, the churn device none.
all_sane()
{
	in_netns "$VU" ping -q -c 1 -w "$(secs 10)" 5.5.5.1 >/dev/null
	in_netns "$VT" ping -q -c 1 -w "$(secs 10)" 5.5.6.1 >/dev/null
	in_netns "$VS" ping -q -c 1 -w "$(secs 10)" 5.5.5.2 >/dev/null
	in_netns "$VS" ping -q -c 1 -w "$(secs 10)" 5.5.6.2 >/dev/null
	expect_eq "peers of tun0" 1 "$(count_peers "$VS" tun0)"
	expect_eq "peers of tun1" 1 "$(count_peers "$VS" tun1)"
	expect_eq "peers of tun2" 0 "$(count_peers "$SRV" tun2)"
}

topology() { everything_up; all_sane; }

# timed FUNCTION...: FUNCTION, then a note of how long it took.
timed()
{
	local t0=$EPOCHSECONDS

	"$@"
	ktap_note "$1: $((EPOCHSECONDS - t0)) s"
}

# sent_through ID: packets to peer ID of tun2 left, encrypted.
sent_through()
{
	local out

	out=$(cli "$SRV" get_peer tun2 "$1") &&
		[ "$(field link_tx_packets "$out")" -gt 0 ]
}

# mp_dump_ok R: a dump lists round R's peers; the sender reached those
# without a key (their vpn_tx_packets), but nothing left through them
# (dropped for want of a key).
mp_dump_ok()
{
	local dump n tried sent

	dump=$(cli "$SRV" get_peer tun2)
	read -r n tried sent < <(awk -v keyed=$(($1 * 1000 + 2)) '
		$1 == "peer" {
			n++
			delete f
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				f[kv[1]] = kv[2]
			}
			if (f["id"] > keyed) {
				tried += f["vpn_tx_packets"]
				sent += f["link_tx_packets"]
			}
		}
		END { print n + 0, tried + 0, sent + 0 }' <<<"$dump")
	expect_eq "peers of tun2" "$NPEERS" "$n"
	[ "$tried" -gt 0 ] || fail "no packet reached the peers without a key"
	expect_eq "packets sent through the peers without a key" 0 "$sent"
}

# mp_peers_up R: round R's peers on tun2, all on the socket of the process
# of srv.mp.log; the first two get a key; traffic leaves through the
# first one, and through none of those without.
mp_peers_up()
{
	local base=$(($1 * 1000)) i

	for ((i = 1; i <= NPEERS; i++)); do
		echo "$((base + i)) 10.30.$(($1 % 250)).$i 1194" \
			"100.64.0.$((10 + i)) -"
	done >"$TMPDIR/peers.mp"
	start_tracked "$TMPDIR/srv.mp.log" nsenter --net="/run/netns/$SRV" \
		"$OVPN_CLI" new_multi_peer tun2 0 "$TMPDIR/peers.mp" stay
	for i in 1 2; do
		cli "$SRV" new_key tun2 $((base + i)) primary 1 "$ALG" 0 "$KEY"
	done
	count_add peers_added "$NPEERS"
	count_add keys 2
	wait_until sent_through $((base + 1)) ||
		fail "nothing left through peer $((base + 1))"
	mp_dump_ok "$1"
}

# listener LOG NS COUNT: collect COUNT notifications in NS into LOG, for
# as long as it takes (lib.sh's ntf_listen gives up after 20 s).
listener()
{
	bg_start "$1" nsenter --net="/run/netns/$2" "$OVPN_CLI" \
		listen_mcast 3600 count "$3"
	log_wait "$1" '^READY'
}

# heard LOG COUNT: the listener of LOG got its COUNT notifications.
heard()
{
	log_wait "$1" '^ntf ' "$2"
	bg_stop "$1"
}

# ntf_count LOG R REASON: peer_del notifications in LOG of round R's
# peers for REASON.
ntf_count()
{
	awk -v lo=$(($2 * 1000)) -v hi=$(($2 * 1000 + NPEERS)) -v why="$3" '
		$1 == "ntf" && $2 == "peer_del" {
			delete f
			for (i = 3; i <= NF; i++) {
				split($i, kv, "=")
				f[kv[1]] = kv[2]
			}
			if (f["id"] > lo && f["id"] <= hi && f["reason"] == why)
				n++
		}
		END { print n + 0 }' "$1"
}

# peers_del R: two of round R's peers are deleted one by one, the others
# by closing their socket.
peers_del()
{
	local base=$(($1 * 1000))

	cli "$SRV" del_peer tun2 $((base + 1))
	cli "$SRV" del_peer tun2 $((base + NPEERS))
	expect_eq "peers of tun2" $((NPEERS - 2)) "$(count_peers "$SRV" tun2)"
	proc_stop "$TMPDIR/srv.mp.log"
	expect_eq "peers of tun2" 0 "$(count_peers "$SRV" tun2)"
	count_add peers_deleted "$NPEERS"
}

# The notifications are checked at the end of the kind.
peer_round() { mp_peers_up "$1"; peers_del "$1"; }

# peers_notified LOG FIRST LAST: of each round FIRST to LAST, two peers
# went for userspace, the others with their socket, each exactly once.
peers_notified()
{
	local r

	for ((r = $2; r <= $3; r++)); do
		expect_eq "round $r: peers deleted by userspace" 2 \
			"$(ntf_count "$1" "$r" userspace)"
		expect_eq "round $r: peers gone with their socket" \
			$((NPEERS - 2)) \
			"$(ntf_count "$1" "$r" transport_disconnect)"
	done
}

# key_id NS IFNAME SLOT: the key id in that slot of peer 1.
key_id()
{
	local out

	out=$(cli "$1" get_key "$2" 1 "$3") || return
	field key_id "$out"
}

# A new key as the secondary at both ends, swapped in at both (the client
# first: until the server swaps, each end has the key the other sends
# with), the old one deleted.  Odd rounds the UDP tunnel, even ones TCP.
key_round()
{
	local t=t sdev cns crole vns vrole cdev saddr caddr kid

	(($1 % 2)) && t=u
	tunnel_vars "$t"
	read -r kid <"$TMPDIR/kid.$t"
	kid=$(((kid + 1) % 8))
	keys_both "$VS" "$sdev" "$vns" "$cdev" secondary "$kid"
	cli "$vns" swap_keys "$cdev" 1
	cli "$VS" swap_keys "$sdev" 1
	cli "$VS" del_key "$sdev" 1 secondary
	cli "$vns" del_key "$cdev" 1 secondary
	echo "$kid" >"$TMPDIR/kid.$t"
	count_add keys 2
	count_add keys_swapped 2
}

# keys_consistent: at both ends of each tunnel the primary key is the one
# of its last round, and no secondary is left.
keys_consistent()
{
	local t sdev cns crole vns vrole cdev saddr caddr kid

	for t in u t; do
		tunnel_vars "$t"
		read -r kid <"$TMPDIR/kid.$t"
		expect_eq "primary key of $sdev" "$kid" \
			"$(key_id "$VS" "$sdev" primary)"
		expect_eq "primary key of $cdev" "$kid" \
			"$(key_id "$vns" "$cdev" primary)"
		expect_err ENOENT cli "$VS" get_key "$sdev" 1 secondary
		expect_err ENOENT cli "$vns" get_key "$cdev" 1 secondary
	done
}

srv_peer_u() { cli "$VS" get_peer tun0 1; }
remote_is() { srv_peer_u | grep -q " remote=$1 "; }

# Peer 1 of tun0 takes other VPN addresses (a rehash): a packet to the
# new IPv4 one leaves through it, exactly one, as the packets to the old
# one find no peer now.  Then it takes its own back, and a remote
# endpoint nobody uses: the client's next packet floats it back.
set_round()
{
	local a=$((100 + $1)) before after

	cli "$VS" set_peer tun0 1 vpn "5.5.5.$a" vpn "fd00:5::$a"
	before=$(srv_peer_u)
	grep -q " vpn4=5.5.5.$a vpn6=fd00:5::$a " <<<"$before" ||
		fail "not rehashed: $before"
	# One datagram, sent and forgotten: the client drops it.
	in_netns "$VS" bash -c "echo >/dev/udp/5.5.5.$a/9"
	after=$(srv_peer_u)
	expect_eq "packets through peer 1 as 5.5.5.$a" 1 \
		"$(($(field link_tx_packets "$after") - \
		    $(field link_tx_packets "$before")))"
	cli "$VS" set_peer tun0 1 vpn 5.5.5.2 vpn fd00:5::2 \
		remote 10.10.1.99 2099
	wait_until remote_is 10.10.1.2:2001 ||
		fail "peer 1 did not float back: $(srv_peer_u)"
	srv_peer_u | grep -q " vpn4=5.5.5.2 vpn6=fd00:5::2 " ||
		fail "VPN addresses not back: $(srv_peer_u)"
}

peer_gone() { ! cli "$1" get_peer "$2" 1 >/dev/null; }

# close_socket u|t srv|cli: the process that holds that end's transport
# socket ends under traffic: the peer on it goes, for a disconnect, and
# on TCP the other end's peer too.  Then the tunnel starts afresh.
close_socket()
{
	local sdev cns crole vns vrole cdev saddr caddr ns dev proc other odev
	local sns log=$TMPDIR/close.ntf

	tunnel_vars "$1"
	if [ "$2" = srv ]; then
		ns=$VS dev=$sdev sns=$SRV proc=srv.$1 other=$vns odev=$cdev
	else
		ns=$vns dev=$cdev sns=$cns proc=$crole.cli other=$VS odev=$sdev
	fi
	flowing "$1"
	ntf_listen "$log" 1 nsenter --net="/run/netns/$sns"
	proc_stop "$TMPDIR/$proc.log"
	ntf_expect "$log" '^ntf peer_del .* id=1 reason=transport_disconnect'
	expect_err ENOENT cli "$ns" get_peer "$dev" 1
	if [ "$1" = t ]; then
		wait_until peer_gone "$other" "$odev" ||
			fail "the other end's peer stays"
	fi
	count_add sockets_closed 1
	tunnel_up "$1"
}

close_round()
{
	case $(($1 % 4)) in
	0) close_socket u srv ;;
	1) close_socket t srv ;;
	2) close_socket u cli ;;
	3) close_socket t cli ;;
	esac
}

# delete_dev u|t srv|cli: that end's device goes under traffic, its peer
# with it, for a teardown; then the tunnel starts afresh.
delete_dev()
{
	local sdev cns crole vns vrole cdev saddr caddr ns dev sns
	local log=$TMPDIR/del.ntf

	tunnel_vars "$1"
	ns=$vns dev=$cdev sns=$cns
	[ "$2" = srv ] && ns=$VS dev=$sdev sns=$SRV
	flowing "$1"
	[ "$2" = cli ] && tally "$vns" "$cdev" tunnel
	ntf_listen "$log" 1 nsenter --net="/run/netns/$sns"
	ip -n "$ns" link del "$dev"
	ntf_expect "$log" '^ntf peer_del .* id=1 reason=teardown'
	! link_exists "$ns" "$dev" || fail "$dev is still there"
	tunnel_up "$1"
}

# delete_mp_dev R: tun2 goes with round R's peers, under traffic.
delete_mp_dev()
{
	local log=$TMPDIR/del.ntf

	listener "$log" "$SRV" "$NPEERS"
	mp_peers_up "$1"
	tally "$SRV" tun2 sink
	ip -n "$SRV" link del tun2
	heard "$log" "$NPEERS"
	expect_eq "peers gone with tun2" "$NPEERS" \
		"$(ntf_count "$log" "$1" teardown)"
	! link_exists "$SRV" tun2 || fail "tun2 is still there"
	# Its socket is a plain one again.
	proc_stop "$TMPDIR/srv.mp.log"
	count_add peers_deleted "$NPEERS"
	mp_dev_up
}

dev_round()
{
	case $(($1 % 5)) in
	0) delete_dev u srv ;;
	1) delete_dev t cli ;;
	2) delete_mp_dev "$1" ;;
	3) delete_dev t srv ;;
	4) delete_dev u cli ;;
	esac
	count_add devs_deleted 1
}

# delete_vpn_ns NS ROLE: VPN namespace NS goes under traffic, then the
# processes in it; then it is dismantled with its devices, whose peers
# are still there.
delete_vpn_ns()
{
	ip netns del "$1"
	roles_stop "$2"
}

# detached LOG: the socket of the process of LOG is a plain one again:
# what the other end sends through the tunnel reaches the process (while
# ovpn has the socket, it keeps the data packets to itself).
detached()
{
	log_wait "$1" '^CTRL' || fail "$1: the socket is not given back"
}

# delete_client_ns u|t: a client's VPN namespace goes; the server's pings
# reach the client's process, its socket detached from the gone device.
delete_client_ns()
{
	local sdev cns crole vns vrole cdev saddr caddr

	tunnel_vars "$1"
	flowing "$1"
	tally "$vns" "$cdev" tunnel
	delete_vpn_ns "$vns" "$vrole"
	detached "$TMPDIR/$crole.cli.log"
	net_up
	tunnel_up "$1"
	traffic_up
}

# delete_srv_ns: the server's VPN namespace goes with tun0 and tun1, whose
# sockets the processes in srv hold: the clients' packets reach them.
delete_srv_ns()
{
	flowing u
	flowing t
	delete_vpn_ns "$VS" vs
	detached "$TMPDIR/srv.u.log"
	detached "$TMPDIR/srv.t.log"
	net_up
	tunnel_up u
	tunnel_up t
	traffic_up
}

ns_round()
{
	case $(($1 % 3)) in
	0) delete_client_ns u ;;
	1) delete_client_ns t ;;
	2) delete_srv_ns ;;
	esac
	count_add netns_deleted 1
}

# rmmod_bounded: rmmod ovpn, which must neither fail nor hang (it waits
# for every device being unregistered anywhere).
rmmod_bounded()
{
	local pid

	wait_until grep -qx 0 /sys/module/ovpn/refcnt ||
		fail "refcnt of ovpn: $(cat /sys/module/ovpn/refcnt)"
	rmmod ovpn &
	pid=$!
	wait_until proc_gone "$pid" || fail "rmmod ovpn hangs"
	wait "$pid" || fail "rmmod ovpn failed"
	[ ! -d /sys/module/ovpn ] || fail "the module is still there"
}

# Unload with every device up, round R's peers on tun2 and traffic
# everywhere: every device goes with the module.
module_round()
{
	local d

	flowing u
	flowing t
	mp_peers_up "$1"
	tally_all
	rmmod_bounded
	for d in "$VS tun0" "$VS tun1" "$SRV tun2" "$VU tunu" "$VT tunt"; do
		# shellcheck disable=SC2086 # namespace and device
		! link_exists $d || fail "$d survived the unload"
	done
	proc_stop "$TMPDIR/srv.mp.log"
	count_add peers_deleted "$NPEERS"
	ovpn_load
	mp_dev_up
	tunnel_up u
	tunnel_up t
}

# churn NAME ROUNDS FUNCTION: FUNCTION with rounds 1 to ROUNDS, then every
# tunnel is sane.
churn()
{
	local name=$1 n=$2 fn=$3 r t0=$EPOCHSECONDS

	for ((r = 1; r <= n; r++)); do
		echo "round $r"
		"$fn" "$r"
	done
	all_sane
	count_add "rounds.$name" "$n"
	ktap_note "$name: $n rounds in $((EPOCHSECONDS - t0)) s"
}

# Every peer of every round goes once, for its reason.
peer_add_del()
{
	local log=$TMPDIR/peers.ntf a d

	a=$(count_of peers_added)
	d=$(count_of peers_deleted)
	listener "$log" "$SRV" $((ROUNDS * NPEERS))
	churn peer_add_del "$ROUNDS" peer_round
	heard "$log" $((ROUNDS * NPEERS))
	peers_notified "$log" 1 "$ROUNDS"
	ktap_note "peers added $(($(count_of peers_added) - a))," \
		"deleted $(($(count_of peers_deleted) - d))"
}

key_new_swap_del()
{
	local s

	s=$(count_of keys_swapped)
	churn key_new_swap_del "$ROUNDS" key_round
	keys_consistent
	ktap_note "keys swapped $(($(count_of keys_swapped) - s))"
}

# Every round's float is notified, once, with the client's own endpoint.
peer_set_rehash_float()
{
	local log=$TMPDIR/float.ntf

	listener "$log" "$SRV" "$ROUNDS"
	churn peer_set_rehash_float "$ROUNDS" set_round
	heard "$log" "$ROUNDS"
	expect_eq "floats back to 10.10.1.2:2001 notified" "$ROUNDS" \
		"$(grep -c '^ntf peer_float .* id=1 remote=10.10.1.2:2001$' \
		   "$log")"
}

socket_close() { churn socket_close "$TEARDOWNS" close_round; }
iface_delete() { churn iface_delete "$TEARDOWNS" dev_round; }
netns_delete() { churn netns_delete "$HEAVY" ns_round; }

module_reload()
{
	churn module_reload "$HEAVY" module_round
}

# A round of each kind, or of one like it (the teardown before the
# baseline unloads the module): what is allocated once, on first use, is
# so before the baseline.
warm_up()
{
	local log=$TMPDIR/warm.ntf p0 p1

	listener "$log" "$SRV" "$NPEERS"
	read -r p0 _ <<<"$(mem_now)"
	mp_peers_up 0
	read -r p1 _ <<<"$(mem_now)"
	ktap_note "Percpu grew by $((p1 - p0)) KiB with $NPEERS more peers"
	peers_del 0
	heard "$log" "$NPEERS"
	peers_notified "$log" 0 0
	key_round 1
	key_round 2
	set_round 0
	close_socket t cli
	delete_client_ns u
	all_sane
}

# tcp_quiet NS...: no TCP connection in these namespaces is still to be
# closed (TIME-WAIT and orphaned FIN-WAIT-2 ones do not count): one whose
# FIN is never answered would keep its namespace alive for minutes.
tcp_quiet()
{
	local ns

	for ns in "$@"; do
		! in_netns "$ns" ss -Htn state established state syn-sent \
			state fin-wait-1 state close-wait state last-ack \
			state closing | grep -q . || return 1
	done
}

# tcp_settle NS...: tcp_quiet within 150 s (secs): a connection whose
# process ended retransmits its FIN to an end that is gone twice before
# it gives up (net_up).  Shows what is left if not.
tcp_settle()
{
	local ns

	wait_for 150 tcp_quiet "$@" && return 0
	for ns in "$@"; do
		echo "$ns: $(in_netns "$ns" ss -Htn | tr '\n' ';')"
	done
	fail "TCP still open"
}

# teardown: the iperf3 clients stop while the tunnels still carry the
# closes of their connections; then every process and namespace goes,
# then the module.
teardown()
{
	local ns all="$SRV $VS $CU $VU $CT $VT"

	tally_all
	roles_stop vu vt
	tcp_settle "$VU" "$VT" "$VS"
	roles_stop srv vs cu ct
	pids_prune
	# shellcheck disable=SC2086 # a list
	tcp_settle $all
	for ns in $all; do
		ip netns del "$ns"
	done
	rmmod_bounded
}

# mem_quiesce: give back what can be given back at once: reclaimable
# caches, and the free slabs SLUB keeps cached per CPU and partial.
# OVPN_KEEP_CACHES=1 keeps the page cache: the lab's debug kernels, whose
# root is virtiofs, fault in every program started after it was dropped
# (ovpn loaded or not).  Only reclaimable memory stays; no check reads it.
mem_quiesce()
{
	local f

	[ "${OVPN_KEEP_CACHES:-0}" = 1 ] ||
		echo 3 >/proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null || true
	done
}

# slab_caches: "<bytes> <cache>" of the objects in use in each slab cache
# that is not reclaimable, from SLUB's counts (exact once mem_quiesce
# flushed the per-CPU slabs).  Finer than SUnreclaim, which counts whole
# slabs, partly used ones too.  Not shmem_inode_cache: the inodes of this
# script's own files, which it keeps creating.  Nor the bookkeeping of
# the debug kernels' checkers, which describes other objects rather than
# being any: the records DEBUG_OBJECTS counts in use grow with any
# traffic, ovpn loaded or not, and stay after it (megabytes after the
# churn; its count is noted below), and kmemleak has one record per live
# allocation.  A leaked object shows in its own cache, and in kmemleak's
# scan.
slab_caches()
{
	local d rec objs size

	for d in /sys/kernel/slab/*; do
		[ -L "$d" ] && continue
		case ${d##*/} in
		shmem_inode_cache | debug_objects_cache | kmemleak_object)
			continue ;;
		esac
		read -r rec <"$d/reclaim_account"
		[ "$rec" = 1 ] && continue
		read -r objs _ <"$d/objects"
		read -r size <"$d/slab_size"
		echo "$((objs * size)) ${d##*/}"
	done
}

# mem_now [FILE]: Percpu, SUnreclaim, the slab objects in use and those
# of the kmalloc caches (where every object of ovpn's lives), all in KiB;
# the slab caches to FILE.
mem_now()
{
	local f=${1:-$TMPDIR/slab.now}

	mem_quiesce
	slab_caches >"$f"
	echo "$(meminfo Percpu) $(meminfo SUnreclaim)" \
	     "$(awk '{ n += $1 } $2 ~ /^kmalloc-/ { k += $1 }
		    END { print int(n / 1024), int(k / 1024) }' "$f")"
}

# slab_growth BEFORE AFTER: the three caches of slab_caches files that
# grew most, each with up to three of the names merged into it, if any.
slab_growth()
{
	local n c a names

	awk 'NR == FNR { b[$2] = $1; next }
	     $1 > b[$2] { print $1 - b[$2], $2 }' "$1" "$2" |
		sort -rn | head -n 3 |
	while read -r n c; do
		names=
		for a in /sys/kernel/slab/*; do
			[ -L "$a" ] && [ "$a" -ef "/sys/kernel/slab/$c" ] &&
				names="$names ${a##*/}"
		done
		# shellcheck disable=SC2086 # the first few
		names=$(echo $names | cut -d' ' -f1-3)
		echo "$c${names:+ ($names)} +$((n / 1024)) KiB;"
	done
}

# odebug_in_use: how many records DEBUG_OBJECTS counts in use (for
# timers, works, rcu_heads, percpu_counters) and keeps for reuse, where
# the kernel has it.
odebug_in_use()
{
	local f=/sys/kernel/debug/debug_objects/stats

	[ -r "$f" ] || return 0
	awk '$1 == "pool_used" { u = $3 }
	     $1 == "pool_free" || $1 == "on_free_list" { f += $3 }
	     END { print u, f }' "$f"
}

# netns_objects: how many network namespaces exist, dismantled or not:
# the objects in use of the net_namespace cache.
netns_objects()
{
	local n

	mem_quiesce
	read -r n _ </sys/kernel/slab/net_namespace/objects
	echo "$n"
}

# netns_cycle: a namespace made and deleted at once.  The kernel frees
# the last namespaces it dismantled only when it next dismantles one: this
# one's dismantling frees them, and it takes their place.
netns_cycle()
{
	ip netns add "ovpn-chx-$$"
	ip netns del "ovpn-chx-$$"
}

# netns_count_start: how many namespaces exist once a netns_cycle settled:
# the count unchanged for three readings a second apart, at most 30 s.
netns_count_start()
{
	local n last=-1 same=0

	netns_cycle
	for _ in $(seq "$(secs 30)"); do
		n=$(netns_objects)
		if [ "$n" = "$last" ]; then
			same=$((same + 1))
			[ "$same" -ge 2 ] && break
		else
			same=0
		fi
		last=$n
		sleep 1
	done
	echo "$n"
}

# netns_freed: the namespaces of this script are freed, with all they
# held, within 60 s: no more namespaces exist than at its start.  A
# netns_cycle every 5 s: one that ran along with the dismantling of the
# script's own namespaces is freed with them only at the next.  One that
# something still holds would stay (a socket, device or peer of ovpn's
# that kept a reference to it).
netns_freed()
{
	local n0 n i=0

	# Read once a second: each reading shrinks every slab cache.
	read -r n0 <"$TMPDIR/netns"
	wait_every 1 60 netns_at_most "$n0" && return 0
	fail "$n network namespaces exist, $n0 at the start"
}

# netns_at_most N: netns_freed's reading, into its n, with a netns_cycle
# every fifth one (its i): no more than N namespaces exist.
netns_at_most()
{
	((i++ % 5)) || netns_cycle
	n=$(netns_objects)
	[ "$n" -le "$1" ]
}

# percpu_steady: take_baseline's reading, into its p, s, o and k, and its
# count of readings in a row with the same Percpu (same, last): three.
percpu_steady()
{
	read -r p s o k <<<"$(mem_now "$TMPDIR/slab.base")"
	if [ "$p" = "$last" ]; then
		same=$((same + 1))
	else
		same=0
	fi
	last=$p
	[ "$same" -ge 2 ]
}

# The baseline, once the teardown of the warm-up settled: its namespaces
# freed, then per-CPU memory (populated percpu pages, freed by a
# background balance work) unchanged for three readings a second apart,
# at most 60 s.
take_baseline()
{
	local p s o k last=-1 same=0

	teardown
	netns_freed
	wait_every 1 60 percpu_steady || true
	echo "$p $s $o $k $(count_of peers_added)" >"$TMPDIR/baseline"
	odebug_in_use >"$TMPDIR/odebug"
	ktap_note "baseline: Percpu $p KiB, SUnreclaim $s KiB, slab objects" \
		"in use $o KiB, $k KiB of them kmalloc ($(nproc) CPUs online," \
		"possible $(cat /sys/devices/system/cpu/possible))"
	ovpn_load
}

module_unloads() { teardown; }

no_device_waited()
{
	local n base

	n=$(dmesg | grep -c "$WAITING" || true)
	read -r base <"$TMPDIR/waiting"
	expect_eq "\"$WAITING\" in the kernel log" "$base" "$n"
}

# ncpus_possible: how many CPUs per-CPU memory is allocated for.
ncpus_possible()
{
	local r n=0 a b

	for r in $(tr ',' ' ' </sys/devices/system/cpu/possible); do
		a=${r%-*}
		b=${r#*-}
		n=$((n + b - a + 1))
	done
	echo "$n"
}

# Per-CPU memory and slab come back to the baseline, once the namespaces
# are freed.  Frees lag (RCU, works, the percpu balance work): up to 60 s
# to get there.  The bounds, each well below what a leak would cost:
#
# - all slab objects in use: half of one peer leaked a peer added, as
#   kernel threads (worker pools) come and go with the load.
# - Percpu: it counts populated pages, and the allocator keeps up to four
#   empty ones a CPU populated; a leak shows once it needs new pages
#   (the warm-up notes what a round's peers need).  Bound: those four.
#   One peer's per-CPU memory leaked a peer added is well above it.
# - SUnreclaim counts whole slabs, partly used ones too: it moves by
#   hundreds of KiB with no leak at all, and is only shown.
# - So are the kmalloc objects in use, where all of ovpn's objects live:
#   the rest of the kernel moves them too, by 24 KiB in a run with no
#   leak, about what a peer leaked every round would cost.  kmemleak, on
#   the debug kernels, finds single objects.
# memory_within_bounds: memory_back_to_baseline's reading, into its p, s,
# o and k: slab objects and Percpu within its bounds.
memory_within_bounds()
{
	read -r p s o k <<<"$(mem_now)"
	[ $((o - o0)) -le "$bound_o" ] && [ $((p - p0)) -le "$bound_p" ]
}

memory_back_to_baseline()
{
	local p0 s0 o0 k0 n0 p s o k u0 f0 u f rounds peers ncpus ok=
	local leak_k leak_o leak_p bound_o bound_p

	read -r p0 s0 o0 k0 n0 <"$TMPDIR/baseline"
	netns_freed
	rounds=$(count_of rounds.all)
	peers=$(($(count_of peers_added) - n0))
	ncpus=$(ncpus_possible)
	leak_k=$((rounds * PEER_SLAB / 1024))
	leak_o=$((peers * PEER_SLAB / 1024))
	leak_p=$((peers * PEER_PERCPU * ncpus / 1024))
	bound_o=$((leak_o / 2))
	bound_p=$((4 * 4 * ncpus))
	wait_every 1 60 memory_within_bounds && ok=1
	ktap_note "kmalloc objects in use: baseline $k0 KiB, now $k KiB" \
		"($((k - k0)) KiB, not checked); a peer leaked in each of" \
		"$rounds rounds: $leak_k KiB"
	ktap_note "slab objects in use: baseline $o0 KiB, now $o KiB" \
		"($((o - o0)) KiB), bound $bound_o KiB; each of $peers" \
		"peers leaked: $leak_o KiB"
	ktap_note "Percpu: baseline $p0 KiB, now $p KiB ($((p - p0)) KiB)," \
		"bound $bound_p KiB; each peer's leaked: $leak_p KiB"
	ktap_note "SUnreclaim (not checked): baseline $s0 KiB, now $s KiB" \
		"($((s - s0)) KiB)"
	ktap_note "grew most: $(slab_growth "$TMPDIR/slab.base" \
		"$TMPDIR/slab.now")"
	read -r u f <<<"$(odebug_in_use)"
	if [ -n "$u" ]; then
		read -r u0 f0 <"$TMPDIR/odebug"
		ktap_note "DEBUG_OBJECTS (not checked): records in use" \
			"$u0, now $u; kept for reuse $f0, now $f"
	fi
	[ -n "$ok" ] || fail "memory not back to the baseline"
}

totals()
{
	local k

	for k in peer_add_del key_new_swap_del peer_set_rehash_float \
		 socket_close iface_delete netns_delete module_reload; do
		echo "rounds of $k: $(count_of "rounds.$k")"
	done
	echo "peers added $(count_of peers_added), deleted" \
	     "$(count_of peers_deleted); keys installed $(count_of keys)," \
	     "swapped $(count_of keys_swapped); sockets closed" \
	     "$(count_of sockets_closed), devices deleted" \
	     "$(count_of devs_deleted), namespaces deleted" \
	     "$(count_of netns_deleted)"
	echo "bytes through the tunnels $(count_of bytes.tunnel), to the" \
	     "churned peers $(count_of bytes.sink)"
	echo "total time $((EPOCHSECONDS - START)) s"
}

ovpn_require
if ! command -v iperf3 >/dev/null; then
	printf 'TAP version 13\n1..0 # SKIP no iperf3\n'
	exit "$KSFT_SKIP"
fi
dmesg | grep -c "$WAITING" >"$TMPDIR/waiting"
netns_count_start >"$TMPDIR/netns"
count_add rounds.all $((ROUNDS * 3 + TEARDOWNS * 2 + HEAVY * 2))

ktap_plan 15
run_noted setup timed topology
run_noted warm_up timed warm_up
run_noted baseline timed take_baseline
run_noted setup_again timed topology
run_noted peer_add_del peer_add_del
run_noted key_new_swap_del key_new_swap_del
run_noted peer_set_rehash_float peer_set_rehash_float
run_noted socket_close socket_close
run_noted iface_delete iface_delete
run_noted netns_delete netns_delete
run_noted module_reload module_reload
run_noted module_unloads timed module_unloads
run_noted no_device_waited no_device_waited
run_noted memory_back_to_baseline timed memory_back_to_baseline
run_test module_loads_again ovpn_load
totals | ktap_diag
ktap_finish
