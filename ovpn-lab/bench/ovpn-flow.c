// SPDX-License-Identifier: GPL-2.0
/*
 * ovpn-flow - a fixed number of UDP datagrams from one namespace to
 * another, in bursts acknowledged out of band, bracketed by the markers of
 * the ovpn-count QEMU plugin: the workload whose per-packet cost the
 * benchmark counts.
 *
 *	ovpn-flow recv <port> <packets> <ack-fifo>
 *	ovpn-flow send <address> <port> <packets> <size> <ack-fifo> [trace]
 *	ovpn-flow fan <address> <port> <streams> <packets> <size> <cpus>
 *		<ack-fifo-prefix>
 *	ovpn-flow ping <address> <count> <size>
 *
 * The receiver prints READY once bound, then writes one byte to the FIFO
 * for every burst it has taken in full ('!' if a datagram did not come
 * within 10 s).  The sender keeps at most one burst in flight, so nothing
 * is dropped for lack of buffer space and every packet is counted once.
 * The acknowledgements cross a pipe, not the network: the traffic measured
 * is the datagrams alone, and the pipe costs the same with or without a
 * tunnel, so it cancels out against a plain veth run.
 *
 * "fan" is many senders at once in one window, the TX fan-in through one
 * peer: stream i is a thread on CPU cpus[i % n] (a comma-separated list)
 * that sends <packets> datagrams to <port> + i, acknowledged through the
 * FIFO <ack-fifo-prefix>.<i> by a receiver of its own.  "ping" is a flood
 * ping of <count> IPv4 echo requests of <size> bytes with their headers,
 * one at a time, through an ICMP datagram socket (the namespace's
 * net.ipv4.ping_group_range must admit the caller): the window holds the
 * round trips and nothing of a process's start.
 *
 * With "trace", the sender switches the kernel's tracing on and off inside
 * the window, so that events enabled beforehand (allocations) are recorded
 * for the workload only.  It writes to file descriptor 3, which the caller
 * opened on tracefs' tracing_on: "ip netns exec" gives the sender a sysfs
 * of its own, without tracefs.
 *
 * Exit status: 0 when every datagram arrived, 1 otherwise.
 */

#define _GNU_SOURCE	/* sched_setaffinity() */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "count-marker.h"

#define FLOW_BURST		16
#define FLOW_TIMEOUT_S		10
#define FLOW_MAX_SIZE		65507
#define FLOW_TRACING_FD		3
#define FLOW_MAX_STREAMS	256

static unsigned long flow_number(const char *s, unsigned long max)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || !n || n > max) {
		fprintf(stderr, "ovpn-flow: bad number '%s'\n", s);
		exit(1);
	}
	return n;
}

/* A CPU number, from 0 (which flow_number() refuses). */
static int flow_cpu(const char *s)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || end == s || n >= CPU_SETSIZE) {
		fprintf(stderr, "ovpn-flow: bad CPU '%s'\n", s);
		exit(1);
	}
	return n;
}

static int flow_recv(int argc, char **argv)
{
	struct timeval tv = { .tv_sec = FLOW_TIMEOUT_S };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	unsigned long packets, got = 0;
	static char buf[FLOW_MAX_SIZE];
	int fd, ack;
	char c;

	if (argc != 5)
		return 1;
	sin6.sin6_port = htons(flow_number(argv[2], 65535));
	packets = flow_number(argv[3], 100000000);

	/* A dual-stack socket takes IPv4 and IPv6 tunnels alike. */
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("ovpn-flow: socket");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	ack = open(argv[4], O_WRONLY);
	if (ack < 0) {
		perror(argv[4]);
		return 1;
	}
	while (got < packets) {
		if (recv(fd, buf, sizeof(buf), 0) < 0) {
			perror("ovpn-flow: recv");
			break;
		}
		got++;
		c = '.';
		if ((got % FLOW_BURST == 0 || got == packets) &&
		    write(ack, &c, 1) != 1)
			break;
	}
	printf("received %lu of %lu\n", got, packets);
	if (got == packets)
		return 0;
	c = '!';
	if (write(ack, &c, 1) != 1)
		perror("ovpn-flow: ack");
	return 1;
}

static int flow_tracing(int on)
{
	return write(FLOW_TRACING_FD, on ? "1" : "0", 1) == 1 ? 0 : -1;
}

/* Waits for the receiver's byte: 0 when it took the burst, -1 otherwise. */
static int flow_wait_ack(int ack)
{
	struct pollfd pfd = { .fd = ack, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, 2 * FLOW_TIMEOUT_S * 1000) != 1 ||
	    read(ack, &c, 1) != 1 || c != '.')
		return -1;
	return 0;
}

/* A UDP socket connected to @addr and @port, or -1. */
static int flow_connect(const char *addr, unsigned long port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *sin6 = (void *)&ss;
	struct sockaddr_in *sin = (void *)&ss;
	int fd;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		fprintf(stderr, "ovpn-flow: bad address '%s'\n", addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sizeof(ss))) {
		perror("ovpn-flow: socket");
		return -1;
	}
	return fd;
}

static char flow_buf[FLOW_MAX_SIZE];

/*
 * Sends @packets datagrams of @size bytes, a burst at a time, each burst
 * acknowledged through @ack.  Returns how many were sent; *err is set on
 * a failure.
 */
static unsigned long flow_bursts(int fd, int ack, unsigned long packets,
				 unsigned long size, int *err)
{
	unsigned long sent = 0, i;

	while (!*err && sent < packets) {
		for (i = 0; i < FLOW_BURST && sent < packets; i++, sent++)
			if (send(fd, flow_buf, size, 0) != (ssize_t)size)
				*err = -1;
		if (!*err)
			*err = flow_wait_ack(ack);
	}
	return sent;
}

