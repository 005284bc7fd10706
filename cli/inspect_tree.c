// SPDX-License-Identifier: GPL-2.0
/*
 * ckpt inspect DIR: a process tree's directory (ckpt checkpoint --tree).
 * The manifest is read, every member's image read whole through the
 * engine's checks and held against the manifest as a restart would
 * (treedir.h), and one line per process shown, or the first problem named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "err.h"
#include "inspect.h"
#include "json.h"
#include "print.h"
#include "treedir.h"

bool inspect_is_tree(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* What the tree's line of one member shows. */
struct member_sum {
	char comm[16];
	__u32 threads;
	__u64 pages, bytes;
};

/* Member @i's image, read and checked, summed up in @sum. */
static int read_member(const char *dir, const struct ckpt_tree *t, uint32_t i,
		       struct member_sum *sum, unsigned int opts,
		       struct ckpt_err *err)
{
	const struct ckpt_image_error *e;
	struct ckpt_image img;
	struct inspect in;
	char path[4096];
	int fd, ret;

	if (ckpt_tree_image_path(dir, t, i, path, sizeof(path)))
		return ckpt_err_set(err, ENAMETOOLONG, "path too long: %s", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ckpt_err_set(err, errno, "cannot open %s: %s", path,
				    strerror(errno));
	ckpt_image_init(&img);
	inspect_init(&in, &img, opts & INSPECT_VERBOSE);
	ckpt_image_read(&img, fd, 0);
	close(fd);
	e = &img.error;
	if (!img.done)
		ret = ckpt_err_set(err, e->err ? -e->err : EINVAL,
				   "%s: %s (section %llu at offset %llu)", path,
				   e->why ? e->why : "not a complete image",
				   (unsigned long long)e->section,
				   (unsigned long long)e->offset);
	else
		ret = ckpt_tree_check(t, i, &img, path, err);
	if (!ret) {
		memcpy(sum->comm, img.proc.comm, sizeof(sum->comm));
		sum->comm[sizeof(sum->comm) - 1] = '\0';
		sum->threads = img.hdr.nr_threads;
		sum->pages = img.nr_pages;
		sum->bytes = img.size;
		if ((opts & INSPECT_VERBOSE) && !(opts & INSPECT_JSON))
			inspect_report(stdout, stderr, path, &img, &in);
	}
	inspect_free(&in);
	ckpt_image_free(&img);
	return ret;
}

static void print_member(struct printer *p, const struct ckpt_tree *t,
			 uint32_t i, const struct member_sum *s)
{
	bool root = t->m[i].parent == CKPT_TREE_NO_PARENT;

	print_open_object(p, NULL);
	print_int(p, PRINT_ANY, "pid", "  pid %lld", t->m[i].pid);
	print_int(p, root ? PRINT_JSON : PRINT_ANY, "parent", " (child of %lld)",
		  root ? 0 : t->m[t->m[i].parent].pid);
	print_text(p, "%s", !root ? "" : i ? " (another root)" : " (root)");
	print_string(p, PRINT_ANY, "comm", ": %s", s->comm);
	print_uint(p, PRINT_ANY, "threads", ", %llu thread(s)", s->threads);
	print_uint(p, PRINT_ANY, "pages", ", %llu pages", s->pages);
	print_uint(p, PRINT_ANY, "bytes", ", %llu bytes\n", s->bytes);
	print_close_object(p);
}

int inspect_tree(const char *dir, unsigned int opts)
{
	bool json = opts & INSPECT_JSON;
	char id[2 * CKPT_TREE_ID_LEN + 1] = "";
	struct member_sum *sums = NULL;
	struct printer pr, *p = &pr;
	struct ckpt_err err;
	struct ckpt_tree t;
	uint32_t i;
	int ret;

	ret = ckpt_tree_read(dir, &t, &err);
	if (!ret) {
		sums = calloc(t.nr, sizeof(*sums));
		if (!sums)
			ret = ckpt_err_set(&err, ENOMEM, "out of memory");
	}
	for (i = 0; !ret && i < t.nr; i++)
		ret = read_member(dir, &t, i, &sums[i], opts, &err);
	if (ret)
		fprintf(stderr, "%s inspect: %s\n", prog, err.msg);
	if (ret && !json)
		goto out;
	print_init(p, stdout, json);
	print_open_object(p, NULL);
	print_string(p, PRINT_ANY, "tree", "tree %s", dir);
	print_bool(p, PRINT_JSON, "valid", "", !ret);
	if (ret) {
		print_string(p, PRINT_JSON, "error", "", err.msg);
	} else {
		print_uint(p, PRINT_ANY, "processes", ": %llu processes", t.nr);
		for (i = 0; i < CKPT_TREE_ID_LEN; i++)
			sprintf(id + 2 * i, "%02x", t.id[i]);
		print_string(p, PRINT_ANY, "id", ", id %s\n", id);
		print_open_array(p, "members");
		for (i = 0; i < t.nr; i++)
			print_member(p, &t, i, &sums[i]);
		print_close_array(p);
	}
	print_close_object(p);
	if (json)
		putchar('\n');
out:
	free(sums);
	ckpt_tree_free(&t);
	return ret ? 1 : 0;
}
