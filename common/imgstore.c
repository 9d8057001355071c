/*
 * Reading the image store (imgstore.h): names, and the info of the
 * trees they name.  mcpctl(8) writes the store; a root daemon reads it,
 * so every file is opened with O_NOFOLLOW, must be a regular file or a
 * directory of root's (or the reader's) that no one else may write, and
 * every byte of it is checked before it is used.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgstore.h"
#include "log.h"
#include "util.h"

#define NAME_FILE_MAX	(IMGSTORE_DIGEST_LEN + 1)	/* with its newline */

/* The store's directories, open. */
struct store {
	char	 path[PATH_MAX];	/* <state>/images */
	int	 store;			/* store/ */
	int	 names;			/* names/ */
};

int
imgstore_valid_name(const char *s)
{
	return name_valid(s) && strcmp(s, HOST_IMAGE) != 0;
}

int
imgstore_valid_hex(const char *s)
{
	return strspn(s, "0123456789abcdef") == IMGSTORE_HEX_LEN &&
	    s[IMGSTORE_HEX_LEN] == '\0';
}

int
imgstore_valid_digest(const char *s)
{
	size_t	 n = strlen(IMGSTORE_PREFIX);

	return strncmp(s, IMGSTORE_PREFIX, n) == 0 &&
	    imgstore_valid_hex(s + n);
}

/* Root's, or the reader's, and writable by no one else. */
static int
store_owned(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	    (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* A directory of the store: 0, 1 if missing, or -1. */
static int
store_opendir(int dfd, const char *name, const char *path, int *fdp,
    char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd;

	*fdp = -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		return 1;
	if (fd == -1)
		return errfmt(err, errlen, "%s/%s: %s", path, name,
		    strerror(errno));
	if (fstat(fd, &st) == -1 || !store_owned(&st)) {
		close(fd);
		return errfmt(err, errlen, "%s/%s: not owned by root or "
		    "writable by others", path, name);
	}
	*fdp = fd;
	return 0;
}

static void
store_close(struct store *s)
{
	if (s->store != -1)
		close(s->store);
	if (s->names != -1)
		close(s->names);
	s->store = s->names = -1;
}

/* Open <state>/images, store/ and names/: 0, 1 if there is none, -1. */
static int
store_open(struct store *s, const char *state_dir, char *err,
    size_t errlen)
{
	int	 dfd, r;

	s->store = s->names = -1;
	if (state_dir == NULL || state_dir[0] != '/')
		return errfmt(err, errlen, "state directory must be "
		    "absolute");
	if (str_fmt(s->path, sizeof(s->path), "%s/%s", state_dir,
	    IMGSTORE_DIR) == -1)
		return errfmt(err, errlen, "%s: path too long", state_dir);
	if ((r = store_opendir(AT_FDCWD, s->path, s->path, &dfd, err,
	    errlen)) != 0)
		return r == 1 ? 1 : -1;
	r = store_opendir(dfd, IMGSTORE_STORE, s->path, &s->store, err,
	    errlen);
	if (r == 0)
		r = store_opendir(dfd, IMGSTORE_NAMES, s->path, &s->names, err,
		    errlen);
	close(dfd);
	if (r != 0)
		store_close(s);
	return r;
}

/*
 * A small regular file, whole and NUL-terminated, of at most size - 1
 * bytes: its length, or -1 (-2 if it does not exist).
 */
static ssize_t
store_read(int dfd, const char *name, const char *what, char *buf,
    size_t size, char *err, size_t errlen)
{
	struct stat	 st;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		return -2;
	if (fd == -1)
		return errfmt(err, errlen, "%s: %s", what, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    !store_owned(&st) || st.st_size >= (off_t)size) {
		close(fd);
		return errfmt(err, errlen, "%s: not a regular file of "
		    "root's, that only root may write, under %zu bytes", what,
		    size);
	}
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) !=
	    0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return errfmt(err, errlen, "%s: %s", what,
			    strerror(errno));
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL)
		return errfmt(err, errlen, "%s: holds a NUL byte", what);
	return (ssize_t)len;
}

