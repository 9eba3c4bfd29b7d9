#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the reserved-memory regions of a device tree before it boots.

A reserved-memory overlap only warns at boot and then corrupts silently, so every overlay
that carves frame memory is checked here first:
  - each /reserved-memory child with a reg lies inside a /memory node,
  - no two such regions overlap,
  - a shared-dma-pool region is page aligned and no-map or reusable as its user expects,
  - every memory-region phandle points at an existing reserved-memory child.

Usage: check-reserved-memory.py DTB        (needs fdtget from device-tree-compiler)
Exit 0 when clean; 1 with one line per problem.
"""
import subprocess
import sys

PAGE = 4096


def fdtget(dtb, *args):
    r = subprocess.run(["fdtget", dtb, *args], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


def cells(dtb, node, prop, default):
    v = fdtget(dtb, "-t", "u", node, prop)
    return int(v[0]) if v else default


def regs(dtb, node, ac, sc):
    v = fdtget(dtb, "-t", "u", node, "reg")
    if not v:
        return []
    v = [int(x) for x in v]
    out = []
    step = ac + sc
    for i in range(0, len(v) - step + 1, step):
        addr = 0
        for c in v[i:i + ac]:
            addr = (addr << 32) | c
        size = 0
        for c in v[i + ac:i + step]:
            size = (size << 32) | c
        out.append((addr, size))
    return out


def children(dtb, node):
    v = fdtget(dtb, "-l", node)
    return v or []


def all_nodes(dtb, node="/"):
    yield node
    for c in children(dtb, node):
        yield from all_nodes(dtb, node.rstrip("/") + "/" + c)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    dtb = sys.argv[1]
    ac, sc = cells(dtb, "/", "#address-cells", 2), cells(dtb, "/", "#size-cells", 1)
    memory = []
    for c in children(dtb, "/"):
        if c.startswith("memory"):
            memory += regs(dtb, "/" + c, ac, sc)
    problems = []
    if not memory:
        problems.append("no /memory node with a reg")

    rac = cells(dtb, "/reserved-memory", "#address-cells", ac)
    rsc = cells(dtb, "/reserved-memory", "#size-cells", sc)
    regions = []
    phandles = {}
    for c in children(dtb, "/reserved-memory"):
        path = "/reserved-memory/" + c
        ph = fdtget(dtb, "-t", "u", path, "phandle")
        if ph:
            phandles[int(ph[0])] = path
        compat = " ".join(fdtget(dtb, path, "compatible") or [])
        no_map = fdtget(dtb, path, "no-map") is not None
        reusable = fdtget(dtb, path, "reusable") is not None
        for addr, size in regs(dtb, path, rac, rsc):
            regions.append((addr, size, path))
            if not any(m <= addr and addr + size <= m + ms for m, ms in memory):
                problems.append(f"{path}: [{addr:#x}, {addr + size:#x}) is outside RAM")
            if "shared-dma-pool" in compat:
                if addr % PAGE or size % PAGE:
                    problems.append(f"{path}: shared-dma-pool not page aligned")
                if no_map and reusable:
                    problems.append(f"{path}: both no-map and reusable")

    regions.sort()
    for (a1, s1, p1), (a2, s2, p2) in zip(regions, regions[1:]):
        if a2 < a1 + s1:
            problems.append(f"{p1} [{a1:#x}, {a1 + s1:#x}) overlaps {p2} "
                            f"[{a2:#x}, {a2 + s2:#x})")

    for node in all_nodes(dtb):
        ref = fdtget(dtb, "-t", "u", node, "memory-region")
        for ph in (int(x) for x in ref or []):
            if ph not in phandles:
                problems.append(f"{node}: memory-region <{ph}> is not a reserved-memory child")

    for p in problems:
        print(f"reserved-memory: {p}")
    if not problems:
        print(f"reserved-memory: {len(regions)} regions, no overlap, all inside RAM")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
