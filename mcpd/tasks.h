/*
 * Tasks (tasks.c), beyond the methods mcp.h lists.
 */
#ifndef MCPD_TASKS_H
#define MCPD_TASKS_H

#include <jansson.h>

struct mcp_peer;
struct mcp_req;

/* The answers to what a task asked for, once all have come. */
typedef void	(*task_input_fn)(struct mcp_req *, json_t *);

/*
 * A running task needs input (2026-07-28): it shows as input_required
 * with these requests (key -> {method, params}) until tasks/update has
 * answered every key; then fn gets the answers.  Takes the reference.
 */
void		 task_input(struct mcp_req *, json_t *, task_input_fn);
/* Its client sends no more: cancel the tasks nothing waits for. */
void		 tasks_input_ended(const struct mcp_peer *);
void		 tasks_shutdown(void);

#endif
