/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: kernel version differences of the endpoint and PCI APIs, in one place.
 *
 * The drivers are written against 6.12. The FL_HAVE_* macros come from feature tests on the
 * kernel's own headers (scripts/features.kbuild), not from LINUX_VERSION_CODE: distribution
 * and JetPack kernels backport endpoint API changes. Built against 6.1, 6.12 and the newest
 * Debian kernel; only 6.12 runs in the test VM.
 */
#ifndef _FRAMELINK_COMPAT_H
#define _FRAMELINK_COMPAT_H

#include <linux/mm.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/pci-epf.h>

/*
 * Interrupt types. Since 6.9 pci_alloc_irq_vectors() and pci_epc_raise_irq() share the
 * PCI_IRQ_* flags; before, INTx was PCI_IRQ_LEGACY on the host and the endpoint used
 * enum pci_epc_irq_type, with other values.
 */
#ifdef FL_HAVE_PCI_IRQ_INTX
#define FL_HOST_IRQ_INTX	PCI_IRQ_INTX
#define FL_EPC_IRQ_INTX		PCI_IRQ_INTX
#define FL_EPC_IRQ_MSI		PCI_IRQ_MSI
#define FL_EPC_IRQ_MSIX		PCI_IRQ_MSIX
#else
#define FL_HOST_IRQ_INTX	PCI_IRQ_LEGACY
#define FL_EPC_IRQ_INTX		PCI_EPC_IRQ_LEGACY
#define FL_EPC_IRQ_MSI		PCI_EPC_IRQ_MSI
#define FL_EPC_IRQ_MSIX		PCI_EPC_IRQ_MSIX
#endif

/* vm_flags became write-protected behind vm_flags_set() in 6.3. */
#ifndef FL_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
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

/* pci_epf_alloc_space() took the alignment before 6.9, the controller's features since. */
static inline void *fl_epf_alloc_space(struct pci_epf *epf, size_t size, enum pci_barno bar,
				       const struct pci_epc_features *f)
{
#ifdef FL_HAVE_BAR_DESC
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
 * Endpoint events: struct pci_epc_event_ops in the EPF since 6.4 (deinit and link down
 * since 6.11), an atomic notifier with CORE_INIT and LINK_UP before. On the notifier, the
 * driver's ops run from the notifier call as pci-epf-test's do on those kernels, and a
 * controller without core_init_notifier (linkup_notifier) gets epc_init (link_up) at bind.
 */
#ifdef FL_HAVE_EPC_EVENT_OPS
static inline int fl_epf_events_bind(struct pci_epf *epf, const struct pci_epc_features *f)
{
	return 0;
}

static inline void fl_epf_events_set(struct pci_epf *epf, const struct pci_epc_event_ops *ops)
{
	epf->event_ops = ops;
}
#else
struct pci_epc_event_ops {
	int (*epc_init)(struct pci_epf *epf);
	void (*epc_deinit)(struct pci_epf *epf);
	int (*link_up)(struct pci_epf *epf);
	int (*link_down)(struct pci_epf *epf);
};

/* One EPF driver per module: the ops of that driver (set and used in one file). */
static const struct pci_epc_event_ops *fl_compat_event_ops __maybe_unused;

static inline void fl_epf_events_set(struct pci_epf *epf, const struct pci_epc_event_ops *ops)
{
	fl_compat_event_ops = ops;
}

static inline int fl_compat_epc_notify(struct notifier_block *nb, unsigned long event,
				       void *data)
{
	struct pci_epf *epf = container_of(nb, struct pci_epf, nb);
	int ret = 0;

	if (event == CORE_INIT && fl_compat_event_ops->epc_init)
		ret = fl_compat_event_ops->epc_init(epf);
	else if (event == LINK_UP && fl_compat_event_ops->link_up)
		ret = fl_compat_event_ops->link_up(epf);
	return ret ? NOTIFY_BAD : NOTIFY_OK;
}

static inline int fl_epf_events_bind(struct pci_epf *epf, const struct pci_epc_features *f)
{
	int ret;

	epf->nb.notifier_call = fl_compat_epc_notify;
	ret = pci_epc_register_notifier(epf->epc, &epf->nb);
	if (ret || f->core_init_notifier)
		return ret;
	ret = fl_compat_event_ops->epc_init(epf);
	if (ret || f->linkup_notifier)
		return ret;
	return fl_compat_event_ops->link_up(epf);
}
#endif

#endif /* _FRAMELINK_COMPAT_H */
