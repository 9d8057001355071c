/*
 * Download link tokens (mcpd/share.c): claims sealed and opened, every
 * bit of a token altered, other names, expiry, key rotation and restart,
 * the base64url spelling, and the claims refused on the way in and, by
 * an encoder of this file that follows the format share.c documents,
 * on the way out.
 */
#include <sys/types.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../../mcpd/share.h"
#include "../tap.h"

#define NOW	1700000000LL
#define HOUR	3600
#define NAME	"report.csv"
#define SBX	"0123456789abcdef0123456789abcdef"
#define B64	sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define RAW_HEAD	(1 + 4 + 24)	/* version, key id, nonce */
#define ALPHA	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
		"0123456789-_"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static char	 tok[SHARE_TOKEN_MAX + 1];

static struct share_claim
claim_of(const char *tenant, const char *sandbox, const char *path)
{
	struct share_claim	 c;

	memset(&c, 0, sizeof(c));
	if (strlen(tenant) >= sizeof(c.tenant) ||
	    strlen(sandbox) >= sizeof(c.sandbox) ||
	    strlen(path) >= sizeof(c.path))
		errx(1, "test claim too long");
	strcpy(c.tenant, tenant);
	strcpy(c.sandbox, sandbox);
	strcpy(c.path, path);
	c.ino = 1234567;
	c.size = 4096;
	c.ctime_ns = 1699999999123456789LL;
	c.expires = NOW + HOUR;
	return c;
}

static struct share_claim
good(void)
{
	return claim_of("acme", SBX, "out/report.csv");
}

static int
claim_eq(const struct share_claim *a, const struct share_claim *b)
{
	return strcmp(a->tenant, b->tenant) == 0 &&
	    strcmp(a->sandbox, b->sandbox) == 0 &&
	    strcmp(a->path, b->path) == 0 && a->ino == b->ino &&
	    a->size == b->size && a->ctime_ns == b->ctime_ns &&
	    a->expires == b->expires;
}

static int
claim_zero(const struct share_claim *c)
{
	struct share_claim	 z;

	memset(&z, 0, sizeof(z));
	return memcmp(c, &z, sizeof(z)) == 0;
}

static const char *
make(const struct share_claim *c, const char *name)
{
	if (share_token_make(c, name, tok, sizeof(tok)) == -1)
		errx(1, "share_token_make");
	return tok;
}

static enum share_error
open_at(const char *t, const char *name, int64_t now)
{
	struct share_claim	 c;

	return share_token_open(t, strlen(t), name, now, &c);
}

static enum share_error
open_now(const char *t)
{
	return open_at(t, NAME, NOW);
}

static size_t
unb64(const char *s, uint8_t *raw, size_t size)
{
	size_t	 len;

	if (sodium_base642bin(raw, size, s, strlen(s), NULL, &len, NULL,
	    B64) != 0)
		errx(1, "test's own base64url");
	return len;
}

static void
b64(const uint8_t *raw, size_t len, char *out, size_t size)
{
	if (sodium_base64_encoded_len(len, B64) > size)
		errx(1, "test's own base64url");
	sodium_bin2base64(out, size, raw, len, B64);
}

