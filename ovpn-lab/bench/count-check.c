// SPDX-License-Identifier: GPL-2.0
/*
 * count-check - what the lab's self-test runs under the ovpn-count plugin:
 * one window holding exactly N LOCK-prefixed increments, N XCHGs with a
 * memory operand and N plain increments, all in user mode.  The plugin
 * must report two atomic sites with N runs each and nothing else in user
 * mode: the plain increments are not atomic.
 *
 * With "lines", the proof of the plugin's coherence model (lines=1): two
 * threads, on CPUs 0 and 1, hand a turn to each other N times each
 * through one variable alone in its cache line.  Each handoff moves that
 * line twice, and nothing else: the store invalidates the copy the other
 * thread has been spinning on, and that thread's next load takes the line
 * back modified.  With its turn, each thread also increments a counter
 * alone in another line with "lock incl": one transfer each, the request
 * for ownership of a line the other thread modified.  The window must
 * hold 4N transfers of the turn's line and 2N of the counter's, within
 * what the model may miss (lines-analyze.py says why).  The lines'
 * addresses are printed for the caller to find them.
 *
 *	count-check N
 *	count-check lines N
 */

#define _GNU_SOURCE	/* pthread_setaffinity_np() */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count-marker.h"

/* Whose turn it is, and a counter, each alone in its line. */
static struct {
	int turn;
} __attribute__((aligned(64))) check_line;

static struct {
	int count;
} __attribute__((aligned(64))) check_counter;

static long check_rounds;

static int check_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* N times: wait for my turn, hand it over. */
static void check_handoffs(int me)
{
	long i;

	for (i = 0; i < check_rounds; i++) {
		while (__atomic_load_n(&check_line.turn, __ATOMIC_ACQUIRE) != me)
			;
		asm volatile("lock incl %0" : "+m" (check_counter.count));
		__atomic_store_n(&check_line.turn, !me, __ATOMIC_RELEASE);
	}
}

static void *check_second(void *data)
{
	if (check_pin(1))
		return data;
	check_handoffs(1);
	return NULL;
}

static int check_lines(long n)
{
	pthread_t second;
	void *ret;

	check_rounds = n;
	if (check_pin(0) ||
	    pthread_create(&second, NULL, check_second, &check_rounds))
		return 1;
	count_mark_start();
	check_handoffs(0);
	pthread_join(second, &ret);
	count_mark_end();
	if (ret)
		return 1;
	printf("count-check: %ld handoffs each way, line at %p, counter at %p\n",
	       n, (void *)&check_line, (void *)&check_counter);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int x = 0;
	long i, n;
	int v = 0;

	if (argc == 3 && !strcmp(argv[1], "lines") && atol(argv[2]) > 0)
		return check_lines(atol(argv[2]));
	n = argc == 2 ? atol(argv[1]) : 0;
	if (n <= 0) {
		fputs("usage: count-check N | count-check lines N\n", stderr);
		return 1;
	}

	count_mark_start();
	for (i = 0; i < n; i++) {
		asm volatile("lock incl %0" : "+m" (v));
		asm volatile("xchgl %0, %1" : "+r" (x), "+m" (v));
		asm volatile("incl %0" : "+m" (v));
	}
	count_mark_end();

	printf("count-check: %ld of each\n", n);
	return 0;
}
