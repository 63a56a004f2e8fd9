// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - transport sockets
 *
 * See socket.h for the lifetime of struct ovpn_socket.
 */

#include <linux/in.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/sock.h>

#include "main.h"
#include "ovpnpriv.h"
#include "socket.h"
#include "tcp.h"
#include "udp.h"

/* A released attachment's teardown (see ovpn_socket_release()). */
static void ovpn_socket_teardown(struct llist_node *node)
{
	struct ovpn_socket *ovpn_sock = llist_entry(node, struct ovpn_socket,
						    release_entry);

	if (ovpn_socket_is_tcp(ovpn_sock))
		ovpn_tcp_release(ovpn_sock);
	sock_put(ovpn_sock->sk);
	netdev_put(ovpn_sock->ovpn->dev, NULL);
	percpu_ref_exit(&ovpn_sock->ref);
	kfree(ovpn_sock);
}

static struct ovpn_release_batch ovpn_sockets_released =
	OVPN_RELEASE_BATCH_INIT(ovpn_sockets_released, ovpn_socket_teardown);

/*
 * The last reference is gone: the socket is detached and no peer uses it.
 * This may run in any context, so the sleeping part (sock_put() may end
 * up releasing the socket) is left to the workqueue, after a grace period
 * that lets RX readers of the old sk_user_data finish.  Every TCP peer
 * has an attachment of its own: they go in batches, as peers do.
 */
static void ovpn_socket_release(struct percpu_ref *ref)
{
	struct ovpn_socket *ovpn_sock = container_of(ref, struct ovpn_socket,
						     ref);

	ovpn_release_batch_add(&ovpn_sockets_released,
			       &ovpn_sock->release_entry);
}

