#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netdev's mechanical checks on our driver, built in-tree.  Runs inside
# the lab root, with a prepared kernel tree that has this repository laid
# over it at /ktree (upstream-check.sh sets that up) and the repository
# at /src.  Each check prints "ok - ..." or "not ok - ..." followed by its
# findings; the last line is "N findings" and the status is non-zero if N
# is not 0.
#
# The checks:
# - the driver builds in-tree with W=1 and sparse on every file (C=2);
# - checkpatch --strict --max-line-length=80 on every file we lay over;
# - kernel-doc -none -Wall on every source and header;
# - the selftests' kernel config fragment is sorted;
# - the selftests build and install as kselftest does ("make
#   kselftest-install"), against the tree's exported headers.
#
# The files the YNL generator writes (they say "auto-generated from" the
# spec in their first lines) are checked like the others, except for line
# length: the generator decides where their lines break, and they must
# stay byte for byte what it writes (tools/net/ynl/ynl-regen.sh).

set -uo pipefail

. "$(dirname "$0")/intree-lib.sh"

findings=0
log=$(mktemp)

check()
{
	local name=$1 n

	shift
	"$@" >"$log" 2>&1
	n=$(grep -c . "$log")
	if [ "$n" = 0 ]; then
		echo "ok - $name"
	else
		echo "not ok - $name ($n lines)"
		sed 's/^/# /' "$log"
		findings=$((findings + n))
	fi
}

overlay_files()
{
	find drivers/net/ovpn include/uapi/linux/ovpn.h \
		Documentation/netlink/specs/ovpn.yaml \
		Documentation/networking/ovpn*.rst \
		tools/testing/selftests/net/ovpn -type f \
		! -path '*/__pycache__/*' ! -name '*.pyc' ! -name ovpn-cli \
		! -name '*.o' ! -name '.*' | sort
}

checkpatch_all()
{
	local f ignore

	for f in $(overlay_files); do
		ignore=
		head -n 5 "$f" | grep -q 'auto-generated from' &&
			ignore="--ignore LONG_LINE,LONG_LINE_COMMENT"
		# shellcheck disable=SC2086
		scripts/checkpatch.pl --strict --max-line-length=80 -q \
			--show-types $ignore -f "$f"
	done
}

kernel_doc_all()
{
	local f

	for f in $(overlay_files | grep -E '\.[ch]$'); do
		scripts/kernel-doc -none -Wall "$f"
	done
}

config_sorted()
{
	LC_ALL=C sort -c tools/testing/selftests/net/ovpn/config
}

make -s olddefconfig >/dev/null 2>&1
grep -qx 'CONFIG_OVPN=m' .config || { echo "CONFIG_OVPN is not m"; exit 1; }

# Built as part of the tree (objects and the linked ovpn.o), every file
# through sparse.  The tree has no vmlinux for modpost to resolve symbols
# against: the module's final link is the out-of-tree build's
# ("./lab build"), which modpost checks against the kernel's symbols.
check "drivers/net/ovpn builds in-tree with W=1 and C=2 (sparse)" \
	build_findings make -s -j"$jobs" W=1 C=2 CHECK="$CHECK" \
	drivers/net/ovpn/
check "checkpatch --strict --max-line-length=80 on every file" \
	checkpatch_all
check "kernel-doc -none -Wall on every source and header" kernel_doc_all
check "tools/testing/selftests/net/ovpn/config is sorted" config_sorted
# kselftest-install, not kselftest: running them loads the module, which
# only ever happens in a guest (suite.sh).
check "make kselftest-install TARGETS=net/ovpn" build_findings \
	make -s -j"$jobs" kselftest-install TARGETS=net/ovpn

rm -f "$log"
echo "$findings findings"
[ "$findings" = 0 ]
