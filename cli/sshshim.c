// SPDX-License-Identifier: GPL-2.0
/*
 * A job's plain ssh (Documentation/ckptd.md, "Plain ssh"): ckpt-run puts
 * lib/ckpt/ssh, whose one entry, ssh, is this program, first on the job's
 * PATH.
 *
 *   ssh [SSH OPTIONS] DESTINATION [SSH OPTIONS] [COMMAND...]
 *       ckpt-ssh when all of these hold: it runs in a job ($CKPT_JOBID), it
 *       has a command, none of its options makes ssh something other than
 *       a command's carrier (a terminal, a subsystem, forwarding, going to
 *       the background, a master or control connection, a query), and
 *       this node's ckptd says DESTINATION's host is one of the cluster's
 *       nodes (its ckptd answers under the cluster key). Anything else is
 *       the system's ssh, run with the same arguments: git, rsync or scp
 *       to a host outside the cluster work as they do without ckpt.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "proto.h"

/* ssh(1)'s flags (its options taking an argument: commands.h). */
#define SSH_FLAGS	"1246AaCfGgKkMNnqsTtVvXxYy"
/* Those that make ssh more than a command's carrier: run as asked. */
#define SSH_OWN_OPTS	"fGMNOQstVWLRDw"
/* -o keywords that do the same (ssh_config(5)), or take its stdin. */
static const char *const own_keywords[] = {
	"RequestTTY", "SessionType", "LocalForward", "RemoteForward",
	"DynamicForward", "ForkAfterAuthentication", "StdinNull", "Tunnel",
	"RemoteCommand", "User",
};

int ssh_system(char *buf, size_t len)
{
	char self[PATH_MAX], cand[PATH_MAX];
	const char *path = getenv("PATH"), *p, *end;

	const char *base;

	if (!realpath("/proc/self/exe", self))
		return -errno;
	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (end == p)
			continue;
		if (snprintf(buf, len, "%.*s/ssh", (int)(end - p), p) >= (int)len ||
		    access(buf, X_OK) || !realpath(buf, cand) ||
		    !strcmp(cand, self))
			continue;
		/* Another installation's shim would call this one back. */
		base = strrchr(cand, '/');
		if (!strcmp(base ? base + 1 : cand, "ckpt"))
			continue;
		return 0;
	}
	return -ENOENT;
}

/* A plain ssh's words, sorted: options, the destination, the command. */
struct ssh_words {
	char **opts;		/* ssh's options, with their arguments */
	int nr_opts;
	const char *dest;
	char **cmd;
	int nr_cmd;
	bool own;		/* an option makes it more than a carrier */
	bool no_stdin;		/* -n: the command reads /dev/null */
};

/* @w's next option word: @len bytes of @from after a '-'. */
static int add_word(struct ssh_words *w, const char *from, size_t len)
{
	char *word = malloc(len + 2);

	if (!word)
		return -1;
	word[0] = '-';
	memcpy(word + 1, from, len);
	word[len + 1] = '\0';
	w->opts[w->nr_opts++] = word;
	return 0;
}

/*
 * One word of ssh's options (@word, not "--") into @w, without its -n
 * (which the shim does itself: the link carries standard input), and an
 * option whose argument is the next word in a word of its own, as
 * ckpt-ssh reads them: 1 if the next word is that argument, 0, or -1 if
 * an option is unknown (ssh would refuse it: ssh says so).
 */
static int option_word(const char *word, struct ssh_words *w)
{
	char flags[64];
	size_t nf = 0;
	const char *c;

	for (c = word + 1; *c; c++) {
		if (!strchr(SSH_FLAGS, *c) && !strchr(SSH_ARG_OPTS, *c))
			return -1;
		if (strchr(SSH_OWN_OPTS, *c))
			w->own = true;
		if (strchr(SSH_ARG_OPTS, *c))
			break;
		if (*c == 'n')
			w->no_stdin = true;
		else if (nf < sizeof(flags))
			flags[nf++] = *c;
		else
			return -1;	/* ssh's, then */
	}
	if (nf && add_word(w, flags, nf))
		return -1;
	if (!*c)
		return 0;
	/* An option taking an argument: the rest of the word, or the next. */
	if (add_word(w, c, strlen(c)))
		return -1;
	return !c[1];
}

/*
 * ssh's options from @argv[*@i], getopt's way, up to the first word that
 * is none or past "--" (*@ended then), into @w: -1 if ssh would refuse
 * them.
 */
static int take_options(int argc, char **argv, int *i, struct ssh_words *w,
			bool *ended)
{
	int next;

	for (; *i < argc && argv[*i][0] == '-' && argv[*i][1]; (*i)++) {
		if (!strcmp(argv[*i], "--")) {
			(*i)++;
			*ended = true;
			break;
		}
		next = option_word(argv[*i], w);
		if (next < 0 || (next && ++(*i) >= argc))
			return -1;
		if (next)
			w->opts[w->nr_opts++] = argv[*i];
	}
	return 0;
}

/* Whether ssh's config keyword @kw (ending at '=', a blank or NUL) is @name. */
static bool keyword_is(const char *kw, const char *name)
{
	size_t n = strcspn(kw, "= \t");

	return n == strlen(name) && !strncasecmp(kw, name, n);
}

