/*
 * Per-exec cgroups, on the cgroup v1 hierarchies.
 *
 * runc puts a container in /mcpd/<id> of every hierarchy (another parent
 * for a run directory other than the default).  Each exec gets a child
 * x<n> of that in the freezer, memory and cpuacct hierarchies, and
 * its first process is placed there before it executes anything, so that
 * whatever it forks, daemonises or double-forks stays inside: a timeout
 * freezes the group, kills every member and thaws it, and the exec's CPU
 * time and peak memory are read from its own group.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "bundle.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define CG_MAX_MOUNTS	16

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

/*
 * The parent group of every container, "mcpd" for the installed suite;
 * another run directory (a test, make run) gets one of its own, so that
 * two instances never prune or race on each other's groups.
 */
static char	 cg_parent[32] = "mcpd";

const char *
cgroup_parent(void)
{
	return cg_parent;
}

int
cgroup_init(const char *run_dir, char *err, size_t len)
{
	FILE		*fp;
	char		 line[4096], *mnt, *fstype, *opts, *sep;
	unsigned char	 h[crypto_hash_sha256_BYTES];
	int		 i, f;

	if (strcmp(run_dir, DEFAULT_RUN_DIR) != 0) {
		crypto_hash_sha256(h, (const unsigned char *)run_dir,
		    strlen(run_dir));
		snprintf(cg_parent, sizeof(cg_parent), "mcpd-%02x%02x%02x%02x",
		    h[0], h[1], h[2], h[3]);
	}
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL) {
		str_fmt(err, len, "mountinfo: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		/* id parent maj:min root mount opts [tags] - type src super */
		if ((sep = strstr(line, " - ")) == NULL)
			continue;
		strtok(line, " ");
		for (f = 0, mnt = NULL; f < 4; f++)
			mnt = strtok(NULL, " ");
		fstype = strtok(sep + 3, " ");
		strtok(NULL, " ");
		opts = strtok(NULL, " \n");
		if (mnt == NULL || fstype == NULL || opts == NULL)
			continue;
		if (strcmp(fstype, "cgroup") != 0 &&
		    strcmp(fstype, "cgroup2") != 0)
			continue;
		if (cg_nall < CG_MAX_MOUNTS)
			str_copy(cg_all[cg_nall++], mnt, PATH_MAX);
		if (strcmp(fstype, "cgroup") != 0)
			continue;
		for (i = 0; i < CG_NCTRL; i++)
			if (cg_mnt[i][0] == '\0' &&
			    cg_has_option(opts, cg_names[i]))
				str_copy(cg_mnt[i], mnt, PATH_MAX);
	}
	fclose(fp);
	for (i = 0; i < CG_NCTRL; i++) {
		if (cg_mnt[i][0] != '\0')
			continue;
		str_fmt(err, len, "no cgroup v1 %s hierarchy: this system "
		    "has cgroup v2 only, which sandboxd does not support yet "
		    "(boot with systemd.unified_cgroup_hierarchy=0)",
		    cg_names[i]);
		return -1;
	}
	str_fmt(line, sizeof(line), "%s/memory.memsw.limit_in_bytes",
	    cg_mnt[CG_MEMORY]);
	cg_memsw = access(line, F_OK) == 0;
	str_fmt(line, sizeof(line), "%s/memory.kmem.tcp.limit_in_bytes",
	    cg_mnt[CG_MEMORY]);
	cg_tcpmem = access(line, F_OK) == 0;
	for (i = 0; i < CG_NCTRL; i++) {
		str_fmt(line, sizeof(line), "%s/%s", cg_mnt[i], cg_parent);
		if (mkdir(line, 0755) == -1 && errno != EEXIST) {
			str_fmt(err, len, "%s: %s", line, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
cgroup_landlock_paths(const char *out[], size_t max)
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

static int
cg_write(const char *path, const char *val)
{
	int	 fd, saved;
	ssize_t	 n;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, val, strlen(val));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static ssize_t
cg_read(const char *path, char *buf, size_t len)
{
	int	 fd;
	ssize_t	 n;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static uint64_t
cg_read_u64(const char *path)
{
	char	 buf[64];

	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* The groups an exec lives in: freezer to kill, memory and cpuacct to
 * account.  pids stays at the container level, where its limit is. */
static const int exec_ctrls[] = { CG_FREEZER, CG_MEMORY, CG_CPUACCT };

int
cgroup_exec_create(const char *id, uint32_t exec)
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
	 * container's (cgroup_sandbox_tcp()) holds for the exec's sockets.
	 */
	cg_path(path, sizeof(path), CG_MEMORY, id, exec,
	    "memory.kmem.tcp.limit_in_bytes");
	if (cg_tcpmem && cg_write(path, "-1") == -1) {
		log_warn("cgroup %s", path);
		return -1;
	}
	return 0;
}

int
cgroup_exec_attach(const char *id, uint32_t exec, pid_t pid)
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

/*
 * Signal every process listed in a cgroup.procs file but spare (the
 * container's init, 0 for none); the count sent.
 */
static int
cg_signal_procs(const char *path, int sig, pid_t spare)
{
	char	 buf[65536], *p, *end;
	long	 pid;
	int	 n = 0;

	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; *p != '\0'; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 1 && pid != spare && kill((pid_t)pid, sig) == 0)
			n++;
		while (*end == '\n')
			end++;
	}
	return n;
}

void
cgroup_exec_kill(const char *id, uint32_t exec, pid_t spare)
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

int
cgroup_exec_empty(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX], buf[16];

	cg_path(path, sizeof(path), CG_FREEZER, id, exec, "cgroup.procs");
	return cg_read(path, buf, sizeof(buf)) <= 0;
}

void
cgroup_exec_remove(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX];
	size_t	 i;

	for (i = 0; i < nitems(exec_ctrls); i++) {
		cg_path(path, sizeof(path), exec_ctrls[i], id, exec, NULL);
		if (rmdir(path) == -1 && errno != ENOENT)
			log_debug("cgroup %s: %s", path, strerror(errno));
	}
}

void
cgroup_exec_usage(const char *id, uint32_t exec, uint64_t *cpu_ns,
    uint64_t *peak)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_CPUACCT, id, exec, "cpuacct.usage");
	*cpu_ns = cg_read_u64(path);
	cg_path(path, sizeof(path), CG_MEMORY, id, exec,
	    "memory.max_usage_in_bytes");
	*peak = cg_read_u64(path);
}

