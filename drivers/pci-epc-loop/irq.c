// SPDX-License-Identifier: GPL-2.0
/*
 * pci-epc-loop: endpoint-to-root-complex interrupts.
 *
 * INTx goes through a linear domain (one hwirq per pin) that the host
 * bridge's map_irq hands out. MSI and MSI-X go through a software MSI
 * controller: a PCI/MSI domain on top of a base domain whose messages are
 * writes of the hwirq number to LOOP_MSI_ADDR. Raising an MSI reads the
 * address and data the root complex programmed (config space for MSI, the
 * table in the EPF's BAR for MSI-X), decodes the write as the MSI
 * controller would, and runs the handler. Masked vectors are held pending
 * and delivered when unmasked.
 *
 * INTx is a level: with intx_level set, a raise asserts the line for
 * intx_assert_us (Tegra234's and Cadence's endpoint controllers hold it
 * about 1 ms: pcie-tegra194.c tegra_pcie_ep_raise_intx_irq(),
 * pcie-cadence-ep.c cdns_pcie_ep_send_intx_irq()), and while it is
 * asserted, not disabled in the command register and not masked by the
 * host's irq chip, the host handler runs again after each return, at most
 * every LOOP_INTX_REDELIVER_US, as a level interrupt re-fires at EOI. The
 * INTx Status bit follows the line. A root without INTx (j784s4) maps no
 * IRQ and drops INTx raises.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/delay.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/ktime.h>
#include <linux/msi.h>

#include "loop.h"

/* Interrupts delivered per pass of the pending worker, to bound it */
#define LOOP_IRQ_BATCH	64
/* Shortest gap between two runs of the handler of a held INTx */
#define LOOP_INTX_REDELIVER_US	50

static void loop_msi_compose(struct irq_data *d, struct msi_msg *msg)
{
	msg->address_lo = lower_32_bits(LOOP_MSI_ADDR);
	msg->address_hi = upper_32_bits(LOOP_MSI_ADDR);
	msg->data = d->hwirq;
}

/* Vectors are not steered to CPUs: delivery runs where it is raised */
static int loop_msi_set_affinity(struct irq_data *d,
				 const struct cpumask *mask, bool force)
{
	return IRQ_SET_MASK_OK_DONE;
}

static struct irq_chip loop_msi_base_chip = {
	.name			= "pci-epc-loop",
	.irq_compose_msi_msg	= loop_msi_compose,
	.irq_set_affinity	= loop_msi_set_affinity,
};

static int loop_msi_base_alloc(struct irq_domain *d, unsigned int virq,
			       unsigned int nr_irqs, void *arg)
{
	struct pci_epc_loop *loop = d->host_data;
	unsigned int i;
	int pos;

	/* Multi-MSI needs nr_irqs aligned, contiguous hwirqs */
	mutex_lock(&loop->msi_lock);
	pos = bitmap_find_free_region(loop->msi_used, LOOP_NR_MSI,
				      order_base_2(nr_irqs));
	mutex_unlock(&loop->msi_lock);
	if (pos < 0)
		return -ENOSPC;

	for (i = 0; i < nr_irqs; i++)
		irq_domain_set_info(d, virq + i, pos + i, &loop_msi_base_chip,
				    loop, handle_simple_irq, NULL, NULL);
	return 0;
}

static void loop_msi_base_free(struct irq_domain *d, unsigned int virq,
			       unsigned int nr_irqs)
{
	struct irq_data *data = irq_domain_get_irq_data(d, virq);
	struct pci_epc_loop *loop = d->host_data;
	unsigned int i;

	if (!data)
		return;
	mutex_lock(&loop->msi_lock);
	bitmap_release_region(loop->msi_used, data->hwirq,
			      order_base_2(nr_irqs));
	mutex_unlock(&loop->msi_lock);

	for (i = 0; i < nr_irqs; i++)
		irq_domain_reset_irq_data(irq_domain_get_irq_data(d, virq + i));
}

