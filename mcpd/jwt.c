/*
 * JWT access tokens (jwt.h), verified with OpenSSL's EVP interface and
 * read with jansson.
 *
 * The token is the client's, so it decides little: its "alg" must be one
 * of a short list of public-key algorithms, and a key of the set must
 * fit it by type, curve and the key's own "alg"; its "kid" narrows the
 * keys tried; members that would bring a key or a URL of one (jwk, jku,
 * x5c, x5u) are never read.  Everything is parsed before any signature
 * is checked, strictly (base64url without padding or stray bits, JSON
 * without duplicate names), so that the bytes verified are the bytes
 * read; the claims are looked at only once the signature holds.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <sodium.h>

#include "jwt.h"
#include "util.h"

#define RSA_MIN_BITS	2048
#define RSA_MAX_BITS	16384	/* OpenSSL verifies no larger */
#define RSA_MAX_EBITS	64	/* OpenSSL's cap for moduli over 3072 bits */
#define EC_MAX_COORD	48	/* P-384 */

enum jwk_type {
	JWK_RSA,
	JWK_P256,
	JWK_P384,
	JWK_ED25519,
};

struct jwt_alg {
	const char	*name;
	const char	*md;		/* NULL: EdDSA hashes by itself */
	size_t		 ecsig;		/* ECDSA: bytes of r||s */
	enum jwk_type	 type;
	int		 pss;
};

/* RFC 7518 section 3.1 and RFC 8037 section 3.1; nothing symmetric. */
static const struct jwt_alg jwt_algs[] = {
	{ "RS256",	"SHA256",	0,	JWK_RSA,	0 },
	{ "RS384",	"SHA384",	0,	JWK_RSA,	0 },
	{ "RS512",	"SHA512",	0,	JWK_RSA,	0 },
	{ "PS256",	"SHA256",	0,	JWK_RSA,	1 },
	{ "ES256",	"SHA256",	64,	JWK_P256,	0 },
	{ "ES384",	"SHA384",	96,	JWK_P384,	0 },
	{ "EdDSA",	NULL,		0,	JWK_ED25519,	0 },
};

struct jwk {
	EVP_PKEY		*pkey;
	enum jwk_type		 type;
	const struct jwt_alg	*alg;		/* its "alg", or NULL */
	char			*kid;		/* NULL: none */
};

struct jwks {
	struct jwk	*keys;
	size_t		 nkeys;
	size_t		 skipped;
};

/* A token taken apart, nothing of it verified yet. */
struct jwt_parts {
	const char		*input;		/* header.payload, signed */
	size_t			 inputlen;
	json_t			*header;
	json_t			*payload;
	uint8_t			*sig;
	size_t			 siglen;
	const struct jwt_alg	*alg;
	const char		*kid;		/* NULL: none */
};

static const struct jwt_alg *
alg_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(jwt_algs); i++)
		if (strcmp(jwt_algs[i].name, name) == 0)
			return &jwt_algs[i];
	return NULL;
}

/*
 * Strict base64url (RFC 7515 section 2): libsodium refuses padding,
 * characters outside the alphabet and bits left over, so that a token
 * has one spelling only.  NULL if s is not that.
 */
