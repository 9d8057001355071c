/*
 * The tree digest of an image's root filesystem: what names an image in
 * the store, and what "mcpctl image verify" computes again to show that
 * nobody changed it.  Timestamps are left out, so it says what the tree
 * holds, not when it was made.
 *
 * The digest is "sha256:" and the lowercase hex SHA-256 of a sequence
 * of records, one an entry, the root's first.  A directory's record is
 * followed by the records of its entries, sorted bytewise by name, each
 * subdirectory's entries right after its own record (depth first).  A
 * record is
 *
 *	PATH NUL TYPE SP PERM SP UID SP GID [SP DATA] XATTR... LF
 *
 * PATH	the path relative to the root, names joined by "/"; "." is the
 *	root itself.
 * TYPE	one letter: d directory, f regular file, l symbolic link,
 *	c character device, b block device, p FIFO, s socket.
 * PERM	st_mode & 07777 (setuid, setgid and sticky included) in octal,
 *	at least four digits.
 * UID, GID  decimal.
 * DATA	f: the size in bytes, SP, the SHA-256 of the content in 64
 *	lowercase hex digits; l: the length of the target in bytes, SP,
 *	the target's bytes as they are; c and b: major, SP, minor, in
 *	decimal; none for the other types.
 * XATTR  for each extended attribute but those of the trusted.
 *	namespace (which only root may read), sorted bytewise by name:
 *	SP "x" SP NAME NUL LENGTH SP VALUE, LENGTH in decimal.
 *
 * Numbers have no leading zeros (PERM aside).  Hard links are hashed as
 * the files they are, each under its own name.
 *
 * Every step opens relative to a directory descriptor with O_NOFOLLOW:
 * a link is read, never followed, and a device never opened.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "imgstore.h"
#include "util.h"

#define XATTR_BUF	65536	/* XATTR_LIST_MAX, XATTR_SIZE_MAX */

struct walk {
	crypto_hash_sha256_state sha;
	char		 path[PATH_MAX];	/* of the entry at hand */
	uint64_t	 mnt;			/* the root's mount */
	uint64_t	 size, files, devices;
	char		*err;
	size_t		 errlen;
	char		 xnames[XATTR_BUF];
	char		*xlist[XATTR_BUF / 2];
	char		 xvalue[XATTR_BUF];
	unsigned char	 buf[65536];
};

static int
walk_errno(struct walk *w)
{
	return errfmt(w->err, w->errlen, "%s: %s", w->path, strerror(errno));
}

static void
rec_add(struct walk *w, const void *p, size_t len)
{
	crypto_hash_sha256_update(&w->sha, p, len);
}

__attribute__((__format__(printf, 2, 3)))
static void
rec_fmt(struct walk *w, const char *fmt, ...)
{
	char	 s[128];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if (n > 0)
		rec_add(w, s, (size_t)n < sizeof(s) ? (size_t)n : sizeof(s) - 1);
}

/* PATH NUL TYPE SP PERM SP UID SP GID */
static void
rec_head(struct walk *w, char type, const struct stat *st)
{
	rec_add(w, w->path, strlen(w->path) + 1);
	rec_fmt(w, "%c %04o %u %u", type, (unsigned)(st->st_mode & 07777),
	    (unsigned)st->st_uid, (unsigned)st->st_gid);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The extended attributes: of fd, or when fd is -1 of name in the
 * directory dfd, through /proc so that the link itself is asked.
 */
static int
rec_xattrs(struct walk *w, int fd, int dfd, const char *name)
{
	char		 p[PATH_MAX + 32];
	char		**names = w->xlist, *s;
	ssize_t		 len, vlen;
	size_t		 n = 0, i;

	if (fd == -1 && str_fmt(p, sizeof(p), "/proc/self/fd/%d/%s", dfd,
	    name) == -1)
		return errfmt(w->err, w->errlen, "%s: path too long", w->path);
	len = fd != -1 ? flistxattr(fd, w->xnames, sizeof(w->xnames)) :
	    llistxattr(p, w->xnames, sizeof(w->xnames));
	if (len == -1 && (errno == ENOTSUP || errno == EPERM))
		return 0;
	if (len == -1)
		return walk_errno(w);
	for (s = w->xnames; s < w->xnames + len; s += strlen(s) + 1)
		if (*s != '\0' && strncmp(s, "trusted.", 8) != 0)
			names[n++] = s;
	if (n > 0)
		qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		vlen = fd != -1 ? fgetxattr(fd, names[i], w->xvalue,
		    sizeof(w->xvalue)) : lgetxattr(p, names[i], w->xvalue,
		    sizeof(w->xvalue));
		if (vlen == -1)
			return walk_errno(w);
		rec_add(w, " x ", 3);
		rec_add(w, names[i], strlen(names[i]) + 1);
		rec_fmt(w, "%zd ", vlen);
		rec_add(w, w->xvalue, (size_t)vlen);
	}
	return 0;
}

