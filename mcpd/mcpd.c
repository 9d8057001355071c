/*
 * mcpd: the unprivileged MCP front.  Started as root it gives up its
 * privileges at once: its own user, no capabilities, Landlock, and a
 * seccomp allowlist that refuses execve.  It keeps connections to sandboxd
 * and auditd, and proves them alive with pings: the one to sandboxd goes on
 * to auditd and back, the other goes to auditd directly.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "acl.h"
#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "util.h"

#define PING_INTERVAL_MS	15000	/* after a good answer */
#define PING_RETRY_MS		1000	/* after "next hop unreachable" */
#define PING_DEADLINE_MS	10000	/* for any answer at all */
#define PING_FAILS_LOGGED	5	/* bad answers in a row before a warning */

/* One sibling daemon mcpd depends on. */
struct sibling {
	const char	*name;
	struct client	*client;
	struct event	*ev_ping;
	uint32_t	 ping_flags;
	uint64_t	 cookie;	/* of the ping awaiting its pong */
	uint64_t	 sent_ns;	/* when it left; 0 when none waits */
	int		 answered;	/* a good pong since connecting */
	unsigned int	 fails;		/* bad pongs in a row */
};

static struct daemon	 mcpd;
static struct acl	 mcpd_acl;
static struct sibling	 sib_sandboxd = { .name = "sandboxd",
			    .ping_flags = PING_VIA_AUDITD };
static struct sibling	 sib_auditd = { .name = "auditd" };

static void
mcpd_update_status(void)
{
	daemon_status(&mcpd, "sandboxd %s, auditd %s",
	    client_conn(sib_sandboxd.client) ? "up" : "down",
	    client_conn(sib_auditd.client) ? "up" : "down");
}

static void
mcpd_path(uint32_t path, char *buf, size_t len)
{
	uint32_t	 r;

	/* mcpd, then the hops in the order a relayed ping takes them. */
	snprintf(buf, len, "mcpd");
	for (r = ROLE_SANDBOXD; r <= ROLE_AUDITD; r++)
		if (path & (1U << r)) {
			strncat(buf, " -> ", len - strlen(buf) - 1);
			strncat(buf, proto_role_name(r), len - strlen(buf) - 1);
		}
}

static void
mcpd_ping_arm(struct sibling *s, unsigned int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(s->ev_ping, &tv);
}

static void
mcpd_ping_send(struct sibling *s)
{
	struct proto_ping	 ping;
	struct conn		*c;

	if ((c = client_conn(s->client)) == NULL)
		return;
	memset(&ping, 0, sizeof(ping));
	randombytes_buf(&s->cookie, sizeof(s->cookie));
	ping.cookie = s->cookie;
	ping.sent_ns = s->sent_ns = mono_ns();
	ping.flags = s->ping_flags;
	conn_compose(c, IMSG_PING, 0, -1, &ping, sizeof(ping));
	mcpd_ping_arm(s, PING_DEADLINE_MS);
}

/* Time for the next ping, or the last one went unanswered too long. */
static void
mcpd_ping_timer(evutil_socket_t fd, short events, void *arg)
{
	struct sibling	*s = arg;
	struct conn	*c;

	if ((c = client_conn(s->client)) == NULL)
		return;
	if (s->sent_ns != 0) {
		conn_close(c, "no answer to a ping in %d ms",
		    PING_DEADLINE_MS);
		return;
	}
	mcpd_ping_send(s);
}

