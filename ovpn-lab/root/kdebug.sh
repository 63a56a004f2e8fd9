#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or find) one of the lab's debug kernels from the lab root's
# linux-source.  The configuration starts from virtme-ng's one for a guest
# (virtme-configkernel --defconfig), less what x86_64's defconfig brings
# for real hardware that a QEMU guest booted by vng never uses (graphics,
# sound, USB, Ethernet and wireless drivers, SATA, NFS...), adds the
# selftests' config
# fragment and what the selftests use beyond it, built in so that the
# guest needs no module but ovpn.ko, and turns on the debugging that
# catches reference and teardown bugs:
# - KASAN (generic, inline);
# - lockdep: PROVE_LOCKING, which brings PROVE_RCU, with its tables four
#   times their default size: the whole suite on debug-rt filled the lock
#   chains' (MAX_LOCKDEP_CHAIN_HLOCKS) half-way through, and lockdep turns
#   itself off for the rest of the boot when a table is full;
# - DEBUG_ATOMIC_SLEEP, and DEBUG_PREEMPT under full preemption, which
#   catches this_cpu_*() from preemptible context;
# - kmemleak, on from boot;
# - DEBUG_OBJECTS for work items, timers, rcu_heads and percpu_counters;
# - DEBUG_LIST, DEBUG_NET.
# Variants: "debug" is a fully preemptible kernel (PREEMPT), "debug-rt"
# the same debugging on PREEMPT_RT, where spinlocks sleep and softirqs run
# in threads.  The guest is booted with panic_on_warn (boot.sh).
#
# Cached under $OVPN_LAB_CACHE, keyed by the variant, the source package's
# version and the hash of this recipe and the fragment; the build log
# keeps the build's time: about half an hour on the lab's two cores
# (2,400 objects; an hour before the trim).  A build that was interrupted
# goes on where it stopped, once its tree was configured.
#
# Usage: kdebug.sh [debug|debug-rt]
#   Prints the tree's path; the kernel is <tree>/arch/x86/boot/bzImage and
#   ovpn.ko builds against <tree>.

. "$(dirname "$0")/../host/common.sh"

variant=${1:-debug}
case $variant in
debug) preempt="--enable PREEMPT --disable PREEMPT_RT" ;;
debug-rt) preempt="--disable PREEMPT --enable PREEMPT_RT" ;;
*) lab_die "unknown debug kernel variant: $variant" ;;
esac

# Hardware and services of defconfig that the guest does without: under
# KASAN and lockdep they are a good part of the build time.
trim="--disable DRM --disable FB --disable SOUND --disable USB_SUPPORT
	--disable WLAN --disable WIRELESS --disable CFG80211 --disable MAC80211
	--disable RFKILL --disable BT --disable ETHERNET --disable MEDIA_SUPPORT
	--disable AGP --disable ATA --disable MD --disable NFS_FS --disable NFSD
	--disable PCCARD --disable INPUT_JOYSTICK --disable INPUT_TABLET
	--disable INPUT_TOUCHSCREEN --disable INPUT_MISC --disable HAMRADIO
	--disable SECURITY_SELINUX --disable AUDIT --disable HIBERNATION"
# What the selftests need beyond their fragment, built in.
selftest_needs="--enable TUN --enable PACKET --enable NET_NS
	--enable NETFILTER --enable NF_TABLES --enable NF_TABLES_INET
	--enable NF_TABLES_IPV4 --enable NF_TABLES_IPV6
	--enable INET_DIAG --enable INET_TCP_DIAG
	--enable MODULES --enable MODULE_UNLOAD
	--disable MODULE_SIG --disable DEBUG_INFO
	--enable DEBUG_INFO_NONE --disable DEBUG_INFO_BTF --disable WERROR"
# The debugging.
debugging="--enable EXPERT --enable DEBUG_KERNEL --enable DEBUG_PREEMPT
	--enable KASAN --enable KASAN_GENERIC --enable KASAN_INLINE
	--enable PROVE_LOCKING --enable DEBUG_ATOMIC_SLEEP
	--set-val LOCKDEP_BITS 17 --set-val LOCKDEP_CHAINS_BITS 18
	--set-val LOCKDEP_STACK_TRACE_BITS 23
	--enable DEBUG_KMEMLEAK --disable DEBUG_KMEMLEAK_DEFAULT_OFF
	--set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 40000
	--enable DEBUG_OBJECTS --enable DEBUG_OBJECTS_WORK
	--enable DEBUG_OBJECTS_TIMERS --enable DEBUG_OBJECTS_RCU_HEAD
	--enable DEBUG_OBJECTS_PERCPU_COUNTER
	--enable DEBUG_LIST --enable DEBUG_NET"
