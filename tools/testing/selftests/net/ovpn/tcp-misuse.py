#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Userspace misuse of a TCP socket attached to an ovpn device.

Usage: tcp-misuse.py OVPN_CLI IFNAME PEER_ID VPN_ADDR

Connects a TCP socket over the loopback, attaches it to IFNAME as peer
PEER_ID with "ovpn-cli raw", then checks what the replaced socket
operations answer: wrong send flags, records whose length prefix is
wrong, disconnect, a ULP, an empty receive queue, and that one good
control record goes through each way intact, one record per recv with
MSG_TRUNC when the buffer is short.  Prints "ok WHAT" or
"FAIL WHAT: ..." per check; exits 1 if any failed.
"""

import ctypes
import errno
import socket
import subprocess
import sys

TCP_ULP = 31
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


def disconnect(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    unspec = ctypes.create_string_buffer(16)   # sa_family 0: AF_UNSPEC
    if libc.connect(fd, unspec, len(unspec)) < 0:
        err = ctypes.get_errno()
        raise OSError(err, errno.errorcode.get(err, str(err)))
    return 0


def main():
    cli, ifname, peer_id, vpn = sys.argv[1:5]
    lsn = socket.create_server(('127.0.0.1', 0))
    sock = socket.create_connection(lsn.getsockname())
    other, _ = lsn.accept()

    fd = sock.fileno()
    res = subprocess.run([cli, 'raw', 'peer_new', 'ifname', ifname,
                          'nest:2', '1:u32:' + peer_id, '6:u32:%d' % fd,
                          '8:ip:' + vpn, 'end'], pass_fds=(fd,),
                         capture_output=True, text=True)
    report('attach', res.stdout.startswith('OK'), res.stdout + res.stderr)
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
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