static const struct irq_domain_ops loop_msi_base_ops = {
	.alloc	= loop_msi_base_alloc,
	.free	= loop_msi_base_free,
};

/* PCI/MSI domain on top of the base domain (kernels without MSI parents) */
static struct irq_chip loop_msi_chip __maybe_unused = {
	.name	= "pci-epc-loop-MSI",
};

static struct msi_domain_info loop_msi_info __maybe_unused = {
	.flags	= MSI_FLAG_USE_DEF_DOM_OPS | MSI_FLAG_USE_DEF_CHIP_OPS |
		  FL_MSI_FLAG_NO_AFFINITY | MSI_FLAG_MULTI_PCI_MSI |
		  MSI_FLAG_PCI_MSIX,
	.chip	= &loop_msi_chip,
};

/*
 * The INTx "controller" only records whether the host masked a pin: the
 * level flow masks while the handler runs (and until a oneshot thread is
 * done), and a masked level line is not delivered.
 */
static void loop_intx_mask(struct irq_data *d)
{
	struct pci_epc_loop *loop = irq_data_get_irq_chip_data(d);

	set_bit(d->hwirq, &loop->intx_masked);
}

static void loop_intx_unmask(struct irq_data *d)
{
	struct pci_epc_loop *loop = irq_data_get_irq_chip_data(d);

	clear_bit(d->hwirq, &loop->intx_masked);
}

static struct irq_chip loop_intx_chip = {
	.name		= "pci-epc-loop-INTx",
	.irq_mask	= loop_intx_mask,
	.irq_unmask	= loop_intx_unmask,
};

static int loop_intx_map(struct irq_domain *d, unsigned int virq,
			 irq_hw_number_t hw)
{
	irq_set_chip_data(virq, d->host_data);
	irq_set_chip_and_handler(virq, &loop_intx_chip, handle_level_irq);
	return 0;
}

static const struct irq_domain_ops loop_intx_ops = {
	.map	= loop_intx_map,
	.xlate	= irq_domain_xlate_onecell,
};

/**
 * loop_map_irq() - host bridge map_irq: INTx pin to Linux IRQ
 * @pdev: the function
 * @slot: slot number (always 0)
 * @pin: interrupt pin, 1 (INTA) to 4 (INTD)
 *
 * Return: the Linux IRQ number, or 0 when there is none.
 */
int loop_map_irq(const struct pci_dev *pdev, u8 slot, u8 pin)
{
	struct pci_epc_loop *loop = pdev->bus->sysdata;

	/* J784S4: no INTx domain, of_irq_parse_and_map_pci() finds none */
	if (!loop->rc_intx || pin < 1 || pin > PCI_NUM_INTX)
		return 0;
	return irq_create_mapping(loop->intx_domain, pin - 1);
}

static bool loop_deliver(struct pci_epc_loop *loop, struct irq_domain *d,
			 u32 hwirq, atomic64_t *counter)
{
	if (generic_handle_domain_irq_safe(d, hwirq)) {
		atomic64_inc(&loop->stats.irq_dropped);
		return false;
	}
	atomic64_inc(counter);
	return true;
}

/* The MSI controller decodes a memory write from the function */
static void loop_deliver_msi(struct pci_epc_loop *loop, u64 addr, u32 data,
			     atomic64_t *counter)
{
	if (addr != LOOP_MSI_ADDR || data >= LOOP_NR_MSI) {
		atomic64_inc(&loop->stats.irq_dropped);
		dev_warn_ratelimited(loop->dev,
				     "MSI write %#x to %#llx not decoded\n",
				     data, addr);
		return;
	}
	if (loop_msictl_deliver(loop, data, counter == &loop->stats.irq_msix))
		return;
	loop_deliver(loop, loop->msi_base, data, counter);
}

