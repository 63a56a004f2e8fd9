#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or find) the lab's in-tree kernel tree: the lab root's
# linux-source, unpacked outside the root, configured like the lab's
# generic kernel and made ready for building modules ("modules_prepare",
# "headers").  It is cached under $OVPN_LAB_CACHE, keyed by the source
# package's version and this recipe, and never modified afterwards: the
# in-tree checks and the patch series work on an overlay of it
# (ktree-overlay.sh).
#
# Three changes to the distribution's configuration keep a check build
# short; none of them touches what the driver's code sees:
# - no debug information and no BTF (nothing is debugged or traced here);
# - no module signing or compression (nothing built here is installed).
#
# Usage: ktree.sh      prints the tree's path

. "$(dirname "$0")/../host/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
kver=$(lab_kver "$root" amd64)
srcpkg=$(cd "$root/usr/src" && ls -d linux-source-* | sort -V | tail -n1)
version=$(lab_chroot "$root" dpkg-query -W -f '${Version}' "$srcpkg")
key=$(cat "$0" | sha256sum | cut -c1-8)
tree=$OVPN_LAB_CACHE/ktree-$version-$key

if [ -e "$tree/.ovpn-lab-ready" ]; then
	echo "$tree"
	exit 0
fi

lab_log "preparing the in-tree kernel tree ($srcpkg $version, a few minutes)"
rm -rf "$tree" "$tree.tmp"
cp -a "$root/usr/src/$srcpkg" "$tree.tmp"
cp "$root/boot/config-$kver" "$tree.tmp/.config"
cp "$root/usr/src/linux-headers-$kver/Module.symvers" "$tree.tmp/"

log=$tree.log
mkdir -p "$root/ktree"
if ! lab_chroot_tree "$root" "$tree.tmp" /bin/bash -euc '
	cd /ktree
	scripts/config --disable DEBUG_INFO --enable DEBUG_INFO_NONE \
		--disable DEBUG_INFO_BTF --disable MODULE_SIG \
		--disable MODULE_COMPRESS --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS ""
	make -s olddefconfig
	make -s -j"$(nproc)" modules_prepare
	make -s -j"$(nproc)" headers
' >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	lab_die "could not prepare the kernel tree (log: $log)"
fi
touch "$tree.tmp/.ovpn-lab-ready"
mv "$tree.tmp" "$tree"
echo "$tree"
