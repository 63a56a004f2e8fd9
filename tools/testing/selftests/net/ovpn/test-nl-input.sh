#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad netlink input: every malformed, incomplete or inconsistent request
# is refused with the right errno and an extack message, and changes
# nothing.  Requests are built attribute by attribute with "ovpn-cli raw".
# The two peers the TCP tests add on purpose go with their sockets before
# the next test.  Also requests racing each other: PEER_SET against the
# removal of its peer (OVPN_PEER_SET_ROUNDS rounds, default 50).
#
#   ns "ovpn-nl-$$":  ovm (MP)   ovp (P2P)
#
# Attribute numbers (include/uapi/linux/ovpn.h): top level 1 ifindex,
# 2 peer, 3 keyconf; peer 1 id, 2 remote-ipv4, 3 remote-ipv6, 5 remote-port,
# 6 socket, 8 vpn-ipv4, 12 local-port, 13/14 keepalive, 24 tx-id;
# keyconf 1 peer-id, 2 slot, 3 key-id, 4 cipher-alg, 5/6 encrypt/decrypt
# dir; keydir 1 cipher-key, 2 nonce-tail.

source "$(dirname "$0")/lib.sh"

NS=ovpn-nl-$$
ovpn_workdir
KEY32=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
NONCE=a0a1a2a3a4a5a6a7

raw()
{
	ip netns exec "$NS" "$OVPN_CLI" raw "$@"
}

# The remote endpoint of every UDP peer the requests try to add.
REMOTE="2:ip:10.0.0.2 5:be16:1194"

# Peer 1 of ovm lives as long as the ovpn-cli holding its socket; the
# requests below must leave it as it is.  Valid raw requests go through:
# the failures that follow are the kernel's, not the request builder's.
valid_requests_pass()
{
	start_ready "$TMPDIR/peer1.log" ip netns exec "$NS" "$OVPN_CLI" \
		new_peer ovm 1 0 10.0.0.2 1194 vpn 5.5.5.2 stay
	expect_eq "valid peer_set" OK \
		"$(raw peer_set ifname ovm \
		   nest:2 1:u32:1 13:u32:0 14:u32:0 end)"
	expect_eq "valid key_new" OK \
		"$(raw key_new ifname ovm \
		   nest:3 1:u32:1 2:u32:0 3:u32:0 4:u32:1 \
		   nest:5 1:hex:$KEY32 2:hex:$NONCE end \
		   nest:6 1:hex:$KEY32 2:hex:$NONCE end end)"
}

peer_new_missing()
{
	expect_err EINVAL raw peer_new ifname ovm
	expect_err EINVAL raw peer_new ifname ovm nest:2 6:sock:udp4 $REMOTE \
		8:ip:5.5.5.3 end
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 $REMOTE \
		8:ip:5.5.5.3 end
	# A UDP peer needs its remote endpoint.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		8:ip:5.5.5.3 end
	# An MP peer needs a VPN address.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE end
}

peer_new_out_of_range()
{
	expect_err ERANGE raw peer_new ifname ovm nest:2 1:u32:0x1000000 \
		6:sock:udp4 $REMOTE 8:ip:5.5.5.3 end
	expect_err ERANGE raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		2:ip:10.0.0.2 5:be16:0 8:ip:5.5.5.3 end
	expect_err ERANGE raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 24:u32:0x1000000 end
}

peer_new_unexpected()
{
	# local-port is reported, never set.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 12:be16:1000 end
	# Attribute beyond the set.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 30:u32:1 end
	# Nested attribute without NLA_F_NESTED.
	expect_err EINVAL raw peer_new ifname ovm nonest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 end
	# Remote IPv6 of the wrong length (the policy's exact length).
	expect_err ERANGE raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp6 \
		3:hex:fe800000 5:be16:1194 8:ip:5.5.5.3 end
}

peer_new_inconsistent()
{
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		2:ip:10.0.0.2 3:ip:fd00::2 5:be16:1194 8:ip:5.5.5.3 end
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		2:ip:10.0.0.2 8:ip:5.5.5.3 end
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 13:u32:10 end
	# Local and remote addresses of different families.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 11:ip:fd00::1 8:ip:5.5.5.3 end
	# VPN addresses belong to MP devices.
	expect_err EINVAL raw peer_new ifname ovp nest:2 1:u32:2 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.3 end
	# The id is taken.
	expect_err EEXIST raw peer_new ifname ovm nest:2 1:u32:1 6:sock:udp4 \
		$REMOTE 8:ip:5.5.5.9 end
}

