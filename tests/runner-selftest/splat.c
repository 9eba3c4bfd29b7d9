// SPDX-License-Identifier: GPL-2.0
/*
 * Throwaway module for the VM runner's self-test: on load it plants the kind of kernel splat
 * the runner must catch, chosen by the "kind" parameter. Never part of a normal test run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *kind = "warn";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "splat to plant: warn (WARN_ON) or kasan (heap out-of-bounds read)");

static noinline u8 splat_read_past_end(void)
{
	size_t past_end = 16;
	u8 *buf = kmalloc(16, GFP_KERNEL);
	u8 v;

	if (!buf)
		return 0;
	/* Hide the index so the compiler neither warns nor drops the bad read. */
	OPTIMIZER_HIDE_VAR(past_end);
	v = READ_ONCE(buf[past_end]);
	kfree(buf);
	return v;
}

static int __init splat_init(void)
{
	if (!strcmp(kind, "kasan"))
		pr_info("read past the end: %u\n", splat_read_past_end());
	else
		WARN_ON(1);
	return 0;
}

static void __exit splat_exit(void)
{
}

module_init(splat_init);
module_exit(splat_exit);
MODULE_DESCRIPTION("framelink VM runner self-test: plants a kernel splat");
MODULE_LICENSE("GPL");
