#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf with framelink-host on pci-epc-loop: frames both ways through the endpoint's
# echo (DMA: generic and tegra234-edma; CPU: tegra234, which has no dmaengine channels, and
# generic with dma_channels=0), verified send/recv in each direction, a link down in the
# middle of a stream, unbind with the endpoint app still running; no splat.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

EP=/sys/kernel/config/pci_ep
EPC=pci-epc-loop
FN=$EP/functions/framelink_epf/fl0
EPDEV=/dev/framelink-ep0
HDEV=/dev/framelink0
LOOPDBG=/sys/kernel/debug/pci-epc-loop/pci-epc-loop

if [ ! -f /modules/framelink-host.ko ]; then
	t_skip "e2e" "framelink-host.ko not built"
	exit 0
fi

# The crossovers are set to what "auto" has as defaults: the kselftest's dma variant must find
# frames that go by DMA whatever the measurement at enable finds on a loaded machine (it found
# DMA never cheaper once in CI, and the dma variant skipped); 74-crossover.sh measures.
fn_create() {
	mkdir $FN || return 1
	wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	a=$(echo $FN/framelink_epf.*)
	echo 8 >$a/slots && echo 8388608 >$a/slot_size && echo "$1" >$a/dma_channels &&
		echo 65536 >$a/crossover && echo 4096 >$a/rd_crossover &&
		echo 8 >$FN/msi_interrupts && echo 8 >$FN/msix_interrupts
}

up() {
	ln -s $FN $EP/controllers/$EPC/ || return 1
	echo 1 >$EP/controllers/$EPC/start || return 1
	wait_for 100 test -c $EPDEV && wait_for 150 test -c $HDEV
}

down() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/fl0
	wait_for 50 sh -c "! test -e $EPDEV"
}

# exited_with RC WANT FILE WHO ALLOWED [ENDS]: an app's exit code RC is WANT and its status
# line names only ALLOWED errnos (tally_only)
exited_with() {
	[ "$1" = "$2" ] || { echo "# exit $1, want $2"; return 1; }
	shift 2
	tally_only "$@"
}

