// SPDX-License-Identifier: GPL-2.0
/*
 * framelink-host: liveness and queue resets.
 *
 * The host must notice on its own that the endpoint stopped: a protocol error, an endpoint
 * restart (function unbound and bound again), or a link flap under a root that keeps the
 * function (TI J784S4: pci-j721e.c only logs "LINK DOWN!", there is no hot-plug), where no
 * remove() ever comes and no completion will ever arrive for what is outstanding.
 *
 * Watchdog (@live_work): armed by every doorbell kick, it runs every FL_LIVE_PERIOD_MS while
 * frames are outstanding. Only when a whole period brought no completion does it read the
 * function's vendor ID in config space, then fl_bar_status.state and .generation (three
 * non-posted reads, so at most 30 a second): all-ones in config space means the link is
 * gone, and BAR0 is not read then; a state other than READY or another generation means
 * the endpoint stopped or restarted. Either resets the queue.
 *
 * Reset (@reset_work): never inside REAP or poll() and never with fl_host.lock held across
 * a wait, so a REAP or poll() with timeout 0 returns at once during a reset and an open()
 * never waits for one. Steps:
 *  1. stop: clear %FL_CTRL_ENABLE and wait (bounded) for %FL_STATE_RESET;
 *  2. reclaim the outstanding buffers, failing their frames with the reset's status. Only
 *     when it is safe: the endpoint said RESET (it writes no host memory any more), or the
 *     link is down (DL_Down resets the function; its Bus Master Enable is clear until we set
 *     it again), or, when the endpoint answers but does not stop, after clearing bus
 *     mastering ourselves (logged);
 *  3. start: the enable handshake (bounded wait for READY), after checking that the
 *     endpoint still has the header the buffers and rings were sized for.
 * A failed attempt leaves the queue stopped (REAP/SUBMIT/POST: -ENOLINK while the link is
 * down, else -EIO; poll(): EPOLLERR) and is retried with a backoff until it succeeds or the
 * device is removed; SUBMIT, POST and the last close also start an attempt at once.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/pci.h>

#include "host.h"

#define FL_LIVE_PERIOD_MS	100	/* watchdog period: status read at most this often */
#define FL_RETRY_MIN_MS		100	/* first retry of a stopped queue */
#define FL_RETRY_MAX_MS		5000	/* backoff limit */
#define FL_RETRY_LINK_MS	200	/* link down: look at config space this often */
/* one whole attempt: stop and start handshakes plus scheduling slack */
#define FL_RESET_WAIT_MS	(2 * FL_SETUP_TIMEOUT_MS + 1000)

/**
 * fl_live_link_ok() - is the function reachable?
 * @host: the device.
 *
 * A root with hot-plug marks the function disconnected; a root without (J784S4) keeps it,
 * and its config space reads all-ones while the link is down.
 *
 * Return: false when disconnected or when config space reads all-ones.
 */
bool fl_live_link_ok(struct fl_host *host)
{
	u16 vendor;

	if (pci_dev_is_disconnected(host->pdev))
		return false;
	if (pci_read_config_word(host->pdev, PCI_VENDOR_ID, &vendor))
		return false;
	return vendor != 0xffff;
}

/*
 * Wait for fl_bar_status.state == @want, bounded by FL_SETUP_TIMEOUT_MS. fl_host.lock is
 * held on entry and on return but dropped while sleeping, so REAP, poll() and SUBMIT are
 * never stuck behind the handshake; they see enabled false and resetting true meanwhile.
 * Returns 0, -ENOLINK (all-ones or link gone), -EIO (ERROR while waiting for READY),
 * -ETIMEDOUT, or -ENODEV (device removed: the BAR must not be touched any more).
 */
static int fl_live_wait(struct fl_host *host, u32 want)
{
	unsigned long end = jiffies + msecs_to_jiffies(FL_SETUP_TIMEOUT_MS);
	u32 state;

	for (;;) {
		state = readl(host->bar + FL_STATUS(state));
		if (state == want)
			return 0;
		if (state == U32_MAX)
			return -ENOLINK;
		if (want == FL_STATE_READY && state == FL_STATE_ERROR)
			return -EIO;
		if (time_after(jiffies, end))
			return fl_live_link_ok(host) ? -ETIMEDOUT : -ENOLINK;
		mutex_unlock(&host->lock);
		usleep_range(1000, 2000);
		mutex_lock(&host->lock);
		if (host->dead || host->removing)
			return -ENODEV;
	}
}

