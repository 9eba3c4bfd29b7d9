#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Error paths no other test reaches (issue 12, coverage; Documentation/framelink.rst "Coverage").
# The hostile host writes the endpoint's BAR0 behind framelink-host's back through the host's
# own view of it, the function's sysfs resource0 (`framelink-testtool poke`, `... peek`).
#
# A  configfs: every framelink_epf attribute read back after a write; bad values and writes
#    while bound refused, the values kept. The DMA that times rd_crossover at the first
#    enable fails (fail_dma): the default is kept and said.
# B  malformed tx descriptors: a frame the host's sender queued waits in BAR0 for an endpoint
#    slot (no endpoint app runs) and is rewritten there: longer than max_frame -> FL_ST_TOO_BIG
#    (the sender reaps -EMSGSIZE); unknown flags, an address range that wraps -> FL_ST_BAD_DESC
#    (-EPROTO), counted in the endpoint's protocol_errors and logged. Malformed rx descriptors:
#    every posted buffer rewritten with size 0 completes -EPROTO, the endpoint's frame waits
#    for the next good one. The queue streams afterwards; the host saw no violation.
# C  a corrupted BAR0 header: framelink-host refuses to bind (ABI major, malformed ring,
#    reserved word) and says why; an older minor binds with a note; the restored header binds.
#    Host buffers beyond the CMA area, nbufs=0: probe refused, with the parameters named.
# D  PERST# on jetpack (8-entry rings: completion ring too small to time the crossovers,
#    said): epc_deinit at assert (engine stopped, the eDMA library given back), the
#    host loses the function; after deassert the library is taken again and frames stream.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "coverage: framelink-epf" "framelink-epf.ko not built"
	exit 0
fi

HOSTDRV=/sys/bus/pci/drivers/framelink-host

estat() { fl_stat $EDEV "$1"; }
# db N: word N of fl_bar_doorbell (0 tx_prod, 1 rx_prod) as the host reads it
db() { echo $((0x$(framelink-testtool peek $RES $((0x300 + 4 * $1)) 4))); }

# ------------------------------------------------------------------------ A: configfs
# rw ATTR VALUE [READ]: write VALUE, read back READ (default VALUE)
rw() {
	echo "$2" >$ATTRS/$1 || return 1
	v=$(cat $ATTRS/$1)
	[ "$v" = "${3:-$2}" ] || { echo "$1: wrote '$2', read '$v'"; return 1; }
}
# refused ATTR VALUE: the write fails and the value stays
refused() {
	local _old
	_old=$(cat $ATTRS/$1)
	if echo "$2" >$ATTRS/$1 2>/dev/null; then
		echo "$1: '$2' accepted"
		return 1
	fi
	[ "$(cat $ATTRS/$1)" = "$_old" ] || { echo "$1: changed by a refused write"; return 1; }
}

t_check "A: modules (tegra234-edma, generic-rc)" fl_modules "profile=tegra234-edma rc_profile=generic-rc"
t_check "A: function" sh -c "mkdir $FN && test -d $FN"
wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots"
ATTRS=$(echo $FN/framelink_epf.*)
t_check "A: defaults read back" sh -c "[ \"\$(cat $ATTRS/crossover) \$(cat $ATTRS/rd_crossover) \$(cat $ATTRS/irq_mode) \$(cat $ATTRS/xfer_backend)\" = 'auto auto auto auto' ]"
t_check "A: slots" rw slots 8
t_check "A: slot_size" rw slot_size 1048576
t_check "A: ring_entries (hex)" rw ring_entries 0x10 16
t_check "A: dma_channels" rw dma_channels 2
t_check "A: crossover" rw crossover 65536
t_check "A: crossover auto" rw crossover auto
t_check "A: crossover again" rw crossover 65536
t_check "A: rd_crossover" rw rd_crossover 4096
t_check "A: rd_crossover auto" rw rd_crossover auto
t_check "A: cpu_pass_bytes" rw cpu_pass_bytes 262144
t_check "A: poll_max_us" rw poll_max_us 500
t_check "A: poll_min_us" rw poll_min_us 2
t_check "A: irq_mode msi" rw irq_mode msi
t_check "A: irq_mode auto" rw irq_mode auto
t_check "A: xfer_backend dmaengine" rw xfer_backend dmaengine
t_check "A: poll_min_us above poll_max_us refused" refused poll_min_us 600
t_check "A: crossover not a number refused" refused crossover 12abc
t_check "A: irq_mode unknown name refused" refused irq_mode msi-y
t_check "A: xfer_backend unknown name refused" refused xfer_backend nvedma
echo 8 >$FN/msi_interrupts
# the measuring DMA of rd_crossover at the first enable fails (xover.c): the default is kept
xf=$(dmesg | grep -c 'rd_crossover (reads of host memory) not measured (DMA failed, -5): default')
echo 1 >$LOOPDBG/fail_dma
t_check "A: bind" fl_bind
t_check "A: rd_crossover measurement, its DMA failed: default kept" wait_for 50 sh -c \
	"[ \$(dmesg | grep -c 'rd_crossover (reads of host memory) not measured (DMA failed, -5): default') -gt $xf ]"
