// SPDX-License-Identifier: GPL-2.0
/*
 * loop-wintest: plays both sides of the outbound window hazards of
 * pci-epc-loop (tests/vm/25w-epc-loop-window.sh).
 *
 * Endpoint side: no EPF driver; the loop's EPC is taken with pci_epc_get()
 * and programmed directly (header, one 4 KiB BAR0, one MSI vector, start).
 * One window mapping of a host page is made once, after link up, and kept
 * until the module goes away: a long-lived mapping.
 * Host side: a tiny PCI driver for the function (vendor 0x1234, device
 * 0x7e57) that maps BAR0 and handles the MSI.
 *
 * Write a command to <debugfs>/loop-wintest/cmd, read the result (lines
 * "key value") from <debugfs>/loop-wintest/result:
 *   live N        N values EP -> host and host -> EP through the mapping,
 *                 latency until the other side sees each
 *   dekker N      N trials of a lost-wake-up pair without flush reads
 *   msi N         N trials: write data through the window, raise MSI, the
 *                 handler looks at host memory
 *   unmap N       N trials: map a short second mapping, write through it,
 *                 unmap, look at host memory at once
 *   where         the EP's CPU address of the order word (for the lab's
 *                 watch knob: "VA 0 8")
 *   order N       N values stored in a row to the order word, then its
 *                 host copy sampled for 2 s: a value older than the one
 *                 before (this run's or an earlier run's) is a store
 *                 published out of program order
 *   release       unmap the long-lived mapping (the link stays up)
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/pci-epf.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include <framelink/compat.h>
#include <framelink/epc-loop-test.h>

#define WT_VENDOR	0x1234
#define WT_DEVICE	0x7e57
#define WT_SIZE		SZ_4K

/* Host page layout (byte offsets) */
#define WT_LIVE_EP	0x000	/* EP writes, host polls */
#define WT_LIVE_HOST	0x040	/* host writes, EP polls through the window */
#define WT_FLAG		0x080	/* Dekker: EP's "I posted work" flag */
#define WT_DATA		0x0c0	/* MSI: completion data */
#define WT_ORDER	0x100	/* order: EP stores a run of values, host samples */
#define WT_UNMAP	0x800	/* unmap: the second, short mapping */
#define WT_UNMAP_SIZE	64
/* BAR0 layout */
#define WT_ARMED	0x000	/* Dekker: host's "I am going to sleep" word */

/* Longest a value may take to cross in the live test (a lost value) */
#define WT_POLL_LIMIT_NS	(5000 * NSEC_PER_MSEC)
/* Longest a trial waits for its write to land before the next one */
#define WT_SETTLE_LIMIT_NS	(5000 * NSEC_PER_MSEC)

static char *epc_name = "pci-epc-loop";
module_param(epc_name, charp, 0444);
MODULE_PARM_DESC(epc_name, "endpoint controller to use (default pci-epc-loop)");

/**
 * struct wt - the test's state (one instance)
 * @lock: serialises commands; protects @result
 * @result: text of the last command's result
 * @epc: the loop's endpoint controller
 * @bar: BAR0 as given to pci_epc_set_bar()
 * @win: window CPU address (ioremapped by the EPC core)
 * @win_phys: window physical address
 * @win2: window for the short mappings of the unmap test
 * @win2_phys: its physical address
 * @host_page: host buffer the window maps
 * @mapped: the window mapping exists
 * @probed: completed when the host driver has probed
 * @pdev: the host-side PCI device while bound
 * @host_bar: host mapping of BAR0
 * @irq_done: completed by the MSI handler
 * @irq_seen: WT_DATA word the MSI handler saw in host memory
 * @dbg: debugfs directory
 * @seq: distinguishes values across commands
 */
struct wt {
	struct mutex lock; /* commands, result */
	char result[512];
	struct pci_epc *epc;
	struct pci_epf_bar bar;
	void __iomem *win;
	phys_addr_t win_phys;
	void __iomem *win2;
	phys_addr_t win2_phys;
	void *host_page;
	bool mapped;
	struct completion probed;
	struct pci_dev *pdev;
	void __iomem *host_bar;
	struct completion irq_done;
	u32 irq_seen;
	struct dentry *dbg;
	u32 seq;
};

static struct wt wt;

static u32 *wt_host(unsigned int off)
{
	return wt.host_page + off;
}

