#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf: the crossovers measured at enable (issue 10; epf/xover.c).
#
# A  tegra234-edma, configfs default "auto": both attributes read "auto"; `framelink info`
#    reports both crossovers "measured at enable" and the endpoint logs the fitted lines; the
#    value in use is the one the last enable logged, and frames one byte below it go by CPU
#    and at it by DMA (dma_transfers / cpu_transfers): a data path that used another value
#    (the default, a stale measurement) shows. Which side wins at the sizes timed is not
#    fixed by the lab's default settings (the DMA's start against the window's CPU copies,
#    both at the emulation's speed: a loaded machine once measured DMA never cheaper); F
#    fixes it.
# B  numbers override: crossover=8192 rd_crossover=0 are read back, reported "configured",
#    nothing is measured, frames follow them at the boundary, and the kselftest's
#    sizes_both_ways checks the split there and one byte either side (both variants run:
#    writes below 8 KiB by CPU, every read by DMA). There, `framelink stream --verify` (every
#    byte of every frame: make bench's verified runs) must catch one bit the lab's DMA flips
#    (pci-epc-loop corrupt_dma) in each direction: one bad frame, "payload sum", exit 1.
# C  tegra234 (no DMA channels), "auto": both crossovers "no DMA: CPU".
# D  configfs: garbage is refused with EINVAL and changes nothing; "auto" and a number are
#    read back as written; a write while bound is refused with EBUSY.
# E  jetpack, "auto": both measured through NVIDIA's eDMA library backend.
# F  tegra234-edma with the loop's DMA setup time at 5 ms: both crossovers measured past the
#    sizes timed, frames one byte below them by CPU, at them (when in a slot) by DMA.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "crossover: framelink-epf" "framelink-epf.ko not built"
	exit 0
fi

SLOT=1048576

# up PROFILE ATTR=VALUE...: the pair under the generic root, 8 slots and 8 host buffers of 1 MiB
up() {
	local _p=$1
	shift
	dmesg -c >/dev/null
	fl_modules "profile=$_p rc_profile=generic-rc" nbufs=8 buf_size=$SLOT &&
		fl_fn_create slots=8 slot_size=$SLOT "$@" && fl_bind
}
# attr NAME: a framelink_epf attribute of $FN (after fl_fn_create)
attr() { cat $FN/framelink_epf.*/$1; }

# xo NAME: the byte count `framelink info` gives for NAME (crossover, rd_crossover)
xo() { framelink info -d $EDEV | sed -n "s/^$1: *\([0-9]*\) bytes.*/\1/p"; }
# how NAME: what follows the byte count, in brackets
how() { framelink info -d $EDEV | sed -n "s/^$1: *[0-9]* bytes (\(.*\))\$/\1/p"; }

# path TAG MODE SIZE WANT: 4 frames of SIZE in MODE (h2e: reads of host memory, e2h: writes
# to the host) all went by WANT (dma or cpu) on the endpoint
path() {
	local _d0 _c0 _d _c
	_d0=$(fl_stat $EDEV dma_transfers)
	_c0=$(fl_stat $EDEV cpu_transfers)
	if ! framelink stream -m $2 -s $3 -n 4 -q 1 >/tmp/xo-stream.out 2>&1; then
		sed 's/^/# /' /tmp/xo-stream.out
		t_fail "$1: $2 $3 bytes by $4" "stream failed"
		return
	fi
	_d=$(($(fl_stat $EDEV dma_transfers) - _d0))
	_c=$(($(fl_stat $EDEV cpu_transfers) - _c0))
	if [ $4 = dma ]; then
		t_check "$1: $2 $3 bytes by DMA (dma $_d, cpu $_c)" test $_d = 4 -a $_c = 0
	else
		t_check "$1: $2 $3 bytes by CPU (dma $_d, cpu $_c)" test $_d = 0 -a $_c = 4
	fi
}

# logged NAME: the byte count of the crossover NAME in the endpoint's last "measured" line
logged() {
	dmesg | sed -n "s/.*: $1 ([a-z ]*): \([0-9]*\) bytes.*measured: .*/\1/p" | tail -n 1
}
# in_use_logged NAME: `framelink info` gives the value the last enable logged
in_use_logged() { [ -n "$(xo $1)" ] && [ "$(xo $1)" = "$(logged $1)" ]; }

