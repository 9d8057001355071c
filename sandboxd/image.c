/*
 * The host image.
 *
 * The "host" image needs no set-up by the admin: a skeleton root that holds
 * only mountpoints and the host's top-level symbolic links (bin -> usr/bin),
 * the host's /usr (and any real /lib-like directory) bound read-only over
 * it, and a synthetic /etc that knows only the sandbox user and the few
 * host files that runtimes read.  Nothing secret is copied: only files any
 * user may read, and never what image_etc_never names.
 *
 * A rebuild makes a fresh tree and swaps it in by rename; the tree it
 * replaces is left to image_sweep() (common/imgtree.c), which deletes it
 * once no process has its root in it.  Every walk is relative to
 * directory fds and opens with O_NOFOLLOW, so a symbolic link planted in
 * the tree can neither redirect a write nor a deletion to the host.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "imgtree.h"
#include "util.h"

#define IMAGE_DEPTH_MAX		16

/* Top-level host entries: mirrored when links, bound when directories. */
static const char *const image_top[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

/*
 * runc gives a tmpfs the mode of the directory it is mounted on, whatever
 * its mode= option says: hence a sticky, world-writable tmp.
 */
static const struct {
	const char	*name;
	mode_t		 mode;
} image_mountpoints[] = {
	{ "proc", 0755 }, { "dev", 0755 }, { "sys", 0755 }, { "tmp", 01777 },
	{ "etc", 0755 }, { "workspace", 0755 }, { "usr", 0755 },
	{ ".mcpd", 0755 },
};

/* The synthetic /etc. */
static const struct {
	const char	*name;
	const char	*text;
} image_etc_text[] = {
	{ "passwd",
	    "root:x:0:0:root:/:/bin/sh\n"
	    "sandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
	{ "group",
	    "root:x:0:\n"
	    "sandbox:x:1000:\n"
	    "nogroup:x:65534:\n" },
	{ "hosts",
	    "127.0.0.1\tlocalhost sandbox\n"
	    "::1\tlocalhost ip6-localhost ip6-loopback\n" },
	/* The resolver of the user-mode network, when there is one. */
	{ "resolv.conf",
	    "nameserver 10.0.2.3\n" },
	{ "nsswitch.conf",
	    "passwd: files\n"
	    "group: files\n"
	    "shadow: files\n"
	    "hosts: files dns\n"
	    "networks: files\n"
	    "protocols: files\n"
	    "services: files\n" },
};

/*
 * Host /etc entries runtimes read, copied when present: links as links,
 * files only when world-readable, directories only when marked as trees.
 * A name with a wildcard matches entries directly under /etc.
 */
static const struct {
	const char	*path;
	int		 tree;
} image_etc_copy[] = {
	{ "ld.so.cache", 0 },
	{ "alternatives", 1 },
	{ "ca-certificates.conf", 0 },
	{ "gai.conf", 0 },
	{ "java-*", 1 },
	{ "localtime", 0 },
	{ "magic", 0 },
	{ "magic.mime", 0 },
	{ "matplotlibrc", 0 },
	{ "mime.types", 0 },
	{ "os-release", 0 },
	{ "protocols", 0 },
	{ "python3*", 1 },
	{ "services", 0 },
	{ "ssl/certs", 1 },
	{ "ssl/openssl.cnf", 0 },
	{ "timezone", 0 },
};

/* Never copied, whatever the table above says and whatever their modes. */
static const char *const image_etc_never[] = {
	"ssl/private", "shadow", "shadow-", "gshadow", "gshadow-", "ssh",
	"sudoers", "sudoers.d", "machine-id",
};

#define image_err	errfmt		/* util.c's */

/* Give a new file of the image its mode and owner, and close it. */
static int
image_close(int fd, int ok)
{
	int	 saved;

	if (ok && fchmod(fd, 0644) == 0 && (geteuid() != 0 ||
	    fchown(fd, 0, 0) == 0))
		return close(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static int
image_write(int dfd, const char *name, const char *buf, size_t len)
{
	int	 fd;

	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	return image_close(fd, write_all(fd, buf, len) == 0);
}

/* Copy a regular file that anyone may read; other files are skipped. */
static int
image_copy_file(int sfd, const char *name, int dfd)
{
	struct stat	 st;
	char		 buf[65536];
	ssize_t		 n = -1;
	int		 in, out, saved;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (in == -1)
		return errno == ENOENT || errno == ELOOP ? 0 : -1;
	if (fstat(in, &st) == -1) {
		saved = errno;
		close(in);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & S_IROTH) == 0) {
		close(in);
		return 0;		/* not for everyone's eyes */
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (out != -1)
		while ((n = read(in, buf, sizeof(buf))) != 0)
			if ((n == -1 && errno != EINTR) || (n > 0 &&
			    write_all(out, buf, n) == -1)) {
				n = -1;
				break;
			}
	saved = errno;
	close(in);
	errno = saved;
	if (out == -1)
		return -1;
	return image_close(out, n == 0);
}

static int
image_never(const char *rel)
{
	size_t	 i, n;

	for (i = 0; i < nitems(image_etc_never); i++) {
		n = strlen(image_etc_never[i]);
		if (strncmp(rel, image_etc_never[i], n) == 0 &&
		    (rel[n] == '\0' || rel[n] == '/'))
			return 1;
	}
	return 0;
}

/*
 * Copy sfd/name to dfd/name; rel is its path under /etc, for the never
 * list and for messages.  Directories are copied only as trees, and only
 * when anyone may list them.
 */
static int
image_copy(int sfd, int dfd, const char *name, const char *rel, int tree,
    int depth, char *err, size_t errlen)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 link[PATH_MAX], sub[PATH_MAX];
	ssize_t		 n;
	int		 s, t, r = 0;

	if (image_never(rel))
		return 0;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;
		return image_err(err, errlen, "/etc/%s: %s", rel,
		    strerror(errno));
	}
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(sfd, name, link, sizeof(link))) == -1 ||
		    (size_t)n >= sizeof(link))
			return image_err(err, errlen, "/etc/%s: cannot read "
			    "link", rel);
		link[n] = '\0';
		if (symlinkat(link, dfd, name) == -1 || image_own(dfd, name))
			return image_err(err, errlen, "/etc/%s: %s", rel,
			    strerror(errno));
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if (image_copy_file(sfd, name, dfd) == -1)
			return image_err(err, errlen, "/etc/%s: %s", rel,
			    strerror(errno));
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || !tree || depth >= IMAGE_DEPTH_MAX ||
	    (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		return 0;

	if ((s = image_opendir(sfd, name)) == -1)
		return errno == ENOENT ? 0 : image_err(err, errlen,
		    "/etc/%s: %s", rel, strerror(errno));
	if (image_mkdir(dfd, name, 0755) == -1 ||
	    (t = image_opendir(dfd, name)) == -1) {
		close(s);
		return image_err(err, errlen, "/etc/%s: %s", rel,
		    strerror(errno));
	}
	if ((d = fdopendir(s)) == NULL) {
		close(s);
		close(t);
		return image_err(err, errlen, "/etc/%s: %s", rel,
		    strerror(errno));
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel,
		    de->d_name) >= sizeof(sub))
			continue;
		r = image_copy(dirfd(d), t, de->d_name, sub, 1, depth + 1,
		    err, errlen);
	}
	closedir(d);
	close(t);
	return r;
}

