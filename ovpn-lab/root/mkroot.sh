#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the lab root: a Debian trixie filesystem that is at once the build
# chroot (the kernel's gcc 14, its headers, its source) and the guest's root
# filesystem when virtme-ng boots it.  Cached under $OVPN_LAB_CACHE, keyed by
# this recipe; an existing complete root is reused as it is.
#
# Usage: mkroot.sh            prints the root's path on stdout

. "$(dirname "$0")/../host/common.sh"

root=$(lab_root)
if [ -e "$root/.lab-complete" ]; then
	echo "$root"
	exit 0
fi

[ "$(id -u)" = 0 ] || lab_die "building the lab root needs root"

# One builder at a time; whoever waited finds the root ready.
mkdir -p "$OVPN_LAB_CACHE"
exec 9>"$OVPN_LAB_CACHE/.mkroot.lock"
flock 9
if [ -e "$root/.lab-complete" ]; then
	echo "$root"
	exit 0
fi

if ! command -v debootstrap >/dev/null; then
	lab_log "installing debootstrap on the host"
	apt-get update -qq
	apt-get install -y -qq debootstrap >/dev/null
fi

mirror=$(lab_mirror)
tmp="$root.tmp"
rm -rf "$tmp"

lab_log "debootstrap $LAB_SUITE into $tmp"
debootstrap --variant=minbase "$LAB_SUITE" "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
	tail -n 30 "$tmp.log" >&2
	lab_die "debootstrap failed (log: $tmp.log)"
}

# trixie-backports is enabled inside the root only, never on the host.
cat >"$tmp/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $LAB_SUITE $LAB_SUITE-updates $LAB_KSUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
rm -f "$tmp/etc/apt/sources.list"
cat >"$tmp/etc/apt/apt.conf.d/90lab" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Retries "3";
APT
# Documentation is dead weight in a lab root.
cat >"$tmp/etc/dpkg/dpkg.cfg.d/90lab-nodoc" <<'DPKG'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
DPKG

plain=$(grep -v '^#' "$LAB_DIR/root/packages.txt" | grep -v '^bp:' | xargs)
backports=$(grep '^bp:' "$LAB_DIR/root/packages.txt" | cut -d: -f2 | xargs)

lab_log "installing packages into the root"
lab_chroot "$tmp" apt-get update -qq
# shellcheck disable=SC2086
lab_chroot "$tmp" apt-get install -y -qq $plain >>"$tmp.log" 2>&1 || {
	tail -n 30 "$tmp.log" >&2
	lab_die "package installation failed (log: $tmp.log)"
}
# shellcheck disable=SC2086
lab_chroot "$tmp" apt-get install -y -qq -t "$LAB_KSUITE" $backports \
	>>"$tmp.log" 2>&1 || {
	tail -n 30 "$tmp.log" >&2
	lab_die "backports installation failed (log: $tmp.log)"
}

# The benchmark counts guest instructions with a QEMU TCG plugin of its
# own; the plugin API header ships only in qemu's source package.  Take it
# from the source of exactly the QEMU installed here (the API version must
# match), then drop the tarball.
qver=$(lab_chroot "$tmp" dpkg-query -W -f '${Version}' qemu-system-x86)
cat >"$tmp/etc/apt/sources.list.d/lab-src.sources" <<SRC
Types: deb-src
URIs: $mirror
Suites: $LAB_SUITE $LAB_SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
lab_chroot "$tmp" apt-get update -qq
lab_chroot "$tmp" /bin/sh -c "cd /tmp && apt-get source -qq --download-only \
	qemu=$qver && tar -xOf qemu_*.orig.tar.* --wildcards \
	'*/include/qemu/qemu-plugin.h' >/usr/local/include/qemu-plugin.h" \
	>>"$tmp.log" 2>&1 || {
	tail -n 30 "$tmp.log" >&2
	lab_die "no qemu-plugin.h from qemu $qver's source (log: $tmp.log)"
}
grep -q QEMU_PLUGIN_VERSION "$tmp/usr/local/include/qemu-plugin.h" ||
	lab_die "qemu $qver's source has no usable qemu-plugin.h"
rm "$tmp/etc/apt/sources.list.d/lab-src.sources"
lab_chroot "$tmp" apt-get update -qq
lab_chroot "$tmp" apt-get clean

# The distribution's own ovpn.ko must never be picked up by accident: the
# genl family alias would autoload it on first use.  The lab loads it only
# on purpose, with "modprobe --ignore-install ovpn".
cat >"$tmp/etc/modprobe.d/ovpn-lab.conf" <<'MOD'
# ovpn lab: load ovpn only explicitly (insmod of the build, or
# modprobe --ignore-install for the distribution's module).
install ovpn /bin/false
MOD

# linux-source ships as a tarball: unpack it once, the conformance runner,
# the YNL generator and checkpatch read it.
src=$(ls "$tmp"/usr/src/linux-source-*.tar.* | sort -V | tail -n1)
lab_log "unpacking $(basename "$src")"
tar -C "$tmp/usr/src" -xf "$src"
rm -f "$src"

# Boot kit.  The root has no udev and no systemd, which saves half of the
# guest's boot time; virtme-ng's init then needs three stand-ins:
# - udevd: only the /dev/virtio-ports/<name> links for the script's I/O;
# - udevadm: nothing to trigger or settle;
# - poweroff: busybox's.
# And virtiofsd gets --cache=always: the root does not change under a
# running guest, and each exec in the guest becomes several times cheaper.
# The init's PATH has no /usr/local, so the stand-ins go to /usr/sbin (no
# package of the root owns these names).
install -d "$tmp/usr/local/bin"
cat >"$tmp/usr/sbin/udevd" <<'UDEVD'
#!/bin/sh
# ovpn lab: link the named virtio-serial ports, as udev would.
mkdir -p /dev/virtio-ports
for port in /sys/class/virtio-ports/*; do
	[ -r "$port/name" ] || continue
	ln -sf "../${port##*/}" "/dev/virtio-ports/$(cat "$port/name")"
done
exit 0
UDEVD
printf '#!/bin/sh\n# ovpn lab: no udev, nothing to do.\nexit 0\n' \
	>"$tmp/usr/sbin/udevadm"
printf '#!/bin/sh\nexec busybox poweroff "$@"\n' >"$tmp/usr/sbin/poweroff"
printf '#!/bin/sh\nexec /usr/libexec/virtiofsd --cache=always "$@"\n' \
	>"$tmp/usr/local/bin/virtiofsd"
chmod 755 "$tmp"/usr/sbin/{udevd,udevadm,poweroff} "$tmp/usr/local/bin/virtiofsd"

echo "lab" >"$tmp/etc/hostname"
date -u +%FT%TZ >"$tmp/.lab-complete"
mv "$tmp" "$root"
mv "$tmp.log" "$root.log"
lab_log "root ready: $root"
echo "$root"
