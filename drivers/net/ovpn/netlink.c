// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - generic netlink handlers
 *
 * Every "do" request names its device with OVPN_A_IFINDEX, resolved in
 * the requester's network namespace by ovpn_nl_pre_doit().  The pre hook
 * holds a reference on the device for the whole request and
 * ovpn_nl_post_doit() drops it, so a handler may use the device's private
 * data without further checks even if the device is being deleted
 * concurrently.
 */

#include <linux/netdevice.h>
#include <linux/net.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "bind.h"
#include "crypto.h"
#include "mss.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "socket.h"
#include "udp.h"

MODULE_ALIAS_GENL_FAMILY(OVPN_FAMILY_NAME);

/*
 * The device's refcount tracker travels from the pre to the post hook in
 * the second user pointer of the request; it is never larger than one.
 */
static netdevice_tracker *ovpn_nl_tracker(struct genl_info *info)
{
	BUILD_BUG_ON(sizeof(netdevice_tracker) > sizeof(info->user_ptr[1]));
	return (netdevice_tracker *)&info->user_ptr[1];
}

/*
 * The ovpn device an OVPN_A_IFINDEX attribute names in @net, held with
 * @tracker; NULL with an extack message and *@err set if there is none.
 * An ovpn device is known by its link kind, as WireGuard knows its own:
 * the device's code is not needed to tell.
 */
static struct ovpn_priv *ovpn_nl_dev_get(struct net *net, struct nlattr *attr,
					 netdevice_tracker *tracker,
					 struct netlink_ext_ack *extack,
					 int *err)
{
	struct net_device *dev;

	if (!attr) {
		NL_SET_ERR_MSG_MOD(extack, "missing ifindex");
		NL_SET_ERR_ATTR_MISS(extack, NULL, OVPN_A_IFINDEX);
		*err = -EINVAL;
		return NULL;
	}
	dev = netdev_get_by_index(net, nla_get_u32(attr), tracker, GFP_KERNEL);
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no device with this ifindex");
		*err = -ENODEV;
		return NULL;
	}
	if (!dev->rtnl_link_ops ||
	    strcmp(dev->rtnl_link_ops->kind, OVPN_LINK_KIND)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "device is not an ovpn device");
		netdev_put(dev, tracker);
		*err = -EINVAL;
		return NULL;
	}
	return netdev_priv(dev);
}

/**
 * ovpn_nl_pre_doit - resolve and hold the device a request is for
 * @ops: the operation being run
 * @skb: the request
 * @info: the request's attributes; user_ptr[0] receives the device's
 *	  struct ovpn_priv on success
 *
 * Return: 0 on success, -EINVAL if OVPN_A_IFINDEX is missing or names a
 * device of another kind, -ENODEV if no device has that index in the
 * requester's namespace.
 */
int ovpn_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		     struct genl_info *info)
{
	int err = 0;

	info->user_ptr[0] = ovpn_nl_dev_get(genl_info_net(info),
					    info->attrs[OVPN_A_IFINDEX],
					    ovpn_nl_tracker(info),
					    info->extack, &err);
	return err;
}

/**
 * ovpn_nl_post_doit - release the device held by ovpn_nl_pre_doit()
 * @ops: the operation that ran
 * @skb: the request
 * @info: the request, whose user_ptr[0] is set only if the pre hook
 *	  succeeded
 */
void ovpn_nl_post_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		       struct genl_info *info)
{
	struct ovpn_priv *ovpn = info->user_ptr[0];

	if (ovpn)
		netdev_put(ovpn->dev, ovpn_nl_tracker(info));
}

/* Parse the PEER nest of a request with the command's @policy. */
static int ovpn_nl_parse_peer(struct genl_info *info,
			      const struct nla_policy *policy,
			      struct nlattr **attrs)
{
	if (GENL_REQ_ATTR_CHECK(info, OVPN_A_PEER)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing peer");
		return -EINVAL;
	}
	return nla_parse_nested(attrs, OVPN_A_PEER_MAX,
				info->attrs[OVPN_A_PEER], policy, info->extack);
}

/* Resolve the peer a request names; the caller puts it. */
static struct ovpn_peer *ovpn_nl_peer_lookup(struct ovpn_priv *ovpn,
					     struct genl_info *info,
					     struct nlattr *nest, u32 id)
{
	struct ovpn_peer *peer = ovpn_peer_get_by_id(ovpn, id);

	if (!peer)
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, nest,
					"no peer with id %u", id);
	return peer;
}

/* The peer a PEER_* request names by its mandatory id; the caller puts it. */
static struct ovpn_peer *ovpn_nl_peer_by_id(struct ovpn_priv *ovpn,
					    struct genl_info *info,
					    struct nlattr **attrs)
{
	struct ovpn_peer *peer;

	if (NL_REQ_ATTR_CHECK(info->extack, info->attrs[OVPN_A_PEER], attrs,
			      OVPN_A_PEER_ID)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing peer id");
		return ERR_PTR(-EINVAL);
	}
	peer = ovpn_nl_peer_lookup(ovpn, info, info->attrs[OVPN_A_PEER],
				   nla_get_u32(attrs[OVPN_A_PEER_ID]));
	return peer ?: ERR_PTR(-ENOENT);
}

/* Checks shared by PEER_NEW and PEER_SET on the peer nest. */
static int ovpn_nl_peer_precheck(struct ovpn_priv *ovpn,
				 struct genl_info *info, struct nlattr **attrs)
{
	struct nlattr *remote4 = attrs[OVPN_A_PEER_REMOTE_IPV4];
	struct nlattr *remote6 = attrs[OVPN_A_PEER_REMOTE_IPV6];
	struct nlattr *port = attrs[OVPN_A_PEER_REMOTE_PORT];
	struct nlattr *mssfix = attrs[OVPN_A_PEER_MSSFIX];
	struct nlattr *nest = info->attrs[OVPN_A_PEER];

