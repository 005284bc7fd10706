// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread state: registers (through the architecture's regsets, the
 * interface ptrace and core dumps use), FPU/XSAVE state, TLS base, signal
 * mask, the futex/rseq registrations glibc makes, sigaltstack and name,
 * nice value, scheduling policy and (captured only: the restarter's thread
 * sets them itself, lib/restore) its I/O priority and CPUs.
 *
 * Capture runs in the thread itself, parked on its way back to user mode,
 * so its FPU registers are current when they are read. Restore is split:
 * the XSAVE state is written by another task while the thread sleeps with
 * its FPU registers handed to memory (the regset code refuses to rewrite
 * the running task's FPU state), and everything else is written by the
 * thread itself on its way back to user mode.
 */

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/elf.h>
#include <linux/futex.h>
#include <linux/iocontext.h>
#include <linux/ptrace.h>
#include <linux/regset.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/signal.h>
#include <linux/string.h>
#include <uapi/linux/sched/types.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/xcr.h>
#include <asm/fsgsbase.h>
#include <asm/ptrace.h>
#include <asm/segment.h>
#include <asm/user.h>

#include "compat.h"
#include "layout.h"
#include "threads.h"
#include "why.h"

/* Flags user code may set; the rest (IF, IOPL, TF, VM...) stay the kernel's. */
#define CKPT_FLAG_MASK	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_DF | \
			 X86_EFLAGS_OF | X86_EFLAGS_AC | X86_EFLAGS_ID)

/* Offsets in the user (standard-format) XSAVE layout. */
#define XSTATE_HDR_BV		512	/* xsave header: xfeatures in use */

static const struct user_regset *find_regset(unsigned int note)
{
	const struct user_regset_view *view = task_user_regset_view(current);
	unsigned int i;

	for (i = 0; i < view->n; i++)
		if (view->regsets[i].core_note_type == note)
			return &view->regsets[i];
	return NULL;
}

unsigned int ckpt_xstate_size(void)
{
	const struct user_regset *rs = find_regset(NT_X86_XSTATE);

	return rs ? rs->n * rs->size : 0;
}

u64 ckpt_xstate_bv(const void *xstate)
{
	u64 v;

	memcpy(&v, xstate + XSTATE_HDR_BV, sizeof(v));
	return v;
}

int ckpt_machine_xfeatures(u64 *xfeatures)
{
	if (!boot_cpu_has(X86_FEATURE_OSXSAVE))
		return -EOPNOTSUPP;
	*xfeatures = xgetbv(XCR_XFEATURE_ENABLED_MASK);
	return 0;
}

/*
 * The thread's policy, I/O priority and CPUs (SCHED): a deadline task's
 * parameters are not kept, nor CPUs from 1024 on of a thread bound to
 * some. Any CPU: it may run on every online one, or (since 6.2, where the
 * kernel says) it never asked for some, and runs where its cpuset lets it.
 */
static int capture_sched(struct ckpt_thread_state *ts)
{
	struct ckpt_img_sched *s = &ts->sched;
	unsigned int cpu;

	memset(s, 0, sizeof(*s));
	if (current->policy != SCHED_NORMAL && current->policy != SCHED_BATCH &&
	    current->policy != SCHED_IDLE && current->policy != SCHED_FIFO &&
	    current->policy != SCHED_RR) {
		ts->why = current->policy == SCHED_DEADLINE ?
			  "thread runs under SCHED_DEADLINE: not supported yet" :
			  "thread runs under a scheduling policy this engine does not know";
		return -EOPNOTSUPP;
	}
	s->policy = current->policy;
	/* The class and level it set; the hints a request carries are not. */
	task_lock(current);
	if (current->io_context)
		s->ioprio = current->io_context->ioprio & CKPT_IMG_IOPRIO_MASK;
	task_unlock(current);
	if (!(s->ioprio >> 13))
		s->ioprio = 0;
	if (s->policy == SCHED_FIFO || s->policy == SCHED_RR)
		s->rt_priority = current->rt_priority;
	if (current->sched_reset_on_fork)
		s->flags |= CKPT_SCHED_RESET_ON_FORK;
	if (cpumask_subset(cpu_active_mask, &current->cpus_mask) ||
	    !ckpt_cpus_asked(current)) {
		s->flags |= CKPT_SCHED_ALL_CPUS;
		return 0;
	}
	for_each_cpu(cpu, &current->cpus_mask) {
		if (cpu >= CKPT_IMG_CPU_WORDS * 64) {
			ts->why = "thread is bound to CPUs from 1024 on: not supported yet";
			return -EOPNOTSUPP;
		}
		s->cpus[cpu / 64] |= 1ULL << (cpu % 64);
	}
	return 0;
}

