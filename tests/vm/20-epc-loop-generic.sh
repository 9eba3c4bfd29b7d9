#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop, profile generic: the kernel's pci-epf-test bound through configfs, the stock
# pci_endpoint_test on the host side, and the 6.12 pcitest suite: every BAR, INTx, MSI 1..32,
# MSI-X, READ/WRITE with and without DMA, COPY without DMA.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

t_check "generic: load pci-epc-loop and the test pair" loop_load profile=generic
t_check "generic: pcitest present" test -x /usr/bin/pcitest
t_check "generic: create pci_epf_test function" func_create 64
t_check "generic: link up, pci_endpoint_test bound" link_start
t_check "generic: host sees the function" \
	sh -c 'grep -qx 0x104c /sys/bus/pci/devices/*/vendor'

pcitest_suite generic "0 1 2 3 4 5" 64

cat $LOOPDBG/stats | sed 's/^/# /'
t_check "generic: stop and unbind" link_stop
t_check "generic: remove function" func_remove
t_check "generic: unload pci-epc-loop" loop_unload
