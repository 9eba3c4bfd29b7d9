#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Stores as the CPU makes them (issue 27 items 1 and 3.1). The lab's watch (pci-epc-loop
# watch.c) puts debug watchpoints on the 16 bytes of fl_host_status the endpoint publishes
# through (cq_prod, e2h_pending, irq_seq, irq_prod) and sends each store the endpoint's CPU
# makes there as its own write, tear_us apart, in program order. A 32-bit index written as
# four byte stores (memcpy_toio() on arm64) then reaches the host in four parts, and a host
# read between two of them sees a torn value: when cq_prod carries into a higher byte (every
# 256 completions) the torn value lies behind cq_cons, "cq_prod past the ring".
#  control: the watch sees what the endpoint stores: every store to those words is counted
#           by size, and the sizes are those of single 32-bit stores (before the fix: 1-byte
#           stores, and protocol errors in the stream below);
#  stream:  more than 2^16 completions (34,000 round trips, 68,000 completions) with the
#           watch armed and the parts 100 us apart: no protocol error, every frame verified.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-host.ko ] || [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "torn stores" "framelink modules not built"
	exit 0
fi

hstat() { fl_stat $HDEV $1 2>/dev/null; }

# cq_va: "VA OFF" for the watch knob: the endpoint's CPU address of the host's completion
# area (cq_addr in BAR0's control block): the smallest ioremap in /proc/vmallocinfo that
# holds its window address, which is the EPC core's mapping of that window region (the host
# maps the whole pool, 256 MiB, through other ioremaps; kptr_restrict 1: real addresses for
# root), and the offset from there. The area lives as long as the host's session: the last
# close resets the queue and the endpoint maps the completion area again at the next enable.
cq_va() {
	local res cq wphys cphys pci off size range rest p best
	res=$(readlink -f /sys/class/misc/${HDEV#/dev/}/device)/resource0
	set -- $(framelink-testtool peek $res 0x108 8)
	cq=$(((0x$2 << 32) | 0x$1))
	wphys=$(($(sed -n 's/^win_phys *//p' $LOOPDBG/window)))
	cphys=
	while read -r _ _ pci _ off _ size; do
		pci=$((pci)) off=$((off))
		[ $cq -ge $pci ] && [ $cq -lt $((pci + size)) ] && cphys=$((wphys + off + cq - pci))
	done <<EOF
$(grep '^map ' $LOOPDBG/window)
EOF
	[ -n "$cphys" ] || { echo "no window mapping holds cq_addr $cq" >&2; return 1; }
	echo 1 >/proc/sys/kernel/kptr_restrict
	best=
	while read -r range size rest; do
		p=${rest##*phys=}
		p=$((${p%% *}))
		if [ $cphys -ge $p ] && [ $cphys -lt $((p + size - 4096)) ] &&
		   { [ -z "$best" ] || [ $size -lt ${best##* } ]; }; then
			best="${range%%-*} $((cphys - p)) $size"
		fi
	done <<EOF
$(grep 'phys=.*ioremap' /proc/vmallocinfo)
EOF
	if [ -n "$best" ]; then
		echo "${best% *}"
		return 0
	fi
	echo "no ioremap of window address $cphys:" >&2
	grep 'phys=' /proc/vmallocinfo >&2
	return 1
}

# watch_count SIZE: stores of SIZE bytes the watch logged
watch_count() { sed -n "s/.* $1:\([0-9]*\).*/\1/p" $LOOPDBG/watch; }
watch_field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" $LOOPDBG/watch; }

if ! t_check "torn stores: loop (tegra234-edma, j784s4 root), framelink-epf, framelink-host up" \
	fl_start "profile=tegra234-edma rc_profile=j784s4" "" slots=8 slot_size=65536; then
	exit 0
fi

# One host session (the bench) from the arm to the end: its completion area stays mapped
framelink echo -d $EDEV >/tmp/80-echo.out 2>&1 &
epid=$!
p0=$(hstat protocol_errors)
# other scripts in this boot (62's hostile endpoint) log the same line: count ours only
pr0=$(dmesg | grep -c 'cq_prod past the ring')
framelink bench -d $HDEV -s 4K -n 34000 >/tmp/80-bench.out 2>&1 &
bpid=$!
framelink-testtool stat-wait $HDEV rx_frames ge 16 30000
va=$(cq_va 2>/tmp/80-va.err)
sed 's/^/# /' /tmp/80-va.err
echo "# completion area: $va (ioremap VA, offset)"
echo 100 >$LOOPDBG/tear_us
if ! t_check "torn stores: watch armed on fl_host_status (16 bytes)" \
	sh -c "[ -n '$va' ] && echo '$va 16' >$LOOPDBG/watch && grep -q '^armed 1' $LOOPDBG/watch"; then
	kill $bpid $epid
	wait
	fl_down
	exit 0
fi
c0=$(($(hstat tx_frames) + $(hstat rx_frames)))
sed 's/^/# watch: /' $LOOPDBG/watch
wait_bounded $bpid 900
brc=$?
c1=$(($(hstat tx_frames) + $(hstat rx_frames)))
kill $epid 2>/dev/null
wait $epid 2>/dev/null
tail -n 3 /tmp/80-bench.out | sed 's/^/# bench: /'
sed 's/^/# watch: /' $LOOPDBG/watch
echo "# completions with the watch armed $((c1 - c0)), protocol errors $(($(hstat protocol_errors) - p0))"

# control: the watch sees every store the endpoint makes to the published words, by size
t_check "control: the watch saw the endpoint's stores to fl_host_status" \
	test $(($(watch_count 1) + $(watch_count 2) + $(watch_count 4) + $(watch_count 8))) -ge 200
t_check "control: every store decoded, none lost" \
	test "$(watch_field unknown)" = 0 -a "$(watch_field dropped)" = 0
t_check "control: the stores were published one by one" test "$(watch_field replayed)" -ge 200
t_check "stores: each published word is one 32-bit store (no 1- or 2-byte parts)" \
	test "$(watch_count 1)" = 0 -a "$(watch_count 2)" = 0
t_check "stream: 34,000 round trips of 4 KiB, parts 100 us apart, every frame verified" \
	test $brc -eq 0
t_check "stream: more than 2^16 completions with the watch armed" test $((c1 - c0)) -gt 65536
t_check "stream: 0 protocol errors" test $(($(hstat protocol_errors) - p0)) -eq 0
t_check "stream: no 'past the ring'" test "$(dmesg | grep -c 'cq_prod past the ring')" -eq "$pr0"
echo 0 >$LOOPDBG/tear_us
echo off >$LOOPDBG/watch
t_check "torn stores: tear down and unload" fl_down
