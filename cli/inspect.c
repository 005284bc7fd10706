// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt inspect IMAGE: reads a whole process image through the same checks
 * the engine applies at restart, and describes it or says precisely what is
 * wrong with it and where.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "inspect.h"
#include "json.h"
#include "print.h"

static const char *const vma_flag_names[] = {
	"shared", "file", "growsdown", "heap", "stack", "vdso", "vvar",
	"dontfork", "dontdump", "maywrite", "noreserve", "fileobj", "sysv",
	"flock-read", "flock-write",
};

static const char *fileobj_kind(__u32 kind)
{
	return kind == CKPT_FILE_FIFO ? "fifo" : kind == CKPT_FILE_MEMFD ?
	       "memfd" : kind == CKPT_FILE_SHMEM ? "shmem" :
	       kind == CKPT_FILE_LOCAL ? "local" : "deleted";
}

/*
 * A timer's clock, as timer_create() takes it; for a CPU-time clock, the
 * process or thread it counts (0: the process itself) in @owner.
 */
static const char *timer_clock(__s32 clock, __u32 *owner)
{
	static const char *const cpu[2][3] = {
		{ "process-prof", "process-virt", "process-cputime" },
		{ "thread-prof", "thread-virt", "thread-cputime" },
	};

	*owner = 0;
	switch (clock) {
	case 0:
		return "realtime";
	case 1:
		return "monotonic";
	case 7:
		return "boottime";
	case 11:
		return "tai";
	}
	if (clock >= 0 || (clock & 3) == 3)
		return "?";
	*owner = ~(__u32)(clock >> 3);
	return cpu[!!(clock & 4)][clock & 3];
}

static const char *timer_notify(__u32 notify)
{
	switch (notify) {
	case 0:
		return "signal";
	case 1:
		return "none";
	case 2:
		return "thread";
	case 4:
		return "thread-id";
	}
	return "?";
}

static const char *const thread_flag_names[] = {
	"in_syscall", "nice",
};

static const char *const rlimit_names[CKPT_IMG_NRLIMITS] = {
	"cpu", "fsize", "data", "stack", "core", "rss", "nproc", "nofile",
	"memlock", "as", "locks", "sigpending", "msgqueue", "nice", "rtprio",
	"rttime",
};

static void record_sect(void *arg, __u64 index, const struct ckpt_sect *s,
			__u64 offset, const void *payload)
{
	struct inspect *in = arg;
	struct inspect_sect *p;
	size_t size;

	(void)index;
	(void)payload;
	if (in->sects_lost)
		return;
	if (in->nr_sects == in->sects_size) {
		size = in->sects_size ? 2 * in->sects_size : 64;
		p = realloc(in->sects, size * sizeof(*p));
		if (!p) {
			in->sects_lost = true;
			return;
		}
		in->sects = p;
		in->sects_size = size;
	}
	p = &in->sects[in->nr_sects++];
	p->offset = offset;
	p->len = s->len;
	p->type = s->type;
}

void inspect_init(struct inspect *in, struct ckpt_image *img,
		  unsigned int opts)
{
	memset(in, 0, sizeof(*in));
	in->opts = opts;
	if (opts & INSPECT_VERBOSE) {
		img->sect_fn = record_sect;
		img->sect_arg = in;
	}
}

