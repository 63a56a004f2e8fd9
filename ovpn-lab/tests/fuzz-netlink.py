#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Netlink fuzzer of the ovpn generic netlink family.

Usage: fuzz-netlink.py --count N [--seed S] [--job J] --dev IFNAME...
                       --other IFNAME... --strict IFNAME [--protect ID...]

Sends a seeded stream of requests to every ovpn command: well-formed ones
with random values, and mutated ones (random attribute types, wrong sizes,
truncated attributes, deep nests of random content, missing attributes,
huge attributes, bit flips, broken lengths, bad genl headers), naming the
ovpn devices (--dev, looked up by name every few requests since they come
and go), devices of another kind (--other), stale and unknown ifindexes,
existing and unknown peer ids, and sockets of every kind the fuzzer opens
itself: UDP and TCP of both families, bound or not, listening, connected
and accepted, UDP of another encapsulation or attached to --strict
already, UDP-Lite (if the kernel has it), raw, unix, netlink, a pipe,
/dev/null, closed and impossible descriptor numbers.  A small share of
the requests are RTM_NEWLINK/RTM_DELLINK of an ovpn link of its own, with
random modes and garbage in IFLA_INFO_DATA.

Every request carries NLM_F_ACK; each must get exactly one final answer
(NLMSG_ERROR, or NLMSG_DONE for a dump) within --reply-secs, with an
errno of the set its command may return, an extack message with the
errnos only the driver returns, and well-formed replies.  Where the
outcome is certain it is checked exactly: a bad genl header, an unknown
command, a peer on a socket that cannot carry it, an ovpn link of a valid
or invalid mode, and the valid sequences of requests run on --strict (a
peer on a fresh UDP or TCP socket, two keys, swap, get, set, dump,
delete), which must all succeed and read back what was set.

Peers named by --protect (the traffic peer of the test) are only ever read:
a request that would name one is drawn again, unless it is a GET.

