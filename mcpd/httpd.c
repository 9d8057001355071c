/*
 * MCP over HTTP: Streamable HTTP at /mcp (both eras) and the 2024-11-05
 * HTTP+SSE transport at /sse and /messages; and, after the same Host and
 * Origin checks, /healthz for anyone and /metrics for its readers
 * (observe.c).
 *
 * Every request is checked in the same order: Host and Origin (DNS
 * rebinding), then the client's credentials, then the method and media
 * types, then the body.  A POST that carries a request becomes an
 * exchange: its answer goes back as JSON, unless something must be said
 * before it (progress, log messages, questions to the client), in which
 * case the reply turns into an event stream.  In a legacy session such a
 * stream has event ids and is kept for a while, so a client that lost the
 * connection resumes it with GET and Last-Event-ID; a modern stream is
 * the request itself, and closing it cancels the request.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "http.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "oauth.h"
#include "policy.h"
#include "util.h"

#define SSE_RETRY_MS		2000	/* how long a polling client waits */
/* A finished stream stays resumable this long. */
#define STREAM_KEEP_MS		(5ULL * 60 * 1000)
/* Events kept for resumption, per session. */
#define SESSION_REPLAY_MAX	(4 * 1024 * 1024)
#define KEEPALIVE_S		15
#define TOKEN_MAX		8192

/* A listening socket and what its configuration says. */
struct lsock {
	const struct listen_addr *la;		/* NULL: not configured */
	const struct tenant	*open;		/* no credentials needed */
	int			 is_unix;
	char			 name[64];
};

/* An event of a resumable stream, as sent. */
struct sse_event {
	TAILQ_ENTRY(sse_event)	 entry;
	uint64_t		 seq;
	size_t			 len;
	char			 text[];
};

enum live_kind {
	LIVE_XCHG,		/* a modern POST's event stream */
	LIVE_STREAM,		/* a legacy session's resumable stream */
	LIVE_SSE,		/* a 2024-11-05 GET /sse connection */
};

/* An event stream being written on a connection. */
struct live {
	TAILQ_ENTRY(live)	 entry;
	struct http_req		*hreq;
	enum live_kind		 kind;
	void			*owner;
	uint64_t		 last;		/* mono_ms(), last write */
};

struct hsess;

/* A legacy session's stream: a POST's, or its standalone GET stream. */
struct stream {
	TAILQ_ENTRY(stream)	 entry;
	struct hsess		*hs;
	char			 id[17];
	uint64_t		 seq;
	TAILQ_HEAD(, sse_event)	 events;
	size_t			 bytes;
	struct live		*live;
	struct xchg		*x;		/* feeding it, until finished */
	int			 finished;
	int			 lost;		/* too big to resume */
	int			 standalone;
	uint64_t		 finished_at;
};

/* The HTTP side of a legacy session. */
struct hsess {
	struct mcp_session	*sess;
	TAILQ_HEAD(, stream)	 streams;
	struct stream		*get;		/* the standalone stream */
	struct mcp_out		 chan;		/* messages of no request */
	size_t			 bytes;
	struct live		*sse;		/* 2024-11-05: GET /sse */
};

/* One POST that carries requests, until its answers are out. */
struct xchg {
	struct mcp_out		 out;
	struct http_req		*hreq;		/* while we may still reply */
	struct live		*live;		/* modern: its event stream */
	struct mcp_session	*sess;		/* legacy: referenced */
	struct stream		*stream;	/* legacy: once streaming */
	int			 modern;
	int			 init;		/* answers initialize */
	int			 json_only;	/* Accept has no event-stream */
	int			 sse_only;	/* Accept has no JSON */
	unsigned int		 waiting;	/* answers to come */
};

static struct {
	const struct policy	*conf;
	struct http_server	*srv;
	struct lsock		*socks;
	int			 nsocks;
	struct event		*ev_keepalive;
	TAILQ_HEAD(, live)	 lives;
} h;

static void	 live_close(struct live *);

/* --- Small pieces ------------------------------------------------------ */

static void
reply_json(struct http_req *r, int status, json_t *msg, const char *extra)
{
	char	*s = rpc_dump(msg);

	http_reply(r, status, "application/json", extra, s, strlen(s));
	free(s);
}

/* An error with a JSON-RPC body: the id is null, no request was read. */
static void
reply_rpc_error(struct http_req *r, int status, int code, const char *msg,
    const char *extra)
{
	json_t	*m = rpc_error(NULL, code, msg, NULL);

	reply_json(r, status, m, extra);
	json_decref(m);
}

static void
reply_plain(struct http_req *r, int status, const char *extra,
    const char *text)
{
	http_reply(r, status, "text/plain; charset=utf-8", extra, text,
	    strlen(text));
}

/* Does a comma-separated header list a media type (or a wildcard)? */
static int
accepts(const char *accept, const char *type)
{
	const char	*p = accept, *end, *semi, *slash;
	size_t		 n, tl = strlen(type);

	if (accept == NULL)
		return 1;
	slash = strchr(type, '/');
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		semi = memchr(p, ';', (size_t)(end - p));
		n = (size_t)((semi != NULL ? semi : end) - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == tl && strncasecmp(p, type, tl) == 0) ||
		    (n == 3 && strncmp(p, "*/*", 3) == 0) ||
		    (slash != NULL && n == (size_t)(slash - type) + 2 &&
		    strncasecmp(p, type, (size_t)(slash - type) + 1) == 0 &&
		    p[n - 1] == '*'))
			return 1;
		p = end;
	}
	return 0;
}

static int
content_json(const char *ct)
{
	size_t	 n;

	if (ct == NULL)
		return 0;
	n = strcspn(ct, "; \t");
	return n == strlen("application/json") &&
	    strncasecmp(ct, "application/json", n) == 0;
}

/* --- Host and Origin ------------------------------------------------- */

static int
name_allowed(const char *host, size_t len)
{
	static const char *const loopback[] = {
		"localhost", "127.0.0.1", "[::1]",
	};
	size_t	 i;

	for (i = 0; i < nitems(loopback); i++)
		if (strlen(loopback[i]) == len &&
		    strncasecmp(loopback[i], host, len) == 0)
			return 1;
	for (i = 0; i < h.conf->nallow_hosts; i++)
		if (strlen(h.conf->allow_hosts[i]) == len &&
		    strncasecmp(h.conf->allow_hosts[i], host, len) == 0)
			return 1;
	return 0;
}

/* "host", "host:port", "[v6]" or "[v6]:port": the host's length. */
static int
host_part(const char *s, size_t *len)
{
	const char	*p, *colon;

	if (s[0] == '[') {
		if ((p = strchr(s, ']')) == NULL)
			return -1;
		*len = (size_t)(p - s) + 1;
		p++;
	} else {
		colon = strchr(s, ':');
		*len = colon != NULL ? (size_t)(colon - s) : strlen(s);
		p = s + *len;
	}
	if (*p == ':') {
		p++;
		if (*p == '\0' || strspn(p, "0123456789") != strlen(p) ||
		    strlen(p) > 5)
			return -1;
	} else if (*p != '\0')
		return -1;
	return *len > 0 ? 0 : -1;
}

static int
host_allowed(const char *host)
{
	size_t	 len;

	if (host == NULL)
		return 1;	/* HTTP/1.0 without a Host: no browser */
	return host_part(host, &len) == 0 && name_allowed(host, len);
}

static int
origin_allowed(const char *origin)
{
	const char	*p;
	size_t		 i, len;

	if (origin == NULL)
		return 1;	/* not a browser */
	for (i = 0; i < h.conf->nallow_origins; i++)
		if (strcasecmp(h.conf->allow_origins[i], origin) == 0)
			return 1;
	if (strncasecmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else
		return 0;
	return host_part(p, &len) == 0 && name_allowed(p, len);
}

/* --- Credentials ------------------------------------------------------- */

static void	principal_of(uint8_t [32], const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));

