#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the VM runner: a run whose kernel log carries a planted splat (WARN_ON, a KASAN
# out-of-bounds read, and the detectors of issue 27 item 4: UBSAN, KFENCE, DMA-API debug,
# dropped printk messages, an RCU stall, kmemleak switched off) must make scripts/vm-run.sh
# exit non-zero, although its TAP test passes. Not part of a normal `make check`; run it with
# `make runner-selftest`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$("$top/scripts/kernel.sh" 6.12 | tail -n1)
out=$top/build/runner-selftest
rm -rf "$out"
mkdir -p "$out"
cp "$top"/tests/runner-selftest/{Kbuild,splat.c} "$out/"
make -s -C "$kdir" M="$out" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- W=1 FL_WERROR=y modules

fail=0
cases=(10-warn:'WARNING:' 20-kasan:'BUG: KASAN' 30-ubsan:'UBSAN: shift-out-of-bounds'
	31-kfence:'BUG: KFENCE' 32-dma:'DMA-API: .*different size'
	33-printk:'printk messages dropped' 34-rcu:'detected stall'
	35-kmemleak-off:'leak detector disabled')
for case in "${cases[@]}"; do
	script=${case%%:*}.sh
	want=${case#*:}
	if "$top/scripts/vm-run.sh" --tests "$top/tests/runner-selftest" --ko "$out/splat.ko" \
		--run "$script" --log "$out/$script.log" --timeout 300 >"$out/$script.out" 2>&1; then
		echo "not ok - runner passed a run with a planted splat ($script)"
		fail=1
	elif ! grep -q "SPLAT.*$want" "$out/$script.out"; then
		echo "not ok - runner failed $script, but not for the planted splat:"
		tail -5 "$out/$script.out"
		fail=1
	else
		echo "ok - runner failed the run with a planted splat ($script: $want)"
	fi
done
[ $fail -eq 0 ] && echo "${#cases[@]} passed, 0 failed" || echo "runner self-test FAILED"
exit $fail
