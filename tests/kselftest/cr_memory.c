// SPDX-License-Identifier: GPL-2.0
/*
 * Memory survives a checkpoint and restart: heap (brk and malloc), the
 * stack, private anonymous memory populated only in part, shared anonymous
 * memory, a private file mapping with pages the process changed, a shared
 * file mapping, a read-only (mprotect'ed) region, a PROT_NONE guard, and an
 * 8 GiB MAP_NORESERVE mapping with a few pages touched (bigger than the
 * VM's memory: it must come back without commit charge).
 * The restored process has the same pid, the same mappings at the same
 * addresses with the same protections, and computes the same results as
 * the original does after the checkpoint. The engine fills memory from an
 * image file it maps; it reads an image it cannot map instead
 * (restart_map_image=N stands in for such a file): both are checked.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "ckpt_test.h"

#define MB		(1UL << 20)
#define HEAP_SIZE	(8 * MB)
#define ANON_SIZE	(4 * MB)
#define FILE_SIZE	(1 * MB)
#define BIG_SIZE	(8192 * MB)

static char file_path[64];

/*
 * Digest of /proc/self/maps: every mapping's range, protection and name,
 * with adjacent mappings of the same protection and name taken as one (a
 * restart may merge what the kernel had kept apart; the memory is the same).
 */
static uint64_t maps_digest(void)
{
	char line[512], perms[8], name[256], pperms[8] = "", pname[256] = "";
	FILE *f = fopen("/proc/self/maps", "re");
	uint64_t h = FNV_OFFSET;
	unsigned long s, e, ps = 0, pe = 0;

	while (f && fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &s, &e, perms,
			   name) < 3)
			continue;
		if (s == pe && !strcmp(perms, pperms) && !strcmp(name, pname)) {
			pe = e;
			continue;
		}
		h = fnv(h, &ps, sizeof(ps));
		h = fnv(h, &pe, sizeof(pe));
		h = fnv(h, pperms, strlen(pperms));
		h = fnv(h, pname, strlen(pname));
		ps = s;
		pe = e;
		strcpy(pperms, perms);
		strcpy(pname, name);
	}
	h = fnv(h, &ps, sizeof(ps));
	h = fnv(h, &pe, sizeof(pe));
	h = fnv(h, pperms, strlen(pperms));
	h = fnv(h, pname, strlen(pname));
	if (f)
		fclose(f);
	return h;
}

