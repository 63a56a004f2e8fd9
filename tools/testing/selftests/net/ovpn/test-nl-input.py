#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Bad netlink input: every malformed, incomplete or inconsistent request
# is refused with the right errno and an extack message, and changes
# nothing.  The requests are YNL's, from the spec; what the spec cannot
# express (an attribute by number, a nest without NLA_F_NESTED) Loose
# encodes with YNL's own primitives.  A peer of a request given a socket
# kind ('udp4', ...) rather than a descriptor gets a fresh socket, closed
# after the request: a peer made on it goes with it.  Also requests racing
# each other: PEER_SET against the removal of its peer
# (OVPN_PEER_SET_ROUNDS rounds, default 50).
#
#   ns "ovpn-nl-<pid>":  ovm (MP)   ovp (P2P)

import errno
import ipaddress
import json
import os
import random
import socket
import struct
import subprocess
import time

from ovpn_ynl import (Fail, NlError, SLOW, CLI, HERE, SPEC, YnlFamily, cli,
                      enter_netns, expect_eq, ktap_run)
# pylint: disable=import-error,wrong-import-order
from pyynl.lib.ynl import NlMsgs

NS = f'ovpn-nl-{os.getpid()}'
KEY = bytes(range(32))
NONCE = bytes(range(0xa0, 0xa8))
DIR = {'cipher-key': KEY, 'nonce-tail': NONCE}
REMOTE = {'remote-ipv4': int(ipaddress.ip_address('10.0.0.2')),
          'remote-port': 1194}
UDP_ENCAP, UDP_ENCAP_L2TPINUDP = 100, 3


class Raw(bytes):
    """An attribute's payload as it is, whatever the spec says of it."""


class Loose(YnlFamily):
    """YNL's encoder, also for what the spec cannot express: an attribute
    by number (an int key, its value bytes) and a Raw payload (a nest then
    goes without NLA_F_NESTED)."""

    def _add_attr(self, space, name, value, search_attrs):
        if isinstance(name, int):
            return self._add_attr_raw(name, value)
        if isinstance(value, Raw):
            return self._add_attr_raw(self.attr_sets[space][name].value,
                                      value)
        return super()._add_attr(space, name, value, search_attrs)

    def _decode_extack(self, request, op, extack, vals):
        # The offending attribute may be one the spec does not know: its
        # offset is left as it is.
        try:
            super()._decode_extack(request, op, extack, vals)
        except Exception:  # pylint: disable=broad-except
            pass

    def encode(self, op, vals):
        """The request OP with VALS, as YNL would send it."""
        return self._encode_message(self.ops[op], vals, None, 1)

    def flat(self, space, value):
        """The attributes of a nest in SPACE, as a Raw payload."""
        return Raw(b''.join(self._add_attr(space, k, v, None)
                            for k, v in value.items()))


def family():
    return Loose(str(SPEC), schema='')


def u32(val):
    return struct.pack('I', val)


def ip(addr):
    """ADDR as YNL encodes it: an int (IPv4), 16 bytes (IPv6)."""
    addr = ipaddress.ip_address(addr)
    return int(addr) if addr.version == 4 else addr.packed


def peer(pid=2, sock='udp4', vpn='5.5.5.3', remote=None, extra=None, **kw):
    """A PEER nest: REMOTE's endpoint, unless REMOTE is False; KW with _
    for -, EXTRA by number."""
    nest = {'id': pid} if pid is not None else {}
    if sock is not None:
        nest['socket'] = sock
    if remote is not False:
        nest.update(remote or REMOTE)
    if vpn:
        nest['vpn-ipv6' if ':' in vpn else 'vpn-ipv4'] = ip(vpn)
    nest.update({k.replace('_', '-'): v for k, v in kw.items()})
    nest.update(extra or {})
    return nest


def keyconf(pid=1, slot=0, key_id=0, alg=1, enc=DIR, dec=DIR):
    nest = {'peer-id': pid, 'slot': slot, 'key-id': key_id,
            'cipher-alg': alg, 'encrypt-dir': enc, 'decrypt-dir': dec}
    return {k: v for k, v in nest.items() if v is not None}


