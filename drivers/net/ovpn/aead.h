/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - AEAD encryption and decryption
 *
 * One packet is encrypted or decrypted with the kernel crypto API, which
 * may complete asynchronously.  Either way the packet continues in
 * ovpn_encrypt_post() / ovpn_decrypt_post() (io.c), which own the
 * references the packet carries in its control block (struct ovpn_cb).
 * The request, IV and scatterlist come from a single allocation per
 * packet, freed by the post function.
 */

#ifndef _NET_OVPN_AEAD_H_
#define _NET_OVPN_AEAD_H_

#include <linux/skbuff.h>

#include "crypto.h"

struct ovpn_peer;

int ovpn_aead_encrypt(struct ovpn_peer *peer, struct ovpn_crypto_key_slot *ks,
		      struct sk_buff *skb);
int ovpn_aead_decrypt(struct ovpn_peer *peer, struct ovpn_crypto_key_slot *ks,
		      struct sk_buff *skb);

struct ovpn_crypto_key_slot *
ovpn_aead_key_slot_new(const struct ovpn_key_config *kc);
void ovpn_aead_key_slot_free_tfms(struct ovpn_crypto_key_slot *ks);

#endif /* _NET_OVPN_AEAD_H_ */
