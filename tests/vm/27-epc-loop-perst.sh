#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop PERST# lifecycle (debugfs "perst": the root complex's PERST#, a host reboot is
# assert then deassert). tegra234: epc_init only at a deassert after start, no link-down event
# at assert, epc_deinit at the next deassert before the new epc_init, EPC operations in reset
# fail and log once per assert; an EPF linked after the first deassert works after a host
# reboot. jetpack: epc_deinit at assert. generic: the knob is a plain link down / up.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

PERST=$LOOPDBG/perst
FAULT_MSG='PERST# holds the controller in reset'

pstat() { awk -v k="$1" '$1 == k {print $2}' $LOOPDBG/perst_stats; }
lstat() { awk -v k="$1" '$1 == k {print $2}' $LOOPDBG/stats; }
host_sees() { grep -qx 0x104c /sys/bus/pci/devices/*/vendor 2>/dev/null; }
host_gone() { ! host_sees && test ! -e $DEV; }
faults_logged() { dmesg | grep -c "$FAULT_MSG"; }
# is PSTAT N: the perst_stats counter PSTAT is N
is() {
	v=$(pstat "$1")
	[ "$v" -eq "$2" ] || { echo "$1 is $v, want $2"; return 1; }
}
perst() { echo "$1" >$PERST; }
bind_fn() { ln -s $FUNC $EP/controllers/$EPC/; }
unbind_fn() { rm $EP/controllers/$EPC/loop0; }
start() { echo 1 >$EP/controllers/$EPC/start; }
stop() { echo 0 >$EP/controllers/$EPC/start; }
bind_start() { bind_fn && start; }
# since MARK: the kernel log after the marker line MARK
mark() { echo "perst-test: $1" >/dev/kmsg; }
since() { dmesg | sed -n "/perst-test: $1/,\$p"; }
teardown() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/loop0
	func_remove
	loop_unload
}
quick_suite() {
	pt "$1: BAR0" -b 0
	pt "$1: set IRQ type MSI" -i 1
	pt "$1: MSI1" -m 1
	pt "$1: READ 1024" -r -s 1024
	pt "$1: WRITE 1024000" -w -s 1024000
}

# --- tegra234, the EPF linked before start --------------------------------------------------
t_check "tegra234: load" loop_load profile=tegra234
t_check "tegra234: function" func_create 0
t_check "tegra234: the root holds PERST# asserted" perst assert
t_check "tegra234: knob reads asserted" grep -qx asserted $PERST
t_check "tegra234: link the function, start" bind_start
sleep 2
t_check "tegra234: started, PERST# asserted: no epc_init" is epc_inits 0
t_check "tegra234: started, PERST# asserted: the host sees no device" host_gone
t0=$(cut -d' ' -f1 /proc/uptime)
t_check "tegra234: PERST# deassert" perst deassert
t_check "tegra234: the host enumerates the function" wait_for 100 test -c $DEV
echo "# PERST# deassert -> pci_endpoint_test bound: $(awk -v t0=$t0 '{printf "%.2f", $1 - t0}' /proc/uptime) s (VM uptime)"
t_check "tegra234: epc_init once" is epc_inits 1
t_check "tegra234: no epc_deinit" is epc_deinits 0
quick_suite "tegra234 first boot"

downs=$(lstat link_downs)
logged=$(faults_logged)
t_check "tegra234: PERST# assert (host reboot begins)" perst assert
t_check "tegra234: the host loses the function (generic-rc: removed)" wait_for 100 host_gone
t_check "tegra234: controller in reset" grep -q 'controller *reset' $LOOPDBG/perst_stats
t_check "tegra234: no epc_deinit at assert" is epc_deinits 0
t_check "tegra234: no link-down event to the EPF" test "$(lstat link_downs)" -eq "$downs"
# EPC operations in reset: unbinding pci-epf-test (the EPC stopped first, as configfs wants)
# clears its BAR (clear_bar), binding it again sends the pending epc_init (write_header):
# both refused, one log line for the assert; start again: PERST# still asserted, nothing
faults=$(pstat faults)
t_check "tegra234: stop" stop
t_check "tegra234: unbind in reset (clear_bar refused)" unbind_fn
t_check "tegra234: bind in reset (write_header refused)" bind_fn
t_check "tegra234: start in reset" start
t_check "tegra234: two operations refused" test "$(pstat faults)" -ge $((faults + 2))
t_check "tegra234: logged once for this assert" test "$(faults_logged)" -eq $((logged + 1))
dmesg | grep "$FAULT_MSG" | tail -2 | sed 's/^/# /'
inits=$(pstat epc_inits)
mark reboot1
t_check "tegra234: PERST# deassert (host reboot ends)" perst deassert
t_check "tegra234: epc_deinit at the deassert" is epc_deinits 1
t_check "tegra234: then a new epc_init" is epc_inits $((inits + 1))
order() { since reboot1 | grep -o 'epc_[a-z]* to the endpoint' | tr '\n' ' '; }
t_check "tegra234: epc_deinit before epc_init" sh -c "[ \"$(order)\" = 'epc_deinit to the endpoint epc_init to the endpoint ' ]"
t_check "tegra234: the host enumerates the function again" wait_for 100 test -c $DEV
quick_suite "tegra234 after reboot"
logged=$(faults_logged)
t_check "tegra234: second host reboot, unbind in reset" sh -c "echo assert >$PERST && echo 0 >$EP/controllers/$EPC/start && rm $EP/controllers/$EPC/loop0"
t_check "tegra234: logged again for the second assert" test "$(faults_logged)" -eq $((logged + 1))
t_check "tegra234: bind, start, deassert" sh -c "ln -s $FUNC $EP/controllers/$EPC/ && echo 1 >$EP/controllers/$EPC/start && echo deassert >$PERST"
t_check "tegra234: up after the second reboot" wait_for 100 test -c $DEV
cat $LOOPDBG/perst_stats | sed 's/^/# /'
t_check "tegra234: tear down" teardown

# --- tegra234, the EPF linked after the first deassert --------------------------------------
t_check "late: load" loop_load profile=tegra234
t_check "late: start with no function" start
t_check "late: first deassert: epc_init to nobody" wait_for 50 sh -c "[ \$(awk '\$1 == \"epc_inits\" {print \$2}' $LOOPDBG/perst_stats) -eq 1 ]"
t_check "late: function, linked now (the core sends the pending epc_init)" func_create 0
t_check "late: link it" bind_fn
t_check "late: host reboot (assert, deassert)" sh -c "echo assert >$PERST && echo deassert >$PERST"
t_check "late: the host enumerates the function" wait_for 100 test -c $DEV
quick_suite "late"
t_check "late: tear down" teardown

# --- jetpack: epc_deinit at assert ----------------------------------------------------------
t_check "jetpack: load" loop_load profile=jetpack
t_check "jetpack: function" func_create 4
t_check "jetpack: link up (the root deasserts PERST# after start)" link_start
t_check "jetpack: one epc_init" is epc_inits 1
pt "jetpack: set IRQ type MSI" -i 1
# (pcitest -m N would reach vector N + 1: the numbering is 29's subject, not this test's)
pt "jetpack: WRITE 1024, completion by MSI" -w -s 1024
t_check "jetpack: PERST# assert" perst assert
t_check "jetpack: epc_deinit at assert" is epc_deinits 1
t_check "jetpack: the host loses the function" wait_for 100 host_gone
t_check "jetpack: PERST# deassert" perst deassert
t_check "jetpack: no second epc_deinit, a new epc_init" sh -c \
	"[ \$(awk '\$1 == \"epc_deinits\" {print \$2}' $LOOPDBG/perst_stats) -eq 1 ] &&
	[ \$(awk '\$1 == \"epc_inits\" {print \$2}' $LOOPDBG/perst_stats) -eq 2 ]"
t_check "jetpack: the host enumerates the function again" wait_for 100 test -c $DEV
pt "jetpack: set IRQ type MSI again" -i 1
pt "jetpack: WRITE 1024 after reboot, completion by MSI" -w -s 1024
pt "jetpack: READ 1024 after reboot" -r -s 1024
t_check "jetpack: tear down" teardown

# --- generic: the knob is a plain link down / up, epc_init at probe ---------------------------
t_check "generic: load" loop_load profile=generic
t_check "generic: epc_init at probe" is epc_inits 1
t_check "generic: function" func_create 4
t_check "generic: link up" link_start
downs=$(lstat link_downs)
t_check "generic: PERST# assert = link down" perst assert
t_check "generic: the host loses the function" wait_for 100 host_gone
t_check "generic: link-down event sent" test "$(lstat link_downs)" -eq $((downs + 1))
t_check "generic: no epc_deinit" is epc_deinits 0
t_check "generic: EPC operations still work (no reset)" is faults 0
t_check "generic: PERST# deassert = link up" perst deassert
t_check "generic: the host enumerates the function again" wait_for 100 test -c $DEV
t_check "generic: still the one epc_init" is epc_inits 1
quick_suite "generic after PERST#"
t_check "generic: tear down" teardown
