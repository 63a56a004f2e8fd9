// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - TCP transport
 *
 * See tcp.h for the record format and the lifetime of an attachment.
 *
 * RX: the socket's sk_data_ready feeds a strparser, which cuts the stream
 * into records.  Each record is copied into an skb of its own (a record
 * may start anywhere in a segment and span several), so the decryption
 * and the stack above see an aligned, linear packet.
 *
 * TX: records go through a short queue under the socket's spinlock.  The
 * context that encrypted a record writes the queue at once if no process
 * owns the socket; otherwise the owner writes it as it lets the socket go
 * (our release_cb), so a record never waits for a context switch.  What
 * the send buffer cannot take waits for sk_write_space, which hands the
 * rest to a work item: writing from inside TCP's own receive path would
 * re-enter it.  Only the spinlock holder writes, and a record that only
 * partly fits is finished before the next one starts, so records never
 * interleave on the stream.
 *
 * Queueing: the send buffer autotunes to megabytes, and on a path slower
 * than the sender every byte it holds unsent delays every tunnelled flow,
 * a ping as much as a bulk transfer, while hiding the congestion from
 * them.  So the bytes waiting unsent, in the buffer and in our queue
 * while the socket takes no more, are bounded by a few milliseconds of
 * what the connection sends (ovpn_tcp_unsent_max()); past that a record
 * is dropped and counted, which the tunnelled flows' congestion control
 * answers.  While the socket would take more, records only wait for its
 * owner to let it go: a burst, bounded by a count.
 *
 * Fairness: the queue is one per tunnelled flow, served in turn, and the
 * record dropped is the oldest of the flow holding the most bytes
 * (flowq.h).  With one tail-drop queue, four TCP streams through one
 * client shared a shaped path with a Jain index of 0.67 to 0.99 from run
 * to run: whichever flow sent next lost the record.  Only records in our
 * queue can be chosen, the send buffer is one FIFO: so it holds a quarter
 * of the bound, enough to keep TCP sending until it is refilled, and our
 * queue the rest.  With half in each, the per-flow queue still shared
 * unevenly (Jain 0.69 to 1.00 over 5 runs); with a quarter, 0.91 to 1.00
 * (ovpn-performance.rst).  Upstream's driver
 * keeps one record outside the socket, drops whatever comes while it is
 * pending, and leaves the send buffer unbounded; WireGuard has no stream
 * transport, and its per-peer queue of packets waiting for a handshake
 * drops the oldest.
 */

#include <linux/poll.h>
#include <linux/skbuff.h>
#include <linux/srcu.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <net/inet_common.h>
#include <net/inet_connection_sock.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <net/transp_v6.h>

#include "io.h"
#include "main.h"
#include "ovpnpriv.h"
#include "peer.h"
#include "proto.h"
#include "socket.h"
#include "tcp.h"

/* The 2-byte length in front of every record. */
#define OVPN_TCP_LEN_SIZE	sizeof(__be16)

/*
 * The largest packet a peer can send us: a data packet carrying an inner
 * packet as large as the device MTU may ever be.  A longer record cannot
 * be OpenVPN's, so the stream is broken.
 */
#define OVPN_TCP_MAX_PACKET	(IP_MAX_MTU - OVPN_HEAD_ROOM + \
				 OVPN_DATA_OVERHEAD)

/*
 * The fewest unsent bytes allowed, the send buffer's and our queue's
 * together: enough for a burst of full-sized records in our queue, and
 * for TCP to go on sending (16 KiB) while the work item that refills the
 * buffer gets to run.
 */
#define OVPN_TCP_UNSENT_MIN	(64 * 1024)

/*
 * Records waiting only for the socket's owner (the socket would take
 * them): a burst from every CPU while a process holds the socket.
 */
#define OVPN_TCP_TX_BURST_MAX	256

/*
 * Lockdep subclass of our socket's spinlock when a packet is sent: the
 * packet may come from TCP's receive path of another socket, which holds
 * that socket's spinlock already, as subclass 0 or SINGLE_DEPTH_NESTING.
 */
#define OVPN_TCP_SLOCK_NESTING	(SINGLE_DEPTH_NESTING + 1)

/* ovpn_tcp_sock.flags */
enum {
	/* a control record from userspace is not fully written yet */
	OVPN_TCP_CTRL_PENDING,
	/* the stream cannot be parsed any more: ignore what follows */
	OVPN_TCP_RX_BROKEN,
	/* the peer's removal was scheduled */
	OVPN_TCP_DEL_SCHEDULED,
};

/**
 * struct ovpn_tcp_family - what ovpn replaces in the TCP sockets of one
 *			    address family
 * @prot: the sockets' own struct proto and ovpn's copy of it
 * @prot.orig: the original, tcp_prot or tcpv6_prot
 * @prot.copy: the copy, with ovpn's recvmsg, sendmsg, setsockopt, close,
 *	       disconnect and stream_memory_free
 * @ops: the sockets' own struct proto_ops and ovpn's copy of it
 * @ops.orig: the original, inet_stream_ops or inet6_stream_ops
 * @ops.copy: the copy, with ovpn's poll
 *
 * Made once at module load from the originals the core exports, IPv6's
 * included (ovpn depends on IPv6 when IPv6 is a module, so they are
 * there).  Only a socket that uses exactly those originals is attached:
 * that rules out sockets another layer (a ULP, a BPF sockmap, MPTCP)
 * took over, whose operations would be lost under ovpn's.
 */
struct ovpn_tcp_family {
	struct { struct proto *orig; struct proto copy; } prot;
	struct { const struct proto_ops *orig; struct proto_ops copy; } ops;
};

static struct ovpn_tcp_family ovpn_tcp_families[2] __ro_after_init;

static struct ovpn_tcp_family *ovpn_tcp_family(const struct sock *sk)
{
	return &ovpn_tcp_families[sk->sk_family == AF_INET6];
}

static struct ovpn_tcp_sock *ovpn_tcp_of(struct ovpn_socket *ovpn_sock)
{
	return &ovpn_sock->tcp;
}

/*
 * The most bytes a peer's records may wait unsent, in the send buffer and
 * in our queue together: about 16 ms of what the connection sends now.
 * TCP keeps the pacing rate up to date from its window and RTT whether or
 * not a qdisc paces, and it is all ones (no bound) before the first RTT
 * sample.  Where the CPU rather than the path is the limit, the rate
 * swings with the RTT the CPUs' backlog makes; with 8 ms, several
 * tunnelled streams together lost a fifth of their throughput to the
 * drops (ovpn-performance.rst).  On a slow path the minimum decides.
 */