void inspect_free(struct inspect *in)
{
	free(in->sects);
	in->sects = NULL;
	in->nr_sects = 0;
	in->sects_size = 0;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ULL(x) ((unsigned long long)(x))

static void prot_string(char buf[5], const struct ckpt_img_vma *v)
{
	buf[0] = v->prot & 1 ? 'r' : '-';
	buf[1] = v->prot & 2 ? 'w' : '-';
	buf[2] = v->prot & 4 ? 'x' : '-';
	buf[3] = v->flags & CKPT_VMA_SHARED ? 's' : 'p';
	buf[4] = '\0';
}

/*
 * The names of the bits set in @flags: a JSON array of them all, or in
 * text those not in @skip, comma-separated ("-" for none).
 */
static void print_flags(struct printer *p, enum print_which w, const char *key,
			__u32 flags, const char *const *names, size_t nr,
			__u32 skip)
{
	const char *sep = "";
	size_t i;

	if (w & PRINT_JSON)
		print_open_array(p, key);
	for (i = 0; i < nr; i++) {
		if (flags & (1U << i))
			print_string(p, w & PRINT_JSON, NULL, "", names[i]);
		if ((w & PRINT_TEXT) && (flags & ~skip) & (1U << i)) {
			print_text(p, "%s%s", sep, names[i]);
			sep = ",";
		}
	}
	if ((w & PRINT_TEXT) && !*sep)
		print_text(p, "-");
	if (w & PRINT_JSON)
		print_close_array(p);
}

/* Bytes as lowercase hex digits, into @buf of 2 * @len + 1. */
static char *hex_string(char *buf, const __u8 *bytes, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", bytes[i]);
	buf[2 * len] = '\0';
	return buf;
}

static void created_string(char *buf, size_t size, __u64 ns)
{
	time_t t = ns / 1000000000;
	struct tm tm;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
}

/* A resource limit: unlimited (null in JSON) or its value. */
static void print_rlimit(struct printer *p, bool verbose, __u64 v)
{
	if (v == ~0ULL) {
		print_null(p, NULL);
		if (verbose)
			print_text(p, "unlimited");
	} else {
		print_uint(p, verbose ? PRINT_ANY : PRINT_JSON, NULL, "%llu", v);
	}
}

/* The process: two lines of text, the rest with -v; all in JSON. */
static void print_process(struct printer *p, const struct ckpt_image *img,
			  bool verbose)
{
	enum print_which more = verbose ? PRINT_ANY : PRINT_JSON;
	const struct ckpt_img_process *pr = &img->proc;
	unsigned int i;

	print_open_object(p, "process");
	print_uint(p, PRINT_ANY, "pid", "process: pid %llu", pr->pid);
	print_uint(p, PRINT_ANY, "ppid", ", ppid %llu", pr->ppid);
	print_string(p, PRINT_ANY, "comm", ", comm \"%s\"\n", pr->comm);
	if (pr->exe_dev == CKPT_IMG_EXE_OBJ) {
		/* Deleted while it ran: the image carries it. */
		print_string(p, PRINT_ANY, "exe", "exe: %s", pr->exe);
		print_bool(p, PRINT_ANY, "exe_deleted", " (deleted", true);
		print_uint(p, PRINT_ANY, "exe_object", ", object %llu)\n",
			   pr->exe_ino);
	} else {
		print_string(p, PRINT_ANY, "exe", "exe: %s\n", pr->exe);
		print_uint(p, more, "exe_dev", "  exe dev 0x%llx", pr->exe_dev);
		print_uint(p, more, "exe_ino", " ino %llu\n", pr->exe_ino);
	}
	print_uint(p, more, "uid", "  uid %llu", pr->uid);
	print_uint(p, more, "euid", " euid %llu", pr->euid);
	print_uint(p, more, "gid", " gid %llu", pr->gid);
	print_uint(p, more, "egid", " egid %llu", pr->egid);
	print_uint(p, more, "umask", " umask %03llo", pr->umask);
	print_uint(p, more, "personality", " personality 0x%llx", pr->personality);
	print_uint(p, more, "exit_signal", " exit_signal %llu\n", pr->exit_signal);
	print_xuint(p, more, "start_code", "0x%llx", "  code %llx", pr->start_code);
	print_xuint(p, more, "end_code", "0x%llx", "-%llx", pr->end_code);
	print_xuint(p, more, "start_data", "0x%llx", " data %llx", pr->start_data);
	print_xuint(p, more, "end_data", "0x%llx", "-%llx", pr->end_data);
	print_xuint(p, more, "start_brk", "0x%llx", " brk %llx", pr->start_brk);
	print_xuint(p, more, "brk", "0x%llx", "-%llx", pr->brk);
	print_xuint(p, more, "start_stack", "0x%llx", " stack %llx\n", pr->start_stack);
	print_xuint(p, more, "arg_start", "0x%llx", "  args %llx", pr->arg_start);
	print_xuint(p, more, "arg_end", "0x%llx", "-%llx", pr->arg_end);
	print_xuint(p, more, "env_start", "0x%llx", " env %llx", pr->env_start);
	print_xuint(p, more, "env_end", "0x%llx", "-%llx\n", pr->env_end);
	print_xuint(p, more, "vvar", "0x%llx", "  vvar %llx", pr->vvar);
	print_uint(p, more, "vvar_size", " +%llu", pr->vvar_size);
	print_xuint(p, more, "vdso", "0x%llx", ", vdso %llx", pr->vdso);
	print_uint(p, more, "vdso_size", " +%llu", pr->vdso_size);
	print_uint(p, more, "vdso_csum", ", vdso checksum %08llx\n", pr->vdso_csum);
	if (img->has_vdso) {
		print_open_object(p, "vdso_entries");
		if (verbose)
			print_text(p, "  vdso entry points:");
		for (i = 0; i < img->vdso.nr_syms; i++) {
			print_string(p, more & PRINT_TEXT, NULL, " %s",
				     img->vdso.syms[i].name);
			print_uint(p, more, img->vdso.syms[i].name, "+0x%llx",
				   img->vdso.syms[i].offset);
		}
		if (verbose)
			print_text(p, "\n");
		print_close_object(p);
	}
	if (verbose) {
		print_text(p, "  auxv");
		for (i = 0; i + 1 < CKPT_IMG_AUXV_WORDS && pr->auxv[i]; i += 2)
			print_text(p, " %llu=0x%llx", ULL(pr->auxv[i]),
				   ULL(pr->auxv[i + 1]));
		print_text(p, "\n");
		for (i = 0; i < CKPT_IMG_NSIG; i++) {
			const struct ckpt_img_sigaction *sa = &pr->sigaction[i];

			if (!sa->handler && !sa->flags && !sa->mask)
				continue;
			print_text(p, "  signal %u: handler 0x%llx flags 0x%llx restorer 0x%llx mask 0x%llx\n",
				   i + 1, ULL(sa->handler), ULL(sa->flags),
				   ULL(sa->restorer), ULL(sa->mask));
		}
	}
	print_open_object(p, "rlimits");
	for (i = 0; i < CKPT_IMG_NRLIMITS; i++) {
		if (verbose)
			print_text(p, "%s%s ", i % 4 ? " " : i ? "\n  rlimits " :
				   "  rlimits ", rlimit_names[i]);
		print_open_array(p, rlimit_names[i]);
		print_rlimit(p, verbose, pr->rlimit[i].cur);
		if (verbose)
			print_text(p, "/");
		print_rlimit(p, verbose, pr->rlimit[i].max);
		print_close_array(p);
	}
	if (verbose)
		print_text(p, "\n");
	print_close_object(p);
	print_close_object(p);
}

static void print_creds(struct printer *p, const struct ckpt_image *img)
{
	const struct ckpt_img_creds *c = &img->creds;
	__u32 i;

	if (!img->has_creds)
		return;
	print_open_object(p, "creds");
	print_uint(p, PRINT_ANY, "uid", "credentials: uid %llu", c->uid);
	print_uint(p, PRINT_ANY, "euid", " euid %llu", c->euid);
	print_uint(p, PRINT_ANY, "suid", " suid %llu", c->suid);
	print_uint(p, PRINT_ANY, "fsuid", " fsuid %llu", c->fsuid);
	print_uint(p, PRINT_ANY, "gid", ", gid %llu", c->gid);
	print_uint(p, PRINT_ANY, "egid", " egid %llu", c->egid);
	print_uint(p, PRINT_ANY, "sgid", " sgid %llu", c->sgid);
	print_uint(p, PRINT_ANY, "fsgid", " fsgid %llu\n", c->fsgid);
	print_text(p, "groups:%s", c->nr_groups ? "" : " none");
	print_open_array(p, "groups");
	for (i = 0; i < c->nr_groups; i++)
		print_uint(p, PRINT_ANY, NULL, " %llu", img->groups[i]);
	print_close_array(p);
	print_xuint(p, PRINT_ANY, "cap_effective", "0x%llx",
		    "\ncapabilities: effective 0x%llx", c->cap_effective);
	print_xuint(p, PRINT_ANY, "cap_permitted", "0x%llx", " permitted 0x%llx",
		    c->cap_permitted);
	print_xuint(p, PRINT_ANY, "cap_inheritable", "0x%llx",
		    " inheritable 0x%llx", c->cap_inheritable);
	print_xuint(p, PRINT_ANY, "cap_bset", "0x%llx", " bounding 0x%llx",
		    c->cap_bset);
	print_xuint(p, PRINT_ANY, "cap_ambient", "0x%llx", " ambient 0x%llx",
		    c->cap_ambient);
	print_uint(p, PRINT_ANY, "dumpable", ", dumpable %llu", c->dumpable);
	print_bool(p, PRINT_ANY, "no_new_privs", ", no_new_privs",
		   c->flags & CKPT_CREDS_NO_NEW_PRIVS);
	print_text(p, "\n");
	print_close_object(p);
}

/* A tree member's place (CKPT_IOC_CHECKPOINT_TREE); nothing for others. */
static void print_tree(struct printer *p, const struct ckpt_image *img)
{
	const struct ckpt_img_tree *t = &img->tree;
	char id[2 * sizeof(t->id) + 1];

	if (!img->has_tree)
		return;
	print_open_object(p, "tree");
	print_uint(p, PRINT_ANY, "index", "tree: member %llu", t->index);
	print_uint(p, PRINT_ANY, "nr_members", " of %llu, ", t->nr_members);
	if (t->parent == CKPT_TREE_NO_PARENT) {
		print_null(p, "parent");
		print_text(p, t->index ? "another root" : "the root");
	} else {
		print_uint(p, PRINT_ANY, "parent", "parent member %llu", t->parent);
	}
	print_uint(p, PRINT_ANY, "pgid", ", pgid %llu", t->pgid);
	print_uint(p, PRINT_ANY, "sid", " sid %llu", t->sid);
	print_bool(p, PRINT_JSON, "subreaper", "", t->flags & CKPT_TREE_SUBREAPER);
	print_bool(p, PRINT_JSON, "foreground", "", t->flags & CKPT_TREE_FOREGROUND);
	print_string(p, PRINT_ANY, "id", ", id %s", hex_string(id, t->id, sizeof(t->id)));
	print_bool(p, PRINT_TEXT, NULL, ", child subreaper",
		   t->flags & CKPT_TREE_SUBREAPER);
	print_bool(p, PRINT_TEXT, NULL, ", terminal foreground",
		   t->flags & CKPT_TREE_FOREGROUND);
	if (t->flags & CKPT_TREE_CTTY)
		print_uint(p, PRINT_ANY, "ctty",
			   ", controlling terminal: pts %llu", t->ctty);
	else
		print_null(p, "ctty");
	print_text(p, "\n");
	print_close_object(p);
}

/* Only the engine holding the key can check the MAC: shown, not checked. */
static void print_mac(struct printer *p, const struct ckpt_image *img)
{
	char id[2 * CKPT_MAC_KEY_ID_LEN + 1];

	if (!img->has_mac) {
		print_null(p, "mac");
		print_text(p, "authentication: none (restarts only with --unauthenticated, as the restarter)\n");
		return;
	}
	print_open_object(p, "mac");
	print_string(p, PRINT_JSON, "alg", "", "hmac-sha256");
	print_string(p, PRINT_ANY, "key_id", "authentication: HMAC-SHA256, key id %s\n",
		     hex_string(id, img->mac.key_id, CKPT_MAC_KEY_ID_LEN));
	print_close_object(p);
}

static const char *policy_name(__u32 policy)
{
	static const char *const names[] = {
		"normal", "fifo", "rr", "batch", "?", "idle",
	};

	return policy < ARRAY_SIZE(names) ? names[policy] : "?";
}

/* @s's CPUs, "0,2-3", into @buf. */
static const char *cpu_list(char *buf, size_t len,
			    const struct ckpt_img_sched *s)
{
	unsigned int cpu, end, n = CKPT_IMG_CPU_WORDS * 64;
	size_t at = 0;

#define HAS(c) ((c) < n && ckpt_sched_cpu(s, c))
	buf[0] = '\0';
	for (cpu = 0; cpu < n; cpu = end + 1) {
		end = cpu;
		if (!HAS(cpu))
			continue;
		while (HAS(end + 1))
			end++;
		at += snprintf(buf + at, at < len ? len - at : 0,
			       end > cpu ? "%s%u-%u" : "%s%u", at ? "," : "",
			       cpu, end);
	}
#undef HAS
	return buf;
}

/* How the thread is scheduled, where not as any thread is by default. */
static void print_sched(struct printer *p, const struct ckpt_img_sched *s)
{
	char cpus[CKPT_IMG_CPU_WORDS * 64 * 6];
	unsigned int cpu;

	print_open_object(p, "sched");
	print_string(p, s->policy ? PRINT_ANY : PRINT_JSON, "policy",
		     " policy %s", policy_name(s->policy));
	if (s->rt_priority)
		print_uint(p, PRINT_ANY, "rt_priority", " %llu", s->rt_priority);
	else
		print_uint(p, PRINT_JSON, "rt_priority", "", 0);
	print_bool(p, PRINT_ANY, "reset_on_fork", " reset-on-fork",
		   s->flags & CKPT_SCHED_RESET_ON_FORK);
	if (s->ioprio) {
		static const char *const class[] = { "", "rt", "be", "idle" };

		print_string(p, PRINT_ANY, "ioprio_class", " ioprio %s",
			     class[s->ioprio >> 13 & 3]);
		if (s->ioprio >> 13 != 3)
			print_uint(p, PRINT_ANY, "ioprio_level", "/%llu",
				   s->ioprio & 7);
	} else {
		print_null(p, "ioprio_class");
	}
	if (s->flags & CKPT_SCHED_ALL_CPUS) {
		print_null(p, "cpus");
	} else {
		print_string(p, PRINT_TEXT, NULL, " cpus %s",
			     cpu_list(cpus, sizeof(cpus), s));
		print_open_array(p, "cpus");
		for (cpu = 0; cpu < CKPT_IMG_CPU_WORDS * 64; cpu++)
			if (ckpt_sched_cpu(s, cpu))
				print_uint(p, PRINT_JSON, NULL, "", cpu);
		print_close_array(p);
	}
	print_close_object(p);
}

static void print_thread(struct printer *p, const struct ckpt_img_thread *t,
			 const struct ckpt_img_sched *s, bool verbose)
{
	enum print_which more = verbose ? PRINT_ANY : PRINT_JSON;
	unsigned int i;

	print_open_object(p, NULL);
	print_uint(p, PRINT_ANY, "tid", "  tid %llu", t->tid);
	print_string(p, PRINT_ANY, "comm", " \"%s\"", t->comm);
	print_flags(p, PRINT_JSON, "flags", t->flags, thread_flag_names,
		    ARRAY_SIZE(thread_flag_names), 0);
	print_xuint(p, PRINT_ANY, "ip", "0x%llx", " ip 0x%llx",
		    t->gregs[CKPT_GREG_RIP]);
	print_xuint(p, PRINT_ANY, "sp", "0x%llx", " sp 0x%llx",
		    t->gregs[CKPT_GREG_RSP]);
	if (t->flags & CKPT_THREAD_NICE)
		print_int(p, PRINT_ANY, "nice", " nice %lld", t->nice);
	if (s)
		print_sched(p, s);
	print_bool(p, PRINT_TEXT, NULL, " in syscall",
		   t->flags & CKPT_THREAD_IN_SYSCALL);
	print_text(p, "\n");
	print_open_object(p, "regs");
	for (i = 0; i < CKPT_GREG_NR; i++) {
		if (verbose)
			print_text(p, "%s%s", i % 6 ? " " : i ? "\n    " : "    ",
				   ckpt_greg_names[i]);
		print_xuint(p, more, ckpt_greg_names[i], "0x%llx", " 0x%llx",
			    t->gregs[i]);
	}
	print_close_object(p);
	if (verbose)
		print_text(p, "\n");
	print_xuint(p, more, "blocked", "0x%llx", "    blocked 0x%llx",
		    t->blocked);
	if (verbose) {
		print_text(p, " clear_child_tid 0x%llx robust_list 0x%llx+%llu\n",
			   ULL(t->clear_child_tid), ULL(t->robust_list),
			   ULL(t->robust_list_len));
		print_text(p, "    rseq 0x%llx+%llu sig 0x%x sigaltstack 0x%llx+%llu flags 0x%x\n",
			   ULL(t->rseq), ULL(t->rseq_len), t->rseq_sig,
			   ULL(t->sas_ss_sp), ULL(t->sas_ss_size), t->sas_ss_flags);
	}
	print_close_object(p);
}

static void print_vma(struct printer *p, const struct ckpt_img_vma *v,
		      __u64 pages, bool verbose)
{
	enum print_which file = verbose && (v->flags & CKPT_VMA_FILE) ?
				PRINT_ANY : PRINT_JSON;
	char prot[5];

	prot_string(prot, v);
	print_open_object(p, NULL);
	print_xuint(p, PRINT_ANY, "start", "0x%llx", "  %012llx", v->start);
	print_xuint(p, PRINT_ANY, "end", "0x%llx", "-%012llx", v->end);
	print_string(p, PRINT_TEXT, NULL, " %s", prot);
	print_uint(p, PRINT_TEXT, NULL, " %6llu", pages);
	print_text(p, " %s ", pages == 1 ? "page " : "pages");
	prot[3] = '\0';
	print_string(p, PRINT_JSON, "prot", "", prot);
	print_flags(p, PRINT_TEXT, NULL, v->flags, vma_flag_names,
		    ARRAY_SIZE(vma_flag_names), CKPT_VMA_SHARED);
	print_flags(p, PRINT_JSON, "flags", v->flags, vma_flag_names,
		    ARRAY_SIZE(vma_flag_names), 0);
	print_string(p, v->path[0] ? PRINT_ANY : PRINT_JSON, "path", " %s", v->path);
	print_text(p, "\n");
	print_uint(p, file, "pgoff", "    pgoff 0x%llx", v->pgoff);
	print_uint(p, file, "dev", " dev 0x%llx", v->dev);
	print_uint(p, file, "ino", " ino %llu", v->ino);
	print_uint(p, file, "size", " size %llu\n", v->size);
	print_uint(p, PRINT_JSON, "pages", "", pages);
	print_close_object(p);
}

/* The descriptors: a line each in text, "files":[...] in JSON. */
static void print_files(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_files)
		print_text(p, "files: %u\n", img->nr_files);
	print_open_array(p, "files");
	for (i = 0; i < img->nr_files; i++) {
		const struct ckpt_img_file *fl = &img->files[i];
		bool shared = fl->kind == CKPT_FILE_SHARED;

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "fd", "  fd %llu", fl->fd);
		if (shared)
			print_uint(p, PRINT_ANY, "shares", " shares fd %llu", fl->ino);
		else
			print_uint(p, PRINT_ANY, "pos", " at %llu", fl->pos);
		print_xuint(p, PRINT_ANY, "flags", "0%llo", " flags 0%llo",
			    fl->open_flags);
		print_bool(p, PRINT_ANY, "cloexec", " cloexec",
			   fl->flags & CKPT_FILE_CLOEXEC);
		if (!shared) {
			print_bool(p, PRINT_ANY, "registered", " registered",
				   fl->flags & CKPT_FILE_REGISTERED);
			print_bool(p, PRINT_ANY, "tree_shared", " tree-shared",
				   fl->flags & CKPT_FILE_TREE_SHARED);
			print_bool(p, PRINT_ANY, "procfs", " procfs",
				   fl->flags & CKPT_FILE_PROCFS);
			print_bool(p, PRINT_ANY, "sysfs", " sysfs",
				   fl->flags & CKPT_FILE_SYSFS);
			if (CKPT_FILE_OPEN_NR(fl->flags))
				print_uint(p, PRINT_ANY, "open_nr", " open %llu",
					   CKPT_FILE_OPEN_NR(fl->flags));
		}
		print_string(p, PRINT_ANY, "path", " %s\n", fl->path);
		print_close_object(p);
	}
	print_close_array(p);
}

