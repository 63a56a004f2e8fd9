// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - AEAD encryption and decryption
 *
 * A packet is processed in place.  The wire puts the tag in front of the
 * ciphertext while the AEAD API expects AAD, then text, then tag, so the
 * scatterlist handed to the AEAD visits the packet out of order:
 *
 *   sg[0]           bytes 0..7 of the packet     AAD (opcode word, id)
 *   sg[1..n]        bytes 24..end                plaintext / ciphertext
 *   sg[n + 1]       bytes 8..23                  tag
 *
 * Both directions run in softirq or with BH disabled: nothing here may
 * sleep, and the one allocation per packet is GFP_ATOMIC.
 */

#include <crypto/aead.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "aead.h"
#include "proto.h"
#include "skb.h"

/* The associated data: opcode word and packet id. */
#define OVPN_AEAD_AAD_SIZE	(OVPN_OPCODE_SIZE + OVPN_PKTID_SIZE)
/* The nonce: packet id followed by the direction's nonce tail. */
#define OVPN_AEAD_IV_SIZE	(OVPN_PKTID_SIZE + OVPN_NONCE_TAIL_SIZE)

#define OVPN_AEAD_ALG_AES_GCM	"gcm(aes)"
#define OVPN_AEAD_ALG_CHACHAPOLY "rfc7539(chacha20,poly1305)"

/*
 * The per-packet buffer, in the order it is laid out:
 *
 *   struct aead_request + crypto_aead_reqsize() bytes of driver context
 *   padding to the alignment of struct scatterlist
 *   @nsg scatterlist entries
 *   padding to the transform's alignmask
 *   OVPN_AEAD_IV_SIZE bytes of IV
 *
 * The request comes first: kmalloc() already aligns it as the crypto API
 * wants its context (CRYPTO_MINALIGN is ARCH_KMALLOC_MINALIGN), and the
 * buffer is freed through it (ovpn_aead_request_free()).
 * The IV gets a full alignmask of slack because the scatterlist array
 * only guarantees its own, smaller alignment.
 */
static struct aead_request *ovpn_aead_tmp_alloc(struct crypto_aead *tfm,
						unsigned int nsg,
						struct scatterlist **sg,
						u8 **iv)
{
	unsigned int alignmask = crypto_aead_alignmask(tfm);
	struct aead_request *req;
	size_t sg_off, len;

	sg_off = ALIGN(sizeof(*req) + crypto_aead_reqsize(tfm),
		       __alignof__(struct scatterlist));
	len = size_add(sg_off, array_size(nsg, sizeof(**sg)));
	len = size_add(len, alignmask + OVPN_AEAD_IV_SIZE);

	req = kmalloc(len, GFP_ATOMIC);
	if (unlikely(!req))
		return NULL;

	*sg = (struct scatterlist *)((u8 *)req + sg_off);
	*iv = PTR_ALIGN((u8 *)(*sg + nsg), alignmask + 1);
	aead_request_set_tfm(req, tfm);
	return req;
}

/*
 * Fill @sg (room for @nsg entries, nsg >= 2 + what skb_cow_data()
 * counted) with the layout described at the top of this file, for @len
 * bytes of text starting at OVPN_DATA_OVERHEAD.  The header must be in
 * the linear part of @skb.
 */
static int ovpn_aead_map(struct sk_buff *skb, struct scatterlist *sg,
			 unsigned int nsg, unsigned int len)
{
	int n;

	sg_init_table(sg, nsg);
	sg_set_buf(&sg[0], skb->data, OVPN_AEAD_AAD_SIZE);

	n = skb_to_sgvec_nomark(skb, &sg[1], OVPN_DATA_OVERHEAD, len);
	if (unlikely(n < 0))
		return n;

	sg_set_buf(&sg[n + 1], skb->data + OVPN_AEAD_AAD_SIZE,
		   OVPN_AUTH_TAG_SIZE);
	sg_mark_end(&sg[n + 1]);
	return 0;
}

/*
 * What both directions do once the header is at skb->data.  The AEAD
 * works in place, so the data must be ours alone (skb_cow_data(), which
 * may move it: the header is read after it).  The packet's single
 * allocation is recorded in the control block for the post function to
 * free (ovpn_aead_request_free()), on error too.  @tag_len is what the
 * AEAD counts of the tag as text: all of it to decrypt, none to encrypt.
 * The completion may run before the AEAD call returns: everything it
 * reads is set here.
 */
