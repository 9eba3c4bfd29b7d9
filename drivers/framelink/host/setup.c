// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: the BAR0 handshake. The only place that reads BAR0 (non-posted reads
 * across the link): the header at probe, fl_bar_status while enabling or resetting.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "host.h"
#include "fl_proto.h"

/*
 * FL_F_IRQ_PROD (settle.c) is accepted unless this is cleared: then the endpoint reads its
 * completions back across the link before every interrupt instead, as an endpoint
 * without the bit does. Read at every enable.
 */
static bool irq_prod = true;
module_param(irq_prod, bool, 0644);
MODULE_PARM_DESC(irq_prod,
		 "accept FL_F_IRQ_PROD: interrupts announced in host memory, no read-back by the endpoint (default Y)");

/*
 * FL_F_IRQ_SEEN (fl_q_arm()) is accepted with FL_F_IRQ_PROD unless this is cleared: then an
 * arm made after two merged interrupts can be taken for a stale one (65-notify's control).
 * Read at every enable.
 */
static bool irq_seen = true;
module_param(irq_seen, bool, 0644);
MODULE_PARM_DESC(irq_seen,
		 "accept FL_F_IRQ_SEEN: arms say which announcement they follow, so merged interrupts lose no wake-up (default Y)");

/**
 * fl_setup_read_header() - read and validate the endpoint's BAR0 header
 * @host: the device, BAR0 mapped.
 *
 * Return: 0, or -ENODEV (not a framelink endpoint), -EPROTONOSUPPORT (another ABI major),
 * -EINVAL (a malformed header); each with a log line saying which.
 */
int fl_setup_read_header(struct fl_host *host)
{
	struct fl_bar_header hdr;
	u32 abi;
	int ret;

	if (host->bar_len < sizeof(hdr)) {
		dev_err(host->dev,
			"no framelink endpoint behind BAR0: %llu bytes, smaller than the header\n",
			host->bar_len);
		return -ENODEV;
	}
	/* one private copy; everything below uses it, never BAR0 again */
	memcpy_fromio(&hdr, host->bar + FL_BAR_HEADER_OFFSET, sizeof(hdr));
	abi = le32_to_cpu(hdr.abi_version);
	ret = fl_header_check(&hdr, host->bar_len);
	switch (ret) {
	case 0:
		break;
	case -ENODEV:
		dev_err(host->dev,
			"no framelink endpoint behind BAR0: magic %#010x, expected %#010x\n",
			le32_to_cpu(hdr.magic), FL_MAGIC);
		return ret;
	case -EPROTONOSUPPORT:
		dev_err(host->dev, "endpoint speaks framelink ABI %u.%u, this driver %u.%u\n",
			abi >> 16, abi & 0xffff, FL_ABI_MAJOR, FL_ABI_MINOR);
		return ret;
	default:
		dev_err(host->dev,
			"malformed framelink header: bar_size %#x, tx %u@%#x, rx %u@%#x, max_frame %u (BAR0 %#llx)\n",
			le32_to_cpu(hdr.bar_size), le32_to_cpu(hdr.tx_entries),
			le32_to_cpu(hdr.tx_ring_offset), le32_to_cpu(hdr.rx_entries),
			le32_to_cpu(hdr.rx_ring_offset), le32_to_cpu(hdr.max_frame),
			host->bar_len);
		return ret;
	}
	if (memchr_inv(hdr.reserved, 0, sizeof(hdr.reserved))) {
		/* a later minor ABI may give them a meaning: refuse rather than ignore */
		dev_err(host->dev, "framelink header: reserved fields not zero\n");
		return -EINVAL;
	}
	host->tx_off = le32_to_cpu(hdr.tx_ring_offset);
	host->rx_off = le32_to_cpu(hdr.rx_ring_offset);
	host->tx_entries = le32_to_cpu(hdr.tx_entries);
	host->rx_entries = le32_to_cpu(hdr.rx_entries);
	host->max_frame = le32_to_cpu(hdr.max_frame);
	host->ep_slots = le32_to_cpu(hdr.ep_slots);
	host->offered = le64_to_cpu(hdr.features);
	if ((abi & 0xffff) != FL_ABI_MINOR)
		dev_info(host->dev, "endpoint ABI %u.%u, driver %u.%u\n",
			 abi >> 16, abi & 0xffff, FL_ABI_MAJOR, FL_ABI_MINOR);
	return 0;
}

