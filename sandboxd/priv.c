/*
 * The privileged helper of mcp-sandboxd.
 *
 * Forked before the main process confines itself, it is the only part of
 * sandboxd that runs runc, writes bundles and mounts workspaces.  It takes
 * typed requests from the main process, validates every field against the
 * policy first, and only then acts: a bundle is built from the policy and
 * those fields, never from anything a client wrote.
 *
 * It lives in a mount namespace of its own with private propagation, so
 * that the workspaces it mounts are never seen by the host, and vanish
 * with it and its containers.  It is the subreaper of the containers it
 * starts.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/pidfd.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/sendfile.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "bundle.h"
#include "cgroup.h"
#include "daemon.h"
#include "image.h"
#include "imgstore.h"
#include "imgtree.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

/* Internal: a destroy undoing a start that failed; answered as a start. */
#define PRIV_DESTROY_FAILED_START	0x100

#define RUNC_MIN_MAJOR	1
#define RUNC_MIN_MINOR	2
#define RUNC_MIN_PATCH	8

/* One START or DESTROY in progress: a chain of commands. */
struct pop {
	TAILQ_ENTRY(pop)	 entry;
	uint32_t		 type;		/* IMSG_PRIV_* */
	char			 id[SBX_ID_LEN + 1];
	struct priv_start	 start;
	uint32_t		 flags;		/* destroy */
	int			 initfd;	/* START: for sandbox-init */
	int			 step;
	pid_t			 pid;		/* the command running */
	int			 done;		/* it ended, with status */
	int			 status;
	char			 bundle[PATH_MAX];
	char			 disk[PATH_MAX];	/* persistent: dir */
	char			 ws[PATH_MAX];	/* persistent: mount point */
	char			 error[SBX_MSG_MAX];
	pid_t			 initpid;	/* STARTED: the container's */
	int			 readyfd;	/* slirp4netns: configured */
	struct event		*ev_ready;
	struct rtuse		*rt;		/* the runtime it runs under */
	int			 pidfd;		/* DESTROY: its init, dying */
	struct event		*ev_exit;
	struct event		*ev_slow;	/* ... for too long */
	struct image		 image;		/* START: a stored one's */
};

/*
 * A container we started, by a pidfd on its init: destroying it is then
 * a kill, a wait and a few rmdirs, with no runc delete to start.
 */
struct ctr {
	TAILQ_ENTRY(ctr)	 entry;
	char			 id[SBX_ID_LEN + 1];
	int			 pidfd;
	/* What a wipe needs, from the start request the helper checked:
	 * only a one-shot container without network under runc or crun
	 * may be wiped. */
	int			 wipeable;
	uint32_t		 uid_base;
	uint64_t		 disk;
};

/* A container's user-mode network, for policies that allow egress. */
struct net {
	TAILQ_ENTRY(net)	 entry;
	char			 id[SBX_ID_LEN + 1];
	pid_t			 pid;
	int			 exitfd;	/* closing it ends slirp4netns */
};

/*
 * A runtime the configuration names (globally, for a tenant or for an
 * image), as the helper found it at start.  Each keeps its containers'
 * state apart: runc, crun and runsc each read only their own.
 */
struct rtuse {
	const struct runtime	*rt;
	int			 used;
	char			 root[PATH_MAX];	/* --root */
	char			 version[32];
	int			 overlay2;	/* runsc: it has --overlay2 */
};

static char			*priv_env[] = {
	(char *)"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
	    "/sbin:/bin",
	NULL
};
static struct policy		*pconf;
static struct event_base	*pbase;
static struct imsgev		 piev;
static struct image_host	 host_image;
static char			 init_copy[PATH_MAX];	/* sandbox-init */
static int			 memsw;
static int			 filter_memfd = -1;	/* bundle_filter() */
static struct rtuse		 rtuses[POLICY_RUNTIMES_MAX];
static struct rtuse		*rt_main;	/* the file's "runtime" */
static TAILQ_HEAD(, pop)	 pops = TAILQ_HEAD_INITIALIZER(pops);
static TAILQ_HEAD(, net)	 nets = TAILQ_HEAD_INITIALIZER(nets);
static TAILQ_HEAD(, ctr)	 ctrs = TAILQ_HEAD_INITIALIZER(ctrs);

static void	pop_step(struct pop *, int);
static void	priv_oom_killed(const char *);
static pid_t	priv_spawn_at(const char *const [], int, int, int, int);
static void	pop_reply(struct pop *, uint32_t, pid_t);
static void	pop_fail(struct pop *, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));

/* Blocking helpers, for start-up only. */