static void
principal_of(uint8_t out[32], const char *fmt, ...)
{
	char	 buf[128];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	crypto_hash_sha256(out, (const unsigned char *)buf, strlen(buf));
}

/*
 * Failed authentications are counted, and recorded and logged at most
 * AUTH_RECORDS_PER_S a second: a client guessing tokens must not drown
 * the audit trail or the log.
 */
#define AUTH_RECORDS_PER_S	10

static void
auth_failed(const struct http_req *r, enum mx_auth why, const char *reason)
{
	static struct maudit_gate gate;
	unsigned int	 missed;
	int		 pass;
	char		 msg[96], peer[160], path[96];

	metrics_auth_failure(why);
	pass = maudit_gate(&gate, AUTH_RECORDS_PER_S, &missed);
	if (missed > 0) {
		snprintf(msg, sizeof(msg), "%u more failures not recorded one "
		    "by one", missed);
		maudit_auth_failure("many", msg);
		log_info("auth_failure peer=many count=%u", missed);
	}
	if (!pass)
		return;
	log_info("auth_failure peer=%s reason=%s path=%s",
	    log_value(r->peer, peer, sizeof(peer)), metrics_auth_name(why),
	    log_value(r->path, path, sizeof(path)));
	maudit_auth_failure(r->peer, reason);
}

/* The token of a well-formed "Bearer <token>", and its length; NULL. */
static const char *
bearer_token(const struct http_req *r, const char *auth, size_t *len)
{
	const char	*tok;
	size_t		 n;

	if (http_header_count(r, "authorization") != 1 ||
	    strncasecmp(auth, "bearer ", 7) != 0)
		return NULL;
	for (tok = auth + 7; *tok == ' '; tok++)
		;
	n = strlen(tok);
	if (n == 0 || n > TOKEN_MAX || strchr(tok, ' ') != NULL)
		return NULL;
	*len = n;
	return tok;
}

/* The hash of a well-formed "Bearer <token>"; -1 if it is none. */
static int
bearer_hash(const struct http_req *r, const char *auth, uint8_t hash[32])
{
	const char	*tok;
	size_t		 n;

	if ((tok = bearer_token(r, auth, &n)) == NULL)
		return -1;
	crypto_hash_sha256(hash, (const unsigned char *)tok, n);
	return 0;
}

/*
 * The draft's token for clients that cannot set headers (a browser's
 * WebSocket): the subprotocol "mcp.auth.TOKEN", offered beside "mcp".
 */
#define WS_AUTH_PREFIX	"mcp.auth."

static const char *
ws_token(const struct http_req *r, size_t *len)
{
	const char	*p = http_header(r, "sec-websocket-protocol");
	size_t		 n;

	if (p == NULL || http_header_count(r, "sec-websocket-protocol") != 1)
		return NULL;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		n = strcspn(p, ", \t");
		if (n > sizeof(WS_AUTH_PREFIX) - 1 && n <= TOKEN_MAX &&
		    strncmp(p, WS_AUTH_PREFIX, sizeof(WS_AUTH_PREFIX) - 1) == 0) {
			*len = n - (sizeof(WS_AUTH_PREFIX) - 1);
			return p + sizeof(WS_AUTH_PREFIX) - 1;
		}
		p += n;
	}
	return NULL;
}

/* An access_token query parameter. */
static int
query_token(const struct http_req *r)
{
	const char	*q = r->query;

	return q != NULL && (strncmp(q, "access_token=", 13) == 0 ||
	    strstr(q, "&access_token=") != NULL);
}

/* A 401 or 403's challenge: the resource metadata's, with OAuth. */
static const char *
challenge(const char *error)
{
	if (oauth_enabled())
		return oauth_challenge(error);
	if (error == NULL)
		return "WWW-Authenticate: Bearer realm=\"mcp\"\r\n";
	return "WWW-Authenticate: Bearer realm=\"mcp\", "
	    "error=\"invalid_token\"\r\n";
}

/* An OAuth access token (oauth.c): the tenant, or -1 once answered. */
static int
authenticate_oauth(struct http_req *r, struct mcp_peer *peer,
    const char *tok, size_t n)
{
	struct oauth_who	 who;
	char			 reason[128];

	switch (oauth_check(tok, n, &who)) {
	case OAUTH_OK:
		peer->tenant = who.tenant;
		memcpy(peer->principal, who.principal,
		    sizeof(peer->principal));
		snprintf(peer->desc, sizeof(peer->desc), "tenant %s (oauth "
		    "sub %s)", who.tenant->name, who.sub);
		snprintf(peer->cred, sizeof(peer->cred), "oauth:%02x%02x",
		    who.principal[0], who.principal[1]);
		peer->expires = who.expires;
		return 0;
	case OAUTH_NO_KEYS:
		reply_rpc_error(r, 503, -32000, "Service Unavailable: the "
		    "authorization server's keys are not loaded yet",
		    "Retry-After: 5\r\n");
		return -1;
	case OAUTH_SCOPE:
		auth_failed(r, MX_AUTH_SCOPE, "an OAuth token without a "
		    "scope required");
		reply_rpc_error(r, 403, -32000, "Forbidden: the token lacks "
		    "a scope this server requires", challenge(
		    "insufficient_scope"));
		return -1;
	case OAUTH_NO_TENANT:
		auth_failed(r, MX_AUTH_FORBIDDEN, "an OAuth token no tenant "
		    "takes");
		reply_rpc_error(r, 403, -32000, "Forbidden: no tenant of this "
		    "server takes this token's claims", NULL);
		return -1;
	case OAUTH_INVALID:
	default:
		snprintf(reason, sizeof(reason), "a bad OAuth token: %s",
		    who.why);
		auth_failed(r, MX_AUTH_BAD_TOKEN, reason);
		reply_rpc_error(r, 401, -32000, "Unauthorized: the bearer "
		    "token is not valid", challenge("invalid_token"));
		return -1;
	}
}

/* The tenant of a request; -1 once it has been answered 401/403. */
static int
authenticate(struct http_req *r, struct mcp_peer *peer)
{
	const struct lsock	*ls = r->larg;
	const char		*auth = http_header(r, "authorization");
	const char		*tok = NULL;
	const struct tenant	*t;
	uint8_t			 hash[32];
	size_t			 n = 0;

	memset(peer, 0, sizeof(*peer));
	if (auth == NULL && (tok = ws_token(r, &n)) != NULL)
		auth = "";	/* a credential, as a header would be */
	if (auth == NULL && ls != NULL && ls->open != NULL &&
	    ls->open->gone) {
		/* Its listen statement changes only with a restart. */
		auth_failed(r, MX_AUTH_TENANT_GONE,
		    "the listener's tenant was removed");
		reply_rpc_error(r, 403, -32000, "Forbidden: this socket's "
		    "tenant no longer exists", NULL);
		return -1;
	}
	if (auth == NULL && ls != NULL && ls->open != NULL) {
		peer->tenant = ls->open;
		principal_of(peer->principal, "listener:%s", ls->name);
		snprintf(peer->desc, sizeof(peer->desc), "tenant %s (%s)",
		    ls->open->name, ls->name);
		snprintf(peer->cred, sizeof(peer->cred), "listener:%s",
		    ls->name);
		return 0;
	}
	if (auth == NULL && r->has_cred) {
		if ((t = policy_tenant_by_uid(h.conf, r->uid)) == NULL) {
			auth_failed(r, MX_AUTH_UNKNOWN_UID,
			    "a uid that is no tenant's");
			reply_rpc_error(r, 403, -32000, "Forbidden: this uid "
			    "is not a tenant of this server", NULL);
			return -1;
		}
		peer->tenant = t;
		principal_of(peer->principal, "uid:%u", (unsigned)r->uid);
		snprintf(peer->desc, sizeof(peer->desc), "tenant %s (uid %u)",
		    t->name, (unsigned)r->uid);
		snprintf(peer->cred, sizeof(peer->cred), "uid:%u",
		    (unsigned)r->uid);
		return 0;
	}
	if (auth == NULL && query_token(r)) {
		/* RFC 6750 2.3, which MCP forbids: it would end up in logs. */
		auth_failed(r, MX_AUTH_NONE, "a token in the query string, "
		    "which is never read");
		reply_rpc_error(r, 401, -32000, "Unauthorized: send the token "
		    "in an Authorization: Bearer header, never in the URL",
		    challenge(NULL));
		return -1;
	}
	if (auth == NULL) {
		auth_failed(r, MX_AUTH_NONE, "no credentials");
		reply_rpc_error(r, 401, -32000, "Unauthorized: send "
		    "Authorization: Bearer <token>", challenge(NULL));
		return -1;
	}
	if (tok == NULL && (tok = bearer_token(r, auth, &n)) == NULL)
		goto bad;
	crypto_hash_sha256(hash, (const unsigned char *)tok, n);
	if ((t = policy_tenant_by_token(h.conf, hash)) == NULL) {
		if (oauth_enabled() && oauth_token_shaped(tok, n))
			return authenticate_oauth(r, peer, tok, n);
		if (!policy_metrics_token(h.conf, hash))
			goto bad;
		auth_failed(r, MX_AUTH_FORBIDDEN, "a metrics token, "
		    "elsewhere than /metrics");
		reply_rpc_error(r, 403, -32000, "Forbidden: this token may "
		    "read /metrics and nothing else", NULL);
		return -1;
	}
	peer->tenant = t;
	memcpy(peer->principal, hash, sizeof(peer->principal));
	snprintf(peer->desc, sizeof(peer->desc), "tenant %s (token %02x%02x)",
	    t->name, hash[0], hash[1]);
	snprintf(peer->cred, sizeof(peer->cred), "token:%02x%02x", hash[0],
	    hash[1]);
	return 0;
 bad:
	auth_failed(r, MX_AUTH_BAD_TOKEN, "a bad bearer token");
	reply_rpc_error(r, 401, -32000, "Unauthorized: the bearer token is "
	    "not valid", challenge("invalid_token"));
	return -1;
}

