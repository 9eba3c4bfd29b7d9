#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Four endpoints on one root (issue 12, "Four endpoints"): pci-epc-loop links=4 brings up the
# four loop nodes of the QEMU-virt overlay, each its own controller, pool, outbound window,
# eDMA and link model, on the Orin's profile (tegra234-edma) under the J784S4 root (MSI only,
# no hot-plug). framelink-epf binds a function to each controller and framelink-host serves
# each link as its own device.
#  1. a plain load still gives exactly one link (every other test relies on it), links=5 is
#     refused;
#  2. four host and four endpoint devices, each host device on its own link's root bus;
#  3. four round-trip streams at once (host -> endpoint -> host, every byte checked by
#     `framelink bench` against the endpoint's inverting echo): all pass, frame counts exact
#     on both ends, frames moved by eDMA on every link;
#  4. link 2 cut mid-stream while links 0, 1 and 3 stream: link 2's host app ends within 20 s
#     with ECANCELED frames and REAP ENOLINK (the J784S4 keeps the function, as
#     61-framelink-j784s4.sh asserts for one link); the three others keep moving frames
#     while it is down (no stall), finish every bench with every frame verified and no error
#     counted anywhere on them; link 2 streams again after link up;
#  5. teardown, and kmemleak counts no object leaked since the start, before the unload.
# Every wait is bounded.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

LINKS="0 1 2 3"
CUT=2
SIZES=4K,64K,1M
N=24
# frames one bench run moves per size list: N of each size
NFR=$((N * 3))
# both crossovers 64 KiB: 4 KiB frames by CPU copy, 64 KiB and 1 MiB by eDMA, both ways, on
# every link (the default, "auto", measures at enable and may pick CPU for all: TCG)
XO=65536
t_start=$(cut -d. -f1 /proc/uptime)
kml_reset

# ---- 1. the default is one link ----
t_check "four: plain load: one controller" sh -c '. /tests/lib.sh; t_insmod pci-epc-loop &&
	sleep 1 && [ "$(ls /sys/kernel/config/pci_ep/controllers | grep -c pci-epc-loop)" = 1 ] &&
	rmmod pci_epc_loop'
t_check "four: links=5 refused" sh -c '. /tests/lib.sh; ! t_insmod pci-epc-loop links=5'

# ---- 2. four links, a function on each ----
t_check "four: modules (links=4, tegra234-edma, j784s4; host 8 x 1 MiB)" \
	fl_modules "links=4 profile=tegra234-edma rc_profile=j784s4" nbufs=8 buf_size=1048576
for i in $LINKS; do
	fl_link $i
	t_check "four: link $i: controller $EPC" wait_for 50 test -d $EP/controllers/$EPC
	# bound in order: the ids the drivers give are the link numbers
	t_check "four: link $i: function, bind, $HDEV and $EDEV" \
		sh -c ". /tests/lib.sh; . /tests/epc-loop-lib.sh; . /tests/framelink-lib.sh
			fl_link $i; fl_fn_create slots=8 slot_size=1048576 crossover=$XO \
				rd_crossover=$XO && fl_bind"
	t_check "four: link $i: $HDEV is on $EPC's root bus" fl_link_owns
