#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# A burst of numbered UDP datagrams that reaches a device all at once.
#
#   udp-burst.py ADDR PORT COUNT
#       COUNT datagrams of 1000 bytes (at most 64), numbered from 0 as
#       udp-seq.py numbers them (its recv mode counts them), handed to the
#       kernel in one send with UDP_SEGMENT.  The stack cuts them apart
#       after routing and passes them to the device one after another,
#       with BH disabled throughout: no worker of that CPU runs in between,
#       and a sender in userspace could not come close.  Prints "sent=N".

import socket
import struct
import sys

SOL_UDP = 17
UDP_SEGMENT = 103
SIZE = 1000


def main():
    addr, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if not 0 < count <= 64:
        sys.exit('udp-burst.py: COUNT is 1 to 64')
    pad = bytes(SIZE - 4)
    data = b''.join(struct.pack('!I', i) + pad for i in range(count))
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sk.setsockopt(SOL_UDP, UDP_SEGMENT, SIZE)
    sk.sendto(data, (addr, port))
    print(f'sent={count}', flush=True)


if __name__ == '__main__':
    main()