/* Poll fl_bar_status.state for @want, bounded. */
static int fl_setup_wait_state(struct fl_host *host, u32 want, u32 *state)
{
	unsigned long end = jiffies + msecs_to_jiffies(FL_SETUP_TIMEOUT_MS);

	for (;;) {
		*state = readl(host->bar + FL_STATUS(state));
		if (*state == want)
			return 0;
		if (*state == FL_STATE_ERROR && want != FL_STATE_RESET)
			return -EIO;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(500, 1000);
	}
}

/**
 * fl_state_name() - printable FL_STATE_*
 * @state: fl_bar_status.state as read.
 *
 * Return: a constant string.
 */
const char *fl_state_name(u32 state)
{
	switch (state) {
	case FL_STATE_RESET:
		return "RESET";
	case FL_STATE_READY:
		return "READY";
	case FL_STATE_ERROR:
		return "ERROR";
	case U32_MAX:
		return "all-ones (link down?)";
	default:
		return "unknown";
	}
}

/**
 * fl_setup_disable() - clear %FL_CTRL_ENABLE and wait for the endpoint to stop
 * @host: the device; fl_host.lock held.
 *
 * Return: 0, or -ETIMEDOUT when the endpoint did not reach %FL_STATE_RESET in time (it may
 * still write the completion ring).
 */
int fl_setup_disable(struct fl_host *host)
{
	u32 state;
	int ret;

	lockdep_assert_held(&host->lock);
	host->enabled = false;
	writel(0, host->bar + FL_CTRL(ctrl));
	ret = fl_setup_wait_state(host, FL_STATE_RESET, &state);
	if (ret)
		dev_err(host->dev, "endpoint did not reset within %u ms (state %s)\n",
			FL_SETUP_TIMEOUT_MS, fl_state_name(state));
	return ret;
}

/**
 * fl_setup_same_header() - after an endpoint restart, is it still the endpoint we set up?
 * @host: the device; fl_host.lock held; the endpoint in %FL_STATE_RESET.
 *
 * A rebound endpoint function may come back with another ring layout or frame size; the
 * buffers and shadow rings were sized for the first one, so the queue stays stopped then.
 *
 * Return: 0, or -EINVAL (malformed or different header; logged).
 */
int fl_setup_same_header(struct fl_host *host)
{
	struct fl_bar_header hdr;

	lockdep_assert_held(&host->lock);
	memcpy_fromio(&hdr, host->bar + FL_BAR_HEADER_OFFSET, sizeof(hdr));
	if (fl_header_check(&hdr, host->bar_len) ||
	    memchr_inv(hdr.reserved, 0, sizeof(hdr.reserved)) ||
	    le32_to_cpu(hdr.tx_ring_offset) != host->tx_off ||
	    le32_to_cpu(hdr.rx_ring_offset) != host->rx_off ||
	    le32_to_cpu(hdr.tx_entries) != host->tx_entries ||
	    le32_to_cpu(hdr.rx_entries) != host->rx_entries ||
	    le32_to_cpu(hdr.max_frame) != host->max_frame ||
	    le64_to_cpu(hdr.features) != host->offered) {
		/* every reset attempt (SUBMIT and POST start one at once) comes here */
		dev_err_ratelimited(host->dev,
				    "endpoint restarted with another header (tx %u, rx %u, max_frame %u, features %#llx): queue stays stopped; rebind framelink-host\n",
				    le32_to_cpu(hdr.tx_entries), le32_to_cpu(hdr.rx_entries),
				    le32_to_cpu(hdr.max_frame), le64_to_cpu(hdr.features));
		return -EINVAL;
	}
	return 0;
}

/*
 * Zero @bytes of reserved words from BAR0 offset @off, one writel() each: a host before us (a
 * crashed kernel before a kdump one, a buggy driver) may have left anything there, and the
 * endpoint refuses an enable or a doorbell with a reserved word set.
 */
static void fl_setup_zero_reserved(struct fl_host *host, u32 off, size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes; i += sizeof(__le32))
		writel(0, host->bar + off + i);
}

