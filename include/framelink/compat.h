/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: kernel version differences of the endpoint and PCI APIs, in one place, for
 * every module of the project: the endpoint function and host drivers (drivers/framelink) and
 * the loopback endpoint controller (drivers/pci-epc-loop, its own section below).
 *
 * The drivers are written against 6.12. The FL_HAVE_* macros come from feature tests on the
 * kernel's own headers (scripts/features.kbuild), not from LINUX_VERSION_CODE: distribution
 * and JetPack kernels backport endpoint API changes (Debian's 6.12 has align_addr and the
 * bus master notification of 6.13). Built against 6.1, 6.12 and the newest Debian kernel;
 * only 6.12 runs in the test VM.
 */
#ifndef _FRAMELINK_COMPAT_H
#define _FRAMELINK_COMPAT_H

#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/irqdomain.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/msi.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/pci-epf.h>
#include <linux/platform_device.h>

/*
 * Interrupt types, two separate items. Host: INTx is PCI_IRQ_INTX since 6.8, PCI_IRQ_LEGACY
 * before. Endpoint: pci_epc_raise_irq() takes the PCI_IRQ_* flags since 6.8, before it took
 * enum pci_epc_irq_type, with other values. FL_EPC_IRQ_TYPE is the type of the interrupt
 * type argument of pci_epc_ops.raise_irq (what a controller implements).
 */
#ifdef FL_HAVE_PCI_IRQ_INTX
#define FL_HOST_IRQ_INTX	PCI_IRQ_INTX
#else
#define FL_HOST_IRQ_INTX	PCI_IRQ_LEGACY
#endif

#ifdef FL_HAVE_EPC_IRQ_TYPE_ENUM
#define FL_EPC_IRQ_TYPE		enum pci_epc_irq_type
#define FL_EPC_IRQ_INTX		PCI_EPC_IRQ_LEGACY
#define FL_EPC_IRQ_MSI		PCI_EPC_IRQ_MSI
#define FL_EPC_IRQ_MSIX		PCI_EPC_IRQ_MSIX
#else
#define FL_EPC_IRQ_TYPE		unsigned int
#define FL_EPC_IRQ_INTX		PCI_IRQ_INTX
#define FL_EPC_IRQ_MSI		PCI_IRQ_MSI
#define FL_EPC_IRQ_MSIX		PCI_IRQ_MSIX
#endif

