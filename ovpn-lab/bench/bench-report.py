#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn ovpn benchmark results into a report.

Compares the ovpn module built here ("ours") with the distribution
kernel's upstream ovpn module, from iperf3 throughput runs (JSON Lines,
one object per run, plain veth as the ceiling) and per-packet kernel
instruction, atomic and allocation counts (one JSON file), and at scale:
per-packet instructions with many peers (count-analyze.py --scale) and
the memory per peer (guest-memory.sh's memory.txt, one per boot).  Writes
results.json, report.md, report.rst and, where gnuplot is installed, PNG
plots into OUTDIR, then prints the paths it wrote, one per line.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

USAGE = ('%(prog)s OUTDIR [--throughput FILE.jsonl ...] '
         '[--counts FILE.json] [--scale FILE.json] [--memory FILE ...] '
         '[--title TEXT]')
DASH = '\u2013'
TRANSPORT_ORDER = ('udp', 'tcp')
CIPHER_ORDER = ('aes128', 'chachapoly')
MODULE_ORDER = ('ours', 'upstream')
RUN_KEYS = ('cpus', 'module', 'transport', 'cipher', 'streams')
COUNT_KEYS = ('insns', 'atomics', 'atomics_ovpn', 'allocs', 'allocs_ovpn')
DIRECTIONS = (('tx', 'TX'), ('rx', 'RX'))
MAX_SITES = 8
PLOT_SIZE = '800,500'


def die(message):
    print(f'bench-report: {message}', file=sys.stderr)
    sys.exit(1)


def warn(message):
    print(f'bench-report: warning: {message}', file=sys.stderr)


def is_number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def order_key(value, order):
    if value in order:
        return (order.index(value), '')
    return (len(order), str(value))


def plural(count, word):
    return f'{count} {word}' if count == 1 else f'{count} {word}s'


# ---------------------------------------------------------------- input

def parse_args(argv):
    parser = argparse.ArgumentParser(usage=USAGE, description=__doc__,
                                     formatter_class=argparse.
                                     RawDescriptionHelpFormatter)
    parser.add_argument('outdir', metavar='OUTDIR')
    parser.add_argument('--throughput', metavar='FILE.jsonl', nargs='+',
                        action='extend', default=[],
                        help='iperf3 results, one JSON object a line')
    parser.add_argument('--counts', metavar='FILE.json',
                        help='per-packet instruction/atomic/alloc counts')
    parser.add_argument('--scale', metavar='FILE.json',
                        help='per-packet instructions with many peers')
    parser.add_argument('--memory', metavar='FILE', nargs='+',
                        action='extend', default=[],
                        help='memory per peer, a line a module')
    parser.add_argument('--title', default='ovpn benchmark',
                        help='report title (default: %(default)s)')
    args = parser.parse_args(argv)
    if not (args.throughput or args.counts or args.scale or args.memory):
        parser.error('give --throughput, --counts, --scale or --memory')
    return args


def read_memory(paths):
    """{possible CPUs: {module: (peers, per-CPU B, slab B)}}."""
    memory = {}
    for path in paths:
        try:
            with open(path, encoding='utf-8') as f:
                lines = f.read().splitlines()
        except OSError as e:
            die(f'{path}: {e.strerror}')
        for n, line in enumerate(lines, 1):
            fields = line.split()
            if len(fields) < 6 or not all(v.lstrip('-').isdigit()
                                          for v in fields[1:]):
                die(f'{path}:{n}: expected "module possible online peers '
                    f'percpu slab ..."')
            possible, _, peers, percpu, slab = map(int, fields[1:6])
            memory.setdefault(possible, {})[fields[0]] = (peers, percpu,
                                                          slab)
    return memory


def read_runs(paths):
    runs = []
    for path in paths:
        try:
            with open(path, encoding='utf-8') as f:
                for lineno, line in enumerate(f, 1):
                    if line.strip():
                        runs.append(parse_run(line, f'{path}:{lineno}'))
        except OSError as e:
            die(f'{path}: {e.strerror}')
    return runs


def parse_run(line, where):
    try:
        run = json.loads(line)
    except json.JSONDecodeError as e:
        die(f'{where}: {e.msg}')
    if not isinstance(run, dict):
        die(f'{where}: not a JSON object')
    missing = [key for key in RUN_KEYS if key not in run]
    if missing:
        die(f'{where}: missing {", ".join(missing)}')
    for key in ('cpus', 'streams'):
        if not isinstance(run[key], int) or isinstance(run[key], bool):
            die(f'{where}: {key} is not an integer')
    for key in ('module', 'transport', 'cipher'):
        if not isinstance(run[key], str):
            die(f'{where}: {key} is not a string')
    if run.get('mbps') is not None and not is_number(run['mbps']):
        die(f'{where}: mbps is neither a number nor null')
    run['source'] = where
    return run


def read_counts(path):
    try:
        with open(path, encoding='utf-8') as f:
            counts = json.load(f)
    except OSError as e:
        die(f'{path}: {e.strerror}')
    except json.JSONDecodeError as e:
        die(f'{path}:{e.lineno}: {e.msg}')
    if not isinstance(counts, dict) or \
            not isinstance(counts.get('results'), list) or \
            not all(isinstance(r, dict) for r in counts['results']):
        die(f'{path}: expected an object with a "results" list of objects')
    return counts


# ----------------------------------------------------------- throughput

def run_failed(run):
    return run.get('mbps') is None or bool(run.get('error'))


def group_key(run):
    # veth has no transport or cipher; whatever the file says, pool its
    # runs per (cpus, streams) so that every table row finds its ceiling.
    if run['module'] == 'veth':
        return (run['cpus'], 'veth', '-', '-', run['streams'])
    return tuple(run[key] for key in RUN_KEYS)


def summarize(key, runs):
    values = sorted(run['mbps'] for run in runs if not run_failed(run))
    summary = dict(zip(RUN_KEYS, key))
    summary.update(n=len(values), failed=len(runs) - len(values),
                   median=None, min=None, max=None, values=values)
    if values:
        summary.update(median=statistics.median(values),
                       min=values[0], max=values[-1])
    return summary


def group_runs(runs):
    grouped = {}
    for run in runs:
        grouped.setdefault(group_key(run), []).append(run)
    return {key: summarize(key, group) for key, group in grouped.items()}


def group_or_empty(groups, key):
    return groups.get(key) or summarize(key, [])


def row_order(key):
    cpus, transport, cipher, streams = key
    return (cpus, order_key(transport, TRANSPORT_ORDER),
            order_key(cipher, CIPHER_ORDER), streams)


def compare(groups):
    keys = {(k[0], k[2], k[3], k[4]) for k in groups if k[1] in MODULE_ORDER}
    return [compare_row(groups, key) for key in sorted(keys, key=row_order)]


def compare_row(groups, key):
    cpus, transport, cipher, streams = key
    ours = group_or_empty(groups, (cpus, 'ours', transport, cipher, streams))
    upstream = group_or_empty(groups,
                              (cpus, 'upstream', transport, cipher, streams))
    veth = group_or_empty(groups, (cpus, 'veth', '-', '-', streams))
    ratio = None
    if ours['n'] and upstream['n'] and upstream['median'] > 0:
        ratio = ours['median'] / upstream['median']
    return {'cpus': cpus, 'transport': transport, 'cipher': cipher,
            'streams': streams, 'ours': ours, 'upstream': upstream,
            'veth': veth, 'ratio': ratio}


def row_label(row):
    return (f"{row['transport']} {row['cipher']}, "
            f"{plural(row['streams'], 'stream')}")


def verdict(cpus, rows):
    rated = [row for row in rows if row['ratio'] is not None]
    lowest = min(rated, key=lambda row: row['ratio'], default=None)
    return {'cpus': cpus, 'rows_rated': len(rated),
            'rows_at_parity': sum(round(row['ratio'], 2) >= 1.0
                                  for row in rated),
            'lowest_ratio': lowest['ratio'] if lowest else None,
            'lowest_row': row_label(lowest) if lowest else None}


def verdict_line(summary):
    lowest = DASH
    if summary['lowest_ratio'] is not None:
        lowest = f"{summary['lowest_ratio']:.2f} ({summary['lowest_row']})"
    return (f'lowest ratio: {lowest}, rows with ratio >= 1.00: '
            f"{summary['rows_at_parity']} of {summary['rows_rated']}")


def all_cpus(groups):
    return sorted({key[0] for key in groups})


def veth_failures(groups, cpus):
    return sum(g['failed'] for k, g in groups.items()
               if k[0] == cpus and k[1] == 'veth')


# --------------------------------------------------------------- counts

def sorted_results(results):
    return sorted(results, key=lambda r: (
        order_key(r.get('transport'), TRANSPORT_ORDER),
        order_key(r.get('cipher'), CIPHER_ORDER),
        order_key(r.get('module'), MODULE_ORDER)))


def fmt_insns(value):
    return str(round(value)) if is_number(value) else DASH


def fmt_2(value):
    return f'{value:.2f}' if is_number(value) else DASH


def direction_figures(result, direction):
    figures = result.get(direction)
    return figures if isinstance(figures, dict) else {}


def count_row(result, direction):
    figures = direction_figures(result, direction)
    cells = [str(result.get(key, DASH))
             for key in ('transport', 'cipher', 'module')]
    cells.append(fmt_insns(figures.get('insns')))
    cells += [fmt_2(figures.get(key)) for key in COUNT_KEYS[1:]]
    return cells


def valid_site(site):
    return isinstance(site, (list, tuple)) and len(site) == 2 and \
        is_number(site[1])


def top_sites(result, direction):
    sites = result.get('sites')
    sites = sites.get(direction) if isinstance(sites, dict) else None
    pairs = [(str(s[0]), s[1]) for s in sites or [] if valid_site(s)]
    pairs.sort(key=lambda pair: (-pair[1], pair[0]))
    return pairs[:MAX_SITES]


def result_label(result):
    return (f"{result.get('transport', '?')} {result.get('cipher', '?')}, "
            f"{result.get('module', '?')}")


def counts_notes(counts):
    notes = counts.get('notes') or []
    return [notes] if isinstance(notes, str) else [str(n) for n in notes]


def counts_caption(counts):
    parts = []
    if is_number(counts.get('packets')):
        parts.append(f"{counts['packets']} packets")
    if is_number(counts.get('size')):
        parts.append(f"of {counts['size']} bytes")
    if is_number(counts.get('cpus')):
        parts.append(f"on {plural(counts['cpus'], 'CPU')}")
    measured = f", {' '.join(parts)}" if parts else ''
    return (f'Per packet{measured}, minus a plain-veth baseline; '
            f'{DASH} where not measured.')


# ------------------------------------------------------- document model
#
# The report is built once as a list of blocks and rendered twice, as
# Markdown and as reStructuredText, so that both say the same thing.

class Code(str):
    """Inline literal, such as a kernel symbol."""


class Table:
    def __init__(self, caption, headers, rows, numeric_from):
        self.caption = caption
        self.headers = headers
        self.rows = rows
        # columns at and after this index hold numbers (right-aligned)
        self.numeric_from = numeric_from


def heading(text):
    return ('heading', text)


def para(*spans):
    return ('para', list(spans))


def bullets(items):
    return ('bullets', [item if isinstance(item, list) else [item]
                        for item in items])


THROUGHPUT_HEADERS = [
    'transport', 'cipher', 'streams', 'ours Mbit/s', 'upstream Mbit/s',
    'ours/upstream', 'rounds (ours/upstream)', 'failed (ours/upstream)',
    'veth ceiling Mbit/s']

COUNT_HEADERS = [
    'transport', 'cipher', 'module', 'kernel insns/pkt', 'atomic RMW/pkt',
    'atomic RMW/pkt in ovpn code', 'allocations/pkt',
    'allocations/pkt in ovpn code']


def fmt_spread(group):
    if not group['n']:
        return DASH
    text = f"{group['median']:.1f}"
    if group['n'] > 1:
        text += f" ({group['min']:.1f}{DASH}{group['max']:.1f})"
    return text


def fmt_median(group):
    return f"{group['median']:.1f}" if group['n'] else DASH


def throughput_cells(row):
    ours, upstream = row['ours'], row['upstream']
    ratio = DASH if row['ratio'] is None else f"{row['ratio']:.2f}"
    return [row['transport'], row['cipher'], str(row['streams']),
            fmt_spread(ours), fmt_spread(upstream), ratio,
            f"{ours['n']}/{upstream['n']}",
            f"{ours['failed']}/{upstream['failed']}",
            fmt_median(row['veth'])]


def throughput_blocks(groups, rows, verdicts):
    blocks = []
    for summary in verdicts:
        cpus = summary['cpus']
        cpu_rows = [row for row in rows if row['cpus'] == cpus]
        blocks.append(heading(f"Throughput, {plural(cpus, 'CPU')}"))
        if not cpu_rows:
            blocks.append(para('No runs of ours or upstream.'))
        else:
            caption = (f"iperf3 throughput, {plural(cpus, 'CPU')}: median "
                       f'(min{DASH}max) of the successful rounds')
            blocks.append(Table(caption, THROUGHPUT_HEADERS,
                                [throughput_cells(r) for r in cpu_rows], 2))
            blocks.append(para(verdict_line(summary)))
        failed = veth_failures(groups, cpus)
        if failed:
            blocks.append(para(f"veth: {plural(failed, 'run')} failed."))
    return blocks


def sites_item(result, direction, name):
    spans = [f'{result_label(result)}, {name}: ']
    for i, (symbol, value) in enumerate(top_sites(result, direction)):
        spans += [', '] if i else []
        spans += [Code(symbol), f': {value:.2f}']
    return spans


def sites_blocks(results):
    items = [sites_item(result, direction, name)
             for result in results for direction, name in DIRECTIONS
             if top_sites(result, direction)]
    if not items:
        return []
    return [heading('Atomic sites'),
            para(f'Top atomic read-modify-write sites per packet '
                 f'(at most {MAX_SITES} per direction):'),
            bullets(items)]


def counts_blocks(counts):
    results = sorted_results(counts['results'])
    blocks = [heading('Per-packet costs'), para(counts_caption(counts))]
    for direction, name in DIRECTIONS:
        blocks.append(Table(f'{name}: kernel work per packet',
                            COUNT_HEADERS,
                            [count_row(r, direction) for r in results], 3))
    notes = counts_notes(counts)
    if notes:
        blocks += [para('Notes:'), bullets(notes)]
    return blocks + sites_blocks(results)


SCALE_HEADERS = ['module', 'peers', 'set', 'direction', 'kernel insns/pkt',
                 'ratio to 100 peers', 'insns/pkt in ovpn code',
                 'ratio to 100 peers']

MEMORY_HEADERS = ['possible CPUs', 'peers', 'ours per-CPU', 'ours slab',
                  'ours total', 'upstream per-CPU', 'upstream slab',
                  'upstream total', 'ours/upstream']


def fmt_ratio(value):
    return f'{value:.3f}' if is_number(value) else DASH


def scale_blocks(scale):
    results = sorted(scale['results'], key=lambda r: (
        order_key(r.get('module'), MODULE_ORDER),
        str(r.get('set')).startswith('collide'), r.get('peers', 0),
        r.get('dir') != 'tx'))
    rows = [[str(r.get('module')), str(r.get('peers')), str(r.get('set')),
             str(r.get('dir')).upper(), fmt_insns(r.get('insns')),
             fmt_ratio(r.get('insns_ratio')), fmt_insns(r.get('insns_ovpn')),
             fmt_ratio(r.get('insns_ovpn_ratio'))] for r in results]
    return [heading('Per packet at scale'),
            para(f"{scale.get('packets', '?')} UDP datagrams a run, "
                 f"AES-128-GCM, through the one real peer of an MP device "
                 f"among filler peers; kernel instructions per packet."),
            Table('Instructions per packet with many peers', SCALE_HEADERS,
                  rows, 4),
            para('Notes:'), bullets(counts_notes(scale))]


def memory_blocks(memory):
    rows = []
    for possible in sorted(memory):
        mods = memory[possible]
        cells = [str(possible),
                 '/'.join(str(mods[m][0]) for m in MODULE_ORDER if m in mods)]
        totals = {}
        for m in MODULE_ORDER:
            _, percpu, slab = mods.get(m, (None, None, None))
            totals[m] = None if percpu is None else percpu + slab
            cells += [str(v) if v is not None else DASH
                      for v in (percpu, slab, totals[m])]
        cells.append(fmt_ratio(totals['ours'] / totals['upstream'])
                     if totals['ours'] and totals['upstream'] else DASH)
        rows.append(cells)
    return [heading('Memory per peer'),
            para('Bytes per peer, one AES-128-GCM key in its primary slot '
                 'included: what the allocations traced while the peers '
                 'were added left allocated (per-CPU: size times possible '
                 'CPUs; slab: kmalloc and kmem_cache_alloc), divided by '
                 'their number; both modules in the same boot, one boot '
                 'per count of possible CPUs (2 online).  memory.txt also '
                 'has the growth of /proc/meminfo\'s Percpu and Slab.'),
            Table('Memory per peer (bytes)', MEMORY_HEADERS, rows, 1)]


# ------------------------------------------------------------- markdown

def md_escape(text):
    return re.sub(r'([\\`*_|\[\]<])', r'\\\1', text)


def md_inline(spans):
    return ''.join(f'`{s}`' if isinstance(s, Code) else md_escape(s)
                   for s in spans)


def md_table(table):
    align = ['---:' if i >= table.numeric_from else ':---'
             for i in range(len(table.headers))]
    lines = [f'**{md_escape(table.caption)}**', '',
             md_row(table.headers), md_row(align, escape=False)]
    lines += [md_row(row) for row in table.rows]
    return '\n'.join(lines)


def md_row(cells, escape=True):
    cells = [md_escape(c) if escape else c for c in cells]
    return '| ' + ' | '.join(cells) + ' |'


def md_block(block):
    if isinstance(block, Table):
        return md_table(block)
    kind, content = block
    if kind == 'heading':
        return f'## {md_escape(content)}'
    if kind == 'para':
        return md_inline(content)
    return '\n'.join(f'- {md_inline(item)}' for item in content)


def render_md(title, blocks, plots, outdir):
    parts = [f'# {md_escape(title)}'] + [md_block(b) for b in blocks]
    if plots:
        parts.append('## Plots')
        # Markdown viewers show the PNGs next to report.md; the rst goes
        # into a bigger document where these paths would not resolve.
        parts += [f'![{md_escape(os.path.basename(p))}]'
                  f'({os.path.relpath(p, outdir)})' for p in plots]
    return '\n\n'.join(parts) + '\n'


# ---------------------------------------------------- reStructuredText

def rst_escape(text):
    return re.sub(r'([\\`*_|])', r'\\\1', text)


def rst_inline(spans):
    return ''.join(f'``{s}``' if isinstance(s, Code) else rst_escape(s)
                   for s in spans)


def rst_heading(text, underline):
    return f'{text}\n{underline * len(text)}'


def rst_table(table):
    lines = [f'**{rst_escape(table.caption)}**', '',
             '.. list-table::', '   :header-rows: 1', '']
    for row in [table.headers] + table.rows:
        # an empty cell would end the row early; never emit one
        cells = [rst_escape(cell) or DASH for cell in row]
        lines.append(f'   * - {cells[0]}')
        lines += [f'     - {cell}' for cell in cells[1:]]
    return '\n'.join(lines)


def rst_block(block):
    if isinstance(block, Table):
        return rst_table(block)
    kind, content = block
    if kind == 'heading':
        return rst_heading(rst_escape(content), '~')
    if kind == 'para':
        return rst_inline(content)
    return '\n'.join(f'- {rst_inline(item)}' for item in content)


def render_rst(title, blocks):
    # No overlined document title: this text is pasted into a bigger
    # document, where the report is one section and "~" its sub-sections.
    parts = [rst_heading(rst_escape(title), '-')]
    parts += [rst_block(block) for block in blocks]
    return '\n\n'.join(parts) + '\n'


# ---------------------------------------------------------------- plots

def gp_quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def detect_terminals(gnuplot):
    try:
        listing = subprocess.run([gnuplot, '-e', 'set terminal'],
                                 stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ['pngcairo', 'png']
    text = listing.stdout + listing.stderr
    found = [t for t in ('pngcairo', 'png')
             if re.search(rf'^\s*{t}\s', text, re.MULTILINE)]
    # an unreadable listing is no proof of absence: just try both
    return found or ['pngcairo', 'png']


def series_points(groups, cpus, module, transport, cipher):
    return [(k[4], g['median'], g['min'], g['max'])
            for k, g in sorted(groups.items())
            if k[:4] == (cpus, module, transport, cipher) and g['n']]


def throughput_plot_specs(groups, title):
    combos = sorted({(k[0], k[2], k[3]) for k in groups
                     if k[1] in MODULE_ORDER},
                    key=lambda c: row_order(c + (0,)))
    for cpus, transport, cipher in combos:
        series = [(module, series_points(groups, cpus, module, transport,
                                         cipher))
                  for module in MODULE_ORDER]
        yield (f'throughput-{cpus}cpu-{transport}-{cipher}.png',
               f"{title}: {plural(cpus, 'CPU')}, {transport}, {cipher}",
               series)


def veth_plot_specs(groups, title):
    for cpus in all_cpus(groups):
        points = series_points(groups, cpus, 'veth', '-', '-')
        if points:
            yield (f'veth-{cpus}cpu.png',
                   f"{title}: plain veth ceiling, {plural(cpus, 'CPU')}",
                   [('veth', points)])


def gnuplot_script(terminal, path, title, series):
    streams = sorted({p[0] for _, points in series for p in points})
    lines = [f'set terminal {terminal} size {PLOT_SIZE} noenhanced',
             f'set output {gp_quote(path)}',
             f'set title {gp_quote(title)}',
             "set xlabel 'parallel streams'",
             "set ylabel 'Mbit/s (median, min-max)'",
             'set logscale x 2',
             f'set xrange [{streams[0] / 1.5}:{streams[-1] * 1.5}]',
             f"set xtics ({', '.join(map(str, streams))})",
             'set yrange [0:*]', 'set offsets 0, 0, graph 0.1, 0',
             'set grid', 'set key top left']
    plots = []
    for i, (label, points) in enumerate(series):
        # nudge the series apart so that their error bars do not overlap
        shift = 1 + 0.03 * (i - (len(series) - 1) / 2)
        lines.append(f'$s{i} << EOD')
        lines += [f'{x * shift} {med} {lo} {hi}' for x, med, lo, hi in points]
        lines.append('EOD')
        plots.append(f'$s{i} using 1:2:3:4 with yerrorlines lw 2 pt 7 '
                     f'title {gp_quote(label)}')
    lines += ['plot ' + ', '.join(plots), 'set output']
    return '\n'.join(lines) + '\n'


class Plotter:
    def __init__(self, gnuplot):
        self.gnuplot = gnuplot
        self.terminals = detect_terminals(gnuplot)

    def plot(self, path, title, series):
        series = [(label, points) for label, points in series if points]
        if not series:
            return False
        error = None
        for terminal in list(self.terminals):
            error = self.run(gnuplot_script(terminal, path, title, series),
                             path)
            if error is None:
                self.terminals = [terminal]
                return True
            if len(self.terminals) > 1:
                self.terminals.remove(terminal)
        warn(f'gnuplot failed for {path}: {error}')
        return False

    def run(self, script, path):
        """Return None on success, else why gnuplot failed."""
        try:
            done = subprocess.run([self.gnuplot], input=script, text=True,
                                  capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if done.returncode or not os.path.exists(path):
            return done.stderr.strip() or f'exit status {done.returncode}'
        return None


def make_plots(outdir, title, groups):
    gnuplot = shutil.which('gnuplot')
    if not gnuplot:
        warn('gnuplot not found, no plots')
        return []
    plotter = Plotter(gnuplot)
    written = []
    specs = list(throughput_plot_specs(groups, title))
    specs += veth_plot_specs(groups, title)
    for name, plot_title, series in specs:
        path = os.path.join(outdir, name)
        if plotter.plot(path, plot_title, series):
            written.append(path)
    return written


# ---------------------------------------------------------------- main

def write_file(path, text):
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)
    return path


def throughput_results(runs, groups, rows, verdicts):
    def order(group):
        return (group['cpus'], order_key(group['module'], MODULE_ORDER),
                row_order((0, group['transport'], group['cipher'],
                           group['streams'])))
    return {'runs': runs,
            'groups': sorted(groups.values(), key=order),
            'comparison': rows,
            'summary': verdicts}


def main(argv):
    args = parse_args(argv)
    runs = read_runs(args.throughput)
    counts = read_counts(args.counts) if args.counts else None
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        die(f'{args.outdir}: {e.strerror}')

    blocks, plots, throughput = [], [], None
    if args.throughput:
        groups = group_runs(runs)
        rows = compare(groups)
        verdicts = [verdict(cpus, [r for r in rows if r['cpus'] == cpus])
                    for cpus in all_cpus(groups)]
        throughput = throughput_results(runs, groups, rows, verdicts)
        blocks += throughput_blocks(groups, rows, verdicts)
        plots = make_plots(args.outdir, args.title, groups)
    if counts:
        blocks += counts_blocks(counts)
    scale = read_counts(args.scale) if args.scale else None
    if scale:
        blocks += scale_blocks(scale)
    memory = read_memory(args.memory)
    if memory:
        blocks += memory_blocks(memory)

    merged = {'title': args.title,
              'inputs': {'throughput': args.throughput,
                         'counts': args.counts, 'scale': args.scale,
                         'memory': args.memory},
              'throughput': throughput, 'counts': counts, 'scale': scale,
              'memory': {str(k): v for k, v in memory.items()}}
    out = args.outdir
    written = [
        write_file(os.path.join(out, 'results.json'),
                   json.dumps(merged, indent=2, ensure_ascii=False) + '\n'),
        write_file(os.path.join(out, 'report.md'),
                   render_md(args.title, blocks, plots, out)),
        write_file(os.path.join(out, 'report.rst'),
                   render_rst(args.title, blocks)),
    ]
    print('\n'.join(written + plots))


if __name__ == '__main__':
    main(sys.argv[1:])
