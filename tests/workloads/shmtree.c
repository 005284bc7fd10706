// SPDX-License-Identifier: GPL-2.0
/*
 * shmtree STEPS READYFILE [PACE_MS [GOFILE]]: a process tree that works in
 * memory its processes share, for the tree tests. The root maps three
 * regions MAP_SHARED before it forks: anonymous memory, a memfd and a
 * POSIX shared memory object (shm_open(), unlinked once mapped); then it
 * forks child A, which forks grandchild G, and child B. The four take
 * turns, in an order kept in the anonymous region: at its turn each mixes
 * into its value what the other three last wrote in the three regions,
 * and writes its own there, and appends it to READYFILE.log through one
 * open file all four share (no O_APPEND: their writes go one after the
 * other only while they share its position), and so to a memfd and to a
 * file deleted at once (READYFILE.dlog), one open file each all four
 * share; at the end the root checks both hold the log's records (else it
 * exits 104). Each also writes its value to
 * the FIFO READYFILE.fifo, open read-write in all four (with SHMTREE_UNLINK
 * set, unlinked before the forks), which the root drains at its turn (bytes restored twice, or lost, change what it reads),
 * and adds to an eventfd all four share, which the root reads at its turn;
 * each reads the time left on a timerfd all four share, as the one before
 * armed it (in thousands of seconds: far off, it never fires), and arms it
 * from its own value, and reads the O_NONBLOCK flag of a signalfd all four
 * share, as the one before set it, and sets it from its own value, and
 * asks an epoll all four share whether the eventfd is readable, which it
 * says once each time one of them re-arms it (EPOLLONESHOT) with a value
 * of its own, and A and G ask an edge-triggered epoll that A made (and
 * dup()ed) before it forked G (a timerfd, signalfd or epoll made anew for
 * each after a restart would answer with what that process did itself;
 * one whose items nobody added again, never);
 * B also sends its value to the root through a UNIX stream connection it
 * made to a socket the root listens on (READYFILE.sock, open in all four),
 * which the root reads two turns late (so bytes are always queued); half
 * way through, G connects to that socket too and sends its value, which the
 * root accepts and reads at its next turn (a listening socket restored
 * without its name would leave G without a connection: it exits 106).
 * A sends its value to the root as a datagram, through a socket with no
 * name connected to the datagram socket the root bound to READYFILE.dg
 * (open in all four), which the root reads two turns late (so messages
 * are always queued); half way through, G sends its value there too from
 * a socket it made at its start, never bound or connected (sendto()).
 * A region that stopped being shared after a
 * restart leaves a process waiting for a turn that never comes: it says
 * so and exits 99 after 60 s. At the end (after GOFILE exists, if given)
 * G exits with a status from its value, A reaps G and exits with one from
 * its own and G's, B with one from its own; the root reaps A and B and
 * prints one line that depends on every value, on the log and on both wait statuses,
 * and exits 3. Once the first round is done, the root creates READYFILE.
 * Only the root writes to standard output, once: a run restarted from any
 * point prints the same line as one never interrupted.
 *
 * With SHMTREE_SYSV=1 in the environment (run it in an IPC namespace of its
 * own: unshare --ipc), the four also take turns through System V IPC: a
 * fourth region, a segment the root attaches before the forks and removes
 * at once (it lives on while attached); a segment A and G attach by key
 * after the forks; a semaphore set every process adds to at its turn and
 * the root reads; a message queue B sends its value to at its turn, which
 * the root reads two turns late (so messages are always queued). The
 * set's second semaphore each adds to with SEM_UNDO at its first two
 * turns, then takes back and adds again in turn, so that each holds an
 * adjustment from its first turn on: the root
 * reads it at its turn and, in the line it prints, once A, B and G have
 * exited and their adjustments have been undone (an adjustment lost in a
 * restart would stay added).
 *
 * With SHMTREE_SYSV=shm, only the two segments, in whatever IPC namespace it
 * runs in (the machine's: the segments are the tree's alone there), the
 * keyed one's key made from the root's pid, and removed by the root at the
 * end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR	4
#define REGION	(64 * 1024)

struct turns {
	uint64_t turn;		/* step * NR + the role whose turn it is */
	uint64_t v[NR];
};

