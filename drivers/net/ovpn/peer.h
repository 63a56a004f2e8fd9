/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - peers
 *
 * A peer is the other end of a tunnel: its ids, its VPN addresses, its
 * transport (socket and, for UDP, endpoints), its keys and its counters.
 *
 * Lifetime (struct ovpn_peer):
 * - created by ovpn_peer_create() from a parsed request (struct
 *   ovpn_peer_config), percpu_ref initialised last, and published under
 *   ovpn->lock: in MP mode in the device's tables (see struct
 *   ovpn_peer_collection), in P2P mode in ovpn->peer;
 * - borrowed by the data path under rcu_read_lock() with
 *   percpu_ref_tryget_live_rcu() by the lookup helpers below, which
 *   return the peer with one reference or NULL; every borrow ends with one
 *   ovpn_peer_put(), in async crypto completions as their last action;
 * - removed by ovpn_peer_del() exactly once: under ovpn->lock it is
 *   unhashed and marked @removed (a concurrent float or PEER_SET must not
 *   hash it again), the removal is notified, and then its initial
 *   reference is killed;
 * - when the last borrower is gone, the release callback (any context)
 *   adds the peer to a batch that the module workqueue tears down after
 *   one RCU grace period for the whole batch: it stops the keepalive
 *   timer, kills the key slots, detaches from the socket, drops the
 *   device reference, runs percpu_ref_exit() and frees the peer.
 *
 * The keepalive timer holds no reference: it only runs while the peer's
 * memory is there, because the teardown shuts it down before anything
 * else, and it re-arms itself only while the peer is live.
 *
 * Locking: ovpn->lock (a spinlock, taken with BH disabled) protects the
 * tables, @removed and @vpn_addrs changes.  @lock serialises replacements
 * of @bind and changes of the keepalive parameters; a replaced @bind is
 * freed after a grace period, so readers only need RCU (a section with BH
 * disabled is one).  @tx_id is one word, written with WRITE_ONCE() and
 * read with READ_ONCE(): a packet carries the old id or the new one.
 */

#ifndef _NET_OVPN_PEER_H_
#define _NET_OVPN_PEER_H_

#include <linux/llist.h>
#include <linux/percpu-refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/timekeeping.h>
#include <linux/timer_types.h>
#include <net/dst_cache.h>

#include "bind.h"
#include "crypto.h"
#include "stats.h"

struct ovpn_peer_collection;
struct ovpn_peer_queues;
struct ovpn_priv;
struct ovpn_socket;
struct socket;

/**
 * struct ovpn_transp_key - a UDP peer's remote endpoint, as hashed
 * @addr: the address; an IPv4 one in the first word, the rest zero
 * @port: the port
 * @family: AF_INET or AF_INET6; 0 when the peer is not in the table
 * @scope_id: the IPv6 scope, 0 for IPv4
 *
 * The transport-address table compares keys as bytes, and the remote
 * endpoint lives in the peer's bind, which a float replaces at any time:
 * the peer keeps, next to its link in the table, a copy of what it was
 * hashed with, with no padding and every unused byte zero.  It changes
 * only under ovpn->lock and only while the peer is out of the table.
 */
struct ovpn_transp_key {
	struct in6_addr addr;
	__be16 port;
	u16 family;
	u32 scope_id;
};

/**
 * struct ovpn_peer - the other end of a tunnel
 * @ovpn: the device the peer belongs to (a reference is held)
 * @dev_tracker: tracker of that device reference
 * @id: id the peer's packets carry (our RX id)
 * @tx_id: id we write into packets to the peer; READ_ONCE() on TX
 * @vpn_addrs: addresses assigned to the peer inside the tunnel (MP)
 * @vpn_addrs.ipv4: IPv4 address, or INADDR_ANY
 * @vpn_addrs.ipv6: IPv6 address, or the unspecified address
 * @vpn4_node: link in the by-VPN-IPv4 table (MP)
 * @vpn6_node: link in the by-VPN-IPv6 table (MP)
 * @transp_node: link in the by-transport-address table (MP)
 * @transp_key: what @transp_node is hashed with (ovpn->lock)
 * @sock: the transport socket; the peer holds one reference on it for
 *	  its whole life, so the data path never takes one
 * @crypto: the key slots
 * @bind: UDP endpoints (RCU; replaced under @lock); NULL for TCP
 * @dst_cache: route cache for UDP transmission
 * @stats: traffic counters (see stats.h)
 * @keepalive_interval: seconds of TX silence before a keepalive; 0 = off
 * @keepalive_timeout: seconds of RX silence before expiry; 0 = off
 * @mssfix: the largest outer packet TCP SYNs through the peer are clamped
 *	    for (see mss.h); read locklessly by the data path
 * @last_recv: ktime_get_seconds() of the last authenticated packet
 * @last_sent: ktime_get_seconds() of the last packet sent
 * @local_learnt: jiffies of the last change of the local address learnt
 *		  from a packet (written under @lock)
 * @removed: unpublished; never to be hashed again (ovpn->lock)
 * @delete_reason: why the peer was removed
 * @lock: protects @bind updates and the keepalive parameters
 * @ref: borrowers; see the lifetime rules above
 * @release_entry: link in the batch of released peers to tear down
 * @rcu: the free, a grace period after the teardown: ovpn_tcp_close()
 *	 may read the peer under RCU through an attachment that the
 *	 teardown is detaching
 * @keepalive_timer: fires at the peer's next keepalive deadline
 * @keepalive_work: sends one keepalive packet from process context
 * @remove_entry: link in a private list of peers being removed together
 * @queues: the ordered queues of the parallel path, if the device has one
 *	    (see queue.h); set before the peer is published
 */
