// SPDX-License-Identifier: GPL-2.0
/*
 * fl-coherent: test helper that marks one platform device dma-coherent, a stand-in in the
 * lab for an importer on an IO-coherent interconnect (tests/vm/75-epf-export.sh).
 *
 * In the lab the endpoint's slots always come from pci-epc-loop's no-map pool (the loop
 * attaches its memory-region at probe, and a device's pool wins in dma_alloc_attrs()), and
 * framelink-epf refuses pool slots to importers that are not dma-coherent (export.c: cache
 * maintenance by address needs a linear mapping the no-map pool does not have). vgem's
 * platform device has no firmware node and no driver, so arch_setup_dma_ops() never runs
 * for it: on arm64 it is not dma-coherent, and its PRIME import of an exported slot fails
 * with EOPNOTSUPP. With this module loaded the same import goes through vgem's own code
 * (dma_buf_attach() and dma_buf_map_attachment() with vgem's device); dma_map_sgtable()
 * then does no cache maintenance, which QEMU's TCG (the lab's only machine) does not need.
 *
 * The flag is restored at unload. Unload only when the device maps nothing: an unmap by a
 * device turned non-coherent again would do cache maintenance on the no-map pool.
 *
 * Never on a board: this is the lab's model of a coherent importer, not a fix.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#include <framelink/compat.h>

static char *device = "vgem";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "platform device to mark dma-coherent (default vgem)");

static struct device *fl_coh_dev;
static bool fl_coh_was;

static int __init fl_coherent_init(void)
{
	fl_coh_dev = bus_find_device_by_name(&platform_bus_type, NULL, device);
	if (!fl_coh_dev) {
		pr_err("no platform device %s\n", device);
		return -ENODEV;
	}
	fl_coh_was = dev_is_dma_coherent(fl_coh_dev);
	fl_dev_set_dma_coherent(fl_coh_dev, true);
	pr_info("%s marked dma-coherent (was %s): the lab's stand-in for a coherent importer\n",
		dev_name(fl_coh_dev), fl_coh_was ? "coherent" : "non-coherent");
	return 0;
}
module_init(fl_coherent_init);

static void __exit fl_coherent_exit(void)
{
	fl_dev_set_dma_coherent(fl_coh_dev, fl_coh_was);
	pr_info("%s: dma-coherent flag restored (%s)\n", dev_name(fl_coh_dev),
		fl_coh_was ? "coherent" : "non-coherent");
	put_device(fl_coh_dev);
}
module_exit(fl_coherent_exit);

MODULE_DESCRIPTION("framelink test helper: mark a platform device dma-coherent");
MODULE_LICENSE("GPL");
