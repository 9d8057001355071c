/*
 * Helpers for the wire contract in proto.h.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"

static const char *const role_names[ROLE_MAX] = {
	[ROLE_NONE] = "none",
	[ROLE_MCPD] = "mcpd",
	[ROLE_SANDBOXD] = "sandboxd",
	[ROLE_AUDITD] = "auditd",
	[ROLE_MCPCTL] = "mcpctl",
	[ROLE_SANDBOX_INIT] = "sandbox-init",
	[ROLE_MCPD_STDIO] = "mcpd-stdio",
};

const char *
proto_role_name(uint32_t role)
{
	if (role >= ROLE_MAX)
		return "unknown";
	return role_names[role];
}

void
proto_hello_init(struct proto_hello *h, enum proc_role role)
{
	memset(h, 0, sizeof(*h));
	h->magic = MCPD_PROTO_MAGIC;
	h->version = MCPD_PROTO_VERSION;
	h->role = role;
	snprintf(h->software, sizeof(h->software), "%s %s",
	    proto_role_name(role), MCPD_VERSION);
}

const char *
proto_hello_check(const void *data, size_t len, char *why, size_t whylen)
{
	struct proto_hello	 h;

	if (len != sizeof(h)) {
		snprintf(why, whylen, "malformed hello (%zu bytes)", len);
		return why;
	}
	memcpy(&h, data, sizeof(h));
	if (h.magic != MCPD_PROTO_MAGIC) {
		snprintf(why, whylen, "not an mcpd peer (bad magic)");
		return why;
	}
	if (h.version != MCPD_PROTO_VERSION) {
		snprintf(why, whylen, "protocol version %u, expected %u",
		    h.version, MCPD_PROTO_VERSION);
		return why;
	}
	if (h.role == ROLE_NONE || h.role >= ROLE_MAX) {
		snprintf(why, whylen, "unknown role %u", h.role);
		return why;
	}
	if (memchr(h.software, '\0', sizeof(h.software)) == NULL) {
		snprintf(why, whylen, "malformed hello (software name)");
		return why;
	}
	return NULL;
}

int
proto_payload(const void *data, size_t len, void *out, size_t outlen)
{
	if (len != outlen)
		return -1;
	memcpy(out, data, outlen);
	return 0;
}

ssize_t
proto_strings(const void *data, size_t len, size_t n, const char **out,
    int strict)
{
	const char	*p = data, *end, *nul;
	size_t		 i;

	/* An empty payload is NULL: no arithmetic on it. */
	if (len == 0)
		return n == 0 ? 0 : -1;
	end = p + len;
	for (i = 0; i < n; i++) {
		if (p >= end || (nul = memchr(p, '\0', (size_t)(end - p))) ==
		    NULL)
			return -1;
		out[i] = p;
		p = nul + 1;
	}
	if (strict && p != end)
		return -1;
	return p - (const char *)data;
}

static const char *const audit_events[AEV_EVENT_MAX] = {
	[AEV_DAEMON_START] = "daemon-start",
	[AEV_DAEMON_STOP] = "daemon-stop",
	[AEV_SANDBOX_CREATE] = "sandbox-create",
	[AEV_SANDBOX_STOP] = "sandbox-stop",
	[AEV_SANDBOX_REAP] = "sandbox-reap",
	[AEV_RUN] = "run",
	[AEV_EXEC] = "exec",
	[AEV_FILE_WRITE] = "file-write",
	[AEV_FILE_READ] = "file-read",
	[AEV_FILE_LIST] = "file-list",
	[AEV_FILE_DELETE] = "file-delete",
	[AEV_TOOL_CALL] = "tool-call",
	[AEV_AUTH_FAILURE] = "auth-failure",
	[AEV_POLICY_DENIAL] = "policy-denial",
	[AEV_KEY_ROTATION] = "key-rotation",
	[AEV_FILE_SHARE] = "file-share",
	[AEV_FILE_DOWNLOAD] = "file-download",
};

static const char *const audit_outcomes[AOC_OUTCOME_MAX] = {
	[AOC_INTENT] = "intent",
	[AOC_OK] = "ok",
	[AOC_FAILED] = "failed",
	[AOC_DENIED] = "denied",
};

const char *
audit_event_name(uint32_t e)
{
	if (e == 0 || e >= AEV_EVENT_MAX)
		return NULL;
	return audit_events[e];
}

const char *
audit_outcome_name(uint32_t o)
{
	if (o == 0 || o >= AOC_OUTCOME_MAX)
		return NULL;
	return audit_outcomes[o];
}
