// SPDX-License-Identifier: GPL-2.0
/*
 * loop-dmatest: an endpoint function's DMA user on pci-epc-loop's dmaengine
 * channels, for tests/vm/25-epc-loop-dma.sh and make bench's reference (the
 * lab's DMA engine with no framelink code in the loop, tests/bench/bench-lib.sh).
 *
 * The "host" buffers are ordinary pages of System RAM (the loop accepts
 * System RAM as PCI addresses), the local buffers are pages mapped for the
 * loop's platform device. Driven through debugfs:
 *
 * <debugfs>/loop-dmatest/cmd, one command per write:
 *   stream DIR SIZE COUNT CHANS  DIR read, write or both: COUNT transfers
 *				  of SIZE bytes queued on each of CHANS
 *				  channels per direction, issued at once;
 *				  blocks until all callbacks ran (bounded)
 *   setup DIR SIZE N		  one channel, N descriptors of SIZE bytes,
 *				  each to its own buffer, submitted, not issued
 *   issue | terminate | sync | pause | resume
 *				  dmaengine calls on that channel
 *   release			  terminate_sync, release the channel, free
 *   prepnoconf DIR SIZE	  a fresh channel: prep without slave config
 *
 * <debugfs>/loop-dmatest/result: the last stream per direction
 * ("read bytes B ns T mbps M errors E callbacks C") and, per scenario
 * descriptor, "desc I cb N result R residue X status S landed L" (L:
 * bytes of the destination that already hold the source pattern), plus the
 * return codes of the last calls.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define LDT_MAX_CHANS		8
#define LDT_MAX_DESCS		8
#define LDT_MAX_SIZE		SZ_4M
#define LDT_MAX_COUNT		4096
#define LDT_STREAM_TIMEOUT_S	300

/**
 * struct ldt_buf - a host buffer and a local buffer of one transfer
 * @host: host memory (System RAM, addressed by its physical address)
 * @local: local memory
 * @local_dma: @local mapped for the loop's device
 * @size: bytes in each
 */
struct ldt_buf {
	void *host;
	void *local;
	dma_addr_t local_dma;
	size_t size;
};

/**
 * struct ldt_chan - one channel of a stream
 * @chan: the dmaengine channel
 * @dir: its direction
 * @buf: its buffers
 */
struct ldt_chan {
	struct dma_chan *chan;
	enum dma_transfer_direction dir;
	struct ldt_buf buf;
};

/**
 * struct ldt_dir_res - one direction of the last stream
 * @bytes: bytes moved
 * @ns: from issue to the last callback
 * @errors: callbacks with a result other than DMA_TRANS_NOERROR
 * @callbacks: callbacks seen
 */
struct ldt_dir_res {
	u64 bytes;
	u64 ns;
	u64 errors;
	u64 callbacks;
};

/**
 * struct ldt_sdesc - one descriptor of the scenario channel
 * @buf: its buffers
 * @cookie: its cookie
 * @cb: callbacks seen
 * @result: last callback's result
 * @residue: last callback's residue
 */
struct ldt_sdesc {
	struct ldt_buf buf;
	dma_cookie_t cookie;
	int cb;
	int result;
	u32 residue;
};

/**
 * struct ldt - the module's state
 * @lock: serialises commands; protects everything but the callback data
 * @cb_lock: protects the stream's callback data and the @sdesc callback
 *	     fields (callbacks run in softirq context)
 * @done: all stream callbacks arrived
 * @pending: stream callbacks still expected (under @cb_lock)
 * @last_cb: per direction: time of the last stream callback (under @cb_lock)
 * @res: per direction: last stream result (0 read, 1 write)
 * @schan: the scenario channel
 * @sdir: its direction
 * @nsdesc: descriptors set up on it
 * @sdesc: its descriptors
 * @last_rc: return codes of the last terminate, pause, resume
 * @sync_ms: duration of the last sync
 * @prep_null: the last prepnoconf got NULL from prep
 */
