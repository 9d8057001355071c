/*
 * A small, strict HTTP/1.1 server on libevent: the only HTTP mcpd needs,
 * written so that every byte of a request is checked.  Requests with a
 * body of Content-Length or chunked encoding, never both; headers and
 * bodies capped; slow clients timed out; responses either whole or
 * streamed in chunks (for server-sent events), with the handler told when
 * a client goes away mid-stream.
 */
#ifndef MCPD_HTTP_H
#define MCPD_HTTP_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#define HTTP_MAX_HEADERS	64
#define HTTP_MAX_LINE		8192	/* request line or one header */
#define HTTP_MAX_HEAD		(32 * 1024)	/* all of the head */

struct http_server;
struct http_req;

struct http_header {
	char		*name;		/* lower-cased */
	char		*value;
};

struct http_req {
	struct http_conn	*conn;		/* NULL once it went away */
	char			*method;
	char			*target;	/* as sent: path and query */
	char			*path;		/* decoded path, no query */
	char			*query;		/* raw, or NULL */
	struct http_header	 headers[HTTP_MAX_HEADERS];
	int			 nheaders;
	uint8_t			*body;
	size_t			 bodylen;
	/*
	 * For logs and the audit: the socket's peer, or behind a balancer
	 * of "allow proxy" the client it names, "ADDRESS via PEER".
	 */
	char			 peer[128];
	char			 addr[46];	/* the socket's, no port; "": unix */
	const char		*scheme;	/* a balancer's X-Forwarded-Proto */
	int			 forwarded;	/* peer and scheme looked at */
	int			 responding;	/* a reply was started */
	int			 streaming;	/* chunked, not over yet */
	void			*larg;		/* its listener's */
	int			 has_cred;	/* unix socket: peer's uid */
	uid_t			 uid;
	int			 tls;		/* it came over TLS */
	void			*data;		/* the handler's */
	/* Called once if the client goes away while a reply is open. */
	void			(*gone)(struct http_req *);
	/* http_body_start()'s */
	uint64_t		 body_left;	/* bytes still to be given */
	void			(*pull)(struct http_req *, size_t);
};

struct http_settings {
	/*
	 * Called with the head of a request that has a body, before a byte
	 * of it is read: a reply here (a refusal) means the body is read
	 * and dropped, never kept, and the connection closes after it.
	 */
	void		(*head)(struct http_req *, void *);
	size_t		 max_body;
	unsigned int	 max_conns;
	unsigned int	 head_timeout;	/* s to send a whole head */
	unsigned int	 body_timeout;	/* s to send the body */
	unsigned int	 idle_timeout;	/* s of keep-alive between requests */
	size_t		 max_queued;	/* bytes unsent before we give up */
	/* Optional: told the status of every response, as it starts. */
	void		(*status)(int);
	/* The TLS context a new connection of a tls listener gets. */
	struct ssl_ctx_st *(*tls_context)(void);
};

typedef void	(*http_handler_fn)(struct http_req *, void *);

struct http_server *http_server_new(struct event_base *,
		    const struct http_settings *, http_handler_fn, void *);
/* Serve on a listening TCP or unix socket; requests carry larg. */
int		 http_server_listen(struct http_server *, int, void *, int);
void		 http_server_free(struct http_server *);
unsigned int	 http_server_conns(const struct http_server *);

/* The first value of a header (name lower-case), or NULL. */
const char	*http_header(const struct http_req *, const char *);
const char	*http_header_last(const struct http_req *, const char *);
int		 http_header_count(const struct http_req *, const char *);
/* A query parameter, percent-decoded into buf, or NULL. */
const char	*http_query(const struct http_req *, const char *, char *,
		    size_t);

/*
 * A whole reply.  extra is "Name: value\r\n" lines or NULL.  The request
 * is freed once the reply is sent (or the client went away).
 */
void		 http_reply(struct http_req *, int, const char *, const char *,
		    const void *, size_t);
/* Start a chunked reply, feed it, end it. */
void		 http_stream_start(struct http_req *, int, const char *,
		    const char *);
int		 http_stream_write(struct http_req *, const void *, size_t);
void		 http_stream_end(struct http_req *);
size_t		 http_stream_queued(const struct http_req *);
/*
 * A reply of len bytes fed as the client takes them, for bodies too large
 * to hold: pull(req, room) asks for up to room bytes whenever little is
 * queued, and the handler answers with http_body_write(), now or later
 * (from a timer of its own, to pace it), until len bytes are given; the
 * write of the last byte ends the request, which is freed once it has
 * left.  A HEAD request, or len 0, ends here, with no call of pull().  A
 * client that takes nothing for HTTP_BODY_STALL_S is dropped (gone()).
 */
#define HTTP_BODY_STALL_S	120
void		 http_body_start(struct http_req *, int, const char *,
		    const char *, uint64_t, void (*)(struct http_req *,
		    size_t));
/* -1 when the connection is closing or gone, or more than is left. */
int		 http_body_write(struct http_req *, const void *, size_t);
/* What pull() would be offered now: 0 while enough is queued. */
size_t		 http_body_room(const struct http_req *);
/* Close the connection once what is queued has left; frees the request. */
void		 http_stream_abort(struct http_req *);
/* The handler is done with a request it will not answer. */
void		 http_req_release(struct http_req *);

/*
 * WebSocket (RFC 6455, ws.c's framing).  A handler that has checked a
 * request's handshake turns its connection into a WebSocket: 101 is sent
 * with accept (Sec-WebSocket-Accept) and extra header lines, the request
 * is freed, and from then on each whole text message reaches message(),
 * pings are answered and sent every HTTP_WS_PING_S, and close() is called
 * once when the connection ends, however it ends (after which the
 * struct http_ws is gone).
 */
#define HTTP_WS_PING_S		30
struct http_ws;
struct http_ws_ops {
	void	(*message)(struct http_ws *, const char *, size_t, void *);
	void	(*closed)(struct http_ws *, void *);
};
struct http_ws	*http_ws_upgrade(struct http_req *, const char *,
		    const char *, size_t, const struct http_ws_ops *, void *);
/* A text message; -1 if the connection is closing or gone. */
int		 http_ws_send(struct http_ws *, const char *, size_t);
/* Send a close frame; the connection ends once it has left. */
void		 http_ws_close(struct http_ws *, uint16_t, const char *);
const char	*http_ws_peer(const struct http_ws *);

const char	*http_status_text(int);

#endif