static void print_fileobjs(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_fileobjs)
		print_text(p, "file objects: %u\n", img->nr_fileobjs);
	print_open_array(p, "fileobjs");
	for (i = 0; i < img->nr_fileobjs; i++) {
		const struct ckpt_img_fileobj *o = &img->fileobjs[i];

		print_open_object(p, NULL);
		print_text(p, "  %u", i);
		print_string(p, PRINT_ANY, "kind", " %s", fileobj_kind(o->kind));
		print_uint(p, PRINT_ANY, "size", " size %llu", o->size);
		print_uint(p, PRINT_ANY, "stored", " stored %llu", o->stored);
		print_uint(p, PRINT_ANY, "mode", " mode %04llo", o->mode);
		print_uint(p, o->kind == CKPT_FILE_MEMFD ? PRINT_ANY : PRINT_JSON,
			   "seals", " seals 0x%llx", o->seals);
		print_uint(p, o->kind == CKPT_FILE_FIFO ? PRINT_ANY : PRINT_JSON,
			   "capacity", " capacity %llu", o->capacity);
		print_uint(p, PRINT_JSON, "dev", "", o->dev);
		print_uint(p, PRINT_JSON, "ino", "", o->ino);
		print_string(p, PRINT_ANY, "name", " %s\n", o->name);
		print_close_object(p);
	}
	print_close_array(p);
}