static void
test_round_trip(void)
{
	struct share_claim	 c = good(), got;
	char			 t2[SHARE_TOKEN_MAX + 1];
	uint8_t			 raw[1024];
	size_t			 len;

	share_keys_init();
	ok(share_keys_count() == 1, "a fresh ring holds one key");
	make(&c, NAME);
	ok(strlen(tok) <= SHARE_TOKEN_MAX &&
	    strspn(tok, ALPHA) == strlen(tok),
	    "a token is base64url, no longer than SHARE_TOKEN_MAX (%zu)",
	    strlen(tok));
	ok(share_token_open(tok, strlen(tok), NAME, NOW, &got) == SHARE_OK &&
	    claim_eq(&c, &got), "a token opens to its claim");

	c.ino = UINT64_MAX;
	c.size = 0;
	c.ctime_ns = -1;
	c.expires = INT64_MAX;
	make(&c, NAME);
	ok(share_token_open(tok, strlen(tok), NAME, NOW, &got) == SHARE_OK &&
	    claim_eq(&c, &got), "integers at their extremes round-trip");

	c = good();
	make(&c, NAME);
	memcpy(t2, tok, sizeof(t2));
	make(&c, NAME);
	ok(strcmp(tok, t2) != 0, "two tokens of one claim differ (nonce)");

	len = unb64(tok, raw, sizeof(raw));
	ok(memmem(raw, len, c.path, strlen(c.path)) == NULL &&
	    memmem(raw, len, "report", 6) == NULL &&
	    memmem(raw, len, c.tenant, strlen(c.tenant)) == NULL &&
	    memmem(raw, len, c.sandbox, strlen(c.sandbox)) == NULL,
	    "a token shows neither path, tenant nor sandbox");

	ok(share_token_make(&c, "", tok, sizeof(tok)) == 0 &&
	    open_at(tok, "", NOW) == SHARE_OK,
	    "an empty name binds as well");
}

static void
test_outlen(void)
{
	struct share_claim	 c = good();
	char			 small[SHARE_TOKEN_MAX + 1];
	size_t			 n;

	share_keys_init();
	n = strlen(make(&c, NAME));
	memset(small, 'x', sizeof(small));
	ok(share_token_make(&c, NAME, small, n) == -1 && small[0] == '\0',
	    "no room for the NUL: -1 and an empty string");
	ok(share_token_make(&c, NAME, small, n + 1) == 0 &&
	    strlen(small) == n, "room for the token and its NUL: made");
	ok(share_token_make(&c, NAME, small, 0) == -1, "no room at all: -1");
}

/* The part of a token's bytes i is in: the version, the key id, the rest. */
static int
part(size_t i)
{
	return i == 0 ? 0 : i < 5 ? 1 : 2;
}

/* Every bit of the bytes under the base64 flipped, each way told. */
static void
test_bit_flips(void)
{
	const enum share_error	 want[3] = { SHARE_MALFORMED,
				    SHARE_UNKNOWN_KEY, SHARE_FORGED };
	struct share_claim	 c = good(), got;
	uint8_t			 raw[1024];
	char			 t[SHARE_TOKEN_MAX + 1];
	size_t			 len, i, bit;
	int			 bad[3] = { 0, 0, 0 }, opened = 0, filled = 0;
	enum share_error	 e;

	share_keys_init();
	len = unb64(make(&c, NAME), raw, sizeof(raw));
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			raw[i] ^= 1 << bit;
			b64(raw, len, t, sizeof(t));
			raw[i] ^= 1 << bit;
			e = share_token_open(t, strlen(t), NAME, NOW, &got);
			if (e == SHARE_OK)
				opened++;
			if (!claim_zero(&got))
				filled++;
			if (e != want[part(i)])
				bad[part(i)]++;
		}
	}
	ok(opened == 0 && filled == 0,
	    "no flipped bit of %zu bytes opens, nor fills the claim", len);
	ok(bad[0] == 0, "a flipped version: malformed");
	ok(bad[1] == 0, "a flipped key id: unknown key");
	ok(bad[2] == 0, "a flipped nonce, ciphertext or tag: forged");
}

