// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - records waiting for a stream transport,
 * queued per tunnelled flow
 *
 * See flowq.h for why and for the order the records leave in.
 */

#include <linux/skbuff.h>

#include "flowq.h"

/**
 * ovpn_flowq_init - make an empty queue
 * @fq: the queue
 */
void ovpn_flowq_init(struct ovpn_flowq *fq)
{
	unsigned int i;

	memset(fq, 0, sizeof(*fq));
	for (i = 0; i < OVPN_FLOWQ_SLOTS; i++)
		__skb_queue_head_init(&fq->slots[i].skbs);
}

/*
 * The slot for a record of the flow @hash.  Where the flow's records are
 * queued already, first: in a slot it took, or in the shared slot its
 * hash picks.  Then a free slot, else that shared one.
 */
static struct ovpn_flowq_slot *ovpn_flowq_slot_of(struct ovpn_flowq *fq,
						  u32 hash)
{
	struct ovpn_flowq_slot *home, *free = NULL;
	unsigned int i;

	for (i = 0; i < OVPN_FLOWQ_SLOTS; i++) {
		struct ovpn_flowq_slot *slot = &fq->slots[i];

		if (skb_queue_empty(&slot->skbs)) {
			if (!free)
				free = slot;
		} else if (slot->hash == hash) {
			return slot;
		}
	}

	/* Shared means not empty: the flow may have records there. */
	home = &fq->slots[reciprocal_scale(hash, OVPN_FLOWQ_SLOTS)];
	if (home->shared)
		return home;
	if (free) {
		free->hash = hash;
		return free;
	}
	home->shared = true;
	return home;
}

/**
 * ovpn_flowq_enqueue - queue a record behind the others of its flow
 * @fq: the queue
 * @skb: the record; owned by the queue from now on
 * @hash: the flow hash of the tunnelled packet it carries
 */
void ovpn_flowq_enqueue(struct ovpn_flowq *fq, struct sk_buff *skb, u32 hash)
{
	struct ovpn_flowq_slot *slot = ovpn_flowq_slot_of(fq, hash);

	__skb_queue_tail(&slot->skbs, skb);
	slot->bytes += skb->len;
	fq->bytes += skb->len;
	fq->len++;
}

/* Take the oldest record of @slot, which is not empty. */
static struct sk_buff *ovpn_flowq_take(struct ovpn_flowq *fq,
				       struct ovpn_flowq_slot *slot)
{
	struct sk_buff *skb = __skb_dequeue(&slot->skbs);

	slot->bytes -= skb->len;
	fq->bytes -= skb->len;
	fq->len--;
	if (skb_queue_empty(&slot->skbs))
		slot->shared = false;
	return skb;
}

/**
 * ovpn_flowq_dequeue - the next record to send
 * @fq: the queue
 *
 * The flows take turns, a record each: a flow sending full-sized records
 * gets no more of the connection than another one does, and a flow that
 * sends little (a ping, an ACK) waits for one record of each other flow
 * at most.
 *
 * Return: the oldest record of the next flow in turn, or NULL if the
 * queue is empty.
 */
struct sk_buff *ovpn_flowq_dequeue(struct ovpn_flowq *fq)
{
	unsigned int n, i;

	if (!fq->len)
		return NULL;
	for (n = 0; n < OVPN_FLOWQ_SLOTS; n++) {
		i = (fq->next + n) % OVPN_FLOWQ_SLOTS;
		if (!skb_queue_empty(&fq->slots[i].skbs))
			break;
	}
	fq->next = (i + 1) % OVPN_FLOWQ_SLOTS;
	return ovpn_flowq_take(fq, &fq->slots[i]);
}

/**
 * ovpn_flowq_drop_fattest - take the record to drop when the queue is full
 * @fq: the queue
 *
 * The oldest record of the flow holding the most bytes: the flow sending
 * most learns of the loss soonest, and the others keep their records.
 *
 * Return: the record, for the caller to count and free, or NULL if the
 * queue is empty.
 */
struct sk_buff *ovpn_flowq_drop_fattest(struct ovpn_flowq *fq)
{
	struct ovpn_flowq_slot *fattest = &fq->slots[0];
	unsigned int i;

	if (!fq->len)
		return NULL;
	for (i = 1; i < OVPN_FLOWQ_SLOTS; i++)
		if (fq->slots[i].bytes > fattest->bytes)
			fattest = &fq->slots[i];
	return ovpn_flowq_take(fq, fattest);
}

/**
 * ovpn_flowq_purge - free every record
 * @fq: the queue, empty afterwards
 */
void ovpn_flowq_purge(struct ovpn_flowq *fq)
{
	unsigned int i;

	for (i = 0; i < OVPN_FLOWQ_SLOTS; i++) {
		__skb_queue_purge(&fq->slots[i].skbs);
		fq->slots[i].bytes = 0;
		fq->slots[i].shared = false;
	}
	fq->bytes = 0;
	fq->len = 0;
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "flowq_kunit.c"
#endif
