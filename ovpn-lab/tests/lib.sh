#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the lab's own tests (soak, fuzzing, scale, openvpn interop,
# a test build of the module): the selftests' lib.sh, which they build
# on, and the lab's knowledge of module builds.  Sourced, never run.

LAB_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$LAB_TESTS_DIR/../../tools/testing/selftests/net/ovpn/lib.sh"
source "$LAB_TESTS_DIR/../guest/module.sh"

# Test builds of the module (the lab's build.sh -x and -u): a script that
# needs one loads it in place of the module under test, which goes back
# at its end (module_unloads) or, after a failure, when it exits.

# variant_require VAR WHAT: skip the whole script unless $VAR names the
# test build, which WHAT describes.
variant_require()
{
	[ -n "${!1:-}" ] && return 0
	echo "TAP version 13"
	echo "1..0 # SKIP no $1: needs ovpn.ko built with $2"
	exit "$KSFT_SKIP"
}

# variant_cleanup KO: what ovpn_workdir's trap does, and KO unloaded if a
# failure left it loaded: the scripts after this one test the other one.
variant_cleanup()
{
	ns_teardown
	if [ -d /sys/module/ovpn ] && lab_is_loaded "$1"; then
		ovpn_unload
	fi
	rm -rf "$TMPDIR"
}

# variant_start KO: the script's work directory, and KO loaded in place of
# the module that earlier scripts loaded.
variant_start()
{
	ovpn_workdir
	# shellcheck disable=SC2064 # KO is fixed for the script's life
	trap "variant_cleanup '$1'" EXIT
	if [ -d /sys/module/ovpn ]; then
		ovpn_unload || { echo "# cannot unload the ovpn module"; exit 1; }
	fi
	lab_insmod "$1" || { echo "# cannot load $1"; exit 1; }
	ovpn_require
}
