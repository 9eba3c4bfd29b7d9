#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The driver pair end to end on the loopback link, on the pci-epc-loop profiles tegra234 (CPU
# copies: no dmaengine channels), tegra234-edma (2 read, 4 write channels) and generic: the
# kselftest (both ends driven by one process), then a stream interrupted by a link down and
# by unbinding the endpoint function: the apps get errors, nothing hangs, no splat, and
# streaming works again after the link comes back. PAIRS (endpoint:root profiles) and
# RESUME_XFAIL are set by 61-framelink-j784s4.sh, which runs the same cases under the J784S4 root.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

FN=$EP/functions/framelink_epf/fl0
HDEV=/dev/framelink0
EDEV=/dev/framelink-ep0

fl_bind() {
	ln -s $FN $EP/controllers/$EPC/ && echo 1 >$EP/controllers/$EPC/start &&
		wait_for 100 test -c $HDEV && wait_for 100 test -c $EDEV
}

fl_unbind() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/fl0
	wait_for 100 test ! -e $EDEV
}

fl_up() {
	t_insmod pci-epc-loop profile=$1 rc_profile=$2 && t_insmod framelink-epf && t_insmod framelink-host &&
		wait_for 50 test -d $EP/controllers/$EPC && mkdir $FN &&
		wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	a=$(echo $FN/framelink_epf.*)
	echo 8 >$a/slots && echo 4194304 >$a/slot_size && echo 8 >$FN/msi_interrupts && fl_bind
}

fl_down() {
	fl_unbind
	rmdir $FN
	rmmod framelink_host && rmmod framelink_epf && rmmod pci_epc_loop
}

# stream_cut NAME CUT RESTORE: echo on the endpoint, a long bench on the host, then CUT; the
# bench must end with an error within 20 s; after RESTORE a short bench passes again.
stream_cut() {
	name=$1
	framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
	echo_pid=$!
	framelink bench -d $HDEV -s 64K -n 1000000 >/tmp/bench.out 2>&1 &
	bench_pid=$!
	sleep 2
	t_check "$name: stream running" alive $bench_pid
	$2
	wait_bounded $bench_pid 20
	rc=$?
	t_check "$name: the host app ended within 20 s" test $rc -ne 137
	t_check "$name: the host app got an error, not success" test $rc -ne 0
	kill $echo_pid
	wait_bounded $echo_pid 10
	t_check "$name: endpoint app exits on SIGTERM within 10 s" test $? -ne 137
	t_check "$name: link back" $3
	framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
	echo_pid=$!
	if [ -n "$RESUME_XFAIL" ]; then
		t_xfail "$name: streaming works again" "$RESUME_XFAIL" \
			framelink bench -d $HDEV -s 4K,1M -n 50
	else
		t_check "$name: streaming works again" framelink bench -d $HDEV -s 4K,1M -n 50
	fi
	kill $echo_pid
	wait $echo_pid 2>/dev/null
}

link_cut() { echo down >$LOOPDBG/link; }
link_back() { echo up >$LOOPDBG/link && wait_for 100 test -c $HDEV; }

# PAIRS: endpoint profile:root profile (61-framelink-j784s4.sh sets its own)
for pair in ${PAIRS:-tegra234:generic-rc tegra234-edma:generic-rc generic:generic-rc}; do
	p=${pair%%:*}
	rc=${pair#*:}
	[ "$rc" = generic-rc ] || p=$p+$rc
	if ! t_check "$p: loop, framelink-epf, framelink-host up" fl_up ${pair%%:*} $rc; then
		fl_down >/dev/null 2>&1
		continue
	fi
	t_run_tap "kselftest.$p" framelink_test
	stream_cut "$p: link down mid-stream" link_cut link_back
	stream_cut "$p: EPF unbound mid-stream" fl_unbind fl_bind
	t_check "$p: tear down and unload" fl_down
done
