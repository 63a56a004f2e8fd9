// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - the key schedule of epoch data keys
 *
 * See epoch.h for the derivations.  The HMAC is the kernel's SHA-256
 * library: synchronous, no transform to allocate, any context; the
 * crypto API's "hmac(sha256)" would add an allocation per derivation and
 * nothing else.
 */

#include <linux/errno.h>
#include <linux/string.h>
#include <linux/unaligned.h>

#include "epoch.h"

/* TLS 1.3's "tls13 ", as openvpn changed it. */
#define OVPN_EPOCH_LABEL_PREFIX		"ovpn "
#define OVPN_EPOCH_LABEL_PREFIX_LEN	(sizeof(OVPN_EPOCH_LABEL_PREFIX) - 1)
/* The longest label TLS 1.3's one length byte leaves room for. */
#define OVPN_EPOCH_LABEL_MAX		(255 - OVPN_EPOCH_LABEL_PREFIX_LEN)

/**
 * ovpn_epoch_expand_label - openvpn's HKDF-Expand-Label, empty context
 * @secret: the pseudorandom key, an epoch's secret
 * @label: the label, without the "ovpn " prefix
 * @out: where the @len bytes go
 * @len: how many, at most one SHA-256 output
 *
 * HKDF-Expand (RFC 5869) of the HkdfLabel structure of RFC 8446 section
 * 7.1: the output length (2 bytes, big endian), the label with its prefix
 * behind its length byte, and the context (here none) behind its own.
 * With at most one hash output wanted, HKDF-Expand is the single block
 * T(1) = HMAC(secret, HkdfLabel || 0x01), cut to @len.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a length or a label out of range.
 */
int ovpn_epoch_expand_label(const u8 secret[OVPN_EPOCH_SECRET_SIZE],
			    const char *label, u8 *out, unsigned int len)
{
	u8 info[2 + 1 + 255 + 1 + 1];
	u8 block[SHA256_DIGEST_SIZE];
	size_t label_len = strlen(label);
	u8 *p = info;

	if (!len || len > SHA256_DIGEST_SIZE || !label_len ||
	    label_len > OVPN_EPOCH_LABEL_MAX)
		return -EINVAL;

	put_unaligned_be16(len, p);
	p += 2;
	*p++ = OVPN_EPOCH_LABEL_PREFIX_LEN + label_len;
	memcpy(p, OVPN_EPOCH_LABEL_PREFIX, OVPN_EPOCH_LABEL_PREFIX_LEN);
	p += OVPN_EPOCH_LABEL_PREFIX_LEN;
	memcpy(p, label, label_len);
	p += label_len;
	*p++ = 0;	/* the context's length: no context */
	*p++ = 1;	/* HKDF-Expand's block counter */

	hmac_sha256_usingrawkey(secret, OVPN_EPOCH_SECRET_SIZE, info,
				p - info, block);
	memcpy(out, block, len);
	memzero_explicit(block, sizeof(block));
	return 0;
}

/**
 * ovpn_epoch_advance - move an epoch's secret to the next epoch's
 * @es: the secret, En on entry, E(n+1) on return
 *
 * En is overwritten: no later epoch's secret gives an earlier one back,
 * which is the point of moving on.
 *
 * Context: any; the callers keep it to process context (epoch.h).
 * Return: 0, or -ERANGE when @es is the last epoch's (left unchanged).
 */
int ovpn_epoch_advance(struct ovpn_epoch_secret *es)
{
	u8 next[OVPN_EPOCH_SECRET_SIZE];
	int ret;

	if (es->epoch == OVPN_EPOCH_LAST)
		return -ERANGE;
	ret = ovpn_epoch_expand_label(es->secret, "datakey upd", next,
				      sizeof(next));
	if (ret)
		return ret;
	memcpy(es->secret, next, sizeof(next));
	memzero_explicit(next, sizeof(next));
	es->epoch++;
	return 0;
}

/**
 * ovpn_epoch_data_key - the cipher key and implicit IV of an epoch
 * @es: the epoch's secret
 * @key: where the cipher key goes
 * @key_len: the cipher's key size (16 or 32 for AES-GCM, 32 for
 *	     ChaCha20-Poly1305)
 * @iv: where the implicit IV goes
 *
 * Context: any; the callers keep it to process context (epoch.h).
 * Return: 0, or -EINVAL for a key size above 32 bytes.
 */
int ovpn_epoch_data_key(const struct ovpn_epoch_secret *es, u8 *key,
			unsigned int key_len, u8 iv[OVPN_EPOCH_IV_SIZE])
{
	int ret;

	ret = ovpn_epoch_expand_label(es->secret, "data_key", key, key_len);
	if (ret)
		return ret;
	return ovpn_epoch_expand_label(es->secret, "data_iv", iv,
				       OVPN_EPOCH_IV_SIZE);
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "epoch_kunit.c"
#endif
