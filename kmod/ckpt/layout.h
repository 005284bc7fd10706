/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _CKPT_LAYOUT_H
#define _CKPT_LAYOUT_H

#include <linux/types.h>

/*
 * Features that read kernel-private structures directly. Each is checked
 * at module load against the running kernel's BTF (layout.c) and, when a
 * structure it reads differs from this module's build, refused by name
 * instead of reading the wrong memory.
 */
enum ckpt_layout {
	CKPT_LAYOUT_EVENTFD,	/* struct eventfd_ctx (6.1: semaphore mode) */
	CKPT_LAYOUT_TIMERS,	/* struct k_itimer, sigqueue, signal_struct */
	CKPT_LAYOUT_SIGQUEUE,	/* struct sigqueue (queued signals) */
	CKPT_LAYOUT_PIPES,	/* struct pipe_inode_info, pipe_buffer */
	CKPT_LAYOUT_VDSO,	/* struct vdso_image, mm_context_t */
	CKPT_LAYOUT_SYSVIPC,	/* struct shmid_kernel, sem_array, sem, msg_queue */
	CKPT_LAYOUT_INOTIFY,	/* struct fsnotify_group, _mark, _mark_connector */
	CKPT_LAYOUT_POLL,	/* struct restart_block (poll() called again) */
	CKPT_LAYOUT_NR,
};

/* Whether @f may read its structures: matched, or could not be checked. */
bool ckpt_layout_ok(enum ckpt_layout f);

/*
 * Why @f is off, for messages: "struct k_itimer differs from this
 * engine's build". Meaningful only when ckpt_layout_ok() is false.
 */
const char *ckpt_layout_why(enum ckpt_layout f);

/* Reads /sys/kernel/btf/vmlinux and sets each feature's state. */
void ckpt_layout_init(void);

#endif /* _CKPT_LAYOUT_H */
