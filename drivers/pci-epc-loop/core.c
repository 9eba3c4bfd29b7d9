// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: platform driver, reserved memory and address resolution.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_reserved_mem.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>

#include "loop.h"

static char *profile;
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile,
		 "feature profile: generic, tegra234, tegra234-edma or jetpack (default: DT \"framelink,profile\", else generic)");

static unsigned int links = 1;
module_param(links, uint, 0444);
MODULE_PARM_DESC(links,
		 "bring up links 0..N-1 (DT \"framelink,link\"), N = 1.."
		 __stringify(LOOP_MAX_LINKS) " (default 1)");

/* eDMA channels of the Tegra234 PCIe controller (see tegra234-edma below) */
#define LOOP_T234_EDMA_RD	2
#define LOOP_T234_EDMA_WR	4

/**
 * struct loop_profile_desc - a feature profile
 * @name: profile name
 * @msi_capable: offer MSI to EPFs
 * @msix_capable: offer MSI-X to EPFs
 * @align: epc_features align (BAR and outbound window alignment EPFs see)
 * @win_page: outbound window page size (the controller's iATU granule)
 * @bar: per-BAR constraints
 * @dma_from_dt: dmaengine channels per direction from DT "dma-channels"
 * @dma_rd: read channels when not @dma_from_dt (0 with @dma_wr 0: no dmaengine)
 * @dma_wr: write channels when not @dma_from_dt
 * @perst: epc_init/epc_deinit follow PERST# instead of probe/remove
 * @deinit_at_assert: epc_deinit at PERST# assert (else at the next deassert)
 * @linkup_hardirq: link up from the controller's hard IRQ handler (NVIDIA),
 *	where the kernel's endpoint core is NVIDIA's
 * @msi_first: the MSI number raise_irq maps to the first vector
 * @msix_raw: raise_irq writes the MSI-X number to the doorbell as given,
 *	      which the controller takes as a 0-based table entry
 */
struct loop_profile_desc {
	const char *name;
	bool msi_capable;
	bool msix_capable;
	size_t align;
	size_t win_page;
	struct fl_epc_bar_caps bar[PCI_STD_NUM_BARS];
	bool dma_from_dt;
	u8 dma_rd;
	u8 dma_wr;
	bool perst;
	bool deinit_at_assert;
	bool linkup_hardirq;
	u8 msi_first;
	bool msix_raw;
};

/*
 * Tegra234 in endpoint mode (drivers/pci/controller/dwc/pcie-tegra194.c):
 * only BAR0, fixed 1 MiB and 64-bit, 64 KiB alignment. The hardware raises
 * MSI (32 vectors) whether or not the EPF is offered the capability.
 */
#define LOOP_TEGRA234_BARS {					\
	[BAR_0] = { .fixed_size = SZ_1M, .only_64bit = true },	\
	[BAR_1] = { .reserved = true },				\
	[BAR_2] = { .reserved = true },				\
	[BAR_3] = { .reserved = true },				\
	[BAR_4] = { .reserved = true },				\
	[BAR_5] = { .reserved = true },				\
}

static const struct loop_profile_desc loop_profiles[] = {
	/* Every BAR programmable, MSI and MSI-X, channels from DT */
	[LOOP_PROFILE_GENERIC] = {
		.name = "generic",
		.msi_capable = true,
		.msix_capable = true,
		.align = SZ_4K,
		.win_page = SZ_4K,
		.dma_from_dt = true,
		.msi_first = 1,
	},
	/*
	 * Mainline as Debian 6.12 ships it: msi_capable and msix_capable
	 * false; MSI raised as BIT(num - 1) (b640d42a6ac9, in 6.12.117); no
	 * eDMA in dmaengine (the DT has no "dma" reg, DWC 5.62a has no
	 * viewport: dw_pcie_edma_find_mf() gives -ENODEV); epc_init at
	 * PERST# deassert, epc_deinit at the next deassert.
	 */
	[LOOP_PROFILE_TEGRA234] = {
		.name = "tegra234",
		.align = SZ_64K,
		.win_page = SZ_64K,
		.bar = LOOP_TEGRA234_BARS,
		.perst = true,
		.msi_first = 1,
		.msix_raw = true,
	},
	/*
	 * The same with the controller's eDMA registered with dw-edma: 2 read
	 * and 4 write channels (DMA_RD_CHNL_NUM / DMA_WR_CHNL_NUM of NVIDIA's
	 * include/linux/tegra-pcie-edma.h, linux-nv-oot).
	 */
	[LOOP_PROFILE_TEGRA234_EDMA] = {
		.name = "tegra234-edma",
		.align = SZ_64K,
		.win_page = SZ_64K,
		.bar = LOOP_TEGRA234_BARS,
		.dma_rd = LOOP_T234_EDMA_RD,
		.dma_wr = LOOP_T234_EDMA_WR,
		.perst = true,
		.msi_first = 1,
		.msix_raw = true,
	},
	/*
	 * NVIDIA's JetPack kernel: dw_pcie_ep_deinit_notify() first thing in
	 * pex_ep_event_pex_rst_assert(); MSI raised as BIT(num), num <= 31
	 * (0-based); msi_capable and msix_capable false in JetPack 6's and
	 * 7's epc_features (issue 7 had MSI-X offered; issue 26 follows the
	 * sources); no align in JetPack 6's epc_features, SZ_64K in JetPack
	 * 7's, the window page SZ_64K in both (ep->page_size); eDMA only
	 * through NVIDIA's tegra-pcie-edma library, not dmaengine.
	 */
	[LOOP_PROFILE_JETPACK] = {
		.name = "jetpack",
		.align = FL_NV_EPC_CORE_JP7 ? SZ_64K : 0,
		.win_page = SZ_64K,
		.bar = LOOP_TEGRA234_BARS,
		.perst = true,
		.deinit_at_assert = true,
		.linkup_hardirq = true,
		.msi_first = 0,
		.msix_raw = true,
	},
};