def new_socket(kind, keep):
    """A socket of KIND, its descriptor; it and its listener go to KEEP."""
    if kind == 'tcp4-connected':
        keep.append(socket.create_server(('127.0.0.1', 0)))
        sock = socket.create_connection(keep[-1].getsockname())
    elif kind == 'tcp4-listen':
        sock = socket.create_server(('0.0.0.0', 0))
    else:
        sock = socket.socket(*{
            'udp4': (socket.AF_INET, socket.SOCK_DGRAM),
            'udp6': (socket.AF_INET6, socket.SOCK_DGRAM),
            'tcp4': (socket.AF_INET, socket.SOCK_STREAM),
            'unix': (socket.AF_UNIX, socket.SOCK_DGRAM),
            'closed': (socket.AF_INET, socket.SOCK_DGRAM)}[kind])
    keep.append(sock)
    fd = sock.fileno()
    if kind == 'closed':
        sock.close()
    return fd


class Ctx:
    """The namespace, its devices, peer 1's socket and the family."""

    def __init__(self):
        enter_netns(NS)
        subprocess.run(['sysctl', '-qw',
                        'net.ipv6.conf.default.accept_ra=0'], check=True)
        cli('new_iface', 'ovm', 'mp')
        cli('new_iface', 'ovp', 'p2p')
        self.ynl = family()
        self.sock1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock1.bind(('0.0.0.0', 0))

    def num(self, name, space='peer'):
        """The number of attribute NAME, for a request that has no name
        for it."""
        return self.ynl.attr_sets[space][name].value

    def ask(self, op, dev, flat=False, **nests):
        """OP on device DEV with NESTS (peer, keyconf), flattened with
        FLAT; a socket kind becomes a fresh socket for the request."""
        keep = []
        vals = {'ifindex': socket.if_nametoindex(dev)}
        try:
            for name, nest in nests.items():
                nest = dict(nest)
                for key in ('socket', self.num('socket')):
                    if name == 'peer' and isinstance(nest.get(key), str):
                        fd = new_socket(nest[key], keep)
                        nest[key] = fd if key == 'socket' else u32(fd)
                space = self.ynl.ops[op].attr_set[name]['nested-attributes']
                vals[name] = self.ynl.flat(space, nest) if flat else nest
            return self.ynl.do(op, vals)
        finally:
            for sock in keep:
                sock.close()

    def err(self, ename, op, dev, **nests):
        """OP fails with errno ENAME and an extack message."""
        what = f'{op} {dev} {nests}'
        try:
            got = self.ask(op, dev, **nests)
        except NlError as err:
            expect_eq(what, ename, errno.errorcode.get(err.error))
            if not (err.nl_msg.extack or {}).get('msg'):
                raise Fail(f'{what}: no extack message') from err
            return
        raise Fail(f'{what} succeeded: {got}')

    def new(self, dev, nest):
        """PEER_NEW, "OK" or "ERR <ENAME>"."""
        try:
            self.ask('peer-new', dev, peer=nest)
            return 'OK'
        except NlError as err:
            return f'ERR {errno.errorcode.get(err.error)}'

    def get(self, dev, pid):
        return self.ask('peer-get', dev, peer={'id': pid})['peer']

    def peers(self, dev):
        return [m['peer'] for m in self.ynl.dump(
            'peer-get', {'ifindex': socket.if_nametoindex(dev)})]


def listener():
    """A family handle that gets the notifications of the peers group."""
    ntf = family()
    ntf.ntf_subscribe('peers')
    return ntf


def ntf_expect(ntf, *dels):
    """PEER_DEL notifications of (id, reason) DELS, within 20 s (SLOW)."""
    want = set(dels)
    for msg in ntf.poll_ntf(duration=20 * SLOW):
        if msg['name'] == 'peer-del-ntf':
            want.discard((msg['msg']['peer']['id'],
                          msg['msg']['peer']['del-reason']))
            if not want:
                break
    ntf.close()
    if want:
        raise Fail(f'no peer-del-ntf of {sorted(want)}')


