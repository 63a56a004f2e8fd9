#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the lab's own tests (soak, fuzzing, scale, openvpn interop,
# a test build of the module): the selftests' lib.sh, which they build
# on, and the lab's knowledge of module builds.  Sourced, never run.

LAB_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$LAB_TESTS_DIR/../../tools/testing/selftests/net/ovpn/lib.sh"
source "$LAB_TESTS_DIR/../guest/module.sh"

# ipv4_tunnel_up SDEV SADDR CDEV CADDR: tunnel devices SDEV of $SRV and
# CDEV of $CLI, IPv4 only, with their addresses and up; a ping from the
# client passes.  The fuzzers check exact counts, which IPv6 housekeeping
# (solicitations, reports) would add to.
ipv4_tunnel_up()
{
	in_srv sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1"
	in_cli sysctl -qw "net.ipv6.conf.$3.disable_ipv6=1"
	link_up "$SRV" "$1" "$2"
	link_up "$CLI" "$3" "$4"
	in_cli ping -q -c 2 -i 0.2 -W 2 "$2"
}
