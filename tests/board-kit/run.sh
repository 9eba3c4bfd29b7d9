#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The board bring-up scripts (scripts/board/) against fake /sys, /proc and /dev trees: each
# verdict they must give, including the refusals, plus shellcheck. Boards are not needed, and
# nothing here proves the scripts on a board; it proves their logic and their messages.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
orin=$top/scripts/board/orin-ep-up.sh
rc=$top/scripts/board/j784s4-rc-check.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

ok() { echo "ok - $1"; passed=$((passed + 1)); }
nok() { echo "not ok - $1"; failed=$((failed + 1)); sed 's/^/# /' "$work/out"; }
# expect NAME RC PATTERN... : the last command's exit code and output lines (grep -E each)
expect() {
	local name=$1 want=$2 got=$3 p
	shift 3
	[ "$got" -eq "$want" ] || { nok "$name (exit $got, want $want)"; return; }
	for p in "$@"; do
		grep -qE -- "$p" "$work/out" || { nok "$name (no line matching '$p')"; return; }
	done
	ok "$name"
}

# An Orin with the module loaded and the given endpoint controllers
orin_tree() {
	local r=$work/orin c
	rm -rf "$r"
	mkdir -p "$r/sys/module/framelink_epf" "$r/sys/kernel/config/pci_ep/functions/framelink_epf" \
		"$r/dev" "$r/proc"
	for c in "$@"; do mkdir -p "$r/sys/kernel/config/pci_ep/controllers/$c"; done
	echo "nodev	configfs" >"$r/proc/filesystems"
	echo "$r"
}

r=$(orin_tree 141a0000.pcie-ep)
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: dry run plans the bring-up on the only controller" 0 $? \
	'^step: mkdir .*/functions/framelink_epf/fl0$' '^step: echo 8 > .*/msi_interrupts$' \
	'^step: echo 8388608 > .*/slot_size$' '^step: ln -s .*controllers/141a0000.pcie-ep/$' \
	'^step: echo 1 > .*/controllers/141a0000.pcie-ep/start$' 'nothing changed'
[ ! -e "$r/sys/kernel/config/pci_ep/functions/framelink_epf/fl0" ] &&
	ok "orin: dry run changed nothing" || nok "orin: dry run changed nothing"

# JetPack: NVIDIA's eDMA library installed but not loaded -> loaded before framelink-epf
r=$(orin_tree 141a0000.pcie-ep)
mkdir -p "$r/lib/modules/$(uname -r)/updates/drivers/pci/controller"
touch "$r/lib/modules/$(uname -r)/updates/drivers/pci/controller/tegra-pcie-edma.ko"
rm -r "$r/sys/module/framelink_epf"
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: JetPack's eDMA library is loaded before framelink-epf" 0 $? \
	'^step: modprobe tegra-pcie-edma$'
if grep -n 'step: modprobe' "$work/out" | head -n1 | grep -q tegra-pcie-edma; then
	ok "orin: the library comes first"
else
	nok "orin: the library comes first"
fi
r=$(orin_tree 141a0000.pcie-ep)
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: no library installed: says DMA needs dmaengine" 0 $? \
	'^eDMA: no tegra-pcie-edma module'
mkdir -p "$r/sys/module/tegra_pcie_edma"
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: library already loaded: said, not loaded again" 0 $? \
	'^eDMA: NVIDIA.s tegra-pcie-edma library is loaded'
if grep -q 'modprobe tegra-pcie-edma' "$work/out"; then
	nok "orin: no second modprobe of the library"
else
	ok "orin: no second modprobe of the library"
fi

r=$(orin_tree 141a0000.pcie-ep 14160000.pcie-ep)
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: two controllers and no --controller is refused" 1 $? \
	'FAIL: 2 endpoint controllers .*pick one with --controller'

r=$(orin_tree)
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: no controller names the missing overlay" 1 $? 'FAIL: 0 endpoint controllers.*overlay'