/* vm_flags became write-protected behind vm_flags_set() in 6.3. */
/* hrtimer_setup() (mainline 6.13) replaced hrtimer_init() and setting ->function */
#ifdef FL_HAVE_HRTIMER_SETUP
#define fl_hrtimer_setup	hrtimer_setup
#else
static inline void fl_hrtimer_setup(struct hrtimer *timer,
				    enum hrtimer_restart (*function)(struct hrtimer *),
				    clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

#ifndef FL_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* framelink-host (issue 8): vm_flags_clear(), same 6.3 change as vm_flags_set(). */
#ifndef FL_HAVE_VM_FLAGS_SET
static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * What a controller allows for one BAR: struct pci_epc_bar_desc since 6.9, bitmaps and an
 * array of fixed sizes before.
 */
static inline bool fl_epc_bar_reserved(const struct pci_epc_features *f, enum pci_barno bar)
{
#ifdef FL_HAVE_BAR_DESC
	return f->bar[bar].type == BAR_RESERVED;
#else
	return f->reserved_bar & BIT(bar);
#endif
}

/* Return: the size the hardware fixes for @bar, 0 when it is programmable. */
static inline u64 fl_epc_bar_fixed_size(const struct pci_epc_features *f, enum pci_barno bar)
{
#ifdef FL_HAVE_BAR_DESC
	return f->bar[bar].type == BAR_FIXED ? f->bar[bar].fixed_size : 0;
#else
	return f->bar_fixed_size[bar];
#endif
}

/*
 * pci_epf_alloc_space() took the alignment before 6.9, the controller's features since
 * (tested on its own, not inferred from the BAR descriptions of the same release).
 */
static inline void *fl_epf_alloc_space(struct pci_epf *epf, size_t size, enum pci_barno bar,
				       const struct pci_epc_features *f)
{
#ifdef FL_HAVE_ALLOC_SPACE_FEATURES
	return pci_epf_alloc_space(epf, size, bar, f, PRIMARY_INTERFACE);
#else
	return pci_epf_alloc_space(epf, size, bar, f->align, PRIMARY_INTERFACE);
#endif
}

/* pci_epf_driver.ops lost its const-less form and .probe gained the id in 6.4. */
#ifdef FL_HAVE_EPF_CONST_OPS
#define FL_EPF_OPS_CONST	const
#else
#define FL_EPF_OPS_CONST
#endif

/* The parameters of pci_epf_driver.probe: fl_epf_probe(FL_EPF_PROBE_PARAMS) */
#ifdef FL_HAVE_EPF_PROBE_ID
#define FL_EPF_PROBE_PARAMS	struct pci_epf *epf, const struct pci_epf_device_id *id
#else
#define FL_EPF_PROBE_PARAMS	struct pci_epf *epf
#endif

/*
 * ---- Endpoint events (Documentation/kernel-apis.rst, "Event delivery") ----
 * A kernel delivers controller events to an EPF in one or both of two ways:
 * - struct pci_epc_event_ops in the EPF (6.4 and later, NVIDIA's 5.15 and 6.8), with that
 *   kernel's members, each tested on its own: epc_init or core_init, void epc_deinit (6.11)
 *   or int core_deinit (NVIDIA's kernels only), link_up, link_down;
 * - the controller's atomic notifier chain with CORE_INIT and LINK_UP (before 6.4, and still
 *   LINK_UP on NVIDIA's 5.15, raised from the controller's hard IRQ handler).
 * A kernel may have both (NVIDIA's 5.15): the driver listens to both. compat.h only connects
 * them to the driver's fl_ev_deliver() (epf/events.c), which decides what runs where and acts
 * once per event whichever way it came.
 */

/**
 * enum fl_ev - a controller event, whichever way the kernel delivers it
 * @FL_EV_INIT: the controller is initialised (epc_init, core_init, CORE_INIT)
 * @FL_EV_DEINIT: the controller goes away (epc_deinit, core_deinit)
 * @FL_EV_LINK_UP: the link is up (link_up, LINK_UP)
 * @FL_EV_LINK_DOWN: the link is down (link_down)
 */
enum fl_ev {
	FL_EV_INIT,
	FL_EV_DEINIT,
	FL_EV_LINK_UP,
	FL_EV_LINK_DOWN,
};

/**
 * enum fl_ev_via - the mechanism an event came through
 * @FL_EV_VIA_OPS: struct pci_epc_event_ops
 * @FL_EV_VIA_NOTIFIER: the controller's atomic notifier chain
 * @FL_EV_VIA_BIND: the driver's own bind (the controller sends no such event)
 */
enum fl_ev_via {
	FL_EV_VIA_OPS,
	FL_EV_VIA_NOTIFIER,
	FL_EV_VIA_BIND,
};

int fl_ev_deliver(struct pci_epf *epf, enum fl_ev ev, enum fl_ev_via via);

#ifdef FL_HAVE_EPC_EVENT_OPS
#if !defined(FL_HAVE_EVENT_EPC_INIT) && !defined(FL_HAVE_EVENT_CORE_INIT)
#error "framelink: struct pci_epc_event_ops has neither epc_init nor core_init"
#endif
#if !defined(FL_HAVE_EVENT_LINK_UP) && !defined(FL_HAVE_EPC_NOTIFIER)
#error "framelink: no link_up event op and no controller notifier: link up never arrives"
#endif

static inline int fl_compat_ev_init(struct pci_epf *epf)
{
	return fl_ev_deliver(epf, FL_EV_INIT, FL_EV_VIA_OPS);
}

#if defined(FL_HAVE_EVENT_EPC_DEINIT)
static inline void fl_compat_ev_deinit(struct pci_epf *epf)
{
	fl_ev_deliver(epf, FL_EV_DEINIT, FL_EV_VIA_OPS);
}
#elif defined(FL_HAVE_EVENT_CORE_DEINIT)
static inline int fl_compat_ev_deinit(struct pci_epf *epf)
{
	return fl_ev_deliver(epf, FL_EV_DEINIT, FL_EV_VIA_OPS);
}
#endif

#ifdef FL_HAVE_EVENT_LINK_UP
static inline int fl_compat_ev_link_up(struct pci_epf *epf)
{
	return fl_ev_deliver(epf, FL_EV_LINK_UP, FL_EV_VIA_OPS);
}
#endif

#ifdef FL_HAVE_EVENT_LINK_DOWN
static inline int fl_compat_ev_link_down(struct pci_epf *epf)
{
	return fl_ev_deliver(epf, FL_EV_LINK_DOWN, FL_EV_VIA_OPS);
}
#endif

/* Every member this kernel has is set: NVIDIA's deinit path calls without a NULL check */
static const struct pci_epc_event_ops fl_compat_event_ops __maybe_unused = {
#ifdef FL_HAVE_EVENT_EPC_INIT
	.epc_init	= fl_compat_ev_init,
#else
	.core_init	= fl_compat_ev_init,
#endif
#if defined(FL_HAVE_EVENT_EPC_DEINIT)
	.epc_deinit	= fl_compat_ev_deinit,
#elif defined(FL_HAVE_EVENT_CORE_DEINIT)
	.core_deinit	= fl_compat_ev_deinit,
#endif
#ifdef FL_HAVE_EVENT_LINK_UP
	.link_up	= fl_compat_ev_link_up,
#endif
#ifdef FL_HAVE_EVENT_LINK_DOWN
	.link_down	= fl_compat_ev_link_down,
#endif
};

/* At probe: the function's event ops, set once for its whole life */
static inline void fl_compat_set_event_ops(struct pci_epf *epf)
{
	epf->event_ops = &fl_compat_event_ops;
}
#else
static inline void fl_compat_set_event_ops(struct pci_epf *epf)
{
}
#endif /* FL_HAVE_EPC_EVENT_OPS */

#ifdef FL_HAVE_EPC_NOTIFIER
#define FL_COMPAT_NOTIFIER	1

/* The notifier's event as an FL_EV_*, or -1 for one framelink does not handle */
static inline int fl_compat_notifier_event(unsigned long event)
{
#ifdef FL_HAVE_NOTIFY_CORE_INIT
	if (event == CORE_INIT)
		return FL_EV_INIT;
#endif
	if (event == LINK_UP)
		return FL_EV_LINK_UP;
	return -1;
}

static inline int fl_compat_notifier_register(struct pci_epc *epc, struct notifier_block *nb)
{
	return pci_epc_register_notifier(epc, nb);
}

/* No unregister helper in any kernel with the chain; this one waits for calls in flight */
static inline void fl_compat_notifier_unregister(struct pci_epc *epc, struct notifier_block *nb)
{
	atomic_notifier_chain_unregister(&epc->notifier, nb);
}
#else
#define FL_COMPAT_NOTIFIER	0

static inline int fl_compat_notifier_event(unsigned long event)
{
	return -1;
}

static inline int fl_compat_notifier_register(struct pci_epc *epc, struct notifier_block *nb)
{
	return 0;
}

static inline void fl_compat_notifier_unregister(struct pci_epc *epc, struct notifier_block *nb)
{
}
#endif /* FL_HAVE_EPC_NOTIFIER */

/*
 * Does the controller tell this function about its init? Since 6.11 the core replays a past
 * init to a function bound after it (pci_epc_notify_pending_init()), and a controller that
 * initialises at probe reports it too. Before (and on NVIDIA's 5.15 and 6.8) a controller
 * without core_init_notifier sends nothing: as those kernels' pci-epf-test, the function
 * initialises at bind.
 */
static inline bool fl_compat_init_by_event(const struct pci_epc_features *f)
{
#if defined(FL_HAVE_NOTIFY_PENDING_INIT)
	return true;
#elif defined(FL_HAVE_CORE_INIT_NOTIFIER)
	return f->core_init_notifier;
#else
	return false;
#endif
}

/* ---- end of the endpoint events ---- */

/*
 * Controller side: the loopback endpoint controller and host bridge (drivers/pci-epc-loop).
 * The interrupt types above and FL_HAVE_BAR_DESC are shared with the function side.
 */

/*
 * NVIDIA's endpoint core (JetPack 6's 5.15, JetPack 7's 6.8; the lab boots both as patches/nv
 * on Debian's trees): its event ops have int (*core_deinit)(), which no mainline kernel has,
 * and its pci_epc_linkup() may be called from the controller's hard IRQ handler.
 */
#ifdef FL_HAVE_EVENT_CORE_DEINIT
#define FL_NV_EPC_CORE		1
#else
#define FL_NV_EPC_CORE		0
#endif
/* JetPack 7's core (NVIDIA's 6.8) also has link_down; JetPack 6's does not */
#if defined(FL_HAVE_EVENT_CORE_DEINIT) && defined(FL_HAVE_EVENT_LINK_DOWN)
#define FL_NV_EPC_CORE_JP7	1
#else
#define FL_NV_EPC_CORE_JP7	0
#endif

/*
 * pci_dev_set_disconnected() is private to the PCI core (drivers/pci/pci.h, every version):
 * mark the device permanently failed the same way, so drivers see a surprise removal.
 */
static inline void fl_pci_dev_set_disconnected(struct pci_dev *pdev)
{
	WRITE_ONCE(pdev->error_state, pci_channel_io_perm_failure);
}

/* pci_epc_ops.align_addr came in 6.13 (backported to Debian's 6.12): not set before. */
static inline void
fl_epc_set_align_addr(struct pci_epc_ops *ops,
		      u64 (*fn)(struct pci_epc *epc, u64 pci_addr, size_t *size, size_t *offset))
{
#ifdef FL_HAVE_ALIGN_ADDR
	ops->align_addr = fn;
#endif
}

/*
 * The MSI-X vector count pci_epc_ops.set_msix receives: a count since mainline de0321bcc5fd
 * ("PCI: endpoint: Align pci_epc_set_msix(), pci_epc_ops::set_msix() nr_irqs encoding",
 * 6.16, backported to 6.12.y), the Table Size field's N-1 encoding before (6.1's
 * pci_epc_set_msix() passes "interrupts - 1"). The op's parameter was renamed to nr_irqs by
 * the same commit: that is the feature test.
 */
static inline u16 fl_epc_msix_count(u16 op_arg)
{
#ifdef FL_HAVE_EPC_SET_MSIX_NR_IRQS
	return op_arg;
#else
	return op_arg + 1;
#endif
}

/*
 * MSI and the MSI-X reads, as counts since mainline 6.16 (f62da6e7270c set_msi,
 * f7f15fc53245 get_msi, 0917ed8f16b6 get_msix, one merge; none of them in Debian's 6.12),
 * in the capability's encodings before: set_msi gets and get_msi returns the Multiple
 * Message log2, get_msix returns Table Size (count - 1). The controller keeps encodings.
 */
static inline u8 fl_epc_msi_log2(u8 op_arg)
{
#ifdef FL_HAVE_EPC_MSI_COUNTS
	return order_base_2(op_arg);
#else
	return op_arg;
#endif
}

static inline int fl_epc_msi_ret(int mme)
{
#ifdef FL_HAVE_EPC_MSI_COUNTS
	return mme < 0 ? mme : 1 << mme;
#else
	return mme;
#endif
}

static inline int fl_epc_msix_ret(int qsize)
{
#ifdef FL_HAVE_EPC_MSI_COUNTS
	return qsize < 0 ? qsize : qsize + 1;
#else
	return qsize;
#endif
}

/* pci_epc_linkdown() came in 6.4: before, there is no one to tell. */
static inline void fl_epc_linkdown(struct pci_epc *epc)
{
#ifdef FL_HAVE_LINKDOWN
	pci_epc_linkdown(epc);
#endif
}

/* pci_epc_deinit_notify() came in 6.11: before, there is no one to tell. */
static inline void fl_epc_deinit_notify(struct pci_epc *epc)
{
#ifdef FL_HAVE_DEINIT_NOTIFY
	pci_epc_deinit_notify(epc);
#endif
}

/* pci_epc_bus_master_enable_notify() came in 6.13 (in Debian's 6.12): before, no one to tell. */
static inline void fl_epc_bme_notify(struct pci_epc *epc)
{
#ifdef FL_HAVE_BME_NOTIFY
	pci_epc_bus_master_enable_notify(epc);
#endif
}

/* platform_driver.remove returns void since 6.11 (.remove_new before). */
#ifdef FL_HAVE_VOID_REMOVE
#define FL_PLATFORM_REMOVE(fn)	.remove = (fn)
#else
#define FL_PLATFORM_REMOVE(fn)	.remove_new = (fn)
#endif

/**
 * struct fl_epc_bar_caps - what a controller allows for one BAR, on every kernel
 * @reserved: the EPF must not use it
 * @fixed_size: size fixed by hardware, 0 = programmable
 * @only_64bit: must be 64-bit (the next BAR is then reserved)
 */
struct fl_epc_bar_caps {
	bool reserved;
	u64 fixed_size;
	bool only_64bit;
};

/*
 * Fill pci_epc_features from @bar: struct pci_epc_bar_desc per BAR since 6.9, bitmaps and an
 * array of fixed sizes before (the controller side of fl_epc_bar_reserved() above).
 */
static inline void fl_epc_set_bar_features(struct pci_epc_features *f,
					   const struct fl_epc_bar_caps *bar)
{
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
#ifdef FL_HAVE_BAR_DESC
		f->bar[i].type = bar[i].reserved ? BAR_RESERVED :
				 bar[i].fixed_size ? BAR_FIXED :
				 BAR_PROGRAMMABLE;
		f->bar[i].fixed_size = bar[i].fixed_size;
		f->bar[i].only_64bit = bar[i].only_64bit;
#else
		if (bar[i].reserved)
			f->reserved_bar |= BIT(i);
		if (bar[i].only_64bit)
			f->bar_fixed_64bit |= BIT(i);
		f->bar_fixed_size[i] = bar[i].fixed_size;
#endif
	}
}

