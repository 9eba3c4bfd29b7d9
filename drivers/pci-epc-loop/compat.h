/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: kernel differences, kept out of the main code.
 *
 * Written against 6.12. The LOOP_HAVE_* macros come from feature tests on
 * the kernel's headers in Kbuild (not from the version number: distribution
 * kernels backport endpoint API changes, e.g. Debian's 6.12 has align_addr).
 * Built with 6.1 (prepared tree), 6.12 (tested) and 7.3 (prepared tree).
 */
#ifndef _PCI_EPC_LOOP_COMPAT_H
#define _PCI_EPC_LOOP_COMPAT_H

#include <linux/irqdomain.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/pci-epc.h>
#include <linux/platform_device.h>

/*
 * pci_dev_set_disconnected() is private to the PCI core: mark the device
 * permanently failed the same way, so drivers see a surprise removal.
 */
static inline void loop_pci_dev_set_disconnected(struct pci_dev *pdev)
{
	WRITE_ONCE(pdev->error_state, pci_channel_io_perm_failure);
}

/* Interrupt types of raise_irq: PCI_IRQ_* since 6.9, enum before */
#ifdef LOOP_HAVE_PCI_IRQ_INTX
#define LOOP_IRQ_TYPE	unsigned int
#define LOOP_IRQ_INTX	PCI_IRQ_INTX
#define LOOP_IRQ_MSI	PCI_IRQ_MSI
#define LOOP_IRQ_MSIX	PCI_IRQ_MSIX
#else
#define LOOP_IRQ_TYPE	enum pci_epc_irq_type
#define LOOP_IRQ_INTX	PCI_EPC_IRQ_LEGACY
#define LOOP_IRQ_MSI	PCI_EPC_IRQ_MSI
#define LOOP_IRQ_MSIX	PCI_EPC_IRQ_MSIX
#endif

/* pci_epc_ops.align_addr (6.13, backported to Debian's 6.12) */
static inline void
loop_compat_set_align_addr(struct pci_epc_ops *ops,
			   u64 (*fn)(struct pci_epc *epc, u64 pci_addr,
				     size_t *size, size_t *offset))
{
#ifdef LOOP_HAVE_ALIGN_ADDR
	ops->align_addr = fn;
#endif
}

/* EPF notifications that older kernels do not have: nothing to tell */
static inline void loop_epc_linkdown(struct pci_epc *epc)
{
#ifdef LOOP_HAVE_LINKDOWN
	pci_epc_linkdown(epc);
#endif
}

static inline void loop_epc_deinit_notify(struct pci_epc *epc)
{
#ifdef LOOP_HAVE_DEINIT_NOTIFY
	pci_epc_deinit_notify(epc);
#endif
}

static inline void loop_epc_bme_notify(struct pci_epc *epc)
{
#ifdef LOOP_HAVE_BME_NOTIFY
	pci_epc_bus_master_enable_notify(epc);
#endif
}

/* platform_driver.remove returns void since 6.11 (remove_new before) */
#ifdef LOOP_HAVE_VOID_REMOVE
#define LOOP_PLATFORM_REMOVE(fn)	.remove = (fn)
#else
#define LOOP_PLATFORM_REMOVE(fn)	.remove_new = (fn)
#endif

/**
 * struct loop_bar_caps - what the controller allows for one BAR
 * @reserved: the EPF must not use it
 * @fixed_size: size fixed by hardware, 0 = programmable
 * @only_64bit: must be 64-bit (the next BAR is then reserved)
 */
struct loop_bar_caps {
	bool reserved;
	u64 fixed_size;
	bool only_64bit;
};

/* Fill pci_epc_features: per-BAR descriptors (6.9+) or bitmasks before */
static inline void loop_compat_bar_features(struct pci_epc_features *f,
					    const struct loop_bar_caps *bar)
{
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
#ifdef LOOP_HAVE_BAR_DESC
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

/* MSI_FLAG_NO_AFFINITY (6.10): the base chip's affinity op is used before */
#ifdef LOOP_HAVE_NO_AFFINITY
#define LOOP_MSI_FLAG_NO_AFFINITY	MSI_FLAG_NO_AFFINITY
#else
#define LOOP_MSI_FLAG_NO_AFFINITY	0
#endif

/*
 * The software MSI controller. Without MSI parent domains (before 6.16) a
 * PCI/MSI domain is stacked on the base domain with
 * pci_msi_create_irq_domain() (as vmd.c did); with them the base domain is
 * an MSI parent and the PCI core creates per-device domains under it
 * (pci_msi_create_irq_domain() is gone in 6.19).
 */
#ifdef LOOP_HAVE_MSI_PARENT
#include <linux/irqchip/irq-msi-lib.h>

static const struct msi_parent_ops loop_msi_parent_ops = {
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
loop_compat_msi_domains(struct fwnode_handle *fn_base,
			struct fwnode_handle *fn_msi,
			const struct irq_domain_ops *ops, void *host_data,
			unsigned int size, struct msi_domain_info *pci_info,
			struct irq_domain **base, struct irq_domain **msi)
{
	struct irq_domain_info info = {
		.fwnode		= fn_base,
		.size		= size,
		.hwirq_max	= size,
		.ops		= ops,
		.host_data	= host_data,
	};

	*base = msi_create_parent_irq_domain(&info, &loop_msi_parent_ops);
	*msi = *base;
	return *base ? 0 : -ENOMEM;
}
#else
static inline int
loop_compat_msi_domains(struct fwnode_handle *fn_base,
			struct fwnode_handle *fn_msi,
			const struct irq_domain_ops *ops, void *host_data,
			unsigned int size, struct msi_domain_info *pci_info,
			struct irq_domain **base, struct irq_domain **msi)
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

#endif /* _PCI_EPC_LOOP_COMPAT_H */
