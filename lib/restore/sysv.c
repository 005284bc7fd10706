// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's System V IPC again (Documentation/engine.md, "System V IPC").
 *
 * The tree's root image carries every object of the IPC namespace the
 * tree had to itself. The root, in a new IPC namespace of its own before
 * it forks any member, makes each again with its id (the namespace's
 * *_next_id sysctl names the id the next object gets), key, content and
 * owner. Every member then attaches the segments it mapped somewhere out
 * of its image's way; the engine maps them where the image has them and
 * detaches these (kmod/ckpt/mm.c). A segment removed while attached is
 * removed again once every member is attached, at the tree's barrier.
 * A member that used semaphore undo (SEM_UNDO) takes its adjustments
 * again before it becomes the image's process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

bool restore_has_sysv(const struct ckpt_image *img)
{
	return img->nr_shms || img->nr_sems || img->nr_msgs;
}

int restore_check_sysv(const struct ckpt_image *root, uint32_t i,
		       const struct ckpt_image *img, const char *path,
		       struct ckpt_err *err)
{
	uint32_t j, k;

	if (i && restore_has_sysv(img))
		return ckpt_err_set(err, EBADMSG,
				    "%s: System V objects in a member's image other than the root's",
				    path);
	for (j = 0; j < img->nr_semundos; j++) {
		const struct ckpt_img_semundo *u = img->semundos[j];

		for (k = 0; k < root->nr_sems; k++)
			if (root->sems[k]->perm.id == u->id &&
			    root->sems[k]->nsems == u->nsems)
				break;
		if (k == root->nr_sems)
			return ckpt_err_set(err, EBADMSG,
					    "%s: adjustments to System V semaphore set %u, which the root's image does not carry with %u semaphores",
					    path, u->id, u->nsems);
	}
	for (j = 0; j < img->nr_vmas; j++) {
		const struct ckpt_img_vma *v = &img->vmas[j];

		if (!(v->flags & CKPT_VMA_SYSV))
			continue;
		for (k = 0; k < root->nr_shms; k++)
			if (root->shms[k]->perm.id == v->ino &&
			    root->shms[k]->size == v->size)
				break;
		if (k == root->nr_shms)
			return ckpt_err_set(err, EBADMSG,
					    "%s: mapping %llx-%llx of System V segment %llu, which the root's image does not carry",
					    path, (unsigned long long)v->start,
					    (unsigned long long)v->end,
					    (unsigned long long)v->ino);
	}
	return 0;
}

/* The id the namespace's next object of @kind ("shm", "sem", "msg") gets. */
static int next_id(const char *kind, __u32 id, struct ckpt_err *err)
{
	char path[64], buf[16];
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s_next_id", kind);
	len = snprintf(buf, sizeof(buf), "%u", id);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len)
		ret = ckpt_err_set(err, errno, "cannot set %s: %s", path,
				   strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret;
}

/* @got is @p's id, or the reason it is not. */
static int made(const char *what, const struct ckpt_img_ipcperm *p, int got,
		struct ckpt_err *err)
{
	if (got < 0)
		return ckpt_err_set(err, errno,
				    "cannot make System V %s %u (key %#x) again: %s",
				    what, p->id, p->key, strerror(errno));
	if ((__u32)got != p->id)
		return ckpt_err_set(err, EEXIST,
				    "System V %s %u came back as %d", what, p->id,
				    got);
	return 0;
}

static void set_perm(struct ipc_perm *to, const struct ckpt_img_ipcperm *p)
{
	to->uid = p->uid;
	to->gid = p->gid;
	to->mode = p->mode;
}

static int owner_failed(const char *what, const struct ckpt_img_ipcperm *p,
			struct ckpt_err *err)
{
	return ckpt_err_set(err, errno,
			    "cannot give System V %s %u its owner and mode: %s",
			    what, p->id, strerror(errno));
}

