/*
 * sandbox_create, sandbox_stop and sandbox_list: persistent sandboxes,
 * each a container whose /workspace outlives the calls made in it.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "args.h"
#include "mcp.h"
#include "mcpd.h"
#include "policy.h"
#include "proto.h"
#include "tools.h"
#include "util.h"

static const char *const create_args[] = {
	"name", "language", "image", "memory", "cpus", "disk", "timeout",
	"network", "env", "ttl", "idle_timeout", NULL,
};

static void
create_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	json_t		*info;
	char		*text, id[SBX_NAME_MAX];

	if (op->final != IMSG_SBX_CREATED) {
		op_tool_error(req, op, "sandbox_create");
	} else {
		info = op_info_json(&op->info);
		xasprintf(&text, "Created sandbox %s%s%s%s (image %s). Use "
		    "it with sandbox_exec and the file tools; stop it with "
		    "sandbox_stop when done.",
		    host_id(op->info.id, id, sizeof(id)),
		    op->info.name[0] != '\0' ? ", named \"" : "",
		    op->info.name, op->info.name[0] != '\0' ? "\"" : "",
		    op->info.image);
		mcp_list_changed(req->peer.tenant, NOTE_RESOURCES);
		tool_result(req, text_content(text), info, 0);
		free(text);
	}
	op_free(op);
	free(s);
}

void
t_create(struct mcp_req *req, json_t *jargs)
{
	struct args		 a;
	struct sbx_create	 c;
	struct evbuffer		*b;
	const char		*name, *language, *image, *net, *k;
	json_t			*env, *v, *cpus;
	uint64_t		 ttl, idle;

	args_init(&a, jargs, create_args);
	name = args_str(&a, "name", 0, 63);
	language = args_str(&a, "language", 0, 63);
	image = args_str(&a, "image", 0, 63);
	net = args_str(&a, "network", 0, 16);
	env = args_env(&a, "env");
	memset(&c, 0, sizeof(c));
	c.lim.memory = args_size(&a, "memory");
	c.lim.disk = args_size(&a, "disk");
	c.lim.timeout = args_seconds(&a, "timeout", TIMEOUT_MAX_S);
	ttl = args_seconds(&a, "ttl", 366.0 * 86400);
	idle = args_seconds(&a, "idle_timeout", 366.0 * 86400);
	cpus = a.obj != NULL ? json_object_get(a.obj, "cpus") : NULL;
	if (!args_failed(&a) && cpus != NULL && (!json_is_number(cpus) ||
	    json_number_value(cpus) < 0.01 || json_number_value(cpus) > 1024))
		snprintf(a.err, sizeof(a.err), "'cpus' must be a number from "
		    "0.01 to 1024");
	if (!args_failed(&a) && name != NULL && (!name_valid(name) ||
	    strlen(name) == SBX_ID_LEN))
		snprintf(a.err, sizeof(a.err), "'name' may hold letters, "
		    "digits, '.', '_' and '-' only, and must not look like "
		    "an id");
	if (!args_failed(&a) && language != NULL &&
	    policy_language(mcpd_conf, language) == NULL)
		snprintf(a.err, sizeof(a.err), "unknown language '%.63s'; "
		    "see list_languages", language);
	if (!args_failed(&a) && net != NULL && strcmp(net, "none") != 0 &&
	    strcmp(net, "egress") != 0)
		snprintf(a.err, sizeof(a.err), "'network' must be \"none\" or "
		    "\"egress\"");
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	op_ref(&c.ref, req, NULL);
	if (name != NULL)
		str_copy(c.name, name, sizeof(c.name));
	if (image != NULL)
		str_copy(c.image, image, sizeof(c.image));
	if (language != NULL)
		str_copy(c.language, language, sizeof(c.language));
	if (cpus != NULL)
		c.lim.cpus = (uint32_t)(json_number_value(cpus) * 1000 + 0.5);
	c.lim.network = net == NULL ? SBX_NET_DEFAULT :
	    strcmp(net, "egress") == 0 ? SBX_NET_EGRESS : SBX_NET_NONE;
	c.lim.lifetime = ttl;
	c.lim.idle = idle;
	c.envc = (uint32_t)json_object_size(env);
	b = evbuffer_new();
	evbuffer_add(b, &c, sizeof(c));
	json_object_foreach(env, k, v)
		evbuffer_add_printf(b, "%s=%s%c", k, json_string_value(v),
		    '\0');
	simple_start(req, IMSG_SBX_CREATE, b, create_done, "sandbox_create");
}

static void
stop_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	char		*text;

	if (op->final != IMSG_SBX_DONE)
		op_tool_error(req, op, "sandbox_stop");
	else {
		xasprintf(&text, "Stopped sandbox %s; its files are gone.",
		    s->sandbox);
		mcp_list_changed(req->peer.tenant, NOTE_RESOURCES);
		tool_result(req, text_content(text), json_pack("{s:s, s:b}",
		    "sandbox", s->sandbox, "stopped", 1), 0);
		free(text);
	}
	op_free(op);
	free(s);
}

static const char *const sandbox_args[] = { "sandbox", NULL };

void
t_stop(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	struct sbx_ref	 ref;
	struct evbuffer	*b;
	const char	*sandbox;
	struct simple	*s;

	args_init(&a, jargs, sandbox_args);
	sandbox = args_sandbox(&a, 1);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	op_ref(&ref, req, sandbox);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	if ((s = simple_start(req, IMSG_SBX_STOP, b, stop_done,
	    "sandbox_stop")) != NULL)
		str_copy(s->sandbox, sandbox, sizeof(s->sandbox));
}

static void
list_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct evbuffer	*b;
	json_t		*in;
	size_t		 i;
	char		*text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "sandbox_list");
		op_free(op);
		free(s);
		return;
	}
	b = evbuffer_new();
	if (json_array_size(op->infos) == 0)
		evbuffer_add_printf(b, "You have no sandboxes; make one with "
		    "sandbox_create.\n");
	json_array_foreach(op->infos, i, in)
		evbuffer_add_printf(b, "%s%s%s%s  %s  image %s  expires %s\n",
		    json_string_value(json_object_get(in, "id")),
		    json_is_string(json_object_get(in, "name")) ? " (" : "",
		    json_is_string(json_object_get(in, "name")) ?
		    json_string_value(json_object_get(in, "name")) : "",
		    json_is_string(json_object_get(in, "name")) ? ")" : "",
		    json_string_value(json_object_get(in, "state")),
		    json_string_value(json_object_get(in, "image")),
		    json_string_value(json_object_get(in, "expires")));
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:O}", "sandboxes",
	    op->infos), 0);
	free(text);
	op_free(op);
	free(s);
}

void
t_list(struct mcp_req *req, json_t *jargs)
{
	static const char *const none[] = { NULL };
	struct args	 a;
	struct sbx_ref	 ref;
	struct evbuffer	*b;

	if (args_init(&a, jargs, none) == -1) {
		args_tool_error(req, &a);
		return;
	}
	op_ref(&ref, req, NULL);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	simple_start(req, IMSG_SBX_LIST, b, list_done, "sandbox_list");
}
