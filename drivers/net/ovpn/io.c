// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - packet pipelines
 *
 * TX reads top to bottom: ovpn_net_xmit() -> ovpn_encrypt_one() ->
 * (AEAD) -> ovpn_encrypt_post() -> transport.  RX likewise: ovpn_recv()
 * -> (AEAD) -> ovpn_decrypt_post() -> ovpn_deliver().
 *
 * References: each packet in flight holds one peer reference and one key
 * slot reference, and in the epoch data format one epoch key reference,
 * recorded in its control block; the post functions put the epoch key
 * first, the key slot next and the peer last, because each one's release
 * may free what the one before hangs off.
 */

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/unaligned.h>
#include <net/gro_cells.h>
#include <net/gso.h>
#include <net/ip.h>

#include "aead.h"
#include "crypto.h"
#include "crypto_epoch.h"
#include "io.h"
#include "mss.h"
#include "netlink.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "pktid.h"
#include "proto.h"
#include "queue.h"
#include "skb.h"
#include "socket.h"
#include "tcp.h"
#include "udp.h"

/* The IP version of the packet at skb->data, as an ethertype; 0 if none. */
static __be16 ovpn_ip_check_protocol(struct sk_buff *skb)
{
	if (!pskb_may_pull(skb, 1))
		return 0;
	switch (skb->data[0] >> 4) {
	case 4:
		if (pskb_may_pull(skb, sizeof(struct iphdr)))
			return htons(ETH_P_IP);
		break;
	case 6:
		if (pskb_may_pull(skb, sizeof(struct ipv6hdr)))
			return htons(ETH_P_IPV6);
		break;
	}
	return 0;
}

static bool ovpn_is_keepalive(struct sk_buff *skb)
{
	static const u8 ping[] = OVPN_KEEPALIVE_MESSAGE;

	BUILD_BUG_ON(sizeof(ping) != OVPN_KEEPALIVE_SIZE);
	return skb->len == OVPN_KEEPALIVE_SIZE &&
	       pskb_may_pull(skb, OVPN_KEEPALIVE_SIZE) &&
	       !memcmp(skb->data, ping, OVPN_KEEPALIVE_SIZE);
}

/*
 * Put what a packet in flight held: epoch key first, peer last.  The
 * callers read them out of the control block beforehand, as the skb may
 * be freed, or owned by the stack, by the time they are put.
 */
static void ovpn_post_put(struct ovpn_peer *peer,
			  struct ovpn_crypto_key_slot *ks,
			  struct ovpn_epoch_key *ek)
{
	ovpn_epoch_key_put(ek);
	ovpn_crypto_key_slot_put(ks);
	ovpn_peer_put(peer);
}

/*
 * The replay check of an authentic packet, and its usage account; in the
 * epoch format the tag is trimmed off its end too.  Returns 0 or the
 * error that drops it.
 */
static int ovpn_decrypt_accept(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_crypto_key_slot *ks = cb->ks;
	u64 pktid;
	int ret;

	if (cb->ek) {
		pktid = get_unaligned_be64(skb->data + OVPN_OPCODE_SIZE);
		ret = pskb_trim(skb, skb->len - OVPN_AUTH_TAG_SIZE);
		if (likely(!ret))
			ret = ovpn_epoch_rx_accept(ks->epochs, cb->ek,
						   ovpn_epoch_counter(pktid));
	} else {
		pktid = get_unaligned_be32(skb->data + OVPN_OPCODE_SIZE);
		ret = ovpn_pktid_recv(&ks->pid_recv, pktid);
	}
	if (unlikely(ret)) {
		net_dbg_ratelimited("%s: peer %u: packet id %#llx refused\n",
				    netdev_name(peer->ovpn->dev), peer->id,
				    pktid);
		return ret;
	}
	/*
	 * Once this key's usage nears the limit, ask for a new key even
	 * though only the sender can be refused: the other end may not
	 * count (openvpn checks both directions for the same reason).  An
	 * epoch key is the sender's to replace.
	 */
	if (!cb->ek &&
	    unlikely(ovpn_usage_add(&ks->usage_recv,
				    skb->len - cb->payload_offset,
				    pktid) == OVPN_USAGE_RENEG))
		ovpn_nl_key_swap_notify(peer, ks->key_id);
	return 0;
}

