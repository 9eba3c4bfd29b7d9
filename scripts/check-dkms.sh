#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dkms build of both drivers, as a board owner runs scripts/dkms-install.sh, against the test
# kernel tree, in private DKMS trees (nothing is registered on this machine): each must leave
# exactly its module.
#
# Usage: check-dkms.sh KDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: check-dkms.sh KDIR}
kver=$(make -s -C "$kdir" kernelrelease 2>/dev/null)
trees=$(mktemp -d)
trap 'rm -rf "$trees"' EXIT
fail=0
for m in epf host; do
	if ! "$top/scripts/dkms-install.sh" $m --build-only -k "$kver" --kernelsourcedir "$kdir" \
		--trees "$trees" >"$trees/$m.log" 2>&1; then
		echo "FAIL: dkms build of framelink-$m"; tail -20 "$trees/$m.log"
		fail=1
		continue
	fi
	got=$(cd "$trees/dkms/framelink-$m" && find . -path '*/module/*.ko' | sed 's|.*/||')
	if [ "$got" = "framelink-$m.ko" ]; then
		echo "ok: dkms build framelink-$m for $kver -> $got"
	else
		echo "FAIL: dkms build framelink-$m left '$got'"
		fail=1
	fi
done
exit $fail
