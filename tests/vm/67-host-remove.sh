#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-host removal with the frame buffers still mmap()ed by an application (issue 8
# item 6, host/bufs.c, host/main.c fl_remove()): `framelink-testtool hold` maps every buffer,
# writes a pattern per page and keeps the device open while the function goes away by
#  - a driver unbind (sysfs), then bind again;
#  - a PCI removal (sysfs remove), then a link cycle;
#  - a surprise removal: the endpoint function stopped (generic-rc root: hot-plug removes the
#    function with its link), then started again;
#  - unbinds racing mmap() calls (the VMA is linked only after ->mmap returns);
#  - an IMPORT on the open file after the unbind: ENODEV, nothing attached (issue 27 3.5);
#  - a remove that cannot stop the endpoint (tegra234-edma, its write DMA stalled) with an
#    import held: the import is kept attached for good, and the pci_dev it names outlives
#    the device's last close (issue 27 3.10: before, the exporter's debugfs bufinfo read the
#    freed device's name, a KASAN use-after-free).
# Afterwards every page of every mapping must fault with SIGBUS (zapped at remove, before the
# buffers were freed through the still bound device), never return data; REAP says ENODEV;
# the device that comes back streams (a short bench). KASAN/kmemleak judge the frees.
# Also: a REAP and a poll() waiting on the device return when it is unbound (the kselftest's
# host_waiters_return_on_remove), within 3 s, not at their own timeouts.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

HDRV=/sys/bus/pci/drivers/framelink-host

up() {
	fl_start "profile=tegra234 rc_profile=generic-rc" "nbufs=4 buf_size=1048576" slots=8 \
		slot_size=1048576
}

bdf() { basename "$(readlink -f /sys/class/misc/framelink0/device)"; }

host_unbind() { echo "$BDF" >$HDRV/unbind && test ! -e $HDEV; }
host_bind() { echo "$BDF" >$HDRV/bind && wait_for 100 test -c $HDEV; }
pci_remove() { echo 1 >/sys/bus/pci/devices/$BDF/remove && test ! -e $HDEV; }
relink() { fl_unbind; fl_bind; }
ep_stop() { fl_unbind && wait_for 100 test ! -e $HDEV; }

# hold_across NAME CMD [race]: the app holds every buffer mapped while CMD removes the host
# device; its verdict (every page SIGBUS, REAP ENODEV) is the check.
hold_across() {
	local name=$1 cmd=$2 race=$3 pid rc
	rm -f /tmp/hold.ready /tmp/hold.go
	framelink-testtool hold $HDEV /tmp/hold.ready /tmp/hold.go $race >/tmp/hold.out 2>&1 &
	pid=$!
	if ! wait_for 100 test -e /tmp/hold.ready; then
		kill $pid
		t_fail "$name: app mapped the buffers" "$(cat /tmp/hold.out)"
		return 1
	fi
	[ -n "$race" ] && sleep 0.3
	t_check "$name: device removed under the mapping" $cmd
	touch /tmp/hold.go
	wait_bounded $pid 60
	rc=$?
	sed 's/^/# /' /tmp/hold.out
	t_check "$name: every mapped page faults (SIGBUS), none returns data" \
		sh -c "[ $rc -eq 0 ] && grep -q 'intact 0 changed 0;.*intact 0 changed 0 ' /tmp/hold.out"
	t_check "$name: REAP on the open file is ENODEV" grep -q 'reap ENODEV' /tmp/hold.out
}

# bench_ok NAME: the device that came back streams (every frame checked).
bench_ok() {
	framelink echo -d $EDEV >/tmp/echo67.out 2>&1 &
	local epid=$!
	t_check "$1: streaming on the device that came back" \
		framelink bench -d $HDEV -s 4K,256K -n 20
	kill $epid
	wait $epid 2>/dev/null
}

zapped() { dmesg | grep -c 'buffer mappings zapped'; }

