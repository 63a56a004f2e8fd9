// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - peers
 *
 * See peer.h for the lifetime and locking rules of struct ovpn_peer.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/udp.h>
#include <net/ip6_route.h>
#include <net/route.h>

#include "io.h"
#include "main.h"
#include "mss.h"
#include "netlink.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "proto.h"
#include "queue.h"
#include "socket.h"

/* The least time between two local addresses learnt from packets. */
#define OVPN_LOCAL_LEARN_GAP	HZ

/*
 * Peers removed together (a socket closing, a device going away) are
 * taken out of the tables this many at a time, the device lock dropped
 * and the CPU offered in between.
 */
#define OVPN_REMOVE_CHUNK	64

/*
 * A released peer's teardown, a grace period after its release (see
 * ovpn_peer_release()).
 */
static void ovpn_peer_teardown(struct llist_node *node)
{
	struct ovpn_peer *peer = llist_entry(node, struct ovpn_peer,
					     release_entry);

	/* First: the timer reads the peer and may queue work on it. */
	timer_shutdown_sync(&peer->keepalive_timer);
	/* Then: a TCP socket's hooks use the peer until it is detached. */
	if (peer->sock)
		ovpn_socket_release_peer(peer->sock);
	ovpn_crypto_state_release(&peer->crypto);
	ovpn_peer_queues_destroy(peer);
	/* Nobody can replace the bind of a peer nobody holds. */
	kfree(rcu_dereference_protected(peer->bind, true));
	dst_cache_destroy(&peer->dst_cache);
	ovpn_stats_destroy(&peer->stats);
	netdev_put(peer->ovpn->dev, &peer->dev_tracker);
	/*
	 * A reader that found the TCP attachment before the detach above may
	 * still try the peer's reference: after percpu_ref_exit() that fails
	 * without touching freed memory, as long as the peer itself outlives
	 * the reader's RCU section.
	 */
	percpu_ref_exit(&peer->ref);
	kfree_rcu(peer, rcu);
}

static struct ovpn_release_batch ovpn_peers_released =
	OVPN_RELEASE_BATCH_INIT(ovpn_peers_released, ovpn_peer_teardown);

/*
 * The last reference is gone.  This can run in any context (an async
 * crypto completion, an RCU callback), and the teardown sleeps (timer,
 * crypto, socket): it goes to the module workqueue, in a batch, behind
 * a grace period: lockless readers that found the peer before it was
 * unpublished are done by then.
 */
static void ovpn_peer_release(struct percpu_ref *ref)
{
	struct ovpn_peer *peer = container_of(ref, struct ovpn_peer, ref);

	ovpn_release_batch_add(&ovpn_peers_released, &peer->release_entry);
}

static void ovpn_peer_keepalive_send(struct work_struct *work)
{
	static const u8 ping[] = OVPN_KEEPALIVE_MESSAGE;
	struct ovpn_peer *peer = container_of(work, struct ovpn_peer,
					      keepalive_work);

	ovpn_xmit_special(peer, ping, sizeof(ping));
	/* The reference taken when the work was queued. */
	ovpn_peer_put(peer);
}

/*
 * One peer's keepalive duties: expire it, or queue a keepalive packet.
 * Returns the seconds until its next deadline (LONG_MAX if none).
 */
static long ovpn_peer_keepalive_check(struct ovpn_peer *peer, time64_t now)
{
	unsigned long interval = READ_ONCE(peer->keepalive_interval);
	unsigned long timeout = READ_ONCE(peer->keepalive_timeout);
	long next = LONG_MAX, left;

	if (timeout) {
		left = READ_ONCE(peer->last_recv) + timeout - now;
		if (left <= 0) {
			net_dbg_ratelimited("%s: peer %u expired\n",
					    netdev_name(peer->ovpn->dev),
					    peer->id);
			ovpn_peer_del(peer, OVPN_DEL_PEER_REASON_EXPIRED);
			return LONG_MAX;
		}
		next = left;
	}

	if (interval) {
		left = READ_ONCE(peer->last_sent) + interval - now;
		if (left <= 0) {
			/* The work holds a reference until it has run. */
			if (percpu_ref_tryget_live(&peer->ref) &&
			    !queue_work(ovpn_wq, &peer->keepalive_work))
				ovpn_peer_put(peer);
			left = interval;
		}
		next = min(next, left);
	}
	return next;
}

/*
 * The peer's next keepalive deadline has come, or its parameters changed.
 * Each peer has its own timer, so that a server with 100,000 peers does
 * the work of the peers that are due, not a walk of all of them.  The
 * timer holds no reference: the teardown shuts it down before the peer
 * goes (see peer.h).  It does not re-arm for a removed peer; one that is
 * removed right after the check below re-arms it once, harmlessly.
 * Deadlines are rounded up to a whole second, so that the timers of many
 * peers expire together.  Context: softirq.
 */
static void ovpn_peer_keepalive_timer(struct timer_list *t)
{
	struct ovpn_peer *peer = timer_container_of(peer, t, keepalive_timer);
	long next;

	if (percpu_ref_is_dying(&peer->ref))
		return;
	next = ovpn_peer_keepalive_check(peer, ktime_get_seconds());
	if (next != LONG_MAX)
		mod_timer(&peer->keepalive_timer,
			  round_jiffies_up(jiffies + max(next, 1L) * HZ));
}

/*
 * ovpn_peer_new - create a peer, not yet published
 * @ovpn: the device it will belong to
 * @id: the peer id its packets carry
 *
 * Context: process context.
 * Return: the peer, or ERR_PTR(-ENOMEM) (also when percpu_ref_init()
 * fails).
 */
static struct ovpn_peer *ovpn_peer_new(struct ovpn_priv *ovpn, u32 id)
{
	struct ovpn_peer *peer;
	int ret;

	peer = kzalloc_obj(*peer, GFP_KERNEL);
	if (!peer)
		return ERR_PTR(-ENOMEM);

