// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt: the command-line front end of the checkpoint/restart system.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *description;
};

static const char *prog = "ckpt";

static void version_usage(FILE *f)
{
	fprintf(f,
		"usage: %s version [--json]\n"
		"Prints the version of this tool and of the loaded engine.\n"
		"Exits 1 when the engine cannot be reached or speaks another uAPI.\n",
		prog);
}

/* JSON string body: the release string is engine-provided, so escape it. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int cmd_version(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ckpt_version ver;
	bool json = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			version_usage(stdout);
			return 0;
		default:
			version_usage(stderr);
			return 1;
		}
	}
	if (optind != argc) {
		version_usage(stderr);
		return 1;
	}

	ret = engine_version(&ver);
	if (json) {
		printf("{\"version\":\"%s\",\"uapi\":%d,\"engine\":",
		       CKPT_VERSION, CKPT_UAPI_VERSION);
		if (ret) {
			printf("null,\"error\":");
			json_string(strerror(-ret));
		} else {
			printf("{\"release\":");
			json_string(ver.release);
			printf(",\"uapi\":%u}", ver.uapi_version);
		}
		printf("}\n");
	} else {
		printf("ckpt %s (uAPI %d)\n", CKPT_VERSION, CKPT_UAPI_VERSION);
		if (!ret)
			printf("engine %s (uAPI %u)\n", ver.release,
			       ver.uapi_version);
	}

	if (ret == -ENOENT || ret == -ENXIO || ret == -ENODEV) {
		fprintf(stderr,
			"%s: engine not loaded: %s: %s (load it with 'modprobe ckpt' or 'insmod ckpt.ko')\n",
			prog, engine_device(), strerror(-ret));
		return 1;
	}
	if (ret) {
		fprintf(stderr, "%s: cannot query the engine at %s: %s\n",
			prog, engine_device(), strerror(-ret));
		return 1;
	}
	if (ver.uapi_version != CKPT_UAPI_VERSION) {
		fprintf(stderr,
			"%s: the engine speaks uAPI %u, this tool uAPI %d: install matching versions\n",
			prog, ver.uapi_version, CKPT_UAPI_VERSION);
		return 1;
	}
	return 0;
}

static const struct command commands[] = {
	{ "version", cmd_version, "show the versions of this tool and of the engine" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s [--version] [--help] COMMAND [ARGS]\n\ncommands:\n",
		prog);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name,
			commands[i].description);
	fprintf(f, "\n'%s COMMAND --help' describes a command.\n", prog);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ckpt %s\n", CKPT_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr);
	return 1;
}
