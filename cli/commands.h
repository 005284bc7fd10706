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
#include <stdbool.h>

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

#endif /* _CKPT_CLI_COMMANDS_H */
