/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - UDP transport
 *
 * Receive: the socket's encap_rcv hook takes DATA_V2 packets for the
 * kernel and lets every other OpenVPN packet continue to the userspace
 * socket untouched.  Send: UDP tunnel transmission with the peer's route
 * cache and the socket's mark.
 */

#ifndef _NET_OVPN_UDP_H_
#define _NET_OVPN_UDP_H_

#include <linux/skbuff.h>
#include <linux/socket.h>

struct ovpn_peer;
struct ovpn_priv;
struct ovpn_socket;
struct sock;

int ovpn_udp_setup(struct ovpn_socket *ovpn_sock);
void ovpn_udp_undo(struct ovpn_socket *ovpn_sock);
struct ovpn_socket *ovpn_udp_sock_from_sk(struct sock *sk);
void ovpn_udp_send_skb(struct ovpn_peer *peer, struct sk_buff *skb);
bool ovpn_udp_reaches(const struct sock *sk, sa_family_t family);
unsigned int ovpn_udp_room(struct ovpn_peer *peer, unsigned int cap);

#endif /* _NET_OVPN_UDP_H_ */
