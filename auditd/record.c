/*
 * An audit record as a client sends it (struct audit_record and its body),
 * checked whole before anything of it is kept: the sizes, the event and
 * outcome, the tenant and sandbox fields, and the body's canonical form.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditbody.h"
#include "auditd.h"
#include "proto.h"
#include "util.h"

/*
 * A fixed-size string field: NUL-terminated, and printable ASCII, or only
 * the characters of set.
 */
static int
field_ok(const char *s, size_t size, const char *set)
{
	size_t	 len, i;

	if ((len = strnlen(s, size)) == size)
		return 0;
	if (set != NULL)
		return strspn(s, set) == len;
	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

struct pending_record *
record_decode(const void *data, size_t len, char *why, size_t whylen)
{
	struct audit_record	 ar;
	struct pending_record	*r;
	const char		*ev, *oc, *bad;

	if (len < sizeof(ar)) {
		snprintf(why, whylen, "malformed audit record");
		return NULL;
	}
	memcpy(&ar, data, sizeof(ar));
	if (ar.bodylen != len - sizeof(ar) || ar.bodylen > AUDIT_BODY_MAX ||
	    (ev = audit_event_name(ar.event)) == NULL ||
	    (oc = audit_outcome_name(ar.outcome)) == NULL) {
		snprintf(why, whylen, "malformed audit record (event %u, "
		    "outcome %u, body %u of %zu bytes)", ar.event, ar.outcome,
		    ar.bodylen, len - sizeof(ar));
		return NULL;
	}
	if (!field_ok(ar.tenant, sizeof(ar.tenant), NULL) ||
	    !field_ok(ar.sandbox, sizeof(ar.sandbox), "0123456789abcdef") ||
	    (ar.sandbox[0] != '\0' && strlen(ar.sandbox) != SBX_ID_LEN)) {
		snprintf(why, whylen, "malformed audit record: a tenant of "
		    "other than printable ASCII, or a sandbox id of other "
		    "than %d hex digits", SBX_ID_LEN);
		return NULL;
	}
	if ((bad = audit_body_check((const char *)data + sizeof(ar),
	    ar.bodylen)) != NULL) {
		snprintf(why, whylen, "malformed audit record body: %s", bad);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	memcpy(r->tenant, ar.tenant, sizeof(r->tenant));
	memcpy(r->sandbox, ar.sandbox, sizeof(r->sandbox));
	r->event = ev;
	r->outcome = oc;
	r->bodylen = ar.bodylen;
	r->body = xmalloc(ar.bodylen + 1);
	memcpy(r->body, (const char *)data + sizeof(ar), ar.bodylen);
	return r;
}
