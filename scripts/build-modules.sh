#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build every module of the tree against one kernel, in a copy under build/NAME so builds for
# several kernels do not share objects. W=1, and warnings are errors (FL_WERROR=y): only for
# the project's own kernels; `make KDIR=<board tree>` never sets either.
#
# Usage: build-modules.sh NAME KDIR [make arguments, e.g. C=2, or FL_GCOV=1 into its own NAME]
# A tree that was only prepared (modules_prepare) has no Module.symvers: modpost then only warns
# about the kernel symbols it cannot see.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: build-modules.sh NAME KDIR [make args]}
kdir=${2:?usage: build-modules.sh NAME KDIR [make args]}
shift 2
out=$top/build/$name
mkdir -p "$out"
# Build products stay: without them make would rebuild everything; a gcov build's notes (.gcno,
# written with the objects) and counts (.gcda, scripts/coverage.sh) must live as long as theirs.
rsync -a --delete --exclude=build --exclude=.git --exclude='*.o' --exclude='*.ko' \
	--exclude='.*.cmd' --exclude='*.gcno' --exclude='*.gcda' "$top/" "$out/"
extra=()
[ -f "$kdir/Module.symvers" ] || extra+=(KBUILD_MODPOST_WARN=1)
make -j"$(nproc)" -C "$kdir" M="$out" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- W=1 FL_WERROR=y \
	"${extra[@]}" "$@" modules