r=$(orin_tree 141a0000.pcie-ep)
rm -rf "$r/sys/kernel/config/pci_ep"
: >"$r/proc/filesystems"
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: a kernel without configfs is refused" 1 $? 'FAIL: no configfs'

# A real (not dry) run on the fake tree: the writes land, then no link within 1 s
r=$(orin_tree 141a0000.pcie-ep)
mkdir -p "$r/sys/kernel/config/pci_ep/functions/framelink_epf/fl0/framelink_epf.0"
FL_ROOT=$r "$orin" --timeout 1 --slots 4 >"$work/out" 2>&1
code=$?
f=$r/sys/kernel/config/pci_ep/functions/framelink_epf/fl0
expect "orin: without a root, the endpoint stays armed and says so (exit 2)" 2 $code \
	'no link within 1s.*power on or reboot the root'
if [ "$(cat "$f/framelink_epf.0/slots")" = 4 ] && [ "$(cat "$f/msi_interrupts")" = 8 ] &&
	[ -L "$r/sys/kernel/config/pci_ep/controllers/141a0000.pcie-ep/fl0" ] &&
	[ "$(cat "$r/sys/kernel/config/pci_ep/controllers/141a0000.pcie-ep/start")" = 1 ]; then
	ok "orin: the run wrote slots, msi_interrupts, the link and start"
else
	nok "orin: the run wrote slots, msi_interrupts, the link and start"
fi
FL_ROOT=$r "$orin" --dry-run >"$work/out" 2>&1
expect "orin: a second run finds the function bound and stops" 0 $? 'already bound'

# The queue device exists from bind, before any link: the script waits for the tool to say
# "link: up" (a stand-in framelink prints what FAKE_LINK says)
fake=$work/bin
mkdir -p "$fake"
printf '#!/bin/sh\necho "link:            $FAKE_LINK"\necho "backend:         ${FAKE_BACKEND:-nvidia-edma}"\n' \
	>"$fake/framelink"
chmod +x "$fake/framelink"
# bound_tree: an Orin tree whose function is bound (the device node exists)
bound_tree() {
	local r
	r=$(orin_tree 141a0000.pcie-ep)
	mkdir -p "$r/sys/kernel/config/pci_ep/functions/framelink_epf/fl0/framelink_epf.0"
	mknod "$r/dev/framelink-ep0" c 1 3 2>/dev/null || return 1
	echo "$r"
}
if r=$(bound_tree); then
	FAKE_LINK="down (waiting for the root)" PATH="$fake:$PATH" FL_ROOT=$r "$orin" --timeout 1 \
		>"$work/out" 2>&1
	expect "orin: device present but no link: still armed (exit 2)" 2 $? 'no link within 1s'
	r=$(bound_tree)
	FAKE_LINK=up PATH="$fake:$PATH" FL_ROOT=$r "$orin" --timeout 5 >"$work/out" 2>&1
	expect "orin: link up: 'up:' and the backend" 0 $? \
		'^up: /dev/framelink-ep0 on 141a0000.pcie-ep$' '^backend: +nvidia-edma'
	r=$(bound_tree)
	FAKE_BACKEND=cpu FAKE_LINK=up PATH="$fake:$PATH" FL_ROOT=$r "$orin" --timeout 5 \
		>"$work/out" 2>&1
	expect "orin: backend cpu: a warning that names the eDMA library" 0 $? \
		'^backend: +cpu' '^WARNING: no DMA engine' 'modprobe tegra-pcie-edma'
	r=$(bound_tree)
	PATH=/usr/sbin:/usr/bin:/sbin:/bin FL_ROOT=$r "$orin" --timeout 5 >"$work/out" 2>&1
	expect "orin: without the framelink tool it says 'bound:', not 'up:'" 0 $? \
		'^bound: /dev/framelink-ep0 on 141a0000.pcie-ep'
else
	echo "ok - orin: link wait cases # SKIP mknod needs root"
fi

