#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Netlink fuzzing under churn: fuzz-netlink.py sends $OVPN_FUZZ_COUNT
# (30,000) mutated requests, and valid ones, to every command of the ovpn
# genl family (and RTM_NEWLINK of ovpn links), split among $OVPN_FUZZ_JOBS
# (2) processes, while a churn loop adds and deletes peers, installs,
# swaps and deletes keys, changes peers, deletes and makes again fz0 and
# fz1, and rekeys a peer that carries pings all along.  Every request must
# get exactly one answer, an errno of those its command may return, and the
# valid sequences must succeed (see fuzz-netlink.py).  Afterwards no peer
# is left but the traffic peer, which still works, as does a fresh one,
# nothing complained in the kernel log and the module unloads.
#
#   ns srv: tun0 (MP, 5.5.5.1)  veth1 10.10.1.1 == 10.10.1.2 eth0  ns cli:
#           fz0 (MP), fz1 (P2P)                               tun1 (P2P,
#                                                              5.5.5.2)
#   traffic peer: id $TPEER at both ends, pinged from cli the whole time
#   churn peers: 10-13 on tun0 and fz0, 10 on fz1; the fuzzer adds 20-35
#
# Environment: OVPN_FUZZ_COUNT (30000) mutated requests in all, split among
# OVPN_FUZZ_JOBS (2) fuzzers; OVPN_FUZZ_SEED (the time) the seed, printed,
# that replays the requests (not the churn's timing); OVPN_FUZZ_CHURN_PAUSE
# (1) seconds between churn rounds; OVPN_FUZZ_REPLY_SECS (60, secs) how long an
# answer may take before the run is failed as hung.

source "$(dirname "$0")/lib.sh"

COUNT=${OVPN_FUZZ_COUNT:-30000}
JOBS=${OVPN_FUZZ_JOBS:-2}
CHURN_PAUSE=${OVPN_FUZZ_CHURN_PAUSE:-1}
SEED=${OVPN_FUZZ_SEED:-$(date +%s)}
# 0x5a5a5a: bytes that random requests do not hold by chance, so that the
# fuzzer can keep away from the traffic peer (--protect).
TPEER=5929562
SRV=ovpn-fsrv-$$
CLI=ovpn-fcli-$$
KEY=$OVPN_DIR/key.hex
FUZZ=$LAB_TESTS_DIR/fuzz-netlink.py
COMPLAINTS='WARNING|BUG[: ]|KASAN|UBSAN|Oops|Call Trace|refcount_t:'
COMPLAINTS+='|percpu ref|circular locking|inconsistent lock'

ovpn_workdir

# The churn's peers, in new_multi_peer's format.
churn_peers()
{
	local i

	for i in 10 11 12 13; do
		echo "$i 10.10.1.2 $((4000 + i)) $1.$i -"
	done
}

setup_topology()
{
	ns_add "$SRV"
	ns_add "$CLI"
	veth_pair "$SRV" veth1 10.10.1.1 "$CLI" eth0 10.10.1.2
	in_srv "$OVPN_CLI" new_iface tun0 mp
	in_srv "$OVPN_CLI" new_iface fz0 mp
	in_srv "$OVPN_CLI" new_iface fz1 p2p
	in_cli "$OVPN_CLI" new_iface tun1 p2p
	churn_peers 5.5.5 >"$TMPDIR/tun0.peers"
	churn_peers 6.6.6 >"$TMPDIR/fz0.peers"
	echo "$TPEER 10.10.1.2 2001 5.5.5.2 -" >"$TMPDIR/traffic.peers"
	start_tracked "$TMPDIR/srv.log" ip netns exec "$SRV" "$OVPN_CLI" \
		new_multi_peer tun0 1194 "$TMPDIR/traffic.peers" stay
	start_tracked "$TMPDIR/cli.log" ip netns exec "$CLI" "$OVPN_CLI" \
		new_peer tun1 "$TPEER" 2001 10.10.1.1 1194 stay
	key_pair "$SRV" tun0 "$TPEER" "$CLI" tun1 "$TPEER" primary 0 aes256
	ipv4_tunnel_up tun0 5.5.5.1 tun1 5.5.5.2
}

# The churn: its functions run in the server's namespace (churn_start).

