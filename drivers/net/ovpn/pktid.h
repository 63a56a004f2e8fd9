/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - packet ids
 *
 * Every data packet carries a 32-bit packet id, part of the AEAD nonce, so
 * an id must never repeat under one key.  The sender counts up from 1; the
 * receiver rejects ids it has already accepted or that fell too far
 * behind, after the packet authenticated (a forged packet never moves the
 * window).  Both states live in a key slot and die with it.
 *
 * In the epoch data format (crypto_epoch.h) the sender's counter is the
 * epoch key's own and the receiver keeps one window per epoch key, over
 * the 48-bit per-epoch counters: the window takes 64-bit ids.
 */

#ifndef _NET_OVPN_PKTID_H_
#define _NET_OVPN_PKTID_H_

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* Size of the receive window, in packets. */
#define OVPN_PKTID_WINDOW	2048
/* Seconds without an accepted packet after which backtracking stops. */
#define OVPN_PKTID_BACKTRACK_EXPIRE	30

/**
 * struct ovpn_pktid_xmit - sender side of a key slot's packet ids
 * @seq: the last id handed out; 0 before the first packet
 *
 * The counter is the one shared write the sender cannot avoid: ids must be
 * unique and increasing under a key.  It is only ever incremented.
 */
struct ovpn_pktid_xmit {
	atomic64_t seq;
};

/*
 * The bitmap has one word more than the window needs: the word holding
 * @top and the word holding the oldest id still in the window then never
 * share a bitmap slot, so sliding the window can clear whole words.
 */
#define OVPN_PKTID_WORDS	(BITS_TO_LONGS(OVPN_PKTID_WINDOW) + 1)

/**
 * struct ovpn_pktid_recv - receiver side of a key slot's packet ids
 * @lock: serializes window updates; held only for the check-and-set
 * @history: bitmap of accepted ids; id N is bit N % BITS_PER_LONG of word
 *	     (N / BITS_PER_LONG) % OVPN_PKTID_WORDS, meaningful for the ids
 *	     (@top - OVPN_PKTID_WINDOW, @top]
 * @top: the highest id accepted so far; 0 before the first packet
 * @floor: ids at or below it are refused (raised after a long silence)
 * @expire: jiffies after which backtracking below @top is refused
 */
struct ovpn_pktid_recv {
	spinlock_t lock; /* protects all the fields below */
	unsigned long history[OVPN_PKTID_WORDS];
	u64 top;
	u64 floor;
	unsigned long expire;
};

void ovpn_pktid_xmit_init(struct ovpn_pktid_xmit *pid);
int __must_check ovpn_pktid_xmit_next(struct ovpn_pktid_xmit *pid, u32 *id);
void ovpn_pktid_recv_init(struct ovpn_pktid_recv *pr);
int __must_check ovpn_pktid_recv(struct ovpn_pktid_recv *pr, u64 id);

#endif /* _NET_OVPN_PKTID_H_ */
