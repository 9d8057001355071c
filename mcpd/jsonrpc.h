/*
 * JSON-RPC 2.0 messages with jansson, within limits: a message's size is
 * capped by its transport, its nesting depth here, before jansson sees it.
 */
#ifndef MCPD_JSONRPC_H
#define MCPD_JSONRPC_H

#include <stddef.h>

#include <jansson.h>

#define RPC_MAX_DEPTH		64

#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603

enum rpc_kind {
	RPC_REQUEST,
	RPC_NOTIFICATION,
	RPC_RESPONSE,		/* to a request we sent */
	RPC_INVALID,
};

/*
 * Parse one message (or a batch, an array).  NULL with *code and *why set
 * when it is not JSON, too deep, or not UTF-8.
 */
json_t		*rpc_parse(const void *, size_t, int *, const char **);
/* What a parsed value is; for RPC_INVALID, why. */
enum rpc_kind	 rpc_classify(json_t *, const char **);

json_t		*rpc_result(json_t *, json_t *);
json_t		*rpc_error(json_t *, int, const char *, json_t *);
json_t		*rpc_notification(const char *, json_t *);
json_t		*rpc_request(json_t *, const char *, json_t *);
/* Compact text with no raw newline in it, malloc'd. */
char		*rpc_dump(const json_t *);

#endif
