#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The queue of control records for the owner of an attached TCP socket.

Usage: tcp-control.py IFNAME PEER_ID VPN_ADDR SLOW MODE

Connects a TCP socket over the loopback and attaches it to IFNAME as peer
PEER_ID (VPN_ADDR, or "-" for none) through YNL (ovpn_ynl.py); SLOW
stretches every deadline, as OVPN_SLOW does.  MODE is one of:

flood: the other end sends large control records while the owner reads
nothing.  The records queued for the owner are charged to the socket and
bounded by its receive buffer: the sender soon blocks, the memory they
pin stays small, and once the owner reads, every record arrives intact
and in order.

blocked: a reader blocked in recv() and a writer blocked in the copy of
its record (a userfaultfd page nobody serves) while IFNAME is deleted:
the deletion completes, the reader wakes with an error or the end of the
stream, and the writer finishes once its page is served.

unload: the same while the module is unloaded: the reader wakes, the
unloading waits for the writer, which is inside the module's code, and
both finish once the writer's page is served.

Prints "ok WHAT" or "FAIL WHAT: ..." per check and "# ..." notes; exits 1
if a check failed.
"""

import ctypes
import errno
import fcntl
import mmap
import os
import struct
import subprocess
import sys
import threading
import time

from ovpn_ynl import tcp_attach

CTRL_OPCODE = 4 << 3            # P_CONTROL_V1, key 0
BODY = 60000                    # bytes after the length prefix
FLOOD_CAP = 80 << 20            # what a sender that never blocks gets to
PINNED_MAX = 24 << 20           # memory the queued records may pin
failed = False


def report(what, good, detail=''):
    global failed
    print(('ok ' if good else 'FAIL ') + what +
          ('' if good else ': ' + detail), flush=True)
    failed |= not good


def record(seq):
    body = bytes([CTRL_OPCODE]) + struct.pack('>I', seq) + \
        bytes([seq & 0xff]) * (BODY - 5)
    return struct.pack('>H', len(body)) + body


def mem_available():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) << 10
    return 0


def skmem(sock):
    """sk_rmem_alloc and sk_rcvbuf of a socket, as ss reports them."""
    port = sock.getsockname()[1]
    out = subprocess.run(['ss', '-tmnH', 'sport', '= :%d' % port],
                         capture_output=True, text=True).stdout
    fields = out.split('skmem:(')[1].split(')')[0].split(',')
    vals = {f.rstrip('0123456789'): int(f.lstrip('abcdefghijklmnopqrstuvwxyz'))
            for f in fields}
    return vals['r'], vals['rb']


def flood(sock, other, slow):
    total = FLOOD_CAP // len(record(0))
    sent = [0]

    def sender():
        for seq in range(total):
            other.sendall(record(seq))
            sent[0] = seq + 1

    avail = mem_available()
    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    # The sender is blocked once it stops making progress.
    last, still = -1, 0
    while thread.is_alive() and still < 2 * slow:
        time.sleep(0.5)
        still = still + 0.5 if sent[0] == last else 0
        last = sent[0]
    pushed = sent[0] * len(record(0))
    pinned = avail - mem_available()
    rmem, rcvbuf = skmem(sock)
    print('# sender blocked after %d records (%d KiB); receive queue '
          '%d KiB of a %d KiB buffer; %d KiB less memory available' %
          (sent[0], pushed >> 10, rmem >> 10, rcvbuf >> 10, pinned >> 10))
    report('the sender blocks', thread.is_alive(),
           'all %d records (%d MiB) went through, none read' %
           (total, FLOOD_CAP >> 20))
    report('the memory the records pin is bounded', pinned < PINNED_MAX,
           '%d KiB' % (pinned >> 10))
    if failed:
        return

    sock.settimeout(10 * slow)
    for seq in range(total):
        want = record(seq)
        try:
            got = sock.recv(len(want) + 1)
        except OSError as e:
            report('record %d reads back' % seq, False, str(e))
            return
        if got != want:
            report('record %d reads back intact' % seq, False,
                   '%d bytes, starting %r' % (len(got), got[:8]))
            return
    report('all %d records read back intact and in order' % total, True)
    thread.join(10 * slow)
    report('the sender finished', not thread.is_alive())


class Uffd:
    """A userfaultfd-registered page that nobody serves until closed."""

    def __init__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        self.fd = libc.syscall(323, os.O_CLOEXEC)        # userfaultfd
        if self.fd < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSYS:
                # The kernel has none (CONFIG_USERFAULTFD): kselftest skip.
                print('SKIP: no userfaultfd in this kernel', flush=True)
                sys.exit(4)
            raise OSError(err, 'userfaultfd')
        api = bytearray(struct.pack('QQQ', 0xaa, 0, 0))
        fcntl.ioctl(self.fd, 0xc018aa3f, api)            # UFFDIO_API
        self.map = mmap.mmap(-1, mmap.PAGESIZE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        reg = bytearray(struct.pack('QQQQ', addr, mmap.PAGESIZE, 1, 0))
        fcntl.ioctl(self.fd, 0xc020aa00, reg)            # UFFDIO_REGISTER

    def close(self):
        os.close(self.fd)


def blocked(sock, ifname, slow, unload=False):
    result = {}

    def reader():
        try:
            got = sock.recv(100)
            result['reader'] = 'EOF' if not got else repr(got)
        except OSError as e:
            result['reader'] = os.strerror(e.errno)

    def writer(view):
        try:
            result['writer'] = 'sent %d' % sock.send(view)
        except OSError as e:
            result['writer'] = os.strerror(e.errno)

    uffd = Uffd()
    threads = [threading.Thread(target=reader, daemon=True),
               threading.Thread(target=writer, daemon=True,
                                args=(memoryview(uffd.map)[:64],))]
    for t in threads:
        t.start()
    time.sleep(1)
    report('reader and writer block', all(t.is_alive() for t in threads),
           str(result))

    # The deletion may never end (it waits for the references the reader
    # and the writer hold): it is not waited for beyond the deadline.
    start = time.monotonic()
    if unload:
        gone = subprocess.Popen(['rmmod', 'ovpn'])
        threads[0].join(10 * slow)
        report('the reader wakes', not threads[0].is_alive(),
               'still blocked')
        time.sleep(1)
        report('the unloading waits for the writer', gone.poll() is None,
               'rmmod ended while the writer was in the module')
        uffd.close()
        threads[1].join(10 * slow)
        report('the writer finishes', not threads[1].is_alive(),
               'still blocked')
        gone.wait(10 * slow)
        report('the module is unloaded', gone.returncode == 0,
               'rmmod: %s' % gone.returncode)
        print('# unloading took %.1f s' % (time.monotonic() - start))
        print('# reader: %s' % result.get('reader'))
        print('# writer: %s' % result.get('writer'), flush=True)
        return
    dellink = subprocess.Popen(['ip', 'link', 'del', ifname])
    while dellink.poll() is None and time.monotonic() - start < 10 * slow:
        time.sleep(0.1)
    report('the device is deleted', dellink.returncode == 0,
           'still waiting after %d s' % (10 * slow)
           if dellink.returncode is None else 'ip failed')
    print('# deletion took %.1f s' % (time.monotonic() - start))
    threads[0].join(10 * slow)
    report('the reader wakes', not threads[0].is_alive(), 'still blocked')
    print('# reader: %s' % result.get('reader'))
    uffd.close()
    threads[1].join(10 * slow)
    report('the writer finishes', not threads[1].is_alive(), 'still blocked')
    print('# writer: %s' % result.get('writer'), flush=True)
    if failed:
        # Threads still blocked hold the device: ending the process,
        # which ends them, lets its deletion finish.
        os._exit(1)


def main():
    ifname, peer_id, vpn, slow, mode = sys.argv[1:6]
    sock, other, err = tcp_attach(ifname, peer_id, None if vpn == '-' else vpn)
    report('attach', not err, err)
    if not failed:
        if mode == 'flood':
            flood(sock, other, int(slow))
        else:
            blocked(sock, ifname, int(slow), mode == 'unload')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
