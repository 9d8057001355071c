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

/* A uid that may run mcpd --stdio: one a tenant is given. */
static int
acl_stdio_uid(const struct acl *acl, uid_t uid)
{
	return acl->conf != NULL && policy_tenant_by_uid(acl->conf, uid) !=
	    NULL;
}

void
acl_init(struct acl *acl, const struct policy *conf, int privileged)
{
	int	 r;

	memset(acl, 0, sizeof(*acl));
	acl->conf = conf;
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
			if ((mask & ROLE_BIT(r)) && (r == ROLE_MCPD_STDIO ?
			    acl_stdio_uid(acl, uc->uid) : uc->uid ==
			    acl->uid[r]))
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
	if (role == ROLE_MCPD_STDIO) {
		if (acl_stdio_uid(acl, uc->uid))
			return NULL;
		snprintf(why, len, "uid %u is no tenant's", (unsigned)uc->uid);
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
