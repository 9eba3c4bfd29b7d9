// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: endpoint function driver, bind/unbind and controller events.
 *
 * Allocation in .bind (BAR0, slots, queues, /dev/framelink-ep<N>), hardware
 * set-up in epc_init (header, BAR, interrupts, DMA channels, outbound
 * window), the engine runs from link up to link down; work stops in
 * link_down, epc_deinit and .unbind. events.c calls the event handlers,
 * one at a time, in process context, whatever context the kernel delivers
 * the events in.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/pci_ids.h>
#include <linux/slab.h>

#include "epf.h"

static int fl_epf_epc_init(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);
	struct fl_ep *ep = fepf->ep;
	int ret;

	if (!ep)
		return 0;
	mutex_lock(&ep->life_lock);
	if (ep->hw_ready || READ_ONCE(ep->dead)) {
		mutex_unlock(&ep->life_lock);
		return 0;
	}
	ret = fl_bar_setup(ep);
	if (ret)
		goto out_unlock;
	ret = fl_xfer_init_hw(ep);
	if (ret)
		goto undo_bar;
	fl_bar_write_header(ep);
	ep->hw_ready = true;
	mutex_unlock(&ep->life_lock);

	/* Without a link-up event the link is up once the controller is */
	if (!ep->features->linkup_notifier)
		fl_engine_start(ep);
	return 0;

undo_bar:
	fl_bar_clear(ep);
out_unlock:
	mutex_unlock(&ep->life_lock);
	dev_err(ep->dev, "controller set-up failed: %d\n", ret);
	return ret;
}

/* Stop the engine and give the hardware back (deinit and unbind) */
static void fl_epf_hw_release(struct fl_ep *ep)
{
	fl_engine_stop(ep, FL_ERR_LINK);
	mutex_lock(&ep->life_lock);
	if (ep->hw_ready) {
		fl_xfer_exit_hw(ep);
		fl_bar_clear(ep);
		ep->hw_ready = false;
	}
	mutex_unlock(&ep->life_lock);
}

static void fl_epf_epc_deinit(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);

	if (fepf->ep)
		fl_epf_hw_release(fepf->ep);
}

/*
 * Before 6.11 the core does not replay a controller's init to a function
 * bound after it (pci_epc_notify_pending_init() came in 6.11): on a
 * controller that reports init by event (Tegra: at PERST# deassert), such a
 * function sees the link come up with nothing set up and no BAR. Say so:
 * only a PERST# cycle from the root sets it up.
 */
static void fl_epf_check_set_up(struct fl_ep *ep)
{
	bool ready;

	mutex_lock(&ep->life_lock);
	ready = ep->hw_ready || READ_ONCE(ep->dead);
	mutex_unlock(&ep->life_lock);
	if (!ready)
		dev_err(ep->dev,
			"link up, but the controller's init never reached this function (bound after it; no replay before 6.11): reset the endpoint from the root (PERST#)\n");
}

/* Return: the engine runs (else a later link up tries again) */
static bool fl_epf_link_up(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);
	struct fl_ep *ep = fepf->ep;
	bool running;

	if (!ep)
		return false;
	dev_info(&epf->dev, "link up\n");
	fl_epf_check_set_up(ep);
	fl_engine_start(ep);
	mutex_lock(&ep->life_lock);
	running = !!ep->engine;
	mutex_unlock(&ep->life_lock);
	return running;
}

static void fl_epf_link_down(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);

	if (!fepf->ep)
		return;
	dev_info(&epf->dev, "link down\n");
	fl_engine_stop(fepf->ep, FL_ERR_LINK);
}

static const struct fl_ev_handlers fl_epf_ev_handlers = {
	.init = fl_epf_epc_init,
	.deinit = fl_epf_epc_deinit,
	.link_up = fl_epf_link_up,
	.link_down = fl_epf_link_down,
};

static void fl_epf_unbind(struct pci_epf *epf);

