/*
 * The MCP core: see mcp.h.
 *
 * Every message goes through mcp_input().  It decides the era, checks a
 * request the way its era wants (the modern order of checks is the one
 * clients rely on to tell the eras apart: _meta, headers, version,
 * method, capabilities), and hands it to the handler in the method table.
 * Handlers answer at once or later; the core keeps every request in flight
 * on one list, so that a cancellation, a closed stream or an ended session
 * finds what to stop.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "proto.h"
#include "tasks.h"
#include "util.h"

int	 mcp_stdio_mode;

static const struct mcp_extension	 no_extension;
const struct mcp_extension		*mcp_ext = &no_extension;

static const char *const versions[MCP_NVERSIONS] = {
	[MCP_V20241105] = "2024-11-05",
	[MCP_V20250326] = "2025-03-26",
	[MCP_V20250618] = "2025-06-18",
	[MCP_V20251125] = "2025-11-25",
	[MCP_V20260728] = "2026-07-28",
};

static const char *const levels[MLOG_NLEVELS] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency",
};

/* A question to the client, awaiting its answer. */
struct mcp_ask {
	TAILQ_ENTRY(mcp_ask)	 entry;
	json_int_t		 id;
	struct mcp_req		*req;
	mcp_ask_fn		 fn;
	void			*arg;
};

/* A modern subscriptions/listen request, open until cancelled. */
struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct mcp_req		*req;
	int			 what;		/* NOTE_* */
	json_t			*uris;		/* resourceSubscriptions */
	json_t			*tasks;		/* taskIds */
};

static TAILQ_HEAD(, mcp_req)	 reqs = TAILQ_HEAD_INITIALIZER(reqs);
static TAILQ_HEAD(, listener)	 listeners =
			    TAILQ_HEAD_INITIALIZER(listeners);
static unsigned int		 nreqs;

/* Method table flags. */
#define M_LEGACY	0x01		/* served in the legacy era */
#define M_MODERN	0x02		/* served in the modern era */
#define M_BOTH		(M_LEGACY | M_MODERN)
#define M_EARLY		0x04		/* legacy: before initialize too */
#define M_TASKS		0x08		/* legacy: 2025-11-25 only */
#define M_PROMPTS	0x10		/* only when there are prompts */

struct method {
	const char	*name;
	void		(*fn)(struct mcp_req *);
	int		 flags;
};

static void	 m_initialize(struct mcp_req *);
static void	 m_ping(struct mcp_req *);
static void	 m_set_level(struct mcp_req *);
static void	 m_discover(struct mcp_req *);
static void	 m_listen(struct mcp_req *);
static void	 m_prompts_list(struct mcp_req *);
static void	 m_prompts_get(struct mcp_req *);

static const struct method methods[] = {
	{ "initialize",			m_initialize,	M_LEGACY | M_EARLY },
	{ "ping",			m_ping,		M_LEGACY | M_EARLY },
	{ "logging/setLevel",		m_set_level,	M_LEGACY },
	{ "server/discover",		m_discover,	M_MODERN },
	{ "subscriptions/listen",	m_listen,	M_MODERN },
	{ "tools/list",			tools_list,	M_BOTH },
	{ "tools/call",			tools_call,	M_BOTH },
	{ "resources/list",		resources_list,	M_BOTH },
	{ "resources/templates/list",	resources_templates, M_BOTH },
	{ "resources/read",		resources_read,	M_BOTH },
	{ "resources/subscribe",	resources_subscribe, M_LEGACY },
	{ "resources/unsubscribe",	resources_unsubscribe, M_LEGACY },
	{ "completion/complete",	completion_complete, M_BOTH },
	{ "prompts/list",		m_prompts_list,	M_BOTH | M_PROMPTS },
	{ "prompts/get",		m_prompts_get,	M_BOTH | M_PROMPTS },
	{ "tasks/get",			tasks_get,	M_BOTH | M_TASKS },
	{ "tasks/result",		tasks_result,	M_LEGACY | M_TASKS },
	{ "tasks/list",			tasks_list,	M_LEGACY | M_TASKS },
	{ "tasks/cancel",		tasks_cancel,	M_BOTH | M_TASKS },
	{ "tasks/update",		tasks_update,	M_MODERN },
};

void
mcp_extend(const struct mcp_extension *ext)
{
	mcp_ext = ext;
}

static int
prompts_exist(void)
{
	return mcp_ext->prompts_list != NULL && mcp_ext->prompts_get != NULL;
}

/* Reached only when prompts_exist(): see M_PROMPTS. */
static void
m_prompts_list(struct mcp_req *req)
{
	mcp_ext->prompts_list(req);
}

static void
m_prompts_get(struct mcp_req *req)
{
	mcp_ext->prompts_get(req);
}

const char *
mcp_version_name(int v)
{
	return v >= 0 && v < MCP_NVERSIONS ? versions[v] : "unknown";
}

int
mcp_version_lookup(const char *s)
{
	int	 v;

	for (v = 0; v < MCP_NVERSIONS; v++)
		if (strcmp(versions[v], s) == 0)
			return v;
	return -1;
}

const char *
mcp_level_name(int l)
{
	return l >= 0 && l < MLOG_NLEVELS ? levels[l] : "info";
}

int
mcp_level_lookup(const char *s)
{
	int	 l;

	for (l = 0; l < MLOG_NLEVELS; l++)
		if (strcmp(levels[l], s) == 0)
			return l;
	return -1;
}

