// SPDX-License-Identifier: GPL-2.0
/*
 * Interval timers and POSIX timers survive a checkpoint and restart.
 * ITIMER_VIRTUAL and ITIMER_PROF go on counting the CPU time they had
 * left and keep their intervals. POSIX timers keep their ids (the timer_t
 * values the program holds), clocks (real-time, monotonic, boot, TAI,
 * process and thread CPU time), notifications (signal number and value, a
 * target thread, none, glibc's SIGEV_THREAD), time left and interval;
 * disarmed ones stay disarmed, overrun counts are kept and the next id
 * handed out is the one it would have been; over two cycles. Timers a
 * restart could not make again are refused, named.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define NS		1000000000LL
#define MS		1000000LL
/* The CPU-time clock of another process, as clock_getcpuclockid() makes it. */
#define PROCESS_CPUCLOCK(pid)	((~(clockid_t)(pid) << 3) | 2)
/* The engine's bound on timer ids (linux/ckpt_image.h). */
#define MAX_TIMER_ID	(1 << 20)

static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

static long long tv_us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000LL + tv->tv_usec;
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NS + ts->tv_nsec;
}

static struct timespec ns_ts(long long ns)
{
	struct timespec ts = { ns / NS, ns % NS };

	return ts;
}

/* ---------------------------------------- ITIMER_VIRTUAL, ITIMER_PROF */

static _Atomic int vtalrms, profs, burn;

static void on_vtalrm(int sig)
{
	(void)sig;
	atomic_fetch_add(&vtalrms, 1);
}

static void on_prof(int sig)
{
	(void)sig;
	atomic_fetch_add(&profs, 1);
}

/* Uses CPU time (user time, for ITIMER_VIRTUAL) while told to. */
static void *burner(void *arg)
{
	volatile unsigned long x = 0;
	int i;

	(void)arg;
	for (;;) {
		if (!atomic_load(&burn)) {
			usleep(1000);
			continue;
		}
		for (i = 0; i < 1000000; i++)
			x += i;
	}
	return NULL;
}

static void itimer_target(void)
{
	struct sigaction sa = { .sa_flags = SA_RESTART };
	struct itimerval v = { { 0, 300000 }, { 5, 0 } };
	struct itimerval p = { { 0, 400000 }, { 6, 0 } };
	pthread_t th;
	char c;
	int i;

	sa.sa_handler = on_vtalrm;
	sigaction(SIGVTALRM, &sa, NULL);
	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	if (pthread_create(&th, NULL, burner, NULL))
		_exit(9);
	while (read(0, &c, 1) == 1) {
		switch (c) {
		case 's':
			if (setitimer(ITIMER_VIRTUAL, &v, NULL) ||
			    setitimer(ITIMER_PROF, &p, NULL))
				_exit(9);
			target_say("set");
			break;
		case 'b':
			atomic_store(&burn, 1);
			target_say("burning");
			break;
		case 'p':
			/* The burner's loop in progress ends well before. */
			atomic_store(&burn, 0);
			usleep(200000);
			target_say("paused");
			break;
		case 'g':
			getitimer(ITIMER_VIRTUAL, &v);
			getitimer(ITIMER_PROF, &p);
			target_say("%lld %lld %lld %lld", tv_us(&v.it_value),
				   tv_us(&v.it_interval), tv_us(&p.it_value),
				   tv_us(&p.it_interval));
			break;
		case 'c':
			atomic_store(&vtalrms, 0);
			atomic_store(&profs, 0);
			target_say("cleared");
			break;
		case 'n':
			target_say("vtalrm %d prof %d", atomic_load(&vtalrms),
				   atomic_load(&profs));
			break;
		case 'w':
			for (i = 0; i < 1000 && (!atomic_load(&vtalrms) ||
						 !atomic_load(&profs)); i++)
				usleep(100000);
			target_say("vtalrm %d prof %d", atomic_load(&vtalrms) > 0,
				   atomic_load(&profs) > 0);
			break;
		case 'q':
			_exit(0);
		}
	}
	_exit(3);
}

