# SPDX-License-Identifier: GPL-2.0
# The reliability figures of issue 12, sourced after /tests/lib.sh, /tests/epc-loop-lib.sh and
# /tests/framelink-lib.sh by tests/figures/80-figures.sh (make check, the issue's short form)
# and by the script scripts/soak.sh generates (make soak, the long form; make figures, the
# short form alone). Not a test itself: the VM runs only /tests/[0-9]*.sh.
#
# The caller sets the counts (issue 12's short form is the default here):
#   FIG_FRAMES  frames of random size (1..FIG_MAXSIZE) and content, echoed and verified
#   FIG_LINK    link down/up cycles mid-stream
#   FIG_RELOAD  module reload cycles with traffic
#   FIG_DMA     DMA faults injected (errors and stalls in turn, both directions in turn)
#   FIG_QRESET  host queue resets while streaming
#   FIG_BOUND   seconds for the whole run: a figure that has not reached its count by then
#               stops, says "cut short at N of M" and fails
#   FIG_HOURS   (soak) the frames figure runs rounds until the first FIG_HOURS hours of the
#               run are over (at least FIG_FRAMES frames); its count is what ran
#   FIG_ONLY    figure names to run (default all: frames,qreset,dma,link,reload)
# Each figure ends with a TAP line; fig_report prints one line per figure:
#   figure: NAME count=N failures=F leaks=L time=Ss

FIG_FRAMES=${FIG_FRAMES:-100000}
FIG_LINK=${FIG_LINK:-50}
FIG_RELOAD=${FIG_RELOAD:-10}
FIG_DMA=${FIG_DMA:-100}
FIG_QRESET=${FIG_QRESET:-50}
FIG_BOUND=${FIG_BOUND:-480}
FIG_MAXSIZE=${FIG_MAXSIZE:-8192}
FIG_ONLY=${FIG_ONLY:-frames,qreset,dma,link,reload}

CB=/sys/kernel/debug/fl-pcicb/call
: >/tmp/fig-summary

fig_now() { cut -d. -f1 /proc/uptime; }
fig_t0=$(fig_now)
fig_deadline=$((fig_t0 + FIG_BOUND))
# fig_time_left: the run's bound is not reached
fig_time_left() { [ "$(fig_now)" -lt $fig_deadline ]; }
fig_wanted() { echo ",$FIG_ONLY," | grep -q ",$1,"; }

# fig_up: the pair for the figures: Tegra234 eDMA endpoint (dw-edma channel semantics) under
# the generic root (hot-plug: a link loss removes the host function), 8 slots of 256 KiB, the
# host 16 buffers of 256 KiB; both crossovers at 4 KiB, so random sizes go by CPU copy below
# and by DMA above, both ways
# fig_up [NBUFS SLOTS SIZE]: other buffer counts and size (the frames figure: a deeper queue of
# small buffers, 32 frames in flight instead of 8)
fig_up() {
	fl_start "profile=tegra234-edma rc_profile=generic-rc" \
		"nbufs=${1:-16} buf_size=${3:-262144}" \
		slots=${2:-8} slot_size=${3:-262144} crossover=4096 rd_crossover=4096
}

fig_down() {
	fl_down
}

# fig_leaks: kmemleak's unreferenced objects since fig_leak_reset (kml_count) in $fig_nleak;
# the next figure's fig_leak_reset clears them (without a scan of its own: kml_reset), so it
# counts its own
fig_leaks() {
	kml_count
	fig_nleak=$kml_n
}

fig_leak_reset() { kml_reset; }

# fig_end NAME COUNT TARGET FAILURES LEAKS T0 [UNIT]: the figure's TAP line and its summary
# line (UNIT after the count: what one count is, where that is not the figure's name)
fig_end() {
	local _n=$1 _c=$2 _want=$3 _f=$4 _l=$5 _s=$(($(fig_now) - $6)) _cut=
	echo "figure: $_n count=$_c${7:+ $7} failures=$_f leaks=$_l time=${_s}s" >>/tmp/fig-summary
	if [ "$_c" -lt "$_want" ]; then
		_cut="cut short at $_c of $_want (bound ${FIG_BOUND}s)"
		echo "figure: $_n $_cut" >>/tmp/fig-summary
	fi
	if [ "$_f" = 0 ] && [ "$_l" = 0 ] && [ -z "$_cut" ]; then
		t_ok "figure $_n: $_c of $_want${7:+ $7}, 0 failures, 0 leaks, ${_s}s"
	else
		t_fail "figure $_n: $_c of $_want${7:+ $7}" "failures=$_f leaks=$_l $_cut"
	fi
}

