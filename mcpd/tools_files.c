/*
 * sandbox_write_file, sandbox_read_file, sandbox_list_files and
 * sandbox_delete_file: files in a sandbox's /workspace, which
 * sandbox-init reads and writes inside the container on sandboxd's
 * behalf.  A file read comes back as text, as an image a model can see,
 * or as base64.
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
#include "proto.h"
#include "tools.h"
#include "util.h"

#define READ_DEFAULT		(1024 * 1024)
#define LIST_DEFAULT		1000

static struct evbuffer *
file_req(const struct mcp_req *req, const char *sandbox, const char *path,
    uint32_t flags, uint32_t mode, uint64_t size)
{
	struct sbx_file	 f;
	struct evbuffer	*b = evbuffer_new();

	memset(&f, 0, sizeof(f));
	op_ref(&f.ref, req, sandbox);
	f.flags = flags;
	f.mode = mode;
	f.size = size;
	f.pathlen = (uint32_t)strlen(path) + 1;
	evbuffer_add(b, &f, sizeof(f));
	add_str0(b, path);
	return b;
}

static const char *const write_args[] = {
	"sandbox", "path", "content", "encoding", "append", "executable",
	NULL,
};

static void
write_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	char		*text;

	if (op->final != IMSG_SBX_DONE)
		op_tool_error(req, op, s->flag ? "sandbox_delete_file" :
		    "sandbox_write_file");
	else if (s->flag) {
		xasprintf(&text, "Deleted %s.", s->path);
		tool_result(req, text_content(text), json_pack("{s:s, s:b}",
		    "path", s->path, "deleted", 1), 0);
		free(text);
	} else {
		xasprintf(&text, "Wrote %llu bytes to /workspace/%s.",
		    (unsigned long long)s->n, s->path);
		tool_result(req, text_content(text), json_pack("{s:s, s:I}",
		    "path", s->path, "bytes", (json_int_t)s->n), 0);
		free(text);
	}
	op_free(op);
	free(s);
}

void
t_write(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *path, *content, *enc;
	size_t		 len, n = 0;
	uint8_t		*data = NULL;
	int		 append, exe;
	struct evbuffer	*b;
	struct simple	*s;

	args_init(&a, jargs, write_args);
	sandbox = args_sandbox(&a, 1);
	path = args_str(&a, "path", 1, INIT_PATH_MAX - 1);
	content = args_bytes(&a, "content", 1, SBX_FILE_MAX / 3 * 4 + 4,
	    &len);
	enc = args_str(&a, "encoding", 0, 16);
	append = args_bool(&a, "append", 0);
	exe = args_bool(&a, "executable", 0);
	if (!args_failed(&a) && enc != NULL && strcmp(enc, "text") != 0 &&
	    strcmp(enc, "base64") != 0)
		snprintf(a.err, sizeof(a.err), "'encoding' must be \"text\" "
		    "or \"base64\"");
	if (!args_failed(&a) && enc != NULL && strcmp(enc, "base64") == 0 &&
	    (data = b64_decode(content, len, &n)) == NULL)
		snprintf(a.err, sizeof(a.err), "'content' is not valid "
		    "base64");
	if (!args_failed(&a) && data == NULL) {
		n = len;
		data = xmalloc(n + 1);
		memcpy(data, content, n);
	}
	if (!args_failed(&a) && n > SBX_FILE_MAX)
		snprintf(a.err, sizeof(a.err), "the file is too large (at "
		    "most %d MiB)", SBX_FILE_MAX >> 20);
	if (args_failed(&a)) {
		free(data);
		args_tool_error(req, &a);
		return;
	}
	b = file_req(req, sandbox, path, INIT_F_MKDIRS |
	    (append ? INIT_F_APPEND : 0), exe ? 0755 : 0644, n);
	evbuffer_add(b, data, n);
	free(data);
	if ((s = simple_start(req, IMSG_SBX_WRITE, b, write_done,
	    "sandbox_write_file")) != NULL) {
		str_copy(s->path, path, sizeof(s->path));
		s->n = n;
	}
}

static const char *const delete_args[] = {
	"sandbox", "path", "recursive", NULL,
};

void
t_delete(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *path;
	int		 rec;
	struct simple	*s;

	args_init(&a, jargs, delete_args);
	sandbox = args_sandbox(&a, 1);
	path = args_str(&a, "path", 1, INIT_PATH_MAX - 1);
	rec = args_bool(&a, "recursive", 0);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if ((s = simple_start(req, IMSG_SBX_DELETE, file_req(req, sandbox,
	    path, rec ? INIT_F_RECURSIVE : 0, 0, 0), write_done,
	    "sandbox_delete_file")) != NULL) {
		str_copy(s->path, path, sizeof(s->path));
		s->flag = 1;
	}
}

static const char *const read_args[] = {
	"sandbox", "path", "encoding", "max_bytes", NULL,
};

static void
read_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	const char	*mime = mime_guess(s->path);
	const char	*enc = s->flag == 1 ? "text" : s->flag == 2 ?
			    "base64" : NULL;
	size_t		 n = evbuffer_get_length(op->data);
	uint8_t		*p = n > 0 ? evbuffer_pullup(op->data, -1) :
			    (uint8_t *)"";
	int		 trunc = (op->fdone.flags & INIT_D_TRUNCATED) != 0;
	json_t		*st, *content;
	char		*b64, *text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "sandbox_read_file");
		op_free(op);
		free(s);
		return;
	}
	if (enc == NULL) {
		if (mime_is_image(mime) && !trunc)
			enc = "image";
		else if (utf8_valid(p, n) && memchr(p, '\0', n) == NULL)
			enc = "text";
		else
			enc = "base64";
	}
	st = json_pack("{s:s, s:I, s:I, s:b, s:s}", "path", s->path,
	    "size", (json_int_t)(trunc ? s->n : n), "bytes", (json_int_t)n,
	    "truncated", trunc, "encoding", enc);
	json_object_set_new(st, "mime_type", mime != NULL ?
	    json_string(mime) : json_null());
	if (strcmp(enc, "text") == 0) {
		content = utf8_json(p, n);
		json_object_set(st, "content", content);
		if (trunc) {
			xasprintf(&text, "%s\n[... cut at %zu bytes; raise "
			    "max_bytes to read more]", json_string_value(
			    content), n);
			json_decref(content);
			content = json_string(text);
			free(text);
		}
		tool_result(req, json_pack("[{s:s, s:o}]", "type", "text",
		    "text", content), st, 0);
	} else if (strcmp(enc, "image") == 0) {
		b64 = b64_encode(p, n);
		xasprintf(&text, "%s: %s, %zu bytes", s->path, mime, n);
		tool_result(req, json_pack("[{s:s, s:s, s:s}, {s:s, s:s}]",
		    "type", "image", "data", b64, "mimeType", mime, "type",
		    "text", "text", text), st, 0);
		free(text);
		free(b64);
	} else {
		b64 = b64_encode(p, n);
		json_object_set_new(st, "content", json_string(b64));
		xasprintf(&text, "%s is binary (%s%s%zu bytes%s); base64:\n%s",
		    s->path, mime != NULL ? mime : "", mime != NULL ? ", " :
		    "", n, trunc ? ", cut at max_bytes" : "", b64);
		tool_result(req, text_content(text), st, 0);
		free(text);
		free(b64);
	}
	op_free(op);
	free(s);
}

void
t_read(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *path, *enc;
	uint64_t	 max;
	struct simple	*s;

	args_init(&a, jargs, read_args);
	sandbox = args_sandbox(&a, 1);
	path = args_str(&a, "path", 1, INIT_PATH_MAX - 1);
	enc = args_str(&a, "encoding", 0, 16);
	max = args_uint(&a, "max_bytes", 1, SBX_FILE_MAX, READ_DEFAULT);
	if (!args_failed(&a) && enc != NULL && strcmp(enc, "auto") != 0 &&
	    strcmp(enc, "text") != 0 && strcmp(enc, "base64") != 0)
		snprintf(a.err, sizeof(a.err), "'encoding' must be \"auto\", "
		    "\"text\" or \"base64\"");
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if ((s = simple_start(req, IMSG_SBX_READ, file_req(req, sandbox,
	    path, 0, 0, max), read_done, "sandbox_read_file")) != NULL) {
		str_copy(s->path, path, sizeof(s->path));
		s->n = max;
		s->flag = enc == NULL || strcmp(enc, "auto") == 0 ? 0 :
		    strcmp(enc, "text") == 0 ? 1 : 2;
	}
}

static const char *const list_args[] = {
	"sandbox", "path", "recursive", "max_entries", NULL,
};

static const char *
entry_type(int mode)
{
	switch (mode & 0170000) {
	case 0100000:
		return "file";
	case 0040000:
		return "directory";
	case 0120000:
		return "symlink";
	default:
		return "other";
	}
}

static void
list_files_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct evbuffer	*b;
	json_t		*e, *out;
	size_t		 i;
	int		 mode, trunc;
	char		 when[32], perm[8], *text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "sandbox_list_files");
		op_free(op);
		free(s);
		return;
	}
	trunc = (op->fdone.flags & INIT_D_TRUNCATED) != 0;
	out = json_array();
	b = evbuffer_new();
	json_array_foreach(op->entries, i, e) {
		mode = (int)json_integer_value(json_object_get(e, "mode"));
		iso_time(json_integer_value(json_object_get(e, "mtime")),
		    when, sizeof(when));
		snprintf(perm, sizeof(perm), "%04o", mode & 07777);
		json_array_append_new(out, json_pack("{s:O, s:s, s:O, s:s, "
		    "s:s}", "name", json_object_get(e, "name"), "type",
		    entry_type(mode), "size", json_object_get(e, "size"),
		    "mtime", when, "mode", perm));
		evbuffer_add_printf(b, "%-9s %10lld  %s  %s%s\n",
		    entry_type(mode), (long long)json_integer_value(
		    json_object_get(e, "size")), when, json_string_value(
		    json_object_get(e, "name")), (mode & 0170000) ==
		    0040000 ? "/" : "");
	}
	if (json_array_size(out) == 0)
		evbuffer_add_printf(b, "(empty)\n");
	if (trunc)
		evbuffer_add_printf(b, "(more entries not shown; raise "
		    "max_entries)\n");
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:s, s:o, s:b}",
	    "path", s->path[0] != '\0' ? s->path : ".", "entries", out,
	    "truncated", trunc), 0);
	free(text);
	op_free(op);
	free(s);
}

void
t_list_files(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *path;
	int		 rec;
	uint64_t	 max;
	struct simple	*s;

	args_init(&a, jargs, list_args);
	sandbox = args_sandbox(&a, 1);
	path = args_str(&a, "path", 0, INIT_PATH_MAX - 1);
	rec = args_bool(&a, "recursive", 0);
	max = args_uint(&a, "max_entries", 1, SBX_LIST_MAX, LIST_DEFAULT);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if (path == NULL)
		path = "";
	if ((s = simple_start(req, IMSG_SBX_LIST_FILES, file_req(req,
	    sandbox, path, rec ? INIT_F_RECURSIVE : 0, 0, max),
	    list_files_done, "sandbox_list_files")) != NULL)
		str_copy(s->path, path, sizeof(s->path));
}
