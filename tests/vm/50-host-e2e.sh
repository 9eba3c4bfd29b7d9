#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-host with framelink-epf on pci-epc-loop: frames both ways with content checks
# (send/recv --verify), the bench through `framelink echo` (every frame verified), surprise
# link down mid-stream (errors, no hang), link up and the stream again, unload; no splat.
. /tests/lib.sh

EP=/sys/kernel/config/pci_ep
EPC=pci-epc-loop
FN=$EP/functions/framelink_epf/h0
LOOPDBG=/sys/kernel/debug/pci-epc-loop/pci-epc-loop
HDEV=/dev/framelink0
EDEV=/dev/framelink-ep0
PROFILE=${PROFILE:-generic}

wait_for() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

if [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "e2e: framelink-epf" "framelink-epf.ko not built"
	exit 0
fi

fn_create() {
	mkdir $FN || return 1
	wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	a=$(echo $FN/framelink_epf.*)
	echo 8 >$a/slots && echo 1048576 >$a/slot_size && echo 16 >$a/ring_entries &&
		echo 8 >$FN/msi_interrupts
}

up() {
	[ -e $EP/controllers/$EPC/h0 ] || ln -s $FN $EP/controllers/$EPC/ || return 1
	echo 1 >$EP/controllers/$EPC/start || return 1
	wait_for 100 test -c $EDEV && wait_for 100 test -c $HDEV
}

down() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/h0
	wait_for 50 sh -c "! test -e $HDEV"
}

# echo_start NAME: not through t_check, whose subshell would lose $echo_pid
echo_start() {
	framelink echo -d $EDEV >/tmp/echo.log 2>&1 &
	echo_pid=$!
	sleep 0.5
	if kill -0 $echo_pid; then t_ok "$1"; else t_fail "$1" "echo exited"; fi
}

echo_stop() {
	kill $echo_pid 2>/dev/null
	wait $echo_pid
	sed 's/^/# echo: /' /tmp/echo.log
}

# show NAME CMD...: t_check, and the command's output as TAP comments either way
show() {
	name=$1
	shift
	"$@" >/tmp/show.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/show.out
	if [ $rc -eq 0 ]; then t_ok "$name"; else t_fail "$name" "exit $rc: $*"; fi
}

t_check "e2e: load pci-epc-loop ($PROFILE)" t_insmod pci-epc-loop profile=$PROFILE
t_check "e2e: load framelink-epf" t_insmod framelink-epf
t_check "e2e: load framelink-host" t_insmod framelink-host nbufs=8 buf_size=1048576
t_check "e2e: controller in configfs" wait_for 50 test -d $EP/controllers/$EPC
t_check "e2e: create framelink_epf function" fn_create
t_check "e2e: link up, both devices" up
dmesg | grep framelink-host | sed 's/^/# /'
show "e2e: host INFO" framelink info -d $HDEV
t_check "e2e: host role" sh -c "framelink info -d $HDEV | grep -q 'role: *host'"

# host -> endpoint, content checked on the endpoint
framelink recv -d $EDEV -n 64 --verify -t 20000 >/tmp/recv.log 2>&1 &
rpid=$!
sleep 0.5
show "e2e: host send 64 x 64K --verify" framelink send -d $HDEV -s 64K -n 64 -b 4 --verify
wait $rpid
rc=$?
sed 's/^/# recv: /' /tmp/recv.log
if [ $rc -eq 0 ]; then t_ok "e2e: endpoint received 64 frames, verified"; else
	t_fail "e2e: endpoint received 64 frames, verified" "recv exit $rc"; fi

# endpoint -> host, content checked on the host
framelink recv -d $HDEV -n 64 --verify -t 20000 >/tmp/recv.log 2>&1 &
rpid=$!
sleep 0.5
show "e2e: endpoint send 64 x 4095 --verify" framelink send -d $EDEV -s 4095 -n 64 --verify
wait $rpid
rc=$?
sed 's/^/# recv: /' /tmp/recv.log
if [ $rc -eq 0 ]; then t_ok "e2e: host received 64 frames, verified"; else
	t_fail "e2e: host received 64 frames, verified" "recv exit $rc"; fi

# round trips through echo, every frame checked
echo_start "e2e: echo running on the endpoint"
show "e2e: bench 1,4095,4K,64K,1M" framelink bench -d $HDEV -p $EDEV -s 1,4095,4K,64K,1M -n 200 -b 4
show "e2e: host STATS" framelink stats -d $HDEV

# surprise link down while frames stream: the bench fails, nothing hangs
framelink bench -d $HDEV -p $EDEV -s 64K -n 1000000 >/tmp/bench.log 2>&1 &
bpid=$!
sleep 2
t_check "e2e: link down mid-stream" sh -c "echo down >$LOOPDBG/link"
t_check "e2e: host device removed" wait_for 100 sh -c "! test -e $HDEV"
wait $bpid
rc=$?
tail -5 /tmp/bench.log | sed 's/^/# bench: /'
if [ $rc -ne 0 ]; then t_ok "e2e: interrupted bench reported failure"; else
	t_fail "e2e: interrupted bench reported failure" "bench passed"; fi
t_check "e2e: link up again" sh -c "echo up >$LOOPDBG/link"
t_check "e2e: host device back" wait_for 100 test -c $HDEV
t_check "e2e: echo survived the link down" kill -0 $echo_pid
show "e2e: bench after re-link" framelink bench -d $HDEV -p $EDEV -s 4K,256K -n 100
echo_stop

t_check "e2e: link stop, unbind" down
t_check "e2e: remove function" rmdir $FN
t_check "e2e: unload framelink-host" rmmod framelink_host
t_check "e2e: unload pci-epc-loop" rmmod pci_epc_loop
t_check "e2e: unload framelink-epf" rmmod framelink_epf
