/*
 * mcpd's side of the audit trail: every tool call (who, what, how it
 * ended), every failed authentication, and mcpd's own start and stop.
 * sandboxd records what it does to sandboxes; these records say what the
 * client asked for.  They are sent as they happen and not waited for: an
 * operation that must not run unrecorded is refused by sandboxd, which
 * waits for its own record's commit, and mcpd --stdio sends none to
 * sandboxd while it cannot reach auditd (sbxcall.c).
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "auditbody.h"
#include "imsg.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "policy.h"
#include "proc.h"
#include "proto.h"
#include "util.h"

static struct conn	*auditconn;
static int		 start_sent;
static unsigned int	 unsent;		/* records lost while away */
static struct mx_audit	 stats;

/* What a tool call's record keeps of an environment variable's value. */
#define MAUDIT_REDACTED	"(redacted)"

/*
 * When the records still waiting were sent, oldest first: auditd answers
 * a connection's records in order, so the oldest is at the head.  Past
 * the ring's size only the newer ones are timed.
 */
#define SENT_RING	1024
static uint64_t		 sent_ns[SENT_RING];
static size_t		 sent_head, sent_n;

static void
sent_push(void)
{
	if (sent_n == SENT_RING) {
		sent_head = (sent_head + 1) % SENT_RING;
		sent_n--;
	}
	sent_ns[(sent_head + sent_n++) % SENT_RING] = mono_ns();
}

static void
sent_pop(void)
{
	if (sent_n == 0)
		return;
	sent_head = (sent_head + 1) % SENT_RING;
	sent_n--;
}