/* --- Event streams ----------------------------------------------------- */

static void live_gone(struct http_req *);

static struct live *
live_open(struct http_req *r, enum live_kind kind, void *owner,
    const char *extra)
{
	struct live	*l;
	char		 hdrs[256];

	snprintf(hdrs, sizeof(hdrs), "X-Accel-Buffering: no\r\n%s",
	    extra != NULL ? extra : "");
	http_stream_start(r, 200, "text/event-stream", hdrs);
	l = xcalloc(1, sizeof(*l));
	l->hreq = r;
	l->kind = kind;
	l->owner = owner;
	l->last = mono_ms();
	r->data = l;
	r->gone = live_gone;
	TAILQ_INSERT_TAIL(&h.lives, l, entry);
	return l;
}

static void
live_write(struct live *l, const char *text, size_t len)
{
	l->last = mono_ms();
	/* A failure means the client is too slow: it is dropped, and the
	 * gone callback says so from the loop. */
	(void)http_stream_write(l->hreq, text, len);
}

/* We end it. */
static void
live_close(struct live *l)
{
	TAILQ_REMOVE(&h.lives, l, entry);
	l->hreq->gone = NULL;
	http_stream_end(l->hreq);
	free(l);
}

static char *
event_text(const char *id, json_t *msg, size_t *len)
{
	char	*s, *t;

	s = rpc_dump(msg);
	if (id != NULL)
		xasprintf(&t, "id: %s\nevent: message\ndata: %s\n\n", id, s);
	else
		xasprintf(&t, "event: message\ndata: %s\n\n", s);
	free(s);
	*len = strlen(t);
	return t;
}

static void
stream_free(struct stream *st)
{
	struct sse_event	*ev;

	while ((ev = TAILQ_FIRST(&st->events)) != NULL) {
		TAILQ_REMOVE(&st->events, ev, entry);
		free(ev);
	}
	st->hs->bytes -= st->bytes;
	TAILQ_REMOVE(&st->hs->streams, st, entry);
	if (st->hs->get == st)
		st->hs->get = NULL;
	if (st->live != NULL)
		live_close(st->live);
	if (st->x != NULL)
		st->x->stream = NULL;
	free(st);
}

static void
stream_drop_events(struct stream *st)
{
	struct sse_event	*ev;

	while ((ev = TAILQ_FIRST(&st->events)) != NULL) {
		TAILQ_REMOVE(&st->events, ev, entry);
		free(ev);
	}
	st->hs->bytes -= st->bytes;
	st->bytes = 0;
}

/* Finished streams nobody resumed are let go after a while. */
static void
streams_sweep(struct hsess *hs, size_t need)
{
	struct stream	*st, *tst;
	uint64_t	 now = mono_ms();

	TAILQ_FOREACH_SAFE(st, &hs->streams, entry, tst)
		if (st->finished && st->live == NULL &&
		    (now - st->finished_at > STREAM_KEEP_MS ||
		    hs->bytes + need > SESSION_REPLAY_MAX))
			stream_free(st);
}

static struct stream *
stream_new(struct hsess *hs, int standalone)
{
	struct stream	*st;
	unsigned char	 rnd[8];

	streams_sweep(hs, 0);
	st = xcalloc(1, sizeof(*st));
	st->hs = hs;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(st->id, sizeof(st->id), rnd, sizeof(rnd));
	TAILQ_INIT(&st->events);
	st->standalone = standalone;
	TAILQ_INSERT_TAIL(&hs->streams, st, entry);
	return st;
}

static void
stream_store(struct stream *st, const char *text, size_t len)
{
	struct sse_event	*ev;

	if (st->lost)
		return;
	streams_sweep(st->hs, len);
	if (st->hs->bytes + len > SESSION_REPLAY_MAX) {
		/* Too much unread: this stream can no longer be resumed. */
		log_info("%s: session %s: stream %s too large to keep for "
		    "resumption", st->hs->sess->peer.desc, st->hs->sess->id,
		    st->id);
		st->lost = 1;
		stream_drop_events(st);
		return;
	}
	ev = xmalloc(sizeof(*ev) + len);
	ev->seq = st->seq;
	ev->len = len;
	memcpy(ev->text, text, len);
	TAILQ_INSERT_TAIL(&st->events, ev, entry);
	st->bytes += len;
	st->hs->bytes += len;
}

static void
stream_event(struct stream *st, json_t *msg)
{
	char	 id[48], *text;
	size_t	 len;

	st->seq++;
	snprintf(id, sizeof(id), "%s:%llu", st->id,
	    (unsigned long long)st->seq);
	text = event_text(id, msg, &len);
	stream_store(st, text, len);
	if (st->live != NULL)
		live_write(st->live, text, len);
	free(text);
}

/* 2025-11-25 clients reconnect to the id of an empty first event. */
static void
stream_prime(struct stream *st)
{
	char	 buf[96];
	int	 n;

	if (st->hs->sess->version < MCP_V20251125 || st->live == NULL)
		return;
	n = snprintf(buf, sizeof(buf), "id: %s:0\nretry: %d\ndata: \n\n",
	    st->id, SSE_RETRY_MS);
	live_write(st->live, buf, (size_t)n);
}

static void
stream_finish(struct stream *st)
{
	st->finished = 1;
	st->finished_at = mono_ms();
	st->x = NULL;
	if (st->live != NULL) {
		live_close(st->live);
		st->live = NULL;
	}
	if (st->lost)
		stream_free(st);
}

/* The session's messages of no request go to its GET stream. */
static void
chan_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	struct hsess	*hs = (struct hsess *)((char *)out -
			    offsetof(struct hsess, chan));

	if (hs->get != NULL)
		stream_event(hs->get, msg);
}

static void
chan_abandon(struct mcp_out *out, struct mcp_req *req)
{
}

static const struct mcp_out_ops chan_ops = {
	.send = chan_send,
	.abandon = chan_abandon,
};

