// SPDX-License-Identifier: GPL-2.0
/*
 * framelink info, stats, export: what a device reports (FL_IOC_INFO, FL_IOC_STATS) and one
 * slot read through its dma-buf (FL_IOC_EXPORT).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "framelink.h"

static int endpoint_link_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && !(p.revents & POLLERR);
}

/*
 * "crossover: 12288 bytes (measured at enable)"; a measured value past the largest frame or
 * zero says which path every frame takes. The fitted lines are in the endpoint's kernel log.
 */
static void print_crossover(const char *label, u32 bytes, u32 how, const struct fl_info *i)
{
	const char *name = fl_xover_how_name(how);
	const char *all = "";

	if (how == FL_XOVER_MEASURED && bytes > i->buf_size)
		all = ": CPU for every frame";
	else if (how == FL_XOVER_MEASURED && !bytes)
		all = ": DMA for every frame";
	if (name)
		printf("%s%u bytes (%s%s)\n", label, bytes, name, all);
	else
		printf("%s%u bytes\n", label, bytes);
}

static void print_features(const struct fl_info *i)
{
	printf("features:        %#llx%s%s%s%s%s%s%s%s\n", (unsigned long long)i->features,
	       i->features & FL_F_CQ_EVENT ? " cq_event" : "",
	       i->features & FL_F_DMA ? " dma" : "",
	       i->features & FL_F_TIMESTAMPS ? " timestamps" : "",
	       i->features & FL_F_IRQ_TEST ? " irq_test" : "",
	       i->features & FL_F_CQ_BATCH ? " cq_batch" : "",
	       i->features & FL_F_IRQ_PROD ? " irq_prod" : "",
	       i->features & FL_F_IRQ_SEEN ? " irq_seen" : "",
	       i->features & FL_F_INTX_SEQ ? " intx_seq" : "");
}

static void print_link(const struct fl_dev *d)
{
	const struct fl_info *i = &d->info;

	if (i->link_speed)
		printf("link:            %u.%u GT/s x%u\n", i->link_speed / 10, i->link_speed % 10,
		       i->link_width);
	else if (i->role == FL_ROLE_ENDPOINT)
		/* The endpoint's poll() says POLLOUT while the link is up (queues running) */
		printf("link:            %s\n", endpoint_link_up(d->fd) ? "up" :
		       "down (waiting for the root's PERST# deassert and the host driver)");
	else
		printf("link:            unknown\n");
}

int cmd_info(struct opts *o)
{
	struct fl_dev d;
	struct fl_info *i = &d.info;
	u32 rd;

	if (open_dev(&d, o->dev, 0))
		return 1;
	printf("device:          %s\n", o->dev);
	printf("abi:             %u.%u\n", i->abi_version >> 16, i->abi_version & 0xffff);
	printf("role:            %s\n", fl_role_name(i->role));
	print_features(i);
	printf("buffers:         %u x %u bytes at mmap offset %#llx\n", i->nbufs, i->buf_size,
	       (unsigned long long)i->mmap_offset);
	printf("tx_depth:        %u\n", i->tx_depth);
	printf("rx_depth:        %u\n", i->rx_depth);
	if (i->cq_entries)
		printf("cq_entries:      %u\n", i->cq_entries);
	if (i->role == FL_ROLE_ENDPOINT)
		printf("backend:         %s\n", fl_xfer_backend_name(i->xfer_backend));
	printf("dma channels:    %u read, %u write\n", i->dma_rd_channels, i->dma_wr_channels);
	print_crossover("crossover:       ", i->crossover, FL_XOVER_WR(i->crossover_how), i);
	/* rd_crossover 0: "every read by DMA" when crossover_how is set, else an older driver */
	rd = FL_XOVER_RD(i->crossover_how) ? i->rd_crossover : i->rd_crossover ?: i->crossover;
	print_crossover("rd_crossover:    ", rd, FL_XOVER_RD(i->crossover_how), i);
	printf("notify:          %s\n", fl_notify_name(i->notify));
	print_link(&d);
	printf("mps:             %u (supported %u)\n", i->mps, i->mps_supported);
	printf("mrrs:            %u\n", i->mrrs);
	printf("caps:            %#x%s%s\n", i->caps, i->caps & FL_CAP_EXPORT ? " export" : "",
	       i->caps & FL_CAP_IMPORT ? " import" : "");
	if (i->caps & FL_CAP_IMPORT)
		printf("max_imports:     %u\n", i->max_imports);
	fl_dev_close(&d);
	return 0;
}

static void print_stats(const struct fl_stats *s)
{
	const char *name;
	u64 val;
	u32 i;

	for (i = 0; (name = fl_stats_field(s, i, &val)); i++)
		printf("%s:%*s%llu\n", name, (int)(17 - strlen(name)), "",
		       (unsigned long long)val);
}

int cmd_stats(struct opts *o)
{
	struct fl_stats s;
	struct fl_dev d;
	int ret;

	if (open_dev(&d, o->dev, 0))
		return 1;
	ret = fl_dev_stats(&d, &s);
	if (ret)
		fprintf(stderr, "framelink: STATS: %s\n", strerror(-ret));
	else
		print_stats(&s);
	fl_dev_close(&d);
	return ret ? 1 : 0;
}

/* Export one slot as a dma-buf; its CRC read through the dma-buf with DMA_BUF_IOCTL_SYNC */
int cmd_export(struct opts *o)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	struct fl_export x = { .slot = (u32)o->sizes[0], .flags = FL_EXPORT_CLOEXEC };
	struct fl_dev d;
	u32 crc = 0;
	void *p;

	if (open_dev(&d, o->dev, 0))
		return 1;
	if (ioctl(d.fd, FL_IOC_EXPORT, &x)) {
		fprintf(stderr, "framelink: EXPORT slot %u: %s\n", x.slot, strerror(errno));
		fl_dev_close(&d);
		return 1;
	}
	p = mmap(NULL, x.size, PROT_READ, MAP_SHARED, x.fd, 0);
	if (p != MAP_FAILED && !ioctl(x.fd, DMA_BUF_IOCTL_SYNC, &sync)) {
		crc = fl_crc32(0, p, x.size);
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
		ioctl(x.fd, DMA_BUF_IOCTL_SYNC, &sync);
	}
	printf("export: slot %u: dma-buf fd %d, %llu bytes, device mmap offset %llu, crc32 %08x\n",
	       x.slot, x.fd, (unsigned long long)x.size, (unsigned long long)x.offset, crc);
	if (p != MAP_FAILED)
		munmap(p, x.size);
	close(x.fd);
	fl_dev_close(&d);
	return p == MAP_FAILED ? 1 : 0;
}