# Peer 1 of ovm lives as long as its socket, t.sock1; the requests below
# must leave it as it is.
def valid_requests_pass(t):
    t.ask('peer-new', 'ovm', peer=peer(1, t.sock1.fileno(), '5.5.5.2'))
    t.ask('peer-set', 'ovm', peer={'id': 1, 'keepalive-interval': 0,
                                   'keepalive-timeout': 0})
    t.ask('key-new', 'ovm', keyconf=keyconf())


def peer_new_missing(t):
    t.err('EINVAL', 'peer-new', 'ovm')
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(None))
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(sock=None))
    # A UDP peer needs its remote endpoint.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(remote=False))
    # An MP peer needs a VPN address.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(vpn=None))


def peer_new_out_of_range(t):
    t.err('ERANGE', 'peer-new', 'ovm', peer=peer(0x1000000))
    t.err('ERANGE', 'peer-new', 'ovm', peer=peer(remote_port=0))
    t.err('ERANGE', 'peer-new', 'ovm', peer=peer(tx_id=0x1000000))


def peer_new_unexpected(t):
    # local-port is reported, never set: PEER_NEW's spec has no name for it.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(
        extra={t.num('local-port'): struct.pack('>H', 1000)}))
    # Attribute beyond the set.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(extra={30: u32(1)}))
    # Nested attribute without NLA_F_NESTED.
    t.err('EINVAL', 'peer-new', 'ovm', flat=True, peer=peer())
    # Remote IPv6 of the wrong length (the policy's exact length).
    t.err('ERANGE', 'peer-new', 'ovm', peer=peer(
        sock='udp6', remote={'remote-ipv6': bytes.fromhex('fe800000'),
                             'remote-port': 1194}))


def peer_new_inconsistent(t):
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(remote_ipv6=ip('fd00::2')))
    t.err('EINVAL', 'peer-new', 'ovm',
          peer=peer(remote={'remote-ipv4': REMOTE['remote-ipv4']}))
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(keepalive_interval=10))
    # Local and remote addresses of different families.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(local_ipv6=ip('fd00::1')))
    # VPN addresses belong to MP devices.
    t.err('EINVAL', 'peer-new', 'ovp', peer=peer())
    # The id is taken.
    t.err('EEXIST', 'peer-new', 'ovm', peer=peer(1, vpn='5.5.5.9'))


def peer_new_bad_socket(t):
    for kind in ('unix', 'closed'):
        t.err('ENOTSOCK', 'peer-new', 'ovm', peer=peer(sock=kind))
    # A TCP peer needs an established connection...
    for kind in ('tcp4', 'tcp4-listen'):
        t.err('ENOTCONN', 'peer-new', 'ovm', peer=peer(sock=kind,
                                                         remote=False))
    # ...which is its endpoint: no remote address besides.
    t.err('EINVAL', 'peer-new', 'ovm', peer=peer(sock='tcp4-connected'))
    t.err('ENOTSOCK', 'peer-new', 'ovm', peer=peer(sock=99999))


# A UDP socket that another encapsulation owns (L2TP over UDP) is not
# taken over.
def udp_socket_of_another_encap(t):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.IPPROTO_UDP, UDP_ENCAP, UDP_ENCAP_L2TPINUDP)
        t.err('EBUSY', 'peer-new', 'ovm', peer=peer(9, sock.fileno(),
                                                    '5.5.5.9'))
    t.err('ENOENT', 'peer-get', 'ovm', peer={'id': 9})


# A connected TCP socket makes a peer, which lives as long as the socket:
# its close after the request is a disconnect.
def tcp_peer_lives_with_socket(t):
    ntf = listener()
    t.ask('peer-new', 'ovm', peer=peer(sock='tcp4-connected', remote=False))
    ntf_expect(ntf, (2, 'transport-disconnect'))
    t.err('ENOENT', 'peer-get', 'ovm', peer={'id': 2})


