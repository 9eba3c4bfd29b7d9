// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: PCI driver for the framelink endpoint function, root-complex side.
 *
 * Binds to the IDs the endpoint function advertises by default (NVIDIA 0x10de:0x22fe, the
 * framelink-epf configfs defaults); other IDs via /sys/bus/pci/drivers/framelink-host/new_id.
 * probe(): enable, BAR0 uncached, identify by magic and ABI major, link info, frame buffers,
 * completion ring, one interrupt vector (MSI-X, else MSI, else INTx, else polling), the
 * enable handshake, then /dev/framelink<N>.
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "host.h"

#define FL_PCI_VENDOR_ID	0x10de
#define FL_PCI_DEVICE_ID	0x22fe

static unsigned int nbufs = 16;
module_param(nbufs, uint, 0444);
MODULE_PARM_DESC(nbufs, "host frame buffers per device (1..1024, default 16)");

static unsigned int buf_size = SZ_8M;
module_param(buf_size, uint, 0444);
MODULE_PARM_DESC(buf_size,
		 "bytes per host frame buffer, rounded up to pages (default 8 MiB; large values need CMA)");

static bool vectors = true;
module_param(vectors, bool, 0444);
MODULE_PARM_DESC(vectors,
		 "use an interrupt vector (default Y); N polls completions, as without MSI/MSI-X/INTx");

static DEFINE_IDA(fl_host_ida);

static void fl_host_release(struct kref *ref)
{
	struct fl_host *host = container_of(ref, struct fl_host, ref);

	fl_bufs_free(host);
	mutex_destroy(&host->reap_lock);
	mutex_destroy(&host->lock);
	/*
	 * A kept import's dma-buf attachment names this device (the exporter, and its debugfs
	 * bufinfo, read attach->dev for good): the device must outlive it (issue 27 item 3.10).
	 */
	if (!host->imports_kept)
		pci_dev_put(host->pdev);
	kfree(host);
}

/**
 * fl_host_put() - drop a reference to a host device
 * @host: the device; freed (with its frame buffers) at the last put.
 */
void fl_host_put(struct fl_host *host)
{
	kref_put(&host->ref, fl_host_release);
}

static u16 fl_lnksta_speed(u16 lnksta)
{
	/* GT/s * 10 by Current Link Speed encoding (PCIe r6.0 7.5.3.8) */
	static const u16 speed[] = { 0, 25, 50, 80, 160, 320, 640 };
	unsigned int cls = lnksta & PCI_EXP_LNKSTA_CLS;

	return cls < ARRAY_SIZE(speed) ? speed[cls] : 0;
}

/*
 * Link speed and width, negotiated and supported MPS, MRRS. On pci-epc-loop the emulated
 * PCIe capability reports a Gen3 x4 endpoint; whatever is absent stays 0.
 */
static void fl_link_info(struct fl_host *host)
{
	struct pci_dev *pdev = host->pdev;
	struct pci_dev *up = pci_upstream_bridge(pdev);
	u16 lnksta = 0;

	if (!pci_is_pcie(pdev)) {
		dev_info(host->dev, "not a PCIe function: no link information\n");
		return;
	}
	pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &lnksta);
	host->link_speed = fl_lnksta_speed(lnksta);
	host->link_width = FIELD_GET(PCI_EXP_LNKSTA_NLW, lnksta);
	host->mps = pcie_get_mps(pdev);
	host->mps_supported = 128 << pdev->pcie_mpss;
	host->mrrs = pcie_get_readrq(pdev);

	dev_info(host->dev, "link %u.%u GT/s x%u, MPS %u (supported %u), MRRS %u\n",
		 host->link_speed / 10, host->link_speed % 10, host->link_width,
		 host->mps, host->mps_supported, host->mrrs);
	if (up && pci_is_pcie(up)) {
		unsigned int both = min(128 << pdev->pcie_mpss, 128 << up->pcie_mpss);

		if (both > host->mps)
			dev_warn(host->dev,
				 "MPS %u but both ends support %u: pci=pcie_bus_perf would raise it\n",
				 host->mps, both);
	} else if (host->mps_supported > host->mps) {
		dev_info(host->dev,
			 "function supports MPS %u; no upstream port to tell what the root supports\n",
			 host->mps_supported);
	}
}

