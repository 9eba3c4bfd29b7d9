#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench` inside the VM (issues 10 and 28): the driver pair on pci-epc-loop's
# tegra234-edma profile (2 read + 4 write eDMA channels, framelink takes 2 per direction) with
# the link model on. The model's rate does not come from framelink: first the lab's DMA
# engine alone is measured with the model off (loop-dmatest, no framelink code: 2 channels per
# direction, as framelink takes, 64 KiB, 1 MiB and 4 MiB transfers, the better of two runs),
# and the rate is 1/4 of the slower direction at 4 MiB. framelink's own speed with the model
# off is measured next to that reference. Then for each frame size: host -> endpoint alone
# (16 frames in flight), endpoint -> host alone (16), both at once (8 per direction), and the
# negative controls: one frame in flight, and (4 MiB and up) one extra copy of every frame at
# the receiver (`framelink stream --extra-copy`), which must miss the CPU cost target; beside
# them, each way and both at once again with every byte of every frame checked (`--verify`:
# the timed runs check each frame's stamps, first and last 8 bytes and each 4 KiB page); then a
# sweep of rates up to half the engine, and the endpoint's cost while idle. The CPU time of
# each end's application thread and of the endpoint's engine thread is taken per run. Each
# end runs in its own thread of
# `framelink stream`, as on two boards. Each run prints "csv," lines
# (tools/framelink/stream.c) with the modelled ceiling of its direction appended; then the
# kernel's own pci-epf-test DMA transfers at the same sizes on the same model, by its own
# timer and timed from user space as framelink is. scripts/bench-report.py judges: a target
# missed or a control that does not miss fails `make bench`.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh
. /tests/bench-lib.sh

SIZES="4K 16K 64K 256K 1M 4M 8M"
# frames per run (SIZE DEPTH): about 48 MiB of payload, at least 48 frames and 8 times the
# depth (a steady stream, not its start and end), at most 2048
frames() {
	awk -v s="$1" -v q="$2" 'BEGIN { n = int(50331648 / s); n = n < 48 ? 48 : n
		n = n < 8 * q ? 8 * q : n; print (n > 2048 ? 2048 : n) }'
}
bytes() { awk -v s="$1" 'BEGIN { m = substr(s, length(s)); v = s + 0;
	print (m == "K" ? v * 1024 : m == "M" ? v * 1048576 : v) }'; }
model() { awk -v k="$1" '$1 == k { print $2 }' $LOOPDBG/link_model; }
# ceil DIR: the modelled ceiling of a direction in GB/s (rate/8 x payload/(payload+overhead))
ceil() {
	awk -v r="$(model rate_mbps)" -v p="$(model "$1"_payload)" -v o="$(model "$1"_tlp_overhead)" \
		'BEGIN { printf "%.6f", r / 8000 * p / (p + o) }'
}

echo "# kernel $(uname -r) $(uname -m), QEMU TCG on $(nproc) vCPUs: numbers measure this VM"

# ---- the reference: the lab's DMA engine alone, model off (bench-lib.sh) ----
bench_reference
rate=$(bench_rate 4)

t_check "bench: modules (tegra234-edma, host 16 x 8 MiB)" \
	fl_modules profile=tegra234-edma nbufs=16 buf_size=8388608
# both crossovers set, not "auto": the link model paces DMA and not CPU copies, so a crossover
# measured at an enable with the model on would send large frames around the model
t_check "bench: function (16 slots of 8 MiB, crossovers 4 KiB: every frame by DMA)" \
	fl_fn_create slots=16 slot_size=8388608 crossover=4096 rd_crossover=4096
t_check "bench: bind" fl_bind
framelink info -d $EDEV | grep -E 'backend|dma channels|crossover' | sed 's/^/# /'
framelink info -d $HDEV | grep -E 'features' | sed 's/^/# host /'
echo "# host irq_batch $(cat /sys/module/framelink_host/parameters/irq_batch)% of the frames in flight"

# The endpoint engine's kthread (fl-ep0) and its CPU time (ns) and context switches from
# /proc/PID/sched (CONFIG_SCHED_DEBUG): se.sum_exec_runtime is in ms with 6 decimals
engine_pid() {
	local c
	for c in /proc/[0-9]*/comm; do
		[ "$(cat "$c" 2>/dev/null)" = fl-ep0 ] && { c=${c%/comm}; echo "${c#/proc/}"; return; }
	done
}
engine_ns() {
	awk '$1 == "se.sum_exec_runtime" { split($3, a, "."); printf "%.0f\n", a[1] * 1e6 + substr(a[2] "000000", 1, 6) }' \
		/proc/"$EPID"/sched 2>/dev/null
}
engine_switches() { awk '$1 == "nr_switches" { print $3 }' /proc/"$EPID"/sched 2>/dev/null; }

