// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster key (Documentation/security.md), read once at start, and
 * the keys ckptd derives from it with HKDF-SHA256, one per use
 * (Documentation/decisions.md): the snapshot metadata's MAC key, label
 * "ckpt snapshot mac", and the daemons' TLS pre-shared key, label "ckptd
 * tls psk". The raw key is the engine's alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include "ckptd.h"

static int hkdf(const uint8_t *key, size_t klen, const char *label,
		uint8_t *out, size_t olen)
{
	OSSL_PARAM params[4], *p = params;
	EVP_KDF_CTX *ctx;
	EVP_KDF *kdf;
	int ok;

	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	EVP_KDF_free(kdf);
	if (!ctx)
		return -ENOSYS;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key,
						 klen);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						 (void *)label, strlen(label));
	*p = OSSL_PARAM_construct_end();
	ok = EVP_KDF_derive(ctx, out, olen, params) > 0;
	EVP_KDF_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

int key_load(struct ckptd *d)
{
	uint8_t key[CKPT_KEY_MAX_LEN + 1];
	const char *path = d->cfg.key_file;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ckptd: cannot read the cluster key %s: %s (set key_file in %s)\n",
			path, strerror(errno), CKPTD_CONF);
		return -1;
	}
	if (fstat(fd, &st) || (st.st_mode & 077) || st.st_uid) {
		fprintf(stderr, "ckptd: %s: a key must be root's and readable by root only (chmod 600)\n",
			path);
		close(fd);
		return -1;
	}
	n = read(fd, key, sizeof(key));
	close(fd);
	if (n < CKPT_KEY_MIN_LEN || n > CKPT_KEY_MAX_LEN) {
		fprintf(stderr, "ckptd: %s: a key is %d to %d bytes\n", path,
			CKPT_KEY_MIN_LEN, CKPT_KEY_MAX_LEN);
		return -1;
	}
	if (hkdf(key, n, "ckpt snapshot mac", d->mac_key, sizeof(d->mac_key)) ||
	    hkdf(key, n, "ckptd tls psk", d->psk, sizeof(d->psk))) {
		fprintf(stderr, "ckptd: cannot derive keys (OpenSSL's HKDF)\n");
		OPENSSL_cleanse(key, sizeof(key));
		return -1;
	}
	OPENSSL_cleanse(key, sizeof(key));
	return 0;
}

void ckptd_hex(const uint8_t *b, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * len] = '\0';
}

static unsigned int digit(char c)
{
	return c <= '9' ? (unsigned int)(c - '0') : (unsigned int)(c - 'a' + 10);
}

void ckptd_unhex(const char *hex, uint8_t *out)
{
	size_t i;

	for (i = 0; hex[2 * i] && hex[2 * i + 1]; i++)
		out[i] = (uint8_t)(digit(hex[2 * i]) << 4 | digit(hex[2 * i + 1]));
}

void key_mac(const struct ckptd *d, const void *buf, size_t len,
	     char hex[2 * CKPTD_MAC_LEN + 1])
{
	uint8_t mac[CKPTD_MAC_LEN];
	unsigned int mlen = CKPTD_MAC_LEN;

	HMAC(EVP_sha256(), d->mac_key, sizeof(d->mac_key), buf, len, mac, &mlen);
	ckptd_hex(mac, sizeof(mac), hex);
}