# A TCP socket carries one peer: a second one on it, on the same device or
# another, is refused.  Its close ends the first peer.
def tcp_socket_in_use(t):
    ntf, keep = listener(), []
    fd = new_socket('tcp4-connected', keep)
    try:
        t.ask('peer-new', 'ovm', peer=peer(sock=fd, remote=False))
        t.err('EBUSY', 'peer-new', 'ovm', peer=peer(3, fd, '5.5.5.4',
                                                    remote=False))
        t.err('EBUSY', 'peer-new', 'ovp', peer=peer(3, fd, None,
                                                    remote=False))
    finally:
        for sock in keep:
            sock.close()
    ntf_expect(ntf, (2, 'transport-disconnect'))


# What an attached TCP socket answers userspace that misuses it.
def tcp_socket_misuse(t):
    del t
    res = subprocess.run(['python3', str(HERE / 'tcp-misuse.py'), CLI, 'ovm',
                          '4', '5.5.5.4'], capture_output=True, text=True,
                         check=False)
    if res.returncode:
        raise Fail(res.stdout + res.stderr)
    # Every check ran: a skipped one must not pass unnoticed.
    expect_eq('checks passed', 19, sum(line.startswith('ok ') for line in
                                       res.stdout.splitlines()))


# A VPN address names one peer: unicast, unique, and a peer keeps one.
def vpn_address_rules(t):
    for bad in ('127.0.0.1', '224.0.0.1', '255.255.255.255', '0.0.0.0',
                '::1', 'ff02::1', '::ffff:192.0.2.1', '::'):
        t.err('EINVAL', 'peer-new', 'ovm', peer=peer(vpn=bad))
    t.err('EADDRINUSE', 'peer-new', 'ovm', peer=peer(vpn='5.5.5.2'))

    def vpn(addr):
        return peer(1, None, addr, remote=False)
    t.err('EDESTADDRREQ', 'peer-set', 'ovm', peer=vpn('0.0.0.0'))
    t.ask('peer-set', 'ovm', peer=vpn('fd00::2'))
    t.ask('peer-set', 'ovm', peer=vpn('0.0.0.0'))
    t.err('EDESTADDRREQ', 'peer-set', 'ovm', peer=vpn('::'))
    t.ask('peer-set', 'ovm', peer=vpn('5.5.5.2'))
    got = t.get('ovm', 1)
    expect_eq('addresses kept', ['5.5.5.2', 'fd00::2'],
              [str(ipaddress.ip_address(got.get(k)))
               for k in ('vpn-ipv4', 'vpn-ipv6')])


# A UDP socket is plain again when the device that used it goes: its
# encapsulation and user data are undone, so another device attaches it,
# and closing it then removes that device's peer.
def udp_socket_given_back(t):
    cli('new_iface', 'ovx', 'mp')
    ntf = listener()

    def add(pid):
        return t.new('ovx', peer(pid, sock.fileno(), f'5.5.6.{pid}', {
            'remote-ipv4': ip('127.0.0.1'), 'remote-port': 9}))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(('127.0.0.1', 9))
        expect_eq('peer 1 on the socket', 'OK', add(1))
        subprocess.run(['ip', 'link', 'del', 'ovx'], check=True)
        cli('new_iface', 'ovx', 'mp')
        expect_eq('peer 2 on the socket, another device', 'OK', add(2))
    ntf_expect(ntf, (2, 'transport-disconnect'), (1, 'teardown'))
    cli('del_iface', 'ovx')


def udp_socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('127.0.0.1', 0))
    return sock


def handed_back(sock, what):
    """DATA_V2 for peer 1 reaches the socket's reader, within 30 s (SLOW)."""
    data = struct.pack('>II', (9 << 27) | 1, 1) + bytes(40)
    sock.settimeout(0.2)
    end = time.monotonic() + 30 * SLOW
    with udp_socket() as tx:
        while time.monotonic() < end:
            tx.sendto(data, sock.getsockname())
            try:
                got = sock.recv(2048)
            except socket.timeout:
                continue
            expect_eq(what, data, got)
            return
    raise Fail(f'{what}: DATA_V2 never reached userspace')