static int
rec_end(struct walk *w, int fd, int dfd, const char *name)
{
	if (rec_xattrs(w, fd, dfd, name) == -1)
		return -1;
	rec_add(w, "\n", 1);
	return 0;
}

/* An opened entry must be the one looked at: nothing swapped it. */
static int
walk_same(struct walk *w, int fd, const struct stat *was, struct stat *st)
{
	if (fstat(fd, st) == -1)
		return walk_errno(w);
	if (st->st_dev != was->st_dev || st->st_ino != was->st_ino ||
	    (st->st_mode & S_IFMT) != (was->st_mode & S_IFMT))
		return errfmt(w->err, w->errlen, "%s: changed while read", w->path);
	return 0;
}

static int
walk_file(struct walk *w, int dfd, const char *name, const struct stat *was)
{
	crypto_hash_sha256_state sha;
	struct stat	 st;
	unsigned char	 sum[crypto_hash_sha256_BYTES];
	char		 hex[crypto_hash_sha256_BYTES * 2 + 1];
	uint64_t	 size = 0;
	ssize_t		 n;
	int		 fd, r = -1;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return walk_errno(w);
	if (walk_same(w, fd, was, &st) == -1)
		goto done;
	crypto_hash_sha256_init(&sha);
	while ((n = read(fd, w->buf, sizeof(w->buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			walk_errno(w);
			goto done;
		}
		crypto_hash_sha256_update(&sha, w->buf, (size_t)n);
		size += (uint64_t)n;
	}
	if (size != (uint64_t)st.st_size) {
		errfmt(w->err, w->errlen, "%s: changed while read", w->path);
		goto done;
	}
	crypto_hash_sha256_final(&sha, sum);
	sodium_bin2hex(hex, sizeof(hex), sum, sizeof(sum));
	rec_head(w, 'f', &st);
	rec_fmt(w, " %llu %s", (unsigned long long)size, hex);
	r = rec_end(w, fd, dfd, name);
	w->size += size;
	w->files++;
 done:
	close(fd);
	return r;
}

static int
walk_link(struct walk *w, int dfd, const char *name, const struct stat *st)
{
	char	 target[PATH_MAX];
	ssize_t	 n;

	if ((n = readlinkat(dfd, name, target, sizeof(target))) == -1)
		return walk_errno(w);
	if ((size_t)n >= sizeof(target))
		return errfmt(w->err, w->errlen, "%s: link target too long", w->path);
	rec_head(w, 'l', st);
	rec_fmt(w, " %zd ", n);
	rec_add(w, target, (size_t)n);
	return rec_end(w, -1, dfd, name);
}

static int
walk_special(struct walk *w, int dfd, const char *name,
    const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFCHR:
	case S_IFBLK:
		rec_head(w, S_ISCHR(st->st_mode) ? 'c' : 'b', st);
		rec_fmt(w, " %u %u", major(st->st_rdev), minor(st->st_rdev));
		w->devices++;
		break;
	case S_IFIFO:
		rec_head(w, 'p', st);
		break;
	case S_IFSOCK:
		rec_head(w, 's', st);
		break;
	default:
		return errfmt(w->err, w->errlen, "%s: unknown file type", w->path);
	}
	return rec_end(w, -1, dfd, name);
}

/* The names in directory fd, sorted; NULL and *np 0 when it is empty. */
static char **
walk_names(struct walk *w, int fd, size_t *np)
{
	struct dirent	*de;
	DIR		*d;
	char		**v = NULL;
	size_t		 n = 0;
	int		 dfd;

	*np = 0;
	/* Not dup(): that would share, and exhaust, fd's offset. */
	if ((dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(dfd)) == NULL) {
		walk_errno(w);
		if (dfd != -1)
			close(dfd);
		return (char **)-1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), name_cmp);
	*np = n;
	return v;
}

