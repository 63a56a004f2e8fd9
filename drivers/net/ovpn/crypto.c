// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - key slots
 *
 * Installing, swapping and removing the two key slots of a peer, and
 * handing them out to the data path.  Control operations serialize on
 * the state's spinlock; the data path only reads RCU pointers and takes
 * a per-CPU reference, so it never writes a cache line shared with other
 * CPUs (the packet-id counter aside).
 *
 * Memory: besides the slot itself, each live key slot costs one unsigned
 * long per possible CPU for its percpu_ref and one struct percpu_ref_data;
 * an AES-GCM key adds two s32 per possible CPU for its usage accounts.
 */

#include <linux/bitfield.h>
#include <linux/bug.h>
#include <linux/percpu-refcount.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "crypto.h"
#include "main.h"
#include "proto.h"

/*
 * Last step of a key slot's life, on ovpn_wq, an RCU grace period after
 * the last reference went away: no reader can still see the slot (it was
 * unpublished before it was killed) and no packet holds it any more.
 */
static void ovpn_crypto_key_slot_free(struct llist_node *node)
{
	struct ovpn_crypto_key_slot *ks;

	ks = llist_entry(node, struct ovpn_crypto_key_slot, release_entry);
	ovpn_epoch_keys_free(ks->epochs);
	ovpn_aead_key_destroy(&ks->decrypt);
	ovpn_aead_key_destroy(&ks->encrypt);
	ovpn_usage_destroy(&ks->usage_recv);
	ovpn_usage_destroy(&ks->usage_xmit);
	percpu_ref_exit(&ks->ref);
	kfree(ks);
}

static struct ovpn_release_batch ovpn_key_slots_released =
	OVPN_RELEASE_BATCH_INIT(ovpn_key_slots_released,
				ovpn_crypto_key_slot_free);

/*
 * Called by whoever drops the last reference: an AEAD completion in
 * softirq, the data path, or the RCU callback that finishes
 * percpu_ref_kill().  Freeing the transforms may sleep, and readers under
 * rcu_read_lock() may still hold the pointer without a reference (see
 * ovpn_crypto_key_get_info()), so only queue the slot for its batch,
 * which is freed behind a grace period.
 */
static void ovpn_crypto_key_slot_release(struct percpu_ref *ref)
{
	struct ovpn_crypto_key_slot *ks;

	ks = container_of(ref, struct ovpn_crypto_key_slot, ref);
	ovpn_release_batch_add(&ovpn_key_slots_released, &ks->release_entry);
}

/*
 * Build a key slot from a key configuration.  It comes back with its
 * initial reference, unpublished; from then on it is only destroyed by
 * killing that reference (see crypto.h).  Context: process (GFP_KERNEL).
 * Returns the slot, ERR_PTR(-EINVAL) for a bad key id, or an error of
 * ovpn_aead_key_init().
 */
