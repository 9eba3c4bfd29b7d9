#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf on NVIDIA's endpoint core (issue 26), on the lab kernels of patches/nv
# (`scripts/vm-run.sh --kernel jp6|jp7`; make check boots both). There the jetpack profile
# raises link up from the controller's hard IRQ handler, as NVIDIA's tegra194 does, and the
# core calls the function's link_up (both JetPacks) and core_deinit at PERST# assert, with no
# replay of a past init. framelink-epf must only record an event there and run its sleeping
# work in process context (a sleep in hard IRQ context is a "sleeping function called from
# invalid context" splat: the runner fails the run on it), act on each event once, and stream
# verified frames across PERST# cycles, unbind and reload.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

case "$(uname -r)" in
*-jp6* | *-jp7*) ;;
*)
	# make check leaves it out on 6.12; make coverage and a whole-suite run come here
	t_skip_expected "NVIDIA endpoint core" "not one of the lab's NVIDIA kernels"
	t_skip "NVIDIA endpoint core" \
		"kernel $(uname -r) is not a patches/nv kernel (make check runs this on jp6 and jp7)"
	exit 0
	;;
esac
echo "# kernel $(uname -r): NVIDIA's endpoint-core event delivery (patches/nv)"

# count PATTERN: kernel log lines of framelink_epf matching PATTERN since the last dmesg -c
count() { dmesg | grep -c "framelink_epf.*$1"; }
hard_up='event: link up by event op in hard IRQ context'

# acted_once: as many link-up handler runs as link-up events delivered, and at least one
acted_once() {
	local ev=$(count 'event: link up by') ran=$(count ': link up$')
	echo "link-up events $ev, handler runs $ran"
	[ "$ev" -ge 1 ] && [ "$ev" -eq "$ran" ]
}

# session NAME: link up came from hard IRQ context, the driver acted on it once, frames flow
session() {
	t_check "$1: link up reached framelink-epf from hard IRQ context" \
		wait_for 100 sh -c "dmesg | grep -q 'framelink_epf.*$hard_up'"
	t_check "$1: each link-up event acted on once" acted_once
	t_check "$1: 16 round trips of 64 KiB, verified" fl_stream 16 64K 60
}

unload() { fl_unbind && rmdir $FN && rmmod framelink_host && rmmod framelink_epf; }
reload() { t_insmod framelink-epf && t_insmod framelink-host; }

t_check "jetpack: modules" fl_modules "profile=jetpack rc_profile=generic-rc" || exit 0
t_check "the loop raises link up in hard IRQ context" \
	sh -c "! dmesg | grep -q \"endpoint core is mainline's\""
t_check "function" fl_fn_create slots=8 slot_size=1048576
dmesg -c >/dev/null
t_check "bind, both devices" fl_bind
session "first bind"

for i in 1 2 3; do
	dmesg -c >/dev/null
	t_check "PERST# cycle $i: assert" sh -c "echo assert >$LOOPDBG/perst"
	t_check "PERST# cycle $i: core_deinit reached the driver at the assert" \
		sh -c "[ $(count 'event: deinit by event op$') -eq 1 ]"
	t_check "PERST# cycle $i: the host device is gone" wait_for 100 test ! -e $HDEV
	t_check "PERST# cycle $i: deassert" sh -c "echo deassert >$LOOPDBG/perst"
	t_check "PERST# cycle $i: host device back" wait_for 100 test -c $HDEV
	t_check "PERST# cycle $i: core_init ran in process context" \
		sh -c "[ $(count 'event: init by event op$') -eq 1 ]"
	session "PERST# cycle $i"
done

dmesg -c >/dev/null
t_check "unbind" fl_unbind
t_check "bind again" fl_bind
session "rebind"

t_check "unbind, unload framelink-host and framelink-epf" unload
t_check "load both again" reload
t_check "function again" fl_fn_create slots=8 slot_size=1048576
dmesg -c >/dev/null
t_check "bind after the reload" fl_bind
session "reload"
t_check "tear down" fl_down
true
