#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Epoch data keys rolling over under traffic, at both ends.  A real epoch
# lasts up to 2^48 - 1 packets or the AEAD usage limit, which no test
# reaches: the module under test is a variant (the lab's build.sh -e)
# whose epoch keys send 8 packets each, and whose chains start at epoch
# 0xeffc for 16-byte keys (aes128: the renegotiation point, 0xf000, comes
# after 32 packets) and 0xfff8 for 24-byte ones (aes192: the last epoch,
# 0xffff, is spent after 64), at epoch 1 otherwise.
# Each end moves its sending epoch every 8 packets, and its receiving one
# when the other's next epoch authenticates: no echo request or reply
# may be lost on the way, and the packets on the wire show the epochs
# going up.  Replays and forgeries of the current, the previous, a gone
# and a future epoch are dropped and counted.  At 0xf000 each end asks for a new key once (KEY_SWAP_NTF);
# once the last epoch is spent the key leaves its slot and says so again.
#
#   ns a: tun-a (P2P, 5.5.8.1) -- veth 10.10.8.1 == 10.10.8.2 -- ns b:
#   tun-b (P2P, 5.5.8.2) over UDP, and tun-ta (5.5.9.1) -- tun-tb
#   (5.5.9.2) over TCP; a knows b as peer 2, b knows a as peer 1.
#
# Last, openvpn's own data channel follows the module's epochs: openvpn
# with our DCO patch as a server on the variant, an unmodified openvpn in
# userspace as its client (skipped without OPENVPN_EPOCH).
#
#   ns srv: openvpn (patched, DCO) 10.10.9.1 == ns cli: openvpn
#   (unmodified, --disable-dco) 10.10.9.2; VPN 10.8.9.0/24
#
# Environment: OVPN_KO_EPOCH_ROLL, that variant (the script skips without
# it); OPENVPN_EPOCH, the patched openvpn.  At the end the module the
# other scripts test is loaded again.

source "$(dirname "$0")/openvpn-lib.sh"

variant_require OVPN_KO_EPOCH_ROLL \
	"short epochs (the lab's build.sh -e)"

NA=ovpn-ra-$$
NB=ovpn-rb-$$
NS=ovpn-rs-$$
NC=ovpn-rc-$$
KEY=$OVPN_DIR/key.hex
PORT_A=3811
PORT_B=3812
PORT_TCP=3813
# Packets an epoch key sends in the variant.
EPOCH_PACKETS=8

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

setup_topology()
{
	lab_is_loaded "$OVPN_KO_EPOCH_ROLL" ||
		fail "the loaded module is not $OVPN_KO_EPOCH_ROLL"
	ipv4_pair "$NA" veth-a 10.10.8.1 "$NB" veth-b 10.10.8.2 &&
		udp_p2p "$NA" tun-a 5.5.8.1 10.10.8.1 $PORT_A \
			"$NB" tun-b 5.5.8.2 10.10.8.2 $PORT_B &&
		tcp_p2p "$NA" tun-ta 5.5.9.1 10.10.8.1 \
			"$NB" tun-tb 5.5.9.2 10.10.8.2 $PORT_TCP
}

# keys IFA IFB KEY_ID ALG: epoch keys of key.hex in the primary slots.
keys()
{
	in_a "$OVPN_CLI" new_key "$1" 2 primary "$3" "$4" 0 "$KEY" epoch &&
		in_b "$OVPN_CLI" new_key "$2" 1 primary "$3" "$4" 1 "$KEY" epoch
}

# pings COUNT DST: COUNT echo requests from a, one every 20 ms; prints
# how many were answered.
pings()
{
	in_a ping -n -c "$1" -i 0.02 -W "$(secs 2)" "$2" |
		sed -n 's/.*, \([0-9]*\) received,.*/\1/p'
}

# wire_epochs PCAP: "<destination port> <epoch> <payload in hex>" for
# each data packet of a capture, in order (the pcap reader of
# udp-inject.py).
wire_epochs()
{
	python3 - "$OVPN_DIR/udp-inject.py" "$1" <<'PY'
import importlib.util
import struct
import sys

spec = importlib.util.spec_from_file_location('inject', sys.argv[1])
inject = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inject)
for udp in inject.pcap_payloads(sys.argv[2], with_header=True):
    print(struct.unpack('>H', udp[2:4])[0],
          struct.unpack('>H', udp[12:14])[0], udp[8:].hex())
PY
}