static u32 *wt_bar_local(unsigned int off)
{
	return wt.bar.addr + off;
}

/* ---- host side ---- */

static irqreturn_t wt_irq(int irq, void *data)
{
	/* The consumer looks at the completion data when the MSI arrives */
	WRITE_ONCE(wt.irq_seen, READ_ONCE(*wt_host(WT_DATA)));
	complete(&wt.irq_done);
	return IRQ_HANDLED;
}

static int wt_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	wt.host_bar = pcim_iomap(pdev, 0, 0);
	if (!wt.host_bar)
		return -ENOMEM;
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (ret < 0)
		return ret;
	ret = request_irq(pci_irq_vector(pdev, 0), wt_irq, 0, "loop-wintest",
			  &wt);
	if (ret)
		goto err_free_vectors;
	wt.pdev = pdev;
	complete(&wt.probed);
	return 0;

err_free_vectors:
	pci_free_irq_vectors(pdev);
	return ret;
}

static void wt_pci_remove(struct pci_dev *pdev)
{
	free_irq(pci_irq_vector(pdev, 0), &wt);
	pci_free_irq_vectors(pdev);
	wt.pdev = NULL;
}

static const struct pci_device_id wt_pci_ids[] = {
	{ PCI_DEVICE(WT_VENDOR, WT_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, wt_pci_ids);

static struct pci_driver wt_pci_driver = {
	.name = "loop-wintest",
	.id_table = wt_pci_ids,
	.probe = wt_pci_probe,
	.remove = wt_pci_remove,
};

/* ---- the tests ---- */

static __printf(1, 2) void wt_report(const char *fmt, ...)
{
	size_t len = strlen(wt.result);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(wt.result + len, sizeof(wt.result) - len, fmt, ap);
	va_end(ap);
}

/* Poll @p (host memory) until it reads @v; latency in ns or -1 */
static s64 wt_wait_host(u32 *p, u32 v, u64 limit_ns)
{
	u64 t0 = ktime_get_ns(), t;

	for (;;) {
		t = ktime_get_ns();
		if (READ_ONCE(*p) == v)
			return t - t0;
		if (t - t0 > limit_ns)
			return -1;
		usleep_range(10, 20);
	}
}

/* Wait until the window worker completed @n passes after @p0 */
static bool wt_wait_passes(u64 p0, unsigned int n)
{
	u64 t0 = ktime_get_ns();

	while (pci_epc_loop_win_passes(wt.epc) < p0 + n) {
		if (ktime_get_ns() - t0 > WT_SETTLE_LIMIT_NS)
			return false;
		usleep_range(10, 20);
	}
	return true;
}

/**
 * struct wt_lat - latency of values crossing the window one way
 * @sum_ns: total latency of the values that crossed
 * @max_ns: largest latency
 * @max_passes: most worker passes a value needed
 * @late: values still invisible after two complete worker passes
 * @timeouts: values that did not cross within WT_POLL_LIMIT_NS
 */
struct wt_lat {
	u64 sum_ns;
	u64 max_ns;
	u64 max_passes;
	unsigned int late;
	unsigned int timeouts;
};

/*
 * Poll until @seen() reports the value. The model says: visible once two
 * worker passes completed after the write (the first may have started
 * before it), whatever the wall clock says. The pass count is read before
 * the value, so a value seen late was really missing after two passes.
 */
static void wt_cross(struct wt_lat *l, bool (*seen)(unsigned int, u32),
		     unsigned int off, u32 v)
{
	u64 p0 = pci_epc_loop_win_passes(wt.epc), p;
	u64 t0 = ktime_get_ns(), t;
	bool late = false;

	for (;;) {
		p = pci_epc_loop_win_passes(wt.epc);
		t = ktime_get_ns();
		if (seen(off, v))
			break;
		if (p >= p0 + 2)
			late = true;
		if (t - t0 > WT_POLL_LIMIT_NS) {
			l->timeouts++;
			return;
		}
		usleep_range(10, 20);
	}
	l->late += late;
	l->sum_ns += t - t0;
	l->max_ns = max(l->max_ns, t - t0);
	l->max_passes = max(l->max_passes, p - p0);
}

static bool wt_seen_host(unsigned int off, u32 v)
{
	return READ_ONCE(*wt_host(off)) == v;
}

static bool wt_seen_win(unsigned int off, u32 v)
{
	return readl(wt.win + off) == v;
}

static void wt_lat_report(const char *dir, struct wt_lat *l, unsigned int n)
{
	wt_report("live_%s_avg_us %llu\nlive_%s_max_us %llu\n", dir,
		  n ? l->sum_ns / n / NSEC_PER_USEC : 0, dir,
		  l->max_ns / NSEC_PER_USEC);
	wt_report("live_%s_max_passes %llu\nlive_%s_late %u\nlive_%s_timeouts %u\n",
		  dir, l->max_passes, dir, l->late, dir, l->timeouts);
}

static void wt_live(unsigned int n)
{
	struct wt_lat ep = {}, host = {};
	unsigned int i;

	for (i = 0; i < n; i++) {
		u32 v = ++wt.seq;

		/* EP -> host: a write through the long-lived mapping */
		writel(v, wt.win + WT_LIVE_EP);
		wt_cross(&ep, wt_seen_host, WT_LIVE_EP, v);

		/* host -> EP: a host store, read through the mapping */
		WRITE_ONCE(*wt_host(WT_LIVE_HOST), v);
		wt_cross(&host, wt_seen_win, WT_LIVE_HOST, v);

		/* Spread the values over time */
		usleep_range(1000, 3000);
	}
	wt_report("live_n %u\n", n);
	wt_lat_report("ep", &ep, n);
	wt_lat_report("host", &host, n);
}

/*
 * The lost wake-up pair, one thread, fixed interleaving. EP: post work
 * (flag through the window), then look whether the host armed its wait
 * (BAR0, local memory). Host, after two more window worker passes (when
 * a write without posted delay has certainly crossed): arm (store through
 * BAR0), then look for work (flag in host memory). With the stores visible
 * at once, at least one side sees the other's store; both stale is the
 * lost wake-up. Neither side flushes with a read.
 */
static void wt_dekker(unsigned int n)
{
	unsigned int i, lost = 0, unsettled = 0;

	for (i = 0; i < n; i++) {
		u32 v = ++wt.seq;
		u32 armed, flag;
		u64 p0;

		writel(v, wt.win + WT_FLAG);
		armed = READ_ONCE(*wt_bar_local(WT_ARMED));
		p0 = pci_epc_loop_win_passes(wt.epc);

		if (!wt_wait_passes(p0, 2))
			unsettled++;

		iowrite32(v, wt.host_bar + WT_ARMED);
		flag = READ_ONCE(*wt_host(WT_FLAG));

		if (armed != v && flag != v)
			lost++;
		/* Independent trials: let the flag land before the next */
		if (wt_wait_host(wt_host(WT_FLAG), v, WT_SETTLE_LIMIT_NS) < 0)
			unsettled++;
	}
	wt_report("dekker_trials %u\n", n);
	wt_report("dekker_lost %u\ndekker_unsettled %u\n", lost, unsettled);
}

/*
 * Completion data through the window, then an MSI; the handler reads the
 * data in host memory. Stale data is the interrupt overtaking the write.
 */
static void wt_msi(unsigned int n)
{
	unsigned int i, stale = 0, lost = 0, unsettled = 0;
	int ret;

	for (i = 0; i < n; i++) {
		u32 v = ++wt.seq;

		reinit_completion(&wt.irq_done);
		writel(v, wt.win + WT_DATA);
		ret = pci_epc_raise_irq(wt.epc, 0, 0, FL_EPC_IRQ_MSI, 1);
		if (ret ||
		    !wait_for_completion_timeout(&wt.irq_done,
						 msecs_to_jiffies(1000))) {
			lost++;
			continue;
		}
		if (READ_ONCE(wt.irq_seen) != v)
			stale++;
		if (wt_wait_host(wt_host(WT_DATA), v, WT_SETTLE_LIMIT_NS) < 0)
			unsettled++;
	}
	wt_report("msi_trials %u\nmsi_stale %u\n", n, stale);
	wt_report("msi_lost %u\nmsi_unsettled %u\n", lost, unsettled);
}

/*
 * unmap_addr is a flush point: a write through a mapping is visible in
 * host memory when unmap returns, whatever posted_ns says.
 */
static void wt_unmap(unsigned int n)
{
	unsigned int i, stale = 0, failed = 0;
	int ret;

	for (i = 0; i < n; i++) {
		u32 v = ++wt.seq;

		ret = pci_epc_map_addr(wt.epc, 0, 0, wt.win2_phys,
				       virt_to_phys(wt.host_page) + WT_UNMAP,
				       WT_UNMAP_SIZE);
		if (ret) {
			failed++;
			continue;
		}
		writel(v, wt.win2);
		pci_epc_unmap_addr(wt.epc, 0, 0, wt.win2_phys);
		if (READ_ONCE(*wt_host(WT_UNMAP)) != v)
			stale++;
	}
	wt_report("unmap_trials %u\nunmap_stale %u\nunmap_failed %u\n", n,
		  stale, failed);
}

/* How long the order test samples the host copy after its stores */
#define WT_ORDER_SAMPLE_NS	(2000 * NSEC_PER_MSEC)

/*
 * A run of stores to one word, as a producer's index makes them. The host
 * side must see them in program order, whatever it skips: a sample older
 * than an earlier one is an index stepping back (what 80-torn-stores saw as
 * "cq_prod past the ring" when the lab's watch published the newest store
 * ahead of older logged ones).
 */
static void wt_order(unsigned int n)
{
	u32 prev = READ_ONCE(*wt_host(WT_ORDER)), last = wt.seq + n, v;
	unsigned int i, back = 0, samples = 0, distinct = 0;
	u64 t0;

	/* wt.seq only grows: every value the word ever held is below this run's */
	for (i = 0; i < n; i++)
		writel(++wt.seq, wt.win + WT_ORDER);
	t0 = ktime_get_ns();
	while (ktime_get_ns() - t0 < WT_ORDER_SAMPLE_NS) {
		v = READ_ONCE(*wt_host(WT_ORDER));
		samples++;
		if (v != prev) {
			distinct++;
			back += v < prev;
			prev = v;
		}
		usleep_range(10, 20);
	}
	wt_report("order_n %u\norder_samples %u\norder_distinct %u\n", n, samples,
		  distinct);
	wt_report("order_back %u\norder_last %u\n", back,
		  READ_ONCE(*wt_host(WT_ORDER)) == last);
}

static ssize_t wt_cmd_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[48] = {};
	unsigned int n;
	int ret = 0;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;

	mutex_lock(&wt.lock);
	wt.result[0] = '\0';
	if (sysfs_streq(buf, "release") && wt.mapped) {
		pci_epc_unmap_addr(wt.epc, 0, 0, wt.win_phys);
		wt.mapped = false;
	} else if (!wt.mapped || !wt.pdev) {
		ret = -ENOLINK;
	} else if (sscanf(buf, "live %u", &n) == 1 && n <= 10000) {
		wt_live(n);
	} else if (sscanf(buf, "dekker %u", &n) == 1 && n <= 10000) {
		wt_dekker(n);
	} else if (sscanf(buf, "msi %u", &n) == 1 && n <= 10000) {
		wt_msi(n);
	} else if (sysfs_streq(buf, "where")) {
		wt_report("order_va %#lx\n", (unsigned long)(wt.win + WT_ORDER));
	} else if (sscanf(buf, "order %u", &n) == 1 && n && n <= 64) {
		wt_order(n);
	} else if (sscanf(buf, "unmap %u", &n) == 1 && n <= 10000) {
		wt_unmap(n);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&wt.lock);
	return ret ? ret : count;
}

static const struct file_operations wt_cmd_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= wt_cmd_write,
};

