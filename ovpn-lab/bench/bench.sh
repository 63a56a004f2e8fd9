#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark ("./lab bench"): our module against the distribution
# kernel's own ovpn module (upstream's), in the same boot.
#
# 1. Counts: one boot under the ovpn-count QEMU plugin (bench/ovpn-count.c)
#    runs bench/guest-count.sh: per packet, TX and RX apart, the kernel
#    instructions, atomic read-modify-writes and heap allocations each
#    module adds to a plain veth.  Counts do not depend on the host's load.
# 2. Throughput: one boot per guest CPU count runs bench/guest-throughput.sh:
#    iperf3 TCP through one peer, 1 to 16 streams, UDP and TCP transport,
#    AES-128-GCM and ChaCha20-Poly1305, the plain veth as the ceiling, the
#    modules alternating over several rounds.
# 3. bench-report.py: results.json, report.md, report.rst and PNG plots in
#    .build/out/bench/ (-o: another directory).
#
# Modes not part of "all":
#
# scale:  one boot under the ovpn-count plugin, counting module blocks too,
#         runs guest-count.sh scale: kernel instructions per packet, in
#         all and in ovpn's code, TX and RX, through the one real peer of
#         an MP device with 100 and 100,000 peers and with 10,000 filler
#         peers in the real one's hash buckets (scale-peers.py, cached in
#         .build/bench/scale-peers), on each module.
# memory: one boot per count of possible CPUs (-P), 2 of them online,
#         runs guest-memory.sh: bytes per peer, key included, on each
#         module, over -N peers.
# lines:  one boot per guest CPU count (-c, default 4 and 8) under the
#         plugin's coherence model, running guest-lines.sh: cache-line
#         transfers between CPUs per packet, through one peer, for TX
#         fan-in, RX fan-out by RPS and a flood ping, UDP and TCP
#         transport, on each module, and our module's parallel path
#         (par-*); lines-analyze.py writes lines.md
#         and lines.json in each boot's directory.
# latency: one boot per guest CPU count (-c, default 2) runs
#         guest-latency.sh over the TCP transport: ping RTT through the
#         tunnel idle and under one iperf3 stream, and how 2 and 4 streams
#         share it (Jain's index), each module, -r rounds of -t seconds
#         (defaults 3 and 10); the table is latency.txt in each boot's
#         directory.  With -R MBIT the outer path from client to server
#         is a bottleneck of that rate (tbf on its veth), as an operator's
#         uplink is: slower than the CPUs, so that queues build.
#
# And one that measures nothing, not part of "all":
#
# hostab: one boot with 4 CPUs runs bench/host-ab.sh, the script an
#         operator runs on a real machine (root, no VM) for the same A/B,
#         with short settings (defaults -t 3 -r 1 -s "1 4") and our
#         parallel path too (-p): proof that it sets up, alternates the
#         modules, turns the flag on, tabulates and cleans up.  Its
#         table is printed, its files are in <outdir>/hostab/result/.
#
# Usage: bench.sh [-c "CPUS..."] [-r rounds] [-t seconds] [-s "STREAMS..."]
#                 [-n packets] [-P "POSSIBLE..."] [-N peers] [-R mbit]
#                 [-o outdir]
#                 [counts|throughput|all|scale|memory|lines|latency|hostab]
#   defaults: -c "2 4" -r 3 -t 5 -s "1 4 8 16" -n 2000 -P "2 64" -N 2000,
#   -o .build/out/bench, all; for lines, -c "4 8" -n 512

. "$(dirname "$0")/../host/common.sh"

# lab_getopts sets these by name (printf -v), which shellcheck cannot see.
declare cpu_list rounds secs streams packets possible_list peers rate out
lab_getopts "usage: bench.sh [-c cpus] [-r rounds] [-t s] [-s streams] [-n packets] [-P possible] [-N peers] [-R mbit] [-o dir] [counts|throughput|all|scale|memory|lines|latency|hostab]" \
	c:cpu_list r:rounds t:secs s:streams \
	n:packets "P:possible_list=2 64" N:peers=2000 R:rate \
	o:out=.build/out/bench -- "$@"
