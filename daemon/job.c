// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs on this node. A job is a cgroup, CKPTD_CGROUP/<id>, which only
 * root may move processes into or out of, so nothing the job starts leaves
 * it through fork, exec, setsid or a double fork; and a record,
 * CKPTD_STATE/jobs/<id>.json, from which a restarted ckptd finds its jobs
 * again. A job ends when its cgroup has no process left.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "ckptd.h"
#include "treedir.h"

static int cgroup_path_id(const char *id, const char *file, char *buf,
			  size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s%s", CKPTD_CGROUP, id,
			 file ? "/" : "", file ? file : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int cgroup_path(const struct job *j, const char *file, char *buf,
		       size_t len)
{
	return cgroup_path_id(j->id, file, buf, len);
}

struct job *job_find(struct ckptd *d, const char *id)
{
	struct job *j;

	for (j = d->jobs; id && j; j = j->next)
		if (!strcmp(j->id, id))
			return j;
	return NULL;
}

bool job_allowed(struct conn *c, const struct job *j)
{
	/* Another user's job is answered as one that does not exist. */
	if (conn_uid(c) && conn_uid(c) != j->uid) {
		conn_fail(c, "no job %s of yours", j->id);
		return false;
	}
	return true;
}

struct job *job_lookup(struct conn *c, const json_t *req)
{
	const char *id = ckptd_msg_str(req, "job");
	struct job *j;

	if (!id) {
		conn_fail(c, "the request names no \"job\"");
		return NULL;
	}
	j = job_find(conn_daemon(c), id);
	if (!j) {
		conn_fail(c, "no job %.16s%s", id, conn_uid(c) ? " of yours" : "");
		return NULL;
	}
	return job_allowed(c, j) ? j : NULL;
}

bool job_id_valid(const char *id)
{
	return id && strlen(id) == CKPTD_JOB_ID_LEN &&
	       strspn(id, "0123456789abcdef") == CKPTD_JOB_ID_LEN;
}

static bool valid_cmd(const json_t *cmd)
{
	size_t i;
	json_t *v;

	if (!json_is_array(cmd) || !json_array_size(cmd))
		return false;
	json_array_foreach(cmd, i, v)
		if (!json_is_string(v))
			return false;
	return true;
}

struct job *job_new(struct ckptd *d, const char *id, uid_t uid, gid_t gid,
		    const char *name, json_t *cmd, const char *cwd,
		    char *errbuf, size_t errlen)
{
	char path[PATH_MAX];
	uint8_t rnd[CKPTD_JOB_ID_LEN / 2];
	struct job *j;
	int i;

	j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	if (id)
		snprintf(j->id, sizeof(j->id), "%s", id);
	do {
		if (id)
			break;
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			snprintf(errbuf, errlen, "no random bytes for a job id");
			free(j);
			return NULL;
		}
		for (i = 0; i < (int)sizeof(rnd); i++)
			sprintf(j->id + 2 * i, "%02x", rnd[i]);
	} while (job_find(d, j->id));
	j->uid = uid;
	j->gid = gid;
	snprintf(j->name, sizeof(j->name), "%s", name ? name : "");
	j->cmd = json_incref(cmd);
	snprintf(j->cwd, sizeof(j->cwd), "%s", cwd ? cwd : "/");
	cgroup_path(j, NULL, path, sizeof(path));
	if (mkdir(path, 0755) && errno != EEXIST) {
		snprintf(errbuf, errlen, "cannot create the job's cgroup %s: %s",
			 path, strerror(errno));
		json_decref(j->cmd);
		free(j);
		return NULL;
	}
	j->next = d->jobs;
	d->jobs = j;
	return j;
}

/* The lock a checkpoint holds against joins (job_hold_joins()). */
static void joins_path(const struct job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s/jobs/%s.joins", CKPTD_STATE, j->id);
}

void job_drop(struct ckptd *d, struct job *j)
{
	char path[PATH_MAX];
	struct job **p;

	for (p = &d->jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			break;
		}
	snprintf(path, sizeof(path), "%s/jobs/%s.json", CKPTD_STATE, j->id);
	unlink(path);
	job_mark_stopped(j, false);
	joins_path(j, path, sizeof(path));
	unlink(path);
	if (!cgroup_path(j, NULL, path, sizeof(path)))
		rmdir(path);
	json_decref(j->cmd);
	json_decref(j->nodes);
	json_decref(j->addrmap);
	free(j);
}

int job_save(struct ckptd *d, const struct job *j)
{
	char name[32], *text;
	json_t *rec;
	int dfd, ret;

	rec = json_pack("{s:s, s:I, s:I, s:s, s:O, s:s, s:I, s:[I, I], s:s, s:O?, s:I, s:I, s:b, s:O?, s:s, s:s}",
			"id", j->id, "uid", (json_int_t)j->uid,
			"gid", (json_int_t)j->gid, "name", j->name,
			"cmd", j->cmd, "cwd", j->cwd, "seq", (json_int_t)j->seq,
			"helpers", (json_int_t)j->helpers[0],
			(json_int_t)j->helpers[1], "coordinator", j->coordinator,
			"nodes", j->nodes, "interval", (json_int_t)j->interval,
			"keep", (json_int_t)j->keep, "outside_close", j->outside_close,
			"addrmap", j->addrmap, "dir", j->dir, "latest", j->latest);
	text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
	json_decref(rec);
	if (!text)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s.json", j->id);
	dfd = open(CKPTD_STATE "/jobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : file_write_atomic(dfd, name, text,
						     strlen(text), 0600);
	if (ret)
		ckptd_log(d, 0, "job %s: cannot save its record: %s", j->id,
			  strerror(-ret));
	if (dfd >= 0)
		close(dfd);
	free(text);
	return ret;
}

