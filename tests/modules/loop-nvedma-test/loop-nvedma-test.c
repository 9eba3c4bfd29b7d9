// SPDX-License-Identifier: GPL-2.0
/*
 * loop-nvedma-test: drives the eDMA library interface of pci-epc-loop
 * (include/framelink/tegra-pcie-edma.h, profile=jetpack) the way a JetPack
 * endpoint function does: zeroed init info with the controller's device
 * node and no remote, channels configured by type and ring size, submits of
 * descriptor arrays with a callback, stop then deinit at teardown.
 *
 * The "host memory" is a buffer of this module in System RAM, addressed by
 * its physical address as a PCI address (pci-epc-loop accepts System RAM);
 * the endpoint's local memory is another such buffer. No host-side driver
 * is needed.
 *
 * <debugfs>/loop-nvedma-test/
 *   cmd      write one command:
 *            init MODE NDESC WRMASK RDMASK [nonp]  MODE sync|async
 *            xfer write|read CH NENTS SIZE OFF [same]
 *                                  OFF: byte offset in both buffers; same:
 *                                  every descriptor on the same SIZE bytes
 *            stop | deinit | reset                  reset forgets records
 *            slowcb MS                              each later callback sleeps
 *                                  MS ms (a slow client: 0 ends it)
 *            snap OFF LEN                           hash of host bytes
 *   result   outcome of the last command
 *   records  one line per submit: id, submit status, callback status
 *            (-1: none yet), content verdict (moved / untouched / partial)
 *   summary  callback counters; cb_entered counts callbacks begun, so a
 *            test can wait until a slow one is running
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <framelink/tegra-pcie-edma.h>

#define NT_MAX_RECORDS	256
#define NT_HOST_FILL	0xa5
#define NT_LOCAL_FILL	0x5a

static unsigned int buf_size = SZ_4M;
module_param(buf_size, uint, 0444);
MODULE_PARM_DESC(buf_size, "bytes of host and of local memory (default 4 MiB)");

enum nt_verdict { NT_PENDING, NT_MOVED, NT_UNTOUCHED, NT_PARTIAL };

static const char * const nt_verdict_name[] = {
	"pending", "moved", "untouched", "partial",
};

/**
 * struct nt_record - one submit
 * @id: index in nt.rec
 * @type: direction
 * @ch: channel
 * @nents: descriptors
 * @size: bytes per descriptor
 * @off: byte offset in both buffers
 * @same: all descriptors address the same @size bytes
 * @st: submit status, -1 while the submit runs
 * @cb: callback status, -1 before the callback
 * @verdict: destination contents when the transfer ended
 */
struct nt_record {
	unsigned int id;
	edma_xfer_type_t type;
	u32 ch;
	u32 nents;
	u32 size;
	u32 off;
	bool same;
	atomic_t st;
	atomic_t cb;
	atomic_t verdict;
};

/**
 * struct nt_state - the test module
 * @lock: protects @cookie, @nrec, @result and the command sequence;
 *	  not held across a submit (a SYNC submit may wait for a stop)
 * @cookie: the library instance
 * @sync: channels were configured SYNC
 * @host: "host" memory
 * @local: "local" (endpoint) memory
 * @rec: submits so far
 * @nrec: used entries of @rec
 * @cbs: callbacks by status
 * @cb_entered: callbacks begun (a slow one is running once it counts)
 * @slowcb_ms: each callback sleeps this long first (slowcb: a slow client)
 * @result: outcome of the last command
 * @dir: debugfs directory
 */
struct nt_state {
	struct mutex lock; /* cookie, nrec, result */
	void *cookie;
	bool sync;
	void *host;
	void *local;
	struct nt_record rec[NT_MAX_RECORDS];
	unsigned int nrec;
	atomic_t cbs[EDMA_XFER_DEINIT + 1];
	atomic_t cb_entered;
	unsigned int slowcb_ms;
	char result[64];
	struct dentry *dir;
};

static struct nt_state nt;

static u8 nt_pattern(unsigned int id, size_t i)
{
	return (id * 31 + i + (i >> 8)) & 0xff;
}

