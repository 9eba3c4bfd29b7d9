#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop unload/reload 20 times with the pci_epf_test function bound and the host driver
# probed each time; the init script's kmemleak scan and the splat check judge the leftovers.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

t_check "reload: create pci_epf_test function" sh -c \
	'{ [ -d /sys/module/pci_epf_test ] || insmod /modules/pci-epf-test.ko; } &&
	 { [ -d /sys/module/pci_endpoint_test ] || insmod /modules/pci_endpoint_test.ko; } &&
	 . /tests/epc-loop-lib.sh && func_create 8'
cycle() {
	loop_load profile=generic && link_start &&
		pcitest -D $DEV -b 0 >/dev/null && pcitest -D $DEV -r -s 4096 -d >/dev/null &&
		link_stop && loop_unload
}
i=1
fails=0
while [ $i -le 20 ]; do
	if ! out=$(cycle 2>&1); then
		echo "$out" | sed 's/^/# /'
		fails=$((fails + 1))
		rmmod pci_epc_loop 2>/dev/null
	fi
	i=$((i + 1))
done
if [ $fails -eq 0 ]; then t_ok "reload: 20 load/bind/test/unload cycles"; else
	t_fail "reload: 20 load/bind/test/unload cycles" "$fails failed"; fi
t_check "reload: module gone" test ! -d /sys/module/pci_epc_loop
t_check "reload: remove function" func_remove
t_check "reload: unload pci_endpoint_test" rmmod pci_endpoint_test
t_check "reload: unload pci-epf-test" rmmod pci_epf_test
