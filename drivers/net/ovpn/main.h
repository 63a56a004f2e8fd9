/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - device
 *
 * The ovpn net_device: its rtnl link kind, its properties and the helpers
 * that tell an ovpn device from any other.
 */

#ifndef _NET_OVPN_MAIN_H_
#define _NET_OVPN_MAIN_H_

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "proto.h"

/* The larger transport header (TCP) and the larger outer IP header (IPv6) */
#define OVPN_MAX_TRANSPORT_HLEN	\
	max(sizeof(struct udphdr), sizeof(struct tcphdr))
#define OVPN_MAX_IP_HLEN	\
	max(sizeof(struct ipv6hdr), sizeof(struct iphdr))

/*
 * Room an encrypted packet needs in front of the plaintext in the worst
 * case.  The default MTU is derived from it, so that a full-sized inner
 * packet still fits a 1500-byte link: 1500 - 84 = 1416.
 */
#define OVPN_HEAD_ROOM		(OVPN_DATA_OVERHEAD + \
				 OVPN_MAX_TRANSPORT_HLEN + OVPN_MAX_IP_HLEN)

/* Tail room: AEAD tags are prepended, only block ciphers would pad */
#define OVPN_TAIL_ROOM		OVPN_AUTH_TAG_SIZE

/*
 * The module's own workqueue: every deferred teardown (RCU-deferred object
 * freeing, peer removal requested from atomic context, keepalive) runs
 * here, so that module exit can drain it before the code goes away.
 */
extern struct workqueue_struct *ovpn_wq;

bool ovpn_dev_is_valid(const struct net_device *dev);

#endif /* _NET_OVPN_MAIN_H_ */