static size_t nt_len(const struct nt_record *r)
{
	return r->same ? r->size : (size_t)r->nents * r->size;
}

static enum nt_verdict nt_judge(struct nt_record *r)
{
	size_t len = nt_len(r), i, same = 0, fill_n = 0;
	bool wr = r->type == EDMA_XFER_WRITE;
	u8 *dst = (wr ? nt.host : nt.local) + r->off;
	u8 fill = wr ? NT_HOST_FILL : NT_LOCAL_FILL;

	for (i = 0; i < len; i++) {
		same += dst[i] == nt_pattern(r->id, i);
		fill_n += dst[i] == fill;
	}
	if (same == len)
		return NT_MOVED;
	if (fill_n == len)
		return NT_UNTOUCHED;
	return NT_PARTIAL;
}

static void nt_complete(void *priv, edma_xfer_status_t status,
			struct tegra_pcie_edma_desc *desc)
{
	struct nt_record *r = priv;

	atomic_inc(&nt.cb_entered);
	if (READ_ONCE(nt.slowcb_ms))
		msleep(READ_ONCE(nt.slowcb_ms));
	if (desc)
		pr_err("record %u: callback with a descriptor\n", r->id);
	atomic_set(&r->verdict, nt_judge(r));
	atomic_set(&r->cb, status);
	if ((unsigned int)status <= EDMA_XFER_DEINIT)
		atomic_inc(&nt.cbs[status]);
}

static int nt_init(const char *mode, u32 ndesc, u32 wrmask, u32 rdmask,
		   bool nonp)
{
	struct tegra_pcie_edma_init_info info;
	edma_chan_type_t type;
	struct device_node *np;
	unsigned int i;

	if (!strcmp(mode, "sync"))
		type = EDMA_CHAN_XFER_SYNC;
	else if (!strcmp(mode, "async"))
		type = EDMA_CHAN_XFER_ASYNC;
	else
		return -EINVAL;
	if (nt.cookie)
		return -EBUSY;

	/*
	 * The controller's node, as an EPF passes epc->dev.parent->of_node:
	 * link 0's, the one a plain load of the loop brings up (the DT may
	 * describe more links, "framelink,link" 1..3, that are not probed).
	 */
	for_each_compatible_node(np, NULL, "framelink,pci-epc-loop") {
		u32 link = 0;

		of_property_read_u32(np, "framelink,link", &link);
		if (!link)
			break;
	}
	if (!np)
		return -ENODEV;

	memset(&info, 0, sizeof(info));
	info.np = nonp ? NULL : np;
	info.edma_remote = NULL;
	for (i = 0; i < DMA_WR_CHNL_NUM; i++) {
		info.tx[i].ch_type = type;
		info.tx[i].num_descriptors = wrmask & BIT(i) ? ndesc : 0;
	}
	for (i = 0; i < DMA_RD_CHNL_NUM; i++) {
		info.rx[i].ch_type = type;
		info.rx[i].num_descriptors = rdmask & BIT(i) ? ndesc : 0;
	}
	nt.cookie = tegra_pcie_edma_initialize(&info);
	nt.sync = type == EDMA_CHAN_XFER_SYNC;
	of_node_put(np);
	snprintf(nt.result, sizeof(nt.result), "init %s\n",
		 nt.cookie ? "ok" : "null");
	return 0;
}

static void nt_fill(struct nt_record *r)
{
	size_t len = nt_len(r), i;
	bool wr = r->type == EDMA_XFER_WRITE;
	u8 *src = (wr ? nt.local : nt.host) + r->off;
	u8 *dst = (wr ? nt.host : nt.local) + r->off;

	for (i = 0; i < len; i++)
		src[i] = nt_pattern(r->id, i);
	memset(dst, wr ? NT_HOST_FILL : NT_LOCAL_FILL, len);
}

