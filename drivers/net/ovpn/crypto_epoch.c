// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - the epoch keys of a key slot
 *
 * See crypto_epoch.h for what is kept and when it moves.  The data path
 * (softirq) only moves keys between pointers, under the lock, and queues
 * the work that derives the keys to come; the work derives them without
 * the lock, then publishes them under it if they still fit.
 */

#include <linux/err.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "crypto_epoch.h"
#include "main.h"

/*
 * The last counter an epoch key sends with before the next epoch takes
 * over: openvpn's PACKET_ID_EPOCH_MAX.  The lab's rollover test builds a
 * variant with a small one.
 */
#define OVPN_EPOCH_TX_COUNTER_LIMIT	OVPN_EPOCH_COUNTER_MAX

/*
 * Last step of an epoch key's life, on ovpn_wq a grace period after its
 * release: no reader can still find it (it was unpublished before it was
 * killed) and no packet holds it.
 */
static void ovpn_epoch_key_free(struct llist_node *node)
{
	struct ovpn_epoch_key *ek;

	ek = llist_entry(node, struct ovpn_epoch_key, release_entry);
	ovpn_aead_epoch_key_destroy(&ek->aead);
	ovpn_usage_destroy(&ek->usage);
	percpu_ref_exit(&ek->ref);
	kfree(ek);
}

static struct ovpn_release_batch ovpn_epoch_keys_released =
	OVPN_RELEASE_BATCH_INIT(ovpn_epoch_keys_released, ovpn_epoch_key_free);

/* Called by whoever drops the last reference, in any context. */
static void ovpn_epoch_key_release(struct percpu_ref *ref)
{
	struct ovpn_epoch_key *ek = container_of(ref, struct ovpn_epoch_key,
						 ref);

	ovpn_release_batch_add(&ovpn_epoch_keys_released, &ek->release_entry);
}

/*
 * Drop the initial reference of an epoch key just unpublished (or never
 * published).  Lifetime rule: the caller took it out of its pointer under
 * keys->lock, so this is its one kill.
 */
static void ovpn_epoch_key_kill(struct ovpn_epoch_key *ek)
{
	if (ek)
		percpu_ref_kill(&ek->ref);
}

/*
 * Make the key of epoch @epoch from @es, the secret of an epoch at or
 * before it, which is moved to @epoch on the way; a sending key gets a
 * usage account.  Context: process.
 */
static struct ovpn_epoch_key *ovpn_epoch_key_new(struct ovpn_epoch_keys *keys,
						 struct ovpn_epoch_secret *es,
						 u16 epoch, bool sending)
{
	struct ovpn_epoch_key *ek;
	int ret;

	if (WARN_ON_ONCE(es->epoch > epoch))
		return ERR_PTR(-EINVAL);
	while (es->epoch < epoch) {
		ret = ovpn_epoch_advance(es);
		if (ret)
			return ERR_PTR(ret);
	}

	ek = kzalloc_obj(*ek);
	if (!ek)
		return ERR_PTR(-ENOMEM);
	ovpn_pktid_recv_init(&ek->pid_recv);
	if (sending) {
		ret = ovpn_usage_init(&ek->usage, keys->alg, true);
		if (ret)
			goto free;
	}
	ret = ovpn_aead_epoch_key_init(&ek->aead, keys->alg, keys->key_size,
				       es);
	if (ret)
		goto free_usage;
	/* Last: from here on the key dies only through its reference. */
	ret = percpu_ref_init(&ek->ref, ovpn_epoch_key_release, 0,
			      GFP_KERNEL);
	if (ret)
		goto free_aead;
	return ek;

free_aead:
	ovpn_aead_epoch_key_destroy(&ek->aead);
free_usage:
	ovpn_usage_destroy(&ek->usage);
free:
	kfree(ek);
	return ERR_PTR(ret);
}

static struct ovpn_epoch_key *ovpn_epoch_deref(struct ovpn_epoch_keys *keys,
					       struct ovpn_epoch_key __rcu **p)
{
	return rcu_dereference_protected(*p, lockdep_is_held(&keys->lock));
}

/*
 * Queue @work for @keys.  Lifetime rule: a queued work holds a reference
 * on the key slot, taken before queueing and put when the work ends (or
 * now, if it was queued already).  The caller holds one itself.
 */
static void ovpn_epoch_queue(struct ovpn_epoch_keys *keys,
			     struct work_struct *work)
{
	percpu_ref_get(keys->owner);
	if (!queue_work(ovpn_wq, work))
		percpu_ref_put(keys->owner);
}

