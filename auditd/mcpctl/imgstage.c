/*
 * Writing the image store (common/imgstore.h has its layout).  A tree
 * is made in store/.new-XXXXXXXX, prepared for mcp-sandboxd as it will
 * check it, digested, and renamed to its digest; it never changes after.
 * Names are replaced by rename.  A tree no name refers to any more is
 * renamed to .old-<hex> and deleted, like the host image's old trees
 * and with the same code, once no process has its root in it.  One
 * command at a time: they take a lock, which the tools they run inherit,
 * so that a tool outliving a killed mcpctl still holds it.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "imgtree.h"
#include "mcpctl.h"
#include "util.h"

#define IMGW_TMP	".tmp-"		/* a name being written */

static struct imgw	*imgw_current;	/* for imgw_atexit() */

/* However the command ends, the tree it was making goes. */
static void
imgw_atexit(void)
{
	struct imgw	*w = imgw_current;

	if (w != NULL && w->stage[0] != '\0' &&
	    image_rmtree(w->store, w->stage, w->mnt) == -1)
		warn("%s (the next image command removes it)", w->stagepath);
}

/* A directory of the store, made if missing: root's, and only root's. */
static int
imgw_dir(int dfd, const char *name, const char *path)
{
	struct stat	 st;
	int		 fd;

	if (mkdirat(dfd, name, 0755) == -1 && errno != EEXIST)
		err(EXIT_ERROR, "%s", path);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1)
		err(EXIT_ERROR, "%s", path);
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		errx(EXIT_ERROR, "%s: not owned by root or writable by others",
		    path);
	return fd;
}

/* "prefix" and eight random hex digits. */
static void
imgw_tmpname(char *buf, size_t size, const char *prefix)
{
	unsigned char	 r[4];
	char		 hex[sizeof(r) * 2 + 1];

	randombytes_buf(r, sizeof(r));
	sodium_bin2hex(hex, sizeof(hex), r, sizeof(r));
	if (str_fmt(buf, size, "%s%s", prefix, hex) == -1)
		errx(EXIT_ERROR, "temporary name too long");
}

static void
imgw_lock(struct imgw *w, int dfd)
{
	/* Not O_CLOEXEC: the tools run hold the lock as long as they run. */
	w->lock = openat(dfd, IMGSTORE_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW,
	    0600);
	if (w->lock == -1)
		err(EXIT_ERROR, "%s/%s", w->images, IMGSTORE_LOCK);
	if (flock(w->lock, LOCK_EX | LOCK_NB) == 0)
		return;
	if (errno != EWOULDBLOCK)
		err(EXIT_ERROR, "%s/%s", w->images, IMGSTORE_LOCK);
	warnx("waiting for another image command to finish");
	if (flock(w->lock, LOCK_EX) == -1)
		err(EXIT_ERROR, "%s/%s", w->images, IMGSTORE_LOCK);
}

/* Removing a tree holds a descriptor a level: let them be enough. */
static void
imgw_nofile(void)
{
	struct rlimit	 rl;
	rlim_t		 want = PATH_MAX / 2 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* Whether digest is one of the n in v. */
static int
imgw_named(char (*v)[IMGSTORE_DIGEST_LEN + 1], size_t n, const char *hex)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i] + strlen(IMGSTORE_PREFIX), hex) == 0)
			return 1;
	return 0;
}

/*
 * The digests the names point to, into *vp; -1 if one name cannot be
 * read, when no tree may be taken for unnamed.  Names half written by a
 * command that died are removed.
 */
static int
imgw_names(struct imgw *w, char (**vp)[IMGSTORE_DIGEST_LEN + 1],
    size_t *np)
{
	struct dirent	*de;
	DIR		*d;
	char		 why[PATH_MAX + 128];
	int		 fd, r = 0;

	*vp = NULL;
	*np = 0;
	if ((fd = openat(w->names, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (d = fdopendir(fd)) == NULL)
		err(EXIT_ERROR, "%s/%s", w->images, IMGSTORE_NAMES);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, IMGW_TMP, strlen(IMGW_TMP)) == 0)
			(void)unlinkat(w->names, de->d_name, 0);
		if (de->d_name[0] == '.')
			continue;
		*vp = xreallocarray(*vp, *np + 1, sizeof(**vp));
		switch (imgstore_resolve(w->state, de->d_name, (*vp)[*np], why,
		    sizeof(why))) {
		case 0:
			(*np)++;
			break;
		case -1:
			warnx("%s; no unnamed tree is removed until it is "
			    "fixed or removed", why);
			r = -1;
			break;
		}
	}
	closedir(d);
	return r;
}

