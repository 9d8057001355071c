/*
 * JWT access tokens (mcpd/jwt.c): keys made here with OpenSSL, published
 * as a JWKS, tokens signed here with each algorithm, and every way a
 * token can be wrong or forged, down to the base64url spelling.
 */
#include <sys/types.h>

#include <err.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <sodium.h>

#include "../../mcpd/jwt.h"
#include "../tap.h"

#define NOW	1700000000LL
#define ISS	"https://issuer.example"
#define AUD	"mcpd"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static EVP_PKEY			*rsa, *rsa1024, *p256, *p256b, *p384, *ed;
static EVP_PKEY			*evil;		/* in no set */
static struct jwks		*set;
static const struct jwt_want	 want = { ISS, AUD, NULL, NOW, 0 };

static char *
fmt(const char *f, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) == -1)
		err(1, "vasprintf");
	va_end(ap);
	return s;
}

static char *
b64url(const void *p, size_t len)
{
	size_t	 n = sodium_base64_encoded_len(len,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char	*s;

	if ((s = malloc(n)) == NULL)
		err(1, NULL);
	return sodium_bin2base64(s, n, p, len,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static uint8_t *
unb64url(const char *s, size_t *len)
{
	uint8_t	*buf;

	if ((buf = malloc(strlen(s) + 1)) == NULL)
		err(1, NULL);
	if (sodium_base642bin(buf, strlen(s) + 1, s, strlen(s), NULL, len,
	    NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
		errx(1, "test's own base64url");
	return buf;
}

static char *
bn_b64url(EVP_PKEY *k, const char *param, size_t pad)
{
	BIGNUM	*bn = NULL;
	uint8_t	 buf[2048];
	char	*s;
	int	 n;

	if (EVP_PKEY_get_bn_param(k, param, &bn) != 1)
		errx(1, "EVP_PKEY_get_bn_param %s", param);
	n = pad ? BN_bn2binpad(bn, buf, (int)pad) : BN_bn2bin(bn, buf);
	BN_free(bn);
	if (n <= 0)
		errx(1, "BN_bn2bin %s", param);
	s = b64url(buf, (size_t)n);
	return s;
}

/* The public half of a key as a JWK, extra members ("," first) added. */
static char *
jwk(EVP_PKEY *k, const char *kid, const char *extra)
{
	char	*a, *b, *s;
	uint8_t	 raw[32];
	size_t	 len = sizeof(raw);

	if (EVP_PKEY_is_a(k, "RSA")) {
		a = bn_b64url(k, OSSL_PKEY_PARAM_RSA_N, 0);
		b = bn_b64url(k, OSSL_PKEY_PARAM_RSA_E, 0);
		s = fmt("{\"kty\":\"RSA\",\"kid\":\"%s\",\"n\":\"%s\","
		    "\"e\":\"%s\"%s}", kid, a, b, extra);
	} else if (EVP_PKEY_is_a(k, "EC")) {
		size_t	 size = EVP_PKEY_get_bits(k) / 8;

		a = bn_b64url(k, OSSL_PKEY_PARAM_EC_PUB_X, size);
		b = bn_b64url(k, OSSL_PKEY_PARAM_EC_PUB_Y, size);
		s = fmt("{\"kty\":\"EC\",\"kid\":\"%s\",\"crv\":\"P-%zu\","
		    "\"x\":\"%s\",\"y\":\"%s\"%s}", kid, size * 8, a, b,
		    extra);
	} else {
		if (EVP_PKEY_get_raw_public_key(k, raw, &len) != 1)
			errx(1, "EVP_PKEY_get_raw_public_key");
		a = b64url(raw, len);
		b = NULL;
		s = fmt("{\"kty\":\"OKP\",\"kid\":\"%s\",\"crv\":\"Ed25519\","
		    "\"x\":\"%s\"%s}", kid, a, extra);
	}
	free(a);
	free(b);
	return s;
}

static const char *
alg_md(const char *alg)
{
	if (strstr(alg, "256") != NULL)
		return "SHA256";
	if (strstr(alg, "384") != NULL)
		return "SHA384";
	if (strstr(alg, "512") != NULL)
		return "SHA512";
	return NULL;
}

/* JWS's r||s of OpenSSL's DER signature. */
static void
ecdsa_raw(uint8_t *sig, size_t *len, size_t half)
{
	const unsigned char	*p = sig;
	const BIGNUM		*r, *s;
	ECDSA_SIG		*es;

	if ((es = d2i_ECDSA_SIG(NULL, &p, (long)*len)) == NULL)
		errx(1, "d2i_ECDSA_SIG");
	ECDSA_SIG_get0(es, &r, &s);
	if (BN_bn2binpad(r, sig, (int)half) != (int)half ||
	    BN_bn2binpad(s, sig + half, (int)half) != (int)half)
		errx(1, "BN_bn2binpad");
	ECDSA_SIG_free(es);
	*len = 2 * half;
}

/* The HMAC secret of the classic confusion: the RSA key's public n. */
static uint8_t *
hmac(const char *in, size_t *len)
{
	uint8_t	*out;
	char	*n = bn_b64url(rsa, OSSL_PKEY_PARAM_RSA_N, 0);

	if ((out = malloc(64)) == NULL ||
	    EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, n, strlen(n),
	    (const unsigned char *)in, strlen(in), out, 64, len) == NULL)
		errx(1, "EVP_Q_mac");
	free(n);
	return out;
}

static uint8_t *
sign(const char *alg, EVP_PKEY *k, const char *in, size_t *len)
{
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx;
	uint8_t		*sig;

	if (strcmp(alg, "none") == 0 || k == NULL) {
		*len = 0;
		return calloc(1, 1);
	}
	if (alg[0] == 'H')
		return hmac(in, len);
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit_ex(ctx, &pctx, alg_md(alg), NULL, NULL, k,
	    NULL) != 1 ||
	    (alg[0] == 'P' &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) <=
	    0)) ||
	    EVP_DigestSign(ctx, NULL, len, (const uint8_t *)in,
	    strlen(in)) != 1 || (sig = malloc(*len + 96)) == NULL ||
	    EVP_DigestSign(ctx, sig, len, (const uint8_t *)in,
	    strlen(in)) != 1)
		errx(1, "signing %s", alg);
	EVP_MD_CTX_free(ctx);
	/* The key's size, not the alg's: some tokens lie about it. */
	if (EVP_PKEY_is_a(k, "EC"))
		ecdsa_raw(sig, len, (size_t)EVP_PKEY_get_bits(k) / 8);
	return sig;
}

/* A token of this header and payload, signed as alg says by k. */
static char *
token(const char *alg, EVP_PKEY *k, const char *header, const char *payload)
{
	char	*h = b64url(header, strlen(header));
	char	*p = b64url(payload, strlen(payload));
	char	*in = fmt("%s.%s", h, p), *s, *t;
	uint8_t	*sig;
	size_t	 len;

	sig = sign(alg, k, in, &len);
	s = b64url(sig, len);
	t = fmt("%s.%s", in, s);
	free(h);
	free(p);
	free(in);
	free(sig);
	free(s);
	return t;
}

static char *
header(const char *alg, const char *kid)
{
	if (kid == NULL)
		return fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\"}", alg);
	return fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\",\"kid\":\"%s\"}", alg,
	    kid);
}