/* A record of CKPTD_STATE/jobs, written by an earlier ckptd. */
static void job_load(struct ckptd *d, int dfd, const char *name)
{
	json_int_t uid, gid, seq, h0, h1, interval = 0, keep = 0;
	const char *id, *jname, *cwd, *coord = "", *dir = "", *latest = "";
	int outside_close = 0;
	char path[PATH_MAX], err[256];
	json_t *rec = NULL, *cmd, *nodes = NULL, *addrmap = NULL;
	struct job *j;
	size_t len;
	char *text;

	if (file_read_max(dfd, name, &text, &len, CKPTD_MSG_MAX))
		return;
	if (!ckptd_msg_decode(text, len, &rec, NULL) &&
	    json_is_null(json_object_get(rec, "nodes")))
		json_object_del(rec, "nodes");
	if (rec && json_is_null(json_object_get(rec, "addrmap")))
		json_object_del(rec, "addrmap");
	if (!rec ||
	    json_unpack(rec, "{s:s, s:I, s:I, s:s, s:o, s:s, s:I, s:[I, I], s?:s, s?:o, s?:I, s?:I, s?:b, s?:o, s?:s, s?:s}",
			"id", &id, "uid", &uid, "gid", &gid, "name", &jname,
			"cmd", &cmd, "cwd", &cwd, "seq", &seq, "helpers", &h0,
			&h1, "coordinator", &coord, "nodes", &nodes,
			"interval", &interval, "keep", &keep,
			"outside_close", &outside_close, "addrmap", &addrmap,
			"dir", &dir, "latest", &latest) ||
	    strlen(dir) >= CKPTD_DIR_MAX || strlen(latest) >= PATH_MAX ||
	    (addrmap && !json_is_array(addrmap)) ||
	    interval < 0 || interval > CKPTD_MAX_INTERVAL || keep < 0 ||
	    keep > CKPTD_MAX_KEEP ||
	    !job_id_valid(id) || !valid_cmd(cmd) || strlen(coord) > HOST_NAME_MAX ||
	    (nodes && !json_is_array(nodes)) ||
	    uid < 0 || gid < 0 || seq < 0 || seq > UINT32_MAX) {
		ckptd_log(d, 0, "%s/jobs/%s: not a job record; left alone",
			  CKPTD_STATE, name);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", CKPTD_CGROUP, id);
	if (access(path, F_OK)) {
		unlinkat(dfd, name, 0);
		goto out;
	}
	j = job_new(d, id, uid, gid, jname, cmd, cwd, err, sizeof(err));
	if (!j)
		goto out;
	j->seq = seq;
	j->helpers[0] = h0;
	j->helpers[1] = h1;
	snprintf(j->coordinator, sizeof(j->coordinator), "%s", coord);
	j->nodes = json_incref(nodes);
	j->interval = interval;
	j->keep = keep;
	j->outside_close = outside_close;
	j->addrmap = json_incref(addrmap);
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	snprintf(j->latest, sizeof(j->latest), "%s", latest);
	j->last = time(NULL);
	snapshot_found_again(d, j);
	ckptd_log(d, 1, "job %s (uid %u) found again", j->id,
		  (unsigned int)j->uid);
out:
	json_decref(rec);
	free(text);
}

int job_load_all(struct ckptd *d)
{
	struct dirent *e;
	DIR *dir;

	dir = opendir(CKPTD_STATE "/jobs");
	if (!dir)
		return -errno;
	while ((e = readdir(dir)))
		if (strlen(e->d_name) == CKPTD_JOB_ID_LEN + 5 &&
		    !strcmp(e->d_name + CKPTD_JOB_ID_LEN, ".json"))
			job_load(d, dirfd(dir), e->d_name);
	closedir(dir);
	job_resume_cut(d);
	job_reap(d);
	return 0;
}

int job_add_pid(struct ckptd *d, const struct job *j, pid_t pid)
{
	char path[PATH_MAX], buf[32];
	int fd, ret = 0, n;

	(void)d;
	if (cgroup_path(j, "cgroup.procs", path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	/*
	 * Gone since job_new() found it: ckptd dropped an earlier record of
	 * this id (a worker's records are ckptd's at its fork) and its empty
	 * cgroup. Made again, once: the tick's sweep leaves a new one be
	 * (job_sweep_cgroups()).
	 */
	if (fd < 0 && errno == ENOENT) {
		char dir[PATH_MAX];

		cgroup_path(j, NULL, dir, sizeof(dir));
		if (!mkdir(dir, 0755) || errno == EEXIST)
			fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* The pids of the job's cgroup, helpers left out: count, or -errno. */
static int job_procs(const struct job *j, pid_t *pids, int max)
{
	char path[PATH_MAX];
	int n = 0, pid;
	FILE *f;

	if (cgroup_path(j, "cgroup.procs", path, sizeof(path)))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &pid) == 1) {
		if (pid == j->helpers[0] || pid == j->helpers[1])
			continue;
		if (n == max) {
			fclose(f);
			return -E2BIG;
		}
		pids[n++] = pid;
	}
	fclose(f);
	return n;
}

struct job_root {
	pid_t pid;
	unsigned long long start;
};

/*
 * Oldest first: on the job's first node the process ckpt-run started,
 * whose standard files are the client's at a restart; a restarted tree's
 * init makes member 0 before the other roots.
 */
static int root_cmp(const void *a, const void *b)
{
	const struct job_root *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int job_roots(const struct job *j, pid_t *roots, int max)
{
	struct job_root *found;
	unsigned long long start;
	pid_t *pids;
	int n, i, k, nr = 0;
	bool inside;
	long pp;
	char state;

	pids = calloc(CKPT_TREE_MAX_MEMBERS, sizeof(*pids));
	found = calloc(max > 0 ? max : 1, sizeof(*found));
	if (!pids || !found) {
		free(pids);
		free(found);
		return -ENOMEM;
	}
	n = job_procs(j, pids, CKPT_TREE_MAX_MEMBERS);
	for (i = 0; i < n; i++) {
		if (ckpt_proc_stat(pids[i], &state, &pp, &start))
			continue;	/* gone meanwhile */
		for (inside = false, k = 0; k < n && !inside; k++)
			inside = pids[k] == pp;
		if (inside)
			continue;
		if (nr == max) {
			nr = -E2BIG;
			break;
		}
		found[nr].pid = pids[i];
		found[nr++].start = start;
	}
	if (nr > 0) {
		qsort(found, nr, sizeof(*found), root_cmp);
		for (i = 0; i < nr; i++)
			roots[i] = found[i].pid;
	}
	free(found);
	free(pids);
	return n < 0 ? n : nr;
}

static int job_nprocs(const struct job *j)
{
	pid_t *pids = calloc(CKPT_TREE_MAX_MEMBERS, sizeof(*pids));
	int n = pids ? job_procs(j, pids, CKPT_TREE_MAX_MEMBERS) : -ENOMEM;

	free(pids);
	return n;
}

bool job_idle(const struct ckptd *d, const struct job *j)
{
	pid_t *pids = calloc(CKPT_TREE_MAX_MEMBERS, sizeof(*pids));
	int n = pids ? job_procs(j, pids, CKPT_TREE_MAX_MEMBERS) : -ENOMEM, i;
	bool idle = n >= 0;

	for (i = 0; idle && i < n; i++)
		idle = worker_pid_of_job(d, j, pids[i]);
	free(pids);
	return idle;
}

bool job_running(const struct job *j)
{
	return job_id_running(j->id);
}

bool job_id_running(const char *id)
{
	char path[PATH_MAX], line[64];
	bool populated = false;
	FILE *f;

	if (!job_id_valid(id) ||
	    cgroup_path_id(id, "cgroup.events", path, sizeof(path)))
		return false;
	f = fopen(path, "re");
	/*
	 * No cgroup: ended. Not readable now (out of descriptors or memory):
	 * running, so that job_reap() drops no live job's record.
	 */
	if (!f)
		return errno != ENOENT;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "populated 1\n"))
			populated = true;
	fclose(f);
	return populated;
}

void job_signal(const struct job *j, int sig)
{
	pid_t *pids = calloc(CKPT_TREE_MAX_MEMBERS, sizeof(*pids));
	int n = pids ? job_procs(j, pids, CKPT_TREE_MAX_MEMBERS) : -ENOMEM;

	while (n-- > 0)
		kill(pids[n], sig);
	free(pids);
}

static void stopped_path(const struct job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s/jobs/%s.stopped", CKPTD_STATE, j->id);
}

void job_mark_stopped(const struct job *j, bool on)
{
	char path[PATH_MAX];
	int fd;

	stopped_path(j, path, sizeof(path));
	if (!on) {
		unlink(path);
		return;
	}
	/* Its holder: the worker doing the checkpoint. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dprintf(fd, "%d\n", (int)getpid());
		close(fd);
	}
}

/*
 * Joins during a checkpoint (ckptd.md): the worker taking the job's share
 * here holds the job's .joins file locked, exclusively, from its first
 * look at the job's processes until their fate (continue, stop, kill) is
 * applied; a join takes it shared, without waiting, around its write to
 * cgroup.procs, and is held back while it cannot. So no process enters
 * the job between the look and the freeze, where it would be in no image
 * and outlive a --kill. A worker that dies lets go with its descriptor.
 */
static int joins_fd = -1;	/* a worker's hold: one checkpoint at a time */
static char joins_job[CKPTD_JOB_ID_LEN + 1];	/* of this job */

void job_hold_joins(const struct job *j)
{
	char path[PATH_MAX];

	if (joins_fd >= 0 && !strcmp(joins_job, j->id))
		return;
	/* Still held for another job (its let-go missed): let go now. */
	if (joins_fd >= 0)
		close(joins_fd);
	joins_path(j, path, sizeof(path));
	joins_fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	/* No lock, no hold: the engine's own checks stand, as before. */
	if (joins_fd >= 0 && flock(joins_fd, LOCK_EX)) {
		close(joins_fd);
		joins_fd = -1;
	}
	snprintf(joins_job, sizeof(joins_job), "%s", j->id);
}

void job_let_joins(const struct job *j, bool killed)
{
	int i;

	if (joins_fd < 0)
		return;
	/* Killed: gone before a join held back looks (a minute at most). */
	for (i = 0; killed && i < 6000 && job_running(j); i++)
		usleep(10000);
	close(joins_fd);
	joins_fd = -1;
}

int job_joins_shared(const struct job *j, unsigned int wait_s)
{
	char path[PATH_MAX];
	unsigned int i;
	int fd;

	joins_path(j, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (i = 0; flock(fd, LOCK_SH | LOCK_NB); i++) {
		if (errno != EWOULDBLOCK || i >= wait_s * 10) {
			i = errno == EWOULDBLOCK ? EAGAIN : errno;
			close(fd);
			return -(int)i;
		}
		usleep(100000);
	}
	return fd;
}

/* 0: @pid is in @j now; -EAGAIN: a checkpoint holds joins back; -errno. */
static int join_try(struct ckptd *d, const struct job *j, pid_t pid)
{
	int fd = job_joins_shared(j, 0), ret;

	if (fd < 0)
		return fd;
	ret = job_add_pid(d, j, pid);
	close(fd);
	return ret;
}

void job_resume_cut(struct ckptd *d)
{
	char path[PATH_MAX];
	struct job *j;
	int holder;
	FILE *f;

	for (j = d->jobs; j; j = j->next) {
		stopped_path(j, path, sizeof(path));
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &holder) != 1)
			holder = 0;
		fclose(f);
		/* Still at work (a live worker of ours holds it): not cut. */
		if (holder > 0 && !kill(holder, 0))
			continue;
		ckptd_log(d, 0, "job %s: a checkpoint that left it stopped was cut short; it continues",
			  j->id);
		job_signal(j, SIGCONT);
		unlink(path);
	}
}

/* What a node joining the job, or restarting its share, is told of it. */
json_t *job_info(const struct job *j)
{
	return json_pack("{s:s, s:I, s:I, s:s, s:O, s:s, s:I}", "job", j->id,
			 "uid", (json_int_t)j->uid, "gid", (json_int_t)j->gid,
			 "name", j->name, "cmd", j->cmd, "cwd", j->cwd,
			 "seq", (json_int_t)j->seq);
}

/* A cgroup younger than this may be a worker's, not joined yet. */
#define CGROUP_SWEEP_AGE_S	10

void job_sweep_cgroups(struct ckptd *d)
{
	time_t now = time(NULL);
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *dir;

	dir = opendir(CKPTD_CGROUP);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_type != DT_DIR || !job_id_valid(e->d_name) ||
		    job_find(d, e->d_name) ||
		    cgroup_path_id(e->d_name, NULL, path, sizeof(path)))
			continue;
		if (stat(path, &st) || now - st.st_ctime < CGROUP_SWEEP_AGE_S)
			continue;
		if (!rmdir(path))
			ckptd_log(d, 1, "job %s: its cgroup here, of no record and empty, removed",
				  e->d_name);
	}
	closedir(dir);
}

