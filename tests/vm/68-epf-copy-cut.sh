#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A link loss that lands inside an endpoint transfer (issue 8 item 4): the frame is neither
# resumed into host memory nor failed alone with EIO; frames in flight complete ECANCELED on
# the endpoint, as the ABI says for a link down.
#  cpu: every frame a CPU copy (profile tegra234 has no DMA channels; on generic the
#       crossovers are above the frame size) in 64 KiB steps per engine pass; fl-delay holds
#       the window map of one step while the cut comes, so it lands inside a copy; the
#       endpoint's "cut at" line proves it did. The engine stops the queue itself (before:
#       that frame completed EIO).
#  dma: tegra234-edma with the link model at 800 Mbit/s; every channel stalled until one
#       holds a transfer, then the cut aborts it; the endpoint holds a failed transfer
#       FL_EP_FAIL_HOLD_MS for the link-down event that follows (before: EIO when the engine
#       published first).
# Before issue 28 the cut was timed after a transfer started, up to 5 tries, and could skip.
# The cut is a link down, then an unbind; the root is the j784s4 (the boards' pair: the host
# function stays in place across the cut, no hot-plug).
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-host.ko ] || [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "epf copy cut" "framelink modules not built"
	exit 0
fi

# up PROFILE KIND: cpu: every frame a CPU copy of at most 64 KiB per engine pass; dma: DMA
# at the crossovers "auto" had as defaults (set, not measured: the slow link paces the DMA the
# measurement at enable would time) with a slow link
up() {
	if [ $2 = cpu ]; then
		fl_start "profile=$1 rc_profile=j784s4" "" slots=8 slot_size=4194304 crossover=16777216 \
			rd_crossover=16777216 cpu_pass_bytes=65536
	else
		fl_modules "profile=$1 rc_profile=j784s4" && echo 800 >$LOOPDBG/rate_mbps &&
			fl_fn_create slots=8 slot_size=4194304 crossover=65536 rd_crossover=4096 &&
			fl_bind
	fi
}

hstat() { fl_stat $HDEV $1 2>/dev/null; }
estat() { fl_stat $EDEV $1 2>/dev/null; }
link_down() { echo down >$LOOPDBG/link; }
link_up() { echo up >$LOOPDBG/link && wait_for 100 test -c $HDEV; }
# cut_logs KIND: endpoint log lines of a transfer a link loss cut: a CPU copy ("cut at";
# before issue 8 item 4 the same event logged "failed: -67") or a DMA transfer ("DMA: CHAN
# transfer failed: result R" from dmaengine, "DMA: eDMA DIR channel N transfer failed" from
# the NVIDIA library)
cut_logs() {
	if [ $1 = cpu ]; then
		dmesg | grep 'CPU copy ' | grep -c -e ' cut at ' -e 'failed: -67'
	else
		dmesg | grep -c 'DMA: .* transfer failed'
	fi
}
cut_logged() { [ "$(cut_logs $1)" -gt $2 ]; }
# moved COUNTER VALUE: the endpoint counter is no longer VALUE
moved() { [ "$(estat $1)" != "$2" ]; }

# only_cancelled FILE [ERRNO]: the echo tally names no errno but ECANCELED/ENOLINK (and
# ERRNO: ENODEV after an unbind, the documented answer of every later call) - no EIO
only_cancelled() {
	local _line
	_line=$(grep "^framelink: echo: status:" $1 | tail -1)
	echo "# $_line"
	! echo "${_line#*status:}" | tr ' ' '\n' | grep -v -e '^OK=' -e '^ECANCELED=' \
		-e '^ENOLINK=' -e "^${2:-OK}=" -e '^end=' -e '^$' | grep -q .
}

# hold_inside KIND: hold a transfer of KIND in flight (issue 28 item 3: the cut lands inside
# one by construction, not by a race): cpu: fl-delay holds the engine's next window map of a
# copy chunk (pci_epc_map_addr from the fl-ep0 thread; the completion area is mapped only at
# enable) 300 ms, the map then meets the cut; dma: every channel stalled until one holds a
# transfer (the lab's channels file: active and stalled), the cut releases it (no
# stall_hold) and it runs into the link down. release_hold KIND undoes it.
hold_inside() {
	if [ $1 = cpu ]; then
		echo 1 >/sys/module/fl_delay/parameters/armed &&
			wait_for 100 grep -qx 1 /sys/module/fl_delay/parameters/waiting
	else
		echo 0xffff >$LOOPDBG/stall &&
			wait_for 100 grep -q ' active .* stalled$' $LOOPDBG/channels
	fi
}
release_hold() {
	if [ $1 = cpu ]; then
		echo 0 >/sys/module/fl_delay/parameters/armed
	else
		echo 0 >$LOOPDBG/stall
	fi
}

# cut NAME KIND CUT RESTORE [ERRNO]: a 4 MiB echo stream, a transfer of KIND held in flight,
# CUT, then the assertions and RESTORE. The endpoint logs the transfer the cut reached ("cut
# at" for a copy, "transfer failed" for a DMA); a cut the link-down event reaches first would
# stop the engine between two chunks, also ECANCELED, but not the path under test.
cut() {
	local name=$1 kind=$2 erc=0 cuts0 aborts0
	shift 2
	set -- "$name" "$@"
	cuts0=$(cut_logs $kind)
	aborts0=$(estat dma_aborts)
	framelink echo -d $EDEV >/tmp/cut-echo.out 2>&1 &
	epid=$!
	rx0=$(hstat rx_frames)
	framelink bench -d $HDEV -s 4M -n 100000 >/tmp/cut-bench.out 2>&1 &
	bpid=$!
	wait_for 600 streaming $bpid $((rx0 + 2)) || echo "# $1: stream did not start"
	t_check "$1: a $kind transfer held in flight" hold_inside $kind
	$2
	release_hold $kind
	# the held transfer meets the cut only when the hold ends (300 ms for a copy step): the
	# endpoint logs it, stops the queue and queues that frame ECANCELED; the endpoint app
	# gets a moment to reap it before it is stopped (its REAP is woken at once)
	t_check "$1: the cut landed inside the $kind transfer (logged)" \
		wait_for 100 cut_logged $kind $cuts0
	sleep 2
	wait_bounded $bpid 20
	t_check "$1: the host app ended within 20 s" test $? -ne 137
	# after an unbind the endpoint app ends by itself once REAP has handed out what was
	# queued (then ENODEV): let it drain, as an app would, before the kill
	[ -z "$4" ] || wait_for 100 sh -c "! kill -0 $epid 2>/dev/null"
	kill $epid 2>/dev/null
	wait_bounded $epid 10
	erc=$?
	t_check "$1: the endpoint app ended within 10 s" test $erc -ne 137
	dmesg | grep -e ' cut at ' -e 'link lost during a CPU copy' -e 'DMA: .* failed' |
		tail -2 | sed 's/^/# /'
	# the tools survive a zapped mapping (libframelink's SIGBUS guard): the tally is there
	t_check "$1: that transfer's frame ECANCELED" \
		grep -q "^framelink: echo: status:.*ECANCELED=" /tmp/cut-echo.out
	t_check "$1: endpoint frames only ECANCELED/ENOLINK, no EIO" only_cancelled /tmp/cut-echo.out $4
	[ $kind = dma ] || t_check "$1: a cut copy is not counted as a DMA abort" \
		test "$(estat dma_aborts)" = "$aborts0" -o -z "$(estat dma_aborts)"
	t_check "$1: back" $3
	framelink echo -d $EDEV >/tmp/cut-echo.out 2>&1 &
	epid=$!
	t_check "$1: streaming works again" framelink bench -d $HDEV -s 4K,1M -n 8
	kill $epid
	wait $epid 2>/dev/null
}

for pk in tegra234:cpu generic:cpu tegra234-edma:dma; do
	p=${pk%%:*}
	k=${pk#*:}
	if ! t_check "$p: loop, framelink-epf, framelink-host up ($k)" up $p $k; then
		fl_down >/dev/null 2>&1
		continue
	fi
	if [ $k = cpu ] && ! t_check "$p: load fl-delay (pci_epc_map_addr of fl-ep0, 300 ms)" \
		t_insmod fl-delay func=pci_epc_map_addr comm=fl-ep0 delay_ms=300 armed=0; then
		fl_down
		continue
	fi
	cut "$p: link down inside a $k transfer" $k link_down link_up
	cut "$p: EPF unbound inside a $k transfer" $k fl_unbind fl_bind ENODEV
	[ $k = dma ] || t_check "$p: unload fl-delay" rmmod fl_delay
	t_check "$p: tear down and unload" fl_down
done

# A REAP waiting across a link cut: the endpoint app submits one frame per slot (none is
# taken), waits in REAP, and the link goes down while fl-delay holds fl_q_cancel_submitted()
# for 2 s. The first REAP that returns must carry the 8 frames ECANCELED. Before, the stop
# marked the link epoch first and cancelled after: a REAP slice ending in between said
# ENOLINK with nothing queued, the frames' ECANCELED came later (a CI run of the DMA cut
# above: "ENOLINK=1" and no ECANCELED).
if [ -f /modules/fl-delay.ko ] &&
	t_check "reap across a cut: loop (tegra234), framelink-epf, framelink-host up" \
		fl_start "profile=tegra234 rc_profile=j784s4" "" slots=8 slot_size=65536; then
	rm -f /tmp/reapcut.ready
	framelink-testtool reap-cut $EDEV /tmp/reapcut.ready >/tmp/reapcut.out 2>&1 &
	rpid=$!
	t_check "reap across a cut: 8 frames submitted, REAP waiting" \
		wait_for 100 test -e /tmp/reapcut.ready
	t_check "reap across a cut: load fl-delay (fl_q_cancel_submitted, 2 s)" \
		t_insmod fl-delay func=fl_q_cancel_submitted delay_ms=2000 armed=1
	t_check "reap across a cut: link down" link_down
	wait_bounded $rpid 30
	rrc=$?
	sed 's/^/# /' /tmp/reapcut.out
	t_check "reap across a cut: the first REAP gives the 8 frames ECANCELED" \
		sh -c "[ $rrc -eq 0 ] && grep -q 'first REAP 8 completions, ECANCELED 8' /tmp/reapcut.out"
	t_check "reap across a cut: unload fl-delay" rmmod fl_delay
	t_check "reap across a cut: link up" link_up
	t_check "reap across a cut: tear down and unload" fl_down
fi

# Frames queued at an unbind are reported, not lost: the endpoint app submits one frame per
# slot (no host app posts a buffer, so none is taken) and reaps nothing until the function is
# unbound; then REAP hands out every frame ECANCELED and only then says ENODEV. Before, the
# unbind dropped the queued completions and REAP said ENODEV at once (the race the DMA cut
# above lost in a CI run: its frame's ECANCELED never reached the app).
if t_check "queued at unbind: loop (tegra234), framelink-epf, framelink-host up" \
	fl_start "profile=tegra234 rc_profile=j784s4" "" slots=8 slot_size=65536; then
	rm -f /tmp/hold.ready /tmp/hold.go
	framelink-testtool hold $EDEV /tmp/hold.ready /tmp/hold.go submit >/tmp/hold.out 2>&1 &
	hpid=$!
	t_check "queued at unbind: 8 frames submitted, none reaped" \
		wait_for 100 test -e /tmp/hold.ready
	t_check "queued at unbind: function unbound" fl_unbind
	touch /tmp/hold.go
	wait_bounded $hpid 30
	hrc=$?
	sed 's/^/# /' /tmp/hold.out
	t_check "queued at unbind: REAP gives 8 frames ECANCELED, then ENODEV" \
		grep -q 'reaped ECANCELED 8 other 0, then reap ENODEV' /tmp/hold.out
	t_check "queued at unbind: every slot page faults (SIGBUS), none returns data (exit $hrc)" \
		sh -c "[ $hrc = 0 ] && grep -q ' intact 0 changed 0;' /tmp/hold.out"
	fl_bind
	t_check "queued at unbind: tear down and unload" fl_down
fi