/* Copy one table entry "dir/name" of the host's /etc into etc. */
static int
image_copy_entry(int hostetc, int etc, const char *path, int tree,
    char *err, size_t errlen)
{
	char	 parent[PATH_MAX];
	char	*slash;
	int	 s, t, r;

	if (str_copy(parent, path, sizeof(parent)) == -1)
		return 0;
	if ((slash = strchr(parent, '/')) == NULL)
		return image_copy(hostetc, etc, path, path, tree, 0, err,
		    errlen);

	/* One level of directory, made in the copy as in the host. */
	*slash = '\0';
	if (image_never(parent))
		return 0;
	if ((s = image_opendir(hostetc, parent)) == -1)
		return 0;
	if ((image_mkdir(etc, parent, 0755) == -1 && errno != EEXIST) ||
	    (t = image_opendir(etc, parent)) == -1) {
		close(s);
		return image_err(err, errlen, "etc/%s: %s", parent,
		    strerror(errno));
	}
	r = image_copy(s, t, slash + 1, path, tree, 1, err, errlen);
	close(s);
	close(t);
	return r;
}

static int
image_build_etc(int tree, char *err, size_t errlen)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 i;
	int		 etc, host, r = 0;

	if (image_mkdir(tree, "etc", 0755) == -1 ||
	    (etc = image_opendir(tree, "etc")) == -1)
		return image_err(err, errlen, "etc: %s", strerror(errno));
	for (i = 0; i < nitems(image_etc_text); i++)
		if (image_write(etc, image_etc_text[i].name,
		    image_etc_text[i].text,
		    strlen(image_etc_text[i].text)) == -1) {
			close(etc);
			return image_err(err, errlen, "etc/%s: %s",
			    image_etc_text[i].name, strerror(errno));
		}

	if ((host = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		close(etc);
		return image_err(err, errlen, "/etc: %s", strerror(errno));
	}
	for (i = 0; r == 0 && i < nitems(image_etc_copy); i++) {
		if (strpbrk(image_etc_copy[i].path, "*?[") == NULL) {
			r = image_copy_entry(host, etc, image_etc_copy[i].path,
			    image_etc_copy[i].tree, err, errlen);
			continue;
		}
		if ((d = opendir("/etc")) == NULL) {
			r = image_err(err, errlen, "/etc: %s", strerror(errno));
			break;
		}
		while (r == 0 && (de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' && fnmatch(
			    image_etc_copy[i].path, de->d_name, 0) == 0)
				r = image_copy(host, etc, de->d_name,
				    de->d_name, image_etc_copy[i].tree, 0,
				    err, errlen);
		closedir(d);
	}
	close(host);
	close(etc);
	return r;
}

