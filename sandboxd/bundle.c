/*
 * OCI bundles: the config.json of a sandbox, in the runtime-spec 1.0.2
 * dialect that runc 1.1 reads.
 *
 * The parameters are checked once more here, although sandboxd makes them
 * itself: a wrong path or uid range would weaken every container made from
 * them, and a refused bundle costs one failed request.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <jansson.h>
#include <seccomp.h>

#include "policy.h"
#include "util.h"
#include "bundle.h"
#include "image.h"

#define BUNDLE_CONFIG		"config.json"
#define BUNDLE_NOFILE		4096
#define BUNDLE_MIN_INODES	1024
/*
 * Every devpts but the host's own draws on kernel.pty.max less
 * kernel.pty.reserve (3072 by default): without a max of its own, one
 * sandbox would take them all.
 */
#define BUNDLE_PTYS		64
/*
 * Queued signals and POSIX timers are counted per user namespace and,
 * past it, against the uid that made it, root: RLIMIT_SIGPENDING bounds
 * a sandbox's share, and the runtime's own limit all of theirs
 * (priv.c).  POSIX message queues likewise count against root's
 * RLIMIT_MSGQUEUE, 800 KiB, too little to share: a sandbox gets none.
 */
#define BUNDLE_SIGPENDING	1024

/* What Docker and containerd mask, and kallsyms. */
static const char *const bundle_masked[] = {
	"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kallsyms",
	"/proc/kcore", "/proc/keys", "/proc/latency_stats",
	"/proc/sched_debug", "/proc/scsi", "/proc/timer_list",
	"/proc/timer_stats", "/sys/devices/virtual/powercap",
	"/sys/firmware",
};

static const char *const bundle_readonly[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
	"/proc/sysrq-trigger",
};

/* For rootfs images: their own /etc stays, but these come from us. */
static const char *const bundle_etc_files[] = {
	"passwd", "group", "hosts", "resolv.conf",
};

static const char *const bundle_namespaces[] = {
	"pid", "network", "ipc", "uts", "mount", "cgroup", "user",
};

__attribute__((__format__(printf, 3, 4)))
static void
bundle_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int
bundle_valid_id(const char *id)
{
	size_t	 i;

	for (i = 0; id[i] != '\0'; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return i == 32;
}

/* Absolute, no "." or ".." component, no empty one, short enough. */
static int
bundle_valid_path(const char *p)
{
	const char	*c, *e;
	size_t		 n;

	if (p == NULL || p[0] != '/' || strlen(p) >= PATH_MAX)
		return 0;
	if (p[1] == '\0')
		return 1;
	for (c = p + 1; ; c = e + 1) {
		e = strchrnul(c, '/');
		n = e - c;
		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (*e == '\0')
			return 1;
	}
}

static int
bundle_valid_cgroup(const char *p)
{
	size_t	 i;

	if (!bundle_valid_path(p) || p[1] == '\0')
		return 0;
	for (i = 0; p[i] != '\0'; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') ||
		    strchr("/._-", p[i]) != NULL))
			return 0;
	return 1;
}

static int
bundle_check(const struct bundle *b, char *err, size_t errlen)
{
	const struct limits	*l = b->limits;
	int			 i;

	if (b->id == NULL || !bundle_valid_id(b->id))
		return bundle_err(err, errlen, "bad container id"), -1;
	if (!bundle_valid_path(b->dir))
		return bundle_err(err, errlen, "bad bundle directory"), -1;
	if (b->image == NULL || b->host == NULL || l == NULL)
		return bundle_err(err, errlen, "no image or limits"), -1;
	if (!bundle_valid_path(b->init) || strcmp(b->init, "/") == 0)
		return bundle_err(err, errlen, "bad sandbox-init path"), -1;
	if (b->workspace != NULL && (!bundle_valid_path(b->workspace) ||
	    strcmp(b->workspace, "/") == 0))
		return bundle_err(err, errlen, "bad workspace path"), -1;
	if (b->cgroup == NULL || !bundle_valid_cgroup(b->cgroup))
		return bundle_err(err, errlen, "bad cgroup path"), -1;
	/* Container root must not be host root, nor the range wrap or
	 * reach (uid_t)-1. */
	if (b->uid_base == 0 ||
	    b->uid_base > UINT32_MAX - SBX_UID_RANGE)
		return bundle_err(err, errlen, "bad uid base %u",
		    b->uid_base), -1;
	/* A tmpfs of size 0 has no limit at all. */
	if (l->memory == 0 || l->memory > INT64_MAX || l->disk == 0 ||
	    l->disk > INT64_MAX || l->pids == 0 || l->cpus == 0)
		return bundle_err(err, errlen, "bad limits"), -1;
	if (!bundle_valid_path(b->host->etc) || strcmp(b->host->etc, "/") == 0)
		return bundle_err(err, errlen, "bad synthetic etc path"), -1;
	if (b->filter_fd != 0 && (b->filter_fd < 3 || b->filter_fd > 255))
		return bundle_err(err, errlen, "bad filter fd %d",
		    b->filter_fd), -1;
	/* gVisor has no use for a profile in the configuration. */
	if (b->runsc && b->filter_fd == 0)
		return bundle_err(err, errlen, "runsc needs the filter fd"), -1;

	switch (b->image->type) {
	case IMAGE_HOST:
		if (!bundle_valid_path(b->host->rootfs) ||
		    strcmp(b->host->rootfs, "/") == 0)
			return bundle_err(err, errlen, "bad host rootfs"), -1;
		if (b->host->nbinds < 0 || b->host->nbinds > IMAGE_MAX_BINDS)
			return bundle_err(err, errlen, "bad host binds"), -1;
		for (i = 0; i < b->host->nbinds; i++)
			if (!bundle_valid_path(b->host->binds[i]) ||
			    strcmp(b->host->binds[i], "/") == 0)
				return bundle_err(err, errlen,
				    "bad host bind"), -1;
		break;
	case IMAGE_ROOTFS:
		if (!bundle_valid_path(b->image->path) ||
		    strcmp(b->image->path, "/") == 0)
			return bundle_err(err, errlen, "bad rootfs path"), -1;
		break;
	default:
		return bundle_err(err, errlen, "bad image type"), -1;
	}
	return 0;
}

