/*
 * mcp-sandboxd -n, as root: a container under each runtime the file uses.
 *
 * That a runtime's binary is there says little: crun refuses a hybrid
 * cgroup layout, runsc a platform the host lacks, any of them a kernel
 * without user namespaces or a cgroup controller.  So -n starts the
 * privileged helper as the daemon would (priv.c, in a mount namespace of
 * its own) and asks it for one container under each runtime the file
 * uses, from the host image under the "default" limits and no network:
 * the same bundle, the same runtime options, the same start as a
 * sandbox's.  A runtime passes when sandbox-init, as PID 1 of that
 * container, says hello over the socket it inherited; the container is
 * then destroyed.
 *
 * Nothing of a running daemon's is touched.  The helper gets a run and a
 * state directory of its own, check.XXXXXX beneath the run directory,
 * removed after: its runtimes' state, bundles and host image are apart,
 * and cgroup_init() names its cgroups' parent from that run directory.
 * Controllers it enabled above that parent are disabled again after
 * (cgroup_release()): systemd could not start the daemon in a unit's
 * group left with them.
 * The container takes the file's last uid range.  A sandbox of a running
 * daemon may hold that range at the moment, which gives neither anything
 * of the other's: each has user, PID, mount, network and IPC namespaces
 * of its own, and here sandbox-init alone runs, no code of anyone's.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "daemon.h"
#include "imsgsync.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"
#include "cgroup.h"

/* The helper's set-up: a runtime's --version each, the host image. */
#define TRIAL_READY_MS		60000
/* A destroy kills, waits up to 10 s, then has the runtime delete it. */
#define TRIAL_DESTROY_MS	30000

/*
 * The next frame of that type from the helper, its payload into out; any
 * other (an OOM notice) is passed over.  0, or -1 with why.
 */
static int
trial_wait(struct imsgsync *h, uint32_t type, void *out, size_t len, int ms,
    char *why, size_t whylen)
{
	struct imsg	 imsg;
	int		 r;

	for (;;) {
		if ((r = imsgsync_next(h, &imsg, ms)) != 1) {
			(void)str_fmt(why, whylen, "the helper %s",
			    r == 0 ? "did not answer in time" : h->err);
			return -1;
		}
		if (imsg.hdr.type == type)
			break;
		imsg_free(&imsg);
	}
	r = proto_payload(imsg.data, imsg.datalen, out, len);
	imsg_free(&imsg);
	if (r == -1)
		(void)str_fmt(why, whylen, "a malformed answer from the helper");
	return r;
}

/* sandbox-init's hello on the container's socket: 0, or -1 with why. */
static int
trial_hello(struct imsgsync *init, char *why, size_t whylen)
{
	struct proto_hello	 h;
	struct imsg		 imsg;
	const char		*bad;
	char			 buf[128];
	int			 r;

	if ((r = imsgsync_next(init, &imsg, SANDBOX_START_TIMEOUT_MS)) != 1) {
		(void)str_fmt(why, whylen, "sandbox-init said nothing: %s",
		    r == 0 ? "no hello in time" : init->err);
		return -1;
	}
	bad = imsg.hdr.type != IMSG_HELLO ? "not a hello" :
	    proto_hello_check(imsg.data, imsg.datalen, buf, sizeof(buf));
	if (bad == NULL) {
		memcpy(&h, imsg.data, sizeof(h));
		if (h.role != ROLE_SANDBOX_INIT)
			bad = "a hello from another role";
	}
	imsg_free(&imsg);
	if (bad != NULL) {
		(void)str_fmt(why, whylen, "sandbox-init broke the protocol: "
		    "%s", bad);
		return -1;
	}
	return 0;
}

/*
 * One container under rt: its time to sandbox-init's hello in *ms.
 * 0; -1 with why; -2 with why when the helper is gone too.
 */
static int
trial_one(struct imsgsync *h, const struct policy *conf,
    const struct runtime *rt, uint64_t *ms, char *why, size_t whylen)
{
	struct priv_start	 ps;
	struct priv_destroy	 pd;
	struct priv_result	 res;
	struct imsgsync		 init;
	const struct limits	*lim = policy_limits(conf, "default");
	uint64_t		 t0;
	int			 sv[2], rv;

	memset(&ps, 0, sizeof(ps));
	sandbox_new_id(ps.id);
	str_copy(ps.image, HOST_IMAGE, sizeof(ps.image));
	str_copy(ps.runtime, rt->name, sizeof(ps.runtime));
	ps.memory = lim->memory;
	ps.disk = lim->disk;
	ps.cpus = lim->cpus;
	ps.pids = lim->pids;
	ps.network = NET_NONE;
	ps.slot = conf->uid_slots - 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		(void)str_fmt(why, whylen, "socketpair: %s", strerror(errno));
		return -1;
	}
	(void)fd_set_nonblock(sv[0]);
	imsgsync_open(&init, sv[0], PROTO_INIT_FRAME, 0);
	t0 = mono_ms();
	if (imsgsync_send_fd(h, IMSG_PRIV_START, 0, sv[1], &ps,
	    sizeof(ps)) == -1 ||
	    trial_wait(h, IMSG_PRIV_STARTED, &res, sizeof(res),
	    SANDBOX_START_TIMEOUT_MS, why, whylen) == -1) {
		if (why[0] == '\0')
			(void)str_fmt(why, whylen, "the helper: %s", h->err);
		imsgsync_close(&init);
		return -2;
	}
	res.message[sizeof(res.message) - 1] = '\0';
	if (res.pid <= 0) {
		/* The helper undid the start already. */
		(void)str_fmt(why, whylen, "%s", res.message[0] != '\0' ?
		    res.message : "the container did not start");
		imsgsync_close(&init);
		return -1;
	}
	rv = trial_hello(&init, why, whylen);
	*ms = mono_ms() - t0;
	imsgsync_close(&init);

	memset(&pd, 0, sizeof(pd));
	memcpy(pd.id, ps.id, sizeof(pd.id));
	str_copy(pd.runtime, rt->name, sizeof(pd.runtime));
	if (imsgsync_send(h, IMSG_PRIV_DESTROY, 0, &pd, sizeof(pd)) == -1 ||
	    trial_wait(h, IMSG_PRIV_DESTROYED, &res, sizeof(res),
	    TRIAL_DESTROY_MS, why, whylen) == -1)
		return -2;
	res.message[sizeof(res.message) - 1] = '\0';
	if (rv == 0 && res.message[0] != '\0') {
		(void)str_fmt(why, whylen, "destroying it: %s", res.message);
		rv = -1;
	}
	return rv;
}

