/*
 * mcp-auditd: the audit daemon.  It listens on its own socket for mcpd and
 * sandboxd, records who they are from SO_PEERCRED, and runs as its own
 * unprivileged user under Landlock and a seccomp allowlist.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "priv.h"
#include "proc.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

#define AUDITD_MAXCONNS		64

static struct daemon	 auditd;
static struct acl	 auditd_acl;

static const char *
auditd_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	return acl_check(&auditd_acl, uc, role, ROLE_BIT(ROLE_SANDBOXD) |
	    ROLE_BIT(ROLE_MCPD) | ROLE_BIT(ROLE_MCPCTL), why, len);
}

static void
auditd_up(struct conn *c)
{
}

static void
auditd_down(struct conn *c, const char *why)
{
}

static void
auditd_dispatch(struct conn *c, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_PING:
		conn_pong(c, imsg, ROLE_AUDITD, PING_OK);
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
};

static void
auditd_sandbox(const struct policy *conf, const char *confdir, int fd)
{
	const struct priv_path	 paths[] = {
		{ confdir, LL_READ },
		{ conf->state_dir, LL_READ | LL_WRITE },
	};

	if (auditd.privileged)
		priv_drop(conf->audit.uid, conf->audit.gid);
	/* Clients check that auditd's uid answers: listen as that uid. */
	if (sock_listen(fd) == -1)
		fatalx("cannot listen on %s", conf->audit.socket);
	priv_no_new_privs();
	priv_landlock(paths, nitems(paths), NULL, 0, 0);
	priv_seccomp(priv_base_syscalls, priv_nbase_syscalls);
}

int
main(int argc, char *argv[])
{
	struct proc_settings	 set;
	struct listener		*l;
	struct policy		*conf;
	int			 fd;

	daemon_init(&auditd, "mcp-auditd", argc, argv);
	conf = auditd.conf;
	if (policy_resolve(conf, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT) ==
	    -1)
		exit(1);
	acl_init(&auditd_acl, conf, auditd.privileged);

	daemon_start(&auditd);
	daemon_mkdir(conf->run_dir, 0755);
	daemon_mkdir(conf->state_dir, 0755);
	fd = daemon_listen_unix(&auditd, "auditd", conf->audit.socket, 0660,
	    auditd.privileged ? conf->audit.uid : (uid_t)-1,
	    auditd.privileged ? conf->group_gid : (gid_t)-1);

	auditd_sandbox(conf, auditd.confdir, fd);

	memset(&set, 0, sizeof(set));
	set.self = ROLE_AUDITD;
	set.maxframe = PROTO_MAX_FRAME;
	set.maxconns = AUDITD_MAXCONNS;
	l = listener_new(auditd.base, fd, conf->audit.socket, &set,
	    &auditd_ops, NULL);
	daemon_ready(&auditd, "listening on %s", conf->audit.socket);
	daemon_loop(&auditd);

	listener_free(l);
	daemon_free(&auditd);
	return 0;
}