static uint8_t *
b64url_decode(const char *s, size_t len, size_t *outlen)
{
	size_t	 max = len / 4 * 3 + 3;
	uint8_t	*buf;

	buf = xmalloc(max);
	if (sodium_base642bin(buf, max, s, len, NULL, outlen, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A base64url part that must be a JSON object; NULL if it is not. */
static json_t *
b64url_object(const char *s, size_t len)
{
	json_error_t	 jerr;
	json_t		*v;
	uint8_t		*buf;
	size_t		 n;

	if ((buf = b64url_decode(s, len, &n)) == NULL)
		return NULL;
	v = json_loadb((const char *)buf, n, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (v != NULL && !json_is_object(v)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* A JWK member that is a base64url string, decoded; NULL if it is not. */
static uint8_t *
jwk_bytes(const json_t *jwk, const char *name, size_t *len)
{
	const json_t	*v = json_object_get(jwk, name);

	if (!json_is_string(v))
		return NULL;
	return b64url_decode(json_string_value(v), json_string_length(v),
	    len);
}

/* Bits of a big-endian unsigned integer, leading zero bytes or not. */
static size_t
uint_bits(const uint8_t *p, size_t len)
{
	size_t	 bits;
	uint8_t	 top;

	while (len > 0 && *p == 0) {
		p++;
		len--;
	}
	if (len == 0)
		return 0;
	bits = (len - 1) * 8;
	for (top = *p; top != 0; top >>= 1)
		bits++;
	return bits;
}

static EVP_PKEY *
pkey_fromdata(const char *type, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM	*params;
	EVP_PKEY_CTX	*ctx = NULL;
	EVP_PKEY	*pkey = NULL;

	if ((params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL)) != NULL &&
	    EVP_PKEY_fromdata_init(ctx) == 1 &&
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

/* Is the public key sound (for EC: a point of the curve, not infinity)? */
static int
pkey_public_ok(EVP_PKEY *pkey)
{
	EVP_PKEY_CTX	*ctx;
	int		 ok;

	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;
	EVP_PKEY_CTX_free(ctx);
	return ok;
}

static const char *
rsa_check(const uint8_t *n, size_t nlen, const uint8_t *e, size_t elen)
{
	size_t	 nbits = uint_bits(n, nlen), ebits = uint_bits(e, elen);

	if (nbits < RSA_MIN_BITS)
		return "RSA modulus under 2048 bits";
	if (nbits > RSA_MAX_BITS)
		return "RSA modulus over 16384 bits";
	/* Leading zeros were counted out: the last bytes are there. */
	if ((n[nlen - 1] & 1) == 0 || ebits < 2 || ebits > RSA_MAX_EBITS ||
	    (e[elen - 1] & 1) == 0)
		return "RSA modulus or exponent not valid";
	return NULL;
}

static const char *
jwk_rsa(const json_t *jwk, EVP_PKEY **pkey)
{
	OSSL_PARAM_BLD	*bld = NULL;
	BIGNUM		*bn = NULL, *be = NULL;
	uint8_t		*n, *e = NULL;
	size_t		 nlen, elen;
	const char	*why = NULL;

	if ((n = jwk_bytes(jwk, "n", &nlen)) == NULL ||
	    (e = jwk_bytes(jwk, "e", &elen)) == NULL) {
		why = "RSA key without n and e in base64url";
		goto done;
	}
	if ((why = rsa_check(n, nlen, e, elen)) != NULL)
		goto done;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    (bn = BN_bin2bn(n, (int)nlen, NULL)) == NULL ||
	    (be = BN_bin2bn(e, (int)elen, NULL)) == NULL ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) != 1 ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) != 1 ||
	    (*pkey = pkey_fromdata("RSA", bld)) == NULL)
		why = "RSA key not accepted by OpenSSL";
done:
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	free(n);
	free(e);
	return why;
}

static const char *
jwk_ec(const json_t *jwk, enum jwk_type *type, EVP_PKEY **pkey)
{
	const char	*crv = json_string_value(json_object_get(jwk, "crv"));
	const char	*group, *why = NULL;
	OSSL_PARAM_BLD	*bld = NULL;
	uint8_t		*x, *y = NULL, pt[1 + 2 * EC_MAX_COORD];
	size_t		 size, xlen, ylen;

	if (crv != NULL && strcmp(crv, "P-256") == 0) {
		*type = JWK_P256;
		group = SN_X9_62_prime256v1;
		size = 32;
	} else if (crv != NULL && strcmp(crv, "P-384") == 0) {
		*type = JWK_P384;
		group = SN_secp384r1;
		size = 48;
	} else
		return "EC curve not supported";
	/* RFC 7518 section 6.2.1.2: each the full size of the field. */
	if ((x = jwk_bytes(jwk, "x", &xlen)) == NULL ||
	    (y = jwk_bytes(jwk, "y", &ylen)) == NULL ||
	    xlen != size || ylen != size) {
		why = "EC key without x and y of its curve's size";
		goto done;
	}
	pt[0] = POINT_CONVERSION_UNCOMPRESSED;
	memcpy(pt + 1, x, size);
	memcpy(pt + 1 + size, y, size);
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
	    group, 0) != 1 ||
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY,
	    pt, 1 + 2 * size) != 1 ||
	    (*pkey = pkey_fromdata("EC", bld)) == NULL ||
	    !pkey_public_ok(*pkey))
		why = "EC point not on its curve";
done:
	OSSL_PARAM_BLD_free(bld);
	free(x);
	free(y);
	return why;
}

static const char *
jwk_okp(const json_t *jwk, EVP_PKEY **pkey)
{
	const char	*crv = json_string_value(json_object_get(jwk, "crv"));
	const char	*why = NULL;
	OSSL_PARAM_BLD	*bld = NULL;
	uint8_t		*x;
	size_t		 xlen;

	if (crv == NULL || strcmp(crv, "Ed25519") != 0)
		return "OKP curve not supported";
	if ((x = jwk_bytes(jwk, "x", &xlen)) == NULL || xlen != 32) {
		why = "Ed25519 key without an x of 32 bytes";
		goto done;
	}
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY,
	    x, xlen) != 1 ||
	    (*pkey = pkey_fromdata("ED25519", bld)) == NULL ||
	    !pkey_public_ok(*pkey))
		why = "Ed25519 key not accepted by OpenSSL";
