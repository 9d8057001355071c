/*
 * Download link tokens (share.h), sealed with libsodium's
 * XChaCha20-Poly1305.  A token is the base64url, without padding, of
 *
 *	version		1 byte, SHARE_VERSION
 *	key id		4 bytes, big-endian: the sealing key's random id
 *	nonce		24 random bytes
 *	sealed claim	the claim's encoding, encrypted, and the 16-byte tag
 *
 * with the version, the key id and the name as additional data, so that a
 * link opens under its own name only.  The claim's encoding, integers
 * big-endian:
 *
 *	tenant		1-byte length, then the name, no NUL
 *	sandbox		1-byte length (SBX_ID_LEN), then the hex digits
 *	path		2-byte length, then the bytes
 *	ino, size	8 bytes each
 *	ctime_ns	8 bytes, two's complement
 *	expires		8 bytes, two's complement
 *
 * A token has one spelling, read strictly: base64url as libsodium
 * decodes it without padding, characters outside the alphabet or bits
 * left over, and no byte after the claim.  The claim is checked again
 * once the tag holds, as share_token_make() checked it, so that a key
 * that leaked, or a bug in the sealing, still gives no path out of the
 * workspace.  The nonce is random, and 24 bytes leave no fear of one
 * coming twice; the key id is random too, so that it tells nothing of
 * when the key was made or how many came before it.
 *
 * The keys are in this file's memory and nowhere else, and each is
 * wiped when it is dropped.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "log.h"
#include "share.h"
#include "util.h"

#define SHARE_VERSION	1
#define B64_VARIANT	sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define KEY_LEN		crypto_aead_xchacha20poly1305_ietf_KEYBYTES
#define NONCE_LEN	crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_LEN		crypto_aead_xchacha20poly1305_ietf_ABYTES
#define HEAD_LEN	(1 + 4)		/* version, key id */
#define SEALED_AT	(HEAD_LEN + NONCE_LEN)
/* The shortest claim's encoding: a 1-byte tenant and path. */
#define CLAIM_MIN	(1 + 1 + 1 + SBX_ID_LEN + 2 + 1 + 4 * 8)
#define RAW_MIN		(SEALED_AT + CLAIM_MIN + TAG_LEN)
#define RAW_MAX		(SEALED_AT + SHARE_CLAIM_MAX + TAG_LEN)

_Static_assert(KEY_LEN == 32, "share.h gives tests 32-byte keys");
_Static_assert(sodium_base64_ENCODED_LEN(RAW_MAX, B64_VARIANT) - 1 <=
    SHARE_TOKEN_MAX, "the longest claim's token exceeds SHARE_TOKEN_MAX");
_Static_assert(SHARE_PATH_MAX < sizeof(((struct share_claim *)0)->path),
    "SHARE_PATH_MAX exceeds the claim's path");

struct share_key {
	uint8_t		 key[KEY_LEN];
	uint32_t	 id;
	int64_t		 last_expiry;	/* the latest a token of it names */
};

/* Oldest first: the last key seals. */
static struct share_key	 ring[SHARE_KEYS_MAX];
static size_t		 nkeys;

static struct share_key *
key_find(uint32_t id)
{
	size_t	 i;

	for (i = 0; i < nkeys; i++)
		if (ring[i].id == id)
			return &ring[i];
	return NULL;
}

static void
key_drop(size_t i)
{
	memmove(&ring[i], &ring[i + 1], (nkeys - i - 1) * sizeof(ring[0]));
	nkeys--;
	sodium_memzero(&ring[nkeys], sizeof(ring[nkeys]));
}

/* The slot of a new current key, the oldest dropped to make room. */
static struct share_key *
key_new(uint32_t id)
{
	struct share_key	*k;

	if (nkeys == SHARE_KEYS_MAX)
		key_drop(0);
	k = &ring[nkeys++];
	k->id = id;
	/* It has sealed nothing: the next rotation drops it. */
	k->last_expiry = INT64_MIN;
	return k;
}

static void
key_fresh(void)
{
	struct share_key	*k;
	uint32_t		 id;

	if (sodium_init() == -1)
		fatalx("sodium_init");
	do
		id = randombytes_random();
	while (key_find(id) != NULL);
	k = key_new(id);
	randombytes_buf(k->key, sizeof(k->key));
}

