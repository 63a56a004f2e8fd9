#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the lab root: compare every constant of our generated UAPI header
# with the distribution kernel's include/uapi/linux/ovpn.h (upstream's
# ABI).  Same names, same values, nothing missing, nothing extra.
#
# Usage: abi-check.sh OUR_HEADER REFERENCE_HEADER

set -euo pipefail

ours=$1
ref=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names()
{
	grep -ohE '\bOVPN_[A-Z0-9_]+\b' "$1" | sort -u
}

names "$ref" >"$tmp/ref.names"
names "$ours" >"$tmp/our.names"
if ! diff -u "$tmp/ref.names" "$tmp/our.names"; then
	echo "abi-check: the two headers define different names"
	exit 1
fi

# Print each constant as the compiler sees it, against either header.
{
	echo '#include <stdio.h>'
	echo '#include HDR'
	echo '#define P(x) _Generic((x), char *: printf("%s=\"%s\"\n", #x, (char *)(long)(x)), default: printf("%s=%lld\n", #x, (long long)(x)))'
	echo 'int main(void) {'
	sed 's/.*/\tP(&);/' "$tmp/ref.names"
	echo 'return 0; }'
} >"$tmp/dump.c"

for h in ref our; do
	hdr=$ref
	[ "$h" = our ] && hdr=$ours
	cc -w -DHDR="\"$hdr\"" -o "$tmp/dump-$h" "$tmp/dump.c"
	"$tmp/dump-$h" >"$tmp/$h.values"
done

if ! diff -u "$tmp/ref.values" "$tmp/our.values"; then
	echo "abi-check: values differ from the reference"
	exit 1
fi
echo "abi-check: $(wc -l <"$tmp/ref.values") constants identical to $ref"
