#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The driver pair end to end on the loopback link, on the pci-epc-loop profiles tegra234 (CPU
# copies: no dmaengine channels), tegra234-edma (2 read, 4 write channels) and generic: the
# kselftest (both ends driven by one process), then a stream interrupted by a link down and
# by unbinding the endpoint function: the apps get exactly the errnos the ABI documents
# (ECANCELED for frames in flight, ENOLINK / ENODEV from REAP), nothing hangs, no splat, and
# streaming works again after the link comes back. PAIRS (endpoint:root profiles) is set by
# 61-framelink-j784s4.sh, which runs the same cases under the J784S4 root.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

# errnos FILE WHO ALLOWED END: the app's tally line ("WHO: status: OK=n ECANCELED=m end=ENODEV",
# tools/framelink/common.c) names at least one error, no errno outside ALLOWED (a |-list), and
# ends with END ("-": no end error). The exact errnos the ABI documents, not "any failure".
# ERRNOS_NONE_OK: no error at all is right too (an endpoint with nothing in flight at a cut).
errnos() {
	local _line _tok _nm _seen=0
	_line=$(grep "^$2: status:" $1 | tail -1)
	echo "# $_line"
	[ -n "$_line" ] || return 1
	for _tok in ${_line#*status:}; do
		_nm=${_tok%%=*}
		case "$_nm" in
		OK) ;;
		end) echo "|$4|" | grep -q "|${_tok#end=}|" || return 1 ;;
		*)
			echo "|$3|" | grep -q "|$_nm|" || return 1
			_seen=1
			;;
		esac
	done
	[ "$4" = - ] && echo "$_line" | grep -q " end=" && return 1
	[ "$4" != - ] && ! echo "$_line" | grep -q " end=" && return 1
	[ $_seen = 1 ] || [ "$4" != - ] || [ -n "$ERRNOS_NONE_OK" ]
}

# ep_errnos NAME FILE ALLOWED END: errnos for the endpoint's echo. Frames in flight at a cut
# complete ECANCELED, also one whose CPU copy or DMA the link loss cut (issue 8 item 4: EIO
# before; 68-epf-copy-cut.sh lands a cut inside a copy on purpose).
ep_errnos() {
	t_check "$1" errnos $2 "framelink: echo" "$3" "$4"
}

# stream_cut NAME CUT RESTORE EP_ALLOWED EP_END: echo on the endpoint, a long bench on the
# host, then CUT; the bench must end within 20 s with its frames failed ECANCELED and REAP
# $host_end (ENODEV: the function is removed; ENOLINK on a root that keeps it); the
# endpoint's echo reports EP_ALLOWED errnos and ends
# with EP_END (ENODEV after an unbind: it exits by itself; "-": it runs until SIGTERM) and
# exits non-zero; after RESTORE a short bench passes again.
stream_cut() {
	name=$1
	framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
	echo_pid=$!
	rx0=$(hstat rx_frames)
	framelink bench -d $HDEV -s 64K -n 1000000 >/tmp/bench.out 2>&1 &
	bench_pid=$!
	# cut a stream that runs: frames have come back, not just a process that started
	t_check "$name: stream running" wait_for 200 streaming $bench_pid $((rx0 + 8))
	sleep 1
	$2
	wait_bounded $bench_pid 20
	rc=$?
	t_check "$name: the host app ended within 20 s" test $rc -ne 137
	tail -3 /tmp/bench.out | sed 's/^/# bench: /'
	t_check "$name: the host app got an error, not success" test $rc -eq 1
	t_check "$name: host frames ECANCELED, then REAP $host_end" errnos /tmp/bench.out \
		bench ECANCELED $host_end
	if [ "$5" != - ]; then
		wait_bounded $echo_pid 10
		erc=$?
		t_check "$name: endpoint app ended by itself within 10 s" test $erc -ne 137
	else
		kill $echo_pid
		wait_bounded $echo_pid 10
		erc=$?
		t_check "$name: endpoint app exits on SIGTERM within 10 s" test $erc -ne 137
	fi
	tail -2 /tmp/echo.out | sed 's/^/# echo: /'
	# A link cut finds the endpoint with or without frames in flight (measured: "192 frames
	# echoed, 0 errors" with 9 host frames not yet taken): its app fails only if it lost one.
	# An unbind always ends it (ENODEV).
	ep_want=1
	[ "$5" = - ] && ! grep "^framelink: echo: status:" /tmp/echo.out | tail -1 |
		grep -qv "status: OK=[0-9]*$" && ep_want=0
	t_check "$name: endpoint app exit status says whether it lost a frame" test $erc -eq $ep_want
	ERRNOS_NONE_OK=$([ "$5" = - ] && echo 1) \
		ep_errnos "$name: endpoint app saw only $4${5:+, end $5}" /tmp/echo.out "$4" "$5"
	t_check "$name: link back" $3
	framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
	echo_pid=$!
	t_check "$name: streaming works again" framelink bench -d $HDEV -s 4K,1M -n 50
	kill $echo_pid
	wait $echo_pid 2>/dev/null
}

