#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: the table, the targets of issue 10 and the plots, from DIR/bench.csv.

Usage: bench-report.py DIR    (DIR/bench.csv and DIR/meta.csv from scripts/bench.sh)
Writes DIR/throughput.png, DIR/ceiling.png and DIR/latency.png when matplotlib is there.
"""
import csv
import os
import sys

FIELDS = ("mode dir size depth frames ns gbps fps p50_us p99_us max_us irq_per_frame "
          "raise_per_frame dma cpu bad ceiling_gbps read_restarts write_restarts").split()
MIB = 1 << 20


def human(n):
    n = int(n)
    return f"{n >> 20}M" if n >= MIB and n % MIB == 0 else f"{n >> 10}K" if n % 1024 == 0 else str(n)


def load(path):
    rows = []
    with open(path) as f:
        for rec in csv.reader(f):
            if not rec or rec[0] != "csv" or len(rec) != len(FIELDS) + 1:
                continue
            r = dict(zip(FIELDS, rec[1:]))
            for k in FIELDS[2:]:
                r[k] = float(r[k])
            r["pct"] = 100.0 * r["gbps"] / r["ceiling_gbps"] if r["ceiling_gbps"] else 0.0
            r["label"] = ("pci-epf-test " if r["mode"] == "pcitest" else
                          "both: " if r["mode"] == "both" else "") + r["dir"] + \
                ("" if r["mode"] == "pcitest" else f" q{int(r['depth'])}")
            rows.append(r)
    return rows


def table(rows):
    print("GB/s = 10^9 bytes/s of payload; % = of the link model's ceiling for that direction;")
    print("latency = SUBMIT on one end to delivery on the other (both at once: per direction)")
    hdr = (f"{'size':>5} {'run':<18} {'GB/s':>7} {'%ceil':>6} {'frames/s':>9} {'irq/fr':>6} "
           f"{'p50_us':>9} {'p99_us':>9} {'max_us':>9} {'p99/p50':>7} {'dma':>5} {'cpu':>5}")
    print(hdr)
    for r in sorted(rows, key=lambda r: (r["size"], r["mode"] == "pcitest", r["label"])):
        ratio = r["p99_us"] / r["p50_us"] if r["p50_us"] else 0
        print(f"{human(r['size']):>5} {r['label']:<18} {r['gbps']:7.3f} {r['pct']:6.1f} "
              f"{r['fps']:9.1f} {r['irq_per_frame']:6.3f} {r['p50_us']:9.1f} {r['p99_us']:9.1f} "
              f"{r['max_us']:9.1f} {ratio:7.2f} {int(r['dma']):5d} {int(r['cpu']):5d}")


def targets(rows):
    """Issue 10's targets, each with the worst row it applies to."""
    fl = [r for r in rows if r["mode"] != "pcitest"]
    one = [r for r in fl if r["mode"] != "both" and r["depth"] > 1]
    checks = [
        ("one direction, >= 1 MiB: >= 95% of ceiling",
         [r for r in one if r["size"] >= MIB], lambda r: r["pct"], 95.0, True),
        ("one direction, 64 KiB: >= 80%", [r for r in one if r["size"] == 64 * 1024],
         lambda r: r["pct"], 80.0, True),
        ("both at once, >= 1 MiB: >= 90% each",
         [r for r in fl if r["mode"] == "both" and r["size"] >= MIB], lambda r: r["pct"], 90.0, True),
        ("interrupts per frame at saturation (>= 1 MiB, q > 1): <= 0.25",
         [r for r in one if r["size"] >= MIB], lambda r: r["irq_per_frame"], 0.25, False),
        ("latency >= 1 MiB, steady stream: p99 <= 1.2 x p50",
         [r for r in one if r["size"] >= MIB and r["p50_us"]],
         lambda r: r["p99_us"] / r["p50_us"], 1.2, False),
    ]
    print("\ntargets (issue 10), worst case of the rows each applies to:")
    for name, sel, val, lim, higher in checks:
        if not sel:
            print(f"  {'n/a':4} {name}: no row")
            continue
        worst = min(sel, key=val) if higher else max(sel, key=val)
        ok = val(worst) >= lim if higher else val(worst) <= lim
        print(f"  {'met' if ok else 'MISS':4} {name}: {val(worst):.2f} "
              f"({human(worst['size'])} {worst['label']})")


def plots(rows, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plots: matplotlib missing (scripts/install-deps.sh bench installs it)")
        return
    series = sorted({r["label"] for r in rows})
    for name, key, ylabel in (("throughput", "gbps", "GB/s (10^9 B/s)"),
                              ("ceiling", "pct", "% of the modelled ceiling")):
        fig, ax = plt.subplots(figsize=(8, 5))
        for s in series:
            pts = sorted((r["size"], r[key]) for r in rows if r["label"] == s)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=s)
        if key == "gbps":
            ceil = sorted({(r["size"], r["ceiling_gbps"], r["dir"]) for r in rows})
            for d in ("h2e", "e2h"):
                pts = [(c[0], c[1]) for c in ceil if c[2] == d]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "k--", lw=0.8,
                            label=f"ceiling {d}")
        else:
            ax.axhline(95, color="k", ls="--", lw=0.8, label="target >= 1 MiB")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"{name}.png"), dpi=110)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 5))
    for s in [s for s in series if " q" in s]:
        sel = sorted((r for r in rows if r["label"] == s), key=lambda r: r["size"])
        for key, ls in (("p50_us", "-"), ("p99_us", "--"), ("max_us", ":")):
            ax.plot([r["size"] for r in sel], [r[key] for r in sel], ls, marker=".",
                    label=f"{s} {key[:-3]}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("latency (us), SUBMIT to delivery")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency.png"), dpi=110)
    plt.close(fig)
    print(f"plots: {out}/throughput.png {out}/ceiling.png {out}/latency.png")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
    rows = load(os.path.join(out, "bench.csv"))
    if not rows:
        print(f"bench-report: no rows in {out}/bench.csv")
        return 1
    meta = os.path.join(out, "meta.csv")
    if os.path.exists(meta):
        for rec in csv.reader(open(meta)):
            if rec and rec[0] == "csv-rate":
                print(f"copy speed with the model off: h2e {rec[1]} GB/s, e2h {rec[2]} GB/s; "
                      f"model rate {rec[3]} Mbit/s (1/4 of the slower)")
    table(rows)
    targets(rows)
    plots(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