/* Every bit of every character flipped: never opens. */
static void
test_char_flips(void)
{
	struct share_claim	 c = good();
	char			 t[SHARE_TOKEN_MAX + 1];
	size_t			 i, bit, len;
	int			 opened = 0, other = 0;
	enum share_error	 e;

	share_keys_init();
	len = strlen(make(&c, NAME));
	for (i = 0; i < len; i++)
		for (bit = 0; bit < 7; bit++) {
			memcpy(t, tok, len + 1);
			t[i] ^= (char)(1 << bit);
			e = share_token_open(t, len, NAME, NOW, &c);
			if (e == SHARE_OK)
				opened++;
			else if (e != SHARE_MALFORMED && e != SHARE_FORGED &&
			    e != SHARE_UNKNOWN_KEY)
				other++;
		}
	ok(opened == 0 && other == 0,
	    "no flipped bit of %zu characters opens", len);
	/*
	 * The bytes are not a multiple of 3, so the last character has
	 * bits it does not use: set, they are a second spelling.
	 */
	memcpy(t, tok, len + 1);
	t[len - 1] = ALPHA[(strchr(ALPHA, t[len - 1]) - ALPHA) | 1];
	ok(len % 4 != 0 && open_now(t) == SHARE_MALFORMED,
	    "the last character's unused bits set: malformed");
}

static void
test_cut_and_grown(void)
{
	struct share_claim	 c = good();
	const char		*alpha = ALPHA;
	char			 t[SHARE_TOKEN_MAX + 2];
	size_t			 len, n, i;
	int			 opened = 0;

	share_keys_init();
	len = strlen(make(&c, NAME));
	for (n = 0; n < len; n++)
		if (share_token_open(tok, n, NAME, NOW, &c) == SHARE_OK)
			opened++;
	ok(opened == 0, "no prefix of a token opens");
	for (i = 0; alpha[i] != '\0'; i++) {
		memcpy(t, tok, len);
		t[len] = alpha[i];
		t[len + 1] = '\0';
		if (open_now(t) == SHARE_OK)
			opened++;
	}
	ok(opened == 0, "no token with a character added opens");
}

static void
test_names(void)
{
	struct share_claim	 c = good();

	share_keys_init();
	make(&c, NAME);
	ok(open_at(tok, "other.csv", NOW) == SHARE_FORGED,
	    "another name: forged");
	ok(open_at(tok, "report.cs", NOW) == SHARE_FORGED &&
	    open_at(tok, "report.csvx", NOW) == SHARE_FORGED &&
	    open_at(tok, "", NOW) == SHARE_FORGED,
	    "a name cut or grown, or none: forged");
	ok(open_at(tok, NAME, NOW) == SHARE_OK, "its own name: ok");
}

/* A link is good through the second its expiry names. */
static void
test_expiry(void)
{
	struct share_claim	 c = good(), got;

	share_keys_init();
	make(&c, NAME);
	ok(open_at(tok, NAME, c.expires) == SHARE_OK,
	    "now == expires: still ok");
	ok(share_token_open(tok, strlen(tok), NAME, c.expires + 1, &got) ==
	    SHARE_EXPIRED && claim_eq(&c, &got),
	    "now > expires: expired, the claim given for the audit record");
	ok(open_at(tok, "other.csv", c.expires + 1) == SHARE_FORGED,
	    "expired and under another name: forged first");
	c.expires = NOW - 1;
	make(&c, NAME);
	ok(open_at(tok, NAME, NOW) == SHARE_EXPIRED,
	    "a link made already expired: expired");
}

static void
test_rotation(void)
{
	struct share_claim	 a = good(), b = good();
	char			 ta[SHARE_TOKEN_MAX + 1];
	char			 tb[SHARE_TOKEN_MAX + 1];

	share_keys_init();
	share_keys_rotate(NOW);
	ok(share_keys_count() == 1,
	    "a key that sealed nothing is dropped at the next rotation");

	a.expires = NOW + HOUR;
	memcpy(ta, make(&a, NAME), sizeof(ta));
	share_keys_rotate(NOW + 10);
	ok(share_keys_count() == 2 && open_at(ta, NAME, NOW + 10) ==
	    SHARE_OK, "a rotated key still opens links within their lifetime");
	b.expires = NOW + 2 * HOUR;
	memcpy(tb, make(&b, NAME), sizeof(tb));
	ok(open_at(tb, NAME, NOW + 10) == SHARE_OK,
	    "the new key seals and opens");

	share_keys_rotate(a.expires);
	ok(share_keys_count() == 3 && open_at(ta, NAME, a.expires) ==
	    SHARE_OK, "rotated at its last expiry: the old key stays");
	share_keys_rotate(a.expires + 1);
	ok(share_keys_count() == 2,
	    "rotated past its last expiry: the old key is dropped, "
	    "and the one that sealed nothing");
	ok(open_at(ta, NAME, a.expires + 1) == SHARE_UNKNOWN_KEY,
	    "a link of a rotated-away key: unknown key");
	ok(open_at(tb, NAME, a.expires + 1) == SHARE_OK,
	    "the next key's link still opens");
}

