// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite of framelink-epf's slot memory (drivers/framelink/epf/slotmem.c, included
 * here whole so its static functions can be called): the paths the loopback controller
 * cannot take. pci-epc-loop's own no-map pool must serve its device (BAR memory the host
 * ioremaps lives there), so framelink-epf bound to it only ever finds "attached by its
 * driver" (69-epf-memory.sh). The VM's device tree (dts/qemu-virt.dtso) adds three
 * stand-ins for endpoint controllers, platform devices without a driver:
 *
 *  a  framelink-slots = a reusable (CMA) region, dma-coherent: the Orin overlay's case.
 *     Attached at bind, shared by two bindings, released with the last; too large fails.
 *  b  no memory-region, not dma-coherent: the default CMA area, a non-cacheable kernel
 *     mapping (dma-direct remaps it: a vmalloc address, not the linear map).
 *  c  framelink-slots plus another region: not attached (releasing would drop both),
 *     the default CMA area instead, and why.
 *
 * And on a: slots kept past unbind for an importer are freed at its last unmap, into the
 * area they came from, or kept while the device has lost that area.
 *
 * Copyright (C) 2026 The framelink authors
 */

#include <kunit/test.h>
#include <linux/dma-direct.h>
#include <linux/mm.h>
#include <linux/of_device.h>
#include <linux/of_platform.h>
#include <linux/platform_device.h>
#include <linux/vmalloc.h>

#include "slotmem.c"

#define FL_SMT_SLOT	SZ_1M

/* The stand-in @name's device, DMA configured as a bus would at probe; skips without it */
static struct device *fl_smt_dev(struct kunit *test, const char *name)
{
	struct platform_device *pdev;
	struct device_node *np;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/framelink-slotmem-test-%s", name);
	np = of_find_node_by_path(path);
	if (!np)
		kunit_skip(test, "no %s in the device tree (not the framelink VM)", path);
	pdev = of_find_device_by_node(np);
	of_node_put(np);
	KUNIT_ASSERT_NOT_NULL(test, pdev);
	/* of_find_device_by_node() took a reference: fl_smt_exit() drops it */
	test->priv = &pdev->dev;
	ret = of_dma_configure(&pdev->dev, pdev->dev.of_node, true);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64)), 0);
	return &pdev->dev;
}

static struct fl_ep *fl_smt_ep(struct kunit *test, struct device *dev, u32 nslots, u32 size)
{
	struct fl_ep *ep = kunit_kzalloc(test, sizeof(*ep), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ep);
	ep->dev = dev;
	ep->dma_dev = dev;
	ep->nslots = nslots;
	ep->slot_size = size;
	ep->slots_bytes = (size_t)nslots * size;
	return ep;
}

/* The named region of @dev's node */
static struct reserved_mem *fl_smt_slots_region(struct kunit *test, struct device *dev)
{
	struct device_node *np = dev->of_node;
	struct reserved_mem *rmem;
	const char *kind = "";

	rmem = fl_sm_region(np, of_property_match_string(np, "memory-region-names", FL_SM_NAME),
			    &kind);
	KUNIT_ASSERT_NOT_NULL(test, rmem);
	KUNIT_EXPECT_STREQ(test, kind, "cma");
	return rmem;
}

static bool fl_smt_inside(const struct reserved_mem *rmem, dma_addr_t dma, size_t len)
{
	return dma >= rmem->base && dma + len <= rmem->base + rmem->size;
}

/* a: attached by the first binding, kept by the second, released by the last */
static void fl_smt_attach_at_bind(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "a");
	struct fl_ep *ep1 = fl_smt_ep(test, dev, 2, FL_SMT_SLOT);
	struct fl_ep *ep2 = fl_smt_ep(test, dev, 1, FL_SMT_SLOT);
	struct reserved_mem *rmem = fl_smt_slots_region(test, dev);

	KUNIT_ASSERT_NULL(test, fl_sm_dev_cma(dev));
	KUNIT_ASSERT_TRUE(test, dev_is_dma_coherent(dev));
	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep1), 0);
	KUNIT_EXPECT_NOT_NULL(test, ep1->sm_att);
	KUNIT_EXPECT_PTR_EQ(test, fl_sm_dev_cma(dev), rmem->priv);
	KUNIT_EXPECT_TRUE(test, fl_smt_inside(rmem, ep1->slots_dma, ep1->slots_bytes));
	/* Coherent: the linear map's cacheable address, no remapping */
	KUNIT_EXPECT_TRUE(test, virt_addr_valid(ep1->slots_va));

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep2), 0);
	KUNIT_EXPECT_PTR_EQ(test, ep2->sm_att, ep1->sm_att);
	KUNIT_EXPECT_EQ(test, ep1->sm_att->users, 2U);
	KUNIT_EXPECT_TRUE(test, fl_smt_inside(rmem, ep2->slots_dma, ep2->slots_bytes));

	fl_slotmem_free(ep1);
	KUNIT_EXPECT_NULL(test, ep1->slots_va);
	KUNIT_EXPECT_PTR_EQ(test, fl_sm_dev_cma(dev), rmem->priv);
	fl_slotmem_free(ep2);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));
	KUNIT_EXPECT_TRUE(test, list_empty(&fl_sm_attached));
}

