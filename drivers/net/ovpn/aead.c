// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - AEAD encryption and decryption
 *
 * A packet is processed in place.  DATA_V2 puts the tag in front of the
 * ciphertext while the AEAD API expects AAD, then text, then tag, so the
 * scatterlist handed to the AEAD visits the packet out of order:
 *
 *   sg[0]           bytes 0..7 of the packet     AAD (opcode word, id)
 *   sg[1..n]        bytes 24..end                plaintext / ciphertext
 *   sg[n + 1]       bytes 8..23                  tag
 *
 * The epoch data format (proto.h) keeps the AEAD's own order:
 *
 *   sg[0]           bytes 0..11                  AAD (opcode word, id)
 *   sg[1..n]        bytes 12..end                text, then the tag
 *
 * Either way the nonce is an implicit part XOR the packet id followed by
 * zeros: for DATA_V2 the implicit part is 4 zero bytes and the key's
 * 8-byte nonce tail, for an epoch the epoch's 12-byte IV.
 *
 * One exception to "in place": a packet to encrypt whose text lies partly
 * in page fragments (a segment of a TCP stream or of a UDP GSO send).
 * Those pages are not the packet's to write (the socket keeps them for a
 * retransmission), and making them so, as skb_cow_data() does, copies
 * every byte into a new linear part first.  Instead the AEAD reads them
 * where they are and writes the ciphertext to a page fragment of this
 * CPU's (struct ovpn_aead_out), which becomes the packet's one fragment;
 * the header stays in the linear part.  IPsec's ESP output does the same.
 *
 * A received packet is decrypted where it lies, fragments included, when
 * they are its own to write: the pages a driver filled, or those of a
 * local sender's packet that veth handed over.  skb_cow_data() would copy
 * every byte of those into a new linear part first, and does so only
 * for the rest (a clone a tap also holds, a frag_list, pages a sender
 * shared by splice or zerocopy).  IPsec's ESP input does the same;
 * WireGuard and upstream's driver call skb_cow_data() on every packet.
 *
 * Both directions run in softirq or with BH disabled: nothing here may
 * sleep.  The request, scatterlist and IV of a packet live in a buffer of
 * the CPU it runs on (struct ovpn_aead_scratch), so that a packet
 * allocates nothing; a packet that finds that buffer taken or too small
 * allocates its own, with GFP_ATOMIC.
 */

#include <crypto/aead.h>
#include <crypto/algapi.h>
#include <linux/local_lock.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <net/sock.h>

#include "aead.h"
#include "epoch.h"
#include "proto.h"
#include "skb.h"

/* The nonce, of both formats. */
#define OVPN_AEAD_IV_SIZE	(OVPN_PKTID_SIZE + OVPN_NONCE_TAIL_SIZE)

#define OVPN_AEAD_ALG_AES_GCM	"gcm(aes)"
#define OVPN_AEAD_ALG_CHACHAPOLY "rfc7539(chacha20,poly1305)"

/**
 * struct ovpn_aead_layout - where a data format puts its fields
 * @pktid_len: bytes of packet id behind the opcode word
 * @text_off: offset of the text; the AAD is everything in front of it
 *	      but the tag
 * @tag_in_head: the tag sits between the packet id and the text (DATA_V2)
 *		 rather than after the text
 */
struct ovpn_aead_layout {
	unsigned int pktid_len;
	unsigned int text_off;
	bool tag_in_head;
};

static const struct ovpn_aead_layout ovpn_aead_layout_v2 = {
	.pktid_len = OVPN_PKTID_SIZE,
	.text_off = OVPN_DATA_OVERHEAD,
	.tag_in_head = true,
};

static const struct ovpn_aead_layout ovpn_aead_layout_epoch = {
	.pktid_len = OVPN_EPOCH_PKTID_SIZE,
	.text_off = OVPN_EPOCH_HEAD_SIZE,
	.tag_in_head = false,
};