# fig_report: the summary, one line per figure, and the run's time
fig_report() {
	echo "# ---- figures (bound ${FIG_BOUND}s)"
	cat /tmp/fig-summary
	echo "figures: total time=$(($(fig_now) - fig_t0))s"
}

# mismatches FILE: content errors the apps report (bench: not inverted, unexpected frame;
# recv --verify: mismatch)
mismatches() { grep -c 'not inverted\|unexpected frame\|mismatch at byte' "$1"; }

# verified_bench NAME: a short echoed bench of two sizes passes
verified_bench() {
	framelink echo -d $EDEV >/tmp/fig-vecho.out 2>&1 &
	local _e=$!
	t_check "$1" framelink bench -d $HDEV -s 4K,64K -n 50
	local _rc=$?
	kill $_e 2>/dev/null
	wait $_e 2>/dev/null
	return $_rc
}

# random_sizes N MAX: N random sizes in 1..MAX, comma-separated (the seed is logged)
random_sizes() {
	awk -v n=$1 -v m=$2 -v s=$3 'BEGIN { srand(s); for (i = 0; i < n; i++)
		printf "%s%d", i ? "," : "", 1 + int(rand() * m); print "" }'
}

# ---------------------------------------------------------------- frames
# Rounds of `framelink bench` through the endpoint's echo: 16 random sizes a round, each
# frame's payload pseudo-random from its cookie (unique per frame, a random tag per run); the
# endpoint inverts each frame in place (CRC-32 computed over it) and sends it back; the host
# checks every byte of every returned frame is the inverse of what it sent, its size, and
# that no stale frame passes (RX buffers poisoned before each POST). Both directions: host to
# endpoint and endpoint to host, each by CPU copy or DMA by size. The count is round trips,
# each checked once at the host (two frames moved: the returned bytes are the inverse of the
# sent ones only if both transfers were right); FIG_FRAMES frames moved are FIG_FRAMES / 2
# round trips. kmemleak counts what the figure left.
fig_frames() {
	local t0 done=0 fail=0 per round=0 sizes seed rc n bad tend=0 want=$((FIG_FRAMES / 2))
	t0=$(fig_now)
	fig_leak_reset
	# 10 rounds reach the count (rounded up: an 11th round ran 10% more for 80 frames)
	per=$(((want + 159) / 160))
	[ $per -gt 625 ] && per=625
	[ $per -lt 1 ] && per=1
	[ -n "$FIG_HOURS" ] && tend=$((fig_t0 + FIG_HOURS * 3600))
	t_check "figure frames: pair up" fig_up 64 32 $((2 * FIG_MAXSIZE)) ||
		{ fig_end frames 0 $want 1 0 $t0 round-trips; return; }
	framelink echo -d $EDEV >/tmp/fig-fecho.out 2>&1 &
	local epid=$!
	while { [ $done -lt $want ] || [ "$(fig_now)" -lt $tend ]; } && fig_time_left; do
		round=$((round + 1))
		seed=$(($(date +%s) + round * 7919))
		sizes=$(random_sizes 16 $FIG_MAXSIZE $seed)
		framelink bench -d $HDEV -s $sizes -n $per >/tmp/fig-fbench.out 2>&1
		rc=$?
		# frames verified: the table's frames column (one row per size)
		n=$(awk '$NF != "FAILED" && NF >= 11 && $2 ~ /^[0-9]+$/ && $1 != "size" { s += $2 }
			END { print s + 0 }' /tmp/fig-fbench.out)
		bad=$(mismatches /tmp/fig-fbench.out)
		done=$((done + n))
		if [ $rc -ne 0 ] || [ "$bad" -ne 0 ] || [ "$n" -ne $((16 * per)) ]; then
			fail=$((fail + 1 + bad))
			echo "# frames: round $round (seed $seed, sizes $sizes) failed: exit $rc, $n frames, $bad mismatches"
			sed 's/^/# bench: /' /tmp/fig-fbench.out | tail -n 24
		fi
	done
	kill $epid 2>/dev/null
	wait $epid 2>/dev/null
	tail -n 1 /tmp/fig-fecho.out | sed 's/^/# echo: /'
	echo "# frames: $round rounds of 16 random sizes x $per round trips: $done round trips, $((2 * done)) frames moved"
	t_check "figure frames: endpoint echo saw no error" \
		sh -c "grep -q ', 0 errors,' /tmp/fig-fecho.out"  || fail=$((fail + 1))
	t_check "figure frames: tear down" fig_down || fail=$((fail + 1))
	fig_leaks
	fig_end frames $done $want $fail $fig_nleak $t0 round-trips
}

# ---------------------------------------------------------------- queue resets
# An endless verified bench through the endpoint's echo; each reset is framelink-host's
# error_detected(io_normal) called as the AER core would (test module fl-pcicb), which resets
# the queue (fl_live_reset(-EIO), host/live.c: ENABLE cleared, the endpoint's RESET awaited,
# the queue enabled again). Each: queue_resets +1 and frames flow again (host rx_frames grows
# by 4) within 10 s. After all: the bench still runs, frames failed only -EIO, no content
# mismatch, then a verified bench; nothing left to kmemleak after the teardown.
fig_qreset() {
	local t0 i=0 fail=0 q0 qs q1 r rx bdf epid bpid
	t0=$(fig_now)
	fig_leak_reset
	if ! t_check "figure qreset: pair up" fig_up ||
	   ! t_check "figure qreset: fl-pcicb loaded" t_insmod fl-pcicb; then
		rmmod fl_pcicb 2>/dev/null
		fig_down >/dev/null 2>&1
		fig_end qreset 0 $FIG_QRESET 1 0 $t0
		return
	fi
	bdf=$(basename "$(readlink -f /sys/class/misc/framelink0/device)")
	framelink echo -d $EDEV >/tmp/fig-qecho.out 2>&1 &
	epid=$!
	framelink bench -d $HDEV -s 16K -n 2000000 >/tmp/fig-qbench.out 2>&1 &
	bpid=$!
	rx=$(fl_stat $HDEV rx_frames)
	framelink-testtool stat-wait $HDEV rx_frames gt $((rx + 8)) 30000
	qs=$(fl_stat $HDEV queue_resets)
	while [ $i -lt $FIG_QRESET ] && fig_time_left; do
		q0=$(fl_stat $HDEV queue_resets)
		r=$(echo "$bdf aer-normal" >$CB && cat $CB)
		case "$r" in
		*'error_detected(normal) -> can-recover'*) ;;
		*) echo "# qreset $((i + 1)): $r"
			fail=$((fail + 1)) ;;
		esac
		if ! framelink-testtool stat-wait $HDEV queue_resets gt $q0 10000; then
			echo "# qreset $((i + 1)): queue_resets stayed $q0"
			fail=$((fail + 1))
		fi
		rx=$(fl_stat $HDEV rx_frames)
		if ! framelink-testtool stat-wait $HDEV rx_frames ge $((rx + 4)) 10000; then
			echo "# qreset $((i + 1)): stream did not resume within 10 s (rx_frames $rx)"
			fail=$((fail + 1))
		fi
		i=$((i + 1))
	done
	q1=$(fl_stat $HDEV queue_resets)
	t_check "figure qreset: the bench streamed through all resets" alive $bpid || fail=$((fail + 1))
	kill -INT $bpid 2>/dev/null
	wait_bounded $bpid 30
	kill $epid 2>/dev/null
	wait $epid 2>/dev/null
	grep 'status:' /tmp/fig-qbench.out /tmp/fig-qecho.out | sed 's/^/# /'
	echo "# qreset: queue_resets $qs -> $q1 over $i resets"
	t_check "figure qreset: one queue reset per injection ($qs -> $q1)" \
		test "$q1" -eq $((qs + i)) || fail=$((fail + 1))
	t_check "figure qreset: host frames failed only -EIO" \
		tally_only /tmp/fig-qbench.out bench EIO || fail=$((fail + 1))
	t_check "figure qreset: endpoint frames failed only -ECANCELED/-EIO" \
		tally_only /tmp/fig-qecho.out "framelink: echo" "ECANCELED|EIO" || fail=$((fail + 1))
	t_check "figure qreset: no content mismatch" \
		test "$(mismatches /tmp/fig-qbench.out)" = 0 || fail=$((fail + 1))
	verified_bench "figure qreset: verified stream afterwards" || fail=$((fail + 1))
	rmmod fl_pcicb
	t_check "figure qreset: tear down" fig_down || fail=$((fail + 1))
	fig_leaks
	fig_end qreset $i $FIG_QRESET $fail $fig_nleak $t0
}

