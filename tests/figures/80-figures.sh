#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Issue 12's reliability figures in every `make check`, at counts that fit its budget: 2x10^4
# frames of random size and content echoed and checked byte for byte, 10 host queue resets
# while streaming, 20 DMA errors and stalls, 10 link down/up cycles mid-stream, 3 module
# reloads with traffic; kmemleak after each (tests/vm/figures-lib.sh says what each asserts).
# The issue's short form (10^5 / 50 / 100 / 50 / 10) is `make figures`, about 20 minutes in
# the VM; the long form is `make soak`. Each figure ends with a TAP line and a summary line
# "figure: NAME count=N failures=F leaks=L"; a figure that has not reached its count when
# the run's bound is over says "cut short" and fails.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh
FIG_FRAMES=20000
FIG_QRESET=10
FIG_DMA=20
FIG_LINK=10
FIG_RELOAD=3
FIG_BOUND=900
. /tests/figures-lib.sh
fig_run
