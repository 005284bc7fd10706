// SPDX-License-Identifier: GPL-2.0
/*
 * CKPT_IOC_CHECKPOINT_TREE: a root, two children and a grandchild, all
 * spinning with the stdio they inherited, captured as one set: four
 * images with TREE sections that agree (one id, indexes, parents), the
 * members continuing, stopped or killed together. Every refusal (a child
 * left out, a member before its parent or no descendant, a traced member,
 * one in another pid namespace, one with a pipe to a process outside the
 * tree, anonymous memory shared by fork, the caller in
 * the tree, bad arguments) names what it refuses and leaves every member
 * running, none frozen: each still makes progress afterwards; so does a
 * member killed while the tree is checkpointed. A child no member list
 * names that ends during the checkpoint is waited for and recorded as a
 * zombie; one that leaves a process of its own behind is refused. A tree
 * in an
 * IPC namespace of its own has its System V objects in the root's image;
 * one that maps a segment of the initial namespace, or uses semaphore
 * undo, is refused. A TCP connection whose send queue spans the sequence
 * numbers' wrap is captured (its receive queue once went 4 GiB astray).
 * Several trees as one set (CKPT_CHECKPOINT_ROOTS): a process whose
 * parent is outside joins as a root of its own, marked in its image;
 * member 0 a child of another member, or a root in the session of a
 * member that is no root, is refused.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/ptrace.h>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define NR	4	/* root, child 1, child 2, grandchild (of child 1) */

enum { ROOT, C1, C2, GC };

enum tree_opt {
	PLAIN, C1_PIPE_OUT, NEWPID, SHARED_ANON, OUTSIDE_ANON, SHARED_MEMFD,
	SYSV_OWN, SYSV_HOST, SYSV_UNDO, SYSV_HOST_UNDO, SYSV_HOST_SEM,
	SYSV_HOST_OUTSIDE, SYSV_HOST_MADE, SYSV_HOST_UNREADABLE, SYSV_HOST_HELD,
	SYSV_HOST_MSG, ZOMBIE, BIG_ROOT,
	LATE_CHILD, LATE_ORPHAN,
};

/*
 * LATE_CHILD: the root's child no member list names, and how long it
 * lives; LATE_ORPHAN: one that starts a process of its own (living 5 s)
 * after 0.3 s and ends at once, leaving it to a reaper.
 */
#define LATE	NR
#define LATE_CHILD_MS	1200
static pid_t late_child;

/* BIG_ROOT: the root's own anonymous memory, every page written. */
#define BIG_ROOT_MB	16

/* SHARED_MEMFD: the descriptor every member keeps, inherited. */
#define KEPT_FD	100

static void spin(void)
{
	volatile unsigned long n = 0;

	syscall(SYS_close_range, 3, KEPT_FD - 1, 0);
	syscall(SYS_close_range, KEPT_FD + 1, ~0U, 0);
	for (;;)
		n++;
}

/*
 * The harness's results page is MAP_SHARED anonymous memory every forked
 * process shares: the harness is outside the tree (the engine refuses
 * that), so the root unmaps every such mapping before it forks, but with
 * OUTSIDE_ANON.
 */
static void drop_shared(void)
{
	unsigned long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long ranges[16][2];
	int n = 0, i;

	if (!f)
		_exit(9);
	while (n < 16 && fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/zero (deleted)") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			ranges[n][0] = lo;
			ranges[n++][1] = hi;
		}
	fclose(f);
	for (i = 0; i < n; i++)
		munmap((void *)ranges[i][0], ranges[i][1] - ranges[i][0]);
}

/*
 * SYSV_*: in the root, before the forks. SYSV_OWN: an IPC namespace of its
 * own with a segment every member maps (removed at once: it lives while
 * attached), a semaphore set (3 and 7) and a queue with two messages.
 * SYSV_HOST: a segment of the initial namespace, mapped. SYSV_UNDO: its
 * own namespace, and a semaphore operation with SEM_UNDO (adding 1: its
 * adjustment is -1) on two sets, the one above, made after the namespace's
 * indexes wrapped around (index 1, id 32769), and a one-semaphore set made
 * before that, at index 63 (id 63): by index their ids do not ascend.
 * SYSV_HOST_UNDO: that operation on a set of the initial namespace, keyed
 * HOST_UNDO_KEY (the test removes it). SYSV_HOST_SEM: SYSV_HOST's segment,
 * and an operation (no undo) on a set of the initial namespace, keyed
 * HOST_SEM_KEY (the test removes it). SYSV_HOST_OUTSIDE: SYSV_HOST's
 * segment, made and attached by the test before it forks the root, so
 * that a process outside the tree has it attached too (outside_seg).
 * SYSV_HOST_MADE: SYSV_HOST's segment, and one of 4096 bytes keyed
 * HOST_SHM_KEY that the root makes and nobody attaches (the test removes
 * it); SYSV_HOST_UNREADABLE: that one made with mode 0000; SYSV_HOST_HELD:
 * that one, which the test then attaches (outside the tree). SYSV_HOST_MSG:
 * SYSV_HOST's segment, and a message sent to a queue
 * of the initial namespace keyed HOST_MSG_KEY (the test removes it).
 */
#define HOST_UNDO_KEY	0x5ee1c0df
#define HOST_SEM_KEY	0x5ee1c0e0
#define HOST_SHM_KEY	0x5ee1c0e1
#define HOST_MSG_KEY	0x5ee1c0e2
static void *outside_seg = (void *)-1;

static void sysv_objects(enum tree_opt opt)
{
	struct { long type; char text[8]; } m = { 5, "ckpt" };
	struct sembuf op = { 0, 1, SEM_UNDO };
	unsigned short vals[2] = { 3, 7 };
	int shm, sem, msg;
	char *p;

	if (opt == SYSV_HOST_UNDO) {
		sem = semget(HOST_UNDO_KEY, 1, IPC_CREAT | 0600);
		if (sem < 0 || semop(sem, &op, 1))
			_exit(9);
		return;
	}
	if (opt == SYSV_HOST_SEM) {
		op.sem_flg = 0;
		sem = semget(HOST_SEM_KEY, 1, IPC_CREAT | 0600);
		if (sem < 0 || semop(sem, &op, 1))
			_exit(9);
		opt = SYSV_HOST;
	}
	if (opt == SYSV_HOST_OUTSIDE) {
		strcpy((char *)outside_seg + 4096, "segment");
		return;
	}
	if (opt == SYSV_HOST_MSG) {
		msg = msgget(HOST_MSG_KEY, IPC_CREAT | 0600);
		if (msg < 0 || msgsnd(msg, &m, 5, 0))
			_exit(9);
		opt = SYSV_HOST;
	}
	if (opt == SYSV_HOST_MADE || opt == SYSV_HOST_UNREADABLE ||
	    opt == SYSV_HOST_HELD) {
		if (shmget(HOST_SHM_KEY, 4096, IPC_CREAT | IPC_EXCL |
			   (opt == SYSV_HOST_UNREADABLE ? 0 : 0600)) < 0)
			_exit(9);
		opt = SYSV_HOST;
	}
	if (opt != SYSV_HOST && unshare(CLONE_NEWIPC))
		_exit(9);
	/* Index 0 held; 1 to 62 made and removed; 63 held. */
	if (opt == SYSV_UNDO && semget(IPC_PRIVATE, 1, 0600) < 0)
		_exit(9);
	while (opt == SYSV_UNDO) {
		sem = semget(IPC_PRIVATE, 1, 0600);
		if (sem < 0)
			_exit(9);
		if ((sem & 0x7fff) == 63) {
			if (semop(sem, &op, 1))
				_exit(9);
			break;
		}
		semctl(sem, 0, IPC_RMID);
	}
	shm = shmget(IPC_PRIVATE, 8192, 0600);
	p = shm < 0 ? (void *)-1 : shmat(shm, NULL, 0);
	if (p == (void *)-1 || shmctl(shm, IPC_RMID, NULL))
		_exit(9);
	strcpy(p + 4096, "segment");
	if (opt == SYSV_HOST)
		return;
	sem = semget(IPC_PRIVATE, 2, 0600);
	msg = msgget(IPC_PRIVATE, 0600);
	if (sem < 0 || msg < 0 || semctl(sem, 0, SETALL, vals) ||
	    msgsnd(msg, &m, 5, 0) || msgsnd(msg, &m, 2, 0))
		_exit(9);
	if (opt == SYSV_UNDO && semop(sem, &op, 1))
		_exit(9);
}