/* The latest expiry a key sealed keeps it, not the first. */
static void
test_rotation_latest(void)
{
	struct share_claim	 c = good();
	char			 t[SHARE_TOKEN_MAX + 1];

	share_keys_init();
	c.expires = NOW + 2 * HOUR;
	memcpy(t, make(&c, NAME), sizeof(t));
	c.expires = NOW + HOUR;
	make(&c, NAME);
	share_keys_rotate(NOW + HOUR + 1);
	ok(share_keys_count() == 2 && open_at(t, NAME, NOW + HOUR + 1) ==
	    SHARE_OK, "a key stays for its latest expiry, not its last link");
}

static void
test_keys_max(void)
{
	struct share_claim	 c = good();
	char			 t[SHARE_KEYS_MAX + 1][SHARE_TOKEN_MAX + 1];
	size_t			 i;
	int			 bad = 0;

	c.expires = NOW + 24 * HOUR;
	share_keys_init();
	memcpy(t[0], make(&c, NAME), sizeof(t[0]));
	for (i = 1; i < SHARE_KEYS_MAX; i++) {
		share_keys_rotate(NOW);
		memcpy(t[i], make(&c, NAME), sizeof(t[i]));
	}
	for (i = 0; i < SHARE_KEYS_MAX; i++)
		if (open_now(t[i]) != SHARE_OK)
			bad++;
	ok(share_keys_count() == SHARE_KEYS_MAX && bad == 0,
	    "%d keys, each within its links' lifetime, all open theirs",
	    SHARE_KEYS_MAX);
	share_keys_rotate(NOW);
	memcpy(t[SHARE_KEYS_MAX], make(&c, NAME), sizeof(t[0]));
	ok(share_keys_count() == SHARE_KEYS_MAX,
	    "one rotation more keeps %d keys", SHARE_KEYS_MAX);
	ok(open_now(t[0]) == SHARE_UNKNOWN_KEY,
	    "the oldest was dropped: unknown key");
	for (bad = 0, i = 1; i <= SHARE_KEYS_MAX; i++)
		if (open_now(t[i]) != SHARE_OK)
			bad++;
	ok(bad == 0, "the other %d still open theirs", SHARE_KEYS_MAX);
}

static void
test_restart(void)
{
	struct share_claim	 c = good();
	const uint8_t		 key[32] = "test_share.c: a known test key";
	const uint8_t		 other[32] = "test_share.c: another test key";

	share_keys_init();
	make(&c, NAME);
	share_keys_init();
	ok(share_keys_count() == 1 && open_now(tok) == SHARE_UNKNOWN_KEY,
	    "a fresh ring (a restart) knows no earlier link");
	share_keys_free();
	ok(share_keys_count() == 0 && open_now(tok) == SHARE_UNKNOWN_KEY,
	    "no ring: unknown key");
	ok(share_token_make(&c, NAME, tok, sizeof(tok)) == -1 &&
	    tok[0] == '\0', "no ring: no token");

	share_keys_set_for_tests(key, 7);
	make(&c, NAME);
	share_keys_set_for_tests(key, 7);
	ok(open_now(tok) == SHARE_OK, "the same known key opens its links");
	share_keys_set_for_tests(key, 8);
	ok(open_now(tok) == SHARE_UNKNOWN_KEY, "under another id: unknown");
	share_keys_set_for_tests(other, 7);
	ok(open_now(tok) == SHARE_FORGED, "another key, the same id: forged");
	share_keys_free();
}

