/*
 * The cgroup v2 backend: the unified hierarchy every current distribution
 * boots with.
 *
 * Every container lives in <base>/<parent>/<id>.  Under systemd, base is
 * the group of mcp-sandboxd.service, which Delegate=yes hands to us (the
 * unit's group then carries the trusted.delegate attribute); elsewhere,
 * as under make run, it is the root of the hierarchy this process sees.
 * Controllers can only be enabled beneath a group that holds no process,
 * so under delegation the daemon first moves itself into a leaf of its
 * own, <base>/daemon, and only then enables them in base.  The helper
 * sees base alone at /sys/fs/cgroup, a bind mount in its own mount
 * namespace: runc, which enables controllers in every group from the
 * root of what it sees down to a container's, never touches a group
 * systemd did not give us.
 *
 * Within a container's group, sandbox-init moves to a leaf, init/, as
 * soon as runc has started it, and the container's group gets the
 * controllers: each exec of its own is then a sibling, x<n>, with its own
 * cpu.stat, memory.peak, memory.events and pids.current, and a timeout
 * kills all of it at once with cgroup.kill.  Socket buffers count in
 * memory.max, as everything a group's processes allocate does.  The
 * execs with no group of their own run beside init, in init/; as v2
 * counters never start again at 0, only the first exec of a container
 * may do that (see exec.c).
 *
 * A container under runsc stays flat: gVisor's kernel, its gofer and the
 * stub processes that hold its programs' memory all stay in the
 * container's group, where runsc put them, and every exec is a whole one
 * there (the host cannot tell a command's processes apart).  With no
 * init/ leaf, exec 0 names the container's group itself.  Its OOM guard
 * (guard.c) has no oom_control to stop the kernel's choice, as v1 has:
 * memory.high, a margin below memory.max, makes what asks for memory past
 * it wait in reclaim, and says so in memory.events, while the guard kills
 * the biggest program; memory.max stays the limit the kernel holds.
 */
#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"
#include "cgroup.h"

#define CG2_RUNC_VIEW	"/sys/fs/cgroup"	/* where runc looks */
#define CG2_DAEMON	"daemon"		/* our leaf, delegated */
#define CG2_INIT	"init"			/* a container's init */
/* The OOM guard's margin below memory.max: a 16th, within these. */
#define CG2_MARGIN_MIN	(4ULL << 20)
#define CG2_MARGIN_MAX	(32ULL << 20)

/* What a container needs, and what its execs' groups account with. */
static const char *const cg2_ctrls[] = { "cpu", "memory", "pids" };

static char	 cg2_mnt[PATH_MAX];	/* the hierarchy's mount point */
static char	 cg2_rel[PATH_MAX];	/* base within it, "" for its root */
static char	 cg2_base[PATH_MAX];	/* base, where this process sees it */
static int	 cg2_delegated;
static int	 cg2_in_leaf;		/* systemd put us in one already */
static int	 cg2_kill;		/* cgroup.kill: Linux 5.14 */
static int	 cg2_peak;		/* memory.peak: Linux 5.19 */
static int	 cg2_memswap;		/* memory.swap.max: swap accounted */
/* Base's subtree_control as setup found it, for cg2_release(). */
static char	 cg2_base_before[512];
static int	 cg2_base_read;

static int
cg2_delegate_mark(const char *path)
{
	char	 v[8];
	ssize_t	 n;

	if ((n = getxattr(path, "trusted.delegate", v, sizeof(v))) <= 0)
		n = getxattr(path, "user.delegate", v, sizeof(v));
	return n > 0 && v[0] == '1';
}

/* This process's group, as /proc/self/cgroup gives it: "0::<path>". */
static int
cg2_own(char *buf, size_t len)
{
	char	 line[PATH_MAX + 8];
	FILE	*fp;
	int	 rv = -1;

	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (rv == -1 && fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			rv = str_copy(buf, line + 3, len);
		}
	fclose(fp);
	return rv;
}

