#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: upstream's ovpn selftests, unmodified, from the lab
# root's linux-source, against one module or both in turn.  The module is
# loaded before each script (upstream's scripts unload it when they
# finish) and checked to be the intended one.  Prints one table row per
# script and module.
#
# Usage: conformance.sh MODULES KO SCRIPT...
#   MODULES: "ours", "dist" or "ours,dist" (each script against ours, then
#   against the distribution's); KO is our build's ovpn.ko.
#   OVPN_SLOW: if not 1, a copy of the scripts is run in which every
#   wall-clock wait (ping deadlines, sleeps, tcpdump's window) is this
#   many times longer (a debug kernel under emulation is 15-20 times
#   slower than the generic one).
#   OVPN_PING_COUNT=1: every flood ping is counted (ping-counted.py), into
#   $OVPN_LAB_OUT/pings-MODULE-SCRIPT.txt.

set -u
source "$(dirname "$0")/module.sh"

modules=$1
ko=$2
shift 2
limit=${OVPN_TEST_TIMEOUT:-1200}
ksrc=$(ls -d /usr/src/linux-source-* | sort -V | tail -n1)
dir=$ksrc/tools/testing/selftests/net/ovpn
export OVPN_CLI=/src/.build/conformance/ovpn-cli

if [ "${OVPN_SLOW:-1}" != 1 ]; then
	# The copy keeps the layout: common.sh sources ../../kselftest.
	rm -rf /tmp/ovpn-selftests
	mkdir -p /tmp/ovpn-selftests/net
	cp -a "$dir/../../kselftest" /tmp/ovpn-selftests/
	cp -a "$dir" /tmp/ovpn-selftests/net/ovpn
	dir=/tmp/ovpn-selftests/net/ovpn
	export OVPN_YNL=$ksrc/tools/net/ynl/pyynl/cli.py
	# Every wall-clock wait, times the factor: ping deadlines, pauses
	# and tcpdump's window.  Nothing else changes.
	perl -pi -e '
		my $f = $ENV{OVPN_SLOW};
		s/(ping .*-w )(\d+)/$1 . $2 * $f/e;
		s/\bsleep ([\d.]+)/"sleep " . $1 * $f/e;
		s/(tcpdump_timeout=")([\d.]+)/$1 . $2 * $f/e;
	' "$dir"/*.sh
	echo "# waits stretched $OVPN_SLOW times: $(diff -r "$dir" \
		"$ksrc/tools/testing/selftests/net/ovpn" | grep -c '^<') lines"
fi

if [ "${OVPN_PING_COUNT:-0}" = 1 ]; then
	export OVPN_TRACEFS=/tmp/ovpn-tracefs
	mkdir -p "$OVPN_TRACEFS" /tmp/ovpn-ping-bin
	mount -t tracefs nodev "$OVPN_TRACEFS"
	echo 16384 >"$OVPN_TRACEFS/buffer_size_kb"
	echo 1 >"$OVPN_TRACEFS/events/skb/kfree_skb/enable"
	ln -sf /src/ovpn-lab/guest/ping-counted.py \
		/tmp/ovpn-ping-bin/ping
	export PATH=/tmp/ovpn-ping-bin:$PATH
fi

load()
{
	if [ "$1" = dist ]; then
		[ ! -d /sys/module/ovpn ] || rmmod ovpn
		# The lab blocks alias autoloading of the distribution's module;
		# here it is wanted.
		modprobe --ignore-install ovpn
		return
	fi
	lab_insmod "$ko"
}

which_module()
{
	if [ "$(cat /sys/module/ovpn/taint 2>/dev/null)" = "" ]; then
		echo "in-tree (distribution)"
	else
		echo "out-of-tree ($(cat /sys/module/ovpn/taint))"
	fi
}

# Under emulation, static keys must not be switched while tests run (see
# pin-static-keys.py).
python3 /src/ovpn-lab/guest/pin-static-keys.py &
pin=$!
trap 'kill $pin 2>/dev/null' EXIT

cd "$dir" || exit 1
printf '| %-28s | %-6s | %-6s | %-44s | %7s |\n' script module result \
	"KTAP totals" seconds >"$OVPN_LAB_OUT/table.md"
printf '|%s|%s|%s|%s|%s|\n' "------------------------------" "--------" \
	"--------" "----------------------------------------------" \
	"---------" >>"$OVPN_LAB_OUT/table.md"
failed=0
for script in "$@"; do
	for module in ${modules//,/ }; do
		log=$OVPN_LAB_OUT/$script-$module.log
		export OVPN_PING_STATS=$OVPN_LAB_OUT/pings-$module-$script.txt
		load "$module" || {
			echo "# cannot load the $module module"
			exit 1
		}
		echo "# ---- $script against the $module module:" \
			"$(which_module)"
		start=$(date +%s)
		timeout --kill-after=10 "$limit" "./$script" >"$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		totals=$(grep -a '^# Totals:' "$log" | tail -n1 |
			sed 's/^# Totals: //')
		result=pass
		[ "$rc" = 0 ] || { result=FAIL; failed=$((failed + 1)); }
		[ "$rc" = 124 ] && result=TIMEOUT
		tail -n 5 "$log" | sed 's/^/#   /'
		printf '| %-28s | %-6s | %-6s | %-44s | %7s |\n' "$script" \
			"$module" "$result" "${totals:-none}" "$secs" |
			tee -a "$OVPN_LAB_OUT/table.md"
	done
done
[ -d /sys/module/ovpn ] && rmmod ovpn
cat "$OVPN_LAB_OUT/table.md"
[ "$failed" = 0 ]
