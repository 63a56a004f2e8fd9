#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lab's own fault, for its self-test: one assertion that holds and one
# that does not.  The runner must count one pass and one failure.

source "$(dirname "$0")/../../tools/testing/selftests/net/ovpn/lib.sh"

holds()
{
	expect_eq "arithmetic" 4 "$((2 + 2))"
}

does_not_hold()
{
	expect_eq "deliberately wrong" 5 "$((2 + 2))"
}

ktap_plan 2
run_test holds holds
run_test does_not_hold does_not_hold
ktap_finish