static struct nt_record *nt_new_record(const char *dir, u32 ch, u32 nents,
				       u32 size, u32 off, bool same)
{
	struct nt_record *r;

	if (nt.nrec == NT_MAX_RECORDS || !size ||
	    (u64)(same ? 1 : nents) * size + off > buf_size)
		return NULL;
	r = &nt.rec[nt.nrec];
	if (!strcmp(dir, "write"))
		r->type = EDMA_XFER_WRITE;
	else if (!strcmp(dir, "read"))
		r->type = EDMA_XFER_READ;
	else
		return NULL;
	r->id = nt.nrec++;
	r->ch = ch;
	r->nents = nents;
	r->size = size;
	r->off = off;
	r->same = same;
	atomic_set(&r->st, -1);
	atomic_set(&r->cb, -1);
	atomic_set(&r->verdict, NT_PENDING);
	return r;
}

static int nt_xfer(const char *dir, u32 ch, u32 nents, u32 size, u32 off,
		   bool same)
{
	struct tegra_pcie_edma_xfer_info x = {};
	struct tegra_pcie_edma_desc *d;
	phys_addr_t host, local;
	edma_xfer_status_t st;
	struct nt_record *r;
	void *cookie;
	bool sync;
	u32 i;

	mutex_lock(&nt.lock);
	cookie = nt.cookie;
	sync = nt.sync;
	r = cookie ? nt_new_record(dir, ch, nents, size, off, same) : NULL;
	mutex_unlock(&nt.lock);
	if (!r)
		return -EINVAL;

	d = kcalloc(nents, sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	nt_fill(r);
	host = virt_to_phys(nt.host) + off;
	local = virt_to_phys(nt.local) + off;
	for (i = 0; i < nents; i++) {
		u64 step = same ? 0 : (u64)i * size;

		d[i].src = r->type == EDMA_XFER_WRITE ? local + step : host + step;
		d[i].dst = r->type == EDMA_XFER_WRITE ? host + step : local + step;
		d[i].sz = size;
	}
	x.type = r->type;
	x.channel_num = ch;
	x.desc = d;
	x.nents = nents;
	x.complete = nt_complete;
	x.priv = r;

	/* The library copies the descriptors: the array may go at once */
	st = tegra_pcie_edma_submit_xfer(cookie, &x);
	kfree(d);
	atomic_set(&r->st, st);
	/* A SYNC channel has no callback: judge the contents now */
	if (sync && st == EDMA_XFER_SUCCESS)
		atomic_set(&r->verdict, nt_judge(r));

	mutex_lock(&nt.lock);
	snprintf(nt.result, sizeof(nt.result), "st %d id %u\n", st, r->id);
	mutex_unlock(&nt.lock);
	return 0;
}

static u64 nt_hash(u32 off, u32 len)
{
	const u8 *p = nt.host + off;
	u64 h = 1469598103934665603ULL;
	u32 i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static int nt_command(char *buf)
{
	char a[8], b[8] = "";
	u32 v[4];
	int n;

	n = sscanf(buf, "init %7s %u %i %i %7s", a, &v[0], &v[1], &v[2], b);
	if (n >= 4)
		return nt_init(a, v[0], v[1], v[2], n == 5 && !strcmp(b, "nonp"));
	if (sscanf(buf, "xfer %7s %u %u %u %u %7s", a, &v[0], &v[1], &v[2],
		   &v[3], b) >= 5) {
		/* A SYNC submit may wait for a stop from another writer */
		mutex_unlock(&nt.lock);
		n = nt_xfer(a, v[0], v[1], v[2], v[3], !strcmp(b, "same"));
		mutex_lock(&nt.lock);
		return n;
	}
	if (sscanf(buf, "slowcb %u", &v[0]) == 1) {
		if (v[0] > 10000)
			return -EINVAL;
		WRITE_ONCE(nt.slowcb_ms, v[0]);
		return 0;
	}
	if (sscanf(buf, "snap %u %u", &v[0], &v[1]) == 2) {
		if ((u64)v[0] + v[1] > buf_size)
			return -EINVAL;
		snprintf(nt.result, sizeof(nt.result), "hash %016llx\n",
			 nt_hash(v[0], v[1]));
		return 0;
	}
	if (sysfs_streq(buf, "stop")) {
		snprintf(nt.result, sizeof(nt.result), "stop %d\n",
			 tegra_pcie_edma_stop(nt.cookie));
		return 0;
	}
	if (sysfs_streq(buf, "deinit")) {
		tegra_pcie_edma_deinit(nt.cookie);
		nt.cookie = NULL;
		snprintf(nt.result, sizeof(nt.result), "deinit\n");
		return 0;
	}
	if (sysfs_streq(buf, "reset")) {
		if (nt.cookie)
			return -EBUSY;
		nt.nrec = 0;
		for (n = 0; n <= EDMA_XFER_DEINIT; n++)
			atomic_set(&nt.cbs[n], 0);
		atomic_set(&nt.cb_entered, 0);
		return 0;
	}
	return -EINVAL;
}

static ssize_t nt_cmd_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[80] = {};
	int ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;
	mutex_lock(&nt.lock);
	ret = nt_command(buf);
	mutex_unlock(&nt.lock);
	return ret ? ret : count;
}

static const struct file_operations nt_cmd_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= nt_cmd_write,
};

