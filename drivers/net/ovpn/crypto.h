/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - key slots
 *
 * A peer has two key slots, primary and secondary.  Packets are encrypted
 * with the primary key; received packets pick the slot whose key id
 * matches the one in their header, so a key being rolled over keeps
 * decrypting while the new one takes over.
 *
 * Lifetime of a key slot (struct ovpn_crypto_key_slot):
 * - created by ovpn_crypto_key_install() (the transforms are made by
 *   aead.c) with its percpu_ref initialised last; published in a slot of
 *   struct ovpn_crypto_state under its lock;
 * - borrowed by the data path under rcu_read_lock() with
 *   percpu_ref_tryget_live_rcu() (ovpn_crypto_key_primary_get(),
 *   ovpn_crypto_key_id_to_slot()), and put once the AEAD operation that
 *   used it completed, before the peer's reference is put;
 * - removed from its slot exactly once, under the state's lock, and only
 *   then its initial reference is killed (ovpn_crypto_key_slot_kill());
 * - when the last borrower is gone the release callback queues the
 *   freeing on the module workqueue after an RCU grace period: the AEAD
 *   transforms may only be freed in process context, and
 *   percpu_ref_exit() runs last.
 */

#ifndef _NET_OVPN_CRYPTO_H_
#define _NET_OVPN_CRYPTO_H_

#include <linux/llist.h>
#include <linux/percpu-refcount.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <uapi/linux/ovpn.h>

#include "aead.h"
#include "crypto_epoch.h"
#include "pktid.h"
#include "usage.h"

/**
 * struct ovpn_key_config - a key as userspace installs it
 * @cipher_alg: AEAD algorithm
 * @key_id: key id carried by the packets this key protects (0-7)
 * @encrypt: material for packets to the peer
 * @decrypt: material for packets from the peer
 *
 * Epoch secrets in both directions select the epoch data format.
 */
struct ovpn_key_config {
	enum ovpn_cipher_alg cipher_alg;
	u8 key_id;
	struct ovpn_key_direction encrypt;
	struct ovpn_key_direction decrypt;
};

/**
 * struct ovpn_crypto_key_slot - a key and everything that dies with it
 * @key_id: key id of the packets it protects
 * @cipher_alg: AEAD algorithm
 * @encrypt: the key for packets to the peer (DATA_V2)
 * @decrypt: the key for packets from the peer (DATA_V2)
 * @epochs: the keys of the epoch data format, NULL for DATA_V2; its
 *	    sending and receiving packet ids too, and its sending usage
 * @ref: borrowers on the data path; see the lifetime rules above
 * @release_entry: link in the batch of released slots to free
 * @pid_xmit: sender packet ids (written by every sending CPU); DATA_V2
 * @usage_xmit: what @encrypt has protected (usage.h); DATA_V2
 * @pid_recv: receiver replay window (written by every receiving CPU);
 *	      DATA_V2
 * @usage_recv: what @decrypt has protected; DATA_V2
 * @forged: packets that claimed @decrypt and failed its authentication
 *
 * The two packet-id states sit on cache lines of their own, away from
 * the read-mostly fields every packet reads; each usage account shares
 * them, as the packets that read it have just written the packet ids.
 * @forged, read by every received packet and written only by forgeries,
 * follows the receiving account, on the line of its trigger.
 */
struct ovpn_crypto_key_slot {
	u8 key_id;
	enum ovpn_cipher_alg cipher_alg;
	struct ovpn_aead_key encrypt;
	struct ovpn_aead_key decrypt;
	struct ovpn_epoch_keys *epochs;
	struct percpu_ref ref;
	struct llist_node release_entry;

	struct ovpn_pktid_xmit pid_xmit ____cacheline_aligned_in_smp;
	struct ovpn_usage usage_xmit;
	struct ovpn_pktid_recv pid_recv ____cacheline_aligned_in_smp;
	struct ovpn_usage usage_recv;
	atomic64_t forged;
};

/**
 * struct ovpn_crypto_state - a peer's two key slots
 * @slots: the key slots; RCU-protected, written under @lock
 * @primary_idx: index of the primary slot in @slots; written under @lock,
 *		 read locklessly with READ_ONCE()
 * @lock: serializes every change of @slots and @primary_idx
 */
struct ovpn_crypto_state {
	struct ovpn_crypto_key_slot __rcu *slots[2];
	u8 primary_idx;
	spinlock_t lock; /* serializes writers of @slots and @primary_idx */
};

void ovpn_crypto_state_init(struct ovpn_crypto_state *cs);
void ovpn_crypto_state_release(struct ovpn_crypto_state *cs);

int __must_check ovpn_crypto_key_install(struct ovpn_crypto_state *cs,
					 enum ovpn_key_slot slot,
					 const struct ovpn_key_config *kc);
bool ovpn_crypto_key_delete(struct ovpn_crypto_state *cs,
			    enum ovpn_key_slot slot);
void ovpn_crypto_key_swap(struct ovpn_crypto_state *cs);
bool ovpn_crypto_key_kill_exhausted(struct ovpn_crypto_state *cs,
				    struct ovpn_crypto_key_slot *exhausted);
int ovpn_crypto_key_get_info(struct ovpn_crypto_state *cs,
			     enum ovpn_key_slot slot,
			     enum ovpn_cipher_alg *alg, u8 *key_id);

struct ovpn_crypto_key_slot * __must_check
ovpn_crypto_key_primary_get(struct ovpn_crypto_state *cs);
struct ovpn_crypto_key_slot * __must_check
ovpn_crypto_key_id_to_slot(struct ovpn_crypto_state *cs, u8 key_id);

/**
 * ovpn_crypto_key_slot_put - return a key slot borrowed on the data path
 * @ks: the key slot
 *
 * Context: any, also hard or soft interrupt (the release callback only
 * queues work).
 */
static inline void ovpn_crypto_key_slot_put(struct ovpn_crypto_key_slot *ks)
{
	percpu_ref_put(&ks->ref);
}

#endif /* _NET_OVPN_CRYPTO_H_ */
