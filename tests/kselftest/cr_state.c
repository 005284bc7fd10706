// SPDX-License-Identifier: GPL-2.0
/*
 * The process's and its threads' own settings survive a checkpoint and
 * restart, checked by what they do where a test can see that, and by what
 * the kernel reports of them:
 *
 * - process: signal handlers with their flags and masks, rlimits, umask,
 *   personality, comm, the argument and environment areas with the mm
 *   fields that point at them, the auxiliary vector, MADV_DONTFORK and
 *   MADV_DONTDUMP;
 * - each thread: its signal mask, its nice value (raised above the
 *   restarter's, which is not lowered), its scheduling policy (SCHED_IDLE,
 *   SCHED_BATCH, SCHED_FIFO with SCHED_RESET_ON_FORK, which a restarter
 *   without CAP_SYS_NICE does not give), its I/O priority and the CPUs it
 *   may run on, its
 *   sigaltstack (a handler runs on it),
 *   the rseq registration glibc made, its robust-futex list (a robust mutex
 *   its owner leaves locked when it exits after the restart is handed on
 *   with EOWNERDEAD instead of hanging), and its SSE and x87 control words
 *   (MXCSR rounding and flush-to-zero, the x87 precision and rounding),
 *   different in each thread, shown by the quotients they give.
 *
 * Each target reports its state before the checkpoint and after the
 * restart; the two reports must be the same, and the settings the target
 * made must be in them (so a restart that reset everything cannot pass).
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/utsname.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

static uint64_t file_hash(const char *path)
{
	uint64_t h = FNV_OFFSET;
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(h, buf, n);
	close(fd);
	return h;
}

/* --- process-wide state --- */

#define PAGE		4096UL
#define MADV_PAGES	4

static char *madv_area;
static volatile sig_atomic_t usr1_seen, usr1_code;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr1_seen++;
	usr1_code = si->si_code;
}

/*
 * Every signal whose action is not the default one (no flags, empty mask),
 * with its flags and mask: "SIG:HANDLER:FLAGS:MASK", HANDLER 'D'efault,
 * 'I'gnore or 'H'andler.
 */
static void sigactions(char *out, size_t size)
{
	struct sigaction sa;
	size_t n = 0;
	uint64_t mask;
	int sig, bit;

	out[0] = '\0';
	for (sig = 1; sig < 65 && n < size; sig++) {
		memset(&sa, 0, sizeof(sa));
		if (sigaction(sig, NULL, &sa))
			continue;
		for (mask = 0, bit = 1; bit < 65; bit++)
			if (sigismember(&sa.sa_mask, bit) == 1)
				mask |= 1ULL << (bit - 1);
		if (sa.sa_handler == SIG_DFL && !sa.sa_flags && !mask)
			continue;
		n += snprintf(out + n, size - n, "%s%d:%c:%x:%llx", n ? "," : "",
			      sig, sa.sa_handler == SIG_DFL ? 'D' :
			      sa.sa_handler == SIG_IGN ? 'I' : 'H',
			      (unsigned int)sa.sa_flags, (unsigned long long)mask);
	}
}

static uint64_t rlimit_hash(void)
{
	uint64_t h = FNV_OFFSET;
	struct rlimit rl;
	int i;

	for (i = 0; i < RLIM_NLIMITS; i++)
		if (!getrlimit(i, &rl))
			h = fnv(h, &rl, sizeof(rl));
	return h;
}

/*
 * The mm fields /proc/PID/stat shows: start and end of code, start of the
 * stack (fields 26-28) and data, brk, arguments and environment (46-52).
 */
static uint64_t mm_fields_hash(void)
{
	char buf[2048], *p = ckpt_proc_stat(0, buf, sizeof(buf));
	uint64_t h = FNV_OFFSET;
	int field;

	if (!p)
		return 0;
	/* p is field 3. */
	for (field = 3; p && *p; field++) {
		char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if ((field >= 26 && field <= 28) || (field >= 46 && field <= 52))
			h = fnv(h, p, len);
		p = end ? end + 1 : NULL;
	}
	return h;
}