/* Append a mount; opts is a comma-separated list, none of them commas. */
static int
bundle_mount(json_t *mounts, const char *dst, const char *type,
    const char *src, const char *opts)
{
	json_t	*o;
	char	*s, *p, *q;

	if ((o = json_array()) == NULL)
		return -1;
	s = xstrdup(opts);
	for (p = s; (q = strsep(&p, ",")) != NULL; )
		if (*q != '\0' && json_array_append_new(o,
		    json_string(q)) == -1) {
			free(s);
			json_decref(o);
			return -1;
		}
	free(s);
	return json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:o}",
	    "destination", dst, "type", type, "source", src, "options", o));
}

/*
 * Files a tmpfs of this size may hold: one per 4 KiB, as mkfs.ext4 gives
 * a persistent workspace.  Without a count, a tmpfs takes inodes until
 * the memory limit kills the program, with no ENOSPC to explain why.
 */
static unsigned long long
bundle_inodes(uint64_t size)
{
	return size / 4096 < BUNDLE_MIN_INODES ? BUNDLE_MIN_INODES :
	    (unsigned long long)(size / 4096);
}

/*
 * The tmpfs mounts' data: /tmp and a one-shot /workspace sized by the
 * disk limit, and /dev/shm.  runc gives a tmpfs the mode of the
 * directory it covers when that exists, so the images make tmp 01777;
 * mode= says the same here.
 */
#define BUNDLE_TMP_DATA	"mode=1777,size=%llu,nr_inodes=%llu"
#define BUNDLE_WS_DATA	"mode=0755,uid=%u,gid=%u,size=%llu,nr_inodes=%llu"
#define BUNDLE_SHM_DATA	"mode=1777,size=64m,nr_inodes=4096"

/* /tmp and /workspace, which differ from one container to the next. */
static int
bundle_own_mounts(json_t *m, const struct bundle *b)
{
	char	 opts[128];
	int	 r = 0;

	snprintf(opts, sizeof(opts), "nosuid,nodev," BUNDLE_TMP_DATA,
	    (unsigned long long)b->limits->disk,
	    bundle_inodes(b->limits->disk));
	r |= bundle_mount(m, "/tmp", "tmpfs", "tmpfs", opts);
	if (b->workspace != NULL)
		r |= bundle_mount(m, SBX_WORKSPACE, "bind", b->workspace,
		    "bind,rw,nosuid,nodev");
	else {
		snprintf(opts, sizeof(opts), "nosuid,nodev," BUNDLE_WS_DATA,
		    SBX_USER_UID, SBX_USER_UID,
		    (unsigned long long)b->limits->disk,
		    bundle_inodes(b->limits->disk));
		r |= bundle_mount(m, SBX_WORKSPACE, "tmpfs", "tmpfs", opts);
	}
	return r;
}

int
bundle_fresh_mounts(struct bundle_fresh f[BUNDLE_FRESH_MOUNTS], uint64_t disk,
    uint32_t uid_base)
{
	char	 owner[48];
	int	 r = 0;

	if (uid_base == 0 || uid_base > UINT32_MAX - SBX_UID_RANGE)
		return -1;
	/* Container root owns /tmp and /dev/shm, as runc's mounts do. */
	snprintf(owner, sizeof(owner), ",uid=%u,gid=%u", uid_base, uid_base);
	f[0].path = "/tmp";
	f[0].flags = MS_NOSUID | MS_NODEV;
	r |= str_fmt(f[0].data, sizeof(f[0].data), BUNDLE_TMP_DATA "%s",
	    (unsigned long long)disk, bundle_inodes(disk), owner);
	f[1].path = SBX_WORKSPACE;
	f[1].flags = MS_NOSUID | MS_NODEV;
	r |= str_fmt(f[1].data, sizeof(f[1].data), BUNDLE_WS_DATA,
	    uid_base + SBX_USER_UID, uid_base + SBX_USER_UID,
	    (unsigned long long)disk, bundle_inodes(disk));
	f[2].path = "/dev/shm";
	f[2].flags = MS_NOSUID | MS_NOEXEC | MS_NODEV;
	r |= str_fmt(f[2].data, sizeof(f[2].data), BUNDLE_SHM_DATA "%s",
	    owner);
	return r == 0 ? 0 : -1;
}