peer_new_bad_socket()
{
	local kind

	for kind in unix closed; do
		expect_err ENOTSOCK raw peer_new ifname ovm nest:2 1:u32:2 \
			6:sock:$kind $REMOTE 8:ip:5.5.5.3 end
	done
	# A TCP peer needs an established connection...
	for kind in tcp4 tcp4-listen; do
		expect_err ENOTCONN raw peer_new ifname ovm nest:2 1:u32:2 \
			6:sock:$kind 8:ip:5.5.5.3 end
	done
	# ...which is its endpoint: no remote address besides.
	expect_err EINVAL raw peer_new ifname ovm nest:2 1:u32:2 \
		6:sock:tcp4-connected $REMOTE 8:ip:5.5.5.3 end
	expect_err ENOTSOCK raw peer_new ifname ovm nest:2 1:u32:2 \
		6:u32:99999 $REMOTE 8:ip:5.5.5.3 end
}

# A connected TCP socket makes a peer, which lives as long as the socket:
# raw's exit closes it, for a disconnect.
tcp_peer_lives_with_socket()
{
	local log=$TMPDIR/tcp.ntf

	ntf_listen "$log" 1 ip netns exec "$NS"
	expect_eq "peer on a connected TCP socket" OK \
		"$(raw peer_new ifname ovm nest:2 1:u32:2 \
		   6:sock:tcp4-connected 8:ip:5.5.5.3 end)"
	ntf_expect "$log" '^ntf peer_del .* id=2 reason=transport_disconnect'
	expect_err ENOENT ip netns exec "$NS" "$OVPN_CLI" get_peer ovm 2
}

# A TCP listener in the namespace that never accepts: a connection to it
# is established all the same.
TCP_LISTENER='import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
print("READY", s.getsockname()[1], flush=True)
time.sleep(3600)'

# tcp_listener NAME: a TCP_LISTENER in the namespace, logging to
# $TMPDIR/NAME.log; prints its port.
tcp_listener()
{
	start_ready "$TMPDIR/$1.log" ip netns exec "$NS" python3 -c \
		"$TCP_LISTENER" >&2 || return
	sed -n 's/^READY //p' "$TMPDIR/$1.log"
}

# ns_shell SCRIPT [ARG...]: SCRIPT run by a bash in the namespace, with
# errexit on and lib.sh sourced, its arguments from $1 on.  Its
# descriptors are sockets the requests name; they close when it exits.
ns_shell()
{
	local script=$1

	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$NS" bash -c 'set -e; source "$0/lib.sh"; '"$script" \
		"$OVPN_DIR" "$@"
}

# A TCP socket carries one peer: a second one on it, on the same device or
# another, is refused.  The socket is a shell's descriptor 3, which the
# requests name; the shell's exit closes it and ends the first peer.
tcp_socket_in_use()
{
	local log=$TMPDIR/busy.ntf port

	port=$(tcp_listener listener) || return
	ntf_listen "$log" 1 ip netns exec "$NS"
	# shellcheck disable=SC2016 # expanded by the inner shell
	ns_shell '
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		expect_eq "peer 2 on descriptor 3" OK \
			"$("$OVPN_CLI" raw peer_new ifname ovm nest:2 1:u32:2 \
			   6:u32:3 8:ip:5.5.5.3 end)"
		expect_err EBUSY "$OVPN_CLI" raw peer_new ifname ovm nest:2 \
			1:u32:3 6:u32:3 8:ip:5.5.5.4 end
		expect_err EBUSY "$OVPN_CLI" raw peer_new ifname ovp nest:2 \
			1:u32:3 6:u32:3 end' "$port"
	ntf_expect "$log" '^ntf peer_del .* id=2 reason=transport_disconnect'
}

