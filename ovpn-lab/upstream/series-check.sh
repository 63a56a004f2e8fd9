#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series, checked patch by patch (series.sh sets this up).  Runs
# inside the lab root with an overlay of the prepared kernel tree at
# /ktree and the series in /ktree/.ovpn-lab/series.  Each patch is
# applied with git apply, then:
# - checkpatch --strict --max-line-length=80 on the patch (lines of the
#   YNL-generated files are exempt from line length only, as in
#   intree-check.sh; "does MAINTAINERS need updating?" is not asked when
#   our MAINTAINERS entry covers every file the patch adds or deletes);
# - the configuration is refreshed (olddefconfig) and CONFIG_OVPN must be
#   m exactly when the tree has drivers/net/ovpn;
# - drivers/net/ovpn, when present, builds with W=1 and C=2 (sparse);
# - the exported headers build when the patch touches include/uapi;
# - the selftests build when the tree has them.
# One line per patch, then "N findings"; the status is non-zero unless N
# is 0.

set -uo pipefail

. "$(dirname "$0")/intree-lib.sh"

findings=0
log=$(mktemp)

# Files a patch adds or deletes that the tree's MAINTAINERS entry of ours
# does not cover, after the patch.
uncovered_files()
{
	local entry f pat ok

	entry=$(awk -v name="OPENVPN DATA CHANNEL OFFLOAD" '
		$0 == name { on = 1; next } on && /^$/ { exit }
		on && /^F:/ { print $2 }' MAINTAINERS)
	for f in $(awk '/^diff --git / { f = substr($3, 3) }
			/^(new|deleted) file mode / { print f }' "$1"); do
		ok=
		for pat in $entry; do
			case $f in "$pat" | "${pat%/}"/*) ok=1 ;; esac
		done
		[ -n "$ok" ] || echo "$f"
	done
}

# checkpatch on a patch, less line-length reports on generated files and
# "does MAINTAINERS need updating?" when our entry covers every file the
# patch adds or deletes.
checkpatch_patch()
{
	local gen ignore=

	# Generated: the file, as the patch leaves it, says so at its top
	# (a patch that only changes one shows no such line).
	gen=$(awk '/^\+\+\+ b\// { print substr($2, 3) }' "$1" | sort -u |
		while read -r f; do
			head -n 5 "$f" 2>/dev/null |
				grep -q 'auto-generated from' && echo "$f"
		done | tr '\n' '|')
	[ -z "$(uncovered_files "$1")" ] && ignore="--ignore FILE_PATH_CHANGES"
	# shellcheck disable=SC2086
	scripts/checkpatch.pl --strict --max-line-length=80 -q --show-types \
		--no-summary $ignore "$1" |
		awk -v gen="|$gen" '
		/^(WARNING|CHECK|ERROR):/ { if (msg != "") print msg; msg = $0
					    next }
		/^#[0-9]+: FILE: / && msg ~ /:LONG_LINE(_COMMENT|_STRING)?:/ {
			f = $3; sub(/:[0-9]+:$/, "", f)
			if (index(gen, "|" f "|")) { msg = ""; next }
		}
		/^$/ { if (msg != "") print msg; msg = ""; next }
		msg != "" { msg = msg "\n" $0 }
		END { if (msg != "") print msg }'
}

for patch in .ovpn-lab/series/0*.patch; do
	name=$(basename "$patch" .patch)
	case $name in 0000-*) continue ;; esac
	: >"$log"
	if ! git apply --whitespace=nowarn "$patch" >>"$log" 2>&1; then
		echo "does not apply" >>"$log"
	else
		checkpatch_patch "$patch" >>"$log"
		want=n
		[ -d drivers/net/ovpn ] && want=m
		# What a developer does to build a driver the tree gained.
		[ "$want" = m ] && scripts/config --module OVPN
		make -s olddefconfig >>"$log" 2>&1
		got=$(sed -n 's/^CONFIG_OVPN=//p' .config)
		[ "${got:-n}" = "$want" ] ||
			echo "CONFIG_OVPN is '${got:-n}', expected $want" >>"$log"
		built="config"
		if [ -d drivers/net/ovpn ]; then
			build_findings make -s -j"$jobs" W=1 C=2 CHECK="$CHECK" \
				drivers/net/ovpn/ >>"$log"
			built="$built, ovpn (W=1, C=2)"
		fi
		if grep -q '^+++ b/include/uapi/' "$patch"; then
			build_findings make -s -j"$jobs" headers >>"$log"
			built="$built, headers"
		fi
		if [ -d tools/testing/selftests/net/ovpn ]; then
			build_findings make -s -C tools/testing/selftests \
				TARGETS=net/ovpn >>"$log"
			built="$built, selftests"
		fi
	fi
	n=$(grep -c . "$log")
	findings=$((findings + n))
	if [ "$n" = 0 ]; then
		echo "ok - $name: applies, checkpatch clean; builds: $built"
	else
		echo "not ok - $name ($n lines)"
		sed 's/^/# /' "$log"
		# The rest would only repeat this patch's failure.
		[ -n "$(grep -E 'does not apply|build failed' "$log")" ] && break
	fi
done

rm -f "$log"
echo "$findings findings"
[ "$findings" = 0 ]
