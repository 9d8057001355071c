/*
 * OCI bundles, the seccomp profile and the host image (sandboxd/bundle.c,
 * image.c; common/imgtree.c): the generated configuration field by field,
 * then, as root with runc, real containers made from it and probed from
 * inside.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <jansson.h>
#include <seccomp.h>

#include "imgtree.h"
#include "policy.h"
#include "util.h"
#include "../../sandboxd/bundle.h"
#include "../../sandboxd/image.h"
#include "../tap.h"

#define TEST_ID		"0123456789abcdef0123456789abcdef"
#define TEST_UID_BASE	300000000U
#define RUNC		"/usr/sbin/runc"
/* Not sandboxd's "/mcpd": a daemon running beside the test would treat
 * our cgroups as its leftovers. */
#define TEST_CGROUP	"mcpd-test-bundle"

static char		 tmp[64];		/* 0755: containers walk it */
static char		 runc_root[PATH_MAX];
static struct image_host host;
static struct limits	 lim;
static struct image	 img_host, img_rootfs;

/* ---- small helpers ---- */

static char *
path(const char *fmt, ...) __attribute__((__format__(printf, 1, 2)));

/* A path under tmp; a few rotating buffers are enough for any one call. */
static char *
path(const char *fmt, ...)
{
	static char	 buf[8][PATH_MAX];
	static int	 n;
	char		*p = buf[n++ % 8];
	char		 rel[PATH_MAX - 128];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(p, PATH_MAX, "%s/%s", tmp, rel);
	return p;
}

static int
write_file(const char *p, const char *s, mode_t mode)
{
	int	 fd;
	ssize_t	 n;

	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) ==
	    -1)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static char *
read_file(const char *p)
{
	char	*buf;
	size_t	 len = 0, cap = 4096;
	ssize_t	 n;
	int	 fd;

	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	buf = xmalloc(cap);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 2)
			buf = xreallocarray(buf, cap *= 2, 1);
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/*
 * Run argv with stdin from /dev/null.  With out, capture stdout into *out;
 * without, send it to /dev/null too (a detached container keeps runc's
 * stdout open).  The wait status, or -1; killed after timeout seconds.
 */
static int
run(char *const argv[], char **out, int timeout)
{
	struct pollfd	 pfd;
	size_t		 len = 0, cap = 4096;
	ssize_t		 n;
	pid_t		 pid;
	time_t		 end = time(NULL) + timeout;
	int		 p[2] = { -1, -1 }, null, st;

	if (out != NULL) {
		*out = NULL;
		if (pipe2(p, O_CLOEXEC) == -1)
			return -1;
	}
	fflush(stdout);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(out != NULL ? p[1] : null, 1);
		if (out == NULL)
			dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (out != NULL) {
		close(p[1]);
		*out = xmalloc(cap);
		pfd.fd = p[0];
		pfd.events = POLLIN;
		for (;;) {
			if (poll(&pfd, 1, 1000) == 0) {
				if (time(NULL) < end)
					continue;
				diag("%s: timed out", argv[0]);
				kill(pid, SIGKILL);
				break;
			}
			if ((n = read(p[0], *out + len, cap - len - 1)) <= 0)
				break;
			len += n;
			if (cap - len < 2)
				*out = xreallocarray(*out, cap *= 2, 1);
		}
		(*out)[len] = '\0';
		close(p[0]);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static void
rm_rf(const char *p)
{
	char	*argv[] = { (char *)"/bin/rm", (char *)"-rf",
		    (char *)"--one-file-system", (char *)p, NULL };

	run(argv, NULL, 60);
}

static void
diag_lines(const char *out)
{
	const char	*p, *e;

	for (p = out; *p != '\0'; p = e + (*e != '\0')) {
		e = strchrnul(p, '\n');
		diag("%.*s", (int)(e - p), p);
	}
}

/* The value of "key value" lines: the rest of the first line with key. */
static const char *
line_value(const char *out, const char *key, char *buf, size_t len)
{
	const char	*p, *e;
	size_t		 k = strlen(key);

	for (p = out; p != NULL && *p != '\0'; p = e + (*e != '\0')) {
		e = strchrnul(p, '\n');
		if ((size_t)(e - p) > k && strncmp(p, key, k) == 0 &&
		    p[k] == ' ') {
			snprintf(buf, len, "%.*s", (int)(e - p - k - 1),
			    p + k + 1);
			return buf;
		}
	}
	return NULL;
}

static int
line_is(const char *out, const char *key, const char *want)
{
	char		 buf[512];
	const char	*v = line_value(out, key, buf, sizeof(buf));

	return v != NULL && strcmp(v, want) == 0;
}

static void
link_at(const char *target, const char *p)
{
	if (symlink(target, p) == -1)
		diag("symlink %s: %s", p, strerror(errno));
}

/* ---- JSON helpers ---- */

static json_t *
jget(json_t *o, const char *dotted)
{
	char	 buf[256], *p, *k;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (p = buf; o != NULL && (k = strsep(&p, ".")) != NULL; )
		o = json_object_get(o, k);
	return o;
}

static json_int_t
jint(json_t *o, const char *dotted)
{
	json_t	*v = jget(o, dotted);

	return json_is_integer(v) ? json_integer_value(v) : -12345;
}

static const char *
jstr(json_t *o, const char *dotted)
{
	const char	*s = json_string_value(jget(o, dotted));

	return s != NULL ? s : "";
}

static int
jhas(json_t *arr, const char *s)
{
	size_t	 i;
	json_t	*v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

static json_t *
mount_at(json_t *cfg, const char *dst)
{
	size_t	 i;
	json_t	*m;

	json_array_foreach(json_object_get(cfg, "mounts"), i, m)
		if (strcmp(jstr(m, "destination"), dst) == 0)
			return m;
	return NULL;
}

static int
mount_opt(json_t *m, const char *opt)
{
	return m != NULL && jhas(json_object_get(m, "options"), opt);
}

/* The rlimit of type t, or -1. */
static json_int_t
rlimit_of(json_t *cfg, const char *t, const char *which)
{
	size_t	 i;
	json_t	*r;

	json_array_foreach(jget(cfg, "process.rlimits"), i, r)
		if (strcmp(jstr(r, "type"), t) == 0)
			return jint(r, which);
	return -1;
}

/*
 * How the profile treats a system call: 0 not named in any rule, 1 allowed
 * without condition, 2 allowed under a condition, 3 named with another
 * action.
 */
static int
sc_rule(json_t *sc, const char *name)
{
	size_t	 i;
	json_t	*r;
	int	 how = 0;

	json_array_foreach(json_object_get(sc, "syscalls"), i, r) {
		if (!jhas(json_object_get(r, "names"), name))
			continue;
		if (strcmp(jstr(r, "action"), "SCMP_ACT_ALLOW") != 0)
			how = how ? how : 3;
		else if (json_array_size(json_object_get(r, "args")) == 0)
			return 1;
		else
			how = 2;
	}
	return how;
}

/* The rules for name with a condition: count, and values of arg 0. */
static size_t
sc_conds(json_t *sc, const char *name, uint64_t *vals, size_t nvals,
    const char **op)
{
	size_t	 i, n = 0;
	json_t	*r, *a;

	json_array_foreach(json_object_get(sc, "syscalls"), i, r) {
		if (!jhas(json_object_get(r, "names"), name) ||
		    json_array_size(json_object_get(r, "args")) == 0)
			continue;
		a = json_array_get(json_object_get(r, "args"), 0);
		if (n < nvals)
			vals[n] = (uint64_t)jint(a, "value");
		if (op != NULL)
			*op = jstr(a, "op");
		n++;
	}
	return n;
}

static void
bundle_default(struct bundle *b, const char *dir)
{
	memset(b, 0, sizeof(*b));
	b->id = TEST_ID;
	b->dir = dir;
	b->image = &img_host;
	b->host = &host;
	b->init = "/usr/libexec/mcpd/sandbox-init";
	b->uid_base = TEST_UID_BASE;
	b->limits = &lim;
	b->workspace = NULL;
	b->cgroup = "/mcpd/" TEST_ID;
	b->memsw = 1;
}

/* ---- the host image ---- */

/* Every entry of a tree: root-owned, dirs 0755, files 0644, links. */
static int
tree_clean(const char *dir, int *nfiles)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		 p[PATH_MAX];
	int		 good = 1;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) == -1 || st.st_uid != 0 || st.st_gid != 0) {
			diag("%s: not root's", p);
			good = 0;
		} else if (S_ISDIR(st.st_mode)) {
			/* runc gives /tmp the mode of its mountpoint. */
			if ((st.st_mode & 07777) != (strcmp(de->d_name,
			    "tmp") == 0 ? 01777 : 0755)) {
				diag("%s: mode %o", p, st.st_mode & 07777);
				good = 0;
			}
			good &= tree_clean(p, nfiles);
		} else if (S_ISREG(st.st_mode)) {
			(*nfiles)++;
			if ((st.st_mode & 07777) != 0644) {
				diag("%s: mode %o", p, st.st_mode & 07777);
				good = 0;
			}
		} else if (!S_ISLNK(st.st_mode)) {
			diag("%s: not a file, directory or link", p);
			good = 0;
		}
	}
	closedir(d);
	return good;
}

