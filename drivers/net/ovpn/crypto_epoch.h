/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - the epoch keys of a key slot
 *
 * A key slot in the epoch data format (epoch.h) holds, instead of one key
 * per direction, a few keys of each direction's chain:
 * - sending: the epoch packets are encrypted with, and the next one,
 *   derived ahead so that moving on never waits;
 * - receiving: the peer's current epoch, the one before it (with its own
 *   replay window, for packets sent before the peer moved on), and the
 *   OVPN_EPOCH_FUTURE epochs after it, derived ahead.
 * Keys are only ever derived in process context, by one work item per
 * direction (an HMAC-SHA256 chain and a transform allocation per key),
 * and only moved between those pointers on the data path.
 *
 * When the sender moves on: once the epoch's counter runs out (at
 * openvpn's limit, OVPN_EPOCH_COUNTER_MAX) or its AEAD usage account says
 * spent, and when the peer was authenticated under a later epoch than
 * the one sent with (openvpn's epoch_replace_update_recv_key() does the
 * same).  When the receiver moves on: when a packet of a future epoch
 * authenticates.  Unlike openvpn, the receiver does not push the sender
 * on when its own account of a key nears the limit: the sender's account
 * is the one that counts, and both ends of this driver keep it.
 *
 * Lifetime of an epoch key (struct ovpn_epoch_key):
 * - made in process context with its percpu_ref initialised last, then
 *   published in one pointer of struct ovpn_epoch_keys under its lock;
 * - borrowed by the data path under rcu_read_lock() with
 *   percpu_ref_tryget_live_rcu(), and put once the packet's AEAD and
 *   replay check are done, before the key slot's reference: the slot
 *   holds the struct ovpn_epoch_keys the key hangs off;
 * - unpublished exactly once under the lock, and only then its initial
 *   reference is killed;
 * - released into a batch torn down a grace period later (the transform
 *   is freed in process context), percpu_ref_exit() last.
 * The work items hold a reference on the key slot while queued, so the
 * slot, and the struct ovpn_epoch_keys in it, outlives them.
 */

#ifndef _NET_OVPN_CRYPTO_EPOCH_H_
#define _NET_OVPN_CRYPTO_EPOCH_H_

#include <linux/bitops.h>
#include <linux/llist.h>
#include <linux/percpu-refcount.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <uapi/linux/ovpn.h>

#include "aead.h"
#include "epoch.h"
#include "pktid.h"
#include "usage.h"

/* Receive keys derived ahead of the peer: openvpn 2.7.7's default. */
#define OVPN_EPOCH_FUTURE	4
/*
 * The sending epoch from which a new key is asked for, as openvpn does
 * (tls_process_state() in its ssl.c): the few left serve until it comes.
 */
#define OVPN_EPOCH_RENEG	0xf000

/**
 * struct ovpn_epoch_key - one epoch of one direction, shared by packets
 * @aead: the transform and implicit IV (read-only)
 * @ref: borrowers on the data path; see the lifetime rules above
 * @release_entry: link in the batch of released epoch keys
 * @seq: sending key: the last counter handed out; the one shared write
 *	 of the sending path, as a DATA_V2 key slot's packet id
 * @usage: sending key: what it protected, against the AEAD usage limit
 * @pid_recv: receiving key: its replay window over the counters
 */
struct ovpn_epoch_key {
	struct ovpn_aead_epoch_key aead;
	struct percpu_ref ref;
	struct llist_node release_entry;

	atomic64_t seq ____cacheline_aligned_in_smp;
	struct ovpn_usage usage;
	struct ovpn_pktid_recv pid_recv ____cacheline_aligned_in_smp;
};

/* struct ovpn_epoch_keys.flags */
enum {
	/* a key was asked for as the sending epoch reached OVPN_EPOCH_RENEG */
	OVPN_EPOCH_RENEG_SAID,
};