static int fl_irq_setup(struct fl_host *host)
{
	struct pci_dev *pdev = host->pdev;
	int ret;

	ret = -ENOSPC;
	if (vectors)
		ret = pci_alloc_irq_vectors(pdev, 1, 1,
					    PCI_IRQ_MSIX | PCI_IRQ_MSI | FL_HOST_IRQ_INTX);
	if (ret < 0) {
		dev_warn(host->dev, "no interrupt vector (%d): completions are polled\n", ret);
		host->irq_type = FL_IRQ_NONE;
		host->irq = 0;
		return 0;
	}
	if (pdev->msix_enabled)
		host->irq_type = FL_IRQ_MSIX;
	else if (pdev->msi_enabled)
		host->irq_type = FL_IRQ_MSI;
	else
		host->irq_type = FL_IRQ_INTX;
	host->irq = pci_irq_vector(pdev, 0);
	ret = request_irq(host->irq, fl_q_irq, IRQF_SHARED, host->name, host);
	if (ret) {
		dev_err(host->dev, "cannot request IRQ %d: %d\n", host->irq, ret);
		pci_free_irq_vectors(pdev);
		host->irq = 0;
		return ret;
	}
	return 0;
}

static void fl_irq_teardown(struct fl_host *host)
{
	if (host->irq)
		free_irq(host->irq, host);
	/* after free_irq(): nothing queues them again */
	cancel_delayed_work_sync(&host->intx_work);
	fl_settle_stop(host);
	if (host->irq_type != FL_IRQ_NONE)
		pci_free_irq_vectors(host->pdev);
	host->irq = 0;
}

static const char *const fl_irq_names[] = { "polling", "INTx", "MSI", "MSI-X" };

