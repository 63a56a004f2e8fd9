/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - per-device state
 *
 * One struct ovpn_priv lives in the private area of each ovpn net_device
 * and shares its lifetime: it is set up by the rtnl newlink handler and
 * freed with the device (needs_free_netdev).  Generic netlink handlers
 * reach it through a device reference taken by ovpn_nl_pre_doit(); peers
 * and socket attachments hold a device reference of their own.
 */

#ifndef _NET_OVPN_OVPNPRIV_H_
#define _NET_OVPN_OVPNPRIV_H_

#include <linux/bits.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/list_nulls.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/gro_cells.h>
#include <uapi/linux/if_link.h>

/* The rtnl link kind of an ovpn device, by which netlink.c knows one. */
#define OVPN_LINK_KIND		"ovpn"

#define OVPN_PEER_HASH_BITS	12

#define OVPN_PEER_HASH_SIZE	BIT(OVPN_PEER_HASH_BITS)

/**
 * struct ovpn_peer_collection - the peers of an MP device
 * @by_id: by peer id (the id their packets carry)
 * @by_vpn_addr4: by VPN IPv4 address (TX routing, RPF)
 * @by_vpn_addr6: by VPN IPv6 address (TX routing, RPF)
 * @by_transp_addr: by remote transport address (packets with no peer id)
 *
 * RCU-protected, written under ovpn->lock.  A peer's id never changes,
 * so @by_id is a plain hlist: a removed node keeps its next pointer and
 * a reader standing on it goes on down the right chain.  A peer moves
 * between buckets of the other tables (PEER_SET, float): a reader on the
 * moving node would follow it into another chain and miss the rest of
 * its own, so those are hlist_nulls whose end marker is the bucket's
 * index, and a lookup that ends in another bucket's marker starts over
 * (ovpn_peer_init_tables()).  A lookup may miss only the peer that moves.
 */
struct ovpn_peer_collection {
	DECLARE_HASHTABLE(by_id, OVPN_PEER_HASH_BITS);
	struct hlist_nulls_head by_vpn_addr4[OVPN_PEER_HASH_SIZE];
	struct hlist_nulls_head by_vpn_addr6[OVPN_PEER_HASH_SIZE];
	struct hlist_nulls_head by_transp_addr[OVPN_PEER_HASH_SIZE];
};

/**
 * struct ovpn_priv - private data of an ovpn device
 * @dev: the device this data belongs to
 * @mode: OVPN_MODE_P2P (one peer) or OVPN_MODE_MP (many peers, a server);
 *	  set once before the device is registered and never changed, so it
 *	  is read without locking
 * @lock: protects @peers, @peer, @sockets and @dying
 * @peers: MP peer tables (allocated only in MP mode)
 * @peer: the single peer of a P2P device (RCU)
 * @sockets: transport sockets attached to the device
 * @dying: set when the device starts going away: no peer or socket may be
 *	   added any more
 * @gro_cells: delivery of decrypted packets to the stack
 * @keepalive_work: periodic keepalive and expiry scan
 */
struct ovpn_priv {
	struct net_device *dev;
	enum ovpn_mode mode;
	spinlock_t lock; /* @peers, @peer, @sockets, @dying */
	struct ovpn_peer_collection *peers;
	struct ovpn_peer __rcu *peer;
	struct list_head sockets;
	bool dying;
	struct gro_cells gro_cells;
	struct delayed_work keepalive_work;
};

#endif /* _NET_OVPN_OVPNPRIV_H_ */
