// SPDX-License-Identifier: GPL-2.0
/*
 * fl-pcicb: test tool that calls a PCI driver's .shutdown and error handlers the way the
 * PCI core does, for a VM that has no reboot to survive and no AER hardware.
 *
 * Write "<pci device name> <op>" to /sys/kernel/debug/fl-pcicb/call, e.g.
 * "0002:00:00.0 aer-frozen"; read the file back for one line saying what each callback
 * returned (also logged with dev_info()). The ops follow the 6.12 sources:
 *
 *  shutdown    device_shutdown() (drivers/base/core.c) -> pci_device_shutdown()
 *              (drivers/pci/pci-driver.c): device lock, pm_runtime_resume(), ->shutdown().
 *  aer-frozen  pcie_do_recovery() (drivers/pci/pcie/err.c) for a frozen channel:
 *              error_state = io_frozen, ->error_detected(io_frozen); then the reset of the
 *              link (here: a reset of the function itself, if it has a reset method; the
 *              result is reported); error_state = io_normal, ->slot_reset(); when that says
 *              RECOVERED, ->resume(). mmio_enabled() only after a CAN_RECOVER vote, as there.
 *              reset_ms (module parameter) is how long the link reset takes.
 *  aer-normal  the same for io_normal: ->error_detected(io_normal); CAN_RECOVER ->
 *              ->mmio_enabled() if any, then ->resume(); NEED_RESET -> ->slot_reset() first.
 *  aer-perm    a permanent failure as EEH reports one: error_state = io_perm_failure (the
 *              device then counts as disconnected: config reads give all-ones), and
 *              ->error_detected(io_perm_failure). The device stays disconnected; remove it
 *              (sysfs) to get it back.
 *  aer-normal-hold
 *              ->error_detected(io_normal) alone, then this CPU kept busy for hold_ms
 *              (module parameter; holding reads 1 meanwhile) without a scheduling point:
 *              on the test kernel (PREEMPT_NONE) nothing else runs on it, so a work the
 *              callback queued on this CPU's pool stays pending. A second error reported
 *              from another CPU meanwhile (aer-perm) lands before that work runs, as a
 *              mutex handoff can order them on a board (cd07875). No recovery follows.
 * Each callback runs with the device lock held, as report_error_detected() and friends
 * take it. Never built for a board: only with FL_BUILD=tests.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define FL_PCICB_LINE	256

/*
 * A link reset is not instant: after a secondary bus reset the port waits at least 100 ms
 * before the first config request (PCIe r6.0 sec 6.6.1; pci_bridge_wait_for_secondary_bus()
 * in drivers/pci/pci.c). The driver's apps keep running meanwhile.
 */
static unsigned int reset_ms = 200;
module_param(reset_ms, uint, 0644);
MODULE_PARM_DESC(reset_ms,
		 "aer-frozen: ms between error_detected() and slot_reset(), the link reset (default 200)");

static unsigned int hold_ms = 3000;
module_param(hold_ms, uint, 0644);
MODULE_PARM_DESC(hold_ms, "aer-normal-hold: how long the CPU is kept, at most 5000 (default 3000)");

static int holding;
module_param(holding, int, 0444);
MODULE_PARM_DESC(holding, "1 while aer-normal-hold keeps its CPU (read-only)");

static struct dentry *fl_pcicb_dir;

/* serialises calls and protects fl_pcicb_result */
static DEFINE_MUTEX(fl_pcicb_lock);
static char fl_pcicb_result[FL_PCICB_LINE] = "none\n";

static const char *fl_pcicb_ers(pci_ers_result_t r)
{
	switch (r) {
	case PCI_ERS_RESULT_NONE:
		return "none";
	case PCI_ERS_RESULT_CAN_RECOVER:
		return "can-recover";
	case PCI_ERS_RESULT_NEED_RESET:
		return "need-reset";
	case PCI_ERS_RESULT_DISCONNECT:
		return "disconnect";
	case PCI_ERS_RESULT_RECOVERED:
		return "recovered";
	case PCI_ERS_RESULT_NO_AER_DRIVER:
		return "no-aer-driver";
	}
	return "unknown";
}

/* The bound PCI driver; the device lock held (it pins the binding) */
static struct pci_driver *fl_pcicb_driver(struct pci_dev *pdev)
{
	return pdev->dev.driver ? to_pci_driver(pdev->dev.driver) : NULL;
}

