#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-host without its endpoint: the kernel's pci-epf-test posing with framelink's IDs
# (0x10de:0x22fe) must be refused cleanly (no magic in BAR0), also when bound via new_id;
# the module loads and unloads with nothing bound and leaves no splat.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

HOSTDRV=/sys/bus/pci/drivers/framelink-host

# fn_ids VENDOR DEVICE: a pci_epf_test function with the given IDs.
fn_ids() {
	[ -d $FUNC ] || mkdir $FUNC || return 1
	echo "$1" >$FUNC/vendorid && echo "$2" >$FUNC/deviceid &&
		echo 8 >$FUNC/msi_interrupts && echo 0 >$FUNC/msix_interrupts
}

# up: link the function and start the controller; wait for the host to enumerate it.
up() {
	[ -e $EP/controllers/$EPC/loop0 ] || ln -s $FUNC $EP/controllers/$EPC/ || return 1
	echo 1 >$EP/controllers/$EPC/start || return 1
	wait_for 100 sh -c "grep -qx $1 /sys/bus/pci/devices/*/device"
}

down() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/loop0
	wait_for 50 sh -c "! grep -qx $1 /sys/bus/pci/devices/*/device 2>/dev/null"
}

refusals() { dmesg | grep -c 'no framelink endpoint behind BAR0'; }

t_check "alone: load pci-epc-loop" loop_load profile=generic
t_check "alone: load framelink-host" t_insmod framelink-host nbufs=4 buf_size=65536
t_check "alone: driver registered" test -d $HOSTDRV
t_check "alone: pci-epf-test as 10de:22fe" fn_ids 0x10de 0x22fe
before=$(refusals)
t_check "alone: link up, function enumerated" up 0x22fe
t_check "alone: probe refused with a clear message" wait_for 50 sh -c "[ \$(dmesg | grep -c 'no framelink endpoint behind BAR0') -gt $before ]"
dmesg | grep framelink-host | tail -3 | sed 's/^/# /'
t_check "alone: no /dev/framelink0" test ! -e /dev/framelink0
t_check "alone: not bound" sh -c "! ls $HOSTDRV | grep -q ':'"
t_check "alone: link down" down 0x22fe

# new_id: another device ID is picked up through sysfs, and refused the same way
t_check "alone: pci-epf-test as 10de:1234" fn_ids 0x10de 0x1234
t_check "alone: link up again" up 0x1234
before=$(refusals)
t_check "alone: new_id 10de 1234" sh -c "echo '10de 1234' >$HOSTDRV/new_id"
t_check "alone: new_id probe refused" wait_for 50 sh -c "[ \$(dmesg | grep -c 'no framelink endpoint behind BAR0') -gt $before ]"
t_check "alone: link down again" down 0x1234

t_check "alone: unload framelink-host" rmmod framelink_host
t_check "alone: remove function" func_remove
t_check "alone: unload pci-epc-loop" loop_unload