	if (NL_REQ_ATTR_CHECK(info->extack, nest, attrs, OVPN_A_PEER_ID)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing peer id");
		return -EINVAL;
	}
	if (remote4 && remote6) {
		NL_SET_ERR_MSG_ATTR(info->extack, remote6,
				    "remote IPv4 and IPv6 are exclusive");
		return -EINVAL;
	}
	if (!remote4 && !remote6 && port) {
		NL_SET_ERR_MSG_ATTR(info->extack, port,
				    "remote port without remote address");
		return -EINVAL;
	}
	if ((remote4 || remote6) && !port) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "remote address without remote port");
		NL_SET_ERR_ATTR_MISS(info->extack, nest,
				     OVPN_A_PEER_REMOTE_PORT);
		return -EINVAL;
	}
	if (attrs[OVPN_A_PEER_LOCAL_IPV4] && !remote4) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[OVPN_A_PEER_LOCAL_IPV4],
				    "local IPv4 needs a remote IPv4");
		return -EINVAL;
	}
	if (attrs[OVPN_A_PEER_LOCAL_IPV6] && !remote6) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[OVPN_A_PEER_LOCAL_IPV6],
				    "local IPv6 needs a remote IPv6");
		return -EINVAL;
	}
	if (attrs[OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID] && !remote6) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID],
				    "scope id needs a remote IPv6");
		return -EINVAL;
	}
	if (ovpn->mode == OVPN_MODE_P2P &&
	    (attrs[OVPN_A_PEER_VPN_IPV4] || attrs[OVPN_A_PEER_VPN_IPV6])) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[OVPN_A_PEER_VPN_IPV4] ?:
				    attrs[OVPN_A_PEER_VPN_IPV6],
				    "VPN addresses are for MP devices only");
		return -EINVAL;
	}
	if (mssfix && !ovpn_mssfix_valid(nla_get_u16(mssfix))) {
		NL_SET_ERR_MSG_FMT_MOD(info->extack,
				       "mssfix is 0 (off) or at least %u",
				       OVPN_MSSFIX_MIN);
		NL_SET_BAD_ATTR(info->extack, mssfix);
		return -EINVAL;
	}
	if (!attrs[OVPN_A_PEER_KEEPALIVE_INTERVAL] !=
	    !attrs[OVPN_A_PEER_KEEPALIVE_TIMEOUT]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[OVPN_A_PEER_KEEPALIVE_INTERVAL] ?:
				    attrs[OVPN_A_PEER_KEEPALIVE_TIMEOUT],
				    "keepalive interval and timeout go together");
		return -EINVAL;
	}
	return 0;
}

/*
 * The remote endpoint of a request, if any, with a v4-mapped IPv6 address
 * turned into IPv4.  Returns a bind (local address filled in), NULL when
 * the request has no remote, or an ERR_PTR.
 */
static struct ovpn_bind *ovpn_nl_peer_bind(struct genl_info *info,
					   struct nlattr **attrs)
{
	struct nlattr *scope_id = attrs[OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID];
	union ovpn_sockaddr ss = {};
	struct ovpn_bind *bind;
	struct in6_addr *in6;

	if (attrs[OVPN_A_PEER_REMOTE_IPV4]) {
		ss.in4.sin_family = AF_INET;
		ss.in4.sin_addr.s_addr =
			nla_get_in_addr(attrs[OVPN_A_PEER_REMOTE_IPV4]);
	} else if (attrs[OVPN_A_PEER_REMOTE_IPV6]) {
		in6 = nla_data(attrs[OVPN_A_PEER_REMOTE_IPV6]);
		if (ipv6_addr_v4mapped(in6)) {
			ss.in4.sin_family = AF_INET;
			ss.in4.sin_addr.s_addr = in6->s6_addr32[3];
		} else {
			ss.in6.sin6_family = AF_INET6;
			ss.in6.sin6_addr = *in6;
			if (scope_id)
				ss.in6.sin6_scope_id = nla_get_u32(scope_id);
		}
	} else {
		return NULL;
	}
	/* The port sits at the same offset in both families. */
	ss.in4.sin_port = nla_get_be16(attrs[OVPN_A_PEER_REMOTE_PORT]);

	if (ss.in4.sin_family == AF_INET && attrs[OVPN_A_PEER_LOCAL_IPV6]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[OVPN_A_PEER_LOCAL_IPV6],
				    "local and remote address families differ");
		return ERR_PTR(-EINVAL);
	}

	bind = ovpn_bind_from_sockaddr(&ss);
	if (IS_ERR(bind))
		return bind;

	if (ss.in4.sin_family == AF_INET && attrs[OVPN_A_PEER_LOCAL_IPV4])
		bind->local.ipv4.s_addr =
			nla_get_in_addr(attrs[OVPN_A_PEER_LOCAL_IPV4]);
	else if (ss.in4.sin_family == AF_INET6 && attrs[OVPN_A_PEER_LOCAL_IPV6])
		bind->local.ipv6 =
			nla_get_in6_addr(attrs[OVPN_A_PEER_LOCAL_IPV6]);
	return bind;
}

/* A deprecated IPv4-compatible address, ::a.b.c.d (not :: or ::1). */
static bool ovpn_ipv6_v4compat(const struct in6_addr *a)
{
	return !a->s6_addr32[0] && !a->s6_addr32[1] && !a->s6_addr32[2] &&
	       ntohl(a->s6_addr32[3]) > 1;
}

/*
 * A VPN address names one peer: it must be a unicast address.  The
 * unspecified address is refused, except where it clears an address
 * (@clears, PEER_SET).
 */
static int ovpn_nl_check_vpn_addrs(struct genl_info *info,
				   struct nlattr **attrs, bool clears)
{
	struct nlattr *a4 = attrs[OVPN_A_PEER_VPN_IPV4];
	struct nlattr *a6 = attrs[OVPN_A_PEER_VPN_IPV6];
	struct in6_addr ip6;
	__be32 ip4;

