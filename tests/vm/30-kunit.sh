#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# KUnit suites of the project's modules: each loaded module runs its suites on load; every
# test case becomes one TAP result here. framelink_kunit: the shared protocol code;
# framelink_slotmem_kunit: framelink-epf's slot memory on the device tree's stand-in
# controllers (dts/qemu-virt.dtso); framelink_events_kunit: framelink-epf's controller
# events, delivered every way a kernel delivers them (drivers/framelink/epf/events.c).
. /tests/lib.sh

kunit=/sys/kernel/debug/kunit
for m in framelink_kunit framelink_slotmem_kunit framelink_events_kunit; do
	if ! t_insmod $m; then
		t_fail "kunit: load $m"
		continue
	fi
	for r in $kunit/*/results; do
		suite=$(basename "$(dirname "$r")")
		# Test cases are the indented result lines of the suite's KTAP.
		sed -n 's/^ \{1,\}\(not ok\|ok\) [0-9]* \([^ #]*\)\(.*\)$/\1 - kunit.'"$suite"'.\2\3/p' "$r"
		grep -q '^ \{1,\}ok ' "$r" || t_fail "kunit: $suite ran no case"
	done
	t_check "kunit: unload $m" rmmod $m
done
