/*
 * The tools a model uses: run code once, or keep a sandbox and work in it
 * (commands, files), and find out what is there.  Each tool checks its
 * arguments itself and turns them into one typed request to sandboxd;
 * failures a model can do something about come back as tool results with
 * isError, in words.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "args.h"
#include "jsonrpc.h"
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
#define READ_DEFAULT		(1024 * 1024)
#define LIST_DEFAULT		1000
#define TIMEOUT_MAX_S		86400.0
#define PROGRESS_EVERY_MS	200	/* at most five a second */
#define PROGRESS_CHUNK		4096	/* bytes of output in one */
#define PROGRESS_PENDING	(64 * 1024)

static const char instructions[] =
    "mcpd runs code in disposable, locked-down Linux containers (no "
    "network unless the operator allows it, limited memory, CPU and "
    "time). Use run_code for a one-off program. For work that spans "
    "several steps, create a sandbox with sandbox_create (give it a name "
    "you can reuse), then use sandbox_exec, sandbox_write_file, "
    "sandbox_read_file and sandbox_list_files in it; its files live in "
    "/workspace until sandbox_stop or until it sits idle too long. "
    "list_languages says what run_code can run.";

const char *
tools_instructions(void)
{
	return instructions;
}

/* --- Schemas -------------------------------------------------------- */

#define S_SANDBOX \
	"\"sandbox\":{\"type\":\"string\",\"description\":\"The sandbox: " \
	"its id or the name given to sandbox_create.\"}"
#define S_RUNRESULT_PROPS \
	"\"exit_code\":{\"type\":[\"integer\",\"null\"],\"description\":" \
	"\"The exit status; null when killed by a signal.\"}," \
	"\"signal\":{\"type\":[\"string\",\"null\"]}," \
	"\"timed_out\":{\"type\":\"boolean\"}," \
	"\"oom_killed\":{\"type\":\"boolean\"}," \
	"\"output_truncated\":{\"type\":\"boolean\"}," \
	"\"stdout\":{\"type\":\"string\"}," \
	"\"stderr\":{\"type\":\"string\"}," \
	"\"duration_ms\":{\"type\":\"integer\"}," \
	"\"cpu_ms\":{\"type\":\"integer\"}," \
	"\"peak_memory_bytes\":{\"type\":\"integer\"}"
#define S_INFO \
	"{\"type\":\"object\",\"properties\":{" \
	"\"id\":{\"type\":\"string\"}," \
	"\"name\":{\"type\":[\"string\",\"null\"]}," \
	"\"image\":{\"type\":\"string\"}," \
	"\"state\":{\"type\":\"string\",\"enum\":[\"running\",\"idle\"]}," \
	"\"created\":{\"type\":\"string\"}," \
	"\"last_used\":{\"type\":\"string\"}," \
	"\"expires\":{\"type\":\"string\"}," \
	"\"memory_bytes\":{\"type\":\"integer\"}," \
	"\"running_execs\":{\"type\":\"integer\"}," \
	"\"limits\":{\"type\":\"object\"}}," \
	"\"required\":[\"id\",\"image\",\"state\"]}"

