#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bring framelink-epf up on a Jetson AGX Orin in endpoint mode (run on the Orin, as root,
# before the root complex boots: the controller trains the link at the root's PERST#
# deassert). Loads the module, creates and configures the function in configfs, binds it to
# the endpoint controller, starts it, waits for the link and prints the backend and channels.
# On JetPack it loads NVIDIA's eDMA library (tegra-pcie-edma) first when it is installed.
#
# Usage: orin-ep-up.sh [--dry-run] [--controller NAME] [--slots N] [--slot-size BYTES]
#                      [--msi N] [--timeout SECONDS]
#   --dry-run  check the prerequisites and print every step instead of doing it
#   FL_ROOT    prefix for /sys, /dev and /proc (the checks run it against a fake tree)
#   FL_KO      path of framelink-epf.ko (default: modprobe framelink-epf)
# Exit: 0 up (or dry run planned), 1 a prerequisite is missing, 2 no link within the timeout.
# Not run on an Orin by the project (no hardware): see Documentation/boards.rst.
set -u
root=${FL_ROOT:-}
dry=0 ctrl='' slots=8 slot_size=8388608 msi=8 timeout=120

while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--controller) ctrl=$2; shift ;;
	--slots) slots=$2; shift ;;
	--slot-size) slot_size=$2; shift ;;
	--msi) msi=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	*) echo "usage: $0 [--dry-run] [--controller NAME] [--slots N] [--slot-size BYTES] [--msi N] [--timeout S]" >&2
	   exit 1 ;;
	esac
	shift
done

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "step: $*"; }
# do_write VALUE FILE
do_write() {
	step "echo $1 > $2"
	[ $dry -eq 1 ] || echo "$1" >"$root$2" || fail "writing $1 to $2"
}
# run CMD...: a command that changes the system
run() {
	step "$*"
	[ $dry -eq 1 ] || "$@" || fail "$*"
}

cfs=/sys/kernel/config/pci_ep
[ "$(id -u)" -eq 0 ] || [ -n "$root" ] || fail "run as root"

# 1. the DMA engine, then the module. JetPack exposes the eDMA only through NVIDIA's library
# (tegra-pcie-edma.ko, nvidia-oot), which framelink-epf looks up when the function binds: it
# must be loaded first or every frame takes the CPU path. Mainline has no such module (the
# eDMA is a dmaengine device once patches/tegra194-edma is applied).
if [ -d "$root/sys/module/tegra_pcie_edma" ]; then
	echo "eDMA: NVIDIA's tegra-pcie-edma library is loaded"
elif [ -n "$(find "$root/lib/modules/$(uname -r)" -name 'tegra-pcie-edma.ko*' 2>/dev/null |
	head -n1)" ]; then
	run modprobe tegra-pcie-edma
else
	echo "eDMA: no tegra-pcie-edma module for $(uname -r): DMA only through dmaengine" \
		"(mainline with patches/tegra194-edma), else CPU copies"
fi
if [ -n "${FL_KO:-}" ]; then
	[ -f "$FL_KO" ] || fail "FL_KO=$FL_KO: no such file"
	[ -d "$root/sys/module/framelink_epf" ] || run insmod "$FL_KO"
elif [ ! -d "$root/sys/module/framelink_epf" ]; then
	run modprobe framelink-epf
fi

# 2. configfs
if [ ! -d "$root$cfs" ]; then
	grep -qw configfs "$root/proc/filesystems" 2>/dev/null ||
		fail "no configfs in this kernel (CONFIG_CONFIGFS_FS, CONFIG_PCI_ENDPOINT_CONFIGFS)"
	run mount -t configfs none "$root/sys/kernel/config"
fi
[ $dry -eq 1 ] || [ -d "$root$cfs" ] ||
	fail "$cfs missing: CONFIG_PCI_ENDPOINT_CONFIGFS is not enabled"

# 3. the endpoint controller: the one given, else the only one (C5 is 141a0000.pcie-ep)
if [ -z "$ctrl" ]; then
	# controller names have no blanks (<unit address>.pcie-ep): split on purpose
	# shellcheck disable=SC2046
	set -- $(ls "$root$cfs/controllers" 2>/dev/null)
	[ $# -eq 1 ] || fail "$# endpoint controllers ($*): pick one with --controller" \
		"(none: the devkit overlay that enables pcie-ep@141a0000 is not applied)"
	ctrl=$1
fi
[ -d "$root$cfs/controllers/$ctrl" ] || fail "no endpoint controller $ctrl in $cfs/controllers"
[ -e "$root$cfs/controllers/$ctrl/fl0" ] && {
	echo "framelink function already bound to $ctrl: nothing to do"
	exit 0
}

# 4. the function and its attributes
fn=$cfs/functions/framelink_epf/fl0
[ $dry -eq 1 ] || [ -d "$root$cfs/functions/framelink_epf" ] ||
	fail "framelink-epf did not register its function driver"
[ -d "$root$fn" ] || run mkdir "$root$fn"
do_write "$msi" "$fn/msi_interrupts"
if [ $dry -eq 1 ]; then
	attrs=$fn/framelink_epf.0
else
	attrs=$(find "$root$fn" -maxdepth 1 -name 'framelink_epf.*' | head -n1)
	attrs=${attrs#"$root"}
	[ -n "$attrs" ] || fail "the function has no framelink_epf.* attribute group"
fi
do_write "$slots" "$attrs/slots"
do_write "$slot_size" "$attrs/slot_size"

# 5. bind and start
run ln -s "$root$fn" "$root$cfs/controllers/$ctrl/"
do_write 1 "$cfs/controllers/$ctrl/start"

# 6. the link comes when the root deasserts PERST#; then the queue device appears
if [ $dry -eq 1 ]; then
	step "wait up to ${timeout}s for /dev/framelink-ep0, then: framelink info -d /dev/framelink-ep0"
	echo "dry run: prerequisites ok, nothing changed"
	exit 0
fi
# The device appears at bind, before any link: "framelink info" says when the link is up
have_tool=0
command -v framelink >/dev/null && have_tool=1
ready() {
	[ -c "$root/dev/framelink-ep0" ] || return 1
	[ $have_tool -eq 0 ] ||
		framelink info -d "$root/dev/framelink-ep0" 2>/dev/null | grep -q '^link: *up'
}
t=0
while ! ready && [ $t -lt "$timeout" ]; do
	sleep 1
	t=$((t + 1))
done
if ! ready; then
	echo "no link within ${timeout}s: the endpoint stays armed; power on or reboot the root" >&2
	echo "complex now (its PERST# deassert starts the link); dmesg shows the rest" >&2
	exit 2
fi
if [ $have_tool -eq 0 ]; then
	echo "bound: /dev/framelink-ep0 on $ctrl (install tools/framelink to wait for the link and"
	echo "see the backend and channels; dmesg says 'link up')"
	exit 0
fi
echo "up: /dev/framelink-ep0 on $ctrl"
info=$(framelink info -d "$root/dev/framelink-ep0" 2>/dev/null)
echo "$info" | grep -E 'features|backend|dma channels|crossover|notify|link'
if echo "$info" | grep -qE '^backend: +cpu'; then
	echo "WARNING: no DMA engine: every frame is a CPU copy (a few MB/s from host memory)." >&2
	echo "JetPack: modprobe tegra-pcie-edma, then rebind (Documentation/boards/orin-agx.rst)." >&2
fi
exit 0
