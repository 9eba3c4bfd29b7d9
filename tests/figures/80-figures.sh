#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Issue 12's reliability figures, short form, in every `make check`: frames of random size and
# content echoed and checked byte for byte, host queue resets while streaming, DMA errors and
# stalls, link down/up cycles mid-stream, module reloads with traffic; kmemleak after each
# (tests/vm/figures-lib.sh says what each asserts). The long form is `make soak`.
# Each figure ends with a TAP line and a summary line "figure: NAME count=N failures=F leaks=L";
# a figure that has not reached its count when the run's bound is over says "cut short" and
# fails.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh
FIG_FRAMES=100000
FIG_QRESET=50
FIG_DMA=100
FIG_LINK=50
FIG_RELOAD=10
# In make check this VM shares the two cores with the suite's: the bound leaves room for that.
FIG_BOUND=2400
. /tests/figures-lib.sh
fig_run
