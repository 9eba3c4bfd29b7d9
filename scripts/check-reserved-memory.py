#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the reserved memory of a device tree before it boots, or of a running system.

A reserved-memory mistake only warns at boot (or not at all) and then corrupts silently, so
every overlay that carves frame memory is checked here first. The rules are the kernel's own
(drivers/of/of_reserved_mem.c, drivers/of/fdt.c and kernel/dma/contiguous.c of 6.12):
  - /reserved-memory has #address-cells/#size-cells equal to the root's and a ranges property
    (else __reserved_mem_check_root() makes the kernel ignore EVERY region),
  - each child with a reg lies inside RAM and no two such regions overlap,
  - a /memreserve/ entry of the header overlaps no reserved-memory region,
  - a dynamically placed child (size, optional alignment and alloc-ranges, all in the ROOT's
    cells as __reserved_mem_alloc_size() reads them) has well-formed properties, each
    alloc-range lies in RAM, and the region fits: placed top-down like memblock does, at its
    alignment, in a free part of an alloc-range (or of RAM) after the fixed regions, the
    /memreserve/ entries and the dynamic regions placed before it; the sum of fixed and
    dynamic regions fits in RAM,
  - a shared-dma-pool is page aligned and not both no-map and reusable; a reusable (CMA) pool
    has base and size multiples of 4 MiB (CMA_MIN_ALIGNMENT_BYTES is 2 MiB on 6.12 with 4 KiB
    pages, 4 MiB on 5.15 and 6.1: the stricter value keeps the overlays good on every kernel),
  - at most one linux,cma-default region,
  - every memory-region phandle points at a reserved-memory child, and memory-region-names
    (when present) names each of them.

Live mode (--live) checks the running system instead: the flattened tree the kernel booted
with (ROOT/sys/firmware/fdt) with RAM taken from ROOT/proc/iomem ("System RAM" and the
top-level "reserved" no-map ranges; the EFI stub removes /memory nodes, so the tree alone does
not say where RAM is), then requires every fixed region and /memreserve/ entry to be covered by
"reserved" ranges of ROOT/proc/iomem, and every dynamic region to have a "reserved" range at
least its size inside its alloc-ranges. A region the kernel rejected at boot is missing there.
/proc/iomem shows addresses only to root: all-zero addresses are refused.

