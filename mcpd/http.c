/*
 * HTTP/1.1 server: see http.h.
 *
 * One request per connection at a time.  The head is parsed line by line
 * and refused at the first thing a lenient server might read two ways
 * (the stuff request smuggling is made of): a header name with spaces, a
 * folded line, a bare CR, Content-Length given twice or beside
 * Transfer-Encoding, any transfer coding but chunked.  The head and the
 * body each have a deadline, so a client trickling bytes cannot hold a
 * connection; while a reply is open the connection keeps reading, only to
 * notice the client leaving.  A request refused from its head has its body
 * read and dropped: a stranger cannot make us keep 32 MiB per connection.
 *
 * A connection the handler upgrades to a WebSocket reads frames from then
 * on (ws.c checks each byte of them); pings go out every HTTP_WS_PING_S
 * seconds and a peer silent for two of them is let go.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "http.h"
#include "log.h"
#include "sock.h"
#include "util.h"
#include "ws.h"

enum hstate {
	H_IDLE,			/* between requests */
	H_HEAD,
	H_BODY,			/* Content-Length */
	H_CHUNK_SIZE,
	H_CHUNK_DATA,
	H_CHUNK_END,		/* the CRLF after a chunk */
	H_TRAILER,
	H_HANDLING,		/* the handler has the request */
	H_CLOSING,		/* flushing, then close */
	H_WS,			/* a WebSocket */
};

struct http_ws {
	struct http_conn	*conn;
	struct ws_parser	 parser;
	const struct http_ws_ops *ops;
	void			*arg;
	uint64_t		 last_rx;	/* mono_ms() of the last frame */
	int			 close_sent;
	char			 peer[64];
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	struct http_server	*srv;
	struct bufferevent	*bev;
	struct event		*ev_timer;
	enum hstate		 state;
	struct http_req		*req;
	size_t			 headbytes;
	size_t			 left;		/* body or chunk bytes left */
	size_t			 bodycap;	/* a chunked body's room */
	int			 keepalive;
	int			 http10;
	int			 discard;	/* answered: drop the body */
	int			 finishing;	/* a reply is on its way */
	int			 dropping;	/* closing from the loop */
	char			 peer[64];
	char			 addr[INET6_ADDRSTRLEN];	/* "": unix */
	void			*larg;		/* its listener's */
	int			 has_cred;	/* unix socket: peer creds */
	uid_t			 uid;
	int			 tls;
	struct http_ws		*ws;		/* after an upgrade */
};

struct http_server {
	struct event_base	*base;
	struct http_settings	 set;
	http_handler_fn		 handler;
	void			*arg;
	TAILQ_HEAD(, http_conn)	 conns;
	unsigned int		 nconns;
	struct evconnlistener	*listeners[16];
	void			*largs[16];
	int			 ltls[16];	/* the listener's is HTTPS */
	int			 nlisteners;
};

/* A pulled body is asked for more below BODY_LOW queued, up to HIGH. */
#define BODY_LOW	(64 * 1024)
#define BODY_HIGH	(256 * 1024)

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_write_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);
static void	conn_parse(struct http_conn *);

static const struct {
	int		 code;
	const char	*text;
} statuses[] = {
	{ 101, "Switching Protocols" },
	{ 200, "OK" }, { 202, "Accepted" }, { 204, "No Content" },
	{ 206, "Partial Content" },
	{ 400, "Bad Request" }, { 401, "Unauthorized" },
	{ 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 406, "Not Acceptable" },
	{ 408, "Request Timeout" }, { 409, "Conflict" },
	{ 410, "Gone" },
	{ 411, "Length Required" }, { 413, "Content Too Large" },
	{ 414, "URI Too Long" }, { 415, "Unsupported Media Type" },
	{ 416, "Range Not Satisfiable" },
	{ 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
	{ 503, "Service Unavailable" }, { 505, "HTTP Version Not Supported" },
};

const char *
http_status_text(int code)
{
	size_t	 i;

	for (i = 0; i < nitems(statuses); i++)
		if (statuses[i].code == code)
			return statuses[i].text;
	return "Unknown";
}

static void
req_free(struct http_req *req)
{
	int	 i;

	if (req == NULL)
		return;
	free(req->method);
	free(req->target);
	free(req->path);
	free(req->query);
	for (i = 0; i < req->nheaders; i++) {
		free(req->headers[i].name);
		free(req->headers[i].value);
	}
	free(req->body);
	free(req);
}

static void
conn_timer(struct http_conn *c, unsigned int secs)
{
	struct timeval	 tv = { secs, 0 };

	if (secs == 0)
		evtimer_del(c->ev_timer);
	else
		evtimer_add(c->ev_timer, &tv);
}

static void
conn_free(struct http_conn *c)
{
	struct http_req	*req = c->req;

	TAILQ_REMOVE(&c->srv->conns, c, entry);
	c->srv->nconns--;
	if (c->ws != NULL) {
		/* Its owner hears of the end once, then it is gone. */
		c->ws->conn = NULL;
		c->ws->ops->closed(c->ws, c->ws->arg);
		ws_parser_free(&c->ws->parser);
		free(c->ws);
		c->ws = NULL;
	}
	c->req = NULL;
	if (req != NULL) {
		if (c->state == H_HANDLING &&
		    (!req->responding || req->streaming)) {
			/* The handler still holds it: tell it; it frees. */
			req->conn = NULL;
			if (req->gone != NULL)
				req->gone(req);
		} else
			req_free(req);
	}
	event_free(c->ev_timer);
	bufferevent_free(c->bev);
	free(c);
}

/* Close once what is queued has left. */
static void
conn_close_queued(struct http_conn *c)
{
	c->keepalive = 0;
	c->state = H_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_free(c);
	else
		conn_timer(c, 5);
}

/* A reply we make ourselves, ending the connection after it. */
static void
conn_error(struct http_conn *c, int code, const char *why)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	char		 body[256];
	int		 n;

	log_debug("http %s: %d %s", c->peer, code, why);
	if (c->discard) {
		/* It has its answer; its body was only being dropped. */
		conn_close_queued(c);
		return;
	}
	if (c->srv->set.status != NULL)
		c->srv->set.status(code);
	n = snprintf(body, sizeof(body), "%d %s: %s\n", code,
	    http_status_text(code), why);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: text/plain"
	    "\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", code,
	    http_status_text(code), n);
	evbuffer_add(out, body, (size_t)n);
	if (c->req != NULL && c->state != H_HANDLING) {
		req_free(c->req);
		c->req = NULL;
	}
	c->state = H_CLOSING;
	conn_timer(c, 5);
	bufferevent_disable(c->bev, EV_READ);
}