/* The VmFlags of the mapping at @addr, as /proc/self/smaps shows them. */
static void vm_flags(unsigned long addr, char *out, size_t size)
{
	char line[512];
	unsigned long s, e;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	snprintf(out, size, "?");
	while (f && fgets(line, sizeof(line), f)) {
		/* A mapping's first line; no key is hex digits and a '-'. */
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = addr >= s && addr < e;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, size, "%.200s", line + 8);
			break;
		}
	}
	if (f)
		fclose(f);
}

static bool has_flag(const char *flags, const char *flag)
{
	const char *p = flags;
	size_t len = strlen(flag);

	while ((p = strstr(p, flag))) {
		if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

static void say_process_state(void)
{
	struct rlimit nofile;
	struct utsname u;
	char comm[16] = "", fl0[256], fl2[256], sigs[256];
	mode_t mask = umask(0);

	umask(mask);
	getrlimit(RLIMIT_NOFILE, &nofile);
	prctl(PR_GET_NAME, comm);
	uname(&u);
	sigactions(sigs, sizeof(sigs));
	vm_flags((unsigned long)madv_area, fl0, sizeof(fl0));
	vm_flags((unsigned long)madv_area + 2 * PAGE, fl2, sizeof(fl2));
	target_say("sig %s rlim %016llx nofile %llu umask %03o pers %#x uname %.4s comm %s",
		   sigs,
		   (unsigned long long)rlimit_hash(),
		   (unsigned long long)nofile.rlim_cur, mask,
		   (unsigned int)personality(0xffffffff), u.release, comm);
	target_say("cmdline %016llx environ %016llx auxv %016llx mm %016llx brk %p",
		   (unsigned long long)file_hash("/proc/self/cmdline"),
		   (unsigned long long)file_hash("/proc/self/environ"),
		   (unsigned long long)file_hash("/proc/self/auxv"),
		   (unsigned long long)mm_fields_hash(), sbrk(0));
	target_say("dontfork %d dontdump %d", has_flag(fl0, "dc"),
		   has_flag(fl2, "dd"));
}

/*
 * What the settings do: a signal reaches its handler with its info; a new
 * file gets the umask; a child forked now has no DONTFORK page (reading it
 * kills it with SIGSEGV) and has the other pages.
 */
static void say_process_effects(void)
{
	char path[64];
	struct stat st = {};
	int status = 0, fd;
	pid_t pid;

	usr1_seen = 0;
	syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1);
	snprintf(path, sizeof(path), "/tmp/cr_state.%d.umask", getpid());
	unlink(path);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd >= 0) {
		fstat(fd, &st);
		close(fd);
	}
	unlink(path);
	pid = fork();
	if (!pid) {
		if (madv_area[2 * PAGE] != 'c')
			_exit(3);
		*(volatile char *)madv_area;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	target_say("usr1 %d code %d mode %03o child %s%d", (int)usr1_seen,
		   (int)usr1_code, st.st_mode & 0777,
		   WIFSIGNALED(status) ? "signal " : "exit ",
		   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void process_target(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1,
				.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER };
	struct rlimit rl;
	char c;

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGWINCH);
	sigaddset(&sa.sa_mask, SIGRTMIN + 3);
	if (sigaction(SIGUSR1, &sa, NULL))
		_exit(9);
	signal(SIGHUP, SIG_IGN);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
	if (sigaction(SIGURG, &sa, NULL))
		_exit(9);

	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 200;
	setrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 1 << 30;
	rl.rlim_max = 3UL << 30;
	setrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &rl);

	umask(027);
	if (personality(ADDR_NO_RANDOMIZE | UNAME26) < 0)
		_exit(9);
	prctl(PR_SET_NAME, "cr-state-proc");

	madv_area = mmap(NULL, MADV_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (madv_area == MAP_FAILED)
		_exit(9);
	memset(madv_area, 'c', MADV_PAGES * PAGE);
	if (madvise(madv_area, PAGE, MADV_DONTFORK) ||
	    madvise(madv_area + 2 * PAGE, PAGE, MADV_DONTDUMP))
		_exit(9);

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		if (c == 's')
			say_process_state();
		else if (c == 'e')
			say_process_effects();
		else if (c == 'q')
			_exit(0);
	}
}

/* --- per-thread state --- */

#define ALTSTACK_SIZE	(64 * 1024)

struct tstate {
	int index;
	pthread_t thread;
	char *altstack;
	unsigned int mxcsr;
	unsigned short fcw;
	int block;			/* a signal only this thread blocks */
	_Atomic int cmd;		/* from the main thread: 's', 'a', 'x' */
	_Atomic int done;
	char answer[256];
};

