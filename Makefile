# SPDX-License-Identifier: GPL-2.0
#
# Top-level Makefile of the ovpn repository, a kernel-tree overlay.
#
# For operators: build drivers/net/ovpn against an installed kernel's
# headers and install it where it takes precedence over the kernel's own
# ovpn module (/lib/modules/<release>/updates):
#   make                       the running kernel
#   make KVER=<release>        another installed kernel
#   make install               as root; runs depmod
# dkms.conf uses the same "modules" target.  As a Debian package for DKMS
# (needs debhelper and dh-dkms: apt install debhelper dh-dkms):
#   make deb                   .build/deb/ovpn-dkms_<version>_all.deb
#   apt install ./.build/deb/ovpn-dkms_<version>_all.deb
# DKMS then builds and installs the module for every kernel with its
# headers installed, now and as kernels come; "apt remove ovpn-dkms"
# takes it out again, leaving the kernel's own ovpn module.
#
# For developers, the lab (ovpn-lab, run as root) builds and
# tests the driver against Debian's 7.3 kernel inside a VM; see ./lab.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
OVPN_DIR := $(CURDIR)/drivers/net/ovpn
LAB := ./lab

.PHONY: all modules install uninstall clean sources deb
.PHONY: module check demo conformance conformance-dist ynl-gen root
.PHONY: upstream-check series dkms kunit

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(OVPN_DIR) CONFIG_OVPN=m modules

install: modules
	$(MAKE) -C $(KDIR) M=$(OVPN_DIR) INSTALL_MOD_DIR=updates \
		modules_install
	depmod -a $(KVER)

uninstall:
	rm -f /lib/modules/$(KVER)/updates/ovpn.ko*
	depmod -a $(KVER)

clean:
	$(MAKE) -C $(KDIR) M=$(OVPN_DIR) clean

# The package's version is dkms.conf's; its source tree is what an
# operator's copy needs (as "make install"), and packaging/debian.
PKG_VERSION = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
PKG_SRC = .build/deb/ovpn-dkms-$(PKG_VERSION)

# The files an operator's copy of the sources needs, for make install,
# DKMS and the package: what a build leaves in drivers/net/ovpn (objects,
# ovpn.mod.c) is not among them.  "make sources" lists them (./lab dkms
# copies them so).
SOURCES = $(shell find Makefile dkms.conf include/uapi/linux/ovpn.h \
	drivers/net/ovpn -type f \( -name Makefile -o -name Kconfig \
	-o -name dkms.conf -o -name '*.[ch]' \) ! -name '*.mod.c')

sources:
	@printf '%s\n' $(SOURCES)

deb:
	rm -rf .build/deb
	mkdir -p $(PKG_SRC)
	cp --parents -t $(PKG_SRC) $(SOURCES)
	cp -r packaging/debian $(PKG_SRC)/debian
	printf '%s\n\n  * %s\n\n -- %s  %s\n' \
		'ovpn-dkms ($(PKG_VERSION)) unstable; urgency=medium' \
		'Built from the ovpn repository by "make deb".' \
		'Firstname Lastname <you@example.org>' "$$(date -R)" \
		>$(PKG_SRC)/debian/changelog
	cd $(PKG_SRC) && dpkg-buildpackage -b -us -uc
	@ls .build/deb/*.deb

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

# netdev's mechanical checks with the driver built in-tree; "0 findings".
upstream-check:
	$(LAB) upstream-check

# The driver's KUnit tests on User-Mode Linux.
kunit:
	$(LAB) kunit

# The patch series against the lab's linux-source, built patch by patch.
series:
	$(LAB) series

# "make install", "make deb" and its package tested in the lab root, then
# the selftests on the module DKMS installed.
dkms:
	$(LAB) dkms

root:
	$(LAB) root
