# SPDX-License-Identifier: GPL-2.0
#
# framelink: `make` builds the modules, `make check` runs every test, `make demo` the demo.
# For a board: make KDIR=/lib/modules/$(uname -r)/build
#          or: make KDIR=<cross tree> ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
# Without KDIR, the project's own arm64 test kernel is built (cached) and used.

ARCH ?= arm64
CROSS_COMPILE ?= aarch64-linux-gnu-

.PHONY: all modules clean deps kernel check demo vm-test runner-selftest

all: modules

modules:
ifeq ($(KDIR),)
	scripts/build-modules.sh 6.12 "$$(scripts/kernel.sh 6.12 | tail -n1)"
else
	$(MAKE) -C $(KDIR) M=$(CURDIR) ARCH=$(ARCH) CROSS_COMPILE=$(CROSS_COMPILE) W=1 modules
endif

deps:
	scripts/install-deps.sh

kernel: deps
	scripts/kernel.sh 6.12

check:
	scripts/check.sh

demo:
	scripts/demo.sh

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