static int
cg2_has_word(const char *list, const char *word)
{
	size_t		 len = strlen(word);
	const char	*p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ' || p[-1] == '+') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

static int
cg2_probe(const struct cg_mount *m, int n, char *err, size_t len)
{
	char	 own[PATH_MAX], path[PATH_MAX], ctrls[512], *slash;
	size_t	 i;
	int	 k;

	for (k = 0; k < n; k++)
		if (m[k].v2 && (cg2_mnt[0] == '\0' ||
		    strcmp(m[k].path, CG2_RUNC_VIEW) == 0))
			str_copy(cg2_mnt, m[k].path, sizeof(cg2_mnt));
	if (cg2_mnt[0] == '\0') {
		str_fmt(err, len, "no cgroup2 mount");
		return -1;
	}
	if (strcmp(cg2_mnt, CG2_RUNC_VIEW) != 0) {
		str_fmt(err, len, "cgroup2 is mounted on %s, not %s where "
		    "runc looks", cg2_mnt, CG2_RUNC_VIEW);
		return -1;
	}
	if (cg2_own(own, sizeof(own)) == -1) {
		str_fmt(err, len, "no cgroup v2 line in /proc/self/cgroup");
		return -1;
	}
	/*
	 * Our own group if it was delegated to us; its parent if systemd
	 * put us in a leaf of it already (DelegateSubgroup=).
	 */
	if (strcmp(own, "/") != 0 && str_fmt(path, sizeof(path), "%s%s",
	    cg2_mnt, own) == 0 && cg2_delegate_mark(path)) {
		cg2_delegated = 1;
		str_copy(cg2_rel, own, sizeof(cg2_rel));
	} else if ((slash = strrchr(own, '/')) != NULL && slash != own) {
		*slash = '\0';
		if (str_fmt(path, sizeof(path), "%s%s", cg2_mnt, own) == 0 &&
		    cg2_delegate_mark(path)) {
			cg2_delegated = cg2_in_leaf = 1;
			str_copy(cg2_rel, own, sizeof(cg2_rel));
		}
	}
	str_fmt(cg2_base, sizeof(cg2_base), "%s%s", cg2_mnt, cg2_rel);
	str_fmt(path, sizeof(path), "%s/cgroup.controllers", cg2_base);
	if (cg_read(path, ctrls, sizeof(ctrls)) == -1) {
		str_fmt(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < nitems(cg2_ctrls); i++)
		if (!cg2_has_word(ctrls, cg2_ctrls[i])) {
			str_fmt(err, len, "%s has no %s controller%s", cg2_base,
			    cg2_ctrls[i], cg2_delegated ? "" : " (is the "
			    "hierarchy hybrid, with it bound to v1?)");
			return -1;
		}
	return 0;
}

/* Enable the controllers in a group's subtree_control, one by one. */
static int
cg2_enable(const char *dir, char *err, size_t len)
{
	char	 path[PATH_MAX], have[512], want[32];
	size_t	 i;

	str_fmt(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (cg_read(path, have, sizeof(have)) == -1) {
		str_fmt(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < nitems(cg2_ctrls); i++) {
		if (cg2_has_word(have, cg2_ctrls[i]))
			continue;
		str_fmt(want, sizeof(want), "+%s", cg2_ctrls[i]);
		if (cg_write(path, want) == -1) {
			str_fmt(err, len, "%s: %s: %s%s", path, want,
			    strerror(errno), errno == EBUSY ? " (a process "
			    "is in the group itself)" : "");
			return -1;
		}
	}
	return 0;
}

/* Every process of base into our leaf: there is only us, at start. */
static int
cg2_into_leaf(char *err, size_t len)
{
	char	 leaf[PATH_MAX], procs[PATH_MAX], buf[4096], val[32], *p, *end;
	long	 pid;
	int	 i;

	str_fmt(leaf, sizeof(leaf), "%s/%s", cg2_base, CG2_DAEMON);
	if (mkdir(leaf, 0755) == -1 && errno != EEXIST) {
		str_fmt(err, len, "%s: %s", leaf, strerror(errno));
		return -1;
	}
	str_fmt(leaf, sizeof(leaf), "%s/%s/cgroup.procs", cg2_base,
	    CG2_DAEMON);
	str_fmt(procs, sizeof(procs), "%s/cgroup.procs", cg2_base);
	/* A process forking meanwhile would be listed on the next read. */
	for (i = 0; i < 10 && cg_read(procs, buf, sizeof(buf)) > 0; i++)
		for (p = buf; *p != '\0'; p = end) {
			pid = strtol(p, &end, 10);
			if (end == p)
				break;
			while (*end == '\n')
				end++;
			str_fmt(val, sizeof(val), "%ld", pid);
			if (cg_write(leaf, val) == -1 && errno != ESRCH) {
				str_fmt(err, len, "moving pid %ld to %s: %s",
				    pid, leaf, strerror(errno));
				return -1;
			}
		}
	return 0;
}

static int
cg2_setup(char *err, size_t len)
{
	char	 path[PATH_MAX];

	if (cg2_delegated && !cg2_in_leaf && cg2_into_leaf(err, len) == -1)
		return -1;
	str_fmt(path, sizeof(path), "%s/cgroup.subtree_control", cg2_base);
	cg2_base_read = cg_read(path, cg2_base_before,
	    sizeof(cg2_base_before)) >= 0;
	if (cg2_enable(cg2_base, err, len) == -1)
		return -1;
	str_fmt(path, sizeof(path), "%s/%s", cg2_base, cg_parent);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		str_fmt(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (cg2_enable(path, err, len) == -1)
		return -1;
	str_fmt(path, sizeof(path), "%s/%s/cgroup.kill", cg2_base, cg_parent);
	cg2_kill = access(path, F_OK) == 0;
	str_fmt(path, sizeof(path), "%s/%s/memory.peak", cg2_base, cg_parent);
	cg2_peak = access(path, F_OK) == 0;
	str_fmt(path, sizeof(path), "%s/%s/memory.swap.max", cg2_base,
	    cg_parent);
	cg2_memswap = access(path, F_OK) == 0;
	if (!cg2_delegated && strcmp(cg2_rel, "") == 0 &&
	    cg2_own(path, sizeof(path)) == 0 &&
	    strlen(path) > 8 && strcmp(path + strlen(path) - 8, ".service") == 0)
		log_warnx("cgroups: %s has no Delegate=yes: the containers go "
		    "to %s/%s, outside it", path, cg2_mnt, cg_parent);
	return 0;
}

/*
 * runc enables every controller it finds in each group from the root of
 * what it sees down to a container's: the helper shows it base alone.
 */
static int
cg2_helper_view(char *err, size_t len)
{
	if (cg2_rel[0] == '\0')
		return 0;
	if (mount(cg2_base, CG2_RUNC_VIEW, NULL, MS_BIND, NULL) == -1) {
		str_fmt(err, len, "bind %s on %s: %s", cg2_base,
		    CG2_RUNC_VIEW, strerror(errno));
		return -1;
	}
	str_copy(cg2_base, CG2_RUNC_VIEW, sizeof(cg2_base));
	return 0;
}

static void
cg2_describe(char *buf, size_t len)
{
	str_fmt(buf, len, "v2 %s%s/%s%s%s", cg2_mnt, cg2_rel, cg_parent,
	    cg2_delegated ? " (delegated by systemd)" : "",
	    cg2_peak ? "" : " (no memory.peak: sampled)");
}

static int
cg2_landlock_paths(const char *out[], size_t max)
{
	static char	 path[PATH_MAX];

	if (max < 1)
		return 0;
	str_fmt(path, sizeof(path), "%s/%s", cg2_base, cg_parent);
	out[0] = path;
	return 1;
}

/* What /proc/PID/cgroup says of a container's init: "0::<rel>/<parent>/<id>". */
static int
cg2_proc_match(const char *id, char *buf, size_t len)
{
	return str_fmt(buf, len, "::%s/%s/%s\n", cg2_rel, cg_parent, id);
}

static int
cg2_swap(void)
{
	return cg2_memswap;
}

static int
cg2_sampled(void)
{
	return !cg2_peak;
}

/* A container's group, or one beneath it, or a file of one. */
static void
cg2_path(char *buf, size_t len, const char *id, const char *sub,
    const char *file)
{
	str_fmt(buf, len, "%s/%s/%s%s%s%s%s", cg2_base, cg_parent, id,
	    sub ? "/" : "", sub ? sub : "", file ? "/" : "", file ? file : "");
}

/*
 * An exec's own group x<n>, or init/ for exec 0; the container's own
 * where it has no init/, under runsc.
 */
static void
cg2_exec_path(char *buf, size_t len, const char *id, uint32_t exec,
    const char *file)
{
	char	 sub[16];

	if (exec == 0) {
		cg2_path(buf, len, id, CG2_INIT, NULL);
		if (access(buf, F_OK) == -1) {
			cg2_path(buf, len, id, NULL, file);
			return;
		}
		str_copy(sub, CG2_INIT, sizeof(sub));
	} else
		str_fmt(sub, sizeof(sub), "x%u", exec);
	cg2_path(buf, len, id, sub, file);
}

/*
 * Once runc has started a container: its init to a leaf of its own, and
 * the controllers enabled beneath the container's group for the execs.
 * Under runsc, nothing: its processes stay where they are.
 */
static int
cg2_settle(const char *id, pid_t init, int guest)
{
	char	 path[PATH_MAX], pid[32], err[PATH_MAX + 64];

	if (guest)
		return 0;

	cg2_path(path, sizeof(path), id, CG2_INIT, NULL);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		log_warn("cgroup %s", path);
		return -1;
	}
	cg2_path(path, sizeof(path), id, CG2_INIT, "cgroup.procs");
	str_fmt(pid, sizeof(pid), "%d", (int)init);
	if (cg_write(path, pid) == -1) {
		log_warn("cgroup %s: add %s", path, pid);
		return -1;
	}
	cg2_path(path, sizeof(path), id, NULL, NULL);
	if (cg2_enable(path, err, sizeof(err)) == -1) {
		log_warnx("cgroup %s", err);
		cg2_path(path, sizeof(path), id, NULL, "cgroup.procs");
		if (cg_read(path, pid, sizeof(pid)) > 0)
			log_warnx("cgroup %s holds %s", path, pid);
		return -1;
	}
	return 0;
}

static int
cg2_exec_create(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg2_exec_path(path, sizeof(path), id, exec, NULL);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		log_warn("cgroup %s", path);
		return -1;
	}
	return 0;
}

static int
cg2_exec_attach(const char *id, uint32_t exec, pid_t pid)
{
	char	 path[PATH_MAX], val[32];

	cg2_exec_path(path, sizeof(path), id, exec, "cgroup.procs");
	str_fmt(val, sizeof(val), "%d", (int)pid);
	if (cg_write(path, val) == -1) {
		log_warn("cgroup %s: add %d", path, (int)pid);
		return -1;
	}
	return 0;
}

/* Freeze a group and wait, briefly, until the kernel says it is. */
static int
cg2_freeze(const char *id, uint32_t exec)
{
	struct timespec	 ts = { 0, 1000000 };
	char		 path[PATH_MAX];
	int		 i;

	cg2_exec_path(path, sizeof(path), id, exec, "cgroup.freeze");
	if (cg_write(path, "1") == -1) {
		log_warn("cgroup %s", path);
		return -1;
	}
	cg2_exec_path(path, sizeof(path), id, exec, "cgroup.events");
	for (i = 0; i < 200 && cg_read_key(path, "frozen") != 1; i++)
		nanosleep(&ts, NULL);
	return 0;
}

static void
cg2_exec_kill(const char *id, uint32_t exec, pid_t spare)
{
	char	 path[PATH_MAX];
	int	 frozen;

	/* All of an exec's own group at once, whatever it forks meanwhile. */
	if (exec != 0 && cg2_kill) {
		cg2_exec_path(path, sizeof(path), id, exec, "cgroup.kill");
		if (cg_write(path, "1") == 0)
			return;
		log_warn("cgroup %s", path);
	}
	/* init/ holds init too, which must live: frozen, nothing forks. */
	frozen = cg2_freeze(id, exec) == 0;
	cg2_exec_path(path, sizeof(path), id, exec, "cgroup.procs");
	cg_signal_procs(path, SIGKILL, spare);
	if (frozen) {
		cg2_exec_path(path, sizeof(path), id, exec, "cgroup.freeze");
		(void)cg_write(path, "0");
	}
}

static int
cg2_exec_empty(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg2_exec_path(path, sizeof(path), id, exec, "cgroup.procs");
	return !cg_has_procs(path);
}

static void
cg2_exec_remove(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg2_exec_path(path, sizeof(path), id, exec, NULL);
	if (rmdir(path) == -1 && errno != ENOENT)
		log_debug("cgroup %s: %s", path, strerror(errno));
}

static void
cg2_exec_usage(const char *id, uint32_t exec, uint64_t *cpu_ns,
    uint64_t *peak)
{
	char	 path[PATH_MAX];

	cg2_exec_path(path, sizeof(path), id, exec, "cpu.stat");
	*cpu_ns = cg_read_key(path, "usage_usec") * 1000;
	*peak = 0;
	if (cg2_peak) {
		cg2_exec_path(path, sizeof(path), id, exec, "memory.peak");
		*peak = cg_read_u64(path);
	}
}

static uint64_t
cg2_exec_memory(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg2_exec_path(path, sizeof(path), id, exec, "memory.current");
	return cg_read_u64(path);
}

/*
 * OOM kills of a group's own processes and its descendants': the
 * container's (exec 0), where the limit is, counts every one.
 */
static uint64_t
cg2_oom_kills(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	if (exec == 0)
		cg2_path(path, sizeof(path), id, NULL, "memory.events");
	else
		cg2_exec_path(path, sizeof(path), id, exec, "memory.events");
	return cg_read_key(path, "oom_kill");
}

static uint64_t
cg2_memory_now(const char *id)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, "memory.current");
	return cg_read_u64(path);
}

/* A limit file's value; 0 with *none set for "max", -1 unreadable. */
static int
cg2_limit(const char *id, const char *file, uint64_t *val, int *none)
{
	char	 path[PATH_MAX], buf[32];

	cg2_path(path, sizeof(path), id, NULL, file);
	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	*none = strncmp(buf, "max", 3) == 0;
	*val = *none ? 0 : strtoull(buf, NULL, 10);
	return 0;
}

/* Where the guard takes over, below a memory.max. */
static uint64_t
cg2_high_of(uint64_t max)
{
	uint64_t	 m = max / 16;

	if (m < CG2_MARGIN_MIN)
		m = CG2_MARGIN_MIN;
	if (m > CG2_MARGIN_MAX)
		m = CG2_MARGIN_MAX;
	return max > 2 * m ? max - m : max / 2;
}

static int
cg2_set_high(const char *id, uint64_t max)
{
	char	 path[PATH_MAX], val[32];

	cg2_path(path, sizeof(path), id, NULL, "memory.high");
	str_fmt(val, sizeof(val), "%llu", (unsigned long long)cg2_high_of(max));
	return cg_write(path, val);
}

/*
 * Take over a container's OOM kills (see guard.c and above): memory.high
 * a margin below its limit, and an inotify descriptor that is readable
 * when memory.events changes, as it does each time something there goes
 * past memory.high.
 */
static int
cg2_oom_watch(const char *id)
{
	char		 path[PATH_MAX];
	uint64_t	 max;
	int		 fd, none, saved;

	if (cg2_limit(id, "memory.max", &max, &none) == -1 ||
	    (!none && cg2_set_high(id, max) == -1))
		return -1;
	if ((fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		return -1;
	cg2_path(path, sizeof(path), id, NULL, "memory.events");
	if (inotify_add_watch(fd, path, IN_MODIFY) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Is the container past its memory.high, what asks for memory waiting? */
static int
cg2_oom_waiting(const char *id)
{
	uint64_t	 high;
	int		 none;

	if (cg2_limit(id, "memory.high", &high, &none) == -1 || none)
		return 0;
	return cg2_memory_now(id) > high;
}

/* Give the choice back to the kernel, at memory.max. */
static int
cg2_oom_release(const char *id)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, "memory.high");
	return cg_write(path, "max");
}

/* Every process charged to a container under runsc: its group's. */
static void
cg2_oom_procs(const char *id, char *buf, size_t len)
{
	cg2_path(buf, len, id, NULL, "cgroup.procs");
}

static int
cg2_child_busy(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	return str_fmt(path, sizeof(path), "%s/cgroup.procs", dir) == 0 &&
	    cg_has_procs(path);
}

/* Nothing in a container but its init, in any of its groups. */
static int
cg2_sandbox_quiet(const char *id, pid_t init)
{
	char	 path[PATH_MAX], buf[64];

	cg2_path(path, sizeof(path), id, NULL, "cgroup.procs");
	if (cg_has_procs(path))
		return 0;
	cg2_path(path, sizeof(path), id, CG2_INIT, "cgroup.procs");
	if (cg_read(path, buf, sizeof(buf)) <= 0 ||
	    strtol(buf, NULL, 10) != (long)init ||
	    strchr(buf, '\n') != buf + strlen(buf) - 1)
		return 0;
	cg2_path(path, sizeof(path), id, NULL, NULL);
	return cg_each_child(path, 'x', cg2_child_busy, NULL) == 0;
}

/* v2 counters cannot start again: exec.c gives such an exec a group. */
static void
cg2_sandbox_reset(const char *id)
{
}

static int
cg2_set(const char *id, const char *file, const char *val)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, file);
	if (cg_write(path, val) == -1) {
		log_warn("cgroup %s: %s", path, val);
		return -1;
	}
	return 0;
}

/*
 * Move a running container from the limits it was started with to others
 * (a warm container claimed by a run with limits of its own).  Swap is
 * its own limit in v2, 0 from the start, whatever the memory.  Where the
 * OOM guard holds memory.high, it follows memory.max.
 */
static int
cg2_sandbox_limits(const char *id, const struct limits *from,
    const struct limits *to)
{
	char		 val[64];
	uint64_t	 high;
	int		 none;

	if (to->memory != from->memory) {
		str_fmt(val, sizeof(val), "%llu",
		    (unsigned long long)to->memory);
		if (cg2_set(id, "memory.max", val) == -1)
			return -1;
		if (cg2_limit(id, "memory.high", &high, &none) == 0 &&
		    !none && cg2_set_high(id, to->memory) == -1) {
			log_warn("cgroup %s: memory.high", id);
			return -1;
		}
	}
	if (to->cpus != from->cpus) {
		str_fmt(val, sizeof(val), "%llu %u",
		    (unsigned long long)to->cpus * BUNDLE_CPU_PERIOD / 1000,
		    (unsigned int)BUNDLE_CPU_PERIOD);
		if (cg2_set(id, "cpu.max", val) == -1)
			return -1;
	}
	if (to->pids != from->pids) {
		str_fmt(val, sizeof(val), "%llu",
		    (unsigned long long)to->pids);
		if (cg2_set(id, "pids.max", val) == -1)
			return -1;
	}
	return 0;
}

static int
cg2_kill_child(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	if (str_fmt(path, sizeof(path), "%s/cgroup.procs", dir) == 0)
		cg_signal_procs(path, *(int *)arg, 0);
	return 0;
}

/* Signal everything in a container: init's leaf and the execs' groups. */
static void
cg2_sandbox_kill(const char *id, int sig)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, "cgroup.procs");
	cg_signal_procs(path, sig, 0);
	cg2_path(path, sizeof(path), id, CG2_INIT, "cgroup.procs");
	cg_signal_procs(path, sig, 0);
	cg2_path(path, sizeof(path), id, NULL, NULL);
	(void)cg_each_child(path, 'x', cg2_kill_child, &sig);
}

