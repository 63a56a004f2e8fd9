#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: upstream's ovpn selftests, unmodified, from the lab
# root's linux-source, against one module.  The module is loaded before
# each script (upstream's scripts unload it when they finish) and checked
# to be the intended one.  Prints one table row per script.
#
# Usage: guest-conformance.sh ours|dist KO SCRIPT...
#   KO is our build's ovpn.ko (ignored for "dist").

set -u

module=$1
ko=$2
shift 2
limit=${OVPN_TEST_TIMEOUT:-1200}
ksrc=$(ls -d /usr/src/linux-source-* | sort -V | tail -n1)
dir=$ksrc/tools/testing/selftests/net/ovpn
export OVPN_CLI=/src/.build/conformance/ovpn-cli

load()
{
	local dep

	[ -d /sys/module/ovpn ] && rmmod ovpn
	if [ "$module" = dist ]; then
		# The lab blocks alias autoloading of the distribution's module;
		# here it is wanted.
		modprobe --ignore-install ovpn
		return
	fi
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		modprobe "$dep"
	done
	insmod "$ko"
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
python3 /src/tools/testing/ovpn-lab/pin-static-keys.py &
pin=$!
trap 'kill $pin 2>/dev/null' EXIT

cd "$dir" || exit 1
printf '| %-28s | %-6s | %-44s | %7s |\n' script result "KTAP totals" seconds \
	>"$OVPN_LAB_OUT/table.md"
printf '|%s|%s|%s|%s|\n' "------------------------------" "--------" \
	"----------------------------------------------" "---------" \
	>>"$OVPN_LAB_OUT/table.md"
failed=0
for script in "$@"; do
	log=$OVPN_LAB_OUT/$script.log
	load || { echo "# cannot load the $module module"; exit 1; }
	echo "# ---- $script against the $module module: $(which_module)"
	start=$(date +%s)
	timeout --kill-after=10 "$limit" "./$script" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	totals=$(grep -a '^# Totals:' "$log" | tail -n1 | sed 's/^# Totals: //')
	result=pass
	[ "$rc" = 0 ] || { result=FAIL; failed=$((failed + 1)); }
	[ "$rc" = 124 ] && result=TIMEOUT
	tail -n 5 "$log" | sed 's/^/#   /'
	printf '| %-28s | %-6s | %-44s | %7s |\n' "$script" "$result" \
		"${totals:-none}" "$secs" | tee -a "$OVPN_LAB_OUT/table.md"
done
[ -d /sys/module/ovpn ] && rmmod ovpn
cat "$OVPN_LAB_OUT/table.md"
[ "$failed" = 0 ]
