// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the CPU's stores to chosen window words, one TLP each.
 *
 * The window worker (window.c) compares memory: it sees what a word holds,
 * not how the CPU stored it, so a 32-bit index written as four byte stores
 * (memcpy_toio() on arm64) reaches the host whole. On PCIe every store is
 * its own posted write, and a host read between two of them sees a value
 * that is half old, half new. For the words a protocol publishes through,
 * a test names the function's CPU address of those words (the window
 * mapping as the function sees it, an ioremap() in the EPC core): the lab
 * sets hardware watchpoints on them (register_wide_hw_breakpoint(); QEMU
 * emulates arm64's debug watchpoints). A watchpoint fires before the store;
 * the handler decodes the instruction (STR/STRB/STRH, STUR, pre- and
 * post-index, register offset, STP/STNP), logs each register's store with
 * its address, size and value, performs it and steps over it. The window
 * worker then publishes the logged stores one by one, in program order,
 * tear_us apart, after the unwatched words of the same cut; so a reader on
 * the host side sees every intermediate value the CPU's stores made.
 *
 * Context: the handler runs in the debug exception, which the kernel treats
 * as an NMI: no locks there, only the log's atomics. The log is consumed by
 * the window worker and the flush points under win_lock.
 *
 * Knobs (debugfs): watch ("VA OFF LEN": arm on LEN bytes, 8 to 32 in steps
 * of 8, at the function's CPU address VA + OFF, 8-byte aligned, inside a
 * live window mapping: VA as /proc/vmallocinfo shows the EPC core's ioremap
 * of the window, OFF from there; "off": disarm; read: state and counts),
 * tear_us (the gap between two published stores; 0 by default). Nothing is
 * watched unless a test arms it.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/hw_breakpoint.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "loop.h"

/* 8 bytes per watchpoint; arm64 cores have 2 to 16, QEMU's Cortex-A76 has 4 */
#define LOOP_WATCH_MAX_BPS	4
#define LOOP_WATCH_LOG		512
/* Spins for a logged store whose handler is still running on another CPU */
#define LOOP_WATCH_SPINS	100000

/**
 * struct loop_watch_rec - one logged store
 * @seq: its sequence number + 1 once logged and performed (0: in progress)
 * @off: window offset of the first byte
 * @size: bytes (1, 2, 4 or 8)
 * @val: the value stored (low @size bytes)
 */
struct loop_watch_rec {
	unsigned long seq;
	u32 off;
	u8 size;
	u64 val;
};

/**
 * struct loop_watch - the watched words and the store log
 * @bp: the wide breakpoints (one per 8 bytes), NULL when disarmed
 * @nbp: breakpoints registered
 * @va: the function's CPU address of the first watched byte
 * @off: window offset of the first watched byte; under win_lock
 * @len: watched bytes, 0 when disarmed; under win_lock
 * @head: stores logged (reserved slots)
 * @tail: stores consumed; written under win_lock
 * @cut: @head when the current cut was taken; under win_lock
 * @lost: the log was full: the worker publishes the watched words whole once
 * @tear_us: knob: microseconds between two published stores
 * @by_size: stores logged by size (1, 2, 4, 8 bytes)
 * @replayed: stores published one by one
 * @dropped: stores lost to a full log
 * @unknown: watched stores of an instruction the handler cannot decode
 * @unknown_pc: the last such instruction's address
 * @log: the logged stores, @LOOP_WATCH_LOG slots
 */
struct loop_watch {
	struct perf_event * __percpu *bp[LOOP_WATCH_MAX_BPS];
	int nbp;
	unsigned long va;
	u32 off;
	u32 len;
	atomic_long_t head;
	unsigned long tail;
	unsigned long cut;
	atomic_t lost;
	u32 tear_us;
	atomic64_t by_size[4];
	atomic64_t replayed;
	atomic64_t dropped;
	atomic64_t unknown;
	unsigned long unknown_pc;
	struct loop_watch_rec log[LOOP_WATCH_LOG];
};

#ifdef CONFIG_HAVE_HW_BREAKPOINT
/*
 * Reserve a log slot; false if the log is full (the store is still made,
 * and the worker publishes the watched words whole once).
 */
static bool loop_watch_reserve(struct loop_watch *w, unsigned long *seq)
{
	long h;

	do {
		h = atomic_long_read(&w->head);
		if ((unsigned long)h - READ_ONCE(w->tail) >= LOOP_WATCH_LOG)
			return false;
	} while (atomic_long_cmpxchg(&w->head, h, h + 1) != h);
	*seq = h;
	return true;
}

/* Log one store of @size bytes at CPU address @addr, and make it */
static void loop_watch_store(struct loop_watch *w, unsigned long addr, u8 size,
			     u64 val)
{
	void __iomem *p = (void __iomem *)addr;
	struct loop_watch_rec *r = NULL;
	unsigned long seq;

	if (loop_watch_reserve(w, &seq)) {
		r = &w->log[seq % LOOP_WATCH_LOG];
		r->off = w->off + (addr - w->va);
		r->size = size;
		r->val = size == 8 ? val : val & (BIT_ULL(size * 8) - 1);
	} else {
		atomic64_inc(&w->dropped);
		atomic_set(&w->lost, 1);
	}
	/* Debug exceptions are masked here: this store does not fire again */
	switch (size) {
	case 1:
		__raw_writeb(val, p);
		break;
	case 2:
		__raw_writew(val, p);
		break;
	case 4:
		__raw_writel(val, p);
		break;
	default:
		__raw_writeq(val, p);
		break;
	}
	atomic64_inc(&w->by_size[ilog2(size)]);
	if (r)
		/* The store is in memory before the worker may take the record */
		smp_store_release(&r->seq, seq + 1);
}

static u64 loop_watch_reg(struct pt_regs *regs, u32 r, bool sp)
{
	if (r == 31)
		return sp ? regs->sp : 0;
	return regs->regs[r];
}

static void loop_watch_set_base(struct pt_regs *regs, u32 r, u64 v)
{
	if (r == 31)
		regs->sp = v;
	else
		regs->regs[r] = v;
}

static s64 loop_watch_sext(u32 v, int bits)
{
	return (s64)((u64)v << (64 - bits)) >> (64 - bits);
}

/* STR (register offset): the extended and shifted index register */
static u64 loop_watch_index(struct pt_regs *regs, u32 insn, u32 size)
{
	u64 rm = loop_watch_reg(regs, (insn >> 16) & 31, false);
	u32 option = (insn >> 13) & 7;

	if (option == 2)		/* UXTW */
		rm = (u32)rm;
	else if (option == 6)		/* SXTW */
		rm = (s64)(s32)rm;
	return ((insn >> 12) & 1) ? rm << ilog2(size) : rm;
}

/*
 * Decode and make a general-register store (A64 "load/store register" and
 * "load/store pair" classes, stores only). Return: false if @insn is none.
 */
static bool loop_watch_emulate(struct loop_watch *w, struct pt_regs *regs, u32 insn)
{
	u32 rt = insn & 31, rn = (insn >> 5) & 31, size, mode;
	u64 base = loop_watch_reg(regs, rn, true), addr = base, next = base;

	if ((insn & 0x3fc00000) == 0x39000000) {		/* STR (unsigned imm) */
		size = 1 << (insn >> 30);
		addr = base + (u64)((insn >> 10) & 0xfff) * size;
	} else if ((insn & 0x3fe00000) == 0x38000000 && ((insn >> 10) & 3) != 2) {
		/* STUR, STR post-index, STR pre-index */
		s64 imm = loop_watch_sext((insn >> 12) & 0x1ff, 9);

		size = 1 << (insn >> 30);
		mode = (insn >> 10) & 3;
		addr = mode == 1 ? base : base + imm;
		next = mode ? base + imm : base;
	} else if ((insn & 0x3fe00c00) == 0x38200800) {		/* STR (register) */
		size = 1 << (insn >> 30);
		addr = base + loop_watch_index(regs, insn, size);
	} else if ((insn & 0x3c400000) == 0x28000000 && !(insn & BIT(30))) {
		/* STP/STNP, 32 or 64 bit: opc 00 or 10 */
		s64 imm = loop_watch_sext((insn >> 15) & 0x7f, 7);

		size = insn & BIT(31) ? 8 : 4;
		mode = (insn >> 23) & 7;
		if (mode > 3)
			return false;
		addr = mode == 1 ? base : base + imm * size;
		next = mode == 1 || mode == 3 ? base + imm * size : base;
		loop_watch_store(w, addr, size, loop_watch_reg(regs, rt, false));
		rt = (insn >> 10) & 31;
		addr += size;
	} else {
		return false;
	}
	loop_watch_store(w, addr, size, loop_watch_reg(regs, rt, false));
	if (next != base)
		loop_watch_set_base(regs, rn, next);
	return true;
}

static void loop_watch_hit(struct perf_event *bp, struct perf_sample_data *data,
			   struct pt_regs *regs)
{
	struct pci_epc_loop *loop = bp->overflow_handler_context;
	struct loop_watch *w = loop->watch;
	u32 insn;

	if (user_mode(regs))
		return;
	if (get_kernel_nofault(insn, (u32 *)instruction_pointer(regs)) ||
	    !loop_watch_emulate(w, regs, le32_to_cpu((__force __le32)insn))) {
		/* Stepped over unmade: the count fails the test that armed it */
		atomic64_inc(&w->unknown);
		WRITE_ONCE(w->unknown_pc, instruction_pointer(regs));
	}
	/* The handler made the store; the kernel does not step a custom handler's hit */
	instruction_pointer_set(regs, instruction_pointer(regs) + 4);
}

static int loop_watch_register(struct pci_epc_loop *loop, struct loop_watch *w, u32 len)
{
	struct perf_event_attr attr;
	int i;

	for (i = 0; i < len / 8; i++) {
		struct perf_event * __percpu *bp;

		hw_breakpoint_init(&attr);
		attr.bp_addr = w->va + i * 8;
		attr.bp_len = HW_BREAKPOINT_LEN_8;
		attr.bp_type = HW_BREAKPOINT_W;
		bp = register_wide_hw_breakpoint(&attr, loop_watch_hit, loop);
		if (IS_ERR((void __force *)bp))
			return PTR_ERR((void __force *)bp);
		w->bp[i] = bp;
		w->nbp = i + 1;
	}
	return 0;
}

static void loop_watch_unregister(struct loop_watch *w)
{
	while (w->nbp)
		unregister_wide_hw_breakpoint(w->bp[--w->nbp]);
}
#else
static int loop_watch_register(struct pci_epc_loop *loop, struct loop_watch *w, u32 len)
{
	return -EOPNOTSUPP;
}

static void loop_watch_unregister(struct loop_watch *w)
{
}
#endif

/* Disarm; win_lock held. Stores not yet published are lost with the mapping. */
static void loop_watch_disarm_locked(struct loop_watch *w)
{
	loop_watch_unregister(w);
	w->len = 0;
	WRITE_ONCE(w->tail, atomic_long_read(&w->head));
	w->cut = w->tail;
	atomic_set(&w->lost, 0);
}

/* The window offset of the function's CPU address @va, or -EINVAL */
static long loop_watch_win_off(struct pci_epc_loop *loop, unsigned long va, u32 len)
{
	long off = -EINVAL;
	unsigned long p;

	for (p = va; p < va + len; p = (p & PAGE_MASK) + PAGE_SIZE) {
		struct page *pg;
		phys_addr_t phys;

		if (!is_vmalloc_addr((void *)p))
			return -EINVAL;
		pg = vmalloc_to_page((void *)p);
		if (!pg)
			return -EINVAL;
		phys = page_to_phys(pg) + offset_in_page(p);
		if (phys < loop->win_phys || phys >= loop->win_phys + LOOP_WIN_SIZE)
			return -EINVAL;
		if (p == va)
			off = phys - loop->win_phys;
		else if (phys - loop->win_phys != off + (p - va))
			return -EINVAL;
	}
	return off;
}

static int loop_watch_arm(struct pci_epc_loop *loop, unsigned long va, u32 len)
{
	struct loop_watch *w = loop->watch;
	long off;
	int ret;

	if (!IS_ALIGNED(va, 8) || !len || len % 8 || len > LOOP_WATCH_MAX_BPS * 8)
		return -EINVAL;
	off = loop_watch_win_off(loop, va, len);
	if (off < 0)
		return off;
	mutex_lock(&loop->win_lock);
	loop_watch_disarm_locked(w);
	ret = -ENXIO;
	if (!loop_win_live(loop, off, len))
		goto out_unlock;
	w->va = va;
	w->off = off;
	/* The worker sees the range only once every watchpoint is in place */
	ret = loop_watch_register(loop, w, len);
	if (ret)
		loop_watch_unregister(w);
	else
		w->len = len;
out_unlock:
	mutex_unlock(&loop->win_lock);
	return ret;
}

/**
 * loop_watch_word() - the window word at @off is watched
 * @loop: the loopback (win_lock held)
 * @off: window offset of an 8-byte word
 *
 * Return: true if its stores are published one by one (loop_watch_next()).
 */
bool loop_watch_word(struct pci_epc_loop *loop, u32 off)
{
	struct loop_watch *w = loop->watch;

	return w && w->len && off + 8 > w->off && off < w->off + w->len;
}

/**
 * loop_watch_range() - the watched bytes inside a mapping
 * @loop: the loopback (win_lock held)
 * @off: window offset of the mapping
 * @size: its size
 * @lo: first watched byte, from the mapping's start
 * @hi: end of the watched bytes, from the mapping's start
 *
 * Return: false if none of its bytes is watched.
 */
bool loop_watch_range(struct pci_epc_loop *loop, u32 off, size_t size, u32 *lo, u32 *hi)
{
	struct loop_watch *w = loop->watch;

	if (!w || !w->len || w->off >= off + size || off >= w->off + w->len)
		return false;
	*lo = max(w->off, off) - off;
	*hi = min_t(u64, w->off + w->len, off + size) - off;
	return true;
}

/**
 * loop_watch_cut() - a cut of the window is about to be read
 * @loop: the loopback (win_lock held)
 *
 * The stores logged so far belong to it: every store the function made
 * before them is in memory for the cut's reads (the log's atomic orders
 * them), so publishing these after the cut's other words keeps the order.
 */
void loop_watch_cut(struct pci_epc_loop *loop)
{
	struct loop_watch *w = loop->watch;

	if (w)
		w->cut = atomic_long_read_acquire(&w->head);
}

/**
 * loop_watch_pending() - the current cut has logged stores to publish
 * @loop: the loopback (win_lock held)
 *
 * Without any, the watched words are published from the cut like the rest
 * (a difference the log does not explain: a store made just before the
 * watch was armed).
 *
 * Return: true if loop_watch_next() has stores for this cut.
 */
bool loop_watch_pending(struct pci_epc_loop *loop)
{
	struct loop_watch *w = loop->watch;

	return w && w->len && w->tail != w->cut;
}

/**
 * loop_watch_logged() - stores are logged that are not published yet
 * @loop: the loopback (win_lock held)
 *
 * Those of the current cut, and those made since it was taken: a sweep that
 * reads a watched word after the cut may see such a store's value, and
 * publishing that word from the cut would put the newest value on the host
 * before the replay of the logged stores that came earlier (the host's index
 * would step back: 80-torn-stores, "cq_prod past the ring"). The watched
 * words then wait for the replay of the cut that holds their stores.
 *
 * Return: true if the watched words are published only by replay now.
 */
bool loop_watch_logged(struct pci_epc_loop *loop)
{
	struct loop_watch *w = loop->watch;

	return w && w->len && atomic_long_read_acquire(&w->head) != w->tail;
}

/**
 * loop_watch_whole() - the log overflowed: publish the watched words whole
 * @loop: the loopback (win_lock held)
 *
 * Drops the logged stores of the current cut; the caller publishes the
 * watched words' contents as the cut holds them, as for any other word.
 *
 * Return: true once after an overflow.
 */
bool loop_watch_whole(struct pci_epc_loop *loop)
{
	struct loop_watch *w = loop->watch;

	if (!w || !atomic_xchg(&w->lost, 0))
		return false;
	/* The slots up to the cut are free for the handler once it sees this */
	smp_store_release(&w->tail, w->cut);
	return true;
}

/**
 * loop_watch_next() - the next logged store of the current cut
 * @loop: the loopback (win_lock held)
 * @off: window offset of its first byte
 * @size: its size in bytes
 * @val: its value
 *
 * Return: false when the cut has no more (or one is still being logged).
 */
bool loop_watch_next(struct pci_epc_loop *loop, u32 *off, u8 *size, u64 *val)
{
	struct loop_watch *w = loop->watch;
	struct loop_watch_rec *r;
	int spins = 0;

	if (!w || w->tail == w->cut)
		return false;
	r = &w->log[w->tail % LOOP_WATCH_LOG];
	/* A handler reserved the slot and is making the store on another CPU */
	while (smp_load_acquire(&r->seq) != w->tail + 1) {
		if (++spins > LOOP_WATCH_SPINS)
			return false;
		cpu_relax();
	}
	*off = r->off;
	*size = r->size;
	*val = r->val;
	/* The slot is copied before a handler may reuse it */
	smp_store_release(&w->tail, w->tail + 1);
	atomic64_inc(&w->replayed);
	return true;
}

/**
 * loop_watch_tear_us() - the gap between two published stores
 * @loop: the loopback
 *
 * Return: microseconds (knob tear_us, at most 100 ms).
 */
u32 loop_watch_tear_us(struct pci_epc_loop *loop)
{
	return loop->watch ? min(READ_ONCE(loop->watch->tear_us), 100000U) : 0;
}

/**
 * loop_watch_unmapped() - a window mapping goes away
 * @loop: the loopback (win_lock held)
 * @off: window offset of the mapping
 * @size: its size
 *
 * The watchpoints on words inside it are removed with it.
 */
void loop_watch_unmapped(struct pci_epc_loop *loop, u32 off, size_t size)
{
	struct loop_watch *w = loop->watch;

	if (w && w->len && w->off < off + size && off < w->off + w->len)
		loop_watch_disarm_locked(w);
}

static int loop_watch_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;
	struct loop_watch *w = loop->watch;
	u32 off, len;

	mutex_lock(&loop->win_lock);
	off = w->off;
	len = w->len;
	mutex_unlock(&loop->win_lock);
	seq_printf(s, "armed %d win_off %#x len %u\n", len != 0, len ? off : 0, len);
	seq_printf(s, "stores 1:%lld 2:%lld 4:%lld 8:%lld\n",
		   atomic64_read(&w->by_size[0]), atomic64_read(&w->by_size[1]),
		   atomic64_read(&w->by_size[2]), atomic64_read(&w->by_size[3]));
	seq_printf(s, "replayed %lld dropped %lld unknown %lld\n",
		   atomic64_read(&w->replayed), atomic64_read(&w->dropped),
		   atomic64_read(&w->unknown));
	if (atomic64_read(&w->unknown))
		seq_printf(s, "unknown_at %pS\n", (void *)READ_ONCE(w->unknown_pc));
	return 0;
}