/* Claims that pass, with more members (",..." ) or in place of some. */
static char *
claims(const char *extra)
{
	return fmt("{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\","
	    "\"sub\":\"alice\",\"exp\":%lld,\"iat\":%lld,\"scope\":\"a b\""
	    "%s}", NOW + 600, NOW - 10, extra);
}

static enum jwt_error
verify_with(const char *tok, const struct jwks *keys,
    const struct jwt_want *w)
{
	return jwt_verify(tok, strlen(tok), keys, w, NULL, NULL, 0);
}

/* Sign, verify against the set as w wants, and forget the token. */
static enum jwt_error
try(const char *alg, EVP_PKEY *k, const char *hdr, const char *payload,
    const struct jwt_want *w)
{
	char		*t = token(alg, k, hdr, payload);
	enum jwt_error	 e = verify_with(t, set, w);

	free(t);
	return e;
}

/* The same, the header and payload made here and freed. */
static enum jwt_error
try_owned(const char *alg, EVP_PKEY *k, char *hdr, char *payload,
    const struct jwt_want *w)
{
	enum jwt_error	 e = try(alg, k, hdr, payload, w);

	free(hdr);
	free(payload);
	return e;
}

static enum jwt_error
try_claims(const char *extra, const struct jwt_want *w)
{
	return try_owned("ES256", p256, header("ES256", "ec1"),
	    claims(extra), w);
}

