// SPDX-License-Identifier: GPL-2.0
/*
 * count-check - what the lab's self-test runs under the ovpn-count plugin:
 * one window holding exactly N LOCK-prefixed increments, N XCHGs with a
 * memory operand and N plain increments, all in user mode.  The plugin
 * must report two atomic sites with N runs each and nothing else in user
 * mode: the plain increments are not atomic.
 *
 *	count-check N
 */

#include <stdio.h>
#include <stdlib.h>

#include "count-marker.h"

int main(int argc, char **argv)
{
	unsigned int x = 0;
	long i, n;
	int v = 0;

	n = argc == 2 ? atol(argv[1]) : 0;
	if (n <= 0) {
		fputs("usage: count-check N\n", stderr);
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
