// SPDX-License-Identifier: GPL-2.0
/*
 * The image directory of a process tree (treedir.h): finding the tree,
 * checkpointing it into a directory that appears only once complete, and
 * reading the manifest back.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "err.h"
#include "image.h"
#include "treedir.h"

#define TREE_TRIES	8
/*
 * After a try a member ended in (a shell loop's command, listed by the
 * look and gone by the freeze), the looks leave out children this young
 * that have none of their own: the engine waits for such a child to end
 * and records it as the zombie it is (or names it if it lives on).
 */
#define TREE_YOUNG_MS	1000

/* CLOCK_MONOTONIC in ms. */
static uint64_t ckpt_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ckpt_tree_free(struct ckpt_tree *t)
{
	free(t->m);
	t->m = NULL;
	free(t->sums);
	t->sums = NULL;
	t->nr = 0;
}

static int tree_add(struct ckpt_tree *t, uint32_t nr_roots, pid_t pid,
		    uint32_t parent, struct ckpt_err *err)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		if (t->m[i].pid != pid)
			continue;
		/* A root is no member's child: else the roots were stale. */
		if (i < nr_roots)
			return ckpt_err_set(err, EBUSY, "pid %d, taken for a tree's root, is a child of pid %d",
					    (int)pid, (int)t->m[parent].pid);
		return 0;	/* listed by another of its threads */
	}
	if (t->nr == CKPT_TREE_MAX_MEMBERS)
		return ckpt_err_set(err, E2BIG, "the tree of pid %d has more than %u processes",
				    t->m[0].pid, CKPT_TREE_MAX_MEMBERS);
	t->m[t->nr].pid = pid;
	t->m[t->nr].parent = parent;
	t->nr++;
	return 0;
}

int ckpt_proc_stat(long pid, char *state, long *ppid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, ')' included. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	/* The start time is the 22nd field, the 19th after the state. */
	return sscanf(p + 3, "%ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		      ppid, start) == 2 ? 0 : -1;
}

/*
 * Whether @pid has ended and waits to be reaped: no member, but a zombie
 * child its parent's image records (the engine finds those itself).
 */
static bool is_zombie(long pid)
{
	unsigned long long start;
	long ppid;
	char state;

	return !ckpt_proc_stat(pid, &state, &ppid, &start) && state == 'Z';
}

/*
 * @fn on each child of every thread of @pid, from /proc, until one returns
 * non-zero, which is returned; -errno if @pid's threads cannot be listed.
 */
static int each_child(long pid, int (*fn)(long child, void *arg), void *arg)
{
	char path[64];
	struct dirent *d;
	long child;
	int ret = 0;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%.16s/children",
			 pid, d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;	/* the thread exited */
		while (!ret && fscanf(f, "%ld", &child) == 1)
			if (child > 0 && child <= INT_MAX)
				ret = fn(child, arg);
		fclose(f);
	}
	closedir(dir);
	return ret;
}

static int any_child(long child, void *arg)
{
	(void)child;
	(void)arg;
	return 1;
}

/* Whether @pid started less than @ms ago and has no child (TREE_YOUNG_MS). */
static bool young_leaf(long pid, unsigned int ms)
{
	unsigned long long start;
	struct timespec now;
	long hz = sysconf(_SC_CLK_TCK), ppid;
	char state;

	if (!ms || hz <= 0 || ckpt_proc_stat(pid, &state, &ppid, &start) ||
	    clock_gettime(CLOCK_BOOTTIME, &now))
		return false;
	if ((unsigned long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 >=
	    start * 1000 / hz + ms)
		return false;
	return each_child(pid, any_child, NULL) == 0;
}

struct adding {
	struct ckpt_tree *t;
	uint32_t nr_roots, parent;
	unsigned int young_ms;
	struct ckpt_err *err;
};

static int add_child(long pid, void *arg)
{
	struct adding *a = arg;

	if (is_zombie(pid) || young_leaf(pid, a->young_ms))
		return 0;
	/* Positive: tree_add()'s error, set in a->err. */
	return -tree_add(a->t, a->nr_roots, pid, a->parent, a->err);
}

/*
 * The children of every thread of member @i; with @young_ms, not those
 * younger that have none (TREE_YOUNG_MS).
 */
static int add_children(struct ckpt_tree *t, uint32_t nr_roots, uint32_t i,
			unsigned int young_ms, struct ckpt_err *err)
{
	struct adding a = { t, nr_roots, i, young_ms, err };
	int ret = each_child(t->m[i].pid, add_child, &a);

	if (ret > 0)
		return -ret;
	if (ret < 0)
		return ckpt_err_set(err, ret == -ENOENT ? ESRCH : -ret,
				    "pid %d: cannot list its threads: %s",
				    t->m[i].pid, strerror(-ret));
	return 0;
}

int ckpt_tree_find(pid_t root, struct ckpt_tree *t, struct ckpt_err *err)
{
	return ckpt_tree_find_roots(&root, 1, t, err);
}

static int find_roots(const pid_t *roots, uint32_t nr_roots,
		      unsigned int young_ms, struct ckpt_tree *t,
		      struct ckpt_err *err)
{
	uint32_t i;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!nr_roots || nr_roots > CKPT_TREE_MAX_MEMBERS)
		return ckpt_err_set(err, EINVAL, "%u roots: 1 to %u", nr_roots,
				    CKPT_TREE_MAX_MEMBERS);
	t->m = calloc(CKPT_TREE_MAX_MEMBERS, sizeof(*t->m));
	if (!t->m)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < nr_roots; i++) {
		t->m[i].pid = roots[i];
		t->m[i].parent = CKPT_TREE_NO_PARENT;
	}
	t->nr = nr_roots;
	/* Breadth first: parents before children. */
	for (i = 0; i < t->nr; i++) {
		ret = add_children(t, nr_roots, i, young_ms, err);
		if (ret) {
			ckpt_tree_free(t);
			return ret;
		}
	}
	return 0;
}

