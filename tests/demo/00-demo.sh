#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo` inside the VM: the driver pair on the loopback link with the Orin's constraints
# (pci-epc-loop profile=tegra234-edma: BAR0 only, 1 MiB, MSI raised anyway, the controller's
# eDMA in dmaengine as a patched kernel would give it; plain tegra234 has no dmaengine channels
# and its CPU copies do not move 8 MiB frames within the bench's 5 s timeout). The endpoint runs
# `framelink echo` (invert + CRC in place, send the same slot back); the host streams frames
# of several sizes, verifies every returned frame and prints the table.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

FN=$EP/functions/framelink_epf/fl0
HDEV=/dev/framelink0
EDEV=/dev/framelink-ep0

echo "# kernel $(uname -r) $(uname -m), QEMU TCG (software CPU): numbers measure this VM"
t_check "demo: load pci-epc-loop (tegra234-edma profile), framelink-epf, framelink-host" \
	sh -c '. /tests/lib.sh; t_insmod pci-epc-loop profile=tegra234-edma && t_insmod framelink-epf &&
		t_insmod framelink-host'
t_check "demo: create the endpoint function in configfs" \
	sh -c "mkdir $FN && sleep 0.5 && a=\$(echo $FN/framelink_epf.*) &&
		echo 8 >\$a/slots && echo 8388608 >\$a/slot_size && echo 8 >$FN/msi_interrupts"
t_check "demo: bind to the controller, start the link" \
	sh -c "ln -s $FN $EP/controllers/$EPC/ && echo 1 >$EP/controllers/$EPC/start"
t_check "demo: both devices up" sh -c ". /tests/epc-loop-lib.sh; wait_for 100 test -c $HDEV &&
	wait_for 100 test -c $EDEV"
echo "# endpoint:"
framelink info -d $EDEV | sed 's/^/#   /'
echo "# host:"
framelink info -d $HDEV | sed 's/^/#   /'

framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
echo_pid=$!
echo "# framelink bench -d $HDEV -s 4K,64K,1M,8M -n 64 -p $EDEV"
framelink bench -d $HDEV -s 4K,64K,1M,8M -n 64 -p $EDEV >/tmp/bench.out 2>&1
rc=$?
sed 's/^/# /' /tmp/bench.out
t_check "demo: every returned frame verified" test $rc -eq 0
kill $echo_pid
wait $echo_pid 2>/dev/null
echo "# host stats:"
framelink stats -d $HDEV | sed 's/^/#   /'
echo "# endpoint stats:"
framelink stats -d $EDEV | sed 's/^/#   /'
