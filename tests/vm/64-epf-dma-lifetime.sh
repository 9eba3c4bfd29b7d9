#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf: DMA and memory lifetime on dw-edma (issue 8 items 4 and 7), on pci-epc-loop's
# tegra234-edma profile (dw-edma channel semantics, dma_dw_semantics=1) and tegra234 (CPU only).
#
# A  an abort (fail_dma) leaves the descriptors queued behind it on the channel: dw-edma starts
#    them only at the next issue_pending. Every frame must still complete (one with -EIO) and the
#    endpoint counts one DMA abort.
# B  host reset while a write DMA is busy and cannot finish (stalled channel, longer than
#    dw-edma's 5 s synchronize bound): the endpoint must not give the slot back nor report RESET
#    while the DMA may still write; it leaks the transfer (dma_leaked) and recovers once the
#    channel is provably idle; the next generation streams verified frames. The host's reset
#    fails (no RESET within 2 s): it clears Bus Master Enable before its buffers go back to the
#    app, and the DMA that runs on after the stall reaches no host memory (issue 8 item 6).
# C  unbind while a DMA is busy (slow link): bounded, no splat, the engine idle afterwards,
#    rebinding streams verified frames.
# D  link down while DMAs are busy on a slow link: no hang, verified frames after link up.
# E  tegra234 (CPU copies only): a host reset while 8 MiB frames are being copied by the CPU is
#    honoured within the host's 2 s bound (the copy is bounded per engine pass).
# F  a channel hung across unbind (issue 27 item 3.3): the write DMA stalls and stays stalled
#    through link down (the lab's stall_hold: a hung engine), the function is unbound and the
#    channel leaked. It holds framelink-epf loaded: rmmod fails while it is hung; once it is
#    idle it is given back (dw-edma drops a STOPped channel's descriptors without callbacks:
#    framelink polls), framelink-epf unloads and so does the lab. Before (8ddbf0a): rmmod
#    succeeded under the running channel and the channel was never given back (the lab could
#    not unload).
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

FN=$EP/functions/framelink_epf/dl0

