#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# openvpn's epoch data keys offloaded: openvpn with our Linux DCO patch
# (tools/openvpn, built by the lab's openvpn-epoch.sh) on the module under
# test, against an unmodified openvpn running its data channel in
# userspace (--disable-dco), the reference implementation, in both roles,
# over UDP and TCP, with both ciphers.  In each cell both daemons agree on
# "aead-epoch", ping passes both ways, iperf3 moves data, and the module
# counts each packet with the epoch format's 28 bytes of overhead (12 of
# header and packet id, 16 of tag; DATA_V2 has 24).  Last, an unmodified
# openvpn on the module gets DATA_V2, as before: nothing changes for a
# daemon that does not ask.
#
# Each cell is a server namespace and a client namespace with a veth:
# 10.10.N.1 (server) == 10.10.N.2, VPN 10.8.N.0/24, port 1194.
#
#   N  server              client              transport  cipher
#   1  patched, DCO        unmodified, tun     udp4       AES-256-GCM
#   2  patched, DCO        unmodified, tun     tcp4       CHACHA20-POLY1305
#   3  unmodified, tun     patched, DCO        udp4       CHACHA20-POLY1305
#   4  unmodified, tun     patched, DCO        tcp4       AES-256-GCM
#   5  unmodified, DCO     unmodified, tun     udp4       AES-256-GCM
#
# Environment: OPENVPN_EPOCH, the patched daemon (the script skips
# without it); OPENVPN, the unmodified one.

source "$(dirname "$0")/openvpn-lib.sh"

if [ -z "${OPENVPN_EPOCH:-}" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no OPENVPN_EPOCH: needs openvpn with tools/openvpn's patch"
	exit "$KSFT_SKIP"
fi

IPERF_PORT=5201
IPERF_SECS=${OVPN_IPERF_SECS:-3}
# N  server  client  transport  cipher
CELLS="
1  epoch  us     udp4  AES-256-GCM
2  epoch  us     tcp4  CHACHA20-POLY1305
3  us     epoch  udp4  CHACHA20-POLY1305
4  us     epoch  tcp4  AES-256-GCM
5  dco    us     udp4  AES-256-GCM
"
openvpn_require
openvpn_workdir

sns() { echo "ovpn-es$1-$$"; }
cns() { echo "ovpn-ec$1-$$"; }
cell() { awk -v n="$1" '$1 == n { print $2, $3, $4, $5 }' <<<"$CELLS"; }
cell_ids() { awk 'NF { print $1 }' <<<"$CELLS"; }

# run_side SIDE FUNCTION ARGS...: FUNCTION (ovpn_server or ovpn_client)
# with the daemon and data channel of SIDE: the patched daemon with DCO,
# the unmodified one with DCO, or the unmodified one in userspace.
run_side()
{
	local side=$1

	shift
	case $side in
	epoch) OPENVPN=$OPENVPN_EPOCH "$@" ;;
	dco) "$@" ;;
	us) "$@" --disable-dco ;;
	esac
}

setup_topology()
{
	local c

	ovpn_pki
	for c in $(cell_ids); do
		ns_add "$(sns "$c")"
		ns_add "$(cns "$c")"
		veth_pair "$(sns "$c")" eth0 "10.10.$c.1" \
			"$(cns "$c")" eth0 "10.10.$c.2"
	done
}

tunnels_up()
{
	local c srv cli tr cipher sproto cproto

	for c in $(cell_ids); do
		read -r srv cli tr cipher <<<"$(cell "$c")"
		case $tr in
		udp4) sproto=udp4 cproto=udp4 ;;
		tcp4) sproto=tcp4-server cproto=tcp4-client ;;
		esac
		run_side "$srv" ovpn_server "s$c" "$(sns "$c")" vpn0 "$sproto" \
			1194 "10.8.$c.0"
		run_side "$cli" ovpn_client "c$c" "$(cns "$c")" vpn0 "$cproto" \
			"10.10.$c.1" 1194 "$cipher"
	done
	for c in $(cell_ids); do
		ovpn_wait_up "s$c"
		ovpn_wait_up "c$c"
	done
}

# The two ends of cell N, DCO first: "<namespace> <openvpn instance>"
# each.
cell_ends()
{
	local srv

	read -r srv _ <<<"$(cell "$1")"
	case $srv in
	us) echo "$(cns "$1") c$1 $(sns "$1") s$1" ;;
	*) echo "$(sns "$1") s$1 $(cns "$1") c$1" ;;
	esac
}

# cell_test N OVERHEAD FORMAT: in cell N both daemons settled on its
# cipher and FORMAT ("aead-epoch" or "DATA_V2"), the DCO end is DCO and
# the other userspace, ping passes both ways and iperf3 runs; the module
# at the DCO end counted every packet it received with OVERHEAD bytes
# more than its plaintext.
cell_test()
{
	local c=$1 overhead=$2 format=$3 srv cli tr cipher ns inst ons oinst
	local before after dpk dlink dvpn json i

	read -r srv cli tr cipher <<<"$(cell "$c")"
	read -r ns inst ons oinst <<<"$(cell_ends "$c")"
	ovpn_uses_dco "$inst" "$ns" vpn0
	ovpn_uses_tun "$oinst" "$ons" vpn0
	for i in "s$c" "c$c"; do
		log_has "$(ovpn_log "$i")" "Data Channel: cipher '$cipher'" ||
			fail "$i: openvpn did not settle on $cipher" || return
		if [ "$format" = aead-epoch ]; then
			log_has "$(ovpn_log "$i")" 'protocol-flags.* aead-epoch' ||
				fail "$i: no aead-epoch" || return
		elif log_has "$(ovpn_log "$i")" 'protocol-flags.* aead-epoch'; then
			fail "$i: aead-epoch with an unmodified daemon" || return
		fi
	done

	before=$(ovpn_peer "$ns" vpn0)
	ip netns exec "$(cns "$c")" ping -q -c 5 -i 0.2 -W 5 "10.8.$c.1"
	ip netns exec "$(sns "$c")" ping -q -c 5 -i 0.2 -W 5 "10.8.$c.2"
	after=$(ovpn_peer "$ns" vpn0)
	printf 'before: %s\nafter:  %s\n' "$before" "$after"
	dpk=$(peer_delta link_rx_packets "$before" "$after")
	dlink=$(peer_delta link_rx_bytes "$before" "$after")
	dvpn=$(peer_delta vpn_rx_bytes "$before" "$after")
	expect_eq "packets received as VPN packets" "$dpk" \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
	[ "$dpk" -ge 10 ] || fail "only $dpk packets received" || return
	expect_eq "link bytes less VPN bytes, $dpk packets" \
		$((dpk * overhead)) $((dlink - dvpn))

	iperf_server "$(sns "$c")" "$IPERF_PORT"
	json=$TMPDIR/iperf-$c.json
	iperf_run "$(cns "$c")" "10.8.$c.1" "$IPERF_PORT" "$IPERF_SECS" "$json"
	ktap_note "cell $c: server $srv, client $cli, $tr, $cipher:" \
		"$(iperf_mbits "$json") Mbit/s"
}

ktap_plan 8
run_test setup setup_topology
run_test tunnels_up tunnels_up
run_noted patched_server_udp_aes cell_test 1 28 aead-epoch
run_noted patched_server_tcp_chacha cell_test 2 28 aead-epoch
run_noted patched_client_udp_chacha cell_test 3 28 aead-epoch
run_noted patched_client_tcp_aes cell_test 4 28 aead-epoch
run_noted unmodified_daemon_keeps_data_v2 cell_test 5 24 DATA_V2
run_test teardown ns_teardown
ktap_finish