/* MSI_FLAG_NO_AFFINITY came in 6.10: before, the base chip's affinity op is used. */
#ifdef FL_HAVE_NO_AFFINITY
#define FL_MSI_FLAG_NO_AFFINITY	MSI_FLAG_NO_AFFINITY
#else
#define FL_MSI_FLAG_NO_AFFINITY	0
#endif

/*
 * The loopback's software MSI controller. Without MSI parent domains (before 6.16) a
 * PCI/MSI domain is stacked on the base domain with pci_msi_create_irq_domain() (as vmd.c
 * did); with them the base domain is an MSI parent and the PCI core creates per-device
 * domains under it (pci_msi_create_irq_domain() is gone in 6.19).
 */
#ifdef FL_HAVE_MSI_PARENT
#include <linux/irqchip/irq-msi-lib.h>

static const struct msi_parent_ops fl_loop_msi_parent_ops = {
	.supported_flags	= MSI_GENERIC_FLAGS_MASK | MSI_FLAG_PCI_MSIX |
				  MSI_FLAG_MULTI_PCI_MSI,
	.required_flags		= MSI_FLAG_USE_DEF_DOM_OPS |
				  MSI_FLAG_USE_DEF_CHIP_OPS |
				  MSI_FLAG_NO_AFFINITY,
	.bus_select_token	= DOMAIN_BUS_NEXUS,
	.bus_select_mask	= MATCH_PCI_MSI,
	.prefix			= "LOOP-",
	.init_dev_msi_info	= msi_lib_init_dev_msi_info,
};

