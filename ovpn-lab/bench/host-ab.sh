#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# For an operator on a real machine (root, no VM): our ovpn module against
# the running distribution kernel's own (upstream's), one peer, iperf3 TCP
# with -P N streams through it, on the same machine and in the same boot.
# It builds nothing: our module (built for the running kernel: the
# repository's Makefile, or DKMS) and ovpn-cli (the selftests'
# tools/testing/selftests/net/ovpn/ovpn-cli) are given to it.
#
# The tunnel is the lab's (bench-lib.sh): two namespaces joined by a veth,
# a P2P device in each knowing the other as its one peer.  Each round
# loads one module, measures every stream count, then the other, the
# order swapped every round; the table gives the medians of the rounds.
# Where perf is installed and "perf c2c" works, one more run a module in
# the first round, at the largest stream count and not counted in the
# table, is recorded with "perf c2c record -a" and its report summarised
# (HITM counts, the most contended cache lines and their symbols).
#
# Both modules are named ovpn: upstream's is loaded with "modprobe ovpn"
# (or -u FILE where our build is installed and modprobe finds it), ours
# with insmod.  It refuses to start where ovpn is in use (a device of it in
# any namespace, or a reference held), where the loaded ovpn is neither of
# the two, or where a namespace bench-a or bench-b exists; on exit,
# Ctrl-C included, the namespaces go and the module is left as it was found.
#
# With -p our module runs each stream count a second time in its turn,
# with the "parallel-crypto" private flag on at both devices (ethtool):
# the parallel path, which spreads one peer's AEAD over every CPU, as
# module "ours-par" in the results and a column of its own in the table.
#
# In DIR (-o; default ./host-ab-<time>): results.jsonl (a JSON object a run,
# bench_run's), table.txt, and with perf c2c-<module>.data, .txt (the
# report) and .summary.
#
# Usage: host-ab.sh -k OURS.ko -c OVPN-CLI [-s "STREAMS..."] [-t seconds]
#                   [-r rounds] [-T udp|tcp] [-C aes128|chachapoly]
#                   [-u UPSTREAM.ko] [-a CPUS] [-b CPUS] [-n] [-p] [-o DIR]
#   defaults: -s "1 8 32" -t 10 -r 5 -T udp -C aes128; -a, -b: the CPUs
#   (taskset -c list) of the iperf3 client and server; -n: no perf c2c;
#   -p: our parallel path too.

set -eu

usage="usage: host-ab.sh -k OURS.ko -c OVPN-CLI [-s streams] [-t s] [-r rounds] [-T udp|tcp] [-C aes128|chachapoly] [-u UPSTREAM.ko] [-a cpus] [-b cpus] [-n] [-p] [-o dir]"

die()
{
	echo "host-ab: $*" >&2
	exit 1
}

ko='' cli='' streams="1 8 32" secs=10 rounds=5 transport=udp cipher=aes128
upstream_ko='' client_cpus='' server_cpus='' use_perf=1 parallel=0
out=host-ab-$(date +%Y%m%d-%H%M%S)
while getopts k:c:s:t:r:T:C:u:a:b:npo:h opt; do
	case $opt in
	k) ko=$OPTARG ;;
	c) cli=$OPTARG ;;
	s) streams=$OPTARG ;;
	t) secs=$OPTARG ;;
	r) rounds=$OPTARG ;;
	T) transport=$OPTARG ;;
	C) cipher=$OPTARG ;;
	u) upstream_ko=$OPTARG ;;
	a) client_cpus=$OPTARG ;;
	b) server_cpus=$OPTARG ;;
	n) use_perf=0 ;;
	p) parallel=1 ;;
	o) out=$OPTARG ;;
	h)
		echo "$usage"
		exit 0
		;;
	*)
		echo "$usage" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || { echo "$usage" >&2; exit 2; }
if [ -z "$ko" ] || [ -z "$cli" ]; then
	echo "$usage" >&2
	exit 2
