#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's test command ("make check"): from a bare Debian machine,
# build the lab root (cached), build the module for each kernel flavour
# with W=1, check the UAPI against upstream's, build ovpn-cli, run the
# KUnit tests on User-Mode Linux, boot each
# flavour and run the selftests in the guest, then prove the lab itself
# catches a failing assertion and a kernel warning.  Ends with the line
# "N passed, N failed" and fails if anything failed.
#
# Usage: check.sh [flavour...]     default: amd64 rt-amd64
#   OVPN_LAB_CPUS, OVPN_LAB_MEMORY: guest size (default 2, 2G)

. "$(dirname "$0")/common.sh"

flavours=${*:-amd64 rt-amd64}
cpus=${OVPN_LAB_CPUS:-2}
memory=${OVPN_LAB_MEMORY:-2G}
passed=0
failed=0
t0=$(date +%s)

root=$("$LAB_DIR/root/mkroot.sh")
lab_log "lab root: $root"
mkdir -p "$REPO_DIR/.build"
scripts=$(lab_selftests)

# Host-side checks, in the root's toolchain.
set +e
lab_chroot "$root" /src/ovpn-lab/upstream/abi-check.sh \
	/src/include/uapi/linux/ovpn.h /usr/include/linux/ovpn.h
lab_result $? "uapi header matches the distribution kernel's ovpn ABI"

"$LAB_DIR/host/build-cli.sh" >/dev/null
lab_result $? "ovpn-cli builds without warnings"

# Upstream readiness: in-tree checks and the patch series, each with its
# own log in .build/.
"$LAB_DIR/upstream/upstream-check.sh" >"$REPO_DIR/.build/upstream-check.log" 2>&1
lab_result $? "upstream-check: $(grep -E '^[0-9]+ findings$' \
	"$REPO_DIR/.build/upstream-check.log")"
"$LAB_DIR/upstream/series.sh" >"$REPO_DIR/.build/series.log" 2>&1
rc=$?
n=$(grep -c '^ok - ' "$REPO_DIR/.build/series.log")
lab_result "$rc" "series: $n patches apply, build and pass checkpatch"
"$LAB_DIR/upstream/kunit.sh" >"$REPO_DIR/.build/kunit.log" 2>&1
rc=$?
n=$(grep -o 'Ran [0-9]* tests: passed: [0-9]*' "$REPO_DIR/.build/kunit.log")
lab_result "$rc" "kunit on User-Mode Linux: ${n:-no tests ran}"
set -e

for flavour in $flavours; do
	set +e
	log=$REPO_DIR/.build/suite-$flavour.log
	# The soak (test-churn.sh, five minutes) runs here on the generic
	# kernel only: on PREEMPT_RT it is the reliability run's, on
	# debug-rt, where lockdep watches it; this keeps the check within
	# its hour and ten minutes.
	flavour_scripts=$scripts
	[ "$flavour" != rt-amd64 ] ||
		flavour_scripts=$(tr ' ' '\n' <<<"$scripts" |
			grep -vx test-churn.sh | xargs)
	"$LAB_DIR/host/suite.sh" -c "$cpus" -m "$memory" \
		-o ".build/out/check-$flavour" "$flavour" $flavour_scripts |
		tee "$log" | grep -E '^(not )?ok '
	set -e
	read -r p f s < <(lab_suite_counts "$log")
	passed=$((passed + p))
	failed=$((failed + f))
done

# The operators' install paths, and the whole suite on the module DKMS
# installed (generic flavour).
if [[ " $flavours " == *" amd64 "* ]]; then
	set +e
	"$LAB_DIR/host/dkms.sh" >"$REPO_DIR/.build/dkms.log" 2>&1
	lab_result $? "make install, make deb and the ovpn-dkms package work in the lab root"
	set -e
	read -r p f s <"$REPO_DIR/.build/out/dkms/summary" 2>/dev/null ||
		{ p=0 f=1 s=0; }
	lab_log "selftests on the DKMS-installed module: $p passed, $f failed"
	passed=$((passed + p))
	failed=$((failed + f))
fi

# The lab's self-test: a run with one failing assertion and one kernel
# warning must be reported as failed, for both reasons.  The same boot
# runs under the benchmark's ovpn-count plugin, which must count a known
# workload exactly.
kver=$(lab_kver "$root" amd64)
lab_chroot "$root" timeout 600 make -C "/lib/modules/$kver/build" \
	M=/src/ovpn-lab/guest/lab-warn MO="/src/.build/lab-warn-$kver" \
	modules >/dev/null
"$LAB_DIR/bench/build-tools.sh" "$root"
out=.build/out/lab-selftest
set +e
"$LAB_DIR/host/boot.sh" -o "$out" \
	-p "/src/.build/bench/ovpn-count.so,out=/src/$out/plugin.txt" -- \
	"/src/.build/bench/count-check 1000; \
	 insmod /src/.build/lab-warn-$kver/lab_warn.ko; \
	 ovpn-lab/guest/selftests.sh ovpn-lab/guest/selftest-fail.sh" \
	>"$REPO_DIR/$out.log" 2>&1
rc=$?
lab_log "lab self-test boot returned $rc (must be non-zero)"
[ "$rc" != 0 ]
lab_result $? "lab: a failing run makes the boot fail"
summary=$(cat "$REPO_DIR/$out/summary" 2>/dev/null)
[ "$summary" = "1 1 0" ]
lab_result $? "lab: a failing assertion is counted as one failure (got '$summary')"
complaints=$("$LAB_DIR/host/check-log.sh" "$REPO_DIR/$out/console.log" 2>&1)
grep -q 'WARNING: lab_warn.c' <<<"$complaints"
lab_result $? "lab: a guest kernel WARNING is caught in the log"
# User-mode sites have short addresses; kernel ones start with ffff.
sites=$(awk '$1 == "window" { w = $2 } w == 0 && $1 == "site" &&
	length($2) < 16 { print $4 }' "$REPO_DIR/$out/plugin.txt" 2>/dev/null |
	sort | xargs)
[ "$sites" = "1000 1000" ]
lab_result $? "lab: ovpn-count counts 1000 LOCK INC and 1000 XCHG, no plain INC (got '$sites')"

lab_log "check took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
