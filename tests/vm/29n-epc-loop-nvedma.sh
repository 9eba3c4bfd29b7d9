#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop "jetpack" profile: NVIDIA's eDMA library interface (tegra_pcie_edma_*, nvedma.c),
# driven by tests/modules/loop-nvedma-test as a JetPack endpoint function calls it. Host memory
# is a buffer of the test module in System RAM, addressed by physical address.
# Covers: async and sync submits both ways with content checks, one callback per submit, input
# checks, ring full (FAIL_NOMEM), sync timeout (FAIL_TIMEOUT), stop waking a sync waiter, the
# hardware abort path (fail_dma) for async and sync channels, stop/deinit with transfers outstanding (ABORT / DEINIT, later
# submits refused) with the JetPack 6 dropped-callback quirk on (default) and off, link down
# (SUCCESS reported, nothing copied, host memory untouched), the link model pacing the engine,
# a slow callback holding a link up (the controller's line off while callbacks run), and
# initialize refused without a device node and on a non-jetpack profile.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

NT=/sys/kernel/debug/loop-nvedma-test
NV=$LOOPDBG/nvedma
T="nvedma"

nt() { echo "$*" >$NT/cmd; }
# nt_expect NAME EXPECTED CMD...: run a test module command; its result line must be EXPECTED
nt_expect() {
	name=$1
	want=$2
	shift 2
	nt "$@"
	got=$(cat $NT/result)
	if [ "$got" = "$want" ]; then t_ok "$T: $name"; else t_fail "$T: $name" "'$*' gave '$got', want '$want'"; fi
}
cbs() { awk -v k="cb_$1" '$1 == k { print $2 }' $NT/summary; }
nvs() { awk -v k="$1" '$1 == k { print $2 }' $NV/state; }
# For wait_for, which re-runs a command (not a pre-expanded test): counters read each time.
cbs_eq() { test "$(cbs $1)" -eq "$2"; }
cbs_gt() { test "$(cbs $1)" -gt "$2"; }
istat() { awk -v k="$1" '$1 == k { print $2 }' $LOOPDBG/intr; }
istat_gt() { test "$(istat $1)" -gt "$2"; }
nvs_gt() { test "$(nvs $1)" -gt "$2"; }
# rec_is ID "st S cb C VERDICT": the record of submit ID ends like that
rec_is() { grep -q "^$1 .* $2\$" $NT/records; }
rec_check() {
	if rec_is "$2" "$3"; then t_ok "$T: $1"; else
		sed 's/^/# /' $NT/records
		t_fail "$T: $1" "record $2 is not '$3'"
	fi
}
# xfers6 SLOT0: one 1-descriptor 4 KiB submit on every channel (wr0-3, rd0-1), ids ID0..ID0+5
xfers6() {
	o=$1
	for c in 0 1 2 3; do nt xfer write $c 1 4096 $(((o + c) * 65536)); done
	for c in 0 1; do nt xfer read $c 1 4096 $(((o + 4 + c) * 65536)); done
}

t_check "$T: load pci-epc-loop profile=jetpack" loop_load profile=jetpack
t_check "$T: create pci_epf_test function" func_create 0
t_check "$T: link up" link_start
t_check "$T: load loop-nvedma-test" t_insmod loop-nvedma-test
t_check "$T: quirk_drop defaults to 1 (JetPack 6) in the jetpack profile" grep -qx 1 $NV/quirk_drop

# --- initialize refusals
nt_expect "initialize without a device node -> NULL" "init null" init async 4096 0xf 0x3 nonp
nt_expect "num_descriptors not a power of two -> NULL" "init null" init async 15 0x1 0
nt_expect "num_descriptors 1 -> NULL" "init null" init async 1 0x1 0

# --- async, both directions, every channel, content checked in the callback
nt_expect "async initialize" "init ok" init async 4096 0xf 0x3
nt xfer write 0 4 65536 0
nt xfer write 1 3 4097 262144
nt xfer write 2 1 1 524288
nt xfer write 3 16 65536 1048576
nt xfer read 0 4 65536 2097152
nt xfer read 1 2 100000 2621440
t_check "$T: async: 6 callbacks" wait_for 100 cbs_eq total 6
for id in 0 1 2 3 4 5; do rec_check "async submit $id: SUCCESS, callback SUCCESS, data moved" $id "st 0 cb 0 moved"; done
t_check "$T: async: one callback per submit (not per descriptor)" test "$(cbs success)" -eq 6
nt_expect "write channel 4 -> FAIL_INVAL_INPUTS" "st 1 id 6" xfer write 4 1 4096 0
nt_expect "read channel 2 -> FAIL_INVAL_INPUTS" "st 1 id 7" xfer read 2 1 4096 0
nt_expect "nents 0 -> FAIL_INVAL_INPUTS" "st 1 id 8" xfer write 0 0 4096 0
nt deinit
nt reset