# ---------------------------------------------------------------- DMA faults
# A verifying receiver on one end and, per injection, a sender of 2 frames of 16 KiB (above
# both crossovers: DMA) on the other; the injections alternate an error (pci-epc-loop's
# fail_dma=1: the next DMA transfer fails) and a stall (every channel stalled until the frame's
# DMA is seen active, 0.2 s, then released), the first half host to endpoint (read channels),
# the second endpoint to host (write channels). An error: exactly that frame fails -EIO
# (FL_ST_DMA, Documentation/framelink.rst), the endpoint counts one dma_aborts, the other frame
# completes; a stall: it held a transfer in flight (a channel seen active and stalled, else
# the injection fails: a stall that hit nothing proves nothing), no error, both complete (a
# stall shorter than a reset's bound only delays). Every delivered frame is verified at the receiver; the receiver sees no errno but
# -EIO, exactly one per error injected; no transfer leaked (dma_leaked), the engine idle and
# a verified bench afterwards.
fig_dma_one() {
	local _tx=$1 _err=$2 _a0 _a1 _rc _spid _hit=1 _ok
	_a0=$(fl_stat $EDEV dma_aborts)
	if [ $_err = 1 ]; then
		echo 1 >$LOOPDBG/fail_dma
		framelink send -d $_tx -s 16K -n 2 -b 2 --verify >/tmp/fig-dsend.out 2>&1
		_rc=$?
	else
		echo 0xffff >$LOOPDBG/stall
		framelink send -d $_tx -s 16K -n 2 -b 2 --verify >/tmp/fig-dsend.out 2>&1 &
		_spid=$!
		# the stall holds a transfer in flight (a channel active and stalled), or it hit
		# nothing and proves nothing: that fails the injection
		if wait_for 100 grep -q ' active .* stalled$' $LOOPDBG/channels; then
			fig_stall_hits=$((fig_stall_hits + 1))
		else
			_hit=0
		fi
		sleep 0.2
		echo 0 >$LOOPDBG/stall
		wait_bounded $_spid 30
		_rc=$?
	fi
	_a1=$(fl_stat $EDEV dma_aborts)
	tally_line /tmp/fig-dsend.out send
	tally_count OK
	_ok=$tally_c
	tally_count EIO
	fig_sent_ok=$((fig_sent_ok + _ok))
	if [ $_err = 1 ]; then
		[ $_rc = 1 ] && [ "$tally_c" = 1 ] && [ "$_ok" = 1 ] && tally_only_l EIO &&
			[ $((_a1 - _a0)) = 1 ] && return 0
	else
		[ $_rc = 0 ] && [ "$_ok" = 2 ] && [ "$_a1" = "$_a0" ] && [ $_hit = 1 ] && return 0
	fi
	echo "# dma: injection $fig_i ($([ $_err = 1 ] && echo error || echo "stall, hit a transfer: $_hit"), sender $_tx): exit $_rc, dma_aborts $_a0 -> $_a1"
	sed 's/^/# send: /' /tmp/fig-dsend.out | tail -n 4
	return 1
}