static void	ws_tick(struct http_conn *);

static void
conn_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c = arg;

	if (c->dropping) {
		conn_free(c);
		return;
	}
	if (c->state == H_HANDLING && c->req != NULL &&
	    c->req->pull != NULL) {
		log_info("http %s: the client took nothing for %d s, dropping "
		    "the download", c->peer, HTTP_BODY_STALL_S);
		conn_free(c);
		return;
	}
	switch (c->state) {
	case H_WS:
		ws_tick(c);
		break;
	case H_IDLE:
	case H_CLOSING:
		conn_free(c);
		break;
	case H_HEAD:
		conn_error(c, 408, "the request head took too long");
		break;
	default:
		conn_error(c, 408, "the request body took too long");
		break;
	}
}

static int
token_char(int ch)
{
	return ch > 0x20 && ch < 0x7f && strchr("\"(),/:;<=>?@[\\]{}", ch) ==
	    NULL;
}

static int
hex_digit(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* Percent-decode; NUL bytes and bad escapes refused. */
static int
pct_decode(const char *in, size_t len, char *out, size_t outlen, int plus)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (o + 1 >= outlen)
			return -1;
		if (in[i] == '%') {
			if (len - i < 3 || (hi = hex_digit(in[i + 1])) == -1 ||
			    (lo = hex_digit(in[i + 2])) == -1 ||
			    (hi == 0 && lo == 0))
				return -1;
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else if (plus && in[i] == '+')
			out[o++] = ' ';
		else
			out[o++] = in[i];
	}
	out[o] = '\0';
	return 0;
}