static void
keys_make(void)
{
	char	*k[10], *doc;
	size_t	 i;

	if ((rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)) ==
	    NULL ||
	    (rsa1024 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024)) ==
	    NULL ||
	    (evil = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)) ==
	    NULL ||
	    (p256 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")) == NULL ||
	    (p256b = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")) == NULL ||
	    (p384 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384")) == NULL ||
	    (ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL)
		errx(1, "key generation");
	k[0] = jwk(rsa, "rsa1", ",\"use\":\"sig\"");
	k[1] = jwk(p256, "ec1", ",\"alg\":\"ES256\"");
	k[2] = jwk(p256b, "ec2", ",\"key_ops\":[\"sign\",\"verify\"]");
	k[3] = jwk(p384, "ec384", "");
	k[4] = jwk(ed, "ed1", ",\"d\":\"private-members-are-ignored\"");
	k[5] = jwk(rsa1024, "small", "");
	k[6] = jwk(rsa, "enc", ",\"use\":\"enc\"");
	k[7] = jwk(p256, "ops", ",\"key_ops\":[\"encrypt\"]");
	k[8] = fmt("{\"kty\":\"oct\",\"kid\":\"hmac\",\"k\":\"c2VjcmV0\"}");
	k[9] = jwk(rsa, "mismatch", ",\"alg\":\"ES256\"");
	doc = fmt("{\"keys\":[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]}", k[0], k[1],
	    k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9]);
	for (i = 0; i < nitems(k); i++)
		free(k[i]);
	set = jwks_parse(doc, strlen(doc), NULL, 0);
	free(doc);
}

/* Documents that are no usable JWKS. */
static const char *bad_jwks[] = {
	"", "{", "[]", "{}", "{\"keys\":{}}", "{\"keys\":[]}",
	"{\"keys\":[1,\"x\",null]}",
	"{\"keys\":[],\"keys\":[]}",
	"{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-521\"}]}",
	"{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed448\",\"x\":\"AA\"}]}",
	"{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
	    "\"x\":\"AA\"}]}",
	"{\"keys\":[{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}]}",
};

static void
test_jwks(void)
{
	char		 errbuf[256], *k, *doc;
	struct jwks	*s;
	size_t		 i;

	ok(set != NULL, "the test's JWKS parses");
	if (set == NULL)
		exit(tap_done());
	ok(jwks_count(set) == 5, "5 usable keys (%zu)", jwks_count(set));
	ok(jwks_skipped(set) == 5, "5 skipped: RSA-1024, use enc, key_ops "
	    "without verify, oct, alg of another type (%zu)",
	    jwks_skipped(set));
	ok(jwks_has_kid(set, "ec2") && jwks_has_kid(set, "ed1"),
	    "jwks_has_kid finds usable keys");
	ok(!jwks_has_kid(set, "small") && !jwks_has_kid(set, "nope") &&
	    !jwks_has_kid(set, NULL), "jwks_has_kid: not skipped keys, "
	    "unknown kids, NULL");

	k = jwk(rsa1024, "small", "");
	doc = fmt("{\"keys\":[%s]}", k);
	errbuf[0] = '\0';
	s = jwks_parse(doc, strlen(doc), errbuf, sizeof(errbuf));
	ok(s == NULL && strstr(errbuf, "2048") != NULL, "a JWKS of only an "
	    "RSA-1024 key is refused, saying why (%s)", errbuf);
	ok(strstr(errbuf, "\"n\"") == NULL && strlen(errbuf) < 80,
	    "and the message holds no key");
	jwks_free(s);
	free(doc);
	free(k);

	for (i = 0; i < nitems(bad_jwks); i++) {
		errbuf[0] = '\0';
		s = jwks_parse(bad_jwks[i], strlen(bad_jwks[i]), errbuf,
		    sizeof(errbuf));
		ok(s == NULL && errbuf[0] != '\0', "JWKS %s refused: %s",
		    bad_jwks[i], errbuf);
		jwks_free(s);
	}
}

static void
test_jwks_keys(void)
{
	char		 errbuf[256], *k, *doc, *x;
	struct jwks	*s;
	size_t		 i;

	/* An EC point off the curve: y changed by one bit. */
	k = jwk(p256, "off", "");
	x = strstr(k, "\"y\":\"") + 5;
	x[10] = x[10] == 'A' ? 'B' : 'A';
	doc = fmt("{\"keys\":[%s]}", k);
	s = jwks_parse(doc, strlen(doc), errbuf, sizeof(errbuf));
	ok(s == NULL && strstr(errbuf, "curve") != NULL,
	    "an EC point off its curve is skipped (%s)", errbuf);
	jwks_free(s);
	free(doc);
	free(k);

	/* More keys than JWKS_MAX_KEYS: the rest skipped. */
	k = jwk(ed, "many", "");
	doc = fmt("{\"keys\":[%s", k);
	for (i = 1; i < JWKS_MAX_KEYS + 3; i++) {
		x = fmt("%s,%s", doc, k);
		free(doc);
		doc = x;
	}
	x = fmt("%s]}", doc);
	free(doc);
	doc = x;
	s = jwks_parse(doc, strlen(doc), errbuf, sizeof(errbuf));
	ok(s != NULL && jwks_count(s) == JWKS_MAX_KEYS &&
	    jwks_skipped(s) == 3, "past %d keys, the rest are skipped",
	    JWKS_MAX_KEYS);
	jwks_free(s);
	free(doc);
	free(k);
}

struct alg_case {
	const char	*alg;
	EVP_PKEY	**key;
	const char	*kid;
};

static const struct alg_case algs[] = {
	{ "RS256", &rsa, "rsa1" },
	{ "RS384", &rsa, "rsa1" },
	{ "RS512", &rsa, "rsa1" },
	{ "PS256", &rsa, "rsa1" },
	{ "ES256", &p256, "ec1" },
	{ "ES384", &p384, "ec384" },
	{ "EdDSA", &ed, "ed1" },
};

/* The token with one bit of its signature flipped. */
static char *
flip_sig(const char *t)
{
	const char	*dot = strrchr(t, '.');
	uint8_t		*sig;
	size_t		 len;
	char		*s, *r;

	sig = unb64url(dot + 1, &len);
	sig[len / 2] ^= 0x10;
	s = b64url(sig, len);
	r = fmt("%.*s.%s", (int)(dot - t), t, s);
	free(sig);
	free(s);
	return r;
}

/* The token's signature on another payload. */
static char *
swap_payload(const char *t, const char *payload)
{
	const char	*dot1 = strchr(t, '.'), *dot2 = strrchr(t, '.');
	char		*p = b64url(payload, strlen(payload)), *r;

	r = fmt("%.*s.%s%s", (int)(dot1 - t), t, p, dot2);
	free(p);
	return r;
}

static void
test_algs(void)
{
	const struct alg_case	*c;
	json_t			*cl;
	char			*h, *p, *t, *f;
	size_t			 i;

	p = claims("");
	for (i = 0; i < nitems(algs); i++) {
		c = &algs[i];
		h = header(c->alg, c->kid);
		t = token(c->alg, *c->key, h, p);
		cl = NULL;
		ok(jwt_verify(t, strlen(t), set, &want, &cl, NULL, 0) ==
		    JWT_OK && json_is_object(cl) &&
		    jwt_claim_has(cl, "sub", "alice"), "%s verifies, the "
		    "claims returned", c->alg);
		json_decref(cl);
		f = flip_sig(t);
		ok(verify_with(f, set, &want) == JWT_SIGNATURE,
		    "%s: a bit flipped in the signature", c->alg);
		free(f);
		f = swap_payload(t, "{\"iss\":\"" ISS "\",\"aud\":\"" AUD
		    "\",\"sub\":\"alicf\",\"exp\":1800000000}");
		ok(verify_with(f, set, &want) == JWT_SIGNATURE,
		    "%s: the payload changed", c->alg);
		free(f);
		free(t);
		free(h);
		h = header(c->alg, NULL);
		ok(try(c->alg, *c->key, h, p, &want) == JWT_OK,
		    "%s verifies without a kid", c->alg);
		free(h);
	}
	free(p);
}

static void
test_alg_refused(void)
{
	char	*p = claims("");
	json_t	*obj = json_object(), *cl = obj;

	ok(try("none", NULL, "{\"alg\":\"none\"}", p, &want) == JWT_ALG,
	    "alg none, no signature");
	ok(try("none", NULL, "{\"alg\":\"none\",\"kid\":\"rsa1\"}", p,
	    &want) == JWT_ALG, "alg none naming a key");
	ok(try("HS256", NULL, "{\"alg\":\"HS256\",\"kid\":\"rsa1\"}", p,
	    &want) == JWT_ALG, "HS256 with the RSA key's n as the secret");
	ok(try("HS256", NULL, "{\"alg\":\"HS256\"}", p, &want) == JWT_ALG,
	    "HS256 without a kid");
	ok(try("RS256", rsa, "{\"kid\":\"rsa1\"}", p, &want) == JWT_ALG,
	    "no alg");
	ok(try("RS256", rsa, "{\"alg\":\"rs256\"}", p, &want) == JWT_ALG,
	    "alg in lower case");
	ok(try("RS256", rsa, "{\"alg\":[\"RS256\"]}", p, &want) == JWT_ALG,
	    "alg not a string");
	ok(try("PS384", rsa, "{\"alg\":\"PS384\"}", p, &want) == JWT_ALG,
	    "an alg not supported (PS384)");
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"crit\":[\"exp\"],"
	    "\"exp\":1}", p, &want) == JWT_ALG, "crit refused");
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"b64\":true}", p, &want) ==
	    JWT_ALG, "b64 refused");
	ok(jwt_verify("e30.e30.", 8, set, &want, &cl, NULL, 0) ==
	    JWT_ALG && cl == NULL, "on failure *claims is NULL");
	json_decref(obj);
	free(p);
}

