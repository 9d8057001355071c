/*
 * MCP over WebSocket (SEP-1288, a draft): GET /ws, or /mcp, with an
 * Upgrade to websocket and the subprotocol "mcp"; then one JSON-RPC
 * message (or batch, as stdio takes them) per text frame each way, for
 * as long as the connection lasts: one session, as on stdio.  Binary
 * frames end the connection with 1003 (ws.c), a message longer than
 * mcpd's limit with 1009.
 *
 * The request was let in as any other (Host and Origin, then a bearer
 * token, a uid or a tenant's listener); a client that cannot set headers
 * (a browser's WebSocket) may send its token as the subprotocol
 * "mcp.auth.TOKEN" beside "mcp" (httpd.c reads it).  The answer names
 * "mcp" alone, never that one.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "http.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "util.h"
#include "ws.h"

struct wsconn {
	struct mcp_out		 chan;		/* first: the session's */
	struct http_ws		*ws;		/* NULL once closed */
	struct mcp_session	*sess;
	struct mcp_peer		 peer;
	struct event		*ev_expire;	/* the credential's end */
};

static void
ws_out_send(struct mcp_out *out, struct mcp_req *req, json_t *msg,
    int final, int status)
{
	struct wsconn	*w = (struct wsconn *)out;
	char		*s;

	if (w->ws == NULL)
		return;
	s = rpc_dump(msg);
	(void)http_ws_send(w->ws, s, strlen(s));
	free(s);
}

static void
ws_out_abandon(struct mcp_out *out, struct mcp_req *req)
{
}

static const struct mcp_out_ops ws_out_ops = {
	.send = ws_out_send,
	.abandon = ws_out_abandon,
};

static void
ws_message(struct http_ws *ws, const char *text, size_t len, void *arg)
{
	struct wsconn		*w = arg;
	struct mcp_input	 in;

	if (w->sess == NULL)
		return;
	memset(&in, 0, sizeof(in));
	in.transport = MCP_T_WS;
	in.sess = w->sess;
	in.peer = &w->peer;
	in.out = &w->chan;
	session_touch(w->sess);
	mcp_input_line(&in, text, len);
}

/* The session ends with the connection, and what it asked with it. */
static void
ws_closed(struct http_ws *ws, void *arg)
{
	struct wsconn		*w = arg;
	struct mcp_session	*sess = w->sess;

	w->ws = NULL;
	if (w->ev_expire != NULL)
		event_free(w->ev_expire);
	if (sess != NULL) {
		session_end(sess, "disconnected");
		w->sess = NULL;
		session_unref(sess);
	}
	mcp_out_gone(&w->chan);
	free(w);
}

/*
 * Every HTTP request shows its token again; a socket shows it once.  So
 * the socket ends when the token does (its exp, with the leeway), and the
 * client reconnects with a fresh one.
 */
static void
ws_expire(evutil_socket_t fd, short ev, void *arg)
{
	struct wsconn	*w = arg;

	log_info("%s: the token of WebSocket session %s expired: closing",
	    w->peer.desc, w->sess != NULL ? w->sess->id : "-");
	if (w->ws != NULL)
		http_ws_close(w->ws, WS_CLOSE_POLICY, "the token expired");
}

/* The session ended first (revoked, mcpd stopping): so does the socket. */
static void
ws_session_end(struct mcp_session *sess)
{
	struct wsconn	*w = sess->tdata;

	sess->tdata = NULL;
	if (w == NULL || w->ws == NULL)
		return;
	http_ws_close(w->ws, WS_CLOSE_POLICY, "the session ended");
}

static const struct http_ws_ops ws_ops = {
	.message = ws_message,
	.closed = ws_closed,
};

/* Is token in a comma-separated header list (case-insensitively)? */
static int
list_has(const char *list, const char *token)
{
	const char	*p = list;
	size_t		 n, tl = strlen(token);

	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		n = strcspn(p, ", \t");
		if (n == tl && strncasecmp(p, token, n) == 0)
			return 1;
		p += n;
	}
	return 0;
}

/* A refused handshake, in plain text. */
static void
refuse(struct http_req *r, int code, const char *extra, const char *text)
{
	http_reply(r, code, "text/plain", extra, text, strlen(text));
}

int
websocket_wanted(const struct http_req *r)
{
	const char	*up = http_header(r, "upgrade");

	return up != NULL && list_has(up, "websocket");
}

/*
 * The handshake (RFC 6455 4.2.1), for a request let in: 101 and a
 * session, or an HTTP error.
 */
void
websocket_open(struct http_req *r, const struct mcp_peer *peer)
{
	struct wsconn		*w;
	struct mcp_session	*sess;
	const char		*key = http_header(r, "sec-websocket-key");
	const char		*ver = http_header(r, "sec-websocket-version");
	const char		*proto = http_header(r, "sec-websocket-protocol");
	char			 accept[29];
	struct timeval		 tv = { 0, 0 };

	if (strcmp(r->method, "GET") != 0) {
		refuse(r, 405, "Allow: GET\r\n", "a WebSocket opens with GET\n");
		return;
	}
	if (!websocket_wanted(r) || !list_has(http_header(r, "connection"),
	    "upgrade")) {
		refuse(r, 426, "Upgrade: websocket\r\nConnection: Upgrade\r\n",
		    "this endpoint is a WebSocket (subprotocol mcp)\n");
		return;
	}
	if (ver == NULL || strcmp(ver, "13") != 0 ||
	    http_header_count(r, "sec-websocket-version") != 1) {
		refuse(r, 426, "Sec-WebSocket-Version: 13\r\n",
		    "WebSocket version 13 only\n");
		return;
	}
	if (key == NULL || http_header_count(r, "sec-websocket-key") != 1 ||
	    ws_accept_key(key, accept) == -1) {
		refuse(r, 400, NULL, "a bad Sec-WebSocket-Key\n");
		return;
	}
	if (proto == NULL || http_header_count(r,
	    "sec-websocket-protocol") != 1 || !list_has(proto, "mcp")) {
		refuse(r, 400, NULL, "the subprotocol mcp is required "
		    "(Sec-WebSocket-Protocol: mcp)\n");
		return;
	}
	if ((sess = session_new(MCP_T_WS, peer)) == NULL) {
		refuse(r, 503, NULL, "too many sessions\n");
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->chan.ops = &ws_out_ops;
	w->peer = *peer;
	w->sess = sess;
	session_ref(sess);	/* the connection's, until it closes */
	sess->chan = &w->chan;
	sess->tdata = w;
	sess->end = ws_session_end;
	if ((w->ws = http_ws_upgrade(r, accept, "Sec-WebSocket-Protocol: "
	    "mcp\r\n", mcpd_max_message, &ws_ops, w)) == NULL) {
		/* The client left before its answer. */
		session_end(sess, "disconnected");
		w->sess = NULL;
		session_unref(sess);
		free(w);
		return;
	}
	if (peer->expires > 0) {
		tv.tv_sec = peer->expires > (int64_t)time(NULL) ?
		    (time_t)(peer->expires - (int64_t)time(NULL)) : 0;
		if ((w->ev_expire = evtimer_new(mcp_base, ws_expire, w)) ==
		    NULL || evtimer_add(w->ev_expire, &tv) == -1)
			fatalx("cannot make a timer");
	}
	log_debug("%s: WebSocket session %s opened", peer->desc, sess->id);
}