static int loop_watch_open(struct inode *inode, struct file *file)
{
	return single_open(file, loop_watch_show, inode->i_private);
}

static ssize_t loop_watch_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct pci_epc_loop *loop = file_inode(file)->i_private;
	unsigned long va, off;
	char buf[64] = {};
	u32 len;
	int ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;
	if (sysfs_streq(buf, "off")) {
		mutex_lock(&loop->win_lock);
		loop_watch_disarm_locked(loop->watch);
		mutex_unlock(&loop->win_lock);
		return count;
	}
	if (sscanf(buf, "%lx %lu %u", &va, &off, &len) != 3)
		return -EINVAL;
	ret = loop_watch_arm(loop, va + off, len);
	if (ret)
		dev_err_ratelimited(loop->dev, "watch: cannot arm %u bytes: %d\n", len, ret);
	return ret ?: count;
}

static const struct file_operations loop_watch_fops = {
	.owner		= THIS_MODULE,
	.open		= loop_watch_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= loop_watch_write,
};

/**
 * loop_watch_init() - the store log and its knobs
 * @loop: the loopback
 * @dir: the device's debugfs directory
 *
 * Without the memory, nothing is watched (loop_watch_word() is false).
 */
void loop_watch_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	/* Device-managed: the last mapping's removal disarmed it (loop_win_drop_all()) */
	loop->watch = devm_kzalloc(loop->dev, sizeof(*loop->watch), GFP_KERNEL);
	if (!loop->watch)
		return;
	debugfs_create_file("watch", 0600, dir, loop, &loop_watch_fops);
	debugfs_create_u32("tear_us", 0600, dir, &loop->watch->tear_us);
}