	peer->ovpn = ovpn;
	peer->id = id;
	peer->tx_id = id;
	peer->mssfix = OVPN_MSSFIX_PATH;
	peer->last_recv = ktime_get_seconds();
	peer->last_sent = peer->last_recv;
	peer->local_learnt = jiffies - OVPN_LOCAL_LEARN_GAP;
	peer->delete_reason = OVPN_DEL_PEER_REASON_TEARDOWN;
	spin_lock_init(&peer->lock);
	ovpn_crypto_state_init(&peer->crypto);
	INIT_WORK(&peer->keepalive_work, ovpn_peer_keepalive_send);
	timer_setup(&peer->keepalive_timer, ovpn_peer_keepalive_timer, 0);

	ret = ovpn_stats_init(&peer->stats);
	if (ret)
		goto err_free;

	ret = dst_cache_init(&peer->dst_cache, GFP_KERNEL);
	if (ret)
		goto err_stats;

	ret = ovpn_peer_queues_init(peer);
	if (ret)
		goto err_dst;

	/* Last: from here on the peer dies only through its reference. */
	ret = percpu_ref_init(&peer->ref, ovpn_peer_release, 0, GFP_KERNEL);
	if (ret)
		goto err_queues;

	netdev_hold(ovpn->dev, &peer->dev_tracker, GFP_KERNEL);
	return peer;

err_queues:
	ovpn_peer_queues_destroy(peer);
err_dst:
	dst_cache_destroy(&peer->dst_cache);
err_stats:
	ovpn_stats_destroy(&peer->stats);
err_free:
	kfree(peer);
	return ERR_PTR(ret);
}

/*
 * ovpn_peer_discard - drop a peer that was never published
 * @peer: the peer, as ovpn_peer_new() returned it
 *
 * Nothing but the creator can hold it, so killing the initial reference
 * releases it (through the normal, deferred path).
 */
static void ovpn_peer_discard(struct ovpn_peer *peer)
{
	percpu_ref_kill(&peer->ref);
}

static const struct rhashtable_params ovpn_vpn4_params = {
	.head_offset = offsetof(struct ovpn_peer, vpn4_node),
	.key_offset = offsetof(struct ovpn_peer, vpn_addrs.ipv4),
	.key_len = sizeof_field(struct ovpn_peer, vpn_addrs.ipv4),
	.automatic_shrinking = true,
};

static const struct rhashtable_params ovpn_vpn6_params = {
	.head_offset = offsetof(struct ovpn_peer, vpn6_node),
	.key_offset = offsetof(struct ovpn_peer, vpn_addrs.ipv6),
	.key_len = sizeof_field(struct ovpn_peer, vpn_addrs.ipv6),
	.automatic_shrinking = true,
};

static const struct rhashtable_params ovpn_transp_params = {
	.head_offset = offsetof(struct ovpn_peer, transp_node),
	.key_offset = offsetof(struct ovpn_peer, transp_key),
	.key_len = sizeof(struct ovpn_transp_key),
	.automatic_shrinking = true,
};

/**
 * ovpn_peer_init_tables - set up the empty tables of an MP device
 * @peers: the tables, zeroed
 *
 * The XArray's lock is taken by removals from softirq context (keepalive
 * expiry) as well as from process context: it is a BH lock.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int ovpn_peer_init_tables(struct ovpn_peer_collection *peers)
{
	int ret;

	xa_init_flags(&peers->by_id, XA_FLAGS_LOCK_BH);
	ret = rhashtable_init(&peers->by_vpn_addr4, &ovpn_vpn4_params);
	if (ret)
		return ret;
	ret = rhashtable_init(&peers->by_vpn_addr6, &ovpn_vpn6_params);
	if (ret)
		goto err_vpn4;
	ret = rhltable_init(&peers->by_transp_addr, &ovpn_transp_params);
	if (ret)
		goto err_vpn6;
	return 0;

err_vpn6:
	rhashtable_destroy(&peers->by_vpn_addr6);
err_vpn4:
	rhashtable_destroy(&peers->by_vpn_addr4);
	return ret;
}

/**
 * ovpn_peer_destroy_tables - free the tables of an MP device
 * @peers: the tables, empty, and which no lookup can reach any more
 *
 * Context: process context (waits for a resize in progress).
 */
void ovpn_peer_destroy_tables(struct ovpn_peer_collection *peers)
{
	rhltable_destroy(&peers->by_transp_addr);
	rhashtable_destroy(&peers->by_vpn_addr6);
	rhashtable_destroy(&peers->by_vpn_addr4);
	xa_destroy(&peers->by_id);
}

/* The transport-table key of a remote endpoint: see ovpn_transp_key. */
static void ovpn_transp_key_set(struct ovpn_transp_key *key,
				const union ovpn_sockaddr *ss)
{
	memset(key, 0, sizeof(*key));
	key->family = ss->in4.sin_family;
	if (key->family == AF_INET) {
		key->addr.s6_addr32[0] = ss->in4.sin_addr.s_addr;
		key->port = ss->in4.sin_port;
	} else {
		key->addr = ss->in6.sin6_addr;
		key->port = ss->in6.sin6_port;
		key->scope_id = ss->in6.sin6_scope_id;
	}
}

static bool ovpn_peer_has_vpn4(const struct ovpn_peer *peer)
{
	return peer->vpn_addrs.ipv4.s_addr != htonl(INADDR_ANY);
}

static bool ovpn_peer_has_vpn6(const struct ovpn_peer *peer)
{
	return !ipv6_addr_any(&peer->vpn_addrs.ipv6);
}

/*
 * Hash a peer by its remote transport address, if it has one.  A failed
 * insertion (no memory for a rehash) leaves the peer out of this table
 * only: it is still found by its id, which is what its packets carry.
 * ovpn->lock held.
 */
static void ovpn_peer_hash_transp(struct ovpn_priv *ovpn,
				  struct ovpn_peer *peer)
{
	struct ovpn_bind *bind;
	int ret;