# epochs_went_up FILE PORT COUNT FIRST LAST: the epochs of the packets to
# PORT in FILE (wire_epochs), COUNT of them, start at FIRST, never go
# back, and end at LAST.
epochs_went_up()
{
	awk -v p="$2" '$1 == p { print $2 }' "$1" >"$1.$2"
	expect_eq "packets to port $2" "$3" "$(wc -l <"$1.$2")"
	expect_eq "first epoch to port $2" "$4" "$(head -n1 "$1.$2")"
	sort -n -c "$1.$2" || fail "epochs to port $2 went back"
	expect_eq "last epoch to port $2" "$5" "$(tail -n1 "$1.$2")"
}

# rollover_udp KEY_ID ALG COUNT: COUNT echo requests over UDP, all
# answered; each direction's packets on the wire start at epoch 1, never
# go back, and reach epoch COUNT / 8 (each end sent COUNT packets).
rollover_udp()
{
	local cap=$TMPDIR/roll.pcap n=$3 port

	keys tun-a tun-b "$1" "$2" || return
	in_b timeout "$(secs 30)" tcpdump -nni veth-b -c $((2 * n)) \
		-w "$cap" "udp and udp[8] = $((0x48 + $1))" \
		>"$TMPDIR/tcpdump.log" 2>&1 &
	echo $! >"$TMPDIR/tcpdump.pid"
	log_wait "$TMPDIR/tcpdump.log" 'listening on' || true
	expect_eq "echo replies" "$n" "$(pings "$n" 5.5.8.2)"
	wait "$(cat "$TMPDIR/tcpdump.pid")"
	wire_epochs "$cap" >"$TMPDIR/epochs"
	for port in $PORT_B $PORT_A; do
		epochs_went_up "$TMPDIR/epochs" "$port" "$n" 1 \
			$(((n - 1) / EPOCH_PACKETS + 1))
	done
}

udp_aes_gcm() { rollover_udp 1 aes256 100; }
udp_chacha20_poly1305() { rollover_udp 2 chachapoly 100; }

# inject_dropped WHAT ARGS...: udp-inject.py ARGS from a to b's socket;
# b dropped it and delivered nothing.
inject_dropped()
{
	local what=$1 d0 d1 rx0 rx1

	shift
	d0=$(link_dropped "$NB" tun-b rx)
	rx0=$(peer_stat "$NB" tun-b 1 vpn_rx_packets)
	in_a python3 "$OVPN_DIR/udp-inject.py" 10.10.8.2 $PORT_B 1 "$@" \
		>/dev/null
	sleep 0.5
	d1=$(link_dropped "$NB" tun-b rx)
	rx1=$(peer_stat "$NB" tun-b 1 vpn_rx_packets)
	expect_eq "dropped: $what" 1 $((d1 - d0))
	expect_eq "delivered: $what" 0 $((rx1 - rx0))
}

# first_packet EPOCH: the first packet a sent to b under EPOCH in the
# capture of udp_chacha20_poly1305, in hex.
first_packet()
{
	awk -v p="$PORT_B" -v e="$1" '$1 == p && $2 == e { print $3; exit }' \
		"$TMPDIR/epochs"
}

# After udp_chacha20_poly1305, b receives under epoch 13 and keeps 12 as
# the retiring one: genuine packets of the current, the retiring and a
# long gone epoch are refused (replays, or no key), and so are forgeries
# of the retiring and of a future epoch.  Real traffic passes after them.
old_epochs_refused()
{
	local e

	for e in 13 12 1; do
		inject_dropped "replay of epoch $e" hex "$(first_packet "$e")"
	done
	inject_dropped "forgery of epoch 12" epoch 1 2 12 1000 64
	inject_dropped "forgery of epoch 14" epoch 1 2 14 1 64
	expect_eq "echo replies" 3 "$(pings 3 5.5.8.2)"
}

# Over TCP the records are not told apart on the wire: no echo request
# or reply is lost across 12 epochs each way.
tcp_aes_gcm()
{
	keys tun-ta tun-tb 1 aes256 &&
		expect_eq "echo replies" 100 "$(pings 100 5.5.9.2)"
}

# The first packet a sends at epoch 0xf000 asks for a new key, once; the
# traffic goes on.
reneg_at_0xf000()
{
	local ntf=$TMPDIR/reneg.ntf ifindex

	ifindex=$(in_a cat /sys/class/net/tun-a/ifindex)
	keys tun-a tun-b 3 aes128 || return
	ntf_listen "$ntf" 2 in_a || return
	expect_eq "echo replies" 60 "$(pings 60 5.5.8.2)"
	wait "$(cat "$ntf.pid")" || true
	cat "$ntf"
	expect_eq "KEY_SWAP_NTF" 1 "$(grep -c '^ntf key_swap' "$ntf")"
	grep -qx "ntf key_swap ifindex=$ifindex peer_id=2 key_id=3" "$ntf" ||
		fail "no KEY_SWAP_NTF for peer 2 key 3"
}