static u32 ovpn_tcp_unsent_max(const struct sock *sk)
{
	unsigned long rate = READ_ONCE(sk->sk_pacing_rate);

	return clamp_t(unsigned long, rate >> 6, OVPN_TCP_UNSENT_MIN, U32_MAX);
}

/* The send buffer's share of the bound @max: a quarter (see the top). */
static u32 ovpn_tcp_sock_share(u32 max)
{
	return max / 4;
}

/*
 * stream_memory_free: TCP asks before it queues more of a write, and its
 * sk_write_space and poll ask with @wake set, for a margin.  The socket's
 * own answer (buffer space, TCP_NOTSENT_LOWAT) and ours, on the bytes not
 * sent yet, must both be yes.  Read locklessly, as TCP's own is.
 */
static bool ovpn_tcp_stream_memory_free(const struct sock *sk, int wake)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 unsent = READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_nxt);

	if ((unsent << wake) >= ovpn_tcp_sock_share(ovpn_tcp_unsent_max(sk)))
		return false;
	return ovpn_tcp_family(sk)->prot.orig->stream_memory_free(sk, wake);
}

/* Has the other end closed or reset the connection? */
static bool ovpn_tcp_ended(const struct sock *sk)
{
	return (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
	       READ_ONCE(sk->sk_err);
}

/* Wake the tasks that wait on the socket for @events. */
static void ovpn_tcp_wake(struct sock *sk, __poll_t events)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, events);
	rcu_read_unlock();
}

/* Wake a writer that waits for the pending control record to go. */
static void ovpn_tcp_wake_writers(struct sock *sk)
{
	ovpn_tcp_wake(sk, EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
}

/*
 * Remove the peer from process context, with @reason unless an earlier
 * request already chose one.  Called with the peer still published or
 * not; ovpn_peer_del() keeps the first removal.
 */
static void ovpn_tcp_schedule_del(struct ovpn_socket *ovpn_sock,
				  enum ovpn_del_peer_reason reason)
{
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);

	if (test_and_set_bit(OVPN_TCP_DEL_SCHEDULED, &tcp->flags))
		return;
	tcp->del_reason = reason;
	/*
	 * The work holds the peer, whose socket reference keeps the work
	 * item itself alive; a peer already going away needs no removal.
	 */
	if (!percpu_ref_tryget_live(&tcp->peer->ref))
		return;
	if (!queue_work(ovpn_wq, &tcp->del_work))
		ovpn_peer_put(tcp->peer);
}

/* The stream is unusable: a bad record, DATA_V1, a failed send. */
static void ovpn_tcp_del_broken(struct ovpn_socket *ovpn_sock)
{
	ovpn_tcp_schedule_del(ovpn_sock, OVPN_DEL_PEER_REASON_TRANSPORT_ERROR);
}

/* The connection ended (the other end closed or reset it). */
static void ovpn_tcp_del_ended(struct ovpn_socket *ovpn_sock)
{
	ovpn_tcp_schedule_del(ovpn_sock,
			      OVPN_DEL_PEER_REASON_TRANSPORT_DISCONNECT);
}

static void ovpn_tcp_del_work(struct work_struct *work)
{
	struct ovpn_tcp_sock *tcp = container_of(work, struct ovpn_tcp_sock,
						 del_work);
	struct ovpn_peer *peer = tcp->peer;

	ovpn_peer_del(peer, tcp->del_reason);
	/* Last: it may release the peer, its socket and this work item. */
	ovpn_peer_put(peer);
}

/*
 * Queue the TX work, which holds a live reference on the attachment while
 * it is pending.  Once the attachment is detached nothing is sent any
 * more: what is still queued is dropped at its release.
 */
static void ovpn_tcp_kick_tx(struct ovpn_socket *ovpn_sock)
{
	if (!percpu_ref_tryget_live(&ovpn_sock->ref))
		return;
	if (!queue_work(ovpn_wq, &ovpn_tcp_of(ovpn_sock)->tx_work))
		ovpn_socket_put(ovpn_sock);
}

/*
 * Drop every queued record: with the socket's spinlock held, or nobody
 * else left.
 */
static void ovpn_tcp_purge(struct ovpn_tcp_sock *tcp)
{
	kfree_skb(tcp->tx_cur);
	tcp->tx_cur = NULL;
	kfree_skb(xchg(&tcp->tx_ctrl, NULL));
	clear_bit(OVPN_TCP_CTRL_PENDING, &tcp->flags);
	ovpn_flowq_purge(&tcp->tx_queue);
	skb_queue_purge(&tcp->user_queue);
}

/* Is a record waiting for the socket?  Spinlock held. */
static bool ovpn_tcp_tx_pending(struct ovpn_tcp_sock *tcp)
{
	return tcp->tx_cur || READ_ONCE(tcp->tx_ctrl) || tcp->tx_queue.len;
}

/*
 * The next record to write: userspace's control record goes first.  The
 * slot is read before it is emptied: an exchange on every record would be
 * an atomic write for nothing.  Spinlock held.
 */
static struct sk_buff *ovpn_tcp_tx_next(struct ovpn_tcp_sock *tcp)
{
	struct sk_buff *skb = NULL;

	if (READ_ONCE(tcp->tx_ctrl))
		skb = xchg(&tcp->tx_ctrl, NULL);
	tcp->tx_cur_ctrl = !!skb;
	if (!skb)
		skb = ovpn_flowq_dequeue(&tcp->tx_queue);
	tcp->tx_cur = skb;
	tcp->tx_off = 0;
	return skb;
}

static void ovpn_tcp_tx_done(struct sock *sk, struct ovpn_tcp_sock *tcp)
{
	consume_skb(tcp->tx_cur);
	tcp->tx_cur = NULL;
	if (tcp->tx_cur_ctrl) {
		clear_bit(OVPN_TCP_CTRL_PENDING, &tcp->flags);
		ovpn_tcp_wake_writers(sk);
	}
}

/*
 * The device's drop counters are per-CPU and want BHs off, and this file
 * counts drops from process context too: the strparser's work, a backlog
 * that release_sock() processes with BHs on, ovpn_tcp_send_skb() from any
 * context.
 */