static json_t *
bundle_mounts(const struct bundle *b)
{
	const struct image_host	*h = b->host;
	json_t			*m;
	char			 path[PATH_MAX], dst[64], opts[128];
	size_t			 i;
	int			 r = 0, n;

	if ((m = json_array()) == NULL)
		return NULL;
	r |= bundle_mount(m, "/proc", "proc", "proc", "nosuid,noexec,nodev");
	r |= bundle_mount(m, "/dev", "tmpfs", "tmpfs",
	    "nosuid,strictatime,mode=755,size=64k");
	/* No gid=: there is no tty group in the user namespace. */
	snprintf(opts, sizeof(opts), "nosuid,noexec,newinstance,"
	    "ptmxmode=0666,mode=0620,max=%d", BUNDLE_PTYS);
	r |= bundle_mount(m, "/dev/pts", "devpts", "devpts", opts);
	r |= bundle_mount(m, "/dev/shm", "tmpfs", "shm",
	    "nosuid,noexec,nodev," BUNDLE_SHM_DATA);
	r |= bundle_mount(m, "/dev/mqueue", "mqueue", "mqueue",
	    "nosuid,noexec,nodev");
	r |= bundle_mount(m, "/sys", "sysfs", "sysfs",
	    "nosuid,noexec,nodev,ro");

	if (b->image->type == IMAGE_HOST) {
		for (n = 0; n < h->nbinds; n++)
			r |= bundle_mount(m, h->binds[n], "bind", h->binds[n],
			    "rbind,ro,nosuid,nodev");
		r |= bundle_mount(m, "/etc", "bind", h->etc,
		    "bind,ro,nosuid,nodev,noexec");
	} else {
		for (i = 0; i < nitems(bundle_etc_files); i++) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s",
			    h->etc, bundle_etc_files[i]) >= sizeof(path))
				r = -1;
			snprintf(dst, sizeof(dst), "/etc/%s",
			    bundle_etc_files[i]);
			r |= bundle_mount(m, dst, "bind", path,
			    "bind,ro,nosuid,nodev,noexec");
		}
	}

	r |= bundle_own_mounts(m, b);
	r |= bundle_mount(m, SBX_INIT_PATH, "bind", b->init,
	    "bind,ro,nosuid,nodev");
	if (r != 0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/*
 * runsc gives the spec's oomScoreAdj to gVisor's kernel and gofer; the
 * stub processes that hold the sandbox's memory run at 0.  At 1000 the
 * kernel would be the OOM killer's choice, ending the whole sandbox for
 * one greedy program; at 0 it is the biggest, the greedy program's stub,
 * and gVisor ends that program alone.
 */
#define BUNDLE_RUNSC_OOM_ADJ	0

static json_t *
bundle_process(const struct bundle *b)
{
	const struct limits	*l = b->limits;
	json_t			*args;
	char			 fd[8];

	if (b->runsc)
		/* SBX_RUNSC_CTL_FD and SBX_RUNSC_FILTER_FD. */
		args = json_pack("[s, s, s, s, s]", SBX_INIT_PATH, "-c", "0",
		    "-s", "1");
	else if (b->filter_fd != 0) {
		(void)snprintf(fd, sizeof(fd), "%d", b->filter_fd);
		args = json_pack("[s, s, s]", SBX_INIT_PATH, "-s", fd);
	} else
		args = json_pack("[s]", SBX_INIT_PATH);
	return json_pack("{s:b, s:{s:i, s:i}, s:o, s:[s, s, s, s], s:s,"
	    " s:{s:[], s:[], s:[], s:[], s:[]}, s:b, s:i,"
	    " s:[{s:s, s:I, s:I}, {s:s, s:I, s:I}, {s:s, s:I, s:I},"
	    " {s:s, s:I, s:I}, {s:s, s:I, s:I}, {s:s, s:I, s:I}]}",
	    "terminal", 0,
	    "user", "uid", SBX_USER_UID, "gid", SBX_USER_UID,
	    "args", args,
	    "env", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" SBX_WORKSPACE,
	    "LANG=C.UTF-8", "TMPDIR=/tmp",
	    "cwd", SBX_WORKSPACE,
	    "capabilities", "bounding", "effective", "inheritable",
	    "permitted", "ambient",
	    "noNewPrivileges", 1,
	    "oomScoreAdj", b->runsc ? BUNDLE_RUNSC_OOM_ADJ : 1000,
	    "rlimits",
	    "type", "RLIMIT_NOFILE", "hard", (json_int_t)BUNDLE_NOFILE,
	    "soft", (json_int_t)BUNDLE_NOFILE,
	    "type", "RLIMIT_NPROC", "hard", (json_int_t)l->pids,
	    "soft", (json_int_t)l->pids,
	    "type", "RLIMIT_CORE", "hard", (json_int_t)0, "soft", (json_int_t)0,
	    "type", "RLIMIT_FSIZE", "hard", (json_int_t)l->disk * 2,
	    "soft", (json_int_t)l->disk * 2,
	    "type", "RLIMIT_MSGQUEUE", "hard", (json_int_t)0,
	    "soft", (json_int_t)0,
	    "type", "RLIMIT_SIGPENDING", "hard", (json_int_t)BUNDLE_SIGPENDING,
	    "soft", (json_int_t)BUNDLE_SIGPENDING);
}

static json_t *
bundle_strings(const char *const *v, size_t n)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) == -1) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
bundle_linux(const struct bundle *b)
{
	const struct limits	*l = b->limits;
	json_t			*ns, *mem;
	size_t			 i;

	if ((ns = json_array()) == NULL)
		return NULL;
	for (i = 0; i < nitems(bundle_namespaces); i++)
		if (json_array_append_new(ns, b->netns != NULL &&
		    strcmp(bundle_namespaces[i], "network") == 0 ?
		    json_pack("{s:s, s:s}", "type", "network", "path",
		    b->netns) : json_pack("{s:s}", "type",
		    bundle_namespaces[i])) == -1) {
			json_decref(ns);
			return NULL;
		}

	/* memory.swap is memory plus swap: equal means no swap at all. */
	mem = json_pack("{s:I, s:b}", "limit", (json_int_t)l->memory,
	    "disableOOMKiller", 0);
	if (mem != NULL && b->memsw && json_object_set_new(mem, "swap",
	    json_integer((json_int_t)l->memory)) == -1) {
		json_decref(mem);
		mem = NULL;
	}

	/* The profile is left out when sandbox-init loads it: "o*". */
	return json_pack("{s:[{s:i, s:I, s:i}], s:[{s:i, s:I, s:i}], s:o,"
	    " s:s, s:{s:o, s:{s:I}, s:{s:I, s:I}}, s:o, s:o, s:o*}",
	    "uidMappings", "containerID", 0, "hostID", (json_int_t)b->uid_base,
	    "size", SBX_UID_RANGE,
	    "gidMappings", "containerID", 0, "hostID", (json_int_t)b->uid_base,
	    "size", SBX_UID_RANGE,
	    "namespaces", ns,
	    "cgroupsPath", b->cgroup,
	    "resources", "memory", mem, "pids", "limit", (json_int_t)l->pids +
	    (b->runsc ? BUNDLE_RUNSC_PIDS : 0),
	    "cpu", "period", (json_int_t)BUNDLE_CPU_PERIOD,
	    "quota", (json_int_t)l->cpus * BUNDLE_CPU_PERIOD / 1000,
	    "maskedPaths", bundle_strings(bundle_masked, nitems(bundle_masked)),
	    "readonlyPaths", bundle_strings(bundle_readonly,
	    nitems(bundle_readonly)),
	    "seccomp", b->filter_fd != 0 ? NULL : bundle_seccomp());
}

