/*
 * Per-exec cgroups: placement, kill, accounting.
 *
 * At start sandboxd reads what the host mounts and picks a backend: the
 * cgroup v1 hierarchies where a hybrid boot gives them (cgroup1.c), or
 * the unified cgroup v2 hierarchy that every current distribution boots
 * with (cgroup2.c).  Either way a container's groups are named
 * <parent>/<id>, and each exec that needs groups of its own gets a child
 * x<n> of them, its first process placed there before it executes
 * anything, so that whatever it forks, daemonises or double-forks stays
 * inside: a timeout kills the whole group, and the exec's CPU time, peak
 * memory and OOM kills are read from it.  This file holds what the two
 * share and hands every call to the one chosen.
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
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"
#include "cgroup.h"

/*
 * Until cgroup_init() the v1 backend knows no mount point: every path it
 * makes is missing, and every call fails or finds nothing (the fuzz
 * harness runs so).
 */
static const struct cg_backend	*cg = &cgroup_v1;

/*
 * The parent group of every container, "mcpd" for the installed suite;
 * another run directory (a test, make run) gets one of its own, so that
 * two instances never prune or race on each other's groups.
 */
char	 cg_parent[32] = "mcpd";

const char *
cgroup_parent(void)
{
	return cg_parent;
}

int
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

ssize_t
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

uint64_t
cg_read_u64(const char *path)
{
	char	 buf[64];

	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* The value of "key N" in a flat-keyed file (cpu.stat, memory.events). */
uint64_t
cg_read_key(const char *path, const char *key)
{
	char	 buf[2048], *p;
	size_t	 len = strlen(key);

	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, key, len) == 0 && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 10);
	}
	return 0;
}

/*
 * Signal every process listed in a cgroup.procs file but spare (the
 * container's init, 0 for none); the count sent.
 */
int
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

/* A cgroup.procs file lists a process. */
int
cg_has_procs(const char *path)
{
	char	 buf[16];

	return cg_read(path, buf, sizeof(buf)) > 0;
}

/* Remove empty groups beneath dir, deepest first, and dir itself. */
void
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
		if (str_fmt(path, sizeof(path), "%s/%s", dir,
		    de->d_name) == 0)
			cg_prune(path, 1);
	}
	closedir(d);
	if (self)
		rmdir(dir);
}

/*
 * fn(path, arg) for each child group of dir whose name starts with
 * prefix, until fn returns non-zero: that, or 0; -1 if dir cannot be read.
 */
int
cg_each_child(const char *dir, char prefix, int (*fn)(const char *, void *),
    void *arg)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX];
	int		 rv = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while (rv == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] != prefix || de->d_type != DT_DIR)
			continue;
		if (str_fmt(path, sizeof(path), "%s/%s", dir,
		    de->d_name) == 0)
			rv = fn(path, arg);
	}
	closedir(d);
	return rv;
}

/* The cgroup and cgroup2 mounts of /proc/self/mountinfo. */
static int
cg_mounts(struct cg_mount *m, int max, char *err, size_t len)
{
	FILE		*fp;
	char		 line[4096], *mnt, *fstype, *opts, *sep;
	int		 f, n = 0;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL) {
		str_fmt(err, len, "mountinfo: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp) != NULL && n < max) {
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
		if (str_copy(m[n].path, mnt, sizeof(m[n].path)) == -1)
			continue;
		(void)str_copy(m[n].opts, opts, sizeof(m[n].opts));
		m[n].v2 = strcmp(fstype, "cgroup2") == 0;
		n++;
	}
	fclose(fp);
	return n;
}

/*
 * Find the hierarchy and make the parent groups.  Called once, by the
 * main process before it forks the helper: under systemd it moves the
 * daemon into a leaf of its own, and what it learns is the helper's too.
 */
