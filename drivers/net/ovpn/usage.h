/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - the AEAD usage limit
 *
 * An AES-GCM key may only protect so much before a forgery becomes too
 * likely.  openvpn 2.7 bounds q + s, the packets (q) plus the 16-byte
 * blocks of plaintext (s) under one key, by 2^36 - 1 (a forgery
 * probability of 2^-57; cipher_get_aead_limits() in openvpn's crypto.c),
 * and renegotiates once either direction of a key passes 7/8 of it
 * (tls_get_limit_aead() in ssl.c).  ChaCha20-Poly1305 has no such limit.
 * A key slot keeps this account for each direction; the packet id stands
 * for q, so only the blocks are counted here.
 *
 * The receiving direction of any key, whatever its cipher, also bounds
 * the packets that claimed it and failed authentication: each is an
 * attempt at a forgery.  openvpn 2.7 renegotiates once a key's failed
 * verifications pass 2^35 and refuses to decrypt under it past 2^36
 * (cipher_decrypt_verify_fail_warn() and _exceeded() in its crypto.h).
 */

#ifndef _NET_OVPN_USAGE_H_
#define _NET_OVPN_USAGE_H_

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/math.h>
#include <linux/percpu_counter.h>
#include <linux/types.h>
#include <uapi/linux/ovpn.h>

/* openvpn's AEAD_LIMIT_BLOCKSIZE: plaintext is counted in these. */
#define OVPN_USAGE_BLOCK_SIZE	16
/* q + s allowed under one AES-GCM key, as openvpn computes it. */
#define OVPN_USAGE_LIMIT_AES_GCM	((1ULL << 36) - 1)
/* Where openvpn renegotiates: 7/8 of the limit, in its integer steps. */
#define OVPN_USAGE_RENEG(limit)	((limit) / 8 * 7)
/* Blocks a CPU gathers before adding them to the shared count: 1 MiB. */
#define OVPN_USAGE_BATCH	BIT(16)
/* Failed verifications past which openvpn renegotiates, and refuses. */
#define OVPN_USAGE_FORGED_RENEG	BIT_ULL(35)
#define OVPN_USAGE_FORGED_LIMIT	BIT_ULL(36)

/**
 * enum ovpn_usage_verdict - what a key's account says after a packet
 * @OVPN_USAGE_OK: below the thresholds, or past them and already said
 * @OVPN_USAGE_RENEG: this packet took the key past the renegotiation
 *	threshold; said once per direction of a key
 * @OVPN_USAGE_SPENT: past the limit: the key must not encrypt this packet
 *	or any after it
 */
enum ovpn_usage_verdict {
	OVPN_USAGE_OK,
	OVPN_USAGE_RENEG,
	OVPN_USAGE_SPENT,
};

/* struct ovpn_usage.flags */
enum {
	/* the key's cipher has a limit: the account counts */
	OVPN_USAGE_COUNTING,
	/* the sending direction: OVPN_USAGE_SPENT past the limit */
	OVPN_USAGE_ENFORCE,
	/* OVPN_USAGE_RENEG was returned */
	OVPN_USAGE_RENEG_SAID,
};

/**
 * struct ovpn_usage - one direction's account of an AEAD key
 * @blocks: plaintext blocks protected so far, summed per CPU
 * @trigger: the cheap bound of q + s past which a packet takes the exact
 *	     (slow) look: a threshold less the slack, see below
 * @flags: OVPN_USAGE_* bits
 *
 * Why no shared write per packet: every CPU adds to its own part of
 * @blocks and folds it into the shared count once a batch (a megabyte of
 * plaintext) has gathered.  The shared count lags the true sum by less
 * than one batch per possible CPU (the slack), so shared count + q passing
 * @trigger, the threshold watched less the slack, is the first moment
 * the true q + s may pass it; only then are the CPUs' parts summed.
 * Packets pay that in the last slack blocks before each threshold.
 * The threshold watched is openvpn's renegotiation threshold, then the
 * limit if OVPN_USAGE_ENFORCE, else none.
 *
 * The account is small on purpose: a key slot holds two, and fits its
 * kmalloc bucket (512 bytes) only so.
 */
struct ovpn_usage {
	struct percpu_counter blocks;
	u64 trigger;
	unsigned long flags;
};

int __must_check ovpn_usage_init(struct ovpn_usage *usage,
				 enum ovpn_cipher_alg alg, bool enforce);
void ovpn_usage_destroy(struct ovpn_usage *usage);
enum ovpn_usage_verdict ovpn_usage_slow(struct ovpn_usage *usage,
					u64 pktid);

/**
 * ovpn_usage_add - account for one packet under a key
 * @usage: the account of the direction the packet goes
 * @len: the packet's plaintext length, in bytes
 * @pktid: the packet's id: the count of packets under the key so far
 *
 * Context: any.
 * Return: the verdict; see enum ovpn_usage_verdict.
 */
static inline enum ovpn_usage_verdict
ovpn_usage_add(struct ovpn_usage *usage, unsigned int len, u64 pktid)
{
	if (!test_bit(OVPN_USAGE_COUNTING, &usage->flags))
		return OVPN_USAGE_OK;

	percpu_counter_add_batch(&usage->blocks,
				 DIV_ROUND_UP(len, OVPN_USAGE_BLOCK_SIZE),
				 OVPN_USAGE_BATCH);
	if (likely(percpu_counter_read_positive(&usage->blocks) + pktid <=
		   READ_ONCE(usage->trigger)))
		return OVPN_USAGE_OK;
	return ovpn_usage_slow(usage, pktid);
}

/**
 * ovpn_usage_forged - account for a packet that failed authentication
 * @forged: the failed verifications of the key the packet claimed
 *
 * Why one shared atomic: only a packet that failed costs it, after a
 * whole AEAD pass that dwarfs it, and the exact count lets exactly one
 * CPU see the threshold pass.  Packets that authenticate never write it.
 *
 * Context: any.
 * Return: OVPN_USAGE_RENEG for the packet that takes the count past
 * openvpn's renegotiation threshold, else OVPN_USAGE_OK.
 */
static inline enum ovpn_usage_verdict ovpn_usage_forged(atomic64_t *forged)
{
	if (atomic64_inc_return(forged) == OVPN_USAGE_FORGED_RENEG + 1)
		return OVPN_USAGE_RENEG;
	return OVPN_USAGE_OK;
}

/**
 * ovpn_usage_forged_spent - whether a key refuses to decrypt
 * @forged: the failed verifications of the key
 *
 * Checked before decryption, as openvpn checks it: past the limit, every
 * packet under the key is dropped, authentic or not.
 *
 * Context: any.
 * Return: true past openvpn's limit of failed verifications.
 */
static inline bool ovpn_usage_forged_spent(const atomic64_t *forged)
{
	return unlikely(atomic64_read(forged) > OVPN_USAGE_FORGED_LIMIT);
}

#endif /* _NET_OVPN_USAGE_H_ */
