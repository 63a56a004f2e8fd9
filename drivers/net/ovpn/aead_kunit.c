// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the AEAD request buffer
 *
 * Included by aead.c when CONFIG_OVPN_KUNIT_TEST is set, so that the tests
 * see which buffer a packet got.  They run real transforms of both
 * ciphers, as the data path would: a packet takes this CPU's buffer, a
 * second one started while the first still holds it (as when an
 * asynchronous AEAD keeps it) allocates its own, and so does a packet
 * whose scatterlist does not fit; every packet decrypts to what was
 * encrypted, whichever buffer either side used.  Known packets of both
 * formats come out of plaintext that is linear and of plaintext in page
 * fragments (encrypted apart), which leaves those pages as they were.
 * BH is disabled around
 * the calls, as on the data path, which keeps the test on one CPU.
 * A transform that completes asynchronously skips the test: the order of
 * the steps is what it checks.
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>

#define OVPN_AEAD_TEST_LEN	200
/* A frag_list of this many skbs needs more room than a CPU's buffer. */
#define OVPN_AEAD_TEST_FRAGS	(OVPN_AEAD_SCRATCH_SIZE / \
				 sizeof(struct scatterlist))

static const u8 ovpn_aead_test_key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const u8 ovpn_aead_test_tail[OVPN_NONCE_TAIL_SIZE] = { 0xa5, 0x5a };

static void ovpn_aead_test_done(void *data, int err)
{
}

static void ovpn_aead_test_fill(u8 *buf, unsigned int len, u8 seed)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i;
}

/* A linear packet of @len bytes, with the headroom the data path has. */
static struct sk_buff *ovpn_aead_test_skb(struct kunit *test,
					  unsigned int len, u8 seed)
{
	struct sk_buff *skb;

	skb = alloc_skb(OVPN_HEAD_ROOM + len + OVPN_TAIL_ROOM, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, OVPN_HEAD_ROOM);
	ovpn_aead_test_fill(skb_put(skb, len), len, seed);
	return skb;
}

/* A packet of one byte in its head and @n more skbs of one byte each. */
static struct sk_buff *ovpn_aead_test_frag_list(struct kunit *test,
						unsigned int n, u8 seed)
{
	struct sk_buff *skb = ovpn_aead_test_skb(test, 1, seed);
	struct sk_buff **last = &skb_shinfo(skb)->frag_list;
	struct sk_buff *frag;
	unsigned int i;

	for (i = 0; i < n; i++) {
		frag = alloc_skb(1, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, frag);
		skb_put_u8(frag, seed + 1 + i);
		*last = frag;
		last = &frag->next;
		skb->len += 1;
		skb->data_len += 1;
		skb->truesize += frag->truesize;
	}
	return skb;
}

/*
 * A packet of @len bytes (at least 6) as a TCP segment is made: 3 bytes
 * in its head and the rest in two fragments of *@page, which the caller
 * holds a reference to besides the packet's two.  Bytes of the page
 * outside the fragments are 0xee.
 */
static struct sk_buff *ovpn_aead_test_paged(struct kunit *test,
					    unsigned int len, u8 seed,
					    struct page **page)
{
	struct sk_buff *skb = ovpn_aead_test_skb(test, 3, seed);
	unsigned int first = (len - 3) / 2, second = len - 3 - first;
	u8 *p;

	*page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *page);
	p = page_address(*page);
	memset(p, 0xee, PAGE_SIZE);
	ovpn_aead_test_fill(p + 100, first, seed + 3);
	ovpn_aead_test_fill(p + 1000, second, seed + 3 + first);
	get_page(*page);
	skb_add_rx_frag(skb, 0, *page, 100, first, first);
	get_page(*page);
	skb_add_rx_frag(skb, 1, *page, 1000, second, second);
	return skb;
}

/*
 * Encrypt @skb as packet @pktid, with BH disabled by the caller; the
 * caller frees the request and checks the result once BH is enabled.
 */
static int ovpn_aead_test_encrypt(const struct ovpn_aead_key *key,
				  struct sk_buff *skb, u32 pktid)
{
	__be32 opcode = ovpn_opcode_compose(OVPN_OPCODE_DATA_V2, 0, 1);

