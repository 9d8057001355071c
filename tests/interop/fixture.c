/*
 * mcpd-conformance: mcpd with the fixtures the official MCP conformance
 * suite calls: tools, resources, prompts and completions with the exact
 * names and answers its scenarios check.  They exist only in this test
 * build, which main() below registers them in (struct mcp_extension);
 * the product mcpd is built without this file.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "log.h"
#include "util.h"
#include "../../mcpd/jsonrpc.h"
#include "../../mcpd/mcp.h"
#include "../../mcpd/mcpd.h"
#include "../../mcpd/tasks.h"
#include "../../mcpd/tools.h"

#define PNG	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8" \
		"z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
#define WAV	"UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
#define NOARGS	"{\"type\":\"object\",\"properties\":{}}"

static json_t *
text(const char *s)
{
	return json_pack("{s:[{s:s, s:s}]}", "content", "type", "text",
	    "text", s);
}

/* --- A request that answers after some steps, a timer apart --------- */

struct steps {
	struct mcp_req	*req;
	struct event	*ev;
	int		 n;
	void		(*step)(struct steps *);
	long		 arg;
};

static void
steps_free(struct steps *s)
{
	event_free(s->ev);
	free(s);
}

static void
steps_cancel(struct mcp_req *req)
{
	steps_free(req->hctx);
}

static void
steps_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct steps	*s = arg;

	s->step(s);
}

static void
steps_later(struct steps *s, long ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(s->ev, &tv);
}

static struct steps *
steps_new(struct mcp_req *req, void (*step)(struct steps *))
{
	struct steps	*s = xcalloc(1, sizeof(*s));

	s->req = req;
	s->step = step;
	if ((s->ev = evtimer_new(mcp_base, steps_cb, s)) == NULL)
		fatalx("cannot create a timer");
	req->hctx = s;
	req->cancel = steps_cancel;
	return s;
}

/* The request is answered now: let go of it first. */
static struct mcp_req *
steps_done(struct steps *s)
{
	struct mcp_req	*req = s->req;

	req->cancel = NULL;
	req->hctx = NULL;
	steps_free(s);
	return req;
}

/* --- Plain tools ------------------------------------------------------ */

static void
fx_simple_text(struct mcp_req *req, json_t *args)
{
	mcp_result(req, text("This is a simple text response for testing."));
}

static void
fx_image(struct mcp_req *req, json_t *args)
{
	mcp_result(req, json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type",
	    "image", "data", PNG, "mimeType", "image/png"));
}

static void
fx_audio(struct mcp_req *req, json_t *args)
{
	mcp_result(req, json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type",
	    "audio", "data", WAV, "mimeType", "audio/wav"));
}

static void
fx_embedded(struct mcp_req *req, json_t *args)
{
	mcp_result(req, json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}]}", "content",
	    "type", "resource", "resource", "uri", "test://embedded-resource",
	    "mimeType", "text/plain", "text",
	    "This is an embedded resource content."));
}

static void
fx_mixed(struct mcp_req *req, json_t *args)
{
	mcp_result(req, json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, "
	    "{s:s, s:{s:s, s:s, s:s}}]}", "content",
	    "type", "text", "text", "Multiple content types test:",
	    "type", "image", "data", PNG, "mimeType", "image/png",
	    "type", "resource", "resource", "uri",
	    "test://mixed-content-resource", "mimeType", "application/json",
	    "text", "{\"test\":\"data\",\"value\":123}"));
}

static void
fx_error(struct mcp_req *req, json_t *args)
{
	mcp_tool_error(req, "This tool intentionally returns an error for "
	    "testing");
}

static void
logging_step(struct steps *s)
{
	static const char *const msgs[] = {
		"Tool execution started", "Tool processing data",
		"Tool execution completed",
	};

	mcp_log(s->req, MLOG_INFO, NULL, json_string(msgs[s->n]));
	if (++s->n < 3) {
		steps_later(s, 50);
		return;
	}
	mcp_result(steps_done(s),
	    text("Tool with logging executed successfully"));
}

static void
fx_logging(struct mcp_req *req, json_t *args)
{
	logging_step(steps_new(req, logging_step));
}

static void
progress_step(struct steps *s)
{
	char	 msg[64];
	json_t	*tok;
	char	*t;

	snprintf(msg, sizeof(msg), "Completed step %d of 100", s->n * 50);
	mcp_progress(s->req, s->n * 50, 100, msg);
	if (++s->n < 3) {
		steps_later(s, 50);
		return;
	}
	tok = s->req->progress;
	if (json_is_string(tok))
		t = xstrdup(json_string_value(tok));
	else if (json_is_integer(tok))
		xasprintf(&t, "%lld", (long long)json_integer_value(tok));
	else
		t = xstrdup("no progress token");
	mcp_result(steps_done(s), text(t));
	free(t);
}

static void
fx_progress(struct mcp_req *req, json_t *args)
{
	progress_step(steps_new(req, progress_step));
}

/* --- Questions to the client (legacy era) ----------------------------- */