static void ovpn_tcp_dropped(struct net_device *dev, bool rx)
{
	local_bh_disable();
	if (rx)
		dev_dstats_rx_dropped(dev);
	else
		dev_dstats_tx_dropped(dev);
	local_bh_enable();
}

/*
 * The stream cannot be written any more: half a record may be on it
 * already, so nothing that follows could be parsed by the other end.
 */
static void ovpn_tcp_tx_failed(struct ovpn_socket *ovpn_sock, int err)
{
	struct net_device *dev = ovpn_sock->ovpn->dev;
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);

	net_dbg_ratelimited("%s: peer %u: TCP send failed: %d\n",
			    netdev_name(dev), tcp->peer->id, err);
	dev_dstats_tx_dropped(dev);
	ovpn_tcp_purge(tcp);
	ovpn_tcp_del_broken(ovpn_sock);
}

/*
 * Write the queued records, oldest first, until the send buffer is full.
 * Called with the socket's spinlock held and BH disabled, either by the
 * socket's owner from release_cb or by a context that found no owner:
 * either way nobody else writes to the socket meanwhile, and the socket is
 * in the state the socket lock would give.  A record the buffer takes only
 * in part stays in @tx_cur and is finished first next time; the send that
 * found the buffer full set SOCK_NOSPACE, so sk_write_space calls back.
 */
static void ovpn_tcp_tx_flush(struct ovpn_socket *ovpn_sock)
{
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct sock *sk = ovpn_sock->sk;
	struct sk_buff *skb;
	int ret;

	while ((skb = tcp->tx_cur ?: ovpn_tcp_tx_next(tcp))) {
		/*
		 * No SIGPIPE for a broken stream: the task we run in, if
		 * any, is whichever sent a packet into the tunnel.
		 */
		ret = skb_send_sock_locked_with_flags(sk, skb, tcp->tx_off,
						      skb->len - tcp->tx_off,
						      MSG_NOSIGNAL);
		if (ret == -EAGAIN)
			return;
		if (ret < 0) {
			ovpn_tcp_tx_failed(ovpn_sock, ret);
			return;
		}
		tcp->tx_off += ret;
		if (tcp->tx_off < skb->len)
			return;
		ovpn_tcp_tx_done(sk, tcp);
	}
}

/*
 * The send buffer has room again (sk_write_space, with no owner): write the
 * rest from process context.  Taking the socket and letting it go is
 * enough, release_cb writes; once the attachment is detached, the socket's
 * own release_cb is back and nothing is written.
 */
static void ovpn_tcp_tx_work(struct work_struct *work)
{
	struct ovpn_tcp_sock *tcp = container_of(work, struct ovpn_tcp_sock,
						 tx_work);
	struct ovpn_socket *ovpn_sock = container_of(tcp, struct ovpn_socket,
						     tcp);

	lock_sock(ovpn_sock->sk);
	release_sock(ovpn_sock->sk);
	ovpn_socket_put(ovpn_sock);
}

/*
 * Queue @skb behind the records of its tunnelled flow (the flow hash is
 * the inner packet's, which ovpn_net_xmit() took before encryption), then
 * drop what the queue holds past its bound, oldest first from the flow
 * holding the most bytes, so that each flow keeps about as much as the
 * others.  One record always may wait.  While the socket would take
 * more, the records only wait for its owner: a burst, bounded by a count.
 * Once it takes no more, the queue is a standing one and holds the
 * bound's share that the send buffer does not.  Spinlock held, BH
 * disabled.
 */
static void ovpn_tcp_tx_enqueue(struct ovpn_socket *ovpn_sock,
				struct sk_buff *skb)
{
	struct ovpn_flowq *fq = &ovpn_tcp_of(ovpn_sock)->tx_queue;
	struct sock *sk = ovpn_sock->sk;
	unsigned int max_bytes = 0;
	bool burst;

	burst = sk_stream_memory_free(sk);
	if (!burst) {
		max_bytes = ovpn_tcp_unsent_max(sk);
		max_bytes -= ovpn_tcp_sock_share(max_bytes);
	}
	ovpn_flowq_enqueue(fq, skb, skb_get_hash_raw(skb));
	while (fq->len > 1 && (burst ? fq->len > OVPN_TCP_TX_BURST_MAX :
				       fq->bytes > max_bytes)) {
		dev_dstats_tx_dropped(ovpn_sock->ovpn->dev);
		kfree_skb(ovpn_flowq_drop_fattest(fq));
	}
}

/**
 * ovpn_tcp_send_skb - send an encrypted packet to a TCP peer
 * @peer: the peer, held by the caller
 * @skb: the OpenVPN packet; consumed
 *
 * The record joins the queue and, when no process owns the socket, the
 * queue is written at once; an owner writes it when it lets the socket go.
 * The per-peer link statistics the caller counted exclude the length
 * prefix, as OpenVPN counts.
 *
 * Context: any (takes the socket's spinlock with BH disabled).
 */
void ovpn_tcp_send_skb(struct ovpn_peer *peer, struct sk_buff *skb)
{
	struct ovpn_socket *ovpn_sock = peer->sock;
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct sock *sk = ovpn_sock->sk;
	unsigned int len = skb->len;
	enum ovpn_tcp_state state;

	if (unlikely(len > U16_MAX || skb_cow_head(skb, OVPN_TCP_LEN_SIZE)))
		goto drop;
	put_unaligned_be16(len, __skb_push(skb, OVPN_TCP_LEN_SIZE));

	local_bh_disable();
	spin_lock_nested(&sk->sk_lock.slock, OVPN_TCP_SLOCK_NESTING);
	/*
	 * The state changes only while a process owns the socket: without an
	 * owner it is stable here, with one a detach at worst leaves a
	 * record that the attachment's release drops.
	 */
	state = READ_ONCE(tcp->state);
	if (unlikely(state == OVPN_TCP_DETACHED)) {
		bh_unlock_sock(sk);
		local_bh_enable();
		goto drop;
	}
	ovpn_tcp_tx_enqueue(ovpn_sock, skb);
	if (!sock_owned_by_user(sk) && state == OVPN_TCP_ACTIVE)
		ovpn_tcp_tx_flush(ovpn_sock);
	bh_unlock_sock(sk);
	local_bh_enable();
	return;

drop:
	ovpn_tcp_dropped(peer->ovpn->dev, false);
	kfree_skb(skb);
}