/*
 * poll() interrupted by the freeze goes on through its restart_block,
 * which the restarted thread lacks: restart_syscall() would say EINTR to a
 * program that has no signal handler (tail -f dies of it). With no timeout
 * there is no time left to keep: the image has the thread call poll()
 * again with its arguments, as for ERESTARTNOHAND, which is the same call;
 * also when it already went on once through restart_syscall() (after an
 * earlier freeze let it go). do_restart_poll() is known by its name.
 */
static void poll_again(struct user_regs_struct *u)
{
	struct restart_block *rb = &current->restart_block;
	char fn[32];

	if (u->ax != (unsigned long)-ERESTART_RESTARTBLOCK ||
	    (u->orig_ax != __NR_poll && u->orig_ax != __NR_restart_syscall) ||
	    !ckpt_layout_ok(CKPT_LAYOUT_POLL))
		return;
	snprintf(fn, sizeof(fn), "%ps", rb->fn);
	if (strcmp(fn, "do_restart_poll") || rb->poll.has_timeout)
		return;
	u->orig_ax = __NR_poll;
	u->di = (unsigned long)rb->poll.ufds;
	u->si = rb->poll.nfds;
	u->dx = (unsigned long)-1;	/* no timeout */
	u->ax = (unsigned long)-ERESTARTNOHAND;
}

int ckpt_thread_capture(struct ckpt_thread_state *ts)
{
	const struct user_regset *gr = find_regset(NT_PRSTATUS);
	const struct user_regset *xr = find_regset(NT_X86_XSTATE);
	struct ckpt_img_thread *t = &ts->img;
	struct user_regs_struct *u = (struct user_regs_struct *)t->gregs;
	struct pt_regs *regs = current_pt_regs();
	int ret;

	BUILD_BUG_ON(sizeof(t->gregs) != sizeof(struct user_regs_struct));

	if (!gr || !xr) {
		ts->why = "this machine has no XSAVE register set";
		return -EOPNOTSUPP;
	}
	if (!user_64bit_mode(regs)) {
		ts->why = "32-bit threads are not supported";
		return -EOPNOTSUPP;
	}
	ret = regset_get(current, gr, sizeof(t->gregs), t->gregs);
	if (ret < 0)
		return ret;
	ret = regset_get(current, xr, t->xstate_size, ts->xstate);
	if (ret < 0)
		return ret;
	if (u->gs_base || u->ds || u->es || u->fs || u->gs) {
		ts->why = "thread uses the GS base or segment selectors";
		return -EOPNOTSUPP;
	}
	ret = capture_sched(ts);
	if (ret)
		return ret;

	poll_again(u);

	t->flags = (long)regs->orig_ax >= 0 ? CKPT_THREAD_IN_SYSCALL : 0;
	t->flags |= CKPT_THREAD_NICE;
	t->nice = task_nice(current);
	t->blocked = current->blocked.sig[0];
	t->clear_child_tid = (unsigned long)current->clear_child_tid;
	t->robust_list = (unsigned long)current->robust_list;
	t->robust_list_len = current->robust_list ?
			     sizeof(struct robust_list_head) : 0;
	t->rseq = (unsigned long)current->rseq;
	t->rseq_len = ckpt_rseq_len(current);
	t->rseq_sig = current->rseq_sig;
	t->sas_ss_sp = current->sas_ss_sp;
	t->sas_ss_size = current->sas_ss_size;
	t->sas_ss_flags = current->sas_ss_flags;
	__get_task_comm(t->comm, sizeof(t->comm), current);
	return 0;
}

/*
 * The thread's nice value (the restarter's, inherited, in an image of an
 * older engine), never a higher priority than the restarter's without
 * CAP_SYS_NICE: a job restarted by root's ckptd does not come back ahead
 * of where its user left it.
 */
static void restore_nice(const struct ckpt_img_thread *t)
{
	int nice = t->nice;

	if (!(t->flags & CKPT_THREAD_NICE))
		return;
	if (nice < task_nice(current) && !capable(CAP_SYS_NICE))
		nice = task_nice(current);
	set_user_nice(current, nice);
}

/*
 * The policy, as sched_setattr() would let the restarter set it: a
 * real-time one with CAP_SYS_NICE or within RLIMIT_RTPRIO (the image's,
 * which the restarter set), out of SCHED_IDLE or SCHED_RESET_ON_FORK with
 * CAP_SYS_NICE; else the thread keeps the restarter's, as a nice value is
 * clamped. The nice value (restored first) stays. The LSMs' say on it
 * (security_task_setscheduler()) is not asked: the unchecked setter is the
 * only one a module may call.
 */
