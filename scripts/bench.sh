#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: dependencies (with python3-matplotlib), the test kernel, the modules, then
# tests/bench/*.sh in the VM, and the report: build/bench/bench.csv (every run),
# build/bench/four.csv (four links at once),
# build/bench/table.txt (printed) and the plots build/bench/*.png (scripts/bench-report.py).
# Not part of `make check`: it takes several minutes and its numbers are measurements. Exits
# non-zero when a VM check failed, a target was missed or a negative control did not miss.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh bench
kdir=$(scripts/kernel.sh 6.12 | tail -n1)
scripts/build-modules.sh 6.12 "$kdir" >/dev/null
scripts/build-userspace.sh "$kdir"
out=build/bench
mkdir -p "$out"
rc=0
scripts/vm-run.sh --tests tests/bench --log "$out/console.log" >"$out/vm.out" 2>&1 || rc=$?
tail -n 3 "$out/vm.out"
# the run's output, once (the console shows it live and again between the TAP markers)
tr -d '\r' <"$out/console.log" |
	awk '/FRAMELINK TAP BEGIN/ { on = 1; next } /FRAMELINK TAP END/ { on = 0 } on' >"$out/tap.txt"
grep '^csv,' "$out/tap.txt" >"$out/bench.csv" || true
grep -E '^csv-(rate|ref|off|cap|idle|head|alloc|sweep),' "$out/tap.txt" >"$out/meta.csv" || true
# four links at once (tests/bench/10-four-links.sh)
grep -E '^csv-four' "$out/tap.txt" >"$out/four.csv" || true
# Debian's python3: python3-matplotlib is installed for it, whatever python3 is first in PATH
# a target missed or a control that did not miss fails make bench (bench-report.py)
/usr/bin/python3 scripts/bench-report.py "$out" >"$out/table.txt" || rc=1
cat "$out/table.txt"
exit $rc
