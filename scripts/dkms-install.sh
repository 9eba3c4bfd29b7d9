#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Register one framelink driver with DKMS from this checkout, build it and (by default) install
# it, so the board rebuilds it for every new kernel.
#
# Usage: dkms-install.sh epf|host [-k KERNELVERSION] [--build-only]
#                        [--kernelsourcedir DIR] [--trees DIR]
#   -k                 kernel version (default: uname -r)
#   --build-only       dkms add + build, no install (make check uses this)
#   --kernelsourcedir  the kernel tree to build against (default /lib/modules/<k>/build)
#   --trees DIR        use DIR/src and DIR/dkms instead of /usr/src and /var/lib/dkms
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mod=${1:?usage: dkms-install.sh epf|host [-k VERSION] [--build-only] [--kernelsourcedir DIR] [--trees DIR]}
shift
case $mod in epf|host) ;; *) echo "dkms-install.sh: epf or host, not '$mod'" >&2; exit 1 ;; esac
kver=$(uname -r) install=1 ksrc='' trees=''
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=$2; shift ;;
	--build-only) install=0 ;;
	--kernelsourcedir) ksrc=$2; shift ;;
	--trees) trees=$2; shift ;;
	*) echo "dkms-install.sh: unknown option $1" >&2; exit 1 ;;
	esac
	shift
done

abi() { sed -n "s/^#define FL_ABI_$1[[:space:]]*\([0-9]*\).*/\1/p" "$top/include/uapi/linux/framelink.h"; }
ver=$(abi MAJOR).$(abi MINOR)
name=framelink-$mod
src=${trees:+$trees/src}
src=${src:-/usr/src}
opts=(-m "$name" -v "$ver" -k "$kver")
[ -z "$ksrc" ] || opts+=(--kernelsourcedir "$ksrc")
[ -z "$trees" ] || opts+=(--dkmstree "$trees/dkms" --sourcetree "$trees/src")
[ -z "$trees" ] || mkdir -p "$trees/dkms" "$trees/src"

# The sources DKMS keeps: the drivers, headers and build files, not the lab or the tests
dst=$src/$name-$ver
rm -rf "$dst"
mkdir -p "$dst"
(cd "$top" && tar -cf - Makefile Kbuild include scripts/features.kbuild drivers/framelink) |
	tar -xf - -C "$dst"
sed "s/@VERSION@/$ver/" "$top/dkms/$name.conf" >"$dst/dkms.conf"

# a second run replaces the first registration
if [ -n "$(dkms status "${opts[@]}" 2>/dev/null)" ]; then
	dkms remove "${opts[@]}" >/dev/null 2>&1 || true
fi
dkms add "${opts[@]}"
dkms build "${opts[@]}"
[ $install -eq 0 ] || dkms install "${opts[@]}"