json_t *
bundle_config(const struct bundle *b, char *err, size_t errlen)
{
	const char	*root;
	json_t		*c;

	if (b == NULL) {
		bundle_err(err, errlen, "no bundle");
		return NULL;
	}
	if (bundle_check(b, err, errlen) == -1)
		return NULL;
	root = b->image->type == IMAGE_HOST ? b->host->rootfs : b->image->path;

	c = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:o}",
	    "ociVersion", "1.0.2",
	    "process", bundle_process(b),
	    "root", "path", root, "readonly", 1,
	    "hostname", "sandbox",
	    "mounts", bundle_mounts(b),
	    "linux", bundle_linux(b));
	if (c == NULL)
		bundle_err(err, errlen, "cannot build the configuration");
	return c;
}

/*
 * Templates.  Containers of one image differ in a few fields: their uid
 * range, cgroup, limits and workspace.  The rest, the seccomp profile
 * most of all, is built once per image and kept; each container's
 * configuration is its template with those fields set.
 */
#define BUNDLE_TEMPLATES	8

static struct {
	char		*key;		/* what the template depends on */
	json_t		*config;
	uint64_t	 used;
} bundle_tpl[BUNDLE_TEMPLATES];
static uint64_t	 bundle_tpl_clock;

/* Everything of b the template holds; the container's own fields not. */
static char *
bundle_tpl_key(const struct bundle *b)
{
	char	*key, *k;
	int	 i;

	xasprintf(&key, "%d\n%s\n%s\n%s\n%s\n%d\n%d\n%d\n%d",
	    (int)b->image->type, b->image->path, b->host->rootfs, b->host->etc,
	    b->init, b->memsw, b->workspace != NULL, b->filter_fd, b->runsc);
	for (i = 0; i < b->host->nbinds; i++) {
		xasprintf(&k, "%s\n%s", key, b->host->binds[i]);
		free(key);
		key = k;
	}
	return key;
}

static json_t *
bundle_mount_at(json_t *config, const char *dst)
{
	json_t	*m;
	size_t	 i;

	json_array_foreach(json_object_get(config, "mounts"), i, m)
		if (json_is_string(json_object_get(m, "destination")) &&
		    strcmp(json_string_value(json_object_get(m,
		    "destination")), dst) == 0)
			return m;
	return NULL;
}