static int fl_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct device *dev = &pdev->dev;
	struct fl_host *host;
	int ret;

	if (!nbufs || nbufs > FL_RING_MAX_ENTRIES || !buf_size || buf_size > SZ_1G) {
		dev_err(dev, "nbufs=%u buf_size=%u out of range\n", nbufs, buf_size);
		return -EINVAL;
	}
	/*
	 * Before anything else: a kdump kernel, or firmware, may find Bus Master Enable left
	 * on with the endpoint still running an earlier host's queue, writing completions into
	 * memory this kernel now owns. It is set again once the endpoint reports RESET
	 * (fl_setup_enable()).
	 */
	pci_clear_master(pdev);
	host = kzalloc(sizeof(*host), GFP_KERNEL);
	if (!host)
		return -ENOMEM;
	kref_init(&host->ref);
	mutex_init(&host->lock);
	init_waitqueue_head(&host->wq);
	INIT_DELAYED_WORK(&host->intx_work, fl_q_intx_work);
	spin_lock_init(&host->intx_lock);
	atomic64_set(&host->irqs, 0);
	fl_settle_init(host);
	atomic_set(&host->openers, 0);
	fl_live_init(host);
	host->pdev = pci_dev_get(pdev);
	host->dev = dev;
	host->id = ida_alloc(&fl_host_ida, GFP_KERNEL);
	if (host->id < 0) {
		ret = host->id;
		goto put_host;
	}
	snprintf(host->name, sizeof(host->name), "framelink%d", host->id);

	ret = pci_enable_device_mem(pdev);
	if (ret) {
		dev_err(dev, "cannot enable the function: %d\n", ret);
		goto free_id;
	}
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(32));
	if (ret) {
		dev_err(dev, "no usable DMA mask\n");
		goto disable_device;
	}
	/*
	 * A frame is one descriptor of up to 4 GiB - 1 (fl_tx_desc.bytes): an imported buffer
	 * must map to one segment of any length. The PCI core's default is 64 KiB, which an
	 * IOMMU respects when it joins a scatter-gather buffer (DMA-API debug reported the
	 * 600 KiB camera imports as segments longer than the device supports). A PCI device
	 * has the dma_parms this is stored in (pci_device_add()); the int it returned before
	 * 6.12 could say otherwise only without them.
	 */
	dma_set_max_seg_size(dev, U32_MAX);
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM)) {
		dev_err(dev, "BAR0 is not a memory BAR\n");
		ret = -ENODEV;
		goto disable_device;
	}
	ret = pci_request_region(pdev, 0, FL_HOST_DRV_NAME);
	if (ret) {
		dev_err(dev, "BAR0 busy: %d\n", ret);
		goto disable_device;
	}
	host->bar_len = pci_resource_len(pdev, 0);
	/* Registers and rings: uncached device memory (pci_iomap is ioremap, not _wc) */
	host->bar = pci_iomap(pdev, 0, 0);
	if (!host->bar) {
		dev_err(dev, "cannot map BAR0\n");
		ret = -ENOMEM;
		goto release_region;
	}

	ret = fl_setup_read_header(host);
	if (ret)
		goto unmap_bar;
	/* bus mastering stays off (cleared above) until the endpoint reports RESET */
	host->master_off = true;
	fl_link_info(host);

	ret = fl_bufs_alloc(host, nbufs, PAGE_ALIGN(buf_size));
	if (ret)
		goto clear_master;

	host->cq_entries = roundup_pow_of_two(host->tx_entries + host->rx_entries);
	/*
	 * A whole 64 KiB block: an endpoint whose outbound window has 64 KiB granularity
	 * (Tegra234) maps the aligned block around the ring, so nothing else may share it.
	 */
	host->cq_bytes = ALIGN(FL_HOST_CQ_OFFSET + host->cq_entries * sizeof(struct fl_cqe),
			       SZ_64K);
	host->cq_area = dma_alloc_coherent(dev, host->cq_bytes, &host->cq_dma, GFP_KERNEL);
	if (!host->cq_area) {
		ret = -ENOMEM;
		goto free_bufs;
	}
	host->status = host->cq_area;
	host->cq = host->cq_area + FL_HOST_CQ_OFFSET;

	ret = fl_irq_setup(host);
	if (ret)
		goto free_cq;
	/* what a link recovery puts back (BARs, command register, MSI/MSI-X), live.c */
	pci_save_state(pdev);

	/*
	 * A framelink endpoint that is slow to answer (its engine starved, or still
	 * starting) is no reason to give the function up: the queue then starts stopped
	 * and live.c retries in the background, as after any failed reset.
	 */
	mutex_lock(&host->lock);
	ret = fl_setup_enable(host);
	mutex_unlock(&host->lock);
	if (ret)
		dev_warn(dev, "queue not enabled at probe (%d): retrying in the background\n",
			 ret);

	ret = fl_cdev_register(host);
	if (ret)
		goto disable;
	/* the ioctls work without it: a V4L2 core that refuses costs only /dev/videoN */
	ret = fl_v4l2_register(host);
	if (ret)
		dev_warn(dev, "V4L2 devices missing (%d)\n", ret);
	pci_set_drvdata(pdev, host);
	mutex_lock(&host->lock);
	if (!host->enabled)
		fl_live_reset(host, -ECANCELED);
	mutex_unlock(&host->lock);

	dev_info(dev, "/dev/%s: ABI %u.%u, %u+%u ring entries, %u x %zu byte buffers, max frame %u, %s%s, features %#llx\n",
		 host->name, FL_ABI_MAJOR, FL_ABI_MINOR, host->tx_entries, host->rx_entries,
		 host->nbufs, host->buf_size, host->max_frame, fl_irq_names[host->irq_type],
		 host->irq_polled ? " (not arriving: polled)" : "", host->features);
	return 0;

disable:
	mutex_lock(&host->lock);
	fl_setup_disable(host);
	mutex_unlock(&host->lock);
	fl_irq_teardown(host);
free_cq:
	/* bus mastering off before the ring it may write goes */
	pci_clear_master(pdev);
	dma_free_coherent(dev, host->cq_bytes, host->cq_area, host->cq_dma);
free_bufs:
	/* the buffers are freed with the host; nothing mapped them yet */
clear_master:
	pci_clear_master(pdev);
unmap_bar:
	pci_iounmap(pdev, host->bar);
	host->bar = NULL;
release_region:
	pci_release_region(pdev, 0);
disable_device:
	pci_disable_device(pdev);
free_id:
	if (host->id >= 0)
		ida_free(&fl_host_ida, host->id);
put_host:
	fl_host_put(host);
	return ret;
}

