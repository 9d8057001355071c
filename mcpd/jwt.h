/*
 * Local verification of OAuth 2.0 JWT access tokens (RFC 9068): JWS
 * compact serialization (RFC 7515) signed with a key of a JSON Web Key
 * Set (RFC 7517), by the algorithms of RFC 7518 and RFC 8037 that have
 * public keys.  The set comes from the operator's issuer; the token from
 * anyone, so nothing in it chooses a key but "kid", and nothing in it
 * supplies one.
 *
 * OpenSSL must be initialised (its providers loaded) before a process
 * that calls these locks its file system down.
 */
#ifndef MCPD_JWT_H
#define MCPD_JWT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JWT_MAX		8192	/* bytes of a token */
#define JWKS_MAX_KEYS	64	/* usable keys; a token without kid tries all */

/* An immutable set of public keys; NULL is the set of none. */
struct jwks;

/*
 * Parse a JWKS document ({"keys":[...]}).  Keys it cannot use (unknown
 * kty or crv, "use" other than "sig", "key_ops" without "verify", an
 * "alg" not supported or not of the key's type, RSA under 2048 bits,
 * an EC point off its curve, more than JWKS_MAX_KEYS) are skipped and
 * counted; private members are ignored.  NULL with a message in err if
 * the JSON is bad or no key is usable.
 */
struct jwks	*jwks_parse(const char *, size_t, char *, size_t);
size_t		 jwks_count(const struct jwks *);	/* usable keys */
size_t		 jwks_skipped(const struct jwks *);	/* keys skipped */
int		 jwks_has_kid(const struct jwks *, const char *);
void		 jwks_free(struct jwks *);

struct jwt_want {
	/* "iss" must equal it exactly; NULL matches nothing. */
	const char	*issuer;
	/*
	 * "aud" (a string, or an array of strings) must hold it exactly;
	 * NULL matches nothing.
	 */
	const char	*audience;
	/*
	 * The header's "typ" must equal it case-insensitively, either
	 * with "application/" before it or without (RFC 9068: "at+jwt");
	 * NULL: typ is not checked.
	 */
	const char	*typ;
	int64_t		 now;		/* seconds since the epoch */
	int64_t		 leeway;	/* clock skew allowed, seconds */
};

enum jwt_error {
	JWT_OK = 0,
	/*
	 * Not three base64url parts (no padding, nothing outside the
	 * alphabet), header or payload not a JSON object, a member name
	 * twice, a "kid" not a string, longer than JWT_MAX.
	 */
	JWT_MALFORMED,
	/* "alg" missing or not supported ("none", HS*); "crit"; "b64". */
	JWT_ALG,
	JWT_TYPE,		/* "typ" wrong, or missing when wanted */
	/* No key has the header's "kid", or none of them fits "alg". */
	JWT_KEY_UNKNOWN,
	JWT_SIGNATURE,
	JWT_ISSUER,
	JWT_AUDIENCE,
	JWT_EXPIRED,		/* "exp" missing, not a number, or past */
	/* "nbf" or "iat" in the future, or not a number. */
	JWT_NOT_YET,
};

/*
 * Verify a token.  On JWT_OK, *claims (if claims is not NULL) gets a new
 * reference to the payload, an object; "iat", "sub", "client_id" and
 * "jti" are the caller's to require.  kid_out (if not NULL, kidlen
 * bytes) receives the header's kid, cut to fit, or "": the caller's
 * reason to refresh the set after JWT_KEY_UNKNOWN.  It is the client's
 * text: escape it before logging it.
 */
enum jwt_error	 jwt_verify(const char *, size_t, const struct jwks *,
		    const struct jwt_want *, json_t **, char *, size_t);
/* A few words for logs and metric labels: "bad signature". */
const char	*jwt_error_str(enum jwt_error);

/*
 * 1 if the claims grant the scope: in "scope", a space-separated string
 * (RFC 9068, RFC 8693), or where that is not a string in "scp", an array
 * of strings or a space-separated string (Okta, Entra ID).
 */
int		 jwt_has_scope(const json_t *, const char *);
/* 1 if the claim is the string value, or an array of strings with it. */
int		 jwt_claim_has(const json_t *, const char *, const char *);

#endif
