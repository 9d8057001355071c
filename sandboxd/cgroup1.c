/*
 * The cgroup v1 backend, for a host booted in the hybrid layout.
 *
 * runc puts a container in <parent>/<id> of every hierarchy.  Each exec
 * of its own gets a child x<n> of that in the freezer, memory and cpuacct
 * hierarchies: a timeout freezes the group, kills every member and thaws
 * it.  The container's own groups, whose counters can be reset, serve
 * the execs that need none of their own.  v1 leaves socket buffers out of
 * the memory limit: each container gets a limit of its own for them.
 */
#include <sys/types.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

enum cg_ctrl {
	CG_FREEZER,
	CG_MEMORY,
	CG_CPUACCT,
	CG_PIDS,
	CG_CPU,
	CG_NCTRL
};

static const char *const cg_names[CG_NCTRL] = {
	"freezer", "memory", "cpuacct", "pids", "cpu"
};

/* Mount points: of the controllers we use, and of every hierarchy. */
static char	 cg_mnt[CG_NCTRL][PATH_MAX];
static char	 cg_all[CG_MAX_MOUNTS][PATH_MAX];
static int	 cg_nall;
static int	 cg_memsw;		/* the kernel accounts swap */
static int	 cg_tcpmem;		/* memory.kmem.tcp: socket buffers */

/*
 * cgroup v1 leaves socket buffers out of the memory limit: they count
 * only against the host's net.ipv4.tcp_mem and udp_mem, which one
 * sandbox filled.  A container's group gets a limit for them (TCP and
 * UDP alike) of its own; runc 1.1 ignores linux.resources.memory.kernelTCP.
 */
#define CG_TCP_MEMORY	(64ULL << 20)