struct ldt {
	struct mutex lock; /* commands, stream and scenario state */
	spinlock_t cb_lock; /* callback data */
	struct completion done;
	unsigned int pending;
	u64 last_cb[2];
	struct ldt_dir_res res[2];
	struct dma_chan *schan;
	enum dma_transfer_direction sdir;
	unsigned int nsdesc;
	struct ldt_sdesc sdesc[LDT_MAX_DESCS];
	int last_rc[3];
	u64 sync_ms;
	int prep_null;
};

static struct ldt ldt;
static struct dentry *ldt_dir;

static unsigned int ldt_dir_idx(enum dma_transfer_direction dir)
{
	return dir == DMA_DEV_TO_MEM ? 0 : 1;
}

static bool ldt_filter(struct dma_chan *chan, void *param)
{
	enum dma_transfer_direction dir = *(enum dma_transfer_direction *)param;
	struct device *dev = chan->device->dev;
	struct dma_slave_caps caps;

	if (!dev->driver || strcmp(dev->driver->name, "pci-epc-loop"))
		return false;
	if (dma_get_slave_caps(chan, &caps))
		return false;
	return caps.directions & BIT(dir);
}

static struct dma_chan *ldt_request(enum dma_transfer_direction dir)
{
	dma_cap_mask_t mask;

	dma_cap_zero(mask);
	dma_cap_set(DMA_SLAVE, mask);
	return dma_request_channel(mask, ldt_filter, &dir);
}

static void ldt_buf_free(struct dma_chan *chan, struct ldt_buf *b)
{
	if (b->local_dma)
		dma_unmap_single(chan->device->dev, b->local_dma, b->size,
				 DMA_BIDIRECTIONAL);
	if (b->local)
		free_pages_exact(b->local, b->size);
	if (b->host)
		free_pages_exact(b->host, b->size);
	memset(b, 0, sizeof(*b));
}

/* Source filled with @pattern, destination zeroed */
static int ldt_buf_alloc(struct dma_chan *chan, struct ldt_buf *b, size_t size,
			 enum dma_transfer_direction dir, u8 pattern)
{
	struct device *dev = chan->device->dev;

	b->size = size;
	b->host = alloc_pages_exact(size, GFP_KERNEL);
	b->local = alloc_pages_exact(size, GFP_KERNEL);
	if (!b->host || !b->local)
		goto err_free;
	memset(b->host, dir == DMA_DEV_TO_MEM ? pattern : 0, size);
	memset(b->local, dir == DMA_DEV_TO_MEM ? 0 : pattern, size);
	b->local_dma = dma_map_single(dev, b->local, size, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, b->local_dma)) {
		b->local_dma = 0;
		goto err_free;
	}
	return 0;

err_free:
	ldt_buf_free(chan, b);
	return -ENOMEM;
}

static int ldt_config(struct dma_chan *chan, enum dma_transfer_direction dir,
		      struct ldt_buf *b)
{
	struct dma_slave_config cfg = {
		.direction = dir,
		.src_addr_width = DMA_SLAVE_BUSWIDTH_4_BYTES,
		.dst_addr_width = DMA_SLAVE_BUSWIDTH_4_BYTES,
	};

	if (dir == DMA_DEV_TO_MEM)
		cfg.src_addr = virt_to_phys(b->host);
	else
		cfg.dst_addr = virt_to_phys(b->host);
	return dmaengine_slave_config(chan, &cfg);
}

static void ldt_stream_cb(void *param, const struct dmaengine_result *res)
{
	unsigned int d = (uintptr_t)param;
	unsigned long flags;

	spin_lock_irqsave(&ldt.cb_lock, flags);
	ldt.res[d].callbacks++;
	if (res->result != DMA_TRANS_NOERROR)
		ldt.res[d].errors++;
	ldt.last_cb[d] = ktime_get_ns();
	if (!--ldt.pending)
		complete(&ldt.done);
	spin_unlock_irqrestore(&ldt.cb_lock, flags);
}