static void
hsess_end(struct mcp_session *sess)
{
	struct hsess	*hs = sess->tdata;
	struct stream	*st;

	while ((st = TAILQ_FIRST(&hs->streams)) != NULL)
		stream_free(st);
	if (hs->sse != NULL)
		live_close(hs->sse);
	sess->tdata = NULL;
	free(hs);
}

static struct hsess *
hsess_new(struct mcp_session *sess)
{
	struct hsess	*hs;

	hs = xcalloc(1, sizeof(*hs));
	hs->sess = sess;
	TAILQ_INIT(&hs->streams);
	hs->chan.ops = &chan_ops;
	sess->tdata = hs;
	sess->end = hsess_end;
	sess->chan = &hs->chan;
	return hs;
}

/* --- Exchanges --------------------------------------------------------- */

static void
xchg_free(struct xchg *x)
{
	if (x->stream != NULL)
		stream_finish(x->stream);
	if (x->live != NULL)
		live_close(x->live);
	if (x->hreq != NULL) {
		x->hreq->gone = NULL;
		http_req_release(x->hreq);
	}
	if (x->sess != NULL)
		session_unref(x->sess);
	free(x);
}

static void
xchg_extra(struct xchg *x, char *buf, size_t len)
{
	buf[0] = '\0';
	if (x->init && x->sess != NULL && x->sess->state != SESS_NEW &&
	    x->sess->state != SESS_ENDED)
		snprintf(buf, len, "Mcp-Session-Id: %s\r\n", x->sess->id);
}

/* The reply becomes an event stream. */
static void
xchg_stream(struct xchg *x)
{
	char	 extra[96];

	xchg_extra(x, extra, sizeof(extra));
	if (x->modern || x->sess == NULL || x->sess->transport !=
	    MCP_T_HTTP || x->sess->version < MCP_V20250326) {
		x->live = live_open(x->hreq, LIVE_XCHG, x, extra);
		x->hreq = NULL;
		return;
	}
	x->stream = stream_new(x->sess->tdata, 0);
	x->stream->x = x;
	x->stream->live = live_open(x->hreq, LIVE_STREAM, x->stream, extra);
	x->hreq = NULL;
	stream_prime(x->stream);
}

static void
xchg_write(struct xchg *x, json_t *msg)
{
	char	*text;
	size_t	 len;

	if (x->stream != NULL)
		stream_event(x->stream, msg);
	else if (x->live != NULL) {
		text = event_text(NULL, msg, &len);
		live_write(x->live, text, len);
		free(text);
	}
}

static void
xchg_done(struct xchg *x)
{
	if (x->init && x->sess != NULL && x->sess->state == SESS_NEW)
		session_end(x->sess, "initialize-failed");
	xchg_free(x);
}

static void
xchg_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	struct xchg	*x = (struct xchg *)out;
	char		 extra[96];

	if (final && x->waiting > 0)
		x->waiting--;
	if (x->hreq != NULL && final && x->waiting == 0 && !x->sse_only) {
		/* The only thing to say: a plain JSON reply. */
		xchg_extra(x, extra, sizeof(extra));
		reply_json(x->hreq, status != 0 ? status : 200, msg, extra);
		x->hreq = NULL;
		xchg_done(x);
		return;
	}
	if (x->hreq != NULL) {
		if (x->json_only && !final)
			return;		/* it cannot be said here */
		xchg_stream(x);
	}
	xchg_write(x, msg);
	if (final && x->waiting == 0)
		xchg_done(x);
}

static void
xchg_abandon(struct mcp_out *out, struct mcp_req *req)
{
	struct xchg	*x = (struct xchg *)out;

	if (x->waiting > 0)
		x->waiting--;
	if (x->waiting > 0)
		return;
	/* No answer will come: an event stream with nothing in it. */
	if (x->hreq != NULL && !x->json_only)
		xchg_stream(x);
	xchg_done(x);
}

/* Polling, as 2025-11-25 allows: the client comes back with GET. */
static void
xchg_interrupt(struct mcp_out *out, struct mcp_req *req)
{
	struct xchg	*x = (struct xchg *)out;
	struct live	*l;

	if (x->modern || x->sess == NULL)
		return;
	if (x->hreq != NULL && !x->json_only)
		xchg_stream(x);
	if (x->stream == NULL || (l = x->stream->live) == NULL)
		return;
	/* The response ends cleanly; the stream goes on without it. */
	x->stream->live = NULL;
	live_close(l);
}

static const struct mcp_out_ops xchg_ops = {
	.send = xchg_send,
	.abandon = xchg_abandon,
	.interrupt = xchg_interrupt,
};

/* The client went away before anything was sent. */
static void
xchg_hreq_gone(struct http_req *r)
{
	struct xchg	*x = r->data;

	x->hreq = NULL;
	http_req_release(r);
	if (x->modern) {
		/* Closing the request is cancelling it. */
		x->waiting++;
		mcp_out_gone(&x->out);
		if (--x->waiting == 0)
			xchg_done(x);
	}
	/* Legacy: the work goes on; its answer has nowhere to go. */
}

static struct xchg *
xchg_new(struct http_req *r, struct mcp_session *sess, int modern)
{
	struct xchg	*x;
	const char	*accept = http_header(r, "accept");

	x = xcalloc(1, sizeof(*x));
	x->out.ops = &xchg_ops;
	x->hreq = r;
	x->modern = modern;
	x->waiting = 1;
	x->json_only = !accepts(accept, "text/event-stream");
	x->sse_only = !x->json_only && !accepts(accept, "application/json");
	if (sess != NULL) {
		x->sess = sess;
		session_ref(sess);
	}
	r->data = x;
	r->gone = xchg_hreq_gone;
	return x;
}

/* --- Live connections ending ------------------------------------------ */

static void
live_gone(struct http_req *r)
{
	struct live	*l = r->data;
	struct xchg	*x;
	struct stream	*st;
	struct hsess	*hs;

	TAILQ_REMOVE(&h.lives, l, entry);
	http_req_release(r);
	switch (l->kind) {
	case LIVE_XCHG:
		x = l->owner;
		x->live = NULL;
		free(l);
		x->waiting++;
		mcp_out_gone(&x->out);
		if (--x->waiting == 0)
			xchg_done(x);
		return;
	case LIVE_STREAM:
		st = l->owner;
		st->live = NULL;
		if (st->lost && st->finished)
			stream_free(st);
		break;
	case LIVE_SSE:
		hs = l->owner;
		hs->sse = NULL;
		free(l);
		session_end(hs->sess, "disconnected");
		return;
	}
	free(l);
}

static void
keepalive_cb(evutil_socket_t fd, short events, void *arg)
{
	struct live	*l, *tl;
	struct timeval	 tv = { KEEPALIVE_S, 0 };
	uint64_t	 now = mono_ms();

	TAILQ_FOREACH_SAFE(l, &h.lives, entry, tl)
		if (now - l->last >= KEEPALIVE_S * 1000ULL) {
			l->last = now;
			(void)http_stream_write(l->hreq, ":\n\n", 3);
		}
	evtimer_add(h.ev_keepalive, &tv);
}

/* --- Modern header checks ------------------------------------------- */

/* A header value as the body would have it: trimmed, decoded. */
static int
header_value(const char *raw, char *out, size_t outlen, size_t *outn,
    const char *name, char *why, size_t len)
{
	const char	*p;
	size_t		 n, b64len, bin;
	const char	*end;

	for (p = raw; *p != '\0'; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') ||
		    (unsigned char)*p > 0x7e) {
			snprintf(why, len, "Header mismatch: the %s header "
			    "has characters HTTP headers may not carry", name);
			return -1;
		}
	n = strlen(raw);
	if (n >= 11 && strncmp(raw, "=?base64?", 9) == 0 &&
	    strcmp(raw + n - 2, "?=") == 0) {
		b64len = n - 11;
		if (sodium_base642bin((unsigned char *)out, outlen - 1,
		    raw + 9, b64len, NULL, &bin, &end,
		    sodium_base64_VARIANT_ORIGINAL) != 0 ||
		    end != raw + 9 + b64len) {
			snprintf(why, len, "Header mismatch: the %s header "
			    "is not valid base64", name);
			return -1;
		}
		*outn = bin;
		return 0;
	}
	if (n >= outlen) {
		snprintf(why, len, "Header mismatch: the %s header is too "
		    "long", name);
		return -1;
	}
	memcpy(out, raw, n);
	*outn = n;
	return 0;
}

