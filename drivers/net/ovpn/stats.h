/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - per-peer statistics
 *
 * Each peer counts what it sends and receives at two layers: "vpn" (the
 * plaintext packets the device exchanges with the stack) and "link" (the
 * OpenVPN packets exchanged with the transport).  The counters are per-CPU
 * and updated under u64_stats_sync, so the data path never writes a cache
 * line shared between CPUs; readers sum them over all CPUs.
 *
 * Writers run with BH disabled (the data path; an async crypto completion
 * and process context disable it themselves), which keeps them on their
 * CPU.  Without PREEMPT_RT that also makes them the CPU's only writer.
 * With PREEMPT_RT, local_bh_disable() does not serialize a CPU's tasks
 * (unless CONFIG_PREEMPT_RT_NEEDS_BH_LOCK): one writer may preempt
 * another, and u64_stats makes that safe by itself, each update of a
 * 64-bit counter being one local64 operation, and u64_stats_update_begin()
 * disabling preemption where the counters need a seqcount (32-bit).  The
 * device's dstats counters, which the core updates the same way, follow
 * the same rule.
 */

#ifndef _NET_OVPN_STATS_H_
#define _NET_OVPN_STATS_H_

#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>

/**
 * struct ovpn_pcpu_stats - one CPU's share of a peer's counters
 * @syncp: makes the 64-bit counters readable consistently on 32-bit hosts
 * @vpn_rx_bytes: plaintext bytes delivered to the device
 * @vpn_rx_packets: plaintext packets delivered to the device
 * @vpn_tx_bytes: plaintext bytes taken from the device
 * @vpn_tx_packets: plaintext packets taken from the device
 * @link_rx_bytes: OpenVPN packet bytes received from the transport
 * @link_rx_packets: OpenVPN packets received from the transport
 * @link_tx_bytes: OpenVPN packet bytes handed to the transport
 * @link_tx_packets: OpenVPN packets handed to the transport
 */
struct ovpn_pcpu_stats {
	struct u64_stats_sync syncp;
	u64_stats_t vpn_rx_bytes;
	u64_stats_t vpn_rx_packets;
	u64_stats_t vpn_tx_bytes;
	u64_stats_t vpn_tx_packets;
	u64_stats_t link_rx_bytes;
	u64_stats_t link_rx_packets;
	u64_stats_t link_tx_bytes;
	u64_stats_t link_tx_packets;
};

/**
 * struct ovpn_peer_stats - a peer's counters summed over all CPUs
 * @vpn_rx_bytes: see struct ovpn_pcpu_stats
 * @vpn_rx_packets: see struct ovpn_pcpu_stats
 * @vpn_tx_bytes: see struct ovpn_pcpu_stats
 * @vpn_tx_packets: see struct ovpn_pcpu_stats
 * @link_rx_bytes: see struct ovpn_pcpu_stats
 * @link_rx_packets: see struct ovpn_pcpu_stats
 * @link_tx_bytes: see struct ovpn_pcpu_stats
 * @link_tx_packets: see struct ovpn_pcpu_stats
 */
struct ovpn_peer_stats {
	u64 vpn_rx_bytes;
	u64 vpn_rx_packets;
	u64 vpn_tx_bytes;
	u64 vpn_tx_packets;
	u64 link_rx_bytes;
	u64 link_rx_packets;
	u64 link_tx_bytes;
	u64 link_tx_packets;
};

/* Add one packet of @len bytes to a counter pair of this CPU. */
#define ovpn_stats_add(pcpu, layer, dir, len)				\
	do {								\
		struct ovpn_pcpu_stats *__s = this_cpu_ptr(pcpu);	\
									\
		u64_stats_update_begin(&__s->syncp);			\
		u64_stats_add(&__s->layer##_##dir##_bytes, (len));	\
		u64_stats_inc(&__s->layer##_##dir##_packets);		\
		u64_stats_update_end(&__s->syncp);			\
	} while (0)

void ovpn_stats_read(struct ovpn_pcpu_stats __percpu *pcpu,
		     struct ovpn_peer_stats *sum);

#endif /* _NET_OVPN_STATS_H_ */