static void loop_deliver_intx(struct pci_epc_loop *loop, struct loop_fn *fn,
			      u8 pin)
{
	unsigned long flags;

	/* Assert, let the handler run, deassert */
	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	fn->cfg[PCI_STATUS] |= PCI_STATUS_INTERRUPT;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	loop_deliver(loop, loop->intx_domain, pin - 1, &loop->stats.irq_intx);

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	fn->cfg[PCI_STATUS] &= ~PCI_STATUS_INTERRUPT;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

static u32 fn_get32(const struct loop_fn *fn, int off)
{
	return fn->cfg[off] | fn->cfg[off + 1] << 8 | fn->cfg[off + 2] << 16 |
	       (u32)fn->cfg[off + 3] << 24;
}

static u16 fn_get16(const struct loop_fn *fn, int off)
{
	return fn->cfg[off] | fn->cfg[off + 1] << 8;
}

/* MSI-X table entry in the EPF's BAR memory; cfg_lock held */
static __le32 *loop_msix_entry(struct pci_epc_loop *loop,
			       struct loop_fn *fn, u16 idx)
{
	struct loop_bar *b = &fn->bar[fn->msix_bir];
	u64 end = fn->msix_offset + (u64)fn->msix_nr * PCI_MSIX_ENTRY_SIZE;

	if (!b->set || ALIGN(end, 8) + DIV_ROUND_UP(fn->msix_nr, 64) * 8 > b->size)
		return NULL;
	return loop->pool_va + (b->phys - loop->pool_phys) + fn->msix_offset +
	       idx * PCI_MSIX_ENTRY_SIZE;
}

static u8 *loop_msix_pba(struct pci_epc_loop *loop, struct loop_fn *fn)
{
	struct loop_bar *b = &fn->bar[fn->msix_bir];

	return loop->pool_va + (b->phys - loop->pool_phys) +
	       ALIGN(fn->msix_offset + fn->msix_nr * PCI_MSIX_ENTRY_SIZE, 8);
}

static void loop_intx_set_line(struct pci_epc_loop *loop, struct loop_fn *fn,
			       bool asserted)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	if (asserted)
		fn->cfg[PCI_STATUS] |= PCI_STATUS_INTERRUPT;
	else
		fn->cfg[PCI_STATUS] &= ~PCI_STATUS_INTERRUPT;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
}

/* The asserted line reaches the handler: link, command register, mask */
static bool loop_intx_deliverable(struct pci_epc_loop *loop,
				  struct loop_fn *fn, u8 pin)
{
	unsigned long flags;
	bool enabled;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	enabled = !(fn_get16(fn, PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE);
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
	return enabled && loop_rc_up(loop) &&
	       !test_bit(pin - 1, &loop->intx_masked);
}

/*
 * Level INTx: hold the line for intx_assert_us, as the controller's raise
 * does (assert, sleep ~1 ms, deassert), and run the handler again after
 * each return while it is held and reaches the host. The sleep between
 * runs bounds the rate; the hold is bounded by the knob's maximum. On a
 * board a handler of a few microseconds runs many times in 1 ms; in a slow
 * VM one sleep can outlast the hold, so a handler that ran gets at least
 * one more run when the line still reaches it at the end of a non-zero
 * hold.
 */
static int loop_raise_intx_level(struct pci_epc_loop *loop,
				 struct loop_fn *fn, u8 pin)
{
	u64 hold = (u64)READ_ONCE(loop->intx_assert_us) * NSEC_PER_USEC;
	unsigned int runs = 0;
	bool held = false, ok;
	u64 deadline;

	mutex_lock(&loop->intx_lock);
	deadline = ktime_get_ns() + hold;
	loop_intx_set_line(loop, fn, true);
	while (loop_rc_up(loop)) {
		ok = loop_intx_deliverable(loop, fn, pin);
		if (ok) {
			if (!loop_deliver(loop, loop->intx_domain, pin - 1,
					  runs ? &loop->rc_intx_redelivered :
					  &loop->stats.irq_intx))
				break;
			runs++;
		} else if (!runs && !held) {
			held = true;
			atomic64_inc(&loop->stats.irq_held);
		}
		if (ktime_get_ns() >= deadline && (runs != 1 || !ok || !hold))
			break;
		usleep_range(LOOP_INTX_REDELIVER_US, 2 * LOOP_INTX_REDELIVER_US);
	}
	loop_intx_set_line(loop, fn, false);
	mutex_unlock(&loop->intx_lock);

