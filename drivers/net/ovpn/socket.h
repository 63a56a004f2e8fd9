/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - transport sockets
 *
 * struct ovpn_socket ties a userspace UDP socket to an ovpn device: it is
 * published in the socket's sk_user_data (marked by the UDP encap type, so
 * a socket owned by anybody else is never mistaken for ours) and listed in
 * the device's sockets.
 *
 * Lifetime:
 * - created by ovpn_socket_attach() for the first peer that uses the
 *   socket, percpu_ref initialised last; its initial reference belongs to
 *   the attachment itself;
 * - every peer using it holds one reference for its whole life, taken with
 *   percpu_ref_tryget_live() when a later peer reuses the attachment; the
 *   data path borrows the socket through the peer and takes none;
 * - detached exactly once, by whoever removes it from the device's list
 *   under ovpn->lock: when userspace closes the socket (encap_destroy) or
 *   the device goes away; the encapsulation is undone, then the initial
 *   reference is killed;
 * - released after the last peer put it: an RCU-deferred work on the
 *   module workqueue drops the struct sock reference, runs
 *   percpu_ref_exit() and frees it.
 */

#ifndef _NET_OVPN_SOCKET_H_
#define _NET_OVPN_SOCKET_H_

#include <linux/list.h>
#include <linux/net.h>
#include <linux/percpu-refcount.h>
#include <linux/workqueue.h>
#include <net/sock.h>

struct ovpn_priv;

/**
 * struct ovpn_socket - a transport socket attached to an ovpn device
 * @ovpn: the device whose peers use the socket
 * @sk: the socket, held with sock_hold() until the release work
 * @ref: the attachment's reference and one per peer; see above
 * @node: entry in the device's list of attached sockets (ovpn->lock)
 * @release_work: deferred release
 */
struct ovpn_socket {
	struct ovpn_priv *ovpn;
	struct sock *sk;
	struct percpu_ref ref;
	struct list_head node;
	struct rcu_work release_work;
};

struct ovpn_socket *ovpn_socket_attach(struct ovpn_priv *ovpn,
				       struct socket *sock);
void ovpn_socket_detach(struct ovpn_socket *ovpn_sock, bool sk_dying);
void ovpn_sockets_detach_all(struct ovpn_priv *ovpn);

/**
 * ovpn_socket_put - return a peer's reference on its socket
 * @ovpn_sock: the socket
 */
static inline void ovpn_socket_put(struct ovpn_socket *ovpn_sock)
{
	percpu_ref_put(&ovpn_sock->ref);
}

#endif /* _NET_OVPN_SOCKET_H_ */
