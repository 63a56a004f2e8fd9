// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the packet ids
 *
 * Included by pktid.c when CONFIG_OVPN_KUNIT_TEST is set, so that the
 * tests see the window's internals.  Pure logic: no device, no key, no
 * packet.  Run with
 *   tools/testing/kunit/kunit.py run --kunitconfig=drivers/net/ovpn
 */

#include <kunit/test.h>

#include "epoch.h"

/* A sender whose counter was left at @last, as if @last ids were used. */
static void ovpn_test_xmit_at(struct ovpn_pktid_xmit *pid, s64 last)
{
	ovpn_pktid_xmit_init(pid);
	atomic64_set(&pid->seq, last);
}

static void ovpn_pktid_xmit_counts_from_one(struct kunit *test)
{
	struct ovpn_pktid_xmit pid;
	u32 id, i;

	ovpn_pktid_xmit_init(&pid);
	for (i = 1; i <= 3; i++) {
		KUNIT_ASSERT_EQ(test, ovpn_pktid_xmit_next(&pid, &id), 0);
		KUNIT_EXPECT_EQ(test, id, i);
	}
}

/*
 * The last id is U32_MAX; after it every call fails, however many are
 * made: the counter must never wrap to hand out id 0 or 1 again.
 */
static void ovpn_pktid_xmit_runs_out(struct kunit *test)
{
	struct ovpn_pktid_xmit pid;
	u32 id = 0;
	int i;

	ovpn_test_xmit_at(&pid, U32_MAX - 2);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_xmit_next(&pid, &id), 0);
	KUNIT_EXPECT_EQ(test, id, U32_MAX - 1);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_xmit_next(&pid, &id), 0);
	KUNIT_EXPECT_EQ(test, id, U32_MAX);
	for (i = 0; i < 1000; i++) {
		id = 0;
		KUNIT_ASSERT_EQ(test, ovpn_pktid_xmit_next(&pid, &id), -ERANGE);
		KUNIT_ASSERT_EQ(test, id, 0);
	}
}

static void ovpn_pktid_recv_in_order(struct kunit *test)
{
	struct ovpn_pktid_recv pr;
	u32 id;

	ovpn_pktid_recv_init(&pr);
	for (id = 1; id <= 5 * OVPN_PKTID_WINDOW; id++)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id), 0);
	KUNIT_EXPECT_EQ(test, pr.top, 5 * OVPN_PKTID_WINDOW);
}

static void ovpn_pktid_recv_zero_refused(struct kunit *test)
{
	struct ovpn_pktid_recv pr;

	ovpn_pktid_recv_init(&pr);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, pr.top, 0);
}

static void ovpn_pktid_recv_replay_refused(struct kunit *test)
{
	struct ovpn_pktid_recv pr;

	ovpn_pktid_recv_init(&pr);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, 10), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 10), -EEXIST);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, 7), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 7), -EEXIST);
	KUNIT_EXPECT_EQ(test, pr.top, 10);
}

/* Reordering within the window is accepted once per id, in any order. */
static void ovpn_pktid_recv_reordered(struct kunit *test)
{
	const u32 base = 3 * OVPN_PKTID_WINDOW;
	struct ovpn_pktid_recv pr;
	u32 i;

	ovpn_pktid_recv_init(&pr);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, base), 0);
	for (i = 1; i < OVPN_PKTID_WINDOW; i += 2)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, base - i), 0);
	for (i = 2; i < OVPN_PKTID_WINDOW; i += 2)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, base - i), 0);
	for (i = 0; i < OVPN_PKTID_WINDOW; i++)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, base - i), -EEXIST);
}

/* The oldest id still in the window is the top's minus WINDOW - 1. */
static void ovpn_pktid_recv_window_edge(struct kunit *test)
{
	const u32 top = 10 * OVPN_PKTID_WINDOW;
	struct ovpn_pktid_recv pr;

	ovpn_pktid_recv_init(&pr);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, top), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, top - OVPN_PKTID_WINDOW),
			-ERANGE);
	KUNIT_EXPECT_EQ(test,
			ovpn_pktid_recv(&pr, top - OVPN_PKTID_WINDOW + 1), 0);
}

