# SPDX-License-Identifier: GPL-2.0
"""The buckets MP devices put peers in, as the modules compute them, for
tests and benchmarks that want peers in one bucket.

Upstream's module, and ours before it moved to an XArray and rhashtables
with random seeds, hash a peer id, or a VPN IPv4 address (a __be32 read
as a u32), with jhash of seed 0 (Bob Jenkins' lookup3; jhash_1word(x, 0)
and jhash(&x, 4, 0) are the same function) into 4096 buckets: ours with
hash_32(h, 12), the top bits of h times the golden ratio, upstream's with
h % 4096, the low bits.  For ours, the sets these give are what an
attacker who knew the old tables would choose: the benchmark measures
that they cost the current tables nothing.
"""

import ipaddress
import struct

MASK = 0xffffffff
BITS = 12
GOLDEN_RATIO_32 = 0x61C88647
# jhash's initial value for one word and seed 0: JHASH_INITVAL + 4.
INIT = 0xdeadbeef + 4


def rol32(x, k):
    return ((x << k) | (x >> (32 - k))) & MASK


# __jhash_final(a, b, c) with b = c = INIT: its first two steps do not
# depend on a.
C1 = -rol32(INIT, 14) & MASK
A_XOR, A_SUB = C1, rol32(C1, 11)


def jhash_1word(x):
    """jhash_1word(x, 0), the rest of __jhash_final spelt out."""
    a = ((((x + INIT) & MASK) ^ A_XOR) - A_SUB) & MASK
    b = ((INIT ^ a) - rol32(a, 25)) & MASK
    c = ((C1 ^ b) - rol32(b, 16)) & MASK
    a = ((a ^ c) - rol32(c, 4)) & MASK
    b = ((b ^ a) - rol32(a, 14)) & MASK
    return ((c ^ b) - rol32(b, 24)) & MASK


def bucket_of(module, h):
    """The bucket of hash H in MODULE's tables: ours or upstream."""
    if module == 'upstream':
        return h & ((1 << BITS) - 1)
    return ((h * GOLDEN_RATIO_32) & MASK) >> (32 - BITS)


def addr_word(addr):
    """An IPv4 address as the modules hash it: its bytes as a u32."""
    return struct.unpack('<I', ipaddress.IPv4Address(addr).packed)[0]


def bucket(addr, module='ours'):
    """MODULE's bucket of the VPN IPv4 address ADDR."""
    return bucket_of(module, jhash_1word(addr_word(addr)))
