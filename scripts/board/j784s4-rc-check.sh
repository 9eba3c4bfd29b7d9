#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Check the J784S4 root complex side of framelink (run on the J784S4, as root, after the Orin
# endpoint is up): rescan, find the framelink function, and give a verdict on the link
# (speed, width), payload sizes (MPS, MRRS), the driver, the CMA for host buffers and the
# interrupt vectors. One line per check: PASS, WARN (works, slower or unexpected) or FAIL;
# before the payload verdict an "MPS:" line says where the value came from (the kernel's PCIe
# bus policy, the root port's and the function's settings and what each supports).
#
# Usage: j784s4-rc-check.sh [--dry-run] [--no-rescan] [--speed GT/s] [--width N]
#   --dry-run    do not rescan (print it); read-only checks still run
#   FL_ROOT      prefix for /sys, /proc and /dev (the checks run it against a fake tree)
#   FL_LSPCI     lspci to use (default: lspci; its -vv output gives DevCtl)
# Exit: 0 no FAIL, 1 at least one FAIL.
# Not run on a J784S4 by the project (no hardware): see Documentation/boards.rst.
set -u
root=${FL_ROOT:-}
lspci=${FL_LSPCI:-lspci}
dry=0 rescan=1 want_speed=8.0 want_width=4
fails=0

while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--no-rescan) rescan=0 ;;
	--speed) want_speed=$2; shift ;;
	--width) want_width=$2; shift ;;
	*) echo "usage: $0 [--dry-run] [--no-rescan] [--speed GT/s] [--width N]" >&2; exit 1 ;;
	esac
	shift
done

pass() { echo "PASS: $*"; }
warn() { echo "WARN: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# framelink-epf's IDs (drivers/framelink/host/main.c FL_PCI_VENDOR_ID / FL_PCI_DEVICE_ID)
vendor=0x10de device=0x22fe

if [ $rescan -eq 1 ]; then
	# no hot-plug on the J784S4 root port: a function that trained after boot needs a rescan
	if [ $dry -eq 1 ]; then
		echo "step: echo 1 > /sys/bus/pci/rescan"
	else
		echo 1 >"$root/sys/bus/pci/rescan" || fail "rescan failed"
	fi
fi

dev=''
for d in "$root"/sys/bus/pci/devices/*; do
	[ -f "$d/vendor" ] || continue
	if [ "$(cat "$d/vendor")" = $vendor ] && [ "$(cat "$d/device")" = $device ]; then
		dev=$d
		break
	fi
done
if [ -z "$dev" ]; then
	fail "no framelink function ($vendor:$device) on the bus: is the Orin up" \
		"(orin-ep-up.sh, 'up: /dev/framelink-ep0') and did the link train? then rescan"
	exit 1
fi
bdf=${dev##*/}
pass "framelink function at $bdf"

# link speed and width (sysfs: "8.0 GT/s PCIe", "4")
speed=$(cut -d' ' -f1 <"$dev/current_link_speed" 2>/dev/null)
width=$(cat "$dev/current_link_width" 2>/dev/null)
if [ -z "$speed" ] || [ -z "$width" ]; then
	warn "link speed/width not readable (no current_link_* in sysfs)"
elif [ "$speed" = "$want_speed" ] && [ "$width" = "$want_width" ]; then
	pass "link $speed GT/s x$width"
else
	warn "link $speed GT/s x$width, expected $want_speed GT/s x$want_width:" \
		"check the cable, the UPHY lane configuration of the Orin and max-link-speed"
fi

# payload sizes from lspci -vv (DevCtl: MaxPayload N bytes, MaxReadReq N bytes; DevCap:
# MaxPayload N bytes, what the device supports)
devctl_of() {
	$lspci -vv -s "$1" 2>/dev/null |
		sed -n 's/.*MaxPayload \([0-9]*\) bytes, MaxReadReq \([0-9]*\) bytes.*/\1 \2/p' | tail -n1
}
devcap_of() {
	$lspci -vv -s "$1" 2>/dev/null | sed -n 's/.*DevCap:.*MaxPayload \([0-9]*\) bytes.*/\1/p' |
		head -n1
}

# The kernel's PCIe bus policy sets MPS (drivers/pci/probe.c pci_configure_mps(),
# pcie_bus_configure_settings()): pci=pcie_bus_* on the command line, else the
# CONFIG_PCIE_BUS_* choice, else "default" (the function gets its root port's value; the
# root port keeps what reset or firmware left, 128 on the J784S4 with TI's SDK kernels)
mps_policy() {
	pol=$(tr ' ' '\n' <"$root/proc/cmdline" 2>/dev/null |
		sed -n 's/^pci=.*\(pcie_bus_[a-z0-9]*\).*/\1/p' | tail -n1)
	[ -n "$pol" ] && { echo "$pol (kernel command line)"; return; }
	pol=$(sed -n 's/^CONFIG_\(PCIE_BUS_[A-Z0-9]*\)=y$/\1/p' \
		"$root/boot/config-$(uname -r)" 2>/dev/null | head -n1)
	[ -n "$pol" ] && { echo "CONFIG_$pol (kernel config)"; return; }
	echo "default (no pci=pcie_bus_* on the command line)"
}

