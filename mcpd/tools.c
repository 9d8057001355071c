/*
 * The tools a model uses: run code once, or keep a sandbox and work in it
 * (commands, files), and find out what is there.  Each tool checks its
 * arguments itself and turns them into one typed request to sandboxd;
 * failures a model can do something about come back as tool results with
 * isError, in words.
 *
 * This file holds the table (names, descriptions, schemas), tools/list
 * and tools/call, and the pieces the families share; the tools
 * themselves are one family to a file:
 *
 *	tools_run.c	run_code and sandbox_exec: code that runs, its
 *			output streamed as progress
 *	tools_sandbox.c	sandbox_create, sandbox_stop, sandbox_list
 *	tools_files.c	sandbox_write_file, _read_file, _list_files,
 *			_delete_file
 *	tools_images.c	list_languages and list_images
 *	local.c		stdio mode's sandbox_upload and sandbox_download
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
	"\"runtime\":{\"type\":\"string\",\"description\":\"The OCI " \
	"runtime it runs under: its name in the configuration.\"}," \
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
    "tasks support).\"},"
    "\"share\":{\"type\":\"boolean\",\"description\":\"With "
    "sandbox: return download links to the files the run made, as "
    "sandbox_share_file would.\"}},"
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
    "\"sandbox\":{\"type\":[\"string\",\"null\"]},"
    "\"links\":{\"type\":\"array\",\"description\":\"With share: "
    "per file made, its download link (as sandbox_share_file gives) or "
    "why none.\",\"items\":{\"type\":\"object\"}},"
    "\"links_error\":{\"type\":\"string\"}},"
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

static const char in_share[] =
    "{\"type\":\"object\",\"properties\":{" S_SANDBOX ","
    "\"path\":{\"type\":\"string\",\"description\":\"A file, "
    "relative to /workspace.\"},"
    "\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"minItems\":1,\"maxItems\":16,\"description\":\"Several files "
    "at once, instead of path.\"},"
    "\"expires_in\":{\"type\":\"integer\",\"minimum\":1,"
    "\"description\":\"Seconds the links work; by default the "
    "operator's (an hour unless configured).\"}},"
    "\"required\":[\"sandbox\"],\"additionalProperties\":false}";

static const char out_share[] =
    "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":"
    "\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\"},\"url\":{\"type\":\"string\"},"
    "\"size\":{\"type\":\"integer\"},\"mime_type\":{\"type\":"
    "\"string\"},\"sha256\":{\"type\":\"string\"},\"expires\":{"
    "\"type\":\"string\"},\"error\":{\"type\":\"string\"}},"
    "\"required\":[\"path\"]}}},\"required\":[\"files\"]}";

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
	"\"runtime\":{\"type\":\"string\",\"description\":\"The OCI " \
	"runtime its sandboxes run under.\"}," \
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
	{ "sandbox_share_file", "Share files of a sandbox as links",
	  "Make download links for files in a persistent sandbox's "
	  "/workspace (reports, CSVs, charts) to hand to the user instead "
	  "of pasting their content. Each link is a URL on this server "
	  "that works without credentials until it expires (expires_in "
	  "seconds; the operator sets the default and the longest), while "
	  "the sandbox runs and the file is unchanged. Returns per file its "
	  "URL, size, type and SHA-256.",
	  in_share, out_share, H_IDEMPOTENT, T_HTTP, t_share, NULL, NULL,
	  NULL },
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
	if ((t->flags & T_HTTP) && mcp_stdio_mode)
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

json_t *
text_content(const char *s)
{
	return json_pack("[{s:s, s:s}]", "type", "text", "text", s);
}

/* Build the text block from a printf-like sequence into a buffer. */
char *
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
	    host_id_valid(s);
}

/*
 * As the client spelt it, which op_ref() reads: another host's id is
 * refused here with its owner's name, where a balancer sent a request
 * while that host was down.
 */
const char *
args_sandbox(struct args *a, int required)
{
	const char	*s = args_str(a, "sandbox", required, SBX_NAME_MAX - 1);
	char		 owner[SBX_NAME_MAX], here[64];

	if (s == NULL || args_failed(a))
		return s;
	if (!sandbox_valid(s)) {
		snprintf(a->err, sizeof(a->err), "'sandbox' must be a sandbox "
		    "id or name (letters, digits, '.', '_' and '-')");
		return NULL;
	}
	if (host_of(s, owner, sizeof(owner)) == -1) {
		snprintf(a->err, sizeof(a->err), "Sandbox %s is on host %s, "
		    "not on %s: the balancer sends you here while host %s "
		    "is down, or since hosts were added or removed. Its "
		    "sandboxes stay on %s; run_code without a sandbox "
		    "works here", s, owner, host_this(here, sizeof(here)),
		    owner, owner);
		a->whole = 1;
		return NULL;
	}
	return s;
}

void
args_tool_error(struct mcp_req *req, const struct args *a)
{
	if (a->whole)
		mcp_tool_error(req, "%s.", a->err);
	else
		mcp_tool_error(req, "Invalid arguments: %s.", a->err);
}

void
add_str0(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, s, strlen(s) + 1);
}

/* A failed request to sandboxd, as a tool result. */
void
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

/* --- A request with one answer ------------------------------------ */

static void
simple_cancel(struct mcp_req *req)
{
	struct simple	*s = req->hctx;

	if (s->op != NULL)
		op_cancel(s->op);
	free(s);
}

struct simple *
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
struct mcp_req *
simple_end(struct simple *s)
{
	struct mcp_req	*req = s->req;

	req->cancel = NULL;
	req->hctx = NULL;
	s->op = NULL;
	return req;
}

void
tools_init(void)
{
	size_t	 i;

	for (i = 0; i < nitems(tools); i++)
		tool_parse(&tools[i]);
}
