/*
 * mcpd's counters for /metrics, in the Prometheus text format, and the
 * state of its sibling daemons that /healthz reports.
 *
 * Every label value is a name of mcpd's own (tools, outcomes, kinds) or
 * of the policy (languages), never text a client sent: a client cannot
 * add a series, and the number of series is bounded.
 */
#ifndef MCPD_METRICS_H
#define MCPD_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;
struct sbx_result;
struct sbx_server;

/* Kinds of mcpd_errors_total. */
enum mx_error {
	MX_E_PARSE,		/* JSON-RPC -32700 */
	MX_E_INVALID_REQUEST,	/* -32600 */
	MX_E_METHOD_NOT_FOUND,	/* -32601 */
	MX_E_INVALID_PARAMS,	/* -32602 */
	MX_E_INTERNAL,		/* -32603 */
	MX_E_MCP,		/* MCP's own codes: session, resource ... */
	MX_E_AUTH,		/* a request's credentials refused */
	MX_E_HOST,		/* its Host or Origin refused */
	MX_E_SBX_INVALID,	/* sandboxd's SBX_E_*, in their order */
	MX_E_SBX_NOTFOUND,
	MX_E_SBX_DENIED,
	MX_E_SBX_AUDIT,
	MX_E_SBX_BUSY,
	MX_E_SBX_INTERNAL,
	MX_E_SBX_FILE,
	MX_E_SBX_CANCELLED,
	MX_E_SBX_MALFORMED,	/* sandboxd's answer made no sense */
	MX_E_SBX_UNAVAILABLE,	/* sandboxd away, a call failed for it */
	MX_E_AUDIT_UNSENT,	/* a record of mcpd's, auditd away */
	MX_E_AUDIT_REFUSED,	/* auditd did not commit one */
	MX_E_NKINDS
};

/* Reasons of mcpd_auth_failures_total. */
enum mx_auth {
	MX_AUTH_NONE,		/* no credentials */
	MX_AUTH_BAD_TOKEN,
	MX_AUTH_UNKNOWN_UID,	/* a unix peer that is no tenant */
	MX_AUTH_TENANT_GONE,	/* the listener's tenant was removed */
	MX_AUTH_FORBIDDEN,	/* known, but not allowed there */
	MX_AUTH_SCOPE,		/* an OAuth token without a scope needed */
	MX_AUTH_NREASONS
};

/* How a download of a link ended, for mcpd_downloads_total. */
enum mx_download {
	MX_DL_OK,		/* every byte asked for sent */
	MX_DL_CUT,		/* begun, not finished: client gone, file changed */
	MX_DL_REFUSED,		/* no byte of the file sent */
	MX_DL_NOUTCOMES
};

/* mcpd's own audit records, for mcpd_audit_records_*{sender="mcpd"}. */
struct mx_audit {
	uint64_t	 sent;
	uint64_t	 committed;
	uint64_t	 failed;	/* refused, or never sent */
	uint64_t	 waiting;	/* sent, not answered yet */
	uint64_t	 lag_ms;	/* age of the oldest waiting */
};

/* What the other modules know, as a scrape begins. */
struct mx_gauges {
	unsigned int	 sessions;
	unsigned int	 conns;		/* HTTP connections */
	unsigned int	 inflight;	/* MCP requests */
	size_t		 calls;		/* requests to sandboxd */
	int		 audit_required;
	struct mx_audit	 audit;
};

void		 metrics_init(void);
void		 metrics_error(enum mx_error);
/* A JSON-RPC error mcpd sends, by its code. */
void		 metrics_rpc_error(int);
/* sandboxd's SBX_E_* code in an error it sent. */
void		 metrics_sbx_error(uint32_t);
void		 metrics_auth_failure(enum mx_auth);
const char	*metrics_auth_name(enum mx_auth);
void		 metrics_http_status(int);
/* Download links: one made, and a download over with the bytes sent. */
void		 metrics_link_made(void);
void		 metrics_download(enum mx_download, uint64_t);
/*
 * A tools/call answered: its tool (a name from the tool table, else
 * counted as "other"), how it ended, as maudit_tool_call() says, and how
 * long it took.
 */
void		 metrics_tool_call(const char *, const char *, uint64_t);
/* A run_code of a policy language, and a sandbox_exec command; NULL: no
 * result came (sandboxd refused or failed). */
void		 metrics_run(const char *, const struct sbx_result *);
void		 metrics_exec(const struct sbx_result *);
/* How a run ended, as one word: ok, nonzero, timeout, oom ... */
const char	*metrics_result_name(const struct sbx_result *);

/*
 * The siblings, as mcpd.c sees them.  chain: sandboxd's last pong came
 * back through auditd (where audit is required nothing runs without it).
 */
void		 metrics_sandboxd(int, int);
void		 metrics_auditd(int);
int		 metrics_sandboxd_up(void);
/* 1 when mcpd can serve tool calls; else 0 and why. */
int		 metrics_healthy(int, char *, size_t);
/* /healthz's text: a line saying ok or why not, then one per sibling. */
void		 metrics_health_text(struct evbuffer *, int);

/* The exposition: sandboxd's SERVERINFO, or NULL if it did not come. */
void		 metrics_render(struct evbuffer *, const struct mx_gauges *,
		    const struct sbx_server *);

#endif
