#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of an arm64 user-space tree for the VM's initramfs: v4l2-compliance and
# v4l2-ctl (v4l-utils), gst-launch-1.0 and gst-inspect-1.0 with the GStreamer plugins the
# V4L2 tests use, and exactly the shared libraries they load (ELF NEEDED, followed), with
# the dynamic loader. Everything comes from Debian's arm64 packages (install-deps.sh enabled
# the architecture for apt): the packages and their Depends are downloaded and unpacked into
# the cache, never installed on the build machine, where they could not run. Tools nobody
# here wrote, for tests of framelink's V4L2 devices (issue 29); cached by this script's text.
# Not wired into vm-run.sh or make check yet: copied into the initramfs by hand on 2026-12-07,
# v4l2-ctl and gst-inspect-1.0 ran in the 6.12 VM; v4l2-compliance 1.22.1 reported 24 failed
# of 113 on vivid-000 (not yet understood), and every gst-launch-1.0 pipeline stalled with
# GstPoll not created (the test kernel has no CONFIG_NET/CONFIG_UNIX: the first suspect;
# Documentation/research/issue29-v4l2.md).
set -euo pipefail
packages=(v4l-utils gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good)
# What the VM needs, relative to the unpacked packages: programs, then plugins
gstlib=usr/lib/aarch64-linux-gnu/gstreamer-1.0
files=(usr/bin/v4l2-compliance usr/bin/v4l2-ctl usr/bin/gst-launch-1.0 usr/bin/gst-inspect-1.0
	usr/lib/aarch64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
	$gstlib/libgstcoreelements.so $gstlib/libgstvideotestsrc.so $gstlib/libgstapp.so
	$gstlib/libgstvideoconvertscale.so $gstlib/libgstvideo4linux2.so
	# the dynamic loader, where every arm64 program names it (PT_INTERP)
	lib/ld-linux-aarch64.so.1)
key=$(sha256sum "$0" | cut -c1-12)
cache=${FRAMELINK_CACHE:-/var/cache/framelink}/arm64-userland-$key
out=$cache/root
if [ -f "$cache/done" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$cache"
mkdir -p "$cache/debs" "$cache/x" "$out"
# Depends only, recursively; arm64 packages (arch-all ones hold data the tests do not use)
mapfile -t debs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${packages[@]/%/:arm64}" | grep '^[a-z0-9]' |
	grep ':arm64$' | sort -u)
echo "arm64-userland: ${#debs[@]} arm64 packages" >&2
(cd "$cache/debs" && apt-get -qq -o APT::Sandbox::User=root download "${debs[@]}" >&2)
for d in "$cache"/debs/*.deb; do
	dpkg-deb -x "$d" "$cache/x"
done

# The ELF closure: the files above, then every NEEDED library found under the library dirs
python3 - "$cache/x" "$out" "${files[@]}" <<'EOF'
import os, shutil, subprocess, sys
src, dst, start = sys.argv[1], sys.argv[2], sys.argv[3:]
# the loader's own search path (no ld.so.cache in the VM)
libdirs = ['lib/aarch64-linux-gnu', 'usr/lib/aarch64-linux-gnu']

def needed(path):
    out = subprocess.run(['readelf', '-d', path], capture_output=True, text=True,
                         check=True).stdout
    return [l.split('[', 1)[1].split(']', 1)[0] for l in out.splitlines() if '(NEEDED)' in l]

todo, seen = list(start), set()
while todo:
    rel = todo.pop()
    if rel in seen:
        continue
    seen.add(rel)
    real = os.path.realpath(os.path.join(src, rel))
    if not os.path.isfile(real):
        sys.exit(f'arm64-userland: {rel} not in the packages')
    for so in needed(real):
        hit = [d + '/' + so for d in libdirs if os.path.lexists(os.path.join(src, d, so))]
        if not hit:
            sys.exit(f'arm64-userland: {so} (needed by {rel}) not in the packages')
        todo.append(hit[0])
# real files only, at the path looked up (the initramfs list has no links)
for rel in sorted(seen):
    os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
    shutil.copy(os.path.realpath(os.path.join(src, rel)), os.path.join(dst, rel))
print(f'arm64-userland: {len(seen)} files', file=sys.stderr)
EOF
rm -rf "$cache/x" "$cache/debs"
file -b "$out/usr/bin/v4l2-compliance" | grep -q 'ARM aarch64' ||
	{ echo "arm64-userland: v4l2-compliance is not arm64" >&2; exit 1; }
touch "$cache/done"
echo "$out"