/* Set store/<hex> aside, for image_sweep() to delete once unused. */
static void
imgw_retire(struct imgw *w, const char *hex)
{
	char	 old[NAME_MAX + 1], tmp[32];

	(void)str_fmt(old, sizeof(old), "%s%s", IMAGE_OLD, hex);
	if (renameat2(w->store, hex, w->store, old, RENAME_NOREPLACE) == 0)
		return;
	/* Its previous copy is still in use. */
	imgw_tmpname(tmp, sizeof(tmp), "-");
	(void)str_fmt(old, sizeof(old), "%s%s%s", IMAGE_OLD, hex, tmp);
	if (renameat2(w->store, hex, w->store, old, RENAME_NOREPLACE) == -1)
		warn("%s/%s/%s", w->images, IMGSTORE_STORE, hex);
}

/* Retire the trees no name refers to, and sweep. */
static void
imgw_gc(struct imgw *w)
{
	char		(*named)[IMGSTORE_DIGEST_LEN + 1];
	struct dirent	*de;
	DIR		*d;
	size_t		 n;
	int		 fd;

	if (imgw_names(w, &named, &n) == 0) {
		if ((fd = openat(w->store, ".", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC)) == -1 || (d = fdopendir(fd)) == NULL)
			err(EXIT_ERROR, "%s/%s", w->images, IMGSTORE_STORE);
		while ((de = readdir(d)) != NULL)
			if (imgstore_valid_hex(de->d_name) &&
			    !imgw_named(named, n, de->d_name))
				imgw_retire(w, de->d_name);
		closedir(d);
	}
	free(named);
	(void)fsync(w->store);
	image_sweep(w->store, w->mnt);
}

