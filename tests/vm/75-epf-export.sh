#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf slots as dma-bufs (FL_IOC_EXPORT, issue 11, endpoint half), on pci-epc-loop
# profile generic with the host driver:
#  - the kselftest's epexport cases: bad requests (-EINVAL, no fd left), the host device's
#    -ENOTTY, an unwritable answer (-EFAULT, no fd left), the dma-buf maps the slot's own
#    memory (CRC both ways with DMA_BUF_IOCTL_SYNC), mapping rules (read-only export, no
#    private or executable mapping), a host frame read through the dma-buf of the slot it
#    arrived in (exporting takes no ownership), the dma-buf outliving the device file;
#  - `framelink export`: a slot out of range fails; the slot's dma-buf fd and size, or
#    EOPNOTSUPP on a kernel without dma-buf;
#  - unbind, function removal and pci-epc-loop unload while a dma-buf and a mapping of it are
#    held: the mapping faults, sync and mmap() fail with ENODEV, framelink-epf cannot be
#    unloaded until the dma-buf's release, which comes last (no splat: the runner checks the
#    log).
# A kernel without dma-buf (CONFIG_DMA_SHARED_BUFFER unset; the project's test kernels have it)
# answers EOPNOTSUPP after the checks of the request: the request cases run, the others skip.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-host.ko ] || [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "epf export" "framelink modules not built"
	exit 0
fi

t_check "start: loop generic, host, 8 slots of 1 MiB" fl_start "profile=generic" \
	"nbufs=8 buf_size=1048576" slots=8 slot_size=1048576 dma_channels=2 || exit 0
t_run_tap export framelink_test -f epexport

t_check "cli: framelink export of a slot out of range fails" \
	sh -c "! framelink export -d $EDEV -s 8"
if grep -qw dma_buf_export /proc/kallsyms; then
	t_check "cli: framelink export prints the slot's dma-buf" \
		sh -c "framelink export -d $EDEV -s 0 | grep 'dma-buf fd .*, 1048576 bytes'"
else
	t_check "cli: framelink export answers EOPNOTSUPP" \
		sh -c "framelink export -d $EDEV -s 0 2>&1 | grep 'not supported'"
	t_skip "export: unbind with a dma-buf open" "kernel without dma-buf (CONFIG_DMA_SHARED_BUFFER)"
	t_check "host unloads" rmmod framelink_host
	t_check "unbind" fl_unbind 50
	t_check "remove function" rmdir $FN
	t_check "unload pci-epc-loop" rmmod pci_epc_loop
	t_check "unload framelink-epf" rmmod framelink_epf
	exit 0
fi

X=/tmp/export
rm -f $X.*
FL_EXPORT_UNBIND=1 FL_EXPORT_READY=$X.ready FL_UNBIND_DONE=$X.unbound \
	FL_EXPORT_CHECKED=$X.checked FL_EXPORT_RELEASE=$X.release \
	framelink_test -t unbind_while_exported >$X.out 2>&1 &
tp=$!
t_check "unbind: a dma-buf and its mapping held, device file closed" wait_for 600 test -e $X.ready
t_check "unbind: host unloads" rmmod framelink_host
t_check "unbind: unbind with the dma-buf open" fl_unbind 50
t_check "unbind: remove function" rmdir $FN
t_check "unbind: unload pci-epc-loop (the slots' device is gone)" rmmod pci_epc_loop
touch $X.unbound
t_check "unbind: the test checked its dma-buf" wait_for 600 test -e $X.checked
t_check "unload: framelink-epf refused while the dma-buf is open" sh -c '! rmmod framelink_epf'
touch $X.release
wait_bounded $tp 150
rc=$?
sed 's/^/# /' $X.out
t_check "unbind: mapping faults, sync and mmap() ENODEV (kselftest exit 0)" test $rc -eq 0
t_check "unload: framelink-epf after the dma-buf's release" \
	wait_for 50 sh -c 'rmmod framelink_epf 2>/dev/null || ! test -d /sys/module/framelink_epf'
