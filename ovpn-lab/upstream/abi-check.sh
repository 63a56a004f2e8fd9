#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the lab root: compare every constant of our generated UAPI header
# with the distribution kernel's include/uapi/linux/ovpn.h (upstream's
# ABI).  Every upstream name is there with its value; a name upstream does
# not have must be one of our extensions, listed in abi-extensions.txt
# next to this script; an enum's *_MAX may only grow with them.
#
# Usage: abi-check.sh OUR_HEADER REFERENCE_HEADER

set -euo pipefail

ours=$1
ref=$2
extensions=$(dirname "$0")/abi-extensions.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names()
{
	grep -ohE '\bOVPN_[A-Z0-9_]+\b' "$1" | sort -u
}

names "$ref" >"$tmp/ref.names"
names "$ours" >"$tmp/our.names"
sed -n 's/^\(OVPN_[A-Z0-9_]*\).*/\1/p' "$extensions" | sort -u >"$tmp/ext.names"
missing=$(comm -23 "$tmp/ref.names" "$tmp/our.names")
extra=$(comm -13 "$tmp/ref.names" "$tmp/our.names" |
	comm -23 - "$tmp/ext.names")
if [ -n "$missing$extra" ]; then
	echo "abi-check: missing upstream names:" $missing
	echo "abi-check: names neither upstream nor extensions:" $extra
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

# Identical, but a *_MAX: the extensions raise it, never lower it.
if ! awk -F= 'NR == FNR { ref[$1] = $2; next }
	      $1 ~ /_MAX$/ ? $2 + 0 < ref[$1] + 0 : $2 != ref[$1] {
		print "abi-check: " $1 " is " $2 ", upstream " ref[$1]; bad = 1 }
	      END { exit bad }' "$tmp/ref.values" "$tmp/our.values"; then
	echo "abi-check: values differ from the reference"
	exit 1
fi
echo "abi-check: $(wc -l <"$tmp/ref.values") constants as in $ref;" \
	"extensions: $(comm -13 "$tmp/ref.names" "$tmp/our.names" | xargs)"
