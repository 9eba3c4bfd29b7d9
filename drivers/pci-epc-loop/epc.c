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

	if (vfunc_no)
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

	return loop_win_map(loop, addr, pci_addr, size);
}

static void loop_unmap_addr(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			    phys_addr_t addr)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	loop_win_unmap(loop, addr);
}

static int loop_set_msi(struct pci_epc *epc, u8 func_no, u8 vfunc_no, u8 mmc)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no || mmc > 5)
		return -EINVAL;
	loop_cfg_set_msi(loop, func_no, mmc);
	return 0;
}

static int loop_get_msi(struct pci_epc *epc, u8 func_no, u8 vfunc_no)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	return loop_cfg_get_msi(loop, func_no);
}

static int loop_set_msix(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			 u16 nr_irqs, enum pci_barno bir, u32 offset)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no || !loop->features->msix_capable)
		return -EINVAL;
	if (bir < BAR_0 || bir > BAR_5 || !nr_irqs || nr_irqs > 2048 ||
	    !IS_ALIGNED(offset, 8))
		return -EINVAL;
	loop_cfg_set_msix(loop, func_no, nr_irqs, bir, offset);
	return 0;
}

static int loop_get_msix(struct pci_epc *epc, u8 func_no, u8 vfunc_no)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	return loop_cfg_get_msix(loop, func_no);
}

static int loop_raise_irq(struct pci_epc *epc, u8 func_no, u8 vfunc_no,
			  FL_EPC_IRQ_TYPE type, u16 interrupt_num)
{
	struct pci_epc_loop *loop = epc_get_drvdata(epc);

	if (vfunc_no)
		return -EINVAL;
	return loop_irq_raise(loop, func_no, type, interrupt_num);
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
