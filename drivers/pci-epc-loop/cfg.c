// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the function's type-0 config space as the root complex
 * sees it, built from what the EPF wrote, and the host bridge's pci_ops.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/log2.h>
#include <linux/string.h>

#include "loop.h"

static void cfg_set(struct loop_fn *fn, int off, u32 val, int len, u32 wmask)
{
	int i;

	for (i = 0; i < len; i++) {
		fn->cfg[off + i] = val >> (8 * i);
		fn->wmask[off + i] = wmask >> (8 * i);
		fn->w1cmask[off + i] = 0;
	}
}

static u32 cfg_get(const struct loop_fn *fn, int off, int len)
{
	u32 val = 0;
	int i;

	for (i = 0; i < len; i++)
		val |= (u32)fn->cfg[off + i] << (8 * i);
	return val;
}

/**
 * loop_fn_master() - may the function issue memory requests?
 * @loop: the loopback
 * @func_no: function number
 *
 * PCIe Base Specification, Command register: with Bus Master Enable clear a
 * function issues no memory requests (MSI and MSI-X are memory writes; INTx
 * is a message and is not affected). Window accesses, DMA and MSI of the
 * endpoint are gated on it (window.c, dma.c, nvedma.c, irq.c). A function
 * the root has not configured yet (link down, reset) has it clear.
 *
 * No EPF wrote a header for @func_no (vendor ID all-ones): there is no
 * function, and the loop's own engine tests (loop-dmatest, which binds no
 * EPF) run ungated; real hardware has no such case.
 *
 * Return: true when the host set Bus Master Enable, or there is no function.
 */
bool loop_fn_master(struct pci_epc_loop *loop, u8 func_no)
{
	const u8 *cfg;

	if (func_no >= LOOP_MAX_FUNCS)
		return false;
	cfg = loop->fn[func_no].cfg;
	if (READ_ONCE(cfg[PCI_VENDOR_ID]) == 0xff && READ_ONCE(cfg[PCI_VENDOR_ID + 1]) == 0xff)
		return true;
	return READ_ONCE(cfg[PCI_COMMAND]) & PCI_COMMAND_MASTER;
}

/* Rebuild the capability list: MSI, MSI-X (when the EPF set it), PCIe. */
static void loop_cfg_link_caps(struct loop_fn *fn)
{
	u8 first = LOOP_CAP_MSI;

	fn->cfg[LOOP_CAP_MSI + PCI_CAP_LIST_NEXT] =
		fn->msix_nr ? LOOP_CAP_MSIX : LOOP_CAP_EXP;
	fn->cfg[LOOP_CAP_MSIX + PCI_CAP_LIST_NEXT] = LOOP_CAP_EXP;
	fn->cfg[PCI_CAPABILITY_LIST] = first;
}