	memset(ovpn_skb_cb(skb), 0, sizeof(struct ovpn_cb));
	return ovpn_aead_encrypt(key, opcode, pktid, ovpn_aead_test_done, skb);
}

static void ovpn_aead_test_check(struct kunit *test, int ret)
{
	if (ret == -EINPROGRESS)
		kunit_skip(test, "asynchronous AEAD");
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/*
 * Decrypt @skb and check it against what ovpn_aead_test_skb() or
 * ovpn_aead_test_frag_list() made with @seed.
 */
static void ovpn_aead_test_decrypt(struct kunit *test,
				   const struct ovpn_aead_key *key,
				   struct sk_buff *skb, u8 seed)
{
	unsigned int len = skb->len - OVPN_DATA_OVERHEAD;
	u8 *want, *got;
	int ret;

	want = kunit_kmalloc(test, len, GFP_KERNEL);
	got = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);

	memset(ovpn_skb_cb(skb), 0, sizeof(struct ovpn_cb));
	local_bh_disable();
	ret = ovpn_aead_decrypt(key, ovpn_aead_test_done, skb);
	ovpn_aead_request_free(skb);
	local_bh_enable();
	ovpn_aead_test_check(test, ret);

	ovpn_aead_test_fill(want, len, seed);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, OVPN_DATA_OVERHEAD, got, len),
			0);
	KUNIT_EXPECT_MEMEQ(test, got, want, len);
}

static void ovpn_aead_test_key_init(struct kunit *test,
				    struct ovpn_aead_key *key,
				    enum ovpn_cipher_alg alg)
{
	const struct ovpn_key_direction kd = {
		.cipher_key = ovpn_aead_test_key,
		.cipher_key_size = sizeof(ovpn_aead_test_key),
		.nonce_tail = ovpn_aead_test_tail,
	};

	if (!this_cpu_read(ovpn_aead_scratch.buf))
		kunit_skip(test, "no request buffers: module not initialised");
	KUNIT_ASSERT_EQ(test, ovpn_aead_key_init(key, alg, &kd), 0);
}

/*
 * Two packets at once on one CPU: the first takes the buffer, the second
 * allocates; once both are done, the buffer is free again.  A packet that
 * does not authenticate gives it back too.
 */
static void ovpn_aead_scratch_busy(struct kunit *test)
{
	const enum ovpn_cipher_alg *alg = test->param_value;
	struct sk_buff *first, *second, *third;
	struct ovpn_aead_key key;
	bool percpu[3], free;
	void *own;
	int ret[3];

	ovpn_aead_test_key_init(test, &key, *alg);
	first = ovpn_aead_test_skb(test, OVPN_AEAD_TEST_LEN, 1);
	second = ovpn_aead_test_skb(test, OVPN_AEAD_TEST_LEN, 2);
	third = ovpn_aead_test_skb(test, OVPN_AEAD_TEST_LEN, 3);

	local_bh_disable();
	ret[0] = ovpn_aead_test_encrypt(&key, first, 1);
	ret[1] = ovpn_aead_test_encrypt(&key, second, 2);
	percpu[0] = ovpn_skb_cb(first)->crypto_tmp_percpu;
	percpu[1] = ovpn_skb_cb(second)->crypto_tmp_percpu;
	own = ovpn_skb_cb(second)->crypto_tmp;
	ovpn_aead_request_free(first);
	ovpn_aead_request_free(second);
	ret[2] = ovpn_aead_test_encrypt(&key, third, 3);
	percpu[2] = ovpn_skb_cb(third)->crypto_tmp_percpu;
	ovpn_aead_request_free(third);
	local_bh_enable();

	ovpn_aead_test_check(test, ret[0]);
	ovpn_aead_test_check(test, ret[1]);
	ovpn_aead_test_check(test, ret[2]);
	KUNIT_EXPECT_TRUE(test, percpu[0]);
	KUNIT_EXPECT_FALSE(test, percpu[1]);
	KUNIT_EXPECT_NOT_NULL(test, own);
	KUNIT_EXPECT_TRUE(test, percpu[2]);
	KUNIT_EXPECT_NULL(test, ovpn_skb_cb(first)->crypto_tmp);
	KUNIT_EXPECT_FALSE(test, ovpn_skb_cb(first)->crypto_tmp_percpu);

	ovpn_aead_test_decrypt(test, &key, first, 1);
	ovpn_aead_test_decrypt(test, &key, second, 2);

	/* A forgery is refused, and the buffer is given back. */
	third->data[OVPN_DATA_OVERHEAD + OVPN_AEAD_TEST_LEN / 2] ^= 1;
	memset(ovpn_skb_cb(third), 0, sizeof(struct ovpn_cb));
	local_bh_disable();
	ret[0] = ovpn_aead_decrypt(&key, ovpn_aead_test_done, third);
	percpu[0] = ovpn_skb_cb(third)->crypto_tmp_percpu;
	ovpn_aead_request_free(third);
	free = this_cpu_read(ovpn_aead_scratch.taken) ==
	       this_cpu_read(ovpn_aead_scratch.given);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, ret[0], -EBADMSG);
	KUNIT_EXPECT_TRUE(test, percpu[0]);
	KUNIT_EXPECT_TRUE(test, free);

	kfree_skb(first);
	kfree_skb(second);
	kfree_skb(third);
	ovpn_aead_key_destroy(&key);
}

