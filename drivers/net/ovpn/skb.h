/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - packet control block
 *
 * While a packet is being encrypted or decrypted (possibly by an
 * asynchronous AEAD), skb->cb carries what the post-crypto step needs and
 * the references it must put: one on the key slot and one on the peer, put
 * in that order.
 */

#ifndef _NET_OVPN_SKB_H_
#define _NET_OVPN_SKB_H_

#include <linux/skbuff.h>

struct aead_request;
struct ovpn_crypto_key_slot;
struct ovpn_epoch_key;
struct ovpn_peer;

/**
 * struct ovpn_cb - ovpn's use of skb->cb
 * @peer: the peer, with one reference held by this packet
 * @ks: the key slot, with one reference held by this packet
 * @ek: the epoch key of @ks it is encrypted or decrypted with, with one
 *	reference held by this packet, put before @ks's; NULL for DATA_V2
 * @crypto_tmp: where the AEAD request, IV and scatterlist are: a CPU's
 *		buffer (a struct ovpn_aead_scratch, owned by this packet
 *		until the post-crypto step gives it back) if
 *		@crypto_tmp_percpu, else the packet's own allocation, freed
 *		by the post-crypto step; see ovpn_aead_request_free()
 * @pktid: the packet id a queued packet is to be encrypted with (in the
 *	   epoch format, its counter in @ek's epoch)
 * @payload_offset: offset of the ciphertext in the packet
 * @src_pages: page fragments an encryption apart reads from, which the
 *	       packet no longer has; ovpn_aead_request_free() puts them
 * @crypt_ret: the AEAD's result, for a packet on the parallel path (an
 *	       errno fits)
 * @crypto_tmp_percpu: @crypto_tmp is a CPU's buffer
 * @crypt_encrypt: the packet is on the parallel path's TX side (else RX)
 * @crypt_done: the packet on the parallel path is through the AEAD;
 *		written with release once @crypt_ret is set, read with
 *		acquire by its ordered queue's work (see queue.c)
 */
struct ovpn_cb {
	struct ovpn_peer *peer;
	struct ovpn_crypto_key_slot *ks;
	struct ovpn_epoch_key *ek;
	void *crypto_tmp;
	u64 pktid;
	u8 payload_offset;
	u8 src_pages;
	s16 crypt_ret;
	bool crypto_tmp_percpu;
	bool crypt_encrypt;
	bool crypt_done;
};

static inline struct ovpn_cb *ovpn_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct ovpn_cb) > sizeof(skb->cb));
	return (struct ovpn_cb *)skb->cb;
}

#endif /* _NET_OVPN_SKB_H_ */
