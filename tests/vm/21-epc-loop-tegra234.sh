#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop, profile tegra234 (mainline pcie-tegra194.c as 6.12 ships it): only BAR0 (fixed
# 1 MiB, 64-bit), no MSI capability offered to the EPF (MSI raised 1-based anyway), no MSI-X,
# no dmaengine channels (pcitest -d not run, see pcitest_suite), epc_init only at the PERST#
# deassert after start; the same pcitest suite on the CPU path.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

pstat() { awk -v k="$1" '$1 == k {print $2}' $LOOPDBG/perst_stats; }

t_check "tegra234: load pci-epc-loop" loop_load profile=tegra234
t_check "tegra234: no dmaengine channels" sh -c "[ ! -s $LOOPDBG/channels ]"
t_check "tegra234: no epc_init at probe, controller in reset" \
	sh -c "[ \$(awk '\$1 == \"epc_inits\" {print \$2}' $LOOPDBG/perst_stats) -eq 0 ] &&
		grep -q 'controller *reset' $LOOPDBG/perst_stats"
t_check "tegra234: create pci_epf_test function" func_create 0
t_check "tegra234: link up, pci_endpoint_test bound" link_start
t_check "tegra234: one epc_init, at the PERST# deassert after start" test "$(pstat epc_inits)" -eq 1
t_check "tegra234: BAR0 is 1 MiB, 64-bit" sh -c '
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat $d/vendor)" = 0x104c ] || continue
		set -- $(head -n1 $d/resource)
		[ $((${2} - ${1} + 1)) -eq 1048576 ] && [ $((${3} & 0x100000)) -ne 0 ] && exit 0
	done
	exit 1'

pcitest_suite tegra234 "0" 0 0

cat $LOOPDBG/stats | sed 's/^/# /'
cat $LOOPDBG/perst_stats | sed 's/^/# /'
t_check "tegra234: stop and unbind" link_stop
t_check "tegra234: remove function" func_remove
t_check "tegra234: unload pci-epc-loop" loop_unload