void
imgw_open(struct imgw *w, const char *state)
{
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 sfd, ifd;

	memset(w, 0, sizeof(*w));
	w->store = w->names = w->lock = -1;
	umask(022);
	imgw_nofile();
	if (str_copy(w->state, state, sizeof(w->state)) == -1 ||
	    str_fmt(w->images, sizeof(w->images), "%s/%s", state,
	    IMGSTORE_DIR) == -1)
		errx(EXIT_ERROR, "%s: path too long", state);
	if (mkdir(state, 0755) == -1 && errno != EEXIST)
		err(EXIT_ERROR, "%s", state);
	if ((sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(EXIT_ERROR, "%s", state);
	ifd = imgw_dir(sfd, IMGSTORE_DIR, w->images);
	close(sfd);
	imgw_lock(w, ifd);
	(void)str_fmt(path, sizeof(path), "%s/%s", w->images, IMGSTORE_STORE);
	w->store = imgw_dir(ifd, IMGSTORE_STORE, path);
	(void)str_fmt(path, sizeof(path), "%s/%s", w->images, IMGSTORE_NAMES);
	w->names = imgw_dir(ifd, IMGSTORE_NAMES, path);
	close(ifd);
	if (fstat(w->store, &st) == -1)
		err(EXIT_ERROR, "%s", path);
	w->mnt = fd_mount_id(w->store, &st);
	if (imgw_current == NULL && atexit(imgw_atexit) != 0)
		errx(EXIT_ERROR, "atexit");
	imgw_current = w;
	imgw_gc(w);
}

/* A new, empty tree to make an image in: w->stagepath. */
void
imgw_stage(struct imgw *w)
{
	int	 tries;

	for (tries = 0; tries < 16; tries++) {
		imgw_tmpname(w->stage, sizeof(w->stage), IMAGE_NEW);
		/* Closed to others while half made. */
		if (mkdirat(w->store, w->stage, 0700) == 0)
			break;
		if (errno != EEXIST)
			err(EXIT_ERROR, "%s/%s/%s", w->images, IMGSTORE_STORE,
			    w->stage);
	}
	if (tries == 16)
		errx(EXIT_ERROR, "%s/%s: no free temporary name", w->images,
		    IMGSTORE_STORE);
	(void)str_fmt(w->stagepath, sizeof(w->stagepath), "%s/%s/%s",
	    w->images, IMGSTORE_STORE, w->stage);
}

/* The info file of the tree being made. */
static void
imgw_info(struct imgw *w, int stage, const struct imgstore_sum *sum,
    const char *source, const char *srcdigest)
{
	char	 buf[IMGSTORE_INFO_MAX], src[IMGSTORE_SOURCE_MAX];
	char	*p;
	int	 fd;

	/* A newline would end the line: the reader refuses control bytes. */
	(void)str_copy(src, source, sizeof(src));
	for (p = src; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (str_fmt(buf, sizeof(buf), "digest %s\nsource %s\n%s%s%s"
	    "created %lld\nsize %llu\nfiles %llu\n", sum->digest, src,
	    srcdigest != NULL ? "source-digest " : "",
	    srcdigest != NULL ? srcdigest : "", srcdigest != NULL ? "\n" : "",
	    (long long)time(NULL), (unsigned long long)sum->size,
	    (unsigned long long)sum->files) == -1)
		errx(EXIT_ERROR, "info too long");
	fd = openat(stage, IMGSTORE_INFO, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1 || write_all(fd, buf, strlen(buf)) == -1 ||
	    fchmod(fd, 0644) == -1 || close(fd) == -1)
		err(EXIT_ERROR, "%s/%s", w->stagepath, IMGSTORE_INFO);
}

/* Point name at digest: a new file renamed over the old. */
static void
imgw_name(struct imgw *w, const char *name, const char *digest)
{
	char	 tmp[NAME_MAX + 1], line[IMGSTORE_DIGEST_LEN + 2];
	int	 fd;

	imgw_tmpname(tmp, sizeof(tmp), IMGW_TMP);
	(void)str_fmt(line, sizeof(line), "%s\n", digest);
	fd = openat(w->names, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1 || write_all(fd, line, strlen(line)) == -1 ||
	    fchmod(fd, 0644) == -1 || fsync(fd) == -1 || close(fd) == -1 ||
	    renameat(w->names, tmp, w->names, name) == -1) {
		(void)unlinkat(w->names, tmp, 0);
		err(EXIT_ERROR, "%s/%s/%s", w->images, IMGSTORE_NAMES, name);
	}
	(void)fsync(w->names);
}

/*
 * The root filesystem's top made root's and closed to writers, and the
 * mountpoints mcp-sandboxd needs made in it, before the digest: after
 * it, the tree never changes.
 */
static int
imgw_prepare(struct imgw *w, int stage, char *path, size_t size)
{
	struct stat	 st;
	char		 why[PATH_MAX + 128];
	int		 root;

	(void)str_fmt(path, size, "%s/%s", w->stagepath, IMGSTORE_ROOTFS);
	root = openat(stage, IMGSTORE_ROOTFS, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (root == -1)
		err(EXIT_ERROR, "%s", path);
	if (fchown(root, 0, 0) == -1 || fstat(root, &st) == -1 ||
	    fchmod(root, st.st_mode & 07755) == -1)
		err(EXIT_ERROR, "%s", path);
	if (image_rootfs_check(path, why, sizeof(why)) == -1)
		errx(EXIT_ERROR, "refused: %s", why);
	return root;
}

/*
 * Give the tree made in the stage its digest, put it in the store and
 * point name at it; what the store then says of it into im.
 */
void
imgw_commit(struct imgw *w, const char *name, const char *source,
    const char *srcdigest, struct imgstore_image *im)
{
	struct imgstore_sum	 sum;
	char			 path[PATH_MAX], why[PATH_MAX + 128];
	int			 stage, root;

	stage = openat(w->store, w->stage, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (stage == -1)
		err(EXIT_ERROR, "%s", w->stagepath);
	root = imgw_prepare(w, stage, path, sizeof(path));
	fprintf(stderr, "mcpctl: computing the digest of %s\n", path);
	if (imgstore_digest(root, &sum, why, sizeof(why)) == -1)
		errx(EXIT_ERROR, "refused: %s", why);
	close(root);
	if (sum.devices > 0)
		errx(EXIT_ERROR, "refused: the image holds %llu device "
		    "node%s (a sandbox's /dev is made for it)",
		    (unsigned long long)sum.devices, sum.devices == 1 ? "" : "s");
	if (spawn_quit)
		errx(EXIT_ERROR, "interrupted");
	imgw_info(w, stage, &sum, source, srcdigest);
	if (fchmod(stage, 0755) == -1 || syncfs(stage) == -1)
		err(EXIT_ERROR, "%s", w->stagepath);
	close(stage);

	if (renameat2(w->store, w->stage, w->store, sum.digest +
	    strlen(IMGSTORE_PREFIX), RENAME_NOREPLACE) == 0)
		w->stage[0] = '\0';
	else if (errno == EEXIST || errno == ENOTEMPTY)
		fprintf(stderr, "mcpctl: the store holds %s already\n",
		    sum.digest);
	else
		err(EXIT_ERROR, "%s", w->stagepath);
	(void)fsync(w->store);
	imgw_name(w, name, sum.digest);
	if (imgstore_lookup(w->state, name, im, why, sizeof(why)) != 0)
		errx(EXIT_ERROR, "%s", why);
}

/* Remove a name: 0, or -1 with a warning. */
int
imgw_unname(struct imgw *w, const char *name)
{
	if (!imgstore_valid_name(name)) {
		warnx("\"%s\": not a valid image name", name);
		return -1;
	}
	if (unlinkat(w->names, name, 0) == -1) {
		if (errno == ENOENT)
			warnx("%s: no such image", name);
		else
			warn("%s/%s/%s", w->images, IMGSTORE_NAMES, name);
		return -1;
	}
	(void)fsync(w->names);
	return 0;
}

/* Clean up, retire what no name refers to, and let go of the lock. */
void
imgw_close(struct imgw *w)
{
	if (w->stage[0] != '\0' &&
	    image_rmtree(w->store, w->stage, w->mnt) == -1)
		warn("%s", w->stagepath);
	w->stage[0] = '\0';
	imgw_gc(w);
	close(w->store);
	close(w->names);
	close(w->lock);
	imgw_current = NULL;
}