/**
 * fl_setup_start() - program fl_bar_ctrl and set %FL_CTRL_ENABLE (no wait)
 * @host: the device; fl_host.lock held; the endpoint in %FL_STATE_RESET, so it writes
 *	nothing to the completion ring any more.
 *
 * Clears the completion ring, zeroes the doorbell indices, writes all of fl_bar_ctrl
 * (reserved words included) and sets %FL_CTRL_ENABLE. The caller waits for
 * %FL_STATE_READY and calls fl_setup_finish(). Every host-written word of BAR0 but irq_ack
 * (a number the endpoint only compares) and the rings (each entry written before it is
 * produced) is rewritten here, so garbage a previous host left is gone at every enable.
 *
 * Return: fl_bar_status.generation before the enable.
 */
u32 fl_setup_start(struct fl_host *host)
{
	u32 generation;

	lockdep_assert_held(&host->lock);
	generation = readl(host->bar + FL_STATUS(generation));

	memset(host->cq_area, 0, host->cq_bytes);
	fl_settle_reset(host);
	fl_q_init_rings(host);
	host->features = host->offered & FL_F_ALL;
	/* nothing to test without a vector: the host polls anyway */
	if (host->irq_type == FL_IRQ_NONE)
		host->features &= ~FL_F_IRQ_TEST;
	if (!READ_ONCE(irq_prod))
		host->features &= ~FL_F_IRQ_PROD;
	if (!READ_ONCE(irq_seen) || !(host->features & FL_F_IRQ_PROD))
		host->features &= ~FL_F_IRQ_SEEN;

	writel(0, host->bar + FL_DB(tx_prod));
	writel(0, host->bar + FL_DB(rx_prod));
	writel(0, host->bar + FL_DB(cq_cons));
	/* armed from the start: interrupt for the first completion */
	writel(0, host->bar + FL_DB(cq_event));
	/* the self-test's answers count from 0, and only until fl_setup_finish() */
	writel(0, host->bar + FL_DB(irq_test));
	writel(0, host->bar + FL_DB(irq_seen));
	fl_setup_zero_reserved(host, FL_DB(reserved),
			       sizeof_field(struct fl_bar_doorbell, reserved));
	atomic_set(&host->irqt_count, 0);
	WRITE_ONCE(host->irqt_armed, !!(host->features & FL_F_IRQ_TEST));
	/* a handler of the last session may have left INTx masked: the test's INTx must pass */
	if (host->irq_type == FL_IRQ_INTX)
		fl_q_intx_listen(host);
	writel(host->cq_entries, host->bar + FL_CTRL(cq_entries));
	lo_hi_writeq(host->cq_dma, host->bar + FL_CTRL(cq_addr));
	lo_hi_writeq(host->features, host->bar + FL_CTRL(features));
	writel(host->irq_type, host->bar + FL_CTRL(irq_type));
	writel(host->irq_type == FL_IRQ_NONE ? 0 : 1, host->bar + FL_CTRL(irq_vectors));
	fl_setup_zero_reserved(host, FL_CTRL(reserved),
			       sizeof_field(struct fl_bar_ctrl, reserved));
	/*
	 * writel() orders the earlier writes (and the memset of the coherent ring) before the
	 * enable bit reaches the endpoint.
	 */
	writel(FL_CTRL_ENABLE, host->bar + FL_CTRL(ctrl));
	return generation;
}

/*
 * The interrupt self-test's outcome (fl_bar_status.irq_test, %FL_F_IRQ_TEST): interrupts,
 * or polling with a clear message, never a silent fall-back to the safety timer. Logged
 * when it changes (each enable, at most as often as the reset backoff allows).
 * Returns 0 or -EPROTO (an outcome the ABI does not allow).
 */
static int fl_setup_irq_test(struct fl_host *host, u32 res)
{
	bool polled = false;

	if (!(host->features & FL_F_IRQ_TEST)) {
		if (!res)
			goto done;
		host->stats.protocol_errors++;
		dev_err_ratelimited(host->dev,
				    "endpoint reports an interrupt self-test (%u) that was not accepted; not enabling\n",
				    res);
		return -EPROTO;
	}
	switch (res) {
	case FL_IRQT_NUM1:
	case FL_IRQT_NUM0:
		break;
	case FL_IRQT_NONE:
		polled = true;
		break;
	default:
		host->stats.protocol_errors++;
		dev_err_ratelimited(host->dev,
				    "endpoint interrupt self-test: outcome %u not allowed; not enabling\n",
				    res);
		return -EPROTO;
	}
	if (res != host->irq_test) {
		if (polled)
			dev_err_ratelimited(host->dev,
					    "endpoint interrupts do not arrive (self-test): completions are polled\n");
		else
			dev_info_ratelimited(host->dev,
					     "endpoint interrupt self-test passed: %s numbering, %d interrupt(s) taken\n",
					     res == FL_IRQT_NUM0 ? "0-based" : "1-based",
					     atomic_read(&host->irqt_count));
	}
done:
	host->irq_test = res;
	WRITE_ONCE(host->irq_polled, polled);
	return 0;
}