	/*
	 * @bind is replaced under peer->lock, not ours: read it as an RCU
	 * reader (BH is disabled).  A float that replaces it meanwhile moves
	 * the peer again once it gets ovpn->lock, so the table ends up with
	 * the last bind.
	 */
	bind = rcu_dereference_check(peer->bind,
				     lockdep_is_held(&ovpn->lock));
	if (!bind)
		return;
	ovpn_transp_key_set(&peer->transp_key, &bind->remote);
	ret = rhltable_insert(&ovpn->peers->by_transp_addr,
			      &peer->transp_node, ovpn_transp_params);
	if (ret) {
		peer->transp_key.family = 0;
		net_dbg_ratelimited("%s: peer %u not hashed by address: %d\n",
				    netdev_name(ovpn->dev), peer->id, ret);
	}
}

static void ovpn_peer_unhash_transp(struct ovpn_priv *ovpn,
				    struct ovpn_peer *peer)
{
	if (!peer->transp_key.family)
		return;
	rhltable_remove(&ovpn->peers->by_transp_addr, &peer->transp_node,
			ovpn_transp_params);
	peer->transp_key.family = 0;
}

/* Hash a peer's VPN addresses, those it has; ovpn->lock held. */
static int ovpn_peer_hash_addr4(struct ovpn_priv *ovpn,
				struct ovpn_peer *peer)
{
	if (!ovpn_peer_has_vpn4(peer))
		return 0;
	return rhashtable_insert_fast(&ovpn->peers->by_vpn_addr4,
				      &peer->vpn4_node, ovpn_vpn4_params);
}

static int ovpn_peer_hash_addr6(struct ovpn_priv *ovpn,
				struct ovpn_peer *peer)
{
	if (!ovpn_peer_has_vpn6(peer))
		return 0;
	return rhashtable_insert_fast(&ovpn->peers->by_vpn_addr6,
				      &peer->vpn6_node, ovpn_vpn6_params);
}

static void ovpn_peer_unhash_addr4(struct ovpn_priv *ovpn,
				   struct ovpn_peer *peer)
{
	if (ovpn_peer_has_vpn4(peer))
		rhashtable_remove_fast(&ovpn->peers->by_vpn_addr4,
				       &peer->vpn4_node, ovpn_vpn4_params);
}

static void ovpn_peer_unhash_addr6(struct ovpn_priv *ovpn,
				   struct ovpn_peer *peer)
{
	if (ovpn_peer_has_vpn6(peer))
		rhashtable_remove_fast(&ovpn->peers->by_vpn_addr6,
				       &peer->vpn6_node, ovpn_vpn6_params);
}

/*
 * Put a new MP peer in the address tables; ovpn->lock held.  Returns 0,
 * or the error of an insertion, with the peer in none of them.
 */
static int ovpn_peer_hash_addrs(struct ovpn_priv *ovpn,
				struct ovpn_peer *peer)
{
	int ret;

	ret = ovpn_peer_hash_addr4(ovpn, peer);
	if (ret)
		return ret;
	ret = ovpn_peer_hash_addr6(ovpn, peer);
	if (ret) {
		ovpn_peer_unhash_addr4(ovpn, peer);
		return ret;
	}
	ovpn_peer_hash_transp(ovpn, peer);
	return 0;
}

static void ovpn_peer_unhash_addrs(struct ovpn_priv *ovpn,
				   struct ovpn_peer *peer)
{
	ovpn_peer_unhash_addr4(ovpn, peer);
	ovpn_peer_unhash_addr6(ovpn, peer);
	ovpn_peer_unhash_transp(ovpn, peer);
}

/*
 * Unpublish a peer: after this, lookups do not find it and nothing may
 * publish it again.  Returns false if somebody else already did.
 * ovpn->lock held.
 */
static bool ovpn_peer_unpublish(struct ovpn_peer *peer,
				enum ovpn_del_peer_reason reason)
{
	struct ovpn_priv *ovpn = peer->ovpn;

	lockdep_assert_held(&ovpn->lock);
	if (peer->removed)
		return false;

	peer->removed = true;
	peer->delete_reason = reason;
	if (ovpn->mode == OVPN_MODE_MP) {
		xa_erase(&ovpn->peers->by_id, peer->id);
		ovpn_peer_unhash_addrs(ovpn, peer);
	} else if (rcu_access_pointer(ovpn->peer) == peer) {
		RCU_INIT_POINTER(ovpn->peer, NULL);
		netif_carrier_off(ovpn->dev);
	}
	return true;
}

/*
 * Second half of a removal, outside ovpn->lock: tell userspace, then kill
 * the initial reference.  Each unpublished peer passes here exactly once.
 * The keepalive timer is stopped so that a removed peer stops waking the
 * CPU; it may be running, and then does not re-arm (see
 * ovpn_peer_keepalive_timer()).
 */
static void ovpn_peer_finish_removal(struct ovpn_peer *peer)
{
	ovpn_nl_peer_del_notify(peer);
	percpu_ref_kill(&peer->ref);
	timer_delete(&peer->keepalive_timer);
}

/* MP lookups by VPN address; rcu_read_lock() held. */
static struct ovpn_peer *ovpn_peer_by_vpn4(struct ovpn_priv *ovpn,
					   __be32 addr)
{
	return rhashtable_lookup(&ovpn->peers->by_vpn_addr4, &addr,
				 ovpn_vpn4_params);
}

static struct ovpn_peer *ovpn_peer_by_vpn6(struct ovpn_priv *ovpn,
					   const struct in6_addr *addr)
{
	return rhashtable_lookup(&ovpn->peers->by_vpn_addr6, addr,
				 ovpn_vpn6_params);
}

/*
 * Would @ip4/@ip6 (either may be unspecified) clash with another peer's
 * VPN address?  Two peers with one address would make TX routing
 * ambiguous.  ovpn->lock held, which keeps the answer true until it is
 * released.
 */
static bool ovpn_vpn_addrs_taken(struct ovpn_priv *ovpn,
				 const struct ovpn_peer *self,
				 const struct in_addr *ip4,
				 const struct in6_addr *ip6)
{
	struct ovpn_peer *other = NULL;
	bool taken = false;

	rcu_read_lock();
	if (ip4->s_addr != htonl(INADDR_ANY))
		other = ovpn_peer_by_vpn4(ovpn, ip4->s_addr);
	if (other && other != self)
		taken = true;
	if (!taken && !ipv6_addr_any(ip6)) {
		other = ovpn_peer_by_vpn6(ovpn, ip6);
		taken = other && other != self;
	}
	rcu_read_unlock();
	return taken;
}

