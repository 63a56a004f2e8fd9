#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole selftest suite on one kernel flavour: build ovpn.ko for it
# with W=1 and install the selftests (build-kselftest.sh), boot it, run
# every selftest in the guest (guest/selftests.sh,
# which ends with a kmemleak scan on the debug kernels) and check the
# guest's kernel log.  Prints one "ok"/"not ok" line per step and, last,
# "<passed> <failed> <skipped>" counting the build, the log check and
# every test point.
#
# Usage: suite.sh [-c cpus] [-m memory] [-o outdir] [-t seconds] flavour
#                 [script...]
#   flavour: amd64, rt-amd64, debug or debug-rt (see boot.sh); scripts
#   default to every selftest; outdir defaults to .build/out/suite-<flavour>
#   OVPN_PARALLEL=1: every P2P device the tests bring up with link_up
#   (lib.sh) encrypts and decrypts on every CPU
#   -t: the time one script may run, 900 s by default, 3600 s on the debug
#   kernels, which run several times slower under emulation.  The limit
#   is there to end a hung script, not to time one, and machines differ:
#   on one of the lab's, test-churn on the debug kernel took 2,109 s for
#   the first 5 of its 15 points, on course for well over the hour.  With
#   -t the boot's limit is every script's limit, plus half an hour for the
#   boot and the closing kmemleak scan (by default an hour, four on the
#   debug kernels).

. "$(dirname "$0")/common.sh"

# lab_getopts sets these by name (printf -v), which shellcheck cannot see.
declare cpus memory out script_limit
lab_getopts "usage: suite.sh [-c n] [-m mem] [-o dir] [-t s] flavour [script...]" \
	"c:cpus=${OVPN_LAB_CPUS:-2}" "m:memory=${OVPN_LAB_MEMORY:-2G}" \
	o:out t:script_limit -- "$@"
shift $((OPTIND - 1))
[ $# -gt 0 ] || lab_die "no flavour"
flavour=$1
shift
scripts=${*:-$(lab_selftests)}
out=${out:-.build/out/suite-$flavour}

passed=0
failed=0
skipped=0

if [ -n "$script_limit" ]; then
	case $script_limit in
	*[!0-9]*) lab_die "-t takes a number of seconds" ;;
	esac
	# shellcheck disable=SC2086 # a list
	set -- $scripts
	boot_limit=$((script_limit * $# + 1800))
elif lab_is_debug "$flavour"; then
	script_limit=3600
	boot_limit=14400
else
	script_limit=900
	boot_limit=3600
fi

root=$("$LAB_DIR/root/mkroot.sh")
lab_kernel "$root" "$flavour"
# The selftests as netdev's CI installs them, ovpn-cli included: every
# selftest skips without it, and the lab's tests use the same one.
ksft=$("$LAB_DIR/host/build-kselftest.sh")
kver=$lab_kernel_release

set +e
ko=$("$LAB_DIR/host/build.sh" "$flavour")
lab_result $? "ovpn.ko builds with W=1 and no warning ($kver)"
# test-key-exhaustion.sh's variant; without it that script skips.
ko_end=$("$LAB_DIR/host/build.sh" -x "$flavour")
lab_result $? "ovpn.ko with few packet ids builds with W=1 ($kver)"
# test-usage-limit.sh's.
ko_usage=$("$LAB_DIR/host/build.sh" -u "$flavour")
lab_result $? "ovpn.ko with keys near their usage limit builds ($kver)"
# test-epoch-rollover.sh's.
ko_epoch=$("$LAB_DIR/host/build.sh" -e "$flavour")
lab_result $? "ovpn.ko with short epochs builds ($kver)"
# test-ring-overflow.sh's.
ko_rings=$("$LAB_DIR/host/build.sh" -r "$flavour")
lab_result $? "ovpn.ko with small crypt rings builds ($kver)"
# test-openvpn-epoch.sh's daemon: openvpn with tools/openvpn's patch.
openvpn_epoch=$("$LAB_DIR/host/openvpn-epoch.sh")
lab_result $? "openvpn with the epoch patch builds"
if [ -n "$ko" ]; then
	# The names go in a file beside the results: the whole list does not
	# fit the guest command (boot.sh).
	mkdir -p "$(dirname "$REPO_DIR/$out")"
	echo "$scripts" >"$REPO_DIR/$out.scripts"
	"$LAB_DIR/host/boot.sh" -f "$flavour" -c "$cpus" -m "$memory" \
		-t "$boot_limit" -o "$out" -- \
		OVPN_KO=/src/$ko OVPN_KSFT=/src/$ksft \
		OVPN_CLI=/src/$ksft/net/ovpn/ovpn-cli \
		${ko_end:+OVPN_KO_PKTID_END=/src/$ko_end} \
		${ko_usage:+OVPN_KO_USAGE_END=/src/$ko_usage} \
		${ko_epoch:+OVPN_KO_EPOCH_ROLL=/src/$ko_epoch} \
		${ko_rings:+OVPN_KO_SMALL_RINGS=/src/$ko_rings} \
		${openvpn_epoch:+OPENVPN_EPOCH=/src/$openvpn_epoch} \
		OVPN_TEST_TIMEOUT=$script_limit \
		${OVPN_PARALLEL:+OVPN_PARALLEL=$OVPN_PARALLEL} \
		ovpn-lab/guest/selftests.sh "@/src/$out.scripts" >&2
	"$LAB_DIR/host/check-log.sh" "$REPO_DIR/$out/console.log"
	lab_result $? "guest kernel log is clean ($kver)"
	if [ -r "$REPO_DIR/$out/summary" ]; then
		read -r p f s <"$REPO_DIR/$out/summary"
	else
		p=0 f=1 s=0
		echo "not ok - no selftest summary from the guest ($kver)"
	fi
	lab_log "selftests on $kver: $p passed, $f failed, $s skipped"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
fi
echo "$passed $failed $skipped"
