#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runner self-test: this test passes, but the messages the console lost (dropped printk
# messages) must fail the run. The flood leaves the ring buffer: the console saw the count.
. /tests/lib.sh
t_check "runner-selftest: plant a printk flood" t_insmod splat kind=printk
dmesg -c >/dev/null
