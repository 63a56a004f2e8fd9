/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - wire format of data packets
 *
 * A DATA_V2 packet, as carried in a UDP datagram or after the 2-byte
 * length of a TCP record:
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  | opcode  |key id|                  peer id                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                          packet id                            |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                   AEAD tag (16 bytes) ...                     |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                   ciphertext ...                              |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * All fields are big-endian.  The first 8 bytes are the AEAD's associated
 * data; the nonce is the packet id followed by the 8-byte nonce tail of
 * the key's direction.
 */

#ifndef _NET_OVPN_PROTO_H_
#define _NET_OVPN_PROTO_H_

#include <linux/bitfield.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/unaligned.h>

/* Opcode, key id and peer id share the first 32-bit word. */
#define OVPN_OPCODE_SIZE	4
/* Packet id: a 32-bit counter, never 0, never reused with one key. */
#define OVPN_PKTID_SIZE		4
/* AEAD authentication tag, the same size for AES-GCM and ChaCha20-Poly1305. */
#define OVPN_AUTH_TAG_SIZE	16
/* Everything a data packet adds in front of the plaintext. */
#define OVPN_DATA_OVERHEAD	(OVPN_OPCODE_SIZE + OVPN_PKTID_SIZE + \
				 OVPN_AUTH_TAG_SIZE)

/*
 * The epoch data format of openvpn 2.7 (epoch.h): the packet id is 64
 * bits, the epoch in its top 16, and the tag follows the ciphertext.  The
 * associated data is the header and the packet id, 12 bytes; the nonce is
 * the epoch's 12-byte IV XOR the packet id followed by 4 zero bytes.
 */
#define OVPN_EPOCH_PKTID_SIZE	8
#define OVPN_EPOCH_HEAD_SIZE	(OVPN_OPCODE_SIZE + OVPN_EPOCH_PKTID_SIZE)
#define OVPN_EPOCH_DATA_OVERHEAD (OVPN_EPOCH_HEAD_SIZE + OVPN_AUTH_TAG_SIZE)

/* The larger transport header (TCP) and the larger outer IP header (IPv6) */
#define OVPN_MAX_TRANSPORT_HLEN	\
	max(sizeof(struct udphdr), sizeof(struct tcphdr))
#define OVPN_MAX_IP_HLEN	\
	max(sizeof(struct ipv6hdr), sizeof(struct iphdr))

/*
 * Room an encrypted packet needs in front of the plaintext in the worst
 * case.  The default MTU is derived from it, so that a full-sized inner
 * packet still fits a 1500-byte link: 1500 - 84 = 1416.
 */
#define OVPN_HEAD_ROOM		(OVPN_DATA_OVERHEAD + \
				 OVPN_MAX_TRANSPORT_HLEN + OVPN_MAX_IP_HLEN)

/* Tail room: AEAD tags are prepended, only block ciphers would pad */
#define OVPN_TAIL_ROOM		OVPN_AUTH_TAG_SIZE

/* Opcodes the kernel cares about; every other one is control traffic. */
#define OVPN_OPCODE_DATA_V1	6
#define OVPN_OPCODE_DATA_V2	9

/* Peer id of a sender that does not know its own: find it by address. */
#define OVPN_PEER_ID_UNDEF	0xffffff

#define OVPN_OPCODE_MASK	GENMASK(31, 27)
#define OVPN_KEY_ID_MASK	GENMASK(26, 24)
#define OVPN_PEER_ID_MASK	GENMASK(23, 0)

/*
 * Plaintext of a keepalive packet: OpenVPN's ping message.  A peer sends
 * it when it has had nothing else to send for a while; it is not an IP
 * packet and never reaches the device.
 */
#define OVPN_KEEPALIVE_MESSAGE	{				\
	0x2a, 0x18, 0x7b, 0xf3, 0x64, 0x1e, 0xb4, 0xcb,		\
	0x07, 0xed, 0x2d, 0x0a, 0x98, 0x1f, 0xc7, 0x48 }
#define OVPN_KEEPALIVE_SIZE	16

/**
 * ovpn_opcode_compose - build the first word of a data packet
 * @opcode: OVPN_OPCODE_DATA_V2
 * @key_id: key id of the key that encrypts the packet (0-7)
 * @peer_id: the id the receiving peer knows us by
 *
 * Return: the word, in network order.
 */
static inline __be32 ovpn_opcode_compose(u8 opcode, u8 key_id, u32 peer_id)
{
	return cpu_to_be32(FIELD_PREP(OVPN_OPCODE_MASK, opcode) |
			   FIELD_PREP(OVPN_KEY_ID_MASK, key_id) |
			   FIELD_PREP(OVPN_PEER_ID_MASK, peer_id));
}

/*
 * Read the first word of an OpenVPN packet at @offset; it must be there.
 * The packet follows a UDP header behind NET_IP_ALIGN, or starts a TCP
 * record anywhere: the word is not aligned.
 */
static inline u32 ovpn_opcode_word(const struct sk_buff *skb, u16 offset)
{
	return get_unaligned_be32(skb->data + offset);
}

/**
 * ovpn_opcode_from_skb - opcode of the OpenVPN packet at @offset
 * @skb: the packet; at least one byte must be linear at @offset
 * @offset: where the OpenVPN packet starts
 *
 * Return: the opcode.
 */
static inline u8 ovpn_opcode_from_skb(const struct sk_buff *skb, u16 offset)
{
	return skb->data[offset] >> 3;
}

/* Key id of a data packet; the first word must be linear at @offset. */
static inline u8 ovpn_key_id_from_skb(const struct sk_buff *skb, u16 offset)
{
	return FIELD_GET(OVPN_KEY_ID_MASK, ovpn_opcode_word(skb, offset));
}

/* Peer id of a DATA_V2 packet; the first word must be linear at @offset. */
static inline u32 ovpn_peer_id_from_skb(const struct sk_buff *skb, u16 offset)
{
	return FIELD_GET(OVPN_PEER_ID_MASK, ovpn_opcode_word(skb, offset));
}

#endif /* _NET_OVPN_PROTO_H_ */
