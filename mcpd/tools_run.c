/*
 * run_code and sandbox_exec: code that runs, once in a fresh container or
 * as commands in a sandbox.  Output comes back whole in the result, and,
 * when the client asked for progress, as it is made: a few chunks a
 * second, cut to a size, with what was left out counted.  A run in a
 * sandbox tells the subscribers of that sandbox's log.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "args.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "policy.h"
#include "proto.h"
#include "tools.h"
#include "util.h"

#define CODE_MAX		(4 * 1024 * 1024)
#define FILES_MAX		100
#define FILES_BYTES		(16 * 1024 * 1024)
#define COMMANDS_MAX		64
#define COMMAND_MAX		(64 * 1024)
#define PROGRESS_EVERY_MS	200	/* at most five a second */
#define PROGRESS_CHUNK		4096	/* bytes of output in one */
#define PROGRESS_PENDING	(64 * 1024)

/*
 * Tell subscribers that a sandbox's log has more in it.  A subscription
 * may name the sandbox by id or by name, and so may the tool call: its
 * status says both.
 */
struct logs_note {
	const struct tenant	*tenant;
	struct op		*op;
};

static void
logs_note_uri(const struct tenant *t, const char *sandbox)
{
	char	 uri[128];

	snprintf(uri, sizeof(uri), "sandbox://%s/logs", sandbox);
	mcp_resource_updated(t, uri);
}

static void
logs_status_done(struct op *op)
{
	struct logs_note	*n = op->arg;
	char			 id[SBX_NAME_MAX];

	if (op->final == IMSG_SBX_DONE && op->info.id[0] != '\0') {
		logs_note_uri(n->tenant, host_id(op->info.id, id, sizeof(id)));
		if (op->info.name[0] != '\0')
			logs_note_uri(n->tenant, op->info.name);
	}
	op_free(op);
	free(n);
}

static void
logs_changed(const struct mcp_req *req, const char *sandbox)
{
	struct logs_note	*n;
	struct sbx_ref		 ref;
	struct evbuffer		*b;
	const char		*why;

	if (!mcp_subscribed(req->peer.tenant, "sandbox://"))
		return;
	n = xcalloc(1, sizeof(*n));
	n->tenant = req->peer.tenant;
	op_ref(&ref, req, sandbox);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	if ((n->op = op_start(IMSG_SBX_STATUS, b, logs_status_done, n,
	    &why)) == NULL)
		free(n);
	evbuffer_free(b);
}

struct run {
	struct mcp_req		*req;
	struct op		*op;
	int			 exec;		/* sandbox_exec, not run_code */
	int			 share;		/* run_code: links to its files */
	const char		*language;	/* run_code: the policy's name */
	const char		*result;	/* of the last to end, counted */
	char			 sandbox[SBX_NAME_MAX];
	/* sandbox_exec's commands, and the request parts they share */
	json_t			*cmds;
	size_t			 next;
	int			 keep_going;
	char			*cwd;
	json_t			*env;
	char			*in;
	size_t			 inlen;
	uint64_t		 timeout;
	json_t			*results;
	/* output */
	struct evbuffer		*out[2];
	struct evbuffer		*build;
	/* progress */
	struct evbuffer		*pend;
	uint64_t		 produced;
	uint64_t		 dropped;
	struct event		*ev_flush;
	uint64_t		 last_flush;
};

static void
run_free(struct run *r)
{
	if (r->op != NULL)
		op_cancel(r->op);
	if (r->ev_flush != NULL)
		event_free(r->ev_flush);
	evbuffer_free(r->out[0]);
	evbuffer_free(r->out[1]);
	evbuffer_free(r->build);
	evbuffer_free(r->pend);
	json_decref(r->cmds);
	json_decref(r->env);
	json_decref(r->results);
	free(r->cwd);
	free(r->in);
	free(r);
}

/* A run or a command has ended: counted, and named on its log line. */
static void
run_counted(struct run *r, const struct sbx_result *res)
{
	if (r->exec)
		metrics_exec(res);
	else
		metrics_run(r->language, res);
	r->result = metrics_result_name(res);
}