int
mcp_peer_same(const struct mcp_peer *a, const struct mcp_peer *b)
{
	return a->tenant == b->tenant &&
	    memcmp(a->principal, b->principal, sizeof(a->principal)) == 0;
}

static const struct method *
method_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(methods); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

static json_t *
supported_versions(void)
{
	json_t	*a = json_array();
	int	 v;

	for (v = MCP_NVERSIONS - 1; v >= 0; v--)
		json_array_append_new(a, json_string(versions[v]));
	return a;
}

json_t *
mcp_server_info(int version)
{
	json_t	*info;

	info = json_pack("{s:s, s:s}", "name", MCPD_SERVER_NAME, "version",
	    MCPD_VERSION);
	if (version >= MCP_V20250618)
		json_object_set_new(info, "title", json_string("mcpd code "
		    "sandbox"));
	if (version >= MCP_V20251125) {
		json_object_set_new(info, "description", json_string(
		    "Runs code in hardened, audited Linux containers"));
	}
	return info;
}

json_t *
mcp_capabilities(int version)
{
	json_t	*c, *t;

	c = json_object();
	t = json_object();
	if (mcp_ext->tools_change)
		json_object_set_new(t, "listChanged", json_true());
	json_object_set_new(c, "tools", t);
	json_object_set_new(c, "resources", json_pack("{s:b, s:b}",
	    "subscribe", 1, "listChanged", 1));
	json_object_set_new(c, "logging", json_object());
	if (version >= MCP_V20250326)
		json_object_set_new(c, "completions", json_object());
	if (prompts_exist())
		json_object_set_new(c, "prompts", json_pack("{s:b}",
		    "listChanged", 1));
	if (version == MCP_V20251125)
		json_object_set_new(c, "tasks", json_pack("{s:{}, s:{}, "
		    "s:{s:{s:{}}}}", "list", "cancel", "requests", "tools",
		    "call"));
	if (version == MCP_MODERN)
		json_object_set_new(c, "extensions", json_pack("{s:{}}",
		    EXT_TASKS));
	return c;
}

/* --- Requests in flight ---------------------------------------------- */

static struct mcp_req *
req_new(const struct mcp_input *in, json_t *msg, int modern, int version)
{
	struct mcp_req	*req;
	json_t		*meta, *tok;

	req = xcalloc(1, sizeof(*req));
	req->msg = json_incref(msg);
	req->id = json_object_get(msg, "id");
	req->method = json_string_value(json_object_get(msg, "method"));
	req->params = json_object_get(msg, "params");
	if (req->params == NULL) {
		req->params = json_object();
		json_object_set_new(req->msg, "params", req->params);
	}
	req->modern = modern;
	req->version = version;
	req->transport = in->transport;
	req->out = in->out;
	req->out->nreqs++;
	req->peer = *in->peer;
	req->level = -1;
	req->started = mono_ms();
	if (!modern && in->sess != NULL) {
		req->sess = in->sess;
		session_ref(in->sess);
		req->caps = in->sess->caps;
		req->level = in->sess->level;
	}
	meta = json_object_get(req->params, "_meta");
	tok = json_object_get(meta, "progressToken");
	if (json_is_string(tok) || json_is_integer(tok))
		req->progress = tok;
	TAILQ_INSERT_TAIL(&reqs, req, entry);
	nreqs++;
	return req;
}

static void
req_free(struct mcp_req *req)
{
	struct mcp_ask	*a, *ta;
	struct listener	*l, *tl;

	if (req->sess != NULL) {
		TAILQ_FOREACH_SAFE(a, &req->sess->asks, entry, ta)
			if (a->req == req) {
				TAILQ_REMOVE(&req->sess->asks, a, entry);
				free(a);
			}
		session_unref(req->sess);
	}
	TAILQ_FOREACH_SAFE(l, &listeners, entry, tl)
		if (l->req == req) {
			TAILQ_REMOVE(&listeners, l, entry);
			json_decref(l->uris);
			json_decref(l->tasks);
			free(l);
		}
	TAILQ_REMOVE(&reqs, req, entry);
	nreqs--;
	req->out->nreqs--;
	json_decref(req->msg);
	free(req);
}

const char *
mcp_transport_name(enum mcp_transport t)
{
	switch (t) {
	case MCP_T_STDIO:
		return "stdio";
	case MCP_T_HTTP:
		return "http";
	case MCP_T_WS:
		return "websocket";
	default:
		return "sse";
	}
}

/*
 * A tools/call has ended: its audit record, its counters and one line an
 * admin can grep, whose values are names of the policy, of the tool
 * table and of mcpd's, never the client's own text.
 */
static void
call_ended(struct mcp_req *req, const char *outcome, int code)
{
	const char	*tool;
	char		 num[24] = "";
	uint64_t	 ms = mono_ms() - req->started;

	tool = tools_name(json_string_value(json_object_get(req->params,
	    "name")));
	maudit_tool_call(req, outcome, code);
	metrics_tool_call(tool, outcome, ms);
	if (code != 0)
		(void)snprintf(num, sizeof(num), " code=%d", code);
	log_info("tool_call tenant=%s cred=%s tool=%s outcome=%s ms=%llu "
	    "transport=%s session=%s%s%s%s%s",
	    req->peer.tenant != NULL ? req->peer.tenant->name : "-",
	    req->peer.cred[0] != '\0' ? req->peer.cred : "-",
	    tool != NULL ? tool : "other", outcome, (unsigned long long)ms,
	    mcp_transport_name(req->transport), req->sess == NULL ? "-" :
	    req->sess->id[0] != '\0' ? req->sess->id : "stdio",
	    req->task != NULL ? " task=yes" : "", num,
	    req->note[0] != '\0' ? " " : "", req->note);
}

