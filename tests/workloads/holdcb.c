// SPDX-License-Identifier: GPL-2.0
/*
 * holdcb DIR: a process whose checkpoints wait in a libckpt callback: it
 * makes DIR/asked, then waits for DIR/go (30 s at most), which it
 * removes, so that a test can act while a checkpoint of it is under way.
 * Runs under ckpt-run, whose preloaded libckpt it finds with dlsym() (it
 * does not link it). Prints "ready" once registered, then sleeps.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#define CB_THREAD	0x1	/* libckpt.h's CKPT_CB_THREAD */

static const char *dir;

static int held(void *arg)
{
	char path[PATH_MAX];
	int i, fd;

	(void)arg;
	snprintf(path, sizeof(path), "%s/asked", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; i < 300 && access(path, F_OK); i++)
		usleep(100000);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int (*reg)(int (*fn)(void *), void *arg, int flags);

	if (argc != 2) {
		fprintf(stderr, "usage: holdcb DIR\n");
		return 2;
	}
	dir = argv[1];
	reg = (int (*)(int (*)(void *), void *, int))dlsym(RTLD_DEFAULT,
							    "ckpt_register_callback");
	if (!reg || reg(held, NULL, CB_THREAD) < 0) {
		fprintf(stderr, "holdcb: no libckpt to register with (run it under ckpt-run)\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