static void
run_note(struct run *r)
{
	if (r->exec)
		(void)snprintf(r->req->note, sizeof(r->req->note),
		    "commands=%zu result=%s", json_array_size(r->results),
		    r->result != NULL ? r->result : "none");
	else
		(void)snprintf(r->req->note, sizeof(r->req->note),
		    "language=%s result=%s", r->language, r->result);
}

static void
run_cancel(struct mcp_req *req)
{
	struct run		*r = req->hctx;
	struct sbx_result	 res;

	if (r->op != NULL) {
		memset(&res, 0, sizeof(res));
		res.flags = SBX_R_CANCELLED;
		run_counted(r, &res);
	}
	run_free(r);
}

static void
run_flush(struct run *r)
{
	char		*s, msg[PROGRESS_CHUNK + 64];
	size_t		 n;
	json_t		*j;

	if (evbuffer_get_length(r->pend) == 0)
		return;
	n = evbuffer_get_length(r->pend);
	s = xmalloc(n + 1);
	evbuffer_remove(r->pend, s, n);
	/* Valid UTF-8 for the message: what JSON allows. */
	j = utf8_json((uint8_t *)s, n);
	if (r->dropped > 0)
		snprintf(msg, sizeof(msg), "%s[... %llu bytes not shown]\n",
		    json_string_value(j), (unsigned long long)r->dropped);
	else
		snprintf(msg, sizeof(msg), "%s", json_string_value(j));
	json_decref(j);
	free(s);
	r->dropped = 0;
	r->last_flush = mono_ms();
	/* The buffer may have cut a character: once more, or JSON refuses
	 * the message and it is lost. */
	j = utf8_json((uint8_t *)msg, strlen(msg));
	mcp_progress(r->req, (double)r->produced, 0, json_string_value(j));
	json_decref(j);
}

static void
run_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	run_flush(arg);
}

static void
run_output(struct op *op, int stream, int phase, const uint8_t *p,
    size_t len)
{
	struct run	*r = op->arg;
	struct timeval	 tv;
	uint64_t	 now, room;

	if (phase == SBX_PHASE_BUILD)
		evbuffer_add(r->build, p, len);
	else
		evbuffer_add(r->out[stream - 1], p, len);
	if (r->req->progress == NULL || len == 0)
		return;
	r->produced += len;
	room = PROGRESS_CHUNK - evbuffer_get_length(r->pend);
	if (len > room) {
		evbuffer_add(r->pend, p, room);
		r->dropped += len - room;
	} else
		evbuffer_add(r->pend, p, len);
	now = mono_ms();
	if (now - r->last_flush >= PROGRESS_EVERY_MS) {
		run_flush(r);
		return;
	}
	if (!evtimer_pending(r->ev_flush, NULL)) {
		tv.tv_sec = 0;
		tv.tv_usec = (suseconds_t)(PROGRESS_EVERY_MS -
		    (now - r->last_flush)) * 1000;
		evtimer_add(r->ev_flush, &tv);
	}
}

static struct run *
run_new(struct mcp_req *req, int exec)
{
	struct run	*r = xcalloc(1, sizeof(*r));

	r->req = req;
	r->exec = exec;
	r->out[0] = evbuffer_new();
	r->out[1] = evbuffer_new();
	r->build = evbuffer_new();
	r->pend = evbuffer_new();
	r->results = json_array();
	if ((r->ev_flush = evtimer_new(mcp_base, run_flush_cb, r)) == NULL)
		fatalx("cannot create a timer");
	req->hctx = r;
	req->cancel = run_cancel;
	return r;
}

static json_t *
buf_json(struct evbuffer *b)
{
	size_t	 n = evbuffer_get_length(b);

	return utf8_json(evbuffer_pullup(b, -1), n);
}

/* One finished execution: its structured result. */
static json_t *
run_result(struct run *r, const struct sbx_result *res)
{
	json_t	*o;

	o = json_pack("{s:o, s:o, s:b, s:b, s:b, s:o, s:o, s:I, s:I, s:I}",
	    "exit_code", res->signal == 0 && res->exit_code >= 0 ?
	    json_integer(res->exit_code) : json_null(),
	    "signal", res->signal != 0 ? json_string(signal_name(res->signal))
	    : json_null(),
	    "timed_out", (res->flags & SBX_R_TIMED_OUT) != 0,
	    "oom_killed", (res->flags & SBX_R_OOM) != 0,
	    "output_truncated", (res->flags & SBX_R_TRUNCATED) != 0,
	    "stdout", buf_json(r->out[0]),
	    "stderr", buf_json(r->out[1]),
	    "duration_ms", (json_int_t)res->wall_ms,
	    "cpu_ms", (json_int_t)res->cpu_ms,
	    "peak_memory_bytes", (json_int_t)res->peak_memory);
	return o;
}

