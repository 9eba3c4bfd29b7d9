#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An API variant tree: Debian's prepared 6.12 tree with the endpoint API of a kernel
# generation Debian does not carry, made by the project's own patch patches/api/GEN.patch
# (each patch states the facts it reproduces and their sources). The copy is made of hard
# links (`cp -al`) and `patch` replaces only the headers it touches with new files, so the
# cached 6.12 tree is never modified and its objects are reused. Cached outside the clone,
# keyed by the patch, this script and the base tree; flock-protected.
#
# Usage: api-variant.sh GEN        (GEN: 5.15nv, 6.6, 6.8, 6.10; see patches/api/)
#        api-variant.sh --list     (the generations)
# Progress goes to stderr; the last line on stdout is the tree to pass as KDIR.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${FRAMELINK_CACHE:-/var/cache/framelink}

if [ "${1:-}" = --list ]; then
	for p in "$top"/patches/api/*.patch; do basename "$p" .patch; done | sort -V
	exit 0
fi
gen=${1:?usage: api-variant.sh GEN|--list}
patchfile=$top/patches/api/$gen.patch
[ -f "$patchfile" ] || { echo "api-variant: no $patchfile" >&2; exit 2; }
log() { echo "api-variant[$gen]: $*" >&2; }

base=$("$top/scripts/kernel.sh" 6.12 | tail -n1)
[ -d "$base" ] || { echo "api-variant: no 6.12 tree" >&2; exit 1; }

key=$( { cat "$patchfile" "$0"; echo "$base"; } | sha256sum | cut -c1-12)
tree=$cache/api-$gen-$key
stamp=$tree/.framelink-api-done

mkdir -p "$cache"
exec 9>"$cache/.lock-api-$gen"
flock 9

if [ -f "$stamp" ]; then
	log "reusing $tree"
	echo "$tree"
	exit 0
fi

# Older variants of this generation (other keys) are stale: remove them.
for old in "$cache"/api-"$gen"-*; do
	[ -d "$old" ] && [ "$old" != "$tree" ] && rm -rf "$old"
done
log "hard-linking $base"
rm -rf "$tree" "$tree.tmp"
cp -al "$base" "$tree.tmp"
rm -f "$tree.tmp"/.framelink-*-done
# --backup-if-mismatch off, no .orig files: a failing hunk is an error, not a fuzzed guess.
patch -d "$tree.tmp" -p1 -F0 --no-backup-if-mismatch -s <"$patchfile"
# The patched headers must be new files, never the cached tree's inodes.
for f in $(sed -n 's|^+++ b/||p' "$patchfile"); do
	if [ "$(stat -c %i "$tree.tmp/$f")" = "$(stat -c %i "$base/$f")" ]; then
		echo "api-variant: $f still shares the cached tree's inode" >&2
		exit 1
	fi
done
mv "$tree.tmp" "$tree"
touch "$stamp"
log "made $tree"
echo "$tree"
