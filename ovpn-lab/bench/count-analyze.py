#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-packet costs from a guest-count.sh boot, as counts.json.

Reads, from the boot's output directory, the ovpn-count plugin's windows
(plugin.txt), what each window was (windows.txt), the allocation counts
(allocs.txt) and the guest's symbols (kallsyms-<module>.txt).  Every
figure is per packet and beyond the plain veth baseline: a tunnel's run
minus the veth runs of the same boot.  TX is what CPU 0 did (namespace a,
the sender), RX what the last CPU did (namespace b, the receiver).

With --scale, the windows are those of guest-count.sh scale: per packet,
a's CPU (0) both ways, kernel instructions in all and in ovpn's code (the
plugin's blocks of the module area), per module, peer set and direction,
with the ratios of the large sets to the 100 peers, in DIR/scale.json.

Usage: count-analyze.py [--scale] DIR      writes DIR/counts.json
"""

import bisect
import json
import os
import sys
from collections import defaultdict

KERNEL_BASE = 0xffff800000000000
OWN_MODULE = '[ovpn]'


class Symbols:
    """Addresses to "function" or "function [module]", from kallsyms."""

    def __init__(self, path):
        entries = []
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3 or parts[1] not in 'tT':
                    continue
                name = parts[2]
                if len(parts) > 3:
                    name += ' ' + parts[3]
                entries.append((int(parts[0], 16), name))
        entries.sort()
        self.addrs = [a for a, _ in entries]
        self.names = [n for _, n in entries]

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else hex(addr)


def read_windows(path):
    """Plugin output: {window: {"insns": {vcpu: n}, "sites": [...],
    "blocks": [...]}}, a site or block as (address, vcpu, count)."""
    windows = {}
    cur = None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == 'window':
                cur = {'insns': {}, 'sites': [], 'blocks': []}
                windows[int(parts[1])] = cur
            elif parts[0] == 'vcpu':
                cur['insns'][int(parts[1])] = int(parts[3])
            elif parts[0] in ('site', 'block'):
                cur[parts[0] + 's'].append((int(parts[1], 16),
                                            int(parts[2]), int(parts[3])))
    return windows


def read_manifest(path):
    runs = []
    with open(path) as f:
        for line in f:
            n, kind, module, transport, cipher, packets = line.split()
            runs.append({'window': int(n), 'kind': kind, 'module': module,
                         'transport': transport, 'cipher': cipher,
                         'packets': int(packets)})
    return runs


def read_allocs(path):
    """{(module, transport, cipher): {cpu: (all, in_ovpn, packets)}}."""
    allocs = defaultdict(dict)
    if not os.path.exists(path):
        return allocs
    with open(path) as f:
        for line in f:
            _, module, transport, cipher, packets, cpu, total, own = \
                line.split()
            allocs[(module, transport, cipher)][int(cpu)] = \
                (int(total), int(own), int(packets))
    return allocs


def direction_costs(window, vcpu, packets, syms):
    """Kernel instructions, atomics and atomics by symbol, per packet."""
    by_sym = defaultdict(float)
    for addr, cpu, runs in window['sites']:
        if cpu == vcpu and addr >= KERNEL_BASE:
            by_sym[syms.name(addr)] += runs / packets
    return {'insns': window['insns'].get(vcpu, 0) / packets,
            'atomics': sum(by_sym.values()),
            'atomics_ovpn': sum(v for k, v in by_sym.items()
                                if k.endswith(OWN_MODULE))}, by_sym


def mean(values):
    return sum(values) / len(values) if values else 0.0


def baseline(runs, windows, syms, vcpus):
    """The veth runs' costs, averaged, per direction."""
    base = {}
    for d, vcpu in vcpus.items():
        costs, sites = [], defaultdict(list)
        for r in runs:
            c, by_sym = direction_costs(windows[r['window']], vcpu,
                                        r['packets'], syms)
            costs.append(c)
            for k, v in by_sym.items():
                sites[k].append(v)
        base[d] = ({k: mean([c[k] for c in costs]) for k in costs[0]},
                   {k: sum(v) / len(runs) for k, v in sites.items()})
    return base


def alloc_costs(allocs, key, cpu):
    if key not in allocs or cpu not in allocs[key]:
        return None, None
    total, own, packets = allocs[key][cpu]
    return total / packets, own / packets


def analyze(d):
    windows = read_windows(os.path.join(d, 'plugin.txt'))
    runs = read_manifest(os.path.join(d, 'windows.txt'))
    allocs = read_allocs(os.path.join(d, 'allocs.txt'))
    last = max(max(w['insns']) for w in windows.values())
    vcpus = {'tx': 0, 'rx': last}
    syms = {m: Symbols(os.path.join(d, 'kallsyms-%s.txt' % m))
            for m in {r['module'] for r in runs}}

    veth = [r for r in runs if r['kind'] == 'count' and r['module'] == 'veth']
    base = baseline(veth, windows, syms['veth'], vcpus)
    base_allocs = {d: mean([alloc_costs(allocs, ('veth', '-', '-'), cpu)[0]
                            or 0.0])
                   for d, cpu in vcpus.items()}

    results = []
    for r in runs:
        if r['kind'] != 'count' or r['module'] == 'veth':
            continue
        key = (r['module'], r['transport'], r['cipher'])
        res = {'module': r['module'], 'transport': r['transport'],
               'cipher': r['cipher'], 'sites': {}}
        for dname, vcpu in vcpus.items():
            c, by_sym = direction_costs(windows[r['window']], vcpu,
                                        r['packets'], syms[r['module']])
            b, b_sites = base[dname]
            out = {k: round(c[k] - b[k], 2) for k in ('insns', 'atomics')}
            out['atomics_ovpn'] = round(c['atomics_ovpn'], 2)
            total, own = alloc_costs(allocs, key, vcpu)
            out['allocs'] = None if total is None else \
                round(total - base_allocs[dname], 2)
            out['allocs_ovpn'] = None if own is None else round(own, 2)
            res[dname] = out
            extra = {k: v - b_sites.get(k, 0.0) for k, v in by_sym.items()}
            res['sites'][dname] = sorted(
                ([k, round(v, 2)] for k, v in extra.items() if v >= 0.05),
                key=lambda kv: -kv[1])
        results.append(res)

    first = next(r for r in runs if r['kind'] == 'count')
    env = ''
    if os.path.exists(os.path.join(d, 'count-env.txt')):
        with open(os.path.join(d, 'count-env.txt')) as f:
            env = f.read().strip()
    return {'packets': first['packets'], 'cpus': last + 1, 'env': env,
            'results': results,
            'notes': [
                'Per packet, minus the same datagrams over the plain veth '
                'in the same boot (%s).' % env,
                'TX: the sending namespace\'s CPU (encryption, transport '
                'send); RX: the receiving namespace\'s CPU (transport '
                'receive, decryption, delivery).',
                'atomic RMW: x86 instructions with a LOCK prefix, or XCHG '
                'with memory, run in kernel mode; "in ovpn code": those '
                'whose address lies in the ovpn module.',
                'allocations: kmem:kmalloc and kmem:kmem_cache_alloc '
                'events; "in ovpn code": call site in the ovpn module.']}


def own_insns(window, vcpu, syms):
    """The instructions VCPU ran in ovpn's code in WINDOW."""
    return sum(n for addr, cpu, n in window['blocks']
               if cpu == vcpu and syms.name(addr).endswith(OWN_MODULE))


def analyze_scale(d):
    windows = read_windows(os.path.join(d, 'plugin.txt'))
    runs = read_manifest(os.path.join(d, 'windows.txt'))
    syms = {m: Symbols(os.path.join(d, 'kallsyms-%s.txt' % m))
            for m in {r['module'] for r in runs}}
    peers = {}
    with open(os.path.join(d, 'scale-sets.txt')) as f:
        for line in f:
            module, name, n = line.split()
            peers[(module, name)] = int(n)
    results = []
    for r in runs:
        if r['kind'] != 'count':
            continue
        # The manifest's transport and cipher are the set and direction.
        w, n = windows[r['window']], r['packets']
        results.append({'module': r['module'], 'set': r['transport'],
                        'dir': r['cipher'],
                        'peers': peers[(r['module'], r['transport'])],
                        'insns': round(w['insns'].get(0, 0) / n, 1),
                        'insns_ovpn': round(own_insns(w, 0,
                                                      syms[r['module']]) /
                                            n, 1)})
    base = {(r['module'], r['dir']): r for r in results
            if r['set'] == 'random-100'}
    for r in results:
        b = base.get((r['module'], r['dir']))
        for k in ('insns', 'insns_ovpn'):
            r[k + '_ratio'] = round(r[k] / b[k], 3) if b and b[k] else None
    env = ''
    if os.path.exists(os.path.join(d, 'count-env.txt')):
        with open(os.path.join(d, 'count-env.txt')) as f:
            env = f.read().strip()
    infos = []
    for m in sorted(syms):
        path = os.path.join(d, 'collide-%s.info' % m)
        if os.path.exists(path):
            with open(path) as f:
                infos.append(f.read().strip())
    counted = next(r for r in runs if r['kind'] == 'count')
    return {'packets': counted['packets'], 'env': env, 'results': results,
            'notes': infos + [
                'Per packet, on the MP device\'s CPU (%s); tx: the MP '
                'device sends to its real peer (lookup by VPN address), '
                'rx: it receives from it (lookup by peer id).' % env,
                'in ovpn code: instructions whose address lies in the '
                'ovpn module; ratio: to the same module and direction '
                'with 100 peers.',
                'collide: 10,000 fillers in the real peer\'s VPN IPv4 '
                'bucket, and in its id bucket as far as 24-bit ids allow '
                '(collide-<module>.info), in front of it in the chains.']}


def main():
    scale = len(sys.argv) == 3 and sys.argv[1] == '--scale'
    if len(sys.argv) != 2 and not scale:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    d = sys.argv[-1]
    counts = analyze_scale(d) if scale else analyze(d)
    path = os.path.join(d, 'scale.json' if scale else 'counts.json')
    with open(path, 'w') as f:
        json.dump(counts, f, indent=1)
    print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