static int ldt_stream_queue(struct ldt_chan *lc, size_t size,
			    unsigned int count)
{
	struct dma_async_tx_descriptor *tx;
	unsigned int i;
	int ret;

	ret = ldt_config(lc->chan, lc->dir, &lc->buf);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		tx = dmaengine_prep_slave_single(lc->chan, lc->buf.local_dma,
						 size, lc->dir,
						 DMA_PREP_INTERRUPT);
		if (!tx)
			return -ENOMEM;
		tx->callback_result = ldt_stream_cb;
		tx->callback_param = (void *)(uintptr_t)ldt_dir_idx(lc->dir);
		ret = dma_submit_error(dmaengine_submit(tx));
		if (ret)
			return ret;
	}
	return 0;
}

static void ldt_stream_release(struct ldt_chan *lc, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!lc[i].chan)
			continue;
		dmaengine_terminate_sync(lc[i].chan);
		ldt_buf_free(lc[i].chan, &lc[i].buf);
		dma_release_channel(lc[i].chan);
	}
	kfree(lc);
}

/* Request and fill CHANS channels per direction of the stream */
static int ldt_stream_setup(struct ldt_chan *lc, const bool *use, size_t size,
			    unsigned int count, unsigned int chans)
{
	unsigned int d, i, n = 0;
	int ret;

	for (d = 0; d < 2; d++) {
		for (i = 0; use[d] && i < chans; i++, n++) {
			lc[n].dir = d ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
			lc[n].chan = ldt_request(lc[n].dir);
			if (!lc[n].chan)
				return -ENODEV;
			ret = ldt_buf_alloc(lc[n].chan, &lc[n].buf, size,
					    lc[n].dir, 0x5a);
			if (ret)
				return ret;
			ret = ldt_stream_queue(&lc[n], size, count);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int ldt_stream(const char *dirs, size_t size, unsigned int count,
		      unsigned int chans)
{
	bool use[2] = { strcmp(dirs, "write"), strcmp(dirs, "read") };
	unsigned int d, i, n = chans * (use[0] + use[1]);
	struct ldt_chan *lc;
	u64 t0[2] = {};
	long left;
	int ret;

	if (!use[0] && !use[1])
		return -EINVAL;
	if ((strcmp(dirs, "both") && use[0] && use[1]) || !chans ||
	    chans > LDT_MAX_CHANS || !count || count > LDT_MAX_COUNT ||
	    !size || size > LDT_MAX_SIZE)
		return -EINVAL;

	lc = kcalloc(n, sizeof(*lc), GFP_KERNEL);
	if (!lc)
		return -ENOMEM;

	spin_lock_irq(&ldt.cb_lock);
	memset(ldt.res, 0, sizeof(ldt.res));
	ldt.pending = n * count;
	spin_unlock_irq(&ldt.cb_lock);
	reinit_completion(&ldt.done);

	ret = ldt_stream_setup(lc, use, size, count, chans);
	if (ret)
		goto out_release;

	for (i = 0; i < n; i++) {
		d = ldt_dir_idx(lc[i].dir);
		if (!t0[d])
			t0[d] = ktime_get_ns();
		dma_async_issue_pending(lc[i].chan);
	}

	left = wait_for_completion_timeout(&ldt.done,
					   LDT_STREAM_TIMEOUT_S * HZ);
	ret = left ? 0 : -ETIMEDOUT;

	spin_lock_irq(&ldt.cb_lock);
	for (d = 0; d < 2; d++) {
		if (!use[d])
			continue;
		ldt.res[d].bytes = (u64)size * count * chans;
		ldt.res[d].ns = ldt.last_cb[d] > t0[d] ?
				ldt.last_cb[d] - t0[d] : 0;
	}
	spin_unlock_irq(&ldt.cb_lock);

out_release:
	ldt_stream_release(lc, n);
	return ret;
}

static void ldt_scenario_cb(void *param, const struct dmaengine_result *res)
{
	struct ldt_sdesc *sd = param;
	unsigned long flags;

	spin_lock_irqsave(&ldt.cb_lock, flags);
	sd->cb++;
	sd->result = res->result;
	sd->residue = res->residue;
	spin_unlock_irqrestore(&ldt.cb_lock, flags);
}

static int ldt_scenario_release(void)
{
	unsigned int i;

	if (!ldt.schan)
		return 0;
	dmaengine_terminate_sync(ldt.schan);
	for (i = 0; i < ldt.nsdesc; i++)
		ldt_buf_free(ldt.schan, &ldt.sdesc[i].buf);
	dma_release_channel(ldt.schan);
	ldt.schan = NULL;
	ldt.nsdesc = 0;
	return 0;
}

static int ldt_scenario_setup(const char *dirs, size_t size, unsigned int n)
{
	struct dma_async_tx_descriptor *tx;
	struct ldt_sdesc *sd;
	unsigned int i;
	int ret;

	if (!n || n > LDT_MAX_DESCS || !size || size > LDT_MAX_SIZE)
		return -EINVAL;
	ldt_scenario_release();
	ldt.sdir = strcmp(dirs, "read") ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
	ldt.schan = ldt_request(ldt.sdir);
	if (!ldt.schan)
		return -ENODEV;
	memset(ldt.sdesc, 0, sizeof(ldt.sdesc));

	for (i = 0; i < n; i++) {
		sd = &ldt.sdesc[i];
		ret = ldt_buf_alloc(ldt.schan, &sd->buf, size, ldt.sdir, i + 1);
		if (ret)
			return ret;
		ldt.nsdesc = i + 1;
		/* dw-edma takes the remote address from the config at prep */
		ret = ldt_config(ldt.schan, ldt.sdir, &sd->buf);
		if (ret)
			return ret;
		tx = dmaengine_prep_slave_single(ldt.schan, sd->buf.local_dma,
						 size, ldt.sdir,
						 DMA_PREP_INTERRUPT);
		if (!tx)
			return -ENOMEM;
		tx->callback_result = ldt_scenario_cb;
		tx->callback_param = sd;
		sd->cookie = dmaengine_submit(tx);
		ret = dma_submit_error(sd->cookie);
		if (ret)
			return ret;
	}
	return 0;
}

static int ldt_prep_noconf(const char *dirs, size_t size)
{
	enum dma_transfer_direction dir = strcmp(dirs, "read") ?
					  DMA_MEM_TO_DEV : DMA_DEV_TO_MEM;
	struct dma_async_tx_descriptor *tx;
	struct dma_chan *chan;
	struct ldt_buf b = {};
	int ret;

	chan = ldt_request(dir);
	if (!chan)
		return -ENODEV;
	ret = ldt_buf_alloc(chan, &b, size, dir, 0x33);
	if (ret)
		goto out_release;
	tx = dmaengine_prep_slave_single(chan, b.local_dma, size, dir, 0);
	ldt.prep_null = !tx;
	/* Submitted, never issued: terminate_sync frees it */
	if (tx)
		dmaengine_submit(tx);
	dmaengine_terminate_sync(chan);
	ldt_buf_free(chan, &b);
out_release:
	dma_release_channel(chan);
	return ret;
}

static int ldt_scenario_cmd(const char *op)
{
	u64 t0;

	if (!ldt.schan)
		return -ENODEV;
	if (!strcmp(op, "issue")) {
		dma_async_issue_pending(ldt.schan);
	} else if (!strcmp(op, "terminate")) {
		ldt.last_rc[0] = dmaengine_terminate_async(ldt.schan);
	} else if (!strcmp(op, "pause")) {
		ldt.last_rc[1] = dmaengine_pause(ldt.schan);
	} else if (!strcmp(op, "resume")) {
		ldt.last_rc[2] = dmaengine_resume(ldt.schan);
	} else if (!strcmp(op, "sync")) {
		t0 = ktime_get_ns();
		dmaengine_synchronize(ldt.schan);
		ldt.sync_ms = div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC);
	} else {
		return -EINVAL;
	}
	return 0;
}

static ssize_t ldt_cmd_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	unsigned int a, b, c;
	char buf[64] = {};
	char op[16], dirs[8];
	int n, ret;

	if (copy_from_user(buf, ubuf, min(count, sizeof(buf) - 1)))
		return -EFAULT;
	n = sscanf(buf, "%15s %7s %u %u %u", op, dirs, &a, &b, &c);
	if (n < 1)
		return -EINVAL;

	mutex_lock(&ldt.lock);
	if (!strcmp(op, "stream") && n == 5)
		ret = ldt_stream(dirs, a, b, c);
	else if (!strcmp(op, "setup") && n == 4)
		ret = ldt_scenario_setup(dirs, a, b);
	else if (!strcmp(op, "prepnoconf") && n == 3)
		ret = ldt_prep_noconf(dirs, a);
	else if (!strcmp(op, "release") && n == 1)
		ret = ldt_scenario_release();
	else if (n == 1)
		ret = ldt_scenario_cmd(op);
	else
		ret = -EINVAL;
	mutex_unlock(&ldt.lock);
	return ret ? ret : count;
}

static const struct file_operations ldt_cmd_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= ldt_cmd_write,
};

