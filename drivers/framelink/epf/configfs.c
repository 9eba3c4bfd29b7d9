// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: configfs attributes of a function.
 *
 * /sys/kernel/config/pci_ep/functions/framelink_epf/<fn>/framelink_epf.<N>/
 * (the directory the core adds for .add_cfs, as pci-epf-vntb). Values are
 * copied at bind; changing them while bound is refused with -EBUSY.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>

#include "epf.h"

static const char * const fl_irq_mode_names[] = {
	[FL_EP_IRQ_AUTO] = "auto",
	[FL_EP_IRQ_MSIX] = "msix",
	[FL_EP_IRQ_MSI] = "msi",
	[FL_EP_IRQ_INTX] = "intx",
	[FL_EP_IRQ_NONE] = "none",
};

/* configfs xfer_backend: FL_XFER_* ids, and "auto" for the first backend with channels */
static const char * const fl_xfer_backend_names[] = {
	[FL_EP_XFER_AUTO] = "auto",
	[FL_XFER_CPU] = "cpu",
	[FL_XFER_DMAENGINE] = "dmaengine",
	[FL_XFER_NVEDMA] = "nvidia-edma",
};

/**
 * fl_cfs_defaults() - default attribute values
 * @cfg: the attributes to fill.
 */
void fl_cfs_defaults(struct fl_ep_cfg *cfg)
{
	*cfg = (struct fl_ep_cfg){
		.slots = 8,
		.slot_size = SZ_8M,
		.ring_entries = 64,
		.dma_channels = 2,
		/*
		 * "auto": timed at every enable (xover.c). The numbers are what a
		 * direction uses until then and where it cannot be measured: each
		 * CPU load of host memory is a PCIe round trip, so DMA wins far
		 * earlier for reads than for writes (FL_IOC_INFO reports the value
		 * in use, so apps and the kselftest follow).
		 */
		.crossover = FL_EP_XO_WR_DEFAULT,
		.rd_crossover = FL_EP_XO_RD_DEFAULT,
		.crossover_auto = 1,
		.rd_crossover_auto = 1,
		.cpu_pass_bytes = SZ_1M,
		.poll_min_us = 5,
		.poll_max_us = 1000,
		.irq_mode = FL_EP_IRQ_AUTO,
		.xfer_backend = FL_EP_XFER_AUTO,
	};
}

static struct fl_epf *to_fl_epf(struct config_item *item)
{
	return container_of(to_config_group(item), struct fl_epf, group);
}

/* Check @val for attribute @field; the other fields are the current ones */
static int fl_cfs_valid(const struct fl_ep_cfg *cfg, size_t field, u32 val)
{
	switch (field) {
	case offsetof(struct fl_ep_cfg, slots):
		return val >= 1 && val <= FL_EP_MAX_SLOTS;
	case offsetof(struct fl_ep_cfg, slot_size):
		return val >= PAGE_SIZE && val <= SZ_256M;
	case offsetof(struct fl_ep_cfg, ring_entries):
		return fl_ring_size_ok(val);
	case offsetof(struct fl_ep_cfg, dma_channels):
		return val <= FL_EP_MAX_CHANNELS;
	case offsetof(struct fl_ep_cfg, cpu_pass_bytes):
		return val >= PAGE_SIZE && val <= SZ_256M;
	case offsetof(struct fl_ep_cfg, poll_min_us):
		return val >= 1 && val <= cfg->poll_max_us;
	case offsetof(struct fl_ep_cfg, poll_max_us):
		return val >= cfg->poll_min_us && val <= 1000;
	}
	return false;
}

static ssize_t fl_cfs_show_u32(struct config_item *item, char *page, size_t field)
{
	struct fl_epf *fepf = to_fl_epf(item);
	u32 val;

	mutex_lock(&fepf->cfg_lock);
	val = *(u32 *)((u8 *)&fepf->cfg + field);
	mutex_unlock(&fepf->cfg_lock);
	return sysfs_emit(page, "%u\n", val);
}