/*
 * Hand a decrypted IP packet, CHECKSUM_NONE, to the stack; BH disabled
 * (GRO cells).
 */
static void ovpn_deliver(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct net_device *dev = peer->ovpn->dev;
	unsigned int len = skb->len;

	skb->dev = dev;
	skb->pkt_type = PACKET_HOST;
	/*
	 * What the transport left (GSO state, dst, mark, conntrack) is not
	 * ours.  Nor is its flow hash: computed from the outer 5-tuple (RSS,
	 * RPS), it would make every inner flow of the peer one flow for RPS,
	 * fq and ECMP; cleared, the stack hashes the inner headers.
	 */
	skb_gso_reset(skb);
	skb_scrub_packet(skb, true);
	skb_clear_hash(skb);
	/*
	 * The receive queue recorded is the transport NIC's: RPS on this
	 * device, which has one, would refuse the packet for an index past
	 * its own queues.
	 */
	skb_set_queue_mapping(skb, 0);
	/*
	 * A layer 3 device: the "MAC header" is empty and starts where the
	 * IP header does.  TCP records arrive in fresh skbs that never had
	 * one, and GRO reads its length.
	 */
	skb_reset_mac_header(skb);
	skb_reset_network_header(skb);
	skb_reset_transport_header(skb);
	skb_reset_inner_headers(skb);

	ovpn_stats_add(&peer->stats, vpn, rx, len);
	if (gro_cells_receive(&peer->ovpn->gro_cells, skb) == NET_RX_SUCCESS)
		dev_dstats_rx_add(dev, len);
}

/**
 * ovpn_decrypt_post - continue a received packet after its decryption
 * @skb: the packet
 * @ret: the AEAD's result
 *
 * Checks the packet id against the replay window, only now that the
 * packet is authentic, and delivers it or drops it.  Puts what the packet
 * held.
 *
 * Context: BH disabled (see ovpn_decrypt_done()).
 */
void ovpn_decrypt_post(struct sk_buff *skb, int ret)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_crypto_key_slot *ks = cb->ks;
	struct ovpn_epoch_key *ek = cb->ek;
	struct ovpn_peer *peer = cb->peer;
	__be16 proto;

	ovpn_aead_request_free(skb);

	if (unlikely(ret)) {
		net_dbg_ratelimited("%s: peer %u: packet dropped: %d\n",
				    netdev_name(peer->ovpn->dev), peer->id,
				    ret);
		/*
		 * A forgery, or a corrupted packet: past openvpn's count of
		 * them, ask for a new key, as openvpn itself would.
		 */
		if (ret == -EBADMSG &&
		    ovpn_usage_forged(&ks->forged) == OVPN_USAGE_RENEG)
			ovpn_nl_key_swap_notify(peer, ks->key_id);
		goto drop;
	}

	/* Authentic: only now may it move the replay window. */
	if (unlikely(ovpn_decrypt_accept(peer, skb)))
		goto drop;

	ovpn_peer_mark_recv(peer);
	if (rcu_access_pointer(peer->bind))
		ovpn_peer_float(peer, skb);

	__skb_pull(skb, cb->payload_offset);
	proto = ovpn_ip_check_protocol(skb);
	if (unlikely(!proto)) {
		if (ovpn_is_keepalive(skb)) {
			consume_skb(skb);
			ovpn_post_put(peer, ks, ek);
			return;
		}
		goto drop;
	}
	skb->protocol = proto;
	skb_reset_network_header(skb);

	if (unlikely(!ovpn_peer_check_by_src(peer->ovpn, skb, peer))) {
		net_dbg_ratelimited("%s: peer %u: spoofed source address\n",
				    netdev_name(peer->ovpn->dev), peer->id);
		goto drop;
	}
	/*
	 * The other end's SYN, if it did not clamp for this path.  The
	 * checksum state the skb has is the outer packet's (CHECKSUM_PARTIAL
	 * from a local sender over veth): the plaintext has none, and the
	 * clamp must update the TCP checksum itself.
	 */
	skb->ip_summed = CHECKSUM_NONE;
	if (unlikely(!ovpn_mss_clamp(peer, skb)))
		goto drop;

	ovpn_epoch_key_put(ek);
	ovpn_crypto_key_slot_put(ks);
	/* The skb, control block included, is the stack's from here on. */
	ovpn_deliver(peer, skb);
	ovpn_peer_put(peer);
	return;