static struct aead_request *ovpn_aead_request(const struct ovpn_aead_key *key,
					      crypto_completion_t done,
					      struct sk_buff *skb,
					      unsigned int tag_len)
{
	unsigned int len = skb->len - OVPN_DATA_OVERHEAD;
	struct sk_buff *trailer;
	struct aead_request *req;
	struct scatterlist *sg;
	int nsg, ret;
	u8 *iv;

	nsg = skb_cow_data(skb, 0, &trailer);
	if (unlikely(nsg < 0))
		return ERR_PTR(nsg);
	nsg += 2;	/* the AAD and the tag */

	req = ovpn_aead_tmp_alloc(key->tfm, nsg, &sg, &iv);
	if (unlikely(!req))
		return ERR_PTR(-ENOMEM);
	ovpn_skb_cb(skb)->crypto_tmp = req;

	memcpy(iv, skb->data + OVPN_OPCODE_SIZE, OVPN_PKTID_SIZE);
	memcpy(iv + OVPN_PKTID_SIZE, key->nonce_tail, OVPN_NONCE_TAIL_SIZE);

	ret = ovpn_aead_map(skb, sg, nsg, len);
	if (unlikely(ret))
		return ERR_PTR(ret);

	aead_request_set_callback(req, 0, done, skb);
	aead_request_set_crypt(req, sg, sg, len + tag_len, iv);
	aead_request_set_ad(req, OVPN_AEAD_AAD_SIZE);
	ovpn_skb_cb(skb)->payload_offset = OVPN_DATA_OVERHEAD;
	return req;
}

/**
 * ovpn_aead_encrypt - encrypt one packet
 * @key: the key to encrypt with
 * @opcode: the first word of the packet (opcode, key id, peer id)
 * @pktid: the packet id, never used before with this key
 * @done: the completion, called with @skb if this returns -EINPROGRESS
 * @skb: the plaintext IP packet, skb->data at its IP header; its control
 *	 block holds what the completion needs
 *
 * On success the packet becomes a complete DATA_V2 packet (header, tag,
 * ciphertext) and ovpn_skb_cb(skb)->payload_offset is the offset of the
 * ciphertext.  Whatever the outcome, the completion (or the caller) ends
 * with ovpn_aead_request_free(); ovpn_skb_cb(skb)->crypto_tmp must be
 * NULL on entry.
 *
 * Context: softirq or BH disabled.
 * Return: -EINPROGRESS if the crypto layer will call @done; anything else
 * (0 or a negative error) means the caller must finish the packet itself
 * with that value.
 */
int ovpn_aead_encrypt(const struct ovpn_aead_key *key, __be32 opcode,
		      u32 pktid, crypto_completion_t done,
		      struct sk_buff *skb)
{
	struct aead_request *req;

	/*
	 * Make room for everything the transport will add too, so that a
	 * packet short of headroom is reallocated once, here.
	 */
	if (unlikely(skb_cow_head(skb, OVPN_HEAD_ROOM)))
		return -ENOMEM;

	__skb_push(skb, OVPN_DATA_OVERHEAD);
	put_unaligned(opcode, (__be32 *)skb->data);
	put_unaligned_be32(pktid, skb->data + OVPN_OPCODE_SIZE);

	req = ovpn_aead_request(key, done, skb, 0);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return crypto_aead_encrypt(req);
}

/**
 * ovpn_aead_decrypt - decrypt one packet
 * @key: the key matching the packet's key id
 * @done: the completion, called with @skb if this returns -EINPROGRESS
 * @skb: the packet, skb->data at its first byte (the opcode word); its
 *	 control block holds what the completion needs
 *
 * The packet is authenticated and decrypted in place; the header stays,
 * for the completion to read the packet id (replay check) and strip.
 * ovpn_skb_cb(skb)->payload_offset is the offset of the plaintext.  As
 * for ovpn_aead_encrypt(), ovpn_aead_request_free() ends it, and
 * ovpn_skb_cb(skb)->crypto_tmp must be NULL on entry.
 *
 * Context: softirq or BH disabled.
 * Return: -EINPROGRESS if the crypto layer will call @done; anything else
 * (0 or a negative error, -EBADMSG if the packet did not authenticate)
 * means the caller must finish the packet itself with that value.
 */