/* The epolls' interest lists: what each epoll descriptor watches. */
static void print_epitems(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_epitems)
		print_text(p, "epoll items: %u\n", img->nr_epitems);
	print_open_array(p, "epoll_items");
	for (i = 0; i < img->nr_epitems; i++) {
		const struct ckpt_img_epitem *e = &img->epitems[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "epfd", "  epoll fd %llu", e->epfd);
		print_uint(p, PRINT_ANY, "fd", " watches fd %llu", e->tfd);
		print_xuint(p, PRINT_ANY, "events", "0x%llx", " events 0x%llx",
			    e->events);
		print_xuint(p, PRINT_ANY, "data", "0x%llx", " data 0x%llx\n",
			    e->data);
		print_close_object(p);
	}
	print_close_array(p);
}

/* A flock() held through a mapping only: where, which kind, which file. */
static void print_mapped_lock(struct printer *p, const struct ckpt_img_vma *v)
{
	print_open_object(p, NULL);
	print_xuint(p, PRINT_ANY, "mapping", "0x%llx", "  mapping %llx", v->start);
	print_string(p, PRINT_ANY, "kind", " %s", "flock");
	print_string(p, PRINT_ANY, "type", " %s",
		     v->flags & CKPT_VMA_FLOCK_WRITE ? "write" : "read");
	print_string(p, PRINT_ANY, "path", " %s\n", v->path);
	print_close_object(p);
}

