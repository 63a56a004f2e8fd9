#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the ovpn selftests: KTAP output, the module under test,
# ovpn-cli and its error format.  Sourced by every test-*.sh.
#
# The module under test is the one "modprobe ovpn" loads.
#
# Environment:
#   OVPN_CLI  path of ovpn-cli; ./ovpn-cli next to the scripts if unset
#   OVPN_SLOW how many times slower than usual this kernel runs (1; 10
#             suits a debug kernel, KASAN, lockdep, kmemleak, under
#             emulation).  Waits and ping deadlines scale with it; no
#             bound a test checks changes.

set -u

OVPN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OVPN_CLI=${OVPN_CLI:-$OVPN_DIR/ovpn-cli}
OVPN_SLOW=${OVPN_SLOW:-1}
KSFT_SKIP=4

ktap_n=0
ktap_failed=0
ktap_skipped=0

# secs N: N seconds of a wait or a deadline, scaled by OVPN_SLOW.
secs() { echo $(($1 * OVPN_SLOW)); }

# on_slow USUAL SLOW: SLOW on a slow kernel (OVPN_SLOW above 1), else USUAL.
on_slow() { if [ "$OVPN_SLOW" -gt 1 ]; then echo "$2"; else echo "$1"; fi; }

# burst: the ping option of a burst whose every reply must come back:
# a flood, or on a slow kernel one probe in flight at a time (adaptive):
# there a flood outruns what the kernel can carry, and a datagram that
# loses one of its fragments is lost.
burst() { on_slow -f -A; }

# wait_for SECONDS COMMAND...: COMMAND succeeds within SECONDS (secs),
# tried every 0.1 s.  A readiness poll, not a fixed delay: under
# emulation everything is slow.  The bound is the clock's, not a count of
# tries: on a debug kernel one try can take a second, and a count of them
# stretched a 300 s wait to most of an hour.
wait_for() { wait_every 0.1 "$@"; }

# wait_every GAP SECONDS COMMAND...: as wait_for, tried every GAP seconds,
# for a COMMAND that is itself costly to run.
wait_every()
{
	local gap=$1 end=$((SECONDS + $(secs "$2")))

	shift 2
	while :; do
		"$@" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep "$gap"
	done
}

# wait_until COMMAND...: COMMAND succeeds within 30 s (secs).
wait_until() { wait_for 30 "$@"; }

