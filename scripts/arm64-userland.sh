#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of an arm64 user-space tree for the VM's initramfs: v4l2-compliance and
# v4l2-ctl (v4l-utils), gst-launch-1.0 and gst-inspect-1.0 with the GStreamer plugins the
# V4L2 tests use, and exactly the shared libraries they load (ELF NEEDED, followed), with
# the dynamic loader. Everything comes from Debian's arm64 packages (install-deps.sh enabled
# the architecture for apt): the packages and their Depends are downloaded and unpacked into
# the cache, never installed on the build machine, where they could not run. Tools nobody
# here wrote, for tests of framelink's V4L2 devices (issue 29); cached by this script's text.
# scripts/vm-run.sh copies the tree into the initramfs of every kernel with V4L2 (not 6.1);
# GStreamer there needs AF_UNIX (scripts/kconfig/vm-6.12.config says why).
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
# From Debian 13 (trixie), not the build machine's 12: v4l2-compliance checks the kernel's
# uAPI as its own release knew it, and 12's 1.22.1 predates the test kernel (6.12): it takes
# the create_bufs field 6.10 added (max_num_buffers) for a reserved word written non-zero,
# and NV12's 6.12 description ("Y/UV 4:2:0") for a mismatch. The tree is self-contained
# (its own libc and loader), so the build machine's release does not matter. A private apt
# state, as scripts/fetch-newest-source.sh has, leaves the machine's sources alone.
uri=$(awk '/^URIs:/ && $2 ~ /\/debian$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources \
	2>/dev/null || true)
[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' \
	/etc/apt/sources.list 2>/dev/null || true)
[ -n "$uri" ] || { echo "arm64-userland: no Debian archive entry in /etc/apt" >&2; exit 1; }
mkdir -p "$cache/apt/sources.d" "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
cat >"$cache/apt/sources.d/trixie.sources" <<SRC
Types: deb
URIs: $uri
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$cache/apt/sources.d"
	-o Dir::State::Lists="$cache/apt/lists" -o Dir::State::Status=/dev/null
	-o Dir::Cache="$cache/apt/cache" -o APT::Architectures::=arm64
	-o APT::Architecture=arm64 -o Acquire::Languages=none -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" -qq update >&2
# Depends only, recursively; arm64 packages (arch-all ones hold data the tests do not use)
mapfile -t debs < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends \
	--no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "${packages[@]}" |
	grep '^[a-z0-9]' | sed 's/:arm64$//' | sort -u)
echo "arm64-userland: ${#debs[@]} packages from trixie" >&2
(cd "$cache/debs" && apt-get "${apt_opts[@]}" -qq download "${debs[@]}" >&2)
for d in "$cache"/debs/*.deb; do
	dpkg-deb -x "$d" "$cache/x"
done

# The ELF closure: the files above, then every NEEDED library found under the library dirs
python3 - "$cache/x" "$out" "${files[@]}" <<'EOF'
import os, shutil, subprocess, sys
src, dst, start = sys.argv[1], sys.argv[2], sys.argv[3:]
# the loader's own search path (no ld.so.cache in the VM), /usr first: trixie's /lib is a
# link to it, and libgstreamer finds its plugins relative to where it was loaded from
libdirs = ['usr/lib/aarch64-linux-gnu', 'lib/aarch64-linux-gnu']

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
rm -rf "$cache/x" "$cache/debs" "$cache/apt"
file -b "$out/usr/bin/v4l2-compliance" | grep -q 'ARM aarch64' ||
	{ echo "arm64-userland: v4l2-compliance is not arm64" >&2; exit 1; }
touch "$cache/done"
echo "$out"
