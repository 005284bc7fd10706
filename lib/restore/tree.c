// SPDX-License-Identifier: GPL-2.0
/*
 * Restarting a process tree from its directory (treedir.h).
 *
 * Every image is read and verified first, and must agree with the
 * manifest and with the others (one id, its place, its parent). Then the
 * tree is rebuilt in a new pid namespace, where its old pids are free
 * whatever runs on the machine now (Documentation/decisions.md, "Process
 * trees restart in a pid namespace of their own"): the restarter forks a
 * small init, pid 1 of the namespace, which forks the root with the root's
 * pid (and, once the root is up, the other roots of several trees taken
 * as one: CKPT_TREE_ROOT); every member forks its own children with their
 * pids, so that
 * parents and children are as they were, and then restarts itself as a
 * single process restarts (restore.c). Every member waits at one barrier
 * before its threads are made and the engine takes it over, so a failure
 * up to there (a damaged image, a file that cannot be opened, a limit)
 * leaves no member running: the restarter kills the namespace. The init
 * stays to reap what the tree leaves to it, reports the root's wait
 * status to the restarter and forwards the signals the restarter is sent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "restore_int.h"
#include "treedir.h"

/* The init's status when a page server failed: it ended the namespace. */
#define HOLDER_SERVER_FAILED	3

/* How often (a millisecond apart) a member tries to join a group not made yet. */
#define GROUP_TRIES	3000

/* How long the members have to reach the barrier and to be handed over. */
#define TREE_READY_MS	60000

struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* One tree's restart: the restarter's, and what every member inherits. */
struct tree_restart {
	const struct ckpt_restore_opts *opts;
	struct ckpt_tree t;
	struct ckpt_restore_opts *mopts;	/* [nr]: each member's image */
	char (*paths)[PATH_MAX];		/* [nr] */
	struct restore *r;			/* [nr] */
	struct restore_shared *shared;		/* [nr_shared] */
	uint32_t nr_shared;
	int errpipe[2], ready[2], go[2], status[2];
	int hold[2];		/* @opts->held: the engine's hold, a socketpair */
	int root_up[2];		/* several roots: member 0 made its groups, IPC */
	int root_pidfd;		/* member 0's, for the IPC namespace it made */
	uint32_t nr_roots;	/* member 0 and the CKPT_TREE_ROOT ones */
	int (*lazy_sv)[2];			/* [nr], --lazy: userfaultfd pairs */
	pid_t *servers;				/* [nr], --lazy: who fills whom */
	pid_t holder;				/* in the restarter's namespace */
	char addrmap[PATH_MAX];			/* its address map's file, or "" */
};

static volatile sig_atomic_t forward_to;	/* a pid, or 0 */

/*
 * What a terminal sends reaches the tree's foreground members itself, but
 * its hangup only its session's leader: a restarter that leads the
 * session of the tree's terminal (ckptd's, daemon/restart.c) passes that
 * on.
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (forward_to && (si->si_code != SI_KERNEL ||
			   (sig == SIGHUP && getsid(0) == getpid())))
		kill(forward_to, sig);
}

static const int forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP,
};
#define FORWARDED	(sizeof(forwarded) / sizeof(forwarded[0]))

/*
 * On: @to gets the signals this process gets, those held back (blocked)
 * until now too. Off: they do what they did before (in a member, what its
 * maker's maker had, until it restores its own; a member's children
 * inherit that).
 */
static void forward_signals(pid_t to, bool on)
{
	static struct sigaction before[FORWARDED];
	static bool saved;
	struct sigaction sa = { .sa_flags = SA_SIGINFO };
	sigset_t set;
	size_t i;

	forward_to = to;
	sa.sa_sigaction = forward;
	sigemptyset(&set);
	for (i = 0; i < FORWARDED; i++) {
		sigaddset(&set, forwarded[i]);
		if (on)
			sigaction(forwarded[i], &sa, saved ? NULL : &before[i]);
		else if (saved)
			sigaction(forwarded[i], &before[i], NULL);
	}
	if (on)
		sigprocmask(SIG_UNBLOCK, &set, NULL);
	saved = on;
}

/* clone3() with pid @want (0: any); with CLONE_PIDFD, its pidfd in *@pidfd. */
static pid_t clone_pidfd(pid_t want, uint64_t flags, int exit_signal,
			 int *pidfd)
{
	struct clone3_args ca = {
		.flags = flags,
		.pidfd = (uintptr_t)pidfd,
		.exit_signal = exit_signal,
		.set_tid = want ? (unsigned long)&want : 0,
		.set_tid_size = want ? 1 : 0,
	};

	fflush(NULL);
	return syscall(SYS_clone3, &ca, sizeof(ca));
}

static pid_t clone_pid(pid_t want, uint64_t flags, int exit_signal)
{
	return clone_pidfd(want, flags, exit_signal, NULL);
}

/* In a member or the init: says why, and leaves. */
static void __attribute__((noreturn, format(printf, 2, 3)))
tree_fail(struct tree_restart *tr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	if (write(tr->errpipe[1], buf, len) < 0)
		_exit(2);
	_exit(1);
}

/* Member @i's process group and session, where the tree had them. */
static void join_groups(struct tree_restart *tr, uint32_t i)
{
	const struct ckpt_img_tree *tree = &tr->r[i].img.tree;
	pid_t pid = tr->t.m[i].pid;
	uint32_t j;

	if (tree->sid == (uint32_t)pid) {
		if (setsid() < 0)
			tree_fail(tr, "pid %d: cannot lead its session again: %s",
				  pid, strerror(errno));
		return;
	}
	if (tree->pgid == (uint32_t)pid) {
		if (setpgid(0, 0))
			tree_fail(tr, "pid %d: cannot lead its process group again: %s",
				  pid, strerror(errno));
		return;
	}
	/*
	 * A group another member leads; else it stays in the restarter's.
	 * That member is made by another process, which may not have made
	 * it, or it its group, yet: a while, bounded.
	 */
	for (j = 0; j < tr->t.nr; j++) {
		int tries = GROUP_TRIES;

		if (tr->t.m[j].pid != (pid_t)tree->pgid || j == i)
			continue;
		while (setpgid(0, tree->pgid) && (errno == EPERM || errno == ESRCH) &&
		       --tries)
			usleep(1000);
		if (getpgrp() != (pid_t)tree->pgid)
			tree_fail(tr, "pid %d: cannot join process group %u: %s",
				  pid, tree->pgid, strerror(errno));
	}
}

/*
 * Member @i's controlling terminal, where it was one of the tree's ptys
 * (CKPT_TREE_CTTY, checked by check_cttys()): its session's leader takes
 * the new pair's slave, which the children it makes next inherit, and a
 * member of the terminal's foreground group gives that group the
 * foreground again, as a job-control shell would (deaf to SIGTTOU
 * meanwhile: it may be in the background until then).
 */
