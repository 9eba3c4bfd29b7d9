#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch --strict --no-tree on every C file and header of the project, then the uapi
# header as the kernel's usr/include header test compiles it (C90, included twice).
# Then that the lab (pci-epc-loop) does not use framelink's ABI.
# Usage: static-checks.sh KDIR   (the kernel tree whose checkpatch.pl is used)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: static-checks.sh KDIR}
cd "$top"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '^build/' | sort -u)
if [ ${#files[@]} -eq 0 ]; then
	echo "checkpatch: no C files"
	exit 0
fi
# In batches over every core: checkpatch is one perl process per call, and check waits on it.
out=$(printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 16 \
	perl "$kdir/scripts/checkpatch.pl" --strict --no-tree --terse --show-types -f |
	grep -E 'ERROR|WARNING|CHECK' || true)
if [ -n "$out" ]; then
	echo "$out"
	echo "checkpatch: $(echo "$out" | wc -l) problems in ${#files[@]} files"
	exit 1
fi
echo "checkpatch --strict: ${#files[@]} files clean"

# usr/include's test: -std=c90 -Wall, -fsyntax-only, the header included twice; here
# also -pedantic-errors -Werror (no C11 static_assert, no // comments, no flexible arrays)
for h in include/uapi/linux/*.h; do
	gcc -std=c90 -Wall -Werror -pedantic-errors -fsyntax-only -I include/uapi -x c /dev/null \
		-include "$h" -include "$h" || { echo "uapi: $h is not C90"; exit 1; }
done
echo "uapi headers: C90 clean"

# The lab stays generic (issue 27 item 5): pci-epc-loop knows no endpoint function's ABI.
# What corrupts framelink's completions lives in a test module (tests/modules/fl-hostile).
if grep -n 'uapi/linux/framelink\.h\|framelink/abi-check\.h\|fl_cqe\|fl_bar_' drivers/pci-epc-loop/*.[ch]; then
	echo "pci-epc-loop: uses framelink's ABI (above); put it in a test module"
	exit 1
fi
echo "pci-epc-loop: no framelink ABI"