/* Stop it: the handler lets go, the transport hears it ended unanswered. */
static void
req_cancel(struct mcp_req *req, const char *why)
{
	struct mcp_out	*out = req->out;

	log_debug("%s: %s cancelled: %s", req->peer.desc, req->method, why);
	if (strcmp(req->method, "tools/call") == 0)
		call_ended(req, "cancelled", 0);
	if (req->cancel != NULL)
		req->cancel(req);
	/* The transport may free the out: the request lets go of it first. */
	req_free(req);
	out->ops->abandon(out, NULL);
}

void
mcp_interrupt(struct mcp_req *req)
{
	if (req->out->ops->interrupt != NULL)
		req->out->ops->interrupt(req->out, req);
}

void
mcp_cancel(struct mcp_req *req, const char *why)
{
	req_cancel(req, why);
}

/*
 * The same request again, answered elsewhere: a task runs a tools/call
 * this way after its creation has been answered.
 */
struct mcp_req *
mcp_req_clone(struct mcp_req *orig, struct mcp_out *out)
{
	struct mcp_req	*req;

	req = xcalloc(1, sizeof(*req));
	req->msg = json_incref(orig->msg);
	req->id = orig->id;
	req->method = orig->method;
	req->params = orig->params;
	req->modern = orig->modern;
	req->version = orig->version;
	req->transport = orig->transport;
	req->out = out;
	out->nreqs++;
	req->peer = orig->peer;
	req->caps = orig->caps;
	req->level = orig->level;
	req->progress = orig->progress;
	req->started = mono_ms();
	if (orig->sess != NULL) {
		req->sess = orig->sess;
		session_ref(req->sess);
	}
	TAILQ_INSERT_TAIL(&reqs, req, entry);
	nreqs++;
	return req;
}

unsigned int
mcp_inflight(const struct tenant *t)
{
	struct mcp_req	*req;
	unsigned int	 n = 0;

	if (t == NULL)
		return nreqs;
	TAILQ_FOREACH(req, &reqs, entry)
		if (req->peer.tenant == t && req->task == NULL)
			n++;
	return n;
}

void
mcp_out_gone(struct mcp_out *out)
{
	struct mcp_req	*req, *treq;

	/* A cancel callback may end other requests: start over each time. */
	do {
		TAILQ_FOREACH_SAFE(req, &reqs, entry, treq)
			if (req->out == out)
				break;
		if (req != NULL)
			req_cancel(req, "the client went away");
	} while (req != NULL);
}

/* The session's requests end with it; tasks go on. */
void
mcp_session_cancel(struct mcp_session *sess)
{
	struct mcp_req	*req;

	do {
		TAILQ_FOREACH(req, &reqs, entry)
			if (req->sess == sess && req->task == NULL)
				break;
		if (req != NULL)
			req_cancel(req, "the session ended");
	} while (req != NULL);
}

/* A listen stream ends gracefully: a result, then on stdio a cancellation,
 * as the two texts of the specification ask. */
static void
listener_end(struct listener *l, const char *why)
{
	struct mcp_req	*req = l->req;
	json_t		*res, *note;

	if (req->transport == MCP_T_STDIO || req->transport == MCP_T_WS) {
		note = rpc_notification("notifications/cancelled",
		    json_pack("{s:O, s:s}", "requestId", req->id, "reason",
		    why));
		req->out->ops->send(req->out, req, note, 0, 0);
		json_decref(note);
	}
	res = json_pack("{s:{s:O}}", "_meta", META_SUBSCRIPTION, req->id);
	mcp_result(req, res);
}

void
mcp_shutdown(void)
{
	struct listener	*l;
	struct mcp_req	*req;

	while ((l = TAILQ_FIRST(&listeners)) != NULL)
		listener_end(l, "server shutting down");
	while ((req = TAILQ_FIRST(&reqs)) != NULL)
		req_cancel(req, "mcpd is shutting down");
}

/*
 * The client will send nothing more, but reads on (stdio at EOF): what it
 * asked is still answered.  What needs it again ends now: its listen
 * streams; our questions to it, answered for it with an error; and its
 * tasks that no request waits for, which nothing can poll any more.
 */
void
mcp_input_ended(struct mcp_session *sess, struct mcp_out *out)
{
	struct listener	*l;
	struct mcp_ask	*a;
	json_t		*err;

	for (;;) {
		TAILQ_FOREACH(l, &listeners, entry)
			if (l->req->out == out)
				break;
		if (l == NULL)
			break;
		listener_end(l, "the client's input ended");
	}
	while ((a = TAILQ_FIRST(&sess->asks)) != NULL) {
		TAILQ_REMOVE(&sess->asks, a, entry);
		err = json_pack("{s:i, s:s}", "code", RPC_INTERNAL_ERROR,
		    "message", "the client's input ended before its answer");
		a->fn(a->arg, NULL, err);
		json_decref(err);
		free(a);
	}
	tasks_input_ended(&sess->peer);
}

/* --- Answers ------------------------------------------------------------ */

static void
decorate(struct mcp_req *req, json_t *result)
{
	json_t	*meta;

	if (!req->modern)
		return;
	if (json_object_get(result, "resultType") == NULL)
		json_object_set_new(result, "resultType",
		    json_string("complete"));
	if ((meta = json_object_get(result, "_meta")) == NULL) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	if (json_is_object(meta) && json_object_get(meta, META_SERVER) ==
	    NULL)
		json_object_set_new(meta, META_SERVER,
		    mcp_server_info(MCP_MODERN));
}