static struct ovpn_crypto_key_slot *
ovpn_crypto_key_slot_new(const struct ovpn_key_config *kc)
{
	struct ovpn_crypto_key_slot *ks;
	int ret;

	if (kc->key_id > FIELD_MAX(OVPN_KEY_ID_MASK))
		return ERR_PTR(-EINVAL);

	ks = kzalloc_obj(*ks);
	if (!ks)
		return ERR_PTR(-ENOMEM);

	ks->key_id = kc->key_id;
	ks->cipher_alg = kc->cipher_alg;
	if (kc->encrypt.epoch_secret) {
		/*
		 * Each epoch key has its own packet ids, replay window and
		 * usage account (crypto_epoch.h): the slot's are never used
		 * and stay zeroed, which ovpn_usage_destroy() takes.  The
		 * work items of the keys hold the slot by ks->ref.
		 */
		ks->epochs = ovpn_epoch_keys_new(kc->cipher_alg,
						 kc->encrypt.cipher_key_size,
						 kc->encrypt.epoch_secret,
						 kc->decrypt.epoch_secret,
						 &ks->ref);
		ret = PTR_ERR_OR_ZERO(ks->epochs);
		if (ret) {
			ks->epochs = NULL;
			goto free_usage;
		}
	} else {
		ovpn_pktid_xmit_init(&ks->pid_xmit);
		ovpn_pktid_recv_init(&ks->pid_recv);
		ret = ovpn_usage_init(&ks->usage_xmit, kc->cipher_alg, true);
		if (ret)
			goto free_usage;
		ret = ovpn_usage_init(&ks->usage_recv, kc->cipher_alg, false);
		if (ret)
			goto free_usage;
		ret = ovpn_aead_key_init(&ks->encrypt, kc->cipher_alg,
					 &kc->encrypt);
		if (ret)
			goto free_usage;
		ret = ovpn_aead_key_init(&ks->decrypt, kc->cipher_alg,
					 &kc->decrypt);
		if (ret)
			goto free_encrypt;
	}

	/* Last: from here on the slot dies only through its reference. */
	ret = percpu_ref_init(&ks->ref, ovpn_crypto_key_slot_release, 0,
			      GFP_KERNEL);
	if (ret)
		goto free_decrypt;
	return ks;

free_decrypt:
	/* Nothing queued work yet: the slot was never published. */
	ovpn_epoch_keys_free(ks->epochs);
	ovpn_aead_key_destroy(&ks->decrypt);
free_encrypt:
	ovpn_aead_key_destroy(&ks->encrypt);
free_usage:
	ovpn_usage_destroy(&ks->usage_recv);
	ovpn_usage_destroy(&ks->usage_xmit);
	kfree(ks);
	return ERR_PTR(ret);
}

/*
 * Drop the initial reference of a key slot that was just unpublished.
 * Lifetime rule: the caller removed @ks from its state pointer under
 * cs->lock, so this is the one kill of that slot; packets that borrowed
 * it keep it alive until they put it, and new lookups can no longer
 * find it.  Does not sleep, so it may run under the lock or after it.
 */
static void ovpn_crypto_key_slot_kill(struct ovpn_crypto_key_slot *ks)
{
	if (ks)
		percpu_ref_kill(&ks->ref);
}

/* Index in cs->slots of @slot; @primary_idx is read by the caller. */
static unsigned int ovpn_crypto_slot_idx(u8 primary_idx,
					 enum ovpn_key_slot slot)
{
	return slot == OVPN_KEY_SLOT_PRIMARY ? primary_idx : !primary_idx;
}

/*
 * Put @ks (NULL to empty it) in @slot and kill what was there.  The slot
 * is picked under cs->lock so that a concurrent swap cannot make this
 * replace the other key.  Packets holding the old key finish with it: the
 * kill only drops the slot's initial reference.  Returns whether the slot
 * held a key.
 */
static bool ovpn_crypto_slot_replace(struct ovpn_crypto_state *cs,
				     enum ovpn_key_slot slot,
				     struct ovpn_crypto_key_slot *ks)
{
	struct ovpn_crypto_key_slot *old;
	unsigned int idx;

	spin_lock_bh(&cs->lock);
	idx = ovpn_crypto_slot_idx(cs->primary_idx, slot);
	old = rcu_replace_pointer(cs->slots[idx], ks,
				  lockdep_is_held(&cs->lock));
	spin_unlock_bh(&cs->lock);

	ovpn_crypto_key_slot_kill(old);
	return old;
}

/**
 * ovpn_crypto_state_init - prepare the key slots of a new peer
 * @cs: the crypto state
 *
 * Context: process; the peer is not published yet.
 */
void ovpn_crypto_state_init(struct ovpn_crypto_state *cs)
{
	RCU_INIT_POINTER(cs->slots[0], NULL);
	RCU_INIT_POINTER(cs->slots[1], NULL);
	cs->primary_idx = 0;
	spin_lock_init(&cs->lock);
}