static int nt_result_show(struct seq_file *s, void *unused)
{
	mutex_lock(&nt.lock);
	seq_puts(s, nt.result);
	mutex_unlock(&nt.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nt_result);

static int nt_records_show(struct seq_file *s, void *unused)
{
	unsigned int i, n;

	mutex_lock(&nt.lock);
	n = nt.nrec;
	mutex_unlock(&nt.lock);
	for (i = 0; i < n; i++) {
		struct nt_record *r = &nt.rec[i];

		seq_printf(s, "%u %s ch %u nents %u size %u off %u st %d cb %d %s\n",
			   r->id, r->type == EDMA_XFER_WRITE ? "write" : "read",
			   r->ch, r->nents, r->size, r->off, atomic_read(&r->st),
			   atomic_read(&r->cb),
			   nt_verdict_name[atomic_read(&r->verdict)]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nt_records);

static int nt_summary_show(struct seq_file *s, void *unused)
{
	static const char * const names[] = {
		"success", "fail_inval_inputs", "fail_nomem", "fail_timeout",
		"abort", "deinit",
	};
	unsigned int i, total = 0;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		seq_printf(s, "cb_%s %d\n", names[i], atomic_read(&nt.cbs[i]));
		total += atomic_read(&nt.cbs[i]);
	}
	seq_printf(s, "cb_total %u\n", total);
	seq_printf(s, "cb_entered %d\n", atomic_read(&nt.cb_entered));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nt_summary);

static int __init nt_module_init(void)
{
	mutex_init(&nt.lock);
	buf_size = PAGE_ALIGN(buf_size);
	nt.host = alloc_pages_exact(buf_size, GFP_KERNEL | __GFP_ZERO);
	nt.local = alloc_pages_exact(buf_size, GFP_KERNEL | __GFP_ZERO);
	if (!nt.host || !nt.local)
		goto free_pages;

	nt.dir = debugfs_create_dir("loop-nvedma-test", NULL);
	debugfs_create_file("cmd", 0200, nt.dir, NULL, &nt_cmd_fops);
	debugfs_create_file("result", 0400, nt.dir, NULL, &nt_result_fops);
	debugfs_create_file("records", 0400, nt.dir, NULL, &nt_records_fops);
	debugfs_create_file("summary", 0400, nt.dir, NULL, &nt_summary_fops);
	return 0;

free_pages:
	if (nt.host)
		free_pages_exact(nt.host, buf_size);
	if (nt.local)
		free_pages_exact(nt.local, buf_size);
	return -ENOMEM;
}
module_init(nt_module_init);

static void __exit nt_module_exit(void)
{
	debugfs_remove_recursive(nt.dir);
	/* Teardown as an EPF does it at core deinit: stop, then deinit */
	if (nt.cookie) {
		tegra_pcie_edma_stop(nt.cookie);
		tegra_pcie_edma_deinit(nt.cookie);
	}
	free_pages_exact(nt.host, buf_size);
	free_pages_exact(nt.local, buf_size);
}
module_exit(nt_module_exit);

MODULE_DESCRIPTION("Test of pci-epc-loop's NVIDIA eDMA library interface");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