/* The answer: the request is gone before the transport may free the out. */
static void
req_send_final(struct mcp_req *req, json_t *msg, int status)
{
	struct mcp_out	*out = req->out;
	json_t		*res;

	if (strcmp(req->method, "tools/call") == 0) {
		res = json_object_get(msg, "result");
		if (res == NULL)
			call_ended(req, "error", (int)json_integer_value(
			    json_object_get(json_object_get(msg, "error"),
			    "code")));
		else if (json_object_get(res, "taskId") != NULL ||
		    json_object_get(res, "task") != NULL)
			call_ended(req, "task-created", 0);
		else
			call_ended(req, json_is_true(json_object_get(res,
			    "isError")) ? "tool-error" : "ok", 0);
	}
	req_free(req);
	out->ops->send(out, NULL, msg, 1, status);
	json_decref(msg);
}

void
mcp_result(struct mcp_req *req, json_t *result)
{
	json_t	*msg;

	decorate(req, result);
	msg = rpc_result(req->id, result);	/* takes the result */
	req_send_final(req, msg, 0);
}

static void	verror(struct mcp_req *, int, int, json_t *, const char *,
		    va_list) __attribute__((__format__(printf, 5, 0)));

static void
verror(struct mcp_req *req, int status, int code, json_t *data,
    const char *fmt, va_list ap)
{
	char	 buf[512];
	json_t	*msg;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	msg = rpc_error(req->id, code, buf, data);
	log_debug("%s: %s: error %d: %s", req->peer.desc, req->method, code,
	    buf);
	req_send_final(req, msg, status);
}

void
mcp_error(struct mcp_req *req, int code, json_t *data, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	verror(req, 0, code, data, fmt, ap);
	va_end(ap);
}

void
mcp_error_status(struct mcp_req *req, int status, int code, json_t *data,
    const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	verror(req, status, code, data, fmt, ap);
	va_end(ap);
}

void
mcp_tool_error(struct mcp_req *req, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	json_t	*res;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	/* Its words may quote the client, cut anywhere: see rpc_error(). */
	res = json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text",
	    "text", utf8_json((const uint8_t *)s, strlen(s)), "isError", 1);
	free(s);
	mcp_result(req, res);
}

void
mcp_progress(struct mcp_req *req, double progress, double total,
    const char *message)
{
	json_t	*params, *msg;

	if (req->progress == NULL)
		return;
	if (req->nprogress > 0 && progress <= req->progress_sent)
		return;
	params = json_pack("{s:O, s:f}", "progressToken", req->progress,
	    "progress", progress);
	if (total > 0)
		json_object_set_new(params, "total", json_real(total));
	if (message != NULL && (req->modern || req->version >=
	    MCP_V20250326))
		json_object_set_new(params, "message", json_string(message));
	msg = rpc_notification("notifications/progress", params);
	req->out->ops->send(req->out, req, msg, 0, 0);
	json_decref(msg);
	req->progress_sent = progress;
	req->nprogress++;
}

static json_t *
log_message(int level, const char *logger, json_t *data)
{
	json_t	*params;

	params = json_pack("{s:s, s:o}", "level", mcp_level_name(level),
	    "data", data);
	if (logger != NULL)
		json_object_set_new(params, "logger", json_string(logger));
	return rpc_notification("notifications/message", params);
}

void
mcp_log(struct mcp_req *req, int level, const char *logger, json_t *data)
{
	json_t	*msg;
	int	 min = req->level;

	if (req->sess != NULL)
		min = req->sess->level;
	if (min < 0 || level < min) {
		json_decref(data);
		return;
	}
	msg = log_message(level, logger, data);
	req->out->ops->send(req->out, req, msg, 0, 0);
	json_decref(msg);
}

void
mcp_session_log(struct mcp_session *sess, int level, const char *logger,
    json_t *data)
{
	json_t	*msg;

	if (sess->level < 0 || level < sess->level ||
	    sess->state == SESS_ENDED) {
		json_decref(data);
		return;
	}
	msg = log_message(level, logger, data);
	session_send(sess, msg);
	json_decref(msg);
}

int
mcp_ask(struct mcp_req *req, const char *method, json_t *params,
    mcp_ask_fn fn, void *arg)
{
	struct mcp_ask	*a;
	json_t		*msg, *id;

	if (req->modern || req->sess == NULL ||
	    req->sess->state == SESS_ENDED) {
		json_decref(params);
		return -1;
	}
	a = xcalloc(1, sizeof(*a));
	a->id = req->sess->next_ask++;
	a->req = req;
	a->fn = fn;
	a->arg = arg;
	TAILQ_INSERT_TAIL(&req->sess->asks, a, entry);
	id = json_integer(a->id);
	msg = rpc_request(id, method, params);
	json_decref(id);
	req->out->ops->send(req->out, req, msg, 0, 0);
	json_decref(msg);
	return 0;
}

/* The client answered a question of ours. */
static void
got_response(const struct mcp_input *in, json_t *msg)
{
	struct mcp_ask	*a;
	json_t		*id = json_object_get(msg, "id");

	if (in->sess == NULL || !json_is_integer(id))
		return;
	TAILQ_FOREACH(a, &in->sess->asks, entry)
		if (a->id == json_integer_value(id))
			break;
	if (a == NULL) {
		log_debug("%s: an answer to no question of ours",
		    in->peer->desc);
		return;
	}
	TAILQ_REMOVE(&in->sess->asks, a, entry);
	a->fn(a->arg, json_object_get(msg, "result"),
	    json_object_get(msg, "error"));
	free(a);
}

