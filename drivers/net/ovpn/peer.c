// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - peers
 *
 * See peer.h for the lifetime and locking rules of struct ovpn_peer.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/ip6_route.h>
#include <net/route.h>

#include "io.h"
#include "main.h"
#include "netlink.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "proto.h"
#include "socket.h"

/* The least time between two local addresses learnt from packets. */
#define OVPN_LOCAL_LEARN_GAP	HZ

static void ovpn_peer_release_work(struct work_struct *work)
{
	struct ovpn_peer *peer = container_of(to_rcu_work(work),
					      struct ovpn_peer, release_work);

	/* First: a TCP socket's hooks use the peer until it is detached. */
	if (peer->sock)
		ovpn_socket_release_peer(peer->sock);
	ovpn_crypto_state_release(&peer->crypto);
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

/*
 * The last reference is gone.  This can run in any context (an async
 * crypto completion, an RCU callback), so the teardown, which sleeps
 * (crypto, socket), goes to the module workqueue after a grace period:
 * lockless readers that found the peer before it was unhashed are done by
 * then.
 */
static void ovpn_peer_release(struct percpu_ref *ref)
{
	struct ovpn_peer *peer = container_of(ref, struct ovpn_peer, ref);

	queue_rcu_work(ovpn_wq, &peer->release_work);
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
	peer->last_recv = ktime_get_seconds();
	peer->last_sent = peer->last_recv;
	peer->local_learnt = jiffies - OVPN_LOCAL_LEARN_GAP;
	peer->delete_reason = OVPN_DEL_PEER_REASON_TEARDOWN;
	spin_lock_init(&peer->lock);
	ovpn_crypto_state_init(&peer->crypto);
	INIT_RCU_WORK(&peer->release_work, ovpn_peer_release_work);
	INIT_WORK(&peer->keepalive_work, ovpn_peer_keepalive_send);

	ret = ovpn_stats_init(&peer->stats);
	if (ret)
		goto err_free;

	ret = dst_cache_init(&peer->dst_cache, GFP_KERNEL);
	if (ret)
		goto err_stats;

	/* Last: from here on the peer dies only through its reference. */
	ret = percpu_ref_init(&peer->ref, ovpn_peer_release, 0, GFP_KERNEL);
	if (ret)
		goto err_dst;

	netdev_hold(ovpn->dev, &peer->dev_tracker, GFP_KERNEL);
	return peer;

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

static u32 ovpn_hash_id(u32 id)
{
	return jhash_1word(id, 0);
}

static u32 ovpn_hash_addr4(__be32 addr)
{
	return jhash_1word((__force u32)addr, 0);
}

static u32 ovpn_hash_addr6(const struct in6_addr *addr)
{
	return jhash2((__force const u32 *)addr->s6_addr32, 4, 0);
}

static u32 ovpn_hash_sockaddr(const union ovpn_sockaddr *ss)
{
	if (ss->in4.sin_family == AF_INET)
		return jhash_2words((__force u32)ss->in4.sin_addr.s_addr,
				    (__force u32)ss->in4.sin_port, 0);
	return jhash_3words(ovpn_hash_addr6(&ss->in6.sin6_addr),
			    (__force u32)ss->in6.sin6_port,
			    ss->in6.sin6_scope_id, 0);
}

/* The bucket of each MP table that a key hashes to. */
static struct hlist_head *
ovpn_bucket_by_id(struct ovpn_peer_collection *peers, u32 id)
{
	u32 bkt = hash_min(ovpn_hash_id(id), HASH_BITS(peers->by_id));

	return &peers->by_id[bkt];
}

static u32 ovpn_bkt_vpn_addr4(__be32 addr)
{
	return hash_32(ovpn_hash_addr4(addr), OVPN_PEER_HASH_BITS);
}

static u32 ovpn_bkt_vpn_addr6(const struct in6_addr *addr)
{
	return hash_32(ovpn_hash_addr6(addr), OVPN_PEER_HASH_BITS);
}

static u32 ovpn_bkt_transp_addr(const union ovpn_sockaddr *ss)
{
	return hash_32(ovpn_hash_sockaddr(ss), OVPN_PEER_HASH_BITS);
}

/**
 * ovpn_peer_init_tables - set up the empty tables of an MP device
 * @peers: the tables, zeroed
 *
 * The end marker of each hlist_nulls chain is its bucket's index: a
 * lookup that reaches another one was led off its chain by a moving peer
 * and must start over.
 */
void ovpn_peer_init_tables(struct ovpn_peer_collection *peers)
{
	u32 i;

	hash_init(peers->by_id);
	for (i = 0; i < OVPN_PEER_HASH_SIZE; i++) {
		INIT_HLIST_NULLS_HEAD(&peers->by_vpn_addr4[i], i);
		INIT_HLIST_NULLS_HEAD(&peers->by_vpn_addr6[i], i);
		INIT_HLIST_NULLS_HEAD(&peers->by_transp_addr[i], i);
	}
}

/* Hash a peer by its remote transport address, if any; ovpn->lock held. */
static void ovpn_peer_hash_transp(struct ovpn_priv *ovpn,
				  struct ovpn_peer *peer)
{
	struct ovpn_bind *bind;
	u32 bkt;

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
	bkt = ovpn_bkt_transp_addr(&bind->remote);
	hlist_nulls_add_head_rcu(&peer->hash_entry_transp_addr,
				 &ovpn->peers->by_transp_addr[bkt]);
}

/* Hash a peer's VPN IPv4 address, if it has one; ovpn->lock held. */
static void ovpn_peer_hash_addr4(struct ovpn_priv *ovpn,
				 struct ovpn_peer *peer)
{
	__be32 addr = peer->vpn_addrs.ipv4.s_addr;
	u32 bkt = ovpn_bkt_vpn_addr4(addr);

	if (addr != htonl(INADDR_ANY))
		hlist_nulls_add_head_rcu(&peer->hash_entry_addr4,
					 &ovpn->peers->by_vpn_addr4[bkt]);
}

/* Hash a peer's VPN IPv6 address, if it has one; ovpn->lock held. */
static void ovpn_peer_hash_addr6(struct ovpn_priv *ovpn,
				 struct ovpn_peer *peer)
{
	const struct in6_addr *addr = &peer->vpn_addrs.ipv6;
	u32 bkt = ovpn_bkt_vpn_addr6(addr);

	if (!ipv6_addr_any(addr))
		hlist_nulls_add_head_rcu(&peer->hash_entry_addr6,
					 &ovpn->peers->by_vpn_addr6[bkt]);
}

static void ovpn_peer_unhash_addrs(struct ovpn_peer *peer)
{
	hlist_nulls_del_init_rcu(&peer->hash_entry_addr4);
	hlist_nulls_del_init_rcu(&peer->hash_entry_addr6);
	hlist_nulls_del_init_rcu(&peer->hash_entry_transp_addr);
}

/* Is a peer with this id in the MP tables?  ovpn->lock held. */
static bool ovpn_peer_id_taken(struct ovpn_priv *ovpn, u32 id)
{
	struct ovpn_peer *tmp;

	hlist_for_each_entry(tmp, ovpn_bucket_by_id(ovpn->peers, id),
			     hash_entry_id)
		if (tmp->id == id)
			return true;
	return false;
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
		hlist_del_init_rcu(&peer->hash_entry_id);
		ovpn_peer_unhash_addrs(peer);
	} else if (rcu_access_pointer(ovpn->peer) == peer) {
		RCU_INIT_POINTER(ovpn->peer, NULL);
		netif_carrier_off(ovpn->dev);
	}
	return true;
}

/*
 * Second half of a removal, outside ovpn->lock: tell userspace, then kill
 * the initial reference.  Each unpublished peer passes here exactly once.
 */
static void ovpn_peer_finish_removal(struct ovpn_peer *peer)
{
	ovpn_nl_peer_del_notify(peer);
	percpu_ref_kill(&peer->ref);
}

/*
 * MP lookup by VPN address; rcu_read_lock() or ovpn->lock held.  A walk
 * that ends in another bucket's marker followed a moving peer off its
 * chain: it starts over (see struct ovpn_peer_collection).
 */
static struct ovpn_peer *ovpn_peer_by_vpn4(struct ovpn_priv *ovpn,
					   __be32 addr)
{
	u32 bkt = ovpn_bkt_vpn_addr4(addr);
	struct hlist_nulls_node *node;
	struct ovpn_peer *peer;

restart:
	hlist_nulls_for_each_entry_rcu(peer, node,
				       &ovpn->peers->by_vpn_addr4[bkt],
				       hash_entry_addr4)
		if (peer->vpn_addrs.ipv4.s_addr == addr)
			return peer;
	if (get_nulls_value(node) != bkt)
		goto restart;
	return NULL;
}

static struct ovpn_peer *ovpn_peer_by_vpn6(struct ovpn_priv *ovpn,
					   const struct in6_addr *addr)
{
	u32 bkt = ovpn_bkt_vpn_addr6(addr);
	struct hlist_nulls_node *node;
	struct ovpn_peer *peer;

restart:
	hlist_nulls_for_each_entry_rcu(peer, node,
				       &ovpn->peers->by_vpn_addr6[bkt],
				       hash_entry_addr6)
		if (ipv6_addr_equal(&peer->vpn_addrs.ipv6, addr))
			return peer;
	if (get_nulls_value(node) != bkt)
		goto restart;
	return NULL;
}

/*
 * Would @ip4/@ip6 (either may be unspecified) clash with another peer's
 * VPN address?  Two peers with one address would make TX routing
 * ambiguous.  ovpn->lock held (which also keeps the tables stable).
 */
static bool ovpn_vpn_addrs_taken(struct ovpn_priv *ovpn,
				 const struct ovpn_peer *self,
				 const struct in_addr *ip4,
				 const struct in6_addr *ip6)
{
	struct ovpn_peer *other;

	if (ip4->s_addr != htonl(INADDR_ANY)) {
		other = ovpn_peer_by_vpn4(ovpn, ip4->s_addr);
		if (other && other != self)
			return true;
	}
	if (!ipv6_addr_any(ip6)) {
		other = ovpn_peer_by_vpn6(ovpn, ip6);
		if (other && other != self)
			return true;
	}
	return false;
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
 * a VPN address is (MP), -ENODEV if the device is going away.  On failure
 * the caller still owns @peer.
 */
static int ovpn_peer_add(struct ovpn_priv *ovpn, struct ovpn_peer *peer)
{
	struct ovpn_peer *old = NULL;

	spin_lock_bh(&ovpn->lock);
	if (ovpn->dying) {
		spin_unlock_bh(&ovpn->lock);
		return -ENODEV;
	}

	if (ovpn->mode == OVPN_MODE_MP) {
		if (ovpn_peer_id_taken(ovpn, peer->id)) {
			spin_unlock_bh(&ovpn->lock);
			return -EEXIST;
		}
		if (ovpn_vpn_addrs_taken(ovpn, peer, &peer->vpn_addrs.ipv4,
					 &peer->vpn_addrs.ipv6)) {
			spin_unlock_bh(&ovpn->lock);
			return -EADDRINUSE;
		}
		hlist_add_head_rcu(&peer->hash_entry_id,
				   ovpn_bucket_by_id(ovpn->peers, peer->id));
		ovpn_peer_hash_addr4(ovpn, peer);
		ovpn_peer_hash_addr6(ovpn, peer);
		ovpn_peer_hash_transp(ovpn, peer);
	} else {
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
	 * hold it until its socket is started.
	 */
	ovpn_peer_hold(peer);
	ret = ovpn_peer_add(ovpn, peer);
	if (ret) {
		ovpn_peer_put(peer);
		goto discard;
	}
	ovpn_socket_start(ovpn_sock);
	if (cfg->has_keepalive)
		mod_delayed_work(ovpn_wq, &ovpn->keepalive_work, 0);
	ovpn_peer_put(peer);
	return 0;

discard:
	ovpn_peer_discard(peer);
	return ret;
}

/**
 * ovpn_peer_del - remove a peer
 * @peer: the peer; the caller holds a reference, or is inside an RCU
 *	  read-side section in which it found @peer published (the
 *	  keepalive scan): the peer's memory is only freed after a grace
 *	  period, and the removal below tells a live peer from a gone one
 *	  under ovpn->lock
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

/**
 * ovpn_peers_remove - remove every peer of a device, or those of a socket
 * @ovpn: the device
 * @sock: only peers using this socket; NULL for all
 * @reason: why, as notified to userspace
 *
 * Context: any (BH-safe locking).
 */
void ovpn_peers_remove(struct ovpn_priv *ovpn, struct ovpn_socket *sock,
		       enum ovpn_del_peer_reason reason)
{
	struct ovpn_peer *peer, *tmp;
	LLIST_HEAD(list);
	struct hlist_node *next;
	int bkt;

	spin_lock_bh(&ovpn->lock);
	if (ovpn->mode == OVPN_MODE_MP) {
		hash_for_each_safe(ovpn->peers->by_id, bkt, next, peer,
				   hash_entry_id) {
			if (sock && peer->sock != sock)
				continue;
			if (ovpn_peer_unpublish(peer, reason))
				__llist_add(&peer->remove_entry, &list);
		}
	} else {
		peer = rcu_dereference_protected(ovpn->peer,
						 lockdep_is_held(&ovpn->lock));
		if (peer && (!sock || peer->sock == sock) &&
		    ovpn_peer_unpublish(peer, reason))
			__llist_add(&peer->remove_entry, &list);
	}
	spin_unlock_bh(&ovpn->lock);

	/* _safe: finishing a removal may free the peer. */
	llist_for_each_entry_safe(peer, tmp, list.first, remove_entry)
		ovpn_peer_finish_removal(peer);
}

/**
 * ovpn_peers_dump - hand the device's peers to a dump, resumably
 * @ovpn: the device
 * @pos: where the dump stands: two words, zero when it starts, updated
 *	 to resume with the peer that @fill refused
 * @fill: called for each peer under rcu_read_lock() (so it must not
 *	  sleep); non-zero stops the walk and is returned
 * @arg: passed to @fill
 *
 * An MP device is walked bucket by bucket of its id table: a peer added
 * or removed meanwhile may be missed or, if it moves within its bucket,
 * seen twice, as in any netlink dump.
 *
 * Context: process context.
 * Return: 0 once every peer was handed out, or what @fill returned.
 */
int ovpn_peers_dump(struct ovpn_priv *ovpn, unsigned long pos[2],
		    int (*fill)(struct ovpn_peer *peer, void *arg), void *arg)
{
	unsigned long bkt = pos[0], skip = pos[1], idx;
	struct ovpn_peer *peer;
	int ret = 0;

	rcu_read_lock();
	if (ovpn->mode == OVPN_MODE_P2P) {
		peer = rcu_dereference(ovpn->peer);
		if (!bkt && peer)
			ret = fill(peer, arg);
		if (!ret)
			pos[0] = 1;
		goto out;
	}
	for (; bkt < HASH_SIZE(ovpn->peers->by_id); bkt++, skip = 0) {
		idx = 0;
		hlist_for_each_entry_rcu(peer, &ovpn->peers->by_id[bkt],
					 hash_entry_id) {
			if (idx++ < skip)
				continue;
			ret = fill(peer, arg);
			if (ret) {
				pos[0] = bkt;
				pos[1] = idx - 1;
				goto out;
			}
		}
	}
	pos[0] = bkt;
	pos[1] = 0;
out:
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

	hlist_for_each_entry_rcu(peer, ovpn_bucket_by_id(ovpn->peers, id),
				 hash_entry_id) {
		if (peer->id != id)
			continue;
		/* Failing means the peer is being removed: it is gone. */
		if (percpu_ref_tryget_live_rcu(&peer->ref))
			found = peer;
		break;
	}
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
	struct hlist_nulls_node *node;
	union ovpn_sockaddr ss;
	u32 bkt;

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

	bkt = ovpn_bkt_transp_addr(&ss);
restart:
	hlist_nulls_for_each_entry_rcu(peer, node,
				       &ovpn->peers->by_transp_addr[bkt],
				       hash_entry_transp_addr) {
		if (!ovpn_peer_remote_is(peer, &ss))
			continue;
		if (percpu_ref_tryget_live_rcu(&peer->ref))
			found = peer;
		goto out;
	}
	/* Led off the chain by a moving peer: see ovpn_peer_by_vpn4(). */
	if (get_nulls_value(node) != bkt)
		goto restart;
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
 * be left without any VPN address.
 */
static int ovpn_peer_set_vpn_addrs(struct ovpn_peer *peer,
				   const struct in_addr *ip4,
				   const struct in6_addr *ip6)
{
	struct ovpn_priv *ovpn = peer->ovpn;
	struct in6_addr new6;
	struct in_addr new4;
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
	/* Only an address that changes moves: every move costs readers. */
	if (new4.s_addr != peer->vpn_addrs.ipv4.s_addr) {
		hlist_nulls_del_init_rcu(&peer->hash_entry_addr4);
		peer->vpn_addrs.ipv4 = new4;
		ovpn_peer_hash_addr4(ovpn, peer);
	}
	if (!ipv6_addr_equal(&new6, &peer->vpn_addrs.ipv6)) {
		hlist_nulls_del_init_rcu(&peer->hash_entry_addr6);
		peer->vpn_addrs.ipv6 = new6;
		ovpn_peer_hash_addr6(ovpn, peer);
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

	/* Let the scan pick up the new deadlines now. */
	mod_delayed_work(ovpn_wq, &peer->ovpn->keepalive_work, 0);
}

/*
 * One peer's keepalive duties: expire it, or queue a keepalive packet.
 * Returns the seconds until its next deadline (LONG_MAX if none).
 * rcu_read_lock() held.
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
			if (percpu_ref_tryget_live_rcu(&peer->ref) &&
			    !queue_work(ovpn_wq, &peer->keepalive_work))
				ovpn_peer_put(peer);
			left = interval;
		}
		next = min(next, left);
	}
	return next;
}

/**
 * ovpn_priv_keepalive_work - keepalive and expiry scan of a device
 * @work: the device's keepalive_work
 *
 * Re-arms itself for the earliest deadline among the peers.
 */
void ovpn_priv_keepalive_work(struct work_struct *work)
{
	struct ovpn_priv *ovpn = container_of(to_delayed_work(work),
					      struct ovpn_priv,
					      keepalive_work);
	time64_t now = ktime_get_seconds();
	struct ovpn_peer *peer;
	long next = LONG_MAX;
	int bkt;

	rcu_read_lock();
	if (ovpn->mode == OVPN_MODE_MP) {
		hash_for_each_rcu(ovpn->peers->by_id, bkt, peer, hash_entry_id)
			next = min(next, ovpn_peer_keepalive_check(peer, now));
	} else {
		peer = rcu_dereference(ovpn->peer);
		if (peer)
			next = ovpn_peer_keepalive_check(peer, now);
	}
	rcu_read_unlock();

	if (next != LONG_MAX)
		queue_delayed_work(ovpn_wq, &ovpn->keepalive_work,
				   max(next, 1L) * HZ);
}

/* Move a floating MP peer in the transport table; ovpn->lock held. */
static void ovpn_peer_rehash_transp(struct ovpn_peer *peer)
{
	struct ovpn_priv *ovpn = peer->ovpn;

	/* A removed peer stays out of every table (see peer.h). */
	if (ovpn->mode != OVPN_MODE_MP || peer->removed)
		return;
	hlist_nulls_del_init_rcu(&peer->hash_entry_transp_addr);
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