	/* Deasserted before the host could see it: the interrupt is lost */
	if (!runs && held)
		atomic64_inc(&loop->stats.irq_dropped);
	return 0;
}

static int loop_raise_intx(struct pci_epc_loop *loop, struct loop_fn *fn)
{
	unsigned long flags;
	u8 pin;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	pin = fn->cfg[PCI_INTERRUPT_PIN];
	if (pin < 1 || pin > PCI_NUM_INTX) {
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		return -EINVAL;
	}
	if (!loop->rc_intx) {
		/* The Assert_INTx message reaches a root that ignores it */
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		atomic64_inc(&loop->rc_intx_refused);
		atomic64_inc(&loop->stats.irq_dropped);
		dev_dbg_ratelimited(loop->dev, "INTx dropped: %s has no INTx\n",
				    loop->rc_name);
		return 0;
	}
	if (READ_ONCE(loop->intx_level)) {
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		return loop_raise_intx_level(loop, fn, pin);
	}
	if (fn_get16(fn, PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE) {
		fn->intx_pending = true;
		fn->cfg[PCI_STATUS] |= PCI_STATUS_INTERRUPT;
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		atomic64_inc(&loop->stats.irq_held);
		return 0;
	}
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	loop_deliver_intx(loop, fn, pin);
	return 0;
}

static int loop_raise_msi(struct pci_epc_loop *loop, struct loop_fn *fn,
			  u16 num)
{
	int cap = LOOP_CAP_MSI;
	unsigned long flags;
	u32 nvec, bit, data;
	u16 ctrl;
	u64 addr;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	ctrl = fn_get16(fn, cap + PCI_MSI_FLAGS);
	nvec = 1U << FIELD_GET(PCI_MSI_FLAGS_QSIZE, ctrl);
	if (!(ctrl & PCI_MSI_FLAGS_ENABLE) ||
	    !(fn_get16(fn, PCI_COMMAND) & PCI_COMMAND_MASTER) ||
	    num < 1 || num > nvec) {
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		return -EINVAL;
	}
	bit = num - 1;
	if (fn_get32(fn, cap + PCI_MSI_MASK_64) & BIT(bit)) {
		fn->msi_pending |= BIT(bit);
		fn->cfg[cap + PCI_MSI_PENDING_64 + bit / 8] |= BIT(bit % 8);
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		atomic64_inc(&loop->stats.irq_held);
		return 0;
	}
	addr = fn_get32(fn, cap + PCI_MSI_ADDRESS_LO) |
	       (u64)fn_get32(fn, cap + PCI_MSI_ADDRESS_HI) << 32;
	data = (fn_get16(fn, cap + PCI_MSI_DATA_64) & ~(nvec - 1)) | bit;
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	loop_deliver_msi(loop, addr, data, &loop->stats.irq_msi);
	return 0;
}

static int loop_raise_msix(struct pci_epc_loop *loop, struct loop_fn *fn,
			   u16 num)
{
	unsigned long flags;
	__le32 *entry;
	u32 data;
	u16 ctrl;
	u64 addr;

	raw_spin_lock_irqsave(&loop->cfg_lock, flags);
	ctrl = fn_get16(fn, LOOP_CAP_MSIX + PCI_MSIX_FLAGS);
	entry = num >= 1 && num <= fn->msix_nr ?
		loop_msix_entry(loop, fn, num - 1) : NULL;
	if (!entry || !(ctrl & PCI_MSIX_FLAGS_ENABLE) ||
	    !(fn_get16(fn, PCI_COMMAND) & PCI_COMMAND_MASTER)) {
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		return -EINVAL;
	}
	if ((ctrl & PCI_MSIX_FLAGS_MASKALL) ||
	    (le32_to_cpu(READ_ONCE(entry[PCI_MSIX_ENTRY_VECTOR_CTRL / 4])) &
	     PCI_MSIX_ENTRY_CTRL_MASKBIT)) {
		u8 *pba = loop_msix_pba(loop, fn);

		__set_bit(num - 1, fn->msix_pending);
		pba[(num - 1) / 8] |= BIT((num - 1) % 8);
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);
		atomic64_inc(&loop->stats.irq_held);
		/* Unmasking is a write to the table: poll for it */
		loop_irq_kick(loop);
		return 0;
	}
	addr = le32_to_cpu(READ_ONCE(entry[PCI_MSIX_ENTRY_LOWER_ADDR / 4])) |
	       (u64)le32_to_cpu(READ_ONCE(entry[PCI_MSIX_ENTRY_UPPER_ADDR / 4]))
	       << 32;
	data = le32_to_cpu(READ_ONCE(entry[PCI_MSIX_ENTRY_DATA / 4]));
	raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

	loop_deliver_msi(loop, addr, data, &loop->stats.irq_msix);
	return 0;
}

static int loop_raise_one(struct pci_epc_loop *loop, struct loop_fn *fn,
			  unsigned int type, u16 num)
{
	switch (type) {
	case FL_EPC_IRQ_INTX:
		return loop_raise_intx(loop, fn);
	case FL_EPC_IRQ_MSI:
		return loop_raise_msi(loop, fn, num);
	case FL_EPC_IRQ_MSIX:
		return loop_raise_msix(loop, fn, num);
	default:
		return -EINVAL;
	}
}

/**
 * loop_irq_raise() - the function interrupts the root complex
 * @loop: the loopback
 * @func_no: function number
 * @type: FL_EPC_IRQ_INTX, FL_EPC_IRQ_MSI or FL_EPC_IRQ_MSIX
 * @num: MSI/MSI-X vector, 1..N
 *
 * Context: process context, may sleep.
 * Return: 0 when delivered or held pending, negative errno otherwise.
 */
int loop_irq_raise(struct pci_epc_loop *loop, u8 func_no, unsigned int type,
		   u16 num)
{
	struct loop_fn *fn;
	int ret = 0, n = 1;

	if (func_no >= LOOP_MAX_FUNCS)
		return -EINVAL;
	fn = &loop->fn[func_no];

	if (!loop_rc_up(loop)) {
		atomic64_inc(&loop->stats.irq_dropped);
		return -ENOLINK;
	}

	/* Posted writes through the window are ordered before the MSI */
	loop_win_flush_all(loop);

	if (atomic_dec_if_positive(&loop->drop_irq) >= 0) {
		atomic64_inc(&loop->stats.irq_dropped);
		return 0;
	}
	/* As DesignWare's raise fails when it cannot map the MSI address */
	if (atomic_dec_if_positive(&loop->fail_irq) >= 0) {
		atomic64_inc(&loop->stats.irq_failed);
		return -EINVAL;
	}
	if (atomic_dec_if_positive(&loop->dup_irq) >= 0)
		n = 2;

	while (n-- && !ret)
		ret = loop_raise_one(loop, fn, type, num);
	if (ret)
		atomic64_inc(&loop->stats.irq_dropped);
	return ret;
}

/**
 * loop_irq_kick() - look for held interrupts that can now be delivered
 * @loop: the loopback
 */
void loop_irq_kick(struct pci_epc_loop *loop)
{
	mod_delayed_work(system_wq, &loop->irq_work, 0);
}

struct loop_pending {
	unsigned int n;
	u64 addr[LOOP_IRQ_BATCH];
	u32 data[LOOP_IRQ_BATCH];
	atomic64_t *counter[LOOP_IRQ_BATCH];
};

static void loop_pending_add(struct loop_pending *p, u64 addr, u32 data,
			     atomic64_t *counter)
{
	p->addr[p->n] = addr;
	p->data[p->n] = data;
	p->counter[p->n] = counter;
	p->n++;
}

/* Collect deliverable held vectors of @fn; cfg_lock held */
static bool loop_collect_pending(struct pci_epc_loop *loop,
				 struct loop_fn *fn, struct loop_pending *p,
				 bool *intx)
{
	u16 cmd = fn_get16(fn, PCI_COMMAND);
	int cap = LOOP_CAP_MSI;
	bool more = false;
	u16 ctrl;
	u32 bit;

	if (fn->intx_pending && !(cmd & PCI_COMMAND_INTX_DISABLE)) {
		fn->intx_pending = false;
		*intx = true;
	}
	if (!(cmd & PCI_COMMAND_MASTER))
		return false;

	ctrl = fn_get16(fn, cap + PCI_MSI_FLAGS);
	if ((ctrl & PCI_MSI_FLAGS_ENABLE) && fn->msi_pending) {
		u32 nvec = 1U << FIELD_GET(PCI_MSI_FLAGS_QSIZE, ctrl);
		u32 ready = fn->msi_pending &
			    ~fn_get32(fn, cap + PCI_MSI_MASK_64);
		u64 addr = fn_get32(fn, cap + PCI_MSI_ADDRESS_LO) |
			   (u64)fn_get32(fn, cap + PCI_MSI_ADDRESS_HI) << 32;
		u16 data = fn_get16(fn, cap + PCI_MSI_DATA_64) & ~(nvec - 1);

		while (ready && p->n < LOOP_IRQ_BATCH) {
			bit = __ffs(ready);
			ready &= ~BIT(bit);
			fn->msi_pending &= ~BIT(bit);
			fn->cfg[cap + PCI_MSI_PENDING_64 + bit / 8] &=
				~BIT(bit % 8);
			if (bit < nvec)
				loop_pending_add(p, addr, data | bit,
						 &loop->stats.irq_msi);
		}
	}

	ctrl = fn_get16(fn, LOOP_CAP_MSIX + PCI_MSIX_FLAGS);
	if (!fn->msix_nr || bitmap_empty(fn->msix_pending, fn->msix_nr))
		return false;
	if (!(ctrl & PCI_MSIX_FLAGS_ENABLE)) {
		bitmap_zero(fn->msix_pending, 2048);
		return false;
	}
	if (ctrl & PCI_MSIX_FLAGS_MASKALL)
		return true;
	for_each_set_bit(bit, fn->msix_pending, fn->msix_nr) {
		__le32 *e = loop_msix_entry(loop, fn, bit);
		u8 *pba = loop_msix_pba(loop, fn);

		if (!e) {
			__clear_bit(bit, fn->msix_pending);
			continue;
		}
		if (le32_to_cpu(READ_ONCE(e[PCI_MSIX_ENTRY_VECTOR_CTRL / 4])) &
		    PCI_MSIX_ENTRY_CTRL_MASKBIT) {
			more = true;
			continue;
		}
		if (p->n == LOOP_IRQ_BATCH)
			return true;
		__clear_bit(bit, fn->msix_pending);
		pba[bit / 8] &= ~BIT(bit % 8);
		loop_pending_add(p, le32_to_cpu(READ_ONCE(e[0])) |
				 (u64)le32_to_cpu(READ_ONCE(e[1])) << 32,
				 le32_to_cpu(READ_ONCE(e[2])),
				 &loop->stats.irq_msix);
	}
	return more;
}

static void loop_irq_work_fn(struct work_struct *work)
{
	struct pci_epc_loop *loop = container_of(to_delayed_work(work),
						 struct pci_epc_loop, irq_work);
	struct loop_pending *p;
	bool more = false;
	int i;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return;

	for (i = 0; i < LOOP_MAX_FUNCS; i++) {
		struct loop_fn *fn = &loop->fn[i];
		unsigned long flags;
		bool intx = false;
		unsigned int j;
		u8 pin;

		p->n = 0;
		raw_spin_lock_irqsave(&loop->cfg_lock, flags);
		if (loop_rc_up(loop))
			more |= loop_collect_pending(loop, fn, p, &intx);
		pin = fn->cfg[PCI_INTERRUPT_PIN];
		raw_spin_unlock_irqrestore(&loop->cfg_lock, flags);

		if (intx && pin >= 1 && pin <= PCI_NUM_INTX)
			loop_deliver_intx(loop, fn, pin);
		for (j = 0; j < p->n; j++)
			loop_deliver_msi(loop, p->addr[j], p->data[j],
					 p->counter[j]);
		if (p->n == LOOP_IRQ_BATCH)
			more = true;
	}
	kfree(p);

	/* Masked MSI-X vectors: poll the table until unmasked or link down */
	if (more && loop_rc_up(loop))
		queue_delayed_work(system_wq, &loop->irq_work,
				   msecs_to_jiffies(1));
}

/* A named fwnode "<device>-<what>" (the IRQ core copies the name) */
static struct fwnode_handle *loop_irq_fwnode(struct pci_epc_loop *loop,
					     const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-%s", dev_name(loop->dev), what);
	return irq_domain_alloc_named_fwnode(name);
}

/**
 * loop_irq_init() - create the INTx and MSI domains
 * @loop: the loopback
 *
 * Return: 0 or a negative errno.
 */
int loop_irq_init(struct pci_epc_loop *loop)
{
	struct fwnode_handle *fn_intx, *fn_base, *fn_msi;

	INIT_DELAYED_WORK(&loop->irq_work, loop_irq_work_fn);
	loop_msictl_init(loop);

	/*
	 * Named after the link's device (link 0: "pci-epc-loop-INTx" ...):
	 * each link has its own domains, and two domains of one name
	 * collide in the IRQ debugfs.
	 */
	fn_intx = loop_irq_fwnode(loop, "INTx");
	fn_base = loop_irq_fwnode(loop, "MSI-ctrl");
	fn_msi = loop_irq_fwnode(loop, "PCI-MSI");
	if (!fn_intx || !fn_base || !fn_msi)
		goto err_fwnode;

	loop->intx_domain = irq_domain_create_linear(fn_intx, PCI_NUM_INTX,
						     &loop_intx_ops, loop);
	if (!loop->intx_domain)
		goto err_fwnode;

	if (fl_loop_msi_domains(fn_base, fn_msi, &loop_msi_base_ops, loop,
				LOOP_NR_MSI, &loop_msi_info,
				&loop->msi_base, &loop->msi_domain))
		goto err_intx;
	/* The MSI parent model has no separate PCI/MSI domain */
	if (loop->msi_domain == loop->msi_base)
		irq_domain_free_fwnode(fn_msi);
	return 0;

err_intx:
	irq_domain_remove(loop->intx_domain);
	loop->intx_domain = NULL;
err_fwnode:
	if (fn_msi)
		irq_domain_free_fwnode(fn_msi);
	if (fn_base)
		irq_domain_free_fwnode(fn_base);
	if (fn_intx)
		irq_domain_free_fwnode(fn_intx);
	dev_err(loop->dev, "cannot create IRQ domains\n");
	return -ENOMEM;
}

static void loop_domain_remove(struct irq_domain *d)
{
	struct fwnode_handle *fwnode;

	if (!d)
		return;
	fwnode = d->fwnode;
	irq_domain_remove(d);
	irq_domain_free_fwnode(fwnode);
}

/**
 * loop_irq_exit() - remove the IRQ domains (the host bus is gone)
 * @loop: the loopback
 */
void loop_irq_exit(struct pci_epc_loop *loop)
{
	irq_hw_number_t hw;

	cancel_delayed_work_sync(&loop->irq_work);
	loop_msictl_stop(loop);

	if (loop->intx_domain) {
		for (hw = 0; hw < PCI_NUM_INTX; hw++) {
			unsigned int virq = irq_find_mapping(loop->intx_domain,
							     hw);

			if (virq)
				irq_dispose_mapping(virq);
		}
	}
	if (loop->msi_domain != loop->msi_base)
		loop_domain_remove(loop->msi_domain);
	loop_domain_remove(loop->msi_base);
	loop_domain_remove(loop->intx_domain);
	loop->msi_domain = NULL;
	loop->msi_base = NULL;
	loop->intx_domain = NULL;
}