static unsigned long steps, pace_ms = 20;
static const char *gofile, *readyfile;
static struct turns *anon;
static uint64_t *mfd, *posix;
static int logfd, fifofd, evfd, tfd, sfd, ep, sock[2], lsock, dsock, dcli, gsock;
/* Two more logs all four write through one open file: a memfd, a deleted file. */
static int mlog, dlog;
/* A's and G's: an epoll A made (and dup()ed) before it forked G. */
static int ep2 = -1;
/* SHMTREE_SYSV: the removed segment, the keyed one (A and G), ids. */
static uint64_t *sysv, *keyed;
static int semid = -1, msqid = -1;

#define SHMTREE_KEY	0x5ee1c0de
static key_t shm_key = SHMTREE_KEY;

struct shmtree_msg {
	long mtype;
	uint64_t x;
};

static uint64_t mix(uint64_t x, uint64_t y)
{
	x ^= y + 0x9e3779b97f4a7c15ULL;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 33);
}

/* A's and G's: the keyed segment, attached at their first turn. */
static uint64_t *attach_keyed(void)
{
	int id = shmget(shm_key, 0, 0);
	void *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);

	if (p == (void *)-1)
		exit(108);
	return p;
}

/* At @role's turn: System V's part of @x. */
static uint64_t sysv_turn(unsigned int role, unsigned long s, uint64_t x)
{
	struct sembuf op = { .sem_num = 0, .sem_op = role + 1 };
	/* Never below 0: each takes back only what it added before. */
	struct sembuf undo = {
		.sem_num = 1, .sem_flg = SEM_UNDO | IPC_NOWAIT,
		.sem_op = s && !(s % 2) ? -(int)(role + 1) : (int)role + 1,
	};
	struct shmtree_msg m;
	int v;

	if ((role == 1 || role == 2) && !keyed)
		keyed = attach_keyed();
	x = mix(x, sysv[(role + 1) % NR]);
	if (keyed)
		x = mix(x, keyed[3 - role]);
	sysv[role] = x ^ 3;
	if (keyed)
		keyed[role] = x ^ 4;
	if (semid < 0)
		return x;	/* SHMTREE_SYSV=shm */
	if (semop(semid, &op, 1) || semop(semid, &undo, 1))
		exit(109);
	if (!role) {
		v = semctl(semid, 0, GETVAL);
		if (v < 0)
			exit(109);
		x = mix(x, v);
		v = semctl(semid, 1, GETVAL);
		if (v < 0)
			exit(109);
		x = mix(x, v);
		if (v > 30000 && semctl(semid, 0, SETVAL, 0))
			exit(109);
		if (s >= 2) {
			if (msgrcv(msqid, &m, sizeof(m.x), 0, IPC_NOWAIT) != sizeof(m.x))
				exit(110);
			x = mix(x, m.x ^ (uint64_t)m.mtype);
		}
	}
	if (role == 3) {
		m.mtype = s % 3 + 1;
		m.x = x;
		if (msgsnd(msqid, &m, sizeof(m.x), IPC_NOWAIT))
			exit(110);
	}
	return x;
}
static struct sockaddr_un lname = { .sun_family = AF_UNIX };
static struct sockaddr_un dname = { .sun_family = AF_UNIX };