static const char in_run_code[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"language\":{\"type\":\"string\",\"description\":\"The language: "
    "one of those list_languages names, e.g. python, javascript, sh, "
    "bash, c.\"},"
    "\"code\":{\"type\":\"string\",\"description\":\"The program's "
    "source code.\"},"
    "\"files\":{\"type\":\"array\",\"description\":\"Extra files to put "
    "beside the program first.\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"path\":{\"type\":\"string\",\"description\":"
    "\"Relative to /workspace.\"},\"content\":{\"type\":\"string\"},"
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"],"
    "\"default\":\"text\"}},\"required\":[\"path\",\"content\"]}},"
    "\"stdin\":{\"type\":\"string\",\"description\":\"Text for the "
    "program's standard input.\"},"
    "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"description\":\"Command-line arguments for the program.\"},"
    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
    "\"string\"},\"description\":\"Environment variables.\"},"
    "\"timeout\":{\"type\":\"number\",\"description\":\"Seconds before "
    "the program is killed (default and maximum set by the operator).\"},"
    S_SANDBOX ","
    "\"image\":{\"type\":\"string\",\"description\":\"The image to "
    "run in (see list_languages); default: the language's.\"},"
    "\"background\":{\"type\":\"boolean\",\"description\":\"Return at "
    "once with a task to poll instead of waiting (clients with MCP "
    "tasks support).\"}},"
    "\"required\":[\"language\",\"code\"],\"additionalProperties\":false}";

static const char out_run_code[] =
    "{\"type\":\"object\",\"properties\":{" S_RUNRESULT_PROPS ","
    "\"build_output\":{\"type\":\"string\",\"description\":\"Compiler "
    "output, for compiled languages.\"},"
    "\"build_failed\":{\"type\":\"boolean\"},"
    "\"files_created\":{\"type\":\"array\",\"description\":\"Files in "
    "/workspace the run made or changed; pictures among them come back "
    "as images.\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}}}},"
    "\"sandbox\":{\"type\":[\"string\",\"null\"]}},"
    "\"required\":[\"exit_code\",\"timed_out\",\"stdout\",\"stderr\"]}";

static const char in_create[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"A name to refer to "
    "the sandbox by, unique among yours (letters, digits, . _ -).\"},"
    "\"language\":{\"type\":\"string\",\"description\":\"Start from "
    "this language's image.\"},"
    "\"image\":{\"type\":\"string\",\"description\":\"Or name an image "
    "(default: host).\"},"
    "\"memory\":{\"type\":[\"string\",\"integer\"],\"description\":"
    "\"Memory limit, e.g. \\\"512M\\\" or \\\"2G\\\".\"},"
    "\"cpus\":{\"type\":\"number\",\"description\":\"CPUs, e.g. 0.5 or "
    "2.\"},"
    "\"disk\":{\"type\":[\"string\",\"integer\"],\"description\":"
    "\"Workspace size, e.g. \\\"1G\\\".\"},"
    "\"timeout\":{\"type\":\"number\",\"description\":\"Default seconds "
    "each command may run.\"},"
    "\"network\":{\"type\":\"string\",\"enum\":[\"none\",\"egress\"],"
    "\"description\":\"egress lets programs reach the internet, if the "
    "operator allows it.\"},"
    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
    "\"string\"},\"description\":\"Environment variables for every "
    "command.\"},"
    "\"ttl\":{\"type\":\"number\",\"description\":\"Seconds the sandbox "
    "may live at most.\"},"
    "\"idle_timeout\":{\"type\":\"number\",\"description\":\"Seconds "
    "unused before it is stopped.\"}},\"additionalProperties\":false}";

static const char in_exec[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"command\":{\"type\":\"string\",\"description\":\"A shell command "
    "line (run by /bin/sh -c).\"},"
    "\"commands\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"description\":\"Several command lines, run in order; by default "
    "the first that fails stops the rest.\"},"
    "\"keep_going\":{\"type\":\"boolean\",\"description\":\"Run every "
    "command even after one fails.\"},"
    "\"cwd\":{\"type\":\"string\",\"description\":\"Directory, relative "
    "to /workspace.\"},"
    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
    "\"string\"}},"
    "\"stdin\":{\"type\":\"string\"},"
    "\"timeout\":{\"type\":\"number\",\"description\":\"Seconds each "
    "command may run.\"},"
    "\"background\":{\"type\":\"boolean\",\"description\":\"Return at "
    "once with a task to poll (clients with MCP tasks support).\"}},"
    "\"required\":[\"sandbox\"],\"additionalProperties\":false}";

static const char out_exec[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"results\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"command\":{\"type\":\"string\"},"
    S_RUNRESULT_PROPS "}}},"
    "\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
    "\"all_succeeded\":{\"type\":\"boolean\"}},"
    "\"required\":[\"results\",\"all_succeeded\"]}";

static const char in_write[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"Relative to "
    "/workspace; missing directories are made.\"},"
    "\"content\":{\"type\":\"string\"},"
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"],"
    "\"default\":\"text\"},"
    "\"append\":{\"type\":\"boolean\",\"description\":\"Add to the end "
    "instead of replacing.\"},"
    "\"executable\":{\"type\":\"boolean\"}},"
    "\"required\":[\"sandbox\",\"path\",\"content\"],"
    "\"additionalProperties\":false}";

static const char out_write[] =
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"bytes\":{\"type\":\"integer\"}},\"required\":[\"path\",\"bytes\"]}";

static const char out_delete[] =
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"deleted\":{\"type\":\"boolean\"}},\"required\":[\"path\","
    "\"deleted\"]}";

static const char out_stop[] =
    "{\"type\":\"object\",\"properties\":{\"sandbox\":{\"type\":"
    "\"string\"},\"stopped\":{\"type\":\"boolean\"}},\"required\":"
    "[\"sandbox\",\"stopped\"]}";

static const char in_read[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"Relative to "
    "/workspace.\"},"
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"auto\",\"text\","
    "\"base64\"],\"default\":\"auto\",\"description\":\"auto: text if it "
    "is UTF-8, an image for PNG, JPEG, GIF and SVG, else base64.\"},"
    "\"max_bytes\":{\"type\":\"integer\",\"description\":\"Read at most "
    "this much (default 1 MiB, at most 16 MiB).\"}},"
    "\"required\":[\"sandbox\",\"path\"],\"additionalProperties\":false}";

static const char out_read[] =
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"size\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"},"
    "\"truncated\":{\"type\":\"boolean\"},"
    "\"mime_type\":{\"type\":[\"string\",\"null\"]},"
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\","
    "\"image\"]},\"content\":{\"type\":\"string\"}},"
    "\"required\":[\"path\",\"size\",\"encoding\"]}";

static const char in_list[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"A directory "
    "relative to /workspace (default: /workspace itself).\"},"
    "\"recursive\":{\"type\":\"boolean\"},"
    "\"max_entries\":{\"type\":\"integer\"}},"
    "\"required\":[\"sandbox\"],\"additionalProperties\":false}";

static const char out_list[] =
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"},\"type\":{\"type\":"
    "\"string\",\"enum\":[\"file\",\"directory\",\"symlink\",\"other\"]},"
    "\"size\":{\"type\":\"integer\"},\"mtime\":{\"type\":\"string\"},"
    "\"mode\":{\"type\":\"string\"}}}},"
    "\"truncated\":{\"type\":\"boolean\"}},"
    "\"required\":[\"path\",\"entries\"]}";

static const char in_delete[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"Relative to "
    "/workspace.\"},"
    "\"recursive\":{\"type\":\"boolean\",\"description\":\"Remove a "
    "directory and everything in it.\"}},"
    "\"required\":[\"sandbox\",\"path\"],\"additionalProperties\":false}";

static const char in_sandbox[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX "},"
    "\"required\":[\"sandbox\"],\"additionalProperties\":false}";

static const char in_none[] =
    "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

static const char out_list_sb[] =
    "{\"type\":\"object\",\"properties\":{\"sandboxes\":{\"type\":"
    "\"array\",\"items\":" S_INFO "}},\"required\":[\"sandboxes\"]}";

#define S_IMAGE \
	"{\"type\":\"object\",\"properties\":{" \
	"\"name\":{\"type\":\"string\"}," \
	"\"type\":{\"type\":\"string\",\"enum\":[\"host\",\"rootfs\"," \
	"\"stored\"]}," \
	"\"digest\":{\"type\":\"string\"}," \
	"\"source\":{\"type\":\"string\"}," \
	"\"created\":{\"type\":\"integer\"}," \
	"\"size\":{\"type\":\"integer\"}," \
	"\"pool\":{\"type\":\"integer\"}," \
	"\"probe_error\":{\"type\":\"string\"}," \
	"\"languages\":{\"type\":\"array\",\"items\":{\"type\":" \
	"\"object\",\"properties\":{\"name\":{\"type\":\"string\"}," \
	"\"version\":{\"type\":\"string\"}}}}}," \
	"\"required\":[\"name\",\"type\"]}"

static const char out_langs[] =
    "{\"type\":\"object\",\"properties\":{\"languages\":{\"type\":"
    "\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\"},\"aliases\":{\"type\":\"array\","
    "\"items\":{\"type\":\"string\"}},\"file\":{\"type\":\"string\"},"
    "\"compiled\":{\"type\":\"boolean\"},\"image\":{\"type\":\"string\"},"
    "\"version\":{\"type\":\"string\"},\"images\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"properties\":{\"image\":{"
    "\"type\":\"string\"},\"version\":{\"type\":\"string\"}}}}"
    "}}},\"images\":{\"type\":\"array\",\"items\":" S_IMAGE "}},"
    "\"required\":[\"languages\",\"images\"]}";

static const char out_images[] =
    "{\"type\":\"object\",\"properties\":{\"images\":{\"type\":"
    "\"array\",\"items\":" S_IMAGE "}},\"required\":[\"images\"]}";

static const char in_upload[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"local_path\":{\"type\":\"string\",\"description\":\"A file or "
    "directory on this machine, inside a directory the operator "
    "allows.\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"Where in the "
    "sandbox, relative to /workspace (default: the same base name).\"}},"
    "\"required\":[\"sandbox\",\"local_path\"],"
    "\"additionalProperties\":false}";

static const char in_download[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"A file or "
    "directory in the sandbox, relative to /workspace.\"},"
    "\"local_path\":{\"type\":\"string\",\"description\":\"Where on this "
    "machine, inside a directory the operator allows.\"},"
    "\"overwrite\":{\"type\":\"boolean\",\"description\":\"Replace "
    "existing local files.\"}},"
    "\"required\":[\"sandbox\",\"path\",\"local_path\"],"
    "\"additionalProperties\":false}";

static const char out_copy[] =
    "{\"type\":\"object\",\"properties\":{\"local_path\":{\"type\":"
    "\"string\"},\"path\":{\"type\":\"string\"},\"files\":{\"type\":"
    "\"integer\"},\"bytes\":{\"type\":\"integer\"}},"
    "\"required\":[\"local_path\",\"path\",\"files\",\"bytes\"]}";

static void	t_run_code(struct mcp_req *, json_t *);
static void	t_create(struct mcp_req *, json_t *);
static void	t_exec(struct mcp_req *, json_t *);
static void	t_write(struct mcp_req *, json_t *);
static void	t_read(struct mcp_req *, json_t *);
static void	t_list_files(struct mcp_req *, json_t *);
static void	t_delete(struct mcp_req *, json_t *);
static void	t_stop(struct mcp_req *, json_t *);
static void	t_list(struct mcp_req *, json_t *);
static void	t_languages(struct mcp_req *, json_t *);
static void	t_images(struct mcp_req *, json_t *);

static struct tool tools[] = {
	{ "run_code", "Run code",
	  "Run a program once in a fresh, isolated container and return its "
	  "output, exit code and resource use. Give the language and the "
	  "source; optionally files to place beside it, stdin, arguments, "
	  "environment and a timeout. Each call starts clean: nothing is "
	  "kept afterwards, unless you pass 'sandbox' to run inside an "
	  "existing sandbox (then files persist). No network unless the "
	  "operator allows it. A non-zero exit, a timeout or running out of "
	  "memory comes back as an error result with the output so far.",
	  in_run_code, out_run_code, 0, T_TASK, t_run_code, NULL, NULL, NULL },
	{ "sandbox_create", "Create a sandbox",
	  "Create a persistent sandbox: a container whose /workspace keeps "
	  "its files across calls, for multi-step work (install, write, "
	  "build, run, inspect). Returns its id; give it a 'name' to refer "
	  "to it by name. Limits default to your allowance and can only be "
	  "lowered. It is stopped after sitting idle (idle_timeout) or at "
	  "the end of its life (ttl); stop it yourself with sandbox_stop "
	  "when done.",
	  in_create, S_INFO, 0, 0, t_create, NULL, NULL, NULL },
	{ "sandbox_exec", "Run commands in a sandbox",
	  "Run a shell command line ('command'), or several in order "
	  "('commands'), in a sandbox's /workspace (or 'cwd' below it). "
	  "Output, exit codes and resource use come back per command. By "
	  "default the first failing command stops the rest.",
	  in_exec, out_exec, H_DESTRUCTIVE, T_TASK, t_exec, NULL, NULL, NULL },
	{ "sandbox_write_file", "Write a file in a sandbox",
	  "Write a file in a sandbox's /workspace, creating missing "
	  "directories. Content is text, or base64 for binary data "
	  "(encoding: base64). Replaces the file unless append is true.",
	  in_write, out_write, H_DESTRUCTIVE | H_IDEMPOTENT, 0, t_write,
	  NULL, NULL, NULL },
	{ "sandbox_read_file", "Read a file from a sandbox",
	  "Read a file from a sandbox's /workspace. Text comes back as "
	  "text; PNG, JPEG, GIF and SVG images come back as images you can "
	  "see (plots, charts); other binary files as base64. Large files "
	  "are cut at max_bytes.",
	  in_read, out_read, H_READONLY, 0, t_read, NULL, NULL, NULL },
	{ "sandbox_list_files", "List files in a sandbox",
	  "List a directory of a sandbox's /workspace (or all beneath it "
	  "with recursive), with each entry's type, size and time.",
	  in_list, out_list, H_READONLY, 0, t_list_files, NULL, NULL, NULL },
	{ "sandbox_delete_file", "Delete a file in a sandbox",
	  "Delete a file, or with recursive a directory tree, in a "
	  "sandbox's /workspace.",
	  in_delete, out_delete, H_DESTRUCTIVE | H_IDEMPOTENT, 0, t_delete,
	  NULL, NULL, NULL },
	{ "sandbox_stop", "Stop a sandbox",
	  "Stop a sandbox for good: its processes are killed and its "
	  "/workspace is deleted.",
	  in_sandbox, out_stop, H_DESTRUCTIVE | H_IDEMPOTENT, 0, t_stop, NULL,
	  NULL, NULL },
	{ "sandbox_list", "List sandboxes",
	  "List your persistent sandboxes: id, name, image, state, limits, "
	  "memory in use and when each expires.",
	  in_none, out_list_sb, H_READONLY, 0, t_list, NULL, NULL, NULL },
	{ "list_languages", "List languages",
	  "List, per image, the languages run_code can run there with "
	  "their versions, aliases, the file name the code is saved as, and "
	  "whether they are compiled.",
	  in_none, out_langs, H_READONLY | H_IDEMPOTENT, 0, t_languages,
	  NULL, NULL, NULL },
	{ "list_images", "List images",
	  "List the container images sandboxes and runs can start from, "
	  "with the digest that identifies a built or imported one.",
	  in_none, out_images, H_READONLY | H_IDEMPOTENT, 0, t_images,
	  NULL, NULL, NULL },
	{ "sandbox_upload", "Copy a local file into a sandbox",
	  "Copy a file or directory from this machine into a sandbox's "
	  "/workspace. Only paths inside directories the operator allows "
	  "can be read.",
	  in_upload, out_copy, H_DESTRUCTIVE | H_IDEMPOTENT, T_STDIO,
	  t_upload, NULL, NULL, NULL },
	{ "sandbox_download", "Copy a file out of a sandbox",
	  "Copy a file or directory from a sandbox's /workspace to this "
	  "machine. Only paths inside directories the operator allows for "
	  "writing can be written; existing files are kept unless "
	  "overwrite is true.",
	  in_download, out_copy, H_DESTRUCTIVE | H_IDEMPOTENT, T_STDIO,
	  t_download, NULL, NULL, NULL },
};

/* --- The list ---------------------------------------------------------- */

static void
tool_parse(struct tool *t)
{
	json_error_t	 e;

	if (t->in != NULL)
		return;
	if ((t->in = json_loads(t->input, 0, &e)) == NULL)
		fatalx("tool %s: input schema: %s", t->name, e.text);
	if (t->output != NULL &&
	    (t->out = json_loads(t->output, 0, &e)) == NULL)
		fatalx("tool %s: output schema: %s", t->name, e.text);
}

static int
tool_offered(const struct tool *t, const struct mcp_req *req)
{
	if ((t->flags & T_STDIO) && !mcp_stdio_mode)
		return 0;
	if ((t->flags & T_LEGACY) && req != NULL && req->modern)
		return 0;
	if ((t->flags & T_MODERN) && req != NULL && !req->modern)
		return 0;
	return 1;
}

static struct tool *
tool_find(const char *name, const struct mcp_req *req)
{
	struct tool	*fx = mcp_ext->tools;
	size_t		 i;

	for (i = 0; i < mcp_ext->ntools; i++)
		if (strcmp(fx[i].name, name) == 0 &&
		    tool_offered(&fx[i], req)) {
			tool_parse(&fx[i]);
			return &fx[i];
		}
	for (i = 0; i < nitems(tools); i++)
		if (strcmp(tools[i].name, name) == 0 &&
		    tool_offered(&tools[i], req)) {
			tool_parse(&tools[i]);
			return &tools[i];
		}
	return NULL;
}

const char *
tools_name(const char *name)
{
	const struct tool	*t;

	if (name == NULL || (t = tool_find(name, NULL)) == NULL)
		return NULL;
	return t->name;
}

json_t *
tools_input_schema(const char *name)
{
	struct tool	*t = tool_find(name, NULL);

	return t != NULL ? t->in : NULL;
}

static json_t *
tool_json(struct tool *t, const struct mcp_req *req)
{
	int	 v = req->modern ? MCP_MODERN : req->version;
	json_t	*o, *a;

	tool_parse(t);
	o = json_pack("{s:s, s:s, s:O}", "name", t->name, "description",
	    t->description, "inputSchema", t->in);
	if (v >= MCP_V20250618) {
		if (t->title != NULL)
			json_object_set_new(o, "title", json_string(t->title));
		if (t->out != NULL)
			json_object_set(o, "outputSchema", t->out);
	}
	if (v >= MCP_V20250326 && t->title != NULL) {
		a = json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title,
		    "readOnlyHint", (t->hints & H_READONLY) != 0,
		    "destructiveHint", (t->hints & H_DESTRUCTIVE) != 0,
		    "idempotentHint", (t->hints & H_IDEMPOTENT) != 0,
		    "openWorldHint", (t->hints & H_OPENWORLD) != 0);
		json_object_set_new(o, "annotations", a);
	}
	if (v == MCP_V20251125 && (t->flags & (T_TASK | T_TASK_ONLY)))
		json_object_set_new(o, "execution", json_pack("{s:s}",
		    "taskSupport", (t->flags & T_TASK_ONLY) ? "required" :
		    "optional"));
	return o;
}

void
tools_list(struct mcp_req *req)
{
	struct tool	*fx = mcp_ext->tools;
	json_t		*list, *res;
	size_t		 i;

	if (json_object_get(req->params, "cursor") != NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unknown cursor");
		return;
	}
	list = json_array();
	for (i = 0; i < mcp_ext->ntools; i++)
		if (tool_offered(&fx[i], req) && !(fx[i].flags & T_HIDDEN))
			json_array_append_new(list, tool_json(&fx[i], req));
	for (i = 0; i < nitems(tools); i++)
		if (tool_offered(&tools[i], req))
			json_array_append_new(list, tool_json(&tools[i], req));
	res = json_pack("{s:o}", "tools", list);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(
		    mcp_ext->tools_change ? 0 : 3600000));
		json_object_set_new(res, "cacheScope", json_string("public"));
	}
	mcp_result(req, res);
}

void
tool_result(struct mcp_req *req, json_t *content, json_t *structured,
    int is_error)
{
	json_t	*res;

	res = json_pack("{s:o}", "content", content);
	if (structured != NULL) {
		if (req->modern || req->version >= MCP_V20250618)
			json_object_set_new(res, "structuredContent",
			    structured);
		else
			json_decref(structured);
	}
	if (is_error)
		json_object_set_new(res, "isError", json_true());
	mcp_result(req, res);
}

int
tool_wants_task(const struct mcp_req *req, json_t *args)
{
	if (req->modern)
		return mcp_client_has_tasks(req) &&
		    json_is_true(json_object_get(args, "background"));
	return req->version == MCP_V20251125 &&
	    json_is_object(json_object_get(req->params, "task"));
}

void
tools_call(struct mcp_req *req)
{
	json_t			*name, *args;
	struct tool		*t;
	const struct tenant	*tn = req->peer.tenant;

	name = json_object_get(req->params, "name");
	args = json_object_get(req->params, "arguments");
	if (!json_is_string(name)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: tools/call needs the tool's name");
		return;
	}
	if (args != NULL && !json_is_object(args) && !json_is_null(args)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: arguments must be an object");
		return;
	}
	if ((t = tool_find(json_string_value(name), req)) == NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Unknown tool: %.64s",
		    json_string_value(name));
		return;
	}
	/* This request counts too, hence ">". */
	if (mcp_inflight(tn) > tn->max_requests) {
		mcp_tool_error(req, "Too many requests at once: tenant %s may "
		    "have %u in flight. Wait for some to finish and try "
		    "again.", tn->name, tn->max_requests);
		return;
	}
	log_debug("%s: tools/call %s", req->peer.desc, t->name);
	switch (task_maybe(req, t, args)) {
	case 1:			/* it runs as a task now */
	case -1:		/* answered */
		return;
	}
	t->fn(req, args);
}

/* --- Common pieces -------------------------------------------------- */

static json_t *
text_content(const char *s)
{
	return json_pack("[{s:s, s:s}]", "type", "text", "text", s);
}

/* Build the text block from a printf-like sequence into a buffer. */
static char *
buf_text(struct evbuffer *b)
{
	size_t	 n = evbuffer_get_length(b);
	char	*s = xmalloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	return s;
}

static int
sandbox_valid(const char *s)
{
	return s != NULL && s[0] != '\0' && strlen(s) < SBX_NAME_MAX &&
	    name_valid(s);
}

const char *
args_sandbox(struct args *a, int required)
{
	const char	*s = args_str(a, "sandbox", required, SBX_NAME_MAX - 1);

	if (s != NULL && !args_failed(a) && !sandbox_valid(s)) {
		snprintf(a->err, sizeof(a->err), "'sandbox' must be a sandbox "
		    "id or name (letters, digits, '.', '_' and '-')");
		return NULL;
	}
	return s;
}

static void
add_str0(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, s, strlen(s) + 1);
}

/* A failed request to sandboxd, as a tool result. */
static void
op_tool_error(struct mcp_req *req, struct op *op, const char *what)
{
	const char	*hint = "";

	switch (op->error.code) {
	case SBX_E_NOTFOUND:
		hint = " Use sandbox_list to see your sandboxes, or "
		    "sandbox_create to make one.";
		break;
	case SBX_E_BUSY:
		hint = " Try again in a moment, or stop a sandbox you no "
		    "longer need.";
		break;
	case SBX_E_AUDIT:
		hint = " The audit service is unavailable, so nothing may "
		    "run; tell the operator.";
		break;
	}
	mcp_tool_error(req, "%s failed: %s.%s", what, op_error(op), hint);
}

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

	if (op->final == IMSG_SBX_DONE && op->info.id[0] != '\0') {
		logs_note_uri(n->tenant, op->info.id);
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

/* --- run_code and sandbox_exec ----------------------------------------- */

struct run {
	struct mcp_req		*req;
	struct op		*op;
	int			 exec;		/* sandbox_exec, not run_code */
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
	int		 failed;

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
	run_free(r);
	tool_result(req, content, st, failed);
	free(text);
}

static const char *const run_code_args[] = {
	"language", "code", "files", "stdin", "args", "env", "timeout",
	"sandbox", "image", "background", NULL,
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

/* --- Sandboxes -------------------------------------------------------- */

struct simple {
	struct mcp_req	*req;
	struct op	*op;
	char		 sandbox[SBX_NAME_MAX];
	char		 path[INIT_PATH_MAX];
	uint64_t	 n;
	int		 flag;
};

static void
simple_cancel(struct mcp_req *req)
{
	struct simple	*s = req->hctx;

	if (s->op != NULL)
		op_cancel(s->op);
	free(s);
}

static struct simple *
simple_start(struct mcp_req *req, uint32_t type, struct evbuffer *b,
    op_fn done, const char *what)
{
	struct simple	*s = xcalloc(1, sizeof(*s));
	const char	*why;

	s->req = req;
	s->op = op_start(type, b, done, s, &why);
	evbuffer_free(b);
	if (s->op == NULL) {
		free(s);
		mcp_tool_error(req, "%s failed: %s.", what, why);
		return NULL;
	}
	req->hctx = s;
	req->cancel = simple_cancel;
	return s;
}

/* The op is over: the request is the caller's again. */
static struct mcp_req *
simple_end(struct simple *s)
{
	struct mcp_req	*req = s->req;

	req->cancel = NULL;
	req->hctx = NULL;
	s->op = NULL;
	return req;
}

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
	char		*text;

	if (op->final != IMSG_SBX_CREATED) {
		op_tool_error(req, op, "sandbox_create");
	} else {
		info = op_info_json(&op->info);
		xasprintf(&text, "Created sandbox %s%s%s%s (image %s). Use "
		    "it with sandbox_exec and the file tools; stop it with "
		    "sandbox_stop when done.", op->info.id,
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
t_list(struct mcp_req *req, json_t *jargs)
{
	static const char *const none[] = { NULL };
	struct args	 a;
	struct sbx_ref	 ref;
	struct evbuffer	*b;

	if (args_init(&a, jargs, none) == -1) {
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
		return;
	}
	op_ref(&ref, req, NULL);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	simple_start(req, IMSG_SBX_LIST, b, list_done, "sandbox_list");
}

/* The image a language's entry lists as present, or NULL. */
static json_t *
lang_in_image(json_t *img, const char *name)
{
	json_t	*l;
	size_t	 i;

	json_array_foreach(json_object_get(img, "languages"), i, l)
		if (strcmp(json_string_value(json_object_get(l, "name")),
		    name) == 0)
			return l;
	return NULL;
}

/* One language, with the images that have it and its version in each. */
static json_t *
lang_json(const struct language *l, json_t *images)
{
	json_t	*aliases, *in, *img, *found, *o;
	size_t	 i;

	aliases = json_array();
	for (i = 0; i < l->naliases; i++)
		json_array_append_new(aliases, json_string(l->aliases[i]));
	in = json_array();
	o = json_pack("{s:s, s:o, s:s, s:b, s:s}", "name", l->name,
	    "aliases", aliases, "file", l->file, "compiled", l->build != NULL,
	    "image", l->image);
	json_array_foreach(images, i, img) {
		if ((found = lang_in_image(img, l->name)) == NULL)
			continue;
		json_array_append_new(in, json_pack("{s:O, s:O}", "image",
		    json_object_get(img, "name"), "version",
		    json_object_get(found, "version")));
		if (strcmp(json_string_value(json_object_get(img, "name")),
		    l->image) == 0)
			json_object_set(o, "version", json_object_get(found,
			    "version"));
	}
	json_object_set_new(o, "images", in);
	return o;
}

static void
image_text(struct evbuffer *b, json_t *img)
{
	json_t		*d = json_object_get(img, "digest");
	const char	*err;

	evbuffer_add_printf(b, "image %s (%s%s%.19s)",
	    json_string_value(json_object_get(img, "name")),
	    json_string_value(json_object_get(img, "type")),
	    json_is_string(d) ? ", " : "",
	    json_is_string(d) ? json_string_value(d) : "");
	err = json_string_value(json_object_get(img, "probe_error"));
	if (err != NULL)
		evbuffer_add_printf(b, ": languages unknown: %s", err);
	evbuffer_add(b, "\n", 1);
}

static void
languages_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct language	*l;
	struct evbuffer	*b;
	json_t		*list, *img, *found;
	size_t		 i, j;
	char		*text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "list_languages");
		op_free(op);
		free(s);
		return;
	}
	list = json_array();
	b = evbuffer_new();
	json_array_foreach(op->images, i, img) {
		image_text(b, img);
		TAILQ_FOREACH(l, &mcpd_conf->languages, entry) {
			if ((found = lang_in_image(img, l->name)) == NULL)
				continue;
			evbuffer_add_printf(b, "  %s: %s; saved as %s%s",
			    l->name, json_string_value(json_object_get(found,
			    "version")), l->file, l->build != NULL ?
			    ", compiled" : "");
			for (j = 0; j < l->naliases; j++)
				evbuffer_add_printf(b, "%s%s", j == 0 ?
				    "; also " : ", ", l->aliases[j]);
			evbuffer_add(b, "\n", 1);
		}
	}
	TAILQ_FOREACH(l, &mcpd_conf->languages, entry)
		json_array_append_new(list, lang_json(l, op->images));
	evbuffer_add_printf(b, "run_code runs a language in the first image "
	    "listed for it unless you name another with 'image'.\n");
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:o, s:O}",
	    "languages", list, "images", op->images), 0);
	free(text);
	op_free(op);
	free(s);
}

static void
images_start(struct mcp_req *req, json_t *jargs, uint32_t flags,
    op_fn done, const char *what)
{
	static const char *const none[] = { NULL };
	struct args		 a;
	struct sbx_images	 si;
	struct evbuffer		*b;

	if (args_init(&a, jargs, none) == -1) {
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
		return;
	}
	memset(&si, 0, sizeof(si));
	op_ref(&si.ref, req, NULL);
	si.flags = flags;
	b = evbuffer_new();
	evbuffer_add(b, &si, sizeof(si));
	simple_start(req, IMSG_SBX_IMAGES, b, done, what);
}

static void
t_languages(struct mcp_req *req, json_t *jargs)
{
	images_start(req, jargs, SBX_IMAGES_LANGS, languages_done,
	    "list_languages");
}

static void
images_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct evbuffer	*b;
	json_t		*img;
	size_t		 i;
	char		*text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "list_images");
		op_free(op);
		free(s);
		return;
	}
	b = evbuffer_new();
	json_array_foreach(op->images, i, img) {
		json_object_del(img, "languages");
		image_text(b, img);
	}
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:O}", "images",
	    op->images), 0);
	free(text);
	op_free(op);
	free(s);
}

static void
t_images(struct mcp_req *req, json_t *jargs)
{
	images_start(req, jargs, 0, images_done, "list_images");
}

/* --- Files --------------------------------------------------------- */

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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
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

static void
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
		mcp_tool_error(req, "Invalid arguments: %s.", a.err);
		return;
	}
	if (path == NULL)
		path = "";
	if ((s = simple_start(req, IMSG_SBX_LIST_FILES, file_req(req,
	    sandbox, path, rec ? INIT_F_RECURSIVE : 0, 0, max),
	    list_files_done, "sandbox_list_files")) != NULL)
		str_copy(s->path, path, sizeof(s->path));
}

void
tools_init(void)
{
	size_t	 i;

	for (i = 0; i < nitems(tools); i++)
		tool_parse(&tools[i]);
}