static void take_ctty(struct tree_restart *tr, uint32_t i)
{
	const struct ckpt_img_tree *t = &tr->r[i].img.tree;
	const struct restore_shared *s;
	pid_t pid = tr->t.m[i].pid;
	sigset_t ttou, old;
	int ret;

	if (!(t->flags & CKPT_TREE_CTTY))
		return;
	s = restore_find_shared(tr->shared, tr->nr_shared, CKPT_FILE_PTY, 0,
				t->ctty);
	if (!s)
		tree_fail(tr, "pid %d: its controlling terminal /dev/pts/%u was not made again",
			  pid, t->ctty);
	if (t->sid == (uint32_t)pid && ioctl(s->fd[1], TIOCSCTTY, 0))
		tree_fail(tr, "pid %d: cannot take the new /dev/pts/%u as its controlling terminal again: %s",
			  pid, t->ctty, strerror(errno));
	if (!(t->flags & CKPT_TREE_FOREGROUND) || getpgrp() != (pid_t)t->pgid)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	ret = tcsetpgrp(s->fd[1], getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ret)
		tree_fail(tr, "pid %d: cannot give its process group the foreground of /dev/pts/%u again: %s",
			  pid, t->ctty, strerror(errno));
}

static void __attribute__((noreturn)) member(struct tree_restart *tr, uint32_t i);
static void close_shared(struct tree_restart *tr);

/*
 * Member @j, with its pid and exit signal, a child of the caller or, with
 * CLONE_PARENT, of the caller's parent (whose exit signal it then gets).
 */
static void make_member(struct tree_restart *tr, uint32_t j, uint64_t flags)
{
	int sig = tr->r[j].img.proc.exit_signal;
	pid_t pid;

	if (flags & CLONE_PARENT || sig <= 0 || sig >= 65)
		sig = 0;
	pid = clone_pid(tr->t.m[j].pid, flags, sig);
	if (pid < 0)
		tree_fail(tr, "cannot create pid %d: %s", tr->t.m[j].pid,
			  strerror(errno));
	if (!pid)
		member(tr, j);
}

/* Member @i's children, each with its pid; they go on as members. */
static void make_children(struct tree_restart *tr, uint32_t i)
{
	uint32_t j;

	for (j = i + 1; j < tr->t.nr; j++)
		if (tr->t.m[j].parent == i)
			make_member(tr, j, 0);
}

/*
 * Whether process group @pgid is made again: a member or a zombie child
 * of one leads it. Another (one led by a process outside the tree, as
 * ckpt-run's group is its job's) is not: who was in it stays in its
 * maker's group, the restarter's, as a member does (join_groups()).
 */
static bool group_made(const struct tree_restart *tr, uint32_t pgid)
{
	uint32_t i, k;

	for (i = 0; i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;

		if ((uint32_t)tr->t.m[i].pid == pgid)
			return true;
		for (k = 0; k < img->nr_zombies; k++)
			if (img->zombies[k].pid == pgid)
				return true;
	}
	return false;
}

/*
 * A zombie child again: in its group (@pgid, 0 for its maker's) and
 * session, gone as it went.
 */
static void __attribute__((noreturn)) zombie(const struct ckpt_img_zombie *z,
					     uint32_t pgid)
{
	struct rlimit none = { 0, 0 };
	int sig = z->status & 0x7f;
	sigset_t set;

	if (z->sid == z->pid)
		setsid();
	else if (pgid == z->pid)
		setpgid(0, 0);
	else if (pgid && pgid != (uint32_t)getpgrp())
		setpgid(0, pgid);
	if (!sig)
		_exit((z->status >> 8) & 0xff);
	/* No core: a dump would be a file the original did not leave. */
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), sig);
	_exit(127);	/* a signal that does not end a process: see below */
}

/*
 * Member @i's zombie children, each made with its pid and left unreaped
 * once it has ended as the image says: the member's wait() reaps them
 * after the restart. Their SIGCHLD goes nowhere (the image's pending
 * signals are queued again later, as they were).
 */
static void make_zombies(struct tree_restart *tr, uint32_t i)
{
	const struct ckpt_image *img = &tr->r[i].img;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t chld;
	uint32_t j;

	if (!img->nr_zombies)
		return;
	sigaction(SIGCHLD, &dfl, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	for (j = 0; j < img->nr_zombies; j++) {
		const struct ckpt_img_zombie *z = &img->zombies[j];
		uint32_t pgid = group_made(tr, z->pgid) ? z->pgid : 0;
		int sig = z->status & 0x7f, code;
		siginfo_t si = {};
		pid_t pid;

		pid = clone_pid(z->pid, 0, z->exit_signal);
		if (pid < 0)
			tree_fail(tr, "pid %d: cannot make its zombie child %u again: %s",
				  tr->t.m[i].pid, z->pid, strerror(errno));
		if (!pid)
			zombie(z, pgid);
		if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT | __WALL))
			tree_fail(tr, "pid %d: its zombie child %u is lost: %s",
				  tr->t.m[i].pid, z->pid, strerror(errno));
		code = si.si_code == CLD_EXITED ? si.si_status << 8 :
		       si.si_status;
		if (code != (sig ? sig : (int)z->status))
			tree_fail(tr, "pid %d: its zombie child %u cannot end with status %#x again",
				  tr->t.m[i].pid, z->pid, z->status);
		if (pgid && getpgid(pid) != (pid_t)pgid)
			tree_fail(tr, "pid %d: its zombie child %u cannot join process group %u again",
				  tr->t.m[i].pid, z->pid, pgid);
	}
}

/*
 * Which root makes root @j (member 0 or CKPT_TREE_ROOT): the root leading
 * its session, when another root does, with CLONE_PARENT (so that it is in
 * that session, and the init's child still); else the init (-1), in the
 * restarter's session or, leading one, its own. A root in the session of
 * a member that is no root is refused (prepare()).
 */
static int root_maker(const struct tree_restart *tr, uint32_t j)
{
	uint32_t sid = tr->r[j].img.tree.sid, k;

	if (!j || sid == (uint32_t)tr->t.m[j].pid)
		return -1;
	for (k = 0; k < tr->t.nr; k++)
		if (tr->t.m[k].pid == (pid_t)sid && k != j)
			return k;
	return -1;
}

static bool is_root(const struct tree_restart *tr, uint32_t i)
{
	return tr->t.m[i].parent == CKPT_TREE_NO_PARENT;
}

/*
 * A root besides member 0 (CKPT_TREE_ROOT) that the init made, once member
 * 0 had made its groups and its IPC namespace: in that namespace too (one
 * a root made inherits it).
 */