/*
 * OOM kills counted in a group: the kernel counts one on the victim's own
 * group, which for an exec's processes is the exec's (exec != 0), though
 * the limit that was hit is the container's.
 */
uint64_t
cgroup_oom_kills(const char *id, uint32_t exec)
{
	char	 path[PATH_MAX], buf[512], *p;

	cg_path(path, sizeof(path), CG_MEMORY, id, exec, "memory.oom_control");
	if (cg_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "oom_kill ")) == NULL)
		return 0;
	return strtoull(p + 9, NULL, 10);
}

/*
 * fn(path, arg) for a file (cgroup.procs, freezer.state) of each exec's
 * freezer group in a container, until fn returns non-zero: that, or 0; -1
 * if the container's group cannot be read.
 */
static int
cg_each_exec(const char *id, const char *file,
    int (*fn)(const char *, void *), void *arg)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX];
	int		 rv = 0;

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, NULL);
	if ((d = opendir(path)) == NULL)
		return -1;
	while (rv == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] != 'x' || de->d_type != DT_DIR)
			continue;
		str_fmt(path, sizeof(path), "%s/%s/%s/%s/%s",
		    cg_mnt[CG_FREEZER], cg_parent, id, de->d_name, file);
		rv = fn(path, arg);
	}
	closedir(d);
	return rv;
}

static int
cg_has_procs(const char *path, void *arg)
{
	char	 buf[16];

	return cg_read(path, buf, sizeof(buf)) > 0;
}

/* Nothing in a container but its init, in any of its groups. */
int
cgroup_sandbox_quiet(const char *id, pid_t init)
{
	char	 path[PATH_MAX], buf[64];

	if (init <= 0)
		return 0;
	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "cgroup.procs");
	if (cg_read(path, buf, sizeof(buf)) <= 0 ||
	    strtol(buf, NULL, 10) != (long)init ||
	    strchr(buf, '\n') != buf + strlen(buf) - 1)
		return 0;
	return cg_each_exec(id, "cgroup.procs", cg_has_procs, NULL) == 0;
}

/* Start a container's CPU and peak memory counters afresh. */
void
cgroup_sandbox_reset(const char *id)
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

uint64_t
cgroup_memory_now(const char *id)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_MEMORY, id, 0, "memory.usage_in_bytes");
	return cg_read_u64(path);
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

/* A new container's limit for socket buffers, before it runs anything. */
int
cgroup_sandbox_tcp(const char *id)
{
	return cg_tcpmem ? cg_write_u64(CG_MEMORY, id,
	    "memory.kmem.tcp.limit_in_bytes", CG_TCP_MEMORY) : 0;
}

/*
 * Move a running container from the limits it was started with to others
 * (a warm container claimed by a run with limits of its own): memory,
 * swap, CPU and pids; 0, or -1 if the kernel refused one.  The memory
 * and swap limits are written in the order that keeps swap >= memory.
 */
int
cgroup_sandbox_limits(const char *id, const struct limits *from,
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
cg_kill_procs(const char *path, void *arg)
{
	cg_signal_procs(path, *(int *)arg, 0);
	return 0;
}

/* Signal everything in a container, its execs' groups included. */
void
cgroup_sandbox_kill(const char *id, int sig)
{
	char	 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "cgroup.procs");
	cg_signal_procs(path, sig, 0);
	(void)cg_each_exec(id, "cgroup.procs", cg_kill_procs, &sig);
}

/* Remove empty groups beneath dir, deepest first, and dir itself. */
static void
cg_prune(const char *dir, int self)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		str_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
		cg_prune(path, 1);
	}
	closedir(d);
	if (self)
		rmdir(dir);
}

static int
cg_thaw(const char *state, void *arg)
{
	(void)cg_write(state, "THAWED");
	return 0;
}

/* Thaw a container's groups, its execs' too: frozen, a kill waits. */
void
cgroup_sandbox_thaw(const char *id)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	cg_path(path, sizeof(path), CG_FREEZER, id, 0, "freezer.state");
	(void)cg_write(path, "THAWED");
	/* A directory's links are 2 and one per subdirectory. */
	cg_path(path, sizeof(path), CG_FREEZER, id, 0, NULL);
	if (stat(path, &st) == 0 && st.st_nlink > 2)
		(void)cg_each_exec(id, "freezer.state", cg_thaw, NULL);
}

/*
 * A dead container's groups, in every hierarchy, deepest first: what runc
 * delete takes away.  0, or -1 when one is left (something is in it).
 */
int
cgroup_sandbox_remove(const char *id)
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
 * Groups a previous run left and, with parents set, the /mcpd parents runc
 * made in every hierarchy: only empty ones can go, which is what we want.
 */
void
cgroup_cleanup(int parents)
{
	char	 path[PATH_MAX];
	int	 i;

	for (i = 0; i < cg_nall; i++)
		if (str_fmt(path, sizeof(path), "%s/%s", cg_all[i],
		    cg_parent) == 0)
			cg_prune(path, parents);
}
