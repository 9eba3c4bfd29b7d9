#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pci-epc-loop root-complex profiles.
# j784s4: the pcitest suite with MSI and MSI-X (GIC ITS), INTx refused (no INTx domain), Device
# Control MPS 128; a link loss keeps the function (no hot-plug): the sysfs device, its held-open
# config file and /dev/pci-endpoint-test.0 stay, config reads return all-ones; the link returns
# and pcitest passes on the same pci_dev without re-enumeration.
# generic-rc: MPS 256; level INTx: one raise runs pci_endpoint_test's handler again while the
# line is held (irq_intx_redelivered grows), the INTx Status bit follows the line, and with
# intx_level=0 the handler runs once.
. /tests/lib.sh
. /tests/epc-loop-lib.sh

# pci_dev sysfs directory of the test function (vendor 0x104c)
pdev() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = 0x104c ] && echo "$d" && return 0
	done
	return 1
}

# cfgb DEV OFF: one config byte as a decimal number
cfgb() {
	printf '%d' "0x$(od -An -tx1 -j "$(($2))" -N1 "$1/config" | tr -d ' ')"
}

# cfg32 DEV OFF: one config dword as 8 hex digits
cfg32() {
	od -An -tx4 -j "$(($2))" -N4 "$1/config" | tr -d ' '
}

# cap_off DEV ID: offset of a capability, walking the list as the PCI core does
cap_off() {
	p=$(cfgb "$1" 0x34)
	n=0
	while [ "$p" -ne 0 ] && [ $n -lt 48 ]; do
		[ "$(cfgb "$1" "$p")" -eq $(($2)) ] && echo "$p" && return 0
		p=$(cfgb "$1" $((p + 1)))
		n=$((n + 1))
	done
	return 1
}

# mps_is DEV BYTES: Device Control's Max_Payload_Size field
mps_is() {
	exp=$(cap_off "$1" 0x10) || return 1
	ctl=$(cfgb "$1" $((exp + 8)))
	mps=$((128 << ((ctl >> 5) & 7)))
	echo "DevCtl MPS $mps"
	[ $mps -eq "$2" ]
}

# mpss_is DEV BYTES: Device Capabilities' Max_Payload_Size Supported
mpss_is() {
	exp=$(cap_off "$1" 0x10) || return 1
	cap=$(cfgb "$1" $((exp + 4)))
	mpss=$((128 << (cap & 7)))
	echo "DevCap MPSS $mpss"
	[ $mpss -eq "$2" ]
}

rcstat() {
	sed -n "s/^$1 *//p" $LOOPDBG/rc_stats
}

intx_status() {
	[ $(($(cfgb "$1" 6) & 8)) -ne 0 ]
}

intx_clear() {
	! intx_status "$1"
}

# ---- j784s4 ------------------------------------------------------------------------------
t_check "j784s4: load pci-epc-loop and the test pair" loop_load profile=generic rc_profile=j784s4
t_check "j784s4: profile shown" grep -q '^rc_profile *j784s4$' $LOOPDBG/rc_stats
t_check "j784s4: create pci_epf_test function" func_create 8
t_check "j784s4: link up, pci_endpoint_test bound" link_start
D=$(pdev)
t_check "j784s4: host sees the function" test -n "$D"
t_check "j784s4: DevCap MPSS 256" mpss_is "$D" 256
t_check "j784s4: DevCtl MPS 128 (root port keeps its reset MPS)" mps_is "$D" 128

for b in 0 1 2 3 4 5; do
	pt "j784s4: BAR$b" -b $b
done
pt_refused "j784s4: set IRQ type INTx refused (no INTx domain)" -i 0
r0=$(rcstat irq_intx_refused)
pt_refused "j784s4: INTx raise not delivered" -l
t_check "j784s4: INTx raise dropped and counted" \
	sh -c "[ $(rcstat irq_intx_refused) -gt $r0 ]"
pt "j784s4: set IRQ type MSI" -i 1
i=1
while [ $i -le 32 ]; do
	pt "j784s4: MSI$i" -m $i
	i=$((i + 1))
done
pt "j784s4: set IRQ type MSI-X (GIC ITS msi-map)" -i 2
i=1
while [ $i -le 8 ]; do
	pt "j784s4: MSI-X$i" -x $i
	i=$((i + 1))
done
pt "j784s4: set IRQ type MSI" -i 1
for d in "" -d; do
	for s in 1 1024 1024001; do
		pt "j784s4: READ $s${d:+ DMA}" -r -s $s $d
		pt "j784s4: WRITE $s${d:+ DMA}" -w -s $s $d
	done
done
pt "j784s4: COPY 1024001" -c -s 1024001

# Link loss: a file held open on the pci_dev's config survives only if the pci_dev does.
exec 3<"$D/config"
lost0=$(rcstat cfg_link_lost)
t_check "j784s4: link down" sh -c "echo down >$LOOPDBG/link"
t_check "j784s4: link state down" grep -qx down $LOOPDBG/link
sleep 0.5
t_check "j784s4: function stays in sysfs" test -e "$D/config"
t_check "j784s4: /dev/pci-endpoint-test.0 stays" test -c $DEV
t_check "j784s4: config reads all-ones (ID)" sh -c "[ $(cfg32 "$D" 0) = ffffffff ]"
t_check "j784s4: config reads all-ones (BAR0, command)" \
	sh -c "[ $(cfg32 "$D" 0x10) = ffffffff ] && [ $(cfg32 "$D" 4) = ffffffff ]"
