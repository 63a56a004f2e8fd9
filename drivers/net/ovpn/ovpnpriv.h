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

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <net/gro_cells.h>
#include <uapi/linux/if_link.h>

struct ovpn_parallel;

/* The rtnl link kind of an ovpn device, by which netlink.c knows one. */
#define OVPN_LINK_KIND		"ovpn"

/**
 * struct ovpn_peer_collection - the peers of an MP device
 * @by_id: by peer id (the id their packets carry)
 * @by_vpn_addr4: by VPN IPv4 address (TX routing, RPF)
 * @by_vpn_addr6: by VPN IPv6 address (TX routing, RPF)
 * @by_transp_addr: by remote transport address (packets with no peer id)
 *
 * Written under ovpn->lock, read under RCU.  A server carries from a few
 * peers to a hundred thousand, so no table has a fixed size.
 *
 * @by_id is an XArray: the daemon hands out small, dense ids, so a lookup
 * descends two or three levels whatever the number of peers, and there
 * is no hash for a remote sender to flood.  It is also ordered, which is
 * what makes dumps resumable by id and removals of every peer doable in
 * chunks that let the CPU go (ovpn_peers_dump(), ovpn_peers_remove()).
 *
 * The address tables are rhashtables: they grow and shrink with the
 * number of peers, each table hashes with its own random seed, and a
 * chain that grows too long anyway makes it rehash with a new one, so a
 * remote sender who picks its addresses and ports cannot lengthen the
 * walk of a lookup.  A VPN address belongs to one peer at most; a
 * transport address may be shared (a peer floats to where another one
 * was, the daemon adds two peers behind one endpoint), so that table is
 * an rhltable: peers with the same key hang off one entry of the chain,
 * which keeps the chain short, instead of each taking a place in it,
 * which no rehash could shorten.
 *
 * A peer that moves (PEER_SET, float) is taken out and put back in; a
 * concurrent lookup may miss that peer, never another one, moved, added,
 * removed or rehashed meanwhile.
 */
struct ovpn_peer_collection {
	struct xarray by_id;
	struct rhashtable by_vpn_addr4;
	struct rhashtable by_vpn_addr6;
	struct rhltable by_transp_addr;
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
 * @parallel: the crypt rings and workers, if the device encrypts and
 *	      decrypts on every CPU (see queue.c); set before the device is
 *	      registered, freed with it
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
	struct ovpn_parallel *parallel;
};

#endif /* _NET_OVPN_OVPNPRIV_H_ */