# A UDP socket that another encapsulation owns (L2TP over UDP, set with
# the UDP_ENCAP socket option) is not taken over.
FOREIGN_UDP='import socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 100, 3)  # UDP_ENCAP: UDP_ENCAP_L2TPINUDP
cmd = [sys.argv[1], "raw", "peer_new", "ifname", "ovm", "nest:2", "1:u32:9",
       "6:u32:%d" % s.fileno()] + sys.argv[2:]
r = subprocess.run(cmd, pass_fds=(s.fileno(),), capture_output=True,
                   text=True)
print(r.stdout, end="")
sys.exit(r.returncode)'

udp_socket_of_another_encap()
{
	# shellcheck disable=SC2086 # $REMOTE is a list of attributes
	expect_err EBUSY ip netns exec "$NS" python3 -c "$FOREIGN_UDP" \
		"$OVPN_CLI" $REMOTE 8:ip:5.5.5.9 end
	expect_err ENOENT ip netns exec "$NS" "$OVPN_CLI" get_peer ovm 9
}

# What an attached TCP socket answers userspace that misuses it.
tcp_socket_misuse()
{
	local out

	out=$(ip netns exec "$NS" python3 "$OVPN_DIR/tcp-misuse.py" \
		"$OVPN_CLI" ovm 4 5.5.5.4) || { echo "$out"; return 1; }
	echo "$out"
	# Every check ran: a skipped one must not pass unnoticed.
	expect_eq "checks passed" 19 "$(grep -c '^ok ' <<<"$out")"
}

# A VPN address names one peer: unicast, unique, and a peer keeps one.
vpn_address_rules()
{
	local bad new="peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 $REMOTE"

	for bad in 8:ip:127.0.0.1 8:ip:224.0.0.1 8:ip:255.255.255.255 \
		   8:ip:0.0.0.0 9:ip:::1 9:ip:ff02::1 9:ip:::ffff:192.0.2.1 \
		   9:ip:::; do
		expect_err EINVAL raw $new $bad end
	done
	expect_err EADDRINUSE raw $new 8:ip:5.5.5.2 end

	expect_err EDESTADDRREQ raw peer_set ifname ovm nest:2 1:u32:1 \
		8:ip:0.0.0.0 end
	expect_eq "add an IPv6 address" OK \
		"$(raw peer_set ifname ovm nest:2 1:u32:1 9:ip:fd00::2 end)"
	expect_eq "clear the IPv4 address" OK \
		"$(raw peer_set ifname ovm nest:2 1:u32:1 8:ip:0.0.0.0 end)"
	expect_err EDESTADDRREQ raw peer_set ifname ovm nest:2 1:u32:1 \
		9:ip::: end
	expect_eq "restore the IPv4 address" OK \
		"$(raw peer_set ifname ovm nest:2 1:u32:1 8:ip:5.5.5.2 end)"
	ip netns exec "$NS" "$OVPN_CLI" get_peer ovm 1 |
		grep -q ' vpn4=5.5.5.2 vpn6=fd00::2 ' ||
		fail "addresses not kept"
}

# A UDP socket is plain again when the device that used it goes: its
# encapsulation and user data are undone, so another device attaches it,
# and closing it then removes that device's peer.
udp_socket_given_back()
{
	local log=$TMPDIR/reuse.ntf

	ip netns exec "$NS" "$OVPN_CLI" new_iface ovx mp >/dev/null
	ntf_listen "$log" 2 ip netns exec "$NS"
	# shellcheck disable=SC2016 # expanded by the inner shell
	ns_shell '
		exec 3<>/dev/udp/127.0.0.1/9
		add() {
			"$OVPN_CLI" raw peer_new ifname ovx nest:2 1:u32:$1 \
				6:u32:3 2:ip:127.0.0.1 5:be16:9 \
				8:ip:5.5.6.$1 end
		}
		expect_eq "peer 1 on descriptor 3" OK "$(add 1)"
		ip link del ovx
		"$OVPN_CLI" new_iface ovx mp >/dev/null
		expect_eq "peer 2 on descriptor 3, another device" OK \
			"$(add 2)"'
	ntf_expect "$log" '^ntf peer_del .* id=2 reason=transport_disconnect' \
		'^ntf peer_del .* id=1 reason=teardown'
	ip netns exec "$NS" "$OVPN_CLI" del_iface ovx
}