static int
bundle_set_int(json_t *o, const char *key, json_int_t v)
{
	return o == NULL ? -1 : json_object_set_new(o, key, json_integer(v));
}

/* A container's own fields, into a configuration of its image. */
static int
bundle_fill(json_t *c, const struct bundle *b)
{
	const struct limits	*l = b->limits;
	json_t			*linux_, *res, *rl, *m, *fresh;
	const char		*type;
	size_t			 i;
	int			 r = 0;

	linux_ = json_object_get(c, "linux");
	res = json_object_get(linux_, "resources");
	r |= bundle_set_int(json_array_get(json_object_get(linux_,
	    "uidMappings"), 0), "hostID", (json_int_t)b->uid_base);
	r |= bundle_set_int(json_array_get(json_object_get(linux_,
	    "gidMappings"), 0), "hostID", (json_int_t)b->uid_base);
	r |= json_object_set_new(linux_, "cgroupsPath",
	    json_string(b->cgroup));
	r |= bundle_set_int(json_object_get(res, "memory"), "limit",
	    (json_int_t)l->memory);
	if (b->memsw)
		r |= bundle_set_int(json_object_get(res, "memory"), "swap",
		    (json_int_t)l->memory);
	r |= bundle_set_int(json_object_get(res, "pids"), "limit",
	    (json_int_t)l->pids + (b->runsc ? BUNDLE_RUNSC_PIDS : 0));
	r |= bundle_set_int(json_object_get(res, "cpu"), "quota",
	    (json_int_t)l->cpus * BUNDLE_CPU_PERIOD / 1000);
	/* The network namespace to join, or none: a new one. */
	json_array_foreach(json_object_get(linux_, "namespaces"), i, m) {
		type = json_string_value(json_object_get(m, "type"));
		if (type == NULL || strcmp(type, "network") != 0)
			continue;
		if (b->netns != NULL)
			r |= json_object_set_new(m, "path",
			    json_string(b->netns));
		else
			(void)json_object_del(m, "path");
	}

	/* RLIMIT_NPROC and RLIMIT_FSIZE, as bundle_process() orders them. */
	rl = json_object_get(json_object_get(c, "process"), "rlimits");
	r |= bundle_set_int(json_array_get(rl, 1), "hard", (json_int_t)l->pids);
	r |= bundle_set_int(json_array_get(rl, 1), "soft", (json_int_t)l->pids);
	r |= bundle_set_int(json_array_get(rl, 3), "hard",
	    (json_int_t)l->disk * 2);
	r |= bundle_set_int(json_array_get(rl, 3), "soft",
	    (json_int_t)l->disk * 2);

	/* The mounts sized by the limits: new entries, as bundle_mounts(). */
	if ((fresh = json_array()) == NULL)
		return -1;
	r |= bundle_own_mounts(fresh, b);
	if (r == 0 && ((m = bundle_mount_at(c, "/tmp")) == NULL ||
	    json_object_update(m, json_array_get(fresh, 0)) == -1 ||
	    (m = bundle_mount_at(c, SBX_WORKSPACE)) == NULL ||
	    json_object_update(m, json_array_get(fresh, 1)) == -1))
		r = -1;
	json_decref(fresh);
	return r == 0 ? 0 : -1;
}

/* The configuration of b, from its image's template: borrowed. */
static json_t *
bundle_from_template(const struct bundle *b, char *err, size_t errlen)
{
	char	*key;
	size_t	 i, slot = 0;

	if (bundle_check(b, err, errlen) == -1)
		return NULL;
	key = bundle_tpl_key(b);
	for (i = 0; i < BUNDLE_TEMPLATES; i++) {
		if (bundle_tpl[i].key != NULL &&
		    strcmp(bundle_tpl[i].key, key) == 0)
			break;
		if (bundle_tpl[i].used < bundle_tpl[slot].used)
			slot = i;
	}
	if (i == BUNDLE_TEMPLATES) {
		i = slot;
		free(bundle_tpl[i].key);
		json_decref(bundle_tpl[i].config);
		bundle_tpl[i].key = NULL;
		if ((bundle_tpl[i].config = bundle_config(b, err,
		    errlen)) == NULL) {
			free(key);
			return NULL;
		}
		bundle_tpl[i].key = key;
		key = NULL;
	}
	free(key);
	bundle_tpl[i].used = ++bundle_tpl_clock;
	if (bundle_fill(bundle_tpl[i].config, b) == -1) {
		/* Half filled, it is no template any more. */
		free(bundle_tpl[i].key);
		bundle_tpl[i].key = NULL;
		json_decref(bundle_tpl[i].config);
		bundle_tpl[i].config = NULL;
		bundle_tpl[i].used = 0;
		bundle_err(err, errlen, "cannot fill in the configuration");
		return NULL;
	}
	return bundle_tpl[i].config;
}

/*
 * Runtime state, gone at the next start: written atomically, not synced,
 * since nothing reads it after a crash.
 */