	if (a4) {
		ip4 = nla_get_in_addr(a4);
		if (ip4 == htonl(INADDR_ANY) ? !clears :
		    ipv4_is_loopback(ip4) || ipv4_is_multicast(ip4) ||
		    ipv4_is_lbcast(ip4) || ipv4_is_zeronet(ip4)) {
			NL_SET_ERR_MSG_ATTR(info->extack, a4,
					    "not a unicast VPN IPv4 address");
			return -EINVAL;
		}
	}
	if (a6) {
		ip6 = nla_get_in6_addr(a6);
		if (ipv6_addr_any(&ip6) ? !clears :
		    ipv6_addr_loopback(&ip6) || ipv6_addr_is_multicast(&ip6) ||
		    ipv6_addr_v4mapped(&ip6) || ovpn_ipv6_v4compat(&ip6)) {
			NL_SET_ERR_MSG_ATTR(info->extack, a6,
					    "not a unicast VPN IPv6 address");
			return -EINVAL;
		}
	}
	return 0;
}

/* Explain why the VPN addresses of a request were refused. */
static void ovpn_nl_vpn_addrs_error(struct genl_info *info, int err)
{
	switch (err) {
	case -EADDRINUSE:
		NL_SET_ERR_MSG_MOD(info->extack,
				   "VPN address in use by another peer");
		break;
	case -EDESTADDRREQ:
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a peer keeps at least one VPN address");
		break;
	case -ENOENT:
		NL_SET_ERR_MSG_MOD(info->extack, "peer removed meanwhile");
		break;
	}
}

/*
 * The fields of a PEER_NEW or PEER_SET request, checked beforehand by
 * ovpn_nl_peer_precheck() and ovpn_nl_check_vpn_addrs(); the bind, which
 * each command checks its own way, is left to the caller.
 */
static void ovpn_nl_peer_config(struct nlattr **attrs,
				struct ovpn_peer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->id = nla_get_u32(attrs[OVPN_A_PEER_ID]);
	if (attrs[OVPN_A_PEER_TX_ID]) {
		cfg->has_tx_id = true;
		cfg->tx_id = nla_get_u32(attrs[OVPN_A_PEER_TX_ID]);
	}
	if (attrs[OVPN_A_PEER_VPN_IPV4]) {
		cfg->has_vpn_ipv4 = true;
		cfg->vpn_ipv4.s_addr =
			nla_get_in_addr(attrs[OVPN_A_PEER_VPN_IPV4]);
	}
	if (attrs[OVPN_A_PEER_VPN_IPV6]) {
		cfg->has_vpn_ipv6 = true;
		cfg->vpn_ipv6 = nla_get_in6_addr(attrs[OVPN_A_PEER_VPN_IPV6]);
	}
	if (attrs[OVPN_A_PEER_MSSFIX]) {
		cfg->has_mssfix = true;
		cfg->mssfix = nla_get_u16(attrs[OVPN_A_PEER_MSSFIX]);
	}
	/* ovpn_nl_peer_precheck() made sure the two come together. */
	if (attrs[OVPN_A_PEER_KEEPALIVE_INTERVAL]) {
		cfg->has_keepalive = true;
		cfg->keepalive_interval =
			nla_get_u32(attrs[OVPN_A_PEER_KEEPALIVE_INTERVAL]);
		cfg->keepalive_timeout =
			nla_get_u32(attrs[OVPN_A_PEER_KEEPALIVE_TIMEOUT]);
	}
}

/*
 * Everything of a PEER_NEW (@set false) or PEER_SET request that can be
 * refused before a peer, a socket or a bind is touched, parsed into @cfg
 * (all but the bind).  Return: 0 or a negative errno, with an extack
 * message.
 */
static int ovpn_nl_peer_parse(struct ovpn_priv *ovpn, struct genl_info *info,
			      bool set, struct nlattr **attrs,
			      struct ovpn_peer_config *cfg)
{
	int ret;

	ret = ovpn_nl_parse_peer(info, set ? ovpn_peer_set_input_nl_policy :
					     ovpn_peer_new_input_nl_policy,
				 attrs) ?:
	      ovpn_nl_peer_precheck(ovpn, info, attrs) ?:
	      ovpn_nl_check_vpn_addrs(info, attrs, set);
	if (ret)
		return ret;
	ovpn_nl_peer_config(attrs, cfg);
	if (!set && ovpn->mode == OVPN_MODE_MP && !cfg->has_vpn_ipv4 &&
	    !cfg->has_vpn_ipv6) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "an MP peer needs a VPN IPv4 or IPv6 address");
		return -EINVAL;
	}
	return 0;
}

/*
 * The socket a PEER_NEW names, held until the request is done.  Return:
 * the socket or an ERR_PTR, with an extack message.
 */
static struct socket *ovpn_nl_peer_sockfd(struct genl_info *info,
					  struct nlattr **attrs)
{
	struct nlattr *attr = attrs[OVPN_A_PEER_SOCKET];
	struct socket *sock;
	int err;

	if (NL_REQ_ATTR_CHECK(info->extack, info->attrs[OVPN_A_PEER], attrs,
			      OVPN_A_PEER_SOCKET)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing socket");
		return ERR_PTR(-EINVAL);
	}
	sock = sockfd_lookup(nla_get_u32(attr), &err);
	if (!sock) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "not a socket descriptor");
		return ERR_PTR(-ENOTSOCK);
	}
	return sock;
}

/*
 * Explain why ovpn_peer_create() refused a peer.  Return: the errno for
 * userspace (a socket that is no transport is -ENOTSOCK, as upstream).
 */
static int ovpn_nl_peer_new_error(struct genl_info *info,
				  struct nlattr **attrs, int err)
{
	struct nlattr *sock = attrs[OVPN_A_PEER_SOCKET];

