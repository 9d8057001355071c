/*
 * mcpd's counters and their exposition: see metrics.h.
 *
 * Counting is an increment or two on paths that do far more already; the
 * text is made only when someone scrapes.  Tools and languages are kept
 * in small tables, filled as each is first seen, whose last slot is
 * "other": whatever the policy or a bug brings, the output stays small.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "metrics.h"
#include "policy.h"
#include "proto.h"
#include "util.h"

#define MX_KEYS		48	/* tools, or languages: "other" included */
#define MX_CODES	32	/* HTTP status codes */
#define MX_COUNTS	16	/* outcomes or results of one key */

/* Seconds: from a warm interpreter's start to a long build. */
static const double	 bounds[] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};
#define MX_NBOUNDS	nitems(bounds)

/* As maudit_tool_call() names them. */
static const char *const outcomes[] = {
	"ok", "tool-error", "error", "cancelled", "task-created",
};

enum mx_result {
	R_OK, R_NONZERO, R_TIMEOUT, R_OOM, R_CANCELLED, R_KILLED,
	R_BUILD_FAILED, R_EXEC_FAILED, R_ERROR, R_NRESULTS
};
static const char *const results[R_NRESULTS] = {
	"ok", "nonzero", "timeout", "oom", "cancelled", "killed",
	"build_failed", "exec_failed", "error",
};

static const char *const errors[MX_E_NKINDS] = {
	[MX_E_PARSE] = "parse_error",
	[MX_E_INVALID_REQUEST] = "invalid_request",
	[MX_E_METHOD_NOT_FOUND] = "method_not_found",
	[MX_E_INVALID_PARAMS] = "invalid_params",
	[MX_E_INTERNAL] = "internal_error",
	[MX_E_MCP] = "mcp_error",
	[MX_E_AUTH] = "auth",
	[MX_E_HOST] = "host_refused",
	[MX_E_SBX_INVALID] = "sandboxd_invalid",
	[MX_E_SBX_NOTFOUND] = "sandboxd_not_found",
	[MX_E_SBX_DENIED] = "sandboxd_denied",
	[MX_E_SBX_AUDIT] = "sandboxd_audit",
	[MX_E_SBX_BUSY] = "sandboxd_busy",
	[MX_E_SBX_INTERNAL] = "sandboxd_internal",
	[MX_E_SBX_FILE] = "sandboxd_file",
	[MX_E_SBX_CANCELLED] = "sandboxd_cancelled",
	[MX_E_SBX_MALFORMED] = "sandboxd_malformed",
	[MX_E_SBX_UNAVAILABLE] = "sandboxd_unavailable",
	[MX_E_AUDIT_UNSENT] = "audit_unsent",
	[MX_E_AUDIT_REFUSED] = "audit_refused",
};

static const char *const auths[MX_AUTH_NREASONS] = {
	[MX_AUTH_NONE] = "no_credentials",
	[MX_AUTH_BAD_TOKEN] = "bad_token",
	[MX_AUTH_UNKNOWN_UID] = "unknown_uid",
	[MX_AUTH_TENANT_GONE] = "tenant_removed",
	[MX_AUTH_FORBIDDEN] = "forbidden",
	[MX_AUTH_SCOPE] = "insufficient_scope",
};

struct hist {
	uint64_t	 bucket[MX_NBOUNDS + 1];	/* the last: +Inf */
	uint64_t	 count;
	uint64_t	 sum_ms;
};

struct key {
	char		 name[POLICY_NAME_MAX];
	uint64_t	 n[MX_COUNTS];
	struct hist	 hist;
};

struct table {
	struct key	 keys[MX_KEYS];
	size_t		 n;
};