static void
test_spelling(void)
{
	struct share_claim	 c;
	char			 t[2 * SHARE_TOKEN_MAX];
	const char		*paths[] = { "abcd", "abcde", "abcdef" };
	const char		*bad = "+/= .\n\r\t";
	char			*s;
	size_t			 i, len, n;
	int			 seen[3] = { 0, 0, 0 }, fails = 0;

	share_keys_init();
	/* Each remainder of the bytes by 3, so each padding is tried. */
	for (i = 0; i < nitems(paths); i++) {
		c = claim_of("acme", SBX, paths[i]);
		len = strlen(make(&c, NAME));
		seen[len % 4 == 0 ? 0 : len % 4 - 1]++;
		snprintf(t, sizeof(t), "%s=", tok);
		fails += open_now(t) != SHARE_MALFORMED;
		snprintf(t, sizeof(t), "%s==", tok);
		fails += open_now(t) != SHARE_MALFORMED;
		if (len % 4 != 0) {
			snprintf(t, sizeof(t), "%s%.*s", tok,
			    (int)(4 - len % 4), "===");
			fails += open_now(t) != SHARE_MALFORMED;
		}
	}
	ok(fails == 0 && seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
	    "padding of every length refused: malformed");

	c = good();
	len = strlen(make(&c, NAME));
	for (fails = 0, i = 0; i < len; i += len / 8) {
		for (n = 0; bad[n] != '\0'; n++) {
			memcpy(t, tok, len + 1);
			t[i] = bad[n];
			fails += open_now(t) != SHARE_MALFORMED;
		}
	}
	ok(fails == 0, "'+', '/', '=', a space or a line end: malformed");

	/* The standard alphabet's spelling of the same bytes. */
	memcpy(t, tok, len + 1);
	for (n = 0, s = t; *s != '\0'; s++) {
		if (*s == '-' || *s == '_') {
			*s = *s == '-' ? '+' : '/';
			n++;
		}
	}
	if (n == 0)
		t[0] = '+';
	ok(open_now(t) == SHARE_MALFORMED, "the standard alphabet: malformed");

	memcpy(t, tok, len + 1);
	t[len / 2] = '\0';
	ok(share_token_open(t, len, NAME, NOW, &c) == SHARE_MALFORMED,
	    "a NUL inside: malformed");
	ok(share_token_open("", 0, NAME, NOW, &c) == SHARE_MALFORMED &&
	    share_token_open("A", 1, NAME, NOW, &c) == SHARE_MALFORMED &&
	    share_token_open("AAAA", 4, NAME, NOW, &c) == SHARE_MALFORMED,
	    "empty, 1 or 4 characters: malformed");
	memset(t, 'A', SHARE_TOKEN_MAX + 1);
	t[SHARE_TOKEN_MAX + 1] = '\0';
	ok(share_token_open(t, SHARE_TOKEN_MAX + 1, NAME, NOW, &c) ==
	    SHARE_MALFORMED && share_token_open(t, SHARE_TOKEN_MAX, NAME, NOW,
	    &c) == SHARE_MALFORMED,
	    "SHARE_TOKEN_MAX + 1 characters, or a decoding past the longest: "
	    "malformed");
	ok(share_token_open(t, SIZE_MAX, NAME, NOW, &c) == SHARE_MALFORMED,
	    "a length of SIZE_MAX: malformed, nothing read");
}