static int fl_pcicb_shutdown(struct pci_dev *pdev, char *res)
{
	struct pci_driver *drv;
	ktime_t t0;

	device_lock(&pdev->dev);
	drv = fl_pcicb_driver(pdev);
	if (!drv || !drv->shutdown) {
		device_unlock(&pdev->dev);
		return -ENOENT;
	}
	pm_runtime_resume(&pdev->dev);
	t0 = ktime_get();
	drv->shutdown(pdev);
	snprintf(res, FL_PCICB_LINE, "shutdown: returned after %lld us\n",
		 ktime_us_delta(ktime_get(), t0));
	device_unlock(&pdev->dev);
	return 0;
}

/* One error_detected() call with the channel state set first, as report_error_detected() */
static pci_ers_result_t fl_pcicb_detected(struct pci_dev *pdev, pci_channel_state_t state)
{
	const struct pci_error_handlers *eh;
	struct pci_driver *drv;
	pci_ers_result_t vote = PCI_ERS_RESULT_NO_AER_DRIVER;

	device_lock(&pdev->dev);
	drv = fl_pcicb_driver(pdev);
	pdev->error_state = state;
	eh = drv ? drv->err_handler : NULL;
	if (eh && eh->error_detected)
		vote = eh->error_detected(pdev, state);
	device_unlock(&pdev->dev);
	return vote;
}

static pci_ers_result_t fl_pcicb_mmio_enabled(struct pci_dev *pdev)
{
	const struct pci_error_handlers *eh;
	struct pci_driver *drv;
	pci_ers_result_t vote = PCI_ERS_RESULT_RECOVERED;

	device_lock(&pdev->dev);
	drv = fl_pcicb_driver(pdev);
	eh = drv ? drv->err_handler : NULL;
	if (eh && eh->mmio_enabled)
		vote = eh->mmio_enabled(pdev);
	device_unlock(&pdev->dev);
	return vote;
}

static pci_ers_result_t fl_pcicb_slot_reset(struct pci_dev *pdev)
{
	const struct pci_error_handlers *eh;
	struct pci_driver *drv;
	pci_ers_result_t vote = PCI_ERS_RESULT_RECOVERED;

	device_lock(&pdev->dev);
	drv = fl_pcicb_driver(pdev);
	pdev->error_state = pci_channel_io_normal;
	eh = drv ? drv->err_handler : NULL;
	if (eh && eh->slot_reset)
		vote = eh->slot_reset(pdev);
	device_unlock(&pdev->dev);
	return vote;
}

static bool fl_pcicb_resume(struct pci_dev *pdev)
{
	const struct pci_error_handlers *eh;
	struct pci_driver *drv;
	bool called = false;

	device_lock(&pdev->dev);
	drv = fl_pcicb_driver(pdev);
	pdev->error_state = pci_channel_io_normal;
	eh = drv ? drv->err_handler : NULL;
	if (eh && eh->resume) {
		eh->resume(pdev);
		called = true;
	}
	device_unlock(&pdev->dev);
	return called;
}

/*
 * The reset between error_detected() and slot_reset(): on a board the root port resets the
 * link (secondary bus reset or DPC). The lab's function sits on the root bus with no port
 * above it, so the function's own reset methods are all there is; none is an answer too.
 */
static int fl_pcicb_reset(struct pci_dev *pdev)
{
	int ret;

	device_lock(&pdev->dev);
	ret = __pci_reset_function_locked(pdev);
	device_unlock(&pdev->dev);
	msleep(READ_ONCE(reset_ms));
	return ret;
}

/* The recovery sequence after the error_detected() vote, as pcie_do_recovery() */
static void fl_pcicb_recover(struct pci_dev *pdev, pci_ers_result_t vote, char *res,
			     size_t len)
{
	size_t n = strlen(res);
	bool resumed;

	if (vote == PCI_ERS_RESULT_CAN_RECOVER) {
		vote = fl_pcicb_mmio_enabled(pdev);
		n += scnprintf(res + n, len - n, ", mmio_enabled -> %s", fl_pcicb_ers(vote));
	}
	if (vote == PCI_ERS_RESULT_NEED_RESET) {
		vote = fl_pcicb_slot_reset(pdev);
		n += scnprintf(res + n, len - n, ", slot_reset -> %s", fl_pcicb_ers(vote));
	}
	if (vote != PCI_ERS_RESULT_RECOVERED) {
		scnprintf(res + n, len - n, ", recovery failed\n");
		return;
	}
	resumed = fl_pcicb_resume(pdev);
	scnprintf(res + n, len - n, ", resume %s\n", resumed ? "called" : "absent");
}

