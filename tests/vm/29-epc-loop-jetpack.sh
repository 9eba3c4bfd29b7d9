#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop, profile jetpack (NVIDIA's JetPack kernel): BAR0 only (1 MiB, 64-bit), MSI-X
# not offered (msix_capable false, as in JetPack 6's and 7's epc_features), MSI vectors
# numbered from 0 (BIT(num), num <= 31), no dmaengine channels (its eDMA is reachable only
# through NVIDIA's library), epc_deinit at PERST# assert.
# The upstream pci-epf-test numbers MSI from 1, so on this controller `pcitest -m N` reaches
# vector N + 1 and fails, and N = 32 is refused: checked here vector by vector in
# /proc/interrupts. pci-epf-test sets up no MSI-X there, so the host finds none. Everything
# else of the pcitest suite passes.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

MSIX=8	# asked for in configfs; the controller does not offer MSI-X, so none is set up

# hostdev: sysfs directory of the pci_endpoint_test function
hostdev() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat $d/vendor)" = 0x104c ] && echo $d && return 0
	done
	return 1
}
# virq K: Linux IRQ of the function's vector K (1-based)
virq() { ls "$(hostdev)/msi_irqs" | sort -n | sed -n "${1}p"; }
# count IRQ: interrupts delivered to Linux IRQ IRQ, all CPUs
count() {
	[ -n "$1" ] || { echo 0; return; }
	awk -v n="$1:" '$1 == n { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s }' /proc/interrupts
}
# has_cap ID: the function's capability list (config space) has capability ID (hex, 2 digits)
has_cap() {
	local b p n=0
	b=$(od -An -v -tx1 -N256 "$(hostdev)/config" | tr -s ' \n' ' ')
	byte() { echo $b | cut -d' ' -f$(($1 + 1)); }
	p=$((0x$(byte 52)))
	while [ $p -ne 0 ] && [ $n -lt 48 ]; do
		[ "$(byte $p)" = "$1" ] && return 0
		p=$((0x$(byte $((p + 1)))))
		n=$((n + 1))
	done
	return 1
}
total() {
	t=0
	for v in $(ls "$(hostdev)/msi_irqs"); do t=$((t + $(count $v))); done
	echo $t
}

# one_up FLAG N WHAT: `pcitest FLAG N` must fail (the upstream pair numbers from 1) while the
# function's vector N + 1 counts exactly one more interrupt.
one_up() {
	want=$(virq $(($2 + 1)))
	before=$(count "$want")
	pcitest -D $DEV $1 $2 >/dev/null 2>&1
	rc=$?
	after=$(count "$want")
	if [ "$after" -eq $((before + 1)) ] && [ $rc -ne 0 ]; then
		t_ok "jetpack: $3: pcitest $1 $2 fails as on the board"
	else
		t_fail "jetpack: $3" "vector count $before -> $after, pcitest rc $rc"
	fi
}

t_check "jetpack: load pci-epc-loop" loop_load profile=jetpack
t_check "jetpack: no dmaengine channels" sh -c "[ ! -s $LOOPDBG/channels ]"
t_check "jetpack: create pci_epf_test function ($MSIX MSI-X asked for)" func_create $MSIX
t_check "jetpack: link up, pci_endpoint_test bound" link_start

pt "jetpack: BAR0" -b 0
pt "jetpack: set IRQ type INTx" -i 0
pt "jetpack: INTx" -l
pt "jetpack: set IRQ type MSI" -i 1
t_check "jetpack: 32 MSI vectors" test "$(ls "$(hostdev)/msi_irqs" | wc -l)" -eq 32
i=1
while [ $i -le 31 ]; do
	one_up -m $i "MSI $i raises vector $((i + 1)) (0-based $i)"
	i=$((i + 1))
done
before=$(total)
pcitest -D $DEV -m 32 >/dev/null 2>&1
rc=$?
t_check "jetpack: MSI 32 refused (BIT(32) does not exist), no vector raised" \
	sh -c "[ $rc -ne 0 ] && [ $(total) -eq $before ]"
t_check "jetpack: the refusal is logged" sh -c "dmesg | grep -q 'MSI 32 refused'"

# MSI-X: not offered, so pci-epf-test set none up and the host cannot switch to it
pcitest -D $DEV -i 2 >/dev/null 2>&1
rc=$?
t_check "jetpack: no MSI-X capability: setting IRQ type MSI-X fails" test $rc -ne 0
msi_not_msix() { has_cap 05 && ! has_cap 11; }
t_check "jetpack: the function's capability list has MSI, no MSI-X" msi_not_msix
pt "jetpack: set IRQ type MSI again" -i 1
for s in 1 1024 1025 1024000 1024001; do
	pt "jetpack: READ $s (MSI)" -r -s $s
	pt "jetpack: WRITE $s (MSI)" -w -s $s
	pt "jetpack: COPY $s (MSI)" -c -s $s
done

cat $LOOPDBG/stats | sed 's/^/# /'
t_check "jetpack: stop and unbind" link_stop
t_check "jetpack: remove function" func_remove
t_check "jetpack: unload pci-epc-loop" loop_unload
