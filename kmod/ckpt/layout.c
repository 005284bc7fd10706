// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel-private structures the engine reads, checked against the
 * running kernel.
 *
 * A few features read structures no interface exports (a POSIX timer's
 * struct k_itimer, a queued struct sigqueue, the pipe ring, the vdso's
 * struct vdso_image, and on 6.1 a copy of fs/eventfd.c's struct
 * eventfd_ctx). Their layout is the one of the headers this module was
 * built against; a stable update of the kernel that moves a member under
 * an unchanged release name would have the engine read or write the wrong
 * memory. At load, each structure's size and each member's bit offset
 * (and size) as compiled here are compared with the running kernel's BTF
 * (/sys/kernel/btf/vmlinux), parsed here from its raw format. A feature
 * one of whose structures differs is turned off, with one notice in the
 * kernel log, and its points of use refuse by name. Without BTF
 * (CONFIG_DEBUG_INFO_BTF off) nothing can be checked: the features stay on
 * ("unchecked"), as they were before the check existed; see
 * Documentation/decisions.md.
 *
 * The state is a read-only module parameter, "layouts": one
 * "feature:ok|mismatch|unchecked" per feature. "layout_test_skew" (tests
 * only) names a structure whose expected layout is deliberately made
 * wrong by one byte, to show the check and the refusals work.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/moduleparam.h>
#include <linux/pipe_fs_i.h>
#include <linux/posix-timers.h>
#include <linux/sched/signal.h>
#include <linux/signal_types.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <asm/mmu.h>
#include <asm/vdso.h>
#include <uapi/linux/btf.h>

#include "ipc.h"
#include "layout.h"

#define BTF_PATH	"/sys/kernel/btf/vmlinux"
#define BTF_MAX		(64 << 20)	/* far above any vmlinux BTF */
#define NEST_MAX	8		/* anonymous members, typedef chains */
#define WHY_LEN		160

enum layout_state { UNCHECKED, OK, MISMATCH };

static const char *const feature_name[CKPT_LAYOUT_NR] = {
	[CKPT_LAYOUT_EVENTFD] = "eventfd",
	[CKPT_LAYOUT_TIMERS] = "timers",
	[CKPT_LAYOUT_SIGQUEUE] = "sigqueue",
	[CKPT_LAYOUT_PIPES] = "pipes",
	[CKPT_LAYOUT_VDSO] = "vdso",
	[CKPT_LAYOUT_SYSVIPC] = "sysvipc",
	[CKPT_LAYOUT_INOTIFY] = "inotify",
	[CKPT_LAYOUT_POLL] = "poll",
};

static enum layout_state state[CKPT_LAYOUT_NR];
static char why[CKPT_LAYOUT_NR][WHY_LEN];
static bool used[CKPT_LAYOUT_NR];	/* has an entry on this kernel line */

/*
 * One structure (member NULL: its size) or one of its members, as this
 * module was compiled. @name is the structure's name in BTF: a struct, or
 * a typedef of one. Members inside anonymous structs and unions are found
 * by their own name, as C names them.
 */
struct layout {
	enum ckpt_layout feature;
	const char *name;
	const char *member;
	u32 bits;	/* offset in bits, or the structure's size in bytes */
	u32 size;	/* the member's size in bytes, 0: not compared */
};