/* Step 1: stop the endpoint. fl_host.lock held (dropped while waiting). */
static int fl_live_stop_ep(struct fl_host *host)
{
	int ret;

	/*
	 * Config space before BAR0, as in fl_live_check(): a link that is down is looked at
	 * there only. Otherwise the handshake decides; an endpoint that answers but does
	 * not stop costs the bounded wait.
	 */
	if (!fl_live_link_ok(host))
		return -ENOLINK;
	if (host->link_down) {
		/*
		 * The link came back. On a board the function was reset by DL_Down: put its
		 * config space back (BARs, Memory Space, MSI), but keep bus mastering off until
		 * it reports RESET, so nothing it had queued before can reach our memory.
		 */
		pci_restore_state(host->pdev);
		pci_save_state(host->pdev);
		pci_clear_master(host->pdev);
		host->master_off = true;
		host->link_down = false;
		dev_info(host->dev, "link back: resetting the endpoint\n");
	}
	writel(0, host->bar + FL_CTRL(ctrl));
	ret = fl_live_wait(host, FL_STATE_RESET);
	if (ret == -ENOLINK)
		return ret;
	if (ret && ret != -ENODEV)
		dev_err_ratelimited(host->dev, "endpoint did not reset within %u ms (state %s)\n",
				    FL_SETUP_TIMEOUT_MS,
				    fl_state_name(readl(host->bar + FL_STATUS(state))));
	return ret;
}

/* Step 2: give the outstanding buffers back once the endpoint cannot write them. */
static void fl_live_reclaim(struct fl_host *host, int stopped)
{
	bool outstanding = !fl_q_idle(host);

	switch (stopped) {
	case 0:
		break;
	case -ENOLINK:
		if (!host->link_down)
			dev_warn(host->dev, "link down%s; retrying every %u ms\n",
				 outstanding ? ": outstanding frames failed (DL_Down)" : "",
				 FL_RETRY_LINK_MS);
		host->link_down = true;
		break;
	default:
		/* alive but not stopping: no buffer goes back while it may still write it */
		if (!host->master_off) {
			pci_clear_master(host->pdev);
			host->master_off = true;
		}
		if (outstanding)
			dev_err_ratelimited(host->dev,
					    "endpoint did not stop: bus mastering disabled before giving its buffers back\n");
		break;
	}
	fl_q_fail_all(host, host->reset_err);
}

/* Step 3: the enable handshake. fl_host.lock held (dropped while waiting). */
static int fl_live_start_ep(struct fl_host *host)
{
	u32 generation;
	int ret;

	ret = fl_setup_same_header(host);
	if (ret)
		return ret;
	if (host->master_off) {
		/* the endpoint said RESET: it may master again for the new queue */
		pci_set_master(host->pdev);
		host->master_off = false;
	}
	generation = fl_setup_start(host);
	ret = fl_live_wait(host, FL_STATE_READY);
	if (!ret)
		return fl_setup_finish(host, generation);
	WRITE_ONCE(host->irqt_armed, false);
	if (ret != -ENODEV) {
		writel(0, host->bar + FL_CTRL(ctrl));
		dev_err_ratelimited(host->dev, "endpoint not ready after enable: %d (state %s)\n",
				    ret, fl_state_name(readl(host->bar + FL_STATUS(state))));
	}
	return ret;
}

/* A failed attempt: try again later, sooner while only the link is missing. */
static void fl_live_retry(struct fl_host *host)
{
	if (host->link_down)
		host->retry_ms = FL_RETRY_LINK_MS;
	else
		host->retry_ms = clamp(host->retry_ms * 2, (u32)FL_RETRY_MIN_MS,
				       (u32)FL_RETRY_MAX_MS);
	queue_delayed_work(system_long_wq, &host->reset_work, msecs_to_jiffies(host->retry_ms));
}

static void fl_live_reset_work(struct work_struct *work)
{
	struct fl_host *host = container_of(to_delayed_work(work), struct fl_host, reset_work);
	int ret;

	mutex_lock(&host->lock);
	if (host->dead || host->removing)
		goto done;
	host->resetting = true;
	host->enabled = false;
	ret = fl_live_stop_ep(host);
	if (ret == -ENODEV)
		goto done;
	fl_live_reclaim(host, ret);
	/* waiters see the failed frames now, not after the enable */
	wake_up_all(&host->wq);
	if (!ret)
		ret = fl_live_start_ep(host);
	if (ret == -ENODEV)
		goto done;
	if (ret) {
		fl_live_retry(host);
		goto done;
	}
	host->retry_ms = 0;
	dev_info(host->dev, "queue reset, endpoint generation %u\n", host->generation);
done:
	host->resetting = false;
	host->reset_err = -ECANCELED;
	host->reset_seq++;
	mutex_unlock(&host->lock);
	wake_up_all(&host->wq);
}

