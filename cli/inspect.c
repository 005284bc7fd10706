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

static const char *const vma_flag_names[] = {
	"shared", "file", "growsdown", "heap", "stack", "vdso", "vvar",
	"dontfork", "dontdump", "maywrite", "noreserve", "fileobj", "sysv",
};

static const char *fileobj_kind(__u32 kind)
{
	return kind == CKPT_FILE_FIFO ? "fifo" : kind == CKPT_FILE_MEMFD ?
	       "memfd" : kind == CKPT_FILE_SHMEM ? "shmem" :
	       kind == CKPT_FILE_LOCAL ? "tmpfs" : "deleted";
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
	"in_syscall",
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

/*
 * Strings from the image, escaped so that one line stays one line and
 * nothing reaches the terminal but text: UTF-8 is kept, other bytes are
 * written \xHH.
 */
static void prot_string(char buf[5], const struct ckpt_img_vma *v)
{
	buf[0] = v->prot & 1 ? 'r' : '-';
	buf[1] = v->prot & 2 ? 'w' : '-';
	buf[2] = v->prot & 4 ? 'x' : '-';
	buf[3] = v->flags & CKPT_VMA_SHARED ? 's' : 'p';
	buf[4] = '\0';
}

/* The names of the bits set in flags, comma-separated; "-" for none. */
static void flags_text(FILE *f, __u32 flags, const char *const *names,
		       size_t nr, __u32 skip)
{
	const char *sep = "";
	size_t i;

	for (i = 0; i < nr; i++) {
		if ((flags & ~skip) & (1U << i)) {
			fprintf(f, "%s%s", sep, names[i]);
			sep = ",";
		}
	}
	if (!*sep)
		fputc('-', f);
}

static void flags_json(FILE *f, __u32 flags, const char *const *names,
		       size_t nr)
{
	const char *sep = "";
	size_t i;

	fputc('[', f);
	for (i = 0; i < nr; i++) {
		if (flags & (1U << i)) {
			fprintf(f, "%s\"%s\"", sep, names[i]);
			sep = ",";
		}
	}
	fputc(']', f);
}

static void created_string(char *buf, size_t size, __u64 ns)
{
	time_t t = ns / 1000000000;
	struct tm tm;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ULL(x) ((unsigned long long)(x))

static void rlimit_text(FILE *f, __u64 v)
{
	if (v == ~0ULL)
		fprintf(f, "unlimited");
	else
		fprintf(f, "%llu", ULL(v));
}

static void text_process(FILE *f, const struct ckpt_image *img, bool verbose)
{
	const struct ckpt_img_process *p = &img->proc;
	unsigned int i;

	fprintf(f, "process: pid %u, ppid %u, comm \"", p->pid, p->ppid);
	text_string(f, p->comm);
	fprintf(f, "\"\nexe: ");
	text_string(f, p->exe);
	fputc('\n', f);
	if (!verbose)
		return;
	fprintf(f, "  exe dev 0x%llx ino %llu\n", ULL(p->exe_dev),
		ULL(p->exe_ino));
	fprintf(f, "  uid %u euid %u gid %u egid %u umask %03o personality 0x%x exit_signal %u\n",
		p->uid, p->euid, p->gid, p->egid, p->umask, p->personality,
		p->exit_signal);
	fprintf(f, "  code %llx-%llx data %llx-%llx brk %llx-%llx stack %llx\n",
		ULL(p->start_code), ULL(p->end_code), ULL(p->start_data),
		ULL(p->end_data), ULL(p->start_brk), ULL(p->brk),
		ULL(p->start_stack));
	fprintf(f, "  args %llx-%llx env %llx-%llx\n", ULL(p->arg_start),
		ULL(p->arg_end), ULL(p->env_start), ULL(p->env_end));
	fprintf(f, "  vvar %llx +%llu, vdso %llx +%llu, vdso checksum %08x\n",
		ULL(p->vvar), ULL(p->vvar_size), ULL(p->vdso),
		ULL(p->vdso_size), p->vdso_csum);
	if (img->has_vdso) {
		fprintf(f, "  vdso entry points:");
		for (i = 0; i < img->vdso.nr_syms; i++)
			fprintf(f, " %s+0x%llx", img->vdso.syms[i].name,
				ULL(img->vdso.syms[i].offset));
		fputc('\n', f);
	}
	fprintf(f, "  auxv");
	for (i = 0; i + 1 < CKPT_IMG_AUXV_WORDS && p->auxv[i]; i += 2)
		fprintf(f, " %llu=0x%llx", ULL(p->auxv[i]),
			ULL(p->auxv[i + 1]));
	fputc('\n', f);
	for (i = 0; i < CKPT_IMG_NSIG; i++) {
		const struct ckpt_img_sigaction *sa = &p->sigaction[i];

		if (!sa->handler && !sa->flags && !sa->mask)
			continue;
		fprintf(f, "  signal %u: handler 0x%llx flags 0x%llx restorer 0x%llx mask 0x%llx\n",
			i + 1, ULL(sa->handler), ULL(sa->flags),
			ULL(sa->restorer), ULL(sa->mask));
	}
	for (i = 0; i < CKPT_IMG_NRLIMITS; i++) {
		fprintf(f, "%s%s ", i % 4 ? " " : i ? "\n  rlimits " :
			"  rlimits ", rlimit_names[i]);
		rlimit_text(f, p->rlimit[i].cur);
		fputc('/', f);
		rlimit_text(f, p->rlimit[i].max);
	}
	fputc('\n', f);
}

static void text_creds(FILE *f, const struct ckpt_image *img)
{
	const struct ckpt_img_creds *c = &img->creds;
	__u32 i;

	if (!img->has_creds)
		return;
	fprintf(f, "credentials: uid %u euid %u suid %u fsuid %u, gid %u egid %u sgid %u fsgid %u\n",
		c->uid, c->euid, c->suid, c->fsuid, c->gid, c->egid, c->sgid,
		c->fsgid);
	fprintf(f, "groups:%s", c->nr_groups ? "" : " none");
	for (i = 0; i < c->nr_groups; i++)
		fprintf(f, " %u", img->groups[i]);
	fprintf(f, "\ncapabilities: effective 0x%llx permitted 0x%llx inheritable 0x%llx bounding 0x%llx ambient 0x%llx, dumpable %u%s\n",
		ULL(c->cap_effective), ULL(c->cap_permitted),
		ULL(c->cap_inheritable), ULL(c->cap_bset),
		ULL(c->cap_ambient), c->dumpable,
		c->flags & CKPT_CREDS_NO_NEW_PRIVS ? ", no_new_privs" : "");
}

/* A tree member's place (CKPT_IOC_CHECKPOINT_TREE); nothing for others. */
static void text_tree(FILE *f, const struct ckpt_image *img)
{
	const struct ckpt_img_tree *t = &img->tree;
	unsigned int i;

	if (!img->has_tree)
		return;
	fprintf(f, "tree: member %u of %u, ", t->index, t->nr_members);
	if (t->parent == CKPT_TREE_NO_PARENT)
		fprintf(f, "the root");
	else
		fprintf(f, "parent member %u", t->parent);
	fprintf(f, ", pgid %u sid %u, id ", t->pgid, t->sid);
	for (i = 0; i < sizeof(t->id); i++)
		fprintf(f, "%02x", t->id[i]);
	if (t->flags & CKPT_TREE_SUBREAPER)
		fprintf(f, ", child subreaper");
	if (t->flags & CKPT_TREE_FOREGROUND)
		fprintf(f, ", terminal foreground");
	fputc('\n', f);
}

/* Only the engine holding the key can check the MAC: shown, not checked. */
static void text_mac(FILE *f, const struct ckpt_image *img)
{
	unsigned int i;

	if (!img->has_mac) {
		fprintf(f, "authentication: none (restarts only with --unauthenticated, as the restarter)\n");
		return;
	}
	fprintf(f, "authentication: HMAC-SHA256, key id ");
	for (i = 0; i < CKPT_MAC_KEY_ID_LEN; i++)
		fprintf(f, "%02x", img->mac.key_id[i]);
	fputc('\n', f);
}

static void text_thread(FILE *f, const struct ckpt_img_thread *t,
			bool verbose)
{
	unsigned int i;

	fprintf(f, "  tid %u \"", t->tid);
	text_string(f, t->comm);
	fprintf(f, "\" ip 0x%llx sp 0x%llx", ULL(t->gregs[CKPT_GREG_RIP]),
		ULL(t->gregs[CKPT_GREG_RSP]));
	if (t->flags & CKPT_THREAD_IN_SYSCALL)
		fprintf(f, " in syscall");
	fputc('\n', f);
	if (!verbose)
		return;
	for (i = 0; i < CKPT_GREG_NR; i++)
		fprintf(f, "%s%s 0x%llx", i % 6 ? " " : i ? "\n    " : "    ",
			ckpt_greg_names[i], ULL(t->gregs[i]));
	fputc('\n', f);
	fprintf(f, "    blocked 0x%llx clear_child_tid 0x%llx robust_list 0x%llx+%llu\n",
		ULL(t->blocked), ULL(t->clear_child_tid), ULL(t->robust_list),
		ULL(t->robust_list_len));
	fprintf(f, "    rseq 0x%llx+%llu sig 0x%x sigaltstack 0x%llx+%llu flags 0x%x\n",
		ULL(t->rseq), ULL(t->rseq_len), t->rseq_sig,
		ULL(t->sas_ss_sp), ULL(t->sas_ss_size), t->sas_ss_flags);
}

static void text_vma(FILE *f, const struct ckpt_img_vma *v, __u64 pages,
		     bool verbose)
{
	char prot[5];

	prot_string(prot, v);
	fprintf(f, "  %012llx-%012llx %s %6llu %s ", ULL(v->start), ULL(v->end),
		prot, ULL(pages), pages == 1 ? "page " : "pages");
	flags_text(f, v->flags, vma_flag_names, ARRAY_SIZE(vma_flag_names),
		   CKPT_VMA_SHARED);
	if (v->path[0]) {
		fputc(' ', f);
		text_string(f, v->path);
	}
	fputc('\n', f);
	if (verbose && (v->flags & CKPT_VMA_FILE))
		fprintf(f, "    pgoff 0x%llx dev 0x%llx ino %llu size %llu\n",
			ULL(v->pgoff), ULL(v->dev), ULL(v->ino), ULL(v->size));
}

static void text_sections(FILE *f, const struct inspect *in)
{
	size_t i;

	fprintf(f, "sections:%s\n", in->sects_lost ? " (out of memory)" : "");
	for (i = 0; i < in->nr_sects; i++)
		fprintf(f, "  %zu %-7s at %llu, %llu bytes\n", i,
			ckpt_img_sect_name(in->sects[i].type),
			ULL(in->sects[i].offset), ULL(in->sects[i].len));
}

/*
 * One emitter for both outputs, in iproute2's print_* style: each call
 * prints one key and its value, as " key value" or as a JSON member.
 */
struct emit {
	FILE *f;
	bool json, first;
};

static void emit_key(struct emit *e, const char *key)
{
	if (e->json)
		fprintf(e->f, "%s\"%s\":", e->first ? "" : ",", key);
	else
		fprintf(e->f, " %s ", key);
	e->first = false;
}

static void emit_u64(struct emit *e, const char *key, unsigned long long v)
{
	emit_key(e, key);
	fprintf(e->f, "%llu", v);
}

/* Shown as hex (octal for a mode): a string in JSON. */
static void emit_fmt(struct emit *e, const char *key, const char *fmt,
		     unsigned int v)
{
	emit_key(e, key);
	if (e->json)
		fputc('"', e->f);
	fprintf(e->f, fmt, v);
	if (e->json)
		fputc('"', e->f);
}

static void emit_flag(struct emit *e, const char *key, bool on)
{
	if (e->json) {
		emit_key(e, key);
		fprintf(e->f, on ? "true" : "false");
	} else if (on) {
		fprintf(e->f, " %s", key);
	}
}

static void emit_sysv_one(struct emit *e, const char *kind,
			  const struct ckpt_img_ipcperm *p)
{
	e->first = true;
	if (e->json) {
		fputc('{', e->f);
		emit_key(e, "kind");
		fprintf(e->f, "\"%s\"", kind);
	} else {
		fprintf(e->f, "  %s", kind);
	}
	emit_u64(e, "id", p->id);
	emit_fmt(e, "key", "0x%08x", p->key);
	emit_u64(e, "uid", p->uid);
	emit_u64(e, "gid", p->gid);
	emit_u64(e, "cuid", p->cuid);
	emit_u64(e, "cgid", p->cgid);
	emit_fmt(e, "mode", "%04o", p->mode);
}

/* A tree root's System V objects: ",\"sysv\":[...]", or a list of lines. */
static void emit_sysv(FILE *f, const struct ckpt_image *img, bool json)
{
	struct emit e = { .f = f, .json = json };
	const char *sep = "";
	__u32 i;

	if (json)
		fprintf(f, ",\"sysv\":[");
	else if (img->nr_shms + img->nr_sems + img->nr_msgs)
		fprintf(f, "System V objects: %u\n",
			img->nr_shms + img->nr_sems + img->nr_msgs);
	for (i = 0; i < img->nr_shms; i++, sep = ",") {
		const struct ckpt_img_sysvshm *m = img->shms[i];

		fprintf(f, "%s", json ? sep : "");
		emit_sysv_one(&e, "shm", &m->perm);
		emit_u64(&e, "size", m->size);
		emit_u64(&e, "stored", m->stored);
		emit_flag(&e, "removed", m->perm.flags & CKPT_IPC_DEST);
		emit_flag(&e, "locked", m->perm.flags & CKPT_IPC_LOCKED);
		fprintf(f, json ? "}" : "\n");
	}
	for (i = 0; i < img->nr_sems; i++, sep = ",") {
		fprintf(f, "%s", json ? sep : "");
		emit_sysv_one(&e, "sem", &img->sems[i]->perm);
		emit_u64(&e, "nsems", img->sems[i]->nsems);
		fprintf(f, json ? "}" : "\n");
	}
	for (i = 0; i < img->nr_msgs; i++, sep = ",") {
		fprintf(f, "%s", json ? sep : "");
		emit_sysv_one(&e, "msg", &img->msgs[i]->perm);
		emit_u64(&e, "qbytes", img->msgs[i]->qbytes);
		emit_u64(&e, "messages", img->msgs[i]->nr);
		fprintf(f, json ? "}" : "\n");
	}
	if (json)
		fprintf(f, "]");
}

/* A tree member's zombie children: ",\"zombies\":[...]", or lines. */
static void emit_zombies(FILE *f, const struct ckpt_image *img, bool json)
{
	struct emit e = { .f = f, .json = json };
	__u32 i;

	if (json)
		fprintf(f, ",\"zombies\":[");
	else if (img->nr_zombies)
		fprintf(f, "zombie children: %u\n", img->nr_zombies);
	for (i = 0; i < img->nr_zombies; i++) {
		const struct ckpt_img_zombie *z = &img->zombies[i];
		__u32 sig = z->status & 0x7f;

		e.first = true;
		fprintf(f, json ? "%s{" : "%s ", json && i ? "," : "");
		emit_u64(&e, "pid", z->pid);
		if (sig)
			emit_u64(&e, "signal", sig);
		else
			emit_u64(&e, "exit", (z->status >> 8) & 0xff);
		emit_flag(&e, "core", z->status & 0x80);
		emit_u64(&e, "exit_signal", z->exit_signal);
		emit_u64(&e, "pgid", z->pgid);
		emit_u64(&e, "sid", z->sid);
		fprintf(f, json ? "}" : "\n");
	}
	if (json)
		fprintf(f, "]");
}

static const char *const tcp_states[__CKPT_TCP_STATE_MAX] = {
	[CKPT_TCP_CLOSED] = "closed", [CKPT_TCP_ESTABLISHED] = "established",
	[CKPT_TCP_LISTEN] = "listening",
};

/* The TCP sockets: ",\"tcp\":[...]", or a TCP line each. */
static void emit_tcp(FILE *f, const struct ckpt_image *img, bool json)
{
	struct emit e = { .f = f, .json = json };
	char buf[80];
	__u32 i;

	if (json)
		fprintf(f, ",\"tcp\":[");
	else if (img->nr_tcps)
		fprintf(f, "TCP sockets: %u\n", img->nr_tcps);
	for (i = 0; i < img->nr_tcps; i++) {
		const struct ckpt_img_tcp *t = img->tcps[i];
		bool conn = t->state == CKPT_TCP_ESTABLISHED;

		e.first = true;
		fprintf(f, json ? "%s{" : "%s", json && i ? "," : "");
		emit_u64(&e, "socket", t->ino);
		emit_key(&e, "state");
		fprintf(f, json ? "\"%s\"" : "%s", tcp_states[t->state]);
		ckpt_image_tcp_end(buf, sizeof(buf), t, false);
		emit_key(&e, "local");
		fprintf(f, json ? "\"%s\"" : "%s", buf);
		if (conn) {
			ckpt_image_tcp_end(buf, sizeof(buf), t, true);
			emit_key(&e, "peer");
			fprintf(f, json ? "\"%s\"" : "%s", buf);
			emit_u64(&e, "sendq", t->write_seq - t->snd_una);
			emit_u64(&e, "unsent", t->write_seq - t->snd_nxt);
			emit_u64(&e, "recvq", t->rcv_nxt - t->copied_seq);
			emit_flag(&e, "shut-wr", t->flags & CKPT_TCP_FIN_OUT);
			emit_flag(&e, "peer-shut-wr", t->flags & CKPT_TCP_FIN_IN);
		}
		if (t->state == CKPT_TCP_LISTEN)
			emit_u64(&e, "backlog", t->backlog);
		emit_flag(&e, "nodelay", t->flags & CKPT_TCP_NODELAY);
		emit_flag(&e, "keepalive", t->flags & CKPT_TCP_KEEPALIVE);
		emit_flag(&e, "v6only", t->flags & CKPT_TCP_V6ONLY);
		fprintf(f, json ? "}" : "\n");
	}
	if (json)
		fprintf(f, "]");
}

/* The pseudo-terminals: ",\"ptys\":[...]", or a line each. */
static void emit_ptys(FILE *f, const struct ckpt_image *img, bool json)
{
	struct emit e = { .f = f, .json = json };
	__u32 i;

	if (json)
		fprintf(f, ",\"ptys\":[");
	else if (img->nr_ptys)
		fprintf(f, "pseudo-terminals: %u\n", img->nr_ptys);
	for (i = 0; i < img->nr_ptys; i++) {
		const struct ckpt_img_pty *p = &img->ptys[i];

		e.first = true;
		fprintf(f, json ? "%s{" : "%s ", json && i ? "," : "");
		emit_u64(&e, "pts", p->index);
		emit_u64(&e, "rows", p->rows);
		emit_u64(&e, "cols", p->cols);
		emit_flag(&e, "canonical", p->lflag & 0000002);	/* ICANON */
		emit_flag(&e, "echo", p->lflag & 0000010);	/* ECHO */
		emit_flag(&e, "packet", p->flags & CKPT_PTY_PACKET);
		emit_flag(&e, "locked", p->flags & CKPT_PTY_LOCKED);
		fprintf(f, json ? "}" : "\n");
	}
	if (json)
		fprintf(f, "]");
}

static void text_report(FILE *f, const char *name,
			const struct ckpt_image *img, const struct inspect *in)
{
	bool verbose = in->opts & INSPECT_VERBOSE;
	const struct ckpt_img_header *h = &img->hdr;
	__u64 page_bytes = img->nr_pages * CKPT_IMG_PAGE_SIZE;
	char created[64];
	__u32 i;

	fprintf(f, "image: ");
	text_string(f, name);
	fprintf(f, "\nformat: version %u, x86_64, %u-byte pages\nkernel: ",
		h->version, h->page_size);
	text_string(f, h->kernel);
	if (verbose) {
		fprintf(f, " (boot ");
		text_string(f, h->boot_id[0] ? h->boot_id : "unknown");
		fputc(')', f);
	}
	created_string(created, sizeof(created), h->created_ns);
	fprintf(f, "\ncreated: %s\n", created);
	text_process(f, img, verbose);
	text_tree(f, img);
	text_creds(f, img);
	text_mac(f, img);
	fprintf(f, "xstate: %u bytes per thread, xfeatures 0x%llx\n",
		h->xstate_size, ULL(h->xfeatures));
	fprintf(f, "threads: %u\n", img->nr_threads);
	for (i = 0; i < img->nr_threads; i++)
		text_thread(f, &img->threads[i], verbose);
	if (img->nr_files) {
		fprintf(f, "files: %u\n", img->nr_files);
		for (i = 0; i < img->nr_files; i++) {
			const struct ckpt_img_file *fl = &img->files[i];

			if (fl->kind == CKPT_FILE_SHARED)
				fprintf(f, "  fd %u shares fd %llu flags 0%o%s ",
					fl->fd, ULL(fl->ino), fl->open_flags,
					fl->flags & CKPT_FILE_CLOEXEC ? " cloexec" : "");
			else
				fprintf(f, "  fd %u at %llu flags 0%o%s%s%s ",
					fl->fd, ULL(fl->pos), fl->open_flags,
					fl->flags & CKPT_FILE_CLOEXEC ? " cloexec" : "",
					fl->flags & CKPT_FILE_REGISTERED ?
					" registered" : "",
					fl->flags & CKPT_FILE_TREE_SHARED ?
					" tree-shared" : "");
			text_string(f, fl->path);
			fputc('\n', f);
		}
	}
	if (img->nr_fileobjs) {
		fprintf(f, "file objects: %u\n", img->nr_fileobjs);
		for (i = 0; i < img->nr_fileobjs; i++) {
			const struct ckpt_img_fileobj *o = &img->fileobjs[i];

			fprintf(f, "  %u %s size %llu stored %llu mode %04o", i,
				fileobj_kind(o->kind), ULL(o->size), ULL(o->stored),
				o->mode);
			if (o->kind == CKPT_FILE_MEMFD)
				fprintf(f, " seals 0x%x", o->seals);
			if (o->kind == CKPT_FILE_FIFO)
				fprintf(f, " capacity %u", o->capacity);
			fputc(' ', f);
			text_string(f, o->name);
			fputc('\n', f);
		}
	}
	emit_sysv(f, img, false);
	emit_zombies(f, img, false);
	emit_tcp(f, img, false);
	emit_ptys(f, img, false);
	fprintf(f, "pending signals: %u\n", img->signals.nr);
	for (i = 0; verbose && i < img->signals.nr; i++) {
		const struct ckpt_img_siginfo *q = &img->sigqueue[i];
		int32_t code, pid;

		memcpy(&code, q->info + 8, sizeof(code));
		memcpy(&pid, q->info + 16, sizeof(pid));
		fprintf(f, "  signal %u for %s %u, code %d, sender %d\n",
			q->signo, q->tid ? "thread" : "process", q->tid, code, pid);
	}
	fprintf(f, "itimers: real %llu ns/%llu ns, virtual %llu ns/%llu ns, prof %llu ns/%llu ns\n",
		ULL(img->signals.real_value_ns),
		ULL(img->signals.real_interval_ns),
		ULL(img->signals.virt_value_ns),
		ULL(img->signals.virt_interval_ns),
		ULL(img->signals.prof_value_ns),
		ULL(img->signals.prof_interval_ns));
	if (img->timers.nr || img->timers.next_id)
		fprintf(f, "POSIX timers: %u, next id %u\n", img->timers.nr,
			img->timers.next_id);
	for (i = 0; i < img->timers.nr; i++) {
		const struct ckpt_img_timer *t = &img->timer_list[i];
		__u32 owner;
		const char *clock = timer_clock(t->clockid, &owner);

		fprintf(f, "  timer %u: %s", t->id, clock);
		if (owner)
			fprintf(f, " of %u", owner);
		if (t->notify == 1)
			fprintf(f, ", no signal");
		else
			fprintf(f, ", signal %d", t->signo);
		if (t->notify == 2)
			fprintf(f, " (SIGEV_THREAD)");
		if (t->notify == 4)
			fprintf(f, " to thread %u", t->tid);
		fprintf(f, ", value 0x%llx, %s %llu ns, interval %llu ns, overrun %u, last %u%s\n",
			ULL(t->sival),
			t->flags & CKPT_TIMER_ABSTIME ? "deadline" : "left",
			ULL(t->value_ns), ULL(t->interval_ns), t->overrun,
			t->overrun_last,
			t->flags & CKPT_TIMER_PENDING ? ", signal pending" : "");
	}
	if (img->has_fs) {
		fprintf(f, "cwd: ");
		text_string(f, img->fs.cwd);
		fputc('\n', f);
		if (verbose)
			fprintf(f, "  dev 0x%llx ino %llu\n",
				ULL(img->fs.cwd_dev), ULL(img->fs.cwd_ino));
		fprintf(f, "root: ");
		text_string(f, img->fs.root);
		fputc('\n', f);
		if (verbose)
			fprintf(f, "  dev 0x%llx ino %llu\n",
				ULL(img->fs.root_dev), ULL(img->fs.root_ino));
	}
	fprintf(f, "mappings: %u\n", img->nr_vmas);
	for (i = 0; i < img->nr_vmas; i++)
		text_vma(f, &img->vmas[i], img->vma_pages[i], verbose);
	fprintf(f, "pages: %llu in %llu PAGES sections, %llu bytes\n",
		ULL(img->nr_pages), ULL(img->nr_pages_sects), ULL(page_bytes));
	fprintf(f, "size: %llu bytes in %llu sections, %llu of them page data\n",
		ULL(img->size), ULL(img->nr_sections), ULL(page_bytes));
	if (verbose) {
		fprintf(f, "  by section type:");
		for (i = CKPT_SECT_HEADER; i <= CKPT_SECT_MAX; i++)
			fprintf(f, " %s %llu", ckpt_img_sect_name(i),
				ULL(img->type_bytes[i]));
		fputc('\n', f);
		text_sections(f, in);
	}
	fprintf(f, "checksums: ok\nvalid\n");
}

/* null for RLIM_INFINITY */
static void rlimit_json(FILE *f, __u64 v)
{
	if (v == ~0ULL)
		fprintf(f, "null");
	else
		fprintf(f, "%llu", ULL(v));
}

static void json_process(FILE *f, const struct ckpt_image *img)
{
	const struct ckpt_img_process *p = &img->proc;
	unsigned int i;

	fprintf(f, "\"process\":{\"pid\":%u,\"ppid\":%u,\"comm\":",
		p->pid, p->ppid);
	json_print_str(f, p->comm);
	fprintf(f, ",\"exe\":");
	json_print_str(f, p->exe);
	fprintf(f, ",\"exe_dev\":%llu,\"exe_ino\":%llu", ULL(p->exe_dev),
		ULL(p->exe_ino));
	fprintf(f, ",\"uid\":%u,\"euid\":%u,\"gid\":%u,\"egid\":%u,\"umask\":%u,\"personality\":%u,\"exit_signal\":%u",
		p->uid, p->euid, p->gid, p->egid, p->umask, p->personality,
		p->exit_signal);
	fprintf(f, ",\"start_code\":\"0x%llx\",\"end_code\":\"0x%llx\",\"start_data\":\"0x%llx\",\"end_data\":\"0x%llx\"",
		ULL(p->start_code), ULL(p->end_code), ULL(p->start_data),
		ULL(p->end_data));
	fprintf(f, ",\"start_brk\":\"0x%llx\",\"brk\":\"0x%llx\",\"start_stack\":\"0x%llx\"",
		ULL(p->start_brk), ULL(p->brk), ULL(p->start_stack));
	fprintf(f, ",\"arg_start\":\"0x%llx\",\"arg_end\":\"0x%llx\",\"env_start\":\"0x%llx\",\"env_end\":\"0x%llx\"",
		ULL(p->arg_start), ULL(p->arg_end), ULL(p->env_start),
		ULL(p->env_end));
	fprintf(f, ",\"vdso\":\"0x%llx\",\"vdso_size\":%llu,\"vvar\":\"0x%llx\",\"vvar_size\":%llu,\"vdso_csum\":%u",
		ULL(p->vdso), ULL(p->vdso_size), ULL(p->vvar),
		ULL(p->vvar_size), p->vdso_csum);
	if (img->has_vdso) {
		fprintf(f, ",\"vdso_entries\":{");
		for (i = 0; i < img->vdso.nr_syms; i++) {
			fprintf(f, "%s", i ? "," : "");
			json_print_str(f, img->vdso.syms[i].name);
			fprintf(f, ":%llu", ULL(img->vdso.syms[i].offset));
		}
		fputc('}', f);
	}
	fprintf(f, ",\"rlimits\":{");
	for (i = 0; i < CKPT_IMG_NRLIMITS; i++) {
		fprintf(f, "%s\"%s\":[", i ? "," : "", rlimit_names[i]);
		rlimit_json(f, p->rlimit[i].cur);
		fputc(',', f);
		rlimit_json(f, p->rlimit[i].max);
		fputc(']', f);
	}
	fprintf(f, "}}");
}

static void json_creds(FILE *f, const struct ckpt_image *img)
{
	const struct ckpt_img_creds *c = &img->creds;
	__u32 i;

	if (!img->has_creds)
		return;
	fprintf(f, ",\"creds\":{\"uid\":%u,\"euid\":%u,\"suid\":%u,\"fsuid\":%u,\"gid\":%u,\"egid\":%u,\"sgid\":%u,\"fsgid\":%u,\"groups\":[",
		c->uid, c->euid, c->suid, c->fsuid, c->gid, c->egid, c->sgid,
		c->fsgid);
	for (i = 0; i < c->nr_groups; i++)
		fprintf(f, "%s%u", i ? "," : "", img->groups[i]);
	fprintf(f, "],\"cap_effective\":\"0x%llx\",\"cap_permitted\":\"0x%llx\",\"cap_inheritable\":\"0x%llx\",\"cap_bset\":\"0x%llx\",\"cap_ambient\":\"0x%llx\",\"dumpable\":%u,\"no_new_privs\":%s}",
		ULL(c->cap_effective), ULL(c->cap_permitted),
		ULL(c->cap_inheritable), ULL(c->cap_bset),
		ULL(c->cap_ambient), c->dumpable,
		c->flags & CKPT_CREDS_NO_NEW_PRIVS ? "true" : "false");
}

static void json_tree(FILE *f, const struct ckpt_image *img)
{
	const struct ckpt_img_tree *t = &img->tree;
	unsigned int i;

	if (!img->has_tree)
		return;
	fprintf(f, ",\"tree\":{\"index\":%u,\"nr_members\":%u,\"parent\":", t->index,
		t->nr_members);
	if (t->parent == CKPT_TREE_NO_PARENT)
		fprintf(f, "null");
	else
		fprintf(f, "%u", t->parent);
	fprintf(f, ",\"pgid\":%u,\"sid\":%u,\"subreaper\":%s,\"foreground\":%s,\"id\":\"",
		t->pgid, t->sid, t->flags & CKPT_TREE_SUBREAPER ? "true" : "false",
		t->flags & CKPT_TREE_FOREGROUND ? "true" : "false");
	for (i = 0; i < sizeof(t->id); i++)
		fprintf(f, "%02x", t->id[i]);
	fprintf(f, "\"}");
}

static void json_mac(FILE *f, const struct ckpt_image *img)
{
	unsigned int i;

	if (!img->has_mac) {
		fprintf(f, ",\"mac\":null");
		return;
	}
	fprintf(f, ",\"mac\":{\"alg\":\"hmac-sha256\",\"key_id\":\"");
	for (i = 0; i < CKPT_MAC_KEY_ID_LEN; i++)
		fprintf(f, "%02x", img->mac.key_id[i]);
	fprintf(f, "\"}");
}

static void json_thread(FILE *f, const struct ckpt_img_thread *t)
{
	unsigned int i;

	fprintf(f, "{\"tid\":%u,\"comm\":", t->tid);
	json_print_str(f, t->comm);
	fprintf(f, ",\"flags\":");
	flags_json(f, t->flags, thread_flag_names,
		   ARRAY_SIZE(thread_flag_names));
	fprintf(f, ",\"ip\":\"0x%llx\",\"sp\":\"0x%llx\",\"regs\":{",
		ULL(t->gregs[CKPT_GREG_RIP]), ULL(t->gregs[CKPT_GREG_RSP]));
	for (i = 0; i < CKPT_GREG_NR; i++)
		fprintf(f, "%s\"%s\":\"0x%llx\"", i ? "," : "",
			ckpt_greg_names[i], ULL(t->gregs[i]));
	fprintf(f, "},\"blocked\":\"0x%llx\"}", ULL(t->blocked));
}

static void json_vma(FILE *f, const struct ckpt_img_vma *v, __u64 pages)
{
	char prot[5];

	prot_string(prot, v);
	prot[3] = '\0';
	fprintf(f, "{\"start\":\"0x%llx\",\"end\":\"0x%llx\",\"prot\":\"%s\",\"flags\":",
		ULL(v->start), ULL(v->end), prot);
	flags_json(f, v->flags, vma_flag_names, ARRAY_SIZE(vma_flag_names));
	fprintf(f, ",\"path\":");
	json_print_str(f, v->path);
	fprintf(f, ",\"pgoff\":%llu,\"dev\":%llu,\"ino\":%llu,\"size\":%llu,\"pages\":%llu}",
		ULL(v->pgoff), ULL(v->dev), ULL(v->ino), ULL(v->size),
		ULL(pages));
}

static void json_report(FILE *f, const char *name,
			const struct ckpt_image *img, const struct inspect *in)
{
	const struct ckpt_img_header *h = &img->hdr;
	char created[64];
	size_t i;

	fprintf(f, "{\"image\":");
	json_print_str(f, name);
	fprintf(f, ",\"valid\":true,\"version\":%u,\"arch\":\"x86_64\",\"page_size\":%u,\"kernel\":",
		h->version, h->page_size);
	json_print_str(f, h->kernel);
	fprintf(f, ",\"boot_id\":");
	json_print_str(f, h->boot_id);
	created_string(created, sizeof(created), h->created_ns);
	fprintf(f, ",\"created\":\"%s\",\"created_ns\":%llu,\"xstate_size\":%u,\"xfeatures\":\"0x%llx\",",
		created, ULL(h->created_ns), h->xstate_size,
		ULL(h->xfeatures));
	json_process(f, img);
	json_tree(f, img);
	json_creds(f, img);
	json_mac(f, img);
	if (img->has_fs) {
		fprintf(f, ",\"cwd\":");
		json_print_str(f, img->fs.cwd);
		fprintf(f, ",\"cwd_dev\":%llu,\"cwd_ino\":%llu,\"root\":",
			ULL(img->fs.cwd_dev), ULL(img->fs.cwd_ino));
		json_print_str(f, img->fs.root);
		fprintf(f, ",\"root_dev\":%llu,\"root_ino\":%llu",
			ULL(img->fs.root_dev), ULL(img->fs.root_ino));
	}
	fprintf(f, ",\"fileobjs\":[");
	for (i = 0; i < img->nr_fileobjs; i++) {
		const struct ckpt_img_fileobj *o = &img->fileobjs[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "",
			fileobj_kind(o->kind));
		json_print_str(f, o->name);
		fprintf(f, ",\"size\":%llu,\"stored\":%llu,\"mode\":%u,\"seals\":%u,\"capacity\":%u,\"dev\":%llu,\"ino\":%llu}",
			ULL(o->size), ULL(o->stored), o->mode, o->seals,
			o->capacity, ULL(o->dev), ULL(o->ino));
	}
	fprintf(f, "]");
	emit_sysv(f, img, true);
	emit_zombies(f, img, true);
	emit_tcp(f, img, true);
	emit_ptys(f, img, true);
	fprintf(f, ",\"signals\":{\"pending\":%u,\"itimer_real_ns\":%llu,\"itimer_real_interval_ns\":%llu",
		img->signals.nr, ULL(img->signals.real_value_ns),
		ULL(img->signals.real_interval_ns));
	fprintf(f, ",\"itimer_virtual_ns\":%llu,\"itimer_virtual_interval_ns\":%llu,\"itimer_prof_ns\":%llu,\"itimer_prof_interval_ns\":%llu}",
		ULL(img->signals.virt_value_ns),
		ULL(img->signals.virt_interval_ns),
		ULL(img->signals.prof_value_ns),
		ULL(img->signals.prof_interval_ns));
	fprintf(f, ",\"timers\":{\"next_id\":%u,\"list\":[", img->timers.next_id);
	for (i = 0; i < img->timers.nr; i++) {
		const struct ckpt_img_timer *t = &img->timer_list[i];
		__u32 owner;
		const char *clock = timer_clock(t->clockid, &owner);

		fprintf(f, "%s{\"id\":%u,\"clockid\":%d,\"clock\":\"%s\",\"owner\":%u,\"notify\":\"%s\",\"tid\":%u,\"signo\":%d,\"sival\":\"0x%llx\"",
			i ? "," : "", t->id, t->clockid, clock, owner,
			timer_notify(t->notify), t->tid, t->signo, ULL(t->sival));
		fprintf(f, ",\"value_ns\":%llu,\"interval_ns\":%llu,\"absolute\":%s,\"pending\":%s,\"overrun\":%u,\"overrun_last\":%u}",
			ULL(t->value_ns), ULL(t->interval_ns),
			t->flags & CKPT_TIMER_ABSTIME ? "true" : "false",
			t->flags & CKPT_TIMER_PENDING ? "true" : "false",
			t->overrun, t->overrun_last);
	}
	fprintf(f, "]}");
	fprintf(f, ",\"threads\":[");
	for (i = 0; i < img->nr_threads; i++) {
		if (i)
			fputc(',', f);
		json_thread(f, &img->threads[i]);
	}
	fprintf(f, "],\"vmas\":[");
	for (i = 0; i < img->nr_vmas; i++) {
		if (i)
			fputc(',', f);
		json_vma(f, &img->vmas[i], img->vma_pages[i]);
	}
	fprintf(f, "],\"pages\":{\"sections\":%llu,\"pages\":%llu,\"bytes\":%llu}",
		ULL(img->nr_pages_sects), ULL(img->nr_pages),
		ULL(img->nr_pages * CKPT_IMG_PAGE_SIZE));
	fprintf(f, ",\"size\":%llu,\"size_by_type\":{", ULL(img->size));
	for (i = CKPT_SECT_HEADER; i <= CKPT_SECT_MAX; i++)
		fprintf(f, "%s\"%s\":%llu", i > CKPT_SECT_HEADER ? "," : "",
			ckpt_img_sect_name(i), ULL(img->type_bytes[i]));
	fprintf(f, "},\"nr_sections\":%llu,\"checksums\":\"ok\"",
		ULL(img->nr_sections));
	if (in->opts & INSPECT_VERBOSE) {
		fprintf(f, ",\"sections\":[");
		for (i = 0; i < in->nr_sects; i++)
			fprintf(f, "%s{\"type\":\"%s\",\"offset\":%llu,\"len\":%llu}",
				i ? "," : "",
				ckpt_img_sect_name(in->sects[i].type),
				ULL(in->sects[i].offset),
				ULL(in->sects[i].len));
		fprintf(f, "]");
	}
	fprintf(f, "}\n");
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
	if (in->opts & INSPECT_JSON)
		json_report(out, name, img, in);
	else
		text_report(out, name, img, in);
	return 0;
}
