// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - parallel encryption and decryption
 *
 * See queue.h for the shape.  Why not padata, which IPsec's pcrypt uses
 * for the same job: padata keeps the order of every object of an
 * instance, so one peer's slow packet would hold every other peer's
 * delivery, and its job (struct padata_priv) does not fit in skb->cb,
 * so each packet would need an allocation.  Here the order is per peer
 * and what a packet in flight needs is in its control block.
 *
 * Which devices can: P2P ones, on a machine with more than one CPU.  A
 * P2P tunnel is one outer flow, which RSS or RPS hands to one CPU however
 * many the machine has; an MP server's peers are as many flows, which RSS
 * and RPS already spread.  Which do: those whose "parallel-crypto"
 * private flag (ethtool) is on; it is off by default.  Measured, a packet
 * on this path costs the kernel half as many instructions again as one
 * processed inline, mostly in waking the workers of idle CPUs, for a
 * sixth fewer on the busiest CPU when one light flow is the only load
 * (Documentation/networking/ovpn-performance.rst): worth it for a tunnel
 * that saturates a CPU, a loss for the others.
 */

#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "aead.h"
#include "io.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "queue.h"
#include "skb.h"

/*
 * Packets a device may have waiting for their AEAD, per direction, and
 * packets a peer may have in flight, per direction: beyond either, a
 * packet is dropped and counted.  The second is no smaller than the
 * first, so that one peer may use all of its device's ring.
 */
#define OVPN_CRYPT_RING_SIZE	1024
#define OVPN_ORDERED_QUEUE_SIZE	1024

/* Packets posted by an ordered queue's work between two breaks. */
#define OVPN_ORDERED_BATCH	64

/*
 * The workers: bound to their CPUs (the point is to use each one), and
 * busy with crypto for long stretches, which should not hold up the other
 * work items of their CPU's pool.  The transmit path may be what memory
 * reclaim waits for (swap over a tunnel), hence a rescuer.
 */
static struct workqueue_struct *ovpn_crypt_wq;

/*
 * The CPU each CPU handed its last packet to.  Per CPU, so that choosing
 * a worker writes no line that another CPU writes too.
 */
static DEFINE_PER_CPU(int, ovpn_crypt_cursor);

/*
 * The next online CPU after this CPU's last choice, round robin.  On
 * PREEMPT_RT, disabling BH does not disable preemption: a task that runs
 * in between may make the same choice, which costs nothing.
 */