/*
 * Publish a new MP peer; ovpn->lock held, and its id reserved in the
 * XArray by the caller, so that storing it there cannot fail.  Being
 * found by id is what lets its packets in: it comes last, once the peer
 * is in every other table.
 */
static int ovpn_peer_publish_mp(struct ovpn_priv *ovpn,
				struct ovpn_peer *peer)
{
	int ret;

	if (ovpn_vpn_addrs_taken(ovpn, peer, &peer->vpn_addrs.ipv4,
				 &peer->vpn_addrs.ipv6))
		return -EADDRINUSE;
	ret = ovpn_peer_hash_addrs(ovpn, peer);
	if (ret)
		return ret;
	xa_store(&ovpn->peers->by_id, peer->id, peer, GFP_ATOMIC);
	return 0;
}

/*
 * ovpn_peer_add - publish a new peer
 * @ovpn: the device
 * @peer: the peer, fully set up (socket, bind, addresses)
 *
 * P2P: the new peer replaces the current one, which is removed with
 * reason TEARDOWN.  MP: a peer id is unique on the device.
 *
 * Context: process context.
 * Return: 0 on success, -EEXIST if the id is taken (MP), -EADDRINUSE if
 * a VPN address is (MP), -ENODEV if the device is going away, -ENOMEM.
 * On failure the caller still owns @peer.
 */
static int ovpn_peer_add(struct ovpn_priv *ovpn, struct ovpn_peer *peer)
{
	struct ovpn_peer *old = NULL;
	int ret = 0;

	/*
	 * Reserve the id first, where the XArray may allocate and sleep:
	 * storing the peer over the reservation under our lock then needs
	 * no memory.  A reserved id reads as empty to lookups and as taken
	 * to a concurrent PEER_NEW.
	 */
	if (ovpn->mode == OVPN_MODE_MP) {
		ret = xa_insert_bh(&ovpn->peers->by_id, peer->id, NULL,
				   GFP_KERNEL);
		if (ret)
			return ret == -EBUSY ? -EEXIST : ret;
	}

	spin_lock_bh(&ovpn->lock);
	if (ovpn->dying)
		ret = -ENODEV;
	else if (ovpn->mode == OVPN_MODE_MP)
		ret = ovpn_peer_publish_mp(ovpn, peer);
	if (ret) {
		if (ovpn->mode == OVPN_MODE_MP)
			xa_erase(&ovpn->peers->by_id, peer->id);
		spin_unlock_bh(&ovpn->lock);
		return ret;
	}

	if (ovpn->mode == OVPN_MODE_P2P) {
		old = rcu_dereference_protected(ovpn->peer,
						lockdep_is_held(&ovpn->lock));
		if (old && !ovpn_peer_unpublish(old,
						OVPN_DEL_PEER_REASON_TEARDOWN))
			old = NULL;
		rcu_assign_pointer(ovpn->peer, peer);
		netif_carrier_on(ovpn->dev);
	}
	spin_unlock_bh(&ovpn->lock);

	if (old)
		ovpn_peer_finish_removal(old);
	return 0;
}

/**
 * ovpn_peer_create - build a peer from a request and publish it
 * @ovpn: the device
 * @cfg: the peer, as parsed and checked by netlink.c; its @bind is taken
 *	 over whatever the outcome
 * @sock: the peer's transport socket, held by the caller
 *
 * P2P: the new peer replaces the current one.  Once published, the new
 * peer's socket starts carrying its packets and the keepalive scan takes
 * it into account.
 *
 * Context: process context, may sleep.
 * Return: 0, -ENOMEM, an error of ovpn_socket_attach() (the socket is
 * not a transport, or not free), or -EEXIST (the id is taken),
 * -EADDRINUSE (a VPN address is), -ENODEV (the device is going away).
 */
int ovpn_peer_create(struct ovpn_priv *ovpn, struct ovpn_peer_config *cfg,
		     struct socket *sock)
{
	struct ovpn_socket *ovpn_sock;
	struct ovpn_peer *peer;
	int ret;

	peer = ovpn_peer_new(ovpn, cfg->id);
	if (IS_ERR(peer)) {
		kfree(cfg->bind);
		return PTR_ERR(peer);
	}
	/* Not published yet: no lock, no grace period needed. */
	rcu_assign_pointer(peer->bind, cfg->bind);
	if (cfg->has_vpn_ipv4)
		peer->vpn_addrs.ipv4 = cfg->vpn_ipv4;
	if (cfg->has_vpn_ipv6)
		peer->vpn_addrs.ipv6 = cfg->vpn_ipv6;
	if (cfg->has_tx_id)
		peer->tx_id = cfg->tx_id;
	if (cfg->has_mssfix)
		peer->mssfix = cfg->mssfix;
	if (cfg->has_keepalive) {
		peer->keepalive_interval = cfg->keepalive_interval;
		peer->keepalive_timeout = cfg->keepalive_timeout;
	}

	ovpn_sock = ovpn_socket_attach(ovpn, sock, peer);
	if (IS_ERR(ovpn_sock)) {
		ret = PTR_ERR(ovpn_sock);
		goto discard;
	}
	/* The reference the attachment gave is the peer's now. */
	peer->sock = ovpn_sock;

	/*
	 * Once published the peer may be removed and released at any time:
	 * hold it until its socket is started and its timer armed.
	 */
	ovpn_peer_hold(peer);
	ret = ovpn_peer_add(ovpn, peer);
	if (ret) {
		ovpn_peer_put(peer);
		goto discard;
	}
	ovpn_socket_start(ovpn_sock);
	if (cfg->has_keepalive)
		mod_timer(&peer->keepalive_timer, jiffies);
	ovpn_peer_put(peer);
	return 0;

discard:
	ovpn_peer_discard(peer);
	return ret;
}

