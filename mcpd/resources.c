/*
 * Resources: each persistent sandbox shows its accumulated output
 * (sandbox://ID/logs), its state (sandbox://ID/state) and its files
 * (sandbox://ID/files/PATH).  Clients of the legacy era may subscribe to
 * a sandbox's logs and hear when they grow; completion offers sandbox ids
 * and names for the templates.
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "proto.h"
#include "util.h"

#define URI_MAX		(INIT_PATH_MAX + 128)
#define LOGS_MAX	(256 * 1024)

static const struct {
	const char	*tmpl;
	const char	*name;
	const char	*title;
	const char	*description;
	const char	*mime;
} templates[] = {
	{ "sandbox://{id}/logs", "sandbox-logs", "Sandbox output",
	  "Everything the commands run in a sandbox printed, most recent "
	  "256 KiB, with each command line and how it ended.",
	  "text/plain" },
	{ "sandbox://{id}/state", "sandbox-state", "Sandbox state",
	  "A sandbox's state, limits, memory in use and expiry, as JSON.",
	  "application/json" },
	{ "sandbox://{id}/files/{+path}", "sandbox-file", "Sandbox file",
	  "A file in a sandbox's /workspace.", NULL },
};

/* A sandbox URI, split: kind is "logs", "state" or "files". */
struct sburi {
	char	 id[SBX_NAME_MAX];
	char	 kind[8];
	char	 path[INIT_PATH_MAX];
};

static int
unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int
parse_uri(const char *uri, struct sburi *u)
{
	const char	*p, *slash;
	size_t		 n, o = 0;
	int		 hi, lo;

	memset(u, 0, sizeof(*u));
	if (strncmp(uri, "sandbox://", 10) != 0)
		return -1;
	p = uri + 10;
	if ((slash = strchr(p, '/')) == NULL)
		return -1;
	n = (size_t)(slash - p);
	if (n == 0 || n >= sizeof(u->id))
		return -1;
	memcpy(u->id, p, n);
	/* Another host's id is the caller's to tell apart: host_of(). */
	if (!host_id_valid(u->id))
		return -1;
	p = slash + 1;
	if (strcmp(p, "logs") == 0 || strcmp(p, "state") == 0) {
		str_copy(u->kind, p, sizeof(u->kind));
		return 0;
	}
	if (strncmp(p, "files/", 6) != 0 || p[6] == '\0')
		return -1;
	str_copy(u->kind, "files", sizeof(u->kind));
	for (p += 6; *p != '\0'; p++) {
		if (o + 1 >= sizeof(u->path))
			return -1;
		if (*p == '%') {
			if ((hi = unhex((unsigned char)p[1])) == -1 ||
			    (lo = unhex((unsigned char)p[2])) == -1 ||
			    (hi == 0 && lo == 0))
				return -1;
			u->path[o++] = (char)(hi << 4 | lo);
			p += 2;
		} else
			u->path[o++] = *p;
	}
	u->path[o] = '\0';
	/* Only paths beneath the workspace name anything. */
	if (u->path[0] == '/' || strcmp(u->path, "..") == 0 ||
	    strncmp(u->path, "../", 3) == 0 || strstr(u->path, "/../") !=
	    NULL || (o >= 3 && strcmp(u->path + o - 3, "/..") == 0))
		return -1;
	return 0;
}

static void
not_found(struct mcp_req *req, const char *uri)
{
	mcp_error(req, req->modern ? RPC_INVALID_PARAMS :
	    MCP_E_RESOURCE_NOT_FOUND, json_pack("{s:s}", "uri", uri),
	    "Resource not found: %.200s", uri);
}

/* --- resources/list ---------------------------------------------------- */

struct rq {
	struct mcp_req	*req;
	struct op	*op;
	char		 uri[URI_MAX];
	struct sburi	 u;
};

static void
rq_cancel(struct mcp_req *req)
{
	struct rq	*q = req->hctx;

	if (q->op != NULL)
		op_cancel(q->op);
	free(q);
}