void job_reap(struct ckptd *d)
{
	struct job *j, *next;

	for (j = d->jobs; j; j = next) {
		next = j->next;
		if (j->busy || worker_of_job(d, j) || job_running(j))
			continue;
		ckptd_log(d, 1, "job %s ended", j->id);
		job_drop(d, j);
	}
}

static unsigned int jobs_of(const struct ckptd *d, uid_t uid)
{
	const struct job *j;
	unsigned int n = 0;

	for (j = d->jobs; j; j = j->next)
		n += j->uid == uid;
	return n;
}

/*
 * The caller's field of /proc/@pid/status @key ("PPid:", "Uid:"): its
 * first number, or -1.
 */
static long proc_status(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * run {pid, cmd, cwd, name?, interval?, keep?, outside?, dir?}: a new job
 * of the caller's, whose first process is @pid, the caller's own child
 * (ckpt-run's, waiting to exec); DIR, a directory of the caller's, holds
 * its snapshots (snapdir.c). With "ns": true, no pid: ckptd starts cmd
 * itself, in namespaces of the job's own, with "env" and the descriptors
 * 0, 1 and 2 sent (start.c), and answers once it ends.
 */
void op_run(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	const char *name = NULL, *cwd, *outside = "refuse", *dir = NULL;
	bool ns = json_is_true(json_object_get(req, "ns")), tty = false;
	struct ckpt_err derr;
	char err[512];
	json_int_t pid = 0, interval = 0, keep = 0;
	struct job *j;
	json_t *cmd;
	int ret;

	/* Its own members first: a refused request makes no job. */
	if (ns && ckptd_run_ns_check(req, &tty, &derr)) {
		conn_fail(c, "%s", derr.msg);
		return;
	}
	if (json_unpack((json_t *)req, "{s?:I, s:o, s:s, s?:s, s?:I, s?:I, s?:s, s?:s}", "pid", &pid,
			"cmd", &cmd, "cwd", &cwd, "name", &name,
			"interval", &interval, "keep", &keep, "outside", &outside,
			"dir", &dir) ||
	    (strcmp(outside, "refuse") && strcmp(outside, "close")) ||
	    interval < 0 || interval > CKPTD_MAX_INTERVAL || keep < 0 ||
	    keep > CKPTD_MAX_KEEP ||
	    (!ns && (pid <= 0 || pid > INT32_MAX)) || !valid_cmd(cmd) ||
	    json_dumpb(cmd, NULL, 0, 0) > CKPTD_MSG_MAX / 2 ||
	    (name && strlen(name) >= sizeof(j->name))) {
		conn_fail(c, "run: needs \"pid\" (a process id), \"cmd\" (strings), \"cwd\"; at most a \"name\" of %zu bytes, an \"interval\" of %d s, a \"keep\" of %d, \"outside\" refuse or close",
			  sizeof(j->name) - 1, CKPTD_MAX_INTERVAL, CKPTD_MAX_KEEP);
		return;
	}
	if (dir && snapdir_root_check(dir, conn_uid(c), &derr)) {
		conn_fail(c, "run: %s", derr.msg);
		return;
	}
	if (!ns && (proc_status(pid, "PPid:") != conn_pid(c) ||
		    proc_status(pid, "Uid:") != (long)conn_uid(c))) {
		conn_fail(c, "run: process %d is not a child of yours", (int)pid);
		return;
	}
	if (conn_uid(c) && jobs_of(d, conn_uid(c)) >= CKPTD_MAX_JOBS_UID) {
		conn_fail(c, "run: you have %d jobs on this node, the most there may be",
			  CKPTD_MAX_JOBS_UID);
		return;
	}
	j = job_new(d, NULL, conn_uid(c),
		    proc_status(ns ? conn_pid(c) : pid, "Gid:"), name, cmd,
		    cwd, err, sizeof(err));
	if (!j) {
		conn_fail(c, "run: %s", err);
		return;
	}
	j->interval = interval;
	j->keep = keep;
	j->outside_close = !strcmp(outside, "close");
	snprintf(j->dir, sizeof(j->dir), "%s", dir ?: "");
	j->last = time(NULL);
	if (ns) {
		int fds[3] = { -1, -1, -1 };

		if (conn_take_fds(c, fds, 3) != 3) {
			ckptd_close_fds(fds, 3);
			conn_fail(c, "run: \"ns\": send the standard descriptors (0, 1, 2) with the request");
			job_drop(d, j);
			return;
		}
		if (start_job(c, j, req, cwd, tty, fds, NULL)) {
			job_drop(d, j);
			return;
		}
		job_save(d, j);
		ckptd_log(d, 1, "job %s started by uid %u, in namespaces of its own",
			  j->id, (unsigned int)j->uid);
		return;
	}
	ret = job_add_pid(d, j, pid);
	if (ret) {
		conn_fail(c, "run: cannot put process %d into job %s: %s",
			  (int)pid, j->id, strerror(-ret));
		job_drop(d, j);
		return;
	}
	job_save(d, j);
	ckptd_log(d, 1, "job %s started by uid %u: process %d", j->id,
		  (unsigned int)j->uid, (int)pid);
	conn_reply(c, json_pack("{s:s}", "job", j->id));
}

static json_t *job_describe(const struct ckptd *d, const struct job *j)
{
	int n = job_nprocs(j);
	json_t *o;

	o = json_pack("{s:s, s:s, s:I, s:s, s:O, s:s, s:i, s:I}",
		      "job", j->id, "name", j->name, "uid", (json_int_t)j->uid,
		      "state", j->busy ? "busy" : "running", "cmd", j->cmd,
		      "cwd", j->cwd, "processes", n < 0 ? 0 : n,
		      "seq", (json_int_t)j->seq);
	if (o && j->interval)
		json_object_set_new(o, "interval", json_integer(j->interval));
	if (o && j->keep)
		json_object_set_new(o, "keep", json_integer(j->keep));
	if (o && j->outside_close)
		json_object_set_new(o, "outside", json_string("close"));
	if (o && j->coordinator[0])
		json_object_set_new(o, "coordinator", json_string(j->coordinator));
	if (o && j->nodes)
		json_object_set(o, "nodes", j->nodes);
	if (o && j->dir[0])
		json_object_set_new(o, "dir", json_string(j->dir));
	if (o && j->latest[0])
		json_object_set_new(o, "latest", json_string(j->latest));
	else if (o && j->seq)
		json_object_set_new(o, "latest",
				    json_sprintf("%s/%s/%u", d->cfg.snapshot_root,
						 j->id, j->seq));
	return o;
}

void op_ls(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	json_t *list = json_array();
	struct job *j;

	(void)req;
	job_reap(d);
	for (j = d->jobs; j; j = j->next)
		if (!conn_uid(c) || conn_uid(c) == j->uid) {
			snapshot_catch_up(d, j);
			json_array_append_new(list, job_describe(d, j));
		}
	conn_reply(c, json_pack("{s:o}", "jobs", list));
}

void op_status(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	struct job *j;

	job_reap(d);
	j = job_lookup(c, req);
	if (j)
		snapshot_catch_up(d, j);
	if (j)
		conn_reply(c, job_describe(d, j));
}

/* A joiner waiting for the coordinator's word (worker.c's argument). */
struct join {
	pid_t pid;		/* the caller, to move into the job */
	uid_t uid;
	char job[CKPTD_JOB_ID_LEN + 1];
	char coordinator[HOST_NAME_MAX + 1];
	json_t *ns;		/* an "ns" join's request, or NULL */
	int fds[3];		/* and its descriptors */
};

static void join_free(struct join *jn)
{
	if (!jn)
		return;
	ckptd_close_fds(jn->fds, 3);
	json_decref(jn->ns);
	free(jn);
}

/* How often the joins held back are tried again. */
static const struct timeval joins_retry = { 0, 100000 };

static void join_answer(struct conn *c, const char *id, pid_t pid, int ret)
{
	if (ret == -EAGAIN)
		conn_fail(c, "join: job %s: a checkpoint held joins back for more than %d s",
			  id, CKPTD_JOIN_HOLD_MAX_S);
	else if (ret == -ESRCH)
		conn_fail(c, "join: job %s ended with the checkpoint this join waited for (killed, or its processes here gone)",
			  id);
	else if (ret)
		conn_fail(c, "join: cannot put process %d into job %s: %s",
			  (int)pid, id, strerror(-ret));
	else
		conn_reply(c, json_pack("{s:s}", "job", id));
}

/* The joins held back, tried again every 100 ms while any is left. */
static void joins_again(evutil_socket_t fd, short what, void *arg)
{
	char job[CKPTD_JOB_ID_LEN + 1];
	struct ckptd *d = arg;
	struct conn *c, *next;
	uint64_t since;
	bool more = false;
	const char *id;
	struct job *j;
	pid_t pid;
	int ret;

	(void)fd;
	(void)what;
	for (c = d->conns; c; c = next) {
		next = conn_next(c);
		id = conn_held_join(c, &pid, &since);
		if (!id)
			continue;
		snprintf(job, sizeof(job), "%s", id);
		j = job_find(d, job);
		/* It ran when the join came: not now is an end, not a start. */
		ret = !j || !job_running(j) ? -ESRCH : join_try(d, j, pid);
		if (ret == -EAGAIN &&
		    ckptd_now_ns() - since < CKPTD_JOIN_HOLD_MAX_S * 1000000000ULL) {
			more = true;
			continue;
		}
		ckptd_log(d, 1, "job %s: the join of pid %d, held back by a checkpoint, %s",
			  job, (int)pid, ret ? "refused" : "done");
		conn_release_join(c);
		join_answer(c, job, pid, ret);
	}
	if (more)
		evtimer_add(d->joins_ev, &joins_retry);
}

/* Moves @jn's caller into @j, or holds it back while a checkpoint looks. */
static void join_move(struct conn *c, struct job *j, pid_t pid)
{
	struct ckptd *d = conn_daemon(c);
	uint64_t since;
	pid_t held;
	int ret;

	/* ckpt-join asks once; a second ask would leave the first unanswered. */
	if (conn_held_join(c, &held, &since)) {
		conn_fail(c, "join: one join at a time on a connection");
		return;
	}
	ret = join_try(d, j, pid);
	if (ret != -EAGAIN) {
		join_answer(c, j->id, pid, ret);
		return;
	}
	if (!d->joins_ev)
		d->joins_ev = evtimer_new(d->base, joins_again, d);
	if (!d->joins_ev) {
		conn_fail(c, "join: job %s: a checkpoint is under way, try again", j->id);
		return;
	}
	ckptd_log(d, 1, "job %s: the join of pid %d waits for the checkpoint under way",
		  j->id, (int)pid);
	conn_hold_join(c, j->id, pid);
	if (!evtimer_pending(d->joins_ev, NULL))
		evtimer_add(d->joins_ev, &joins_retry);
}

static void join_worker(struct ckptd *d, struct job *unused, int out, void *arg)
{
	struct join *jn = arg;
	struct ckpt_err err;
	json_t *reply = NULL;
	struct peer *p;

	(void)unused;
	p = peer_connect(d, jn->coordinator, &err);
	if (p && !peer_call(p, json_pack("{s:s, s:s, s:I, s:s}", "op", "peer-join",
					 "job", jn->job, "uid", (json_int_t)jn->uid,
					 "node", d->node), &reply, 30, &err))
		worker_send(out, json_pack("{s:b, s:O}", "ok", 1, "job",
					   json_object_get(reply, "job")));
	else
		worker_send(out, json_pack("{s:b, s:s}", "ok", 0, "error", err.msg));
	json_decref(reply);
	peer_close(p);
}

/* Whether @fd is a namespace ckptd's user namespace owns: root's. */
static bool ns_roots(int fd)
{
	int u = ioctl(fd, NS_GET_USERNS);
	bool yes;

	if (u < 0)
		return false;
	yes = ckptd_fd_is(u, "/proc/self/ns/user");
	close(u);
	return yes;
}

/* Whether process @pid is in @j's cgroup (its /proc/PID/cgroup). */
static bool in_job(const struct job *j, pid_t pid)
{
	char path[64], line[256], want[128];
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(want, sizeof(want), "0::%s/%s\n",
		 CKPTD_CGROUP + strlen("/sys/fs/cgroup"), j->id);
	f = fopen(path, "re");
	while (f && !yes && fgets(line, sizeof(line), f))
		yes = !strcmp(line, want);
	if (f)
		fclose(f);
	return yes;
}

/*
 * /proc/@pid/ns/@kinds[0..n-1] into @fds, if @pid is @j's (its cgroup)
 * and was alive throughout (its pidfd): 0, or -1 with none left open.
 */
static int ns_open(const struct job *j, pid_t pid, const char *const *kinds,
		   int n, int *fds)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), k, ok = pfd >= 0;
	char path[64];

	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kinds[k]);
		fds[k] = ok ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		ok = ok && fds[k] >= 0;
	}
	ok = ok && in_job(j, pid) && !syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0);
	if (pfd >= 0)
		close(pfd);
	for (k = 0; !ok && k < n; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	return ok ? 0 : -1;
}