/* ---------------------------------------------------- POSIX timers */

enum { TA, TB, TC, TD, TE, TF, TG, TH, TI, TJ, TK, TL, TM, NR_TIMERS };
static const char timer_names[] = "ABCDEFGHIJKLM";
static timer_t tm[NR_TIMERS];
static _Atomic pid_t t_tid;
static _Atomic int d_count, d_elsewhere, l_count, m_count, m_bad;

static void on_nothing(int sig)
{
	(void)sig;
}

/* D's signal: SIGEV_THREAD_ID to thread T. */
static void on_d(int sig)
{
	(void)sig;
	if (gettid_() == atomic_load(&t_tid))
		atomic_fetch_add(&d_count, 1);
	else
		atomic_fetch_add(&d_elsewhere, 1);
}

/* M's signal: its siginfo names M and carries M's value. */
static void on_m(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_TIMER && si->si_value.sival_int == 0x1313 &&
	    si->si_timerid == (int)(intptr_t)tm[TM])
		atomic_fetch_add(&m_count, 1);
	else
		atomic_fetch_add(&m_bad, 1);
}

/* L's callback, in a thread glibc starts (SIGEV_THREAD). */
static void on_l(union sigval v)
{
	if (v.sival_int == 0x1212)
		atomic_fetch_add(&l_count, 1);
}

static void *thread_t(void *arg)
{
	(void)arg;
	atomic_store(&t_tid, gettid_());
	for (;;)
		pause();
	return NULL;
}

static void make(timer_t *t, clockid_t clock, int notify, int signo, int value)
{
	struct sigevent sev = { .sigev_notify = notify, .sigev_signo = signo };

	sev.sigev_value.sival_int = value;
	if (notify == SIGEV_THREAD_ID)
		sev.sigev_notify_thread_id = atomic_load(&t_tid);
	if (timer_create(clock, &sev, t))
		_exit(10);
}

static void arm(timer_t t, long long value, long long interval, int flags)
{
	struct itimerspec its = { ns_ts(interval), ns_ts(value) };

	if (timer_settime(t, flags, &its, NULL))
		_exit(11);
}

static void make_timers(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD };
	struct timespec now;
	clockid_t cid;
	timer_t x;
	int i;

	/* Ids 0-2 are used up: A is 3, and there is a gap after B. */
	for (i = 0; i < 3; i++)
		if (timer_create(CLOCK_MONOTONIC, NULL, &x) || timer_delete(x))
			_exit(10);
	make(&tm[TA], CLOCK_REALTIME, SIGEV_SIGNAL, SIGRTMIN + 2, 0x1111);
	arm(tm[TA], 50 * NS, 7 * NS, 0);
	make(&tm[TB], CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 3, 0x2222);
	if (timer_create(CLOCK_MONOTONIC, NULL, &x) || timer_delete(x))
		_exit(10);
	make(&tm[TC], CLOCK_BOOTTIME, SIGEV_NONE, 0, 0x3333);
	arm(tm[TC], 40 * NS, 0, 0);
	make(&tm[TD], CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 4, 0x4444);
	arm(tm[TD], 1500 * MS, 700 * MS, 0);
	make(&tm[TE], CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, SIGRTMIN + 5, 0x5555);
	arm(tm[TE], 60 * NS, 0, 0);
	/* T's CPU clock, made in the main thread. */
	cid = (~(clockid_t)atomic_load(&t_tid) << 3) | 6;
	make(&tm[TF], cid, SIGEV_NONE, 0, 0x6666);
	arm(tm[TF], 70 * NS, 3 * NS, 0);
	make(&tm[TG], CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIGRTMIN + 6, 0x7777);
	arm(tm[TG], 80 * NS, 0, 0);
	if (timer_create(CLOCK_MONOTONIC, NULL, &tm[TH]))
		_exit(10);
	arm(tm[TH], 45 * NS, 0, 0);
	/* Armed, then disarmed. */
	make(&tm[TI], CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 7, 0x9999);
	arm(tm[TI], 10 * NS, 1 * NS, 0);
	arm(tm[TI], 0, 0, 0);
	make(&tm[TJ], CLOCK_REALTIME, SIGEV_SIGNAL, SIGRTMIN + 8, 0xaaaa);
	clock_gettime(CLOCK_REALTIME, &now);
	arm(tm[TJ], ts_ns(&now) + 55 * NS, 2 * NS, TIMER_ABSTIME);
	make(&tm[TK], CLOCK_TAI, SIGEV_SIGNAL, SIGRTMIN + 9, 0xbbbb);
	arm(tm[TK], 47 * NS, 0, 0);
	sev.sigev_notify_function = on_l;
	sev.sigev_value.sival_int = 0x1212;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm[TL]))
		_exit(10);
	arm(tm[TL], 1200 * MS, 1 * NS, 0);
	make(&tm[TM], CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 10, 0x1313);
	arm(tm[TM], 2 * NS, 1 * NS, 0);
}