static inline int
fl_loop_msi_domains(struct fwnode_handle *fn_base, struct fwnode_handle *fn_msi,
		    const struct irq_domain_ops *ops, void *host_data, unsigned int size,
		    struct msi_domain_info *pci_info, struct irq_domain **base,
		    struct irq_domain **msi)
{
	struct irq_domain_info info = {
		.fwnode		= fn_base,
		.size		= size,
		.hwirq_max	= size,
		.ops		= ops,
		.host_data	= host_data,
	};

	*base = msi_create_parent_irq_domain(&info, &fl_loop_msi_parent_ops);
	*msi = *base;
	return *base ? 0 : -ENOMEM;
}
#else
static inline int
fl_loop_msi_domains(struct fwnode_handle *fn_base, struct fwnode_handle *fn_msi,
		    const struct irq_domain_ops *ops, void *host_data, unsigned int size,
		    struct msi_domain_info *pci_info, struct irq_domain **base,
		    struct irq_domain **msi)
{
	*base = irq_domain_create_linear(fn_base, size, ops, host_data);
	if (!*base)
		return -ENOMEM;
	*msi = pci_msi_create_irq_domain(fn_msi, pci_info, *base);
	if (!*msi) {
		irq_domain_remove(*base);
		*base = NULL;
		return -ENOMEM;
	}
	return 0;
}
#endif

