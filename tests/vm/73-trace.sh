#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tracepoints along a frame's life on both ends (issue 10): framelink_host (submit, irq,
# complete, reap) and framelink_ep (submit, desc_seen, xfer_start, xfer_done, cq_publish, irq).
# With both systems enabled, a host -> endpoint stream of 64 KiB frames (DMA) and an endpoint
# -> host stream of 4 KiB frames (below the 64 KiB crossover, set in configfs rather than
# measured, so that each stream takes the path it is meant to: CPU copies) must leave every
# event, each frame's transfer on the path it took, and one frame's events in the order of
# its life: SUBMIT on the host, transfer started, transfer done, completion on the host.
# Then the kmem tracepoints count slab allocations by call site: none per frame in either
# framelink module.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs nodev $T 2>/dev/null

if ! t_check "trace: loop, framelink-epf, framelink-host up" \
	fl_start profile=tegra234-edma "nbufs=8 buf_size=1048576" slots=8 slot_size=1048576 \
		crossover=65536 rd_crossover=4096; then
	fl_down >/dev/null 2>&1
	exit 0
fi
t_check "trace: tracefs has framelink_host and framelink_ep events" \
	test -d $T/events/framelink_host -a -d $T/events/framelink_ep

echo 0 >$T/tracing_on 2>/dev/null
echo >$T/trace
echo 1 >$T/events/framelink_host/enable
echo 1 >$T/events/framelink_ep/enable
echo 1 >$T/tracing_on
t_check "trace: h2e 8 x 64 KiB" framelink stream -m h2e -s 64K -n 8 -q 2
t_check "trace: e2h 8 x 4 KiB" framelink stream -m e2h -s 4K -n 8 -q 2
echo 0 >$T/tracing_on
echo 0 >$T/events/framelink_host/enable
echo 0 >$T/events/framelink_ep/enable
cat $T/trace >/tmp/trace.txt
grep -c ': fl_' /tmp/trace.txt | sed 's/^/# trace lines: /'
grep ': fl_' /tmp/trace.txt | head -n 12 | sed 's/^/# /'

# at_least N EVENT [PATTERN]: EVENT lines (matching PATTERN) number N or more
at_least() {
	n=$(grep ": $2: " /tmp/trace.txt | grep -c -- "${3:-.}")
	[ "$n" -ge "$1" ] || { echo "$2 ${3:-}: $n < $1"; return 1; }
}
t_check "trace: fl_host_submit for each frame sent" at_least 8 fl_host_submit
t_check "trace: fl_ep_desc_seen" at_least 1 fl_ep_desc_seen
t_check "trace: fl_ep_xfer_start h2e by DMA" at_least 8 fl_ep_xfer_start 'dir=h2e .*path=dma'
t_check "trace: fl_ep_xfer_done h2e" at_least 8 fl_ep_xfer_done 'dir=h2e'
t_check "trace: fl_ep_submit for each frame the endpoint app sent" at_least 8 fl_ep_submit
t_check "trace: fl_ep_xfer_start e2h by CPU (below the crossover)" \
	at_least 8 fl_ep_xfer_start 'dir=e2h .*path=cpu'
t_check "trace: fl_ep_xfer_done e2h" at_least 8 fl_ep_xfer_done 'dir=e2h'
t_check "trace: fl_ep_cq_publish" at_least 1 fl_ep_cq_publish
t_check "trace: fl_ep_irq" at_least 1 fl_ep_irq
t_check "trace: fl_host_irq" at_least 1 fl_host_irq
t_check "trace: fl_host_complete for each frame (8 sent, 8 received)" at_least 16 fl_host_complete
t_check "trace: fl_host_reap" at_least 1 fl_host_reap
t_check "trace: no transfer failed" sh -c "! grep -q 'path=... failed' /tmp/trace.txt"

# ts EVENT COOKIE [PATTERN]: the timestamp of EVENT for COOKIE (first match)
ts() {
	grep ": $1: " /tmp/trace.txt | grep -- "cookie=$2\$\|cookie=$2 " | grep -- "${3:-.}" |
		head -n1 | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ /^fl_/) { sub(":", "", $i); print $i; exit } }'
}
c=$(grep ': fl_host_submit: ' /tmp/trace.txt | head -n1 | sed 's/.*cookie=\([0-9a-fx]*\).*/\1/')
s=$(ts fl_host_submit "$c")
x0=$(ts fl_ep_xfer_start "$c")
x1=$(ts fl_ep_xfer_done "$c")
d=$(ts fl_host_complete "$c" 'queue=tx')
echo "# frame $c: host submit $s, endpoint start $x0, done $x1, host completion $d"
t_check "trace: one frame's life in order (submit <= start <= done <= completion)" \
	awk -v a="$s" -v b="$x0" -v c="$x1" -v d="$d" \
	'BEGIN { exit !(a != "" && b != "" && c != "" && d != "" && a <= b && b <= c && c <= d) }'

# Nothing allocates on the data path (issue 10): the framelink modules' slab allocations in
# a stream of 24 and of 72 frames are the same (setup's); the DMA provider's are shown.
a1=$(fl_allocs h2e 64K 24)
a2=$(fl_allocs h2e 64K 72)
echo "# allocations (host epf provider overrun): 24 frames: $a1; 72 frames: $a2"
set -- $a1 $a2
t_check "trace: no trace events lost while counting allocations" test "$4" = 0 -a "$8" = 0
t_check "trace: framelink-host allocates nothing per frame (48 more frames: +$(($5 - $1)))" \
	test "$5" = "$1"
t_check "trace: framelink-epf allocates nothing per frame (48 more frames: +$(($6 - $2)))" \
	test "$6" = "$2"

t_check "trace: tear down" fl_down
