// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - module and device
 *
 * Module init/exit, the "ovpn" rtnl link kind and the net_device it
 * creates.  The device exists independently of peers: in P2P mode its
 * carrier follows the presence of the single peer, in MP mode it is always
 * up and packets are routed to peers by their VPN addresses.
 */

#include <linux/ethtool.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/ip.h>
#include <net/rtnetlink.h>
#include <uapi/linux/if_arp.h>

#include "aead.h"
#include "io.h"
#include "main.h"
#include "netlink.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "proto.h"
#include "queue.h"
#include "socket.h"
#include "tcp.h"

struct workqueue_struct *ovpn_wq;

/**
 * ovpn_release_batch_work - tear down a batch of released objects
 * @work: the batch's work
 *
 * Objects released while this runs make the next batch, whose first one
 * queues the work again.  The CPU is offered between two teardowns.
 */
void ovpn_release_batch_work(struct work_struct *work)
{
	struct ovpn_release_batch *batch;
	struct llist_node *node, *next;

	batch = container_of(work, struct ovpn_release_batch, work);
	node = llist_del_all(&batch->released);
	/* Readers that found any of these objects are done after this. */
	synchronize_rcu();
	for (; node; node = next) {
		next = node->next;
		batch->teardown(node);
		cond_resched();
	}
}

/*
 * In MP mode clients reach each other through the server, so packets
 * routinely leave through the device they came in on.  That is the normal
 * case here, not a misrouting to correct with ICMP redirects.  The kernel
 * sends redirects if either the device or "all" asks for it, so both are
 * turned off.  Done at open, not at creation, so that it also holds after
 * the device moved to another namespace.
 */
static void ovpn_disable_redirects(struct net_device *dev)
{
	struct in_device *in_dev = __in_dev_get_rtnl(dev);

	if (in_dev)
		IN_DEV_CONF_SET(in_dev, SEND_REDIRECTS, 0);
	IPV4_DEVCONF_ALL(dev_net(dev), SEND_REDIRECTS) = 0;
}

static int ovpn_net_open(struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	if (ovpn->mode == OVPN_MODE_MP)
		ovpn_disable_redirects(dev);

	netif_tx_start_all_queues(dev);
	return 0;
}

static int ovpn_net_stop(struct net_device *dev)
{
	netif_tx_stop_all_queues(dev);
	return 0;
}

static int ovpn_net_init(struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);
	int err;

	if (ovpn->mode == OVPN_MODE_MP) {
		ovpn->peers = kzalloc_obj(*ovpn->peers, GFP_KERNEL);
		if (!ovpn->peers)
			return -ENOMEM;
		err = ovpn_peer_init_tables(ovpn->peers);
		if (err)
			goto err_peers;
	}

	err = gro_cells_init(&ovpn->gro_cells, dev);
	if (err)
		goto err_gro;

	err = ovpn_parallel_init(ovpn);
	if (err)
		goto err_parallel;
	return 0;

err_parallel:
	gro_cells_destroy(&ovpn->gro_cells);
err_gro:
	if (ovpn->peers)
		ovpn_peer_destroy_tables(ovpn->peers);
err_peers:
	kfree(ovpn->peers);
	ovpn->peers = NULL;
	return err;
}

/*
 * The device is being unregistered (or failed to register): no new peer
 * or socket may appear, every peer is removed with reason TEARDOWN and
 * every socket detached.  Peers and sockets hold device references, so
 * unregistration waits until their deferred releases have run.
 */
static void ovpn_net_uninit(struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	spin_lock_bh(&ovpn->lock);
	ovpn->dying = true;
	spin_unlock_bh(&ovpn->lock);

	ovpn_peers_remove(ovpn, NULL, OVPN_DEL_PEER_REASON_TEARDOWN);
	ovpn_sockets_detach_all(ovpn);
	gro_cells_destroy(&ovpn->gro_cells);
}

/*
 * Last: nothing can reach the peer tables any more, and no packet is in
 * flight (each held a peer, and each peer a device reference).
 */