/* A connection to the root's listening socket, or exit @code. */
static int dial(int code)
{
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (c < 0 || connect(c, (struct sockaddr *)&lname, sizeof(lname)))
		exit(code);
	return c;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void hold(void)
{
	while (gofile && access(gofile, F_OK))
		sleep_ms(20);
}

/*
 * The shared timerfd, signalfd and epoll at a turn: what the ones before
 * left, mixed into @x; then this turn's, from it. The timer is armed to k
 * thousand seconds and a half, and read back as k: a restart keeps its
 * time left, and a turn takes far less than 500 s. The eventfd is
 * readable at every turn but the first (each turn adds to it), so the
 * epoll reports it, with the value it was armed with, exactly when it was
 * re-armed since it last did.
 */
static uint64_t shared_fds_turn(uint64_t x)
{
	struct epoll_event ev = {};
	struct itimerspec its = {};
	int fl, n;

	if (timerfd_gettime(tfd, &its) || (fl = fcntl(sfd, F_GETFL)) < 0 ||
	    (n = epoll_wait(ep, &ev, 1, 0)) < 0)
		exit(108);
	x = mix(x, (uint64_t)its.it_value.tv_sec / 1000);
	x = mix(x, !!(fl & O_NONBLOCK));
	x = mix(x, n ? ev.data.u64 : 0);
	if (ep2 >= 0) {
		/* Edge-triggered: the eventfd was written since A or G last saw it. */
		n = epoll_wait(ep2, &ev, 1, 0);
		if (n < 0)
			exit(108);
		x = mix(x, n ? ev.data.u64 : 0);
	}
	its.it_value.tv_sec = (x % 97 + 1) * 1000 + 500;
	if (timerfd_settime(tfd, 0, &its, NULL) ||
	    fcntl(sfd, F_SETFL, x & 2 ? fl | O_NONBLOCK : fl & ~O_NONBLOCK))
		exit(108);
	if (x % 3 == 0) {
		ev.events = EPOLLIN | EPOLLONESHOT;
		ev.data.u64 = x | 1;
		if (epoll_ctl(ep, EPOLL_CTL_MOD, evfd, &ev))
			exit(108);
	}
	return x;
}

/*
 * A wait that gave up: which files this process maps the shared regions
 * from, as /proc/self/maps says (the same in all four, if still shared).
 */
static void show_regions(unsigned int role)
{
	unsigned long lo, hi, mine[] = {
		(unsigned long)anon, (unsigned long)mfd, (unsigned long)posix,
	};
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned int i;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (i = 0; i < 3; i++)
			if (mine[i] >= lo && mine[i] < hi)
				fprintf(stderr, "shmtree: role %u maps %s", role, line);
	}
	if (f)
		fclose(f);
}

