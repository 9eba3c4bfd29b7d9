#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: dependencies, the three kernel trees and the two lab kernels with NVIDIA's
# endpoint-core event delivery (jp6, jp7: 6.12 + patches/nv), static checks, module builds
# for each, the VM test run on 6.12, the reliability figures (a VM of their own) and shorter
# VM runs on 6.1, jp6 and jp7. Prints each stage's time; the last line is the count of
# every check and test:
# "check: N passed, N failed, N skipped".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p build
t0=$(date +%s)
passed=0
timings=()

# Coverage (issue 12) is measured by `make coverage`, which takes as long as the VM stage and
# stays out of check's budget. Its figure is shown only when build/coverage/stamp says the whole
# suite ran on these very sources (scripts/coverage-key.sh: the content of drivers/, include/,
# the build files and tests/vm, tests/modules); otherwise a line says it did not run.
coverage_line() {
	local stamp=build/coverage/stamp sum=build/coverage/summary.txt key scope vm date floor listed
	if [ ! -f "$stamp" ] || [ ! -f "$sum" ]; then
		echo "coverage: did not run (make coverage measures it)"
		return
	fi
	key=$(sed -n 's/^key //p' "$stamp")
	scope=$(sed -n 's/^scope //p' "$stamp")
	vm=$(sed -n 's/^vm //p' "$stamp")
	date=$(sed -n 's/^date //p' "$stamp")
	floor=$(sed -n 's/^floor //p' "$stamp")
	listed=$(sed -n 's/^listed //p' "$stamp")
	if [ "$key" != "$(scripts/coverage-key.sh)" ]; then
		echo "coverage: did not run on the current sources (last run $date; make coverage measures it)"
		return
	fi
	if [ "$scope" != full ]; then
		echo "coverage: did not run on the whole suite (last run $date: $scope; make coverage measures it)"
		return
	fi
	echo "coverage: $(awk '{ printf "%s%s %s%% lines %s%% branches", (NR > 1 ? ", " : ""), $1, $2, $5 }' \
		"$sum") (make coverage $date$([ "$vm" = passed ] || echo ", its VM run failed")$(
		case "$floor" in *below) echo ", below its floor of ${floor% *}%" ;; esac)$(
		[ "$listed" = ok ] || echo ", unreached lines not all listed"))"
}

stage() {
	local name=$1 s rc
	shift
	echo "==== stage: $name"
	s=$(date +%s)
	set +e
	"$@"
	rc=$?
	set -e
	timings+=("$(printf '%-28s %5ss %s' "$name" $(($(date +%s) - s)) "$([ $rc -eq 0 ] && echo ok || echo FAILED)")")
	if [ $rc -ne 0 ]; then
		printf '%s\n' "==== stage times" "${timings[@]}"
		coverage_line
		echo "check: stage '$name' failed"
		echo "check: $passed passed, 1 failed"
		exit 1
	fi
}

# A stage that is itself a check counts as one passed test.
counted() {
	"$@" && passed=$((passed + 1))
}

sparse_build() {
	local log=build/sparse-6.12.log
	scripts/build-modules.sh 6.12 "$k612" C=2 2>&1 | tee "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	if grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log"; then
		echo "sparse: warnings above"
		return 1
	fi
	echo "sparse: clean"
}

stage deps scripts/install-deps.sh
# The newest tree is mostly a download: it runs beside the 6.12 build (no VM runs yet, so
# nothing here is slowed by sharing the machine; README "Time").
scripts/kernel.sh newest >build/kdir-newest 2>build/kernel-newest.log &
newest_pid=$!
newest_done() {
	local rc=0
	wait "$newest_pid" || rc=$?
	cat build/kernel-newest.log
	return "$rc"
}
stage "kernel 6.12 (build)" bash -c 'scripts/kernel.sh 6.12 >build/kdir-6.12'
stage "kernel 6.1 (prepare)" bash -c 'scripts/kernel.sh 6.1 >build/kdir-6.1'
stage "kernel newest (prepare)" newest_done
# JetPack 6 and 7 event delivery on the 6.12 build: about a minute each (scripts/nv-kernel.sh)
stage "kernels jp6, jp7 (patches/nv)" bash -c \
	'scripts/nv-kernel.sh jp6 >build/kdir-jp6 && scripts/nv-kernel.sh jp7 >build/kdir-jp7'
k612=$(tail -n1 build/kdir-6.12)
kjp6=$(tail -n1 build/kdir-jp6)
kjp7=$(tail -n1 build/kdir-jp7)
k61=$(tail -n1 build/kdir-6.1)
knew=$(tail -n1 build/kdir-newest)
echo "newest kernel tree: $(basename "$knew")"

# The reserved-memory checker must pass the test machine's tree and refuse an overlap.
dts_checks() {
	scripts/qemu-dtb.sh build/virt-framelink.dtb dts/qemu-virt.dtso || return 1
	if scripts/qemu-dtb.sh build/overlap.dtb dts/qemu-virt.dtso tests/dts/overlap.dtso; then
		echo "reserved-memory checker passed an overlapping tree"
		return 1
	fi
	echo "reserved-memory checker refused the overlapping tree, as it must"
}

