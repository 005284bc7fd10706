// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt version: the versions of this tool and of the loaded engine.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "engine.h"
#include "json.h"

static void version_usage(FILE *f)
{
	fprintf(f,
		"usage: %s version [--json]\n"
		"Prints the version of this tool and of the loaded engine.\n"
		"Exits 1 when the engine cannot be reached or speaks another uAPI.\n",
		prog);
}

int cmd_version(int argc, char **argv)
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

	ret = ckpt_dev_version(&ver);
	if (json) {
		printf("{\"version\":\"%s\",\"uapi\":%d,\"engine\":",
		       CKPT_VERSION, CKPT_UAPI_VERSION);
		if (ret) {
			printf("null,\"error\":");
			json_print_str(stdout, strerror(-ret));
		} else {
			printf("{\"release\":");
			json_print_str(stdout, ver.release);
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
			prog, ckpt_dev_path(), strerror(-ret));
		return 1;
	}
	if (ret) {
		fprintf(stderr, "%s: cannot query the engine at %s: %s\n",
			prog, ckpt_dev_path(), strerror(-ret));
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
