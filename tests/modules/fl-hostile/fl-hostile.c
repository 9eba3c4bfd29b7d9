// SPDX-License-Identifier: GPL-2.0
/*
 * fl-hostile: a hostile endpoint for framelink-host's tests (tests/vm/62-framelink-hostile.sh).
 *
 * pci-epc-loop's corrupt_bar plays a hostile root complex (it scribbles over BAR memory).
 * This module plays the other side: an endpoint that writes bad completions. Its fault_cqe
 * knob (<debugfs>/fl-hostile/fault_cqe) corrupts what the EPF writes through the outbound
 * window into the host's completion area (struct fl_host_status, then the fl_cqe ring, at
 * fl_bar_ctrl.cq_addr as the host programmed it in BAR0 of function 0), so every check
 * framelink-host makes of what the endpoint writes can be reached with the real
 * framelink-epf driving the link. The lab knows nothing of framelink: this module uses its
 * window hook (include/framelink/epc-loop-test.h), on every link.
 *
 * The hook runs when the window publishes a word of EPF writes to host memory. The trigger
 * is the word that holds fl_host_status.cq_prod: when it is about to advance from OLD to
 * NEW, the entries [OLD, NEW) are complete in host memory (framelink-epf writes them, and
 * unmaps - a flush point - before it writes cq_prod), and the host cannot read them yet
 * because cq_prod is not published. So the corruption lands before the host can see the
 * entry, without a race with its polling. Corrupting cq_prod itself flips bits of host
 * memory that the store of the new value leaves alone (bytes it does not change), so the
 * published index is the corrupted one.
 *
 * Format (write; read shows the armed fault and how many were applied):
 *   "OFF xor|set VALUE [COUNT [KIND]]" the u32 at byte OFF (0..60, a multiple
 *		of 4) of the next COUNT (default 1) completions, of kind KIND only
 *		(1 TX_DONE, 2 RX; 0 or absent: any), XORed with or set to VALUE
 *   "prod xor VALUE [COUNT]"	cq_prod of the next COUNT publications
 *   "off"			disarm
 * Disarmed at load.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <framelink/epc-loop-test.h>
#include <uapi/linux/framelink.h>

/**
 * struct fl_hostile - the armed fault_cqe corruption
 * @lock: protects every field below (taken in the window's publish path and by
 *	the debugfs file)
 * @prod: corrupt cq_prod instead of completion entries
 * @set: set the field to @val instead of XORing it with @val
 * @off: byte offset of the u32 field inside struct fl_cqe
 * @kind: corrupt only completions of this FL_CQE_* kind (0: any)
 * @val: value to XOR or set
 * @left: corruptions still to apply (0: disarmed)
 * @applied: corruptions applied since load
 */
struct fl_hostile {
	spinlock_t lock; /* every field below */
	bool prod;
	bool set;
	u32 off;
	u16 kind;
	u32 val;
	u32 left;
	u64 applied;
};

/* cq_addr and cq_entries as the host programmed them in BAR0 of function 0 */
static bool fl_hostile_ring(struct pci_epc_loop *loop, u64 *cq_addr, u32 *cq_entries)
{
	struct fl_bar_ctrl ctrl;

	if (pci_epc_loop_bar_read(loop, 0, 0, FL_BAR_CTRL_OFFSET, &ctrl, sizeof(ctrl)))
		return false;
	*cq_addr = le64_to_cpu(ctrl.cq_addr);
	*cq_entries = le32_to_cpu(ctrl.cq_entries);
	return *cq_addr && is_power_of_2(*cq_entries);
}

/* Corrupt the entries [@old, @new) in host memory; h->lock held */
static void fl_hostile_entries(struct pci_epc_loop *loop, struct fl_hostile *h,
			       u64 cq_addr, u32 cq_entries, u32 old, u32 new)
{
	u32 idx, x;

	for (idx = old; idx != new && h->left; idx++) {
		u64 e = cq_addr + FL_HOST_CQ_OFFSET +
			(u64)(idx & (cq_entries - 1)) * sizeof(struct fl_cqe);
		struct fl_cqe *cqe = pci_epc_loop_host_mem(loop, e, sizeof(*cqe));
		__le32 *field;

		if (!cqe)
			return;
		if (h->kind && le16_to_cpu(READ_ONCE(cqe->kind)) != h->kind)
			continue;
		field = (__le32 *)((u8 *)cqe + h->off);
		x = le32_to_cpu(READ_ONCE(*field));
		WRITE_ONCE(*field, cpu_to_le32(h->set ? h->val : x ^ h->val));
		WRITE_ONCE(h->left, h->left - 1);
		h->applied++;
	}
}

/* Flip bits of cq_prod in host memory that the coming store leaves alone */
static void fl_hostile_prod(struct pci_epc_loop *loop, struct fl_hostile *h,
			    u64 cq_addr, u32 keep)
{
	__le32 *prod = pci_epc_loop_host_mem(loop, cq_addr, sizeof(*prod));
	u32 x = h->val & ~keep;

	if (!prod || !x)
		return;
	WRITE_ONCE(*prod, cpu_to_le32(le32_to_cpu(READ_ONCE(*prod)) ^ x));
	WRITE_ONCE(h->left, h->left - 1);
	h->applied++;
}

