#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The board acceptance plan, in order, run from a third machine that reaches both boards by ssh
# (framelink, its scripts and the kernel's pcitest installed on both):
#   1 pcitest   the kernel's own pci-epf-test / pcitest pair (the link and BAR work at all)
#   2 smoke     framelink: the endpoint echoes, the root sends and verifies 4 KiB and 1 MiB
#   3 bench     CPU vs DMA per size (crossover forced high, then 0)
#   4 reboot    N root reboots: the endpoint stays armed, the root finds it again each time
#   5 rebind    N endpoint function unbind/bind cycles, the stream resumes each time
#   6 soak      HOURS of echo + bench, every frame verified
# Each step prints PASS/FAIL; the plan stops at the first FAIL (later steps need the earlier).
#
# Usage: ORIN=user@orin RC=user@j784s4 acceptance.sh [--dry-run] [--cycles N] [--hours H]
#        [STEP...]
#   --dry-run  print every remote command instead of running it (make check runs this)
# Not run on boards by the project (no hardware): see Documentation/boards.rst.
set -u
dry=0 cycles=10 hours=1
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--cycles) cycles=$2; shift ;;
	--hours) hours=$2; shift ;;
	-*) echo "usage: ORIN=... RC=... $0 [--dry-run] [--cycles N] [--hours H] [STEP...]" >&2
	    exit 1 ;;
	*) break ;;
	esac
	shift
done
steps=${*:-pcitest smoke bench reboot rebind soak}
: "${ORIN:?set ORIN=user@orin}" "${RC:?set RC=user@j784s4}"
cfs=/sys/kernel/config/pci_ep
ctrl=${FL_CONTROLLER:-141a0000.pcie-ep}

# on HOST CMD: run CMD there (dry run: print it)
on() {
	local h=$1
	shift
	if [ $dry -eq 1 ]; then
		echo "[$h] $*"
		return 0
	fi
	ssh -o BatchMode=yes -o ConnectTimeout=10 "$h" "$*"
}
verdict() {
	if [ $dry -eq 1 ]; then
		echo "planned: $1"
	elif [ "$2" -eq 0 ]; then echo "PASS: $1"; else echo "FAIL: $1"; exit 1; fi
}

ep_unbind() {
	on "$ORIN" "echo 0 > $cfs/controllers/$ctrl/start; rm -f $cfs/controllers/$ctrl/fl0"
}

step_pcitest() {
	on "$ORIN" "modprobe pci-epf-test && mkdir -p $cfs/functions/pci_epf_test/t0 &&
		ln -s $cfs/functions/pci_epf_test/t0 $cfs/controllers/$ctrl/ &&
		echo 1 > $cfs/controllers/$ctrl/start" &&
	on "$RC" "reboot" && wait_rc &&
	on "$RC" "modprobe pci_endpoint_test && pcitest -b 0 && pcitest -r -s 1048576 &&
		pcitest -w -s 1048576 && pcitest -r -d -s 1048576 && pcitest -w -d -s 1048576"
	rc=$?
	on "$ORIN" "echo 0 > $cfs/controllers/$ctrl/start; rm $cfs/controllers/$ctrl/t0;
		rmdir $cfs/functions/pci_epf_test/t0"
	verdict "pcitest pair (BAR, read/write by CPU and DMA, 1 MiB)" $rc
}

step_smoke() {
	on "$ORIN" "orin-ep-up.sh --timeout 5; (framelink echo -n 0 >/tmp/echo.log 2>&1 &)" &&
	on "$RC" "reboot" && wait_rc && on "$RC" "j784s4-rc-check.sh" &&
	on "$RC" "framelink bench -s 4K,1M -n 200"
	verdict "framelink smoke: 200 frames of 4 KiB and 1 MiB, verified both ways" $?
}

step_bench() {
	local mode x rc=0
	for mode in cpu:4294967295 dma:0; do
		x=${mode#*:}
		on "$ORIN" "pkill -x framelink; echo 0 > $cfs/controllers/$ctrl/start;
			echo $x > $cfs/functions/framelink_epf/fl0/framelink_epf.0/crossover;
			echo 1 > $cfs/controllers/$ctrl/start; (framelink echo -n 0 >/tmp/echo.log 2>&1 &)" &&
		on "$RC" "echo 1 > /sys/bus/pci/rescan; framelink bench -s 4K,64K,1M,4M,8M -n 200" ||
			rc=1
	done
	verdict "bench, CPU (crossover max) then DMA (crossover 0), 4 KiB .. 8 MiB" $rc
}

step_reboot() {
	local i=0 rc=0
	while [ $i -lt "$cycles" ] && [ $rc -eq 0 ]; do
		on "$RC" "reboot" && wait_rc && on "$RC" "j784s4-rc-check.sh --no-rescan" &&
			on "$RC" "framelink bench -s 1M -n 50" || rc=1
		i=$((i + 1))
	done
	verdict "$cycles root reboots, the endpoint found and streaming each time ($i run)" $rc
}

step_rebind() {
	local i=0 rc=0
	while [ $i -lt "$cycles" ] && [ $rc -eq 0 ]; do
		ep_unbind && on "$ORIN" "orin-ep-up.sh --timeout 30; (framelink echo -n 0 >/tmp/echo.log 2>&1 &)" &&
			on "$RC" "echo 1 > /sys/bus/pci/rescan; framelink bench -s 1M -n 50" || rc=1
		i=$((i + 1))
	done
	verdict "$cycles endpoint unbind/bind cycles, streaming resumes each time ($i run)" $rc
}

step_soak() {
	on "$RC" "end=\$((\$(date +%s) + $hours * 3600));
		while [ \$(date +%s) -lt \$end ]; do framelink bench -s 64K,1M,4M -n 1000 || exit 1; done"
	verdict "soak: $hours h of verified frames" $?
}

# The root is back when ssh answers again (a reboot takes it away first)
wait_rc() {
	[ $dry -eq 1 ] && { echo "[local] wait for $RC to go down and come back (300 s)"; return 0; }
	sleep 20
	local t=0
	until on "$RC" true 2>/dev/null; do
		t=$((t + 10))
		[ $t -lt 300 ] || return 1
		sleep 10
	done
}

for s in $steps; do
	case $s in
	pcitest|smoke|bench|reboot|rebind|soak) echo "== step $s"; "step_$s" ;;
	*) echo "unknown step $s (pcitest smoke bench reboot rebind soak)" >&2; exit 1 ;;
	esac
done