struct asked {
	struct mcp_req	*req;
	const char	*prefix;
};

static void
asked_cancel(struct mcp_req *req)
{
	free(req->hctx);
}

static void
asked_answer(void *arg, json_t *result, json_t *error)
{
	struct asked	*a = arg;
	struct mcp_req	*req = a->req;
	json_t		*content;
	char		*s, *c;

	req->cancel = NULL;
	req->hctx = NULL;
	if (error != NULL || !json_is_object(result)) {
		mcp_tool_error(req, "The client refused: %s",
		    json_string_value(json_object_get(error, "message")) ?
		    json_string_value(json_object_get(error, "message")) :
		    "no result");
		free(a);
		return;
	}
	if (strcmp(a->prefix, "LLM response: ") == 0) {
		content = json_object_get(result, "content");
		xasprintf(&s, "LLM response: %s", json_string_value(
		    json_object_get(content, "text")) ? json_string_value(
		    json_object_get(content, "text")) : "");
	} else {
		c = json_dumps(json_object_get(result, "content"),
		    JSON_COMPACT | JSON_ENCODE_ANY);
		xasprintf(&s, "%saction=%s, content=%s", a->prefix,
		    json_string_value(json_object_get(result, "action")) ?
		    json_string_value(json_object_get(result, "action")) : "",
		    c != NULL ? c : "null");
		free(c);
	}
	free(a);
	mcp_result(req, text(s));
	free(s);
}

