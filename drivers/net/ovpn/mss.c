// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - TCP MSS clamping
 *
 * See mss.h.  Upstream's driver and WireGuard leave the MSS alone (a
 * WireGuard user clamps with a firewall rule); openvpn's own data channel
 * clamps by default, so a tunnel handed to the kernel must not lose it.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "mss.h"
#include "peer.h"
#include "proto.h"
#include "socket.h"
#include "tcp.h"
#include "udp.h"

/*
 * The largest MSS a connection through @peer may announce: one segment
 * with its TCP header (@hlen bytes of inner IP header before it) must fit,
 * encrypted and framed, in one outer packet of at most @mssfix bytes and
 * of the path MTU.  The MSS excludes TCP options, as the announcing end
 * subtracts its own.  0 if the transport has no room to tell.
 */
static unsigned int ovpn_mss_max(struct ovpn_peer *peer, u16 mssfix,
				 unsigned int hlen)
{
	unsigned int room, over;

	if (ovpn_socket_is_tcp(peer->sock))
		room = ovpn_tcp_room(peer, mssfix);
	else
		room = ovpn_udp_room(peer, mssfix);
	over = OVPN_DATA_OVERHEAD + hlen + sizeof(struct tcphdr);
	return room > over ? room - over : 0;
}

/* The MSS option in @len bytes of TCP options at @opt, or NULL. */
static u8 *ovpn_mss_option(u8 *opt, unsigned int len)
{
	unsigned int i = 0, optlen;

	while (i < len) {
		switch (opt[i]) {
		case TCPOPT_EOL:
			return NULL;
		case TCPOPT_NOP:
			i++;
			continue;
		}
		if (i + 1 >= len)
			return NULL;
		optlen = opt[i + 1];
		if (optlen < 2 || i + optlen > len)
			return NULL;
		if (opt[i] == TCPOPT_MSS && optlen == TCPOLEN_MSS)
			return &opt[i + 2];
		i += optlen;
	}
	return NULL;
}

/**
 * ovpn_mss_clamp - clamp the MSS a TCP SYN through a peer announces
 * @peer: the peer the packet goes to or comes from, held by the caller
 * @skb: a plaintext IP packet starting at skb->data, its IP header in the
 *	 linear part (ovpn_ip_check_protocol()), skb->protocol set, not shared
 *
 * Every packet passes here, so what is not a TCP SYN leaves after a look
 * at its headers; only a SYN costs a look at the route.  A SYN behind
 * IPv6 extension headers, and an IPv4 fragment, are left alone.  The
 * checksum follows the change: incrementally where it is complete, and
 * not at all where it is still to be computed (CHECKSUM_PARTIAL, TX).
 *
 * Context: BH disabled (the transport's route cache is per CPU).
 * Return: false if the packet must be dropped (its headers could not be
 * made writable), true otherwise.
 */
bool ovpn_mss_clamp(struct ovpn_peer *peer, struct sk_buff *skb)
{
	u16 mssfix = READ_ONCE(peer->mssfix);
	unsigned int thoff, hlen, end, max, optoff;
	struct tcphdr *th;
	u8 *opt;
	u16 mss;

	if (mssfix == OVPN_MSSFIX_OFF)
		return true;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)skb->data;

		if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph) ||
		    iph->ihl < 5)
			return true;
		thoff = iph->ihl * 4;
		hlen = sizeof(struct iphdr);
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = (const struct ipv6hdr *)skb->data;

		if (ip6h->nexthdr != IPPROTO_TCP)
			return true;
		thoff = sizeof(struct ipv6hdr);
		hlen = thoff;
	} else {
		return true;
	}

	if (!pskb_may_pull(skb, thoff + sizeof(*th)))
		return true;
	th = (struct tcphdr *)(skb->data + thoff);
	end = thoff + th->doff * 4;
	if (!th->syn || th->doff * 4 <= sizeof(*th) ||
	    !pskb_may_pull(skb, end))
		return true;

	th = (struct tcphdr *)(skb->data + thoff);
	opt = ovpn_mss_option((u8 *)(th + 1), end - thoff - sizeof(*th));
	if (!opt)
		return true;
	/* Only a SYN with an MSS to clamp looks at the route. */
	mss = get_unaligned_be16(opt);
	max = ovpn_mss_max(peer, mssfix, hlen);
	if (!max || mss <= max)
		return true;

	/* A sender's SYN may be a clone of the one it keeps to resend. */
	optoff = opt - skb->data;
	if (skb_ensure_writable(skb, end))
		return false;
	th = (struct tcphdr *)(skb->data + thoff);
	put_unaligned_be16(max, skb->data + optoff);
	inet_proto_csum_replace2(&th->check, skb, htons(mss), htons(max),
				 false);
	return true;
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "mss_kunit.c"
#endif
