#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The "ovpn" family as the kernel's YNL library sees it from
# Documentation/netlink/specs/ovpn.yaml alone: nothing here encodes an
# attribute by hand, so every request that works and every reply and
# notification that decodes proves the spec and the driver agree.
#
#   ns "ovpn-ynl-<pid>": tun0 (MP), peer 1 on a UDP socket of this
#   process, bound to 127.0.0.1:1194, its remote 127.0.0.2:1195.
#
# ovpn_ynl.py finds both, or the script skips.

import errno
import ipaddress
import os
import socket

from ovpn_ynl import Fail, NlError, cli, enter_netns, expect_eq, family, \
    ktap_run, SLOW

NS = f'ovpn-ynl-{os.getpid()}'
REMOTE = '127.0.0.2'
KEY = bytes(range(32))
NONCE = bytes(range(0xa0, 0xa8))


def ipv4(value):
    """A u32 address as YNL decodes it, for comparison with a string."""
    return str(ipaddress.IPv4Address(value))


class Tunnel:
    """The device, the peer's socket and the family handle."""

    def __init__(self):
        enter_netns(NS)
        cli('new_iface', 'tun0', 'mp')
        self.ifindex = socket.if_nametoindex('tun0')
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', 1194))
        # The keepalives go somewhere: no ICMP error comes back.
        self.remote = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.remote.bind((REMOTE, 1195))
        self.ynl = family()

    def peers(self):
        return [m['peer'] for m in
                self.ynl.dump('peer-get', {'ifindex': self.ifindex})]


def policy_names(policy):
    """The attribute names a kernel policy accepts, as the spec names them
    (attr-N for one the spec does not know)."""
    return sorted(policy.keys()) if policy is not None else None


def dumped(attr_set, names):
    """Of the spec's attribute names, those a policy dump shows: the
    kernel's dump leaves out big-endian integers (net/netlink/policy.c
    knows no dump type for NLA_BE16 and NLA_BE32)."""
    return sorted(n for n in names
                  if attr_set[n].yaml.get('byte-order') != 'big-endian')


def spec_matches_kernel(t):
    """The kernel's own policies, dumped by nlctrl, against the spec: each
    request the spec describes is a command the kernel knows, taking the
    attributes, and in nests the nested ones, that the spec lists."""
    expect_eq('multicast groups', ['peers'],
              sorted(t.ynl.nlproto.genl_family.get('mcast', {})))
    for name, op in t.ynl.ops.items():
        request = op.yaml.get('do', {}).get('request')
        if not request:
            continue
        policy = t.ynl.get_policy(name, 'do')
        expect_eq(f'{name}: attributes',
                  dumped(op.attr_set, request['attributes']),
                  policy_names(policy))
        for attr in request['attributes']:
            nested = op.attr_set[attr].yaml.get('nested-attributes')
            if nested:
                inner = t.ynl.attr_sets[nested]
                expect_eq(f'{name}: attributes in {attr}',
                          dumped(inner, inner.attrs),
                          policy_names(policy[attr]))


def peer_new(t):
    t.ynl.do('peer-new', {'ifindex': t.ifindex, 'peer': {
        'id': 1, 'socket': t.sock.fileno(),
        'remote-ipv4': int(ipaddress.IPv4Address(REMOTE)),
        'remote-port': 1195,
        'vpn-ipv4': int(ipaddress.IPv4Address('5.5.5.2'))}})


def peer_dumped(t):
    peers = t.peers()
    expect_eq('peers dumped', 1, len(peers))
    peer = peers[0]
    expect_eq('id', 1, peer['id'])
    expect_eq('remote-ipv4', REMOTE, ipv4(peer['remote-ipv4']))
    expect_eq('remote-port', 1195, peer['remote-port'])
    expect_eq('vpn-ipv4', '5.5.5.2', ipv4(peer['vpn-ipv4']))
    expect_eq('vpn-tx-packets', 0, peer['vpn-tx-packets'])


def key_read_back(t):
    keydir = {'cipher-key': KEY, 'nonce-tail': NONCE}
    t.ynl.do('key-new', {'ifindex': t.ifindex, 'keyconf': {
        'peer-id': 1, 'slot': 'primary', 'key-id': 3,
        'cipher-alg': 'aes-gcm', 'encrypt-dir': keydir,
        'decrypt-dir': keydir}})
    key = t.ynl.do('key-get', {'ifindex': t.ifindex, 'keyconf': {
        'peer-id': 1, 'slot': 'primary'}})['keyconf']
    print(f'# key-get: {key}')
    expect_eq('key-id', 3, key['key-id'])
    expect_eq('cipher-alg', 'aes-gcm', key['cipher-alg'])
    for secret in ('encrypt-dir', 'decrypt-dir'):
        if secret in key:
            raise Fail(f'key-get gave out {secret}')


def error_has_extack(t):
    try:
        t.ynl.do('peer-new', {'ifindex': t.ifindex, 'peer': {'id': 2}})
    except NlError as err:
        print(f'# {err}')
        expect_eq('errno', errno.EINVAL, err.error)
        extack = err.nl_msg.extack or {}
        if 'msg' not in extack and 'miss-type' not in extack:
            raise Fail(f'no extack message or missing attribute: {extack}')
        return
    raise Fail('a peer without a socket was added')


def expiry_notified(t):
    # A socket of its own, as openvpn's listener: YNL binds it to join the
    # group, which a socket that already sent requests cannot be.
    listener = family()
    listener.ntf_subscribe('peers')
    t.ynl.do('peer-set', {'ifindex': t.ifindex, 'peer': {
        'id': 1, 'keepalive-interval': 1, 'keepalive-timeout': 1}})
    for ntf in listener.poll_ntf(duration=30 * SLOW):
        print(f'# {ntf["name"]}: {ntf["msg"]}')
        if ntf['name'] == 'peer-del-ntf':
            expect_eq('ifindex', t.ifindex, ntf['msg']['ifindex'])
            expect_eq('peer', 1, ntf['msg']['peer']['id'])
            expect_eq('reason', 'expired', ntf['msg']['peer']['del-reason'])
            expect_eq('peers left', [], t.peers())
            return
    raise Fail('no peer-del-ntf within the keepalive timeout')


def epoch_format_discoverable(t):
    """What a daemon asks before it offers openvpn's epoch data format:
    whether KEY_NEW's key directions take a 32-byte epoch secret."""
    policy = t.ynl.get_policy('key-new', 'do')
    for keydir in ('encrypt-dir', 'decrypt-dir'):
        secret = policy['keyconf'][keydir].get('epoch-secret')
        if secret is None:
            raise Fail(f'{keydir}: no epoch-secret in the policy')
        print(f'# {keydir}: epoch-secret {secret.type}, '
              f'{secret.min_length} to {secret.max_length} bytes')
        expect_eq(f'{keydir}: epoch-secret length', (32, 32),
                  (secret.min_length, secret.max_length))


TESTS = [spec_matches_kernel, epoch_format_discoverable, peer_new,
         peer_dumped, key_read_back, error_has_extack, expiry_notified]


ktap_run(TESTS, Tunnel, NS)