/**
 * ovpn_tcp_room - the largest record one TCP segment to a peer carries
 * @peer: the peer, held by the caller
 * @cap: the largest outer packet wanted, IP header included
 *
 * The connection's MSS, which follows its path MTU, capped by @cap less
 * the outer IP and TCP headers, less the record's length prefix.  Read
 * without the socket lock: a hint, as the MSS may change at any time.
 *
 * Return: the room in bytes, or 0 if there is none.
 */
unsigned int ovpn_tcp_room(struct ovpn_peer *peer, unsigned int cap)
{
	struct sock *sk = peer->sock->sk;
	unsigned int hlen, room;

	hlen = inet_csk(sk)->icsk_af_ops->net_header_len +
	       sizeof(struct tcphdr);
	room = cap > hlen ? cap - hlen : 0;
	room = min(room, READ_ONCE(tcp_sk(sk)->mss_cache));
	return room > OVPN_TCP_LEN_SIZE ? room - OVPN_TCP_LEN_SIZE : 0;
}

/* strparser: the length of the record at the head of @skb, 0 if unknown. */
static int ovpn_tcp_parse(struct strparser *strp, struct sk_buff *skb)
{
	struct ovpn_socket *ovpn_sock = container_of(strp, struct ovpn_socket,
						     tcp.strp);
	struct strp_msg *msg = strp_msg(skb);
	__be16 blen;
	u16 len;

	/*
	 * A broken stream is read no further: TCP hands the parser whatever
	 * it did not consume again, and the same bad length would abort the
	 * stream, and be counted, once more.
	 */
	if (test_bit(OVPN_TCP_RX_BROKEN, &ovpn_tcp_of(ovpn_sock)->flags))
		return 0;
	if (skb->len < msg->offset + OVPN_TCP_LEN_SIZE)
		return 0;
	if (skb_copy_bits(skb, msg->offset, &blen, sizeof(blen)))
		return -EINVAL;

	/* Too short to carry an opcode, or longer than any packet. */
	len = be16_to_cpu(blen);
	if (len < OVPN_OPCODE_SIZE || len > OVPN_TCP_MAX_PACKET)
		return -EBADMSG;
	return OVPN_TCP_LEN_SIZE + len;
}

/* strparser: the stream is broken; the peer goes with it. */
static void ovpn_tcp_abort(struct strparser *strp, int err)
{
	struct ovpn_socket *ovpn_sock = container_of(strp, struct ovpn_socket,
						     tcp.strp);
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);

	/* A stream breaks once, and counts one drop for it. */
	if (test_and_set_bit(OVPN_TCP_RX_BROKEN, &tcp->flags))
		return;
	net_dbg_ratelimited("%s: peer %u: bad TCP record: %d\n",
			    netdev_name(ovpn_sock->ovpn->dev), tcp->peer->id,
			    err);
	ovpn_tcp_dropped(ovpn_sock->ovpn->dev, true);
	ovpn_tcp_del_broken(ovpn_sock);
}

/*
 * Copy @len bytes at @off of a record into a new, aligned, linear skb for
 * @dev.  Its data comes from the per-CPU page fragment cache, as a NIC
 * driver's would: one allocation per packet (the skb head), not two.
 */
static struct sk_buff *ovpn_tcp_copy(struct net_device *dev,
				     struct sk_buff *skb, unsigned int off,
				     unsigned int len)
{
	struct sk_buff *pkt;

	pkt = netdev_alloc_skb(dev, len);
	if (!pkt)
		return NULL;
	if (skb_copy_bits(skb, off, skb_put(pkt, len), len)) {
		kfree_skb(pkt);
		return NULL;
	}
	return pkt;
}

/*
 * A control record, prefix included, for userspace's recv().  The copy is
 * charged to the socket as TCP's own receive queue is (sk_rmem_alloc,
 * and the protocol's and the memory cgroup's accounting), so the socket's
 * receive buffer bounds it: once the buffer is full the record parser
 * pauses, the bytes that follow stay in TCP's receive queue, and the
 * window closes on the sender.  ovpn_tcp_recvmsg() resumes it.  A record
 * is only dropped (and counted) when no memory can be had at all: it was
 * acknowledged already and cannot be handed back to TCP.
 *
 * Context: the record parser, under the socket lock, which the memory
 * accounting requires.
 */
static void ovpn_tcp_to_user(struct ovpn_socket *ovpn_sock,
			     struct sk_buff *skb)
{
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct strp_msg *msg = strp_msg(skb);
	struct sock *sk = ovpn_sock->sk;
	struct sk_buff *rec;

	rec = ovpn_tcp_copy(ovpn_sock->ovpn->dev, skb, msg->offset,
			    msg->full_len);
	if (!rec)
		goto drop;
	if (!sk_rmem_schedule(sk, rec, rec->truesize)) {
		kfree_skb(rec);
		goto drop;
	}
	skb_set_owner_r(rec, sk);
	skb_queue_tail(&tcp->user_queue, rec);
	if (atomic_read(&sk->sk_rmem_alloc) >= READ_ONCE(sk->sk_rcvbuf))
		strp_pause(&tcp->strp);
	tcp->saved_data_ready(sk);
	return;

drop:
	ovpn_tcp_dropped(ovpn_sock->ovpn->dev, true);
}

/*
 * strparser: one complete record.  Runs under the socket lock (spinlock
 * from sk_data_ready, or owned by the strparser's work).
 */
static void ovpn_tcp_rcv(struct strparser *strp, struct sk_buff *skb)
{
	struct ovpn_socket *ovpn_sock = container_of(strp, struct ovpn_socket,
						     tcp.strp);
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct net_device *dev = ovpn_sock->ovpn->dev;
	struct strp_msg *msg = strp_msg(skb);
	struct ovpn_peer *peer = tcp->peer;
	unsigned int off, len;
	struct sk_buff *pkt;
	u8 first;

	off = msg->offset + OVPN_TCP_LEN_SIZE;
	len = msg->full_len - OVPN_TCP_LEN_SIZE;
	/* No record follows a break: ovpn_tcp_parse() stops at it. */
	if (skb_copy_bits(skb, off, &first, sizeof(first)))
		goto drop;

	switch (first >> 3) {
	case OVPN_OPCODE_DATA_V2:
		break;
	case OVPN_OPCODE_DATA_V1:
		/* Never offloaded, and not for userspace either. */
		set_bit(OVPN_TCP_RX_BROKEN, &tcp->flags);
		ovpn_tcp_del_broken(ovpn_sock);
		goto drop;
	default:
		ovpn_tcp_to_user(ovpn_sock, skb);
		consume_skb(skb);
		return;
	}

	/* A peer being removed takes no more traffic. */
	if (!percpu_ref_tryget_live(&peer->ref))
		goto drop;
	pkt = ovpn_tcp_copy(dev, skb, off, len);
	if (!pkt) {
		ovpn_peer_put(peer);
		goto drop;
	}
	consume_skb(skb);

	/* The reference goes with the packet; delivery wants BH off. */
	local_bh_disable();
	ovpn_recv(peer, pkt);
	local_bh_enable();
	return;

drop:
	ovpn_tcp_dropped(dev, true);
	kfree_skb(skb);
}

