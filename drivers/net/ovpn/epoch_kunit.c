// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the epoch key schedule
 *
 * Included by epoch.c when CONFIG_OVPN_KUNIT_TEST is set.  The expected
 * bytes: the Expand-Label vector of openvpn 2.7's own unit tests
 * (crypto_test_ovpn_label_expand in tests/unit_tests/openvpn/
 * test_crypto.c), and for the chain, keys and IVs the formulas of epoch.h
 * computed with Python's hmac module from E1 = 32 bytes of 0x23.
 */

#include <kunit/test.h>

static const u8 ovpn_epoch_test_e1[OVPN_EPOCH_SECRET_SIZE] = {
	[0 ... OVPN_EPOCH_SECRET_SIZE - 1] = 0x23,
};

/* Start from E1 of the vectors below. */
static void ovpn_epoch_test_first(struct ovpn_epoch_secret *es)
{
	es->epoch = OVPN_EPOCH_FIRST;
	memcpy(es->secret, ovpn_epoch_test_e1, sizeof(es->secret));
}

/* openvpn's own vector: the prefix, the lengths, the empty context. */
static void ovpn_epoch_label_openvpn(struct kunit *test)
{
	static const u8 secret[OVPN_EPOCH_SECRET_SIZE] = {
		0x07, 0x77, 0x09, 0x36, 0x2c, 0x2e, 0x32, 0xdf,
		0x0d, 0xdc, 0x3f, 0x0d, 0xc4, 0x7b, 0xba, 0x63,
		0x90, 0xb6, 0xc7, 0x3b, 0xb5, 0x0f, 0x9c, 0x31,
		0x22, 0xec, 0x84, 0x4a, 0xd7, 0xc2, 0xb3, 0xe5,
	};
	static const u8 expected[16] = {
		0x18, 0x5e, 0xaa, 0x1c, 0x7f, 0x22, 0x8a, 0xb8,
		0xeb, 0x29, 0x77, 0x32, 0x14, 0xd9, 0x20, 0x46,
	};
	u8 out[16];

	KUNIT_ASSERT_EQ(test, ovpn_epoch_expand_label(secret, "unit test", out,
						      sizeof(out)), 0);
	KUNIT_EXPECT_MEMEQ(test, out, expected, sizeof(out));
}

