#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build openvpn with our Linux DCO patch for epoch data keys
# (tools/openvpn), from Debian's source package, and print the daemon's
# path, relative to the repository (.build/openvpn-epoch/openvpn; the
# guest sees it under /src).  The unmodified openvpn of the lab root,
# which every other test runs, is never touched: the source comes with
# apt-get source inside a throwaway overlay of the root, and the build
# stays in that overlay's /tmp.  The daemon is cached, keyed by the
# source version and the patch, so a second run only copies it.
#
# The source is openvpn 2.7.7's upstream tarball, as Debian's backport
# ships it: the lab root's daemon is 2.7.8, whose source the mirror does
# not serve, nor 2.7.7's Debian parts (.dsc, debian/).

. "$(dirname "$0")/common.sh"

OPENVPN_SRC_VERSION=2.7.7-1~bpo13+1

root=$("$LAB_DIR/root/mkroot.sh")
patches=("$REPO_DIR"/tools/openvpn/*.patch)
key=$({ echo "$OPENVPN_SRC_VERSION"; cat "${patches[@]}" "$0"; } |
	sha256sum | cut -c1-12)
cache=$OVPN_LAB_CACHE/openvpn-epoch-$key
out=.build/openvpn-epoch

if [ ! -x "$cache/openvpn" ]; then
	lab_log "building openvpn $OPENVPN_SRC_VERSION with tools/openvpn's patch"
	work=$(mktemp -d "$OVPN_LAB_CACHE/openvpn-epoch.XXXXXX")
	mkdir -p "$work"/{upper,work,merged}
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" \
		"$work/merged"
	cat >"$work/merged/etc/apt/sources.list.d/lab-src.sources" <<SRC
Types: deb-src
URIs: $(lab_mirror)
Suites: $LAB_KSUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	rc=0
	# shellcheck disable=SC2016 # expanded in the root
	lab_chroot "$work/merged" /bin/bash -euc '
		apt-get update -qq
		# The one build dependency the root lacks (Linux needs it).
		apt-get install -y -qq libcap-ng-dev >/dev/null
		mkdir /tmp/b && cd /tmp/b
		# The mirror serves the upstream tarball of this version but not
		# its .dsc: take the tarball the source index names, and check
		# it against the index.
		set -- $(apt-get source --print-uris -qq "openvpn=$1" |
			grep "\.orig\.tar\.")
		url=$(printf %s "$1" | tr -d "\047") file=$2 sum=${4#*:}
		python3 -c "import sys, urllib.request as u
u.urlretrieve(sys.argv[1], sys.argv[2])" "$url" "$file"
		echo "$sum  $file" | sha256sum -c --quiet
		tar -xf "$file"
		cd openvpn-*/
		for p in /src/tools/openvpn/*.patch; do patch -p1 <"$p"; done
		./configure -q --enable-dco --disable-lzo --disable-lz4 \
			--disable-plugin-auth-pam --disable-plugin-down-root
		make -s -j"$(nproc)" -C src/compat
		make -s -j"$(nproc)" -C src/openvpn openvpn
		install -D -m 755 src/openvpn/openvpn /src/.build/openvpn-epoch.new
	' lab-openvpn "$OPENVPN_SRC_VERSION" >"$work.log" 2>&1 || rc=$?
	umount "$work/merged"
	rm -rf "$work"
	if [ "$rc" != 0 ]; then
		tail -n 30 "$work.log" >&2
		lab_die "openvpn build failed (log: $work.log)"
	fi
	mkdir -p "$cache"
	mv "$REPO_DIR/.build/openvpn-epoch.new" "$cache/openvpn"
	rm -f "$work.log"
fi
mkdir -p "$REPO_DIR/$out"
install -m 755 "$cache/openvpn" "$REPO_DIR/$out/openvpn"
echo "$out/openvpn"
