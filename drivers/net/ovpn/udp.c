// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - UDP transport
 */

#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst_cache.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>
#include <uapi/linux/udp.h>

#include "io.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "proto.h"
#include "socket.h"
#include "udp.h"

/**
 * ovpn_udp_sock_from_sk - the ovpn attachment of a UDP socket
 * @sk: any socket
 *
 * sk_user_data is shared by every kernel user of sockets (tunnels, BPF
 * sockmap, ...): it is ours only if the socket is UDP and carries our
 * encapsulation type.
 *
 * Context: rcu_read_lock() held.
 * Return: the attachment, or NULL.
 */
struct ovpn_socket *ovpn_udp_sock_from_sk(struct sock *sk)
{
	if (sk->sk_protocol != IPPROTO_UDP || sk->sk_type != SOCK_DGRAM)
		return NULL;
	if (READ_ONCE(udp_sk(sk)->encap_type) != UDP_ENCAP_OVPNINUDP)
		return NULL;
	return rcu_dereference_sk_user_data(sk);
}

static void ovpn_udp_drop(struct ovpn_priv *ovpn, struct sk_buff *skb)
{
	dev_dstats_rx_dropped(ovpn->dev);
	kfree_skb(skb);
}

/*
 * encap_rcv hook: skb->data is at the UDP header.  Return 1 to let the
 * packet continue to the socket as a plain datagram (control traffic for
 * userspace), 0 when the packet was consumed.
 */
static int ovpn_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	unsigned int off = sizeof(struct udphdr);
	struct ovpn_socket *ovpn_sock;
	struct ovpn_peer *peer;
	struct ovpn_priv *ovpn;
	u32 peer_id;
	u8 opcode;

	/* Called under RCU by the UDP receive path. */
	ovpn_sock = ovpn_udp_sock_from_sk(sk);
	if (unlikely(!ovpn_sock))
		return 1;
	ovpn = ovpn_sock->ovpn;

	if (unlikely(!pskb_may_pull(skb, off + OVPN_OPCODE_SIZE))) {
		ovpn_udp_drop(ovpn, skb);
		return 0;
	}

	opcode = ovpn_opcode_from_skb(skb, off);
	if (opcode != OVPN_OPCODE_DATA_V2) {
		/* DATA_V1 is never offloaded; the rest is for userspace. */
		if (opcode == OVPN_OPCODE_DATA_V1) {
			ovpn_udp_drop(ovpn, skb);
			return 0;
		}
		return 1;
	}

	peer_id = ovpn_peer_id_from_skb(skb, off);
	if (peer_id == OVPN_PEER_ID_UNDEF)
		peer = ovpn_peer_get_by_transp_addr(ovpn, skb);
	else
		peer = ovpn_peer_get_by_id(ovpn, peer_id);
	if (unlikely(!peer)) {
		net_dbg_ratelimited("%s: no peer for id %u\n",
				    netdev_name(ovpn->dev), peer_id);
		ovpn_udp_drop(ovpn, skb);
		return 0;
	}

	/* The OpenVPN packet starts after the UDP header. */
	__skb_pull(skb, off);
	ovpn_recv(peer, skb);
	return 0;
}

/* The socket is being destroyed: its peers go with it. */
static void ovpn_udp_encap_destroy(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	ovpn_sock = ovpn_socket_get(sk);
	if (!ovpn_sock)
		return;

	ovpn_peers_remove(ovpn_sock->ovpn, ovpn_sock,
			  OVPN_DEL_PEER_REASON_TRANSPORT_DISCONNECT);
	ovpn_socket_detach(ovpn_sock, true);
	ovpn_socket_put(ovpn_sock);
}

/**
 * ovpn_udp_setup - turn a UDP socket into an ovpn transport
 * @ovpn_sock: the new attachment; its socket is locked by the caller
 *
 * sk_user_data is published before the receive hook is installed, so the
 * hook never runs without it.
 *
 * Return: 0.
 */
int ovpn_udp_setup(struct ovpn_socket *ovpn_sock)
{
	struct udp_tunnel_sock_cfg cfg = {
		.sk_user_data = ovpn_sock,
		.encap_type = UDP_ENCAP_OVPNINUDP,
		.encap_rcv = ovpn_udp_encap_recv,
		.encap_destroy = ovpn_udp_encap_destroy,
	};

	setup_udp_tunnel_sock(sock_net(ovpn_sock->sk), ovpn_sock->sk, &cfg);
	return 0;
}

/**
 * ovpn_udp_undo - give a UDP socket back to plain userspace use
 * @ovpn_sock: the attachment being detached; its socket is locked
 *
 * Undoes ovpn_udp_setup() field by field: the hooks first, so no new
 * packet reaches us, then the user data (readers in flight are covered by
 * the RCU-deferred release).  The encapsulation static key stays enabled:
 * the UDP core drops it when the socket is destroyed.
 */