/* A name's digest: 0, 1 if there is no such name, -1. */
static int
store_name(struct store *s, const char *name, char *digest, char *err,
    size_t errlen)
{
	char	 buf[NAME_FILE_MAX + 1], what[PATH_MAX];
	ssize_t	 n;

	(void)str_fmt(what, sizeof(what), "%s/%s/%s", s->path, IMGSTORE_NAMES,
	    name);
	n = store_read(s->names, name, what, buf, sizeof(buf), err, errlen);
	if (n == -2)
		return 1;
	if (n == -1)
		return -1;
	if ((size_t)n != NAME_FILE_MAX || buf[n - 1] != '\n')
		return errfmt(err, errlen, "%s: not a digest and a newline",
		    what);
	buf[n - 1] = '\0';
	if (!imgstore_valid_digest(buf))
		return errfmt(err, errlen, "%s: not a digest", what);
	memcpy(digest, buf, IMGSTORE_DIGEST_LEN + 1);
	return 0;
}

/* The keys of an info file, in the bits of a set of them seen. */
enum info_key {
	INFO_DIGEST, INFO_SOURCE, INFO_SOURCE_DIGEST, INFO_CREATED, INFO_SIZE,
	INFO_FILES,
};
static const char *const info_keys[] = {
	"digest", "source", "source-digest", "created", "size", "files",
};
#define INFO_NEEDED	(1U << INFO_DIGEST | 1U << INFO_SOURCE |	\
			 1U << INFO_CREATED | 1U << INFO_SIZE)

/* A text of the info: no control character. */
static int
info_text(const char *v, char *dst, size_t size)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return -1;
	return str_copy(dst, v, size);
}

static int
info_digest(const char *v, char *dst)
{
	if (!imgstore_valid_digest(v))
		return -1;
	return str_copy(dst, v, IMGSTORE_DIGEST_LEN + 1);
}

static int
info_number(const char *v, uint64_t *out)
{
	return str_to_u64(v, 0, INT64_MAX, out) == NULL ? 0 : -1;
}

/* One "key value" line into im; unknown keys are for later versions. */
static int
info_line(char *line, struct imgstore_image *im, unsigned *seen)
{
	char		*v;
	uint64_t	 created;
	size_t		 k;

	if ((v = strchr(line, ' ')) == NULL)
		return -1;
	*v++ = '\0';
	for (k = 0; k < nitems(info_keys); k++)
		if (strcmp(line, info_keys[k]) == 0)
			break;
	if (k == nitems(info_keys))
		return 0;
	if (*seen & (1U << k))
		return -1;		/* twice */
	*seen |= 1U << k;
	switch ((enum info_key)k) {
	case INFO_DIGEST:
		return info_digest(v, im->digest);
	case INFO_SOURCE:
		return info_text(v, im->source, sizeof(im->source));
	case INFO_SOURCE_DIGEST:
		return info_digest(v, im->source_digest);
	case INFO_CREATED:
		if (info_number(v, &created) == -1)
			return -1;
		im->created = (int64_t)created;
		return 0;
	case INFO_SIZE:
		return info_number(v, &im->size);
	case INFO_FILES:
		return info_number(v, &im->files);
	}
	return -1;
}

/* The info of store/<hex> into im; what names it in messages. */
static int
store_info(int tree, const char *what, struct imgstore_image *im,
    char *err, size_t errlen)
{
	char		 buf[IMGSTORE_INFO_MAX + 1], *line, *next;
	unsigned	 seen = 0;
	ssize_t		 n;
	int		 lineno = 1;

	n = store_read(tree, IMGSTORE_INFO, what, buf, sizeof(buf), err,
	    errlen);
	if (n == -2)
		return errfmt(err, errlen, "%s: missing", what);
	if (n < 0)
		return -1;
	if (n == 0 || buf[n - 1] != '\n')
		return errfmt(err, errlen, "%s: does not end a line", what);
	for (line = buf; *line != '\0'; line = next, lineno++) {
		next = strchr(line, '\n');
		*next++ = '\0';
		if (info_line(line, im, &seen) == -1)
			return errfmt(err, errlen, "%s:%d: malformed",
			    what, lineno);
	}
	if ((seen & INFO_NEEDED) != INFO_NEEDED)
		return errfmt(err, errlen, "%s: incomplete", what);
	return 0;
}