static unsigned int ovpn_aead_aad_len(const struct ovpn_aead_layout *l)
{
	return OVPN_OPCODE_SIZE + l->pktid_len;
}

/* Everything a packet carries besides its text. */
static unsigned int ovpn_aead_overhead(const struct ovpn_aead_layout *l)
{
	return l->text_off + (l->tag_in_head ? 0 : OVPN_AUTH_TAG_SIZE);
}

/*
 * Room in a CPU's buffer for the scatterlists: the AAD, the linear part
 * and every page fragment of a packet, and either the tag (in place) or a
 * destination list of AAD, ciphertext and tag (ovpn_aead_map_apart()); a
 * frag_list adds more and takes the allocating path.
 */
#define OVPN_AEAD_SCRATCH_NSG	(MAX_SKB_FRAGS + 5)
/*
 * The request with its context (a few hundred bytes for the transforms of
 * both ciphers, whatever the implementation), the IV and its alignment
 * slack fit in the first term with room to spare; a transform that needs
 * more is reported once at key installation and allocates per packet.
 */
#define OVPN_AEAD_SCRATCH_SIZE	(1024 + OVPN_AEAD_SCRATCH_NSG * \
				 sizeof(struct scatterlist))

/**
 * struct ovpn_aead_scratch - one CPU's buffer for the packet in the AEAD
 * @buf: OVPN_AEAD_SCRATCH_SIZE bytes laid out as ovpn_aead_tmp_size() says
 * @taken: how many times a packet took @buf; written on this CPU only
 * @given: how many times a packet gave it back; written by the owner only
 *
 * @buf is free when @taken equals @given.  Nobody ever waits for it: a
 * packet that finds it busy, or needs more room than it has, allocates
 * its own.
 *
 * Taking it: with preemption disabled, read @given (acquire), then move
 * @taken from that value to the next with this_cpu_cmpxchg(), which an
 * interrupt on this CPU cannot split.  An interrupt that took the buffer
 * between the two steps (netpoll) makes the cmpxchg fail; so does a stale
 * @given, smaller than @taken.  Preemption is disabled so that both steps
 * run on one CPU whatever the caller: the data path has BH disabled, but
 * on PREEMPT_RT that does not keep another task with BH disabled from
 * running in between, and the buffer's ownership must not depend on the
 * caller's context anyway.  Once taken, the buffer is the packet's,
 * wherever the packet goes on.
 *
 * Giving it back: the owner, on whichever CPU the AEAD completed, stores
 * @given + 1 (release).  That store orders every access the AEAD and the
 * owner made to @buf before the next owner's, which the acquire of @given
 * orders after it.  Only the owner writes @given and only this CPU writes
 * @taken, so neither write can undo another: no locked read-modify-write
 * is needed, and the packet path has none.
 *
 * A synchronous AEAD (the common case, either cipher) gives the buffer
 * back in the post-crypto step, before the next packet on this CPU starts
 * (unless that one preempted it, on PREEMPT_RT): that packet finds it
 * free.  An asynchronous one that returned -EINPROGRESS
 * (a hardware engine, a cryptd fallback) keeps it until its completion;
 * the packets that start on this CPU meanwhile allocate.
 *
 * @buf is kmalloc'd rather than per-CPU memory: a hardware engine may DMA
 * to the request context, and per-CPU chunks may come from vmalloc.  The
 * buffers exist for every possible CPU from module load to module unload,
 * so a request in flight in the buffer of a CPU that went offline keeps
 * it; ovpn_aead_exit() says why none is in flight by then.
 */
struct ovpn_aead_scratch {
	void *buf;
	unsigned long taken;
	unsigned long given;
};

static DEFINE_PER_CPU(struct ovpn_aead_scratch, ovpn_aead_scratch);