static struct {
	int64_t		 started;
	uint64_t	 errors[MX_E_NKINDS];
	uint64_t	 auth[MX_AUTH_NREASONS];
	int		 codes[MX_CODES];
	uint64_t	 code_n[MX_CODES];
	size_t		 ncodes;
	struct table	 tools;
	struct table	 langs;
	uint64_t	 execs[R_NRESULTS];
	int		 sbx_up;
	int		 sbx_chain;
	int		 aud_up;
	uint64_t	 links;
	uint64_t	 downloads[MX_DL_NOUTCOMES];
	uint64_t	 download_bytes;
} mx;

static const char *const downloads[MX_DL_NOUTCOMES] = {
	"ok", "cut", "refused",
};

/* --- Counting -------------------------------------------------------- */

void
metrics_init(void)
{
	mx.started = (int64_t)time(NULL);
}

void
metrics_error(enum mx_error e)
{
	if (e < MX_E_NKINDS)
		mx.errors[e]++;
}

void
metrics_rpc_error(int code)
{
	switch (code) {
	case -32700:
		metrics_error(MX_E_PARSE);
		break;
	case -32600:
		metrics_error(MX_E_INVALID_REQUEST);
		break;
	case -32601:
		metrics_error(MX_E_METHOD_NOT_FOUND);
		break;
	case -32602:
		metrics_error(MX_E_INVALID_PARAMS);
		break;
	case -32603:
		metrics_error(MX_E_INTERNAL);
		break;
	case -32000:
		/* HTTP's refusals in a JSON-RPC body: counted as such. */
		break;
	default:
		metrics_error(MX_E_MCP);
		break;
	}
}

void
metrics_sbx_error(uint32_t code)
{
	if (code >= SBX_E_INVALID && code <= SBX_E_CANCELLED)
		metrics_error(MX_E_SBX_INVALID + (code - SBX_E_INVALID));
	else
		metrics_error(MX_E_SBX_MALFORMED);
}

void
metrics_auth_failure(enum mx_auth why)
{
	if (why < MX_AUTH_NREASONS)
		mx.auth[why]++;
	metrics_error(MX_E_AUTH);
}

const char *
metrics_auth_name(enum mx_auth why)
{
	return why < MX_AUTH_NREASONS ? auths[why] : "other";
}

void
metrics_http_status(int code)
{
	size_t	 i;

	if (code < 100 || code > 599)
		return;
	for (i = 0; i < mx.ncodes; i++)
		if (mx.codes[i] == code) {
			mx.code_n[i]++;
			return;
		}
	/* mcpd answers with a few codes of its own choosing: never full. */
	if (mx.ncodes == MX_CODES)
		return;
	mx.codes[mx.ncodes] = code;
	mx.code_n[mx.ncodes++] = 1;
}

void
metrics_link_made(void)
{
	mx.links++;
}

void
metrics_download(enum mx_download how, uint64_t bytes)
{
	if (how < MX_DL_NOUTCOMES)
		mx.downloads[how]++;
	mx.download_bytes += bytes;
}

/* The name's entry; "other" for no name, or once the table is full. */
static struct key *
key_get(struct table *t, const char *name)
{
	size_t	 i;

	if (name == NULL || !name_valid(name))
		name = "other";
	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i].name, name) == 0)
			return &t->keys[i];
	if (t->n < MX_KEYS - 1 ||
	    (t->n < MX_KEYS && strcmp(name, "other") == 0)) {
		(void)str_copy(t->keys[t->n].name, name,
		    sizeof(t->keys[t->n].name));
		return &t->keys[t->n++];
	}
	return key_get(t, "other");
}

static void
hist_observe(struct hist *h, uint64_t ms)
{
	double	 s = (double)ms / 1000.0;
	size_t	 i;

	for (i = 0; i < MX_NBOUNDS && s > bounds[i]; i++)
		;
	h->bucket[i]++;
	h->count++;
	h->sum_ms += ms;
}

void
metrics_tool_call(const char *tool, const char *outcome, uint64_t ms)
{
	struct key	*k = key_get(&mx.tools, tool);
	size_t		 i;

	for (i = 0; i < nitems(outcomes); i++)
		if (strcmp(outcomes[i], outcome) == 0)
			break;
	if (i == nitems(outcomes))
		return;
	k->n[i]++;
	/* A task's creation is no completion: its run is counted later. */
	if (strcmp(outcome, "task-created") != 0)
		hist_observe(&k->hist, ms);
}

