#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo` inside the VM: bring up the endpoint framework and show it ready.
# (When the driver pair lands, the demo streams frames instead.)
. /tests/lib.sh

ep=/sys/kernel/config/pci_ep
echo "# kernel: $(uname -r) on $(uname -m)"
t_check "demo: load pci-epf-test" t_insmod pci-epf-test
t_check "demo: create pci_epf_test function func0" mkdir $ep/functions/pci_epf_test/func0
echo 0x104c >$ep/functions/pci_epf_test/func0/vendorid
echo 0xb500 >$ep/functions/pci_epf_test/func0/deviceid
echo 16 >$ep/functions/pci_epf_test/func0/msi_interrupts
echo "# endpoint framework (configfs $ep):"
find $ep | sed 's/^/#   /'
echo "# func0: vendorid $(cat $ep/functions/pci_epf_test/func0/vendorid)" \
	"deviceid $(cat $ep/functions/pci_epf_test/func0/deviceid)" \
	"msi_interrupts $(cat $ep/functions/pci_epf_test/func0/msi_interrupts)"
echo "# controllers: $(ls $ep/controllers | tr '\n' ' ')"
echo "# reserved memory: $(dmesg | grep -o 'Reserved memory: created DMA memory pool.*')"
rmdir $ep/functions/pci_epf_test/func0
rmmod pci_epf_test
