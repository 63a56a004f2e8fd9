// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - packet ids
 *
 * Sender: one atomic counter per key slot.  Receiver: a sliding bitmap of
 * the last OVPN_PKTID_WINDOW ids, updated under a short spinlock once the
 * packet authenticated.
 */

#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/limits.h>
#include <linux/string.h>

#include "pktid.h"

/**
 * ovpn_pktid_xmit_init - prepare the sender side of a new key slot
 * @pid: the sender state
 *
 * Context: process; the key slot is not published yet.
 */
void ovpn_pktid_xmit_init(struct ovpn_pktid_xmit *pid)
{
	atomic64_set(&pid->seq, 0);
}

/**
 * ovpn_pktid_xmit_next - hand out the id of the next packet to send
 * @pid: the sender state of the key slot that encrypts the packet
 * @id: where to store the id
 *
 * The counter is 64 bits wide so that it can run past the last valid id
 * without wrapping: once exhausted, every later call fails too and no id
 * is ever handed out twice, whatever the number of CPUs racing here.
 *
 * Context: any.
 * Return: 0 and the id in @id, or -ERANGE if the key has used up its ids
 * (the caller must then retire the key).
 */
int ovpn_pktid_xmit_next(struct ovpn_pktid_xmit *pid, u32 *id)
{
	s64 seq = atomic64_inc_return(&pid->seq);

	if (unlikely(seq > U32_MAX))
		return -ERANGE;

	*id = seq;
	return 0;
}

/**
 * ovpn_pktid_recv_init - prepare the receiver side of a new key slot
 * @pr: the receiver state
 *
 * Context: process; the key slot is not published yet.
 */
void ovpn_pktid_recv_init(struct ovpn_pktid_recv *pr)
{
	spin_lock_init(&pr->lock);
	memset(pr->history, 0, sizeof(pr->history));
	pr->top = 0;
	pr->floor = 0;
	pr->expire = jiffies + OVPN_PKTID_BACKTRACK_EXPIRE * HZ;
}

/*
 * The bitmap word of @id.  Ids are 64-bit (the epoch format's counters
 * are 48-bit); div_u64_rem() keeps 32-bit builds from a libgcc call, and
 * on 64-bit it is the plain modulo by a constant.
 */
static u32 ovpn_pktid_word_idx(u64 word)
{
	u32 idx;

	div_u64_rem(word, OVPN_PKTID_WORDS, &idx);
	return idx;
}

static unsigned long *ovpn_pktid_word(struct ovpn_pktid_recv *pr, u64 id)
{
	return &pr->history[ovpn_pktid_word_idx(id / BITS_PER_LONG)];
}

/*
 * Make @id the new top.  The words between the old top's word (excluded)
 * and @id's word (included) only describe ids above the old top, none of
 * which was accepted yet, so they start empty.  Thanks to the spare word
 * none of them is the slot of an id still inside the new window.
 */
static void ovpn_pktid_slide(struct ovpn_pktid_recv *pr, u64 id)
{
	u64 cur = pr->top / BITS_PER_LONG;
	u32 n, i;

	n = min_t(u64, id / BITS_PER_LONG - cur, OVPN_PKTID_WORDS);
	for (i = 1; i <= n; i++)
		pr->history[ovpn_pktid_word_idx(cur + i)] = 0;

	pr->top = id;
}

/**
 * ovpn_pktid_recv - check a received packet id against the replay window
 * @pr: the receiver state of the key slot that decrypted the packet
 * @id: the packet id from the packet's header (DATA_V2's 32 bits), or the
 *	counter from it (the epoch format's 48)
 *
 * Only to be called once the packet authenticated: a forged id must not
 * move the window.  Ids above the highest accepted one slide the window;
 * older ids are accepted once each while they are less than
 * OVPN_PKTID_WINDOW behind it and above the floor.  After
 * OVPN_PKTID_BACKTRACK_EXPIRE seconds without an accepted packet the floor
 * rises to the highest id, so a long-delayed packet is never taken.
 *
 * The lock is the one serialization point of the receive path, per key
 * slot: it covers a handful of loads and stores (at most one pass over the
 * bitmap words when the window jumps far ahead).
 *
 * Context: softirq or an asynchronous crypto completion; takes
 * @pr->lock with BH disabled.
 * Return: 0 if the id was accepted and recorded, -EINVAL for id 0,
 * -EEXIST for a replay, -ERANGE for an id that is too old.
 */
int ovpn_pktid_recv(struct ovpn_pktid_recv *pr, u64 id)
{
	unsigned long now = jiffies;
	int ret = 0;

	if (unlikely(!id))
		return -EINVAL;

	spin_lock_bh(&pr->lock);

	if (unlikely(time_after_eq(now, pr->expire)))
		pr->floor = pr->top;

	if (likely(id > pr->top)) {
		ovpn_pktid_slide(pr, id);
	} else if (pr->top - id >= OVPN_PKTID_WINDOW || id <= pr->floor) {
		ret = -ERANGE;
		goto unlock;
	}

	if (__test_and_set_bit(id % BITS_PER_LONG, ovpn_pktid_word(pr, id))) {
		ret = -EEXIST;
		goto unlock;
	}

	pr->expire = now + OVPN_PKTID_BACKTRACK_EXPIRE * HZ;
unlock:
	spin_unlock_bh(&pr->lock);
	return ret;
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "pktid_kunit.c"
#endif