# --- sync
nt_expect "sync initialize" "init ok" init sync 4096 0xf 0x3
nt_expect "sync write returns SUCCESS" "st 0 id 0" xfer write 0 4 65536 0
rec_check "sync write: data moved when submit returns, no callback" 0 "st 0 cb -1 moved"
nt_expect "sync read returns SUCCESS" "st 0 id 1" xfer read 1 2 65536 1048576
rec_check "sync read: data moved when submit returns, no callback" 1 "st 0 cb -1 moved"
echo 0x2 >$NV/stall
t0=$(uptime_cs)
nt_expect "sync write on a stalled channel -> FAIL_TIMEOUT" "st 3 id 2" xfer write 1 1 4096 2097152
t1=$(uptime_cs)
echo "# sync timeout after $((t1 - t0)) cs (library: 4096*8/2e6 + 1000 ms)"
t_check "$T: sync timeout waits the library's 1 s (100..1000 cs, slow VM)" test $((t1 - t0)) -ge 100 -a $((t1 - t0)) -le 1000
echo 0 >$NV/stall
echo 0x1 >$NV/stall
# 2048 descriptors on the same 1 MiB: the library's timeout for them is ~9.6 s, time enough for
# the stop to arrive first even on a slow VM.
nt xfer write 0 2048 1048576 3145728 same &
bg=$!
t_check "$T: sync waiter sleeps on the stalled channel" wait_for 50 grep -q "^wr0 sync .* busy" $NV/state
t_check "$T: stop" nt stop
wait $bg
rec_check "stop wakes the sync waiter with ABORT" 3 "st 4 cb -1 pending"
nt_expect "submit after stop -> ABORT" "st 4 id 4" xfer write 2 1 4096 0
echo 0 >$NV/stall
nt deinit
nt reset

# A hardware abort under a SYNC submit: the library's abort handler takes the channel mutex the
# waiter holds, so the waiter sees no completion and returns FAIL_TIMEOUT, not ABORT.
nt_expect "sync abort: initialize" "init ok" init sync 16 0x1 0
echo 1 >$LOOPDBG/fail_dma
t0=$(uptime_cs)
nt_expect "sync abort: SYNC submit hit by a hardware abort -> FAIL_TIMEOUT" "st 3 id 0" xfer write 0 1 4096 0
t1=$(uptime_cs)
echo "# sync submit under a hardware abort returned after $((t1 - t0)) cs"
t_check "$T: sync abort: channel recovered" wait_for 50 grep -q "^wr0 sync .* st success" $NV/state
nt_expect "sync abort: next SYNC submit succeeds" "st 0 id 1" xfer write 0 1 4096 65536
rec_check "sync abort: data moved" 1 "st 0 cb -1 moved"
nt deinit
nt reset

# --- ring full: 4 descriptors hold 3 in flight
nt_expect "ring of 4 initialize" "init ok" init async 4 0x1 0
echo 0x1 >$NV/stall
nt_expect "ring: submit 1 of 3" "st 0 id 0" xfer write 0 1 4096 0
nt_expect "ring: submit 2 of 3" "st 0 id 1" xfer write 0 1 4096 65536
nt_expect "ring: submit 3 of 3" "st 0 id 2" xfer write 0 1 4096 131072
nt_expect "ring: 4th descriptor -> FAIL_NOMEM" "st 2 id 3" xfer write 0 1 4096 196608
echo 0 >$NV/stall
t_check "$T: ring: the 3 complete after unstall" wait_for 100 cbs_eq success 3
for id in 0 1 2; do rec_check "ring: submit $id moved" $id "st 0 cb 0 moved"; done
nt_expect "ring: 4 descriptors in one submit never fit -> FAIL_NOMEM" "st 2 id 4" xfer write 0 4 4096 0
nt_expect "ring: 3 descriptors in one submit fit" "st 0 id 5" xfer write 0 3 4096 262144
t_check "$T: ring: it completes" wait_for 100 rec_is 5 "st 0 cb 0 moved"
nt deinit
nt reset

