// SPDX-License-Identifier: GPL-2.0
/*
 * ptytree LINES NAP_MS [HOLD]: a process tree whose output goes through a
 * pseudo-terminal, as Open MPI's mpirun has its ranks do, and which a
 * session has as its controlling terminal, as `script` or sshd give a
 * shell one, for the tree tests. The root opens a pair (posix_openpt),
 * sets its window to 33 rows and 77 columns and forks a child, which
 * starts a session of its own, takes the slave as its controlling
 * terminal (TIOCSCTTY), opens it as its standard output and again at fd
 * 3, turns ONLCR and ECHO off on it and forks the printer: a grandchild
 * that makes a process group of its own the terminal's foreground (as a
 * job-control shell runs a job) and prints "line I" for I in 0..LINES-1,
 * one every NAP_MS milliseconds, the last one only once the file HOLD, if
 * given, does not exist (a test's checkpoint cannot come after the end
 * on a slow machine); then it checks that its terminal still
 * has ONLCR and ECHO off, the window of 33x77 and its group as the
 * foreground, and exits 0 (1 if not). The child reaps it, checks that
 * the slave is still its controlling terminal, in its session, and exits
 * with the printer's status (1 if not). The root reads the master,
 * counts the lines and sums them (each line's I), until the end of the
 * output (EIO once the slave is closed), and with the child's exit
 * status prints one line on standard output,
 *
 *   ptytree: LINES lines, sum S, child 0
 *
 * and exits 3; a line out of order (one lost, one twice) is said on
 * standard error, exit 1. A run restarted from any point prints the same
 * line as one never interrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *hold;	/* HOLD: the last line waits while it exists */

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The grandchild: the terminal's foreground, the lines, the checks. */
static void __attribute__((noreturn)) printer(long lines, long ms)
{
	struct termios t;
	struct winsize ws;
	sigset_t ttou;
	long i;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, NULL);
	if (setpgid(0, 0) || tcsetpgrp(1, getpgrp()))
		_exit(2);
	sigprocmask(SIG_UNBLOCK, &ttou, NULL);
	for (i = 0; i < lines; i++) {
		while (i + 1 == lines && hold && !access(hold, F_OK))
			nap(100);
		printf("line %ld\n", i);
		fflush(stdout);
		nap(ms);
	}
	if (tcgetattr(1, &t) || ioctl(1, TIOCGWINSZ, &ws) ||
	    t.c_oflag & ONLCR || t.c_lflag & ECHO ||
	    ws.ws_row != 33 || ws.ws_col != 77) {
		fprintf(stderr, "ptytree: the terminal's settings changed\n");
		_exit(1);
	}
	if (tcgetpgrp(1) != getpgrp()) {
		fprintf(stderr, "ptytree: the printer's group is not the terminal's foreground: %m\n");
		_exit(1);
	}
	_exit(0);
}

static void __attribute__((noreturn)) child(int master, const char *slave,
					    long lines, long ms)
{
	struct termios t;
	int fd, status;
	pid_t pid;

	close(master);
	setsid();
	fd = open(slave, O_RDWR | O_NOCTTY);
	if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) || dup2(fd, 1) != 1 ||
	    tcgetattr(1, &t))
		_exit(2);
	close(fd);
	/* A second open file of it, at fd 3, not a standard descriptor. */
	if (open(slave, O_RDWR | O_NOCTTY) != 3)
		_exit(2);
	t.c_oflag &= ~ONLCR;
	t.c_lflag &= ~ECHO;
	if (tcsetattr(1, TCSANOW, &t))
		_exit(2);
	pid = fork();
	if (pid < 0)
		_exit(2);
	if (!pid)
		printer(lines, ms);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		_exit(2);
	fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (fd < 0 || tcgetsid(1) != getsid(0)) {
		fprintf(stderr, "ptytree: the pseudo-terminal is no longer the session's controlling terminal: %m\n");
		_exit(1);
	}
	_exit(WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	struct winsize ws = { .ws_row = 33, .ws_col = 77 };
	long lines, ms, got = 0, sum = 0, n;
	char buf[4096], line[64], *slave;
	size_t len = 0;
	int master, status;
	ssize_t r;
	pid_t pid;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: ptytree LINES NAP_MS [HOLD]\n");
		return 2;
	}
	hold = argc == 4 ? argv[3] : NULL;
	lines = atol(argv[1]);
	ms = atol(argv[2]);
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    !(slave = ptsname(master)) || ioctl(master, TIOCSWINSZ, &ws)) {
		perror("ptytree: pty");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		child(master, slave, lines, ms);
	for (;;) {
		r = read(master, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;	/* EIO: the slave is closed */
		for (ssize_t k = 0; k < r; k++) {
			if (buf[k] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[k];
				continue;
			}
			line[len] = '\0';
			len = 0;
			if (sscanf(line, "line %ld", &n) != 1 || n != got) {
				fprintf(stderr, "ptytree: line %ld expected, got \"%s\"\n",
					got, line);
				return 1;
			}
			got++;
			sum += n;
		}
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	printf("ptytree: %ld lines, sum %ld, child %d\n", got, sum,
	       WEXITSTATUS(status));
	return 3;
}
