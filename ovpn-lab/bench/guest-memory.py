#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs in the guest, on whichever ovpn module is loaded: the memory one
peer costs, its key included.  In a namespace of its own, one MP device
and one UDP socket; then PEERS peers, each with distinct VPN and transport
addresses and an AES-128-GCM key in its primary slot, added through the
kernel's YNL library (one process, two requests a peer).

What stays allocated is traced: every per-CPU allocation (its size times
the possible CPUs) and every slab allocation (kmalloc, kmem_cache_alloc:
the size the allocator gives) made while the peers are added, less those
freed by two seconds after, whoever made them.  /proc/meminfo's Percpu
and Slab before and after count populated pages instead, which memory an
earlier module freed can leave populated: they are printed too, never
used.  One line, every figure but the first three bytes per peer:

  <possible CPUs> <online CPUs> <peers> <per-CPU> <slab> <meminfo Percpu>
  <meminfo Slab>

Usage: guest-memory.py PEERS
"""

import ipaddress
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, '/src/.build/kselftest/net/ovpn')
# pylint: disable=import-error,wrong-import-position
from ovpn_ynl import cli, enter_netns, family

NS = 'ovpn-mem'
TRACING = '/sys/kernel/tracing'
EVENTS = ('kmem/kmalloc', 'kmem/kmem_cache_alloc', 'kmem/kfree',
          'kmem/kmem_cache_free', 'percpu/percpu_alloc_percpu',
          'percpu/percpu_free_percpu')
EVENT = re.compile(r' (kmalloc|kmem_cache_alloc|kfree|kmem_cache_free|'
                   r'percpu_alloc_percpu|percpu_free_percpu): (.*)')
FIELD = re.compile(r'(\w+)=(\S+)')
KEYDIR = {'cipher-key': bytes(range(16)), 'nonce-tail': bytes(range(8))}


def meminfo():
    """Percpu and Slab, in bytes, once what was freed has settled."""
    time.sleep(2)
    fields = {}
    with open('/proc/meminfo') as f:
        for line in f:
            name, value = line.split(':')
            fields[name] = int(value.split()[0]) * 1024
    return fields['Percpu'], fields['Slab']


def tracing(on):
    """Starts (on) or stops tracing the allocations."""
    if on:
        if not os.path.exists(f'{TRACING}/tracing_on'):
            subprocess.run(['mount', '-t', 'tracefs', 'nodev', TRACING],
                           check=True)
        write(f'{TRACING}/tracing_on', '0')
        write(f'{TRACING}/buffer_size_kb', '16384')
        for event in EVENTS:
            write(f'{TRACING}/events/{event}/enable', '1')
        write(f'{TRACING}/trace', '')
    write(f'{TRACING}/tracing_on', '1' if on else '0')


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)


def traced(possible):
    """Per-CPU and slab bytes allocated and not freed, from the trace.  A
    per-CPU allocation takes its size on each POSSIBLE CPU (its event's
    bytes_alloc counts the units of CPUs that cannot exist too)."""
    live = {'percpu': {}, 'slab': {}}
    with open(f'{TRACING}/trace') as f:
        for line in f:
            lost = re.match(r'# entries-in-buffer/entries-written: '
                            r'(\d+)/(\d+)', line)
            if lost and lost.group(1) != lost.group(2):
                sys.exit('the trace lost events: ' + line.strip())
            m = EVENT.search(line)
            if not m:
                continue
            event, fields = m.group(1), dict(FIELD.findall(m.group(2)))
            kind = 'percpu' if event.startswith('percpu') else 'slab'
            if event == 'percpu_alloc_percpu':
                live[kind][fields['ptr']] = int(fields['size']) * possible
            elif 'bytes_alloc' in fields:
                live[kind][fields['ptr']] = int(fields['bytes_alloc'])
            else:
                live[kind].pop(fields['ptr'], None)
    return sum(live['percpu'].values()), sum(live['slab'].values())


def add_peers(ynl, ifindex, sock, peers):
    for i in range(2, peers + 2):
        ynl.do('peer-new', {'ifindex': ifindex, 'peer': {
            'id': i, 'socket': sock.fileno(),
            'remote-ipv4': int(ipaddress.IPv4Address('10.20.0.0')) + i,
            'remote-port': 1194 + (i >> 16),
            'vpn-ipv4': int(ipaddress.IPv4Address('100.64.0.0')) + i}})
        ynl.do('key-new', {'ifindex': ifindex, 'keyconf': {
            'peer-id': i, 'slot': 'primary', 'key-id': 1,
            'cipher-alg': 'aes-gcm', 'encrypt-dir': KEYDIR,
            'decrypt-dir': KEYDIR}})


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    peers = int(argv[1])
    enter_netns(NS)
    try:
        cli('new_iface', 'tun0', 'mp')
        ifindex = socket.if_nametoindex('tun0')
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock, \
                family() as ynl:
            sock.bind(('0.0.0.0', 1194))
            percpu, slab = meminfo()
            tracing(True)
            add_peers(ynl, ifindex, sock, peers)
            percpu2, slab2 = meminfo()
            tracing(False)
        with open('/sys/devices/system/cpu/possible') as f:
            possible = int(f.read().strip().split('-')[-1]) + 1
        pcpu_traced, slab_traced = traced(possible)
        with open('/sys/devices/system/cpu/online') as f:
            online = int(f.read().strip().split('-')[-1]) + 1
        print(possible, online, peers, pcpu_traced // peers,
              slab_traced // peers, (percpu2 - percpu) // peers,
              (slab2 - slab) // peers)
    finally:
        subprocess.run(['ip', 'netns', 'del', NS], check=False)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
