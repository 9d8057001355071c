/*
 * mcpd as an OAuth 2.1 resource server: the oauth block of mcpd.conf(5).
 */
#ifndef MCPD_OAUTH_H
#define MCPD_OAUTH_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct policy;
struct tenant;

#define OAUTH_PORTS_MAX	2	/* the issuer's, and a jwks URL's */

/*
 * As root, before the sandbox: check the block, read a key file, load
 * the system's trusted certificates and the resolver's settings for
 * fetching keys.  0, or -1 with err set.  conf must outlive the module.
 */
int		 oauth_init(struct event_base *, const struct policy *, char *,
		    size_t);
/* In the sandbox: fetch the issuer's metadata and keys, if they are remote. */
void		 oauth_start(void);
/* SIGHUP: a key file is read again; a bad one keeps the keys there are. */
void		 oauth_reload(void);
void		 oauth_free(void);

int		 oauth_enabled(void);
/* The key file Landlock must let mcpd read again, or NULL. */
const char	*oauth_key_file(void);
/* The TCP ports keys are fetched from; 0 when they are not fetched. */
size_t		 oauth_ports(uint16_t [OAUTH_PORTS_MAX]);

/* Three dot-separated base64url parts: a JWT, not a static token. */
int		 oauth_token_shaped(const char *, size_t);

enum oauth_verdict {
	OAUTH_OK,
	OAUTH_INVALID,		/* 401 invalid_token */
	OAUTH_SCOPE,		/* 403 insufficient_scope */
	OAUTH_NO_TENANT,	/* 403: valid, but no tenant takes it */
	OAUTH_NO_KEYS,		/* 503: the issuer's keys are not known yet */
};

struct oauth_who {
	const struct tenant	*tenant;
	uint8_t			 principal[32];	/* of the issuer and sub */
	char			 sub[64];	/* printable, for logs */
	int64_t			 expires;	/* exp, with the leeway */
	const char		*why;		/* what was wrong, for logs */
};

enum oauth_verdict oauth_check(const char *, size_t, struct oauth_who *);

/*
 * The WWW-Authenticate header line (with its CRLF) of a 401 or 403:
 * error is NULL (no credentials), "invalid_token" or
 * "insufficient_scope".
 */
const char	*oauth_challenge(const char *);
/* Is this the path of the protected resource metadata (RFC 9728)? */
int		 oauth_metadata_path(const char *);
/* The metadata document, JSON. */
const char	*oauth_metadata(void);

#endif
