/*
 * Audit record bodies: see auditbody.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auditbody.h"
#include "log.h"
#include "util.h"

void
audit_body_init(struct audit_body *b)
{
	memset(b, 0, sizeof(*b));
}

void
audit_body_free(struct audit_body *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static void
body_grow(struct audit_body *b, size_t more)
{
	if (b->len + more + 1 <= b->size)
		return;
	while (b->len + more + 1 > b->size)
		b->size = b->size == 0 ? 256 : b->size * 2;
	b->buf = xreallocarray(b->buf, 1, b->size);
}

static int
key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	    c == '.' || c == '-';
}

static void
body_key(struct audit_body *b, const char *key)
{
	size_t	 len = strlen(key), i;

	if (len == 0 || len > AUDIT_KEY_MAX)
		fatalx("audit body: bad key length");
	for (i = 0; i < len; i++)
		if (!key_char((unsigned char)key[i]))
			fatalx("audit body: bad key \"%s\"", key);
	if (b->last[0] != '\0' && strcmp(key, b->last) <= 0)
		fatalx("audit body: key \"%s\" out of order", key);
	memcpy(b->last, key, len + 1);
	body_grow(b, len + 1);
	memcpy(b->buf + b->len, key, len);
	b->len += len;
	b->buf[b->len++] = '=';
}

static void
body_value(struct audit_body *b, const unsigned char *v, size_t len)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 i;

	body_grow(b, len * 3 + 1);
	for (i = 0; i < len; i++) {
		if (v[i] >= 0x20 && v[i] <= 0x7e && v[i] != '%') {
			b->buf[b->len++] = (char)v[i];
			continue;
		}
		b->buf[b->len++] = '%';
		b->buf[b->len++] = hex[v[i] >> 4];
		b->buf[b->len++] = hex[v[i] & 0xf];
	}
	b->buf[b->len++] = '\n';
	b->buf[b->len] = '\0';
}

void
audit_body_str(struct audit_body *b, const char *key, const char *val)
{
	body_key(b, key);
	body_value(b, (const unsigned char *)val, strlen(val));
}

void
audit_body_bytes(struct audit_body *b, const char *key, const void *data,
    size_t len, size_t max)
{
	body_key(b, key);
	body_value(b, data, len < max ? len : max);
}

void
audit_body_u64(struct audit_body *b, const char *key, uint64_t v)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	audit_body_str(b, key, buf);
}

void
audit_body_i64(struct audit_body *b, const char *key, int64_t v)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	audit_body_str(b, key, buf);
}

void
audit_body_digest(struct audit_body *b, const char *key, const void *data,
    size_t len)
{
	unsigned char	 h[crypto_hash_sha256_BYTES];
	char		 hex[crypto_hash_sha256_BYTES * 2 + 1];

	crypto_hash_sha256(h, data, len);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	audit_body_str(b, key, hex);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *
audit_body_check(const char *buf, size_t len)
{
	char		 last[AUDIT_KEY_MAX + 1] = "", key[AUDIT_KEY_MAX + 1];
	size_t		 i = 0, k;

	while (i < len) {
		for (k = 0; i < len && buf[i] != '='; i++, k++) {
			if (k == AUDIT_KEY_MAX ||
			    !key_char((unsigned char)buf[i]))
				return "malformed key";
			key[k] = buf[i];
		}
		if (i == len || k == 0)
			return "line without a key";
		key[k] = '\0';
		if (last[0] != '\0' && strcmp(key, last) <= 0)
			return "keys out of order";
		memcpy(last, key, k + 1);
		for (i++; i < len && buf[i] != '\n'; i++) {
			if (buf[i] == '%') {
				if (i + 2 >= len || hexval(buf[i + 1]) == -1 ||
				    hexval(buf[i + 2]) == -1)
					return "malformed escape";
				i += 2;
			} else if (buf[i] < 0x20 || buf[i] > 0x7e)
				return "unescaped byte";
		}
		if (i == len)
			return "last line not terminated";
		i++;
	}
	return NULL;
}