/* Role @role's part: its turns, then its value. */
static uint64_t work(unsigned int role)
{
	uint64_t x = 0x243f6a8885a308d3ULL * (role + 1);
	unsigned long s, waited;

	for (s = 0; s < steps; s++) {
		/*
		 * Bounded by the naps taken, not by the clock: a wait that
		 * a checkpoint cut and a restart resumed minutes later has
		 * not waited those minutes.
		 */
		for (waited = 0;
		     __atomic_load_n(&anon->turn, __ATOMIC_ACQUIRE) != s * NR + role;
		     waited++) {
			if (waited > 60 * 1000) {
				fprintf(stderr, "shmtree: role %u waits for step %lu's turn (at %llu) for 60 s: is the memory still shared?\n",
					role, s, (unsigned long long)anon->turn);
				show_regions(role);
				exit(99);
			}
			sleep_ms(1);
		}
		/* Every process has had a turn: all four run. */
		if (!role && s == 1)
			close(open(readyfile, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		x = mix(x, anon->v[(role + 1) % NR]);
		x = mix(x, mfd[(role + 2) % NR]);
		x = mix(x, posix[(role + 3) % NR]);
		anon->v[role] = x;
		mfd[role] = x ^ 1;
		posix[role] = x ^ 2;
		if (sysv)
			x = sysv_turn(role, s, x);
		x = shared_fds_turn(x);
		if (write(logfd, &x, sizeof(x)) != sizeof(x) ||
		    write(mlog, &x, sizeof(x)) != sizeof(x) ||
		    write(dlog, &x, sizeof(x)) != sizeof(x))
			exit(102);
		if (!role) {
			uint64_t w;

			while (read(fifofd, &w, sizeof(w)) == sizeof(w))
				x = mix(x, w);
			if (read(evfd, &w, sizeof(w)) == sizeof(w))
				x = mix(x, w);
			if (s >= 2 && read(sock[0], &w, sizeof(w)) == sizeof(w))
				x = mix(x, w);
			if (s >= 2 && recv(dsock, &w, sizeof(w), MSG_DONTWAIT) == sizeof(w))
				x = mix(x, w);
			if (s == steps / 2 + 1) {
				int c = accept(lsock, NULL, NULL);

				if (c < 0 || read(c, &w, sizeof(w)) != sizeof(w))
					exit(107);
				x = mix(x, w);
				close(c);
			}
		}
		if (role == 2 && s == steps / 2) {
			int c = dial(106);

			if (write(c, &x, sizeof(x)) != sizeof(x) ||
			    sendto(gsock, &x, sizeof(x), 0,
				   (struct sockaddr *)&dname, sizeof(dname)) != sizeof(x))
				exit(106);
			close(c);
		}
		if (role == 1 && send(dcli, &x, sizeof(x), 0) != sizeof(x))
			exit(105);
		if (role == 3 && write(sock[1], &x, sizeof(x)) != sizeof(x))
			exit(105);
		if (write(evfd, &(uint64_t){ role + 1 }, sizeof(uint64_t)) !=
		    sizeof(uint64_t))
			exit(104);
		if (write(fifofd, &x, sizeof(x)) != sizeof(x))
			exit(103);
		if (!role)
			sleep_ms(pace_ms);
		__atomic_store_n(&anon->turn, s * NR + role + 1, __ATOMIC_RELEASE);
	}
	hold();
	return x;
}

static void *map_fd(int fd, const char *what)
{
	void *p;

	if (fd < 0 || ftruncate(fd, REGION)) {
		perror(what);
		exit(100);
	}
	p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror(what);
		exit(100);
	}
	return p;
}

int main(int argc, char **argv)
{
	pid_t a, b, g;
	uint64_t x;
	char name[64];
	int sta, stb, st, fd;
	uint64_t w, m, d, log = 0;
	sigset_t mask;
	off_t off, moff;

	if (argc < 3) {
		fprintf(stderr, "usage: shmtree STEPS READYFILE [PACE_MS [GOFILE]]\n");
		return 2;
	}
	steps = strtoul(argv[1], NULL, 0);
	readyfile = argv[2];
	if (argc > 3)
		pace_ms = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		gofile = argv[4];

	anon = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		return 100;
	/* The memfd stays open in the root; the children keep the mapping. */
	fd = memfd_create("shmtree", MFD_CLOEXEC);
	mfd = map_fd(fd, "memfd");
	snprintf(name, sizeof(name), "/ckpt-shmtree.%d", getpid());
	st = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	posix = map_fd(st, name);
	close(st);
	shm_unlink(name);

	if (getenv("SHMTREE_SYSV")) {
		bool shm_only = !strcmp(getenv("SHMTREE_SYSV"), "shm");
		int id = shmget(IPC_PRIVATE, REGION, 0600);

		if (shm_only)
			shm_key = SHMTREE_KEY ^ (getpid() << 8);
		sysv = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
		if (sysv == (void *)-1 || shmctl(id, IPC_RMID, NULL) ||
		    shmget(shm_key, 4096, IPC_CREAT | IPC_EXCL | 0600) < 0) {
			perror("System V shared memory");
			return 100;
		}
		if (shm_only)
			goto sysv_done;
		semid = semget(IPC_PRIVATE, 2, 0600);
		msqid = msgget(IPC_PRIVATE, 0600);
		if (semid < 0 || msqid < 0) {
			perror("System V semaphores or message queue");
			return 100;
		}
	}
sysv_done:

	snprintf(name, sizeof(name), "%.50s.log", readyfile);
	logfd = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0) {
		perror(name);
		return 100;
	}

	mlog = memfd_create("shmtree-log", MFD_CLOEXEC);
	snprintf(name, sizeof(name), "%.50s.dlog", readyfile);
	dlog = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (mlog < 0 || dlog < 0 || unlink(name)) {
		perror("the memfd and deleted logs");
		return 100;
	}

	snprintf(lname.sun_path, sizeof(lname.sun_path), "%.90s.sock", readyfile);
	unlink(lname.sun_path);
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&lname, sizeof(lname)) ||
	    listen(lsock, 4)) {
		perror(lname.sun_path);
		return 100;
	}
	snprintf(dname.sun_path, sizeof(dname.sun_path), "%.90s.dg", readyfile);
	unlink(dname.sun_path);
	dsock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (dsock < 0 || bind(dsock, (struct sockaddr *)&dname, sizeof(dname))) {
		perror(dname.sun_path);
		return 100;
	}
	evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (evfd < 0) {
		perror("eventfd");
		return 100;
	}
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || sfd < 0 || ep < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, evfd, &(struct epoll_event){
			.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 1 })) {
		perror("timerfd, signalfd or epoll");
		return 100;
	}
	snprintf(name, sizeof(name), "%.50s.fifo", readyfile);
	unlink(name);
	if (mkfifo(name, 0600) ||
	    (fifofd = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
		perror(name);
		return 100;
	}
	/* SHMTREE_UNLINK: a FIFO all four hold, its name gone. */
	if (getenv("SHMTREE_UNLINK") && unlink(name)) {
		perror(name);
		return 100;
	}

	a = fork();
	if (a < 0)
		return 100;
	if (!a) {
		close(fd);
		ep2 = epoll_create1(EPOLL_CLOEXEC);
		if (ep2 < 0 || dup(ep2) < 0 ||
		    epoll_ctl(ep2, EPOLL_CTL_ADD, evfd, &(struct epoll_event){
				.events = EPOLLIN | EPOLLET, .data.u64 = 7 }))
			_exit(100);
		dcli = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (dcli < 0 ||
		    connect(dcli, (struct sockaddr *)&dname, sizeof(dname)))
			_exit(100);
		g = fork();
		if (g < 0)
			_exit(100);
		if (!g) {
			close(dcli);
			gsock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (gsock < 0)
				_exit(100);
			_exit(work(2) & 0x7f);
		}
		x = work(1);
		if (waitpid(g, &st, 0) != g)
			_exit(101);
		_exit((x ^ (uint64_t)st) & 0x7f);
	}
	b = fork();
	if (b < 0)
		return 100;
	if (!b) {
		close(fd);
		sock[1] = dial(100);
		_exit(work(3) & 0x7f);
	}
	sock[0] = accept4(lsock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (sock[0] < 0) {
		perror("accept");
		return 100;
	}
	x = work(0);
	if (waitpid(a, &sta, 0) != a || waitpid(b, &stb, 0) != b)
		return 101;
	for (off = 0; pread(logfd, &w, sizeof(w), off) == sizeof(w); off += sizeof(w))
		log = mix(log, w);
	/* The log's records in its order, unless a position split. */
	for (moff = 0; pread(logfd, &w, sizeof(w), moff) == sizeof(w) &&
	     pread(mlog, &m, sizeof(m), moff) == sizeof(m) &&
	     pread(dlog, &d, sizeof(d), moff) == sizeof(d) && m == w && d == w;
	     moff += sizeof(w))
		;
	if (moff != off || lseek(mlog, 0, SEEK_CUR) != (off_t)off ||
	    lseek(dlog, 0, SEEK_CUR) != (off_t)off) {
		fprintf(stderr, "shmtree: the memfd and deleted logs hold %llu bytes alike, the log %llu\n",
			(unsigned long long)moff, (unsigned long long)off);
		return 104;
	}
	printf("shmtree %016llx %04x %04x %016llx log %llu %016llx",
	       (unsigned long long)x, sta, stb,
	       (unsigned long long)(anon->v[1] ^ mfd[2] ^ posix[3]),
	       (unsigned long long)off, (unsigned long long)log);
	/* A's, B's and G's adjustments undone: the root's own are left. */
	if (semid >= 0)
		printf(" undone %d", semctl(semid, 1, GETVAL));
	printf("\n");
	if (sysv && semid < 0)
		shmctl(shmget(shm_key, 0, 0), IPC_RMID, NULL);
	return 3;
}