#define NR_TTHREADS	2

static struct tstate tstates[1 + NR_TTHREADS];	/* [0]: the main thread */
static pthread_mutex_t robust_mutex;
static __thread struct tstate *self_state;
static volatile sig_atomic_t on_altstack_seen;

static void on_usr2(int sig)
{
	char here;
	struct tstate *t = self_state;

	(void)sig;
	on_altstack_seen = t && &here >= t->altstack &&
			   &here < t->altstack + ALTSTACK_SIZE;
}

static unsigned int get_mxcsr(void)
{
	unsigned int v;

	asm volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static unsigned short get_fcw(void)
{
	unsigned short v;

	asm volatile("fnstcw %0" : "=m"(v));
	return v;
}

/* The last CPU this process may run on (its first is 0 in the VMs). */
static int last_cpu(void)
{
	cpu_set_t set;
	int cpu, last = 0;

	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	for (cpu = 0; cpu < 64; cpu++)
		if (CPU_ISSET(cpu, &set))
			last = cpu;
	return last;
}

/*
 * Thread 0 SCHED_IDLE on any CPU; 1 SCHED_BATCH on the last CPU, I/O
 * class idle; 2 SCHED_FIFO 3, reset on fork, on CPU 0, I/O best effort 2.
 */
static void thread_sched(int index)
{
	static const int policy[] = {
		SCHED_IDLE, SCHED_BATCH, SCHED_FIFO | SCHED_RESET_ON_FORK,
	};
	struct sched_param sp = { .sched_priority = index == 2 ? 3 : 0 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(index == 1 ? last_cpu() : 0, &set);
	static const int ioprio[] = { 0, 3 << 13, 2 << 13 | 2 };

	if (sched_setscheduler(0, policy[index], &sp) ||
	    (index && sched_setaffinity(0, sizeof(set), &set)) ||
	    (index && syscall(SYS_ioprio_set, 1, 0, ioprio[index])))
		_exit(9);
}

/*
 * "sched POLICY/PRIORITY cpus MASK io IOPRIO": what the kernel says of this
 * thread.
 */
static void sched_report(char *out, size_t size)
{
	struct sched_param sp = {};
	unsigned long mask = 0;
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	sched_getparam(0, &sp);
	sched_getaffinity(0, sizeof(set), &set);
	for (cpu = 0; cpu < 64; cpu++)
		if (CPU_ISSET(cpu, &set))
			mask |= 1UL << cpu;
	snprintf(out, size, "sched %#x/%d cpus %#lx io %#lx",
		 sched_getscheduler(0), sp.sched_priority, mask,
		 syscall(SYS_ioprio_get, 1, 0));
}

/*
 * Sets this thread's own settings: mask, altstack, MXCSR, x87 CW, nice,
 * policy and CPUs.
 */
static void thread_settings(struct tstate *t)
{
	stack_t ss = { .ss_size = ALTSTACK_SIZE };
	unsigned int mxcsr = t->mxcsr;
	unsigned short fcw = t->fcw;
	sigset_t set;

	self_state = t;
	sigemptyset(&set);
	sigaddset(&set, t->block);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	t->altstack = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss.ss_sp = t->altstack;
	if (t->altstack == MAP_FAILED || sigaltstack(&ss, NULL))
		_exit(9);
	asm volatile("ldmxcsr %0" : : "m"(mxcsr));
	asm volatile("fldcw %0" : : "m"(fcw));
	/* 2, 5 and 8: nice is each thread's own. */
	if (setpriority(PRIO_PROCESS, syscall(SYS_gettid), 2 + 3 * t->index))
		_exit(9);
	thread_sched(t->index);
}

/*
 * What this thread's control words do: 1/3 in SSE (its last bit follows
 * the rounding mode), a denormal quotient (0 under flush-to-zero), and 1/3
 * on the x87 (its mantissa follows the precision and rounding control).
 */
static void arithmetic(char *out, size_t size)
{
	volatile float one = 1.0f, three = 3.0f, tiny = 1e-38f;
	volatile long double lone = 1.0L, lthree = 3.0L;
	float q = one / three, d = tiny / 1024.0f;
	long double lq = lone / lthree;
	uint32_t qbits;
	uint64_t lbits;

	memcpy(&qbits, &q, sizeof(qbits));
	memcpy(&lbits, &lq, sizeof(lbits));	/* the 64-bit mantissa */
	snprintf(out, size, "div %08x ftz %d x87 %016llx", qbits, d == 0.0f,
		 (unsigned long long)lbits);
}

/* This thread's state, as one line. */
static void thread_report(struct tstate *t, char *out, size_t size)
{
	char arith[64], sched[64];

	char *tp = __builtin_thread_pointer();
	struct robust_list_head *head = NULL;
	size_t len = 0;
	stack_t ss = {};
	sigset_t set;
	long rseq_ret;
	int rseq_errno = 0;

	pthread_sigmask(SIG_BLOCK, NULL, &set);
	sigaltstack(NULL, &ss);
	syscall(SYS_get_robust_list, 0, &head, &len);
	/*
	 * Registered with these very arguments: EBUSY; anything else differs.
	 * glibc registers 32 bytes, whatever __rseq_size (the features it
	 * uses: 20 in Debian's 2.36) says.
	 */
	rseq_ret = syscall(SYS_rseq, tp + __rseq_offset, 32, 0, RSEQ_SIG);
	if (rseq_ret)
		rseq_errno = errno;
	arithmetic(arith, sizeof(arith));
	sched_report(sched, sizeof(sched));
	snprintf(out, size,
		 "t%d tid %ld nice %d mask %d/%d alt %d:%d:%zu mxcsr %#x fcw %#x robust %ld:%zu rseq %s %s %s",
		 t->index, (long)syscall(SYS_gettid),
		 getpriority(PRIO_PROCESS, syscall(SYS_gettid)),
		 sigismember(&set, t->block),
		 sigismember(&set, SIGWINCH) + sigismember(&set, SIGTTIN) +
		 sigismember(&set, SIGXCPU),
		 ss.ss_sp == t->altstack, ss.ss_flags, ss.ss_size,
		 get_mxcsr() & ~0x3fU, get_fcw(),
		 head ? (long)((char *)head - tp) : -1L, len,
		 __rseq_size == 0 ? "off" : rseq_errno == EBUSY ? "registered" :
		 rseq_ret == 0 ? "was-not-registered" : strerror(rseq_errno),
		 arith, sched);
}

static void *tthread_main(void *arg)
{
	struct tstate *t = arg;
	int cmd;

	thread_settings(t);
	if (t->index == 1 && pthread_mutex_lock(&robust_mutex))
		_exit(9);
	atomic_store(&t->done, 1);
	for (;;) {
		cmd = atomic_load(&t->cmd);
		if (!cmd) {
			usleep(1000);
			continue;
		}
		if (cmd == 's') {
			thread_report(t, t->answer, sizeof(t->answer));
		} else if (cmd == 'a') {
			on_altstack_seen = -1;
			raise(SIGUSR2);	/* this thread's */
			snprintf(t->answer, sizeof(t->answer), "t%d onstack %d",
				 t->index, (int)on_altstack_seen);
		} else if (cmd == 'x') {
			/* Leaves holding the robust mutex (thread 1). */
			atomic_store(&t->cmd, 0);
			atomic_store(&t->done, 1);
			return NULL;
		}
		atomic_store(&t->cmd, 0);
		atomic_store(&t->done, 1);
	}
}

static void ask_thread(int i, int cmd)
{
	atomic_store(&tstates[i].done, 0);
	atomic_store(&tstates[i].cmd, cmd);
	while (!atomic_load(&tstates[i].done))
		usleep(1000);
	target_say("%s", tstates[i].answer);
}

static void threads_target(void)
{
	/* Rounding down; toward zero with flush-to-zero; up. */
	static const unsigned int mxcsr[] = { 0x3f80, 0xff80, 0x5f80 };
	/* Single precision; double precision; extended, toward zero. */
	static const unsigned short fcw[] = { 0x07f, 0x27f, 0xf7f };
	static const int block[] = { SIGWINCH, SIGTTIN, SIGXCPU };
	struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_ONSTACK };
	pthread_mutexattr_t ma;
	struct timespec until;
	char c;
	int i, ret;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	if (pthread_mutex_init(&robust_mutex, &ma))
		_exit(9);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		_exit(9);
	for (i = 0; i <= NR_TTHREADS; i++) {
		tstates[i].index = i;
		tstates[i].mxcsr = mxcsr[i];
		tstates[i].fcw = fcw[i];
		tstates[i].block = block[i];
	}
	/* Threads first: they would inherit the main thread's mask. */
	for (i = 1; i <= NR_TTHREADS; i++) {
		if (pthread_create(&tstates[i].thread, NULL, tthread_main,
				   &tstates[i]))
			_exit(9);
		while (!atomic_load(&tstates[i].done))
			usleep(1000);
	}
	thread_settings(&tstates[0]);

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 's':
			thread_report(&tstates[0], tstates[0].answer,
				      sizeof(tstates[0].answer));
			target_say("%s", tstates[0].answer);
			for (i = 1; i <= NR_TTHREADS; i++)
				ask_thread(i, 's');
			break;
		case 'a':
			on_altstack_seen = -1;
			raise(SIGUSR2);
			target_say("t0 onstack %d", (int)on_altstack_seen);
			for (i = 1; i <= NR_TTHREADS; i++)
				ask_thread(i, 'a');
			break;
		case 'r':
			/* Thread 1 exits holding the robust mutex. */
			atomic_store(&tstates[1].done, 0);
			atomic_store(&tstates[1].cmd, 'x');
			pthread_join(tstates[1].thread, NULL);
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 20;
			ret = pthread_mutex_timedlock(&robust_mutex, &until);
			target_say("robust lock %s",
				   ret == EOWNERDEAD ? "EOWNERDEAD" : strerror(ret));
			break;
		case 'q':
			_exit(0);
		}
	}
}

