#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a framelink VM console log.

Counts the TAP results between the init's TAP markers, scans the whole log for kernel splats
and prints one closing line 'N passed, N failed, N skipped'. Exit 0 only when the TAP block is
complete, no test failed, at least one test ran and the log is free of splats.

TAP TODO: 'not ok - NAME # TODO issue N ...' is an expected failure (a known driver issue the
lab now shows): counted as xfail on its own line, not as failed. 'ok - NAME # TODO ...' is an
unexpected pass: the issue is fixed or the test is wrong, and it fails the run.
"""
import re
import sys

SPLATS = [
    r"\bBUG:",
    r"\bWARNING:",
    r"\bOops\b",
    r"Call trace:",
    r"Kernel panic",
    r"\bKASAN\b",
    r"UBSAN:",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"suspicious RCU usage",
    r"INFO: task .* blocked for more than",
    r"new suspected memory leaks",
    r"unreferenced object 0x",
    r"sleeping function called from invalid context",
    # detectors that report without a WARN (issue 27 item 4): kmemleak switching itself off
    # (a later scan would find nothing), DMA-API debug's own lines (its boot banner, its pool
    # growing and the driver filter tests/vm/lib.sh sets around a declared leak excepted),
    # messages the console never printed, RCU stalls
    r"kmemleak: Kernel memory leak detector disabled",
    r"DMA-API: (?!preallocated \d+ debug entries|debugging enabled by kernel config"
    r"|enable driver filter for driver|switching off dma-debug driver filter"
    r"|dma_debug_entry pool grown to)",
    r"printk messages dropped",
    r"rcu: INFO: .*detected (expedited )?stalls",
    r"self-detected stall on CPU",
]
SPLAT_RE = re.compile("|".join(SPLATS))
# A defect of vivid, the kernel's test camera, not of framelink or the lab: its capture
# thread checks that the next frame is due in the future and then computes the wait from
# jiffies again (drivers/media/test-drivers/vivid/vivid-kthread-cap.c, vivid_thread_vid_cap(),
# the same in 6.12 and 7.3); preempted in between (a CPU hog beside the VM, make check on a
# slowed machine), the wait is negative and schedule_timeout() dumps the stack. That trace,
# and only with vivid's thread in it, is a note, not a splat.
VIVID_BEFORE_RE = re.compile(r"schedule_timeout: wrong timeout value")
VIVID_IN_RE = re.compile(r"\bvivid_thread_vid_(cap|out)\+")


FRAME_RE = re.compile(r"^\s*\S+\+0x[0-9a-f]+/0x[0-9a-f]+")


def vivid_timeout(lines, i):
    """Is lines[i], a 'Call trace:' line, vivid's negative schedule_timeout() wait? Its
    warning within the 6 lines before, vivid's thread among the frames of this trace."""
    if not lines[i].endswith("Call trace:"):
        return False
    if not any(VIVID_BEFORE_RE.search(l) for l in lines[max(0, i - 6):i]):
        return False
    for line in lines[i + 1:]:
        line = TIMESTAMP_RE.sub("", line)
        if not FRAME_RE.match(line):
            return False
        if VIVID_IN_RE.search(line):
            return True
    return False
RESULT_RE = re.compile(r"^(not )?ok\b[ 0-9]*(?:- )?(.*)$")
TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")
TODO_RE = re.compile(r"#\s*TODO\b", re.IGNORECASE)
TIME_RE = re.compile(r"^# time: (\S+) (\d+) s$")
SLOW_RE = re.compile(r"^# slow: (\d+) s since the previous result$")


def main():
    if len(sys.argv) != 2:
        print("usage: tap-summary.py CONSOLE_LOG", file=sys.stderr)
        return 2
    with open(sys.argv[1], errors="replace") as f:
        lines = [l.rstrip("\r\n") for l in f]

    splats, vivid = [], []
    for n, line in enumerate(lines, 1):
        if not SPLAT_RE.search(TIMESTAMP_RE.sub("", line)):
            continue
        (vivid if vivid_timeout(lines, n - 1) else splats).append((n, line))

    try:
        begin = lines.index("=== FRAMELINK TAP BEGIN ===")
        end = lines.index("=== FRAMELINK TAP END ===", begin)
        block = lines[begin + 1:end]
        complete = True
    except ValueError:
        # No complete block: the VM hung or crashed. Count what the live output shows.
        block = [l for l in lines if RESULT_RE.match(l)]
        complete = False

    passed = failed = skipped = xfail = 0
    for line in block:
        m = RESULT_RE.match(line)
        if not m:
            continue
        todo = TODO_RE.search(line)
        if todo and m.group(1):
            xfail += 1
            print("XFAIL: " + line)
        elif todo:
            failed += 1
            print("XPASS (unexpected pass of a TODO, fails the run): " + line)
        elif m.group(1):
            failed += 1
            print("FAIL: " + line)
        elif re.search(r"#\s*SKIP", line, re.IGNORECASE):
            skipped += 1
            print("SKIP: " + line)
        else:
            passed += 1

    # the init's per-script wall times, slowest first (the make check budget)
    times = sorted(((int(m.group(2)), m.group(1)) for m in map(TIME_RE.match, block) if m),
                   reverse=True)
    if times:
        print("script times: " + ", ".join(f"{t.rsplit('/', 1)[-1]} {s} s" for s, t in times)
              + f" (total {sum(s for s, _ in times)} s)")

    # results that came 5 s or more after the one before (tests/vm/lib.sh t_mark: the check
    # and the work since the previous result), the ten slowest
    slow, pending = [], None
    for line in block:
        m = SLOW_RE.match(line)
        if m:
            pending = int(m.group(1))
        elif pending is not None and RESULT_RE.match(line):
            slow.append((pending, RESULT_RE.match(line).group(2)))
            pending = None
    slow.sort(reverse=True)
    if slow:
        print(f"slow results ({len(slow)} of 5 s and more after the one before, "
              f"{sum(t for t, _ in slow)} s): " +
              "; ".join(f"{t} s {name[:60]}" for t, name in slow[:10]))

    for n, _ in vivid[:8]:
        print(f"NOTE (log line {n}): vivid's capture thread waited a negative time "
              "(a known vivid defect under CPU starvation, not a splat)")
    for n, line in splats[:40]:
        print(f"SPLAT (log line {n}): {line}")
    if len(splats) > 40:
        print(f"... {len(splats) - 40} more splat lines")
    if not complete:
        print("ERROR: the VM did not finish the test run (timeout, panic or hang)")
    if passed + failed == 0:
        print("ERROR: no test ran")

    if xfail:
        print(f"{xfail} expected failures (TAP TODO, not counted as failed)")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    ok = complete and failed == 0 and not splats and passed + failed > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
