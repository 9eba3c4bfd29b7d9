#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the bootable Image (and the in-tree modules the VM loads) in the 6.1 tree that
# kernel.sh prepared, for the VM run on a kernel before 6.4: there the endpoint core reports
# link up and core init through an atomic notifier, framelink-epf's other event path.
# 6.1-gcov is that tree copied and rebuilt with scripts/kconfig/vm-6.1-gcov.config, for
# `make coverage` alone: check's 6.1 kernel, and kernel.sh's keys (its own text is in them),
# stay as they are. kbuild rebuilds only what the added options touch in the copy.
#
# Usage: kernel-image.sh 6.1|6.1-gcov
# Progress goes to stderr; the last line on stdout is the tree (KDIR, Image in arch/arm64/boot).
set -euo pipefail

which=${1:?usage: kernel-image.sh 6.1|6.1-gcov}
if [ "$which" != 6.1 ] && [ "$which" != 6.1-gcov ]; then
	echo "kernel-image.sh: only 6.1 and 6.1-gcov (kernel.sh builds 6.12 whole)" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
if [ "$which" = 6.1 ]; then
	tree=$("$top/scripts/kernel.sh" 6.1 | tail -n1)
else
	frag=$top/scripts/kconfig/vm-6.1-gcov.config
	base=$("$0" 6.1 | tail -n1)
	# keyed by the options, not the comments: a reworded comment must not rebuild the copy
	tree=$base-gcov-$(grep '^CONFIG_' "$frag" | sha256sum | cut -c1-12)
	exec 9>"$base/.lock-image"
	flock 9
	if [ ! -f "$tree/.framelink-image-done" ]; then
		echo "kernel-image[$which]: copying $base, adding ${frag#"$top"/}" >&2
		rm -rf "$tree" "$tree.tmp"
		cp -a "$base" "$tree.tmp"
		rm -f "$tree.tmp/.framelink-image-done" "$tree.tmp/.lock-image"
		"$tree.tmp/scripts/kconfig/merge_config.sh" -m -O "$tree.tmp" "$tree.tmp/.config" \
			"$frag" >/dev/null
		make -C "$tree.tmp" -s olddefconfig >&2
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*) grep -qx "$line" "$tree.tmp/.config" || {
				echo "kernel-image[$which]: option dropped: $line" >&2; exit 1; } ;;
			esac
		done <"$frag"
		mv "$tree.tmp" "$tree"
	fi
	exec 9>&-
fi

exec 9>"$tree/.lock-image"
flock 9
stamp=$tree/.framelink-image-done
if [ -f "$stamp" ]; then
	echo "kernel-image[$which]: reusing the Image in $tree" >&2
else
	echo "kernel-image[$which]: building Image and modules in $tree" >&2
	make -C "$tree" -s -j"$(nproc)" Image modules >&2
	touch "$stamp"
fi
echo "$tree"