static void tell(int fd, int role)
{
	int msg[2] = { role, getpid() };

	if (write(fd, msg, sizeof(msg)) != sizeof(msg))
		_exit(9);
}

/* The tree, its pids in pid[] by role; 0 or -1. */
static int make_tree(pid_t pid[NR], enum tree_opt opt)
{
	int p[2], q[2] = { -1, -1 }, msg[2], n = 0;

	/* C1_PIPE_OUT: child 1's (and so the grandchild's) stdout is a pipe to us. */
	if (pipe(p) || (opt == C1_PIPE_OUT && pipe(q)))
		return -1;
	if (opt == SYSV_HOST_OUTSIDE && outside_seg == (void *)-1) {
		int shm = shmget(IPC_PRIVATE, 8192, 0600);

		outside_seg = shm < 0 ? (void *)-1 : shmat(shm, NULL, 0);
		if (outside_seg == (void *)-1 || shmctl(shm, IPC_RMID, NULL))
			return -1;
	}
	pid[ROOT] = fork();
	if (pid[ROOT] < 0)
		return -1;
	if (!pid[ROOT]) {
		close(p[0]);
		if (opt != OUTSIDE_ANON)
			drop_shared();
		/* SHARED_ANON: memory every member shares, by fork. */
		if (opt == SHARED_MEMFD &&
		    dup2(memfd_create("kept", MFD_CLOEXEC), KEPT_FD) < 0)
			_exit(9);
		if (opt == SYSV_OWN || opt == SYSV_HOST || opt == SYSV_UNDO ||
		    opt == SYSV_HOST_UNDO || opt == SYSV_HOST_SEM ||
		    opt == SYSV_HOST_OUTSIDE || opt == SYSV_HOST_MADE ||
		    opt == SYSV_HOST_UNREADABLE || opt == SYSV_HOST_HELD ||
		    opt == SYSV_HOST_MSG)
			sysv_objects(opt);
		/*
		 * ZOMBIE: a child that exits with 7 at once, never reaped;
		 * waited for (WNOWAIT) so the tree is ready only once it is a
		 * zombie (under load it had not run yet: no zombie found).
		 */
		if (opt == ZOMBIE) {
			siginfo_t si;
			pid_t z = fork();

			if (!z)
				_exit(7);
			if (z < 0 || waitid(P_PID, z, &si, WEXITED | WNOWAIT))
				_exit(9);
		}
		if (opt == SHARED_ANON) {
			char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				_exit(9);
			m[0] = 1;
		}
		if (!fork()) {
			if (opt == C1_PIPE_OUT && dup2(q[1], 1) != 1)
				_exit(9);
			if (!fork()) {
				tell(p[1], GC);
				spin();
			}
			tell(p[1], C1);
			spin();
		}
		if (opt == NEWPID) {
			/*
			 * Child 2 is pid 1 of a pid namespace of its own: its
			 * getpid() says 1, so the root tells its pid.
			 */
			pid_t c2 = unshare(CLONE_NEWPID) ? -1 : fork();

			if (c2 < 0)
				_exit(9);
			if (!c2)
				spin();
			msg[0] = C2;
			msg[1] = c2;
			if (write(p[1], msg, sizeof(msg)) != sizeof(msg))
				_exit(9);
		} else if (!fork()) {
			tell(p[1], C2);
			spin();
		}
		if (opt == BIG_ROOT) {
			char *m = mmap(NULL, BIG_ROOT_MB << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				_exit(9);
			memset(m, 0x5a, BIG_ROOT_MB << 20);
		}
		/*
		 * LATE_CHILD: one more child, as if forked after the caller
		 * looked at the tree, that ends (7) during the checkpoint.
		 */
		if (opt == LATE_CHILD || opt == LATE_ORPHAN) {
			pid_t c = fork();

			if (!c) {
				close(p[1]);
				usleep(opt == LATE_ORPHAN ? 300000 : LATE_CHILD_MS * 1000);
				if (opt == LATE_ORPHAN && !fork()) {
					usleep(5000000);
					_exit(0);
				}
				_exit(7);
			}
			msg[0] = LATE;
			msg[1] = c;
			if (c < 0 || write(p[1], msg, sizeof(msg)) != sizeof(msg))
				_exit(9);
		}
		tell(p[1], ROOT);
		spin();
	}
	close(p[1]);
	if (q[1] >= 0)
		close(q[1]);	/* q[0], the end outside the tree, stays open */
	while (read(p[0], msg, sizeof(msg)) == sizeof(msg))
		if (msg[0] == LATE)
			late_child = msg[1];
		else if (msg[0] >= 0 && msg[0] < NR && ++n)
			pid[msg[0]] = msg[1];
	close(p[0]);
	return n == NR ? 0 : -1;
}

static void end_tree(pid_t pid[NR])
{
	int i;

	for (i = 0; i < NR; i++)
		if (pid[i] > 0)
			kill(pid[i], SIGKILL);
	waitpid(pid[ROOT], NULL, 0);
}

static unsigned long long runtime(pid_t pid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* Whether @pid still runs: its CPU time grows within 5 s. */
static bool progresses(pid_t pid)
{
	unsigned long long t0 = runtime(pid);
	int i;

	for (i = 0; i < 500; i++) {
		usleep(10000);
		if (runtime(pid) > t0)
			return true;
	}
	return false;
}

static char state(pid_t pid)
{
	char buf[512], *p = ckpt_proc_stat(pid, buf, sizeof(buf));

	return p ? *p : 0;
}

/* Polls up to 5 s for @pid to be in state @want (0: gone or a zombie). */
static bool reaches(pid_t pid, char want)
{
	int i;

	for (i = 0; i < 500; i++) {
		char s = state(pid);

		if (want ? s == want : (!s || s == 'Z'))
			return true;
		usleep(10000);
	}
	return false;
}

FIXTURE(tree) {
	pid_t pid[NR];
	pid_t sid[NR], pgid[NR];	/* before a kill */
	char image[NR][64];
	int fd[NR];
	struct ckpt_tree_member m[NR + 1];
	struct ckpt_checkpoint_tree a;
	char msg[256];
	int dev;
};

static void set_members(FIXTURE_DATA(tree) *self, const int *roles, int nr)
{
	int i;

	memset(self->m, 0, sizeof(self->m));
	for (i = 0; i < NR; i++) {
		self->sid[i] = getsid(self->pid[i]);
		self->pgid[i] = getpgid(self->pid[i]);
	}
	for (i = 0; i < nr; i++) {
		self->m[i].pid = roles[i] < 0 ? (pid_t)-roles[i] : self->pid[roles[i]];
		self->m[i].fd = self->fd[i % NR];
	}
	memset(&self->a, 0, sizeof(self->a));
	self->a.members = (unsigned long)self->m;
	self->a.nr_members = nr;
	self->a.errmsg = (unsigned long)self->msg;
	self->a.errmsg_len = sizeof(self->msg);
	self->msg[0] = '\0';
}

static int tree_ioctl(FIXTURE_DATA(tree) *self)
{
	return ioctl(self->dev, CKPT_IOC_CHECKPOINT_TREE, &self->a) ? -errno : 0;
}

static bool all_progress(FIXTURE_DATA(tree) *self)
{
	int i;

	for (i = 0; i < NR; i++)
		if (!progresses(self->pid[i]))
			return false;
	return true;
}

static const int in_order[NR] = { ROOT, C1, C2, GC };

FIXTURE_SETUP(tree)
{
	const char *path = ckpt_module_path();
	int i;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	ASSERT_EQ(0, make_tree(self->pid, PLAIN));
	self->dev = open("/dev/ckpt", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	for (i = 0; i < NR; i++) {
		snprintf(self->image[i], sizeof(self->image[i]),
			 "/tmp/cr_tree.%d.%d.img", getpid(), i);
		self->fd[i] = open(self->image[i],
				   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ASSERT_LE(0, self->fd[i]);
	}
	set_members(self, in_order, NR);
}

FIXTURE_TEARDOWN(tree)
{
	int i;

	end_tree(self->pid);
	for (i = 0; i < NR; i++) {
		if (self->fd[i] > 0)
			close(self->fd[i]);
		unlink(self->image[i]);
	}
	if (self->dev > 0)
		close(self->dev);
}

/* Each image's TREE section, its place, and the pids in it. */
static bool images_agree(FIXTURE_DATA(tree) *self, struct __test_metadata *_metadata)
{
	static const __u32 parent[NR] = { CKPT_TREE_NO_PARENT, 0, 0, 1 };
	int i;

	for (i = 0; i < NR; i++) {
		struct ckpt_img_process *proc;
		struct ckpt_img_tree *t;
		off_t pos = 0, ppos = 0;
		size_t len = 0, plen = 0;

		t = ckpt_section_payload(self->image[i], CKPT_SECT_TREE, &pos, &len);
		proc = ckpt_section_payload(self->image[i], CKPT_SECT_PROCESS,
					    &ppos, &plen);
		if (!t || !proc || len != sizeof(*t))
			return false;
		EXPECT_EQ((__u32)i, t->index);
		EXPECT_EQ((__u32)NR, t->nr_members);
		EXPECT_EQ(parent[i], t->parent);
		EXPECT_EQ(self->sid[i], (pid_t)t->sid);
		EXPECT_EQ(self->pgid[i], (pid_t)t->pgid);
		EXPECT_EQ(0, memcmp(t->id, self->a.id, sizeof(t->id)));
		/* Right after PROCESS: its header follows PROCESS's payload. */
		EXPECT_EQ(ppos + (off_t)sizeof(struct ckpt_sect) +
			  (off_t)((plen + 7) & ~7UL), pos);
		EXPECT_EQ(self->pid[i], (pid_t)proc->pid);
		if (i)
			EXPECT_EQ(self->pid[i == GC ? C1 : ROOT], (pid_t)proc->ppid);
		EXPECT_EQ(1U, self->m[i].nr_threads);
		EXPECT_EQ(self->pid[i], (pid_t)self->m[i].ns_pid);
		EXPECT_LT(0ULL, (unsigned long long)self->m[i].image_bytes);
		free(t);
		free(proc);
	}
	return true;
}

/* The shared checker (through ckpt inspect) accepts each image. */
static bool inspect_ok(const char *image)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "ckpt inspect %s > /dev/null", image);
	return system(cmd) == 0;
}

TEST_F(tree, continues)
{
	static const __u8 zero[CKPT_TREE_ID_LEN];
	int i;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_NE(0, memcmp(self->a.id, zero, sizeof(zero)));
	EXPECT_TRUE(images_agree(self, _metadata));
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	EXPECT_TRUE(all_progress(self));
}

/* Each image's SHA-256 as sha256sum computes it from the file. */
static bool digests_match(FIXTURE_DATA(tree) *self,
			  const __u8 (*sums)[CKPT_DIGEST_LEN],
			  struct __test_metadata *_metadata)
{
	char cmd[128], hex[2 * CKPT_DIGEST_LEN + 1], want[sizeof(hex)];
	int i, j;

	for (i = 0; i < NR; i++) {
		FILE *p;

		snprintf(cmd, sizeof(cmd), "sha256sum < %s", self->image[i]);
		p = popen(cmd, "r");
		if (!p || !fgets(want, sizeof(want), p)) {
			if (p)
				pclose(p);
			return false;
		}
		pclose(p);
		for (j = 0; j < CKPT_DIGEST_LEN; j++)
			snprintf(hex + 2 * j, 3, "%02x", sums[i][j]);
		EXPECT_STREQ(want, hex) TH_LOG("member %d", i);
	}
	return true;
}

/*
 * CKPT_CHECKPOINT_DIGESTS: each image's SHA-256 as the engine wrote it,
 * pages staged and written after the thaw (continue) or while frozen
 * (kill), is the file's.
 */
TEST_F(tree, digests_are_the_images)
{
	__u8 sums[NR][CKPT_DIGEST_LEN];
	struct ckpt_checkpoint one = { .flags = CKPT_CHECKPOINT_DIGESTS };
	int i;

	CKPT_SETUP_SKIPPED();
	memset(sums, 0, sizeof(sums));
	self->a.flags = CKPT_CHECKPOINT_DIGESTS;
	self->a.digests = (unsigned long)sums;
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(digests_match(self, (const __u8 (*)[CKPT_DIGEST_LEN])sums,
				  _metadata));
	EXPECT_TRUE(all_progress(self));
	for (i = 0; i < NR; i++)
		ASSERT_EQ(0, ftruncate(self->fd[i], 0));
	for (i = 0; i < NR; i++)
		lseek(self->fd[i], 0, SEEK_SET);
	set_members(self, in_order, NR);
	memset(sums, 0, sizeof(sums));
	self->a.flags = CKPT_CHECKPOINT_DIGESTS | CKPT_CHECKPOINT_KILL;
	self->a.digests = (unsigned long)sums;
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(digests_match(self, (const __u8 (*)[CKPT_DIGEST_LEN])sums,
				  _metadata));
	EXPECT_TRUE(images_agree(self, _metadata));
	/* A tree's only. */
	one.pid = getpid();
	one.fd = self->fd[0];
	EXPECT_EQ(-EINVAL, ioctl(self->dev, CKPT_IOC_CHECKPOINT, &one) ? -errno : 0);
}

TEST_F(tree, kill)
{
	int i;

	CKPT_SETUP_SKIPPED();
	self->a.flags = CKPT_CHECKPOINT_KILL;
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(images_agree(self, _metadata));
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(reaches(self->pid[i], 0)) TH_LOG("member %d", i);
}

TEST_F(tree, stop)
{
	int i;

	CKPT_SETUP_SKIPPED();
	self->a.flags = CKPT_CHECKPOINT_STOP;
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(images_agree(self, _metadata));
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(reaches(self->pid[i], 'T')) TH_LOG("member %d", i);
	for (i = 0; i < NR; i++)
		kill(self->pid[i], SIGCONT);
	EXPECT_TRUE(all_progress(self));
}

/* The image of a member written to a pipe, read until @pause_at, then on @resume. */
struct slow_reader {
	int in, out, resume;
	size_t pause_at, got;
};

static void *read_slowly(void *arg)
{
	struct slow_reader *r = arg;
	static char buf[65536];
	char go;
	ssize_t n;

	while ((n = read(r->in, buf, sizeof(buf))) > 0) {
		if (write(r->out, buf, n) != n)
			break;
		if (r->got < r->pause_at && r->got + n >= r->pause_at &&
		    read(r->resume, &go, 1) != 1)
			break;
		r->got += n;
	}
	return NULL;
}

struct tree_call {
	FIXTURE_DATA(tree) *self;
	int ret, fd;
	volatile bool done;
};

static void *call_tree(void *arg)
{
	struct tree_call *c = arg;

	c->ret = tree_ioctl(c->self);
	c->done = true;
	close(c->fd);		/* the image's pipe: its reader sees the end */
	return NULL;
}

/*
 * CKPT_CHECKPOINT_STAGED: every member stopped, and the eventfd told so,
 * while the images are still being written (the root's is a pipe whose
 * reader stops after 4 MiB of its 16); let go meanwhile, they run, and
 * the images come whole once the reader goes on.
 */
TEST_F_TIMEOUT(tree, staged_stops_them_before_the_images_are_written, 240)
{
	struct slow_reader r = { .pause_at = 4 << 20 };
	struct tree_call c = { .self = self };
	int img[2], resume[2], i;
	struct pollfd pfd;
	pthread_t rd, io;
	__u64 n = 0;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, BIG_ROOT));
	set_members(self, in_order, NR);
	ASSERT_EQ(0, pipe2(img, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(resume, O_CLOEXEC));
	pfd.fd = eventfd(0, EFD_CLOEXEC);
	pfd.events = POLLIN;
	ASSERT_LE(0, pfd.fd);
	r.in = img[0];
	r.out = self->fd[0];
	r.resume = resume[0];
	c.fd = img[1];
	self->m[0].fd = img[1];
	self->a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_STAGED;
	self->a.staged_fd = pfd.fd;
	ASSERT_EQ(0, pthread_create(&rd, NULL, read_slowly, &r));
	ASSERT_EQ(0, pthread_create(&io, NULL, call_tree, &c));
	ASSERT_EQ(1, poll(&pfd, 1, 120000)) TH_LOG("no word from the engine: %s", self->msg);
	EXPECT_EQ((ssize_t)sizeof(n), read(pfd.fd, &n, sizeof(n)));
	EXPECT_EQ(1ULL, (unsigned long long)n);
	EXPECT_FALSE(c.done);
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(reaches(self->pid[i], 'T')) TH_LOG("member %d", i);
	for (i = 0; i < NR; i++)
		kill(self->pid[i], SIGCONT);
	EXPECT_TRUE(all_progress(self));
	/* The root's image is still on its way: its reader waits. */
	EXPECT_FALSE(c.done);
	EXPECT_LT(r.got, (size_t)BIG_ROOT_MB << 20);
	ASSERT_EQ(1, write(resume[1], "g", 1));
	pthread_join(io, NULL);
	pthread_join(rd, NULL);
	ASSERT_EQ(0, c.ret) TH_LOG("%s", self->msg);
	EXPECT_LT((size_t)BIG_ROOT_MB << 20, r.got);
	EXPECT_TRUE(images_agree(self, _metadata));
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	close(img[0]);
	close(resume[0]);
	close(resume[1]);
	close(pfd.fd);
}

/* Refused with @err, the message containing @words; nobody frozen. */
#define EXPECT_REFUSED(err, words) do { \
		EXPECT_EQ(err, tree_ioctl(self)); \
		EXPECT_NE(NULL, strstr(self->msg, words)) TH_LOG("%s", self->msg); \
		EXPECT_TRUE(all_progress(self)); \
	} while (0)