int ckpt_tree_find_roots(const pid_t *roots, uint32_t nr_roots,
			 struct ckpt_tree *t, struct ckpt_err *err)
{
	return find_roots(roots, nr_roots, 0, t, err);
}

int ckpt_tree_image_path(const char *dir, const struct ckpt_tree *t,
			 uint32_t i, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%d.img", dir, (int)t->m[i].pid);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The manifest (treedir.h) into the open directory @dfd, synced. */
static int write_manifest(int dfd, const struct ckpt_tree *t,
			  struct ckpt_err *err)
{
	FILE *f;
	uint32_t i;
	int fd, ret = 0;

	fd = openat(dfd, CKPT_TREE_MANIFEST, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return ckpt_err_set(err, -ret, "cannot create the manifest: %s",
				    strerror(-ret));
	}
	fprintf(f, "%s\nid ", CKPT_TREE_MAGIC);
	for (i = 0; i < CKPT_TREE_ID_LEN; i++)
		fprintf(f, "%02x", t->id[i]);
	fprintf(f, "\nmembers %u\n", t->nr);
	for (i = 0; i < t->nr; i++) {
		if (t->m[i].parent == CKPT_TREE_NO_PARENT)
			fprintf(f, "member %d -\n", (int)t->m[i].pid);
		else
			fprintf(f, "member %d %u\n", (int)t->m[i].pid,
				t->m[i].parent);
	}
	if (fflush(f) || fsync(fileno(f)))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		return ckpt_err_set(err, -ret, "writing the manifest: %s",
				    strerror(-ret));
	return 0;
}

/* Empties the temporary directory of what a try put there. */
static void clear_tmp(int dfd, const struct ckpt_tree *t)
{
	char name[32];
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		snprintf(name, sizeof(name), "member-%u.part", i);
		unlinkat(dfd, name, 0);
		snprintf(name, sizeof(name), "%d.img", (int)t->m[i].pid);
		unlinkat(dfd, name, 0);
	}
	unlinkat(dfd, CKPT_TREE_MANIFEST, 0);
}

/*
 * The images under their names, the pids they hold: the engine numbers
 * pids in the tree's own namespace, which need not be the caller's (a
 * restarted tree's is not).
 */
static int name_images(int dfd, struct ckpt_tree *t,
		       const struct ckpt_tree_member *mem, struct ckpt_err *err)
{
	char from[32], to[32];
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		t->m[i].pid = mem[i].ns_pid;
		snprintf(from, sizeof(from), "member-%u.part", i);
		snprintf(to, sizeof(to), "%d.img", (int)t->m[i].pid);
		if (renameat(dfd, from, dfd, to))
			return ckpt_err_set(err, errno, "cannot rename %s to %s: %s",
					    from, to, strerror(errno));
	}
	return 0;
}

/* One image file per member in @dfd, their descriptors into @mem. */
static int create_images(int dfd, const struct ckpt_tree *t,
			 struct ckpt_tree_member *mem, struct ckpt_err *err)
{
	char name[32];
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		snprintf(name, sizeof(name), "member-%u.part", i);
		mem[i].pid = t->m[i].pid;
		mem[i].fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL |
				   O_CLOEXEC, 0600);
		if (mem[i].fd < 0)
			return ckpt_err_set(err, errno, "cannot create %s: %s",
					    name, strerror(errno));
	}
	return 0;
}