static struct fl_hostile fl_hostile = {
	.lock = __SPIN_LOCK_UNLOCKED(fl_hostile.lock),
};

/* The window hook: the window is about to store word @v (was @s) at @pci_addr */
static void fl_hostile_publish(struct pci_epc_loop *loop, u64 pci_addr, u64 v, u64 s,
			       u64 mask)
{
	struct fl_hostile *h = &fl_hostile;
	u32 cq_entries, old, new;
	u64 cq_addr;
	int sh;

	if (!READ_ONCE(h->left))
		return;
	if (!fl_hostile_ring(loop, &cq_addr, &cq_entries))
		return;
	/* only the word that holds all of cq_prod */
	if (cq_addr < pci_addr || cq_addr + sizeof(__le32) > pci_addr + 8)
		return;
	sh = (cq_addr - pci_addr) * 8;
	new = (u32)(v >> sh);
	old = (u32)(s >> sh);
	/* not a publication: the enable zeroing cq_prod, or an EPF gone wrong */
	if (new == old || new - old > cq_entries)
		return;

	spin_lock(&h->lock);
	if (h->prod)
		fl_hostile_prod(loop, h, cq_addr, (u32)(mask >> sh));
	else if (h->left)
		fl_hostile_entries(loop, h, cq_addr, cq_entries, old, new);
	spin_unlock(&h->lock);
}

static const struct pci_epc_loop_win_hook fl_hostile_hook = {
	.publish = fl_hostile_publish,
};

static int fl_hostile_show(struct seq_file *m, void *unused)
{
	struct fl_hostile *h = m->private;

	spin_lock(&h->lock);
	if (!h->left)
		seq_puts(m, "off\n");
	else if (h->prod)
		seq_printf(m, "prod xor %#x left %u\n", h->val, h->left);
	else
		seq_printf(m, "%u %s %#x left %u kind %u\n", h->off,
			   h->set ? "set" : "xor", h->val, h->left, h->kind);
	seq_printf(m, "applied %llu\n", h->applied);
	spin_unlock(&h->lock);
	return 0;
}

static int fl_hostile_open(struct inode *inode, struct file *file)
{
	return single_open(file, fl_hostile_show, inode->i_private);
}

/* Parse a fault_cqe line into @n; 0 or -EINVAL */
static int fl_hostile_parse(char *buf, struct fl_hostile *n)
{
	char where[8], op[4], val[16];
	unsigned int count = 1, kind = 0;
	int got;

	if (sysfs_streq(buf, "off") || sysfs_streq(buf, "0"))
		return 0;
	got = sscanf(buf, "%7s %3s %15s %u %u", where, op, val, &count, &kind);
	if (got < 3 || !count || kind > FL_CQE_RX || kstrtou32(val, 0, &n->val))
		return -EINVAL;
	if (!strcmp(op, "set"))
		n->set = true;
	else if (strcmp(op, "xor"))
		return -EINVAL;
	if (!strcmp(where, "prod")) {
		if (n->set || got > 4)
			return -EINVAL;
		n->prod = true;
	} else if (kstrtou32(where, 0, &n->off) || n->off % 4 ||
		   n->off >= sizeof(struct fl_cqe)) {
		return -EINVAL;
	}
	n->kind = kind;
	n->left = count;
	return 0;
}

static ssize_t fl_hostile_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct fl_hostile *h = file_inode(file)->i_private;
	struct fl_hostile n = {};
	char buf[64] = {};
	int ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;
	ret = fl_hostile_parse(buf, &n);
	if (ret)
		return ret;
	spin_lock(&h->lock);
	h->prod = n.prod;
	h->set = n.set;
	h->off = n.off;
	h->kind = n.kind;
	h->val = n.val;
	WRITE_ONCE(h->left, n.left);
	spin_unlock(&h->lock);
	return count;
}

static const struct file_operations fl_hostile_fops = {
	.owner		= THIS_MODULE,
	.open		= fl_hostile_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= fl_hostile_write,
};

static struct dentry *fl_hostile_dir;

static int __init fl_hostile_init(void)
{
	int ret;

	fl_hostile_dir = debugfs_create_dir("fl-hostile", NULL);
	debugfs_create_file("fault_cqe", 0600, fl_hostile_dir, &fl_hostile, &fl_hostile_fops);
	ret = pci_epc_loop_set_win_hook(&fl_hostile_hook);
	if (ret) {
		pr_err("another window hook is installed: %d\n", ret);
		debugfs_remove(fl_hostile_dir);
	}
	return ret;
}

static void __exit fl_hostile_exit(void)
{
	/* no call of the hook runs after this */
	pci_epc_loop_set_win_hook(NULL);
	debugfs_remove(fl_hostile_dir);
}

module_init(fl_hostile_init);
module_exit(fl_hostile_exit);

MODULE_DESCRIPTION("framelink test helper: a hostile endpoint that corrupts completions");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
