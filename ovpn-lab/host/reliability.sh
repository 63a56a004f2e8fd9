#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The reliability run: the whole selftest suite - churn stress and both
# fuzzers included - on the lab's debug kernels, built from the lab root's
# linux-source with KASAN, lockdep, kmemleak, DEBUG_OBJECTS and the other
# checks listed in kdebug.sh (cached after the first build): "debug" is
# fully preemptible, "debug-rt" is PREEMPT_RT.  On "debug" every P2P
# device the selftests bring up crypts in parallel (OVPN_PARALLEL=1, see
# suite.sh); "debug-rt" keeps the default, inline path, which the lab's
# check runs everywhere else.  Each guest is booted with
# panic_on_warn, ends with a kmemleak scan (any leak fails) and has its
# kernel log checked.  Then, in a boot of their own, upstream's UDP and
# TCP selftests run against our module with every wait stretched ten
# times (conformance.sh -x 10 -s): their large flood pings are where a
# slow kernel once showed losses; where each ping lost its packets is
# kept in .build/out/conformance-ours-FLAVOUR/pings-*.txt.  Ends with
# "N passed, N failed", each upstream script counting as one.
#
# Usage: reliability.sh [flavour...]   default: debug debug-rt
#   OVPN_LAB_CPUS, OVPN_LAB_MEMORY: guest size (default 2, 3G)
#   OVPN_LAB_SCRIPT_LIMIT: seconds one script may run (default 7200: on
#   one of the lab's machines test-churn took 3,058 s on debug and 3,220 s
#   on debug-rt, close to the hour suite.sh allows by default there)

. "$(dirname "$0")/common.sh"

flavours=${*:-debug debug-rt}
cpus=${OVPN_LAB_CPUS:-2}
memory=${OVPN_LAB_MEMORY:-3G}
script_limit=${OVPN_LAB_SCRIPT_LIMIT:-7200}
upstream="test.sh test-tcp.sh"
passed=0
failed=0
t0=$(date +%s)

for flavour in $flavours; do
	t=$(date +%s)
	log=$REPO_DIR/.build/reliability-$flavour.log
	parallel=0
	[ "$flavour" != debug ] || parallel=1
	set +e
	OVPN_PARALLEL=$parallel "$LAB_DIR/host/suite.sh" -c "$cpus" \
		-m "$memory" -t "$script_limit" \
		-o ".build/out/reliability-$flavour" "$flavour" |
		tee "$log" | grep -E '^(not )?ok '
	set -e
	read -r p f s < <(lab_suite_counts "$log")
	t=$(($(date +%s) - t))
	lab_log "$flavour: $p passed, $f failed, $s skipped in $t s"
	passed=$((passed + p))
	failed=$((failed + f))

	t=$(date +%s)
	table=$REPO_DIR/.build/out/conformance-ours-$flavour/table.md
	rm -f "$table"
	set +e
	# shellcheck disable=SC2086
	OVPN_LAB_MEMORY=$memory "$LAB_DIR/host/conformance.sh" -m ours \
		-f "$flavour" -x 10 -s $upstream >"$log.upstream" 2>&1
	set -e
	# A script with no "pass" row failed, whether or not it has a row.
	p=$(grep -c '| pass ' "$table" 2>/dev/null)
	p=${p:-0}
	f=$(($(wc -w <<<"$upstream") - p))
	lab_log "$flavour, upstream's $upstream:" \
		"$p passed, $f failed in $(($(date +%s) - t)) s"
	passed=$((passed + p))
	failed=$((failed + f))
done

lab_log "reliability run took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