/**
 * struct ovpn_aead_out - one CPU's page for ciphertext written apart
 * @bh_lock: makes @frag this CPU's while a packet carves it; the data
 *	     path has BH disabled, which on PREEMPT_RT does not keep another
 *	     task with BH disabled off this CPU
 * @frag: the page being carved and the offset of its free part
 *
 * Each packet takes a reference to the page for the bytes it carves and
 * the page goes when the last packet and this CPU let it go;
 * skb_page_frag_refill() starts again at offset 0 of a page that only
 * this CPU still holds, or takes a new one.
 */
struct ovpn_aead_out {
	local_lock_t bh_lock;
	struct page_frag frag;
};

static DEFINE_PER_CPU(struct ovpn_aead_out, ovpn_aead_out) = {
	.bh_lock = INIT_LOCAL_LOCK(bh_lock),
};

/*
 * @len bytes of this CPU's page for a packet's ciphertext, at *@off of the
 * page returned, which the packet holds a reference to; NULL if no page
 * could be had.  Context: BH disabled.
 */
static struct page *ovpn_aead_out_get(unsigned int len, unsigned int *off)
{
	unsigned int size = SKB_DATA_ALIGN(len);
	struct page *page = NULL;
	struct page_frag *pf;

	local_lock_nested_bh(&ovpn_aead_out.bh_lock);
	pf = this_cpu_ptr(&ovpn_aead_out.frag);
	if (likely(skb_page_frag_refill(size, pf, GFP_ATOMIC))) {
		page = pf->page;
		get_page(page);
		*off = pf->offset;
		pf->offset += size;
	}
	local_unlock_nested_bh(&ovpn_aead_out.bh_lock);
	return page;
}

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
 * wants its context (CRYPTO_MINALIGN is ARCH_KMALLOC_MINALIGN), whether
 * the buffer is a CPU's or the packet's own.  The IV gets a full
 * alignmask of slack because the scatterlist array only guarantees its
 * own, smaller alignment.  *@sg_off is the offset of the scatterlist.
 */
static size_t ovpn_aead_tmp_size(struct crypto_aead *tfm, unsigned int nsg,
				 size_t *sg_off)
{
	size_t len;

	*sg_off = ALIGN(sizeof(struct aead_request) + crypto_aead_reqsize(tfm),
			__alignof__(struct scatterlist));
	len = size_add(*sg_off, array_size(nsg, sizeof(struct scatterlist)));
	return size_add(len, crypto_aead_alignmask(tfm) + OVPN_AEAD_IV_SIZE);
}

/*
 * Get the buffer for @skb's request: this CPU's if it is free and large
 * enough, a GFP_ATOMIC allocation otherwise.  Either way it is recorded in
 * the control block, for ovpn_aead_request_free() to give back or free.
 */
static struct aead_request *ovpn_aead_tmp_get(struct sk_buff *skb,
					      struct crypto_aead *tfm,
					      unsigned int nsg,
					      struct scatterlist **sg,
					      u8 **iv)
{
	unsigned int alignmask = crypto_aead_alignmask(tfm);
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_aead_scratch *scratch;
	struct aead_request *req;
	size_t sg_off, len;
	unsigned long given;

	len = ovpn_aead_tmp_size(tfm, nsg, &sg_off);
	req = NULL;
	/* On one CPU from the read of @given to the cmpxchg of @taken. */
	scratch = get_cpu_ptr(&ovpn_aead_scratch);
	/* Pairs with the release in ovpn_aead_request_free(). */
	given = smp_load_acquire(&scratch->given);
	if (likely(len <= OVPN_AEAD_SCRATCH_SIZE &&
		   this_cpu_cmpxchg(ovpn_aead_scratch.taken, given,
				    given + 1) == given))
		req = scratch->buf;
	put_cpu_ptr(&ovpn_aead_scratch);

	if (likely(req)) {
		cb->crypto_tmp = scratch;
		cb->crypto_tmp_percpu = true;
	} else {
		req = kmalloc(len, GFP_ATOMIC);
		if (unlikely(!req))
			return NULL;
		cb->crypto_tmp = req;
	}

	*sg = (struct scatterlist *)((u8 *)req + sg_off);
	*iv = PTR_ALIGN((u8 *)(*sg + nsg), alignmask + 1);
	aead_request_set_tfm(req, tfm);
	return req;
}