static int
cg2_thaw_child(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	if (str_fmt(path, sizeof(path), "%s/cgroup.freeze", dir) == 0)
		(void)cg_write(path, "0");
	return 0;
}

/* Thaw a container's groups, each one's own setting: frozen, a kill waits. */
static void
cg2_sandbox_thaw(const char *id)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, "cgroup.freeze");
	(void)cg_write(path, "0");
	cg2_path(path, sizeof(path), id, CG2_INIT, "cgroup.freeze");
	(void)cg_write(path, "0");
	cg2_path(path, sizeof(path), id, NULL, NULL);
	(void)cg_each_child(path, 'x', cg2_thaw_child, NULL);
}

/* A dead container's groups, deepest first; -1 if one is left. */
static int
cg2_sandbox_remove(const char *id)
{
	char	 path[PATH_MAX];

	cg2_path(path, sizeof(path), id, NULL, NULL);
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	cg_prune(path, 1);
	if (access(path, F_OK) == 0) {
		log_warnx("cgroup %s: still in use", path);
		return -1;
	}
	return 0;
}

/* Empty groups a previous run left, and with parents set, our parent. */
static void
cg2_cleanup(int parents)
{
	char	 path[PATH_MAX];

	if (str_fmt(path, sizeof(path), "%s/%s", cg2_base, cg_parent) == 0)
		cg_prune(path, parents);
}

