// SPDX-License-Identifier: GPL-2.0
/*
 * The terminal of a job restarted through ckptd (ckpt restart SNAPSHOT).
 *
 * ckptd, not this command, makes the job's processes, so they cannot be
 * in this command's session and cannot have its terminal as theirs. When
 * the command runs in the foreground of a terminal it opens a
 * pseudo-terminal of the user's with the terminal's settings and size,
 * sends its slave in place of each standard descriptor that is the
 * terminal, and ckptd's restarter makes it the job's controlling terminal
 * (Documentation/decisions.md, "A job restarted on a terminal"). This
 * command puts its own terminal in raw mode and copies both ways, as ssh
 * -t does: what is typed (Ctrl-C, Ctrl-Z included) reaches the job's
 * terminal and its foreground group, what the job writes comes out here,
 * and a change of window size follows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"

/* How long the job's last output may take to come out of the pty. */
#define TTY_DRAIN_QUIET_MS	200
#define TTY_DRAIN_ROUNDS	50

static void tty_winsize(struct tty_relay *t)
{
	struct winsize ws;

	if (!ioctl(0, TIOCGWINSZ, &ws))
		ioctl(t->master, TIOCSWINSZ, &ws);
}

/* Whether descriptor @fd is the terminal @st is of. */
static bool same_tty(int fd, const struct stat *st)
{
	struct stat fst;

	return isatty(fd) && !fstat(fd, &fst) && S_ISCHR(fst.st_mode) &&
	       fst.st_rdev == st->st_rdev;
}

/* The command's terminal in raw mode: what is typed goes as it is. */
static int tty_raw(struct tty_relay *t)
{
	struct termios raw = t->saved;

	cfmakeraw(&raw);
	return tcsetattr(0, TCSADRAIN, &raw);
}

int tty_relay_open(struct tty_relay *t, int fds[3])
{
	struct stat st;
	char name[64];
	int i;

	*t = (struct tty_relay){ .master = -1, .slave = -1 };
	if (!isatty(0) || tcgetpgrp(0) != getpgrp() || fstat(0, &st) ||
	    !same_tty(1, &st) || tcgetattr(0, &t->saved))
		return 0;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->master < 0 || grantpt(t->master) || unlockpt(t->master) ||
	    ptsname_r(t->master, name, sizeof(name)))
		goto fail;
	t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0 || tcsetattr(t->slave, TCSANOW, &t->saved))
		goto fail;
	tty_winsize(t);
	if (tty_raw(t))
		goto fail;
	t->raw = true;
	for (i = 0; i < 3; i++)
		if (same_tty(i, &st))
			fds[i] = t->slave;
	return 1;
fail:
	i = -errno;
	tty_relay_close(t);
	return i;
}

/*
 * The master, for what the job writes (until it hangs up) and, while
 * typed bytes wait, for room; the terminal, for what is typed, while none
 * wait.
 */
int tty_relay_pollfds(struct tty_relay *t, struct pollfd *pfd)
{
	if (t->master < 0)
		return 0;
	pfd[0] = (struct pollfd){
		.fd = t->out_eof && !t->in_len ? -1 : t->master,
		.events = (t->out_eof ? 0 : POLLIN) | (t->in_len ? POLLOUT : 0),
	};
	pfd[1] = (struct pollfd){
		.fd = t->in_eof || t->in_len ? -1 : 0, .events = POLLIN,
	};
	return 2;
}

static void write_all(int fd, const char *buf, ssize_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= w;
	}
}

/* What the job wrote, out here once; out_eof once the pty hung up. */
static void tty_out(struct tty_relay *t)
{
	char buf[4096];
	ssize_t n;

	n = read(t->master, buf, sizeof(buf));
	if (n > 0)
		write_all(1, buf, n);
	else if (!n || (errno != EAGAIN && errno != EINTR))
		t->out_eof = true;
}

/* Copies what @pfd (from tty_relay_pollfds) says is ready. */
void tty_relay_copy(struct tty_relay *t, const struct pollfd *pfd)
{
	ssize_t n;

	if (t->master < 0)
		return;
	if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR) && !t->out_eof)
		tty_out(t);
	if (pfd[1].revents) {
		n = read(0, t->in, sizeof(t->in));
		if (n > 0)
			t->in_len = n;
		else if (!n || (errno != EAGAIN && errno != EINTR))
			t->in_eof = true;
		t->in_off = 0;
	}
	if (t->in_len) {
		n = write(t->master, t->in + t->in_off, t->in_len);
		if (n > 0) {
			t->in_off += n;
			t->in_len -= n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			t->in_len = 0;
			t->in_eof = true;
		}
	}
}

void tty_relay_resize(struct tty_relay *t)
{
	if (t->master >= 0)
		tty_winsize(t);
}

/*
 * Continued after a stop (kill -STOP, then fg): a shell gave the terminal
 * its own settings meanwhile. Raw again, and the size, once in the
 * foreground (in the background the terminal is the shell's).
 */
void tty_relay_resume(struct tty_relay *t)
{
	if (t->master < 0 || !t->raw || tcgetpgrp(0) != getpgrp())
		return;
	tty_raw(t);
	tty_winsize(t);
}

/*
 * The job ended: what it wrote last, until the pty is hung up (no slave
 * open) or quiet for a moment (a process of the job still holds it).
 */
static void tty_drain(struct tty_relay *t)
{
	struct pollfd pfd = { .fd = t->master, .events = POLLIN };
	int i;

	for (i = 0; i < TTY_DRAIN_ROUNDS && !t->out_eof; i++) {
		if (poll(&pfd, 1, TTY_DRAIN_QUIET_MS) <= 0)
			return;
		tty_out(t);
	}
}

void tty_relay_close(struct tty_relay *t)
{
	sigset_t ttou, old;

	if (t->slave >= 0)
		close(t->slave);
	t->slave = -1;
	if (t->master >= 0) {
		tty_drain(t);
		close(t->master);
	}
	t->master = -1;
	if (t->raw) {
		/* Also from the background, where SIGTTOU would stop us. */
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		tcsetattr(0, TCSADRAIN, &t->saved);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	t->raw = false;
}
