#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A hostile endpoint: the fl-hostile test module's fault_cqe (through pci-epc-loop's window
# hook: the lab itself knows no framelink ABI) corrupts what framelink-epf writes into the
# host's completion area, so every check framelink-host makes of a completion is hit once:
# cq_prod past the ring, unknown kind / status / flags, buffer id out of range, TX_DONE and
# RX out of ring order, TX_DONE and RX with nothing outstanding, RX length 0 and above the
# buffer. Each case asserts: protocol_errors +1, the frames outstanding fail with EPROTO, the
# (rate-limited) log line names the violation, and the queue works again. With the knob off
# the same traffic raises nothing. Then the ring boundaries (exactly full, exactly empty,
# wrap) through the kselftest with rings as small as the host's buffers.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

FN=$EP/functions/framelink_epf/fl0
HDEV=/dev/framelink0
EDEV=/dev/framelink-ep0
KNOB=/sys/kernel/debug/fl-hostile/fault_cqe

hostile_up() {
	t_insmod pci-epc-loop profile=generic && t_insmod fl-hostile && t_insmod framelink-epf &&
		t_insmod framelink-host nbufs=24 buf_size=65536 &&
		wait_for 50 test -d $EP/controllers/$EPC && mkdir $FN &&
		wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	a=$(echo $FN/framelink_epf.*)
	echo 8 >$a/slots && echo 131072 >$a/slot_size && echo 8 >$a/ring_entries &&
		echo 8 >$FN/msi_interrupts || return 1
	ln -s $FN $EP/controllers/$EPC/ && echo 1 >$EP/controllers/$EPC/start &&
		wait_for 100 test -c $HDEV && wait_for 100 test -c $EDEV
}

hostile_down() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/fl0
	wait_for 100 test ! -e $EDEV
	rmdir $FN
	rmmod framelink_host && rmmod framelink_epf && rmmod fl_hostile && rmmod pci_epc_loop
}

# hstat NAME: one host STATS counter, read through `framelink stats`
hstat() { framelink stats -d $HDEV | awk -v k="$1:" '$1 == k { print $2 }'; }
applied() { awk '$1 == "applied" { print $2 }' $KNOB; }
loglines() { dmesg | grep -c "protocol violation by the endpoint: $1"; }

# tx_traffic OUT: one frame host -> endpoint (the endpoint app receives it)
tx_traffic() {
	framelink recv -d $EDEV -n 1 -t 15000 >/tmp/peer.out 2>&1 &
	peer=$!
	sleep 0.5
	framelink send -d $HDEV -s 4K -n 1 >$1 2>&1
	kill $peer 2>/dev/null
	wait $peer
}

# rx_traffic OUT [MS]: one frame endpoint -> host (host buffers posted by `framelink recv`,
# which waits MS for it, 10 s by default). Under a fault every posted buffer fails and the
# frame never arrives, so recv waits out its time: those cases pass 4 s, about 4 times what
# the failure takes in the VM, instead of 10.
rx_traffic() {
	framelink recv -d $HDEV -n 1 -t ${2:-10000} >$1 2>&1 &
	app=$!
	sleep 0.5
	framelink send -d $EDEV -s 4K -n 1 >/tmp/peer.out 2>&1
	wait $app
}

# status_is FILE WHO WANT: the app's tally line is exactly "WHO: status: WANT..."
status_is() { grep -q "^$2: status: $3\( \|\$\)" $1; }

# case_run NAME SPEC TRAFFIC WHAT: arm fault_cqe with SPEC, run TRAFFIC (tx|rx); the host
# must log WHAT, count one protocol error, fail the frames with EPROTO, and work again.
case_run() {
	name="hostile: $1"
	pe0=$(hstat protocol_errors)
	ap0=$(applied)
	l0=$(loglines "$4")
	t_check "$name: arm fault_cqe '$2'" sh -c "echo '$2' >$KNOB"
	${3}_traffic /tmp/app.out 4000
	sed 's/^/# app: /' /tmp/app.out
	t_check "$name: fault applied once" test "$(applied)" -eq $((ap0 + 1))
	t_check "$name: knob disarmed after use" grep -qx off $KNOB
	t_check "$name: protocol_errors +1" test "$(hstat protocol_errors)" -eq $((pe0 + 1))
	if [ $3 = tx ]; then
		t_check "$name: the frame failed EPROTO" status_is /tmp/app.out send EPROTO=1
	else
		t_check "$name: the posted buffers failed EPROTO, none delivered" \
			status_is /tmp/app.out recv EPROTO=8
	fi
	t_check "$name: log names '$4'" test "$(loglines "$4")" -eq $((l0 + 1))
	# the queue comes back: a clean frame each way
	tx_traffic /tmp/after.out
	t_check "$name: host -> endpoint works again" status_is /tmp/after.out send OK=1
	rx_traffic /tmp/after.out
	t_check "$name: endpoint -> host works again" status_is /tmp/after.out recv OK=1
}

