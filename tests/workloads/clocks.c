// SPDX-License-Identifier: GPL-2.0
/*
 * clocks: calls what glibc serves from the vdso, ten times a second, and
 * prints one line of what it got, for the cross-kernel restart test
 * (tests/host/cross_kernel.sh):
 *
 *   n N pid P kernel K mono S.NS real S tv S time S res NS cpu C vdso V
 *
 * N counts lines over the process's whole life (across restarts), K is the
 * running kernel's release, V is 1 when dl_iterate_phdr() still finds the
 * vdso object glibc loaded at start-up with its program headers readable.
 *
 * "clocks spin" calls clock_gettime() without pause and prints nothing: a
 * checkpoint then often finds the thread inside the vdso.
 */
#define _GNU_SOURCE
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int find_vdso(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
	int i, loads = 0;

	(void)size;
	if (!ehdr || info->dlpi_addr != ehdr)	/* the vdso is linked at 0 */
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		loads += info->dlpi_phdr[i].p_type == PT_LOAD;
	*(int *)arg = loads > 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct timespec mono, real, res, nap = { 0, 100 * 1000 * 1000 };
	unsigned long n;
	struct utsname u;
	struct timeval tv;
	unsigned int cpu;
	time_t t;
	int vdso;

	if (argc > 1 && !strcmp(argv[1], "spin"))
		for (;;)
			clock_gettime(CLOCK_MONOTONIC, &mono);

	for (n = 0;; n++) {
		vdso = 0;
		dl_iterate_phdr(find_vdso, &vdso);
		if (clock_gettime(CLOCK_MONOTONIC, &mono) ||
		    clock_gettime(CLOCK_REALTIME, &real) ||
		    clock_getres(CLOCK_MONOTONIC, &res) ||
		    gettimeofday(&tv, NULL) || getcpu(&cpu, NULL) || uname(&u))
			return 1;
		t = time(NULL);
		printf("n %lu pid %d kernel %s mono %ld.%09ld real %ld tv %ld time %ld res %ld cpu %u vdso %d\n",
		       n, getpid(), u.release, (long)mono.tv_sec, mono.tv_nsec,
		       (long)real.tv_sec, (long)tv.tv_sec, (long)t, res.tv_nsec,
		       cpu, vdso);
		fflush(stdout);
		nanosleep(&nap, NULL);
	}
}