static void memory_target(void)
{
	char stack_data[64 * 1024];
	char *heap, *anon, *shared, *fpriv, *fshared, *ro, *guard, *brk_area;
	char *big;
	uint64_t x = 1, h;
	size_t i;
	char c;
	int fd;

	heap = malloc(HEAP_SIZE);
	brk_area = sbrk(128 * 1024);
	anon = mmap(NULL, ANON_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, MB, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, 64 * 1024, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	big = mmap(NULL, BIG_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	fd = open(file_path, O_RDWR);
	fpriv = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	fshared = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (!heap || brk_area == (void *)-1 || anon == MAP_FAILED ||
	    shared == MAP_FAILED || ro == MAP_FAILED || guard == MAP_FAILED ||
	    fpriv == MAP_FAILED || fshared == MAP_FAILED || big == MAP_FAILED)
		_exit(10);
	big[0] = 1;
	big[BIG_SIZE / 2] = 2;
	big[BIG_SIZE - 1] = 3;

	for (i = 0; i < HEAP_SIZE; i++)
		heap[i] = i * 7;
	for (i = 0; i < 128 * 1024; i++)
		brk_area[i] = i * 3;
	/* Populate only every other 64 KiB of anon. */
	for (i = 0; i < ANON_SIZE; i += 128 * 1024)
		memset(anon + i, i >> 17, 64 * 1024);
	for (i = 0; i < MB; i++)
		shared[i] = i * 11;
	for (i = 0; i < 64 * 1024; i++)
		ro[i] = i * 13;
	mprotect(ro, 64 * 1024, PROT_READ);
	for (i = 0; i < FILE_SIZE; i += 8192)
		fpriv[i] = 'P';		/* private copies of half the pages */
	fshared[4096] = 'S';		/* goes to the file */
	for (i = 0; i < sizeof(stack_data); i++)
		stack_data[i] = i * 5;

	for (;;) {
		if (read(0, &c, 1) != 1)
			_exit(3);
		switch (c) {
		case 's':
			for (i = 0; i < 1000; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				heap[x % HEAP_SIZE] ^= x;
				anon[x % ANON_SIZE] ^= x >> 8;
				shared[x % MB] ^= x >> 16;
				fpriv[x % FILE_SIZE] ^= x >> 24;
				stack_data[x % sizeof(stack_data)] ^= x >> 32;
				brk_area[x % (128 * 1024)] ^= x >> 40;
				big[BIG_SIZE / 2] ^= x;
			}
			break;
		case 'p':
			h = fnv(x, heap, HEAP_SIZE);
			h = fnv(h, anon, ANON_SIZE);
			h = fnv(h, shared, MB);
			h = fnv(h, ro, 64 * 1024);
			h = fnv(h, fpriv, FILE_SIZE);
			h = fnv(h, fshared, FILE_SIZE);
			h = fnv(h, stack_data, sizeof(stack_data));
			h = fnv(h, brk_area, 128 * 1024);
			h = fnv(h, big, 1);
			h = fnv(h, big + BIG_SIZE / 2, 1);
			h = fnv(h, big + BIG_SIZE - 1, 1);
			printf("%016llx\n", (unsigned long long)h);
			fflush(stdout);
			break;
		case 'm':
			printf("%016llx\n", (unsigned long long)maps_digest());
			fflush(stdout);
			break;
		case 'i':
			printf("%ld\n", (long)syscall(SYS_getpid));
			fflush(stdout);
			break;
		case 'q':
			_exit(0);
		}
	}
}

FIXTURE(memory) {
	char image[64];
};

FIXTURE_SETUP(memory)
{
	const char *path = ckpt_module_path();
	char buf[4096];
	int fd, i;

	if (!path)
		SKIP(return, "CKPT_MODULE does not name a readable ckpt.ko");
	if (!ckpt_module_loaded())
		ASSERT_EQ(0, ckpt_load_module(path));
	snprintf(self->image, sizeof(self->image), "/tmp/cr_memory.%d.img",
		 getpid());
	snprintf(file_path, sizeof(file_path), "/tmp/cr_memory.%d.dat",
		 getpid());
	fd = open(file_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	for (i = 0; i < (int)(FILE_SIZE / sizeof(buf)); i++) {
		memset(buf, i, sizeof(buf));
		ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	}
	close(fd);
}

#define MAP_PARAM	"/sys/module/ckpt/parameters/restart_map_image"

static int set_map_param(const char *value)
{
	int fd = open(MAP_PARAM, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE_TEARDOWN(memory)
{
	/* Whatever a test left it at (an ASSERT returns early). */
	if (!access(MAP_PARAM, W_OK))
		set_map_param("Y");
	unlink(self->image);
	unlink(file_path);
}

TEST_F(memory, continue_and_restart)
{
	char pid0[32], maps0[32], h1[32], buf[64];
	struct ckpt_checkpoint info = {};
	struct target t = {};
	char msg[256];
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, memory_target));
	ASSERT_EQ(0, target_ask(&t, "i", pid0, sizeof(pid0)));
	ASSERT_EQ(0, target_ask(&t, "m", maps0, sizeof(maps0)));

	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image, 0, msg, sizeof(msg),
					&info)) TH_LOG("checkpoint: %s", msg);
	EXPECT_EQ(1U, info.nr_threads);
	/* Only populated memory is stored: far less than what is mapped. */
	EXPECT_LT(info.nr_pages, (HEAP_SIZE + ANON_SIZE) / 4096 + 1024);
	EXPECT_GT(info.nr_pages, HEAP_SIZE / 4096);

	/* The original goes on, unharmed. */
	ASSERT_EQ(0, target_ask(&t, "m", buf, sizeof(buf)));
	EXPECT_STREQ(maps0, buf);
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_EQ(0, target_ask(&t, "p", h1, sizeof(h1)));
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* The restored process is the same process at the checkpoint. */
	ASSERT_EQ(0, target_restart(&t, self->image));
	ASSERT_EQ(0, target_ask(&t, "i", buf, sizeof(buf)));
	EXPECT_STREQ(pid0, buf);
	ASSERT_EQ(0, target_ask(&t, "m", buf, sizeof(buf)));
	EXPECT_STREQ(maps0, buf);
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
	EXPECT_STREQ(h1, buf);
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * Three cycles: the original, then a restarted process, then one restarted
 * twice. Under TCG on the debug kernel a cycle takes seconds, more than
 * the harness's default 30 s for four: the bound is against a hang.
 */
TEST_F_TIMEOUT(memory, repeated_cycles, 120)
{
	char h[32], buf[64];
	struct target t = {};
	char msg[256];
	pid_t victim;
	int i, status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, memory_target));
	victim = t.pid;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, target_send(&t, "s"));
		ASSERT_EQ(0, target_ask(&t, "p", h, sizeof(h)));
		ASSERT_EQ(0, ckpt_checkpoint_to(victim, self->image,
						CKPT_CHECKPOINT_KILL, msg,
						sizeof(msg), NULL))
			TH_LOG("cycle %d: %s", i, msg);
		/* The original dies of SIGKILL; a restarter reports it so. */
		status = target_end(&t);
		if (i == 0) {
			ASSERT_TRUE(WIFSIGNALED(status));
			ASSERT_EQ(SIGKILL, WTERMSIG(status));
		} else {
			ASSERT_TRUE(WIFEXITED(status));
			ASSERT_EQ(128 + SIGKILL, WEXITSTATUS(status));
		}

		ASSERT_EQ(0, target_restart(&t, self->image));
		ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
		ASSERT_STREQ(h, buf) TH_LOG("cycle %d", i);
		/* The restarted process is what the next cycle captures. */
		ASSERT_EQ(0, target_ask(&t, "i", buf, sizeof(buf)));
		victim = atoi(buf);
	}
	ASSERT_EQ(0, target_send(&t, "q"));
	status = target_end(&t);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Each way of filling memory, a restart of the same image. */
