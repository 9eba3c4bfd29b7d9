/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: kernel version differences, kept out of the main code.
 * Written against 6.12; older and newer kernels are handled here only.
 */
#ifndef _PCI_EPC_LOOP_COMPAT_H
#define _PCI_EPC_LOOP_COMPAT_H

#include <linux/irqdomain.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/version.h>

/*
 * pci_dev_set_disconnected() is private to the PCI core: mark the device
 * permanently failed the same way, so drivers see a surprise removal.
 */
static inline void loop_pci_dev_set_disconnected(struct pci_dev *pdev)
{
	WRITE_ONCE(pdev->error_state, pci_channel_io_perm_failure);
}

/*
 * The software MSI controller. Up to 6.15 a PCI/MSI domain is stacked on
 * the base domain with pci_msi_create_irq_domain() (as vmd.c did); from
 * 6.16 the base domain is an MSI parent and the PCI core creates per-device
 * domains under it (pci_msi_create_irq_domain() is gone in 6.19).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
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
