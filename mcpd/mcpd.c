/*
 * mcpd: the unprivileged MCP front, and the only process of the suite
 * that reads JSON or HTTP.
 *
 * As a daemon it serves MCP over HTTP on the sockets systemd passes or the
 * ones mcpd.conf lists; started as root it gives up its privileges once
 * they are open: its own user, no capabilities, Landlock, and a seccomp
 * allowlist that refuses execve.  With --stdio it serves one client on
 * stdin and stdout as the user who started it, whose uid is its tenant.
 *
 * It keeps a connection to sandboxd (and, as a daemon, to auditd) and
 * proves them alive with pings: the one to sandboxd goes on to auditd and
 * back, the other goes to auditd directly.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/ioctl.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "acl.h"
#include "daemon.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "oauth.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "sbxcall.h"
#include "sd.h"
#include "sock.h"
#include "tasks.h"
#include "util.h"

#define PING_INTERVAL_MS	5000	/* after a good answer: /healthz's age */
#define PING_RETRY_MS		1000	/* after "next hop unreachable" */
#define PING_DEADLINE_MS	10000	/* for any answer at all */
#define PING_FAILS_LOGGED	5	/* bad answers in a row: warn */

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

size_t			 mcpd_max_message = MCPD_MAX_MESSAGE;
const struct policy	*mcpd_conf;
struct event_base	*mcp_base;

static struct daemon	 mcpd;
static struct acl	 mcpd_acl;
static int		 stdio_mode;
static struct sibling	 sib_sandboxd = { .name = "sandboxd",
			    .ping_flags = PING_VIA_AUDITD };
static struct sibling	 sib_auditd = { .name = "auditd" };

static void
mcpd_update_status(void)
{
	if (stdio_mode)
		return;
	daemon_status(&mcpd, "sandboxd %s, auditd %s; %u sessions, %u "
	    "requests in flight",
	    client_conn(sib_sandboxd.client) ? "up" : "down",
	    client_conn(sib_auditd.client) ? "up" : "down", session_count(),
	    mcp_inflight(NULL));
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
		if (s == &sib_sandboxd)
			metrics_sandboxd(1, 0);
		mcpd_ping_arm(s, PING_RETRY_MS);
		return;
	}
	if (!s->answered)
		log_info("ping %s -> mcpd: %.3f ms", path, ms);
	else
		log_debug("ping %s -> mcpd: %.3f ms", path, ms);
	s->answered = 1;
	s->fails = 0;
	if (s == &sib_sandboxd)
		metrics_sandboxd(1, 1);
	mcpd_ping_arm(s, PING_INTERVAL_MS);
}

static const char *
mcpd_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	if (stdio_mode) {
		/* sandboxd runs as root, auditd as its user; in tests, as
		 * we do. */
		if (uc->uid == getuid() || (role == ROLE_SANDBOXD &&
		    uc->uid == 0) || (role == ROLE_AUDITD &&
		    uc->uid == mcpd_conf->audit.uid))
			return NULL;
		snprintf(why, len, "uid %u may not act as %s",
		    (unsigned)uc->uid, proto_role_name(role));
		return why;
	}
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
	if (s == &sib_sandboxd) {
		/* Whether it reaches auditd, its first pong says. */
		metrics_sandboxd(1, 0);
		sbx_calls_up(c);
	} else {
		metrics_auditd(1);
		maudit_up(c);
		sbx_calls_audit(1);
	}
	mcpd_ping_send(s);
	mcpd_update_status();
}

static void
mcpd_down(struct conn *c, const char *why)
{
	struct sibling	*s = c->arg;

	evtimer_del(s->ev_ping);
	s->sent_ns = 0;
	if (s == &sib_sandboxd) {
		metrics_sandboxd(0, 0);
		sbx_calls_down(why);
	} else {
		metrics_auditd(0);
		maudit_down();
		sbx_calls_audit(0);
	}
	mcpd_update_status();
}