Usage: check-reserved-memory.py DTB | --live [--root DIR]
Exit 0 when clean; 1 with one line per problem; 2 for a usage or input error.
"""
import struct
import sys

PAGE = 4096
CMA_ALIGN = 4 << 20
FDT_MAGIC = 0xD00DFEED
FDT_BEGIN_NODE, FDT_END_NODE, FDT_PROP, FDT_NOP, FDT_END = 1, 2, 3, 4, 9


class Node:
    """One device-tree node: its path, properties (name -> bytes) and children."""

    def __init__(self, path):
        self.path = path
        self.props = {}
        self.children = []

    def name(self):
        return self.path.rsplit("/", 1)[-1]

    def child(self, name):
        for c in self.children:
            if c.name() == name:
                return c
        return None

    def u32s(self, prop):
        v = self.props.get(prop)
        if v is None:
            return None
        return list(struct.unpack(">%dI" % (len(v) // 4), v[:len(v) // 4 * 4]))

    def strings(self, prop):
        v = self.props.get(prop)
        return [] if v is None else [s.decode(errors="replace") for s in v.split(b"\0")[:-1]]


def parse_fdt(blob):
    """Parse a flattened device tree: (root Node, [(addr, size)] of the /memreserve/ block)."""
    if len(blob) < 40:
        raise ValueError("too short for an FDT header")
    (magic, total, off_struct, off_strings, off_rsv, _ver, _last, _cpu, size_strings,
     size_struct) = struct.unpack(">10I", blob[:40])
    if magic != FDT_MAGIC or total > len(blob):
        raise ValueError("not a flattened device tree")
    rsv = []
    off = off_rsv
    while True:
        addr, size = struct.unpack(">QQ", blob[off:off + 16])
        off += 16
        if addr == 0 and size == 0:
            break
        rsv.append((addr, size))
    strings = blob[off_strings:off_strings + size_strings]
    off, end = off_struct, off_struct + size_struct
    stack, root = [], None
    while off < end:
        (tok,) = struct.unpack(">I", blob[off:off + 4])
        off += 4
        if tok == FDT_BEGIN_NODE:
            nul = blob.index(b"\0", off)
            name = blob[off:nul].decode()
            off = (nul + 4) & ~3
            if not stack:
                node = root = Node("/")
            else:
                parent = stack[-1]
                node = Node(parent.path.rstrip("/") + "/" + name)
                parent.children.append(node)
            stack.append(node)
        elif tok == FDT_END_NODE:
            stack.pop()
        elif tok == FDT_PROP:
            ln, nameoff = struct.unpack(">II", blob[off:off + 8])
            off += 8
            pname = strings[nameoff:strings.index(b"\0", nameoff)].decode()
            stack[-1].props[pname] = blob[off:off + ln]
            off = (off + ln + 3) & ~3
        elif tok == FDT_NOP:
            continue
        elif tok == FDT_END:
            break
        else:
            raise ValueError(f"bad token {tok:#x} at {off - 4:#x}")
    if root is None:
        raise ValueError("no root node")
    return root, rsv


def walk(node):
    yield node
    for c in node.children:
        yield from walk(c)


def number(words):
    v = 0
    for w in words:
        v = (v << 32) | w
    return v


def pairs(node, prop, ac, sc):
    """(addr, size) tuples of a reg-like property, or None when its length is not a multiple."""
    v = node.u32s(prop)
    if v is None:
        return []
    step = ac + sc
    if step == 0 or len(node.props[prop]) != len(v) * 4 or len(v) % step:
        return None
    return [(number(v[i:i + ac]), number(v[i + ac:i + step])) for i in range(0, len(v), step)]


def span(a, s):
    return f"[{a:#x}, {a + s:#x})"


def inside(addr, size, ranges):
    return any(m <= addr and addr + size <= m + ms for m, ms in ranges)


def subtract(free, addr, size):
    """The free intervals minus [addr, addr + size)."""
    out = []
    for f, fs in free:
        fe, e = f + fs, addr + size
        if e <= f or addr >= fe:
            out.append((f, fs))
            continue
        if f < addr:
            out.append((f, addr - f))
        if e < fe:
            out.append((e, fe - e))
    return out


def place(free, size, align, ranges):
    """Top-down placement like memblock: the highest aligned base of a fit, or None."""
    best = None
    for r, rs in ranges:
        for f, fs in free:
            lo, hi = max(f, r), min(f + fs, r + rs)
            if hi - lo < size:
                continue
            base = (hi - size) // align * align
            if base >= lo and (best is None or base > best):
                best = base
    return best


class Checker:
    """The static checks of one tree; problems collects one line per problem."""

    def __init__(self, root, rsv, ram=None):
        self.root, self.rsv = root, rsv
        self.problems = []
        self.ac = (root.u32s("#address-cells") or [2])[0]
        self.sc = (root.u32s("#size-cells") or [1])[0]
        self.ram = ram if ram is not None else self.memory_nodes()
        self.fixed = []     # (addr, size, path)
        self.dynamic = []   # (size, align, ranges, path, node)
        self.placed = {}    # path -> base chosen by the placement model

    def bad(self, msg):
        self.problems.append(msg)

    def memory_nodes(self):
        ram = []
        for c in self.root.children:
            if c.name().split("@")[0] == "memory" or "memory" in c.strings("device_type"):
                r = pairs(c, "reg", self.ac, self.sc)
                if r is None:
                    self.bad(f"{c.path}: reg length is not a multiple of the root cells")
                else:
                    ram += [(a, s) for a, s in r if s]
        return ram

    def check_root_format(self, rm):
        rac, rsc = rm.u32s("#address-cells"), rm.u32s("#size-cells")
        if rac != [self.ac] or rsc != [self.sc] or "ranges" not in rm.props:
            self.bad(f"/reserved-memory: #address-cells/#size-cells {rac}/{rsc} must equal the "
                     f"root's [{self.ac}]/[{self.sc}] and ranges must be present, or the kernel "
                     "ignores every region (__reserved_mem_check_root)")

    def collect(self, rm):
        for c in rm.children:
            if "status" in c.props and c.strings("status")[:1] not in (["okay"], ["ok"]):
                continue
            reg = pairs(c, "reg", self.ac, self.sc)
            if reg is None:
                self.bad(f"{c.path}: reg length is not a multiple of the root cells")
                continue
            if reg:
                for a, s in reg:
                    self.fixed.append((a, s, c.path))
                    self.check_pool(c, a, s)
                continue
            self.collect_dynamic(c)

    def collect_dynamic(self, c):
        if "size" not in c.props:
            self.bad(f"{c.path}: neither reg nor size")
            return
        if len(c.props["size"]) != 4 * self.sc:
            self.bad(f"{c.path}: size must have {self.sc} cells (the root's #size-cells)")
            return
        size = number(c.u32s("size"))
        align = PAGE
        if "alignment" in c.props:
            if len(c.props["alignment"]) != 4 * self.ac:
                self.bad(f"{c.path}: alignment must have {self.ac} cells (the root's "
                         "#address-cells)")
                return
            align = max(number(c.u32s("alignment")), 1)
            if align & (align - 1):
                self.bad(f"{c.path}: alignment {align:#x} is not a power of two")
        if self.is_cma(c):
            align = max(align, CMA_ALIGN)
        ranges = self.ram
        if "alloc-ranges" in c.props:
            ranges = pairs(c, "alloc-ranges", self.ac, self.sc)
            if ranges is None or not ranges:
                self.bad(f"{c.path}: alloc-ranges length is not a multiple of the root cells")
                return
            for a, s in ranges:
                if not inside(a, s, self.ram):
                    self.bad(f"{c.path}: alloc-range {span(a, s)} is not inside RAM")
        if size == 0:
            self.bad(f"{c.path}: size 0")
            return
        self.check_pool(c, None, size)
        self.dynamic.append((size, align, ranges, c.path, c))

    @staticmethod
    def is_cma(c):
        return ("shared-dma-pool" in c.strings("compatible") and "reusable" in c.props
                and "no-map" not in c.props)

    def check_pool(self, c, addr, size):
        if "shared-dma-pool" not in c.strings("compatible"):
            return
        if (addr or 0) % PAGE or size % PAGE:
            self.bad(f"{c.path}: shared-dma-pool not page aligned")
        if "no-map" in c.props and "reusable" in c.props:
            self.bad(f"{c.path}: both no-map and reusable")
        if self.is_cma(c) and ((addr or 0) % CMA_ALIGN or size % CMA_ALIGN):
            self.bad(f"{c.path}: a reusable (CMA) pool needs base and size in multiples of "
                     f"{CMA_ALIGN >> 20} MiB (\"incorrect alignment of CMA region\")")

    def check_fixed(self):
        for a, s, p in self.fixed:
            if not inside(a, s, self.ram):
                self.bad(f"{p}: {span(a, s)} is outside RAM")
        regions = sorted(self.fixed)
        for (a1, s1, p1), (a2, s2, p2) in zip(regions, regions[1:]):
            if a2 < a1 + s1:
                self.bad(f"{p1} {span(a1, s1)} overlaps {p2} {span(a2, s2)}")

    def check_memreserve(self):
        for a, s in self.rsv:
            for fa, fs, p in self.fixed:
                if a < fa + fs and fa < a + s:
                    self.bad(f"/memreserve/ {span(a, s)} overlaps {p} {span(fa, fs)}")

    def check_dynamic(self):
        free = list(self.ram)
        for a, s, _ in self.fixed:
            free = subtract(free, a, s)
        for a, s in self.rsv:
            free = subtract(free, a, s)
        for size, align, ranges, path, _ in self.dynamic:
            base = place(free, size, align, ranges)
            if base is None:
                self.bad(f"{path}: {size:#x} bytes at alignment {align:#x} fit nowhere in "
                         f"{' '.join(span(a, s) for a, s in ranges)} after the fixed regions, "
                         "/memreserve/ and earlier dynamic regions")
                continue
            self.placed[path] = base
            free = subtract(free, base, size)
        ram = sum(s for _, s in self.ram)
        total = sum(s for _, s, _ in self.fixed) + sum(d[0] for d in self.dynamic)
        if total > ram:
            self.bad(f"fixed + dynamic reserved memory {total:#x} exceeds RAM {ram:#x}")

    def check_defaults(self, rm):
        defaults = [c.path for c in rm.children if "linux,cma-default" in c.props]
        if len(defaults) > 1:
            self.bad(f"more than one linux,cma-default region: {' '.join(defaults)}")

    def check_refs(self, rm):
        phandles = {}
        for c in rm.children:
            ph = c.u32s("phandle") or c.u32s("linux,phandle")
            if ph:
                phandles[ph[0]] = c.path
        for node in walk(self.root):
            refs = node.u32s("memory-region")
            if refs is None:
                continue
            for ph in refs:
                if ph not in phandles:
                    self.bad(f"{node.path}: memory-region <{ph:#x}> is not a reserved-memory "
                             "child")
            names = node.strings("memory-region-names")
            if "memory-region-names" in node.props and len(names) != len(refs):
                self.bad(f"{node.path}: {len(names)} memory-region-names for {len(refs)} "
                         "memory-region entries")

    def run(self):
        if not self.ram:
            self.bad("no RAM: no /memory node with a reg")
        rm = self.root.child("reserved-memory")
        if rm is not None:
            self.check_root_format(rm)
            self.collect(rm)
            self.check_defaults(rm)
            self.check_refs(rm)
        elif any(n.u32s("memory-region") for n in walk(self.root)):
            self.bad("memory-region used but there is no /reserved-memory")
        self.check_fixed()
        self.check_memreserve()
        self.check_dynamic()
        return self


def parse_iomem(text):
    """(start, end_exclusive, name, depth) for each /proc/iomem line."""
    out = []
    for line in text.splitlines():
        if " : " not in line:
            continue
        rng, name = line.split(" : ", 1)
        depth = (len(rng) - len(rng.lstrip(" "))) // 2
        start, end = rng.strip().split("-")
        out.append((int(start, 16), int(end, 16) + 1, name.strip(), depth))
    return out


def merged(ranges):
    out = []
    for a, e in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((a, e))
    return out


def live(root_dir):
    try:
        with open(f"{root_dir}/sys/firmware/fdt", "rb") as f:
            blob = f.read()
        with open(f"{root_dir}/proc/iomem") as f:
            iomem = parse_iomem(f.read())
    except OSError as e:
        print(f"reserved-memory: live: {e}", file=sys.stderr)
        return None
    if not iomem or all(a == 0 and e <= 1 for a, e, _, _ in iomem):
        return ["live: /proc/iomem shows no addresses (run as root)"]
    ram = [(a, e - a) for a, e, n, d in iomem
           if d == 0 and (n == "System RAM" or n == "reserved")]
    ram = [(a, e - a) for a, e in merged((a, a + s) for a, s in ram)]
    root, rsv = parse_fdt(blob)
    chk = Checker(root, rsv, ram).run()
    reserved = merged((a, e) for a, e, n, _ in iomem if n == "reserved")
    for a, s, p in chk.fixed:
        if not any(ra <= a and a + s <= re for ra, re in reserved):
            chk.bad(f"live: {p} {span(a, s)} is not reserved in /proc/iomem (the kernel "
                    "rejected or lost it: see dmesg 'Reserved memory')")
    for a, s in rsv:
        if inside(a, s, ram) and not any(ra <= a and a + s <= re for ra, re in reserved):
            chk.bad(f"live: /memreserve/ {span(a, s)} is not reserved in /proc/iomem")
    for size, _, ranges, p, _ in chk.dynamic:
        if not any(min(re, r + rs) - max(ra, r) >= size
                   for ra, re in reserved for r, rs in ranges):
            chk.bad(f"live: {p}: no reserved range of {size:#x} bytes inside its alloc-ranges "
                    "in /proc/iomem (the kernel could not place it)")
    return chk


def main(argv):
    usage = __doc__.strip().splitlines()[-2]
    if len(argv) == 1 and not argv[0].startswith("-"):
        try:
            with open(argv[0], "rb") as f:
                root, rsv = parse_fdt(f.read())
        except (OSError, ValueError) as e:
            print(f"reserved-memory: {argv[0]}: {e}", file=sys.stderr)
            return 2
        chk = Checker(root, rsv).run()
        what = argv[0]
    elif argv[:1] == ["--live"] and len(argv) in (1, 3) and argv[1:2] in ([], ["--root"]):
        root_dir = argv[2] if len(argv) == 3 else ""
        chk = live(root_dir)
        if chk is None:
            return 2
        if isinstance(chk, list):
            print(f"reserved-memory: {chk[0]}")
            return 1
        what = f"live system {root_dir or '/'}"
    else:
        print(usage, file=sys.stderr)
        return 2
    for p in chk.problems:
        print(f"reserved-memory: {p}")
    if not chk.problems:
        placed = " ".join(f"{p.rsplit('/', 1)[-1]}@{b:#x}" for p, b in chk.placed.items())
        print(f"reserved-memory: {what}: {len(chk.fixed)} fixed + {len(chk.dynamic)} dynamic "
              f"regions, {len(chk.rsv)} /memreserve/, no overlap, all inside RAM"
              + (f"; dynamic placed top-down: {placed}" if placed else ""))
    return 1 if chk.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
