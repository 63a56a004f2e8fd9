/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - per-device state
 *
 * One struct ovpn_priv lives in the private area of each ovpn net_device
 * and shares its lifetime: it is created by the rtnl newlink handler and
 * freed with the device (needs_free_netdev).  Generic netlink handlers
 * reach it through a netdev reference taken by ovpn_nl_pre_doit(), so it
 * never outlives a request that is using it.
 */

#ifndef _NET_OVPN_OVPNPRIV_H_
#define _NET_OVPN_OVPNPRIV_H_

#include <linux/netdevice.h>
#include <uapi/linux/if_link.h>

/**
 * struct ovpn_priv - private data of an ovpn device
 * @dev: the device this data belongs to
 * @mode: OVPN_MODE_P2P (one peer) or OVPN_MODE_MP (many peers, a server);
 *	  set once before the device is registered and never changed, so it
 *	  is read without locking
 */
struct ovpn_priv {
	struct net_device *dev;
	enum ovpn_mode mode;
};

#endif /* _NET_OVPN_OVPNPRIV_H_ */
