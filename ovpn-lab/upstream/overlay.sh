#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lay this repository's files over a kernel source tree, replacing the
# tree's own ovpn driver, so that the tree builds our driver in-tree.
# Besides copying files, four files of the tree are edited, each only
# when the part of the repository that needs it is laid over:
# - drivers/net/Kconfig: its inline "config OVPN" entry gives way to
#   'source "drivers/net/ovpn/Kconfig"' (with drivers/net/ovpn);
# - MAINTAINERS: the tree's OPENVPN DATA CHANNEL OFFLOAD entry becomes
#   ours (with MAINTAINERS);
# - Documentation/networking/index.rst: lists our documents (with
#   Documentation/networking);
# - tools/testing/selftests/Makefile: lists our selftests (with
#   tools/testing/selftests/net/ovpn).
#
# Usage: overlay.sh TREE [PART...]
#   PART: drivers/net/ovpn, include/uapi/linux/ovpn.h,
#   Documentation/netlink, Documentation/networking,
#   tools/testing/selftests/net/ovpn or MAINTAINERS; default: all of them.
#   OVPN_OVERLAY_SRC: where the parts come from, laid out as this
#   repository is (default: this repository; series.sh gives each patch's
#   version of them).

. "$(dirname "$0")/../host/common.sh"

tree=${1:?usage: overlay.sh TREE [PART...]}
shift
src=${OVPN_OVERLAY_SRC:-$REPO_DIR}
parts=${*:-drivers/net/ovpn include/uapi/linux/ovpn.h Documentation/netlink \
	Documentation/networking tools/testing/selftests/net/ovpn MAINTAINERS}

# Copy the files of one directory of ours over the tree's directory of
# the same name, dropping what the tree had there only for directories
# that are wholly ours.
copy_dir()
{
	local dir=$1 replace=$2 f

	[ "$replace" = replace ] && rm -rf "${tree:?}/$dir"
	(cd "$src" && find "$dir" -type f ! -path '*/__pycache__/*' \
		! -name '*.pyc') | while read -r f; do
		install -D -m "$(stat -c %a "$src/$f")" "$src/$f" "$tree/$f"
	done
}

# The tree's own entry, or where it was before series.sh's first patch
# took it out (right before EQUALIZER), becomes a source line.
kconfig_source()
{
	grep -q '^source "drivers/net/ovpn/Kconfig"' "$tree/drivers/net/Kconfig" &&
		return
	awk '
	function ours() { print "source \"drivers/net/ovpn/Kconfig\""; print "" }
	/^config OVPN$/ { skip = 1; ours(); done = 1; next }
	skip && /^(config|menuconfig|endif|source|if|menu|endmenu)/ { skip = 0 }
	/^config EQUALIZER$/ && !done { ours(); done = 1 }
	!skip
	' "$tree/drivers/net/Kconfig" >"$tree/drivers/net/Kconfig.new"
	mv "$tree/drivers/net/Kconfig.new" "$tree/drivers/net/Kconfig"
	grep -q '^source "drivers/net/ovpn/Kconfig"' "$tree/drivers/net/Kconfig" ||
		lab_die "no ovpn entry in the tree's drivers/net/Kconfig"
}

maintainers_entry()
{
	local name

	name=$(head -n1 "$src/MAINTAINERS")
	awk -v name="$name" -v ours="$src/MAINTAINERS" '
	$0 == name { while ((getline l < ours) > 0) print l; skip = 1; next }
	skip && /^$/ { skip = 0 }
	!skip
	' "$tree/MAINTAINERS" >"$tree/MAINTAINERS.new"
	mv "$tree/MAINTAINERS.new" "$tree/MAINTAINERS"
	grep -qxF "$name" "$tree/MAINTAINERS" ||
		lab_die "no '$name' entry in the tree's MAINTAINERS"
}

# Our documents go into the index's alphabetical list, after
# openvswitch.
docs_index()
{
	local index=$tree/Documentation/networking/index.rst

	grep -qx '   ovpn' "$index" && return
	sed -i 's/^   openvswitch$/&\n   ovpn\n   ovpn-performance/' "$index"
	grep -qx '   ovpn' "$index" ||
		lab_die "no place for ovpn in Documentation/networking/index.rst"
}

# The selftests' top Makefile lists our directory after openvswitch.
selftests_target()
{
	local mk=$tree/tools/testing/selftests/Makefile

	grep -qx 'TARGETS += net/ovpn' "$mk" && return
	sed -i 's|^TARGETS += net/openvswitch$|&\nTARGETS += net/ovpn|' "$mk"
	grep -qx 'TARGETS += net/ovpn' "$mk" ||
		lab_die "no place for net/ovpn in the selftests' Makefile"
}

for part in $parts; do
	case $part in
	drivers/net/ovpn)
		copy_dir "$part" replace
		kconfig_source
		;;
	include/uapi/linux/ovpn.h)
		install -D -m 644 "$src/$part" "$tree/$part"
		;;
	Documentation/netlink | Documentation/networking)
		copy_dir "$part" merge
		if [ "$part" = Documentation/networking ]; then
			docs_index
		fi
		;;
	tools/testing/selftests/net/ovpn)
		copy_dir "$part" replace
		selftests_target
		;;
	MAINTAINERS)
		maintainers_entry
		;;
	*)
		lab_die "overlay.sh: unknown part '$part'"
		;;
	esac
done