static struct rq *
rq_start(struct mcp_req *req, uint32_t type, struct evbuffer *b, op_fn done)
{
	struct rq	*q = xcalloc(1, sizeof(*q));
	const char	*why;

	q->req = req;
	q->op = op_start(type, b, done, q, &why);
	evbuffer_free(b);
	if (q->op == NULL) {
		free(q);
		mcp_error(req, RPC_INTERNAL_ERROR, NULL, "%s", why);
		return NULL;
	}
	req->hctx = q;
	req->cancel = rq_cancel;
	return q;
}

static struct mcp_req *
rq_end(struct rq *q)
{
	struct mcp_req	*req = q->req;

	req->cancel = NULL;
	req->hctx = NULL;
	q->op = NULL;
	return req;
}

static void
list_done(struct op *op)
{
	struct rq	*q = op->arg;
	struct mcp_req	*req = rq_end(q);
	json_t		*list, *in, *name, *res;
	size_t		 i;
	const char	*id, *label;
	char		 uri[URI_MAX], desc[160];

	list = json_array();
	if (mcp_ext->resources != NULL)
		mcp_ext->resources(req, list);
	if (op->final == IMSG_SBX_DONE) {
		json_array_foreach(op->infos, i, in) {
			id = json_string_value(json_object_get(in, "id"));
			name = json_object_get(in, "name");
			label = json_is_string(name) ? json_string_value(name) :
			    id;
			snprintf(uri, sizeof(uri), "sandbox://%s/logs", id);
			snprintf(desc, sizeof(desc), "Output of the commands "
			    "run in sandbox %s", label);
			json_array_append_new(list, json_pack("{s:s, s:s+, "
			    "s:s, s:s}", "uri", uri, "name", label, " logs",
			    "description", desc, "mimeType", "text/plain"));
			snprintf(uri, sizeof(uri), "sandbox://%s/state", id);
			snprintf(desc, sizeof(desc), "State, limits and expiry "
			    "of sandbox %s", label);
			json_array_append_new(list, json_pack("{s:s, s:s+, "
			    "s:s, s:s}", "uri", uri, "name", label, " state",
			    "description", desc, "mimeType",
			    "application/json"));
		}
	} else
		log_debug("resources/list: %s", op_error(op));
	res = json_pack("{s:o}", "resources", list);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("private"));
	}
	mcp_result(req, res);
	op_free(op);
	free(q);
}

void
resources_list(struct mcp_req *req)
{
	struct sbx_ref	 ref;
	struct evbuffer	*b;

	if (json_object_get(req->params, "cursor") != NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unknown cursor");
		return;
	}
	op_ref(&ref, req, NULL);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	rq_start(req, IMSG_SBX_LIST, b, list_done);
}

void
resources_templates(struct mcp_req *req)
{
	json_t	*list, *t, *res;
	size_t	 i;

	if (json_object_get(req->params, "cursor") != NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unknown cursor");
		return;
	}
	list = json_array();
	if (mcp_ext->templates != NULL)
		mcp_ext->templates(req, list);
	for (i = 0; i < nitems(templates); i++) {
		t = json_pack("{s:s, s:s, s:s}", "uriTemplate",
		    templates[i].tmpl, "name", templates[i].name,
		    "description", templates[i].description);
		if (req->modern || req->version >= MCP_V20250618)
			json_object_set_new(t, "title",
			    json_string(templates[i].title));
		if (templates[i].mime != NULL)
			json_object_set_new(t, "mimeType",
			    json_string(templates[i].mime));
		json_array_append_new(list, t);
	}
	res = json_pack("{s:o}", "resourceTemplates", list);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(3600000));
		json_object_set_new(res, "cacheScope", json_string("public"));
	}
	mcp_result(req, res);
}

/* --- resources/read ------------------------------------------------- */

