#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop link down: a 1 MB DMA transfer is held in flight (stall fault), the link goes
# down under it (surprise removal of the host side), pcitest gets an error, the link comes back
# and the suite passes again.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

t_check "linkdown: load pci-epc-loop" loop_load profile=generic
t_check "linkdown: create pci_epf_test function" func_create 8
t_check "linkdown: link up" link_start
pt "linkdown: READ 1024000 DMA before" -r -s 1024000 -d

# Stall every channel, start a DMA READ (the endpoint writes to the host), wait until the
# transfer sits in a channel, then pull the link.
echo 0xffff >$LOOPDBG/stall
pcitest -D $DEV -r -s 1024000 -d >/tmp/pt-linkdown.out 2>&1 &
pid=$!
t_check "linkdown: transfer in flight" wait_for 100 grep -q active $LOOPDBG/channels
t_check "linkdown: link down" sh -c "echo down >$LOOPDBG/link"
echo 0 >$LOOPDBG/stall
wait $pid
rc=$?
sed 's/^/# /' /tmp/pt-linkdown.out
if [ $rc -ne 0 ]; then
	t_ok "linkdown: interrupted transfer reported as failed"
else
	t_fail "linkdown: interrupted transfer reported as failed" "pcitest passed"
fi
t_check "linkdown: host device removed" wait_for 50 test ! -e $DEV
t_check "linkdown: link state down" grep -qx down $LOOPDBG/link
t_check "linkdown: link up again" sh -c "echo up >$LOOPDBG/link"
t_check "linkdown: host driver bound again" wait_for 100 test -c $DEV

pcitest_suite "after linkdown" "0 1 2 3 4 5" 8

cat $LOOPDBG/stats | sed 's/^/# /'
t_check "linkdown: stop and unbind" link_stop
t_check "linkdown: remove function" func_remove
t_check "linkdown: unload pci-epc-loop" loop_unload