/*
 * A callback that finds no attachment raced with the detach, which puts
 * the socket's own callbacks back before it clears sk_user_data: hand the
 * event to @next, the one now in its field.  Nothing orders the read of
 * that field after that of sk_user_data, so @next may still be this
 * callback, @self: never call it again from itself.
 */
static void ovpn_tcp_pass_on(struct sock *sk, void (*next)(struct sock *sk),
			     void (*self)(struct sock *sk))
{
	if (next != self)
		next(sk);
}

/*
 * sk_data_ready: new bytes on the stream.  Called by TCP under the socket
 * lock; only installed while the attachment is active, and detaching
 * takes the socket lock, so the attachment is valid here.
 */
static void ovpn_tcp_data_ready(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (unlikely(!ovpn_sock)) {
		/* Raced with the detach: hand over to what it put back. */
		ovpn_tcp_pass_on(sk, READ_ONCE(sk->sk_data_ready),
				 ovpn_tcp_data_ready);
	} else if (!test_bit(OVPN_TCP_RX_BROKEN,
			     &ovpn_tcp_of(ovpn_sock)->flags)) {
		strp_data_ready(&ovpn_tcp_of(ovpn_sock)->strp);
	}
	rcu_read_unlock();
}

/* sk_write_space: room in the send buffer for the rest of the records. */
static void ovpn_tcp_write_space(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (unlikely(!ovpn_sock)) {
		ovpn_tcp_pass_on(sk, READ_ONCE(sk->sk_write_space),
				 ovpn_tcp_write_space);
		rcu_read_unlock();
		return;
	}
	ovpn_tcp_of(ovpn_sock)->saved_write_space(sk);
	/*
	 * An owner (processing the backlog) writes the rest in release_cb;
	 * without one, TCP calls us from its receive path, with the
	 * spinlock held.  Waking the work on every call, not only once
	 * the socket is writeable by poll()'s margin (half the unsent
	 * bound), keeps the buffer from running dry while the work waits
	 * to be scheduled: with the margin, one stream under emulation
	 * lost a fifth of its throughput.
	 */
	if (!sock_owned_by_user_nocheck(sk) &&
	    ovpn_tcp_tx_pending(ovpn_tcp_of(ovpn_sock)))
		ovpn_tcp_kick_tx(ovpn_sock);
	rcu_read_unlock();
}

/*
 * release_cb: the socket's owner lets it go (release_sock(), spinlock held,
 * BH disabled) and writes what was queued while it held the socket.  Only
 * installed while the attachment is active; detaching puts the socket's
 * own back under the socket lock, so the attachment is valid here.
 */
static void ovpn_tcp_release_cb(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (ovpn_sock && ovpn_tcp_of(ovpn_sock)->state == OVPN_TCP_ACTIVE)
		ovpn_tcp_tx_flush(ovpn_sock);
	rcu_read_unlock();
	ovpn_tcp_family(sk)->prot.orig->release_cb(sk);
}

/*
 * sk_state_change: the other end closed or reset the connection.  The
 * peer cannot be reached any more: remove it, and let userspace see the
 * end of the stream.
 */
static void ovpn_tcp_state_change(struct sock *sk)
{
	struct ovpn_socket *ovpn_sock;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (unlikely(!ovpn_sock)) {
		ovpn_tcp_pass_on(sk, READ_ONCE(sk->sk_state_change),
				 ovpn_tcp_state_change);
	} else {
		ovpn_tcp_of(ovpn_sock)->saved_state_change(sk);
		if (ovpn_tcp_ended(sk))
			ovpn_tcp_del_ended(ovpn_sock);
	}
	rcu_read_unlock();
}

/* Is there something for a reader: a record, or the end of the stream? */
static bool ovpn_tcp_user_ready(struct sock *sk, struct ovpn_tcp_sock *tcp)
{
	return !skb_queue_empty_lockless(&tcp->user_queue) ||
	       READ_ONCE(tcp->state) != OVPN_TCP_ACTIVE || ovpn_tcp_ended(sk);
}

/*
 * The next control record for userspace, owned by the caller and no
 * longer charged to the socket (that takes the socket lock, held here):
 * taken off the queue, or with MSG_PEEK a clone that shares its data.
 * Taking one may make room for the record parser to resume.  Return:
 * the record, NULL if there is none, ERR_PTR(-ENOMEM).
 */
static struct sk_buff *ovpn_tcp_user_next(struct sock *sk,
					  struct ovpn_tcp_sock *tcp,
					  int flags)
{
	struct sk_buff *skb;

	if (flags & MSG_PEEK) {
		spin_lock_bh(&tcp->user_queue.lock);
		skb = skb_peek(&tcp->user_queue);
		if (skb)
			skb = skb_clone(skb, GFP_ATOMIC) ?: ERR_PTR(-ENOMEM);
		spin_unlock_bh(&tcp->user_queue.lock);
		return skb;
	}

	skb = skb_dequeue(&tcp->user_queue);
	if (!skb)
		return NULL;
	skb_orphan(skb);
	/*
	 * Resume the parser once there is room, or once the queue is empty:
	 * TCP's own receive queue, charged to the same buffer, may fill it
	 * alone, and only the parser can empty that.  A detached
	 * attachment's parser is stopped for good.
	 */
	if (tcp->strp.paused && tcp->state == OVPN_TCP_ACTIVE &&
	    (skb_queue_empty_lockless(&tcp->user_queue) ||
	     atomic_read(&sk->sk_rmem_alloc) < READ_ONCE(sk->sk_rcvbuf)))
		strp_unpause(&tcp->strp);
	return skb;
}

