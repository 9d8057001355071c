/*
 * The MCP core of mcpd: what every transport hands its messages to.
 *
 * Two eras of the protocol are served side by side.  The legacy era
 * (2024-11-05 .. 2025-11-25) begins with initialize and keeps state in a
 * session: the stdio process, a Streamable HTTP session, or a legacy SSE
 * connection.  The modern era (2026-07-28) is stateless: every request
 * carries its version and the client's capabilities in _meta.
 *
 * A request becomes a struct mcp_req.  Its handler answers it, at once or
 * after talking to sandboxd, with mcp_result() or mcp_error(); anything it
 * sends before (progress, log messages, questions to the client) goes to
 * the same struct mcp_out, which the transport provides.  A request the
 * client cancels, or whose HTTP stream closes in the modern era, is told
 * through its cancel callback and never answered.
 */
#ifndef MCPD_MCP_H
#define MCPD_MCP_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy.h"

struct event_base;
struct mcp_ask;
struct mcp_task;

#define MCPD_SERVER_NAME	"mcpd"

enum mcp_version {
	MCP_V20241105,
	MCP_V20250326,
	MCP_V20250618,
	MCP_V20251125,
	MCP_V20260728,
	MCP_NVERSIONS
};
#define MCP_LEGACY_LATEST	MCP_V20251125
#define MCP_MODERN		MCP_V20260728
#define MCP_HTTP_DEFAULT	MCP_V20250326	/* no header, no session */

const char	*mcp_version_name(int);
/* The version with this name, or -1. */
int		 mcp_version_lookup(const char *);

/* MCP's error codes beyond JSON-RPC's own. */
#define MCP_E_RESOURCE_NOT_FOUND	-32002	/* legacy era */
#define MCP_E_SESSION_NOT_FOUND		-32001	/* HTTP 404 bodies */
#define MCP_E_HEADER_MISMATCH		-32020
#define MCP_E_MISSING_CAPABILITY	-32021
#define MCP_E_UNSUPPORTED_VERSION	-32022

/* Reserved _meta keys of 2026-07-28. */
#define META_VERSION		"io.modelcontextprotocol/protocolVersion"
#define META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT		"io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL		"io.modelcontextprotocol/logLevel"
#define META_SERVER		"io.modelcontextprotocol/serverInfo"
#define META_SUBSCRIPTION	"io.modelcontextprotocol/subscriptionId"
#define META_RELATED_TASK	"io.modelcontextprotocol/related-task"
#define EXT_TASKS		"io.modelcontextprotocol/tasks"

/* Logging levels, least severe first; -1 where none was asked for. */
enum mcp_level {
	MLOG_DEBUG,
	MLOG_INFO,
	MLOG_NOTICE,
	MLOG_WARNING,
	MLOG_ERROR,
	MLOG_CRITICAL,
	MLOG_ALERT,
	MLOG_EMERGENCY,
	MLOG_NLEVELS
};
const char	*mcp_level_name(int);
int		 mcp_level_lookup(const char *);

/* Who a client is: its tenant, and the credential that proved it. */
struct mcp_peer {
	const struct tenant	*tenant;
	uint8_t			 principal[32];	/* token hash, or uid's */
	char			 desc[160];	/* logs: "tenant a (uid 0)" */
	char			 cred[80];	/* "token:1a2b", "uid:0" ... */
	/* When the credential ends (an OAuth token's exp and leeway, in
	 * seconds since the epoch); 0: it does not. */
	int64_t			 expires;
	/* HTTP: the scheme and Host it came to, "https://host:port", for
	 * links back to this server; "" elsewhere. */
	char			 origin[256];
};
int		 mcp_peer_same(const struct mcp_peer *,
		    const struct mcp_peer *);

enum mcp_transport {
	MCP_T_STDIO,
	MCP_T_HTTP,		/* Streamable HTTP */
	MCP_T_SSE,		/* the 2024-11-05 HTTP+SSE transport */
	MCP_T_WS,		/* WebSocket (SEP-1288, a draft) */
};
/* "stdio", "http", "sse" */
const char	*mcp_transport_name(enum mcp_transport);

