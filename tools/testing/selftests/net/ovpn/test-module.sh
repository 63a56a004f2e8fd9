#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module itself: the one loaded is the one under test (never the
# distribution's ovpn.ko picked up by an alias), and it unloads cleanly
# while devices exist, in several namespaces, then loads again.
#
#   init ns: ov-m0 (P2P)          ns "ovpn-mod-$$": ov-m1 (MP), ov-m2 (P2P)

source "$(dirname "$0")/lib.sh"

NS=ovpn-mod-$$

cleanup()
{
	ip netns del "$NS" 2>/dev/null
	ip link del ov-m0 2>/dev/null
}
trap cleanup EXIT

module_under_test_is_loaded()
{
	local want got

	[ -n "$OVPN_KO" ] || { echo "no OVPN_KO"; return "$KSFT_SKIP"; }
	want=$(ovpn_ko_build_id)
	got=$(ovpn_build_id)
	echo "build id of $OVPN_KO: $want, of the loaded module: $got"
	[ -n "$want" ] || fail "$OVPN_KO has no build id"
	expect_eq "loaded module's build id" "$want" "$got"
}

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

ovpn_require

ktap_plan 3
run_test module_under_test_is_loaded module_under_test_is_loaded
run_test unload_with_devices unload_with_devices
run_test load_again load_again
ktap_finish
