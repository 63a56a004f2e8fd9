#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Hand IP packets straight to a layer 3 device's transmit function, past
# the local stack's source address selection, for the tests of what a
# peer may send through the tunnel.
#
#   ip-inject.py DEV SRC DST COUNT PORT
#
# Sends COUNT UDP datagrams from SRC to DST through DEV (an AF_PACKET
# socket, so SRC may be an address the stack would never pick, such as
# 0.0.0.0 or ::), the i-th one to port PORT + i: each one a flow of its
# own.

import ipaddress
import socket
import struct
import sys

ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
SPORT = 4000
PAYLOAD = b'ovpn-test'


def csum(data):
    if len(data) % 2:
        data += b'\0'
    total = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def udp(src, dst, dport, pseudo_proto):
    length = 8 + len(PAYLOAD)
    head = struct.pack('!HHHH', SPORT, dport, length, 0)
    pseudo = src.packed + dst.packed
    if src.version == 4:
        pseudo += struct.pack('!BBH', 0, pseudo_proto, length)
    else:
        pseudo += struct.pack('!IxxxB', length, pseudo_proto)
    check = csum(pseudo + head + PAYLOAD) or 0xffff
    return struct.pack('!HHHH', SPORT, dport, length, check) + PAYLOAD


def packet(src, dst, dport):
    seg = udp(src, dst, dport, socket.IPPROTO_UDP)
    if src.version == 4:
        head = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(seg), 0, 0,
                           64, socket.IPPROTO_UDP, 0, src.packed, dst.packed)
        head = head[:10] + struct.pack('!H', csum(head)) + head[12:]
        return head + seg
    return struct.pack('!IHBB16s16s', 6 << 28, len(seg), socket.IPPROTO_UDP,
                       64, src.packed, dst.packed) + seg


def main(argv):
    if len(argv) != 6:
        sys.exit('usage: ip-inject.py DEV SRC DST COUNT PORT')
    dev = argv[1]
    src = ipaddress.ip_address(argv[2])
    dst = ipaddress.ip_address(argv[3])
    count, port = int(argv[4]), int(argv[5])
    proto = ETH_P_IP if src.version == 4 else ETH_P_IPV6

    with socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                       socket.htons(proto)) as s:
        for i in range(count):
            s.sendto(packet(src, dst, port + i), (dev, proto))
    print('sent %d packets from %s to %s' % (count, src, dst))


if __name__ == '__main__':
    main(sys.argv)