/*
 * Publish @ek, a sending key just derived, if it still fits: as the key
 * to send with if the peer is ahead of the current one, or as the next.
 * Returns whether it was published.  Under keys->lock.
 */
static bool ovpn_epoch_tx_publish(struct ovpn_epoch_keys *keys,
				  struct ovpn_epoch_key *ek,
				  struct ovpn_epoch_key **old)
{
	struct ovpn_epoch_key *tx = ovpn_epoch_deref(keys, &keys->tx);
	struct ovpn_epoch_key *next = ovpn_epoch_deref(keys, &keys->tx_next);
	u16 epoch = ek->aead.epoch;

	if (epoch > tx->aead.epoch && epoch <= keys->tx_target) {
		rcu_assign_pointer(keys->tx, ek);
		old[0] = tx;
		if (next && next->aead.epoch <= epoch) {
			RCU_INIT_POINTER(keys->tx_next, NULL);
			old[1] = next;
		}
		return true;
	}
	if (!next && epoch == tx->aead.epoch + 1) {
		rcu_assign_pointer(keys->tx_next, ek);
		return true;
	}
	return false;
}

/*
 * The epoch the TX work is to derive next, or 0 for none: the peer's,
 * when the sender is behind it, else the one after the sending epoch if
 * it has no key yet.  A next key the peer already uses becomes the
 * sending key first.  Under keys->lock.
 */
static u16 ovpn_epoch_tx_wanted(struct ovpn_epoch_keys *keys,
				struct ovpn_epoch_key **old)
{
	struct ovpn_epoch_key *tx = ovpn_epoch_deref(keys, &keys->tx);
	struct ovpn_epoch_key *next = ovpn_epoch_deref(keys, &keys->tx_next);

	if (next && next->aead.epoch <= keys->tx_target) {
		rcu_assign_pointer(keys->tx, next);
		RCU_INIT_POINTER(keys->tx_next, NULL);
		old[0] = tx;
		tx = next;
		next = NULL;
	}
	if (tx->aead.epoch < keys->tx_target)
		return keys->tx_target;
	if (!next && tx->aead.epoch < OVPN_EPOCH_LAST)
		return tx->aead.epoch + 1;
	return 0;
}

static void ovpn_epoch_tx_work(struct work_struct *work)
{
	struct ovpn_epoch_keys *keys;
	struct ovpn_epoch_key *ek, *old[2];
	bool published;
	u16 epoch;

	keys = container_of(work, struct ovpn_epoch_keys, tx_work);
	for (;;) {
		old[0] = NULL;
		spin_lock_bh(&keys->lock);
		epoch = ovpn_epoch_tx_wanted(keys, old);
		spin_unlock_bh(&keys->lock);
		ovpn_epoch_key_kill(old[0]);
		/* The chain only goes forward: a key passed is never made. */
		if (!epoch || epoch <= keys->tx_secret.epoch)
			break;

		ek = ovpn_epoch_key_new(keys, &keys->tx_secret, epoch, true);
		if (IS_ERR(ek)) {
			pr_warn_ratelimited("ovpn: no key for sending epoch %u: %ld\n",
					    epoch, PTR_ERR(ek));
			break;
		}
		old[0] = NULL;
		old[1] = NULL;
		spin_lock_bh(&keys->lock);
		published = ovpn_epoch_tx_publish(keys, ek, old);
		spin_unlock_bh(&keys->lock);
		ovpn_epoch_key_kill(old[0]);
		ovpn_epoch_key_kill(old[1]);
		if (!published) {
			ovpn_epoch_key_kill(ek);
			break;
		}
	}
	percpu_ref_put(keys->owner);
}

/*
 * The first free future slot and the epoch it is for, or
 * OVPN_EPOCH_FUTURE when all are derived.  Under keys->lock.
 */
static unsigned int ovpn_epoch_rx_free_slot(struct ovpn_epoch_keys *keys,
					    u32 *epoch)
{
	struct ovpn_epoch_key *ek = ovpn_epoch_deref(keys, &keys->rx);
	unsigned int i;

	*epoch = ek->aead.epoch + 1;
	for (i = 0; i < OVPN_EPOCH_FUTURE; i++) {
		ek = ovpn_epoch_deref(keys, &keys->rx_future[i]);
		if (!ek)
			break;
		*epoch = ek->aead.epoch + 1;
	}
	return i;
}