/*
 * A jump far ahead clears what the slide passes over: ids just below the
 * new top, never seen, are accepted, and the old ones fall out.
 */
static void ovpn_pktid_recv_jump(struct kunit *test)
{
	struct ovpn_pktid_recv pr;
	u32 id;

	ovpn_pktid_recv_init(&pr);
	for (id = 1; id <= 300; id++)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id), 0);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, 1000000), 0);
	for (id = 1000000 - OVPN_PKTID_WINDOW + 1; id < 1000000; id++)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 300), -ERANGE);
}

/*
 * Every top modulo the bitmap's size: the word of the top and the word of
 * the oldest id in the window never share a slot, so a slide of one never
 * forgets an id still in the window.
 */
static void ovpn_pktid_recv_slide_keeps_window(struct kunit *test)
{
	const u32 span = OVPN_PKTID_WORDS * BITS_PER_LONG;
	struct ovpn_pktid_recv pr;
	u32 top, id;

	for (top = span; top < 2 * span; top += 7) {
		ovpn_pktid_recv_init(&pr);
		for (id = top - OVPN_PKTID_WINDOW + 1; id <= top; id++)
			KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id), 0);
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, top + 1), 0);
		for (id = top - OVPN_PKTID_WINDOW + 2; id <= top; id++)
			KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id),
					-EEXIST);
	}
}

/* After a long silence nothing below the top is taken any more. */
static void ovpn_pktid_recv_backtrack_expires(struct kunit *test)
{
	struct ovpn_pktid_recv pr;

	ovpn_pktid_recv_init(&pr);
	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, 100), 0);
	pr.expire = jiffies - 1;
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 99), -ERANGE);
	KUNIT_EXPECT_EQ(test, pr.floor, 100);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 101), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, 100), -ERANGE);
}

/*
 * The epoch format's counters go past 32 bits: the window slides across
 * 2^32 and stays exact up to the last 48-bit counter.
 */
static void ovpn_pktid_recv_wide_ids(struct kunit *test)
{
	const u64 last = OVPN_EPOCH_COUNTER_MAX;
	struct ovpn_pktid_recv pr;
	u64 id;

	ovpn_pktid_recv_init(&pr);
	for (id = U32_MAX - 100; id <= (u64)U32_MAX + 100; id++)
		KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, id), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, U32_MAX), -EEXIST);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, (u64)U32_MAX + 100),
			-EEXIST);

	KUNIT_ASSERT_EQ(test, ovpn_pktid_recv(&pr, last), 0);
	KUNIT_EXPECT_EQ(test, pr.top, last);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, last), -EEXIST);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, last - 1), 0);
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, last - OVPN_PKTID_WINDOW),
			-ERANGE);
	/* An id in the window, never seen, is still taken. */
	KUNIT_EXPECT_EQ(test, ovpn_pktid_recv(&pr, last - 2), 0);
}

static struct kunit_case ovpn_pktid_cases[] = {
	KUNIT_CASE(ovpn_pktid_xmit_counts_from_one),
	KUNIT_CASE(ovpn_pktid_xmit_runs_out),
	KUNIT_CASE(ovpn_pktid_recv_in_order),
	KUNIT_CASE(ovpn_pktid_recv_zero_refused),
	KUNIT_CASE(ovpn_pktid_recv_replay_refused),
	KUNIT_CASE(ovpn_pktid_recv_reordered),
	KUNIT_CASE(ovpn_pktid_recv_window_edge),
	KUNIT_CASE(ovpn_pktid_recv_jump),
	KUNIT_CASE(ovpn_pktid_recv_slide_keeps_window),
	KUNIT_CASE(ovpn_pktid_recv_backtrack_expires),
	KUNIT_CASE(ovpn_pktid_recv_wide_ids),
	{}
};

static struct kunit_suite ovpn_pktid_suite = {
	.name = "ovpn-pktid",
	.test_cases = ovpn_pktid_cases,
};

kunit_test_suite(ovpn_pktid_suite);