static int	 walk_entry(struct walk *, int, const char *, int);

/* The record of directory fd, then its entries'. */
static int
walk_dir(struct walk *w, int fd, const struct stat *st, int depth)
{
	char	**names;
	size_t	 n, i, len;
	int	 r;

	if (depth > IMGSTORE_DEPTH_MAX)
		return errfmt(w->err, w->errlen, "%s: more than %d levels deep", w->path,
		    IMGSTORE_DEPTH_MAX);
	if (fd_mount_id(fd, st) != w->mnt)
		return errfmt(w->err, w->errlen, "%s: another filesystem is mounted there",
		    w->path);
	rec_head(w, 'd', st);
	if (rec_end(w, fd, -1, NULL) == -1)
		return -1;
	if ((names = walk_names(w, fd, &n)) == (char **)-1)
		return -1;
	/* The root is ".", its entries are "name", not "./name". */
	len = depth == 0 ? 0 : strlen(w->path);
	for (i = 0, r = 0; i < n; i++) {
		if (r == 0 && str_fmt(w->path + len, sizeof(w->path) - len,
		    "%s%s", len == 0 ? "" : "/", names[i]) == -1)
			r = errfmt(w->err, w->errlen, "%.*s/%s: path too long", (int)len,
			    w->path, names[i]);
		if (r == 0)
			r = walk_entry(w, fd, names[i], depth + 1);
		w->path[len] = '\0';
		free(names[i]);
	}
	free(names);
	if (len == 0)
		(void)str_copy(w->path, ".", sizeof(w->path));
	return r;
}

static int
walk_entry(struct walk *w, int dfd, const char *name, int depth)
{
	struct stat	 was, st;
	int		 fd, r;

	if (fstatat(dfd, name, &was, AT_SYMLINK_NOFOLLOW) == -1)
		return walk_errno(w);
	if (S_ISREG(was.st_mode))
		return walk_file(w, dfd, name, &was);
	if (S_ISLNK(was.st_mode))
		return walk_link(w, dfd, name, &was);
	if (!S_ISDIR(was.st_mode))
		return walk_special(w, dfd, name, &was);
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return walk_errno(w);
	r = walk_same(w, fd, &was, &st);
	if (r == 0)
		r = walk_dir(w, fd, &st, depth);
	close(fd);
	return r;
}

int
imgstore_digest(int rootfd, struct imgstore_sum *sum, char *err,
    size_t errlen)
{
	struct walk	*w;
	struct stat	 st;
	unsigned char	 bin[crypto_hash_sha256_BYTES];
	int		 fd, r = -1;

	memset(sum, 0, sizeof(*sum));
	w = xcalloc(1, sizeof(*w));
	w->err = err;
	w->errlen = errlen;
	(void)str_copy(w->path, ".", sizeof(w->path));
	crypto_hash_sha256_init(&w->sha);
	/* Its own descriptor: the caller's may be O_PATH. */
	if ((fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || fstat(fd, &st) == -1) {
		walk_errno(w);
		goto done;
	}
	w->mnt = fd_mount_id(fd, &st);
	if (walk_dir(w, fd, &st, 0) == -1)
		goto done;
	crypto_hash_sha256_final(&w->sha, bin);
	memcpy(sum->digest, IMGSTORE_PREFIX, strlen(IMGSTORE_PREFIX));
	sodium_bin2hex(sum->digest + strlen(IMGSTORE_PREFIX),
	    sizeof(sum->digest) - strlen(IMGSTORE_PREFIX), bin, sizeof(bin));
	sum->size = w->size;
	sum->files = w->files;
	sum->devices = w->devices;
	r = 0;
 done:
	if (fd != -1)
		close(fd);
	free(w);
	return r;
}
