#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runner self-test: this test passes, but the RCU stall it plants must fail the run.
. /tests/lib.sh
echo 3 >/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout
t_check "runner-selftest: plant an rcu stall" t_insmod splat kind=rcu