static int
parse_request_line(struct http_conn *c, char *line)
{
	struct http_req	*req = c->req;
	char		*sp1, *sp2, *q;
	size_t		 n;

	if ((sp1 = strchr(line, ' ')) == NULL ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL || strchr(sp2 + 1, ' '))
		return -1;
	*sp1 = *sp2 = '\0';
	for (q = line; *q != '\0'; q++)
		if (!token_char((unsigned char)*q))
			return -1;
	c->http10 = strcmp(sp2 + 1, "HTTP/1.0") == 0;
	if (strcmp(sp2 + 1, "HTTP/1.1") == 0)
		c->keepalive = 1;
	else if (c->http10)
		c->keepalive = 0;
	else
		return -2;
	if (line[0] == '\0' || sp1[1] != '/')
		return -1;
	for (q = sp1 + 1; *q != '\0'; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return -1;
	req->method = xstrdup(line);
	req->target = xstrdup(sp1 + 1);
	q = strchr(req->target, '?');
	n = q != NULL ? (size_t)(q - req->target) : strlen(req->target);
	if (q != NULL)
		req->query = xstrdup(q + 1);
	req->path = xmalloc(n + 1);
	if (pct_decode(req->target, n, req->path, n + 1, 0) == -1)
		return -1;
	return 0;
}

static int
parse_header(struct http_conn *c, char *line)
{
	struct http_req	*req = c->req;
	char		*colon, *v, *end, *p;

	if (line[0] == ' ' || line[0] == '\t')
		return -1;		/* obsolete line folding */
	if ((colon = strchr(line, ':')) == NULL || colon == line)
		return -1;
	for (p = line; p < colon; p++)
		if (!token_char((unsigned char)*p))
			return -1;	/* also: space before the colon */
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	for (p = v; *p != '\0'; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
			return -1;
	if (req->nheaders == HTTP_MAX_HEADERS)
		return -3;
	for (p = line; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	req->headers[req->nheaders].name = xstrdup(line);
	req->headers[req->nheaders].value = xstrdup(v);
	req->nheaders++;
	return 0;
}

const char *
http_header(const struct http_req *req, const char *name)
{
	int	 i;

	for (i = 0; i < req->nheaders; i++)
		if (strcmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	return NULL;
}

/* The last of a header's values: the one a proxy in front appended. */
const char *
http_header_last(const struct http_req *req, const char *name)
{
	int	 i;

	for (i = req->nheaders - 1; i >= 0; i--)
		if (strcmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	return NULL;
}

int
http_header_count(const struct http_req *req, const char *name)
{
	int	 i, n = 0;

	for (i = 0; i < req->nheaders; i++)
		n += strcmp(req->headers[i].name, name) == 0;
	return n;
}

const char *
http_query(const struct http_req *req, const char *name, char *buf,
    size_t len)
{
	const char	*p, *amp, *eq;
	size_t		 nlen = strlen(name);

	for (p = req->query; p != NULL && *p != '\0'; p = amp + 1) {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq != NULL && (size_t)(eq - p) == nlen &&
		    strncmp(p, name, nlen) == 0)
			return pct_decode(eq + 1, (size_t)(amp - eq - 1), buf,
			    len, 1) == 0 ? buf : NULL;
		if (*amp == '\0')
			break;
	}
	return NULL;
}

/* What the handler learns of the connection with a request. */
static void
conn_bind(struct http_conn *c)
{
	struct http_req	*req = c->req;

	req->conn = c;
	str_copy(req->peer, c->peer, sizeof(req->peer));
	str_copy(req->addr, c->addr, sizeof(req->addr));
	req->larg = c->larg;
	req->tls = c->tls;
	req->has_cred = c->has_cred;
	req->uid = c->uid;
}

/*
 * A body is coming: the handler may refuse the request from its head.
 * Then the body is read only to be dropped, and the connection ends with
 * it (the reply says so): nothing of it is kept, nothing after it read,
 * and it gets no longer than a head would to come.
 */
static void
conn_head_check(struct http_conn *c)
{
	int	 keepalive = c->keepalive;

	if (c->srv->set.head == NULL)
		return;
	conn_bind(c);
	c->keepalive = 0;
	c->srv->set.head(c->req, c->srv->arg);
	if (c->req->responding) {
		c->discard = 1;
		conn_timer(c, c->srv->set.head_timeout);
	} else
		c->keepalive = keepalive;
}

/* The head is whole: decide how the body comes. */
static int
head_done(struct http_conn *c)
{
	struct http_req	*req = c->req;
	const char	*cl, *te, *conn;
	uint64_t	 len;

	if (http_header_count(req, "host") != 1 && c->keepalive) {
		conn_error(c, 400, "one Host header is required");
		return -1;
	}
	te = http_header(req, "transfer-encoding");
	cl = http_header(req, "content-length");
	if (te != NULL && cl != NULL) {
		conn_error(c, 400, "both Content-Length and Transfer-Encoding");
		return -1;
	}
	if (http_header_count(req, "content-length") > 1 ||
	    http_header_count(req, "transfer-encoding") > 1) {
		conn_error(c, 400, "a framing header given twice");
		return -1;
	}
	if ((conn = http_header(req, "connection")) != NULL) {
		if (strcasecmp(conn, "close") == 0)
			c->keepalive = 0;
		else if (strcasecmp(conn, "keep-alive") == 0)
			c->keepalive = 1;
	}
	if (te != NULL) {
		if (strcasecmp(te, "chunked") != 0) {
			conn_error(c, 501, "only chunked transfer coding");
			return -1;
		}
		/* RFC 9112, 6.1: HTTP/1.0 framing with it is suspect. */
		if (c->http10)
			c->keepalive = 0;
		c->state = H_CHUNK_SIZE;
		conn_timer(c, c->srv->set.body_timeout);
		conn_head_check(c);
		return 0;
	}
	if (cl != NULL) {
		if (str_to_u64(cl, 0, UINT64_MAX, &len) != NULL) {
			conn_error(c, 400, "bad Content-Length");
			return -1;
		}
		if (len > c->srv->set.max_body) {
			conn_error(c, 413, "body too large");
			return -1;
		}
		if (len > 0) {
			c->left = (size_t)len;
			c->state = H_BODY;
			conn_timer(c, c->srv->set.body_timeout);
			conn_head_check(c);
			if (!c->discard)
				req->body = xmalloc(c->left + 1);
			return 0;
		}
	}
	return 1;		/* no body */
}

static void
conn_dispatch(struct http_conn *c)
{
	struct http_req	*req = c->req;

	if (c->discard) {
		/* Its answer is out or on its way: only the end is left. */
		conn_close_queued(c);
		return;
	}
	c->state = H_HANDLING;
	conn_timer(c, 0);
	if (req->body != NULL)
		req->body[req->bodylen] = '\0';
	conn_bind(c);
	c->srv->handler(req, c->srv->arg);
}

/* A line from the input, without its end; NULL if not whole yet. */
static char *
conn_line(struct http_conn *c, struct evbuffer *in, int *toolong)
{
	struct evbuffer_ptr	 p;
	size_t			 len;
	char			*line;

	*toolong = 0;
	p = evbuffer_search_eol(in, NULL, &len, EVBUFFER_EOL_CRLF);
	if (p.pos == -1) {
		if (evbuffer_get_length(in) > HTTP_MAX_LINE)
			*toolong = 1;
		return NULL;
	}
	if ((size_t)p.pos > HTTP_MAX_LINE) {
		*toolong = 1;
		return NULL;
	}
	line = xmalloc((size_t)p.pos + 1);
	evbuffer_remove(in, line, (size_t)p.pos);
	line[p.pos] = '\0';
	evbuffer_drain(in, len);
	c->headbytes += (size_t)p.pos + len;
	/* A NUL would end the line early for every later reader. */
	if (memchr(line, '\0', (size_t)p.pos) != NULL) {
		free(line);
		*toolong = 2;
		return NULL;
	}
	return line;
}

static int
conn_head(struct http_conn *c, struct evbuffer *in)
{
	char	*line;
	int	 toolong, r;

	while ((line = conn_line(c, in, &toolong)) != NULL) {
		if (c->headbytes > HTTP_MAX_HEAD) {
			free(line);
			conn_error(c, 431, "request head too large");
			return -1;
		}
		if (memchr(line, '\r', strlen(line)) != NULL) {
			free(line);
			conn_error(c, 400, "bare CR in the head");
			return -1;
		}
		if (c->req->method == NULL) {
			if (line[0] == '\0' && c->headbytes <= 2) {
				/* Tolerated: an empty line before a request. */
				c->headbytes = 0;
				free(line);
				continue;
			}
			r = parse_request_line(c, line);
			free(line);
			if (r == -2) {
				conn_error(c, 505, "HTTP/1.1 or 1.0 only");
				return -1;
			}
			if (r == -1) {
				conn_error(c, 400, "malformed request line");
				return -1;
			}
			continue;
		}
		if (line[0] == '\0') {
			free(line);
			return head_done(c);
		}
		r = parse_header(c, line);
		free(line);
		if (r == -3) {
			conn_error(c, 431, "too many headers");
			return -1;
		}
		if (r == -1) {
			conn_error(c, 400, "malformed header");
			return -1;
		}
	}
	if (toolong == 2) {
		conn_error(c, 400, "a NUL byte in the head");
		return -1;
	}
	if (toolong) {
		conn_error(c, c->req->method == NULL ? 414 : 431,
		    "line too long");
		return -1;
	}
	return 2;		/* need more */
}

static int
conn_chunk_size(struct http_conn *c, struct evbuffer *in)
{
	char		*line, *semi, *end;
	unsigned long	 n;
	int		 toolong;

	if ((line = conn_line(c, in, &toolong)) == NULL) {
		if (toolong)
			conn_error(c, 400, "malformed chunk size");
		return toolong ? -1 : 2;
	}
	if ((semi = strchr(line, ';')) != NULL)
		*semi = '\0';	/* extensions are ignored */
	errno = 0;
	n = strtoul(line, &end, 16);
	/* Hex digits alone: strtoul would also take "0x", spaces, a sign. */
	if (line[0] == '\0' || *end != '\0' || errno != 0 ||
	    strspn(line, "0123456789abcdefABCDEF") != strlen(line) ||
	    strlen(line) > 16) {
		free(line);
		conn_error(c, 400, "malformed chunk size");
		return -1;
	}
	free(line);
	if (n > c->srv->set.max_body - c->req->bodylen) {
		conn_error(c, 413, "body too large");
		return -1;
	}
	if (n == 0) {
		c->state = H_TRAILER;
		return 0;
	}
	if (!c->discard && c->req->bodylen + n + 1 > c->bodycap) {
		/* Doubling: many small chunks cost no more than one. */
		c->bodycap = c->bodycap * 2 > c->req->bodylen + n + 1 ?
		    c->bodycap * 2 : c->req->bodylen + n + 1;
		if (c->bodycap > c->srv->set.max_body + 1)
			c->bodycap = c->srv->set.max_body + 1;
		c->req->body = xreallocarray(c->req->body, c->bodycap, 1);
	}
	c->left = n;
	c->state = H_CHUNK_DATA;
	return 0;
}

static void	ws_read(struct http_conn *);

static void
conn_parse(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	size_t		 n;
	char		*line;
	int		 r, toolong;

	for (;;) {
		switch (c->state) {
		case H_IDLE:
			if (evbuffer_get_length(in) == 0)
				return;
			c->req = xcalloc(1, sizeof(*c->req));
			c->headbytes = 0;
			c->bodycap = 0;
			c->state = H_HEAD;
			conn_timer(c, c->srv->set.head_timeout);
			break;
		case H_HEAD:
			if ((r = conn_head(c, in)) == -1 || r == 2)
				return;
			if (r == 1) {
				conn_dispatch(c);
				return;
			}
			break;
		case H_BODY:
		case H_CHUNK_DATA:
			if ((n = evbuffer_get_length(in)) == 0)
				return;
			if (n > c->left)
				n = c->left;
			if (c->discard)
				evbuffer_drain(in, n);
			else
				evbuffer_remove(in, c->req->body +
				    c->req->bodylen, n);
			c->req->bodylen += n;
			c->left -= n;
			if (c->left > 0)
				return;
			if (c->state == H_BODY) {
				conn_dispatch(c);
				return;
			}
			c->state = H_CHUNK_END;
			break;
		case H_CHUNK_END:
			if ((line = conn_line(c, in, &toolong)) == NULL) {
				if (toolong || evbuffer_get_length(in) > 2)
					conn_error(c, 400, "malformed chunk");
				return;
			}
			r = line[0] == '\0';
			free(line);
			if (!r) {
				conn_error(c, 400, "malformed chunk");
				return;
			}
			c->state = H_CHUNK_SIZE;
			break;
		case H_CHUNK_SIZE:
			if ((r = conn_chunk_size(c, in)) != 0)
				return;
			break;
		case H_TRAILER:
			/* Trailers are read and dropped. */
			if ((line = conn_line(c, in, &toolong)) == NULL) {
				if (toolong)
					conn_error(c, 431, "trailer too long");
				return;
			}
			r = line[0] == '\0';
			free(line);
			if (c->headbytes > HTTP_MAX_HEAD * 2) {
				conn_error(c, 431, "trailers too large");
				return;
			}
			if (r) {
				conn_dispatch(c);
				return;
			}
			break;
		case H_HANDLING:
			/* Pipelined bytes wait, within reason. */
			if (evbuffer_get_length(in) > HTTP_MAX_HEAD)
				bufferevent_disable(c->bev, EV_READ);
			return;
		case H_CLOSING:
			evbuffer_drain(in, evbuffer_get_length(in));
			return;
		case H_WS:
			ws_read(c);
			return;
		}
	}
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	conn_parse(arg);
}

/* The reply left: next request, or close. */
static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;

	if (c->state == H_CLOSING) {
		conn_free(c);
		return;
	}
	if (c->state == H_HANDLING && c->req != NULL &&
	    c->req->pull != NULL && c->req->body_left > 0 && !c->dropping) {
		/* Below the low-water mark: the handler may give more. */
		conn_timer(c, HTTP_BODY_STALL_S);
		c->req->pull(c->req, BODY_HIGH - evbuffer_get_length(
		    bufferevent_get_output(bev)));
		return;
	}
	if (!c->finishing || c->discard)
		return;		/* discard: once the body is over */
	c->finishing = 0;
	req_free(c->req);
	c->req = NULL;
	if (!c->keepalive) {
		conn_free(c);
		return;
	}
	c->state = H_IDLE;
	conn_timer(c, c->srv->set.idle_timeout);
	bufferevent_enable(c->bev, EV_READ);
	conn_parse(c);
}

/* A failed handshake, or a connection broken in TLS: OpenSSL's reason. */
static void
conn_tls_error(struct http_conn *c, struct bufferevent *bev)
{
	unsigned long	 e;
	char		 reason[256];

	if ((e = bufferevent_get_openssl_error(bev)) == 0)
		return;
	ERR_error_string_n(e, reason, sizeof(reason));
	log_debug("http %s: TLS: %s", c->peer, reason);
	while (bufferevent_get_openssl_error(bev) != 0)
		;
}

static void
conn_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct http_conn	*c = arg;

	if ((events & BEV_EVENT_EOF) && c->discard) {
		conn_close_queued(c);
		return;
	}
	if ((events & BEV_EVENT_EOF) && c->finishing) {
		/* A reply is on its way out: let it go, then close. */
		c->keepalive = 0;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	if ((events & BEV_EVENT_ERROR) && c->tls)
		conn_tls_error(c, bev);
	if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(c);
}

/*
 * At the cap, the connection that has sat idle longest makes room: idle
 * connections cannot lock out clients that have something to say.
 */
static int
server_evict(struct http_server *srv, struct http_conn *fresh)
{
	struct http_conn	*c;

	TAILQ_FOREACH(c, &srv->conns, entry)
		if (c != fresh && c->state == H_IDLE && !c->dropping) {
			log_debug("http %s: closing an idle connection to make "
			    "room", c->peer);
			conn_free(c);
			return 0;
		}
	return -1;
}

static void
server_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct http_server	*srv = arg;
	struct http_conn	*c;
	struct ucred		 uc;
	struct ssl_ctx_st	*ctx;
	SSL			*ssl = NULL;
	char			 addr[INET6_ADDRSTRLEN];
	int			 i;

	c = xcalloc(1, sizeof(*c));
	c->srv = srv;
	for (i = 0; i < srv->nlisteners; i++)
		if (srv->listeners[i] == l) {
			c->larg = srv->largs[i];
			c->tls = srv->ltls[i];
		}
	if (sa->sa_family == AF_INET) {
		snprintf(c->peer, sizeof(c->peer), "%s:%u",
		    inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr,
		    addr, sizeof(addr)),
		    ntohs(((struct sockaddr_in *)sa)->sin_port));
		str_copy(c->addr, addr, sizeof(c->addr));
	} else if (sa->sa_family == AF_INET6) {
		snprintf(c->peer, sizeof(c->peer), "[%s]:%u",
		    inet_ntop(AF_INET6,
		    &((struct sockaddr_in6 *)sa)->sin6_addr, addr,
		    sizeof(addr)),
		    ntohs(((struct sockaddr_in6 *)sa)->sin6_port));
		str_copy(c->addr, addr, sizeof(c->addr));
	} else {
		if (sock_peer_cred(fd, &uc) == 0) {
			c->has_cred = 1;
			c->uid = uc.uid;
			snprintf(c->peer, sizeof(c->peer), "unix:uid %u",
			    (unsigned)uc.uid);
		} else
			snprintf(c->peer, sizeof(c->peer), "unix");
	}
	if (c->tls) {
		ctx = srv->set.tls_context != NULL ?
		    srv->set.tls_context() : NULL;
		if (ctx == NULL || (ssl = SSL_new(ctx)) == NULL) {
			log_warnx("http %s: no TLS context", c->peer);
			close(fd);
			free(c);
			return;
		}
		/* The SSL, and with it the socket, go with the bufferevent. */
		if ((c->bev = bufferevent_openssl_socket_new(srv->base, fd,
		    ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)) !=
		    NULL)
			/* A client that just closes is an end, not an error. */
			bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	} else
		c->bev = bufferevent_socket_new(srv->base, fd,
		    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL ||
	    (c->ev_timer = evtimer_new(srv->base, conn_timeout_cb, c)) ==
	    NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else if (ssl == NULL)
			close(fd);
		/* else libevent failed to allocate: the SSL is its own. */
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (srv->nconns > srv->set.max_conns &&
	    server_evict(srv, c) == -1) {
		conn_error(c, 503, "too many connections");
		return;
	}
	/* A new connection gets as long as a head would to say something. */
	c->state = H_IDLE;
	conn_timer(c, srv->set.head_timeout);
}

static void
server_accept_error(struct evconnlistener *l, void *arg)
{
	log_warn("http: accept");
}

struct http_server *
http_server_new(struct event_base *base, const struct http_settings *set,
    http_handler_fn handler, void *arg)
{
	struct http_server	*srv;

	srv = xcalloc(1, sizeof(*srv));
	srv->base = base;
	srv->set = *set;
	srv->handler = handler;
	srv->arg = arg;
	TAILQ_INIT(&srv->conns);
	return srv;
}

int
http_server_listen(struct http_server *srv, int fd, void *larg, int tls)
{
	struct evconnlistener	*l;

	if ((size_t)srv->nlisteners == nitems(srv->listeners))
		return -1;
	/* systemd passes blocking sockets: an accept must never wait. */
	if (fd_set_nonblock(fd) == -1)
		return -1;
	if ((l = evconnlistener_new(srv->base, server_accept, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL)
		return -1;
	evconnlistener_set_error_cb(l, server_accept_error);
	srv->largs[srv->nlisteners] = larg;
	srv->ltls[srv->nlisteners] = tls;
	srv->listeners[srv->nlisteners++] = l;
	return 0;
}

void
http_server_free(struct http_server *srv)
{
	struct http_conn	*c;
	int			 i;

	if (srv == NULL)
		return;
	for (i = 0; i < srv->nlisteners; i++)
		evconnlistener_free(srv->listeners[i]);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		conn_free(c);
	free(srv);
}

unsigned int
http_server_conns(const struct http_server *srv)
{
	return srv->nconns;
}

static void
reply_head(struct http_conn *c, int code, const char *type,
    const char *extra, const char *framing)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	if (c->srv->set.status != NULL)
		c->srv->set.status(code);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", code,
	    http_status_text(code));
	if (type != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", type);
	if (extra != NULL)
		evbuffer_add(out, extra, strlen(extra));
	evbuffer_add_printf(out, "%sConnection: %s\r\n\r\n", framing,
	    c->keepalive ? "keep-alive" : "close");
}

/* The head of a reply of len bytes: its connection, or NULL (freed). */
static struct http_conn *
reply_sized(struct http_req *req, int code, const char *type,
    const char *extra, uint64_t len)
{
	struct http_conn	*c = req->conn;
	char			 framing[64];

	if (c == NULL) {
		req_free(req);
		return NULL;
	}
	req->responding = 1;
	snprintf(framing, sizeof(framing), "Content-Length: %llu\r\n",
	    (unsigned long long)len);
	reply_head(c, code, type, extra, framing);
	return c;
}

void
http_reply(struct http_req *req, int code, const char *type,
    const char *extra, const void *body, size_t len)
{
	struct http_conn	*c;

	if ((c = reply_sized(req, code, type, extra, len)) == NULL)
		return;
	/* A HEAD response has the length a GET's body would, and no body. */
	if (len > 0 && strcmp(req->method, "HEAD") != 0)
		evbuffer_add(bufferevent_get_output(c->bev), body, len);
	c->finishing = 1;
	/* The write callback finishes the request once it has all left. */
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_write_cb(c->bev, c);
}

/*
 * A client that does not read what is queued for it is let go, from the
 * loop, so that its handler hears of it outside this call: 1 then.
 */
static int
conn_too_slow(struct http_conn *c, const char *what)
{
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) <=
	    c->srv->set.max_queued)
		return 0;
	log_info("http %s: client too slow, dropping %s", c->peer, what);
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	c->dropping = 1;
	conn_timer(c, 0);
	event_active(c->ev_timer, EV_TIMEOUT, 0);
	return 1;
}

void
http_stream_start(struct http_req *req, int code, const char *type,
    const char *extra)
{
	struct http_conn	*c = req->conn;

	req->responding = 1;
	req->streaming = 1;
	if (c != NULL)
		reply_head(c, code, type, extra,
		    "Transfer-Encoding: chunked\r\n"
		    "Cache-Control: no-cache\r\n");
}

int
http_stream_write(struct http_req *req, const void *data, size_t len)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c == NULL || c->dropping)
		return -1;
	if (len == 0)
		return 0;
	if (conn_too_slow(c, "the stream"))
		return -1;
	out = bufferevent_get_output(c->bev);
	evbuffer_add_printf(out, "%zx\r\n", len);
	evbuffer_add(out, data, len);
	evbuffer_add(out, "\r\n", 2);
	return 0;
}