static void
ask(struct mcp_req *req, const char *cap, const char *method,
    json_t *params, const char *prefix)
{
	struct asked	*a;

	if (json_object_get(req->caps, cap) == NULL) {
		json_decref(params);
		mcp_tool_error(req, "The client did not declare the %s "
		    "capability", cap);
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->req = req;
	a->prefix = prefix;
	req->hctx = a;
	req->cancel = asked_cancel;
	if (mcp_ask(req, method, params, asked_answer, a) == -1) {
		req->cancel = NULL;
		free(a);
		mcp_tool_error(req, "The client cannot be asked here");
	}
}

static void
fx_sampling(struct mcp_req *req, json_t *args)
{
	const char	*p = json_string_value(json_object_get(args, "prompt"));

	ask(req, "sampling", "sampling/createMessage", json_pack(
	    "{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user",
	    "content", "type", "text", "text", p != NULL ? p : "",
	    "maxTokens", 100), "LLM response: ");
}

static void
fx_elicitation(struct mcp_req *req, json_t *args)
{
	const char	*m = json_string_value(json_object_get(args,
			    "message"));

	ask(req, "elicitation", "elicitation/create", json_pack("{s:s, "
	    "s:{s:s, s:{s:{s:s, s:s}}, s:[s]}}", "message", m != NULL ? m :
	    "Please respond", "requestedSchema", "type", "object",
	    "properties", "response", "type", "string", "description",
	    "User's response", "required", "response"), "User response: ");
}

static const char sep1034_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\","
    "\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\","
    "\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\","
    "\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":"
    "\"Verification status\",\"default\":true}},\"required\":[]}";

static const char sep1330_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\",\"description\":"
    "\"Select one option\",\"enum\":[\"option1\",\"option2\","
    "\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\",\"description\":"
    "\"Select one option with titles\",\"oneOf\":["
    "{\"const\":\"value1\",\"title\":\"First Option\"},"
    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
    "\"legacyEnum\":{\"type\":\"string\",\"description\":"
    "\"Select one option (legacy)\",\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
    "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\",\"description\":"
    "\"Select multiple options\",\"minItems\":1,\"maxItems\":3,"
    "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\","
    "\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\",\"description\":"
    "\"Select multiple options with titles\",\"minItems\":1,"
    "\"maxItems\":3,\"items\":{\"anyOf\":["
    "{\"const\":\"value1\",\"title\":\"First Choice\"},"
    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
    "\"required\":[]}";

static void
elicit_schema(struct mcp_req *req, const char *message, const char *schema)
{
	json_t	*s = json_loads(schema, 0, NULL);

	ask(req, "elicitation", "elicitation/create", json_pack("{s:s, s:o}",
	    "message", message, "requestedSchema", s),
	    "Elicitation completed: ");
}

static void
fx_sep1034(struct mcp_req *req, json_t *args)
{
	elicit_schema(req, "Please review and update the form fields with "
	    "defaults", sep1034_schema);
}

static void
fx_sep1330(struct mcp_req *req, json_t *args)
{
	elicit_schema(req, "Please select options from the enum fields",
	    sep1330_schema);
}

static void
reconnect_step(struct steps *s)
{
	mcp_result(steps_done(s), text("Reconnection test completed"));
}

/* The stream closes before the answer; the client resumes it. */
static void
fx_reconnection(struct mcp_req *req, json_t *args)
{
	struct steps	*s = steps_new(req, reconnect_step);

	mcp_interrupt(req);
	steps_later(s, 100);
}

static void
fx_noop(struct mcp_req *req, json_t *args)
{
	mcp_result(req, text("ok"));
}

/* --- 2026-07-28 diagnostics ------------------------------------------ */

static void
fx_missing_cap(struct mcp_req *req, json_t *args)
{
	if (json_object_get(req->caps, "sampling") == NULL) {
		mcp_error_status(req, 400, MCP_E_MISSING_CAPABILITY,
		    json_pack("{s:{s:{}}}", "requiredCapabilities",
		    "sampling"), "This tool needs the client's sampling "
		    "capability");
		return;
	}
	mcp_result(req, text("Success"));
}

static void
fx_streaming(struct mcp_req *req, json_t *args)
{
	mcp_progress(req, 1, 1, "streaming");
	mcp_result(req, text("Streaming complete"));
}

static void
fx_logging_tool(struct mcp_req *req, json_t *args)
{
	mcp_log(req, MLOG_INFO, "fixture", json_string("Logging evaluated"));
	mcp_result(req, text("Logging evaluated"));
}

static void
fx_trigger_tools(struct mcp_req *req, json_t *args)
{
	mcp_list_changed(NULL, NOTE_TOOLS);
	mcp_result(req, text("Mutation triggered"));
}

static void
fx_trigger_prompts(struct mcp_req *req, json_t *args)
{
	mcp_list_changed(NULL, NOTE_PROMPTS);
	mcp_result(req, text("Mutation triggered"));
}

static void
fx_custom_header(struct mcp_req *req, json_t *args)
{
	const char	*r = json_string_value(json_object_get(args, "region"));
	char		*s;

	xasprintf(&s, "Region: %s", r != NULL ? r : "none");
	mcp_result(req, text(s));
	free(s);
}

/* --- Multi round-trip requests (2026-07-28) ------------------------- */

static uint8_t	 state_key[crypto_auth_KEYBYTES];
static int	 state_keyed;

/* requestState: base64url(payload) "." base64url(HMAC), bound to peer. */
static char *
state_make(const struct mcp_req *req, const char *what, int round)
{
	char		 payload[256], *p64, *m64, *s;
	uint8_t		 mac[crypto_auth_BYTES];
	size_t		 n;

	if (!state_keyed) {
		randombytes_buf(state_key, sizeof(state_key));
		state_keyed = 1;
	}
	snprintf(payload, sizeof(payload), "%s|%d|%02x%02x%02x%02x|%lld",
	    what, round, req->peer.principal[0], req->peer.principal[1],
	    req->peer.principal[2], req->peer.principal[3],
	    (long long)time(NULL) + 600);
	crypto_auth(mac, (uint8_t *)payload, strlen(payload), state_key);
	n = sodium_base64_encoded_len(strlen(payload),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	p64 = xmalloc(n);
	sodium_bin2base64(p64, n, (uint8_t *)payload, strlen(payload),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	n = sodium_base64_encoded_len(sizeof(mac),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	m64 = xmalloc(n);
	sodium_bin2base64(m64, n, mac, sizeof(mac),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	xasprintf(&s, "%s.%s", p64, m64);
	free(p64);
	free(m64);
	return s;
}

/* The round a valid state is for, -1 if none, -2 if tampered with. */
static int
state_check(const struct mcp_req *req, const char *what)
{
	json_t		*st = json_object_get(req->params, "requestState");
	const char	*s, *dot;
	uint8_t		 payload[256], mac[crypto_auth_BYTES];
	size_t		 plen, mlen;
	char		 want[64], *p, *q;
	long long	 exp;
	int		 round;

	if (st == NULL)
		return -1;
	if (!json_is_string(st) || !state_keyed)
		return -2;
	s = json_string_value(st);
	if ((dot = strchr(s, '.')) == NULL)
		return -2;
	if (sodium_base642bin(payload, sizeof(payload) - 1, s,
	    (size_t)(dot - s), NULL, &plen, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    sodium_base642bin(mac, sizeof(mac), dot + 1, strlen(dot + 1),
	    NULL, &mlen, NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) !=
	    0 || mlen != sizeof(mac) ||
	    crypto_auth_verify(mac, payload, plen, state_key) != 0)
		return -2;
	payload[plen] = '\0';
	p = (char *)payload;
	if ((q = strchr(p, '|')) == NULL)
		return -2;
	*q++ = '\0';
	if (strcmp(p, what) != 0)
		return -2;
	round = atoi(q);
	if ((q = strchr(q, '|')) == NULL)
		return -2;
	q++;
	snprintf(want, sizeof(want), "%02x%02x%02x%02x",
	    req->peer.principal[0], req->peer.principal[1],
	    req->peer.principal[2], req->peer.principal[3]);
	if (strncmp(q, want, 8) != 0 || (q = strchr(q, '|')) == NULL)
		return -2;
	exp = atoll(q + 1);
	if (exp < (long long)time(NULL))
		return -2;
	return round;
}

static json_t *
elicit_req(const char *message, const char *prop, const char *type)
{
	return json_pack("{s:s, s:{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}}",
	    "method", "elicitation/create", "params", "message", message,
	    "requestedSchema", "type", "object", "properties", prop, "type",
	    type, "required", prop);
}

static json_t *
sampling_req(const char *q, int max)
{
	return json_pack("{s:s, s:{s:[{s:s, s:{s:s, s:s}}], s:i}}", "method",
	    "sampling/createMessage", "params", "messages", "role", "user",
	    "content", "type", "text", "text", q, "maxTokens", max);
}

static json_t *
roots_req(void)
{
	return json_pack("{s:s, s:{}}", "method", "roots/list", "params");
}

static void
input_required(struct mcp_req *req, json_t *inputs, char *state)
{
	json_t	*res;

	res = json_pack("{s:s}", "resultType", "input_required");
	if (inputs != NULL)
		json_object_set_new(res, "inputRequests", inputs);
	if (state != NULL) {
		json_object_set_new(res, "requestState", json_string(state));
		free(state);
	}
	mcp_result(req, res);
}

/*
 * The answer under key, if it is well formed: 1; 0 when missing; -1 when
 * the inputResponses are malformed (answered with an error).
 */
static int
answer(struct mcp_req *req, const char *key, json_t **out)
{
	json_t	*ir = json_object_get(req->params, "inputResponses");
	json_t	*a;

	*out = NULL;
	if (ir == NULL)
		return 0;
	if (!json_is_object(ir)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid params: "
		    "inputResponses must be an object");
		return -1;
	}
	if ((a = json_object_get(ir, key)) == NULL)
		return 0;
	if (!json_is_object(a)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid params: "
		    "inputResponses.%s must be an object", key);
		return -1;
	}
	*out = a;
	return 1;
}

static const char *
elicited(json_t *a, const char *prop)
{
	const char	*s;

	s = json_string_value(json_object_get(json_object_get(a, "content"),
	    prop));
	return s != NULL ? s : "(none)";
}

static void
fx_irr_elicitation(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	char	*s;

	switch (answer(req, "user_name", &a)) {
	case -1:
		return;
	case 0:
		input_required(req, json_pack("{s:o}", "user_name",
		    elicit_req("What is your name?", "name", "string")), NULL);
		return;
	}
	xasprintf(&s, "Hello, %s!", elicited(a, "name"));
	mcp_result(req, text(s));
	free(s);
}

static void
fx_irr_sampling(struct mcp_req *req, json_t *args)
{
	json_t		*a;
	const char	*t;
	char		*s;

	switch (answer(req, "sample_request", &a)) {
	case -1:
		return;
	case 0:
		input_required(req, json_pack("{s:o}", "sample_request",
		    sampling_req("What is the capital of France?", 100)), NULL);
		return;
	}
	t = json_string_value(json_object_get(json_object_get(a, "content"),
	    "text"));
	xasprintf(&s, "Sampling result: %s", t != NULL ? t : "(none)");
	mcp_result(req, text(s));
	free(s);
}

static void
fx_irr_roots(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	char	*s;

	switch (answer(req, "roots_request", &a)) {
	case -1:
		return;
	case 0:
		input_required(req, json_pack("{s:o}", "roots_request",
		    roots_req()), NULL);
		return;
	}
	xasprintf(&s, "Found %zu root(s)", json_array_size(json_object_get(a,
	    "roots")));
	mcp_result(req, text(s));
	free(s);
}

/* Tools whose continuation is carried in a requestState. */
static int
stateful_round(struct mcp_req *req, const char *what)
{
	int	 r = state_check(req, what);

	if (r == -2)
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "requestState integrity check failed");
	return r;
}

static void
fx_irr_state(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	int	 r, got;

	if ((r = stateful_round(req, "request_state")) == -2)
		return;
	if ((got = answer(req, "confirm", &a)) == -1)
		return;
	if (r != 1 || got == 0) {
		input_required(req, json_pack("{s:o}", "confirm",
		    elicit_req("Please confirm", "ok", "boolean")),
		    state_make(req, "request_state", 1));
		return;
	}
	mcp_result(req, text("Confirmed: state-ok"));
}

static void
fx_irr_tampered(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	int	 r, got;

	if ((r = stateful_round(req, "tampered")) == -2)
		return;
	if ((got = answer(req, "confirm", &a)) == -1)
		return;
	if (r != 1 || got == 0) {
		input_required(req, json_pack("{s:o}", "confirm",
		    elicit_req("Please confirm", "ok", "boolean")),
		    state_make(req, "tampered", 1));
		return;
	}
	mcp_result(req, text("Confirmed: state-ok"));
}

static void
fx_irr_multiple(struct mcp_req *req, json_t *args)
{
	json_t	*a, *b, *c;
	int	 r;

	if ((r = stateful_round(req, "multiple")) == -2)
		return;
	if (answer(req, "user_name", &a) == -1 ||
	    answer(req, "greeting", &b) == -1 ||
	    answer(req, "client_roots", &c) == -1)
		return;
	if (r != 1 || a == NULL || b == NULL || c == NULL) {
		input_required(req, json_pack("{s:o, s:o, s:o}", "user_name",
		    elicit_req("What is your name?", "name", "string"),
		    "greeting", sampling_req("Generate a greeting", 50),
		    "client_roots", roots_req()),
		    state_make(req, "multiple", 1));
		return;
	}
	mcp_result(req, text("All inputs received"));
}

static void
fx_irr_multi_round(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	int	 r;
	char	*s;

	if ((r = stateful_round(req, "multi_round")) == -2)
		return;
	if (r == 1) {
		if (answer(req, "step1", &a) == -1)
			return;
		if (a != NULL) {
			input_required(req, json_pack("{s:o}", "step2",
			    elicit_req("Step 2: What is your favorite color?",
			    "color", "string")), state_make(req, "multi_round",
			    2));
			return;
		}
	} else if (r == 2) {
		if (answer(req, "step2", &a) == -1)
			return;
		if (a != NULL) {
			xasprintf(&s, "Done: favorite color %s",
			    elicited(a, "color"));
			mcp_result(req, text(s));
			free(s);
			return;
		}
	}
	input_required(req, json_pack("{s:o}", "step1",
	    elicit_req("Step 1: What is your name?", "name", "string")),
	    state_make(req, "multi_round", 1));
}

static void
fx_irr_caps(struct mcp_req *req, json_t *args)
{
	json_t	*in = json_object();

	if (json_object_get(req->caps, "elicitation") != NULL)
		json_object_set_new(in, "user_name", elicit_req(
		    "What is your name?", "name", "string"));
	if (json_object_get(req->caps, "sampling") != NULL)
		json_object_set_new(in, "sample_request", sampling_req(
		    "What is the capital of France?", 100));
	if (json_object_get(req->caps, "roots") != NULL)
		json_object_set_new(in, "roots_request", roots_req());
	if (json_object_size(in) == 0) {
		json_decref(in);
		mcp_result(req, text("The client can be asked nothing"));
		return;
	}
	input_required(req, in, NULL);
}

/* --- Tasks extension fixtures --------------------------------------- */

static void
fx_greet(struct mcp_req *req, json_t *args)
{
	const char	*n = json_string_value(json_object_get(args, "name"));
	char		*s;

	xasprintf(&s, "Hello, %s!", n != NULL ? n : "World");
	mcp_result(req, text(s));
	free(s);
}

static void
slow_step(struct steps *s)
{
	char	*t;

	xasprintf(&t, "Computed %s in %ld s", "result", s->arg);
	mcp_result(steps_done(s), text(t));
	free(t);
}

static void
fx_slow(struct mcp_req *req, json_t *args)
{
	json_t		*sec = json_object_get(args, "seconds");
	struct steps	*s;
	long		 n = json_is_number(sec) ?
			    (long)json_number_value(sec) : 1;

	if (n < 0 || n > 600)
		n = 1;
	s = steps_new(req, slow_step);
	s->arg = n;
	steps_later(s, n * 1000);
}

static int
slow_decide(struct mcp_req *req, json_t *args)
{
	json_t	*sec = json_object_get(args, "seconds");

	return !json_is_number(sec) || json_number_value(sec) > 0;
}

static int
always(struct mcp_req *req, json_t *args)
{
	return 1;
}

static void
failing_step(struct steps *s)
{
	mcp_tool_error(steps_done(s), "The job failed, as it always does");
}

static void
fx_failing(struct mcp_req *req, json_t *args)
{
	steps_later(steps_new(req, failing_step), 1000);
}

static void
perror_step(struct steps *s)
{
	mcp_error(steps_done(s), RPC_INTERNAL_ERROR, NULL,
	    "Internal error: the job broke");
}

static void
fx_protocol_error(struct mcp_req *req, json_t *args)
{
	steps_later(steps_new(req, perror_step), 300);
}

static void
confirm_answered(struct mcp_req *req, json_t *answers)
{
	char		*s;
	const char	*fn = json_string_value(json_object_get(json_object_get(
			    req->params, "arguments"), "filename"));

	xasprintf(&s, "Deleted %s (%zu answer%s)", fn != NULL ? fn : "the file",
	    json_object_size(answers), json_object_size(answers) == 1 ? "" :
	    "s");
	mcp_result(req, text(s));
	free(s);
}

static json_t *
task_elicit(const char *message, const char *prop)
{
	return json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s}}}}}",
	    "method", "elicitation/create", "params", "mode", "form",
	    "message", message, "requestedSchema", "type", "object",
	    "properties", prop, "type", "boolean");
}