/* --- Notifications to listeners ---------------------------------------- */

static const char *
note_method(int what)
{
	switch (what) {
	case NOTE_TOOLS:
		return "notifications/tools/list_changed";
	case NOTE_PROMPTS:
		return "notifications/prompts/list_changed";
	default:
		return "notifications/resources/list_changed";
	}
}

static void
listener_send(struct listener *l, const char *method, json_t *params)
{
	json_t	*meta, *msg;

	if ((meta = json_object_get(params, "_meta")) == NULL) {
		meta = json_object();
		json_object_set_new(params, "_meta", meta);
	}
	json_object_set(meta, META_SUBSCRIPTION, l->req->id);
	msg = rpc_notification(method, params);
	l->req->out->ops->send(l->req->out, l->req, msg, 0, 0);
	json_decref(msg);
}

struct change {
	const struct tenant	*tenant;
	int			 what;
	const char		*uri;
};

static void
session_change(struct mcp_session *sess, void *arg)
{
	const struct change	*ch = arg;
	json_t			*msg;

	if (sess->state != SESS_READY)
		return;
	/* Resources are a tenant's own; tools and prompts everyone's. */
	if ((ch->what == NOTE_RESOURCES || ch->uri != NULL) &&
	    sess->peer.tenant != ch->tenant)
		return;
	if (ch->uri != NULL) {
		if (json_object_get(sess->subs, ch->uri) == NULL)
			return;
		msg = rpc_notification("notifications/resources/updated",
		    json_pack("{s:s}", "uri", ch->uri));
	} else
		msg = rpc_notification(note_method(ch->what), NULL);
	session_send(sess, msg);
	json_decref(msg);
}

void
mcp_list_changed(const struct tenant *t, int what)
{
	struct change	 ch = { t, what, NULL };
	struct listener	*l;

	session_foreach(session_change, &ch);
	TAILQ_FOREACH(l, &listeners, entry) {
		if (!(l->what & what))
			continue;
		if (what == NOTE_RESOURCES && l->req->peer.tenant != t)
			continue;
		listener_send(l, note_method(what), json_object());
	}
}

void
mcp_resource_updated(const struct tenant *t, const char *uri)
{
	struct change	 ch = { t, 0, uri };
	struct listener	*l;
	size_t		 i;
	json_t		*u;

	session_foreach(session_change, &ch);
	TAILQ_FOREACH(l, &listeners, entry) {
		if (l->req->peer.tenant != t)
			continue;
		json_array_foreach(l->uris, i, u)
			if (strcmp(json_string_value(u), uri) == 0) {
				listener_send(l,
				    "notifications/resources/updated",
				    json_pack("{s:s}", "uri", uri));
				break;
			}
	}
}

struct subs_probe {
	const struct tenant	*tenant;
	const char		*prefix;
	int			 found;
};

static void
session_subs(struct mcp_session *sess, void *arg)
{
	struct subs_probe	*p = arg;
	const char		*uri;
	json_t			*v;

	if (sess->peer.tenant != p->tenant)
		return;
	json_object_foreach(sess->subs, uri, v)
		if (strncmp(uri, p->prefix, strlen(p->prefix)) == 0)
			p->found = 1;
}

int
mcp_subscribed(const struct tenant *t, const char *prefix)
{
	struct subs_probe	 p = { t, prefix, 0 };
	struct listener		*l;
	size_t			 i;
	json_t			*u;

	session_foreach(session_subs, &p);
	TAILQ_FOREACH(l, &listeners, entry) {
		if (l->req->peer.tenant != t)
			continue;
		json_array_foreach(l->uris, i, u)
			if (strncmp(json_string_value(u), prefix,
			    strlen(prefix)) == 0)
				p.found = 1;
	}
	return p.found;
}

void
mcp_task_status(const struct mcp_peer *peer, const char *taskid,
    json_t *task)
{
	struct listener	*l;
	size_t		 i;
	json_t		*u;

	TAILQ_FOREACH(l, &listeners, entry) {
		if (!mcp_peer_same(&l->req->peer, peer))
			continue;
		json_array_foreach(l->tasks, i, u)
			if (strcmp(json_string_value(u), taskid) == 0) {
				listener_send(l, "notifications/tasks",
				    json_deep_copy(task));
				break;
			}
	}
}

/* --- Lifecycle methods ------------------------------------------------ */

/* Its log line, with what the client says it is: quoted, it is theirs. */
static void
session_opened(struct mcp_session *sess, json_t *client)
{
	const char	*name, *version;
	char		 who[160], q[200], extra[256];

	name = json_string_value(json_object_get(client, "name"));
	version = json_string_value(json_object_get(client, "version"));
	(void)snprintf(who, sizeof(who), "%.80s%s%.40s",
	    name != NULL ? name : "?", version != NULL ? "/" : "",
	    version != NULL ? version : "");
	(void)snprintf(extra, sizeof(extra), " version=%s client=%s",
	    mcp_version_name(sess->version), log_value(who, q, sizeof(q)));
	session_log(sess, "session_open", extra);
}