# in_netns NETNS COMMAND...: COMMAND in the network namespace NETNS.
# nsenter, not "ip netns exec": the latter also remounts /sys, which
# doubles the cost of a short command under emulation.  Not for a command
# started in the background: $! would name a subshell, not COMMAND.
in_netns()
{
	local ns=$1

	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# tcp_listening NETNS FIRST [LAST]: true once a TCP socket in namespace
# NETNS listens on every port from FIRST to LAST (default FIRST), so that
# a server started in the background is ready for its clients.
tcp_listening()
{
	local port

	for port in $(seq "$2" "${3:-$2}"); do
		in_netns "$1" ss -Hltn "sport = :$port" | grep -q . || return 1
	done
}

# in_srv COMMAND...: COMMAND in the server's namespace, $SRV; in_cli: in
# the client's, $CLI, where a script has one.  The scripts name them.
# shellcheck disable=SC2154 # set by the script that sources this one
in_srv() { ip netns exec "$SRV" "$@"; }
# shellcheck disable=SC2154
in_cli() { ip netns exec "$CLI" "$@"; }

# ktap_plan N: start the KTAP document of a script with N tests.
ktap_plan()
{
	echo "TAP version 13"
	echo "1..$1"
}

ktap_diag()
{
	sed 's/^/# /'
}

# run_test NAME FUNCTION [ARGS...]: one test point.  The function runs in
# a subshell with errexit on; its output is shown as diagnostics when it
# fails, and exit status $KSFT_SKIP marks a skip.
run_test()
{
	local name=$1 out rc

	shift
	ktap_n=$((ktap_n + 1))
	out=$( (set -e; "$@") 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok $ktap_n $name"
	elif [ "$rc" = "$KSFT_SKIP" ]; then
		ktap_skipped=$((ktap_skipped + 1))
		echo "ok $ktap_n $name # SKIP $(echo "$out" | tail -n1)"
	else
		ktap_failed=$((ktap_failed + 1))
		echo "not ok $ktap_n $name"
		echo "$out" | ktap_diag
		echo "# $name: exit status $rc"
	fi
}

# ktap_note TEXT: a diagnostic line of the test point being run, shown
# after its result even when it passes (run_test keeps the output of a
# passing test to itself).  run_noted prints them.
ktap_note()
{
	echo "$*" >>"$TMPDIR/ktap-notes"
}

# run_noted NAME FUNCTION [ARGS...]: run_test, then its notes.
run_noted()
{
	run_test "$@"
	[ -s "$TMPDIR/ktap-notes" ] || return 0
	ktap_diag <"$TMPDIR/ktap-notes"
	: >"$TMPDIR/ktap-notes"
}

# ktap_finish: the script's exit status, per kselftest.
ktap_finish()
{
	local passed=$((ktap_n - ktap_failed - ktap_skipped))

	echo "# totals: pass:$passed fail:$ktap_failed skip:$ktap_skipped"
	[ "$ktap_failed" = 0 ]
	exit $?
}

fail()
{
	echo "FAIL: $*"
	return 1
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq()
{
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# expect_errno ENAME COMMAND...: COMMAND, an ovpn-cli invocation, must
# fail with that errno.  Enough for the errors the kernel's core raises
# before our code runs (permission checks), which carry no extack
# message.
expect_errno()
{
	local ename=$1 out

	shift
	out=$("$@") && fail "$* succeeded: $out"
	echo "$*: $out"
	case "$out" in
	"ERR $ename "*) return 0 ;;
	*) fail "expected ERR $ename" ;;
	esac
}

# expect_err ENAME COMMAND...: expect_errno, with an extack message ("-"
# where there is none).
expect_err()
{
	local out rc=0

	out=$(expect_errno "$@") || rc=1
	echo "$out"
	[ "$rc" = 0 ] || return 1
	case "$out" in
	*": ERR $1 -" | *": ERR $1 -"$'\n'*) fail "no extack message" ;;
	esac
}

# ovpn_load: load the module unless it already is.  "modprobe": the
# module under test is the installed one.
ovpn_load()
{
	[ -d /sys/module/ovpn ] || modprobe ovpn
}

ovpn_require()
{
	if [ "$(id -u)" != 0 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs root"
		exit "$KSFT_SKIP"
	fi
	if [ ! -x "$OVPN_CLI" ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP ovpn-cli not built"
		exit "$KSFT_SKIP"
	fi
	ovpn_load || exit 1
}

# start_ready LOG COMMAND...: run a long-lived COMMAND (an ovpn-cli that
# holds a socket with "stay") in the background until it prints READY,
# within $OVPN_READY_SECS seconds (default 30).
# Its pid goes to $OVPN_PIDS, a file: test stages run in subshells, the
# cleanup that kills it does not.
start_ready()
{
	local log=$1

	shift
	"$@" >"$log" 2>&1 &
	echo $! >>"$OVPN_PIDS"
	wait_for "${OVPN_READY_SECS:-30}" log_has "$log" '^\(READY\|ERR\)'
	grep -q '^READY' "$log" && return 0
	cat "$log"
	return 1
}

# ntf_listen LOG COUNT PREFIX...: collect COUNT notifications in the
# background with "PREFIX ovpn-cli listen_mcast", once it listens.
ntf_listen()
{
	local log=$1 count=$2

	shift 2
	"$@" "$OVPN_CLI" listen_mcast "$(secs 20)" count "$count" >"$log" &
	echo $! >"$log.pid"
	# Readiness, not a fixed delay: under emulation a start can be slow.
	wait_until log_has "$log" READY && return 0
	echo "listener not ready"
	return 1
}

# ntf_wait LOG PATTERN: the listener got a notification matching PATTERN.
ntf_wait()
{
	wait "$(cat "$1.pid")"
	cat "$1"
	grep -q "$2" "$1"
}

# kill_started: stop everything start_ready started.  A COMMAND that is a
# shell function runs in a subshell of its own: its children go first.
kill_started()
{
	local pid

	# Either may be gone already (the subshell ends with its child): not
	# an error, also under errexit.
	for pid in $(cat "$OVPN_PIDS" 2>/dev/null); do
		pkill -TERM -P "$pid" 2>/dev/null || true
		kill "$pid" 2>/dev/null || true
	done
	: >"$OVPN_PIDS"
}

# link_json IFNAME: the device as "ip -details -json" shows it.
link_json()
{
	ip -d -j link show dev "$1" | jq '.[0]'
}

# Helpers of the scripts whose peers live on their own processes' sockets
# (TCP) and that end by unloading the module.

# log_has LOG PATTERN [COUNT]: LOG holds at least COUNT (1) lines matching
# PATTERN.
log_has()
{
	local n

	n=$(grep -c -- "$2" "$1" 2>/dev/null)
	[ "${n:-0}" -ge "${3:-1}" ]
}

# log_wait LOG PATTERN [COUNT]: wait until log_has holds.
log_wait()
{
	wait_until log_has "$@" && return 0
	tail -n 20 "$1"
	fail "$1: fewer than ${3:-1} lines matching '$2'"
}

# proc_gone PID: no such process, or only its zombie.
proc_gone()
{
	local stat

	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	# The state follows the command name, which ends with ") ".
	stat=${stat##*) }
	[ "${stat:0:1}" = Z ]
}

# start_tracked LOG COMMAND...: start_ready, with the pid of COMMAND in
# LOG.pid for the signals of a test.  COMMAND must be a program ("ip netns
# exec" executes its command in place), not a shell function.
start_tracked()
{
	start_ready "$@" || return 1
	tail -n 1 "$OVPN_PIDS" >"$1.pid"
}

# bg_start LOG COMMAND...: like start_tracked, for a COMMAND that says
# nothing when ready (traffic, injectors): no wait.
bg_start()
{
	local log=$1

	shift
	"$@" >"$log" 2>&1 &
	echo $! >"$log.pid"
	echo $! >>"$OVPN_PIDS"
}

# bg_signal SIG LOG: send SIG to what LOG.pid names.
bg_signal()
{
	kill "-$1" "$(cat "$2.pid")"
}

# bg_stop LOG [SIG]: SIG (TERM) to what LOG.pid names, and wait until it
# is gone.
bg_stop()
{
	local pid

	pid=$(cat "$1.pid")
	kill "-${2:-TERM}" "$pid" 2>/dev/null || true
	wait_until proc_gone "$pid" || fail "process $pid does not end"
}

# stop_started: kill_started, then wait until each of them is gone, so
# that their sockets are closed.
stop_started()
{
	local pid pids ret=0

	pids=$(cat "$OVPN_PIDS" 2>/dev/null)
	kill_started
	for pid in $pids; do
		wait_until proc_gone "$pid" ||
			fail "process $pid does not end" || ret=1
	done
	return $ret
}

# ovpn_workdir: $TMPDIR, a directory for the logs of the script, with
# $OVPN_PIDS in it; at exit, every process started and namespace made
# goes, and the directory too.
ovpn_workdir()
{
	TMPDIR=$(mktemp -d)
	OVPN_PIDS=$TMPDIR/pids
	trap 'ns_teardown; rm -rf "$TMPDIR"' EXIT
}

# ns_add NS: a namespace with its loopback up, sending no router
# solicitations (they would add to exact counts), listed in the file
# $OVPN_PIDS.ns for ns_teardown.
ns_add()
{
	ip netns add "$1" || return
	echo "$1" >>"$OVPN_PIDS.ns"
	ip netns exec "$1" sysctl -qw net.ipv6.conf.default.accept_ra=0
	ip -n "$1" link set lo up
}

# ns_teardown: stop every process started, then delete every namespace
# ns_add made (one deleted already is no error).
ns_teardown()
{
	local ns

	stop_started
	# A test may have deleted some already: not an error, also under
	# errexit.
	for ns in $(cat "$OVPN_PIDS.ns" 2>/dev/null); do
		ip netns del "$ns" 2>/dev/null || true
	done
	: >"$OVPN_PIDS.ns"
}

# link_up NS IFNAME [ADDR...]: give a device its addresses, /24 for IPv4,
# /64 without DAD for IPv6, and bring it up.
link_up()
{
	local ns=$1 dev=$2 addr

	shift 2
	for addr in "$@"; do
		case $addr in
		*:*) ip -n "$ns" addr add "$addr/64" dev "$dev" nodad ;;
		*) ip -n "$ns" addr add "$addr/24" dev "$dev" ;;
		esac
	done
	# OVPN_PARALLEL=1: a run of every script on the parallel path.  MP
	# devices refuse the flag and stay inline.
	if [ "${OVPN_PARALLEL:-0}" = 1 ]; then
		ip netns exec "$ns" ethtool --set-priv-flags "$dev" \
			parallel-crypto on 2>/dev/null || true
	fi
	ip -n "$ns" link set "$dev" up
}

# ipv4_tunnel_up SDEV SADDR CDEV CADDR: tunnel devices SDEV of $SRV and
# CDEV of $CLI, IPv4 only, with their addresses and up; a ping from the
# client passes.  For tests of exact drop counts, which IPv6 housekeeping
# (solicitations, reports) would add to.
ipv4_tunnel_up()
{
	in_srv sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1"
	in_cli sysctl -qw "net.ipv6.conf.$3.disable_ipv6=1"
	link_up "$SRV" "$1" "$2"
	link_up "$CLI" "$3" "$4"
	in_cli ping -q -c 2 -i 0.2 -W 2 "$2"
}

# udp_p2p NS_A IFA VPN_A ADDR_A PORT_A NS_B IFB VPN_B ADDR_B PORT_B: a P2P
# tunnel over UDP between two namespaces whose transport addresses already
# reach each other: IFA knows the other end as peer 2 and sends to it with
# peer id 1, IFB the other way round; both up with their VPN address, no
# key yet.  The ovpn-cli holding each socket stays in the background.
udp_p2p()
{
	ip netns exec "$1" "$OVPN_CLI" new_iface "$2" &&
		ip netns exec "$6" "$OVPN_CLI" new_iface "$7" || return
	start_ready "$TMPDIR/$2.log" ip netns exec "$1" "$OVPN_CLI" new_peer \
		"$2" 2 "$5" "$9" "${10}" tx_id 1 stay || return
	start_ready "$TMPDIR/$7.log" ip netns exec "$6" "$OVPN_CLI" new_peer \
		"$7" 1 "${10}" "$4" "$5" tx_id 2 stay || return
	link_up "$1" "$2" "$3"
	link_up "$6" "$7" "$8"
}

# tcp_p2p NS_A IFA VPN_A ADDR_A NS_B IFB VPN_B ADDR_B PORT: udp_p2p over
# TCP: IFB listens on PORT for a connection from ADDR_A, its peer 1; IFA
# connects to ADDR_B as its peer 2.
tcp_p2p()
{
	echo "1 $4 - -" >"$TMPDIR/$6.peers"
	ip netns exec "$1" "$OVPN_CLI" new_iface "$2" &&
		ip netns exec "$5" "$OVPN_CLI" new_iface "$6" || return
	start_ready "$TMPDIR/$6.log" ip netns exec "$5" "$OVPN_CLI" \
		tcp_listen "$6" "$9" "$TMPDIR/$6.peers" stay || return
	start_ready "$TMPDIR/$2.log" ip netns exec "$1" "$OVPN_CLI" \
		new_tcp_peer "$2" 2 "$8" "$9" tx_id 1 stay || return
	log_wait "$TMPDIR/$6.log" '^PEER 1$' || return
	link_up "$1" "$2" "$3"
	link_up "$5" "$6" "$7"
}

# veth_pair NS1 IFNAME1 ADDR1 NS2 IFNAME2 ADDR2: a veth between two
# namespaces, up, each end with its address.
veth_pair()
{
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
	link_up "$1" "$2" "$3"
	link_up "$4" "$5" "$6"
}

# ipv4_pair NS1 IFNAME1 ADDR1 NS2 IFNAME2 ADDR2: two namespaces (ns_add)
# without IPv6, and a veth between them (veth_pair).  An ovpn device would
# get a random IPv6 link-local address and send router solicitations for
# as long as no router answers: packets that exact counts and a key's
# packet ids would see.
ipv4_pair()
{
	local ns

	for ns in "$1" "$4"; do
		ns_add "$ns" || return
		ip netns exec "$ns" sysctl -qw \
			net.ipv6.conf.default.disable_ipv6=1 || return
	done
	veth_pair "$@"
}

# star_transport N V6: the transport addresses of client N of a server
# with a veth to each client, the client's end first: fd00:N::2 and
# fd00:N::1 for N in the list V6, else 10.10.N.2 and 10.10.N.1.
star_transport()
{
	case " $2 " in
	*" $1 "*) echo "fd00:$1::2 fd00:$1::1" ;;
	*) echo "10.10.$1.2 10.10.$1.1" ;;
	esac
}

