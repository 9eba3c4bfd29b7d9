#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check's second lane: the work no VM stage waits for. The 6.1 and newest kernel trees,
# the static checks and the module builds for the other kernels. scripts/check.sh starts it
# right after the dependencies, at idle priority (SCHED_IDLE, idle I/O class), so the 6.12
# build and the VM guests keep every CPU cycle they ask for and this lane takes the rest: a
# guest is idle a third of its time (tests waiting on the link) and a kernel build has serial
# phases (unpacking, linking). On a fresh machine that is about 25 minutes of work that no
# longer adds to check's time.
#
# Usage: check-lane.sh DIR
#   Waits (bounded) for DIR/kdir-6.12, which check.sh writes once the 6.12 tree is built,
#   before the stages that need it. Writes DIR/times (one line per stage, as check.sh prints
#   them), DIR/passed (stages that are checks and passed), DIR/rc (0, or 1 at the first
#   failed stage, where the lane stops). Output goes to stdout (check.sh keeps it in DIR/log).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
dir=${1:?usage: check-lane.sh DIR}
passed=0
: >"$dir/times"
echo 0 >"$dir/passed"

finish() {
	echo "$passed" >"$dir/passed"
	echo "$1" >"$dir/rc"
	exit "$1"
}

# lane_stage NAME COUNTED CMD...: one stage; COUNTED=1 when it is a check (counts as a test)
lane_stage() {
	local name=$1 counted=$2 s rc
	shift 2
	echo "==== lane stage: $name"
	s=$(date +%s)
	"$@"
	rc=$?
	printf '%-28s %5ss %s\n' "$name" $(($(date +%s) - s)) \
		"$([ $rc -eq 0 ] && echo ok || echo FAILED)" >>"$dir/times"
	if [ $rc -ne 0 ]; then
		echo "check lane: stage '$name' failed"
		finish 1
	fi
	[ "$counted" = 1 ] && passed=$((passed + 1))
	echo "$passed" >"$dir/passed"
}

# wait_6_12: the 6.12 tree check.sh builds (bounded: its build takes about 15 minutes on
# two cores; check.sh stops the lane itself when that build fails)
wait_6_12() {
	local i
	for ((i = 0; i < 3600; i++)); do
		[ -s "$dir/kdir-6.12" ] && return 0
		sleep 1
	done
	echo "check lane: no 6.12 tree after 3600 s"
	return 1
}

# The reserved-memory checker must pass the test machine's tree and refuse an overlap.
dts_checks() {
	scripts/qemu-dtb.sh build/virt-framelink.dtb dts/qemu-virt.dtso || return 1
	if scripts/qemu-dtb.sh build/overlap.dtb dts/qemu-virt.dtso tests/dts/overlap.dtso; then
		echo "reserved-memory checker passed an overlapping tree"
		return 1
	fi
	echo "reserved-memory checker refused the overlapping tree, as it must"
}

lane_stage "kernel newest (prepare)" 0 bash -c 'scripts/kernel.sh newest >build/kdir-newest'
lane_stage "kernel 6.1 (prepare)" 0 bash -c 'scripts/kernel.sh 6.1 >build/kdir-6.1'
# The kernel of the 6.1 VM run (the endpoint core's notifier path, before 6.4)
lane_stage "kernel 6.1 (Image)" 0 bash -c 'scripts/kernel-image.sh 6.1 >/dev/null'
k61=$(tail -n1 build/kdir-6.1)
knew=$(tail -n1 build/kdir-newest)
echo "newest kernel tree: $(basename "$knew")"
lane_stage "wait for the 6.12 tree" 0 wait_6_12
k612=$(tail -n1 "$dir/kdir-6.12")

lane_stage "checkpatch --strict" 1 scripts/static-checks.sh "$k612"
lane_stage "reserved-memory checks" 1 dts_checks
lane_stage "board device trees" 1 scripts/check-board-dts.sh "$k612" "$knew"
lane_stage "modules 6.1 W=1" 1 scripts/build-modules.sh 6.1 "$k61"
lane_stage "modules newest W=1" 1 scripts/build-modules.sh newest "$knew"
lane_stage "api variants (epf, host)" 1 scripts/check-api-variants.sh
lane_stage "tegra194 eDMA series (compile)" 1 scripts/check-tegra194-edma.sh "$k612" "$knew"
lane_stage "board build targets" 1 scripts/check-targets.sh "$k612"
lane_stage "board bring-up kit (dry run)" 1 tests/board-kit/run.sh
lane_stage "dkms build (epf, host)" 1 scripts/check-dkms.sh "$k612"
finish 0