done:
	OSSL_PARAM_BLD_free(bld);
	free(x);
	return why;
}

/* What the key says it is for: signatures, and which algorithm. */
static const char *
jwk_purpose(const json_t *jwk, const struct jwt_alg **alg)
{
	const json_t	*v, *op;
	const char	*s;
	size_t		 i;

	*alg = NULL;
	if ((v = json_object_get(jwk, "use")) != NULL &&
	    (!json_is_string(v) || strcmp(json_string_value(v), "sig") != 0))
		return "use is not sig";
	if ((v = json_object_get(jwk, "key_ops")) != NULL) {
		if (!json_is_array(v))
			return "key_ops not an array";
		json_array_foreach(v, i, op)
			if ((s = json_string_value(op)) != NULL &&
			    strcmp(s, "verify") == 0)
				break;
		if (i == json_array_size(v))
			return "key_ops without verify";
	}
	if ((v = json_object_get(jwk, "alg")) != NULL &&
	    ((s = json_string_value(v)) == NULL ||
	    (*alg = alg_find(s)) == NULL))
		return "alg not supported";
	if ((v = json_object_get(jwk, "kid")) != NULL && !json_is_string(v))
		return "kid not a string";
	return NULL;
}

/* A key of the set, or why it is skipped. */
static const char *
jwk_parse(const json_t *jwk, struct jwk *k)
{
	const char	*kty, *kid, *why;

	memset(k, 0, sizeof(*k));
	if (!json_is_object(jwk))
		return "not an object";
	if ((why = jwk_purpose(jwk, &k->alg)) != NULL)
		return why;
	if ((kty = json_string_value(json_object_get(jwk, "kty"))) == NULL)
		return "no kty";
	if (strcmp(kty, "RSA") == 0) {
		k->type = JWK_RSA;
		why = jwk_rsa(jwk, &k->pkey);
	} else if (strcmp(kty, "EC") == 0)
		why = jwk_ec(jwk, &k->type, &k->pkey);
	else if (strcmp(kty, "OKP") == 0) {
		k->type = JWK_ED25519;
		why = jwk_okp(jwk, &k->pkey);
	} else
		why = "kty not supported";
	if (why == NULL && k->alg != NULL && k->alg->type != k->type)
		why = "alg not of the key's type";
	ERR_clear_error();
	if (why != NULL) {
		EVP_PKEY_free(k->pkey);
		k->pkey = NULL;
		return why;
	}
	if ((kid = json_string_value(json_object_get(jwk, "kid"))) != NULL)
		k->kid = xstrdup(kid);
	return NULL;
}