if ! t_check "hostile: loop, framelink-epf, framelink-host up" hostile_up; then
	hostile_down >/dev/null 2>&1
	exit 0
fi
t_check "hostile: fault_cqe off by default" grep -qx off $KNOB
t_check "hostile: fault_cqe refuses a bad offset" sh -c "! echo '6 xor 1' >$KNOB 2>/dev/null"
t_check "hostile: fault_cqe refuses an offset past the entry" \
	sh -c "! echo '64 xor 1' >$KNOB 2>/dev/null"

# knob off: the same traffic, no violation
pe0=$(hstat protocol_errors)
tx_traffic /tmp/app.out
sed 's/^/# app: /' /tmp/app.out
t_check "hostile: knob off: host -> endpoint clean" status_is /tmp/app.out send OK=1
rx_traffic /tmp/app.out
sed 's/^/# app: /' /tmp/app.out
sed 's/^/# peer: /' /tmp/peer.out
t_check "hostile: knob off: endpoint -> host clean" status_is /tmp/app.out recv OK=1
t_check "hostile: knob off: no protocol error" test "$(hstat protocol_errors)" -eq "$pe0"

# fl_q_drain(): the index
case_run "cq_prod jumps past the ring" "prod xor 0x40000000" tx "cq_prod past the ring"
# fl_cqe_check(): kind, status, flags, id range (kind/status share the word at offset 8)
case_run "unknown kind" "8 xor 0x6" tx "malformed completion"
case_run "unknown status" "8 xor 0x80000" tx "malformed completion"
case_run "unknown flag" "12 xor 0x80" tx "malformed completion"
case_run "buffer id out of range" "0 xor 0x10000" tx "malformed completion"
# fl_q_complete_tx(): ring order, nothing in flight (an RX turned into a TX_DONE)
case_run "TX_DONE out of ring order" "0 xor 1 1 1" tx "TX_DONE out of ring order"
case_run "TX_DONE with no frame in flight" "8 xor 3 1 2" rx "TX_DONE with no frame in flight"
# fl_q_complete_rx(): nothing posted (a TX_DONE turned into an RX), ring order, length
case_run "RX with no buffer posted" "8 xor 3 1 1" tx "RX with no buffer posted"
case_run "RX out of ring order" "0 xor 1 1 2" rx "RX out of ring order"
case_run "RX length 0" "4 set 0 1 2" rx "RX length outside the buffer"
case_run "RX length above the buffer" "4 xor 0x40000000 1 2" rx "RX length outside the buffer"
echo off >$KNOB
dmesg | grep "protocol violation by the endpoint" | sed 's/^/# /'

# not a violation: a frame larger than the host's buffer (slots 128K, host buffers 64K) is
# consumed with FL_ST_TOO_BIG: EMSGSIZE to both apps, the queues run on (recv ends on the
# failed buffer, --count-errors, instead of waiting out -t for a frame)
pe0=$(hstat protocol_errors)
framelink recv -d $HDEV -n 1 -t 10000 --count-errors >/tmp/app.out 2>&1 &
app=$!
sleep 0.5
framelink send -d $EDEV -s 100K -n 1 >/tmp/peer.out 2>&1
wait $app
sed 's/^/# app: /' /tmp/app.out
sed 's/^/# peer: /' /tmp/peer.out
t_check "hostile: frame above the host buffer: endpoint app gets EMSGSIZE" \
	status_is /tmp/peer.out send EMSGSIZE=1
t_check "hostile: frame above the host buffer: the host buffer completes EMSGSIZE" \
	status_is /tmp/app.out recv EMSGSIZE=1
t_check "hostile: frame above the host buffer: no protocol error" \
	test "$(hstat protocol_errors)" -eq "$pe0"
rx_traffic /tmp/after.out
t_check "hostile: frame above the host buffer: endpoint -> host works after" \
	status_is /tmp/after.out recv OK=1

# ring boundaries: 8-entry rings, 12 host tx buffers: exactly full, exactly empty, wrap
t_run_tap "kselftest.hostile" framelink_test -r fl.cpu.ring_boundaries
t_check "hostile: tear down and unload" hostile_down
