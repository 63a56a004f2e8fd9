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
#include <net/genetlink.h>

#include "main.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "ovpnpriv.h"

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
	struct nlattr *attr = info->attrs[OVPN_A_IFINDEX];
	struct net_device *dev;

	if (GENL_REQ_ATTR_CHECK(info, OVPN_A_IFINDEX)) {
		NL_SET_ERR_MSG_MOD(info->extack, "missing ifindex");
		return -EINVAL;
	}

	dev = netdev_get_by_index(genl_info_net(info), nla_get_u32(attr),
				  ovpn_nl_tracker(info), GFP_KERNEL);
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "no device with this ifindex");
		return -ENODEV;
	}

	if (!ovpn_dev_is_valid(dev)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "device is not an ovpn device");
		netdev_put(dev, ovpn_nl_tracker(info));
		return -EINVAL;
	}

	info->user_ptr[0] = netdev_priv(dev);
	return 0;
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

/*
 * Commands whose handlers are not written yet say so, rather than
 * pretending to succeed.
 */
static int ovpn_nl_not_implemented(struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG_MOD(extack, "command not implemented yet");
	return -EOPNOTSUPP;
}

/**
 * ovpn_nl_peer_new_doit - handle OVPN_CMD_PEER_NEW
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, peers are not implemented yet.
 */
int ovpn_nl_peer_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_peer_set_doit - handle OVPN_CMD_PEER_SET
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, peers are not implemented yet.
 */
int ovpn_nl_peer_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_peer_get_doit - handle OVPN_CMD_PEER_GET for one peer
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, peers are not implemented yet.
 */
int ovpn_nl_peer_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_peer_get_dumpit - handle OVPN_CMD_PEER_GET as a dump
 * @skb: the reply being filled
 * @cb: the dump's state
 *
 * Return: -EOPNOTSUPP, peers are not implemented yet.
 */
int ovpn_nl_peer_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ovpn_nl_not_implemented(cb->extack);
}

/**
 * ovpn_nl_peer_del_doit - handle OVPN_CMD_PEER_DEL
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, peers are not implemented yet.
 */
int ovpn_nl_peer_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_key_new_doit - handle OVPN_CMD_KEY_NEW
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, keys are not implemented yet.
 */
int ovpn_nl_key_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_key_get_doit - handle OVPN_CMD_KEY_GET
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, keys are not implemented yet.
 */
int ovpn_nl_key_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_key_swap_doit - handle OVPN_CMD_KEY_SWAP
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, keys are not implemented yet.
 */
int ovpn_nl_key_swap_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_key_del_doit - handle OVPN_CMD_KEY_DEL
 * @skb: the request
 * @info: the request's attributes
 *
 * Return: -EOPNOTSUPP, keys are not implemented yet.
 */
int ovpn_nl_key_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ovpn_nl_not_implemented(info->extack);
}

/**
 * ovpn_nl_register - register the "ovpn" generic netlink family
 *
 * Return: 0 on success or a negative errno from genl_register_family().
 */
int ovpn_nl_register(void)
{
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