static void
test_keys(void)
{
	struct jwt_want	 w = want;
	char		*p = claims(""), kid[64], *t, *doc, *k;
	struct jwks	*s;

	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"kid\":\"ec384\"}", p,
	    &w) == JWT_KEY_UNKNOWN, "ES256 naming a P-384 key: no fit");
	ok(try("ES384", p256, "{\"alg\":\"ES384\",\"kid\":\"ec1\"}", p,
	    &w) == JWT_KEY_UNKNOWN, "ES384 naming a P-256 key: no fit");
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"kid\":\"ed1\"}", p, &w) ==
	    JWT_KEY_UNKNOWN, "RS256 naming an Ed25519 key: no fit");
	ok(try("EdDSA", ed, "{\"alg\":\"EdDSA\",\"kid\":\"rsa1\"}", p, &w) ==
	    JWT_KEY_UNKNOWN, "EdDSA naming an RSA key: no fit");

	t = token("ES256", p256, "{\"alg\":\"ES256\",\"kid\":\"nope\"}", p);
	strcpy(kid, "junk");
	ok(jwt_verify(t, strlen(t), set, &w, NULL, kid, sizeof(kid)) ==
	    JWT_KEY_UNKNOWN && strcmp(kid, "nope") == 0,
	    "an unknown kid, and kid_out filled");
	ok(jwt_verify(t, strlen(t), set, &w, NULL, kid, 3) ==
	    JWT_KEY_UNKNOWN && strcmp(kid, "no") == 0,
	    "kid_out cut to its size");
	free(t);
	t = token("ES256", p256, "{\"alg\":\"ES256\"}", p);
	strcpy(kid, "junk");
	ok(jwt_verify(t, strlen(t), set, &w, NULL, kid, sizeof(kid)) ==
	    JWT_OK && kid[0] == '\0', "no kid: kid_out empty");
	free(t);
	t = token("ES256", p256, "{\"alg\":\"ES256\",\"kid\":\"ec1\"}", p);
	ok(verify_with(t, NULL, &w) == JWT_KEY_UNKNOWN && jwks_count(NULL) ==
	    0 && jwks_skipped(NULL) == 0 && !jwks_has_kid(NULL, "ec1"),
	    "a NULL set has no keys");
	free(t);
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"kid\":\"small\"}", p,
	    &w) == JWT_KEY_UNKNOWN, "the kid of a skipped key is unknown");
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"kid\":7}", p, &w) ==
	    JWT_MALFORMED, "a kid not a string is malformed");

	ok(try("ES256", p256b, "{\"alg\":\"ES256\"}", p, &w) == JWT_OK,
	    "no kid, two P-256 keys: the second one signed");
	ok(try("ES256", p256b, "{\"alg\":\"ES256\",\"kid\":\"ec1\"}", p,
	    &w) == JWT_SIGNATURE, "only the key the kid names is tried");
	ok(try("ES256", p384, "{\"alg\":\"ES256\"}", p, &w) ==
	    JWT_SIGNATURE, "no kid, no key signed it");
	ok(try("RS256", evil, "{\"alg\":\"RS256\",\"kid\":\"rsa1\"}", p,
	    &w) == JWT_SIGNATURE, "another RSA key's signature");

	/* A key's own "alg" limits it to that one. */
	k = jwk(rsa, "r", ",\"alg\":\"RS256\"");
	doc = fmt("{\"keys\":[%s]}", k);
	s = jwks_parse(doc, strlen(doc), NULL, 0);
	t = token("PS256", rsa, "{\"alg\":\"PS256\",\"kid\":\"r\"}", p);
	ok(s != NULL && verify_with(t, s, &w) == JWT_KEY_UNKNOWN,
	    "PS256 with a key whose alg is RS256: no fit");
	free(t);
	t = token("RS256", rsa, "{\"alg\":\"RS256\",\"kid\":\"r\"}", p);
	ok(s != NULL && verify_with(t, s, &w) == JWT_OK,
	    "RS256 with that key verifies");
	free(t);
	jwks_free(s);
	free(doc);
	free(k);
	free(p);
}