static int
run_failed(const struct sbx_result *res)
{
	return res->exit_code != 0 || res->signal != 0 ||
	    (res->flags & (SBX_R_TIMED_OUT | SBX_R_OOM | SBX_R_BUILD_FAILED |
	    SBX_R_EXEC_FAILED | SBX_R_CANCELLED)) != 0;
}

/* A line saying how it ended, for the text block. */
static void
run_summary(struct evbuffer *b, const struct sbx_result *res,
    uint64_t timeout)
{
	if (res->flags & SBX_R_EXEC_FAILED)
		evbuffer_add_printf(b, "could not start: %s\n",
		    strerror(res->exec_errno));
	else if (res->flags & SBX_R_TIMED_OUT)
		evbuffer_add_printf(b, "timed out after %llu ms and was "
		    "killed; make it faster, or raise 'timeout' (within "
		    "your limit)\n", (unsigned long long)res->wall_ms);
	else if (res->flags & SBX_R_OOM)
		evbuffer_add_printf(b, "killed: out of memory; use less, or "
		    "a sandbox with more 'memory'\n");
	else if (res->flags & SBX_R_CANCELLED)
		evbuffer_add_printf(b, "cancelled\n");
	else if (res->signal != 0)
		evbuffer_add_printf(b, "killed by %s\n",
		    signal_name(res->signal));
	else if (res->flags & SBX_R_BUILD_FAILED)
		evbuffer_add_printf(b, "compilation failed (exit code %d)\n",
		    res->exit_code);
	else
		evbuffer_add_printf(b, "exit code %d\n", res->exit_code);
	evbuffer_add_printf(b, "(%llu ms, %llu ms CPU, %llu KiB peak "
	    "memory)\n", (unsigned long long)res->wall_ms,
	    (unsigned long long)res->cpu_ms,
	    (unsigned long long)(res->peak_memory / 1024));
	if (res->flags & SBX_R_TRUNCATED)
		evbuffer_add_printf(b, "output was cut at the output limit\n");
	(void)timeout;
}

/* One stream's text under its heading, ending with a newline. */
static void
add_stream(struct evbuffer *b, const char *label, struct evbuffer *out)
{
	json_t		*j = buf_json(out);
	const char	*s = json_string_value(j);
	size_t		 n = json_string_length(j);

	if (n > 0)
		evbuffer_add_printf(b, "--- %s ---\n%s%s", label, s,
		    s[n - 1] != '\n' ? "\n" : "");
	json_decref(j);
}

static void
run_streams(struct evbuffer *b, struct run *r)
{
	add_stream(b, "build output", r->build);
	add_stream(b, "stdout", r->out[0]);
	add_stream(b, "stderr", r->out[1]);
}

/* Does the content look like what its name says?  Else it is no picture. */
static int
picture_sniff(const char *mime, const uint8_t *p, size_t n)
{
	if (strcmp(mime, "image/png") == 0)
		return n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0;
	if (strcmp(mime, "image/jpeg") == 0)
		return n >= 3 && memcmp(p, "\xff\xd8\xff", 3) == 0;
	if (strcmp(mime, "image/gif") == 0)
		return n >= 6 && (memcmp(p, "GIF87a", 6) == 0 ||
		    memcmp(p, "GIF89a", 6) == 0);
	if (strcmp(mime, "image/webp") == 0)
		return n >= 12 && memcmp(p, "RIFF", 4) == 0 &&
		    memcmp(p + 8, "WEBP", 4) == 0;
	return memmem(p, n < 4096 ? n : 4096, "<svg", 4) != NULL;
}

/*
 * The files a run made: into the structured result, a line of the text,
 * and each picture among them as image content after the text.
 */
