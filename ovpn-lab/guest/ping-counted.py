#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# A "ping" that the conformance run puts first in PATH when it is asked to
# count (conformance.sh -s): a flood ping (-f) runs the real ping between
# two snapshots of everything that says where a packet was lost, and the
# differences are appended to $OVPN_PING_STATS:
#   - per namespace ovpn_*: /proc/net/snmp, netstat and snmp6 (fragments,
#     reassembly, UDP and TCP errors) and every device's counters;
#   - the whole guest: softnet_stat's backlog drops and squeezes, and every
#     skb:kfree_skb event by drop reason and function.
# Any other ping runs unchanged.  Ping's own output and exit status are
# passed through, so the calling script sees no difference.
#
# The kfree_skb event is switched on once, before any traffic
# (guest/conformance.sh): switching a tracepoint patches kernel text, which
# software emulation does not always survive (see pin-static-keys.py).
# Here the buffer is only cleared and read.  "ip netns exec" mounts a sysfs
# without tracefs, so tracefs comes from $OVPN_TRACEFS, mounted elsewhere.

import json
import os
import re
import subprocess
import sys
import time

REAL_PING = '/usr/bin/ping'


def namespaces():
    try:
        return sorted(n for n in os.listdir('/run/netns')
                      if n.startswith('ovpn_'))
    except FileNotFoundError:
        return []


def parse_snmp(text, out):
    lines = [line.split() for line in text.splitlines() if line.strip()]
    i = 0
    while i < len(lines):
        row = lines[i]
        # snmp and netstat: a line of names, then a line of values.
        if (row[0].endswith(':') and i + 1 < len(lines) and
                lines[i + 1][0] == row[0]):
            for name, value in zip(row[1:], lines[i + 1][1:]):
                if value.lstrip('-').isdigit():
                    out[row[0] + name] = int(value)
            i += 2
            continue
        # snmp6: one "name value" per line.
        if len(row) == 2 and row[1].isdigit():
            out[row[0]] = int(row[1])
        i += 1


def parse_links(text, out):
    for link in json.loads(text or '[]'):
        stats = link.get('stats64', {})
        for way in ('rx', 'tx'):
            for key, value in stats.get(way, {}).items():
                if isinstance(value, int):
                    out[f"{link['ifname']}.{way}_{key}"] = value


def snapshot():
    # One reader per namespace, all at once: on a debug kernel each takes
    # a second or more, and the ping waits for them (a script's tcpdump
    # window may already be open).
    readers = {
        ns: subprocess.Popen(
            ['nsenter', f'--net=/run/netns/{ns}', 'sh', '-c',
             'cat /proc/net/snmp /proc/net/netstat /proc/net/snmp6; '
             'echo @@; ip -j -s -s link show'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for ns in namespaces()}
    snap = {}
    for ns, reader in readers.items():
        out, _ = reader.communicate()
        counters = {}
        proc_text, _, links = out.partition('@@\n')
        parse_snmp(proc_text, counters)
        parse_links(links, counters)
        snap[ns] = counters
    softnet = {'dropped': 0, 'time_squeeze': 0}
    with open('/proc/net/softnet_stat', encoding='ascii') as f:
        for line in f:
            cols = line.split()
            softnet['dropped'] += int(cols[1], 16)
            softnet['time_squeeze'] += int(cols[2], 16)
    snap['softnet'] = softnet
    return snap


def trace_file(name):
    base = os.environ.get('OVPN_TRACEFS')
    return os.path.join(base, name) if base else None


def trace_clear():
    path = trace_file('trace')
    if path and os.path.exists(path):
        with open(path, 'w', encoding='ascii'):
            pass


DROP = re.compile(r'kfree_skb: .*location=(\S+?)(?:\+\S+)? .*reason: (\S+)')


def trace_drops():
    path = trace_file('trace')
    drops = {}
    if not path or not os.path.exists(path):
        return drops
    with open(path, encoding='ascii', errors='replace') as f:
        for line in f:
            m = DROP.search(line)
            if m:
                key = f'{m.group(2)} at {m.group(1)}'
                drops[key] = drops.get(key, 0) + 1
    return drops


# Counters that only grow when a packet is lost.
LOSS = re.compile(r'dropped|Fails|Errors|Discards|Overflow|Timeout')


def report(args, output, rc, before, after, drops, took):
    lines = [f"ping {' '.join(args)} -> rc {rc}"]
    lines += ['  ' + line for line in output.splitlines()
              if 'transmitted' in line or 'rtt' in line]
    replies = 0
    lost = 0
    for scope in after:
        old = before.get(scope, {})
        for key in sorted(after[scope]):
            delta = after[scope][key] - old.get(key, 0)
            if delta:
                lines.append(f'  {scope} {key} +{delta}')
            if key in ('Icmp:InEchoReps', 'Icmp6InEchoReplies'):
                replies += delta
            elif LOSS.search(key):
                lost += delta
    # One line to compare runs by: echo replies that reached the stack
    # (in any namespace, also those ping no longer waited for) and every
    # loss counter's growth.
    sent = re.search(r'(\d+) packets transmitted, (\d+) received', output)
    lines.insert(1, f'  summary: sent {sent.group(1) if sent else "?"}'
                 f' received {sent.group(2) if sent else "?"}'
                 f' replies-arrived {replies} losses {lost}'
                 f' (ping delayed {took:.1f} s by the first snapshot)')
    for key, count in sorted(drops.items(), key=lambda kv: -kv[1]):
        lines.append(f'  kfree_skb {key} x{count}')
    with open(os.environ['OVPN_PING_STATS'], 'a', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')


def main():
    args = sys.argv[1:]
    flood = any(a.startswith('-') and not a.startswith('--') and
                'f' in a for a in args)
    if not flood or not os.environ.get('OVPN_PING_STATS'):
        os.execv(REAL_PING, [REAL_PING] + args)
    start = time.monotonic()
    before = snapshot()
    trace_clear()
    took = time.monotonic() - start
    proc = subprocess.run([REAL_PING] + args, capture_output=True,
                          text=True, check=False)
    drops = trace_drops()
    after = snapshot()
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    report(args, proc.stdout, proc.returncode, before, after, drops, took)
    sys.exit(proc.returncode)


if __name__ == '__main__':
    main()
