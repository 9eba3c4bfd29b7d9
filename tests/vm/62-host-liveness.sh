#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-host liveness and resets (issue 8 items 2, 8, 13, 15, 17; host/live.c) under the
# J784S4 root profile, whose link loss keeps the function bound (no hot-plug), with the
# Tegra234 endpoint (CPU copies):
#  - the kselftest with FL_LINK_KNOB: a link flap with a frame outstanding fails it with
#    -ECANCELED by the host's own watchdog, REAP(timeout 0) stays quick during the reset,
#    poll() reports EPOLLERR and SUBMIT -ENOLINK while the link is down, the queue runs again
#    after it returns; open() is not held up by a last close's reset; an endpoint REAP
#    waiting across the link down returns -ENOLINK at once; failed REAP/SUBMIT/POST
#    have no effect; buffer mappings refuse PROT_EXEC;
#  - a non-zero reserved word in fl_bar_status makes the host refuse the enable;
#  - the endpoint function unbound and bound again with the host idle, then streaming;
#  - framelink-host vectors=0 (no interrupt vector): poll() is woken without interrupts.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

# up [HOST_PARAM...]: Tegra234 endpoint (CPU copies) under the J784S4 root, 8 slots of 4 MiB
up() { fl_start "profile=tegra234 rc_profile=j784s4" "$*" slots=8 slot_size=4194304; }

if t_check "j784s4: loop, framelink-epf, framelink-host up" up; then
	fl_kselftest_skips kselftest.live.j784s4 0 1
	FL_LINK_KNOB=$LOOPDBG/link t_run_tap "kselftest.live.j784s4" framelink_test -f fl \
		-t host_link_flap_recovers -t host_open_not_blocked_by_reset \
		-t ep_reap_link_down_enolink
	t_check "j784s4: link is up after the kselftest" sh -c "grep -q up $LOOPDBG/link"

	# a stray host write to a reserved status word: the endpoint heals it (items 14, 16)
	FL_CORRUPT_KNOB=$LOOPDBG/corrupt_bar t_run_tap "kselftest.statusheal.j784s4" \
		framelink_test -t stray_status_write_heals

	# the endpoint restarts (function unbound and bound again, which also clears BAR0)
	# while the host is idle: the host device stays, the next SUBMIT finds a stopped
	# endpoint and resets the queue before queueing. 4K,64K: what is tested is the host's
	# recovery; 1 MiB CPU copies on a loaded 2-core machine stall the endpoint engine for
	# seconds (issue 8 item 7, endpoint side) and are covered by 61.
	fl_unbind
	t_check "j784s4: host device kept across the EPF unbind" test -c $HDEV
	t_check "j784s4: EPF bound again" fl_bind
	framelink echo -d $EDEV >/tmp/echo62.out 2>&1 &
	echo_pid=$!
	t_check "j784s4: streaming after an endpoint restart" \
		framelink bench -d $HDEV -s 4K,64K -n 50
	kill $echo_pid
	wait $echo_pid 2>/dev/null
	t_check "j784s4: tear down and unload" fl_down
else
	fl_down >/dev/null 2>&1
fi

if t_check "j784s4 vectors=0: framelink-host without an interrupt vector" up vectors=0; then
	t_check "j784s4 vectors=0: host polls (dmesg)" sh -c "dmesg | grep -q 'framelink0.*polling'"
	fl_kselftest_skips kselftest.novector.j784s4 0 0
	t_run_tap "kselftest.novector.j784s4" framelink_test -f fl
	t_check "j784s4 vectors=0: tear down and unload" fl_down
else
	fl_down >/dev/null 2>&1
fi