static void
run_files_made(struct op *op, json_t *st, struct evbuffer *b,
    json_t *content)
{
	json_t		*made, *e, *pic;
	const char	*path, *mime, *b64;
	uint8_t		*raw;
	size_t		 i, n;

	made = json_array();
	json_array_foreach(op->entries, i, e) {
		json_array_append_new(made, json_pack("{s:O, s:O}", "path",
		    json_object_get(e, "name"), "size", json_object_get(e,
		    "size")));
		evbuffer_add_printf(b, "%s%s (%lld bytes)", i == 0 ?
		    "files created: " : ", ", json_string_value(
		    json_object_get(e, "name")), (long long)json_integer_value(
		    json_object_get(e, "size")));
	}
	if (i > 0)
		evbuffer_add(b, "\n", 1);
	json_object_set_new(st, "files_created", made);
	json_array_foreach(op->pictures, i, pic) {
		path = json_string_value(json_object_get(pic, "path"));
		b64 = json_string_value(json_object_get(pic, "data"));
		mime = mime_guess(path);
		if (b64 == NULL || !mime_is_image(mime) ||
		    (raw = b64_decode(b64, strlen(b64), &n)) == NULL)
			continue;
		if (n > 0 && picture_sniff(mime, raw, n)) {
			json_array_append_new(content, json_pack("{s:s, s:s, "
			    "s:s}", "type", "image", "data", b64, "mimeType",
			    mime));
			evbuffer_add_printf(b, "%s is shown below (%s)\n", path,
			    mime);
		}
		free(raw);
	}
}

static void
run_code_done(struct op *op)
{
	struct run	*r = op->arg;
	struct mcp_req	*req = r->req;
	struct evbuffer	*b;
	json_t		*st, *content, *pictures;
	char		*text;
	char		 sandbox[SBX_NAME_MAX];
	int		 failed, share;

	r->op = NULL;
	run_flush(r);
	run_counted(r, op->final == IMSG_SBX_RESULT ? &op->result : NULL);
	run_note(r);
	if (op->final != IMSG_SBX_RESULT) {
		req->cancel = NULL;
		run_free(r);
		op_tool_error(req, op, "run_code");
		op_free(op);
		return;
	}
	st = run_result(r, &op->result);
	json_object_set_new(st, "build_failed",
	    json_boolean(op->result.flags & SBX_R_BUILD_FAILED));
	if (evbuffer_get_length(r->build) > 0)
		json_object_set_new(st, "build_output", buf_json(r->build));
	json_object_set_new(st, "sandbox", r->sandbox[0] != '\0' ?
	    json_string(r->sandbox) : json_null());
	b = evbuffer_new();
	pictures = json_array();
	run_summary(b, &op->result, r->timeout);
	run_files_made(op, st, b, pictures);
	run_streams(b, r);
	text = buf_text(b);
	evbuffer_free(b);
	content = text_content(text);
	json_array_extend(content, pictures);
	json_decref(pictures);
	failed = run_failed(&op->result);
	mcp_log(req, failed ? MLOG_WARNING : MLOG_DEBUG, "run_code",
	    json_pack("{s:s, s:I}", "result", failed ? "failed" : "ok",
	    "duration_ms", (json_int_t)op->result.wall_ms));
	if (r->sandbox[0] != '\0')
		logs_changed(req, r->sandbox);
	op_free(op);
	req->cancel = NULL;
	share = r->share && json_array_size(json_object_get(st,
	    "files_created")) > 0;
	str_copy(sandbox, r->sandbox, sizeof(sandbox));
	run_free(r);
	if (share)
		links_share_run(req, sandbox, json_object_get(st,
		    "files_created"), content, st, failed);
	else
		tool_result(req, content, st, failed);
	free(text);
}

static const char *const run_code_args[] = {
	"language", "code", "files", "stdin", "args", "env", "timeout",
	"sandbox", "image", "background", "share", NULL,
};