done
ndev() { [ -e "$1" ] && echo $# || echo 0; }
t_check "four: 4 host devices" test "$(ndev /dev/framelink[0-9]*)" = 4
t_check "four: 4 endpoint devices" test "$(ndev /dev/framelink-ep[0-9]*)" = 4

# stats DEV: "tx_frames rx_frames errors protocol_errors queue_resets dma_transfers
# cpu_transfers". The host app's last close resets its queue (the receive buffers it left
# posted are cancelled) and each end counts that reset: one per session, none for a cut
# elsewhere.
stats() {
	framelink stats -d $1 | awk '{ v[$1] = $2 } END {
		print v["tx_frames:"] + 0, v["rx_frames:"] + 0, v["errors:"] + 0,
			v["protocol_errors:"] + 0, v["queue_resets:"] + 0, v["dma_transfers:"] + 0,
			v["cpu_transfers:"] + 0 }'
}
# snapshot LINK: both ends' counters of link LINK ($HDEV, $EDEV) into /tmp/four-[he]0.LINK,
# the endpoint's first. Our own read of the host device is a last close that may reset its
# queue (see counts): the host counts that reset at once, the endpoint when it sees it. Read
# in this order, after a second for an earlier one to settle, both ends have it or neither.
# (Host first, a make check saw the endpoint count one reset more: 23/24.)
snapshot() {
	sleep 1
	stats $EDEV >/tmp/four-e0.$1
	stats $HDEV >/tmp/four-h0.$1
}
# delta BEFORE_FILE DEV: the counters of DEV minus those saved in BEFORE_FILE
delta() {
	echo "$(cat $1) $(stats $2)" | awk '{ for (i = 1; i <= 7; i++) printf "%d ", $(i + 7) - $i }'
}
# counts PHASE LINK FRAMES SESSIONS [EXTRA]: since /tmp/four-[he]0.LINK, host and endpoint (of
# $HDEV, $EDEV) each sent and received exactly FRAMES and counted no error; both ends counted
# the queue resets, one per host app session, plus at most EXTRA (default 0): a stats
# read of ours (its own open and close) that lands between two benches, while the queue is
# still being enabled again after the last one's close, is itself a last close of a queue
# that is not enabled, which resets it once more (host/cdev.c, fl_release()). Leaves the
# endpoint's counters in $d ("... dma cpu").
counts() {
	local _w _rh _re _de
	# the last session's reset and re-enable settle first: our reads must not race them
	sleep 1
	# the endpoint first (snapshot says why)
	for _w in endpoint:$EDEV:e host:$HDEV:h; do
		d=$(delta /tmp/four-${_w##*:}0.$2 "$(echo $_w | cut -d: -f2)")
		echo "# link $2 ${_w%%:*}: tx rx errors protocol_errors queue_resets dma cpu: $d"
		t_check "four: $1: link $2: ${_w%%:*} sent and received $3, no error" \
			test "${d% * * * }" = "$3 $3 0 0"
		if [ "${_w%%:*}" = host ]; then _rh=$(echo $d | cut -d' ' -f5); else
			_re=$(echo $d | cut -d' ' -f5) _de=$d; fi
	done
	d=$_de
	# Such a reset may find the endpoint READY before the host took that READY in (its queue
	# not enabled yet): the endpoint counts it, the host does not (its queue_resets counts
	# stops of a running queue). So the endpoint may count up to EXTRA more, never fewer.
	t_check "four: $1: link $2: both ends counted $_rh/$_re queue reset(s), $4 sessions (+${5:-0} at most)" \
		test "$_rh" -ge "$4" -a "$_rh" -le $(($4 + ${5:-0})) -a "$_re" -ge "$_rh" \
			-a "$_re" -le $((_rh + ${5:-0}))
}

# ---- 3. four streams at once, every frame verified ----
for i in $LINKS; do
	fl_link $i
	snapshot $i
	framelink echo -d $EDEV -n $NFR >/tmp/four-echo.$i 2>&1 &
	echo $! >/tmp/four-echo-pid.$i
done
for i in $LINKS; do
	fl_link $i
	framelink bench -d $HDEV -p $EDEV -s $SIZES -n $N >/tmp/four-bench.$i 2>&1 &
	echo $! >/tmp/four-bench-pid.$i
done
for i in $LINKS; do
	wait_bounded "$(cat /tmp/four-bench-pid.$i)" 150
	echo $? >/tmp/four-bench-rc.$i
done
for i in $LINKS; do
	fl_link $i
	wait_bounded "$(cat /tmp/four-echo-pid.$i)" 10
	erc=$?
	grep -E '^ *[0-9.]+[KM]? |status|result' /tmp/four-bench.$i | sed "s/^/# link $i: /"
	tail -n 2 /tmp/four-echo.$i | sed "s/^/# link $i echo: /"
	t_check "four: concurrent: link $i: bench passed, every frame verified" \
		sh -c "[ $(cat /tmp/four-bench-rc.$i) = 0 ] && grep -q '^result: PASS' /tmp/four-bench.$i"
	# the tallies count TX and RX completions: only OK, no end error
	t_check "four: concurrent: link $i: host app: every completion OK" \
		grep -qE '^bench: status: OK=[0-9]+$' /tmp/four-bench.$i
	t_check "four: concurrent: link $i: echo ended by itself: $NFR echoed, all OK" \
		sh -c "[ $erc = 0 ] && grep -qx 'framelink: echo: $NFR frames echoed, 0 errors.*' \
			/tmp/four-echo.$i && grep -qE '^framelink: echo: status: OK=[0-9]+$' \
			/tmp/four-echo.$i"
	counts concurrent $i $NFR 1
	t_check "four: concurrent: link $i: 64K and 1M by eDMA, 4K by CPU, both ways" \
		test "${d#* * * * * }" = "$((4 * N)) $((2 * N)) "
done

# ---- 4. one link cut while the others stream ----
# worker I: back-to-back verified benches of 64 KiB frames on link I until /tmp/four-stop;
# the echo runs for the whole phase. /tmp/four-w.I gets "RUNS FAILED".
worker() {
	local _r=0 _f=0
	fl_link $1
	while [ ! -e /tmp/four-stop ]; do
		framelink bench -d $HDEV -p $EDEV -s 64K -n 50 >/tmp/four-wb.$1 2>&1 &&
			grep -qE '^bench: status: OK=[0-9]+$' /tmp/four-wb.$1 ||
			{ _f=$((_f + 1)); cp /tmp/four-wb.$1 /tmp/four-wfail.$1; }
		_r=$((_r + 1))
	done
	echo "$_r $_f" >/tmp/four-w.$1
}
hrx() { fl_stat /dev/framelink$1 rx_frames; }
others=
for i in $LINKS; do [ $i = $CUT ] || others="$others $i"; done
rm -f /tmp/four-stop /tmp/four-w.* /tmp/four-wfail.*
for i in $LINKS; do
	fl_link $i
	snapshot $i
	framelink echo -d $EDEV >/tmp/four-echo.$i 2>&1 &
	echo $! >/tmp/four-echo-pid.$i
done
for i in $others; do
	worker $i &
	echo $! >/tmp/four-w-pid.$i
done
fl_link $CUT
rx0=$(hrx $CUT)
framelink bench -d $HDEV -p $EDEV -s 64K -n 1000000 >/tmp/four-cut.out 2>&1 &
cut_pid=$!
t_check "four: cut: link $CUT streaming" \
	wait_for 200 sh -c "[ -r /proc/$cut_pid/status ] && [ \$(framelink stats -d $HDEV |
		sed -n 's/^rx_frames: *//p') -gt $((rx0 + 8)) ]"