/*
 * Every timer's time left and interval (timer_gettime() through the
 * timer_t the program holds), then what /proc/self/timers shows of each
 * (id, signal and value, notification, clock), newest first; "end". The
 * clock of a timer made on CLOCK_THREAD_CPUTIME_ID is shown as the clock
 * of that thread (a restart makes it so).
 */
static void list_timers(void)
{
	char line[256], id[32] = "", sig[64] = "", notify[64] = "";
	struct itimerspec its;
	int i, clock;
	FILE *f;

	for (i = 0; i < NR_TIMERS; i++) {
		if (timer_gettime(tm[i], &its))
			_exit(12);
		target_say("T %c %lld %lld", timer_names[i], ts_ns(&its.it_value),
			   ts_ns(&its.it_interval));
	}
	f = fopen("/proc/self/timers", "re");
	if (!f)
		_exit(13);
	/* Four lines per timer, the clock last. */
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "ID: ", 4))
			snprintf(id, sizeof(id), "%.20s", line + 4);
		else if (!strncmp(line, "signal: ", 8))
			snprintf(sig, sizeof(sig), "%.60s", line + 8);
		else if (!strncmp(line, "notify: ", 8))
			snprintf(notify, sizeof(notify), "%.60s", line + 8);
		else if (sscanf(line, "ClockID: %d", &clock) == 1) {
			if (clock == -2)	/* CLOCK_THREAD_CPUTIME_ID, by main */
				clock = (~(clockid_t)gettid_() << 3) | 6;
			target_say("P %s %s %s %d", id, sig, notify, clock);
		}
	}
	fclose(f);
	target_say("end");
}

