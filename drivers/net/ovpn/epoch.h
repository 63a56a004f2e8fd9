/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - the key schedule of epoch data keys
 *
 * openvpn 2.7's epoch data format (crypto_epoch.c) replaces a direction's
 * single key by a chain of them.  The daemon gives each direction a
 * 32-byte secret E1, the first 32 bytes of that direction's cipher key
 * from the TLS key material (init_epoch_keys() in ssl.c).  Each epoch n
 * has its own secret En, and everything else follows from it with TLS
 * 1.3's HKDF-Expand-Label over SHA-256 whose label prefix is "ovpn "
 * instead of "tls13 " (ovpn_expand_label()):
 *
 *	E(n+1)	= Expand-Label(En, "datakey upd", "", 32)
 *	key n	= Expand-Label(En, "data_key", "", cipher key size)
 *	IV n	= Expand-Label(En, "data_iv", "", 12)
 *
 * A packet's 8-byte packet id carries its epoch in the top 16 bits and a
 * per-epoch counter in the other 48, so an epoch's key protects at most
 * 2^48 - 1 packets (the counter starts at 1) and the sender moves to the
 * next epoch before that, or before the AEAD usage limit.  Epoch 0 is
 * never used; epochs end at 0xffff.
 *
 * Only whole SHA-256 outputs are ever needed (at most 32 bytes), so one
 * HMAC gives each derivation.  Deriving is kept to process context by the
 * callers: an HMAC-SHA256 costs microseconds, too much for softirq work
 * that a peer's packet could set off.
 */

#ifndef _NET_OVPN_EPOCH_H_
#define _NET_OVPN_EPOCH_H_

#include <crypto/sha2.h>
#include <linux/bits.h>
#include <linux/types.h>

/* The secret of an epoch, En: one SHA-256 output. */
#define OVPN_EPOCH_SECRET_SIZE	SHA256_DIGEST_SIZE
/* An epoch's implicit IV, XORed with (packet id || 4 zero bytes). */
#define OVPN_EPOCH_IV_SIZE	12
/* The first and the last epoch. */
#define OVPN_EPOCH_FIRST	1
#define OVPN_EPOCH_LAST		U16_MAX
/* The per-epoch counter: the low 48 bits of the packet id. */
#define OVPN_EPOCH_COUNTER_BITS	48
#define OVPN_EPOCH_COUNTER_MAX	(BIT_ULL(OVPN_EPOCH_COUNTER_BITS) - 1)

/**
 * struct ovpn_epoch_secret - the secret of one epoch of one direction
 * @epoch: which epoch, OVPN_EPOCH_FIRST to OVPN_EPOCH_LAST
 * @secret: En
 *
 * Whoever holds one wipes it with memzero_explicit() when done: every
 * later key of the direction follows from it.
 */
struct ovpn_epoch_secret {
	u16 epoch;
	u8 secret[OVPN_EPOCH_SECRET_SIZE];
};

int ovpn_epoch_expand_label(const u8 secret[OVPN_EPOCH_SECRET_SIZE],
			    const char *label, u8 *out, unsigned int len);
int ovpn_epoch_advance(struct ovpn_epoch_secret *es);
int ovpn_epoch_data_key(const struct ovpn_epoch_secret *es, u8 *key,
			unsigned int key_len, u8 iv[OVPN_EPOCH_IV_SIZE]);

/* The packet id of the @counter-th packet of @epoch, as it goes out. */
static inline u64 ovpn_epoch_pktid(u16 epoch, u64 counter)
{
	return (u64)epoch << OVPN_EPOCH_COUNTER_BITS | counter;
}

/* The epoch a packet id claims. */
static inline u16 ovpn_epoch_of(u64 pktid)
{
	return pktid >> OVPN_EPOCH_COUNTER_BITS;
}

/* A packet id's per-epoch counter. */
static inline u64 ovpn_epoch_counter(u64 pktid)
{
	return pktid & OVPN_EPOCH_COUNTER_MAX;
}

#endif /* _NET_OVPN_EPOCH_H_ */