int
bundle_write(const struct bundle *b, char *err, size_t errlen)
{
	json_t	*c;		/* the template's: borrowed */
	char	 tmp[PATH_MAX], path[PATH_MAX], *text;
	int	 fd, saved;

	if ((c = bundle_from_template(b, err, errlen)) == NULL)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/" BUNDLE_CONFIG,
	    b->dir) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.config.XXXXXX",
	    b->dir) >= sizeof(tmp)) {
		bundle_err(err, errlen, "bundle path too long");
		return -1;
	}
	/* mkstemp makes it 0600 whatever the umask. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		saved = errno;
		bundle_err(err, errlen, "%s: %s", tmp, strerror(saved));
		return -1;
	}
	/* In one write: json_dumpfd() makes a system call per token. */
	if ((text = json_dumps(c, JSON_COMPACT)) == NULL) {
		saved = ENOMEM;
		goto fail;
	}
	if (write_all(fd, text, strlen(text)) == -1) {
		saved = errno;
		free(text);
		goto fail;
	}
	free(text);
	if (close(fd) == -1) {
		saved = errno;
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) == -1) {
		saved = errno;
		goto fail;
	}
	return 0;

 fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
	bundle_err(err, errlen, "%s: %s", path,
	    saved ? strerror(saved) : "write failed");
	return -1;
}

/*
 * The seccomp profile of every container: default deny (EPERM), x86_64
 * only, and an allowlist broad enough for interpreters, compilers and the
 * programs they build.
 *
 * The list starts from what Docker's default profile allows without
 * conditions and leaves out what reaches kernel state a sandbox has no
 * business with: mounts, namespaces, tracing other processes, keyrings,
 * eBPF, perf, userfaultfd, io_uring, modules, kexec, clocks, file handles,
 * NUMA policy.  It leaves out too what draws on a count the whole host
 * shares, where no per-sandbox limit exists: Linux AIO takes events from
 * fs.aio-max-nr, which one sandbox could fill for every other process;
 * inotify instances and watches are charged to the uid that made the
 * sandbox's user namespace, root, so one sandbox could take root's.
 * The 32-bit and x32 entry points are not in the filter's architectures,
 * so libseccomp kills a thread that tries them.
 *
 * runc 1.1 turns several conditions on the same argument of one rule into
 * separate rules, which are or-ed: "socket unless AF_PACKET and unless
 * AF_ALG" would allow everything.  So every conditional rule here has one
 * condition, and socket families are allowed by name instead.
 */

/* Creating any namespace with clone(2); clone3 is refused outright. */
#define PROFILE_CLONE_NS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
				 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
				 CLONE_NEWCGROUP)

/* Allowed with any arguments.  Names unknown to runc's libseccomp are
 * skipped by runc, and newer calls than it knows answer ENOSYS. */
static const char *const profile_allow[] = {
	/* Files, directories and descriptors. */
	"access", "chdir", "chmod", "chown", "close", "close_range", "creat",
	"dup", "dup2", "dup3", "faccessat", "faccessat2", "fadvise64",
	"fallocate", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown",
	"fchownat", "fcntl", "fdatasync", "flock", "fstat", "fstatfs",
	"fsync", "ftruncate", "futimesat", "getcwd", "getdents",
	"getdents64", "lchown", "link", "linkat", "lseek", "lstat", "mkdir",
	"mkdirat", "mknod", "mknodat", "newfstatat", "open", "openat",
	"openat2", "pread64", "preadv", "preadv2", "pwrite64", "pwritev",
	"pwritev2", "read", "readahead", "readlink", "readlinkat", "readv",
	"rename", "renameat", "renameat2", "rmdir", "stat", "statfs", "statx",
	"symlink", "symlinkat", "sync", "sync_file_range", "syncfs",
	"truncate", "umask", "unlink", "unlinkat", "utime", "utimensat",
	"utimes", "write", "writev",
	"copy_file_range", "sendfile", "splice", "tee", "vmsplice",
	"fgetxattr", "flistxattr", "fremovexattr", "fsetxattr", "getxattr",
	"lgetxattr", "listxattr", "llistxattr", "lremovexattr", "lsetxattr",
	"removexattr", "setxattr",
	"ioctl",		/* no terminal, no device worth reaching */

	/* Memory. */
	"brk", "get_mempolicy", "madvise", "membarrier", "memfd_create",
	"memfd_secret", "mincore", "mlock", "mlock2", "mlockall", "mmap",
	"mprotect", "mremap", "msync", "munlock", "munlockall", "munmap",
	"pkey_alloc", "pkey_free", "pkey_mprotect", "remap_file_pages",

	/* Processes, threads and signals (clone is below). */
	"arch_prctl", "capget", "capset", "execve", "execveat", "exit",
	"exit_group", "fork", "vfork", "get_robust_list", "get_thread_area",
	"getcpu", "getpgid", "getpgrp", "getpid", "getppid", "getpriority",
	"getrlimit", "getrusage", "getsid", "gettid", "kill", "pidfd_open",
	"pidfd_send_signal", "prctl", "prlimit64", "restart_syscall", "rseq",
	"rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_tgsigqueueinfo", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_getscheduler", "sched_rr_get_interval",
	"sched_setaffinity", "sched_setattr", "sched_setparam",
	"sched_setscheduler", "sched_yield", "seccomp", "set_robust_list",
	"set_thread_area", "set_tid_address", "setpgid", "setpriority",
	"setrlimit", "setsid", "sigaltstack", "tgkill", "tkill", "wait4",
	"waitid",

	/* Credentials: without capabilities these only ever drop. */
	"getegid", "geteuid", "getgid", "getgroups", "getresgid",
	"getresuid", "getuid", "setfsgid", "setfsuid", "setgid", "setgroups",
	"setregid", "setresgid", "setresuid", "setreuid", "setuid",

	/* Time, reading it and sleeping. */
	"alarm", "clock_getres", "clock_gettime", "clock_nanosleep",
	"getitimer", "gettimeofday", "nanosleep", "setitimer", "time",
	"times", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_settime", "timerfd_create",
	"timerfd_gettime", "timerfd_settime",

	/* Waiting for events. */
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "futex",
	"futex_waitv", "pause", "pipe", "pipe2", "poll", "ppoll",
	"pselect6", "select", "signalfd", "signalfd4",
	"ioprio_get", "ioprio_set",

	/* Sockets once made (socket and socketpair are below). */
	"accept", "accept4", "bind", "connect", "getpeername", "getsockname",
	"getsockopt", "listen", "recvfrom", "recvmmsg", "recvmsg",
	"sendmmsg", "sendmsg", "sendto", "setsockopt", "shutdown",

	/* System V IPC and message queues: the container's own namespace. */
	"mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
	"mq_timedsend", "mq_unlink", "msgctl", "msgget", "msgrcv", "msgsnd",
	"semctl", "semget", "semop", "semtimedop", "shmat", "shmctl",
	"shmdt", "shmget",

	/* The system, read only. */
	"getrandom", "sysinfo", "uname",

	/* A program may restrict itself further. */
	"landlock_add_rule", "landlock_create_ruleset",
	"landlock_restrict_self",
};

