#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build (6.12: Image + modules) or prepare (6.1, newest: modules_prepare) a kernel
# tree for framelink, cached outside the clone and keyed by source version and config hash.
#
# Usage: kernel.sh 6.12|6.1|newest
# Progress goes to stderr; the last line on stdout is the tree to pass as KDIR.
set -euo pipefail

which=${1:?usage: kernel.sh 6.12|6.1|newest}
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${FRAMELINK_CACHE:-/var/cache/framelink}
# Every tree takes framelink.config; the VM suite's 6.12 kernel adds vm-6.12.config (camera,
# GPU importer, gcov), which the other trees would only pay build time for.
frags=("$top/scripts/kconfig/framelink.config")
export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
jobs=$(nproc)
log() { echo "kernel[$which]: $*" >&2; }

mkdir -p "$cache"
exec 9>"$cache/.lock-$which"
flock 9

case "$which" in
6.12 | 6.1)
	pkg=linux-source-$which
	ver=$(dpkg-query -W -f='${Version}' "$pkg")
	tarball=/usr/src/$pkg.tar.xz
	mode=build
	[ "$which" = 6.1 ] && mode=prepare
	[ "$which" = 6.12 ] && frags+=("$top/scripts/kconfig/vm-6.12.config")
	;;
newest)
	# One download per day at most; old versions leave the mirror, so always take the newest.
	src=$cache/newest-src
	if [ ! -f "$src/version" ] || [ -n "$(find "$src/version" -mmin +1440)" ]; then
		"$top/scripts/fetch-newest-source.sh" "$src" >/dev/null
	fi
	ver=$(cat "$src/version")
	pkg=${ver%%=*}
	ver=${ver#*=}
	tarball=$src/linux-source.tar.xz
	mode=prepare
	;;
*)
	echo "kernel.sh: unknown tree '$which'" >&2
	exit 2
	;;
esac

# The key covers this tree's fragments only: a 6.12-only option does not rebuild the others.
key=$(cat "${frags[@]}" "$0" | sha256sum | cut -c1-12)
tree=$cache/$pkg-$ver-$key
stamp=$tree/.framelink-$mode-done

if [ -f "$stamp" ]; then
	log "reusing cached $pkg $ver ($mode) at $tree"
	echo "$tree"
	exit 0
fi

log "using $pkg $ver; $mode into $tree"
rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
mv "$tree.tmp" "$tree"

make -C "$tree" -s tinyconfig >&2
"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "${frags[@]}" >/dev/null
make -C "$tree" -s olddefconfig >&2

# A silently dropped option is an error: every line of the fragment must hold in .config.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n) want="# ${line%=n} is not set"
		grep -qx "$want" "$tree/.config" || ! grep -q "^${line%=n}=" "$tree/.config" || {
			log "option dropped: $line"; bad=1; } ;;
	CONFIG_*) grep -qx "$line" "$tree/.config" || { log "option dropped: $line"; bad=1; } ;;
	esac
done < <(cat "${frags[@]}")
[ $bad -eq 0 ] || exit 1

if [ "$mode" = build ]; then
	make -C "$tree" -s -j"$jobs" Image modules >&2
else
	make -C "$tree" -s -j"$jobs" modules_prepare >&2
fi
touch "$stamp"
log "done"
echo "$tree"