static void restore_policy(const struct ckpt_img_sched *s)
{
	bool rt = s->policy == SCHED_FIFO || s->policy == SCHED_RR;
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = s->policy,
		.sched_priority = s->rt_priority,
		.sched_nice = task_nice(current),
		.sched_flags = s->flags & CKPT_SCHED_RESET_ON_FORK ?
			       SCHED_FLAG_RESET_ON_FORK : 0,
	};

	if (current->policy == s->policy &&
	    current->rt_priority == s->rt_priority &&
	    current->sched_reset_on_fork == !!attr.sched_flags)
		return;
	if (rt && !capable(CAP_SYS_NICE) &&
	    s->rt_priority > task_rlimit(current, RLIMIT_RTPRIO))
		return;
	if (((current->policy == SCHED_IDLE && s->policy != SCHED_IDLE) ||
	     (current->sched_reset_on_fork && !attr.sched_flags)) &&
	    !capable(CAP_SYS_NICE))
		return;
	sched_setattr_nocheck(current, &attr);
}

void ckpt_thread_release_fpu(void)
{
	/*
	 * Entering and leaving kernel FPU use saves the user registers to
	 * memory and marks them to be reloaded on the way out, so nothing
	 * later saves stale registers over what another task writes there.
	 */
	kernel_fpu_begin();
	kernel_fpu_end();
}

int ckpt_thread_set_xstate(struct task_struct *task, const void *xstate,
			   unsigned int size)
{
	const struct user_regset *xr = find_regset(NT_X86_XSTATE);

	if (WARN_ON_ONCE(task == current))
		return -EINVAL;
	if (!xr || size != xr->n * xr->size)
		return -EINVAL;
	return xr->set(task, xr, 0, size, xstate, NULL);
}

int ckpt_thread_restore(const struct ckpt_img_thread *t,
			const struct ckpt_img_sched *s, struct ckpt_why *why)
{
	const struct user_regs_struct *u = (const void *)t->gregs;
	struct pt_regs *regs = current_pt_regs();
	sigset_t blocked;

	if (u->ip >= TASK_SIZE_MAX || u->sp >= TASK_SIZE_MAX ||
	    u->fs_base >= TASK_SIZE_MAX) {
		why->msg = "thread registers point outside user space";
		return -EINVAL;
	}
	if (u->gs_base || u->ds || u->es || u->fs || u->gs) {
		why->msg = "thread uses the GS base or segment selectors";
		return -EOPNOTSUPP;
	}

	regs->r15 = u->r15;
	regs->r14 = u->r14;
	regs->r13 = u->r13;
	regs->r12 = u->r12;
	regs->bp = u->bp;
	regs->bx = u->bx;
	regs->r11 = u->r11;
	regs->r10 = u->r10;
	regs->r9 = u->r9;
	regs->r8 = u->r8;
	regs->ax = u->ax;
	regs->cx = u->cx;
	regs->dx = u->dx;
	regs->si = u->si;
	regs->di = u->di;
	regs->orig_ax = u->orig_ax;
	regs->ip = u->ip;
	regs->sp = u->sp;
	regs->flags = (regs->flags & ~CKPT_FLAG_MASK) |
		      (u->flags & CKPT_FLAG_MASK);
	regs->cs = __USER_CS;
	regs->ss = __USER_DS;

	/* What arch_prctl(ARCH_SET_FS) does for the running task. */
	preempt_disable();
	loadsegment(fs, 0);
	x86_fsbase_write_cpu(u->fs_base);
	current->thread.fsindex = 0;
	current->thread.fsbase = u->fs_base;
	preempt_enable();

	siginitset(&blocked, t->blocked & ~(sigmask(SIGKILL) | sigmask(SIGSTOP)));
	sigprocmask(SIG_SETMASK, &blocked, NULL);

	current->clear_child_tid = (int __user *)(unsigned long)t->clear_child_tid;
	current->robust_list = (struct robust_list_head __user *)
			       (unsigned long)t->robust_list;
	current->rseq = (struct rseq __user *)(unsigned long)t->rseq;
	current->rseq_sig = t->rseq_sig;
	ckpt_set_rseq_len(current, t->rseq_len);
	rseq_set_notify_resume(current);

	current->sas_ss_sp = t->sas_ss_sp;
	current->sas_ss_size = t->sas_ss_size;
	current->sas_ss_flags = t->sas_ss_flags;

	task_lock(current);
	strscpy_pad(current->comm, t->comm, sizeof(current->comm));
	task_unlock(current);
	restore_nice(t);
	if (s)
		restore_policy(s);
	return 0;
}