/*
 * The namespaces of @j's processes here, for a join to enter (start.c),
 * if ckptd made them: the pid and mount namespaces of its init here (a
 * helper, root's, in the job's cgroup), and the IPC namespace of one of
 * its processes in both; all owned by root's user namespace, the pid one
 * not ckptd's. Opened, then checked, the processes alive throughout
 * (their pidfds), so that what they do afterwards (a pid reused, a
 * namespace of a sandbox's) changes nothing of what the join enters.
 * 1 with @at's descriptors, or 0.
 */
static int job_enter_at(const struct job *j, struct start_at *at)
{
	static const char *const init_kinds[2] = { "pid", "mnt" };
	static const char *const kinds[3] = { "pid", "mnt", "ipc" };
	int n, i, own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC), m[3];
	pid_t pids[64];

	if (own < 0 || j->helpers[1] <= 0 ||
	    ns_open(j, j->helpers[1], init_kinds, 2, m)) {
		if (own >= 0)
			close(own);
		return 0;
	}
	at->fds[0] = m[0];
	at->fds[2] = m[1];
	if (ckptd_fds_same(at->fds[0], own) || !ns_roots(at->fds[0]) ||
	    !ns_roots(at->fds[2]))
		n = 0;
	else
		n = job_procs(j, pids, 64);
	close(own);
	if (n == -E2BIG)
		n = 64;
	for (i = 0; i < n; i++) {
		if (ns_open(j, pids[i], kinds, 3, m))
			continue;
		if (ckptd_fds_same(m[0], at->fds[0]) && ckptd_fds_same(m[1], at->fds[2]) &&
		    ns_roots(m[2])) {
			at->fds[1] = m[2];
			close(m[0]);
			close(m[1]);
			return 1;
		}
		close(m[0]);
		close(m[1]);
		close(m[2]);
	}
	start_at_close(at);
	return 0;
}

