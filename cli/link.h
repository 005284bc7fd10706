/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The job's own link between ckpt-ssh and the remote command it starts
 * (link.c; Documentation/ckptd.md, "The job's own link").
 */
#ifndef _CKPT_CLI_LINK_H
#define _CKPT_CLI_LINK_H

#include <sys/types.h>

#define LINK_TOKEN_LEN	32	/* hex digits */
#define LINK_WAIT_S	120	/* for the remote side to connect */

/* A random token, LINK_TOKEN_LEN hex digits: 0 or -1. */
int link_token(char token[LINK_TOKEN_LEN + 1]);

/* A listening TCP socket on every address, port *@port: its fd, or -1. */
int link_listen(unsigned int *port);

/*
 * The connection on @l that sends @token first, within LINK_WAIT_S: its
 * fd (ssh, @ssh, may have ended and been reaped meanwhile); -ECHILD once
 * ssh has ended with no connection waiting, its wait status in
 * *@ssh_status; -ETIMEDOUT.
 */
int link_accept(int l, const char *token, pid_t ssh, int *ssh_status);

/* Connected to @node port @port, @token sent: the fd, or -1. */
int link_connect(const char *node, const char *port, const char *token);

/*
 * ckpt-ssh's side: its standard input to the link (a process of its own),
 * the command's output and error from it, until its exit status comes:
 * that status (255 when the link ends first, said on stderr).
 */
int link_local(int link);

/*
 * The relay's side, for @child (the leader of its process group): its
 * standard input (@in) from the link (a process of its own), its output
 * (@out) and error (@err) to it, then its wait status; the group hung up
 * (SIGHUP) if the link ends first. The exit status.
 */
int link_remote(int link, pid_t child, int in, int out, int err);

#endif /* _CKPT_CLI_LINK_H */