/* Keys in the header are never trusted, nor fetched. */
static void
test_embedded(void)
{
	char	*p = claims(""), *k = jwk(evil, "evil", ""), *h;

	h = fmt("{\"alg\":\"RS256\",\"jwk\":%s}", k);
	ok(try("RS256", evil, h, p, &want) == JWT_SIGNATURE,
	    "jwk: the attacker's key in the header, no kid");
	free(h);
	h = fmt("{\"alg\":\"RS256\",\"kid\":\"rsa1\",\"jwk\":%s}", k);
	ok(try("RS256", evil, h, p, &want) == JWT_SIGNATURE,
	    "jwk: the attacker's key in the header, a real kid");
	free(h);
	h = fmt("{\"alg\":\"RS256\",\"kid\":\"evil\",\"jwk\":%s}", k);
	ok(try("RS256", evil, h, p, &want) == JWT_KEY_UNKNOWN,
	    "jwk: the attacker's key and its kid");
	free(h);
	ok(try("RS256", evil, "{\"alg\":\"RS256\",\"kid\":\"evil\",\"jku\":"
	    "\"https://evil.example/jwks\"}", p, &want) == JWT_KEY_UNKNOWN,
	    "jku not followed");
	ok(try("RS256", evil, "{\"alg\":\"RS256\",\"x5u\":"
	    "\"https://evil.example/cert\",\"x5c\":[\"MIIB\"]}", p, &want) ==
	    JWT_SIGNATURE, "x5u and x5c ignored");
	ok(try("RS256", rsa, "{\"alg\":\"RS256\",\"jku\":"
	    "\"https://evil.example/jwks\"}", p, &want) == JWT_OK,
	    "a real signature with a jku beside it still verifies");
	free(k);
	free(p);
}

static void
test_claims(void)
{
	struct jwt_want	 w = want;

	ok(try_claims(",\"iss\":\"https://evil.example\"", &w) == JWT_MALFORMED,
	    "a second iss is a duplicate name: malformed");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"iss\":\"https://issuer.example/\",\"aud\":\"mcpd\","
	    "\"exp\":1800000000}"), &w) == JWT_ISSUER, "wrong iss");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"aud\":\"mcpd\",\"exp\":1800000000}"), &w) ==
	    JWT_ISSUER, "no iss");
	w.issuer = NULL;
	ok(try_claims("", &w) == JWT_ISSUER, "want issuer NULL: none fits");
	w = want;
	w.audience = "mcp";
	ok(try_claims("", &w) == JWT_AUDIENCE, "wrong aud string (a prefix)");
	w.audience = NULL;
	ok(try_claims("", &w) == JWT_AUDIENCE, "want audience NULL: none "
	    "fits");
	w = want;
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"iss\":\"" ISS "\",\"aud\":[\"x\",7,\"mcpd\"],"
	    "\"exp\":1800000000}"), &w) == JWT_OK, "aud array holding it");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"iss\":\"" ISS "\",\"aud\":[\"x\",\"MCPD\"],"
	    "\"exp\":1800000000}"), &w) == JWT_AUDIENCE,
	    "aud array without it");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"iss\":\"" ISS "\",\"exp\":1800000000}"), &w) ==
	    JWT_AUDIENCE, "no aud");
}