static void
read_reply(struct mcp_req *req, const char *uri, const char *mime,
    const uint8_t *p, size_t n, int force_text)
{
	json_t	*c, *res;
	char	*b64;

	if (p == NULL)
		p = (const uint8_t *)"";
	c = json_pack("{s:s}", "uri", uri);
	if (mime != NULL)
		json_object_set_new(c, "mimeType", json_string(mime));
	if (force_text || (utf8_valid(p, n) && memchr(p, '\0', n) == NULL))
		json_object_set_new(c, "text", utf8_json(p, n));
	else {
		b64 = b64_encode(p, n);
		json_object_set_new(c, "blob", json_string(b64));
		free(b64);
	}
	res = json_pack("{s:[o]}", "contents", c);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("private"));
	}
	mcp_result(req, res);
}

static void
read_done(struct op *op)
{
	struct rq	*q = op->arg;
	struct mcp_req	*req = rq_end(q);
	json_t		*j;
	char		*s;

	if (op->final == IMSG_SBX_ERROR) {
		if (op->error.code == SBX_E_NOTFOUND ||
		    op->error.code == SBX_E_INVALID ||
		    (op->error.code == SBX_E_FILE && op->error.err == ENOENT))
			not_found(req, q->uri);
		else
			mcp_error(req, RPC_INTERNAL_ERROR, NULL,
			    "Reading %.200s failed: %s", q->uri, op_error(op));
	} else if (strcmp(q->u.kind, "state") == 0) {
		j = json_array_get(op->infos, 0);
		if (j == NULL)
			not_found(req, q->uri);
		else {
			s = json_dumps(j, JSON_INDENT(2));
			read_reply(req, q->uri, "application/json",
			    (uint8_t *)s, strlen(s), 1);
			free(s);
		}
	} else if (strcmp(q->u.kind, "logs") == 0)
		read_reply(req, q->uri, "text/plain",
		    evbuffer_pullup(op->data, -1),
		    evbuffer_get_length(op->data), 1);
	else
		read_reply(req, q->uri, mime_guess(q->u.path),
		    evbuffer_pullup(op->data, -1),
		    evbuffer_get_length(op->data), 0);
	op_free(op);
	free(q);
}

void
resources_read(struct mcp_req *req)
{
	json_t		*uri = json_object_get(req->params, "uri");
	struct sburi	 u;
	struct evbuffer	*b;
	struct sbx_ref	 ref;
	struct sbx_logs	 lg;
	struct sbx_file	 f;
	struct rq	*q;
	uint32_t	 type;
	char		 owner[SBX_NAME_MAX], here[64];

	if (!json_is_string(uri) || json_string_length(uri) == 0) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: resources/read needs a uri");
		return;
	}
	if (mcp_ext->read != NULL && mcp_ext->read(req,
	    json_string_value(uri)))
		return;
	if (json_string_length(uri) >= URI_MAX ||
	    parse_uri(json_string_value(uri), &u) == -1) {
		not_found(req, json_string_value(uri));
		return;
	}
	if (host_of(u.id, owner, sizeof(owner)) == -1) {
		mcp_error(req, req->modern ? RPC_INVALID_PARAMS :
		    MCP_E_RESOURCE_NOT_FOUND, json_pack("{s:s, s:s}", "uri",
		    json_string_value(uri), "host", owner),
		    "Resource not found here: sandbox %s is on host %s, not "
		    "on %s: the balancer sends you here while host %s is "
		    "down, or since hosts were added or removed", u.id, owner,
		    host_this(here, sizeof(here)), owner);
		return;
	}
	b = evbuffer_new();
	if (strcmp(u.kind, "state") == 0) {
		op_ref(&ref, req, u.id);
		evbuffer_add(b, &ref, sizeof(ref));
		type = IMSG_SBX_STATUS;
	} else if (strcmp(u.kind, "logs") == 0) {
		memset(&lg, 0, sizeof(lg));
		op_ref(&lg.ref, req, u.id);
		lg.max = LOGS_MAX;
		evbuffer_add(b, &lg, sizeof(lg));
		type = IMSG_SBX_LOGS;
	} else {
		memset(&f, 0, sizeof(f));
		op_ref(&f.ref, req, u.id);
		f.size = SBX_FILE_MAX;
		f.pathlen = (uint32_t)strlen(u.path) + 1;
		evbuffer_add(b, &f, sizeof(f));
		evbuffer_add(b, u.path, f.pathlen);
		type = IMSG_SBX_READ;
	}
	if ((q = rq_start(req, type, b, read_done)) != NULL) {
		str_copy(q->uri, json_string_value(uri), sizeof(q->uri));
		q->u = u;
	}
}