# run MODE SIZE DEPTH [--extra-copy|--verify]: one stream; its csv lines get the endpoint
# engine's CPU microseconds per frame (of either direction) and the mode's ceilings appended
# (mode "xcopy" for the extra-copy control, "verified" / "verified-both" for a run that checks
# every byte)
run() {
	echo 1 >$LOOPDBG/link_model_reset
	# the engine thread may start after the host's device appeared (the link-up event)
	[ -n "$EPID" ] && [ -d /proc/"$EPID" ] || EPID=$(engine_pid)
	e0=$(engine_ns)
	case $1 in
	v4l2-e2h)
		framelink v4l2-stream -o "$VEOUT" -c "$VHCAP" -s "$(bytes "$2")" \
			-n "$(frames "$(bytes "$2")" "$3")" -q "$3" --csv --e2h \
			>/tmp/stream.out 2>&1 ;;
	v4l2-*)
		framelink v4l2-stream -o "$VOUT" -c "$VCAP" -s "$(bytes "$2")" \
			-n "$(frames "$(bytes "$2")" "$3")" -q "$3" --csv \
			$([ "$1" = v4l2-dmabuf ] && echo --dmabuf) >/tmp/stream.out 2>&1 ;;
	*)
		framelink stream -m "$1" -s "$(bytes "$2")" -n "$(frames "$(bytes "$2")" "$3")" \
			-q "$3" --csv $4 >/tmp/stream.out 2>&1 ;;
	esac
	rc=$?
	e1=$(engine_ns)
	[ -n "$e0" ] && [ -n "$e1" ] || { rc=1; echo "# the engine thread fl-ep0 (${EPID:-none}) not measured"; }
	eng=$(awk -F, -v d=$((${e1:-0} - ${e0:-0})) '/^csv,/ { n += $6 }
		END { printf "%.1f", n ? d / 1000 / n : 0 }' /tmp/stream.out)
	grep -v '^csv,' /tmp/stream.out | sed 's/^/# /'
	grep '^csv,' /tmp/stream.out | while IFS=, read -r _ m d rest; do
		c=$(ceil "$([ "$d" = h2e ] && echo read || echo write)")
		case "$4" in
		--extra-copy) m=xcopy ;;
		--verify) m=verified$([ "$1" = both ] && echo -both) ;;
		esac
		echo "csv,$m,$d,$rest,$eng,$c,$(model read_restarts),$(model write_restarts)"
	done
	if [ $rc -eq 0 ]; then t_ok "bench: $1 $2 q$3 $4"; else t_fail "bench: $1 $2 q$3 $4" "exit $rc"; fi
}

# ---- framelink with the model off, next to the reference ----
echo 0 >$LOOPDBG/rate_mbps
# unmodelled GB/s of MODE at SIZE bytes, N frames, 16 in flight
speed() {
	framelink stream -m "$1" -s "$2" -n "$3" -q 16 --csv >/tmp/copy.out 2>&1
	awk -F, '/^csv,/ { print $8 }' /tmp/copy.out
}
for sc in 65536:384 1048576:96 4194304:24; do
	h=$(speed h2e "${sc%:*}" "${sc#*:}")
	e=$(speed e2h "${sc%:*}" "${sc#*:}")
	echo "# framelink, model off, ${sc%:*} bytes, 16 in flight: h2e $h GB/s, e2h $e GB/s"
	echo "csv-off,${sc%:*},$h,$e"
done
echo "# rate_mbps $rate: 1/4 of the reference's slower direction at 4 MiB ($ref4 GB/s)"
echo "csv-rate,$(echo $ref4 | tr ' ' ,),$rate"
t_check "bench: the model's rate is set (>= 80 Mbit/s)" test "$rate" -ge 80
echo "$rate" >$LOOPDBG/rate_mbps
sed 's/^/# /' $LOOPDBG/link_model | grep -E 'rate|payload|overhead|mps|mrrs'

echo "csv-head,mode,dir,size,depth,frames,ns,gbps,fps,p50_us,p99_us,max_us,irq_per_frame,raise_per_frame,dma,cpu,bad,react_p50_us,react_p99_us,react_max_us,reads_per_frame,host_app_us,ep_app_us,engine_us,ceiling_gbps,read_restarts,write_restarts"
# One way: 16 frames in flight (every host buffer, every slot); both at once: 8 each way (the
# buffers split); and the one-frame control.
for s in $SIZES; do
	run h2e "$s" 16
	run e2h "$s" 16
	run both "$s" 8
	# every byte checked, beside the timed runs (one more read of each frame would be the
	# emulated CPU's limit in them)
	run h2e "$s" 16 --verify
	run e2h "$s" 16 --verify
	run both "$s" 8 --verify
	run h2e "$s" 1
	run e2h "$s" 1
	[ "$(bytes "$s")" -ge 4194304 ] || continue
	run h2e "$s" 16 --extra-copy
	run e2h "$s" 16 --extra-copy