fi
case $transport in udp|tcp) ;; *) die "-T: udp or tcp" ;; esac
case $cipher in aes128|chachapoly) ;; *) die "-C: aes128 or chachapoly" ;; esac
for n in $secs $rounds $streams; do
	case $n in
	'' | *[!0-9]* | 0) die "-t, -r and -s take positive whole numbers" ;;
	esac
done

# What it refuses, before it changes anything.
[ "$(id -u)" = 0 ] || die "must run as root (it loads modules and makes namespaces)"
command -v iperf3 >/dev/null || die "iperf3 is not installed"
for tool in ip nsenter jq readelf modinfo modprobe insmod rmmod ping taskset; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
[ "$parallel" = 0 ] || command -v ethtool >/dev/null ||
	die "ethtool is not installed (-p sets the parallel-crypto flag)"
[ -f "$ko" ] || die "our module $ko: no such file"
[ -x "$cli" ] || die "ovpn-cli $cli: no such executable"
ko=$(readlink -f "$ko")
cli=$(readlink -f "$cli")
[ -z "$upstream_ko" ] || [ -f "$upstream_ko" ] ||
	die "upstream's module $upstream_ko: no such file"

# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# bench-lib.sh's inputs.
# shellcheck disable=SC2034
OVPN_KO=$ko OVPN_CLI=$cli BENCH_UPSTREAM_KO=$upstream_ko
set_up=0
initial=none

kver=$(uname -r)
ko_kver=$(modinfo -F vermagic "$ko" | awk '{ print $1 }')
[ "$ko_kver" = "$kver" ] ||
	die "our module $ko is built for ${ko_kver:-no kernel}, this is $kver"
if [ -z "$upstream_ko" ]; then
	upstream_ko=$(modinfo -n ovpn 2>/dev/null) ||
		die "upstream's module: modprobe finds no ovpn for $kver (name it with -u)"
fi
case $upstream_ko in
/*) ;;
*) die "ovpn is built into this kernel ($upstream_ko): nothing to unload" ;;
esac
ours_id=$(lab_ko_build_id "$ko")
upstream_id=$(lab_ko_build_id "$upstream_ko")
[ -n "$ours_id" ] || die "our module $ko has no build id"
[ "$ours_id" != "$upstream_id" ] ||
	die "modprobe ovpn finds our build ($upstream_ko; installed by DKMS or make install?): name the distribution's module with -u"

# ovpn_devices: the ovpn devices of every network namespace, as
# "namespace device" lines (the namespaces of processes and the named
# ones, each once).
ovpn_devices()
{
	local ns seen=" " id

	for ns in /run/netns/* /proc/[0-9]*/ns/net; do
		id=$(stat -L -c %i "$ns" 2>/dev/null) || continue
		case $seen in *" $id "*) continue ;; esac
		seen="$seen$id "
		nsenter --net="$ns" ip -d -j link show 2>/dev/null |
			jq -r --arg ns "$ns" '.[] |
				select(.linkinfo.info_kind == "ovpn") |
				"\($ns) \(.ifname)"' 2>/dev/null || true
	done
}

for ns in "$BENCH_A" "$BENCH_B"; do
	[ ! -e "/run/netns/$ns" ] ||
		die "a namespace $ns exists, not made by this run (ip netns del $ns, if it is a leftover)"
done
if [ -d /sys/module/ovpn ]; then
	busy=$(ovpn_devices)
	[ -z "$busy" ] ||
		die "ovpn is in use by devices this did not create:" \
			"$(echo "$busy" | paste -sd ',' | sed 's/,/, /g')"
	[ "$(cat /sys/module/ovpn/refcnt)" = 0 ] ||
		die "ovpn is in use (a reference held: $(cat /sys/module/ovpn/refcnt))"
	case $(lab_build_id) in
	"$ours_id") initial=ours ;;
	"$upstream_id") initial=upstream ;;
	*) die "the loaded ovpn is neither $ko nor $upstream_ko: unload it first" ;;
	esac
fi

perf=0
if [ "$use_perf" = 0 ]; then
	bench_log "perf c2c: not asked for (-n)"