/* Run argv to completion; its stdout (at most len - 1 bytes) into out. */
static int
run_wait(const char *const argv[], char *out, size_t len)
{
	int	 p[2], st, devnull;
	pid_t	 pid;
	ssize_t	 n;
	size_t	 got = 0;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork_for_exec()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(p[1], 1);
		dup2(devnull, 2);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	while (out != NULL && got + 1 < len &&
	    (n = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	if (out != NULL)
		out[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The 2025 fixes for mount races that runc 1.2.8 brought, which a
 * distribution may carry as patches in an older runc.
 */
static const char *const runc_cves[] = {
	"CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881"
};

#define RUNC_PACKAGED	"/usr/sbin/runc"
/* Where a hybrid boot mounts the unified hierarchy. */
#define CG_UNIFIED_V1	"/sys/fs/cgroup/unified"
#define RUNC_CHANGELOG	"/usr/share/doc/runc/changelog.Debian.gz"

static void
cve_list(char *buf, size_t len, unsigned mask)
{
	size_t	 i, n;

	buf[0] = '\0';
	for (i = 0; i < nitems(runc_cves); i++) {
		if (!(mask & (1U << i)))
			continue;
		n = strlen(buf);
		(void)str_fmt(buf + n, len - n, "%s%s", n > 0 ? ", " : "",
		    runc_cves[i]);
	}
}

/*
 * Which of those fixes the runc in use carries, a bit for each, by the
 * changelog of the Debian package it comes from: Debian names there each
 * CVE a package fixes.  None for a runc of any other origin.
 */
static unsigned
priv_runc_patched(const char *path)
{
	const char	*argv[] = { "/bin/zcat", RUNC_CHANGELOG, NULL };
	char		 real[PATH_MAX], *log;
	size_t		 i, len = 512 * 1024;
	unsigned	 have = 0;

	if (realpath(path, real) == NULL ||
	    strcmp(real, RUNC_PACKAGED) != 0 ||
	    access(RUNC_CHANGELOG, R_OK) == -1)
		return 0;
	log = xmalloc(len);
	/* The newest entries come first: what fits is enough. */
	(void)run_wait(argv, log, len);
	for (i = 0; i < nitems(runc_cves); i++)
		if (strstr(log, runc_cves[i]) != NULL)
			have |= 1U << i;
	free(log);
	return have;
}

/*
 * gVisor's releases are dates: "runsc version 0.0~20240729.0" from
 * Debian, "runsc version release-20240729.0" from upstream.  Those before
 * 2024 fail programs that today's images run: Debian 12's refuses the
 * statx(2) flags of its own coreutils, and so "ls".
 */
#define RUNSC_MIN_DATE	20240101UL

static void
priv_runsc_version(struct rtuse *u, const char *out)
{
	const struct runtime	*rt = u->rt;
	const char		*v;
	unsigned long		 date = 0;

	if ((v = strstr(out, "runsc version ")) == NULL)
		fatalx("runtime %s: %s: cannot read its version: is it runsc?",
		    rt->name, rt->path);
	v += strlen("runsc version ");
	while (*v != '\0' && *v != '\n' && (*v < '1' || *v > '9' ||
	    strspn(v, "0123456789") != 8))
		v++;
	if (strspn(v, "0123456789") == 8)
		date = strtoul(v, NULL, 10);
	if (date == 0)
		fatalx("runtime %s: %s: cannot read the date of its release",
		    rt->name, rt->path);
	(void)snprintf(u->version, sizeof(u->version), "runsc %lu", date);
	/* --overlay2 came in 2023; runsc refuses flags it does not know. */
	u->overlay2 = date >= 20230101UL;
	if (date < RUNSC_MIN_DATE)
		log_warnx("runtime %s: runsc %lu is older than 2024: programs "
		    "in the sandboxes will fail where it lacks what Linux "
		    "has (its 2022 release refuses coreutils' statx flags); "
		    "use a newer runsc", rt->name, date);
	else
		log_info("runtime %s: runsc %lu%s%s", rt->name, date,
		    rt->platform[0] != '\0' ? ", platform " : "",
		    rt->platform);
}

/*
 * A runtime's version, and for runc whether it has the 2025 fixes.
 * crun's first line is "crun version 1.8.1".
 */
static void
priv_runtime_version(struct rtuse *u)
{
	const struct runtime	*rt = u->rt;
	char			 out[256], word[32], *v, fixed[128];
	char			 missing[128];
	const char		*argv[] = { rt->path, "--version", NULL };
	const char		*kind = policy_runtime_kind(rt->kind);
	unsigned		 maj = 0, min = 0, pat = 0, have;

	if (run_wait(argv, out, sizeof(out)) != 0)
		fatalx("runtime %s: %s --version failed: is %s installed?",
		    rt->name, rt->path, kind);
	if (rt->kind == RUNTIME_RUNSC) {
		priv_runsc_version(u, out);
		return;
	}
	(void)str_fmt(word, sizeof(word), "%s version ", kind);
	if ((v = strstr(out, word)) == NULL ||
	    sscanf(v + strlen(word), "%u.%u.%u", &maj, &min, &pat) < 2)
		fatalx("runtime %s: %s: cannot read its version: is it %s?",
		    rt->name, rt->path, kind);
	if (rt->kind == RUNTIME_CRUN) {
		(void)snprintf(u->version, sizeof(u->version),
		    "crun %u.%u.%u", maj, min, pat);
		log_info("runtime %s: crun %u.%u.%u", rt->name, maj, min, pat);
		return;
	}
	(void)snprintf(u->version, sizeof(u->version), "%u.%u.%u", maj, min,
	    pat);
	if (maj > RUNC_MIN_MAJOR || (maj == RUNC_MIN_MAJOR &&
	    (min > RUNC_MIN_MINOR || (min == RUNC_MIN_MINOR &&
	    pat >= RUNC_MIN_PATCH)))) {
		log_info("runc %u.%u.%u", maj, min, pat);
		return;
	}
	have = priv_runc_patched(rt->path);
	cve_list(fixed, sizeof(fixed), have);
	cve_list(missing, sizeof(missing), ~have);
	if (missing[0] == '\0')
		log_info("runc %u.%u.%u: older than 1.2.8, but its package "
		    "carries the fixes for %s", maj, min, pat, fixed);
	else
		log_warnx("runc %u.%u.%u is older than 1.2.8 and lacks the "
		    "2025 fixes for mount races through /dev/null, "
		    "/dev/console and /proc (%s%s%s); sandboxes rely on their "
		    "user namespace and private mounts: upgrade runc", maj,
		    min, pat, missing, fixed[0] != '\0' ? "; its package "
		    "carries those for " : "", fixed);
}

/* The runtime of that name, if the configuration used it at start. */
static struct rtuse *
rtuse_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < pconf->nruntimes; i++)
		if (rtuses[i].used && strcmp(rtuses[i].rt->name, name) == 0)
			return &rtuses[i];
	return NULL;
}

/* Is any runtime in use of that kind? */
static int
rtuse_any(enum runtime_kind kind)
{
	size_t	 i;

	for (i = 0; i < pconf->nruntimes; i++)
		if (rtuses[i].used && rtuses[i].rt->kind == kind)
			return 1;
	return 0;
}

/*
 * Every runtime the file names, checked once: the file's own keeps the
 * state directory "runc" of the run directory, any other "runc-NAME".
 */
static void
priv_runtimes(void)
{
	int			 used[POLICY_RUNTIMES_MAX];
	struct rtuse		*u;
	size_t			 i;

	policy_runtimes_used(pconf, used);
	for (i = 0; i < pconf->nruntimes; i++) {
		rtuses[i].rt = &pconf->runtimes[i];
		rtuses[i].used = used[i];
	}
	if ((rt_main = rtuse_find(pconf->runtime)) == NULL)
		fatalx("runtime %s: unknown", pconf->runtime);
	for (i = 0; i < pconf->nruntimes; i++) {
		u = &rtuses[i];
		if (!u->used)
			continue;
		priv_runtime_version(u);
		if (u == rt_main)
			(void)str_fmt(u->root, sizeof(u->root), "%s/%s",
			    pconf->run_dir, SBX_RUNC_ROOT);
		else
			(void)str_fmt(u->root, sizeof(u->root), "%s/%s-%s",
			    pconf->run_dir, SBX_RUNC_ROOT, u->rt->name);
		daemon_mkdir(u->root, 0700);
	}
}

/*
 * crun refuses the hybrid layout ("cgroups in hybrid mode not supported")
 * when the unified hierarchy is mounted beside the v1 ones.  There it is
 * systemd's, with no controller, and the v1 backend does not use it: the
 * helper's own mounts, which crun sees, do without it.
 */
static void
priv_crun_view(void)
{
	if (!rtuse_any(RUNTIME_CRUN) || strcmp(cgroup_version(), "v1") != 0)
		return;
	if (umount2(CG_UNIFIED_V1, MNT_DETACH) == 0)
		log_debug("crun: %s hidden from the runtime", CG_UNIFIED_V1);
	else if (errno != EINVAL && errno != ENOENT)
		fatal("crun: hiding %s", CG_UNIFIED_V1);
}

/* Kill and delete every container in our runtimes' roots; how many. */
static int
priv_delete_all(void)
{
	char		 out[65536], *id, *save;
	const char	*list[] = { NULL, "--root", NULL, "list", "--quiet",
			    NULL };
	const char	*del[] = { NULL, "--root", NULL, "delete", "--force",
			    NULL, NULL };
	size_t		 i;
	int		 n = 0;

	for (i = 0; i < pconf->nruntimes; i++) {
		if (!rtuses[i].used)
			continue;
		list[0] = del[0] = rtuses[i].rt->path;
		list[2] = del[2] = rtuses[i].root;
		if (run_wait(list, out, sizeof(out)) != 0)
			continue;
		for (id = strtok_r(out, "\n", &save); id != NULL;
		    id = strtok_r(NULL, "\n", &save)) {
			if (!sandbox_id_valid(id))
				continue;
			del[5] = id;
			run_wait(del, NULL, 0);
			n++;
		}
	}
	return n;
}

/*
 * Queued signals and POSIX timers of every sandbox count, past its user
 * namespace, against the uid that made the namespace, root, with the
 * RLIMIT_SIGPENDING of the process that made it, runc, as their ceiling.
 * runc inherits ours: half of root's, so that all sandboxes together
 * leave root's own processes the other half.
 */
static void
priv_rlimits(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_SIGPENDING, &rl) == -1)
		fatal("RLIMIT_SIGPENDING");
	if (rl.rlim_cur == RLIM_INFINITY)
		return;		/* root's processes are not limited */
	rl.rlim_cur /= 2;
	if (setrlimit(RLIMIT_SIGPENDING, &rl) == -1)
		fatal("RLIMIT_SIGPENDING");
}

/* Copy the file src to a new dst, mode 0555. */
static int
priv_copy(const char *src, const char *dst)
{
	struct stat	 st;
	ssize_t		 n = 0;
	off_t		 off = 0;
	int		 in, out = -1, saved;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(in, &st) == -1 || (out = open(dst, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0555)) == -1)
		n = -1;
	while (n != -1 && off < st.st_size)
		if ((n = sendfile(out, in, &off, (size_t)(st.st_size - off))) ==
		    0) {
			errno = EIO;	/* the file shrank */
			n = -1;
		}
	saved = errno;
	close(in);
	if (out != -1 && close(out) == -1 && n != -1) {
		saved = errno;
		n = -1;
	}
	errno = saved;
	return n == -1 ? -1 : 0;
}

