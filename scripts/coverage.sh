#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make coverage` (issue 12): line and branch coverage of framelink-epf, framelink-host and the
# common code under the VM suite. The modules are built with gcov (FL_GCOV=1) into their own
# copy, build/6.12-gcov, so the ordinary build/6.12 stays uninstrumented; the VM runs the suite
# with them and prints the counts on its console (tests/vm/init, fl_gcov=1), which is the only
# way out of it. Writes build/coverage/: table.txt (printed), summary.txt, uncovered.txt, the
# lcov tracefile framelink.info, the HTML report html/index.html (Debian's lcov), and stamp,
# which scripts/check.sh reads to show the figure while the sources are still the measured ones.
# Not part of `make check`: the instrumented suite takes ~60% longer than check's VM stage
# (2257 s for the whole of make coverage on the lab machine, 2026-12-02).
#
# Fails when a driver's line coverage is below the floor, FL_COVERAGE_FLOOR percent (default
# 90, issue 28 item 5; of the lines compiled for the 6.12 test kernel).
#
# Usage: coverage.sh [vm-run.sh arguments, e.g. --run '60-*' for part of the suite]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
t0=$(date +%s)
gcov_tool=aarch64-linux-gnu-gcov-12
obj=$top/build/6.12-gcov
out=$top/build/coverage
lcov_rc=(--rc lcov_branch_coverage=1)

scripts/install-deps.sh coverage
kdir=$(scripts/kernel.sh 6.12 | tail -n1)
# Without CONFIG_GCOV_KERNEL, kbuild drops GCOV_PROFILE without a word: no counts, no report.
if ! grep -qx CONFIG_GCOV_KERNEL=y "$kdir/.config"; then
	echo "coverage: $kdir has no CONFIG_GCOV_KERNEL (scripts/kconfig/vm-6.12.config)" >&2
	exit 1
fi
# The key of the sources before they are built: an edit made during the run is not measured.
key=$(scripts/coverage-key.sh)
rm -rf "$out"
mkdir -p "$out"

echo "coverage: building the modules with gcov into ${obj#"$top"/}"
if ! scripts/build-modules.sh 6.12-gcov "$kdir" FL_GCOV=1 >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log"
	echo "coverage: module build failed (build/coverage/build.log)" >&2
	exit 1
fi
scripts/build-userspace.sh "$kdir" >/dev/null
# Counts of an earlier run would be added to this one's.
find "$obj" -name '*.gcda' -delete

rc=0
# measure NAME OBJ VM-RUN-ARGS...: one VM run with OBJ's gcov modules; its counts go back
# beside OBJ's notes and lcov writes $out/NAME.info, its file names those of the source tree.
measure() {
	local name=$1 o=$2 log=$out/console-$1.log g=$out/gcda-$1 vrc=0
	shift 2
	echo "coverage[$name]: VM run ($*)"
	# Instrumented modules run slower than the plain ones: more time than vm-run's default,
	# unless FRAMELINK_VM_TIMEOUT or a --timeout argument says otherwise.
	scripts/vm-run.sh --modules "$o" --gcov --log "$log" \
		--timeout "${FRAMELINK_VM_TIMEOUT:-4800}" "$@" >"$out/vm-$name.out" 2>&1 || vrc=$?
	tail -n 3 "$out/vm-$name.out"
	[ $vrc -eq 0 ] || rc=1
	# The counts: a gzip'd tar as hex lines between init's markers. Only whole hex lines
	# count, so a stray console line cannot corrupt the archive silently (gzip checks the
	# rest).
	tr -d '\r' <"$log" |
		sed -n '/^=== FRAMELINK GCOV BEGIN ===$/,/^=== FRAMELINK GCOV END ===$/p' |
		grep -E '^[0-9a-f]+ *$' | tr -d ' \n' |
		python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))' \
			>"$g.tar.gz"
	if [ ! -s "$g.tar.gz" ]; then
		echo "coverage[$name]: no gcov counts in the console log (the VM did not reach its end?)" >&2
		exit 1
	fi
	mkdir -p "$g"
	tar -xzf "$g.tar.gz" -C "$g"
	# debugfs names the counts by the objects' absolute build paths: they go back beside the
	# notes (.gcno) the compiler wrote there, where gcov looks for both.
	if [ ! -d "$g$o" ]; then
		echo "coverage[$name]: the counts are not for $o:" >&2
		find "$g" -name '*.gcda' | head -n 5 >&2
		exit 1
	fi
	cp -r "$g$o/." "$o/"
	echo "coverage[$name]: $(find "$g" -name '*.gcda' | wc -l) counts files from the VM"
	# A zero baseline from every compiled object first: a file the suite never loaded must show
	# as 0%, not be missing from the totals. The KUnit suites of the slot memory and the
	# controller events include epf/slotmem.c and epf/events.c whole: their counts are those
	# files' too.
	local dirs=("$o/drivers/framelink/epf" "$o/drivers/framelink/host"
		"$o/drivers/framelink/common" "$o/tests/modules/fl-slotmem-kunit"
		"$o/tests/modules/fl-events-kunit")
	local i=$out/$name
	lcov_step "${lcov_cmd[@]}" --capture --initial "${dirs[@]/#/--directory=}" -o "$i-base.info"
	lcov_step "${lcov_cmd[@]}" --capture "${dirs[@]/#/--directory=}" -o "$i-run.info"
	lcov_step "${lcov_cmd[@]}" -a "$i-base.info" -a "$i-run.info" -o "$i-all.info"
	# framelink's own files only, not the kernel headers its code inlines, named as in the
	# source tree (every build copy holds the same sources)
	lcov_step "${lcov_cmd[@]}" --extract "$i-all.info" "$o/drivers/framelink/*" "$o/include/*" \
		-o "$i-own.info"
	sed "s|^SF:$o/|SF:$top/|" "$i-own.info" >"$i.info"
}