/* The order run_summary() in tools_run.c tells a result in. */
static enum mx_result
result_of(const struct sbx_result *r)
{
	if (r == NULL)
		return R_ERROR;
	if (r->flags & SBX_R_EXEC_FAILED)
		return R_EXEC_FAILED;
	if (r->flags & SBX_R_TIMED_OUT)
		return R_TIMEOUT;
	if (r->flags & SBX_R_OOM)
		return R_OOM;
	if (r->flags & SBX_R_CANCELLED)
		return R_CANCELLED;
	if (r->signal != 0)
		return R_KILLED;
	if (r->flags & SBX_R_BUILD_FAILED)
		return R_BUILD_FAILED;
	return r->exit_code != 0 ? R_NONZERO : R_OK;
}

const char *
metrics_result_name(const struct sbx_result *r)
{
	return results[result_of(r)];
}

void
metrics_run(const char *language, const struct sbx_result *r)
{
	struct key	*k = key_get(&mx.langs, language);

	k->n[result_of(r)]++;
	/* Only a run that ended by itself says how long it ran. */
	if (r != NULL && !(r->flags & SBX_R_CANCELLED))
		hist_observe(&k->hist, r->wall_ms);
}

void
metrics_exec(const struct sbx_result *r)
{
	mx.execs[result_of(r)]++;
}

/* --- The siblings, for /healthz ----------------------------------------- */

void
metrics_sandboxd(int up, int chain)
{
	mx.sbx_up = up;
	mx.sbx_chain = up && chain;
}

void
metrics_auditd(int up)
{
	mx.aud_up = up;
}

int
metrics_sandboxd_up(void)
{
	return mx.sbx_up;
}

int
metrics_healthy(int audit_required, char *why, size_t len)
{
	const char	*w = NULL;

	if (!mx.sbx_up)
		w = "sandboxd is not connected";
	else if (audit_required && !mx.sbx_chain)
		w = "sandboxd does not reach auditd, and audit is required";
	if (w != NULL && len > 0)
		(void)snprintf(why, len, "%s", w);
	return w == NULL;
}

void
metrics_health_text(struct evbuffer *b, int audit_required)
{
	char	 why[128];

	if (metrics_healthy(audit_required, why, sizeof(why)))
		evbuffer_add_printf(b, "ok\n");
	else
		evbuffer_add_printf(b, "unavailable: %s\n", why);
	evbuffer_add_printf(b, "sandboxd: %s\n", mx.sbx_up ? "up" : "down");
	evbuffer_add_printf(b, "auditd via sandboxd: %s%s\n",
	    mx.sbx_chain ? "up" : "down", audit_required ? "" :
	    " (audit not required)");
	evbuffer_add_printf(b, "auditd: %s\n", mx.aud_up ? "up" : "down");
}

/* --- Exposition ---------------------------------------------------------- */

/* A label value as the format escapes it. */
static void
label(struct evbuffer *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			evbuffer_add_printf(b, "\\%c", *s);
		else if (*s == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, s, 1);
	}
}