shift $((OPTIND - 1))
what=${1:-all}
case $what in
counts|throughput|all|scale|memory) ;;
hostab)
	rounds=${rounds:-1} secs=${secs:-3} streams=${streams:-1 4}
	;;
lines)
	cpu_list=${cpu_list:-4 8}
	packets=${packets:-512}
	;;
latency)
	cpu_list=${cpu_list:-2} secs=${secs:-10}
	;;
*) lab_die "what to run: counts, throughput, all, scale, memory, lines, latency or hostab" ;;
esac
rounds=${rounds:-3} secs=${secs:-5} streams=${streams:-1 4 8 16}
cpu_list=${cpu_list:-2 4}
packets=${packets:-2000}

bench=ovpn-lab/bench
root=$("$LAB_DIR/root/mkroot.sh")
ko=$("$LAB_DIR/host/build.sh" amd64)
mkdir -p "$REPO_DIR/$out"
lab_log "building ovpn-cli, ovpn-flow and the ovpn-count plugin"
lab_chroot "$root" /bin/sh -c "cd /src/tools/testing/selftests/net/ovpn && \
	cc -O2 -Wall -I/src/include/uapi \
	\$(pkg-config --cflags libnl-3.0 libnl-genl-3.0) \
	-o /src/.build/ovpn-cli ovpn-cli.c \
	\$(pkg-config --libs libnl-3.0 libnl-genl-3.0)"
"$LAB_DIR/bench/build-tools.sh" "$root"
env="OVPN_KO=/src/$ko OVPN_CLI=/src/.build/ovpn-cli"

if [ "$what" = hostab ]; then
	lab_log "hostab: host-ab.sh in a 4-CPU guest, $rounds rounds of $secs s"
	# Both modules and our parallel path, each stream count, a round:
	# seconds and up to 15 more.
	runs=$(($(wc -w <<<"$streams") * 3 * rounds))
	"$LAB_DIR/host/boot.sh" -c 4 -o "$out/hostab" \
		-t $((runs * (secs + 15) + 600)) -- "$env" \
		"$bench/host-ab.sh" -k "/src/$ko" -c /src/.build/ovpn-cli \
		-r "$rounds" -t "$secs" -s "'$streams'" -p \
		-o "/src/$out/hostab/result" >/dev/null ||
		lab_die "the hostab boot failed (see $out/hostab/console.log)"
	cat "$REPO_DIR/$out/hostab/result/table.txt"
	grep -h 'bench: perf c2c' "$REPO_DIR/$out/hostab/console.log" || true
	exit 0
fi

report_args=()
if [ "$what" = scale ]; then
	peers_dir=.build/bench/scale-peers
	# The fillers take a minute to find: made again when their recipe
	# changes.
	if [ ! -e "$REPO_DIR/$peers_dir/collide-upstream.info" ] ||
		[ "$LAB_DIR/bench/scale-peers.py" -nt \
			"$REPO_DIR/$peers_dir/collide-upstream.info" ] ||
		[ "$LAB_DIR/tests/ovpn_hash.py" -nt \
			"$REPO_DIR/$peers_dir/collide-upstream.info" ]; then
		lab_log "scale: finding the filler peers"
		lab_chroot "$root" python3 "/src/$bench/scale-peers.py" \
			"/src/$peers_dir" 1 5.5.0.2 10000 100 100000
	fi
	lab_log "scale: one boot under the ovpn-count plugin"
	# Blocks of module code (x86-64's module area) counted one by one.
	plugin=/src/.build/bench/ovpn-count.so,out=/src/$out/scale/plugin.txt
	"$LAB_DIR/host/boot.sh" -c 2 -o "$out/scale" -t 7200 \
		-p "$plugin,modules=0xffffffffc0000000" \
		-- "$env" "$bench/guest-count.sh" scale "$packets" >/dev/null ||
		lab_die "the scale boot failed (see $out/scale/console.log)"
	cp "$REPO_DIR/$peers_dir"/collide-*.info "$REPO_DIR/$out/scale/"
	lab_chroot "$root" python3 "/src/$bench/count-analyze.py" --scale \
		"/src/$out/scale" >/dev/null
	report_args+=(--scale "/src/$out/scale/scale.json")
