#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf's DMA backends (issue 9 section 2): which one a binding takes, what it reports,
# and the NVIDIA eDMA library backend on the jetpack profile, whose library pci-epc-loop
# implements after JetPack 6's (4 write + 2 read channels, no dmaengine, no per-transfer
# terminate, deinit drops the pending callbacks of channels other than 0 and 1).
#
# A  auto on each profile: tegra234-edma -> dmaengine, tegra234 -> cpu, jetpack -> nvidia-edma;
#    boot log line, `framelink info` backend, channel counts (the library has 2 read channels).
# B  jetpack: 4 MiB frames both ways move through the library (its byte counter covers them).
# C  configfs xfer_backend forces one: dmaengine on jetpack and nvidia-edma on tegra234-edma
#    find no channels -> cpu, and frames still flow.
# D  jetpack, 4 write channels, host reset while the parts on write channels 2 and 3 are stalled:
#    JetPack 6's deinit drops their callbacks; the endpoint must not wait for them (no hang, no
#    leak), the frame is ECANCELED, and the next generation runs on a library initialized again.
# E  jetpack: link down and up mid-stream; the stream after link up moves through the library.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "backends: framelink-epf" "framelink-epf.ko not built"
	exit 0
fi

NVSTATE=$LOOPDBG/nvedma/state

# up PROFILE ATTR=VALUE...: the pair under the generic root, 8 slots of 4 MiB unless overridden
# (B, D, E set the crossovers "auto" had as defaults, XO: their frames must go by DMA whatever
# the measurement at enable finds; 74-crossover.sh measures through the library)
XO="crossover=65536 rd_crossover=4096"
up() {
	local _p=$1
	shift
	dmesg -c >/dev/null
	fl_start "profile=$_p rc_profile=generic-rc" "" slots=8 slot_size=4194304 "$@"
}

einfo() { framelink info -d $EDEV | sed -n "s/^$1: *//p"; }
nvstat() { awk -v k="$1" '$1 == k { print $2 }' $NVSTATE; }
logs() { sed "s/^/# $1: /" $2; }


# backend NAME LINE INFO: the boot log says LINE, `framelink info` says INFO
backend() {
	t_check "$1: log 'transfers: $2'" sh -c "dmesg | grep -q 'transfers: $2'"
	t_check "$1: framelink info backend $3" test "$(einfo backend)" = "$3"
}

# ---------------------------------------------------------------- A: auto on each profile
if t_check "A: tegra234-edma up" up tegra234-edma; then
	backend "A: tegra234-edma" "dmaengine, 2 read + 2 write DMA channels" dmaengine
fi
t_check "A: tegra234-edma tear down" fl_down
if t_check "A: tegra234 up" up tegra234; then
	backend "A: tegra234" "cpu, 0 read + 0 write DMA channels" cpu
fi
t_check "A: tegra234 tear down" fl_down
if t_check "A: jetpack, 4 channels asked, up" up jetpack dma_channels=4; then
	backend "A: jetpack" "nvidia-edma, 2 read + 4 write DMA channels" nvidia-edma
	t_check "A: jetpack: the library is initialized" grep -q '^cookie initialized' $NVSTATE
fi
t_check "A: jetpack tear down" fl_down
t_check "A: jetpack: the library was deinitialized at unbind" \
	sh -c "dmesg | grep -q 'eDMA library: deinitialized'"

# ---------------------------------------------------------------- B: frames through the library
if t_check "B: jetpack up" up jetpack $XO; then
	backend "B: jetpack" "nvidia-edma, 2 read + 2 write DMA channels" nvidia-edma
	b0=$(nvstat bytes)
	d0=$(fl_stat $EDEV dma_transfers)
	t_check "B: 20 round trips of 4 MiB, verified" fl_stream 20 4M 180
	b1=$(nvstat bytes)
	d1=$(fl_stat $EDEV dma_transfers)
	echo "# B: library bytes $b0 -> $b1, endpoint DMA frames $d0 -> $d1"
	# 20 frames each way of 4 MiB: 167772160 bytes at least, all moved by the library
	t_check "B: the library moved both directions' frames" \
		test $((b1 - b0)) -ge 167772160
	t_check "B: every frame went by DMA ($((d1 - d0)) >= 40)" test $((d1 - d0)) -ge 40
	t_check "B: no submit refused" test "$(nvstat submit_fail_nomem)" = 0
	# The library calls framelink's callback in its interrupt thread with the controller's
	# shared line off (nvedma.c, intr.c): it must stay short. Wall time of the longest of
	# these callbacks, preemption of the TCG guest included (448 us on 2026-12-03); the bound
	# (10 ms) leaves room for a slowed host, not for a callback that sleeps or copies a frame.
	# 29n's slow callback (1.5 s) is the control that misses it.
	cbmax=$(nvstat cb_max_us)
	echo "# B: longest framelink callback ${cbmax:-?} us; line: $(tr '\n' ' ' <$LOOPDBG/intr)"
	t_check "B: framelink's eDMA callback stays short (${cbmax:-?} us < 10000 us)" \
		test "${cbmax:-10000}" -lt 10000