void
share_keys_init(void)
{
	share_keys_free();
	key_fresh();
}

void
share_keys_rotate(int64_t now)
{
	size_t	 i = 0;

	/* A key stays while a link it sealed may still open. */
	while (i < nkeys) {
		if (now > ring[i].last_expiry)
			key_drop(i);
		else
			i++;
	}
	key_fresh();
}

size_t
share_keys_count(void)
{
	return nkeys;
}

void
share_keys_free(void)
{
	sodium_memzero(ring, sizeof(ring));
	nkeys = 0;
}

void
share_keys_set_for_tests(const uint8_t key[32], uint32_t id)
{
	if (sodium_init() == -1)
		fatalx("sodium_init");
	share_keys_free();
	memcpy(key_new(id)->key, key, KEY_LEN);
}

static int
sandbox_id_valid(const char *s)
{
	return strlen(s) == SBX_ID_LEN &&
	    strspn(s, "0123456789abcdef") == SBX_ID_LEN;
}

/*
 * Beneath the workspace by its spelling alone: relative, and each
 * component a name, not "", "." or "..".  Symbolic links are the
 * server's to refuse when it opens the file.
 */
static int
path_valid(const char *path)
{
	const char	*p;
	size_t		 n;

	if (strlen(path) > SHARE_PATH_MAX)
		return 0;
	for (p = path;; p += n + 1) {
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (p[n] == '\0')
			return 1;
	}
}

static int
claim_valid(const struct share_claim *c)
{
	return memchr(c->tenant, '\0', sizeof(c->tenant)) != NULL &&
	    memchr(c->sandbox, '\0', sizeof(c->sandbox)) != NULL &&
	    memchr(c->path, '\0', sizeof(c->path)) != NULL &&
	    name_valid(c->tenant) && sandbox_id_valid(c->sandbox) &&
	    path_valid(c->path);
}

static uint8_t *
put_uint(uint8_t *p, uint64_t v, size_t n)
{
	while (n-- > 0)
		*p++ = (uint8_t)(v >> (8 * n));
	return p;
}

static uint8_t *
put_str(uint8_t *p, const char *s, size_t lenbytes)
{
	size_t	 n = strlen(s);

	p = put_uint(p, n, lenbytes);
	memcpy(p, s, n);
	return p + n;
}

int
share_claim_encode(const struct share_claim *c, uint8_t out[SHARE_CLAIM_MAX],
    size_t *len)
{
	uint8_t	*p = out;

	*len = 0;
	if (!claim_valid(c))
		return -1;
	p = put_str(p, c->tenant, 1);
	p = put_str(p, c->sandbox, 1);
	p = put_str(p, c->path, 2);
	p = put_uint(p, c->ino, 8);
	p = put_uint(p, c->size, 8);
	p = put_uint(p, (uint64_t)c->ctime_ns, 8);
	p = put_uint(p, (uint64_t)c->expires, 8);
	*len = (size_t)(p - out);
	return 0;
}

struct reader {
	const uint8_t	*p;
	size_t		 left;
};

static int
get_uint(struct reader *r, size_t n, uint64_t *v)
{
	if (r->left < n)
		return -1;
	for (*v = 0; n > 0; n--, r->left--)
		*v = *v << 8 | *r->p++;
	return 0;
}

/* A string with a length of lenbytes: it must fit size with a NUL added. */
static int
get_str(struct reader *r, size_t lenbytes, char *dst, size_t size)
{
	uint64_t	 n;

	if (get_uint(r, lenbytes, &n) == -1 || n >= size || n > r->left ||
	    memchr(r->p, '\0', (size_t)n) != NULL)
		return -1;
	memcpy(dst, r->p, (size_t)n);
	dst[n] = '\0';
	r->p += n;
	r->left -= (size_t)n;
	return 0;
}

int
share_claim_decode(const uint8_t *buf, size_t len, struct share_claim *c)
{
	struct reader	 r = { buf, len };
	uint64_t	 mtime, expires;

	memset(c, 0, sizeof(*c));
	if (get_str(&r, 1, c->tenant, sizeof(c->tenant)) == -1 ||
	    get_str(&r, 1, c->sandbox, sizeof(c->sandbox)) == -1 ||
	    get_str(&r, 2, c->path, SHARE_PATH_MAX + 1) == -1 ||
	    get_uint(&r, 8, &c->ino) == -1 ||
	    get_uint(&r, 8, &c->size) == -1 ||
	    get_uint(&r, 8, &mtime) == -1 ||
	    get_uint(&r, 8, &expires) == -1 || r.left != 0)
		goto bad;
	c->ctime_ns = (int64_t)mtime;
	c->expires = (int64_t)expires;
	if (!claim_valid(c))
		goto bad;
	return 0;
 bad:
	memset(c, 0, sizeof(*c));
	return -1;
}

