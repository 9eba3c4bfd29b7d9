# SPDX-License-Identifier: GPL-2.0
# Helpers for the pci-epc-loop tests (tests/vm/2*-*.sh), sourced after /tests/lib.sh.
# Not a test itself: the VM runs only /tests/[0-9]*.sh.

EP=/sys/kernel/config/pci_ep
LOOPDBG=/sys/kernel/debug/pci-epc-loop/pci-epc-loop
EPC=pci-epc-loop
FUNC=$EP/functions/pci_epf_test/loop0
DEV=/dev/pci-endpoint-test.0

# wait_for COUNT CMD...: retry CMD every 0.1 s, at most COUNT times. The count is local (and
# named apart: busybox sh scopes locals dynamically, so CMD would still see a plain `n`).
wait_for() {
	local _wf_left=$1
	shift
	while [ "$_wf_left" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_wf_left=$((_wf_left - 1))
	done
	return 1
}

# alive PID: the process runs (a zombie, exited but not reaped, does not count).
alive() {
	[ -r /proc/$1/status ] && ! grep -q '^State:.*zombie' /proc/$1/status
}

# wait_bounded PID SECONDS: the child's exit status, 137 when a watchdog had to SIGKILL it.
# (`wait`, not `kill -0`: a child that exited but was not reaped yet still answers kill -0.)
# The watchdog holds no stdout/stderr (a caller inside t_check's $(...) would otherwise wait
# for its sleep: the full bound, every time) and takes its sleep with it when cancelled.
wait_bounded() {
	(
		trap 'kill $_s 2>/dev/null; exit 0' TERM
		sleep $2 &
		_s=$!
		wait $_s && kill -9 $1 2>/dev/null
	) </dev/null >/dev/null 2>&1 &
	local wd=$! rc
	wait $1
	rc=$?
	kill $wd 2>/dev/null
	return $rc
}

# bme BDF 0|1: clear or set Bus Master Enable in the function's Command register, as the
# root's software does (a config write through sysfs)
bme() {
	local _c=/sys/bus/pci/devices/$1/config _lo
	_lo=$(od -An -tu1 -j4 -N1 $_c | tr -d ' ')
	[ -n "$_lo" ] || return 1
	if [ "$2" = 1 ]; then _lo=$((_lo | 4)); else _lo=$((_lo & ~4)); fi
	printf "\\$(printf %o $_lo)" | dd of=$_c bs=1 seek=4 count=1 conv=notrunc 2>/dev/null
}

# loop_load [PARAM=VALUE...]: pci-epc-loop plus the kernel's test pair.
loop_load() {
	t_insmod pci-epc-loop "$@" &&
		{ [ -d /sys/module/pci_epf_test ] || t_insmod pci-epf-test; } &&
		{ [ -d /sys/module/pci_endpoint_test ] || t_insmod pci_endpoint_test; } &&
		wait_for 50 test -d $EP/controllers/$EPC
}

# func_create MSIX: a pci_epf_test function as in the kernel's pci-test-howto.
func_create() {
	[ -d $FUNC ] || mkdir $FUNC || return 1
	echo 0x104c >$FUNC/vendorid &&
		echo 0xb500 >$FUNC/deviceid &&
		echo 32 >$FUNC/msi_interrupts &&
		echo "${1:-0}" >$FUNC/msix_interrupts
}

# link_start: bind the function, start the controller, wait for the host side driver.
link_start() {
	[ -e $EP/controllers/$EPC/loop0 ] || ln -s $FUNC $EP/controllers/$EPC/ || return 1
	echo 1 >$EP/controllers/$EPC/start || return 1
	wait_for 100 test -c $DEV
}

# link_stop: stop the controller (the host side goes away asynchronously), then unbind.
link_stop() {
	echo 0 >$EP/controllers/$EPC/start
	wait_for 100 test ! -e $DEV || return 1
	wait_for 100 grep -qx down $LOOPDBG/link || return 1
	rm -f $EP/controllers/$EPC/loop0
}

func_remove() {
	[ -d $FUNC ] && rmdir $FUNC
	return 0
}

loop_unload() {
	rmmod pci_epc_loop
}

# pt NAME ARGS...: one pcitest run; its output becomes TAP comments.
pt() {
	name=$1
	shift
	out=$(pcitest -D $DEV "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then t_ok "$name"; else t_fail "$name" "pcitest $* exit $rc"; fi
}

# pt_refused NAME ARGS...: a pcitest run that must fail (e.g. COPY with DMA, no DMA_MEMCPY).
pt_refused() {
	name=$1
	shift
	out=$(pcitest -D $DEV "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -ne 0 ]; then t_ok "$name"; else t_fail "$name" "pcitest $* unexpectedly passed"; fi
}

# pcitest_suite TAG BARS MSIX [DMA]: the kernel's pcitest.sh sequence, DMA and non-DMA.
# DMA=0: the profile registers no dmaengine channels. 6.12's pci-epf-test then answers a DMA
# command with no interrupt at all and pci_endpoint_test waits for it without a timeout (the
# host's pcitest hangs in D state, as it would against such a board), so the DMA cases are
# skipped, not run.
pcitest_suite() {
	tag=$1
	bars=$2
	msix=$3
	dma=${4:-1}
	[ "$dma" = 1 ] || t_skip_expected "$tag: READ/WRITE * DMA" \
		"the profile registers no dmaengine channels (caller's DMA=0)"
	for b in $bars; do
		pt "$tag: BAR$b" -b "$b"
	done
	pt "$tag: set IRQ type INTx" -i 0
	pt "$tag: INTx" -l
	pt "$tag: set IRQ type MSI" -i 1
	i=1
	while [ $i -le 32 ]; do
		pt "$tag: MSI$i" -m $i
		i=$((i + 1))
	done
	if [ "$msix" -gt 0 ]; then
		pt "$tag: set IRQ type MSI-X" -i 2
		i=1
		while [ $i -le "$msix" ]; do
			pt "$tag: MSI-X$i" -x $i
			i=$((i + 1))
		done
	fi
	pt "$tag: set IRQ type MSI" -i 1
	for s in 1 1024 1025 1024000 1024001; do
		pt "$tag: READ $s" -r -s $s
		pt "$tag: WRITE $s" -w -s $s
	done
	for s in 1 1024 1025 1024000 1024001; do
		if [ "$dma" = 1 ]; then
			pt "$tag: READ $s DMA" -r -s $s -d
			pt "$tag: WRITE $s DMA" -w -s $s -d
		else
			t_skip "$tag: READ/WRITE $s DMA" "no dmaengine channels (pcitest -d would hang)"
		fi
	done
	for s in 1 1024 1025 1024000 1024001; do
		pt "$tag: COPY $s" -c -s $s
	done
	if [ "$dma" = 1 ]; then
		pt_refused "$tag: COPY with DMA refused (no DMA_MEMCPY, as dw-edma)" -c -s 1024 -d
	fi
}
