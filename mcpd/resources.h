/*
 * The conformance build's fixture resources, prompts and completions
 * (fixture.c); the product has none, and these do nothing there.
 */
#ifndef MCPD_RESOURCES_H
#define MCPD_RESOURCES_H

#include <jansson.h>

struct mcp_req;

void	 fixture_resources(struct mcp_req *, json_t *);
void	 fixture_templates(struct mcp_req *, json_t *);
/* 1 when the URI was a fixture's and the request is answered. */
int	 fixture_read(struct mcp_req *, const char *);
int	 fixture_complete(struct mcp_req *, json_t *, const char *,
	    const char *);

#endif
