#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two P2P peers over UDP whose AEAD completes asynchronously: pcrypt,
# instantiated over both ciphers through crypto_user, outranks the
# synchronous implementations, so the keys installed afterwards get
# transforms that return -EINPROGRESS and complete from padata's workers,
# often on the other CPU.  A packet's AEAD request then stays in its CPU's
# buffer until that completion, and the packets sent meanwhile (a ping
# with a preload) allocate their own: both ways of getting a request, and
# the buffer given back from another CPU, under traffic.  Skips without
# CONFIG_CRYPTO_PCRYPT and CONFIG_CRYPTO_USER (Debian's kernels have them
# as modules; "config" does not list them, as the lab's debug kernels are
# keyed on it and would have to be rebuilt).
#
#   ns a: tun-a (P2P, 5.5.7.1) -- veth 10.10.7.1 == 10.10.7.2 -- ns b: tun-b
#   (P2P, 5.5.7.2); a knows b as peer 2, b knows a as peer 1.

source "$(dirname "$0")/lib.sh"

NA=ovpn-aa-$$
NB=ovpn-ab-$$
KEY=$OVPN_DIR/key.hex
ovpn_workdir

in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }

# crypto_user NEWALG|DELALG DRIVER: instantiate or remove an AEAD by its
# driver name, through NETLINK_CRYPTO; the exit status is the errno.
crypto_user()
{
	python3 - "$@" <<'EOF'
import socket, struct, sys

msg = {'NEWALG': 0x10, 'DELALG': 0x11}[sys.argv[1]]
# struct crypto_user_alg: name, driver name, module name, type (AEAD),
# mask (CRYPTO_ALG_TYPE_MASK), refcnt, flags.
alg = struct.pack('64s64s64sIIII', b'', sys.argv[2].encode(), b'',
                  0x3, 0xf, 0, 0)
# NLM_F_REQUEST | NLM_F_ACK
hdr = struct.pack('=IHHII', 16 + len(alg), msg, 0x5, 1, 0)
sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 21)
sk.send(hdr + alg)
err = struct.unpack_from('=i', sk.recv(4096), 16)[0]
sys.exit(-err)
EOF
}

# The driver names of the pcrypt instances, from /proc/crypto.
pcrypt_drivers()
{
	sed -n 's/^driver *: \(pcrypt(.*)\)$/\1/p' /proc/crypto
}