static void ovpn_epoch_rx_work(struct work_struct *work)
{
	struct ovpn_epoch_keys *keys;
	struct ovpn_epoch_key *ek;
	unsigned int i;
	u32 epoch;

	keys = container_of(work, struct ovpn_epoch_keys, rx_work);
	for (;;) {
		spin_lock_bh(&keys->lock);
		i = ovpn_epoch_rx_free_slot(keys, &epoch);
		spin_unlock_bh(&keys->lock);
		if (i == OVPN_EPOCH_FUTURE || epoch > OVPN_EPOCH_LAST ||
		    epoch <= keys->rx_secret.epoch)
			break;

		ek = ovpn_epoch_key_new(keys, &keys->rx_secret, epoch, false);
		if (IS_ERR(ek)) {
			pr_warn_ratelimited("ovpn: no key for receiving epoch %u: %ld\n",
					    epoch, PTR_ERR(ek));
			break;
		}
		spin_lock_bh(&keys->lock);
		i = ovpn_epoch_rx_free_slot(keys, &epoch);
		if (i < OVPN_EPOCH_FUTURE && epoch == ek->aead.epoch) {
			rcu_assign_pointer(keys->rx_future[i], ek);
			ek = NULL;
		}
		spin_unlock_bh(&keys->lock);
		if (ek) {
			ovpn_epoch_key_kill(ek);
			break;
		}
	}
	percpu_ref_put(keys->owner);
}

/**
 * ovpn_epoch_keys_new - derive the first epoch keys of a key slot
 * @alg: the cipher
 * @key_size: its key size, in bytes
 * @tx_secret: E1 of the sending direction, OVPN_EPOCH_SECRET_SIZE bytes
 * @rx_secret: E1 of the receiving direction
 * @owner: the key slot's reference, held by the work items while queued
 *
 * Everything the data path needs at first is derived here: epoch 1 and 2
 * to send, epoch 1 and the future ones to receive.
 *
 * Context: process.
 * Return: the keys, or an ERR_PTR() of -ENOMEM or a key's error.
 */
struct ovpn_epoch_keys *
ovpn_epoch_keys_new(enum ovpn_cipher_alg alg, unsigned int key_size,
		    const u8 *tx_secret, const u8 *rx_secret,
		    struct percpu_ref *owner)
{
	/* The lab's rollover test builds a variant starting elsewhere. */
	u16 first = OVPN_EPOCH_FIRST;
	struct ovpn_epoch_keys *keys;
	struct ovpn_epoch_key *ek;
	unsigned int i;

	keys = kzalloc_obj(*keys);
	if (!keys)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&keys->lock);
	keys->alg = alg;
	keys->key_size = key_size;
	keys->owner = owner;
	keys->tx_target = first;
	keys->tx_secret.epoch = OVPN_EPOCH_FIRST;
	memcpy(keys->tx_secret.secret, tx_secret, OVPN_EPOCH_SECRET_SIZE);
	keys->rx_secret.epoch = OVPN_EPOCH_FIRST;
	memcpy(keys->rx_secret.secret, rx_secret, OVPN_EPOCH_SECRET_SIZE);
	INIT_WORK(&keys->tx_work, ovpn_epoch_tx_work);
	INIT_WORK(&keys->rx_work, ovpn_epoch_rx_work);

	/* Unpublished: nobody else sees these pointers yet. */
	ek = ovpn_epoch_key_new(keys, &keys->tx_secret, first, true);
	if (IS_ERR(ek))
		goto err;
	RCU_INIT_POINTER(keys->tx, ek);
	ek = ovpn_epoch_key_new(keys, &keys->rx_secret, first, false);
	if (IS_ERR(ek))
		goto err;
	RCU_INIT_POINTER(keys->rx, ek);
	if (first < OVPN_EPOCH_LAST) {
		ek = ovpn_epoch_key_new(keys, &keys->tx_secret, first + 1,
					true);
		if (IS_ERR(ek))
			goto err;
		RCU_INIT_POINTER(keys->tx_next, ek);
	}
	for (i = 0; i < OVPN_EPOCH_FUTURE && first + 1 + i <= OVPN_EPOCH_LAST;
	     i++) {
		ek = ovpn_epoch_key_new(keys, &keys->rx_secret, first + 1 + i,
					false);
		if (IS_ERR(ek))
			goto err;
		RCU_INIT_POINTER(keys->rx_future[i], ek);
	}
	return keys;