#define L_SIZE(f, type, btf) { f, btf, NULL, sizeof(type), 0 }
#define L_MEMBER(f, type, btf, m) \
	{ f, btf, #m, offsetof(type, m) * 8, sizeof_field(type, m) }

static const struct layout layouts[] = {
#ifdef CKPT_EVENTFD_CTX_COPY
	L_SIZE(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx"),
	L_MEMBER(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx", kref),
	L_MEMBER(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx", wqh),
	L_MEMBER(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx", count),
	L_MEMBER(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx", flags),
	L_MEMBER(CKPT_LAYOUT_EVENTFD, struct ckpt_eventfd_ctx_6_1, "eventfd_ctx", id),
#endif
	L_SIZE(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer"),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", list),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_lock),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_clock),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_id),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_active),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_overrun),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_overrun_last),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_requeue_pending),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_sigev_notify),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_interval),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_signal),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it_pid),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", sigq),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct k_itimer, "k_itimer", it),
	L_SIZE(CKPT_LAYOUT_TIMERS, struct cpu_timer, "cpu_timer"),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct cpu_timer, "cpu_timer", pid),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct signal_struct, "signal_struct", posix_timers),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct signal_struct, "signal_struct", next_posix_timer_id),
	/* A timer's own signal (t->sigq): read by the timers too. */
	L_SIZE(CKPT_LAYOUT_TIMERS, struct sigqueue, "sigqueue"),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct sigqueue, "sigqueue", list),
	L_MEMBER(CKPT_LAYOUT_TIMERS, struct sigqueue, "sigqueue", info),
	L_SIZE(CKPT_LAYOUT_SIGQUEUE, struct sigqueue, "sigqueue"),
	L_MEMBER(CKPT_LAYOUT_SIGQUEUE, struct sigqueue, "sigqueue", list),
	L_MEMBER(CKPT_LAYOUT_SIGQUEUE, struct sigqueue, "sigqueue", flags),
	L_MEMBER(CKPT_LAYOUT_SIGQUEUE, struct sigqueue, "sigqueue", info),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", head),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", tail),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", max_usage),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", ring_size),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", readers),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", writers),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_inode_info, "pipe_inode_info", bufs),
	L_SIZE(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer"),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer", page),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer", offset),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer", len),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer", ops),
	L_MEMBER(CKPT_LAYOUT_PIPES, struct pipe_buffer, "pipe_buffer", flags),
	L_MEMBER(CKPT_LAYOUT_PIPES, const struct pipe_buf_operations, "pipe_buf_operations", confirm),
	L_MEMBER(CKPT_LAYOUT_VDSO, struct vdso_image, "vdso_image", data),
	L_MEMBER(CKPT_LAYOUT_VDSO, struct vdso_image, "vdso_image", size),
	L_MEMBER(CKPT_LAYOUT_VDSO, struct vdso_image, "vdso_image", sym_vvar_start),
	L_MEMBER(CKPT_LAYOUT_VDSO, struct mm_struct, "mm_struct", context),
	L_MEMBER(CKPT_LAYOUT_VDSO, mm_context_t, "mm_context_t", vdso),
	L_MEMBER(CKPT_LAYOUT_VDSO, mm_context_t, "mm_context_t", vdso_image),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_perm),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_file),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_nattch),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_segsz),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_cprid),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_shmid_kernel, "shmid_kernel", shm_lprid),
	L_SIZE(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem, "sem"),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem, "sem", semval),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem, "sem", sempid),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_array, "sem_array", sem_perm),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_array, "sem_array", sem_nsems),
	/* A flexible array: its offset only. */
	{ CKPT_LAYOUT_SYSVIPC, "sem_array", "sems",
	  offsetof(struct ckpt_sem_array, sems) * 8, 0 },
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_perm),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_cbytes),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_qnum),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_qbytes),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_lspid),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_lrpid),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_queue, "msg_queue", q_messages),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_array, "sem_array", list_id),
	/* 6.1's semadj is a pointer, later ones' an array: the size tells. */
	L_SIZE(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_undo, "sem_undo"),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_undo, "sem_undo", ulp),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_sem_undo, "sem_undo", list_id),
	{ CKPT_LAYOUT_SYSVIPC, "sem_undo", "semadj",
	  offsetof(struct ckpt_sem_undo, semadj) * 8, 0 },
	L_SIZE(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_msgseg, "msg_msgseg"),
	L_MEMBER(CKPT_LAYOUT_SYSVIPC, struct ckpt_msg_msgseg, "msg_msgseg", next),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_group, "fsnotify_group", q_len),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_group, "fsnotify_group", mark_mutex),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_group, "fsnotify_group", marks_list),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_group, "fsnotify_group", inotify_data),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_mark, "fsnotify_mark", g_list),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_mark, "fsnotify_mark", connector),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_mark, "fsnotify_mark", flags),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_mark_connector, "fsnotify_mark_connector", type),
	L_MEMBER(CKPT_LAYOUT_INOTIFY, struct fsnotify_mark_connector, "fsnotify_mark_connector", obj),
	L_MEMBER(CKPT_LAYOUT_POLL, struct task_struct, "task_struct", restart_block),
	L_MEMBER(CKPT_LAYOUT_POLL, struct restart_block, "restart_block", fn),
	L_MEMBER(CKPT_LAYOUT_POLL, struct restart_block, "restart_block", poll),
};

