#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runner self-test: this test passes, but the splat it plants (ubsan) must fail the run.
. /tests/lib.sh
t_check "runner-selftest: plant a ubsan splat" t_insmod splat kind=ubsan
