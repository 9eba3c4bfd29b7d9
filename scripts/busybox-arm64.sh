#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of a static arm64 busybox for the VM's initramfs. It is Debian's
# busybox-static:arm64, downloaded and unpacked into the cache (never installed on the build
# machine, where it could not run); install-deps.sh enabled the arm64 architecture for apt.
set -euo pipefail
cache=${FRAMELINK_CACHE:-/var/cache/framelink}/busybox-arm64
bin=$cache/root/bin/busybox
if [ ! -x "$bin" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	(cd "$cache" && apt-get -qq -o APT::Sandbox::User=root download busybox-static:arm64 >&2)
	dpkg-deb -x "$cache"/busybox-static_*_arm64.deb "$cache/root"
fi
file -b "$bin" | grep -q 'ARM aarch64' || { echo "busybox-arm64: $bin is not arm64" >&2; exit 1; }
echo "$bin"