# --- hardware abort (fail_dma): ABORT callback, then the channel works again
nt_expect "abort: initialize" "init ok" init async 16 0x1 0x1
a0=$(nvs hw_aborts)
echo 1 >$LOOPDBG/fail_dma
nt xfer write 0 2 4096 0
t_check "$T: abort: fail_dma -> callback ABORT" wait_for 100 rec_is 0 "st 0 cb 4 untouched"
t_check "$T: abort: counted" test "$(nvs hw_aborts)" -eq $((a0 + 1))
nt xfer write 0 1 4096 65536
t_check "$T: abort: next submit completes (library recovers)" wait_for 100 rec_is 1 "st 0 cb 0 moved"
nt deinit
nt reset

# --- stop with transfers outstanding, quirk_drop=1: JetPack 6 calls back only channels 0/1
d0=$(nvs cb_dropped)
nt_expect "quirk: initialize 4 write + 2 read" "init ok" init async 16 0xf 0x3
echo 0x3f >$NV/stall
xfers6 0
nt_expect "quirk: stop" "stop 1" stop
for id in 0 1 4 5; do rec_check "quirk on: stop -> ABORT for channel $id (wr0 wr1 rd0 rd1)" $id "st 0 cb 4 untouched"; done
sleep 1
for id in 2 3; do rec_check "quirk on: no callback ever for wr$id (JetPack 6)" $id "st 0 cb -1 pending"; done
t_check "$T: quirk on: 2 callbacks counted as dropped" test "$(nvs cb_dropped)" -eq $((d0 + 2))
nt_expect "quirk: submit after stop -> ABORT" "st 4 id 6" xfer write 0 1 4096 0
nt deinit
t_check "$T: quirk on: deinit after stop calls nothing more" test "$(cbs deinit)" -eq 0
rec_check "quirk on: wr2 still without callback after deinit" 2 "st 0 cb -1 pending"
echo 0 >$NV/stall
nt reset

# nvscic2c's configuration (4 async write channels, no read channel): only wr0 is called back
nt_expect "quirk write-only: initialize" "init ok" init async 16 0xf 0
echo 0xf >$NV/stall
for c in 0 1 2 3; do nt xfer write $c 1 4096 $((c * 65536)); done
nt stop
rec_check "quirk write-only: wr0 gets ABORT" 0 "st 0 cb 4 untouched"
for id in 1 2 3; do rec_check "quirk write-only: wr$id dropped" $id "st 0 cb -1 pending"; done
nt deinit
echo 0 >$NV/stall
nt reset

# --- quirk_drop=0 (JetPack 7 behaviour): every pending callback runs
echo 0 >$NV/quirk_drop
nt_expect "no quirk: initialize" "init ok" init async 16 0xf 0x3
echo 0x3f >$NV/stall
xfers6 0
nt_expect "no quirk: stop" "stop 1" stop
for id in 0 1 2 3 4 5; do rec_check "no quirk: stop -> ABORT for submit $id" $id "st 0 cb 4 untouched"; done
nt_expect "no quirk: submit after stop -> ABORT" "st 4 id 6" xfer read 1 1 4096 0
nt deinit
t_check "$T: no quirk: deinit after stop calls nothing more" test "$(cbs total)" -eq 6
nt reset
nt_expect "no quirk: initialize again" "init ok" init async 16 0xf 0x3
xfers6 0
nt deinit
for id in 0 1 2 3 4 5; do rec_check "no quirk: deinit -> DEINIT for submit $id" $id "st 0 cb 5 untouched"; done
echo 0 >$NV/stall
echo 1 >$NV/quirk_drop
nt reset

# --- link model: the engine is paced like the dmaengine (8 Mbit/s: 1 MiB >= 1.05 s)
nt_expect "pacing: initialize" "init ok" init async 4096 0x1 0x1
echo 8 >$LOOPDBG/rate_mbps
t0=$(uptime_cs)
nt xfer write 0 16 65536 0
t_check "$T: pacing: 1 MiB write completes" wait_for 300 rec_is 0 "st 0 cb 0 moved"
t1=$(uptime_cs)
echo "# 1 MiB at rate_mbps=8 took $((t1 - t0)) cs (model: 105 cs)"
t_check "$T: pacing: took >= 100 cs" test $((t1 - t0)) -ge 100

