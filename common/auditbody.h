/*
 * The body of an audit record: "key=value\n" lines, keys in strictly
 * ascending byte order, each value printable ASCII with '%', and any byte
 * outside 0x20..0x7e, written as %XX.  One canonical text per content, so
 * that its hash means one thing, and simple enough for auditd to check
 * without a JSON parser.
 */
#ifndef MCPD_AUDITBODY_H
#define MCPD_AUDITBODY_H

#include <stddef.h>
#include <stdint.h>

#define AUDIT_KEY_MAX		32

struct audit_body {
	char		*buf;
	size_t		 len;
	size_t		 size;
	char		 last[AUDIT_KEY_MAX + 1];	/* for the order check */
};

void	 audit_body_init(struct audit_body *);
void	 audit_body_free(struct audit_body *);
/* Keys must come in ascending order; a caller breaking it is a bug. */
void	 audit_body_str(struct audit_body *, const char *, const char *);
/* At most max bytes of data, escaped; the length is recorded beside. */
void	 audit_body_bytes(struct audit_body *, const char *, const void *,
	    size_t, size_t);
void	 audit_body_u64(struct audit_body *, const char *, uint64_t);
void	 audit_body_i64(struct audit_body *, const char *, int64_t);
/* SHA-256 of data, in hex. */
void	 audit_body_digest(struct audit_body *, const char *, const void *,
	    size_t);
/* NULL when buf is a well-formed body, else what is wrong with it. */
const char *audit_body_check(const char *, size_t);

#endif
