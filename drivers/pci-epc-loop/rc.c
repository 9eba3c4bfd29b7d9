// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: root-complex profiles.
 *
 * The root complex is chosen independently of the endpoint profile:
 *
 * generic-rc  an idealised root: INTx (level-triggered), MSI, MSI-X; a link
 *             loss removes the function (surprise removal); the root
 *             programs Max_Payload_Size 256 at enumeration.
 * j784s4      TI J784S4's Cadence root port as mainline drives it
 *             (drivers/pci/controller/cadence/pci-j721e.c,
 *             arch/arm64/boot/dts/ti/k3-j784s4-j742s2-main-common.dtsi):
 *             no INTx domain, MSI and MSI-X through the GIC ITS (msi-map),
 *             no hot-plug (the link-down interrupt only logs), so a link
 *             loss leaves the function in place and config accesses
 *             complete with all-ones until the link returns; the root port
 *             keeps its reset Max_Payload_Size of 128 bytes.
 *
 * Module parameter rc_profile, else DT property "framelink,rc-profile",
 * else generic-rc.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "loop.h"

/* Tegra234 and Cadence endpoints hold INTx for about 1 ms per raise */
#define LOOP_INTX_ASSERT_US_DEF	1000
/* Upper bound of the knob: a raise blocks its caller this long */
#define LOOP_INTX_ASSERT_US_MAX	10000000
/*
 * A root sends no config request until 100 ms after the link trained
 * (PCIe r6.0 sec 6.6.1; PCIE_T_RRS_READY_MS in mainline drivers/pci/pci.h).
 * An EPF still setting up in that time is found set up; one that takes
 * longer is enumerated half-made, as on a board.
 */
#define LOOP_RC_READY_MS_DEF	100
#define LOOP_RC_READY_MS_MAX	10000

static char *rc_profile;
module_param(rc_profile, charp, 0444);
MODULE_PARM_DESC(rc_profile,
		 "root-complex profile: generic-rc or j784s4 (default: DT \"framelink,rc-profile\", else generic-rc)");

/*
 * MPS is the root's kernel policy, not a board fact: TI's SDK kernels keep
 * the default policy (128 on the J784S4), pci=pcie_bus_perf gives 256.
 */
static unsigned int rc_mps;
module_param(rc_mps, uint, 0444);
MODULE_PARM_DESC(rc_mps,
		 "Max_Payload_Size the root programs at enumeration: 128..4096, a power of two (default 0: the root profile's)");

/**
 * struct loop_rc_desc - a root-complex profile
 * @name: profile name
 * @intx: the root has an INTx domain
 * @hotplug: a link loss removes the function
 * @mps: Max_Payload_Size the root programs at enumeration
 * @intx_level: default of the intx_level knob
 */
struct loop_rc_desc {
	const char *name;
	bool intx;
	bool hotplug;
	u32 mps;
	u32 intx_level;
};

static const struct loop_rc_desc loop_rc_profiles[] = {
	{
		.name = "generic-rc",
		.intx = true,
		.hotplug = true,
		.mps = 256,
		.intx_level = 1,
	},
	{
		.name = "j784s4",
		.intx = false,
		.hotplug = false,
		.mps = 128,
		.intx_level = 1,
	},
};

/**
 * loop_rc_init() - choose the root-complex profile and set its defaults
 * @loop: the loopback
 *
 * Context: probe, before the IRQ domains and the link are set up.
 * Return: 0, or -EINVAL for an unknown profile name.
 */
int loop_rc_init(struct pci_epc_loop *loop)
{
	const struct loop_rc_desc *p = NULL;
	const char *name = rc_profile;
	unsigned int i;

	if (!name &&
	    of_property_read_string(loop->dev->of_node, "framelink,rc-profile",
				    &name))
		name = loop_rc_profiles[0].name;

	for (i = 0; i < ARRAY_SIZE(loop_rc_profiles); i++)
		if (sysfs_streq(name, loop_rc_profiles[i].name))
			p = &loop_rc_profiles[i];
	if (!p) {
		dev_err(loop->dev, "unknown root-complex profile '%s'\n", name);
		return -EINVAL;
	}

	mutex_init(&loop->intx_lock);
	loop->rc_name = p->name;
	loop->rc_intx = p->intx;
	loop->rc_hotplug = p->hotplug;
	loop->rc_mps = p->mps;
	if (rc_mps) {
		if (rc_mps < 128 || rc_mps > 4096 || !is_power_of_2(rc_mps)) {
			dev_err(loop->dev, "rc_mps %u: not 128..4096 and a power of two\n",
				rc_mps);
			return -EINVAL;
		}
		loop->rc_mps = rc_mps;
	}
	loop->intx_level = p->intx_level;
	loop->intx_assert_us = LOOP_INTX_ASSERT_US_DEF;
	loop->rc_ready_ms = LOOP_RC_READY_MS_DEF;
	dev_info(loop->dev, "root complex %s: INTx %s, %s, MPS %u%s\n", p->name,
		 p->intx ? "level" : "none",
		 p->hotplug ? "link loss removes the function" : "no hot-plug",
		 loop->rc_mps, rc_mps ? " (rc_mps)" : "");
	return 0;
}

