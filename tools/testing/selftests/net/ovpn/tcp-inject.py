#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send a hand-made OpenVPN TCP stream, for the malformed stream tests.

  tcp-inject.py [--src ADDR] [--wait SECONDS] RADDR RPORT MODE

Connects to RADDR:RPORT (from ADDR if given), sends the stream of MODE,
prints SENT, then waits up to SECONDS (default 10) for the other end to
close the connection: PEER-CLOSED when it did (end of stream or reset),
TIMEOUT when it did not.  Every record is a 2-byte big-endian length and
that many bytes; the modes:

  len0          a record length of 0, and nothing more
  len1          length 1, one DATA_V2 opcode byte
  short         length 3, a DATA_V2 record too short for its header
  huge          length 0xffff, a DATA_V2 record longer than any packet
  datav1        length 28, a DATA_V1 record
  truncated     length 100 and 50 bytes of it, then close at once (no wait)
  ctrl          one P_CONTROL_V1 record: the connection should stay
  garbage-data  one DATA_V2 record of peer 0, packet id 1, that fails
                authentication: dropped, the connection should stay
  many          200 ctrl records in a single send
  split         one ctrl record, a byte a send, 20 ms apart
"""

import argparse
import os
import socket
import struct
import sys
import time

OP_DATA_V2 = 0x48       # opcode 9, key 0
OP_DATA_V1 = 0x30       # opcode 6, key 0
OP_CONTROL_V1 = 0x38    # opcode 7, key 0


def record(payload, length=None):
    """The payload after its length, the real one unless given."""
    if length is None:
        length = len(payload)
    return struct.pack('>H', length) + payload


def ctrl_record():
    return record(bytes([OP_CONTROL_V1]) + b'\x11' * 13)


def garbage_data():
    head = struct.pack('>BBHI', OP_DATA_V2, 0, 0, 1)
    return record(head + os.urandom(40 - len(head)))


STREAMS = {
    'len0': lambda: record(b''),
    'len1': lambda: record(bytes([OP_DATA_V2])),
    'short': lambda: record(bytes([OP_DATA_V2, 0, 0])),
    'huge': lambda: record(bytes([OP_DATA_V2]) + bytes(0xffff - 1)),
    'datav1': lambda: record(bytes([OP_DATA_V1]) + bytes(27)),
    'truncated': lambda: record(bytes([OP_DATA_V2]) + bytes(49), 100),
    'ctrl': ctrl_record,
    'garbage-data': garbage_data,
    'many': lambda: ctrl_record() * 200,
    'split': ctrl_record,
}


def send_stream(sock, mode):
    """Send the stream of @mode: False if the other end closed meanwhile."""
    data = STREAMS[mode]()
    try:
        if mode != 'split':
            sock.sendall(data)
            return True
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(data)):
            if i:
                time.sleep(0.02)
            sock.sendall(data[i:i + 1])
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def peer_closed(sock, wait):
    """Whether the other end closes the connection within @wait seconds."""
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except socket.timeout:
            return False
        except ConnectionError:
            return True


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--src', help='local address to connect from')
    parser.add_argument('--wait', type=float, default=10.0,
                        help='seconds to wait for the close (default 10)')
    parser.add_argument('raddr')
    parser.add_argument('rport', type=int)
    parser.add_argument('mode', choices=sorted(STREAMS))
    args = parser.parse_args()

    family = socket.AF_INET6 if ':' in args.raddr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            if args.src:
                sock.bind((args.src, 0))
            sock.connect((args.raddr, args.rport))
        except OSError as err:
            sys.exit('tcp-inject.py: cannot connect: %s' % err)

        alive = send_stream(sock, args.mode)
        print('SENT', flush=True)
        if args.mode == 'truncated':
            return
        if not alive or peer_closed(sock, args.wait):
            print('PEER-CLOSED', flush=True)
        else:
            print('TIMEOUT', flush=True)


if __name__ == '__main__':
    main()