TEST_F(tree, child_left_out)
{
	static const int roles[] = { ROOT, C1, GC };

	CKPT_SETUP_SKIPPED();
	set_members(self, roles, 3);
	EXPECT_REFUSED(-EBUSY, "that is not in the tree");
}

TEST_F(tree, grandchild_left_out)
{
	static const int roles[] = { ROOT, C1, C2 };

	CKPT_SETUP_SKIPPED();
	set_members(self, roles, 3);
	EXPECT_REFUSED(-EBUSY, "that is not in the tree");
}

TEST_F(tree, before_its_parent)
{
	static const int roles[] = { ROOT, GC, C1, C2 };

	CKPT_SETUP_SKIPPED();
	set_members(self, roles, NR);
	EXPECT_REFUSED(-EINVAL, "is not a descendant");
}

TEST_F(tree, not_a_descendant)
{
	int roles[] = { ROOT, C1, C2, GC, 0 };
	pid_t other = fork();

	CKPT_SETUP_SKIPPED();
	ASSERT_LE(0, other);
	if (!other)
		spin();
	roles[4] = -other;
	set_members(self, roles, 5);
	self->m[4].fd = self->dev;	/* never reached: refused first */
	EXPECT_REFUSED(-EINVAL, "is not a descendant");
	EXPECT_TRUE(progresses(other));
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
}

