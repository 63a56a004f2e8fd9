#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest, sourced: which ovpn module is loaded, the lab's
# knowledge and not the selftests'.  The selftests only "modprobe ovpn";
# the lab makes that find the build under test (lab_module_install), and
# loads other builds (the distribution's, a test variant) on purpose.
#
# The lab root blocks "modprobe ovpn" (/etc/modprobe.d/ovpn-lab.conf) so
# that the genl family alias never autoloads the distribution's module by
# accident; lab_module_install lifts the block for the boot it runs in.

LAB_MODPROBE_BLOCK=/etc/modprobe.d/ovpn-lab.conf

# lab_build_id: the GNU build id of the loaded ovpn module, in hex.
lab_build_id()
{
	# The note is 16 bytes of header ("GNU\0" name included), then the id.
	od -An -tx1 -v -j16 /sys/module/ovpn/notes/.note.gnu.build-id |
		tr -d ' \n'
}

# lab_ko_build_id KO: the build id of the file KO, which may be compressed
# as the kernel's modules are (dkms and "make install" compress like them).
lab_ko_build_id()
{
	local cat=cat elf

	case $1 in
	*.xz) cat="xz -dc" ;;
	*.zst) cat="zstd -dc" ;;
	*.gz) cat="gzip -dc" ;;
	esac
	# readelf needs a file it can seek in.
	elf=$(mktemp)
	$cat "$1" >"$elf"
	readelf -n "$elf" | awk '/Build ID:/ { print $3 }'
	rm -f "$elf"
}

# lab_insmod KO: load the file KO, its dependencies first, in place of
# whatever ovpn module is loaded.
lab_insmod()
{
	local dep

	[ ! -d /sys/module/ovpn ] || rmmod ovpn || return
	for dep in $(modinfo -F depends "$1" | tr ',' ' '); do
		modprobe "$dep" || return
	done
	insmod "$1"
}

# lab_is_loaded KO: the loaded ovpn module is the file KO.
lab_is_loaded()
{
	local want

	want=$(lab_ko_build_id "$1")
	[ -n "$want" ] && [ "$(lab_build_id 2>/dev/null)" = "$want" ]
}

# lab_modules_dir: the running kernel's module directory, writable.  The
# guest's /lib is a throwaway overlay already (vng); a debug kernel's
# tree is not, and gets one of its own for this boot.
lab_modules_dir()
{
	local dir tmp

	dir=/lib/modules/$(uname -r)
	if [ ! -e "$dir" ]; then
		mkdir -p "$dir"
	elif [ -L "$dir" ] || [ ! -w "$dir" ]; then
		tmp=$(mktemp -d /run/ovpn-lab-modules.XXXXXX)
		mkdir "$tmp/upper" "$tmp/work"
		mount -t overlay -o "lowerdir=$(readlink -f "$dir")" \
			-o "upperdir=$tmp/upper,workdir=$tmp/work" \
			ovpn-lab-modules "$dir" || return
	fi
	echo "$dir"
}

# lab_module_install KO: make "modprobe ovpn" load KO for the rest of this
# boot, as "make modules_install" would: KO goes to the running kernel's
# updates/ directory, which depmod ranks above the distribution's own
# module.  A KO installed already (DKMS) stays where it is.  Then
# modprobe loads it, and it must be KO: says so as a KTAP test point.
lab_module_install()
{
	local ko=$1 dir

	rm -f "$LAB_MODPROBE_BLOCK"
	dir=$(lab_modules_dir) || return
	case $ko in
	"$dir"/*) ;;
	*)
		mkdir -p "$dir/updates"
		cp "$ko" "$dir/updates/" || return
		depmod -a || return
		;;
	esac
	[ ! -d /sys/module/ovpn ] || rmmod ovpn || return
	modprobe ovpn || return
	if lab_is_loaded "$ko"; then
		echo "ok 1 modprobe_loads_the_build"
		return 0
	fi
	echo "not ok 1 modprobe_loads_the_build"
	echo "# $ko: build id $(lab_ko_build_id "$ko"), $(modinfo -n ovpn):" \
		"loaded, build id $(lab_build_id)"
	return 1
}
