#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for running the real openvpn daemon (2.6 or later) on the module
# under test, shared by test-openvpn.sh and the lab's demo.  Sources lib.sh.
#
# - A throwaway PKI made at run time with openssl (an EC CA, a server
#   certificate with the serverAuth EKU, client certificates) and a
#   tls-crypt key made by openvpn itself, all under $TMPDIR: nothing
#   secret lives in the repository.
# - Server and client instances started in the background inside a
#   namespace, each with its log in $TMPDIR/<name>.log and its pid in
#   <log>.pid, listed in $OVPN_PIDS so that the cleanup of lib.sh stops
#   them; readiness is openvpn's "Initialization Sequence Completed".
# - Evidence of who carries the data: openvpn's own log (a DCO device was
#   opened, or a TUN/TAP device), the kind of the device, and the per-peer
#   counters of the module read over netlink with ovpn-cli.
# - iperf3 runs that return Mbit/s.
#
# Environment: OPENVPN, the daemon to run ("openvpn" from $PATH if unset);
# OVPN_LOG_DIR, where openvpn_workdir leaves the logs at exit.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OPENVPN=${OPENVPN:-openvpn}
# Ciphers a server offers; a client names the one it wants.
OVPN_SRV_CIPHERS=AES-256-GCM:CHACHA20-POLY1305
# How long an instance may take to come up or a tunnel to change, in
# seconds: TLS under emulation is slow, and many instances may come up at
# once.
OVPN_UP_WAIT=$(secs 120)

# openvpn_workdir: ovpn_workdir; at exit, once every process is gone,
# openvpn's logs are copied to $OVPN_LOG_DIR if it is set.
openvpn_workdir()
{
	ovpn_workdir
	trap 'ns_teardown; openvpn_keep_logs; rm -rf "$TMPDIR"' EXIT
}