/* files: [{path, content, encoding}] into the request. */
static int
add_files(struct args *a, json_t *files, struct evbuffer *b, uint32_t *n)
{
	struct sbx_filehdr	 fh;
	json_t			*f, *p, *c, *e;
	size_t			 i, total = 0, len;
	uint8_t			*data;
	const char		*enc;

	*n = 0;
	if (files == NULL || json_is_null(files))
		return 0;
	if (!json_is_array(files) || json_array_size(files) > FILES_MAX) {
		snprintf(a->err, sizeof(a->err), "'files' must be an array "
		    "of at most %d {path, content} objects", FILES_MAX);
		return -1;
	}
	json_array_foreach(files, i, f) {
		p = json_object_get(f, "path");
		c = json_object_get(f, "content");
		e = json_object_get(f, "encoding");
		enc = json_is_string(e) ? json_string_value(e) : "text";
		if (!json_is_object(f) || !json_is_string(p) ||
		    !json_is_string(c) || (e != NULL && !json_is_string(e)) ||
		    (strcmp(enc, "text") != 0 && strcmp(enc, "base64") != 0) ||
		    json_string_length(p) == 0 || json_string_length(p) >=
		    INIT_PATH_MAX) {
			snprintf(a->err, sizeof(a->err), "'files'[%zu] must be "
			    "{\"path\": string, \"content\": string, "
			    "\"encoding\": \"text\" or \"base64\"}", i);
			return -1;
		}
		if (strcmp(enc, "base64") == 0) {
			if ((data = b64_decode(json_string_value(c),
			    json_string_length(c), &len)) == NULL) {
				snprintf(a->err, sizeof(a->err),
				    "'files'[%zu]: the content is not valid "
				    "base64", i);
				return -1;
			}
		} else {
			len = json_string_length(c);
			data = xmalloc(len + 1);
			memcpy(data, json_string_value(c), len);
		}
		total += len;
		if (total > FILES_BYTES) {
			free(data);
			snprintf(a->err, sizeof(a->err), "'files' are too "
			    "large together (at most %d MiB)",
			    FILES_BYTES >> 20);
			return -1;
		}
		memset(&fh, 0, sizeof(fh));
		fh.mode = 0644;
		fh.pathlen = (uint32_t)json_string_length(p) + 1;
		fh.size = len;
		evbuffer_add(b, &fh, sizeof(fh));
		add_str0(b, json_string_value(p));
		evbuffer_add(b, data, len);
		free(data);
		(*n)++;
	}
	return 0;
}

void
t_run_code(struct mcp_req *req, json_t *jargs)
{
	struct args		 a;
	struct sbx_run		 sr;
	struct evbuffer		*b, *tail;
	struct language		*lang = NULL;
	const char		*language, *code, *in, *sandbox, *image, *why;
	size_t			 codelen, inlen, i;
	json_t			*argv, *env, *v;
	const char		*k;
	uint64_t		 timeout;
	struct run		*r;
	int			 share;

	args_init(&a, jargs, run_code_args);
	language = args_str(&a, "language", 1, 63);
	code = args_bytes(&a, "code", 1, CODE_MAX, &codelen);
	in = args_bytes(&a, "stdin", 0, SBX_RUN_STDIN_MAX, &inlen);
	argv = args_strings(&a, "args", 0, 1024, 65536);
	env = args_env(&a, "env");
	timeout = args_seconds(&a, "timeout", TIMEOUT_MAX_S);
	sandbox = args_sandbox(&a, 0);
	image = args_str(&a, "image", 0, 63);
	(void)args_bool(&a, "background", 0);
	share = args_bool(&a, "share", 0);
	if (!args_failed(&a) && share && sandbox == NULL)
		snprintf(a.err, sizeof(a.err), "'share' needs a 'sandbox': a "
		    "one-shot run's files are gone when it ends");
	if (!args_failed(&a) && image != NULL && sandbox != NULL)
		snprintf(a.err, sizeof(a.err), "give 'image' or 'sandbox', "
		    "not both: a sandbox keeps the image it was made from");
	if (!args_failed(&a) &&
	    (lang = policy_language(mcpd_conf, language)) == NULL)
		snprintf(a.err, sizeof(a.err), "unknown language '%.63s'; "
		    "call list_languages to see the languages available",
		    language);
	b = evbuffer_new();
	tail = evbuffer_new();
	memset(&sr, 0, sizeof(sr));
	if (!args_failed(&a) && add_files(&a, json_object_get(a.obj,
	    "files"), tail, &sr.nfiles) == -1) {
		/* a.err says why */
	}
	if (args_failed(&a)) {
		evbuffer_free(b);
		evbuffer_free(tail);
		args_tool_error(req, &a);
		return;
	}
	op_ref(&sr.ref, req, sandbox);
	str_copy(sr.language, language, sizeof(sr.language));
	if (image != NULL)
		str_copy(sr.image, image, sizeof(sr.image));
	sr.lim.timeout = timeout;
	sr.argc = (uint32_t)json_array_size(argv);
	sr.envc = (uint32_t)json_object_size(env);
	sr.codelen = (uint32_t)codelen;
	sr.stdinlen = (uint32_t)inlen;
	evbuffer_add(b, &sr, sizeof(sr));
	json_array_foreach(argv, i, v)
		add_str0(b, json_string_value(v));
	json_object_foreach(env, k, v)
		evbuffer_add_printf(b, "%s=%s%c", k, json_string_value(v),
		    '\0');
	evbuffer_add_buffer(b, tail);
	evbuffer_free(tail);
	evbuffer_add(b, code, codelen);
	if (in != NULL)
		evbuffer_add(b, in, inlen);

	r = run_new(req, 0);
	r->language = lang->name;
	r->timeout = timeout;
	r->share = share;
	if (sandbox != NULL)
		str_copy(r->sandbox, sandbox, sizeof(r->sandbox));
	r->op = op_start(IMSG_SBX_RUN, b, run_code_done, r, &why);
	evbuffer_free(b);
	if (r->op == NULL) {
		req->cancel = NULL;
		run_free(r);
		mcp_tool_error(req, "run_code failed: %s.", why);
		return;
	}
	r->op->output = run_output;
}

