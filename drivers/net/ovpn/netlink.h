/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - generic netlink
 *
 * The "ovpn" generic netlink family: registration here, the request
 * handlers in netlink.c, policies and the ops table generated from
 * Documentation/netlink/specs/ovpn.yaml into netlink-gen.c.
 */

#ifndef _NET_OVPN_NETLINK_H_
#define _NET_OVPN_NETLINK_H_

int ovpn_nl_register(void);
void ovpn_nl_unregister(void);

#endif /* _NET_OVPN_NETLINK_H_ */