/*
 * CKPT_CHECKPOINT_ROOTS (a job's trees on a node): a process whose parent
 * is no member joins as a root of its own, marked CKPT_TREE_ROOT; without
 * the flag it is refused (not_a_descendant), and so is a single process's
 * request with it.
 */
TEST_F(tree, several_roots)
{
	int roles[] = { ROOT, C1, C2, GC, 0 };
	struct ckpt_checkpoint one = { .flags = CKPT_CHECKPOINT_ROOTS };
	struct ckpt_img_tree *t;
	char image[64];
	off_t pos = 0;
	size_t len = 0;
	int i, up[2];
	pid_t other;
	char c;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(up));
	other = fork();
	ASSERT_LE(0, other);
	if (!other) {
		/* Not sharing the harness's memory, as the tree's root. */
		drop_shared();
		close(up[1]);
		spin();
	}
	close(up[1]);
	ASSERT_EQ(0, read(up[0], &c, 1));	/* dropped: its end closed */
	close(up[0]);
	roles[4] = -other;
	set_members(self, roles, 5);
	snprintf(image, sizeof(image), "/tmp/cr_tree.%d.other.img", getpid());
	self->m[4].fd = open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->m[4].fd);
	self->a.flags = CKPT_CHECKPOINT_ROOTS;
	EXPECT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	t = ckpt_section_payload(image, CKPT_SECT_TREE, &pos, &len);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(4U, t->index);
	EXPECT_EQ(5U, t->nr_members);
	EXPECT_EQ((__u32)CKPT_TREE_NO_PARENT, t->parent);
	EXPECT_EQ((__u32)CKPT_TREE_ROOT, t->flags & CKPT_TREE_ROOT);
	free(t);
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	EXPECT_TRUE(inspect_ok(image));
	EXPECT_TRUE(all_progress(self));
	EXPECT_TRUE(progresses(other));
	one.pid = other;
	one.fd = self->m[4].fd;
	EXPECT_EQ(-EINVAL, ioctl(self->dev, CKPT_IOC_CHECKPOINT, &one) ? -errno : 0);
	close(self->m[4].fd);
	unlink(image);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
}

/*
 * A root in the session of a member that is no root (B's, a child of A,
 * left by a double fork in it): a restart could not make it there again.
 */
TEST_F(tree, several_roots_in_the_session_of_a_child)
{
	int roles[3], p[2], got[2], n = 0;
	pid_t a, b, d;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(p));
	a = fork();
	ASSERT_LE(0, a);
	if (!a) {
		drop_shared();
		b = fork();
		if (!b) {
			pid_t c;

			setsid();
			c = fork();
			if (!c) {
				d = fork();
				if (!d)
					spin();
				if (write(p[1], &d, sizeof(d)) != sizeof(d))
					_exit(9);
				_exit(0);	/* D is an orphan in B's session */
			}
			waitpid(c, NULL, 0);
			b = getpid();
			if (write(p[1], &b, sizeof(b)) != sizeof(b))
				_exit(9);
			spin();
		}
		spin();
	}
	close(p[1]);
	while (n < 2 && read(p[0], &got[n], sizeof(got[n])) == sizeof(got[n]))
		n++;
	close(p[0]);
	ASSERT_EQ(2, n);
	d = got[0];
	b = got[1];
	roles[0] = -a;
	roles[1] = -b;
	roles[2] = -d;
	set_members(self, roles, 3);
	self->a.flags = CKPT_CHECKPOINT_ROOTS;
	EXPECT_REFUSED(-EOPNOTSUPP, "which is no tree's root");
	EXPECT_TRUE(progresses(d));
	kill(d, SIGKILL);
	kill(b, SIGKILL);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
}

/* With several roots, member 0 must be one: not a child of another member. */
TEST_F(tree, several_roots_member_0_a_child)
{
	static const int roles[] = { C1, GC, ROOT, C2 };

	CKPT_SETUP_SKIPPED();
	set_members(self, roles, NR);
	self->a.flags = CKPT_CHECKPOINT_ROOTS;
	EXPECT_REFUSED(-EINVAL, "is a child of member pid");
}

/*
 * One process holding both ends of a TCP connection over 127.0.0.1 whose
 * send queue spans the sequence numbers' wrap (snd_una below 2^32,
 * write_seq past it): both ends made in repair mode with the numbers
 * chosen, no window scaling (the peer's window stays below 64 KiB, so
 * most of what is sent waits in the send queue). Its descriptors are
 * 100 and 101. 0, or the line that failed (errno set).
 */
