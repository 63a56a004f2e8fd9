/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - TCP transport
 *
 * Over TCP, OpenVPN packets travel as records: a 2-byte big-endian length,
 * then the packet.  A TCP socket carries exactly one peer.  Once attached,
 * data records are decrypted in the kernel and every other record (the
 * control channel) is queued, length included, for the userspace owner of
 * the socket, which keeps using it as before through replaced socket
 * operations: one record per recv(), one framed record per send().
 *
 * Lifetime (on top of the rules of struct ovpn_socket in socket.h):
 * - attached for one peer, published in sk_user_data at once so that no
 *   other peer or device can take the socket; the socket's hooks are only
 *   installed by ovpn_tcp_start() once the peer is published;
 * - @peer is not a reference: the peer detaches the socket from its own
 *   teardown and is freed a grace period later, so every hook (which
 *   runs under the socket lock, or under RCU having found the attachment
 *   live) sees a valid peer, if not a live one;
 * - detached when its peer is released, when userspace closes the socket
 *   or when the device goes away, whichever comes first (ovpn->lock picks
 *   one); detaching puts the original hooks back under the socket lock,
 *   so no hook of ours runs afterwards.
 */

#ifndef _NET_OVPN_TCP_H_
#define _NET_OVPN_TCP_H_

#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/strparser.h>
#include <uapi/linux/ovpn.h>

#include "flowq.h"

struct ovpn_peer;
struct ovpn_socket;

/**
 * enum ovpn_tcp_state - progress of an attachment (changed under the
 *			 socket lock)
 * @OVPN_TCP_NEW: reserved for a peer, hooks not installed yet
 * @OVPN_TCP_ACTIVE: hooks installed, records flow
 * @OVPN_TCP_DETACHED: hooks removed (if they ever were), for good
 */
enum ovpn_tcp_state {
	OVPN_TCP_NEW,
	OVPN_TCP_ACTIVE,
	OVPN_TCP_DETACHED,
};

/**
 * struct ovpn_tcp_sock - TCP part of a struct ovpn_socket
 * @peer: the one peer of the socket; not a reference, see above
 * @state: see enum ovpn_tcp_state (socket lock)
 * @flags: OVPN_TCP_* bits (atomic bitops)
 * @del_reason: why the peer is being removed by @del_work
 * @strp: record parser of the receive stream
 * @user_queue: control records waiting for userspace's recv()
 * @tx_queue: framed data records waiting for the socket, per tunnelled
 *	      flow (the socket's spinlock)
 * @tx_ctrl: the control record userspace sent, written before the next
 *	     data record
 * @tx_cur: record being written to the socket (socket's spinlock)
 * @tx_off: bytes of @tx_cur already written (socket's spinlock)
 * @tx_cur_ctrl: @tx_cur is userspace's control record (socket's spinlock)
 * @saved_data_ready: the socket's own sk_data_ready
 * @saved_write_space: the socket's own sk_write_space
 * @saved_state_change: the socket's own sk_state_change
 * @saved_allocation: the socket's own sk_allocation
 * @saved_use_task_frag: the socket's own sk_use_task_frag
 * @tx_work: writes the rest once the send buffer has room, in process
 *	     context
 * @del_work: removes the peer in process context after a stream error
 *	      or the end of the stream
 */
struct ovpn_tcp_sock {
	struct ovpn_peer *peer;
	enum ovpn_tcp_state state;
	unsigned long flags;
	enum ovpn_del_peer_reason del_reason;
	struct strparser strp;
	struct sk_buff_head user_queue;
	struct ovpn_flowq tx_queue;
	struct sk_buff *tx_ctrl;
	struct sk_buff *tx_cur;
	unsigned int tx_off;
	bool tx_cur_ctrl;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	gfp_t saved_allocation;
	bool saved_use_task_frag;
	struct work_struct tx_work;
	struct work_struct del_work;
};

void ovpn_tcp_init(void);
void ovpn_tcp_exit(void);
int ovpn_tcp_attach(struct ovpn_socket *ovpn_sock, struct ovpn_peer *peer);
void ovpn_tcp_start(struct ovpn_socket *ovpn_sock);
void ovpn_tcp_detach(struct ovpn_socket *ovpn_sock);
void ovpn_tcp_release(struct ovpn_socket *ovpn_sock);
void ovpn_tcp_send_skb(struct ovpn_peer *peer, struct sk_buff *skb);
unsigned int ovpn_tcp_room(struct ovpn_peer *peer, unsigned int cap);

#endif /* _NET_OVPN_TCP_H_ */