/**
 * ovpn_peer_del - remove a peer
 * @peer: the peer; the caller holds a reference, or is the peer's
 *	  keepalive timer, which the teardown shuts down before the peer is
 *	  freed; the removal below tells a live peer from a gone one under
 *	  ovpn->lock
 * @reason: why, as notified to userspace
 *
 * Context: any (BH-safe locking, atomic notification).
 * Return: 0, or -ENOENT if the peer was already removed.
 */
int ovpn_peer_del(struct ovpn_peer *peer, enum ovpn_del_peer_reason reason)
{
	struct ovpn_priv *ovpn = peer->ovpn;
	bool removed;

	spin_lock_bh(&ovpn->lock);
	removed = ovpn_peer_unpublish(peer, reason);
	spin_unlock_bh(&ovpn->lock);

	if (!removed)
		return -ENOENT;
	ovpn_peer_finish_removal(peer);
	return 0;
}

/*
 * Unpublish up to OVPN_REMOVE_CHUNK peers of a device from id *@from on
 * (the peer of a P2P device), those of @sock only if it is not NULL,
 * onto @list.  Returns whether peers are left to look at, and where, in
 * *@from.  ovpn->lock held.
 */
static bool ovpn_peers_unpublish_chunk(struct ovpn_priv *ovpn,
				       struct ovpn_socket *sock,
				       enum ovpn_del_peer_reason reason,
				       unsigned long *from,
				       struct llist_head *list)
{
	unsigned int seen = 0;
	struct ovpn_peer *peer;
	unsigned long id;

	if (ovpn->mode == OVPN_MODE_P2P) {
		peer = rcu_dereference_protected(ovpn->peer,
						 lockdep_is_held(&ovpn->lock));
		if (peer && (!sock || peer->sock == sock) &&
		    ovpn_peer_unpublish(peer, reason))
			__llist_add(&peer->remove_entry, list);
		return false;
	}

	xa_for_each_start(&ovpn->peers->by_id, id, peer, *from) {
		if ((!sock || peer->sock == sock) &&
		    ovpn_peer_unpublish(peer, reason))
			__llist_add(&peer->remove_entry, list);
		if (++seen == OVPN_REMOVE_CHUNK) {
			*from = id + 1;
			return id < U32_MAX;
		}
	}
	return false;
}

/**
 * ovpn_peers_remove - remove every peer of a device, or those of a socket
 * @ovpn: the device
 * @sock: only peers using this socket; NULL for all
 * @reason: why, as notified to userspace
 *
 * An MP device is walked in chunks, with the device lock dropped and the
 * CPU offered in between: a server's socket closing or its device going
 * away takes 100,000 peers, and the walk must neither hold the lock nor
 * keep the CPU for all of them.  A peer added behind the walk meanwhile
 * is missed, as it would be if it came a moment later; a device going
 * away refuses new peers before it calls this.
 *
 * Context: process context, may sleep.
 */
void ovpn_peers_remove(struct ovpn_priv *ovpn, struct ovpn_socket *sock,
		       enum ovpn_del_peer_reason reason)
{
	struct ovpn_peer *peer, *tmp;
	unsigned long from = 0;
	LLIST_HEAD(list);
	bool more;

	do {
		spin_lock_bh(&ovpn->lock);
		more = ovpn_peers_unpublish_chunk(ovpn, sock, reason, &from,
						  &list);
		spin_unlock_bh(&ovpn->lock);

		/* _safe: finishing a removal may free the peer. */
		llist_for_each_entry_safe(peer, tmp, __llist_del_all(&list),
					  remove_entry)
			ovpn_peer_finish_removal(peer);
		cond_resched();
	} while (more);
}

/**
 * ovpn_peers_dump - hand the device's peers to a dump, resumably
 * @ovpn: the device
 * @pos: where the dump stands: two words, zero when it starts; the first
 *	 is the id to resume from, the second says the walk is over
 * @fill: called for each peer under rcu_read_lock() (so it must not
 *	  sleep); non-zero stops the walk and is returned
 * @arg: passed to @fill
 *
 * An MP device is walked in the order of peer ids, and resumes from the
 * id of the peer that @fill refused: each call costs the peers it hands
 * out, whatever the number of peers.  A peer added or removed meanwhile
 * may be missed, as in any netlink dump; none is seen twice.
 *
 * Context: process context.
 * Return: 0 once every peer was handed out, or what @fill returned.
 */
int ovpn_peers_dump(struct ovpn_priv *ovpn, unsigned long pos[2],
		    int (*fill)(struct ovpn_peer *peer, void *arg), void *arg)
{
	struct ovpn_peer *peer;
	unsigned long id;
	int ret = 0;

	if (pos[1])
		return 0;

	rcu_read_lock();
	if (ovpn->mode == OVPN_MODE_P2P) {
		peer = rcu_dereference(ovpn->peer);
		if (peer)
			ret = fill(peer, arg);
		goto out;
	}
	xa_for_each_start(&ovpn->peers->by_id, id, peer, pos[0]) {
		ret = fill(peer, arg);
		if (ret) {
			pos[0] = id;
			break;
		}
	}
out:
	if (!ret)
		pos[1] = 1;
	rcu_read_unlock();
	return ret;
}

/**
 * ovpn_peer_get_by_id - find a peer by the id its packets carry
 * @ovpn: the device
 * @id: the peer id
 *
 * Context: any.
 * Return: the peer with a reference, or NULL.
 */
struct ovpn_peer *ovpn_peer_get_by_id(struct ovpn_priv *ovpn, u32 id)
{
	struct ovpn_peer *peer, *found = NULL;

	rcu_read_lock();
	if (ovpn->mode == OVPN_MODE_P2P) {
		peer = rcu_dereference(ovpn->peer);
		if (peer && peer->id == id &&
		    percpu_ref_tryget_live_rcu(&peer->ref))
			found = peer;
		goto out;
	}

	peer = xa_load(&ovpn->peers->by_id, id);
	/* Failing means the peer is being removed: it is gone. */
	if (peer && percpu_ref_tryget_live_rcu(&peer->ref))
		found = peer;
out:
	rcu_read_unlock();
	return found;
}