/*
 * Fill @sg (room for @nsg entries, nsg >= 2 + what skb_cow_data()
 * counted) with the layout @l (see the top of this file), for @len bytes
 * of text.  The AAD and, for DATA_V2, the tag must be in the linear part
 * of @skb.
 */
static int ovpn_aead_map(struct sk_buff *skb, const struct ovpn_aead_layout *l,
			 struct scatterlist *sg, unsigned int nsg,
			 unsigned int len)
{
	unsigned int aad_len = ovpn_aead_aad_len(l);
	int n;

	sg_init_table(sg, nsg);
	sg_set_buf(&sg[0], skb->data, aad_len);

	if (!l->tag_in_head) {
		n = skb_to_sgvec_nomark(skb, &sg[1], l->text_off,
					len + OVPN_AUTH_TAG_SIZE);
		if (unlikely(n < 0))
			return n;
		sg_mark_end(&sg[n]);
		return 0;
	}

	n = skb_to_sgvec_nomark(skb, &sg[1], l->text_off, len);
	if (unlikely(n < 0))
		return n;

	sg_set_buf(&sg[n + 1], skb->data + aad_len, OVPN_AUTH_TAG_SIZE);
	sg_mark_end(&sg[n + 1]);
	return 0;
}

/*
 * Whether a packet's fragments may be written, or taken apart, by us
 * alone: nobody else holds its shared info (a clone), its fragments are
 * plain pages in this skb (no frag_list, no zerocopy user pages, none
 * that only a device can read).
 */
static bool ovpn_aead_frags_own(struct sk_buff *skb)
{
	return !skb_cloned(skb) && !skb_has_frag_list(skb) &&
	       !skb_zcopy(skb) && skb_frags_readable(skb);
}

/*
 * The in-place request of both directions of both formats, once the
 * header is at skb->data.  The data must be ours alone (skb_cow_data(),
 * which may move it: the header is read after it), except for a received
 * packet whose fragments are its own (see the top of this file); a packet
 * to encrypt in a format whose tag ends it gets the room for the tag
 * there.  *@len is the text's length.
 */
static struct aead_request *
ovpn_aead_map_in_place(struct crypto_aead *tfm,
		       const struct ovpn_aead_layout *l, struct sk_buff *skb,
		       bool decrypt, unsigned int *len, u8 **iv)
{
	unsigned int tail = l->tag_in_head || decrypt ? 0 : OVPN_AUTH_TAG_SIZE;
	struct sk_buff *trailer;
	struct aead_request *req;
	struct scatterlist *sg;
	int nsg, ret;

	if (decrypt && ovpn_aead_frags_own(skb) && !skb_has_shared_frag(skb)) {
		/* The linear part and each fragment. */
		nsg = 1 + skb_shinfo(skb)->nr_frags;
	} else {
		nsg = skb_cow_data(skb, tail, &trailer);
		if (unlikely(nsg < 0))
			return ERR_PTR(nsg);
		if (tail)
			pskb_put(skb, trailer, tail);
	}
	nsg += 2;	/* the AAD and the tag */
	*len = skb->len - ovpn_aead_overhead(l);

	req = ovpn_aead_tmp_get(skb, tfm, nsg, &sg, iv);
	if (unlikely(!req))
		return ERR_PTR(-ENOMEM);
	ret = ovpn_aead_map(skb, l, sg, nsg, *len);
	if (unlikely(ret))
		return ERR_PTR(ret);
	aead_request_set_crypt(req, sg, sg,
			       *len + (decrypt ? OVPN_AUTH_TAG_SIZE : 0), *iv);
	return req;
}