static void	exec_next(struct run *);

static void
exec_finish(struct run *r)
{
	struct mcp_req	*req = r->req;
	struct evbuffer	*b;
	json_t		*st, *res, *last = NULL;
	size_t		 i;
	int		 all = 1;
	char		*text;

	json_array_foreach(r->results, i, res) {
		last = json_object_get(res, "exit_code");
		if (json_is_true(json_object_get(res, "failed")))
			all = 0;
		json_object_del(res, "failed");
	}
	b = evbuffer_new();
	json_array_foreach(r->results, i, res)
		evbuffer_add_printf(b, "%s", json_string_value(
		    json_object_get(res, "summary")));
	json_array_foreach(r->results, i, res)
		json_object_del(res, "summary");
	if (json_array_size(r->results) < json_array_size(r->cmds))
		evbuffer_add_printf(b, "(%zu more command%s not run: an "
		    "earlier one failed; pass keep_going to run them "
		    "anyway)\n", json_array_size(r->cmds) -
		    json_array_size(r->results),
		    json_array_size(r->cmds) - json_array_size(r->results) ==
		    1 ? "" : "s");
	text = buf_text(b);
	evbuffer_free(b);
	st = json_pack("{s:O, s:O, s:b}", "results", r->results, "exit_code",
	    last != NULL ? last : json_null(), "all_succeeded", all);
	run_note(r);
	logs_changed(req, r->sandbox);
	req->cancel = NULL;
	run_free(r);
	tool_result(req, text_content(text), st, !all);
	free(text);
}

static void
exec_done(struct op *op)
{
	struct run	*r = op->arg;
	struct mcp_req	*req;
	struct evbuffer	*b;
	json_t		*res;
	const char	*cmd;
	char		*text;
	int		 failed;

	r->op = NULL;
	run_flush(r);
	cmd = json_string_value(json_array_get(r->cmds, r->next));
	run_counted(r, op->final == IMSG_SBX_RESULT ? &op->result : NULL);
	if (op->final != IMSG_SBX_RESULT) {
		if (r->next == 0) {
			req = r->req;
			(void)snprintf(req->note, sizeof(req->note),
			    "commands=1 result=%s", r->result);
			req->cancel = NULL;
			run_free(r);
			op_tool_error(req, op, "sandbox_exec");
			op_free(op);
			return;
		}
		res = json_pack("{s:s, s:n, s:b, s:s}", "command", cmd,
		    "exit_code", "failed", 1, "summary", "");
		json_object_set_new(res, "summary", json_sprintf("$ %s\n"
		    "failed: %s\n", cmd, op_error(op)));
		json_array_append_new(r->results, res);
		op_free(op);
		exec_finish(r);
		return;
	}
	res = run_result(r, &op->result);
	json_object_set_new(res, "command", json_string(cmd));
	failed = run_failed(&op->result);
	b = evbuffer_new();
	evbuffer_add_printf(b, "$ %s\n", cmd);
	run_summary(b, &op->result, r->timeout);
	run_streams(b, r);
	text = buf_text(b);
	evbuffer_free(b);
	json_object_set_new(res, "summary", json_string(text));
	free(text);
	json_object_set_new(res, "failed", json_boolean(failed));
	json_array_append_new(r->results, res);
	op_free(op);
	evbuffer_drain(r->out[0], evbuffer_get_length(r->out[0]));
	evbuffer_drain(r->out[1], evbuffer_get_length(r->out[1]));
	r->next++;
	if (r->next == json_array_size(r->cmds) || (failed &&
	    !r->keep_going)) {
		exec_finish(r);
		return;
	}
	exec_next(r);
}

