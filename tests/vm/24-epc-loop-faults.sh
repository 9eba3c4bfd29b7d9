#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop fault injection and link model through debugfs: failed DMA transfers, dropped and
# duplicated interrupts, a stalled channel, the rate limit and the per-transfer setup time.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

loop_stat() { awk -v k="$1" '$1 == k { print $2 }' $LOOPDBG/stats; }

t_check "faults: load pci-epc-loop" loop_load profile=generic
t_check "faults: create pci_epf_test function" func_create 8
t_check "faults: link up" link_start
pt "faults: set IRQ type MSI" -i 1

e0=$(loop_stat dma_errors)
echo 1 >$LOOPDBG/fail_dma
pt_refused "faults: fail_dma=1 fails the next DMA READ" -r -s 4096 -d
t_check "faults: dma_errors counted" test "$(loop_stat dma_errors)" -eq $((e0 + 1))
pt "faults: the DMA READ after it passes" -r -s 4096 -d

echo 1 >$LOOPDBG/drop_irq
pt_refused "faults: drop_irq=1 loses the MSI (host times out)" -m 1
pt "faults: the MSI after it arrives" -m 1

m0=$(loop_stat irq_msi)
echo 1 >$LOOPDBG/dup_irq
pt "faults: dup_irq=1, MSI delivered" -m 2
t_check "faults: MSI delivered twice" test "$(loop_stat irq_msi)" -eq $((m0 + 2))

# Stall the first write channel (DMA READ test = endpoint writes to the host).
echo 0x4 >$LOOPDBG/stall
pcitest -D $DEV -r -s 65536 -d >/tmp/pt-stall.out 2>&1 &
pid=$!
t_check "faults: stalled channel holds the transfer" \
	wait_for 100 grep -q "^2 write active.*stalled" $LOOPDBG/channels
sleep 1
t_check "faults: still stalled after 1 s" grep -q "^2 write active 0/65536" $LOOPDBG/channels
echo 0 >$LOOPDBG/stall
wait $pid
rc=$?
sed 's/^/# /' /tmp/pt-stall.out
if [ $rc -eq 0 ]; then t_ok "faults: transfer completes after unstall"; else
	t_fail "faults: transfer completes after unstall" "pcitest exit $rc"; fi

# Link model: 8 Mbit/s = 1 MB/s, so 1024000 bytes take at least ~1 s of link time.
echo 8 >$LOOPDBG/rate_mbps
t0=$(uptime_cs)
pt "faults: DMA READ at rate_mbps=8" -r -s 1024000 -d
t1=$(uptime_cs)
echo "# elapsed $((t1 - t0)) cs"
t_check "faults: rate limit holds (>= 0.95 s for 1 MB at 8 Mbit/s)" test $((t1 - t0)) -ge 95
echo 0 >$LOOPDBG/rate_mbps

# 200 ms setup per transfer: a 1-byte DMA takes at least that long.
echo 200000000 >$LOOPDBG/setup_ns
t0=$(uptime_cs)
pt "faults: DMA WRITE with setup_ns=200ms" -w -s 1 -d
t1=$(uptime_cs)
echo "# elapsed $((t1 - t0)) cs"
t_check "faults: setup time holds (>= 0.2 s)" test $((t1 - t0)) -ge 20
echo 0 >$LOOPDBG/setup_ns

# A hostile host scribbles over BAR1; out-of-range requests are refused. The host's view is
# read without writing it first (pcitest's BAR test writes its pattern before it reads, so it
# cannot see a corruption): the BAR test leaves its pattern, corrupt_bar changes bytes 0..15
# and nothing after them.
pt "faults: BAR1 test writes its pattern" -b 1
res1=$(echo /sys/bus/pci/drivers/pci-endpoint-test/*/resource1)
framelink-testtool peek $res1 0 32 >/tmp/bar1.before 2>&1
sed 's/^/# before: /' /tmp/bar1.before
t_check "faults: corrupt_bar in range" sh -c "echo '1 0 16' >$LOOPDBG/corrupt_bar"
framelink-testtool peek $res1 0 32 >/tmp/bar1.after 2>&1
sed 's/^/# after:  /' /tmp/bar1.after
t_check "faults: host reads the corrupted bytes 0..15" \
	test "$(head -1 /tmp/bar1.after)" != "$(head -1 /tmp/bar1.before)"
t_check "faults: bytes 16..31 untouched" \
	test "$(sed -n 2p /tmp/bar1.after)" = "$(sed -n 2p /tmp/bar1.before)"
t_check "faults: corrupt_bar out of range refused" \
	sh -c "! echo '1 0 0x100000' >$LOOPDBG/corrupt_bar 2>/dev/null"
pt "faults: BAR1 test after corruption" -b 1

cat $LOOPDBG/stats | sed 's/^/# /'
t_check "faults: stop and unbind" link_stop
t_check "faults: remove function" func_remove
t_check "faults: unload pci-epc-loop" loop_unload
