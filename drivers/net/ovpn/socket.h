/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - transport sockets
 *
 * struct ovpn_socket ties a userspace UDP or TCP socket to an ovpn device:
 * it is published in the socket's sk_user_data (marked by the UDP encap
 * type, or by the TCP hooks being ours, so a socket owned by anybody else
 * is never mistaken for ours) and listed in the device's sockets.  A UDP
 * socket may serve many peers; a TCP socket serves exactly one.
 *
 * Lifetime:
 * - created by ovpn_socket_attach() for the first peer that uses the
 *   socket, percpu_ref initialised last; its initial reference belongs to
 *   the attachment itself;
 * - every peer using it holds one reference for its whole life, taken with
 *   percpu_ref_tryget_live() when a later peer reuses the attachment; the
 *   data path borrows the socket through the peer and takes none;
 * - detached exactly once, by whoever removes it from the device's list
 *   under ovpn->lock: when userspace closes the socket (encap_destroy, or
 *   the TCP close hook), when the device goes away, or when its last peer
 *   is released (a TCP socket's one peer; for UDP, @peers drops to zero
 *   under the socket lock, which a new peer's attach takes too, so no
 *   peer ever joins an attachment being detached); the encapsulation or
 *   the hooks are undone, then the initial reference is killed;
 * - released after the last peer put it: a batched teardown on the
 *   module workqueue, a grace period later (struct ovpn_release_batch),
 *   drops the struct sock reference, runs percpu_ref_exit() and frees
 *   it.
 */

#ifndef _NET_OVPN_SOCKET_H_
#define _NET_OVPN_SOCKET_H_

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/net.h>
#include <linux/percpu-refcount.h>
#include <net/sock.h>

#include "tcp.h"

struct ovpn_peer;
struct ovpn_priv;

/**
 * struct ovpn_socket - a transport socket attached to an ovpn device
 * @ovpn: the device whose peers use the socket
 * @sk: the socket, held with sock_hold() until the teardown
 * @ref: the attachment's reference and one per peer; see above
 * @node: entry in the device's list of attached sockets (ovpn->lock)
 * @peers: how many peers a UDP attachment serves (the socket's lock)
 * @release_entry: link in the batch of released attachments
 * @tcp: stream state of a TCP socket (unused for UDP)
 */
struct ovpn_socket {
	struct ovpn_priv *ovpn;
	struct sock *sk;
	struct percpu_ref ref;
	struct list_head node;
	unsigned int peers;
	struct llist_node release_entry;
	struct ovpn_tcp_sock tcp;
};

struct ovpn_socket *ovpn_socket_attach(struct ovpn_priv *ovpn,
				       struct socket *sock,
				       struct ovpn_peer *peer);
void ovpn_socket_start(struct ovpn_socket *ovpn_sock);
void ovpn_socket_detach(struct ovpn_socket *ovpn_sock, bool sk_dying);
void ovpn_socket_release_peer(struct ovpn_socket *ovpn_sock);
void ovpn_sockets_detach_all(struct ovpn_priv *ovpn);
struct ovpn_socket *ovpn_socket_get(struct sock *sk);
bool ovpn_sk_is_udp(const struct sock *sk);
bool ovpn_sk_is_tcp(const struct sock *sk);

/**
 * ovpn_socket_is_tcp - tell a TCP attachment from a UDP one
 * @ovpn_sock: the attachment
 *
 * Return: true for TCP.
 */
static inline bool ovpn_socket_is_tcp(const struct ovpn_socket *ovpn_sock)
{
	return ovpn_sock->sk->sk_protocol == IPPROTO_TCP;
}

/**
 * ovpn_socket_put - return a peer's reference on its socket
 * @ovpn_sock: the socket
 */
static inline void ovpn_socket_put(struct ovpn_socket *ovpn_sock)
{
	percpu_ref_put(&ovpn_sock->ref);
}

#endif /* _NET_OVPN_SOCKET_H_ */
