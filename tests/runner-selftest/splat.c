// SPDX-License-Identifier: GPL-2.0
/*
 * Throwaway module for the VM runner's self-test: on load it plants the kind of kernel splat
 * the runner must catch, chosen by the "kind" parameter. Never part of a normal test run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
/* pr_debug() prints: the printk flood is debug level */
#define DEBUG

#include <linux/console.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *kind = "warn";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind,
		 "splat to plant: warn, kasan (heap out-of-bounds read), ubsan (shift), kfence (use after free of a sampled object), dma (unmap with another size), rcu (8 s without a quiescent state), printk (a flood with the console held)");

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

static noinline u64 splat_shift(void)
{
	unsigned int by = 70;
	u64 one = 1;

	OPTIMIZER_HIDE_VAR(by);
	return one << by;
}

/* KFENCE samples one allocation per interval: allocate until one lands in its pool */
static noinline int splat_kfence(void)
{
	int i;

	for (i = 0; i < 20000; i++) {
		u8 *p = kmalloc(32, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		if (is_kfence_address(p)) {
			kfree(p);
			pr_info("read after free: %u\n", READ_ONCE(p[0]));
			return 0;
		}
		kfree(p);
		usleep_range(1000, 2000);
	}
	return -EAGAIN;
}

static int splat_dma(void)
{
	struct platform_device *pdev;
	dma_addr_t addr;
	void *buf;
	int ret = -ENOMEM;

	pdev = platform_device_register_simple("fl-splat", -1, NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	buf = kmalloc(256, GFP_KERNEL);
	if (!buf)
		goto unregister;
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto free;
	addr = dma_map_single(&pdev->dev, buf, 256, DMA_TO_DEVICE);
	ret = dma_mapping_error(&pdev->dev, addr);
	if (!ret)
		dma_unmap_single(&pdev->dev, addr, 128, DMA_TO_DEVICE);
free:
	kfree(buf);
unregister:
	platform_device_unregister(pdev);
	return ret;
}

static int __init splat_init(void)
{
	int i;

	if (!strcmp(kind, "kasan")) {
		pr_info("read past the end: %u\n", splat_read_past_end());
	} else if (!strcmp(kind, "ubsan")) {
		pr_info("shifted: %llu\n", splat_shift());
	} else if (!strcmp(kind, "kfence")) {
		return splat_kfence();
	} else if (!strcmp(kind, "dma")) {
		return splat_dma();
	} else if (!strcmp(kind, "rcu")) {
		/* the script set rcu_cpu_stall_timeout to 3 s */
		preempt_disable();
		mdelay(8000);
		preempt_enable();
	} else if (!strcmp(kind, "printk")) {
		/*
		 * The console held: 12 MB of records wrap the ring buffer (log_buf_len=8M) before
		 * it prints; debug level, so the console skips them fast, and the line after them
		 * carries the count of those it lost.
		 */
		console_lock();
		for (i = 0; i < 120000; i++)
			pr_debug("flood %06d %s\n", i,
				 "..........................................................................................");
		console_unlock();
		pr_err("flood done\n");
	} else {
		WARN_ON(1);
	}
	return 0;
}

static void __exit splat_exit(void)
{
}

module_init(splat_init);
module_exit(splat_exit);
MODULE_DESCRIPTION("framelink VM runner self-test: plants a kernel splat");
MODULE_LICENSE("GPL");
