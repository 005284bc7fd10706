// SPDX-License-Identifier: GPL-2.0
/*
 * The terminal relay of ckpt restart (cli/tty.c), without VMs or ckptd.
 * The test is the user at a terminal (a pty's master); a child leads that
 * terminal's session and relays as ckpt restart does, to a "job" that
 * has the relay's pty as its controlling terminal, as ckptd's restarter
 * gives it. Checked: the slave is put in place of the terminal's
 * descriptors, with the terminal's size; the terminal is raw while the
 * job runs (again after a stop and a shell's settings) and has its
 * settings back after; a paste larger than the
 * ptys hold into a job that writes as much before it reads anything
 * goes through both ways (a relay that blocks on either side hangs
 * there: every wait here is bounded, and such a relay fails). TAP on
 * stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"

#define BIG		(256 * 1024)
#define DEADLINE_S	30

const char *prog = "tty_unit";
static int nr, failed;

static void check(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++nr, what);
	if (!ok)
		failed++;
}

/* A pty pair: the master in *@m, the slave's name in @name. */
static int pty_pair(int *m, char *name, size_t len)
{
	*m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	return *m < 0 || grantpt(*m) || unlockpt(*m) || ptsname_r(*m, name, len) ? -1 : 0;
}

static void take_ctty(int fd)
{
	setsid();
	ioctl(fd, TIOCSCTTY, 0);
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/*
 * The job: raw, as an editor makes its terminal; BIG bytes out, then BIG
 * in (none read before all are out), then "done <columns>".
 */
static void __attribute__((noreturn)) job(void)
{
	static char buf[BIG];
	struct termios t;
	struct winsize ws = { 0 };
	size_t got = 0;
	ssize_t n;

	tcgetattr(0, &t);
	cfmakeraw(&t);
	tcsetattr(0, TCSANOW, &t);
	ioctl(0, TIOCGWINSZ, &ws);
	memset(buf, 'o', sizeof(buf));
	for (size_t off = 0; off < sizeof(buf); off += n) {
		n = write(1, buf + off, sizeof(buf) - off);
		if (n <= 0)
			_exit(2);
	}
	while (got < BIG && (n = read(0, buf, sizeof(buf))) > 0)
		got += n;
	dprintf(1, "done %u %zu\r\n", ws.ws_col, got);
	_exit(got == BIG ? 0 : 3);
}

static volatile sig_atomic_t resumed;

static void on_cont(int sig)
{
	(void)sig;
	resumed = 1;
}

/*
 * The relay's side, as ckpt restart: leads the terminal @slave's session,
 * tells @report what it opened, relays until the job ends. Exits 0, or
 * the step that failed.
 */
static void __attribute__((noreturn)) relay(const char *slave, int report)
{
	int fds[3] = { 0, 1, 2 }, fd, st = 0;
	struct tty_relay t;
	struct pollfd pfd[2];
	pid_t pid;

	signal(SIGCONT, on_cont);
	fd = open(slave, O_RDWR);
	if (fd < 0)
		_exit(10);
	take_ctty(fd);
	fd = tty_relay_open(&t, fds);
	dprintf(report, "%d %d %d %d\n", fd, fds[0] == t.slave, fds[1] == t.slave,
		fds[2] == t.slave);
	if (fd != 1)
		_exit(11);
	pid = fork();
	if (!pid) {
		close(report);
		take_ctty(t.slave);
		job();
	}
	dprintf(report, "pid %d\n", (int)pid);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		poll(pfd, tty_relay_pollfds(&t, pfd), 50);
		tty_relay_copy(&t, pfd);
		if (resumed) {
			resumed = 0;
			tty_relay_resume(&t);
		}
	}
	tty_relay_close(&t);
	dprintf(report, "job %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	_exit(0);
}

/* A line of the relay's report, waiting @ms at most: whether one came. */
static bool report_line(int fd, char *line, size_t len, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	while (n + 1 < len && poll(&p, 1, ms) == 1 && read(fd, line + n, 1) == 1)
		if (line[n++] == '\n')
			break;
	line[n] = 0;
	return n && line[n - 1] == '\n';
}

/* The last @cap bytes seen, in @tail (@have of them so far). */
static void keep_tail(char *tail, size_t cap, size_t *have, const char *buf, size_t n)
{
	size_t keep;

	if (n >= cap) {
		memcpy(tail, buf + n - cap, cap);
		*have = cap;
		return;
	}
	keep = *have < cap - n ? *have : cap - n;
	memmove(tail, tail + *have - keep, keep);
	memcpy(tail + keep, buf, n);
	*have = keep + n;
}

/*
 * The user: BIG bytes typed while everything the job writes is read (a
 * canonical terminal would drop a line that long: typed only once the job
 * has its terminal raw), @out of them read already. All it read.
 */
static size_t user(int m, char *tail, size_t tail_len, bool *raw_seen, int s,
		   size_t out)
{
	static char in[BIG];
	char buf[65536];
	size_t sent = 0, have = 0;
	time_t end = time(NULL) + DEADLINE_S;
	struct termios t;
	struct pollfd p;
	ssize_t n;

	memset(in, 'i', sizeof(in));
	fcntl(m, F_SETFL, O_NONBLOCK);
	while (time(NULL) < end) {
		if (!*raw_seen && !tcgetattr(s, &t) && !(t.c_lflag & ICANON))
			*raw_seen = true;
		p = (struct pollfd){ .fd = m, .events = POLLIN | (sent < BIG ? POLLOUT : 0) };
		if (poll(&p, 1, 100) < 0)
			continue;
		/* Typed once the job writes: its terminal is raw by then. */
		if (p.revents & POLLOUT && out) {
			n = write(m, in + sent, BIG - sent > 4096 ? 4096 : BIG - sent);
			if (n > 0)
				sent += n;
		}
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		n = read(m, buf, sizeof(buf));
		if (n <= 0)
			break;
		out += n;
		keep_tail(tail, tail_len - 1, &have, buf, n);
		tail[have] = 0;
		if (strstr(tail, "done") && strchr(strstr(tail, "done"), '\n'))
			break;
	}
	return out;
}

int main(void)
{
	struct winsize ws = { .ws_row = 33, .ws_col = 91 };
	struct termios before, after;
	char name[64], tail[64] = "", line[128];
	int m, s, rep[2], a = -1, b = -1, c = -1, d = -1, code = -1, job_pid = -1;
	bool raw_seen = false;
	static char junk[65536];
	size_t out = 0;
	ssize_t n;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..6\n");
	signal(SIGPIPE, SIG_IGN);
	if (pty_pair(&m, name, sizeof(name)) || pipe(rep)) {
		printf("Bail out! no pseudo-terminal: %s\n", strerror(errno));
		return 1;
	}
	ioctl(m, TIOCSWINSZ, &ws);
	s = open(name, O_RDWR | O_NOCTTY);
	tcgetattr(s, &before);
	pid = fork();
	if (!pid) {
		close(rep[0]);
		close(m);
		close(s);
		relay(name, rep[1]);
	}
	close(rep[1]);
	if (report_line(rep[0], line, sizeof(line), DEADLINE_S * 1000))
		sscanf(line, "%d %d %d %d", &a, &b, &c, &d);
	check(a == 1 && b == 1 && c == 1 && d == 1,
	      "in a terminal's foreground: a pty of its own in place of descriptors 0, 1 and 2");
	if (report_line(rep[0], line, sizeof(line), DEADLINE_S * 1000))
		sscanf(line, "pid %d", &job_pid);
	/* Stopped, the terminal given a shell's settings, continued. */
	kill(pid, SIGSTOP);
	waitpid(pid, NULL, WUNTRACED);
	tcsetattr(s, TCSANOW, &before);
	kill(pid, SIGCONT);
	/*
	 * What the job writes meanwhile is read, as a user's terminal does: a
	 * relay blocked writing to a terminal nobody reads never gets back to
	 * its loop to see that it was continued.
	 */
	fcntl(m, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 100 && !tcgetattr(s, &after) && (after.c_lflag & ICANON); i++) {
		usleep(50000);
		while ((n = read(m, junk, sizeof(junk))) > 0)
			out += n;
	}
	check(!tcgetattr(s, &after) && !(after.c_lflag & ICANON),
	      "stopped, the terminal reset by a shell, continued: raw again");
	out = user(m, tail, sizeof(tail), &raw_seen, s, out);
	check(raw_seen, "the terminal is raw while the job runs");
	/* A relay stuck on either side never reports: both are ended. */
	if (report_line(rep[0], line, sizeof(line), 10000))
		sscanf(line, "job %d", &code);
	else if (job_pid > 0)
		kill(job_pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	check(code == 0 && out >= BIG && strstr(tail, "done 91 262144"),
	      "256 KiB pasted into a job writing 256 KiB first: both ways through, none lost");
	check(strstr(tail, "done 91") != NULL,
	      "the job's terminal has the terminal's size, and its last line comes out");
	tcgetattr(s, &after);
	check(after.c_lflag == before.c_lflag && after.c_iflag == before.c_iflag &&
	      after.c_oflag == before.c_oflag,
	      "the terminal has its settings back once the job ended");
	return failed ? 1 : 0;
}
