#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cache-line transfers per packet from a guest-lines.sh boot.

Reads, from the boot's output directory, the ovpn-count plugin's windows
with its coherence model (plugin.txt: "xfer" and "line" records), what
each window was (windows.txt) and the guest's symbols
(kallsyms-<module>.txt).  For each counted window, per packet:

  all         every transfer the window's TX (or RX) CPUs caused in
              kernel mode (the model follows user mode too, for its
              proof below)
  ovpn data   transfers of lines that ovpn's code touched first in the
              window: its peer, key slot, statistics, packet-id counter,
              and what it allocates (the request buffer)
  ovpn code   transfers caused by an instruction in ovpn's code, whoever
              owns the line (the skb it works on, the device's counters)

the kernel instructions of the busiest vCPU (the critical path, where
the packets of one flow are the only load) and of all vCPUs, and the
lines that moved most, named by the static symbol they hold, if any, by the function that touched them first in the window and by the
one that moved them last.  A "lossy" window (not every datagram
arrived) counts per datagram received and is marked so.  Per vCPU, the instructions run in ovpn's code
(the plugin's module blocks) say where the module ran at all.  A "ping" window has one CPU for both sides:
its transfers are the round trip's, counted as TX.

The boot's first window is the model's proof (count-check lines, in
selftest.txt): N handoffs each way between two CPUs through one variable
must move its line 4N times, within 15%, and the counter each increments
atomically with its turn 2N times, within 3%.  The vCPUs run in parallel
threads, and the callbacks of two of them may reach the model in another
order than their accesses reached memory: a load that saw a store may be
modelled before it, and its transfer missed (2% of the turn's transfers
on an idle host, 10% on one busy with another boot).  An atomic's
transfers are not missed so: its request for ownership is modelled
whatever the order.  If not, nothing is written and the exit status is
1.

Usage: lines-analyze.py DIR       writes DIR/lines.json and DIR/lines.md
"""

import bisect
import json
import os
import sys
from collections import defaultdict

KERNEL_BASE = 0xffff800000000000
OWN_MODULE = '[ovpn]'
TOP_LINES = 6


class Symbols:
    """Addresses to names from kallsyms: code, and static data apart."""

    def __init__(self, path):
        code, data = [], []
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                name = parts[2] + (' ' + parts[3] if len(parts) > 3 else '')
                kind = parts[1].lower()
                if kind == 't':
                    code.append((int(parts[0], 16), name))
                elif kind in 'dbr':
                    data.append((int(parts[0], 16), name))
        self.code = self._index(code)
        self.data = self._index(data)

    @staticmethod
    def _index(entries):
        entries.sort()
        return [a for a, _ in entries], [n for _, n in entries]

    @staticmethod
    def _find(index, addr):
        addrs, names = index
        i = bisect.bisect_right(addrs, addr) - 1
        return (addrs[i], names[i]) if i >= 0 else (0, None)

    def function(self, addr):
        return self._find(self.code, addr)[1] or hex(addr)

    def static(self, addr):
        """The static variable at a line's address: within 4 KiB of the
        symbol below it, so that the heap is not named after the last
        variable of the image."""
        base, name = self._find(self.data, addr)
        return name if name and addr - base < 4096 else None


def read_plugin(path):
    """{window: {"xfers": [(addr, vcpu, n)], "blocks": [(addr, vcpu,
    insns)], "lines": [...], "kinsn": {vcpu: kernel instructions}}}."""
    windows, cur = {}, None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == 'window':
                cur = {'xfers': [], 'blocks': [], 'lines': [],
                       'kinsn': {}}
                windows[int(parts[1])] = cur
            elif parts[0] == 'vcpu':
                cur['kinsn'][int(parts[1])] = int(parts[3])
            elif parts[0] in ('xfer', 'block'):
                cur[parts[0] + 's'].append((int(parts[1], 16),
                                            int(parts[2]), int(parts[3])))
            elif parts[0] == 'line':
                cur['lines'].append({
                    'line': parts[1], 'vaddr': int(parts[2], 16),
                    'first': int(parts[3], 16), 'last': int(parts[4], 16),
                    'writers': int(parts[5], 16), 'vcpu': int(parts[6]),
                    'n': int(parts[7])})
    return windows


def read_manifest(path):
    runs = []
    with open(path) as f:
        for line in f:
            n, kind, module, transport, workload, packets, tx, rx = \
                line.split()
            runs.append({'window': int(n), 'kind': kind, 'module': module,
                         'transport': transport, 'workload': workload,
                         'packets': int(packets),
                         'tx': {int(c) for c in tx.split(',')},
                         'rx': {int(c) for c in rx.split(',')}})
    return runs


def side(window, cpus, packets, syms):
    """The figures of one side (its CPUs) of one window."""
    lines, own = defaultdict(int), defaultdict(int)
    meta = {}
    for rec in window['lines']:
        if rec['vcpu'] not in cpus:
            continue
        lines[rec['line']] += rec['n']
        meta[rec['line']] = rec
        if syms.function(rec['first']).endswith(OWN_MODULE):
            own[rec['line']] += rec['n']
    kernel = sum(n for addr, vcpu, n in window['xfers']
                 if vcpu in cpus and addr >= KERNEL_BASE)
    code = sum(n for addr, vcpu, n in window['xfers']
               if vcpu in cpus and
               syms.function(addr).endswith(OWN_MODULE))

    def top(counts):
        out = []
        for line, n in sorted(counts.items(),
                              key=lambda kv: -kv[1])[:TOP_LINES]:
            rec = meta[line]
            out.append({'per_packet': round(n / packets, 2),
                        'static': syms.static(rec['vaddr']),
                        'first': syms.function(rec['first']),
                        'last': syms.function(rec['last']),
                        'writers': bin(rec['writers']).count('1')})
        return out

    return {'all': round(kernel / packets, 2),
            'ovpn_data': round(sum(own.values()) / packets, 2),
            'ovpn_code': round(code / packets, 2),
            'top': top(lines), 'top_ovpn': top(own)}


def selftest(d, windows):
    """The transfers of count-check's lines, and those expected: 4N for
    the turn's, 2N for the counter's."""
    with open(os.path.join(d, 'selftest.txt')) as f:
        window, n, turn, counter = f.read().split()
    recs = windows.get(int(window), {}).get('lines', [])

    def moved(addr):
        return sum(rec['n'] for rec in recs
                   if rec['vaddr'] == int(addr, 16) & ~63)

    return [(moved(turn), 4 * int(n), 0.15),
            (moved(counter), 2 * int(n), 0.03)]


def analyze(d):
    windows = read_plugin(os.path.join(d, 'plugin.txt'))
    runs = read_manifest(os.path.join(d, 'windows.txt'))
    syms = {m: Symbols(os.path.join(d, 'kallsyms-%s.txt' % m))
            for m in {r['module'] for r in runs if r['kind'] != 'selftest'}}
    results = []
    for r in runs:
        if r['kind'] not in ('count', 'lossy') or \
                r['window'] not in windows:
            continue
        w, s = windows[r['window']], syms[r['module']]
        res = {k: r[k] for k in ('module', 'transport', 'workload',
                                 'packets')}
        res['lossy'] = r['kind'] == 'lossy'
        res['tx'] = side(w, r['tx'], r['packets'], s)
        if r['rx'] != r['tx']:
            res['rx'] = side(w, r['rx'], r['packets'], s)
        by_cpu = defaultdict(int)
        for addr, vcpu, n in w['blocks']:
            if s.function(addr).endswith(OWN_MODULE):
                by_cpu[vcpu] += n
        res['ovpn_insns_by_cpu'] = {c: round(n / r['packets'], 1)
                                    for c, n in sorted(by_cpu.items())}
        kinsn = w['kinsn']
        res['kinsn_busiest'] = round(max(kinsn.values(), default=0) /
                                     r['packets'])
        res['kinsn_all'] = round(sum(kinsn.values()) / r['packets'])
        results.append(res)
    env = ''
    if os.path.exists(os.path.join(d, 'lines-env.txt')):
        with open(os.path.join(d, 'lines-env.txt')) as f:
            env = f.read().strip()
    return {'env': env,
            'selftest': [{'transfers': got, 'expected': want,
                          'tolerance': tol}
                         for got, want, tol in selftest(d, windows)],
            'results': results}


def cell(res, direction, key):
    return '%.2f' % res[direction][key] if direction in res else '-'


def markdown(report):
    out = ['Cache-line transfers per packet (%s); the model\'s proof, '
           'count-check\'s lines: %s' % (
               report['env'], ', '.join(
                   '%d transfers (%d expected)' % (t['transfers'],
                                                   t['expected'])
                   for t in report['selftest'])), '',
           '| workload | transport | module | TX all | TX ovpn data | '
           'TX ovpn code | RX all | RX ovpn data | RX ovpn code |',
           '|---|---|---|---:|---:|---:|---:|---:|---:|']
    for r in report['results']:
        out.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            r['workload'] + (' (lossy)' if r['lossy'] else ''),
            r['transport'], r['module'], cell(r, 'tx', 'all'), cell(r, 'tx', 'ovpn_data'),
            cell(r, 'tx', 'ovpn_code'), cell(r, 'rx', 'all'),
            cell(r, 'rx', 'ovpn_data'), cell(r, 'rx', 'ovpn_code')))
    out += ['', 'Kernel instructions per packet on the busiest vCPU '
            '(the critical path) and on all of them:', '',
            '| workload | transport | module | busiest vCPU | all vCPUs |',
            '|---|---|---|---:|---:|']
    for r in report['results']:
        out.append('| %s | %s | %s | %d | %d |' % (
            r['workload'], r['transport'], r['module'],
            r['kinsn_busiest'], r['kinsn_all']))
    out += ['', 'Instructions in ovpn\'s code per packet, by vCPU:', '']
    for r in report['results']:
        out.append('- %s %s %s: %s' % (
            r['workload'], r['transport'], r['module'],
            ', '.join('cpu%s %s' % kv
                      for kv in r['ovpn_insns_by_cpu'].items()) or 'none'))
    for key, title in (('top_ovpn', 'ovpn data'), ('top', 'all')):
        out += ['', 'Lines that moved most, %s (per packet; static '
                'symbol, or first toucher / last mover):' % title, '']
        for r in report['results']:
            for direction in ('tx', 'rx'):
                if direction not in r or not r[direction][key]:
                    continue
                tops = ['%.2f %s' % (t['per_packet'], t['static'] or
                                     '%s / %s' % (t['first'], t['last']))
                        for t in r[direction][key]]
                out.append('- %s %s %s %s: %s' % (
                    r['workload'], r['transport'], r['module'], direction,
                    '; '.join(tops)))
    return '\n'.join(out) + '\n'


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    d = sys.argv[1]
    report = analyze(d)
    for t in report['selftest']:
        if abs(t['transfers'] - t['expected']) > \
                max(4, t['expected'] * t['tolerance']):
            print('lines-analyze: the model moved a line of count-check '
                  '%d times, not %d' % (t['transfers'], t['expected']),
                  file=sys.stderr)
            return 1
    with open(os.path.join(d, 'lines.json'), 'w') as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(d, 'lines.md'), 'w') as f:
        f.write(markdown(report))
    print(os.path.join(d, 'lines.md'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