/**
 * fl_live_reset() - stop the queue now and reset it asynchronously
 * @host: the device; fl_host.lock held. Does not sleep.
 * @err: status for the frames the reset fails: -EPROTO after a violation, -ECANCELED
 *	otherwise. The first cause of a pending reset wins.
 *
 * The queue is stopped at once (SUBMIT and POST wait for the reset, REAP and poll() report
 * nothing new until the outstanding frames fail). Counted in fl_stats.queue_resets when it
 * stops a running queue.
 */
void fl_live_reset(struct fl_host *host, int err)
{
	lockdep_assert_held(&host->lock);
	if (host->dead || host->removing)
		return;
	if (host->enabled)
		host->stats.queue_resets++;
	host->enabled = false;
	if (!host->resetting)
		host->reset_err = err;
	host->resetting = true;
	mod_delayed_work(system_long_wq, &host->reset_work, 0);
	wake_up_all(&host->wq);
}

/**
 * fl_live_errno() - why the queue does not run
 * @host: the device; fl_host.lock held.
 *
 * Return: 0 (enabled), -ENODEV (removed), -ENOLINK (the last attempt found the link down),
 * -EIO (stopped: the endpoint refused or did not answer).
 */
int fl_live_errno(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (host->dead)
		return -ENODEV;
	if (host->enabled)
		return 0;
	return host->link_down ? -ENOLINK : -EIO;
}

/**
 * fl_live_wait_reset() - wait (bounded) until the queue runs again
 * @host: the device; fl_host.lock held on entry and return, dropped while waiting.
 * @interruptible: a signal ends the wait (ioctls); the last close waits uninterruptibly.
 *
 * A stopped queue gets a new attempt at once. An attempt already running may have started
 * before the endpoint came back (a retry while the function was being rebound): when it
 * fails, one more attempt, started after this call, decides. Each wait is bounded by
 * FL_RESET_WAIT_MS.
 *
 * Return: 0 when the queue runs, -EINTR, or fl_live_errno().
 */
int fl_live_wait_reset(struct fl_host *host, bool interruptible)
{
	unsigned long tmo = msecs_to_jiffies(FL_RESET_WAIT_MS);
	bool ours;
	long ret;
	int tries;
	u32 seq;

	lockdep_assert_held(&host->lock);
	for (tries = 0; tries < 2; tries++) {
		if (host->enabled || host->dead)
			break;
		ours = !host->resetting;
		if (ours)
			fl_live_reset(host, -ECANCELED);
		if (!host->resetting)
			break;
		seq = host->reset_seq;
		mutex_unlock(&host->lock);
		if (interruptible)
			ret = wait_event_interruptible_timeout(host->wq,
							       READ_ONCE(host->reset_seq) != seq ||
							       READ_ONCE(host->dead), tmo);
		else
			ret = wait_event_timeout(host->wq, READ_ONCE(host->reset_seq) != seq ||
						 READ_ONCE(host->dead), tmo);
		mutex_lock(&host->lock);
		if (ret < 0)
			return -EINTR;
		if (ours)
			break;
	}
	return fl_live_errno(host);
}

/* Why a queue whose endpoint reports @state and @generation must be reset, or NULL */
static const char *fl_live_why(struct fl_host *host, u32 state, u32 generation)
{
	if (state == U32_MAX)
		return "BAR0 reads all-ones (link down)";
	if (state != FL_STATE_READY)
		return "the endpoint left READY";
	if (generation != host->generation)
		return "the endpoint restarted (generation changed)";
	return NULL;
}

/*
 * Is the function reachable (its vendor ID, one config read), then fl_bar_status (state,
 * generation): two non-posted reads of BAR0. Config space first: on a dead link a config
 * read completes with all-ones from the root port, while a memory read waits for a
 * completion timeout, which some root ports report as an SError (issue 27 item 3.12).
 * Resets the queue when the link is gone or the endpoint left READY or restarted.
 * fl_host.lock held, queue enabled. Returns true when a reset was started.
 */
static bool fl_live_check(struct fl_host *host)
{
	u32 state = U32_MAX, error = U32_MAX, generation = U32_MAX;
	const char *why;

	host->live_checked = jiffies;
	if (!fl_live_link_ok(host)) {
		why = "config space reads all-ones (link down)";
	} else {
		state = readl(host->bar + FL_STATUS(state));
		generation = readl(host->bar + FL_STATUS(generation));
		why = fl_live_why(host, state, generation);
		if (!why)
			return false;
		error = readl(host->bar + FL_STATUS(error));
	}
	dev_warn_ratelimited(host->dev,
			     "resetting the queue: %s (state %s, error %u, generation %u, ours %u)\n",
			     why, fl_state_name(state), error, generation, host->generation);
	fl_live_reset(host, -ECANCELED);
	return true;
}

