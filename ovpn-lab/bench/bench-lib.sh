# SPDX-License-Identifier: GPL-2.0
# Guest side of the benchmark: one tunnel through one peer between two
# namespaces, on either module.  Sourced by guest-count.sh, guest-lines.sh,
# guest-throughput.sh and host-ab.sh (the same on a real machine), never
# run.
#
#   ns bench-a: tun-a 5.5.0.1 -- veth-a 10.10.0.1 == 10.10.0.2 veth-b -- ns
#   bench-b: tun-b 5.5.0.2; both devices P2P, a knows b as peer 2, b knows
#   a as peer 1.  Over TCP, b listens and a connects.
#
# Environment: OVPN_KO (our module), OVPN_CLI (ovpn-cli), BENCH_UPSTREAM_KO
# (upstream's module as a file; unset: what "modprobe ovpn" finds).  The
# selftests' helpers start ovpn-cli, the lab's load modules
# (guest/module.sh); both are found in this checkout, /src in the guest.

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$BENCH_SRC/tools/testing/selftests/net/ovpn/lib.sh"
source "$BENCH_SRC/ovpn-lab/guest/module.sh"
set -eu

BENCH_A=bench-a
BENCH_B=bench-b
BENCH_PORT=1194
BENCH_KEY=$BENCH_SRC/tools/testing/selftests/net/ovpn/key.hex
BENCH_TMP=$(mktemp -d)
OVPN_PIDS=$BENCH_TMP/pids
: >"$OVPN_PIDS"

bench_log() { echo "bench: $*" >&2; }
in_a() { ip netns exec "$BENCH_A" "$@"; }
in_b() { ip netns exec "$BENCH_B" "$@"; }

# bench_load ours|upstream: our build, or the distribution kernel's own
# module (the lab blocks its alias autoloading; here it is wanted).  Where
# our build is installed (DKMS), modprobe finds ours: BENCH_UPSTREAM_KO
# then names the distribution's file.
bench_load()
{
	bench_unload
	if [ "$1" = upstream ] && [ -z "${BENCH_UPSTREAM_KO:-}" ]; then
		modprobe --ignore-install ovpn
		return
	fi
	if [ "$1" = upstream ]; then
		lab_insmod "$BENCH_UPSTREAM_KO"
		return
	fi
	lab_insmod "$OVPN_KO" && lab_is_loaded "$OVPN_KO" ||
		lab_fail "the loaded ovpn is not $OVPN_KO"
}

lab_fail()
{
	echo "bench: $*" >&2
	exit 1
}

bench_unload()
{
	local i

	[ -d /sys/module/ovpn ] || return 0
	# Devices go with their namespace asynchronously: retry a while.
	for i in $(seq 50); do
		rmmod ovpn 2>/dev/null && return 0
		sleep 0.2
	done
	rmmod ovpn
}

# bench_netns [split]: the two namespaces and the veth between them.  With
# "split", each namespace's receive processing is steered to its own CPU
# (RPS): a's to CPU 0, b's to the last one, so that with a sending to b,
# one CPU does the sending side's work and another the receiving side's;
# unbound work items (our TCP TX work) run on CPU 0 too, the sender's.
# Without, a packet is received on the CPU that sent it, as veth does.
bench_netns()
{
	local last=$(($(nproc) - 1))

	bench_netns_del
	ip netns add "$BENCH_A"
	ip netns add "$BENCH_B"
	ip link add veth-a netns "$BENCH_A" type veth peer name veth-b \
		netns "$BENCH_B"
	in_a ip addr add 10.10.0.1/24 dev veth-a
	in_b ip addr add 10.10.0.2/24 dev veth-b
	in_a ip link set veth-a up
	in_b ip link set veth-b up
	in_a ip link set lo up
	in_b ip link set lo up
	if [ "${1:-}" = split ]; then
		printf '%x' 1 >"$BENCH_TMP/rps-a"
		printf '%x' $((1 << last)) >"$BENCH_TMP/rps-b"
		in_a sh -c "cat $BENCH_TMP/rps-a \
			>/sys/class/net/veth-a/queues/rx-0/rps_cpus"
		in_b sh -c "cat $BENCH_TMP/rps-b \
			>/sys/class/net/veth-b/queues/rx-0/rps_cpus"
		echo 1 >/sys/devices/virtual/workqueue/cpumask
	fi
	sysctl -qw net.core.netdev_max_backlog=100000
	sysctl -qw net.core.rmem_max=33554432 net.core.wmem_max=33554432
}

bench_netns_del()
{
	ip netns del "$BENCH_A" 2>/dev/null || true
	ip netns del "$BENCH_B" 2>/dev/null || true
}