elif ! command -v perf >/dev/null; then
	bench_log "perf c2c: perf is not installed, skipped"
elif ! perf c2c record -a -o "$BENCH_TMP/probe.data" -- sleep 0.2 \
	>"$BENCH_TMP/probe.log" 2>&1; then
	bench_log "perf c2c: does not work here, skipped: $(tail -n 1 "$BENCH_TMP/probe.log")"
else
	perf=1
fi
rm -f "$BENCH_TMP/probe.data"

mkdir -p "$out"
out=$(readlink -f "$out")
jsonl=$out/results.jsonl
: >"$jsonl"

client=(in_a)
[ -z "$client_cpus" ] || client=(in_a taskset -c "$client_cpus")
server=(in_b)
[ -z "$server_cpus" ] || server=(in_b taskset -c "$server_cpus")

cleanup()
{
	local rc=$?

	set +e
	trap - EXIT INT TERM
	if [ "$set_up" = 1 ]; then
		[ ! -e "$BENCH_TMP/iperf3.pid" ] ||
			kill "$(cat "$BENCH_TMP/iperf3.pid")" 2>/dev/null
		bench_tunnel_down
		bench_netns_del
		bench_unload
		case $initial in
		ours|upstream) bench_load "$initial" ;;
		esac
		bench_log "cleaned up: namespaces gone, ovpn as found ($initial)"
	fi
	rm -rf "$BENCH_TMP"
	exit "$rc"
}
trap cleanup EXIT
# What failed, where errexit would end the run without a word.
set -E
trap 'bench_log "failed (status $?): line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# iperf N [IPERF3-ARGS...]: N streams through the tunnel for the run's
# seconds, in Mbit/s as the server received them.
iperf()
{
	local n=$1

	shift
	"${client[@]}" timeout $((secs * 3 + 60)) iperf3 -c 5.5.0.2 -P "$n" \
		-t "$secs" -J "$@" >"$BENCH_TMP/iperf-1.json" 2>&1 || return 1
	jq '.end.sum_received.bits_per_second / 1e3 | round / 1e3' \
		"$BENCH_TMP/iperf-1.json"
}

# c2c MODULE N: one run recorded system-wide with perf c2c, its report and
# a summary: the load HITM (or, on AMD, peer snoop) counts, then the ten
# most contended cache lines, each with its counts as the report's Pareto
# table heads them (remote and local HITM, stores) and the symbols that
# touch it.
c2c()
{
	local module=$1 n=$2 data=$out/c2c-$1.data

	bench_log "perf c2c: $module, $n streams"
	if ! perf c2c record -a -o "$data" -- ip netns exec "$BENCH_A" \
		timeout $((secs * 3 + 60)) iperf3 -c 5.5.0.2 -P "$n" \
		-t "$secs" >"$BENCH_TMP/c2c.log" 2>&1; then
		bench_log "perf c2c record failed: $(tail -n 1 "$BENCH_TMP/c2c.log")"
		return 0
	fi
	perf c2c report -i "$data" --stdio >"$out/c2c-$module.txt" 2>/dev/null ||
		bench_log "perf c2c report failed"
	{
		echo "perf c2c, $module, $n streams, $transport, $cipher:"
		grep -E '^ *(Total records|Load .*(HITM|Peer))' \
			"$out/c2c-$module.txt" || true
		echo "Most contended cache lines, with the Pareto table's counts" \
			"(HITM remote, local, [snoop peer,] store refs):"
		awk '
		/Shared Cache Line Distribution Pareto/ { on = 1 }
		!on { next }
		/^  *-----*$/ { head = 1; next }
		head && $1 ~ /^[0-9]+$/ && $NF ~ /^0x/ {
			if (++line > 10)
				exit
			counts = $2
			for (i = 3; i < NF; i++)
				counts = counts " " $i
			printf "line %d at %s: %s\n", $1, $NF, counts
			head = 0
			delete seen
			next
		}
		line {
			for (i = 1; i < NF; i++)
				if (($i == "[k]" || $i == "[.]") &&
				    !seen[$(i + 1)]++)
					printf "    %s %s\n", $(i + 1), $(i + 2)
		}' "$out/c2c-$module.txt"
	} >"$out/c2c-$module.summary"
}