# A UDP socket is given back with its last peer: once peer 1 of ovx is
# deleted, a DATA_V2 datagram sent to the socket reaches userspace rather
# than being swallowed, and another device attaches the socket.  The
# same holds for the socket of a PEER_NEW that fails after attaching it
# (an id taken).
def udp_socket_given_back_with_last_peer(t):
    cli('new_iface', 'ovx', 'mp')
    cli('new_iface', 'ovy', 'mp')

    def add(sock, dev, pid):
        return t.new(dev, peer(pid, sock.fileno(), f'5.5.6.{pid}', {
            'remote-ipv4': ip('127.0.0.1'), 'remote-port': 9}))
    with udp_socket() as first, udp_socket() as second:
        expect_eq('peer 1 on ovx', 'OK', add(first, 'ovx', 1))
        t.ask('peer-del', 'ovx', peer={'id': 1})
        handed_back(first, 'after the last peer of ovx')
        expect_eq('the same socket on ovy', 'OK', add(first, 'ovy', 1))
        # A fresh socket whose peer is refused once it is attached.
        expect_eq('peer 1 again on ovy', 'ERR EEXIST',
                  add(second, 'ovy', 1))
        handed_back(second, 'after a refused peer')
        t.ask('peer-del', 'ovy', peer={'id': 1})
        handed_back(first, 'after the last peer of ovy')
        expect_eq('the refused socket on ovx', 'OK', add(second, 'ovx', 2))
    cli('del_iface', 'ovx')
    cli('del_iface', 'ovy')


# A TCP PEER_NEW refused after its socket was claimed (the id or the VPN
# address is taken) gives the socket back: it attaches to the next peer,
# which goes when the socket closes.
def tcp_refused_peer_frees_socket(t):
    ntf, keep = listener(), []
    try:
        fd3, fd4 = (new_socket('tcp4-connected', keep) for _ in range(2))
        t.err('EEXIST', 'peer-new', 'ovm',
              peer=peer(1, fd3, '5.5.5.9', remote=False))
        t.err('EADDRINUSE', 'peer-new', 'ovm',
              peer=peer(5, fd4, '5.5.5.2', remote=False))
        end = time.monotonic() + 30 * SLOW
        while t.new('ovm', peer(5, fd3, '5.5.5.5', remote=False)) != 'OK':
            if time.monotonic() > end:
                raise Fail('the socket stays claimed')
            time.sleep(0.1)
    finally:
        for sock in keep:
            sock.close()
    ntf_expect(ntf, (5, 'transport-disconnect'))


# PEER_SET of a VPN address re-hashes the peer.  Racing it with the peer's
# removal, PEER_SET must never hash a removed peer again: that peer would
# keep its address (and, freed, stay in the table).  Per round: peer 9 on
# a fresh UDP socket, a child flipping its address between two with
# PEER_SET as fast as it can until the peer is gone, and meanwhile the
# peer's socket closed (even rounds) or PEER_DEL (odd ones).  Notes the
# PEER_SET outcomes: "raced" counts those that found the peer but came
# too late to change it, the window the race needs.
RACE_PEER, RACE_ADDRS = 9, ('5.5.5.90', '5.5.5.91')
GONE = f'ENOENT no peer with id {RACE_PEER}'
RACED = 'ENOENT ovpn: peer removed meanwhile'


def outcome(ynl, op, vals):
    """"ok", or the errno's name and the extack message."""
    try:
        ynl.do(op, vals)
        return 'ok'
    except NlError as err:
        msg = (err.nl_msg.extack or {}).get('msg', '')
        return f'{errno.errorcode.get(err.error)} {msg}'


