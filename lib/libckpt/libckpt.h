/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libckpt: how a process takes part in its own checkpoints.
 *
 * A process that calls ckpt_init() (or runs under ckpt-run, which preloads
 * the library) gets a callback thread that the engine wakes when the process
 * is to be checkpointed. Callbacks registered with ckpt_register_callback()
 * then run, critical sections (ckpt_enter_cs()) hold the checkpoint off, and
 * ckpt_checkpoint() inside a callback tells whether the process continues
 * after the checkpoint (0) or runs again from the image (> 0).
 *
 * Every call returns 0 or a positive value on success and a negative errno
 * value on failure; ckpt_last_error() describes the last failure of the
 * calling thread. See libckpt(7) and the man page of each call.
 */
#ifndef LIBCKPT_H
#define LIBCKPT_H

#ifdef __cplusplus
extern "C" {
#endif

#define LIBCKPT_VERSION		1

/* ckpt_register_callback() flags: where the callback runs. */
#define CKPT_CB_THREAD		0x1	/* in the callback thread */
#define CKPT_CB_SIGNAL		0x2	/* in the registering thread's signal handler */

/* ckpt_checkpoint() flags. */
#define CKPT_ABORT_TEMP		0x1	/* not now: the request fails, try again later */
#define CKPT_ABORT_PERM		0x2	/* the request fails for good */

/* ckpt_request_checkpoint() flags. */
#define CKPT_REQUEST_STOP	0x1	/* stop the process once captured */
#define CKPT_REQUEST_KILL	0x2	/* end the process once captured */

typedef int (*ckpt_callback_t)(void *arg);

int ckpt_init(void);

int ckpt_register_callback(ckpt_callback_t fn, void *arg, int flags);

int ckpt_checkpoint(int flags);
int ckpt_abort(int flags, const char *reason);

int ckpt_enter_cs(void);
int ckpt_tryenter_cs(void);
int ckpt_leave_cs(void);

struct ckpt_request_args {
	const char *path;		/* image file; NULL: ./context.<pid> */
	unsigned int flags;		/* CKPT_REQUEST_* */
	unsigned int timeout_ms;	/* 0: the engine's default (10 s) */
	unsigned long reserved[4];	/* must be 0 */
};

struct ckpt_request;

int ckpt_request_checkpoint(const struct ckpt_request_args *args,
			    struct ckpt_request **req);
int ckpt_poll_checkpoint(struct ckpt_request *req, int timeout_ms);
int ckpt_wait_checkpoint(struct ckpt_request *req);

struct ckpt_status {
	int registered;			/* ckpt_init() succeeded */
	int in_progress;		/* a checkpoint is being taken now */
	unsigned int request_flags;	/* its CKPT_REQUEST_* flags */
	unsigned int checkpoints;	/* continued after, in this run */
	unsigned int restarts;		/* restarts, over the process's life */
	int last_result;		/* of the last checkpoint: 0, 1 or -errno */
	char restarted_from[4096];	/* image of the last restart, or "" */
};

int ckpt_status(struct ckpt_status *st);

const char *ckpt_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBCKPT_H */
