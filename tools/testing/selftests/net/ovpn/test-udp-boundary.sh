#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What crosses the tunnel and what must not: the state the stack keeps on
# a packet (conntrack entry, flow hash) belongs to one side of the tunnel,
# and a peer may only send from its own addresses.
#
#   ns srv: tun0 (MP, 5.5.8.1 fd00:8::1)
#     veth1 10.10.1.1 == eth0 10.10.1.2  ns c1: tun1 (P2P, 5.5.8.2)
#     veth2 fd00:2::1 == eth0 fd00:2::2  ns c2: tun2 (P2P, fd00:8::3)
#   client N is peer N for the server and the server is peer 10+N for it;
#   client 1 has only an IPv4 VPN address, client 2 only an IPv6 one;
#   client 2 source-NATs its datagrams to the server to port 3002.

source "$(dirname "$0")/lib.sh"

SRV=ovpn-bsrv-$$
ALG=aes256
PORT=1194
N=5
INJECT=$OVPN_DIR/ip-inject.py


setup_topology()
{
	local c saddr

	star_links 2 1 2
	in_srv "$OVPN_CLI" new_iface tun0 mp
	echo "1 10.10.1.2 2001 5.5.8.2 - 11" >"$TMPDIR/peers"
	echo "2 fd00:2::2 2002 - fd00:8::3 12" >>"$TMPDIR/peers"
	start_ready "$TMPDIR/srv.log" in_srv "$OVPN_CLI" new_multi_peer tun0 \
		"$PORT" "$TMPDIR/peers" stay
	link_up "$SRV" tun0 5.5.8.1 fd00:8::1
	for c in 1 2; do
		read -r _ saddr <<<"$(star_transport "$c" 2)"
		in_c "$c" "$OVPN_CLI" new_iface "tun$c"
		start_ready "$TMPDIR/c$c.log" in_c "$c" "$OVPN_CLI" new_peer \
			"tun$c" $((10 + c)) $((2000 + c)) "$saddr" "$PORT" \
			tx_id "$c" stay
		key_pair "$SRV" tun0 "$c" "$(client_ns "$c")" "tun$c" \
			$((10 + c)) primary 1 "$ALG"
	done
	snat_transport 2
	link_up "$(client_ns 1)" tun1 5.5.8.2
	link_up "$(client_ns 2)" tun2 fd00:8::3
	in_c 1 ping -q -c 2 -i 0.2 -W 2 5.5.8.1
	in_c 2 ping -q -c 2 -i 0.2 -W 2 fd00:8::1
}

# nft_count NS NAME: the packets counter NAME of table inet ovpn_t counted.
nft_count()
{
	ip netns exec "$1" nft -j list counter inet ovpn_t "$2" |
		jq '.nftables[] | select(.counter) | .counter.packets'
}

# outer_flow_tracked C FAMILY: the datagrams client C sends to the server
# are a conntrack flow of their own, whose original direction is the
# outer one.  Before it, the IPv6 transport carried the entry of the
# plaintext packet out: conntrack ignored the datagram, its rules
# matched the inner flow.
outer_flow_tracked()
{
	local c=$1 fam=$2 saddr all outer

	read -r _ saddr <<<"$(star_transport "$c" 2)"
	in_c "$c" nft -f - <<-EOF
	table inet ovpn_t {
		counter sent { }
		counter outer_ct { }
		chain out {
			type filter hook output priority 0;
			udp dport $PORT counter name sent
			udp dport $PORT ct original $fam daddr $saddr \
				counter name outer_ct
		}
	}
	EOF
	if [ "$fam" = ip ]; then
		in_c "$c" ping -q -c "$N" -i 0.2 -W 2 5.5.8.1
	else
		in_c "$c" ping -q -c "$N" -i 0.2 -W 2 fd00:8::1
	fi
	all=$(nft_count "$(client_ns "$c")" sent)
	outer=$(nft_count "$(client_ns "$c")" outer_ct)
	echo "datagrams to the server: $all, tracked as the outer flow: $outer"
	[ "$all" -ge "$N" ] || fail "only $all datagrams counted"
	expect_eq "datagrams tracked as the outer flow" "$all" "$outer"
	in_c "$c" nft delete table inet ovpn_t
}

# local_address_learnt_once: client 1 sends its datagrams to two of the
# server's addresses in turn (a stateless rule picks 10.10.1.1 or
# 10.10.1.9 for each).  The server learns the local address it is reached
# on at most once a second, not for every datagram (each time an
# allocation, the device lock and a route cache reset): its answers to 20
# pings in one second change their source address twice at most, where
# before every answer changed it.
local_address_learnt_once()
{
	local log=$TMPDIR/learn.txt pid switches

	in_srv ip addr add 10.10.1.9/24 dev veth1
	in_c 1 nft -f - <<-EOF
	table ip ovpn_t {
		chain out {
			type route hook output priority 0;
			udp dport $PORT ip daddr set numgen inc mod 2 \
				map { 0 : 10.10.1.1, 1 : 10.10.1.9 }
		}
	}
	EOF
	in_c 1 timeout "$(secs 20)" tcpdump -nni eth0 -c 20 \
		"udp and src port $PORT" >"$log" 2>&1 &
	pid=$!
	log_wait "$log" 'listening on'
	in_c 1 ping -q -c 20 -i 0.05 -W 2 5.5.8.1
	wait "$pid" || true
	in_c 1 nft delete table ip ovpn_t
	# "TIME IP ADDR.PORT > ...": the answers' source addresses in order.
	switches=$(awk '$2 == "IP" { sub(/\.[0-9]+$/, "", $3); print $3 }' \
		   "$log" | uniq | wc -l)
	echo "the server's answers came from $switches runs of one address:"
	awk '$2 == "IP" { print $3 }' "$log" | tr '\n' ' '
	echo
	[ "$switches" -ge 1 ] || fail "no answer captured"
	[ "$switches" -le 3 ] ||
		fail "$((switches - 1)) changes of the local address in 1 s"
}