static int
same_link(const char *a, const char *b)
{
	char	 x[PATH_MAX], y[PATH_MAX];
	ssize_t	 n, m;

	if ((n = readlink(a, x, sizeof(x) - 1)) == -1 ||
	    (m = readlink(b, y, sizeof(y) - 1)) == -1)
		return 0;
	x[n] = y[m] = '\0';
	return strcmp(x, y) == 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in dir, sorted, space-separated. */
static char *
listing(const char *dir)
{
	struct dirent	**ents;
	char		*s;
	size_t		 len = 1;
	int		 i, n;

	if ((n = scandir(dir, &ents, NULL, alphasort)) == -1)
		return xstrdup("(none)");
	for (i = 0; i < n; i++)
		len += strlen(ents[i]->d_name) + 1;
	s = xcalloc(1, len);
	for (i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") != 0 &&
		    strcmp(ents[i]->d_name, "..") != 0) {
			if (*s != '\0')
				strcat(s, " ");
			strcat(s, ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	return s;
}

static void
test_image_host(void)
{
	static const char *const top[] = {
		"bin", "sbin", "lib", "lib32", "lib64", "libx32",
	};
	struct image_host	 h2;
	struct stat		 st, st2;
	char			 err[256], want[512], hp[64];
	char			*a, *b, *l;
	size_t			 i;
	int			 good, nfiles = 0, nbinds = 1;

	ok(image_host_prepare(path("images/host"), &host, err,
	    sizeof(err)) == 0, "image_host_prepare builds the host image");
	if (host.nbinds == 0)
		diag("%s", err);
	ok(strcmp(host.rootfs, path("images/host/rootfs")) == 0 &&
	    strcmp(host.etc, path("images/host/etc")) == 0,
	    "its paths are dir/rootfs and dir/etc");

	/* The skeleton: mountpoints, plus what the host has at the top. */
	snprintf(want, sizeof(want), ".mcpd dev etc proc sys tmp usr "
	    "workspace");
	good = 1;
	for (i = 0; i < nitems(top); i++) {
		snprintf(hp, sizeof(hp), "/%s", top[i]);
		a = path("images/host/rootfs/%s", top[i]);
		if (lstat(hp, &st) == -1) {
			good &= lstat(a, &st2) == -1;
			continue;
		}
		if (S_ISLNK(st.st_mode))
			good &= same_link(hp, a);
		else if (S_ISDIR(st.st_mode)) {
			good &= lstat(a, &st2) == 0 && S_ISDIR(st2.st_mode);
			good &= nbinds < host.nbinds &&
			    strcmp(host.binds[nbinds++], hp) == 0;
		}
		strcat(want, " ");
		strcat(want, top[i]);
	}
	ok(good, "top-level links mirror the host, real directories bound");
	ok(host.nbinds == nbinds && strcmp(host.binds[0], "/usr") == 0,
	    "binds: /usr first, %d in all", host.nbinds);
	/* alphasort orders as strcmp does here: sort want to compare. */
	{
		char	*l2 = listing(path("images/host/rootfs"));
		char	*w[32], *s = want, *t;
		size_t	 n = 0;

		while ((t = strsep(&s, " ")) != NULL && n < nitems(w))
			w[n++] = t;
		qsort(w, n, sizeof(w[0]), cmp_str);
		l = xcalloc(1, sizeof(want) + 1);
		for (i = 0; i < n; i++) {
			strcat(l, i ? " " : "");
			strcat(l, w[i]);
		}
		ok(strcmp(l, l2) == 0, "rootfs holds only: %s", l2);
		free(l2);
		free(l);
	}
	l = listing(path("images/host/rootfs/usr"));
	ok(strcmp(l, "") == 0, "rootfs/usr is an empty mountpoint");
	free(l);
	ok(lstat(path("images/host/rootfs/.mcpd/sandbox-init"), &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size == 0,
	    ".mcpd/sandbox-init is an empty file");
	ok(lstat(host.rootfs, &st) == 0 && st.st_uid == 0 &&
	    (st.st_mode & 07777) == 0755 && tree_clean(host.rootfs, &nfiles),
	    "rootfs: root-owned, 0755, tmp 01777");

	/* The synthetic etc. */
	a = read_file(path("images/host/etc/passwd"));
	ok(a != NULL && strstr(a, "\nsandbox:x:1000:1000:sandbox:/workspace:"
	    "/bin/sh\n") != NULL && strncmp(a, "root:x:0:0:", 11) == 0 &&
	    strstr(a, "\nnobody:x:65534:65534:") != NULL,
	    "passwd: root, sandbox 1000 at /workspace, nobody");
	free(a);
	a = read_file(path("images/host/etc/group"));
	ok(a != NULL && strstr(a, "sandbox:x:1000:") != NULL &&
	    strstr(a, "nogroup:x:65534:") != NULL, "group");
	free(a);
	a = read_file(path("images/host/etc/hosts"));
	ok(a != NULL && strstr(a, "127.0.0.1\tlocalhost sandbox\n") != NULL &&
	    strstr(a, "::1\tlocalhost ip6-localhost ip6-loopback\n") != NULL,
	    "hosts");
	free(a);
	a = read_file(path("images/host/etc/resolv.conf"));
	ok(a != NULL && strcmp(a, "nameserver 10.0.2.3\n") == 0,
	    "resolv.conf names the user-mode network's resolver");
	free(a);
	a = read_file(path("images/host/etc/nsswitch.conf"));
	ok(a != NULL && strstr(a, "passwd: files\n") != NULL &&
	    strstr(a, "hosts: files dns\n") != NULL, "nsswitch.conf");
	free(a);
	a = read_file(path("images/host/etc/ld.so.cache"));
	b = read_file("/etc/ld.so.cache");
	ok(a != NULL && b != NULL && stat("/etc/ld.so.cache", &st) == 0 &&
	    stat(path("images/host/etc/ld.so.cache"), &st2) == 0 &&
	    st.st_size == st2.st_size && memcmp(a, b, st.st_size) == 0,
	    "ld.so.cache is the host's");
	free(a);
	free(b);
	if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0)
		ok(access(path("images/host/etc/ssl/certs/ca-certificates.crt"),
		    R_OK) == 0, "ssl/certs copied");
	if (lstat("/etc/localtime", &st) == 0 && S_ISLNK(st.st_mode))
		ok(same_link("/etc/localtime",
		    path("images/host/etc/localtime")),
		    "localtime is the host's link");
	if (lstat("/etc/java-17-openjdk/security/java.security", &st) == 0)
		ok(access(path("images/host/etc/java-17-openjdk/security/"
		    "java.security"), R_OK) == 0, "java-* trees copied");
	if (lstat("/etc/alternatives/python", &st) == 0 ||
	    lstat("/etc/alternatives/java", &st) == 0)
		ok(same_link("/etc/alternatives/java",
		    path("images/host/etc/alternatives/java")) ||
		    same_link("/etc/alternatives/python",
		    path("images/host/etc/alternatives/python")),
		    "alternatives copied as links");
	ok(access(path("images/host/etc/shadow"), F_OK) == -1 &&
	    access(path("images/host/etc/gshadow"), F_OK) == -1 &&
	    access(path("images/host/etc/ssl/private"), F_OK) == -1 &&
	    access(path("images/host/etc/ssh"), F_OK) == -1 &&
	    access(path("images/host/etc/sudoers"), F_OK) == -1,
	    "no shadow, gshadow, ssl/private, ssh, sudoers");
	nfiles = 0;
	good = tree_clean(host.etc, &nfiles);
	ok(good && nfiles > 5,
	    "etc: %d files, all root's, files 0644, dirs 0755", nfiles);

	/* Rebuilt twice: the same paths, fresh trees, nothing left over. */
	/* A mark in the old trees: inode numbers may be reused. */
	write_file(path("images/host/rootfs/mark"), "", 0644);
	write_file(path("images/host/etc/mark"), "", 0644);
	ok(image_host_prepare(path("images/host"), &h2, err,
	    sizeof(err)) == 0 && image_host_prepare(path("images/host"), &h2,
	    err, sizeof(err)) == 0, "rebuilt twice");
	l = listing(path("images/host"));
	ok(strcmp(l, "etc rootfs") == 0, "no old tree left: %s", l);
	free(l);
	ok(strcmp(h2.rootfs, host.rootfs) == 0 &&
	    access(path("images/host/rootfs/mark"), F_OK) == -1 &&
	    access(path("images/host/etc/mark"), F_OK) == -1 &&
	    access(path("images/host/rootfs/proc"), F_OK) == 0 &&
	    access(path("images/host/etc/passwd"), F_OK) == 0,
	    "fresh trees in place, at the same paths");
	ok(image_host_prepare("images/host", &h2, err, sizeof(err)) == -1 &&
	    err[0] != '\0', "a relative directory is refused: %s", err);
}

/*
 * Old trees are removed without following links or entering mounts: a
 * planted link and a bind mount in swapped-out trees leave their targets
 * as they were.
 */
static void
test_image_sweep(void)
{
	struct image_host	 h2;
	char			 err[256];
	int			 mounted;

	mkdir(path("victim"), 0755);
	write_file(path("victim/keep"), "keep\n", 0644);
	mkdir(path("images/host/.old-link"), 0755);
	mkdir(path("images/host/.old-link/etc"), 0755);
	link_at(path("victim"), path("images/host/.old-link/etc/ssl"));
	link_at(path("victim/keep"), path("images/host/.old-link/keep"));
	mkdir(path("images/host/.new-crash"), 0755);
	mkdir(path("images/host/.old-mount"), 0755);
	mkdir(path("images/host/.old-mount/rootfs"), 0755);
	mkdir(path("images/host/.old-mount/rootfs/usr"), 0755);
	mounted = mount(path("victim"), path("images/host/.old-mount/rootfs/"
	    "usr"), NULL, MS_BIND, NULL) == 0;

	ok(image_host_prepare(path("images/host"), &h2, err,
	    sizeof(err)) == 0, "rebuilt with planted trees");
	ok(access(path("victim/keep"), F_OK) == 0,
	    "a link in an old tree is removed, not followed");
	ok(access(path("images/host/.old-link"), F_OK) == -1 &&
	    access(path("images/host/.new-crash"), F_OK) == -1,
	    "old and half-built trees are gone");
	if (mounted) {
		ok(access(path("victim/keep"), F_OK) == 0 &&
		    access(path("images/host/.old-mount/rootfs/usr/keep"),
		    F_OK) == 0, "a tree with a mount in it is left alone");
		umount2(path("images/host/.old-mount/rootfs/usr"), MNT_DETACH);
		ok(image_host_prepare(path("images/host"), &h2, err,
		    sizeof(err)) == 0 &&
		    access(path("images/host/.old-mount"), F_OK) == -1,
		    "and removed once unmounted");
	}
	rm_rf(path("victim"));
}

/* ---- rootfs images ---- */

static void
rootfs_make(const char *name)
{
	char	*r = path("%s", name);

	rm_rf(r);
	mkdir(r, 0755);
	chmod(r, 0755);
}

static int
target_empty(void)
{
	char	*l = listing(path("target"));
	int	 empty = strcmp(l, "") == 0;

	free(l);
	return empty;
}

static void
test_rootfs_check(void)
{
	static const char *const dirs[] = {
		"proc", "dev", "sys", "tmp", "workspace", ".mcpd", "etc",
	};
	static const char *const files[] = {
		".mcpd/sandbox-init", "etc/passwd", "etc/group", "etc/hosts",
		"etc/resolv.conf",
	};
	struct stat	 st;
	char		 err[256];
	size_t		 i;
	int		 good;

	mkdir(path("target"), 0755);

	rootfs_make("r1");
	ok(image_rootfs_check(path("r1"), err, sizeof(err)) == 0,
	    "an empty rootfs is completed");
	good = 1;
	for (i = 0; i < nitems(dirs); i++)
		good &= lstat(path("r1/%s", dirs[i]), &st) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_uid == 0;
	for (i = 0; i < nitems(files); i++)
		good &= lstat(path("r1/%s", files[i]), &st) == 0 &&
		    S_ISREG(st.st_mode) && st.st_uid == 0;
	ok(good, "mountpoints and etc files made");
	ok(lstat(path("r1/tmp"), &st) == 0 && (st.st_mode & 07777) == 01777,
	    "tmp made 01777");
	chmod(path("r1/tmp"), 0755);
	write_file(path("r1/etc/passwd"), "root:x:0:0::/:/bin/sh\n", 0644);
	ok(image_rootfs_check(path("r1"), err, sizeof(err)) == 0,
	    "a complete rootfs passes");
	ok(lstat(path("r1/tmp"), &st) == 0 && (st.st_mode & 07777) == 01777,
	    "a tmp without the sticky bit is made 01777");
	{
		char	*p = read_file(path("r1/etc/passwd"));

		ok(p != NULL && strncmp(p, "root:x:0:0", 10) == 0,
		    "existing files are kept");
		free(p);
	}

	rootfs_make("r2");
	link_at(path("target"), path("r2/workspace"));
	ok(image_rootfs_check(path("r2"), err, sizeof(err)) == -1 &&
	    strstr(err, "workspace") != NULL,
	    "workspace -> elsewhere is refused: %s", err);
	ok(target_empty() && access(path("r2/proc"), F_OK) == -1,
	    "refused before changing anything");

	rootfs_make("r3");
	link_at(path("target"), path("r3/.mcpd"));
	ok(image_rootfs_check(path("r3"), err, sizeof(err)) == -1 &&
	    target_empty(), ".mcpd -> elsewhere is refused, target untouched");

	rootfs_make("r4");
	link_at("/", path("r4/.mcpd"));
	ok(image_rootfs_check(path("r4"), err, sizeof(err)) == -1 &&
	    access("/sandbox-init", F_OK) == -1,
	    ".mcpd -> / is refused, nothing made in /");

	rootfs_make("r5");
	mkdir(path("r5/etc"), 0755);
	link_at("/etc/passwd", path("r5/etc/passwd"));
	ok(image_rootfs_check(path("r5"), err, sizeof(err)) == -1,
	    "etc/passwd as a link is refused: %s", err);

	rootfs_make("r6");
	link_at(path("target"), path("r6/etc"));
	ok(image_rootfs_check(path("r6"), err, sizeof(err)) == -1 &&
	    target_empty(), "etc as a link is refused");

	rootfs_make("r7");
	mkdir(path("r7/.mcpd"), 0755);
	link_at(path("target/x"), path("r7/.mcpd/sandbox-init"));
	ok(image_rootfs_check(path("r7"), err, sizeof(err)) == -1 &&
	    target_empty(), "sandbox-init as a link is refused");

	rootfs_make("r8");
	write_file(path("r8/proc"), "", 0644);
	ok(image_rootfs_check(path("r8"), err, sizeof(err)) == -1 &&
	    strstr(err, "not a directory") != NULL,
	    "a file where a mountpoint goes is refused");

	link_at(path("r1"), path("rlink"));
	ok(image_rootfs_check(path("rlink"), err, sizeof(err)) == -1,
	    "a rootfs that is a link is refused");
	chmod(path("r1"), 0775);
	ok(image_rootfs_check(path("r1"), err, sizeof(err)) == -1,
	    "a group-writable rootfs is refused");
	chmod(path("r1"), 0755);
	ok(image_rootfs_check("r1", err, sizeof(err)) == -1,
	    "a relative path is refused");
	unlink("/sandbox-init");	/* in case */
}

/* ---- the configuration ---- */

static void
test_config(void)
{
	static const char *const masked[] = {
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore",
		"/proc/keys", "/proc/latency_stats", "/proc/timer_list",
		"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap",
		"/proc/kallsyms",
	};
	static const char *const ro[] = {
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
		"/proc/sysrq-trigger",
	};
	static const char *const caps[] = {
		"bounding", "effective", "inheritable", "permitted", "ambient",
	};
	static const char *const nstypes[] = {
		"pid", "network", "ipc", "uts", "mount", "cgroup", "user",
	};
	struct bundle	 b;
	json_t		*c, *m, *v, *env;
	char		 err[256], opt[128], ino[64];
	size_t		 i;
	int		 good;

	bundle_default(&b, path("bundle"));
	c = bundle_config(&b, err, sizeof(err));
	ok(c != NULL, "bundle_config makes a configuration");
	if (c == NULL) {
		diag("%s", err);
		return;
	}
	ok(strcmp(jstr(c, "ociVersion"), "1.0.2") == 0, "ociVersion 1.0.2");
	ok(json_is_false(jget(c, "process.terminal")), "terminal false");
	ok(jint(c, "process.user.uid") == SBX_USER_UID &&
	    jint(c, "process.user.gid") == SBX_USER_UID, "runs as 1000:1000");
	v = jget(c, "process.args");
	ok(json_array_size(v) == 1 && jhas(v, SBX_INIT_PATH),
	    "args: sandbox-init alone");
	env = jget(c, "process.env");
	ok(json_array_size(env) == 4 &&
	    jhas(env, "PATH=/usr/local/bin:/usr/bin:/bin") &&
	    jhas(env, "HOME=/workspace") && jhas(env, "LANG=C.UTF-8") &&
	    jhas(env, "TMPDIR=/tmp"), "environment");
	ok(strcmp(jstr(c, "process.cwd"), "/workspace") == 0, "cwd");
	good = json_object_size(jget(c, "process.capabilities")) == 5;
	for (i = 0; i < nitems(caps); i++) {
		v = json_object_get(jget(c, "process.capabilities"), caps[i]);
		good &= json_is_array(v) && json_array_size(v) == 0;
	}
	ok(good, "every capability set is empty");
	ok(json_is_true(jget(c, "process.noNewPrivileges")),
	    "noNewPrivileges");
	ok(jint(c, "process.oomScoreAdj") == 1000, "oomScoreAdj 1000");
	ok(rlimit_of(c, "RLIMIT_NOFILE", "hard") == 4096 &&
	    rlimit_of(c, "RLIMIT_NOFILE", "soft") == 4096, "RLIMIT_NOFILE");
	ok(rlimit_of(c, "RLIMIT_NPROC", "hard") == lim.pids &&
	    rlimit_of(c, "RLIMIT_NPROC", "soft") == lim.pids,
	    "RLIMIT_NPROC is the pids limit");
	ok(rlimit_of(c, "RLIMIT_CORE", "hard") == 0, "RLIMIT_CORE 0");
	ok(rlimit_of(c, "RLIMIT_FSIZE", "soft") == (json_int_t)(2 * lim.disk),
	    "RLIMIT_FSIZE is twice the disk limit: the quota speaks first");
	ok(rlimit_of(c, "RLIMIT_MSGQUEUE", "hard") == 0 &&
	    rlimit_of(c, "RLIMIT_MSGQUEUE", "soft") == 0,
	    "RLIMIT_MSGQUEUE 0: root's is the host's, and too small to share");
	ok(rlimit_of(c, "RLIMIT_SIGPENDING", "hard") == 1024 &&
	    rlimit_of(c, "RLIMIT_SIGPENDING", "soft") == 1024,
	    "RLIMIT_SIGPENDING 1024: a sandbox's share of root's");
	ok(strcmp(jstr(c, "root.path"), host.rootfs) == 0 &&
	    json_is_true(jget(c, "root.readonly")), "read-only host rootfs");
	ok(strcmp(jstr(c, "hostname"), "sandbox") == 0, "hostname");

	m = mount_at(c, "/proc");
	ok(m != NULL && strcmp(jstr(m, "type"), "proc") == 0 &&
	    mount_opt(m, "nosuid") && mount_opt(m, "noexec") &&
	    mount_opt(m, "nodev"), "/proc");
	m = mount_at(c, "/dev");
	ok(m != NULL && strcmp(jstr(m, "type"), "tmpfs") == 0 &&
	    mount_opt(m, "nosuid") && mount_opt(m, "mode=755") &&
	    mount_opt(m, "size=64k"), "/dev: a small tmpfs");
	m = mount_at(c, "/dev/pts");
	good = m != NULL && strcmp(jstr(m, "type"), "devpts") == 0 &&
	    mount_opt(m, "newinstance") && mount_opt(m, "ptmxmode=0666") &&
	    mount_opt(m, "mode=0620");
	json_array_foreach(json_object_get(m, "options"), i, v)
		good &= strncmp(json_string_value(v), "gid=", 4) != 0;
	ok(good, "/dev/pts without gid=");
	ok(m != NULL && mount_opt(m, "max=64"),
	    "/dev/pts holds at most 64 ptys of the host's kernel.pty.max");
	m = mount_at(c, "/dev/shm");
	ok(m != NULL && mount_opt(m, "noexec") && mount_opt(m, "mode=1777") &&
	    mount_opt(m, "size=64m") && mount_opt(m, "nr_inodes=4096"),
	    "/dev/shm, with an inode count");
	m = mount_at(c, "/dev/mqueue");
	ok(m != NULL && strcmp(jstr(m, "type"), "mqueue") == 0, "/dev/mqueue");
	m = mount_at(c, "/sys");
	ok(m != NULL && strcmp(jstr(m, "type"), "sysfs") == 0 &&
	    mount_opt(m, "ro") && mount_opt(m, "nosuid") &&
	    mount_opt(m, "noexec") && mount_opt(m, "nodev"), "/sys read-only");
	snprintf(opt, sizeof(opt), "size=%llu", (unsigned long long)lim.disk);
	snprintf(ino, sizeof(ino), "nr_inodes=%llu",
	    (unsigned long long)(lim.disk / 4096 < 1024 ? 1024 :
	    lim.disk / 4096));
	m = mount_at(c, "/tmp");
	ok(m != NULL && strcmp(jstr(m, "type"), "tmpfs") == 0 &&
	    mount_opt(m, "mode=1777") && mount_opt(m, opt) &&
	    mount_opt(m, ino) &&
	    mount_opt(m, "nosuid") && mount_opt(m, "nodev"),
	    "/tmp: tmpfs of the disk limit");
	m = mount_at(c, "/workspace");
	ok(m != NULL && strcmp(jstr(m, "type"), "tmpfs") == 0 &&
	    mount_opt(m, "uid=1000") && mount_opt(m, "gid=1000") &&
	    mount_opt(m, "mode=0755") && mount_opt(m, opt) &&
	    mount_opt(m, ino) && mount_opt(m, "nosuid") &&
	    mount_opt(m, "nodev"), "/workspace: tmpfs owned by 1000");
	m = mount_at(c, SBX_INIT_PATH);
	ok(m != NULL && strcmp(jstr(m, "source"), b.init) == 0 &&
	    mount_opt(m, "bind") && mount_opt(m, "ro") &&
	    mount_opt(m, "nosuid") && mount_opt(m, "nodev"),
	    "sandbox-init bound read-only");
	m = mount_at(c, "/usr");
	ok(m != NULL && strcmp(jstr(m, "source"), "/usr") == 0 &&
	    mount_opt(m, "rbind") && mount_opt(m, "ro") &&
	    mount_opt(m, "nosuid") && mount_opt(m, "nodev"),
	    "/usr bound read-only");
	m = mount_at(c, "/etc");
	ok(m != NULL && strcmp(jstr(m, "source"), host.etc) == 0 &&
	    mount_opt(m, "ro") && mount_opt(m, "noexec") &&
	    mount_opt(m, "nosuid") && mount_opt(m, "nodev"),
	    "/etc bound read-only from the synthetic etc");
	good = json_array_size(json_object_get(c, "mounts")) ==
	    (size_t)(9 + host.nbinds + 1);
	json_array_foreach(json_object_get(c, "mounts"), i, m)
		if (strcmp(jstr(m, "type"), "bind") == 0)
			good &= mount_opt(m, "nosuid") && mount_opt(m, "nodev");
	ok(good, "no other mounts; every bind nosuid, nodev");

	v = jget(c, "linux.uidMappings");
	ok(json_array_size(v) == 1 &&
	    jint(json_array_get(v, 0), "containerID") == 0 &&
	    jint(json_array_get(v, 0), "hostID") == TEST_UID_BASE &&
	    jint(json_array_get(v, 0), "size") == SBX_UID_RANGE,
	    "uid mapping 0 -> uid_base, 65536");
	ok(json_equal(v, jget(c, "linux.gidMappings")),
	    "gid mapping the same");
	v = jget(c, "linux.namespaces");
	good = json_array_size(v) == nitems(nstypes);
	for (i = 0; i < nitems(nstypes); i++) {
		size_t	 j;
		json_t	*n;
		int	 found = 0;

		json_array_foreach(v, j, n)
			if (strcmp(jstr(n, "type"), nstypes[i]) == 0 &&
			    json_object_get(n, "path") == NULL)
				found = 1;
		good &= found;
	}
	ok(good, "all seven namespaces, all new");
	ok(strcmp(jstr(c, "linux.cgroupsPath"), b.cgroup) == 0, "cgroupsPath");
	ok(jint(c, "linux.resources.memory.limit") == (json_int_t)lim.memory,
	    "memory limit");
	ok(jint(c, "linux.resources.memory.swap") == (json_int_t)lim.memory,
	    "swap equals memory");
	ok(json_is_false(jget(c, "linux.resources.memory.disableOOMKiller")),
	    "the OOM killer stays");
	ok(jint(c, "linux.resources.pids.limit") == lim.pids, "pids limit");
	ok(jint(c, "linux.resources.cpu.period") == 100000 &&
	    jint(c, "linux.resources.cpu.quota") == 50000,
	    "0.5 cpus: quota 50000 per 100000");
	good = json_array_size(jget(c, "linux.maskedPaths")) ==
	    nitems(masked);
	for (i = 0; i < nitems(masked); i++)
		good &= jhas(jget(c, "linux.maskedPaths"), masked[i]);
	ok(good, "masked paths as Docker, and kallsyms");
	good = json_array_size(jget(c, "linux.readonlyPaths")) == nitems(ro);
	for (i = 0; i < nitems(ro); i++)
		good &= jhas(jget(c, "linux.readonlyPaths"), ro[i]);
	ok(good, "read-only paths as Docker");
	ok(jget(c, "linux.devices") == NULL &&
	    jget(c, "linux.resources.devices") == NULL,
	    "no devices: runc's defaults");
	ok(json_is_object(jget(c, "linux.seccomp")), "seccomp present");
	json_decref(c);

	b.memsw = 0;
	c = bundle_config(&b, err, sizeof(err));
	ok(c != NULL && jget(c, "linux.resources.memory.swap") == NULL,
	    "no swap limit where the kernel does not account swap");
	json_decref(c);

	b.memsw = 1;
	b.workspace = path("ws");
	c = bundle_config(&b, err, sizeof(err));
	m = mount_at(c, "/workspace");
	ok(m != NULL && strcmp(jstr(m, "type"), "bind") == 0 &&
	    strcmp(jstr(m, "source"), b.workspace) == 0 &&
	    !mount_opt(m, "ro") && mount_opt(m, "nosuid") &&
	    mount_opt(m, "nodev"), "a workspace directory is bound rw");
	json_decref(c);

	bundle_default(&b, path("bundle"));
	b.image = &img_rootfs;
	c = bundle_config(&b, err, sizeof(err));
	good = c != NULL && strcmp(jstr(c, "root.path"), img_rootfs.path) == 0;
	ok(good, "rootfs image: its own root");
	good = mount_at(c, "/etc") == NULL && mount_at(c, "/usr") == NULL;
	for (i = 0; i < 4; i++) {
		static const char *const f[] = {
			"passwd", "group", "hosts", "resolv.conf",
		};
		char	 d[64], s[PATH_MAX + 64];

		snprintf(d, sizeof(d), "/etc/%s", f[i]);
		snprintf(s, sizeof(s), "%s/%s", host.etc, f[i]);
		m = mount_at(c, d);
		good &= m != NULL && strcmp(jstr(m, "source"), s) == 0 &&
		    mount_opt(m, "ro");
	}
	ok(good, "rootfs image: its /etc with our passwd, group, hosts, "
	    "resolv.conf");
	json_decref(c);
}

static void
test_validation(void)
{
	struct limits	 l2;
	struct image_host h2;
	struct image	 i2;
	struct bundle	 b;
	json_t		*c;
	char		 err[256];

#define REFUSED(what, change) do {					\
	bundle_default(&b, path("bundle"));				\
	change;								\
	err[0] = '\0';							\
	c = bundle_config(&b, err, sizeof(err));			\
	ok(c == NULL && err[0] != '\0', "refused: %s (%s)", what, err);	\
	json_decref(c);							\
} while (0)

	REFUSED("no id", b.id = NULL);
	REFUSED("short id", b.id = "0123456789abcdef");
	REFUSED("uppercase id", b.id = "0123456789ABCDEF0123456789abcdef");
	REFUSED("id with a slash", b.id = "0123456789abcdef0123456789abcd/f");
	REFUSED("relative dir", b.dir = "bundle");
	REFUSED("dir with ..", b.dir = "/var/lib/../../etc");
	REFUSED("uid base 0", b.uid_base = 0);
	REFUSED("uid range past 2^32-2", b.uid_base = UINT32_MAX - 65535);
	REFUSED("relative init", b.init = "sandbox-init");
	REFUSED("relative workspace", b.workspace = "ws");
	REFUSED("workspace /", b.workspace = "/");
	REFUSED("cgroup with ..", b.cgroup = "/mcpd/../x");
	REFUSED("cgroup with :", b.cgroup = "system.slice:mcpd:x");
	REFUSED("filter fd 2 (stderr)", b.filter_fd = 2);
	REFUSED("filter fd -1", b.filter_fd = -1);
	REFUSED("filter fd 256", b.filter_fd = 256);
	REFUSED("no limits", b.limits = NULL);
	l2 = lim;
	l2.memory = 0;
	REFUSED("memory 0", b.limits = &l2);
	l2 = lim;
	l2.disk = 0;
	REFUSED("disk 0 (an unlimited tmpfs)", b.limits = &l2);
	REFUSED("no host image", b.host = NULL);
	h2 = host;
	snprintf(h2.binds[0], sizeof(h2.binds[0]), "usr");
	REFUSED("relative host bind", b.host = &h2);
	i2 = img_rootfs;
	snprintf(i2.path, sizeof(i2.path), "rootfs");
	REFUSED("relative rootfs", b.image = &i2);

	bundle_default(&b, path("bundle"));
	b.uid_base = UINT32_MAX - 65536;
	c = bundle_config(&b, err, sizeof(err));
	ok(c != NULL, "the highest uid range is accepted");
	json_decref(c);
#undef REFUSED
}

/* What bundle_write wrote is what bundle_config makes from scratch. */
static int
written_fresh(struct bundle *b, const char *what)
{
	json_t		*c, *back;
	json_error_t	 je;
	char		 err[256];
	int		 same;

	if (bundle_write(b, err, sizeof(err)) == -1) {
		diag("%s: %s", what, err);
		return 0;
	}
	c = bundle_config(b, err, sizeof(err));
	back = json_load_file(path("bundle/config.json"), 0, &je);
	same = c != NULL && back != NULL && json_equal(c, back);
	json_decref(c);
	json_decref(back);
	return same;
}

/*
 * Configurations come from a template per image with each container's
 * own fields set: whatever came before, the result is the one built
 * from scratch.
 */
static void
test_template(void)
{
	struct bundle	 b;
	struct limits	 l2;

	bundle_default(&b, path("bundle"));
	ok(written_fresh(&b, "first"), "template: the first container");
	l2 = lim;
	l2.memory = 64ULL << 20;
	l2.pids = 7;
	l2.cpus = 2500;
	l2.disk = 5ULL << 20;
	b.id = "0123456789abcdef0123456789abcdef";
	b.cgroup = "/mcpd-1234/0123456789abcdef0123456789abcdef";
	b.uid_base = TEST_UID_BASE + 65536 * 3;
	b.limits = &l2;
	ok(written_fresh(&b, "second"), "template: another id, uid range, "
	    "cgroup and limits");
	b.workspace = path("bundle");
	ok(written_fresh(&b, "workspace"), "template: a persistent workspace");
	b.workspace = NULL;
	ok(written_fresh(&b, "tmpfs again"), "template: a tmpfs workspace "
	    "again, with the second's limits");
	bundle_default(&b, path("bundle"));
	ok(written_fresh(&b, "first again"),
	    "template: the first container's fields again");
	b.memsw = 0;
	ok(written_fresh(&b, "no memsw"), "template: without swap accounting");
	b.memsw = 1;
	b.image = &img_rootfs;
	ok(written_fresh(&b, "rootfs"), "template: a rootfs image");
	b.image = &img_host;
	b.limits = &l2;
	ok(written_fresh(&b, "host again"), "template: the host image again");
	b.filter_fd = SBX_FILTER_FD;
	ok(written_fresh(&b, "filter fd"), "template: the compiled filter");
	b.runsc = 1;
	ok(written_fresh(&b, "runsc"), "template: for runsc");
	b.runsc = 0;
	b.filter_fd = 0;
	ok(written_fresh(&b, "profile"), "template: the profile again");
}

static void
test_write(void)
{
	struct bundle	 b;
	struct stat	 st, st2;
	json_t		*c, *back;
	json_error_t	 je;
	char		 err[256];
	char		*l;
	mode_t		 old;

	mkdir(path("bundle"), 0700);
	bundle_default(&b, path("bundle"));
	old = umask(0);
	ok(bundle_write(&b, err, sizeof(err)) == 0, "bundle_write");
	umask(old);
	ok(stat(path("bundle/config.json"), &st) == 0 &&
	    (st.st_mode & 07777) == 0600, "config.json is 0600 (umask 0)");
	c = bundle_config(&b, err, sizeof(err));
	back = json_load_file(path("bundle/config.json"), 0, &je);
	ok(back != NULL && json_equal(c, back), "it reads back the same");
	json_decref(back);
	json_decref(c);
	ok(bundle_write(&b, err, sizeof(err)) == 0 &&
	    stat(path("bundle/config.json"), &st2) == 0 &&
	    st2.st_ino != st.st_ino, "rewritten as a new file, by rename");
	l = listing(path("bundle"));
	ok(strcmp(l, "config.json") == 0, "no temporary file left: %s", l);
	free(l);
	b.dir = path("nonexistent");
	ok(bundle_write(&b, err, sizeof(err)) == -1 && err[0] != '\0',
	    "a missing directory fails: %s", err);
	b.dir = path("bundle");
	b.id = "nothex";
	ok(bundle_write(&b, err, sizeof(err)) == -1, "a bad bundle is not "
	    "written");
	test_template();
}

/* ---- the seccomp profile ---- */

/*
 * What sandboxd's containers get: the profile left out of the
 * configuration, sandbox-init told where the compiled one is, and that
 * program sealed.  Its answers are compared with runc's in containers.
 */
static void
test_filter(void)
{
	struct sock_filter	 insn[4];
	struct bundle		 b;
	struct stat		 st;
	json_t			*c, *v;
	char			 err[256];
	int			 fd, seals;

	bundle_default(&b, path("bundle"));
	b.filter_fd = SBX_FILTER_FD;
	c = bundle_config(&b, err, sizeof(err));
	ok(c != NULL, "a configuration with the filter passed by fd");
	if (c != NULL) {
		v = jget(c, "process.args");
		ok(json_array_size(v) == 3 && strcmp(json_string_value(
		    json_array_get(v, 0)), SBX_INIT_PATH) == 0 &&
		    strcmp(json_string_value(json_array_get(v, 1)), "-s") ==
		    0 && atoi(json_string_value(json_array_get(v, 2))) ==
		    SBX_FILTER_FD, "args: sandbox-init -s %d", SBX_FILTER_FD);
		ok(jget(c, "linux.seccomp") == NULL,
		    "no profile for runc to compile");
		ok(json_is_true(jget(c, "process.noNewPrivileges")),
		    "noNewPrivileges still set");
		json_decref(c);
	}
	/* runsc: the socket and the filter as stdin and stdout. */
	b.runsc = 1;
	c = bundle_config(&b, err, sizeof(err));
	ok(c != NULL, "a configuration for runsc");
	if (c != NULL) {
		v = jget(c, "process.args");
		ok(json_array_size(v) == 5 && strcmp(json_string_value(
		    json_array_get(v, 1)), "-c") == 0 && atoi(
		    json_string_value(json_array_get(v, 2))) ==
		    SBX_RUNSC_CTL_FD && strcmp(json_string_value(
		    json_array_get(v, 3)), "-s") == 0 && atoi(
		    json_string_value(json_array_get(v, 4))) ==
		    SBX_RUNSC_FILTER_FD, "runsc: args: sandbox-init -c %d -s %d",
		    SBX_RUNSC_CTL_FD, SBX_RUNSC_FILTER_FD);
		ok(json_integer_value(jget(c, "linux.resources.pids.limit")) ==
		    (json_int_t)lim.pids + BUNDLE_RUNSC_PIDS &&
		    json_integer_value(json_object_get(json_array_get(jget(c,
		    "process.rlimits"), 1), "hard")) == (json_int_t)lim.pids,
		    "runsc: the cgroup's pids limit leaves room for gVisor's "
		    "own; RLIMIT_NPROC is the sandbox's");
		ok(json_integer_value(jget(c, "process.oomScoreAdj")) == 0,
		    "runsc: gVisor's kernel is no likelier an OOM victim than "
		    "its stubs");
		json_decref(c);
	}
	b.filter_fd = 0;
	ok(bundle_config(&b, err, sizeof(err)) == NULL &&
	    strstr(err, "runsc needs the filter fd") != NULL,
	    "runsc: refused without the filter (%s)", err);
	b.runsc = 0;

	fd = bundle_filter(err, sizeof(err));
	ok(fd != -1, "bundle_filter compiles the profile%s%s",
	    fd == -1 ? ": " : "", fd == -1 ? err : "");
	if (fd == -1)
		return;
	seals = fcntl(fd, F_GET_SEALS);
	ok(seals != -1 && (seals & (F_SEAL_WRITE | F_SEAL_GROW |
	    F_SEAL_SHRINK | F_SEAL_SEAL)) == (F_SEAL_WRITE | F_SEAL_GROW |
	    F_SEAL_SHRINK | F_SEAL_SEAL), "sealed against any change (%#x)",
	    seals);
	ok(write(fd, "x", 1) == -1 && errno == EPERM, "a write is refused");
	ok((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "close-on-exec in sandboxd");
	ok(fstat(fd, &st) == 0 && st.st_size > 0 &&
	    st.st_size % (off_t)sizeof(struct sock_filter) == 0 &&
	    st.st_size / (off_t)sizeof(struct sock_filter) <= BPF_MAXINSNS,
	    "a whole BPF program (%lld instructions)",
	    (long long)st.st_size / (long long)sizeof(struct sock_filter));
	/* The ENOSYS prologue first: arch x86_64, then nr above the last. */
	if (pread(fd, insn, sizeof(insn), 0) != (ssize_t)sizeof(insn))
		memset(insn, 0, sizeof(insn));
	ok(insn[0].k == offsetof(struct seccomp_data, arch) &&
	    insn[1].k == AUDIT_ARCH_X86_64 &&
	    insn[2].k == offsetof(struct seccomp_data, nr) &&
	    insn[3].k >= SYS_landlock_restrict_self && insn[3].k < 0x40000000,
	    "it starts with the ENOSYS prologue for calls newer than the "
	    "profile (above %u)", insn[3].k);
	close(fd);
}

static void
test_seccomp(void)
{
	/* Refused, whatever the arguments. */
	static const char *const never[] = {
		"mount", "umount2", "pivot_root", "move_mount", "open_tree",
		"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
		"unshare", "setns", "ptrace", "process_vm_readv",
		"process_vm_writev", "kcmp", "pidfd_getfd", "keyctl",
		"add_key", "request_key", "bpf", "perf_event_open",
		"userfaultfd", "io_uring_setup", "io_uring_enter",
		"io_uring_register", "io_setup", "io_submit", "io_getevents",
		"io_pgetevents", "io_cancel", "io_destroy", "inotify_init",
		"inotify_init1", "inotify_add_watch", "inotify_rm_watch",
		"kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module",
		"open_by_handle_at", "name_to_handle_at", "clock_settime",
		"clock_adjtime", "settimeofday", "adjtimex", "stime", "acct",
		"swapon", "swapoff", "reboot", "syslog", "quotactl",
		"vhangup", "iopl", "ioperm", "lookup_dcookie", "uselib",
		"ustat", "sysfs", "_sysctl", "fanotify_init", "mbind",
		"set_mempolicy", "migrate_pages", "move_pages", "chroot",
		"sethostname", "setdomainname", "modify_ldt", "clone3",
		"process_madvise", "quotactl_fd",
	};
	/* Allowed without condition. */
	static const char *const need[] = {
		"openat2", "close_range", "rseq", "statx", "faccessat2",
		"epoll_pwait2", "pidfd_open", "pidfd_send_signal", "wait4",
		"waitid", "prctl", "setsid", "getrandom", "memfd_create",
		"copy_file_range", "sendfile", "splice", "fallocate",
		"timerfd_create", "timerfd_settime", "timerfd_gettime",
		"eventfd2", "signalfd4", "sched_getaffinity",
		"sched_setaffinity",
		"sched_yield", "prlimit64", "set_robust_list",
		"get_robust_list", "membarrier", "madvise", "mprotect",
		"pkey_alloc", "pkey_free", "pkey_mprotect", "arch_prctl",
		"futex", "futex_waitv", "ioctl", "execve", "exit_group",
		"rt_sigreturn", "mmap", "read", "write", "openat", "close",
		"newfstatat", "getdents64", "fork", "vfork", "kill",
		"recvmsg", "sendmsg", "connect", "bind", "listen", "accept4",
	};
	static const uint64_t persona[] = {
		0, 8, 0x20000, 0x20008, 0xffffffff,
	};
	json_t		*sc, *r, *n;
	uint64_t	 vals[16];
	const char	*op = "";
	size_t		 i, j, k, nv;
	int		 good, nr, unknown = 0, total = 0;

	sc = bundle_seccomp();
	ok(sc != NULL, "bundle_seccomp");
	if (sc == NULL)
		return;
	ok(strcmp(jstr(sc, "defaultAction"), "SCMP_ACT_ERRNO") == 0 &&
	    jint(sc, "defaultErrnoRet") == 1, "default: EPERM");
	r = json_object_get(sc, "architectures");
	ok(json_array_size(r) == 1 && jhas(r, "SCMP_ARCH_X86_64"),
	    "x86_64 only: no i386, no x32");
	r = json_object_get(sc, "flags");
	ok(json_is_array(r) && json_array_size(r) == 0,
	    "flags present and empty");

	good = 1;
	for (i = 0; i < nitems(never); i++)
		if (sc_rule(sc, never[i]) == 1 || sc_rule(sc, never[i]) == 2) {
			diag("%s is allowed", never[i]);
			good = 0;
		}
	ok(good, "%zu dangerous calls in no allow rule", nitems(never));
	good = 1;
	for (i = 0; i < nitems(need); i++)
		if (sc_rule(sc, need[i]) != 1) {
			diag("%s is not allowed", need[i]);
			good = 0;
		}
	ok(good, "%zu calls runtimes need are allowed", nitems(need));

	nv = sc_conds(sc, "clone", vals, nitems(vals), &op);
	ok(sc_rule(sc, "clone") == 2 && nv == 1 &&
	    strcmp(op, "SCMP_CMP_MASKED_EQ") == 0 && vals[0] == 0x7E020000,
	    "clone: only without namespace flags (mask %#llx)",
	    (unsigned long long)vals[0]);
	good = 0;
	json_array_foreach(json_object_get(sc, "syscalls"), i, r)
		if (jhas(json_object_get(r, "names"), "clone"))
			good = jint(json_array_get(json_object_get(r, "args"),
			    0), "valueTwo") == 0 && jint(json_array_get(
			    json_object_get(r, "args"), 0), "index") == 0;
	ok(good, "clone: arg 0 & mask == 0");
	good = 0;
	json_array_foreach(json_object_get(sc, "syscalls"), i, r)
		if (jhas(json_object_get(r, "names"), "clone3"))
			good = strcmp(jstr(r, "action"), "SCMP_ACT_ERRNO") ==
			    0 && jint(r, "errnoRet") == 38;
	ok(good, "clone3: ENOSYS, so that libc falls back to clone");

	nv = sc_conds(sc, "socket", vals, nitems(vals), &op);
	good = sc_rule(sc, "socket") == 2 && nv == 4 &&
	    strcmp(op, "SCMP_CMP_EQ") == 0;
	for (i = 0; i < nv && i < nitems(vals); i++)
		good &= vals[i] == 1 || vals[i] == 2 || vals[i] == 10 ||
		    vals[i] == 16;
	ok(good, "socket: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK only");
	good = 1;
	for (i = 0; i < nv && i < nitems(vals); i++)
		good &= vals[i] != 15 && vals[i] != 17 && vals[i] != 38 &&
		    vals[i] != 40;
	ok(good, "socket: never AF_KEY, AF_PACKET, AF_ALG, AF_VSOCK");
	nv = sc_conds(sc, "socketpair", vals, nitems(vals), &op);
	ok(sc_rule(sc, "socketpair") == 2 && nv == 1 && vals[0] == 1,
	    "socketpair: AF_UNIX only");
	nv = sc_conds(sc, "personality", vals, nitems(vals), &op);
	good = nv == nitems(persona) && sc_rule(sc, "personality") == 2;
	for (i = 0; good && i < nv; i++) {
		for (j = 0, k = 0; j < nitems(persona); j++)
			k += vals[i] == persona[j];
		good &= k == 1;
	}
	ok(good, "personality: 0, 8, 0x20000, 0x20008, 0xffffffff only");

	/* runc or-s conditions on one argument: one condition per rule. */
	good = 1;
	json_array_foreach(json_object_get(sc, "syscalls"), i, r)
		good &= json_array_size(json_object_get(r, "args")) <= 1;
	ok(good, "every conditional rule has a single condition");

	good = 1;
	json_array_foreach(json_object_get(sc, "syscalls"), i, r) {
		json_array_foreach(json_object_get(r, "names"), j, n) {
			total++;
			nr = seccomp_syscall_resolve_name_arch(
			    SCMP_ARCH_X86_64, json_string_value(n));
			if (nr == __NR_SCMP_ERROR) {
				diag("%s: unknown to libseccomp %u.%u.%u",
				    json_string_value(n),
				    seccomp_version()->major,
				    seccomp_version()->minor,
				    seccomp_version()->micro);
				unknown++;
			}
		}
	}
	ok(unknown <= 3, "%d names, %d unknown to this libseccomp", total,
	    unknown);
	good = 1;
	for (i = 0; i < nitems(need); i++)
		good &= seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64,
		    need[i]) != __NR_SCMP_ERROR;
	ok(good, "every needed call is known to libseccomp");
	{
		json_t	*all = json_array(), *names;
		int	 dup = 0;

		names = json_object_get(json_array_get(
		    json_object_get(sc, "syscalls"), 0), "names");
		json_array_foreach(names, i, n) {
			if (jhas(all, json_string_value(n))) {
				diag("%s twice", json_string_value(n));
				dup++;
			}
			json_array_append(all, n);
		}
		json_decref(all);
		ok(dup == 0, "no name twice in the allowlist");
	}
	json_decref(sc);
}

/* ---- real containers ---- */

static char	 ws[128];		/* workspace with the probe */
static char	 probe[PATH_MAX];

static void
new_id(char id[33])
{
	uint8_t	 r[16];
	size_t	 i;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		abort();
	for (i = 0; i < sizeof(r); i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
}

static char *
runc_list(void)
{
	char	*argv[] = { (char *)RUNC, (char *)"--root", runc_root,
		    (char *)"list", (char *)"-q", NULL };
	char	*out;

	if (run(argv, &out, 30) != 0) {
		free(out);
		return xstrdup("(runc list failed)");
	}
	return out;
}

/* The test's groups of a container (id) or all (NULL), removed or not. */
static int
cg_left(const char *id, int remove)
{
	const char	*top[] = { "/sys/fs/cgroup/*/", "/sys/fs/cgroup/" };
	char		 pat[PATH_MAX];
	glob_t		 g;
	size_t		 i, j;
	int		 n = 0;

	for (i = 0; i < 2; i++) {
		snprintf(pat, sizeof(pat), "%s" TEST_CGROUP "%s%s", top[i],
		    id != NULL ? "/" : "", id != NULL ? id : "");
		if (glob(pat, GLOB_ONLYDIR, NULL, &g) == 0)
			for (j = 0; j < g.gl_pathc; j++, n++)
				if (remove)
					rmdir(g.gl_pathv[j]);
		globfree(&g);
	}
	return n;
}

/* Delete the container and check that nothing of it is left. */
static void
ctr_gone(const char *name, const char *id)
{
	char	*argv[] = { (char *)RUNC, (char *)"--root", runc_root,
		    (char *)"delete", (char *)"-f", (char *)id, NULL };
	char	*l;
	int	 left;

	run(argv, NULL, 30);
	left = cg_left(id, 0);
	l = runc_list();
	ok(strcmp(l, "") == 0 && left == 0,
	    "%s: no container and no cgroup left", name);
	if (left)
		diag("%d cgroup directories left for %s", left, id);
	free(l);
}

/* Write a bundle running args; its id in id. */
static int
ctr_bundle(struct bundle *b, const char *const *args, char id[33],
    char *dir, size_t dirlen)
{
	static char	 cg[64];
	json_t		*c, *a;
	char		 err[256];
	size_t		 i;
	int		 r;

	new_id(id);
	snprintf(cg, sizeof(cg), "/" TEST_CGROUP "/%s", id);
	snprintf(dir, dirlen, "%s/b-%s", tmp, id);
	mkdir(dir, 0700);
	b->id = id;
	b->dir = dir;
	b->cgroup = cg;
	if ((c = bundle_config(b, err, sizeof(err))) == NULL) {
		diag("bundle_config: %s", err);
		return -1;
	}
	a = json_array();
	for (i = 0; args[i] != NULL; i++)
		json_array_append_new(a, json_string(args[i]));
	json_object_set_new(json_object_get(c, "process"), "args", a);
	snprintf(err, sizeof(err), "%s/config.json", dir);
	r = json_dump_file(c, err, JSON_INDENT(1));
	json_decref(c);
	return r;
}

/* runc run args in a container made from b; stdout in *out. */
static int
ctr_run(const char *name, struct bundle *b, const char *const *args,
    char **out)
{
	char	 id[33], dir[PATH_MAX];
	char	*argv[] = { (char *)RUNC, (char *)"--root", runc_root,
		    (char *)"run", (char *)"--bundle", dir, id, NULL };
	int	 st;

	*out = NULL;
	if (ctr_bundle(b, args, id, dir, sizeof(dir)) == -1) {
		ok(0, "%s: bundle", name);
		return -1;
	}
	st = run(argv, out, 120);
	if (st != 0)
		diag("%s: runc status %#x", name, st);
	ctr_gone(name, id);
	rm_rf(dir);
	return st;
}

static void
test_runc_basics(void)
{
	static const char *const py[] = {
		"/usr/bin/python3", "-c",
		"import sys; print('python', sys.version_info[0])", NULL,
	};
	static const char *const sh[] = { "/bin/sh", "-c",
	    "echo uid $(id -u); echo gid $(id -g); echo user $(id -un);"
	    "echo home $HOME; echo pwd $(pwd);"
	    "echo hostname $(cat /proc/sys/kernel/hostname);"
	    "if touch /rootfile 2>/dev/null; then echo root rw; "
	    "else echo root ro; fi;"
	    "if touch /usr/probe 2>/dev/null; then echo usr rw; "
	    "else echo usr ro; fi;"
	    "if touch /etc/probe 2>/dev/null; then echo etc rw; "
	    "else echo etc ro; fi;"
	    "echo x > /tmp/f && echo tmp rw;"
	    "echo x > /workspace/f && echo workspace rw;"
	    "echo tmpsize $(df -B1 --output=size /tmp | tail -n 1);"
	    "for f in /proc/kcore /proc/keys /proc/kallsyms /proc/timer_list;"
	    "do test -e $f && echo size$f $(wc -c < $f); done;"
	    "awk '$5 ~ /^\\/proc\\/(kcore|keys|kallsyms|timer_list)$/ "
	    "{ print \"masked\" $5, \"yes\" }' /proc/self/mountinfo;"
	    "awk '$5 == \"/proc/sys\" { split($6, o, \",\"); "
	    "print \"procsys\", o[1] }' /proc/self/mountinfo;"
	    "awk '$5 == \"/\" { split($6, o, \",\"); "
	    "print \"rootmount\", o[1] }' /proc/self/mountinfo;"
	    "sed -n 's/^\\(CapEff\\|CapPrm\\|CapBnd\\|CapAmb\\|NoNewPrivs\\|"
	    "Seccomp\\):[[:space:]]*/\\1 /p' /proc/self/status;"
	    "echo net $(ls /sys/class/net);"
	    "echo netdev $(tail -n +3 /proc/net/dev | cut -d: -f1);"
	    "awk '/^Max open files/ { print \"nofile\", $4 } "
	    "/^Max processes/ { print \"nproc\", $3 } "
	    "/^Max core/ { print \"core\", $5 }' /proc/self/limits;"
	    "test -x /.mcpd/sandbox-init && echo init ok;"
	    "echo oom $(cat /proc/self/oom_score_adj)", NULL,
	};
	static const char *const masked[] = {
		"/proc/kcore", "/proc/keys", "/proc/kallsyms",
		"/proc/timer_list",
	};
	struct bundle	 b;
	char		 want[64];
	char		*out;
	size_t		 i;
	int		 st;

	bundle_default(&b, NULL);
	b.init = probe;
	st = ctr_run("python", &b, py, &out);
	ok(st == 0 && line_is(out, "python", "3"), "python3 -c print runs");
	free(out);

	st = ctr_run("sh", &b, sh, &out);
	ok(st == 0 && out != NULL, "sh runs");
	if (out == NULL)
		return;
	diag_lines(out);
	ok(line_is(out, "uid", "1000") && line_is(out, "gid", "1000") &&
	    line_is(out, "user", "sandbox"), "runs as sandbox, 1000:1000");
	ok(line_is(out, "home", "/workspace") &&
	    line_is(out, "pwd", "/workspace"), "at home in /workspace");
	ok(line_is(out, "hostname", "sandbox"), "hostname sandbox");
	ok(line_is(out, "root", "ro") && line_is(out, "rootmount", "ro"),
	    "the root filesystem is read-only");
	ok(line_is(out, "usr", "ro") && line_is(out, "etc", "ro"),
	    "/usr and /etc are read-only");
	ok(line_is(out, "tmp", "rw") && line_is(out, "workspace", "rw"),
	    "/tmp and /workspace are writable");
	snprintf(want, sizeof(want), "%llu", (unsigned long long)lim.disk);
	ok(line_is(out, "tmpsize", want), "/tmp is the disk limit in size");
	for (i = 0; i < nitems(masked); i++) {
		char	 k[64];

		if (access(masked[i], F_OK) == -1) {
			diag("%s: not on this kernel", masked[i]);
			continue;
		}
		snprintf(k, sizeof(k), "masked%s", masked[i]);
		snprintf(want, sizeof(want), "size%s", masked[i]);
		ok(line_is(out, k, "yes") && line_is(out, want, "0"),
		    "%s masked: /dev/null over it", masked[i]);
	}
	ok(line_is(out, "procsys", "ro"), "/proc/sys read-only");
	ok(line_is(out, "CapEff", "0000000000000000") &&
	    line_is(out, "CapPrm", "0000000000000000") &&
	    line_is(out, "CapBnd", "0000000000000000") &&
	    line_is(out, "CapAmb", "0000000000000000"),
	    "no capabilities, not even in the bounding set");
	ok(line_is(out, "NoNewPrivs", "1"), "NoNewPrivs 1");
	ok(line_is(out, "Seccomp", "2"), "Seccomp 2 (filter)");
	ok(line_is(out, "net", "lo") && line_is(out, "netdev", "lo"),
	    "only the lo interface");
	snprintf(want, sizeof(want), "%u", lim.pids);
	ok(line_is(out, "nofile", "4096") && line_is(out, "nproc", want) &&
	    line_is(out, "core", "0"), "rlimits");
	ok(line_is(out, "init", "ok"), "sandbox-init bound in place");
	ok(line_is(out, "oom", "1000"), "oom_score_adj 1000");
	free(out);
}

static void
test_runc_memory(void)
{
	static const char *const py[] = {
		"/usr/bin/python3", "-c",
		"b = b'x' * (128 << 20); print('survived', len(b))", NULL,
	};
	struct limits	 small = lim;
	struct bundle	 b;
	char		*out;
	int		 st;

	small.memory = 48ULL << 20;
	bundle_default(&b, NULL);
	b.init = probe;
	b.limits = &small;
	st = ctr_run("memory", &b, py, &out);
	ok(st != 0 && (out == NULL || strstr(out, "survived") == NULL),
	    "an allocation above the memory limit is killed (status %#x)",
	    st);
	free(out);
}

static void
test_runc_runtimes(void)
{
	static const struct {
		const char	*bin;
		const char	*cmd;
		const char	*want;
	} rt[] = {
		{ "/usr/bin/node", "node -e 'console.log(\"node\", 6*7)'",
		    "node 42" },
		{ "/usr/bin/perl", "perl -e 'print \"perl \", 6*7, \"\\n\"'",
		    "perl 42" },
		{ "/usr/bin/cc", "echo 'int main(void) { return 42; }' > "
		    "/tmp/a.c && cc -O1 -o /tmp/a /tmp/a.c; /tmp/a; echo cc $?",
		    "cc 42" },
		{ "/usr/bin/java", "java -Xshare:auto -XX:+UseSerialGC "
		    "-XX:TieredStopAtLevel=1 -version 2>&1 | head -n 1 | "
		    "sed 's/^/java /'", NULL },
		{ "/usr/bin/ruby", "ruby -e 'puts \"ruby #{6*7}\"'",
		    "ruby 42" },
		{ "/usr/bin/php", "php -r 'echo \"php \", 6*7, \"\\n\";'",
		    "php 42" },
	};
	struct limits	 big = lim;
	struct bundle	 b;
	char		 key[16];
	char		*out;
	const char	*args[4] = { "/bin/sh", "-c", NULL, NULL };
	size_t		 i;
	int		 st;

	big.memory = 1ULL << 30;
	big.pids = 256;
	bundle_default(&b, NULL);
	b.init = probe;
	b.limits = &big;
	for (i = 0; i < nitems(rt); i++) {
		if (access(rt[i].bin, X_OK) == -1)
			continue;
		args[2] = rt[i].cmd;
		st = ctr_run(strrchr(rt[i].bin, '/') + 1, &b, args, &out);
		snprintf(key, sizeof(key), "%s", strrchr(rt[i].bin, '/') + 1);
		ok(st == 0 && out != NULL && (rt[i].want != NULL ?
		    strstr(out, rt[i].want) != NULL :
		    strncmp(out, "java ", 5) == 0), "%s works: %s", key,
		    out != NULL ? strtok(out, "\n") : "");
		free(out);
	}
}

/*
 * The static probe: every dangerous call refused, every needed one not.
 * how says who loads the filter: runc from the configuration, or the
 * probe itself from bundle_filter()'s program, with sandbox-init's code.
 * The output, kept in *outp, is checked either way.
 */
static void
test_runc_probe(const char *how, int compiled, char **outp)
{
	static const char *const allow[] = {
		"fork", "clone", "pthread_create", "posix_spawn", "setsid",
		"waitid", "socket-inet", "socket-inet6", "socket-unix",
		"socket-netlink", "socketpair", "loopback-tcp", "openat2",
		"close_range", "statx", "faccessat2", "epoll_pwait2",
		"pidfd_open", "pidfd_send_signal", "getrandom", "memfd_create",
		"fallocate", "copy_file_range", "sendfile", "splice",
		"timerfd_create", "eventfd2", "signalfd4",
		"sched_getaffinity", "sched_yield",
		"prlimit64", "get_robust_list", "membarrier", "mprotect",
		"madvise", "pkey_alloc", "arch_prctl", "futex", "futex_waitv",
		"prctl", "rseq", "personality-query", "personality-linux32",
		"setfsuid", "ioctl",
	};
	static const char *const eperm[] = {
		"mount", "umount2", "pivot_root", "chroot", "open_tree",
		"move_mount", "fsopen", "fspick", "fsconfig", "fsmount",
		"mount_setattr", "unshare-user", "unshare-mount", "setns",
		"clone-newns", "clone-newuser", "clone-newnet", "ptrace",
		"process_vm_readv", "process_vm_writev", "kcmp",
		"pidfd_getfd", "keyctl", "add_key", "request_key", "bpf",
		"perf_event_open", "userfaultfd", "io_uring_setup",
		"io_uring_enter", "io_uring_register", "io_setup",
		"io_submit", "io_getevents", "io_destroy", "inotify_init",
		"inotify_init1", "inotify_add_watch", "kexec_load",
		"kexec_file_load", "init_module", "finit_module",
		"delete_module", "name_to_handle_at", "open_by_handle_at",
		"personality-addr-no-randomize",
		"personality-read-implies-exec", "personality-mmap-page-zero",
		"clock_settime", "settimeofday", "adjtimex", "clock_adjtime",
		"socket-packet", "socket-alg", "socket-vsock", "socket-key",
		"socket-bluetooth", "socketpair-packet", "acct", "reboot",
		"swapon", "swapoff", "syslog", "quotactl", "vhangup", "iopl",
		"ioperm", "uselib", "ustat", "sysfs", "lookup_dcookie",
		"fanotify_init", "mbind", "set_mempolicy", "migrate_pages",
		"move_pages", "sethostname",
	};
	const char	*args[] = { "/workspace/probe", NULL, NULL, NULL };
	struct bundle	 b;
	char		 buf[128];
	char		*out;
	const char	*v;
	size_t		 i;
	int		 st, good;

	*outp = NULL;
	bundle_default(&b, NULL);
	b.init = probe;
	b.workspace = ws;
	if (compiled) {
		/* No profile in the configuration: the probe loads it. */
		b.filter_fd = SBX_FILTER_FD;
		args[1] = "-f";
		args[2] = "/workspace/filter.bpf";
	}
	st = ctr_run("probe", &b, args, &out);
	ok(st == 0 && out != NULL && strstr(out, "\ndone\n") != NULL,
	    "%s: the static probe ran to the end", how);
	if (out == NULL)
		return;
	*outp = out;
	for (i = 0; i < nitems(allow); i++) {
		v = line_value(out, allow[i], buf, sizeof(buf));
		ok(v != NULL && strcmp(v, "ok") == 0, "%s: allowed: %s (%s)",
		    how, allow[i], v != NULL ? v : "no answer");
	}
	good = 1;
	for (i = 0; i < nitems(eperm); i++) {
		v = line_value(out, eperm[i], buf, sizeof(buf));
		if (v == NULL || strcmp(v, "EPERM") != 0) {
			diag("%s: %s, not EPERM", eperm[i],
			    v != NULL ? v : "no answer");
			good = 0;
		}
	}
	ok(good, "%s: %zu dangerous calls all refused with EPERM", how,
	    nitems(eperm));
	for (i = 0; i < nitems(eperm); i++)
		if (strncmp(eperm[i], "socket-", 7) == 0 ||
		    strncmp(eperm[i], "clone-", 6) == 0 ||
		    strncmp(eperm[i], "unshare", 7) == 0 ||
		    strcmp(eperm[i], "io_uring_setup") == 0 ||
		    strcmp(eperm[i], "bpf") == 0 ||
		    strcmp(eperm[i], "userfaultfd") == 0 ||
		    strcmp(eperm[i], "keyctl") == 0 ||
		    strcmp(eperm[i], "ptrace") == 0 ||
		    strcmp(eperm[i], "personality-addr-no-randomize") == 0) {
			v = line_value(out, eperm[i], buf, sizeof(buf));
			ok(v != NULL && strcmp(v, "EPERM") == 0,
			    "%s: refused: %s", how, eperm[i]);
		}
	ok(line_is(out, "clone3", "ENOSYS"), "%s: clone3 answers ENOSYS", how);
	ok(line_is(out, "newer-than-profile", "ENOSYS"),
	    "%s: a call newer than the profile answers ENOSYS", how);
	v = line_value(out, "int80", buf, sizeof(buf));
	ok(v != NULL && (strcmp(v, "killed-SYS") == 0 ||
	    (line_value(out, "int80-returned", buf, sizeof(buf)) != NULL &&
	    atol(buf) < 0)), "%s: int $0x80 getpid is refused or killed: %s",
	    how, v != NULL ? v : "no answer");
	v = line_value(out, "x32", buf, sizeof(buf));
	ok(v != NULL && (strcmp(v, "killed-SYS") == 0 ||
	    (line_value(out, "x32-returned", buf, sizeof(buf)) != NULL &&
	    atol(buf) < 0)), "%s: x32 getpid is refused or killed: %s",
	    how, v != NULL ? v : "no answer");
}

/*
 * The filter sandboxd's containers get, compiled once by bundle_filter()
 * and loaded by sandbox-init, against runc's compilation of the profile
 * in the configuration: both probed, and answering alike.
 */
static void
test_runc_filter(void)
{
	char	 path[PATH_MAX], buf[65536];
	char	*byrunc, *bysbx;
	ssize_t	 n;
	int	 fd, out;

	test_runc_probe("runc's filter", 0, &byrunc);
	if ((fd = bundle_filter(buf, sizeof(buf))) == -1) {
		ok(0, "bundle_filter: %s", buf);
		free(byrunc);
		return;
	}
	snprintf(path, sizeof(path), "%s/filter.bpf", ws);
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n <= 0 || (out = open(path, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644)) == -1) {
		ok(0, "cannot copy the compiled filter");
		free(byrunc);
		return;
	}
	ok(write(out, buf, (size_t)n) == n && close(out) == 0,
	    "the compiled filter copied into the workspace");
	test_runc_probe("compiled filter", 1, &bysbx);
	ok(byrunc != NULL && bysbx != NULL && strcmp(byrunc, bysbx) == 0,
	    "the compiled filter answers every probe as runc's does");
	if (byrunc != NULL && bysbx != NULL && strcmp(byrunc, bysbx) != 0) {
		diag("runc's:");
		diag_lines(byrunc);
		diag("compiled:");
		diag_lines(bysbx);
	}
	free(byrunc);
	free(bysbx);
}

/* A rootfs image: completed by image_rootfs_check, our etc files in it. */
static void
test_runc_rootfs(void)
{
	const char	*args[] = { "/probe", "cat", "/etc/passwd",
			    "/etc/resolv.conf", "/etc/hostname", NULL };
	struct bundle	 b;
	char		 cmd[2 * PATH_MAX + 16], err[256];
	char		*out;
	int		 st;

	rootfs_make("rootimg");
	snprintf(cmd, sizeof(cmd), "%s/rootimg/probe", tmp);
	{
		char	*argv[] = { (char *)"/bin/cp", probe, cmd, NULL };

		run(argv, NULL, 30);
	}
	mkdir(path("rootimg/etc"), 0755);
	write_file(path("rootimg/etc/hostname"), "from-the-image\n", 0644);
	ok(image_rootfs_check(img_rootfs.path, err, sizeof(err)) == 0,
	    "rootfs image completed");
	bundle_default(&b, NULL);
	b.init = probe;
	b.image = &img_rootfs;
	st = ctr_run("rootfs", &b, args, &out);
	ok(st == 0 && out != NULL &&
	    strstr(out, "sandbox:x:1000:1000:") != NULL &&
	    strstr(out, "nameserver 10.0.2.3") != NULL &&
	    strstr(out, "from-the-image") != NULL,
	    "a rootfs image runs, its /etc with our passwd and resolv.conf");
	free(out);
}

/* A number from the cgroup file of a container (ctrl NULL: v2), or -1. */
static long long
read_cg(const char *ctrl, const char *id, const char *file)
{
	char	 p[PATH_MAX];
	char	*s;
	long long v;

	snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s" TEST_CGROUP "/%s/%s",
	    ctrl != NULL ? ctrl : "", ctrl != NULL ? "/" : "", id, file);
	if ((s = read_file(p)) == NULL)
		return -1;
	v = atoll(s);
	free(s);
	return v;
}

/*
 * A detached container: its cgroup limits as the kernel has them, and its
 * image tree surviving a rebuild of the host image while it runs.
 */
static void
test_runc_in_use(void)
{
	const char	*args[] = { "/bin/sleep", "60", NULL };
	struct image_host h2;
	struct bundle	 b;
	char		 id[33], dir[PATH_MAX], dir2[PATH_MAX], err[256];
	char		*out, *l;
	char		*argv[] = { (char *)RUNC, (char *)"--root", runc_root,
			    (char *)"run", (char *)"-d", (char *)"--bundle",
			    dir, id, NULL };
	char		*exec[] = { (char *)RUNC, (char *)"--root", runc_root,
			    (char *)"exec", id, (char *)"/bin/sh", (char *)"-c",
			    (char *)"test -x /usr/bin/python3 && "
			    "grep -c ^sandbox: /etc/passwd", NULL };
	int		 st;

	bundle_default(&b, NULL);
	b.init = probe;
	if (ctr_bundle(&b, args, id, dir, sizeof(dir)) == -1) {
		ok(0, "detached: bundle");
		return;
	}
	st = run(argv, NULL, 60);
	ok(st == 0, "runc run -d");
	if (access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes",
	    F_OK) == 0) {
		ok(read_cg("memory", id, "memory.limit_in_bytes") ==
		    (long long)lim.memory && read_cg("memory", id,
		    "memory.memsw.limit_in_bytes") == (long long)lim.memory,
		    "cgroup: memory and memory+swap limits equal");
		ok(read_cg("pids", id, "pids.max") == lim.pids,
		    "cgroup: pids.max");
		ok(read_cg("cpu", id, "cpu.cfs_quota_us") == 50000 &&
		    read_cg("cpu", id, "cpu.cfs_period_us") == 100000,
		    "cgroup: cpu quota 50000 per 100000");
	} else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		ok(read_cg(NULL, id, "memory.max") == (long long)lim.memory,
		    "cgroup v2: memory.max");
		/* atoll() would read "max" as 0 too. */
		snprintf(dir2, sizeof(dir2), "/sys/fs/cgroup/" TEST_CGROUP
		    "/%s/memory.swap.max", id);
		if ((out = read_file(dir2)) != NULL)
			ok(strcmp(out, "0\n") == 0,
			    "cgroup v2: memory.swap.max 0 (%s)", out);
		free(out);
		ok(read_cg(NULL, id, "pids.max") == lim.pids,
		    "cgroup v2: pids.max");
		/* "50000 100000": the quota, then the period. */
		ok(read_cg(NULL, id, "cpu.max") == 50000,
		    "cgroup v2: cpu quota 50000");
	}
	ok(image_host_prepare(path("images/host"), &h2, err,
	    sizeof(err)) == 0, "host image rebuilt under a running container");
	l = listing(path("images/host"));
	ok(strstr(l, ".old-") != NULL, "the tree in use is kept: %s", l);
	free(l);
	st = run(exec, &out, 60);
	ok(st == 0 && out != NULL && strcmp(out, "1\n") == 0,
	    "the running container still has its /usr and /etc");
	free(out);
	ctr_gone("detached", id);
	rm_rf(dir);
	ok(image_host_prepare(path("images/host"), &h2, err,
	    sizeof(err)) == 0, "rebuilt again");
	l = listing(path("images/host"));
	ok(strcmp(l, "etc rootfs") == 0, "the old tree went with its "
	    "container: %s", l);
	free(l);
}

