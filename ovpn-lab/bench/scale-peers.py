#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Filler peers of the scale count (guest-count.sh scale), as peers files
for "ovpn-cli new_multi_peer" (one line a peer: id, transport address and
port, VPN IPv4, no IPv6), written to OUTDIR:

  random-N.txt            N - 1 fillers: ids 2..N, VPN 100.64.0.0 + id
                          (in 100.64.0.0/10), transport 10.20.x.y, x.y
                          the id's low 16 bits, port 1194 + id / 65536
  collide-MODULE.txt      COLLIDE fillers whose VPN IPv4 addresses (from
                          32.0.0.0 up) all fall in MODULE's bucket of the
                          real peer's, and so do their ids, as far as
                          24-bit ids allow: some 4,096 share a bucket, the
                          others are ids in no bucket of the real one's
  collide-MODULE.info     how many of each collide, and the buckets

The real peer (REAL_ID, REAL_VPN) is not in the files: it is added first,
so that the fillers, added at the head of each chain, sit in front of it.
Ids and addresses are found by computing every candidate's bucket
(ovpn_hash.py), on every CPU: about a minute, which the lab caches.

Usage: scale-peers.py OUTDIR REAL_ID REAL_VPN COLLIDE N...
"""

import ipaddress
import multiprocessing
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests'))
# pylint: disable=import-error,wrong-import-position
from ovpn_hash import MASK, addr_word, bucket_of, jhash_1word

MODULES = ('ours', 'upstream')
ID_MAX = 0xfffffe
ADDR_FIRST = int(ipaddress.IPv4Address('32.0.0.0'))
CHUNK = 1 << 20


def swab32(n):
    return ((n & 0xff) << 24 | (n & 0xff00) << 8 | (n >> 8) & 0xff00 |
            n >> 24) & MASK


def scan(job):
    """Of the values FIRST..FIRST + CHUNK - 1 (as words, byte-swapped
    if SWAB), those in each module's bucket of TARGETS."""
    first, swab, targets = job
    hits = {m: [] for m in MODULES}
    for v in range(first, first + CHUNK):
        h = jhash_1word(swab32(v) if swab else v)
        for m in MODULES:
            if bucket_of(m, h) == targets[m]:
                hits[m].append(v)
    return hits


def collect(pool, first, last, swab, targets, want):
    """Values from FIRST to LAST in the target buckets, WANT at most per
    module, chunk by chunk on every CPU."""
    found = {m: [] for m in MODULES}
    jobs = ((v, swab, targets) for v in range(first, last, CHUNK))
    for hits in pool.imap(scan, jobs):
        for m in MODULES:
            found[m].extend(v for v in hits[m] if v <= last)
        if all(len(v) >= want for v in found.values()):
            pool.terminate()
            break
    return {m: v[:want] for m, v in found.items()}


def transport(i):
    return '10.20.%d.%d %d' % (i >> 8 & 0xff, i & 0xff, 1194 + (i >> 16))


def write_random(outdir, n):
    with open(os.path.join(outdir, 'random-%d.txt' % n), 'w') as f:
        for i in range(2, n + 1):
            vpn = ipaddress.IPv4Address('100.64.0.0') + i
            f.write('%d %s %s -\n' % (i, transport(i), vpn))


def write_collide(outdir, real_id, real_vpn, want):
    h_id, h_vpn = jhash_1word(real_id), jhash_1word(addr_word(real_vpn))
    with multiprocessing.Pool() as pool:
        ids = collect(pool, 2, ID_MAX, False,
                      {m: bucket_of(m, h_id) for m in MODULES}, want)
    with multiprocessing.Pool() as pool:
        addrs = collect(pool, ADDR_FIRST, MASK, True,
                        {m: bucket_of(m, h_vpn) for m in MODULES}, want)
    for m in MODULES:
        own = [i for i in ids[m] if i != real_id]
        # The rest: ids from the top down, in no bucket of the real one's.
        spare = (i for i in range(ID_MAX, 1, -1)
                 if bucket_of(m, jhash_1word(i)) != bucket_of(m, h_id))
        fill = own + [next(spare) for _ in range(want - len(own))]
        with open(os.path.join(outdir, 'collide-%s.txt' % m), 'w') as f:
            for n, (i, a) in enumerate(zip(fill, addrs[m])):
                f.write('%d %s %s -\n' % (i, transport(n + 2),
                                          ipaddress.IPv4Address(a)))
        with open(os.path.join(outdir, 'collide-%s.info' % m), 'w') as f:
            f.write('%s: %d fillers, %d ids in bucket %d with id %d, %d '
                    'VPN IPv4 in bucket %d with %s\n' %
                    (m, want, len(own), bucket_of(m, h_id), real_id,
                     len(addrs[m]), bucket_of(m, h_vpn), real_vpn))


def main(argv):
    if len(argv) < 5:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    outdir, real_id, real_vpn, collide = argv[1], int(argv[2]), argv[3], \
        int(argv[4])
    os.makedirs(outdir, exist_ok=True)
    for n in argv[5:]:
        write_random(outdir, int(n))
    write_collide(outdir, real_id, real_vpn, collide)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