# sides TAG NAME MODE: frames one byte below the crossover NAME as it is now by CPU, at it by
# DMA (past the slot: a slot by CPU; `framelink stream` moves 16 bytes at least, so below 16
# a 16-byte frame by DMA and nothing below). Each stream's last close resets the
# queue and the next enable measures again: the value is read (and matched to the log, the
# enable may still be running) before every stream.
sides() {
	local _x _side
	for _side in below at; do
		t_check "$1: $2 in use is the one the last enable logged" wait_for 50 in_use_logged $2
		_x=$(xo $2)
		if [ "$_x" -gt $SLOT ]; then
			[ $_side = below ] && path "$1" $3 $SLOT cpu
		elif [ $_side = below ]; then
			[ "$_x" -gt 16 ] && path "$1" $3 $((_x - 1)) cpu
		else
			path "$1" $3 $((_x < 16 ? 16 : _x)) dma
		fi
	done
}

# ---------------------------------------------------------------- A: auto on a DMA profile
if t_check "A: tegra234-edma up, crossovers left at their default" up tegra234-edma; then
	t_check "A: configfs crossover reads auto" test "$(attr crossover)" = auto
	t_check "A: configfs rd_crossover reads auto" test "$(attr rd_crossover)" = auto
	framelink info -d $EDEV | grep crossover | sed 's/^/# A: /'
	dmesg | grep 'crossover' | sed 's/^/# A: /'
	t_check "A: info: crossover measured at enable ($(xo crossover) bytes)" \
		test "$(how crossover)" = "measured at enable" -o \
		"$(how crossover)" = "measured at enable: DMA for every frame" -o \
		"$(how crossover)" = "measured at enable: CPU for every frame"
	t_check "A: info: rd_crossover measured at enable ($(xo rd_crossover) bytes)" \
		sh -c "framelink info -d $EDEV | grep -q '^rd_crossover: *[0-9]* bytes (measured at enable'"
	t_check "A: the endpoint logged both fitted lines" sh -c \
		"dmesg | grep -q 'crossover (writes to the host): [0-9]* bytes.*measured: cpu .* ns/B, dma .* ns/B' &&
		 dmesg | grep -q 'rd_crossover (reads of host memory): [0-9]* bytes.*measured: cpu .* ns/B, dma .* ns/B'"
	t_check "A: nothing failed while measuring" sh -c "! dmesg | grep -q 'not measured'"
	sides "A: writes" crossover e2h
	sides "A: reads" rd_crossover h2e
	dmesg | grep 'crossover.*measured' | tail -n 4 | sed 's/^/# A: /'
	t_check "A: stats unchanged by the measurement: no DMA abort" \
		test "$(fl_stat $EDEV dma_aborts)" = 0
fi
t_check "A: tear down" fl_down

# ---------------------------------------------------------------- F: DMA slow to start
# The lab's DMA starts in about 0.4 ms and its CPU copies cost about 1 ms (the window's copies),
# so A measures "DMA for every frame" and can only check that side. With the link model's setup
# time at 5 ms per descriptor DMA is slower at the sizes timed: the measurement must move both
# crossovers past 8 KiB (into the slot, or "CPU for every frame"), and frames below them must
# go by CPU (and above, when that fits a slot, by DMA).
upslow() {
	dmesg -c >/dev/null
	fl_modules "profile=tegra234-edma rc_profile=generic-rc" nbufs=8 buf_size=$SLOT &&
		echo 5000000 >$LOOPDBG/setup_ns && fl_fn_create slots=8 slot_size=$SLOT && fl_bind
}
if t_check "F: tegra234-edma, DMA setup 5 ms, up" upslow; then
	framelink info -d $EDEV | grep crossover | sed 's/^/# F: /'
	dmesg | grep 'crossover' | sed 's/^/# F: /'
	t_check "F: info: crossover measured past 8 KiB ($(xo crossover) bytes)" sh -c \
		"[ '$(how crossover | cut -c1-18)' = 'measured at enable' ] && [ $(xo crossover) -gt 8192 ]"
	t_check "F: info: rd_crossover measured past 8 KiB ($(xo rd_crossover) bytes)" sh -c \
		"[ '$(how rd_crossover | cut -c1-18)' = 'measured at enable' ] && [ $(xo rd_crossover) -gt 8192 ]"
	sides "F: writes" crossover e2h
	sides "F: reads" rd_crossover h2e
fi
t_check "F: tear down" fl_down

# ---------------------------------------------------------------- E: through the NVIDIA library
# jetpack: the measurement's DMA goes through the library (its byte counter moves at enable)
nvbytes() { awk '$1 == "bytes" { print $2 }' $LOOPDBG/nvedma/state; }
if t_check "E: jetpack up" up jetpack; then
	framelink info -d $EDEV | grep crossover | sed 's/^/# E: /'
	dmesg | grep 'crossover' | sed 's/^/# E: /'
	t_check "E: both crossovers measured through nvidia-edma" sh -c \
		"[ \$(dmesg | grep -c 'crossover.*measured: cpu .*(nvidia-edma channel') -ge 2 ]"
	t_check "E: info: both measured at enable" sh -c \
		"[ \$(framelink info -d $EDEV | grep -c 'crossover: *[0-9]* bytes (measured at enable') = 2 ]"
	b0=$(nvbytes)
	sides "E: writes" crossover e2h
	t_check "E: the library moved bytes ($b0 -> $(nvbytes))" test "$(nvbytes)" -gt "$b0"