static void join_root_ipc(struct tree_restart *tr, uint32_t i)
{
	if (!(tr->r[i].img.tree.flags & CKPT_TREE_ROOT) || tr->root_pidfd < 0 ||
	    !restore_has_sysv(&tr->r[0].img))
		return;
	if (setns(tr->root_pidfd, CLONE_NEWIPC))
		tree_fail(tr, "pid %d: cannot join the IPC namespace of pid %d: %s",
			  tr->t.m[i].pid, tr->t.m[0].pid, strerror(errno));
}

/* Member 0's word to the init that the other roots may come (tr->root_up). */
static void root_up(struct tree_restart *tr, uint32_t i)
{
	if (tr->root_up[0] < 0)
		return;
	if (!i && write(tr->root_up[1], "", 1) != 1)
		tree_fail(tr, "pid %d: cannot tell the tree's init it is up: %s",
			  tr->t.m[0].pid, strerror(errno));
	close(tr->root_up[0]);
	close(tr->root_up[1]);
	if (tr->root_pidfd >= 0)
		close(tr->root_pidfd);
	tr->root_up[0] = tr->root_up[1] = tr->root_pidfd = -1;
}

/* The roots root @i makes (root_maker()), once its own children are made. */
static void make_roots_of(struct tree_restart *tr, uint32_t i)
{
	uint32_t j;

	/* The init's children, as the originals were no member's. */
	for (j = 1; is_root(tr, i) && j < tr->t.nr; j++)
		if (is_root(tr, j) && root_maker(tr, j) == (int)i)
			make_member(tr, j, CLONE_PARENT);
}

/* Member @i, with its pid and parent: its children, then itself. */
static void __attribute__((noreturn)) member(struct tree_restart *tr, uint32_t i)
{
	struct restore *r = &tr->r[i];

	forward_signals(0, false);
	join_root_ipc(tr, i);
	join_groups(tr, i);
	take_ctty(tr, i);
	/* Its IPC namespace, the tree's alone: its objects, before any child. */
	if (!i && restore_has_sysv(&r->img)) {
		struct ckpt_err err = {};

		if (unshare(CLONE_NEWIPC))
			tree_fail(tr, "pid %d: cannot make an IPC namespace: %s",
				  tr->t.m[i].pid, strerror(errno));
		if (restore_make_sysv(r, &err))
			tree_fail(tr, "pid %d: %s", tr->t.m[i].pid, err.msg);
		r->sysv_root = true;
	}
	/* Before its children: orphans below it come to it, as they did. */
	if ((r->img.tree.flags & CKPT_TREE_SUBREAPER) &&
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		tree_fail(tr, "pid %d: cannot be a child subreaper again: %s",
			  tr->t.m[i].pid, strerror(errno));
	root_up(tr, i);
	make_children(tr, i);
	make_zombies(tr, i);
	make_roots_of(tr, i);
	r->member = tr->t.m[i].pid;
	if (tr->lazy_sv)
		r->lazy_sock = tr->lazy_sv[i][1];
	r->errpipe = tr->errpipe[1];
	r->ready_fd = tr->ready[1];
	r->go_fd = tr->go[0];
	r->hold_fd = tr->hold[1];
	restore_child(r);
}

/* Both ends of the engine's hold, where this process has them. */
static void close_hold(struct tree_restart *tr)
{
	uint32_t i;

	for (i = 0; i < 2; i++) {
		if (tr->hold[i] >= 0)
			close(tr->hold[i]);
		tr->hold[i] = -1;
	}
}

/*
 * --lazy: one page server per member, a child of the tree's init, brings
 * that member's memory in from its image (restore_serve_lazy()) once the
 * member hands its userfaultfd over, side by side with the others. The
 * members are restarted with CKPT_RESTART_LAZY_UNTIED: no death signal
 * ties one to its parent, another member. Instead a server that fails (it
 * says why, and kills its member) or ends by a signal ends the init, and
 * with it every process of the namespace: no member runs on reading zeros
 * where its memory was. A server is deaf to the signals the restarter
 * forwards: they are the tree's.
 */
/*
 * A server holds its member's image, /dev/ckpt and socket, and the error
 * pipe's read end: nothing of the tree (a pipe's write end held here would
 * keep its reader from the end of its data) nor of the other members.
 */
static void keep_server(struct tree_restart *tr, uint32_t i)
{
	uint32_t j;

	close_shared(tr);
	close(tr->errpipe[1]);
	close(tr->ready[1]);
	close(tr->go[0]);
	close(tr->status[1]);
	close_hold(tr);
	close(tr->lazy_sv[i][1]);
	for (j = 0; j < tr->t.nr; j++) {
		if (j == i)
			continue;
		close(tr->r[j].fd);
		close(tr->r[j].dev);
		close(tr->lazy_sv[j][0]);
		close(tr->lazy_sv[j][1]);
	}
}

/*
 * A server's wait for the engine to have taken every member over (its
 * mappings registered with the userfaultfd: before, a copy would find
 * nothing to fill): the end of the error pipe, whose write ends go with
 * each hand-over; it reads nothing, the restarter does. Whether they were.
 */
static bool handed_over(const struct tree_restart *tr)
{
	struct pollfd p = { .fd = tr->errpipe[0], .events = POLLIN };

	for (;;) {
		int n = poll(&p, 1, 2 * TREE_READY_MS);

		if (n < 0 && errno == EINTR)
			continue;
		return n > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN);
	}
}