# pcrypt_over ALG: whether the highest priority ALG is a pcrypt instance.
pcrypt_over()
{
	awk -v alg="$1" '$1 == "name" { name = $3 }
		$1 == "driver" && name == alg && $3 ~ /^pcrypt\(/ { found = 1 }
		END { exit !found }' /proc/crypto
}

# NEWALG may answer EAGAIN while the new instance's self-test runs, and
# EEXIST once it is there: /proc/crypto says whether it is.
pcrypt_setup()
{
	local alg rc

	modprobe -q crypto_user 2>/dev/null || true
	modprobe -q pcrypt 2>/dev/null || true
	for alg in 'gcm(aes)' 'rfc7539(chacha20,poly1305)'; do
		for _ in 1 2 3 4 5; do
			rc=0
			crypto_user NEWALG "pcrypt($alg)" || rc=$?
			pcrypt_over "$alg" && break
			sleep 1
		done
		pcrypt_over "$alg" || {
			echo "no pcrypt($alg): errno $rc"
			return "$KSFT_SKIP"
		}
	done
	pcrypt_drivers
}

# Remove the instances once the keys using them are gone (their release
# waits for an RCU grace period and a work item), for the scripts that
# follow in the same boot.
pcrypt_remove()
{
	local drv left

	for _ in $(seq 50); do
		left=0
		for drv in $(pcrypt_drivers); do
			crypto_user DELALG "$drv" || left=1
		done
		[ "$left" = 0 ] && return 0
		sleep 0.2
	done
	fail "pcrypt instances still in use: $(pcrypt_drivers | xargs)"
}

setup_topology()
{
	ipv4_pair "$NA" veth-a 10.10.7.1 "$NB" veth-b 10.10.7.2
	in_a "$OVPN_CLI" new_iface tun-a
	in_b "$OVPN_CLI" new_iface tun-b
	start_ready "$TMPDIR/a.log" in_a "$OVPN_CLI" new_peer tun-a 2 3101 \
		10.10.7.2 3102 tx_id 1 stay
	start_ready "$TMPDIR/b.log" in_b "$OVPN_CLI" new_peer tun-b 1 3102 \
		10.10.7.1 3101 tx_id 2 stay
	link_up "$NA" tun-a 5.5.7.1
	link_up "$NB" tun-b 5.5.7.2
}

# kmem_trace 1|0: trace the allocations whose call site is in ovpn.ko.
kmem_trace()
{
	local tr=/sys/kernel/tracing ev base size

	[ -d "$tr/events/kmem" ] || mount -t tracefs nodev "$tr"
	base=$(cat /sys/module/ovpn/sections/.text)
	size=$(awk '$1 == "ovpn" { print $2 }' /proc/modules)
	[ "$1" = 0 ] || : >"$tr/trace"
	for ev in kmalloc kmem_cache_alloc; do
		[ "$1" = 0 ] || echo "call_site >= $base && call_site < \
$(printf '0x%x' $((base + size)))" >"$tr/events/kmem/$ev/filter"
		echo "$1" >"$tr/events/kmem/$ev/enable"
		[ "$1" = 1 ] || echo 0 >"$tr/events/kmem/$ev/filter"
	done
}

# Pings in flight 32 at a time, small and large, with KEY_ID and ALG:
# every one answered, and the peers counted them all.  How many
# allocations ovpn made (requests that found their CPU's buffer busy) is
# noted.
async_pings()
{
	local alg=$1 id=$2 before after n=200

	in_a "$OVPN_CLI" new_key tun-a 2 primary "$id" "$alg" 0 "$KEY"
	in_b "$OVPN_CLI" new_key tun-b 1 primary "$id" "$alg" 1 "$KEY"
	before=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	kmem_trace 1
	in_a ping -q -c "$n" -l 32 -i 0.01 -W 5 5.5.7.2
	in_a ping -q -c "$n" -l 32 -i 0.01 -W 5 -s 1200 5.5.7.2
	kmem_trace 0
	ktap_note "$alg: $(grep -c 'call_site=' /sys/kernel/tracing/trace) \
allocations in ovpn for $((4 * n)) AEAD operations"
	after=$(in_b "$OVPN_CLI" get_peer tun-b 1)
	expect_eq "$alg: echo requests b's peer got" $((2 * n)) \
		"$(peer_delta vpn_rx_packets "$before" "$after")"
	expect_eq "$alg: echo replies b's peer sent" $((2 * n)) \
		"$(peer_delta vpn_tx_packets "$before" "$after")"
}

aes_gcm_async() { async_pings aes128 1; }
chacha20_poly1305_async() { async_pings chachapoly 2; }

pcrypt_teardown()
{
	ns_teardown
	pcrypt_remove
}

ovpn_require

ktap_plan 5
run_test pcrypt_setup pcrypt_setup
if [ "$ktap_skipped" != 0 ]; then
	# Whatever NEWALG made must not outrank the next scripts' ciphers.
	pcrypt_remove
	for t in setup aes_gcm_async chacha20_poly1305_async teardown; do
		ktap_n=$((ktap_n + 1))
		ktap_skipped=$((ktap_skipped + 1))
		echo "ok $ktap_n $t # SKIP no pcrypt"
	done
	ktap_finish
fi
run_test setup setup_topology
run_noted aes_gcm_async aes_gcm_async
run_noted chacha20_poly1305_async chacha20_poly1305_async
run_test teardown pcrypt_teardown
ktap_finish
