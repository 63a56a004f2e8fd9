/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - AEAD transforms
 *
 * This file knows the kernel crypto API and the packet layout it runs
 * on, and nothing of peers or key slots: it makes keyed transforms
 * (struct ovpn_aead_key) and encrypts or decrypts one packet with one.
 * Either operation may complete asynchronously; whatever the outcome,
 * the packet continues in the completion its caller passes (io.c), which
 * owns the references the packet carries in its control block
 * (struct ovpn_cb).  The request, IV and scatterlist of a packet are in
 * its CPU's buffer, or in an allocation of its own if that one is busy or
 * too small; which, is recorded in the control block, for that completion
 * to give back or free (ovpn_aead_request_free()).
 */

#ifndef _NET_OVPN_AEAD_H_
#define _NET_OVPN_AEAD_H_

#include <linux/crypto.h>
#include <linux/skbuff.h>
#include <uapi/linux/ovpn.h>

#include "epoch.h"

struct crypto_aead;

/**
 * struct ovpn_key_direction - key material for one direction
 * @cipher_key: the key
 * @cipher_key_size: its length in bytes
 * @nonce_tail: OVPN_NONCE_TAIL_SIZE bytes completing the nonce; NULL in
 *		the epoch format
 * @epoch_secret: the direction's first epoch secret (epoch.h),
 *		  OVPN_EPOCH_SECRET_SIZE bytes, or NULL: not the epoch format
 *
 * Points into the netlink request that installs the key: only valid
 * while it is being handled.
 */
struct ovpn_key_direction {
	const u8 *cipher_key;
	size_t cipher_key_size;
	const u8 *nonce_tail;
	const u8 *epoch_secret;
};

/**
 * struct ovpn_aead_key - one direction of a key, ready to run
 * @tfm: the AEAD transform, keyed; freed by ovpn_aead_key_destroy()
 * @iv: the implicit part of the nonce: 4 zero bytes, which the packet id
 *	is XORed into, then the nonce tail; kept whole so that a packet
 *	copies it once
 *
 * Read-only once made: any number of packets use it at once.
 */
struct ovpn_aead_key {
	struct crypto_aead *tfm;
	u8 iv[OVPN_EPOCH_IV_SIZE];
};

/**
 * struct ovpn_aead_epoch_key - one epoch of one direction, ready to run
 * @tfm: the AEAD transform, keyed with the epoch's key; freed by
 *	 ovpn_aead_epoch_key_destroy()
 * @iv: the epoch's implicit IV
 * @epoch: which epoch
 *
 * Read-only once made, as struct ovpn_aead_key.
 */
struct ovpn_aead_epoch_key {
	struct crypto_aead *tfm;
	u8 iv[OVPN_EPOCH_IV_SIZE];
	u16 epoch;
};

int ovpn_aead_init(void);
void ovpn_aead_exit(void);

int ovpn_aead_key_init(struct ovpn_aead_key *key, enum ovpn_cipher_alg alg,
		       const struct ovpn_key_direction *kd);
void ovpn_aead_key_destroy(struct ovpn_aead_key *key);

int ovpn_aead_encrypt(const struct ovpn_aead_key *key, __be32 opcode,
		      u32 pktid, crypto_completion_t done,
		      struct sk_buff *skb);
int ovpn_aead_decrypt(const struct ovpn_aead_key *key,
		      crypto_completion_t done, struct sk_buff *skb);
void ovpn_aead_request_free(struct sk_buff *skb);

int ovpn_aead_epoch_key_init(struct ovpn_aead_epoch_key *key,
			     enum ovpn_cipher_alg alg, unsigned int key_size,
			     const struct ovpn_epoch_secret *es);
void ovpn_aead_epoch_key_destroy(struct ovpn_aead_epoch_key *key);
int ovpn_aead_encrypt_epoch(const struct ovpn_aead_epoch_key *key,
			    __be32 opcode, u64 counter,
			    crypto_completion_t done, struct sk_buff *skb);
int ovpn_aead_decrypt_epoch(const struct ovpn_aead_epoch_key *key,
			    crypto_completion_t done, struct sk_buff *skb);

#endif /* _NET_OVPN_AEAD_H_ */
