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
#include "io.h"
#include "main.h"
#include "peer.h"
#include "pktid.h"
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
 * buffer is freed through it by the post function (kfree(crypto_tmp)).
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
 * What encryption and decryption both need first: the AEAD works in
 * place, so the data must be ours alone, and the packet's single
 * allocation, recorded in the control block for the post function to
 * free.  @nsg receives the scatterlist's size (fragments, AAD, tag).
 */
static struct aead_request *ovpn_aead_prepare(struct sk_buff *skb,
					      struct crypto_aead *tfm,
					      struct scatterlist **sg,
					      int *nsg, u8 **iv)
{
	struct sk_buff *trailer;
	struct aead_request *req;
	int nfrags;

	nfrags = skb_cow_data(skb, 0, &trailer);
	if (unlikely(nfrags < 0))
		return ERR_PTR(nfrags);

	*nsg = nfrags + 2;
	req = ovpn_aead_tmp_alloc(tfm, *nsg, sg, iv);
	if (unlikely(!req))
		return ERR_PTR(-ENOMEM);
	ovpn_skb_cb(skb)->crypto_tmp = req;
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

/**
 * ovpn_aead_encrypt - encrypt one packet for a peer
 * @peer: the peer the packet goes to
 * @ks: the key slot to encrypt with
 * @skb: the plaintext IP packet, skb->data at its IP header; the caller
 *	 set ovpn_skb_cb(skb)->peer and ->ks, holding one reference on each
 *
 * On success the packet becomes a complete DATA_V2 packet (header, tag,
 * ciphertext) and ovpn_skb_cb(skb)->payload_offset is the offset of the
 * ciphertext.  ovpn_skb_cb(skb)->crypto_tmp is NULL or the buffer the
 * post function must free.
 *
 * Context: softirq or BH disabled.
 * Return: -EINPROGRESS if ovpn_encrypt_done() will be called by the
 * crypto layer; anything else (0 or a negative error, -ERANGE when
 * the key ran out of packet ids) means the caller must call
 * ovpn_encrypt_post() itself with that value.
 */
int ovpn_aead_encrypt(struct ovpn_peer *peer, struct ovpn_crypto_key_slot *ks,
		      struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct crypto_aead *tfm = ks->encrypt;
	struct aead_request *req;
	struct scatterlist *sg;
	unsigned int len;
	int nsg, ret;
	u32 pktid;
	u8 *iv;

	cb->crypto_tmp = NULL;

	ret = ovpn_pktid_xmit_next(&ks->pid_xmit, &pktid);
	if (unlikely(ret))
		return ret;

	/*
	 * Make room for everything the transport will add too, so that a
	 * packet short of headroom is reallocated once, here.
	 */
	if (unlikely(skb_cow_head(skb, OVPN_HEAD_ROOM)))
		return -ENOMEM;

	req = ovpn_aead_prepare(skb, tfm, &sg, &nsg, &iv);
	if (IS_ERR(req))
		return PTR_ERR(req);

	len = skb->len;
	__skb_push(skb, OVPN_DATA_OVERHEAD);
	put_unaligned(ovpn_opcode_compose(OVPN_OPCODE_DATA_V2, ks->key_id,
					  READ_ONCE(peer->tx_id)),
		      (__be32 *)skb->data);
	put_unaligned_be32(pktid, skb->data + OVPN_OPCODE_SIZE);

	memcpy(iv, skb->data + OVPN_OPCODE_SIZE, OVPN_PKTID_SIZE);
	memcpy(iv + OVPN_PKTID_SIZE, ks->nonce_tail_xmit, OVPN_NONCE_TAIL_SIZE);

	ret = ovpn_aead_map(skb, sg, nsg, len);
	if (unlikely(ret))
		return ret;

	aead_request_set_callback(req, 0, ovpn_encrypt_done, skb);
	aead_request_set_crypt(req, sg, sg, len, iv);
	aead_request_set_ad(req, OVPN_AEAD_AAD_SIZE);

	/* The completion may run before crypto_aead_encrypt() returns. */
	cb->payload_offset = OVPN_DATA_OVERHEAD;
	return crypto_aead_encrypt(req);
}

/**
 * ovpn_aead_decrypt - decrypt one packet from a peer
 * @peer: the peer the packet comes from
 * @ks: the key slot matching the packet's key id
 * @skb: the packet, skb->data at its first byte (the opcode word); the
 *	 caller set ovpn_skb_cb(skb)->peer and ->ks, holding one reference
 *	 on each
 *
 * The packet is authenticated and decrypted in place; the header stays,
 * for the post function to read the packet id (replay check) and strip.
 * ovpn_skb_cb(skb)->payload_offset is the offset of the plaintext, and
 * ovpn_skb_cb(skb)->crypto_tmp is NULL or the buffer the post function
 * must free.
 *
 * Context: softirq or BH disabled.
 * Return: -EINPROGRESS if ovpn_decrypt_done() will be called by the
 * crypto layer; anything else (0 or a negative error, -EBADMSG if
 * the packet did not authenticate) means the caller must call
 * ovpn_decrypt_post() itself with that value.
 */
int ovpn_aead_decrypt(struct ovpn_peer *peer, struct ovpn_crypto_key_slot *ks,
		      struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct crypto_aead *tfm = ks->decrypt;
	struct aead_request *req;
	struct scatterlist *sg;
	unsigned int len;
	int nsg, ret;
	u8 *iv;

	cb->crypto_tmp = NULL;

	/* A data packet carries at least one byte of ciphertext. */
	if (unlikely(skb->len <= OVPN_DATA_OVERHEAD))
		return -EINVAL;
	len = skb->len - OVPN_DATA_OVERHEAD;

	/* AAD and tag are mapped straight from the linear part. */
	if (unlikely(!pskb_may_pull(skb, OVPN_DATA_OVERHEAD)))
		return -ENOMEM;

	req = ovpn_aead_prepare(skb, tfm, &sg, &nsg, &iv);
	if (IS_ERR(req))
		return PTR_ERR(req);

	/* skb_cow_data() may have moved the data: read the header now. */
	memcpy(iv, skb->data + OVPN_OPCODE_SIZE, OVPN_PKTID_SIZE);
	memcpy(iv + OVPN_PKTID_SIZE, ks->nonce_tail_recv, OVPN_NONCE_TAIL_SIZE);

	ret = ovpn_aead_map(skb, sg, nsg, len);
	if (unlikely(ret))
		return ret;

	aead_request_set_callback(req, 0, ovpn_decrypt_done, skb);
	/* For decryption the AEAD counts the tag as part of the text. */
	aead_request_set_crypt(req, sg, sg, len + OVPN_AUTH_TAG_SIZE, iv);
	aead_request_set_ad(req, OVPN_AEAD_AAD_SIZE);

	/* The completion may run before crypto_aead_decrypt() returns. */
	cb->payload_offset = OVPN_DATA_OVERHEAD;
	return crypto_aead_decrypt(req);
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
 * ovpn_aead_key_slot_new - build a key slot from a key configuration
 * @kc: the key as userspace installs it
 *
 * The slot comes back with its initial reference, unpublished; from then
 * on it is only destroyed by killing that reference (see crypto.h).
 *
 * Context: process (allocates the transforms with GFP_KERNEL).
 * Return: the key slot, or ERR_PTR(-EINVAL) for an unsupported algorithm,
 * a bad key id or bad key material, ERR_PTR(-ENOMEM), or another error
 * from the crypto API.
 */
struct ovpn_crypto_key_slot *
ovpn_aead_key_slot_new(const struct ovpn_key_config *kc)
{
	struct ovpn_crypto_key_slot *ks;
	int ret;

	if (kc->key_id > FIELD_MAX(OVPN_KEY_ID_MASK))
		return ERR_PTR(-EINVAL);

	ks = kzalloc_obj(*ks);
	if (!ks)
		return ERR_PTR(-ENOMEM);

	ks->key_id = kc->key_id;
	ks->cipher_alg = kc->cipher_alg;

	ks->encrypt = ovpn_aead_tfm_new(kc->cipher_alg, &kc->encrypt);
	if (IS_ERR(ks->encrypt)) {
		ret = PTR_ERR(ks->encrypt);
		goto free_ks;
	}

	ks->decrypt = ovpn_aead_tfm_new(kc->cipher_alg, &kc->decrypt);
	if (IS_ERR(ks->decrypt)) {
		ret = PTR_ERR(ks->decrypt);
		goto free_encrypt;
	}

	memcpy(ks->nonce_tail_xmit, kc->encrypt.nonce_tail,
	       OVPN_NONCE_TAIL_SIZE);
	memcpy(ks->nonce_tail_recv, kc->decrypt.nonce_tail,
	       OVPN_NONCE_TAIL_SIZE);
	ovpn_pktid_xmit_init(&ks->pid_xmit);
	ovpn_pktid_recv_init(&ks->pid_recv);

	ret = ovpn_crypto_key_slot_init_ref(ks);
	if (ret)
		goto free_decrypt;

	return ks;

free_decrypt:
	crypto_free_aead(ks->decrypt);
free_encrypt:
	crypto_free_aead(ks->encrypt);
free_ks:
	kfree(ks);
	return ERR_PTR(ret);
}

/**
 * ovpn_aead_key_slot_free_tfms - free the transforms of a dead key slot
 * @ks: the key slot, with no reference left and unreachable
 *
 * Context: process (crypto_free_aead() may sleep); the key material in
 * the transforms is wiped as they are freed.
 */
void ovpn_aead_key_slot_free_tfms(struct ovpn_crypto_key_slot *ks)
{
	crypto_free_aead(ks->decrypt);
	crypto_free_aead(ks->encrypt);
}