/* The head of a token right, the rest short or garbage. */
static void
test_short_and_garbage(void)
{
	struct share_claim	 c = good();
	uint8_t			 raw[1024];
	char			 t[SHARE_TOKEN_MAX + 1];
	size_t			 len, n;
	int			 fails = 0;

	share_keys_init();
	len = unb64(make(&c, NAME), raw, sizeof(raw));
	for (n = 1; n < len; n++) {
		b64(raw, n, t, sizeof(t));
		if (open_now(t) == SHARE_OK)
			fails++;
	}
	ok(fails == 0, "no cut of the bytes opens");
	/* The shortest claim sealed is 115 bytes; below that, unopened. */
	b64(raw, 114, t, sizeof(t));
	ok(open_now(t) == SHARE_MALFORMED, "too short to hold a claim: "
	    "malformed before any key is looked at");
	b64(raw, 115, t, sizeof(t));
	ok(open_now(t) == SHARE_FORGED, "long enough, the tag wrong: forged");
	randombytes_buf(raw + RAW_HEAD, len - RAW_HEAD);
	b64(raw, len, t, sizeof(t));
	ok(open_now(t) == SHARE_FORGED, "random bytes after the head: forged");
}

/*
 * The claim's encoding as share.c's comment gives it, with the fields
 * given, valid or not.
 */
struct enc {
	uint8_t		 b[4096];
	size_t		 len;
};

static void
enc_uint(struct enc *e, uint64_t v, size_t n)
{
	while (n-- > 0)
		e->b[e->len++] = (uint8_t)(v >> (8 * n));
}

static void
enc_str(struct enc *e, const char *s, size_t len, size_t lenbytes)
{
	enc_uint(e, len, lenbytes);
	memcpy(e->b + e->len, s, len);
	e->len += len;
}

static void
enc_claim_n(struct enc *e, const char *tenant, size_t tlen,
    const char *sandbox, size_t slen, const char *path, size_t plen)
{
	struct share_claim	 c = good();

	e->len = 0;
	enc_str(e, tenant, tlen, 1);
	enc_str(e, sandbox, slen, 1);
	enc_str(e, path, plen, 2);
	enc_uint(e, c.ino, 8);
	enc_uint(e, c.size, 8);
	enc_uint(e, (uint64_t)c.ctime_ns, 8);
	enc_uint(e, (uint64_t)c.expires, 8);
}

static void
enc_claim(struct enc *e, const char *tenant, const char *sandbox,
    const char *path)
{
	enc_claim_n(e, tenant, strlen(tenant), sandbox, strlen(sandbox), path,
	    strlen(path));
}

static int
decodes(const struct enc *e)
{
	struct share_claim	 c;
	int			 rc;

	memset(&c, 'x', sizeof(c));
	rc = share_claim_decode(e->b, e->len, &c);
	if (rc == -1 && !claim_zero(&c))
		return 2;		/* a refusal must leave nothing */
	return rc == 0;
}

static void
test_format(void)
{
	struct share_claim	 c = good(), got;
	struct enc		 e;
	uint8_t			 buf[SHARE_CLAIM_MAX];
	size_t			 len, n;
	int			 fails = 0;

	enc_claim(&e, c.tenant, c.sandbox, c.path);
	ok(share_claim_encode(&c, buf, &len) == 0 && len == e.len &&
	    memcmp(buf, e.b, len) == 0,
	    "the encoding is the one share.c documents");
	ok(share_claim_decode(e.b, e.len, &got) == 0 && claim_eq(&c, &got),
	    "and decodes to the claim");
	for (n = 0; n < e.len; n++) {
		struct enc	 cut = e;

		cut.len = n;
		fails += decodes(&cut) != 0;
	}
	ok(fails == 0, "no prefix of it decodes");
	e.b[e.len++] = 0;
	ok(decodes(&e) == 0, "a byte after it: refused");

	enc_claim(&e, "acme", SBX, "a");
	e.b[1 + 4 + 1 + 32] = 0xff;
	e.b[1 + 4 + 1 + 32 + 1] = 0xff;
	ok(decodes(&e) == 0, "a path length past the end: refused");
	enc_claim(&e, "acme", SBX, "a");
	e.b[0] = 0xff;
	ok(decodes(&e) == 0, "a tenant length past the end: refused");
	enc_claim_n(&e, "ac\0e", 4, SBX, 32, "a", 1);
	ok(decodes(&e) == 0, "a NUL in the tenant: refused");
	enc_claim_n(&e, "acme", 4, "0123456789abcdef\0" "123456789abcdef",
	    32, "a", 1);
	ok(decodes(&e) == 0, "a NUL in the sandbox: refused");
	enc_claim_n(&e, "acme", 4, SBX, 32, "a\0b", 3);
	ok(decodes(&e) == 0, "a NUL in the path: refused");
	enc_claim_n(&e, "acme", 4, SBX, 32, "a\0", 2);
	ok(decodes(&e) == 0, "a NUL ending the path: refused");
}

