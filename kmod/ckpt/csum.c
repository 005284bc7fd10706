// SPDX-License-Identifier: GPL-2.0
/*
 * The image's checksum: the low 32 bits of XXH64 with seed 0, as Yann
 * Collet's xxHash specification defines it (the digest zstd frames carry).
 * Built into the engine and into the userspace tools alike.
 *
 * Why not a CRC: image version 1 used IEEE CRC-32, which costs a table
 * lookup per byte; CRC-32C has an instruction on x86-64, but emulators
 * such as QEMU's TCG compute that instruction bit by bit. XXH64 is plain
 * 64-bit multiply, rotate and add, about as fast as CRC-32C's instruction
 * on hardware (7.5 GB/s) and forty times faster than it under TCG.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <string.h>
#endif

#include "image_check.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline __u64 rotl(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline __u64 get64(const unsigned char *p)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));	/* little-endian, as the image */
	return v;
}

static inline __u32 get32(const unsigned char *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline __u64 round64(__u64 acc, __u64 in)
{
	return rotl(acc + in * P2, 31) * P1;
}

static inline __u64 merge(__u64 h, __u64 v)
{
	return (h ^ round64(0, v)) * P1 + P4;
}

void ckpt_csum_init(struct ckpt_csum *c)
{
	memset(c, 0, sizeof(*c));
	c->v[0] = P1 + P2;
	c->v[1] = P2;
	c->v[2] = 0;
	c->v[3] = -P1;
}

/* Consumes whole 32-byte stripes of @p; returns how many bytes it took. */
static unsigned long stripes(__u64 *v, const unsigned char *p,
			     unsigned long len)
{
	__u64 v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
	unsigned long done = 0;

	for (; len - done >= 32; done += 32) {
		v0 = round64(v0, get64(p + done));
		v1 = round64(v1, get64(p + done + 8));
		v2 = round64(v2, get64(p + done + 16));
		v3 = round64(v3, get64(p + done + 24));
	}
	v[0] = v0;
	v[1] = v1;
	v[2] = v2;
	v[3] = v3;
	return done;
}

void ckpt_csum_update(struct ckpt_csum *c, const void *buf, unsigned long len)
{
	const unsigned char *p = buf;
	unsigned long n;

	c->total += len;
	if (c->fill) {
		n = 32 - c->fill < len ? 32 - c->fill : len;
		memcpy(c->mem + c->fill, p, n);
		c->fill += n;
		p += n;
		len -= n;
		if (c->fill < 32)
			return;
		stripes(c->v, c->mem, 32);
		c->fill = 0;
	}
	n = stripes(c->v, p, len);
	p += n;
	len -= n;
	memcpy(c->mem, p, len);
	c->fill = len;
}

__u64 ckpt_csum_xxh64(const struct ckpt_csum *c)
{
	const unsigned char *p = c->mem, *end = c->mem + c->fill;
	__u64 h;

	if (c->total >= 32) {
		h = rotl(c->v[0], 1) + rotl(c->v[1], 7) + rotl(c->v[2], 12) +
		    rotl(c->v[3], 18);
		h = merge(h, c->v[0]);
		h = merge(h, c->v[1]);
		h = merge(h, c->v[2]);
		h = merge(h, c->v[3]);
	} else {
		h = P5;
	}
	h += c->total;
	for (; end - p >= 8; p += 8)
		h = rotl(h ^ round64(0, get64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		h = rotl(h ^ (get32(p) * P1), 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl(h ^ (*p * P5), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

__u32 ckpt_csum2(const void *a, unsigned long alen, const void *b,
		 unsigned long blen)
{
	struct ckpt_csum c;

	ckpt_csum_init(&c);
	ckpt_csum_update(&c, a, alen);
	if (blen)
		ckpt_csum_update(&c, b, blen);
	return (__u32)ckpt_csum_xxh64(&c);
}

__u32 ckpt_csum(const void *buf, unsigned long len)
{
	return ckpt_csum2(buf, len, NULL, 0);
}