drop:
	dev_dstats_rx_dropped(peer->ovpn->dev);
	kfree_skb(skb);
	ovpn_post_put(peer, ks, ek);
}

/*
 * Completion of an asynchronous decryption (@data is the packet, @ret the
 * AEAD's result).  A crypto driver may complete in any context, process
 * context included (crypto_engine's kthread).  The step after the AEAD
 * runs with BH disabled whatever the caller, as on the synchronous path:
 * the per-CPU statistics are only written so (see stats.h), and the GRO
 * cells want it.
 */
static void ovpn_decrypt_done(void *data, int ret)
{
	local_bh_disable();
	ovpn_decrypt_post(data, ret);
	local_bh_enable();
}

/* Decrypt with the key the control block holds, of either format. */
static int ovpn_decrypt_cb(struct sk_buff *skb, crypto_completion_t done)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);

	if (cb->ek)
		return ovpn_aead_decrypt_epoch(&cb->ek->aead, done, skb);
	return ovpn_aead_decrypt(&cb->ks->decrypt, done, skb);
}

/**
 * ovpn_decrypt_run - decrypt a packet of the parallel path
 * @skb: the packet, taken from its device's crypt ring
 *
 * Ends in ovpn_crypt_done(), now or when the AEAD completes.
 *
 * Context: BH disabled, on the CPU of a worker (see queue.c).
 */
void ovpn_decrypt_run(struct sk_buff *skb)
{
	int ret;

	ret = ovpn_decrypt_cb(skb, ovpn_crypt_done);
	if (ret != -EINPROGRESS)
		ovpn_crypt_done(skb, ret);
}

/*
 * The epoch key a packet to decrypt claims, into its control block (which
 * has its key slot).  Returns 0, or the error that drops the packet.
 */
static int ovpn_recv_epoch_key(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	u16 epoch;

	if (unlikely(!pskb_may_pull(skb, OVPN_EPOCH_HEAD_SIZE)))
		return -EINVAL;
	epoch = get_unaligned_be16(skb->data + OVPN_OPCODE_SIZE);
	cb->ek = ovpn_epoch_rx_get(cb->ks->epochs, epoch);
	if (unlikely(!cb->ek)) {
		net_dbg_ratelimited("%s: peer %u: no key for epoch %u\n",
				    netdev_name(peer->ovpn->dev), peer->id,
				    epoch);
		return -ENOKEY;
	}
	return 0;
}

/**
 * ovpn_recv - decrypt and deliver a data packet from a peer
 * @peer: the peer, with a reference this function takes over
 * @skb: the OpenVPN packet, skb->data at its first byte; consumed
 *
 * Context: softirq.
 */
void ovpn_recv(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_crypto_key_slot *ks;
	int ret;

	ovpn_stats_add(&peer->stats, link, rx, skb->len);

	ks = ovpn_crypto_key_id_to_slot(&peer->crypto,
					ovpn_key_id_from_skb(skb, 0));
	if (unlikely(!ks)) {
		net_dbg_ratelimited("%s: peer %u: no key with id %u\n",
				    netdev_name(peer->ovpn->dev), peer->id,
				    ovpn_key_id_from_skb(skb, 0));
		dev_dstats_rx_dropped(peer->ovpn->dev);
		kfree_skb(skb);
		ovpn_peer_put(peer);
		return;
	}

	memset(cb, 0, sizeof(*cb));
	cb->peer = peer;
	cb->ks = ks;
	/* Too many forgeries tried under this key: it decrypts no more. */
	if (ovpn_usage_forged_spent(&ks->forged)) {
		net_dbg_ratelimited("%s: peer %u: key %u failed too often\n",
				    netdev_name(peer->ovpn->dev), peer->id,
				    ks->key_id);
		ovpn_decrypt_post(skb, -EKEYREJECTED);
		return;
	}
	if (ks->epochs) {
		ret = ovpn_recv_epoch_key(peer, skb);
		if (unlikely(ret)) {
			ovpn_decrypt_post(skb, ret);
			return;
		}
	}
	if (ovpn_queue_wanted(peer, false)) {
		/*
		 * Decrypted on any CPU, then replay-checked in order, after
		 * this softirq: the outer route may be one borrowed for its
		 * duration only (noref), and the outer device may go
		 * meanwhile.  Neither is read again (ovpn_deliver() scrubs
		 * the packet): drop the one, and make the packet this
		 * device's, as it is once delivered.
		 */
		skb_dst_drop(skb);
		skb->dev = peer->ovpn->dev;
		if (unlikely(ovpn_queue_packet(peer, skb, false)))
			ovpn_decrypt_post(skb, -ENOBUFS);
		return;
	}
	ret = ovpn_decrypt_cb(skb, ovpn_decrypt_done);
	/*
	 * Only -EINPROGRESS means the callback will run: requests are made
	 * without CRYPTO_TFM_REQ_MAY_BACKLOG, so -EBUSY is a refusal, and
	 * ovpn_decrypt_post() drops the packet and puts what it holds.
	 */
	if (ret == -EINPROGRESS)
		return;
	ovpn_decrypt_post(skb, ret);
}