# dma_rx_errs N: the receiver's completions failed only -EIO, N of them
dma_rx_errs() {
	tally_only /tmp/fig-drecv.out recv EIO &&
		[ "$(tally_n /tmp/fig-drecv.out recv EIO)" = "$1" ]
}

fig_dma() {
	local t0 fail=0 half rx tx rpid l0 l1 got phase nerr
	t0=$(fig_now)
	fig_i=0
	fig_stall_hits=0
	fig_leak_reset
	t_check "figure dma: pair up" fig_up || { fig_end dma 0 $FIG_DMA 1 0 $t0; return; }
	l0=$(fl_stat $EDEV dma_leaked)
	half=$(((FIG_DMA + 1) / 2))
	for phase in h2e e2h; do
		if [ $phase = h2e ]; then tx=$HDEV rx=$EDEV; else tx=$EDEV rx=$HDEV; fi
		framelink recv -d $rx -n 0 -t 60000 --verify >/tmp/fig-drecv.out 2>&1 &
		rpid=$!
		sleep 0.5
		fig_sent_ok=0
		nerr=0
		while [ $fig_i -lt $FIG_DMA ] && fig_time_left; do
			[ $phase = h2e ] && [ $fig_i -ge $half ] && break
			fig_dma_one $tx $((1 - fig_i % 2)) || fail=$((fail + 1))
			nerr=$((nerr + 1 - fig_i % 2))
			fig_i=$((fig_i + 1))
		done
		echo 0 >$LOOPDBG/fail_dma
		# the receiver has what the sender completed, then stops on SIGINT
		sleep 0.5
		kill -INT $rpid 2>/dev/null
		wait_bounded $rpid 20
		sed 's/^/# recv: /' /tmp/fig-drecv.out | grep -v 'rx buffer' | tail -n 3
		got=$(sed -n 's/^received \([0-9]*\) frames.*/\1/p' /tmp/fig-drecv.out)
		t_check "figure dma $phase: receiver verified every frame the sender completed ($got of $fig_sent_ok)" \
			sh -c "[ '$got' = $fig_sent_ok ] && [ \$(grep -c 'mismatch at byte' /tmp/fig-drecv.out) = 0 ]" ||
			fail=$((fail + 1))
		# recv says VERIFY FAILED for its -EIO completions too: content is the mismatch lines
		t_check "figure dma $phase: receiver saw no errno but EIO, one per error ($nerr)" \
			dma_rx_errs $nerr || fail=$((fail + 1))
	done
	l1=$(fl_stat $EDEV dma_leaked)
	echo "# dma: $fig_stall_hits of $((fig_i / 2)) stalls held a transfer in flight (each must)"
	t_check "figure dma: DMA channels idle" sh -c "! grep -q ' active ' $LOOPDBG/channels" ||
		fail=$((fail + 1))
	verified_bench "figure dma: verified stream afterwards (engine recovered)" ||
		fail=$((fail + 1))
	t_check "figure dma: tear down" fig_down || fail=$((fail + 1))
	fig_leaks
	fig_end dma $fig_i $FIG_DMA $fail $((fig_nleak + l1 - l0)) $t0
}

