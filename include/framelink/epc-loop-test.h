/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pci-epc-loop: what the lab exports to its own test modules (not for EPFs:
 * a board has nothing like it).
 */
#ifndef _FRAMELINK_EPC_LOOP_TEST_H
#define _FRAMELINK_EPC_LOOP_TEST_H

#include <linux/types.h>

struct pci_epc;
struct pci_epc_loop;

u64 pci_epc_loop_win_passes(struct pci_epc *epc);

/**
 * struct pci_epc_loop_win_hook - a test module's look at the outbound window
 * @publish: called for every 8-byte word of endpoint writes the window is about to store
 *	at host address @pci_addr: @v the word the endpoint wrote, @s the word as host
 *	memory held it, @mask 0xff in every byte the store changes. The window's lock is
 *	held: no sleeping. Host memory changed here (pci_epc_loop_host_mem()) is what the
 *	host sees, except the bytes in @mask, which the store then writes.
 */
struct pci_epc_loop_win_hook {
	void (*publish)(struct pci_epc_loop *loop, u64 pci_addr, u64 v, u64 s, u64 mask);
};

int pci_epc_loop_set_win_hook(const struct pci_epc_loop_win_hook *hook);
void *pci_epc_loop_host_mem(struct pci_epc_loop *loop, u64 pci_addr, size_t len);
int pci_epc_loop_bar_read(struct pci_epc_loop *loop, u8 func, u8 bar, size_t off,
			  void *buf, size_t len);

#endif /* _FRAMELINK_EPC_LOOP_TEST_H */