devctl=$(devctl_of "$bdf")
if [ -z "$devctl" ]; then
	warn "MPS/MRRS unknown (lspci -vv gave no DevCtl; install pciutils, run as root)"
else
	mps=${devctl% *} mrrs=${devctl#* }
	# the root port: the function's parent in the device hierarchy
	rp=$(basename "$(dirname "$(readlink -f "$dev")")")
	case $rp in
	[0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f].[0-7]) ;;
	*) rp='' ;;
	esac
	rp_devctl=$([ -z "$rp" ] || devctl_of "$rp")
	rp_mps=${rp_devctl% *}
	cap=$(devcap_of "$bdf")
	rp_cap=$([ -z "$rp" ] || devcap_of "$rp")
	both=${cap:-0}
	[ -n "$rp_cap" ] && [ "$rp_cap" -lt "$both" ] && both=$rp_cap
	policy=$(mps_policy)
	src="policy $policy; root port ${rp:-?} at ${rp_mps:-?}, supports ${rp_cap:-?}; function supports ${cap:-?}"
	echo "MPS: $mps bytes ($src)"
	if [ "$mps" -ge 256 ] || { [ "$both" -gt 0 ] && [ "$mps" -ge "$both" ]; }; then
		pass "MPS $mps, MRRS $mrrs"
	else
		case $policy in
		default*|CONFIG_PCIE_BUS_DEFAULT*)
			advice="boot with pci=pcie_bus_perf for ${both:-256} (root port and function then use the largest both support)" ;;
		pcie_bus_peer2peer*|CONFIG_PCIE_BUS_PEER2PEER*)
			advice="the peer2peer policy holds every device at 128; pcie_bus_perf allows ${both:-256}" ;;
		pcie_bus_tune_off*|CONFIG_PCIE_BUS_TUNE_OFF*)
			advice="tune_off keeps what firmware set; pcie_bus_perf allows ${both:-256}" ;;
		*)
			advice="pcie_bus_perf allows ${both:-256}" ;;
		esac
		[ "$both" -gt "$mps" ] || advice="the ends do not say what they support (lspci DevCap); $advice"
		warn "MPS $mps, MRRS $mrrs: set by the kernel's PCIe bus policy ($policy), not by the" \
			"board: $advice (+7% on large frames in the lab's link model)"
	fi
	[ "$mrrs" -ge 512 ] || warn "MRRS $mrrs < 512: endpoint DMA reads of host memory get slower"
fi

# the driver
drv=$(readlink "$dev/driver" 2>/dev/null)
if [ "${drv##*/}" = framelink-host ]; then
	pass "driver framelink-host bound"
else
	fail "driver '${drv##*/}' bound, not framelink-host: modprobe framelink-host" \
		"(or echo $bdf > /sys/bus/pci/drivers/framelink-host/bind)"
fi

# CMA for the host buffers (nbufs x buf_size, module defaults 16 x 8 MiB)
nbufs=$(cat "$root/sys/module/framelink_host/parameters/nbufs" 2>/dev/null || echo 16)
bufsz=$(cat "$root/sys/module/framelink_host/parameters/buf_size" 2>/dev/null || echo 8388608)
need_kb=$((nbufs * (bufsz / 1024)))
cma_kb=$(sed -n 's/^CmaTotal: *\([0-9]*\) kB/\1/p' "$root/proc/meminfo" 2>/dev/null)
if [ -z "$cma_kb" ] || [ "$cma_kb" -eq 0 ]; then
	fail "no CMA (CmaTotal 0): framelink-host needs ${need_kb} kB of contiguous buffers;" \
		"boot with cma=256M or apply the J784S4 overlay's CMA region"
elif [ "$cma_kb" -lt "$need_kb" ]; then
	fail "CMA ${cma_kb} kB < the ${need_kb} kB framelink-host needs ($nbufs x $bufsz)"
else
	pass "CMA ${cma_kb} kB for ${need_kb} kB of host buffers"
fi

# interrupt vectors (request_irq name framelink<N>)
vecs=$(grep -c 'framelink[0-9]' "$root/proc/interrupts" 2>/dev/null)
if [ "${vecs:-0}" -gt 0 ]; then
	pass "$vecs interrupt vector(s) in /proc/interrupts"
else
	fail "no framelink interrupt vector in /proc/interrupts: MSI/MSI-X did not come up" \
		"(the J784S4 has no INTx); completions then wait for the safety timer"
fi

[ $fails -eq 0 ]