# A UDP socket is given back with its last peer: once peer 1 of ovx is
# deleted, a DATA_V2 datagram sent to the socket reaches userspace rather
# than being swallowed, and another device attaches the socket.  The
# same holds for the socket of a PEER_NEW that fails after attaching it
# (an id taken).
udp_socket_given_back_with_last_peer()
{
	ip netns exec "$NS" "$OVPN_CLI" new_iface ovx mp >/dev/null
	ip netns exec "$NS" "$OVPN_CLI" new_iface ovy mp >/dev/null
	ip netns exec "$NS" python3 - "$OVPN_CLI" "$(secs 30)" <<-'EOF'
	import socket, struct, subprocess, sys, time

	cli, limit = sys.argv[1], int(sys.argv[2])

	def udp_socket():
	    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	    sk.bind(('127.0.0.1', 0))
	    return sk

	def add(sk, dev, peer):
	    """PEER_NEW on socket sk; OK, or ERR and the errno name."""
	    out = subprocess.run(
	        [cli, 'raw', 'peer_new', 'ifname', dev, 'nest:2',
	         '1:u32:%d' % peer, '6:u32:%d' % sk.fileno(), '2:ip:127.0.0.1',
	         '5:be16:9', '8:ip:5.5.6.%d' % peer, 'end'],
	        pass_fds=(sk.fileno(),), capture_output=True, text=True)
	    return ' '.join((out.stdout or out.stderr).split()[:2])

	def handed_back(sk, what):
	    """DATA_V2 for peer 1 reaches the socket's reader, in time."""
	    tx = udp_socket()
	    data = struct.pack('>II', (9 << 27) | 1, 1) + bytes(40)
	    sk.settimeout(0.2)
	    end = time.monotonic() + limit
	    while time.monotonic() < end:
	        tx.sendto(data, sk.getsockname())
	        try:
	            got = sk.recv(2048)
	        except socket.timeout:
	            continue
	        if got == data:
	            return
	        sys.exit('FAIL: %s: read %r' % (what, got))
	    sys.exit('FAIL: %s: DATA_V2 never reached userspace' % what)

	def expect(what, want, got):
	    if got != want:
	        sys.exit('FAIL: %s: expected %r, got %r' % (what, want, got))

	first, second = udp_socket(), udp_socket()
	expect('peer 1 on ovx', 'OK', add(first, 'ovx', 1))
	subprocess.run([cli, 'del_peer', 'ovx', '1'], check=True)
	handed_back(first, 'after the last peer of ovx')
	expect('the same socket on ovy', 'OK', add(first, 'ovy', 1))
	# A fresh socket whose peer is refused once it is attached.
	expect('peer 1 again on ovy', 'ERR EEXIST', add(second, 'ovy', 1))
	handed_back(second, 'after a refused peer')
	subprocess.run([cli, 'del_peer', 'ovy', '1'], check=True)
	handed_back(first, 'after the last peer of ovy')
	expect('the refused socket on ovx', 'OK', add(second, 'ovx', 2))
	EOF
	ip netns exec "$NS" "$OVPN_CLI" del_iface ovx
	ip netns exec "$NS" "$OVPN_CLI" del_iface ovy
}

# A TCP PEER_NEW refused after its socket was claimed (the id or the VPN
# address is taken) gives the socket back: it attaches to the next peer,
# which goes when the socket closes.
tcp_refused_peer_frees_socket()
{
	local log=$TMPDIR/refused.ntf port

	port=$(tcp_listener listener2) || return
	ntf_listen "$log" 1 ip netns exec "$NS"
	# shellcheck disable=SC2016 # expanded by the inner shell
	ns_shell '
		exec 3<>"/dev/tcp/127.0.0.1/$1" 4<>"/dev/tcp/127.0.0.1/$1"
		new() {
			"$OVPN_CLI" raw peer_new ifname ovm nest:2 1:u32:$1 \
				6:u32:$2 8:ip:$3 end
		}
		expect_err EEXIST new 1 3 5.5.5.9
		expect_err EADDRINUSE new 5 4 5.5.5.2
		take() { [ "$(new 5 3 5.5.5.5)" = OK ]; }
		wait_until take || fail "descriptor 3 stays claimed"' "$port"
	ntf_expect "$log" '^ntf peer_del .* id=5 reason=transport_disconnect'
}

