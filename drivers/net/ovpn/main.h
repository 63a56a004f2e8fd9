/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - module
 *
 * What the module shares with every file: its workqueue, and the batched
 * teardown of released objects that runs on it.
 */

#ifndef _NET_OVPN_MAIN_H_
#define _NET_OVPN_MAIN_H_

#include <linux/llist.h>
#include <linux/workqueue.h>

/*
 * The module's own workqueue: every deferred teardown (RCU-deferred object
 * freeing, peer removal requested from atomic context, keepalive) runs
 * here, so that module exit can drain it before the code goes away.
 */
extern struct workqueue_struct *ovpn_wq;

/**
 * struct ovpn_release_batch - objects to tear down a grace period after
 *			       their release, together
 * @released: the objects released since the last batch began
 * @work: tears a batch down on ovpn_wq
 * @teardown: tears one object down, given its link in @released;
 *	      process context, may sleep
 *
 * A peer or key slot whose last reference is gone may still be seen by
 * lockless readers that found it before it was unpublished: it is torn
 * down after a grace period.  A device going away releases 100,000 peers
 * and their keys at once: one grace period serves every object released
 * by the time the batch begins, instead of one RCU callback each.
 * Batches are static, initialised with OVPN_RELEASE_BATCH_INIT().
 */
struct ovpn_release_batch {
	struct llist_head released;
	struct work_struct work;
	void (*teardown)(struct llist_node *node);
};

void ovpn_release_batch_work(struct work_struct *work);

/* @released starts empty, as a static object is zeroed. */
#define OVPN_RELEASE_BATCH_INIT(batch, fn) {				\
	.work = __WORK_INITIALIZER((batch).work, ovpn_release_batch_work), \
	.teardown = (fn),						\
}

/**
 * ovpn_release_batch_add - queue a released object for its teardown
 * @batch: the batch of its kind
 * @node: its link
 *
 * Context: any.
 */
static inline void ovpn_release_batch_add(struct ovpn_release_batch *batch,
					  struct llist_node *node)
{
	/* The first object of a batch queues the work. */
	if (llist_add(node, &batch->released))
		queue_work(ovpn_wq, &batch->work);
}

#endif /* _NET_OVPN_MAIN_H_ */
