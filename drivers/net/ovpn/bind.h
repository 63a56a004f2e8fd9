/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - a UDP peer's transport endpoints
 *
 * struct ovpn_bind says where a UDP peer is (remote address and port) and
 * which local address we send from.  A peer points to its bind through an
 * RCU pointer; a float replaces the whole bind under the peer's lock and
 * frees the old one after a grace period, so readers never see a torn
 * address.  TCP peers have no bind: the connected socket says it all.
 */

#ifndef _NET_OVPN_BIND_H_
#define _NET_OVPN_BIND_H_

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/rcupdate.h>
#include <linux/socket.h>

/**
 * union ovpn_sockaddr - a remote transport address, IPv4 or IPv6
 * @in4: IPv4 address and port (sin_family AF_INET)
 * @in6: IPv6 address, port and scope (sin6_family AF_INET6)
 */
union ovpn_sockaddr {
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/**
 * struct ovpn_bind - remote and local endpoints of a UDP peer
 * @remote: the peer's address and port; its family is the bind's
 * @local: our address (of the same family); all-zero means "let the
 *	   routing decide"
 * @local.ipv4: local IPv4 address
 * @local.ipv6: local IPv6 address
 * @rcu: for freeing after a grace period
 */
struct ovpn_bind {
	union ovpn_sockaddr remote;
	union {
		struct in_addr ipv4;
		struct in6_addr ipv6;
	} local;
	struct rcu_head rcu;
};

struct sk_buff;

struct ovpn_bind *ovpn_bind_from_sockaddr(const union ovpn_sockaddr *ss);
bool ovpn_bind_remote_equal(const struct ovpn_bind *bind,
			    const union ovpn_sockaddr *ss);
bool ovpn_skb_src_sockaddr(struct sk_buff *skb, union ovpn_sockaddr *ss);
void ovpn_bind_set_local(struct ovpn_bind *bind, struct sk_buff *skb);
bool ovpn_bind_local_equal(const struct ovpn_bind *bind, struct sk_buff *skb);

#endif /* _NET_OVPN_BIND_H_ */