openvpn_keep_logs()
{
	local f

	[ -n "${OVPN_LOG_DIR:-}" ] || return 0
	mkdir -p "$OVPN_LOG_DIR"
	for f in "$TMPDIR"/*.log; do
		[ -e "$f" ] && cp "$f" "$OVPN_LOG_DIR/"
	done
	return 0
}

# openvpn_require: skip the script unless openvpn and iperf3 are there.
openvpn_require()
{
	local tool

	for tool in "$OPENVPN" iperf3 openssl jq; do
		command -v "$tool" >/dev/null && continue
		echo "TAP version 13"
		echo "1..0 # SKIP $tool not installed"
		exit "$KSFT_SKIP"
	done
	# A userspace data channel (--disable-dco) needs a TUN device.
	[ -c /dev/net/tun ] || modprobe tun
}

# ovpn_pki: a CA, the server's certificate and a tls-crypt key in
# $TMPDIR/pki.  EC keys: quick to make and to use under emulation.
ovpn_pki()
{
	local dir=$TMPDIR/pki

	mkdir -p "$dir"
	cat >"$dir/pki.cnf" <<-EOF
	[req]
	distinguished_name = dn
	prompt = no
	[dn]
	[ca]
	basicConstraints = critical,CA:TRUE
	keyUsage = critical,keyCertSign,cRLSign
	subjectKeyIdentifier = hash
	[server]
	basicConstraints = CA:FALSE
	keyUsage = critical,digitalSignature,keyAgreement
	extendedKeyUsage = serverAuth
	[client]
	basicConstraints = CA:FALSE
	keyUsage = critical,digitalSignature,keyAgreement
	extendedKeyUsage = clientAuth
	EOF
	pki_req "$dir" ca ca
	pki_req "$dir" server \
		server -CA "$dir/ca.crt" -CAkey "$dir/ca.key"
	"$OPENVPN" --genkey tls-crypt "$dir/tc.key" >/dev/null
}

# pki_req DIR NAME SECTION [ARGS...]: key and certificate NAME, with the
# extensions of SECTION, self-signed unless ARGS name a CA.
pki_req()
{
	local dir=$1 name=$2 section=$3

	shift 3
	openssl req -config "$dir/pki.cnf" -x509 -newkey ec \
		-pkeyopt ec_paramgen_curve:prime256v1 -noenc -days 2 \
		-subj "/CN=$name" -extensions "$section" \
		-keyout "$dir/$name.key" -out "$dir/$name.crt" "$@" 2>/dev/null
}

# ovpn_pki_client NAME: a client certificate (CN NAME) signed by the CA.
ovpn_pki_client()
{
	local dir=$TMPDIR/pki

	pki_req "$dir" "$1" client -CA "$dir/ca.crt" -CAkey "$dir/ca.key"
}

# ovpn_log NAME: the log of instance NAME.
ovpn_log() { echo "$TMPDIR/$1.log"; }

# ovpn_start NAME NS CERT OPTION...: run openvpn in NS with certificate
# CERT of the PKI, in the background, logging at verb 3 (where openvpn
# reports DCO) to $TMPDIR/NAME.log.  No wait.
ovpn_start()
{
	local name=$1 ns=$2 cert=$3 pki=$TMPDIR/pki

	shift 3
	bg_start "$(ovpn_log "$name")" ip netns exec "$ns" "$OPENVPN" \
		--verb 3 --ca "$pki/ca.crt" --cert "$pki/$cert.crt" \
		--key "$pki/$cert.key" --tls-crypt "$pki/tc.key" "$@"
}

# ovpn_server NAME NS DEV PROTO PORT NET OPTION...: an openvpn server
# ("--server NET/24", topology subnet) on device DEV, listening with
# PROTO (udp6 and tcp6-server take IPv4 too) on PORT; it offers
# $OVPN_SRV_CIPHERS.  Add --disable-dco for a userspace data channel.
ovpn_server()
{
	local name=$1 ns=$2 dev=$3 proto=$4 port=$5 net=$6

	shift 6
	ovpn_start "$name" "$ns" server --server "$net" 255.255.255.0 \
		--topology subnet --dev "$dev" --dev-type tun \
		--proto "$proto" --port "$port" --dh none \
		--data-ciphers "$OVPN_SRV_CIPHERS" "$@"
}

# ovpn_client NAME NS DEV PROTO REMOTE PORT CIPHER OPTION...: an openvpn
# client with its own certificate (CN NAME), on device DEV, connecting
# with PROTO to REMOTE PORT and asking for data cipher CIPHER.
ovpn_client()
{
	local name=$1 ns=$2 dev=$3 proto=$4 remote=$5 port=$6 cipher=$7

	shift 7
	[ -r "$TMPDIR/pki/$name.crt" ] || ovpn_pki_client "$name"
	ovpn_start "$name" "$ns" "$name" --client --dev "$dev" \
		--dev-type tun --proto "$proto" --remote "$remote" "$port" \
		--nobind --remote-cert-tls server --connect-retry 1 1 \
		--data-ciphers "$cipher" "$@"
}

# ovpn_wait COMMAND...: COMMAND succeeds within $OVPN_UP_WAIT seconds.
ovpn_wait()
{
	local end=$((SECONDS + OVPN_UP_WAIT))

	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# ovpn_up NAME: instance NAME logged the end of its initialisation, or
# died (then the wait is over).
ovpn_up()
{
	local log

	log=$(ovpn_log "$1")
	log_has "$log" 'Initialization Sequence Completed' ||
		proc_gone "$(cat "$log.pid")"
}

# ovpn_wait_up NAME: instance NAME completed its initialisation: for a
# client, the tunnel is up.  Fails at once if it died.
ovpn_wait_up()
{
	local log

	log=$(ovpn_log "$1")
	ovpn_wait ovpn_up "$1" &&
		log_has "$log" 'Initialization Sequence Completed' && return 0
	tail -n 30 "$log"
	fail "openvpn $1 did not come up"
}

# ovpn_wait_log NAME PATTERN: the log of instance NAME has a line
# matching PATTERN, within the time openvpn gets for a change.
ovpn_wait_log()
{
	local log

	log=$(ovpn_log "$1")
	ovpn_wait log_has "$log" "$2" && return 0
	tail -n 30 "$log"
	fail "openvpn $1 never logged '$2'"
}

# ovpn_stop NAME [SIG]: SIG (TERM) to instance NAME, then wait until it
# is gone (after its exit notification, if it sends one).
ovpn_stop()
{
	bg_stop "$(ovpn_log "$1")" "${2:-TERM}"
}

# link_kind NS DEV: the rtnl link kind of DEV ("ovpn", "tun").
link_kind()
{
	ip -n "$1" -d -j link show dev "$2" | jq -r '.[0].linkinfo.info_kind'
}

# ovpn_uses_dco NAME NS DEV: openvpn NAME says it opened a DCO device and
# not a TUN/TAP one, and DEV is an ovpn device.
ovpn_uses_dco()
{
	local log

	log=$(ovpn_log "$1")
	log_has "$log" "DCO device $3 opened" ||
		fail "$1: no 'DCO device $3 opened' in its log" || return
	! log_has "$log" 'TUN/TAP device .* opened' ||
		fail "$1: opened a TUN/TAP device" || return
	! log_has "$log" 'disabling data channel offload' ||
		fail "$1: disabled DCO" || return
	expect_eq "kind of $3 of $1" ovpn "$(link_kind "$2" "$3")"
}

# ovpn_uses_tun NAME NS DEV: openvpn NAME carries its data in userspace
# over a TUN device: no DCO device in its log.
ovpn_uses_tun()
{
	local log

	log=$(ovpn_log "$1")
	log_has "$log" "TUN/TAP device $3 opened" ||
		fail "$1: no 'TUN/TAP device $3 opened' in its log" || return
	! log_has "$log" 'DCO device' || fail "$1: opened a DCO device" ||
		return
	expect_eq "kind of $3 of $1" tun "$(link_kind "$2" "$3")"
}

# dev_addr4 NS DEV: the first IPv4 address of DEV.
dev_addr4()
{
	ip -n "$1" -4 -j addr show dev "$2" | jq -r '.[0].addr_info[0].local'
}

# ovpn_peer NS DEV [VPN4]: the "peer ..." line of ovpn-cli get_peer for
# the peer of DEV whose VPN address is VPN4, or for its only peer.
ovpn_peer()
{
	local out

	out=$(ip netns exec "$1" "$OVPN_CLI" get_peer "$2") || {
		echo "$out"
		return 1
	}
	if [ -n "${3:-}" ]; then
		out=$(grep " vpn4=$3 " <<<"$out") ||
			fail "$2 has no peer with VPN address $3" >&2 || return
	fi
	[ "$(grep -c '^peer ' <<<"$out")" = 1 ] ||
		fail "$2: not one peer: $out" >&2 || return
	echo "$out"
}

# ovpn_key NS DEV PEER_ID SLOT: the "key ..." line of that key slot.
ovpn_key()
{
	ip netns exec "$1" "$OVPN_CLI" get_key "$2" "$3" "$4"
}

# key_id NS DEV ID SLOT: the key id in that slot.
key_id()
{
	local key

	key=$(ovpn_key "$@") || return
	peer_val key_id "$key"
}

# expect_moved WHAT BEFORE AFTER MIN FIELD...: each FIELD of a peer grew
# by MIN at least between two of its get_peer lines.
expect_moved()
{
	local what=$1 before=$2 after=$3 min=$4 f d

	shift 4
	for f in "$@"; do
		d=$(peer_delta "$f" "$before" "$after") || return
		[ "$d" -ge "$min" ] ||
			fail "$what: $f grew by $d, fewer than $min" || return
	done
}

# iperf_server NS PORT: an iperf3 server in NS, once it listens.
iperf_server()
{
	local log=$TMPDIR/iperf-$1-$2.log

	bg_start "$log" ip netns exec "$1" iperf3 -s -p "$2" --forceflush
	log_wait "$log" 'Server listening'
}

# iperf_run NS ADDR PORT SECS JSON [ARGS...]: an iperf3 client in NS
# sending to ADDR:PORT for SECS seconds, its JSON report in JSON.  The
# run may take a minute more than SECS (connecting, exchanging results),
# stretched on a slow kernel: on debug-rt one run outlasted the bare
# minute and was killed, leaving no report to say why it failed.
iperf_run()
{
	local ns=$1 addr=$2 port=$3 secs=$4 json=$5
	local limit=$((secs + $(secs 60))) rc=0

	shift 5
	ip netns exec "$ns" timeout "$limit" iperf3 -c "$addr" \
		-p "$port" -t "$secs" --connect-timeout 10000 -J "$@" \
		>"$json" || rc=$?
	case $rc in
	0) ;;
	124) fail "iperf3 to $addr:$port did not end within $limit s" ;;
	*)
		jq -r '.error // empty' "$json" 2>/dev/null
		fail "iperf3 to $addr:$port failed (exit status $rc)"
		;;
	esac
}

# iperf_mbits JSON: the Mbit/s the receiver of a run got, one decimal.
iperf_mbits()
{
	jq -r '.end.sum_received.bits_per_second / 1e5 | round / 10' "$1"
}

# iperf_mbits_at JSON: "<end of interval, s> <Mbit/s>" a line, the
# sender's view of each interval.
iperf_mbits_at()
{
	local filter='.intervals[].sum | '

	filter+='"\(.end * 10 | round / 10) '
	filter+='\(.bits_per_second / 1e5 | round / 10)"'
	jq -r "$filter" "$1"
}