# PEER_SET of a VPN address re-hashes the peer.  Racing it with the peer's
# removal, PEER_SET must never hash a removed peer again: that peer would
# keep its address (and, freed, stay in the table).  Per round: peer 9 on
# a fresh UDP socket, a child flipping its address between two with
# PEER_SET as fast as it can until the peer is gone, and meanwhile the
# peer's socket closed (even rounds) or PEER_DEL (odd ones).  Prints the
# PEER_SET outcomes: "raced" counts those that found the peer but came
# too late to change it, the window the race needs.
PEER_SET_RACE='import errno, json, os, random, socket, struct, sys, time

IFNAME, ROUNDS = sys.argv[1], int(sys.argv[2])
PEER, ADDRS = 9, ("5.5.5.90", "5.5.5.91")
CMD_NEW, CMD_SET, CMD_DEL = 1, 2, 4
GONE = "ENOENT no peer with id %d" % PEER
RACED = "ENOENT ovpn: peer removed meanwhile"


def nla(kind, data):
    return struct.pack("HH", 4 + len(data), kind) + data + \
        bytes(-len(data) % 4)


def u32(kind, val):
    return nla(kind, struct.pack("I", val))


def parse(data):
    out = {}
    while len(data) >= 4:
        size, kind = struct.unpack_from("HH", data)
        out[kind & 0x3fff] = data[4:size]
        data = data[(size + 3) & ~3:]
    return out


class Genl:
    """Generic netlink requests, each answered "ok" or "ENAME extack"."""

    def __init__(self):
        self.sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        # SOL_NETLINK: NETLINK_CAP_ACK (an error echoes only the header)
        # and NETLINK_EXT_ACK (it carries the message).
        self.sk.setsockopt(270, 10, 1)
        self.sk.setsockopt(270, 11, 1)
        self.seq, self.family, self.reply = 0, 0x10, b""
        self.ask(3, nla(2, b"ovpn\0"))          # CTRL_CMD_GETFAMILY
        self.family = struct.unpack("H", parse(self.reply)[1])[0]

    def ask(self, cmd, attrs):
        self.seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + attrs
        # NLM_F_REQUEST | NLM_F_ACK
        self.sk.send(struct.pack("IHHII", 16 + len(body), self.family, 5,
                                 self.seq, 0) + body)
        while True:
            buf = self.sk.recv(65536)
            while buf:
                size, kind, _, seq = struct.unpack_from("IHHI", buf)
                msg, buf = buf[16:size], buf[(size + 3) & ~3:]
                if seq != self.seq:
                    continue
                if kind != 2:   # a reply, before the NLMSG_ERROR ack
                    self.reply = msg[4:]
                    continue
                err = -struct.unpack_from("i", msg)[0]
                if not err:
                    return "ok"
                text = parse(msg[20:]).get(1, b"").rstrip(b"\0")
                return "%s %s" % (errno.errorcode[err], text.decode())

    def peer(self, cmd, *attrs):
        nest = u32(1, PEER) + b"".join(attrs)
        return self.ask(cmd, u32(1, socket.if_nametoindex(IFNAME)) +
                        nla(0x8000 | 2, nest))


def vpn4(i):
    return nla(8, socket.inet_aton(ADDRS[i % 2]))


def hammer(ready, out):
    """PEER_SET until the peer is gone; the count of each outcome."""
    nl, seen, i = Genl(), {}, 0
    end = time.monotonic() + 30
    while time.monotonic() < end:
        i += 1
        res = nl.peer(CMD_SET, vpn4(i))
        seen[res] = seen.get(res, 0) + 1
        if i == 1:
            os.write(ready, b"!")
        if res == GONE:
            break
    os.write(out, json.dumps(seen).encode())