static int
check_header(struct http_req *r, const char *hname, const char *shown,
    const char *want, char *why, size_t len)
{
	const char	*raw = http_header(r, hname);
	char		 val[1024];
	size_t		 n;

	if (raw == NULL || http_header_count(r, hname) != 1) {
		snprintf(why, len, "Header mismatch: %s the %s header",
		    raw == NULL ? "missing" : "more than one", shown);
		return -1;
	}
	if (header_value(raw, val, sizeof(val), &n, shown, why, len) == -1)
		return -1;
	if (n != strlen(want) || memcmp(val, want, n) != 0) {
		snprintf(why, len, "Header mismatch: %s header value '%.*s' "
		    "does not match body value '%.128s'", shown,
		    (int)(n > 128 ? 128 : n), val, want);
		return -1;
	}
	return 0;
}

/* x-mcp-header properties reachable through "properties" alone. */
static int
check_params(struct http_req *r, json_t *schema, json_t *args, char *why,
    size_t len)
{
	json_t		*props, *p, *v, *hn;
	const char	*key, *raw;
	char		 hname[160], shown[160], val[1024], body[64];
	size_t		 n;
	double		 d;
	char		*end;

	props = json_object_get(schema, "properties");
	json_object_foreach(props, key, p) {
		v = json_object_get(args, key);
		if (json_is_object(json_object_get(p, "properties")) &&
		    check_params(r, p, json_is_object(v) ? v : NULL, why,
		    len) == -1)
			return -1;
		hn = json_object_get(p, "x-mcp-header");
		if (!json_is_string(hn))
			continue;
		snprintf(shown, sizeof(shown), "Mcp-Param-%s",
		    json_string_value(hn));
		snprintf(hname, sizeof(hname), "mcp-param-%s",
		    json_string_value(hn));
		for (n = 0; hname[n] != '\0'; n++)
			hname[n] = (char)tolower((unsigned char)hname[n]);
		raw = http_header(r, hname);
		if (v == NULL || json_is_null(v)) {
			if (raw != NULL) {
				snprintf(why, len, "Header mismatch: %s is "
				    "given but the argument is not", shown);
				return -1;
			}
			continue;
		}
		if (raw == NULL) {
			snprintf(why, len, "Header mismatch: missing the %s "
			    "header", shown);
			return -1;
		}
		if (header_value(raw, val, sizeof(val), &n, shown, why,
		    len) == -1)
			return -1;
		val[n] = '\0';
		if (json_is_string(v)) {
			if (n == json_string_length(v) &&
			    memcmp(val, json_string_value(v), n) == 0)
				continue;
		} else if (json_is_integer(v)) {
			errno = 0;
			d = strtod(val, &end);
			if (errno == 0 && end != val && *end == '\0' &&
			    d == (double)json_integer_value(v))
				continue;
		} else if (json_is_boolean(v)) {
			if (strcmp(val, json_is_true(v) ? "true" : "false") ==
			    0)
				continue;
		}
		if (json_is_string(v))
			snprintf(body, sizeof(body), "%.60s",
			    json_string_value(v));
		else
			snprintf(body, sizeof(body), "a %s",
			    json_is_integer(v) ? "number" : "value");
		snprintf(why, len, "Header mismatch: %s header value '%.60s' "
		    "does not match body value '%s'", shown, val, body);
		return -1;
	}
	return 0;
}