# snat_transport C: client C translates the source port of its datagrams
# to the server to 3000 + C, from the first one on (NAT binds a flow when
# it starts).
snat_transport()
{
	in_c "$1" nft -f - <<-EOF
	table inet ovpn_nat {
		chain post {
			type nat hook postrouting priority srcnat;
			ip6 daddr fd00:$1::1 udp dport $PORT \
				snat ip6 to [fd00:$1::2]:$((3000 + $1))
		}
	}
	EOF
}

# outer_snat: source NAT of the IPv6 transport applies to every datagram:
# the server gets them all from the translated port and knows client 2
# by it, and its answers, translated back, reach the client.  Before, a
# datagram carried the conntrack entry of its plaintext packet, whose NAT
# was decided already, and left untranslated.
outer_snat()
{
	local nat real

	in_srv nft -f - <<-EOF
	table inet ovpn_t {
		counter nat { }
		counter real { }
		chain in {
			type filter hook input priority 0;
			udp sport 3002 udp dport $PORT counter name nat
			udp sport 2002 udp dport $PORT counter name real
		}
	}
	EOF
	in_c 2 ping -q -c "$N" -i 0.2 -W 2 fd00:8::1
	nat=$(nft_count "$SRV" nat)
	real=$(nft_count "$SRV" real)
	echo "datagrams from port 3002: $nat, from port 2002: $real"
	expect_eq "datagrams that left untranslated" 0 "$real"
	[ "$nat" -ge "$N" ] || fail "only $nat translated datagrams"
	expect_eq "client 2 as the server sees it" "[fd00:2::2]:3002" \
		"$(peer_stat "$SRV" tun0 2 remote)"
	in_srv nft delete table inet ovpn_t
}

# cpu_counts_reach N: the server's input counters per CPU add up to N.
cpu_counts_reach()
{
	[ $(($(nft_count "$SRV" cpu0) + $(nft_count "$SRV" cpu1))) -ge "$1" ]
}

# inner_flows_spread: decrypted packets carry no flow hash of the outer
# datagram.  RPS on veth1 hashes every datagram on arrival, as a NIC with
# RSS does, and RPS on tun0 steers each decrypted packet to a CPU by its
# hash: 32 inner flows of client 1 then reach the stack on both CPUs,
# where before they all carried the outer flow's one hash to one CPU.
inner_flows_spread()
{
	local flows=32 c hits total=0 used=0

	if [ "$(nproc)" -lt 2 ]; then
		echo "one CPU: nothing to spread over"
		return "$KSFT_SKIP"
	fi
	in_srv sh -c "echo 3 >/sys/class/net/veth1/queues/rx-0/rps_cpus &&
		      echo 3 >/sys/class/net/tun0/queues/rx-0/rps_cpus"
	in_srv nft -f - <<-EOF
	table inet ovpn_t {
		counter cpu0 { }
		counter cpu1 { }
		chain in {
			type filter hook input priority 0;
			udp dport 6000-$((6000 + flows - 1)) meta cpu 0 \
				counter name cpu0
			udp dport 6000-$((6000 + flows - 1)) meta cpu 1 \
				counter name cpu1
		}
	}
	EOF
	in_c 1 python3 "$INJECT" tun1 5.5.8.2 5.5.8.1 "$flows" 6000
	wait_until cpu_counts_reach "$flows"
	for c in 0 1; do
		hits=$(nft_count "$SRV" "cpu$c")
		echo "inner flows on CPU $c: $hits"
		total=$((total + hits))
		[ "$hits" = 0 ] || used=$((used + 1))
	done
	expect_eq "inner flows received" "$flows" "$total"
	[ "$used" = 2 ] || fail "$flows inner flows all on one CPU"
	in_srv nft delete table inet ovpn_t
}

# rx_dropped_reach N: the server's device dropped N packets on receive.
rx_dropped_reach() { [ "$(link_dropped "$SRV" tun0 rx)" -ge "$1" ]; }

# unspecified_source_dropped C SRC DST: packets from SRC, the unspecified
# address of the family client C has no VPN address in, are authentic but
# fail the reverse-path check: dropped and counted, none delivered.
unspecified_source_dropped()
{
	local c=$1 src=$2 dst=$3 drop0 rx0

	drop0=$(link_dropped "$SRV" tun0 rx)
	rx0=$(peer_stat "$SRV" tun0 "$c" vpn_rx_packets)
	in_c "$c" python3 "$INJECT" "tun$c" "$src" "$dst" "$N" 7000
	wait_until rx_dropped_reach $((drop0 + N)) || true
	expect_eq "rx_dropped delta" "$N" \
		$(($(link_dropped "$SRV" tun0 rx) - drop0))
	expect_eq "packets delivered" 0 \
		$(($(peer_stat "$SRV" tun0 "$c" vpn_rx_packets) - rx0))
}

ovpn_workdir
ovpn_require

ktap_plan 9
run_test setup setup_topology
run_test outer_flow_tracked_ipv4 outer_flow_tracked 1 ip
run_test outer_flow_tracked_ipv6 outer_flow_tracked 2 ip6
run_test inner_flows_spread inner_flows_spread
run_test unspecified_ipv6_source_dropped unspecified_source_dropped 1 :: \
	fd00:8::1
run_test unspecified_ipv4_source_dropped unspecified_source_dropped 2 \
	0.0.0.0 5.5.8.1
run_test outer_snat_ipv6 outer_snat
run_test local_address_learnt_once local_address_learnt_once
run_test module_unloads module_unloads
ktap_finish