/**
 * ovpn_encrypt_post - send a packet after its encryption
 * @skb: the packet
 * @ret: the AEAD's result, or the error that kept it from the AEAD
 *
 * Hands the packet to its transport, or drops it.  Puts what the packet
 * held.
 *
 * Context: BH disabled (see ovpn_encrypt_done()).
 */
void ovpn_encrypt_post(struct sk_buff *skb, int ret)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_crypto_key_slot *ks = cb->ks;
	struct ovpn_epoch_key *ek = cb->ek;
	struct ovpn_peer *peer = cb->peer;

	ovpn_aead_request_free(skb);

	if (unlikely(ret == -ERANGE)) {
		/*
		 * Out of packet ids or past the usage limit: this key must
		 * never encrypt again.
		 */
		if (ovpn_crypto_key_kill_exhausted(&peer->crypto, ks))
			ovpn_nl_key_swap_notify(peer, ks->key_id);
	}
	if (unlikely(ret)) {
		dev_dstats_tx_dropped(peer->ovpn->dev);
		kfree_skb(skb);
		ovpn_post_put(peer, ks, ek);
		return;
	}

	ovpn_stats_add(&peer->stats, link, tx, skb->len);
	ovpn_peer_mark_sent(peer);
	/* The transport owns the control block from here on. */
	ovpn_epoch_key_put(ek);
	ovpn_crypto_key_slot_put(ks);
	if (ovpn_socket_is_tcp(peer->sock))
		ovpn_tcp_send_skb(peer, skb);
	else
		ovpn_udp_send_skb(peer, skb);
	ovpn_peer_put(peer);
}

/*
 * Completion of an asynchronous encryption.  As ovpn_decrypt_done(): the
 * step after the AEAD runs with BH disabled.
 */
static void ovpn_encrypt_done(void *data, int ret)
{
	local_bh_disable();
	ovpn_encrypt_post(data, ret);
	local_bh_enable();
}

/* The first word of a packet to @peer encrypted with @ks. */
static __be32 ovpn_data_opcode(struct ovpn_peer *peer,
			       struct ovpn_crypto_key_slot *ks)
{
	return ovpn_opcode_compose(OVPN_OPCODE_DATA_V2, ks->key_id,
				   READ_ONCE(peer->tx_id));
}

/* Encrypt with the key and packet id the control block holds. */
static int ovpn_encrypt_cb(struct sk_buff *skb, crypto_completion_t done)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	__be32 opcode = ovpn_data_opcode(cb->peer, cb->ks);

	if (cb->ek)
		return ovpn_aead_encrypt_epoch(&cb->ek->aead, opcode,
					       cb->pktid, done, skb);
	return ovpn_aead_encrypt(&cb->ks->encrypt, opcode, cb->pktid, done,
				 skb);
}

/**
 * ovpn_encrypt_run - encrypt a packet of the parallel path
 * @skb: the packet, taken from its device's crypt ring, with its packet
 *	 id in the control block
 *
 * Ends in ovpn_crypt_done(), now or when the AEAD completes.
 *
 * Context: BH disabled, on the CPU of a worker (see queue.c).
 */