static bool ovpn_sk_is_inet(const struct sock *sk)
{
	return sk && (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

/**
 * ovpn_sk_is_udp - can a socket be a UDP transport?
 * @sk: the socket, or NULL
 *
 * Return: true for a UDP socket over IPv4 or IPv6.
 */
bool ovpn_sk_is_udp(const struct sock *sk)
{
	return ovpn_sk_is_inet(sk) && sk->sk_type == SOCK_DGRAM &&
	       sk->sk_protocol == IPPROTO_UDP;
}

/**
 * ovpn_sk_is_tcp - can a socket be a TCP transport?
 * @sk: the socket, or NULL
 *
 * Return: true for a TCP socket over IPv4 or IPv6.
 */
bool ovpn_sk_is_tcp(const struct sock *sk)
{
	return ovpn_sk_is_inet(sk) && sk->sk_type == SOCK_STREAM &&
	       sk->sk_protocol == IPPROTO_TCP;
}

/**
 * ovpn_socket_get - the attachment of a socket, with a live reference
 * @sk: a socket on which one of our hooks runs, which makes sk_user_data
 *	ours or NULL
 *
 * The caller puts the reference with ovpn_socket_put().
 *
 * Context: any.
 * Return: the attachment, or NULL once it is being detached.
 */
struct ovpn_socket *ovpn_socket_get(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (ovpn_sock && !percpu_ref_tryget_live_rcu(&ovpn_sock->ref))
		ovpn_sock = NULL;
	rcu_read_unlock();
	return ovpn_sock;
}

/* Reuse an attachment of @sk to @ovpn; lock_sock() is held. */
static struct ovpn_socket *ovpn_socket_reuse(struct ovpn_priv *ovpn,
					     struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = ovpn_udp_sock_from_sk(sk);
	if (!ovpn_sock) {
		/* Somebody else's encapsulation or user data: not ours. */
		if (rcu_access_pointer(__sk_user_data(sk)) ||
		    READ_ONCE(udp_sk(sk)->encap_type))
			ovpn_sock = ERR_PTR(-EBUSY);
	} else if (ovpn_sock->ovpn != ovpn) {
		ovpn_sock = ERR_PTR(-EBUSY);
	} else if (!percpu_ref_tryget_live_rcu(&ovpn_sock->ref)) {
		/* Being detached: the socket is closing. */
		ovpn_sock = ERR_PTR(-EBUSY);
	}
	rcu_read_unlock();

	return ovpn_sock;
}

/* A new attachment of @sk, not published yet. */
static struct ovpn_socket *ovpn_socket_new(struct ovpn_priv *ovpn,
					   struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;
	int ret;

	ovpn_sock = kzalloc_obj(*ovpn_sock, GFP_KERNEL);
	if (!ovpn_sock)
		return ERR_PTR(-ENOMEM);
	ovpn_sock->ovpn = ovpn;
	ovpn_sock->sk = sk;
	INIT_LIST_HEAD(&ovpn_sock->node);
	ret = percpu_ref_init(&ovpn_sock->ref, ovpn_socket_release, 0,
			      GFP_KERNEL);
	if (ret) {
		kfree(ovpn_sock);
		return ERR_PTR(ret);
	}
	return ovpn_sock;
}

/* Free an attachment that was never published; nobody else saw it. */
static void ovpn_socket_free_new(struct ovpn_socket *ovpn_sock)
{
	percpu_ref_exit(&ovpn_sock->ref);
	kfree(ovpn_sock);
}

/*
 * List a new attachment on its device and give it the references it
 * holds; the caller's peer gets one reference on top of the attachment's
 * own.  Return: 0, or -ENODEV if the device is being deleted.
 */
static int ovpn_socket_publish(struct ovpn_socket *ovpn_sock)
{
	struct ovpn_priv *ovpn = ovpn_sock->ovpn;

	spin_lock_bh(&ovpn->lock);
	if (ovpn->dying) {
		spin_unlock_bh(&ovpn->lock);
		return -ENODEV;
	}
	list_add(&ovpn_sock->node, &ovpn->sockets);
	spin_unlock_bh(&ovpn->lock);

	/*
	 * Both held until the teardown: the socket because peers send
	 * through it, the device because encap_destroy may still reach it
	 * through a live attachment while it is being deleted.
	 */
	sock_hold(ovpn_sock->sk);
	netdev_hold(ovpn->dev, NULL, GFP_KERNEL);
	percpu_ref_get(&ovpn_sock->ref);
	return 0;
}

/* A UDP socket: shared by the peers of one device. */
static struct ovpn_socket *ovpn_socket_attach_udp(struct ovpn_priv *ovpn,
						  struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;
	int ret;

	/* Serializes attach and detach of this socket. */
	lock_sock(sk);
	ovpn_sock = ovpn_socket_reuse(ovpn, sk);
	if (ovpn_sock)
		goto out;

	ovpn_sock = ovpn_socket_new(ovpn, sk);
	if (IS_ERR(ovpn_sock))
		goto out;
	ret = ovpn_socket_publish(ovpn_sock);
	if (ret) {
		ovpn_socket_free_new(ovpn_sock);
		ovpn_sock = ERR_PTR(ret);
		goto out;
	}
	ovpn_udp_setup(ovpn_sock);
out:
	if (!IS_ERR(ovpn_sock))
		ovpn_sock->peers++;
	release_sock(sk);
	return ovpn_sock;
}

/* A TCP socket: reserved for @peer alone. */
static struct ovpn_socket *ovpn_socket_attach_tcp(struct ovpn_priv *ovpn,
						  struct sock *sk,
						  struct ovpn_peer *peer)
{
	struct ovpn_socket *ovpn_sock;
	int ret;

	lock_sock(sk);
	ovpn_sock = ovpn_socket_new(ovpn, sk);
	if (IS_ERR(ovpn_sock))
		goto out;
	ret = ovpn_tcp_attach(ovpn_sock, peer);
	if (!ret) {
		ret = ovpn_socket_publish(ovpn_sock);
		/* Not started: nothing but the claim to take back. */
		if (ret)
			rcu_assign_sk_user_data(sk, NULL);
	}
	if (ret) {
		ovpn_socket_free_new(ovpn_sock);
		ovpn_sock = ERR_PTR(ret);
	}
out:
	release_sock(sk);
	return ovpn_sock;
}

/**
 * ovpn_socket_attach - attach a userspace socket to an ovpn device
 * @ovpn: the device
 * @sock: the socket, which the caller holds
 * @peer: the peer that will use it, not published yet
 *
 * A UDP socket already attached to @ovpn is shared: every peer gets its
 * own reference on the same attachment.  A TCP socket is reserved for
 * @peer; ovpn_socket_start() puts it to work once @peer is published.
 *
 * Context: process context, may sleep.
 * Return: the attachment, with one reference for @peer, or
 * ERR_PTR(-EPROTONOSUPPORT) for a socket that is neither UDP nor TCP,
 * -ENOTCONN for a TCP socket that is not connected, -EBUSY if the socket
 * belongs to another peer, device or user, -ENODEV if the device is being
 * deleted, -ENOMEM.
 */
struct ovpn_socket *ovpn_socket_attach(struct ovpn_priv *ovpn,
				       struct socket *sock,
				       struct ovpn_peer *peer)
{
	if (ovpn_sk_is_udp(sock->sk))
		return ovpn_socket_attach_udp(ovpn, sock->sk);
	if (ovpn_sk_is_tcp(sock->sk))
		return ovpn_socket_attach_tcp(ovpn, sock->sk, peer);
	return ERR_PTR(-EPROTONOSUPPORT);
}

/**
 * ovpn_socket_start - let the socket carry its peer's packets
 * @ovpn_sock: the attachment; the caller holds the peer that uses it
 *
 * Called once the peer is published, so that no record is handled for a
 * peer nobody can find yet.  UDP sockets work from the attach on.
 *
 * Context: process context.
 */
void ovpn_socket_start(struct ovpn_socket *ovpn_sock)
{
	if (ovpn_socket_is_tcp(ovpn_sock))
		ovpn_tcp_start(ovpn_sock);
}

/*
 * Take an attachment off its device's list.  Return: true for the one
 * caller that did, which must detach it.
 */
static bool ovpn_socket_unlist(struct ovpn_socket *ovpn_sock)
{
	struct ovpn_priv *ovpn = ovpn_sock->ovpn;
	bool mine;

	spin_lock_bh(&ovpn->lock);
	mine = !list_empty(&ovpn_sock->node);
	list_del_init(&ovpn_sock->node);
	spin_unlock_bh(&ovpn->lock);
	return mine;
}

/**
 * ovpn_socket_detach - undo an attachment, exactly once
 * @ovpn_sock: the attachment
 * @sk_dying: the UDP socket is being destroyed (encap_destroy): its
 *	      fields are not restored and its lock is not taken
 *
 * The caller that takes the attachment off the device's list is the one
 * that detaches it and kills its initial reference; any other caller
 * finds it already off the list and does nothing.
 *
 * Context: process context, may sleep (lock_sock()).
 */
void ovpn_socket_detach(struct ovpn_socket *ovpn_sock, bool sk_dying)
{
	struct sock *sk = ovpn_sock->sk;

	if (!ovpn_socket_unlist(ovpn_sock))
		return;

	if (ovpn_socket_is_tcp(ovpn_sock)) {
		ovpn_tcp_detach(ovpn_sock);
	} else if (sk_dying) {
		rcu_assign_sk_user_data(sk, NULL);
	} else {
		lock_sock(sk);
		ovpn_udp_undo(ovpn_sock);
		release_sock(sk);
	}
	percpu_ref_kill(&ovpn_sock->ref);
}

/*
 * A UDP attachment's last peer is gone: give the socket back, so that
 * what arrives on it reaches userspace again and another device may
 * attach it.  The count and the undo share the socket lock with
 * ovpn_socket_attach_udp(): a peer attaching meanwhile either joins
 * before the count reaches zero or finds the socket plain.
 */
static void ovpn_socket_leave_udp(struct ovpn_socket *ovpn_sock)
{
	struct sock *sk = ovpn_sock->sk;
	bool detached = false;

	lock_sock(sk);
	if (!--ovpn_sock->peers && ovpn_socket_unlist(ovpn_sock)) {
		ovpn_udp_undo(ovpn_sock);
		detached = true;
	}
	release_sock(sk);
	if (detached)
		percpu_ref_kill(&ovpn_sock->ref);
}

/**
 * ovpn_socket_release_peer - return a released peer's socket reference
 * @ovpn_sock: the socket the peer used
 *
 * A socket is detached with the last peer it served, before that peer is
 * freed: a TCP socket served it alone (its hooks use the peer without a
 * reference), a UDP socket once its other peers are gone too.
 *
 * Context: process context (the peer's teardown).
 */
void ovpn_socket_release_peer(struct ovpn_socket *ovpn_sock)
{
	if (ovpn_socket_is_tcp(ovpn_sock))
		ovpn_socket_detach(ovpn_sock, false);
	else
		ovpn_socket_leave_udp(ovpn_sock);
	ovpn_socket_put(ovpn_sock);
}

/**
 * ovpn_sockets_detach_all - detach every socket of a device being deleted
 * @ovpn: the device
 *
 * Context: process context, after ovpn->dying was set.
 */
void ovpn_sockets_detach_all(struct ovpn_priv *ovpn)
{
	struct ovpn_socket *ovpn_sock;

	for (;;) {
		spin_lock_bh(&ovpn->lock);
		ovpn_sock = list_first_entry_or_null(&ovpn->sockets,
						     struct ovpn_socket, node);
		/* Keeps it alive until ovpn_socket_detach() killed it. */
		if (ovpn_sock)
			percpu_ref_get(&ovpn_sock->ref);
		spin_unlock_bh(&ovpn->lock);
		if (!ovpn_sock)
			break;
		ovpn_socket_detach(ovpn_sock, false);
		ovpn_socket_put(ovpn_sock);
	}
}
