// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the per-flow record queue
 *
 * Included by flowq.c when CONFIG_OVPN_KUNIT_TEST is set.  Records are
 * plain skbs of a chosen length, told apart by their mark.  Run with
 *   tools/testing/kunit/kunit.py run --kunitconfig=drivers/net/ovpn
 */

#include <kunit/test.h>

/* A hash whose shared slot is slot 5 (reciprocal_scale() picks it). */
#define OVPN_TEST_HASH_HOME5	((u32)((5ULL << 32) / OVPN_FLOWQ_SLOTS))

static void ovpn_flowq_test_exit(void *fq)
{
	ovpn_flowq_purge(fq);
}

/* An empty queue, purged when the test ends. */
static struct ovpn_flowq *ovpn_flowq_test_new(struct kunit *test)
{
	struct ovpn_flowq *fq;

	fq = kunit_kzalloc(test, sizeof(*fq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fq);
	ovpn_flowq_init(fq);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							ovpn_flowq_test_exit,
							fq), 0);
	return fq;
}

/* Queue a record of @len bytes, marked @id, for the flow @hash. */
static void ovpn_flowq_test_add(struct kunit *test, struct ovpn_flowq *fq,
				u32 hash, u32 id, unsigned int len)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put(skb, len);
	skb->mark = id;
	ovpn_flowq_enqueue(fq, skb, hash);
}

/* The mark of the record @skb, which is freed; 0 for none. */
static u32 ovpn_flowq_test_id(struct sk_buff *skb)
{
	u32 id = skb ? skb->mark : 0;

	kfree_skb(skb);
	return id;
}

/* Three flows take turns, a record each, each in its own order. */
static void ovpn_flowq_turns(struct kunit *test)
{
	static const u32 want[] = { 11, 21, 31, 12, 22, 13 };
	struct ovpn_flowq *fq = ovpn_flowq_test_new(test);
	unsigned int i;

	ovpn_flowq_test_add(test, fq, 1, 11, 1400);
	ovpn_flowq_test_add(test, fq, 1, 12, 1400);
	ovpn_flowq_test_add(test, fq, 1, 13, 1400);
	ovpn_flowq_test_add(test, fq, 2, 21, 1400);
	ovpn_flowq_test_add(test, fq, 2, 22, 1400);
	ovpn_flowq_test_add(test, fq, 3, 31, 100);
	KUNIT_EXPECT_EQ(test, fq->len, 6);
	KUNIT_EXPECT_EQ(test, fq->bytes, 5 * 1400 + 100);

	for (i = 0; i < ARRAY_SIZE(want); i++)
		KUNIT_EXPECT_EQ(test,
				ovpn_flowq_test_id(ovpn_flowq_dequeue(fq)),
				want[i]);
	KUNIT_EXPECT_NULL(test, ovpn_flowq_dequeue(fq));
	KUNIT_EXPECT_EQ(test, fq->len, 0);
	KUNIT_EXPECT_EQ(test, fq->bytes, 0);
}

/* The flow holding the most bytes loses its oldest record, not a count. */
static void ovpn_flowq_fattest(struct kunit *test)
{
	struct ovpn_flowq *fq = ovpn_flowq_test_new(test);

	ovpn_flowq_test_add(test, fq, 1, 11, 100);
	ovpn_flowq_test_add(test, fq, 1, 12, 100);
	ovpn_flowq_test_add(test, fq, 1, 13, 100);
	ovpn_flowq_test_add(test, fq, 2, 21, 1000);

	KUNIT_EXPECT_EQ(test, ovpn_flowq_test_id(ovpn_flowq_drop_fattest(fq)),
			21);
	KUNIT_EXPECT_EQ(test, ovpn_flowq_test_id(ovpn_flowq_drop_fattest(fq)),
			11);
	KUNIT_EXPECT_EQ(test, fq->len, 2);
	KUNIT_EXPECT_EQ(test, fq->bytes, 200);
	KUNIT_EXPECT_EQ(test, ovpn_flowq_test_id(ovpn_flowq_dequeue(fq)), 12);
	KUNIT_EXPECT_EQ(test, ovpn_flowq_test_id(ovpn_flowq_drop_fattest(fq)),
			13);
	KUNIT_EXPECT_NULL(test, ovpn_flowq_drop_fattest(fq));
}