/* Tests only: the BTF name of a structure to expect one byte off. */
static char *layout_test_skew;
module_param(layout_test_skew, charp, 0400);
MODULE_PARM_DESC(layout_test_skew,
		 "TESTS ONLY: expect this structure's layout one byte off, so that the features reading it are turned off");

static int layouts_get(char *buf, const struct kernel_param *kp)
{
	static const char *const names[] = {
		[UNCHECKED] = "unchecked", [OK] = "ok", [MISMATCH] = "mismatch",
	};
	int f, n = 0;

	for (f = 0; f < CKPT_LAYOUT_NR; f++)
		if (used[f])
			n += scnprintf(buf + n, PAGE_SIZE - n, "%s%s:%s",
				       n ? " " : "", feature_name[f],
				       names[state[f]]);
	n += scnprintf(buf + n, PAGE_SIZE - n, "\n");
	return n;
}

static const struct kernel_param_ops layouts_ops = {
	.get = layouts_get,
};
module_param_cb(layouts, &layouts_ops, NULL, 0444);
MODULE_PARM_DESC(layouts,
		 "Each feature reading kernel-private structures, and whether they match this kernel's BTF (read-only)");

bool ckpt_layout_ok(enum ckpt_layout f)
{
	return f < CKPT_LAYOUT_NR && READ_ONCE(state[f]) != MISMATCH;
}

const char *ckpt_layout_why(enum ckpt_layout f)
{
	return f < CKPT_LAYOUT_NR ? why[f] : "";
}

/* ------------------------------------------------------- raw BTF */

struct btf_file {
	const u8 *types;	/* the type section */
	u32 types_len;
	const char *strs;	/* the string section */
	u32 strs_len;
	u32 *off;		/* type id -> offset in types; id 0 is void */
	u32 nr;			/* ids 1 .. nr - 1 */
};

/* The string at @off, or NULL when it does not end inside the section. */
static const char *btf_str(const struct btf_file *b, u32 off)
{
	if (off >= b->strs_len || !memchr(b->strs + off, '\0', b->strs_len - off))
		return NULL;
	return b->strs + off;
}

static const struct btf_type *btf_type(const struct btf_file *b, u32 id)
{
	return id && id < b->nr ? (const void *)(b->types + b->off[id]) : NULL;
}

