#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Packet fuzzer of the ovpn selftests.

  udp [options]    hostile datagrams to a UDP server
  tcp [options]    hostile records to a TCP server

Sends a seeded stream of OpenVPN packets made to fail: random bytes,
every opcode with every key id, DATA_V2 packets with our peer id and
others, with tags that cannot match, cut at every length of header,
packet id and tag, replays and far-future packet ids of genuine packets,
oversized ones.  As it sends a packet, a model of the driver says what
becomes of it: dropped and counted in the device's rx_dropped, handed to
the socket's owner (every opcode but the two data ones), and which peer's
link counters see it.  The totals of the model are the test's expected
counts:

  SEED <seed>
  CAPTURED|GENUINE <packets>        genuine packets to replay and mutate
  PROBE before|after <output>       of the --probe command, if any
  CLASS <name> <packets>            one line a class of cases
  TOTAL <packets> <ms> <packets per second>
  EXPECT <key>=<value>...

udp: raw sockets send the datagrams, from the address and port of the
real client where a case needs it (a peer is found by its id, but also by
its address for the "undefined" peer id), from other ports, and over IPv6.
Genuine packets of that client, captured off the wire with a packet
socket before the fuzzing starts, are what gets replayed and mutated.
EXPECT keys: drops (rx_dropped of the device), ctrl and ctrl_bytes (the
datagrams that reach the socket's owner, and their bytes), link<ID> (the
packets that reach peer ID and fail there: its link_rx_packets grow by
that much more than its vpn_rx_packets).

