// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - per-peer statistics
 */

#include "stats.h"

/* One CPU's counters, consistent with each other. */
static void ovpn_stats_fetch(const struct ovpn_pcpu_stats *s,
			     struct ovpn_peer_stats *one)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		one->vpn_rx_bytes = u64_stats_read(&s->vpn_rx_bytes);
		one->vpn_rx_packets = u64_stats_read(&s->vpn_rx_packets);
		one->vpn_tx_bytes = u64_stats_read(&s->vpn_tx_bytes);
		one->vpn_tx_packets = u64_stats_read(&s->vpn_tx_packets);
		one->link_rx_bytes = u64_stats_read(&s->link_rx_bytes);
		one->link_rx_packets = u64_stats_read(&s->link_rx_packets);
		one->link_tx_bytes = u64_stats_read(&s->link_tx_bytes);
		one->link_tx_packets = u64_stats_read(&s->link_tx_packets);
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

/**
 * ovpn_stats_read - sum a peer's per-CPU counters
 * @pcpu: the peer's per-CPU counters
 * @sum: receives the totals
 *
 * Context: any; the totals are a consistent snapshot per CPU, not across
 * CPUs, which is all a statistics reader needs.
 */
void ovpn_stats_read(struct ovpn_pcpu_stats __percpu *pcpu,
		     struct ovpn_peer_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct ovpn_pcpu_stats *s = per_cpu_ptr(pcpu, cpu);
		struct ovpn_peer_stats one;

		ovpn_stats_fetch(s, &one);
		sum->vpn_rx_bytes += one.vpn_rx_bytes;
		sum->vpn_rx_packets += one.vpn_rx_packets;
		sum->vpn_tx_bytes += one.vpn_tx_bytes;
		sum->vpn_tx_packets += one.vpn_tx_packets;
		sum->link_rx_bytes += one.link_rx_bytes;
		sum->link_rx_packets += one.link_rx_packets;
		sum->link_tx_bytes += one.link_tx_bytes;
		sum->link_tx_packets += one.link_tx_packets;
	}
}
