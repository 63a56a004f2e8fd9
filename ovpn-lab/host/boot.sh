#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the lab root's Debian kernel under QEMU (software emulation, guest
# "-cpu max") with virtme-ng, run one command in the guest and return its
# status.  The guest's root filesystem is the lab root, read-only; the
# repository is at /src and a results directory at $OVPN_LAB_OUT (the
# host's <out> directory), both writable.
#
# The whole console, kernel log included, is kept in <out>/console.log and
# checked: a WARNING, BUG, Oops, KASAN report, lockdep splat, RCU stall,
# soft lockup, hung task, refcount or percpu_ref complaint, a device that
# cannot be unregistered, or a panic fails the boot even if the command
# succeeded.
#
# Usage: boot.sh [-f flavour] [-c cpus] [-P possible] [-m memory]
#                [-t seconds] [-o outdir] [-p plugin] -- command...
#   flavour: amd64 (default), rt-amd64, or a debug kernel (debug,
#   debug-rt: kdebug.sh), booted with panic_on_warn; outdir is relative
#   to the repository (default .build/out/<timestamp>); plugin: a QEMU TCG
#   plugin and its arguments, as QEMU's -plugin takes them, paths as the
#   lab root sees them (the repository is /src).

. "$(dirname "$0")/common.sh"

# lab_getopts sets these by name (printf -v), which shellcheck cannot see.
declare flavour cpus possible memory limit out plugin
lab_getopts "usage: boot.sh [-f flavour] [-c cpus] [-P possible] [-m mem] [-t s] [-o dir] [-p plugin] -- cmd" \
	f:flavour=amd64 c:cpus=2 P:possible m:memory=2G t:limit=1800 o:out \
	p:plugin -- "$@"
shift $((OPTIND - 1))
[ $# -gt 0 ] || lab_die "no guest command"

root=$("$LAB_DIR/root/mkroot.sh")
lab_kernel "$root" "$flavour"
kver=$lab_kernel_release
# On a debug kernel the first warning stops the guest: what follows a
# splat proves nothing, and the log keeps the first one.  Five-level
# paging (QEMU's "-cpu max" offers it) is turned off there: an interrupt
# taken early in boot then trips KASAN before its shadow covers the
# larger direct map, a boot-time report that has nothing to do with us.
# The tests' waits and deadlines stretch tenfold there (OVPN_SLOW, the
# selftests' lib.sh): such a kernel runs 7 to 30 times slower.  And
# there test-churn keeps the page cache (OVPN_KEEP_CACHES): once it is
# dropped, programs read from the virtiofs root fault, ovpn loaded or not.
append=${possible:+maxcpus=$cpus}
slow=1
keep_caches=0
if lab_is_debug "$flavour"; then
	append="$append panic_on_warn=1 no5lvl"
	slow=10
	keep_caches=1
fi
out=${out:-.build/out/$(date +%Y%m%d-%H%M%S)-$$}
rm -rf "${REPO_DIR:?}/$out"
mkdir -p "$REPO_DIR/$out"
console=$REPO_DIR/$out/console.log

# The guest runs the command from the repository with a few facts about
# the boot in its environment.
guest_cmd="cd /src && export OVPN_LAB_OUT=/src/$out OVPN_LAB_KVER=$kver"
guest_cmd="$guest_cmd OVPN_SLOW=$slow OVPN_KEEP_CACHES=$keep_caches && $*"

# vng passes the command base64-encoded on the kernel command line, whose
# 2048 bytes it shares with some 700 of vng's own: a longer one is cut
# off, and the guest panics before running anything.  Say so instead.
[ ${#guest_cmd} -le 1000 ] ||
	lab_die "the guest command is ${#guest_cmd} bytes, over 1000:" \
		"name ovpn selftests without their directory"

lab_log "booting $kver (cpus=$cpus${possible:+ possible=$possible}" \
	"memory=$memory limit=${limit}s)"
start=$(date +%s)
set +e
# QEMU truncates files it is given as console outputs: keep vng's output
# a pipe and let tee write the log.
"${lab_kernel_chroot[@]}" timeout --kill-after=30 "$limit" \
	vng --run "$lab_kernel_image" --disable-kvm \
	${append:+--append "$append"} \
	--cpus "${possible:-$cpus}" --memory "$memory" \
	--qemu-opts="-cpu max${plugin:+ -plugin $plugin}" \
	--verbose --rwdir="/src/$out" --exec "$guest_cmd" 2>&1 | tee "$console"
rc=${PIPESTATUS[0]}
set -e
lab_log "guest finished with status $rc after $(($(date +%s) - start)) s"
[ "$rc" = 124 ] && lab_log "the guest ran out of time (${limit}s)"

if ! "$LAB_DIR/host/check-log.sh" "$console"; then
	[ "$rc" = 0 ] && rc=3
fi
exit "$rc"
