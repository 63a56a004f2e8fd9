#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Numbered UDP datagrams, to see that a flow comes out in the order it
# went in.
#
#   udp-seq.py send ADDR PORT COUNT PAUSE
#       COUNT datagrams of 1000 bytes, numbered from 0, a pause of PAUSE
#       seconds after every 64 (0: none); COUNT 0 sends until killed.
#       A refused send (no route, the device gone) is counted, not fatal.
#   udp-seq.py recv ADDR PORT COUNT IDLE
#       prints READY once bound, then takes datagrams until COUNT came or
#       none came for IDLE seconds, and prints "got=N late=M": M of them
#       came after one with a higher number.

import socket
import struct
import sys
import time

SO_RCVBUFFORCE = 33


def send(addr, port, count, pause):
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = bytes(996)
    seq = refused = 0
    while count == 0 or seq < count:
        try:
            sk.sendto(struct.pack('!I', seq) + pad, (addr, port))
        except OSError:
            refused += 1
        seq += 1
        if pause and seq % 64 == 0:
            time.sleep(pause)
    print(f'sent={seq} refused={refused}', flush=True)


def recv(addr, port, count, idle):
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sk.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    sk.bind((addr, port))
    sk.settimeout(idle)
    print('READY', flush=True)
    got = late = 0
    top = -1
    while got < count:
        try:
            data = sk.recv(2048)
        except socket.timeout:
            break
        seq = struct.unpack_from('!I', data)[0]
        if seq < top:
            late += 1
        top = max(top, seq)
        got += 1
    print(f'got={got} late={late}', flush=True)


def main():
    what, addr, port, count, arg = sys.argv[1:6]
    if what == 'send':
        send(addr, int(port), int(count), float(arg))
    else:
        recv(addr, int(port), int(count), float(arg))


if __name__ == '__main__':
    main()