/* Bytes that follow a type of @kind with @vlen entries; -1: unknown kind. */
static long trailing(u32 kind, u32 vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
		return sizeof(u32);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/* Indexes every type of @data (a whole BTF file of @len bytes). */
static int btf_index(struct btf_file *b, const u8 *data, size_t len)
{
	const struct btf_header *h = (const void *)data;
	u32 pos, n;

	if (len < sizeof(*h) || h->magic != BTF_MAGIC || h->version != BTF_VERSION ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > len ||
	    h->type_off > len - h->hdr_len ||
	    h->type_len > len - h->hdr_len - h->type_off ||
	    h->str_off > len - h->hdr_len ||
	    h->str_len > len - h->hdr_len - h->str_off ||
	    h->type_off % 4)
		return -EINVAL;
	b->types = data + h->hdr_len + h->type_off;
	b->types_len = h->type_len;
	b->strs = (const char *)data + h->hdr_len + h->str_off;
	b->strs_len = h->str_len;

	/* Each type is at least a struct btf_type: this many at most. */
	b->off = kvmalloc_array(b->types_len / sizeof(struct btf_type) + 1,
				sizeof(u32), GFP_KERNEL);
	if (!b->off)
		return -ENOMEM;
	for (pos = 0, n = 1; pos < b->types_len; n++) {
		const struct btf_type *t = (const void *)(b->types + pos);
		long more;

		if (b->types_len - pos < sizeof(*t))
			return -EINVAL;
		more = trailing(BTF_INFO_KIND(t->info), BTF_INFO_VLEN(t->info));
		if (more < 0 || more > b->types_len - pos - sizeof(*t))
			return -EINVAL;
		b->off[n] = pos;
		pos += sizeof(*t) + more;
	}
	b->nr = n;
	return 0;
}

/* @id with typedefs and qualifiers taken off; 0 when that does not end. */
static u32 btf_resolve(const struct btf_file *b, u32 id)
{
	const struct btf_type *t;
	int i;

	for (i = 0; i < NEST_MAX * 4; i++) {
		t = btf_type(b, id);
		if (!t)
			return 0;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
	return 0;
}

static bool is_composite(const struct btf_type *t)
{
	u32 kind = t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;

	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION;
}

/* The size in bytes of type @id; 0 when it has none that BTF says. */
static u64 btf_size(const struct btf_file *b, u32 id, int depth)
{
	const struct btf_type *t = btf_type(b, btf_resolve(b, id));
	const struct btf_array *a;

	if (!t || depth > NEST_MAX)
		return 0;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
		return t->size;
	case BTF_KIND_PTR:
		return sizeof(void *);
	case BTF_KIND_ARRAY:
		a = (const void *)(t + 1);
		return (u64)a->nelems * btf_size(b, a->type, depth + 1);
	default:
		return 0;
	}
}

/* The struct or union named @name (or a typedef of one): its id, or 0. */
static u32 btf_find(const struct btf_file *b, const char *name)
{
	const struct btf_type *t;
	const char *s;
	u32 id, kind, r;

	for (id = 1; id < b->nr; id++) {
		t = btf_type(b, id);
		kind = BTF_INFO_KIND(t->info);
		if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION &&
		    kind != BTF_KIND_TYPEDEF)
			continue;
		s = btf_str(b, t->name_off);
		if (!s || strcmp(s, name))
			continue;
		r = btf_resolve(b, id);
		if (is_composite(btf_type(b, r)))
			return r;
	}
	return 0;
}

/*
 * Member @name of composite @id, looked for in anonymous members too: its
 * bit offset from the outermost structure (@base added) and its type.
 */