static int
cg_has_option(const char *opts, const char *name)
{
	size_t	 len = strlen(name);
	const char *p = opts;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == opts || p[-1] == ',') &&
		    (p[len] == ',' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

static int
cg1_probe(const struct cg_mount *m, int n, char *err, size_t len)
{
	int	 i, c;

	for (i = 0; i < n; i++) {
		if (cg_nall < CG_MAX_MOUNTS)
			str_copy(cg_all[cg_nall++], m[i].path, PATH_MAX);
		if (m[i].v2)
			continue;
		for (c = 0; c < CG_NCTRL; c++)
			if (cg_mnt[c][0] == '\0' &&
			    cg_has_option(m[i].opts, cg_names[c]))
				str_copy(cg_mnt[c], m[i].path, PATH_MAX);
	}
	for (c = 0; c < CG_NCTRL; c++)
		if (cg_mnt[c][0] == '\0') {
			str_fmt(err, len, "no %s hierarchy", cg_names[c]);
			return -1;
		}
	return 0;
}

static int
cg1_setup(char *err, size_t len)
{
	char	 path[PATH_MAX];
	int	 c;

	str_fmt(path, sizeof(path), "%s/memory.memsw.limit_in_bytes",
	    cg_mnt[CG_MEMORY]);
	cg_memsw = access(path, F_OK) == 0;
	str_fmt(path, sizeof(path), "%s/memory.kmem.tcp.limit_in_bytes",
	    cg_mnt[CG_MEMORY]);
	cg_tcpmem = access(path, F_OK) == 0;
	for (c = 0; c < CG_NCTRL; c++) {
		str_fmt(path, sizeof(path), "%s/%s", cg_mnt[c], cg_parent);
		if (mkdir(path, 0755) == -1 && errno != EEXIST) {
			str_fmt(err, len, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int
cg1_helper_view(char *err, size_t len)
{
	return 0;
}

static void
cg1_describe(char *buf, size_t len)
{
	str_fmt(buf, len, "v1 hierarchies (%s/%s)", cg_mnt[CG_MEMORY],
	    cg_parent);
}

static int
cg1_landlock_paths(const char *out[], size_t max)
{
	static char	 paths[CG_NCTRL][PATH_MAX];
	size_t		 i;

	for (i = 0; i < CG_NCTRL && i < max; i++) {
		str_fmt(paths[i], sizeof(paths[i]), "%s/%s", cg_mnt[i],
		    cg_parent);
		out[i] = paths[i];
	}
	return (int)i;
}

/* What /proc/PID/cgroup says of a container's init: "N:ctrl:/<parent>/<id>". */
static int
cg1_proc_match(const char *id, char *buf, size_t len)
{
	return str_fmt(buf, len, ":/%s/%s\n", cg_parent, id);
}

static int	cg_write_u64(int, const char *, const char *, uint64_t);

/* A new container's limit for socket buffers, before it runs anything. */
static int
cg1_settle(const char *id, pid_t init, int guest)
{
	return cg_tcpmem ? cg_write_u64(CG_MEMORY, id,
	    "memory.kmem.tcp.limit_in_bytes", CG_TCP_MEMORY) : 0;
}

static int
cg1_swap(void)
{
	return cg_memsw;
}

static int
cg1_sampled(void)
{
	return 0;
}

static void
cg_path(char *buf, size_t len, int c, const char *id, uint32_t exec,
    const char *file)
{
	if (exec == 0)
		str_fmt(buf, len, "%s/%s/%s%s%s", cg_mnt[c], cg_parent, id,
		    file ? "/" : "", file ? file : "");
	else
		str_fmt(buf, len, "%s/%s/%s/x%u%s%s", cg_mnt[c], cg_parent,
		    id, exec, file ? "/" : "", file ? file : "");
}

/* The groups an exec lives in: freezer to kill, memory and cpuacct to
 * account.  pids stays at the container level, where its limit is. */
static const int exec_ctrls[] = { CG_FREEZER, CG_MEMORY, CG_CPUACCT };

static int
cg1_exec_create(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];
	size_t	 i;

	for (i = 0; i < nitems(exec_ctrls); i++) {
		cg_path(path, sizeof(path), exec_ctrls[i], id, exec, NULL);
		if (mkdir(path, 0755) == -1 && errno != EEXIST) {
			log_warn("cgroup %s", path);
			return -1;
		}
	}
	/*
	 * A v1 group counts its sockets' buffers only once its own
	 * kmem.tcp limit has been written: unlimited here, so that the
	 * container's (cg1_settle()) holds for the exec's sockets.
	 */
	cg_path(path, sizeof(path), CG_MEMORY, id, exec,
	    "memory.kmem.tcp.limit_in_bytes");
	if (cg_tcpmem && cg_write(path, "-1") == -1) {
		log_warn("cgroup %s", path);
		return -1;
	}
	return 0;
}

static int
cg1_exec_attach(const char *id, uint32_t exec, pid_t pid)
{
	char	 path[PATH_MAX], val[32];
	size_t	 i;

	str_fmt(val, sizeof(val), "%d", (int)pid);
	for (i = 0; i < nitems(exec_ctrls); i++) {
		cg_path(path, sizeof(path), exec_ctrls[i], id, exec,
		    "cgroup.procs");
		if (cg_write(path, val) == -1) {
			log_warn("cgroup %s: add %d", path, (int)pid);
			return -1;
		}
	}
	return 0;
}

static void
cg1_exec_kill(const char *id, uint32_t exec, pid_t spare)
{
	struct timespec	 ts = { 0, 1000000 };
	char		 state[PATH_MAX], procs[PATH_MAX], buf[32];
	int		 i;

	/* Frozen, nothing can fork while we kill. */
	cg_path(state, sizeof(state), CG_FREEZER, id, exec, "freezer.state");
	cg_path(procs, sizeof(procs), CG_FREEZER, id, exec, "cgroup.procs");
	if (cg_write(state, "FROZEN") == -1) {
		log_warn("cgroup %s", state);
		cg_signal_procs(procs, SIGKILL, spare);
		return;
	}
	for (i = 0; i < 200; i++) {
		if (cg_read(state, buf, sizeof(buf)) > 0 &&
		    strncmp(buf, "FROZEN", 6) == 0)
			break;
		nanosleep(&ts, NULL);
	}
	cg_signal_procs(procs, SIGKILL, spare);
	cg_write(state, "THAWED");
}

static int
cg1_exec_empty(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_FREEZER, id, exec, "cgroup.procs");
	return !cg_has_procs(path);
}

static void
cg1_exec_remove(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];
	size_t	 i;

	for (i = 0; i < nitems(exec_ctrls); i++) {
		cg_path(path, sizeof(path), exec_ctrls[i], id, exec, NULL);
		if (rmdir(path) == -1 && errno != ENOENT)
			log_debug("cgroup %s: %s", path, strerror(errno));
	}
}

static void
cg1_exec_usage(const char *id, uint32_t exec, uint64_t *cpu_ns,
    uint64_t *peak)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_CPUACCT, id, exec, "cpuacct.usage");
	*cpu_ns = cg_read_u64(path);
	cg_path(path, sizeof(path), CG_MEMORY, id, exec,
	    "memory.max_usage_in_bytes");
	*peak = cg_read_u64(path);
}

static uint64_t
cg1_exec_memory(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_MEMORY, id, exec,
	    "memory.usage_in_bytes");
	return cg_read_u64(path);
}