t_check "A: slots locked while bound" refused slots 4
t_check "A: crossover locked while bound" refused crossover auto
t_check "A: irq_mode locked while bound" refused irq_mode intx
t_check "A: bound values read back" sh -c "[ \"\$(cat $ATTRS/crossover) \$(cat $ATTRS/rd_crossover) \$(cat $ATTRS/xfer_backend) \$(cat $ATTRS/ring_entries)\" = '65536 auto dmaengine 16' ]"

# ------------------------------------------------------------------------ B: descriptors
HPCI=$(readlink -f /sys/class/misc/${HDEV#/dev/}/device)
RES=$HPCI/resource0
# fl_bar_header words: magic abi features(2) bar_size tx_off tx_n rx_off rx_n max_frame ep_slots
HDR=$(framelink-testtool peek $RES 0 48)
set -- $HDR
TXOFF=$((0x$6)) TXN=$((0x$7)) RXOFF=$((0x$8)) RXN=$((0x$9)) MAXF=$((0x${10}))
echo "# BAR0 header: tx $TXN@$TXOFF rx $RXN@$RXOFF max_frame $MAXF"
t_check "B: header read through resource0" test "$1" = 4b4e4c46

# txpoke WORDOFF VALUE...: one 4K frame from the host in the background (pid $TXPID); its
# descriptor rewritten from byte WORDOFF on while it waits
txpoke() {
	local _off=$1 _p0 _pos
	shift
	_p0=$(db 0)
	framelink send -d $HDEV -s 4K -n 1 >/tmp/78-send.out 2>&1 &
	TXPID=$!
	wait_for 50 sh -c "[ \$(( 0x\$(framelink-testtool peek $RES 0x300 4) )) -ne $_p0 ]" ||
		{ echo "tx_prod stayed $_p0"; kill $TXPID; return 1; }
	_pos=$(((_p0) & (TXN - 1)))
	framelink-testtool poke $RES $((TXOFF + _pos * 32 + _off)) "$@" || { kill $TXPID; return 1; }
}
# txreaped STATUS: the frame of txpoke ended; its sender reaped exactly STATUS
txreaped() {
	wait_bounded $TXPID 30
	sed 's/^/# /' /tmp/78-send.out
	grep -qx "send: status: $1=1" /tmp/78-send.out
}
# txbad STATUS WORDOFF VALUE...: txpoke, then the sender must reap exactly STATUS
txbad() {
	local _want=$1
	shift
	txpoke "$@" && txreaped $_want
}

hpe=$(fl_stat $HDEV protocol_errors)
pe=$(estat protocol_errors)
nl=$(dmesg | grep -c 'bad tx descriptor')
t_check "B: tx bytes = max_frame + 1: sender reaps EMSGSIZE" txbad EMSGSIZE 8 $((MAXF + 1))
t_check "B: too big is not a protocol error" test "$(estat protocol_errors)" -eq "$pe"
t_check "B: tx flags with an unknown bit: sender reaps EPROTO" txbad EPROTO 12 0x81
# FL_FRAME_FORMAT (ABI 1.3, accepted here) announcing a format the endpoint cannot carry
# (fourcc "0000", 64x64): refused with a log line, the frame itself moves
fmtbad() {
	local _n _rx
	_n=$(dmesg | grep -c 'host format 7 refused')
	framelink-testtool poke $RES 0x400 7 0x30303030 64 64 && txpoke 12 5 || return 1
	# a frame that fits needs a slot: the endpoint's app receives it, after the rewrite (an
	# open endpoint device makes the engine poll, and it would take the frame first)
	framelink recv -d $EDEV -n 1 -t 20000 >/dev/null 2>&1 &
	_rx=$!
	txreaped OK || { kill $_rx; return 1; }
	wait_bounded $_rx 30
	[ "$(dmesg | grep -c 'host format 7 refused')" -gt "$_n" ] || { echo "no refusal logged"; return 1; }
}
if v4l_node "framelink framelink-ep0" >/dev/null; then
	t_check "B: a format the endpoint cannot carry: refused (logged), the frame moves" fmtbad
else
	t_skip "B: a format the endpoint cannot carry" "no V4L2 capture device (kernel without videobuf2)"
fi
t_check "B: tx address range wrapping: sender reaps EPROTO" txbad EPROTO 0 0xfffff800 0xffffffff
t_check "B: endpoint counts two protocol errors" test "$(estat protocol_errors)" -eq $((pe + 2))
t_check "B: logged" test "$(dmesg | grep -c 'bad tx descriptor')" -gt "$nl"

# rxbad: the host's receiver posts its buffers; every rx descriptor is rewritten with size 0
# (address and id kept); the endpoint app sends one frame
rxbad() {
	local _p0 _pid _w
	_p0=$(db 1)
	framelink recv -d $HDEV -n 1 -t 10000 >/tmp/78-recv.out 2>&1 &
	_pid=$!
	wait_for 50 sh -c "[ \$(( 0x\$(framelink-testtool peek $RES 0x304 4) )) -ne $_p0 ]" ||
		{ echo "rx_prod stayed $_p0"; kill $_pid; return 1; }
	sleep 0.3
	# fl_rx_desc: addr (2 words), size, id
	_w=$(framelink-testtool peek $RES $RXOFF $((RXN * 16)) |
		awk '{ printf " 0x%s 0x%s 0 0x%s", $1, $2, $4 }')
	framelink-testtool poke $RES $RXOFF $_w || { kill $_pid; return 1; }
	framelink send -d $EDEV -s 4K -n 1 >/tmp/78-esend.out 2>&1
	wait_bounded $_pid 30
	sed 's/^/# host: /' /tmp/78-recv.out | grep -v 'rx buffer'
	sed 's/^/# endpoint: /' /tmp/78-esend.out
	grep -q '^received 1 frames' /tmp/78-recv.out &&
		grep -qx 'recv: status: EPROTO=[1-9][0-9]* OK=1' /tmp/78-recv.out &&
		grep -qx 'send: status: OK=1' /tmp/78-esend.out
}
pe=$(estat protocol_errors)
nl=$(dmesg | grep -c 'bad rx descriptor')
t_check "B: rx size 0: buffers reaped EPROTO, the frame lands in a good one" rxbad
t_check "B: endpoint counts the bad rx descriptors" test "$(estat protocol_errors)" -gt "$pe"
t_check "B: logged (rx)" test "$(dmesg | grep -c 'bad rx descriptor')" -gt "$nl"
t_check "B: the queue streams afterwards" fl_stream 16 64K 60
# failed frames, not a broken protocol: the host never reset the queue for a violation
t_check "B: no violation seen by the host" test "$(fl_stat $HDEV protocol_errors)" -eq "$hpe"

# ------------------------------------------------------------------------ C: header
HBDF=${HPCI##*/}
bind() { echo $HBDF >$HOSTDRV/bind && wait_for 50 test -c $HDEV; }
unbind() { echo $HBDF >$HOSTDRV/unbind && ! test -e $HDEV; }
hdr_restore() {
	framelink-testtool poke $RES 0 $(for w in $HDR; do printf '0x%s ' $w; done)
}
# hdrbad MSG BYTEOFF VALUE: the header word at BYTEOFF rewritten: bind refused, MSG logged
hdrbad() {
	local _n
	_n=$(dmesg | grep -c "$1")
	framelink-testtool poke $RES $2 $3 || return 1
	if echo $HBDF >$HOSTDRV/bind 2>/dev/null; then
		echo "bound with header word $2 = $3"
		return 1
	fi
	hdr_restore
	[ "$(dmesg | grep -c "$1")" -gt "$_n" ] || { echo "no '$1' in the log"; return 1; }
	test ! -e $HDEV
}
# minor: an endpoint of ABI 1.0 binds, with a note
minor() {
	local _n
	_n=$(dmesg | grep -c 'endpoint ABI 1.0, driver 1.3')
	framelink-testtool poke $RES 4 0x10000 && bind || return 1
	[ "$(dmesg | grep -c 'endpoint ABI 1.0, driver 1.3')" -gt "$_n" ] || { echo "no note"; return 1; }
	unbind && hdr_restore
}
t_check "C: host unbinds" unbind
t_check "C: a BAR0 without framelink's magic refused" \
	hdrbad "no framelink endpoint behind BAR0: magic 0x12345678" 0 0x12345678
t_check "C: ABI major 2 refused" hdrbad "endpoint speaks framelink ABI 2.1" 4 0x20001
t_check "C: tx ring of 3 entries refused" hdrbad "malformed framelink header" 24 3
t_check "C: reserved header word refused" hdrbad "framelink header: reserved fields not zero" 44 1
t_check "C: ABI 1.0 binds, noted" minor
t_check "C: restored header binds" bind

# host_params MSG PARAM...: framelink-host loaded again with PARAMs refuses the function, MSG
host_params() {
	local _msg=$1 _n
	shift
	_n=$(dmesg | grep -c "$_msg")
	rmmod framelink_host && t_insmod framelink-host "$@" || return 1
	[ "$(dmesg | grep -c "$_msg")" -gt "$_n" ] || { echo "no '$_msg' in the log"; return 1; }
	test ! -e $HDEV
}
t_check "C: buffers beyond the CMA area (cma=256M): probe refused, says which parameters" \
	host_params "cannot allocate frame buffer 0 of 536870912 bytes" nbufs=1 buf_size=536870912
t_check "C: nbufs=0: probe refused" host_params "nbufs=0 buf_size=8388608 out of range" nbufs=0
t_check "C: default parameters bind again" sh -c "rmmod framelink_host && insmod /modules/framelink-host.ko"
t_check "C: host device back" wait_for 50 test -c $HDEV
t_check "C: tear down" fl_down

# ------------------------------------------------------------------------ D: PERST#
pstat() { awk -v k="$1" '$1 == k { print $2 }' $LOOPDBG/perst_stats; }
# 8 + 8 ring entries: a completion ring of 1 KiB, too small to time the crossovers in
nv=$(dmesg | grep -c 'transfers: nvidia-edma')
xs=$(dmesg | grep -c 'not measured (completion ring too small')
t_check "D: jetpack up" fl_start "profile=jetpack rc_profile=generic-rc" "" slots=8 \
	slot_size=1048576 ring_entries=8
t_check "D: crossovers not measured: completion ring too small" wait_for 50 sh -c \
	"[ \$(dmesg | grep -c 'not measured (completion ring too small') -ge $((xs + 2)) ]"
t_check "D: streams" fl_stream 8 64K 60
t_check "D: PERST# assert" sh -c "echo assert >$LOOPDBG/perst"
t_check "D: epc_deinit at assert" test "$(pstat epc_deinits)" = 1
t_check "D: the host loses the function" wait_for 100 test ! -e $HDEV
t_check "D: endpoint device stays" test -c $EDEV
t_check "D: PERST# deassert" sh -c "echo deassert >$LOOPDBG/perst"
t_check "D: host device back" wait_for 150 test -c $HDEV
t_check "D: the eDMA library taken again" test "$(dmesg | grep -c 'transfers: nvidia-edma')" -eq $((nv + 2))
t_check "D: streams after the reboot" fl_stream 8 64K 60
t_check "D: tear down" fl_down