static int make_shm(struct restore *r, uint32_t i, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	const struct ckpt_img_sysvshm *m = img->shms[i];
	struct shmid_ds ds;
	uint32_t j;
	char *p;
	int id, ret;

	ret = next_id("shm", m->perm.id, err);
	if (ret)
		return ret;
	id = shmget(m->perm.key, m->size, IPC_CREAT | IPC_EXCL | 0600);
	ret = made("shared memory segment", &m->perm, id, err);
	if (ret)
		return ret;
	p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return ckpt_err_set(err, errno,
				    "cannot attach System V segment %u to fill it: %s",
				    m->perm.id, strerror(errno));
	for (j = 0; j < img->nr_shm_chunks && !ret; j++) {
		const struct ckpt_image_chunk *c = &img->shm_chunks[j];

		if (c->obj == i &&
		    pread(r->fd, p + c->offset, c->len, c->image_offset) !=
		    (ssize_t)c->len)
			ret = ckpt_err_set(err, EIO,
					   "cannot read System V segment %u from the image",
					   m->perm.id);
	}
	shmdt(p);
	if (ret)
		return ret;
	if (shmctl(id, IPC_STAT, &ds))
		return owner_failed("shared memory segment", &m->perm, err);
	set_perm(&ds.shm_perm, &m->perm);
	if (shmctl(id, IPC_SET, &ds))
		return owner_failed("shared memory segment", &m->perm, err);
	if ((m->perm.flags & CKPT_IPC_LOCKED) && shmctl(id, SHM_LOCK, NULL))
		return ckpt_err_set(err, errno,
				    "cannot lock System V segment %u again: %s",
				    m->perm.id, strerror(errno));
	return 0;
}

static int make_sem(const struct ckpt_img_sysvsem *m, struct ckpt_err *err)
{
	unsigned short *vals;
	struct semid_ds ds;
	union semun arg;
	uint32_t i;
	int id, ret;

	ret = next_id("sem", m->perm.id, err);
	if (ret)
		return ret;
	id = semget(m->perm.key, m->nsems, IPC_CREAT | IPC_EXCL | 0600);
	ret = made("semaphore set", &m->perm, id, err);
	if (ret)
		return ret;
	vals = calloc(m->nsems, sizeof(*vals));
	if (!vals)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < m->nsems; i++)
		vals[i] = m->vals[i];
	arg.array = vals;
	ret = semctl(id, 0, SETALL, arg);
	free(vals);
	if (ret)
		return ckpt_err_set(err, errno,
				    "cannot set System V semaphore set %u's values: %s",
				    m->perm.id, strerror(errno));
	arg.buf = &ds;
	if (semctl(id, 0, IPC_STAT, arg))
		return owner_failed("semaphore set", &m->perm, err);
	set_perm(&ds.sem_perm, &m->perm);
	if (semctl(id, 0, IPC_SET, arg))
		return owner_failed("semaphore set", &m->perm, err);
	return 0;
}

/* The queue's messages in order: its limit raised meanwhile, then its own. */
static int make_msg(const struct ckpt_img_sysvmsg *m, struct ckpt_err *err)
{
	const __u8 *p = (const __u8 *)(m + 1);
	struct ckpt_img_sysvmsg_one one;
	struct msqid_ds ds;
	struct msgbuf *buf;
	__u32 n;
	int id, ret;

	ret = next_id("msg", m->perm.id, err);
	if (ret)
		return ret;
	id = msgget(m->perm.key, IPC_CREAT | IPC_EXCL | 0600);
	ret = made("message queue", &m->perm, id, err);
	if (ret)
		return ret;
	if (msgctl(id, IPC_STAT, &ds))
		return owner_failed("message queue", &m->perm, err);
	ds.msg_qbytes = CKPT_IMG_MAX_MSGBYTES + CKPT_IMG_MAX_MSGS;
	if (msgctl(id, IPC_SET, &ds))
		return ckpt_err_set(err, errno,
				    "cannot make room in System V message queue %u: %s",
				    m->perm.id, strerror(errno));
	buf = malloc(sizeof(*buf) + CKPT_IMG_MAX_MSGSZ);
	if (!buf)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (n = 0; n < m->nr && !ret; n++) {
		memcpy(&one, p, sizeof(one));
		p += sizeof(one);
		buf->mtype = one.type;
		memcpy(buf->mtext, p, one.len);
		p += (one.len + 7) & ~7ULL;
		if (msgsnd(id, buf, one.len, IPC_NOWAIT))
			ret = ckpt_err_set(err, errno,
					   "cannot queue message %u of System V message queue %u again: %s",
					   n, m->perm.id, strerror(errno));
	}
	free(buf);
	if (ret)
		return ret;
	ds.msg_qbytes = m->qbytes;
	set_perm(&ds.msg_perm, &m->perm);
	if (msgctl(id, IPC_SET, &ds))
		return owner_failed("message queue", &m->perm, err);
	return 0;
}

int restore_make_sysv(struct restore *r, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < img->nr_shms && !ret; i++)
		ret = make_shm(r, i, err);
	for (i = 0; i < img->nr_sems && !ret; i++)
		ret = make_sem(img->sems[i], err);
	for (i = 0; i < img->nr_msgs && !ret; i++)
		ret = make_msg(img->msgs[i], err);
	return ret;
}

