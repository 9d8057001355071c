/*
 * Who may speak as which role.  When the suite is started as root each
 * daemon has its own user (sandboxd stays root); started by anyone else,
 * all three run as that user and only that user may connect.
 */
#ifndef MCPD_ACL_H
#define MCPD_ACL_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct policy;

struct acl {
	const struct policy *conf;	/* tenants, for mcpd --stdio */
	int	 privileged;		/* started as root */
	uid_t	 uid[ROLE_MAX];		/* the uid each role runs as */
	gid_t	 gid[ROLE_MAX];
	int	 gid_fixed[ROLE_MAX];	/* whether the gid is known */
};

/* The policy's users must be resolved (policy_resolve) first. */
void		 acl_init(struct acl *, const struct policy *, int);
/*
 * NULL when cred may act as role, else the reason in why.  For
 * ROLE_NONE (at accept, before the hello) the uid must be that of at least
 * one role in the mask of 1 << role bits.  ROLE_MCPD_STDIO is any uid a
 * tenant is given with "uid".
 */
const char	*acl_check(const struct acl *, const struct ucred *, uint32_t,
		    uint32_t, char *, size_t);

#define ROLE_BIT(r)	(1U << (r))

#endif