# A J784S4 with the function at 0000:01:00.0 below root port 0000:00:00.0; the fake lspci
# gives each its DevCtl MPS and DevCap MPS from FAKE_MPS="rp_ctl rp_cap fn_ctl fn_cap"
# (default "128 256 128 256": TI's SDK kernel, default bus policy)
rc_tree() {
	local r=$work/rc d
	rm -rf "$r"
	d=$r/sys/devices/platform/bus@100000/2900000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0
	mkdir -p "$d" "$r/sys/bus/pci/devices" "$r/sys/bus/pci/drivers/framelink-host" "$r/proc" \
		"$r/sys/module/framelink_host/parameters"
	ln -s "$d" "$r/sys/bus/pci/devices/0000:01:00.0"
	echo "console=ttyS2,115200n8 root=/dev/mmcblk1p2 rw" >"$r/proc/cmdline"
	echo 0x10de >"$d/vendor"
	echo 0x22fe >"$d/device"
	echo "$1 PCIe" >"$d/current_link_speed"
	echo "$2" >"$d/current_link_width"
	ln -s ../../../bus/pci/drivers/framelink-host "$d/driver"
	echo 16 >"$r/sys/module/framelink_host/parameters/nbufs"
	echo 8388608 >"$r/sys/module/framelink_host/parameters/buf_size"
	echo "CmaTotal:         $3 kB" >"$r/proc/meminfo"
	: >"$r/proc/interrupts"
	[ "$4" -eq 0 ] || echo " 91:  120  0  ITS-MSI 524288 Edge  framelink0" >"$r/proc/interrupts"
	cat >"$work/lspci" <<'EOS'
#!/bin/sh
# lspci -vv -s BDF
set -- "$3" ${FAKE_MPS:-128 256 128 256}
if [ "$1" = 0000:00:00.0 ]; then ctl=$2 cap=$3; else ctl=$4 cap=$5; fi
echo "		DevCap:	MaxPayload $cap bytes, PhantFunc 0, Latency L0s <64ns, L1 <1us"
echo "		DevCtl:	CorrErr- NonFatalErr- FatalErr- UnsupReq-"
echo "			RlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+"
echo "			MaxPayload $ctl bytes, MaxReadReq 512 bytes"
EOS
	chmod +x "$work/lspci"
	echo "$r"
}

r=$(rc_tree 8.0 4 262144 1)
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: a good Gen3 x4 set-up passes, MPS 128 is a warning with the fix" 0 $? \
	'^PASS: framelink function at 0000:01:00.0' '^PASS: link 8.0 GT/s x4' \
	'^WARN: MPS 128,.*pci=pcie_bus_perf' '^PASS: driver framelink-host bound' \
	'^PASS: CMA 262144 kB for 131072 kB' '^PASS: 1 interrupt vector'

# MPS is the kernel's bus policy, not the board's: the check says which policy set it
r=$(rc_tree 8.0 4 262144 1)
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: MPS 128 under the default policy: value, source and advice" 0 $? \
	'^MPS: 128 bytes \(policy default .*root port 0000:00:00.0 at 128, supports 256; function supports 256\)' \
	'^WARN: MPS 128, MRRS 512: set by the kernel.s PCIe bus policy \(default.*boot with pci=pcie_bus_perf for 256'
r=$(rc_tree 8.0 4 262144 1)
echo "console=ttyS2 pci=pcie_bus_perf" >"$r/proc/cmdline"
FAKE_MPS="256 256 256 256" FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: pci=pcie_bus_perf, both ends at 256: PASS, the command line named" 0 $? \
	'^MPS: 256 bytes \(policy pcie_bus_perf \(kernel command line\); root port 0000:00:00.0 at 256' \
	'^PASS: MPS 256, MRRS 512'
r=$(rc_tree 8.0 4 262144 1)
echo "pci=realloc,pcie_bus_peer2peer" >"$r/proc/cmdline"
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: pci=pcie_bus_peer2peer holds 128: WARN that names it" 0 $? \
	'^WARN: MPS 128, .*policy \(pcie_bus_peer2peer \(kernel command line\)\).*peer2peer policy holds every device at 128'