int restore_remove_sysv(const struct ckpt_image *root, struct ckpt_err *err)
{
	uint32_t i;

	for (i = 0; i < root->nr_shms; i++) {
		const struct ckpt_img_sysvshm *m = root->shms[i];

		if ((m->perm.flags & CKPT_IPC_DEST) &&
		    shmctl(m->perm.id, IPC_RMID, NULL))
			return ckpt_err_set(err, errno,
					    "cannot remove System V segment %u again: %s",
					    m->perm.id, strerror(errno));
	}
	return 0;
}

/* Segment @id of @len bytes attached somewhere out of the image's way. */
static int attach_away(struct restore *r, __u32 id, __u64 len, int flags,
		       struct ckpt_err *err)
{
	const unsigned long gib = 1UL << 30;
	unsigned long step = ((len + gib - 1) & ~(gib - 1)) + gib, at;
	void *p = shmat(id, NULL, flags);

	if (p == (void *)-1)
		return ckpt_err_set(err, errno,
				    "cannot attach System V segment %u: %s", id,
				    strerror(errno));
	if (!restore_image_busy(r, (unsigned long)p, (unsigned long)p + len))
		return 0;
	shmdt(p);
	/* From 16 TiB up: far from where mmap() puts things by default. */
	for (at = 1UL << 44; at < (1UL << 46); at += step) {
		if (restore_image_busy(r, at, at + len) ||
		    restore_range_busy(at, at + len))
			continue;
		if (shmat(id, (void *)at, flags) != (void *)-1)
			return 0;
	}
	return ckpt_err_set(err, ENOMEM,
			    "no room to attach System V segment %u out of the image's way",
			    id);
}

int restore_attach_sysv(struct restore *r, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i, j;
	int ret;

	for (i = 0; i < img->nr_vmas; i++) {
		const struct ckpt_img_vma *v = &img->vmas[i];
		int flags = SHM_RDONLY;
		bool first = true;

		if (!(v->flags & CKPT_VMA_SYSV))
			continue;
		for (j = 0; j < img->nr_vmas; j++) {
			const struct ckpt_img_vma *w = &img->vmas[j];

			if (!(w->flags & CKPT_VMA_SYSV) || w->ino != v->ino)
				continue;
			if (j < i)
				first = false;
			if (w->flags & CKPT_VMA_MAYWRITE)
				flags &= ~SHM_RDONLY;
			if (w->prot & 4 /* PROT_EXEC */)
				flags |= SHM_EXEC;
		}
		if (!first)
			continue;
		ret = attach_away(r, v->ino, v->size, flags, err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Adjustment @adj to semaphore @n of set @id, its value unchanged: an
 * operation with SEM_UNDO adds its opposite to the adjustment, and one
 * without puts the value back, in one atomic semop(). The value must stay
 * within 0..SEMVMX in between: the pair lowers it first when it can, and
 * a step is at most as large as the room on that side, which is half of
 * SEMVMX at least on one of them; two steps at most.
 */
static int adjust(__u32 id, __u32 n, int adj, struct ckpt_err *err)
{
	while (adj) {
		int val = semctl(id, n, GETVAL), room, step;
		struct sembuf op[2], t;

		if (val < 0)
			return ckpt_err_set(err, errno,
					    "cannot read System V semaphore set %u, semaphore %u: %s",
					    id, n, strerror(errno));
		room = val > CKPT_IMG_SEMVMX - val ? val : CKPT_IMG_SEMVMX - val;
		step = abs(adj) < room ? abs(adj) : room;
		if (adj < 0)
			step = -step;
		op[0] = (struct sembuf){ .sem_num = n, .sem_op = -step,
					 .sem_flg = SEM_UNDO | IPC_NOWAIT };
		op[1] = (struct sembuf){ .sem_num = n, .sem_op = step,
					 .sem_flg = IPC_NOWAIT };
		/* op[0] lowers the value for a positive step, op[1] otherwise. */
		if ((step > 0) != (val >= abs(step))) {
			t = op[0];
			op[0] = op[1];
			op[1] = t;
		}
		if (semop(id, op, 2))
			return ckpt_err_set(err, errno,
					    "cannot restore the adjustment of %d to System V semaphore set %u, semaphore %u (value %d): %s",
					    adj, id, n, val, strerror(errno));
		adj -= step;
	}
	return 0;
}

int restore_undo_sysv(struct restore *r, struct ckpt_err *err)
{
	const struct ckpt_image *img = &r->img;
	uint32_t i, j;
	int ret;

	for (i = 0; i < img->nr_semundos; i++) {
		const struct ckpt_img_semundo *u = img->semundos[i];

		for (j = 0; j < u->nsems; j++) {
			if (!u->adj[j])
				continue;
			ret = adjust(u->id, j, u->adj[j], err);
			if (ret)
				return ret;
		}
	}
	return 0;
}