# turn ROUND MODULE: every stream count on MODULE, loaded afresh.
turn()
{
	local round=$1 module=$2 n

	bench_load "$module"
	if [ "$module" = upstream ] && lab_is_loaded "$ko"; then
		die "loading upstream's ovpn loaded ours"
	fi
	bench_tunnel "$transport" "$cipher"
	for n in $streams; do
		bench_run "$jsonl" "$round" "$module" "$transport" "$cipher" \
			"$n" iperf "$n"
	done
	if [ "$perf" = 1 ] && [ "$round" = 1 ]; then
		c2c "$module" "$max"
	fi
	if [ "$module" = ours ] && [ "$parallel" = 1 ]; then
		# The same tunnel, its crypto now on every CPU: the flag
		# takes effect from the next packet.
		in_a ethtool --set-priv-flags tun-a parallel-crypto on
		in_b ethtool --set-priv-flags tun-b parallel-crypto on
		for n in $streams; do
			bench_run "$jsonl" "$round" ours-par "$transport" \
				"$cipher" "$n" iperf "$n"
		done
	fi
	bench_tunnel_down
	bench_unload
}

max=$(echo "$streams" | tr ' ' '\n' | sort -n | tail -n 1)
bench_log "$(nproc) CPUs, $kver; ours: $ko; upstream: $upstream_ko"
bench_log "$transport, $cipher, streams $streams, $secs s a run, $rounds rounds"
set_up=1
bench_unload
# Not split: veth's own CPU placement; -a and -b pin what runs above it.
# shellcheck disable=SC2119
bench_netns
"${server[@]}" iperf3 -s -D --pidfile "$BENCH_TMP/iperf3.pid"
wait_until tcp_listening "$BENCH_B" 5201

bench_alternate "$rounds" : turn

# The table: per stream count, the medians of the rounds in Gbit/s and
# ours over upstream's; with -p, the parallel path's and its ratio too.
{
	echo "ovpn A/B: $transport, $cipher, one peer, iperf3 -P N, $secs s a run," \
		"rounds: $rounds (medians); $(nproc) CPUs, $kver"
	printf '%8s %12s %16s  %-18s' streams "ours Gbit/s" "upstream Gbit/s" \
		"ours/upstream"
	[ "$parallel" = 0 ] ||
		printf ' %16s  %s' "ours-par Gbit/s" "ours-par/upstream"
	echo
	jq -rs '
	def median: map(select(. != null)) | sort | length as $n |
		if $n == 0 then null
		elif $n % 2 == 1 then .[($n - 1) / 2]
		else (.[$n / 2 - 1] + .[$n / 2]) / 2 end;
	group_by(.streams)[] | . as $runs |
	[.[0].streams] + ([("ours", "upstream", "ours-par") as $m |
		[$runs[] | select(.module == $m) | .mbps] | median] |
		map(if . == null then null else . / 1000 end)) | @tsv' "$jsonl" |
	awk -F '\t' -v par="$parallel" '
	function gbps(v) { return v == "" ? "failed" : sprintf("%.3f", v) }
	function ratio(a, b) {
		if (a == "" || b == "" || b == 0)
			return "-"
		return sprintf("%.3f (%+.1f%%)", a / b, (a / b - 1) * 100)
	}
	{
		printf "%8s %12s %16s  %-18s", $1, gbps($2), gbps($3),
			ratio($2, $3)
		if (par)
			printf " %16s  %s", gbps($4), ratio($4, $3)
		printf "\n"
	}'
} | tee "$out/table.txt"
for f in "$out"/c2c-*.summary; do
	[ -e "$f" ] || continue
	echo
	cat "$f"
done
bench_log "results: $out (results.jsonl, table.txt)"
