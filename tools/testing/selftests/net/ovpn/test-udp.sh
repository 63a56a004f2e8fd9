#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data channel over UDP: an MP server and P2P clients exchanging
# traffic through ovpn devices, over IPv4 and IPv6 transports.
#
#                       +-- veth 10.10.1.1/24 == 10.10.1.2 -- ns c1: tun1 (P2P)
#   ns srv: tun0 (MP) --+-- veth 10.10.2.1/24 == 10.10.2.2 -- ns c2: tun2 (P2P)
#   one UDP socket :1   +-- veth fd00:3::1/64 == fd00:3::2 -- ns c3: tun3 (P2P)
#
#   VPN: server 5.5.5.1, client N 5.5.5.(N+1); fd00:5::1, fd00:5::(N+1)
#   peer ids: server knows client N as N; clients send with tx_id N and
#   expect the server to send them id 10+N (asymmetric ids).

source "$(dirname "$0")/lib.sh"

ALG=${OVPN_ALG:-aes256}
KEY=$OVPN_DIR/key.hex
SRV=ovpn-srv-$$
CLIENTS="1 2 3"
SRV_PORT=1194
TMPDIR=$(mktemp -d)

ns() { echo "ovpn-c$1-$$"; }

cleanup()
{
	local pid c

	# Test stages run in subshells: background pids are kept in a file.
	for pid in $(cat "$TMPDIR/pids" 2>/dev/null); do
		kill "$pid" 2>/dev/null
	done
	ip netns del "$SRV" 2>/dev/null
	for c in $CLIENTS; do
		ip netns del "$(ns "$c")" 2>/dev/null
	done
	rm -rf "$TMPDIR"
}
trap cleanup EXIT

in_srv() { ip netns exec "$SRV" "$@"; }
in_c() { local c=$1; shift; ip netns exec "$(ns "$c")" "$@"; }

client_transport()
{
	case $1 in
	3) echo "fd00:3::2 fd00:3::1" ;;
	*) echo "10.10.$1.2 10.10.$1.1" ;;
	esac
}

# Start a background ovpn-cli holding a socket; wait until it is ready.
start_cli()
{
	local ns=$1 log=$2

	shift 2
	ip netns exec "$ns" "$OVPN_CLI" "$@" stay >"$log" 2>&1 &
	echo $! >>"$TMPDIR/pids"
	for _ in $(seq 100); do
		grep -q '^READY' "$log" && return 0
		grep -q '^ERR' "$log" && break
		sleep 0.1
	done
	cat "$log"
	return 1
}

setup_topology()
{
	local c peers=$TMPDIR/peers.txt
	local caddr saddr

	ip netns add "$SRV"
	# No router solicitations: they would add to the exact counts.
	in_srv sysctl -qw net.ipv6.conf.default.accept_ra=0
	in_srv ip link set lo up
	in_srv "$OVPN_CLI" new_iface tun0 mp
	: >"$peers"
	for c in $CLIENTS; do
		ip netns add "$(ns "$c")"
		in_c "$c" sysctl -qw net.ipv6.conf.default.accept_ra=0
		in_c "$c" ip link set lo up
		ip link add "veth$c" netns "$SRV" type veth peer name eth0 \
			netns "$(ns "$c")"
		read -r caddr saddr <<<"$(client_transport "$c")"
		if [ "$c" = 3 ]; then
			in_srv ip addr add "$saddr/64" dev "veth$c" nodad
			in_c "$c" ip addr add "$caddr/64" dev eth0 nodad
		else
			in_srv ip addr add "$saddr/24" dev "veth$c"
			in_c "$c" ip addr add "$caddr/24" dev eth0
		fi
		in_srv ip link set "veth$c" up
		in_c "$c" ip link set eth0 up
		# peer_id raddr rport vpn4 vpn6 tx_id
		echo "$c $caddr $((2000 + c)) 5.5.5.$((c + 1)) fd00:5::$((c + 1)) $((10 + c))" \
			>>"$peers"
	done

	start_cli "$SRV" "$TMPDIR/srv.log" new_multi_peer tun0 "$SRV_PORT" "$peers"
	in_srv ip addr add 5.5.5.1/24 dev tun0
	in_srv ip addr add fd00:5::1/64 dev tun0 nodad
	in_srv ip link set tun0 up

	for c in $CLIENTS; do
		read -r caddr saddr <<<"$(client_transport "$c")"
		in_c "$c" "$OVPN_CLI" new_iface "tun$c"
		start_cli "$(ns "$c")" "$TMPDIR/c$c.log" new_peer "tun$c" \
			$((10 + c)) $((2000 + c)) "$saddr" "$SRV_PORT" tx_id "$c"
		in_c "$c" ip addr add "5.5.5.$((c + 1))/24" dev "tun$c"
		in_c "$c" ip addr add "fd00:5::$((c + 1))/64" dev "tun$c" nodad
		in_c "$c" ip link set "tun$c" up
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

	# 3000-byte inner packets: fragmented before encryption.
	for c in $CLIENTS; do
		in_c "$c" ping -q -c 3 -i 0.2 -W 2 -s 3000 5.5.5.1
	done
}