static void
fx_confirm_delete(struct mcp_req *req, json_t *args)
{
	if (req->task == NULL) {
		mcp_result(req, text("Nothing deleted: this needs a task"));
		return;
	}
	task_input(req, json_pack("{s:o}", "confirm_delete",
	    task_elicit("Really delete the file?", "confirm")),
	    confirm_answered);
}

static void
fx_multi_input(struct mcp_req *req, json_t *args)
{
	if (req->task == NULL) {
		mcp_result(req, text("Nothing to do: this needs a task"));
		return;
	}
	task_input(req, json_pack("{s:o, s:o}", "first_input",
	    task_elicit("First: go ahead?", "confirm"), "second_input",
	    task_elicit("Second: really?", "confirm")), confirm_answered);
}

static int
with_task_decide(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	json_t	*ir = json_object_get(req->params, "inputResponses");

	a = json_object_get(ir, "user_name");
	return json_is_object(a) && state_check(req, "with_task") == 1;
}

static void
fx_with_task(struct mcp_req *req, json_t *args)
{
	json_t	*a;
	char	*s;

	if (req->task == NULL) {
		if (stateful_round(req, "with_task") == -2)
			return;
		input_required(req, json_pack("{s:o}", "user_name",
		    elicit_req("What is your name?", "name", "string")),
		    state_make(req, "with_task", 1));
		return;
	}
	a = json_object_get(json_object_get(req->params, "inputResponses"),
	    "user_name");
	xasprintf(&s, "Hello from a task, %s!", elicited(a, "name"));
	mcp_result(req, text(s));
	free(s);
}

