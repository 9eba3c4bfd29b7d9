/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: kernel version differences, kept out of the main code.
 * Written against 6.12; older/newer kernels are handled here only.
 */
#ifndef _PCI_EPC_LOOP_COMPAT_H
#define _PCI_EPC_LOOP_COMPAT_H

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

#endif /* _PCI_EPC_LOOP_COMPAT_H */
