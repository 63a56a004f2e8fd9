#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or find) a sparse recent enough for the lab's kernel tree.  Linux
# 7.3 needs __typeof_unqual__, which trixie's sparse 0.6.4 does not know
# (scripts/checker-valid.sh then turns C=2 off), so the source of Debian
# unstable's sparse is fetched from the host's mirror, its checksum
# verified, and built inside the lab root.  Cached under $OVPN_LAB_CACHE
# by version.
#
# Usage: sparse.sh      prints the path of the sparse binary, built for
#                       (and run in) the lab root

. "$(dirname "$0")/../host/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
mirror=$(lab_mirror)
entry=$(curl -fsS "$mirror/dists/sid/main/source/Sources.xz" | xz -dc |
	awk '/^Package: sparse$/, /^$/')
version=$(sed -n 's/^Version: //p' <<<"$entry")
dir=$(sed -n 's/^Directory: //p' <<<"$entry")
# The "Files:" list: md5, size, name; the upstream tarball is .orig.
read -r md5 _ orig < <(awk '/^Files:/ { f = 1; next } /^[^ ]/ { f = 0 }
	f && $3 ~ /\.orig\.tar\./ { print; exit }' <<<"$entry")
[ -n "$version" ] && [ -n "$orig" ] ||
	lab_die "no sparse source in the mirror's unstable suite"

cache=$OVPN_LAB_CACHE/sparse-$version
if [ -x "$cache/sparse" ]; then
	echo "$cache/sparse"
	exit 0
fi

lab_log "building sparse $version from source"
rm -rf "$cache" "$cache.tmp"
mkdir -p "$cache.tmp"
curl -fsS -o "$cache.tmp/$orig" "$mirror/$dir/$orig"
echo "$md5  $cache.tmp/$orig" | md5sum -c --quiet ||
	lab_die "checksum mismatch for $orig"
tar -C "$cache.tmp" -xf "$cache.tmp/$orig" --strip-components=1
if ! lab_chroot_tree "$root" "$cache.tmp" \
	make -C /ktree -s -j"$(nproc)" sparse >"$cache.tmp/build.log" 2>&1; then
	tail -n 20 "$cache.tmp/build.log" >&2
	lab_die "sparse $version does not build"
fi
mkdir -p "$cache"
cp "$cache.tmp/sparse" "$cache/sparse"
rm -rf "$cache.tmp"
echo "$cache/sparse"