static bool btf_member(const struct btf_file *b, u32 id, const char *name,
		       u32 base, int depth, u32 *bits, u32 *type)
{
	const struct btf_type *t = btf_type(b, id);
	const struct btf_member *m;
	const char *s;
	u32 i, off;

	if (!is_composite(t) || depth > NEST_MAX)
		return false;
	m = (const void *)(t + 1);
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		off = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) :
						m->offset;
		s = btf_str(b, m->name_off);
		if (s && *s) {
			if (!strcmp(s, name)) {
				*bits = base + off;
				*type = m->type;
				return true;
			}
		} else if (btf_member(b, btf_resolve(b, m->type), name,
				      base + off, depth + 1, bits, type)) {
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------- checking */

/* "struct " before a structure's name, nothing before a typedef's. */
static const char *tag(const char *name)
{
	size_t n = strlen(name);

	return n > 2 && !strcmp(name + n - 2, "_t") ? "" : "struct ";
}

static __printf(2, 3) void mismatch(const struct layout *l, const char *fmt,
				     ...)
{
	char detail[96];
	va_list ap;

	if (state[l->feature] == MISMATCH)
		return;		/* the first difference names it */
	va_start(ap, fmt);
	vscnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	state[l->feature] = MISMATCH;
	scnprintf(why[l->feature], WHY_LEN,
		  "%s%s differs from this engine's build", tag(l->name), l->name);
	pr_notice("%s%s differs from this module's build (%s): %s disabled\n",
		  tag(l->name), l->name, detail, feature_name[l->feature]);
}

/* @l against @b; @id_cache holds the previous entry's structure id. */
static void check(const struct btf_file *b, const struct layout *l,
		  const struct layout *prev, u32 *id_cache)
{
	bool skew = layout_test_skew && !strcmp(layout_test_skew, l->name);
	u32 id, bits, type;
	u32 want = l->bits + (skew ? (l->member ? 8 : 1) : 0);
	u64 size;

	/* The table lists a structure's entries together: one lookup each. */
	if (!prev || strcmp(prev->name, l->name))
		*id_cache = btf_find(b, l->name);
	id = *id_cache;
	if (!id) {
		mismatch(l, "not in the kernel's BTF");
		return;
	}
	if (!l->member) {
		size = btf_type(b, id)->size;
		if (size != want)
			mismatch(l, "%llu bytes, expected %u", size, want);
		return;
	}
	if (!btf_member(b, id, l->member, 0, 0, &bits, &type)) {
		mismatch(l, "no member %s", l->member);
		return;
	}
	if (bits != want) {
		mismatch(l, "member %s at bit %u, expected %u", l->member, bits,
			 want);
		return;
	}
	size = btf_size(b, type, 0);
	if (l->size && size != l->size)
		mismatch(l, "member %s of %llu bytes, expected %u", l->member,
			 size, l->size);
}

/* The whole of @path in a kvmalloc'ed buffer; sysfs reports no size. */
static void *read_all(const char *path, size_t *len)
{
	struct file *f = filp_open(path, O_RDONLY, 0);
	size_t cap = 8 << 20, n = 0;
	loff_t pos = 0;
	ssize_t r;
	u8 *buf, *big;

	if (IS_ERR(f))
		return f;
	buf = kvmalloc(cap, GFP_KERNEL);
	while (buf) {
		if (n == cap) {
			if (cap >= BTF_MAX) {
				kvfree(buf);
				buf = ERR_PTR(-EFBIG);
				break;
			}
			big = kvmalloc(cap * 2, GFP_KERNEL);
			if (big)
				memcpy(big, buf, n);
			kvfree(buf);
			buf = big;
			cap *= 2;
			continue;
		}
		r = kernel_read(f, buf + n, cap - n, &pos);
		if (r <= 0) {
			if (r < 0) {
				kvfree(buf);
				buf = ERR_PTR(r);
			}
			break;
		}
		n += r;
	}
	fput(f);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	*len = n;
	return buf;
}

void ckpt_layout_init(void)
{
	struct btf_file b = { };
	size_t len = 0, i;
	bool all = true;
	void *data;
	int f, ret;
	u32 id = 0;

	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		used[layouts[i].feature] = true;
	data = read_all(BTF_PATH, &len);
	if (IS_ERR(data)) {
		pr_info("no kernel BTF (%s: %ld): kernel-private layouts unchecked\n",
			BTF_PATH, PTR_ERR(data));
		return;
	}
	ret = btf_index(&b, data, len);
	if (ret) {
		pr_info("cannot parse %s (%d): kernel-private layouts unchecked\n",
			BTF_PATH, ret);
		goto out;
	}
	for (f = 0; f < CKPT_LAYOUT_NR; f++)
		state[f] = OK;
	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		check(&b, &layouts[i], i ? &layouts[i - 1] : NULL, &id);
	for (f = 0; f < CKPT_LAYOUT_NR; f++)
		all &= state[f] == OK;
	if (all)
		pr_info("kernel-private layouts match this kernel's BTF\n");
out:
	kvfree(b.off);
	kvfree(data);
}
