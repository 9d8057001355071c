/*
 * JSON-RPC 2.0: see jsonrpc.h.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcpd.h"
#include "metrics.h"
#include "util.h"

/* Depth of arrays and objects, strings skipped; -1 past max. */
static int
rpc_depth(const unsigned char *p, size_t len, int max)
{
	size_t	 i;
	int	 depth = 0, instr = 0;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				instr = 0;
			continue;
		}
		switch (p[i]) {
		case '"':
			instr = 1;
			break;
		case '[':
		case '{':
			if (++depth > max)
				return -1;
			break;
		case ']':
		case '}':
			depth--;
			break;
		}
	}
	return depth;
}

json_t *
rpc_parse(const void *buf, size_t len, int *code, const char **why)
{
	json_error_t	 jerr;
	json_t		*v;

	*code = RPC_PARSE_ERROR;
	if (rpc_depth(buf, len, RPC_MAX_DEPTH) == -1) {
		*why = "JSON nested too deeply";
		return NULL;
	}
	/*
	 * No NUL in strings, no duplicate keys: one reading only.  Any
	 * value is JSON; what is not a message is rpc_classify()'s to say.
	 */
	if ((v = json_loadb(buf, len, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &jerr)) == NULL) {
		if (strstr(jerr.text, "too big") != NULL) {
			/* Valid JSON; no id we could echo is this large. */
			*code = RPC_INVALID_REQUEST;
			*why = "Invalid Request: integers are limited to "
			    "64 bits";
		} else
			*why = "not valid JSON";
		return NULL;
	}
	return v;
}

static int
id_valid(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

enum rpc_kind
rpc_classify(json_t *m, const char **why)
{
	json_t	*v, *id, *method;

	if (!json_is_object(m)) {
		*why = "a message must be a JSON object";
		return RPC_INVALID;
	}
	v = json_object_get(m, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		*why = "\"jsonrpc\" must be \"2.0\"";
		return RPC_INVALID;
	}
	id = json_object_get(m, "id");
	method = json_object_get(m, "method");
	if (method == NULL) {
		/* A response to something we asked. */
		if (!id_valid(id) ||
		    (json_object_get(m, "result") == NULL) ==
		    (json_object_get(m, "error") == NULL)) {
			*why = "neither a request nor a response";
			return RPC_INVALID;
		}
		return RPC_RESPONSE;
	}
	if (!json_is_string(method) || json_string_length(method) == 0 ||
	    json_string_length(method) > 256) {
		*why = "\"method\" must be a short string";
		return RPC_INVALID;
	}
	/* params that are not an object: -32602 for a request, and a
	 * notification is never answered, malformed or not. */
	if (id == NULL)
		return RPC_NOTIFICATION;
	if (!id_valid(id) || (json_is_string(id) &&
	    json_string_length(id) > 256)) {
		*why = "\"id\" must be a string or an integer";
		return RPC_INVALID;
	}
	return RPC_REQUEST;
}

json_t *
rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result);
}

/*
 * A message may quote what a client sent, and be cut short anywhere: bad
 * bytes become U+FFFD, where jansson would refuse the string and leave
 * no message to send at all.
 */
json_t *
rpc_error(json_t *id, int code, const char *message, json_t *data)
{
	json_t	*err;

	/* Every JSON-RPC error mcpd sends is made here, once. */
	metrics_rpc_error(code);
	err = json_pack("{s:i, s:o}", "code", code, "message",
	    utf8_json((const uint8_t *)message, strlen(message)));
	if (data != NULL)
		json_object_set_new(err, "data", data);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", err);
}

json_t *
rpc_notification(const char *method, json_t *params)
{
	json_t	*m;

	m = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (params != NULL)
		json_object_set_new(m, "params", params);
	return m;
}

json_t *
rpc_request(json_t *id, const char *method, json_t *params)
{
	json_t	*m;

	m = json_pack("{s:s, s:O, s:s}", "jsonrpc", "2.0", "id", id, "method",
	    method);
	if (params != NULL)
		json_object_set_new(m, "params", params);
	return m;
}

char *
rpc_dump(const json_t *m)
{
	char	*s;

	if ((s = json_dumps(m, JSON_COMPACT)) == NULL)
		fatalx("out of memory formatting JSON");
	return s;
}
