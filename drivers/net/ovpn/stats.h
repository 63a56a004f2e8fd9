/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - per-peer statistics
 *
 * Each peer counts what it sends and receives at two layers: "vpn" (the
 * plaintext packets the device exchanges with the stack) and "link" (the
 * OpenVPN packets exchanged with the transport).
 *
 * Memory: a server may hold a hundred thousand peers on a machine with
 * many possible CPUs, so the per-CPU part is kept small: four u32 byte
 * counters and four u16 packet counters, 24 bytes per possible CPU and
 * peer (64-bit per-CPU counters took 64).  The exact 64-bit totals live
 * once per peer, in struct ovpn_stats.
 *
 * Writers: the data path adds to this CPU's counter with one this_cpu op,
 * which touches no cache line shared between CPUs and takes no lock.  When
 * the value it leaves reaches half the counter's range (2^31 bytes, 2^15
 * packets), the writer folds it: under the peer's @lock it exchanges this
 * CPU's counter with 0 and adds what it took to the u64 total.  A fold
 * happens at most once per 2 GiB, or per 32768 packets, per CPU and
 * counter: one lock taken per 32768 packets at worst, nothing per packet.
 *
 * Why a counter cannot wrap: below half its range, one add of less than
 * half its range (a packet is at most 64 KiB and its headers; a packet
 * count adds 1) stays in range, and the writer whose add crossed the half
 * folds before it adds again.  Only other writers of the same CPU can add
 * meanwhile (PREEMPT_RT, below), one add each before they see the half
 * crossed and fold too: a handful, not 2^15.
 *
 * Writers run with BH disabled (the data path; an async crypto completion
 * and process context disable it themselves), which keeps them on their
 * CPU.  Without PREEMPT_RT that also makes them the CPU's only writer.
 * With PREEMPT_RT, local_bh_disable() only disables migration (unless
 * CONFIG_PREEMPT_RT_NEEDS_BH_LOCK): one writer may preempt another between
 * any two instructions.  So each step is one this_cpu op, which is safe
 * against preemption and interrupts by itself: this_cpu_add_return() adds
 * and returns the sum in one step, and the fold's this_cpu_xchg() takes
 * the whole value, including what a writer that preempted the folder added
 * after the threshold was seen.  Two writers of one CPU may both fold: the
 * second takes what came in since the first, maybe 0; nothing is lost or
 * counted twice.  Even a writer that ran on another CPU than the one it
 * added on would fold that other CPU's counter, which is just as exact.
 * The fold takes @lock with spin_lock_bh(), as the reader does, so that
 * neither depends on its caller's context for freedom from deadlock.
 *
 * Readers: ovpn_stats_read() holds @lock, so no fold moves a value from a
 * CPU's counter to the total while it sums them: the totals and every
 * CPU's counter (read once each, a u32 or u16 read being atomic) add up
 * to an exact count, which only grows from one read to the next.
 */

#ifndef _NET_OVPN_STATS_H_
#define _NET_OVPN_STATS_H_

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* This CPU's counters are folded into the totals once they reach these. */
#define OVPN_STATS_FOLD_BYTES	BIT(31)
#define OVPN_STATS_FOLD_PACKETS	BIT(15)

/**
 * struct ovpn_pcpu_stats - one CPU's share of a peer's counters, not yet
 *			    folded into struct ovpn_stats' totals
 * @vpn_rx_bytes: plaintext bytes delivered to the device
 * @vpn_rx_packets: plaintext packets delivered to the device
 * @vpn_tx_bytes: plaintext bytes taken from the device
 * @vpn_tx_packets: plaintext packets taken from the device
 * @link_rx_bytes: OpenVPN packet bytes received from the transport
 * @link_rx_packets: OpenVPN packets received from the transport
 * @link_tx_bytes: OpenVPN packet bytes handed to the transport
 * @link_tx_packets: OpenVPN packets handed to the transport
 *
 * No counter wraps (see the top of stats.h); only this_cpu ops write
 * them, and readers on other CPUs read them with READ_ONCE().  The byte
 * counters come first, so that the structure has no padding.
 */