static int ovpn_crypt_next_cpu(void)
{
	int cpu;

	cpu = cpumask_next(this_cpu_read(ovpn_crypt_cursor), cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	this_cpu_write(ovpn_crypt_cursor, cpu);
	return cpu;
}

/*
 * A worker: run the AEAD of the packets in its ring, taken in any order
 * and by any number of workers at once.  Each ends in ovpn_crypt_done(),
 * now or from the AEAD's completion.
 */
static void ovpn_crypt_work(struct work_struct *work)
{
	struct ovpn_crypt_worker *worker;
	struct ovpn_crypt_ring *cr;
	struct sk_buff *skb;

	worker = container_of(work, struct ovpn_crypt_worker, work);
	cr = worker->ring;
	while ((skb = ptr_ring_consume_bh(&cr->ring))) {
		/* As on the inline path: the AEAD runs with BH disabled. */
		local_bh_disable();
		if (cr->encrypt)
			ovpn_encrypt_run(skb);
		else
			ovpn_decrypt_run(skb);
		local_bh_enable();
		cond_resched();
	}
}

/*
 * The packet at the head of @oq, taken out if it is through the AEAD;
 * NULL if the queue is empty or its head is not.  Context: BH disabled.
 */
static struct sk_buff *ovpn_ordered_next(struct ovpn_ordered_queue *oq)
{
	struct sk_buff *skb;

	spin_lock(&oq->ring.consumer_lock);
	skb = __ptr_ring_peek(&oq->ring);
	/* Pairs with the release in ovpn_crypt_done(). */
	if (skb && smp_load_acquire(&ovpn_skb_cb(skb)->crypt_done))
		__ptr_ring_discard_one(&oq->ring);
	else
		skb = NULL;
	spin_unlock(&oq->ring.consumer_lock);
	return skb;
}

/*
 * An ordered queue's work: post the packets at its head that are through
 * the AEAD, in their order, and stop at the first that is not; its
 * completion queues the work again.  A work item never runs twice at
 * once, so the queue has one consumer.
 */
static void ovpn_ordered_work(struct work_struct *work)
{
	struct ovpn_ordered_queue *oq;
	struct ovpn_peer *peer;
	struct sk_buff *skb;
	unsigned int n = 0;
	int ret;

	oq = container_of(work, struct ovpn_ordered_queue, work);
	peer = oq->peer;
	/* The post functions run with BH disabled (see io.h). */
	local_bh_disable();
	while ((skb = ovpn_ordered_next(oq))) {
		ret = ovpn_skb_cb(skb)->crypt_ret;
		if (oq->encrypt)
			ovpn_encrypt_post(skb, ret);
		else
			ovpn_decrypt_post(skb, ret);
		/* Let the stack take what GRO collected, and others run. */
		if (!(++n % OVPN_ORDERED_BATCH)) {
			local_bh_enable();
			cond_resched();
			local_bh_disable();
		}
	}
	local_bh_enable();
	/* The reference taken when the work was queued; last. */
	ovpn_peer_put(peer);
}

/* @peer's ordered queue of one direction. */
static struct ovpn_ordered_queue *ovpn_ordered_queue_of(struct ovpn_peer *peer,
							bool encrypt)
{
	return encrypt ? &peer->queues->tx : &peer->queues->rx;
}

/*
 * The CPU an ordered queue's work runs on: always the same one, as long
 * as it is online.  What comes after the queue has per-CPU queues of its
 * own: the backlog netif_rx() fills (a veth), the TX queue XPS picks by
 * CPU (a NIC), the device's GRO cells.  Packets of one peer posted from
 * two CPUs could leave those in another order than they were posted.
 */
static int ovpn_ordered_cpu(const struct ovpn_ordered_queue *oq)
{
	if (likely(cpu_online(oq->cpu)))
		return oq->cpu;
	return cpumask_first(cpu_online_mask);
}

/**
 * ovpn_crypt_done - end of a queued packet's AEAD
 * @data: the packet
 * @ret: the AEAD's result
 *
 * The AEAD completion of the parallel path, called by the worker when the
 * AEAD returned, or by the crypto layer when it completes asynchronously.
 * Gives back its AEAD request, marks the packet and queues its ordered
 * queue's work, which posts it in its turn.
 *
 * Context: BH disabled, or any context a crypto driver completes in.
 */
void ovpn_crypt_done(void *data, int ret)
{
	struct sk_buff *skb = data;
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_peer *peer = cb->peer;
	struct ovpn_ordered_queue *oq;

	oq = ovpn_ordered_queue_of(peer, cb->crypt_encrypt);
	/*
	 * The AEAD is done with its request: give this CPU's buffer back now,
	 * not when the packet is posted.  Until the ordered work posts it,
	 * this CPU's worker may take the next packet, which would find the
	 * buffer still held and allocate a request of its own (seen on the
	 * debug kernel).  Posting frees nothing more.
	 */
	ovpn_aead_request_free(skb);
	cb->crypt_ret = ret;
	/*
	 * Once the packet is marked, a work already running may post it and
	 * put the packet's peer reference, maybe the last one: the work to
	 * queue gets a reference of its own first.  Passed on to the work
	 * if this queues it, put here if it was queued already.
	 */
	ovpn_peer_hold(peer);
	/* Pairs with the acquire in ovpn_ordered_next(). */
	smp_store_release(&cb->crypt_done, true);
	if (!queue_work_on(ovpn_ordered_cpu(oq), ovpn_crypt_wq, &oq->work))
		ovpn_peer_put(peer);
}

/**
 * ovpn_queue_wanted - whether a packet takes the parallel path
 * @peer: its peer
 * @encrypt: TX or RX
 *
 * Yes while the device's parallel crypto is on; and once it is turned
 * off, as long as packets of the peer's are still queued that way, so
 * that the next ones do not overtake them (a packet that the ordered
 * queue's work took but has not posted yet may still be overtaken, once).
 *
 * Context: softirq or BH disabled.
 * Return: true if the packet is to be queued with ovpn_queue_packet().
 */
bool ovpn_queue_wanted(struct ovpn_peer *peer, bool encrypt)
{
	struct ovpn_ordered_queue *oq;

	if (!peer->queues)
		return false;
	if (READ_ONCE(peer->ovpn->parallel->enabled))
		return true;
	oq = ovpn_ordered_queue_of(peer, encrypt);
	/* A hint without the lock is enough: only the work consumes. */
	return !__ptr_ring_empty(&oq->ring);
}

/**
 * ovpn_queue_packet - hand a packet to the parallel path
 * @peer: the peer, whose ordered queues exist (see ovpn_peer_queues_init())
 * @skb: the packet, whose control block holds its peer and key slot
 *	 references, as for the inline path
 * @encrypt: encrypt (TX) or decrypt (RX)
 *
 * The packet goes into its peer's ordered queue, then its device's crypt
 * ring, and the next CPU's worker is woken up.  If the ordered queue is
 * full, the packet is not taken and the caller drops it; if the crypt
 * ring is full, it stays in order and is posted as a drop (-ENOBUFS).
 *
 * Context: softirq or BH disabled.
 * Return: 0 if the packet was taken, -ENOBUFS if not.
 */
int ovpn_queue_packet(struct ovpn_peer *peer, struct sk_buff *skb,
		      bool encrypt)
{
	struct ovpn_parallel *par = peer->ovpn->parallel;
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_ordered_queue *oq;
	struct ovpn_crypt_ring *cr;
	int cpu;

	oq = ovpn_ordered_queue_of(peer, encrypt);
	cr = encrypt ? &par->encrypt : &par->decrypt;
	cb->crypt_encrypt = encrypt;
	cb->crypt_done = false;

	/* The ordered queue first: the order packets enter it is theirs. */
	if (unlikely(ptr_ring_produce(&oq->ring, skb)))
		return -ENOBUFS;
	if (unlikely(ptr_ring_produce(&cr->ring, skb))) {
		ovpn_crypt_done(skb, -ENOBUFS);
		return 0;
	}

	cpu = ovpn_crypt_next_cpu();
	queue_work_on(cpu, ovpn_crypt_wq, &per_cpu_ptr(cr->workers, cpu)->work);
	return 0;
}

static int ovpn_crypt_ring_init(struct ovpn_crypt_ring *cr, bool encrypt)
{
	struct ovpn_crypt_worker *worker;
	int cpu, ret;

	ret = ptr_ring_init(&cr->ring, OVPN_CRYPT_RING_SIZE, GFP_KERNEL);
	if (ret)
		return ret;

	cr->workers = alloc_percpu(struct ovpn_crypt_worker);
	if (!cr->workers) {
		ptr_ring_cleanup(&cr->ring, NULL);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		worker = per_cpu_ptr(cr->workers, cpu);
		INIT_WORK(&worker->work, ovpn_crypt_work);
		worker->ring = cr;
	}
	cr->encrypt = encrypt;
	return 0;
}

/*
 * The ring is empty: each packet in it held a peer, each peer holds the
 * device, and this runs once the device's last reference is gone.  A
 * worker may still be returning from the ring it found empty.
 */
static void ovpn_crypt_ring_destroy(struct ovpn_crypt_ring *cr)
{
	int cpu;

	for_each_possible_cpu(cpu)
		flush_work(&per_cpu_ptr(cr->workers, cpu)->work);
	free_percpu(cr->workers);
	ptr_ring_cleanup(&cr->ring, NULL);
}

/**
 * ovpn_parallel_init - set up a device's parallel crypto, if it uses it
 * @ovpn: the device, whose mode is set
 *
 * Leaves ovpn->parallel NULL for a device that cannot take the parallel
 * path (see the top of this file); it starts turned off.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int ovpn_parallel_init(struct ovpn_priv *ovpn)
{
	struct ovpn_parallel *par;
	int ret;

	if (ovpn->mode != OVPN_MODE_P2P || num_possible_cpus() < 2)
		return 0;

	par = kzalloc_obj(*par, GFP_KERNEL);
	if (!par)
		return -ENOMEM;
	ret = ovpn_crypt_ring_init(&par->encrypt, true);
	if (ret)
		goto err_free;
	ret = ovpn_crypt_ring_init(&par->decrypt, false);
	if (ret)
		goto err_encrypt;

	ovpn->parallel = par;
	return 0;

err_encrypt:
	ovpn_crypt_ring_destroy(&par->encrypt);
err_free:
	kfree(par);
	return ret;
}

/**
 * ovpn_parallel_enabled - whether a device's packets take the parallel path
 * @ovpn: the device
 *
 * Return: true if they do.
 */
bool ovpn_parallel_enabled(const struct ovpn_priv *ovpn)
{
	return ovpn->parallel && READ_ONCE(ovpn->parallel->enabled);
}

/**
 * ovpn_parallel_enable - turn a device's parallel path on or off
 * @ovpn: the device
 * @on: on or off
 *
 * Takes effect with the next packet; see ovpn_queue_wanted() for the ones
 * in flight when it is turned off.
 *
 * Context: RTNL held (ethtool).
 * Return: 0, or -EOPNOTSUPP to turn it on for a device that has none.
 */
int ovpn_parallel_enable(struct ovpn_priv *ovpn, bool on)
{
	if (!ovpn->parallel)
		return on ? -EOPNOTSUPP : 0;
	WRITE_ONCE(ovpn->parallel->enabled, on);
	return 0;
}

/**
 * ovpn_parallel_destroy - free a device's parallel crypto
 * @ovpn: the device, which nothing references any more
 *
 * Context: process context.
 */
void ovpn_parallel_destroy(struct ovpn_priv *ovpn)
{
	struct ovpn_parallel *par = ovpn->parallel;

	if (!par)
		return;
	ovpn_crypt_ring_destroy(&par->decrypt);
	ovpn_crypt_ring_destroy(&par->encrypt);
	kfree(par);
	ovpn->parallel = NULL;
}

/*
 * A peer's two queues work on two CPUs, which differ from peer to peer
 * (by peer id) where there are enough of them.
 */
static int ovpn_ordered_queue_init(struct ovpn_ordered_queue *oq,
				   struct ovpn_peer *peer, bool encrypt)
{
	unsigned int cpu = peer->id * 2 + encrypt;

	cpu = cpumask_nth(cpu % num_online_cpus(), cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	INIT_WORK(&oq->work, ovpn_ordered_work);
	oq->peer = peer;
	oq->cpu = cpu;
	oq->encrypt = encrypt;
	return ptr_ring_init(&oq->ring, OVPN_ORDERED_QUEUE_SIZE, GFP_KERNEL);
}

/**
 * ovpn_peer_queues_init - give a new peer its ordered queues
 * @peer: the peer, not yet published
 *
 * Only the peers of a device with parallel crypto get them; peer->queues
 * stays NULL for the others, whose packets are processed inline.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int ovpn_peer_queues_init(struct ovpn_peer *peer)
{
	struct ovpn_peer_queues *queues;
	int ret;

	if (!peer->ovpn->parallel)
		return 0;

	queues = kzalloc_obj(*queues, GFP_KERNEL);
	if (!queues)
		return -ENOMEM;
	ret = ovpn_ordered_queue_init(&queues->tx, peer, true);
	if (ret)
		goto err_free;
	ret = ovpn_ordered_queue_init(&queues->rx, peer, false);
	if (ret)
		goto err_tx;

	peer->queues = queues;
	return 0;

err_tx:
	ptr_ring_cleanup(&queues->tx.ring, NULL);
err_free:
	kfree(queues);
	return ret;
}

/**
 * ovpn_peer_queues_destroy - free a peer's ordered queues
 * @peer: the peer, in its teardown
 *
 * The queues are empty and their works idle: each packet in a queue, and
 * each queued work, held a reference on the peer, and the teardown runs
 * once the last one is gone.  The work that put it may still be
 * returning, but touches nothing of the peer's after that put.
 *
 * Context: process context.
 */
void ovpn_peer_queues_destroy(struct ovpn_peer *peer)
{
	struct ovpn_peer_queues *queues = peer->queues;

	if (!queues)
		return;
	ptr_ring_cleanup(&queues->rx.ring, NULL);
	ptr_ring_cleanup(&queues->tx.ring, NULL);
	kfree(queues);
	peer->queues = NULL;
}

/**
 * ovpn_queue_init - create the workers' workqueue
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int ovpn_queue_init(void)
{
	ovpn_crypt_wq = alloc_workqueue("ovpn-crypt",
					WQ_PERCPU | WQ_CPU_INTENSIVE |
					WQ_MEM_RECLAIM, 0);
	return ovpn_crypt_wq ? 0 : -ENOMEM;
}

/**
 * ovpn_queue_exit - destroy the workers' workqueue
 *
 * Context: module exit, once every device is gone (whose teardown flushed
 * its workers) and every peer released; the ordered queues' works that
 * put the last references may still be returning.
 */
void ovpn_queue_exit(void)
{
	destroy_workqueue(ovpn_crypt_wq);
}