/* A string too long for its array fills it, without a NUL. */
static void
set(char *dst, size_t size, const char *s)
{
	if (strlen(s) >= size)
		memcpy(dst, s, size);
	else
		strcpy(dst, s);
}

/* Claims share_token_make() refuses, and the decoder too. */
static void
test_claims(void)
{
	static char	 t64[NAME_LEN + 1], t63[NAME_LEN];
	static char	 plong[SHARE_PATH_MAX + 2], pmax[SHARE_PATH_MAX + 1];
	static char	 p1023[1024];
	struct {
		const char	*tenant, *sandbox, *path, *what;
	} bad[] = {
		{ "../x", SBX, "a", "tenant ../x" },
		{ "", SBX, "a", "empty tenant" },
		{ "-acme", SBX, "a", "tenant starting with '-'" },
		{ "ac me", SBX, "a", "tenant with a space" },
		{ t64, SBX, "a", "tenant of 64 characters" },
		{ "acme", "0123456789abcdef0123456789abcde", "a",
		    "sandbox of 31 digits" },
		{ "acme", SBX "0", "a", "sandbox of 33 digits" },
		{ "acme", "0123456789abcdef0123456789abcdeg", "a",
		    "sandbox with a non-hex character" },
		{ "acme", "0123456789ABCDEF0123456789ABCDEF", "a",
		    "sandbox in uppercase" },
		{ "acme", "", "a", "empty sandbox" },
		{ "acme", SBX, "/etc/passwd", "path /etc/passwd" },
		{ "acme", SBX, "a/../b", "path a/../b" },
		{ "acme", SBX, "a//b", "path a//b" },
		{ "acme", SBX, "./a", "path ./a" },
		{ "acme", SBX, "", "empty path" },
		{ "acme", SBX, "..", "path .." },
		{ "acme", SBX, ".", "path ." },
		{ "acme", SBX, "a/", "path a/" },
		{ "acme", SBX, "a/.", "path a/." },
		{ "acme", SBX, "a/..", "path a/.." },
		{ "acme", SBX, "/", "path /" },
		{ "acme", SBX, plong, "path of SHARE_PATH_MAX + 1 bytes" },
		{ "acme", SBX, p1023, "path of 1023 bytes" },
	};
	struct {
		const char	*tenant, *path, *what;
	} fine[] = {
		{ t63, "a", "tenant of 63 characters" },
		{ "a.b_c-D9", "a", "tenant of every class of character" },
		{ "acme", "..a/.b/c..", "path of names beginning with dots" },
		{ "acme", "a b/\xc3\xa9t\xc3\xa9.csv", "path with UTF-8" },
		{ "acme", pmax, "path of SHARE_PATH_MAX bytes" },
	};
	struct share_claim	 c;
	struct enc		 e;
	uint8_t			 buf[SHARE_CLAIM_MAX];
	size_t			 i, len;

	memset(t64, 'a', sizeof(t64) - 1);
	memset(t63, 'a', sizeof(t63) - 1);
	memset(plong, 'p', sizeof(plong) - 1);
	memset(pmax, 'p', sizeof(pmax) - 1);
	memset(p1023, 'p', sizeof(p1023) - 1);
	share_keys_init();
	for (i = 0; i < nitems(bad); i++) {
		c = good();
		set(c.tenant, sizeof(c.tenant), bad[i].tenant);
		set(c.sandbox, sizeof(c.sandbox), bad[i].sandbox);
		set(c.path, sizeof(c.path), bad[i].path);
		enc_claim(&e, bad[i].tenant, bad[i].sandbox, bad[i].path);
		ok(share_token_make(&c, NAME, tok, sizeof(tok)) == -1 &&
		    share_claim_encode(&c, buf, &len) == -1 && decodes(&e) == 0,
		    "%s: refused to make, encode and decode", bad[i].what);
	}
	for (i = 0; i < nitems(fine); i++) {
		c = claim_of(fine[i].tenant, SBX, fine[i].path);
		enc_claim(&e, fine[i].tenant, SBX, fine[i].path);
		ok(share_token_make(&c, NAME, tok, sizeof(tok)) == 0 &&
		    open_now(tok) == SHARE_OK && decodes(&e) == 1,
		    "%s: taken", fine[i].what);
	}

	c = good();
	memset(c.tenant, 'a', sizeof(c.tenant));
	ok(share_token_make(&c, NAME, tok, sizeof(tok)) == -1,
	    "a tenant without its NUL: refused");
	c = good();
	memset(c.sandbox, 'a', sizeof(c.sandbox));
	ok(share_token_make(&c, NAME, tok, sizeof(tok)) == -1,
	    "a sandbox without its NUL: refused");
	c = good();
	memset(c.path, 'a', sizeof(c.path));
	ok(share_token_make(&c, NAME, tok, sizeof(tok)) == -1,
	    "a path without its NUL: refused");
}

