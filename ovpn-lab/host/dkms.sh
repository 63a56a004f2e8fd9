#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The operators' install paths, tested in the lab root ("./lab dkms"):
# 1. "make install" from a copy of the sources, for the lab's generic
#    kernel (KVER=...), must put ovpn.ko under updates/ where modprobe
#    finds it before the kernel's own ovpn module; "make uninstall"
#    removes it;
# 2. dkms add, build and install from /usr/src/ovpn-<version> must do the
#    same under updates/dkms/;
# 3. the guest, booted from that root, runs the selftest suite on the
#    module dkms installed, loaded from where dkms put it; the churn and
#    fuzzing tests are left to check's runs on the lab's own builds.
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

# What an operator's copy of the sources holds: the top-level Makefile,
# dkms.conf, the driver and the uapi header.
copy_sources()
{
	local dst=$1 f

	(cd "$REPO_DIR" && find Makefile dkms.conf drivers/net/ovpn \
		include/uapi/linux/ovpn.h -type f \
		\( -name Makefile -o -name Kconfig -o -name dkms.conf \
		   -o -name '*.[ch]' \)) | while read -r f; do
		install -D -m 644 "$REPO_DIR/$f" "$dst/$f"
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

dkms add -m ovpn -v "$version"
dkms build -m ovpn -v "$version" -k "$kver" >/tmp/dkms.log 2>&1 ||
	{ cat /tmp/dkms.log /var/lib/dkms/ovpn/"$version"/build/make.log; exit 1; }
step "dkms build"
dkms install -m ovpn -v "$version" -k "$kver"
dkms status -m ovpn
case $(where) in
/lib/modules/$kver/updates/dkms/ovpn.ko*) step "dkms install: modprobe finds $(where)" ;;
*) echo "not ok - dkms install: modprobe finds $(where)"; exit 1 ;;
esac
where >/var/tmp/ovpn-installed
'

copy_sources "$work/upper/usr/src/ovpn-make"
copy_sources "$work/upper/usr/src/ovpn-$version"

t0=$(date +%s)
set +e
unshare --mount --propagation private -- /bin/bash -c '
	set -e
	lab=$1 root=$2 work=$3 kver=$4 version=$5 steps=$6 ksft=$7
	shift 7
	. "$lab/host/common.sh"
	m=$work/merged
	mount -t overlay overlay \
		-o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$m"
	lab_chroot "$m" /bin/bash -c "$steps" dkms-steps "$kver" "$version"
	ko=$(cat "$m/var/tmp/ovpn-installed")
	OVPN_LAB_ROOT=$m "$lab/host/boot.sh" -c "${OVPN_LAB_CPUS:-2}" \
		-m "${OVPN_LAB_MEMORY:-2G}" -o .build/out/dkms -- \
		OVPN_KO="$ko" OVPN_KSFT="/src/$ksft" \
		OVPN_CLI="/src/$ksft/net/ovpn/ovpn-cli" \
		ovpn-lab/guest/selftests.sh "$@"
' dkms "$LAB_DIR" "$root" "$work" "$kver" "$version" "$install_steps" \
	"$ksft" $(lab_selftests_functional)
rc=$?
set -e
summary=$(cat "$REPO_DIR/.build/out/dkms/summary" 2>/dev/null || echo "0 1 0")
lab_log "dkms check took $(($(date +%s) - t0)) s; selftests: $summary" \
	"(passed failed skipped)"
read -r p f _ <<<"$summary"
echo "$p passed, $f failed"
[ "$rc" = 0 ] && [ "$f" = 0 ]
