#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Makefile's per-module targets as a board owner uses them (make KDIR=<tree> epf|host|loop,
# plain make = the two drivers): each builds exactly its modules, with the tree's own flags
# (no -Werror, no W=1), so a warning a board's compiler finds stays a warning there. Checked in
# a copy of the sources against the test kernel tree, plus one planted warning that must not
# fail the board build and must fail the project's own (FL_WERROR=y) build.
# The builds are independent and each keeps about one CPU busy (kbuild's serial link and
# modpost steps; 84 s elapsed for 85 CPU-s one after another), so they run at once, each in
# its own copy (build/targets/N), and their verdicts are printed in order afterwards.
#
# Usage: check-targets.sh KDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: check-targets.sh KDIR}
base=$top/build/targets
nv=$top/build/targets-nvoot

# fresh N: a clean copy of the sources in build/targets/N ($work), its log $work.log
fresh() {
	work=$base/$1
	mkdir -p "$work"
	rsync -a --exclude=build --exclude=.git --exclude='*.o' --exclude='*.ko' \
		--exclude='.*.cmd' "$top/" "$work/"
}

kos() { (cd "$work" && find . -name '*.ko' | sed 's|.*/||' | sort | tr '\n' ' '); }

# Every object compiled without a bare -Werror and without W=1 (which turns the tree's
# -Wno-unused-const-variable into a warning)
flags_are_the_trees() {
	local cmd
	for cmd in $(grep -l -- ' -Wall ' $(find "$work/drivers" -name '.*.o.cmd')); do
		grep -qE -- '-Werror( |$)' "$cmd" && return 1
		grep -q -- '-Wno-unused-const-variable' "$cmd" || return 1
	done
	return 0
}

# expect N TARGET "KO LIST": make KDIR=... TARGET in copy N builds exactly those modules,
# without -Werror; returns non-zero on a failure it printed
expect() {
	local target=$2 want=$3 got
	fresh "$1"
	[ -z "${PLANT:-}" ] ||
		echo 'static int fl_planted_unused;' >>"$work/drivers/framelink/host/main.c"
	if ! make -s -j"$(nproc)" -C "$work" KDIR="$kdir" KBUILD_MODPOST_WARN=1 $target >"$work.log" 2>&1; then
		echo "FAIL: make KDIR=... $target did not build:"; tail -20 "$work.log"
		return 1
	fi
	got=$(kos)
	if [ "$got" != "$want" ]; then
		echo "FAIL: make KDIR=... $target built '$got', want '$want'"
		return 1
	elif ! flags_are_the_trees; then
		echo "FAIL: make KDIR=... $target compiled with -Werror or W=1 flags"
		return 1
	fi
	echo "ok: make KDIR=... ${target:-(default)} -> $got(no -Werror, no W=1)"
}

# The planted warning: the board build goes on; the project's build (FL_WERROR=y) stops.
planted() {
	PLANT=1 expect 3 host "framelink-host.ko " || return 1
	if grep -q 'fl_planted_unused' "$work.log"; then
		echo "ok: a warning stays a warning on a board's tree"
	else
		echo "FAIL: the board build did not report the planted warning"
		return 1
	fi
	if make -s -j"$(nproc)" -C "$kdir" M="$work" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		W=1 FL_WERROR=y FL_BUILD=host KBUILD_MODPOST_WARN=1 modules >"$work.log" 2>&1; then
		echo "FAIL: the planted warning did not fail the FL_WERROR=y build"
		return 1
	fi
	echo "ok: FL_WERROR=y (make check) turns the planted warning into an error"
}

# NVIDIA_OOT=<nvidia-oot tree>: the eDMA library backend compiles against that tree's header
# (a stand-in tree here, holding the project's declaration under NVIDIA's path).
nvoot_header() {
	fresh 4
	if make -s -j"$(nproc)" -C "$work" KDIR="$kdir" KBUILD_MODPOST_WARN=1 NVIDIA_OOT="$nv" epf \
		>"$work.log" 2>&1 &&
		grep -q "$nv/include/linux/tegra-pcie-edma.h" \
			"$work/drivers/framelink/epf/.xfer-nvedma.o.cmd"; then
		echo "ok: make NVIDIA_OOT=<tree> epf compiles the eDMA backend with that tree's header"
	else
		echo "FAIL: make NVIDIA_OOT=<tree> epf did not use the tree's header"; tail -20 "$work.log"
		return 1
	fi
}

# A tree without the header stops the build with a message.
nvoot_missing() {
	fresh 5
	if make -s -j"$(nproc)" -C "$work" KDIR="$kdir" NVIDIA_OOT="$nv/missing" epf >"$work.log" 2>&1; then
		echo "FAIL: make NVIDIA_OOT=<tree without the header> epf built"
		return 1
	elif grep -q 'no include/linux/tegra-pcie-edma.h there' "$work.log"; then
		echo "ok: NVIDIA_OOT without the header stops the build with a message"
	else
		echo "FAIL: NVIDIA_OOT without the header failed without the message"; tail -5 "$work.log"
		return 1
	fi
}

rm -rf "$base" "$nv"
mkdir -p "$base" "$nv/include/linux"
cp "$top/include/framelink/tegra-pcie-edma.h" "$nv/include/linux/tegra-pcie-edma.h"
jobs_=(
	"expect 1 '' 'framelink-epf.ko framelink-host.ko '"
	"expect 2 loop 'pci-epc-loop.ko '"
	planted
	nvoot_header
	nvoot_missing
)
pids=()
for i in "${!jobs_[@]}"; do
	(eval "${jobs_[$i]}") >"$base/verdict.$i" 2>&1 &
	pids+=($!)
done
fail=0
for i in "${!jobs_[@]}"; do
	wait "${pids[$i]}" || fail=1
	cat "$base/verdict.$i"
done
rm -rf "$base" "$nv"
exit $fail