static int
hdrcheck(void *arg, json_t *msg, char *why, size_t len)
{
	struct http_req	*r = arg;
	const char	*method = json_string_value(json_object_get(msg,
			    "method"));
	json_t		*params = json_object_get(msg, "params");
	const char	*namekey = NULL;
	json_t		*name, *schema;

	if (check_header(r, "mcp-method", "Mcp-Method", method, why,
	    len) == -1)
		return -1;
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		namekey = "name";
	else if (strcmp(method, "resources/read") == 0)
		namekey = "uri";
	else if (strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		namekey = "taskId";
	if (namekey == NULL)
		return 0;
	name = json_object_get(params, namekey);
	if (!json_is_string(name))
		return 0;	/* the method's own checks say what is wrong */
	if (check_header(r, "mcp-name", "Mcp-Name", json_string_value(name),
	    why, len) == -1)
		return -1;
	if (strcmp(method, "tools/call") == 0 &&
	    (schema = tools_input_schema(json_string_value(name))) != NULL)
		return check_params(r, schema, json_object_get(params,
		    "arguments"), why, len);
	return 0;
}

/* --- /mcp ------------------------------------------------------------- */

/*
 * Why a session is not found: a balancer sends a tenant to the next host
 * while its own is down, and the client's session stayed there.  The
 * client starts a new one here either way (a 404 says so).
 */
static const char *
session_gone(const char *id, char *buf, size_t len)
{
	char	 owner[SESS_ID_MAX + 1], here[64];

	if (host_of(id, owner, sizeof(owner)) != -1 || !name_valid(owner))
		return "Session not found";
	snprintf(buf, len, "Session not found: it was made on host %s, not "
	    "on %s; start a new one", owner, host_this(here, sizeof(here)));
	return buf;
}

/* The legacy session a request names: NULL once answered 400/404. */
static struct mcp_session *
named_session(struct http_req *r, const struct mcp_peer *peer)
{
	const char		*id = http_header(r, "mcp-session-id");
	struct mcp_session	*sess;
	char			 why[160];

	if (id == NULL) {
		reply_rpc_error(r, 400, -32000, "Bad Request: "
		    "Mcp-Session-Id header is required", NULL);
		return NULL;
	}
	if (http_header_count(r, "mcp-session-id") != 1) {
		reply_rpc_error(r, 400, -32000, "Bad Request: more than one "
		    "Mcp-Session-Id header", NULL);
		return NULL;
	}
	/* Someone else's session looks like no session at all. */
	if ((sess = session_find(id)) == NULL ||
	    sess->transport != MCP_T_HTTP ||
	    !mcp_peer_same(&sess->peer, peer)) {
		reply_rpc_error(r, 404, MCP_E_SESSION_NOT_FOUND,
		    session_gone(id, why, sizeof(why)), NULL);
		return NULL;
	}
	return sess;
}

static void
post_dispatch(struct http_req *r, const struct mcp_peer *peer,
    struct mcp_session *sess, json_t *msg, int modern, int batch)
{
	struct mcp_input	 in;
	struct xchg		*x;
	int			 answers;

	x = xchg_new(r, sess, modern);
	memset(&in, 0, sizeof(in));
	in.transport = MCP_T_HTTP;
	in.sess = sess;
	in.peer = peer;
	in.out = &x->out;
	in.hdr_version = http_header(r, "mcp-protocol-version");
	in.hdrcheck = hdrcheck;
	in.hdrarg = r;
	if (!modern && json_is_object(msg) &&
	    json_is_string(json_object_get(msg, "method")) &&
	    strcmp(json_string_value(json_object_get(msg, "method")),
	    "initialize") == 0 && json_object_get(msg, "id") != NULL)
		x->init = 1;
	answers = batch ? mcp_input_batch(&in, msg) : mcp_input(&in, msg);
	if (!answers) {
		/* Notifications and responses: accepted. */
		x->waiting = 0;
		if (x->hreq != NULL) {
			x->hreq->gone = NULL;
			http_reply(x->hreq, 202, NULL, NULL, NULL, 0);
			x->hreq = NULL;
		}
		xchg_free(x);
	}
}

static void
mcp_post(struct http_req *r, const struct mcp_peer *peer)
{
	struct mcp_session	*sess = NULL;
	const char		*why, *method, *hv;
	json_t			*msg, *err;
	int			 code, modern;
	enum rpc_kind		 kind;

	if (!content_json(http_header(r, "content-type"))) {
		reply_rpc_error(r, 415, -32000, "Unsupported Media Type: "
		    "Content-Type must be application/json", NULL);
		return;
	}
	if (!accepts(http_header(r, "accept"), "application/json") &&
	    !accepts(http_header(r, "accept"), "text/event-stream")) {
		reply_rpc_error(r, 406, -32000, "Not Acceptable: Accept must "
		    "list application/json and text/event-stream", NULL);
		return;
	}
	if ((msg = rpc_parse(r->body, r->bodylen, &code, &why)) == NULL) {
		reply_rpc_error(r, 400, code, why, NULL);
		return;
	}
	hv = http_header(r, "mcp-protocol-version");
	if (json_is_array(msg)) {
		/* Batches: 2025-03-26 sessions (and 2024-11-05, kindly). */
		if (http_header(r, "mcp-session-id") == NULL ||
		    (sess = named_session(r, peer)) == NULL ||
		    sess->version > MCP_V20250326) {
			if (sess != NULL || http_header(r,
			    "mcp-session-id") == NULL) {
				err = mcp_batch_refused();
				reply_json(r, 400, err, NULL);
				json_decref(err);
			}
			json_decref(msg);
			return;
		}
		post_dispatch(r, peer, sess, msg, 0, 1);
		json_decref(msg);
		return;
	}
	kind = rpc_classify(msg, &why);
	if (kind == RPC_INVALID) {
		reply_rpc_error(r, 400, RPC_INVALID_REQUEST, why, NULL);
		json_decref(msg);
		return;
	}
	modern = mcp_is_modern(msg, hv);
	method = json_string_value(json_object_get(msg, "method"));
	if (modern) {
		if (kind == RPC_RESPONSE) {
			reply_rpc_error(r, 400, RPC_INVALID_REQUEST, "Invalid "
			    "Request: MCP 2026-07-28 clients send no "
			    "responses", NULL);
			json_decref(msg);
			return;
		}
	} else if (kind == RPC_REQUEST && strcmp(method, "initialize") == 0) {
		if ((sess = session_new(MCP_T_HTTP, peer)) == NULL) {
			reply_rpc_error(r, 503, -32000, "Service Unavailable: "
			    "too many sessions; end some with DELETE", NULL);
			json_decref(msg);
			return;
		}
		hsess_new(sess);
	} else if ((sess = named_session(r, peer)) == NULL) {
		json_decref(msg);
		return;
	}
	post_dispatch(r, peer, sess, msg, modern, 0);
	json_decref(msg);
}

/* GET: resume a stream, or open the session's standalone stream. */
static void
mcp_get(struct http_req *r, const struct mcp_peer *peer)
{
	struct mcp_session	*sess;
	struct hsess		*hs;
	struct stream		*st;
	struct sse_event	*ev;
	const char		*last, *colon;
	uint64_t		 seq;
	char			 sid[17];

	if (!accepts(http_header(r, "accept"), "text/event-stream")) {
		reply_rpc_error(r, 406, -32000, "Not Acceptable: Accept must "
		    "list text/event-stream", NULL);
		return;
	}
	if (http_header(r, "mcp-session-id") == NULL &&
	    mcp_is_modern(NULL, http_header(r, "mcp-protocol-version"))) {
		reply_plain(r, 405, "Allow: POST\r\n", "MCP 2026-07-28 has no "
		    "GET stream; POST requests to this endpoint\n");
		return;
	}
	if ((sess = named_session(r, peer)) == NULL)
		return;
	hs = sess->tdata;
	session_touch(sess);
	if ((last = http_header(r, "last-event-id")) == NULL) {
		if (hs->get != NULL && hs->get->live != NULL) {
			reply_rpc_error(r, 409, -32000, "Conflict: this "
			    "session already has a GET stream open", NULL);
			return;
		}
		if (hs->get == NULL)
			hs->get = stream_new(hs, 1);
		hs->get->live = live_open(r, LIVE_STREAM, hs->get, NULL);
		stream_prime(hs->get);
		return;
	}
	colon = strchr(last, ':');
	if (colon == NULL || colon - last != 16 ||
	    str_to_u64(colon + 1, 0, UINT64_MAX, &seq) != NULL) {
		reply_rpc_error(r, 400, -32000, "Bad Request: malformed "
		    "Last-Event-ID", NULL);
		return;
	}
	memcpy(sid, last, 16);
	sid[16] = '\0';
	TAILQ_FOREACH(st, &hs->streams, entry)
		if (strcmp(st->id, sid) == 0)
			break;
	if (st == NULL || st->lost || seq > st->seq) {
		reply_rpc_error(r, 400, -32000, "Bad Request: this stream "
		    "cannot be resumed (unknown, expired or too large)",
		    NULL);
		return;
	}
	if (st->live != NULL) {
		reply_rpc_error(r, 409, -32000, "Conflict: this stream is "
		    "already being read", NULL);
		return;
	}
	st->live = live_open(r, LIVE_STREAM, st, NULL);
	TAILQ_FOREACH(ev, &st->events, entry)
		if (ev->seq > seq)
			live_write(st->live, ev->text, ev->len);
	if (st->finished) {
		live_close(st->live);
		st->live = NULL;
	}
}

static void
mcp_delete(struct http_req *r, const struct mcp_peer *peer)
{
	struct mcp_session	*sess;

	if (http_header(r, "mcp-session-id") == NULL &&
	    mcp_is_modern(NULL, http_header(r, "mcp-protocol-version"))) {
		reply_plain(r, 405, "Allow: POST\r\n", "MCP 2026-07-28 has no "
		    "sessions to end\n");
		return;
	}
	if ((sess = named_session(r, peer)) == NULL)
		return;
	session_end(sess, "deleted");
	http_reply(r, 200, NULL, NULL, NULL, 0);
}

/* --- 2024-11-05: GET /sse and POST /messages ------------------------- */

static void
sse_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	struct hsess	*hs = (struct hsess *)((char *)out -
			    offsetof(struct hsess, chan));
	char		*text;
	size_t		 len;

	if (hs->sse == NULL)
		return;
	text = event_text(NULL, msg, &len);
	live_write(hs->sse, text, len);
	free(text);
}

static const struct mcp_out_ops sse_ops = {
	.send = sse_send,
	.abandon = chan_abandon,
};

static void
sse_open(struct http_req *r, const struct mcp_peer *peer)
{
	struct mcp_session	*sess;
	struct hsess		*hs;
	char			*ep;

	if (!accepts(http_header(r, "accept"), "text/event-stream")) {
		reply_plain(r, 406, NULL, "Accept must list "
		    "text/event-stream\n");
		return;
	}
	if ((sess = session_new(MCP_T_SSE, peer)) == NULL) {
		reply_plain(r, 503, NULL, "too many sessions\n");
		return;
	}
	hs = hsess_new(sess);
	hs->chan.ops = &sse_ops;	/* everything goes on the one stream */
	hs->sse = live_open(r, LIVE_SSE, hs, NULL);
	xasprintf(&ep, "event: endpoint\ndata: /messages?sessionId=%s\n\n",
	    sess->id);
	live_write(hs->sse, ep, strlen(ep));
	free(ep);
	log_debug("%s: SSE session %s opened", peer->desc, sess->id);
}