static void
m_initialize(struct mcp_req *req)
{
	struct mcp_session	*sess = req->sess;
	json_t			*pv, *caps, *client, *res;
	int			 v;

	if (sess == NULL || sess->state != SESS_NEW) {
		mcp_error(req, RPC_INVALID_REQUEST, NULL,
		    "Invalid Request: this session is already initialized");
		return;
	}
	pv = json_object_get(req->params, "protocolVersion");
	caps = json_object_get(req->params, "capabilities");
	client = json_object_get(req->params, "clientInfo");
	if (!json_is_string(pv)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "initialize needs a protocolVersion string");
		return;
	}
	if (caps != NULL && !json_is_object(caps)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "capabilities must be an object");
		return;
	}
	v = mcp_version_lookup(json_string_value(pv));
	if (v < 0 || v > MCP_LEGACY_LATEST)
		v = MCP_LEGACY_LATEST;
	sess->version = v;
	req->version = v;
	json_decref(sess->caps);
	sess->caps = caps != NULL ? json_deep_copy(caps) : json_object();
	req->caps = sess->caps;
	if (json_is_object(client))
		sess->client = json_deep_copy(client);
	sess->state = SESS_INITIALIZING;
	session_opened(sess, client);
	res = json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion",
	    versions[v], "capabilities", mcp_capabilities(v), "serverInfo",
	    mcp_server_info(v), "instructions", tools_instructions());
	mcp_result(req, res);
}

static void
m_ping(struct mcp_req *req)
{
	mcp_result(req, json_object());
}

static void
m_set_level(struct mcp_req *req)
{
	json_t	*lv = json_object_get(req->params, "level");
	int	 l;

	if (!json_is_string(lv) ||
	    (l = mcp_level_lookup(json_string_value(lv))) < 0) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "level must be one of debug, info, notice, warning, "
		    "error, critical, alert, emergency");
		return;
	}
	req->sess->level = l;
	mcp_result(req, json_object());
}

static void
m_discover(struct mcp_req *req)
{
	json_t	*res;

	res = json_pack("{s:o, s:o, s:s, s:i, s:s}", "supportedVersions",
	    supported_versions(), "capabilities",
	    mcp_capabilities(MCP_MODERN), "instructions",
	    tools_instructions(), "ttlMs", 300000, "cacheScope", "public");
	mcp_result(req, res);
}

/* Does this request's client declare the tasks extension? */
int
mcp_client_has_tasks(const struct mcp_req *req)
{
	json_t	*ext;

	if (!req->modern)
		return 0;
	ext = json_object_get(req->caps, "extensions");
	return json_is_object(json_object_get(ext, EXT_TASKS));
}

void
mcp_missing_tasks(struct mcp_req *req)
{
	mcp_error_status(req, 400, MCP_E_MISSING_CAPABILITY,
	    json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions",
	    EXT_TASKS), "this request needs the client capability "
	    "extensions[\"%s\"]", EXT_TASKS);
}

static void
m_listen(struct mcp_req *req)
{
	struct listener	*l;
	json_t		*f, *ack, *agreed, *v;
	size_t		 i;

	f = json_object_get(req->params, "notifications");
	if (!json_is_object(f)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "notifications must be an object of what to listen for");
		return;
	}
	if (json_object_get(f, "taskIds") != NULL &&
	    !mcp_client_has_tasks(req)) {
		mcp_missing_tasks(req);
		return;
	}
	l = xcalloc(1, sizeof(*l));
	l->req = req;
	l->uris = json_array();
	l->tasks = json_array();
	agreed = json_object();
	if (json_is_true(json_object_get(f, "toolsListChanged")) &&
	    mcp_ext->tools_change) {
		l->what |= NOTE_TOOLS;
		json_object_set_new(agreed, "toolsListChanged", json_true());
	}
	if (json_is_true(json_object_get(f, "promptsListChanged")) &&
	    prompts_exist()) {
		l->what |= NOTE_PROMPTS;
		json_object_set_new(agreed, "promptsListChanged", json_true());
	}
	if (json_is_true(json_object_get(f, "resourcesListChanged"))) {
		l->what |= NOTE_RESOURCES;
		json_object_set_new(agreed, "resourcesListChanged",
		    json_true());
	}
	json_array_foreach(json_object_get(f, "resourceSubscriptions"), i, v)
		if (json_is_string(v) && json_array_size(l->uris) < 256)
			json_array_append(l->uris, v);
	if (json_array_size(l->uris) > 0)
		json_object_set(agreed, "resourceSubscriptions", l->uris);
	json_array_foreach(json_object_get(f, "taskIds"), i, v)
		if (json_is_string(v) && json_array_size(l->tasks) < 256)
			json_array_append(l->tasks, v);
	if (json_array_size(l->tasks) > 0)
		json_object_set(agreed, "taskIds", l->tasks);
	TAILQ_INSERT_TAIL(&listeners, l, entry);
	ack = json_pack("{s:o}", "notifications", agreed);
	listener_send(l, "notifications/subscriptions/acknowledged", ack);
	/* It stays open: no answer until the client or mcpd ends it. */
}

/* --- Dispatch ----------------------------------------------------------- */

/* An answer that needs no request object. */
static void
reply_early(const struct mcp_input *in, json_t *id, int status, int code,
    json_t *data, const char *message)
{
	json_t	*msg;

	msg = rpc_error(id, code, message, data);
	in->out->ops->send(in->out, NULL, msg, 1, status);
	json_decref(msg);
}

int
mcp_is_modern(json_t *msg, const char *hdr_version)
{
	json_t	*meta;
	int	 v;

	meta = json_object_get(json_object_get(msg, "params"), "_meta");
	if (json_object_get(meta, META_VERSION) != NULL)
		return 1;
	if (hdr_version == NULL)
		return 0;
	v = mcp_version_lookup(hdr_version);
	return v < 0 || v == MCP_MODERN;
}

/*
 * The checks of a modern request, in the order clients depend on.  0 to
 * go on, else the request was answered.
 */