static void
mcpd_dispatch(struct conn *c, struct imsg *imsg)
{
	struct sibling	*s = c->arg;

	if (imsg->hdr.type == IMSG_PONG) {
		mcpd_pong(s, c, imsg);
		return;
	}
	if (s == &sib_sandboxd && imsg->hdr.type >= IMSG_SBX_CREATE &&
	    imsg->hdr.type < IMSG_PRIV_START) {
		sbx_calls_dispatch(imsg);
		return;
	}
	if (s == &sib_auditd && imsg->hdr.type == IMSG_AUDIT_ACK) {
		maudit_ack(imsg);
		return;
	}
	conn_close(c, "unexpected message type %u", imsg->hdr.type);
}

static const struct conn_ops mcpd_ops = {
	.allow = mcpd_allow,
	.up = mcpd_up,
	.dispatch = mcpd_dispatch,
	.down = mcpd_down,
};

static struct httpd_socket	 socks[SD_LISTEN_FDS_MAX];
static int			 nsocks;

/* libevent asks how much a socket has to read before reading it. */
static const struct priv_syscall mcpd_syscalls[] = {
	SC_ARG(ioctl, SCMP_A1(SCMP_CMP_EQ, FIONREAD)),
	/* A download link's file, read where sandboxd handed it over. */
	SC(pread64),
};

/*
 * SIGHUP reads the configuration and the passwd file again: opened to
 * read, never to create or write, whatever Landlock can do here.
 */
static const struct priv_syscall reload_syscalls[] = {
	SC_ARG(openat, SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT |
	    O_TRUNC, O_RDONLY)),
};

/*
 * Fetching an OAuth issuer's keys: TCP to it, UDP to the resolver (the
 * base set has connect, sendto and recvfrom).  Landlock limits the TCP
 * ports.
 */
static const struct priv_syscall fetch_syscalls[] = {
	SC_ARG(socket, SCMP_A0(SCMP_CMP_EQ, AF_INET)),
	SC_ARG(socket, SCMP_A0(SCMP_CMP_EQ, AF_INET6)),
	SC(setsockopt),
};

/* What stdio mode needs for copying files in and out of sandboxes. */
static const struct priv_syscall stdio_syscalls[] = {
	SC(openat), SC(mkdirat), SC(mkdir), SC(getdents64), SC(fchmod),
	SC(unlinkat), SC(unlink), SC(rename),
	SC(renameat), SC(renameat2), SC(fsync), SC(ftruncate), SC(umask),
	SC(readlinkat), SC(readlink), SC(getcwd), SC(fchown), SC(getgid),
	SC(getegid),
};

