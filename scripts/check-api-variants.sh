#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build framelink-epf and framelink-host against the API variant tree of every kernel
# generation Debian does not carry (scripts/api-variant.sh, patches/api/), with W=1 and
# -Werror like the other `make check` builds. Fails when include/framelink/compat.h or
# scripts/features.kbuild does not handle a generation. Logs: build/api-variants/GEN.log.
#
# Usage: check-api-variants.sh [GEN...]     (default: every patches/api/*.patch)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p build/api-variants
gens=("$@")
[ ${#gens[@]} -gt 0 ] || mapfile -t gens < <(scripts/api-variant.sh --list)

failed=()
for gen in "${gens[@]}"; do
	log=build/api-variants/$gen.log
	s=$(date +%s)
	if ! tree=$(scripts/api-variant.sh "$gen" 2>"$log" | tail -n1) || [ ! -d "$tree" ]; then
		echo "api-variant $gen: FAILED to make the tree (see $log)"
		failed+=("$gen")
		continue
	fi
	if scripts/build-modules.sh "api-$gen" "$tree" FL_BUILD="epf host" >>"$log" 2>&1 &&
	   [ -f "build/api-$gen/drivers/framelink/epf/framelink-epf.ko" ] &&
	   [ -f "build/api-$gen/drivers/framelink/host/framelink-host.ko" ]; then
		echo "api-variant $gen: framelink-epf + framelink-host built ($(($(date +%s) - s))s)"
	else
		echo "api-variant $gen: FAILED ($(($(date +%s) - s))s); first errors:"
		grep -E 'error:|Error [0-9]' "$log" | head -n 8 | sed 's/^/    /'
		failed+=("$gen")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "api variants failing: ${failed[*]}"
	exit 1
fi
echo "api variants: all ${#gens[@]} built"