void ovpn_udp_undo(struct ovpn_socket *ovpn_sock)
{
	struct sock *sk = ovpn_sock->sk;
	struct udp_sock *up = udp_sk(sk);

	WRITE_ONCE(up->encap_rcv, NULL);
	WRITE_ONCE(up->encap_destroy, NULL);
	WRITE_ONCE(up->encap_type, 0);
	rcu_assign_sk_user_data(sk, NULL);
	inet_dec_convert_csum(sk);
	inet_set_bit(MC_LOOP, sk);
}

/*
 * The route of @peer's packets to @bind's IPv4 remote, from the peer's
 * route cache or looked up (and cached); @fl filled in.  BH disabled: the
 * cache is per CPU.
 */
static struct rtable *ovpn_udp4_route(struct ovpn_peer *peer,
				      struct ovpn_bind *bind, struct sock *sk,
				      struct flowi4 *fl)
{
	struct rtable *rt;

	*fl = (struct flowi4) {
		.saddr = bind->local.ipv4.s_addr,
		.daddr = bind->remote.in4.sin_addr.s_addr,
		.fl4_sport = inet_sk(sk)->inet_sport,
		.fl4_dport = bind->remote.in4.sin_port,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_mark = READ_ONCE(sk->sk_mark),
	};
	rt = dst_cache_get_ip4(&peer->dst_cache, &fl->saddr);
	if (rt)
		return rt;
	rt = ip_route_output_flow(sock_net(sk), fl, sk);
	/*
	 * The local address went away (a learnt or configured one is no
	 * longer ours, or no longer routable): let routing pick.
	 */
	if (IS_ERR(rt) && fl->saddr) {
		fl->saddr = 0;
		rt = ip_route_output_flow(sock_net(sk), fl, sk);
	}
	if (!IS_ERR(rt))
		dst_cache_set_ip4(&peer->dst_cache, &rt->dst, fl->saddr);
	return rt;
}

static int ovpn_udp4_output(struct ovpn_peer *peer, struct ovpn_bind *bind,
			    struct sock *sk, struct sk_buff *skb)
{
	struct rtable *rt;
	struct flowi4 fl;

	rt = ovpn_udp4_route(peer, bind, sk, &fl);
	if (IS_ERR(rt))
		return PTR_ERR(rt);

	udp_tunnel_xmit_skb(rt, sk, skb, fl.saddr, fl.daddr, 0,
			    ip4_dst_hoplimit(&rt->dst), 0, fl.fl4_sport,
			    fl.fl4_dport, false, sk->sk_no_check_tx, 0);
	return 0;
}

#if IS_ENABLED(CONFIG_IPV6)
/* The same as ovpn_udp4_route(), for an IPv6 remote. */
static struct dst_entry *ovpn_udp6_route(struct ovpn_peer *peer,
					 struct ovpn_bind *bind,
					 struct sock *sk, struct flowi6 *fl)
{
	struct dst_entry *dst;

	*fl = (struct flowi6) {
		.saddr = bind->local.ipv6,
		.daddr = bind->remote.in6.sin6_addr,
		.fl6_sport = inet_sk(sk)->inet_sport,
		.fl6_dport = bind->remote.in6.sin6_port,
		.flowi6_proto = IPPROTO_UDP,
		.flowi6_mark = READ_ONCE(sk->sk_mark),
		.flowi6_oif = bind->remote.in6.sin6_scope_id,
	};
	dst = dst_cache_get_ip6(&peer->dst_cache, &fl->saddr);
	if (dst)
		return dst;
	dst = ip6_dst_lookup_flow(sock_net(sk), sk, fl, NULL);
	/* As for IPv4: a stale local address gives way to routing. */
	if (IS_ERR(dst) && !ipv6_addr_any(&fl->saddr)) {
		fl->saddr = in6addr_any;
		dst = ip6_dst_lookup_flow(sock_net(sk), sk, fl, NULL);
	}
	if (!IS_ERR(dst))
		dst_cache_set_ip6(&peer->dst_cache, dst, &fl->saddr);
	return dst;
}

static int ovpn_udp6_output(struct ovpn_peer *peer, struct ovpn_bind *bind,
			    struct sock *sk, struct sk_buff *skb)
{
	struct dst_entry *dst;
	struct flowi6 fl;

	dst = ovpn_udp6_route(peer, bind, sk, &fl);
	if (IS_ERR(dst))
		return PTR_ERR(dst);

	/* Encrypted packets may be fragmented on the way. */
	skb->ignore_df = 1;
	udp_tunnel6_xmit_skb(dst, sk, skb, NULL, &fl.saddr, &fl.daddr, 0,
			     ip6_dst_hoplimit(dst), 0, fl.fl6_sport,
			     fl.fl6_dport, udp_get_no_check6_tx(sk), 0);
	return 0;
}
#else
static struct dst_entry *ovpn_udp6_route(struct ovpn_peer *peer,
					 struct ovpn_bind *bind,
					 struct sock *sk, struct flowi6 *fl)
{
	return ERR_PTR(-EAFNOSUPPORT);
}
#endif