static void ovpn_priv_free(struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	ovpn_parallel_destroy(ovpn);
	if (ovpn->peers)
		ovpn_peer_destroy_tables(ovpn->peers);
	kfree(ovpn->peers);
	ovpn->peers = NULL;
}

static const struct net_device_ops ovpn_netdev_ops = {
	.ndo_init		= ovpn_net_init,
	.ndo_uninit		= ovpn_net_uninit,
	.ndo_open		= ovpn_net_open,
	.ndo_stop		= ovpn_net_stop,
	.ndo_start_xmit		= ovpn_net_xmit,
};

static void ovpn_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	strscpy(info->driver, "ovpn", sizeof(info->driver));
	strscpy(info->bus_info, "ovpn", sizeof(info->bus_info));
}

/*
 * Private flags: "parallel-crypto" turns a P2P device's parallel path on
 * (queue.c says what it costs and when it pays).
 */
#define OVPN_PRIV_FLAG_PARALLEL	BIT(0)

static const char ovpn_priv_flags[][ETH_GSTRING_LEN] = {
	"parallel-crypto",
};

static int ovpn_get_sset_count(struct net_device *dev, int sset)
{
	if (sset == ETH_SS_PRIV_FLAGS)
		return ARRAY_SIZE(ovpn_priv_flags);
	return -EOPNOTSUPP;
}

static void ovpn_get_strings(struct net_device *dev, u32 sset, u8 *buf)
{
	if (sset == ETH_SS_PRIV_FLAGS)
		memcpy(buf, ovpn_priv_flags, sizeof(ovpn_priv_flags));
}

static u32 ovpn_get_priv_flags(struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	return ovpn_parallel_enabled(ovpn) ? OVPN_PRIV_FLAG_PARALLEL : 0;
}

static int ovpn_set_priv_flags(struct net_device *dev, u32 flags)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	return ovpn_parallel_enable(ovpn, flags & OVPN_PRIV_FLAG_PARALLEL);
}

static const struct ethtool_ops ovpn_ethtool_ops = {
	.get_drvinfo		= ovpn_get_drvinfo,
	.get_sset_count		= ovpn_get_sset_count,
	.get_strings		= ovpn_get_strings,
	.get_priv_flags		= ovpn_get_priv_flags,
	.set_priv_flags		= ovpn_set_priv_flags,
	.get_link		= ethtool_op_get_link,
	.get_ts_info		= ethtool_op_get_ts_info,
};

static const struct device_type ovpn_type = {
	.name = "ovpn",
};

static void ovpn_setup(struct net_device *dev)
{
	netdev_features_t feat = NETIF_F_SG | NETIF_F_GSO |
				 NETIF_F_GSO_SOFTWARE | NETIF_F_HIGHDMA;

	dev->needs_free_netdev = true;
	dev->priv_destructor = ovpn_priv_free;
	dev->pcpu_stat_type = NETDEV_PCPU_STAT_DSTATS;

	dev->netdev_ops = &ovpn_netdev_ops;
	dev->ethtool_ops = &ovpn_ethtool_ops;
	SET_NETDEV_DEVTYPE(dev, &ovpn_type);

	/* A layer 3 tunnel: no link-layer header, no neighbours. */
	dev->type = ARPHRD_NONE;
	dev->flags = IFF_POINTOPOINT | IFF_NOARP;
	dev->hard_header_len = 0;
	dev->addr_len = 0;
	dev->priv_flags |= IFF_NO_QUEUE;
	/* The data path takes no lock of the device's. */
	dev->lltx = true;

	dev->mtu = ETH_DATA_LEN - OVPN_HEAD_ROOM;
	dev->min_mtu = IPV4_MIN_MTU;
	dev->max_mtu = IP_MAX_MTU - OVPN_HEAD_ROOM;
	dev->needed_headroom = ALIGN(OVPN_HEAD_ROOM, 4);
	dev->needed_tailroom = OVPN_TAIL_ROOM;

	dev->features |= feat;
	dev->hw_features |= feat;
	dev->hw_enc_features |= feat;

	/*
	 * In MP mode the peer is chosen by the nexthop of the route that sent
	 * the packet here, so the route must stay attached to the skb.
	 */
	netif_keep_dst(dev);
}