done

# ---- the same frames through the V4L2 devices (issue 29): the host's output device, the
# endpoint's capture device with MMAP buffers and with the endpoint's slots imported
# (DMABUF); 16 in flight, and the one-frame control; the other way the endpoint's output
# device and the host's capture device (MMAP); judged against the ioctl path's rows of the
# same direction, size and depth ----
VOUT=$(v4l_node "framelink framelink0")
VCAP=$(v4l_node "framelink framelink-ep0")
VEOUT=$(v4l_node "framelink framelink-ep0 output")
VHCAP=$(v4l_node "framelink framelink0 capture")
if [ -n "$VOUT" ] && [ -n "$VCAP" ] && [ -n "$VEOUT" ] && [ -n "$VHCAP" ]; then
	for s in 1M 4M 8M; do
		run v4l2-dmabuf "$s" 16
		[ "$s" = 8M ] && continue
		run v4l2-mmap "$s" 16
	done
	# 16 MMAP capture buffers of 8 MiB do not fit the controller's memory beside the 16
	# slots (the lab's pool of 256 MiB, "Cannot allocate memory"): 8 in flight, against
	# the ioctl path with 8 in flight
	run h2e 8M 8
	run v4l2-mmap 8M 8
	run v4l2-mmap 4M 1
	run v4l2-e2h 1M 16
	run v4l2-e2h 4M 16
	run e2h 8M 8
	run v4l2-e2h 8M 8
else
	t_fail "bench: V4L2 devices" "no framelink V4L2 nodes (output ${VOUT:-none}, capture ${VCAP:-none}, endpoint output ${VEOUT:-none}, host capture ${VHCAP:-none})"
fi

# ---- how much of the engine framelink holds: a fixed sweep of rates (information) ----
# 1/3 and 1/2 of the engine's 4 MiB speed (1/4: the runs above), 1, 4 and 8 MiB, 16 in
# flight, each way: "csv-cap,DEN,fl,DIR,SIZE,GBPS,CEILING" (the rate is 1/DEN of the engine)
for den in 3 2; do
	bench_rate $den >$LOOPDBG/rate_mbps
	for s in 1M 4M 8M; do
		for m in h2e e2h; do
			echo 1 >$LOOPDBG/link_model_reset
			framelink stream -m $m -s "$(bytes $s)" -n "$(frames "$(bytes $s)" 16)" -q 16 \
				--csv >/tmp/cap.out 2>&1 || t_fail "bench: capacity 1/$den $m $s" "exit $?"
			g=$(awk -F, '/^csv,/ { print $8 }' /tmp/cap.out)
			echo "csv-cap,$den,fl,$m,$(bytes $s),${g:-0},$(ceil "$([ $m = h2e ] && echo read || echo write)")"
		done
	done
done
echo "$rate" >$LOOPDBG/rate_mbps

# ---- moderation sweep: interrupts per frame against latency spread, 1 MiB, 16 in flight ----
for b in 0 20 25 30 33 50 75; do
	echo $b >/sys/module/framelink_host/parameters/irq_batch
	for m in h2e e2h; do
		echo 1 >$LOOPDBG/link_model_reset
		framelink stream -m $m -s 1048576 -n 96 -q 16 --csv >/tmp/sweep.out 2>&1 ||
			t_fail "bench: sweep irq_batch $b $m" "exit $?"
		# csv,mode,dir,size,depth,frames,ns,gbps,fps,p50,p99,max,irq_per_frame,...
		awk -F, -v b=$b '/^csv,/ { print "csv-sweep," b "," $3 "," $8 "," $10 "," $11 "," $13 }' \
			/tmp/sweep.out
	done
done
echo 30 >/sys/module/framelink_host/parameters/irq_batch

# ---- allocations on the data path: slab allocations by call site, 16 vs 48 frames ----
for m in h2e e2h; do
	set -- $(fl_allocs $m 1048576 16) $(fl_allocs $m 1048576 48)
	echo "# allocations $m 1 MiB (host epf provider overrun): 16 frames: $1 $2 $3 $4; 48 frames: $5 $6 $7 $8"
	echo "csv-alloc,$m,1048576,32,$(($5 - $1)),$(($6 - $2)),$(($7 - $3)),$(($4 + $8))"
done

