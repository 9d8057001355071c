/*
 * mcp-sandboxd: the privileged daemon, and the only one that runs
 * containers.  It serves mcpd and mcpctl on its socket, records every
 * operation with auditd, and relays mcpd's pings to auditd.
 *
 * At start it forks its privileged helper (priv.c), which keeps root and
 * runs runc; the main process then confines itself with Landlock and a
 * seccomp allowlist without execve or mount, and serves requests.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include <event2/event.h>
#include <sodium.h>

#include "acl.h"
#include "auditbody.h"
#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "sock.h"
#include "util.h"
#include "job.h"
#include "sandboxd.h"

/* Every uid's, any one uid's, and mcpd's and mcpctl's besides. */
#define SANDBOXD_MAXCONNS	256
#define SANDBOXD_LOCK		"sandboxd.lock"	/* in the run directory */
#define SANDBOXD_LOCK_WAIT_MS	30000
#define SANDBOXD_MAXPERUID	16
#define SANDBOXD_MAXRESERVED	32
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
static struct sandboxd		 sandboxd_state;
static struct acl		 sandboxd_acl;
static TAILQ_HEAD(, relay)	 relays = TAILQ_HEAD_INITIALIZER(relays);
static uint32_t			 relay_next_id = 1;
static pid_t			 priv_pid;
static int			 start_recorded;

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
	if ((audit = client_conn(sbd->auditd)) == NULL) {
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
	    ROLE_BIT(ROLE_MCPD_STDIO) | ROLE_BIT(ROLE_MCPCTL), why, len);
}

/* mcpd's uid and root's (mcpctl): no tenant's uid can crowd them out. */
static int
sandboxd_reserved(const struct ucred *uc, void *arg)
{
	char	 why[128];

	return acl_check(&sandboxd_acl, uc, ROLE_NONE, ROLE_BIT(ROLE_MCPD) |
	    ROLE_BIT(ROLE_MCPCTL), why, sizeof(why)) == NULL;
}

static void
sandboxd_up_mcpd(struct conn *c)
{
	struct client	*cl;

	cl = xcalloc(1, sizeof(*cl));
	cl->c = c;
	cl->since = time(NULL);
	TAILQ_INIT(&cl->jobs);
	c->data = cl;
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
	job_conn_down(c);
}

static void
sandboxd_dispatch_mcpd(struct conn *c, struct imsg *imsg)
{
	if (imsg->hdr.type == IMSG_PING) {
		sandboxd_ping(c, imsg);
		return;
	}
	if (imsg->hdr.type == IMSG_SBX_SERVER) {
		if (!control_allowed(c->role)) {
			conn_close(c, "%s may not ask for the server's state",
			    proto_role_name(c->role));
			return;
		}
		control_server(c, imsg);
		return;
	}
	if (!request_type(imsg->hdr.type)) {
		conn_close(c, "unexpected message type %u", imsg->hdr.type);
		return;
	}
	if (sbd->shutting_down)
		return;
	job_dispatch(c, imsg);
}

static const struct conn_ops sandboxd_mcpd_ops = {
	.allow = sandboxd_allow,
	.up = sandboxd_up_mcpd,
	.dispatch = sandboxd_dispatch_mcpd,
	.down = sandboxd_down_mcpd,
	.reserved = sandboxd_reserved,
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
	struct audit_body	 b;
	char			 hex[65];

	daemon_status(&sandboxd, "auditd connected");
	sbd->auditd_since = time(NULL);
	audit_auditd_up(c);
	if (start_recorded)
		return;
	start_recorded = 1;
	sodium_bin2hex(hex, sizeof(hex), sbd->conf->digest,
	    sizeof(sbd->conf->digest));
	audit_body_init(&b);
	audit_body_str(&b, "config", sandboxd.conffile);
	audit_body_str(&b, "config.sha256", hex);
	audit_body_u64(&b, "protocol", MCPD_PROTO_VERSION);
	audit_body_str(&b, "version", MCPD_VERSION);
	audit_send(AEV_DAEMON_START, AOC_OK, NULL, NULL, &b, NULL, NULL);
	audit_body_free(&b);
}