static void
exec_next(struct run *r)
{
	struct sbx_exec	 x;
	struct evbuffer	*b;
	const char	*cmd, *k, *why;
	json_t		*v;
	struct mcp_req	*req = r->req;

	cmd = json_string_value(json_array_get(r->cmds, r->next));
	memset(&x, 0, sizeof(x));
	op_ref(&x.ref, req, r->sandbox);
	x.timeout = r->timeout;
	x.argc = 1;
	x.envc = (uint32_t)json_object_size(r->env);
	x.cwdlen = (uint32_t)strlen(r->cwd) + 1;
	x.stdinlen = (uint32_t)r->inlen;
	x.flags = SBX_EXEC_SHELL;
	b = evbuffer_new();
	evbuffer_add(b, &x, sizeof(x));
	add_str0(b, r->cwd);
	add_str0(b, cmd);
	json_object_foreach(r->env, k, v)
		evbuffer_add_printf(b, "%s=%s%c", k, json_string_value(v),
		    '\0');
	if (r->inlen > 0)
		evbuffer_add(b, r->in, r->inlen);
	r->op = op_start(IMSG_SBX_EXEC, b, exec_done, r, &why);
	evbuffer_free(b);
	if (r->op == NULL) {
		req->cancel = NULL;
		run_free(r);
		mcp_tool_error(req, "sandbox_exec failed: %s.", why);
		return;
	}
	r->op->output = run_output;
}

static const char *const exec_args[] = {
	"sandbox", "command", "commands", "keep_going", "cwd", "env",
	"stdin", "timeout", "background", NULL,
};

void
t_exec(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *command, *cwd, *in;
	json_t		*commands, *env;
	size_t		 inlen;
	uint64_t	 timeout;
	int		 keep;
	struct run	*r;

	args_init(&a, jargs, exec_args);
	sandbox = args_sandbox(&a, 1);
	command = args_str(&a, "command", 0, COMMAND_MAX);
	commands = args_strings(&a, "commands", 0, COMMANDS_MAX, COMMAND_MAX);
	keep = args_bool(&a, "keep_going", 0);
	cwd = args_str(&a, "cwd", 0, INIT_PATH_MAX - 1);
	env = args_env(&a, "env");
	in = args_bytes(&a, "stdin", 0, SBX_RUN_STDIN_MAX, &inlen);
	timeout = args_seconds(&a, "timeout", TIMEOUT_MAX_S);
	(void)args_bool(&a, "background", 0);
	if (!args_failed(&a) && (command == NULL) == (commands == NULL))
		snprintf(a.err, sizeof(a.err), "give either 'command' (one "
		    "command line) or 'commands' (a list), not both and not "
		    "neither");
	if (!args_failed(&a) && commands != NULL &&
	    json_array_size(commands) == 0)
		snprintf(a.err, sizeof(a.err), "'commands' is empty");
	if (!args_failed(&a) && command != NULL && command[0] == '\0')
		snprintf(a.err, sizeof(a.err), "'command' is empty");
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	r = run_new(req, 1);
	str_copy(r->sandbox, sandbox, sizeof(r->sandbox));
	r->cmds = commands != NULL ? json_incref(commands) :
	    json_pack("[s]", command);
	r->keep_going = keep;
	r->cwd = xstrdup(cwd != NULL ? cwd : "");
	r->env = env != NULL ? json_incref(env) : json_object();
	if (in != NULL) {
		r->in = xmalloc(inlen + 1);
		memcpy(r->in, in, inlen);
		r->inlen = inlen;
	}
	r->timeout = timeout;
	exec_next(r);
}