/* The additional data: the token's head, then the name. */
static uint8_t *
share_ad(const uint8_t head[HEAD_LEN], const char *name, size_t *len)
{
	size_t	 n = strlen(name);
	uint8_t	*ad;

	ad = xmalloc(HEAD_LEN + n);
	memcpy(ad, head, HEAD_LEN);
	memcpy(ad + HEAD_LEN, name, n);
	*len = HEAD_LEN + n;
	return ad;
}

int
share_token_make(const struct share_claim *c, const char *name, char *out,
    size_t outlen)
{
	struct share_key	*k;
	uint8_t			 pt[SHARE_CLAIM_MAX], raw[RAW_MAX], *ad;
	size_t			 ptlen, rawlen, adlen;

	if (outlen > 0)
		out[0] = '\0';
	if (nkeys == 0 || share_claim_encode(c, pt, &ptlen) == -1)
		return -1;
	rawlen = SEALED_AT + ptlen + TAG_LEN;
	if (outlen < sodium_base64_encoded_len(rawlen, B64_VARIANT))
		return -1;
	k = &ring[nkeys - 1];
	raw[0] = SHARE_VERSION;
	put_uint(raw + 1, k->id, 4);
	randombytes_buf(raw + HEAD_LEN, NONCE_LEN);
	ad = share_ad(raw, name, &adlen);
	crypto_aead_xchacha20poly1305_ietf_encrypt(raw + SEALED_AT, NULL, pt,
	    ptlen, ad, adlen, NULL, raw + HEAD_LEN, k->key);
	free(ad);
	sodium_memzero(pt, sizeof(pt));
	sodium_bin2base64(out, outlen, raw, rawlen, B64_VARIANT);
	if (c->expires > k->last_expiry)
		k->last_expiry = c->expires;
	return 0;
}

enum share_error
share_token_open(const char *token, size_t len, const char *name,
    int64_t now, struct share_claim *c)
{
	struct share_key	*k;
	uint8_t			 raw[RAW_MAX], pt[SHARE_CLAIM_MAX], *ad;
	size_t			 rawlen, adlen;
	uint32_t		 id;
	int			 rc;

	memset(c, 0, sizeof(*c));
	/* Bytes past the longest claim's do not fit raw: libsodium says so. */
	if (len > SHARE_TOKEN_MAX || sodium_base642bin(raw, sizeof(raw),
	    token, len, NULL, &rawlen, NULL, B64_VARIANT) != 0 ||
	    rawlen < RAW_MIN || raw[0] != SHARE_VERSION)
		return SHARE_MALFORMED;
	id = (uint32_t)raw[1] << 24 | (uint32_t)raw[2] << 16 |
	    (uint32_t)raw[3] << 8 | raw[4];
	if ((k = key_find(id)) == NULL)
		return SHARE_UNKNOWN_KEY;
	ad = share_ad(raw, name, &adlen);
	rc = crypto_aead_xchacha20poly1305_ietf_decrypt(pt, NULL, NULL,
	    raw + SEALED_AT, rawlen - SEALED_AT, ad, adlen, raw + HEAD_LEN,
	    k->key);
	free(ad);
	if (rc != 0)
		return SHARE_FORGED;
	rc = share_claim_decode(pt, rawlen - SEALED_AT - TAG_LEN, c);
	sodium_memzero(pt, sizeof(pt));
	if (rc == -1)
		return SHARE_MALFORMED;
	if (now > c->expires)
		return SHARE_EXPIRED;
	return SHARE_OK;
}

const char *
share_error_str(enum share_error e)
{
	switch (e) {
	case SHARE_OK:
		return "ok";
	case SHARE_MALFORMED:
		return "malformed";
	case SHARE_UNKNOWN_KEY:
		return "unknown key";
	case SHARE_FORGED:
		return "forged";
	case SHARE_EXPIRED:
		return "expired";
	}
	return "unknown error";
}