def one_round(nl, n, seen):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    res = nl.peer(CMD_NEW, u32(6, udp.fileno()),
                  nla(2, socket.inet_aton("10.0.0.2")),
                  nla(5, struct.pack(">H", 1194)), vpn4(0))
    if res != "ok":
        return "round %d: PEER_NEW: %s" % (n, res)
    ready, out = os.pipe(), os.pipe()
    if not os.fork():
        try:
            # Only the parent holds the socket: its close removes the peer.
            udp.close()
            hammer(ready[1], out[1])
        finally:
            os._exit(0)
    os.close(ready[1])
    os.close(out[1])
    os.read(ready[0], 1)
    time.sleep(random.uniform(0, 0.002))
    res = nl.peer(CMD_DEL) if n % 2 else "ok"
    udp.close()
    data = b""
    while True:
        chunk = os.read(out[0], 4096)
        if not chunk:
            break
        data += chunk
    os.waitpid(-1, 0)
    os.close(ready[0])
    os.close(out[0])
    for key, count in json.loads(data or "{}").items():
        seen[key] = seen.get(key, 0) + count
    if res != "ok":
        return "round %d: PEER_DEL: %s" % (n, res)
    if GONE not in data.decode():
        return "round %d: the peer did not go" % n
    return None


nl, seen, t0 = Genl(), {}, time.monotonic()
for n in range(ROUNDS):
    err = one_round(nl, n, seen)
    if err:
        break
odd = {k: v for k, v in seen.items() if k not in ("ok", RACED, GONE)}
print("%d rounds in %.1f s; PEER_SET: %d ok, %d raced, %d after" %
      (n + 1, time.monotonic() - t0, seen.get("ok", 0),
       seen.get(RACED, 0), seen.get(GONE, 0)))
for key, count in odd.items():
    print("unexpected PEER_SET answer (%d times): %s" % (count, key))
if err:
    print(err)
sys.exit(1 if err or odd else 0)'

peer_set_races_removal()
{
	local out addr

	out=$(ip netns exec "$NS" python3 -c "$PEER_SET_RACE" ovm \
		"${OVPN_PEER_SET_ROUNDS:-50}") || { echo "$out"; return 1; }
	ktap_note "$out"
	expect_err ENOENT ip netns exec "$NS" "$OVPN_CLI" get_peer ovm 9
	# Each address is free again: a new peer takes it (and goes with
	# raw's socket).
	for addr in 5.5.5.90 5.5.5.91; do
		expect_eq "$addr is free" OK \
			"$(raw peer_new ifname ovm nest:2 1:u32:9 6:sock:udp4 \
			   $REMOTE 8:ip:$addr end)"
	done
}

# A UDP socket sends only to remotes of a family it can reach: an IPv6
# remote on an IPv4 socket is refused when it is given (it used to crash
# the first packet sent to it), an IPv4 remote on a dual-stack IPv6 socket
# is fine, as is a v4-mapped remote on an IPv4 socket.  The peers that are
# accepted go with their sockets when raw exits.
remote_family_fits_socket()
{
	expect_err EAFNOSUPPORT raw peer_new ifname ovm nest:2 1:u32:2 \
		6:sock:udp4 3:ip:fd00::2 5:be16:1194 8:ip:5.5.5.3 end
	expect_err EAFNOSUPPORT raw peer_set ifname ovm nest:2 1:u32:1 \
		3:ip:fd00::2 5:be16:1194 end
	ip netns exec "$NS" "$OVPN_CLI" get_peer ovm 1 |
		grep -q ' remote=10\.0\.0\.2:1194 ' ||
		fail "the refused PEER_SET changed peer 1's remote"
	expect_eq "IPv4 remote on an IPv6 socket" OK \
		"$(raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp6 \
		   2:ip:10.0.0.3 5:be16:1194 8:ip:5.5.5.3 end)"
	expect_eq "v4-mapped remote on an IPv4 socket" OK \
		"$(raw peer_new ifname ovm nest:2 1:u32:2 6:sock:udp4 \
		   3:ip:::ffff:10.0.0.3 5:be16:1194 8:ip:5.5.5.3 end)"
}

nothing_was_added()
{
	local out

	out=$(ip netns exec "$NS" "$OVPN_CLI" get_peer ovm)
	echo "$out"
	expect_eq "peers after the bad requests" 1 \
		"$(grep -c '^peer ' <<<"$out")"
	expect_eq "peers of the P2P device" "" \
		"$(ip netns exec "$NS" "$OVPN_CLI" get_peer ovp)"
}

