/*
 * Download links: the token of /files/<token>/<name> tells this mcpd,
 * and no one else, which tenant's sandbox's file a link names, what the
 * file was when it was shared, and when the link expires.  It is sealed
 * with a key mcpd keeps in memory only, so that no table of links is
 * kept and the URL shows nothing of what it names; a restart forgets
 * the keys and with them every link made before it.
 *
 * Pure functions over bytes and an in-memory key ring: the caller checks
 * the file and serves it.
 */
#ifndef MCPD_SHARE_H
#define MCPD_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "util.h"

/*
 * A path of at most SHARE_PATH_MAX bytes fits a token: fewer than the
 * claim's array holds, so that the longest token stays short enough for
 * a URL a person copies (share.c checks that it fits SHARE_TOKEN_MAX).
 */
#define SHARE_PATH_MAX	384
#define SHARE_TOKEN_MAX	768		/* characters of a token, base64url */
#define SHARE_KEYS_MAX	8

struct share_claim {
	char		 tenant[NAME_LEN];	/* POLICY_NAME_MAX */
	char		 sandbox[SBX_ID_LEN + 1];	/* lowercase hex */
	char		 path[1024];	/* relative to the workspace */
	/*
	 * The file when shared: a file changed since is not this one.
	 * The change time, not the modification time, which the code in
	 * the sandbox may set back with utimensat(2) after a write.
	 */
	uint64_t	 ino;
	uint64_t	 size;
	int64_t		 ctime_ns;
	int64_t		 expires;	/* seconds since the epoch */
};

/*
 * A key ring of one fresh random key, in place of any before it: a
 * restarted mcpd opens none of the links it made before.
 */
void		 share_keys_init(void);
/*
 * SIGHUP: a fresh key signs from now on.  An older key stays, to open
 * its links, while now is at most the latest expiry it signed; at most
 * SHARE_KEYS_MAX are kept, the oldest dropped first.
 */
void		 share_keys_rotate(int64_t);
size_t		 share_keys_count(void);
void		 share_keys_free(void);		/* wiped */

/*
 * The token of a claim, NUL-terminated in out, bound to name: the last
 * segment of the URL, the name the browser saves the file as, which
 * share_token_open() must be given again, the same bytes.  0, or -1
 * when the claim is not valid (see share_token_open()), a field does not
 * fit, out is too short or there is no key ring.
 */
int		 share_token_make(const struct share_claim *, const char *,
		    char *, size_t);

enum share_error {
	SHARE_OK = 0,
	/*
	 * Not the base64url of a token of this version (no padding,
	 * nothing outside the alphabet, no bits left over), too short or
	 * longer than SHARE_TOKEN_MAX; or a sealed claim that does not
	 * decode, which no one without the key can make.
	 */
	SHARE_MALFORMED,
	SHARE_UNKNOWN_KEY,	/* not one of the ring: retired, or restarted */
	SHARE_FORGED,		/* altered, or bound to another name */
	SHARE_EXPIRED,		/* now is past the claim's expires */
};

/*
 * Open a token of len characters, from a URL with name as its last
 * segment.  On SHARE_OK, and on SHARE_EXPIRED (for the audit record of
 * a refusal: the claim is authentic), *claim is filled; otherwise it is
 * zeroed.  A filled claim is valid: its strings NUL-terminated, tenant a
 * name_valid() name, sandbox SBX_ID_LEN lowercase hex digits, path
 * relative, of at most SHARE_PATH_MAX bytes, without empty, "." or ".."
 * components.  A link is good through the second expires names.
 */
enum share_error share_token_open(const char *, size_t, const char *,
		    int64_t, struct share_claim *);
/* A few words for logs and metric labels: "forged". */
const char	*share_error_str(enum share_error);

/*
 * For tests and fuzzing: the claim's encoding, sealed in a token, and a
 * key ring of one known key, which nothing else may call.
 */
#define SHARE_CLAIM_MAX	(1 + (NAME_LEN - 1) + 1 + SBX_ID_LEN + \
			    2 + SHARE_PATH_MAX + 4 * 8)
/* 0 with *len bytes in out, or -1 when the claim is not valid. */
int		 share_claim_encode(const struct share_claim *,
		    uint8_t [SHARE_CLAIM_MAX], size_t *);
/* 0, or -1 with *claim zeroed when the bytes are not a valid claim's. */
int		 share_claim_decode(const uint8_t *, size_t,
		    struct share_claim *);
void		 share_keys_set_for_tests(const uint8_t [32], uint32_t);

#endif
