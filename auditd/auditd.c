/*
 * mcp-auditd: the audit daemon.  It listens on its own socket for mcpd and
 * sandboxd, appends their records to a hash chain of signed records with
 * who sent them as SO_PEERCRED says (never as the record says),
 * acknowledges each after its commit, signs checkpoints, and runs as its
 * own unprivileged user under Landlock and a seccomp allowlist.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "acl.h"
#include "auditbody.h"
#include "auditd.h"
#include "auditlog.h"
#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

/* Every uid's, any one uid's, and the suite's own besides. */
#define AUDITD_MAXCONNS		128
#define AUDITD_MAXPERUID	16
#define AUDITD_MAXRESERVED	32
#define AUDITD_BATCH_MAX	1024
#define CHECKPOINT_EVERY_S	60

static struct daemon	 auditd;
static struct acl	 auditd_acl;
static TAILQ_HEAD(, pending_record) queue = TAILQ_HEAD_INITIALIZER(queue);
static size_t		 nqueued;
static struct event	*ev_commit;
static struct event	*ev_checkpoint;

static void
record_free(struct pending_record *r)
{
	free(r->body);
	free(r);
}

static void
auditd_ack(struct pending_record *r, const char *error)
{
	struct audit_ack	 ack;

	if (r->from == NULL)
		return;
	memset(&ack, 0, sizeof(ack));
	ack.seq = r->seq;
	if (error != NULL)
		str_copy(ack.error, error, sizeof(ack.error));
	conn_compose(r->from, IMSG_AUDIT_ACK, r->peerid, -1, &ack,
	    sizeof(ack));
}

/* Commit what arrived since the last commit, then acknowledge it. */
static void
auditd_commit(evutil_socket_t fd, short events, void *arg)
{
	struct pending_record	*batch[AUDITD_BATCH_MAX], *r;
	char			 err[SBX_MSG_MAX];
	size_t			 n, i;
	int			 rv;

	while (!TAILQ_EMPTY(&queue)) {
		n = 0;
		TAILQ_FOREACH(r, &queue, entry) {
			if (n == AUDITD_BATCH_MAX)
				break;
			batch[n++] = r;
		}
		rv = store_commit(batch, n, err, sizeof(err));
		for (i = 0; i < n; i++) {
			TAILQ_REMOVE(&queue, batch[i], entry);
			nqueued--;
			auditd_ack(batch[i], rv == -1 ? err : NULL);
			record_free(batch[i]);
		}
	}
}

static void
auditd_record(struct conn *c, struct imsg *imsg)
{
	struct pending_record	*r;
	char			 why[160];

	if ((r = record_decode(imsg->data, imsg->datalen, why,
	    sizeof(why))) == NULL) {
		conn_close(c, "%s", why);
		return;
	}
	r->from = c;
	r->peerid = imsg->hdr.peerid;
	str_copy(r->role, proto_role_name(c->role), sizeof(r->role));
	r->pid = c->cred.pid;
	r->uid = c->cred.uid;
	TAILQ_INSERT_TAIL(&queue, r, entry);
	nqueued++;
	/* After this loop turn: all that arrived meanwhile commits at once. */
	event_active(ev_commit, EV_TIMEOUT, 0);
}

static const char *
auditd_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	return acl_check(&auditd_acl, uc, role, ROLE_BIT(ROLE_SANDBOXD) |
	    ROLE_BIT(ROLE_MCPD) | ROLE_BIT(ROLE_MCPD_STDIO) |
	    ROLE_BIT(ROLE_MCPCTL), why, len);
}

/*
 * mcpd's uid, sandboxd's and root's (mcpctl): no tenant's uid can crowd
 * them out.
 */
static int
auditd_reserved(const struct ucred *uc, void *arg)
{
	char	 why[128];

	return acl_check(&auditd_acl, uc, ROLE_NONE, ROLE_BIT(ROLE_MCPD) |
	    ROLE_BIT(ROLE_SANDBOXD) | ROLE_BIT(ROLE_MCPCTL), why,
	    sizeof(why)) == NULL;
}

static void
auditd_up(struct conn *c)
{
}

static void
auditd_down(struct conn *c, const char *why)
{
	struct pending_record	*r;

	/* Its records still commit; only the acknowledgements go. */
	TAILQ_FOREACH(r, &queue, entry)
		if (r->from == c)
			r->from = NULL;
}

static void
auditd_dispatch(struct conn *c, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_PING:
		conn_pong(c, imsg, ROLE_AUDITD, PING_OK);
		break;
	case IMSG_AUDIT_RECORD:
		if (c->role == ROLE_MCPCTL) {
			conn_close(c, "mcpctl may not write records");
			return;
		}
		auditd_record(c, imsg);
		break;
	default:
		conn_close(c, "unexpected message type %u", imsg->hdr.type);
		break;
	}
}

static const struct conn_ops auditd_ops = {
	.allow = auditd_allow,
	.up = auditd_up,
	.dispatch = auditd_dispatch,
	.down = auditd_down,
	.reserved = auditd_reserved,
};

/* Beyond the base set: the database and the key files. */
static const struct priv_syscall auditd_syscalls[] = {
	SC(openat), SC(unlink), SC(fsync), SC(fdatasync), SC(pread64),
	SC(pwrite64), SC(ftruncate), SC(fchown), SC(fchmod), SC(access),
	SC(faccessat), SC(faccessat2), SC(readlink), SC(getcwd), SC(statfs),
	SC(fstatfs), SC(mprotect),
};