peer_set_get_del_bad()
{
	expect_err EINVAL raw peer_set ifname ovm nest:2 1:u32:1 6:sock:udp4 end
	expect_err ENOENT raw peer_set ifname ovm nest:2 1:u32:7 13:u32:1 \
		14:u32:2 end
	expect_err EINVAL raw peer_get ifname ovm nest:2 1:u32:1 5:be16:1 end
	expect_err EINVAL raw peer_get ifname ovm nest:2 end
	expect_err EINVAL raw peer_del ifname ovm nest:2 1:u32:1 \
		8:ip:5.5.5.2 end
	expect_err ENOENT raw peer_del ifname ovm nest:2 1:u32:7 end
}

key_new_bad()
{
	local dir="1:hex:$KEY32 2:hex:$NONCE end"
	local dirs="nest:5 $dir nest:6 $dir"

	expect_err EINVAL raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 4:u32:1 end
	expect_err EINVAL raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 4:u32:0 $dirs end
	expect_err ERANGE raw key_new ifname ovm nest:3 1:u32:1 2:u32:2 \
		3:u32:0 4:u32:1 $dirs end
	expect_err ERANGE raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:8 4:u32:1 $dirs end
	expect_err ERANGE raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 4:u32:3 $dirs end
	expect_err ENOENT raw key_new ifname ovm nest:3 1:u32:7 2:u32:0 \
		3:u32:0 4:u32:1 $dirs end
	# A 7-byte nonce tail (policy), a 20-byte AES key (no such AES).
	expect_err ERANGE raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 4:u32:1 nest:5 1:hex:$KEY32 2:hex:a0a1a2a3a4a5a6 end \
		nest:6 1:hex:$KEY32 2:hex:$NONCE end \
		end
	expect_err EINVAL raw key_new ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 4:u32:1 nest:5 1:hex:${KEY32:0:40} 2:hex:$NONCE end \
		nest:6 1:hex:$KEY32 2:hex:$NONCE end \
		end
}

key_get_swap_del_bad()
{
	expect_err EINVAL raw key_get ifname ovm nest:3 1:u32:1 2:u32:0 \
		3:u32:0 end
	expect_err EINVAL raw key_get ifname ovm nest:3 1:u32:1 end
	expect_err ENOENT raw key_get ifname ovm nest:3 1:u32:1 2:u32:1 end
	expect_err ENOENT raw key_swap ifname ovm nest:3 1:u32:7 end
	expect_err EINVAL raw key_swap ifname ovm nest:3 1:u32:1 2:u32:0 end
	expect_err EINVAL raw key_del ifname ovm nest:3 1:u32:1 end
	# The valid key is still there.
	expect_eq "key after the bad requests" OK \
		"$(raw key_get ifname ovm nest:3 1:u32:1 2:u32:0 end |
		   head -c2)"
}

ovpn_require
ns_add "$NS"
ip netns exec "$NS" "$OVPN_CLI" new_iface ovm mp >/dev/null || exit 1
ip netns exec "$NS" "$OVPN_CLI" new_iface ovp p2p >/dev/null || exit 1

ktap_plan 20
run_test valid_requests_pass valid_requests_pass
run_test peer_new_missing peer_new_missing
run_test peer_new_out_of_range peer_new_out_of_range
run_test peer_new_unexpected peer_new_unexpected
run_test peer_new_inconsistent peer_new_inconsistent
run_test peer_new_bad_socket peer_new_bad_socket
run_test udp_socket_of_another_encap udp_socket_of_another_encap
run_test tcp_peer_lives_with_socket tcp_peer_lives_with_socket
run_test tcp_socket_in_use tcp_socket_in_use
run_test tcp_socket_misuse tcp_socket_misuse
run_test vpn_address_rules vpn_address_rules
run_test udp_socket_given_back udp_socket_given_back
run_test udp_socket_given_back_with_last_peer \
	udp_socket_given_back_with_last_peer
run_test tcp_refused_peer_frees_socket tcp_refused_peer_frees_socket
run_noted peer_set_races_removal peer_set_races_removal
run_test remote_family_fits_socket remote_family_fits_socket
run_test nothing_was_added nothing_was_added
run_test peer_set_get_del_bad peer_set_get_del_bad
run_test key_new_bad key_new_bad
run_test key_get_swap_del_bad key_get_swap_del_bad
ktap_finish