void ovpn_encrypt_run(struct sk_buff *skb)
{
	int ret;

	ret = ovpn_encrypt_cb(skb, ovpn_crypt_done);
	if (ret != -EINPROGRESS)
		ovpn_crypt_done(skb, ret);
}

/*
 * Count a packet of @len bytes, id @pktid, against the usage limit of the
 * key about to encrypt it.  Past the renegotiation threshold userspace is
 * asked for a new key, once; past the limit the packet is refused with
 * -ERANGE, and the key is done as when its packet ids run out.  openvpn
 * counts what it encrypts with the authenticated header and packet id in
 * front (what it receives without), so the same is done here: its own
 * data channel and this one then ask at the same packet.
 */
static int ovpn_xmit_usage(struct ovpn_peer *peer,
			   struct ovpn_crypto_key_slot *ks, unsigned int len,
			   u32 pktid)
{
	len += OVPN_OPCODE_SIZE + OVPN_PKTID_SIZE;
	switch (ovpn_usage_add(&ks->usage_xmit, len, pktid)) {
	case OVPN_USAGE_RENEG:
		ovpn_nl_key_swap_notify(peer, ks->key_id);
		return 0;
	case OVPN_USAGE_SPENT:
		return -ERANGE;
	default:
		return 0;
	}
}

/*
 * The packet id of a packet about to be encrypted with @ks, and in the
 * epoch format the epoch key, into the control block.  -ERANGE: the key
 * is used up (ovpn_encrypt_post()).
 */
static int ovpn_xmit_pktid(struct ovpn_peer *peer,
			   struct ovpn_crypto_key_slot *ks, struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_epoch_key *ek;
	u32 pktid;
	int ret;

	if (ks->epochs) {
		ek = ovpn_epoch_tx_get(ks->epochs,
				       skb->len + OVPN_EPOCH_HEAD_SIZE,
				       &cb->pktid);
		if (IS_ERR(ek))
			return PTR_ERR(ek);
		cb->ek = ek;
		if (ovpn_epoch_tx_wants_reneg(ks->epochs, ek))
			ovpn_nl_key_swap_notify(peer, ks->key_id);
		return 0;
	}
	ret = ovpn_pktid_xmit_next(&ks->pid_xmit, &pktid);
	if (likely(!ret)) {
		cb->pktid = pktid;
		ret = ovpn_xmit_usage(peer, ks, skb->len, pktid);
	}
	return ret;
}

/* Encrypt one packet for @peer; takes its own peer reference. */
static void ovpn_encrypt_one(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_cb *cb = ovpn_skb_cb(skb);
	struct ovpn_crypto_key_slot *ks;
	int ret;

	/* Encryption makes the payload opaque: no checksum offload. */
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb))
		goto drop;

	ks = ovpn_crypto_key_primary_get(&peer->crypto);
	if (unlikely(!ks)) {
		net_dbg_ratelimited("%s: peer %u: no primary key\n",
				    netdev_name(peer->ovpn->dev), peer->id);
		goto drop;
	}

	memset(cb, 0, sizeof(*cb));
	ovpn_peer_hold(peer);
	cb->peer = peer;
	cb->ks = ks;
	ret = ovpn_xmit_pktid(peer, ks, skb);
	if (likely(!ret)) {
		if (ovpn_queue_wanted(peer, true)) {
			/* Encrypted on any CPU, then sent in order. */
			ret = ovpn_queue_packet(peer, skb, true);
			if (likely(!ret))
				return;
		} else {
			ret = ovpn_encrypt_cb(skb, ovpn_encrypt_done);
		}
	}
	/* As on RX: -EBUSY without a backlog is a refusal. */
	if (ret == -EINPROGRESS)
		return;
	ovpn_encrypt_post(skb, ret);
	return;

drop:
	dev_dstats_tx_dropped(peer->ovpn->dev);
	kfree_skb(skb);
}

/**
 * ovpn_net_xmit - ndo_start_xmit of an ovpn device
 * @skb: an IP packet routed to the device
 * @dev: the device
 *
 * The peer is looked up before anything else may replace the skb (GSO
 * segmentation, share check).  Every segment is encrypted on its own
 * with its own packet id.
 *
 * Return: NETDEV_TX_OK, always: a dropped packet is counted, not retried.
 */
