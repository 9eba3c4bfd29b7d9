#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Issue 27 item 3.16: a host that left garbage across BAR0 (a buggy or hostile driver, a
# crashed kernel before a kdump one) is healed by the next enable. For each BAR0 region in
# turn (header, control block, status block, doorbells, descriptor rings) random 32-bit
# words are written over all of it through the host function's sysfs resource0 while a
# verified stream runs (the rings while idle); then the host's queue is reset (fl-pcicb
# aer-normal: the error_detected(io_normal) path, one reset) and a verified stream of 50
# frames must pass.
# Asserted per region: no frame came back wrong, the reset completed, the stream after it.
# The host rewrites every word of its control block and doorbells at each enable, the
# endpoint its header (in a session and before it reports RESET) and status block.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

CB=/sys/kernel/debug/fl-pcicb/call

t_check "pair up (tegra234-edma, j784s4 root)" fl_start "profile=tegra234-edma rc_profile=j784s4" \
	"nbufs=8 buf_size=65536" slots=8 slot_size=65536 ring_entries=16
t_check "fl-pcicb loaded" t_insmod fl-pcicb
HPCI=$(readlink -f /sys/class/misc/${HDEV#/dev/}/device)
RES=$HPCI/resource0
BDF=${HPCI##*/}
set -- $(framelink-testtool peek $RES 0 48)
TXOFF=$((0x$6)) TXN=$((0x$7)) RXOFF=$((0x$8)) RXN=$((0x$9))
RINGS_END=$((RXOFF + RXN * 16))
echo "# BAR0 rings: tx $TXN@$TXOFF rx $RXN@$RXOFF"

resets() { dmesg | grep -c 'queue reset, endpoint generation'; }

# garbage OFF BYTES: random 32-bit words over [OFF, OFF + BYTES), 64 per poke
garbage() {
	local _off=$1 _end=$(($1 + $2)) _n
	while [ $_off -lt $_end ]; do
		_n=$(((_end - _off) / 4))
		[ $_n -gt 64 ] && _n=64
		framelink-testtool poke $RES $_off $(od -An -tx4 -N $((_n * 4)) /dev/urandom |
			tr -s ' \n' '\n\n' | grep . | sed 's/^/0x/') || return 1
		_off=$((_off + _n * 4))
	done
}

# region NAME OFF BYTES [idle]: garbage over the region while a verified stream runs (idle:
# with no stream: random descriptor addresses consumed by the endpoint would send its DMA to
# random host memory, which is the host's own doing, not what this test is about), then a host
# reset, then 50 verified frames
region() {
	local _name=$1 _r0 _t0 _epid _bpid
	if [ "$4" != idle ]; then
		_t0=$(fl_stat $HDEV tx_frames)
		framelink echo -d $EDEV >/tmp/81-echo.out 2>&1 &
		_epid=$!
		framelink bench -d $HDEV -s 64K -n 1000000 >/tmp/81-bench.out 2>&1 &
		_bpid=$!
		t_check "$_name: stream runs" wait_for 300 sh -c \
			"[ \$(framelink stats -d $HDEV | awk '\$1 == \"tx_frames:\" { print \$2 }') -ge $((_t0 + 20)) ]"
	fi
	t_check "$_name: random words written across it" garbage $2 $3
	if [ "$4" != idle ]; then
		sleep 0.5
		kill $_bpid $_epid 2>/dev/null
		wait $_bpid $_epid 2>/dev/null
		tail -n 2 /tmp/81-bench.out | sed 's/^/# bench: /'
		t_check "$_name: no frame came back wrong" sh -c "! grep -q mismatch /tmp/81-bench.out"
	fi
	_r0=$(resets)
	echo "$BDF aer-normal" >$CB && sed 's/^/# fl-pcicb: /' $CB
	t_check "$_name: the next host reset completes" wait_for 200 sh -c \
		"[ \$(dmesg | grep -c 'queue reset, endpoint generation') -gt $_r0 ]"
	t_check "$_name: 50 verified frames after the reset" fl_stream 50 64K 60
}

region header 0 256
region ctrl 256 256
region status 512 256
region doorbell 768 256
region rings $TXOFF $((RINGS_END - TXOFF)) idle
t_check "every region: the endpoint counted its repairs" sh -c "[ $(fl_stat $EDEV status_repairs) -gt 0 ]"
dmesg | grep -E 'altered by the host|protocol error from the host|endpoint not ready' |
	sort | uniq -c | sort -rn | head -n 8 | sed 's/^/# /'

rmmod fl_pcicb
t_check "tear down" fl_down
