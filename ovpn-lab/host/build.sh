#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build ovpn.ko out of tree inside the lab root, against the headers of the
# root's kernel, with the kernel's own compiler.  W=1 is always on and any
# compiler warning fails the build.
#
# Usage: build.sh [-x|-u|-e|-r] [flavour]
#   flavour: amd64 (default), rt-amd64, or a debug kernel: debug, debug-rt
#   (kdebug.sh)
#   -x: the variant test-key-exhaustion.sh needs, whose new keys have 15
#   packet ids left, into .build/<kernel release>-pktid-end.  The driver
#   has no knob for it: the variant is built from a copy of the source
#   whose sender counter starts near the end (pktid.c).
#   -u: the variant test-usage-limit.sh needs, into ...-usage-end, whose
#   new keys start their usage accounts near openvpn's thresholds
#   (crypto.c; the numbers are in that script).
#   -e: the variant test-epoch-rollover.sh needs, into ...-epoch-roll,
#   whose epoch keys send 8 packets each, and whose chains start at epoch
#   0xeffc for 16-byte keys and 0xfff8 for 24-byte ones (crypto_epoch.c).
#   -r: the variant test-ring-overflow.sh needs, into ...-small-rings,
#   whose parallel path has crypt rings of 2 packets and ordered queues
#   of 8 (queue.c).
# Builds into .build/<kernel release>, or .build/<flavour>-<release> for a
# debug kernel, and prints the module's path, relative to the repository.

. "$(dirname "$0")/common.sh"

# A variant is a sed script for one file of the driver, and the line it
# must leave in it.
edit_file=
edit=
edit_check=
edit_check2=
suffix=
while getopts "xuer" opt; do
	case $opt in
	x)
		# The last id handed out is 0xffffffff: 15 ids from here.
		edit_file=pktid.c
		edit='s/atomic64_set(&pid->seq, 0);/atomic64_set(\&pid->seq, 0xfffffff0);/'
		edit_check='atomic64_set(&pid->seq, 0xfffffff0);'
		suffix=-pktid-end
		;;
	u)
		# Key id 0 sends 90 short of the limit, any other key id
		# 45 short of the renegotiation threshold; every key
		# receives 45 short of that threshold.  Every key starts
		# 2 failed verifications short of openvpn's threshold
		# for them, key id 4 2 short of its limit.  An epoch key
		# has no slot-level account to set.
		edit_file=crypto.c
		edit='/^\t\/\* Last: from here on the slot dies only/i\
\tif (kc->cipher_alg == OVPN_CIPHER_ALG_AES_GCM \&\& !ks->epochs) {\
\t\tpercpu_counter_set(\&ks->usage_xmit.blocks, kc->key_id ?\
\t\t\tOVPN_USAGE_RENEG(OVPN_USAGE_LIMIT_AES_GCM) - 45 :\
\t\t\tOVPN_USAGE_LIMIT_AES_GCM - 90);\
\t\tpercpu_counter_set(\&ks->usage_recv.blocks,\
\t\t\tOVPN_USAGE_RENEG(OVPN_USAGE_LIMIT_AES_GCM) - 45);\
\t}\
\tatomic64_set(\&ks->forged, kc->key_id == 4 ?\
\t\tOVPN_USAGE_FORGED_LIMIT - 2 : OVPN_USAGE_FORGED_RENEG - 2);'
		edit_check='atomic64_set(&ks->forged, kc->key_id == 4 ?'
		suffix=-usage-end
		;;
	e)
		edit_file=crypto_epoch.c
		edit='s/^#define OVPN_EPOCH_TX_COUNTER_LIMIT\tOVPN_EPOCH_COUNTER_MAX$/#define OVPN_EPOCH_TX_COUNTER_LIMIT\t8/
s/^\tu16 first = OVPN_EPOCH_FIRST;$/\tu16 first = key_size == 16 ? 0xeffc : key_size == 24 ? 0xfff8 : 1;/'
		edit_check='#define OVPN_EPOCH_TX_COUNTER_LIMIT	8'
		edit_check2='u16 first = key_size == 16 ? 0xeffc'
		suffix=-epoch-roll
		;;
	r)
		edit_file=queue.c
		edit='s/^#define OVPN_CRYPT_RING_SIZE\t1024$/#define OVPN_CRYPT_RING_SIZE\t2/
s/^#define OVPN_ORDERED_QUEUE_SIZE\t1024$/#define OVPN_ORDERED_QUEUE_SIZE\t8/'
		edit_check='#define OVPN_CRYPT_RING_SIZE	2'
		edit_check2='#define OVPN_ORDERED_QUEUE_SIZE	8'
		suffix=-small-rings
		;;
	*) lab_die "usage: build.sh [-x|-u|-e|-r] [flavour]" ;;
	esac
done
shift $((OPTIND - 1))
# getopts stops at the flavour: an option after it would be ignored.
[ $# -le 1 ] || lab_die "usage: build.sh [-x|-u|-e|-r] [flavour] (options first)"

flavour=${1:-amd64}
root=$("$LAB_DIR/root/mkroot.sh")
lab_kernel "$root" "$flavour"
kver=$lab_kernel_release
# The two debug kernels share one release string, with no flavour in it:
# each needs a directory of its own, or make links one's objects for the
# other.
out=.build/$kver$suffix
lab_is_debug "$flavour" && out=.build/$flavour-$kver$suffix
log=$REPO_DIR/$out/build.log

mkdir -p "$REPO_DIR/$out"
src=drivers/net/ovpn
if [ -n "$edit" ]; then
	copy=$out-src
	rm -rf "${REPO_DIR:?}/$copy"
	mkdir -p "$REPO_DIR/$copy/drivers/net"
	cp -r "$REPO_DIR/drivers/net/ovpn" "$REPO_DIR/$copy/drivers/net/"
	cp -r "$REPO_DIR/include" "$REPO_DIR/$copy/"
	sed -i "$edit" "$REPO_DIR/$copy/$src/$edit_file"
	for check in "$edit_check" "${edit_check2:-$edit_check}"; do
		grep -qF "$check" "$REPO_DIR/$copy/$src/$edit_file" ||
			lab_die "$edit_file: a line the variant changes is gone"
	done
	src=$copy/$src
fi
lab_log "building ovpn.ko$suffix for $kver"
if ! "${lab_kernel_chroot[@]}" timeout 900 make -C "$lab_kernel_build" \
	M="/src/$src" MO="/src/$out" CONFIG_OVPN=m W=1 \
	-j"$(nproc)" modules >"$log" 2>&1; then
	cat "$log" >&2
	lab_die "module build failed"
fi
if grep -E 'warning:|error:' "$log" >&2; then
	lab_die "module build has warnings"
fi
echo "$out/ovpn.ko"