/*
 * Bus mastering off before remove() frees what the endpoint could write. A function marked
 * disconnected (surprise removal, a permanent AER failure) gets no config access through its
 * pci_dev, so pci_clear_master() would do nothing; its link may still be up (a permanent
 * failure that nothing contained). Ask the bus directly: all-ones means the link is down and
 * DL_Down reset the function (Bus Master Enable clear); otherwise clear the bit there.
 */
static void fl_remove_take_master(struct fl_host *host, bool gone)
{
	struct pci_dev *pdev = host->pdev;
	u16 cmd;

	if (!gone) {
		pci_clear_master(pdev);
		return;
	}
	if (pci_bus_read_config_word(pdev->bus, pdev->devfn, PCI_COMMAND, &cmd) ||
	    cmd == 0xffff || !(cmd & PCI_COMMAND_MASTER))
		return;
	pci_bus_write_config_word(pdev->bus, pdev->devfn, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
	dev_warn(host->dev, "disconnected with the link up: bus mastering cleared through the bus\n");
}

static void fl_remove(struct pci_dev *pdev)
{
	struct fl_host *host = pci_get_drvdata(pdev);
	bool gone = pci_dev_is_disconnected(pdev);
	bool leak_cq = false;

	/* No new opens; open files and mappings keep @host and the buffers. */
	fl_cdev_unregister(host);
	/* no reset attempt or watchdog may touch the BAR from here on */
	fl_live_stop(host);

	mutex_lock(&host->lock);
	/* link down (J784S4 keeps the function): DL_Down reset it, nothing to wait for */
	if (!gone && fl_live_link_ok(host) && fl_setup_disable(host) == -ETIMEDOUT)
		leak_cq = true;	/* the endpoint may still write it */
	host->enabled = false;
	fl_q_fail_all(host, -ECANCELED);
	host->dead = true;
	mutex_unlock(&host->lock);
	wake_up_all(&host->wq);
	/* its buffers are freed through the function while it is still bound */
	fl_v4l2_unregister(host);

	fl_irq_teardown(host);
	/*
	 * In this order: bus mastering off (an endpoint that did not stop cannot write host
	 * memory any more: on a board its requests are refused upstream), then no user
	 * mapping reaches the buffers (an access gets SIGBUS), then the buffers and the
	 * completion ring are freed, here, through the device while it is still bound (its
	 * DMA and IOMMU state goes once remove() returns). An endpoint that did not reach
	 * RESET keeps both for good: the leak is logged.
	 */
	fl_remove_take_master(host, gone);
	fl_bufs_zap(host);
	fl_bufs_free_pages(host, leak_cq);
	/* an import follows the own buffers: kept for good, with them, when they are leaked */
	mutex_lock(&host->lock);
	if (!leak_cq)
		fl_import_drop(host, true);
	else
		host->imports_kept = fl_import_keep(host) > 0;
	mutex_unlock(&host->lock);
	if (leak_cq)
		dev_warn(host->dev,
			 "endpoint did not stop: completion ring leaked, bus mastering disabled\n");
	else
		dma_free_coherent(host->dev, host->cq_bytes, host->cq_area, host->cq_dma);

	mutex_lock(&host->lock);
	host->cq_area = NULL;
	host->status = NULL;
	host->cq = NULL;
	pci_iounmap(pdev, host->bar);
	host->bar = NULL;
	mutex_unlock(&host->lock);

	pci_release_region(pdev, 0);
	pci_disable_device(pdev);
	ida_free(&fl_host_ida, host->id);
	dev_info(host->dev, "/dev/%s removed%s\n", host->name, gone ? " (link lost)" : "");
	/* open files keep only the bookkeeping (their calls fail with -ENODEV) until closed */
	if (kref_read(&host->ref) > 1)
		dev_info(host->dev, "still open or mapped by user space: buffers freed, calls fail with -ENODEV, accesses with SIGBUS\n");
	fl_host_put(host);
}

/*
 * The root reboots (or kexecs): the endpoint must not keep writing memory the next kernel
 * owns. Stop it (bounded handshake) and take its bus mastering.
 */
static void fl_shutdown(struct pci_dev *pdev)
{
	struct fl_host *host = pci_get_drvdata(pdev);

	if (!host)
		return;
	fl_live_stop(host);
	mutex_lock(&host->lock);
	if (!host->dead && fl_live_link_ok(host))
		fl_setup_disable(host);
	host->enabled = false;
	mutex_unlock(&host->lock);
	pci_clear_master(pdev);
}

/*
 * AER/DPC (Documentation/PCI/pci-error-recovery.rst, drivers/pci/pcie/err.c). With I/O still
 * working (io_normal), a normal asynchronous reset does it (-EIO) and resume() has nothing
 * more to start. With the channel frozen no DMA passes, so the outstanding buffers go back
 * at once (-ENOLINK); a permanent failure is a removal to come. Until resume(), the core
 * resets the link: no reset attempt may touch the function meanwhile (it would start a queue
 * that the link reset then kills, with bus mastering that slot_reset() takes away), so the
 * reset and watchdog works are stopped as for a removal (fl_live_stop()) and apps get
 * -ENOLINK, as while a link is down.
 */
static pci_ers_result_t fl_error_detected(struct pci_dev *pdev, pci_channel_state_t state)
{
	struct fl_host *host = pci_get_drvdata(pdev);

	if (!host)
		return PCI_ERS_RESULT_DISCONNECT;
	dev_err(host->dev, "PCI error detected (channel state %d): queue stopped\n", state);
	if (state == pci_channel_io_normal) {
		mutex_lock(&host->lock);
		fl_live_reset(host, -EIO);
		mutex_unlock(&host->lock);
		return PCI_ERS_RESULT_CAN_RECOVER;
	}
	/* waits for a reset attempt in progress: it sees @removing and ends */
	fl_live_stop(host);
	mutex_lock(&host->lock);
	if (host->enabled)
		host->stats.queue_resets++;
	host->enabled = false;
	host->link_down = true;
	/*
	 * Bus mastering off before any buffer goes back (issue 27 item 3.4): until the link
	 * reset that follows, a channel frozen without containment still carries the
	 * endpoint's writes into the buffers it was given. A contained link drops the config
	 * write, and the endpoint's DMA with it. Off until the endpoint reports RESET.
	 */
	pci_clear_master(pdev);
	host->master_off = true;
	fl_q_fail_all(host, -ENOLINK);
	mutex_unlock(&host->lock);
	wake_up_all(&host->wq);
	return state == pci_channel_io_perm_failure ? PCI_ERS_RESULT_DISCONNECT :
						      PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t fl_slot_reset(struct pci_dev *pdev)
{
	struct fl_host *host = pci_get_drvdata(pdev);

	pci_restore_state(pdev);
	pci_save_state(pdev);
	/* on again once the endpoint reports RESET (live.c) */
	pci_clear_master(pdev);
	mutex_lock(&host->lock);
	host->master_off = true;
	mutex_unlock(&host->lock);
	dev_info(host->dev, "slot reset: re-enabling the queue\n");
	return PCI_ERS_RESULT_RECOVERED;
}

/*
 * Recovery done. After a frozen channel nothing runs (error_detected() stopped the works):
 * allow them again and reset the queue. After io_normal the reset error_detected() started
 * is running or done; a second one would only fail the frames queued since (-ECANCELED).
 */
static void fl_resume(struct pci_dev *pdev)
{
	struct fl_host *host = pci_get_drvdata(pdev);

	mutex_lock(&host->lock);
	host->removing = false;
	host->link_down = false;
	if (!host->enabled && !host->resetting)
		fl_live_reset(host, -ECANCELED);
	mutex_unlock(&host->lock);
}

static const struct pci_error_handlers fl_err_handlers = {
	.error_detected = fl_error_detected,
	.slot_reset = fl_slot_reset,
	.resume = fl_resume,
};

static const struct pci_device_id fl_ids[] = {
	{ PCI_DEVICE(FL_PCI_VENDOR_ID, FL_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, fl_ids);

static struct pci_driver fl_driver = {
	.name = FL_HOST_DRV_NAME,
	.id_table = fl_ids,
	.probe = fl_probe,
	.remove = fl_remove,
	.shutdown = fl_shutdown,
	.err_handler = &fl_err_handlers,
};
module_pci_driver(fl_driver);

MODULE_DESCRIPTION("framelink root-complex driver: camera frames over PCIe, endpoint DMA");
MODULE_LICENSE("GPL");
