// SPDX-License-Identifier: GPL-2.0
/*
 * ckptd: main, its configuration file, the event loop, signals, and the
 * children it waits for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "ckptd.h"

/*
 * In the foreground, the log: standard error as ckptd started with it. A
 * worker that restarts a job gives its own standard descriptors to the job
 * (the client's, or /dev/null): its messages must not follow them.
 */
static int log_fd = STDERR_FILENO;

uint64_t ckptd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void ckptd_log(const struct ckptd *d, int level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_INFO, LOG_DEBUG };
	char msg[1024];
	va_list ap;

	if (level > d->cfg.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->foreground)
		dprintf(log_fd, "ckptd: %s\n", msg);
	else
		syslog(prio[level], "%s", msg);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ckptd [--foreground] [--config FILE] [--socket PATH]\n"
		"The checkpoint/restart daemon of this node: keeps its jobs, takes\n"
		"their checkpoints and restarts their snapshots (ckptd(8)).\n"
		"  --foreground   stay in the foreground, log to standard error\n"
		"  --config FILE  the configuration (default " CKPTD_CONF ")\n"
		"  --socket PATH  the clients' socket (default " CKPTD_SOCKET ")\n");
}

/* One "key = value" setting of the configuration file. */
static int config_set(struct ckptd_config *cfg, const char *key,
		      const char *val)
{
	char *end;

	if (!strcmp(key, "snapshot_root"))
		snprintf(cfg->snapshot_root, sizeof(cfg->snapshot_root), "%s", val);
	else if (!strcmp(key, "key_file"))
		snprintf(cfg->key_file, sizeof(cfg->key_file), "%s", val);
	else if (!strcmp(key, "socket"))
		snprintf(cfg->socket, sizeof(cfg->socket), "%s", val);
	else if (!strcmp(key, "log_level")) {
		cfg->log_level = strtol(val, &end, 10);
		if (*end || !*val || cfg->log_level < 0 || cfg->log_level > 2)
			return -EINVAL;
	} else if (!strcmp(key, "listen")) {
		if (strlen(val) >= sizeof(cfg->listen))
			return -EINVAL;
		snprintf(cfg->listen, sizeof(cfg->listen), "%s", val);
	} else if (!strcmp(key, "copies")) {
		cfg->copies = strtoul(val, &end, 10);
		if (*end || !*val || cfg->copies > CKPTD_COPIES_MAX)
			return -EINVAL;
	} else if (!strcmp(key, "port")) {
		cfg->port = strtoul(val, &end, 10);
		if (*end || !*val || !cfg->port || cfg->port > 65535)
			return -EINVAL;
	} else
		return -ENOENT;
	return 0;
}

/* Absent is fine (the defaults); an unknown key or a bad value is not. */
static int config_read(struct ckptd_config *cfg, const char *path,
		       bool must_exist)
{
	char line[PATH_MAX + 64], *key, *val, *eq, *end;
	unsigned int n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		fprintf(stderr, "ckptd: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "#\n")] = '\0';
		key = line + strspn(line, " \t");
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq)
			goto bad;
		val = eq + 1 + strspn(eq + 1, " \t");
		for (end = eq; end > key && strchr(" \t", end[-1]); end--)
			;
		*end = '\0';
		for (end = val + strlen(val); end > val && strchr(" \t", end[-1]); end--)
			;
		*end = '\0';
		if (config_set(cfg, key, val))
			goto bad;
	}
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "ckptd: %s:%u: not a known 'key = value' setting\n",
		path, n);
	fclose(f);
	return -1;
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	workers_reap(arg);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct ckptd *d = arg;

	(void)fd;
	(void)what;
	ckptd_log(d, 1, "stopping; jobs run on and are found again at the next start");
	event_base_loopexit(d->base, NULL);
}

