#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what a fresh Debian 12 machine (root) lacks to build and test framelink.
# Idempotent: a second run only checks and returns. `install-deps.sh bench` adds what
# `make bench` renders its plots with (python3-matplotlib); `install-deps.sh coverage` what
# `make coverage` reads the gcov counts and renders its HTML report with (lcov).
set -euo pipefail

pkgs=(
	make gcc bc bison flex libelf-dev libssl-dev cpio xz-utils zstd kmod rsync
	python3 python3-docutils perl git file
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	qemu-system-arm device-tree-compiler sparse shellcheck dkms
	linux-source-6.12 linux-source-6.1
)
[ "${1:-}" != bench ] || pkgs+=(python3-matplotlib)
[ "${1:-}" != coverage ] || pkgs+=(lcov)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# The VM's busybox is Debian's busybox-static:arm64 (scripts/busybox-arm64.sh downloads it).
foreign=$(dpkg --print-foreign-architectures)

if [ ${#missing[@]} -eq 0 ] && grep -qx arm64 <<<"$foreign"; then
	echo "deps: all present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
grep -qx arm64 <<<"$foreign" || dpkg --add-architecture arm64
apt-get update -qq
[ ${#missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