	switch (err) {
	case -EPROTONOSUPPORT:
		NL_SET_ERR_MSG_ATTR(info->extack, sock,
				    "socket is neither UDP nor TCP");
		return -ENOTSOCK;
	case -ENOTCONN:
		NL_SET_ERR_MSG_ATTR(info->extack, sock,
				    "TCP socket is not connected");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_ATTR(info->extack, sock,
				    "socket is used by another peer, device or protocol");
		break;
	case -EEXIST:
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[OVPN_A_PEER_ID],
				    "a peer with this id exists already");
		break;
	case -EADDRINUSE:
		ovpn_nl_vpn_addrs_error(info, err);
		break;
	case -ENODEV:
		NL_SET_ERR_MSG_MOD(info->extack, "the device is going away");
		break;
	case -ENOMEM:
		NL_SET_ERR_MSG_MOD(info->extack, "cannot create the peer");
		break;
	default:
		NL_SET_ERR_MSG_ATTR(info->extack, sock,
				    "cannot attach to the socket");
	}
	return err;
}

/*
 * A UDP remote must be of a family the peer's socket can send to: an IPv6
 * remote on an IPv4 socket would send through IPv6 state the socket does
 * not have.  Frees @bind and returns an ERR_PTR if it cannot.
 */
static struct ovpn_bind *ovpn_nl_bind_fits(struct genl_info *info,
					   struct nlattr **attrs,
					   struct ovpn_bind *bind,
					   const struct sock *sk)
{
	if (IS_ERR_OR_NULL(bind) ||
	    ovpn_udp_reaches(sk, bind->remote.in4.sin_family))
		return bind;
	kfree(bind);
	NL_SET_ERR_MSG_ATTR(info->extack,
			    attrs[OVPN_A_PEER_REMOTE_IPV6] ?:
			    attrs[OVPN_A_PEER_REMOTE_IPV4],
			    "the UDP socket cannot reach this address family");
	return ERR_PTR(-EAFNOSUPPORT);
}

/*
 * The remote endpoint of a new peer: required with UDP, refused with TCP
 * (the connected socket is the endpoint).  Return: the bind (NULL for TCP)
 * or an ERR_PTR, with an extack message.
 */
static struct ovpn_bind *ovpn_nl_peer_new_bind(struct genl_info *info,
					       struct nlattr **attrs,
					       struct socket *sock)
{
	bool tcp = ovpn_sk_is_tcp(sock->sk);
	struct ovpn_bind *bind;

	bind = ovpn_nl_peer_bind(info, attrs);
	if (IS_ERR(bind))
		return bind;
	if (tcp && bind) {
		kfree(bind);
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a TCP peer takes no remote address: its socket is connected");
		return ERR_PTR(-EINVAL);
	}
	if (!tcp && !bind) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a UDP peer needs a remote address and port");
		NL_SET_ERR_ATTR_MISS(info->extack, info->attrs[OVPN_A_PEER],
				     OVPN_A_PEER_REMOTE_IPV4);
		return ERR_PTR(-EINVAL);
	}
	return ovpn_nl_bind_fits(info, attrs, bind, sock->sk);
}

/**
 * ovpn_nl_peer_new_doit - handle OVPN_CMD_PEER_NEW
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_peer_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ovpn_priv *ovpn = info->user_ptr[0];
	struct nlattr *attrs[OVPN_A_PEER_MAX + 1];
	struct ovpn_peer_config cfg;
	struct socket *sock;
	int ret;

	ret = ovpn_nl_peer_parse(ovpn, info, false, attrs, &cfg);
	if (ret)
		return ret;
	sock = ovpn_nl_peer_sockfd(info, attrs);
	if (IS_ERR(sock))
		return PTR_ERR(sock);

	cfg.bind = ovpn_nl_peer_new_bind(info, attrs, sock);
	if (IS_ERR(cfg.bind)) {
		ret = PTR_ERR(cfg.bind);
		goto out;
	}
	ret = ovpn_peer_create(ovpn, &cfg, sock);
	if (ret)
		ret = ovpn_nl_peer_new_error(info, attrs, ret);
out:
	sockfd_put(sock);
	return ret;
}

/**
 * ovpn_nl_peer_set_doit - handle OVPN_CMD_PEER_SET
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_peer_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ovpn_priv *ovpn = info->user_ptr[0];
	struct nlattr *attrs[OVPN_A_PEER_MAX + 1];
	struct ovpn_peer_config cfg;
	struct ovpn_peer *peer;
	struct ovpn_bind *bind;
	int ret;

	ret = ovpn_nl_peer_parse(ovpn, info, true, attrs, &cfg);
	if (ret)
		return ret;

	peer = ovpn_nl_peer_by_id(ovpn, info, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);

	bind = ovpn_nl_peer_bind(info, attrs);
	if (IS_ERR(bind)) {
		ret = PTR_ERR(bind);
		goto out;
	}
	if (bind && !rcu_access_pointer(peer->bind)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "the peer has no UDP endpoint to change");
		kfree(bind);
		ret = -EINVAL;
		goto out;
	}
	cfg.bind = ovpn_nl_bind_fits(info, attrs, bind, peer->sock->sk);
	if (IS_ERR(cfg.bind)) {
		ret = PTR_ERR(cfg.bind);
		goto out;
	}
	ret = ovpn_peer_change(peer, &cfg);
	if (ret)
		ovpn_nl_vpn_addrs_error(info, ret);
out:
	ovpn_peer_put(peer);
	return ret;
}

/* A remote transport address: IPv4 or IPv6 (with its scope), and port. */
/* The most ovpn_nl_put_remote() writes: an IPv6 address, scope and port */
#define OVPN_NL_REMOTE_SIZE	(nla_total_size(sizeof(struct in6_addr)) + \
				 nla_total_size(sizeof(u32)) + \
				 nla_total_size(sizeof(__be16)))