static void
family(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

static void
one(struct evbuffer *b, const char *name, const char *type,
    const char *help, uint64_t v)
{
	family(b, name, type, help);
	evbuffer_add_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

/* name{lname="lvalue"} v */
static void
labelled(struct evbuffer *b, const char *name, const char *lname,
    const char *lvalue, uint64_t v)
{
	evbuffer_add_printf(b, "%s{%s=\"", name, lname);
	label(b, lvalue);
	evbuffer_add_printf(b, "\"} %llu\n", (unsigned long long)v);
}

static void
hist_render(struct evbuffer *b, const char *name, const char *lname,
    const struct key *k)
{
	uint64_t	 cum = 0;
	size_t		 i;

	for (i = 0; i <= MX_NBOUNDS; i++) {
		cum += k->hist.bucket[i];
		evbuffer_add_printf(b, "%s_bucket{%s=\"", name, lname);
		label(b, k->name);
		if (i < MX_NBOUNDS)
			evbuffer_add_printf(b, "\",le=\"%g\"} %llu\n",
			    bounds[i], (unsigned long long)cum);
		else
			evbuffer_add_printf(b, "\",le=\"+Inf\"} %llu\n",
			    (unsigned long long)cum);
	}
	evbuffer_add_printf(b, "%s_sum{%s=\"", name, lname);
	label(b, k->name);
	evbuffer_add_printf(b, "\"} %.3f\n", (double)k->hist.sum_ms / 1000.0);
	evbuffer_add_printf(b, "%s_count{%s=\"", name, lname);
	label(b, k->name);
	evbuffer_add_printf(b, "\"} %llu\n", (unsigned long long)k->hist.count);
}

/* A counter with two labels: the key's name, and each of names. */
static void
key_counts(struct evbuffer *b, const char *name, const char *kname,
    const char *lname, const struct key *k, const char *const *names,
    size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		evbuffer_add_printf(b, "%s{%s=\"", name, kname);
		label(b, k->name);
		evbuffer_add_printf(b, "\",%s=\"%s\"} %llu\n", lname, names[i],
		    (unsigned long long)k->n[i]);
	}
}

static void
render_state(struct evbuffer *b, const struct mx_gauges *g,
    const struct sbx_server *s)
{
	family(b, "mcpd_build_info", "gauge", "mcpd's version.");
	evbuffer_add_printf(b, "mcpd_build_info{version=\"%s\"} 1\n",
	    MCPD_VERSION);
	one(b, "mcpd_start_time_seconds", "gauge", "When mcpd started, in "
	    "seconds since the epoch.", (uint64_t)mx.started);
	one(b, "mcpd_sandboxd_up", "gauge", "1 if sandboxd answered this "
	    "scrape's question, else 0.", s != NULL);
	one(b, "mcpd_auditd_up", "gauge", "1 if mcpd is connected to auditd.",
	    (uint64_t)mx.aud_up);
	one(b, "mcpd_audit_required", "gauge", "1 if nothing may run "
	    "unaudited.", (uint64_t)g->audit_required);
	one(b, "mcpd_healthy", "gauge", "1 if /healthz answers 200.",
	    (uint64_t)metrics_healthy(g->audit_required, NULL, 0));
	one(b, "mcpd_sessions", "gauge", "MCP sessions open (stateful "
	    "transports).", g->sessions);
	one(b, "mcpd_http_connections", "gauge", "HTTP connections open.",
	    g->conns);
	one(b, "mcpd_requests_in_flight", "gauge", "MCP requests being "
	    "handled.", g->inflight);
	one(b, "mcpd_sandboxd_calls_in_flight", "gauge", "Requests sent to "
	    "sandboxd, or waiting for it, not answered yet.", g->calls);
}

static void
render_http(struct evbuffer *b)
{
	char	 code[8];
	size_t	 i;

	family(b, "mcpd_http_requests_total", "counter", "HTTP responses, by "
	    "status code.");
	for (i = 0; i < mx.ncodes; i++) {
		(void)snprintf(code, sizeof(code), "%d", mx.codes[i]);
		labelled(b, "mcpd_http_requests_total", "code", code,
		    mx.code_n[i]);
	}
}

static void
render_tools(struct evbuffer *b)
{
	size_t	 i;

	family(b, "mcpd_tool_calls_total", "counter", "tools/call requests "
	    "answered, by tool and outcome.");
	for (i = 0; i < mx.tools.n; i++)
		key_counts(b, "mcpd_tool_calls_total", "tool", "outcome",
		    &mx.tools.keys[i], outcomes, nitems(outcomes));
	family(b, "mcpd_tool_call_duration_seconds", "histogram", "Time from "
	    "a tools/call request to its answer (task creations left out).");
	for (i = 0; i < mx.tools.n; i++)
		hist_render(b, "mcpd_tool_call_duration_seconds", "tool",
		    &mx.tools.keys[i]);
}

static void
render_runs(struct evbuffer *b)
{
	size_t	 i;

	family(b, "mcpd_runs_total", "counter", "run_code runs, by language "
	    "and result.");
	for (i = 0; i < mx.langs.n; i++)
		key_counts(b, "mcpd_runs_total", "language", "result",
		    &mx.langs.keys[i], results, R_NRESULTS);
	family(b, "mcpd_run_duration_seconds", "histogram", "Wall-clock time "
	    "of run_code programs, build included, as sandboxd measured it.");
	for (i = 0; i < mx.langs.n; i++)
		hist_render(b, "mcpd_run_duration_seconds", "language",
		    &mx.langs.keys[i]);
	family(b, "mcpd_execs_total", "counter", "sandbox_exec commands, by "
	    "result.");
	for (i = 0; i < R_NRESULTS; i++)
		labelled(b, "mcpd_execs_total", "result", results[i],
		    mx.execs[i]);
}

static void
render_errors(struct evbuffer *b)
{
	size_t	 i;

	family(b, "mcpd_errors_total", "counter", "Errors, by kind.");
	for (i = 0; i < MX_E_NKINDS; i++)
		labelled(b, "mcpd_errors_total", "kind", errors[i],
		    mx.errors[i]);
	family(b, "mcpd_auth_failures_total", "counter", "HTTP requests whose "
	    "credentials were refused, by reason.");
	for (i = 0; i < MX_AUTH_NREASONS; i++)
		labelled(b, "mcpd_auth_failures_total", "reason", auths[i],
		    mx.auth[i]);
}

static void
render_links(struct evbuffer *b)
{
	size_t	 i;

	one(b, "mcpd_links_made_total", "counter", "Download links made by "
	    "sandbox_share_file and run_code's share.", mx.links);
	family(b, "mcpd_downloads_total", "counter", "Requests for download "
	    "links, by outcome: ok, cut (begun, not finished) or refused.");
	for (i = 0; i < MX_DL_NOUTCOMES; i++)
		labelled(b, "mcpd_downloads_total", "outcome", downloads[i],
		    mx.downloads[i]);
	one(b, "mcpd_download_bytes_total", "counter", "Bytes of files sent "
	    "for download links.", mx.download_bytes);
}

/* mcpd's own records, and sandboxd's if it answered. */
static void
render_audit(struct evbuffer *b, const struct mx_gauges *g,
    const struct sbx_server *s)
{
	const struct {
		const char	*name, *type, *help;
		uint64_t	 mine, theirs;
	} rows[] = {
		{ "mcpd_audit_records_sent_total", "counter", "Audit records "
		    "sent to auditd, by sender.", g->audit.sent,
		    s != NULL ? s->audit_sent : 0 },
		{ "mcpd_audit_records_committed_total", "counter", "Audit "
		    "records auditd acknowledged as committed, by sender.",
		    g->audit.committed, s != NULL ? s->audit_committed : 0 },
		{ "mcpd_audit_records_failed_total", "counter", "Audit "
		    "records not committed, or never sent, by sender.",
		    g->audit.failed, s != NULL ? s->audit_failed : 0 },
		{ "mcpd_audit_records_waiting", "gauge", "Audit records sent "
		    "and not answered yet, by sender.", g->audit.waiting,
		    s != NULL ? s->audit_waiting : 0 },
	};
	size_t	 i;

	for (i = 0; i < nitems(rows); i++) {
		family(b, rows[i].name, rows[i].type, rows[i].help);
		labelled(b, rows[i].name, "sender", "mcpd", rows[i].mine);
		if (s != NULL)
			labelled(b, rows[i].name, "sender", "sandboxd",
			    rows[i].theirs);
	}
	family(b, "mcpd_audit_lag_seconds", "gauge", "Age of the oldest "
	    "audit record auditd has not answered, by sender; 0 when none "
	    "waits.");
	evbuffer_add_printf(b, "mcpd_audit_lag_seconds{sender=\"mcpd\"} "
	    "%.3f\n", (double)g->audit.lag_ms / 1000.0);
	if (s == NULL)
		return;
	evbuffer_add_printf(b, "mcpd_audit_lag_seconds{sender=\"sandboxd\"} "
	    "%.3f\n", (double)s->audit_lag_ms / 1000.0);
	one(b, "mcpd_sandboxd_auditd_up", "gauge", "1 if sandboxd is "
	    "connected to auditd.", s->audit_connected != 0);
}

/* sandboxd's own state, from SERVERINFO. */
static void
render_sandboxd(struct evbuffer *b, const struct sbx_server *s)
{
	one(b, "mcpd_sandboxd_start_time_seconds", "gauge", "When sandboxd "
	    "started, in seconds since the epoch.", (uint64_t)s->started);
	one(b, "mcpd_pool_ready", "gauge", "Warm containers ready for runs.",
	    s->pool_ready);
	one(b, "mcpd_pool_starting", "gauge", "Warm containers starting.",
	    s->pool_starting);
	one(b, "mcpd_pool_target", "gauge", "Warm containers wanted: the "
	    "images' pool sizes, once per runtime each runs under, summed.",
	    s->pool_target);
	one(b, "mcpd_pool_claimed_total", "counter", "Runs served by a warm "
	    "container (since sandboxd started).", s->pool_claimed);
	one(b, "mcpd_pool_empty_total", "counter", "Runs that found no warm "
	    "container ready (since sandboxd started).", s->pool_empty);
	one(b, "mcpd_pool_failed_total", "counter", "Warm containers that "
	    "failed to start (since sandboxd started).", s->pool_failed);
	one(b, "mcpd_reuse_kept", "gauge", "Containers kept for their "
	    "tenants' next runs (reuse yes), wiped or being wiped.",
	    s->reuse_kept);
	one(b, "mcpd_reuse_claimed_total", "counter", "Runs served by a "
	    "kept container (since sandboxd started).", s->reuse_claimed);
	one(b, "mcpd_reuse_wiped_total", "counter", "Containers wiped for "
	    "their tenant's next run (since sandboxd started).",
	    s->reuse_wiped);
	one(b, "mcpd_reuse_failed_total", "counter", "Wipes or claims of "
	    "kept containers that failed, the container destroyed (since "
	    "sandboxd started).", s->reuse_failed);
	one(b, "mcpd_sandboxes_persistent", "gauge", "Persistent sandboxes.",
	    s->sandboxes);
	one(b, "mcpd_sandboxes_persistent_running", "gauge", "Persistent "
	    "sandboxes with a container up.", s->sandboxes_running);
	one(b, "mcpd_sandboxes_oneshot", "gauge", "One-shot sandboxes of runs "
	    "in progress.", s->oneshot);
	one(b, "mcpd_sandbox_processes", "gauge", "Processes sandboxd runs "
	    "in sandboxes now.", s->execs);
	one(b, "mcpd_sandboxd_requests", "gauge", "Requests sandboxd has in "
	    "progress, from all its clients.", s->requests);
	one(b, "mcpd_uid_ranges_used", "gauge", "Host uid ranges in use by "
	    "sandboxes and warm containers.", s->slots_used);
	one(b, "mcpd_uid_ranges", "gauge", "Host uid ranges configured.",
	    s->slots_total);
}

void
metrics_render(struct evbuffer *b, const struct mx_gauges *g,
    const struct sbx_server *s)
{
	render_state(b, g, s);
	render_http(b);
	render_tools(b);
	render_runs(b);
	render_errors(b);
	render_links(b);
	render_audit(b, g, s);
	if (s != NULL)
		render_sandboxd(b, s);
}