static void
mcpd_sandbox(const struct policy *conf, const struct tenant *t)
{
	struct priv_path	 paths[1 + 64];
	struct priv_syscall	*list;
	uint16_t		 ports[OAUTH_PORTS_MAX];
	size_t			 np = 0, i, n, nports = 0, nfetch;

	paths[np].path = mcpd.confdir;
	paths[np++].access = LL_READ;
	if (stdio_mode) {
		/*
		 * Stay the user we are: the uid is the tenant.  Root keeps
		 * no capability, so it joins the sockets' group, without
		 * which auditd's socket would refuse it.
		 */
		if (mcpd.privileged) {
			priv_join_group(conf->group_gid);
			priv_drop_caps();
		}
		for (i = 0; t != NULL && i < t->npaths && np < nitems(paths);
		    i++) {
			paths[np].path = t->paths[i].path;
			paths[np++].access = t->paths[i].readonly ? LL_READ :
			    LL_READ | LL_WRITE;
		}
	} else {
		/* Tenant users named anew on SIGHUP are looked up there. */
		paths[np].path = POLICY_PASSWD;
		paths[np++].access = LL_READ;
		/* And a renewed certificate. */
		if (tls_context() != NULL) {
			paths[np].path = conf->tls_cert;
			paths[np++].access = LL_READ;
			paths[np].path = conf->tls_key;
			paths[np++].access = LL_READ;
		}
		/* And an OAuth key file, or the issuer's keys fetched. */
		if (oauth_key_file() != NULL) {
			paths[np].path = oauth_key_file();
			paths[np++].access = LL_READ;
		}
		nports = oauth_ports(ports);
		if (mcpd.privileged)
			priv_drop(conf->uid, conf->gid);
	}
	/* Listening stamps our credentials: after the drop, before seccomp. */
	for (i = 0; i < (size_t)nsocks; i++)
		if (sock_listen(socks[i].fd) == -1)
			fatalx("cannot listen on %s", socks[i].name);
	priv_no_new_privs();
	priv_landlock(paths, np, ports, nports, 0);
	/*
	 * The base set has no execve, fork, ptrace or file creation; stdio
	 * mode adds what copies to and from this machine need, the daemon
	 * what a reload needs.
	 */
	nfetch = nports > 0 ? nitems(fetch_syscalls) : 0;
	n = priv_nbase_syscalls + nitems(mcpd_syscalls) +
	    (stdio_mode ? nitems(stdio_syscalls) : nitems(reload_syscalls)) +
	    nfetch;
	list = xcalloc(n, sizeof(*list));
	memcpy(list, priv_base_syscalls, priv_nbase_syscalls *
	    sizeof(*list));
	memcpy(list + priv_nbase_syscalls, mcpd_syscalls,
	    sizeof(mcpd_syscalls));
	if (stdio_mode)
		memcpy(list + priv_nbase_syscalls + nitems(mcpd_syscalls),
		    stdio_syscalls, sizeof(stdio_syscalls));
	else
		memcpy(list + priv_nbase_syscalls + nitems(mcpd_syscalls),
		    reload_syscalls, sizeof(reload_syscalls));
	if (nfetch > 0)
		memcpy(list + n - nfetch, fetch_syscalls,
		    sizeof(fetch_syscalls));
	priv_seccomp(list, n);
	free(list);
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

/* --- Listening sockets ---------------------------------------------- */


/* Is a TCP socket bound to the loopback (127/8, ::1, or 127/8 mapped)? */
static int
sock_loopback(int fd)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	const struct in6_addr	*a6;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >>
		    24) == 127;
	if (ss.ss_family != AF_INET6)
		return 0;
	a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) ||
	    (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/*
 * A listening socket, from a listen statement or systemd.  Plain HTTP
 * off the loopback carries bearer tokens in the clear: only where its
 * listen statement says tls, or plaintext (a TLS proxy in front).
 */
static void
sock_add(int fd, int is_unix, const struct listen_addr *la,
    const char *name)
{
	if (nsocks == (int)nitems(socks))
		fatalx("too many listening sockets");
	if (!is_unix && !sock_loopback(fd) &&
	    (la == NULL || (!la->tls && !la->plaintext)))
		fatalx("%s: plain HTTP off the loopback would carry bearer "
		    "tokens in the clear: give it a listen statement with "
		    "\"tls\", or \"plaintext\" if a TLS proxy sits in front",
		    name);
	socks[nsocks].fd = fd;
	socks[nsocks].is_unix = is_unix;
	socks[nsocks].la = la;
	str_copy(socks[nsocks].name, name, sizeof(socks[nsocks].name));
	nsocks++;
}

static int
bind_tcp(const struct listen_addr *la, char *name, size_t len)
{
	struct addrinfo	 hints, *res, *ai;
	char		 port[8], host[64];
	int		 fd = -1, e, on = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", la->port);
	if ((e = getaddrinfo(strcmp(la->host, "*") == 0 ? NULL : la->host,
	    port, &hints, &res)) != 0)
		fatalx("listen on %s port %u: %s", la->host, la->port,
		    gai_strerror(e));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype |
		    SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol)) == -1)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
			    sizeof(on));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd == -1)
		fatal("listen on %s port %u", la->host, la->port);
	if (getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host),
	    NULL, 0, NI_NUMERICHOST) != 0)
		str_copy(host, la->host, sizeof(host));
	snprintf(name, len, "%s%s%s:%u", ai->ai_family == AF_INET6 ? "[" :
	    "", host, ai->ai_family == AF_INET6 ? "]" : "", la->port);
	freeaddrinfo(res);
	return fd;
}

