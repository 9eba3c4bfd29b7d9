#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Line and branch coverage of framelink's modules from lcov tracefiles (scripts/coverage.sh).

Usage: coverage-report.py [--unreached LIST] SRCTOP OUTDIR FLOOR KERNEL=TRACEFILE...

One tracefile per test kernel, the first the main one (6.12), their file names under SRCTOP
(the source tree); the report names files relative to it. The kernels are merged: a line
counts as compiled when any kernel compiles it and as reached when any run reached it;
branches are the main kernel's, plus those of lines only another kernel compiles (gcc numbers
a line's blocks per compilation, so they are not added across kernels). Prints the table
(every file, its group's total after it, then per group and other kernel where the code
differs: the share of the lines that kernel compiles reached by any run, and how many of its
lines the main kernel does not compile any run reached) and writes into OUTDIR:
  table.txt      the same table
  summary.txt    one line per group, "GROUP LINES_PCT LH LF BRANCHES_PCT BH BF"
  uncovered.txt  per file: functions never entered, then runs of unexecuted lines inside the
                 functions that were, largest first (what a test could still reach)
Groups: framelink-epf (drivers/framelink/epf), framelink-host (drivers/framelink/host) and the
common code (drivers/framelink/common, include/: the protocol helpers both drivers inline).
Exit status 1 when a group's line coverage is below FLOOR percent (issue 28 item 5), over the
lines any kernel compiles, or over the lines one kernel compiles, for each kernel where the
group's code differs. Exit status 3 (floor met) with --unreached, when a function with
unreached lines is not in LIST (Documentation/coverage-unreached.rst) or LIST names one that
has none left.
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
        self.only = {}  # line -> the other kernels that compile it, when the main one does not
        self.compiled = {}  # kernel -> the lines it compiles


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


def merge(main, other, kernel):
    """Adds another kernel's records to the main kernel's (see the module's docstring)."""
    for name, rec in other.items():
        into = main.get(name)
        if into is None:
            into = main[name] = Record(name)
        main_lines = {n for n in into.lines if n not in into.only}
        into.compiled[kernel] = set(rec.lines)
        for n, c in rec.lines.items():
            if n not in main_lines:
                into.only.setdefault(n, []).append(kernel)
            into.lines[n] = into.lines.get(n, 0) + c
        for k, c in rec.branches.items():
            if k[0] not in main_lines:
                into.branches[k] = into.branches.get(k, 0) + c
        for f, n in rec.functions.items():
            into.functions.setdefault(f, n)
        for f, c in rec.calls.items():
            into.calls[f] = into.calls.get(f, 0) + c


def only_counts(recs, kernel):
    """One kernel's lines the main kernel does not compile, and of them reached by any run."""
    lines = [r.lines[n] for r in recs for n, ks in r.only.items() if kernel in ks]
    return sum(1 for c in lines if c), len(lines)


def kernel_counts(recs, kernel):
    """The lines one kernel compiles, and of them reached by any run (the same source)."""
    lines = [r.lines[n] for r in recs for n in r.compiled.get(kernel, ())]
    return sum(1 for c in lines if c), len(lines)


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
        out.append((n, fname,
                    f"  never entered: {fname}() at line {rec.functions[fname]} ({n} lines)"))
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
        kernels = sorted({k for n in r for k in rec.only.get(n, [])})
        only = f" [compiled only for {', '.join(kernels)}]" if kernels else ""
        out.append((len(r), owner(r[0]) or "?",
                    f"  not run: {where} in {owner(r[0]) or '?'}() ({len(r)} lines){only}"))
    out.sort(key=lambda x: -x[0])
    return out


def read_unreached(path):
    """The declared list: {(file, function): reason} from Documentation/coverage-unreached.rst.

    A section title is a file (a line followed by a line of '-'), an entry a line
    "``function()``" followed by its reason, indented.
    """
    listed = {}
    with open(path) as f:
        lines = f.read().split("\n")
    cur = None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line and nxt and set(nxt) == {"-"} and len(nxt) >= len(line):
            cur = line.strip()
        elif cur and line.startswith("``") and line.rstrip().endswith("()``"):
            fname = line.strip()[2:-4]
            reason = nxt.strip()
            listed[(cur, fname)] = reason
    return listed


def check_unreached(records, path):
    """Every function with unreached lines listed with a reason, no listed one reached now."""
    listed = read_unreached(path)
    problems = []
    seen = set()
    for name in sorted(records):
        for _, fname, text in uncovered(records[name]):
            seen.add((name, fname))
            if (name, fname) not in listed:
                problems.append(f"not listed: {name} {fname}():{text}")
            elif not listed[(name, fname)]:
                problems.append(f"listed without a reason: {name} {fname}()")
    for name, fname in sorted(set(listed) - seen):
        problems.append(f"listed but reached now (take it out): {name} {fname}()")
    return len(seen), problems


def main():
    args = sys.argv[1:]
    unreached = None
    if args[:1] == ["--unreached"] and len(args) > 1:
        unreached, args = args[1], args[2:]
    if len(args) < 4 or any("=" not in a for a in args[3:]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    prefix, outdir, floor = os.path.normpath(args[0]), args[1], float(args[2])
    kernels = [a.split("=", 1) for a in args[3:]]
    records = parse(kernels[0][1], prefix)
    for r in records.values():
        r.compiled[kernels[0][0]] = set(r.lines)
    for kernel, info in kernels[1:]:
        merge(records, parse(info, prefix), kernel)
    below = []
    table = [f"{'file':<44} {'lines':<18}  branches"]
    summary = []
    unc = []
    others = []
    for group, dirs in GROUPS:
        recs = [records[n] for n in sorted(records) if n.startswith(dirs)]
        for r in recs:
            table.append(row(r.name, *counts([r])))
            todo = uncovered(r)
            if todo:
                unc.append(f"{r.name} ({pct(*counts([r])[:2]):.1f}% of lines)")
                unc.extend(text for _, _, text in todo)
        total = counts(recs)
        table.append(row(f"total {group} ({len(recs)} files)", *total))
        table.append("")
        lh, lf, bh, bf = total
        summary.append(f"{group} {pct(lh, lf):.1f} {lh} {lf} {pct(bh, bf):.1f} {bh} {bf}")
        # a group with no line compiled has no figure to hold to the floor
        if lf and pct(lh, lf) < floor:
            below.append(f"{group} {pct(lh, lf):.1f}%")
        for kernel, _ in kernels[1:]:
            kh, kf = kernel_counts(recs, kernel)
            oh, of = only_counts(recs, kernel)
            if not of:
                continue
            others.append(f"{group} on {kernel}: {pct(kh, kf):.1f}% of its {kf} lines; "
                          f"{oh} of its {of} lines {kernels[0][0]} does not compile reached")
            if kf and pct(kh, kf) < floor:
                below.append(f"{group} on {kernel} {pct(kh, kf):.1f}%")
    table.extend(others or [f"no line compiled only for {', '.join(k for k, _ in kernels[1:])}"
                            if len(kernels) > 1 else f"one kernel: {kernels[0][0]}"])
    problems = []
    if unreached:
        n, problems = check_unreached(records, unreached)
        table.extend(f"unreached: {p}" for p in problems)
        table.append(f"unreached: {n} functions with lines not reached, " +
                     (f"{len(problems)} problems with {os.path.basename(unreached)}" if problems
                      else f"each listed with its reason in {os.path.basename(unreached)}"))
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
    return 1 if below else 3 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
