#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the ovpn selftests: KTAP output, the module under test,
# ovpn-cli and its error format.  Sourced by every test-*.sh.
#
# Environment:
#   OVPN_KO   path of the ovpn.ko to test; "modprobe ovpn" if unset
#   OVPN_CLI  path of ovpn-cli; ./ovpn-cli next to the scripts if unset

set -u

OVPN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OVPN_CLI=${OVPN_CLI:-$OVPN_DIR/ovpn-cli}
OVPN_KO=${OVPN_KO:-}
KSFT_SKIP=4

ktap_n=0
ktap_failed=0
ktap_skipped=0

# ktap_plan N: start the KTAP document of a script with N tests.
ktap_plan()
{
	echo "TAP version 13"
	echo "1..$1"
}

ktap_diag()
{
	sed 's/^/# /'
}

# run_test NAME FUNCTION [ARGS...]: one test point.  The function runs in
# a subshell with errexit on; its output is shown as diagnostics when it
# fails, and exit status $KSFT_SKIP marks a skip.
run_test()
{
	local name=$1 out rc

	shift
	ktap_n=$((ktap_n + 1))
	out=$( (set -e; "$@") 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok $ktap_n $name"
	elif [ "$rc" = "$KSFT_SKIP" ]; then
		ktap_skipped=$((ktap_skipped + 1))
		echo "ok $ktap_n $name # SKIP $(echo "$out" | tail -n1)"
	else
		ktap_failed=$((ktap_failed + 1))
		echo "not ok $ktap_n $name"
		echo "$out" | ktap_diag
		echo "# $name: exit status $rc"
	fi
}

# ktap_finish: the script's exit status, per kselftest.
ktap_finish()
{
	echo "# totals: pass:$((ktap_n - ktap_failed - ktap_skipped)) fail:$ktap_failed skip:$ktap_skipped"
	[ "$ktap_failed" = 0 ]
	exit $?
}

fail()
{
	echo "FAIL: $*"
	return 1
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq()
{
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# expect_err ENAME COMMAND...: COMMAND, an ovpn-cli invocation, must fail
# with that errno and an extack message.
expect_err()
{
	local ename=$1 out

	shift
	out=$("$@") && fail "$* succeeded: $out"
	echo "$*: $out"
	case "$out" in
	"ERR $ename -"*) fail "no extack message" ;;
	"ERR $ename "*) return 0 ;;
	*) fail "expected ERR $ename" ;;
	esac
}

# expect_errno ENAME COMMAND...: like expect_err, for errors the kernel's
# core raises before our code runs (permission checks), which carry no
# extack message.
expect_errno()
{
	local ename=$1 out

	shift
	out=$("$@") && fail "$* succeeded: $out"
	echo "$*: $out"
	case "$out" in
	"ERR $ename "*) return 0 ;;
	*) fail "expected ERR $ename" ;;
	esac
}

# ovpn_build_id: the GNU build id of the loaded ovpn module, in hex.
ovpn_build_id()
{
	# The note is 16 bytes of header ("GNU\0" name included), then the id.
	od -An -tx1 -v -j16 /sys/module/ovpn/notes/.note.gnu.build-id | tr -d ' \n'
}

ovpn_ko_build_id()
{
	readelf -n "$OVPN_KO" | awk '/Build ID:/ { print $3 }'
}

# ovpn_load: load the module under test unless it already is.
ovpn_load()
{
	local dep

	[ -d /sys/module/ovpn ] && return 0
	if [ -z "$OVPN_KO" ]; then
		modprobe ovpn
		return
	fi
	for dep in $(modinfo -F depends "$OVPN_KO" | tr ',' ' '); do
		modprobe "$dep"
	done
	insmod "$OVPN_KO"
}

ovpn_require()
{
	if [ "$(id -u)" != 0 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs root"
		exit "$KSFT_SKIP"
	fi
	if [ ! -x "$OVPN_CLI" ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP ovpn-cli not built"
		exit "$KSFT_SKIP"
	fi
	ovpn_load || exit 1
}

# start_ready LOG COMMAND...: run a long-lived COMMAND (an ovpn-cli that
# holds a socket with "stay") in the background until it prints READY.
# Its pid goes to $OVPN_PIDS, a file: test stages run in subshells, the
# cleanup that kills it does not.
start_ready()
{
	local log=$1

	shift
	"$@" >"$log" 2>&1 &
	echo $! >>"$OVPN_PIDS"
	for _ in $(seq 300); do
		grep -q '^READY' "$log" && return 0
		grep -q '^ERR' "$log" && break
		sleep 0.1
	done
	cat "$log"
	return 1
}

# ntf_listen LOG COUNT PREFIX...: collect COUNT notifications in the
# background with "PREFIX ovpn-cli listen_mcast", once it listens.
ntf_listen()
{
	local log=$1 count=$2

	shift 2
	"$@" "$OVPN_CLI" listen_mcast 20 count "$count" >"$log" &
	echo $! >"$log.pid"
	# Readiness, not a fixed delay: under emulation a start can be slow.
	for _ in $(seq 300); do
		grep -q READY "$log" && return 0
		sleep 0.1
	done
	echo "listener not ready"
	return 1
}

# ntf_wait LOG PATTERN: the listener got a notification matching PATTERN.
ntf_wait()
{
	wait "$(cat "$1.pid")"
	cat "$1"
	grep -q "$2" "$1"
}

# kill_started: stop everything start_ready started.  A COMMAND that is a
# shell function runs in a subshell of its own: its children go first.
kill_started()
{
	local pid

	# Either may be gone already (the subshell ends with its child): not
	# an error, also under errexit.
	for pid in $(cat "$OVPN_PIDS" 2>/dev/null); do
		pkill -TERM -P "$pid" 2>/dev/null || true
		kill "$pid" 2>/dev/null || true
	done
	: >"$OVPN_PIDS"
}

# link_json IFNAME: the device as "ip -details -json" shows it.
link_json()
{
	ip -d -j link show dev "$1" | jq '.[0]'
}