static void
auditd_checkpoint(evutil_socket_t fd, short events, void *arg)
{
	struct timeval	 tv = { CHECKPOINT_EVERY_S, 0 };

	store_checkpoint();
	evtimer_add(ev_checkpoint, &tv);
}

/* auditd's own start and stop, with the configuration in force. */
static void
auditd_lifecycle(int event)
{
	struct audit_body	 b;
	char			 hex[sizeof(auditd.conf->digest) * 2 + 1];

	audit_hex(auditd.conf->digest, sizeof(auditd.conf->digest), hex);
	audit_body_init(&b);
	audit_body_str(&b, "config", auditd.conf->path);
	audit_body_str(&b, "config.sha256", hex);
	audit_body_str(&b, "version", MCPD_VERSION);
	store_event(event, b.buf);
	audit_body_free(&b);
}

static void
auditd_sandbox(const struct policy *conf, const char *confdir, int fd,
    const char *dbdir)
{
	struct priv_syscall	*list;
	const struct priv_path	 paths[] = {
		{ confdir, LL_READ },
		/* Tenant users named anew on SIGHUP are looked up there. */
		{ POLICY_PASSWD, LL_READ },
		{ dbdir, LL_READ | LL_WRITE },
	};
	char			 why[512];
	size_t			 n;

	if (auditd.privileged)
		priv_drop(conf->audit.uid, conf->audit.gid);
	/* Clients check that auditd's uid answers: listen as that uid. */
	if (sock_listen(fd) == -1)
		fatalx("cannot listen on %s", conf->audit.socket);
	/* Opened as the audit user, so its files are that user's, and
	 * readable by its group (mcpctl for admins in it) alone. */
	umask(027);
	if (sodium_init() == -1)
		fatalx("libsodium initialisation failed");
	if (store_open(conf->audit.database, why, sizeof(why)) == -1)
		fatalx("%s", why);
	priv_no_new_privs();
	priv_landlock(paths, nitems(paths), NULL, 0, 0);
	n = priv_nbase_syscalls + nitems(auditd_syscalls);
	list = xcalloc(n, sizeof(*list));
	memcpy(list, priv_base_syscalls, priv_nbase_syscalls * sizeof(*list));
	memcpy(list + priv_nbase_syscalls, auditd_syscalls,
	    sizeof(auditd_syscalls));
	priv_seccomp(list, n);
	free(list);
}

/* The database's directory, the audit user's alone. */
static void
auditd_dbdir(const struct policy *conf, char *dir, size_t len)
{
	char	*p;

	if (str_copy(dir, conf->audit.database, len) == -1 ||
	    (p = strrchr(dir, '/')) == NULL)
		fatalx("%s: bad database path", conf->audit.database);
	*p = '\0';
	if (dir[0] == '\0')
		(void)str_copy(dir, "/", len);
	daemon_mkdir_own(dir, 0750);
	if (auditd.privileged && chown(dir, conf->audit.uid,
	    conf->audit.gid) == -1)
		fatal("chown %s", dir);
}

int
main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct listener		*l;
	struct policy		*conf;
	char			 dbdir[PATH_MAX];
	int			 fd;

	daemon_init(&auditd, "mcp-auditd", argc, argv, NULL);
	conf = auditd.conf;
	if (policy_resolve(conf, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT |
	    POLICY_RESOLVE_TENANTS) ==
	    -1)
		exit(1);
	acl_init(&auditd_acl, conf, auditd.privileged);
	/* Of the tenants, their uids: who may send as mcpd --stdio. */
	auditd.reload_who = POLICY_AUDITD;

	daemon_start(&auditd);
	daemon_mkdir_own(conf->run_dir, 0711);
	daemon_mkdir_own(conf->state_dir, 0711);
	auditd_dbdir(conf, dbdir, sizeof(dbdir));
	fd = daemon_listen_unix(&auditd, "auditd", conf->audit.socket, 0660,
	    auditd.privileged ? conf->audit.uid : (uid_t)-1,
	    auditd.privileged ? conf->group_gid : (gid_t)-1);

	auditd_sandbox(conf, auditd.confdir, fd, dbdir);
	if ((ev_commit = event_new(auditd.base, -1, 0, auditd_commit, NULL)) ==
	    NULL || (ev_checkpoint = evtimer_new(auditd.base,
	    auditd_checkpoint, NULL)) == NULL)
		fatalx("cannot create the commit event");
	auditd_lifecycle(AEV_DAEMON_START);
	auditd_checkpoint(-1, 0, NULL);

	memset(&set, 0, sizeof(set));
	set.self = ROLE_AUDITD;
	set.maxframe = PROTO_MAX_FRAME;
	set.maxconns = AUDITD_MAXCONNS;
	set.maxperuid = AUDITD_MAXPERUID;
	set.maxreserved = AUDITD_MAXRESERVED;
	l = listener_new(auditd.base, fd, conf->audit.socket, &set,
	    &auditd_ops, NULL);
	daemon_ready(&auditd, "listening on %s", conf->audit.socket);
	daemon_loop(&auditd);

	/* Acknowledged or not, nothing received is dropped. */
	auditd_commit(-1, 0, NULL);
	auditd_lifecycle(AEV_DAEMON_STOP);
	event_free(ev_commit);
	event_free(ev_checkpoint);
	store_close();
	listener_free(l);
	daemon_free(&auditd);
	return 0;
}