/*
 * The host's files that containers mount, the host image (the skeleton
 * root and the synthetic /etc) and sandbox-init, go on a tmpfs of this
 * mount namespace's own at dir, read-only once made: a sandbox's
 * /proc/self/mountinfo gives each mount's path within its filesystem,
 * which is then /rootfs, /etc and /sandbox-init rather than paths under
 * the state directory and the install path.
 */
static void
priv_host_files(const char *dir)
{
	char		 err[256];
	/*
	 * runsc's gofer remounts the root read-only from inside a user
	 * namespace, where flags it does not repeat are locked: EPERM.
	 * Nothing here could use them: a read-only tmpfs of directories,
	 * copies of /etc files and sandbox-init, none set-id, no device.
	 */
	unsigned long	 host_flags = rtuse_any(RUNTIME_RUNSC) ? 0 :
			    MS_NOSUID | MS_NODEV;

	daemon_mkdir(dir, 0755);
	if (mount("mcpd", dir, "tmpfs", host_flags,
	    "mode=0755,size=64m") == -1)
		fatal("tmpfs on %s", dir);
	if (image_host_prepare(dir, &host_image, err, sizeof(err)) == -1)
		fatalx("host image: %s", err);
	(void)str_fmt(init_copy, sizeof(init_copy), "%s/sandbox-init", dir);
	if (priv_copy(pconf->sandbox_init, init_copy) == -1)
		fatal("sandbox-init %s", pconf->sandbox_init);
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | host_flags,
	    NULL) == -1)
		fatal("remounting %s read-only", dir);
}

static void
priv_setup(void)
{
	char		 path[PATH_MAX], err[256];
	struct image	*im;
	int		 n;

	if (unshare(CLONE_NEWNS) == -1)
		fatal("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		fatal("making mounts private");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		fatal("PR_SET_CHILD_SUBREAPER");
	priv_rlimits();
	priv_runtimes();
	if (cgroup_helper_view(path, sizeof(path)) == -1)
		fatalx("cgroups: %s", path);
	priv_crun_view();
	memsw = cgroup_swap();

	/* Containers a previous sandboxd left: none of them is wanted. */
	if ((n = priv_delete_all()) > 0)
		log_info("removed %d containers left by a previous run", n);
	(void)str_fmt(path, sizeof(path), "%s/%s", pconf->run_dir, SBX_BUNDLES);
	rm_tree(path);
	daemon_mkdir(path, 0700);
	(void)str_fmt(path, sizeof(path), "%s/%s", pconf->state_dir, SBX_DISKS);
	/* runc mounts as the container's root: it must pass, not list. */
	daemon_mkdir(path, 0711);

	if (access(pconf->sandbox_init, X_OK) == -1)
		fatal("sandbox-init %s", pconf->sandbox_init);
	(void)str_fmt(path, sizeof(path), "%s/%s/%s", pconf->state_dir, SBX_IMAGES,
	    HOST_IMAGE);
	priv_host_files(path);
	TAILQ_FOREACH(im, &pconf->images, entry)
		if (im->type == IMAGE_ROOTFS &&
		    image_rootfs_check(im->path, err, sizeof(err)) == -1)
			fatalx("image \"%s\": %s", im->name, err);
	/* Compiled once: runc would compile it for every container. */
	if ((filter_memfd = bundle_filter(err, sizeof(err))) == -1)
		fatalx("%s", err);
	{
		struct limits	*l;

		TAILQ_FOREACH(l, &pconf->limits, entry)
			if (l->network == NET_EGRESS &&
			    access("/usr/bin/slirp4netns", X_OK) == -1)
				fatalx("limits \"%s\" allow network egress, "
				    "which needs slirp4netns: install it",
				    l->name);
	}
}

/*
 * The image a container starts from.  A stored one is looked up by its
 * digest each time, and checked as at start: mcpctl may have removed it.
 */
static struct image *
priv_image(struct pop *op, char *err, size_t len)
{
	struct imgstore_image	 si;
	int			 r;

	if (op->start.digest[0] == '\0')
		return policy_image(pconf, op->start.image);
	r = imgstore_lookup_digest(pconf->state_dir, op->start.digest, &si,
	    err, len);
	if (r == 1)
		snprintf(err, len, "%s is no longer in the store",
		    op->start.digest);
	if (r != 0 || image_rootfs_check(si.rootfs, err, len) == -1)
		return NULL;
	memset(&op->image, 0, sizeof(op->image));
	str_copy(op->image.name, op->start.image, sizeof(op->image.name));
	op->image.type = IMAGE_ROOTFS;
	op->image.stored = 1;
	str_copy(op->image.path, si.rootfs, sizeof(op->image.path));
	str_copy(op->image.digest, si.digest, sizeof(op->image.digest));
	return &op->image;
}

/* Validation: every field, before anything is done. */

static const char *
priv_check_start(const struct priv_start *ps, struct image **imp)
{
	if (memchr(ps->id, '\0', sizeof(ps->id)) == NULL ||
	    !sandbox_id_valid(ps->id))
		return "bad sandbox id";
	if (memchr(ps->image, '\0', sizeof(ps->image)) == NULL ||
	    memchr(ps->digest, '\0', sizeof(ps->digest)) == NULL)
		return "unterminated image";
	if (memchr(ps->runtime, '\0', sizeof(ps->runtime)) == NULL)
		return "unterminated runtime";
	if (ps->digest[0] != '\0') {
		/* Found in the store when the container is made. */
		if (!imgstore_valid_name(ps->image) ||
		    !imgstore_valid_digest(ps->digest))
			return "bad stored image";
		*imp = NULL;
	} else if ((*imp = policy_image(pconf, ps->image)) == NULL)
		return "unknown image";
	if (ps->memory < (4ULL << 20) || ps->memory > (1ULL << 40))
		return "memory out of range";
	if (ps->disk < (1ULL << 20) || ps->disk > (1ULL << 40))
		return "disk out of range";
	if (ps->cpus < 10 || ps->cpus > 1024000)
		return "cpus out of range";
	if (ps->pids < 1 || ps->pids > 1000000)
		return "pids out of range";
	if (ps->network != NET_NONE && ps->network != NET_EGRESS)
		return "bad network mode";
	if (ps->slot >= pconf->uid_slots)
		return "uid range out of range";
	if (ps->persistent > 1)
		return "bad persistence flag";
	return NULL;
}

/* Commands. */

static pid_t
priv_spawn(const char *const argv[], int initfd, int filterfd)
{
	return priv_spawn_at(argv, initfd, 3, filterfd, SBX_FILTER_FD);
}

/*
 * Stdio to /dev/null, initfd as initat and filterfd as filterat; runsc
 * passes a container nothing but its stdio, so there they are 0 and 1.
 */
static pid_t
priv_spawn_at(const char *const argv[], int initfd, int initat, int filterfd,
    int filterat)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 sa;
	sigset_t			 def;
	pid_t				 pid;
	int				 i, r;

	/*
	 * posix_spawn(3), which shares our memory until the exec rather
	 * than copying page tables: this runs for every container.  Stdio
	 * to /dev/null, the init socket and the seccomp filter over it
	 * where they go (dup2 onto itself would clear close-on-exec too),
	 * signals back to their defaults.
	 */
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	if (posix_spawnattr_init(&sa) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	r = 0;
	for (i = 0; i < 3 && r == 0; i++)
		r = posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
		    O_RDWR, 0);
	if (r == 0 && initfd != -1)
		r = posix_spawn_file_actions_adddup2(&fa, initfd, initat);
	if (r == 0 && filterfd != -1)
		r = posix_spawn_file_actions_adddup2(&fa, filterfd, filterat);
	sigfillset(&def);
	if (r == 0)
		r = posix_spawnattr_setsigdefault(&sa, &def);
	/*
	 * A process group of its own: a Ctrl-C at the terminal of a make run
	 * reaches the daemons, which stop in order, but never a runtime
	 * half-way through creating a container, which it would leave.
	 */
	if (r == 0)
		r = posix_spawnattr_setpgroup(&sa, 0);
	if (r == 0)
		r = posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGDEF |
		    POSIX_SPAWN_SETPGROUP);
	if (r == 0)
		r = posix_spawn(&pid, argv[0], &fa, &sa,
		    (char *const *)(uintptr_t)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&sa);
	if (r != 0) {
		errno = r;
		return -1;
	}
	return pid;
}

