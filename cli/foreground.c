// SPDX-License-Identifier: GPL-2.0
/*
 * A job ckptd runs with this command's standard descriptors (a restart
 * through ckptd, ckpt-run --ns): this command stays its foreground.
 * Signals it gets (Ctrl-C too: the job is not on this terminal's process
 * group) go to the job's root through ckptd; on a terminal the job has
 * one of its own, relayed (tty.c); the root's status is the exit status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "err.h"
#include "proto.h"

/* A line of the command's own, also while its terminal is raw. */
static void __attribute__((format(printf, 3, 4)))
say(const char *who, const struct tty_relay *tty, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(tty->raw ? "\r\n" : "\n", stderr);
}

/* What ckptd says; 1 once it gave the job's end (in *@status) or refused. */
static int heard(int fd, const char *who, const char *started,
		 const struct tty_relay *tty, int *status, struct ckpt_err *err)
{
	json_t *msg;
	int ret;

	ret = ckptd_msg_recv(fd, &msg, err);
	if (ret)
		return ret;
	ret = 1;
	if (!json_object_get(msg, "ok")) {
		if (!strcmp(ckptd_msg_str(msg, "event") ?: "", "started"))
			say(who, tty, "job %s%s", ckptd_msg_str(msg, "job") ?: "?", started);
		ret = 0;
	} else if (json_is_true(json_object_get(msg, "ok"))) {
		*status = json_integer_value(json_object_get(msg, "status"));
	} else {
		/* Its program never ran (a start's "cannot run"): its status too. */
		if (json_is_integer(json_object_get(msg, "status")))
			*status = json_integer_value(json_object_get(msg, "status"));
		ret = ckpt_err_set(err, EPERM, "%s", ckptd_msg_str(msg, "error") ?: "refused");
	}
	json_decref(msg);
	return ret;
}

int ckptd_foreground(const char *who, json_t *req, const char *started)
{
	static const int sigs[] = { CKPTD_FORWARDED_SIGNALS, SIGWINCH };
	int stdfds[3] = { 0, 1, 2 };
	struct tty_relay tty = { .master = -1, .slave = -1 };
	struct signalfd_siginfo si;
	struct ckpt_err err;
	struct pollfd pfd[4];
	json_t *sreq;
	sigset_t set;
	int fd = -1, sfd, ret, status = -1;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	ret = tty_relay_open(&tty, stdfds);
	if (ret < 0)
		ckpt_err_set(&err, -ret, "cannot open a terminal for the job: %s",
			     strerror(-ret));
	else
		fd = ckptd_connect(&err);
	if (json_object_set_new(req, "tty", json_boolean(ret > 0)) && ret >= 0)
		ret = ckpt_err_set(&err, ENOMEM, "out of memory");
	ret = ret < 0 ? ret : fd < 0 ? fd : ckptd_msg_send(fd, req, stdfds, 3, &err);
	while (!ret) {
		pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (poll(pfd, 2 + tty_relay_pollfds(&tty, pfd + 2), -1) < 0)
			continue;
		tty_relay_copy(&tty, pfd + 2);
		if (pfd[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) {
				tty_relay_resize(&tty);
			} else {
				if (si.ssi_signo == SIGCONT)
					tty_relay_resume(&tty);
				sreq = json_pack("{s:s, s:i}", "op", "signal", "sig",
						 (int)si.ssi_signo);
				ckptd_msg_send(fd, sreq, NULL, 0, NULL);
				json_decref(sreq);
			}
		}
		if (pfd[0].revents)
			ret = heard(fd, who, started, &tty, &status, &err);
	}
	if (fd >= 0)
		close(fd);
	tty_relay_close(&tty);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", who,
			ret == -EPIPE ? "ckptd closed the connection before the job ended" :
			err.msg);
		if (status < 0 || !WIFEXITED(status) || !WEXITSTATUS(status))
			return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
