#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "ovpn" generic netlink family: its shape (version, operations,
# multicast group), how every request resolves its device, and the errors
# a request gets before any peer or key logic runs.
#
#   ns "ovpn-genl-$$":  ov-genl (MP)   lo

source "$(dirname "$0")/lib.sh"

NS=ovpn-genl-$$

ovpn_workdir

in_ns() { ip netns exec "$NS" "$@"; }
cli() { in_ns "$OVPN_CLI" "$@"; }

# Commands userspace may send, with their upstream numbers.
DO_CMDS="peer_new:1 peer_set:2 peer_get:3 peer_del:4 key_new:6 key_get:7
	 key_swap:8 key_del:10"

family_shape()
{
	local fam ops

	fam=$(cli family)
	echo "$fam"
	expect_eq "name" "name ovpn" "$(grep '^name ' <<<"$fam")"
	expect_eq "version" "version 1" "$(grep '^version ' <<<"$fam")"
	grep -q '^mcgrp peers ' <<<"$fam" || fail "no multicast group peers"
	expect_eq "groups" 1 "$(grep -c '^mcgrp ' <<<"$fam")"
	ops=$(awk '/^op / { print $2 }' <<<"$fam" | sort -n | xargs)
	expect_eq "operations" "1 2 3 4 6 7 8 10" "$ops"
}

module_aliases()
{
	local aliases

	aliases=$(modinfo -F alias ovpn)
	echo "$aliases"
	grep -qx 'net-pf-16-proto-16-family-ovpn' <<<"$aliases" || fail \
		"no genl family alias: openvpn could not autoload the module"
	grep -qx 'rtnl-link-ovpn' <<<"$aliases" || fail "no rtnl link alias"
}

missing_ifindex()
{
	local c

	for c in $DO_CMDS; do
		expect_err EINVAL cli cmd "${c%%:*}"
	done
}

unknown_ifindex()
{
	expect_err ENODEV cli cmd peer_get ifindex 999999
	expect_err ENODEV cli cmd key_get ifindex 999999
}

not_an_ovpn_device()
{
	expect_err EINVAL cli cmd peer_get ifname lo
	expect_err EINVAL cli cmd key_new ifname lo
}

other_namespace_device()
{
	local idx

	# A device is found in the requester's namespace only.
	idx=$(in_ns cat /sys/class/net/ov-genl/ifindex)
	ip link show ov-genl >/dev/null 2>&1 && fail "ov-genl leaked to init ns"
	if ip -o link show | awk -F': ' '{ print $1 }' | grep -qx "$idx"; then
		echo "ifindex $idx also used in the init namespace"
		return "$KSFT_SKIP"
	fi
	expect_err ENODEV "$OVPN_CLI" cmd peer_get ifindex "$idx"
}

commands_need_their_nest()
{
	local c

	# Every command names its peer or key in a nested attribute.
	for c in $DO_CMDS; do
		expect_err EINVAL cli cmd "${c%%:*}" ifname ov-genl
	done
}

empty_dump()
{
	expect_eq "dump of a device without peers" "OK 0" \
		"$(cli cmd peer_get ifname ov-genl dump)"
}

# The "peers" group tells peer endpoints, floats and removals: joining it
# takes CAP_NET_ADMIN too.  (The other scripts' listeners, with it, get
# every notification.)
peers_group_needs_net_admin()
{
	command -v setpriv >/dev/null ||
		{ echo "no setpriv"; return "$KSFT_SKIP"; }
	expect_errno EPERM in_ns setpriv --bounding-set=-net_admin \
		--inh-caps=-net_admin "$OVPN_CLI" listen_mcast 1 count 1
}

needs_net_admin()
{
	command -v setpriv >/dev/null ||
		{ echo "no setpriv"; return "$KSFT_SKIP"; }
	expect_errno EPERM in_ns setpriv --bounding-set=-net_admin \
		--inh-caps=-net_admin "$OVPN_CLI" cmd peer_get ifname ov-genl
}

ovpn_require
ns_add "$NS"
in_ns "$OVPN_CLI" new_iface ov-genl mp >/dev/null || exit 1

ktap_plan 10
run_test family_shape family_shape
run_test module_aliases module_aliases
run_test missing_ifindex missing_ifindex
run_test unknown_ifindex unknown_ifindex
run_test not_an_ovpn_device not_an_ovpn_device
run_test other_namespace_device other_namespace_device
run_test commands_need_their_nest commands_need_their_nest
run_test empty_dump empty_dump
run_test needs_net_admin needs_net_admin
run_test peers_group_needs_net_admin peers_group_needs_net_admin
ktap_finish