static void loop_cfg_init_fn(struct pci_epc_loop *loop, struct loop_fn *fn)
{
	int msi = LOOP_CAP_MSI, msix = LOOP_CAP_MSIX, exp = LOOP_CAP_EXP;

	memset(fn, 0, sizeof(*fn));

	cfg_set(fn, PCI_VENDOR_ID, 0xffff, 2, 0);
	cfg_set(fn, PCI_DEVICE_ID, 0xffff, 2, 0);
	cfg_set(fn, PCI_COMMAND, 0, 2,
		PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_PARITY |
		PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE);
	cfg_set(fn, PCI_STATUS, PCI_STATUS_CAP_LIST, 2, 0);
	fn->w1cmask[PCI_STATUS + 1] = 0xf9;	/* error bits are RW1C */
	cfg_set(fn, PCI_CACHE_LINE_SIZE, 0, 1, 0xff);
	cfg_set(fn, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL, 1, 0);
	cfg_set(fn, PCI_INTERRUPT_LINE, 0, 1, 0xff);

	/* MSI: 64-bit, per-vector masking */
	fn->msi_mmc = loop->profile != LOOP_PROFILE_GENERIC ? 5 : 0;
	cfg_set(fn, msi + PCI_CAP_LIST_ID, PCI_CAP_ID_MSI, 1, 0);
	cfg_set(fn, msi + PCI_MSI_FLAGS,
		PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_MASKBIT |
		(fn->msi_mmc << 1), 2,
		PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE);
	cfg_set(fn, msi + PCI_MSI_ADDRESS_LO, 0, 4, 0xfffffffc);
	cfg_set(fn, msi + PCI_MSI_ADDRESS_HI, 0, 4, 0xffffffff);
	cfg_set(fn, msi + PCI_MSI_DATA_64, 0, 2, 0xffff);
	cfg_set(fn, msi + PCI_MSI_MASK_64, 0, 4, 0xffffffff);
	cfg_set(fn, msi + PCI_MSI_PENDING_64, 0, 4, 0);

	/* MSI-X: table size and location filled in by set_msix */
	cfg_set(fn, msix + PCI_CAP_LIST_ID, PCI_CAP_ID_MSIX, 1, 0);
	cfg_set(fn, msix + PCI_MSIX_FLAGS, 0, 2,
		PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);

	/* PCIe endpoint, Gen3 x4 like the boards, MPS 256 supported */
	cfg_set(fn, exp + PCI_CAP_LIST_ID, PCI_CAP_ID_EXP, 1, 0);
	cfg_set(fn, exp + PCI_EXP_FLAGS,
		2 | (PCI_EXP_TYPE_ENDPOINT << 4), 2, 0);
	cfg_set(fn, exp + PCI_EXP_DEVCAP, 1, 4, 0);
	cfg_set(fn, exp + PCI_EXP_DEVCTL, 2 << 12, 2, 0x7fff);
	cfg_set(fn, exp + PCI_EXP_LNKCAP, 3 | (4 << 4), 4, 0);
	cfg_set(fn, exp + PCI_EXP_LNKCTL, 0, 2, 0x0fff);
	cfg_set(fn, exp + PCI_EXP_LNKSTA, 3 | (4 << 4), 2, 0);
	cfg_set(fn, exp + PCI_EXP_LNKCAP2, 0xe, 4, 0);

	loop_cfg_link_caps(fn);
}

/**
 * loop_cfg_init() - reset the config space of every function
 * @loop: the loopback
 */