static int sync_images(const struct ckpt_tree *t, struct ckpt_tree_member *mem,
		       struct ckpt_err *err)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (fsync(mem[i].fd))
			return ckpt_err_set(err, errno, "writing the image of pid %d: %s",
					    (int)t->m[i].pid, strerror(errno));
	return 0;
}

/*
 * The engine's request for the members now in @t; -EBUSY when the tree
 * changed since it was looked at (a new child, a process gone).
 */
static int checkpoint_once(int dev, struct ckpt_checkpoint_tree *a, int dfd,
			   struct ckpt_tree *t, struct ckpt_tree_member *mem,
			   struct ckpt_err *err)
{
	char msg[256] = "";
	int ret;

	memset(mem, 0, t->nr * sizeof(*mem));
	ret = create_images(dfd, t, mem, err);
	if (ret)
		return ret;
	if (a->flags & CKPT_CHECKPOINT_DIGESTS) {
		free(t->sums);
		t->sums = calloc(t->nr, sizeof(*t->sums));
		if (!t->sums)
			return ckpt_err_set(err, ENOMEM, "out of memory");
		a->digests = (uintptr_t)t->sums;
	}
	a->members = (uintptr_t)mem;
	a->nr_members = t->nr;
	a->errmsg = (uintptr_t)msg;
	a->errmsg_len = sizeof(msg);
	ret = ckpt_dev_checkpoint_tree(dev, a);
	a->errmsg = 0;
	a->digests = 0;
	if (ret)
		return ckpt_err_set(err, -ret, "%s (%s)", *msg ? msg : strerror(-ret),
				    strerror(-ret));
	memcpy(t->id, a->id, sizeof(t->id));
	ret = sync_images(t, mem, err);
	if (!ret)
		ret = name_images(dfd, t, mem, err);
	if (!ret)
		ret = write_manifest(dfd, t, err);
	/* Captured, let go or killed: never one checkpoint_tries() takes again. */
	return ret == -EBUSY || ret == -ESRCH || ret == -EAGAIN ? -EIO : ret;
}

static void close_images(const struct ckpt_tree *t, struct ckpt_tree_member *mem)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (mem[i].fd > 0)
			close(mem[i].fd);
}

/*
 * Every try in a fresh look at the tree; the last one's outcome counts. A
 * tree that changed (-EBUSY, -ESRCH) or had bytes on the move that would
 * have been in no image (-EAGAIN) is tried again.
 */
static int checkpoint_tries(int dev, struct ckpt_checkpoint_tree *a,
			    const struct ckpt_roots *roots, int dfd,
			    struct ckpt_tree *t, struct ckpt_tree_member **res,
			    struct ckpt_err *err)
{
	pid_t pids[CKPT_TREE_MAX_ROOTS];
	unsigned int young_ms = 0;
	int ret = 0, try;
	uint64_t t0 = ckpt_mono_ms();

	for (try = 0; try < TREE_TRIES; try++) {
		if (try) {
			clear_tmp(dfd, t);
			ckpt_tree_free(t);
		}
		/* The roots again too: one may have ended, or another come. */
		ret = roots->find(roots->arg, pids, CKPT_TREE_MAX_ROOTS, err);
		if (ret < 0)
			return ret;
		if (ret > 1)
			a->flags |= CKPT_CHECKPOINT_ROOTS;
		else
			a->flags &= ~CKPT_CHECKPOINT_ROOTS;
		ret = find_roots(pids, ret, young_ms, t, err);
		/* A process gone, or a root a child now, meanwhile: a new look. */
		if (ret == -EBUSY || ret == -ESRCH)
			continue;
		if (ret)
			return ret;
		*res = calloc(t->nr, sizeof(**res));
		if (!*res)
			return ckpt_err_set(err, ENOMEM, "out of memory");
		ret = checkpoint_once(dev, a, dfd, t, *res, err);
		close_images(t, *res);
		/*
		 * An engine older than CKPT_CHECKPOINT_DIGESTS: without them
		 * (the caller reads the images back instead), once.
		 */
		if (ret == -EINVAL && a->flags & CKPT_CHECKPOINT_DIGESTS &&
		    strstr(err->msg, "unknown or conflicting flags")) {
			a->flags &= ~CKPT_CHECKPOINT_DIGESTS;
			free(*res);
			*res = NULL;
			clear_tmp(dfd, t);
			ckpt_tree_free(t);
			try--;
			continue;
		}
		if (ret != -EBUSY && ret != -ESRCH && ret != -EAGAIN)
			break;
		/*
		 * The timeout bounds the whole checkpoint, not each try: a try
		 * that waited it out (a callback that held the checkpoint off,
		 * as an MPI rank outside MPI_Init..MPI_Finalize does, answers
		 * -EAGAIN at its end) is the last. Eight of them had made a
		 * --timeout 5 refusal take 40 s.
		 */
		if (ret == -EAGAIN && a->timeout_ms &&
		    ckpt_mono_ms() - t0 >= a->timeout_ms)
			break;
		free(*res);
		*res = NULL;
		/*
		 * Bytes moving (TCP, a pty) or a connection not accepted yet
		 * when it froze: a moment later, longer each time. A member
		 * exiting as it froze (-ESRCH: a shell loop's short-lived
		 * children, all of five tries on a loaded machine): a
		 * shorter moment, so the next look falls elsewhere in the loop.
		 */
		if (ret == -EAGAIN)
			usleep(100000 * (try + 1));
		else if (ret == -ESRCH)
			usleep(37000 * (try + 1));
		/* A member gone or a zombie by the freeze: the young left out. */
		if (ret == -ESRCH || (ret == -EBUSY && strstr(err->msg, "is a zombie")))
			young_ms = TREE_YOUNG_MS;
	}
	return ret;
}