/**
 * loop_phys_to_virt() - CPU address of a physical range either side uses
 * @loop: the loopback
 * @addr: physical address (host PCI addresses are host physical addresses)
 * @size: length of the range
 *
 * Both the endpoint's local addresses and the root complex's bus addresses
 * are physical addresses in one machine. A range is accepted only if it
 * lies entirely in the reserved pool or entirely in System RAM; anything
 * else (MMIO, holes) is refused, as an unsupported request would be.
 *
 * Return: a CPU pointer valid for @size bytes, or NULL.
 */
void *loop_phys_to_virt(struct pci_epc_loop *loop, u64 addr, size_t size)
{
	if (!size || addr + size < addr)
		return NULL;

	if (addr >= loop->pool_phys &&
	    addr + size <= loop->pool_phys + loop->pool_size)
		return loop->pool_va + (addr - loop->pool_phys);

	if (region_intersects(addr, size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) == REGION_INTERSECTS &&
	    pfn_valid(PHYS_PFN(addr)))
		return phys_to_virt(addr);

	return NULL;
}

static void loop_rmem_release(void *data)
{
	of_reserved_mem_device_release(data);
}

static void loop_win_free(void *data)
{
	struct pci_epc_loop *loop = data;

	dma_free_coherent(loop->dev, LOOP_WIN_SIZE, loop->win_va,
			  loop->win_phys);
}

static int loop_setup_memory(struct pci_epc_loop *loop)
{
	struct device *dev = loop->dev;
	struct reserved_mem *rmem;
	struct device_node *np;
	int ret;

	np = of_parse_phandle(dev->of_node, "memory-region", 0);
	if (!np)
		return dev_err_probe(dev, -ENODEV, "no memory-region\n");
	rmem = of_reserved_mem_lookup(np);
	of_node_put(np);
	if (!rmem)
		return dev_err_probe(dev, -ENODEV, "memory-region not reserved\n");

	loop->pool_phys = rmem->base;
	loop->pool_size = rmem->size;

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return dev_err_probe(dev, ret, "cannot set DMA mask\n");

	/* BAR memory (pci_epf_alloc_space) comes from this pool */
	ret = of_reserved_mem_device_init(dev);
	if (ret)
		return dev_err_probe(dev, ret, "cannot use memory-region\n");
	ret = devm_add_action_or_reset(dev, loop_rmem_release, dev);
	if (ret)
		return ret;

	/*
	 * One write-combined mapping of the whole pool for the emulation's
	 * own accesses (DMA engine, MSI-X table, outbound window).
	 */
	loop->pool_va = devm_memremap(dev, loop->pool_phys, loop->pool_size,
				      MEMREMAP_WC);
	if (IS_ERR(loop->pool_va))
		return dev_err_probe(dev, PTR_ERR(loop->pool_va),
				     "cannot map the pool\n");

	/* The outbound window is real memory carved from the pool */
	loop->win_va = dma_alloc_coherent(dev, LOOP_WIN_SIZE, &loop->win_phys,
					  GFP_KERNEL);
	if (!loop->win_va)
		return dev_err_probe(dev, -ENOMEM, "no outbound window\n");
	if (loop->win_phys < loop->pool_phys ||
	    loop->win_phys + LOOP_WIN_SIZE > loop->pool_phys + loop->pool_size) {
		dma_free_coherent(dev, LOOP_WIN_SIZE, loop->win_va,
				  loop->win_phys);
		return dev_err_probe(dev, -EINVAL, "window outside the pool\n");
	}
	return devm_add_action_or_reset(dev, loop_win_free, loop);
}