static int tcp_pair_across_the_wrap(void)
{
	const unsigned int wrap_in = 100000;
	struct sockaddr_in a = { .sin_family = AF_INET }, b = a;
	socklen_t len = sizeof(a);
	int fa, fb, on = 1, off = 0, big = 1 << 20, q;
	unsigned int sa = 0U - wrap_in, sb = 0x12345678, sb_end = sb + 1000;
	static char buf[1 << 16];
	long sent = 0;
	int tries;
	ssize_t n;

	a.sin_addr.s_addr = b.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fa = socket(AF_INET, SOCK_STREAM, 0);
	fb = socket(AF_INET, SOCK_STREAM, 0);
	if (fa < 0 || fb < 0 || bind(fa, (void *)&a, sizeof(a)) ||
	    bind(fb, (void *)&b, sizeof(b)) ||
	    getsockname(fa, (void *)&a, &len) || getsockname(fb, (void *)&b, &len) ||
	    setsockopt(fa, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)))
		return __LINE__;
	/* Each end: repair mode, its numbers, "connected" without a handshake. */
	q = TCP_SEND_QUEUE;
	if (setsockopt(fa, SOL_TCP, TCP_REPAIR, &on, sizeof(on)) ||
	    setsockopt(fb, SOL_TCP, TCP_REPAIR, &on, sizeof(on)) ||
	    setsockopt(fa, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(fa, SOL_TCP, TCP_QUEUE_SEQ, &sa, sizeof(sa)) ||
	    setsockopt(fb, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(fb, SOL_TCP, TCP_QUEUE_SEQ, &sb_end, sizeof(sb_end)))
		return __LINE__;
	q = TCP_RECV_QUEUE;
	if (setsockopt(fa, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(fa, SOL_TCP, TCP_QUEUE_SEQ, &sb, sizeof(sb)) ||
	    setsockopt(fb, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(fb, SOL_TCP, TCP_QUEUE_SEQ, &sa, sizeof(sa)) ||
	    connect(fa, (void *)&b, sizeof(b)) || connect(fb, (void *)&a, sizeof(a)))
		return __LINE__;
	/*
	 * Bytes the other way too, unread: the receive queue's place in the
	 * image follows the send queue's. Put into fa's receive queue in
	 * repair mode, as sent and acknowledged by fb (sb to sb_end): sent
	 * over the loopback instead, they could wait on window probes, the
	 * persist timer backing off past 30 s with two VMs on two CPUs.
	 */
	memset(buf, 'w', sizeof(buf));
	if (send(fa, buf, sb_end - sb, 0) != (ssize_t)(sb_end - sb) ||
	    setsockopt(fa, SOL_TCP, TCP_REPAIR, &off, sizeof(off)) ||
	    setsockopt(fb, SOL_TCP, TCP_REPAIR, &off, sizeof(off)) ||
	    dup2(fa, 100) != 100 || dup2(fb, 101) != 101)
		return __LINE__;
	/*
	 * Until past the wrap, a full send buffer is waited out (5 s at
	 * most): on a loaded machine the first sends can find it full
	 * before the stack has acknowledged anything.
	 */
	for (tries = 0; sent < 4L * wrap_in && tries < 500; ) {
		n = send(100, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			sent += n;
		else if (n < 0 && errno == EAGAIN && sent <= wrap_in && ++tries)
			usleep(10000);
		else
			break;
	}
	/*
	 * write_seq is past the wrap; snd_una stays before it, as the peer,
	 * which reads nothing, acknowledges one window at most (< 64 KiB).
	 */
	if (sent <= wrap_in || ioctl(100, SIOCINQ, &q) || q != (int)(sb_end - sb))
		return __LINE__;
	return 0;
}

TEST_F(tree, tcp_send_queue_across_the_sequence_wrap)
{
	struct ckpt_tree_member m = {};
	int p[2], ok[2] = { -1, 0 }, i, ret = -EAGAIN;
	pid_t pid;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		volatile unsigned long n = 0;

		drop_shared();
		ok[0] = tcp_pair_across_the_wrap();
		ok[1] = errno;
		if (write(p[1], ok, sizeof(ok)) != sizeof(ok))
			_exit(9);
		syscall(SYS_close_range, 3, 99, 0);
		syscall(SYS_close_range, 102, ~0U, 0);
		for (;;)
			n++;
	}
	close(p[1]);
	ASSERT_EQ((ssize_t)sizeof(ok), read(p[0], ok, sizeof(ok)));
	close(p[0]);
	ASSERT_EQ(0, ok[0]) TH_LOG("line %d: %s", ok[0], strerror(ok[1]));
	m.pid = pid;
	m.fd = self->fd[0];
	memset(&self->a, 0, sizeof(self->a));
	self->a.members = (unsigned long)&m;
	self->a.nr_members = 1;
	self->a.errmsg = (unsigned long)self->msg;
	self->a.errmsg_len = sizeof(self->msg);
	/* Bytes still on their way over the loopback: a moment later. */
	for (i = 0; i < 40 && ret == -EAGAIN; i++) {
		usleep(100000);
		self->msg[0] = '\0';
		ftruncate(self->fd[0], 0);
		lseek(self->fd[0], 0, SEEK_SET);
		ret = tree_ioctl(self);
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", self->msg);
	EXPECT_TRUE(inspect_ok(self->image[0]));
	EXPECT_TRUE(progresses(pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * A member killed while the tree is checkpointed (the grandchild, at a
 * different moment each round): each round either captures the tree (the
 * kill lands after the thaw) or is refused naming that member, and the
 * others run on, none left frozen. Bounded: 12 rounds.
 */
TEST_F_TIMEOUT(tree, member_killed_during_the_checkpoint, 240)
{
	int round, i, done = 0, refused = 0;
	char want[32];

	CKPT_SETUP_SKIPPED();
	for (round = 0; round < 12; round++) {
		pid_t killer;
		int ret;

		if (round) {
			end_tree(self->pid);
			ASSERT_EQ(0, make_tree(self->pid, PLAIN));
			for (i = 0; i < NR; i++) {
				ASSERT_EQ(0, ftruncate(self->fd[i], 0));
				ASSERT_EQ(0, lseek(self->fd[i], 0, SEEK_SET));
			}
			set_members(self, in_order, NR);
		}
		killer = fork();
		ASSERT_LE(0, killer);
		if (!killer) {
			usleep(round * 15000);	/* before, during and after */
			kill(self->pid[GC], SIGKILL);
			_exit(0);
		}
		ret = tree_ioctl(self);
		waitpid(killer, NULL, 0);
		if (ret) {
			snprintf(want, sizeof(want), "pid %d", self->pid[GC]);
			EXPECT_NE(NULL, strstr(self->msg, want));
			TH_LOG("round %d: refused (%s): %s", round, strerror(-ret),
			       self->msg);
			refused++;
		} else {
			done++;
		}
		for (i = ROOT; i <= C2; i++)
			EXPECT_TRUE(progresses(self->pid[i]))
				TH_LOG("round %d, member %d", round, i);
	}
	TH_LOG("%d rounds captured the tree, %d were refused", done, refused);
}

TEST_F(tree, traced_member)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, self->pid[C2], 0, 0));
	EXPECT_REFUSED(-EBUSY, "is being traced");
	ptrace(PTRACE_DETACH, self->pid[C2], 0, 0);
}

TEST_F(tree, caller_in_tree)
{
	int roles[] = { ROOT, C1, C2, GC };

	CKPT_SETUP_SKIPPED();
	roles[2] = -getpid();
	set_members(self, roles, NR);
	EXPECT_REFUSED(-EDEADLK, "cannot checkpoint itself");
}

/* Another tree: made here, ended here. */
static int other_tree(FIXTURE_DATA(tree) *self, enum tree_opt opt,
		      const char *words, int err, struct __test_metadata *_metadata)
{
	pid_t saved[NR];

	memcpy(saved, self->pid, sizeof(saved));
	end_tree(self->pid);
	if (make_tree(self->pid, opt))
		return -1;
	set_members(self, in_order, NR);
	EXPECT_REFUSED(err, words);
	return 0;
}

TEST_F(tree, other_pid_namespace)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, other_tree(self, NEWPID, "another pid namespace",
				-EOPNOTSUPP, _metadata));
}

TEST_F(tree, pipe_to_outside)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, other_tree(self, C1_PIPE_OUT,
				"fd 1 (pipe:[", -EOPNOTSUPP, _metadata));
	EXPECT_NE(NULL, strstr(self->msg, "has an end open in a process outside the tree"));
}

/*
 * Anonymous memory all four share by fork: one object of kind SHMEM in
 * every image, the same identity in each, its page stored by the root's
 * image only.
 */