static ssize_t fl_cfs_store_u32(struct config_item *item, const char *page, size_t len,
				size_t field)
{
	struct fl_epf *fepf = to_fl_epf(item);
	ssize_t ret = len;
	u32 val;

	if (kstrtou32(page, 0, &val))
		return -EINVAL;
	mutex_lock(&fepf->cfg_lock);
	if (fepf->ep)
		ret = -EBUSY;
	else if (!fl_cfs_valid(&fepf->cfg, field, val))
		ret = -ERANGE;
	else
		*(u32 *)((u8 *)&fepf->cfg + field) = val;
	mutex_unlock(&fepf->cfg_lock);
	return ret;
}

/* Attribute offsets, named so the macro below pastes them */
enum {
	fl_cfg_off_slots = offsetof(struct fl_ep_cfg, slots),
	fl_cfg_off_slot_size = offsetof(struct fl_ep_cfg, slot_size),
	fl_cfg_off_ring_entries = offsetof(struct fl_ep_cfg, ring_entries),
	fl_cfg_off_dma_channels = offsetof(struct fl_ep_cfg, dma_channels),
	fl_cfg_off_cpu_pass_bytes = offsetof(struct fl_ep_cfg, cpu_pass_bytes),
	fl_cfg_off_poll_min_us = offsetof(struct fl_ep_cfg, poll_min_us),
	fl_cfg_off_poll_max_us = offsetof(struct fl_ep_cfg, poll_max_us),
};

