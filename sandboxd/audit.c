/*
 * sandboxd's side of the audit trail.  Every operation sends an intent
 * record before it acts and a result record after.  When the policy
 * requires audit, the operation waits for auditd to acknowledge the
 * intent's commit, and is refused if that does not come.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "auditbody.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define AUDIT_ACK_TIMEOUT_MS	5000

/*
 * Every record sent and not yet acknowledged, oldest first: how far
 * behind auditd is.  A waiter's done() is called once, at the answer, at
 * its timeout or when the connection goes; the record stays counted until
 * auditd answers or the connection goes.
 */
struct pending {
	TAILQ_ENTRY(pending)	 entry;
	uint32_t		 id;
	uint64_t		 sent_ns;
	audit_done_fn		 done;		/* NULL: nobody waits */
	void			*arg;
	struct event		*ev_timeout;
};

static TAILQ_HEAD(, pending)	 pendings = TAILQ_HEAD_INITIALIZER(pendings);
static uint32_t			 audit_next_id;
static int			 audit_warned;
static struct audit_stats	 stats;

static void
pending_free(struct pending *p)
{
	TAILQ_REMOVE(&pendings, p, entry);
	if (p->ev_timeout != NULL)
		event_free(p->ev_timeout);
	free(p);
	stats.waiting--;
}

/* Nobody waits for it any more; it stays counted. */
static void
pending_unwait(struct pending *p)
{
	p->done = NULL;
	p->arg = NULL;
	if (p->ev_timeout != NULL) {
		event_free(p->ev_timeout);
		p->ev_timeout = NULL;
	}
}

static void
pending_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct pending	*p = arg;
	audit_done_fn	 done = p->done;
	void		*darg = p->arg;

	pending_unwait(p);
	done(darg, 0, "auditd did not acknowledge the record in time");
}

void
audit_send(uint32_t event, uint32_t outcome, const char *tenant,
    const char *sandbox, const struct audit_body *body, audit_done_fn done,
    void *arg)
{
	struct audit_record	 r;
	struct iovec		 iov[2];
	struct conn		*c;
	struct pending		*p;
	struct timeval		 tv = { AUDIT_ACK_TIMEOUT_MS / 1000, 0 };
	uint32_t		 id;
	int			 required = sbd->conf->audit.required;

	memset(&r, 0, sizeof(r));
	r.event = event;
	r.outcome = outcome;
	str_copy(r.tenant, tenant != NULL ? tenant : "", sizeof(r.tenant));
	str_copy(r.sandbox, sandbox != NULL ? sandbox : "", sizeof(r.sandbox));
	r.bodylen = body != NULL ? (uint32_t)body->len : 0;
	iov[0].iov_base = &r;
	iov[0].iov_len = sizeof(r);
	iov[1].iov_base = body != NULL ? body->buf : NULL;
	iov[1].iov_len = r.bodylen;
	if (++audit_next_id == 0)
		audit_next_id = 1;
	id = audit_next_id;

	if ((c = client_conn(sbd->auditd)) == NULL ||
	    conn_composev(c, IMSG_AUDIT_RECORD, id, -1, iov, 2) == -1) {
		stats.failed++;
		if (!audit_warned)
			log_warnx("audit records cannot reach auditd%s",
			    required ? ": refusing work" : "");
		audit_warned = 1;
		if (done != NULL)
			done(arg, !required, "auditd is not reachable");
		return;
	}
	audit_warned = 0;
	stats.sent++;
	stats.waiting++;
	p = xcalloc(1, sizeof(*p));
	p->id = id;
	p->sent_ns = mono_ns();
	TAILQ_INSERT_TAIL(&pendings, p, entry);
	if (done == NULL)
		return;
	if (!required) {
		done(arg, 1, NULL);
		return;
	}
	p->done = done;
	p->arg = arg;
	if ((p->ev_timeout = evtimer_new(sbd->base, pending_timeout, p)) ==
	    NULL)
		fatalx("cannot create an audit timer");
	evtimer_add(p->ev_timeout, &tv);
}

/* The waiter went away: forget its callbacks. */
void
audit_cancel(void *arg)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &pendings, entry)
		if (p->done != NULL && p->arg == arg)
			pending_unwait(p);
}

void
audit_get_stats(struct audit_stats *st)
{
	struct pending	*p;

	*st = stats;
	st->lag_ms = 0;
	if ((p = TAILQ_FIRST(&pendings)) != NULL)
		st->lag_ms = (mono_ns() - p->sent_ns) / 1000000;
}

void
audit_auditd_up(struct conn *c)
{
	audit_warned = 0;
}

/* At exit: what was sent leaves before the process does. */
void
audit_flush(void)
{
	struct conn	*c;

	if ((c = client_conn(sbd->auditd)) != NULL)
		(void)imsgbuf_flush(&c->iev.ibuf);
}

void
audit_auditd_down(void)
{
	struct pending	*p;
	audit_done_fn	 done;
	void		*arg;

	while ((p = TAILQ_FIRST(&pendings)) != NULL) {
		done = p->done;
		arg = p->arg;
		pending_free(p);
		stats.failed++;
		if (done != NULL)
			done(arg, 0, "the connection to auditd was lost");
	}
}

void
audit_dispatch(struct conn *c, struct imsg *imsg)
{
	struct audit_ack	 ack;
	struct pending		*p;
	audit_done_fn		 done;
	void			*arg;

	if (proto_payload(imsg->data, imsg->datalen, &ack,
	    sizeof(ack)) == -1 ||
	    memchr(ack.error, '\0', sizeof(ack.error)) == NULL) {
		conn_close(c, "malformed audit acknowledgement");
		return;
	}
	if (ack.seq == 0) {
		log_warnx("auditd could not commit a record: %s", ack.error);
		stats.failed++;
	} else
		stats.committed++;
	TAILQ_FOREACH(p, &pendings, entry)
		if (p->id == imsg->hdr.peerid)
			break;
	if (p == NULL)
		return;
	done = p->done;
	arg = p->arg;
	pending_free(p);
	if (done != NULL)
		done(arg, ack.seq != 0, ack.seq != 0 ? NULL : ack.error);
}