/**
 * fl_setup_finish() - the endpoint reported %FL_STATE_READY: check it and start the queue
 * @host: the device; fl_host.lock held.
 * @generation: what fl_setup_start() returned.
 *
 * The reserved words of fl_bar_status must be zero (a later minor ABI may use them), and
 * intx_seq too unless %FL_F_INTX_SEQ was accepted, so an endpoint that sets them is refused:
 * the enable is withdrawn.
 *
 * Return: 0 (queue enabled), or -EPROTO.
 */
int fl_setup_finish(struct fl_host *host, u32 generation)
{
	struct fl_bar_status st;

	lockdep_assert_held(&host->lock);
	/* READY: the self-test is over, later interrupts are completions */
	WRITE_ONCE(host->irqt_armed, false);
	/* once per enable: 64 non-posted reads are fine here, never on the hot path */
	memcpy_fromio(&st, host->bar + FL_BAR_STATUS_OFFSET, sizeof(st));
	if (memchr_inv(st.reserved, 0, sizeof(st.reserved)) ||
	    (!(host->features & FL_F_INTX_SEQ) && st.intx_seq)) {
		host->stats.protocol_errors++;
		dev_err_ratelimited(host->dev,
				    "endpoint status block: reserved fields not zero; not enabling\n");
		writel(0, host->bar + FL_CTRL(ctrl));
		return -EPROTO;
	}
	if (fl_setup_irq_test(host, le32_to_cpu(st.irq_test))) {
		writel(0, host->bar + FL_CTRL(ctrl));
		return -EPROTO;
	}
	host->generation = le32_to_cpu(st.generation);
	if (host->generation == generation)
		dev_warn(host->dev, "endpoint generation did not change at enable (%u)\n",
			 generation);
	host->enabled = true;
	/* the self-test's INTx was masked while not enabled (no fl_q_intx_work()): listen */
	if (host->irq_type == FL_IRQ_INTX && !host->irq_polled)
		fl_q_intx_listen(host);
	return 0;
}

/**
 * fl_setup_enable() - the enable handshake, synchronous (probe)
 * @host: the device; fl_host.lock held; completion ring allocated, vector set up.
 *
 * Resets the endpoint if it runs (e.g. a previous driver instance left it enabled), then
 * fl_setup_start(), a bounded wait for %FL_STATE_READY and fl_setup_finish().
 *
 * Return: 0, -EIO when the endpoint refused (state ERROR), -ETIMEDOUT, -EPROTO.
 */
int fl_setup_enable(struct fl_host *host)
{
	u32 state, error, generation;
	int ret;

	lockdep_assert_held(&host->lock);
	state = readl(host->bar + FL_STATUS(state));
	if (state != FL_STATE_RESET) {
		dev_info(host->dev, "endpoint is %s: resetting it first\n", fl_state_name(state));
		ret = fl_setup_disable(host);
		if (ret)
			return ret;
	}
	/* RESET: nothing of an earlier queue runs any more; it may master for this one */
	if (host->master_off) {
		pci_set_master(host->pdev);
		host->master_off = false;
	}
	generation = fl_setup_start(host);
	ret = fl_setup_wait_state(host, FL_STATE_READY, &state);
	if (ret) {
		error = readl(host->bar + FL_STATUS(error));
		dev_err(host->dev, "endpoint not ready after enable: state %s, error %u%s\n",
			fl_state_name(state), error,
			ret == -ETIMEDOUT ? " (timeout)" : "");
		WRITE_ONCE(host->irqt_armed, false);
		writel(0, host->bar + FL_CTRL(ctrl));
		return ret;
	}
	return fl_setup_finish(host, generation);
}