static int ovpn_nl_put_remote(struct sk_buff *skb,
			      const union ovpn_sockaddr *ss)
{
	if (ss->in4.sin_family == AF_INET)
		return nla_put_in_addr(skb, OVPN_A_PEER_REMOTE_IPV4,
				       ss->in4.sin_addr.s_addr) ?:
		       nla_put_net16(skb, OVPN_A_PEER_REMOTE_PORT,
				     ss->in4.sin_port);
	return nla_put_in6_addr(skb, OVPN_A_PEER_REMOTE_IPV6,
				&ss->in6.sin6_addr) ?:
	       nla_put_u32(skb, OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID,
			   ss->in6.sin6_scope_id) ?:
	       nla_put_net16(skb, OVPN_A_PEER_REMOTE_PORT, ss->in6.sin6_port);
}

static int ovpn_nl_put_bind(struct sk_buff *skb, struct ovpn_peer *peer)
{
	struct ovpn_bind *bind;
	int ret = 0;

	rcu_read_lock();
	bind = rcu_dereference(peer->bind);
	if (!bind)
		goto out;
	ret = ovpn_nl_put_remote(skb, &bind->remote);
	if (ret)
		goto out;
	if (bind->remote.in4.sin_family == AF_INET)
		ret = nla_put_in_addr(skb, OVPN_A_PEER_LOCAL_IPV4,
				      bind->local.ipv4.s_addr);
	else
		ret = nla_put_in6_addr(skb, OVPN_A_PEER_LOCAL_IPV6,
				       &bind->local.ipv6);
out:
	rcu_read_unlock();
	return ret;
}

/*
 * The most ovpn_nl_put_stats() writes: eight counters, each a u32 or a
 * u64 (nla_put_uint() takes the smaller that holds the value).
 */
#define OVPN_NL_STATS_SIZE	(8 * nla_total_size(sizeof(u64)))

static int ovpn_nl_put_stats(struct sk_buff *skb, struct ovpn_peer *peer)
{
	struct ovpn_peer_stats st;

	ovpn_stats_read(&peer->stats, &st);
	if (nla_put_uint(skb, OVPN_A_PEER_VPN_RX_BYTES, st.vpn_rx_bytes) ||
	    nla_put_uint(skb, OVPN_A_PEER_VPN_TX_BYTES, st.vpn_tx_bytes) ||
	    nla_put_uint(skb, OVPN_A_PEER_VPN_RX_PACKETS, st.vpn_rx_packets) ||
	    nla_put_uint(skb, OVPN_A_PEER_VPN_TX_PACKETS, st.vpn_tx_packets) ||
	    nla_put_uint(skb, OVPN_A_PEER_LINK_RX_BYTES, st.link_rx_bytes) ||
	    nla_put_uint(skb, OVPN_A_PEER_LINK_TX_BYTES, st.link_tx_bytes) ||
	    nla_put_uint(skb, OVPN_A_PEER_LINK_RX_PACKETS,
			 st.link_rx_packets) ||
	    nla_put_uint(skb, OVPN_A_PEER_LINK_TX_PACKETS, st.link_tx_packets))
		return -EMSGSIZE;
	return 0;
}

/* One PEER_GET message describing @peer, as seen from netns @net. */
static int ovpn_nl_fill_peer(struct sk_buff *skb, struct ovpn_peer *peer,
			     struct net *net, u32 portid, u32 seq, int flags)
{
	struct sock *sk = peer->sock->sk;
	struct nlattr *nest;
	void *hdr;
	int id;

	hdr = genlmsg_put(skb, portid, seq, &ovpn_nl_family, flags,
			  OVPN_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;

	nest = nla_nest_start(skb, OVPN_A_PEER);
	if (!nest)
		goto err;

	if (!net_eq(net, sock_net(sk))) {
		id = peernet2id_alloc(net, sock_net(sk), GFP_ATOMIC);
		if (nla_put_s32(skb, OVPN_A_PEER_SOCKET_NETNSID, id))
			goto err;
	}
	if (nla_put_u32(skb, OVPN_A_PEER_ID, peer->id) ||
	    nla_put_u32(skb, OVPN_A_PEER_TX_ID, READ_ONCE(peer->tx_id)) ||
	    nla_put_u16(skb, OVPN_A_PEER_MSSFIX, READ_ONCE(peer->mssfix)))
		goto err;
	if (peer->vpn_addrs.ipv4.s_addr != htonl(INADDR_ANY) &&
	    nla_put_in_addr(skb, OVPN_A_PEER_VPN_IPV4,
			    peer->vpn_addrs.ipv4.s_addr))
		goto err;
	if (!ipv6_addr_any(&peer->vpn_addrs.ipv6) &&
	    nla_put_in6_addr(skb, OVPN_A_PEER_VPN_IPV6,
			     &peer->vpn_addrs.ipv6))
		goto err;
	if (nla_put_u32(skb, OVPN_A_PEER_KEEPALIVE_INTERVAL,
			READ_ONCE(peer->keepalive_interval)) ||
	    nla_put_u32(skb, OVPN_A_PEER_KEEPALIVE_TIMEOUT,
			READ_ONCE(peer->keepalive_timeout)))
		goto err;
	if (ovpn_nl_put_bind(skb, peer) ||
	    nla_put_net16(skb, OVPN_A_PEER_LOCAL_PORT,
			  inet_sk(sk)->inet_sport) ||
	    ovpn_nl_put_stats(skb, peer))
		goto err;

	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * ovpn_nl_peer_get_doit - handle OVPN_CMD_PEER_GET for one peer
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_peer_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ovpn_priv *ovpn = info->user_ptr[0];
	struct nlattr *attrs[OVPN_A_PEER_MAX + 1];
	struct ovpn_peer *peer;
	struct sk_buff *msg;
	int ret, i;

	ret = ovpn_nl_parse_peer(info, ovpn_peer_nl_policy, attrs);
	if (ret)
		return ret;
	for (i = 1; i <= OVPN_A_PEER_MAX; i++) {
		if (i != OVPN_A_PEER_ID && attrs[i]) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[i],
					    "only the peer id is expected");
			return -EINVAL;
		}
	}
	peer = ovpn_nl_peer_by_id(ovpn, info, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = ovpn_nl_fill_peer(msg, peer, genl_info_net(info),
				info->snd_portid, info->snd_seq, 0);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	ovpn_peer_put(peer);
	return ret;
}

