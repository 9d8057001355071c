/*
 * SERVER: what sandboxd is doing, for mcpctl status and mcpd's /metrics.
 * It reads sandboxd's own counters and lists alone: nothing here reaches
 * into a sandbox or names a tenant.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "job.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

/* Counts of everyone's: for root's mcpctl and the HTTP front alone. */
int
control_allowed(uint32_t role)
{
	return role == ROLE_MCPCTL || role == ROLE_MCPD;
}

/* A PEER frame for c; its requests in progress, counted. */
static uint32_t
control_peer(struct conn *c, struct conn *to, uint32_t reqid, int64_t since)
{
	const struct client	*cl;
	const struct job	*job;
	struct sbx_peer		 p;

	memset(&p, 0, sizeof(p));
	str_copy(p.software, c->software, sizeof(p.software));
	p.role = c->role;
	p.pid = (uint32_t)c->cred.pid;
	p.uid = (uint32_t)c->cred.uid;
	p.gid = (uint32_t)c->cred.gid;
	p.since = since;
	if (c->role != ROLE_AUDITD && (cl = c->data) != NULL)
		TAILQ_FOREACH(job, &cl->jobs, entry)
			p.requests++;
	conn_compose(to, IMSG_SBX_PEER, reqid, -1, &p, sizeof(p));
	return p.requests;
}

static void
control_counts(struct sbx_server *s)
{
	const struct sandbox	*sb;
	const struct image	*img;
	uint32_t		 i;

	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (sb->persistent) {
			s->sandboxes++;
			if (sb->state == SB_RUNNING)
				s->sandboxes_running++;
		} else if (!sb->pooled && !reuse_held(sb) &&
		    sb->state != SB_STOPPING)
			s->oneshot++;
		s->execs += exec_count(sb);
	}
	TAILQ_FOREACH(img, &sbd->conf->images, entry)
		if (!img->gone)
			s->pool_target += pool_wanted(img);
	for (i = 0; i < sbd->conf->uid_slots; i++)
		s->slots_used += sbd->slots[i] != 0;
	s->slots_total = sbd->conf->uid_slots;
}

void
control_server(struct conn *c, struct imsg *imsg)
{
	struct sbx_server	 s;
	struct sbx_done		 done;
	struct audit_stats	 as;
	struct pool_stats	 ps;
	struct reuse_stats	 rs;
	struct conn		*p, *audit;
	const struct client	*cl;
	char			 hex[65];
	uint32_t		 reqid = imsg->hdr.peerid;

	memset(&s, 0, sizeof(s));
	memset(&done, 0, sizeof(done));
	for (p = sbd->listener != NULL ? listener_first(sbd->listener) : NULL;
	    p != NULL; p = listener_next(p)) {
		if (!p->up)
			continue;
		cl = p->data;
		s.requests += control_peer(p, c, reqid, cl != NULL ?
		    cl->since : 0);
		done.size++;
	}
	if ((audit = client_conn(sbd->auditd)) != NULL) {
		(void)control_peer(audit, c, reqid, sbd->auditd_since);
		done.size++;
		s.audit_connected = 1;
	}
	(void)snprintf(s.software, sizeof(s.software), "mcp-sandboxd %s",
	    MCPD_VERSION);
	str_copy(s.runc, sbd->runc_version, sizeof(s.runc));
	sodium_bin2hex(hex, sizeof(hex), sbd->conf->digest,
	    sizeof(sbd->conf->digest));
	(void)snprintf(s.config, sizeof(s.config), "sha256:%s", hex);
	s.started = sbd->started;
	s.pid = (uint32_t)getpid();
	s.protocol = MCPD_PROTO_VERSION;
	s.audit_required = sbd->conf->audit.required != 0;
	audit_get_stats(&as);
	s.audit_sent = as.sent;
	s.audit_committed = as.committed;
	s.audit_failed = as.failed;
	s.audit_waiting = as.waiting;
	s.audit_lag_ms = as.lag_ms;
	pool_get_stats(&ps);
	s.pool_ready = ps.ready;
	s.pool_starting = ps.starting;
	s.pool_claimed = ps.claimed;
	s.pool_empty = ps.empty;
	s.pool_failed = ps.failed;
	reuse_get_stats(&rs);
	s.reuse_kept = rs.kept;
	s.reuse_claimed = rs.claimed;
	s.reuse_wiped = rs.wiped;
	s.reuse_failed = rs.failed;
	control_counts(&s);
	s.peers = (uint32_t)done.size;
	conn_compose(c, IMSG_SBX_SERVERINFO, reqid, -1, &s, sizeof(s));
	conn_compose(c, IMSG_SBX_DONE, reqid, -1, &done, sizeof(done));
}