static int
modern_check(const struct mcp_input *in, json_t *msg, const char *method,
    json_t **caps, int *level)
{
	json_t		*id = json_object_get(msg, "id");
	json_t		*params, *meta, *pv, *cv, *lv, *data;
	const struct method *m;
	char		 why[256];

	params = json_object_get(msg, "params");
	meta = json_object_get(params, "_meta");
	pv = json_object_get(meta, META_VERSION);
	cv = json_object_get(meta, META_CAPS);
	lv = json_object_get(meta, META_LOGLEVEL);
	if (!json_is_object(meta) || !json_is_string(pv) ||
	    !json_is_object(cv)) {
		reply_early(in, id, 400, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: every request needs params._meta with "
		    "\"" META_VERSION "\" (a string) and \"" META_CAPS "\" "
		    "(an object)");
		return -1;
	}
	if (lv != NULL && (!json_is_string(lv) ||
	    mcp_level_lookup(json_string_value(lv)) < 0)) {
		reply_early(in, id, 400, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unknown " META_LOGLEVEL);
		return -1;
	}
	if (in->transport == MCP_T_HTTP) {
		if (in->hdr_version == NULL) {
			reply_early(in, id, 400, MCP_E_HEADER_MISMATCH, NULL,
			    "Header mismatch: the MCP-Protocol-Version header "
			    "is missing");
			return -1;
		}
		if (strcmp(in->hdr_version, json_string_value(pv)) != 0) {
			snprintf(why, sizeof(why), "Header mismatch: "
			    "MCP-Protocol-Version header value '%.64s' does "
			    "not match body value '%.64s'", in->hdr_version,
			    json_string_value(pv));
			reply_early(in, id, 400, MCP_E_HEADER_MISMATCH, NULL,
			    why);
			return -1;
		}
		if (in->hdrcheck != NULL &&
		    in->hdrcheck(in->hdrarg, msg, why, sizeof(why)) == -1) {
			reply_early(in, id, 400, MCP_E_HEADER_MISMATCH, NULL,
			    why);
			return -1;
		}
	}
	if (mcp_version_lookup(json_string_value(pv)) != MCP_MODERN) {
		data = json_pack("{s:o, s:O}", "supported",
		    supported_versions(), "requested", pv);
		reply_early(in, id, 400, MCP_E_UNSUPPORTED_VERSION, data,
		    "Unsupported protocol version");
		return -1;
	}
	m = method_find(method);
	if (m == NULL || !(m->flags & M_MODERN) ||
	    ((m->flags & M_PROMPTS) && !prompts_exist())) {
		snprintf(why, sizeof(why), "Method not found: %.64s%s",
		    method, m != NULL ? " (not part of MCP 2026-07-28)" : "");
		reply_early(in, id, 404, RPC_METHOD_NOT_FOUND, NULL, why);
		return -1;
	}
	*caps = cv;
	*level = lv != NULL ? mcp_level_lookup(json_string_value(lv)) : -1;
	return 0;
}

static void
input_modern(const struct mcp_input *in, json_t *msg)
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method"));
	struct mcp_req	*req;
	json_t		*caps;
	int		 level;

	if (modern_check(in, msg, method, &caps, &level) == -1)
		return;
	req = req_new(in, msg, 1, MCP_MODERN);
	req->caps = caps;
	req->level = level;
	method_find(method)->fn(req);
}

static void
input_legacy(const struct mcp_input *in, json_t *msg)
{
	struct mcp_session	*sess = in->sess;
	const char		*method = json_string_value(
				    json_object_get(msg, "method"));
	const struct method	*m = method_find(method);
	json_t			*id = json_object_get(msg, "id");
	char			 why[160];
	struct mcp_req		*req;

	if (sess == NULL || sess->state == SESS_ENDED) {
		reply_early(in, id, 0, RPC_INVALID_REQUEST, NULL,
		    "Invalid Request: no session; begin with initialize");
		return;
	}
	if (sess->state == SESS_NEW && (m == NULL || !(m->flags & M_EARLY))) {
		reply_early(in, id, 0, RPC_INVALID_REQUEST, NULL,
		    "Invalid Request: the server is not initialized; send "
		    "initialize first");
		return;
	}
	if (m == NULL || !(m->flags & M_LEGACY) ||
	    ((m->flags & M_TASKS) && sess->version != MCP_V20251125) ||
	    ((m->flags & M_PROMPTS) && !prompts_exist())) {
		snprintf(why, sizeof(why), "Method not found: %.64s", method);
		reply_early(in, id, 0, RPC_METHOD_NOT_FOUND, NULL, why);
		return;
	}
	session_touch(sess);
	req = req_new(in, msg, 0, sess->version);
	m->fn(req);
}

static void
notification(const struct mcp_input *in, json_t *msg, int modern)
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method"));
	json_t		*params = json_object_get(msg, "params");
	json_t		*rid;
	struct mcp_req	*req;

	if (strcmp(method, "notifications/initialized") == 0) {
		if (!modern && in->sess != NULL &&
		    in->sess->state == SESS_INITIALIZING)
			in->sess->state = SESS_READY;
		return;
	}
	if (strcmp(method, "notifications/cancelled") != 0)
		return;		/* progress, roots: nothing to do */
	rid = json_object_get(params, "requestId");
	if (rid == NULL)
		return;
	TAILQ_FOREACH(req, &reqs, entry) {
		if (req->task != NULL || !json_equal(req->id, rid))
			continue;
		/* Only the same client's own requests. */
		if ((in->sess != NULL && req->sess == in->sess) ||
		    (req->out == in->out && req->sess == NULL &&
		    mcp_peer_same(&req->peer, in->peer)))
			break;
	}
	if (req == NULL || strcmp(req->method, "initialize") == 0)
		return;
	req_cancel(req, "the client cancelled it");
}

