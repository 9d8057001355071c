/*
 * Fuzz target: JWT access tokens and key sets (mcpd/jwt.c).  The input's
 * own JWKS, if it parses, and a token verified against it and against a
 * set built in.  A fuzzer cannot forge a signature, so to reach what
 * lies behind one the input may instead give a header and a payload in
 * JSON, which the harness encodes and signs with the built-in set's
 * Ed25519 key.  A token that verifies must carry what was wanted, and
 * OpenSSL's error queue must be left empty.
 *
 * Input: a flags byte, a 2-byte big-endian length and that many bytes of
 * JWKS (0: no set of its own), then the token: as a client sends it, or
 * with FL_SIGN the header, a NUL and the payload.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <sodium.h>

#include "fuzz.h"
#include "log.h"
#include "util.h"
#include "../../mcpd/jwt.h"

#define FL_SIGN		0x01	/* header NUL payload, signed here */
#define FL_TYP		0x02	/* want typ at+jwt */
#define FL_LEEWAY	0x04	/* 60 s of leeway */
#define FL_SHORTKID	0x08	/* a kid_out of 4 bytes */

#define FUZZ_ISS	"https://issuer.example"
#define FUZZ_AUD	"mcpd"
#define FUZZ_NOW	1700000000

/* Not a secret: the seed of the harness's own Ed25519 key. */
static const uint8_t	 ed_seed[32] = "fuzz_jwt.c: a seed, not secret";

/* Keys nobody holds the private half of, beside the Ed25519 one. */
#define FUZZ_JWKS \
	"{\"keys\":[" \
	"{\"kty\":\"RSA\",\"kid\":\"rsa\",\"use\":\"sig\",\"e\":\"AQAB\"," \
	"\"n\":\"3_Dp9pHHYJcsBQJ7U9kWwUdWVtZro6cHUf6gbuV0fkVo0LQbNXSt92mI6" \
	"AHTpsqjwOQcTkGf7yGSO3zOUMCoMBtk_dmyvXcXgJXOgSeH8mi5sG21bPW6qMkOg3" \
	"cWsrV48AuYYlbrVaamGdEOb7w3YP9jHa2tK9U4JeZl_QuzbWJ4ol0pzCXvq-72WWG" \
	"YgX1iDjPPBtrSVWOEXgebaCAcKIDohoCkEZgEcpE5W5SZuGID_1d44TYYQFhCM_hB" \
	"MZf9FfJzzvScb5N6Tr0PWpYGhG2my6oxm7z3y-GKyXwlEt579k_fL8-8YjTFFJsLv" \
	"fhfRXeXZe7lzxubJfLZr6BXow\"}," \
	"{\"kty\":\"EC\",\"kid\":\"p256\",\"crv\":\"P-256\"," \
	"\"alg\":\"ES256\"," \
	"\"x\":\"OHsxdCJor2Su_ieCcy3aJQVI2GaP3cdw8tXIz1DJpek\"," \
	"\"y\":\"GV8HnipJlL8W95RGkSORt9Sjmz6VbaVpfyuQfnY8r6o\"}," \
	"{\"kty\":\"EC\",\"kid\":\"p384\",\"crv\":\"P-384\"," \
	"\"x\":\"AhSs9i5nU1-Bo0qaNLZ6LU7RaTckoyouEAHEh0sUAj43OXpl6Iy3" \
	"zEJc_-GPai8J\"," \
	"\"y\":\"pa29AtpviDrmw8-sr2LZqmJ1wCRo0q88Ysn1t-r_HErIjHP_ixQ7" \
	"YO1BbPB85410\"}," \
	"{\"kty\":\"OKP\",\"kid\":\"fuzz-ed\",\"crv\":\"Ed25519\"," \
	"\"x\":\"%s\"}]}"

static EVP_PKEY		*ed_key;
static struct jwks	*builtin;