struct ovpn_peer {
	struct ovpn_priv *ovpn;
	netdevice_tracker dev_tracker;
	u32 id;
	u32 tx_id;
	struct {
		struct in_addr ipv4;
		struct in6_addr ipv6;
	} vpn_addrs;
	struct rhash_head vpn4_node;
	struct rhash_head vpn6_node;
	struct rhlist_head transp_node;
	struct ovpn_transp_key transp_key;
	struct ovpn_socket *sock;
	struct ovpn_crypto_state crypto;
	struct ovpn_bind __rcu *bind;
	struct dst_cache dst_cache;
	struct ovpn_stats stats;
	unsigned long keepalive_interval;
	unsigned long keepalive_timeout;
	u16 mssfix;
	time64_t last_recv;
	time64_t last_sent;
	unsigned long local_learnt;
	bool removed;
	enum ovpn_del_peer_reason delete_reason;
	spinlock_t lock; /* @bind updates, keepalive parameters */
	struct percpu_ref ref;
	struct llist_node release_entry;
	struct rcu_head rcu;
	struct timer_list keepalive_timer;
	struct work_struct keepalive_work;
	struct llist_node remove_entry;
	struct ovpn_peer_queues *queues;
};

/**
 * ovpn_peer_hold - take one more reference on a peer the caller holds
 * @peer: the peer, which the caller already holds a reference on
 */
static inline void ovpn_peer_hold(struct ovpn_peer *peer)
{
	percpu_ref_get(&peer->ref);
}

/**
 * ovpn_peer_put - return a reference on a peer
 * @peer: the peer
 *
 * Context: any.
 */
static inline void ovpn_peer_put(struct ovpn_peer *peer)
{
	percpu_ref_put(&peer->ref);
}

/**
 * struct ovpn_peer_config - a peer as a PEER_NEW or PEER_SET request gives
 * @id: the id its packets carry
 * @tx_id: the id to write into packets to it, if @has_tx_id
 * @vpn_ipv4: its VPN IPv4 address, if @has_vpn_ipv4 (INADDR_ANY clears it)
 * @vpn_ipv6: its VPN IPv6 address, if @has_vpn_ipv6 (:: clears it)
 * @bind: its UDP endpoints, or NULL; owned by the config until
 *	  ovpn_peer_create() or ovpn_peer_change() takes it over
 * @keepalive_interval: seconds, if @has_keepalive
 * @keepalive_timeout: seconds, if @has_keepalive
 * @has_tx_id: @tx_id is set
 * @has_vpn_ipv4: @vpn_ipv4 is set
 * @has_vpn_ipv6: @vpn_ipv6 is set
 * @has_keepalive: both keepalive fields are set
 * @mssfix: the peer's mssfix (see mss.h), if @has_mssfix
 * @has_mssfix: @mssfix is set
 *
 * netlink.c parses and checks a request into one; peer.c alone builds or
 * changes a peer from it.
 */
struct ovpn_peer_config {
	u32 id;
	u32 tx_id;
	struct in_addr vpn_ipv4;
	struct in6_addr vpn_ipv6;
	struct ovpn_bind *bind;
	u32 keepalive_interval;
	u32 keepalive_timeout;
	u16 mssfix;
	bool has_tx_id;
	bool has_vpn_ipv4;
	bool has_vpn_ipv6;
	bool has_keepalive;
	bool has_mssfix;
};

int ovpn_peer_init_tables(struct ovpn_peer_collection *peers);
void ovpn_peer_destroy_tables(struct ovpn_peer_collection *peers);
int ovpn_peer_create(struct ovpn_priv *ovpn, struct ovpn_peer_config *cfg,
		     struct socket *sock);
int ovpn_peer_change(struct ovpn_peer *peer, struct ovpn_peer_config *cfg);
int ovpn_peer_del(struct ovpn_peer *peer, enum ovpn_del_peer_reason reason);
void ovpn_peers_remove(struct ovpn_priv *ovpn, struct ovpn_socket *sock,
		       enum ovpn_del_peer_reason reason);

struct ovpn_peer *ovpn_peer_get_by_id(struct ovpn_priv *ovpn, u32 id);
struct ovpn_peer *ovpn_peer_get_by_transp_addr(struct ovpn_priv *ovpn,
					       struct sk_buff *skb);
struct ovpn_peer *ovpn_peer_get_by_dst(struct ovpn_priv *ovpn,
				       struct sk_buff *skb);
bool ovpn_peer_check_by_src(struct ovpn_priv *ovpn, struct sk_buff *skb,
			    struct ovpn_peer *peer);

int ovpn_peers_dump(struct ovpn_priv *ovpn, unsigned long pos[2],
		    int (*fill)(struct ovpn_peer *peer, void *arg), void *arg);

void ovpn_peer_float(struct ovpn_peer *peer, struct sk_buff *skb);

/**
 * ovpn_peer_mark_recv - note that an authenticated packet arrived
 * @peer: the peer
 *
 * The timestamp has a resolution of one second and is only written when
 * it changes, so the receive path dirties this cache line once a second,
 * not once per packet.
 */
static inline void ovpn_peer_mark_recv(struct ovpn_peer *peer)
{
	time64_t now = ktime_get_seconds();

	if (READ_ONCE(peer->last_recv) != now)
		WRITE_ONCE(peer->last_recv, now);
}

/**
 * ovpn_peer_mark_sent - note that a packet was sent to the peer
 * @peer: the peer
 *
 * Same write-once-a-second rule as ovpn_peer_mark_recv().
 */
static inline void ovpn_peer_mark_sent(struct ovpn_peer *peer)
{
	time64_t now = ktime_get_seconds();

	if (READ_ONCE(peer->last_sent) != now)
		WRITE_ONCE(peer->last_sent, now);
}

#endif /* _NET_OVPN_PEER_H_ */