/* Allowed when one argument passes one test. */
struct profile_rule {
	const char	*name;
	unsigned int	 index;
	const char	*op;
	uint64_t	 value;		/* the mask, for SCMP_CMP_MASKED_EQ */
	uint64_t	 value2;
};

static const struct profile_rule profile_cond[] = {
	/* Threads and processes, but no new namespaces. */
	{ "clone", 0, "SCMP_CMP_MASKED_EQ", PROFILE_CLONE_NS, 0 },

	/* Only the harmless personalities; 0xffffffff queries. */
	{ "personality", 0, "SCMP_CMP_EQ", PER_LINUX, 0 },
	{ "personality", 0, "SCMP_CMP_EQ", PER_LINUX32, 0 },
	{ "personality", 0, "SCMP_CMP_EQ", UNAME26, 0 },
	{ "personality", 0, "SCMP_CMP_EQ", UNAME26 | PER_LINUX32, 0 },
	{ "personality", 0, "SCMP_CMP_EQ", 0xffffffff, 0 },

	/*
	 * The families real programs use.  Not AF_PACKET, AF_ALG, AF_VSOCK,
	 * AF_KEY, nor the long tail of rarely audited protocol code.
	 */
	{ "socket", 0, "SCMP_CMP_EQ", AF_UNIX, 0 },
	{ "socket", 0, "SCMP_CMP_EQ", AF_INET, 0 },
	{ "socket", 0, "SCMP_CMP_EQ", AF_INET6, 0 },
	{ "socket", 0, "SCMP_CMP_EQ", AF_NETLINK, 0 },
	{ "socketpair", 0, "SCMP_CMP_EQ", AF_UNIX, 0 },
};

/* Refused with an errno of their own rather than EPERM. */
static const struct {
	const char	*name;
	int		 errnoret;
} profile_errno[] = {
	/* clone3 takes its flags in memory where no filter can see them;
	 * ENOSYS makes libc fall back to clone. */
	{ "clone3", ENOSYS },
};

static json_t *
profile_rule_json(const struct profile_rule *r)
{
	return json_pack("{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}",
	    "names", r->name, "action", "SCMP_ACT_ALLOW",
	    "args", "index", (int)r->index, "value", (json_int_t)r->value,
	    "valueTwo", (json_int_t)r->value2, "op", r->op);
}