int ovpn_aead_decrypt(const struct ovpn_aead_key *key,
		      crypto_completion_t done, struct sk_buff *skb)
{
	struct aead_request *req;

	/* A data packet carries at least one byte of ciphertext. */
	if (unlikely(skb->len <= OVPN_DATA_OVERHEAD))
		return -EINVAL;
	/* AAD and tag are mapped straight from the linear part. */
	if (unlikely(!pskb_may_pull(skb, OVPN_DATA_OVERHEAD)))
		return -ENOMEM;

	req = ovpn_aead_request(key, done, skb, OVPN_AUTH_TAG_SIZE);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return crypto_aead_decrypt(req);
}

/**
 * ovpn_aead_request_free - free a packet's AEAD request
 * @skb: the packet, once its encryption or decryption has ended (or
 *	 failed to start)
 *
 * Context: any.
 */
void ovpn_aead_request_free(struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);

	kfree(cb->crypto_tmp);
	cb->crypto_tmp = NULL;
}

/* Crypto API name of @alg, if @keylen is a valid key size for it. */
static const char *ovpn_aead_alg_name(enum ovpn_cipher_alg alg, size_t keylen)
{
	switch (alg) {
	case OVPN_CIPHER_ALG_AES_GCM:
		if (keylen != 16 && keylen != 24 && keylen != 32)
			return NULL;
		return OVPN_AEAD_ALG_AES_GCM;
	case OVPN_CIPHER_ALG_CHACHA20_POLY1305:
		if (keylen != 32)
			return NULL;
		return OVPN_AEAD_ALG_CHACHAPOLY;
	default:
		return NULL;
	}
}

/*
 * Allocate and key one transform.  The rest of this file assumes a 12-byte
 * nonce and a 16-byte tag, so refuse anything else.
 */
static struct crypto_aead *
ovpn_aead_tfm_new(enum ovpn_cipher_alg alg, const struct ovpn_key_direction *kd)
{
	const char *name = ovpn_aead_alg_name(alg, kd->cipher_key_size);
	struct crypto_aead *tfm;
	int ret;

	if (!name || !kd->cipher_key || !kd->nonce_tail)
		return ERR_PTR(-EINVAL);

	tfm = crypto_alloc_aead(name, 0, 0);
	if (IS_ERR(tfm))
		return tfm;

	if (crypto_aead_ivsize(tfm) != OVPN_AEAD_IV_SIZE) {
		ret = -EINVAL;
		goto free_tfm;
	}

	ret = crypto_aead_setauthsize(tfm, OVPN_AUTH_TAG_SIZE);
	if (ret)
		goto free_tfm;

	ret = crypto_aead_setkey(tfm, kd->cipher_key, kd->cipher_key_size);
	if (ret)
		goto free_tfm;

	return tfm;

free_tfm:
	crypto_free_aead(tfm);
	return ERR_PTR(ret);
}

/**
 * ovpn_aead_key_init - make one direction of a key
 * @key: where to make it
 * @alg: the cipher
 * @kd: the key material
 *
 * Context: process (allocates the transform with GFP_KERNEL).
 * Return: 0, -EINVAL for an unsupported algorithm or bad key material,
 * -ENOMEM, or another error from the crypto API; @key is untouched then.
 */
int ovpn_aead_key_init(struct ovpn_aead_key *key, enum ovpn_cipher_alg alg,
		       const struct ovpn_key_direction *kd)
{
	struct crypto_aead *tfm = ovpn_aead_tfm_new(alg, kd);

	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	key->tfm = tfm;
	memcpy(key->nonce_tail, kd->nonce_tail, OVPN_NONCE_TAIL_SIZE);
	return 0;
}

/**
 * ovpn_aead_key_destroy - free a key made by ovpn_aead_key_init()
 * @key: the key, which no packet uses any more
 *
 * Context: process (crypto_free_aead() may sleep); the key material in
 * the transform is wiped as it is freed.
 */
void ovpn_aead_key_destroy(struct ovpn_aead_key *key)
{
	crypto_free_aead(key->tfm);
}
