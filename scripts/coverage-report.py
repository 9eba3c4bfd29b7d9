#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Line and branch coverage of framelink's modules from an lcov tracefile (scripts/coverage.sh).

Usage: coverage-report.py TRACEFILE PREFIX OUTDIR [FLOOR]

PREFIX is the build copy's path the tracefile's names start with (build/6.12-gcov as an
absolute path); the report names files as in the source tree. Prints the table (every file,
its group's total after it) and writes into OUTDIR:
  table.txt      the same table
  summary.txt    one line per group, "GROUP LINES_PCT LH LF BRANCHES_PCT BH BF"
  uncovered.txt  per file: functions never entered, then runs of unexecuted lines inside the
                 functions that were, largest first (what a test could still reach)
Groups: framelink-epf (drivers/framelink/epf), framelink-host (drivers/framelink/host) and the
common code (drivers/framelink/common, include/: the protocol helpers both drivers inline).
Exit status 1 when a group's line coverage is below FLOOR percent (default 90, issue 28 item 5;
the denominator is the lines compiled for this kernel: code for other kernels is not in it).
"""
import os
import sys

GROUPS = [
    ("framelink-epf", ("drivers/framelink/epf/",)),
    ("framelink-host", ("drivers/framelink/host/",)),
    ("common", ("drivers/framelink/common/", "include/")),
]


class Record:
    def __init__(self, name):
        self.name = name
        self.lines = {}  # line -> count
        self.branches = {}  # (line, block, branch) -> taken count (0 when never evaluated)
        self.functions = {}  # name -> first line
        self.calls = {}  # name -> count


def parse(path, prefix):
    records = {}
    cur = None
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            key, _, val = line.partition(":")
            if key == "SF":
                name = os.path.normpath(val)
                if name.startswith(prefix + "/"):
                    name = name[len(prefix) + 1:]
                # several objects can inline the same header: one record per file
                cur = records.setdefault(name, Record(name))
            elif cur is None:
                continue
            elif key == "DA":
                n, count = val.split(",")[:2]
                cur.lines[int(n)] = cur.lines.get(int(n), 0) + int(count)
            elif key == "BRDA":
                n, block, branch, taken = val.split(",")
                k = (int(n), block, branch)
                cur.branches[k] = cur.branches.get(k, 0) + (0 if taken == "-" else int(taken))
            elif key == "FN":
                n, fname = val.split(",", 1)
                cur.functions[fname] = int(n)
            elif key == "FNDA":
                count, fname = val.split(",", 1)
                cur.calls[fname] = cur.calls.get(fname, 0) + int(count)
            elif line == "end_of_record":
                cur = None
    return records


def counts(recs):
    lh = sum(1 for r in recs for c in r.lines.values() if c)
    lf = sum(len(r.lines) for r in recs)
    bh = sum(1 for r in recs for c in r.branches.values() if c)
    bf = sum(len(r.branches) for r in recs)
    return lh, lf, bh, bf


def pct(hit, found):
    return 100.0 * hit / found if found else 0.0


def row(name, lh, lf, bh, bf):
    lines = f"{pct(lh, lf):5.1f}% {lh:>5}/{lf:<5}"
    branches = f"{pct(bh, bf):5.1f}% {bh:>5}/{bf:<5}" if bf else "    -"
    return f"{name:<44} {lines}  {branches}".rstrip()


def uncovered(rec):
    """Functions never entered, then runs of unexecuted lines in the others, largest first."""
    out = []
    starts = sorted((line, fname) for fname, line in rec.functions.items())

    def owner(n):
        best = None
        for line, fname in starts:
            if line <= n:
                best = fname
        return best

    def body(fname):
        # a function's lines: from its first line to the next function's
        first = rec.functions[fname]
        nxt = min((line for line, _ in starts if line > first), default=None)
        return [ln for ln in rec.lines if ln >= first and (nxt is None or ln < nxt)]

    # A function whose out-of-line copy is never called may still run inlined into its
    # callers (its lines then have counts): only one with no executed line was never entered.
    dead = {f for f in rec.functions
            if not rec.calls.get(f) and not any(rec.lines[ln] for ln in body(f))}
    for fname in sorted(dead, key=lambda f: rec.functions[f]):
        n = len(body(fname))
        out.append((n, f"  never entered: {fname}() at line {rec.functions[fname]} ({n} lines)"))
    runs = []
    run = []
    for n in sorted(rec.lines):
        if rec.lines[n] == 0 and owner(n) not in dead:
            # a run ends at an executed line or where the next function begins
            if run and owner(run[0]) != owner(n):
                runs.append(run)
                run = []
            run.append(n)
        elif rec.lines[n]:
            if run:
                runs.append(run)
            run = []
    if run:
        runs.append(run)
    for r in runs:
        where = f"lines {r[0]}-{r[-1]}" if len(r) > 1 else f"line {r[0]}"
        out.append((len(r), f"  not run: {where} in {owner(r[0]) or '?'}() ({len(r)} lines)"))
    out.sort(key=lambda x: -x[0])
    return [text for _, text in out]


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    info, prefix, outdir = sys.argv[1], os.path.normpath(sys.argv[2]), sys.argv[3]
    floor = float(sys.argv[4]) if len(sys.argv) == 5 else 90.0
    below = []
    records = parse(info, prefix)
    table = [f"{'file':<44} {'lines':<18}  branches"]
    summary = []
    unc = []
    for group, dirs in GROUPS:
        recs = [records[n] for n in sorted(records) if n.startswith(dirs)]
        for r in recs:
            table.append(row(r.name, *counts([r])))
            todo = uncovered(r)
            if todo:
                unc.append(f"{r.name} ({pct(*counts([r])[:2]):.1f}% of lines)")
                unc.extend(todo)
        total = counts(recs)
        table.append(row(f"total {group} ({len(recs)} files)", *total))
        table.append("")
        lh, lf, bh, bf = total
        summary.append(f"{group} {pct(lh, lf):.1f} {lh} {lf} {pct(bh, bf):.1f} {bh} {bf}")
        # a group with no line compiled has no figure to hold to the floor
        if lf and pct(lh, lf) < floor:
            below.append(f"{group} {pct(lh, lf):.1f}%")
    table.append(f"floor: {floor:g}% of lines per group: " +
                 (f"BELOW: {', '.join(below)}" if below else "met by every group"))
    text = "\n".join(table).rstrip() + "\n"
    print(text, end="")
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    with open(os.path.join(outdir, "uncovered.txt"), "w") as f:
        f.write("\n".join(unc) + "\n")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