static int fl_pcicb_aer(struct pci_dev *pdev, pci_channel_state_t state, char *res)
{
	pci_ers_result_t vote;
	int reset;

	if (!fl_pcicb_driver(pdev))
		return -ENOENT;
	vote = fl_pcicb_detected(pdev, state);
	snprintf(res, FL_PCICB_LINE, "error_detected(%s) -> %s",
		 state == pci_channel_io_frozen ? "frozen" :
		 state == pci_channel_io_normal ? "normal" : "perm-failure",
		 fl_pcicb_ers(vote));
	if (state == pci_channel_io_perm_failure) {
		strlcat(res, "\n", FL_PCICB_LINE);
		return 0;
	}
	if (state == pci_channel_io_frozen) {
		/* pcie_do_recovery() resets the link after a frozen error, whatever the votes */
		reset = fl_pcicb_reset(pdev);
		snprintf(res + strlen(res), FL_PCICB_LINE - strlen(res),
			 ", function reset -> %d%s", reset,
			 reset == -ENOTTY ? " (no reset method: skipped)" : "");
	}
	fl_pcicb_recover(pdev, vote, res, FL_PCICB_LINE);
	return 0;
}

/*
 * Busy for hold_ms on this CPU: mdelay() has no scheduling point, and with PREEMPT_NONE a
 * task in the kernel is not preempted, so the works woken on this CPU wait. Below the soft
 * lockup (20 s) and RCU stall (21 s) bounds.
 */
static void fl_pcicb_hold_cpu(void)
{
	unsigned int ms = min(READ_ONCE(hold_ms), 5000U);

	WRITE_ONCE(holding, 1);
	while (ms--)
		mdelay(1);
	WRITE_ONCE(holding, 0);
}

static int fl_pcicb_call(struct pci_dev *pdev, const char *op, char *res)
{
	if (!strcmp(op, "aer-normal-hold")) {
		if (!fl_pcicb_driver(pdev))
			return -ENOENT;
		snprintf(res, FL_PCICB_LINE, "error_detected(normal) -> %s, then held %u ms\n",
			 fl_pcicb_ers(fl_pcicb_detected(pdev, pci_channel_io_normal)),
			 min(READ_ONCE(hold_ms), 5000U));
		return 0;
	}
	if (!strcmp(op, "shutdown"))
		return fl_pcicb_shutdown(pdev, res);
	if (!strcmp(op, "aer-frozen"))
		return fl_pcicb_aer(pdev, pci_channel_io_frozen, res);
	if (!strcmp(op, "aer-normal"))
		return fl_pcicb_aer(pdev, pci_channel_io_normal, res);
	if (!strcmp(op, "aer-perm"))
		return fl_pcicb_aer(pdev, pci_channel_io_perm_failure, res);
	return -EINVAL;
}

static ssize_t fl_pcicb_write(struct file *file, const char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	char buf[64], res[FL_PCICB_LINE] = "";
	struct pci_dev *pdev;
	struct device *dev;
	char *op, *name;
	bool hold;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	op = strim(buf);
	name = strsep(&op, " ");
	if (!op)
		return -EINVAL;
	op = strim(op);
	dev = bus_find_device_by_name(&pci_bus_type, NULL, name);
	if (!dev)
		return -ENODEV;
	pdev = to_pci_dev(dev);

	hold = !strcmp(op, "aer-normal-hold");
	mutex_lock(&fl_pcicb_lock);
	ret = fl_pcicb_call(pdev, op, res);
	if (!ret)
		strscpy(fl_pcicb_result, res, sizeof(fl_pcicb_result));
	mutex_unlock(&fl_pcicb_lock);
	/* before any printk: flushing the console is a scheduling point (cond_resched()) */
	if (!ret && hold)
		fl_pcicb_hold_cpu();
	if (!ret)
		dev_info(&pdev->dev, "fl-pcicb %s: %s", op, res);
	put_device(dev);
	return ret ? ret : len;
}

static ssize_t fl_pcicb_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	char res[FL_PCICB_LINE];

	mutex_lock(&fl_pcicb_lock);
	strscpy(res, fl_pcicb_result, sizeof(res));
	mutex_unlock(&fl_pcicb_lock);
	return simple_read_from_buffer(ubuf, len, ppos, res, strlen(res));
}

static const struct file_operations fl_pcicb_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = fl_pcicb_write,
	.read = fl_pcicb_read,
	.llseek = default_llseek,
};

static int __init fl_pcicb_init(void)
{
	fl_pcicb_dir = debugfs_create_dir("fl-pcicb", NULL);
	debugfs_create_file("call", 0600, fl_pcicb_dir, NULL, &fl_pcicb_fops);
	return 0;
}
module_init(fl_pcicb_init);

static void __exit fl_pcicb_exit(void)
{
	debugfs_remove_recursive(fl_pcicb_dir);
}
module_exit(fl_pcicb_exit);

MODULE_DESCRIPTION("framelink test tool: a PCI driver's shutdown and error handlers, called as the PCI core does");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
