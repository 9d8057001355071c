/*
 * The tool table, shared by the product's tools and those a build adds
 * (struct mcp_extension in mcp.h).
 */
#ifndef MCPD_TOOLS_H
#define MCPD_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mcpd.h"

struct evbuffer;
struct mcp_req;

typedef void	(*tool_fn)(struct mcp_req *, json_t *);

/* Hints for clients (ToolAnnotations). */
#define H_READONLY	0x01
#define H_DESTRUCTIVE	0x02
#define H_IDEMPOTENT	0x04
#define H_OPENWORLD	0x08

/* Where a tool is offered and how it runs. */
#define T_STDIO		0x01	/* only to mcpd --stdio clients */
#define T_TASK		0x02	/* may run as a task */
#define T_TASK_ONLY	0x04	/* must run as a task */
#define T_LEGACY	0x08	/* only in the legacy era */
#define T_MODERN	0x10	/* only in the modern era */
#define T_HIDDEN	0x20	/* callable, never listed */
#define T_TASK_AUTO	0x40	/* a task whenever the client can (modern) */
#define T_HTTP		0x80	/* not to mcpd --stdio clients */

struct tool {
	const char	*name;
	const char	*title;
	const char	*description;
	const char	*input;		/* JSON Schema text */
	const char	*output;	/* JSON Schema text, or NULL */
	int		 hints;
	int		 flags;
	tool_fn		 fn;
	json_t		*in;		/* parsed, at first use */
	json_t		*out;
	/* T_TASK_AUTO: may say "not this time" (run it at once). */
	int		(*decide)(struct mcp_req *, json_t *);
};

/* tasks.c: run a tools/call as a task if it asks to be (or must). */
int		 task_maybe(struct mcp_req *, const struct tool *, json_t *);

/* A tool result with structuredContent where the version has it. */
void		 tool_result(struct mcp_req *, json_t *, json_t *, int);
struct args;
/* The "sandbox" argument: an id or a name. */
const char	*args_sandbox(struct args *, int);
/* "Invalid arguments: ..." as a tool error, or args_sandbox()'s own. */
void		 args_tool_error(struct mcp_req *, const struct args *);
/* Has the client asked for tools/call to run in the background? */
int		 tool_wants_task(const struct mcp_req *, json_t *);

/* The tools, one family to a file; tools.c's table lists them. */
/* tools_run.c */
void		 t_run_code(struct mcp_req *, json_t *);
void		 t_exec(struct mcp_req *, json_t *);
/* tools_sandbox.c */
void		 t_create(struct mcp_req *, json_t *);
void		 t_stop(struct mcp_req *, json_t *);
void		 t_list(struct mcp_req *, json_t *);
/* tools_files.c */
void		 t_write(struct mcp_req *, json_t *);
void		 t_read(struct mcp_req *, json_t *);
void		 t_list_files(struct mcp_req *, json_t *);
void		 t_delete(struct mcp_req *, json_t *);
/* links.c */
void		 t_share(struct mcp_req *, json_t *);
/* tools_images.c */
void		 t_languages(struct mcp_req *, json_t *);
void		 t_images(struct mcp_req *, json_t *);
/* local.c: stdio mode's copies. */
void		 t_upload(struct mcp_req *, json_t *);
void		 t_download(struct mcp_req *, json_t *);

/* tools.c: what the families share. */
#define TIMEOUT_MAX_S	86400.0
json_t		*text_content(const char *);
/* The buffer's bytes as a string, which the caller frees. */
char		*buf_text(struct evbuffer *);
/* The string with its NUL. */
void		 add_str0(struct evbuffer *, const char *);
/* A failed request to sandboxd, as a tool result. */
void		 op_tool_error(struct mcp_req *, struct op *, const char *);

/*
 * A tool that sends sandboxd one request and answers from its one reply:
 * simple_start() sends it (and on failure answers the tool call, and
 * returns NULL), the done function begins with simple_end() and frees
 * the struct.  The fields after op are the tool's own.
 */
struct simple {
	struct mcp_req	*req;
	struct op	*op;
	char		 sandbox[SBX_NAME_MAX];
	char		 path[INIT_PATH_MAX];
	uint64_t	 n;
	int		 flag;
};
struct simple	*simple_start(struct mcp_req *, uint32_t, struct evbuffer *,
		    op_fn, const char *);
/* The op is over: the request is the caller's again. */
struct mcp_req	*simple_end(struct simple *);

#endif