static void
test_times(void)
{
	struct jwt_want	 w = want;
	char		*p;
	int		 e;

#define AT(exp, extra)	fmt("{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\"," \
			    "\"exp\":%s%s}", exp, extra)
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1699999999",
	    ""), &w) == JWT_EXPIRED, "expired a second ago");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1700000000",
	    ""), &w) == JWT_EXPIRED, "expiring now is expired");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1700000001",
	    ""), &w) == JWT_OK, "expiring in a second");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("1700000000.5", ""), &w) == JWT_OK, "a fraction of a second");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("\"1800000000\"", ""), &w) == JWT_EXPIRED, "exp a string");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    strdup("{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\"}"), &w) ==
	    JWT_EXPIRED, "no exp");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("9223372036854775807", ""), &w) == JWT_OK &&
	    try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("1e300", ""), &w) == JWT_OK, "exp at the far end");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("-9223372036854775807", ""), &w) == JWT_EXPIRED &&
	    try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("-1e300", ""), &w) == JWT_EXPIRED, "exp at the near end");
	w.leeway = 60;
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1699999950",
	    ""), &w) == JWT_OK, "expired 50s ago, 60s leeway");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1699999940",
	    ""), &w) == JWT_EXPIRED, "expired 60s ago, 60s leeway");
	ok(try_owned("ES256", p256, header("ES256", "ec1"),
	    AT("9223372036854775807", ""), &w) == JWT_OK, "the largest exp "
	    "and leeway");

	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"nbf\":1700000030"), &w) == JWT_OK, "nbf in 30s, 60s leeway");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"nbf\":1700000061"), &w) == JWT_NOT_YET,
	    "nbf in 61s, 60s leeway");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"iat\":1700000061"), &w) == JWT_NOT_YET,
	    "iat in 61s, 60s leeway");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"iat\":1700000060"), &w) == JWT_OK, "iat in 60s, 60s leeway");
	w.leeway = 0;
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"nbf\":1700000001"), &w) == JWT_NOT_YET, "nbf in 1s");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"nbf\":1700000000,\"iat\":1700000000"), &w) == JWT_OK,
	    "nbf and iat now");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"nbf\":\"soon\""), &w) == JWT_NOT_YET, "nbf a string");
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1800000000",
	    ",\"iat\":null"), &w) == JWT_NOT_YET, "iat null");
	w.leeway = -100;
	ok(try_owned("ES256", p256, header("ES256", "ec1"), AT("1700000001",
	    ""), &w) == JWT_OK, "a negative leeway counts as none");
	w.now = INT64_MAX;
	w.leeway = INT64_MAX;
	p = AT("1800000000", ",\"nbf\":9223372036854775807");
	e = try_owned("ES256", p256, header("ES256", "ec1"), p, &w);
	ok(e == JWT_EXPIRED, "now and leeway at INT64_MAX (%s)",
	    jwt_error_str(e));
#undef AT
}

static void
test_typ(void)
{
	struct jwt_want	 w = want;
	char		*p = claims("");

	w.typ = "at+jwt";
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":\"at+jwt\"}", p,
	    &w) == JWT_OK, "typ at+jwt");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":"
	    "\"application/at+jwt\"}", p, &w) == JWT_OK,
	    "typ application/at+jwt");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":"
	    "\"Application/AT+JWT\"}", p, &w) == JWT_OK,
	    "typ in another case");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":\"JWT\"}", p,
	    &w) == JWT_TYPE, "typ JWT");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":\"text/at+jwt\"}",
	    p, &w) == JWT_TYPE, "typ of another media type");
	ok(try("ES256", p256, "{\"alg\":\"ES256\"}", p, &w) == JWT_TYPE,
	    "no typ");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":1}", p, &w) ==
	    JWT_TYPE, "typ not a string");
	w.typ = "application/at+jwt";
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":\"at+jwt\"}", p,
	    &w) == JWT_OK, "want application/at+jwt, typ at+jwt");
	w.typ = NULL;
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"typ\":\"JWT\"}", p,
	    &w) == JWT_OK, "typ not checked when not wanted");
	free(p);
}

/* The token with another signature part. */
static char *
with_sig(const char *t, const char *sig)
{
	const char	*dot = strrchr(t, '.');

	return fmt("%.*s.%s", (int)(dot - t), t, sig);
}

static int
malformed(const char *t)
{
	return verify_with(t, set, &want) == JWT_MALFORMED;
}