/* A packet whose scatterlist does not fit the buffer allocates. */
static void ovpn_aead_scratch_too_small(struct kunit *test)
{
	const enum ovpn_cipher_alg *alg = test->param_value;
	struct ovpn_aead_key key;
	bool percpu, free;
	struct sk_buff *skb;
	void *own;
	int ret;

	ovpn_aead_test_key_init(test, &key, *alg);
	skb = ovpn_aead_test_frag_list(test, OVPN_AEAD_TEST_FRAGS, 7);

	local_bh_disable();
	ret = ovpn_aead_test_encrypt(&key, skb, 1);
	percpu = ovpn_skb_cb(skb)->crypto_tmp_percpu;
	own = ovpn_skb_cb(skb)->crypto_tmp;
	ovpn_aead_request_free(skb);
	free = this_cpu_read(ovpn_aead_scratch.taken) ==
	       this_cpu_read(ovpn_aead_scratch.given);
	local_bh_enable();

	ovpn_aead_test_check(test, ret);
	KUNIT_EXPECT_FALSE(test, percpu);
	KUNIT_EXPECT_NOT_NULL(test, own);
	KUNIT_EXPECT_TRUE(test, free);

	ovpn_aead_test_decrypt(test, &key, skb, 7);

	kfree_skb(skb);
	ovpn_aead_key_destroy(&key);
}

/*
 * Packets as the wire has them, made by an independent implementation
 * (Python's hmac and cryptography modules, from the formulas of proto.h
 * and epoch.h): the 20 bytes ovpn_aead_test_fill() makes with seed 0x10,
 * sent by peer 1 under key id 0.
 */
struct ovpn_aead_test_wire {
	const char *name;
	enum ovpn_cipher_alg alg;
	unsigned int key_size;
	/* 0: DATA_V2 with ovpn_aead_test_key and _tail, else this epoch */
	u16 epoch;
	u64 pktid;
	const u8 *packet;
	unsigned int len;
};

#define OVPN_AEAD_TEST_WIRE_LEN	20

/* Epoch @epoch of the chain that starts from E1 = 32 bytes of 0x23. */
static void ovpn_aead_test_epoch_key(struct kunit *test,
				     struct ovpn_aead_epoch_key *key,
				     const struct ovpn_aead_test_wire *w)
{
	struct ovpn_epoch_secret es = { .epoch = OVPN_EPOCH_FIRST };

	memset(es.secret, 0x23, sizeof(es.secret));
	while (es.epoch < w->epoch)
		KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_ASSERT_EQ(test, ovpn_aead_epoch_key_init(key, w->alg,
						       w->key_size, &es), 0);
}

/*
 * Encrypt @skb as the @counter-th packet of @key's epoch, or decrypt it,
 * with BH disabled as on the data path; the request is freed.
 */