/* inotify watches: "inotify watches: N" and a line each; "inotify":[...]. */
static void print_inotify(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_inotify)
		print_text(p, "inotify watches: %u\n", img->nr_inotify);
	print_open_array(p, "inotify");
	for (i = 0; i < img->nr_inotify; i++) {
		const struct ckpt_img_inotify *w = &img->inotify[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "fd", "  fd %llu", w->fd);
		print_uint(p, PRINT_ANY, "wd", " wd %llu", w->wd);
		print_xuint(p, PRINT_ANY, "mask", "0x%llx", " mask 0x%llx",
			    w->mask);
		print_string(p, PRINT_ANY, "path", " %s\n", w->path);
		print_close_object(p);
	}
	print_close_array(p);
}

/*
 * The file locks the process holds: which descriptor, what, which bytes;
 * and the flock() locks its mappings hold (the VMAS entries that carry
 * one, with "mapping" for "fd" in JSON).
 */
static void print_locks(struct printer *p, const struct ckpt_image *img)
{
	static const char *const kinds[] = { "?", "flock", "posix", "ofd" };
	__u32 i, mapped = 0;

	for (i = 0; i < img->nr_vmas; i++)
		mapped += !!(img->vmas[i].flags &
			     (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE));
	if (img->nr_locks + mapped)
		print_text(p, "file locks: %u\n", img->nr_locks + mapped);
	print_open_array(p, "locks");
	for (i = 0; i < img->nr_locks; i++) {
		const struct ckpt_img_lock *l = &img->locks[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "fd", "  fd %llu", l->fd);
		print_string(p, PRINT_ANY, "kind", " %s",
			     kinds[l->kind <= CKPT_LOCK_OFD ? l->kind : 0]);
		print_string(p, PRINT_ANY, "type", " %s",
			     l->type == CKPT_LOCK_WRITE ? "write" : "read");
		print_uint(p, PRINT_ANY, "start", " bytes %llu", l->start);
		/* JSON: the number, CKPT_LOCK_TO_EOF for "to the end". */
		print_uint(p, l->end == CKPT_LOCK_TO_EOF ? PRINT_JSON : PRINT_ANY,
			   "end", "-%llu\n", l->end);
		if (l->end == CKPT_LOCK_TO_EOF)
			print_text(p, "-eof\n");
		print_close_object(p);
	}
	for (i = 0; i < img->nr_vmas; i++)
		if (img->vmas[i].flags &
		    (CKPT_VMA_FLOCK_READ | CKPT_VMA_FLOCK_WRITE))
			print_mapped_lock(p, &img->vmas[i]);
	print_close_array(p);
}

static void print_sysv_one(struct printer *p, const char *kind,
			   const struct ckpt_img_ipcperm *pm)
{
	print_open_object(p, NULL);
	print_string(p, PRINT_ANY, "kind", "  %s", kind);
	print_uint(p, PRINT_ANY, "id", " id %llu", pm->id);
	print_xuint(p, PRINT_ANY, "key", "0x%08llx", " key 0x%08llx", pm->key);
	print_uint(p, PRINT_ANY, "uid", " uid %llu", pm->uid);
	print_uint(p, PRINT_ANY, "gid", " gid %llu", pm->gid);
	print_uint(p, PRINT_ANY, "cuid", " cuid %llu", pm->cuid);
	print_uint(p, PRINT_ANY, "cgid", " cgid %llu", pm->cgid);
	print_xuint(p, PRINT_ANY, "mode", "%04llo", " mode %04llo", pm->mode);
}

/* A tree root's System V objects. */
static void print_sysv(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_shms + img->nr_sems + img->nr_msgs)
		print_text(p, "System V objects: %u\n",
			   img->nr_shms + img->nr_sems + img->nr_msgs);
	print_open_array(p, "sysv");
	for (i = 0; i < img->nr_shms; i++) {
		const struct ckpt_img_sysvshm *m = img->shms[i];

		print_sysv_one(p, "shm", &m->perm);
		print_uint(p, PRINT_ANY, "size", " size %llu", m->size);
		print_uint(p, PRINT_ANY, "stored", " stored %llu", m->stored);
		print_bool(p, PRINT_ANY, "removed", " removed",
			   m->perm.flags & CKPT_IPC_DEST);
		print_bool(p, PRINT_ANY, "locked", " locked",
			   m->perm.flags & CKPT_IPC_LOCKED);
		print_text(p, "\n");
		print_close_object(p);
	}
	for (i = 0; i < img->nr_sems; i++) {
		print_sysv_one(p, "sem", &img->sems[i]->perm);
		print_uint(p, PRINT_ANY, "nsems", " nsems %llu", img->sems[i]->nsems);
		print_text(p, "\n");
		print_close_object(p);
	}
	for (i = 0; i < img->nr_msgs; i++) {
		print_sysv_one(p, "msg", &img->msgs[i]->perm);
		print_uint(p, PRINT_ANY, "qbytes", " qbytes %llu", img->msgs[i]->qbytes);
		print_uint(p, PRINT_ANY, "messages", " messages %llu", img->msgs[i]->nr);
		print_text(p, "\n");
		print_close_object(p);
	}
	print_close_array(p);
}