# ---------------------------------------------------------------- link down/up
# Each cycle: echo on the endpoint, an endless verified bench on the host; once frames flow
# (host rx_frames +4) the link goes down (pci-epc-loop debugfs link=down: the root's hot-plug
# removes the host function); the bench must end within 20 s with its frames failed only
# -ECANCELED and REAP -ENODEV (or -ENOLINK: a REAP after the host saw the link go down and
# before the removal reached it; 60-framelink-e2e.sh), no content mismatch; the echo's
# frames fail only -ECANCELED/-ENOLINK; link up, the host device back within 10 s. The next cycle's stream is
# the check that it resumed; after the last, a verified bench, the teardown (module
# references released) and kmemleak.
fig_link() {
	local t0 i=0 fail=0 epid bpid rc rx ok
	t0=$(fig_now)
	fig_leak_reset
	t_check "figure link: pair up" fig_up || { fig_end link 0 $FIG_LINK 1 0 $t0; return; }
	while [ $i -lt $FIG_LINK ] && fig_time_left; do
		ok=1
		framelink echo -d $EDEV >/tmp/fig-lecho.out 2>&1 &
		epid=$!
		rx=$(fl_stat $HDEV rx_frames)
		framelink bench -d $HDEV -s 16K -n 1000000 >/tmp/fig-lbench.out 2>&1 &
		bpid=$!
		if ! framelink-testtool stat-wait $HDEV rx_frames ge $((${rx:-0} + 4)) 20000; then
			echo "# link $((i + 1)): the stream did not start"
			ok=0
		fi
		echo down >$LOOPDBG/link
		wait_bounded $bpid 20
		rc=$?
		kill $epid 2>/dev/null
		wait_bounded $epid 10
		[ $rc = 1 ] && tally_only /tmp/fig-lbench.out bench "ECANCELED|ENODEV" "ENODEV|ENOLINK" &&
			[ "$(mismatches /tmp/fig-lbench.out)" = 0 ] || ok=0
		tally_only /tmp/fig-lecho.out "framelink: echo" "ECANCELED|ENOLINK" || ok=0
		echo up >$LOOPDBG/link
		wait_for 100 test -c $HDEV || { echo "# link $((i + 1)): host device not back"; ok=0; }
		if [ $ok = 0 ]; then
			fail=$((fail + 1))
			echo "# link $((i + 1)): bench exit $rc"
			grep 'status:' /tmp/fig-lbench.out /tmp/fig-lecho.out | sed 's/^/# /'
			grep 'not inverted\|unexpected\|bad bytes' /tmp/fig-lbench.out | head -n 4 | sed 's/^/# /'
		fi
		i=$((i + 1))
	done
	verified_bench "figure link: verified stream after the last cycle" || fail=$((fail + 1))
	t_check "figure link: tear down" fig_down || fail=$((fail + 1))
	fig_leaks
	fig_end link $i $FIG_LINK $fail $fig_nleak $t0
}