/* What ovpn_nl_dump_peer() needs to write one peer into a dump. */
struct ovpn_nl_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int ovpn_nl_dump_peer(struct ovpn_peer *peer, void *arg)
{
	struct ovpn_nl_dump *d = arg;

	return ovpn_nl_fill_peer(d->skb, peer, sock_net(d->cb->skb->sk),
				 NETLINK_CB(d->cb->skb).portid,
				 d->cb->nlh->nlmsg_seq, NLM_F_MULTI);
}

/**
 * ovpn_nl_peer_get_dumpit - handle OVPN_CMD_PEER_GET as a dump
 * @skb: the reply being filled
 * @cb: the dump's state; cb->args[0..1] say where it stands
 *
 * Return: the reply's length, 0 when done, or a negative errno.
 */
int ovpn_nl_peer_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_info *info = genl_info_dump(cb);
	struct ovpn_nl_dump d = { .skb = skb, .cb = cb };
	netdevice_tracker tracker;
	struct ovpn_priv *ovpn;
	int ret = 0;

	ovpn = ovpn_nl_dev_get(sock_net(cb->skb->sk),
			       info->attrs[OVPN_A_IFINDEX], &tracker,
			       cb->extack, &ret);
	if (!ovpn)
		return ret;
	ret = ovpn_peers_dump(ovpn, cb->args, ovpn_nl_dump_peer, &d);
	/* A full reply is not an error: the core calls again to resume. */
	if (ret == -EMSGSIZE && skb->len)
		ret = 0;
	netdev_put(ovpn->dev, &tracker);
	return ret ?: skb->len;
}

/**
 * ovpn_nl_peer_del_doit - handle OVPN_CMD_PEER_DEL
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_peer_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ovpn_priv *ovpn = info->user_ptr[0];
	struct nlattr *attrs[OVPN_A_PEER_MAX + 1];
	struct ovpn_peer *peer;
	int ret;

	ret = ovpn_nl_parse_peer(info, ovpn_peer_del_input_nl_policy, attrs);
	if (ret)
		return ret;
	peer = ovpn_nl_peer_by_id(ovpn, info, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	ret = ovpn_peer_del(peer, OVPN_DEL_PEER_REASON_USERSPACE);
	if (ret)
		NL_SET_ERR_MSG_MOD(info->extack, "peer removed meanwhile");
	ovpn_peer_put(peer);
	return ret;
}

/*
 * Parse the KEYCONF nest of a key request with @policy and look its peer
 * up.  Returns the peer (the caller puts it) or an ERR_PTR.
 */
static struct ovpn_peer *ovpn_nl_key_peer(struct genl_info *info,
					  const struct nla_policy *policy,
					  struct nlattr **attrs)
{
	struct nlattr *nest = info->attrs[OVPN_A_KEYCONF];
	struct ovpn_priv *ovpn = info->user_ptr[0];
	struct ovpn_peer *peer;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, OVPN_A_KEYCONF)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing keyconf");
		return ERR_PTR(-EINVAL);
	}
	ret = nla_parse_nested(attrs, OVPN_A_KEYCONF_MAX, nest, policy,
			       info->extack);
	if (ret)
		return ERR_PTR(ret);
	if (NL_REQ_ATTR_CHECK(info->extack, nest, attrs,
			      OVPN_A_KEYCONF_PEER_ID)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing peer id");
		return ERR_PTR(-EINVAL);
	}

	peer = ovpn_nl_peer_lookup(ovpn, info, nest,
				   nla_get_u32(attrs[OVPN_A_KEYCONF_PEER_ID]));
	return peer ?: ERR_PTR(-ENOENT);
}

static int ovpn_nl_need_slot(struct genl_info *info, struct nlattr **attrs)
{
	if (NL_REQ_ATTR_CHECK(info->extack, info->attrs[OVPN_A_KEYCONF],
			      attrs, OVPN_A_KEYCONF_SLOT)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing key slot");
		return -EINVAL;
	}
	return 0;
}

/* One direction's key material out of its nest. */
static int ovpn_nl_key_dir(struct genl_info *info, struct nlattr *nest,
			   struct ovpn_key_direction *dir)
{
	struct nlattr *attrs[OVPN_A_KEYDIR_MAX + 1];
	int ret;

	ret = nla_parse_nested(attrs, OVPN_A_KEYDIR_MAX, nest,
			       ovpn_keydir_nl_policy, info->extack);
	if (ret)
		return ret;
	if (NL_REQ_ATTR_CHECK(info->extack, nest, attrs,
			      OVPN_A_KEYDIR_CIPHER_KEY)) {
		NL_SET_ERR_MSG_MOD(info->extack, "a key direction needs a key");
		return -EINVAL;
	}
	dir->cipher_key = nla_data(attrs[OVPN_A_KEYDIR_CIPHER_KEY]);
	dir->cipher_key_size = nla_len(attrs[OVPN_A_KEYDIR_CIPHER_KEY]);
	/* The epoch format derives its IVs: no nonce tail then. */
	if (attrs[OVPN_A_KEYDIR_EPOCH_SECRET]) {
		dir->epoch_secret = nla_data(attrs[OVPN_A_KEYDIR_EPOCH_SECRET]);
		return 0;
	}
	if (NL_REQ_ATTR_CHECK(info->extack, nest, attrs,
			      OVPN_A_KEYDIR_NONCE_TAIL)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a key direction needs a nonce tail or an epoch secret");
		return -EINVAL;
	}
	dir->nonce_tail = nla_data(attrs[OVPN_A_KEYDIR_NONCE_TAIL]);
	return 0;
}