/* Bytes of the destination that already hold the pattern, from the start */
static size_t ldt_landed(const struct ldt_buf *b, enum dma_transfer_direction dir,
			 u8 pattern)
{
	const void *dst = dir == DMA_DEV_TO_MEM ? b->local : b->host;
	const void *bad = memchr_inv(dst, pattern, b->size);

	return bad ? bad - dst : b->size;
}

static int ldt_result_show(struct seq_file *s, void *unused)
{
	static const char * const name[] = { "read", "write" };
	struct dma_tx_state st;
	struct ldt_dir_res r;
	enum dma_status status;
	struct ldt_sdesc sd;
	unsigned int i;
	u64 kbps;

	mutex_lock(&ldt.lock);
	for (i = 0; i < 2; i++) {
		spin_lock_irq(&ldt.cb_lock);
		r = ldt.res[i];
		spin_unlock_irq(&ldt.cb_lock);
		/* MB/s with three decimals: bytes per millisecond / 1000 */
		kbps = r.ns ? div64_u64(r.bytes * NSEC_PER_MSEC, r.ns) : 0;
		seq_printf(s, "%s bytes %llu ns %llu mbps %llu.%03llu errors %llu callbacks %llu\n",
			   name[i], r.bytes, r.ns, kbps / 1000, kbps % 1000,
			   r.errors, r.callbacks);
	}
	for (i = 0; ldt.schan && i < ldt.nsdesc; i++) {
		spin_lock_irq(&ldt.cb_lock);
		sd = ldt.sdesc[i];
		spin_unlock_irq(&ldt.cb_lock);
		status = dmaengine_tx_status(ldt.schan, sd.cookie, &st);
		seq_printf(s, "desc %u cb %d result %d residue %u status %d txresidue %u landed %zu\n",
			   i, sd.cb, sd.result, sd.residue, status, st.residue,
			   ldt_landed(&sd.buf, ldt.sdir, i + 1));
	}
	seq_printf(s, "terminate_rc %d\npause_rc %d\nresume_rc %d\nsync_ms %llu\nprep_null %d\n",
		   ldt.last_rc[0], ldt.last_rc[1], ldt.last_rc[2], ldt.sync_ms,
		   ldt.prep_null);
	mutex_unlock(&ldt.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ldt_result);

static int __init ldt_init(void)
{
	mutex_init(&ldt.lock);
	spin_lock_init(&ldt.cb_lock);
	init_completion(&ldt.done);
	ldt.prep_null = -1;
	ldt_dir = debugfs_create_dir("loop-dmatest", NULL);
	debugfs_create_file("cmd", 0200, ldt_dir, NULL, &ldt_cmd_fops);
	debugfs_create_file("result", 0400, ldt_dir, NULL, &ldt_result_fops);
	return 0;
}
module_init(ldt_init);

static void __exit ldt_exit(void)
{
	debugfs_remove_recursive(ldt_dir);
	mutex_lock(&ldt.lock);
	ldt_scenario_release();
	mutex_unlock(&ldt.lock);
}
module_exit(ldt_exit);

MODULE_DESCRIPTION("DMA user of pci-epc-loop's dmaengine channels, for tests");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