r=$(rc_tree 8.0 4 262144 1)
FAKE_MPS="128 128 128 256" FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: a root port that supports only 128: 128 is the best, PASS" 0 $? \
	'^PASS: MPS 128, MRRS 512'
if grep -q '^WARN: MPS' "$work/out"; then nok "j784s4: no MPS warning when 128 is all both support"
else ok "j784s4: no MPS warning when 128 is all both support"; fi

r=$(rc_tree 5.0 2 0 0)
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: no CMA and no vectors fail, a Gen2 x2 link warns" 1 $? \
	'^WARN: link 5.0 GT/s x2, expected 8.0 GT/s x4' '^FAIL: no CMA' \
	'^FAIL: no framelink interrupt vector'

r=$(rc_tree 8.0 4 65536 1)
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: too little CMA for the buffers fails" 1 $? '^FAIL: CMA 65536 kB < the 131072 kB'

r=$(rc_tree 8.0 4 262144 1)
rm -rf "$r/sys/bus/pci/devices/0000:01:00.0"
FL_ROOT=$r FL_LSPCI=$work/lspci "$rc" --dry-run >"$work/out" 2>&1
expect "j784s4: no function on the bus says what to do" 1 $? \
	'^step: echo 1 > /sys/bus/pci/rescan' '^FAIL: no framelink function .*orin-ep-up.sh'

# The acceptance plan, dry: every step in order, each verdict planned, nothing claimed as passed
ORIN=u@orin RC=u@rc "$top/tests/board/acceptance.sh" --dry-run --cycles 2 >"$work/out" 2>&1
code=$?
order=$(grep '^== step' "$work/out" | tr '\n' ' ')
if [ $code -eq 0 ] && [ "$order" = "== step pcitest == step smoke == step bench == step reboot == step rebind == step soak " ] &&
	[ "$(grep -c '^planned:' "$work/out")" -eq 6 ] && ! grep -q '^PASS' "$work/out" &&
	[ "$(grep -c '^\[u@rc\] reboot' "$work/out")" -eq 4 ]; then
	ok "acceptance plan: six steps in order, 2 reboot cycles planned, no PASS claimed in a dry run"
else
	nok "acceptance plan: six steps in order, 2 reboot cycles planned, no PASS claimed in a dry run"
fi
ORIN=u@orin RC=u@rc "$top/tests/board/acceptance.sh" --dry-run bogus >"$work/out" 2>&1
expect "acceptance plan: an unknown step is refused" 1 $? 'unknown step bogus'
env -u ORIN RC=u@rc "$top/tests/board/acceptance.sh" --dry-run >"$work/out" 2>&1
expect "acceptance plan: ORIN unset is refused" 1 $? 'set ORIN'

# The log collector on the fake J784S4 tree: versions, parameters, CMA, interrupts
r=$(rc_tree 8.0 4 262144 1)
echo "console=ttyS2" >"$r/proc/cmdline"
FL_ROOT=$r "$top/scripts/board/collect-logs.sh" "$work/logs.tar.gz" >"$work/out" 2>&1
code=$?
tar -xzf "$work/logs.tar.gz" -C "$work" 2>/dev/null
l=$work/framelink-logs
if [ $code -eq 0 ] && grep -q '^nbufs=16$' "$l/module-framelink_host.txt" 2>/dev/null &&
	grep -q 'CmaTotal' "$l/cma.txt" && grep -q framelink0 "$l/interrupts.txt" &&
	grep -q ttyS2 "$l/cmdline.txt" && [ -s "$l/uname.txt" ]; then
	ok "log collector: module parameters, CMA, interrupts, command line, uname in the tarball"
else
	nok "log collector: module parameters, CMA, interrupts, command line, uname in the tarball"
fi

if shellcheck -s sh "$orin" "$rc" "$top/scripts/board/collect-logs.sh" >"$work/out" 2>&1 &&
	shellcheck "$top/tests/board/acceptance.sh" >>"$work/out" 2>&1; then
	ok "shellcheck: bring-up, acceptance and log scripts clean"
else
	nok "shellcheck: bring-up, acceptance and log scripts clean"
fi

echo "board kit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