/*
 * PERST# lifecycle of the loopback (drivers/pci-epc-loop/perst.c): before 6.11 a controller
 * whose core comes up only at PERST# deassert sets core_init_notifier, and EPFs wait for
 * CORE_INIT instead of initialising at bind. Since 6.11 the EPC core tracks init_complete.
 */
static inline void fl_epc_set_core_init_notifier(struct pci_epc_features *f, bool on)
{
#ifdef FL_HAVE_CORE_INIT_NOTIFIER
	f->core_init_notifier = on;
#endif
}

/*
 * framelink-host (issue 8 item 6, host/bufs.c): clearing the page table entries of a PFN map
 * is zap_vma_ptes() up to 6.x and zap_special_vma_range() in 7.3 (mm/memory.c; same checks:
 * the range inside the VMA, VM_PFNMAP or VM_MIXEDMAP).
 */
static inline void fl_zap_pfn_vma(struct vm_area_struct *vma)
{
#ifdef FL_HAVE_ZAP_SPECIAL_VMA_RANGE
	zap_special_vma_range(vma, vma->vm_start, vma->vm_end - vma->vm_start);
#else
	zap_vma_ptes(vma, vma->vm_start, vma->vm_end - vma->vm_start);
#endif
}

/*
 * framelink-epf slot export (issue 11, epf/export.c): the dma-buf functions live in the
 * DMA_BUF symbol namespace (since 5.16), which MODULE_IMPORT_NS() names by an identifier
 * before 6.13 and by a string literal since (include/linux/module.h). The dma_buf_ops the
 * export uses (attach, detach, map/unmap_dma_buf, release, begin/end_cpu_access, mmap) have
 * the same signatures in 6.1, 6.12 and 7.3; it implements no vmap, so the
 * dma_buf_map/iosys_map rename (6.0) does not reach it.
 */
