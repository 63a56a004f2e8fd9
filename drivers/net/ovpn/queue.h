/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - parallel encryption and decryption
 *
 * One peer's packets are encrypted or decrypted on every online CPU and
 * still leave the device, or reach the stack, in the order they entered
 * it.  Each packet goes into two rings at once:
 *
 * - its peer's ordered queue (struct ovpn_ordered_queue, one per
 *   direction), which keeps the order and is emptied from its head by one
 *   work item at a time, as far as the packets there have been through
 *   the AEAD;
 * - its device's crypt ring (struct ovpn_crypt_ring, one per direction),
 *   which the device's per-CPU workers empty in any order, each running
 *   the AEAD of the packets it takes.
 *
 * Ownership: from queueing to the ordered queue's work, a packet holds
 * its peer and key slot references, as on the inline path; the control
 * block records whether it has been through the AEAD and with what result
 * (struct ovpn_cb).  The ordered queue's work holds one more peer
 * reference while it is queued, because the packet it runs for may be
 * the last holder (see ovpn_crypt_done()).  A device's rings outlive
 * every packet in them: peers hold a device reference until their
 * teardown, and the rings go with the device's private data, after its
 * workers are flushed.
 */

#ifndef _NET_OVPN_QUEUE_H_
#define _NET_OVPN_QUEUE_H_

#include <linux/ptr_ring.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

struct ovpn_peer;
struct ovpn_priv;

/**
 * struct ovpn_crypt_worker - one CPU's worker of a crypt ring
 * @work: takes packets from @ring and runs their AEAD, on this CPU
 * @ring: the ring it empties
 */
struct ovpn_crypt_worker {
	struct work_struct work;
	struct ovpn_crypt_ring *ring;
};

/**
 * struct ovpn_crypt_ring - a device's packets waiting for their AEAD
 * @ring: the packets, each also in its peer's ordered queue
 * @workers: a worker per possible CPU
 * @encrypt: encryption (true) or decryption
 */
struct ovpn_crypt_ring {
	struct ptr_ring ring;
	struct ovpn_crypt_worker __percpu *workers;
	bool encrypt;
};

/**
 * struct ovpn_parallel - a device's parallel crypto
 * @encrypt: the packets to encrypt
 * @decrypt: the packets to decrypt
 * @enabled: packets take this path (the "parallel-crypto" private flag);
 *	     written under RTNL, read per packet with READ_ONCE()
 */
struct ovpn_parallel {
	struct ovpn_crypt_ring encrypt;
	struct ovpn_crypt_ring decrypt;
	bool enabled;
};

/**
 * struct ovpn_ordered_queue - one peer's packets of one direction, in order
 * @ring: the packets in the order they were queued; only @work consumes
 * @work: posts the packets at the head that are through the AEAD
 * @peer: the peer
 * @cpu: where @work runs, while that CPU is online
 * @encrypt: TX (true) or RX
 */
struct ovpn_ordered_queue {
	struct ptr_ring ring;
	struct work_struct work;
	struct ovpn_peer *peer;
	int cpu;
	bool encrypt;
};

/**
 * struct ovpn_peer_queues - a peer's ordered queues
 * @tx: packets to the peer
 * @rx: packets from the peer
 */
struct ovpn_peer_queues {
	struct ovpn_ordered_queue tx;
	struct ovpn_ordered_queue rx;
};

int ovpn_queue_init(void);
void ovpn_queue_exit(void);

int ovpn_parallel_init(struct ovpn_priv *ovpn);
void ovpn_parallel_destroy(struct ovpn_priv *ovpn);
bool ovpn_parallel_enabled(const struct ovpn_priv *ovpn);
int ovpn_parallel_enable(struct ovpn_priv *ovpn, bool on);

int ovpn_peer_queues_init(struct ovpn_peer *peer);
void ovpn_peer_queues_destroy(struct ovpn_peer *peer);

bool ovpn_queue_wanted(struct ovpn_peer *peer, bool encrypt);
int ovpn_queue_packet(struct ovpn_peer *peer, struct sk_buff *skb,
		      bool encrypt);
void ovpn_crypt_done(void *data, int ret);

#endif /* _NET_OVPN_QUEUE_H_ */
