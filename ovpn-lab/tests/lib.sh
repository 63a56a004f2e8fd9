#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the lab's own tests (soak, fuzzing, scale, openvpn interop,
# a test build of the module): the selftests' lib.sh, which they build
# on, and the lab's knowledge of module builds.  Sourced, never run.

LAB_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$LAB_TESTS_DIR/../../tools/testing/selftests/net/ovpn/lib.sh"
source "$LAB_TESTS_DIR/../guest/module.sh"