static int ovpn_aead_test_epoch_op(const struct ovpn_aead_epoch_key *key,
				   struct sk_buff *skb, u64 counter,
				   bool encrypt)
{
	__be32 opcode = ovpn_opcode_compose(OVPN_OPCODE_DATA_V2, 0, 1);
	int ret;

	memset(ovpn_skb_cb(skb), 0, sizeof(struct ovpn_cb));
	local_bh_disable();
	if (encrypt)
		ret = ovpn_aead_encrypt_epoch(key, opcode, counter,
					      ovpn_aead_test_done, skb);
	else
		ret = ovpn_aead_decrypt_epoch(key, ovpn_aead_test_done, skb);
	ovpn_aead_request_free(skb);
	local_bh_enable();
	return ret;
}

/*
 * What an encryption apart must leave of ovpn_aead_test_paged()'s packet:
 * the ciphertext in one new fragment, the old fragments' page untouched
 * and held by its caller alone.
 */
static void ovpn_aead_test_apart(struct kunit *test, struct sk_buff *skb,
				 struct page *page, unsigned int n, u8 seed)
{
	unsigned int first = (n - 3) / 2, second = n - 3 - first;
	u8 want[OVPN_AEAD_TEST_WIRE_LEN];
	const u8 *p = page_address(page);

	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 1);
	KUNIT_EXPECT_TRUE(test, skb_frag_page(&skb_shinfo(skb)->frags[0]) !=
			  page);
	KUNIT_EXPECT_EQ(test, ovpn_skb_cb(skb)->src_pages, 0);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	ovpn_aead_test_fill(want, n, seed);
	KUNIT_EXPECT_MEMEQ(test, p + 100, want + 3, first);
	KUNIT_EXPECT_MEMEQ(test, p + 1000, want + 3 + first, second);
	KUNIT_EXPECT_EQ(test, p[99], 0xee);
	KUNIT_EXPECT_EQ(test, p[100 + first], 0xee);
	KUNIT_EXPECT_EQ(test, p[1000 + second], 0xee);
}

/* Decrypt @skb with the key of @w's format, @key or @ekey. */
static int ovpn_aead_test_wire_open(const struct ovpn_aead_test_wire *w,
				    const struct ovpn_aead_key *key,
				    const struct ovpn_aead_epoch_key *ekey,
				    struct sk_buff *skb)
{
	int ret;

	if (w->epoch)
		return ovpn_aead_test_epoch_op(ekey, skb, 0, false);
	memset(ovpn_skb_cb(skb), 0, sizeof(struct ovpn_cb));
	local_bh_disable();
	ret = ovpn_aead_decrypt(key, ovpn_aead_test_done, skb);
	ovpn_aead_request_free(skb);
	local_bh_enable();
	return ret;
}

/*
 * Encrypt the plaintext, linear or @paged (encrypted apart, see aead.c),
 * and compare with the packet; a paged one is then decrypted in its
 * fragment, not copied out of it.  Decrypt the packet, and refuse it with
 * its last byte (the tag of an epoch packet) changed.
 */