static int loop_parse_profile(struct pci_epc_loop *loop)
{
	struct pci_epc_features *f = &loop->features_buf;
	const struct loop_profile_desc *p;
	const char *name = profile;
	int i;

	if (!name &&
	    of_property_read_string(loop->dev->of_node, "framelink,profile",
				    &name))
		name = "generic";

	for (i = 0; i < ARRAY_SIZE(loop_profiles); i++)
		if (sysfs_streq(name, loop_profiles[i].name))
			break;
	if (i == ARRAY_SIZE(loop_profiles))
		return dev_err_probe(loop->dev, -EINVAL,
				     "unknown profile '%s'\n", name);

	p = &loop_profiles[i];
	loop->profile = i;
	loop->bar_caps = p->bar;
	f->linkup_notifier = true;
	/* Kernels before 6.11: EPFs wait for CORE_INIT when PERST# gates it */
	fl_epc_set_core_init_notifier(f, p->perst);
	f->msi_capable = p->msi_capable;
	f->msix_capable = p->msix_capable;
	f->align = p->align;
	loop->win_page = p->win_page;
	fl_epc_set_bar_features(f, p->bar);
	loop->features = f;
	loop->perst_model = p->perst;
	loop->perst_deinit_at_assert = p->deinit_at_assert;
	loop->linkup_hardirq = p->linkup_hardirq && FL_NV_EPC_CORE;
	if (p->linkup_hardirq && !FL_NV_EPC_CORE)
		dev_info(loop->dev,
			 "%s: this kernel's endpoint core is mainline's: link up from process context (NVIDIA's hard IRQ delivery needs NVIDIA's core, patches/nv)\n",
			 p->name);
	loop->msi_first = p->msi_first;
	loop->msix_raw = p->msix_raw;
	return 0;
}

/* DMA channels per direction: the profile's, or DT "dma-channels" */
static void loop_parse_dma(struct pci_epc_loop *loop)
{
	const struct loop_profile_desc *p = &loop_profiles[loop->profile];
	u32 nchans = LOOP_DEF_DMA_CHANS;

	if (!p->dma_from_dt) {
		loop->nchans_rd = p->dma_rd;
		loop->nchans_wr = p->dma_wr;
		return;
	}
	of_property_read_u32(loop->dev->of_node, "dma-channels", &nchans);
	if (nchans > LOOP_MAX_DMA_CHANS) {
		dev_warn(loop->dev, "dma-channels %u capped to %u\n", nchans,
			 LOOP_MAX_DMA_CHANS);
		nchans = LOOP_MAX_DMA_CHANS;
	}
	loop->nchans_rd = nchans;
	loop->nchans_wr = nchans;
}

/* The EPC device of a core that frees it in pci_epc_destroy() (see loop_probe()) */
static void loop_epc_dev_release(struct device *dev)
{
}

/*
 * Which link of the machine a node is: DT "framelink,link" (default 0).
 * Only links 0..links-1 come up, so a plain load gives the one link every
 * single-link test expects, whatever else the DT describes.
 */
static int loop_link_index(struct device *dev, u32 *index)
{
	*index = 0;
	of_property_read_u32(dev->of_node, "framelink,link", index);
	if (*index >= LOOP_MAX_LINKS)
		return dev_err_probe(dev, -EINVAL,
				     "framelink,link %u: at most %u links\n",
				     *index, LOOP_MAX_LINKS);
	if (*index >= links) {
		dev_dbg(dev, "link %u not brought up (links=%u)\n", *index,
			links);
		return -ENODEV;
	}
	return 0;
}