static void
test_longest(void)
{
	struct share_claim	 c, got;
	char			 t63[NAME_LEN];
	char			 p[SHARE_PATH_MAX + 1];
	uint8_t			 buf[SHARE_CLAIM_MAX];
	size_t			 len;

	memset(t63, 'a', sizeof(t63) - 1);
	t63[sizeof(t63) - 1] = '\0';
	memset(p, 'p', sizeof(p) - 1);
	p[sizeof(p) - 1] = '\0';
	c = claim_of(t63, SBX, p);
	ok(share_claim_encode(&c, buf, &len) == 0 && len == SHARE_CLAIM_MAX,
	    "the longest claim encodes in SHARE_CLAIM_MAX bytes");
	share_keys_init();
	make(&c, NAME);
	ok(strlen(tok) <= SHARE_TOKEN_MAX, "the longest claim's token, "
	    "%zu characters, fits SHARE_TOKEN_MAX (%d)", strlen(tok),
	    SHARE_TOKEN_MAX);
	ok(share_token_open(tok, strlen(tok), NAME, NOW, &got) == SHARE_OK &&
	    claim_eq(&c, &got), "and opens to it");
}

static void
test_error_str(void)
{
	enum share_error	 e;
	const char		*s[SHARE_EXPIRED + 1];
	int			 fails = 0;

	for (e = SHARE_OK; e <= SHARE_EXPIRED; e++) {
		s[e] = share_error_str(e);
		if (s[e] == NULL || *s[e] == '\0' ||
		    (e > 0 && strcmp(s[e], s[e - 1]) == 0))
			fails++;
	}
	ok(fails == 0, "every error has words of its own");
}

int
main(void)
{
	if (sodium_init() == -1)
		errx(1, "sodium_init");
	test_round_trip();
	test_outlen();
	test_bit_flips();
	test_char_flips();
	test_cut_and_grown();
	test_names();
	test_expiry();
	test_rotation();
	test_rotation_latest();
	test_keys_max();
	test_restart();
	test_spelling();
	test_short_and_garbage();
	test_format();
	test_claims();
	test_longest();
	test_error_str();
	share_keys_free();
	return tap_done();
}