/*
 * OOM kills counted in a group: the kernel counts one on the victim's own
 * group, which for an exec's processes is the exec's (exec != 0), though
 * the limit that was hit is the container's.
 */
static uint64_t
cg1_oom_kills(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_MEMORY, id, exec, "memory.oom_control");
	return cg_read_key(path, "oom_kill");
}

/*
 * Take over a container's OOM kills (see guard.c): the kernel kills none
 * in its memory group, but makes what would need memory there wait, and
 * says so on the eventfd returned.
 */
static int
cg1_oom_watch(const char *id)
{
	char	 path[PATH_MAX], ctl[PATH_MAX], reg[32];
	int	 efd, cfd, saved;

	cg_path(path, sizeof(path), CG_MEMORY, id, 0, "memory.oom_control");
	cg_path(ctl, sizeof(ctl), CG_MEMORY, id, 0, "cgroup.event_control");
	if ((efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
		return -1;
	if ((cfd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		saved = errno;
		close(efd);
		errno = saved;
		return -1;
	}
	(void)str_fmt(reg, sizeof(reg), "%d %d", efd, cfd);
	if (cg_write(ctl, reg) == -1 || cg_write(path, "1") == -1) {
		saved = errno;
		close(cfd);
		close(efd);
		errno = saved;
		return -1;
	}
	close(cfd);
	return efd;
}

/* Is anything in the container's memory group waiting for memory? */
static int
cg1_oom_waiting(const char *id)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_MEMORY, id, 0, "memory.oom_control");
	return cg_read_key(path, "under_oom") != 0;
}

/* Give the container's OOM kills back to the kernel. */
static int
cg1_oom_release(const char *id)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_MEMORY, id, 0, "memory.oom_control");
	return cg_write(path, "0");
}

/* The cgroup.procs that lists every process charged to the container. */
static void
cg1_oom_procs(const char *id, char *buf, size_t len)
{
	cg_path(buf, len, CG_MEMORY, id, 0, "cgroup.procs");
}

static int
cg_child_busy(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	return str_fmt(path, sizeof(path), "%s/cgroup.procs", dir) == 0 &&
	    cg_has_procs(path);
}

/* Nothing in a container but its init, in any of its groups. */
static int
cg1_sandbox_quiet(const char *id, pid_t init)
{
	char	 path[PATH_MAX], buf[64];

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "cgroup.procs");
	if (cg_read(path, buf, sizeof(buf)) <= 0 ||
	    strtol(buf, NULL, 10) != (long)init ||
	    strchr(buf, '\n') != buf + strlen(buf) - 1)
		return 0;
	cg_path(path, sizeof(path), CG_FREEZER, id, 0, NULL);
	return cg_each_child(path, 'x', cg_child_busy, NULL) == 0;
}

/* Start a container's CPU and peak memory counters afresh. */
static void
cg1_sandbox_reset(const char *id)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_CPUACCT, id, 0, "cpuacct.usage");
	if (cg_write(path, "0") == -1)
		log_debug("cgroup %s: %s", path, strerror(errno));
	cg_path(path, sizeof(path), CG_MEMORY, id, 0,
	    "memory.max_usage_in_bytes");
	if (cg_write(path, "0") == -1)
		log_debug("cgroup %s: %s", path, strerror(errno));
}

static uint64_t
cg1_memory_now(const char *id)
{
	return cg1_exec_memory(id, 0);
}

static int
cg_write_u64(int c, const char *id, const char *file, uint64_t v)
{
	char	 path[PATH_MAX], val[32];

	cg_path(path, sizeof(path), c, id, 0, file);
	str_fmt(val, sizeof(val), "%llu", (unsigned long long)v);
	if (cg_write(path, val) == -1) {
		log_warn("cgroup %s: %s", path, val);
		return -1;
	}
	return 0;
}

/*
 * Move a running container from the limits it was started with to others
 * (a warm container claimed by a run with limits of its own): memory,
 * swap, CPU and pids; 0, or -1 if the kernel refused one.  The memory
 * and swap limits are written in the order that keeps swap >= memory.
 */