struct ovpn_pcpu_stats {
	u32 vpn_rx_bytes;
	u32 vpn_tx_bytes;
	u32 link_rx_bytes;
	u32 link_tx_bytes;
	u16 vpn_rx_packets;
	u16 vpn_tx_packets;
	u16 link_rx_packets;
	u16 link_tx_packets;
};

/**
 * struct ovpn_peer_stats - a peer's counters, 64-bit
 * @vpn_rx_bytes: see struct ovpn_pcpu_stats
 * @vpn_rx_packets: see struct ovpn_pcpu_stats
 * @vpn_tx_bytes: see struct ovpn_pcpu_stats
 * @vpn_tx_packets: see struct ovpn_pcpu_stats
 * @link_rx_bytes: see struct ovpn_pcpu_stats
 * @link_rx_packets: see struct ovpn_pcpu_stats
 * @link_tx_bytes: see struct ovpn_pcpu_stats
 * @link_tx_packets: see struct ovpn_pcpu_stats
 *
 * Both the totals of struct ovpn_stats and what ovpn_stats_read() returns.
 */
struct ovpn_peer_stats {
	u64 vpn_rx_bytes;
	u64 vpn_rx_packets;
	u64 vpn_tx_bytes;
	u64 vpn_tx_packets;
	u64 link_rx_bytes;
	u64 link_rx_packets;
	u64 link_tx_bytes;
	u64 link_tx_packets;
};

/**
 * struct ovpn_stats - a peer's counters, embedded in the peer
 * @pcpu: what each CPU added since its last fold; the data path only
 *	  reads this pointer
 * @lock: serialises folds with each other and with readers
 * @total: what the folds took from the CPUs' counters (@lock)
 */
struct ovpn_stats {
	struct ovpn_pcpu_stats __percpu *pcpu;
	spinlock_t lock; /* folds and reads */
	struct ovpn_peer_stats total;
};

int ovpn_stats_init(struct ovpn_stats *st);
void ovpn_stats_destroy(struct ovpn_stats *st);
void ovpn_stats_fold_bytes(struct ovpn_stats *st, u32 __percpu *ctr,
			   u64 *total);
void ovpn_stats_fold_packets(struct ovpn_stats *st, u16 __percpu *ctr,
			     u64 *total);
void ovpn_stats_read(struct ovpn_stats *st, struct ovpn_peer_stats *sum);

/*
 * Add @len to this CPU's byte counter @bytes and one to its packet counter
 * @packets, and fold either into its 64-bit total if it reached its
 * threshold.  One this_cpu op each in the common case.
 */
static __always_inline void ovpn_stats_count(struct ovpn_stats *st,
					     u32 __percpu *bytes,
					     u64 *total_bytes,
					     u16 __percpu *packets,
					     u64 *total_packets, u32 len)
{
	if (unlikely(this_cpu_add_return(*bytes, len) >=
		     OVPN_STATS_FOLD_BYTES))
		ovpn_stats_fold_bytes(st, bytes, total_bytes);
	if (unlikely(this_cpu_add_return(*packets, 1) >=
		     OVPN_STATS_FOLD_PACKETS))
		ovpn_stats_fold_packets(st, packets, total_packets);
}

/**
 * ovpn_stats_add - count one packet of a peer
 * @st: the peer's struct ovpn_stats
 * @layer: vpn or link
 * @dir: rx or tx
 * @len: the packet's length in bytes, less than 2^31
 *
 * Context: BH disabled (see the top of stats.h).
 */
#define ovpn_stats_add(st, layer, dir, len)				\
	do {								\
		struct ovpn_stats *__st = (st);				\
									\
		ovpn_stats_count(__st,					\
				 &__st->pcpu->layer##_##dir##_bytes,	\
				 &__st->total.layer##_##dir##_bytes,	\
				 &__st->pcpu->layer##_##dir##_packets,	\
				 &__st->total.layer##_##dir##_packets,	\
				 (len));				\
	} while (0)

#endif /* _NET_OVPN_STATS_H_ */
