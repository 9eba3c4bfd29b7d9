// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: the virtual PCI host bridge (root complex side).
 *
 * One root bus, one device (the endpoint) at 00.0. The bridge's memory
 * window is the reserved pool, so every BAR (EPF memory from that pool)
 * lies inside it at its physical address, and the PCI core must keep the
 * addresses the BARs read back (loop_host_probe()).
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ioport.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/string.h>

#include "loop.h"

/*
 * pci_host_probe() keeps the BARs' addresses on kernels that honour
 * preserve_config there (6.12 does); 6.1's keeps them only with the system-wide
 * PCI_PROBE_ONLY flag and otherwise reassigns every BAR, which moves BAR0 off
 * the EPF's memory: the host then reads and writes pool memory no function
 * owns (seen on 6.1: BAR 0 0x61000000 "assigned" 0x60000000). So scan, claim
 * what the BARs hold, assign only what is left (claimed resources have a
 * parent and are skipped), as 6.12's pci_host_probe()
 * does with preserve_config, on every kernel.
 */
static int loop_host_probe(struct pci_host_bridge *bridge)
{
	struct pci_bus *child;
	int ret;

	pci_lock_rescan_remove();
	ret = pci_scan_root_bus_bridge(bridge);
	pci_unlock_rescan_remove();
	if (ret < 0)
		return ret;

	pci_bus_claim_resources(bridge->bus);
	pci_bus_assign_resources(bridge->bus);
	list_for_each_entry(child, &bridge->bus->children, node)
		pcie_bus_configure_settings(child);

	pci_lock_rescan_remove();
	pci_bus_add_devices(bridge->bus);
	pci_unlock_rescan_remove();
	return 0;
}

/**
 * loop_host_add() - create and probe the virtual root bus
 * @loop: the loopback
 *
 * Context: process context, link_lock held.
 * Return: 0 or a negative errno.
 */
int loop_host_add(struct pci_epc_loop *loop)
{
	struct pci_host_bridge *bridge;
	int ret;

	lockdep_assert_held(&loop->link_lock);

	bridge = pci_alloc_host_bridge(0);
	if (!bridge)
		return -ENOMEM;

	bridge->dev.parent = loop->dev;
	bridge->sysdata = loop;
	bridge->ops = &loop_pci_ops;
	bridge->map_irq = loop_map_irq;
	bridge->swizzle_irq = pci_common_swizzle;
	bridge->busnr = 0;
	/* Read by the resource code of 6.x (setup-bus.c, rebar.c) */
	bridge->preserve_config = 1;

	memset(&loop->mem_res, 0, sizeof(loop->mem_res));
	loop->mem_res.name = "pci-epc-loop mem";
	loop->mem_res.start = loop->pool_phys;
	loop->mem_res.end = loop->pool_phys + loop->pool_size - 1;
	loop->mem_res.flags = IORESOURCE_MEM;
	memset(&loop->busn_res, 0, sizeof(loop->busn_res));
	loop->busn_res.name = "pci-epc-loop bus";
	loop->busn_res.start = 0;
	loop->busn_res.end = 0;
	loop->busn_res.flags = IORESOURCE_BUS;
	pci_add_resource(&bridge->windows, &loop->mem_res);
	pci_add_resource(&bridge->windows, &loop->busn_res);

	/* The PCI core takes the bus's MSI domain from the bridge device */
	dev_set_msi_domain(&bridge->dev, loop->msi_domain);

	/*
	 * The root programs Max_Payload_Size while it enumerates. There is
	 * no root port device here, so the PCI core leaves Device Control
	 * alone (pci_configure_mps() needs an upstream bridge): do it as the
	 * profile's root would.
	 */
	loop_cfg_program_mps(loop, READ_ONCE(loop->rc_mps));

	ret = loop_host_probe(bridge);
	if (ret) {
		dev_err(loop->dev, "host bridge probe failed: %d\n", ret);
		pci_free_host_bridge(bridge);
		return ret;
	}
	loop->bridge = bridge;
	dev_info(loop->dev, "link up: root bus %04x:00\n",
		 pci_domain_nr(bridge->bus));
	return 0;
}

/**
 * loop_host_remove() - remove the virtual root bus and its device
 * @loop: the loopback
 * @surprise: the link dropped: mark the device disconnected first, so its
 *	      driver sees a surprise removal (config reads return all-ones)
 *
 * Context: process context, link_lock held, rc_up already false when
 * @surprise is set.
 */
void loop_host_remove(struct pci_epc_loop *loop, bool surprise)
{
	struct pci_host_bridge *bridge = loop->bridge;
	struct pci_dev *pdev;

	lockdep_assert_held(&loop->link_lock);
	if (!bridge)
		return;

	pci_lock_rescan_remove();
	if (surprise)
		list_for_each_entry(pdev, &bridge->bus->devices, bus_list)
			fl_pci_dev_set_disconnected(pdev);
	pci_stop_root_bus(bridge->bus);
	pci_remove_root_bus(bridge->bus);
	pci_unlock_rescan_remove();

	pci_free_host_bridge(bridge);
	loop->bridge = NULL;
	dev_info(loop->dev, "link down%s\n", surprise ? " (surprise)" : "");
}

/**
 * loop_host_link_lost() - the link dropped under a root without hot-plug
 * @loop: the loopback
 *
 * Nothing is removed: the function, its pci_dev and its driver stay, as on
 * a root whose link-down interrupt only logs (pci-j721e.c). Config
 * accesses now complete with all-ones (cfg.c) and interrupts are dropped
 * (irq.c) until the link returns.
 *
 * Context: process context, link_lock held, rc_up already false.
 */
void loop_host_link_lost(struct pci_epc_loop *loop)
{
	lockdep_assert_held(&loop->link_lock);
	if (loop->bridge)
		dev_info(loop->dev, "link down: function kept (%s: no hot-plug)\n",
			 loop->rc_name);
}

/**
 * loop_host_link_back() - the link retrained under a root that kept the bus
 * @loop: the loopback
 *
 * The root does not enumerate again: the function answers with the config
 * space it had (no reset went through), the same pci_dev and driver go on.
 *
 * Context: process context, link_lock held, rc_up already true.
 */
void loop_host_link_back(struct pci_epc_loop *loop)
{
	lockdep_assert_held(&loop->link_lock);
	dev_info(loop->dev, "link up: function kept, no re-enumeration\n");
	/* Vectors held while masked may be deliverable again */
	loop_irq_kick(loop);
}