static int fl_epf_bind(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);
	struct pci_epc *epc = epf->epc;
	struct fl_ep *ep;
	int ret;

	if (WARN_ON_ONCE(!epc))
		return -EINVAL;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return -ENOMEM;
	kref_init(&ep->ref);
	ep->fepf = fepf;
	ep->epf = epf;
	ep->epc = epc;
	ep->dev = &epf->dev;
	ep->dma_dev = epc->dev.parent;
	ep->id = -1;
	mutex_init(&ep->life_lock);
	mutex_init(&ep->reap_lock);
	mutex_init(&ep->files_lock);
	spin_lock_init(&ep->q_lock);
	spin_lock_init(&ep->xgen_lock);
	INIT_LIST_HEAD(&ep->files);
	init_waitqueue_head(&ep->engine_wq);
	init_waitqueue_head(&ep->app_wq);

	mutex_lock(&fepf->cfg_lock);
	ep->cfg = fepf->cfg;
	mutex_unlock(&fepf->cfg_lock);

	ep->features = pci_epc_get_features(epc, epf->func_no, epf->vfunc_no);
	if (!ep->features) {
		dev_err(&epf->dev, "controller reports no features\n");
		ret = -EOPNOTSUPP;
		goto put_ep;
	}

	ret = fl_bar_alloc(ep);
	if (ret)
		goto put_ep;
	ret = fl_slots_alloc(ep);
	if (ret)
		goto free_bar;
	/* Not fatal: without it "auto" crossovers keep their defaults */
	fl_xover_alloc(ep);
	fl_xover_reset(ep, false);
	ret = fl_cdev_register(ep);
	if (ret)
		goto free_slots;
	/* the ioctls work without it: a V4L2 core that refuses costs only /dev/videoN */
	ret = fl_ep_v4l2_register(ep);
	if (ret)
		dev_warn(&epf->dev, "no V4L2 capture device (%d)\n", ret);
	ret = fl_ep_vout_register(ep);
	if (ret)
		dev_warn(&epf->dev, "no V4L2 output device (%d)\n", ret);

	mutex_lock(&fepf->cfg_lock);
	fepf->ep = ep;
	mutex_unlock(&fepf->cfg_lock);
	dev_info(&epf->dev, "/dev/%s: %u slots of %u bytes, rings of %u\n",
		 ep->name, ep->nslots, ep->slot_size, ep->entries);
	/* Events from here on; init now where the controller reports none */
	ret = fl_epf_events_bind(&fepf->events, ep->features);
	if (ret) {
		dev_err(&epf->dev, "cannot take controller events: %d\n", ret);
		fl_epf_unbind(epf);
	}
	return ret;

free_slots:
	fl_xover_free(ep);
	fl_slots_free(ep);
free_bar:
	fl_bar_free(ep);
put_ep:
	fl_ep_put(ep);
	return ret;
}

static void fl_epf_unbind(struct pci_epf *epf)
{
	struct fl_epf *fepf = epf_get_drvdata(epf);
	struct fl_ep *ep = fepf->ep;

	if (!ep)
		return;
	fl_epf_events_unbind(&fepf->events);
	fl_epf_hw_release(ep);
	/* its buffers come back (nothing writes them now) and go while the device is ours */
	fl_ep_vout_unregister(ep);
	fl_ep_v4l2_unregister(ep);
	/* No new opens; files still open see dead and get -ENODEV */
	fl_cdev_unregister(ep);
	if (ep->dma_leaked) {
		/*
		 * A DMA channel never stopped (fl_xfer_exit_hw()): it may still
		 * write the slots and call back into the transfer state. Keep
		 * both for good: no put for this reference, slots not freed.
		 */
		dev_err(&epf->dev, "%u DMA channels never stopped: slots and state leaked\n",
			ep->dma_leaked);
		kref_get(&ep->ref);
		kmemleak_not_leak(ep);
	} else if (fl_export_keep_slots(ep)) {
		/* A device may still DMA into an exported slot: its last unmap frees them */
		dev_warn(&epf->dev, "an exported slot is still mapped by a device: slots kept until it unmaps\n");
		fl_xover_free(ep);
	} else {
		fl_xover_free(ep);
		fl_slots_free(ep);
	}
	fl_bar_free(ep);

	mutex_lock(&fepf->cfg_lock);
	fepf->ep = NULL;
	mutex_unlock(&fepf->cfg_lock);
	fl_ep_put(ep);
}

static int fl_epf_probe(FL_EPF_PROBE_PARAMS)
{
	struct fl_epf *fepf;

	fepf = devm_kzalloc(&epf->dev, sizeof(*fepf), GFP_KERNEL);
	if (!fepf)
		return -ENOMEM;
	fepf->epf = epf;
	mutex_init(&fepf->cfg_lock);
	fl_cfs_defaults(&fepf->cfg);
	fepf->header = (struct pci_epf_header){
		.vendorid = FL_EP_VENDOR_ID,
		.deviceid = FL_EP_DEVICE_ID,
		.baseclass_code = PCI_BASE_CLASS_MULTIMEDIA,
		.subclass_code = 0x80,		/* other multimedia device */
		.interrupt_pin = PCI_INTERRUPT_INTA,
	};
	epf->header = &fepf->header;
	epf_set_drvdata(epf, fepf);
	fl_epf_events_probe(&fepf->events, epf, &fl_epf_ev_handlers);
	return 0;
}

static const struct pci_epf_device_id fl_epf_ids[] = {
	{ .name = "framelink_epf" },
	{},
};

static FL_EPF_OPS_CONST struct pci_epf_ops fl_epf_ops = {
	.bind = fl_epf_bind,
	.unbind = fl_epf_unbind,
	.add_cfs = fl_cfs_add,
};

static struct pci_epf_driver fl_epf_driver = {
	.driver.name = "framelink_epf",
	.probe = fl_epf_probe,
	.id_table = fl_epf_ids,
	.ops = &fl_epf_ops,
	.owner = THIS_MODULE,
};

static int __init fl_epf_init(void)
{
	return pci_epf_register_driver(&fl_epf_driver);
}
module_init(fl_epf_init);

static void __exit fl_epf_exit(void)
{
	pci_epf_unregister_driver(&fl_epf_driver);
	fl_dmaengine_orphans_free();
}
module_exit(fl_epf_exit);

MODULE_DESCRIPTION("framelink endpoint function: camera frames over PCIe");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