static char *
b64url(const uint8_t *p, size_t len)
{
	size_t	 n = sodium_base64_encoded_len(len,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char	*s = xmalloc(n);

	return sodium_bin2base64(s, n, p, len,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t	 pub[32];
	size_t	 len = sizeof(pub);
	char	*x, *doc, err[256];

	if ((ed_key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL,
	    ed_seed, sizeof(ed_seed))) == NULL ||
	    EVP_PKEY_get_raw_public_key(ed_key, pub, &len) != 1)
		fatalx("the harness's Ed25519 key");
	x = b64url(pub, len);
	xasprintf(&doc, FUZZ_JWKS, x);
	if ((builtin = jwks_parse(doc, strlen(doc), err, sizeof(err))) ==
	    NULL || jwks_count(builtin) != 4)
		fatalx("the harness's JWKS: %s", err);
	free(x);
	free(doc);
	return 0;
}

/* header.payload of the input's JSON, signed with the Ed25519 key. */
static char *
sign(const uint8_t *p, size_t len)
{
	const uint8_t	*nul = memchr(p, '\0', len);
	size_t		 hlen = nul != NULL ? (size_t)(nul - p) : len;
	char		*h, *pl, *in, *s, *tok;
	uint8_t		 sig[64];
	size_t		 siglen = sizeof(sig);
	EVP_MD_CTX	*ctx;

	h = b64url(p, hlen);
	pl = nul != NULL ? b64url(nul + 1, len - hlen - 1) : xstrdup("");
	xasprintf(&in, "%s.%s", h, pl);
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(ctx, NULL, NULL, NULL, ed_key) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, (const uint8_t *)in,
	    strlen(in)) != 1)
		fatalx("signing with the harness's key");
	EVP_MD_CTX_free(ctx);
	s = b64url(sig, siglen);
	xasprintf(&tok, "%s.%s", in, s);
	free(h);
	free(pl);
	free(in);
	free(s);
	return tok;
}

/* What verified claims must hold; the claim helpers on them. */
static void
claims_check(json_t *claims, const struct jwt_want *w)
{
	const char	*iss = json_string_value(json_object_get(claims,
			    "iss"));

	if (!json_is_object(claims) || iss == NULL ||
	    strcmp(iss, w->issuer) != 0 ||
	    !jwt_claim_has(claims, "aud", w->audience) ||
	    !json_is_number(json_object_get(claims, "exp")))
		abort();
	(void)jwt_has_scope(claims, "tools");
	(void)jwt_has_scope(claims, "a");
	(void)jwt_has_scope(claims, "");
	(void)jwt_claim_has(claims, "sub", "alice");
	(void)jwt_claim_has(claims, "groups", "admin");
}

static void
verify(const char *tok, size_t len, const struct jwks *set,
    const struct jwt_want *w, size_t kidlen)
{
	json_t		*claims = NULL;
	char		 kid[256];
	enum jwt_error	 e;

	memset(kid, 'x', sizeof(kid));
	e = jwt_verify(tok, len, set, w, &claims, kid, kidlen);
	if (memchr(kid, '\0', kidlen) == NULL ||
	    jwt_error_str(e) == NULL || ERR_peek_error() != 0)
		abort();
	if (e == JWT_OK)
		claims_check(claims, w);
	else if (claims != NULL)
		abort();
	json_decref(claims);
	(void)jwks_has_kid(set, kid);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in	 in = { data, size };
	struct jwt_want	 w = { FUZZ_ISS, FUZZ_AUD, NULL, FUZZ_NOW, 0 };
	struct jwks	*own;
	const uint8_t	*jwks, *tok;
	uint8_t		 flags = fuzz_u8(&in);
	size_t		 jlen, tlen, kidlen;
	char		*signed_tok = NULL;

	jwks = fuzz_bytes(&in, fuzz_u16(&in), &jlen);
	tok = fuzz_bytes(&in, in.left, &tlen);
	if (flags & FL_TYP)
		w.typ = "at+jwt";
	if (flags & FL_LEEWAY)
		w.leeway = 60;
	kidlen = flags & FL_SHORTKID ? 4 : 256;
	if (flags & FL_SIGN) {
		signed_tok = sign(tok, tlen);
		tok = (const uint8_t *)signed_tok;
		tlen = strlen(signed_tok);
	}
	own = jlen > 0 ? jwks_parse((const char *)jwks, jlen, NULL, 0) :
	    NULL;
	if (ERR_peek_error() != 0)
		abort();
	if (own != NULL) {
		if (jwks_count(own) == 0 || jwks_count(own) > JWKS_MAX_KEYS ||
		    jwks_count(own) + jwks_skipped(own) > jlen)
			abort();
		verify((const char *)tok, tlen, own, &w, kidlen);
		jwks_free(own);
	}
	verify((const char *)tok, tlen, builtin, &w, kidlen);
	free(signed_tok);
	return 0;
}