static const char schema_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\",\"$defs\":{\"address\":{\"$anchor\":\"addressDef\","
    "\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\"},"
    "\"city\":{\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":"
    "\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
    "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\","
    "\"email\"]},\"phone\":{\"type\":\"string\"},\"email\":{\"type\":"
    "\"string\"}},\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},"
    "{\"required\":[\"email\"]}]}],\"if\":{\"properties\":"
    "{\"contactMethod\":{\"const\":\"phone\"}},\"required\":"
    "[\"contactMethod\"]},\"then\":{\"required\":[\"phone\"]},\"else\":"
    "{\"required\":[\"email\"]},\"additionalProperties\":false}";

#define FX(n, d, in, fn, fl) \
	{ n, NULL, d, in, NULL, 0, fl, fn, NULL, NULL, NULL }
#define FXD(n, d, in, fn, fl, dec) \
	{ n, NULL, d, in, NULL, 0, fl, fn, NULL, NULL, dec }

static struct tool fixtures[] = {
	FX("test_simple_text", "Returns a simple text response", NOARGS,
	    fx_simple_text, 0),
	FX("test_image_content", "Returns an image", NOARGS, fx_image, 0),
	FX("test_audio_content", "Returns audio", NOARGS, fx_audio, 0),
	FX("test_embedded_resource", "Returns an embedded resource", NOARGS,
	    fx_embedded, 0),
	FX("test_multiple_content_types", "Returns text, an image and a "
	    "resource", NOARGS, fx_mixed, 0),
	FX("test_tool_with_logging", "Sends log messages while it runs",
	    NOARGS, fx_logging, T_LEGACY),
	FX("test_tool_with_progress", "Reports progress while it runs",
	    NOARGS, fx_progress, 0),
	FX("test_error_handling", "Always returns a tool error", NOARGS,
	    fx_error, 0),
	FX("test_sampling", "Asks the client's model",
	    "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":"
	    "\"string\",\"description\":\"The prompt to send to the LLM\"}},"
	    "\"required\":[\"prompt\"]}", fx_sampling, T_LEGACY),
	FX("test_elicitation", "Asks the user",
	    "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":"
	    "\"string\",\"description\":\"The message to show the user\"}},"
	    "\"required\":[\"message\"]}", fx_elicitation, T_LEGACY),
	FX("test_elicitation_sep1034_defaults", "Asks with defaults",
	    NOARGS, fx_sep1034, T_LEGACY),
	FX("test_elicitation_sep1330_enums", "Asks with enums", NOARGS,
	    fx_sep1330, T_LEGACY),
	FX("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 "
	    "features for conformance testing (SEP-1613)", schema_2020_12,
	    fx_noop, 0),
	FX("test_reconnection", "Closes its stream before answering",
	    NOARGS, fx_reconnection, T_LEGACY),
	FX("test_missing_capability", "Needs the client's sampling "
	    "capability", NOARGS, fx_missing_cap, T_MODERN),
	FX("test_streaming_elicitation", "Streams notifications, then "
	    "answers", NOARGS, fx_streaming, T_MODERN),
	FX("test_logging_tool", "Logs only when asked to", NOARGS,
	    fx_logging_tool, T_MODERN),
	FX("test_trigger_tool_change", "Says the tool list changed", NOARGS,
	    fx_trigger_tools, T_MODERN | T_HIDDEN),
	FX("test_trigger_prompt_change", "Says the prompt list changed",
	    NOARGS, fx_trigger_prompts, T_MODERN | T_HIDDEN),
	FX("test_input_required_result_elicitation", "MRTR: asks for a name",
	    NOARGS, fx_irr_elicitation, T_MODERN),
	FX("test_input_required_result_sampling", "MRTR: asks the model",
	    NOARGS, fx_irr_sampling, T_MODERN),
	FX("test_input_required_result_list_roots", "MRTR: asks for roots",
	    NOARGS, fx_irr_roots, T_MODERN),
	FX("test_input_required_result_request_state", "MRTR: keeps state",
	    NOARGS, fx_irr_state, T_MODERN),
	FX("test_input_required_result_multiple_inputs", "MRTR: asks three "
	    "things", NOARGS, fx_irr_multiple, T_MODERN),
	FX("test_input_required_result_multi_round", "MRTR: two rounds",
	    NOARGS, fx_irr_multi_round, T_MODERN),
	FX("test_input_required_result_tampered_state", "MRTR: checks its "
	    "state", NOARGS, fx_irr_tampered, T_MODERN),
	FX("test_input_required_result_capabilities", "MRTR: asks only what "
	    "the client can answer", NOARGS, fx_irr_caps, T_MODERN),
	FX("greet", "Greets someone", "{\"type\":\"object\",\"properties\":"
	    "{\"name\":{\"type\":\"string\"}}}", fx_greet, T_MODERN),
	FXD("slow_compute", "Takes a while; a task when it can",
	    "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":"
	    "\"number\"},\"label\":{\"type\":\"string\"}}}", fx_slow,
	    T_MODERN | T_TASK | T_TASK_AUTO, slow_decide),
	FX("failing_job", "A task that ends with a tool error", NOARGS,
	    fx_failing, T_MODERN | T_TASK_ONLY),
	FXD("protocol_error_job", "A task that fails", NOARGS,
	    fx_protocol_error, T_MODERN | T_TASK | T_TASK_AUTO, always),
	FXD("confirm_delete", "A task that asks before deleting",
	    "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":"
	    "\"string\"}}}", fx_confirm_delete, T_MODERN | T_TASK |
	    T_TASK_AUTO, always),
	FXD("multi_input", "A task that asks two things", NOARGS,
	    fx_multi_input, T_MODERN | T_TASK | T_TASK_AUTO, always),
	FXD("test_tool_with_task", "Asks, then runs as a task", NOARGS,
	    fx_with_task, T_MODERN | T_TASK | T_TASK_AUTO, with_task_decide),
	FX("test_custom_header", "Carries an argument in a header",
	    "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":"
	    "\"string\",\"x-mcp-header\":\"Region\"}},\"required\":"
	    "[\"region\"]}", fx_custom_header, T_MODERN),
};