/*
 * The runtime, starting a container from op's bundle in the background.
 * runc and crun take the init socket and the filter as fds 3 and 4;
 * runsc, which passes a container its stdio alone, as 0 and 1, and its
 * own options: the platform, and no network (its kernel would otherwise
 * give the sandbox one of its own, on the host's namespace's devices).
 */
static pid_t
priv_runtime_run(struct pop *op, const char *pidfile, const char *logf)
{
	char		 platform[32];
	const char	*argv[20];
	const struct runtime	*rt = op->rt->rt;
	int		 n = 0, runsc = rt->kind == RUNTIME_RUNSC;

	argv[n++] = rt->path;
	argv[n++] = "--root";
	argv[n++] = op->rt->root;
	argv[n++] = "--log";
	argv[n++] = logf;
	if (runsc && rt->platform[0] != '\0') {
		(void)str_fmt(platform, sizeof(platform), "--platform=%s",
		    rt->platform);
		argv[n++] = platform;
	}
	/*
	 * With egress, the namespace the bundle names, which slirp4netns
	 * alone connects, through the host's network stack by default:
	 * gVisor's own ("network sandbox") refuses to start on Linux 6.x
	 * in runsc before August 2024, taking any namespace for the root.
	 */
	if (runsc && op->start.network != NET_EGRESS)
		argv[n++] = "--network=none";
	else if (runsc)
		argv[n++] = rt->network == RUNTIME_NET_SANDBOX ?
		    "--network=sandbox" : "--network=host";
	/*
	 * The root is read-only and every writable place a tmpfs or the
	 * workspace: an overlay over it (runsc's default since 2023) would
	 * only cost its start.
	 */
	if (runsc && op->rt->overlay2)
		argv[n++] = "--overlay2=none";
	argv[n++] = "run";
	argv[n++] = "--detach";
	if (!runsc) {
		argv[n++] = "--preserve-fds";
		argv[n++] = "2";
	}
	argv[n++] = "--pid-file";
	argv[n++] = pidfile;
	argv[n++] = "--bundle";
	argv[n++] = op->bundle;
	argv[n++] = op->id;
	argv[n] = NULL;
	if (runsc)
		return priv_spawn_at(argv, op->initfd, SBX_RUNSC_CTL_FD,
		    filter_memfd, SBX_RUNSC_FILTER_FD);
	return priv_spawn(argv, op->initfd, filter_memfd);
}

/* Attach disk to a free loop device and mount it at ws. */
static int
priv_mount_disk(const char *disk, const char *ws, char *err, size_t len)
{
	struct loop_config	 lc;
	char			 dev[64];
	int			 ctl, fd, lfd, n, tries;

	if ((fd = open(disk, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		snprintf(err, len, "open disk: %s", strerror(errno));
		return -1;
	}
	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, len, "/dev/loop-control: %s", strerror(errno));
		close(fd);
		return -1;
	}
	for (tries = 0; tries < 16; tries++) {
		if ((n = ioctl(ctl, LOOP_CTL_GET_FREE)) == -1)
			break;
		snprintf(dev, sizeof(dev), "/dev/loop%d", n);
		if ((lfd = open(dev, O_RDWR | O_CLOEXEC)) == -1)
			continue;
		memset(&lc, 0, sizeof(lc));
		lc.fd = (uint32_t)fd;
		lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (ioctl(lfd, LOOP_CONFIGURE, &lc) == -1) {
			close(lfd);
			if (errno == EBUSY)
				continue;	/* taken meanwhile */
			break;
		}
		close(ctl);
		close(fd);
		if (mount(dev, ws, "ext4", MS_NOSUID | MS_NODEV, NULL) == -1) {
			snprintf(err, len, "mount %s: %s", dev,
			    strerror(errno));
			close(lfd);
			return -1;
		}
		/* Autoclear: the device goes with the mount. */
		close(lfd);
		return 0;
	}
	snprintf(err, len, "no loop device: %s", strerror(errno));
	close(ctl);
	close(fd);
	return -1;
}

/*
 * Remember a new container's init by a pidfd, once it is sure the pid is
 * still that init: it is our child, so only we could have reaped it, and
 * /proc says it is in the container's groups.  Without a pidfd the
 * container is destroyed by runc delete.
 */