void
http_stream_end(struct http_req *req)
{
	struct http_conn	*c = req->conn;

	req->streaming = 0;
	if (c == NULL) {
		req_free(req);
		return;
	}
	evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
	c->finishing = 1;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_write_cb(c->bev, c);
}

void
http_body_start(struct http_req *req, int code, const char *type,
    const char *extra, uint64_t len, void (*pull)(struct http_req *, size_t))
{
	struct http_conn	*c;

	if ((c = reply_sized(req, code, type, extra, len)) == NULL)
		return;
	if (len == 0 || strcmp(req->method, "HEAD") == 0) {
		c->finishing = 1;
		return;		/* the head is queued: the write callback */
	}
	req->streaming = 1;
	req->body_left = len;
	req->pull = pull;
	bufferevent_setwatermark(c->bev, EV_WRITE, BODY_LOW, 0);
	conn_timer(c, HTTP_BODY_STALL_S);
	pull(req, BODY_HIGH - evbuffer_get_length(
	    bufferevent_get_output(c->bev)));
}

int
http_body_write(struct http_req *req, const void *data, size_t len)
{
	struct http_conn	*c = req->conn;

	if (c == NULL || c->dropping || len > req->body_left)
		return -1;
	evbuffer_add(bufferevent_get_output(c->bev), data, len);
	req->body_left -= len;
	if (req->body_left == 0) {
		/* All given: it ends as a whole reply does, once sent. */
		req->streaming = 0;
		req->pull = NULL;
		bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
		conn_timer(c, 0);
		c->finishing = 1;
	}
	return 0;
}

