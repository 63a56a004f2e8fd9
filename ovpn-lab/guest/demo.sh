#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for "./lab demo": an unmodified openvpn 2.7 server and
# two clients on our module, each in a namespace of its own, then a report.
#
#   ns alice: vpn0 (DCO) == veth 10.10.1.2 / 10.10.1.1 ==+
#                                                        +== ns srv: ovpn-srv
#   ns bob:   vpn0 (DCO) == veth fd00:2::2 / fd00:2::1 ==+   (DCO, MP)
#
#   openvpn --server 10.8.0.0/24 --topology subnet, listening on udp6 (or
#   tcp6-server) port 1194, both families; alice connects over IPv4 and
#   picks AES-256-GCM, bob over IPv6 with ChaCha20-Poly1305.
#
# The throwaway CA and certificates are made with openssl at run time.
# DCO is shown by openvpn's own log, by the kind of each device, and by
# our module's per-peer counters read over generic netlink (ovpn-cli),
# which must account for every byte iperf3 moved.  iperf3 runs from both
# clients at once, bob starting later, sampled every second; the samples
# become $OVPN_LAB_OUT/throughput.png (gnuplot).  Everything is written
# to $OVPN_LAB_OUT/report.txt; the exit status says whether DCO carried
# the data.
#
# Usage: demo.sh [udp|tcp]
#   OVPN_KO, OVPN_CLI: the module and ovpn-cli; OVPN_DEMO_SECS: how long
#   each client sends (default 10); OVPN_DEMO_EPOCH=1: OPENVPN is openvpn
#   with our epoch patch, and every tunnel must run the epoch data format.

source "$(dirname "$0")/../tests/openvpn-lib.sh"
set -e

proto=${1:-udp}
secs=${OVPN_DEMO_SECS:-10}
# bob starts this many seconds after alice, so that the plot shows the two
# sharing the machine.
lag=3
out=$OVPN_LAB_OUT
report=$out/report.txt
SRV=demo-srv
CLIENTS="alice bob"
# openvpn's logs stay with the results.
OVPN_LOG_DIR=$out
openvpn_workdir

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# secs_since MS: seconds since the time MS, one decimal.
secs_since()
{
	local d=$(($(now_ms) - $1))

	printf '%d.%d\n' $((d / 1000)) $((d % 1000 / 100))
}

say() { echo "demo: $*"; }

die()
{
	echo "demo: FAILED: $*" | tee -a "$report"
	exit 1
}

# The client's transport, cipher and iperf3 port.
client_remote()
{
	case $1 in
	alice) echo 10.10.1.1 ;;
	bob) echo fd00:2::1 ;;
	esac
}

client_cipher()
{
	case $1 in
	alice) echo AES-256-GCM ;;
	bob) echo CHACHA20-POLY1305 ;;
	esac
}

client_port()
{
	case $1 in
	alice) echo 5201 ;;
	bob) echo 5202 ;;
	esac
}

client_proto()
{
	local fam=4

	[ "$1" = bob ] && fam=6
	case $proto in
	udp) echo "udp$fam" ;;
	tcp) echo "tcp$fam-client" ;;
	esac
}

# counters LINE: the per-peer counters of a get_peer line, readable.
counters()
{
	local f

	for f in vpn_rx vpn_tx link_rx link_tx; do
		printf '    %-8s %12s bytes %9s packets\n' "$f" \
			"$(peer_val "${f}_bytes" "$1")" \
			"$(peer_val "${f}_packets" "$1")"
	done
}

# stats JSON: "average min max" Mbit/s of the per-second samples.
stats()
{
	iperf_mbits_at "$1" | awk '
		NR == 1 || $2 < min { min = $2 }
		NR == 1 || $2 > max { max = $2 }
		{ sum += $2 }
		END { printf "%.1f %.1f %.1f\n", sum / NR, min, max }'
}

# plot: the per-second samples of both clients, on one time axis.
plot()
{
	local c

	for c in $CLIENTS; do
		awk -v off="$(cat "$TMPDIR/$c.start")" \
			'{ printf "%.1f %s\n", $1 + off, $2 }' \
			"$out/throughput-$c.dat" >"$TMPDIR/$c.plot"
	done
	gnuplot <<-EOF
	set terminal pngcairo size 900,500 font "DejaVu Sans,11"
	set output "$out/throughput.png"
	set title "openvpn $ovpn_version with DCO on our ovpn module ($proto, $(uname -r), QEMU TCG)"
	set xlabel "seconds since alice started"
	set ylabel "Mbit/s (iperf3, client to server)"
	set yrange [0:*]
	set grid
	set key top right
	plot "$TMPDIR/alice.plot" with linespoints lw 2 title "alice (IPv4, AES-256-GCM)", \
	     "$TMPDIR/bob.plot" with linespoints lw 2 title "bob (IPv6, ChaCha20-Poly1305)"
	EOF
}