t_check "j784s4: config accesses without link counted" \
	sh -c "[ $(rcstat cfg_link_lost) -gt $lost0 ]"
t_skip_expected "j784s4: BAR reads all-ones while the link is down" "not modelled (for good)"
t_skip "j784s4: BAR reads all-ones while the link is down" \
	"not modelled: host and endpoint map the same pages and a module cannot remap kernel PTEs (see Documentation/pci-epc-loop.rst)"
pt_refused "j784s4: MSI not delivered while the link is down" -m 1
cat $LOOPDBG/rc_stats | sed 's/^/# /'

t_check "j784s4: link up again" sh -c "echo up >$LOOPDBG/link"
t_check "j784s4: link state up" wait_for 100 grep -qx up $LOOPDBG/link
t_check "j784s4: same pci_dev (held config file reads the vendor ID)" \
	sh -c '[ "$(od -An -tx2 -N2 <&3 | tr -d " ")" = 104c ]'
exec 3<&-
t_check "j784s4: same sysfs device" test "$(pdev)" = "$D"
t_check "j784s4: DevCtl MPS still 128 (no re-enumeration)" mps_is "$D" 128
pt "j784s4: BAR0 after link up" -b 0
pt "j784s4: MSI1 after link up" -m 1
pt "j784s4: MSI32 after link up" -m 32
pt "j784s4: READ 1024000 DMA after link up" -r -s 1024000 -d
pt "j784s4: WRITE 1024000 after link up" -w -s 1024000

# Teardown: the host driver leaves while the link is up; the root keeps the bus until unload.
cat $LOOPDBG/stats | sed 's/^/# /'
t_check "j784s4: unbind pci_endpoint_test" rmmod pci_endpoint_test
echo 0 >$EP/controllers/$EPC/start
t_check "j784s4: stop keeps the function" sh -c "sleep 0.5; test -e $D/config"
rm -f $EP/controllers/$EPC/loop0
t_check "j784s4: remove function" func_remove
t_check "j784s4: unload pci-epc-loop" loop_unload
t_check "j784s4: host function gone with the module" test ! -e "$D"

# ---- generic-rc: level INTx --------------------------------------------------------------
t_check "generic-rc: load pci-epc-loop" loop_load profile=generic
t_check "generic-rc: profile is the default" grep -q '^rc_profile *generic-rc$' $LOOPDBG/rc_stats
t_check "generic-rc: create pci_epf_test function" func_create 0
t_check "generic-rc: link up" link_start
D=$(pdev)
t_check "generic-rc: DevCtl MPS 256" mps_is "$D" 256
t_check "generic-rc: intx_level on by default" grep -qx 1 $LOOPDBG/intx_level
t_check "generic-rc: intx_assert_us 1000 by default" grep -qx 1000 $LOOPDBG/intx_assert_us
pt "generic-rc: set IRQ type INTx" -i 0

# Knob on, default 1 ms hold: the handler (which cannot make pci-epf-test deassert) must run
# again after one raise.
r0=$(rcstat irq_intx_redelivered)
pt "generic-rc: INTx, level, 1 ms hold" -l
sleep 0.1
r1=$(rcstat irq_intx_redelivered)
echo "# one raise, 1 ms hold: $((r1 - r0)) re-deliveries"
t_check "generic-rc: level INTx handler run again while held" sh -c "[ $r1 -gt $r0 ]"

# A longer hold: as many runs as the VM's clock allows, at most one per 50 us.
echo 20000 >$LOOPDBG/intx_assert_us
r0=$(rcstat irq_intx_redelivered)
pt "generic-rc: INTx, level, 20 ms hold" -l
sleep 0.2
echo "# one raise, 20 ms hold: $(($(rcstat irq_intx_redelivered) - r0)) re-deliveries"

# The INTx Status bit follows the line: set while a 5 s hold runs (long enough for the shell
# of a slow VM to read it), clear after it.
echo 5000000 >$LOOPDBG/intx_assert_us
t0=$(cut -d' ' -f1 /proc/uptime)
pt "generic-rc: INTx, level, 5 s hold" -l
st=$(cfgb "$D" 6)
echo "# Status $st read $(cut -d' ' -f1 /proc/uptime) s, raise at $t0 s"
t_check "generic-rc: INTx Status set while the line is held" test $((st & 8)) -ne 0
t_check "generic-rc: INTx Status clear after the hold" wait_for 100 intx_clear "$D"
echo 20000 >$LOOPDBG/intx_assert_us

# Knob off: today's single delivery.
echo 0 >$LOOPDBG/intx_level
r0=$(rcstat irq_intx_redelivered)
pt "generic-rc: INTx, edge-like (intx_level=0)" -l
sleep 0.2
r1=$(rcstat irq_intx_redelivered)
t_check "generic-rc: intx_level=0: no re-delivery" sh -c "[ $r1 -eq $r0 ]"
echo 1 >$LOOPDBG/intx_level
echo 1000 >$LOOPDBG/intx_assert_us

pt "generic-rc: set IRQ type MSI" -i 1
pt "generic-rc: MSI1" -m 1
cat $LOOPDBG/rc_stats | sed 's/^/# /'
t_check "generic-rc: stop and unbind" link_stop
t_check "generic-rc: remove function" func_remove
t_check "generic-rc: unload pci-epc-loop" loop_unload