static int
image_build_rootfs(int tree, struct image_host *ih, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 host[64], link[PATH_MAX];
	ssize_t		 n;
	size_t		 i;
	int		 root, fd;

	if (image_mkdir(tree, "rootfs", 0755) == -1 ||
	    (root = image_opendir(tree, "rootfs")) == -1)
		return image_err(err, errlen, "rootfs: %s", strerror(errno));

	ih->nbinds = 0;
	str_copy(ih->binds[ih->nbinds++], "/usr", sizeof(ih->binds[0]));
	for (i = 0; i < nitems(image_top); i++) {
		snprintf(host, sizeof(host), "/%s", image_top[i]);
		if (lstat(host, &st) == -1) {
			if (errno == ENOENT)
				continue;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			if ((n = readlink(host, link, sizeof(link))) == -1)
				goto fail;
			if ((size_t)n >= sizeof(link)) {
				errno = ENAMETOOLONG;
				goto fail;
			}
			link[n] = '\0';
			if (symlinkat(link, root, image_top[i]) == -1 ||
			    image_own(root, image_top[i]) == -1)
				goto fail;
		} else if (S_ISDIR(st.st_mode)) {
			if (ih->nbinds == IMAGE_MAX_BINDS) {
				errno = E2BIG;
				goto fail;
			}
			if (image_mkdir(root, image_top[i], 0755) == -1)
				goto fail;
			str_copy(ih->binds[ih->nbinds++], host,
			    sizeof(ih->binds[0]));
		}
	}
	for (i = 0; i < nitems(image_mountpoints); i++)
		if (image_mkdir(root, image_mountpoints[i].name,
		    image_mountpoints[i].mode) == -1)
			goto fail;

	/* The mountpoint of sandbox-init's bind. */
	if ((fd = image_opendir(root, ".mcpd")) == -1)
		goto fail;
	if (image_write(fd, "sandbox-init", "", 0) == -1) {
		close(fd);
		goto fail;
	}
	close(fd);
	close(root);
	return 0;
 fail:
	close(root);
	return image_err(err, errlen, "rootfs: %s", strerror(errno));
}