tcp: a first connection, which the server adds as a peer with a key whose
two directions are the same: the records the server sends on it are
genuine when they come back, once (the first copy fails the source
address check, any other one is a replay).  First, while it waits, other
connections that each end with a stream the driver cannot parse (bad
lengths, DATA_V1, garbage): each must remove its peer, which the
notification log says, and count its data records and its break once
each in rx_dropped, which the --drops command reads before and after:
"BROKEN <peer> <kind> <records> <expected drops> <counted drops>".  Then
the first connection's records, its stream cut into writes of random
sizes, down to single bytes.  EXPECT keys: data (data records on the
first connection: its peer's link_rx_packets), drops (the same: what
rx_dropped grows by), ctrl and ctrl_bytes (its control records, for the
socket's owner, length prefix included), broken and broken_counted (the
drops of the broken streams, expected and counted).  The first connection stays
open until the fuzzer is killed.
"""

import argparse
import json
import os
import random
import re
import socket
import struct
import subprocess
import sys
import threading
import time

OP_CONTROL_V1 = 4
OP_DATA_V1 = 6
OP_DATA_V2 = 9
PEER_UNDEF = 0xffffff
OPCODE_SIZE = 4
PKTID_SIZE = 4
TAG_SIZE = 16
OVERHEAD = OPCODE_SIZE + PKTID_SIZE + TAG_SIZE
# The longest record tcp.c parses: a data packet around the largest MTU
# (IP_MAX_MTU less OVPN_HEAD_ROOM, plus the data overhead).
TCP_MAX_PACKET = 65535 - 84 + OVERHEAD
# The largest UDP payload over IPv4.
UDP4_MAX = 65535 - 20 - 8
# What an ordinary datagram stays under: no fragments.
SMALL_MAX = 1400

# Linux values that Python's socket module may lack.
IP_MTU_DISCOVER = 10
IP_PMTUDISC_DONT = 0
IPV6_CHECKSUM = 7
ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4

# Shares of the classes of cases, per transport.
UDP_MIX = (('random', 14), ('opcode', 14), ('bad-tag', 16),
           ('other-key', 4), ('wrong-peer', 8), ('other-peer', 4),
           ('undef-peer', 6), ('truncated', 10), ('replay', 8),
           ('future', 12), ('oversized', 1))
TCP_MIX = (('random', 14), ('opcode', 14), ('bad-tag', 16),
           ('other-key', 4), ('wrong-peer', 6), ('undef-peer', 4),
           ('truncated', 10), ('replay', 10), ('future', 16),
           ('oversized', 1))
# How the streams of the other TCP connections end.
BREAKERS = ('len0', 'len1', 'len2', 'len3', 'len-over', 'len-max',
            'data-v1', 'data-v1-short', 'garbage')


def word(op, key, peer):
    """The first word of an OpenVPN packet."""
    return struct.pack('>I', (op << 27) | (key << 24) | peer)


def opcode_of(pkt):
    return pkt[0] >> 3


def with_pktid(pkt, pktid):
    return pkt[:OPCODE_SIZE] + struct.pack('>I', pktid) + \
        pkt[OPCODE_SIZE + PKTID_SIZE:]


def pktid_of(pkt):
    return struct.unpack('>I', pkt[OPCODE_SIZE:OPCODE_SIZE + PKTID_SIZE])[0]


def say(*words):
    print(*words, flush=True)


def die(why):
    sys.exit('%s: %s' % (os.path.basename(sys.argv[0]), why))


class Tally:
    """Packets sent per class, and what the model expects of them."""

    def __init__(self):
        self.classes = {}
        self.expect = {}
        self.total = 0
        self.t0 = time.monotonic()

    def sent(self, cls):
        self.classes[cls] = self.classes.get(cls, 0) + 1
        self.total += 1

    def add(self, key, n=1):
        self.expect[key] = self.expect.get(key, 0) + n

    def report(self):
        ms = max(1, int((time.monotonic() - self.t0) * 1000))
        for cls in sorted(self.classes):
            say('CLASS', cls, self.classes[cls])
        say('TOTAL', self.total, ms, self.total * 1000 // ms)
        say('EXPECT', ' '.join('%s=%d' % kv
                               for kv in sorted(self.expect.items())))


class Cases:
    """The packets of each class, for both transports."""

    def __init__(self, rng, peer_id, key_id, other_ids, stream=False):
        self.rng = rng
        self.peer_id = peer_id
        self.key_id = key_id
        self.other_ids = other_ids
        # For a stream that must not break: no DATA_V1, nothing shorter
        # than an opcode.
        self.stream = stream
        self.min_len = OPCODE_SIZE if stream else 0
        self.next_opcode = 0
        # The truncation template: a DATA_V2 packet with one byte of
        # ciphertext, cut at every length from 0 (or 4) to all of it.
        self.template = self.bad_tag(1)
        self.next_cut = self.min_len

    def length(self, top=SMALL_MAX):
        """A length, short ones being as likely as long ones."""
        r = self.rng.random()
        if r < 0.3:
            return self.rng.randint(0, 32)
        if r < 0.6:
            return self.rng.randint(0, 200)
        return self.rng.randint(0, top)

    def wrong_id(self):
        """A peer id nobody has."""
        while True:
            pid = self.rng.choice((0, PEER_UNDEF - 1,
                                   self.rng.randint(0, PEER_UNDEF)))
            if pid != self.peer_id and pid not in self.other_ids and \
               pid != PEER_UNDEF:
                return pid

    def any_id(self):
        return self.rng.choice((self.peer_id, PEER_UNDEF, self.wrong_id()) +
                               tuple(self.other_ids))

    def other_key(self):
        return self.rng.choice([k for k in range(8) if k != self.key_id])

    def data(self, key, peer, length):
        """DATA_V2 with a random packet id and a tag that cannot match."""
        pktid = self.rng.choice((1, 0, 0xffffffff,
                                 self.rng.getrandbits(32)))
        return word(OP_DATA_V2, key, peer) + struct.pack('>I', pktid) + \
            self.rng.randbytes(TAG_SIZE + length)

    def bad_tag(self, length=None):
        if length is None:
            length = max(1, self.length())
        return self.data(self.key_id, self.peer_id, length)

    def random(self, top=SMALL_MAX):
        pkt = self.rng.randbytes(max(self.min_len, self.length(top)))
        if self.stream and opcode_of(pkt) == OP_DATA_V1:
            pkt = bytes([pkt[0] ^ 0x80]) + pkt[1:]
        return pkt

    def opcode(self):
        """Every opcode with every key id in turn, then again."""
        while True:
            op, key = divmod(self.next_opcode, 8)
            self.next_opcode = (self.next_opcode + 1) % 256
            if not (self.stream and op == OP_DATA_V1):
                break
        return word(op, key, self.any_id()) + \
            self.rng.randbytes(self.length(200))

    def truncated(self):
        cut = self.next_cut
        self.next_cut += 1
        if self.next_cut > len(self.template):
            self.next_cut = self.min_len
        return self.template[:cut]

    def future(self, genuine):
        """A genuine packet with a far-future packet id or a flipped bit."""
        pkt = genuine
        how = self.rng.randrange(4)
        if how == 0:
            ahead = 1 << self.rng.randint(7, 31)
            pkt = with_pktid(pkt, (pktid_of(pkt) + ahead) & 0xffffffff)
        elif how == 1:
            pkt = with_pktid(pkt, self.rng.choice((0xffffffff, 0x80000000,
                                                   0)))
        else:
            # In the tag or the ciphertext (how 2) or anywhere past the
            # opcode (how 3): it cannot authenticate any more.
            first = 8 if how == 2 else 1
            bit = self.rng.randrange(first * 8, len(pkt) * 8)
            pkt = bytearray(pkt)
            pkt[bit // 8] ^= 1 << (bit % 8)
            pkt = bytes(pkt)
        return pkt

    def oversized(self, top):
        length = self.rng.choice((top, self.rng.randint(SMALL_MAX, top)))
        if self.rng.random() < 0.7:
            return self.data(self.key_id, self.peer_id, length - OVERHEAD)
        op = self.rng.choice((OP_CONTROL_V1, 1, 31))
        return word(op, 0, 0) + self.rng.randbytes(length - OPCODE_SIZE)


def probe(args, when):
    """The output of the probe command, as the fuzzing starts or ends."""
    if args.probe:
        out = subprocess.run(args.probe, shell=True, capture_output=True,
                             text=True, check=False).stdout
        say('PROBE', when, ' '.join(out.split()))


def pick_class(rng, mix):
    names = [m[0] for m in mix]
    return rng.choices(names, weights=[m[1] for m in mix])[0]


def wait_for_line(path, pattern, secs, what):
    """Wait until a line of @path matches @pattern; give up after @secs."""
    regex = re.compile(pattern, re.M)
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                if regex.search(f.read()):
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    die('no %s within %d s' % (what, secs))


# UDP

def parse_endpoint(text):
    """ADDR:PORT, or ID@ADDR:PORT for a peer."""
    pid = None
    if '@' in text:
        pid, text = text.split('@', 1)
        pid = int(pid)
    addr, port = text.rsplit(':', 1)
    return pid, (addr.strip('[]'), int(port))


def capture(ifname, server, port, src, count, secs):
    """The payloads of @count DATA_V2 datagrams @src sends to the server."""
    got = []
    # ETH_P_ALL: a socket of one protocol only sees what comes in.
    with socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                       socket.htons(ETH_P_ALL)) as s:
        s.bind((ifname, ETH_P_ALL))
        say('CAPTURING')
        deadline = time.monotonic() + secs
        while len(got) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                die('captured %d of %d packets' % (len(got), count))
            s.settimeout(left)
            try:
                ip, addr = s.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[1] != ETH_P_IP or addr[2] != PACKET_OUTGOING or \
               ip[9] != socket.IPPROTO_UDP:
                continue
            udp = ip[(ip[0] & 0xf) * 4:]
            if socket.inet_ntoa(ip[12:16]) != src[0] or \
               socket.inet_ntoa(ip[16:20]) != server or \
               struct.unpack('>HH', udp[:4]) != (src[1], port):
                continue
            pkt = udp[8:]
            if len(pkt) > OVERHEAD and opcode_of(pkt) == OP_DATA_V2:
                got.append(pkt)
    return got


class UdpFuzzer:
    def __init__(self, args, rng):
        self.rng = rng
        self.args = args
        self.tally = Tally()
        self.peers = dict(parse_endpoint(p) for p in args.peer)
        self.own_id = parse_endpoint(args.peer[0])[0]
        self.own = self.peers[self.own_id]
        self.by_addr = {v: k for k, v in self.peers.items()}
        self.cases = Cases(rng, self.own_id, args.key_id,
                           [k for k in self.peers if k != self.own_id])
        self.raw4 = {}
        for addr, _ in self.peers.values():
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                              socket.IPPROTO_UDP)
            s.bind((addr, 0))
            # Fragment the oversized ones here rather than refuse them.
            s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER,
                         IP_PMTUDISC_DONT)
            # It also gets a copy of every UDP packet that arrives: keep
            # no more of them than the kernel must.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            self.raw4[addr] = s
        self.raw6 = None
        if args.src6:
            s = socket.socket(socket.AF_INET6, socket.SOCK_RAW,
                              socket.IPPROTO_UDP)
            s.bind((args.src6, 0))
            # The UDP checksum is mandatory over IPv6: the kernel's job.
            s.setsockopt(socket.IPPROTO_IPV6, IPV6_CHECKSUM, 6)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            self.raw6 = s
        self.genuine = []

    def source(self, v4only=False):
        """Where a datagram comes from: a peer, another port, IPv6."""
        kinds = ['own', 'peer', 'port']
        if self.raw6 and not v4only:
            kinds.append('v6')
        kind = self.rng.choice(kinds)
        if kind == 'own':
            return self.own
        if kind == 'peer':
            return self.rng.choice(list(self.peers.values()))
        port = self.rng.randint(1024, 65535)
        if kind == 'v6':
            return (self.args.src6, port)
        return (self.own[0], port)

    def fate(self, pkt, src):
        """What the driver does with @pkt from @src: ('drop'|'ctrl', peer)."""
        if len(pkt) < OPCODE_SIZE:
            return 'drop', None
        op = opcode_of(pkt)
        if op == OP_DATA_V1:
            return 'drop', None
        if op != OP_DATA_V2:
            return 'ctrl', None
        pid = int.from_bytes(pkt[1:4], 'big')
        if pid == PEER_UNDEF:
            return 'drop', self.by_addr.get(src)
        return 'drop', pid if pid in self.peers else None

    def send(self, cls, pkt, src):
        addr, sport = src
        udp = struct.pack('>HHHH', sport, self.args.port, 8 + len(pkt),
                          0) + pkt
        # A zero checksum: none, which IPv4 allows.
        if ':' in addr:
            self.raw6.sendto(udp, (self.args.server6, 0))
        else:
            self.raw4[addr].sendto(udp, (self.args.server, 0))
        self.tally.sent(cls)
        verdict, peer = self.fate(pkt, src)
        if verdict == 'ctrl':
            self.tally.add('ctrl')
            self.tally.add('ctrl_bytes', len(pkt))
        else:
            self.tally.add('drops')
        if peer is not None:
            self.tally.add('link%d' % peer)

    def one(self, cls):
        c = self.cases
        own = self.own
        if cls == 'random':
            self.send(cls, c.random(), self.source())
        elif cls == 'opcode':
            self.send(cls, c.opcode(), self.source())
        elif cls == 'bad-tag':
            self.send(cls, c.bad_tag(), own)
        elif cls == 'other-key':
            self.send(cls, c.data(c.other_key(), self.own_id,
                                  max(1, c.length())), own)
        elif cls == 'wrong-peer':
            self.send(cls, c.data(self.rng.randrange(8), c.wrong_id(),
                                  c.length()), self.source())
        elif cls == 'other-peer':
            pid = self.rng.choice(c.other_ids or [self.own_id])
            self.send(cls, c.data(self.rng.randrange(8), pid, c.length()),
                      self.rng.choice((own, self.peers[pid])))
        elif cls == 'undef-peer':
            self.send(cls, c.data(self.rng.randrange(8), PEER_UNDEF,
                                  c.length()), self.source())
        elif cls == 'truncated':
            self.send(cls, c.truncated(), own)
        elif cls == 'replay':
            # Twice: whichever copy comes second, the original included,
            # is a replay.
            pkt = self.rng.choice(self.genuine)
            self.send(cls, pkt, own)
            self.send(cls, pkt, own)
        elif cls == 'future':
            self.send(cls, c.future(self.rng.choice(self.genuine)), own)
        elif cls == 'oversized':
            self.send(cls, c.oversized(UDP4_MAX), self.source(True))

    def run(self):
        a = self.args
        if a.capture:
            self.genuine = capture(a.capture, a.server, a.port, self.own,
                                   a.genuine, a.wait)
            say('CAPTURED', len(self.genuine))
        mix = UDP_MIX if self.genuine else \
            [m for m in UDP_MIX if m[0] not in ('replay', 'future')]
        probe(a, 'before')
        self.tally.t0 = time.monotonic()
        while self.tally.total < a.count:
            self.one(pick_class(self.rng, mix))
        probe(a, 'after')
        self.tally.report()


# TCP

def record(body, length=None):
    """A record: the 2-byte length (the real one unless given), the body."""
    return struct.pack('>H', len(body) if length is None else length) + body


def cut_records(stream):
    """Model of tcp.c's framing of @stream.

    Returns (fates, end, need): the fate of each record cut ('data',
    'ctrl' or 'break', which ends the list), the offset where the stream
    breaks (or the end of its last whole record), and how many bytes the
    record after that still lacks (0 if none started).
    """
    fates, off = [], 0
    while len(stream) - off >= 2:
        n = struct.unpack('>H', stream[off:off + 2])[0]
        if n < OPCODE_SIZE or n > TCP_MAX_PACKET:
            fates.append('break')
            return fates, off + 2, 0
        if off + 2 + n > len(stream):
            return fates, off, off + 2 + n - len(stream)
        op = stream[off + 2] >> 3
        off += 2 + n
        if op == OP_DATA_V1:
            fates.append('break')
            return fates, off, 0
        fates.append('data' if op == OP_DATA_V2 else 'ctrl')
    # Nothing left, or one byte of a length.
    return fates, off, 1 if off < len(stream) else 0


class Writer:
    """Writes a stream in pieces of random sizes, some of a single byte."""

    def __init__(self, sock, rng):
        self.sock = sock
        self.rng = rng
        self.buf = bytearray()
        self.writes = 0

    def add(self, data):
        self.buf += data
        if len(self.buf) >= 65536:
            self.flush()

    def flush(self):
        data, off = bytes(self.buf), 0
        self.buf = bytearray()
        while off < len(data):
            if self.rng.random() < 0.03:
                # A dribble: records split across many tiny segments.
                for _ in range(self.rng.randint(1, 24)):
                    if off < len(data):
                        self.sock.sendall(data[off:off + 1])
                        off += 1
                        self.writes += 1
                continue
            n = self.rng.randint(1, 16384)
            self.sock.sendall(data[off:off + n])
            off += n
            self.writes += 1


class Reader(threading.Thread):
    """Reads what the server sends on a connection: genuine records."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.genuine = []
        self.lock = threading.Lock()
        self.records = 0

    def run(self):
        buf = b''
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= 2:
                n = struct.unpack('>H', buf[:2])[0]
                if len(buf) < 2 + n:
                    break
                body, buf = buf[2:2 + n], buf[2 + n:]
                self.records += 1
                if n > OVERHEAD and opcode_of(body) == OP_DATA_V2:
                    with self.lock:
                        if len(self.genuine) < 4096:
                            self.genuine.append(body)

    def pick(self, rng):
        with self.lock:
            return rng.choice(self.genuine)