# Options that must come out built in, or the recipe is broken.
required="KASAN PROVE_LOCKING PROVE_RCU DEBUG_ATOMIC_SLEEP DEBUG_PREEMPT
	LOCKDEP_BITS=17 LOCKDEP_CHAINS_BITS=18 LOCKDEP_STACK_TRACE_BITS=23
	DEBUG_KMEMLEAK DEBUG_OBJECTS_WORK DEBUG_OBJECTS_TIMERS
	DEBUG_OBJECTS_RCU_HEAD DEBUG_OBJECTS_PERCPU_COUNTER DEBUG_LIST
	DEBUG_NET TUN PACKET VETH NF_TABLES_IPV4"
[ "$variant" = debug-rt ] && required="$required PREEMPT_RT"

root=$("$LAB_DIR/root/mkroot.sh")
srcpkg=$(cd "$root/usr/src" && ls -d linux-source-* | sort -V | tail -n1)
version=$(lab_chroot "$root" dpkg-query -W -f '${Version}' "$srcpkg")
fragment=$REPO_DIR/tools/testing/selftests/net/ovpn/config
# The key is what determines the configuration, not this file's text.
key=$({
	cat "$fragment"
	echo "$trim $selftest_needs $preempt $debugging"
} | sha256sum | cut -c1-8)
tree=$OVPN_LAB_CACHE/k$variant-$version-$key

if [ -e "$tree/.ovpn-lab-ready" ]; then
	echo "$tree"
	exit 0
fi

log=$tree.log
t0=$(date +%s)
if [ -e "$tree.tmp/.ovpn-lab-configured" ]; then
	lab_log "resuming the build of the $variant kernel (log: $log)"
	echo "resumed at $(date -u +%FT%TZ)" >>"$log"
else
	lab_log "building the $variant kernel from $srcpkg $version" \
		"(tens of minutes)"
	rm -rf "$tree" "$tree.tmp"
	# A tree built for the same variant and source version under another
	# configuration is a head start: reconfigured, kbuild rebuilds only
	# the objects that depend on the options that changed.
	# (A loop, not ls: on a cold cache the glob matches nothing, and a
	# failing ls would end this script, under errexit, without a word.)
	prev=
	for ready in "$OVPN_LAB_CACHE/k$variant-$version-"*/.ovpn-lab-ready; do
		[ -e "$ready" ] && prev=${ready%/.ovpn-lab-ready}
	done
	if [ -n "$prev" ]; then
		cp -a "$prev" "$tree.tmp"
		rm -f "$tree.tmp/.ovpn-lab-ready" \
			"$tree.tmp/.ovpn-lab-configured"
	else
		cp -a "$root/usr/src/$srcpkg" "$tree.tmp"
	fi
	cp "$fragment" "$tree.tmp/.ovpn-selftests.config"
	: >"$log"
fi

if ! lab_chroot_tree "$root" "$tree.tmp" /bin/bash -euc '
	cd /ktree
	if [ -e .ovpn-lab-configured ]; then
		make -s -j"$(nproc)" bzImage modules
		exit
	fi
	virtme-configkernel --defconfig >/dev/null
	scripts/kconfig/merge_config.sh -m .config .ovpn-selftests.config
	scripts/config $5
	scripts/config $1
	scripts/config $2 $3
	# The fragment asks for ovpn as a module; everything else is in.
	sed -i "s/=m$/=y/; s/^CONFIG_OVPN=y$/CONFIG_OVPN=m/" .config
	make -s olddefconfig
	for opt in $4 OVPN=m; do
		[[ $opt == *=* ]] || opt=$opt=y
		grep -qx "CONFIG_$opt" .config && continue
		echo "CONFIG_$opt is not in the configuration"
		exit 1
	done
	for opt in DRM SOUND USB_SUPPORT ETHERNET ATA; do
		grep -qx "CONFIG_$opt=y" .config || continue
		echo "CONFIG_$opt is still in the configuration"
		exit 1
	done
	echo "kernel configured: $(grep -c "=y$" .config) options built in"
	touch .ovpn-lab-configured
	make -s -j"$(nproc)" bzImage modules
 ' -- "$selftest_needs" "$preempt" "$debugging" "$required" "$trim" \
	>>"$log" 2>&1; then
	tail -n 40 "$log" >&2
	lab_die "the $variant kernel does not build (log: $log)"
fi
echo "built in $(($(date +%s) - t0)) s" >>"$log"
lab_log "$variant kernel built in $(($(date +%s) - t0)) s"
touch "$tree.tmp/.ovpn-lab-ready"
mv "$tree.tmp" "$tree"
echo "$tree"
