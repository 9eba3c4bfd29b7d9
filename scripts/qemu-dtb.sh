#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test machine's device tree: QEMU virt's own DTB (dumped with the machine options the VM
# runner uses) with overlays applied by fdtoverlay, then checked by check-reserved-memory.py.
#
# Usage: qemu-dtb.sh OUT.dtb OVERLAY.dtso...   (exit 1 when the reserved memory is wrong)
# Also the one place that says which machine the VM is: vm-run.sh sources it for $QEMU_MACHINE.
set -euo pipefail
QEMU_MACHINE=(-M virt,gic-version=3,its=on -cpu cortex-a76 -smp 2 -m 2048
	-accel tcg,thread=multi -nic none)
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: qemu-dtb.sh OUT.dtb OVERLAY.dtso...}
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
qemu-system-aarch64 "${QEMU_MACHINE[@]}" -machine dumpdtb="$work/base.dtb" -display none >/dev/null
overlays=()
for dtso in "$@"; do
	dtc -q -@ -I dts -O dtb -o "$work/$(basename "$dtso").dtbo" "$dtso"
	overlays+=("$work/$(basename "$dtso").dtbo")
done
fdtoverlay -i "$work/base.dtb" -o "$out" "${overlays[@]}"
"$top/scripts/check-reserved-memory.py" "$out"
