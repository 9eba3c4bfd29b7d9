#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# framelink-epf's controller events across bind, unbind and module unload (issue 8 item 12).
# Before 6.4 the endpoint core has no event ops: CORE_INIT and LINK_UP reach an EPF through
# an atomic notifier chain on the controller (pci_epc_register_notifier(); compat.h), called
# under rcu_read_lock(). The driver's ops sleep, so the notifier must only queue work, and it
# must leave the chain at unbind: an entry left behind is called at the next link up with the
# function's memory freed. From 6.4 the core calls struct pci_epc_event_ops itself. make check
# runs this on 6.12 and on 6.1 (`scripts/vm-run.sh --kernel 6.1`, the notifier path).
#
# Per endpoint profile (generic: epc_init at bind, link up by event; tegra234: both by event at
# PERST# deassert): bind, stream verified frames, unbind, unload framelink-epf, then make the
# controller report link up (and core init) again with nothing bound: nothing may run (a KASAN
# use-after-free or "sleeping function called from invalid context" fails the run); load and
# bind again and stream.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

case "$(uname -r)" in
*-jp6* | *-jp7*) path="event ops (NVIDIA's core, patches/nv)" replay=0 ;;
[1-5].* | 6.[0-3].*) path="notifier (before 6.4)" replay=0 ;;
6.[4-9].* | 6.10.*) path="event ops (6.4 and later)" replay=0 ;;
*) path="event ops (6.4 and later)" replay=1 ;;
esac
echo "# kernel $(uname -r): endpoint events by $path; init replayed to a late function: $replay"

reload() { t_insmod framelink-epf && t_insmod framelink-host; }

# cycle PROFILE
cycle() {
	local p=$1
	t_check "$p: modules" fl_modules "profile=$p rc_profile=generic-rc" || return
	t_check "$p: function" fl_fn_create slots=8 slot_size=1048576
	dmesg -c >/dev/null
	t_check "$p: bind, both devices" fl_bind
	t_check "$p: link up reached the driver" sh -c "dmesg | grep -q 'framelink_epf.*link up'"
	t_check "$p: 16 round trips of 64 KiB, verified" fl_stream 16 64K 60
	t_check "$p: unbind" fl_unbind
	t_check "$p: remove the function" rmdir $FN
	t_check "$p: unload framelink-host" rmmod framelink_host
	t_check "$p: unload framelink-epf" rmmod framelink_epf
	# the controller reports core init and link up with no function: an entry left on the
	# chain would be called now, with its memory freed
	t_check "$p: link up with nothing bound" sh -c "echo 1 >$EP/controllers/$EPC/start"
	sleep 1
	t_check "$p: link down again" sh -c "echo 0 >$EP/controllers/$EPC/start"
	t_check "$p: load framelink-epf and framelink-host again" reload
	t_check "$p: function again" fl_fn_create slots=8 slot_size=1048576
	if [ "$p" = tegra234 ] && [ $replay = 0 ]; then
		# The controller's init (first deassert, above) went to nobody, and before 6.11
		# the core does not replay it: framelink-epf must say so at link up, and a host
		# reboot (PERST# cycle) must set it up.
		t_check "$p: link the function again" sh -c "ln -s $FN $EP/controllers/$EPC/ &&
			echo 1 >$EP/controllers/$EPC/start"
		t_check "$p: link up without init is reported" wait_for 100 sh -c \
			"dmesg | grep -q 'framelink_epf.*init never reached this function'"
		t_check "$p: host reboot (PERST# assert, deassert)" sh -c \
			"echo assert >$LOOPDBG/perst && echo deassert >$LOOPDBG/perst"
		t_check "$p: bind again: both devices" wait_for 100 sh -c "test -c $HDEV && test -c $EDEV"
	else
		t_check "$p: bind again" fl_bind
	fi
	t_check "$p: 16 round trips after the reload, verified" fl_stream 16 64K 60
	t_check "$p: tear down" fl_down
}

cycle generic
cycle tegra234
true
