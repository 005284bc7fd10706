// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt key FILE: gives the engine the key of its image MACs
 * (Documentation/security.md). A cluster shares one key file, so that an
 * image made on one node restarts authenticated on any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "engine.h"

static void key_usage(FILE *f)
{
	fprintf(f,
		"usage: %s key FILE\n"
		"Sets the key the engine puts a MAC over every image with, and checks\n"
		"every restarted image against: the %d to %d bytes of FILE ('-' is\n"
		"standard input), for example made by\n"
		"  head -c 32 /dev/urandom > /etc/ckpt/cluster.key; chmod 600 /etc/ckpt/cluster.key\n"
		"and the same on every node of a cluster. Needs CAP_SYS_ADMIN. Until a key\n"
		"is set the engine uses a random one of its own, which a reload forgets.\n"
		"FILE must not be readable by other users.\n",
		prog, CKPT_KEY_MIN_LEN, CKPT_KEY_MAX_LEN);
}

int cmd_key(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned char key[CKPT_KEY_MAX_LEN + 1];
	const char *path;
	struct stat st;
	ssize_t n, len = 0;
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			key_usage(stdout);
			return 0;
		}
		key_usage(stderr);
		return 1;
	}
	if (optind != argc - 1) {
		key_usage(stderr);
		return 1;
	}
	path = argv[optind];
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s key: cannot open %s: %s\n", prog, path,
			strerror(errno));
		return 1;
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & 077)) {
		fprintf(stderr, "%s key: %s is readable or writable by other users (mode %03o): a key must be secret\n",
			prog, path, st.st_mode & 0777);
		close(fd);
		return 1;
	}
	while (len < (ssize_t)sizeof(key)) {
		n = read(fd, key + len, sizeof(key) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	if (fd)
		close(fd);
	if (len < CKPT_KEY_MIN_LEN || len > CKPT_KEY_MAX_LEN) {
		fprintf(stderr, "%s key: %s holds %s%zd bytes; a key has %d to %d\n",
			prog, path, len > CKPT_KEY_MAX_LEN ? "more than " : "",
			len > CKPT_KEY_MAX_LEN ? (ssize_t)CKPT_KEY_MAX_LEN : len,
			CKPT_KEY_MIN_LEN, CKPT_KEY_MAX_LEN);
		memset(key, 0, sizeof(key));
		return 1;
	}
	ret = ckpt_dev_set_key(key, len);
	memset(key, 0, sizeof(key));
	if (ret) {
		fprintf(stderr, "%s key: the engine refused the key: %s%s\n", prog,
			strerror(-ret), ret == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return 1;
	}
	return 0;
}
