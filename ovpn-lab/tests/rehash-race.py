#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Peers moving in an MP device's tables, or making them resize, while
lookups walk them.

  rehash-race.py peers FIRST_ID MOVERS STILL PORT PREFIX
      Writes PREFIX.peers, a peers file for "ovpn-cli new_multi_peer":
      STILL peers that stay, then MOVERS peers, all with VPN IPv4
      addresses in 100.126.0.0/15 that the module's table puts in one
      bucket, so that lookups of the still peers walk past the movers
      (added last, at the head of the chain); and PREFIX.roles, a line
      per peer: "<id> still <addr>" or "<id> mover <addr> <away>", the
      address in another bucket the mover moves to.
  rehash-race.py move IFNAME PREFIX SECS
      Moves each mover to its other address and back with PEER_SET, as
      fast as netlink answers, for SECS seconds; prints the moves made.
  rehash-race.py churn IFNAME FIRST_ID COUNT SECS
      Adds COUNT peers (ids from FIRST_ID, on a UDP socket of its own)
      and deletes them again, round after round for SECS seconds, so
      that the device's tables grow and shrink, each resize rehashing
      every peer in them; prints the rounds made.
  rehash-race.py send PREFIX SECS
      Sends UDP datagrams round-robin to the still peers' VPN addresses
      for SECS seconds; prints "SENT <id> <count>" per peer.

The buckets are computed as the fixed tables of earlier versions of the
module computed them (jhash of the address with seed 0, then hash_32 to
12 bits).  Tables that hash with a random seed put the peers in buckets
nobody can predict, so the race of a lookup with a mover in its chain
gets rarer; the churn is what makes every lookup race with rehashing
then.  Nothing the test checks depends on where the peers land.
"""

import ipaddress
import socket
import struct
import sys
import time

from ovpn_hash import bucket

NETLINK_GENERIC = 16
GENL_ID_CTRL = 16
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NLA_F_NESTED = 0x8000
OVPN_CMD_PEER_NEW = 1
OVPN_CMD_PEER_SET = 2
OVPN_CMD_PEER_DEL = 4
OVPN_A_IFINDEX = 1
OVPN_A_PEER = 2
OVPN_A_PEER_ID = 1
OVPN_A_PEER_REMOTE_IPV4 = 2
OVPN_A_PEER_REMOTE_PORT = 5
OVPN_A_PEER_SOCKET = 6
OVPN_A_PEER_VPN_IPV4 = 8


def peers(first_id, movers, still, port, prefix):
    pool = {}
    for n in range(1, 1 << 17):
        addr = str(ipaddress.IPv4Address('100.126.0.0') + n)
        pool.setdefault(bucket(addr), []).append(addr)
    home, away = sorted(pool.values(), key=len, reverse=True)[:2]
    if len(home) < movers + still or len(away) < movers:
        sys.exit('not enough colliding addresses')
    roles = ['%d still %s' % (first_id + i, home[i]) for i in range(still)]
    roles += ['%d mover %s %s' % (first_id + still + i, home[still + i],
                                  away[i]) for i in range(movers)]
    with open(prefix + '.roles', 'w') as f:
        f.write('\n'.join(roles) + '\n')
    with open(prefix + '.peers', 'w') as f:
        for line in roles:
            words = line.split()
            f.write('%s 127.0.0.1 %d %s -\n' % (words[0], port, words[2]))


def read_roles(prefix, kind):
    """[(id, address, [away address] or [])] of the peers of a kind."""
    out = []
    with open(prefix + '.roles') as f:
        for line in f:
            words = line.split()
            if words[1] == kind:
                out.append((int(words[0]), words[2], words[3:4]))
    return out


def nla(atype, payload):
    return struct.pack('=HH', 4 + len(payload), atype) + payload + \
        bytes(-len(payload) % 4)


class Genl:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_GENERIC)
        self.sock.bind((0, 0))
        self.seq = 0
        body = struct.pack('=BBH', CTRL_CMD_GETFAMILY, 1, 0) + \
            nla(CTRL_ATTR_FAMILY_NAME, b'ovpn\0')
        reply = self.request(GENL_ID_CTRL, body)
        off = 20
        while off < len(reply):
            alen, atype = struct.unpack_from('=HH', reply, off)
            if atype == CTRL_ATTR_FAMILY_ID:
                self.family = struct.unpack_from('=H', reply, off + 4)[0]
            off += (alen + 3) & ~3

    def request(self, mtype, body):
        """Send, and return the reply's first message; errors raise."""
        self.seq += 1
        self.sock.send(struct.pack('=IHHII', 16 + len(body), mtype,
                                   NLM_F_REQUEST | NLM_F_ACK, self.seq, 0) +
                       body)
        while True:
            buf = self.sock.recv(65536)
            mlen, rtype = struct.unpack_from('=IH', buf)
            if rtype == NLMSG_ERROR:
                err = struct.unpack_from('=i', buf, 16)[0]
                if err:
                    raise OSError(-err, 'netlink request %d' % mtype)
                return buf[:mlen]
            # A data reply comes before its ACK: keep it, read the ACK.
            data = buf[:mlen]
            self.sock.recv(65536)
            return data

    def peer(self, cmd, ifindex, peer_id, attrs=b''):
        """One peer request: its id, then ATTRS, already encoded."""
        nest = nla(OVPN_A_PEER_ID, struct.pack('=I', peer_id)) + attrs
        body = struct.pack('=BBH', cmd, 1, 0) + \
            nla(OVPN_A_IFINDEX, struct.pack('=I', ifindex)) + \
            nla(OVPN_A_PEER | NLA_F_NESTED, nest)
        self.request(self.family, body)

    def set_vpn4(self, ifindex, peer_id, addr):
        self.peer(OVPN_CMD_PEER_SET, ifindex, peer_id,
                  nla(OVPN_A_PEER_VPN_IPV4,
                      ipaddress.IPv4Address(addr).packed))