TEST_F(tree, shared_anonymous_memory)
{
	struct ckpt_img_fileobj *o[NR];
	int i;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, SHARED_ANON));
	set_members(self, in_order, NR);
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	for (i = 0; i < NR; i++) {
		off_t pos = 0;
		size_t len = 0;

		o[i] = ckpt_section_payload(self->image[i], CKPT_SECT_FILEOBJ,
					    &pos, &len);
		ASSERT_NE(NULL, o[i]) TH_LOG("image %d has no FILEOBJ", i);
		ASSERT_EQ(sizeof(*o[i]), len);
		EXPECT_EQ((__u32)CKPT_FILE_SHMEM, o[i]->kind);
		EXPECT_EQ(4096ULL, (unsigned long long)o[i]->size);
		EXPECT_EQ(i ? 0ULL : 4096ULL, (unsigned long long)o[i]->stored);
		EXPECT_EQ(o[0]->ino, o[i]->ino);
		EXPECT_STREQ("/dev/zero", o[i]->name);
		EXPECT_TRUE(inspect_ok(self->image[i]));
	}
	for (i = 0; i < NR; i++)
		free(o[i]);
}

/* Whether @image has a section of @type. */
static bool has_section(const char *image, __u32 type)
{
	size_t len = 0;
	off_t pos = 0;
	void *p = ckpt_section_payload(image, type, &pos, &len);

	free(p);
	return p;
}

TEST_F(tree, sysv_own_namespace)
{
	struct ckpt_img_sysvshm *shm;
	struct ckpt_img_sysvsem *sem;
	struct ckpt_img_sysvmsg *msg;
	size_t len = 0;
	off_t pos = 0;
	int i;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, SYSV_OWN));
	set_members(self, in_order, NR);
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	shm = ckpt_section_payload(self->image[0], CKPT_SECT_SYSVSHM, &pos, &len);
	ASSERT_NE(NULL, shm);
	EXPECT_EQ(sizeof(*shm), len);
	EXPECT_EQ(8192ULL, (unsigned long long)shm->size);
	EXPECT_EQ(4096ULL, (unsigned long long)shm->stored);
	EXPECT_EQ((__u32)CKPT_IPC_DEST, shm->perm.flags);
	EXPECT_EQ(0600U, shm->perm.mode);
	pos = 0;
	sem = ckpt_section_payload(self->image[0], CKPT_SECT_SYSVSEM, &pos, &len);
	ASSERT_NE(NULL, sem);
	ASSERT_EQ(2U, sem->nsems);
	EXPECT_EQ(3U, sem->vals[0]);
	EXPECT_EQ(7U, sem->vals[1]);
	pos = 0;
	msg = ckpt_section_payload(self->image[0], CKPT_SECT_SYSVMSG, &pos, &len);
	ASSERT_NE(NULL, msg);
	EXPECT_EQ(2U, msg->nr);
	EXPECT_EQ(sizeof(*msg) + 2 * 16 + 8 + 8, len);
	for (i = 0; i < NR; i++) {
		EXPECT_EQ(!i, has_section(self->image[i], CKPT_SECT_SYSVSHM));
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	}
	free(shm);
	free(sem);
	free(msg);
}

/* HOST_SHM_KEY's segment, if a test left one, removed. */
static void remove_host_segment(void)
{
	int id = shmget(HOST_SHM_KEY, 0, 0);

	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
}

/*
 * The fixture's tree ended, one made with @opt (HOST_SHM_KEY's segment
 * free for it), its four the members: 0 or -1.
 */
static int host_segment_tree(FIXTURE_DATA(tree) *self, enum tree_opt opt)
{
	remove_host_segment();
	end_tree(self->pid);
	if (make_tree(self->pid, opt))
		return -1;
	set_members(self, in_order, NR);
	return 0;
}

/* The fixture's tree ended, one made with @opt, all four checkpointed. */
static int new_tree_checkpointed(FIXTURE_DATA(tree) *self, enum tree_opt opt)
{
	end_tree(self->pid);
	if (make_tree(self->pid, opt))
		return -1;
	set_members(self, in_order, NR);
	return tree_ioctl(self);
}

/*
 * A segment of the initial namespace that only members attach is the
 * tree's: in the root's image, as in a namespace of its own, alone.
 */
TEST_F(tree, sysv_segment_of_the_initial_namespace)
{
	struct ckpt_img_sysvshm *shm;
	size_t len = 0;
	off_t pos = 0;
	void *extra;
	int i;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, new_tree_checkpointed(self, SYSV_HOST)) TH_LOG("%s", self->msg);
	shm = ckpt_section_payload(self->image[0], CKPT_SECT_SYSVSHM, &pos, &len);
	ASSERT_NE(NULL, shm);
	EXPECT_EQ(8192ULL, (unsigned long long)shm->size);
	EXPECT_EQ(4096ULL, (unsigned long long)shm->stored);
	EXPECT_EQ((__u32)CKPT_IPC_DEST, shm->perm.flags);
	extra = ckpt_section_payload_nth(self->image[0], CKPT_SECT_SYSVSHM, 1,
					 &pos, &len);
	EXPECT_EQ(NULL, extra);
	free(extra);
	EXPECT_FALSE(has_section(self->image[0], CKPT_SECT_SYSVSEM));
	EXPECT_FALSE(has_section(self->image[0], CKPT_SECT_SYSVMSG));
	for (i = 0; i < NR; i++) {
		EXPECT_EQ(!i, has_section(self->image[i], CKPT_SECT_SYSVSHM));
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	}
	free(shm);
}

/*
 * One a member made and nobody attached yet is the tree's too: both in
 * the root's image, by ascending id.
 */
TEST_F(tree, sysv_segment_made_and_not_attached)
{
	struct ckpt_img_sysvshm *a, *b;
	size_t len = 0;
	off_t pos = 0;

	CKPT_SETUP_SKIPPED();
	remove_host_segment();
	EXPECT_EQ(0, new_tree_checkpointed(self, SYSV_HOST_MADE))
		TH_LOG("%s", self->msg);
	a = ckpt_section_payload(self->image[0], CKPT_SECT_SYSVSHM, &pos, &len);
	b = ckpt_section_payload_nth(self->image[0], CKPT_SECT_SYSVSHM, 1,
				     &pos, &len);
	EXPECT_NE(NULL, a);
	EXPECT_NE(NULL, b);
	if (a && b) {
		struct ckpt_img_sysvshm *made = a->perm.key ? a : b;

		EXPECT_LT(a->perm.id, b->perm.id);
		EXPECT_EQ((__u32)HOST_SHM_KEY, made->perm.key);
		EXPECT_EQ(4096ULL, (unsigned long long)made->size);
		EXPECT_EQ(0U, made->perm.flags);
	}
	free(a);
	free(b);
	remove_host_segment();
}

/* The caller's @cap in its effective set (@on) or out of it: 0 or -1. */
static int effective_cap(int cap, bool on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[cap / 32].effective |= 1U << (cap % 32);
	else
		d[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/*
 * One the tree made that the checkpointer may not read (mode 0000, and
 * CAP_IPC_OWNER out of its effective set): every segment the tree's
 * checkpoint takes must be the caller's to read; refused, naming it, not
 * taken.
 */
TEST_F(tree, sysv_segment_the_checkpointer_may_not_read)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, host_segment_tree(self, SYSV_HOST_UNREADABLE));
	ASSERT_EQ(0, effective_cap(CAP_IPC_OWNER, false));
	EXPECT_REFUSED(-EACCES, "is not the checkpointer's to read");
	EXPECT_EQ(0, effective_cap(CAP_IPC_OWNER, true));
	remove_host_segment();
}

/*
 * One the root made, and that the test (outside the tree) attaches: a
 * restart with the tree's segments would leave it behind; refused, naming
 * it and its maker.
 */
TEST_F(tree, sysv_segment_made_by_a_member_held_outside)
{
	void *p = (void *)-1;
	int id;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, host_segment_tree(self, SYSV_HOST_HELD));
	id = shmget(HOST_SHM_KEY, 0, 0);
	if (id >= 0)
		p = shmat(id, NULL, SHM_RDONLY);
	EXPECT_NE((void *)-1, p);
	EXPECT_REFUSED(-EOPNOTSUPP, "made or attached, has a process outside the tree attached");
	if (p != (void *)-1)
		shmdt(p);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
}

/*
 * A restart in a namespace with the tree's segments would not have the
 * node's set a member operated on, or the node's queue a member sent to:
 * refused, naming it (@words); the object keyed @key then removed.
 */
