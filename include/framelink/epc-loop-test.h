/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: what the lab exports to its own test modules (not for EPFs:
 * a board has nothing like it).
 */
#ifndef _FRAMELINK_EPC_LOOP_TEST_H
#define _FRAMELINK_EPC_LOOP_TEST_H

#include <linux/types.h>

struct pci_epc;

u64 pci_epc_loop_win_passes(struct pci_epc *epc);

#endif /* _FRAMELINK_EPC_LOOP_TEST_H */