/* Whether @user, a remote user asked for, is someone other than the caller. */
static bool other_user(const char *user)
{
	const struct passwd *pw = getpwuid(getuid());

	return !pw || strcmp(user, pw->pw_name);
}

/*
 * Whether @w's option word @i (its argument after it, or attached) makes
 * ssh more than a command's carrier for the job: a -o keyword that does
 * (own_keywords), or another remote user (-l, -o User), whom ckpt-join on
 * the node would not let into the caller's job.
 */
static bool own_option(const struct ssh_words *w, int i)
{
	const char *o = w->opts[i], *arg;
	size_t k;

	if (o[0] != '-' || (o[1] != 'o' && o[1] != 'l'))
		return false;
	arg = o[2] ? o + 2 : i + 1 < w->nr_opts ? w->opts[i + 1] : "";
	if (o[1] == 'l')
		return other_user(arg);
	for (k = 0; k < sizeof(own_keywords) / sizeof(own_keywords[0]); k++) {
		if (!keyword_is(arg, own_keywords[k]))
			continue;
		if (strcmp(own_keywords[k], "User"))
			return true;
		arg += strcspn(arg, "= \t");
		arg += strspn(arg, "= \t");
		return other_user(arg);
	}
	return false;
}

/* @argv sorted into @w; -1 if ssh would not take it as a command's. */
static int sort_words(int argc, char **argv, struct ssh_words *w)
{
	bool ended = false;
	int i = 1;

	/* A word of flags becomes two at most: flags, an option. */
	w->opts = calloc(2 * argc + 1, sizeof(*w->opts));
	if (!w->opts || take_options(argc, argv, &i, w, &ended) || i >= argc)
		return -1;
	w->dest = argv[i++];
	/* ssh takes options after the destination too, unless "--" came. */
	if (!ended && take_options(argc, argv, &i, w, &ended))
		return -1;
	w->cmd = argv + i;
	w->nr_cmd = argc - i;
	/* ssh takes a command of empty words for none: a login. */
	for (i = 0; i < w->nr_cmd && !*w->cmd[i]; i++)
		;
	if (i == w->nr_cmd)
		w->nr_cmd = 0;
	/* A destination that looks like an option: ssh's to read. */
	if (w->dest[0] == '-')
		w->own = true;
	for (i = 0; i < w->nr_opts; i++)
		if (own_option(w, i))
			w->own = true;
	return 0;
}

/*
 * Whether this node's ckptd says @dest's host is one of the cluster's. A
 * ckptd busy with other questions is asked again (10 s at most); one that
 * cannot answer leaves the command to the system's ssh, said on stderr,
 * since it runs outside the job then.
 */
static bool cluster_node(const char *dest)
{
	const char *at = strrchr(dest, '@'), *host = at ? at + 1 : dest;
	struct ckpt_err err;
	json_t *req, *res = NULL;
	int tries, ret = -EIO;
	bool yes;

	/* A URI (ssh://): not for us to read. */
	if (strchr(dest, '/') || !*host)
		return false;
	/* Another remote user: ckpt-join would not let them in. */
	if (at && other_user(strndupa(dest, at - dest)))
		return false;
	req = json_pack("{s:s, s:s}", "op", "node", "node", host);
	for (tries = 0; req && tries < 20; tries++) {
		ret = ckptd_call(req, &res, &err);
		if (!ret || !strstr(err.msg, "node: busy"))
			break;
		usleep(500000);
	}
	json_decref(req);
	if (ret) {
		fprintf(stderr, "%s: cannot ask ckptd whether %s is one of the cluster's nodes (%s): the system's ssh runs the command, outside job %s\n",
			prog, host, req ? err.msg : "out of memory",
			getenv("CKPT_JOBID"));
		return false;
	}
	yes = json_is_true(json_object_get(res, "cluster"));
	json_decref(res);
	return yes;
}

int cmd_plain_ssh(int argc, char **argv)
{
	const char *job = getenv("CKPT_JOBID");
	struct ssh_words w = { 0 };
	char ssh[PATH_MAX], **av;
	int i, n = 0, ret;

	if (job && *job && !sort_words(argc, argv, &w) && !w.own &&
	    w.nr_cmd > 0 && cluster_node(w.dest)) {
		av = calloc(w.nr_opts + w.nr_cmd + 3, sizeof(*av));
		if (!av) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return 255;
		}
		av[n++] = argv[0];
		for (i = 0; i < w.nr_opts; i++)
			av[n++] = w.opts[i];
		av[n++] = (char *)w.dest;
		for (i = 0; i < w.nr_cmd; i++)
			av[n++] = w.cmd[i];
		if (w.no_stdin) {
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

			if (fd < 0 || dup2(fd, 0) < 0) {
				fprintf(stderr, "%s: /dev/null: %s\n", prog,
					strerror(errno));
				return 255;
			}
			close(fd);
		}
		return cmd_ssh(n, av);
	}
	ret = ssh_system(ssh, sizeof(ssh));
	if (!ret) {
		execv(ssh, argv);
		ret = -errno;
	}
	fprintf(stderr, "%s: cannot run the system's ssh: %s\n", prog,
		strerror(-ret));
	return 255;
}