static int ovpn_newlink(struct net_device *dev,
			struct rtnl_newlink_params *params,
			struct netlink_ext_ack *extack)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);
	struct nlattr **data = params->data;
	enum ovpn_mode mode = OVPN_MODE_P2P;

	if (data && data[IFLA_OVPN_MODE])
		mode = nla_get_u8(data[IFLA_OVPN_MODE]);

	ovpn->dev = dev;
	ovpn->mode = mode;
	spin_lock_init(&ovpn->lock);
	INIT_LIST_HEAD(&ovpn->sockets);

	/* A P2P device has no carrier until its peer exists. */
	if (mode == OVPN_MODE_MP)
		netif_carrier_on(dev);
	else
		netif_carrier_off(dev);

	return register_netdevice(dev);
}

static int ovpn_fill_info(struct sk_buff *skb, const struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);

	if (nla_put_u8(skb, IFLA_OVPN_MODE, ovpn->mode))
		return -EMSGSIZE;

	return 0;
}

static size_t ovpn_get_size(const struct net_device *dev)
{
	return nla_total_size(sizeof(u8));	/* IFLA_OVPN_MODE */
}

static const struct nla_policy ovpn_policy[IFLA_OVPN_MAX + 1] = {
	[IFLA_OVPN_MODE] = NLA_POLICY_RANGE(NLA_U8, OVPN_MODE_P2P,
					    OVPN_MODE_MP),
};

static struct rtnl_link_ops ovpn_link_ops = {
	.kind		= OVPN_LINK_KIND,
	.netns_refund	= false,
	.priv_size	= sizeof(struct ovpn_priv),
	.setup		= ovpn_setup,
	.policy		= ovpn_policy,
	.maxtype	= IFLA_OVPN_MAX,
	.newlink	= ovpn_newlink,
	.get_size	= ovpn_get_size,
	.fill_info	= ovpn_fill_info,
};

static int __init ovpn_init(void)
{
	int err;

	ovpn_wq = alloc_workqueue("ovpn", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!ovpn_wq)
		return -ENOMEM;
	ovpn_tcp_init();

	err = ovpn_aead_init();
	if (err)
		goto destroy_wq;

	err = ovpn_queue_init();
	if (err)
		goto aead_exit;

	err = rtnl_link_register(&ovpn_link_ops);
	if (err) {
		pr_err("ovpn: cannot register rtnl link ops: %d\n", err);
		goto queue_exit;
	}

	err = ovpn_nl_register();
	if (err) {
		pr_err("ovpn: cannot register netlink family: %d\n", err);
		goto unreg_rtnl;
	}

	return 0;

unreg_rtnl:
	rtnl_link_unregister(&ovpn_link_ops);
queue_exit:
	ovpn_queue_exit();
aead_exit:
	ovpn_aead_exit();
destroy_wq:
	destroy_workqueue(ovpn_wq);
	return err;
}

/*
 * The netlink family goes first so that no new request can reach a device;
 * unregistering the link ops then deletes every remaining device, which
 * waits for every peer and socket holding it and gives every socket back,
 * after which the calls still inside ovpn's TCP operations are waited
 * for.  Key slots may still be on their way out: their percpu_ref
 * switch is an RCU callback that releases them into a batch, whose work
 * is queued then, hence a barrier, the workqueue drain (which waits for
 * queued works) and a final barrier for what those works freed with RCU.
 * Only then are the AEAD request buffers unused: a packet in flight holds
 * its key slot until it has given its buffer back.
 */
static void __exit ovpn_cleanup(void)
{
	ovpn_nl_unregister();
	rtnl_link_unregister(&ovpn_link_ops);
	ovpn_tcp_exit();
	ovpn_queue_exit();
	rcu_barrier();
	destroy_workqueue(ovpn_wq);
	rcu_barrier();
	ovpn_aead_exit();
}

module_init(ovpn_init);
module_exit(ovpn_cleanup);

MODULE_DESCRIPTION("OpenVPN data channel offload (ovpn)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RTNL_LINK("ovpn");
