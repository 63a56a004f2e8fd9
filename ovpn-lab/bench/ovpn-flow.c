// SPDX-License-Identifier: GPL-2.0
/*
 * ovpn-flow - a fixed number of UDP datagrams from one namespace to
 * another, in bursts acknowledged out of band, bracketed by the markers of
 * the ovpn-count QEMU plugin: the workload whose per-packet cost the
 * benchmark counts.
 *
 *	ovpn-flow recv <port> <packets> <ack-fifo>
 *	ovpn-flow send <address> <port> <packets> <size> <ack-fifo> [trace]
 *
 * The receiver prints READY once bound, then writes one byte to the FIFO
 * for every burst it has taken in full ('!' if a datagram did not come
 * within 10 s).  The sender keeps at most one burst in flight, so nothing
 * is dropped for lack of buffer space and every packet is counted once.
 * The acknowledgements cross a pipe, not the network: the traffic measured
 * is the datagrams alone, and the pipe costs the same with or without a
 * tunnel, so it cancels out against a plain veth run.
 *
 * With "trace", the sender switches the kernel's tracing on and off inside
 * the window, so that events enabled beforehand (allocations) are recorded
 * for the workload only.  It writes to file descriptor 3, which the caller
 * opened on tracefs' tracing_on: "ip netns exec" gives the sender a sysfs
 * of its own, without tracefs.
 *
 * Exit status: 0 when every datagram arrived, 1 otherwise.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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

static int flow_send(int argc, char **argv)
{
	struct sockaddr_storage ss = {};
	unsigned long packets, size, sent = 0, i;
	struct sockaddr_in6 *sin6 = (void *)&ss;
	struct sockaddr_in *sin = (void *)&ss;
	static char buf[FLOW_MAX_SIZE];
	int fd, ack, trace, err = 0;
	unsigned short port;

	if (argc != 7 && argc != 8)
		return 1;
	port = htons(flow_number(argv[3], 65535));
	packets = flow_number(argv[4], 100000000);
	size = flow_number(argv[5], FLOW_MAX_SIZE);
	trace = argc == 8 && !strcmp(argv[7], "trace");
	if (inet_pton(AF_INET, argv[2], &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = port;
	} else if (inet_pton(AF_INET6, argv[2], &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
	} else {
		fprintf(stderr, "ovpn-flow: bad address '%s'\n", argv[2]);
		return 1;
	}

	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sizeof(ss))) {
		perror("ovpn-flow: socket");
		return 1;
	}
	ack = open(argv[6], O_RDONLY);
	if (ack < 0) {
		perror(argv[6]);
		return 1;
	}
	memset(buf, 0x5a, size);

	count_mark_start();
	if (trace && flow_tracing(1))
		err = -1;
	while (!err && sent < packets) {
		for (i = 0; i < FLOW_BURST && sent < packets; i++, sent++)
			if (send(fd, buf, size, 0) != (ssize_t)size)
				err = -1;
		if (!err)
			err = flow_wait_ack(ack);
	}
	if (trace && flow_tracing(0))
		err = -1;
	count_mark_end();

	printf("sent %lu of %lu%s\n", sent, packets, err ? ", failed" : "");
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ret = 1;

	if (argc > 1 && !strcmp(argv[1], "recv"))
		ret = flow_recv(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "send"))
		ret = flow_send(argc, argv);
	if (ret && argc < 2)
		fprintf(stderr, "usage: %s\n       %s\n",
			"ovpn-flow recv <port> <packets> <fifo>",
			"ovpn-flow send <address> <port> <packets> <size> <fifo> [trace]");
	return ret;
}