fi
if [ "$what" = lines ]; then
	for cpus in $cpu_list; do
		lab_log "lines: $cpus guest CPUs under the coherence model"
		dir=$out/lines-$cpus
		mkdir -p "$REPO_DIR/$dir"
		"$LAB_DIR/host/boot.sh" -c "$cpus" -o "$dir" -t 7200 \
			-p "/src/.build/bench/ovpn-count.so,out=/src/$dir/plugin.txt,modules=0xffffffffc0000000,lines=1" \
			-- "$env" "$bench/guest-lines.sh" "$packets" >/dev/null ||
			lab_die "the lines boot failed (see $dir/console.log)"
		lab_chroot "$root" python3 "/src/$bench/lines-analyze.py" \
			"/src/$dir" >/dev/null
		cat "$REPO_DIR/$dir/lines.md"
	done
	exit 0
fi
if [ "$what" = latency ]; then
	for cpus in $cpu_list; do
		lab_log "latency: $cpus guest CPUs, $rounds rounds of $secs s"
		dir=$out/latency-$cpus
		# Per round and module: 4 runs of the seconds, and setup.
		"$LAB_DIR/host/boot.sh" -c "$cpus" -o "$dir" \
			-t $((rounds * 2 * (4 * secs + 60) + 600)) -- \
			"$env" "$bench/guest-latency.sh" "$rounds" "$secs" \
			${rate:+"$rate"} >/dev/null ||
			lab_die "the latency boot failed (see $dir/console.log)"
		cat "$REPO_DIR/$dir/latency.txt"
	done
	exit 0
fi
if [ "$what" = memory ]; then
	"$LAB_DIR/host/build-kselftest.sh" >/dev/null
	for possible in $possible_list; do
		lab_log "memory: $possible possible CPUs, 2 online"
		"$LAB_DIR/host/boot.sh" -c 2 -P "$possible" \
			-o "$out/memory-$possible" -- "$env" \
			"$bench/guest-memory.sh" "$peers" >/dev/null ||
			lab_die "the memory boot failed (see $out/memory-$possible/console.log)"
		report_args+=(--memory "/src/$out/memory-$possible/memory.txt")
	done
fi
if [ "$what" = counts ] || [ "$what" = all ]; then
	lab_log "counts: one boot under the ovpn-count plugin"
	"$LAB_DIR/host/boot.sh" -c 2 -o "$out/counts" \
		-p "/src/.build/bench/ovpn-count.so,out=/src/$out/counts/plugin.txt" \
		-- "$env" "$bench/guest-count.sh" "$packets" >/dev/null ||
		lab_die "the counting boot failed (see $out/counts/console.log)"
	lab_chroot "$root" python3 "/src/$bench/count-analyze.py" \
		"/src/$out/counts" >/dev/null
	report_args+=(--counts "/src/$out/counts/counts.json")
fi
if [ "$what" = throughput ] || [ "$what" = all ]; then
	for cpus in $cpu_list; do
		lab_log "throughput: $cpus guest CPUs, $rounds rounds"
		# A run takes its seconds and up to 10 more to set up and finish.
		runs=$(($(wc -w <<<"$streams") * (8 * 2 + 1) * rounds))
		"$LAB_DIR/host/boot.sh" -c "$cpus" -o "$out/throughput-$cpus" \
			-t $((runs * (secs + 10) + 600)) -- \
			"$env" "$bench/guest-throughput.sh" "$rounds" "$secs" \
			"'$streams'" >/dev/null ||
			lab_die "the throughput boot failed (see $out/throughput-$cpus/console.log)"
		report_args+=(--throughput "/src/$out/throughput-$cpus/throughput.jsonl")
	done
fi
lab_chroot "$root" python3 "/src/ovpn-lab/bench/bench-report.py" \
	"/src/$out" "${report_args[@]}" >/dev/null
cat "$REPO_DIR/$out/report.md"
echo
echo "report: $REPO_DIR/$out/report.md (rst: report.rst, data: results.json)"
ls "$REPO_DIR/$out"/*.png 2>/dev/null | sed 's/^/plot:   /' || true