static void
sse_post(struct http_req *r, const struct mcp_peer *peer)
{
	struct mcp_session	*sess;
	struct mcp_input	 in;
	char			 id[SESS_ID_MAX + 2], gone[160], line[164];
	const char		*why;
	json_t			*msg;
	int			 code;

	if (http_query(r, "sessionId", id, sizeof(id)) == NULL) {
		reply_plain(r, 400, NULL, "the sessionId parameter is "
		    "missing\n");
		return;
	}
	if ((sess = session_find(id)) == NULL ||
	    sess->transport != MCP_T_SSE ||
	    !mcp_peer_same(&sess->peer, peer)) {
		if (host_of(id, NULL, 0) == -1) {
			snprintf(line, sizeof(line), "%s\n",
			    session_gone(id, gone, sizeof(gone)));
			reply_plain(r, 404, NULL, line);
		} else
			reply_plain(r, 404, NULL, "no such session\n");
		return;
	}
	if (!content_json(http_header(r, "content-type"))) {
		reply_plain(r, 415, NULL, "Content-Type must be "
		    "application/json\n");
		return;
	}
	if ((msg = rpc_parse(r->body, r->bodylen, &code, &why)) == NULL) {
		reply_plain(r, 400, NULL, "the body is not JSON\n");
		return;
	}
	memset(&in, 0, sizeof(in));
	in.transport = MCP_T_SSE;
	in.sess = sess;
	in.peer = peer;
	in.out = &((struct hsess *)sess->tdata)->chan;
	session_ref(sess);
	if (json_is_array(msg))
		mcp_input_batch(&in, msg);
	else
		mcp_input(&in, msg);
	session_unref(sess);
	json_decref(msg);
	reply_plain(r, 202, NULL, "Accepted");
}

/* --- Routing --------------------------------------------------------- */

/*
 * /metrics: a metrics token, a client of a metrics tenant, or root on a
 * unix socket (the administrator, who could read mcpd's memory anyway);
 * -1 once refused.
 */
static int
metrics_admit(struct http_req *r)
{
	const char	*auth = http_header(r, "authorization");
	struct mcp_peer	 peer;
	uint8_t		 hash[32];

	if (auth == NULL && r->has_cred && r->uid == 0)
		return 0;
	if (auth != NULL && bearer_hash(r, auth, hash) == 0 &&
	    policy_metrics_token(h.conf, hash))
		return 0;
	if (authenticate(r, &peer) == -1)
		return -1;
	if (policy_metrics_tenant(h.conf, peer.tenant))
		return 0;
	auth_failed(r, MX_AUTH_FORBIDDEN, "a tenant not allowed to read "
	    "/metrics");
	reply_plain(r, 403, NULL, "Forbidden: this tenant may not read "
	    "/metrics (see \"metrics\" in mcpd.conf(5))\n");
	return -1;
}

/*
 * /healthz and /metrics take GET and HEAD with no body.  head: this is
 * the head of a request with a body, which is refused before it is read.
 */
static void
observe(struct http_req *r, int head)
{
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0)
		reply_plain(r, 405, "Allow: GET, HEAD\r\n",
		    "method not allowed\n");
	else if (head)
		reply_plain(r, 400, NULL, "this endpoint takes no body\n");
	else if (strcmp(r->path, "/healthz") == 0)
		observe_healthz(r);	/* anyone who passed Host and Origin */
	else if (metrics_admit(r) == 0)
		observe_metrics(r);
}

/*
 * The protected resource metadata (RFC 9728): public, and for any origin,
 * as a client in a browser reads it before it has a token.  Its
 * preflight is answered too (the SDK sends MCP-Protocol-Version).
 */
static void
resource_metadata(struct http_req *r, int head)
{
	const char	*doc = oauth_metadata();

	if (strcmp(r->method, "OPTIONS") == 0)
		http_reply(r, 204, NULL, "Access-Control-Allow-Origin: *\r\n"
		    "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
		    "Access-Control-Allow-Headers: mcp-protocol-version\r\n"
		    "Access-Control-Max-Age: 86400\r\n", NULL, 0);
	else if (strcmp(r->method, "GET") != 0 &&
	    strcmp(r->method, "HEAD") != 0)
		reply_plain(r, 405, "Allow: GET, HEAD, OPTIONS\r\n",
		    "method not allowed\n");
	else if (head)
		reply_plain(r, 400, NULL, "this endpoint takes no body\n");
	else
		http_reply(r, 200, "application/json",
		    "Access-Control-Allow-Origin: *\r\n"
		    "Cache-Control: max-age=300\r\n", doc, strlen(doc));
}

static void
host_refused(struct http_req *r)
{
	const char	*host = http_header(r, "host");
	const char	*origin = http_header(r, "origin");
	char		 p[96], hq[128], oq[128];

	metrics_error(MX_E_HOST);
	log_info("host_refused peer=%s host=%s origin=%s",
	    log_value(r->peer, p, sizeof(p)),
	    host != NULL ? log_value(host, hq, sizeof(hq)) : "-",
	    origin != NULL ? log_value(origin, oq, sizeof(oq)) : "-");
	reply_rpc_error(r, 403, -32000, "Forbidden: this Host or Origin is "
	    "not allowed", NULL);
}

/*
 * Where this request came: the links sandbox_share_file makes point
 * there, unless mcpd.conf names another ("share url").  Host passed
 * host_allowed(), so it is a name this server answers to.
 */
static void
peer_origin(const struct http_req *r, struct mcp_peer *peer)
{
	const char	*host = http_header(r, "host");

	if (host != NULL && strlen(host) < sizeof(peer->origin) - 10 &&
	    strcspn(host, "/?#@\\ \t\"<>") == strlen(host))
		snprintf(peer->origin, sizeof(peer->origin), "%s://%s",
		    r->scheme != NULL ? r->scheme : r->tls ? "https" : "http",
		    host);
}

/* Is the socket's peer, an address with no port, an "allow proxy"? */
static int
proxy_allowed(const char *addr)
{
	const struct policy	*conf = h.conf;
	uint8_t			 a[16], n[16];
	char			 net[INET6_ADDRSTRLEN + 8], *slash;
	int			 af;
	size_t			 i;
	long			 bits, j;

	/* An IPv4 peer of a listener on [::] is ::ffff:a.b.c.d. */
	if (strncasecmp(addr, "::ffff:", 7) == 0 && strchr(addr, '.') != NULL)
		addr += 7;
	af = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(af, addr, a) != 1)
		return 0;
	for (i = 0; i < conf->nallow_proxies; i++) {
		str_copy(net, conf->allow_proxies[i], sizeof(net));
		if ((slash = strchr(net, '/')) == NULL)
			continue;
		*slash = '\0';
		bits = strtol(slash + 1, NULL, 10);
		if ((strchr(net, ':') != NULL) != (af == AF_INET6) ||
		    inet_pton(af, net, n) != 1)
			continue;
		for (j = 0; j < bits; j++)
			if (((a[j / 8] ^ n[j / 8]) >> (7 - j % 8)) & 1)
				break;
		if (j == bits)
			return 1;
	}
	return 0;
}

/*
 * Behind a balancer of "allow proxy", the client it names and the scheme
 * it was reached by.  Of X-Forwarded-For, only the address the balancer
 * added counts, the last of the last header: any before it are the
 * client's own word.  From anyone else the headers are nothing.
 */
static void
forwarded(struct http_req *r)
{
	const char	*v, *p;
	char		 ip[INET6_ADDRSTRLEN];
	char		 via[INET6_ADDRSTRLEN + 5 + sizeof(r->peer)];
	uint8_t		 a[16];
	size_t		 n;

	if (r->forwarded)
		return;
	r->forwarded = 1;
	if (r->addr[0] == '\0' || h.conf->nallow_proxies == 0 ||
	    !proxy_allowed(r->addr))
		return;
	v = http_header_last(r, "x-forwarded-proto");
	if (v != NULL && strcasecmp(v, "https") == 0)
		r->scheme = "https";
	else if (v != NULL && strcasecmp(v, "http") == 0)
		r->scheme = "http";
	if ((v = http_header_last(r, "x-forwarded-for")) == NULL)
		return;
	if ((p = strrchr(v, ',')) != NULL)
		v = p + 1;
	v += strspn(v, " \t");
	n = strcspn(v, " \t");
	if (n == 0 || n >= sizeof(ip) || v[n + strspn(v + n, " \t")] != '\0')
		return;
	memcpy(ip, v, n);
	ip[n] = '\0';
	if (inet_pton(AF_INET, ip, a) != 1 && inet_pton(AF_INET6, ip, a) != 1)
		return;
	snprintf(via, sizeof(via), "%s via %s", ip, r->peer);
	str_copy(r->peer, via, sizeof(r->peer));
}

