// SPDX-License-Identifier: GPL-2.0
/*
 * The vdso across checkpoint and restart.
 *
 * The vdso and vvar pages are the kernel's, never stored as memory. glibc
 * looks up the vdso's entry points once, at start-up, and calls them
 * through pointers ever after, so a restarted process needs a vdso at the
 * old address with the old entry points. On the kernel build that made the
 * image, the restarter simply moves its own vdso there (cli/restart.c),
 * and the restart checks the text is the same.
 *
 * On another kernel (the other supported line, a newer build) the vdso's
 * text, size and entry points differ. The image carries the old text and
 * its entry points (the VDSO section, made here from the kernel's own copy
 * of its vdso, struct vdso_image). The restart leaves this kernel's vdso
 * where the restarter has it, out of the image's way, maps a private copy
 * of the old text at the old address (so the ELF headers that glibc's
 * dl_iterate_phdr() and unwinders read stay valid) and turns each old
 * entry point into a jump to the same-named entry of this kernel's vdso,
 * or, where this kernel's has none (__vdso_getrandom, new in 6.11, on 6.1),
 * into the system call it stands for. No thread may have been stopped
 * inside the old vdso's code (it would run the old code against this
 * kernel's vvar data), and every entry point needs room for its jump: both
 * are checked, and the new text made, before anything changes.
 * The copy is ordinary anonymous memory from then on, stored by the next
 * checkpoint like any other, so a process can go back and forth between
 * kernels; each move adds one jump.
 */

#include <linux/elf.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unistd.h>
#include <asm/vdso.h>

#include "layout.h"
#include "vdso.h"
#include "why.h"

#define GREG_IP		16	/* struct user_regs_struct's ip */
#define JMP_REL32	5	/* e9 rel32 */
#define JMP_ABS		14	/* ff 25 00000000, then the address */
#define STUB_LEN	8	/* put_stub(): a system call, or -ENOSYS */

void ckpt_vdso_ranges(struct mm_struct *mm, u64 *vdso, u64 *vdso_size,
		      u64 *vvar, u64 *vvar_size)
{
	const struct vdso_image *img;

	if (!ckpt_layout_ok(CKPT_LAYOUT_VDSO)) {
		*vdso = *vdso_size = *vvar = *vvar_size = 0;
		return;
	}
	img = mm->context.vdso_image;
	*vdso = (unsigned long)mm->context.vdso;
	*vdso_size = img ? img->size : 0;
	*vvar_size = img ? -img->sym_vvar_start : 0;
	*vvar = *vdso - *vvar_size;
}

static bool in_image(const struct vdso_image *img, u64 off, u64 len)
{
	return off <= img->size && len <= img->size - off;
}

/*
 * The exported functions of a vdso, from the kernel's own (trusted) copy:
 * the dynamic symbol table's defined global and weak functions, by name,
 * as offsets from the vdso's start. Names that repeat (versions) count once.
 */