/* --- Prompts -------------------------------------------------------- */

static void
fixture_prompts_list(struct mcp_req *req)
{
	json_t	*list, *res;

	list = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[{s:s, s:s, "
	    "s:b}, {s:s, s:s, s:b}]}, {s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}, "
	    "{s:s, s:s, s:s}]",
	    "name", "test_simple_prompt", "title", "Simple Test Prompt",
	    "description", "A simple prompt without arguments",
	    "name", "test_prompt_with_arguments", "title",
	    "Prompt With Arguments", "description",
	    "A prompt with required arguments", "arguments",
	    "name", "arg1", "description", "First test argument", "required",
	    1, "name", "arg2", "description", "Second test argument",
	    "required", 1,
	    "name", "test_prompt_with_embedded_resource", "title",
	    "Prompt With Embedded Resource", "description",
	    "A prompt that includes an embedded resource", "arguments",
	    "name", "resourceUri", "description",
	    "URI of the resource to embed", "required", 1,
	    "name", "test_prompt_with_image", "title", "Prompt With Image",
	    "description", "A prompt that includes image content");
	if (req->modern)
		json_array_append_new(list, json_pack("{s:s, s:s}", "name",
		    "test_input_required_result_prompt", "description",
		    "MRTR: prompt that requires elicitation input"));
	res = json_pack("{s:o}", "prompts", list);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("public"));
	}
	mcp_result(req, res);
}