size_t
http_body_room(const struct http_req *req)
{
	size_t	 q;

	if (req->conn == NULL)
		return 0;
	q = evbuffer_get_length(bufferevent_get_output(req->conn->bev));
	return q < BODY_HIGH ? BODY_HIGH - q : 0;
}

size_t
http_stream_queued(const struct http_req *req)
{
	if (req->conn == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->conn->bev));
}

void
http_stream_abort(struct http_req *req)
{
	struct http_conn	*c = req->conn;

	req->streaming = 0;
	if (c == NULL) {
		req_free(req);
		return;
	}
	/* What is queued still goes; then the connection closes. */
	c->req = NULL;
	req_free(req);
	c->keepalive = 0;
	c->state = H_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
	conn_timer(c, 5);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_write_cb(c->bev, c);
}

/* --- WebSocket ---------------------------------------------------------- */

static int
ws_frame(struct http_conn *c, enum ws_opcode op, const void *data,
    size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	uint8_t		 hdr[10];

	if (c->dropping || c->ws->close_sent ||
	    conn_too_slow(c, "the WebSocket"))
		return -1;
	evbuffer_add(out, hdr, ws_frame_header(hdr, op, len));
	if (len > 0)
		evbuffer_add(out, data, len);
	return 0;
}

/* A close frame, then the end of the connection once it has left. */
static void
ws_closing(struct http_conn *c, uint16_t code, const char *reason)
{
	uint8_t	 payload[WS_CONTROL_MAX];

	if (!c->ws->close_sent && !c->dropping) {
		(void)ws_frame(c, WS_OP_CLOSE, payload,
		    ws_close_payload(payload, code, reason));
		c->ws->close_sent = 1;
	}
	/* Never freed here: its owner may be the one calling. */
	c->keepalive = 0;
	c->state = H_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
		conn_timer(c, 5);
	else {
		conn_timer(c, 0);
		event_active(c->ev_timer, EV_TIMEOUT, 0);
	}
}

