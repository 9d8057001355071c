/*
 * Role and credential checks: see acl.h.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "policy.h"

void
acl_init(struct acl *acl, const struct policy *conf, int privileged)
{
	int	 r;

	memset(acl, 0, sizeof(*acl));
	acl->privileged = privileged;
	if (!privileged) {
		for (r = 0; r < ROLE_MAX; r++) {
			acl->uid[r] = getuid();
			acl->gid[r] = getgid();
		}
		return;
	}
	acl->uid[ROLE_MCPD] = conf->uid;
	acl->gid[ROLE_MCPD] = conf->gid;
	acl->gid_fixed[ROLE_MCPD] = 1;
	acl->uid[ROLE_SANDBOXD] = 0;
	acl->uid[ROLE_AUDITD] = conf->audit.uid;
	acl->gid[ROLE_AUDITD] = conf->audit.gid;
	acl->gid_fixed[ROLE_AUDITD] = 1;
	acl->uid[ROLE_MCPCTL] = 0;
}

const char *
acl_check(const struct acl *acl, const struct ucred *uc, uint32_t role,
    uint32_t mask, char *why, size_t len)
{
	uint32_t	 r;

	if (role == ROLE_NONE) {
		for (r = 1; r < ROLE_MAX; r++)
			if ((mask & ROLE_BIT(r)) && uc->uid == acl->uid[r])
				return NULL;
		snprintf(why, len, "uid %u may not connect here",
		    (unsigned)uc->uid);
		return why;
	}
	if (role >= ROLE_MAX || !(mask & ROLE_BIT(role))) {
		snprintf(why, len, "role %s is not served here",
		    proto_role_name(role));
		return why;
	}
	if (uc->uid != acl->uid[role]) {
		snprintf(why, len, "uid %u may not act as %s (expected uid %u)",
		    (unsigned)uc->uid, proto_role_name(role),
		    (unsigned)acl->uid[role]);
		return why;
	}
	if (acl->gid_fixed[role] && uc->gid != acl->gid[role]) {
		snprintf(why, len, "gid %u may not act as %s (expected gid %u)",
		    (unsigned)uc->gid, proto_role_name(role),
		    (unsigned)acl->gid[role]);
		return why;
	}
	return NULL;
}
