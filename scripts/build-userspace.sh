#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Cross-build the programs the VM runs into build/arm64/bin (static, aarch64): the kernel's own
# pcitest from the 6.12 test kernel's source, the framelink kselftests and the tests' device
# helper framelink-testtool (tools/testing/selftests/framelink), the user's framelink CLI and
# fl-notify.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-userspace.sh KDIR}
out=$top/build/arm64
cc=aarch64-linux-gnu-gcc
mkdir -p "$out/bin" "$out/include/linux"
# pcitest.c must see the pcitest.h of its own kernel, not the cross sysroot's older copy.
cp "$kdir/include/uapi/linux/pcitest.h" "$out/include/linux/"
$cc -static -O2 -Wall -I"$out/include" -o "$out/bin/pcitest" "$kdir/tools/pci/pcitest.c"
make -s -C "$top/tools/testing/selftests/framelink" KSFT_DIR="$kdir/tools/testing/selftests" \
	CC=$cc LDFLAGS=-static O="$out/bin"
if [ -f "$top/tools/framelink/Makefile" ]; then
	make -s -C "$top/tools/framelink" CC=$cc LDFLAGS=-static O="$out/bin"
fi
make -s -C "$top/tools/framelink-notify" CC=$cc LDFLAGS=-static O="$out/bin"
echo "userspace: built $(cd "$out/bin" && echo *)"