/*
 * The caller into @j. With "ns" (ckpt-join --ns: @jn's request and
 * descriptors), ckptd starts its command itself, as for ckpt-run --ns
 * (start.c), and the caller hears "started": in namespaces of the job's
 * own on this node if it has no process here yet, else in those of its
 * processes here, which its engine takes together (one pid namespace a
 * node). While ckptd is at work on the job here, the caller is told to
 * try again. If its processes here are in this node's namespaces (joined
 * so), then, as without "ns", the caller is moved into the job and
 * answered plainly, and carries on in this node's namespaces (ckptd.md,
 * "Jobs in namespaces of their own").
 */
static void join_enter(struct conn *c, struct job *j, struct join *jn)
{
	const char *cwd = json_string_value(json_object_get(jn->ns, "cwd"));
	struct start_at at = { .fds = { -1, -1, -1 } };
	pid_t one;
	int n = jn->ns ? job_procs(j, &one, 1) : -1;

	/* Another start here first: its namespaces are not there yet. */
	if (jn->ns && j->busy) {
		conn_send(c, json_pack("{s:b, s:s, s:b}", "ok", 0, "error",
				       "ckptd is at work on the job here: try again",
				       "again", 1));
		conn_done(c);
		ckptd_close_fds(jn->fds, 3);
		return;
	}
	if (jn->ns && (!n || n == -ENOENT)) {
		start_job(c, j, jn->ns, cwd, false, jn->fds, NULL);
		return;
	}
	if (jn->ns && job_enter_at(j, &at)) {
		start_job(c, j, jn->ns, cwd, false, jn->fds, &at);
		start_at_close(&at);
		return;
	}
	ckptd_close_fds(jn->fds, 3);
	join_move(c, j, jn->pid);
}