# --- link down: the library reports SUCCESS, the lab copies nothing and leaves host memory alone
l0=$(nvs lost_bytes)
b0=$(nvs bytes)
echo "# t=$(uptime_cs) submit"
nt xfer write 0 32 65536 1048576
t_check "$T: linkdown: 2 MiB write under way" wait_for 100 nvs_gt bytes $((b0 + 131072))
# Hold the rest of the transfer (stall) across the link down and the first snapshot, so that
# the engine moves the remaining chunks only after it: they must not reach host memory.
echo 0x1 >$NV/stall
echo "# t=$(uptime_cs) link down"
t_check "$T: linkdown: link down" sh -c "echo down >$LOOPDBG/link"
echo "# t=$(uptime_cs) link down done"
nt snap 1048576 2097152
h1=$(cat $NT/result)
echo 0 >$NV/stall
t_check "$T: linkdown: callback arrives" wait_for 100 rec_is 1 "st 0 cb 0 partial"
rec_check "linkdown: reported SUCCESS, data only partly there" 1 "st 0 cb 0 partial"
nt xfer write 0 1 65536 3145728
nt xfer read 0 1 65536 3211264
t_check "$T: linkdown: write while down -> SUCCESS, host untouched" wait_for 100 rec_is 2 "st 0 cb 0 untouched"
t_check "$T: linkdown: read while down -> SUCCESS, local untouched" wait_for 100 rec_is 3 "st 0 cb 0 untouched"
sleep 1
nt snap 1048576 2097152
h2=$(cat $NT/result)
echo "# host bytes after link down: $h1, later: $h2"
t_check "$T: linkdown: no host memory written after link down" test "$h1" = "$h2"
t_check "$T: linkdown: bytes counted as lost" test "$(nvs lost_bytes)" -gt "$l0"
echo 0 >$LOOPDBG/rate_mbps
t_check "$T: link up again" sh -c "echo up >$LOOPDBG/link"
t_check "$T: host driver bound again" wait_for 100 test -c $DEV
nt xfer write 0 1 65536 0
t_check "$T: after link up: data moves again" wait_for 100 rec_is 4 "st 0 cb 0 moved"

# --- the controller's line: the library's interrupt thread runs the callbacks with the shared
# line disabled (intr.c), so a slow callback holds a link up until it returns. This slow
# callback (1.5 s) is also the control of 70's bound on framelink's callback time.
held0=$(istat linkup_held)
e0=$(cbs entered)
nt slowcb 1500
nt xfer write 0 1 4096 0
t_check "$T: slowcb: a 1.5 s callback is running" wait_for 50 cbs_gt entered "$e0"
t_check "$T: slowcb: link down meanwhile" sh -c "echo down >$LOOPDBG/link"
t_check "$T: slowcb: link up raised while the line is off" sh -c "echo up >$LOOPDBG/link"
t_check "$T: slowcb: the link up waited for the line" wait_for 50 istat_gt linkup_held "$held0"
t_check "$T: slowcb: host driver bound after the callback" wait_for 100 test -c $DEV
nt slowcb 0
t_check "$T: slowcb: its callback completed" wait_for 50 rec_is 5 "st 0 cb 0 moved"
sed 's/^/# /' $LOOPDBG/intr
t_check "$T: slowcb: the line was off >= 1.4 s" test "$(istat off_max_us)" -ge 1400000
t_check "$T: slowcb: the callback timed >= 1.4 s (cb_max_us)" test "$(nvs cb_max_us)" -ge 1400000
sed 's/^/# /' $NV/state
nt deinit

t_check "$T: unload loop-nvedma-test" rmmod loop_nvedma_test
t_check "$T: stop and unbind" link_stop
t_check "$T: remove function" func_remove
t_check "$T: unload pci-epc-loop" loop_unload

# --- not the jetpack profile: no library
t_check "$T: load pci-epc-loop profile=generic" loop_load profile=generic
t_check "$T: load loop-nvedma-test (generic)" t_insmod loop-nvedma-test
nt_expect "generic profile: initialize -> NULL" "init null" init async 4096 0xf 0x3
t_check "$T: generic profile: refusal logged" sh -c "dmesg | grep -q 'only the jetpack profile has it'"
t_check "$T: unload loop-nvedma-test (generic)" rmmod loop_nvedma_test
t_check "$T: unload pci-epc-loop (generic)" loop_unload