/*
 * With every slot taken, a flow shares the slot its hash picks, and stays
 * there while it has records in it, though a slot frees meanwhile: its
 * records leave in order.  Once the shared slot is empty, the flow takes
 * a free slot of its own again.
 */
static void ovpn_flowq_shared_in_order(struct kunit *test)
{
	struct ovpn_flowq *fq = ovpn_flowq_test_new(test);
	unsigned int i, pos1 = 0, pos2 = 0;
	u32 id;

	for (i = 0; i < OVPN_FLOWQ_SLOTS; i++)
		ovpn_flowq_test_add(test, fq, i + 1, 100 + i, 1400);
	ovpn_flowq_test_add(test, fq, OVPN_TEST_HASH_HOME5, 1, 1400);
	KUNIT_EXPECT_TRUE(test, fq->slots[5].shared);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&fq->slots[5].skbs), 2);

	/* slot 0 frees; the flow's next record still goes to slot 5 */
	KUNIT_EXPECT_EQ(test, ovpn_flowq_test_id(ovpn_flowq_dequeue(fq)), 100);
	ovpn_flowq_test_add(test, fq, OVPN_TEST_HASH_HOME5, 2, 1400);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&fq->slots[0].skbs), 0);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&fq->slots[5].skbs), 3);

	for (i = 1; fq->len; i++) {
		id = ovpn_flowq_test_id(ovpn_flowq_dequeue(fq));
		if (id == 1)
			pos1 = i;
		if (id == 2)
			pos2 = i;
	}
	KUNIT_EXPECT_GT(test, pos1, 0);
	KUNIT_EXPECT_GT(test, pos2, pos1);
	KUNIT_EXPECT_FALSE(test, fq->slots[5].shared);

	/* on its own again: the first free slot, not the shared one */
	ovpn_flowq_test_add(test, fq, OVPN_TEST_HASH_HOME5, 3, 1400);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&fq->slots[0].skbs), 1);
	KUNIT_EXPECT_FALSE(test, fq->slots[0].shared);
}

/* A purge empties every slot and its counts. */
static void ovpn_flowq_purged(struct kunit *test)
{
	struct ovpn_flowq *fq = ovpn_flowq_test_new(test);
	unsigned int i;

	for (i = 0; i <= OVPN_FLOWQ_SLOTS; i++)
		ovpn_flowq_test_add(test, fq, i + 1, i, 1400);
	ovpn_flowq_purge(fq);
	KUNIT_EXPECT_EQ(test, fq->len, 0);
	KUNIT_EXPECT_EQ(test, fq->bytes, 0);
	for (i = 0; i < OVPN_FLOWQ_SLOTS; i++) {
		KUNIT_EXPECT_TRUE(test, skb_queue_empty(&fq->slots[i].skbs));
		KUNIT_EXPECT_EQ(test, fq->slots[i].bytes, 0);
		KUNIT_EXPECT_FALSE(test, fq->slots[i].shared);
	}
	KUNIT_EXPECT_NULL(test, ovpn_flowq_dequeue(fq));
}

static struct kunit_case ovpn_flowq_cases[] = {
	KUNIT_CASE(ovpn_flowq_turns),
	KUNIT_CASE(ovpn_flowq_fattest),
	KUNIT_CASE(ovpn_flowq_shared_in_order),
	KUNIT_CASE(ovpn_flowq_purged),
	{}
};

static struct kunit_suite ovpn_flowq_suite = {
	.name = "ovpn-flowq",
	.test_cases = ovpn_flowq_cases,
};

kunit_test_suite(ovpn_flowq_suite);