static void start_servers(struct tree_restart *tr)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct ckpt_err e = {};
	uint32_t i, k;
	sem_t *gate;
	int ret;

	/*
	 * Bringing pages in behind takes every CPU it gets: the servers take
	 * turns at it, as many at a time as there are CPUs, so that a
	 * member's fault is not queued behind 31 other servers' copies.
	 */
	gate = mmap(NULL, sizeof(*gate), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (gate == MAP_FAILED ||
	    sem_init(gate, 1, cpus > 1 ? (unsigned int)cpus : 1))
		tree_fail(tr, "cannot make the page servers' semaphore: %s",
			  strerror(errno));
	for (i = 0; i < tr->t.nr; i++) {
		fflush(NULL);
		tr->servers[i] = fork();
		if (tr->servers[i] < 0)
			tree_fail(tr, "cannot start the page server of pid %d: %s",
				  tr->t.m[i].pid, strerror(errno));
		if (tr->servers[i])
			continue;
		for (k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
			signal(forwarded[k], SIG_IGN);
		/* Its note may go to a terminal the tree has the foreground of. */
		signal(SIGTTOU, SIG_IGN);
		keep_server(tr, i);
		if (!handed_over(tr))
			_exit(0);	/* the restarter ends the namespace */
		tr->r[i].member = tr->t.m[i].pid;
		tr->r[i].lz.bg_gate = gate;
		ret = restore_serve_lazy(&tr->r[i], tr->lazy_sv[i][0], &e);
		if (ret)
			ckpt_notef(tr->opts, "%s: %s", tr->paths[i], e.msg);
		_exit(ret ? 1 : 0);
	}
}

/* Whether @pid is a page server that did not bring its member's memory in. */
static bool server_failed(const struct tree_restart *tr, pid_t pid, int st)
{
	uint32_t i;

	for (i = 0; tr->servers && i < tr->t.nr; i++)
		if (tr->servers[i] == pid)
			return !WIFEXITED(st) || WEXITSTATUS(st);
	return false;
}

/*
 * The roots besides member 0 (CKPT_TREE_ROOT), children of the init as
 * they were of no member: once member 0 is up (its process group, which
 * they may join, and its IPC namespace, which they share, are made).
 */
static void make_other_roots(struct tree_restart *tr)
{
	uint32_t j;
	ssize_t n;
	char up;

	if (tr->root_up[0] < 0)
		return;
	close(tr->root_up[1]);
	tr->root_up[1] = -1;
	while ((n = read(tr->root_up[0], &up, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);	/* member 0 failed, and said why */
	for (j = 1; j < tr->t.nr; j++)
		if (is_root(tr, j) && root_maker(tr, j) < 0)
			make_member(tr, j, 0);
	close(tr->root_up[0]);
	if (tr->root_pidfd >= 0)
		close(tr->root_pidfd);
	tr->root_up[0] = tr->root_pidfd = -1;
}

/*
 * pid 1 of the tree's namespace: forks the root (and the other roots;
 * --lazy, the page servers), then reaps whatever ends there until nothing
 * is left, the root's status going to the restarter.
 */
static void __attribute__((noreturn)) holder(struct tree_restart *tr)
{
	pid_t root = tr->t.m[0].pid, pid;
	const char *what;
	uint32_t i;
	int st;

	close(tr->ready[0]);
	close(tr->go[1]);
	close(tr->status[0]);
	forward_signals(root, true);
	if (ckpt_restore_own_proc(&what) < 0)
		tree_fail(tr, "the tree's init: %s: %s", what, strerror(errno));
	pid = clone_pidfd(root, tr->root_up[0] >= 0 ? CLONE_PIDFD : 0, SIGCHLD,
			  &tr->root_pidfd);
	if (pid < 0)
		tree_fail(tr, "cannot create pid %d: %s", root, strerror(errno));
	if (!pid)
		member(tr, 0);
	make_other_roots(tr);
	if (tr->lazy_sv)
		start_servers(tr);
	close(tr->errpipe[0]);
	for (i = 0; i < tr->t.nr; i++) {
		close(tr->r[i].fd);
		close(tr->r[i].dev);
		if (tr->lazy_sv) {
			close(tr->lazy_sv[i][0]);
			close(tr->lazy_sv[i][1]);
		}
	}
	close_shared(tr);
	close(tr->errpipe[1]);
	close(tr->ready[1]);
	close(tr->go[0]);
	/* The members' end of the hold sees the restarter's go, or its end. */
	close_hold(tr);
	/* A restarter gone does not end the trees that outlive the root. */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		pid = waitpid(-1, &st, __WALL);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			_exit(0);
		/*
		 * The root's status, once: its pid may come back to a process
		 * of another tree, which is not the root. The signals the
		 * restarter gets go nowhere then (the handlers stay, so that
		 * none ends the init and the trees with it).
		 */
		if (pid == root) {
			/* A restarter gone has nobody to tell. */
			ssize_t told = write(tr->status[1], &st, sizeof(st));

			(void)told;
			close(tr->status[1]);
			root = 0;
			forward_to = 0;
		}
		if (server_failed(tr, pid, st))
			_exit(HOLDER_SERVER_FAILED);
	}
}

/* Whether a member's image has the pty numbered @index. */
static bool has_pty(const struct tree_restart *tr, uint32_t index)
{
	uint32_t i, k;

	for (i = 0; i < tr->t.nr; i++)
		for (k = 0; k < tr->r[i].img.nr_ptys; k++)
			if (tr->r[i].img.ptys[k].index == index)
				return true;
	return false;
}

/*
 * The members' controlling terminals (CKPT_TREE_CTTY): each a pty of the
 * tree's, and its session leader's, a member marked with the same.
 */
static int check_cttys(const struct tree_restart *tr, struct ckpt_err *err)
{
	const struct ckpt_img_tree *t, *lt;
	uint32_t i, l;

	for (i = 0; i < tr->t.nr; i++) {
		t = &tr->r[i].img.tree;
		if (!(t->flags & CKPT_TREE_CTTY))
			continue;
		if (!has_pty(tr, t->ctty))
			return ckpt_err_set(err, EBADMSG, "%s: pid %d: its controlling terminal /dev/pts/%u is no pseudo-terminal of the tree's images",
					    tr->paths[i], tr->t.m[i].pid, t->ctty);
		for (l = 0; l < tr->t.nr && tr->t.m[l].pid != (pid_t)t->sid; l++)
			;
		lt = l < tr->t.nr ? &tr->r[l].img.tree : NULL;
		if (!lt || !(lt->flags & CKPT_TREE_CTTY) || lt->ctty != t->ctty)
			return ckpt_err_set(err, EBADMSG, "%s: pid %d: its controlling terminal /dev/pts/%u is not that of its session's leader, pid %u",
					    tr->paths[i], tr->t.m[i].pid, t->ctty, t->sid);
	}
	return 0;
}

/* Every member's image read, verified and checked; /dev/ckpt open for each. */
static int prepare(struct tree_restart *tr, struct ckpt_err *err)
{
	uint32_t i;
	int ret;

	tr->mopts = calloc(tr->t.nr, sizeof(*tr->mopts));
	tr->paths = calloc(tr->t.nr, sizeof(*tr->paths));
	tr->r = calloc(tr->t.nr, sizeof(*tr->r));
	if (!tr->mopts || !tr->paths || !tr->r)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < tr->t.nr; i++)
		restore_init(&tr->r[i], tr->opts);
	if (tr->opts->lazy) {
		tr->lazy_sv = malloc(tr->t.nr * sizeof(*tr->lazy_sv));
		tr->servers = calloc(tr->t.nr, sizeof(*tr->servers));
		if (!tr->lazy_sv || !tr->servers)
			return ckpt_err_set(err, ENOMEM, "out of memory");
		memset(tr->lazy_sv, -1, tr->t.nr * sizeof(*tr->lazy_sv));
	}
	for (i = 0; i < tr->t.nr; i++) {
		if (ckpt_tree_image_path(tr->opts->image, &tr->t, i, tr->paths[i],
					 sizeof(tr->paths[i])))
			return ckpt_err_set(err, ENAMETOOLONG, "path too long: %s",
					    tr->opts->image);
		tr->mopts[i] = *tr->opts;
		tr->mopts[i].image = tr->paths[i];
		tr->r[i].opts = &tr->mopts[i];
		ret = tr->lazy_sv ? restore_prepare_lazy(&tr->r[i], tr->lazy_sv[i], err) : 0;
		if (!ret)
			ret = restore_prepare(&tr->r[i], err);
		if (!ret)
			ret = ckpt_tree_check(&tr->t, i, &tr->r[i].img,
					      tr->paths[i], err);
		if (!ret)
			ret = restore_check_sysv(&tr->r[0].img, i, &tr->r[i].img,
						 tr->paths[i], err);
		if (is_root(tr, i))
			tr->nr_roots++;
		if (!ret && is_root(tr, i) && tr->t.m[i].pid == 1)
			ret = ckpt_err_set(err, EOPNOTSUPP, "%s: a root was pid 1 of its namespace: not supported yet",
					   tr->paths[i]);
		if (!ret && i && is_root(tr, i) && root_maker(tr, i) >= 0 &&
		    !is_root(tr, root_maker(tr, i)))
			ret = ckpt_err_set(err, EOPNOTSUPP, "%s: pid %d, a root, was in the session of pid %d, which is no root: not supported yet",
					   tr->paths[i], tr->t.m[i].pid,
					   tr->t.m[root_maker(tr, i)].pid);
		if (ret)
			return ret;
	}
	return check_cttys(tr, err);
}

/* Whether the tree's table has @kind's @dev:@ino already. */
static bool is_shared(const struct tree_restart *tr, __u32 kind, __u64 dev,
		      __u64 ino)
{
	return restore_find_shared(tr->shared, tr->nr_shared, kind, dev, ino);
}

/* @fd, moved above the standard descriptors (-errno passes through). */
static int above_stdio(int fd, struct ckpt_err *err)
{
	int above;

	if (fd < 0 || fd > 2)
		return fd;
	above = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	if (above < 0)
		return ckpt_err_set(err, errno, "fcntl: %s", strerror(errno));
	return above;
}

/* Whether a member after @i holds file object @o of member @i's image. */
static bool held_after(const struct tree_restart *tr, uint32_t i,
		       const struct ckpt_img_fileobj *o)
{
	uint32_t j, k;

	for (j = i + 1; j < tr->t.nr; j++) {
		const struct ckpt_image *img = &tr->r[j].img;

		for (k = 0; k < img->nr_fileobjs; k++)
			if (img->fileobjs[k].kind == o->kind &&
			    img->fileobjs[k].dev == o->dev &&
			    img->fileobjs[k].ino == o->ino)
				return true;
	}
	return false;
}

/*
 * Records @fd as the tree's one open file of the object (@kind, @dev,
 * @ino), made from member @holder's image.
 */
static void add_shared(struct tree_restart *tr, uint32_t holder,
		       uint32_t kind, uint64_t dev, uint64_t ino, int fd)
{
	tr->shared[tr->nr_shared++] = (struct restore_shared){
		.kind = kind, .dev = dev, .ino = ino, .fd = { fd, -1 },
		.holder = holder,
	};
}

/* restore_make_object(): object *@arg of @r's image. */
static int make_object(struct restore *r, const void *arg,
		       struct ckpt_err *err)
{
	return restore_make_object(r, *(const uint32_t *)arg, err);
}

/* Whether @o is a member's deleted executable (restore_is_exe()). */
static bool tree_exe(const struct tree_restart *tr,
		     const struct ckpt_img_fileobj *o)
{
	uint32_t i;

	for (i = 0; i < tr->t.nr; i++)
		if (restore_is_exe(&tr->r[i].img, o))
			return true;
	return false;
}

/*
 * The file objects several members hold (memfds, deleted files, shared
 * anonymous memory, FIFOs unlinked while open), made once from the image
 * of the first that holds them, which alone stores their content: the
 * members map and open this one file, as they did the one they shared.
 * A memfd or deleted file is made as that member's process
 * (restore_as_member()): its user's, as a member's own are, not the
 * restarter's (root's, under ckptd) with the mode the image asks for. An
 * unlinked FIFO and a node-local file are given their user by their own
 * code (localfile.c).
 */
static int make_objects(struct tree_restart *tr, struct ckpt_err *err)
{
	uint32_t i, k;
	int fd;

	for (i = 0; i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;

		for (k = 0; k < img->nr_fileobjs; k++) {
			const struct ckpt_img_fileobj *o = &img->fileobjs[k];

			if ((o->kind == CKPT_FILE_FIFO &&
			     !restore_fifo_deleted(o)) ||
			    is_shared(tr, o->kind, o->dev, o->ino) ||
			    !held_after(tr, i, o))
				continue;
			if (o->kind == CKPT_FILE_FIFO ||
			    o->kind == CKPT_FILE_LOCAL)
				fd = restore_make_object(&tr->r[i], k, err);
			else
				fd = restore_as_member(&tr->r[i], make_object,
						       &k, o->name, err);
			if (fd >= 0 && tree_exe(tr, o))
				fd = restore_object_readonly(o, fd, err);
			fd = above_stdio(fd, err);
			if (fd < 0)
				return fd;
			add_shared(tr, i, o->kind, o->dev, o->ino, fd);
		}
	}
	return 0;
}

/*
 * A memfd's or deleted file's open file several members hold: a new open
 * file of the tree's object (make_objects()), as the first holder's user
 * opens it.
 */
static int open_object_file(struct tree_restart *tr, uint32_t i,
			    const struct ckpt_img_file *f, struct ckpt_err *err)
{
	const struct ckpt_img_fileobj *o = &tr->r[i].img.fileobjs[f->ino];
	const struct restore_shared *sh;

	sh = restore_find_shared(tr->shared, tr->nr_shared, o->kind, o->dev,
				 o->ino);
	if (!sh)
		return ckpt_err_set(err, EBADMSG, "%s: fd %u (%s) is held by several processes, but its %s is not among what the tree shares",
				    tr->paths[i], f->fd, f->path,
				    o->kind == CKPT_FILE_MEMFD ? "memfd" : "file");
	return restore_open_shared_object(&tr->r[i], f, sh->fd[0], err);
}

/*
 * The open files several members hold (CKPT_FILE_TREE_SHARED), opened
 * once from the first holder's image, as its user opens them, or made
 * (an eventfd, a signalfd, a timerfd, an epoll, whose items that holder
 * adds). A memfd's or deleted file's is in the table as
 * RESTORE_SHARED_OBJFILE, by its number in the tree and its object; a
 * regular file's or directory's by its identity and the open file's
 * number (restore_shared_dev()).
 */
static int open_files(struct tree_restart *tr, struct ckpt_err *err)
{
	uint32_t i, k;
	int fd;

	for (i = 0; i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;

		for (k = 0; k < img->nr_files; k++) {
			const struct ckpt_img_file *f = &img->files[k];
			bool obj = f->kind == CKPT_FILE_MEMFD ||
				   f->kind == CKPT_FILE_DELETED;
			__u32 kind = obj ? RESTORE_SHARED_OBJFILE : f->kind;
			__u64 ino = obj ? img->fileobjs[f->ino].ino : f->ino;
			__u64 dev = restore_shared_dev(f);

			if (!(f->flags & CKPT_FILE_TREE_SHARED) ||
			    is_shared(tr, kind, dev, ino))
				continue;
			if (obj)
				fd = open_object_file(tr, i, f, err);
			else if (f->kind == CKPT_FILE_EVENTFD)
				fd = restore_make_eventfd(f, err);
			else if (f->kind == CKPT_FILE_SIGNALFD)
				fd = restore_make_signalfd(f, err);
			else if (f->kind == CKPT_FILE_TIMERFD)
				fd = restore_make_timerfd(img, f, err);
			else if (f->kind == CKPT_FILE_EPOLL)
				fd = restore_make_epoll(f, err);
			else
				fd = restore_open_shared(&tr->r[i], f, err);
			fd = above_stdio(fd, err);
			if (fd < 0)
				return fd;
			add_shared(tr, i, kind, dev, ino, fd);
		}
	}
	return 0;
}

/*
 * The socket pairs between (and within) members and their listening
 * sockets, and the TCP sockets, made once for all.
 */
static int make_usocks(struct tree_restart *tr, struct ckpt_err *err)
{
	struct ckpt_image **imgs = calloc(tr->t.nr, sizeof(*imgs));
	uint64_t *closed = calloc(tr->opts->nr_closed ?: 1, sizeof(*closed));
	struct restore_remote_waits waits = { 0 };
	uint32_t i, from = tr->nr_shared;
	int ret;

	if (!imgs || !closed) {
		free(imgs);
		free(closed);
		return ckpt_err_set(err, ENOMEM, "out of memory");
	}
	for (i = 0; i < tr->t.nr; i++)
		imgs[i] = &tr->r[i].img;
	ret = restore_make_usocks(imgs, tr->t.nr, tr->shared, &tr->nr_shared,
				  err);
	if (!ret)
		ret = restore_remote_waits(&tr->t, imgs, tr->opts, &waits, err);
	if (!ret)
		ret = restore_closed_inos(&tr->t, imgs, tr->opts, closed, err);
	if (ret >= 0)
		ret = restore_make_channels(&(struct restore_chans){
			.imgs = imgs, .n = tr->t.nr, .sh = tr->shared,
			.nr = &tr->nr_shared, .o = tr->opts, .closed = closed,
			.nr_closed = ret, .waits = &waits, .err = err });
	restore_remote_waits_free(&waits);
	free(closed);
	if (!ret)
		ret = restore_make_ptys(imgs, tr->t.nr, tr->shared,
					&tr->nr_shared, err);
	/*
	 * A listening socket, by the first member that holds it, and the
	 * connections that waited on it.
	 */
	for (i = 0; !ret && i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;
		uint32_t k;
		int fd;

		for (k = 0; !ret && k < img->nr_ulistens; k++) {
			if (is_shared(tr, CKPT_FILE_UNIX, 0, img->ulistens[k].ino))
				continue;
			fd = restore_make_listener(&tr->r[i], &img->ulistens[k],
						   err);
			if (fd < 0) {
				ret = fd;
				break;
			}
			add_shared(tr, i, CKPT_FILE_UNIX, 0, img->ulistens[k].ino, fd);
			ret = restore_make_pending(img, &img->ulistens[k], imgs,
						   tr->t.nr, tr->shared,
						   &tr->nr_shared, err);
		}
	}
	/* Sockets with names: all bound before any connects to one. */
	for (i = 0; !ret && i < tr->t.nr; i++)
		ret = restore_make_unames(&tr->r[i], &tr->r[i].img, tr->shared,
					  &tr->nr_shared, err);
	for (i = 0; !ret && i < tr->t.nr; i++)
		ret = restore_connect_unames(&tr->r[i], &tr->r[i].img,
					     tr->shared, tr->nr_shared, err);
	free(imgs);
	for (i = from; !ret && i < tr->nr_shared; i++) {
		tr->shared[i].fd[0] = above_stdio(tr->shared[i].fd[0], err);
		if (tr->shared[i].fd[0] < 0)
			ret = tr->shared[i].fd[0];
	}
	return ret;
}

/*
 * What the members share, made before any of them exists (restore_int.h):
 * the restarter's standard descriptors, every pipe of the tree, with its
 * content, once (each member holding an end has the same PIPE section),
 * the file objects several members hold and the open files they share.
 */
static int make_shared(struct tree_restart *tr, struct ckpt_err *err)
{
	struct restore_shared *sh;
	uint32_t i, k, n = 3;
	int fd, ret;

	/* Each section that makes something shared adds at most this. */
	for (i = 0; i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;

		n += img->nr_pipes + img->nr_fileobjs + img->nr_files +
		     2 * img->nr_usocks + img->nr_ulistens + img->nr_upends +
		     img->nr_tcps + img->nr_ptys + img->nr_unames;
	}
	tr->shared = calloc(n, sizeof(*tr->shared));
	if (!tr->shared)
		return ckpt_err_set(err, ENOMEM, "out of memory");
	for (fd = 0; fd <= 2; fd++) {
		sh = &tr->shared[tr->nr_shared];
		sh->fd[0] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		sh->fd[1] = -1;
		sh->kind = CKPT_FILE_STDIO;
		sh->ino = fd;
		if (sh->fd[0] >= 0)
			tr->nr_shared++;
	}
	for (i = 0; i < tr->t.nr; i++) {
		const struct ckpt_image *img = &tr->r[i].img;

		for (k = 0; k < img->nr_pipes; k++) {
			if (is_shared(tr, CKPT_FILE_PIPE, 0, img->pipes[k]->ino))
				continue;
			sh = &tr->shared[tr->nr_shared];
			ret = restore_make_pipe(img->pipes[k], 3, sh->fd);
			if (ret)
				return ckpt_err_set(err, -ret, "%s: cannot re-create pipe:[%llu]: %s",
						    tr->paths[i],
						    (unsigned long long)img->pipes[k]->ino,
						    strerror(-ret));
			sh->kind = CKPT_FILE_PIPE;
			sh->ino = img->pipes[k]->ino;
			tr->nr_shared++;
		}
	}
	ret = make_objects(tr, err);
	if (!ret)
		ret = open_files(tr, err);
	if (!ret)
		ret = make_usocks(tr, err);
	if (ret)
		return ret;
	for (i = 0; i < tr->t.nr; i++) {
		tr->r[i].shared = tr->shared;
		tr->r[i].nr_shared = tr->nr_shared;
	}
	return 0;
}

/*
 * Once every member has opened its descriptors of them (at the barrier):
 * the shared objects' modes and seals, before the engine maps them.
 */
static int finish_objects(struct tree_restart *tr, struct ckpt_err *err)
{
	const struct ckpt_img_fileobj *o;
	uint32_t i, j, k;
	int ret;

	for (i = 0; i < tr->nr_shared; i++) {
		const struct restore_shared *sh = &tr->shared[i];

		/* Of FIFOs, only those made anew (unlinked) are the tree's. */
		if (sh->kind != CKPT_FILE_MEMFD && sh->kind != CKPT_FILE_DELETED &&
		    sh->kind != CKPT_FILE_SHMEM && sh->kind != CKPT_FILE_LOCAL &&
		    sh->kind != CKPT_FILE_FIFO)
			continue;
		for (j = 0, o = NULL; !o && j < tr->t.nr; j++)
			for (k = 0; !o && k < tr->r[j].img.nr_fileobjs; k++)
				if (tr->r[j].img.fileobjs[k].kind == sh->kind &&
				    tr->r[j].img.fileobjs[k].dev == sh->dev &&
				    tr->r[j].img.fileobjs[k].ino == sh->ino)
					o = &tr->r[j].img.fileobjs[k];
		ret = o ? restore_finish_object(o, sh->fd[0], err) : 0;
		if (ret)
			return ret;
	}
	return 0;
}

static void close_shared(struct tree_restart *tr)
{
	uint32_t i;

	for (i = 0; i < tr->nr_shared; i++) {
		close(tr->shared[i].fd[0]);
		if (tr->shared[i].fd[1] >= 0)
			close(tr->shared[i].fd[1]);
	}
	tr->nr_shared = 0;
}

/* Milliseconds left until @end (CLOCK_MONOTONIC), at least 0. */
static int ms_left(const struct timespec *end)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (end->tv_sec - now.tv_sec) * 1000 +
	     (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Waits for a byte from each member on @fd (the ready pipe, or the
 * engine's hold; -1: for the error pipe's end, every member handed over)
 * while nothing comes on the error pipe. @what they are then, for the
 * error of a wait that ran out.
 */
static int wait_members(struct tree_restart *tr, int fd, const char *what,
			const struct timespec *end, struct ckpt_err *err)
{
	uint32_t want = fd >= 0 ? tr->t.nr : 0;
	struct pollfd p[2] = {
		{ .fd = tr->errpipe[0], .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};
	char buf[512];
	ssize_t n;

	for (;;) {
		n = poll(p, 2, ms_left(end));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return ckpt_err_set(err, ETIMEDOUT, "%s: the tree's processes were not all %s within %d s",
					    tr->opts->image, what, TREE_READY_MS / 1000);
		if (p[0].revents) {
			n = read(tr->errpipe[0], buf, sizeof(buf) - 1);
			if (n == 0 && !want)
				return 0;	/* every member's copy closed */
			if (n <= 0)
				return ckpt_err_set(err, EIO, "%s: a process of the tree ended before its restart",
						    tr->opts->image);
			while (n > 0 && buf[n - 1] == '\n')
				n--;
			buf[n] = '\0';
			return ckpt_err_set(err, EIO, "%s: %s", tr->opts->image, buf);
		}
		if (want && p[1].revents) {
			n = read(fd, buf, want < sizeof(buf) ? want : sizeof(buf));
			if (n > 0)
				want -= n;
			if (!want)
				return 0;
		}
	}
}

/*
 * The member whose process group is to get the terminal: one that led a
 * group that was its terminal's foreground, the root first (a terminal
 * of the tree's own is the tree's: take_ctty()). Its pid in
 * the tree's namespace, or 0. Read before the images are let go.
 */
static pid_t foreground_leader(const struct tree_restart *tr)
{
	const struct ckpt_img_tree *t;
	uint32_t i;

	for (i = 0; i < tr->t.nr; i++) {
		t = &tr->r[i].img.tree;
		if ((t->flags & (CKPT_TREE_FOREGROUND | CKPT_TREE_CTTY)) ==
		    CKPT_TREE_FOREGROUND &&
		    t->pgid == (uint32_t)tr->t.m[i].pid)
			return tr->t.m[i].pid;
	}
	return 0;
}

/* The last pid of /proc/PID/status's NSpid: its pid in its namespace. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256], *p;
	pid_t ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = strrchr(line, '\t');
		ns = p ? (pid_t)strtol(p + 1, NULL, 10) : 0;
		break;
	}
	fclose(f);
	return ns;
}

/*
 * The pid in the restarter's namespace of the tree's process @nspid,
 * found among the holder's descendants (ckpt_tree_find(), as `ckpt
 * checkpoint --tree` finds a tree). 0 if not found.
 */
static pid_t host_pid(const struct tree_restart *tr, pid_t nspid)
{
	struct ckpt_err e = {};
	struct ckpt_tree t;
	pid_t found = 0;
	uint32_t i;

	if (ckpt_tree_find(tr->holder, &t, &e))
		return 0;
	for (i = 1; i < t.nr && !found; i++)
		if (ns_pid(t.m[i].pid) == nspid)
			found = t.m[i].pid;
	ckpt_tree_free(&t);
	return found;
}

/*
 * A tree whose foreground group a member led gets the restarter's
 * terminal's foreground for that group, if the restarter has it (BLCR
 * gave a restarted job the restarter's terminal too): what is typed
 * there, Ctrl-C included, goes to the tree's foreground, as before the
 * checkpoint, whether the root leads it or a job a shell in the tree
 * runs. A tree in the restarter's own group has it already. Whether it
 * was handed.
 */
static bool take_terminal(struct tree_restart *tr, pid_t leader)
{
	pid_t pgrp;

	if (!leader || !isatty(0) || tcgetpgrp(0) != getpgrp())
		return false;
	pgrp = host_pid(tr, leader);
	return pgrp > 0 && !tcsetpgrp(0, pgrp);
}

/* The terminal's foreground back to the restarter, from the background. */
static void give_back_terminal(void)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(0, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A byte for each member on @fd (the go pipe, or the hold socket). */
static int release(struct tree_restart *tr, int fd, bool sock,
		   struct ckpt_err *err)
{
	char go[64] = "";
	uint32_t i;
	ssize_t n;

	for (i = 0; i < tr->t.nr; i += n) {
		size_t len = tr->t.nr - i < sizeof(go) ? tr->t.nr - i : sizeof(go);

		n = sock ? send(fd, go, len, MSG_NOSIGNAL) : write(fd, go, len);
		if (n <= 0)
			return ckpt_err_set(err, EIO, "%s: cannot release the tree's processes: %s",
					    tr->opts->image, strerror(errno));
	}
	return 0;
}

/*
 * @opts->held: once every member is whole and held by the engine, the
 * caller's word, then the engine's go; the hold's end closed either way
 * (a member still held then is killed, having run nothing).
 */
static int hold_tree(struct tree_restart *tr, struct timespec *end,
		     struct ckpt_err *err)
{
	struct pollfd p = { .fd = tr->errpipe[0], .events = POLLIN };
	int ret = wait_members(tr, tr->hold[0], "whole", end, err);

	if (!ret)
		ret = tr->opts->held(tr->opts->held_arg, err);
	/* A member killed while the caller waited: none goes then. */
	if (!ret && poll(&p, 1, 0) > 0)
		ret = wait_members(tr, -1, "held", end, err) ?:
		      ckpt_err_set(err, EIO, "%s: a process of the tree ended while held",
				   tr->opts->image);
	if (!ret)
		ret = release(tr, tr->hold[0], true, err);
	close_hold(tr);
	/* The caller's wait (other nodes') is not the members'. */
	clock_gettime(CLOCK_MONOTONIC, end);
	end->tv_sec += TREE_READY_MS / 1000;
	return ret;
}

/* The restarter's side: the barrier, the hand-over, then the root's end. */
static int run_tree(struct tree_restart *tr, int *status, struct ckpt_err *err)
{
	struct timespec end;
	uint32_t i;
	ssize_t n;
	pid_t fg_leader;
	bool fg;
	int ret, st = 0;

	close(tr->errpipe[1]);
	close(tr->ready[1]);
	close(tr->go[0]);
	close(tr->status[1]);
	tr->errpipe[1] = tr->ready[1] = tr->go[0] = tr->status[1] = -1;
	if (tr->hold[1] >= 0)
		close(tr->hold[1]);
	tr->hold[1] = -1;
	if (tr->root_up[0] >= 0) {
		close(tr->root_up[0]);
		close(tr->root_up[1]);
		tr->root_up[0] = tr->root_up[1] = -1;
	}
	ret = restore_addrmap_publish(tr->opts, tr->holder, tr->addrmap,
				      sizeof(tr->addrmap), err);
	if (ret) {
		kill(tr->holder, SIGKILL);
		waitpid(tr->holder, NULL, 0);
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += TREE_READY_MS / 1000;
	ret = wait_members(tr, tr->ready[0], "ready", &end, err);
	if (!ret)
		ret = finish_objects(tr, err);
	/* Read before the images are let go. */
	fg_leader = foreground_leader(tr);
	/* The tree's pipes must see their readers and writers only. */
	for (i = 0; i < tr->t.nr; i++)
		restore_free(&tr->r[i]);
	close_shared(tr);
	if (!ret)
		ret = release(tr, tr->go[1], false, err);
	close(tr->go[1]);
	tr->go[1] = -1;
	if (!ret && tr->hold[0] >= 0)
		ret = hold_tree(tr, &end, err);
	if (!ret)
		ret = wait_members(tr, -1, "restarted", &end, err);
	if (ret) {
		/* Nothing of the tree may run on: its init takes it along. */
		kill(tr->holder, SIGKILL);
		waitpid(tr->holder, NULL, 0);
		return ret;
	}
	if (tr->opts->forward_signals)
		forward_signals(tr->holder, true);
	if (tr->opts->started)
		tr->opts->started(tr->opts->started_arg, tr->holder,
				  host_pid(tr, tr->t.m[0].pid));
	fg = take_terminal(tr, fg_leader);
	do
		n = read(tr->status[0], status, sizeof(*status));
	while (n < 0 && errno == EINTR);
	if (fg)
		give_back_terminal();
	if (tr->opts->forward_signals)
		forward_signals(0, false);
	if (n == sizeof(*status))
		return 0;
	waitpid(tr->holder, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == HOLDER_SERVER_FAILED)
		return ckpt_err_set(err, EIO, "%s: --lazy: a page server ended before its member's memory was all in; the whole tree is killed",
				    tr->opts->image);
	return ckpt_err_set(err, ECHILD, "%s: the tree's init process ended before the root",
			    tr->opts->image);
}

static void tree_free(struct tree_restart *tr)
{
	uint32_t i;
	int *fds[] = { tr->errpipe, tr->ready, tr->go, tr->status, tr->root_up,
		       tr->hold };

	for (i = 0; tr->r && i < tr->t.nr; i++)
		restore_free(&tr->r[i]);
	for (i = 0; tr->lazy_sv && i < tr->t.nr; i++) {
		if (tr->lazy_sv[i][0] >= 0)
			close(tr->lazy_sv[i][0]);
		if (tr->lazy_sv[i][1] >= 0)
			close(tr->lazy_sv[i][1]);
	}
	free(tr->lazy_sv);
	free(tr->servers);
	close_shared(tr);
	free(tr->shared);
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i][0] >= 0)
			close(fds[i][0]);
		if (fds[i][1] >= 0)
			close(fds[i][1]);
	}
	free(tr->r);
	free(tr->paths);
	free(tr->mopts);
	ckpt_tree_free(&tr->t);
}

/* One descriptor per image and per /dev/ckpt: as many as the hard limit allows. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int ckpt_restore_tree(const struct ckpt_restore_opts *opts, int *status,
		      struct ckpt_err *err)
{
	struct tree_restart tr = {
		.opts = opts,
		.errpipe = { -1, -1 }, .ready = { -1, -1 },
		.go = { -1, -1 }, .status = { -1, -1 },
		.root_up = { -1, -1 }, .hold = { -1, -1 }, .root_pidfd = -1,
	};
	int ret;

	ret = ckpt_tree_read(opts->image, &tr.t, err);
	if (ret)
		return ret;
	raise_nofile();
	ret = prepare(&tr, err);
	if (!ret)
		ret = make_shared(&tr, err);
	if (!ret && (pipe2(tr.errpipe, O_CLOEXEC) || pipe2(tr.ready, O_CLOEXEC) ||
		     pipe2(tr.go, O_CLOEXEC) || pipe2(tr.status, O_CLOEXEC) ||
		     (tr.nr_roots > 1 && pipe2(tr.root_up, O_CLOEXEC))))
		ret = ckpt_err_set(err, errno, "pipe: %s", strerror(errno));
	if (!ret && opts->held &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tr.hold))
		ret = ckpt_err_set(err, errno, "socketpair: %s", strerror(errno));
	if (!ret) {
		tr.holder = clone_pid(0, CLONE_NEWPID, SIGCHLD);
		if (tr.holder < 0)
			ret = ckpt_err_set(err, errno, "cannot make the tree's pid namespace: %s%s",
					   strerror(errno), errno == EPERM ?
					   " (it needs CAP_SYS_ADMIN)" : "");
		else if (!tr.holder)
			holder(&tr);
	}
	if (!ret)
		ret = run_tree(&tr, status, err);
	if (*tr.addrmap)
		unlink(tr.addrmap);
	tree_free(&tr);
	return ret;
}
