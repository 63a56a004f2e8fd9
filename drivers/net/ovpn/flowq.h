/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - records waiting for a stream transport,
 * queued per tunnelled flow
 *
 * Every tunnelled flow of a TCP peer shares one transport connection, and
 * the records that connection cannot take yet wait here.  One first-in
 * first-out queue lets the flow that sends most fill it, and a full queue
 * then drops whichever record comes next, of any flow: the flows back off
 * at random and share the path unevenly.  So each flow queues on its
 * own, the flows are served a record each in turn, and a full queue
 * drops the oldest record of the flow holding the most bytes: the flow
 * that sends most is the one told to slow down.
 *
 * A flow is what the inner packet's flow hash says, taken before
 * encryption.  It takes a free slot while it has records queued; when
 * every slot is taken, it shares the slot its hash picks, and stays there
 * until that slot is empty, so the records of one flow always leave in
 * the order they came.
 *
 * Locking: none of its own; the transport serializes every call.
 */

#ifndef _NET_OVPN_FLOWQ_H_
#define _NET_OVPN_FLOWQ_H_

#include <linux/skbuff.h>
#include <linux/types.h>

/*
 * Flows that queue apart from each other at the same time.  The queue
 * holds milliseconds of traffic, so only the flows sending in those
 * milliseconds need a slot; past this many they share.  Eight keep a TCP
 * attachment (struct ovpn_socket) within 1 KiB.
 */
#define OVPN_FLOWQ_SLOTS	8

/**
 * struct ovpn_flowq_slot - the records of one flow (or of several that
 *			    share it)
 * @skbs: the records, oldest first (the list only: its lock is unused)
 * @bytes: the bytes in @skbs
 * @hash: the flow hash of the flow that took the slot
 * @shared: flows whose hash picks this slot were put here as well, as
 *	    every slot was taken; cleared when the slot is empty
 */
struct ovpn_flowq_slot {
	struct sk_buff_head skbs;
	unsigned int bytes;
	u32 hash;
	bool shared;
};

/**
 * struct ovpn_flowq - records waiting for a stream transport, per flow
 * @slots: the flows' queues
 * @bytes: the bytes in all of them
 * @len: the records in all of them
 * @next: the slot looked at first by the next dequeue (round robin)
 */
struct ovpn_flowq {
	struct ovpn_flowq_slot slots[OVPN_FLOWQ_SLOTS];
	unsigned int bytes;
	unsigned int len;
	unsigned int next;
};

void ovpn_flowq_init(struct ovpn_flowq *fq);
void ovpn_flowq_enqueue(struct ovpn_flowq *fq, struct sk_buff *skb, u32 hash);
struct sk_buff *ovpn_flowq_dequeue(struct ovpn_flowq *fq);
struct sk_buff *ovpn_flowq_drop_fattest(struct ovpn_flowq *fq);
void ovpn_flowq_purge(struct ovpn_flowq *fq);

#endif /* _NET_OVPN_FLOWQ_H_ */