/**
 * ovpn_nl_key_new_doit - handle OVPN_CMD_KEY_NEW
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_key_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *nest = info->attrs[OVPN_A_KEYCONF];
	struct nlattr *attrs[OVPN_A_KEYCONF_MAX + 1];
	struct ovpn_key_config kc = {};
	struct ovpn_peer *peer;
	int ret, i;

	peer = ovpn_nl_key_peer(info, ovpn_keyconf_nl_policy, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);

	for (i = OVPN_A_KEYCONF_SLOT; i <= OVPN_A_KEYCONF_DECRYPT_DIR; i++) {
		if (NL_REQ_ATTR_CHECK(info->extack, nest, attrs, i)) {
			NL_SET_ERR_MSG_MOD(info->extack,
					   "slot, key id, cipher and both key directions are required");
			ret = -EINVAL;
			goto out;
		}
	}

	kc.cipher_alg = nla_get_u32(attrs[OVPN_A_KEYCONF_CIPHER_ALG]);
	if (kc.cipher_alg == OVPN_CIPHER_ALG_NONE) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[OVPN_A_KEYCONF_CIPHER_ALG],
				    "unsupported cipher");
		ret = -EINVAL;
		goto out;
	}
	kc.key_id = nla_get_u32(attrs[OVPN_A_KEYCONF_KEY_ID]);
	ret = ovpn_nl_key_dir(info, attrs[OVPN_A_KEYCONF_ENCRYPT_DIR],
			      &kc.encrypt);
	if (ret)
		goto out;
	ret = ovpn_nl_key_dir(info, attrs[OVPN_A_KEYCONF_DECRYPT_DIR],
			      &kc.decrypt);
	if (ret)
		goto out;
	/* One key, one format: both directions are epoch chains, or none. */
	if (!kc.encrypt.epoch_secret != !kc.decrypt.epoch_secret) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[kc.encrypt.epoch_secret ?
					  OVPN_A_KEYCONF_DECRYPT_DIR :
					  OVPN_A_KEYCONF_ENCRYPT_DIR],
				    "an epoch secret is needed in both key directions");
		ret = -EINVAL;
		goto out;
	}
	if (kc.encrypt.epoch_secret &&
	    kc.encrypt.cipher_key_size != kc.decrypt.cipher_key_size) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "both key directions must have the same key size");
		ret = -EINVAL;
		goto out;
	}

	ret = ovpn_crypto_key_install(&peer->crypto,
				      nla_get_u32(attrs[OVPN_A_KEYCONF_SLOT]),
				      &kc);
	if (ret)
		NL_SET_ERR_MSG_FMT_MOD(info->extack,
				       "cannot install the key: %d (key size?)",
				       ret);
out:
	ovpn_peer_put(peer);
	return ret;
}

/**
 * ovpn_nl_key_get_doit - handle OVPN_CMD_KEY_GET
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_key_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attrs[OVPN_A_KEYCONF_MAX + 1];
	enum ovpn_cipher_alg alg;
	struct ovpn_peer *peer;
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	u8 key_id;
	u32 slot;
	int ret;

	peer = ovpn_nl_key_peer(info, ovpn_keyconf_get_nl_policy, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);

	ret = ovpn_nl_need_slot(info, attrs);
	if (ret)
		goto out;
	if (attrs[OVPN_A_KEYCONF_KEY_ID] || attrs[OVPN_A_KEYCONF_CIPHER_ALG]) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[OVPN_A_KEYCONF_KEY_ID] ?:
				    attrs[OVPN_A_KEYCONF_CIPHER_ALG],
				    "only peer id and slot are expected");
		ret = -EINVAL;
		goto out;
	}

	slot = nla_get_u32(attrs[OVPN_A_KEYCONF_SLOT]);
	ret = ovpn_crypto_key_get_info(&peer->crypto, slot, &alg, &key_id);
	if (ret) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[OVPN_A_KEYCONF_SLOT],
				    "no key in this slot");
		goto out;
	}

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &ovpn_nl_family, 0,
				OVPN_CMD_KEY_GET);
	if (!hdr)
		goto nomem;
	nest = nla_nest_start(msg, OVPN_A_KEYCONF);
	if (!nest ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_PEER_ID, peer->id) ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_SLOT, slot) ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_KEY_ID, key_id) ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_CIPHER_ALG, alg))
		goto nomem;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
	goto out;

nomem:
	nlmsg_free(msg);
	ret = -EMSGSIZE;
out:
	ovpn_peer_put(peer);
	return ret;
}

/**
 * ovpn_nl_key_swap_doit - handle OVPN_CMD_KEY_SWAP
 * @skb: the request
 * @info: the request's attributes
 *
 * The primary and secondary slots swap even if the secondary is empty:
 * openvpn relies on that to retire an old primary key.
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_key_swap_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attrs[OVPN_A_KEYCONF_MAX + 1];
	struct ovpn_peer *peer;

	peer = ovpn_nl_key_peer(info, ovpn_keyconf_swap_input_nl_policy,
				attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	ovpn_crypto_key_swap(&peer->crypto);
	ovpn_peer_put(peer);
	return 0;
}

/**
 * ovpn_nl_key_del_doit - handle OVPN_CMD_KEY_DEL
 * @skb: the request
 * @info: the request's attributes
 *
 * Deleting an empty slot is not an error.
 *
 * Return: 0 on success or a negative errno, with an extack message.
 */
int ovpn_nl_key_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attrs[OVPN_A_KEYCONF_MAX + 1];
	struct ovpn_peer *peer;
	int ret;

	peer = ovpn_nl_key_peer(info, ovpn_keyconf_del_input_nl_policy, attrs);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	ret = ovpn_nl_need_slot(info, attrs);
	if (!ret)
		ovpn_crypto_key_delete(&peer->crypto,
				       nla_get_u32(attrs[OVPN_A_KEYCONF_SLOT]));
	ovpn_peer_put(peer);
	return ret;
}

/* Multicast a notification in the netns of the peer's transport. */
static void ovpn_nl_notify(struct ovpn_peer *peer, struct sk_buff *msg)
{
	struct net *net = peer->sock ? sock_net(peer->sock->sk) :
				       dev_net(peer->ovpn->dev);

	genlmsg_multicast_netns(&ovpn_nl_family, net, msg, 0,
				OVPN_NLGRP_PEERS, GFP_ATOMIC);
}