/* --- Subscriptions (legacy era) ----------------------------------- */

void
resources_subscribe(struct mcp_req *req)
{
	json_t	*uri = json_object_get(req->params, "uri");

	if (!json_is_string(uri) || json_string_length(uri) == 0 ||
	    json_string_length(uri) >= URI_MAX) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: subscribe needs a uri");
		return;
	}
	if (json_object_size(req->sess->subs) >= 1024) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Too many "
		    "subscriptions in this session (at most 1024)");
		return;
	}
	json_object_set_new(req->sess->subs, json_string_value(uri),
	    json_true());
	mcp_result(req, json_object());
}

void
resources_unsubscribe(struct mcp_req *req)
{
	json_t	*uri = json_object_get(req->params, "uri");

	if (!json_is_string(uri)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unsubscribe needs a uri");
		return;
	}
	json_object_del(req->sess->subs, json_string_value(uri));
	mcp_result(req, json_object());
}

/* --- Completion ----------------------------------------------------- */

static void
complete_reply(struct mcp_req *req, json_t *values)
{
	size_t	 total = json_array_size(values);

	while (json_array_size(values) > 100)
		json_array_remove(values, json_array_size(values) - 1);
	mcp_result(req, json_pack("{s:{s:o, s:I, s:b}}", "completion",
	    "values", values, "total", (json_int_t)total, "hasMore",
	    total > 100));
}

static void
complete_done(struct op *op)
{
	struct rq	*q = op->arg;
	struct mcp_req	*req = rq_end(q);
	json_t		*values = json_array(), *in, *v;
	size_t		 i, n = strlen(q->uri);

	json_array_foreach(op->infos, i, in) {
		v = json_object_get(in, "id");
		if (strncmp(json_string_value(v), q->uri, n) == 0)
			json_array_append(values, v);
		v = json_object_get(in, "name");
		if (json_is_string(v) &&
		    strncmp(json_string_value(v), q->uri, n) == 0)
			json_array_append(values, v);
	}
	complete_reply(req, values);
	op_free(op);
	free(q);
}

void
completion_complete(struct mcp_req *req)
{
	json_t		*ref = json_object_get(req->params, "ref");
	json_t		*arg = json_object_get(req->params, "argument");
	const char	*type, *name, *value, *uri;
	struct sbx_ref	 r;
	struct evbuffer	*b;
	struct rq	*q;
	size_t		 i;

	type = json_string_value(json_object_get(ref, "type"));
	name = json_string_value(json_object_get(arg, "name"));
	value = json_string_value(json_object_get(arg, "value"));
	if (type == NULL || name == NULL || value == NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid params: "
		    "completion needs ref.type, argument.name and "
		    "argument.value");
		return;
	}
	if (mcp_ext->complete != NULL && mcp_ext->complete(req, ref, name,
	    value))
		return;
	if (strcmp(type, "ref/resource") != 0) {
		complete_reply(req, json_array());
		return;
	}
	uri = json_string_value(json_object_get(ref, "uri"));
	for (i = 0; i < nitems(templates); i++)
		if (uri != NULL && strcmp(uri, templates[i].tmpl) == 0)
			break;
	if (i == nitems(templates) || strcmp(name, "id") != 0 ||
	    strlen(value) >= sizeof(q->uri)) {
		complete_reply(req, json_array());
		return;
	}
	op_ref(&r, req, NULL);
	b = evbuffer_new();
	evbuffer_add(b, &r, sizeof(r));
	if ((q = rq_start(req, IMSG_SBX_LIST, b, complete_done)) != NULL)
		str_copy(q->uri, value, sizeof(q->uri));
}
