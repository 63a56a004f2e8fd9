#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The operators' install paths, tested in the lab root ("./lab dkms"):
# 1. "make install" from a copy of the sources, for the lab's generic
#    kernel (KVER=...), must put ovpn.ko under updates/ where modprobe
#    finds it before the kernel's own ovpn module; "make uninstall"
#    removes it;
# 2. "make deb" (after "apt install debhelper dh-dkms", as an operator
#    would) must build ovpn-dkms_<version>_all.deb, and "apt install" of
#    it must have DKMS build the module for both of the root's kernels and
#    install it under updates/dkms/, where modprobe finds it;
# 3. the guest, booted from that root, runs the selftest suite and
#    openvpn's interop test on the module DKMS installed, loaded from
#    where DKMS put it; the churn, fuzzing and test-build scripts are left
#    to check's runs on the lab's own builds;
# 4. "apt remove ovpn-dkms" must leave the kernel's own module as the one
#    modprobe finds.
#
# The lab root is shared by every command, so it is never written: all of
# this happens on an overlayfs over it, thrown away afterwards.
#
# Usage: dkms.sh
#   OVPN_LAB_CPUS, OVPN_LAB_MEMORY: guest size (default 2, 2G)

. "$(dirname "$0")/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
kver=$(lab_kver "$root" amd64)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$REPO_DIR/dkms.conf")
[ -n "$version" ] || lab_die "no PACKAGE_VERSION in dkms.conf"
ksft=$("$LAB_DIR/host/build-kselftest.sh")
rm -rf "$REPO_DIR/.build/out/dkms"
work=$(mktemp -d "$OVPN_LAB_CACHE/dkms.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/upper" "$work/work" "$work/merged"

# What an operator's copy of the sources holds: the top-level Makefile's
# list ("make sources": the Makefile, dkms.conf, the driver, the uapi
# header) and the Debian packaging.
copy_sources()
{
	local dst=$1 f

	{
		make -s --no-print-directory -C "$REPO_DIR" sources
		(cd "$REPO_DIR" && find packaging -type f)
	} | while read -r f; do
		install -D -m "$(stat -c %a "$REPO_DIR/$f")" "$REPO_DIR/$f" \
			"$dst/$f"
	done
}

# Runs in the overlay root.  Prints "ok - ..." per step and stops at the
# first failure.
# shellcheck disable=SC2016
install_steps='
set -eu
kver=$1 version=$2
step() { echo "ok - $*"; }
where() { modinfo -k "$kver" -n ovpn; }

cd /usr/src/ovpn-make
make -s KVER="$kver" install >/tmp/make.log 2>&1 ||
	{ cat /tmp/make.log; exit 1; }
case $(where) in
/lib/modules/$kver/updates/ovpn.ko*) step "make install: modprobe finds $(where)" ;;
*) echo "not ok - make install: modprobe finds $(where)"; exit 1 ;;
esac
make -s KVER="$kver" uninstall
case $(where) in
*/updates/*) echo "not ok - make uninstall left $(where)"; exit 1 ;;
*) step "make uninstall: back to $(where)" ;;
esac

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends debhelper dh-dkms \
	>/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
make -s deb >/tmp/deb.log 2>&1 || { cat /tmp/deb.log; exit 1; }
deb=$(ls .build/deb/ovpn-dkms_"$version"_all.deb)
step "make deb: $deb"
apt-get install -y "./$deb" >/tmp/dkms.log 2>&1 ||
	{ cat /tmp/dkms.log /var/lib/dkms/ovpn/"$version"/build/make.log; exit 1; }
dkms status -m ovpn
for k in $(ls /lib/modules); do
	case $(modinfo -k "$k" -n ovpn) in
	/lib/modules/$k/updates/dkms/ovpn.ko*)
		step "apt install ovpn-dkms: modprobe finds $(modinfo -k "$k" -n ovpn)" ;;
	*) echo "not ok - apt install ovpn-dkms: $k has $(modinfo -k "$k" -n ovpn)"
	   exit 1 ;;
	esac
done
where >/var/tmp/ovpn-installed
'

# After the boot, in the same overlay: the package goes, and with it the
# module; the kernel's own is found again.
# shellcheck disable=SC2016
remove_steps='
set -eu
kver=$1
apt-get remove -y ovpn-dkms >/tmp/remove.log 2>&1 ||
	{ cat /tmp/remove.log; exit 1; }
case $(modinfo -k "$kver" -n ovpn) in
/lib/modules/$kver/kernel/*) echo "ok - apt remove ovpn-dkms: modprobe finds $(modinfo -k "$kver" -n ovpn)" ;;
*) echo "not ok - apt remove ovpn-dkms: modprobe finds $(modinfo -k "$kver" -n ovpn)"; exit 1 ;;
esac
'

copy_sources "$work/upper/usr/src/ovpn-make"

t0=$(date +%s)
set +e
unshare --mount --propagation private -- /bin/bash -c '
	set -e
	lab=$1 root=$2 work=$3 kver=$4 version=$5 steps=$6 remove=$7 ksft=$8
	shift 8
	. "$lab/host/common.sh"
	m=$work/merged
	mount -t overlay overlay \
		-o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$m"
	lab_chroot "$m" /bin/bash -c "$steps" dkms-steps "$kver" "$version"
	ko=$(cat "$m/var/tmp/ovpn-installed")
	rc=0
	OVPN_LAB_ROOT=$m "$lab/host/boot.sh" -c "${OVPN_LAB_CPUS:-2}" \
		-m "${OVPN_LAB_MEMORY:-2G}" -o .build/out/dkms -- \
		OVPN_KO="$ko" OVPN_KSFT="/src/$ksft" \
		OVPN_CLI="/src/$ksft/net/ovpn/ovpn-cli" \
		ovpn-lab/guest/selftests.sh "$@" || rc=$?
	lab_chroot "$m" /bin/bash -c "$remove" dkms-remove "$kver"
	exit "$rc"
' dkms "$LAB_DIR" "$root" "$work" "$kver" "$version" "$install_steps" \
	"$remove_steps" "$ksft" $(lab_selftests_functional)
rc=$?
set -e
summary=$(cat "$REPO_DIR/.build/out/dkms/summary" 2>/dev/null || echo "0 1 0")
lab_log "dkms check took $(($(date +%s) - t0)) s; selftests: $summary" \
	"(passed failed skipped)"
read -r p f _ <<<"$summary"
echo "$p passed, $f failed"
[ "$rc" = 0 ] && [ "$f" = 0 ]