/*
 * recvmsg: one control record per call, cut to the buffer (MSG_TRUNC).
 *
 * Waits with the attachment held, under the socket lock as TCP's own
 * recvmsg does (sk_wait_event() lets it go while asleep); a detach takes
 * that lock, marks the attachment detached and wakes the reader, which
 * then gets ECONNABORTED: the socket is plain TCP again and the next
 * call reads its stream.  The record is copied to userspace with nothing
 * of ovpn held, so a copy that blocks (a page fault on a FUSE or
 * userfaultfd mapping) cannot hold up the deletion of the device.
 */
static int ovpn_tcp_do_recvmsg(struct sock *sk, struct msghdr *msg,
			       size_t len, int flags)
{
	struct ovpn_socket *ovpn_sock = ovpn_socket_get(sk);
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct ovpn_tcp_sock *tcp;
	struct sk_buff *skb;
	size_t copied;
	long timeo;
	int err;

	if (!ovpn_sock)
		return ovpn_tcp_family(sk)->prot.orig->recvmsg(sk, msg, len,
								flags);
	tcp = ovpn_tcp_of(ovpn_sock);
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);

	lock_sock(sk);
	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		skb = ovpn_tcp_user_next(sk, tcp, flags);
		if (IS_ERR(skb)) {
			err = PTR_ERR(skb);
			skb = NULL;
			break;
		}
		if (skb)
			break;
		err = sock_error(sk);
		if (err)
			break;
		/* Nothing left and nothing to come: the end of the stream. */
		if (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN)
			break;
		if (tcp->state != OVPN_TCP_ACTIVE) {
			err = -ECONNABORTED;
			break;
		}
		if (!timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		sk_wait_event(sk, &timeo, ovpn_tcp_user_ready(sk, tcp), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	release_sock(sk);
	ovpn_socket_put(ovpn_sock);
	if (!skb)
		return err;

	copied = min_t(size_t, len, skb->len);
	if (copied < skb->len)
		msg->msg_flags |= MSG_TRUNC;
	err = skb_copy_datagram_msg(skb, 0, msg, copied);
	if (!err)
		err = (flags & MSG_TRUNC) ? skb->len : copied;
	consume_skb(skb);
	return err;
}

/*
 * sendmsg: userspace sends one control record per call, length prefix
 * included, never waiting: the record is written before the next data
 * record, and the next one is refused with EAGAIN until this one is.
 *
 * The record is copied from userspace before the attachment is held: a
 * copy that blocks (a page fault on a FUSE or userfaultfd mapping) must
 * not hold up the deletion of the device.  If the socket was detached
 * meanwhile, it is plain TCP again and the bytes go out as they are.
 */
static int ovpn_tcp_do_sendmsg(struct sock *sk, struct msghdr *msg,
			       size_t size)
{
	const struct proto *orig = ovpn_tcp_family(sk)->prot.orig;
	struct ovpn_socket *ovpn_sock;
	struct ovpn_tcp_sock *tcp;
	struct sk_buff *skb;
	int ret;

	if (!rcu_access_pointer(__sk_user_data(sk)))
		return orig->sendmsg(sk, msg, size);
	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL))
		return -EOPNOTSUPP;
	if (size < OVPN_TCP_LEN_SIZE + OVPN_OPCODE_SIZE ||
	    size > OVPN_TCP_LEN_SIZE + U16_MAX)
		return -EINVAL;

	skb = alloc_skb(size, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	if (!copy_from_iter_full(skb_put(skb, size), size, &msg->msg_iter)) {
		ret = -EFAULT;
		goto out_free;
	}
	/* One whole record: anything else would desync the stream. */
	if (get_unaligned_be16(skb->data) != size - OVPN_TCP_LEN_SIZE) {
		ret = -EINVAL;
		goto out_free;
	}

	ovpn_sock = ovpn_socket_get(sk);
	if (!ovpn_sock) {
		kfree_skb(skb);
		iov_iter_revert(&msg->msg_iter, size);
		return orig->sendmsg(sk, msg, size);
	}
	tcp = ovpn_tcp_of(ovpn_sock);
	if (test_and_set_bit(OVPN_TCP_CTRL_PENDING, &tcp->flags)) {
		ovpn_socket_put(ovpn_sock);
		ret = -EAGAIN;
		goto out_free;
	}

	/*
	 * The slot is free, unless a detach that purged it raced with two
	 * senders: that record would have been dropped anyway.  Letting the
	 * socket go writes it (release_cb), or leaves it for sk_write_space.
	 */
	lock_sock(sk);
	kfree_skb(xchg(&tcp->tx_ctrl, skb));
	release_sock(sk);
	ovpn_socket_put(ovpn_sock);
	return size;

out_free:
	kfree_skb(skb);
	return ret;
}

/*
 * setsockopt: no upper layer protocol (kTLS and the like) may take over
 * a stream whose records the kernel parses; anything else is TCP's.
 */
static int ovpn_tcp_do_setsockopt(struct sock *sk, int level, int optname,
				  sockptr_t optval, unsigned int optlen)
{
	if (level == SOL_TCP && optname == TCP_ULP)
		return -EBUSY;
	return ovpn_tcp_family(sk)->prot.orig->setsockopt(sk, level, optname,
							   optval, optlen);
}

/* disconnect: the connection is the peer's; it ends with close(). */
static int ovpn_tcp_disconnect(struct sock *sk, int flags)
{
	return -EBUSY;
}

/*
 * close: userspace is done with the socket (close() or exit).  The peer
 * goes first, then the socket is given back and closed as TCP would.
 * Runs without the socket lock, concurrently with the peer's release,
 * which may detach first: the peer is only used with a live reference
 * taken while the attachment itself is live.
 */
static void ovpn_tcp_do_close(struct sock *sk, long timeout)
{
	const struct proto *orig = ovpn_tcp_family(sk)->prot.orig;
	struct ovpn_socket *ovpn_sock;
	struct ovpn_peer *peer = NULL;

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (ovpn_sock && !percpu_ref_tryget_live_rcu(&ovpn_sock->ref))
		ovpn_sock = NULL;
	if (ovpn_sock) {
		peer = ovpn_tcp_of(ovpn_sock)->peer;
		if (!percpu_ref_tryget_live_rcu(&peer->ref))
			peer = NULL;
	}
	rcu_read_unlock();

	if (peer) {
		ovpn_peer_del(peer, OVPN_DEL_PEER_REASON_TRANSPORT_DISCONNECT);
		ovpn_peer_put(peer);
	}
	if (ovpn_sock) {
		ovpn_socket_detach(ovpn_sock, false);
		ovpn_socket_put(ovpn_sock);
	}
	orig->close(sk, timeout);
}