if t_check "remove: loop (tegra234, generic-rc), framelink-epf, framelink-host up" up; then
	BDF=$(bdf)
	echo "# host function $BDF"

	# (not $n: wait_for counts with it)
	zn=$(zapped)
	hold_across "unbind" host_unbind
	t_check "unbind: the log says the mappings were zapped" \
		sh -c "[ \$(dmesg | grep -c 'buffer mappings zapped') -gt $zn ]"
	t_check "unbind: bind again" host_bind
	bench_ok "unbind"

	# a REAP (20 s timeout) and a poll() without timeout, waiting with nothing in flight,
	# return within 3 s of the unbind: REAP ENODEV, poll() POLLERR|POLLHUP (issue 28 item 8)
	FL_HOST_UNBIND=$BDF t_run_tap "kselftest.remove" framelink_test \
		-t host_waiters_return_on_remove
	t_check "waiters: bind again" host_bind

	# IMPORT on a file whose device went away (issue 27 item 3.5): ENODEV before any attach
	# or map. fl-delay on dma_buf_attach() counts the calls that reach it (held); before,
	# the import attached to and mapped for the removed function and only then said ENODEV.
	if [ -f /modules/fl-delay.ko ] &&
		t_check "import after unbind: load fl-delay (dma_buf_attach, 1 ms)" \
			t_insmod fl-delay func=dma_buf_attach delay_ms=1 armed=1000; then
		hold_across "import after unbind" host_unbind import
		t_check "import after unbind: IMPORT said ENODEV" \
			grep -q 'import after removal ENODEV' /tmp/hold.out
		t_check "import after unbind: nothing attached to the removed function" \
			test "$(cat /sys/module/fl_delay/parameters/held)" = 0
		echo 0 >/sys/module/fl_delay/parameters/armed
		t_check "import after unbind: unload fl-delay" rmmod fl_delay
		t_check "import after unbind: bind again" host_bind
	else
		t_skip "import after unbind" "fl-delay not built (needs CONFIG_KPROBES)"
	fi

	# back by a link cycle, not by a bus rescan: the lab's host bridge does not follow a
	# BAR the rescan assigns elsewhere (BAR0 then reads other memory: no framelink magic)
	hold_across "pci remove" pci_remove
	t_check "pci remove: link cycled, function back" relink
	BDF=$(bdf)
	bench_ok "pci remove"

	hold_across "surprise" ep_stop
	t_check "surprise: endpoint function started again" fl_bind
	BDF=$(bdf)
	bench_ok "surprise"

	for i in 1 2 3; do
		hold_across "mmap race $i" host_unbind race
		t_check "mmap race $i: bind again" host_bind
	done
	bench_ok "mmap race"

	t_check "remove: tear down and unload" fl_down
else
	fl_down >/dev/null 2>&1
fi

# ---- issue 27 item 3.10: imports kept by a failed remove do not outlive their pci_dev ----
# kept_import_case: a frame's write DMA stalled in the lab, so the endpoint cannot report
# RESET when remove() disables it: remove() keeps the buffers and the imports for good. The
# app holding the import then closes the device (the host's last reference). The dma-buf
# core's bufinfo then prints each attachment's device name.
kept_import_case() {
	local rp sp pid rc
	framelink recv -d $HDEV -n 0 -t 60000 >/tmp/67k-recv.out 2>&1 &
	rp=$!
	sleep 0.5
	echo 60 >$LOOPDBG/stall
	framelink send -d $EDEV -s 1M -n 1 >/tmp/67k-send.out 2>&1 &
	sp=$!
	t_check "kept import: write DMA running (stalled)" \
		wait_for 100 grep -q 'write active' $LOOPDBG/channels
	rm -f /tmp/hold.ready /tmp/hold.go
	framelink-testtool hold $HDEV /tmp/hold.ready /tmp/hold.go keep-import >/tmp/hold.out 2>&1 &
	pid=$!
	t_check "kept import: an import held" wait_for 100 test -e /tmp/hold.ready
	# the buffers, the ring and the import stay mapped on purpose: declared to DMA-API debug
	t_dma_leak_begin
	t_check "kept import: pci remove" pci_remove
	t_check "kept import: DMA-API debug counted the declared leak" t_dma_leak_end
	t_check "kept import: remove could not stop the endpoint (ring kept)" \
		sh -c "dmesg | grep -q 'endpoint did not stop: completion ring leaked'"
	kill $rp 2>/dev/null
	wait $rp 2>/dev/null
	touch /tmp/hold.go
	wait_bounded $pid 60
	sed 's/^/# /' /tmp/hold.out
	sleep 1
	cat /sys/kernel/debug/dma_buf/bufinfo >/tmp/67k-bufinfo.out 2>&1
	sed 's/^/# bufinfo: /' /tmp/67k-bufinfo.out | grep -A3 'Attached Devices' | head -n 8
	t_check "kept import: the attachment still names the removed function" \
		grep -q "$BDF" /tmp/67k-bufinfo.out
	echo 0 >$LOOPDBG/stall
	kill $sp 2>/dev/null
	wait_bounded $sp 20
	t_check "kept import: link cycled, function back" relink
}

if t_check "kept import: loop (tegra234-edma, generic-rc), framelink-epf, framelink-host up" \
	fl_start "profile=tegra234-edma rc_profile=generic-rc" "nbufs=4 buf_size=1048576" \
	slots=8 slot_size=1048576 ring_entries=16 dma_channels=1 crossover=65536 \
	rd_crossover=4096; then
	BDF=$(bdf)
	kept_import_case
	t_check "kept import: tear down and unload" fl_down
else
	fl_down >/dev/null 2>&1
fi