/* a: more than the region holds fails with -ENOMEM and leaves nothing attached */
static void fl_smt_too_large(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "a");
	struct reserved_mem *rmem = fl_smt_slots_region(test, dev);
	struct fl_ep *ep = fl_smt_ep(test, dev, rmem->size / FL_SMT_SLOT + 1, FL_SMT_SLOT);

	KUNIT_EXPECT_EQ(test, fl_slotmem_alloc(ep), -ENOMEM);
	KUNIT_EXPECT_NULL(test, ep->slots_va);
	KUNIT_EXPECT_NULL(test, ep->sm_att);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));
	KUNIT_EXPECT_TRUE(test, list_empty(&fl_sm_attached));
}

/* b: nothing named, not coherent: default CMA, non-cacheable kernel mapping */
static void fl_smt_default_cma_noncoherent(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "b");
	struct fl_ep *ep = fl_smt_ep(test, dev, 2, FL_SMT_SLOT);
	struct fl_sm_src s;

	KUNIT_ASSERT_FALSE(test, dev_is_dma_coherent(dev));
	mutex_lock(&fl_sm_lock);
	fl_sm_choose(ep, &s);
	mutex_unlock(&fl_sm_lock);
	KUNIT_EXPECT_STREQ(test, s.what, "CMA (default area)");
	KUNIT_EXPECT_NULL(test, s.rmem);
	KUNIT_EXPECT_STREQ(test, s.why, "");

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep), 0);
	/* dma-direct remapped the pages with dma_pgprot(): Normal-NC on arm64 */
	KUNIT_EXPECT_TRUE(test, is_vmalloc_addr(ep->slots_va));
	KUNIT_EXPECT_FALSE(test, virt_addr_valid(ep->slots_va));
	fl_slotmem_free(ep);
	KUNIT_EXPECT_NULL(test, ep->slots_va);
}

/* c: framelink-slots beside another region is not attached; the default CMA area, and why */
static void fl_smt_other_region_refused(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "c");
	struct reserved_mem *rmem = fl_smt_slots_region(test, dev);
	struct fl_ep *ep = fl_smt_ep(test, dev, 2, FL_SMT_SLOT);
	struct fl_sm_src s;

	mutex_lock(&fl_sm_lock);
	fl_sm_choose(ep, &s);
	mutex_unlock(&fl_sm_lock);
	KUNIT_EXPECT_FALSE(test, s.named);
	KUNIT_EXPECT_PTR_EQ(test, s.why, (const char *)fl_sm_busy);
	KUNIT_EXPECT_STREQ(test, s.what, "CMA (default area)");
	KUNIT_EXPECT_NULL(test, ep->sm_att);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep), 0);
	KUNIT_EXPECT_FALSE(test, fl_smt_inside(rmem, ep->slots_dma, ep->slots_bytes));
	fl_slotmem_free(ep);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));
}

/*
 * The page of every slot as an exported slot hands it to importers (fl_slotmem_page(),
 * epf/export.c): the page at the slot's DMA address (no IOMMU here: dma-direct, the
 * physical address) and under the kernel's own mapping of the slot.
 */
static void fl_smt_check_slot_pages(struct kunit *test, struct fl_ep *ep)
{
	struct page *page;
	size_t off;
	u32 i;

	KUNIT_EXPECT_FALSE(test, ep->sm_pool);
	for (i = 0; i < ep->nslots; i++) {
		off = (size_t)i * ep->slot_size;
		page = fl_slotmem_page(ep, off);
		KUNIT_ASSERT_NOT_NULL(test, page);
		KUNIT_EXPECT_EQ(test, page_to_phys(page),
				dma_to_phys(ep->dma_dev, ep->slots_dma + off));
		if (is_vmalloc_addr(ep->slots_va))
			KUNIT_EXPECT_PTR_EQ(test, page, vmalloc_to_page(ep->slots_va + off));
		else
			KUNIT_EXPECT_PTR_EQ(test, page, virt_to_page(ep->slots_va + off));
	}
}