/**
 * ovpn_crypto_state_release - remove and kill both key slots of a peer
 * @cs: the crypto state
 *
 * Called when the peer is torn down.  Packets still holding a slot keep
 * it alive until their AEAD operation completed.
 *
 * Context: process.
 */
void ovpn_crypto_state_release(struct ovpn_crypto_state *cs)
{
	struct ovpn_crypto_key_slot *old[2];
	unsigned int i;

	spin_lock_bh(&cs->lock);
	for (i = 0; i < ARRAY_SIZE(old); i++)
		old[i] = rcu_replace_pointer(cs->slots[i], NULL,
					     lockdep_is_held(&cs->lock));
	spin_unlock_bh(&cs->lock);

	for (i = 0; i < ARRAY_SIZE(old); i++)
		ovpn_crypto_key_slot_kill(old[i]);
}

/**
 * ovpn_crypto_key_install - create a key slot and put it in a slot
 * @cs: the crypto state
 * @slot: OVPN_KEY_SLOT_PRIMARY or OVPN_KEY_SLOT_SECONDARY
 * @kc: the key material
 *
 * A key already in @slot is replaced and killed; packets in flight with
 * it finish with it.
 *
 * Context: process (allocates the AEAD transforms).
 * Return: 0, or a negative error from ovpn_crypto_key_slot_new().
 */
int ovpn_crypto_key_install(struct ovpn_crypto_state *cs,
			    enum ovpn_key_slot slot,
			    const struct ovpn_key_config *kc)
{
	struct ovpn_crypto_key_slot *ks;

	ks = ovpn_crypto_key_slot_new(kc);
	if (IS_ERR(ks))
		return PTR_ERR(ks);

	ovpn_crypto_slot_replace(cs, slot, ks);
	return 0;
}

/**
 * ovpn_crypto_key_delete - empty a key slot
 * @cs: the crypto state
 * @slot: OVPN_KEY_SLOT_PRIMARY or OVPN_KEY_SLOT_SECONDARY
 *
 * Context: process or softirq.
 * Return: true if the slot held a key.
 */
bool ovpn_crypto_key_delete(struct ovpn_crypto_state *cs,
			    enum ovpn_key_slot slot)
{
	return ovpn_crypto_slot_replace(cs, slot, NULL);
}

/**
 * ovpn_crypto_key_swap - exchange the primary and the secondary slot
 * @cs: the crypto state
 *
 * Done even if the secondary slot is empty: userspace relies on it to
 * retire the old primary key, which then waits in the secondary slot.
 * The data path reads the index locklessly; a packet racing with the
 * swap uses either key, both of which are valid.
 *
 * Context: process or softirq.
 */
void ovpn_crypto_key_swap(struct ovpn_crypto_state *cs)
{
	spin_lock_bh(&cs->lock);
	WRITE_ONCE(cs->primary_idx, !cs->primary_idx);
	spin_unlock_bh(&cs->lock);
}

/**
 * ovpn_crypto_key_kill_exhausted - remove a key that ran out of packet ids
 * @cs: the crypto state
 * @exhausted: the key slot that could not give another packet id
 *
 * The slot is looked up by identity, not by key id: by the time the
 * failed packet gets here, userspace may have installed a new key with
 * the same id, which must survive.
 *
 * Context: process or softirq (not hard interrupt).
 * Return: true if the key was still installed and is now removed.
 */
bool ovpn_crypto_key_kill_exhausted(struct ovpn_crypto_state *cs,
				    struct ovpn_crypto_key_slot *exhausted)
{
	struct ovpn_crypto_key_slot *ks = NULL;
	unsigned int i;

