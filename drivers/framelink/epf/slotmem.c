// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-epf: where the frame slots come from (issue 9 section 3).
 *
 * The slots are one physically contiguous DMA API allocation on the
 * controller's device (fl_ep.dma_dev = epc->dev.parent), chosen at bind:
 *
 *  a. The controller's DT node names a region "framelink-slots"
 *     (memory-region + memory-region-names): that region. When it already
 *     serves the device (the controller's driver attached it, as
 *     pci-epc-loop does with its own pool) it is used as it is; otherwise it
 *     is attached with of_reserved_mem_device_init_by_name() and released at
 *     the last unbind (fl_sm_attach()).
 *  b. Else the device's own pool (a no-map shared-dma-pool its driver
 *     attached), else CMA: the device's CMA area or the default one. Under
 *     an IOMMU, iommu_dma_alloc() takes CMA pages only with
 *     DMA_ATTR_FORCE_CONTIGUOUS (otherwise it maps scattered pages,
 *     drivers/iommu/dma-iommu.c, 6.12), so the slots ask for it there.
 *
 * Memory type: the DMA API's choice, and dma_mmap_attrs() gives the app the
 * same type. A dma-coherent device (the Orin's controller, the loop) snoops
 * the CPU caches, so the slots are cacheable memory, in the kernel and in the
 * app; a non-coherent device gets a non-cacheable (Normal-NC on arm64)
 * remapping and the app's mapping is non-cacheable too (dma_pgprot()), so no
 * cacheable alias can hold stale lines the device does not see. With an
 * IOMMU the rule is the same (iommu_dma_alloc()/iommu_dma_mmap()); only the
 * DMA address becomes an IOVA. Exception: a no-map pool is always mapped
 * write-combined for the kernel (dma_init_coherent_memory(), MEMREMAP_WC)
 * while the app gets the device's type, cacheable for a coherent device:
 * two attributes for one page. The Orin overlay uses a reusable (CMA)
 * region for that reason and because a no-map pool hands out physical
 * addresses as DMA addresses, bypassing an IOMMU (kernel/dma/coherent.c).
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/of_reserved_mem.h>
#include <linux/slab.h>

#include "epf.h"

#define FL_SM_NAME	"framelink-slots"

static const char fl_sm_busy[] =
	"; " FL_SM_NAME " not attached: the controller has its own pool, CMA area or other regions";

/**
 * struct fl_sm_attach - a region framelink attached to a controller
 * @node: in fl_sm_attached.
 * @dev: the controller's device.
 * @rmem: the region.
 * @users: bindings using it; released with the last.
 */
struct fl_sm_attach {
	struct list_head node;
	struct device *dev;
	struct reserved_mem *rmem;
	unsigned int users;
};

/*
 * Several functions may bind to one controller: the region is attached by
 * the first and released by the last. fl_sm_lock protects fl_sm_attached and
 * serializes the source selection against attach/release of another binding.
 */
static DEFINE_MUTEX(fl_sm_lock);
static LIST_HEAD(fl_sm_attached);

/* The device's no-map pool and CMA area (struct device fields, may be absent) */
static void *fl_sm_dev_pool(struct device *dev)
{
#ifdef CONFIG_DMA_DECLARE_COHERENT
	return dev->dma_mem;
#else
	return NULL;
#endif
}

static void *fl_sm_dev_cma(struct device *dev)
{
#ifdef CONFIG_DMA_CMA
	return dev->cma_area;
#else
	return NULL;
#endif
}

/* Region @idx of @np's memory-region and its kind ("cma", "no-map pool", "pool"); NULL if absent */
static struct reserved_mem *fl_sm_region(struct device_node *np, int idx, const char **kind)
{
	struct reserved_mem *rmem;
	struct device_node *r;

	if (idx < 0)
		return NULL;
	r = of_parse_phandle(np, "memory-region", idx);
	if (!r)
		return NULL;
	rmem = of_reserved_mem_lookup(r);
	if (of_property_read_bool(r, "reusable"))
		*kind = "cma";
	else
		*kind = of_property_read_bool(r, "no-map") ? "no-map pool" : "pool";
	of_node_put(r);
	return rmem;
}

/* The region of @np's memory-region that set up @priv (a pool or CMA area), or NULL */
static struct reserved_mem *fl_sm_region_of(struct device_node *np, void *priv, const char **kind)
{
	struct reserved_mem *rmem;
	int i;

	for (i = 0; (rmem = fl_sm_region(np, i, kind)); i++)
		if (rmem->priv == priv)
			return rmem;
	return NULL;
}

static struct fl_sm_attach *fl_sm_find(struct device *dev, struct reserved_mem *rmem)
{
	struct fl_sm_attach *a;

	lockdep_assert_held(&fl_sm_lock);
	list_for_each_entry(a, &fl_sm_attached, node)
		if (a->dev == dev && a->rmem == rmem)
			return a;
	return NULL;
}

/*
 * Attach @rmem (framelink-slots) to the controller; fl_sm_lock held.
 *
 * Release is the problem: of_reserved_mem_device_release() releases EVERY
 * region assigned to the device (drivers/of/of_reserved_mem.c, 6.12), and a
 * shared-dma-pool's release just clears dev->dma_mem or dev->cma_area. Had
 * the controller's driver attached a pool, releasing it under that driver
 * would send the frees of its live allocations (BAR memory, its own buffers)
 * to the page allocator: memory corruption. So framelink attaches only when
 * it can release exactly what it attached:
 *  - the device has no pool and no CMA area of its own (nothing of its
 *    driver's to clear; attaching a pool to a device that has one returns
 *    -EBUSY anyway, kernel/dma/coherent.c, while a CMA area would be
 *    silently replaced), and
 *  - the node lists no other region, so every registry entry of this device
 *    is ours (a restricted-dma-pool of the node, attached at probe, would
 *    be undone too).
 * Otherwise the caller uses what the device has and says why.
 *
 * Return: 0 (attached, @ep->sm_att set), -EBUSY when it cannot be done
 * safely, or the error of of_reserved_mem_device_init_by_name().
 */
static int fl_sm_attach(struct fl_ep *ep, struct reserved_mem *rmem)
{
	struct device *dev = ep->dma_dev;
	struct device_node *np = dev->of_node;
	struct fl_sm_attach *a;
	int ret;

	lockdep_assert_held(&fl_sm_lock);
	a = fl_sm_find(dev, rmem);
	if (a) {
		a->users++;
		ep->sm_att = a;
		return 0;
	}
	if (fl_sm_dev_pool(dev) || fl_sm_dev_cma(dev) ||
	    of_count_phandle_with_args(np, "memory-region", NULL) != 1)
		return -EBUSY;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	ret = of_reserved_mem_device_init_by_name(dev, np, FL_SM_NAME);
	if (ret) {
		kfree(a);
		return ret;
	}
	a->dev = dev;
	a->rmem = rmem;
	a->users = 1;
	list_add(&a->node, &fl_sm_attached);
	ep->sm_att = a;
	return 0;
}

/* Drop this binding's use of the region it attached; the last releases it */
static void fl_sm_detach(struct fl_ep *ep)
{
	struct fl_sm_attach *a = ep->sm_att;

	if (!a)
		return;
	ep->sm_att = NULL;
	mutex_lock(&fl_sm_lock);
	if (!--a->users) {
		list_del(&a->node);
		/* Only ours is assigned (fl_sm_attach()): this releases exactly it */
		of_reserved_mem_device_release(a->dev);
		kfree(a);
	}
	mutex_unlock(&fl_sm_lock);
}

/**
 * struct fl_sm_src - the chosen source, for the log line and the size check
 * @rmem: the region the slots come from, when known.
 * @kind: its kind: "cma", "no-map pool" or "pool".
 * @named: @rmem is framelink-slots.
 * @what: "reserved memory framelink-slots", "the controller's own pool", "CMA ...".
 * @how: how it serves the device (", attached at bind", ...), or "".
 * @why: why framelink-slots is not used, or "".
 */
struct fl_sm_src {
	struct reserved_mem *rmem;
	const char *kind;
	bool named;
	const char *what;
	const char *how;
	const char *why;
};

/* Does @rmem already serve @dev? A pool wins over a CMA area in dma_alloc_attrs() */
static bool fl_sm_serving(struct device *dev, struct reserved_mem *rmem)
{
	void *pool = fl_sm_dev_pool(dev);

	return rmem->priv && (rmem->priv == pool || (!pool && rmem->priv == fl_sm_dev_cma(dev)));
}

/* Choose the source (a, else b above); attaches framelink-slots if it can. fl_sm_lock held. */
static void fl_sm_choose(struct fl_ep *ep, struct fl_sm_src *s)
{
	struct device *dev = ep->dma_dev;
	struct device_node *np = dev->of_node;
	void *pool = fl_sm_dev_pool(dev);
	void *cma = fl_sm_dev_cma(dev);
	int ret;

	*s = (struct fl_sm_src){ .kind = "", .how = "", .why = "" };
	if (np)
		s->rmem = fl_sm_region(np, of_property_match_string(np, "memory-region-names",
								    FL_SM_NAME), &s->kind);
	if (s->rmem) {
		s->named = true;
		s->what = "reserved memory " FL_SM_NAME;
		if (!fl_sm_find(dev, s->rmem) && fl_sm_serving(dev, s->rmem)) {
			/* Its driver's: used as it is, never released by framelink */
			s->how = ", attached by its driver";
			return;
		}
		ret = fl_sm_attach(ep, s->rmem);
		if (!ret) {
			s->how = ", attached at bind";
			return;
		}
		if (ret != -EBUSY)
			dev_warn(ep->dev, "slots: cannot attach %s (%s): %d\n", FL_SM_NAME,
				 s->rmem->name, ret);
		s->why = ret == -EBUSY ? fl_sm_busy : "; " FL_SM_NAME " could not be attached";
		s->rmem = NULL;
		s->named = false;
	}
	/* b: what the device has */
	if (pool) {
		s->what = "the controller's own pool";
		s->rmem = np ? fl_sm_region_of(np, pool, &s->kind) : NULL;
	} else if (cma) {
		s->what = "CMA (the controller's area)";
		s->rmem = np ? fl_sm_region_of(np, cma, &s->kind) : NULL;
	} else {
		s->what = "CMA (default area)";
	}
}

/* One line: where the slots come from and how the device sees them */
static void fl_sm_log(struct fl_ep *ep, const struct fl_sm_src *s)
{
	char region[96] = "";

	if (s->rmem)
		snprintf(region, sizeof(region), " (%s, %llu bytes, %s)", s->rmem->name,
			 (u64)s->rmem->size, s->kind);
	dev_info(ep->dev, "slots: %u x %u bytes from %s%s%s, %s, %s%s\n",
		 ep->nslots, ep->slot_size, s->what, region, s->how,
		 dev_is_dma_coherent(ep->dma_dev) ? "coherent" : "non-coherent",
		 ep->sm_attrs & DMA_ATTR_FORCE_CONTIGUOUS ? "iommu" : "no iommu", s->why);
	/* dma_alloc_from_dev_coherent() returns the pool's physical address as the DMA address */
	if (fl_sm_dev_pool(ep->dma_dev) && (ep->sm_attrs & DMA_ATTR_FORCE_CONTIGUOUS))
		dev_warn(ep->dev, "slots: a pool gives physical addresses, not IOVAs: the IOMMU must map them\n");
}

/* The region is known and smaller than the slots: say so (bind fails with -ENOMEM) */
static bool fl_sm_too_small(struct fl_ep *ep, const struct fl_sm_src *s)
{
	if (!s->rmem || ep->slots_bytes <= s->rmem->size)
		return false;
	dev_err(ep->dev, "slots: %s (%s) has %llu bytes, %u slots x %u bytes = %zu asked: lower slots or slot_size in configfs\n",
		s->named ? FL_SM_NAME : s->what, s->rmem->name,
		(u64)s->rmem->size, ep->nslots, ep->slot_size, ep->slots_bytes);
	return true;
}

/**
 * fl_slotmem_alloc() - choose the slots' memory and allocate them (bind)
 * @ep: the endpoint, with nslots, slot_size and slots_bytes set.
 *
 * Logs one line naming the source. A region too small for
 * slots x slot_size, or an allocation that fails, is reported with the
 * region's name and size and what was asked.
 *
 * Return: 0 or -ENOMEM.
 */
int fl_slotmem_alloc(struct fl_ep *ep)
{
	struct device *dev = ep->dma_dev;
	struct fl_sm_src s;
	char size[40] = "";

	ep->sm_attrs = device_iommu_mapped(dev) ? DMA_ATTR_FORCE_CONTIGUOUS : 0;
	/* A pool wins in dma_alloc_attrs(): its memory may have no linear mapping */
	ep->sm_pool = fl_sm_dev_pool(dev);
	mutex_lock(&fl_sm_lock);
	fl_sm_choose(ep, &s);
	mutex_unlock(&fl_sm_lock);
	/* After the attach: what the free goes back to (fl_slotmem_free_late()) */
	ep->sm_dev_pool = fl_sm_dev_pool(dev);
	ep->sm_dev_cma = fl_sm_dev_cma(dev);
	if (fl_sm_too_small(ep, &s))
		goto detach;

	/* NOWARN: a failure is reported below, with what was asked, not as a splat */
	ep->slots_va = dma_alloc_attrs(dev, ep->slots_bytes, &ep->slots_dma,
				       GFP_KERNEL | __GFP_NOWARN, ep->sm_attrs);
	if (!ep->slots_va) {
		if (s.rmem)
			snprintf(size, sizeof(size), " (%s, %llu bytes)", s.rmem->name,
				 (u64)s.rmem->size);
		dev_err(ep->dev, "slots: cannot allocate %u slots x %u bytes = %zu from %s%s: in use or fragmented\n",
			ep->nslots, ep->slot_size, ep->slots_bytes, s.what, size);
		goto detach;
	}
	fl_sm_log(ep, &s);
	return 0;

detach:
	fl_sm_detach(ep);
	return -ENOMEM;
}

/**
 * fl_slotmem_free() - free the slots and release what bind attached (unbind)
 * @ep: the endpoint (user mappings zapped).
 *
 * The slots go back first, while the region still serves the device: a free
 * finds its allocator through dev->dma_mem / dev->cma_area.
 */
void fl_slotmem_free(struct fl_ep *ep)
{
	if (ep->slots_va) {
		dma_free_attrs(ep->dma_dev, ep->slots_bytes, ep->slots_va, ep->slots_dma,
			       ep->sm_attrs);
		ep->slots_va = NULL;
	}
	fl_sm_detach(ep);
}

/**
 * fl_slotmem_keep() - keep the slots past unbind for an importer's mapping
 * @ep: the endpoint, dead, an exported slot still mapped by a device.
 *
 * Holds the controller's device for fl_slotmem_free_late(), which the last
 * unmap calls (export.c).
 */
void fl_slotmem_keep(struct fl_ep *ep)
{
	get_device(ep->dma_dev);
}

/**
 * fl_slotmem_free_late() - free slots kept at unbind (the last importer unmapped)
 * @ep: the endpoint, dead, after fl_slotmem_keep().
 *
 * The controller's driver may have gone meanwhile: a shared-dma-pool's release
 * clears dev->dma_mem or dev->cma_area (kernel/dma/coherent.c, contiguous.c,
 * 6.12), and a free would then reach the wrong allocator. Its pool or CMA area
 * must be the one the slots came from; the pointer is the region's priv, which
 * outlives the driver's unbind and is reattached at its next probe, so equal
 * means the same allocator. Otherwise the slots stay allocated, said once.
 */
void fl_slotmem_free_late(struct fl_ep *ep)
{
	struct device *dev = ep->dma_dev;

	if (fl_sm_dev_pool(dev) != ep->sm_dev_pool || fl_sm_dev_cma(dev) != ep->sm_dev_cma) {
		dev_err(dev, "framelink-epf: %zu bytes of slots kept for good: the controller lost the memory they came from\n",
			ep->slots_bytes);
	} else {
		fl_slotmem_free(ep);
		dev_info(dev, "framelink-epf: %zu bytes of slots freed: the last importer let go\n",
			 ep->slots_bytes);
	}
	put_device(dev);
}

/**
 * fl_slotmem_mmap() - map slot memory to the app with the allocation's memory type
 * @ep: the endpoint.
 * @vma: the mapping, its range checked by the caller; vm_pgoff counts from @off.
 * @off: first byte of the part mapped (0, or a slot's start for an exported slot).
 * @len: bytes of that part.
 *
 * Return: 0 or the error of dma_mmap_attrs().
 */
int fl_slotmem_mmap(struct fl_ep *ep, struct vm_area_struct *vma, size_t off, size_t len)
{
	return dma_mmap_attrs(ep->dma_dev, vma, ep->slots_va + off, ep->slots_dma + off, len,
			      ep->sm_attrs);
}

/**
 * fl_slotmem_page() - the page where slot memory at @off starts (FL_IOC_EXPORT)
 * @ep: the endpoint (slots allocated).
 * @off: a slot's start.
 *
 * The DMA API describes its own allocation (dma_get_sgtable_attrs(), which
 * knows a pool, a remapped CMA block and an IOMMU allocation apart). It is
 * asked about the whole allocation, not the slot: for an allocation it had
 * to remap, a sub-range may be described from the allocation's first page
 * (iommu_dma_get_sgtable(), dma_common_find_pages(), 6.12). The slot must
 * lie within one segment: the allocation is physically contiguous.
 *
 * Return: the page, or NULL when the DMA API cannot describe it.
 */
struct page *fl_slotmem_page(struct fl_ep *ep, size_t off)
{
	struct page *page = NULL;
	struct scatterlist *sg;
	struct sg_table sgt;
	unsigned int i;

	if (dma_get_sgtable_attrs(ep->dma_dev, &sgt, ep->slots_va, ep->slots_dma,
				  ep->slots_bytes, ep->sm_attrs))
		return NULL;
	for_each_sgtable_sg(&sgt, sg, i) {
		if (off >= sg->length) {
			off -= sg->length;
			continue;
		}
		if (!sg->offset && sg->length - off >= ep->slot_size)
			page = pfn_to_page(page_to_pfn(sg_page(sg)) + (off >> PAGE_SHIFT));
		break;
	}
	sg_free_table(&sgt);
	return page;
}