static int
cg1_sandbox_limits(const char *id, const struct limits *from,
    const struct limits *to)
{
	int	 rv = 0;

	if (to->memory > from->memory) {
		if (cg_memsw && cg_write_u64(CG_MEMORY, id,
		    "memory.memsw.limit_in_bytes", to->memory) == -1)
			return -1;
		rv = cg_write_u64(CG_MEMORY, id, "memory.limit_in_bytes",
		    to->memory);
	} else if (to->memory < from->memory) {
		if (cg_write_u64(CG_MEMORY, id, "memory.limit_in_bytes",
		    to->memory) == -1)
			return -1;
		if (cg_memsw)
			rv = cg_write_u64(CG_MEMORY, id,
			    "memory.memsw.limit_in_bytes", to->memory);
	}
	if (rv == 0 && to->cpus != from->cpus)
		rv = cg_write_u64(CG_CPU, id, "cpu.cfs_quota_us",
		    (uint64_t)to->cpus * BUNDLE_CPU_PERIOD / 1000);
	if (rv == 0 && to->pids != from->pids)
		rv = cg_write_u64(CG_PIDS, id, "pids.max", to->pids);
	return rv;
}

static int
cg_kill_child(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	if (str_fmt(path, sizeof(path), "%s/cgroup.procs", dir) == 0)
		cg_signal_procs(path, *(int *)arg, 0);
	return 0;
}

/* Signal everything in a container, its execs' groups included. */
static void
cg1_sandbox_kill(const char *id, int sig)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "cgroup.procs");
	cg_signal_procs(path, sig, 0);
	cg_path(path, sizeof(path), CG_FREEZER, id, 0, NULL);
	(void)cg_each_child(path, 'x', cg_kill_child, &sig);
}

static int
cg_thaw_child(const char *dir, void *arg)
{
	char	 path[PATH_MAX];

	if (str_fmt(path, sizeof(path), "%s/freezer.state", dir) == 0)
		(void)cg_write(path, "THAWED");
	return 0;
}

/* Thaw a container's groups, its execs' too: frozen, a kill waits. */
static void
cg1_sandbox_thaw(const char *id)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "freezer.state");
	(void)cg_write(path, "THAWED");
	/* A directory's links are 2 and one per subdirectory. */
	cg_path(path, sizeof(path), CG_FREEZER, id, 0, NULL);
	if (stat(path, &st) == 0 && st.st_nlink > 2)
		(void)cg_each_child(path, 'x', cg_thaw_child, NULL);
}

/*
 * A dead container's groups, in every hierarchy, deepest first: what runc
 * delete takes away.  0, or -1 when one is left (something is in it).
 */
static int
cg1_sandbox_remove(const char *id)
{
	char	 path[PATH_MAX];
	int	 i, rv = 0;

	for (i = 0; i < cg_nall; i++) {
		if (str_fmt(path, sizeof(path), "%s/%s/%s", cg_all[i],
		    cg_parent, id) == -1)
			return -1;
		/* Most have no exec groups beneath: no listing then. */
		if (rmdir(path) == 0 || errno == ENOENT)
			continue;
		cg_prune(path, 1);
		if (access(path, F_OK) == 0) {
			log_warnx("cgroup %s: still in use", path);
			rv = -1;
		}
	}
	return rv;
}

/*
 * Groups a previous run left and, with parents set, the parents runc
 * made in every hierarchy: only empty ones can go, which is what we want.
 */
static void
cg1_cleanup(int parents)
{
	char	 path[PATH_MAX];
	int	 i;

	for (i = 0; i < cg_nall; i++)
		if (str_fmt(path, sizeof(path), "%s/%s", cg_all[i],
		    cg_parent) == 0)
			cg_prune(path, parents);
}

const struct cg_backend cgroup_v1 = {
	.name = "v1",
	.probe = cg1_probe,
	.setup = cg1_setup,
	.helper_view = cg1_helper_view,
	.describe = cg1_describe,
	.landlock_paths = cg1_landlock_paths,
	.proc_match = cg1_proc_match,
	.settle = cg1_settle,
	.resettable = 1,
	.swap = cg1_swap,
	.sampled = cg1_sampled,
	.exec_create = cg1_exec_create,
	.exec_attach = cg1_exec_attach,
	.exec_kill = cg1_exec_kill,
	.exec_empty = cg1_exec_empty,
	.exec_remove = cg1_exec_remove,
	.exec_usage = cg1_exec_usage,
	.exec_memory = cg1_exec_memory,
	.oom_kills = cg1_oom_kills,
	.oom_watch = cg1_oom_watch,
	.oom_waiting = cg1_oom_waiting,
	.oom_release = cg1_oom_release,
	.oom_procs = cg1_oom_procs,
	.sandbox_quiet = cg1_sandbox_quiet,
	.sandbox_reset = cg1_sandbox_reset,
	.memory_now = cg1_memory_now,
	.sandbox_limits = cg1_sandbox_limits,
	.sandbox_kill = cg1_sandbox_kill,
	.sandbox_thaw = cg1_sandbox_thaw,
	.sandbox_remove = cg1_sandbox_remove,
	.cleanup = cg1_cleanup,
};