# churn_may COMMAND...: a churn step the fuzzer may foil (it deletes and
# takes the same peers, changes their keys): counted, not checked.
churn_may()
{
	if "$@" >/dev/null 2>&1; then
		echo ok >>"$TMPDIR/churn.may"
	else
		echo refused >>"$TMPDIR/churn.may"
	fi
}

# churn_must COMMAND...: a churn step nothing the fuzzer does can foil;
# a failure is kept for churn_kept_working.
churn_must()
{
	local out

	out=$("$@" 2>&1) && return 0
	echo "$*: $out" >>"$TMPDIR/churn.failed"
}

# churn_holder NAME ARGS...: an ovpn-cli that adds peers and holds their
# sockets, in the background; back once it is ready or refused.
churn_holder()
{
	local log=$TMPDIR/holder-$1.log

	shift
	"$OVPN_CLI" "$@" stay >"$log" 2>&1 &
	echo $! >"$log.pid"
	for _ in $(seq 300); do
		grep -q '^READY' "$log" && echo ok >>"$TMPDIR/churn.may" &&
			return
		if grep -q '^ERR' "$log" || proc_gone "$(cat "$log.pid")"; then
			echo refused >>"$TMPDIR/churn.may"
			return
		fi
		sleep 0.1
	done
}

# churn_release NAME...: the holders close their sockets (those refused
# are gone already).
churn_release()
{
	local name pid

	for name in "$@"; do
		pid=$(cat "$TMPDIR/holder-$name.log.pid")
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# rekey_traffic ROUND: what openvpn does when it renegotiates, to the
# traffic peer: the new key (id ROUND % 8) as secondary at both ends, a
# swap at both ends, then the old key goes.  The fuzzer only reads that
# peer, so every step must succeed.
rekey_traffic()
{
	local kid=$(($1 % 8)) alg=aes256

	[ $(($1 % 2)) = 0 ] || alg=chachapoly
	churn_must "$OVPN_CLI" new_key tun0 "$TPEER" secondary "$kid" \
		"$alg" 0 "$KEY"
	churn_must in_cli "$OVPN_CLI" new_key tun1 "$TPEER" secondary "$kid" \
		"$alg" 1 "$KEY"
	churn_must "$OVPN_CLI" swap_keys tun0 "$TPEER"
	churn_must in_cli "$OVPN_CLI" swap_keys tun1 "$TPEER"
	churn_must "$OVPN_CLI" del_key tun0 "$TPEER" secondary
	churn_must in_cli "$OVPN_CLI" del_key tun1 "$TPEER" secondary
}

# churn_keys DEV: key new, swap and delete on peer 10 of DEV.
churn_keys()
{
	churn_may "$OVPN_CLI" new_key "$1" 10 primary 1 aes128 0 "$KEY"
	churn_may "$OVPN_CLI" new_key "$1" 10 secondary 2 chachapoly 0 \
		"$KEY"
	churn_may "$OVPN_CLI" swap_keys "$1" 10
	churn_may "$OVPN_CLI" del_key "$1" 10 secondary
}

# churn_round R: peers on tun0, fz0 and fz1, their keys, changes and
# removals, a rekey of the traffic peer, then fz0 and fz1 go (before
# their sockets close or after, by turns) and are made again.
churn_round()
{
	local dev

	churn_holder fz0 new_multi_peer fz0 3001 "$TMPDIR/fz0.peers"
	churn_holder tun0 new_multi_peer tun0 3002 "$TMPDIR/tun0.peers"
	churn_holder fz1 new_peer fz1 10 3003 10.10.1.2 4010
	for dev in tun0 fz0 fz1; do
		churn_keys "$dev"
		churn_may "$OVPN_CLI" set_peer "$dev" 10 keepalive 1 5
	done
	churn_may "$OVPN_CLI" set_peer tun0 11 remote 10.10.1.3 4111 \
		vpn 5.5.5.111 tx_id 111
	churn_may "$OVPN_CLI" set_peer fz0 11 vpn 6.6.6.111
	churn_may "$OVPN_CLI" del_peer tun0 12
	churn_may "$OVPN_CLI" del_peer fz0 12
	rekey_traffic "$1"
	if [ $(($1 % 2)) = 1 ]; then
		churn_must "$OVPN_CLI" set_peer tun0 "$TPEER" \
			keepalive 10 120
		churn_must ip link del fz0
		churn_must ip link del fz1
		churn_release fz0 tun0 fz1
	else
		churn_must "$OVPN_CLI" set_peer tun0 "$TPEER" \
			keepalive 0 0
		churn_release fz0 tun0 fz1
		churn_must ip link del fz0
		churn_must ip link del fz1
	fi
	churn_must "$OVPN_CLI" new_iface fz0 mp
	churn_must "$OVPN_CLI" new_iface fz1 p2p
}

# churn_loop: rounds until $TMPDIR/stop appears, $CHURN_PAUSE seconds
# apart: under emulation a churn flat out takes the CPUs from the fuzzers.
churn_loop()
{
	local round=0

	while [ ! -e "$TMPDIR/stop" ]; do
		round=$((round + 1))
		churn_round "$round" >/dev/null 2>&1
		echo "$round" >"$TMPDIR/churn.rounds"
		sleep "$CHURN_PAUSE"
	done
}

# churn_start: the churn loop in the background, in the server's
# namespace: a bash of its own that gets the functions above, so that
# each step is one process, not two with "ip netns exec".
churn_start()
{
	export TMPDIR OVPN_CLI KEY TPEER CLI CHURN_PAUSE
	export -f churn_loop churn_round churn_may churn_must churn_holder \
		churn_release churn_keys rekey_traffic proc_gone in_cli
	bg_start "$TMPDIR/churn.log" ip netns exec "$SRV" bash -c churn_loop
}

# fuzz JOB COUNT: one fuzzer process, in the server's namespace.
fuzz()
{
	in_srv python3 "$FUZZ" --count "$2" --seed "$SEED" --job "$1" \
		--dev tun0 --dev fz0 --dev fz1 --other lo --other veth1 \
		--strict tun0 --protect "$TPEER" \
		--reply-secs "${OVPN_FUZZ_REPLY_SECS:-$(secs 60)}"
}

# The fuzzers, the churn and the pings run together; the fuzzers' checks
# are gathered once all of them are done.
fuzz_under_churn()
{
	local j pids=() rc=0 t0 sum

	: >"$TMPDIR/churn.may"
	: >"$TMPDIR/churn.failed"
	echo 0 >"$TMPDIR/churn.rounds"
	bg_start "$TMPDIR/ping.log" ip netns exec "$CLI" ping -i 0.2 5.5.5.1
	t0=$(date +%s)
	churn_start
	for j in $(seq 0 $((JOBS - 1))); do
		fuzz "$j" $((COUNT / JOBS + (j < COUNT % JOBS))) \
			>"$TMPDIR/fuzz$j.log" 2>&1 &
		pids+=($!)
	done
	for j in "${pids[@]}"; do
		wait "$j" || rc=1
	done
	ktap_note "fuzzers done in $(($(date +%s) - t0)) s, seed $SEED" \
		"(OVPN_FUZZ_SEED), $JOBS jobs"
	touch "$TMPDIR/stop"
	wait "$(cat "$TMPDIR/churn.log.pid")" ||
		echo "churn loop ended with status $?" >>"$TMPDIR/churn.failed"
	echo $(($(date +%s) - t0)) >"$TMPDIR/churn.secs"
	bg_signal INT "$TMPDIR/ping.log"
	wait "$(cat "$TMPDIR/ping.log.pid")" || true

	cat "$TMPDIR"/fuzz*.log | grep -v '^job ' || true
	grep -h '^job ' "$TMPDIR"/fuzz*.log | while read -r line; do
		ktap_note "$line"
	done
	sum=$(cat "$TMPDIR"/fuzz*.log | awk -F'[ =]' \
		'/^job .* totals / { n += $7; m += $5 } END { print m, n }')
	ktap_note "in all: ${sum% *} requests, ${sum#* } of them mutated"
	expect_eq "fuzzers that finished without failure" "$JOBS" \
		"$(cat "$TMPDIR"/fuzz*.log | grep -c ' totals .* failures=0$')"
	[ "${sum#* }" -ge "$COUNT" ] || fail "only ${sum#* } mutated requests"
	expect_eq "fuzzers' exit status" 0 "$rc"
}

churn_kept_working()
{
	local rounds ok refused

	rounds=$(cat "$TMPDIR/churn.rounds")
	ok=$(grep -c '^ok' "$TMPDIR/churn.may" || true)
	refused=$(grep -c '^refused' "$TMPDIR/churn.may" || true)
	ktap_note "churn: $rounds rounds in $(cat "$TMPDIR/churn.secs") s;" \
		"of the steps the fuzzer may foil, $ok went through and" \
		"$refused were refused"
	cat "$TMPDIR/churn.failed"
	[ "$rounds" -ge 1 ] || fail "no churn round completed"
	expect_eq "churn steps that failed" 0 \
		"$(wc -l <"$TMPDIR/churn.failed")"
}

traffic_during_fuzz()
{
	local sent got

	cat "$TMPDIR/ping.log"
	sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' \
		"$TMPDIR/ping.log")
	got=$(ping_received "$TMPDIR/ping.log")
	ktap_note "pings through the traffic peer during the fuzzing:" \
		"${got:-?} of ${sent:-?} answered"
	[ "${got:-0}" -gt 0 ] || fail "no ping answered during the fuzzing"
}

# peers IFNAME: the ids of IFNAME's peers, one a line.
peers()
{
	in_srv "$OVPN_CLI" get_peer "$1" | tr ' ' '\n' | sed -n 's/^id=//p'
}

only_traffic_peer_left()
{
	[ "$(peers tun0)" = "$TPEER" ] && [ -z "$(peers fz0)" ] &&
		[ -z "$(peers fz1)" ]
}

# Every peer went with its socket, the fuzzers' and the churn's, and the
# fuzzers' own links went with them.
no_peer_left()
{
	local dev

	wait_until only_traffic_peer_left && return 0
	for dev in tun0 fz0 fz1; do
		echo "$dev: $(peers "$dev" | tr '\n' ' ')"
	done
	fail "peers left behind"
}

no_link_left()
{
	! in_srv ip -o link show | grep ovfz || fail "fuzzer's link left"
}

traffic_peer_works()
{
	in_srv "$OVPN_CLI" set_peer tun0 "$TPEER" keepalive 0 0
	in_cli ping -q -c 3 -i 0.2 -W 2 5.5.5.1
}

# tun0 takes a new peer, on a new socket, after all that: its exact
# counters at the client's end show 5 pings and 5 replies.
fresh_peer_works()
{
	local before after f

	in_srv "$OVPN_CLI" del_peer tun0 "$TPEER"
	bg_stop "$TMPDIR/srv.log"
	bg_stop "$TMPDIR/cli.log"
	start_ready "$TMPDIR/srv2.log" ip netns exec "$SRV" "$OVPN_CLI" \
		new_peer tun0 7 1195 10.10.1.2 2002 vpn 5.5.5.2 stay
	start_ready "$TMPDIR/cli2.log" ip netns exec "$CLI" "$OVPN_CLI" \
		new_peer tun1 7 2002 10.10.1.1 1195 stay
	key_pair "$SRV" tun0 7 "$CLI" tun1 7 primary 3 chachapoly
	before=$(in_cli "$OVPN_CLI" get_peer tun1 7)
	in_cli ping -q -c 5 -i 0.2 -W 2 5.5.5.1
	after=$(in_cli "$OVPN_CLI" get_peer tun1 7)
	for f in vpn_tx_packets vpn_rx_packets link_tx_packets \
		 link_rx_packets; do
		expect_eq "$f delta" 5 "$(peer_delta "$f" "$before" "$after")"
	done
}

# The boot's log check covers the whole run; this one the test alone,
# from a copy of the kernel log taken as it came (dmesg --follow since
# the start): the ring buffer wraps in a long run.
no_kernel_complaints()
{
	local log

	bg_stop "$TMPDIR/kmsg"
	log=$(sed -n "/ovpn-fuzz-netlink-$$ start/,\$p" "$TMPDIR/kmsg")
	[ -n "$log" ] || fail "start marker not in the kernel log"
	ktap_note "$(($(wc -l <<<"$log") - 1)) kernel log lines during the test"
	! grep -E "$COMPLAINTS" <<<"$log" || fail "kernel complaints"
}

ovpn_require
bg_start "$TMPDIR/kmsg" dmesg --follow
echo "ovpn-fuzz-netlink-$$ start" >/dev/kmsg
ktap_plan 10
run_test setup_topology setup_topology
run_noted fuzz_under_churn fuzz_under_churn
run_noted churn_kept_working churn_kept_working
run_noted traffic_during_fuzz traffic_during_fuzz
run_test no_peer_left no_peer_left
run_test no_link_left no_link_left
run_test traffic_peer_works traffic_peer_works
run_test fresh_peer_works fresh_peer_works
run_noted no_kernel_complaints no_kernel_complaints
run_test module_unloads module_unloads
ktap_finish
