#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Conformance runner: upstream's tools/testing/selftests/net/ovpn, taken
# from the lab root's linux-source (never copied into this repository),
# built there and run unmodified in the guest against our module or the
# distribution kernel's.  Prints a per-script table; fails if any script
# fails.
#
# Upstream's "settings" gives each script 90 s, too short under software
# emulation (a script takes 40-190 s there): each gets
# $OVPN_TEST_TIMEOUT seconds instead (default 1200).
#
# Usage: conformance.sh [-m ours|dist|ours,dist] [-f flavour] [-x factor] [-s]
#                       [script...]
#   default: ours, amd64, every script of upstream's TEST_PROGS
#   -m ours,dist: each script against ours, then against the
#      distribution's module, in the same boot
#   -x: every wall-clock wait of the scripts (ping deadlines, sleeps,
#      tcpdump's window) this many times longer, in a copy made in the
#      guest (for the debug kernels, 15-20 times slower)
#   -s: every flood ping counted: where packets were lost, per module and
#      script, in pings-MODULE-SCRIPT.txt (ping-counted.py)

. "$(dirname "$0")/common.sh"

# lab_getopts sets these by name (printf -v), which shellcheck cannot see.
declare module flavour slow count
lab_getopts "usage: conformance.sh [-m ours|dist|ours,dist] [-f flavour] [-x factor] [-s] [script...]" \
	m:module=ours f:flavour=amd64 x:slow=1 s+count -- "$@"
shift $((OPTIND - 1))
case $module in
ours|dist|ours,dist) ;;
*) lab_die "unknown module '$module'" ;;
esac

root=$("$LAB_DIR/root/mkroot.sh")
ksrc=$(cd "$root" && ls -d usr/src/linux-source-* | sort -V | tail -n1)
updir=/$ksrc/tools/testing/selftests/net/ovpn
scripts=${*:-$(sed -n '/^TEST_PROGS/,/end of TEST_PROGS/p' \
	"$root$updir/Makefile" |
	grep -o 'test[a-z0-9-]*\.sh' | xargs)}

ko=none
if [ "$module" != dist ]; then
	ko=/src/$("$LAB_DIR/host/build.sh" "$flavour")
fi

lab_log "building upstream's ovpn-cli from $ksrc"
mkdir -p "$REPO_DIR/.build/conformance"
lab_chroot "$root" timeout 600 make -s -C "$updir" \
	OUTPUT=/src/.build/conformance KHDR_INCLUDES=-I/usr/include \
	/src/.build/conformance/ovpn-cli >&2

# A debug kernel needs more memory (KASAN's shadow, kmemleak's objects).
memory=${OVPN_LAB_MEMORY:-2G}
lab_is_debug "$flavour" && memory=${OVPN_LAB_MEMORY:-3G}
# The boot gets twelve scripts' time for each module.
modules=$(tr ',' ' ' <<<"$module" | wc -w)
out=.build/out/conformance-${module/,/-}-$flavour
"$LAB_DIR/host/boot.sh" -f "$flavour" -m "$memory" \
	-t $((${OVPN_TEST_TIMEOUT:-1200} * 12 * modules)) \
	-o "$out" -- OVPN_TEST_TIMEOUT=${OVPN_TEST_TIMEOUT:-1200} \
	OVPN_SLOW="$slow" OVPN_PING_COUNT="$count" \
	ovpn-lab/guest/conformance.sh "$module" "$ko" $scripts