static bool ovpn_peer_remote_is(struct ovpn_peer *peer,
				const union ovpn_sockaddr *ss)
{
	struct ovpn_bind *bind = rcu_dereference(peer->bind);

	return bind && ovpn_bind_remote_equal(bind, ss);
}

/**
 * ovpn_peer_get_by_transp_addr - find a UDP peer by its remote address
 * @ovpn: the device
 * @skb: a packet received from the peer (outer headers in place)
 *
 * Used for packets whose sender does not know its peer id.
 *
 * Context: any.
 * Return: the peer with a reference, or NULL.
 */
struct ovpn_peer *ovpn_peer_get_by_transp_addr(struct ovpn_priv *ovpn,
					       struct sk_buff *skb)
{
	struct ovpn_peer *peer, *found = NULL;
	struct ovpn_transp_key key;
	struct rhlist_head *list, *pos;
	union ovpn_sockaddr ss;

	if (!ovpn_skb_src_sockaddr(skb, &ss))
		return NULL;

	rcu_read_lock();
	if (ovpn->mode == OVPN_MODE_P2P) {
		peer = rcu_dereference(ovpn->peer);
		if (peer && ovpn_peer_remote_is(peer, &ss) &&
		    percpu_ref_tryget_live_rcu(&peer->ref))
			found = peer;
		goto out;
	}

	ovpn_transp_key_set(&key, &ss);
	list = rhltable_lookup(&ovpn->peers->by_transp_addr, &key,
			       ovpn_transp_params);
	/* Of the peers at that address, the first that is not going. */
	rhl_for_each_entry_rcu(peer, pos, list, transp_node) {
		if (percpu_ref_tryget_live_rcu(&peer->ref)) {
			found = peer;
			break;
		}
	}
out:
	rcu_read_unlock();
	return found;
}

/*
 * The VPN address a packet leaving the device goes to: the gateway of the
 * route that brought it here (an iroute behind a client), or else its
 * destination.  The device keeps the dst on the skb for this.
 */
static struct ovpn_peer *ovpn_peer_by_nexthop(struct ovpn_priv *ovpn,
					      struct sk_buff *skb)
{
	struct dst_entry *dst = skb_dst(skb);

	switch (skb->protocol) {
	case htons(ETH_P_IP): {
		__be32 nh = ip_hdr(skb)->daddr;

		if (dst)
			nh = rt_nexthop(dst_rtable(dst), nh);
		return ovpn_peer_by_vpn4(ovpn, nh);
	}
	case htons(ETH_P_IPV6): {
		const struct in6_addr *nh = &ipv6_hdr(skb)->daddr;

		if (dst)
			nh = rt6_nexthop(dst_rt6_info(dst), nh);
		return ovpn_peer_by_vpn6(ovpn, nh);
	}
	}
	return NULL;
}

/*
 * ovpn_peer_get_p2p - the peer of a P2P device
 * @ovpn: the device, in P2P mode
 *
 * Context: any.
 * Return: the peer with a reference, or NULL.
 */
static struct ovpn_peer *ovpn_peer_get_p2p(struct ovpn_priv *ovpn)
{
	struct ovpn_peer *peer;

	rcu_read_lock();
	peer = rcu_dereference(ovpn->peer);
	if (peer && !percpu_ref_tryget_live_rcu(&peer->ref))
		peer = NULL;
	rcu_read_unlock();
	return peer;
}

/**
 * ovpn_peer_get_by_dst - the peer a packet leaving the device goes to
 * @ovpn: the device
 * @skb: the packet (IPv4 or IPv6, network header set)
 *
 * Context: any.
 * Return: the peer with a reference, or NULL.
 */
struct ovpn_peer *ovpn_peer_get_by_dst(struct ovpn_priv *ovpn,
				       struct sk_buff *skb)
{
	struct ovpn_peer *peer;

	if (ovpn->mode == OVPN_MODE_P2P)
		return ovpn_peer_get_p2p(ovpn);

	rcu_read_lock();
	peer = ovpn_peer_by_nexthop(ovpn, skb);
	if (peer && !percpu_ref_tryget_live_rcu(&peer->ref))
		peer = NULL;
	rcu_read_unlock();
	return peer;
}

/* Would a packet to @saddr leave through @peer?  rcu_read_lock() held. */
static bool ovpn_peer_routes_to4(struct ovpn_priv *ovpn,
				 struct ovpn_peer *peer, __be32 saddr)
{
	struct net *net = dev_net(ovpn->dev);
	struct rtable *rt;
	bool ok;

	/*
	 * INADDR_ANY is how a peer without an IPv4 address is stored: it
	 * matches no source, and such a peer is no IPv4 next hop either.
	 */
	if (peer->vpn_addrs.ipv4.s_addr == htonl(INADDR_ANY))
		return false;
	if (peer->vpn_addrs.ipv4.s_addr == saddr)
		return true;

	rt = ip_route_output(net, saddr, 0, inet_dsfield_to_dscp(0), 0,
			     RT_SCOPE_UNIVERSE);
	if (IS_ERR(rt))
		return false;
	ok = rt->dst.dev == ovpn->dev &&
	     rt_nexthop(rt, saddr) == peer->vpn_addrs.ipv4.s_addr;
	ip_rt_put(rt);
	return ok;
}

static bool ovpn_peer_routes_to6(struct ovpn_priv *ovpn,
				 struct ovpn_peer *peer,
				 const struct in6_addr *saddr)
{
	struct flowi6 fl = { .daddr = *saddr };
	struct dst_entry *dst;
	bool ok;

	/* As for IPv4: the unspecified address is no address at all. */
	if (ipv6_addr_any(&peer->vpn_addrs.ipv6))
		return false;
	if (ipv6_addr_equal(&peer->vpn_addrs.ipv6, saddr))
		return true;

	dst = ip6_route_output(dev_net(ovpn->dev), NULL, &fl);
	if (dst->error) {
		dst_release(dst);
		return false;
	}
	ok = dst->dev == ovpn->dev &&
	     ipv6_addr_equal(rt6_nexthop(dst_rt6_info(dst), saddr),
			     &peer->vpn_addrs.ipv6);
	dst_release(dst);
	return ok;
}