stage "checkpatch --strict" counted scripts/static-checks.sh "$k612"
stage "reserved-memory checks" counted dts_checks
stage "documentation (docutils)" counted scripts/check-docs.sh
stage "splat detector (offline)" counted tests/runner-selftest/tap-summary.sh
stage "board device trees" counted scripts/check-board-dts.sh "$k612" "$knew"
stage "modules 6.12 W=1 + sparse" counted sparse_build
stage "modules 6.1 W=1" counted scripts/build-modules.sh 6.1 "$k61"
stage "modules newest W=1" counted scripts/build-modules.sh newest "$knew"
stage "modules jp6 W=1" counted scripts/build-modules.sh jp6 "$kjp6"
stage "modules jp7 W=1" counted scripts/build-modules.sh jp7 "$kjp7"
stage "api variants (epf, host)" counted scripts/check-api-variants.sh
stage "tegra194 eDMA series (compile)" counted scripts/check-tegra194-edma.sh "$k612" "$knew"
stage "board build targets" counted scripts/check-targets.sh "$k612"
stage "board bring-up kit (dry run)" counted tests/board-kit/run.sh
stage "dkms build (epf, host)" counted scripts/check-dkms.sh "$k612"
stage "userspace (arm64)" scripts/build-userspace.sh "$k612"
stage "v4l-utils, GStreamer (Debian arm64)" bash -c 'scripts/arm64-userland.sh >/dev/null'

# The kernel of the 6.1 VM run below (the endpoint core's notifier path, before 6.4)
stage "kernel 6.1 (Image)" bash -c 'scripts/kernel-image.sh 6.1 >/dev/null'

# vm_stage NAME SUMMARY VM-RUN-ARGS...: one VM run; its closing line is folded into the count
vm_status=0
vp=0 vf=0 vs=0
vm_stage() {
	local name=$1 summary=$2 s rc=0 p f k
	shift 2
	echo "==== stage: $name"
	s=$(date +%s)
	scripts/vm-run.sh "$@" | tee "$summary" || rc=1
	timings+=("$(printf '%-28s %5ss %s' "$name" $(($(date +%s) - s)) "$([ $rc -eq 0 ] && echo ok || echo FAILED)")")
	read -r p f k < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' \
		"$summary" | tail -n1)
	[ -n "${p:-}" ] || { p=0; f=1; k=0; }
	[ $rc -eq 0 ] || [ "$f" -gt 0 ] || f=1
	[ $rc -eq 0 ] || vm_status=1
	vp=$((vp + p)) vf=$((vf + f)) vs=$((vs + k))
}

mkdir -p build/vm
# The jetpack-only scripts run on jp7, where the jetpack profile meets NVIDIA's core
nv_only='29-*.sh,29n-*.sh,61j-*.sh'
vm_stage "VM tests" build/vm/summary.txt --skip "$nv_only,79-*.sh" --log build/vm/console.log
# Issue 12's reliability figures at the issue's short form (tests/figures/; make figures
# runs the same counts alone), in a VM of their own, after the suite's and not beside it: on
# two cores two guests starve each other (so does a build beside one, README "Time"). A make
# coverage run with the figures' VM beside it once failed 65-notify's lost-wake-up check;
# 65-notify passed beside two busy-looping processes and under gcov alone, so the second
# guest, not the drivers, is the suspect there, unproven.
# The demo's script runs first in that VM (issue 28 item 9: `make demo` once failed on a slower
# machine while check passed); it tears its pair down before the figures. Its table here has
# 16 frames a size instead of 64 (fl_demo_frames: the 8 MiB row alone took 50 s of 88).
vm_stage "VM demo, figures" build/vm/summary-figures.txt --tests tests/demo,tests/figures \
	--cmdline fl_demo_frames=16 --timeout 1800 --log build/vm/console-figures.log
# Before 6.4: the kernel's own pci-epf-test pair (the ops' 6.1 encodings), the e2e streams
# and the event cycles on the notifier path (72 asserts the no-replay message); the rest of
# the suite runs on 6.12 only.
vm_stage "VM tests on 6.1" build/vm/summary-6.1.txt --kernel 6.1 \
	--run '20-*.sh,60-*.sh,72-*.sh' \
	--log build/vm/console-6.1.log
# NVIDIA's event delivery (issue 26; Documentation/kernel-apis.rst, "The Orin's kernels"):
# link up from hard IRQ context, core_deinit at PERST# assert, no init replay. The kselftest
# and e2e streams on jetpack (61j), the hard-IRQ delivery, PERST# cycles, rebind, reload (79).
vm_stage "VM tests on jp6" build/vm/summary-jp6.txt --kernel jp6 \
	--run '61j-*.sh,79-*.sh' --log build/vm/console-jp6.log
vm_stage "VM tests on jp7" build/vm/summary-jp7.txt --kernel jp7 \
	--run "$nv_only,79-*.sh" --log build/vm/console-jp7.log
# the figures' summary, one line each
# (printed live and again in the TAP block: each line once)
tr -d '\r' <build/vm/console-figures.log 2>/dev/null | grep -a -E '^figures?: ' | awk '!seen[$0]++' |
	grep . || echo "figures: no summary (the figures VM did not finish)"
printf '%s\n' "==== stage times" "${timings[@]}" "total: $(($(date +%s) - t0))s"
# What failed, after the stage times: CI keeps only the last ~22 lines of the output (two
# runs that failed one test showed the count and not its name, the second with these lines
# printed before the stage times)
grep -a -h -E '^(FAIL|XPASS|SPLAT|ERROR)' build/vm/summary*.txt 2>/dev/null | head -n 8 |
	cut -c 1-160 | sed 's/^/failed: /' || true
# the coverage line just before the count, which stays the last line
coverage_line
echo "check: $((passed + vp)) passed, $vf failed, $vs skipped"
exit $vm_status
