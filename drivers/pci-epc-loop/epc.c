// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the endpoint controller operations an EPF calls.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "loop.h"

static int loop_write_header(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			     struct pci_epf_header *hdr)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	if (loop_perst_check(loop, "write_header"))
		return -EIO;
	loop_cfg_write_header(loop, func_no, hdr);
	return 0;
}

static int loop_set_bar(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			struct pci_epf_bar *epf_bar)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);
	const struct fl_epc_bar_caps *caps;
	enum pci_barno bar = epf_bar->barno;

	if (vfunc_no || bar < BAR_0 || bar > BAR_5)
		return -EINVAL;
	if (loop_perst_check(loop, "set_bar"))
		return -EIO;
	caps = &loop->bar_caps[bar];
	if (caps->reserved)
		return -EINVAL;
	if (caps->fixed_size && epf_bar->size != caps->fixed_size)
		return -EINVAL;
	if (caps->only_64bit &&
	    !(epf_bar->flags & PCI_BASE_ADDRESS_MEM_TYPE_64))
		return -EINVAL;
	if (epf_bar->flags & PCI_BASE_ADDRESS_SPACE_IO)
		return -EINVAL;
	if (!is_power_of_2(epf_bar->size) || epf_bar->size < 128 ||
	    !IS_ALIGNED(epf_bar->phys_addr, epf_bar->size))
		return -EINVAL;
	/* The host bridge window is the pool: BAR memory must be inside */
	if (epf_bar->phys_addr < loop->pool_phys ||
	    epf_bar->phys_addr + epf_bar->size >
	    loop->pool_phys + loop->pool_size)
		return -EINVAL;

	loop_cfg_set_bar(loop, func_no, epf_bar);
	return 0;
}

static void loop_clear_bar(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			   struct pci_epf_bar *epf_bar)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no || loop_perst_check(loop, "clear_bar"))
		return;
	loop_cfg_clear_bar(loop, func_no, epf_bar->barno);
}

static u64 loop_align_addr(struct pci_epc *epc, u64 pci_addr, size_t *size,
			   size_t *offset)
{
	u64 mask = epc->mem->window.page_size - 1;

	*offset = pci_addr & mask;
	*size = ALIGN(*offset + *size, epc->mem->window.page_size);
	return pci_addr & ~mask;
}

static int loop_map_addr(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			 phys_addr_t addr, u64 pci_addr, size_t size)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (loop_perst_check(loop, "map_addr"))
		return -EIO;
	return loop_win_map(loop, func_no, addr, pci_addr, size);
}

static void loop_unmap_addr(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			    phys_addr_t addr)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	/*
	 * The board would fault on the ATU registers; the lab still forgets
	 * the mapping (nothing is flushed without link) so no stale entry
	 * outlives the EPF's window address.
	 */
	loop_perst_check(loop, "unmap_addr");
	loop_win_unmap(loop, addr);
}

static int loop_set_msi(struct pci_epc *epc, u8 func_no, u8 vfunc_no, u8 op_arg)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);
	u8 mmc = fl_epc_msi_log2(op_arg);

	if (vfunc_no || mmc > 5)
		return -EINVAL;
	if (loop_perst_check(loop, "set_msi"))
		return -EIO;
	loop_cfg_set_msi(loop, func_no, mmc);
	return 0;
}

static int loop_get_msi(struct pci_epc *epc, u8 func_no, u8 vfunc_no)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	if (loop_perst_check(loop, "get_msi"))
		return -EIO;
	return fl_epc_msi_ret(loop_cfg_get_msi(loop, func_no));
}

static int loop_set_msix(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			 u16 op_arg, enum pci_barno bir, u32 offset)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);
	u16 nr_irqs = fl_epc_msix_count(op_arg);

	if (vfunc_no || !loop->features->msix_capable)
		return -EINVAL;
	if (bir < BAR_0 || bir > BAR_5 || !nr_irqs || nr_irqs > 2048 ||
	    !IS_ALIGNED(offset, 8))
		return -EINVAL;
	if (loop_perst_check(loop, "set_msix"))
		return -EIO;
	loop_cfg_set_msix(loop, func_no, nr_irqs, bir, offset);
	return 0;
}

static int loop_get_msix(struct pci_epc *epc, u8 func_no, u8 vfunc_no)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	if (loop_perst_check(loop, "get_msix"))
		return -EIO;
	return fl_epc_msix_ret(loop_cfg_get_msix(loop, func_no));
}

/*
 * The number an EPF passes to raise_irq as the controller driver reads it:
 * mainline raises MSI number n as vector n - 1 (BIT(n - 1), n <= 32),
 * JetPack as vector n (BIT(n), n <= 31); MSI-X numbers are written to the
 * doorbell as given, a 0-based entry on Tegra. loop_irq_raise() takes
 * 1-based vector numbers.
 */
static int loop_irq_number(struct pci_epc_loop *loop, unsigned int type,
			   u16 num, u16 *vec)
{
	u16 first = loop->msi_first;

	*vec = num;
	if (type == FL_EPC_IRQ_MSI) {
		if (num >= first && num <= first + 31) {
			*vec = num - first + 1;
			return 0;
		}
		dev_err_ratelimited(loop->dev,
				    "MSI %u refused: this controller raises %u..%u\n",
				    num, first, first + 31);
		return -EINVAL;
	}
	if (type != FL_EPC_IRQ_MSIX)
		return 0;
	/*
	 * Tegra writes the number to its MSI-X doorbell as given and the
	 * doorbell takes a 0-based table entry (DWC's generic doorbell writes
	 * num - 1; NVIDIA's own EPFs raise MSI-X 0 and 1): number n is entry n.
	 */
	if (loop->msix_raw) {
		*vec = num + 1;
		return 0;
	}
	if (!num) {
		dev_err_ratelimited(loop->dev, "MSI-X 0 refused: numbers start at 1\n");
		return -EINVAL;
	}
	return 0;
}

static int loop_raise_irq(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			  FL_EPC_IRQ_TYPE type, u16 interrupt_num)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);
	u16 vec;
	int ret;

	if (vfunc_no)
		return -EINVAL;
	if (loop_perst_check(loop, "raise_irq"))
		return -EIO;
	ret = loop_irq_number(loop, type, interrupt_num, &vec);
	if (ret)
		return ret;
	return loop_irq_raise(loop, func_no, type, vec);
}

static int loop_start(struct pci_epc *epc)
{
	return loop_link_start(epc_get_drvdata(epc));
}

static void loop_stop(struct pci_epc *epc)
{
	loop_link_stop(epc_get_drvdata(epc));
}

static const struct pci_epc_features *
loop_get_features(struct pci_epc *epc, u8 func_no, u8 vfunc_no)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	return loop->features;
}

struct pci_epc_ops loop_epc_ops = {
	.write_header	= loop_write_header,
	.set_bar	= loop_set_bar,
	.clear_bar	= loop_clear_bar,
	.map_addr	= loop_map_addr,
	.unmap_addr	= loop_unmap_addr,
	.set_msi	= loop_set_msi,
	.get_msi	= loop_get_msi,
	.set_msix	= loop_set_msix,
	.get_msix	= loop_get_msix,
	.raise_irq	= loop_raise_irq,
	.start		= loop_start,
	.stop		= loop_stop,
	.get_features	= loop_get_features,
};

/**
 * loop_epc_ops_init() - complete loop_epc_ops with optional operations
 */
void loop_epc_ops_init(void)
{
	fl_epc_set_align_addr(&loop_epc_ops, loop_align_addr);
}