/**
 * ovpn_peer_check_by_src - reverse path check of a decrypted packet
 * @ovpn: the device
 * @skb: the decrypted packet (network header set, protocol known)
 * @peer: the peer it came from
 *
 * A peer may only send from addresses we would route to it: its VPN
 * address or a network routed through it.
 *
 * Context: any.
 * Return: true if the source is acceptable.
 */
bool ovpn_peer_check_by_src(struct ovpn_priv *ovpn, struct sk_buff *skb,
			    struct ovpn_peer *peer)
{
	bool ok = false;

	/* A P2P device has one peer: everything comes from it. */
	if (ovpn->mode == OVPN_MODE_P2P)
		return true;

	rcu_read_lock();
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		ok = ovpn_peer_routes_to4(ovpn, peer, ip_hdr(skb)->saddr);
		break;
	case htons(ETH_P_IPV6):
		ok = ovpn_peer_routes_to6(ovpn, peer, &ipv6_hdr(skb)->saddr);
		break;
	}
	rcu_read_unlock();
	return ok;
}

/*
 * Give a published MP peer a new VPN IPv4 or IPv6 address (the
 * unspecified one clears it); ovpn->lock held.  The key changes only
 * while the peer is out of the table, which finds a peer by the key it
 * was inserted with.  Only an address that changes moves: a move may
 * hide the peer from a concurrent lookup.  If the table cannot take the
 * peer back (no memory for a rehash), the old address is restored; the
 * peer loses it only if that fails too.
 */
static int ovpn_peer_move_vpn4(struct ovpn_priv *ovpn,
			       struct ovpn_peer *peer, struct in_addr addr)
{
	struct in_addr old = peer->vpn_addrs.ipv4;
	int ret;

	if (addr.s_addr == old.s_addr)
		return 0;
	ovpn_peer_unhash_addr4(ovpn, peer);
	peer->vpn_addrs.ipv4 = addr;
	ret = ovpn_peer_hash_addr4(ovpn, peer);
	if (ret) {
		peer->vpn_addrs.ipv4 = old;
		if (ovpn_peer_hash_addr4(ovpn, peer))
			peer->vpn_addrs.ipv4.s_addr = htonl(INADDR_ANY);
	}
	return ret;
}

static int ovpn_peer_move_vpn6(struct ovpn_priv *ovpn,
			       struct ovpn_peer *peer,
			       const struct in6_addr *addr)
{
	struct in6_addr old = peer->vpn_addrs.ipv6;
	int ret;

	if (ipv6_addr_equal(addr, &old))
		return 0;
	ovpn_peer_unhash_addr6(ovpn, peer);
	peer->vpn_addrs.ipv6 = *addr;
	ret = ovpn_peer_hash_addr6(ovpn, peer);
	if (ret) {
		peer->vpn_addrs.ipv6 = old;
		if (ovpn_peer_hash_addr6(ovpn, peer))
			peer->vpn_addrs.ipv6 = in6addr_any;
	}
	return ret;
}

/*
 * ovpn_peer_set_vpn_addrs - change a peer's VPN addresses (MP)
 * @peer: the peer
 * @ip4: the new IPv4 address (INADDR_ANY clears it), or NULL to keep it
 * @ip6: the new IPv6 address (in6addr_any clears it), or NULL to keep it
 *
 * Nothing changes unless the whole change is valid.  A removed peer is
 * not hashed again.
 *
 * Return: 0, -ENOENT if the peer was removed meanwhile, -EADDRINUSE if
 * another peer has one of the addresses, -EDESTADDRREQ if the peer would
 * be left without any VPN address, -ENOMEM (or another error of
 * rhashtable_insert_fast()) if a table could not take the new address.
 */
static int ovpn_peer_set_vpn_addrs(struct ovpn_peer *peer,
				   const struct in_addr *ip4,
				   const struct in6_addr *ip6)
{
	struct ovpn_priv *ovpn = peer->ovpn;
	struct in_addr new4, old4;
	struct in6_addr new6;
	int ret = 0;

	spin_lock_bh(&ovpn->lock);
	if (peer->removed) {
		ret = -ENOENT;
		goto out;
	}
	new4 = ip4 ? *ip4 : peer->vpn_addrs.ipv4;
	new6 = ip6 ? *ip6 : peer->vpn_addrs.ipv6;
	if (new4.s_addr == htonl(INADDR_ANY) && ipv6_addr_any(&new6)) {
		ret = -EDESTADDRREQ;
		goto out;
	}
	if (ovpn_vpn_addrs_taken(ovpn, peer, &new4, &new6)) {
		ret = -EADDRINUSE;
		goto out;
	}
	old4 = peer->vpn_addrs.ipv4;
	ret = ovpn_peer_move_vpn4(ovpn, peer, new4);
	if (!ret) {
		ret = ovpn_peer_move_vpn6(ovpn, peer, &new6);
		if (ret)
			ovpn_peer_move_vpn4(ovpn, peer, old4);
	}
out:
	spin_unlock_bh(&ovpn->lock);
	return ret;
}

/*
 * ovpn_peer_keepalive_set - set a peer's keepalive interval and timeout
 * @peer: the peer
 * @interval: seconds of TX silence before a keepalive is sent; 0 = never
 * @timeout: seconds of RX silence before the peer expires; 0 = never
 *
 * Both clocks restart now.
 */
static void ovpn_peer_keepalive_set(struct ovpn_peer *peer, u32 interval,
				    u32 timeout)
{
	time64_t now = ktime_get_seconds();

	spin_lock_bh(&peer->lock);
	WRITE_ONCE(peer->keepalive_interval, interval);
	WRITE_ONCE(peer->keepalive_timeout, timeout);
	WRITE_ONCE(peer->last_recv, now);
	WRITE_ONCE(peer->last_sent, now);
	spin_unlock_bh(&peer->lock);

	/* Let the timer pick up the new deadlines now. */
	mod_timer(&peer->keepalive_timer, jiffies);
}

