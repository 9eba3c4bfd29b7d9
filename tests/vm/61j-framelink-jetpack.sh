#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 60-framelink-e2e.sh on the JetPack 6 endpoint profile (deinit at PERST# assert, 0-based MSI
# vectors, no MSI-X (as JetPack's epc_features), no dmaengine channels: the CPU path) under the
# generic root; the J784S4 root's jetpack run is in 61-framelink-j784s4.sh (it shares that
# file's expected failures). Then: does the host get the endpoint's interrupts? Mainline
# numbers pci_epc_raise_irq() vectors from 1, JetPack from 0 (MSI BIT(n)): a raise of
# number 1 lands on the host's second vector, which framelink-host does not listen to. The
# interrupt self-test at enable (FL_F_IRQ_TEST, 66-irq-selftest.sh) finds the numbering;
# tegra234 (mainline numbering) is the control.
PAIRS="jetpack:generic-rc"
. /tests/60-framelink-e2e.sh

host_interrupts() {
	framelink stats -d $HDEV | sed -n 's/^interrupts: *//p'
}

# irq_check PROFILE: stream 64 KiB frames both ways, then count the host's interrupts taken
# during the stream (the self-test's at enable do not count) and its safety-timer wake-ups
# (the verdict is taken before fl_down: the helpers it calls use their own globals)
irq_check() {
	local bench_rc irqs i0 safety ok=1
	fl_up $1 generic-rc || return 1
	i0=$(host_interrupts)
	framelink echo -d $EDEV >/tmp/echo.out 2>&1 &
	echo_pid=$!
	framelink bench -d $HDEV -s 64K -n 200 >/tmp/bench.out 2>&1
	bench_rc=$?
	kill $echo_pid
	wait $echo_pid 2>/dev/null
	irqs=$(($(host_interrupts) - ${i0:-0}))
	safety=$(framelink stats -d $HDEV | sed -n 's/^safety_wakeups: *//p')
	echo "$1: bench exit $bench_rc, host interrupts during the stream $irqs, safety_wakeups ${safety:-?}"
	# shown when the check fails: where the interrupts went (raised, held masked, dropped)
	tail -3 /tmp/bench.out
	grep "^irq" $LOOPDBG/stats | tr '\n' ' '
	echo "endpoint raised $(framelink stats -d $EDEV | sed -n 's/^interrupts: *//p')"
	[ $bench_rc -eq 0 ] && [ "$irqs" -gt 0 ] && [ "${safety:-1}" -eq 0 ] && ok=0
	fl_down
	return $ok
}

t_check "tegra234: the host takes the endpoint's interrupts" irq_check tegra234
t_check "jetpack: the host takes the endpoint's interrupts" irq_check jetpack
# the script itself ends well; the TAP lines carry the verdicts
true
