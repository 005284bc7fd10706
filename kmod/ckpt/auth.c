// SPDX-License-Identifier: GPL-2.0
/*
 * Image authentication (Documentation/security.md).
 *
 * Section checksums find damage, not forgery: anyone can edit an image and
 * compute them again. What a restarted process runs as (CREDS), where its
 * threads resume (THREAD), what it executes and maps (PROCESS, VMAS) and
 * the files it gets back must not be whatever the image's holder wrote. So
 * the engine puts a keyed MAC (HMAC-SHA256) in every image it writes, over
 * every byte before it and of the VMAS section after it, and a restart
 * checks it before anything changes. The key never leaves the kernel: a
 * random one per module load, or the one the administrator set
 * (CKPT_IOC_SET_KEY), shared by a cluster so that images restart on any of
 * its nodes. A key id (a MAC of a fixed string under the key) tells a
 * restart "made under another key" from "changed since".
 */

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/capability.h>
#include <linux/crypto.h>
#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "auth.h"
#include "why.h"

#define MAC_ALG		"hmac(sha256)"
#define MAC_PREFIX	"ckpt image MAC"	/* hashed with its NUL */
#define KEY_ID_INPUT	"ckpt key id"

struct ckpt_auth {
	struct crypto_shash *tfm;
	u8 key_id[CKPT_MAC_KEY_ID_LEN];
	struct shash_desc desc;	/* followed by the algorithm's context */
};

static DEFINE_MUTEX(key_lock);
static u8 key[CKPT_KEY_MAX_LEN];
static u32 key_len;
static u8 key_id[CKPT_MAC_KEY_ID_LEN];

static struct ckpt_auth *auth_alloc(const u8 *k, u32 klen)
{
	struct crypto_shash *tfm = crypto_alloc_shash(MAC_ALG, 0, 0);
	struct ckpt_auth *a;
	int ret;

	if (IS_ERR(tfm))
		return ERR_CAST(tfm);
	a = kzalloc(sizeof(*a) + crypto_shash_descsize(tfm), GFP_KERNEL);
	if (!a) {
		crypto_free_shash(tfm);
		return ERR_PTR(-ENOMEM);
	}
	a->tfm = tfm;
	a->desc.tfm = tfm;
	ret = crypto_shash_setkey(tfm, k, klen);
	if (!ret)
		ret = crypto_shash_init(&a->desc);
	if (ret) {
		ckpt_auth_free(a);
		return ERR_PTR(ret);
	}
	return a;
}

void ckpt_auth_free(struct ckpt_auth *a)
{
	if (IS_ERR_OR_NULL(a))
		return;
	shash_desc_zero(&a->desc);
	crypto_free_shash(a->tfm);
	kfree_sensitive(a);
}

/* The id of key @k: the first bytes of its MAC of a fixed string. */
static int compute_key_id(const u8 *k, u32 klen, u8 *id)
{
	struct ckpt_auth *a = auth_alloc(k, klen);
	u8 mac[CKPT_MAC_LEN];
	int ret;

	if (IS_ERR(a))
		return PTR_ERR(a);
	ret = crypto_shash_update(&a->desc, KEY_ID_INPUT, sizeof(KEY_ID_INPUT));
	if (!ret)
		ret = crypto_shash_final(&a->desc, mac);
	if (!ret)
		memcpy(id, mac, CKPT_MAC_KEY_ID_LEN);
	ckpt_auth_free(a);
	memzero_explicit(mac, sizeof(mac));
	return ret;
}

static int set_key(const u8 *k, u32 klen)
{
	u8 id[CKPT_MAC_KEY_ID_LEN];
	int ret = compute_key_id(k, klen, id);

	if (ret)
		return ret;
	mutex_lock(&key_lock);
	memzero_explicit(key, sizeof(key));
	memcpy(key, k, klen);
	key_len = klen;
	memcpy(key_id, id, sizeof(key_id));
	mutex_unlock(&key_lock);
	return 0;
}