json_t *
bundle_seccomp(void)
{
	json_t	*calls, *names = NULL, *rule;
	size_t	 i;

	if ((calls = json_array()) == NULL || (names = json_array()) == NULL)
		goto fail;
	for (i = 0; i < nitems(profile_allow); i++)
		if (json_array_append_new(names,
		    json_string(profile_allow[i])) == -1)
			goto fail;
	rule = json_pack("{s:o, s:s}", "names", names,
	    "action", "SCMP_ACT_ALLOW");
	names = NULL;
	if (json_array_append_new(calls, rule) == -1)
		goto fail;
	for (i = 0; i < nitems(profile_cond); i++)
		if (json_array_append_new(calls,
		    profile_rule_json(&profile_cond[i])) == -1)
			goto fail;
	for (i = 0; i < nitems(profile_errno); i++) {
		rule = json_pack("{s:[s], s:s, s:i}",
		    "names", profile_errno[i].name, "action", "SCMP_ACT_ERRNO",
		    "errnoRet", profile_errno[i].errnoret);
		if (json_array_append_new(calls, rule) == -1)
			goto fail;
	}

	/* An explicit empty "flags": left out, runc would set SPEC_ALLOW
	 * and turn off the speculative store bypass mitigation. */
	return json_pack("{s:s, s:i, s:[s], s:[], s:o}",
	    "defaultAction", "SCMP_ACT_ERRNO", "defaultErrnoRet", EPERM,
	    "architectures", "SCMP_ARCH_X86_64", "flags", "syscalls", calls);

 fail:
	json_decref(names);
	json_decref(calls);
	return NULL;
}

/*
 * The profile compiled by libseccomp, as runc 1.1 compiles it from the
 * linux.seccomp object above, once for every container instead of once
 * per container.
 */

static int
profile_op(const char *op, enum scmp_compare *cmp)
{
	if (strcmp(op, "SCMP_CMP_EQ") == 0)
		*cmp = SCMP_CMP_EQ;
	else if (strcmp(op, "SCMP_CMP_MASKED_EQ") == 0)
		*cmp = SCMP_CMP_MASKED_EQ;
	else
		return -1;
	return 0;
}

/*
 * Add a rule for name, if this libseccomp knows it (runc skips those it
 * does not), and keep the highest number seen in *last.
 */
static int
profile_add(scmp_filter_ctx ctx, uint32_t action, const char *name,
    unsigned int ncmp, const struct scmp_arg_cmp *cmp, int *last)
{
	int	 nr;

	if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR)
		return 0;
	if (nr > *last)
		*last = nr;
	return seccomp_rule_add_array(ctx, action, nr, ncmp, cmp);
}

int
bundle_filter(char *err, size_t errlen)
{
	/*
	 * runc's ENOSYS prologue, put in front of what libseccomp makes: a
	 * system call newer than any the profile names answers ENOSYS rather
	 * than EPERM, so that libc falls back to an older one.  The x32
	 * numbers are left to libseccomp, which kills.
	 */
	struct sock_filter	 enosys[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0, 0, 2),	/* last */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	};
	scmp_filter_ctx		 ctx;
	struct scmp_arg_cmp	 cmp;
	struct stat		 st;
	size_t			 i;
	int			 r = 0, last = -1, fd = -1;

	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		bundle_err(err, errlen, "seccomp: the profile is x86_64 only");
		return -1;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL) {
		bundle_err(err, errlen, "seccomp: cannot make a filter");
		return -1;
	}
	for (i = 0; i < nitems(profile_allow) && r == 0; i++)
		r = profile_add(ctx, SCMP_ACT_ALLOW, profile_allow[i], 0, NULL,
		    &last);
	for (i = 0; i < nitems(profile_cond) && r == 0; i++) {
		memset(&cmp, 0, sizeof(cmp));
		cmp.arg = profile_cond[i].index;
		cmp.datum_a = profile_cond[i].value;
		cmp.datum_b = profile_cond[i].value2;
		if (profile_op(profile_cond[i].op, &cmp.op) == -1)
			r = -EINVAL;
		else
			r = profile_add(ctx, SCMP_ACT_ALLOW,
			    profile_cond[i].name, 1, &cmp, &last);
	}
	for (i = 0; i < nitems(profile_errno) && r == 0; i++)
		r = profile_add(ctx, SCMP_ACT_ERRNO(profile_errno[i].errnoret),
		    profile_errno[i].name, 0, NULL, &last);
	if (r != 0) {
		bundle_err(err, errlen, "seccomp: rule %zu: %s", i,
		    strerror(-r));
		goto fail;
	}
	if (last < 0) {
		bundle_err(err, errlen, "seccomp: libseccomp knows none of "
		    "the profile's system calls");
		goto fail;
	}
	enosys[3].k = (uint32_t)last;

	/*
	 * The prologue, then libseccomp's program written after it; sealed,
	 * so that no container, nor anything else, can change it.
	 */
	if ((fd = memfd_create("mcpd-seccomp", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 ||
	    write_all(fd, enosys, sizeof(enosys)) == -1) {
		bundle_err(err, errlen, "seccomp: memfd: %s", strerror(errno));
		goto fail;
	}
	if ((r = seccomp_export_bpf(ctx, fd)) != 0) {
		bundle_err(err, errlen, "seccomp: cannot export the filter: "
		    "%s", strerror(-r));
		goto fail;
	}
	if (fstat(fd, &st) == -1 || st.st_size % sizeof(enosys[0]) != 0 ||
	    st.st_size / sizeof(enosys[0]) > BPF_MAXINSNS) {
		bundle_err(err, errlen, "seccomp: a program of %lld bytes",
		    (long long)st.st_size);
		goto fail;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1) {
		bundle_err(err, errlen, "seccomp: sealing: %s",
		    strerror(errno));
		goto fail;
	}
	seccomp_release(ctx);
	return fd;

 fail:
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return -1;
}