/* A socket systemd passed: which listen statement is it, if any? */
static const struct listen_addr *
match_passed(const struct policy *conf, int fd, int *is_unix, char *name,
    size_t len)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	struct listen_addr	*la;
	char			 host[64], port[8] = "";

	*is_unix = 0;
	snprintf(name, len, "fd %d", fd);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return NULL;
	if (ss.ss_family == AF_UNIX) {
		*is_unix = 1;
		snprintf(name, len, "%s",
		    ((struct sockaddr_un *)&ss)->sun_path);
		TAILQ_FOREACH(la, &conf->listens, entry)
			if (la->type == LISTEN_UNIX &&
			    strcmp(la->path, name) == 0)
				return la;
		return NULL;
	}
	if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port,
	    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return NULL;
	snprintf(name, len, "%s:%s", host, port);
	TAILQ_FOREACH(la, &conf->listens, entry)
		if (la->type == LISTEN_TCP && la->port == atoi(port))
			return la;
	return NULL;
}

static void
mcpd_listeners(const struct policy *conf)
{
	struct listen_addr	*la;
	const struct listen_addr *m;
	char			 name[128];
	int			 i, fd, is_unix;

	if (mcpd.sdfds.n > 0) {
		for (i = 0; i < mcpd.sdfds.n; i++) {
			m = match_passed(conf, mcpd.sdfds.fd[i], &is_unix,
			    name, sizeof(name));
			sock_add(mcpd.sdfds.fd[i], is_unix, m, name);
		}
		return;
	}
	TAILQ_FOREACH(la, &conf->listens, entry) {
		if (la->type == LISTEN_UNIX) {
			str_copy(name, la->path, sizeof(name));
			if (strrchr(name, '/') != NULL && strrchr(name, '/') !=
			    name) {
				*strrchr(name, '/') = '\0';
				daemon_mkdir(name, 0755);
			}
			if ((fd = sock_unix_bind(la->path, la->mode, conf->uid,
			    conf->group_gid)) == -1)
				fatalx("cannot listen on %s", la->path);
			sock_add(fd, 1, la, la->path);
		} else {
			fd = bind_tcp(la, name, sizeof(name));
			sock_add(fd, 0, la, name);
		}
	}
	if (nsocks == 0)
		fatalx("nothing to listen on: add a listen statement to %s, "
		    "or use --stdio", mcpd.conffile);
}