/**
 * ovpn_udp_room - the largest payload one UDP packet to a peer carries
 * @peer: the peer, held by the caller
 * @cap: the largest outer packet wanted, IP header included
 *
 * The MTU of the route to the peer's remote, capped by @cap, less the
 * outer IP and UDP headers: what a payload may take without the outer
 * packet being fragmented.
 *
 * Context: BH disabled (the route cache is per CPU).
 * Return: the room in bytes, or 0 if there is no route to the remote.
 */
unsigned int ovpn_udp_room(struct ovpn_peer *peer, unsigned int cap)
{
	struct dst_entry *dst = ERR_PTR(-EHOSTUNREACH);
	struct sock *sk = peer->sock->sk;
	unsigned int mtu = 0, hlen = 0;
	struct ovpn_bind *bind;
	struct flowi6 fl6;
	struct flowi4 fl4;
	struct rtable *rt;

	rcu_read_lock();
	bind = rcu_dereference(peer->bind);
	if (bind && bind->remote.in4.sin_family == AF_INET) {
		rt = ovpn_udp4_route(peer, bind, sk, &fl4);
		dst = IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
		hlen = sizeof(struct iphdr);
	} else if (bind && bind->remote.in6.sin6_family == AF_INET6) {
		dst = ovpn_udp6_route(peer, bind, sk, &fl6);
		hlen = sizeof(struct ipv6hdr);
	}
	rcu_read_unlock();
	if (!IS_ERR(dst)) {
		mtu = dst_mtu(dst);
		dst_release(dst);
	}

	mtu = min(mtu, cap);
	hlen += sizeof(struct udphdr);
	return mtu > hlen ? mtu - hlen : 0;
}

/**
 * ovpn_udp_reaches - whether a UDP socket can send to a remote's family
 * @sk: the socket
 * @family: the remote address's family
 *
 * An IPv4 socket reaches IPv4 remotes only.  An IPv6 socket reaches IPv6
 * remotes, and IPv4 ones too unless it is IPV6_V6ONLY.  The IPv6 send
 * path uses the socket's IPv6 state, which an IPv4 socket does not have,
 * so a remote the socket cannot reach must never get that far.
 *
 * Return: true if packets to @family can leave through @sk.
 */
bool ovpn_udp_reaches(const struct sock *sk, sa_family_t family)
{
	switch (family) {
	case AF_INET:
		return sk->sk_family == AF_INET || !ipv6_only_sock(sk);
	case AF_INET6:
		return IS_ENABLED(CONFIG_IPV6) && sk->sk_family == AF_INET6;
	}
	return false;
}

/**
 * ovpn_udp_send_skb - send an encrypted packet to a UDP peer
 * @peer: the peer, held by the caller
 * @skb: the OpenVPN packet; consumed
 *
 * Context: BH disabled, as the post-crypto step always runs (io.c): the
 * per-CPU route cache and the device's counters need it.
 */
void ovpn_udp_send_skb(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct net_device *dev = peer->ovpn->dev;
	struct sock *sk = peer->sock->sk;
	int ret = -EAFNOSUPPORT;
	struct ovpn_bind *bind;

	/*
	 * The outer packet starts clean, as the IPv4 tunnel helper would
	 * leave it and the IPv6 one does not: no route, skb extension,
	 * conntrack or netfilter trace of the inner flow.  No flow hash of
	 * the inner flow either: the stack hashes the outer headers, so one
	 * peer's packets take one path (ECMP, bonding) and stay in order,
	 * which the replay window of a userspace peer (64 packets by
	 * default) needs.  The helpers below are told not to scrub again.
	 */
	skb_scrub_packet(skb, !net_eq(sock_net(sk), dev_net(dev)));
	skb_clear_hash(skb);
	/*
	 * The ciphertext has no checksum state to offload, and no inner
	 * headers either: those of a tunnelled tunnel are encrypted now.
	 */
	skb->ip_summed = CHECKSUM_NONE;
	skb->encapsulation = 0;
	/* Lets netfilter and policy routing match the socket's mark. */
	skb->mark = READ_ONCE(sk->sk_mark);
	/*
	 * ovpn_net_xmit() counted the packet in the device's TX statistics,
	 * by its plaintext length as the per-peer vpn_tx counters do.  The
	 * tunnel helpers count again on the device they are given (the IPv4
	 * one on skb->dev): they are given none, as for SCTP's and TIPC's
	 * UDP encapsulation.
	 */
	skb->dev = NULL;

	rcu_read_lock();
	bind = rcu_dereference(peer->bind);
	/* Netlink refuses such a remote; this keeps it that way. */
	if (bind && ovpn_udp_reaches(sk, bind->remote.in4.sin_family)) {
		switch (bind->remote.in4.sin_family) {
		case AF_INET:
			ret = ovpn_udp4_output(peer, bind, sk, skb);
			break;
#if IS_ENABLED(CONFIG_IPV6)
		case AF_INET6:
			ret = ovpn_udp6_output(peer, bind, sk, skb);
			break;
#endif
		}
	}
	rcu_read_unlock();

	if (ret) {
		net_dbg_ratelimited("%s: cannot send to peer %u: %d\n",
				    netdev_name(dev), peer->id, ret);
		dev_dstats_tx_dropped(dev);
		kfree_skb(skb);
	}
}