netdev_tx_t ovpn_net_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct ovpn_priv *ovpn = netdev_priv(dev);
	struct sk_buff *segs, *next;
	struct ovpn_peer *peer;
	__be16 proto;

	/*
	 * The inner flow's conntrack entry ends at the tunnel: the outer
	 * packet is a flow of its own.  Dropped before segmentation, so the
	 * entry is not referenced once per segment.
	 */
	nf_reset_ct(skb);

	proto = ovpn_ip_check_protocol(skb);
	if (unlikely(!proto || skb->protocol != proto))
		goto drop;

	peer = ovpn_peer_get_by_dst(ovpn, skb);
	if (unlikely(!peer)) {
		net_dbg_ratelimited("%s: no peer to send to\n",
				    netdev_name(dev));
		goto drop;
	}
	/*
	 * A packet of the peer's own TCP connection, routed back into the
	 * tunnel (the route to the peer's address points here): sending it
	 * would take the socket's spinlock, which its sender (TCP's receive
	 * path for an ACK, ovpn_tcp_tx_flush() for a record) holds already
	 * on this CPU.  The lockdep subclass that lets another socket's
	 * spinlock nest would hide the self-deadlock: drop it here.  A loop
	 * through a second ovpn device is not caught.
	 */
	if (unlikely(skb->sk && skb->sk == peer->sock->sk)) {
		net_warn_ratelimited("%s: peer %u: transport routed into the tunnel\n",
				     netdev_name(dev), peer->id);
		ovpn_peer_put(peer);
		goto drop;
	}
	/*
	 * The route of the plaintext served the next-hop lookup and is not
	 * the transport's: dropped before segmentation (one reference less
	 * per segment) and before a TCP record may sit in a queue with it.
	 */
	skb_dst_drop(skb);
	/*
	 * A TCP peer's records wait for the connection per tunnelled flow
	 * (flowq.h), told apart by the inner packet's flow hash: taken here,
	 * while the headers are plain, and copied to every segment.
	 */
	if (ovpn_socket_is_tcp(peer->sock))
		skb_get_hash(skb);

	if (skb_is_gso(skb)) {
		segs = skb_gso_segment(skb, 0);
		if (IS_ERR(segs)) {
			ovpn_peer_put(peer);
			goto drop;
		}
		consume_skb(skb);
		skb = segs;
	}

	skb_list_walk_safe(skb, skb, next) {
		skb_mark_not_on_list(skb);
		skb = skb_share_check(skb, GFP_ATOMIC);
		if (unlikely(!skb)) {
			dev_dstats_tx_dropped(dev);
			continue;
		}
		if (unlikely(!ovpn_mss_clamp(peer, skb))) {
			dev_dstats_tx_dropped(dev);
			kfree_skb(skb);
			continue;
		}
		ovpn_stats_add(&peer->stats, vpn, tx, skb->len);
		dev_dstats_tx_add(dev, skb->len);
		ovpn_encrypt_one(peer, skb);
	}

	ovpn_peer_put(peer);
	return NETDEV_TX_OK;

drop:
	dev_dstats_tx_dropped(dev);
	/* A zerocopy sender learns that its pages were not sent. */
	skb_tx_error(skb);
	kfree_skb(skb);
	return NETDEV_TX_OK;
}

/**
 * ovpn_xmit_special - send a non-IP payload (a keepalive) to a peer
 * @peer: the peer, held by the caller
 * @data: the plaintext
 * @len: its length
 *
 * Counted in the link statistics only: it is not VPN traffic.
 *
 * Context: process context.
 */
void ovpn_xmit_special(struct ovpn_peer *peer, const void *data,
		       unsigned int len)
{
	struct net_device *dev = peer->ovpn->dev;
	struct sk_buff *skb;

	skb = alloc_skb(dev->needed_headroom + len + dev->needed_tailroom,
			GFP_KERNEL);
	if (!skb)
		return;

	skb_reserve(skb, dev->needed_headroom);
	skb_put_data(skb, data, len);
	skb->priority = TC_PRIO_BESTEFFORT;
	skb->dev = dev;

	local_bh_disable();
	ovpn_encrypt_one(peer, skb);
	local_bh_enable();
}