/* The listeners with tls: their certificate, read while we are root. */
static void
mcpd_tls(const struct policy *conf)
{
	char	 err[PATH_MAX + 256];
	int	 i;

	for (i = 0; i < nsocks; i++)
		if (socks[i].la != NULL && socks[i].la->tls)
			break;
	if (i == nsocks)
		return;
	if (tls_load(conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
}

/* mcpd -n: the files of the listeners with tls make a TLS context. */
static int
mcpd_check(struct daemon *d)
{
	char	 err[PATH_MAX + 256];

	if (tls_check(d->conf, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* A key file must hold keys mcpd can use. */
	if (d->conf->oauth.enabled && d->conf->oauth.jwks[0] == '/') {
		if (oauth_init(NULL, d->conf, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			oauth_free();
			return 1;
		}
		oauth_free();
	}
	return 0;
}

static void
mcpd_reloaded(struct daemon *d)
{
	oauth_reload();
	httpd_reloaded();
	if (!mcp_stdio_mode)
		links_reload();
}

static void
mcpd_stdio_done(void)
{
	event_base_loopexit(mcpd.base, NULL);
}

static void
usage_stdio(int *argc, char *argv[])
{
	int	 i, j;

	/* --stdio (or -s) is ours; daemon_init() reads the rest. */
	for (i = j = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--stdio") == 0 ||
		    strcmp(argv[i], "-s") == 0) {
			stdio_mode = 1;
			continue;
		}
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[j++] = argv[i++];
			break;
		}
		argv[j++] = argv[i];
	}
	argv[j] = NULL;
	*argc = j;
}

int
mcpd_main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct policy		*conf;
	struct mcp_session	*sess = NULL;
	struct mcp_peer		 peer;
	const struct tenant	*t = NULL;
	char			 buf[32], err[PATH_MAX + 256];

	usage_stdio(&argc, argv);
	daemon_init(&mcpd, "mcpd", argc, argv, mcpd_check);
	conf = mcpd.conf;
	mcpd_conf = conf;
	if (stdio_mode) {
		/* stderr is the client's log; nothing may go to stdout. */
		log_init(LOG_DEST_STDERR, mcpd.verbose, "mcpd");
		mcpd.debug = 1;
		/* One client, for as long as it runs: a new one reads anew. */
		mcpd.no_reload = "mcpd --stdio does not reload its "
		    "configuration: the next one started reads it";
		if (policy_resolve(conf, POLICY_RESOLVE_TENANTS |
		    POLICY_RESOLVE_AUDIT | (mcpd.privileged ?
		    POLICY_RESOLVE_MCPD : 0)) == -1)
			exit(1);
		if ((t = policy_tenant_by_uid(conf, getuid())) == NULL)
			fatalx("uid %u is not a tenant in %s: add \"uid\" to a "
			    "tenant", (unsigned)getuid(), mcpd.conffile);
	} else {
		if (policy_resolve(conf, POLICY_RESOLVE_MCPD |
		    POLICY_RESOLVE_AUDIT | POLICY_RESOLVE_TENANTS) == -1)
			exit(1);
		acl_init(&mcpd_acl, conf, mcpd.privileged);
		mcpd_listeners(conf);
		mcpd_tls(conf);
		mcpd.reload_who = POLICY_MCPD;
		mcpd.reload_done = mcpd_reloaded;
	}
	if (sodium_init() == -1)
		fatalx("libsodium initialisation failed");
	/* jansson would read /dev/urandom for this later, under seccomp. */
	json_object_seed(randombytes_random());

	daemon_start(&mcpd);
	mcp_base = mcpd.base;
	if (!stdio_mode && oauth_init(mcpd.base, conf, err,
	    sizeof(err)) == -1)
		fatalx("%s", err);
	metrics_init();
	mcp_init(stdio_mode);
	if (stdio_mode) {
		/* Before the sandbox: the descriptors are shuffled. */
		memset(&peer, 0, sizeof(peer));
		peer.tenant = t;
		snprintf(buf, sizeof(buf), "uid:%u", (unsigned)getuid());
		crypto_hash_sha256(peer.principal, (unsigned char *)buf,
		    strlen(buf));
		snprintf(peer.desc, sizeof(peer.desc), "tenant %s (uid %u)",
		    t->name, (unsigned)getuid());
		snprintf(peer.cred, sizeof(peer.cred), "uid:%u",
		    (unsigned)getuid());
		if ((sess = session_new(MCP_T_STDIO, &peer)) == NULL)
			fatalx("cannot create the session");
		stdio_start(mcpd.base, sess, mcpd_stdio_done);
	}
	mcpd_sandbox(conf, t);

	sbx_calls_init(mcpd.base);
	/*
	 * The daemon's place at auditd is kept for it, and sandboxd refuses
	 * what it cannot record; a stdio client's uid may have filled its
	 * own places, so mcpd --stdio sends nothing it cannot record.
	 */
	if (stdio_mode && conf->audit.required)
		sbx_calls_audit_gate();
	tools_init();
	session_expire_start(mcpd.base);
	memset(&set, 0, sizeof(set));
	set.self = stdio_mode ? ROLE_MCPD_STDIO : ROLE_MCPD;
	set.maxframe = PROTO_MAX_FRAME;
	/* sandboxd hands over the files download links serve. */
	set.flags = IMSGBUF_FDPASS;
	mcpd_sibling(&sib_sandboxd, conf->sandbox_socket, ROLE_SANDBOXD, &set);
	set.flags = 0;
	mcpd_sibling(&sib_auditd, conf->audit.socket, ROLE_AUDITD, &set);
	if (stdio_mode)
		log_info("serving MCP on stdin and stdout as %s", peer.desc);
	else {
		httpd_start(mcpd.base, conf, socks, nsocks);
		oauth_start();
		links_init(mcpd.base);
		daemon_ready(&mcpd, "serving MCP on %d socket%s", nsocks,
		    nsocks == 1 ? "" : "s");
	}
	daemon_loop(&mcpd);

	mcp_shutdown();
	tasks_shutdown();
	session_shutdown();
	sbx_calls_shutdown();
	maudit_stop();
	if (stdio_mode)
		stdio_stop();
	else
		httpd_stop();
	tls_free();
	oauth_free();
	client_free(sib_sandboxd.client);
	event_free(sib_sandboxd.ev_ping);
	client_free(sib_auditd.client);
	event_free(sib_auditd.ev_ping);
	daemon_free(&mcpd);
	return 0;
}