peer_field()
{
	sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

exact_counters()
{
	local before after n=5 d

	before=$(in_c 1 "$OVPN_CLI" get_peer tun1 11)
	in_c 1 ping -q -c $n -i 0.2 -W 2 -s 100 5.5.5.1
	after=$(in_c 1 "$OVPN_CLI" get_peer tun1 11)
	echo "before: $before"
	echo "after:  $after"
	for f in vpn_tx_packets vpn_rx_packets link_tx_packets link_rx_packets; do
		d=$(($(peer_field $f <<<"$after") - $(peer_field $f <<<"$before")))
		expect_eq "$f delta" $n "$d"
	done
	# 100 bytes of ICMP payload + 8 ICMP + 20 IP; 24 bytes of overhead.
	d=$(($(peer_field vpn_tx_bytes <<<"$after") - \
	     $(peer_field vpn_tx_bytes <<<"$before")))
	expect_eq "vpn_tx_bytes delta" $((n * 128)) "$d"
	d=$(($(peer_field link_tx_bytes <<<"$after") - \
	     $(peer_field link_tx_bytes <<<"$before")))
	expect_eq "link_tx_bytes delta" $((n * (128 + 24))) "$d"
}

dump_lists_all_peers()
{
	local out

	out=$(in_srv "$OVPN_CLI" get_peer tun0)
	echo "$out"
	expect_eq "peers in dump" 3 "$(grep -c '^peer ' <<<"$out")"
	grep -q ' id=3 .*remote=\[fd00:3::2\]:2003' <<<"$out" ||
		fail "IPv6 peer not reported with its endpoint"
	grep -q ' id=1 tx_id=11 ' <<<"$out" || fail "tx_id of peer 1"
}

missing_peer_is_enoent()
{
	expect_err ENOENT in_srv "$OVPN_CLI" get_peer tun0 99
	expect_err ENOENT in_srv "$OVPN_CLI" del_peer tun0 99
}

delete_peer_notifies()
{
	local log=$TMPDIR/ntf.log

	in_srv "$OVPN_CLI" listen_mcast 10 count 1 >"$log" &
	for _ in $(seq 50); do grep -q READY "$log" && break; sleep 0.1; done
	in_srv "$OVPN_CLI" del_peer tun0 2
	wait $!
	cat "$log"
	grep -q '^ntf peer_del .* id=2 reason=userspace' "$log" ||
		fail "no userspace peer_del notification for peer 2"
	! in_c 2 ping -q -c 1 -W 1 5.5.5.1 || fail "deleted peer still reachable"
	in_c 1 ping -q -c 1 -W 2 5.5.5.1
}

ovpn_require

ktap_plan 9
run_test setup_topology setup_topology
run_test install_keys install_keys
run_test ping_ipv4 ping_ipv4
run_test ping_ipv6 ping_ipv6
run_test ping_large ping_large
run_test exact_counters exact_counters
run_test dump_lists_all_peers dump_lists_all_peers
run_test missing_peer_is_enoent missing_peer_is_enoent
run_test delete_peer_notifies delete_peer_notifies
ktap_finish