/* Move a floating MP peer in the transport table; ovpn->lock held. */
static void ovpn_peer_rehash_transp(struct ovpn_peer *peer)
{
	struct ovpn_priv *ovpn = peer->ovpn;

	/* A removed peer stays out of every table (see peer.h). */
	if (ovpn->mode != OVPN_MODE_MP || peer->removed)
		return;
	ovpn_peer_unhash_transp(ovpn, peer);
	ovpn_peer_hash_transp(ovpn, peer);
}

/*
 * ovpn_peer_update_bind - give a published UDP peer new endpoints
 * @peer: the peer
 * @new: the new bind, owned by the peer from now on
 *
 * Cached routes are for the old endpoints; in MP mode the peer moves in
 * the transport-address table.
 *
 * Context: any (BH-safe locking).
 */
static void ovpn_peer_update_bind(struct ovpn_peer *peer,
				  struct ovpn_bind *new)
{
	struct ovpn_bind *old;

	spin_lock_bh(&peer->lock);
	old = rcu_replace_pointer(peer->bind, new,
				  lockdep_is_held(&peer->lock));
	spin_unlock_bh(&peer->lock);
	/* Readers of the old bind are done after a grace period. */
	if (old)
		kfree_rcu(old, rcu);
	dst_cache_reset(&peer->dst_cache);

	spin_lock_bh(&peer->ovpn->lock);
	ovpn_peer_rehash_transp(peer);
	spin_unlock_bh(&peer->ovpn->lock);
}

/**
 * ovpn_peer_change - apply a PEER_SET request to a published peer
 * @peer: the peer, held by the caller
 * @cfg: the changes, as parsed and checked by netlink.c; its @bind (a UDP
 *	 peer's new endpoints, or NULL) is taken over whatever the outcome
 *
 * All or nothing: the VPN addresses, the one change that can fail, go
 * first and are checked and made under ovpn->lock in one go
 * (ovpn_peer_set_vpn_addrs()); the others cannot fail.
 *
 * Context: process context.
 * Return: 0, or an error of ovpn_peer_set_vpn_addrs() with nothing
 * changed.
 */
int ovpn_peer_change(struct ovpn_peer *peer, struct ovpn_peer_config *cfg)
{
	int ret;

	if (cfg->has_vpn_ipv4 || cfg->has_vpn_ipv6) {
		ret = ovpn_peer_set_vpn_addrs(peer,
					      cfg->has_vpn_ipv4 ?
					      &cfg->vpn_ipv4 : NULL,
					      cfg->has_vpn_ipv6 ?
					      &cfg->vpn_ipv6 : NULL);
		if (ret) {
			kfree(cfg->bind);
			return ret;
		}
	}
	if (cfg->bind)
		ovpn_peer_update_bind(peer, cfg->bind);
	if (cfg->has_tx_id)
		WRITE_ONCE(peer->tx_id, cfg->tx_id);
	if (cfg->has_mssfix)
		WRITE_ONCE(peer->mssfix, cfg->mssfix);
	if (cfg->has_keepalive)
		ovpn_peer_keepalive_set(peer, cfg->keepalive_interval,
					cfg->keepalive_timeout);
	return 0;
}

static bool ovpn_peer_local_learnt_lately(struct ovpn_peer *peer)
{
	return time_before(jiffies, READ_ONCE(peer->local_learnt) +
			   OVPN_LOCAL_LEARN_GAP);
}

/**
 * ovpn_peer_float - follow a UDP peer to a new address
 * @peer: the peer, held by the caller
 * @skb: an authenticated, not replayed packet from it, outer headers in
 *	 place
 *
 * A new source address or port becomes the peer's remote endpoint and is
 * notified, once; a new local (destination) address is learnt silently,
 * one change per OVPN_LOCAL_LEARN_GAP at most.
 *
 * Context: softirq or async crypto completion.
 */
void ovpn_peer_float(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_bind *bind, *new;
	union ovpn_sockaddr ss;
	bool moved;

	if (!ovpn_skb_src_sockaddr(skb, &ss))
		return;

	rcu_read_lock();
	bind = rcu_dereference(peer->bind);
	if (!bind || (ovpn_bind_remote_equal(bind, &ss) &&
		      ovpn_bind_local_equal(bind, skb))) {
		rcu_read_unlock();
		return;
	}
	moved = !ovpn_bind_remote_equal(bind, &ss);
	rcu_read_unlock();

	/*
	 * Only the local address differs.  A server reached on several of
	 * its addresses at once (multi-homed, anycast) would learn one on
	 * every packet, each time with an allocation, the device lock and a
	 * route cache reset: it learns one change per OVPN_LOCAL_LEARN_GAP.
	 */
	if (!moved && ovpn_peer_local_learnt_lately(peer))
		return;

	new = ovpn_bind_from_sockaddr(&ss);
	if (IS_ERR(new))
		return;
	ovpn_bind_set_local(new, skb);

	spin_lock_bh(&peer->lock);
	bind = rcu_dereference_protected(peer->bind,
					 lockdep_is_held(&peer->lock));
	/*
	 * Decided again on the bind in place: another CPU may have learnt
	 * the same endpoints meanwhile, which is one float, notified once.
	 */
	moved = !ovpn_bind_remote_equal(bind, &ss);
	if (!moved && (ovpn_bind_local_equal(bind, skb) ||
		       ovpn_peer_local_learnt_lately(peer))) {
		spin_unlock_bh(&peer->lock);
		kfree(new);
		return;
	}
	if (!ovpn_bind_local_equal(bind, skb))
		WRITE_ONCE(peer->local_learnt, jiffies);
	rcu_assign_pointer(peer->bind, new);
	spin_unlock_bh(&peer->lock);
	kfree_rcu(bind, rcu);

	dst_cache_reset(&peer->dst_cache);
	if (!moved)
		return;
	spin_lock_bh(&peer->ovpn->lock);
	ovpn_peer_rehash_transp(peer);
	spin_unlock_bh(&peer->ovpn->lock);
	ovpn_nl_peer_float_notify(peer, &ss);
}
