#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the files derived from Documentation/netlink/specs/ovpn.yaml
# with the kernel's YNL generator (from the lab root's linux-source):
#   include/uapi/linux/ovpn.h            --mode uapi --header
#   drivers/net/ovpn/netlink-gen.h       --mode kernel --header
#   drivers/net/ovpn/netlink-gen.c       --mode kernel --source
# The spec is validated against the tree's genetlink schema on the way.

. "$(dirname "$0")/../host/common.sh"

root=$("$LAB_DIR/root/mkroot.sh")
lab_chroot "$root" timeout 300 /bin/bash -euc '
	ksrc=$(ls -d /usr/src/linux-source-* | sort -V | tail -n1)
	gen=$ksrc/tools/net/ynl/pyynl/ynl_gen_c.py
	# A scratch tree shaped like a kernel tree: the generator validates the
	# spec against the schema two levels up and names the spec relative to
	# the directory holding MAINTAINERS.
	s=/tmp/ynl
	mkdir -p $s/Documentation/netlink/specs
	cp "$ksrc"/Documentation/netlink/genetlink*.yaml $s/Documentation/netlink/
	cp /src/MAINTAINERS $s/
	cp /src/Documentation/netlink/specs/ovpn.yaml $s/Documentation/netlink/specs/
	run() {
		python3 "$gen" --spec $s/Documentation/netlink/specs/ovpn.yaml "$@"
	}
	run --mode uapi --header -o /src/include/uapi/linux/ovpn.h
	run --mode kernel --header -o /src/drivers/net/ovpn/netlink-gen.h
	run --mode kernel --source -o /src/drivers/net/ovpn/netlink-gen.c
'