/* A tree member's zombie children. */
static void print_zombies(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_zombies)
		print_text(p, "zombie children: %u\n", img->nr_zombies);
	print_open_array(p, "zombies");
	for (i = 0; i < img->nr_zombies; i++) {
		const struct ckpt_img_zombie *z = &img->zombies[i];
		__u32 sig = z->status & 0x7f;

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "pid", "  pid %llu", z->pid);
		if (sig)
			print_uint(p, PRINT_ANY, "signal", " signal %llu", sig);
		else
			print_uint(p, PRINT_ANY, "exit", " exit %llu",
				   (z->status >> 8) & 0xff);
		print_bool(p, PRINT_ANY, "core", " core", z->status & 0x80);
		print_uint(p, PRINT_ANY, "exit_signal", " exit_signal %llu",
			   z->exit_signal);
		print_uint(p, PRINT_ANY, "pgid", " pgid %llu", z->pgid);
		print_uint(p, PRINT_ANY, "sid", " sid %llu\n", z->sid);
		print_close_object(p);
	}
	print_close_array(p);
}

/* A tree member's semaphore adjustments (SEM_UNDO): only those not 0. */
static void print_semundos(struct printer *p, const struct ckpt_image *img)
{
	__u32 i, j;

	if (img->nr_semundos)
		print_text(p, "semaphore adjustments: %u sets\n",
			   img->nr_semundos);
	print_open_array(p, "semundo");
	for (i = 0; i < img->nr_semundos; i++) {
		const struct ckpt_img_semundo *u = img->semundos[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "id", "  set %llu", u->id);
		print_uint(p, PRINT_ANY, "nsems", " nsems %llu", u->nsems);
		print_open_array(p, "adj");
		for (j = 0; j < u->nsems; j++) {
			if (!u->adj[j])
				continue;
			print_open_object(p, NULL);
			print_uint(p, PRINT_ANY, "sem", " sem %llu", j);
			print_int(p, PRINT_ANY, "adj", " %+lld", u->adj[j]);
			print_close_object(p);
		}
		print_close_array(p);
		print_text(p, "\n");
		print_close_object(p);
	}
	print_close_array(p);
}

static const char *const tcp_states[__CKPT_TCP_STATE_MAX] = {
	[CKPT_TCP_CLOSED] = "closed", [CKPT_TCP_ESTABLISHED] = "established",
	[CKPT_TCP_LISTEN] = "listening", [CKPT_TCP_CONNECTING] = "connecting",
	[CKPT_TCP_WAITING] = "waiting",
};

/* The TCP sockets. */
static void print_tcp(struct printer *p, const struct ckpt_image *img)
{
	char buf[80];
	__u32 i;

	if (img->nr_tcps)
		print_text(p, "TCP sockets: %u\n", img->nr_tcps);
	print_open_array(p, "tcp");
	for (i = 0; i < img->nr_tcps; i++) {
		const struct ckpt_img_tcp *t = img->tcps[i];
		bool conn = t->state == CKPT_TCP_ESTABLISHED ||
			    t->state == CKPT_TCP_WAITING;

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "socket", " socket %llu", t->ino);
		print_string(p, PRINT_ANY, "state", " state %s", tcp_states[t->state]);
		ckpt_image_tcp_end(buf, sizeof(buf), t, false);
		print_string(p, PRINT_ANY, "local", " local %s", buf);
		ckpt_image_tcp_end(buf, sizeof(buf), t, true);
		print_string(p, conn || t->state == CKPT_TCP_CONNECTING ? PRINT_ANY : 0,
			     "peer", " peer %s", buf);
		if (conn) {
			print_uint(p, PRINT_ANY, "sendq", " sendq %llu",
				   t->write_seq - t->snd_una);
			print_uint(p, PRINT_ANY, "unsent", " unsent %llu",
				   t->write_seq - t->snd_nxt);
			print_uint(p, PRINT_ANY, "recvq", " recvq %llu",
				   t->rcv_nxt - t->copied_seq);
			print_bool(p, PRINT_ANY, "shut-wr", " shut-wr",
				   t->flags & CKPT_TCP_FIN_OUT);
			print_bool(p, PRINT_ANY, "peer-shut-wr", " peer-shut-wr",
				   t->flags & CKPT_TCP_FIN_IN);
		}
		if (t->state == CKPT_TCP_LISTEN)
			print_uint(p, PRINT_ANY, "backlog", " backlog %llu", t->backlog);
		print_bool(p, PRINT_ANY, "nodelay", " nodelay", t->flags & CKPT_TCP_NODELAY);
		print_bool(p, PRINT_ANY, "keepalive", " keepalive",
			   t->flags & CKPT_TCP_KEEPALIVE);
		print_bool(p, PRINT_ANY, "v6only", " v6only", t->flags & CKPT_TCP_V6ONLY);
		print_text(p, "\n");
		print_close_object(p);
	}
	print_close_array(p);
}

/* UNIX sockets with names, or connected to nothing. */
static void print_unames(struct printer *p, const struct ckpt_image *img)
{
	static const char *const types[] = { [1] = "stream", [2] = "dgram",
					     [5] = "seqpacket" };
	char name[2 * CKPT_USOCK_ADDR_MAX];
	__u32 i;

	if (img->nr_unames)
		print_text(p, "UNIX sockets by name: %u\n", img->nr_unames);
	print_open_array(p, "unix_names");
	for (i = 0; i < img->nr_unames; i++) {
		const struct ckpt_img_uname *u = img->unames[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "ino", "  socket:[%llu]", u->ino);
		print_string(p, PRINT_ANY, "type", " %s", types[u->type]);
		ckpt_image_uaddr(name, sizeof(name), &u->name);
		if (u->name.len)
			print_string(p, PRINT_ANY, "name", " name %s", name);
		else
			print_null(p, "name");
		if (u->name.len && u->name.addr[0])
			print_xuint(p, PRINT_ANY, "mode", "%04llo", " mode %04llo",
				    u->name.mode);
		ckpt_image_uaddr(name, sizeof(name), &u->peer);
		if (u->peer.len)
			print_string(p, PRINT_ANY, "peer", " connected to %s", name);
		else
			print_null(p, "peer");
		print_uint(p, PRINT_ANY, "bytes", " queued %llu bytes\n", u->len);
		print_close_object(p);
	}
	print_close_array(p);
}

