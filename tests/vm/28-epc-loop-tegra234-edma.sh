#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop, profile tegra234-edma: tegra234 (BAR0 only, 1 MiB, 64-bit; MSI 1-based; PERST#
# lifecycle) with the controller's eDMA in dmaengine: 2 read and 4 write channels, as NVIDIA's
# tegra-pcie-edma.h gives the Tegra234 controller. The pcitest suite with DMA.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

chans() { grep -c " $1 " $LOOPDBG/channels; }

t_check "tegra234-edma: load pci-epc-loop" loop_load profile=tegra234-edma
sed 's/^/# /' $LOOPDBG/channels
t_check "tegra234-edma: 2 read channels" test "$(chans read)" -eq 2
t_check "tegra234-edma: 4 write channels" test "$(chans write)" -eq 4
t_check "tegra234-edma: create pci_epf_test function" func_create 0
t_check "tegra234-edma: link up, pci_endpoint_test bound" link_start
t_check "tegra234-edma: BAR0 only" sh -c '
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat $d/vendor)" = 0x104c ] || continue
		set -- $(sed -n 3p $d/resource)
		[ $(($2)) -eq 0 ] && exit 0
	done
	exit 1'

pcitest_suite tegra234-edma "0" 0 1

cat $LOOPDBG/stats | sed 's/^/# /'
t_check "tegra234-edma: DMA transfers counted" sh -c "[ \$(awk '\$1 == \"dma_xfers\" {print \$2}' $LOOPDBG/stats) -gt 0 ]"
t_check "tegra234-edma: stop and unbind" link_stop
t_check "tegra234-edma: remove function" func_remove
t_check "tegra234-edma: unload pci-epc-loop" loop_unload
