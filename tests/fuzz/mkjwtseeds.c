/*
 * The seeds of the jwt fuzz target (fuzz_jwt.c): for each algorithm a
 * key set and a token it signs, with claims the harness wants, so that
 * the fuzzer starts past the signature; and header and payload pairs the
 * harness signs itself.  The RSA and EC keys are made afresh on each
 * run, and ECDSA signs with a random nonce: those seeds change bytes
 * from run to run, not what they reach.
 *
 *	mkjwtseeds DIR	writes DIR/jwt/seed-*
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <sodium.h>

#define FL_SIGN		0x01	/* as fuzz_jwt.c has them */
#define FL_TYP		0x02
#define FL_LEEWAY	0x04
#define FL_SHORTKID	0x08

#define CLAIMS	"{\"iss\":\"https://issuer.example\",\"aud\":\"mcpd\"," \
		"\"sub\":\"alice\",\"exp\":1700000600,\"iat\":1699999990," \
		"\"scope\":\"tools a\",\"client_id\":\"c1\",\"jti\":\"j1\"}"

static const char	*outdir;

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

/* flags, the JWKS's length in 2 bytes big-endian, the JWKS, the token. */
static void
save(const char *name, int flags, const char *jwks, const void *tok,
    size_t toklen)
{
	char	 path[1024];
	size_t	 jlen = strlen(jwks);
	FILE	*f;

	snprintf(path, sizeof(path), "%s/jwt", outdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		err(1, "%s", path);
	snprintf(path, sizeof(path), "%s/jwt/seed-%s", outdir, name);
	if ((f = fopen(path, "w")) == NULL ||
	    fprintf(f, "%c%c%c", flags, (int)(jlen >> 8), (int)(jlen & 0xff))
	    != 3 || fwrite(jwks, 1, jlen, f) != jlen ||
	    fwrite(tok, 1, toklen, f) != toklen || fclose(f) != 0)
		err(1, "%s", path);
}

static char *
bn_param(EVP_PKEY *k, const char *name, int pad)
{
	BIGNUM	*bn = NULL;
	uint8_t	 buf[512];
	int	 n;

	if (EVP_PKEY_get_bn_param(k, name, &bn) != 1 ||
	    (n = pad ? BN_bn2binpad(bn, buf, pad) : BN_bn2bin(bn, buf)) <= 0)
		errx(1, "%s", name);
	BN_free(bn);
	return b64url(buf, (size_t)n);
}

static char *
jwk(EVP_PKEY *k, const char *kid)
{
	char	*a, *b = NULL, *s;
	uint8_t	 raw[32];
	size_t	 len = sizeof(raw);
	int	 size;

	if (EVP_PKEY_is_a(k, "RSA")) {
		a = bn_param(k, OSSL_PKEY_PARAM_RSA_N, 0);
		b = bn_param(k, OSSL_PKEY_PARAM_RSA_E, 0);
		s = fmt("{\"kty\":\"RSA\",\"kid\":\"%s\",\"use\":\"sig\","
		    "\"n\":\"%s\",\"e\":\"%s\"}", kid, a, b);
	} else if (EVP_PKEY_is_a(k, "EC")) {
		size = EVP_PKEY_get_bits(k) / 8;
		a = bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, size);
		b = bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, size);
		s = fmt("{\"kty\":\"EC\",\"kid\":\"%s\",\"crv\":\"P-%d\","
		    "\"x\":\"%s\",\"y\":\"%s\"}", kid, size * 8, a, b);
	} else {
		if (EVP_PKEY_get_raw_public_key(k, raw, &len) != 1)
			errx(1, "Ed25519 public key");
		a = b64url(raw, len);
		s = fmt("{\"kty\":\"OKP\",\"kid\":\"%s\",\"crv\":\"Ed25519\","
		    "\"key_ops\":[\"verify\"],\"x\":\"%s\"}", kid, a);
	}
	free(a);
	free(b);
	return s;
}

/* A signature as JWS has it: ECDSA's r||s, not DER. */
static char *
jws_sig(EVP_PKEY *k, const char *alg, const char *in)
{
	const char	*md = NULL;
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx;
	ECDSA_SIG	*es;
	const BIGNUM	*r, *s;
	const uint8_t	*p;
	uint8_t		 sig[1024];
	size_t		 len = sizeof(sig);
	int		 half;

	if (strcmp(alg, "EdDSA") != 0)
		md = strstr(alg, "256") ? "SHA256" : strstr(alg, "384") ?
		    "SHA384" : "SHA512";
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit_ex(ctx, &pctx, md, NULL, NULL, k, NULL) != 1 ||
	    (alg[0] == 'P' &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) <=
	    0)) ||
	    EVP_DigestSign(ctx, sig, &len, (const uint8_t *)in,
	    strlen(in)) != 1)
		errx(1, "signing %s", alg);
	EVP_MD_CTX_free(ctx);
	if (alg[0] == 'E' && alg[1] == 'S') {
		half = strcmp(alg, "ES256") == 0 ? 32 : 48;
		p = sig;
		if ((es = d2i_ECDSA_SIG(NULL, &p, (long)len)) == NULL)
			errx(1, "d2i_ECDSA_SIG");
		ECDSA_SIG_get0(es, &r, &s);
		BN_bn2binpad(r, sig, half);
		BN_bn2binpad(s, sig + half, half);
		ECDSA_SIG_free(es);
		len = (size_t)half * 2;
	}
	return b64url(sig, len);
}