# The star: an MP server in namespace $SRV (each script names its own)
# and clients, each in a namespace of its own named after the server's,
# its eth0 a veth to the server's vethN.

# client_ns N: the namespace of client N.
client_ns() { echo "$SRV-c$1"; }

# in_c N COMMAND...: COMMAND in client N's namespace.
in_c()
{
	local c=$1

	shift
	ip netns exec "$(client_ns "$c")" "$@"
}

# star_links V6 CLIENT...: the server's namespace, each CLIENT's and the
# veth between them, with the transport addresses of star_transport.
star_links()
{
	local v6=$1 c caddr saddr

	shift
	ns_add "$SRV"
	for c in "$@"; do
		ns_add "$(client_ns "$c")"
		read -r caddr saddr <<<"$(star_transport "$c" "$v6")"
		veth_pair "$SRV" "veth$c" "$saddr" "$(client_ns "$c")" eth0 \
			"$caddr"
	done
}

# key_pair NS1 IFNAME1 PEER1 NS2 IFNAME2 PEER2 SLOT KEY_ID ALG: the keys
# of key.hex at both ends of a tunnel, direction 0 at the first end (its
# peer PEER1), 1 at the second.
key_pair()
{
	ip netns exec "$1" "$OVPN_CLI" new_key "$2" "$3" "$7" "$8" "$9" 0 \
		"$OVPN_DIR/key.hex"
	ip netns exec "$4" "$OVPN_CLI" new_key "$5" "$6" "$7" "$8" "$9" 1 \
		"$OVPN_DIR/key.hex"
}

