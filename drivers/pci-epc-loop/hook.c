// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: what the lab lends its test modules (include/framelink/epc-loop-test.h).
 *
 * A window hook sees every 8-byte word of EPF writes just before the window stores it in
 * host memory, and may change host memory first: a test module plays a hostile or broken
 * endpoint that way (tests/modules/fl-hostile corrupts framelink's completions) while the
 * lab itself knows no endpoint function's ABI. One hook at a time, for every link.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/rcupdate.h>

#include <framelink/epc-loop-test.h>

#include "loop.h"

/* The hook; set and cleared under loop_hook_lock, called under RCU */
static const struct pci_epc_loop_win_hook __rcu *loop_hook;
static DEFINE_MUTEX(loop_hook_lock); /* writers of loop_hook */

/**
 * pci_epc_loop_set_win_hook() - install or remove the window hook
 * @hook: the hook, or NULL to remove it
 *
 * Removing waits until no call of the old hook runs, so its module may go.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EBUSY when another hook is installed.
 */
int pci_epc_loop_set_win_hook(const struct pci_epc_loop_win_hook *hook)
{
	const struct pci_epc_loop_win_hook *old;

	mutex_lock(&loop_hook_lock);
	old = rcu_dereference_protected(loop_hook, lockdep_is_held(&loop_hook_lock));
	if (hook && old) {
		mutex_unlock(&loop_hook_lock);
		return -EBUSY;
	}
	rcu_assign_pointer(loop_hook, hook);
	mutex_unlock(&loop_hook_lock);
	if (!hook)
		synchronize_rcu();
	return 0;
}
EXPORT_SYMBOL_GPL(pci_epc_loop_set_win_hook);

/**
 * loop_hook_publish() - the window is about to store an EPF write in host memory
 * @loop: the loopback
 * @pci_addr: host address of the 8-byte word
 * @v: the word the EPF wrote
 * @s: the word as host memory held it at the last synchronisation
 * @mask: 0xff in every byte the store changes
 *
 * Called with win_lock held for every word of a cut that changes.
 */
void loop_hook_publish(struct pci_epc_loop *loop, u64 pci_addr, u64 v, u64 s, u64 mask)
{
	const struct pci_epc_loop_win_hook *h;

	/* Per word of every cut: no read-side section (lockdep's cost) without a hook */
	if (!rcu_access_pointer(loop_hook))
		return;
	rcu_read_lock();
	h = rcu_dereference(loop_hook);
	if (h)
		h->publish(loop, pci_addr, v, s, mask);
	rcu_read_unlock();
}

/**
 * pci_epc_loop_host_mem() - CPU address of host memory the function can reach
 * @loop: the loopback (as passed to a hook)
 * @pci_addr: host (bus) address
 * @len: bytes
 *
 * Return: a CPU pointer valid for @len bytes, or NULL (not System RAM or the pool).
 */
void *pci_epc_loop_host_mem(struct pci_epc_loop *loop, u64 pci_addr, size_t len)
{
	return loop_phys_to_virt(loop, pci_addr, len);
}
EXPORT_SYMBOL_GPL(pci_epc_loop_host_mem);

/**
 * pci_epc_loop_bar_read() - copy out of a function's BAR memory
 * @loop: the loopback (as passed to a hook)
 * @func: function number
 * @bar: BAR number
 * @off: offset into the BAR
 * @buf: destination
 * @len: bytes
 *
 * Context: any (takes a raw spinlock).
 * Return: 0, or -EINVAL when the BAR is not set or too small.
 */
int pci_epc_loop_bar_read(struct pci_epc_loop *loop, u8 func, u8 bar, size_t off,
			  void *buf, size_t len)
{
	const struct loop_bar *b;
	unsigned long flags;
	int ret = -EINVAL;

	if (func >= LOOP_MAX_FUNCS || bar >= PCI_STD_NUM_BARS)
		return -EINVAL;
	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	b = &loop->fn[func].bar[bar];
	if (b->set && off <= b->size && len <= b->size - off) {
		memcpy(buf, loop->pool_va + (b->phys - loop->pool_phys) + off, len);
		ret = 0;
	}
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(pci_epc_loop_bar_read);
