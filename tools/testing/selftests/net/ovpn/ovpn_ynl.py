# SPDX-License-Identifier: GPL-2.0
"""What the ovpn selftests in Python share: the kernel's YNL library and
Documentation/netlink/specs/ovpn.yaml, found (or the script skips), a
network namespace of their own and the KTAP output of their test points.

make kselftest-install copies the spec and the YNL library (pyynl) next
to the scripts; in a kernel tree they are read where they are.
"""

import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KSFT_SKIP = 4
SLOW = int(os.environ.get('OVPN_SLOW', '1'))
CLI = os.environ.get('OVPN_CLI', str(HERE / 'ovpn-cli'))


def skip_all(why):
    print('TAP version 13')
    print(f'1..0 # SKIP {why}')
    sys.exit(KSFT_SKIP)


def find(installed, in_tree):
    """The installed copy next to this script, else the kernel tree's."""
    for path in (HERE / installed, HERE.parents[3] / in_tree):
        if path.exists():
            return path
    return None


YNL_DIR = find('pyynl', 'net/ynl/pyynl')
SPEC = find('ovpn.yaml', '../Documentation/netlink/specs/ovpn.yaml')
if os.geteuid() != 0:
    skip_all('needs root')
if not YNL_DIR or not SPEC:
    skip_all('no YNL library or no ovpn.yaml (make kselftest-install)')
sys.path.insert(0, str(YNL_DIR.parent))
try:
    # pylint: disable=import-error,wrong-import-position,unused-import
    from pyynl.lib import YnlFamily, NlError
except ImportError as err:
    skip_all(f'YNL does not load: {err}')


class Fail(Exception):
    """A test point failed; the message says how."""


def expect_eq(what, want, got):
    if want != got:
        raise Fail(f'{what}: expected {want!r}, got {got!r}')


def family():
    """A handle on the family, with a netlink socket of its own."""
    return YnlFamily(str(SPEC), schema='')


def cli(*args):
    """ovpn-cli with ARGS, its output dropped; it must succeed."""
    subprocess.run([CLI, *args], check=True, stdout=subprocess.DEVNULL)


def tcp_attach(ifname, peer_id, vpn=None):
    """A TCP connection over the loopback, one end attached to IFNAME as
    peer PEER_ID, with the IPv4 address VPN if given: that end, the other
    one and the error of PEER_NEW ('' for none)."""
    with socket.create_server(('127.0.0.1', 0)) as lsn:
        sock = socket.create_connection(lsn.getsockname())
        other, _ = lsn.accept()
    peer = {'id': int(peer_id), 'socket': sock.fileno()}
    if vpn:
        peer['vpn-ipv4'] = int(ipaddress.ip_address(vpn))
    try:
        with family() as ynl:
            ynl.do('peer-new', {'ifindex': socket.if_nametoindex(ifname),
                                'peer': peer})
    except NlError as err:
        return sock, other, str(err)
    return sock, other, ''


def enter_netns(name):
    """A new namespace NAME with its loopback up, for this process, its
    sockets and what it runs from here on; "ip netns del" at exit."""
    subprocess.run(['ip', 'netns', 'add', name], check=True)
    fd = os.open(f'/run/netns/{name}', os.O_RDONLY)
    os.setns(fd, os.CLONE_NEWNET)
    os.close(fd)
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)


def ktap_run(tests, setup, netns):
    """KTAP of TESTS, each called with what SETUP returns; a test may
    return a note, shown after its result.  Exits with kselftest's status
    once NETNS is deleted."""
    failed = 0

    print('TAP version 13')
    print(f'1..{len(tests)}', flush=True)
    try:
        ctx = setup()
    except (OSError, subprocess.CalledProcessError, NlError) as err:
        print(f'# setup: {err}')
        ctx = None
    for n, test in enumerate(tests, 1):
        try:
            if ctx is None:
                raise Fail('no setup')
            note = test(ctx)
            print(f'ok {n} {test.__name__}')
        # Anything a test raises is its failure, not the script's.
        except Exception as err:  # pylint: disable=broad-except
            failed += 1
            note = f'{test.__name__}: {type(err).__name__}: {err}'
            print(f'not ok {n} {test.__name__}')
        for line in (note or '').splitlines():
            print(f'# {line}')
        sys.stdout.flush()
    subprocess.run(['ip', 'netns', 'del', netns], check=False)
    print(f'# totals: pass:{len(tests) - failed} fail:{failed} skip:0')
    sys.exit(1 if failed else 0)