static int
probe_build(void)
{
	const char	*top = getenv("TOP");
	char		 src[PATH_MAX], filter[PATH_MAX], inc[PATH_MAX + 2];
	char		*argv[] = { (char *)"/usr/bin/cc", (char *)"-static",
			    (char *)"-pthread", (char *)"-O1", inc,
			    (char *)"-o", probe, src, filter, NULL };
	char		*out;
	int		 st;

	/* With sandbox-init's own filter loader. */
	if (top == NULL)
		top = ".";
	snprintf(src, sizeof(src), "%s/tests/bundle/probe.c", top);
	snprintf(filter, sizeof(filter), "%s/sandboxd/init/scfilter.c", top);
	snprintf(inc, sizeof(inc), "-I%s/sandboxd/init", top);
	snprintf(ws, sizeof(ws), "%s/ws", tmp);
	snprintf(probe, sizeof(probe), "%s/probe", ws);
	if (mkdir(ws, 0755) == -1 || chown(ws, TEST_UID_BASE + SBX_USER_UID,
	    TEST_UID_BASE + SBX_USER_UID) == -1)
		return -1;
	st = run(argv, &out, 120);
	free(out);
	return st == 0 ? 0 : -1;
}

int
main(void)
{
	const char	*why = NULL;

	snprintf(tmp, sizeof(tmp), "/tmp/test_bundle.XXXXXX");
	if (mkdtemp(tmp) == NULL || chmod(tmp, 0755) == -1) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(runc_root, sizeof(runc_root), "%s/runc", tmp);
	lim.memory = 256ULL << 20;
	lim.cpus = 500;
	lim.pids = 64;
	lim.disk = 32ULL << 20;
	img_host.type = IMAGE_HOST;
	img_rootfs.type = IMAGE_ROOTFS;
	snprintf(img_rootfs.path, sizeof(img_rootfs.path), "%s/rootimg", tmp);

	test_image_host();
	test_image_sweep();
	test_rootfs_check();
	test_config();
	test_validation();
	test_write();
	test_seccomp();
	test_filter();

	if (geteuid() != 0)
		why = "not root";
	else if (access(RUNC, X_OK) == -1)
		why = "no " RUNC;
	else if (probe_build() == -1)
		why = "cannot build the static probe";
	if (why != NULL)
		ok(1, "# SKIP containers: %s", why);
	else {
		test_runc_basics();
		test_runc_memory();
		test_runc_filter();
		test_runc_rootfs();
		test_runc_in_use();
		test_runc_runtimes();
	}

	if (why == NULL)
		(void)cg_left(NULL, 1);
	rm_rf(tmp);
	return tap_done();
}