/* In ckptd: the coordinator said yes (a local job now) or no. */
static void join_report(struct worker *w, json_t *msg)
{
	struct ckptd *d = worker_daemon(w);
	struct join *jn = worker_arg(w);
	struct conn *c = worker_conn(w);
	json_t *info = msg ? json_object_get(msg, "job") : NULL;
	json_int_t gid = 0;
	const char *name = "", *cwd = "/";
	char err[512];
	struct job *j;

	/* The descriptors are this hook's from now on: closed or handed on. */
	worker_set_fds(w, (const int[3]){ -1, -1, -1 });
	if (!msg || !c) {
		join_free(jn);
		worker_set_arg(w, NULL);
		return;
	}
	/*
	 * The answer is ckptd's from here, or a start's worker's: this one
	 * lets go of the client, which is served still (take_report() said
	 * it was done).
	 */
	if (conn_worker(c) == w)
		conn_set_worker(c, NULL);
	worker_detach_conn(w);
	conn_busy(c);
	if (!json_is_true(json_object_get(msg, "ok")) ||
	    json_unpack(info, "{s:I, s:s, s:s}", "gid", &gid, "name", &name,
			"cwd", &cwd) || !valid_cmd(json_object_get(info, "cmd"))) {
		ckptd_close_fds(jn->fds, 3);
		conn_fail(c, "join: %s", ckptd_msg_str(msg, "error") ?: "a bad answer from the coordinator");
		return;
	}
	j = job_find(d, jn->job);
	if (!j) {
		j = job_new(d, jn->job, jn->uid, gid, name,
			    json_object_get(info, "cmd"), cwd, err, sizeof(err));
		if (!j) {
			ckptd_close_fds(jn->fds, 3);
			conn_fail(c, "join: %s", err);
			return;
		}
		snprintf(j->coordinator, sizeof(j->coordinator), "%s", jn->coordinator);
		job_save(d, j);
		ckptd_log(d, 1, "job %s of node %s: joined here by uid %u", j->id,
			  j->coordinator, (unsigned int)j->uid);
	}
	join_enter(c, j, jn);
}