static void posix_target(void)
{
	struct sigaction sa = { .sa_flags = SA_RESTART, .sa_handler = on_nothing };
	pthread_t th;
	timer_t x;
	char c;
	int i;

	for (i = 2; i <= 9; i++)
		sigaction(SIGRTMIN + i, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_d;
	sigaction(SIGRTMIN + 4, &sa, NULL);
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sa.sa_sigaction = on_m;
	sigaction(SIGRTMIN + 10, &sa, NULL);
	if (pthread_create(&th, NULL, thread_t, NULL))
		_exit(9);
	while (!atomic_load(&t_tid))
		usleep(1000);
	while (read(0, &c, 1) == 1) {
		switch (c) {
		case 's':
			make_timers();
			target_say("set");
			break;
		case 'l':
			list_timers();
			break;
		case 'n':
			/* The id the next timer gets. */
			if (timer_create(CLOCK_MONOTONIC, NULL, &x))
				_exit(10);
			target_say("%d", (int)(intptr_t)x);
			timer_delete(x);
			break;
		case 'd':
			atomic_store(&d_count, 0);
			atomic_store(&d_elsewhere, 0);
			atomic_store(&l_count, 0);
			atomic_store(&m_count, 0);
			for (i = 0; i < 300 && (!atomic_load(&d_count) ||
						!atomic_load(&l_count) ||
						!atomic_load(&m_count)); i++)
				usleep(100000);
			target_say("d %d elsewhere %d l %d m %d bad %d",
				   atomic_load(&d_count) > 0,
				   atomic_load(&d_elsewhere),
				   atomic_load(&l_count) > 0,
				   atomic_load(&m_count) > 0, atomic_load(&m_bad));
			break;
		case 't':
			target_say("%d", atomic_load(&t_tid));
			break;
		case 'q':
			_exit(0);
		}
	}
	_exit(3);
}

/* ------------------------------------------------------- overruns */

static timer_t op, oq;
static struct timespec o_t0;

static void overrun_target(void)
{
	struct timespec now, wait = { 10, 0 };
	siginfo_t sp, sq;
	sigset_t set, one;
	int po, qo;
	char c;

	/*
	 * P's signal stays pending (blocked); Q's is ignored (and not blocked:
	 * a blocked signal is queued even if ignored), its expirations counted.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 11);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGRTMIN + 12, SIG_IGN);
	while (read(0, &c, 1) == 1) {
		switch (c) {
		case 's':
			make(&op, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 11, 0x11);
			make(&oq, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 12, 0x12);
			clock_gettime(CLOCK_MONOTONIC, &o_t0);
			arm(op, 20 * MS, 20 * MS, 0);
			arm(oq, 20 * MS, 20 * MS, 0);
			target_say("set");
			break;
		case 'e':
			clock_gettime(CLOCK_MONOTONIC, &now);
			target_say("%lld", (ts_ns(&now) - ts_ns(&o_t0)) / MS);
			break;
		case 'o':
			sigemptyset(&one);
			sigaddset(&one, SIGRTMIN + 11);
			if (sigtimedwait(&one, &sp, &wait) != SIGRTMIN + 11)
				_exit(14);
			po = timer_getoverrun(op);
			/* Q's signal is queued at its next expiry, and waits. */
			sigemptyset(&one);
			sigaddset(&one, SIGRTMIN + 12);
			sigprocmask(SIG_BLOCK, &one, NULL);
			signal(SIGRTMIN + 12, on_nothing);
			if (sigtimedwait(&one, &sq, &wait) != SIGRTMIN + 12)
				_exit(15);
			qo = timer_getoverrun(oq);
			target_say("p %d %d %d q %d %d %d", sp.si_overrun, po,
				   sp.si_value.sival_int, sq.si_overrun, qo,
				   sq.si_value.sival_int);
			break;
		case 'q':
			_exit(0);
		}
	}
	_exit(3);
}

/* ------------------------------------------------------- refusals */

static int r_pipe[2];

static void *exiting_thread(void *arg)
{
	char c;

	atomic_store(&t_tid, gettid_());
	if (read(r_pipe[0], &c, 1) != 1)
		_exit(16);
	return arg;
}

/* Makes the timer the command names, says its id, then waits for 'q'. */
static void refused_target(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	pthread_t th;
	clockid_t cid;
	timer_t t;
	char c;
	int id;

	if (read(0, &c, 1) != 1)
		_exit(3);
	if (c == 't' || c == 'c') {
		/* A thread that is gone by the checkpoint. */
		if (pipe(r_pipe) || pthread_create(&th, NULL, exiting_thread, NULL))
			_exit(9);
		while (!atomic_load(&t_tid))
			usleep(1000);
		if (c == 't') {
			make(&t, CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN, 1);
		} else {
			if (pthread_getcpuclockid(th, &cid) ||
			    timer_create(cid, &sev, &t))
				_exit(10);
		}
		if (write(r_pipe[1], "x", 1) != 1 || pthread_join(th, NULL))
			_exit(9);
		usleep(200000);
	} else if (c == 'o') {
		/* The CPU time of the test itself. */
		if (timer_create(PROCESS_CPUCLOCK(getppid()), &sev, &t))
			_exit(10);
	} else if (c == 'a') {
		if (timer_create(CLOCK_BOOTTIME_ALARM, &sev, &t)) {
			target_say("skip %s", strerror(errno));
			goto wait;
		}
	} else if (c == 'i') {
		/* The first id past the bound: every one before used once. */
		do {
			if (timer_create(CLOCK_MONOTONIC, &sev, &t))
				_exit(10);
			id = (int)(intptr_t)t;
		} while (id < MAX_TIMER_ID && !timer_delete(t));
	} else {
		_exit(3);
	}
	target_say("made %d", (int)(intptr_t)t);
wait:
	while (read(0, &c, 1) == 1)
		if (c == 'q')
			_exit(0);
		else
			target_say("alive");
	_exit(3);
}

