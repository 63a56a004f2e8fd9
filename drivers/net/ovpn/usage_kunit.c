// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the AEAD usage limit
 *
 * Included by usage.c when CONFIG_OVPN_KUNIT_TEST is set.  Pure logic:
 * an account is opened as a key slot opens it, moved next to a threshold
 * with percpu_counter_set() (no traffic reaches 2^36 blocks), and fed
 * packets through ovpn_usage_add() as the data path feeds it.  Run with
 *   tools/testing/kunit/kunit.py run --kunitconfig=drivers/net/ovpn
 */

#include <kunit/test.h>

#define OVPN_TEST_LIMIT	OVPN_USAGE_LIMIT_AES_GCM
#define OVPN_TEST_RENEG	OVPN_USAGE_RENEG(OVPN_USAGE_LIMIT_AES_GCM)

static void ovpn_usage_test_exit(void *usage)
{
	ovpn_usage_destroy(usage);
}

/* An AES-GCM account, closed when the test ends. */
static struct ovpn_usage *ovpn_usage_test_open(struct kunit *test,
					       bool enforce)
{
	struct ovpn_usage *usage;

	usage = kunit_kzalloc(test, sizeof(*usage), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, usage);
	KUNIT_ASSERT_EQ(test, ovpn_usage_init(usage, OVPN_CIPHER_ALG_AES_GCM,
					      enforce), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							ovpn_usage_test_exit,
							usage), 0);
	return usage;
}

/* openvpn 2.7's numbers for AES-GCM; nothing at all for ChaCha20. */
static void ovpn_usage_thresholds(struct kunit *test)
{
	struct ovpn_usage *gcm = ovpn_usage_test_open(test, true);
	struct ovpn_usage chacha = {};

	/* 2^36 - 1, and (2^36 - 1) / 8 * 7 in integers. */
	KUNIT_EXPECT_EQ(test, OVPN_TEST_LIMIT, 68719476735ULL);
	KUNIT_EXPECT_EQ(test, OVPN_TEST_RENEG, 60129542137ULL);
	KUNIT_EXPECT_TRUE(test, test_bit(OVPN_USAGE_COUNTING, &gcm->flags));

	KUNIT_ASSERT_EQ(test, ovpn_usage_init(&chacha,
					      OVPN_CIPHER_ALG_CHACHA20_POLY1305,
					      true), 0);
	KUNIT_EXPECT_FALSE(test, test_bit(OVPN_USAGE_COUNTING, &chacha.flags));
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(&chacha, 1500, U32_MAX),
			OVPN_USAGE_OK);
	ovpn_usage_destroy(&chacha);
}

/* Plaintext counts in whole 16-byte blocks, rounded up per packet. */
static void ovpn_usage_blocks_rounded(struct kunit *test)
{
	const unsigned int lens[] = { 0, 1, 16, 17, 1500, 65535 };
	struct ovpn_usage *usage = ovpn_usage_test_open(test, true);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++)
		KUNIT_ASSERT_EQ(test, ovpn_usage_add(usage, lens[i], i + 1),
				OVPN_USAGE_OK);
	/* 0 + 1 + 1 + 2 + 94 + 4096 */
	KUNIT_EXPECT_EQ(test, percpu_counter_sum(&usage->blocks), 4194);
}

/*
 * openvpn renegotiates once q + s > threshold: the packet that makes it
 * 2 past says so, the one that makes it exactly equal does not, and the
 * next ones are quiet.
 */
static void ovpn_usage_reneg_once(struct kunit *test)
{
	struct ovpn_usage *usage = ovpn_usage_test_open(test, true);
	const u64 start = OVPN_TEST_RENEG - 1000;

	percpu_counter_set(&usage->blocks, start);
	/* 10 blocks, id 1: 989 below */
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(usage, 160, 1), OVPN_USAGE_OK);
	/* no block, id 990: q + s is the threshold itself */
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(usage, 0, 990), OVPN_USAGE_OK);
	/* 1 block, id 991: 2 past it */
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(usage, 1, 991), OVPN_USAGE_RENEG);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(usage, 1, 992), OVPN_USAGE_OK);
	KUNIT_EXPECT_EQ(test, usage->trigger,
			ovpn_usage_trigger(OVPN_TEST_LIMIT));
}