/* Every second: ended jobs go (records, cgroups); periodic checkpoints. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	job_reap(arg);
	job_sweep_cgroups(arg);
	checkpoint_due(arg);
}

static int parse_args(struct ckptd *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *conf = CKPTD_CONF, *sock = NULL;
	bool conf_given = false;
	int c;

	while ((c = getopt_long(argc, argv, "fc:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			d->foreground = true;
			break;
		case 'c':
			conf = optarg;
			conf_given = true;
			break;
		case 's':
			sock = optarg;
			break;
		case 'V':
			printf("ckptd %s\n", CKPT_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 1;
	}
	snprintf(d->cfg.snapshot_root, sizeof(d->cfg.snapshot_root), "/var/lib/ckpt");
	snprintf(d->cfg.key_file, sizeof(d->cfg.key_file), "/etc/ckpt/cluster.key");
	snprintf(d->cfg.socket, sizeof(d->cfg.socket), "%s", CKPTD_SOCKET);
	d->cfg.log_level = 1;
	d->cfg.port = CKPTD_PORT;
	d->cfg.copies = 1;
	if (config_read(&d->cfg, conf, conf_given))
		return 1;
	if (sock)
		snprintf(d->cfg.socket, sizeof(d->cfg.socket), "%s", sock);
	return -1;
}

int main(int argc, char **argv)
{
	static struct ckptd daemon_state;
	struct ckptd *d = &daemon_state;
	struct event *ev_chld, *ev_term, *ev_int, *ev_tick;
	struct timeval tick = { .tv_sec = 1 };
	int ret;

	ret = parse_args(d, argc, argv);
	if (ret >= 0)
		return ret;
	if (geteuid()) {
		fprintf(stderr, "ckptd: must run as root\n");
		return 1;
	}
	if (gethostname(d->node, sizeof(d->node) - 1))
		snprintf(d->node, sizeof(d->node), "node");
	if (key_load(d))
		return 1;
	umask(022);
	if ((mkdir(CKPTD_STATE, 0755) && errno != EEXIST) ||
	    (mkdir(CKPTD_STATE "/jobs", 0700) && errno != EEXIST) ||
	    (mkdir(CKPTD_CGROUP, 0755) && errno != EEXIST) ||
	    (mkdir(d->cfg.snapshot_root, 0700) && errno != EEXIST)) {
		fprintf(stderr, "ckptd: cannot create its directories (%s, %s, %s): %s\n",
			CKPTD_STATE, CKPTD_CGROUP, d->cfg.snapshot_root,
			strerror(errno));
		return 1;
	}
	if (d->foreground) {
		log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (log_fd < 0)
			log_fd = STDERR_FILENO;
	}
	if (!d->foreground && daemon(0, 0)) {
		fprintf(stderr, "ckptd: %s\n", strerror(errno));
		return 1;
	}
	openlog("ckptd", LOG_PID, LOG_DAEMON);
	signal(SIGPIPE, SIG_IGN);
	/* Shares on their way when an earlier ckptd's workers ended. */
	ship_stage_sweep(d);
	d->base = event_base_new();
	d->peer_fd = -1;
	if (!d->base || conn_listen(d) || peer_listen(d))
		return 1;
	job_load_all(d);
	ev_chld = evsignal_new(d->base, SIGCHLD, on_sigchld, d);
	ev_term = evsignal_new(d->base, SIGTERM, on_stop, d);
	ev_int = evsignal_new(d->base, SIGINT, on_stop, d);
	ev_tick = event_new(d->base, -1, EV_PERSIST, on_tick, d);
	if (!ev_chld || !ev_term || !ev_int || !ev_tick ||
	    evsignal_add(ev_chld, NULL) || evsignal_add(ev_term, NULL) ||
	    evsignal_add(ev_int, NULL) || event_add(ev_tick, &tick)) {
		ckptd_log(d, 0, "cannot set up its event loop");
		return 1;
	}
	ckptd_log(d, 1, "listening on %s, snapshots in %s", d->cfg.socket,
		  d->cfg.snapshot_root);
	event_base_dispatch(d->base);
	unlink(d->cfg.socket);
	return 0;
}