for i in $others; do echo "$(hrx $i)" >/tmp/four-rx-cut.$i; done
t_check "four: cut: link $CUT down" sh -c "echo down >$LOOPDBG/link"
wait_bounded $cut_pid 20
rc=$?
tail -n 3 /tmp/four-cut.out | sed 's/^/# link 2 bench: /'
t_check "four: cut: link $CUT host app ended within 20 s" test $rc -ne 137
t_check "four: cut: link $CUT host app failed" test $rc -eq 1
# frames in flight ECANCELED, REAP ENOLINK (the J784S4 keeps the function)
t_check "four: cut: link $CUT host frames ECANCELED, then REAP ENOLINK" \
	grep -qE '^bench: status:( OK=[0-9]+)?( ECANCELED=[0-9]+)? end=ENOLINK$' /tmp/four-cut.out
# while link 2 is down the others move frames: at least two benches' worth in 3 s
sleep 3
for i in $others; do
	rx=$(hrx $i)
	echo "# link $i: $((rx - $(cat /tmp/four-rx-cut.$i))) frames received in the 3 s after the cut"
	t_check "four: cut: link $i kept streaming while link $CUT was down" \
		test "$rx" -ge $(($(cat /tmp/four-rx-cut.$i) + 100))
done
t_check "four: cut: link $CUT up" sh -c "echo up >$LOOPDBG/link"
kill "$(cat /tmp/four-echo-pid.$CUT)" 2>/dev/null
wait_bounded "$(cat /tmp/four-echo-pid.$CUT)" 10
tail -n 1 /tmp/four-echo.$CUT | sed "s/^/# link $CUT echo: /"
framelink echo -d $EDEV >/tmp/four-echo.$CUT 2>&1 &
echo $! >/tmp/four-echo-pid.$CUT
t_check "four: cut: link $CUT streams again (every frame verified)" \
	sh -c "framelink bench -d $HDEV -p $EDEV -s 4K,256K -n 32 >/tmp/four-again.out 2>&1;
		_rc=\$?; tail -n 2 /tmp/four-again.out; exit \$_rc"
# the others were still running all along
for i in $others; do
	t_check "four: cut: link $i worker still running after link $CUT came back" \
		alive "$(cat /tmp/four-w-pid.$i)"
done
touch /tmp/four-stop
for i in $others; do
	fl_link $i
	wait_bounded "$(cat /tmp/four-w-pid.$i)" 60
	t_check "four: cut: link $i worker stopped within 60 s" test $? -ne 137
	set -- $(cat /tmp/four-w.$i 2>/dev/null)
	echo "# link $i: $1 benches of 50 x 64 KiB during the cut phase, $2 failed"
	[ -f /tmp/four-wfail.$i ] && sed "s/^/# link $i failed bench: /" /tmp/four-wfail.$i
	t_check "four: cut: link $i: every bench passed, every frame verified" \
		test -n "$1" -a "$2" = 0
	runs=$1
	# two stats reads (hrx) ran on this link mid-phase
	counts cut $i $((runs * 50)) $runs 2
done
for i in $LINKS; do
	kill "$(cat /tmp/four-echo-pid.$i)" 2>/dev/null
	wait_bounded "$(cat /tmp/four-echo-pid.$i)" 10
	erc=$?
	tail -n 1 /tmp/four-echo.$i | sed "s/^/# link $i echo: /"
	[ $i = $CUT ] && continue
	t_check "four: cut: link $i endpoint echo: no frame failed" \
		sh -c "[ $erc -ne 137 ] && grep '^framelink: echo: status:' /tmp/four-echo.$i |
			tail -n 1 | grep -qE 'status: OK=[0-9]+\$'"
done

# ---- 5. teardown ----
for i in $LINKS; do
	fl_link $i
	t_check "four: link $i: unbind, remove the function" sh -c \
		". /tests/lib.sh; . /tests/epc-loop-lib.sh; . /tests/framelink-lib.sh
			fl_link $i; fl_unbind && rmdir $FN"
done
# leaks counted before the unload (the modules' frames still have names in the backtraces),
# from kmemleak's own count since the start of this script
kml_count
t_check "four: kmemleak: no object leaked since the start ($kml_n)" test "$kml_n" = 0
t_check "four: unload" sh -c 'rmmod framelink_host && rmmod framelink_epf && rmmod pci_epc_loop'
echo "# four: $(($(cut -d. -f1 /proc/uptime) - t_start)) s"