class TcpFuzzer:
    def __init__(self, args, rng):
        self.args = args
        self.rng = rng
        self.tally = Tally()
        self.cases = Cases(rng, args.peer_id, args.key_id, [], stream=True)
        self.socks = []

    def connect(self, peer):
        """A connection, once the server says it added it as @peer."""
        a = self.args
        s = socket.socket(socket.AF_INET6 if ':' in a.server else
                          socket.AF_INET, socket.SOCK_STREAM)
        s.bind((a.src, 0))
        s.connect((a.server, a.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        wait_for_line(a.srv_log, r'^PEER %d$' % peer, a.wait,
                      'peer %d' % peer)
        self.socks.append(s)
        return s

    def body(self, cls, reader):
        c = self.cases
        if cls == 'random':
            body = c.random()
        elif cls == 'opcode':
            body = c.opcode()
        elif cls == 'bad-tag':
            body = c.bad_tag()
        elif cls == 'other-key':
            body = c.data(c.other_key(), c.peer_id, max(1, c.length()))
        elif cls == 'wrong-peer':
            body = c.data(c.key_id, c.wrong_id(), c.length())
        elif cls == 'undef-peer':
            body = c.data(c.key_id, PEER_UNDEF, c.length())
        elif cls == 'truncated':
            body = c.truncated()
        elif cls == 'future':
            body = c.future(reader.pick(self.rng))
        elif cls == 'oversized':
            body = c.oversized(TCP_MAX_PACKET)
        return body

    def add_record(self, writer, cls, body):
        assert len(body) >= OPCODE_SIZE and opcode_of(body) != OP_DATA_V1
        writer.add(record(body))
        self.tally.sent(cls)
        if opcode_of(body) == OP_DATA_V2:
            self.tally.add('data')
            self.tally.add('drops')
        else:
            self.tally.add('ctrl')
            self.tally.add('ctrl_bytes', 2 + len(body))

    def start_first(self):
        """The connection with a key, and what the server sends on it."""
        a = self.args
        s = self.connect(a.peer_id)
        say('CONNECTED', a.peer_id)
        wait_for_line(a.go_file, r'^go$', a.wait, 'go')
        reader = Reader(s)
        reader.start()
        deadline = time.monotonic() + a.wait
        while len(reader.genuine) < a.genuine:
            if time.monotonic() > deadline:
                die('%d genuine records' % len(reader.genuine))
            time.sleep(0.05)
        say('GENUINE', len(reader.genuine))
        return s, reader

    def fuzz_first(self, s, reader):
        """Every record parses, the peer stays, none is let in."""
        writer = Writer(s, self.rng)
        while self.tally.total < self.args.count:
            cls = pick_class(self.rng, TCP_MIX)
            if cls == 'replay':
                body = reader.pick(self.rng)
                self.add_record(writer, cls, body)
                self.add_record(writer, cls, body)
            else:
                self.add_record(writer, cls, self.body(cls, reader))
        writer.flush()
        say('WRITES', writer.writes, 'RECEIVED', reader.records)

    def breaker(self, kind):
        """The end of a stream that the driver cannot parse."""
        rng = self.rng
        if kind.startswith('len') and kind[3:].isdigit():
            return struct.pack('>H', int(kind[3:]))
        if kind == 'len-over':
            return struct.pack('>H', rng.randint(TCP_MAX_PACKET + 1, 65535))
        if kind == 'len-max':
            return struct.pack('>H', 65535)
        if kind == 'data-v1':
            return record(word(OP_DATA_V1, rng.randrange(8), 0) +
                          rng.randbytes(self.cases.length()))
        if kind == 'data-v1-short':
            return record(bytes([OP_DATA_V1 << 3, 0, 0, 0]))
        # garbage: random bytes as they come, completed up to the end
        # of the record they leave open, then cut where they break.
        stream = rng.randbytes(rng.randint(1, 600))
        while True:
            fates, end, need = cut_records(stream)
            if fates and fates[-1] == 'break':
                return stream[:end]
            if need:
                stream += rng.randbytes(need)
            else:
                stream += struct.pack('>H', rng.randint(0, 3))

    def broken_stream(self, kind):
        """A stream that ends in a break of @kind, and its model's fates."""
        stream = b''
        for _ in range(self.rng.randint(0, 8)):
            if self.rng.random() < 0.8:
                stream += record(self.cases.bad_tag())
            else:
                stream += record(word(OP_CONTROL_V1, 0, 0) +
                                 self.rng.randbytes(self.cases.length()))
        stream += self.breaker(kind)
        # The model stops at the break, and nothing follows it on the
        # wire: what would, might or might not be counted.
        fates, end, _ = cut_records(stream)
        assert fates[-1] == 'break' and end == len(stream)
        return stream, fates

    def rx_dropped(self):
        """The server device's rx_dropped, from the --drops command."""
        out = subprocess.run(self.args.drops, shell=True, check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)[0]['stats64']['rx']['dropped']

    def fuzz_broken(self, peer, kind, stream, fates):
        """A connection whose stream breaks: its peer must go.

        Nothing else drops anything meanwhile (the first connection is
        idle, real traffic is never dropped): the growth of rx_dropped is
        this stream's, printed as "BROKEN <peer> <kind> <records>
        <expected drops> <counted drops>".
        """
        s = self.connect(peer)
        before = self.rx_dropped()
        writer = Writer(s, self.rng)
        writer.add(stream)
        writer.flush()
        # Only then may the connection end: with the end of the stream
        # first, the break might not be parsed at all.
        wait_for_line(self.args.ntf_log,
                      r'^ntf peer_del .* id=%d( |$)' % peer,
                      self.args.wait, 'removal of peer %d' % peer)
        counted = self.rx_dropped() - before
        s.close()
        self.socks.remove(s)
        # Keyless, the peer drops every data record, and the break is
        # one more; control records go to the socket's owner if it reads
        # them before the peer goes, or with the peer (no counter either
        # way).
        expected = len([f for f in fates if f != 'ctrl'])
        for _ in fates:
            self.tally.sent('broken-' + kind)
        self.tally.add('broken', expected)
        self.tally.add('broken_counted', counted)
        say('BROKEN', peer, kind, len(fates), expected, counted)

    def run(self):
        a = self.args
        broken = []
        for i in range(a.sessions):
            kind = BREAKERS[i % len(BREAKERS)]
            broken.append((a.peer_id + 1 + i, kind) +
                          self.broken_stream(kind))
        s, reader = self.start_first()
        probe(a, 'before')
        self.tally.t0 = time.monotonic()
        for args in broken:
            self.fuzz_broken(*args)
        self.fuzz_first(s, reader)
        probe(a, 'after')
        self.tally.report()
        # The first connection stays: its peer's counters are read next.
        say('DONE')
        while True:
            time.sleep(3600)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('mode', choices=('udp', 'tcp'))
    parser.add_argument('--seed', type=int,
                        help='seed of the cases (default: a random one)')
    parser.add_argument('--count', type=int, default=1000,
                        help='datagrams or records to send')
    parser.add_argument('--server', required=True,
                        help='IPv4 address of the server')
    parser.add_argument('--port', type=int, required=True,
                        help="the server's port")
    parser.add_argument('--key-id', type=int, default=1,
                        help='key id of the key the target peer has')
    parser.add_argument('--genuine', type=int, default=16,
                        help='genuine packets to get before starting')
    parser.add_argument('--wait', type=float, default=60,
                        help='seconds to wait for anything')
    parser.add_argument('--probe', metavar='COMMAND',
                        help='shell command run as the fuzzing starts and '
                        'as it ends: "PROBE before|after <its output>"')
    udp = parser.add_argument_group('udp')
    udp.add_argument('--peer', action='append', default=[],
                     help='ID@ADDR:PORT of a peer of the server (a local '
                     'address), the real client first')
    udp.add_argument('--server6', help='IPv6 address of the server')
    udp.add_argument('--src6', help='local IPv6 address to send from')
    udp.add_argument('--capture', metavar='IFNAME',
                     help='where to capture genuine packets of the client')
    tcp = parser.add_argument_group('tcp')
    tcp.add_argument('--src', help='local address to connect from')
    tcp.add_argument('--peer-id', type=int,
                     help='peer id of the first connection, the next ones '
                     'following')
    tcp.add_argument('--sessions', type=int, default=len(BREAKERS),
                     help='connections with a broken stream')
    tcp.add_argument('--srv-log', help="the server's log: PEER lines")
    tcp.add_argument('--ntf-log', help='the notifications: peer_del lines')
    tcp.add_argument('--go-file', help='file that says "go" once the '
                     'first peer has its key')
    tcp.add_argument('--drops', metavar='COMMAND',
                     help='shell command that shows the server device as '
                     '"ip -j -s link show" does')
    args = parser.parse_args()

    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), 'big')
    say('SEED', args.seed)
    rng = random.Random(args.seed)
    if args.mode == 'udp':
        if not args.peer:
            parser.error('udp needs --peer')
        UdpFuzzer(args, rng).run()
    else:
        if None in (args.src, args.peer_id, args.srv_log, args.ntf_log,
                    args.go_file, args.drops):
            parser.error('tcp needs --src, --peer-id, --drops and the '
                         'files')
        TcpFuzzer(args, rng).run()


if __name__ == '__main__':
    main()