if [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "dma-lifetime: framelink-epf" "framelink-epf.ko not built"
	exit 0
fi

# up PROFILE SLOT_SIZE DMA_CHANNELS [HOST PARAMS...]; $SLOTS slots (default 8), under the
# J784S4 root (the boards' pair; the root plays no part in the endpoint's DMA). The crossovers
# are set (the defaults "auto" had before, 64 KiB writes, 4 KiB reads), not measured: the cases
# stall, fail and slow the DMA of frames they need to go by DMA
up() {
	local _p=$1 _sz=$2 _ch=$3
	shift 3
	fl_start "profile=$_p rc_profile=j784s4" "$*" slots=${SLOTS:-8} slot_size=$_sz ring_entries=16 \
		dma_channels=$_ch crossover=65536 rd_crossover=4096
}

# run_case TAG WHAT BODY UP_ARGS...: "TAG: WHAT" brings the pair up (up UP_ARGS), BODY runs
# only when it came up, "TAG: tear down" either way
run_case() {
	local _tag=$1 _what=$2 _body=$3
	shift 3
	if t_check "$_tag: $_what" up "$@"; then
		$_body
	fi
	t_check "$_tag: tear down" fl_down
}

# echo_bench NAME SIZES LOG: the endpoint echoes (its output to LOG) while the host's bench
# of 50 round trips of SIZES is the check NAME
echo_bench() {
	framelink echo -d $EDEV >$3 2>&1 &
	local _epid=$!
	t_check "$1" framelink bench -d $HDEV -s $2 -n 50
	kill $_epid 2>/dev/null
	wait $_epid
}

# busy TAG RATE_MBPS SIZE LOG_PREFIX: the link slowed to RATE_MBPS, an echo on the endpoint
# ($epid) and an endless bench of SIZE frames on the host ($bpid); "TAG: DMA busy" once a
# channel is active
busy() {
	echo $2 >$LOOPDBG/rate_mbps
	framelink echo -d $EDEV >$4-echo.log 2>&1 &
	epid=$!
	framelink bench -d $HDEV -s $3 -n 1000000 >$4-bench.log 2>&1 &
	bpid=$!
	t_check "$1: DMA busy" wait_for 100 dma_active
}

dma_active() { grep -q ' active ' $LOOPDBG/channels; }
dma_idle() { ! dma_active; }
# lstat NAME: a counter of the loop's debugfs stats
lstat() { awk -v k="$1" '$1 == k { print $2 }' $LOOPDBG/stats; }
logs() { sed "s/^/# $1: /" $2; }

# ---------------------------------------------------------------- A: abort with queued work
case_a() {
	a0=$(fl_stat $EDEV dma_aborts)
	framelink recv -d $EDEV -n 0 -t 30000 >/tmp/a-recv.log 2>&1 &
	rpid=$!
	sleep 0.5
	# the read channel holds the first frame; the other seven queue behind it
	echo 3 >$LOOPDBG/stall
	framelink send -d $HDEV -s 256K -n 8 -b 8 >/tmp/a-send.log 2>&1 &
	spid=$!
	t_check "A: first frame running, the rest queued" \
		wait_for 100 grep -q 'read active.*queued 7' $LOOPDBG/channels
	sed 's/^/# /' $LOOPDBG/channels
	# the frame after the running one fails: dw-edma aborts it and leaves six queued
	echo 1 >$LOOPDBG/fail_dma
	echo 0 >$LOOPDBG/stall
	wait_bounded $spid 40
	rc=$?
	logs send /tmp/a-send.log
	t_check "A: sender ended within 40 s" test $rc -ne 137
	t_check "A: no frame stuck behind the abort" \
		sh -c "! grep -q 'no completion' /tmp/a-send.log"
	t_check "A: exactly one frame failed with EIO" \
		test "$(grep -c 'Input/output error' /tmp/a-send.log)" = 1
	a1=$(fl_stat $EDEV dma_aborts)
	t_check "A: endpoint counted one DMA abort ($a0 -> $a1)" test $((a1 - a0)) -eq 1
	echo 0 >$LOOPDBG/fail_dma
	kill $rpid 2>/dev/null
	wait $rpid
	echo_bench "A: stream after the abort" 4K,256K /tmp/a-echo.log
}
run_case A "tegra234-edma up, one channel per direction" case_a \
	tegra234-edma 4194304 1 nbufs=8 buf_size=4194304

# ---------------------------------------------------------------- B: reset, DMA cannot stop
# one write channel: dw-edma's synchronize gives up after 5 s, well before the sender's 10 s
case_b() {
	l0=$(fl_stat $EDEV dma_leaked)
	framelink recv -d $HDEV -n 0 -t 60000 >/tmp/b-hrecv.log 2>&1 &
	hpid=$!
	sleep 0.5
	# stall the write channels: the frame's DMA starts and cannot end
	echo 60 >$LOOPDBG/stall
	framelink send -d $EDEV -s 1M -n 1 >/tmp/b-send.log 2>&1 &
	spid=$!
	t_check "B: write DMA running (stalled)" wait_for 100 grep -q 'write active' $LOOPDBG/channels
	# host reset: the last close of the host device resets the queue
	kill $hpid
	wait_bounded $hpid 20
	t_check "B: host app closed (queue reset) within 20 s" test $? -ne 137
	# dw-edma's synchronize gives up after 5 s; the endpoint app gets its slot back only
	# when the DMA is provably over
	wait_bounded $spid 15
	src=$?
	logs send /tmp/b-send.log
	# the sender ends by itself at its 10 s completion bound, its frame never completed (a
	# sender killed at 15 s, 137, would have hung)
	t_check "B: sender ended by itself (exit $src): no completion within 10 s, slot held" \
		sh -c "[ $src = 1 ] && grep -q 'no completion in 10000 ms, 0/1 done' /tmp/b-send.log"
	sed 's/^/# /' $LOOPDBG/channels
	if dma_active && grep -q 'Operation canceled' /tmp/b-send.log; then
		t_fail "B: slot not returned while its DMA may still write" "ECANCELED with DMA active"
	else
		t_ok "B: slot not returned while its DMA may still write"
	fi
	l1=$(fl_stat $EDEV dma_leaked)
	t_check "B: endpoint counted the leaked transfer ($l0 -> $l1)" test $((l1 - l0)) -eq 1
	# issue 8 item 6: the host did not wait for a stop that cannot come; it took bus mastering
	# away before the buffers went back to the app, so what the stalled DMA moves next must not
	# reach them: the lab refuses the engine's requests while Bus Master Enable is clear
	t_check "B: host cleared bus mastering before giving its buffers back" \
		sh -c "dmesg | grep -q 'endpoint did not stop: bus mastering disabled before giving its buffers back'"
	bb0=$(lstat bme_blocked)
	db0=$(lstat dma_bytes)
	# the DMA ends; the endpoint sees the channel idle and only then reports RESET
	dmesg -c >/dev/null
	echo 0 >$LOOPDBG/stall
	t_check "B: DMA idle after the stall" wait_for 100 dma_idle
	echo "# B: after the stall: dma_bytes $db0 -> $(lstat dma_bytes), bme_blocked ${bb0:-none} -> $(lstat bme_blocked)"
	t_check "B: the DMA after the failed reset moved no byte" test "$(lstat dma_bytes)" = "$db0"
	t_check "B: the lab refused it: Bus Master Enable clear" \
		test "$(lstat bme_blocked)" -gt "${bb0:-0}"
	# a host queue that stopped is enabled again by the next last close
	sleep 1
	framelink info -d $HDEV >/dev/null
	dmesg | grep framelink | sed 's/^/# /'
	t_check "B: endpoint came back (host re-enabled the queue)" \
		sh -c "dmesg | grep -q 'queue reset, endpoint generation'"
	# the leaked slot (the app's first) is never the app's again
	framelink send -d $EDEV -s 4K -n 1 >/tmp/b-send3.log 2>&1
	logs send /tmp/b-send3.log
	t_check "B: the leaked slot stays the engine's (SUBMIT -> EBUSY)" \
		grep -q 'Device or resource busy' /tmp/b-send3.log
	# the next generation, on a fresh binding: the slot memory is freed only now
	t_check "B: unbind after the DMA ended" fl_unbind
	t_check "B: nothing leaked at unbind" sh -c "! dmesg | grep -q 'never stopped'"
	t_check "B: rebind" fl_bind
	framelink recv -d $HDEV -n 32 --verify -t 30000 >/tmp/b-hrecv.log 2>&1 &
	hpid=$!
	sleep 1
	framelink send -d $EDEV -s 1M -n 32 --verify >/tmp/b-send2.log 2>&1
	t_check "B: next generation sends 32 frames" test $? -eq 0
	wait_bounded $hpid 40
	rc=$?
	logs recv /tmp/b-hrecv.log
	t_check "B: host received 32 verified frames of the new generation" test $rc -eq 0
}
run_case B "tegra234-edma up" case_b tegra234-edma 1048576 1 nbufs=8 buf_size=1048576

# ---------------------------------------------------------------- C: unbind while busy
case_c() {
	busy C 80 4M /tmp/c
	sed 's/^/# /' $LOOPDBG/channels
	t0=$(uptime_cs)
	fl_unbind &
	upid=$!
	wait_bounded $upid 30
	rc=$?
	t1=$(uptime_cs)
	echo "# unbind took $(((t1 - t0) * 10)) ms"
	t_check "C: unbind returned within 30 s" test $rc -ne 137
	sed 's/^/# /' $LOOPDBG/channels
	t_check "C: no DMA running after unbind" dma_idle
	for p in $bpid $epid; do
		kill $p 2>/dev/null
		wait_bounded $p 20
	done
	echo 0 >$LOOPDBG/rate_mbps
	t_check "C: rebind" fl_bind
	echo_bench "C: verified round trips after rebind" 4K,1M /tmp/c-echo.log
}
run_case C "tegra234-edma up" case_c tegra234-edma 4194304 2 nbufs=8 buf_size=4194304

# ---------------------------------------------------------------- D: link down while busy
case_d() {
	busy D 200 1M /tmp/d
	sleep 1
	echo down >$LOOPDBG/link
	wait_bounded $bpid 20
	t_check "D: host app ended within 20 s" test $? -ne 137
	kill $epid 2>/dev/null
	wait_bounded $epid 10
	t_check "D: endpoint app ended within 10 s" test $? -ne 137
	t_check "D: DMA idle after link down" wait_for 50 dma_idle
	echo 0 >$LOOPDBG/rate_mbps
	echo up >$LOOPDBG/link
	t_check "D: host device back" wait_for 100 test -c $HDEV
	echo_bench "D: verified round trips after link up" 4K,1M /tmp/d-echo.log
}
run_case D "tegra234-edma up" case_d tegra234-edma 4194304 2 nbufs=8 buf_size=4194304

# ---------------------------------------------------------------- E: CPU path, reset bound
case_e() {
	framelink recv -d $EDEV -n 0 -t 60000 >/tmp/e-recv.log 2>&1 &
	rpid=$!
	sleep 0.5
	framelink send -d $HDEV -s 8M -n 1000000 -b 16 >/tmp/e-send.log 2>&1 &
	spid=$!
	sleep 3
	dmesg -c >/dev/null
	t0=$(uptime_cs)
	kill -9 $spid
	wait_bounded $spid 20
	t1=$(uptime_cs)
	ms=$(((t1 - t0) * 10))
	echo "# host reset (close after SIGKILL) took $ms ms"
	dmesg | grep framelink | sed 's/^/# /'
	t_check "E: host app closed within 20 s" test $ms -lt 20000
	t_check "E: endpoint honoured the reset within the host's 2 s bound" \
		sh -c "! dmesg | grep -q 'did not reset'"
	kill $rpid 2>/dev/null
	wait $rpid
	framelink recv -d $EDEV -n 8 --verify -t 30000 >/tmp/e-recv.log 2>&1 &
	rpid=$!
	sleep 0.5
	t_check "E: 8 MiB frames after the reset" framelink send -d $HDEV -s 8M -n 8 --verify
	wait_bounded $rpid 40
	t_check "E: endpoint verified them" test $? -eq 0
}
SLOTS=16
run_case E "tegra234 (CPU copies) up" case_e tegra234 8388608 2 nbufs=16 buf_size=8388608

# ---------------------------------------------------------------- F: channel hung across unbind
case_f() {
	framelink recv -d $HDEV -n 0 -t 60000 >/tmp/f-hrecv.log 2>&1 &
	hpid=$!
	sleep 0.5
	echo 1 >$LOOPDBG/stall_hold
	echo 60 >$LOOPDBG/stall
	framelink send -d $EDEV -s 1M -n 1 >/tmp/f-send.log 2>&1 &
	spid=$!
	t_check "F: write DMA running (stalled)" wait_for 100 grep -q 'write active' $LOOPDBG/channels
	t_check "F: unbound with the channel hung" fl_unbind 300
	kill $hpid $spid 2>/dev/null
	wait_bounded $hpid 20
	wait_bounded $spid 20
	dmesg | grep -e 'never stopped' -e 'not stopped' | sed 's/^/# /'
	t_check "F: said: channel leaked, the module stays loaded until it stops" \
		sh -c "dmesg | grep -q 'module stays loaded until it stops'"
	rmdir $FN
	rmmod framelink_host
	t_check "F: framelink-epf does not unload while the channel is hung" \
		sh -c "! rmmod framelink_epf 2>/dev/null"
	t_check "F: the channel is still hung" grep -q 'write active' $LOOPDBG/channels
	echo 0 >$LOOPDBG/stall
	echo 0 >$LOOPDBG/stall_hold
	t_check "F: the channel ended" wait_for 100 dma_idle
	t_check "F: the leaked channel was given back once idle" \
		wait_for 50 sh -c "dmesg | grep -q 'stopped after its endpoint went away: given back'"
	t_check "F: framelink-epf unloads after that" wait_for 50 rmmod framelink_epf
	# the slots stay allocated in the lab's pool for good (the channel could have written
	# them); dma-debug does not track allocations from a device's own pool
	t_check "F: the lab unloads (no channel held)" rmmod pci_epc_loop
}
if t_check "F: tegra234-edma up" up tegra234-edma 1048576 1 nbufs=8 buf_size=1048576; then
	case_f
else
	fl_down
fi
