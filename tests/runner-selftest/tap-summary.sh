#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/tap-summary.py's one exception, offline (part of make check, no VM): vivid's negative
# schedule_timeout() wait (a defect of the kernel's test camera under CPU starvation, seen in
# make check beside a CPU hog) is a note, not a splat; the same warning from any other thread,
# and a trace of vivid's thread without that warning, still fail the run.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# log NAME WARNING FRAME: a passing TAP block and one stack dump after WARNING
log() {
	cat >"$d/$1" <<LOG
=== FRAMELINK TAP BEGIN ===
ok - a test
[   78.903875] $2
[   78.905739] CPU: 0 UID: 0 PID: 190 Comm: vivid-000-vid-c Tainted: G           O       6.12.118 #1
[   78.907270] Call trace:
[   78.907355]  dump_backtrace+0xb4/0x114
[   78.908614]  schedule_timeout+0x19c/0x230
[   78.908643]  $3+0x788/0x9d4
[   78.908668]  kthread+0x2d4/0x360
=== FRAMELINK TAP END ===
LOG
}
log vivid.log "schedule_timeout: wrong timeout value fffffffffffffffe" vivid_thread_vid_cap
log other.log "schedule_timeout: wrong timeout value fffffffffffffffe" fl_ep_engine
log nowarn.log "WARNING: CPU: 0 PID: 190 at kernel/time/timer.c:1" vivid_thread_vid_cap

fail=0
# case FILE RC PATTERN: tap-summary.py exits RC and prints PATTERN
case_() {
	local out rc
	out=$(python3 "$top/scripts/tap-summary.py" "$d/$1")
	rc=$?
	if [ $rc -eq "$2" ] && grep -q "$3" <<<"$out"; then
		echo "ok - tap-summary: $1: exit $rc, '$3'"
	else
		echo "not ok - tap-summary: $1: exit $rc (want $2), '$3' not found:"
		sed 's/^/# /' <<<"$out"
		fail=1
	fi
}
case_ vivid.log 0 "NOTE (log line 5): vivid's capture thread"
case_ other.log 1 "SPLAT (log line 5)"
case_ nowarn.log 1 "SPLAT (log line 3)"
exit $fail
