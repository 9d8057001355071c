/*
 * Fuzz target: download link tokens (mcpd/share.c), with a key ring of
 * one key known here (fuzz_share.h).  The input is, three ways:
 *
 *  - a token from a URL, opened;
 *  - a claim's encoding, decoded directly;
 *  - the plaintext of a token sealed here with the ring's key, since a
 *    fuzzer cannot make a tag that holds, and the decoding behind one
 *    must be as strict as the decoding before it.
 *
 * And: what opens is a valid claim, OK only up to its expiry, and opens
 * under no other name; what fails leaves the claim zeroed; what decodes
 * encodes back to the same bytes (one spelling), and makes a token that
 * opens to it; a sealed plaintext opens exactly when it decodes.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "fuzz.h"
#include "fuzz_share.h"
#include "log.h"
#include "util.h"
#include "../../mcpd/share.h"

#define OTHER_NAME	"report.csv.html"
#define VERSION		1	/* as share.c's format has it */
#define NONCE_LEN	crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_LEN		crypto_aead_xchacha20poly1305_ietf_ABYTES
#define HEAD_LEN	5

static const uint8_t	 key[32] = FUZZ_SHARE_KEY;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (sodium_init() == -1)
		fatalx("sodium_init");
	share_keys_set_for_tests(key, FUZZ_SHARE_ID);
	return 0;
}

static int
claim_zero(const struct share_claim *c)
{
	static const struct share_claim	 zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
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

/* A token opened, what it gave checked. */
static enum share_error
open_token(const char *tok, size_t len, struct share_claim *c)
{
	struct share_claim	 other;
	uint8_t			 enc[SHARE_CLAIM_MAX];
	size_t			 n;
	enum share_error	 e;

	e = share_token_open(tok, len, FUZZ_SHARE_NAME, FUZZ_SHARE_NOW, c);
	switch (e) {
	case SHARE_OK:
	case SHARE_EXPIRED:
		if (share_claim_encode(c, enc, &n) == -1 ||
		    (e == SHARE_OK) != (FUZZ_SHARE_NOW <= c->expires))
			abort();
		if (share_token_open(tok, len, OTHER_NAME, FUZZ_SHARE_NOW,
		    &other) != SHARE_FORGED || !claim_zero(&other))
			abort();
		break;
	case SHARE_MALFORMED:
	case SHARE_UNKNOWN_KEY:
	case SHARE_FORGED:
		if (!claim_zero(c))
			abort();
		break;
	default:
		abort();
	}
	if (share_error_str(e) == NULL)
		abort();
	return e;
}

static void
decode(const uint8_t *data, size_t size)
{
	struct share_claim	 c, got;
	uint8_t			 enc[SHARE_CLAIM_MAX];
	char			 tok[SHARE_TOKEN_MAX + 1];
	size_t			 n;
	enum share_error	 e;

	if (share_claim_decode(data, size, &c) == -1) {
		if (!claim_zero(&c))
			abort();
		return;
	}
	if (share_claim_encode(&c, enc, &n) == -1 || n != size ||
	    memcmp(enc, data, n) != 0)
		abort();
	if (share_token_make(&c, FUZZ_SHARE_NAME, tok, sizeof(tok)) == -1)
		abort();
	e = open_token(tok, strlen(tok), &got);
	if ((e != SHARE_OK && e != SHARE_EXPIRED) || !claim_eq(&c, &got))
		abort();
}

/* The bytes as a token's plaintext, sealed as share.c seals a claim. */
static void
seal(const uint8_t *data, size_t size)
{
	struct share_claim	 c, want;
	uint8_t			*raw, ad[HEAD_LEN + sizeof(FUZZ_SHARE_NAME)];
	size_t			 rawlen, toklen;
	char			*tok;
	enum share_error	 e;

	rawlen = HEAD_LEN + NONCE_LEN + size + TAG_LEN;
	raw = xmalloc(rawlen);
	raw[0] = VERSION;
	raw[1] = (uint8_t)(FUZZ_SHARE_ID >> 24);
	raw[2] = (uint8_t)(FUZZ_SHARE_ID >> 16);
	raw[3] = (uint8_t)(FUZZ_SHARE_ID >> 8);
	raw[4] = (uint8_t)FUZZ_SHARE_ID;
	memset(raw + HEAD_LEN, 0, NONCE_LEN);
	memcpy(ad, raw, HEAD_LEN);
	memcpy(ad + HEAD_LEN, FUZZ_SHARE_NAME, sizeof(FUZZ_SHARE_NAME) - 1);
	crypto_aead_xchacha20poly1305_ietf_encrypt(raw + HEAD_LEN + NONCE_LEN,
	    NULL, data, size, ad, sizeof(ad) - 1, NULL, raw + HEAD_LEN, key);
	toklen = sodium_base64_encoded_len(rawlen,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	tok = xmalloc(toklen);
	sodium_bin2base64(tok, toklen, raw, rawlen,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);

	e = open_token(tok, strlen(tok), &c);
	if (share_claim_decode(data, size, &want) == 0) {
		if ((e != SHARE_OK && e != SHARE_EXPIRED) ||
		    !claim_eq(&c, &want))
			abort();
	} else if (e != SHARE_MALFORMED)
		abort();
	free(tok);
	free(raw);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct share_claim	 c;
	char			*tok;

	/* A buffer of its own, so that a read past the token is caught. */
	tok = xmalloc(size == 0 ? 1 : size);
	memcpy(tok, data, size);
	open_token(tok, size, &c);
	free(tok);
	decode(data, size);
	seal(data, size);
	return 0;
}
