/*
 * mcp-sandboxd: the privileged daemon, and the only one that will run
 * containers.  It serves mcpd and mcpctl on its socket and keeps a
 * connection to auditd, through which it relays mcpd's pings.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "acl.h"
#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

#define SANDBOXD_MAXCONNS	256
#define RELAY_TIMEOUT_MS	5000

/* A ping from mcpd waiting for auditd's answer. */
struct relay {
	TAILQ_ENTRY(relay)	 entry;
	uint32_t		 id;		/* our peerid towards auditd */
	struct conn		*from;
	uint32_t		 from_peerid;
	struct proto_ping	 ping;
	struct event		*ev_timeout;
};

static struct daemon		 sandboxd;
static struct acl		 sandboxd_acl;
static struct client		*sandboxd_auditd;
static TAILQ_HEAD(, relay)	 relays = TAILQ_HEAD_INITIALIZER(relays);
static uint32_t			 relay_next_id = 1;

static void
relay_free(struct relay *r)
{
	TAILQ_REMOVE(&relays, r, entry);
	event_free(r->ev_timeout);
	free(r);
}

static void
relay_answer(struct relay *r, uint32_t status, uint32_t path)
{
	r->ping.status = status;
	r->ping.path = path | (1U << ROLE_SANDBOXD);
	conn_compose(r->from, IMSG_PONG, r->from_peerid, -1, &r->ping,
	    sizeof(r->ping));
	relay_free(r);
}

static void
relay_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct relay	*r = arg;

	log_warnx("auditd did not answer a ping within %d ms",
	    RELAY_TIMEOUT_MS);
	relay_answer(r, PING_TIMEOUT, r->ping.path);
}

static void
sandboxd_ping(struct conn *c, struct imsg *imsg)
{
	struct proto_ping	 ping;
	struct conn		*audit;
	struct relay		*r;
	struct timeval		 tv = { RELAY_TIMEOUT_MS / 1000,
				    (RELAY_TIMEOUT_MS % 1000) * 1000 };

	if (proto_payload(imsg->data, imsg->datalen, &ping,
	    sizeof(ping)) == -1) {
		conn_close(c, "malformed ping (%zu bytes)", imsg->datalen);
		return;
	}
	if (!(ping.flags & PING_VIA_AUDITD)) {
		conn_pong(c, imsg, ROLE_SANDBOXD, PING_OK);
		return;
	}
	if ((audit = client_conn(sandboxd_auditd)) == NULL) {
		conn_pong(c, imsg, ROLE_SANDBOXD, PING_UNREACHABLE);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->id = relay_next_id++;
	r->from = c;
	r->from_peerid = imsg->hdr.peerid;
	r->ping = ping;
	if ((r->ev_timeout = evtimer_new(sandboxd.base, relay_timeout, r)) ==
	    NULL)
		fatalx("cannot create a relay timer");
	TAILQ_INSERT_TAIL(&relays, r, entry);
	evtimer_add(r->ev_timeout, &tv);
	ping.flags &= ~PING_VIA_AUDITD;
	conn_compose(audit, IMSG_PING, r->id, -1, &ping, sizeof(ping));
}

/* mcpd and mcpctl. */

static const char *
sandboxd_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	return acl_check(&sandboxd_acl, uc, role, ROLE_BIT(ROLE_MCPD) |
	    ROLE_BIT(ROLE_MCPCTL), why, len);
}

static void
sandboxd_up_mcpd(struct conn *c)
{
}

static void
sandboxd_down_mcpd(struct conn *c, const char *why)
{
	struct relay	*r, *next;

	/* Forget what this peer was waiting for. */
	for (r = TAILQ_FIRST(&relays); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->from == c)
			relay_free(r);
	}
}

static void
sandboxd_dispatch_mcpd(struct conn *c, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_PING:
		sandboxd_ping(c, imsg);
		break;
	default:
		conn_close(c, "unexpected message type %u", imsg->hdr.type);
		break;
	}
}

static const struct conn_ops sandboxd_mcpd_ops = {
	.allow = sandboxd_allow,
	.up = sandboxd_up_mcpd,
	.dispatch = sandboxd_dispatch_mcpd,
	.down = sandboxd_down_mcpd,
};

/* auditd. */

