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