/*
 * The request of a packet to encrypt whose text is partly in page
 * fragments, with the header at skb->data: the text is read from where it
 * is and the ciphertext, followed by an epoch tag, written to a fragment
 * of this CPU's page (see the top of this file).  From then on the packet
 * is the header, in its linear part, and that fragment; the old
 * fragments are the request's source until the AEAD is done, and
 * ovpn_aead_request_free() puts them.
 *
 * NULL, for the caller to work in place, if the packet's fragments or
 * its shared info are not its own alone (cloned, zerocopy, page pool,
 * unreadable), if it has a frag_list, or if no page could be had.
 */
static struct aead_request *
ovpn_aead_map_apart(struct crypto_aead *tfm, const struct ovpn_aead_layout *l,
		    struct sk_buff *skb, unsigned int *len, u8 **iv)
{
	unsigned int tail = l->tag_in_head ? 0 : OVPN_AUTH_TAG_SIZE;
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int aad_len = ovpn_aead_aad_len(l);
	unsigned int nsrc, out_off, head_entries;
	struct scatterlist *src, *dst;
	struct aead_request *req;
	struct page *out;
	int n, i;

	/* Page pool pages are not put with put_page(), as the AEAD's are. */
	if (!shinfo->nr_frags || !ovpn_aead_frags_own(skb) || skb->pp_recycle)
		return NULL;

	*len = skb->len - l->text_off;
	out = ovpn_aead_out_get(*len + tail, &out_off);
	if (unlikely(!out))
		return NULL;

	nsrc = 2 + shinfo->nr_frags;	/* the AAD, the linear text, frags */
	req = ovpn_aead_tmp_get(skb, tfm, nsrc + 3, &src, iv);
	if (unlikely(!req)) {
		put_page(out);
		return ERR_PTR(-ENOMEM);
	}
	dst = src + nsrc;

	sg_init_table(src, nsrc);
	sg_set_buf(&src[0], skb->data, aad_len);
	n = skb_to_sgvec_nomark(skb, &src[1], l->text_off, *len);
	if (unlikely(n < 0)) {
		put_page(out);
		return ERR_PTR(n);
	}
	sg_mark_end(&src[n]);

	sg_init_table(dst, 3);
	sg_set_buf(&dst[0], skb->data, aad_len);
	sg_set_page(&dst[1], out, *len + tail, out_off);
	if (l->tag_in_head)
		sg_set_buf(&dst[2], skb->data + aad_len, OVPN_AUTH_TAG_SIZE);
	else
		sg_mark_end(&dst[1]);

	/*
	 * Each fragment with bytes has one entry in @src, after the linear
	 * text's if there is any: their references go to the request.  A
	 * fragment of no bytes has none and is put now.
	 */
	head_entries = skb_headlen(skb) > l->text_off ? 1 : 0;
	ovpn_skb_cb(skb)->src_pages = n - head_entries;
	for (i = 0; i < shinfo->nr_frags; i++)
		if (!skb_frag_size(&shinfo->frags[i]))
			put_page(skb_frag_page(&shinfo->frags[i]));

	/* The header, then the ciphertext in the new fragment. */
	skb_set_tail_pointer(skb, l->text_off);
	__skb_fill_page_desc_noacc(shinfo, 0, out, out_off, *len + tail);
	shinfo->nr_frags = 1;
	skb->data_len = *len + tail;
	skb->len = l->text_off + skb->data_len;

	aead_request_set_crypt(req, src, dst, *len, *iv);
	return req;
}

/*
 * What both directions of both formats do once the header is at
 * skb->data: the request, in place or apart, and its nonce, @implicit
 * (OVPN_AEAD_IV_SIZE bytes) XOR the packet id.  The request's buffer is
 * recorded in the control block for the post function to give back
 * (ovpn_aead_request_free()), on error too.  The completion may run
 * before the AEAD call returns: everything it reads is set here.
 */
static struct aead_request *
ovpn_aead_request(struct crypto_aead *tfm, const struct ovpn_aead_layout *l,
		  const u8 *implicit, crypto_completion_t done,
		  struct sk_buff *skb, bool decrypt)
{
	struct aead_request *req = NULL;
	unsigned int len;
	u8 *iv;