static struct ctr *
ctr_add(const char *id, pid_t pid)
{
	struct ctr	*c;
	char		 path[64], buf[4096], want[PATH_MAX];
	ssize_t		 n;
	int		 fd, pidfd;

	if ((pidfd = pidfd_open(pid, 0)) == -1) {
		log_debug("sandbox %s: pidfd_open: %s", id, strerror(errno));
		return NULL;
	}
	(void)str_fmt(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	(void)cgroup_proc_match(id, want, sizeof(want));
	n = -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0 || (buf[n] = '\0', strstr(buf, want) == NULL)) {
		log_debug("sandbox %s: pid %d is not its init", id, (int)pid);
		close(pidfd);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	memcpy(c->id, id, sizeof(c->id));
	c->pidfd = pidfd;
	TAILQ_INSERT_TAIL(&ctrs, c, entry);
	return c;
}

static struct ctr *
ctr_find(const char *id)
{
	struct ctr	*c;

	TAILQ_FOREACH(c, &ctrs, entry)
		if (strcmp(c->id, id) == 0)
			return c;
	return NULL;
}

/* The pidfd of a container's init, now the caller's; -1 if unknown. */
static int
ctr_take(const char *id)
{
	struct ctr	*c;
	int		 fd;

	if ((c = ctr_find(id)) == NULL)
		return -1;
	TAILQ_REMOVE(&ctrs, c, entry);
	fd = c->pidfd;
	free(c);
	return fd;
}

static void
pop_reply(struct pop *op, uint32_t type, pid_t pid)
{
	struct priv_result	 r;

	memset(&r, 0, sizeof(r));
	memcpy(r.id, op->id, sizeof(r.id));
	r.pid = pid;
	str_copy(r.message, op->error, sizeof(r.message));
	imsgev_compose(&piev, type, 0, -1, &r, sizeof(r));
}

static void
pop_free(struct pop *op)
{
	TAILQ_REMOVE(&pops, op, entry);
	if (op->ev_exit != NULL)
		event_free(op->ev_exit);
	if (op->ev_slow != NULL)
		event_free(op->ev_slow);
	if (op->pidfd != -1)
		close(op->pidfd);
	if (op->initfd != -1)
		close(op->initfd);
	if (op->ev_ready != NULL)
		event_free(op->ev_ready);
	if (op->readyfd != -1)
		close(op->readyfd);
	free(op);
}

enum {
	START_DISK,		/* persistent: make the disk if missing */
	START_MKFS,		/* wait for mkfs.ext4 */
	START_NET,		/* runsc with egress: its network first */
	START_BUNDLE,		/* mount, write the bundle, run runc */
	START_RUNC,		/* wait for runc run -d */
};

/* End a container's network, if it has one. */
static void
net_stop(const char *id)
{
	struct net	*n;

	TAILQ_FOREACH(n, &nets, entry)
		if (strcmp(n->id, id) == 0)
			break;
	if (n == NULL)
		return;
	TAILQ_REMOVE(&nets, n, entry);
	close(n->exitfd);
	kill(n->pid, SIGTERM);
	free(n);
}

static void
net_ready(evutil_socket_t fd, short events, void *arg)
{
	struct pop	*op = arg;
	char		 c;

	if (read(op->readyfd, &c, 1) != 1) {
		pop_fail(op, "the user-mode network did not come up");
		return;
	}
	/* runsc's network is there before its container: on with that. */
	if (op->step == START_NET) {
		event_free(op->ev_ready);
		op->ev_ready = NULL;
		close(op->readyfd);
		op->readyfd = -1;
		op->step = START_BUNDLE;
		pop_step(op, 0);
		return;
	}
	pop_reply(op, IMSG_PRIV_STARTED, op->initpid);
	pop_free(op);
}

/*
 * A network namespace of its own at path (a new file), held by a bind
 * mount in the helper's mount namespace: for runsc, whose sandbox joins
 * one given in the bundle, set up before it starts.
 */
static int
net_ns(const char *path)
{
	pid_t	 pid, r;
	int	 fd, st = 0;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return -1;
	close(fd);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) == -1 ||
		    mount("/proc/self/ns/net", path, NULL, MS_BIND, NULL) == -1)
			_exit(1);
		_exit(0);
	}
	while ((r = waitpid(pid, &st, 0)) == -1 && errno == EINTR)
		;
	if (r != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * slirp4netns gives the container's own network namespace a NAT to the
 * outside, with the host's loopback out of reach; it sandboxes itself.
 */
static int
net_start(struct pop *op, const char *nspath)
{
	struct net	*n;
	char		 pid[16];
	int		 ready[2], ex[2], devnull;
	const char	*argv[] = { "/usr/bin/slirp4netns", "--configure",
			    "--mtu=65520", "--disable-host-loopback",
			    "--enable-sandbox", "--enable-seccomp",
			    "--ready-fd=3", "--exit-fd=4", pid, "tap0", NULL,
			    NULL };

	/* The namespace of the container's init, or the one at nspath. */
	if (nspath != NULL) {
		argv[8] = "--netns-type=path";
		argv[9] = nspath;
		argv[10] = "tap0";
	} else
		snprintf(pid, sizeof(pid), "%d", (int)op->initpid);
	if (pipe2(ready, O_CLOEXEC) == -1)
		return -1;
	if (pipe2(ex, O_CLOEXEC) == -1) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	n = xcalloc(1, sizeof(*n));
	memcpy(n->id, op->id, sizeof(n->id));
	if ((n->pid = fork_for_exec()) == -1) {
		close(ready[0]);
		close(ready[1]);
		close(ex[0]);
		close(ex[1]);
		free(n);
		return -1;
	}
	if (n->pid == 0) {
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		dup2(ready[1], 3);
		dup2(ex[0], 4);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(ready[1]);
	close(ex[0]);
	n->exitfd = ex[1];
	TAILQ_INSERT_TAIL(&nets, n, entry);
	op->readyfd = ready[0];
	if ((op->ev_ready = event_new(pbase, op->readyfd, EV_READ,
	    net_ready, op)) == NULL || event_add(op->ev_ready, NULL) == -1)
		fatalx("priv: cannot watch the network's start");
	return 0;
}

static void
pop_fail(struct pop *op, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(op->error, sizeof(op->error), fmt, ap);
	va_end(ap);
	log_warnx("sandbox %s: %s", op->id, op->error);
	if (op->ev_ready != NULL) {
		event_free(op->ev_ready);
		op->ev_ready = NULL;
	}
	if (op->type == IMSG_PRIV_START) {
		/* Undo what was done; the reply goes after that. */
		op->type = IMSG_PRIV_DESTROY;
		op->flags = PRIV_DESTROY_FAILED_START;
		op->step = 0;
		pop_step(op, 0);
		return;
	}
	pop_reply(op, (op->flags & PRIV_DESTROY_FAILED_START) ?
	    IMSG_PRIV_STARTED : IMSG_PRIV_DESTROYED, 0);
	pop_free(op);
}

/* The runc error in the log of a failed start, for the client to see. */
static void
pop_runc_error(struct pop *op, int status)
{
	char	 path[PATH_MAX], buf[4096], *line, *save, *last = NULL;
	int	 fd;
	ssize_t	 n;

	(void)str_fmt(path, sizeof(path), "%s/runc.log", op->bundle);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		pop_fail(op, "%s failed with status %d",
		    policy_runtime_kind(op->rt->rt->kind), status);
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		last = line;
	pop_fail(op, "%s failed: %s", policy_runtime_kind(op->rt->rt->kind),
	    last != NULL ? last : "no message");
}

static void
pop_start(struct pop *op, int status)
{
	char		 uidgid[64], err[256], pidfile[PATH_MAX], logf[PATH_MAX];
	char		 buf[32], cgpath[64], netns[PATH_MAX];
	struct bundle	 b;
	struct limits	 lim;
	struct ctr	*c;
	uint32_t	 base;
	int		 fd, runsc;
	ssize_t		 n;
	pid_t		 pid;

	base = pconf->uid_base + op->start.slot * UID_RANGE;
	runsc = op->rt->rt->kind == RUNTIME_RUNSC;
	/* Under runsc, egress is a namespace made and joined: net_ns(). */
	(void)str_fmt(netns, sizeof(netns), "%s/netns", op->bundle);
	switch (op->step) {
	case START_DISK:
		(void)str_fmt(op->bundle, sizeof(op->bundle), "%s/%s/%s",
		    pconf->run_dir, SBX_BUNDLES, op->id);
		if (mkdir(op->bundle, 0700) == -1) {
			pop_fail(op, "bundle: %s", strerror(errno));
			return;
		}
		if (!op->start.persistent) {
			op->step = START_NET;
			pop_start(op, 0);
			return;
		}
		(void)str_fmt(op->disk, sizeof(op->disk), "%s/%s/%s",
		    pconf->state_dir, SBX_DISKS, op->id);
		(void)str_fmt(op->ws, sizeof(op->ws), "%s/ws", op->disk);
		if (mkdir(op->disk, 0711) == -1 && errno != EEXIST) {
			pop_fail(op, "disk directory: %s", strerror(errno));
			return;
		}
		if (mkdir(op->ws, 0755) == -1 && errno != EEXIST) {
			pop_fail(op, "workspace: %s", strerror(errno));
			return;
		}
		(void)str_fmt(err, sizeof(err), "%s/disk.img", op->disk);
		if (access(err, F_OK) == 0) {
			op->step = START_NET;
			pop_start(op, 0);
			return;
		}
		/* A sparse file: space is taken as the sandbox writes. */
		if ((fd = open(err, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0600)) == -1 ||
		    ftruncate(fd, (off_t)op->start.disk) == -1) {
			pop_fail(op, "disk: %s", strerror(errno));
			if (fd != -1)
				close(fd);
			return;
		}
		close(fd);
		snprintf(uidgid, sizeof(uidgid), "root_owner=%u:%u",
		    base + SBX_USER_UID, base + SBX_USER_UID);
		{
			/* One inode per 4 KiB, as bundle.c gives a tmpfs. */
			const char *argv[] = { "/sbin/mkfs.ext4", "-q", "-F",
			    "-m", "0", "-i", "4096", "-E", uidgid, err, NULL };

			if ((op->pid = priv_spawn(argv, -1, -1)) == -1) {
				pop_fail(op, "mkfs: %s", strerror(errno));
				return;
			}
		}
		op->step = START_MKFS;
		return;
	case START_MKFS:
		if (status != 0) {
			(void)str_fmt(err, sizeof(err), "%s/disk.img", op->disk);
			unlink(err);
			pop_fail(op, "mkfs.ext4 failed with status %d",
			    status);
			return;
		}
		op->step = START_NET;
		pop_start(op, 0);
		return;
	case START_NET:
		if (!runsc || op->start.network != NET_EGRESS) {
			op->step = START_BUNDLE;
			pop_start(op, 0);
			return;
		}
		/* On with the bundle once slirp4netns is ready: net_ready(). */
		if (net_ns(netns) == -1 || net_start(op, netns) == -1)
			pop_fail(op, "network namespace: %s", strerror(errno));
		return;
	case START_BUNDLE:
		if (op->start.persistent) {
			(void)str_fmt(err, sizeof(err), "%s/disk.img", op->disk);
			if (priv_mount_disk(err, op->ws, op->error,
			    sizeof(op->error)) == -1) {
				pop_fail(op, "%s", op->error);
				return;
			}
			/* A workspace, not a filesystem: no lost+found. */
			if (str_fmt(err, sizeof(err), "%s/lost+found",
			    op->ws) == 0)
				(void)rmdir(err);
		}
		memset(&lim, 0, sizeof(lim));
		lim.memory = op->start.memory;
		lim.disk = op->start.disk;
		lim.cpus = op->start.cpus;
		lim.pids = op->start.pids;
		lim.network = op->start.network;
		snprintf(cgpath, sizeof(cgpath), "/%s/%s", cgroup_parent(), op->id);
		memset(&b, 0, sizeof(b));
		b.id = op->id;
		b.dir = op->bundle;
		if ((b.image = priv_image(op, err, sizeof(err))) == NULL) {
			pop_fail(op, "image %s: %s", op->start.image, err);
			return;
		}
		b.host = &host_image;
		b.init = init_copy;
		b.uid_base = base;
		b.limits = &lim;
		b.workspace = op->start.persistent ? op->ws : NULL;
		b.cgroup = cgpath;
		b.memsw = memsw;
		b.filter_fd = SBX_FILTER_FD;
		b.runsc = runsc;
		b.netns = runsc && op->start.network == NET_EGRESS ? netns :
		    NULL;
		if (bundle_write(&b, err, sizeof(err)) == -1) {
			pop_fail(op, "bundle: %s", err);
			return;
		}
		(void)str_fmt(pidfile, sizeof(pidfile), "%s/pid", op->bundle);
		(void)str_fmt(logf, sizeof(logf), "%s/runc.log", op->bundle);
		if ((op->pid = priv_runtime_run(op, pidfile, logf)) == -1) {
			pop_fail(op, "%s: %s", op->rt->rt->path,
			    strerror(errno));
			return;
		}
		close(op->initfd);
		op->initfd = -1;
		op->step = START_RUNC;
		return;
	case START_RUNC:
		if (status != 0) {
			pop_runc_error(op, status);
			return;
		}
		(void)str_fmt(pidfile, sizeof(pidfile), "%s/pid", op->bundle);
		pid = 0;
		if ((fd = open(pidfile, O_RDONLY | O_CLOEXEC)) != -1) {
			if ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
				buf[n] = '\0';
				pid = (pid_t)strtol(buf, NULL, 10);
			}
			close(fd);
		}
		if (pid <= 0) {
			pop_fail(op, "runc left no pid");
			return;
		}
		op->initpid = pid;
		if ((c = ctr_add(op->id, pid)) != NULL) {
			c->wipeable = !runsc && !op->start.persistent &&
			    op->start.network == NET_NONE;
			c->uid_base = base;
			c->disk = op->start.disk;
		}
		if (cgroup_sandbox_settle(op->id, pid, runsc) == -1) {
			pop_fail(op, "cannot settle the container's cgroups");
			return;
		}
		/* The kernel's OOM choice would be gVisor's: guard.c. */
		if (op->rt->rt->kind == RUNTIME_RUNSC)
			(void)guard_start(op->id);
		if (op->start.network == NET_EGRESS && !runsc) {
			if (net_start(op, NULL) == -1)
				pop_fail(op, "slirp4netns: %s", strerror(errno));
			return;		/* STARTED once it is configured */
		}
		pop_reply(op, IMSG_PRIV_STARTED, pid);
		pop_free(op);
		return;
	}
}

#define DESTROY_KILL_SECS	10

enum {
	DESTROY_KILL,		/* kill its init, or have runc delete it */
	DESTROY_EXITED,		/* its init is gone: take its groups away */
	DESTROY_WAIT,		/* runc delete is done */
};

static void
pop_exited(evutil_socket_t fd, short events, void *arg)
{
	pop_step(arg, 0);
}

static void
pop_kill_done(struct pop *op)
{
	event_free(op->ev_exit);
	op->ev_exit = NULL;
	event_free(op->ev_slow);
	op->ev_slow = NULL;
	close(op->pidfd);
	op->pidfd = -1;
}

static void
pop_runc_delete(struct pop *op)
{
	const char *argv[] = { op->rt->rt->path, "--root", op->rt->root,
	    "delete", "--force", op->id, NULL };

	if ((op->pid = priv_spawn(argv, -1, -1)) == -1) {
		pop_fail(op, "runc: %s", strerror(errno));
		return;
	}
	op->step = DESTROY_WAIT;
}

/* A kill that does not end it is runc's to try. */
static void
pop_kill_slow(evutil_socket_t fd, short events, void *arg)
{
	struct pop	*op = arg;

	log_warnx("sandbox %s: its init did not end %d s after SIGKILL; "
	    "trying runc delete", op->id, DESTROY_KILL_SECS);
	pop_kill_done(op);
	pop_runc_delete(op);
}

static void
pop_destroy(struct pop *op, int status)
{
	struct timeval	 slow = { DESTROY_KILL_SECS, 0 };
	char		 ws[PATH_MAX];

	switch (op->step) {
	case DESTROY_KILL:
		net_stop(op->id);
		guard_stop(op->id);
		(void)str_fmt(op->bundle, sizeof(op->bundle), "%s/%s/%s",
		    pconf->run_dir, SBX_BUNDLES, op->id);
		/*
		 * Its init dies, and the kernel kills the rest of its pid
		 * namespace before init's end is seen.  Frozen members
		 * would hold that up: they are thawed, to die.
		 */
		if ((op->pidfd = ctr_take(op->id)) == -1 ||
		    (pidfd_send_signal(op->pidfd, SIGKILL, NULL, 0) == -1 &&
		    errno != ESRCH)) {
			pop_runc_delete(op);
			return;
		}
		cgroup_sandbox_thaw(op->id);
		if ((op->ev_exit = event_new(pbase, op->pidfd, EV_READ,
		    pop_exited, op)) == NULL || event_add(op->ev_exit,
		    NULL) == -1 || (op->ev_slow = evtimer_new(pbase,
		    pop_kill_slow, op)) == NULL || evtimer_add(op->ev_slow,
		    &slow) == -1)
			fatalx("priv: cannot watch a container's end");
		op->step = DESTROY_EXITED;
		return;
	case DESTROY_EXITED:
		pop_kill_done(op);
		/*
		 * runsc keeps state of its own beside the container's
		 * (its gofer's, the sandbox's): always its delete.
		 */
		if (op->rt->rt->kind == RUNTIME_RUNSC) {
			pop_runc_delete(op);
			return;
		}
		/* Anything left that runc would know better: its turn. */
		if (cgroup_sandbox_remove(op->id) == -1) {
			pop_runc_delete(op);
			return;
		}
		(void)str_fmt(ws, sizeof(ws), "%s/%s", op->rt->root, op->id);
		if (rm_tree(ws) == -1)
			log_warn("sandbox %s: remove runc state", op->id);
		log_debug("sandbox %s: killed; its groups and runc state "
		    "removed", op->id);
		op->step = DESTROY_WAIT;
		/* FALLTHROUGH */
	case DESTROY_WAIT:
		/* runsc's delete has ended its gofer, the groups' last. */
		if (op->rt->rt->kind == RUNTIME_RUNSC)
			(void)cgroup_sandbox_remove(op->id);
		/* runc says nothing useful if the container is gone. */
		(void)str_fmt(op->disk, sizeof(op->disk), "%s/%s/%s",
		    pconf->state_dir, SBX_DISKS, op->id);
		(void)str_fmt(ws, sizeof(ws), "%s/ws", op->disk);
		if (umount2(ws, MNT_DETACH) == -1 && errno != EINVAL &&
		    errno != ENOENT)
			log_warn("sandbox %s: umount workspace", op->id);
		(void)str_fmt(ws, sizeof(ws), "%s/netns", op->bundle);
		if (umount2(ws, MNT_DETACH) == -1 && errno != EINVAL &&
		    errno != ENOENT)
			log_warn("sandbox %s: umount its network", op->id);
		if (rm_tree(op->bundle) == -1)
			log_warn("sandbox %s: remove bundle", op->id);
		if ((op->flags & PRIV_DESTROY_WORKSPACE) &&
		    rm_tree(op->disk) == -1)
			log_warn("sandbox %s: remove disk", op->id);
		if (op->flags & PRIV_DESTROY_FAILED_START) {
			pop_reply(op, IMSG_PRIV_STARTED, 0);
			pop_free(op);
			return;
		}
		pop_reply(op, IMSG_PRIV_DESTROYED, 0);
		pop_free(op);
		return;
	}
}

static void
pop_step(struct pop *op, int status)
{
	if (op->type == IMSG_PRIV_START)
		pop_start(op, status);
	else
		pop_destroy(op, status);
}

/*
 * Every child that ended is reaped before any operation steps on: a
 * zombie of runc's own init stages, handed to us as their subreaper,
 * keeps a new container's cgroup busy until then.
 */
static void
priv_sigchld(evutil_socket_t sig, short events, void *arg)
{
	struct pop	*op, *next;
	pid_t		 pid;
	int		 st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		TAILQ_FOREACH(op, &pops, entry)
			if (op->pid == pid) {
				op->pid = 0;
				op->done = 1;
				op->status = WIFEXITED(st) ? WEXITSTATUS(st) :
				    128 + WTERMSIG(st);
				break;
			}
	/* A container's init reaped is in no operation. */
	TAILQ_FOREACH_SAFE(op, &pops, entry, next)
		if (op->done) {
			op->done = 0;
			pop_step(op, op->status);
		}
}

/*
 * A wipe's work, in a child that joins the container's mount and IPC
 * namespaces through its init's pidfd (sandboxd/reuse.c).  Every process
 * but init is gone by now, and init holds nothing under these mounts.
 * Each SysV object is removed by its index, POSIX message queues by
 * name, and /tmp, /workspace and /dev/shm are detached and mounted anew
 * as bundle_config() has runc mount them.  Any failure is written to
 * errfd and ends the child with 1: the container is then destroyed.
 */
__attribute__((__noreturn__))
static void
wipe_child(const struct ctr *c, int errfd)
{
	struct bundle_fresh	 f[BUNDLE_FRESH_MOUNTS];
	struct shm_info		 shi;
	struct shmid_ds		 shd;
	struct msginfo		 mi;
	struct msqid_ds		 md;
	struct seminfo		 si;
	struct semid_ds		 sd;
	union semun {
		int		 val;
		struct semid_ds	*buf;
		unsigned short	*array;
		struct seminfo	*__buf;
	}			 arg;
	struct dirent		*de;
	DIR			*dir;
	char			 msg[SBX_MSG_MAX];
	const char		*what = NULL;
	int			 i, max, id, saved = 0;

	if (bundle_fresh_mounts(f, c->disk, c->uid_base) == -1) {
		what = "its mounts' options";
		goto fail;
	}
	if (setns(c->pidfd, CLONE_NEWNS | CLONE_NEWIPC) == -1) {
		what = "setns";
		goto fail;
	}
	if ((max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&shi)) ==
	    -1) {
		what = "SHM_INFO";
		goto fail;
	}
	for (i = 0; i <= max; i++)
		if ((id = shmctl(i, SHM_STAT, &shd)) != -1 &&
		    shmctl(id, IPC_RMID, NULL) == -1) {
			what = "a shared memory segment";
			goto fail;
		}
	if ((max = msgctl(0, MSG_INFO, (struct msqid_ds *)(void *)&mi)) ==
	    -1) {
		what = "MSG_INFO";
		goto fail;
	}
	for (i = 0; i <= max; i++)
		if ((id = msgctl(i, MSG_STAT, &md)) != -1 &&
		    msgctl(id, IPC_RMID, NULL) == -1) {
			what = "a message queue";
			goto fail;
		}
	arg.__buf = &si;
	if ((max = semctl(0, 0, SEM_INFO, arg)) == -1) {
		what = "SEM_INFO";
		goto fail;
	}
	arg.buf = &sd;
	for (i = 0; i <= max; i++)
		if ((id = semctl(i, 0, SEM_STAT, arg)) != -1 &&
		    semctl(id, 0, IPC_RMID) == -1) {
			what = "a semaphore set";
			goto fail;
		}
	/* The container's mqueue mount is its IPC namespace's. */
	if ((dir = opendir("/dev/mqueue")) == NULL) {
		what = "/dev/mqueue";
		goto fail;
	}
	while ((de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    unlinkat(dirfd(dir), de->d_name, 0) == -1) {
			saved = errno;
			what = "a POSIX message queue";
			break;
		}
	closedir(dir);
	if (what != NULL) {
		errno = saved;
		goto fail;
	}
	for (i = 0; i < BUNDLE_FRESH_MOUNTS; i++)
		if (umount2(f[i].path, MNT_DETACH) == -1 ||
		    mount("tmpfs", f[i].path, "tmpfs", f[i].flags,
		    f[i].data) == -1) {
			what = f[i].path;
			goto fail;
		}
	_exit(0);
 fail:
	saved = errno;
	(void)str_fmt(msg, sizeof(msg), "%s: %s", what, strerror(saved));
	if (write(errfd, msg, strlen(msg)) == -1)
		_exit(2);
	_exit(1);
}

/*
 * Wipe a container for its tenant's next run: the answer is WIPED, with
 * pid 1 once done.  Short and bounded, so done while the loop waits.
 */
static void
priv_wipe(const char *id)
{
	struct priv_result	 r;
	struct ctr		*c;
	ssize_t			 n;
	pid_t			 pid;
	int			 fds[2], st;

	memset(&r, 0, sizeof(r));
	memcpy(r.id, id, sizeof(r.id));
	if ((c = ctr_find(id)) == NULL || !c->wipeable) {
		(void)str_fmt(r.message, sizeof(r.message), "%s",
		    c == NULL ? "its init is not known" :
		    "it is not a one-shot container without network under "
		    "runc or crun");
		goto done;
	}
	if (pipe2(fds, O_CLOEXEC) == -1) {
		(void)str_fmt(r.message, sizeof(r.message), "pipe: %s",
		    strerror(errno));
		goto done;
	}
	if ((pid = fork()) == -1) {
		(void)str_fmt(r.message, sizeof(r.message), "fork: %s",
		    strerror(errno));
		close(fds[0]);
		close(fds[1]);
		goto done;
	}
	if (pid == 0) {
		close(fds[0]);
		wipe_child(c, fds[1]);
	}
	close(fds[1]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	n = read(fds[0], r.message, sizeof(r.message) - 1);
	close(fds[0]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && n <= 0)
		r.pid = 1;
	else if (n <= 0)
		(void)str_fmt(r.message, sizeof(r.message), "its wipe ended "
		    "with status %d", st);
 done:
	if (r.pid != 1)
		log_warnx("sandbox %s: cannot wipe it: %s", id, r.message);
	imsgev_compose(&piev, IMSG_PRIV_WIPED, 0, -1, &r, sizeof(r));
}

static void
priv_dispatch(struct imsgev *iev, struct imsg *imsg)
{
	struct priv_start	 ps;
	struct priv_destroy	 pd;
	struct priv_wipe	 pw;
	struct image		*im;
	struct pop		*op;
	const char		*why;

	switch (imsg->hdr.type) {
	case IMSG_PRIV_START:
		if (proto_payload(imsg->data, imsg->datalen, &ps,
		    sizeof(ps)) == -1 || imsg->fd == -1)
			fatalx("priv: malformed start request");
		op = xcalloc(1, sizeof(*op));
		op->type = IMSG_PRIV_START;
		op->readyfd = -1;
		op->pidfd = -1;
		op->initfd = imsg_take_fd(imsg);
		if ((why = priv_check_start(&ps, &im)) != NULL) {
			/* The main process broke the protocol. */
			fatalx("priv: refused start: %s", why);
		}
		op->start = ps;
		memcpy(op->id, ps.id, sizeof(op->id));
		TAILQ_INSERT_TAIL(&pops, op, entry);
		/* A reload may name one this helper never checked. */
		if ((op->rt = rtuse_find(ps.runtime)) == NULL) {
			(void)snprintf(op->error, sizeof(op->error), "runtime "
			    "%s was not in use when sandboxd started: restart "
			    "it to use it", ps.runtime);
			pop_reply(op, IMSG_PRIV_STARTED, 0);
			pop_free(op);
			break;
		}
		pop_step(op, 0);
		break;
	case IMSG_PRIV_DESTROY:
		if (proto_payload(imsg->data, imsg->datalen, &pd,
		    sizeof(pd)) == -1 ||
		    memchr(pd.id, '\0', sizeof(pd.id)) == NULL ||
		    !sandbox_id_valid(pd.id) ||
		    memchr(pd.runtime, '\0', sizeof(pd.runtime)) == NULL ||
		    (pd.flags & ~PRIV_DESTROY_WORKSPACE) != 0)
			fatalx("priv: malformed destroy request");
		op = xcalloc(1, sizeof(*op));
		op->type = IMSG_PRIV_DESTROY;
		op->initfd = -1;
		op->readyfd = -1;
		op->pidfd = -1;
		op->flags = pd.flags;
		memcpy(op->id, pd.id, sizeof(op->id));
		/* Its start found it: one the helper never used made none. */
		if ((op->rt = rtuse_find(pd.runtime)) == NULL)
			op->rt = rt_main;
		TAILQ_INSERT_TAIL(&pops, op, entry);
		pop_step(op, 0);
		break;
	case IMSG_PRIV_WIPE:
		if (proto_payload(imsg->data, imsg->datalen, &pw,
		    sizeof(pw)) == -1 ||
		    memchr(pw.id, '\0', sizeof(pw.id)) == NULL ||
		    !sandbox_id_valid(pw.id))
			fatalx("priv: malformed wipe request");
		priv_wipe(pw.id);
		break;
	default:
		fatalx("priv: unexpected message type %u", imsg->hdr.type);
	}
}

static void
priv_closed(struct imsgev *iev, const char *why)
{
	/* The main process is gone: so are we, and our containers. */
	event_base_loopbreak(pbase);
}

static void
priv_sigterm(evutil_socket_t sig, short events, void *arg)
{
	/* The main process died without closing the channel. */
	event_base_loopbreak(pbase);
}

/*
 * A killed container's init dies a moment after runc returns; as their
 * subreaper we wait for every one, so none is left a zombie when we go.
 */
static void
priv_reap_all(void)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	int		 i;

	for (i = 0; i < 500; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			return;
		nanosleep(&ts, NULL);
	}
	log_warnx("some container processes would not end");
}

static void
priv_shutdown(void)
{
	struct timespec	 ts = { 0, 10 * 1000000 };
	struct pop	*op;
	int		 i, busy;

	/* Nothing outlives sandboxd: kill and delete every container. */
	signal(SIGCHLD, SIG_DFL);
	/*
	 * A runc still creating one (a warm container on its way) would
	 * add it after the list: let what is under way finish first.
	 */
	for (i = 0; i < 1000; i++) {
		busy = 0;
		TAILQ_FOREACH(op, &pops, entry)
			if (op->pid > 0) {
				if (waitpid(op->pid, NULL, WNOHANG) == op->pid)
					op->pid = 0;
				else
					busy = 1;
			}
		if (!busy)
			break;
		nanosleep(&ts, NULL);
	}
	/*
	 * runsc's delete waits for the sandbox's kernel to end, and it is
	 * our child: we would never reap it while waiting for the delete.
	 * So every container's init dies first, and is reaped.
	 */
	if (rtuse_any(RUNTIME_RUNSC)) {
		struct ctr	*c;

		TAILQ_FOREACH(c, &ctrs, entry)
			(void)pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		priv_reap_all();
	}
	guard_stop_all();
	priv_delete_all();
	priv_reap_all();
	cgroup_cleanup(1);
}

/* The guard's word about sandbox id to sandboxd, written at once. */
static void
priv_oom_send(uint32_t type, const char *id)
{
	struct priv_result	 r;

	memset(&r, 0, sizeof(r));
	str_copy(r.id, id, sizeof(r.id));
	imsgev_compose(&piev, type, 0, -1, &r, sizeof(r));
}

/* About to kill a program for memory: before the kill, so before its
 * exec ends. */
static void
priv_oom_killed(const char *id)
{
	priv_oom_send(IMSG_PRIV_OOM, id);
}

/* The killed program's memory has not come back: sandboxd ends it. */
static void
priv_oom_stuck(const char *id)
{
	priv_oom_send(IMSG_PRIV_OOM_STUCK, id);
}

static __attribute__((__noreturn__)) void
priv_main(struct policy *conf, int fd, enum log_dest dest)
{
	struct event		*ev_chld, *ev_term;
	struct priv_ready	 ready;

	pconf = conf;
	log_init(dest, log_getverbose(), "mcp-sandboxd[priv]");
	/* Its own name in ps, top and perf, apart from the main process. */
	(void)prctl(PR_SET_NAME, "sandboxd-priv");
	/*
	 * What the helper runs gets this environment alone.  systemd's
	 * NOTIFY_SOCKET, for one, would have runc bind its own notify
	 * socket into every container, and the container fail to start.
	 */
	environ = priv_env;
	/* Ctrl-C reaches the whole group: the main process says when. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if ((pbase = event_base_new()) == NULL)
		fatalx("priv: cannot create the event base");
	/* SIGTERM also comes if the main process dies without a word. */
	if ((ev_term = evsignal_new(pbase, SIGTERM, priv_sigterm, NULL)) ==
	    NULL || evsignal_add(ev_term, NULL) == -1)
		fatalx("priv: cannot watch SIGTERM");
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		fatal("PR_SET_PDEATHSIG");
	if (getppid() == 1)
		exit(1);	/* the main process died already */
	priv_setup();
	guard_init(pbase, priv_oom_killed, priv_oom_stuck);

	if ((ev_chld = evsignal_new(pbase, SIGCHLD, priv_sigchld, NULL)) ==
	    NULL || evsignal_add(ev_chld, NULL) == -1)
		fatalx("priv: cannot watch SIGCHLD");
	if (imsgev_init(&piev, pbase, fd, PROTO_MAX_FRAME, IMSGBUF_FDPASS,
	    priv_dispatch, priv_closed, NULL) == -1)
		fatalx("priv: cannot set up its channel");
	memset(&ready, 0, sizeof(ready));
	/* The file's runtime's version ("1.1.5"), for it to report. */
	str_copy(ready.runc, rt_main->version, sizeof(ready.runc));
	imsgev_compose(&piev, IMSG_PRIV_READY, 0, -1, &ready, sizeof(ready));
	event_base_dispatch(pbase);

	priv_shutdown();
	exit(0);
}

/*
 * Fork the helper, for the daemon and for -n's trial alike: it runs
 * priv_main() on its end of a socketpair; ours comes back, non-blocking.
 */
int
priv_fork(struct policy *conf, enum log_dest dest, pid_t *pid)
{
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
	if ((*pid = fork()) == -1)
		fatal("fork");
	if (*pid == 0) {
		close(sv[0]);
		priv_main(conf, sv[1], dest);
	}
	close(sv[1]);
	if (fd_set_nonblock(sv[0]) == -1)
		fatal("the helper's channel");
	return sv[0];
}