def move(ifname, prefix, secs):
    genl = Genl()
    ifindex = socket.if_nametoindex(ifname)
    movers = read_roles(prefix, 'mover')
    moves = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for pid, home, away in movers:
            genl.set_vpn4(ifindex, pid, away[0])
            genl.set_vpn4(ifindex, pid, home)
            moves += 2
    print('moves %d' % moves)


def churn(ifname, first_id, count, secs):
    genl = Genl()
    ifindex = socket.if_nametoindex(ifname)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('0.0.0.0', 0))
    fd = struct.pack('=I', sock.fileno())
    # Transport 10.30.0.0/16 port 1194, VPN 100.100.0.0/16: nobody's.
    attrs = [nla(OVPN_A_PEER_REMOTE_IPV4,
                 (ipaddress.IPv4Address('10.30.0.0') + i).packed) +
             nla(OVPN_A_PEER_REMOTE_PORT, struct.pack('>H', 1194)) +
             nla(OVPN_A_PEER_SOCKET, fd) +
             nla(OVPN_A_PEER_VPN_IPV4,
                 (ipaddress.IPv4Address('100.100.0.0') + i).packed)
             for i in range(count)]
    rounds = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for i in range(count):
            genl.peer(OVPN_CMD_PEER_NEW, ifindex, first_id + i, attrs[i])
        for i in range(count):
            genl.peer(OVPN_CMD_PEER_DEL, ifindex, first_id + i)
        rounds += 1
    print('rounds %d' % rounds)


def send(prefix, secs):
    still = read_roles(prefix, 'still')
    sent = {pid: 0 for pid, _, _ in still}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for pid, addr, _ in still:
            sock.sendto(b'x', (addr, 9))
            sent[pid] += 1
    for pid, count in sent.items():
        print('SENT %d %d' % (pid, count))


def main(argv):
    if argv[1] == 'peers':
        peers(*(int(a) for a in argv[2:6]), argv[6])
    elif argv[1] == 'move':
        move(argv[2], argv[3], float(argv[4]))
    elif argv[1] == 'churn':
        churn(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    elif argv[1] == 'send':
        send(argv[2], float(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