struct mcp_req;
struct mcp_out;

/*
 * Where one request's messages go.  send() takes a message it does not
 * own; final is set on the response, after which the request is gone.
 * status is the HTTP status a transport should use if the response is
 * the first thing it sends (0: its usual).  abandon() says a request
 * ended with no response.
 */
struct mcp_out_ops {
	void	 (*send)(struct mcp_out *, struct mcp_req *, json_t *, int,
		    int);
	void	 (*abandon)(struct mcp_out *, struct mcp_req *);
	/* Optional: drop the connection, keeping the stream resumable. */
	void	 (*interrupt)(struct mcp_out *, struct mcp_req *);
};

struct mcp_out {
	const struct mcp_out_ops *ops;
	unsigned int		 nreqs;		/* requests using it */
};

/* A request mcpd sent the client, awaiting its answer. */
typedef void	(*mcp_ask_fn)(void *, json_t *, json_t *);

enum mcp_sess_state {
	SESS_NEW,		/* nothing but initialize and ping yet */
	SESS_INITIALIZING,	/* initialize answered */
	SESS_READY,		/* notifications/initialized came */
	SESS_ENDED,
};

#define SESS_ID_LEN		32	/* hex digits */
/* With the "host name" in front: "NAME~HEX". */
#define SESS_ID_MAX		(POLICY_HOST_NAME_MAX + SESS_ID_LEN)

/* The state of one legacy-era client. */
struct mcp_session {
	TAILQ_ENTRY(mcp_session) entry;
	char			 id[SESS_ID_MAX + 1];
	enum mcp_transport	 transport;
	enum mcp_sess_state	 state;
	int			 version;
	json_t			*caps;		/* the client's capabilities */
	json_t			*client;	/* its clientInfo */
	int			 level;		/* logging/setLevel, or -1 */
	struct mcp_peer		 peer;
	json_t			*subs;		/* subscribed URIs: object */
	/* Messages that belong to no request: stdout, the SSE stream, or
	 * a Streamable HTTP session's GET stream; NULL when none. */
	struct mcp_out		*chan;
	TAILQ_HEAD(, mcp_ask)	 asks;
	json_int_t		 next_ask;
	uint64_t		 started;	/* mono_ms() */
	uint64_t		 last_active;	/* mono_ms() */
	unsigned int		 refs;		/* requests and streams */
	void			*tdata;		/* the transport's */
	/* The transport lets go of it: called once, as it ends. */
	void			(*end)(struct mcp_session *);
};

/* A request in progress. */
struct mcp_req {
	TAILQ_ENTRY(mcp_req)	 entry;
	struct mcp_session	*sess;		/* legacy era; NULL modern */
	struct mcp_out		*out;
	struct mcp_peer		 peer;
	enum mcp_transport	 transport;
	json_t			*msg;		/* the request: owned */
	json_t			*id;		/* borrowed from msg */
	const char		*method;
	json_t			*params;	/* always an object */
	int			 modern;
	int			 version;
	json_t			*caps;		/* the client's: borrowed */
	int			 level;		/* least severe to send, -1 */
	json_t			*progress;	/* token, or NULL */
	double			 progress_sent;	/* last value sent */
	int			 nprogress;
	struct mcp_task		*task;		/* runs as this task */
	/* The handler's: told of a cancellation, it frees what it holds. */
	void			*hctx;
	void			(*cancel)(struct mcp_req *);
	uint64_t		 started;	/* mono_ms() */
	char			 note[96];	/* for its log line: "k=v ..." */
};