	if (!decrypt)
		req = ovpn_aead_map_apart(tfm, l, skb, &len, &iv);
	if (!req)
		req = ovpn_aead_map_in_place(tfm, l, skb, decrypt, &len, &iv);
	if (IS_ERR(req))
		return req;

	memcpy(iv, implicit, OVPN_AEAD_IV_SIZE);
	crypto_xor(iv, skb->data + OVPN_OPCODE_SIZE, l->pktid_len);
	aead_request_set_callback(req, 0, done, skb);
	aead_request_set_ad(req, ovpn_aead_aad_len(l));
	ovpn_skb_cb(skb)->payload_offset = l->text_off;
	return req;
}

/*
 * Encrypt in place as @l lays the packet out: push the header, write
 * @opcode and the packet id @pktid (big endian, as long as the format's),
 * then run the AEAD.  See ovpn_aead_encrypt().
 */
static int ovpn_aead_seal(struct crypto_aead *tfm,
			  const struct ovpn_aead_layout *l, const u8 *implicit,
			  __be32 opcode, u64 pktid, crypto_completion_t done,
			  struct sk_buff *skb)
{
	struct aead_request *req;

	/*
	 * Make room for everything the transport will add too, so that a
	 * packet short of headroom is reallocated once, here.
	 */
	if (unlikely(skb_cow_head(skb, OVPN_HEAD_ROOM)))
		return -ENOMEM;

	__skb_push(skb, l->text_off);
	put_unaligned(opcode, (__be32 *)skb->data);
	if (l->pktid_len == OVPN_EPOCH_PKTID_SIZE)
		put_unaligned_be64(pktid, skb->data + OVPN_OPCODE_SIZE);
	else
		put_unaligned_be32(pktid, skb->data + OVPN_OPCODE_SIZE);

	req = ovpn_aead_request(tfm, l, implicit, done, skb, false);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return crypto_aead_encrypt(req);
}

/*
 * Authenticate and decrypt in place as @l lays the packet out.  See
 * ovpn_aead_decrypt().
 */
static int ovpn_aead_open(struct crypto_aead *tfm,
			  const struct ovpn_aead_layout *l, const u8 *implicit,
			  crypto_completion_t done, struct sk_buff *skb)
{
	struct aead_request *req;

	/* A data packet carries at least one byte of ciphertext. */
	if (unlikely(skb->len <= ovpn_aead_overhead(l)))
		return -EINVAL;
	/* The AAD, and a tag in the head, are mapped from the linear part. */
	if (unlikely(!pskb_may_pull(skb, l->text_off)))
		return -ENOMEM;

	req = ovpn_aead_request(tfm, l, implicit, done, skb, true);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return crypto_aead_decrypt(req);
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
	return ovpn_aead_seal(key->tfm, &ovpn_aead_layout_v2, key->iv, opcode,
			      pktid, done, skb);
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
	return ovpn_aead_open(key->tfm, &ovpn_aead_layout_v2, key->iv, done,
			      skb);
}

/**
 * ovpn_aead_encrypt_epoch - encrypt one packet in the epoch data format
 * @key: the epoch's key to encrypt with
 * @opcode: the first word of the packet (opcode, key id, peer id)
 * @counter: the packet's counter in the epoch, never used before with it
 *	     (1 to OVPN_EPOCH_COUNTER_MAX)
 * @done: the completion, called with @skb if this returns -EINPROGRESS
 * @skb: the plaintext IP packet, skb->data at its IP header; its control
 *	 block holds what the completion needs
 *
 * As ovpn_aead_encrypt(), but the packet becomes header, 64-bit packet id
 * (@key's epoch and @counter), ciphertext and tag; it grows at its end
 * by the tag.
 *
 * Context: softirq or BH disabled.
 * Return: as ovpn_aead_encrypt().
 */
