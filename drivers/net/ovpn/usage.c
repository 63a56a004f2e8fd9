// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - the AEAD usage limit
 *
 * The slow half of a key's usage account (usage.h): setting it up, and
 * the exact look a packet takes near a threshold.
 */

#include <linux/bitops.h>
#include <linux/cpumask.h>
#include <linux/limits.h>

#include "usage.h"

/* How far the shared count may lag the true sum: see struct ovpn_usage. */
static u64 ovpn_usage_slack(void)
{
	return (u64)num_possible_cpus() * OVPN_USAGE_BATCH;
}

/* The trigger of @threshold: the threshold less the slack, 0 at least. */
static u64 ovpn_usage_trigger(u64 threshold)
{
	u64 slack = ovpn_usage_slack();

	return threshold > slack ? threshold - slack : 0;
}

/**
 * ovpn_usage_init - open the account of one direction of a new key
 * @usage: the account, zeroed
 * @alg: the key's cipher
 * @enforce: true for the sending direction (see struct ovpn_usage)
 *
 * Context: process (allocates the per-CPU counts).
 * Return: 0, or -ENOMEM.
 */
int ovpn_usage_init(struct ovpn_usage *usage, enum ovpn_cipher_alg alg,
		    bool enforce)
{
	int ret;

	/* Only AES-GCM has a limit; openvpn sets none for ChaCha20. */
	if (alg != OVPN_CIPHER_ALG_AES_GCM)
		return 0;

	ret = percpu_counter_init(&usage->blocks, 0, GFP_KERNEL);
	if (ret)
		return ret;
	usage->trigger =
		ovpn_usage_trigger(OVPN_USAGE_RENEG(OVPN_USAGE_LIMIT_AES_GCM));
	if (enforce)
		__set_bit(OVPN_USAGE_ENFORCE, &usage->flags);
	__set_bit(OVPN_USAGE_COUNTING, &usage->flags);
	return 0;
}

/**
 * ovpn_usage_destroy - close an account
 * @usage: the account; one ovpn_usage_init() failed on, or never called
 *	   for, is fine too
 *
 * Context: process, once no packet can use the key any more.
 */
void ovpn_usage_destroy(struct ovpn_usage *usage)
{
	percpu_counter_destroy(&usage->blocks);
}

/**
 * ovpn_usage_slow - the exact look at an account near a threshold
 * @usage: the account, to which ovpn_usage_add() just added a packet
 * @pktid: that packet's id
 *
 * The sum of the CPUs' counts is exact for every packet added before it
 * began; a packet racing with it on another CPU is judged by its own
 * call.  openvpn's test is "q + s > threshold", with q the highest packet
 * id: on the receiving side a reordered packet passes a lower id, and
 * the next packet in order makes up for it.
 *
 * No packet crosses both thresholds: they lie 2^33 blocks apart, and a
 * packet holds at most 4096.
 *
 * Context: any; takes the counter's raw spinlock.
 * Return: the verdict; see enum ovpn_usage_verdict.
 */
enum ovpn_usage_verdict ovpn_usage_slow(struct ovpn_usage *usage, u64 pktid)
{
	u64 used = percpu_counter_sum_positive(&usage->blocks) + pktid;
	bool enforce = test_bit(OVPN_USAGE_ENFORCE, &usage->flags);

	if (enforce && used > OVPN_USAGE_LIMIT_AES_GCM)
		return OVPN_USAGE_SPENT;
	if (used <= OVPN_USAGE_RENEG(OVPN_USAGE_LIMIT_AES_GCM) ||
	    test_and_set_bit(OVPN_USAGE_RENEG_SAID, &usage->flags))
		return OVPN_USAGE_OK;

	/*
	 * Said once.  The receiving side has nothing left to watch: without
	 * this, every later packet would take the slow look.
	 */
	WRITE_ONCE(usage->trigger,
		   enforce ? ovpn_usage_trigger(OVPN_USAGE_LIMIT_AES_GCM) :
			     U64_MAX);
	return OVPN_USAGE_RENEG;
}

#if IS_ENABLED(CONFIG_OVPN_KUNIT_TEST)
#include "usage_kunit.c"
#endif