static const char *
sandboxd_allow_auditd(const struct ucred *uc, uint32_t role, char *why,
    size_t len, void *arg)
{
	return acl_check(&sandboxd_acl, uc, role, ROLE_BIT(ROLE_AUDITD), why,
	    len);
}

static void
sandboxd_up_auditd(struct conn *c)
{
	daemon_status(&sandboxd, "auditd connected");
}

static void
sandboxd_down_auditd(struct conn *c, const char *why)
{
	struct relay	*r;

	daemon_status(&sandboxd, "auditd unreachable: %s", why);
	while ((r = TAILQ_FIRST(&relays)) != NULL)
		relay_answer(r, PING_UNREACHABLE, r->ping.path);
}

static void
sandboxd_dispatch_auditd(struct conn *c, struct imsg *imsg)
{
	struct proto_ping	 ping;
	struct relay		*r;

	switch (imsg->hdr.type) {
	case IMSG_PONG:
		if (proto_payload(imsg->data, imsg->datalen, &ping,
		    sizeof(ping)) == -1) {
			conn_close(c, "malformed pong");
			return;
		}
		TAILQ_FOREACH(r, &relays, entry)
			if (r->id == imsg->hdr.peerid)
				break;
		if (r == NULL) {
			log_debug("auditd answered a ping nobody waits for");
			return;
		}
		relay_answer(r, ping.status, ping.path);
		break;
	default:
		conn_close(c, "unexpected message type %u", imsg->hdr.type);
		break;
	}
}

static const struct conn_ops sandboxd_auditd_ops = {
	.allow = sandboxd_allow_auditd,
	.up = sandboxd_up_auditd,
	.dispatch = sandboxd_dispatch_auditd,
	.down = sandboxd_down_auditd,
};

static const struct priv_syscall sandboxd_syscalls[] = {
	SC(openat), SC(unlink), SC(mkdir),
};

static void
sandboxd_sandbox(void)
{
	struct priv_syscall	*list;
	size_t			 n;

	/*
	 * sandboxd keeps root: it will run runc.  It gets a seccomp
	 * allowlist of its own so that a compromise cannot reach the rest
	 * of the kernel's surface.
	 */
	n = priv_nbase_syscalls + nitems(sandboxd_syscalls);
	list = xcalloc(n, sizeof(*list));
	memcpy(list, priv_base_syscalls, priv_nbase_syscalls * sizeof(*list));
	memcpy(list + priv_nbase_syscalls, sandboxd_syscalls,
	    sizeof(sandboxd_syscalls));
	priv_seccomp(list, n);
	free(list);
}

int
main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct listener		*l;
	struct policy		*conf;
	struct relay		*r;
	int			 fd;

	daemon_init(&sandboxd, "mcp-sandboxd", argc, argv);
	conf = sandboxd.conf;
	if (policy_resolve(conf, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT) ==
	    -1)
		exit(1);
	acl_init(&sandboxd_acl, conf, sandboxd.privileged);

	daemon_start(&sandboxd);
	daemon_mkdir(conf->run_dir, 0755);
	daemon_mkdir(conf->state_dir, 0755);
	fd = daemon_listen_unix(&sandboxd, "sandboxd", conf->sandbox_socket,
	    0660, sandboxd.privileged ? 0 : (uid_t)-1,
	    sandboxd.privileged ? conf->group_gid : (gid_t)-1);

	if (sock_listen(fd) == -1)
		fatalx("cannot listen on %s", conf->sandbox_socket);
	sandboxd_sandbox();

	memset(&set, 0, sizeof(set));
	set.self = ROLE_SANDBOXD;
	set.maxframe = PROTO_MAX_FRAME;
	set.maxconns = SANDBOXD_MAXCONNS;
	l = listener_new(sandboxd.base, fd, conf->sandbox_socket, &set,
	    &sandboxd_mcpd_ops, NULL);
	sandboxd_auditd = client_new(sandboxd.base, "auditd",
	    conf->audit.socket, ROLE_AUDITD, &set, &sandboxd_auditd_ops, NULL);
	daemon_ready(&sandboxd, "listening on %s", conf->sandbox_socket);
	daemon_loop(&sandboxd);

	while ((r = TAILQ_FIRST(&relays)) != NULL)
		relay_free(r);
	client_free(sandboxd_auditd);
	listener_free(l);
	daemon_free(&sandboxd);
	return 0;
}