/**
 * loop_rc_keeps_function() - does a link loss leave the function in place?
 * @loop: the loopback
 *
 * A root without hot-plug keeps the function; removal of the loopback
 * itself (module unload) always takes the bus away.
 *
 * Return: true when the host bridge must stay.
 */
bool loop_rc_keeps_function(struct pci_epc_loop *loop)
{
	bool keep;

	spin_lock(&loop->state_lock);
	keep = !loop->rc_hotplug && !loop->removing;
	spin_unlock(&loop->state_lock);
	return keep;
}

static int loop_rc_stats_show(struct seq_file *s, void *unused)
{
	struct pci_epc_loop *loop = s->private;

	seq_printf(s, "rc_profile           %s\n", loop->rc_name);
	seq_printf(s, "irq_intx_redelivered %lld\n",
		   atomic64_read(&loop->rc_intx_redelivered));
	seq_printf(s, "irq_intx_refused     %lld\n",
		   atomic64_read(&loop->rc_intx_refused));
	seq_printf(s, "cfg_link_lost        %lld\n",
		   atomic64_read(&loop->rc_cfg_lost));
	seq_printf(s, "mps_programmed       %u\n", loop_cfg_mps(loop));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(loop_rc_stats);

static int loop_intx_assert_set(void *data, u64 val)
{
	struct pci_epc_loop *loop = data;

	if (val > LOOP_INTX_ASSERT_US_MAX)
		return -EINVAL;
	WRITE_ONCE(loop->intx_assert_us, val);
	return 0;
}

static int loop_intx_assert_get(void *data, u64 *val)
{
	struct pci_epc_loop *loop = data;

	*val = READ_ONCE(loop->intx_assert_us);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_intx_assert_fops, loop_intx_assert_get,
			 loop_intx_assert_set, "%llu\n");

static int loop_rc_mps_set(void *data, u64 val)
{
	struct pci_epc_loop *loop = data;

	/* Encodable sizes only: 128 << 0..5 */
	if (val < 128 || val > 4096 || !is_power_of_2(val))
		return -EINVAL;
	WRITE_ONCE(loop->rc_mps, val);
	return 0;
}

static int loop_rc_mps_get(void *data, u64 *val)
{
	struct pci_epc_loop *loop = data;

	*val = READ_ONCE(loop->rc_mps);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(loop_rc_mps_fops, loop_rc_mps_get, loop_rc_mps_set,
			 "%llu\n");

/**
 * loop_rc_wait_ready() - the root's wait between link up and enumeration
 * @loop: the loopback
 *
 * Context: process context, no lock held (sleeps up to rc_ready_ms).
 */
void loop_rc_wait_ready(struct pci_epc_loop *loop)
{
	u32 ms = min_t(u32, READ_ONCE(loop->rc_ready_ms), LOOP_RC_READY_MS_MAX);

	if (ms)
		msleep(ms);
}

/**
 * loop_rc_debugfs_init() - root-complex knobs and counters
 * @loop: the loopback
 * @dir: the device's debugfs directory
 *
 * intx_level      1: INTx is a level (held for intx_assert_us, handler run
 *                 again while held); 0: one delivery per raise
 * intx_assert_us  how long a raise holds INTx asserted
 * rc_mps          Max_Payload_Size the root programs at enumeration
 * rc_ready_ms     link up to the first config request (at most 10 s)
 * rc_stats        profile and counters of this file's behaviours
 */
void loop_rc_debugfs_init(struct pci_epc_loop *loop, struct dentry *dir)
{
	debugfs_create_u32("intx_level", 0600, dir, &loop->intx_level);
	debugfs_create_file_unsafe("intx_assert_us", 0600, dir, loop,
				   &loop_intx_assert_fops);
	debugfs_create_file_unsafe("rc_mps", 0600, dir, loop,
				   &loop_rc_mps_fops);
	debugfs_create_u32("rc_ready_ms", 0600, dir, &loop->rc_ready_ms);
	debugfs_create_file("rc_stats", 0400, dir, loop, &loop_rc_stats_fops);
}
