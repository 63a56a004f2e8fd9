/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - TCP MSS clamping
 *
 * A TCP connection through the tunnel announces, in its SYN, the largest
 * segment it takes: the MSS its device's MTU allows.  If the tunnel's
 * packets, once encapsulated, no longer fit the transport's path, every
 * full-sized segment leaves as two outer fragments, or is lost where
 * fragments are.  Userspace openvpn rewrites the MSS of the SYNs it
 * carries (--mssfix); so does this driver, in both directions, from the
 * path MTU of each peer's transport and the exact overhead of its
 * encapsulation.
 */

#ifndef _NET_OVPN_MSS_H_
#define _NET_OVPN_MSS_H_

#include <linux/limits.h>
#include <linux/types.h>

struct ovpn_peer;
struct sk_buff;

/* A peer's mssfix: off, and the default, where only the path MTU counts */
#define OVPN_MSSFIX_OFF		0
#define OVPN_MSSFIX_PATH	U16_MAX
/* The smallest mssfix but 0: the smallest datagram IPv4 must reassemble */
#define OVPN_MSSFIX_MIN		576

bool ovpn_mss_clamp(struct ovpn_peer *peer, struct sk_buff *skb);

/**
 * ovpn_mssfix_valid - whether userspace may set a peer's mssfix to a value
 * @mssfix: the value, OVPN_A_PEER_MSSFIX
 *
 * Return: true for off, or a size of at least OVPN_MSSFIX_MIN.
 */
static inline bool ovpn_mssfix_valid(u16 mssfix)
{
	return mssfix == OVPN_MSSFIX_OFF || mssfix >= OVPN_MSSFIX_MIN;
}

#endif /* _NET_OVPN_MSS_H_ */
