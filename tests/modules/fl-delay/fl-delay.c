// SPDX-License-Identifier: GPL-2.0
/*
 * fl-delay: test helper that holds the next calls of one kernel function for a while, in
 * process context, so a test can land in a race window that is otherwise a few
 * instructions wide (issue 8 item 11: the endpoint engine between fl_q_peek_sub() and
 * fl_q_pop_sub()).
 *
 * A kprobe on the function's first instruction sends an armed caller into fl_delay_hold()
 * instead: the pre-handler moves the PC there and skips the probed instruction, so the
 * caller's arguments (x0-x7) and return address (x30) are still in place, as at a tail
 * call. fl_delay_hold() sleeps delay_ms, then calls the function itself, which the
 * pre-handler lets through for the task it recognises, and returns its x0. This works
 * for any function of up to eight integer arguments on arm64 (AAPCS64), whatever its
 * prototype, so the same module probes old and new versions of a driver.
 *
 * Parameters: func (load time: the symbol, module symbols included), comm (load time: hold
 * only calls of tasks of that name, for functions every task calls), delay_ms, armed
 * (calls still to hold; write to arm), waiting (1 while a caller sleeps), held (calls held
 * so far). One caller is held at a time; others wait for it.
 *
 * Copyright (C) 2026 The framelink authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/sched.h>

static char *func = "fl_q_pop_sub";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function whose calls are held (at load)");

static unsigned int delay_ms = 2000;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "how long a call is held, at most 10000");

static char *comm = "";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "hold only calls of tasks of this name (at load; empty: every task)");

static int armed;
module_param(armed, int, 0644);
MODULE_PARM_DESC(armed, "calls still to hold (write N to arm)");

static int waiting;
module_param(waiting, int, 0444);
MODULE_PARM_DESC(waiting, "1 while a call is held (read-only)");

static unsigned int held;
module_param(held, uint, 0444);
MODULE_PARM_DESC(held, "calls held since load (read-only)");

typedef unsigned long (*fl_delay_fn_t)(unsigned long, unsigned long, unsigned long,
				       unsigned long, unsigned long, unsigned long,
				       unsigned long, unsigned long);

/* Serialises held callers; fl_delay_passing is the one calling the real function */
static DEFINE_MUTEX(fl_delay_lock);
static struct task_struct *fl_delay_passing;

static int fl_delay_pre(struct kprobe *p, struct pt_regs *regs);

static struct kprobe fl_delay_kp = {
	.pre_handler = fl_delay_pre,
};

static unsigned long fl_delay_hold(unsigned long a0, unsigned long a1, unsigned long a2,
				   unsigned long a3, unsigned long a4, unsigned long a5,
				   unsigned long a6, unsigned long a7)
{
	fl_delay_fn_t real = (fl_delay_fn_t)fl_delay_kp.addr;
	unsigned long ret;

	mutex_lock(&fl_delay_lock);
	WRITE_ONCE(waiting, 1);
	msleep(min(READ_ONCE(delay_ms), 10000U));
	/* The pre-handler lets this task's call through, once */
	WRITE_ONCE(fl_delay_passing, current);
	ret = real(a0, a1, a2, a3, a4, a5, a6, a7);
	WRITE_ONCE(fl_delay_passing, NULL);
	WRITE_ONCE(held, held + 1);
	WRITE_ONCE(waiting, 0);
	mutex_unlock(&fl_delay_lock);
	return ret;
}

/* Debug-exception context: no sleeping here, only the decision and the detour */
static int fl_delay_pre(struct kprobe *p, struct pt_regs *regs)
{
	int n = READ_ONCE(armed);

	if (READ_ONCE(fl_delay_passing) == current)
		return 0;
	/* A hot function (a uaccess copy): only the named task's calls count */
	if (*comm && strncmp(current->comm, comm, TASK_COMM_LEN))
		return 0;
	do {
		if (n <= 0)
			return 0;
	} while (!try_cmpxchg(&armed, &n, n - 1));
	instruction_pointer_set(regs, (unsigned long)fl_delay_hold);
	return 1;	/* resume at the new PC, the probed instruction not run */
}

static int __init fl_delay_init(void)
{
	int ret;

	fl_delay_kp.symbol_name = func;
	ret = register_kprobe(&fl_delay_kp);
	if (ret) {
		pr_err("cannot probe %s: %d\n", func, ret);
		return ret;
	}
	pr_info("holding calls of %s%s%s when armed\n", func, *comm ? " by " : "", comm);
	return 0;
}

static void __exit fl_delay_exit(void)
{
	unregister_kprobe(&fl_delay_kp);
	/* A caller still held finishes before the code it runs goes away */
	mutex_lock(&fl_delay_lock);
	mutex_unlock(&fl_delay_lock);
}

module_init(fl_delay_init);
module_exit(fl_delay_exit);

MODULE_DESCRIPTION("framelink test helper: hold calls of one function to widen a race window");
MODULE_AUTHOR("The framelink authors");
MODULE_LICENSE("GPL");
