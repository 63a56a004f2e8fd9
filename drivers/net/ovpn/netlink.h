/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - generic netlink
 *
 * The "ovpn" generic netlink family: registration, request handlers and
 * the three notifications, in netlink.c; policies and the ops table
 * generated from Documentation/netlink/specs/ovpn.yaml into netlink-gen.c.
 */

#ifndef _NET_OVPN_NETLINK_H_
#define _NET_OVPN_NETLINK_H_

#include <linux/types.h>

struct ovpn_peer;
union ovpn_sockaddr;

int ovpn_nl_register(void);
void ovpn_nl_unregister(void);

void ovpn_nl_peer_del_notify(struct ovpn_peer *peer);
void ovpn_nl_key_swap_notify(struct ovpn_peer *peer, u8 key_id);
void ovpn_nl_peer_float_notify(struct ovpn_peer *peer,
			       const union ovpn_sockaddr *ss);

#endif /* _NET_OVPN_NETLINK_H_ */