fi
t_check "E: tear down" fl_down

# ---------------------------------------------------------------- B: numbers override
if t_check "B: tegra234-edma up, crossover=8192 rd_crossover=0" \
	up tegra234-edma crossover=8192 rd_crossover=0; then
	t_check "B: configfs reads 8192" test "$(attr crossover)" = 8192
	t_check "B: configfs reads 0" test "$(attr rd_crossover)" = 0
	framelink info -d $EDEV | grep crossover | sed 's/^/# B: /'
	t_check "B: info: crossover 8192 configured" \
		test "$(xo crossover) $(how crossover)" = "8192 configured"
	t_check "B: info: rd_crossover 0 configured" \
		test "$(xo rd_crossover) $(how rd_crossover)" = "0 configured"
	t_check "B: nothing measured" sh -c "! dmesg | grep -q 'measured: cpu'"
	path "B: writes" e2h 8191 cpu
	path "B: writes" e2h 8192 dma
	path "B: reads" h2e 16 dma
	t_check "B: still configured after the resets" \
		test "$(xo crossover) $(how crossover)" = "8192 configured"
	for m in h2e e2h; do
		echo 1 >$LOOPDBG/corrupt_dma
		framelink stream -m $m -s 65536 -n 4 -q 1 --verify >/tmp/xo-corrupt.out 2>&1
		rc=$?
		grep 'bad frame' /tmp/xo-corrupt.out | sed 's/^/# /'
		t_check "B: stream $m: a bit the DMA flipped is one bad frame (payload sum), exit 1" \
			sh -c "[ $rc = 1 ] && [ \$(grep -c 'bad frame' /tmp/xo-corrupt.out) = 1 ] &&
				grep -q 'bad frame (payload sum)' /tmp/xo-corrupt.out"
		t_check "B: stream $m: the flip was made" test "$(cat $LOOPDBG/corrupt_dma)" = 0
	done
	t_run_tap "kselftest.crossover" framelink_test -t sizes_both_ways
fi
t_check "B: tear down" fl_down

# ---------------------------------------------------------------- C: no DMA channels
if t_check "C: tegra234 up" up tegra234; then
	framelink info -d $EDEV | grep crossover | sed 's/^/# C: /'
	t_check "C: info: crossover no DMA" test "$(how crossover)" = "no DMA: CPU"
	t_check "C: info: rd_crossover no DMA" test "$(how rd_crossover)" = "no DMA: CPU"
	path "C: writes" e2h 65536 cpu
fi
t_check "C: tear down" fl_down

# ---------------------------------------------------------------- D: configfs
# wr ATTR VALUE: write VALUE to the attribute; the shell's error message when it fails
wr() { sh -c "echo '$2' >$ATTR/$1" 2>&1; }
if t_check "D: modules and function" fl_modules "profile=tegra234-edma rc_profile=generic-rc" \
	nbufs=8 buf_size=$SLOT && t_check "D: function made" fl_fn_create slots=8 slot_size=$SLOT; then
	ATTR=$(echo $FN/framelink_epf.*)
	for a in crossover rd_crossover; do
		out=$(wr $a bogus)
		t_check "D: $a: 'bogus' refused" test $? -ne 0
		t_check "D: $a: with EINVAL ($out)" sh -c "echo '$out' | grep -q 'Invalid argument'"
		t_check "D: $a: '12k' refused" sh -c "! echo 12k >$ATTR/$a"
		t_check "D: $a: '-1' refused" sh -c "! echo -1 >$ATTR/$a"
		t_check "D: $a: still auto" test "$(cat $ATTR/$a)" = auto
		t_check "D: $a: 12288 accepted" sh -c "echo 12288 >$ATTR/$a"
		t_check "D: $a: reads 12288" test "$(cat $ATTR/$a)" = 12288
		t_check "D: $a: 0x100 accepted" sh -c "echo 0x100 >$ATTR/$a"
		t_check "D: $a: reads 256" test "$(cat $ATTR/$a)" = 256
		t_check "D: $a: 'auto' accepted" sh -c "echo auto >$ATTR/$a"
		t_check "D: $a: reads auto" test "$(cat $ATTR/$a)" = auto
	done
	if t_check "D: bound" fl_bind; then
		out=$(wr crossover 4096)
		t_check "D: write while bound refused with EBUSY ($out)" \
			sh -c "echo '$out' | grep -q 'busy'"
		t_check "D: still auto" test "$(cat $ATTR/crossover)" = auto
	fi
fi
t_check "D: tear down" fl_down
true
