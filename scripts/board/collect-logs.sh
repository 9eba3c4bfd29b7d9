#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Collect what a framelink bug report needs from this board (either side) into one tarball:
# kernel and module versions, the command line, dmesg, lspci -vv, framelink info and stats of
# every framelink device, module parameters, the endpoint's configfs attributes, interrupts
# and CMA. Read-only: it changes nothing on the board.
#
# Usage: collect-logs.sh [OUT.tar.gz]     (default: framelink-logs-<host>-<date>.tar.gz)
#   FL_ROOT  prefix for /sys, /proc and /dev (the checks run it against a fake tree)
set -u
root=${FL_ROOT:-}
out=${1:-framelink-logs-$(hostname 2>/dev/null || echo board)-$(date +%Y%m%d-%H%M%S).tar.gz}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
d=$dir/framelink-logs
mkdir -p "$d"

# grab NAME CMD...: CMD's output (and its errors) into NAME; a missing tool is noted, not fatal
grab() {
	name=$1
	shift
	"$@" >"$d/$name" 2>&1 || echo "(exit $?: $*)" >>"$d/$name"
}
copy() { [ -r "$root$1" ] && cat "$root$1" >"$d/$2" 2>/dev/null; }

grab uname.txt uname -a
copy /proc/cmdline cmdline.txt
copy /proc/interrupts interrupts.txt
[ -r "$root/proc/meminfo" ] && grep -i cma "$root/proc/meminfo" >"$d/cma.txt"
if [ -z "$root" ]; then
	grab dmesg.txt dmesg
	grab lspci.txt lspci -vv -nn
fi
for m in framelink_epf framelink_host pci_epc_loop; do
	[ -d "$root/sys/module/$m" ] || continue
	{
		echo "module $m"
		cat "$root/sys/module/$m/srcversion" 2>/dev/null
		for p in "$root/sys/module/$m"/parameters/*; do
			[ -r "$p" ] && echo "${p##*/}=$(cat "$p")"
		done
	} >"$d/module-$m.txt"
done
for dev in "$root"/dev/framelink*; do
	[ -c "$dev" ] || continue
	n=${dev##*/}
	grab "info-$n.txt" framelink info -d "$dev"
	grab "stats-$n.txt" framelink stats -d "$dev"
done
cfs=$root/sys/kernel/config/pci_ep
if [ -d "$cfs" ]; then
	find "$cfs" -type f 2>/dev/null | while read -r f; do
		printf '%s = %s\n' "${f#"$cfs"/}" "$(head -c 200 "$f" 2>/dev/null | tr '\n' ' ')"
	done >"$d/configfs.txt"
fi
tar -C "$dir" -czf "$out" framelink-logs || exit 1
echo "wrote $out ($(find "$d" -type f | wc -l) files)"
