/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ckpt subcommands, one file each, listed in commands[] in ckpt.c.
 *
 * A command is int cmd_NAME(int argc, char **argv), called with argv[0] set
 * to its name, so getopt_long() works on it as on a program's arguments. It
 * parses its own options (-h/--help; an unknown option prints its usage on
 * stderr and returns 1), prints its own messages prefixed with prog, and
 * returns the exit status.
 */
#ifndef _CKPT_CLI_COMMANDS_H
#define _CKPT_CLI_COMMANDS_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <termios.h>

/* The program's name, for messages: "ckpt". */
extern const char *prog;

int cmd_version(int argc, char **argv);		/* version.c */
int cmd_inspect(int argc, char **argv);		/* inspect.c */
int cmd_checkpoint(int argc, char **argv);	/* checkpoint.c */
int cmd_restart(int argc, char **argv);		/* restart.c */
int cmd_run(int argc, char **argv);		/* run.c */
int cmd_key(int argc, char **argv);		/* key.c */
int cmd_job(int argc, char **argv);		/* job.c */
int cmd_ls(int argc, char **argv);		/* job.c */
int cmd_status(int argc, char **argv);		/* job.c */
int cmd_cancel(int argc, char **argv);		/* job.c */
int cmd_join(int argc, char **argv);		/* join.c */
int cmd_ssh(int argc, char **argv);		/* join.c */
int cmd_plain_ssh(int argc, char **argv);	/* sshshim.c */
/* ssh(1)'s options that take an argument. */
#define SSH_ARG_OPTS	"BbcDEeFIiJLlmOoPpQRSWw"
/*
 * sshshim.c: the system's ssh into @buf, the first on $PATH that is not
 * this program (a job's PATH has the shim named ssh first); -ENOENT.
 */
int ssh_system(char *buf, size_t len);

/*
 * job.c: whether DIR holds a job's snapshot (ckptd's metadata); its
 * absolute path for ckptd, which resolves it as root (0, or 1 said why);
 * ckpt inspect SNAPSHOT, through ckptd (the exit status).
 */
bool snapshot_dir(const char *dir);
int snapshot_path(const char *cmd, const char *dir, char abs[PATH_MAX]);
int inspect_snapshot(const char *dir, bool json);

/* run.c: execs @argv with libckpt preloaded; returns only on failure. */
int run_preloaded(char **argv);

/*
 * tty.c: a job restarted through ckptd gets a pseudo-terminal of its own,
 * copied to and from the command's terminal. tty_relay_open() puts its
 * slave in @fds in place of each descriptor that is that terminal when the
 * command runs in its foreground, input and output on it: 1, 0 (no
 * terminal) or -errno.
 * tty_relay_pollfds() fills two pollfds (0 if there is no relay) for
 * tty_relay_copy(); tty_relay_close() copies the job's last output and
 * gives the terminal its settings back.
 */
struct tty_relay {
	int master, slave;
	bool raw, in_eof, out_eof;
	struct termios saved;
	char in[4096];		/* typed, not yet taken by the master */
	size_t in_off, in_len;
};

int tty_relay_open(struct tty_relay *t, int fds[3]);
int tty_relay_pollfds(struct tty_relay *t, struct pollfd *pfd);
void tty_relay_copy(struct tty_relay *t, const struct pollfd *pfd);
void tty_relay_resize(struct tty_relay *t);
void tty_relay_resume(struct tty_relay *t);	/* after SIGCONT */
void tty_relay_close(struct tty_relay *t);

/*
 * foreground.c: @req (its "tty" set here) sent to ckptd with this
 * command's standard descriptors, for a job ckptd runs with them; this
 * command stays its foreground until it ends: signals go on to it, a
 * terminal is relayed, its "started" said as "@who: job ID@started". The
 * job's exit status as a shell gives it, or 1 with the error said.
 */
struct json_t;
int ckptd_foreground(const char *who, struct json_t *req, const char *started);

#endif /* _CKPT_CLI_COMMANDS_H */