#ifdef FL_HAVE_IMPORT_NS_STRING
#define FL_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#else
#define FL_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#endif

/*
 * framelink-host dma-buf import (issue 11, host/import.c): since 6.2 an importer that does
 * not hold the reservation lock maps with dma_buf_map_attachment_unlocked(); before, plain
 * dma_buf_map_attachment() took the lock itself where it needed it.
 */
#ifdef FL_HAVE_DMA_BUF_MAP_UNLOCKED
#define fl_dma_buf_map(att, dir)	dma_buf_map_attachment_unlocked(att, dir)
#define fl_dma_buf_unmap(att, sgt, dir)	dma_buf_unmap_attachment_unlocked(att, sgt, dir)
#else
#define fl_dma_buf_map(att, dir)	dma_buf_map_attachment(att, dir)
#define fl_dma_buf_unmap(att, sgt, dir)	dma_buf_unmap_attachment(att, sgt, dir)
#endif

/*
 * A device's dma-coherent flag (tests/modules/fl-coherent, the lab's coherent importer): a
 * bit of struct device's flags with accessors in 7.x (include/linux/device.h), a bool field
 * (dev->dma_coherent) in 6.1 and 6.12.
 */
#ifdef FL_HAVE_DEV_COHERENT_FLAG
#define fl_dev_set_dma_coherent(dev, v)	dev_assign_dma_coherent(dev, v)
#else
#define fl_dev_set_dma_coherent(dev, v)	((dev)->dma_coherent = (v))
#endif