int ckpt_auth_init(void)
{
	u8 k[32];
	int ret;

	get_random_bytes(k, sizeof(k));
	ret = set_key(k, sizeof(k));
	memzero_explicit(k, sizeof(k));
	if (ret)
		pr_err("cannot set up image authentication (%s): error %d\n",
		       MAC_ALG, ret);
	return ret;
}

void ckpt_auth_uninit(void)
{
	mutex_lock(&key_lock);
	memzero_explicit(key, sizeof(key));
	key_len = 0;
	mutex_unlock(&key_lock);
}

long ckpt_ioctl_set_key(struct ckpt_key __user *ukey)
{
	struct ckpt_key k;
	u8 *buf;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&k, ukey, sizeof(k)))
		return -EFAULT;
	if (k.flags || k.reserved[0] || k.reserved[1] ||
	    k.len < CKPT_KEY_MIN_LEN || k.len > CKPT_KEY_MAX_LEN)
		return -EINVAL;
	buf = memdup_user(u64_to_user_ptr(k.key), k.len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = set_key(buf, k.len);
	kfree_sensitive(buf);
	return ret;
}

struct ckpt_auth *ckpt_auth_begin(void)
{
	u8 k[CKPT_KEY_MAX_LEN], id[CKPT_MAC_KEY_ID_LEN];
	struct ckpt_auth *a;
	u32 klen;
	int ret;

	/* The key and its id as one: a new key may be set meanwhile. */
	mutex_lock(&key_lock);
	klen = key_len;
	memcpy(k, key, klen);
	memcpy(id, key_id, sizeof(id));
	mutex_unlock(&key_lock);
	if (!klen)
		return ERR_PTR(-ENOKEY);
	a = auth_alloc(k, klen);
	memzero_explicit(k, sizeof(k));
	if (IS_ERR(a))
		return a;
	memcpy(a->key_id, id, sizeof(id));
	ret = crypto_shash_update(&a->desc, MAC_PREFIX, sizeof(MAC_PREFIX));
	if (ret) {
		ckpt_auth_free(a);
		return ERR_PTR(ret);
	}
	return a;
}

int ckpt_auth_update(struct ckpt_auth *a, const void *buf, size_t len)
{
	int ret = 0;

	/* crypto_shash_update() takes an unsigned int length. */
	while (len && !ret) {
		unsigned int n = min_t(size_t, len, SZ_1G);

		ret = crypto_shash_update(&a->desc, buf, n);
		buf += n;
		len -= n;
	}
	return ret;
}

int ckpt_auth_final(struct ckpt_auth *a, struct ckpt_img_mac *m)
{
	memset(m, 0, sizeof(*m));
	m->alg = CKPT_MAC_HMAC_SHA256;
	memcpy(m->key_id, a->key_id, sizeof(m->key_id));
	return crypto_shash_final(&a->desc, m->mac);
}

int ckpt_auth_verify(struct ckpt_auth *a, const struct ckpt_img_mac *m,
		     struct ckpt_why *why)
{
	struct ckpt_img_mac mine;
	int ret = ckpt_auth_final(a, &mine);

	if (ret) {
		ckpt_whyf(why, "cannot compute the image's MAC: error %d",
			  ret);
		return ret;
	}
	ret = 0;
	if (memcmp(m->key_id, mine.key_id, sizeof(mine.key_id))) {
		ckpt_whyf(why,
			  "the image's MAC was made under another key (id %*phN; this engine's is %*phN)",
			  CKPT_MAC_KEY_ID_LEN, m->key_id,
			  CKPT_MAC_KEY_ID_LEN, mine.key_id);
		ret = -EKEYREJECTED;
	} else if (crypto_memneq(m->mac, mine.mac, sizeof(mine.mac))) {
		ckpt_whyf(why,
			  "the image's MAC does not match: it was changed after the checkpoint");
		ret = -EKEYREJECTED;
	}
	memzero_explicit(&mine, sizeof(mine));
	return ret;
}
