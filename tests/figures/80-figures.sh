#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Issue 12's reliability figures in every `make check`, at the issue's short form: 10^5
# frames of random size and content echoed and checked byte for byte, 50 host queue resets
# while streaming, 100 DMA errors and stalls, 50 link down/up cycles mid-stream, 10 module
# reloads with traffic; kmemleak after each (tests/vm/figures-lib.sh says what each asserts).
# They took 490 s in the VM (`make figures`, the same counts, 2026-12-02); the bound leaves
# room for a slower machine. The long form is `make soak`. Each figure ends with a TAP line
# and a summary line "figure: NAME count=N failures=F leaks=L"; a figure that has not
# reached its count when the run's bound is over says "cut short" and fails.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh
FIG_FRAMES=100000
FIG_QRESET=50
FIG_DMA=100
FIG_LINK=50
FIG_RELOAD=10
FIG_BOUND=1500
. /tests/figures-lib.sh
fig_run
