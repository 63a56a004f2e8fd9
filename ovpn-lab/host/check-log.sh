#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan a guest console log for kernel complaints.  Only kernel log lines
# (those with a "[  seconds]" printk timestamp) are looked at, so a test
# that prints one of these words does not trip it.  Exit 1, and print the
# offending lines, if any is found.
#
# Usage: check-log.sh console.log

set -euo pipefail

patterns=(
	'WARNING:'
	'BUG:'
	'Oops'
	'KASAN'
	'UBSAN'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'detected stall'
	'self-detected stall'
	'soft lockup'
	'blocked for more than'
	'unregister_netdevice: waiting'
	'refcount_t:'
	'percpu ref'
	'Kernel panic'
	'general protection fault'
	'unreferenced object'
	'ODEBUG:'
	'list_add corruption'
	'list_del corruption'
	'Call Trace:'
)

re=$(IFS='|'; echo "${patterns[*]}")
if hits=$(grep -aE '^\[ *[0-9]+\.[0-9]+\]' "$1" | grep -aE -- "$re"); then
	echo "check-log: kernel complaints in $1:" >&2
	echo "$hits" | head -n 40 >&2
	exit 1
fi
exit 0