# ---------------------------------------------------------------- module reload
# Each cycle: insmod pci-epc-loop, framelink-epf, framelink-host; function created and bound;
# a verified echoed bench (4K and 64K, 50 frames each) and a verified one-way stream the
# other way (endpoint send --verify, host recv --verify, 64 frames); unbind, rmdir, rmmod
# of the three (a module reference left would fail it). kmemleak after the last.
fig_reload_one() {
	local _r _rc=0
	fig_up || return 1
	framelink echo -d $EDEV >/tmp/fig-recho.out 2>&1 &
	_r=$!
	framelink bench -d $HDEV -s 4K,64K -n 50 >/tmp/fig-rbench.out 2>&1 || _rc=1
	kill $_r 2>/dev/null
	wait $_r 2>/dev/null
	framelink recv -d $HDEV -n 64 -t 20000 --verify >/tmp/fig-rrecv.out 2>&1 &
	_r=$!
	sleep 0.3
	framelink send -d $EDEV -s 32K -n 64 --verify >/tmp/fig-rsend.out 2>&1 || _rc=1
	wait_bounded $_r 30 || _rc=1
	[ $_rc = 0 ] || { tail -n 3 /tmp/fig-rbench.out /tmp/fig-rrecv.out /tmp/fig-rsend.out | sed 's/^/# /'; }
	fig_down || _rc=1
	return $_rc
}

fig_reload() {
	local t0 i=0 fail=0
	t0=$(fig_now)
	fig_leak_reset
	while [ $i -lt $FIG_RELOAD ] && fig_time_left; do
		if ! fig_reload_one; then
			echo "# reload $((i + 1)) failed"
			fail=$((fail + 1))
			fl_down >/dev/null 2>&1
		fi
		i=$((i + 1))
	done
	t_check "figure reload: modules gone" sh -c \
		"! test -d /sys/module/framelink_host && ! test -d /sys/module/framelink_epf && ! test -d /sys/module/pci_epc_loop" ||
		fail=$((fail + 1))
	fig_leaks
	fig_end reload $i $FIG_RELOAD $fail $fig_nleak $t0
}

# fig_run: every wanted figure, then the summary
fig_run() {
	echo "# figures: frames=$FIG_FRAMES link=$FIG_LINK reload=$FIG_RELOAD dma=$FIG_DMA qreset=$FIG_QRESET bound=${FIG_BOUND}s${FIG_HOURS:+ hours=$FIG_HOURS}"
	fig_wanted frames && fig_frames
	fig_wanted qreset && fig_qreset
	fig_wanted dma && fig_dma
	fig_wanted link && fig_link
	fig_wanted reload && fig_reload
	fig_report
}