/* The image of digest, which the caller checked, into im: 0, 1, -1. */
static int
store_image(struct store *s, const char *digest, struct imgstore_image *im,
    char *err, size_t errlen)
{
	const char	*hex = digest + strlen(IMGSTORE_PREFIX);
	char		 what[PATH_MAX];
	struct stat	 st;
	int		 tree, r;

	(void)str_fmt(what, sizeof(what), "%s/%s/%s", s->path,
	    IMGSTORE_STORE, hex);
	if ((r = store_opendir(s->store, hex, what, &tree, err, errlen)) != 0)
		return r;
	if (str_fmt(im->rootfs, sizeof(im->rootfs), "%s/%s", what,
	    IMGSTORE_ROOTFS) == -1) {
		close(tree);
		return errfmt(err, errlen, "%s: path too long", what);
	}
	(void)str_fmt(what, sizeof(what), "%s/%s", im->rootfs,
	    "../" IMGSTORE_INFO);
	r = store_info(tree, what, im, err, errlen);
	if (r == 0 && strcmp(im->digest, digest) != 0)
		r = errfmt(err, errlen, "%s: digest %s, not %s", what,
		    im->digest, digest);
	if (r == 0 && (fstatat(tree, IMGSTORE_ROOTFS, &st,
	    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))))
		r = errfmt(err, errlen, "%s: not a directory of root's "
		    "that only root may write", im->rootfs);
	close(tree);
	return r;
}

int
imgstore_resolve(const char *state_dir, const char *name,
    char digest[IMGSTORE_DIGEST_LEN + 1], char *err, size_t errlen)
{
	struct store	 s;
	int		 r;

	digest[0] = '\0';
	if (!imgstore_valid_name(name))
		return errfmt(err, errlen, "\"%s\": not a valid image name",
		    name);
	if ((r = store_open(&s, state_dir, err, errlen)) == 0) {
		r = store_name(&s, name, digest, err, errlen);
		store_close(&s);
	}
	if (r != 0)
		digest[0] = '\0';
	return r;
}

int
imgstore_lookup_digest(const char *state_dir, const char *digest,
    struct imgstore_image *im, char *err, size_t errlen)
{
	struct store	 s;
	int		 r;

	memset(im, 0, sizeof(*im));
	if (!imgstore_valid_digest(digest))
		return errfmt(err, errlen, "\"%s\": not a digest", digest);
	if ((r = store_open(&s, state_dir, err, errlen)) == 0) {
		r = store_image(&s, digest, im, err, errlen);
		store_close(&s);
	}
	if (r != 0)
		memset(im, 0, sizeof(*im));
	return r;
}

int
imgstore_lookup(const char *state_dir, const char *name,
    struct imgstore_image *im, char *err, size_t errlen)
{
	char	 digest[IMGSTORE_DIGEST_LEN + 1];
	int	 r;

	memset(im, 0, sizeof(*im));
	if ((r = imgstore_resolve(state_dir, name, digest, err, errlen)) != 0)
		return r;
	r = imgstore_lookup_digest(state_dir, digest, im, err, errlen);
	if (r == 1)
		r = errfmt(err, errlen, "image \"%s\": %s is not in the store",
		    name, digest);
	if (r == 0)
		(void)str_copy(im->name, name, sizeof(im->name));
	return r;
}

static int
image_cmp(const void *a, const void *b)
{
	return strcmp(((const struct imgstore_image *)a)->name,
	    ((const struct imgstore_image *)b)->name);
}

/* Every valid name in names/, for a listing. */
static void
store_each(struct store *s, const char *state_dir, struct imgstore_image **v,
    size_t *n)
{
	struct dirent	*de;
	DIR		*d;
	char		 why[PATH_MAX + 128];
	int		 fd, r;

	if ((fd = openat(s->names, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (d = fdopendir(fd)) == NULL) {
		log_warn("%s/%s", s->path, IMGSTORE_NAMES);
		if (fd != -1)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')	/* ".", "..", temporaries */
			continue;
		if (!imgstore_valid_name(de->d_name)) {
			log_warnx("%s/%s/%s skipped: not a valid image name",
			    s->path, IMGSTORE_NAMES, de->d_name);
			continue;
		}
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		r = imgstore_lookup(state_dir, de->d_name, &(*v)[*n], why,
		    sizeof(why));
		if (r == 0)
			(*n)++;
		else if (r == -1)	/* not 1: removed meanwhile */
			log_warnx("image \"%s\" skipped: %s", de->d_name, why);
	}
	closedir(d);
}

int
imgstore_list(const char *state_dir, struct imgstore_image **vp,
    size_t *np, char *err, size_t errlen)
{
	struct store		 s;
	struct imgstore_image	*v = NULL;
	size_t			 n = 0;
	int			 r;

	*vp = NULL;
	*np = 0;
	if ((r = store_open(&s, state_dir, err, errlen)) != 0)
		return r == 1 ? 0 : -1;
	store_each(&s, state_dir, &v, &n);
	store_close(&s);
	if (n > 0)
		qsort(v, n, sizeof(*v), image_cmp);
	*vp = v;
	*np = n;
	return 0;
}