/**
 * struct ovpn_epoch_keys - the epoch keys of a key slot
 * @lock: serializes every change of the key pointers and @tx_target
 * @tx: the key packets are sent with; never NULL while the slot lives
 * @tx_next: the key of @tx's next epoch, NULL until derived or after the
 *	     last epoch
 * @rx: the key of the peer's current epoch; never NULL while the slot
 *	lives
 * @rx_retiring: the key of the epoch before @rx's, NULL at first
 * @rx_future: the keys of the epochs after @rx's, in order; the NULL
 *	       ones, not derived yet, are at the end
 * @tx_target: the epoch the sender is to reach: the latest the peer
 *	       authenticated under
 * @flags: OVPN_EPOCH_* bits
 * @alg: the cipher
 * @key_size: its key size
 * @tx_secret: the secret of the latest sending epoch derived; only the
 *	       TX work touches it once the slot is published
 * @rx_secret: the same for receiving, the RX work's
 * @tx_work: derives sending keys ahead
 * @rx_work: derives receiving keys ahead
 * @owner: the reference of the key slot these keys belong to
 */
struct ovpn_epoch_keys {
	spinlock_t lock; /* protects the pointers and @tx_target */
	struct ovpn_epoch_key __rcu *tx;
	struct ovpn_epoch_key __rcu *tx_next;
	struct ovpn_epoch_key __rcu *rx;
	struct ovpn_epoch_key __rcu *rx_retiring;
	struct ovpn_epoch_key __rcu *rx_future[OVPN_EPOCH_FUTURE];
	u16 tx_target;
	unsigned long flags;
	enum ovpn_cipher_alg alg;
	unsigned int key_size;
	struct ovpn_epoch_secret tx_secret;
	struct ovpn_epoch_secret rx_secret;
	struct work_struct tx_work;
	struct work_struct rx_work;
	struct percpu_ref *owner;
};

struct ovpn_epoch_keys *
ovpn_epoch_keys_new(enum ovpn_cipher_alg alg, unsigned int key_size,
		    const u8 *tx_secret, const u8 *rx_secret,
		    struct percpu_ref *owner);
void ovpn_epoch_keys_free(struct ovpn_epoch_keys *keys);

struct ovpn_epoch_key *ovpn_epoch_tx_get(struct ovpn_epoch_keys *keys,
					 unsigned int len, u64 *counter);
struct ovpn_epoch_key *ovpn_epoch_rx_get(struct ovpn_epoch_keys *keys,
					 u16 epoch);
int ovpn_epoch_rx_accept(struct ovpn_epoch_keys *keys,
			 struct ovpn_epoch_key *ek, u64 counter);

/**
 * ovpn_epoch_key_put - return an epoch key borrowed on the data path
 * @ek: the key, or NULL
 *
 * Context: any (the release callback only queues it).
 */
static inline void ovpn_epoch_key_put(struct ovpn_epoch_key *ek)
{
	if (ek)
		percpu_ref_put(&ek->ref);
}

/**
 * ovpn_epoch_tx_wants_reneg - whether a new key is to be asked for now
 * @keys: the epoch keys of the slot
 * @ek: the sending key a packet just got
 *
 * Reads only, below OVPN_EPOCH_RENEG.
 *
 * Context: any.
 * Return: true once, for the first packet sent with an epoch at or past
 * OVPN_EPOCH_RENEG.
 */
static inline bool ovpn_epoch_tx_wants_reneg(struct ovpn_epoch_keys *keys,
					     struct ovpn_epoch_key *ek)
{
	return unlikely(ek->aead.epoch >= OVPN_EPOCH_RENEG) &&
	       !test_bit(OVPN_EPOCH_RENEG_SAID, &keys->flags) &&
	       !test_and_set_bit(OVPN_EPOCH_RENEG_SAID, &keys->flags);
}

#endif /* _NET_OVPN_CRYPTO_EPOCH_H_ */