static void
sandboxd_down_auditd(struct conn *c, const char *why)
{
	struct relay	*r;

	daemon_status(&sandboxd, "auditd unreachable: %s", why);
	while ((r = TAILQ_FIRST(&relays)) != NULL)
		relay_answer(r, PING_UNREACHABLE, r->ping.path);
	audit_auditd_down();
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
	case IMSG_AUDIT_ACK:
		audit_dispatch(c, imsg);
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

/* Beyond the base set: the state database, cgroups, pipes, kill. */
static const struct priv_syscall sandboxd_syscalls[] = {
	SC(openat), SC(unlink), SC(unlinkat), SC(mkdir), SC(rmdir),
	SC(rename), SC(fsync), SC(fdatasync), SC(pread64), SC(pwrite64),
	SC(ftruncate), SC(fchown), SC(fchmod), SC(getdents64), SC(access),
	SC(faccessat), SC(faccessat2), SC(readlink), SC(getcwd),
	SC(pipe2), SC(socketpair), SC(setsockopt), SC(kill), SC(statfs),
	SC(fstatfs), SC(uname), SC(dup), SC(mprotect),
	SC(wait4),	/* the helper, at shutdown */
};

static const int sandboxd_caps[] = { CAP_KILL };

static void
sandboxd_sandbox(int fd)
{
	struct priv_syscall	*list;
	struct priv_path	 paths[12];
	const char		*cg[8];
	size_t			 n, i, np = 0;
	int			 ncg;

	if (sock_listen(fd) == -1)
		fatalx("cannot listen on %s", sbd->conf->sandbox_socket);
	/*
	 * Root's files stay ours, but of root's powers only signalling the
	 * sandboxes' processes, which run under other uids.  The helper,
	 * forked before this, keeps what runc needs.  Without
	 * CAP_DAC_OVERRIDE, auditd's socket needs the group.
	 */
	priv_join_group(sbd->conf->group_gid);
	priv_keep_caps(sandboxd_caps, nitems(sandboxd_caps));
	priv_no_new_privs();
	paths[np].path = sandboxd.confdir;
	paths[np++].access = LL_READ;
	/* Tenant users named anew on SIGHUP are looked up there. */
	paths[np].path = POLICY_PASSWD;
	paths[np++].access = LL_READ;
	paths[np].path = sbd->conf->state_dir;
	paths[np++].access = LL_READ | LL_WRITE;
	paths[np].path = sbd->conf->run_dir;
	paths[np++].access = LL_READ | LL_WRITE;
	ncg = cgroup_landlock_paths(cg, nitems(cg));
	for (i = 0; i < (size_t)ncg && np < nitems(paths); i++) {
		paths[np].path = cg[i];
		paths[np++].access = LL_READ | LL_WRITE;
	}
	/* It must signal the processes of its sandboxes. */
	priv_landlock(paths, np, NULL, 0, LL_ALLOW_SIGNALS);
	/*
	 * The main process keeps root's uid but needs none of what root
	 * can do beyond its files: no execve, no mount, no ptrace.
	 */
	n = priv_nbase_syscalls + nitems(sandboxd_syscalls);
	list = xcalloc(n, sizeof(*list));
	memcpy(list, priv_base_syscalls, priv_nbase_syscalls * sizeof(*list));
	memcpy(list + priv_nbase_syscalls, sandboxd_syscalls,
	    sizeof(sandboxd_syscalls));
	priv_seccomp(list, n);
	free(list);
}

static void
sandboxd_priv_dispatch(struct imsgev *iev, struct imsg *imsg)
{
	sandbox_priv_dispatch(imsg);
}

static void
sandboxd_priv_closed(struct imsgev *iev, const char *why)
{
	if (sbd->shutting_down)
		return;
	fatalx("the privileged helper is gone (%s)", why);
}

static void
sandboxd_reap_cb(evutil_socket_t fd, short events, void *arg)
{
	sandbox_reap();
	reuse_reap();
	pool_fill();
}

/* The helper checked this at start; it cannot be told of new limits. */
static int
sandboxd_reload_check(struct daemon *d, const struct policy *next)
{
	struct limits	*l;

	TAILQ_FOREACH(l, &next->limits, entry)
		if (l->network == NET_EGRESS &&
		    access("/usr/bin/slirp4netns", X_OK) == -1) {
			log_warnx("limits \"%s\" allow network egress, which "
			    "needs slirp4netns: install it", l->name);
			return -1;
		}
	return 0;
}

/*
 * Sandboxes keep the limits they were made with.  A removed tenant's
 * persistent ones stay until their idle time or lifetime ends: a tenant
 * put back by the next reload finds them again.
 */
static void
sandboxd_reloaded(struct daemon *d)
{
	struct tenant	*t;
	struct sandbox	*sb;
	unsigned int	 n;

	TAILQ_FOREACH(t, &sbd->conf->tenants, entry) {
		if (!t->gone)
			continue;
		n = 0;
		TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
			if (sb->persistent && strcmp(sb->tenant, t->name) == 0)
				n++;
		if (n > 0)
			log_warnx("tenant %s was removed but has %u persistent "
			    "sandbox%s: kept until %s", t->name, n,
			    n == 1 ? "" : "es", n == 1 ? "it expires" :
			    "they expire");
	}
	/* Warm containers of the old "default" limits are replaced. */
	pool_fill();
}

/*
 * One instance for a run directory, the helper of one that is stopping
 * included: each helper starts by deleting every container of the run
 * directory, and stops by doing it again, so a second instance would end
 * the first's sandboxes, and a stopping one a new instance's.  The lock
 * is held by the main process and, through fork, by the helper, until
 * both are gone.  One still listening is refused at once; one on its way
 * out is waited for.
 */
static void
sandboxd_lock(const struct policy *conf)
{
	char	 path[PATH_MAX];
	int	 fd, i;

	if (str_fmt(path, sizeof(path), "%s/%s", conf->run_dir,
	    SANDBOXD_LOCK) == -1)
		fatalx("%s: path too long", conf->run_dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1)
		fatal("%s", path);
	for (i = 0; flock(fd, LOCK_EX | LOCK_NB) == -1; i++) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			fatal("flock %s", path);
		if (sock_in_use(conf->sandbox_socket))
			fatalx("%s: another instance is already listening",
			    conf->sandbox_socket);
		if (i * 50 >= SANDBOXD_LOCK_WAIT_MS)
			fatalx("the mcp-sandboxd that last used %s has not "
			    "finished in %d s", conf->run_dir,
			    SANDBOXD_LOCK_WAIT_MS / 1000);
		if (i == 0)
			log_info("waiting for the mcp-sandboxd that last used "
			    "%s to finish", conf->run_dir);
		usleep(50 * 1000);
	}
	/* Held until the process and its helper are gone. */
}

