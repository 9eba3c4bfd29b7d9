#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The endpoint framework of the test kernel: the kernel's own test pair loads, configfs offers
# controllers/ and functions/, a pci_epf_test function can be created and configured, and the
# dts/ overlay's reserved memory reached the kernel.
. /tests/lib.sh

ep=/sys/kernel/config/pci_ep
dt=/sys/firmware/devicetree/base

t_check "overlay: loop reserved-memory node in the device tree" \
	test -d $dt/reserved-memory/loop-memory@60000000
t_check "overlay: reserved pool created at boot" \
	sh -c 'dmesg | grep -q "Reserved memory: created DMA memory pool at 0x0*60000000"'
t_check "load pci-epf-test" t_insmod pci-epf-test
t_check "load pci_endpoint_test" t_insmod pci_endpoint_test
t_check "configfs: pci_ep/controllers present" test -d $ep/controllers
t_check "configfs: pci_epf_test function driver registered" test -d $ep/functions/pci_epf_test

f=$ep/functions/pci_epf_test/fl0
configure() {
	mkdir $f &&
		echo 0x104c >$f/vendorid &&
		echo 0xb500 >$f/deviceid &&
		echo 16 >$f/msi_interrupts &&
		echo 8 >$f/msix_interrupts &&
		[ "$(cat $f/vendorid)" = 0x104c ] &&
		[ "$(cat $f/deviceid)" = 0xb500 ] &&
		[ "$(cat $f/msi_interrupts)" = 16 ] &&
		[ "$(cat $f/msix_interrupts)" = 8 ]
}
t_check "configfs: create and configure a pci_epf_test function" configure
t_check "configfs: remove the function" rmdir $f
t_check "unload pci_endpoint_test" rmmod pci_endpoint_test
t_check "unload pci-epf-test" rmmod pci_epf_test
