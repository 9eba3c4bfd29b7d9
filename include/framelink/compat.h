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
 * ---- Endpoint event callback names, item by item (issue 9 section 1) ----
 * The driver writes its callbacks in 6.11's shape, as struct fl_epc_event_ops: epc_init,
 * void epc_deinit, link_up, link_down. Three cases (Documentation/kernel-apis.rst):
 * - FL_EVENTS_NATIVE: the kernel's struct pci_epc_event_ops has that shape (6.11 and later):
 *   the driver's ops are the kernel's.
 * - FL_EVENTS_RENAMED: event ops with other members: core_init (6.4-6.10, NVIDIA's 5.15),
 *   core_deinit returning int (NVIDIA's 5.15 only), no epc_deinit (6.4-6.10), no link_down
 *   (NVIDIA's 5.15). Each member is tested on its own and reached through a trampoline.
 * - neither: no event ops, the notifier block below (before 6.4).
 */
#if defined(FL_HAVE_EPC_EVENT_OPS) && defined(FL_HAVE_EVENT_EPC_INIT) && \
	defined(FL_HAVE_EVENT_EPC_DEINIT) && defined(FL_HAVE_EVENT_LINK_UP) && \
	defined(FL_HAVE_EVENT_LINK_DOWN)
#define FL_EVENTS_NATIVE
#define fl_epc_event_ops pci_epc_event_ops
#elif defined(FL_HAVE_EPC_EVENT_OPS)
#define FL_EVENTS_RENAMED
#else
/* The notifier block defines struct pci_epc_event_ops in the driver's shape. */
#define fl_epc_event_ops pci_epc_event_ops
#endif

#ifdef FL_EVENTS_RENAMED
#if !defined(FL_HAVE_EVENT_EPC_INIT) && !defined(FL_HAVE_EVENT_CORE_INIT)
#error "framelink: struct pci_epc_event_ops has neither epc_init nor core_init"
#endif
#ifndef FL_HAVE_EVENT_LINK_UP
#error "framelink: struct pci_epc_event_ops has no link_up (link up only by notifier?)"
#endif

/**
 * struct fl_epc_event_ops - the driver's endpoint event callbacks, in 6.11's shape
 * @epc_init: the controller is initialised (core_init before 6.11)
 * @epc_deinit: the controller goes away (core_deinit on NVIDIA's 5.15; not called on 6.4-6.10)
 * @link_up: the link is up
 * @link_down: the link is down (not called on NVIDIA's 5.15)
 */
struct fl_epc_event_ops {
	int (*epc_init)(struct pci_epf *epf);
	void (*epc_deinit)(struct pci_epf *epf);
	int (*link_up)(struct pci_epf *epf);
	int (*link_down)(struct pci_epf *epf);
};

/* One EPF driver per module: its ops, set at probe and used in the same file. */
static const struct fl_epc_event_ops *fl_events_drv __maybe_unused;

static inline int fl_events_init(struct pci_epf *epf)
{
	return fl_events_drv->epc_init(epf);
}

#if defined(FL_HAVE_EVENT_EPC_DEINIT)
static inline void fl_events_deinit(struct pci_epf *epf)
{
	fl_events_drv->epc_deinit(epf);
}
#elif defined(FL_HAVE_EVENT_CORE_DEINIT)
static inline int fl_events_deinit(struct pci_epf *epf)
{
	fl_events_drv->epc_deinit(epf);
	return 0;
}
#endif

static inline int fl_events_link_up(struct pci_epf *epf)
{
	return fl_events_drv->link_up(epf);
}

#ifdef FL_HAVE_EVENT_LINK_DOWN
static inline int fl_events_link_down(struct pci_epf *epf)
{
	return fl_events_drv->link_down(epf);
}
#endif

static const struct pci_epc_event_ops fl_events_kernel_ops __maybe_unused = {
#ifdef FL_HAVE_EVENT_EPC_INIT
	.epc_init	= fl_events_init,
#else
	.core_init	= fl_events_init,
#endif
#if defined(FL_HAVE_EVENT_EPC_DEINIT)
	.epc_deinit	= fl_events_deinit,
#elif defined(FL_HAVE_EVENT_CORE_DEINIT)
	.core_deinit	= fl_events_deinit,
#endif
	.link_up	= fl_events_link_up,
#ifdef FL_HAVE_EVENT_LINK_DOWN
	.link_down	= fl_events_link_down,
#endif
};

static inline void fl_epf_events_set(struct pci_epf *epf, const struct fl_epc_event_ops *ops)
{
	fl_events_drv = ops;
	epf->event_ops = &fl_events_kernel_ops;
}

/**
 * struct fl_epf_events - per-function event state (none needed with event ops)
 * @unused: keeps the struct non-empty.
 */
struct fl_epf_events {
	int unused;
};

/*
 * Before 6.11 the EPC core does not replay a past initialisation at bind: as pci-epf-test
 * of those kernels, a controller without core_init_notifier (linkup_notifier) gets
 * epc_init (link_up) from the bind itself.
 */
static inline int fl_epf_events_bind(struct fl_epf_events *ev, struct pci_epf *epf,
				     const struct pci_epc_features *f)
{
	int ret;

#ifdef FL_HAVE_CORE_INIT_NOTIFIER
	if (f->core_init_notifier)
		return 0;
#endif
	ret = fl_events_drv->epc_init(epf);
	if (ret || f->linkup_notifier)
		return ret;
	return fl_events_drv->link_up(epf);
}

static inline void fl_epf_events_unbind(struct fl_epf_events *ev, struct pci_epf *epf)
{
}
#endif /* FL_EVENTS_RENAMED */
/* ---- end of the event callback names ---- */

/*
 * Endpoint events: struct pci_epc_event_ops in the EPF since 6.4 (deinit and link down
 * since 6.11), an atomic notifier with CORE_INIT and LINK_UP before (5.10, 5.15, 6.1).
 *
 * The notifier is atomic: pci_epc_linkup() and pci_epc_init_notify() call it with
 * atomic_notifier_call_chain(), i.e. under rcu_read_lock() and possibly from the
 * controller's interrupt handler, while the driver's ops sleep (mutexes, EPC calls,
 * kthread_create()). So the notifier only records the event and queues a work item that
 * runs the op in process context; fl_epf_events_unbind() unregisters the notifier (the
 * chain's unregister waits for callers in flight) and then cancels the work, so nothing
 * refers to the function after unbind. A controller without core_init_notifier
 * (linkup_notifier) gets epc_init (link_up) at bind, from the bind context.
 * On >= 6.4 the EPC core calls the ops itself (with epf->lock held): nothing to do here.
 */
#if defined(FL_EVENTS_NATIVE)
/**
 * struct fl_epf_events - per-function state of the pre-6.4 event notifier (none here)
 * @unused: keeps the struct non-empty.
 */
struct fl_epf_events {
	int unused;
};

static inline int fl_epf_events_bind(struct fl_epf_events *ev, struct pci_epf *epf,
				     const struct pci_epc_features *f)
{
	return 0;
}

static inline void fl_epf_events_unbind(struct fl_epf_events *ev, struct pci_epf *epf)
{
}

static inline void fl_epf_events_set(struct pci_epf *epf, const struct pci_epc_event_ops *ops)
{
	epf->event_ops = ops;
}
#elif !defined(FL_EVENTS_RENAMED)
#include <linux/bitops.h>
#include <linux/workqueue.h>

struct pci_epc_event_ops {
	int (*epc_init)(struct pci_epf *epf);
	void (*epc_deinit)(struct pci_epf *epf);
	int (*link_up)(struct pci_epf *epf);
	int (*link_down)(struct pci_epf *epf);
};

/* Bits of fl_epf_events.pending */
#define FL_EV_CORE_INIT		0
#define FL_EV_LINK_UP		1

/**
 * struct fl_epf_events - per-function state of the pre-6.4 event notifier
 * @nb: registered on the controller's atomic notifier chain.
 * @work: runs the driver's ops for the events recorded in @pending.
 * @epf: the function.
 * @pending: FL_EV_* bits set by the notifier, cleared by @work (atomic bitops).
 * @registered: @nb is on the chain (bind to unbind).
 */
struct fl_epf_events {
	struct notifier_block nb;
	struct work_struct work;
	struct pci_epf *epf;
	unsigned long pending;
	bool registered;
};

/* One EPF driver per module: the ops of that driver (set and used in one file). */
static const struct pci_epc_event_ops *fl_compat_event_ops __maybe_unused;

static inline void fl_epf_events_set(struct pci_epf *epf, const struct pci_epc_event_ops *ops)
{
	fl_compat_event_ops = ops;
}

/* Process context: the ops may sleep. CORE_INIT before LINK_UP, as the controller sends. */
static inline void fl_compat_events_work(struct work_struct *work)
{
	struct fl_epf_events *ev = container_of(work, struct fl_epf_events, work);

	if (test_and_clear_bit(FL_EV_CORE_INIT, &ev->pending) && fl_compat_event_ops->epc_init)
		fl_compat_event_ops->epc_init(ev->epf);
	if (test_and_clear_bit(FL_EV_LINK_UP, &ev->pending) && fl_compat_event_ops->link_up)
		fl_compat_event_ops->link_up(ev->epf);
}

/* Atomic context (RCU read side, maybe hard IRQ): record the event, never sleep */
static inline int fl_compat_epc_notify(struct notifier_block *nb, unsigned long event,
				       void *data)
{
	struct fl_epf_events *ev = container_of(nb, struct fl_epf_events, nb);

	if (event == CORE_INIT)
		set_bit(FL_EV_CORE_INIT, &ev->pending);
	else if (event == LINK_UP)
		set_bit(FL_EV_LINK_UP, &ev->pending);
	else
		return NOTIFY_DONE;
	schedule_work(&ev->work);
	return NOTIFY_OK;
}

static inline int fl_epf_events_bind(struct fl_epf_events *ev, struct pci_epf *epf,
				     const struct pci_epc_features *f)
{
	int ret;

	ev->epf = epf;
	ev->pending = 0;
	INIT_WORK(&ev->work, fl_compat_events_work);
	ev->nb.notifier_call = fl_compat_epc_notify;
	ret = pci_epc_register_notifier(epf->epc, &ev->nb);
	if (ret)
		return ret;
	ev->registered = true;
	if (f->core_init_notifier)
		return 0;
	ret = fl_compat_event_ops->epc_init(epf);
	if (ret || f->linkup_notifier)
		return ret;
	return fl_compat_event_ops->link_up(epf);
}

static inline void fl_epf_events_unbind(struct fl_epf_events *ev, struct pci_epf *epf)
{
	if (!ev->registered)
		return;
	/* No unregister helper before 6.4; this one waits for notifier calls in flight */
	atomic_notifier_chain_unregister(&epf->epc->notifier, &ev->nb);
	ev->registered = false;
	cancel_work_sync(&ev->work);
}
#endif

/*
 * Controller side: the loopback endpoint controller and host bridge (drivers/pci-epc-loop).
 * The interrupt types above and FL_HAVE_BAR_DESC are shared with the function side.
 */

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

#endif /* _FRAMELINK_COMPAT_H */