static void
sandboxd_stop(void)
{
	struct audit_body	 b;
	int			 st;

	sbd->shutting_down = 1;
	sandbox_shutdown();
	pool_free();
	probe_free_all();
	/* Closing the channel tells the helper to delete every container. */
	imsgev_clear(&sbd->priv);
	/* The helper prunes the cgroups: it alone may, in every hierarchy. */
	while (waitpid(priv_pid, &st, 0) == -1 && errno == EINTR)
		;
	/* The last record, and out before the process is gone. */
	audit_body_init(&b);
	audit_body_str(&b, "reason", "signal");
	audit_send(AEV_DAEMON_STOP, AOC_OK, NULL, NULL, &b, NULL, NULL);
	audit_body_free(&b);
	audit_flush();
	state_close();
}

int
main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct listener		*l;
	struct conn		*c;
	struct policy		*conf;
	struct relay		*r;
	struct event		*ev_reap;
	struct timeval		 tv = { REAP_INTERVAL_MS / 1000, 0 };
	char			 path[PATH_MAX], err[256];
	int			 fd, pfd;

	daemon_init(&sandboxd, "mcp-sandboxd", argc, argv, trial_runtimes);
	conf = sandboxd.conf;
	if (policy_resolve(conf, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT |
	    POLICY_RESOLVE_TENANTS) ==
	    -1)
		exit(1);
	if (!sandboxd.privileged)
		fatalx("mcp-sandboxd must be started as root: it runs "
		    "containers");
	acl_init(&sandboxd_acl, conf, sandboxd.privileged);
	if (sodium_init() == -1)
		fatalx("libsodium initialisation failed");

	daemon_detach(&sandboxd);
	/*
	 * What sandboxd makes is for the containers' uids to read: their
	 * images, workspaces and cgroups (runc makes these with its umask).
	 * Its own files, the state database, get their modes explicitly.
	 */
	umask(022);
	/* The containers' uids pass through both, and others list neither. */
	daemon_mkdir_own(conf->run_dir, 0711);
	daemon_mkdir_own(conf->state_dir, 0711);
	sandboxd_lock(conf);
	/* Under systemd, into a leaf of our group before the helper forks. */
	if (cgroup_init(conf->run_dir, err, sizeof(err)) == -1)
		fatalx("cgroups: %s", err);
	/* The privileged helper, forked while the process is still whole. */
	pfd = priv_fork(sandboxd.conf, sandboxd.debug ? LOG_DEST_JOURNAL :
	    LOG_DEST_SYSLOG, &priv_pid);
	sandboxd.reload_who = POLICY_SANDBOXD;
	sandboxd.reload_check = sandboxd_reload_check;
	sandboxd.reload_done = sandboxd_reloaded;
	daemon_start(&sandboxd);

	sbd = &sandboxd_state;
	sbd->conf = conf;
	sbd->base = sandboxd.base;
	sbd->started = time(NULL);
	TAILQ_INIT(&sbd->sandboxes);
	pool_init();
	sbd->slots = xcalloc(conf->uid_slots, 1);
	policy_runtimes_used(conf, sbd->runtime_used);
	if (str_fmt(path, sizeof(path), "%s/%s", conf->state_dir,
	    SBX_STATE_DB) == -1 || state_open(path) == -1)
		fatalx("cannot open the state database %s", path);
	stored_refresh();
	state_load();
	state_prune_disks();
	cgroup_cleanup(0);
	if (imsgev_init(&sbd->priv, sbd->base, pfd, PROTO_MAX_FRAME,
	    IMSGBUF_FDPASS, sandboxd_priv_dispatch, sandboxd_priv_closed,
	    NULL) == -1)
		fatalx("cannot set up the helper's channel");
	fd = daemon_listen_unix(&sandboxd, "sandboxd", conf->sandbox_socket,
	    0660, 0, conf->group_gid);

	sandboxd_sandbox(fd);

	memset(&set, 0, sizeof(set));
	set.self = ROLE_SANDBOXD;
	set.maxframe = PROTO_MAX_FRAME;
	set.maxconns = SANDBOXD_MAXCONNS;
	set.maxperuid = SANDBOXD_MAXPERUID;
	set.maxreserved = SANDBOXD_MAXRESERVED;
	/* A download's open file goes to mcpd; nothing comes back. */
	set.flags = IMSGBUF_FDSEND;
	l = listener_new(sbd->base, fd, conf->sandbox_socket, &set,
	    &sandboxd_mcpd_ops, NULL);
	sbd->listener = l;
	set.flags = 0;
	sbd->auditd = client_new(sbd->base, "auditd", conf->audit.socket,
	    ROLE_AUDITD, &set, &sandboxd_auditd_ops, NULL);
	if ((ev_reap = event_new(sbd->base, -1, EV_PERSIST, sandboxd_reap_cb,
	    NULL)) == NULL || event_add(ev_reap, &tv) == -1)
		fatalx("cannot create the reaper timer");
	daemon_ready(&sandboxd, "listening on %s", conf->sandbox_socket);
	daemon_loop(&sandboxd);

	sandboxd_stop();
	event_free(ev_reap);
	while ((r = TAILQ_FIRST(&relays)) != NULL)
		relay_free(r);
	/*
	 * listener_free() frees a connection still up without telling it
	 * goes: its client state is freed here, as nothing runs after this.
	 */
	for (c = listener_first(l); c != NULL; c = listener_next(c)) {
		free(c->data);
		c->data = NULL;
	}
	listener_free(l);
	client_free(sbd->auditd);
	free(sbd->slots);
	daemon_free(&sandboxd);
	return 0;
}