link_cut() { echo down >$LOOPDBG/link; }

# hstat NAME: one host STATS counter
hstat() { fl_stat $HDEV "$1"; }

link_back() { echo up >$LOOPDBG/link && wait_for 100 test -c $HDEV; }

# PAIRS: endpoint profile:root profile[:MPS] (61-framelink-j784s4.sh sets its own; MPS: the
# root's pci-epc-loop rc_mps, else the root profile's)
for pair in ${PAIRS:-tegra234:generic-rc tegra234-edma:generic-rc generic:generic-rc}; do
	p=${pair%%:*}
	rc=${pair#*:}
	mps=
	case $rc in *:*) mps=${rc#*:} rc=${rc%%:*} ;; esac
	# (stream_cut sets rc to an exit status: the root profile is kept here)
	root=$rc
	[ "$rc" = generic-rc ] || p=$p+$rc
	[ -z "$mps" ] || p=$p+mps$mps
	# a root with hot-plug removes the function (REAP ENODEV), after the host has seen the
	# link go down (DL_Down): a REAP in between says ENOLINK, and the bench ends at the first
	# (a make check beside a CPU hog saw it 0.4 s before the removal); the J784S4 keeps the
	# function and the host's queue stays stopped while the endpoint is gone (REAP ENOLINK:
	# issue 8 item 2)
	host_end="ENODEV|ENOLINK"
	[ "$rc" = j784s4 ] && host_end=ENOLINK
	if ! t_check "$p: loop, framelink-epf, framelink-host up" \
		fl_up ${pair%%:*} "$rc${mps:+ rc_mps=$mps}"; then
		fl_down >/dev/null 2>&1
		continue
	fi
	[ -z "$mps" ] || t_check "$p: the root programmed MPS $mps, the host reports it" \
		sh -c "dmesg | grep 'framelink-host .*: link .*, MPS [0-9]* ' | tail -n1 |
			grep -q ', MPS $mps (supported'"
	# the data-path cases (fixture fl); the endpoint's other fixtures do not depend on the
	# profile pair and run once each (63, 75, 76)
	case ${pair%%:*} in tegra234) dma=0 ;; *) dma=1 ;; esac
	fl_kselftest_skips "kselftest.$p" $dma 1
	t_run_tap "kselftest.$p" framelink_test -f fl
	# without a link-down event (before 6.4) the endpoint sees the cut as failed DMA
	cut_errs="ECANCELED|ENOLINK$([ $FL_LINKDOWN_EVENT = 1 ] || echo '|EIO')"
	cfg0=$(dmesg | grep -c 'resetting the queue: config space reads all-ones')
	stream_cut "$p: link down mid-stream" link_cut link_back "$cut_errs" -
	# issue 27 item 3.12: the watchdog reads the vendor ID before BAR0, so on a root that
	# keeps the function it finds the link gone there, without a BAR0 read (the lab's BAR0
	# still reads the endpoint's memory then; a board's may end in a completion timeout)
	[ "$root" = j784s4 ] && t_check "$p: the watchdog found the link down in config space" \
		sh -c "[ \$(dmesg | grep -c 'resetting the queue: config space reads all-ones') -gt $cfg0 ]"
	# an echo that reaped a frame just before the unbind gets ENODEV from its SUBMIT (the ABI:
	# SUBMIT and POST fail -ENODEV after unbind; seen on 6.1, where no link-down event comes)
	stream_cut "$p: EPF unbound mid-stream" fl_unbind fl_bind "$cut_errs|ENODEV" ENODEV
	t_check "$p: tear down and unload" fl_down
done