	spin_lock_bh(&cs->lock);
	for (i = 0; i < ARRAY_SIZE(cs->slots); i++) {
		if (rcu_access_pointer(cs->slots[i]) == exhausted) {
			RCU_INIT_POINTER(cs->slots[i], NULL);
			ks = exhausted;
			break;
		}
	}
	spin_unlock_bh(&cs->lock);

	ovpn_crypto_key_slot_kill(ks);
	return ks;
}

/**
 * ovpn_crypto_key_get_info - describe the key in a slot
 * @cs: the crypto state
 * @slot: OVPN_KEY_SLOT_PRIMARY or OVPN_KEY_SLOT_SECONDARY
 * @alg: where to store the key's algorithm
 * @key_id: where to store the key's id
 *
 * Context: any; takes rcu_read_lock().
 * Return: 0, or -ENOENT if the slot is empty.
 */
int ovpn_crypto_key_get_info(struct ovpn_crypto_state *cs,
			     enum ovpn_key_slot slot,
			     enum ovpn_cipher_alg *alg, u8 *key_id)
{
	struct ovpn_crypto_key_slot *ks;
	unsigned int idx;
	int ret = 0;

	rcu_read_lock();
	idx = ovpn_crypto_slot_idx(READ_ONCE(cs->primary_idx), slot);
	/*
	 * No reference is needed to read two constant fields: a slot is
	 * freed only a grace period after its last put, which comes after
	 * it was unpublished, hence after this reader saw it.
	 */
	ks = rcu_dereference(cs->slots[idx]);
	if (ks) {
		*alg = ks->cipher_alg;
		*key_id = ks->key_id;
	} else {
		ret = -ENOENT;
	}
	rcu_read_unlock();

	return ret;
}

/* Borrow @ks unless it is gone or being killed; under rcu_read_lock(). */
static struct ovpn_crypto_key_slot *
ovpn_crypto_key_slot_tryget(struct ovpn_crypto_key_slot *ks)
{
	if (ks && percpu_ref_tryget_live_rcu(&ks->ref))
		return ks;
	return NULL;
}

/**
 * ovpn_crypto_key_primary_get - borrow the key that encrypts
 * @cs: the crypto state
 *
 * Context: any; takes rcu_read_lock().
 * Return: the primary key slot with one reference, to be returned with
 * ovpn_crypto_key_slot_put(), or NULL if there is no usable primary key.
 */
struct ovpn_crypto_key_slot *
ovpn_crypto_key_primary_get(struct ovpn_crypto_state *cs)
{
	struct ovpn_crypto_key_slot *ks;

	rcu_read_lock();
	ks = rcu_dereference(cs->slots[READ_ONCE(cs->primary_idx)]);
	ks = ovpn_crypto_key_slot_tryget(ks);
	rcu_read_unlock();

	return ks;
}

/**
 * ovpn_crypto_key_id_to_slot - borrow the key that decrypts a key id
 * @cs: the crypto state
 * @key_id: the key id from a received packet's header
 *
 * The primary slot is tried first; a slot whose key is being killed is
 * skipped.
 *
 * Context: any; takes rcu_read_lock().
 * Return: the key slot with one reference, to be returned with
 * ovpn_crypto_key_slot_put(), or NULL if no usable key has that id.
 */
struct ovpn_crypto_key_slot *
ovpn_crypto_key_id_to_slot(struct ovpn_crypto_state *cs, u8 key_id)
{
	struct ovpn_crypto_key_slot *ks, *found = NULL;
	unsigned int i, idx;
	u8 primary_idx;

	rcu_read_lock();
	primary_idx = READ_ONCE(cs->primary_idx);
	for (i = 0; i < ARRAY_SIZE(cs->slots); i++) {
		idx = ovpn_crypto_slot_idx(primary_idx, i);
		ks = rcu_dereference(cs->slots[idx]);
		if (ks && ks->key_id == key_id) {
			found = ovpn_crypto_key_slot_tryget(ks);
			if (found)
				break;
		}
	}
	rcu_read_unlock();

	return found;
}