/* Syncs the directory holding @path (so that its rename sticks). */
static int sync_parent(const char *path)
{
	char *copy = strdup(path);
	int fd, ret = -ENOMEM;

	if (copy) {
		fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = fd < 0 || fsync(fd) ? -errno : 0;
		if (fd >= 0)
			close(fd);
	}
	free(copy);
	return ret;
}

int ckpt_rename_noreplace(int olddfd, const char *old, int newdfd,
			  const char *new)
{
	if (!renameat2(olddfd, old, newdfd, new, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -1;
	/*
	 * A file system without the flag (9p, older NFS): the check and the
	 * rename are two steps, good enough where one writer makes the name.
	 */
	if (!faccessat(newdfd, new, F_OK, AT_SYMLINK_NOFOLLOW)) {
		errno = EEXIST;
		return -1;
	}
	return renameat(olddfd, old, newdfd, new);
}

static int one_root(void *arg, pid_t *roots, uint32_t max,
		    struct ckpt_err *err)
{
	(void)max;
	(void)err;
	roots[0] = *(const pid_t *)arg;
	return 1;
}

int ckpt_tree_checkpoint(int dev, struct ckpt_checkpoint_tree *a, pid_t root,
			 const char *dir, struct ckpt_tree *t,
			 struct ckpt_tree_member **res, struct ckpt_err *err)
{
	const struct ckpt_roots one = { .find = one_root, .arg = &root };

	return ckpt_trees_checkpoint(dev, a, &one, dir, t, res, err);
}

int ckpt_trees_checkpoint(int dev, struct ckpt_checkpoint_tree *a,
			  const struct ckpt_roots *roots,
			  const char *dir, struct ckpt_tree *t,
			  struct ckpt_tree_member **res, struct ckpt_err *err)
{
	char tmp[PATH_MAX];
	int dfd, ret;

	*res = NULL;
	memset(t, 0, sizeof(*t));
	if (!access(dir, F_OK))
		return ckpt_err_set(err, EEXIST, "%s exists: a tree's directory is never overwritten",
				    dir);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", dir) >= (int)sizeof(tmp))
		return ckpt_err_set(err, ENAMETOOLONG, "path too long: %s", dir);
	if (!mkdtemp(tmp))
		return ckpt_err_set(err, errno, "cannot create %s: %s", tmp,
				    strerror(errno));
	dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = ckpt_err_set(err, errno, "cannot open %s: %s", tmp,
				   strerror(errno));
		rmdir(tmp);
		return ret;
	}
	ret = checkpoint_tries(dev, a, roots, dfd, t, res, err);
	if (!ret && fsync(dfd))
		ret = ckpt_err_set(err, errno, "writing %s: %s", tmp, strerror(errno));
	/* Never over another directory: that one is an earlier tree's. */
	if (!ret && ckpt_rename_noreplace(AT_FDCWD, tmp, AT_FDCWD, dir))
		ret = ckpt_err_set(err, errno, "cannot rename %s to %s: %s", tmp,
				   dir, strerror(errno));
	if (ret) {
		clear_tmp(dfd, t);
		rmdir(tmp);
	} else
		sync_parent(dir);
	close(dfd);
	return ret;
}

/* One "member PID PARENT" line into entry @i. */
static int read_member(const char *line, struct ckpt_tree *t, uint32_t i)
{
	char parent[16], extra;
	long pid;
	unsigned long p;
	char *end;

	if (sscanf(line, "member %ld %15s %c", &pid, parent, &extra) != 2 ||
	    pid <= 0 || pid > INT_MAX)
		return -1;
	t->m[i].pid = pid;
	if (!strcmp(parent, "-")) {
		t->m[i].parent = CKPT_TREE_NO_PARENT;	/* a root */
		return 0;
	}
	p = strtoul(parent, &end, 10);
	if (*end || i == 0 || p >= i)	/* parents first */
		return -1;
	t->m[i].parent = p;
	return 0;
}

static int hexbyte(const char *s)
{
	unsigned int v;

	return sscanf(s, "%2x", &v) == 1 && s[0] != ' ' && s[1] != ' ' ? (int)v : -1;
}

static int read_header(FILE *f, struct ckpt_tree *t)
{
	char line[128], id[2 * CKPT_TREE_ID_LEN + 2], extra;
	unsigned int nr, i;
	int b;

	if (!fgets(line, sizeof(line), f) || strcmp(line, CKPT_TREE_MAGIC "\n"))
		return 1;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "id %33s %c", id, &extra) != 1 ||
	    strlen(id) != 2 * CKPT_TREE_ID_LEN)
		return 2;
	for (i = 0; i < CKPT_TREE_ID_LEN; i++) {
		b = hexbyte(id + 2 * i);
		if (b < 0)
			return 2;
		t->id[i] = b;
	}
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "members %u %c", &nr, &extra) != 1 || !nr ||
	    nr > CKPT_TREE_MAX_MEMBERS)
		return 3;
	t->nr = nr;
	return 0;
}