# lcov's own chatter (Debian's 1.16 also warns about its own redefined subroutines) goes to
# lcov.log, shown when a step fails.
lcov_step() {
	if ! "$@" >>"$out/lcov.log" 2>&1; then
		tail -n 20 "$out/lcov.log" >&2
		echo "coverage: failed: $*" >&2
		exit 1
	fi
}
lcov_cmd=(lcov --quiet --gcov-tool "$gcov_tool" "${lcov_rc[@]}")

# The kernels where framelink compiles other lines (issue 28 item 5), each with the part of the
# suite make check runs there: 6.1 (the endpoint core's notifier, before 6.4; a gcov copy of
# check's 6.1 tree, scripts/kernel-image.sh), jp6 and jp7 (NVIDIA's endpoint-core events).
# FL_COVERAGE_VARIANTS chooses (default all three; empty: 6.12 alone). Their modules are built
# first: a build failure shows before the long run, and no build runs beside a VM.
variants=${FL_COVERAGE_VARIANTS-6.1 jp6 jp7}
declare -A vkernel vrun
for v in $variants; do
	case "$v" in
	6.1) vk=$(scripts/kernel-image.sh 6.1-gcov | tail -n1); vkernel[$v]=6.1-gcov
		vrun[$v]='20-*.sh,60-*.sh,72-*.sh' ;;
	jp6) vk=$(scripts/nv-kernel.sh jp6 | tail -n1); vkernel[$v]=jp6
		vrun[$v]='61j-*.sh,79-*.sh' ;;
	jp7) vk=$(scripts/nv-kernel.sh jp7 | tail -n1); vkernel[$v]=jp7
		vrun[$v]='29-*.sh,29n-*.sh,61j-*.sh,79-*.sh' ;;
	*) echo "coverage: FL_COVERAGE_VARIANTS: 6.1, jp6 or jp7, not $v" >&2; exit 2 ;;
	esac
	echo "coverage[$v]: building the modules with gcov into build/$v-gcov"
	if ! scripts/build-modules.sh "$v-gcov" "$vk" FL_GCOV=1 >"$out/build-$v.log" 2>&1; then
		tail -n 30 "$out/build-$v.log"
		echo "coverage[$v]: module build failed (build/coverage/build-$v.log)" >&2
		exit 1
	fi
	find "$top/build/$v-gcov" -name '*.gcda' -delete
done

measure 6.12 "$obj" "$@"
infos=("6.12=$out/6.12.info")
for v in $variants; do
	measure "$v" "$top/build/$v-gcov" --kernel "${vkernel[$v]}" --run "${vrun[$v]}"
	infos+=("$v=$out/$v.info")
done

# One report over every kernel: a line counts as compiled when any kernel compiles it, as
# reached when any run reached it.
merge=()
for i in "${infos[@]}"; do merge+=(-a "${i#*=}"); done
lcov_step "${lcov_cmd[@]}" "${merge[@]}" -o "$out/framelink.info"
lcov_step genhtml --quiet "${lcov_rc[@]}" --prefix "$top" --title "framelink (make coverage)" \
	-o "$out/html" "$out/framelink.info"
# What check.sh needs to trust the figure: which sources, which part of the suite, how it ended.
scope=full
for a in "$@"; do
	case "$a" in --run | --tests) scope=partial ;; esac
done
[ -n "$variants" ] || scope="$scope, 6.12 alone"
# the floor (issue 28 item 5): 90% of the compiled lines per driver, or make coverage fails; a
# whole run also holds every function with unreached lines to the list of reasons
floor=ok
listed=ok
list=()
[ "$scope" = full ] && list=(--unreached Documentation/coverage-unreached.rst)
rrc=0
scripts/coverage-report.py "${list[@]}" "$top" "$out" "${FL_COVERAGE_FLOOR:-90}" "${infos[@]}" ||
	rrc=$?
case $rrc in
0) ;;
1) floor=below ;;
3) listed=no ;;
*) echo "coverage: the report failed (exit $rrc): no figure to hold to the floor" >&2
	floor=below ;;
esac

{
	echo "key $key"
	echo "scope $scope${*:+ ($*)}"
	echo "vm $([ $rc -eq 0 ] && echo passed || echo failed)"
	echo "floor ${FL_COVERAGE_FLOOR:-90} $floor"
	echo "listed $([ "$scope" = full ] && echo $listed || echo "not checked")"
	echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
} >"$out/stamp"
echo "coverage: HTML report build/coverage/html/index.html;" \
	"unreached code in build/coverage/uncovered.txt"
echo "coverage: $scope run, VM $([ $rc -eq 0 ] && echo passed || echo FAILED)," \
	"floor $([ $floor = ok ] && echo met || echo MISSED)$([ $listed = ok ] ||
		echo ", unreached lines NOT all listed")," "$(($(date +%s) - t0)) s"
[ $floor = ok ] && [ $listed = ok ] || rc=1
exit $rc
