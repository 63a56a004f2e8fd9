/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - packet pipelines
 *
 * TX: ndo_start_xmit -> peer -> per segment: primary key slot -> encrypt
 *     -> ovpn_encrypt_post() -> transport.
 * RX: transport -> peer (by id) -> key slot (by key id) -> decrypt
 *     -> ovpn_decrypt_post() -> replay check -> device.
 * Both post functions run with BH disabled: in softirq, on the transmit
 * path, from an async crypto completion (ovpn_encrypt_done(),
 * ovpn_decrypt_done()), or from a peer's ordered queue on the parallel
 * path (queue.c, which also calls the run functions from its workers);
 * each ends by putting the key slot, then the peer.
 */

#ifndef _NET_OVPN_IO_H_
#define _NET_OVPN_IO_H_

#include <linux/netdevice.h>
#include <linux/skbuff.h>

struct ovpn_peer;

netdev_tx_t ovpn_net_xmit(struct sk_buff *skb, struct net_device *dev);
void ovpn_recv(struct ovpn_peer *peer, struct sk_buff *skb);
void ovpn_xmit_special(struct ovpn_peer *peer, const void *data,
		       unsigned int len);

void ovpn_encrypt_run(struct sk_buff *skb);
void ovpn_decrypt_run(struct sk_buff *skb);
void ovpn_encrypt_post(struct sk_buff *skb, int ret);
void ovpn_decrypt_post(struct sk_buff *skb, int ret);

#endif /* _NET_OVPN_IO_H_ */