int ckpt_tree_read(const char *dir, struct ckpt_tree *t, struct ckpt_err *err)
{
	char path[PATH_MAX], line[128];
	unsigned int ln;
	uint32_t i;
	FILE *f;

	memset(t, 0, sizeof(*t));
	if (snprintf(path, sizeof(path), "%s/%s", dir, CKPT_TREE_MANIFEST) >=
	    (int)sizeof(path))
		return ckpt_err_set(err, ENAMETOOLONG, "path too long: %s", dir);
	f = fopen(path, "re");
	if (!f)
		return ckpt_err_set(err, errno, "cannot open %s: %s", path,
				    strerror(errno));
	ln = read_header(f, t);
	if (!ln) {
		t->m = calloc(t->nr, sizeof(*t->m));
		if (!t->m) {
			fclose(f);
			return ckpt_err_set(err, ENOMEM, "out of memory");
		}
	}
	for (i = 0; !ln && i < t->nr; i++)
		if (!fgets(line, sizeof(line), f) || read_member(line, t, i))
			ln = 4 + i;
	if (!ln && fgets(line, sizeof(line), f))
		ln = 4 + t->nr;
	fclose(f);
	if (!ln)
		return 0;
	ckpt_tree_free(t);
	return ckpt_err_set(err, EBADMSG, "%s: line %u is not what a manifest has there",
			    path, ln);
}

int ckpt_tree_check(const struct ckpt_tree *t, uint32_t i,
		    const struct ckpt_image *img, const char *path,
		    struct ckpt_err *err)
{
	const struct ckpt_tree_member_ent *m = &t->m[i];

	if (!img->has_tree)
		return ckpt_err_set(err, EINVAL, "%s: not the image of a tree's member (no TREE section)",
				    path);
	if (memcmp(img->tree.id, t->id, sizeof(t->id)))
		return ckpt_err_set(err, EINVAL, "%s: from another checkpoint than the manifest (tree id differs)",
				    path);
	if (img->tree.index != i || img->tree.nr_members != t->nr ||
	    img->tree.parent != m->parent || img->proc.pid != (uint32_t)m->pid)
		return ckpt_err_set(err, EINVAL, "%s: its place in the tree is not the manifest's (member %u of %u, parent %d, pid %u)",
				    path, img->tree.index, img->tree.nr_members,
				    (int)img->tree.parent, img->proc.pid);
	if (!!(img->tree.flags & CKPT_TREE_ROOT) !=
	    (i && m->parent == CKPT_TREE_NO_PARENT))
		return ckpt_err_set(err, EINVAL, "%s: member %u is %sa root besides member 0, which the manifest does not say",
				    path, i, img->tree.flags & CKPT_TREE_ROOT ? "" : "not ");
	if (m->parent != CKPT_TREE_NO_PARENT &&
	    img->proc.ppid != (uint32_t)t->m[m->parent].pid)
		return ckpt_err_set(err, EINVAL, "%s: parent pid %u is not member %u's",
				    path, img->proc.ppid, m->parent);
	return 0;
}