/* Host and Origin, the path, the credentials: -1 once answered. */
static int
httpd_admit(struct http_req *r, struct mcp_peer *peer, int head)
{
	forwarded(r);
	if (oauth_metadata_path(r->path) &&
	    host_allowed(http_header(r, "host"))) {
		resource_metadata(r, head);
		return -1;
	}
	if (links_path(r->path)) {
		/*
		 * The link is the credential, for anyone who has it: no
		 * Host or Origin proves more (a rebinding page knows no
		 * token), and "share url" may name a proxy's host.
		 */
		if (head)
			reply_plain(r, 400, NULL, "a download takes no "
			    "body\n");
		else
			links_serve(r);
		return -1;
	}
	if (!host_allowed(http_header(r, "host")) ||
	    !origin_allowed(http_header(r, "origin")) ||
	    http_header_count(r, "origin") > 1) {
		host_refused(r);
		return -1;
	}
	if (strcmp(r->path, "/healthz") == 0 ||
	    strcmp(r->path, "/metrics") == 0) {
		observe(r, head);
		return -1;
	}
	if (strcmp(r->path, "/mcp") != 0 && strcmp(r->path, "/sse") != 0 &&
	    strcmp(r->path, "/messages") != 0 && strcmp(r->path, "/ws") != 0) {
		if (strcmp(r->path, "/") == 0 && strcmp(r->method, "GET") ==
		    0)
			reply_plain(r, 200, NULL, "mcpd " MCPD_VERSION ": the "
			    "MCP endpoint is /mcp (Streamable HTTP); "
			    "2024-11-05 clients use /sse\n");
		else
			reply_plain(r, 404, NULL, "not found; the MCP "
			    "endpoint is /mcp\n");
		return -1;
	}
	if (authenticate(r, peer) == -1)
		return -1;
	peer_origin(r, peer);
	return 0;
}

/*
 * The head of a request with a body: only a client that would be served
 * gets its body read and kept.  Anyone may send a head; a body of up to
 * 32 MiB on each of hundreds of connections is for tenants alone.
 */
static void
httpd_head(struct http_req *r, void *arg)
{
	struct mcp_peer	 peer;

	(void)httpd_admit(r, &peer, 1);
}

static void
httpd_handle(struct http_req *r, void *arg)
{
	struct mcp_peer	 peer;
	int		 is_mcp, is_sse, is_msg;

	if (httpd_admit(r, &peer, 0) == -1)
		return;
	is_mcp = strcmp(r->path, "/mcp") == 0;
	is_sse = strcmp(r->path, "/sse") == 0;
	is_msg = strcmp(r->path, "/messages") == 0;
	if (strcmp(r->path, "/ws") == 0 || (is_mcp && websocket_wanted(r)))
		websocket_open(r, &peer);
	else if (is_mcp && strcmp(r->method, "POST") == 0)
		mcp_post(r, &peer);
	else if (is_mcp && strcmp(r->method, "GET") == 0)
		mcp_get(r, &peer);
	else if (is_mcp && strcmp(r->method, "DELETE") == 0)
		mcp_delete(r, &peer);
	else if (is_sse && strcmp(r->method, "GET") == 0)
		sse_open(r, &peer);
	else if (is_msg && strcmp(r->method, "POST") == 0)
		sse_post(r, &peer);
	else
		reply_plain(r, 405, is_mcp ? "Allow: GET, POST, DELETE\r\n" :
		    is_sse ? "Allow: GET\r\n" : "Allow: POST\r\n",
		    "method not allowed\n");
}

void
httpd_start(struct event_base *base, const struct policy *conf,
    const struct httpd_socket *socks, int nsocks)
{
	struct http_settings	 set;
	struct timeval		 tv = { KEEPALIVE_S, 0 };
	struct lsock		*ls;
	int			 i;

	h.conf = conf;
	TAILQ_INIT(&h.lives);
	memset(&set, 0, sizeof(set));
	set.head = httpd_head;
	set.max_body = mcpd_max_message;
	set.max_conns = HTTPD_MAX_CONNS;
	set.head_timeout = 10;
	set.body_timeout = 60;
	set.idle_timeout = 120;
	set.max_queued = 32 * 1024 * 1024;
	set.status = metrics_http_status;
	set.tls_context = tls_context;
	h.srv = http_server_new(base, &set, httpd_handle, NULL);
	h.socks = xcalloc((size_t)nsocks, sizeof(*h.socks));
	h.nsocks = nsocks;
	for (i = 0; i < nsocks; i++) {
		ls = &h.socks[i];
		ls->la = socks[i].la;
		ls->is_unix = socks[i].is_unix;
		str_copy(ls->name, socks[i].name, sizeof(ls->name));
		if (ls->la != NULL && ls->la->tenant[0] != '\0')
			ls->open = policy_tenant(conf, ls->la->tenant);
		if (http_server_listen(h.srv, socks[i].fd, ls,
		    ls->la != NULL && ls->la->tls) == -1)
			fatalx("cannot serve HTTP on %s", ls->name);
		log_info("serving MCP on %s%s%s%s", ls->name,
		    ls->la != NULL && ls->la->tls ? " with TLS" : "",
		    ls->open != NULL ? " as tenant " : "",
		    ls->open != NULL ? ls->open->name : "");
	}
	if ((h.ev_keepalive = evtimer_new(base, keepalive_cb, NULL)) == NULL)
		fatalx("cannot create the keep-alive timer");
	evtimer_add(h.ev_keepalive, &tv);
}

/*
 * Does what proved a session's client still prove the same tenant?  A
 * token must still be that tenant's, a uid still map to it; a listener's
 * tenant only must not be gone (its statement changes with a restart).
 */
static int
peer_holds(const struct mcp_peer *p)
{
	unsigned int	 uid;
	char		 end;

	if (p->tenant == NULL || p->tenant->gone)
		return 0;
	if (strncmp(p->cred, "token:", 6) == 0)
		return policy_tenant_by_token(h.conf, p->principal) ==
		    p->tenant;
	if (sscanf(p->cred, "uid:%u%c", &uid, &end) == 1)
		return policy_tenant_by_uid(h.conf, (uid_t)uid) == p->tenant;
	return 1;
}

static void
reload_session(struct mcp_session *sess, void *arg)
{
	unsigned int	*n = arg;

	if (peer_holds(&sess->peer))
		return;
	session_end(sess, "revoked");
	(*n)++;
}

void
httpd_reloaded(void)
{
	char		 err[PATH_MAX + 256];
	unsigned int	 n = 0;
	int		 i;

	/* A renewed certificate, for the connections from now on. */
	if (tls_context() != NULL) {
		if (tls_load(h.conf, err, sizeof(err)) == -1)
			log_warnx("reload: %s: the certificate served stays",
			    err);
		else
			log_info("reload: TLS certificate and key read again");
	}

	for (i = 0; i < h.nsocks; i++)
		if (h.socks[i].open != NULL && h.socks[i].open->gone)
			log_warnx("%s: tenant %s was removed: requests "
			    "there without a token are refused", h.socks[i].name,
			    h.socks[i].open->name);
	/*
	 * A session whose credential the file took away ends now, open
	 * event streams with it, rather than at its next request.
	 */
	session_foreach(reload_session, &n);
	if (n > 0)
		log_info("reload: %u session%s ended, their credentials "
		    "revoked", n, n == 1 ? "" : "s");
}

unsigned int
httpd_conns(void)
{
	return h.srv != NULL ? http_server_conns(h.srv) : 0;
}

void
httpd_stop(void)
{
	if (h.srv == NULL)
		return;
	http_server_free(h.srv);
	h.srv = NULL;
	if (h.ev_keepalive != NULL)
		event_free(h.ev_keepalive);
	free(h.socks);
}
