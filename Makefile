# SPDX-License-Identifier: GPL-2.0
#
# framelink: `make` builds the two drivers, `make check` runs every test, `make demo` the demo.
# Per module: `make epf` (framelink-epf.ko, the Orin), `make host` (framelink-host.ko, the
# J784S4), `make loop` (pci-epc-loop.ko, the lab's link); `make modules` builds everything.
# For a board: make KDIR=/lib/modules/$(uname -r)/build epf      (on the board)
#          or: make KDIR=<board tree> host                       (cross, from x86: ARCH=arm64
#              and CROSS_COMPILE=aarch64-linux-gnu- are the defaults there; override them)
#              make KDIR=<board tree> modules_install
# On JetPack, NVIDIA_OOT=<nvidia-oot tree> compiles the eDMA library backend against NVIDIA's
# include/linux/tegra-pcie-edma.h (else the project's declaration of that interface).
# A board's tree is built with its own flags: no W=1, warnings stay warnings. Without KDIR,
# the project's own arm64 test kernel is built (cached) and used, with W=1 and -Werror.

ifneq ($(shell uname -m),aarch64)
ARCH ?= arm64
CROSS_COMPILE ?= aarch64-linux-gnu-
endif
FL_CROSS = $(if $(ARCH),ARCH=$(ARCH)) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE))

ifeq ($(KDIR),)
fl_build = scripts/build-modules.sh 6.12 "$$(scripts/kernel.sh 6.12 | tail -n1)" FL_BUILD="$(1)"
else
fl_build = $(MAKE) -C $(KDIR) M=$(CURDIR) $(FL_CROSS) FL_BUILD="$(1)" modules
endif

.PHONY: all drivers epf host loop modules modules_install clean deps kernel check demo bench soak figures \
	coverage vm-test runner-selftest

all: drivers

drivers:
	$(call fl_build,epf host)

epf host loop:
	$(call fl_build,$@)

modules:
	$(call fl_build,epf host loop tests)

modules_install:
ifeq ($(KDIR),)
	@echo "modules_install needs KDIR=<the board's kernel tree>"; exit 1
else
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(FL_CROSS) modules_install
endif

deps:
	scripts/install-deps.sh

kernel: deps
	scripts/kernel.sh 6.12

check:
	scripts/check.sh

demo:
	scripts/demo.sh

# Throughput and latency on the lab's link model: table, CSV and plots in build/bench/.
bench:
	scripts/bench.sh

# Issue 12's reliability figures, long form (HOURS=N optional).
soak:
	scripts/soak.sh

# The same figures, issue 12's short form, alone (make check runs them too: tests/figures/)
figures:
	FRAMES=100000 QRESET=50 DMA=100 LINK=50 RELOAD=10 BOUND=2400 scripts/soak.sh

# Line and branch coverage of the drivers under the VM suite (issue 12): gcov-built modules in
# build/6.12-gcov, the table printed, HTML and stamp in build/coverage/. As long as the VM
# stage of check, so not part of it; check shows the figure while the sources are unchanged.
coverage:
	scripts/coverage.sh

# Only the VM run (modules and userspace as last built).
vm-test:
	scripts/vm-run.sh

# The runner must fail a run with a planted splat; not part of `make check`.
runner-selftest: deps
	tests/runner-selftest/run.sh

clean:
	rm -rf build
	find . -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' -o \
		-name Module.symvers -o -name modules.order | grep -v '^./.git/' | xargs rm -f