#define FL_CFS_U32(_name)							\
static ssize_t fl_cfs_##_name##_show(struct config_item *item, char *page)	\
{										\
	return fl_cfs_show_u32(item, page, fl_cfg_off_##_name);		\
}										\
static ssize_t fl_cfs_##_name##_store(struct config_item *item,		\
				      const char *page, size_t len)		\
{										\
	return fl_cfs_store_u32(item, page, len, fl_cfg_off_##_name);		\
}										\
CONFIGFS_ATTR(fl_cfs_, _name)

FL_CFS_U32(slots);
FL_CFS_U32(slot_size);
FL_CFS_U32(ring_entries);
FL_CFS_U32(dma_channels);

/*
 * crossover and rd_crossover: "auto" (measured at every enable, xover.c) or a
 * byte count, used as it is; anything else is -EINVAL. A separate flag, not a
 * reserved number, says "auto": every u32 stays a valid count (the board
 * acceptance script writes 4294967295 for "CPU always").
 */
static ssize_t fl_cfs_show_xo(struct config_item *item, char *page, size_t field,
			      size_t auto_field)
{
	struct fl_epf *fepf = to_fl_epf(item);
	u32 val, is_auto;

	mutex_lock(&fepf->cfg_lock);
	val = *(u32 *)((u8 *)&fepf->cfg + field);
	is_auto = *(u32 *)((u8 *)&fepf->cfg + auto_field);
	mutex_unlock(&fepf->cfg_lock);
	return is_auto ? sysfs_emit(page, "auto\n") : sysfs_emit(page, "%u\n", val);
}

static ssize_t fl_cfs_store_xo(struct config_item *item, const char *page, size_t len,
			       size_t field, size_t auto_field)
{
	struct fl_epf *fepf = to_fl_epf(item);
	bool is_auto = sysfs_streq(page, "auto");
	ssize_t ret = len;
	u32 val = 0;

	if (!is_auto && kstrtou32(page, 0, &val))
		return -EINVAL;
	mutex_lock(&fepf->cfg_lock);
	if (fepf->ep) {
		ret = -EBUSY;
	} else {
		*(u32 *)((u8 *)&fepf->cfg + auto_field) = is_auto;
		if (!is_auto)
			*(u32 *)((u8 *)&fepf->cfg + field) = val;
	}
	mutex_unlock(&fepf->cfg_lock);
	return ret;
}

static ssize_t fl_cfs_crossover_show(struct config_item *item, char *page)
{
	return fl_cfs_show_xo(item, page, offsetof(struct fl_ep_cfg, crossover),
			      offsetof(struct fl_ep_cfg, crossover_auto));
}

static ssize_t fl_cfs_crossover_store(struct config_item *item, const char *page, size_t len)
{
	return fl_cfs_store_xo(item, page, len, offsetof(struct fl_ep_cfg, crossover),
			       offsetof(struct fl_ep_cfg, crossover_auto));
}
CONFIGFS_ATTR(fl_cfs_, crossover);

static ssize_t fl_cfs_rd_crossover_show(struct config_item *item, char *page)
{
	return fl_cfs_show_xo(item, page, offsetof(struct fl_ep_cfg, rd_crossover),
			      offsetof(struct fl_ep_cfg, rd_crossover_auto));
}

static ssize_t fl_cfs_rd_crossover_store(struct config_item *item, const char *page,
					 size_t len)
{
	return fl_cfs_store_xo(item, page, len, offsetof(struct fl_ep_cfg, rd_crossover),
			       offsetof(struct fl_ep_cfg, rd_crossover_auto));
}
CONFIGFS_ATTR(fl_cfs_, rd_crossover);
FL_CFS_U32(cpu_pass_bytes);
FL_CFS_U32(poll_min_us);
FL_CFS_U32(poll_max_us);

/* A u32 attribute that takes one of @names (its index) */
static ssize_t fl_cfs_show_name(struct config_item *item, char *page, size_t field,
				const char * const *names)
{
	struct fl_epf *fepf = to_fl_epf(item);
	u32 val;

	mutex_lock(&fepf->cfg_lock);
	val = *(u32 *)((u8 *)&fepf->cfg + field);
	mutex_unlock(&fepf->cfg_lock);
	return sysfs_emit(page, "%s\n", names[val]);
}

static ssize_t fl_cfs_store_name(struct config_item *item, const char *page, size_t len,
				 size_t field, const char * const *names, size_t n)
{
	struct fl_epf *fepf = to_fl_epf(item);
	ssize_t ret = len;
	int val;

	val = __sysfs_match_string(names, n, page);
	if (val < 0)
		return val;
	mutex_lock(&fepf->cfg_lock);
	if (fepf->ep)
		ret = -EBUSY;
	else
		*(u32 *)((u8 *)&fepf->cfg + field) = val;
	mutex_unlock(&fepf->cfg_lock);
	return ret;
}

static ssize_t fl_cfs_irq_mode_show(struct config_item *item, char *page)
{
	return fl_cfs_show_name(item, page, offsetof(struct fl_ep_cfg, irq_mode),
				fl_irq_mode_names);
}

static ssize_t fl_cfs_irq_mode_store(struct config_item *item, const char *page, size_t len)
{
	return fl_cfs_store_name(item, page, len, offsetof(struct fl_ep_cfg, irq_mode),
				 fl_irq_mode_names, ARRAY_SIZE(fl_irq_mode_names));
}
CONFIGFS_ATTR(fl_cfs_, irq_mode);

static ssize_t fl_cfs_xfer_backend_show(struct config_item *item, char *page)
{
	return fl_cfs_show_name(item, page, offsetof(struct fl_ep_cfg, xfer_backend),
				fl_xfer_backend_names);
}

static ssize_t fl_cfs_xfer_backend_store(struct config_item *item, const char *page,
					 size_t len)
{
	return fl_cfs_store_name(item, page, len, offsetof(struct fl_ep_cfg, xfer_backend),
				 fl_xfer_backend_names, ARRAY_SIZE(fl_xfer_backend_names));
}
CONFIGFS_ATTR(fl_cfs_, xfer_backend);

static struct configfs_attribute *fl_cfs_attrs[] = {
	&fl_cfs_attr_slots,
	&fl_cfs_attr_slot_size,
	&fl_cfs_attr_ring_entries,
	&fl_cfs_attr_dma_channels,
	&fl_cfs_attr_crossover,
	&fl_cfs_attr_rd_crossover,
	&fl_cfs_attr_cpu_pass_bytes,
	&fl_cfs_attr_poll_min_us,
	&fl_cfs_attr_poll_max_us,
	&fl_cfs_attr_irq_mode,
	&fl_cfs_attr_xfer_backend,
	NULL,
};

static const struct config_item_type fl_cfs_type = {
	.ct_attrs = fl_cfs_attrs,
	.ct_owner = THIS_MODULE,
};

/**
 * fl_cfs_add() - pci_epf_ops.add_cfs: the framelink attribute directory
 * @epf: the function.
 * @group: the function's configfs group (parent).
 *
 * Return: the group to add as a default group of @group.
 */
struct config_group *fl_cfs_add(struct pci_epf *epf, struct config_group *group)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);

	config_group_init_type_name(&fepf->group, dev_name(&epf->dev), &fl_cfs_type);
	return &fepf->group;
}