static void ovpn_aead_test_wire_run(struct kunit *test,
				    const struct ovpn_aead_test_wire *w,
				    bool paged)
{
	unsigned int off, n = OVPN_AEAD_TEST_WIRE_LEN;
	u8 got[64], want[OVPN_AEAD_TEST_WIRE_LEN];
	struct ovpn_aead_epoch_key ekey = {};
	struct ovpn_aead_key key = {};
	struct page *page = NULL;
	struct sk_buff *skb;
	int ret, forged;

	if (!this_cpu_read(ovpn_aead_scratch.buf))
		kunit_skip(test, "no request buffers: module not initialised");
	KUNIT_ASSERT_LE(test, w->len, sizeof(got));
	if (w->epoch) {
		ovpn_aead_test_epoch_key(test, &ekey, w);
	} else {
		const struct ovpn_key_direction kd = {
			.cipher_key = ovpn_aead_test_key,
			.cipher_key_size = w->key_size,
			.nonce_tail = ovpn_aead_test_tail,
		};

		KUNIT_ASSERT_EQ(test, ovpn_aead_key_init(&key, w->alg, &kd), 0);
	}
	off = w->epoch ? OVPN_EPOCH_HEAD_SIZE : OVPN_DATA_OVERHEAD;

	if (paged)
		skb = ovpn_aead_test_paged(test, n, 0x10, &page);
	else
		skb = ovpn_aead_test_skb(test, n, 0x10);
	if (w->epoch) {
		ret = ovpn_aead_test_epoch_op(&ekey, skb,
					      ovpn_epoch_counter(w->pktid),
					      true);
	} else {
		local_bh_disable();
		ret = ovpn_aead_test_encrypt(&key, skb, w->pktid);
		ovpn_aead_request_free(skb);
		local_bh_enable();
	}
	ovpn_aead_test_check(test, ret);
	KUNIT_EXPECT_EQ(test, ovpn_skb_cb(skb)->payload_offset, off);
	KUNIT_ASSERT_EQ(test, skb->len, w->len);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, 0, got, w->len), 0);
	KUNIT_EXPECT_MEMEQ(test, got, w->packet, w->len);
	if (page) {
		struct page *out = skb_frag_page(&skb_shinfo(skb)->frags[0]);

		ovpn_aead_test_apart(test, skb, page, n, 0x10);
		put_page(page);
		ret = ovpn_aead_test_wire_open(w, &key, &ekey, skb);
		ovpn_aead_test_check(test, ret);
		KUNIT_EXPECT_EQ(test, skb_headlen(skb), off);
		KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 1);
		KUNIT_EXPECT_TRUE(test,
				  skb_frag_page(&skb_shinfo(skb)->frags[0]) ==
				  out);
		ovpn_aead_test_fill(want, n, 0x10);
		KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, off, got, n), 0);
		KUNIT_EXPECT_MEMEQ(test, got, want, n);
	}
	kfree_skb(skb);

	for (forged = 0; forged < 2; forged++) {
		skb = alloc_skb(w->len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_data(skb, w->packet, w->len);
		skb->data[w->len - 1] ^= forged;
		ret = ovpn_aead_test_wire_open(w, &key, &ekey, skb);
		if (ret == -EINPROGRESS)
			kunit_skip(test, "asynchronous AEAD");
		KUNIT_EXPECT_EQ(test, ret, forged ? -EBADMSG : 0);
		if (!forged) {
			ovpn_aead_test_fill(want, n, 0x10);
			KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, off, got, n),
					0);
			KUNIT_EXPECT_MEMEQ(test, got, want, n);
		}
		kfree_skb(skb);
	}

	if (w->epoch)
		ovpn_aead_epoch_key_destroy(&ekey);
	else
		ovpn_aead_key_destroy(&key);
}

static void ovpn_aead_wire(struct kunit *test)
{
	static const u8 v2[] = {
		0x48, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
		0x4a, 0xbc, 0x5e, 0xc0, 0x34, 0x6c, 0x2a, 0x16,
		0x0a, 0xf5, 0xef, 0x14, 0x3e, 0xfa, 0x65, 0xde,
		0xa4, 0x42, 0x89, 0x9c, 0xb5, 0x76, 0x91, 0x90,
		0x43, 0x3d, 0x20, 0x57, 0xe6, 0x62, 0x8d, 0x54,
		0x42, 0x69, 0x1c, 0x2f,
	};
	static const u8 epoch_gcm[] = {
		0x48, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01, 0xd2, 0x36, 0x57, 0x1f,
		0x2b, 0xac, 0x9e, 0x7b, 0x60, 0xbe, 0xc7, 0xa4,
		0x6c, 0x53, 0x22, 0x64, 0xa7, 0x48, 0xb4, 0x61,
		0x52, 0x86, 0x49, 0xfc, 0xc2, 0xcd, 0x66, 0x7d,
		0xcb, 0xc7, 0xd8, 0xed, 0x6f, 0x01, 0x56, 0xca,
	};
	static const u8 epoch_chacha[] = {
		0x48, 0x00, 0x00, 0x01, 0x00, 0x03, 0x12, 0x34,
		0x56, 0x78, 0x9a, 0xbc, 0x9c, 0x69, 0xd2, 0x6c,
		0x39, 0xd0, 0x59, 0x1f, 0x93, 0x4b, 0x3e, 0x34,
		0x71, 0x5c, 0xe8, 0x0d, 0xef, 0x9c, 0x60, 0x49,
		0x73, 0xb6, 0x4d, 0x9e, 0x9c, 0x92, 0x34, 0xd6,
		0xdb, 0xdb, 0x3d, 0x6b, 0xa6, 0xe8, 0xe0, 0xcc,
	};
	const struct ovpn_aead_test_wire wires[] = {
		{ "DATA_V2, AES-128-GCM, packet id 1",
		  OVPN_CIPHER_ALG_AES_GCM, 16, 0, 1, v2, sizeof(v2) },
		{ "epoch 1, AES-128-GCM, counter 1",
		  OVPN_CIPHER_ALG_AES_GCM, 16, 1, 0x0001000000000001ULL,
		  epoch_gcm, sizeof(epoch_gcm) },
		{ "epoch 3, ChaCha20-Poly1305, counter 0x123456789abc",
		  OVPN_CIPHER_ALG_CHACHA20_POLY1305, 32, 3,
		  0x0003123456789abcULL, epoch_chacha, sizeof(epoch_chacha) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wires); i++) {
		kunit_info(test, "%s\n", wires[i].name);
		ovpn_aead_test_wire_run(test, &wires[i], false);
		kunit_info(test, "%s, paged\n", wires[i].name);
		ovpn_aead_test_wire_run(test, &wires[i], true);
	}
}