# bench_tunnel udp|tcp aes128|chachapoly: tun-a and tun-b, one peer each,
# keyed, up, and one ping through.
bench_tunnel()
{
	local transport=$1 cipher=$2

	bench_tunnel_down
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	if [ "$transport" = udp ]; then
		start_ready "$BENCH_TMP/a.log" in_a "$OVPN_CLI" new_peer tun-a \
			2 "$BENCH_PORT" 10.10.0.2 "$BENCH_PORT" tx_id 1 stay
		start_ready "$BENCH_TMP/b.log" in_b "$OVPN_CLI" new_peer tun-b \
			1 "$BENCH_PORT" 10.10.0.1 "$BENCH_PORT" tx_id 2 stay
	else
		echo "1 10.10.0.1 - - 2" >"$BENCH_TMP/peers"
		start_ready "$BENCH_TMP/b.log" in_b "$OVPN_CLI" tcp_listen \
			tun-b "$BENCH_PORT" "$BENCH_TMP/peers" stay
		start_ready "$BENCH_TMP/a.log" in_a "$OVPN_CLI" new_tcp_peer \
			tun-a 2 10.10.0.2 "$BENCH_PORT" tx_id 1 stay
	fi
	bench_tunnel_up 2 1 "$cipher"
}

# bench_tunnel_up A_PEER B_PEER CIPHER: keys on the peers tun-a and tun-b
# know each other as, addresses, up, and one ping through.
bench_tunnel_up()
{
	in_a "$OVPN_CLI" new_key tun-a "$1" primary 1 "$3" 0 "$BENCH_KEY" \
		>/dev/null
	in_b "$OVPN_CLI" new_key tun-b "$2" primary 1 "$3" 1 "$BENCH_KEY" \
		>/dev/null
	# 1400 inside keeps the encrypted packets within the veth's 1500:
	# fragmenting them would measure IP reassembly instead.
	in_a ip addr add 5.5.0.1/24 dev tun-a
	in_b ip addr add 5.5.0.2/24 dev tun-b
	in_a ip link set tun-a mtu 1400 up
	in_b ip link set tun-b mtu 1400 up
	in_a ping -q -c 3 -i 0.2 -w 10 5.5.0.2 >/dev/null ||
		lab_fail "no ping through the tunnel (tun-a to 5.5.0.2)"
}

# bench_alternate ROUNDS BEFORE TURN: each round, "BEFORE ROUND", then
# "TURN ROUND MODULE" for both modules, ours first in odd rounds and
# upstream's in even ones, so that a drift of the machine's load favours
# neither.
bench_alternate()
{
	local round first second

	for round in $(seq "$1"); do
		first=ours second=upstream
		if [ $((round % 2)) = 0 ]; then
			first=upstream second=ours
		fi
		"$2" "$round"
		"$3" "$round" "$first"
		"$3" "$round" "$second"
	done
}

# bench_run JSONL ROUND MODULE TRANSPORT CIPHER STREAMS MEASURE...: one
# measurement, MEASURE, which prints Mbit/s and leaves iperf3's JSON in
# $BENCH_TMP/iperf-*.json; a failed attempt is tried once more.  Recorded
# whatever its outcome, as a JSON line appended to JSONL (mbps null and
# iperf3's error where both attempts failed), the CPU count included:
#
#	{"cpus": 2, "round": 1, "module": "ours", "transport": "udp",
#	 "cipher": "aes128", "streams": 4, "mbps": 52.3}
bench_run()
{
	local jsonl=$1 round=$2 module=$3 transport=$4 cipher=$5 n=$6
	local mbps error=

	shift 6
	rm -f "$BENCH_TMP"/iperf-*.json
	if ! mbps=$("$@"); then
		sleep 2
		rm -f "$BENCH_TMP"/iperf-*.json
		if ! mbps=$("$@"); then
			mbps=null
			error=$(jq -rs 'map(.error // empty) | first //
				"iperf3 failed"' "$BENCH_TMP"/iperf-*.json \
				2>/dev/null || echo "iperf3 failed")
		fi
	fi
	jq -cn --argjson cpus "$(nproc)" --argjson round "$round" \
		--arg module "$module" --arg transport "$transport" \
		--arg cipher "$cipher" --argjson streams "$n" \
		--argjson mbps "$mbps" --arg error "$error" \
		'{cpus: $cpus, round: $round, module: $module,
		  transport: $transport, cipher: $cipher, streams: $streams,
		  mbps: $mbps} + (if $error == "" then {} else {error: $error} end)' \
		>>"$jsonl"
	bench_log "round $round $module $transport $cipher, $n streams: $mbps Mbit/s"
}

bench_tunnel_down()
{
	kill_started
	in_a ip link del tun-a 2>/dev/null || true
	in_b ip link del tun-b 2>/dev/null || true
}
