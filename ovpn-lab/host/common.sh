# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers of the ovpn test lab.  Sourced, never run.
#
# Everything slow to rebuild lives under $OVPN_LAB_CACHE, outside the work
# tree, keyed by what determines it, so a second run reuses it and a fresh
# machine rebuilds it.

set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$LAB_DIR/.." && pwd)
OVPN_LAB_CACHE=${OVPN_LAB_CACHE:-/var/cache/ovpn-lab}
# Debian suite of the lab root and the suite the 7.3 kernel comes from.
LAB_SUITE=trixie
LAB_KSUITE=trixie-backports

lab_log()
{
	printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2
}

lab_die()
{
	lab_log "error: $*"
	exit 1
}

# lab_getopts USAGE OPTION... -- ARG...: a lab script's options, parsed
# here once, so that each script only declares which it takes.  An OPTION
# is "x:name=default" (-x VALUE sets $name, which is "default" without
# it; no "=default": empty) or "x+name" (-x alone sets $name to 1, else
# it is 0).  An unknown option or a missing value dies with USAGE, after
# getopts' own complaint.  OPTIND is left after the options, as getopts
# leaves it: the caller shifts $((OPTIND - 1)).  The locals are prefixed
# so that they never hide a caller's variable of the same name, which
# printf -v would then set instead.
lab_getopts()
{
	local _lo_usage=$1 _lo_letters='' _lo_opt _lo_name
	local -A _lo_var=() _lo_flag=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		_lo_opt=${1:0:1}
		_lo_name=${1:2}
		case ${1:1:1} in
		:)
			_lo_letters+="$_lo_opt:"
			_lo_var[$_lo_opt]=${_lo_name%%=*}
			# What follows the first "=", if any, is the default.
			printf -v "${_lo_var[$_lo_opt]}" '%s' \
				"${_lo_name:${#_lo_var[$_lo_opt]} + 1}"
			;;
		+)
			_lo_letters+=$_lo_opt
			_lo_var[$_lo_opt]=$_lo_name
			_lo_flag[$_lo_opt]=1
			printf -v "$_lo_name" 0
			;;
		*)
			lab_die "lab_getopts: bad option declaration '$1'"
			;;
		esac
		shift
	done
	[ $# -gt 0 ] || lab_die "lab_getopts: no -- before the arguments"
	shift
	OPTIND=1
	while getopts "$_lo_letters" _lo_opt; do
		[ -n "${_lo_var[$_lo_opt]:-}" ] || lab_die "$_lo_usage"
		if [ -n "${_lo_flag[$_lo_opt]:-}" ]; then
			printf -v "${_lo_var[$_lo_opt]}" 1
		else
			printf -v "${_lo_var[$_lo_opt]}" '%s' "$OPTARG"
		fi
	done
}

# The Debian mirror the host already uses: never hard-coded, read from the
# host's apt configuration at run time.
lab_mirror()
{
	local uri

	uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources \
		2>/dev/null | tr ' ' '\n' | grep -v -- '-security' | head -n1)
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 !~ /security/ {
			for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list)
	fi
	[ -n "$uri" ] || lab_die "no Debian mirror found in the host's apt configuration"
	echo "${uri%/}"
}

# The root is keyed by the recipe that builds it: change the recipe, get a
# new root.
lab_root_key()
{
	cat "$LAB_DIR/root/mkroot.sh" "$LAB_DIR/root/packages.txt" | sha256sum | cut -c1-12
}

# OVPN_LAB_ROOT picks an existing root instead (for experiments).
lab_root()
{
	echo "${OVPN_LAB_ROOT:-$OVPN_LAB_CACHE/root-$LAB_SUITE-$(lab_root_key)}"
}

# Run a command chrooted into the lab root, inside a private mount
# namespace so that /proc, /sys, /dev and /tmp mounts vanish with it.  The
# repository is bind-mounted at /src.
lab_chroot()
{
	local root=$1

	shift
	mkdir -p "$root/src"
	unshare --mount --propagation private -- /bin/bash -c '
		root=$1; repo=$2; shift 2
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs tmpfs "$root/tmp"
		mount --bind "$repo" "$root/src"
		exec chroot "$root" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TERM=${TERM:-dumb} LC_ALL=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive "$@"
	' lab-chroot "$root" "$REPO_DIR" "$@"
}

# lab_chroot with a kernel tree of the host (a directory outside the root)
# bind-mounted at /ktree, writable, with what is mounted below it.
lab_chroot_tree()
{
	local root=$1 tree=$2

	shift 2
	mkdir -p "$root/ktree"
	unshare --mount --propagation private -- /bin/bash -c '
		mount --rbind "$1" "$2/ktree"
		shift 2
		. "$0"
		lab_chroot "$@"
	' "$LAB_DIR/host/common.sh" "$tree" "$root" "$root" "$@"
}

