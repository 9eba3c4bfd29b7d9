// SPDX-License-Identifier: GPL-2.0
/*
 * fl-pgattr: test helper that tells a process the memory type of one of its own mappings.
 *
 * QEMU's TCG ignores memory attributes, so a cacheable and a write-combined mapping of the
 * endpoint slots behave the same in the test VM; what differs, and what the slot mmap fix
 * (issue 8 item 5) changes, is the attribute the mapping was made with. A process writes
 * the address of its mapping to /sys/kernel/debug/fl-pgattr and reads back the arm64
 * MAIR index name of that VMA's vm_page_prot ("normal", "normal-nc", "device", ...), which
 * remap_pfn_range() used for the page table entries.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/uaccess.h>

static struct dentry *fl_pgattr_file;

static const char *fl_pgattr_name(pgprot_t prot)
{
#ifdef CONFIG_ARM64
	switch ((pgprot_val(prot) & PTE_ATTRINDX_MASK) >> 2) {
	case MT_NORMAL:
		return "normal";
	case MT_NORMAL_TAGGED:
		return "normal-tagged";
	case MT_NORMAL_NC:
		return "normal-nc";
	case MT_DEVICE_nGnRnE:
		return "device-ngnrne";
	case MT_DEVICE_nGnRE:
		return "device-ngnre";
	default:
		return "other";
	}
#else
	return "unknown-arch";
#endif
}

/* One answer per open file, set by the last write */
static ssize_t fl_pgattr_write(struct file *file, const char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	struct vm_area_struct *vma;
	const char *name = "no-vma";
	unsigned long addr;
	int ret;

	ret = kstrtoul_from_user(ubuf, len, 0, &addr);
	if (ret)
		return ret;
	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, addr);
	if (vma)
		name = fl_pgattr_name(vma->vm_page_prot);
	mmap_read_unlock(current->mm);
	file->private_data = (void *)name;
	return len;
}

static ssize_t fl_pgattr_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	const char *name = file->private_data ? file->private_data : "unset";
	char buf[32];
	int n = scnprintf(buf, sizeof(buf), "%s\n", name);

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations fl_pgattr_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = fl_pgattr_write,
	.read = fl_pgattr_read,
	.llseek = default_llseek,
};

static int __init fl_pgattr_init(void)
{
	fl_pgattr_file = debugfs_create_file("fl-pgattr", 0600, NULL, NULL, &fl_pgattr_fops);
	return 0;
}
module_init(fl_pgattr_init);

static void __exit fl_pgattr_exit(void)
{
	debugfs_remove(fl_pgattr_file);
}
module_exit(fl_pgattr_exit);

MODULE_DESCRIPTION("framelink test helper: memory type of a process's own mapping");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