static char *
token(EVP_PKEY *k, const char *alg, const char *header, const char *claims)
{
	char	*h = b64url(header, strlen(header));
	char	*c = b64url(claims, strlen(claims));
	char	*in = fmt("%s.%s", h, c), *sig, *t;

	sig = jws_sig(k, alg, in);
	t = fmt("%s.%s", in, sig);
	free(h);
	free(c);
	free(in);
	free(sig);
	return t;
}

/* A set of two keys of the algorithm's type, the second one signing. */
static void
seed_alg(const char *alg, const char *type, const char *param, int kid)
{
	EVP_PKEY	*k1, *k2;
	char		*j1, *j2, *jwks, *h, *t, name[32];
	size_t		 i;

	if (strcmp(type, "RSA") == 0) {
		k1 = EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048);
		k2 = EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048);
	} else if (param != NULL) {
		k1 = EVP_PKEY_Q_keygen(NULL, NULL, type, param);
		k2 = EVP_PKEY_Q_keygen(NULL, NULL, type, param);
	} else {
		k1 = EVP_PKEY_Q_keygen(NULL, NULL, type);
		k2 = EVP_PKEY_Q_keygen(NULL, NULL, type);
	}
	if (k1 == NULL || k2 == NULL)
		errx(1, "keygen %s", alg);
	j1 = jwk(k1, "k1");
	j2 = jwk(k2, "k2");
	jwks = fmt("{\"keys\":[%s,%s]}", j1, j2);
	if (kid)
		h = fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\",\"kid\":\"k2\"}",
		    alg);
	else
		h = fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\"}", alg);
	t = token(k2, alg, h, CLAIMS);
	snprintf(name, sizeof(name), "%s%s", alg, kid ? "" : "-nokid");
	for (i = 0; name[i] != '\0'; i++)
		if (name[i] >= 'A' && name[i] <= 'Z')
			name[i] += 'a' - 'A';
	save(name, FL_TYP, jwks, t, strlen(t));
	EVP_PKEY_free(k1);
	EVP_PKEY_free(k2);
	free(j1);
	free(j2);
	free(jwks);
	free(h);
	free(t);
}

/* Header NUL payload, for the harness to sign with its own key. */
static void
seed_signed(const char *name, int flags, const char *header,
    const char *claims)
{
	char	*both;
	size_t	 hlen = strlen(header), clen = strlen(claims);

	if ((both = malloc(hlen + 1 + clen)) == NULL)
		err(1, NULL);
	memcpy(both, header, hlen);
	both[hlen] = '\0';
	memcpy(both + hlen + 1, claims, clen);
	save(name, flags | FL_SIGN, "", both, hlen + 1 + clen);
	free(both);
}

int
main(int argc, char *argv[])
{
	static const char bad_jwks[] = "{\"keys\":["
	    "{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"},"
	    "{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
	    "{\"kty\":\"EC\",\"crv\":\"P-256\",\"use\":\"enc\","
	    "\"x\":\"AA\",\"y\":\"AA\"},"
	    "{\"kty\":\"OKP\",\"crv\":\"X25519\",\"x\":\"AA\"},"
	    "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":\"ES256\","
	    "\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}";
	static const char hs256[] = "eyJhbGciOiJIUzI1NiIsImtpZCI6InJzYSJ9."
	    "eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIn0."
	    "c2lnbmF0dXJlLW9mLWEtc2VjcmV0";

	if (argc != 2)
		errx(2, "usage: mkjwtseeds dir");
	outdir = argv[1];
	seed_alg("RS256", "RSA", NULL, 1);
	seed_alg("RS512", "RSA", NULL, 0);
	seed_alg("PS256", "RSA", NULL, 1);
	seed_alg("ES256", "EC", "P-256", 1);
	seed_alg("ES256", "EC", "P-256", 0);
	seed_alg("ES384", "EC", "P-384", 1);
	seed_alg("EdDSA", "ED25519", NULL, 1);
	seed_signed("signed", FL_TYP,
	    "{\"alg\":\"EdDSA\",\"typ\":\"at+jwt\",\"kid\":\"fuzz-ed\"}",
	    CLAIMS);
	seed_signed("signed-scp", FL_LEEWAY, "{\"alg\":\"EdDSA\"}",
	    "{\"iss\":\"https://issuer.example\",\"aud\":[\"x\",\"mcpd\"],"
	    "\"exp\":1699999990.5,\"nbf\":1700000030,\"scp\":[\"tools\","
	    "\"a\"],\"groups\":[\"admin\"]}");
	seed_signed("signed-scp-string", FL_SHORTKID,
	    "{\"alg\":\"EdDSA\",\"kid\":\"fuzz-ed\"}",
	    "{\"iss\":\"https://issuer.example\",\"aud\":\"mcpd\","
	    "\"exp\":1700000600,\"scp\":\"a tools\",\"sub\":\"alice\"}");
	seed_signed("signed-crit", 0, "{\"alg\":\"EdDSA\",\"crit\":[\"b64\"],"
	    "\"b64\":false,\"jku\":\"https://x.example/\"}", CLAIMS);
	save("bad-jwks", 0, bad_jwks, hs256, strlen(hs256));
	save("builtin-hs256", 0, "", hs256, strlen(hs256));
	return 0;
}
