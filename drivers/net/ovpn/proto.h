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

/* Opcode, key id and peer id share the first 32-bit word. */
#define OVPN_OPCODE_SIZE	4
/* Packet id: a 32-bit counter, never 0, never reused with one key. */
#define OVPN_PKTID_SIZE		4
/* AEAD authentication tag, the same size for AES-GCM and ChaCha20-Poly1305. */
#define OVPN_AUTH_TAG_SIZE	16
/* Everything a data packet adds in front of the plaintext. */
#define OVPN_DATA_OVERHEAD	(OVPN_OPCODE_SIZE + OVPN_PKTID_SIZE + \
				 OVPN_AUTH_TAG_SIZE)

#endif /* _NET_OVPN_PROTO_H_ */