int ovpn_aead_encrypt_epoch(const struct ovpn_aead_epoch_key *key,
			    __be32 opcode, u64 counter,
			    crypto_completion_t done, struct sk_buff *skb)
{
	return ovpn_aead_seal(key->tfm, &ovpn_aead_layout_epoch, key->iv,
			      opcode, ovpn_epoch_pktid(key->epoch, counter),
			      done, skb);
}

/**
 * ovpn_aead_decrypt_epoch - decrypt one packet in the epoch data format
 * @key: the key of the epoch the packet id names
 * @done: the completion, called with @skb if this returns -EINPROGRESS
 * @skb: the packet, skb->data at its first byte (the opcode word); its
 *	 control block holds what the completion needs
 *
 * As ovpn_aead_decrypt(); the tag stays at the end of the packet, for the
 * completion to trim with the header.
 *
 * Context: softirq or BH disabled.
 * Return: as ovpn_aead_decrypt().
 */
int ovpn_aead_decrypt_epoch(const struct ovpn_aead_epoch_key *key,
			    crypto_completion_t done, struct sk_buff *skb)
{
	return ovpn_aead_open(key->tfm, &ovpn_aead_layout_epoch, key->iv, done,
			      skb);
}

/**
 * ovpn_aead_request_free - give back or free a packet's AEAD request
 * @skb: the packet, once its encryption or decryption has ended (or
 *	 failed to start)
 *
 * The crypto layer is done with the request when this runs (it completed
 * or was never started), so a CPU's buffer may go to the next packet.
 *
 * Context: any.
 */
void ovpn_aead_request_free(struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_aead_scratch *scratch;
	struct aead_request *req;
	struct scatterlist *sg;
	int nents, i;

	/* The source pages of an encryption apart: the last entries. */
	if (cb->src_pages) {
		req = cb->crypto_tmp_percpu ?
		      ((struct ovpn_aead_scratch *)cb->crypto_tmp)->buf :
		      cb->crypto_tmp;
		nents = sg_nents(req->src);
		for_each_sg(req->src, sg, nents, i)
			if (i >= nents - cb->src_pages)
				put_page(sg_page(sg));
		cb->src_pages = 0;
	}
	if (cb->crypto_tmp_percpu) {
		scratch = cb->crypto_tmp;
		/*
		 * Pairs with the acquire in ovpn_aead_tmp_get(); only the
		 * owner writes @given (see struct ovpn_aead_scratch).
		 */
		smp_store_release(&scratch->given,
				  READ_ONCE(scratch->given) + 1);
	} else {
		kfree(cb->crypto_tmp);
	}
	cb->crypto_tmp = NULL;
	cb->crypto_tmp_percpu = false;
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
 * nonce and a 16-byte tag, so refuse anything else.  Worth knowing, though
 * correct either way: a transform whose request does not fit a CPU's
 * buffer (see OVPN_AEAD_SCRATCH_SIZE).
 */
static struct crypto_aead *ovpn_aead_tfm_new(enum ovpn_cipher_alg alg,
					     const u8 *key, size_t keylen)
{
	const char *name = ovpn_aead_alg_name(alg, keylen);
	struct crypto_aead *tfm;
	size_t len, sg_off;
	int ret;

	if (!name || !key)
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

	ret = crypto_aead_setkey(tfm, key, keylen);
	if (ret)
		goto free_tfm;

	len = ovpn_aead_tmp_size(tfm, OVPN_AEAD_SCRATCH_NSG, &sg_off);
	if (len > OVPN_AEAD_SCRATCH_SIZE)
		pr_info_once("ovpn: %s needs %zu bytes per request, more than the per-CPU buffer has: packets allocate theirs\n",
			     crypto_aead_driver_name(tfm), len);
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
	struct crypto_aead *tfm;

	if (!kd->nonce_tail)
		return -EINVAL;
	tfm = ovpn_aead_tfm_new(alg, kd->cipher_key, kd->cipher_key_size);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);

	BUILD_BUG_ON(sizeof(key->iv) != OVPN_AEAD_IV_SIZE);
	key->tfm = tfm;
	memset(key->iv, 0, OVPN_PKTID_SIZE);
	memcpy(key->iv + OVPN_PKTID_SIZE, kd->nonce_tail, OVPN_NONCE_TAIL_SIZE);
	return 0;
}