/*
 * poll: readable only when a control record (or the end of the stream,
 * or an error) is there, since data records never reach userspace;
 * not writable while a control record is pending.
 */
static __poll_t ovpn_tcp_do_poll(struct file *file, struct socket *sock,
				 poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct ovpn_socket *ovpn_sock;
	struct ovpn_tcp_sock *tcp;
	__poll_t mask;

	mask = ovpn_tcp_family(sk)->ops.orig->poll(file, sock, wait);

	rcu_read_lock();
	ovpn_sock = rcu_dereference_sk_user_data(sk);
	if (ovpn_sock) {
		tcp = ovpn_tcp_of(ovpn_sock);
		mask &= ~(EPOLLIN | EPOLLRDNORM);
		if (!skb_queue_empty_lockless(&tcp->user_queue) ||
		    ovpn_tcp_ended(sk))
			mask |= EPOLLIN | EPOLLRDNORM;
		if (test_bit(OVPN_TCP_CTRL_PENDING, &tcp->flags))
			mask &= ~(EPOLLOUT | EPOLLWRNORM);
	}
	rcu_read_unlock();
	return mask;
}

/*
 * Module text under the socket's feet.  The operations above are ovpn's
 * while the socket is attached, but a call that entered one may sleep in
 * it (waiting for a record, copying from userspace, lingering in the
 * socket's own close()) past the detach, past the device's deletion and
 * into the module's unloading, and then return into freed text.  Each
 * runs in an SRCU read-side section, and the module's exit waits for
 * them (ovpn_tcp_exit()) once every socket is detached, so that no new
 * call can start.
 */
DEFINE_STATIC_SRCU(ovpn_tcp_srcu);

static int ovpn_tcp_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
			    int flags)
{
	int idx = srcu_read_lock(&ovpn_tcp_srcu);
	int ret = ovpn_tcp_do_recvmsg(sk, msg, len, flags);

	srcu_read_unlock(&ovpn_tcp_srcu, idx);
	return ret;
}

static int ovpn_tcp_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	int idx = srcu_read_lock(&ovpn_tcp_srcu);
	int ret = ovpn_tcp_do_sendmsg(sk, msg, size);

	srcu_read_unlock(&ovpn_tcp_srcu, idx);
	return ret;
}

static int ovpn_tcp_setsockopt(struct sock *sk, int level, int optname,
			       sockptr_t optval, unsigned int optlen)
{
	int idx = srcu_read_lock(&ovpn_tcp_srcu);
	int ret = ovpn_tcp_do_setsockopt(sk, level, optname, optval, optlen);

	srcu_read_unlock(&ovpn_tcp_srcu, idx);
	return ret;
}

static void ovpn_tcp_close(struct sock *sk, long timeout)
{
	int idx = srcu_read_lock(&ovpn_tcp_srcu);

	ovpn_tcp_do_close(sk, timeout);
	srcu_read_unlock(&ovpn_tcp_srcu, idx);
}

static __poll_t ovpn_tcp_poll(struct file *file, struct socket *sock,
			      poll_table *wait)
{
	int idx = srcu_read_lock(&ovpn_tcp_srcu);
	__poll_t mask = ovpn_tcp_do_poll(file, sock, wait);

	srcu_read_unlock(&ovpn_tcp_srcu, idx);
	return mask;
}

/* Is @sk a plain TCP socket of its family, which ovpn may take over? */
static bool ovpn_tcp_is_plain(struct sock *sk)
{
	const struct ovpn_tcp_family *fam = ovpn_tcp_family(sk);

	return fam->prot.orig && sk->sk_prot == fam->prot.orig &&
	       sk->sk_socket->ops == fam->ops.orig &&
	       !inet_csk(sk)->icsk_ulp_ops;
}

/**
 * ovpn_tcp_attach - reserve a TCP socket for a peer
 * @ovpn_sock: the new attachment, not published yet; its socket is locked
 * @peer: the peer the socket will carry
 *
 * Claims sk_user_data, so that nobody else can attach the socket; the
 * hooks are installed later by ovpn_tcp_start().
 *
 * Return: 0, -ENOTCONN if the socket is not connected, -EBUSY if it is
 * attached already or taken over by another layer.
 */
