/*
 * Requests to sandboxd: see sbxcall.h.
 *
 * While sandboxd is not connected (mcpd just started, or sandboxd is
 * restarting) a call waits for it, up to SBX_WAIT_MS, instead of failing
 * at once.  So it does, with the audit gate, while auditd is not: once
 * auditd has been away that long, calls fail at once, until it is back.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metrics.h"
#include "proc.h"
#include "proto.h"
#include "sbxcall.h"
#include "util.h"

#define SBX_WAIT_MS	10000

struct sbx_call {
	TAILQ_ENTRY(sbx_call)	 entry;
	uint32_t		 id;
	sbx_frame_fn		 fn;		/* NULL once detached */
	void			*arg;
	/* Not sent yet: sandboxd was away. */
	uint32_t		 type;
	uint8_t			*payload;
	size_t			 len;
	uint64_t		 deadline;	/* mono_ms() */
};

static TAILQ_HEAD(, sbx_call)	 calls = TAILQ_HEAD_INITIALIZER(calls);
static TAILQ_HEAD(, sbx_call)	 waiting = TAILQ_HEAD_INITIALIZER(waiting);
static struct conn		*sbxconn;
static uint32_t			 next_id;
static size_t			 ncalls;
static struct event		*ev_wait;
static int			 audit_gate;	/* calls wait for auditd */
static int			 audit_up;
static uint64_t			 audit_lost;	/* mono_ms() it went */

static void	call_fail(struct sbx_call *, uint32_t, const char *);

#define AUDIT_AWAY	"audit is required and mcpd cannot reach the audit " \
			"service (mcp-auditd), so nothing may run unrecorded"

/* May calls leave now? */
static int
calls_open(void)
{
	return sbxconn != NULL && (!audit_gate || audit_up);
}

/* Fail a call that waited for as long as it may. */
static void
call_expire(struct sbx_call *call)
{
	if (sbxconn == NULL) {
		metrics_error(MX_E_SBX_UNAVAILABLE);
		call_fail(call, SBX_E_INTERNAL, "the sandbox service is not "
		    "reachable; try again shortly");
	} else {
		metrics_error(MX_E_SBX_AUDIT);
		call_fail(call, SBX_E_AUDIT, AUDIT_AWAY);
	}
}

/*
 * Calls that waited too long fail.  A callback may end other calls:
 * look again from the start after each.
 */
static void
wait_timer(evutil_socket_t fd, short events, void *arg)
{
	struct sbx_call	*call;
	struct timeval	 tv = { 1, 0 };
	uint64_t	 now = mono_ms();

	for (;;) {
		TAILQ_FOREACH(call, &waiting, entry)
			if (call->deadline <= now)
				break;
		if (call == NULL)
			break;
		TAILQ_REMOVE(&waiting, call, entry);
		TAILQ_INSERT_TAIL(&calls, call, entry);
		call_expire(call);
	}
	if (!TAILQ_EMPTY(&waiting))
		evtimer_add(ev_wait, &tv);
}

void
sbx_calls_init(struct event_base *base)
{
	TAILQ_INIT(&calls);
	TAILQ_INIT(&waiting);
	if ((ev_wait = evtimer_new(base, wait_timer, NULL)) == NULL)
		fatalx("cannot create a timer");
}

static int
call_send(struct sbx_call *call)
{
	int	 rv;

	rv = conn_compose(sbxconn, call->type, call->id, -1, call->payload,
	    call->len);
	free(call->payload);
	call->payload = NULL;
	return rv;
}

/* Send what waited, if it may leave now. */
static void
calls_release(void)
{
	struct sbx_call	*call;

	if (!calls_open())
		return;
	while ((call = TAILQ_FIRST(&waiting)) != NULL) {
		TAILQ_REMOVE(&waiting, call, entry);
		TAILQ_INSERT_TAIL(&calls, call, entry);
		if (call_send(call) == -1)
			call_fail(call, SBX_E_INTERNAL, "the request is too "
			    "large for the sandbox service");
	}
}

void
sbx_calls_up(struct conn *c)
{
	sbxconn = c;
	calls_release();
}

void
sbx_calls_audit_gate(void)
{
	audit_gate = 1;
	audit_lost = mono_ms();
}

void
sbx_calls_audit(int up)
{
	audit_up = up;
	if (!up)
		audit_lost = mono_ms();
	calls_release();
}

int
sbx_frame_final(uint32_t type)
{
	return type == IMSG_SBX_RESULT || type == IMSG_SBX_DONE ||
	    type == IMSG_SBX_CREATED || type == IMSG_SBX_ERROR;
}

static void
call_free(struct sbx_call *call)
{
	TAILQ_REMOVE(&calls, call, entry);
	ncalls--;
	free(call->payload);
	free(call);
}

/* An error frame of our own making ends the call (on the calls list). */
static void
call_fail(struct sbx_call *call, uint32_t code, const char *why)
{
	struct sbx_error	 e;
	struct imsg		 imsg;

	memset(&e, 0, sizeof(e));
	e.code = code;
	str_copy(e.message, why, sizeof(e.message));
	memset(&imsg, 0, sizeof(imsg));
	imsg.hdr.type = IMSG_SBX_ERROR;
	imsg.hdr.peerid = call->id;
	imsg.fd = -1;
	imsg.data = &e;
	imsg.datalen = sizeof(e);
	if (call->fn != NULL)
		call->fn(call->arg, &imsg);
	call_free(call);
}