/*
 * The sending side refuses every packet once q + s > limit; the receiving
 * side says "renegotiate" once and never refuses.
 */
static void ovpn_usage_spent(struct kunit *test)
{
	struct ovpn_usage *xmit = ovpn_usage_test_open(test, true);
	struct ovpn_usage *recv = ovpn_usage_test_open(test, false);

	percpu_counter_set(&xmit->blocks, OVPN_TEST_LIMIT - 10);
	/* 5 blocks, id 5: exactly the limit, past the threshold */
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(xmit, 80, 5), OVPN_USAGE_RENEG);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(xmit, 16, 6), OVPN_USAGE_SPENT);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(xmit, 0, 7), OVPN_USAGE_SPENT);

	percpu_counter_set(&recv->blocks, OVPN_TEST_LIMIT - 10);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(recv, 80, 5), OVPN_USAGE_RENEG);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(recv, 16, 6), OVPN_USAGE_OK);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(recv, 1500, 7), OVPN_USAGE_OK);
	KUNIT_EXPECT_EQ(test, recv->trigger, U64_MAX);
}

/*
 * Blocks still in a CPU's own count are invisible to the cheap bound's
 * shared part: the slack must cover them, so that the threshold is met
 * at the same packet as with every block folded.
 */
static void ovpn_usage_unfolded_blocks(struct kunit *test)
{
	struct ovpn_usage *usage = ovpn_usage_test_open(test, true);
	int i;

	percpu_counter_set(&usage->blocks, OVPN_TEST_RENEG - 100);
	/* 10 packets of 9 blocks, ids 1-10: q + s ends at the threshold */
	for (i = 1; i <= 10; i++)
		KUNIT_ASSERT_EQ(test, ovpn_usage_add(usage, 129, i),
				OVPN_USAGE_OK);
	KUNIT_EXPECT_EQ(test, ovpn_usage_add(usage, 1, 11), OVPN_USAGE_RENEG);
}

/*
 * Failed verifications: openvpn renegotiates once there are more than
 * 2^35 and refuses to decrypt once there are more than 2^36; said once,
 * by the failure that passes the threshold.
 */
static void ovpn_usage_forgeries(struct kunit *test)
{
	atomic64_t forged;

	KUNIT_EXPECT_EQ(test, OVPN_USAGE_FORGED_RENEG, 34359738368ULL);
	KUNIT_EXPECT_EQ(test, OVPN_USAGE_FORGED_LIMIT, 68719476736ULL);

	atomic64_set(&forged, OVPN_USAGE_FORGED_RENEG - 1);
	/* the threshold itself is not past it */
	KUNIT_EXPECT_EQ(test, ovpn_usage_forged(&forged), OVPN_USAGE_OK);
	KUNIT_EXPECT_EQ(test, ovpn_usage_forged(&forged), OVPN_USAGE_RENEG);
	KUNIT_EXPECT_EQ(test, ovpn_usage_forged(&forged), OVPN_USAGE_OK);
	KUNIT_EXPECT_FALSE(test, ovpn_usage_forged_spent(&forged));

	atomic64_set(&forged, OVPN_USAGE_FORGED_LIMIT - 1);
	KUNIT_EXPECT_EQ(test, ovpn_usage_forged(&forged), OVPN_USAGE_OK);
	KUNIT_EXPECT_FALSE(test, ovpn_usage_forged_spent(&forged));
	KUNIT_EXPECT_EQ(test, ovpn_usage_forged(&forged), OVPN_USAGE_OK);
	KUNIT_EXPECT_TRUE(test, ovpn_usage_forged_spent(&forged));
}

static struct kunit_case ovpn_usage_cases[] = {
	KUNIT_CASE(ovpn_usage_thresholds),
	KUNIT_CASE(ovpn_usage_blocks_rounded),
	KUNIT_CASE(ovpn_usage_reneg_once),
	KUNIT_CASE(ovpn_usage_spent),
	KUNIT_CASE(ovpn_usage_unfolded_blocks),
	KUNIT_CASE(ovpn_usage_forgeries),
	{}
};

static struct kunit_suite ovpn_usage_suite = {
	.name = "ovpn-usage",
	.test_cases = ovpn_usage_cases,
};

kunit_test_suite(ovpn_usage_suite);
