#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest, in the background, for the whole test run: holds the
# kernel static keys that the tests would otherwise switch on and off
# (packet timestamps, enabled by every tcpdump; UDP encapsulation, enabled
# by every ovpn socket, of either family).
#
# Why: switching a static key patches kernel text while other CPUs run it.
# Under QEMU's software emulation a vCPU has been seen to execute the
# temporary int3 after the patch completed ("Oops: int3" in
# netif_rx_internal right after a tcpdump exited), killing the guest.  On
# real hardware this does not happen; in the lab, keys that never change
# cannot race.  The keys stay enabled, which only costs a few branches.

import socket
import time

# Not all of these are exported by Python's socket module (x86 values).
SO_TIMESTAMP = 29
UDP_ENCAP = 100
# Not ESP in UDP: that type needs CONFIG_XFRM, which the debug kernels
# lack.  Any type switches the same key; nothing is received here.
UDP_ENCAP_L2TPINUDP = 3

held = []
try:
    ts = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ts.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
    held.append('timestamps')
except OSError as e:
    print('cannot pin the timestamp key:', e, flush=True)

# An IPv6 socket switches the IPv6 key and the IPv4 one.
for family, addr in ((socket.AF_INET6, '::1'), (socket.AF_INET, '127.0.0.1')):
    try:
        encap = socket.socket(family, socket.SOCK_DGRAM)
        encap.bind((addr, 0))
        encap.setsockopt(socket.IPPROTO_UDP, UDP_ENCAP, UDP_ENCAP_L2TPINUDP)
        held.append('udp-encap')
        break
    except OSError as e:
        print('cannot pin the UDP encapsulation key:', e, flush=True)

print('# static keys pinned:', ' '.join(held) or 'none', flush=True)
while True:
    time.sleep(3600)