err:
	ovpn_epoch_keys_free(keys);
	return ERR_CAST(ek);
}

/**
 * ovpn_epoch_keys_free - kill every epoch key of a slot and free the rest
 * @keys: the keys, or NULL
 *
 * Called when the key slot is torn down: no packet holds one of its keys
 * any more (each also holds the slot), no work is queued (each holds the
 * slot too), so this is the only user.  Epoch keys die through their
 * references, a grace period later.
 *
 * Context: process.
 */
void ovpn_epoch_keys_free(struct ovpn_epoch_keys *keys)
{
	struct ovpn_epoch_key *ek;
	unsigned int i;

	if (!keys)
		return;
	ovpn_epoch_key_kill(rcu_dereference_protected(keys->tx, 1));
	ovpn_epoch_key_kill(rcu_dereference_protected(keys->tx_next, 1));
	ovpn_epoch_key_kill(rcu_dereference_protected(keys->rx, 1));
	ovpn_epoch_key_kill(rcu_dereference_protected(keys->rx_retiring, 1));
	for (i = 0; i < OVPN_EPOCH_FUTURE; i++) {
		ek = rcu_dereference_protected(keys->rx_future[i], 1);
		ovpn_epoch_key_kill(ek);
	}
	/* Every key of both directions from here on follows from these. */
	kfree_sensitive(keys);
}

/*
 * @ek, the sending key, is used up: make its next the sending key, and
 * have the one after derived.  Returns 0 if the sending key changed (by
 * this call or another), -EAGAIN if the next key is not derived yet,
 * -ERANGE after the last epoch.  Context: softirq or BH disabled.
 */
static int ovpn_epoch_tx_spent(struct ovpn_epoch_keys *keys,
			       struct ovpn_epoch_key *ek)
{
	struct ovpn_epoch_key *next;
	int ret = 0;

	spin_lock_bh(&keys->lock);
	if (rcu_access_pointer(keys->tx) != ek)
		goto unlock;
	next = ovpn_epoch_deref(keys, &keys->tx_next);
	if (!next) {
		ret = ek->aead.epoch == OVPN_EPOCH_LAST ? -ERANGE : -EAGAIN;
		goto unlock;
	}
	rcu_assign_pointer(keys->tx, next);
	RCU_INIT_POINTER(keys->tx_next, NULL);
	spin_unlock_bh(&keys->lock);

	ovpn_epoch_key_kill(ek);
	ovpn_epoch_queue(keys, &keys->tx_work);
	return 0;

unlock:
	spin_unlock_bh(&keys->lock);
	return ret;
}

/**
 * ovpn_epoch_tx_get - borrow the sending key and a counter for a packet
 * @keys: the epoch keys of the slot
 * @len: the packet's length, for the usage account
 * @counter: where the packet's counter goes
 *
 * A key whose counters or usage are spent gives way to the next epoch's
 * here, without waiting: that one was derived ahead.
 *
 * Context: softirq or BH disabled.
 * Return: the key with one reference, for ovpn_epoch_key_put(); or
 * ERR_PTR(-ERANGE) when the last epoch is spent (the slot must go), or
 * ERR_PTR(-EAGAIN) when the next epoch's key is not derived yet (the
 * packet is dropped; only a test's tiny epochs get there).
 */
struct ovpn_epoch_key *ovpn_epoch_tx_get(struct ovpn_epoch_keys *keys,
					 unsigned int len, u64 *counter)
{
	struct ovpn_epoch_key *ek;
	unsigned int tries;
	s64 seq;
	int ret;

	for (tries = 0; tries < 4; tries++) {
		rcu_read_lock();
		ek = rcu_dereference(keys->tx);
		if (unlikely(!percpu_ref_tryget_live_rcu(&ek->ref))) {
			/* Replaced under our feet: read the new one. */
			rcu_read_unlock();
			continue;
		}
		rcu_read_unlock();

		seq = atomic64_inc_return(&ek->seq);
		if (likely(seq <= OVPN_EPOCH_TX_COUNTER_LIMIT &&
			   ovpn_usage_add(&ek->usage, len, seq) !=
			   OVPN_USAGE_SPENT)) {
			*counter = seq;
			return ek;
		}
		ret = ovpn_epoch_tx_spent(keys, ek);
		ovpn_epoch_key_put(ek);
		if (ret)
			return ERR_PTR(ret);
	}
	return ERR_PTR(-EAGAIN);
}

