// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - per-peer statistics
 *
 * See stats.h for how the small per-CPU counters and the 64-bit totals
 * make up exact counts.
 */

#include <linux/errno.h>
#include <linux/gfp.h>

#include "stats.h"

/**
 * ovpn_stats_init - set up a peer's counters, all at 0
 * @st: the counters
 *
 * Context: process context.
 * Return: 0, or -ENOMEM.
 */
int ovpn_stats_init(struct ovpn_stats *st)
{
	st->pcpu = alloc_percpu_gfp(struct ovpn_pcpu_stats, GFP_KERNEL);
	if (!st->pcpu)
		return -ENOMEM;
	spin_lock_init(&st->lock);
	memset(&st->total, 0, sizeof(st->total));
	return 0;
}

/**
 * ovpn_stats_destroy - free what ovpn_stats_init() allocated
 * @st: the counters, which nobody writes or reads any more
 */
void ovpn_stats_destroy(struct ovpn_stats *st)
{
	free_percpu(st->pcpu);
}

/**
 * ovpn_stats_fold_bytes - move this CPU's value of a byte counter to its
 *			   64-bit total
 * @st: the peer's counters
 * @ctr: the counter, in @st->pcpu
 * @total: its total, in @st->total
 *
 * Called by ovpn_stats_add() once this CPU's value of @ctr reached
 * OVPN_STATS_FOLD_BYTES; out of line, as it runs once per 2 GiB of a
 * counter.  The exchange is one this_cpu op (see stats.h for
 * PREEMPT_RT), and it runs under @st->lock, so a reader sees the value
 * either in this CPU's counter or in the total, never in both or in
 * neither.
 *
 * Context: any but hard interrupt.
 */
void ovpn_stats_fold_bytes(struct ovpn_stats *st, u32 __percpu *ctr,
			   u64 *total)
{
	spin_lock_bh(&st->lock);
	*total += this_cpu_xchg(*ctr, 0);
	spin_unlock_bh(&st->lock);
}

/**
 * ovpn_stats_fold_packets - move this CPU's value of a packet counter to
 *			     its 64-bit total
 * @st: the peer's counters
 * @ctr: the counter, in @st->pcpu
 * @total: its total, in @st->total
 *
 * As ovpn_stats_fold_bytes(), once per 32768 packets of a counter
 * (OVPN_STATS_FOLD_PACKETS).
 *
 * Context: any but hard interrupt.
 */
void ovpn_stats_fold_packets(struct ovpn_stats *st, u16 __percpu *ctr,
			     u64 *total)
{
	spin_lock_bh(&st->lock);
	*total += this_cpu_xchg(*ctr, 0);
	spin_unlock_bh(&st->lock);
}

/**
 * ovpn_stats_read - a peer's exact counts
 * @st: the peer's counters
 * @sum: receives the counts
 *
 * Sums the totals and every possible CPU's counter under @st->lock, which
 * holds folds off: each count is exact as of the moments the CPUs'
 * counters were read, and no less than what an earlier read returned.
 * Writers are not held off: what a CPU adds after its counter was read is
 * left to the next read.
 *
 * Context: process or softirq context.
 */
void ovpn_stats_read(struct ovpn_stats *st, struct ovpn_peer_stats *sum)
{
	int cpu;

	spin_lock_bh(&st->lock);
	*sum = st->total;
	for_each_possible_cpu(cpu) {
		const struct ovpn_pcpu_stats *s = per_cpu_ptr(st->pcpu, cpu);

		sum->vpn_rx_bytes += READ_ONCE(s->vpn_rx_bytes);
		sum->vpn_rx_packets += READ_ONCE(s->vpn_rx_packets);
		sum->vpn_tx_bytes += READ_ONCE(s->vpn_tx_bytes);
		sum->vpn_tx_packets += READ_ONCE(s->vpn_tx_packets);
		sum->link_rx_bytes += READ_ONCE(s->link_rx_bytes);
		sum->link_rx_packets += READ_ONCE(s->link_rx_packets);
		sum->link_tx_bytes += READ_ONCE(s->link_tx_bytes);
		sum->link_tx_packets += READ_ONCE(s->link_tx_packets);
	}
	spin_unlock_bh(&st->lock);
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "stats_kunit.c"
#endif
