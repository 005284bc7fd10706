/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_THREADS_H
#define _CKPT_THREADS_H

#include <linux/types.h>
#include <uapi/linux/ckpt_image.h>

struct task_struct;
struct ckpt_why;

struct ckpt_thread_state {
	struct ckpt_img_thread img;
	struct ckpt_img_sched sched;
	void *xstate;		/* img.xstate_size bytes */
	int err;
	const char *why;
};

/* Bytes of XSAVE state a thread has on this machine, 0 without XSAVE. */
unsigned int ckpt_xstate_size(void);
/* The XSAVE features this machine enables (XCR0). */
int ckpt_machine_xfeatures(u64 *xfeatures);
/* The features an XSAVE buffer holds state for. */
u64 ckpt_xstate_bv(const void *xstate);

/* In the thread's own context: capture its state into @ts. */
int ckpt_thread_capture(struct ckpt_thread_state *ts);

/*
 * Load @xstate into @task's FPU state. @task must not be current and must
 * have handed its FPU registers to memory (ckpt_thread_release_fpu()).
 */
int ckpt_thread_set_xstate(struct task_struct *task, const void *xstate,
			   unsigned int size);
/* In the thread's own context: keep its FPU registers in memory only. */
void ckpt_thread_release_fpu(void);

/*
 * In the thread's own context, on its way back to user mode: take the
 * image's registers and per-thread state (everything but the FPU), and its
 * scheduling policy from @s (SCHED; NULL in an image without; its CPUs
 * the restarter set with sched_setaffinity()).
 */
int ckpt_thread_restore(const struct ckpt_img_thread *t,
			const struct ckpt_img_sched *s, struct ckpt_why *why);

#endif /* _CKPT_THREADS_H */