static int vdso_symbols(const struct vdso_image *img, struct ckpt_img_vdso *v)
{
	const u8 *base = img->data;
	const Elf64_Ehdr *eh = img->data;
	const Elf64_Shdr *sh, *symtab = NULL, *strtab;
	const Elf64_Phdr *ph;
	const Elf64_Sym *sym;
	u64 load = U64_MAX, i, n;
	unsigned int j;

	memset(v, 0, sizeof(*v));
	if (!in_image(img, 0, sizeof(*eh)) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    !in_image(img, eh->e_phoff, (u64)eh->e_phnum * sizeof(*ph)) ||
	    !in_image(img, eh->e_shoff, (u64)eh->e_shnum * sizeof(*sh)))
		return -ENOEXEC;
	ph = (const void *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < load)
			load = ph[i].p_vaddr;
	sh = (const void *)(base + eh->e_shoff);
	for (i = 0; i < eh->e_shnum && !symtab; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			symtab = &sh[i];
	if (load == U64_MAX || !symtab || symtab->sh_link >= eh->e_shnum)
		return -ENOEXEC;
	strtab = &sh[symtab->sh_link];
	if (!in_image(img, symtab->sh_offset, symtab->sh_size) ||
	    !in_image(img, strtab->sh_offset, strtab->sh_size))
		return -ENOEXEC;
	sym = (const void *)(base + symtab->sh_offset);
	n = symtab->sh_size / sizeof(*sym);
	for (i = 0; i < n; i++, sym++) {
		const char *name = (const char *)base + strtab->sh_offset +
				   sym->st_name;
		u64 left = strtab->sh_size - min_t(u64, sym->st_name,
						    strtab->sh_size);
		unsigned int bind = ELF64_ST_BIND(sym->st_info);

		if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
		    sym->st_shndx == SHN_UNDEF ||
		    (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    strnlen(name, left) >= min_t(u64, left, CKPT_IMG_VDSO_NAME) ||
		    sym->st_value < load || sym->st_value - load >= img->size)
			continue;
		for (j = 0; j < v->nr_syms; j++)
			if (!strcmp(v->syms[j].name, name))
				break;
		if (j < v->nr_syms)
			continue;
		if (v->nr_syms == CKPT_IMG_VDSO_SYMS)
			return -E2BIG;
		strscpy(v->syms[j].name, name, sizeof(v->syms[j].name));
		v->syms[j].offset = sym->st_value - load;
		v->nr_syms++;
	}
	return v->nr_syms ? 0 : -ENOEXEC;
}

struct ckpt_img_vdso *ckpt_vdso_capture(struct task_struct *task,
					struct mm_struct *mm,
					struct ckpt_img_process *proc,
					struct ckpt_why *why)
{
	const struct vdso_image *img;
	struct ckpt_img_vdso *v;
	int ret;

	v = kvzalloc(sizeof(*v) + proc->vdso_size, GFP_KERNEL);
	if (!v)
		return ERR_PTR(-ENOMEM);
	mmap_read_lock(mm);
	img = mm->context.vdso_image;
	ret = img && img->size == proc->vdso_size ? vdso_symbols(img, v) : -ENOEXEC;
	mmap_read_unlock(mm);
	if (ret) {
		why->msg = "cannot read the entry points of this kernel's vdso";
		goto fail;
	}
	/* The process's own copy: it could have been written to (ptrace). */
	if (access_process_vm(task, proc->vdso, (u8 *)(v + 1), proc->vdso_size,
			      FOLL_FORCE) != proc->vdso_size) {
		why->msg = "cannot read the process's vdso";
		ret = -EIO;
		goto fail;
	}
	proc->vdso_csum = ckpt_csum((u8 *)(v + 1), proc->vdso_size);
	return v;
fail:
	kvfree(v);
	return ERR_PTR(ret);
}

static const struct ckpt_img_vdso_sym *find_sym(const struct ckpt_img_vdso *v,
						const char *name)
{
	u32 i;

	for (i = 0; i < v->nr_syms; i++)
		if (!strcmp(v->syms[i].name, name))
			return &v->syms[i];
	return NULL;
}

static bool overlaps(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* Writes a jump from @at (in @text, mapped at @addr) to @to, in @room bytes. */
static int put_jump(u8 *text, u64 addr, u64 at, u64 room, u64 to)
{
	s64 rel = (s64)(to - (addr + at + JMP_REL32));

	if (room >= JMP_REL32 && rel == (s32)rel) {
		s32 r = rel;

		text[at] = 0xe9;
		memcpy(text + at + 1, &r, sizeof(r));
		return 0;
	}
	if (room >= JMP_ABS) {
		static const u8 jmp_rip[6] = { 0xff, 0x25, 0, 0, 0, 0 };

		memcpy(text + at, jmp_rip, sizeof(jmp_rip));
		memcpy(text + at + sizeof(jmp_rip), &to, sizeof(to));
		return 0;
	}
	return -ENOSPC;
}

/*
 * An entry point this kernel's vdso lacks (say __vdso_getrandom, new in
 * 6.11, on 6.1) becomes the system call it stands for: the vdso functions
 * take their arguments in the registers system calls use, up to the third.
 * One without a system call returns -ENOSYS, on which glibc falls back to
 * the system call itself.
 */
static int put_stub(u8 *text, u64 at, u64 room, const char *name)
{
	static const struct {
		const char *name;
		u32 nr;
	} calls[] = {
		{ "clock_gettime", __NR_clock_gettime },
		{ "clock_getres", __NR_clock_getres },
		{ "gettimeofday", __NR_gettimeofday },
		{ "time", __NR_time },
		{ "getcpu", __NR_getcpu },
		{ "getrandom", __NR_getrandom },
	};
	u8 call[STUB_LEN] = {
		0xb8, 0, 0, 0, 0,		/* mov $nr, %eax (filled below) */
		0x0f, 0x05,			/* syscall */
		0xc3,				/* ret */
	};
	static const u8 nosys[STUB_LEN] = {
		0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, /* mov $-ENOSYS, %rax */
		0xc3,				/* ret */
	};
	unsigned int i;

	if (room < STUB_LEN)
		return -ENOSPC;
	if (!strncmp(name, "__vdso_", 7))
		name += 7;
	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		if (!strcmp(name, calls[i].name)) {
			memcpy(call + 1, &calls[i].nr, sizeof(calls[i].nr));
			memcpy(text + at, call, sizeof(call));
			return 0;
		}
	}
	memcpy(text + at, nosys, sizeof(nosys));
	return 0;
}

/*
 * The image's vdso text with each entry point turned into a jump to the
 * same-named entry of this kernel's vdso at @here (described by @now).
 */
static int make_proxy(const struct ckpt_img_process *proc,
		      const struct ckpt_img_vdso *old,
		      const struct ckpt_img_vdso *now, u64 here, u8 *text,
		      struct ckpt_why *why)
{
	u64 size = proc->vdso_size;
	u32 i, j;
	int ret;

	memcpy(text, (const u8 *)(old + 1), size);
	for (i = 0; i < old->nr_syms; i++) {
		const struct ckpt_img_vdso_sym *to = find_sym(now, old->syms[i].name);
		u64 at = old->syms[i].offset, room = size - at;

		/* Up to the next entry point: aliases share one jump. */
		for (j = 0; j < old->nr_syms; j++)
			if (old->syms[j].offset > at)
				room = min(room, old->syms[j].offset - at);
		ret = to ? put_jump(text, proc->vdso, at, room, here + to->offset)
			 : put_stub(text, at, room, old->syms[i].name);
		if (ret) {
			ckpt_whyf(why,
				  "no room at the image's vdso entry point %s for a jump to this kernel's",
				  old->syms[i].name);
			return ret;
		}
	}
	return 0;
}

u8 *ckpt_vdso_check(const struct ckpt_img_process *proc,
		    const struct ckpt_img_vdso *old,
		    const struct ckpt_img_vma *vmas, u32 nr_vmas,
		    struct ckpt_img_thread *const *threads, u32 nr_threads,
		    struct ckpt_why *why)
{
	struct mm_struct *mm = current->mm;
	u64 vdso, vdso_size, vvar, vvar_size;
	struct ckpt_img_vdso *now = NULL;
	u8 *text;
	u32 i;
	int ret;

	if (!ckpt_layout_ok(CKPT_LAYOUT_VDSO)) {
		ckpt_whyf(why, "this engine cannot find the vdso on this kernel (%s)",
			  ckpt_layout_why(CKPT_LAYOUT_VDSO));
		return ERR_PTR(-EOPNOTSUPP);
	}
	mmap_read_lock(mm);
	ckpt_vdso_ranges(mm, &vdso, &vdso_size, &vvar, &vvar_size);
	mmap_read_unlock(mm);
	text = kvmalloc(max(vdso_size, proc->vdso_size), GFP_KERNEL);
	if (!text)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(text, (void __user *)(unsigned long)vdso, vdso_size)) {
		ret = -EFAULT;
		goto fail;
	}
	if (vdso_size == proc->vdso_size && vvar_size == proc->vvar_size &&
	    ckpt_csum(text, vdso_size) == proc->vdso_csum) {
		kvfree(text);
		if (vdso != proc->vdso || vvar != proc->vvar) {
			why->msg = "the restarter's vdso is not where the image had it";
			return ERR_PTR(-EINVAL);
		}
		return NULL;
	}

	ret = -ENOEXEC;
	if (!old) {
		why->msg = "this kernel's vdso differs from the image's, which carries no copy of its own (restart on the kernel that made it)";
		goto fail;
	}
	for (i = 0; i < nr_threads; i++) {
		u64 ip = threads[i]->gregs[GREG_IP];

		if (ip >= proc->vdso && ip - proc->vdso < proc->vdso_size) {
			ckpt_whyf(why,
				  "thread %u was stopped inside the vdso, which differs on this kernel: restart on the kernel that made the image",
				  threads[i]->tid);
			goto fail;
		}
	}
	/* This kernel's vdso stays put: it must not be in the image's way. */
	for (i = 0; i < nr_vmas; i++) {
		if (vmas[i].flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR))
			continue;
		if (overlaps(vvar, vvar_size + vdso_size, vmas[i].start,
			     vmas[i].end - vmas[i].start))
			break;
	}
	if (i < nr_vmas ||
	    overlaps(vvar, vvar_size + vdso_size, proc->vdso, proc->vdso_size)) {
		ckpt_whyf(why,
			  "this kernel's vdso at %#llx is in the way of the image's memory",
			  vdso);
		ret = -EBUSY;
		goto fail;
	}
	now = kzalloc(sizeof(*now), GFP_KERNEL);
	if (!now) {
		ret = -ENOMEM;
		goto fail;
	}
	mmap_read_lock(mm);
	ret = mm->context.vdso_image ? vdso_symbols(mm->context.vdso_image, now)
				     : -ENOEXEC;
	mmap_read_unlock(mm);
	if (ret) {
		why->msg = "cannot read the entry points of this kernel's vdso";
		goto fail;
	}
	ret = make_proxy(proc, old, now, vdso, text, why);
	if (ret)
		goto fail;
	kfree(now);
	return text;
fail:
	kfree(now);
	kvfree(text);
	return ERR_PTR(ret);
}

int ckpt_vdso_proxy(const struct ckpt_img_process *proc, const u8 *text,
		    struct ckpt_why *why)
{
	unsigned long addr;

	addr = vm_mmap(NULL, proc->vdso, proc->vdso_size, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, 0);
	if (IS_ERR_VALUE(addr) || addr != proc->vdso) {
		why->msg = "cannot map the image's vdso at its address";
		return IS_ERR_VALUE(addr) ? (int)addr : -EEXIST;
	}
	if (access_process_vm(current, proc->vdso, (void *)text, proc->vdso_size,
			      FOLL_FORCE | FOLL_WRITE) != proc->vdso_size) {
		why->msg = "cannot write the image's vdso";
		return -EFAULT;
	}
	return 0;
}