# ---- the endpoint's cost while idle: both applications open, no frames ----
# The engine polls the doorbell with back-off while a session is open (poll_min_us to
# poll_max_us); its wake-ups (context switches) per second and CPU share over the second
# after 1 s and after 10 s without traffic: "csv-idle,AFTER_S,WAKEUPS_PER_S,CPU_PCT"
framelink recv -d $HDEV -n 0 -t 30000 >/tmp/idle-h.out 2>&1 &
ih=$!
framelink recv -d $EDEV -n 0 -t 30000 >/tmp/idle-e.out 2>&1 &
ie=$!
sleep 1
t_check "idle: the engine thread is the one measured during the runs" test "$(engine_pid)" = "$EPID"
for after in 1 10; do
	s0=$(engine_switches)
	c0=$(engine_ns)
	sleep 1
	s1=$(engine_switches)
	c1=$(engine_ns)
	echo "# idle ${after} s after the last frame (both applications open): engine" \
		"$((s1 - s0)) wake-ups/s, $(awk -v d=$((c1 - c0)) 'BEGIN { printf "%.2f", d / 1e7 }')% CPU"
	echo "csv-idle,$after,$((s1 - s0)),$(awk -v d=$((c1 - c0)) 'BEGIN { printf "%.3f", d / 1e7 }')"
	t_check "idle: $after s: the engine's counters read" test -n "$s0" -a -n "$s1" -a -n "$c0" -a -n "$c1"
	[ $after = 1 ] && sleep 8
done
kill -INT $ih $ie 2>/dev/null
wait $ih $ie 2>/dev/null

# ---- the kernel's own pair on the same model: pci-epf-test DMA reads and writes ----
t_check "pcitest: unbind framelink" fl_unbind
rmdir $FN
rmmod framelink_host
t_check "pcitest: load the kernel's pair" sh -c ". /tests/lib.sh; t_insmod pci-epf-test &&
	t_insmod pci_endpoint_test"
t_check "pcitest: function (pci-test-howto's IDs), bind, host device" \
	sh -c ". /tests/lib.sh; . /tests/epc-loop-lib.sh; func_create 0 && link_start"
for s in $SIZES; do
	b=$(bytes "$s")
	# pci-epf-test allocates each transfer whole on both ends: 4 MiB fails (NOT OKAY)
	[ "$b" -le 1048576 ] || continue
	for op in r w; do
		# end to end from user space, as framelink: 16 transfers, each ioctl timed
		echo 1 >$LOOPDBG/link_model_reset
		framelink-testtool pcitest-time $DEV $op "$b" 16 >/tmp/ptt.out 2>&1
		ptrc=$?
		sed 's/^/# /' /tmp/ptt.out
		set -- $(cat /tmp/ptt.out)
		d=$([ $op = r ] && echo h2e || echo e2h)
		c=$(ceil "$([ $op = r ] && echo read || echo write)")
		# pcitest-time DIR SIZE n N ok K ns T gbps G p50_us P p99_us Q max_us M
		[ "$1" = pcitest-time ] && echo "csv,pcitest-e2e,$d,$b,1,$5,$9,${11},$(awk -v n="$5" \
			-v t="$9" 'BEGIN { printf "%.1f", t ? n * 1e9 / t : 0 }'),${13},${15},${17},0,0,$5,0,$(($5 - $7)),0,0,0,0,0,0,0,$c,0,0"
		if [ $ptrc -eq 0 ]; then t_ok "pcitest: $op $s timed from user space"; else
			t_fail "pcitest: $op $s timed from user space" "exit $ptrc"; fi
		# its own timer (pci-epf-test's dmesg line), one transfer
		echo 1 >$LOOPDBG/link_model_reset
		dmesg -c >/dev/null
		pcitest -D $DEV -$op -s "$b" -d >/tmp/pt.out 2>&1
		rc=$?
		# "READ => Size: N B, DMA: YES, Time: S.NNNNNNNNN s, Rate: K KB/s" (pci-epf-test.c)
		kbs=$(dmesg | sed -n 's/.*DMA: YES.*Rate: \([0-9]*\) KB\/s.*/\1/p' | tail -n1)
		d=$([ $op = r ] && echo h2e || echo e2h)
		c=$(ceil "$([ $op = r ] && echo read || echo write)")
		[ -n "$kbs" ] && echo "csv,pcitest,$d,$b,1,1,0,$(awk -v k="$kbs" 'BEGIN { printf "%.6f", k * 1000 / 1e9 }'),0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,$c,0,0"
		if [ $rc -eq 0 ] && [ -n "$kbs" ]; then t_ok "pcitest: $op $s"; else
			sed 's/^/# /' /tmp/pt.out; t_fail "pcitest: $op $s" "exit $rc, rate '${kbs}'"; fi
	done
done
t_check "pcitest: unbind" link_stop
true