/* ---------------------------------------------------------- tests */

FIXTURE(timers) {
	char image[64];
	char msg[256];
};

FIXTURE_SETUP(timers)
{
	const char *path = ckpt_module_path();

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_timers.%d.img", getpid());
}

FIXTURE_TEARDOWN(timers)
{
	unlink(self->image);
}

static int itimers(struct target *t, long long v[4])
{
	char buf[128];
	int ret = target_ask(t, "g", buf, sizeof(buf));

	if (!ret && sscanf(buf, "%lld %lld %lld %lld", &v[0], &v[1], &v[2],
			   &v[3]) != 4)
		ret = -EPROTO;
	return ret;
}

TEST_F_TIMEOUT(timers, virtual_and_prof_itimers_go_on_counting_cpu_time, 120)
{
	struct target t = {};
	long long before[4], after[4];
	int cycle, fired[2];
	char buf[64];
	pid_t victim;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, itimer_target));
	/* After a restart t.pid is the restarter's; the process keeps its pid. */
	victim = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	/* Some CPU time used: what is left is less than was set. */
	ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
	usleep(700000);
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	for (cycle = 1; cycle <= 2; cycle++) {
		ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
		ASSERT_EQ(0, itimers(&t, before));
		TH_LOG("cycle %d: virtual %lld/%lld us, prof %lld/%lld us", cycle,
		       before[0], before[1], before[2], before[3]);
		ASSERT_LT(0, before[0]);
		ASSERT_LT(0, before[2]);
		ASSERT_EQ(0, target_cycle(&t, victim, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ASSERT_EQ(0, itimers(&t, after));
		TH_LOG("after restart: virtual %lld/%lld us, prof %lld/%lld us",
		       after[0], after[1], after[2], after[3]);
		/*
		 * Going on from what was left, not from the start. With a
		 * tick or less left, the least setitimer() arms is 1 us plus
		 * the tick it adds: one microsecond more than was left. The
		 * restart's own CPU time counts (arm_timers()): where it used
		 * up what was left (the debug kernel's is slow), the timer
		 * fired meanwhile and went on from its interval.
		 */
		ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
		ASSERT_EQ(2, sscanf(buf, "vtalrm %d prof %d", &fired[0], &fired[1]))
			TH_LOG("%s", buf);
		TH_LOG("signals during the restart: %s", buf);
		EXPECT_LT(0, after[0]);
		if (!fired[0])
			EXPECT_GE(before[0] + 1, after[0]);
		EXPECT_LT(0, after[2]);
		if (!fired[1])
			EXPECT_GE(before[2] + 1, after[2]);
		EXPECT_EQ(300000, after[1]);
		EXPECT_EQ(400000, after[3]);
		/* A busy process gets both signals once that CPU time is used. */
		ASSERT_EQ(0, target_ask(&t, "c", buf, sizeof(buf)));
		ASSERT_EQ(0, target_ask(&t, "b", buf, sizeof(buf)));
		ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
		EXPECT_STREQ("vtalrm 1 prof 1", buf);
		ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
		ASSERT_EQ(0, itimers(&t, after));
		EXPECT_EQ(300000, after[1]);
		EXPECT_EQ(400000, after[3]);
		EXPECT_GE(300000, after[0]);
		EXPECT_GE(400000, after[2]);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

struct timer_list {
	char t[NR_TIMERS][64];		/* "T name value interval" */
	char p[32][128];		/* /proc/self/timers, one line each */
	int nr_p;
};

static int list(struct target *t, struct timer_list *l)
{
	char buf[256];
	int i, ret;

	memset(l, 0, sizeof(*l));
	ret = target_send(t, "l");
	for (i = 0; !ret && i < NR_TIMERS; i++)
		ret = target_line(t, l->t[i], sizeof(l->t[i]));
	while (!ret) {
		ret = target_line(t, buf, sizeof(buf));
		if (ret || !strcmp(buf, "end"))
			break;
		if (l->nr_p == 32)
			return -E2BIG;
		snprintf(l->p[l->nr_p++], sizeof(l->p[0]), "%.127s", buf);
	}
	return ret;
}

/*
 * D, L and M fire every second or so, reloading their time left with the
 * interval; the others do not fire during the test.
 */
static long long most_left(char name, long long value, long long interval)
{
	if (name == 'D' || name == 'L' || name == 'M')
		return value > interval ? value : interval;
	return value;
}

TEST_F(timers, posix_timers_keep_ids_clocks_notifications_and_times)
{
	struct timer_list before, after;
	struct target t = {};
	char buf[128], want[64];
	int cycle, i, probe, ret;
	pid_t victim;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, posix_target));
	victim = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	ASSERT_STREQ("set", buf);
	ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
	probe = atoi(buf);
	ASSERT_EQ(0, list(&t, &before));
	ASSERT_EQ(NR_TIMERS, before.nr_p);
	for (cycle = 1; cycle <= 2; cycle++) {
		ASSERT_EQ(0, target_cycle(&t, victim, self->image, self->msg,
					  sizeof(self->msg))) TH_LOG("%s", self->msg);
		ret = list(&t, &after);
		if (ret)
			TH_LOG("cycle %d: the restarted process ended, status 0x%x",
			       cycle, target_end(&t));
		ASSERT_EQ(0, ret);
		for (i = 0; i < NR_TIMERS; i++) {
			long long bv, bi, av, ai;
			char bn, an;

			ASSERT_EQ(3, sscanf(before.t[i], "T %c %lld %lld", &bn, &bv, &bi));
			ASSERT_EQ(3, sscanf(after.t[i], "T %c %lld %lld", &an, &av, &ai))
				TH_LOG("%s", after.t[i]);
			TH_LOG("cycle %d: %s -> %s", cycle, before.t[i], after.t[i]);
			EXPECT_EQ(bn, an);
			EXPECT_EQ(bi, ai);
			if (!bv) {
				EXPECT_EQ(0, av);	/* disarmed stays so */
			} else {
				EXPECT_LT(0, av);
				EXPECT_GE(most_left(bn, bv, bi), av);
			}
		}
		/* Ids, signals, values, notifications and clocks, as they were. */
		EXPECT_EQ(before.nr_p, after.nr_p);
		for (i = 0; i < before.nr_p && i < after.nr_p; i++)
			EXPECT_STREQ(before.p[i], after.p[i]);
		/* The next timer gets the id it would have had. */
		ASSERT_EQ(0, target_ask(&t, "n", buf, sizeof(buf)));
		snprintf(want, sizeof(want), "%d", probe + cycle);
		EXPECT_STREQ(want, buf);
		/* D's signal reaches thread T, M's handler, L's glibc thread. */
		ASSERT_EQ(0, target_ask(&t, "d", buf, sizeof(buf)));
		EXPECT_STREQ("d 1 elsewhere 0 l 1 m 1 bad 0", buf);
		ASSERT_EQ(0, list(&t, &before));
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

TEST_F(timers, overruns_are_kept)
{
	struct target t = {};
	int ps, pg, pv, qs, qg, qv, elapsed, least;
	char buf[128];
	pid_t victim;

	CKPT_SETUP_SKIPPED();
	ASSERT_EQ(0, target_start(&t, overrun_target));
	victim = t.pid;
	ASSERT_EQ(0, target_ask(&t, "s", buf, sizeof(buf)));
	/*
	 * Long against the time from the restart to 'o' (a second or so
	 * under TCG), during which Q goes on counting ignored expirations.
	 */
	usleep(2500000);
	ASSERT_EQ(0, target_ask(&t, "e", buf, sizeof(buf)));
	elapsed = atoi(buf);
	ASSERT_EQ(0, target_cycle(&t, victim, self->image, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, target_ask(&t, "o", buf, sizeof(buf)));
	ASSERT_EQ(6, sscanf(buf, "p %d %d %d q %d %d %d", &ps, &pg, &pv, &qs,
			    &qg, &qv)) TH_LOG("%s", buf);
	TH_LOG("%d ms before the checkpoint: %s", elapsed, buf);
	/* Expirations of 20 ms from 20 ms on, the first one the signal. */
	least = elapsed / 20 - 3;
	ASSERT_LT(10, least);
	/* P's signal was pending: it reports the expirations it missed. */
	EXPECT_LE(least, ps);
	EXPECT_EQ(ps, pg);
	EXPECT_EQ(0x11, pv);
	/* Q's ignored expirations count for its first delivered signal. */
	EXPECT_LE(least, qs);
	EXPECT_EQ(qs, qg);
	EXPECT_EQ(0x12, qv);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
}

/*
 * Starts refused_target making the timer @cmd names; its checkpoint must
 * fail with EOPNOTSUPP naming the process, the timer and @why, and the
 * process must go on. Returns false when the timer could not be made.
 */
static bool refused(struct __test_metadata *_metadata, const char *image,
		    const char *cmd, const char *why)
{
	struct target t = {};
	char buf[128], want[64], msg[256];
	int id;

	ASSERT_EQ(0, target_start(&t, refused_target));
	ASSERT_EQ(0, target_ask(&t, cmd, buf, sizeof(buf)));
	if (!strncmp(buf, "skip", 4)) {
		TH_LOG("%s: %s", cmd, buf);
		target_send(&t, "q");
		target_end(&t);
		return false;
	}
	ASSERT_EQ(1, sscanf(buf, "made %d", &id)) TH_LOG("%s", buf);
	EXPECT_EQ(-EOPNOTSUPP, ckpt_checkpoint_to(t.pid, image, 0, msg,
						  sizeof(msg), NULL));
	TH_LOG("%s", msg);
	snprintf(want, sizeof(want), "pid %d timer %d: ", t.pid, id);
	EXPECT_EQ(0, strncmp(msg, want, strlen(want)));
	EXPECT_NE(NULL, strstr(msg, why));
	ASSERT_EQ(0, target_ask(&t, "?", buf, sizeof(buf)));
	EXPECT_STREQ("alive", buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	EXPECT_EQ(0, target_end(&t));
	return true;
}

TEST_F_TIMEOUT(timers, what_a_restart_cannot_make_again_is_refused_by_name, 120)
{
	CKPT_SETUP_SKIPPED();
	refused(_metadata, self->image, "o",
		"it counts the CPU time of another process");
	refused(_metadata, self->image, "t",
		"its signal goes to thread");
	refused(_metadata, self->image, "c",
		"it counts the CPU time of thread");
	if (!refused(_metadata, self->image, "a", "alarm clocks"))
		TH_LOG("no alarm timer on this machine: not checked");
}

/*
 * Reaching timer id 2^20 takes a million timer_create/timer_delete pairs:
 * seconds on the distro kernels, many minutes on the debug kernel (KASAN,
 * lockdep) under TCG, where it is skipped; the distro kernels run it.
 */
TEST_F_TIMEOUT(timers, a_timer_id_past_the_bound_is_refused_by_name, 120)
{
	struct utsname u;

	CKPT_SETUP_SKIPPED();
	if (!uname(&u) && strstr(u.release, "-ckptdebug"))
		SKIP(return, "2^20 timer ids take too long on the debug kernel");
	refused(_metadata, self->image, "i", "cannot be made again");
}

TEST_HARNESS_MAIN