/*
 * An epoch packet whose plaintext is spread over a frag_list: the tag
 * goes after the last fragment, and the packet decrypts back.
 */
static void ovpn_aead_epoch_frags(struct kunit *test)
{
	const enum ovpn_cipher_alg *alg = test->param_value;
	const struct ovpn_aead_test_wire w = {
		.alg = *alg, .key_size = 32, .epoch = 2,
	};
	struct ovpn_aead_epoch_key key;
	u8 got[8], want[8];
	struct sk_buff *skb;
	int ret;

	if (!this_cpu_read(ovpn_aead_scratch.buf))
		kunit_skip(test, "no request buffers: module not initialised");
	ovpn_aead_test_epoch_key(test, &key, &w);
	skb = ovpn_aead_test_frag_list(test, 7, 0x40);

	ret = ovpn_aead_test_epoch_op(&key, skb, 5, true);
	ovpn_aead_test_check(test, ret);
	KUNIT_ASSERT_EQ(test, skb->len, OVPN_EPOCH_DATA_OVERHEAD + 8);

	ret = ovpn_aead_test_epoch_op(&key, skb, 0, false);
	ovpn_aead_test_check(test, ret);
	ovpn_aead_test_fill(want, sizeof(want), 0x40);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, OVPN_EPOCH_HEAD_SIZE, got,
					    sizeof(got)), 0);
	KUNIT_EXPECT_MEMEQ(test, got, want, sizeof(got));

	kfree_skb(skb);
	ovpn_aead_epoch_key_destroy(&key);
}

static const enum ovpn_cipher_alg ovpn_aead_test_algs[] = {
	OVPN_CIPHER_ALG_AES_GCM,
	OVPN_CIPHER_ALG_CHACHA20_POLY1305,
};

static void ovpn_aead_test_alg_desc(const enum ovpn_cipher_alg *alg,
				    char *desc)
{
	strscpy(desc, *alg == OVPN_CIPHER_ALG_AES_GCM ? "aes-gcm" :
		"chacha20-poly1305", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ovpn_aead_test_alg, ovpn_aead_test_algs,
		  ovpn_aead_test_alg_desc);

static struct kunit_case ovpn_aead_cases[] = {
	KUNIT_CASE_PARAM(ovpn_aead_scratch_busy, ovpn_aead_test_alg_gen_params),
	KUNIT_CASE_PARAM(ovpn_aead_scratch_too_small,
			 ovpn_aead_test_alg_gen_params),
	KUNIT_CASE(ovpn_aead_wire),
	KUNIT_CASE_PARAM(ovpn_aead_epoch_frags, ovpn_aead_test_alg_gen_params),
	{}
};

static struct kunit_suite ovpn_aead_suite = {
	.name = "ovpn-aead",
	.test_cases = ovpn_aead_cases,
};

kunit_test_suite(ovpn_aead_suite);