# clients_noted: note the up time of each client whose log says it is up
# (or that died); true once all are.
clients_noted()
{
	local c left=0

	for c in $CLIENTS; do
		[ -s "$TMPDIR/$c.up" ] && continue
		if ovpn_up "$c"; then
			secs_since "$(cat "$TMPDIR/$c.t0")" >"$TMPDIR/$c.up"
		else
			left=1
		fi
	done
	[ "$left" = 0 ]
}

case $proto in
udp) srv_proto=udp6 ;;
tcp) srv_proto=tcp6-server ;;
*) die "unknown transport '$proto' (udp or tcp)" ;;
esac
mkdir -p "$out"
: >"$report"
booted=$(cut -d' ' -f1 /proc/uptime)

t=$(now_ms)
lab_insmod "$OVPN_KO" || die "cannot load $OVPN_KO"
load_ms=$(($(now_ms) - t))
ovpn_version=$("$OPENVPN" --version | sed -n '1s/^OpenVPN \([^ ]*\) .*/\1/p')

say "making a throwaway CA and certificates"
t=$(now_ms)
ovpn_pki
for c in $CLIENTS; do
	ovpn_pki_client "$c"
done
pki_s=$(secs_since "$t")

ns_add "$SRV"
ns_add alice
ns_add bob
ip link add veth-a netns "$SRV" type veth peer name eth0 netns alice
ip link add veth-b netns "$SRV" type veth peer name eth0 netns bob
link_up "$SRV" veth-a 10.10.1.1
link_up alice eth0 10.10.1.2
link_up "$SRV" veth-b fd00:2::1
link_up bob eth0 fd00:2::2

say "starting the openvpn server ($srv_proto)"
t=$(now_ms)
ovpn_server server "$SRV" ovpn-srv "$srv_proto" 1194 10.8.0.0 \
	--keepalive 10 60
ovpn_wait_up server || die "the server did not come up"
srv_up=$(secs_since "$t")

say "starting the clients"
for c in $CLIENTS; do
	now_ms >"$TMPDIR/$c.t0"
	ovpn_client "$c" "$c" vpn0 "$(client_proto "$c")" \
		"$(client_remote "$c")" 1194 "$(client_cipher "$c")"
done
# Both come up at once: note when each one's log says so.
ovpn_wait clients_noted || true
for c in $CLIENTS; do
	ovpn_wait_up "$c" || die "$c did not come up"
done

# Who carries the data: openvpn says it opened DCO devices, the devices
# are ovpn ones, and every peer is known to our module.
ovpn_uses_dco server "$SRV" ovpn-srv || die "the server does not use DCO"
for c in $CLIENTS; do
	ovpn_uses_dco "$c" "$c" vpn0 || die "$c does not use DCO"
	[ "${OVPN_DEMO_EPOCH:-0}" = 0 ] ||
		log_has "$(ovpn_log "$c")" 'protocol-flags.* aead-epoch' ||
		die "$c does not use epoch data keys"
	in_ns "$c" ping -q -c 3 -i 0.2 -W 5 10.8.0.1 >/dev/null ||
		die "$c cannot ping the server through the tunnel"
done
lab_is_loaded "$OVPN_KO" ||
	die "the loaded ovpn module is not $OVPN_KO"

for c in $CLIENTS; do
	ovpn_peer "$SRV" ovpn-srv "$(dev_addr4 "$c" vpn0)" >"$TMPDIR/$c.before" ||
		die "the server's module has no peer for $c"
done

say "iperf3: alice for $secs s, bob for $secs s starting $lag s later"
for c in $CLIENTS; do
	iperf_server "$SRV" "$(client_port "$c")" || die "no iperf3 server"
done
t=$(now_ms)
for c in $CLIENTS; do
	[ "$c" = bob ] && sleep "$lag"
	secs_since "$t" >"$TMPDIR/$c.start"
	iperf_run "$c" 10.8.0.1 "$(client_port "$c")" "$secs" \
		"$TMPDIR/$c.json" -i 1 &
	echo $! >"$TMPDIR/$c.iperf"
