#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Userspace misuse of a TCP socket attached to an ovpn device.

Arguments: OVPN_CLI IFNAME PEER_ID VPN_ADDR

Connects a TCP socket over the loopback, attaches it to IFNAME as peer
PEER_ID through YNL (ovpn_ynl.py), then checks what the replaced socket
operations answer: wrong send flags, records whose length prefix is
wrong, disconnect, a ULP, an empty receive queue, and that one good
control record goes through each way intact, one record per recv with
MSG_TRUNC when the buffer is short.  Then poll(): the socket is readable
only while a control record waits for userspace, not while the bytes of
a data record (which the kernel takes) wait in the TCP receive queue for
the rest of their record, nor once the kernel took it.  Prints "ok WHAT"
or "FAIL WHAT: ..." per check; exits 1 if any failed.
"""

import ctypes
import errno
import fcntl
import select
import socket
import struct
import subprocess
import sys
import termios
import time

from ovpn_ynl import tcp_attach

TCP_ULP = 31
OP_DATA_V2 = 0x48       # opcode 9, key 0
failed = False


def report(what, good, detail=''):
    global failed
    print(('ok ' if good else 'FAIL ') + what + ('' if good else ': ' + detail))
    failed |= not good


def expect_errno(what, want, func, *args):
    try:
        got = func(*args)
        report(what, False, 'succeeded with %r' % (got,))
    except OSError as e:
        report(what, e.errno == want, 'errno %s' % errno.errorcode.get(e.errno))


def expect_bytes(what, want, func, *args):
    try:
        got = func(*args)
        report(what, got == want, repr(got))
    except OSError as e:
        report(what, False, 'errno %s' % errno.errorcode.get(e.errno))


def disconnect(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    unspec = ctypes.create_string_buffer(16)   # sa_family 0: AF_UNSPEC
    if libc.connect(fd, unspec, len(unspec)) < 0:
        err = ctypes.get_errno()
        raise OSError(err, errno.errorcode.get(err, str(err)))
    return 0


def queued(sock, request):
    """Bytes in a socket's receive (FIONREAD) or unacked send (TIOCOUTQ)
    queue."""
    return struct.unpack('i', fcntl.ioctl(sock, request, b'\0' * 4))[0]


def wait_for(cond, secs=10):
    """Poll cond() until it holds, for at most secs; its last value."""
    end = time.monotonic() + secs
    while not cond() and time.monotonic() < end:
        time.sleep(0.02)
    return cond()


def peer_stat(cli, ifname, peer_id, field):
    out = subprocess.run([cli, 'get_peer', ifname, peer_id],
                         capture_output=True, text=True).stdout
    for kv in out.split():
        if kv.startswith(field + '='):
            return int(kv.split('=', 1)[1])
    return -1


def readable(poller, ms=0):
    return any(ev & select.POLLIN for _, ev in poller.poll(ms))


def check_poll(cli, ifname, peer_id, sock, other):
    """poll() on the attached socket: readable only for a control record.

    A data record is sent in three parts.  The strparser takes the first
    one and then knows the record's length: it leaves the second part in
    the TCP receive queue until the rest is there.  TCP's own poll calls
    those bytes readable; userspace would get nothing from them.
    """
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    rx = peer_stat(cli, ifname, peer_id, 'link_rx_packets')
    # Opcode, peer id, packet id 1, then tag and payload; no key: the
    # kernel counts it, then drops it.
    data = struct.pack('>HII', 28, OP_DATA_V2 << 24 | int(peer_id), 1) + \
        b'\x5a' * 20
    parts = (data[:6], data[6:16], data[16:])

    # Sent and acknowledged, then taken off the TCP queue.
    def sent(part, waiting):
        other.sendall(part)
        return wait_for(lambda: queued(other, termios.TIOCOUTQ) == 0 and
                        queued(sock, termios.FIONREAD) == waiting)

    report('the strparser takes the start of a data record',
           sent(parts[0], 0),
           '%d bytes queued' % queued(sock, termios.FIONREAD))
    report('more of it waits in the TCP queue',
           sent(parts[1], len(parts[1])),
           '%d bytes queued' % queued(sock, termios.FIONREAD))
    report('no POLLIN while a data record is incomplete',
           not readable(poller), 'POLLIN')
    sent(parts[2], 0)
    report('the kernel takes the data record',
           wait_for(lambda: peer_stat(cli, ifname, peer_id,
                                      'link_rx_packets') == rx + 1),
           'link_rx_packets %d, was %d' %
           (peer_stat(cli, ifname, peer_id, 'link_rx_packets'), rx))
    report('no POLLIN for a data record', not readable(poller), 'POLLIN')

    rec = b'\x00\x05\x38wxyz'
    other.sendall(rec)
    report('POLLIN for a control record', readable(poller, 10000),
           'no POLLIN in 10 s')
    expect_bytes('the control record reads back intact', rec,
                 sock.recv, 100, socket.MSG_DONTWAIT)
    report('no POLLIN once the control record was read',
           not readable(poller), 'POLLIN')


def main():
    cli, ifname, peer_id, vpn = sys.argv[1:5]
    sock, other, err = tcp_attach(ifname, peer_id, vpn)
    report('attach', not err, err)
    fd = sock.fileno()
    if failed:
        return 1

    rec = b'\x00\x05\x38abcd'
    expect_errno('send with MSG_OOB', errno.EOPNOTSUPP,
                 sock.send, rec, socket.MSG_OOB)
    expect_errno('send with a prefix longer than the record', errno.EINVAL,
                 sock.send, b'\x00\x09\x38abcd')
    expect_errno('send of a record too short for an opcode', errno.EINVAL,
                 sock.send, b'\x00\x01\x38')
    expect_errno('disconnect', errno.EBUSY, disconnect, fd)
    expect_errno('TCP_ULP', errno.EBUSY, sock.setsockopt,
                 socket.IPPROTO_TCP, TCP_ULP, b'tls')
    expect_errno('recv with nothing queued', errno.EAGAIN,
                 sock.recv, 100, socket.MSG_DONTWAIT)

    report('send of one record', sock.send(rec, socket.MSG_DONTWAIT) ==
           len(rec))
    got = b''
    other.settimeout(10)
    while len(got) < len(rec):
        chunk = other.recv(100)
        if not chunk:
            break
        got += chunk
    report('the record arrives intact', got == rec, repr(got))

    back = b'\x00\x06\x20' + b'\x11' * 5
    other.sendall(back)
    sock.settimeout(10)
    got, _, flags, _ = sock.recvmsg(3)
    report('recv of a record cut short', got == back[:3] and
           flags & socket.MSG_TRUNC, '%r flags %#x' % (got, flags))
    # Blocking mode again: with a timeout Python would wait, not ask.
    sock.settimeout(None)
    expect_errno('recv after the whole record went', errno.EAGAIN,
                 sock.recv, 100, socket.MSG_DONTWAIT)
    check_poll(cli, ifname, peer_id, sock, other)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
