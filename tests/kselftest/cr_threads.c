// SPDX-License-Identifier: GPL-2.0
/*
 * Threads survive a checkpoint and restart: several threads computing in
 * AVX2 registers (all of ymm0-ymm7 live inside a loop the checkpoint
 * interrupts) finish with bit-exact results; each keeps its TLS, its tid and
 * its name; and pthread_join() works afterwards (clear_child_tid and the
 * futex wake it relies on were restored), as does the main thread's signal
 * mask.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define NR_WORKERS	3
#define ITERS		(6UL << 20)

struct result {
	uint32_t v[64];
};

/* ymm0-ymm7 stay live in registers for the whole loop. */
static void avx_work(uint32_t seed, unsigned long iters, struct result *out)
{
	uint32_t in[64];
	int i;

	for (i = 0; i < 64; i++)
		in[i] = seed * 2654435761U + i * 40503U;
	asm volatile(
		"vmovdqu 0(%[in]), %%ymm0\n\t"
		"vmovdqu 32(%[in]), %%ymm1\n\t"
		"vmovdqu 64(%[in]), %%ymm2\n\t"
		"vmovdqu 96(%[in]), %%ymm3\n\t"
		"vmovdqu 128(%[in]), %%ymm4\n\t"
		"vmovdqu 160(%[in]), %%ymm5\n\t"
		"vmovdqu 192(%[in]), %%ymm6\n\t"
		"vmovdqu 224(%[in]), %%ymm7\n\t"
		"1:\n\t"
		"vpaddd %%ymm1, %%ymm0, %%ymm0\n\t"
		"vpxor %%ymm0, %%ymm2, %%ymm2\n\t"
		"vpslld $3, %%ymm2, %%ymm3\n\t"
		"vpaddd %%ymm3, %%ymm4, %%ymm4\n\t"
		"vpxor %%ymm4, %%ymm5, %%ymm5\n\t"
		"vpsrld $5, %%ymm5, %%ymm6\n\t"
		"vpaddd %%ymm6, %%ymm7, %%ymm7\n\t"
		"vpxor %%ymm7, %%ymm1, %%ymm1\n\t"
		"vpaddd %%ymm2, %%ymm1, %%ymm1\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"vmovdqu %%ymm0, 0(%[out])\n\t"
		"vmovdqu %%ymm1, 32(%[out])\n\t"
		"vmovdqu %%ymm2, 64(%[out])\n\t"
		"vmovdqu %%ymm3, 96(%[out])\n\t"
		"vmovdqu %%ymm4, 128(%[out])\n\t"
		"vmovdqu %%ymm5, 160(%[out])\n\t"
		"vmovdqu %%ymm6, 192(%[out])\n\t"
		"vmovdqu %%ymm7, 224(%[out])\n\t"
		"vzeroupper\n\t"
		: [n] "+r"(iters)
		: [in] "r"(in), [out] "r"(out->v)
		: "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
		  "xmm6", "xmm7");
}

static uint64_t digest(const struct result *r, uint64_t h)
{
	int i;

	for (i = 0; i < 64; i++)
		h = (h ^ r->v[i]) * 0x100000001b3ULL;
	return h;
}

static __thread int tls_index = -1;

struct worker {
	pthread_t thread;
	int index;
	pid_t tid_before, tid_after;
	int tls_after;
	char name_after[16];
	volatile int started, done;
	struct result r;
};

static struct worker workers[NR_WORKERS];
/* Workers stay until 'j', so every checkpoint sees all of them. */
static volatile int release;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];

	tls_index = w->index;
	snprintf(name, sizeof(name), "avx-%d", w->index);
	prctl(PR_SET_NAME, name);
	w->tid_before = syscall(SYS_gettid);
	w->started = 1;
	avx_work(w->index + 1, ITERS, &w->r);
	w->tid_after = syscall(SYS_gettid);
	w->tls_after = tls_index;
	prctl(PR_GET_NAME, w->name_after);
	w->done = 1;
	while (!release)
		usleep(1000);
	return NULL;
}

static void threads_target(void)
{
	sigset_t mask;
	uint64_t h;
	char c;
	int i, bad;

	/* A mask the restored main thread must still have. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 'g':
			for (i = 0; i < NR_WORKERS; i++) {
				workers[i].index = i;
				pthread_create(&workers[i].thread, NULL,
					       worker_main, &workers[i]);
			}
			for (i = 0; i < NR_WORKERS; i++)
				while (!workers[i].started)
					usleep(1000);
			printf("started\n");
			fflush(stdout);
			break;
		case 'w':
			for (i = 0, bad = 0; i < NR_WORKERS; i++)
				bad += workers[i].done;
			printf("%d done\n", bad);
			fflush(stdout);
			break;
		case 'j':
			h = 0xcbf29ce484222325ULL;
			bad = 0;
			release = 1;
			for (i = 0; i < NR_WORKERS; i++) {
				char want[16];

				pthread_join(workers[i].thread, NULL);
				snprintf(want, sizeof(want), "avx-%d", i);
				h = digest(&workers[i].r, h);
				bad |= workers[i].tid_before != workers[i].tid_after;
				bad |= (workers[i].tls_after != i) << 1;
				bad |= !!strcmp(want, workers[i].name_after) << 2;
			}
			sigprocmask(SIG_BLOCK, NULL, &mask);
			bad |= !sigismember(&mask, SIGUSR2) << 3;
			printf("%016llx %d\n", (unsigned long long)h, bad);
			fflush(stdout);
			break;
		case 'q':
			_exit(0);
		}
	}
}

FIXTURE(threads) {
	char image[64];
	char expect[64];
};

FIXTURE_SETUP(threads)
{
	const char *path = ckpt_module_path();
	uint64_t h = 0xcbf29ce484222325ULL;
	struct result r;
	int i;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!__builtin_cpu_supports("avx2"))
		SKIP(return, "this CPU has no AVX2");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_threads.%d.img",
		 getpid());
	/* The result no checkpoint ever touched. */
	for (i = 0; i < NR_WORKERS; i++) {
		avx_work(i + 1, ITERS, &r);
		h = digest(&r, h);
	}
	snprintf(self->expect, sizeof(self->expect), "%016llx 0",
		 (unsigned long long)h);
}

FIXTURE_TEARDOWN(threads)
{
	unlink(self->image);
}

TEST_F(threads, avx_mid_loop)
{
	struct ckpt_checkpoint info = {};
	struct target t = {};
	char buf[64], msg[256];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, threads_target));
	ASSERT_EQ(0, target_ask(&t, "g", buf, sizeof(buf)));
	ASSERT_STREQ("started", buf);
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					&info)) TH_LOG("checkpoint: %s", msg);
	EXPECT_EQ(1U + NR_WORKERS, info.nr_threads);
	ASSERT_EQ(0, target_ask(&t, "w", buf, sizeof(buf)));
	if (strcmp(buf, "0 done"))
		TH_LOG("note: workers finished before the checkpoint (%s)", buf);

	/* The original, checkpointed while computing, gets it right... */
	ASSERT_EQ(0, target_ask(&t, "j", buf, sizeof(buf)));
	EXPECT_STREQ(self->expect, buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));

	/* ...and so does the restored one, from the middle of its loops. */
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "j", buf, sizeof(buf)));
	EXPECT_STREQ(self->expect, buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