def hammer(ynl, ifindex, ready, out):
    """PEER_SET until the peer is gone; the count of each outcome.  The
    two requests are encoded once and sent as they are, as fast as the
    kernel answers: a round trip of YNL's own leaves the race a smaller
    window."""
    reqs = [ynl.encode('peer-set', {'ifindex': ifindex, 'peer': {
        'id': RACE_PEER, 'vpn-ipv4': ip(addr)}}) for addr in RACE_ADDRS]
    seen, i = {}, 0
    end = time.monotonic() + 30
    while time.monotonic() < end:
        i += 1
        ynl.sock.send(reqs[i % 2])
        ack = next(iter(NlMsgs(ynl.sock.recv(65536))))
        msg = (ack.extack or {}).get('msg', '')
        res = f'{errno.errorcode[-ack.error]} {msg}' if ack.error else 'ok'
        seen[res] = seen.get(res, 0) + 1
        if i == 1:
            os.write(ready, b'!')
        if res == GONE:
            break
    os.write(out, json.dumps(seen).encode())


def race_round(t, child_ynl, n, seen):
    ifindex = socket.if_nametoindex('ovm')
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    res = outcome(t.ynl, 'peer-new', {'ifindex': ifindex, 'peer': peer(
        RACE_PEER, udp.fileno(), RACE_ADDRS[0])})
    if res != 'ok':
        return f'round {n}: PEER_NEW: {res}'
    ready, out = os.pipe(), os.pipe()
    if not os.fork():
        try:
            # Only the parent holds the socket: its close removes the peer.
            udp.close()
            hammer(child_ynl, ifindex, ready[1], out[1])
        finally:
            os._exit(0)  # pylint: disable=protected-access
    os.close(ready[1])
    os.close(out[1])
    os.read(ready[0], 1)
    time.sleep(random.uniform(0, 0.002))
    res = outcome(t.ynl, 'peer-del', {'ifindex': ifindex, 'peer': {
        'id': RACE_PEER}}) if n % 2 else 'ok'
    udp.close()
    data = b''
    while chunk := os.read(out[0], 4096):
        data += chunk
    os.waitpid(-1, 0)
    os.close(ready[0])
    os.close(out[0])
    for key, count in json.loads(data or '{}').items():
        seen[key] = seen.get(key, 0) + count
    if res != 'ok':
        return f'round {n}: PEER_DEL: {res}'
    if GONE not in data.decode():
        return f'round {n}: the peer did not go'
    return None


def peer_set_races_removal(t):
    # The children's handle, one at a time: the parent never uses it.
    child_ynl, seen, t0 = family(), {}, time.monotonic()
    rounds = int(os.environ.get('OVPN_PEER_SET_ROUNDS', '50'))
    for n in range(rounds):
        err = race_round(t, child_ynl, n, seen)
        if err:
            break
    child_ynl.close()
    note = (f'{n + 1} rounds in {time.monotonic() - t0:.1f} s; PEER_SET: '
            f'{seen.get("ok", 0)} ok, {seen.get(RACED, 0)} raced, '
            f'{seen.get(GONE, 0)} after')
    odd = {k: v for k, v in seen.items() if k not in ('ok', RACED, GONE)}
    for key, count in odd.items():
        note += f'\nunexpected PEER_SET answer ({count} times): {key}'
    if err or odd:
        raise Fail(f'{note}\n{err or ""}')
    t.err('ENOENT', 'peer-get', 'ovm', peer={'id': RACE_PEER})
    # Each address is free again: a new peer takes it (and goes with its
    # socket).
    for addr in RACE_ADDRS:
        t.ask('peer-new', 'ovm', peer=peer(RACE_PEER, vpn=addr))
    return note


# A UDP socket sends only to remotes of a family it can reach: an IPv6
# remote on an IPv4 socket is refused when it is given (it used to crash
# the first packet sent to it), an IPv4 remote on a dual-stack IPv6 socket
# is fine, as is a v4-mapped remote on an IPv4 socket.  The peers that are
# accepted go with their sockets.
def remote_family_fits_socket(t):
    v6 = {'remote-ipv6': ip('fd00::2'), 'remote-port': 1194}
    t.err('EAFNOSUPPORT', 'peer-new', 'ovm', peer=peer(remote=v6))
    t.err('EAFNOSUPPORT', 'peer-set', 'ovm', peer=peer(1, None, None, v6))
    got = t.get('ovm', 1)
    expect_eq("peer 1's remote", ('10.0.0.2', 1194),
              (str(ipaddress.ip_address(got['remote-ipv4'])),
               got['remote-port']))
    t.ask('peer-new', 'ovm', peer=peer(sock='udp6', remote={
        'remote-ipv4': ip('10.0.0.3'), 'remote-port': 1194}))
    t.ask('peer-new', 'ovm', peer=peer(remote={
        'remote-ipv6': ip('::ffff:10.0.0.3'), 'remote-port': 1194}))