static void
ws_read(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	struct http_ws	*ws = c->ws;
	struct ws_parser *p = &ws->parser;
	const uint8_t	*buf;
	size_t		 n, used;

	while (c->state == H_WS && (n = evbuffer_get_length(in)) > 0) {
		buf = evbuffer_pullup(in, (ssize_t)n);
		switch (ws_parse(p, buf, n, &used)) {
		case WS_MORE:
			evbuffer_drain(in, used);
			ws->last_rx = mono_ms();
			return;
		case WS_TEXT:
			evbuffer_drain(in, used);
			ws->last_rx = mono_ms();
			ws->ops->message(ws, (const char *)p->msg, p->msglen,
			    ws->arg);
			break;
		case WS_PING:
			evbuffer_drain(in, used);
			ws->last_rx = mono_ms();
			(void)ws_frame(c, WS_OP_PONG, p->ctl, p->ctllen);
			break;
		case WS_PONG:
			evbuffer_drain(in, used);
			ws->last_rx = mono_ms();
			break;
		case WS_CLOSE:
			/* Its code back, and the connection ends with ours. */
			evbuffer_drain(in, n);
			log_debug("http %s: WebSocket closed by the client (%u)",
			    c->peer, p->close_code);
			ws_closing(c, p->close_code == 1005 ? WS_CLOSE_NORMAL :
			    p->close_code, "");
			return;
		case WS_FAIL:
			evbuffer_drain(in, n);
			log_debug("http %s: WebSocket: %s (close %u)", c->peer,
			    p->why, p->close_code);
			ws_closing(c, p->close_code, p->why);
			return;
		}
	}
}