/*
 * join {job, coordinator?}: the caller (ckpt-join, about to exec a rank
 * ssh started) into job @job: a job of this node's, or one the node
 * @coordinator keeps, which says whether it exists with the caller's uid.
 * With "ns": true, "cmd", "env" and "cwd" and three descriptors sent
 * (ckpt-join --ns), ckptd may start cmd instead (join_enter()).
 */
void op_join(struct conn *c, const json_t *req)
{
	struct ckptd *d = conn_daemon(c);
	const char *id = ckptd_msg_str(req, "job");
	const char *coord = ckptd_msg_str(req, "coordinator");
	bool ns = json_is_true(json_object_get(req, "ns")), tty;
	struct job *j = job_find(d, id);
	struct ckpt_err err;
	struct worker *w;
	struct join *jn;
	int n;

	if (!job_id_valid(id) || (coord && (!*coord || strlen(coord) > HOST_NAME_MAX))) {
		conn_fail(c, "join: needs \"job\" (a job id) and at most a \"coordinator\" (a node name)");
		return;
	}
	if (ns && ckptd_run_ns_check(req, &tty, &err)) {
		conn_fail(c, "%s", err.msg);
		return;
	}
	if (ns && tty) {
		conn_fail(c, "join: \"ns\": no \"tty\" (the command's streams are its link's)");
		return;
	}
	if (j && !job_allowed(c, j))
		return;
	if (!j && (!coord || !strcmp(coord, d->node))) {
		conn_fail(c, "join: no job %s%s", id, conn_uid(c) ? " of yours" : "");
		return;
	}
	jn = calloc(1, sizeof(*jn));
	if (!jn) {
		conn_fail(c, "out of memory");
		return;
	}
	jn->fds[0] = jn->fds[1] = jn->fds[2] = -1;
	n = ns ? conn_take_fds(c, jn->fds, 3) : 3;
	if (n != 3) {
		conn_fail(c, "join: \"ns\": send three descriptors (the command's 0, 1 and 2) with the request");
		join_free(jn);
		return;
	}
	jn->ns = ns ? json_incref((json_t *)req) : NULL;
	jn->pid = conn_pid(c);
	jn->uid = conn_uid(c);
	if (j) {
		join_enter(c, j, jn);
		join_free(jn);
		return;
	}
	snprintf(jn->job, sizeof(jn->job), "%s", id);
	snprintf(jn->coordinator, sizeof(jn->coordinator), "%s", coord);
	worker_set_quiet(true);
	w = worker_start(d, c, NULL, join_worker, join_report, jn);
	if (w) {
		worker_set_fds(w, jn->fds);
	} else {
		conn_fail(c, "join: cannot start a worker: %s", strerror(errno));
		join_free(jn);
	}
	worker_set_quiet(false);
}
