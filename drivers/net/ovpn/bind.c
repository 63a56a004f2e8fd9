// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - a UDP peer's transport endpoints
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "bind.h"

/**
 * ovpn_bind_from_sockaddr - make a bind for a remote address
 * @ss: the remote address and port, AF_INET or AF_INET6
 *
 * Context: process context, or any with the allocation failing softly.
 * Return: the bind, with no local address, or ERR_PTR(-EAFNOSUPPORT)
 * or ERR_PTR(-ENOMEM).
 */
struct ovpn_bind *ovpn_bind_from_sockaddr(const union ovpn_sockaddr *ss)
{
	struct ovpn_bind *bind;

	if (ss->in4.sin_family != AF_INET && ss->in4.sin_family != AF_INET6)
		return ERR_PTR(-EAFNOSUPPORT);

	bind = kzalloc_obj(*bind, GFP_ATOMIC);
	if (!bind)
		return ERR_PTR(-ENOMEM);

	if (ss->in4.sin_family == AF_INET)
		bind->remote.in4 = ss->in4;
	else
		bind->remote.in6 = ss->in6;
	return bind;
}

/**
 * ovpn_bind_remote_equal - tell whether a bind points to an address
 * @bind: the bind
 * @ss: a remote address and port
 *
 * Return: true if family, address, port (and IPv6 scope) are the same.
 */
bool ovpn_bind_remote_equal(const struct ovpn_bind *bind,
			    const union ovpn_sockaddr *ss)
{
	const union ovpn_sockaddr *r = &bind->remote;

	if (r->in4.sin_family != ss->in4.sin_family)
		return false;

	if (r->in4.sin_family == AF_INET)
		return r->in4.sin_addr.s_addr == ss->in4.sin_addr.s_addr &&
		       r->in4.sin_port == ss->in4.sin_port;

	return ipv6_addr_equal(&r->in6.sin6_addr, &ss->in6.sin6_addr) &&
	       r->in6.sin6_port == ss->in6.sin6_port &&
	       r->in6.sin6_scope_id == ss->in6.sin6_scope_id;
}

/**
 * ovpn_skb_src_sockaddr - the outer source address and port of a packet
 * @skb: a UDP packet as received, its IP and UDP headers in place
 * @ss: receives the address (zeroed first)
 *
 * An IPv6 link-local source gets the scope of the interface it came in
 * on, as a remote set by userspace would carry it.
 *
 * Return: false if the packet is neither IPv4 nor IPv6.
 */
bool ovpn_skb_src_sockaddr(struct sk_buff *skb, union ovpn_sockaddr *ss)
{
	memset(ss, 0, sizeof(*ss));
	switch (ip_hdr(skb)->version) {
	case 4:
		ss->in4.sin_family = AF_INET;
		ss->in4.sin_addr.s_addr = ip_hdr(skb)->saddr;
		ss->in4.sin_port = udp_hdr(skb)->source;
		return true;
	case 6:
		ss->in6.sin6_family = AF_INET6;
		ss->in6.sin6_addr = ipv6_hdr(skb)->saddr;
		ss->in6.sin6_port = udp_hdr(skb)->source;
		ss->in6.sin6_scope_id = ipv6_iface_scope_id(&ss->in6.sin6_addr,
							    skb->skb_iif);
		return true;
	}
	return false;
}

/**
 * ovpn_bind_set_local - take the local address of a bind from a packet
 * @bind: the bind, not published yet
 * @skb: a packet received from the bind's remote, outer headers in place;
 *	 its destination is our address
 */
void ovpn_bind_set_local(struct ovpn_bind *bind, struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		bind->local.ipv4.s_addr = ip_hdr(skb)->daddr;
	else
		bind->local.ipv6 = ipv6_hdr(skb)->daddr;
}

/**
 * ovpn_bind_local_equal - is a packet addressed to a bind's local address?
 * @bind: the bind
 * @skb: a packet received from the bind's remote (same address family),
 *	 outer headers in place
 *
 * Return: true if the packet's destination is the bind's local address.
 */
bool ovpn_bind_local_equal(const struct ovpn_bind *bind, struct sk_buff *skb)
{
	if (bind->remote.in4.sin_family == AF_INET)
		return bind->local.ipv4.s_addr == ip_hdr(skb)->daddr;
	return ipv6_addr_equal(&bind->local.ipv6, &ipv6_hdr(skb)->daddr);
}