static void
mcpd_pong(struct sibling *s, struct conn *c, struct imsg *imsg)
{
	struct proto_ping	 pong;
	char			 path[64];
	double			 ms;

	if (proto_payload(imsg->data, imsg->datalen, &pong,
	    sizeof(pong)) == -1) {
		conn_close(c, "malformed pong");
		return;
	}
	if (s->sent_ns == 0 || pong.cookie != s->cookie) {
		conn_close(c, "pong for a ping we did not send");
		return;
	}
	ms = (double)(mono_ns() - s->sent_ns) / 1e6;
	s->sent_ns = 0;
	mcpd_path(pong.path, path, sizeof(path));
	if (pong.status != PING_OK) {
		/* At start-up the next hop is often still connecting. */
		if (++s->fails == PING_FAILS_LOGGED)
			log_warnx("ping %s: %s, %u times in a row", path,
			    pong.status == PING_UNREACHABLE ?
			    "next hop unreachable" :
			    "next hop did not answer", s->fails);
		else
			log_debug("ping %s: next hop not answering (%.3f ms)",
			    path, ms);
		s->answered = 0;
		mcpd_ping_arm(s, PING_RETRY_MS);
		return;
	}
	if (!s->answered)
		log_info("ping %s -> mcpd: %.3f ms", path, ms);
	else
		log_debug("ping %s -> mcpd: %.3f ms", path, ms);
	s->answered = 1;
	s->fails = 0;
	mcpd_ping_arm(s, PING_INTERVAL_MS);
}

static const char *
mcpd_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	return acl_check(&mcpd_acl, uc, role, ROLE_BIT(ROLE_SANDBOXD) |
	    ROLE_BIT(ROLE_AUDITD), why, len);
}

static void
mcpd_up(struct conn *c)
{
	struct sibling	*s = c->arg;

	s->sent_ns = 0;
	s->answered = 0;
	s->fails = 0;
	mcpd_ping_send(s);
	mcpd_update_status();
}

static void
mcpd_down(struct conn *c, const char *why)
{
	struct sibling	*s = c->arg;

	evtimer_del(s->ev_ping);
	s->sent_ns = 0;
	mcpd_update_status();
}

static void
mcpd_dispatch(struct conn *c, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_PONG:
		mcpd_pong(c->arg, c, imsg);
		break;
	default:
		conn_close(c, "unexpected message type %u", imsg->hdr.type);
		break;
	}
}

static const struct conn_ops mcpd_ops = {
	.allow = mcpd_allow,
	.up = mcpd_up,
	.dispatch = mcpd_dispatch,
	.down = mcpd_down,
};

static void
mcpd_sandbox(const struct policy *conf, const char *confdir)
{
	const struct priv_path	 paths[] = {
		{ confdir, LL_READ },
	};

	if (mcpd.privileged)
		priv_drop(conf->uid, conf->gid);
	priv_no_new_privs();
	priv_landlock(paths, nitems(paths), NULL, 0, 0);
	/* The base set has no execve, fork, ptrace or file creation. */
	priv_seccomp(priv_base_syscalls, priv_nbase_syscalls);
}

static void
mcpd_sibling(struct sibling *s, const char *path, enum proc_role role,
    const struct proc_settings *set)
{
	if ((s->ev_ping = evtimer_new(mcpd.base, mcpd_ping_timer, s)) ==
	    NULL)
		fatalx("cannot create a ping timer");
	s->client = client_new(mcpd.base, s->name, path, role, set, &mcpd_ops,
	    s);
}

int
main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct policy		*conf;

	daemon_init(&mcpd, "mcpd", argc, argv);
	conf = mcpd.conf;
	if (policy_resolve(conf, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT) ==
	    -1)
		exit(1);
	acl_init(&mcpd_acl, conf, mcpd.privileged);
	if (sodium_init() == -1)
		fatalx("libsodium initialisation failed");

	daemon_start(&mcpd);
	mcpd_sandbox(conf, mcpd.confdir);

	memset(&set, 0, sizeof(set));
	set.self = ROLE_MCPD;
	set.maxframe = PROTO_MAX_FRAME;
	mcpd_sibling(&sib_sandboxd, conf->sandbox_socket, ROLE_SANDBOXD, &set);
	mcpd_sibling(&sib_auditd, conf->audit.socket, ROLE_AUDITD, &set);
	daemon_ready(&mcpd, "connecting to sandboxd and auditd");
	daemon_loop(&mcpd);

	client_free(sib_sandboxd.client);
	client_free(sib_auditd.client);
	event_free(sib_sandboxd.ev_ping);
	event_free(sib_auditd.ev_ping);
	daemon_free(&mcpd);
	return 0;
}
