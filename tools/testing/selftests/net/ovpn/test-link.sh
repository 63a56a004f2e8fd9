#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ovpn device as rtnetlink creates it: link kind "ovpn" with
# IFLA_OVPN_MODE, its properties, and the drop of packets sent while it has
# no peer.  Everything happens in a private network namespace:
#
#   ns "ovpn-link-$$":  ov-p2p (P2P, default mode)   ov-mp (MP)

source "$(dirname "$0")/lib.sh"

NS=ovpn-link-$$

ovpn_workdir

in_ns() { ip netns exec "$NS" "$@"; }
cli() { in_ns "$OVPN_CLI" "$@"; }

create_p2p_by_default()
{
	cli new_iface ov-p2p
	expect_eq "mode" p2p "$(cli get_mode ov-p2p)"
}

create_mp()
{
	cli new_iface ov-mp mp
	# No IPv6 on it: router solicitations and MLD reports would add to
	# the exact drop count measured below.
	in_ns sysctl -qw net.ipv6.conf.ov-mp.disable_ipv6=1
	expect_eq "mode" mp "$(cli get_mode ov-mp)"
}

create_explicit_p2p()
{
	cli new_iface ov-x p2p
	expect_eq "mode" p2p "$(cli get_mode ov-x)"
	cli del_iface ov-x
	! in_ns ip link show dev ov-x 2>/dev/null || fail "ov-x still exists"
}

reject_out_of_range_mode()
{
	local mode

	for mode in 2 255; do
		expect_err ERANGE cli new_iface ov-bad "$mode"
		! in_ns ip link show dev ov-bad 2>/dev/null ||
			fail "a device was created with mode $mode"
	done
}

device_properties()
{
	local dev j

	for dev in ov-p2p ov-mp; do
		j=$(in_ns ip -d -j link show dev "$dev" | jq '.[0]')
		echo "$dev: $j" | tr -d '\n' | cut -c1-300; echo
		expect_eq "$dev kind" ovpn \
			"$(jq -r .linkinfo.info_kind <<<"$j")"
		expect_eq "$dev link type" none "$(jq -r .link_type <<<"$j")"
		expect_eq "$dev mtu" 1416 "$(jq -r .mtu <<<"$j")"
		expect_eq "$dev min_mtu" 68 "$(jq -r .min_mtu <<<"$j")"
		expect_eq "$dev max_mtu" 65451 "$(jq -r .max_mtu <<<"$j")"
		jq -e '.flags | index("POINTOPOINT")' <<<"$j" >/dev/null ||
			fail "$dev is not POINTOPOINT"
		jq -e '.flags | index("NOARP")' <<<"$j" >/dev/null ||
			fail "$dev is not NOARP"
		in_ns grep -qx DEVTYPE=ovpn "/sys/class/net/$dev/uevent" ||
			fail "$dev has no DEVTYPE=ovpn"
	done
}

mtu_bounds()
{
	in_ns ip link set dev ov-p2p mtu 68
	in_ns ip link set dev ov-p2p mtu 65451
	! in_ns ip link set dev ov-p2p mtu 67 2>/dev/null ||
		fail "mtu 67 accepted"
	! in_ns ip link set dev ov-p2p mtu 65452 2>/dev/null ||
		fail "mtu 65452 accepted"
	in_ns ip link set dev ov-p2p mtu 1416
}

carrier_follows_mode()
{
	in_ns ip link set dev ov-p2p up
	in_ns ip link set dev ov-mp up
	# Up, with no queue to attach.
	expect_eq "ov-p2p qdisc" noqueue \
		"$(in_ns ip -j link show dev ov-p2p | jq -r '.[0].qdisc')"
	# P2P: no carrier until a peer exists; MP: always.
	expect_eq "p2p carrier" 0 "$(in_ns cat /sys/class/net/ov-p2p/carrier)"
	expect_eq "mp carrier" 1 "$(in_ns cat /sys/class/net/ov-mp/carrier)"
}

mp_disables_redirects()
{
	expect_eq "ov-mp send_redirects" 0 \
		"$(in_ns cat /proc/sys/net/ipv4/conf/ov-mp/send_redirects)"
	expect_eq "all send_redirects" 0 \
		"$(in_ns cat /proc/sys/net/ipv4/conf/all/send_redirects)"
}

tx_without_peer_is_dropped_and_counted()
{
	local before after

	in_ns ip addr add 10.99.0.1/24 dev ov-mp
	before=$(link_dropped "$NS" ov-mp tx)
	! in_ns ping -q -c 3 -i 0.2 -W 1 10.99.0.2 >/dev/null ||
		fail "ping through a device without peers succeeded"
	after=$(link_dropped "$NS" ov-mp tx)
	expect_eq "tx dropped" 3 "$((after - before))"
}

unprivileged_create_is_refused()
{
	command -v setpriv >/dev/null ||
		{ echo "no setpriv"; return "$KSFT_SKIP"; }
	expect_errno EPERM in_ns setpriv --bounding-set=-net_admin \
		--inh-caps=-net_admin "$OVPN_CLI" new_iface ov-np
	! in_ns ip link show dev ov-np 2>/dev/null || fail "ov-np was created"
}

delete_devices()
{
	cli del_iface ov-p2p
	cli del_iface ov-mp
	! in_ns ip link show dev ov-p2p 2>/dev/null || fail "ov-p2p survived"
	! in_ns ip link show dev ov-mp 2>/dev/null || fail "ov-mp survived"
}

ovpn_require
ns_add "$NS"

ktap_plan 11
run_test create_p2p_by_default create_p2p_by_default
run_test create_mp create_mp
run_test create_explicit_p2p create_explicit_p2p
run_test reject_out_of_range_mode reject_out_of_range_mode
run_test device_properties device_properties
run_test mtu_bounds mtu_bounds
run_test carrier_follows_mode carrier_follows_mode
run_test mp_disables_redirects mp_disables_redirects
run_test tx_without_peer_is_dropped_and_counted \
	tx_without_peer_is_dropped_and_counted
run_test unprivileged_create_is_refused unprivileged_create_is_refused
run_test delete_devices delete_devices
ktap_finish