int ovpn_tcp_attach(struct ovpn_socket *ovpn_sock, struct ovpn_peer *peer)
{
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct sock *sk = ovpn_sock->sk;

	if (sk->sk_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	if (rcu_access_pointer(__sk_user_data(sk)) || !ovpn_tcp_is_plain(sk))
		return -EBUSY;

	tcp->peer = peer;
	tcp->state = OVPN_TCP_NEW;
	skb_queue_head_init(&tcp->user_queue);
	ovpn_flowq_init(&tcp->tx_queue);
	INIT_WORK(&tcp->tx_work, ovpn_tcp_tx_work);
	INIT_WORK(&tcp->del_work, ovpn_tcp_del_work);
	__rcu_assign_sk_user_data_with_flags(sk, ovpn_sock,
					     SK_USER_DATA_NOCOPY);
	return 0;
}

static const struct strp_callbacks ovpn_tcp_strp_cb = {
	.parse_msg = ovpn_tcp_parse,
	.rcv_msg = ovpn_tcp_rcv,
	.abort_parser = ovpn_tcp_abort,
};

/**
 * ovpn_tcp_start - install the hooks once the socket's peer is published
 * @ovpn_sock: the attachment; the caller holds its peer
 *
 * Records already waiting on the socket are parsed at once, and so are
 * packets the peer queued for sending in the meantime.  Nothing happens if
 * the attachment was detached meanwhile.
 *
 * Context: process context.
 */
void ovpn_tcp_start(struct ovpn_socket *ovpn_sock)
{
	struct ovpn_tcp_family *fam = ovpn_tcp_family(ovpn_sock->sk);
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct sock *sk = ovpn_sock->sk;

	lock_sock(sk);
	if (tcp->state != OVPN_TCP_NEW || !sk->sk_socket ||
	    strp_init(&tcp->strp, sk, &ovpn_tcp_strp_cb)) {
		release_sock(sk);
		return;
	}

	write_lock_bh(&sk->sk_callback_lock);
	tcp->saved_data_ready = sk->sk_data_ready;
	tcp->saved_write_space = sk->sk_write_space;
	tcp->saved_state_change = sk->sk_state_change;
	sk->sk_data_ready = ovpn_tcp_data_ready;
	sk->sk_write_space = ovpn_tcp_write_space;
	sk->sk_state_change = ovpn_tcp_state_change;
	WRITE_ONCE(sk->sk_prot, &fam->prot.copy);
	WRITE_ONCE(sk->sk_socket->ops, &fam->ops.copy);
	write_unlock_bh(&sk->sk_callback_lock);
	/*
	 * Records are also written from softirq, nested in another socket's
	 * sendmsg(), or under the spinlock (ovpn_tcp_tx_flush()): what TCP
	 * allocates for this socket must not sleep, and its pages must come
	 * from the socket's own fragment, never from current->task_frag,
	 * which the interrupted task or the outer sendmsg() may be filling.
	 */
	tcp->saved_allocation = sk->sk_allocation;
	tcp->saved_use_task_frag = sk->sk_use_task_frag;
	sk->sk_allocation = GFP_ATOMIC;
	sk->sk_use_task_frag = false;
	WRITE_ONCE(tcp->state, OVPN_TCP_ACTIVE);

	strp_check_rcv(&tcp->strp);
	/* Writes the records the peer queued meanwhile (release_cb). */
	release_sock(sk);

	/* The connection may have ended before the hooks were there. */
	if (ovpn_tcp_ended(sk))
		ovpn_tcp_del_ended(ovpn_sock);
}

/**
 * ovpn_tcp_detach - give a TCP socket back to plain userspace use
 * @ovpn_sock: the attachment, taken off the device's list by the caller
 *
 * Puts the socket's own operations and callbacks back under the socket
 * lock (a socket already orphaned by close() has no operations to
 * restore) and drops every queued record.
 *
 * Context: process context, not the strparser's work.
 */
void ovpn_tcp_detach(struct ovpn_socket *ovpn_sock)
{
	struct ovpn_tcp_family *fam = ovpn_tcp_family(ovpn_sock->sk);
	struct ovpn_tcp_sock *tcp = ovpn_tcp_of(ovpn_sock);
	struct sock *sk = ovpn_sock->sk;
	bool started;

	lock_sock(sk);
	started = tcp->state == OVPN_TCP_ACTIVE;
	WRITE_ONCE(tcp->state, OVPN_TCP_DETACHED);

	write_lock_bh(&sk->sk_callback_lock);
	if (started) {
		sk->sk_data_ready = tcp->saved_data_ready;
		sk->sk_write_space = tcp->saved_write_space;
		sk->sk_state_change = tcp->saved_state_change;
		WRITE_ONCE(sk->sk_prot, fam->prot.orig);
		if (sk->sk_socket)
			WRITE_ONCE(sk->sk_socket->ops, fam->ops.orig);
		sk->sk_allocation = tcp->saved_allocation;
		sk->sk_use_task_frag = tcp->saved_use_task_frag;
	}
	/* RCU readers of the old value are covered by the deferred free. */
	rcu_assign_sk_user_data(sk, NULL);
	write_unlock_bh(&sk->sk_callback_lock);

	if (started)
		strp_stop(&tcp->strp);
	/* Senders queue under the spinlock even while we own the socket. */
	local_bh_disable();
	bh_lock_sock(sk);
	ovpn_tcp_purge(tcp);
	bh_unlock_sock(sk);
	local_bh_enable();
	release_sock(sk);

	/* Waits for the strparser's work, which takes the socket lock. */
	if (started)
		strp_done(&tcp->strp);
	/*
	 * A writer waiting for its control record, or a reader for the next
	 * one, would wait forever, and the reader holds the attachment.
	 */
	ovpn_tcp_wake(sk, EPOLLIN | EPOLLRDNORM | EPOLLOUT | EPOLLWRNORM |
		      EPOLLWRBAND);
}

/**
 * ovpn_tcp_release - free what is left of a TCP attachment
 * @ovpn_sock: the attachment, with no reference left
 *
 * Records queued after the detach (a TX racing with it) are dropped.
 */
void ovpn_tcp_release(struct ovpn_socket *ovpn_sock)
{
	ovpn_tcp_purge(ovpn_tcp_of(ovpn_sock));
}

static void __init ovpn_tcp_family_init(struct ovpn_tcp_family *fam,
					struct proto *prot,
					const struct proto_ops *ops)
{
	fam->prot.orig = prot;
	fam->prot.copy = *prot;
	fam->prot.copy.recvmsg = ovpn_tcp_recvmsg;
	fam->prot.copy.sendmsg = ovpn_tcp_sendmsg;
	fam->prot.copy.disconnect = ovpn_tcp_disconnect;
	fam->prot.copy.close = ovpn_tcp_close;
	fam->prot.copy.setsockopt = ovpn_tcp_setsockopt;
	fam->prot.copy.release_cb = ovpn_tcp_release_cb;
	fam->prot.copy.stream_memory_free = ovpn_tcp_stream_memory_free;
	fam->ops.orig = ops;
	fam->ops.copy = *ops;
	fam->ops.copy.poll = ovpn_tcp_poll;
	/* Both would read the stream behind the record parser's back. */
	fam->ops.copy.splice_read = NULL;
	fam->ops.copy.mmap = sock_no_mmap;
}

/**
 * ovpn_tcp_init - make ovpn's copies of the TCP operations
 *
 * Context: module load.
 */
void __init ovpn_tcp_init(void)
{
	ovpn_tcp_family_init(&ovpn_tcp_families[0], &tcp_prot,
			     &inet_stream_ops);
#if IS_ENABLED(CONFIG_IPV6)
	ovpn_tcp_family_init(&ovpn_tcp_families[1], &tcpv6_prot,
			     &inet6_stream_ops);
#endif
}

/**
 * ovpn_tcp_exit - wait for every call into ovpn's TCP operations to end
 *
 * Context: module unload, once every device, and so every attachment, is
 * gone.
 */
void __exit ovpn_tcp_exit(void)
{
	synchronize_srcu(&ovpn_tcp_srcu);
}