/* Put tree/name in place of dfd/name; the old one goes into tree. */
static int
image_swap(int tree, int dfd, const char *name)
{
	if (renameat2(tree, name, dfd, name, RENAME_EXCHANGE) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	return renameat2(tree, name, dfd, name, RENAME_NOREPLACE);
}

static int
image_mkdirs(const char *path)
{
	char	 p[PATH_MAX];
	char	*s;

	if (str_copy(p, path, sizeof(p)) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

int
image_host_prepare(const char *dir, struct image_host *ih, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 tmpl[PATH_MAX], old[NAME_MAX + 1];
	const char	*base;
	uint64_t	 mnt;
	int		 dfd, tree = -1, r;

	memset(ih, 0, sizeof(*ih));
	if (dir == NULL || dir[0] != '/')
		return image_err(err, errlen, "image directory must be "
		    "absolute");
	if ((size_t)snprintf(ih->rootfs, sizeof(ih->rootfs), "%s/rootfs",
	    dir) >= sizeof(ih->rootfs) ||
	    (size_t)snprintf(ih->etc, sizeof(ih->etc), "%s/etc", dir) >=
	    sizeof(ih->etc) ||
	    (size_t)snprintf(tmpl, sizeof(tmpl), "%s/" IMAGE_NEW "XXXXXX",
	    dir) >= sizeof(tmpl))
		return image_err(err, errlen, "%s: path too long", dir);

	if (image_mkdirs(dir) == -1)
		return image_err(err, errlen, "%s: %s", dir, strerror(errno));
	if ((dfd = image_opendir(AT_FDCWD, dir)) == -1)
		return image_err(err, errlen, "%s: %s", dir, strerror(errno));
	if (fstat(dfd, &st) == -1 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(dfd);
		return image_err(err, errlen, "%s: not owned by us or "
		    "writable by others", dir);
	}
	mnt = fd_mount_id(dfd, &st);
	image_sweep(dfd, mnt);

	if (mkdtemp(tmpl) == NULL) {
		image_err(err, errlen, "%s: %s", tmpl, strerror(errno));
		goto fail;
	}
	base = strrchr(tmpl, '/') + 1;
	if ((tree = image_opendir(dfd, base)) == -1) {
		image_err(err, errlen, "%s: %s", tmpl, strerror(errno));
		goto fail;
	}
	if (image_build_rootfs(tree, ih, err, errlen) == -1 ||
	    image_build_etc(tree, err, errlen) == -1)
		goto fail;
	if (syncfs(tree) == -1) {
		image_err(err, errlen, "%s: %s", tmpl, strerror(errno));
		goto fail;
	}

	/*
	 * etc first: a container started between the two renames gets the
	 * old root, whose tree then stays until that container is gone.
	 */
	r = image_swap(tree, dfd, "etc");
	if (r == 0)
		r = image_swap(tree, dfd, "rootfs");
	if (r == -1)
		image_err(err, errlen, "%s: swap: %s", dir, strerror(errno));
	/* What was swapped out may be in use: it waits for image_sweep(). */
	snprintf(old, sizeof(old), IMAGE_OLD "%s", base + strlen(IMAGE_NEW));
	if (renameat(dfd, base, dfd, old) == -1 && r == 0)
		r = image_err(err, errlen, "%s: %s", tmpl, strerror(errno));
	(void)fsync(dfd);
	close(tree);
	image_sweep(dfd, mnt);
	close(dfd);
	return r;

 fail:
	if (tree != -1)
		close(tree);
	/* A half-built tree, never used by anyone. */
	image_sweep(dfd, mnt);
	close(dfd);
	return -1;
}

