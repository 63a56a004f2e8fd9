#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# One TCP connection moving bytes, and the MSS each end ended up with.
#
#   tcp-mss.py serve ADDR PORT
#       prints READY once listening, takes one connection, reads it to
#       its end and prints "mss=M bytes=N": M is TCP_MAXSEG, the largest
#       segment this end sends on the connection.
#   tcp-mss.py send ADDR PORT BYTES
#       connects, sends BYTES bytes, prints "mss=M" and closes.

import socket
import sys

CHUNK = 65536


def family(addr):
    return socket.AF_INET6 if ':' in addr else socket.AF_INET


def mss(sk):
    return sk.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)


def serve(addr, port):
    sk = socket.socket(family(addr), socket.SOCK_STREAM)
    sk.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sk.bind((addr, port))
    sk.listen(1)
    print('READY', flush=True)
    conn, _ = sk.accept()
    total = 0
    while True:
        data = conn.recv(CHUNK)
        if not data:
            break
        total += len(data)
    print(f'mss={mss(conn)} bytes={total}', flush=True)


def send(addr, port, count):
    sk = socket.create_connection((addr, port), timeout=60)
    buf = bytes(CHUNK)
    left = count
    while left > 0:
        left -= sk.send(buf[:min(left, CHUNK)])
    print(f'mss={mss(sk)}', flush=True)
    sk.close()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'serve':
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == 'send':
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__ or 'usage: tcp-mss.py serve|send ...')


if __name__ == '__main__':
    main()