# lab_chroot_overlaid [-b DIR:PATH] [-f FILE:PATH] ROOT TREE COMMAND...:
# COMMAND in ROOT with a kernel tree at /ktree: TREE with this repository
# laid over it (overlay.sh), on a throwaway overlayfs, so that TREE itself
# is never written.  -b binds the host's DIR at PATH in the tree (a cache
# that outlives the overlay), -f installs the host's FILE at PATH.
lab_chroot_overlaid()
{
	local bind='' file='' opt OPTIND=1 work rc

	while getopts "b:f:" opt; do
		case $opt in
		b) bind=$OPTARG ;;
		f) file=$OPTARG ;;
		*) lab_die "lab_chroot_overlaid: bad option" ;;
		esac
	done
	shift $((OPTIND - 1))
	work=$(mktemp -d "$OVPN_LAB_CACHE/overlay.XXXXXX")
	mkdir "$work/upper" "$work/work" "$work/merged"
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		root=$1 tree=$2 work=$3 bind=$4 file=$5
		shift 5
		. "$0"
		m=$work/merged
		mount -t overlay overlay -o "lowerdir=$tree" \
			-o "upperdir=$work/upper,workdir=$work/work" "$m"
		"$LAB_DIR/upstream/overlay.sh" "$m" >/dev/null
		if [ -n "$bind" ]; then
			mkdir -p "$m/${bind#*:}"
			mount --bind "${bind%%:*}" "$m/${bind#*:}"
		fi
		[ -z "$file" ] || install -D "${file%%:*}" "$m/${file#*:}"
		lab_chroot_tree "$root" "$m" "$@"
	' "$LAB_DIR/host/common.sh" "$1" "$2" "$work" "$bind" "$file" "${@:3}"
	rc=$?
	rm -rf "$work"
	return "$rc"
}

# lab_selftests: the scripts a suite runs, by name alone, as
# guest/selftests.sh takes them (the guest command's limit, boot.sh, has
# no room for every full path): the selftests in the order of the
# Makefile's TEST_PROGS, then the lab's own tests (ovpn-lab/tests), which
# build on them: interop, scale, a test build, fuzzing and churn.
lab_selftests()
{
	local dir=tools/testing/selftests/net/ovpn

	{
		sed -n '/^TEST_PROGS/,/end of TEST_PROGS/p' \
			"$REPO_DIR/$dir/Makefile" | grep -oE 'test-[a-z0-9-]+\.(sh|py)'
		echo test-openvpn.sh test-openvpn-epoch.sh test-scale.sh \
			test-key-exhaustion.sh test-usage-limit.sh \
			test-epoch-rollover.sh test-ring-overflow.sh \
			test-fuzz-packets.sh test-fuzz-netlink.sh test-churn.sh
	} | xargs
}

# lab_kernel ROOT FLAVOUR: the kernel a flavour boots and builds against,
# in globals: lab_kernel_release, lab_kernel_image and lab_kernel_build
# (paths as the root sees them) and lab_kernel_chroot, the command that
# enters the root with that kernel's tree at hand.  "amd64" and "rt-amd64"
# are the root's Debian kernels; "debug" and "debug-rt" are the lab's
# debug kernels (kdebug.sh builds them, cached), whose tree is
# bind-mounted at /ktree.
lab_kernel()
{
	local root=$1 flavour=$2 tree

	case $flavour in
	debug | debug-rt)
		tree=$("$LAB_DIR/root/kdebug.sh" "$flavour")
		lab_kernel_release=$(cat "$tree/include/config/kernel.release")
		lab_kernel_image=/ktree/arch/x86/boot/bzImage
		lab_kernel_build=/ktree
		lab_kernel_chroot=(lab_chroot_tree "$root" "$tree")
		;;
	*)
		lab_kernel_release=$(lab_kver "$root" "$flavour")
		lab_kernel_image=/boot/vmlinuz-$lab_kernel_release
		lab_kernel_build=/lib/modules/$lab_kernel_release/build
		lab_kernel_chroot=(lab_chroot "$root")
		;;
	esac
}

# lab_is_debug FLAVOUR: whether the flavour is one of the debug kernels.
lab_is_debug()
{
	[[ $1 == debug* ]]
}

# lab_selftests_functional: the selftests without the stress ones (churn
# and the fuzzers) and without those that need a test build of the
# module (key exhaustion, usage limit), for runs that check how the
# module was installed rather than the module itself.
lab_selftests_functional()
{
	lab_selftests | tr ' ' '\n' |
		grep -vE '^test-(churn|fuzz-[a-z]+|key-exhaustion|usage-limit|epoch-rollover|ring-overflow|openvpn-epoch)\.sh$' |
		xargs
}

# lab_result STATUS NAME: a line "ok - NAME" if STATUS is 0, else "not ok
# - NAME", counted in the caller's globals passed and failed.
lab_result()
{
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok - $2"
	else
		failed=$((failed + 1))
		echo "not ok - $2"
	fi
}

# lab_suite_counts LOG: "<passed> <failed> <skipped>" from the last line
# of a suite.sh run's output, or one failure if the run did not get that
# far.
lab_suite_counts()
{
	tail -n1 "$1" | grep -xE '[0-9]+ [0-9]+ [0-9]+' || echo "0 1 0"
}

# Kernel release of the chosen flavour inside the root ("amd64" or
# "rt-amd64"), the newest one installed.  The release is
# "<version>-<flavour>" and the version has no dash.
lab_kver()
{
	local root=$1 flavour=${2:-amd64}

	ls "$root/lib/modules" | grep -E -- "^[^-]+-${flavour}\$" | sort -V | \
		tail -n1 | grep . || lab_die "no $flavour kernel in $root"
}