void loop_cfg_init(struct pci_epc_loop *loop)
{
	unsigned long flags;
	int i;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	for (i = 0; i < LOOP_MAX_FUNCS; i++)
		loop_cfg_init_fn(loop, &loop->fn[i]);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

/**
 * loop_cfg_reset_host() - forget what a previous root complex programmed
 * @loop: the loopback
 *
 * Called before each link up, as a fundamental reset would: command
 * register, interrupt line, MSI/MSI-X enables, addresses, masks and held
 * vectors go back to their reset values; what the EPF wrote stays.
 */
void loop_cfg_reset_host(struct pci_epc_loop *loop)
{
	int msi = LOOP_CAP_MSI;
	unsigned long flags;
	int i;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	for (i = 0; i < LOOP_MAX_FUNCS; i++) {
		struct loop_fn *fn = &loop->fn[i];

		fn->cfg[PCI_COMMAND] = 0;
		fn->cfg[PCI_COMMAND + 1] = 0;
		fn->cfg[PCI_STATUS + 1] = 0;
		fn->cfg[PCI_INTERRUPT_LINE] = 0;
		fn->cfg[msi + PCI_MSI_FLAGS] &= ~(PCI_MSI_FLAGS_ENABLE |
						  PCI_MSI_FLAGS_QSIZE);
		memset(&fn->cfg[msi + PCI_MSI_ADDRESS_LO], 0,
		       PCI_MSI_PENDING_64 + 4 - PCI_MSI_ADDRESS_LO);
		fn->cfg[LOOP_CAP_MSIX + PCI_MSIX_FLAGS + 1] &=
			~((PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL) >> 8);
		fn->intx_pending = false;
		fn->msi_pending = 0;
		bitmap_zero(fn->msix_pending, 2048);
	}
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

void loop_cfg_write_header(struct pci_epc_loop *loop, u8 func_no,
			   const struct pci_epf_header *hdr)
{
	struct loop_fn *fn = &loop->fn[func_no];
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	cfg_set(fn, PCI_VENDOR_ID, hdr->vendorid, 2, 0);
	cfg_set(fn, PCI_DEVICE_ID, hdr->deviceid, 2, 0);
	cfg_set(fn, PCI_REVISION_ID, hdr->revid, 1, 0);
	cfg_set(fn, PCI_CLASS_PROG, hdr->progif_code, 1, 0);
	cfg_set(fn, PCI_CLASS_DEVICE, hdr->subclass_code, 1, 0);
	cfg_set(fn, PCI_CLASS_DEVICE + 1, hdr->baseclass_code, 1, 0);
	cfg_set(fn, PCI_CACHE_LINE_SIZE, hdr->cache_line_size, 1, 0xff);
	cfg_set(fn, PCI_SUBSYSTEM_VENDOR_ID, hdr->subsys_vendor_id, 2, 0);
	cfg_set(fn, PCI_SUBSYSTEM_ID, hdr->subsys_id, 2, 0);
	cfg_set(fn, PCI_INTERRUPT_PIN, hdr->interrupt_pin, 1, 0);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

/*
 * A BAR reads back its address (the physical address of the EPF's memory)
 * and, after the root complex writes all-ones, its size mask: the writable
 * bits are exactly the address bits above the size.
 */
void loop_cfg_set_bar(struct pci_epc_loop *loop, u8 func_no,
		      const struct pci_epf_bar *epf_bar)
{
	struct loop_fn *fn = &loop->fn[func_no];
	enum pci_barno bar = epf_bar->barno;
	int off = PCI_BASE_ADDRESS_0 + 4 * bar;
	u64 mask = ~(epf_bar->size - 1);
	bool is64 = epf_bar->flags & PCI_BASE_ADDRESS_MEM_TYPE_64;
	u32 lo = lower_32_bits(epf_bar->phys_addr) |
		 (epf_bar->flags & ~PCI_BASE_ADDRESS_MEM_MASK);
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	cfg_set(fn, off, lo, 4, lower_32_bits(mask) & PCI_BASE_ADDRESS_MEM_MASK);
	if (is64 && bar < BAR_5)
		cfg_set(fn, off + 4, upper_32_bits(epf_bar->phys_addr), 4,
			upper_32_bits(mask));
	fn->bar[bar].phys = epf_bar->phys_addr;
	fn->bar[bar].size = epf_bar->size;
	fn->bar[bar].flags = epf_bar->flags;
	fn->bar[bar].set = true;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

void loop_cfg_clear_bar(struct pci_epc_loop *loop, u8 func_no,
			enum pci_barno bar)
{
	struct loop_fn *fn = &loop->fn[func_no];
	int off = PCI_BASE_ADDRESS_0 + 4 * bar;
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	if (fn->bar[bar].flags & PCI_BASE_ADDRESS_MEM_TYPE_64 && bar < BAR_5)
		cfg_set(fn, off + 4, 0, 4, 0);
	cfg_set(fn, off, 0, 4, 0);
	memset(&fn->bar[bar], 0, sizeof(fn->bar[bar]));
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

void loop_cfg_set_msi(struct pci_epc_loop *loop, u8 func_no, u8 mmc)
{
	struct loop_fn *fn = &loop->fn[func_no];
	int off = LOOP_CAP_MSI + PCI_MSI_FLAGS;
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	fn->msi_mmc = mmc;
	fn->cfg[off] = (fn->cfg[off] & ~PCI_MSI_FLAGS_QMASK) | (mmc << 1);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

int loop_cfg_get_msi(struct pci_epc_loop *loop, u8 func_no)
{
	struct loop_fn *fn = &loop->fn[func_no];
	unsigned long flags;
	u16 ctrl;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	ctrl = cfg_get(fn, LOOP_CAP_MSI + PCI_MSI_FLAGS, 2);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	if (!(ctrl & PCI_MSI_FLAGS_ENABLE))
		return -EINVAL;
	return FIELD_GET(PCI_MSI_FLAGS_QSIZE, ctrl);
}

void loop_cfg_set_msix(struct pci_epc_loop *loop, u8 func_no, u16 nr,
		       enum pci_barno bir, u32 offset)
{
	struct loop_fn *fn = &loop->fn[func_no];
	int cap = LOOP_CAP_MSIX;
	u32 pba = ALIGN(offset + nr * PCI_MSIX_ENTRY_SIZE, 8);
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	fn->msix_nr = nr;
	fn->msix_bir = bir;
	fn->msix_offset = offset;
	bitmap_zero(fn->msix_pending, 2048);
	cfg_set(fn, cap + PCI_MSIX_FLAGS, nr - 1, 2,
		PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	cfg_set(fn, cap + PCI_MSIX_TABLE, offset | bir, 4, 0);
	cfg_set(fn, cap + PCI_MSIX_PBA, pba | bir, 4, 0);
	loop_cfg_link_caps(fn);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

int loop_cfg_get_msix(struct pci_epc_loop *loop, u8 func_no)
{
	struct loop_fn *fn = &loop->fn[func_no];
	unsigned long flags;
	u16 ctrl;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	ctrl = cfg_get(fn, LOOP_CAP_MSIX + PCI_MSIX_FLAGS, 2);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	if (!(ctrl & PCI_MSIX_FLAGS_ENABLE))
		return -EINVAL;
	return ctrl & PCI_MSIX_FLAGS_QSIZE;
}

/**
 * loop_cfg_program_mps() - the root programs Max_Payload_Size
 * @loop: the loopback
 * @mps: payload size in bytes (128 << 0..5)
 *
 * Device Control's MPS field of every function gets @mps, capped to what
 * the function's Device Capabilities say it supports.
 */
void loop_cfg_program_mps(struct pci_epc_loop *loop, u32 mps)
{
	int off = LOOP_CAP_EXP + PCI_EXP_DEVCTL;
	unsigned long flags;
	u32 enc, cap;
	int i;

	enc = mps >= 128 ? ilog2(mps) - 7 : 0;
	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	for (i = 0; i < LOOP_MAX_FUNCS; i++) {
		struct loop_fn *fn = &loop->fn[i];
		u16 ctl = cfg_get(fn, off, 2);

		cap = cfg_get(fn, LOOP_CAP_EXP + PCI_EXP_DEVCAP, 4) &
		      PCI_EXP_DEVCAP_PAYLOAD;
		ctl &= ~PCI_EXP_DEVCTL_PAYLOAD;
		ctl |= FIELD_PREP(PCI_EXP_DEVCTL_PAYLOAD, min(enc, cap));
		fn->cfg[off] = ctl;
		fn->cfg[off + 1] = ctl >> 8;
	}
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

/**
 * loop_cfg_mps() - Max_Payload_Size programmed in function 0
 * @loop: the loopback
 *
 * For the link model: the payload of a write TLP.
 *
 * Return: the payload size in bytes.
 */
u32 loop_cfg_mps(struct pci_epc_loop *loop)
{
	unsigned long flags;
	u16 ctl;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	ctl = cfg_get(&loop->fn[0], LOOP_CAP_EXP + PCI_EXP_DEVCTL, 2);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
	return 128U << FIELD_GET(PCI_EXP_DEVCTL_PAYLOAD, ctl);
}

static struct loop_fn *loop_cfg_fn(struct pci_bus *bus, unsigned int devfn)
{
	struct pci_epc_loop *loop = bus->sysdata;

	if (!pci_is_root_bus(bus) || PCI_SLOT(devfn) ||
	    PCI_FUNC(devfn) >= LOOP_MAX_FUNCS || !loop_rc_up(loop))
		return NULL;
	return &loop->fn[PCI_FUNC(devfn)];
}

/*
 * The link is down under a root that kept the function (no hot-plug): the
 * root port still sends the request, nothing answers, and the access
 * completes with all-ones for a read and no effect for a write, as
 * pci_generic_config_read() returns whatever the controller's window gave.
 */
static bool loop_cfg_link_lost(struct pci_bus *bus, unsigned int devfn)
{
	struct pci_epc_loop *loop = bus->sysdata;

	if (!pci_is_root_bus(bus) || PCI_SLOT(devfn) ||
	    PCI_FUNC(devfn) >= LOOP_MAX_FUNCS || loop->rc_hotplug ||
	    loop_rc_up(loop))
		return false;
	atomic64_inc(&loop->rc_cfg_lost);
	return true;
}

static int loop_cfg_read(struct pci_bus *bus, unsigned int devfn, int where,
			 int size, u32 *val)
{
	struct pci_epc_loop *loop = bus->sysdata;
	struct loop_fn *fn = loop_cfg_fn(bus, devfn);
	unsigned long flags;

	if (!fn && loop_cfg_link_lost(bus, devfn)) {
		*val = ~0U;
		return PCIBIOS_SUCCESSFUL;
	}
	if (!fn || where < 0 || where + size > LOOP_CFG_SIZE) {
		*val = ~0U;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	atomic64_inc(&loop->stats.cfg_reads);

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	*val = cfg_get(fn, where, size);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
	return PCIBIOS_SUCCESSFUL;
}

static bool cfg_overlaps(int where, int size, int reg, int len)
{
	return where < reg + len && reg < where + size;
}

static int loop_cfg_write(struct pci_bus *bus, unsigned int devfn, int where,
			  int size, u32 val)
{
	struct pci_epc_loop *loop = bus->sysdata;
	struct loop_fn *fn = loop_cfg_fn(bus, devfn);
	bool kick = false, bme = false;
	unsigned long flags;
	u16 old_cmd, cmd;
	int i;

	if (!fn && loop_cfg_link_lost(bus, devfn))
		return PCIBIOS_SUCCESSFUL;
	if (!fn || where < 0 || where + size > LOOP_CFG_SIZE)
		return PCIBIOS_DEVICE_NOT_FOUND;
	atomic64_inc(&loop->stats.cfg_writes);

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	old_cmd = cfg_get(fn, PCI_COMMAND, 2);
	for (i = 0; i < size; i++) {
		u8 v = val >> (8 * i), *c = &fn->cfg[where + i];
		u8 wm = fn->wmask[where + i], w1c = fn->w1cmask[where + i];

		*c = ((*c & ~wm) | (v & wm)) & ~(v & w1c);
	}
	cmd = cfg_get(fn, PCI_COMMAND, 2);
	if ((old_cmd & PCI_COMMAND_INTX_DISABLE) &&
	    !(cmd & PCI_COMMAND_INTX_DISABLE))
		kick = true;
	if (!(old_cmd & PCI_COMMAND_MASTER) && (cmd & PCI_COMMAND_MASTER))
		bme = true;
	/* Unmasking or enabling MSI/MSI-X may release held vectors */
	if (cfg_overlaps(where, size, LOOP_CAP_MSI + PCI_MSI_FLAGS, 2) ||
	    cfg_overlaps(where, size, LOOP_CAP_MSI + PCI_MSI_MASK_64, 4) ||
	    cfg_overlaps(where, size, LOOP_CAP_MSIX + PCI_MSIX_FLAGS, 2))
		kick = true;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	/* Both run from process context, never under the PCI core's lock */
	if (kick)
		loop_irq_kick(loop);
	if (bme)
		queue_work(loop->link_wq, &loop->bme_work);
	return PCIBIOS_SUCCESSFUL;
}

struct pci_ops loop_pci_ops = {
	.read	= loop_cfg_read,
	.write	= loop_cfg_write,
};
