// SPDX-License-Identifier: GPL-2.0
/*
 * A checkpoint's progress, for a client on a terminal (ckpt job): while
 * the engine writes, a thread of the checkpoint worker adds up the images
 * under the snapshot's .tmp directory (every node's: the root is shared)
 * twice a second and tells the client; the worker tells it each phase it
 * enters. Events go to the client only ({"event": "progress", "phase",
 * "processes", "bytes", "elapsed_ms"}); ckptd does not need them, and a
 * periodic checkpoint has no client.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ckptd.h"

#define PROGRESS_EVERY_MS	500

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool running, stop;
	const char *dir;
	uint64_t t0;
	/* nftw() takes no argument: its sums, in the thread only. */
	json_int_t files, bytes;
} pr = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static int add_image(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode) && n > 4 &&
	    !strcmp(path + n - 4, ".img")) {
		pr.files++;
		pr.bytes += st->st_size;
	}
	return 0;
}

static void *watch(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&pr.lock);
	while (!pr.stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROGRESS_EVERY_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pr.cond, &pr.lock, &until);
		if (pr.stop)
			break;
		pr.files = pr.bytes = 0;
		nftw(pr.dir, add_image, 16, FTW_PHYS);
		progress_phase("writing", pr.files, pr.bytes);
	}
	pthread_mutex_unlock(&pr.lock);
	return NULL;
}

void progress_begin(const char *dir)
{
	pr.t0 = ckptd_now_ns();
	pr.dir = dir;
	progress_phase("freezing", 0, 0);
}

void progress_watch(bool on)
{
	if (on && !pr.running) {
		pr.stop = false;
		pr.running = !pthread_create(&pr.thread, NULL, watch, NULL);
	} else if (!on && pr.running) {
		pthread_mutex_lock(&pr.lock);
		pr.stop = true;
		pthread_cond_signal(&pr.cond);
		pthread_mutex_unlock(&pr.lock);
		pthread_join(pr.thread, NULL);
		pr.running = false;
	}
}

void progress_phase(const char *phase, json_int_t procs, json_int_t bytes)
{
	json_int_t ms = (ckptd_now_ns() - pr.t0) / 1000000;

	worker_tell_client(json_pack("{s:s, s:s, s:I, s:I, s:I}", "event", "progress",
				     "phase", phase, "processes", procs,
				     "bytes", bytes, "elapsed_ms", ms));
}