/* The pseudo-terminals. */
static void print_ptys(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	if (img->nr_ptys)
		print_text(p, "pseudo-terminals: %u\n", img->nr_ptys);
	print_open_array(p, "ptys");
	for (i = 0; i < img->nr_ptys; i++) {
		const struct ckpt_img_pty *t = &img->ptys[i];

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "pts", "  pts %llu", t->index);
		print_uint(p, PRINT_ANY, "rows", " rows %llu", t->rows);
		print_uint(p, PRINT_ANY, "cols", " cols %llu", t->cols);
		print_bool(p, PRINT_ANY, "canonical", " canonical",
			   t->lflag & 0000002);	/* ICANON */
		print_bool(p, PRINT_ANY, "echo", " echo", t->lflag & 0000010); /* ECHO */
		print_bool(p, PRINT_ANY, "packet", " packet", t->flags & CKPT_PTY_PACKET);
		print_bool(p, PRINT_ANY, "locked", " locked", t->flags & CKPT_PTY_LOCKED);
		print_text(p, "\n");
		print_close_object(p);
	}
	print_close_array(p);
}

/* Pending signals (listed with -v) and the interval timers. */
static void print_signals(struct printer *p, const struct ckpt_image *img,
			  bool verbose)
{
	const struct ckpt_img_signals *s = &img->signals;
	__u32 i;

	print_open_object(p, "signals");
	print_uint(p, PRINT_ANY, "pending", "pending signals: %llu\n", s->nr);
	for (i = 0; verbose && i < s->nr; i++) {
		const struct ckpt_img_siginfo *q = &img->sigqueue[i];
		int32_t code, pid;

		memcpy(&code, q->info + 8, sizeof(code));
		memcpy(&pid, q->info + 16, sizeof(pid));
		print_text(p, "  signal %u for %s %u, code %d, sender %d\n",
			   q->signo, q->tid ? "thread" : "process", q->tid, code, pid);
	}
	print_uint(p, PRINT_ANY, "itimer_real_ns", "itimers: real %llu ns",
		   s->real_value_ns);
	print_uint(p, PRINT_ANY, "itimer_real_interval_ns", "/%llu ns",
		   s->real_interval_ns);
	print_uint(p, PRINT_ANY, "itimer_virtual_ns", ", virtual %llu ns",
		   s->virt_value_ns);
	print_uint(p, PRINT_ANY, "itimer_virtual_interval_ns", "/%llu ns",
		   s->virt_interval_ns);
	print_uint(p, PRINT_ANY, "itimer_prof_ns", ", prof %llu ns",
		   s->prof_value_ns);
	print_uint(p, PRINT_ANY, "itimer_prof_interval_ns", "/%llu ns\n",
		   s->prof_interval_ns);
	print_close_object(p);
}

/* The POSIX timers. */
static void print_timers(struct printer *p, const struct ckpt_image *img)
{
	__u32 i;

	print_open_object(p, "timers");
	if (img->timers.nr || img->timers.next_id)
		print_text(p, "POSIX timers: %u, next id %u\n", img->timers.nr,
			   img->timers.next_id);
	print_uint(p, PRINT_JSON, "next_id", "", img->timers.next_id);
	print_open_array(p, "list");
	for (i = 0; i < img->timers.nr; i++) {
		const struct ckpt_img_timer *t = &img->timer_list[i];
		__u32 owner;
		const char *clock = timer_clock(t->clockid, &owner);

		print_open_object(p, NULL);
		print_uint(p, PRINT_ANY, "id", "  timer %llu", t->id);
		print_int(p, PRINT_JSON, "clockid", "", t->clockid);
		print_string(p, PRINT_ANY, "clock", ": %s", clock);
		print_uint(p, owner ? PRINT_ANY : PRINT_JSON, "owner", " of %llu", owner);
		print_string(p, PRINT_JSON, "notify", "", timer_notify(t->notify));
		print_uint(p, PRINT_JSON, "tid", "", t->tid);
		print_int(p, t->notify == 1 ? PRINT_JSON : PRINT_ANY, "signo",
			  ", signal %lld", t->signo);
		if (t->notify == 1)
			print_text(p, ", no signal");
		if (t->notify == 2)
			print_text(p, " (SIGEV_THREAD)");
		if (t->notify == 4)
			print_text(p, " to thread %u", t->tid);
		print_xuint(p, PRINT_ANY, "sival", "0x%llx", ", value 0x%llx", t->sival);
		print_text(p, ", %s", t->flags & CKPT_TIMER_ABSTIME ? "deadline" : "left");
		print_uint(p, PRINT_ANY, "value_ns", " %llu ns", t->value_ns);
		print_uint(p, PRINT_ANY, "interval_ns", ", interval %llu ns",
			   t->interval_ns);
		print_bool(p, PRINT_JSON, "absolute", "", t->flags & CKPT_TIMER_ABSTIME);
		print_uint(p, PRINT_ANY, "overrun", ", overrun %llu", t->overrun);
		print_uint(p, PRINT_ANY, "overrun_last", ", last %llu", t->overrun_last);
		print_bool(p, PRINT_ANY, "pending", ", signal pending",
			   t->flags & CKPT_TIMER_PENDING);
		print_text(p, "\n");
		print_close_object(p);
	}
	print_close_array(p);
	print_close_object(p);
}

/* The working and root directories, with -v their device and inode. */
static void print_fs(struct printer *p, const struct ckpt_image *img,
		     bool verbose)
{
	enum print_which more = verbose ? PRINT_ANY : PRINT_JSON;

	if (!img->has_fs)
		return;
	print_string(p, PRINT_ANY, "cwd", "cwd: %s\n", img->fs.cwd);
	print_uint(p, more, "cwd_dev", "  dev 0x%llx", img->fs.cwd_dev);
	print_uint(p, more, "cwd_ino", " ino %llu\n", img->fs.cwd_ino);
	print_string(p, PRINT_ANY, "root", "root: %s\n", img->fs.root);
	print_uint(p, more, "root_dev", "  dev 0x%llx", img->fs.root_dev);
	print_uint(p, more, "root_ino", " ino %llu\n", img->fs.root_ino);
}

