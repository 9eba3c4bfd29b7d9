#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The interrupt self-test at enable (issue 9 section 1, FL_F_IRQ_TEST): the endpoint raises one
# interrupt with number 1, then 0, and keeps the first the host's handler acknowledges in
# fl_bar_doorbell.irq_test; neither acknowledged: the endpoint raises none and the host says
# so and polls. Profiles (generic root):
#  - jetpack: MSI vector n for number n (BIT(n), 0-based, NVIDIA's pcie-tegra194.c; no MSI-X
#    offered): number 0 is kept, the stream gets interrupts and no safety-timer wake-up;
#  - tegra234: MSI number n is vector n-1 (mainline): number 1 acknowledged, no retry;
#  - tegra234 with every interrupt dropped (debugfs drop_irq): the clear message on both
#    sides, FL_IOC_INFO says "poll", frames still flow, no interrupt is counted.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

# up EP_PROFILE [DROP]: modules, function, bind; DROP interrupts dropped before the enable
up() {
	fl_modules "profile=$1 rc_profile=generic-rc" && fl_fn_create slots=8 slot_size=4194304 ||
		return 1
	[ -z "$2" ] || echo $2 >$LOOPDBG/drop_irq || return 1
	dmesg -c >/dev/null
	fl_bind
}

down() {
	echo 0 >$LOOPDBG/drop_irq
	fl_down
}

hstat() { framelink stats -d $HDEV | awk -v k="$1:" '$1 == k { print $2 }'; }
hinfo() { framelink info -d $HDEV | awk -v k="$1:" '$1 == k { print $2 }'; }


# stream_irqs NAME N: N frames both ways; the host took interrupts during the stream (not
# only the self-test's at enable) and no safety-timer wake-up
stream_irqs() {
	local i0 irqs safety
	i0=$(hstat interrupts)
	t_check "$1: stream $2 frames" fl_stream $2
	irqs=$(($(hstat interrupts) - ${i0:-0}))
	safety=$(hstat safety_wakeups)
	echo "# $1: host interrupts at enable ${i0:-?}, during the stream $irqs, safety_wakeups ${safety:-?}"
	t_check "$1: host interrupts during the stream > 0" test "$irqs" -gt 0
	t_check "$1: no safety-timer wake-up" test "${safety:-1}" -eq 0
}

# ---- jetpack: 0-based numbering found and kept ----
if t_check "jetpack: up" up jetpack; then
	dmesg >/tmp/dmesg66j
	grep -i "self-test\|numbering\|interrupts do not" /tmp/dmesg66j | sed 's/^/# /'
	t_check "jetpack: the endpoint finds 0-based numbering" \
		grep -q "interrupt vector numbering: 0-based" /tmp/dmesg66j
	t_check "jetpack: the host was not told to poll" \
		sh -c '! grep -q "endpoint interrupts do not arrive" /tmp/dmesg66j'
	stream_irqs jetpack 200
	t_check "jetpack: tear down" down
else
	down >/dev/null 2>&1
fi

# ---- tegra234: mainline numbering, number 1 acknowledged at once ----
if t_check "tegra234: up" up tegra234; then
	dmesg >/tmp/dmesg66t
	grep -i "self-test\|numbering\|interrupts do not" /tmp/dmesg66t | sed 's/^/# /'
	t_check "tegra234: number 1 acknowledged (1-based)" \
		grep -q "interrupt self-test: .* number 1 acknowledged" /tmp/dmesg66t
	t_check "tegra234: no retry with number 0" \
		sh -c '! grep -q "0-based\|refused\|number 0" /tmp/dmesg66t'
	t_check "tegra234: self-test: one interrupt at enable" test "$(hstat interrupts)" -eq 1
	stream_irqs tegra234 100
	t_check "tegra234: tear down" down
else
	down >/dev/null 2>&1
fi

# ---- every interrupt dropped: said clearly, then polled ----
if t_check "drop_irq: up (tegra234, interrupts dropped)" up tegra234 1000000; then
	dmesg >/tmp/dmesg66d
	grep -i "self-test\|numbering\|interrupts do not" /tmp/dmesg66d | sed 's/^/# /'
	t_check "drop_irq: the host says interrupts do not arrive" \
		grep -q "endpoint interrupts do not arrive (self-test): completions are polled" \
		/tmp/dmesg66d
	t_check "drop_irq: the endpoint says none was acknowledged" \
		grep -q "interrupt self-test: no .* acknowledged" /tmp/dmesg66d
	framelink info -d $HDEV | sed 's/^/# /'
	t_check "drop_irq: FL_IOC_INFO reports polling" sh -c "framelink info -d $HDEV | grep -q 'notify: *polling'"
	t_check "drop_irq: frames flow by polling (bounded)" fl_stream 50
	irqs=$(hstat interrupts)
	echo "# drop_irq: host interrupts ${irqs:-?}"
	t_check "drop_irq: no interrupt taken" test "${irqs:-1}" -eq 0
	t_check "drop_irq: tear down" down
else
	down >/dev/null 2>&1
fi
true