/* The transports' way in. */
struct mcp_input {
	enum mcp_transport	 transport;
	struct mcp_session	*sess;		/* stdio and legacy HTTP */
	const struct mcp_peer	*peer;
	struct mcp_out		*out;		/* for a request's messages */
	/*
	 * HTTP only: the MCP-Protocol-Version header (NULL if absent) and
	 * the check of Mcp-Method, Mcp-Name and Mcp-Param-* headers of a
	 * modern request: 0, or -1 with a message in why.
	 */
	const char		*hdr_version;
	int			(*hdrcheck)(void *, json_t *, char *, size_t);
	void			*hdrarg;
};

void		 mcp_init(int);
void		 mcp_shutdown(void);
/* The session's client sends no more (stdio at EOF); answers still go. */
void		 mcp_input_ended(struct mcp_session *, struct mcp_out *);

/*
 * Is this parsed message a modern-era request?  (Its _meta names a
 * version, or, on HTTP, its header names one no legacy client sends.)
 */
int		 mcp_is_modern(json_t *, const char *);
/*
 * Handle one message that is not a batch.  Requests are answered through
 * in->out; notifications and responses return at once.  1 when in->out
 * will see one final message or an abandon for it, 0 when nothing.
 */
int		 mcp_input(const struct mcp_input *, json_t *);
/*
 * A JSON-RPC batch, in a session whose version takes batches: its
 * answers are sent to in->out as one array.
 */
int		 mcp_input_batch(const struct mcp_input *, json_t *);
/* The error for a batch where none is allowed; a new reference. */
json_t		*mcp_batch_refused(void);
/*
 * One line of a line-based transport (stdio): what is not JSON answered
 * with its error, a batch where the session's version takes none refused,
 * anything else to mcp_input() or mcp_input_batch().
 */
void		 mcp_input_line(const struct mcp_input *, const char *, size_t);

/* Close the request's connection if its stream can be resumed. */
void		 mcp_interrupt(struct mcp_req *);
/* Stop a request: its handler is told, it is never answered. */
void		 mcp_cancel(struct mcp_req *, const char *);
struct mcp_req	*mcp_req_clone(struct mcp_req *, struct mcp_out *);
/* A transport's out is going away: its requests are cancelled. */
void		 mcp_out_gone(struct mcp_out *);
/* How many requests are in flight, and how many for this tenant. */
unsigned int	 mcp_inflight(const struct tenant *);

/* Answer a request; both free it. */
void		 mcp_result(struct mcp_req *, json_t *);
void		 mcp_error(struct mcp_req *, int, json_t *, const char *, ...)
		    __attribute__((__format__(printf, 4, 5)));
/* The same, with the HTTP status the error is to carry (modern era). */
void		 mcp_error_status(struct mcp_req *, int, int, json_t *,
		    const char *, ...)
		    __attribute__((__format__(printf, 5, 6)));
/* A tool's failure a model should see: isError and a text block. */
void		 mcp_tool_error(struct mcp_req *, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));
/* Progress: dropped unless asked for; kept strictly increasing. */
void		 mcp_progress(struct mcp_req *, double, double, const char *);
/* A log message about this request, if the client wants its level. */
void		 mcp_log(struct mcp_req *, int, const char *, json_t *);
/* A log message to a session, about no request. */
void		 mcp_session_log(struct mcp_session *, int, const char *,
		    json_t *);
/*
 * Ask the client something (sampling, elicitation, roots) on this
 * request's stream; fn gets (arg, result, error) or, if the request ends
 * first, is never called.  -1 when the client cannot be asked.
 */
int		 mcp_ask(struct mcp_req *, const char *, json_t *, mcp_ask_fn,
		    void *);

/* Sessions (session.c). */
struct mcp_session *session_new(enum mcp_transport, const struct mcp_peer *);
struct mcp_session *session_find(const char *);
/* End it: requests cancelled, state freed once nothing refers to it. */
/* reason: a word for its log line (expired, deleted ...). */
void		 session_end(struct mcp_session *, const char *);
/* "EVENT tenant=... session=... transport=..." and extra. */
void		 session_log(const struct mcp_session *, const char *,
		    const char *);
