/*
 * mcpd's pieces, as main() puts them together: the transports and the
 * requests to sandboxd that tools and resources are made of.
 */
#ifndef MCPD_MCPD_H
#define MCPD_MCPD_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mime.h"
#include "proto.h"

struct event_base;
struct evbuffer;
struct http_req;
struct listen_addr;
struct mcp_peer;
struct mcp_req;
struct mcp_session;
struct policy;
struct sbx_call;

/* The largest message a client may send: a line, or an HTTP body. */
#define MCPD_MAX_MESSAGE	(32 * 1024 * 1024)
#define HTTPD_MAX_CONNS		512

extern size_t		 mcpd_max_message;
extern const struct policy *mcpd_conf;

/*
 * mcpd.c: all of mcpd but main() (main.c), so that a test build can run
 * the same server with an extension registered first (mcp.h).
 */
int		 mcpd_main(int, char *[]);

/* stdio.c */
void		 stdio_start(struct event_base *, struct mcp_session *,
		    void (*)(void));
void		 stdio_stop(void);

/* httpd.c */
struct httpd_socket {
	int			 fd;
	int			 is_unix;
	const struct listen_addr *la;	/* NULL: not in the configuration */
	char			 name[64];	/* for logs */
};
void		 httpd_start(struct event_base *, const struct policy *,
		    const struct httpd_socket *, int);
void		 httpd_stop(void);
/* After a reload: say which listeners' tenants are gone. */
void		 httpd_reloaded(void);
unsigned int	 httpd_conns(void);

/* websocket.c: MCP over WebSocket, for a request let in. */
int		 websocket_wanted(const struct http_req *);
void		 websocket_open(struct http_req *, const struct mcp_peer *);

/* tls.c: the listeners with tls. */
struct ssl_ctx_st;
int		 tls_wanted(const struct policy *);
int		 tls_load(const struct policy *, char *, size_t);
int		 tls_check(const struct policy *, char *, size_t);
struct ssl_ctx_st *tls_context(void);
void		 tls_free(void);

/* observe.c: /healthz and /metrics, for a request let in. */
struct http_req;
void		 observe_healthz(struct http_req *);
void		 observe_metrics(struct http_req *);

/*
 * ops.c: one request to sandboxd on behalf of an MCP request.  The frames
 * answering it are collected; done() runs once, after the last.
 */
struct op;
typedef void	(*op_fn)(struct op *);

struct op {
	struct sbx_call		*call;
	void			*arg;
	op_fn			 done;
	/* Output as it comes, if set; else kept in out[]. */
	void			(*output)(struct op *, int, int,
				    const uint8_t *, size_t);
	uint32_t		 final;		/* the last frame's IMSG type */
	struct sbx_result	 result;
	struct sbx_info		 info;		/* CREATED, or the last INFO */
	json_t			*infos;		/* every INFO, as JSON */
	json_t			*images;	/* every IMAGE, its LANGs in */
	json_t			*pictures;	/* RUN: {path, data, bytes} */
	struct sbx_done		 fdone;
	struct sbx_error	 error;
	struct evbuffer		*data;
	json_t			*entries;
	struct evbuffer		*out[2];	/* stdout, stderr */
	int			 broken;	/* a malformed frame came */
	int			 fd;		/* OPEN's file, or -1: take it */
};

struct op	*op_start(uint32_t, struct evbuffer *, op_fn, void *,
		    const char **);
/* The caller is gone: no callback, the work stops, the op is freed. */
void		 op_cancel(struct op *);
void		 op_free(struct op *);
/*
 * Among several hosts, the ids mcpd hands out carry this host's "host
 * name" ("NAME~ID"); sandboxd's ids do not.  host_id() spells an id as
 * clients see it; host_of() says whose an id a client sent is: 0 has no
 * host name in it, 1 is this host's, -1 another host's (named in owner).
 * host_local() is the id past this host's name.
 */
#define HOST_SEP		'~'
const char	*host_id(const char *, char *, size_t);
int		 host_of(const char *, char *, size_t);
/* host_of() of the first len bytes. */
int		 host_of_n(const char *, size_t, char *, size_t);
const char	*host_local(const char *);
/* An id or name, with or without a host's name: its letters are names'. */
int		 host_id_valid(const char *);
/* "this host (NAME)" or "this host", for errors. */
const char	*host_this(char *, size_t);
/* A request's sbx_ref for its tenant and a sandbox id or name. */
void		 op_ref(struct sbx_ref *, const struct mcp_req *,
		    const char *);
json_t		*op_info_json(const struct sbx_info *);
/* The error a failed op reports, for a model to read. */
const char	*op_error(const struct op *);

/* content.c */
/* Valid UTF-8 as a JSON string: bad bytes become U+FFFD. */
json_t		*utf8_json(const uint8_t *, size_t);
int		 utf8_valid(const uint8_t *, size_t);
char		*b64_encode(const uint8_t *, size_t);
/* Strict base64 (padding required); NULL when not base64. */
uint8_t		*b64_decode(const char *, size_t, size_t *);
/* "2026-11-21T14:35:12Z" */
void		 iso_time(int64_t, char *, size_t);
const char	*signal_name(int);
/* Text as one value of a key=value log line, in buf. */
const char	*log_value(const char *, char *, size_t);

/* links.c: download links, made by sandbox_share_file. */
struct http_req;
void		 links_init(struct event_base *);
void		 links_reload(void);		/* SIGHUP: a fresh key */
int		 links_path(const char *);	/* /files/... */
void		 links_serve(struct http_req *);
/* run_code's share: its result sent once the files it made are shared. */
void		 links_share_run(struct mcp_req *, const char *, json_t *,
		    json_t *, json_t *, int);

/* audit.c */
struct conn;
struct imsg;
void		 maudit_up(struct conn *);
void		 maudit_down(void);
void		 maudit_ack(struct imsg *);
void		 maudit_stop(void);
void		 maudit_tool_call(const struct mcp_req *, const char *, int);
void		 maudit_auth_failure(const char *, const char *);
/* Any record of mcpd's: event, outcome, tenant and sandbox (or NULL). */
struct audit_body;
void		 maudit_send(uint32_t, uint32_t, const char *, const char *,
		    const struct audit_body *);
struct mx_audit;
void		 maudit_stats(struct mx_audit *);
/*
 * Records a stranger can cause, at most per_s a second: 1 when this one
 * may be recorded.  missed: how many the last second left out, once,
 * as a new second begins (else 0), for the caller to record as many.
 */
struct maudit_gate {
	uint64_t		 second;
	unsigned int		 count;
	unsigned int		 dropped;
};
int		 maudit_gate(struct maudit_gate *, unsigned int,
		    unsigned int *);

/* local.c: stdio mode's copies between the machine and a sandbox. */
int		 local_path_allowed(const char *, int, char *, size_t,
		    char *, size_t);

#endif