/* Every call in flight ends; waiting ones keep waiting. */
void
sbx_calls_down(const char *why)
{
	struct sbx_call	*call;
	char		 msg[SBX_MSG_MAX];

	sbxconn = NULL;
	if (strncmp(why, "refused us: ", 12) == 0)
		snprintf(msg, sizeof(msg), "the sandbox service refused this "
		    "client: %s", why + 12);
	else
		snprintf(msg, sizeof(msg), "the sandbox service went away "
		    "(%s); try again", why);
	while ((call = TAILQ_FIRST(&calls)) != NULL) {
		metrics_error(MX_E_SBX_UNAVAILABLE);
		call_fail(call, SBX_E_INTERNAL, msg);
	}
}

struct sbx_call *
sbx_call(uint32_t type, const struct iovec *iov, int iovcnt, sbx_frame_fn fn,
    void *arg, const char **why)
{
	struct sbx_call	*call;
	struct timeval	 tv = { 1, 0 };
	size_t		 i, off = 0;

	call = xcalloc(1, sizeof(*call));
	do {
		call->id = ++next_id;
	} while (call->id == 0);
	call->fn = fn;
	call->arg = arg;
	if (!calls_open()) {
		/* Kept until sandboxd is back, or the deadline. */
		call->type = type;
		for (i = 0; i < (size_t)iovcnt; i++)
			call->len += iov[i].iov_len;
		if (call->len > PROTO_MAX_FRAME) {
			free(call);
			*why = "the request is too large for the sandbox "
			    "service";
			return NULL;
		}
		call->payload = xmalloc(call->len + 1);
		for (i = 0; i < (size_t)iovcnt; i++) {
			memcpy(call->payload + off, iov[i].iov_base,
			    iov[i].iov_len);
			off += iov[i].iov_len;
		}
		call->deadline = mono_ms() + SBX_WAIT_MS;
		if (sbxconn != NULL && mono_ms() - audit_lost >= SBX_WAIT_MS) {
			/* auditd away for long already: fail it at once. */
			call->deadline = mono_ms();
			tv.tv_sec = 0;
		}
		TAILQ_INSERT_TAIL(&waiting, call, entry);
		ncalls++;
		if (!evtimer_pending(ev_wait, NULL) || tv.tv_sec == 0)
			evtimer_add(ev_wait, &tv);
		return call;
	}
	if (conn_composev(sbxconn, type, call->id, -1, iov, iovcnt) == -1) {
		free(call);
		*why = "the request is too large for the sandbox service";
		return NULL;
	}
	TAILQ_INSERT_TAIL(&calls, call, entry);
	ncalls++;
	return call;
}

static int
call_waiting(struct sbx_call *call)
{
	struct sbx_call	*w;

	TAILQ_FOREACH(w, &waiting, entry)
		if (w == call)
			return 1;
	return 0;
}

void
sbx_call_cancel(struct sbx_call *call)
{
	if (call_waiting(call)) {
		/* Never sent: it ends here, as sandboxd would end it. */
		TAILQ_REMOVE(&waiting, call, entry);
		TAILQ_INSERT_TAIL(&calls, call, entry);
		call_fail(call, SBX_E_INTERNAL, "cancelled");
		return;
	}
	if (sbxconn != NULL)
		conn_compose(sbxconn, IMSG_SBX_CANCEL, call->id, -1, NULL, 0);
}

void
sbx_call_detach(struct sbx_call *call)
{
	call->fn = NULL;
	call->arg = NULL;
	sbx_call_cancel(call);
}

void
sbx_calls_shutdown(void)
{
	struct sbx_call	*call;

	while ((call = TAILQ_FIRST(&waiting)) != NULL) {
		TAILQ_REMOVE(&waiting, call, entry);
		TAILQ_INSERT_TAIL(&calls, call, entry);
		call_fail(call, SBX_E_INTERNAL, "mcpd is shutting down");
	}
	while ((call = TAILQ_FIRST(&calls)) != NULL)
		call_fail(call, SBX_E_INTERNAL, "mcpd is shutting down");
	if (ev_wait != NULL) {
		event_free(ev_wait);
		ev_wait = NULL;
	}
}

/* sandboxd's errors, by kind, whoever asked. */
static void
calls_count_error(const struct imsg *imsg)
{
	struct sbx_error	 e;

	if (proto_payload(imsg->data, imsg->datalen, &e, sizeof(e)) == -1)
		metrics_error(MX_E_SBX_MALFORMED);
	else
		metrics_sbx_error(e.code);
}

void
sbx_calls_dispatch(struct imsg *imsg)
{
	struct sbx_call	*call;

	TAILQ_FOREACH(call, &calls, entry)
		if (call->id == imsg->hdr.peerid)
			break;
	if (call == NULL) {
		log_debug("sandboxd answered call %u, which is gone",
		    imsg->hdr.peerid);
		return;
	}
	if (imsg->hdr.type == IMSG_SBX_ERROR)
		calls_count_error(imsg);
	if (call->fn != NULL)
		call->fn(call->arg, imsg);
	if (sbx_frame_final(imsg->hdr.type))
		call_free(call);
}

size_t
sbx_calls_pending(void)
{
	return ncalls;
}

int
sbx_calls_connected(void)
{
	return sbxconn != NULL;
}