/**
 * ovpn_aead_epoch_key_init - make one epoch of one direction
 * @key: where to make it
 * @alg: the cipher
 * @key_size: the cipher's key size, as the key material without epochs
 *	      would have it
 * @es: the epoch's secret, which gives the key and the IV (epoch.h)
 *
 * Context: process (derives the key and allocates the transform).
 * Return: as ovpn_aead_key_init(); -EINVAL for a key size the derivation
 * cannot give (above 32 bytes).
 */
int ovpn_aead_epoch_key_init(struct ovpn_aead_epoch_key *key,
			     enum ovpn_cipher_alg alg, unsigned int key_size,
			     const struct ovpn_epoch_secret *es)
{
	u8 iv[OVPN_EPOCH_IV_SIZE], cipher_key[OVPN_EPOCH_SECRET_SIZE];
	struct crypto_aead *tfm;
	int ret;

	ret = ovpn_epoch_data_key(es, cipher_key, key_size, iv);
	if (ret)
		return ret;
	tfm = ovpn_aead_tfm_new(alg, cipher_key, key_size);
	memzero_explicit(cipher_key, sizeof(cipher_key));
	if (IS_ERR(tfm)) {
		memzero_explicit(iv, sizeof(iv));
		return PTR_ERR(tfm);
	}

	key->tfm = tfm;
	memcpy(key->iv, iv, sizeof(iv));
	memzero_explicit(iv, sizeof(iv));
	key->epoch = es->epoch;
	return 0;
}

/**
 * ovpn_aead_epoch_key_destroy - free a key made by
 *				 ovpn_aead_epoch_key_init()
 * @key: the key, which no packet uses any more
 *
 * Context: process (crypto_free_aead() may sleep).
 */
void ovpn_aead_epoch_key_destroy(struct ovpn_aead_epoch_key *key)
{
	crypto_free_aead(key->tfm);
	memzero_explicit(key->iv, sizeof(key->iv));
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

/**
 * ovpn_aead_init - allocate every possible CPU's request buffer
 *
 * Context: process (module load).
 * Return: 0 or -ENOMEM.
 */
int __init ovpn_aead_init(void)
{
	struct ovpn_aead_scratch *scratch;
	int cpu;

	for_each_possible_cpu(cpu) {
		scratch = per_cpu_ptr(&ovpn_aead_scratch, cpu);
		scratch->buf = kmalloc_node(OVPN_AEAD_SCRATCH_SIZE, GFP_KERNEL,
					    cpu_to_node(cpu));
		if (!scratch->buf) {
			ovpn_aead_exit();
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * ovpn_aead_exit - free the request buffers
 *
 * Called once no key is left: a packet gives its buffer back before it
 * puts its key slot reference (io.c), and the module's exit waits for
 * every key slot's release, so no request is in flight in any buffer.
 * The buffers are wiped: the last request's context may hold key stream
 * material.
 *
 * Context: process (module load failure or unload).
 */
void ovpn_aead_exit(void)
{
	struct ovpn_aead_scratch *scratch;
	struct page_frag *pf;
	int cpu;

	for_each_possible_cpu(cpu) {
		scratch = per_cpu_ptr(&ovpn_aead_scratch, cpu);
		WARN_ON_ONCE(scratch->taken != scratch->given);
		kfree_sensitive(scratch->buf);
		scratch->buf = NULL;
		/* Packets still queued somewhere hold pages of their own. */
		pf = &per_cpu_ptr(&ovpn_aead_out, cpu)->frag;
		if (pf->page)
			put_page(pf->page);
		pf->page = NULL;
	}
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "aead_kunit.c"
#endif