static void refused_for_a_use(struct __test_metadata *_metadata,
			      FIXTURE_DATA(tree) *self, enum tree_opt opt,
			      const char *words, key_t key)
{
	int id;

	EXPECT_EQ(0, other_tree(self, opt, words, -EOPNOTSUPP, _metadata));
	EXPECT_NE(NULL, strstr(self->msg, "of the initial IPC namespace, which a restart with the tree's segments would not have"))
		TH_LOG("%s", self->msg);
	id = opt == SYSV_HOST_SEM ? semget(key, 0, 0) : msgget(key, 0);
	if (id >= 0 && opt == SYSV_HOST_SEM)
		semctl(id, 0, IPC_RMID);
	else if (id >= 0)
		msgctl(id, IPC_RMID, NULL);
}

TEST_F(tree, sysv_segment_and_a_semaphore_of_the_initial_namespace)
{
	CKPT_SETUP_SKIPPED();
	refused_for_a_use(_metadata, self, SYSV_HOST_SEM,
			  "operated on System V semaphore set", HOST_SEM_KEY);
}

TEST_F(tree, sysv_segment_and_a_queue_of_the_initial_namespace)
{
	CKPT_SETUP_SKIPPED();
	refused_for_a_use(_metadata, self, SYSV_HOST_MSG,
			  "used System V message queue", HOST_MSG_KEY);
}

/* Attached by a process outside the tree too: not the tree's alone. */
TEST_F(tree, sysv_segment_attached_outside_the_tree)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, other_tree(self, SYSV_HOST_OUTSIDE,
				"of the initial IPC namespace has 5 attachments, 4 of them the tree's: a process outside the tree has it attached too",
				-EOPNOTSUPP, _metadata));
	EXPECT_EQ(0, shmdt(outside_seg));
	outside_seg = (void *)-1;
}

/*
 * The root's adjustments, in its image only (the others made none), by
 * ascending set id, as the sets are.
 */
TEST_F(tree, sysv_semaphore_undo)
{
	static const __u32 ids[] = { 0, 63, 32769 };
	struct ckpt_img_semundo *u, *v;
	struct ckpt_img_sysvsem *sem;
	size_t len = 0;
	off_t pos = 0;
	int i;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, SYSV_UNDO));
	set_members(self, in_order, NR);
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	for (i = 0; i < 3; i++) {
		sem = ckpt_section_payload_nth(self->image[0], CKPT_SECT_SYSVSEM,
					       i, &pos, &len);
		ASSERT_NE(NULL, sem);
		EXPECT_EQ(ids[i], sem->perm.id);
		free(sem);
	}
	u = ckpt_section_payload(self->image[0], CKPT_SECT_SEMUNDO, &pos, &len);
	ASSERT_NE(NULL, u);
	ASSERT_EQ(sizeof(*u) + sizeof(u->adj[0]), len);
	EXPECT_EQ(63U, u->id);
	EXPECT_EQ(1U, u->nsems);
	EXPECT_EQ(-1, u->adj[0]);
	v = ckpt_section_payload_nth(self->image[0], CKPT_SECT_SEMUNDO, 1, &pos,
				     &len);
	ASSERT_NE(NULL, v);
	ASSERT_EQ(sizeof(*v) + 2 * sizeof(v->adj[0]), len);
	EXPECT_EQ(32769U, v->id);
	EXPECT_EQ(-1, v->adj[0]);
	EXPECT_EQ(0, v->adj[1]);
	for (i = 0; i < NR; i++) {
		EXPECT_EQ(!i, has_section(self->image[i], CKPT_SECT_SEMUNDO));
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	}
	free(u);
	free(v);
}

/* Its adjustments would apply to the machine's set at the old root's exit. */
TEST_F(tree, sysv_semaphore_undo_of_the_initial_namespace)
{
	int id;

	CKPT_SETUP_SKIPPED();
	EXPECT_EQ(0, other_tree(self, SYSV_HOST_UNDO,
				"uses System V semaphore undo (SEM_UNDO) in the initial IPC namespace: start the tree in an IPC namespace of its own",
				-EOPNOTSUPP, _metadata));
	id = semget(HOST_UNDO_KEY, 0, 0);
	if (id >= 0)
		semctl(id, 0, IPC_RMID);
}

/*
 * The tree, all four members, checkpointed: the root's image records its
 * one zombie child (exit 7, in the root's group), member 1's none.
 */
static void expect_root_zombie(struct __test_metadata *_metadata,
			       FIXTURE_DATA(tree) *self)
{
	struct ckpt_img_zombie *z;
	size_t len = 0;
	off_t pos = 0;

	set_members(self, in_order, NR);
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	z = ckpt_section_payload(self->image[0], CKPT_SECT_ZOMBIE, &pos, &len);
	ASSERT_NE(NULL, z);
	EXPECT_EQ(sizeof(*z), len);
	EXPECT_EQ(7U << 8, z->status);
	EXPECT_EQ((__u32)SIGCHLD, z->exit_signal);
	EXPECT_EQ((__u32)self->pgid[ROOT], z->pgid);
	EXPECT_NE((__u32)self->pid[ROOT], z->pid);
	EXPECT_FALSE(has_section(self->image[1], CKPT_SECT_ZOMBIE));
	EXPECT_TRUE(inspect_ok(self->image[0]));
	free(z);
}

/* A zombie child is no member: its parent's image records it. */
TEST_F(tree, zombie_child)
{
	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, ZOMBIE));
	expect_root_zombie(_metadata, self);
}

/*
 * A member's child forked after the look (not listed) and ending during
 * the checkpoint: waited for with every member frozen, then recorded as
 * the zombie it is, not refused as a process left out of the tree.
 */
TEST_F(tree, child_ending_during_the_checkpoint)
{
	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, LATE_CHILD));
	ASSERT_GT(late_child, 0);
	/* Alive as the checkpoint starts (a zombie already proves nothing). */
	ASSERT_NE('Z', state(late_child));
	expect_root_zombie(_metadata, self);
}

/*
 * Such a child that starts a process and ends before it (a double fork)
 * leaves that process to a reaper, outside the tree: refused, named.
 */
TEST_F(tree, late_child_leaving_a_process_behind)
{
	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, LATE_ORPHAN));
	set_members(self, in_order, NR);
	EXPECT_REFUSED(-EBUSY, "started during the checkpoint by a child of the tree's that has ended since");
}

/* A zombie listed as a member: refused, named (ckpt leaves them out). */
TEST_F(tree, zombie_as_member)
{
	int roles[NR + 1] = { ROOT, C1, C2, GC, 0 };
	char path[64], line[256];
	pid_t zpid = 0;
	FILE *f;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, ZOMBIE));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
		 self->pid[ROOT], self->pid[ROOT]);
	f = fopen(path, "re");
	ASSERT_NE(NULL, f);
	while (fscanf(f, "%d", &zpid) == 1) {
		char *p;
		FILE *st;

		snprintf(path, sizeof(path), "/proc/%d/stat", zpid);
		st = fopen(path, "re");
		if (!st)
			continue;
		p = fgets(line, sizeof(line), st) ? strrchr(line, ')') : NULL;
		fclose(st);
		if (p && p[2] == 'Z')
			break;
		zpid = 0;
	}
	fclose(f);
	ASSERT_NE(0, zpid);
	roles[NR] = -zpid;
	set_members(self, roles, NR + 1);
	snprintf(path, sizeof(path), "/tmp/cr_tree.%d.z.img", getpid());
	self->m[NR].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->m[NR].fd);
	unlink(path);
	EXPECT_EQ(-ESRCH, tree_ioctl(self));
	EXPECT_NE(NULL, strstr(self->msg, "is a zombie (ended, not reaped)"))
		TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	close(self->m[NR].fd);
}

/*
 * One memfd descriptor all four hold (refused until stop 67): in every
 * image a descriptor marked shared with the same number of the tree's,
 * naming a memfd object of the same identity (the restart opens it once
 * for all: tree_shared.sh).
 */