/**
 * fl_live_before_queue() - the queue is about to leave idle: is the endpoint still there?
 * @host: the device; fl_host.lock held.
 *
 * Nothing outstanding means nothing tells the host that the endpoint restarted meanwhile
 * (an unbind and bind of the function under a root without hot-plug): descriptors written
 * now would go to an endpoint that ignores them. So SUBMIT and POST on an idle queue look
 * at fl_bar_status first, at most once per watchdog period; a reset then runs before the
 * frames are queued (the caller waits for it with fl_live_wait_reset()).
 */
void fl_live_before_queue(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (!host->enabled || host->dead || host->removing || !fl_q_idle(host))
		return;
	if (time_before(jiffies, host->live_checked + msecs_to_jiffies(FL_LIVE_PERIOD_MS)))
		return;
	fl_live_check(host);
}

static void fl_live_watch(struct work_struct *work)
{
	struct fl_host *host = container_of(to_delayed_work(work), struct fl_host, live_work);

	mutex_lock(&host->lock);
	/* idle or not running: the next doorbell kick arms the watchdog again */
	if (host->dead || host->removing || !host->enabled || fl_q_idle(host))
		goto unlock;
	if (host->cq_cons != host->live_cons) {
		host->live_cons = host->cq_cons;
		goto rearm;
	}
	if (fl_live_check(host))
		goto unlock;
rearm:
	queue_delayed_work(system_wq, &host->live_work, msecs_to_jiffies(FL_LIVE_PERIOD_MS));
unlock:
	mutex_unlock(&host->lock);
}

/**
 * fl_live_arm() - frames are outstanding: make sure the watchdog looks after them
 * @host: the device; fl_host.lock held. Cheap (a bit test when already armed).
 */
void fl_live_arm(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (host->removing || host->dead)
		return;
	if (!delayed_work_pending(&host->live_work))
		host->live_cons = host->cq_cons;
	queue_delayed_work(system_wq, &host->live_work, msecs_to_jiffies(FL_LIVE_PERIOD_MS));
}

static void fl_live_poll_wake(struct work_struct *work)
{
	struct fl_host *host = container_of(to_delayed_work(work), struct fl_host, poll_work);

	wake_up_all(&host->wq);
}

/**
 * fl_live_poll_arm() - without working interrupts, wake poll() waiters in a jiffy
 * @host: the device; fl_host.lock held.
 *
 * Each wake-up makes poll() look at the ring again, which arms the next one while frames
 * are outstanding, so a poll()ing app sees completions without any interrupt.
 */
void fl_live_poll_arm(struct fl_host *host)
{
	lockdep_assert_held(&host->lock);
	if (fl_host_irq_live(host) || host->removing || host->dead)
		return;
	queue_delayed_work(system_wq, &host->poll_work, 1);
}

/**
 * fl_live_init() - set up the watchdog and reset works (probe, before any can run)
 * @host: the device.
 */
void fl_live_init(struct fl_host *host)
{
	mutex_init(&host->reap_lock);
	INIT_DELAYED_WORK(&host->live_work, fl_live_watch);
	INIT_DELAYED_WORK(&host->reset_work, fl_live_reset_work);
	INIT_DELAYED_WORK(&host->poll_work, fl_live_poll_wake);
	host->reset_err = -ECANCELED;
}

/**
 * fl_live_stop() - no more watchdog, reset or poll work (remove, shutdown)
 * @host: the device.
 *
 * @removing keeps them from being queued again; a reset attempt in progress sees it at
 * its next step (within a few ms) and ends without touching the BAR.
 */
void fl_live_stop(struct fl_host *host)
{
	mutex_lock(&host->lock);
	host->removing = true;
	mutex_unlock(&host->lock);
	cancel_delayed_work_sync(&host->reset_work);
	cancel_delayed_work_sync(&host->live_work);
	cancel_delayed_work_sync(&host->poll_work);
	/*
	 * A reset queued (fl_live_reset()) but cancelled before its work ran never ends by
	 * itself: its waiters (SUBMIT, POST, the last close) would sit out their whole bound,
	 * and fl_resume() would not start the reset a frozen channel needs. End it here as
	 * its work would have; no reset can start again while @removing is set.
	 */
	mutex_lock(&host->lock);
	if (host->resetting) {
		host->resetting = false;
		host->reset_seq++;
	}
	mutex_unlock(&host->lock);
	wake_up_all(&host->wq);
}