void		 session_ref(struct mcp_session *);
void		 session_unref(struct mcp_session *);
void		 session_touch(struct mcp_session *);
/* Send a message that belongs to no request (dropped if no channel). */
void		 session_send(struct mcp_session *, json_t *);
unsigned int	 session_count(void);
/* Visit every live session. */
void		 session_foreach(void (*)(struct mcp_session *, void *),
		    void *);
void		 session_expire_start(struct event_base *);
void		 session_shutdown(void);

/* The server's capabilities for a version; a new reference. */
json_t		*mcp_capabilities(int);
json_t		*mcp_server_info(int);

/* Notify everyone who listens for this (sessions, listen streams). */
#define NOTE_TOOLS		0x01
#define NOTE_RESOURCES		0x02
#define NOTE_PROMPTS		0x04
void		 mcp_list_changed(const struct tenant *, int);
void		 mcp_resource_updated(const struct tenant *, const char *);
/* Does anyone of this tenant listen for a URI beginning so? */
int		 mcp_subscribed(const struct tenant *, const char *);

/* The session's requests are cancelled (its tasks go on). */
void		 mcp_session_cancel(struct mcp_session *);
/* Task status to the listen streams that asked for this task. */
void		 mcp_task_status(const struct mcp_peer *, const char *,
		    json_t *);
/* Modern: does the request's client declare the tasks extension? */
int		 mcp_client_has_tasks(const struct mcp_req *);
/* Answer -32021 naming the tasks extension. */
void		 mcp_missing_tasks(struct mcp_req *);

/* The mode mcpd runs in: stdio offers the local-file tools. */
extern int	 mcp_stdio_mode;
extern struct event_base *mcp_base;

/* Tools (tools.c). */
void		 tools_list(struct mcp_req *);
void		 tools_call(struct mcp_req *);
const char	*tools_instructions(void);
void		 tools_init(void);
/* A listed tool's inputSchema, for Mcp-Param-* checks; NULL if none. */
json_t		*tools_input_schema(const char *);
/* The tool table's own copy of a tool's name, NULL if none is so named. */
const char	*tools_name(const char *);

/* Resources and completion (resources.c). */
void		 resources_list(struct mcp_req *);
void		 resources_templates(struct mcp_req *);
void		 resources_read(struct mcp_req *);
void		 resources_subscribe(struct mcp_req *);
void		 resources_unsubscribe(struct mcp_req *);
void		 completion_complete(struct mcp_req *);

/* Tasks (tasks.c). */
void		 tasks_get(struct mcp_req *);
void		 tasks_result(struct mcp_req *);
void		 tasks_list(struct mcp_req *);
void		 tasks_cancel(struct mcp_req *);
void		 tasks_update(struct mcp_req *);

/*
 * What a build of mcpd adds to the server, registered with mcp_extend()
 * before mcpd_main(): tools beside the product's, resources, templates,
 * completions and prompts.  mcpd-conformance registers the conformance
 * suite's fixtures (tests/interop/fixture.c); the product registers
 * nothing, and offers no prompts.  Any member may be left out.
 */
struct tool;
struct mcp_extension {
	struct tool	*tools;		/* listed before the product's */
	size_t		 ntools;
	int		 tools_change;	/* the tool list may change */
	/* Add to resources/list's and resources/templates/list's lists. */
	void		(*resources)(struct mcp_req *, json_t *);
	void		(*templates)(struct mcp_req *, json_t *);
	/* 1 when the URI or the reference was the extension's, answered. */
	int		(*read)(struct mcp_req *, const char *);
	int		(*complete)(struct mcp_req *, json_t *, const char *,
			    const char *);
	/* Both, or the server has no prompts. */
	void		(*prompts_list)(struct mcp_req *);
	void		(*prompts_get)(struct mcp_req *);
};

void		 mcp_extend(const struct mcp_extension *);
extern const struct mcp_extension *mcp_ext;	/* never NULL */

#endif
