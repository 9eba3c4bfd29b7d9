#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A bootable kernel with NVIDIA's endpoint-core event delivery (issue 26): one of Debian's
# trees patched by the project's own patches/nv/FLAVOUR.patch, which reproduces what calls
# what, from which context and through which mechanism on that JetPack kernel (each patch
# begins with the facts and their sources; Documentation/kernel-apis.rst).
#
#   jp6  JetPack 6 (NVIDIA 5.15): Debian's 6.12 test kernel + jp6.patch
#   jp7  JetPack 7 (NVIDIA 6.8):  Debian's 6.12 test kernel + jp7.patch
#
# The base tree's build is copied (objects included, never hard links: make rewrites objects
# in place) and rebuilt incrementally: only what includes the patched headers recompiles.
# Both take the 6.12 test kernel's configuration (camera, GPU importer), so every VM test
# can run on them. Cached outside the
# clone, keyed by the patch, this script and the base tree; flock-protected. The release gets
# "-FLAVOUR" appended (a localversion file), so a test sees which kernel it runs on.
#
# Usage: nv-kernel.sh jp6|jp7
# Progress goes to stderr; the last line on stdout is the tree (KDIR, Image in arch/arm64/boot).
set -euo pipefail

flavour=${1:?usage: nv-kernel.sh jp6|jp7}
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${FRAMELINK_CACHE:-/var/cache/framelink}
patchfile=$top/patches/nv/$flavour.patch
log() { echo "nv-kernel[$flavour]: $*" >&2; }

case "$flavour" in
jp6 | jp7) base=$("$top/scripts/kernel.sh" 6.12 | tail -n1) ;;
*) echo "nv-kernel.sh: jp6 or jp7" >&2; exit 2 ;;
esac
[ -f "$patchfile" ] || { echo "nv-kernel: no $patchfile" >&2; exit 2; }

key=$( { cat "$patchfile" "$0"; echo "$base"; } | sha256sum | cut -c1-12)
tree=$cache/nv-$flavour-$key
stamp=$tree/.framelink-nv-done

mkdir -p "$cache"
exec 9>"$cache/.lock-nv-$flavour"
flock 9

if [ -f "$stamp" ]; then
	log "reusing $tree"
	echo "$tree"
	exit 0
fi
for old in "$cache"/nv-"$flavour"-*; do
	[ -d "$old" ] && [ "$old" != "$tree" ] && rm -rf "$old"
done

log "copying $base"
rm -rf "$tree" "$tree.tmp"
cp -a --reflink=auto "$base" "$tree.tmp"
rm -f "$tree.tmp"/.framelink-*-done "$tree.tmp"/.lock-*
patch -d "$tree.tmp" -p1 -F0 --no-backup-if-mismatch -s <"$patchfile"
echo "-$flavour" >"$tree.tmp/localversion-nv"
mv "$tree.tmp" "$tree"
log "building Image and modules in $tree"
make -C "$tree" -s -j"$(nproc)" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- Image modules >&2
touch "$stamp"
log "done: $(make -C "$tree" -s ARCH=arm64 kernelrelease 2>/dev/null)"
echo "$tree"