static void
test_form(void)
{
	char	*p = claims(""), *h = header("ES256", "ec1"), *t, *u;
	size_t	 n, i;
	int	 hit;

	t = token("ES256", p256, h, p);
	ok(verify_with(t, set, &want) == JWT_OK, "the base token verifies");
	ok(jwt_verify("", 0, set, &want, NULL, NULL, 0) == JWT_MALFORMED,
	    "empty token");
	u = strdup(t);
	*strrchr(u, '.') = '\0';
	ok(malformed(u), "two parts");
	free(u);
	u = fmt("%s.", t);
	ok(malformed(u), "four parts, the last empty");
	free(u);
	u = fmt("%s.%s", t, strrchr(t, '.') + 1);
	ok(malformed(u), "four parts");
	free(u);
	ok(malformed("..") && malformed("...") && malformed("e30.e30"),
	    "only dots, too few parts");

	/* Padding, the other alphabet, stray bits, blanks. */
	u = fmt("%.*s=%s", (int)(strchr(t, '.') - t), t, strchr(t, '.'));
	ok(malformed(u), "'=' padding in the header");
	free(u);
	u = fmt("%s=", t);
	ok(malformed(u), "'=' padding after the signature");
	free(u);
	u = fmt("%s==", t);
	ok(malformed(u), "'==' after the signature");
	free(u);
	for (hit = 0, u = strdup(t), i = 0; u[i] != '\0'; i++)
		if (u[i] == '-' || u[i] == '_') {
			u[i] = u[i] == '-' ? '+' : '/';
			hit++;
		}
	if (hit == 0)
		u[strlen(u) - 1] = '+';
	ok(malformed(u), "'+' and '/' in place of '-' and '_'");
	free(u);
	u = with_sig(t, "QR");
	ok(malformed(u), "bits left over in the last character");
	free(u);
	u = with_sig(t, "QQ");
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "while the same "
	    "character without them is only a bad signature");
	free(u);
	u = with_sig(t, "QUFB" "Q");
	ok(malformed(u), "a length of 4n+1");
	free(u);
	u = fmt("%s\n", t);
	ok(malformed(u), "a newline after");
	free(u);
	u = fmt(" %s", t);
	ok(malformed(u), "a blank before");
	free(u);
	u = strdup(t);
	u[5] = '\0';
	ok(jwt_verify(u, strlen(t), set, &want, NULL, NULL, 0) ==
	    JWT_MALFORMED, "a NUL inside");
	free(u);
	free(t);

	/* Not JSON objects, or with a name twice. */
	ok(try("ES256", p256, "[\"alg\",\"ES256\"]", p, &want) ==
	    JWT_MALFORMED, "header an array");
	ok(try("ES256", p256, "{\"alg\":\"ES256\"", p, &want) ==
	    JWT_MALFORMED, "header not JSON");
	ok(try("ES256", p256, "{\"alg\":\"ES256\",\"alg\":\"ES256\"}", p,
	    &want) == JWT_MALFORMED, "a name twice in the header");
	ok(try("ES256", p256, "{\"alg\":\"ES256\"}", "\"claims\"", &want) ==
	    JWT_MALFORMED, "payload a string");
	ok(try("ES256", p256, "{\"alg\":\"ES256\"}", "", &want) ==
	    JWT_MALFORMED, "payload empty");
	ok(try("ES256", p256, "{\"alg\":\"ES256\"}", "{\"sub\":\"a\\u0000b\"}",
	    &want) == JWT_MALFORMED, "a NUL in a string");
	u = claims(",\"aud\":\"other\"");
	ok(try("ES256", p256, h, u, &want) == JWT_MALFORMED,
	    "a claim name twice");
	free(u);

	/* The longest token is JWT_MAX bytes; a pad byte is 4/3 of one. */
	t = token("EdDSA", ed, "{\"alg\":\"EdDSA\"}", p);
	n = (JWT_MAX - strlen(t)) * 3 / 4 - 16;
	free(t);
	for (hit = 0; n < JWT_MAX && !hit; n++) {
		u = fmt(",\"pad\":\"%*s\"", (int)n, "");
		free(p);
		p = claims(u);
		free(u);
		t = token("EdDSA", ed, "{\"alg\":\"EdDSA\"}", p);
		if (strlen(t) == JWT_MAX) {
			hit = 1;
			ok(verify_with(t, set, &want) == JWT_OK,
			    "a token of exactly %d bytes verifies", JWT_MAX);
			u = fmt("%s%s", t, "A");
			ok(malformed(u), "one of %d bytes does not",
			    JWT_MAX + 1);
			free(u);
		} else if (strlen(t) > JWT_MAX) {
			u = strndup(t, JWT_MAX + 1);
			ok(malformed(u), "a token of %d bytes", JWT_MAX + 1);
			free(u);
			hit = 1;
		}
		free(t);
	}
	free(h);
	free(p);
}

/* The DER of r||s, in base64url. */
static char *
der_of(const uint8_t *sig, size_t len)
{
	ECDSA_SIG	*es;
	unsigned char	*der = NULL;
	char		*s;
	int		 n;

	if ((es = ECDSA_SIG_new()) == NULL ||
	    ECDSA_SIG_set0(es, BN_bin2bn(sig, (int)len / 2, NULL),
	    BN_bin2bn(sig + len / 2, (int)len / 2, NULL)) != 1 ||
	    (n = i2d_ECDSA_SIG(es, &der)) <= 0)
		errx(1, "i2d_ECDSA_SIG");
	s = b64url(der, (size_t)n);
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	return s;
}

