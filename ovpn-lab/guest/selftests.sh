#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: run selftest scripts one after the other, each under a
# time limit, keep each one's KTAP output in $OVPN_LAB_OUT and count its
# test points.  A script that dies before finishing its plan, or exits
# non-zero with no failing test point, counts as one more failure.
#
# On a kernel with kmemleak (the lab's debug kernels) the run ends with a
# leak scan once the module is unloaded: any report is one more failure,
# and the reports are kept in $OVPN_LAB_OUT/kmemleak.txt.
#
# With OVPN_KO, that build is first installed where "modprobe ovpn" finds
# it, as on a machine where it is installed, and the check that modprobe
# loads it counts as one test point: the selftests know no more than that
# (module.sh).
#
# With OVPN_KSFT, the selftests' "make kselftest-install" directory, the
# selftests among the SCRIPTs run through kselftest's runner (run_script).
#
# Usage: selftests.sh SCRIPT... | selftests.sh @FILE
#   A SCRIPT without a directory is one of the ovpn selftests or of the
#   lab's own tests (ovpn-lab/tests): short names keep the guest command
#   within its limit (boot.sh); FILE holds such names, for lists longer
#   than that.
# Writes $OVPN_LAB_OUT/summary: "<passed> <failed> <skipped>", and gives
# each script $OVPN_LOG_DIR, $OVPN_LAB_OUT/<script>-logs, for the logs of
# the daemons it runs.

set -u
source "$(dirname "$0")/module.sh"

limit=${OVPN_TEST_TIMEOUT:-900}
passed=0
failed=0
skipped=0

# Under emulation, static keys must not be switched while tests run (see
# pin-static-keys.py).
python3 "$(dirname "$0")/pin-static-keys.py" &
pin=$!
trap 'kill $pin 2>/dev/null' EXIT

kmemleak=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug ||
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Whatever the boot itself left unreferenced is not ours: have kmemleak
# find it now and set it aside.  Its periodic scan is turned off: under
# emulation a scan takes long, and the run ends with its own.
if [ -w $kmemleak ]; then
	echo scan=off >$kmemleak
	echo scan >$kmemleak
	echo clear >$kmemleak
fi

# kmemleak_scan: with ovpn unloaded, so that nothing it held can hide a
# leak, scan until objects freed late (RCU, workqueues) are gone, and
# fail on any report.  kmemleak only reports objects older than five
# seconds, and a second scan confirms the first.
kmemleak_scan()
{
	local report=$OVPN_LAB_OUT/kmemleak.txt

	[ ! -d /sys/module/ovpn ] || rmmod ovpn ||
		echo "# kmemleak: ovpn cannot be unloaded"
	sleep 6
	echo scan >$kmemleak
	sleep 1
	echo scan >$kmemleak
	cat $kmemleak >"$report"
	if [ -s "$report" ]; then
		echo "# kmemleak: $(grep -c '^unreferenced object' "$report")" \
			"suspected leaks:"
		sed 's/^/# /' "$report" | head -n 60
		failed=$((failed + 1))
	else
		echo "# kmemleak: no leak after the whole run"
		passed=$((passed + 1))
	fi
}

if [ -n "${OVPN_KO:-}" ]; then
	echo "# ---- module"
	if lab_module_install "$OVPN_KO"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
fi

selftests=tools/testing/selftests/net/ovpn

# run_script SCRIPT: the script's KTAP on stdout, its exit status
# returned.  With an install of the selftests ($OVPN_KSFT, "make
# kselftest-install"), a selftest runs there through kselftest's runner,
# as netdev's CI runs it: the runner nests the script's KTAP under "# "
# and says on a line of its own how the script ended.  The runner
# honours "settings"' timeout, which the generic kernels must meet even
# under emulation; a slow kernel (OVPN_SLOW) gets the lab's limit.
run_script()
{
	local name=${1##*/} raw=$OVPN_LAB_OUT/${1##*/}.runner

	if [ -z "${OVPN_KSFT:-}" ] || [ "$1" != "$selftests/$name" ]; then
		timeout --kill-after=10 "$limit" "$1" 2>&1
		return
	fi
	# shellcheck disable=SC2046 # no word or both
	"$OVPN_KSFT/run_kselftest.sh" -t "net/ovpn:$name" \
		$([ "${OVPN_SLOW:-1}" = 1 ] || echo -o "$limit") 2>&1 |
		tee "$raw" | sed -u -n 's/^# //p'
	case $(grep -E '^(not )?ok 1 selftests: ' "$raw") in
	"ok "*"# SKIP"*) return 4 ;;
	"ok "*) return 0 ;;
	*)
		grep -E '^not ok 1 selftests: ' "$raw" | sed 's/^/# runner: /'
		return 1
		;;
	esac
}

# The runner writes a script's output to /dev/stdout, which the guest's
# bare devtmpfs lacks (no udev): give it the links a real system has.
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

# "@FILE": the script names are FILE's words (a list too long for the
# guest command, written there by suite.sh).
if [ $# = 1 ] && [ "${1#@}" != "$1" ]; then
	# shellcheck disable=SC2046 # a list of names
	set -- $(cat "${1#@}")
fi
for script in "$@"; do
	if [[ $script != */* ]]; then
		[ -e "$selftests/$script" ] && script=$selftests/$script ||
			script=ovpn-lab/tests/$script
	fi
	name=$(basename "$script")
	name=${name%.*}
	ktap=$OVPN_LAB_OUT/$name.ktap
	echo "# ---- $name"
	start=$(date +%s)
	# Scripts that run daemons (openvpn-lib.sh) leave their logs here.
	OVPN_LOG_DIR=$OVPN_LAB_OUT/$name-logs run_script "$script" |
		tee "$ktap"
	rc=${PIPESTATUS[0]}
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$ktap" | head -n1)
	ok=$(grep -cE '^ok [0-9]+ ' "$ktap")
	skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$ktap")
	bad=$(grep -cE '^not ok [0-9]+ ' "$ktap")
	echo "# $name: exit $rc, $((ok - skip)) passed, $bad failed," \
		"$skip skipped in $(($(date +%s) - start)) s"
	if [ -z "$plan" ]; then
		echo "# $name: no KTAP plan: its output was lost"
		bad=$((bad + 1))
	elif [ $((ok + bad)) -lt "$plan" ]; then
		echo "# $name: only $((ok + bad)) of $plan tests ran"
		bad=$((bad + plan - ok - bad))
	fi
	# The lab provides everything the tests need: a script that skips
	# as a whole means the lab is broken, and that is a failure.
	if [ "$rc" = 4 ]; then
		echo "# $name: skipped as a whole"
		bad=$((bad + 1))
	elif [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
		echo "# $name: exit status $rc without a failing test"
		bad=1
	fi
	passed=$((passed + ok - skip))
	failed=$((failed + bad))
	skipped=$((skipped + skip))
done

[ -w $kmemleak ] && kmemleak_scan

echo "$passed $failed $skipped" >"$OVPN_LAB_OUT/summary"
[ "$failed" = 0 ]