TEST_F(tree, memfd_descriptor_shared_by_fork)
{
	struct ckpt_img_file *f[NR], *kept[NR];
	struct ckpt_img_fileobj *o[NR];
	int i;

	CKPT_SETUP_SKIPPED();
	end_tree(self->pid);
	ASSERT_EQ(0, make_tree(self->pid, SHARED_MEMFD));
	set_members(self, in_order, NR);
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	EXPECT_TRUE(all_progress(self));
	for (i = 0; i < NR; i++) {
		size_t len = 0, k;
		off_t pos = 0;

		f[i] = ckpt_section_payload(self->image[i], CKPT_SECT_FILES,
					    &pos, &len);
		ASSERT_NE(NULL, f[i]) TH_LOG("image %d has no FILES", i);
		for (k = 0, kept[i] = NULL; k < len / sizeof(*f[i]); k++)
			if (f[i][k].fd == KEPT_FD)
				kept[i] = &f[i][k];
		ASSERT_NE(NULL, kept[i]) TH_LOG("image %d has no fd %d", i, KEPT_FD);
		EXPECT_EQ((__u32)CKPT_FILE_MEMFD, kept[i]->kind);
		EXPECT_TRUE(!!(kept[i]->flags & CKPT_FILE_TREE_SHARED));
		EXPECT_NE(0ULL, (unsigned long long)kept[i]->dev);
		EXPECT_EQ(kept[0]->dev, kept[i]->dev);
		pos = 0;
		o[i] = ckpt_section_payload(self->image[i], CKPT_SECT_FILEOBJ,
					    &pos, &len);
		ASSERT_NE(NULL, o[i]) TH_LOG("image %d has no FILEOBJ", i);
		ASSERT_LT(kept[i]->ino, len / sizeof(*o[i]));
		EXPECT_EQ((__u32)CKPT_FILE_MEMFD, o[i][kept[i]->ino].kind);
		EXPECT_EQ(o[0][kept[0]->ino].ino, o[i][kept[i]->ino].ino);
		EXPECT_TRUE(inspect_ok(self->image[i]));
	}
	for (i = 0; i < NR; i++) {
		free(f[i]);
		free(o[i]);
	}
}

TEST_F(tree, anonymous_memory_shared_outside)
{
	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, other_tree(self, OUTSIDE_ANON,
				"maps shared anonymous memory /dev/zero, which a process outside the tree holds too",
				-EOPNOTSUPP, _metadata));
}

TEST_F(tree, bad_arguments)
{
	int roles[] = { ROOT, C1, C2, GC };

	CKPT_SETUP_SKIPPED();
	self->a.nr_members = 0;
	EXPECT_REFUSED(-EINVAL, "nr_members");
	self->a.nr_members = CKPT_TREE_MAX_MEMBERS + 1;
	EXPECT_REFUSED(-EINVAL, "nr_members");
	set_members(self, in_order, NR);
	self->a.reserved[1] = 1;
	EXPECT_REFUSED(-EINVAL, "reserved");
	set_members(self, in_order, NR);
	self->a.reserved32 = 1;
	EXPECT_REFUSED(-EINVAL, "reserved");
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_STAGED;
	EXPECT_REFUSED(-EINVAL, "needs CKPT_CHECKPOINT_STOP");
	set_members(self, in_order, NR);
	self->a.staged_fd = 3;
	EXPECT_REFUSED(-EINVAL, "staged_fd");
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_STAGED;
	self->a.staged_fd = self->fd[0];
	EXPECT_REFUSED(-EINVAL, "not an eventfd");
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_DIGESTS;
	EXPECT_REFUSED(-EINVAL, "digests");
	set_members(self, in_order, NR);
	self->a.digests = (unsigned long)self->msg;
	EXPECT_REFUSED(-EINVAL, "digests");
	set_members(self, in_order, NR);
	self->m[2].ns_pid = 1;
	EXPECT_REFUSED(-EINVAL, "ns_pid must be 0");
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_STOP | CKPT_CHECKPOINT_KILL;
	EXPECT_REFUSED(-EINVAL, "flags");
	self->a.flags = __CKPT_CHECKPOINT_F_ALL + 1;	/* unknown */
	EXPECT_REFUSED(-EINVAL, "flags");
	set_members(self, in_order, NR);
	self->a.timeout_ms = CKPT_TIMEOUT_MAX_MS + 1;
	EXPECT_REFUSED(-EINVAL, "timeout_ms");
	roles[3] = C1;
	set_members(self, roles, NR);
	EXPECT_REFUSED(-EINVAL, "listed twice");
	set_members(self, in_order, NR);
	self->m[3].fd = self->m[1].fd;
	EXPECT_REFUSED(-EINVAL, "same image descriptor");
	set_members(self, in_order, NR);
	self->m[3].fd = 999;
	EXPECT_REFUSED(-EBADF, "not open for writing");
	set_members(self, in_order, NR);
	self->a.members = 8;
	EXPECT_EQ(-EFAULT, tree_ioctl(self));
	EXPECT_TRUE(all_progress(self));
}

/* The calling thread without CAP_NET_ADMIN in its effective set. */
static int drop_net_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_NET_ADMIN / 32].effective &= ~(1U << (CAP_NET_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * CKPT_CHECKPOINT_PEERS_AWAY (TCP ends whose other end is on another
 * node, for ckptd to join) is root's: without CAP_NET_ADMIN, refused
 * before anything is looked at, and the tree runs on. The single-process
 * ioctl does not take it.
 */
TEST_F(tree, peers_away_needs_cap_net_admin)
{
	struct ckpt_checkpoint one = { .flags = CKPT_CHECKPOINT_PEERS_AWAY };

	CKPT_SETUP_SKIPPED();
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_PEERS_AWAY;
	ASSERT_EQ(0, drop_net_admin());
	EXPECT_REFUSED(-EPERM, "CAP_NET_ADMIN");
	one.pid = self->pid[0];
	one.fd = self->m[0].fd;
	EXPECT_EQ(-EINVAL, ioctl(self->dev, CKPT_IOC_CHECKPOINT, &one) ? -errno : 0);
}

/*
 * CKPT_CHECKPOINT_WAITING_AWAY (connections waiting to be accepted whose
 * other end is on another node, for ckptd to join) only with
 * CKPT_CHECKPOINT_PEERS_AWAY, and without CAP_NET_ADMIN not at all: each
 * refused before anything is looked at, the tree running on. The
 * single-process ioctl does not take it. What it captures:
 * vm-tests/tests/ckptd_nodes.sh.
 */
TEST_F(tree, waiting_away_needs_peers_away)
{
	struct ckpt_checkpoint one = {
		.flags = CKPT_CHECKPOINT_PEERS_AWAY | CKPT_CHECKPOINT_WAITING_AWAY,
	};

	CKPT_SETUP_SKIPPED();
	set_members(self, in_order, NR);
	self->a.flags = CKPT_CHECKPOINT_WAITING_AWAY;
	EXPECT_REFUSED(-EINVAL, "CKPT_CHECKPOINT_WAITING_AWAY needs CKPT_CHECKPOINT_PEERS_AWAY");
	one.pid = self->pid[0];
	one.fd = self->m[0].fd;
	EXPECT_EQ(-EINVAL, ioctl(self->dev, CKPT_IOC_CHECKPOINT, &one) ? -errno : 0);
	self->a.flags = CKPT_CHECKPOINT_PEERS_AWAY | CKPT_CHECKPOINT_WAITING_AWAY;
	ASSERT_EQ(0, drop_net_admin());
	EXPECT_REFUSED(-EPERM, "CAP_NET_ADMIN");
}

/*
 * CKPT_CHECKPOINT_LOCAL_FILES (tmpfs files by content, ckptd's for a job):
 * a tree's, taken by any user; the single-process ioctl does not take it.
 * What it carries: vm-tests/tests/tree_tmpfs.sh.
 */
TEST_F(tree, local_files_is_a_trees)
{
	struct ckpt_checkpoint one = { .flags = CKPT_CHECKPOINT_LOCAL_FILES };
	int i;

	CKPT_SETUP_SKIPPED();
	self->a.flags = CKPT_CHECKPOINT_LOCAL_FILES;
	ASSERT_EQ(0, tree_ioctl(self)) TH_LOG("%s", self->msg);
	for (i = 0; i < NR; i++)
		EXPECT_TRUE(inspect_ok(self->image[i])) TH_LOG("image %d", i);
	EXPECT_TRUE(all_progress(self));
	one.pid = self->pid[0];
	one.fd = self->m[0].fd;
	EXPECT_EQ(-EINVAL, ioctl(self->dev, CKPT_IOC_CHECKPOINT, &one) ? -errno : 0);
}

TEST_HARNESS_MAIN
