// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - a UDP peer's transport endpoints
 */

#include <linux/slab.h>
#include <net/ipv6.h>

#include "bind.h"
#include "peer.h"

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
 * ovpn_bind_reset - replace a peer's bind
 * @peer: the peer
 * @new: the new bind (may be NULL); the peer owns it from now on
 *
 * The old bind is freed after a grace period: the TX path reads it under
 * RCU only.
 *
 * Context: any; takes peer->lock.
 */
void ovpn_bind_reset(struct ovpn_peer *peer, struct ovpn_bind *new)
{
	struct ovpn_bind *old;

	spin_lock_bh(&peer->lock);
	old = rcu_replace_pointer(peer->bind, new,
				  lockdep_is_held(&peer->lock));
	spin_unlock_bh(&peer->lock);

	if (old)
		kfree_rcu(old, rcu);
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