FIXTURE(state) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(state)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_state.%d.img",
		 getpid());
}

FIXTURE_TEARDOWN(state)
{
	unlink(self->image);
}

/* Sends @cmd and reads @n lines into @out, one after another. */
static int ask_lines(struct target *t, const char *cmd, int n, char *out,
		     size_t size)
{
	size_t used = 0;
	int ret = target_send(t, cmd), i;

	for (i = 0; !ret && i < n; i++) {
		ret = target_line(t, out + used, size - used);
		used += strlen(out + used);
		if (used + 2 < size && i + 1 < n)
			out[used++] = '\n';
	}
	return ret;
}

TEST_F(state, process_settings_come_back)
{
	char before[1024], after[1024], eff[256];
	struct target t = {};
	int status;
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, process_target));
	pid = t.pid;
	ASSERT_EQ(0, ask_lines(&t, "s", 3, before, sizeof(before)));
	TH_LOG("before:\n%s", before);
	/* What the target set is what it reports. */
	ASSERT_NE(NULL, strstr(before, "nofile 200 umask 027 pers 0x60000 uname 2.6."));
	ASSERT_NE(NULL, strstr(before, "comm cr-state-proc"));
	ASSERT_NE(NULL, strstr(before, "dontfork 1 dontdump 1"));
	ASSERT_EQ(0, target_ask(&t, "e", eff, sizeof(eff)));
	ASSERT_STREQ("usr1 1 code -6 mode 640 child signal 11", eff);

	ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, ask_lines(&t, "s", 3, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, target_ask(&t, "e", eff, sizeof(eff)));
	EXPECT_STREQ("usr1 1 code -6 mode 640 child signal 11", eff);

	/* And once more, from the restarted process. */
	ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, ask_lines(&t, "s", 3, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(state, thread_settings_come_back)
{
	char before[1024], after[1024], alt[256];
	struct target t = {};
	int status, i;
	pid_t pid;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, threads_target));
	pid = t.pid;
	ASSERT_EQ(0, ask_lines(&t, "s", 1 + NR_TTHREADS, before, sizeof(before)));
	TH_LOG("before:\n%s", before);
	/*
	 * Each thread has its own settings, and they show: 1/3 in SSE rounded
	 * down, toward zero with flush-to-zero, up; on the x87 to single,
	 * double and extended precision. glibc registered rseq, unless
	 * its tunables turned it off.
	 */
	for (i = 0; i <= NR_TTHREADS; i++) {
		static const char *const want[] = {
			" nice 2 mask 1/1 alt 1:0:65536 mxcsr 0x3f80 fcw 0x7f robust ",
			" nice 5 mask 1/1 alt 1:0:65536 mxcsr 0xff80 fcw 0x27f robust ",
			" nice 8 mask 1/1 alt 1:0:65536 mxcsr 0x5f80 fcw 0xf7f robust ",
		};
		static const char *const arith[] = {
			"div 3eaaaaaa ftz 0 x87 aaaaab0000000000",
			"div 3eaaaaaa ftz 1 x87 aaaaaaaaaaaaa800",
			"div 3eaaaaab ftz 0 x87 aaaaaaaaaaaaaaaa",
		};
		char *line = before, *end, sched[64];

		for (status = 0; status < i; status++)
			line = strchr(line, '\n') + 1;
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		EXPECT_NE(NULL, strstr(line, want[i])) TH_LOG("%s", line);
		/* SCHED_IDLE, SCHED_BATCH, SCHED_FIFO 3 | SCHED_RESET_ON_FORK */
		if (i == 0)
			snprintf(sched, sizeof(sched), " sched 0x5/0 cpus ");
		else if (i == 1)
			snprintf(sched, sizeof(sched),
				 " sched 0x3/0 cpus %#lx io 0x6000",
				 1UL << last_cpu());
		else
			snprintf(sched, sizeof(sched),
				 " sched 0x40000001/3 cpus 0x1 io 0x4002");
		EXPECT_NE(NULL, strstr(line, sched)) TH_LOG("%s: %s", sched, line);
		EXPECT_NE(NULL, strstr(line, arith[i])) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, __rseq_size ? ":24 rseq registered" :
						 ":24 rseq off")) TH_LOG("%s", line);
		if (end)
			*end = '\n';
	}
	ASSERT_EQ(0, ask_lines(&t, "a", 1 + NR_TTHREADS, alt, sizeof(alt)));
	ASSERT_STREQ("t0 onstack 1\nt1 onstack 1\nt2 onstack 1", alt);

	ASSERT_EQ(0, target_cycle(&t, pid, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, ask_lines(&t, "s", 1 + NR_TTHREADS, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	ASSERT_EQ(0, ask_lines(&t, "a", 1 + NR_TTHREADS, alt, sizeof(alt)));
	EXPECT_STREQ("t0 onstack 1\nt1 onstack 1\nt2 onstack 1", alt);
	/* Thread 1 took the robust mutex before the checkpoint. */
	ASSERT_EQ(0, target_ask(&t, "r", alt, sizeof(alt)));
	EXPECT_STREQ("robust lock EOWNERDEAD", alt);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A restarter at nice 10 without CAP_SYS_NICE (gone at its exec). */
static void nice_10_no_cap(void)
{
	if (setpriority(PRIO_PROCESS, 0, 10) ||
	    prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0))
		_exit(120);
}

/*
 * The threads' nice values (2, 5, 8) are a higher priority than such a
 * restarter's: none comes back above it, each at 10. Nor does thread 2's
 * SCHED_FIFO come back (its RLIMIT_RTPRIO is 0): it is SCHED_OTHER, on
 * its CPU; thread 1 is SCHED_BATCH again, which anyone may choose.
 */
TEST_F(state, thread_nice_not_above_the_restarter)
{
	char lines[1024], *line, *save = NULL;
	struct target t = {};
	int status, n = 0;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, threads_target));
	ASSERT_EQ(0, ask_lines(&t, "s", 1 + NR_TTHREADS, lines, sizeof(lines)));
	ASSERT_NE(NULL, strstr(lines, " nice 2 ")) TH_LOG("%s", lines);
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, CKPT_CHECKPOINT_KILL,
					self->msg, sizeof(self->msg), NULL))
		TH_LOG("%s", self->msg);
	target_end(&t);
	ASSERT_EQ(0, target_restart_after(&t, self->image, nice_10_no_cap));
	ASSERT_EQ(0, ask_lines(&t, "s", 1 + NR_TTHREADS, lines, sizeof(lines)));
	TH_LOG("after:\n%s", lines);
	EXPECT_NE(NULL, strstr(lines, " sched 0x3/0 ")) TH_LOG("%s", lines);
	EXPECT_NE(NULL, strstr(lines, " sched 0/0 cpus 0x1 io 0x4002"))
		TH_LOG("%s", lines);
	for (line = strtok_r(lines, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		n += !!strstr(line, " nice 10 ");
	EXPECT_EQ(1 + NR_TTHREADS, n);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