struct jwks *
jwks_parse(const char *json, size_t len, char *err, size_t errlen)
{
	json_error_t	 jerr;
	json_t		*doc;
	const json_t	*keys, *jwk;
	struct jwks	*set;
	const char	*why, *first = NULL;
	size_t		 i, firstidx = 0;

	/* Only the position: jansson's text quotes the document. */
	if ((doc = json_loadb(json, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		errfmt(err, errlen, "JWKS not valid JSON (line %d, column %d)",
		    jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_array(keys = json_object_get(doc, "keys"))) {
		errfmt(err, errlen, "JWKS without a \"keys\" array");
		json_decref(doc);
		return NULL;
	}
	set = xcalloc(1, sizeof(*set));
	set->keys = xcalloc(JWKS_MAX_KEYS, sizeof(*set->keys));
	json_array_foreach(keys, i, jwk) {
		if (set->nkeys == JWKS_MAX_KEYS)
			why = "too many keys";
		else if ((why = jwk_parse(jwk, &set->keys[set->nkeys])) ==
		    NULL) {
			set->nkeys++;
			continue;
		}
		if (set->skipped++ == 0) {
			first = why;
			firstidx = i;
		}
	}
	json_decref(doc);
	if (set->nkeys == 0) {
		if (first == NULL)
			errfmt(err, errlen, "JWKS without keys");
		else
			errfmt(err, errlen, "JWKS without a usable key: "
			    "key %zu: %s", firstidx, first);
		jwks_free(set);
		return NULL;
	}
	return set;
}

size_t
jwks_count(const struct jwks *set)
{
	return set != NULL ? set->nkeys : 0;
}

size_t
jwks_skipped(const struct jwks *set)
{
	return set != NULL ? set->skipped : 0;
}

int
jwks_has_kid(const struct jwks *set, const char *kid)
{
	size_t	 i;

	if (set == NULL || kid == NULL)
		return 0;
	for (i = 0; i < set->nkeys; i++)
		if (set->keys[i].kid != NULL &&
		    strcmp(set->keys[i].kid, kid) == 0)
			return 1;
	return 0;
}

void
jwks_free(struct jwks *set)
{
	size_t	 i;

	if (set == NULL)
		return;
	for (i = 0; i < set->nkeys; i++) {
		EVP_PKEY_free(set->keys[i].pkey);
		free(set->keys[i].kid);
	}
	free(set->keys);
	free(set);
}

/* Three parts, each strict base64url, header and payload objects. */
static enum jwt_error
jwt_split(const char *token, size_t len, struct jwt_parts *t)
{
	const char	*dot1, *dot2, *end = token + len;

	if (len == 0 || len > JWT_MAX ||
	    (dot1 = memchr(token, '.', len)) == NULL ||
	    (dot2 = memchr(dot1 + 1, '.', (size_t)(end - dot1 - 1))) ==
	    NULL ||
	    memchr(dot2 + 1, '.', (size_t)(end - dot2 - 1)) != NULL)
		return JWT_MALFORMED;
	t->input = token;
	t->inputlen = (size_t)(dot2 - token);
	if ((t->header = b64url_object(token, (size_t)(dot1 - token))) ==
	    NULL ||
	    (t->payload = b64url_object(dot1 + 1,
	    (size_t)(dot2 - dot1 - 1))) == NULL ||
	    (t->sig = b64url_decode(dot2 + 1, (size_t)(end - dot2 - 1),
	    &t->siglen)) == NULL)
		return JWT_MALFORMED;
	return JWT_OK;
}

/* "at+jwt" is "application/at+jwt" (RFC 7515 section 4.1.9). */
static const char *
media_subtype(const char *type)
{
	static const char	 app[] = "application/";

	if (strncasecmp(type, app, sizeof(app) - 1) == 0)
		return type + sizeof(app) - 1;
	return type;
}

static enum jwt_error
jwt_header(struct jwt_parts *t, const struct jwt_want *want, char *kid_out,
    size_t kidlen)
{
	const json_t	*kid = json_object_get(t->header, "kid");
	const char	*alg, *typ;

	if (kid != NULL) {
		if ((t->kid = json_string_value(kid)) == NULL)
			return JWT_MALFORMED;
		if (kid_out != NULL)
			(void)str_copy(kid_out, t->kid, kidlen);
	}
	/* No extension is understood, so none marked critical can be. */
	if ((alg = json_string_value(json_object_get(t->header,
	    "alg"))) == NULL || (t->alg = alg_find(alg)) == NULL ||
	    json_object_get(t->header, "crit") != NULL ||
	    json_object_get(t->header, "b64") != NULL)
		return JWT_ALG;
	if (want->typ != NULL) {
		typ = json_string_value(json_object_get(t->header, "typ"));
		if (typ == NULL || strcasecmp(media_subtype(typ),
		    media_subtype(want->typ)) != 0)
			return JWT_TYPE;
	}
	return JWT_OK;
}

/* JWS's r||s as the DER that OpenSSL verifies; NULL if it cannot be. */
static uint8_t *
ecdsa_der(const uint8_t *sig, size_t siglen, size_t *derlen)
{
	ECDSA_SIG	*es;
	BIGNUM		*r, *s;
	unsigned char	*der = NULL;
	int		 half = (int)(siglen / 2), n;

	if ((es = ECDSA_SIG_new()) == NULL)
		return NULL;
	r = BN_bin2bn(sig, half, NULL);
	s = BN_bin2bn(sig + half, half, NULL);
	if (r == NULL || s == NULL || ECDSA_SIG_set0(es, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return NULL;
	}
	n = i2d_ECDSA_SIG(es, &der);
	ECDSA_SIG_free(es);
	if (n <= 0)
		return NULL;
	*derlen = (size_t)n;
	return der;
}

static int
sig_verify(EVP_PKEY *pkey, const struct jwt_alg *alg, const uint8_t *sig,
    size_t siglen, const char *input, size_t inputlen)
{
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx;
	int		 ok = 0;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return 0;
	/* PSS as RFC 7518 section 3.5 has it: salt as long as the hash. */
	if (EVP_DigestVerifyInit_ex(ctx, &pctx, alg->md, NULL, NULL, pkey,
	    NULL) == 1 && (!alg->pss ||
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
	    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx,
	    RSA_PSS_SALTLEN_DIGEST) > 0)))
		ok = EVP_DigestVerify(ctx, sig, siglen,
		    (const unsigned char *)input, inputlen) == 1;
	EVP_MD_CTX_free(ctx);
	/* A failure leaves reasons queued that tls_error() would report. */
	ERR_clear_error();
	return ok;
}

/* Does a key that fits the token's alg, and has its kid, sign it? */
static enum jwt_error
jwt_signed(const struct jwt_parts *t, const struct jwks *set)
{
	const struct jwk	*k;
	const uint8_t		*sig = t->sig;
	uint8_t			*der = NULL;
	size_t			 i, fit = 0, siglen = t->siglen;
	int			 ok = 0;

	if (set == NULL)
		return JWT_KEY_UNKNOWN;
	if (t->alg->ecsig != 0) {
		if (t->siglen == t->alg->ecsig)
			der = ecdsa_der(t->sig, t->siglen, &siglen);
		ERR_clear_error();
		sig = der;
	}
	for (i = 0; i < set->nkeys && !ok; i++) {
		k = &set->keys[i];
		if ((t->kid != NULL &&
		    (k->kid == NULL || strcmp(k->kid, t->kid) != 0)) ||
		    k->type != t->alg->type ||
		    (k->alg != NULL && k->alg != t->alg))
			continue;
		fit++;
		ok = sig != NULL && sig_verify(k->pkey, t->alg, sig, siglen,
		    t->input, t->inputlen);
	}
	OPENSSL_free(der);
	if (ok)
		return JWT_OK;
	return fit == 0 ? JWT_KEY_UNKNOWN : JWT_SIGNATURE;
}

static int64_t
add_sat(int64_t a, int64_t b)
{
	int64_t	 r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * A NumericDate, which may have a fraction: rounded up, which keeps
 * every comparison with whole seconds as it was.  -1 if not a number.
 */
static int
numeric_date(const json_t *v, int64_t *t)
{
	double	 d;

	if (json_is_integer(v)) {
		*t = json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	if (d >= 9.2e18)
		*t = INT64_MAX;
	else if (d <= -9.2e18)
		*t = INT64_MIN;
	else {
		*t = (int64_t)d;
		if ((double)*t < d)
			(*t)++;
	}
	return 0;
}

/* Is the time claim, if present, after now (or not a time)? */
static int
jwt_later(const json_t *claims, const char *name, int64_t now,
    int64_t leeway)
{
	const json_t	*v = json_object_get(claims, name);
	int64_t		 t;

	if (v == NULL)
		return 0;
	return numeric_date(v, &t) == -1 || t > add_sat(now, leeway);
}

static enum jwt_error
jwt_claims(const json_t *claims, const struct jwt_want *want)
{
	const char	*iss;
	int64_t		 leeway = want->leeway > 0 ? want->leeway : 0, exp;

	iss = json_string_value(json_object_get(claims, "iss"));
	if (want->issuer == NULL || iss == NULL ||
	    strcmp(iss, want->issuer) != 0)
		return JWT_ISSUER;
	if (want->audience == NULL ||
	    !jwt_claim_has(claims, "aud", want->audience))
		return JWT_AUDIENCE;
	if (numeric_date(json_object_get(claims, "exp"), &exp) == -1 ||
	    add_sat(exp, leeway) <= want->now)
		return JWT_EXPIRED;
	if (jwt_later(claims, "nbf", want->now, leeway) ||
	    jwt_later(claims, "iat", want->now, leeway))
		return JWT_NOT_YET;
	return JWT_OK;
}

enum jwt_error
jwt_verify(const char *token, size_t len, const struct jwks *set,
    const struct jwt_want *want, json_t **claims, char *kid_out,
    size_t kidlen)
{
	struct jwt_parts	 t;
	enum jwt_error		 e;

	if (kid_out != NULL && kidlen > 0)
		kid_out[0] = '\0';
	if (claims != NULL)
		*claims = NULL;
	memset(&t, 0, sizeof(t));
	if ((e = jwt_split(token, len, &t)) == JWT_OK &&
	    (e = jwt_header(&t, want, kid_out, kidlen)) == JWT_OK &&
	    (e = jwt_signed(&t, set)) == JWT_OK &&
	    (e = jwt_claims(t.payload, want)) == JWT_OK && claims != NULL)
		*claims = json_incref(t.payload);
	json_decref(t.header);
	json_decref(t.payload);
	free(t.sig);
	return e;
}

const char *
jwt_error_str(enum jwt_error e)
{
	switch (e) {
	case JWT_OK:
		return "ok";
	case JWT_MALFORMED:
		return "malformed";
	case JWT_ALG:
		return "algorithm refused";
	case JWT_TYPE:
		return "wrong type";
	case JWT_KEY_UNKNOWN:
		return "unknown key";
	case JWT_SIGNATURE:
		return "bad signature";
	case JWT_ISSUER:
		return "wrong issuer";
	case JWT_AUDIENCE:
		return "wrong audience";
	case JWT_EXPIRED:
		return "expired";
	case JWT_NOT_YET:
		return "not yet valid";
	}
	return "unknown error";
}

/* Is word one of the space-separated words of list? */
static int
words_have(const char *list, const char *word)
{
	size_t	 n = strlen(word), len;

	while (*list != '\0') {
		list += strspn(list, " ");
		len = strcspn(list, " ");
		if (len == n && memcmp(list, word, n) == 0)
			return 1;
		list += len;
	}
	return 0;
}

int
jwt_has_scope(const json_t *claims, const char *scope)
{
	const json_t	*v;

	/* A scope is a word: "" or "a b" would match what it should not. */
	if (scope == NULL || *scope == '\0' || strchr(scope, ' ') != NULL)
		return 0;
	if (json_is_string(v = json_object_get(claims, "scope")))
		return words_have(json_string_value(v), scope);
	if (json_is_string(v = json_object_get(claims, "scp")))
		return words_have(json_string_value(v), scope);
	return jwt_claim_has(claims, "scp", scope);
}

int
jwt_claim_has(const json_t *claims, const char *name, const char *value)
{
	const json_t	*v, *e;
	const char	*s;
	size_t		 i;

	if (claims == NULL || name == NULL || value == NULL)
		return 0;
	v = json_object_get(claims, name);
	if ((s = json_string_value(v)) != NULL)
		return strcmp(s, value) == 0;
	json_array_foreach(v, i, e)
		if ((s = json_string_value(e)) != NULL &&
		    strcmp(s, value) == 0)
			return 1;
	return 0;
}