# bench_echo TAG SIZES COUNT: endpoint echo in the background, host bench through it
bench_echo() {
	framelink echo -d $EPDEV -t 20000 >/tmp/echo.out 2>&1 &
	epid=$!
	sleep 0.3
	out=$(timeout 300 framelink bench -d $HDEV -p $EPDEV -s "$2" -n "$3" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	kill -INT $epid 2>/dev/null
	wait_bounded $epid 10
	erc=$?
	sed 's/^/# /' /tmp/echo.out
	if [ $rc -eq 0 ]; then t_ok "$1"; else t_fail "$1" "bench exit $rc"; fi
	# SIGINT is the echo's clean end: exit 0, every frame OK
	t_check "$1: echo ended cleanly (exit $erc), no errno" \
		exited_with $erc 0 /tmp/echo.out "framelink: echo" ""
}

# oneway TAG FROM TO SIZE COUNT: verified frames FROM -> TO
oneway() {
	framelink recv -d "$3" -n "$5" -t 20000 --verify >/tmp/recv.out 2>&1 &
	rpid=$!
	sleep 0.3
	out=$(timeout 120 framelink send -d "$2" -s "$4" -n "$5" --verify 2>&1)
	src=$?
	wait $rpid
	rrc=$?
	echo "$out" | sed 's/^/# /'
	sed 's/^/# /' /tmp/recv.out
	if [ $src -eq 0 ] && [ $rrc -eq 0 ]; then t_ok "$1"; else t_fail "$1" "send $src recv $rrc"; fi
}

e2e() {
	p=$1
	ch=$2
	tag="$p dma_channels=$ch"
	t_check "$tag: load pci-epc-loop" t_insmod pci-epc-loop profile=$p
	[ -d /sys/module/framelink_epf ] || t_check "$tag: load framelink-epf" t_insmod framelink-epf
	[ -d /sys/module/framelink_host ] ||
		t_check "$tag: load framelink-host" t_insmod framelink-host nbufs=8 buf_size=2097152
	t_check "$tag: controller" wait_for 50 test -d $EP/controllers/$EPC
	t_check "$tag: function" fn_create "$ch"
	t_check "$tag: link up, both devices" up
	framelink info -d $HDEV 2>&1 | sed 's/^/# /'
	bench_echo "$tag: bench through echo" 1,4095,4096,65535,65536,1M,2M 16
	oneway "$tag: host -> endpoint verified" $HDEV $EPDEV 1000000 32
	oneway "$tag: endpoint -> host verified" $EPDEV $HDEV 1000000 32
	# endpoint -> host, frame (4 MiB) larger than the host buffer (2 MiB): both ends see
	# the error (FL_ST_TOO_BIG on the wire, -EMSGSIZE to the endpoint app); recv ends on
	# the failed buffer (--count-errors) instead of waiting out -t for a frame
	framelink recv -d $HDEV -n 1 -t 5000 --count-errors >/tmp/recv.out 2>&1 &
	rpid=$!
	sleep 0.3
	out=$(timeout 60 framelink send -d $EPDEV -s 4M -n 1 2>&1)
	src=$?
	wait $rpid
	rrc=$?
	echo "$out" | sed 's/^/# /'
	sed 's/^/# /' /tmp/recv.out
	if [ $src -ne 0 ] && [ $rrc -ne 0 ]; then t_ok "$tag: too big for the host buffer: error both ends"
	else t_fail "$tag: too big for the host buffer: error both ends" "send $src recv $rrc"; fi
	framelink stats -d $EPDEV 2>&1 | sed 's/^/# ep /'
	t_check "$tag: link down, unbind" down
	t_check "$tag: remove function" rmdir $FN
	t_check "$tag: unload pci-epc-loop" rmmod pci_epc_loop
}

e2e generic 2
e2e tegra234-edma 2
e2e tegra234 2
e2e generic 0

# Link down in the middle of a stream, then up again: the stream stops with errors, the
# endpoint app sees -ECANCELED/-ENOLINK, a new stream runs after the re-link.
t_check "linkdown: load pci-epc-loop" t_insmod pci-epc-loop profile=generic
t_check "linkdown: controller" wait_for 50 test -d $EP/controllers/$EPC
t_check "linkdown: function" fn_create 2
t_check "linkdown: link up" up
framelink echo -d $EPDEV -t 30000 >/tmp/echo.out 2>&1 &
epid=$!
sleep 0.3
rx0=$(fl_stat $HDEV rx_frames)
timeout 120 framelink bench -d $HDEV -s 2M -n 2000 >/tmp/bench.out 2>&1 &
bpid=$!
# cut a stream that runs: frames have come back, not just a process that started
t_check "linkdown: stream running" wait_for 200 streaming $bpid $((rx0 + 8))
t_check "linkdown: link down mid-stream" sh -c "echo down >$LOOPDBG/link"
wait $bpid
rc=$?
sed 's/^/# /' /tmp/bench.out | tail -5
# the host's frames in flight fail ECANCELED/ENOLINK, the removal ends the bench (ENODEV)
t_check "linkdown: bench failed (exit $rc), frames only ECANCELED/ENOLINK, ended ENODEV/ENOLINK" \
	exited_with $rc 1 /tmp/bench.out bench "ECANCELED|ENOLINK" "ENODEV|ENOLINK"
t_check "linkdown: host device gone" wait_for 100 test ! -e $HDEV
t_check "linkdown: endpoint device stays" test -c $EPDEV
t_check "linkdown: link up" sh -c "echo up >$LOOPDBG/link"
t_check "linkdown: host device back" wait_for 150 test -c $HDEV
# the same endpoint app serves on: its posted slots survived the link down
out=$(timeout 120 framelink bench -d $HDEV -s 64K,1M -n 16 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc -eq 0 ]; then t_ok "linkdown: bench after re-link, same echo"; else t_fail "linkdown: bench after re-link, same echo" "exit $rc"; fi
kill -INT $epid 2>/dev/null
wait_bounded $epid 10
rc=$?
sed 's/^/# /' /tmp/echo.out | tail -3
# the echo saw the link go down as ENOLINK/ECANCELED only; its exit says whether it saw any
n=$(($(tally_n /tmp/echo.out "framelink: echo" ENOLINK) + $(tally_n /tmp/echo.out "framelink: echo" ECANCELED)))
t_check "linkdown: echo's frames failed only ENOLINK/ECANCELED ($n), exit $rc says so" \
	exited_with $rc $((n > 0)) /tmp/echo.out "framelink: echo" "ENOLINK|ECANCELED"

# A hostile host: a random tx_prod (pci-epc-loop corrupt_bar on the doorbell) is refused,
# counted and logged; the host recovers by a re-link (reset handshake).
proto_errors() { framelink stats -d $EPDEV | awk '/protocol_errors/ {print $2}'; }
before=$(proto_errors)
t_check "hostile: corrupt tx_prod in BAR0" sh -c "echo '0 0x300 4' >$LOOPDBG/corrupt_bar"
t_check "hostile: protocol error counted" framelink-testtool stat-wait $EPDEV protocol_errors gt $before 5000
t_check "hostile: logged" sh -c "dmesg | grep -q 'protocol error from the host'"
t_check "hostile: re-link" sh -c "echo down >$LOOPDBG/link && echo up >$LOOPDBG/link"
t_check "hostile: host device back" wait_for 150 test -c $HDEV
bench_echo "hostile: bench after recovery" 4K,1M 8

# The kselftest's data-path cases of the pair (fixture fl, both variants). The endpoint's own
# fixtures run where their conditions are set up: ephard in 63, epexport in 75, import in 76.
fl_kselftest_skips kselftest 1 1
t_run_tap kselftest framelink_test -f fl

# Unbind mid-stream, the endpoint app running with its slots mapped
framelink echo -d $EPDEV -t 30000 >/tmp/echo.out 2>&1 &
epid=$!
sleep 0.5
rx0=$(fl_stat $HDEV rx_frames)
timeout 120 framelink bench -d $HDEV -s 1M -n 100000 >/tmp/bench.out 2>&1 &
bpid=$!
t_check "unbind: stream running" wait_for 200 streaming $bpid $((rx0 + 8))
t_check "unbind: mid-stream, endpoint app running" down
wait $bpid
brc=$?
sed 's/^/# /' /tmp/bench.out | tail -4
wait_bounded $epid 10
rc=$?
t_check "unbind: endpoint app ends within 10 s" test $rc -ne 137
sed 's/^/# /' /tmp/echo.out | tail -3
t_check "unbind: bench failed (exit $brc), frames only ECANCELED/ENOLINK, ended ENODEV/ENOLINK" \
	exited_with $brc 1 /tmp/bench.out bench "ECANCELED|ENOLINK" "ENODEV|ENOLINK"
t_check "unbind: echo failed (exit $rc), frames only ENOLINK/ENODEV/ECANCELED, ended ENODEV" \
	exited_with $rc 1 /tmp/echo.out "framelink: echo" "ENOLINK|ENODEV|ECANCELED" ENODEV
t_check "unbind: remove function" rmdir $FN
t_check "unbind: unload pci-epc-loop" rmmod pci_epc_loop
t_check "unload framelink-host" rmmod framelink_host
t_check "unload framelink-epf" rmmod framelink_epf