# From epoch 0xfff8 each end sends 64 packets: all 64 requests are
# answered, then a's key is spent, leaves its slot and says so.
last_epoch_spent()
{
	local ntf=$TMPDIR/last.ntf ifindex

	ifindex=$(in_a cat /sys/class/net/tun-a/ifindex)
	keys tun-a tun-b 4 aes192 || return
	ntf_listen "$ntf" 2 in_a || return
	expect_eq "echo replies" $((8 * EPOCH_PACKETS)) \
		"$(pings $((8 * EPOCH_PACKETS + 6)) 5.5.8.2)"
	wait "$(cat "$ntf.pid")" || true
	cat "$ntf"
	expect_eq "KEY_SWAP_NTF (0xf000 passed, then the last epoch)" 2 \
		"$(grep -cx "ntf key_swap ifindex=$ifindex peer_id=2 key_id=4" \
		   "$ntf")"
	expect_err ENOENT in_a "$OVPN_CLI" get_key tun-a 2 primary
}

# 100 echo requests from the userspace client through the patched
# server's DCO tunnel, all answered.  The server's module moves its
# sending epoch every 8 packets; openvpn's data channel at the client
# follows each new epoch it authenticates (epoch_replace_update_recv_key()),
# and the module follows the client's: on the wire, the replies end at
# epoch 13 and the requests at 13 too, less the one the client had not
# seen yet when it sent its last request.
openvpn_follows_epochs()
{
	local cap=$TMPDIR/ov.pcap n=100 last

	if [ -z "${OPENVPN_EPOCH:-}" ]; then
		echo "no OPENVPN_EPOCH"
		return "$KSFT_SKIP"
	fi
	# Skips without the tools; loads tun for the userspace client.
	openvpn_require
	ovpn_pki
	ns_add "$NS" && ns_add "$NC" || return
	veth_pair "$NS" eth0 10.10.9.1 "$NC" eth0 10.10.9.2
	OPENVPN=$OPENVPN_EPOCH ovpn_server srv "$NS" vpn0 udp4 1194 10.8.9.0
	ovpn_client cli "$NC" vpn0 udp4 10.10.9.1 1194 AES-256-GCM \
		--disable-dco
	ovpn_wait_up srv && ovpn_wait_up cli || return
	ovpn_uses_dco srv "$NS" vpn0 && ovpn_uses_tun cli "$NC" vpn0 || return
	log_has "$(ovpn_log cli)" 'protocol-flags.* aead-epoch' ||
		fail "no aead-epoch" || return

	bg_start "$TMPDIR/ovdump.log" ip netns exec "$NS" tcpdump -nni eth0 \
		-w "$cap" "udp and udp[8] = 0x48"
	log_wait "$TMPDIR/ovdump.log" 'listening on' || true
	expect_eq "echo replies" $n "$(ip netns exec "$NC" ping -n -c $n \
		-i 0.02 -W "$(secs 2)" 10.8.9.1 |
		sed -n 's/.*, \([0-9]*\) received,.*/\1/p')"
	sleep 1
	bg_stop "$TMPDIR/ovdump.log" INT
	wire_epochs "$cap" >"$TMPDIR/ov.epochs"
	last=$(((n - 1) / EPOCH_PACKETS + 1))
	epochs_went_up "$TMPDIR/ov.epochs" 1194 $n 1 "$last"
	awk '$1 != 1194 { print $1 }' "$TMPDIR/ov.epochs" | sort -u |
		while read -r port; do
			epochs_went_up "$TMPDIR/ov.epochs" "$port" $n 1 "$last"
		done
}

variant_start "$OVPN_KO_EPOCH_ROLL"

ktap_plan 9
run_test setup setup_topology
run_test udp_aes_gcm udp_aes_gcm
run_test udp_chacha20_poly1305 udp_chacha20_poly1305
run_test old_epochs_refused old_epochs_refused
run_test tcp_aes_gcm tcp_aes_gcm
run_test reneg_at_0xf000 reneg_at_0xf000
run_test last_epoch_spent last_epoch_spent
run_test openvpn_follows_epochs openvpn_follows_epochs
run_test module_unloads module_unloads
ktap_finish