/* The helper, forked as the daemon forks it: its channel. */
static pid_t
trial_helper(struct policy *conf, struct imsgsync *h)
{
	pid_t	 pid;

	imsgsync_open(h, priv_fork(conf, LOG_DEST_STDERR, &pid),
	    PROTO_MAX_FRAME, IMSGBUF_FDPASS);
	return pid;
}

/* Every runtime the file uses, one container each; how many failed. */
static int
trial_all(struct policy *conf, struct imsgsync *h)
{
	struct priv_ready	 ready;
	int			 used[POLICY_RUNTIMES_MAX], failed = 0, r;
	const struct runtime	*rt;
	char			 why[SBX_MSG_MAX + 64];
	uint64_t		 ms;
	size_t			 i;

	why[0] = '\0';
	if (trial_wait(h, IMSG_PRIV_READY, &ready, sizeof(ready),
	    TRIAL_READY_MS, why, sizeof(why)) == -1) {
		fprintf(stderr, "mcp-sandboxd: no container started: %s\n",
		    why);
		return 1;
	}
	policy_runtimes_used(conf, used);
	for (i = 0; i < conf->nruntimes; i++) {
		if (!used[i])
			continue;
		rt = &conf->runtimes[i];
		why[0] = '\0';
		ms = 0;
		r = trial_one(h, conf, rt, &ms, why, sizeof(why));
		if (r == 0)
			printf("runtime %s (%s %s): a container started in "
			    "%llu ms\n", rt->name, policy_runtime_kind(rt->kind),
			    rt->path, (unsigned long long)ms);
		else {
			printf("runtime %s (%s %s): no container started: "
			    "%s\n", rt->name, policy_runtime_kind(rt->kind),
			    rt->path, why);
			failed++;
		}
		fflush(stdout);
		if (r == -2)
			break;
	}
	return failed;
}

int
trial_runtimes(struct daemon *d)
{
	struct policy	*conf = d->conf;
	struct imsgsync	 h;
	char		 dir[PATH_MAX], err[256];
	pid_t		 pid;
	int		 failed, st;

	if (!d->privileged) {
		fprintf(stderr, "mcp-sandboxd: not root: no container "
		    "started under the runtimes\n");
		return 0;
	}
	if (sodium_init() == -1)
		fatalx("libsodium initialisation failed");
	signal(SIGPIPE, SIG_IGN);
	/* As the daemon makes them: for the containers' uids to read. */
	umask(022);
	daemon_mkdir_own(conf->run_dir, 0711);
	if (str_fmt(dir, sizeof(dir), "%s/check.XXXXXX", conf->run_dir) == -1 ||
	    mkdtemp(dir) == NULL || chmod(dir, 0711) == -1)
		fatal("a directory for the check in %s", conf->run_dir);
	if (str_fmt(conf->run_dir, sizeof(conf->run_dir), "%s/run", dir) ==
	    -1 || str_fmt(conf->state_dir, sizeof(conf->state_dir),
	    "%s/state", dir) == -1)
		fatalx("%s: path too long", dir);
	daemon_mkdir(conf->run_dir, 0711);
	daemon_mkdir(conf->state_dir, 0711);
	if (cgroup_init(conf->run_dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-sandboxd: cgroups: %s\n", err);
		cgroup_release();
		(void)rm_tree(dir);
		return 1;
	}
	pid = trial_helper(conf, &h);
	failed = trial_all(conf, &h);
	/* Closing the channel has the helper delete all and go. */
	imsgsync_close(&h);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	/* The helper removed our cgroups; what setup enabled goes too. */
	cgroup_release();
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (failed == 0)
			fprintf(stderr, "mcp-sandboxd: the privileged helper "
			    "failed\n");
		failed++;
	}
	if (rm_tree(dir) == -1)
		fprintf(stderr, "mcp-sandboxd: %s: not all removed: %s\n", dir,
		    strerror(errno));
	return failed;
}