void
maudit_send(uint32_t event, uint32_t outcome, const char *tenant,
    const char *sandbox, const struct audit_body *b)
{
	struct audit_record	 r;
	struct iovec		 iov[2];

	if (auditconn == NULL) {
		if (unsent++ == 0 && mcp_stdio_mode &&
		    mcpd_conf->audit.required)
			log_warnx("auditd is not connected: audit is "
			    "required, so no tool call runs until it is");
		else if (unsent == 1)
			log_warnx("auditd is not connected: tool calls go "
			    "unrecorded by mcpd until it is");
		stats.failed++;
		metrics_error(MX_E_AUDIT_UNSENT);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.event = event;
	r.outcome = outcome;
	if (tenant != NULL)
		str_copy(r.tenant, tenant, sizeof(r.tenant));
	if (sandbox != NULL)
		str_copy(r.sandbox, sandbox, sizeof(r.sandbox));
	r.bodylen = (uint32_t)b->len;
	iov[0].iov_base = &r;
	iov[0].iov_len = sizeof(r);
	iov[1].iov_base = b->buf;
	iov[1].iov_len = b->len;
	if (conn_composev(auditconn, IMSG_AUDIT_RECORD, 0, -1, iov, 2) ==
	    -1) {
		stats.failed++;
		return;
	}
	stats.sent++;
	stats.waiting++;
	sent_push();
}

static void
maudit_lifecycle(uint32_t event, const char *reason)
{
	struct audit_body	 b;
	char			 hex[65];

	sodium_bin2hex(hex, sizeof(hex), mcpd_conf->digest,
	    sizeof(mcpd_conf->digest));
	audit_body_init(&b);
	audit_body_str(&b, "config", mcpd_conf->path);
	audit_body_str(&b, "config.sha256", hex);
	audit_body_str(&b, "mode", mcp_stdio_mode ? "stdio" : "http");
	if (reason != NULL)
		audit_body_str(&b, "reason", reason);
	audit_body_str(&b, "version", MCPD_VERSION);
	maudit_send(event, AOC_OK, NULL, NULL, &b);
	audit_body_free(&b);
}

void
maudit_up(struct conn *c)
{
	auditconn = c;
	if (unsent > 0) {
		log_warnx("auditd is back; %u records could not be sent",
		    unsent);
		unsent = 0;
	}
	if (!start_sent) {
		start_sent = 1;
		maudit_lifecycle(AEV_DAEMON_START, NULL);
	}
}

void
maudit_down(void)
{
	auditconn = NULL;
	/* Whether auditd committed them before it went, no one will say. */
	stats.failed += stats.waiting;
	stats.waiting = 0;
	sent_head = sent_n = 0;
}

void
maudit_stats(struct mx_audit *out)
{
	*out = stats;
	out->lag_ms = sent_n > 0 ? (mono_ns() - sent_ns[sent_head]) /
	    1000000 : 0;
}

/* An acknowledgement: only a failure is worth a word. */
void
maudit_ack(struct imsg *imsg)
{
	struct audit_ack	 ack;

	if (proto_payload(imsg->data, imsg->datalen, &ack, sizeof(ack)) ==
	    -1)
		return;
	ack.error[sizeof(ack.error) - 1] = '\0';
	if (stats.waiting > 0)
		stats.waiting--;
	sent_pop();
	if (ack.seq != 0) {
		stats.committed++;
		return;
	}
	stats.failed++;
	metrics_error(MX_E_AUDIT_REFUSED);
	log_warnx("auditd did not commit a record: %s", ack.error);
}

/* Stop, with the record on its way before mcpd exits. */
void
maudit_stop(void)
{
	if (auditconn == NULL)
		return;
	maudit_lifecycle(AEV_DAEMON_STOP, "signal or end of input");
	(void)imsgbuf_flush(&auditconn->iev.ibuf);
}

/*
 * The arguments as a record keeps them.  Clients put secrets (API keys)
 * in "env", and the audit log is read by the audit group: of an object
 * of variables, the names stay and each value is replaced; anything else
 * given as "env" is replaced whole.
 */
static json_t *
maudit_args(json_t *args)
{
	json_t		*copy, *env, *names, *v;
	const char	*name;

	if ((env = json_object_get(args, "env")) == NULL)
		return json_incref(args);
	if ((copy = json_copy(args)) == NULL)
		fatalx("out of memory");
	if (json_is_object(env)) {
		if ((names = json_object()) == NULL)
			fatalx("out of memory");
		json_object_foreach(env, name, v)
			json_object_set_new(names, name,
			    json_string(MAUDIT_REDACTED));
	} else
		names = json_string(MAUDIT_REDACTED);
	if (json_object_set_new(copy, "env", names) == -1)
		fatalx("out of memory");
	return copy;
}

/*
 * A tool call has ended: result is "ok", "tool-error", "error" (a
 * JSON-RPC error) or "cancelled".
 */
void
maudit_tool_call(const struct mcp_req *req, const char *result, int code)
{
	struct audit_body	 b;
	json_t			*args, *kept, *name, *sb;
	char			*dump, hex[65];
	uint8_t			 h[crypto_hash_sha256_BYTES];
	const char		*sandbox = NULL;
	size_t			 len;

	name = json_object_get(req->params, "name");
	args = json_object_get(req->params, "arguments");
	kept = maudit_args(args);
	/* The arguments as canonical JSON: sorted keys, compact. */
	dump = json_dumps(kept != NULL ? kept : json_null(), JSON_COMPACT |
	    JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(kept);
	len = dump != NULL ? strlen(dump) : 0;
	crypto_hash_sha256(h, (const uint8_t *)(dump != NULL ? dump : ""),
	    len);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	sb = json_object_get(args, "sandbox");
	/* Only an id goes in the column: a name, or junk, stays in args. */
	if (json_is_string(sb) && json_string_length(sb) == SBX_ID_LEN &&
	    strspn(json_string_value(sb), "0123456789abcdef") == SBX_ID_LEN)
		sandbox = json_string_value(sb);

	audit_body_init(&b);
	audit_body_u64(&b, "args.bytes", len);
	audit_body_bytes(&b, "args.excerpt", dump != NULL ? dump : "", len,
	    mcpd_conf->audit.excerpt);
	audit_body_str(&b, "args.sha256", hex);
	audit_body_u64(&b, "duration_ms", mono_ms() - req->started);
	if (code != 0)
		audit_body_i64(&b, "error.code", code);
	audit_body_str(&b, "principal", req->peer.desc);
	audit_body_str(&b, "protocol", req->modern ? "2026-07-28" :
	    mcp_version_name(req->version));
	audit_body_str(&b, "result", result);
	if (req->task != NULL)
		audit_body_str(&b, "task", "yes");
	audit_body_str(&b, "tool", json_is_string(name) ?
	    json_string_value(name) : "");
	audit_body_str(&b, "transport", mcp_transport_name(req->transport));
	maudit_send(AEV_TOOL_CALL, strcmp(result, "ok") == 0 ? AOC_OK :
	    AOC_FAILED, req->peer.tenant != NULL ? req->peer.tenant->name :
	    NULL, sandbox, &b);
	audit_body_free(&b);
	free(dump);
}

int
maudit_gate(struct maudit_gate *g, unsigned int per_s, unsigned int *missed)
{
	uint64_t	 now = mono_ms() / 1000;

	*missed = 0;
	if (now != g->second) {
		*missed = g->dropped;
		g->second = now;
		g->count = g->dropped = 0;
	}
	if (g->count++ >= per_s) {
		g->dropped++;
		return 0;
	}
	return 1;
}

void
maudit_auth_failure(const char *peer, const char *reason)
{
	struct audit_body	 b;

	audit_body_init(&b);
	audit_body_str(&b, "peer", peer);
	audit_body_str(&b, "reason", reason);
	audit_body_str(&b, "transport", "http");
	maudit_send(AEV_AUTH_FAILURE, AOC_DENIED, NULL, NULL, &b);
	audit_body_free(&b);
}