/* Sizes, and with -v the bytes by section type and every section. */
static void print_sizes(struct printer *p, const struct ckpt_image *img,
			const struct inspect *in, bool verbose)
{
	__u64 page_bytes = img->nr_pages * CKPT_IMG_PAGE_SIZE;
	size_t i;

	print_open_object(p, "pages");
	print_uint(p, PRINT_ANY, "pages", "pages: %llu", img->nr_pages);
	print_uint(p, PRINT_ANY, "sections", " in %llu PAGES sections",
		   img->nr_pages_sects);
	print_uint(p, PRINT_ANY, "bytes", ", %llu bytes\n", page_bytes);
	print_close_object(p);
	print_uint(p, PRINT_ANY, "size", "size: %llu bytes", img->size);
	print_uint(p, PRINT_ANY, "nr_sections", " in %llu sections", img->nr_sections);
	print_text(p, ", %llu of them page data\n", ULL(page_bytes));
	if (verbose)
		print_text(p, "  by section type:");
	print_open_object(p, "size_by_type");
	for (i = CKPT_SECT_HEADER; i <= CKPT_SECT_MAX; i++) {
		if (verbose)
			print_text(p, " %s", ckpt_img_sect_name(i));
		print_uint(p, verbose ? PRINT_ANY : PRINT_JSON,
			   ckpt_img_sect_name(i), " %llu", img->type_bytes[i]);
	}
	print_close_object(p);
	if (!verbose)
		return;
	print_text(p, "\nsections:%s\n", in->sects_lost ? " (out of memory)" : "");
	print_open_array(p, "sections");
	for (i = 0; i < in->nr_sects; i++) {
		print_open_object(p, NULL);
		print_text(p, "  %zu", i);
		print_string(p, PRINT_JSON, "type", "", ckpt_img_sect_name(in->sects[i].type));
		print_text(p, " %-7s", ckpt_img_sect_name(in->sects[i].type));
		print_uint(p, PRINT_ANY, "offset", " at %llu", in->sects[i].offset);
		print_uint(p, PRINT_ANY, "len", ", %llu bytes\n", in->sects[i].len);
		print_close_object(p);
	}
	print_close_array(p);
}

/* The whole description, as text or as one JSON object. */
static void report(FILE *f, const char *name, const struct ckpt_image *img,
		   const struct inspect *in)
{
	bool verbose = in->opts & INSPECT_VERBOSE;
	const struct ckpt_img_header *h = &img->hdr;
	struct printer pr, *p = &pr;
	char created[64];
	__u32 i;

	print_init(p, f, in->opts & INSPECT_JSON);
	print_open_object(p, NULL);
	print_string(p, PRINT_ANY, "image", "image: %s\n", name);
	print_bool(p, PRINT_JSON, "valid", "", true);
	print_uint(p, PRINT_ANY, "version", "format: version %llu", h->version);
	print_string(p, PRINT_ANY, "arch", ", %s", "x86_64");
	print_uint(p, PRINT_ANY, "page_size", ", %llu-byte pages\n", h->page_size);
	print_string(p, PRINT_ANY, "kernel", "kernel: %s", h->kernel);
	print_string(p, PRINT_JSON, "boot_id", "", h->boot_id);
	if (verbose)
		print_string(p, PRINT_TEXT, NULL, " (boot %s)",
			     h->boot_id[0] ? h->boot_id : "unknown");
	created_string(created, sizeof(created), h->created_ns);
	print_string(p, PRINT_ANY, "created", "\ncreated: %s\n", created);
	print_uint(p, PRINT_JSON, "created_ns", "", h->created_ns);
	print_process(p, img, verbose);
	print_tree(p, img);
	print_creds(p, img);
	print_mac(p, img);
	print_uint(p, PRINT_ANY, "xstate_size", "xstate: %llu bytes per thread",
		   h->xstate_size);
	print_xuint(p, PRINT_ANY, "xfeatures", "0x%llx", ", xfeatures 0x%llx\n",
		    h->xfeatures);
	print_text(p, "threads: %u\n", img->nr_threads);
	print_open_array(p, "threads");
	for (i = 0; i < img->nr_threads; i++)
		print_thread(p, &img->threads[i],
			     i < img->nr_scheds ? &img->scheds[i] : NULL, verbose);
	print_close_array(p);
	print_files(p, img);
	print_fileobjs(p, img);
	print_epitems(p, img);
	print_locks(p, img);
	print_inotify(p, img);
	print_sysv(p, img);
	print_zombies(p, img);
	print_semundos(p, img);
	print_tcp(p, img);
	print_ptys(p, img);
	print_unames(p, img);
	print_signals(p, img, verbose);
	print_timers(p, img);
	print_fs(p, img, verbose);
	print_text(p, "mappings: %u\n", img->nr_vmas);
	print_open_array(p, "vmas");
	for (i = 0; i < img->nr_vmas; i++)
		print_vma(p, &img->vmas[i], img->vma_pages[i], verbose);
	print_close_array(p);
	print_sizes(p, img, in, verbose);
	print_string(p, PRINT_ANY, "checksums", "checksums: %s\nvalid\n", "ok");
	print_close_object(p);
	if (p->json)
		fputc('\n', f);
}

static void report_error(FILE *out, FILE *err, const char *name,
			 const struct ckpt_image *img, const struct inspect *in)
{
	const struct ckpt_image_error *e = &img->error;

	fprintf(err, "%s inspect: ", prog);
	text_string(err, name);
	if (e->io) {
		fprintf(err, ": %s: %s\n", e->why, strerror(-e->err));
	} else {
		fprintf(err, ": %s (section %llu", e->why, ULL(e->section));
		if (e->type)
			fprintf(err, " %s", ckpt_img_sect_name(e->type));
		fprintf(err, " at offset %llu)\n", ULL(e->offset));
	}
	if (!(in->opts & INSPECT_JSON))
		return;
	fprintf(out, "{\"image\":");
	json_print_str(out, name);
	fprintf(out, ",\"valid\":false,\"error\":{\"message\":");
	json_print_str(out, e->why);
	fprintf(out, ",\"errno\":%d,\"section\":%llu,\"type\":", -e->err,
		ULL(e->section));
	if (e->type)
		fprintf(out, "\"%s\"", ckpt_img_sect_name(e->type));
	else
		fprintf(out, "null");
	fprintf(out, ",\"offset\":%llu}}\n", ULL(e->offset));
}

int inspect_report(FILE *out, FILE *err, const char *name,
		   const struct ckpt_image *img, const struct inspect *in)
{
	if (!img->done) {
		report_error(out, err, name, img, in);
		return 1;
	}
	report(out, name, img, in);
	return 0;
}