# peer_val FIELD LINE: the value of FIELD in a "peer key=value..." line.
peer_val()
{
	local v

	v=$(tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p")
	# Said on stderr: stdout is the value.
	[ -n "$v" ] || fail "no $1 in '$2'" >&2 || return
	echo "$v"
}

# peer_delta FIELD BEFORE AFTER: how much FIELD grew between two
# get_peer lines of the same peer.
peer_delta()
{
	local a b

	a=$(peer_val "$1" "$2") && b=$(peer_val "$1" "$3") || return 1
	echo $((b - a))
}

# peer_stat NS IFNAME ID FIELD: FIELD of peer ID of IFNAME in NS, now.
peer_stat()
{
	local out

	out=$(ip netns exec "$1" "$OVPN_CLI" get_peer "$2" "$3") || return 1
	peer_val "$4" "$out"
}

# link_stat NS IFNAME rx|tx FIELD: a counter of IFNAME in NS (packets,
# bytes, dropped...), as "ip -s link" shows it.
link_stat()
{
	ip netns exec "$1" ip -s -j link show dev "$2" |
		jq ".[0].stats64.$3.$4"
}

# link_dropped NS IFNAME rx|tx: the packets IFNAME in NS dropped that way.
link_dropped() { link_stat "$1" "$2" "$3" dropped; }

# link_dropped_ge NS IFNAME rx|tx MIN: IFNAME in NS dropped MIN that way.
link_dropped_ge() { [ "$(link_dropped "$1" "$2" "$3")" -ge "$4" ]; }

# tcp_stall NS PORT: NS drops every TCP segment from port PORT, ACKs
# included, so that what NS sends on that connection cannot leave;
# tcp_unstall NS lets the segments in again.
tcp_stall()
{
	ip netns exec "$1" nft -f - <<-EOF
	table ip ovpn_stall {
		chain in {
			type filter hook input priority 0; policy accept;
			tcp sport $2 drop
		}
	}
	EOF
}

tcp_unstall() { ip netns exec "$1" nft delete table ip ovpn_stall; }

# send_dgrams NS DST COUNT: COUNT datagrams of 1000 bytes from NS to port
# 9 of DST, within 60 s (secs).  A record queued in front of a stream
# still counts against the send buffer of the socket that sent its
# datagram, so the sender's is forced to 64 MiB (SO_SNDBUFFORCE): it
# never waits for a stalled stream.
send_dgrams()
{
	ip netns exec "$1" timeout "$(secs 60)" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 32, 64 << 20)
for _ in range(int(sys.argv[2])):
    s.sendto(bytes(1000), (sys.argv[1], 9))' "$2" "$3"
}

