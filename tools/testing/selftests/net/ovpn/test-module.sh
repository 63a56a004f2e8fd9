#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module itself: it unloads cleanly while devices exist, in several
# namespaces, then loads again, and it unloads with a live peer and keys,
# leaving the peer's socket plain UDP.
#
#   init ns: ov-m0 (P2P)          ns "ovpn-mod-$$": ov-m1 (MP), ov-m2 (P2P)

source "$(dirname "$0")/lib.sh"

NS=ovpn-mod-$$
NS2=ovpn-mod2-$$
LOG=$(mktemp)

cleanup()
{
	[ -n "${CLI_PID:-}" ] && kill "$CLI_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip netns del "$NS2" 2>/dev/null
	ip link del ov-m0 2>/dev/null
	rm -f "$LOG"
}
trap cleanup EXIT

unload_with_devices()
{
	"$OVPN_CLI" new_iface ov-m0
	ip netns add "$NS"
	ip netns exec "$NS" "$OVPN_CLI" new_iface ov-m1 mp
	ip netns exec "$NS" "$OVPN_CLI" new_iface ov-m2 p2p
	ip link set ov-m0 up
	ip netns exec "$NS" ip link set ov-m1 up
	rmmod ovpn
	[ ! -d /sys/module/ovpn ] || fail "module still loaded"
	! ip link show ov-m0 2>/dev/null || fail "ov-m0 survived the unload"
	! ip netns exec "$NS" ip link show ov-m1 2>/dev/null ||
		fail "ov-m1 survived the unload"
}

load_again()
{
	ovpn_load
	"$OVPN_CLI" new_iface ov-m0 mp
	expect_eq "mode" mp "$("$OVPN_CLI" get_mode ov-m0)"
	"$OVPN_CLI" del_iface ov-m0
}

# The module goes while a UDP peer with two keys is live and its socket
# stays open in a live process: the key slots' deferred frees are pending
# at module exit, and the socket must be a plain UDP socket afterwards.
# A DATA_V2 datagram, which ovpn would have taken, reaches the process.
unload_with_peer_and_keys()
{
	local i

	ip netns add "$NS2"
	ip -n "$NS2" link set lo up
	ip netns exec "$NS2" "$OVPN_CLI" new_iface ov-m3
	ip netns exec "$NS2" "$OVPN_CLI" new_peer ov-m3 1 5000 127.0.0.1 \
		5001 stay >"$LOG" 2>&1 &
	CLI_PID=$!
	log_wait "$LOG" '^READY'
	ip netns exec "$NS2" "$OVPN_CLI" new_key ov-m3 1 primary 1 aes256 0 \
		"$OVPN_DIR/key.hex"
	ip netns exec "$NS2" "$OVPN_CLI" new_key ov-m3 1 secondary 2 \
		chachapoly 0 "$OVPN_DIR/key.hex"
	rmmod ovpn || fail "rmmod with a live peer"
	[ ! -d /sys/module/ovpn ] || fail "module still loaded"
	for i in 1 2 3; do
		ip netns exec "$NS2" python3 "$OVPN_DIR/udp-inject.py" \
			127.0.0.1 5000 1 data 1 1 "$i" 16
	done
	log_wait "$LOG" '^CTRL 40 ' 3
	kill "$CLI_PID"
	ip netns del "$NS2"
	ovpn_load
}

ovpn_require

ktap_plan 3
run_test unload_with_devices unload_with_devices
run_test load_again load_again
run_test unload_with_peer_and_keys unload_with_peer_and_keys
ktap_finish
