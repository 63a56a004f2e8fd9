# SPDX-License-Identifier: GPL-2.0
#
# Top-level Makefile of the ovpn repository, a kernel-tree overlay.  The
# driver itself builds with kbuild (drivers/net/ovpn/Makefile); these
# targets wrap the lab (tools/testing/ovpn-lab), which builds and tests it
# against Debian's 7.3 kernel inside a VM.  Everything runs as root.

LAB := ./lab

.PHONY: all module check demo conformance conformance-dist ynl-gen root clean

all: module

# ovpn.ko for the lab's generic kernel, in .build/<kernel release>/.
module:
	$(LAB) build

# Every test; ends with "N passed, N failed".
check:
	$(LAB) check

# The main job: boot the VM, bring up ovpn, print what was measured.
demo:
	$(LAB) demo

# Upstream's own selftests (from the lab's linux-source) against our module,
# and against the distribution's, to prove the runner.
conformance:
	$(LAB) conformance -m ours

conformance-dist:
	$(LAB) conformance -m dist

# Regenerate include/uapi/linux/ovpn.h and drivers/net/ovpn/netlink-gen.[ch]
# from Documentation/netlink/specs/ovpn.yaml with the kernel's YNL generator:
#   ynl_gen_c.py --spec ovpn.yaml --mode uapi --header
#   ynl_gen_c.py --spec ovpn.yaml --mode kernel --header
#   ynl_gen_c.py --spec ovpn.yaml --mode kernel --source
ynl-gen:
	$(LAB) ynl-gen

root:
	$(LAB) root

clean:
	rm -rf .build