static int loop_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct pci_epc_loop *loop;
	u32 index;
	int ret;

	ret = loop_link_index(dev, &index);
	if (ret)
		return ret;

	loop = devm_kzalloc(dev, sizeof(*loop), GFP_KERNEL);
	if (!loop)
		return -ENOMEM;
	loop->dev = dev;
	loop->index = index;
	platform_set_drvdata(pdev, loop);

	mutex_init(&loop->win_lock);
	INIT_LIST_HEAD(&loop->win_maps);
	raw_spin_lock_init(&loop->cfg_lock);
	mutex_init(&loop->link_lock);
	spin_lock_init(&loop->state_lock);
	mutex_init(&loop->msi_lock);
	spin_lock_init(&loop->model_lock);
	init_waitqueue_head(&loop->stall_wq);

	ret = loop_parse_profile(loop);
	if (ret)
		return ret;
	if (loop_rc_init(loop))
		return -EINVAL;
	loop_parse_dma(loop);
	loop_perst_init(loop);

	if (!of_property_read_bool(dev->of_node, "linux,pci-probe-only"))
		dev_warn(dev, "no linux,pci-probe-only: BARs may be moved and break\n");

	ret = loop_setup_memory(loop);
	if (ret)
		return ret;

	loop_cfg_init(loop);

	ret = loop_irq_init(loop);
	if (ret)
		return ret;

	ret = loop_link_init(loop);
	if (ret)
		goto err_irq;

	ret = loop_dma_init(loop);
	if (ret)
		goto err_link;

	loop->epc = pci_epc_create(dev, &loop_epc_ops);
	if (IS_ERR(loop->epc)) {
		ret = dev_err_probe(dev, PTR_ERR(loop->epc),
				    "cannot create EPC\n");
		goto err_dma;
	}
	/*
	 * Older EPC cores (Debian's 6.1) give the device no release and
	 * kfree()s it in pci_epc_destroy() itself: the driver core warns at
	 * destroy unless there is one, and it must free nothing.
	 */
	if (!loop->epc->dev.release)
		loop->epc->dev.release = loop_epc_dev_release;
	epc_set_drvdata(loop->epc, loop);
	loop->epc->max_functions = LOOP_MAX_FUNCS;

	ret = pci_epc_mem_init(loop->epc, loop->win_phys, LOOP_WIN_SIZE,
			       loop->win_page);
	if (ret) {
		dev_err(dev, "cannot init outbound window: %d\n", ret);
		goto err_epc;
	}

	loop_debugfs_init(loop);
	/* generic: epc_init now; PERST# profiles: at the first deassert */
	loop_perst_probe_done(loop);

	dev_info(dev, "link %u: profile %s, pool %pa+%zx, window %pad+%x, %u+%u DMA channels\n",
		 loop->index, loop_profiles[loop->profile].name,
		 &loop->pool_phys, loop->pool_size, &loop->win_phys,
		 LOOP_WIN_SIZE, loop->nchans_rd, loop->nchans_wr);
	return 0;

err_epc:
	pci_epc_destroy(loop->epc);
err_dma:
	loop_dma_exit(loop);
err_link:
	loop_link_exit(loop);
err_irq:
	loop_irq_exit(loop);
	return ret;
}

static void loop_remove(struct platform_device *pdev)
{
	struct pci_epc_loop *loop = platform_get_drvdata(pdev);

	/* Host side first: the root-side driver goes away with the bus */
	loop_link_exit(loop);

	/* Endpoint functions release their DMA channels and BARs */
	loop_perst_remove(loop);
	loop_debugfs_exit(loop);
	loop_win_drop_all(loop);
	pci_epc_mem_exit(loop->epc);
	pci_epc_destroy(loop->epc);

	loop_dma_exit(loop);
	loop_irq_exit(loop);
}

static const struct of_device_id loop_of_match[] = {
	{ .compatible = "framelink,pci-epc-loop" },
	{ }
};
MODULE_DEVICE_TABLE(of, loop_of_match);

static struct platform_driver loop_driver = {
	.probe = loop_probe,
	FL_PLATFORM_REMOVE(loop_remove),
	.driver = {
		.name = "pci-epc-loop",
		.of_match_table = loop_of_match,
		.suppress_bind_attrs = true,
	},
};

static int __init loop_init(void)
{
	int ret;

	if (!links || links > LOOP_MAX_LINKS) {
		pr_err("links=%u: 1..%u\n", links, LOOP_MAX_LINKS);
		return -EINVAL;
	}
	loop_epc_ops_init();
	loop_debugfs_root_init();
	ret = platform_driver_register(&loop_driver);
	if (ret)
		loop_debugfs_root_exit();
	return ret;
}
module_init(loop_init);

static void __exit loop_exit(void)
{
	platform_driver_unregister(&loop_driver);
	loop_debugfs_root_exit();
}
module_exit(loop_exit);

MODULE_DESCRIPTION("Loopback PCIe link: endpoint controller and host bridge in one kernel");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
