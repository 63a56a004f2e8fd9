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
#    .build/out/bench/.
#
# Usage: bench.sh [-c "CPUS..."] [-r rounds] [-t seconds] [-s "STREAMS..."]
#                 [-n packets] [counts|throughput|all]
#   defaults: -c "2 4" -r 3 -t 5 -s "1 4 8 16" -n 2000, all

. "$(dirname "$0")/../host/common.sh"

# lab_getopts sets these by name (printf -v), which shellcheck cannot see.
declare cpu_list rounds secs streams packets
lab_getopts "usage: bench.sh [-c cpus] [-r rounds] [-t s] [-s streams] [-n packets] [counts|throughput|all]" \
	"c:cpu_list=2 4" r:rounds=3 t:secs=5 "s:streams=1 4 8 16" \
	n:packets=2000 -- "$@"
shift $((OPTIND - 1))
what=${1:-all}
case $what in
counts|throughput|all) ;;
*) lab_die "what to run: counts, throughput or all" ;;
esac

bench=ovpn-lab/bench
out=.build/out/bench
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

report_args=()
if [ "$what" != throughput ]; then
	lab_log "counts: one boot under the ovpn-count plugin"
	"$LAB_DIR/host/boot.sh" -c 2 -o "$out/counts" \
		-p "/src/.build/bench/ovpn-count.so,out=/src/$out/counts/plugin.txt" \
		-- "$env" "$bench/guest-count.sh" "$packets" >/dev/null ||
		lab_die "the counting boot failed (see $out/counts/console.log)"
	lab_chroot "$root" python3 "/src/$bench/count-analyze.py" \
		"/src/$out/counts" >/dev/null
	report_args+=(--counts "/src/$out/counts/counts.json")
fi
if [ "$what" != counts ]; then
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