def nothing_was_added(t):
    expect_eq('peers after the bad requests', [1],
              [p['id'] for p in t.peers('ovm')])
    expect_eq('peers of the P2P device', [], t.peers('ovp'))


def peer_set_get_del_bad(t):
    t.err('EINVAL', 'peer-set', 'ovm', peer={'id': 1,
                                             t.num('socket'): 'udp4'})
    t.err('ENOENT', 'peer-set', 'ovm', peer={
        'id': 7, 'keepalive-interval': 1, 'keepalive-timeout': 2})
    t.err('EINVAL', 'peer-get', 'ovm', peer={'id': 1, 'remote-port': 1})
    t.err('EINVAL', 'peer-get', 'ovm', peer={})
    t.err('EINVAL', 'peer-del', 'ovm', peer={
        'id': 1, t.num('vpn-ipv4'): struct.pack('>I', ip('5.5.5.2'))})
    t.err('ENOENT', 'peer-del', 'ovm', peer={'id': 7})


def key_new_bad(t):
    t.err('EINVAL', 'key-new', 'ovm', keyconf=keyconf(enc=None, dec=None))
    t.err('EINVAL', 'key-new', 'ovm', keyconf=keyconf(alg=0))
    t.err('ERANGE', 'key-new', 'ovm', keyconf=keyconf(slot=2))
    t.err('ERANGE', 'key-new', 'ovm', keyconf=keyconf(key_id=8))
    t.err('ERANGE', 'key-new', 'ovm', keyconf=keyconf(alg=3))
    t.err('ENOENT', 'key-new', 'ovm', keyconf=keyconf(pid=7))
    # A 7-byte nonce tail (policy), a 20-byte AES key (no such AES).
    t.err('ERANGE', 'key-new', 'ovm', keyconf=keyconf(enc={
        'cipher-key': KEY, 'nonce-tail': NONCE[:7]}))
    t.err('EINVAL', 'key-new', 'ovm', keyconf=keyconf(enc={
        'cipher-key': KEY[:20], 'nonce-tail': NONCE}))


def key_get_swap_del_bad(t):
    t.err('EINVAL', 'key-get', 'ovm', keyconf={'peer-id': 1, 'slot': 0,
                                               'key-id': 0})
    t.err('EINVAL', 'key-get', 'ovm', keyconf={'peer-id': 1})
    t.err('ENOENT', 'key-get', 'ovm', keyconf={'peer-id': 1, 'slot': 1})
    t.err('ENOENT', 'key-swap', 'ovm', keyconf={'peer-id': 7})
    t.err('EINVAL', 'key-swap', 'ovm', keyconf={
        'peer-id': 1, t.num('slot', 'keyconf'): u32(0)})
    t.err('EINVAL', 'key-del', 'ovm', keyconf={'peer-id': 1})
    # The valid key is still there.
    t.ask('key-get', 'ovm', keyconf={'peer-id': 1, 'slot': 0})


ktap_run([valid_requests_pass, peer_new_missing, peer_new_out_of_range,
          peer_new_unexpected, peer_new_inconsistent, peer_new_bad_socket,
          udp_socket_of_another_encap, tcp_peer_lives_with_socket,
          tcp_socket_in_use, tcp_socket_misuse, vpn_address_rules,
          udp_socket_given_back, udp_socket_given_back_with_last_peer,
          tcp_refused_peer_frees_socket, peer_set_races_removal,
          remote_family_fits_socket, nothing_was_added, peer_set_get_del_bad,
          key_new_bad, key_get_swap_del_bad], Ctx, NS)
