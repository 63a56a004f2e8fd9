// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the per-peer statistics
 *
 * Included by stats.c when CONFIG_OVPN_KUNIT_TEST is set, so that the
 * tests see the totals and this CPU's counters.  Pure logic: the counts
 * go through ovpn_stats_add() as the data path's do, with BH disabled as
 * there, which also keeps the test on one CPU while it looks at that
 * CPU's counters.  Run with
 *   tools/testing/kunit/kunit.py run --kunitconfig=drivers/net/ovpn
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>

/* Byte counts that cross the fold threshold at every second add. */
static void ovpn_stats_bytes_fold_exact(struct kunit *test)
{
	const u32 len = OVPN_STATS_FOLD_BYTES - 1;
	struct ovpn_peer_stats sum, prev = {};
	struct ovpn_stats st;
	u64 folded = 0;
	u64 total;
	u32 ctr;
	int i;

	KUNIT_ASSERT_EQ(test, ovpn_stats_init(&st), 0);

	for (i = 1; i <= 9; i++) {
		local_bh_disable();
		ovpn_stats_add(&st, vpn, rx, len - i);
		total = st.total.vpn_rx_bytes;
		ctr = this_cpu_read(st.pcpu->vpn_rx_bytes);
		local_bh_enable();

		/* Under the threshold after an odd add, folded after even. */
		if (!(i & 1))
			folded += (u64)(len - i) + (len - (i - 1));
		KUNIT_EXPECT_EQ(test, total, folded);
		KUNIT_EXPECT_EQ(test, ctr, (i & 1) ? len - i : 0);

		ovpn_stats_read(&st, &sum);
		KUNIT_EXPECT_EQ(test, sum.vpn_rx_bytes,
				(u64)len * i - (u64)i * (i + 1) / 2);
		KUNIT_EXPECT_EQ(test, sum.vpn_rx_packets, i);
		KUNIT_EXPECT_GT(test, sum.vpn_rx_bytes, prev.vpn_rx_bytes);
		prev = sum;
	}

	/* The other counters saw nothing. */
	KUNIT_EXPECT_EQ(test, sum.vpn_tx_bytes + sum.vpn_tx_packets, 0);
	KUNIT_EXPECT_EQ(test, sum.link_rx_bytes + sum.link_rx_packets, 0);
	KUNIT_EXPECT_EQ(test, sum.link_tx_bytes + sum.link_tx_packets, 0);
	KUNIT_EXPECT_EQ(test, st.total.vpn_rx_packets, 0);

	ovpn_stats_destroy(&st);
}

/* A packet count that reaches the threshold exactly, as if 2^15 - 2 came. */
static void ovpn_stats_packets_fold_exact(struct kunit *test)
{
	u16 ctr_folded, ctr_after;
	struct ovpn_peer_stats sum;
	u64 total_before, total;
	struct ovpn_stats st;
	int i;

	KUNIT_ASSERT_EQ(test, ovpn_stats_init(&st), 0);

	local_bh_disable();
	this_cpu_write(st.pcpu->link_tx_packets, OVPN_STATS_FOLD_PACKETS - 2);
	ovpn_stats_add(&st, link, tx, 100);
	total_before = st.total.link_tx_packets;
	ovpn_stats_add(&st, link, tx, 100);
	total = st.total.link_tx_packets;
	ctr_folded = this_cpu_read(st.pcpu->link_tx_packets);
	for (i = 0; i < 3; i++)
		ovpn_stats_add(&st, link, tx, 100);
	ctr_after = this_cpu_read(st.pcpu->link_tx_packets);
	local_bh_enable();

	KUNIT_EXPECT_EQ(test, total_before, 0);
	KUNIT_EXPECT_EQ(test, total, OVPN_STATS_FOLD_PACKETS);
	KUNIT_EXPECT_EQ(test, ctr_folded, 0);
	KUNIT_EXPECT_EQ(test, ctr_after, 3);

	ovpn_stats_read(&st, &sum);
	KUNIT_EXPECT_EQ(test, sum.link_tx_packets,
			(u64)OVPN_STATS_FOLD_PACKETS + 3);
	KUNIT_EXPECT_EQ(test, sum.link_tx_bytes, 500);
	KUNIT_EXPECT_EQ(test, st.total.link_tx_bytes, 0);

	ovpn_stats_destroy(&st);
}

/* Packets by the hundred thousand: the u16 counters fold, none is lost. */
static void ovpn_stats_packets_many_folds(struct kunit *test)
{
	const u32 n = 3 * OVPN_STATS_FOLD_PACKETS + 5;
	struct ovpn_peer_stats sum;
	struct ovpn_stats st;
	u32 i;

	KUNIT_ASSERT_EQ(test, ovpn_stats_init(&st), 0);

	local_bh_disable();
	for (i = 0; i < n; i++)
		ovpn_stats_add(&st, vpn, tx, 1);
	local_bh_enable();

	ovpn_stats_read(&st, &sum);
	KUNIT_EXPECT_EQ(test, sum.vpn_tx_packets, n);
	KUNIT_EXPECT_EQ(test, sum.vpn_tx_bytes, n);
	KUNIT_EXPECT_GE(test, st.total.vpn_tx_packets,
			(u64)3 * OVPN_STATS_FOLD_PACKETS);

	ovpn_stats_destroy(&st);
}

static struct kunit_case ovpn_stats_cases[] = {
	KUNIT_CASE(ovpn_stats_bytes_fold_exact),
	KUNIT_CASE(ovpn_stats_packets_fold_exact),
	KUNIT_CASE(ovpn_stats_packets_many_folds),
	{}
};

static struct kunit_suite ovpn_stats_suite = {
	.name = "ovpn-stats",
	.test_cases = ovpn_stats_cases,
};

kunit_test_suite(ovpn_stats_suite);