static json_t *
user_text(const char *s)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "role", "user", "content",
	    "type", "text", "text", s);
}

static void
fixture_prompts_get(struct mcp_req *req)
{
	const char	*name = json_string_value(json_object_get(req->params,
			    "name"));
	json_t		*args = json_object_get(req->params, "arguments");
	const char	*a1, *a2, *uri;
	json_t		*a;
	char		*s;

	if (name == NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid params: "
		    "prompts/get needs a name");
		return;
	}
	if (strcmp(name, "test_simple_prompt") == 0) {
		mcp_result(req, json_pack("{s:[o]}", "messages",
		    user_text("This is a simple prompt for testing.")));
	} else if (strcmp(name, "test_prompt_with_arguments") == 0) {
		a1 = json_string_value(json_object_get(args, "arg1"));
		a2 = json_string_value(json_object_get(args, "arg2"));
		if (a1 == NULL || a2 == NULL) {
			mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid "
			    "params: arg1 and arg2 are required");
			return;
		}
		xasprintf(&s, "Prompt with arguments: arg1='%s', arg2='%s'",
		    a1, a2);
		mcp_result(req, json_pack("{s:[o]}", "messages",
		    user_text(s)));
		free(s);
	} else if (strcmp(name, "test_prompt_with_embedded_resource") == 0) {
		uri = json_string_value(json_object_get(args, "resourceUri"));
		if (uri == NULL) {
			mcp_error(req, RPC_INVALID_PARAMS, NULL, "Invalid "
			    "params: resourceUri is required");
			return;
		}
		mcp_result(req, json_pack("{s:[{s:s, s:{s:s, s:{s:s, s:s, "
		    "s:s}}}, o]}", "messages", "role", "user", "content",
		    "type", "resource", "resource", "uri", uri, "mimeType",
		    "text/plain", "text",
		    "Embedded resource content for testing.",
		    user_text("Please process the embedded resource "
		    "above.")));
	} else if (strcmp(name, "test_prompt_with_image") == 0) {
		mcp_result(req, json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}, o]}",
		    "messages", "role", "user", "content", "type", "image",
		    "data", PNG, "mimeType", "image/png",
		    user_text("Please analyze the image above.")));
	} else if (req->modern &&
	    strcmp(name, "test_input_required_result_prompt") == 0) {
		switch (answer(req, "user_context", &a)) {
		case -1:
			return;
		case 0:
			input_required(req, json_pack("{s:o}", "user_context",
			    elicit_req("What context should the prompt use?",
			    "context", "string")), NULL);
			return;
		}
		xasprintf(&s, "Prompt with context: %s",
		    elicited(a, "context"));
		mcp_result(req, json_pack("{s:[o]}", "messages",
		    user_text(s)));
		free(s);
	} else
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Unknown prompt: "
		    "%.64s", name);
}