/* a: slots in the linear map (CMA region, coherent) */
static void fl_smt_slot_pages_linear(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "a");
	struct fl_ep *ep = fl_smt_ep(test, dev, 3, FL_SMT_SLOT);

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep), 0);
	fl_smt_check_slot_pages(test, ep);
	fl_slotmem_free(ep);
}

/* b: slots remapped (default CMA, not coherent): the DMA API must not describe slot 0 for all */
static void fl_smt_slot_pages_remapped(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "b");
	struct fl_ep *ep = fl_smt_ep(test, dev, 3, FL_SMT_SLOT);

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep), 0);
	KUNIT_EXPECT_TRUE(test, is_vmalloc_addr(ep->slots_va));
	fl_smt_check_slot_pages(test, ep);
	fl_slotmem_free(ep);
}

/*
 * a: slots kept past unbind for an importer's mapping go back to the CMA area at its last
 * unmap (fl_slotmem_free_late(), issue 27 item 3.14): 12 of the region's 16 MiB, so a second
 * such allocation fits only once the first is back. Before, they were kept for good.
 */
static void fl_smt_free_late(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "a");
	struct fl_ep *ep1 = fl_smt_ep(test, dev, 12, FL_SMT_SLOT);
	struct fl_ep *ep2 = fl_smt_ep(test, dev, 12, FL_SMT_SLOT);

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep1), 0);
	KUNIT_EXPECT_EQ(test, fl_slotmem_alloc(ep2), -ENOMEM);
	fl_slotmem_keep(ep1);
	fl_slotmem_free_late(ep1);
	KUNIT_EXPECT_NULL(test, ep1->slots_va);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));
	KUNIT_EXPECT_TRUE(test, list_empty(&fl_sm_attached));
	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep2), 0);
	fl_slotmem_free(ep2);
}

/*
 * a: the device lost the CMA area before the last unmap (every region of the device
 * released, as its driver's unbind does): the slots stay allocated, not freed to the page
 * allocator through the default area; once the area serves the device again, they go back.
 */
static void fl_smt_free_late_lost(struct kunit *test)
{
	struct device *dev = fl_smt_dev(test, "a");
	struct fl_ep *ep1 = fl_smt_ep(test, dev, 12, FL_SMT_SLOT);
	struct fl_ep *ep2 = fl_smt_ep(test, dev, 12, FL_SMT_SLOT);
	struct reserved_mem *rmem = fl_smt_slots_region(test, dev);

	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep1), 0);
	fl_slotmem_keep(ep1);
	of_reserved_mem_device_release(dev);
	KUNIT_ASSERT_NULL(test, fl_sm_dev_cma(dev));
	fl_slotmem_free_late(ep1);
	KUNIT_EXPECT_NOT_NULL(test, ep1->slots_va);

	/* The area back (the same region's priv): a second 12 MiB still does not fit */
	KUNIT_ASSERT_EQ(test, of_reserved_mem_device_init_by_name(dev, dev->of_node, FL_SM_NAME),
			0);
	KUNIT_ASSERT_PTR_EQ(test, fl_sm_dev_cma(dev), rmem->priv);
	KUNIT_EXPECT_EQ(test, fl_slotmem_alloc(ep2), -ENOMEM);
	fl_slotmem_keep(ep1);
	fl_slotmem_free_late(ep1);
	KUNIT_EXPECT_NULL(test, ep1->slots_va);
	KUNIT_EXPECT_NULL(test, fl_sm_dev_cma(dev));
	KUNIT_ASSERT_EQ(test, fl_slotmem_alloc(ep2), 0);
	fl_slotmem_free(ep2);
}

static void fl_smt_exit(struct kunit *test)
{
	if (test->priv)
		put_device(test->priv);
}

static struct kunit_case fl_slotmem_cases[] = {
	KUNIT_CASE(fl_smt_attach_at_bind),
	KUNIT_CASE(fl_smt_too_large),
	KUNIT_CASE(fl_smt_default_cma_noncoherent),
	KUNIT_CASE(fl_smt_other_region_refused),
	KUNIT_CASE(fl_smt_slot_pages_linear),
	KUNIT_CASE(fl_smt_slot_pages_remapped),
	KUNIT_CASE(fl_smt_free_late),
	KUNIT_CASE(fl_smt_free_late_lost),
	{}
};

static struct kunit_suite fl_slotmem_suite = {
	.name = "framelink_slotmem",
	.exit = fl_smt_exit,
	.test_cases = fl_slotmem_cases,
};

kunit_test_suite(fl_slotmem_suite);

MODULE_DESCRIPTION("KUnit tests of framelink-epf's slot memory selection");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