static int flow_send(int argc, char **argv)
{
	unsigned long packets, size, sent;
	int fd, ack, trace, err = 0;

	if (argc != 7 && argc != 8)
		return 1;
	packets = flow_number(argv[4], 100000000);
	size = flow_number(argv[5], FLOW_MAX_SIZE);
	trace = argc == 8 && !strcmp(argv[7], "trace");
	fd = flow_connect(argv[2], flow_number(argv[3], 65535));
	if (fd < 0)
		return 1;
	ack = open(argv[6], O_RDONLY);
	if (ack < 0) {
		perror(argv[6]);
		return 1;
	}
	memset(flow_buf, 0x5a, size);

	count_mark_start();
	if (trace && flow_tracing(1))
		err = -1;
	sent = flow_bursts(fd, ack, packets, size, &err);
	if (trace && flow_tracing(0))
		err = -1;
	count_mark_end();

	printf("sent %lu of %lu%s\n", sent, packets, err ? ", failed" : "");
	return err ? 1 : 0;
}

/* One stream of "fan": its socket, FIFO and CPU, and how it went. */
struct flow_stream {
	pthread_t thread;
	pthread_barrier_t *go;
	unsigned long packets, size, sent;
	int fd, ack, cpu, err;
};

static void *flow_stream_run(void *data)
{
	struct flow_stream *st = data;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(st->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		st->err = -1;
	/* Every stream starts once the window is open. */
	pthread_barrier_wait(st->go);
	st->sent = flow_bursts(st->fd, st->ack, st->packets, st->size,
			       &st->err);
	return NULL;
}

static int flow_fan(int argc, char **argv)
{
	static struct flow_stream streams[FLOW_MAX_STREAMS];
	unsigned long port, n, packets, size, i, sent = 0;
	int cpus[FLOW_MAX_STREAMS], ncpus = 0, err = 0;
	pthread_barrier_t go;
	char path[4096], *tok;

	if (argc != 9)
		return 1;
	port = flow_number(argv[3], 65535);
	n = flow_number(argv[4], FLOW_MAX_STREAMS);
	packets = flow_number(argv[5], 100000000);
	size = flow_number(argv[6], FLOW_MAX_SIZE);
	for (tok = strtok(argv[7], ","); tok && ncpus < FLOW_MAX_STREAMS;
	     tok = strtok(NULL, ","))
		cpus[ncpus++] = flow_cpu(tok);
	if (!ncpus || port + n > 65536)
		return 1;
	memset(flow_buf, 0x5a, size);
	pthread_barrier_init(&go, NULL, n + 1);

	for (i = 0; i < n; i++) {
		struct flow_stream *st = &streams[i];

		st->go = &go;
		st->packets = packets;
		st->size = size;
		st->cpu = cpus[i % ncpus];
		st->fd = flow_connect(argv[2], port + i);
		snprintf(path, sizeof(path), "%s.%lu", argv[8], i);
		st->ack = open(path, O_RDONLY);
		if (st->fd < 0 || st->ack < 0) {
			perror(path);
			return 1;
		}
		if (pthread_create(&st->thread, NULL, flow_stream_run, st))
			return 1;
	}

	count_mark_start();
	pthread_barrier_wait(&go);
	for (i = 0; i < n; i++) {
		pthread_join(streams[i].thread, NULL);
		sent += streams[i].sent;
		err |= streams[i].err;
	}
	count_mark_end();

	printf("sent %lu of %lu in %lu streams%s\n", sent, n * packets, n,
	       err ? ", failed" : "");
	return err ? 1 : 0;
}

static int flow_ping(int argc, char **argv)
{
	struct timeval tv = { .tv_sec = FLOW_TIMEOUT_S };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct icmphdr *icmp = (void *)flow_buf;
	unsigned long count, size, i;
	static char reply[FLOW_MAX_SIZE];
	int fd, err = 0;

	if (argc != 5)
		return 1;
	count = flow_number(argv[3], 100000000);
	size = flow_number(argv[4], FLOW_MAX_SIZE);
	if (size < sizeof(*icmp) ||
	    inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1) {
		fprintf(stderr, "ovpn-flow: bad ping\n");
		return 1;
	}
	/* The kernel fills in the identifier and the checksum. */
	fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("ovpn-flow: ping socket");
		return 1;
	}
	memset(flow_buf, 0x5a, size);

	count_mark_start();
	for (i = 0; i < count && !err; i++) {
		icmp->type = ICMP_ECHO;
		icmp->code = 0;
		icmp->un.echo.sequence = htons(i);
		if (send(fd, flow_buf, size, 0) != (ssize_t)size ||
		    recv(fd, reply, sizeof(reply), 0) < (ssize_t)sizeof(*icmp) ||
		    ((struct icmphdr *)reply)->type != ICMP_ECHOREPLY)
			err = -1;
	}
	count_mark_end();

	printf("%lu of %lu round trips%s\n", i - !!err, count,
	       err ? ", failed" : "");
	return err ? 1 : 0;
}


int main(int argc, char **argv)
{
	int ret = 1;

	if (argc > 1 && !strcmp(argv[1], "recv"))
		ret = flow_recv(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "send"))
		ret = flow_send(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "fan"))
		ret = flow_fan(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "ping"))
		ret = flow_ping(argc, argv);
	if (ret && argc < 2)
		fprintf(stderr, "usage: %s\n       %s\n       %s\n       %s\n",
			"ovpn-flow recv <port> <packets> <fifo>",
			"ovpn-flow send <address> <port> <packets> <size> <fifo> [trace]",
			"ovpn-flow fan <address> <port> <streams> <packets> <size> <cpus> <fifo-prefix>",
			"ovpn-flow ping <address> <count> <size>");
	return ret;
}