int
cgroup_init(const char *run_dir, char *err, size_t len)
{
	struct cg_mount	 m[CG_MAX_MOUNTS];
	unsigned char	 h[crypto_hash_sha256_BYTES];
	char		 why1[256], why2[256];
	int		 n;

	if (strcmp(run_dir, DEFAULT_RUN_DIR) != 0) {
		crypto_hash_sha256(h, (const unsigned char *)run_dir,
		    strlen(run_dir));
		snprintf(cg_parent, sizeof(cg_parent), "mcpd-%02x%02x%02x%02x",
		    h[0], h[1], h[2], h[3]);
	}
	if ((n = cg_mounts(m, CG_MAX_MOUNTS, err, len)) == -1)
		return -1;
	/* A hybrid boot has both: its v1 controllers are the ones to use. */
	if (cgroup_v1.probe(m, n, why1, sizeof(why1)) == 0)
		cg = &cgroup_v1;
	else if (cgroup_v2.probe(m, n, why2, sizeof(why2)) == 0)
		cg = &cgroup_v2;
	else {
		str_fmt(err, len, "no cgroup hierarchy sandboxd can use: "
		    "v1: %s; v2: %s", why1, why2);
		return -1;
	}
	if (cg->setup(err, len) == -1)
		return -1;
	cgroup_describe(why1, sizeof(why1));
	log_info("cgroups: %s", why1);
	return 0;
}

const char *
cgroup_version(void)
{
	return cg->name;
}

void
cgroup_describe(char *buf, size_t len)
{
	cg->describe(buf, len);
}

int
cgroup_helper_view(char *err, size_t len)
{
	return cg->helper_view(err, len);
}

int
cgroup_landlock_paths(const char *out[], size_t max)
{
	return cg->landlock_paths(out, max);
}

int
cgroup_proc_match(const char *id, char *buf, size_t len)
{
	return cg->proc_match(id, buf, len);
}

int
cgroup_sandbox_settle(const char *id, pid_t init, int guest)
{
	return cg->settle(id, init, guest);
}

int
cgroup_resettable(void)
{
	return cg->resettable;
}

int
cgroup_swap(void)
{
	return cg->swap();
}

int
cgroup_sampled(void)
{
	return cg->sampled();
}

int
cgroup_exec_create(const char *id, uint32_t exec)
{
	return cg->exec_create(id, exec);
}

int
cgroup_exec_attach(const char *id, uint32_t exec, pid_t pid)
{
	return cg->exec_attach(id, exec, pid);
}

void
cgroup_exec_kill(const char *id, uint32_t exec, pid_t spare)
{
	cg->exec_kill(id, exec, spare);
}

int
cgroup_exec_empty(const char *id, uint32_t exec)
{
	return cg->exec_empty(id, exec);
}

void
cgroup_exec_remove(const char *id, uint32_t exec)
{
	cg->exec_remove(id, exec);
}

void
cgroup_exec_usage(const char *id, uint32_t exec, uint64_t *cpu_ns,
    uint64_t *peak)
{
	cg->exec_usage(id, exec, cpu_ns, peak);
}

uint64_t
cgroup_exec_memory(const char *id, uint32_t exec)
{
	return cg->exec_memory(id, exec);
}

uint64_t
cgroup_oom_kills(const char *id, uint32_t exec)
{
	return cg->oom_kills(id, exec);
}

int
cgroup_oom_watch(const char *id)
{
	if (cg->oom_watch == NULL) {
		errno = ENOTSUP;
		return -1;
	}
	return cg->oom_watch(id);
}

int
cgroup_oom_waiting(const char *id)
{
	return cg->oom_waiting != NULL && cg->oom_waiting(id);
}

int
cgroup_oom_release(const char *id)
{
	return cg->oom_release != NULL ? cg->oom_release(id) : 0;
}

void
cgroup_oom_procs(const char *id, char *buf, size_t len)
{
	if (cg->oom_procs != NULL)
		cg->oom_procs(id, buf, len);
	else
		buf[0] = '\0';
}

int
cgroup_sandbox_quiet(const char *id, pid_t init)
{
	return init > 0 && cg->sandbox_quiet(id, init);
}

void
cgroup_sandbox_reset(const char *id)
{
	cg->sandbox_reset(id);
}

uint64_t
cgroup_memory_now(const char *id)
{
	return cg->memory_now(id);
}

int
cgroup_sandbox_limits(const char *id, const struct limits *from,
    const struct limits *to)
{
	return cg->sandbox_limits(id, from, to);
}

void
cgroup_sandbox_kill(const char *id, int sig)
{
	cg->sandbox_kill(id, sig);
}

void
cgroup_sandbox_thaw(const char *id)
{
	cg->sandbox_thaw(id);
}

int
cgroup_sandbox_remove(const char *id)
{
	return cg->sandbox_remove(id);
}

void
cgroup_cleanup(int parents)
{
	cg->cleanup(parents);
}

void
cgroup_release(void)
{
	if (cg->release != NULL)
		cg->release();
}