/*
 * Base's subtree_control as setup found it: for mcp-sandboxd -n, whose
 * run ends before the daemon's.  Under systemd, a unit's group whose
 * subtree has controllers cannot take the daemon's process (EBUSY) until
 * the daemon moved into its leaf; and runc enables every controller it
 * finds, not only ours, down to a container's group.  One a group beneath
 * still enables stays (EBUSY too), as for a daemon already running.
 */
static void
cg2_release(void)
{
	char	 path[PATH_MAX], now[512], val[64], *w, *save;
	int	 pass;

	if (!cg2_base_read)
		return;
	str_fmt(path, sizeof(path), "%s/cgroup.subtree_control", cg2_base);
	/* Twice: one may hold up another (cpu and cpuset, say). */
	for (pass = 0; pass < 2; pass++) {
		if (cg_read(path, now, sizeof(now)) < 0)
			return;
		for (w = strtok_r(now, " \n", &save); w != NULL;
		    w = strtok_r(NULL, " \n", &save)) {
			if (cg2_has_word(cg2_base_before, w))
				continue;
			str_fmt(val, sizeof(val), "-%s", w);
			if (cg_write(path, val) == -1 && pass == 1)
				log_debug("cgroup %s: %s: %s", path, val,
				    strerror(errno));
		}
	}
}

