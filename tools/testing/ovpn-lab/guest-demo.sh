#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest for "./lab demo": load our module, create devices,
# write a short report to $OVPN_LAB_OUT/report.txt.

set -eu

cli=/src/.build/ovpn-cli
report=$OVPN_LAB_OUT/report.txt
up=$(cut -d' ' -f1 /proc/uptime)

t0=$(date +%s%N)
insmod "$OVPN_KO"
t1=$(date +%s%N)
"$cli" new_iface ovpn-mp mp
"$cli" new_iface ovpn-p2p
ip link set ovpn-mp up
ip link set ovpn-p2p up

{
	echo "ovpn demo report"
	echo "  kernel:        $(uname -r), $(nproc) CPUs (QEMU TCG)"
	echo "  guest booted:  ${up} s after power-on"
	echo "  module load:   $(((t1 - t0) / 1000000)) ms, taint $(cat /sys/module/ovpn/taint)"
	for dev in ovpn-mp ovpn-p2p; do
		echo "  $dev:  mode $("$cli" get_mode "$dev"), mtu $(cat /sys/class/net/$dev/mtu), carrier $(cat /sys/class/net/$dev/carrier)"
	done
	echo "  genl family:   $("$cli" family | grep -E '^(id|version|mcgrp)' | xargs)"
	echo "  peer-get:      $("$cli" cmd peer_get ifname ovpn-mp || true)"
	echo "  data path:     not implemented yet (tunnels arrive with the UDP data path)"
} >"$report"
cat "$report"