/*
 * Start a notification: message, header and IFINDEX, with room for a nest
 * of @nest_len bytes of attributes.  The message is sized to what it
 * carries, not NLMSG_GOODSIZE: a mass removal queues one per peer on
 * every listener, whose receive buffer is charged with each message's
 * allocation; a page each would fill it several times sooner.
 */
static struct sk_buff *ovpn_nl_ntf_start(struct ovpn_peer *peer, u8 cmd,
					 size_t nest_len, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(nla_total_size(sizeof(u32)) +
			  nla_total_size(nest_len), GFP_ATOMIC);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &ovpn_nl_family, 0, cmd);
	if (!*hdr ||
	    nla_put_u32(msg, OVPN_A_IFINDEX, peer->ovpn->dev->ifindex)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void ovpn_nl_ntf_send(struct ovpn_peer *peer, struct sk_buff *msg,
			     void *hdr, struct nlattr *nest)
{
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	ovpn_nl_notify(peer, msg);
}

/**
 * ovpn_nl_peer_del_notify - tell userspace that a peer was removed
 * @peer: the removed peer, with its delete_reason set
 *
 * Besides the id and the reason, the notification carries the peer's
 * counters, as PEER_GET gives them, read once the peer is unpublished:
 * after a mass removal a daemon's PEER_GET for each notified peer finds
 * nothing, and its final accounting would be lost.  Only packets that
 * found the peer before it was unpublished, still in flight, can count
 * after the read: at most what its queues hold.
 *
 * Context: any.
 */
void ovpn_nl_peer_del_notify(struct ovpn_peer *peer)
{
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;

	msg = ovpn_nl_ntf_start(peer, OVPN_CMD_PEER_DEL_NTF,
				2 * nla_total_size(sizeof(u32)) +
				OVPN_NL_STATS_SIZE, &hdr);
	if (!msg)
		goto fail;
	nest = nla_nest_start(msg, OVPN_A_PEER);
	if (!nest ||
	    nla_put_u32(msg, OVPN_A_PEER_DEL_REASON, peer->delete_reason) ||
	    nla_put_u32(msg, OVPN_A_PEER_ID, peer->id) ||
	    ovpn_nl_put_stats(msg, peer)) {
		nlmsg_free(msg);
		goto fail;
	}
	ovpn_nl_ntf_send(peer, msg, hdr, nest);
	return;
fail:
	net_warn_ratelimited("%s: cannot notify removal of peer %u\n",
			     netdev_name(peer->ovpn->dev), peer->id);
}

/**
 * ovpn_nl_key_swap_notify - ask userspace to renegotiate a key
 * @peer: the peer whose key ran out of packet ids
 * @key_id: the id of the key that was removed
 *
 * KEY_ID travels as a u16, as openvpn reads it.
 *
 * Context: any.
 */
void ovpn_nl_key_swap_notify(struct ovpn_peer *peer, u8 key_id)
{
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;

	msg = ovpn_nl_ntf_start(peer, OVPN_CMD_KEY_SWAP_NTF,
				nla_total_size(sizeof(u32)) +
				nla_total_size(sizeof(u16)), &hdr);
	if (!msg)
		return;
	nest = nla_nest_start(msg, OVPN_A_KEYCONF);
	if (!nest ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_PEER_ID, peer->id) ||
	    nla_put_u16(msg, OVPN_A_KEYCONF_KEY_ID, key_id)) {
		nlmsg_free(msg);
		return;
	}
	ovpn_nl_ntf_send(peer, msg, hdr, nest);
}

/**
 * ovpn_nl_peer_float_notify - tell userspace that a peer moved
 * @peer: the peer
 * @ss: its new remote address and port
 *
 * Context: any.
 */
void ovpn_nl_peer_float_notify(struct ovpn_peer *peer,
			       const union ovpn_sockaddr *ss)
{
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	msg = ovpn_nl_ntf_start(peer, OVPN_CMD_PEER_FLOAT_NTF,
				OVPN_NL_REMOTE_SIZE +
				nla_total_size(sizeof(u32)), &hdr);
	if (!msg)
		return;
	nest = nla_nest_start(msg, OVPN_A_PEER);
	ret = !nest || nla_put_u32(msg, OVPN_A_PEER_ID, peer->id) ||
	      ovpn_nl_put_remote(msg, ss);
	if (ret) {
		nlmsg_free(msg);
		return;
	}
	ovpn_nl_ntf_send(peer, msg, hdr, nest);
}

/*
 * The notifications of the "peers" group carry peer endpoints, floats and
 * removals: only CAP_NET_ADMIN in the namespace may join it, as only it
 * may send the commands.  The spec says so (flags: [admin-perm]), but the
 * kernel's YNL generator does not carry the flags of a multicast group
 * into the table it writes (netlink-gen.c); this one, the same but for
 * them, replaces it at registration, while the family is still writable.
 */
static const struct genl_multicast_group ovpn_nl_mcgrps_admin[] = {
	[OVPN_NLGRP_PEERS] = {
		.name = OVPN_MCGRP_PEERS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

/**
 * ovpn_nl_register - register the "ovpn" generic netlink family
 *
 * Return: 0 on success or a negative errno from genl_register_family().
 */
int __init ovpn_nl_register(void)
{
	BUILD_BUG_ON(ARRAY_SIZE(ovpn_nl_mcgrps_admin) != OVPN_NLGRP_PEERS + 1);
	ovpn_nl_family.mcgrps = ovpn_nl_mcgrps_admin;
	ovpn_nl_family.n_mcgrps = ARRAY_SIZE(ovpn_nl_mcgrps_admin);
	return genl_register_family(&ovpn_nl_family);
}

/**
 * ovpn_nl_unregister - unregister the "ovpn" generic netlink family
 *
 * Waits for running requests to finish.
 */
void ovpn_nl_unregister(void)
{
	genl_unregister_family(&ovpn_nl_family);
}
