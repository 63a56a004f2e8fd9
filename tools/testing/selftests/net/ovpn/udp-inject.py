#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Send hand-made OpenVPN datagrams to a UDP address, for the malformed
# packet tests.
#
#   udp-inject.py ADDR PORT COUNT hex HEXBYTES     the bytes as given
#   udp-inject.py ADDR PORT COUNT data PEER KEY PKTID LEN
#                    a DATA_V2 header (peer id, key id, packet id), a
#                    garbage tag and LEN bytes of garbage ciphertext
#   udp-inject.py ADDR PORT COUNT epoch PEER KEY EPOCH COUNTER LEN
#                    the epoch data format's header (peer id, key id,
#                    epoch, counter), LEN bytes of garbage ciphertext and
#                    a garbage tag
#   udp-inject.py ADDR PORT COUNT pcap FILE        replay the UDP payload
#                    of every packet of a pcap capture (Ethernet or raw IP)

import socket
import struct
import sys


def data_v2(peer, key, pktid, length):
    word = (9 << 27) | (key << 24) | peer
    return struct.pack('>II', word, pktid) + b'\xa5' * 16 + b'\x5a' * length


def data_epoch(peer, key, epoch, counter, length):
    word = (9 << 27) | (key << 24) | peer
    return (struct.pack('>IQ', word, (epoch << 48) | counter) +
            b'\x5a' * length + b'\xa5' * 16)


def pcap_payloads(path, with_header=False):
    """The UDP payloads of a capture, or whole datagrams if with_header."""
    with open(path, 'rb') as f:
        head = f.read(24)
        endian = '<' if head[:4] == b'\xd4\xc3\xb2\xa1' else '>'
        linktype = struct.unpack(endian + 'I', head[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            caplen = struct.unpack(endian + 'IIII', rec)[2]
            frame = f.read(caplen)
            ip = frame[14:] if linktype == 1 else frame
            if ip[0] >> 4 == 4:
                ip = ip[(ip[0] & 0xf) * 4:]
            else:
                ip = ip[40:]
            yield ip if with_header else ip[8:]


def main(argv):
    addr, port, count, kind = argv[1], int(argv[2]), int(argv[3]), argv[4]
    if kind == 'hex':
        payloads = [bytes.fromhex(argv[5] if len(argv) > 5 else '')]
    elif kind == 'data':
        payloads = [data_v2(*(int(x, 0) for x in argv[5:9]))]
    elif kind == 'epoch':
        payloads = [data_epoch(*(int(x, 0) for x in argv[5:10]))]
    elif kind == 'pcap':
        payloads = list(pcap_payloads(argv[5]))
    else:
        sys.exit('unknown kind ' + kind)

    family = socket.AF_INET6 if ':' in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        for _ in range(count):
            for p in payloads:
                s.sendto(p, (addr, port))
    print('sent %d datagrams' % (count * len(payloads)))


if __name__ == '__main__':
    main(sys.argv)
