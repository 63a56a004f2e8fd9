#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job ("./lab demo"): from a bare Debian machine, build the lab
# root (cached), our module and ovpn-cli, boot the lab kernel and run an
# unmodified openvpn 2.7 server and two clients on our module with DCO
# (guest/demo.sh): iperf3 through the tunnels, a report of what was
# measured and a PNG plot of the throughput over time, both in
# .build/out/demo.
#
# Usage: demo.sh [udp|tcp|epoch]
#   udp, tcp: the transport of the tunnels (default udp)
#   epoch: over UDP, openvpn with our DCO patch for epoch data keys
#   (tools/openvpn, built by openvpn-epoch.sh) in every role instead of the
#   unmodified one, so that the tunnels run openvpn's epoch data format in
#   the kernel
#   OVPN_DEMO_SECS: how long each client sends (default 10)

. "$(dirname "$0")/common.sh"

proto=${1:-udp}
daemon=
case $proto in
udp|tcp) ;;
epoch)
	proto=udp
	daemon=$("$LAB_DIR/host/openvpn-epoch.sh")
	;;
*) lab_die "usage: demo.sh [udp|tcp|epoch]" ;;
esac

ko=$("$LAB_DIR/host/build.sh" amd64)
cli=$("$LAB_DIR/host/build-cli.sh")

out=.build/out/demo
set +e
"$LAB_DIR/host/boot.sh" -o "$out" -- OVPN_KO=/src/$ko OVPN_CLI=/src/$cli \
	OVPN_DEMO_SECS="${OVPN_DEMO_SECS:-10}" \
	${daemon:+OPENVPN=/src/$daemon OVPN_DEMO_EPOCH=1} \
	ovpn-lab/guest/demo.sh "$proto" 2>/dev/null | grep '^demo: '
rc=${PIPESTATUS[0]}
set -e
[ -r "$REPO_DIR/$out/report.txt" ] || lab_die "the guest wrote no report"
echo
cat "$REPO_DIR/$out/report.txt"
echo
[ -r "$REPO_DIR/$out/throughput.png" ] && echo "plot:   $REPO_DIR/$out/throughput.png"
echo "report: $REPO_DIR/$out/report.txt"
echo "logs:   $REPO_DIR/$out/console.log"
[ "$rc" = 0 ] || lab_die "the demo failed (status $rc)"