/* --- Resources ------------------------------------------------------ */

static void
fixture_resources(struct mcp_req *req, json_t *list)
{
	json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "uri", "test://static-text", "name", "static-text", "title",
	    "Static Text Resource", "description",
	    "A static text resource for testing", "mimeType", "text/plain"));
	json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "uri", "test://static-binary", "name", "static-binary", "title",
	    "Static Binary Resource", "description",
	    "A static binary resource (image) for testing", "mimeType",
	    "image/png"));
	json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "uri", "test://watched-resource", "name", "watched-resource",
	    "title", "Watched Resource", "description",
	    "A resource that auto-updates every 3 seconds", "mimeType",
	    "text/plain"));
}

static void
fixture_templates(struct mcp_req *req, json_t *list)
{
	json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "name", "template", "uriTemplate", "test://template/{id}/data",
	    "title", "Resource Template", "description",
	    "A resource template with parameter substitution", "mimeType",
	    "application/json"));
}

static void
read_one(struct mcp_req *req, const char *uri, const char *mime,
    const char *key, const char *value)
{
	json_t	*res;

	res = json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri,
	    "mimeType", mime, key, value);
	if (req->modern) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("private"));
	}
	mcp_result(req, res);
}

static int
fixture_read(struct mcp_req *req, const char *uri)
{
	const char	*p, *end;
	char		*s;
	int		 n;

	if (strcmp(uri, "test://static-text") == 0)
		read_one(req, uri, "text/plain", "text",
		    "This is the content of the static text resource.");
	else if (strcmp(uri, "test://static-binary") == 0)
		read_one(req, uri, "image/png", "blob", PNG);
	else if (strcmp(uri, "test://watched-resource") == 0)
		read_one(req, uri, "text/plain", "text",
		    "Watched resource content");
	else if (strncmp(uri, "test://template/", 16) == 0 &&
	    (end = strstr(uri + 16, "/data")) != NULL && end[5] == '\0' &&
	    end > uri + 16 && (n = (int)(end - (uri + 16))) < 64 &&
	    memchr(uri + 16, '"', (size_t)n) == NULL &&
	    memchr(uri + 16, '\\', (size_t)n) == NULL) {
		p = uri + 16;
		xasprintf(&s, "{\"id\":\"%.*s\",\"templateTest\":true,"
		    "\"data\":\"Data for ID: %.*s\"}", n, p, n, p);
		read_one(req, uri, "application/json", "text", s);
		free(s);
	} else
		return 0;
	return 1;
}

static int
fixture_complete(struct mcp_req *req, json_t *ref, const char *name,
    const char *value)
{
	const char	*type = json_string_value(json_object_get(ref, "type"));

	if (type == NULL || strcmp(type, "ref/prompt") != 0)
		return 0;
	mcp_result(req, json_pack("{s:{s:[], s:i, s:b}}", "completion",
	    "values", "total", 0, "hasMore", 0));
	return 1;
}

/* --- Registration --------------------------------------------------- */

static const struct mcp_extension fixture_extension = {
	.tools = fixtures,
	.ntools = nitems(fixtures),
	.tools_change = 1,
	.resources = fixture_resources,
	.templates = fixture_templates,
	.read = fixture_read,
	.complete = fixture_complete,
	.prompts_list = fixture_prompts_list,
	.prompts_get = fixture_prompts_get,
};

int
main(int argc, char *argv[])
{
	mcp_extend(&fixture_extension);
	return mcpd_main(argc, argv);
}