/* Lengths: nothing, or more than one HMAC block, is refused. */
static void ovpn_epoch_label_bounds(struct kunit *test)
{
	u8 out[SHA256_DIGEST_SIZE + 1];

	KUNIT_EXPECT_EQ(test, ovpn_epoch_expand_label(ovpn_epoch_test_e1, "x",
						      out, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_expand_label(ovpn_epoch_test_e1, "x",
						      out, sizeof(out)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_expand_label(ovpn_epoch_test_e1, "",
						      out, 16), -EINVAL);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_data_key(&(struct ovpn_epoch_secret){},
						  out, sizeof(out), out),
			-EINVAL);
}

/* E2 and E3 from E1; each step replaces the secret and counts one. */
static void ovpn_epoch_chain(struct kunit *test)
{
	static const u8 e2[OVPN_EPOCH_SECRET_SIZE] = {
		0xf5, 0xd4, 0xff, 0x90, 0xb7, 0xd0, 0x45, 0x9e,
		0x0c, 0x9b, 0x45, 0xa7, 0x9b, 0x9f, 0x57, 0xed,
		0x51, 0x05, 0x29, 0xfd, 0x0e, 0xde, 0x38, 0x63,
		0x02, 0x40, 0xe5, 0xdc, 0xb1, 0xe9, 0xd4, 0x0b,
	};
	static const u8 e3[OVPN_EPOCH_SECRET_SIZE] = {
		0xbe, 0x5d, 0xf2, 0xca, 0x81, 0xf7, 0x87, 0xa7,
		0x72, 0xe8, 0x2c, 0x77, 0xe6, 0x49, 0xa1, 0x72,
		0x40, 0xc5, 0xff, 0x78, 0xed, 0xfa, 0x4a, 0x7b,
		0xa7, 0x36, 0xfe, 0x44, 0x89, 0x2d, 0xf7, 0x00,
	};
	struct ovpn_epoch_secret es;

	ovpn_epoch_test_first(&es);
	KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_EXPECT_EQ(test, es.epoch, 2);
	KUNIT_EXPECT_MEMEQ(test, es.secret, e2, sizeof(e2));
	KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_EXPECT_EQ(test, es.epoch, 3);
	KUNIT_EXPECT_MEMEQ(test, es.secret, e3, sizeof(e3));
}

/* The last epoch has no successor: refused, the secret left as it was. */
static void ovpn_epoch_chain_ends(struct kunit *test)
{
	struct ovpn_epoch_secret es;

	ovpn_epoch_test_first(&es);
	es.epoch = OVPN_EPOCH_LAST - 1;
	KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_EXPECT_EQ(test, es.epoch, OVPN_EPOCH_LAST);

	ovpn_epoch_test_first(&es);
	es.epoch = OVPN_EPOCH_LAST;
	KUNIT_EXPECT_EQ(test, ovpn_epoch_advance(&es), -ERANGE);
	KUNIT_EXPECT_EQ(test, es.epoch, OVPN_EPOCH_LAST);
	KUNIT_EXPECT_MEMEQ(test, es.secret, ovpn_epoch_test_e1,
			   sizeof(es.secret));
}

/*
 * Keys of both sizes and the IV, of epochs 1 and 3.  The output length is
 * part of the label: a 32-byte key does not begin with the 16-byte one.
 */
static void ovpn_epoch_keys(struct kunit *test)
{
	static const u8 key16_e1[16] = {
		0xb5, 0xf2, 0xa8, 0xca, 0x34, 0x70, 0xfb, 0x4c,
		0x4c, 0x81, 0x42, 0xfc, 0xb0, 0xef, 0x52, 0x13,
	};
	static const u8 key32_e1[32] = {
		0x7f, 0x61, 0x56, 0x5e, 0x38, 0x1b, 0x6c, 0xa0,
		0xa9, 0x9b, 0x75, 0xf5, 0xe4, 0x23, 0x35, 0x4f,
		0xa2, 0x0c, 0x08, 0xa6, 0x8d, 0x6d, 0xfc, 0x56,
		0x2e, 0xa1, 0x37, 0xa1, 0x58, 0x3f, 0xe3, 0xeb,
	};
	static const u8 iv_e1[OVPN_EPOCH_IV_SIZE] = {
		0xe3, 0xd7, 0x48, 0xdd, 0x4a, 0xef, 0x8e, 0x1e,
		0x90, 0x7b, 0x56, 0x8b,
	};
	static const u8 key16_e3[16] = {
		0xd3, 0x5e, 0x88, 0x92, 0x74, 0x62, 0x21, 0xa2,
		0x0e, 0xf0, 0x38, 0xb0, 0x58, 0x68, 0x1a, 0xe9,
	};
	static const u8 iv_e3[OVPN_EPOCH_IV_SIZE] = {
		0x6c, 0x51, 0x99, 0x40, 0xea, 0x4f, 0x30, 0xfa,
		0xd5, 0x29, 0xf3, 0x5b,
	};
	u8 iv[OVPN_EPOCH_IV_SIZE], key[32];
	struct ovpn_epoch_secret es;

	ovpn_epoch_test_first(&es);
	KUNIT_ASSERT_EQ(test, ovpn_epoch_data_key(&es, key, 16, iv), 0);
	KUNIT_EXPECT_MEMEQ(test, key, key16_e1, sizeof(key16_e1));
	KUNIT_EXPECT_MEMEQ(test, iv, iv_e1, sizeof(iv_e1));
	KUNIT_ASSERT_EQ(test, ovpn_epoch_data_key(&es, key, 32, iv), 0);
	KUNIT_EXPECT_MEMEQ(test, key, key32_e1, sizeof(key32_e1));
	KUNIT_EXPECT_MEMEQ(test, iv, iv_e1, sizeof(iv_e1));

	KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_ASSERT_EQ(test, ovpn_epoch_advance(&es), 0);
	KUNIT_ASSERT_EQ(test, ovpn_epoch_data_key(&es, key, 16, iv), 0);
	KUNIT_EXPECT_MEMEQ(test, key, key16_e3, sizeof(key16_e3));
	KUNIT_EXPECT_MEMEQ(test, iv, iv_e3, sizeof(iv_e3));
}

/* The packet id: epoch in the top 16 bits, the counter in the rest. */
static void ovpn_epoch_packet_id(struct kunit *test)
{
	u64 id = ovpn_epoch_pktid(0x1234, OVPN_EPOCH_COUNTER_MAX);

	KUNIT_EXPECT_EQ(test, id, 0x1234ffffffffffffULL);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_of(id), 0x1234);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_counter(id), OVPN_EPOCH_COUNTER_MAX);
	KUNIT_EXPECT_EQ(test, ovpn_epoch_pktid(OVPN_EPOCH_FIRST, 1),
			0x0001000000000001ULL);
}

static struct kunit_case ovpn_epoch_test_cases[] = {
	KUNIT_CASE(ovpn_epoch_label_openvpn),
	KUNIT_CASE(ovpn_epoch_label_bounds),
	KUNIT_CASE(ovpn_epoch_chain),
	KUNIT_CASE(ovpn_epoch_chain_ends),
	KUNIT_CASE(ovpn_epoch_keys),
	KUNIT_CASE(ovpn_epoch_packet_id),
	{}
};

static struct kunit_suite ovpn_epoch_suite = {
	.name = "ovpn-epoch",
	.test_cases = ovpn_epoch_test_cases,
};

kunit_test_suite(ovpn_epoch_suite);