/* Every HTTP_WS_PING_S: a ping, or the end of a peer gone quiet. */
static void
ws_tick(struct http_conn *c)
{
	if (mono_ms() - c->ws->last_rx > 2000ULL * HTTP_WS_PING_S + 5000) {
		log_info("http %s: WebSocket peer answers no ping: closing",
		    c->peer);
		ws_closing(c, WS_CLOSE_GOING_AWAY, "no answer to pings");
		return;
	}
	(void)ws_frame(c, WS_OP_PING, NULL, 0);
	conn_timer(c, HTTP_WS_PING_S);
}

struct http_ws *
http_ws_upgrade(struct http_req *req, const char *accept, const char *extra,
    size_t max_message, const struct http_ws_ops *ops, void *arg)
{
	struct http_conn	*c = req->conn;
	struct http_ws		*ws;
	struct evbuffer		*out;

	if (c == NULL) {
		req_free(req);
		return NULL;
	}
	if (c->srv->set.status != NULL)
		c->srv->set.status(101);
	out = bufferevent_get_output(c->bev);
	evbuffer_add_printf(out, "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n%s\r\n", accept,
	    extra != NULL ? extra : "");
	ws = xcalloc(1, sizeof(*ws));
	ws->conn = c;
	ws->ops = ops;
	ws->arg = arg;
	ws->last_rx = mono_ms();
	str_copy(ws->peer, c->peer, sizeof(ws->peer));
	ws_parser_init(&ws->parser, max_message);
	c->ws = ws;
	c->req = NULL;
	req_free(req);
	c->keepalive = 0;
	c->state = H_WS;
	conn_timer(c, HTTP_WS_PING_S);
	bufferevent_enable(c->bev, EV_READ);
	/* Frames sent right after the head: read from the loop, once the
	 * handler has what message() needs. */
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
	return ws;
}

int
http_ws_send(struct http_ws *ws, const char *data, size_t len)
{
	if (ws->conn == NULL || ws->conn->state != H_WS)
		return -1;
	return ws_frame(ws->conn, WS_OP_TEXT, data, len);
}

void
http_ws_close(struct http_ws *ws, uint16_t code, const char *reason)
{
	if (ws->conn != NULL && ws->conn->state == H_WS)
		ws_closing(ws->conn, code, reason);
}

const char *
http_ws_peer(const struct http_ws *ws)
{
	return ws->peer;
}

void
http_req_release(struct http_req *req)
{
	if (req->conn == NULL)
		req_free(req);
	else
		http_stream_abort(req);
}