Prints the measured figures, one "job J: ..." line each, and "FAIL: ..."
lines; exits 1 on any failure.
"""

import argparse
import errno
import itertools
import os
import random
import re
import select
import socket
import stat
import struct
import sys
import time

NETLINK_ROUTE = 0
NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11

NLM_F_REQUEST = 0x1
NLM_F_MULTI = 0x2
NLM_F_ACK = 0x4
NLM_F_ECHO = 0x8
NLM_F_CAPPED = 0x100
NLM_F_ACK_TLVS = 0x200
NLM_F_DUMP = 0x300
NLM_F_EXCL = 0x200
NLM_F_CREATE = 0x400
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLMSGERR_ATTR_MSG = 1
NLA_F_NESTED = 0x8000
NLA_F_NET_BYTEORDER = 0x4000
NLA_TYPE_MASK = 0x3fff

GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
CTRL_ATTR_OPS = 6
CTRL_ATTR_OP_ID = 1
CTRL_ATTR_OP_FLAGS = 2
GENL_CMD_CAP_DO = 0x2
GENL_CMD_CAP_DUMP = 0x4

RTM_NEWLINK = 16
RTM_DELLINK = 17
RTM_GETLINK = 18
IFLA_IFNAME = 3
IFLA_LINKINFO = 18
IFLA_INFO_KIND = 1
IFLA_INFO_DATA = 2
IFLA_OVPN_MODE = 1
UDP_ENCAP = 100
UDP_ENCAP_L2TPINUDP = 3
IPPROTO_UDPLITE = 136

# include/uapi/linux/ovpn.h
PEER_NEW, PEER_SET, PEER_GET, PEER_DEL, PEER_DEL_NTF = 1, 2, 3, 4, 5
KEY_NEW, KEY_GET, KEY_SWAP, KEY_SWAP_NTF, KEY_DEL = 6, 7, 8, 9, 10
PEER_FLOAT_NTF = 11
CMD_NAMES = {
    PEER_NEW: 'peer_new', PEER_SET: 'peer_set', PEER_GET: 'peer_get',
    PEER_DEL: 'peer_del', PEER_DEL_NTF: 'peer_del_ntf',
    KEY_NEW: 'key_new', KEY_GET: 'key_get', KEY_SWAP: 'key_swap',
    KEY_SWAP_NTF: 'key_swap_ntf', KEY_DEL: 'key_del',
    PEER_FLOAT_NTF: 'peer_float_ntf',
}
# What the UAPI makes requests of; the notifications are not.
UAPI_DO = {PEER_NEW, PEER_SET, PEER_GET, PEER_DEL, KEY_NEW, KEY_GET,
           KEY_SWAP, KEY_DEL}
UAPI_DUMP = {PEER_GET}
A_IFINDEX, A_PEER, A_KEYCONF = 1, 2, 3
P_ID, P_REMOTE_IPV4, P_REMOTE_IPV6, P_SCOPE_ID, P_REMOTE_PORT = 1, 2, 3, 4, 5
P_SOCKET, P_NETNSID, P_VPN_IPV4, P_VPN_IPV6, P_LOCAL_IPV4 = 6, 7, 8, 9, 10
P_LOCAL_IPV6, P_LOCAL_PORT, P_KA_INTERVAL, P_KA_TIMEOUT = 11, 12, 13, 14
P_DEL_REASON, P_TX_ID = 15, 24
K_PEER_ID, K_SLOT, K_KEY_ID, K_ALG, K_ENC_DIR, K_DEC_DIR = 1, 2, 3, 4, 5, 6
KD_KEY, KD_NONCE = 1, 2
ALG_AES_GCM, ALG_CHACHA = 1, 2

# The errnos a command may answer, and why:
#   EINVAL, ERANGE   policy and consistency checks (ERANGE: values and
#                    lengths out of the policy's range)
#   ENODEV           no such ifindex, or the device going away (churn)
#   ENOENT           no such peer or key slot, or removed meanwhile
#   EOPNOTSUPP       the genl core: no such command, or not as a dump
#   EEXIST, EADDRINUSE, EDESTADDRREQ  taken peer id or VPN address, a peer
#                    left without any VPN address
#   EAFNOSUPPORT     a UDP remote of a family the socket cannot send to
#   ENOTSOCK, ENOTCONN, EBUSY  the socket of PEER_NEW: not a UDP or TCP
#                    socket (bad descriptors too), TCP not connected,
#                    socket attached elsewhere or of another encapsulation
# Anything else, ENOMEM and EFAULT above all, is a failure: nothing here
# is big enough to exhaust memory, and no address comes from userspace.
COMMON_ERRNOS = {errno.EINVAL, errno.ERANGE, errno.ENODEV, errno.ENOENT,
                 errno.EOPNOTSUPP}
SANE_ERRNOS = {
    PEER_NEW: COMMON_ERRNOS | {errno.EEXIST, errno.EADDRINUSE,
                               errno.ENOTSOCK, errno.ENOTCONN, errno.EBUSY,
                               errno.EAFNOSUPPORT},
    PEER_SET: COMMON_ERRNOS | {errno.EADDRINUSE, errno.EDESTADDRREQ,
                               errno.EAFNOSUPPORT},
}
# Errnos only the driver returns, always with an extack message.
DRIVER_ERRNOS = {errno.ENOENT, errno.ENODEV, errno.EEXIST, errno.EADDRINUSE,
                 errno.EDESTADDRREQ, errno.ENOTSOCK, errno.ENOTCONN,
                 errno.EBUSY, errno.EAFNOSUPPORT}
RTNL_ERRNOS = {errno.EINVAL, errno.ERANGE, errno.EEXIST, errno.ENODEV,
               errno.EOPNOTSUPP}

# Socket kinds a PEER_NEW may succeed with ("udp-attached" only on the
# device it is attached to).
ATTACHABLE = {'udp4', 'udp4-bound', 'udp4-connected', 'udp6', 'udp6-bound',
              'tcp4-connected', 'tcp4-accepted', 'tcp6-connected',
              'tcp6-accepted', 'udp-attached'}
# IPv4 sockets, which cannot send to an IPv6 remote.
UDP4_KINDS = {'udp4', 'udp4-bound', 'udp4-connected', 'udp-attached'}
V4MAPPED = bytes(10) + b'\xff\xff'

# Ids the random requests never draw, so that the valid sequences and the
# protected peers are not disturbed: the band of STRICT_BASE and UATT_BASE.
RESERVED_IDS = (0x3c0000, 0xb00000)
STRICT_BASE = 0xa50000
UATT_BASE = 0x3c3c00
# Peer ids of the churn and of the fuzzer's own peers.
KNOWN_IDS = list(range(10, 14)) + list(range(20, 36))
MESSAGE_CLASSES = [
    ('valid', 10), ('wrong-size', 10), ('wrong-type', 9), ('missing', 9),
    ('deep-nest', 6), ('huge', 5), ('duplicate', 5), ('random', 8),
    ('bitflip', 12), ('length', 6), ('truncated', 6), ('header', 9),
]
COMMANDS = [
    (PEER_NEW, 15), (PEER_SET, 12), (PEER_GET, 9), ('dump', 6),
    (PEER_DEL, 7), (KEY_NEW, 15), (KEY_GET, 8), (KEY_SWAP, 7),
    (KEY_DEL, 8), (PEER_DEL_NTF, 2), (KEY_SWAP_NTF, 2),
    (PEER_FLOAT_NTF, 2), ('unknown', 3),
]


# Attributes packed already, many at once: cheaper than one tuple each.
RAW = -1


class Fatal(Exception):
    """The run cannot go on: no answer, or answers out of order."""


def align4(n):
    return (n + 3) & ~3


def u32(v):
    return struct.pack('=I', v & 0xffffffff)


def be16(v):
    return struct.pack('>H', v & 0xffff)


def pack_attrs(attrs):
    """Serialize [(type, bytes or [children])], where type RAW marks bytes
    packed already; lengths are capped."""
    out = []
    for atype, val in attrs:
        if atype == RAW:
            out.append(val)
            continue
        if isinstance(val, list):
            val = pack_attrs(val)
        val = val[:0xffff - 4]
        out.append(struct.pack('=HH', 4 + len(val), atype & 0xffff) + val +
                   bytes(-len(val) % 4))
    return b''.join(out)


def parse_attrs(data):
    """[(type, payload)] of well-formed attributes; ValueError if not."""
    out = []
    off = 0
    while off + 4 <= len(data):
        alen, atype = struct.unpack_from('=HH', data, off)
        if alen < 4 or off + alen > len(data):
            raise ValueError('attribute at %d of length %d in %d bytes' %
                             (off, alen, len(data)))
        out.append((atype & NLA_TYPE_MASK, data[off + 4:off + alen]))
        off += align4(alen)
    if off < len(data):
        raise ValueError('%d bytes left over' % (len(data) - off))
    return out


def attr_dict(data):
    return dict(parse_attrs(data))


def ename(err):
    if err == 0:
        return 'OK'
    # Python names 95 ENOTSUP; the kernel returns it as EOPNOTSUPP.
    if err == errno.EOPNOTSUPP:
        return 'EOPNOTSUPP'
    return errno.errorcode.get(err, 'E%d' % err)


class Answer:
    """The replies to one request: data messages and the final errno."""

    def __init__(self):
        self.data = []
        self.err = None
        self.msg = None
        self.final = None


class Netlink:
    """One netlink socket; every request waits for its final answer."""

    def __init__(self, proto, timeout):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        # Errors without a copy of the request: huge requests stay small.
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.sock.bind((0, 0))
        # A receive timeout of the socket's own: no poll() each request.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                             struct.pack('@ll', timeout, 0))
        self.timeout = timeout
        self.seq = 0

    def request(self, mtype, flags, body):
        self.seq += 1
        seq = self.seq
        msg = struct.pack('=IHHII', 16 + len(body), mtype, flags, seq, 0)
        self.sock.send(msg + body)
        ans = Answer()
        while ans.final is None:
            try:
                buf, _, mflags, _ = self.sock.recvmsg(1 << 18)
            except BlockingIOError:
                raise Fatal('no answer to seq %d within %d s' %
                            (seq, self.timeout))
            if mflags & socket.MSG_TRUNC:
                raise Fatal('reply to seq %d truncated' % seq)
            self.split(buf, seq, ans)
        return ans

    @staticmethod
    def split(buf, seq, ans):
        off = 0
        while off < len(buf):
            if len(buf) - off < 16:
                raise Fatal('%d stray bytes in a reply' % (len(buf) - off))
            mlen, mtype, mflags, mseq, _ = struct.unpack_from('=IHHII', buf,
                                                              off)
            if mlen < 16 or off + mlen > len(buf):
                raise Fatal('reply of length %d in %d bytes' %
                            (mlen, len(buf) - off))
            if mseq != seq:
                raise Fatal('answer to seq %d while waiting for seq %d '
                            '(a second answer?)' % (mseq, seq))
            if ans.final is not None:
                raise Fatal('seq %d: a message after the final answer' % seq)
            payload = buf[off + 16:off + mlen]
            if mtype in (NLMSG_ERROR, NLMSG_DONE):
                ans.final = mtype
                ans.err, ans.msg = final_errno(mtype, mflags, payload)
            else:
                ans.data.append((mtype, mflags, payload))
            off += align4(mlen)


def final_errno(mtype, mflags, payload):
    """(errno, extack message or None) of NLMSG_ERROR or NLMSG_DONE."""
    if len(payload) < 4:
        raise Fatal('final answer of %d bytes' % len(payload))
    err = -struct.unpack_from('=i', payload)[0]
    if mtype == NLMSG_ERROR:
        if mflags & NLM_F_CAPPED:
            off = 4 + 16
        else:
            off = 4 + align4(struct.unpack_from('=I', payload, 4)[0])
    else:
        off = 4
    msg = None
    if mflags & NLM_F_ACK_TLVS:
        try:
            tlvs = attr_dict(payload[off:])
        except ValueError as e:
            raise Fatal('malformed extack: %s' % e)
        if NLMSGERR_ATTR_MSG in tlvs:
            msg = tlvs[NLMSGERR_ATTR_MSG].rstrip(b'\0').decode(
                errors='replace')
    return err, msg


class Tally:
    """Counts by key, printed as "key n" pairs."""

    def __init__(self):
        self.n = {}

    def add(self, key, k=1):
        self.n[key] = self.n.get(key, 0) + k

    def get(self, key):
        return self.n.get(key, 0)

    def __str__(self):
        return ', '.join('%s %d' % (k, v) for k, v in
                         sorted(self.n.items(), key=lambda kv: -kv[1]))


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.job = args.job
        self.rng = random.Random(args.seed + args.job)
        self.failures = 0
        self.counts = Tally()
        self.oks = Tally()
        self.classes = Tally()
        self.errnos = Tally()
        self.targets = Tally()
        self.fd_kinds = Tally()
        self.fd_oks = Tally()
        self.rtnl = Tally()
        self.waits = Tally()
        self.picks = {}
        self.phases = Tally()
        self.messages = 0
        self.mutated = 0
        self.valid = 0
        self.strict_runs = 0
        self.strict_msgs = 0
        self.errors = 0
        self.with_extack = 0
        self.redrawn = 0
        self.strict_what = ''
        self.keep = []
        self.seen = {}
        self.cache = {}
        self.lookups = 0
        self.ovfz = 'ovfz%d' % args.job
        self.devs = args.dev + [self.ovfz]
        protected = [u32(i) for i in args.protect]
        protected += [u32(UATT_BASE + j) for j in range(16)]
        self.protected = re.compile(b'|'.join(map(re.escape, protected)))
        self.genl = Netlink(NETLINK_GENERIC, args.reply_secs)
        self.route = Netlink(NETLINK_ROUTE, args.reply_secs)
        self.family, self.do_ops, self.dump_ops = self.resolve_family()
        self.pool = {}
        self.make_pool()

    # Reporting

    def out(self, text):
        print('job %d: %s' % (self.job, text), flush=True)

    def fail(self, text, body=b''):
        self.failures += 1
        if self.failures <= 40:
            print('FAIL: job %d msg %d: %s%s' %
                  (self.job, self.messages, text,
                   ' [%s]' % body[:96].hex() if body else ''), flush=True)

    # Family, devices, sockets

    def resolve_family(self):
        body = struct.pack('=BBH', CTRL_CMD_GETFAMILY, 1, 0)
        body += pack_attrs([(CTRL_ATTR_FAMILY_NAME, b'ovpn\0')])
        ans = self.genl.request(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK,
                                body)
        if ans.err or len(ans.data) != 1:
            raise Fatal('cannot resolve the ovpn family: %s' %
                        ename(ans.err))
        attrs = attr_dict(ans.data[0][2][4:])
        family = struct.unpack('=H', attrs[CTRL_ATTR_FAMILY_ID][:2])[0]
        do_ops, dump_ops = set(), set()
        for _, op in parse_attrs(attrs.get(CTRL_ATTR_OPS, b'')):
            op = attr_dict(op)
            cmd = struct.unpack('=I', op[CTRL_ATTR_OP_ID])[0]
            flags = struct.unpack('=I', op[CTRL_ATTR_OP_FLAGS])[0]
            if flags & GENL_CMD_CAP_DO:
                do_ops.add(cmd)
            if flags & GENL_CMD_CAP_DUMP:
                dump_ops.add(cmd)
        if do_ops != UAPI_DO or dump_ops != UAPI_DUMP:
            self.fail('family ops do %s dump %s, not those of the UAPI' %
                      (sorted(do_ops), sorted(dump_ops)))
        self.out('family ovpn id %d, do ops %s, dump ops %s' %
                 (family, ' '.join(map(str, sorted(do_ops))),
                  ' '.join(map(str, sorted(dump_ops)))))
        return family, do_ops, dump_ops

    def links(self):
        """{name: ifindex} of the namespace's links, from a dump: asking by
        name (SIOCGIFINDEX) would try to load a module for a missing one,
        which under emulation costs more than all the rest."""
        t0 = time.monotonic()
        ans = self.route.request(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP,
                                 struct.pack('=BxHiII', 0, 0, 0, 0, 0))
        if ans.err:
            raise Fatal('link dump: %s' % ename(ans.err))
        links = {}
        for mtype, _, payload in ans.data:
            try:
                name = attr_dict(payload[16:])[IFLA_IFNAME]
            except (ValueError, KeyError) as e:
                raise Fatal('malformed link dump: %r' % e)
            name = name.rstrip(b'\0').decode()
            links[name] = struct.unpack_from('=i', payload, 4)[0]
            self.seen.setdefault(name, set()).add(links[name])
        self.phases.add('lookups', time.monotonic() - t0)
        return links

    def index(self, name):
        return self.links().get(name)

    def cached_index(self, name):
        """The index of a device as of a few requests ago."""
        self.lookups -= 1
        if self.lookups < 0:
            self.lookups = 16
            self.cache = self.links()
        return self.cache.get(name)

    def add_fd(self, kind, obj):
        self.keep.append(obj)
        fd = obj if isinstance(obj, int) else obj.fileno()
        self.pool.setdefault(kind, []).append(fd)

    def make_pool(self):
        for _ in range(2):
            self.add_fd('udp4', socket.socket(socket.AF_INET,
                                              socket.SOCK_DGRAM))
            self.add_fd('udp6', socket.socket(socket.AF_INET6,
                                              socket.SOCK_DGRAM))
        for _ in range(3):
            self.add_fd('udp4-bound', udp_bound(socket.AF_INET))
            self.add_fd('udp6-bound', udp_bound(socket.AF_INET6))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(('127.0.0.1', 9))
        self.add_fd('udp4-connected', s)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_UDP, UDP_ENCAP, UDP_ENCAP_L2TPINUDP)
        self.add_fd('udp-foreign', s)
        try:
            self.add_fd('udplite', socket.socket(socket.AF_INET,
                                                 socket.SOCK_DGRAM,
                                                 IPPROTO_UDPLITE))
        except OSError:
            pass
        self.add_fd('raw-udp', socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                             socket.IPPROTO_UDP))
        self.lsn4 = socket.create_server(('127.0.0.1', 0), backlog=64)
        self.lsn6 = socket.create_server(('::1', 0), family=socket.AF_INET6,
                                         backlog=64)
        self.add_fd('tcp-listen', self.lsn4)
        self.add_fd('tcp-listen', self.lsn6)
        self.add_fd('tcp-unconnected', socket.socket())
        for _ in range(3):
            c, a = self.tcp_pair(self.lsn4)
            self.add_fd('tcp4-connected', c)
            self.add_fd('tcp4-accepted', a)
        for _ in range(2):
            c, a = self.tcp_pair(self.lsn6)
            self.add_fd('tcp6-connected', c)
            self.add_fd('tcp6-accepted', a)
        for kind, stype in (('unix', socket.SOCK_STREAM),
                            ('unix-dgram', socket.SOCK_DGRAM)):
            a, b = socket.socketpair(socket.AF_UNIX, stype)
            self.add_fd(kind, a)
            self.keep.append(b)
        self.add_fd('netlink', self.genl.sock)
        r, w = os.pipe()
        self.add_fd('pipe', r)
        self.keep.append(w)
        self.add_fd('file', os.open('/dev/null', os.O_RDWR))
        # Numbers far above what the fuzzer opens: closed all along.
        for fd in range(900 + self.job * 10, 903 + self.job * 10):
            try:
                os.fstat(fd)
            except OSError:
                self.pool.setdefault('closed', []).append(fd)
        self.pool['bad-number'] = [0x7fffffff, 0xffffffff, 0x80000000]
        for fd in range(3):
            try:
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    self.pool.setdefault('stdio', []).append(fd)
            except OSError:
                pass

    @staticmethod
    def tcp_pair(lsn):
        c = socket.create_connection(lsn.getsockname()[:2])
        a, _ = lsn.accept()
        return c, a

    # Random values

    def pick(self, weighted):
        """A choice of [(value, weight)]; the lists are made once."""
        key = id(weighted)
        if key not in self.picks:
            self.picks[key] = ([w[0] for w in weighted],
                               list(itertools.accumulate(w[1]
                                                         for w in weighted)))
        values, cum = self.picks[key]
        return self.rng.choices(values, cum_weights=cum)[0]

    def rand_bytes(self, n):
        return self.rng.getrandbits(8 * n).to_bytes(n, 'little') if n else b''

    def peer_id(self):
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(KNOWN_IDS)
        if r < 0.55:
            return self.rng.randint(1000, 1100)
        if r < 0.65:
            return self.rng.choice([0, 0xffffff])
        if r < 0.75:
            return self.rng.choice([0x1000000, 0xffffffff,
                                    self.rng.getrandbits(32) | 0x1000000])
        while True:
            v = self.rng.getrandbits(24)
            if not RESERVED_IDS[0] <= v < RESERVED_IDS[1]:
                return v

    def ifindex(self, meta):
        """[IFINDEX attribute] or []; meta gets what it names."""
        r = self.rng.random()
        ifi, name = None, None
        if r < 0.03:
            meta['target'] = 'no-ifindex'
            return []
        if r < 0.70:
            name = self.rng.choice(self.devs)
            ifi = self.cached_index(name)
            label = 'ovpn' if ifi else 'gone'
        elif r < 0.80:
            ifi = self.cached_index(self.rng.choice(self.args.other))
            label = 'other-kind'
        elif r < 0.90:
            # Devices deleted and made again leave their old indexes.
            now = {self.cached_index(n) for n in self.devs}
            stale = [i for n in self.devs for i in self.seen.get(n, ())
                     if i not in now]
            if stale:
                ifi = self.rng.choice(stale)
            label = 'stale'
        else:
            label = 'unknown'
        if ifi is None:
            ifi = self.rng.choice([0, 0x7fffffff, 0xffffffff, 99999])
        meta['target'] = label
        meta['dev'] = 'strict' if name == self.args.strict else name
        return [(A_IFINDEX, u32(ifi))]

    def ipv4(self):
        return socket.inet_aton(self.rng.choice([
            '127.0.0.1', '10.10.1.2', '10.10.1.1', '0.0.0.0',
            '255.255.255.255', '224.0.0.1', '192.0.2.%d' %
            self.rng.randint(0, 255)]))

    def vpn4(self):
        r = self.rng.random()
        if r < 0.6:
            return socket.inet_aton('5.5.%d.%d' % (self.rng.choice([5, 6]),
                                                   self.rng.randint(1, 60)))
        if r < 0.8:
            return socket.inet_aton(self.rng.choice([
                '0.0.0.0', '127.0.0.1', '224.0.0.1', '255.255.255.255',
                '0.1.2.3']))
        while True:
            a = self.rand_bytes(4)
            # 10.96.0.0/12 belongs to the valid sequences.
            if a[0] != 10 or a[1] & 0xf0 != 0x60:
                return a

    def ipv6(self, vpn=False):
        choices = ['::1', 'fd00:6::%x' % self.rng.randint(1, 60), '::',
                   'ff02::1', '::ffff:127.0.0.1', '::1.2.3.4', 'fe80::1']
        if not vpn:
            choices.append('fd00:1::2')
        if self.rng.random() < 0.85:
            return socket.inet_pton(socket.AF_INET6,
                                    self.rng.choice(choices))
        while True:
            a = self.rand_bytes(16)
            # fd99::/16 belongs to the valid sequences.
            if a[:2] != b'\xfd\x99':
                return a

    def port(self):
        return be16(self.rng.choice([1194, 1, 0, 65535, 9,
                                     self.rng.getrandbits(16)]))

    def u32_value(self):
        return u32(self.rng.choice([0, 1, 2, 3, 10, 60, 3600, 86400,
                                    0x7fffffff, 0xffffffff,
                                    self.rng.getrandbits(32)]))

    def socket_fd(self):
        if self.rng.random() < 0.1:
            return 'number', self.rng.randint(0, 300)
        kind = self.rng.choice(sorted(self.pool))
        return kind, self.rng.choice(self.pool[kind])

    # Requests, well-formed

    def peer_nest(self, cmd, meta):
        attrs = [(P_ID, u32(self.peer_id()))]
        if cmd == PEER_NEW or self.rng.random() < 0.05:
            kind, fd = self.socket_fd()
            meta['fd_kind'] = kind
            attrs.append((P_SOCKET, u32(fd)))
        r = self.rng.random()
        if r < 0.45:
            attrs.append((P_REMOTE_IPV4, self.ipv4()))
        elif r < 0.75:
            addr = self.ipv6()
            attrs.append((P_REMOTE_IPV6, addr))
            if addr[:12] != V4MAPPED:
                meta['remote6'] = True
            if self.rng.random() < 0.3:
                attrs.append((P_SCOPE_ID, u32(self.rng.choice(
                    [0, 1, 2, 1000, self.rng.getrandbits(32)]))))
        if r < 0.75 and self.rng.random() < 0.95 or self.rng.random() < 0.05:
            attrs.append((P_REMOTE_PORT, self.port()))
        if self.rng.random() < 0.15:
            attrs.append((P_LOCAL_IPV4, self.ipv4()))
        if self.rng.random() < 0.1:
            attrs.append((P_LOCAL_IPV6, self.ipv6()))
        if self.rng.random() < 0.5:
            attrs.append((P_VPN_IPV4, self.vpn4()))
        if self.rng.random() < 0.3:
            attrs.append((P_VPN_IPV6, self.ipv6(vpn=True)))
        r = self.rng.random()
        if r < 0.3:
            attrs.append((P_KA_INTERVAL, self.u32_value()))
        if r < 0.25 or 0.3 <= r < 0.35:
            attrs.append((P_KA_TIMEOUT, self.u32_value()))
        if self.rng.random() < 0.2:
            attrs.append((P_TX_ID, u32(self.rng.choice(
                [0, 1, 0xffffff, 0x1000000, self.rng.getrandbits(24)]))))
        self.rng.shuffle(attrs)
        return attrs

    def key_dir(self, alg):
        if self.rng.random() < 0.7:
            klen = 32 if alg == ALG_CHACHA else self.rng.choice([16, 24, 32])
        else:
            klen = self.rng.choice([0, 1, 15, 31, 33, 64, 255, 256, 257])
        nlen = 8 if self.rng.random() < 0.85 else self.rng.choice(
            [0, 7, 9, 16])
        attrs = [(KD_KEY, self.rand_bytes(klen)),
                 (KD_NONCE, self.rand_bytes(nlen))]
        self.rng.shuffle(attrs)
        return attrs

    def keyconf_nest(self, cmd, meta):
        pid = self.peer_id()
        attrs = [(K_PEER_ID, u32(pid))]
        meta['id'] = pid
        if cmd in (KEY_NEW, KEY_GET, KEY_DEL) or self.rng.random() < 0.1:
            slot = self.rng.choice([0, 1, 0, 1, 2, 0xffffffff])
            attrs.append((K_SLOT, u32(slot)))
            meta['slot'] = slot
        alg = self.rng.choice([ALG_AES_GCM, ALG_CHACHA, ALG_AES_GCM,
                               ALG_CHACHA, 0, 3, 0xffffffff])
        if cmd == KEY_NEW or self.rng.random() < 0.1:
            attrs.append((K_KEY_ID, u32(self.rng.choice(
                [0, 1, 2, 3, 4, 5, 6, 7, 8, 255]))))
            attrs.append((K_ALG, u32(alg)))
        if cmd == KEY_NEW or self.rng.random() < 0.05:
            attrs.append((K_ENC_DIR | NLA_F_NESTED, self.key_dir(alg)))
            attrs.append((K_DEC_DIR | NLA_F_NESTED, self.key_dir(alg)))
        self.rng.shuffle(attrs)
        return attrs

    def build(self, cmd, dump, meta):
        """The attributes of a well-formed request of cmd."""
        attrs = self.ifindex(meta)
        if dump:
            if self.rng.random() < 0.05:
                attrs.append((A_PEER | NLA_F_NESTED,
                              [(P_ID, u32(self.peer_id()))]))
            return attrs
        if cmd in (PEER_NEW, PEER_SET):
            attrs.append((A_PEER | NLA_F_NESTED, self.peer_nest(cmd, meta)))
        elif cmd in (PEER_GET, PEER_DEL):
            pid = self.peer_id()
            meta['id'] = pid
            attrs.append((A_PEER | NLA_F_NESTED, [(P_ID, u32(pid))]))
        elif cmd in (KEY_NEW, KEY_GET, KEY_SWAP, KEY_DEL):
            attrs.append((A_KEYCONF | NLA_F_NESTED,
                          self.keyconf_nest(cmd, meta)))
        else:
            # Notifications and unknown commands: anything plausible.
            if self.rng.random() < 0.5:
                attrs.append((A_PEER | NLA_F_NESTED,
                              self.peer_nest(PEER_SET, {})))
            if self.rng.random() < 0.5:
                attrs.append((A_KEYCONF | NLA_F_NESTED,
                              self.keyconf_nest(KEY_NEW, {})))
        return attrs

    # Mutations

    def random_attrs(self, depth):
        attrs = []
        for _ in range(self.rng.randint(0 if depth else 1, 6)):
            atype = self.rng.randint(0, 30)
            if depth < 6 and self.rng.random() < 0.3:
                flag = NLA_F_NESTED if self.rng.random() < 0.8 else 0
                attrs.append((atype | flag, self.random_attrs(depth + 1)))
            else:
                attrs.append((atype, self.rand_bytes(self.rng.choice(
                    [0, 1, 2, 3, 4, 4, 4, 6, 8, 16, 17,
                     self.rng.randint(0, 300)]))))
        return attrs

    @staticmethod
    def nodes(attrs, out=None):
        """(list, index) of every attribute, nested ones included."""
        out = [] if out is None else out
        for i, (atype, val) in enumerate(attrs):
            if atype == RAW:
                continue
            out.append((attrs, i))
            if isinstance(val, list):
                Fuzzer.nodes(val, out)
        return out

    @staticmethod
    def lists(attrs, out=None):
        """The top-level list and that of every nest."""
        out = [attrs] if out is None else out
        for _, val in attrs:
            if isinstance(val, list):
                out.append(val)
                Fuzzer.lists(val, out)
        return out

    def mutate_tree(self, klass, attrs):
        rng = self.rng
        if klass not in ('wrong-size', 'wrong-type', 'missing', 'deep-nest',
                         'huge', 'duplicate', 'random'):
            return
        nodes = self.nodes(attrs)
        leaves = [n for n in nodes if not isinstance(n[0][n[1]][1], list)]
        if klass == 'wrong-size' and leaves:
            lst, i = rng.choice(leaves)
            atype, val = lst[i]
            size = rng.choice([0, 1, 2, 3, 5, 7, 9, 15, 17, len(val) - 1,
                               len(val) + 1, rng.randint(0, 64)])
            lst[i] = (atype, (val + self.rand_bytes(64))[:max(size, 0)])
        elif klass == 'wrong-type' and nodes:
            lst, i = rng.choice(nodes)
            atype, val = lst[i]
            r = rng.random()
            if r < 0.35:
                lst[i] = ((atype & ~NLA_TYPE_MASK) | rng.randint(0, 40), val)
            elif r < 0.6:
                lst[i] = (atype ^ NLA_F_NESTED, val)
            elif r < 0.7:
                lst[i] = (atype ^ NLA_F_NET_BYTEORDER, val)
            elif isinstance(val, list):
                lst[i] = (atype, pack_attrs(val))
            else:
                lst[i] = (atype | NLA_F_NESTED, self.random_attrs(1))
        elif klass == 'missing' and nodes:
            for _ in range(rng.randint(1, 3)):
                nodes = self.nodes(attrs)
                if not nodes:
                    break
                lst, i = rng.choice(nodes)
                del lst[i]
        elif klass == 'deep-nest':
            chain = self.random_attrs(5)
            for _ in range(rng.randint(1, 24)):
                chain = [(rng.randint(0, 30) | NLA_F_NESTED, chain)]
            lst = rng.choice(self.lists(attrs))
            if leaves and rng.random() < 0.5:
                lst, i = rng.choice(leaves)
                lst[i] = (lst[i][0] | NLA_F_NESTED, chain)
            else:
                lst.insert(rng.randint(0, len(lst)), chain[0])
        elif klass == 'huge':
            lst = rng.choice(self.lists(attrs))
            if rng.random() < 0.5:
                size = rng.choice([257, 1000, 4096, 32768,
                                   rng.randint(300, 65000)])
                atype = rng.randint(0, 30)
                if leaves and rng.random() < 0.3:
                    leaf, j = rng.choice(leaves)
                    atype = leaf[j][0]
                lst.insert(rng.randint(0, len(lst)),
                           (atype & ~NLA_F_NESTED, self.rand_bytes(size)))
            else:
                many = pack_attrs([(rng.randint(0, 30),
                                    u32(rng.getrandbits(32)))])
                lst.append((RAW, many * rng.randint(100, 3000)))
        elif klass == 'duplicate' and nodes:
            lst, i = rng.choice(nodes)
            atype, val = lst[i]
            if not isinstance(val, list):
                val = self.rand_bytes(len(val))
            lst.insert(i + 1, (atype, val))
        elif klass == 'random':
            attrs[:] = self.random_attrs(0)

    def mutate_bytes(self, klass, data):
        rng = self.rng
        if not data:
            return data
        if klass == 'bitflip':
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                bit = rng.randrange(8 * len(b))
                b[bit // 8] ^= 1 << (bit % 8)
            return bytes(b)
        if klass == 'truncated':
            return data[:rng.randrange(len(data))]
        # A wrong length in the header of one of the attributes.
        heads = []
        self.attr_heads(data, 0, heads)
        if not heads:
            return data
        off, alen = rng.choice(heads)
        new = rng.choice([0, 1, 3, 4, 5, alen - 1, alen + 1, alen + 4,
                          0xffff, rng.randint(0, len(data) + 8)])
        return data[:off] + struct.pack('=H', new & 0xffff) + data[off + 2:]

    def attr_heads(self, data, base, heads):
        off = 0
        while off + 4 <= len(data):
            alen, atype = struct.unpack_from('=HH', data, off)
            if alen < 4 or off + alen > len(data):
                return
            heads.append((base + off, alen))
            if atype & NLA_F_NESTED:
                self.attr_heads(data[off + 4:off + alen], base + off + 4,
                                heads)
            off += align4(alen)

    def mutate_header(self, cmd, flags):
        """A bad genl header or flags: (cmd, version, reserved, flags,
        cut), cut the bytes of the genl header to keep, or None."""
        sub = self.rng.choice(['short', 'reserved', 'flags', 'version',
                               'dump', 'cmd'])
        version, reserved, cut = 1, 0, None
        if sub == 'short':
            cut = self.rng.randint(0, 3)
        elif sub == 'reserved':
            reserved = self.rng.randint(1, 0xffff)
        elif sub == 'flags':
            flags |= self.rng.choice([NLM_F_MULTI, 0x10, 0x20, 0x100, 0x200,
                                      0x800, 0x1000, 0x8000])
        elif sub == 'version':
            version = self.rng.randint(0, 255)
        elif sub == 'dump':
            flags |= NLM_F_DUMP
        else:
            cmd = self.rng.choice([0, 12, 13, 64, 255])
        return cmd, version, reserved, flags, cut

    def predict(self, flags, body):
        """The errno the genl core answers before ovpn runs, if any."""
        if len(body) < 4:
            return errno.EINVAL
        cmd, _, reserved = struct.unpack_from('=BBH', body)
        if reserved:
            return errno.EINVAL
        rest = flags
        if flags & NLM_F_DUMP == NLM_F_DUMP:
            rest &= ~NLM_F_DUMP
        if rest & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO):
            return errno.EINVAL
        dump = flags & NLM_F_DUMP == NLM_F_DUMP
        if cmd not in (self.dump_ops if dump else self.do_ops):
            return errno.EOPNOTSUPP
        return None

    # One random request

    def draw(self):
        cmd = self.pick(COMMANDS)
        dump = cmd == 'dump'
        if dump:
            cmd = PEER_GET
        elif cmd == 'unknown':
            cmd = self.rng.choice([0, 12, 13, 100, 255])
        klass = self.pick(MESSAGE_CLASSES)
        meta = {'cmd': cmd, 'dump': dump, 'class': klass}
        attrs = self.build(cmd, dump, meta)
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
        version, reserved, cut = 1, 0, None
        if klass == 'header':
            cmd, version, reserved, flags, cut = self.mutate_header(cmd,
                                                                    flags)
        else:
            self.mutate_tree(klass, attrs)
        data = pack_attrs(attrs)
        if klass in ('bitflip', 'truncated', 'length'):
            data = self.mutate_bytes(klass, data)
        body = struct.pack('=BBH', cmd & 0xff, version, reserved)
        body = body[:cut] if cut is not None else body + data
        return meta, flags, body

    def fuzz_one(self):
        for _ in range(50):
            meta, flags, body = self.draw()
            # Only GETs may name a protected peer.
            if body[:1] in (bytes([PEER_GET]), bytes([KEY_GET])) or \
               not self.protected.search(body):
                break
            self.redrawn += 1
        else:
            return
        if meta['class'] == 'valid':
            self.valid += 1
        else:
            self.mutated += 1
        self.classes.add(meta['class'])
        self.targets.add(meta['target'])
        ans = self.send(meta, flags, body)
        if ans.err == errno.ENODEV and meta['target'] == 'ovpn':
            self.lookups = 0
        if meta['name'] == 'peer_new' and meta['class'] == 'valid':
            self.fd_kinds.add(meta.get('fd_kind'))
        self.check(meta, flags, body, ans)

    def name_of(self, cmd, dump):
        if dump:
            return 'peer_dump'
        return CMD_NAMES.get(cmd, 'unknown')

    def send(self, meta, flags, body):
        self.messages += 1
        dump = flags & NLM_F_DUMP == NLM_F_DUMP
        name = self.name_of(body[0] if body else None, dump)
        meta['name'] = name
        t0 = time.monotonic()
        ans = self.genl.request(self.family, flags, body)
        self.waits.add(name, time.monotonic() - t0)
        self.counts.add(name)
        self.errnos.add(ename(ans.err))
        if ans.err == 0:
            self.oks.add(name)
        else:
            self.errors += 1
            if ans.msg:
                self.with_extack += 1
        return ans

    # Checks of every answer

    def check(self, meta, flags, body, ans):
        name, err = meta['name'], ans.err
        dump = flags & NLM_F_DUMP == NLM_F_DUMP
        cmd = body[0] if body else None
        known = cmd in (self.dump_ops if dump else self.do_ops)
        predicted = self.predict(flags, body)
        if predicted is not None and err != predicted:
            self.fail('%s (%s): %s, the genl core answers %s' %
                      (name, meta['class'], ename(err), ename(predicted)),
                      body)
        elif err and err not in SANE_ERRNOS.get(cmd, COMMON_ERRNOS):
            self.fail('%s (%s): unexpected errno %s (%s)' %
                      (name, meta['class'], ename(err), ans.msg), body)
        if known and err in DRIVER_ERRNOS and not ans.msg:
            self.fail('%s (%s): %s without an extack message' %
                      (name, meta['class'], ename(err)), body)
        if ans.final == NLMSG_DONE and not dump:
            self.fail('%s: NLMSG_DONE ends a request that is no dump' % name)
        if err and ans.data and not dump:
            self.fail('%s: %s, and %d replies too' %
                      (name, ename(err), len(ans.data)), body)
        if err == 0:
            return self.check_success(meta, cmd, dump, body, ans)
        return []

    def check_success(self, meta, cmd, dump, body, ans):
        name = meta['name']
        want = 1 if cmd in (PEER_GET, KEY_GET) and not dump else 0
        if not dump and len(ans.data) != want:
            self.fail('%s succeeded with %d replies, not %d' %
                      (name, len(ans.data), want), body)
            return []
        replies = []
        for mtype, mflags, payload in ans.data:
            if mtype != self.family or len(payload) < 4 or \
               payload[0] != cmd or (dump and not mflags & NLM_F_MULTI):
                self.fail('%s: reply of type %d flags %#x cmd %s' %
                          (name, mtype, mflags, payload[:1].hex()), body)
                continue
            try:
                replies.append(reply_attrs(cmd, payload[4:]))
            except (ValueError, KeyError) as e:
                self.fail('%s: malformed reply: %s' % (name, e), body)
        valid = meta['class'] == 'valid'
        if cmd == PEER_NEW and valid:
            kind = meta.get('fd_kind')
            self.fd_oks.add(kind)
            if kind not in ATTACHABLE and kind != 'number' or \
               kind == 'udp-attached' and meta.get('dev') != 'strict':
                self.fail('peer_new succeeded on a socket of kind %s (%s)' %
                          (kind, meta['target']), body)
            if kind in UDP4_KINDS and meta.get('remote6'):
                self.fail('peer_new gave an IPv6 remote to an IPv4 socket',
                          body)
        if valid and not dump and replies and 'id' in meta:
            got = replies[0].get('id')
            if got != meta['id'] or \
               cmd == KEY_GET and replies[0].get('slot') != meta.get('slot'):
                self.fail('%s of peer %s slot %s answered %s' %
                          (name, meta['id'], meta.get('slot'), replies[0]),
                          body)
        return replies

    # The valid sequences on the strict device

    def strict_request(self, what, cmd, attrs, want=0, dump=False):
        """One request of a valid sequence; its replies, or None."""
        meta = {'cmd': cmd, 'class': 'strict', 'target': 'strict',
                'dev': 'strict'}
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
        body = struct.pack('=BBH', cmd, 1, 0) + pack_attrs(attrs)
        self.strict_msgs += 1
        ans = self.send(meta, flags, body)
        replies = self.check(meta, flags, body, ans)
        if ans.err != want:
            self.fail('%s, %s: %s (%s), expected %s' %
                      (self.strict_what, what, ename(ans.err), ans.msg,
                       ename(want)), body)
            return None
        return replies

    def fresh_socket(self, kind):
        """(socket, other end or None, remote attributes)."""
        if kind == 'udp6':
            s = udp_bound(socket.AF_INET6)
            addr = socket.inet_pton(socket.AF_INET6, '::1')
            return s, None, [(P_REMOTE_IPV6, addr), (P_REMOTE_PORT, be16(9))]
        if kind == 'tcp4':
            c, a = self.tcp_pair(self.lsn4)
            return c, a, []
        s = udp_bound(socket.AF_INET)
        return s, None, [(P_REMOTE_IPV4, socket.inet_aton('127.0.0.1')),
                         (P_REMOTE_PORT, be16(9))]

    def attach_shared_socket(self):
        """A UDP socket attached to the strict device by a protected peer:
        the socket of kind "udp-attached" that no other device may take."""
        self.strict_what = 'set-up'
        ifi = self.index(self.args.strict)
        s, _, remote = self.fresh_socket('udp4')
        peer = [(P_ID, u32(UATT_BASE + self.job)), (P_SOCKET, u32(s.fileno())),
                (P_VPN_IPV4, socket.inet_aton('10.111.255.%d' % self.job))]
        if self.strict_request('attach the shared socket', PEER_NEW,
                               [(A_IFINDEX, u32(ifi or 0)),
                                (A_PEER | NLA_F_NESTED, peer + remote)]
                               ) is not None:
            self.add_fd('udp-attached', s)

    def strict_sequence(self):
        n = self.strict_runs
        self.strict_runs += 1
        self.strict_what = 'valid sequence %d' % n
        ifi = self.index(self.args.strict)
        if ifi is None:
            self.fail('the device %s of the valid sequences is gone' %
                      self.args.strict)
            return
        kind = ['udp4', 'udp6', 'tcp4'][n % 3]
        pid = STRICT_BASE + (self.job << 12) + n % 4096
        sock, other, remote = self.fresh_socket(kind)
        try:
            self.strict_steps(ifi, pid, n, kind, sock, remote)
        finally:
            sock.close()
            if other:
                other.close()

    def strict_key(self, slot):
        alg = self.rng.choice([ALG_AES_GCM, ALG_CHACHA])
        klen = 32 if alg == ALG_CHACHA else self.rng.choice([16, 24, 32])
        kid = self.rng.randint(0, 7)
        dirs = [[(KD_KEY, self.rand_bytes(klen)),
                 (KD_NONCE, self.rand_bytes(8))] for _ in range(2)]
        return kid, alg, [(K_SLOT, u32(slot)), (K_KEY_ID, u32(kid)),
                          (K_ALG, u32(alg)),
                          (K_ENC_DIR | NLA_F_NESTED, dirs[0]),
                          (K_DEC_DIR | NLA_F_NESTED, dirs[1])]

    def strict_key_is(self, top, pid, slot, kid, alg):
        r = self.strict_request('key_get slot %d' % slot, KEY_GET, top + [
            (A_KEYCONF | NLA_F_NESTED, [(K_PEER_ID, u32(pid)),
                                        (K_SLOT, u32(slot))])])
        if r and (r[0].get('key_id'), r[0].get('alg')) != (kid, alg):
            self.fail('%s: slot %d holds %s, not key %d alg %d' %
                      (self.strict_what, slot, r[0], kid, alg))

    def strict_steps(self, ifi, pid, n, kind, sock, remote):
        top = [(A_IFINDEX, u32(ifi))]
        vpn4 = socket.inet_aton('10.%d.%d.%d' % (96 + self.job,
                                                 (n >> 8) & 0xff, n & 0xff))
        peer = [(P_ID, u32(pid)), (P_SOCKET, u32(sock.fileno())),
                (P_VPN_IPV4, vpn4)] + remote
        if self.strict_request('peer_new ' + kind, PEER_NEW,
                               top + [(A_PEER | NLA_F_NESTED, peer)]) is None:
            return
        keyconf = [(K_PEER_ID, u32(pid))]
        kid1, alg1, key1 = self.strict_key(0)
        kid2, alg2, key2 = self.strict_key(1)
        for what, key in (('key_new primary', key1),
                          ('key_new secondary', key2)):
            self.strict_request(what, KEY_NEW, top + [
                (A_KEYCONF | NLA_F_NESTED, keyconf + key)])
        self.strict_key_is(top, pid, 0, kid1, alg1)
        self.strict_request('key_swap', KEY_SWAP, top + [
            (A_KEYCONF | NLA_F_NESTED, keyconf)])
        self.strict_key_is(top, pid, 0, kid2, alg2)
        self.strict_key_is(top, pid, 1, kid1, alg1)

        tx_id = self.rng.getrandbits(24)
        ka = (self.rng.randint(100, 1000), self.rng.randint(1000, 5000))
        vpn6 = socket.inet_pton(socket.AF_INET6, 'fd99:%x::%x' %
                                (self.job, n + 1))
        self.strict_request('peer_set', PEER_SET, top + [
            (A_PEER | NLA_F_NESTED, [
                (P_ID, u32(pid)), (P_TX_ID, u32(tx_id)),
                (P_KA_INTERVAL, u32(ka[0])), (P_KA_TIMEOUT, u32(ka[1])),
                (P_VPN_IPV6, vpn6)])])
        r = self.strict_request('peer_get', PEER_GET, top + [
            (A_PEER | NLA_F_NESTED, [(P_ID, u32(pid))])])
        want = {'id': pid, 'tx_id': tx_id, 'ka': ka, 'vpn4': vpn4,
                'vpn6': vpn6, 'local_port': sock.getsockname()[1],
                'remote': bool(remote)}
        if r and {k: r[0].get(k) for k in want} != want:
            self.fail('valid sequence %d: peer_get %s, expected %s' %
                      (n, r[0], want))

        self.strict_request('key_del secondary', KEY_DEL, top + [
            (A_KEYCONF | NLA_F_NESTED, keyconf + [(K_SLOT, u32(1))])])
        self.strict_request('key_get deleted', KEY_GET, top + [
            (A_KEYCONF | NLA_F_NESTED, keyconf + [(K_SLOT, u32(1))])],
            want=errno.ENOENT)
        r = self.strict_request('peer_get dump', PEER_GET, top, dump=True)
        if r is not None and pid not in [p.get('id') for p in r]:
            self.fail('valid sequence %d: peer %#x not dumped' % (n, pid))
        self.strict_request('peer_del', PEER_DEL, top + [
            (A_PEER | NLA_F_NESTED, [(P_ID, u32(pid))])])
        self.strict_request('peer_get deleted', PEER_GET, top + [
            (A_PEER | NLA_F_NESTED, [(P_ID, u32(pid))])], want=errno.ENOENT)

    # rtnetlink: links of kind ovpn

    def link_request(self, mtype, flags, attrs):
        body = struct.pack('=BxHiII', 0, 0, 0, 0, 0) + pack_attrs(attrs)
        self.messages += 1
        t0 = time.monotonic()
        ans = self.route.request(mtype, NLM_F_REQUEST | NLM_F_ACK | flags,
                                 body)
        self.waits.add('rtnetlink', time.monotonic() - t0)
        return ans, body

    def link_mode(self):
        """The mode of our link, from RTM_GETLINK."""
        ans, _ = self.link_request(RTM_GETLINK, 0,
                                   [(IFLA_IFNAME, self.ovfz.encode() + b'\0')])
        if ans.err or len(ans.data) != 1:
            return 'getlink %s' % ename(ans.err)
        try:
            info = attr_dict(attr_dict(ans.data[0][2][16:])[IFLA_LINKINFO])
            data = attr_dict(info[IFLA_INFO_DATA])
            return data[IFLA_OVPN_MODE][0]
        except (ValueError, KeyError, IndexError) as e:
            return 'malformed getlink reply (%r)' % e

    def info_data(self, mode):
        """(IFLA_INFO_DATA, the mode it asks for if it is valid, class)."""
        rng = self.rng
        klass = rng.choice(['valid', 'mode', 'mode', 'size', 'garbage',
                            'flag', 'bitflip', 'none'])
        mdata = bytes([mode])
        if klass == 'mode':
            mdata = bytes([rng.randint(2, 255)])
        elif klass == 'size':
            mdata = rng.choice([b'', struct.pack('=H', mode), u32(mode)])
        attrs = [(IFLA_OVPN_MODE, mdata)]
        if klass == 'garbage':
            attrs = self.random_attrs(1)
            if rng.random() < 0.5:
                attrs.insert(0, (IFLA_OVPN_MODE, mdata))
        data = pack_attrs(attrs)
        if klass == 'bitflip':
            data = self.mutate_bytes('bitflip', data)
        if klass == 'none':
            return [], mode, klass
        flag = 0 if klass == 'flag' else NLA_F_NESTED
        return [(IFLA_INFO_DATA | flag, data)], mode, klass

    def rtnl_one(self):
        exists = self.index(self.ovfz) is not None
        name = [(IFLA_IFNAME, self.ovfz.encode() + b'\0')]
        if self.rng.random() < 0.3:
            ans, body = self.link_request(RTM_DELLINK, 0, name)
            self.rtnl_tally('dellink', 'valid', ans)
            want = 0 if exists else errno.ENODEV
            if ans.err != want:
                self.fail('dellink %s: %s, expected %s' %
                          (self.ovfz, ename(ans.err), ename(want)), body)
            return
        mode = self.rng.choice([0, 1])
        data, mode, klass = self.info_data(mode)
        if klass == 'none':
            mode = 0
        if self.rng.random() < 0.08:
            name = [(IFLA_IFNAME, b'ovfz-name-much-too-long\0')]
            klass = 'long-name'
        flags = self.rng.choice([NLM_F_CREATE | NLM_F_EXCL] * 4 +
                                [NLM_F_CREATE, 0])
        info = [(IFLA_INFO_KIND, b'ovpn\0')] + data
        ans, body = self.link_request(RTM_NEWLINK, flags, name + [
            (IFLA_LINKINFO | NLA_F_NESTED, info)])
        self.rtnl_tally('newlink', klass, ans)
        if klass == 'valid' or klass == 'none':
            # rtnl_newlink(): an existing link is changed, unless
            # NLM_F_EXCL; ovpn has no changelink for IFLA_INFO_DATA.
            if exists and flags & NLM_F_EXCL:
                want = errno.EEXIST
            elif exists:
                want = errno.EOPNOTSUPP if data else 0
            else:
                want = 0 if flags & NLM_F_CREATE else errno.ENODEV
            if ans.err != want:
                self.fail('newlink mode %d flags %#x: %s, expected %s' %
                          (mode, flags, ename(ans.err), ename(want)), body)
            elif ans.err == 0 and not exists:
                got = self.link_mode()
                if got != mode:
                    self.fail('link made with mode %d has mode %s' %
                              (mode, got))
        elif klass == 'mode' and ans.err != errno.ERANGE:
            self.fail('newlink with mode %d: %s, expected ERANGE' %
                      (data[0][1][4], ename(ans.err)), body)
        elif klass == 'long-name' and ans.err == 0:
            self.fail('newlink with a name too long succeeded', body)
        elif ans.err and ans.err not in RTNL_ERRNOS:
            self.fail('newlink (%s): unexpected errno %s (%s)' %
                      (klass, ename(ans.err), ans.msg), body)

    def rtnl_tally(self, what, klass, ans):
        self.rtnl.add('%s %s' % (what, ename(ans.err)))
        self.errnos.add(ename(ans.err))
        if klass == 'valid':
            self.valid += 1
        else:
            self.mutated += 1
        self.classes.add('rtnl-' + klass)

    # The run

    def run(self):
        t0 = time.monotonic()
        self.attach_shared_socket()
        next_strict = 0
        next_progress = 10000
        while self.mutated < self.args.count:
            if self.messages >= next_progress:
                next_progress += 10000
                self.out('progress: %d messages in %.1f s' %
                         (self.messages, time.monotonic() - t0))
            t1 = time.monotonic()
            if self.mutated >= next_strict:
                self.strict_sequence()
                next_strict += self.args.strict_every
                self.phases.add('strict', time.monotonic() - t1)
                t1 = time.monotonic()
            if self.rng.random() < self.args.rtnl_share:
                self.rtnl_one()
                self.phases.add('rtnl', time.monotonic() - t1)
            else:
                self.fuzz_one()
                self.phases.add('genl', time.monotonic() - t1)
        self.drain()
        if self.index(self.ovfz) is not None:
            self.link_request(RTM_DELLINK, 0,
                              [(IFLA_IFNAME, self.ovfz.encode() + b'\0')])
        self.report(time.monotonic() - t0)

    def drain(self):
        """Nothing may come after the last final answer."""
        for nl in (self.genl, self.route):
            if select.select([nl.sock], [], [], 0.5)[0]:
                buf = nl.sock.recv(1 << 16)
                self.fail('%d bytes came after the last answer' % len(buf))

    def report(self, secs):
        cpu = os.times()
        self.out('seed %d, %d messages in %.1f s: %d mutated, %d valid, '
                 '%d in %d valid sequences' %
                 (self.args.seed + self.job, self.messages, secs,
                  self.mutated, self.valid, self.strict_msgs,
                  self.strict_runs))
        self.out('per command: ' + ', '.join(
            '%s %d/%d ok' % (k, v, self.oks.get(k))
            for k, v in sorted(self.counts.n.items())))
        self.out('per class: %s' % self.classes)
        self.out('targets: %s' % self.targets)
        self.out('errnos: %s' % self.errnos)
        self.out('extack: %d of %d genl errors carried a message' %
                 (self.with_extack, self.errors))
        self.out('valid peer_new by socket kind: ' + ', '.join(
            '%s %d/%d ok' % (k, v, self.fd_oks.get(k))
            for k, v in sorted(self.fd_kinds.n.items())))
        self.out('rtnetlink: %s' % self.rtnl)
        self.out('%d requests drawn again to spare protected peers' %
                 self.redrawn)
        waits = sorted(self.waits.n.items(), key=lambda kv: -kv[1])
        self.out('phases: ' + ', '.join('%s %.1f' % kv for kv in
                                        self.phases.n.items()))
        self.out('cpu: %.1f s user, %.1f s system; %.1f s waiting for '
                 'answers: %s' % (cpu.user, cpu.system,
                                  sum(v for _, v in waits), ', '.join(
                                      '%s %.1f' % kv for kv in waits[:6])))
        self.out('totals messages=%d mutated=%d failures=%d' %
                 (self.messages, self.mutated, self.failures))


def udp_bound(family):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind(('::1' if family == socket.AF_INET6 else '127.0.0.1', 0))
    return s


def reply_attrs(cmd, data):
    """The fields of a PEER_GET or KEY_GET reply (ValueError, KeyError)."""
    top = attr_dict(data)
    if cmd == KEY_GET:
        kc = attr_dict(top[A_KEYCONF])
        get = {k: struct.unpack('=I', v)[0] for k, v in kc.items()}
        return {'id': get[K_PEER_ID], 'slot': get[K_SLOT],
                'key_id': get[K_KEY_ID], 'alg': get[K_ALG]}
    p = attr_dict(top[A_PEER])
    out = {'id': struct.unpack('=I', p[P_ID])[0]}
    if P_TX_ID in p:
        out['tx_id'] = struct.unpack('=I', p[P_TX_ID])[0]
    out['ka'] = (struct.unpack('=I', p[P_KA_INTERVAL])[0],
                 struct.unpack('=I', p[P_KA_TIMEOUT])[0])
    out['vpn4'] = p.get(P_VPN_IPV4)
    out['vpn6'] = p.get(P_VPN_IPV6)
    out['local_port'] = struct.unpack('>H', p[P_LOCAL_PORT])[0]
    out['remote'] = P_REMOTE_PORT in p
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--count', type=int, default=10000,
                    help='mutated requests to send')
    ap.add_argument('--seed', type=int, default=int(time.time()))
    ap.add_argument('--job', type=int, default=0,
                    help='number of this fuzzer among those running (0-14)')
    ap.add_argument('--dev', action='append', default=[])
    ap.add_argument('--other', action='append', default=[])
    ap.add_argument('--strict', required=True)
    ap.add_argument('--protect', type=int, action='append', default=[])
    ap.add_argument('--reply-secs', type=int, default=60)
    ap.add_argument('--strict-every', type=int, default=150,
                    help='mutated requests between two valid sequences')
    ap.add_argument('--rtnl-share', type=float, default=0.03)
    args = ap.parse_args()
    try:
        fz = Fuzzer(args)
        fz.run()
    except Fatal as e:
        print('FAIL: job %d: %s' % (args.job, e), flush=True)
        return 1
    return 1 if fz.failures or fz.mutated < args.count else 0


if __name__ == '__main__':
    sys.exit(main())