done
for c in $CLIENTS; do
	wait "$(cat "$TMPDIR/$c.iperf")" || die "iperf3 from $c failed"
	iperf_mbits_at "$TMPDIR/$c.json" >"$out/throughput-$c.dat"
	ovpn_peer "$SRV" ovpn-srv "$(dev_addr4 "$c" vpn0)" >"$TMPDIR/$c.after"
done
plot || die "gnuplot failed"

{
	if [ "${OVPN_DEMO_EPOCH:-0}" = 1 ]; then
		echo "ovpn demo: openvpn $ovpn_version with our epoch data keys patch on our module, with DCO"
	else
		echo "ovpn demo: openvpn $ovpn_version on our module, with DCO"
	fi
	echo "  kernel:       $(uname -r), $(nproc) CPUs (QEMU TCG), up ${booted} s when the demo started"
	echo "  module:       $OVPN_KO, build id $(lab_build_id | cut -c1-16)..., loaded in $load_ms ms"
	echo "  openvpn:      $("$OPENVPN" --version | head -n1 | cut -d' ' -f1-3)"
	echo "                $(grep -m1 -o 'DCO version: .*' "$(ovpn_log server)")"
	echo "  PKI:          throwaway EC CA, server and 2 client certificates + tls-crypt key, made in $pki_s s"
	echo "  server:       --server 10.8.0.0/24 --topology subnet, $srv_proto port 1194, up in $srv_up s"
	echo "                \"$(grep -m1 -o 'DCO device .* opened' "$(ovpn_log server)")\"," \
		"ovpn-srv: kind $(link_kind "$SRV" ovpn-srv), mode $(in_ns "$SRV" "$OVPN_CLI" get_mode ovpn-srv)"
	for c in $CLIENTS; do
		printf '  %-14s%s to %s, VPN address %s, tunnel up in %s s\n' "$c:" \
			"$(client_proto "$c")" "$(client_remote "$c")" \
			"$(dev_addr4 "$c" vpn0)" "$(cat "$TMPDIR/$c.up")"
		echo "                $(grep -m1 -o "Data Channel: cipher '[^']*'" "$(ovpn_log "$c")")," \
			"\"$(grep -m1 -o 'DCO device .* opened' "$(ovpn_log "$c")")\", vpn0: kind $(link_kind "$c" vpn0)"
		grep -m1 -o 'protocol-flags[^,]*' "$(ovpn_log "$c")" |
			sed 's/^/                /' || true
	done
	echo
	echo "throughput, iperf3 TCP from each client to the server through the tunnel:"
	for c in $CLIENTS; do
		read -r avg min max <<<"$(stats "$TMPDIR/$c.json")"
		printf '  %-6s %6.1f Mbit/s received over %s s (per second: avg %s, min %s, max %s), started at +%s s\n' \
			"$c" "$(iperf_mbits "$TMPDIR/$c.json")" "$secs" "$avg" "$min" "$max" \
			"$(cat "$TMPDIR/$c.start")"
	done
	echo
	echo "per-peer counters of the server's ovpn-srv, from our module over generic netlink (ovpn-cli get_peer):"
	for c in $CLIENTS; do
		line=$(cat "$TMPDIR/$c.after")
		# A TCP peer has its connection, no remote address.
		remote=$(peer_val remote "$line" 2>/dev/null) ||
			remote="(its TCP connection)"
		echo "  peer $(peer_val id "$line") = $c, remote $remote, VPN $(peer_val vpn4 "$line")," \
			"keepalive $(peer_val keepalive_interval "$line")/$(peer_val keepalive_timeout "$line") s," \
			"key: $(ovpn_key "$SRV" ovpn-srv "$(peer_val id "$line")" primary | sed 's/^key //')"
		counters "$line"
	done
	echo
	echo "who carried the data:"
	ok=1
	for c in $CLIENTS; do
		got=$(jq -r '.end.sum_received.bytes' "$TMPDIR/$c.json")
		moved=$(peer_delta vpn_rx_bytes "$(cat "$TMPDIR/$c.before")" \
			"$(cat "$TMPDIR/$c.after")")
		if [ "$moved" -ge "$got" ]; then
			verdict="DCO: yes"
		else
			verdict="DCO: NO"
			ok=0
		fi
		echo "  $c: iperf3 received $got bytes; our module decrypted $moved bytes of IP packets from $c meanwhile -> $verdict"
	done
	echo
	echo "plot: throughput.png in the results folder (per-second samples: throughput-alice.dat, throughput-bob.dat)"
} >>"$report"
cat "$report"
[ "$ok" = 1 ]