fi
t_check "B: tear down" fl_down

# ---------------------------------------------------------------- C: forced backends
# force NAME PROFILE BACKEND: xfer_backend=BACKEND finds no channel there -> cpu, frames flow
force() {
	if t_check "C: $1 up" up $2 xfer_backend=$3; then
		backend "C: $1" "cpu, 0 read + 0 write DMA channels" cpu
		t_check "C: $1: 4 round trips of 64 KiB by CPU" fl_stream 4 64K 180
	fi
	t_check "C: $1 tear down" fl_down
}
force "dmaengine on jetpack" jetpack dmaengine
force "nvidia-edma on tegra234-edma" tegra234-edma nvidia-edma

# ---------------------------------------------------------------- D: reset, callbacks dropped
# held23: write channels 2 and 3 each hold a descriptor not yet retired (w != r)
held23() {
	awk '($1 == "wr2" || $1 == "wr3") && $6 != $10 { n++ } END { exit n != 2 }' $NVSTATE
}
case_d() {
	local q0 q1
	q0=$(nvstat cb_dropped)
	framelink recv -d $HDEV -n 0 -t 60000 >/tmp/d-hrecv.log 2>&1 &
	hpid=$!
	sleep 0.5
	# write channels 2 and 3 stall: a 1 MiB frame is split over the 4 write channels
	echo 12 >$LOOPDBG/nvedma/stall
	framelink send -d $EDEV -s 1M -n 1 >/tmp/d-send.log 2>&1 &
	spid=$!
	t_check "D: write channels 2 and 3 hold a part" \
		wait_for 100 held23
	grep -E '^(wr|rd)[0-9] ' $NVSTATE | sed 's/^/# D: /'
	# the last close of the host device resets the queue
	kill $hpid
	wait_bounded $hpid 20
	t_check "D: host app closed (queue reset) within 20 s" test $? -ne 137
	wait_bounded $spid 20
	t_check "D: the endpoint's frame ended within 20 s" test $? -ne 137
	logs send /tmp/d-send.log
	t_check "D: the frame was ECANCELED" grep -q 'Operation canceled' /tmp/d-send.log
	q1=$(nvstat cb_dropped)
	t_check "D: the library dropped callbacks ($q0 -> $q1), as JetPack 6 does" \
		test "$q1" -gt "$q0"
	t_check "D: nothing leaked" test "$(fl_stat $EDEV dma_leaked)" = 0
	echo 0 >$LOOPDBG/nvedma/stall
	sleep 1
	framelink info -d $HDEV >/dev/null
	t_check "D: library initialized again" grep -q '^cookie initialized' $NVSTATE
	b0=$(nvstat bytes)
	framelink recv -d $HDEV -n 16 --verify -t 30000 >/tmp/d-hrecv2.log 2>&1 &
	hpid=$!
	sleep 1
	t_check "D: next generation sends 16 verified 1 MiB frames" \
		framelink send -d $EDEV -s 1M -n 16 --verify
	wait_bounded $hpid 30
	t_check "D: host received them verified" test $? -eq 0
	logs recv /tmp/d-hrecv2.log
	t_check "D: through the library ($b0 -> $(nvstat bytes))" \
		test $(($(nvstat bytes) - b0)) -ge 16777216
}
if t_check "D: jetpack, 4 write channels, up" up jetpack dma_channels=4 slot_size=1048576 $XO; then
	case_d
fi
echo 0 >$LOOPDBG/nvedma/stall 2>/dev/null
t_check "D: tear down" fl_down

# ---------------------------------------------------------------- E: link down and up
case_e() {
	framelink echo -d $EDEV >/tmp/e-echo.log 2>&1 &
	epid=$!
	framelink bench -d $HDEV -s 4M -n 0 >/tmp/e-bench.log 2>&1 &
	bpid=$!
	sleep 2
	t_check "E: framelink info says the endpoint's link is up" \
		sh -c "framelink info -d $EDEV | grep -q '^link: *up$'"
	echo down >$LOOPDBG/link
	t_check "E: framelink info says the endpoint's link is down" \
		wait_for 50 sh -c "framelink info -d $EDEV | grep -q '^link: *down'"
	wait_bounded $bpid 20
	kill $epid 2>/dev/null
	wait_bounded $epid 20
	t_check "E: library deinitialized at link down" \
		wait_for 50 grep -q '^cookie none' $NVSTATE
	echo up >$LOOPDBG/link
	t_check "E: link back" wait_for 100 test -c $HDEV
	b0=$(nvstat bytes)
	t_check "E: 10 round trips of 4 MiB after link up" fl_stream 10 4M 180
	t_check "E: through the library again ($b0 -> $(nvstat bytes))" \
		test $(($(nvstat bytes) - b0)) -ge 83886080
}
if t_check "E: jetpack up" up jetpack $XO; then
	case_e
fi
t_check "E: tear down" fl_down
true
