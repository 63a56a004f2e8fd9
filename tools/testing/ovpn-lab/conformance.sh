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
# Usage: conformance.sh [-m ours|dist] [-f flavour] [script...]
#   default: ours, amd64, every script of upstream's TEST_PROGS

. "$(dirname "$0")/common.sh"

module=ours
flavour=amd64
while getopts "m:f:" opt; do
	case $opt in
	m) module=$OPTARG ;;
	f) flavour=$OPTARG ;;
	*) lab_die "usage: conformance.sh [-m ours|dist] [-f flavour] [script...]" ;;
	esac
done
shift $((OPTIND - 1))
case $module in
ours|dist) ;;
*) lab_die "unknown module '$module'" ;;
esac

root=$("$LAB_DIR/mkroot.sh")
ksrc=$(cd "$root" && ls -d usr/src/linux-source-* | sort -V | tail -n1)
updir=/$ksrc/tools/testing/selftests/net/ovpn
scripts=${*:-$(sed -n '/^TEST_PROGS/,/end of TEST_PROGS/p' "$root$updir/Makefile" |
	grep -o 'test[a-z0-9-]*\.sh' | xargs)}

ko=none
if [ "$module" = ours ]; then
	ko=/src/$("$LAB_DIR/build.sh" "$flavour")
fi

lab_log "building upstream's ovpn-cli from $ksrc"
mkdir -p "$REPO_DIR/.build/conformance"
lab_chroot "$root" timeout 600 make -s -C "$updir" \
	OUTPUT=/src/.build/conformance KHDR_INCLUDES=-I/usr/include \
	/src/.build/conformance/ovpn-cli >&2

out=.build/out/conformance-$module-$flavour
"$LAB_DIR/boot.sh" -f "$flavour" -t $((${OVPN_TEST_TIMEOUT:-1200} * 12)) \
	-o "$out" -- OVPN_TEST_TIMEOUT=${OVPN_TEST_TIMEOUT:-1200} \
	tools/testing/ovpn-lab/guest-conformance.sh "$module" "$ko" $scripts