/* ECDSA's r||s must be exactly twice the curve's size. */
static void
test_ecdsa_sizes(void)
{
	char	*p = claims(""), *h = header("ES256", "ec1"), *t, *u, *s;
	uint8_t	*sig, der[80];
	size_t	 len;

	t = token("ES256", p256, h, p);
	sig = unb64url(strrchr(t, '.') + 1, &len);
	s = b64url(sig, 63);
	u = with_sig(t, s);
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "63 bytes of r||s");
	free(u);
	free(s);
	memcpy(der, sig, 64);
	der[64] = 0;
	s = b64url(der, 65);
	u = with_sig(t, s);
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "65 bytes of r||s");
	free(u);
	free(s);
	/* r||s, the other way round, is no signature. */
	memcpy(der, sig + 32, 32);
	memcpy(der + 32, sig, 32);
	s = b64url(der, 64);
	u = with_sig(t, s);
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "s||r");
	free(u);
	free(s);
	memset(der, 0, 64);
	s = b64url(der, 64);
	u = with_sig(t, s);
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "r and s zero");
	free(u);
	free(s);
	u = with_sig(t, "");
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "no signature");
	free(u);
	s = der_of(sig, 64);
	u = with_sig(t, s);
	ok(verify_with(u, set, &want) == JWT_SIGNATURE, "the signature in "
	    "DER, as OpenSSL makes it");
	free(u);
	free(s);
	free(sig);
	free(t);
	free(h);
	free(p);
}

static void
test_scope(void)
{
	json_t	*c;

	c = json_pack("{s:s, s:[s,s]}", "scope", "a b  c", "scp", "x", "y");
	ok(jwt_has_scope(c, "b"), "scope \"a b  c\" has b");
	ok(jwt_has_scope(c, "a") && jwt_has_scope(c, "c"),
	    "and a, and c after two blanks");
	ok(!jwt_has_scope(c, "bb") && !jwt_has_scope(c, "a b") &&
	    !jwt_has_scope(c, "") && !jwt_has_scope(c, " ") &&
	    !jwt_has_scope(c, NULL), "not bb, \"a b\", \"\", \" \", NULL");
	ok(!jwt_has_scope(c, "x"), "scope a string: scp not read");
	json_decref(c);
	c = json_pack("{s:[s,s,i]}", "scp", "files.read", "run", 7);
	ok(jwt_has_scope(c, "run") && jwt_has_scope(c, "files.read"),
	    "scp an array");
	ok(!jwt_has_scope(c, "files") && !jwt_has_scope(c, "7"),
	    "not a prefix, not a number");
	json_decref(c);
	c = json_pack("{s:s}", "scp", "read write");
	ok(jwt_has_scope(c, "write") && !jwt_has_scope(c, "rea"),
	    "scp a space-separated string");
	json_decref(c);
	c = json_pack("{s:s}", "scope", "");
	ok(!jwt_has_scope(c, "a") && !jwt_has_scope(c, ""), "scope empty");
	json_decref(c);
	c = json_pack("{s:i, s:[s]}", "scope", 1, "scp", "a");
	ok(jwt_has_scope(c, "a"), "scope not a string: scp read");
	json_decref(c);
	ok(!jwt_has_scope(NULL, "a"), "no claims, no scope");
}

static void
test_claim_has(void)
{
	json_t	*c;

	c = json_pack("{s:s, s:[s,i,s], s:i, s:[]}", "sub", "alice", "groups",
	    "dev", 3, "ops", "n", 5, "none");
	ok(jwt_claim_has(c, "sub", "alice") && !jwt_claim_has(c, "sub",
	    "alic") && !jwt_claim_has(c, "sub", "Alice"),
	    "a string claim, exactly");
	ok(jwt_claim_has(c, "groups", "dev") && jwt_claim_has(c, "groups",
	    "ops") && !jwt_claim_has(c, "groups", "3"),
	    "an array of strings");
	ok(!jwt_claim_has(c, "n", "5") && !jwt_claim_has(c, "none", "") &&
	    !jwt_claim_has(c, "missing", "x"), "numbers, [], missing: no");
	ok(!jwt_claim_has(NULL, "sub", "alice") && !jwt_claim_has(c, NULL,
	    "x") && !jwt_claim_has(c, "sub", NULL), "NULL arguments");
	json_decref(c);
}

static void
test_strings(void)
{
	int	 e, f, distinct = 1;

	for (e = JWT_OK; e <= JWT_NOT_YET; e++)
		for (f = e + 1; f <= JWT_NOT_YET; f++)
			if (strcmp(jwt_error_str(e), jwt_error_str(f)) == 0)
				distinct = 0;
	ok(distinct, "every error has words of its own");
	ok(strcmp(jwt_error_str(JWT_SIGNATURE), "bad signature") == 0 &&
	    strcmp(jwt_error_str(JWT_MALFORMED), "malformed") == 0 &&
	    strcmp(jwt_error_str(JWT_AUDIENCE), "wrong audience") == 0,
	    "bad signature, malformed, wrong audience");
	ok(jwt_error_str((enum jwt_error)99) != NULL, "an unknown value");
}

int
main(void)
{
	keys_make();
	test_jwks();
	test_jwks_keys();
	test_algs();
	test_alg_refused();
	test_keys();
	test_embedded();
	test_claims();
	test_times();
	test_typ();
	test_form();
	test_ecdsa_sizes();
	test_scope();
	test_claim_has();
	test_strings();
	jwks_free(set);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(rsa1024);
	EVP_PKEY_free(evil);
	EVP_PKEY_free(p256);
	EVP_PKEY_free(p256b);
	EVP_PKEY_free(p384);
	EVP_PKEY_free(ed);
	return tap_done();
}