/**
 * ovpn_epoch_rx_get - borrow the receiving key of an epoch
 * @keys: the epoch keys of the slot
 * @epoch: the epoch a received packet claims
 *
 * Context: softirq or BH disabled.
 * Return: the key with one reference, for ovpn_epoch_key_put(), or NULL
 * if the epoch is not the peer's current one, the one before it, or one
 * of the future ones derived.
 */
struct ovpn_epoch_key *ovpn_epoch_rx_get(struct ovpn_epoch_keys *keys,
					 u16 epoch)
{
	struct ovpn_epoch_key *ek, *found = NULL;
	unsigned int i;

	rcu_read_lock();
	ek = rcu_dereference(keys->rx);
	if (ek->aead.epoch == epoch) {
		found = ek;
	} else if (epoch > ek->aead.epoch) {
		i = epoch - ek->aead.epoch - 1;
		if (i < OVPN_EPOCH_FUTURE)
			found = rcu_dereference(keys->rx_future[i]);
	} else {
		found = rcu_dereference(keys->rx_retiring);
	}
	/*
	 * A future key may sit one slot off while the window moves; the
	 * epoch it was derived for is what counts.
	 */
	if (found && (found->aead.epoch != epoch ||
		      !percpu_ref_tryget_live_rcu(&found->ref)))
		found = NULL;
	rcu_read_unlock();

	return found;
}

/*
 * A packet of the future epoch of @ek authenticated: make it the current
 * receiving epoch, the current one the retiring one, and forget the
 * epochs before it; the sender follows.  Context: softirq or BH disabled.
 */
static void ovpn_epoch_rx_move(struct ovpn_epoch_keys *keys,
			       struct ovpn_epoch_key *ek)
{
	struct ovpn_epoch_key *old[OVPN_EPOCH_FUTURE + 1] = {};
	struct ovpn_epoch_key *next;
	unsigned int i, j, n = 0;
	bool tx_behind;

	spin_lock_bh(&keys->lock);
	for (j = 0; j < OVPN_EPOCH_FUTURE; j++)
		if (rcu_access_pointer(keys->rx_future[j]) == ek)
			break;
	if (j == OVPN_EPOCH_FUTURE) {
		/* Another packet of that epoch moved it first. */
		spin_unlock_bh(&keys->lock);
		return;
	}

	old[n++] = ovpn_epoch_deref(keys, &keys->rx_retiring);
	rcu_assign_pointer(keys->rx_retiring,
			   ovpn_epoch_deref(keys, &keys->rx));
	rcu_assign_pointer(keys->rx, ek);
	for (i = 0; i < j; i++)
		old[n++] = ovpn_epoch_deref(keys, &keys->rx_future[i]);
	for (i = 0; i < OVPN_EPOCH_FUTURE; i++) {
		next = NULL;
		if (i + j + 1 < OVPN_EPOCH_FUTURE)
			next = ovpn_epoch_deref(keys,
						&keys->rx_future[i + j + 1]);
		rcu_assign_pointer(keys->rx_future[i], next);
	}
	if (keys->tx_target < ek->aead.epoch)
		keys->tx_target = ek->aead.epoch;
	tx_behind = ovpn_epoch_deref(keys, &keys->tx)->aead.epoch <
		    keys->tx_target;
	spin_unlock_bh(&keys->lock);

	for (i = 0; i < n; i++)
		ovpn_epoch_key_kill(old[i]);
	ovpn_epoch_queue(keys, &keys->rx_work);
	if (tx_behind)
		ovpn_epoch_queue(keys, &keys->tx_work);
}

/**
 * ovpn_epoch_rx_accept - take an authenticated packet's counter
 * @keys: the epoch keys of the slot
 * @ek: the key that authenticated it
 * @counter: its counter
 *
 * Only once the packet authenticated: a packet of a future epoch moves
 * the receiver (and the sender) to it, then every packet's counter is
 * checked against its epoch's replay window.
 *
 * Context: softirq or BH disabled.
 * Return: as ovpn_pktid_recv().
 */
int ovpn_epoch_rx_accept(struct ovpn_epoch_keys *keys,
			 struct ovpn_epoch_key *ek, u64 counter)
{
	struct ovpn_epoch_key *rx;

	rcu_read_lock();
	rx = rcu_dereference(keys->rx);
	if (unlikely(ek->aead.epoch > rx->aead.epoch))
		ovpn_epoch_rx_move(keys, ek);
	rcu_read_unlock();

	return ovpn_pktid_recv(&ek->pid_recv, counter);
}
