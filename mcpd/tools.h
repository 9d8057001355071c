/*
 * The tool table, shared by the product's tools and those a build adds
 * (struct mcp_extension in mcp.h).
 */
#ifndef MCPD_TOOLS_H
#define MCPD_TOOLS_H

#include <stddef.h>

#include <jansson.h>

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

/* local.c: stdio mode's copies. */
void		 t_upload(struct mcp_req *, json_t *);
void		 t_download(struct mcp_req *, json_t *);
/* Has the client asked for tools/call to run in the background? */
int		 tool_wants_task(const struct mcp_req *, json_t *);

#endif