TEST_F(memory, image_mapped_or_read)
{
	const char *how[] = { "N", "Y" };
	char h[32], buf[64], maps0[32];
	struct target t = {};
	char msg[256];
	unsigned int i;
	int status;

	CKPT_SETUP_SKIPPED();

	ASSERT_EQ(0, target_start(&t, memory_target));
	ASSERT_EQ(0, target_send(&t, "s"));
	ASSERT_EQ(0, target_ask(&t, "p", h, sizeof(h)));
	ASSERT_EQ(0, target_ask(&t, "m", maps0, sizeof(maps0)));
	ASSERT_EQ(0, ckpt_checkpoint_to(t.pid, self->image,
					CKPT_CHECKPOINT_KILL, msg, sizeof(msg),
					NULL)) TH_LOG("%s", msg);
	target_end(&t);

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, set_map_param(how[i]));
		ASSERT_EQ(0, target_restart(&t, self->image)) TH_LOG("%s", how[i]);
		ASSERT_EQ(0, target_ask(&t, "p", buf, sizeof(buf)));
		EXPECT_STREQ(h, buf) TH_LOG("restart_map_image=%s", how[i]);
		/* Nothing of the image is left mapped in the process. */
		ASSERT_EQ(0, target_ask(&t, "m", buf, sizeof(buf)));
		EXPECT_STREQ(maps0, buf) TH_LOG("restart_map_image=%s", how[i]);
		ASSERT_EQ(0, target_send(&t, "q"));
		status = target_end(&t);
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	EXPECT_EQ(0, set_map_param("Y"));
}

TEST_HARNESS_MAIN
