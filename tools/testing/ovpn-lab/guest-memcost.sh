#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest: memory cost of peers and key slots, measured.  An MP
# device gets N peers sharing one UDP socket, then one key each; per-CPU
# and slab memory (/proc/meminfo) are read before and after each step.
#
# Usage: guest-memcost.sh [N]     (default 1000)

set -eu

n=${1:-1000}
cli=${OVPN_CLI:-/src/.build/ovpn-cli}
key=/src/tools/testing/selftests/net/ovpn/key.hex
tmp=$(mktemp -d)

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

snapshot()
{
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
	echo "$(meminfo Percpu) $(meminfo Slab)"
}

for dep in $(modinfo -F depends "$OVPN_KO" | tr ',' ' '); do
	modprobe "$dep"
done
insmod "$OVPN_KO"
"$cli" new_iface ovmem mp

for i in $(seq "$n"); do
	echo "$i 10.$((i / 250)).$((i % 250)).1 1194 10.200.$((i / 250)).$((i % 250 + 1)) -"
done >"$tmp/peers"

read -r pcpu0 slab0 <<<"$(snapshot)"
"$cli" new_multi_peer ovmem 1194 "$tmp/peers" stay >"$tmp/log" 2>&1 &
for _ in $(seq 600); do grep -q READY "$tmp/log" && break; sleep 0.5; done
read -r pcpu1 slab1 <<<"$(snapshot)"
for i in $(seq "$n"); do
	"$cli" new_key ovmem "$i" primary 0 aes256 0 "$key"
done
read -r pcpu2 slab2 <<<"$(snapshot)"

{
	echo "guest: $(nproc) CPUs, kernel $(uname -r)"
	echo "peers: $(("$cli" get_peer ovmem) | grep -c '^peer ')"
	echo "per peer:     percpu $(((pcpu1 - pcpu0) * 1024 / n)) B," \
	     "slab $(((slab1 - slab0) * 1024 / n)) B"
	echo "per key slot: percpu $(((pcpu2 - pcpu1) * 1024 / n)) B," \
	     "slab $(((slab2 - slab1) * 1024 / n)) B"
} | tee "$OVPN_LAB_OUT/memcost.txt"
kill %1