static int wt_result_show(struct seq_file *s, void *unused)
{
	mutex_lock(&wt.lock);
	seq_puts(s, wt.result);
	mutex_unlock(&wt.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(wt_result);

/* ---- endpoint side setup ---- */

static int wt_ep_setup(void)
{
	struct pci_epf_header hdr = {
		.vendorid = WT_VENDOR,
		.deviceid = WT_DEVICE,
		.baseclass_code = PCI_BASE_CLASS_SYSTEM,
		.subclass_code = 0x80,
		.interrupt_pin = PCI_INTERRUPT_INTA,
	};
	struct device *parent = wt.epc->dev.parent;
	dma_addr_t phys;
	int ret;

	ret = pci_epc_write_header(wt.epc, 0, 0, &hdr);
	if (ret)
		return ret;
	/* BAR memory as pci_epf_alloc_space() gets it: the EPC's parent */
	wt.bar.addr = dma_alloc_coherent(parent, WT_SIZE, &phys, GFP_KERNEL);
	if (!wt.bar.addr)
		return -ENOMEM;
	wt.bar.phys_addr = phys;
	wt.bar.size = WT_SIZE;
	wt.bar.barno = BAR_0;
	wt.bar.flags = PCI_BASE_ADDRESS_MEM_TYPE_32;
	ret = pci_epc_set_bar(wt.epc, 0, 0, &wt.bar);
	if (ret)
		goto err_free_bar;
	ret = pci_epc_set_msi(wt.epc, 0, 0, 1);
	if (ret)
		goto err_clear_bar;
	wt.win = pci_epc_mem_alloc_addr(wt.epc, &wt.win_phys, WT_SIZE);
	if (!wt.win) {
		ret = -ENOMEM;
		goto err_clear_bar;
	}
	wt.win2 = pci_epc_mem_alloc_addr(wt.epc, &wt.win2_phys, WT_SIZE);
	if (!wt.win2) {
		ret = -ENOMEM;
		goto err_free_win;
	}
	return 0;

err_free_win:
	pci_epc_mem_free_addr(wt.epc, wt.win_phys, wt.win, WT_SIZE);
err_clear_bar:
	pci_epc_clear_bar(wt.epc, 0, 0, &wt.bar);
err_free_bar:
	dma_free_coherent(parent, WT_SIZE, wt.bar.addr, wt.bar.phys_addr);
	return ret;
}

static void wt_ep_teardown(void)
{
	pci_epc_mem_free_addr(wt.epc, wt.win2_phys, wt.win2, WT_SIZE);
	pci_epc_mem_free_addr(wt.epc, wt.win_phys, wt.win, WT_SIZE);
	pci_epc_clear_bar(wt.epc, 0, 0, &wt.bar);
	dma_free_coherent(wt.epc->dev.parent, WT_SIZE, wt.bar.addr,
			  wt.bar.phys_addr);
}

static int __init wt_init(void)
{
	int ret;

	mutex_init(&wt.lock);
	init_completion(&wt.probed);
	init_completion(&wt.irq_done);

	wt.host_page = (void *)get_zeroed_page(GFP_KERNEL);
	if (!wt.host_page)
		return -ENOMEM;
	wt.epc = pci_epc_get(epc_name);
	if (IS_ERR(wt.epc)) {
		ret = PTR_ERR(wt.epc);
		pr_err("no endpoint controller %s: %d\n", epc_name, ret);
		goto err_free_page;
	}
	ret = wt_ep_setup();
	if (ret)
		goto err_put_epc;
	ret = pci_register_driver(&wt_pci_driver);
	if (ret)
		goto err_ep_teardown;
	ret = pci_epc_start(wt.epc);
	if (ret)
		goto err_unregister;
	if (!wait_for_completion_timeout(&wt.probed, 30 * HZ)) {
		pr_err("host side did not probe\n");
		ret = -ETIMEDOUT;
		goto err_stop;
	}
	/* One long-lived mapping of the host page (no IOMMU: PCI == phys) */
	ret = pci_epc_map_addr(wt.epc, 0, 0, wt.win_phys,
			       virt_to_phys(wt.host_page), WT_SIZE);
	if (ret)
		goto err_stop;
	wt.mapped = true;

	wt.dbg = debugfs_create_dir("loop-wintest", NULL);
	debugfs_create_file("cmd", 0200, wt.dbg, NULL, &wt_cmd_fops);
	debugfs_create_file("result", 0400, wt.dbg, NULL, &wt_result_fops);
	return 0;

err_stop:
	pci_epc_stop(wt.epc);
err_unregister:
	pci_unregister_driver(&wt_pci_driver);
err_ep_teardown:
	wt_ep_teardown();
err_put_epc:
	pci_epc_put(wt.epc);
err_free_page:
	free_page((unsigned long)wt.host_page);
	return ret;
}
module_init(wt_init);

static void __exit wt_exit(void)
{
	/* No command runs after this */
	debugfs_remove_recursive(wt.dbg);
	if (wt.mapped)
		pci_epc_unmap_addr(wt.epc, 0, 0, wt.win_phys);
	/* Host side first: nothing touches BAR0 or the IRQ afterwards */
	pci_unregister_driver(&wt_pci_driver);
	pci_epc_stop(wt.epc);
	wt_ep_teardown();
	pci_epc_put(wt.epc);
	free_page((unsigned long)wt.host_page);
}
module_exit(wt_exit);

MODULE_DESCRIPTION("pci-epc-loop outbound window hazards: both sides of the link");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
