#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the bootable Image (and the in-tree modules the VM loads) in the 6.1 tree that
# kernel.sh prepared, for the VM run on a kernel before 6.4: there the endpoint core reports
# link up and core init through an atomic notifier, framelink-epf's other event path.
#
# Usage: kernel-image.sh 6.1
# Progress goes to stderr; the last line on stdout is the tree (KDIR, Image in arch/arm64/boot).
set -euo pipefail

which=${1:?usage: kernel-image.sh 6.1}
if [ "$which" != 6.1 ]; then
	echo "kernel-image.sh: only 6.1 (kernel.sh builds 6.12 whole)" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$("$top/scripts/kernel.sh" "$which" | tail -n1)
exec 9>"$tree/.lock-image"
flock 9
stamp=$tree/.framelink-image-done
if [ -f "$stamp" ]; then
	echo "kernel-image[$which]: reusing the Image in $tree" >&2
else
	echo "kernel-image[$which]: building Image and modules in $tree" >&2
	make -C "$tree" -s -j"$(nproc)" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- Image modules >&2
	touch "$stamp"
fi
echo "$tree"
