#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Where the endpoint's frame slots come from (issue 9 section 3). The VM's device tree
# (dts/qemu-virt.dtso) names the loop's own no-map pool "framelink-slots" (memory-region-names
# on the loop node, which stands for the controller): the loop attached that pool at its probe,
# so framelink-epf finds the region by name already serving the controller, uses it and says so
# in one line at bind, without attaching or releasing anything. Then:
#  - a configuration larger than the region (40 slots x 8 MiB = 320 MiB > 256 MiB) fails the
#    bind with -ENOMEM and one clear line naming the region, its size and what was asked, no
#    splat (vm-run.sh fails the run on any);
#  - the function binds again afterwards with the defaults (8 x 8 MiB), and the slots stream
#    frames both ways (their bus addresses lie in the loop's pool: the loop copies only memory
#    it backs);
#  - a second bind/unbind cycle still finds the region serving the controller (nothing of the
#    loop's pool was released by the first unbind).
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

SRC='slots: .* from reserved memory framelink-slots (loop-memory@60000000, 268435456 bytes, no-map pool), attached by its driver, coherent, no iommu'


# bind_with ATTR=VALUE...: (re)create the function with these attributes, clear the log, bind
bind_with() {
	rmdir $FN 2>/dev/null
	fl_fn_create "$@" || return 1
	dmesg -c >/dev/null
	fl_bind
}

if ! t_check "modules" fl_modules "profile=tegra234 rc_profile=generic-rc"; then
	t_skip "the rest: modules did not load"
	exit 0
fi

# ---- the lab's DT: the region is the loop's own pool, found by name ----
if t_check "defaults: bind" bind_with; then
	dmesg >/tmp/dmesg69a
	grep "slots:" /tmp/dmesg69a | sed 's/^/# /'
	t_check "the log line names framelink-slots, the loop's no-map pool, attached by its driver" \
		grep -q "$SRC" /tmp/dmesg69a
	t_check "exactly one source line" test "$(grep -c 'slots: .* from ' /tmp/dmesg69a)" -eq 1
	t_check "the default size: 8 x 8388608 bytes" grep -q "slots: 8 x 8388608 bytes from " \
		/tmp/dmesg69a
	t_check "defaults: unbind" fl_unbind
else
	fl_unbind >/dev/null 2>&1
fi

# ---- too large: clear error, -ENOMEM, no splat ----
rmdir $FN 2>/dev/null
fl_fn_create slots=40 slot_size=8388608
dmesg -c >/dev/null
ln -s $FN $EP/controllers/$EPC/ 2>/tmp/ln69.err
rc=$?
dmesg >/tmp/dmesg69b
sed 's/^/# ln: /' /tmp/ln69.err
grep "framelink-slots\|slots" /tmp/dmesg69b | sed 's/^/# /'
t_check "too large: the bind fails" test $rc -ne 0
t_check "too large: with ENOMEM" grep -qi "out of memory\|cannot allocate memory" /tmp/ln69.err
t_check "too large: the message names the region, its size and what was asked" \
	grep -q "slots: framelink-slots (loop-memory@60000000) has 268435456 bytes, 40 slots x 8388608 bytes = 335544320 asked" \
	/tmp/dmesg69b
t_check "too large: no device left behind" test ! -e $EDEV
rm -f $EP/controllers/$EPC/${FN##*/}

# ---- binds again with the defaults, and streams ----
if t_check "defaults again: bind" bind_with; then
	dmesg >/tmp/dmesg69c
	t_check "defaults again: same source" grep -q "$SRC" /tmp/dmesg69c
	t_check "defaults again: 200 frames both ways" fl_stream 200
	t_check "defaults again: unbind" fl_unbind
else
	fl_unbind >/dev/null 2>&1
fi

# ---- the unbind released nothing of the loop's: a third bind still finds the pool ----
if t_check "third bind" bind_with slots=4 slot_size=4194304; then
	dmesg >/tmp/dmesg69d
	grep "slots:" /tmp/dmesg69d | sed 's/^/# /'
	t_check "third bind: the loop's pool still serves the controller" \
		grep -q "slots: 4 x 4194304 bytes from reserved memory framelink-slots (loop-memory@60000000" \
		/tmp/dmesg69d
	t_check "third bind: 50 frames both ways" fl_stream 50
fi
t_check "tear down" fl_down
true
