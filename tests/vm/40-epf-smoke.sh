#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf alone (no host driver) on both pci-epc-loop profiles: configfs attributes,
# bind, the host enumerates 10de:22fe with a 1 MiB 64-bit BAR0 (its header is read by
# framelink-host in 41-epf-e2e.sh: the test kernel has no /dev/mem for devmem), the
# endpoint chardev answers INFO and a REAP that times out, attributes are locked while bound,
# unbind/rebind, unload; no splat.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

EP=/sys/kernel/config/pci_ep
EPC=pci-epc-loop
FN=$EP/functions/framelink_epf/fl0
DEV=/dev/framelink-ep0

# host_dev: sysfs directory of the enumerated framelink function
host_dev() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat $d/vendor 2>/dev/null)" = 0x10de ] &&
			[ "$(cat $d/device)" = 0x22fe ] && echo $d && return 0
	done
	return 1
}

attrs() { echo $FN/framelink_epf.*; }

fn_create() {
	mkdir $FN || return 1
	wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	a=$(attrs)
	echo 4 >$a/slots && echo 1048576 >$a/slot_size && echo 8 >$a/ring_entries &&
		echo 8 >$FN/msi_interrupts
}

up() {
	ln -s $FN $EP/controllers/$EPC/ || return 1
	echo 1 >$EP/controllers/$EPC/start || return 1
	wait_for 100 test -c $DEV && wait_for 100 host_dev >/dev/null
}

down() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/fl0
	wait_for 50 sh -c "! test -e $DEV"
}

bar0_check() {
	d=$(host_dev) || return 1
	set -- $(head -n1 $d/resource)
	size=$(($2 - $1 + 1))
	echo "BAR0 $1 size $size flags $3"
	[ $size -eq 1048576 ] || return 1
	[ $(($3 & 0x100000)) -ne 0 ]	# 64-bit
}

suite() {
	p=$1
	t_check "$p: load pci-epc-loop" t_insmod pci-epc-loop profile=$p
	[ -d /sys/module/framelink_epf ] || t_check "$p: load framelink-epf" t_insmod framelink-epf
	t_check "$p: controller in configfs" wait_for 50 test -d $EP/controllers/$EPC
	t_check "$p: create function, set attributes" fn_create
	t_check "$p: default IDs 10de:22fe" sh -c "[ \$(cat $FN/vendorid) = 0x10de ] && [ \$(cat $FN/deviceid) = 0x22fe ]"
	t_check "$p: bad attribute value refused" sh -c "! echo 2000 >$(attrs)/poll_max_us"
	t_check "$p: bind, link up, host enumerates 10de:22fe" up
	t_check "$p: BAR0 1 MiB 64-bit" bar0_check
	t_check "$p: attributes locked while bound" sh -c "! echo 2 >$(attrs)/slots"
	t_check "$p: INFO" sh -c "framelink info -d $DEV"
	framelink info -d $DEV 2>&1 | sed 's/^/# /'
	t_check "$p: REAP wait is bounded (echo gives up after 300 ms)" sh -c "timeout 20 framelink echo -d $DEV -n 1 -t 300 2>&1 | grep -q '0 frames echoed'"
	t_check "$p: STATS" framelink stats -d $DEV
	t_check "$p: unbind" down
	t_check "$p: rebind" up
	t_check "$p: BAR0 again" bar0_check
	t_check "$p: unbind again" down
	t_check "$p: remove function" rmdir $FN
	t_check "$p: unload pci-epc-loop" rmmod pci_epc_loop
}

suite generic
suite tegra234
t_check "unload framelink-epf" rmmod framelink_epf