const struct cg_backend cgroup_v2 = {
	.name = "v2",
	.probe = cg2_probe,
	.setup = cg2_setup,
	.helper_view = cg2_helper_view,
	.describe = cg2_describe,
	.landlock_paths = cg2_landlock_paths,
	.proc_match = cg2_proc_match,
	.settle = cg2_settle,
	.resettable = 0,
	.swap = cg2_swap,
	.sampled = cg2_sampled,
	.exec_create = cg2_exec_create,
	.exec_attach = cg2_exec_attach,
	.exec_kill = cg2_exec_kill,
	.exec_empty = cg2_exec_empty,
	.exec_remove = cg2_exec_remove,
	.exec_usage = cg2_exec_usage,
	.exec_memory = cg2_exec_memory,
	.oom_kills = cg2_oom_kills,
	.oom_watch = cg2_oom_watch,
	.oom_waiting = cg2_oom_waiting,
	.oom_release = cg2_oom_release,
	.oom_procs = cg2_oom_procs,
	.sandbox_quiet = cg2_sandbox_quiet,
	.sandbox_reset = cg2_sandbox_reset,
	.memory_now = cg2_memory_now,
	.sandbox_limits = cg2_sandbox_limits,
	.sandbox_kill = cg2_sandbox_kill,
	.sandbox_thaw = cg2_sandbox_thaw,
	.sandbox_remove = cg2_sandbox_remove,
	.cleanup = cg2_cleanup,
	.release = cg2_release,
};