# ping_received FILE: the replies counted in ping's summary in FILE;
# nothing if there is no summary.
ping_received() { sed -n 's/.* \([0-9]*\) received.*/\1/p' "$1"; }

# peer_stat_ge NS IFNAME ID FIELD MIN: FIELD reached MIN.
peer_stat_ge()
{
	local v

	v=$(peer_stat "$1" "$2" "$3" "$4") || return 1
	[ "$v" -ge "$5" ]
}

# ntf_expect LOG PATTERN...: the listener of LOG, once done, got a
# notification matching each PATTERN.
ntf_expect()
{
	local log=$1 p

	shift
	ntf_wait "$log" "$1" || fail "no notification matching '$1'" || return
	shift
	for p in "$@"; do
		grep -q -- "$p" "$log" ||
			fail "no notification matching '$p'" || return
	done
}

# module_unloads: the last test of a script, run after everything it made
# is gone.
module_unloads()
{
	ns_teardown
	ovpn_reload
}

# ovpn_unload: unload the module once nothing uses it (within 30 s,
# secs); fails if it stays.
ovpn_unload()
{
	local refs

	wait_until grep -qx 0 /sys/module/ovpn/refcnt
	refs=$(cat /sys/module/ovpn/refcnt)
	rmmod ovpn || fail "rmmod ovpn failed, refcnt $refs" || return
	[ ! -d /sys/module/ovpn ] || fail "the module is still there"
}

# ovpn_reload: unload the module and load it again.  The last test of a
# script, once its processes, devices and namespaces are gone: nothing
# the test did may keep the module in use.
ovpn_reload()
{
	ovpn_unload || return
	ovpn_load || fail "cannot load the module again"
}