int
mcp_input(const struct mcp_input *in, json_t *msg)
{
	const char	*why;
	enum rpc_kind	 kind;
	json_t		*id;
	int		 modern;

	kind = rpc_classify(msg, &why);
	switch (kind) {
	case RPC_INVALID:
		id = json_object_get(msg, "id");
		if (!json_is_string(id) && !json_is_integer(id))
			id = NULL;
		reply_early(in, id, 400, RPC_INVALID_REQUEST, NULL, why);
		return 1;
	case RPC_RESPONSE:
		got_response(in, msg);
		return 0;
	case RPC_NOTIFICATION:
		notification(in, msg, mcp_is_modern(msg, in->hdr_version));
		return 0;
	case RPC_REQUEST:
		break;
	}
	if (!json_is_object(json_object_get(msg, "params")) &&
	    json_object_get(msg, "params") != NULL) {
		reply_early(in, json_object_get(msg, "id"), 400,
		    RPC_INVALID_PARAMS, NULL, "Invalid params: params must be "
		    "an object");
		return 1;
	}
	modern = mcp_is_modern(msg, in->hdr_version);
	if (modern)
		input_modern(in, msg);
	else
		input_legacy(in, msg);
	return 1;
}

/* --- Batches (2025-03-26, and leniently 2024-11-05) ------------------- */

struct batch {
	struct mcp_out		 out;
	struct mcp_out		*parent;
	json_t			*answers;
	unsigned int		 waiting;
};

static void
batch_flush(struct batch *b)
{
	if (b->waiting > 0)
		return;
	if (json_array_size(b->answers) > 0)
		b->parent->ops->send(b->parent, NULL, b->answers, 1, 0);
	else
		b->parent->ops->abandon(b->parent, NULL);
	json_decref(b->answers);
	free(b);
}

static void
batch_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	struct batch	*b = (struct batch *)out;

	if (!final) {
		/* Progress and questions go out at once. */
		b->parent->ops->send(b->parent, req, msg, 0, 0);
		return;
	}
	json_array_append(b->answers, msg);
	b->waiting--;
	batch_flush(b);
}

static void
batch_abandon(struct mcp_out *out, struct mcp_req *req)
{
	struct batch	*b = (struct batch *)out;

	b->waiting--;
	batch_flush(b);
}

static const struct mcp_out_ops batch_ops = {
	.send = batch_send,
	.abandon = batch_abandon,
};

json_t *
mcp_batch_refused(void)
{
	return rpc_error(NULL, RPC_INVALID_REQUEST,
	    "Invalid Request: batch requests are not supported by this "
	    "protocol version", NULL);
}

void
mcp_input_line(const struct mcp_input *in, const char *line, size_t len)
{
	json_t		*msg, *err = NULL;
	const char	*why;
	int		 code;

	if ((msg = rpc_parse(line, len, &code, &why)) == NULL)
		err = rpc_error(NULL, code, why, NULL);
	else if (!json_is_array(msg))
		mcp_input(in, msg);
	/* Batches exist in 2025-03-26 (and 2024-11-05 leniently). */
	else if (in->sess->state != SESS_NEW &&
	    in->sess->version <= MCP_V20250326)
		mcp_input_batch(in, msg);
	else
		err = mcp_batch_refused();
	if (err != NULL) {
		in->out->ops->send(in->out, NULL, err, 1, 0);
		json_decref(err);
	}
	json_decref(msg);
}

int
mcp_input_batch(const struct mcp_input *in, json_t *arr)
{
	struct mcp_input	 sub = *in;
	struct batch		*b;
	json_t			*el, *msg;
	size_t			 i;
	const char		*why;
	unsigned int		 expect = 0;

	if (json_array_size(arr) == 0) {
		msg = rpc_error(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: an empty batch", NULL);
		in->out->ops->send(in->out, NULL, msg, 1, 400);
		json_decref(msg);
		return 1;
	}
	json_array_foreach(arr, i, el) {
		switch (rpc_classify(el, &why)) {
		case RPC_REQUEST:
		case RPC_INVALID:
			expect++;
			break;
		default:
			break;
		}
		if (json_is_object(el) && json_is_string(json_object_get(el,
		    "method")) && strcmp(json_string_value(json_object_get(el,
		    "method")), "initialize") == 0) {
			msg = rpc_error(NULL, RPC_INVALID_REQUEST,
			    "Invalid Request: initialize may not be part of "
			    "a batch", NULL);
			in->out->ops->send(in->out, NULL, msg, 1, 400);
			json_decref(msg);
			return 1;
		}
	}
	if (expect == 0) {
		json_array_foreach(arr, i, el)
			mcp_input(in, el);
		return 0;
	}
	b = xcalloc(1, sizeof(*b));
	b->out.ops = &batch_ops;
	b->parent = in->out;
	b->answers = json_array();
	b->waiting = expect + 1;	/* held until every element is in */
	sub.out = &b->out;
	json_array_foreach(arr, i, el)
		mcp_input(&sub, el);
	b->waiting--;
	batch_flush(b);
	return 1;
}

void
mcp_init(int stdio)
{
	mcp_stdio_mode = stdio;
	TAILQ_INIT(&reqs);
	TAILQ_INIT(&listeners);
}