/*
 * framelink-host implicit fences of imports (issue 27 item 3.8, host/fence.c). Since 5.19
 * a dma_resv holds fences by usage (include/linux/dma-resv.h: WRITE, READ); before, one
 * exclusive (write) fence and shared (read) ones. Writers are the WRITE usage, or the
 * exclusive fence; our read fence is a READ one, or a shared one. Replacing our fences at
 * release (dma_resv_replace_fences()) exists since 5.19 only: before, a signalled fence of
 * ours stays in the list until another fence replaces it.
 */
static inline bool fl_resv_writers_done(struct dma_resv *resv)
{
#ifdef FL_HAVE_DMA_RESV_USAGE
	return dma_resv_test_signaled(resv, DMA_RESV_USAGE_WRITE);
#else
	return dma_resv_test_signaled(resv, false);
#endif
}

static inline long fl_resv_wait_writers(struct dma_resv *resv, unsigned long timeout)
{
#ifdef FL_HAVE_DMA_RESV_USAGE
	return dma_resv_wait_timeout(resv, DMA_RESV_USAGE_WRITE, true, timeout);
#else
	return dma_resv_wait_timeout(resv, false, true, timeout);
#endif
}

/* One fence slot reserved, then our read fence added: the dma_resv lock held throughout */
static inline int fl_resv_add_reader(struct dma_resv *resv, struct dma_fence *fence)
{
	int ret;

#ifdef FL_HAVE_DMA_RESV_USAGE
	ret = dma_resv_reserve_fences(resv, 1);
	if (!ret)
		dma_resv_add_fence(resv, fence, DMA_RESV_USAGE_READ);
#else
	ret = dma_resv_reserve_shared(resv, 1);
	if (!ret)
		dma_resv_add_shared_fence(resv, fence);
#endif
	return ret;
}

static inline void fl_resv_drop_context(struct dma_resv *resv, u64 context)
{
#ifdef FL_HAVE_DMA_RESV_USAGE
	struct dma_fence *stub = dma_fence_get_stub();

	dma_resv_replace_fences(resv, context, stub, DMA_RESV_USAGE_READ);
	dma_fence_put(stub);
#endif
}

/*
 * A reference on a file unless its last one is gone (framelink-epf export.c, issue 27 item
 * 3.6): get_file_active() since 6.7 (fs/file.c; f_count became a file_ref_t later), the
 * get_file_rcu() macro, an inc-not-zero of f_count, before. The caller knows the struct file
 * is not freed yet (a dma-buf still listed before its release op ran).
 */
#ifdef FL_HAVE_GET_FILE_ACTIVE
static inline struct file *fl_get_file_active(struct file **f)
{
	return get_file_active(f);
}
#else
static inline struct file *fl_get_file_active(struct file **f)
{
	return get_file_rcu(*f) ? *f : NULL;
}
#endif

/*
 * vb2_ops members that drop and take vb2_queue.lock around a blocking DQBUF: needed until
 * mainline 7.0 removed them (the core does it with the queue's lock). Expands inside an
 * initializer of struct vb2_ops.
 */
#ifdef FL_HAVE_VB2_WAIT_PREPARE
#define FL_VB2_WAIT_OPS \
	.wait_prepare = vb2_ops_wait_prepare, \
	.wait_finish = vb2_ops_wait_finish,
#else
#define FL_VB2_WAIT_OPS
#endif

#endif /* _FRAMELINK_COMPAT_H */
