/*
 * Image trees on disk: see imgtree.h.
 *
 * A tree replaced by a swap is deleted only once no process has its root
 * in it: removing a directory that is a mountpoint in a container's mount
 * namespace silently detaches that mount there, so deleting a tree in use
 * would pull /usr and /etc out of running containers.
 *
 * Every walk is relative to directory fds and opens with O_NOFOLLOW, so a
 * symbolic link planted in an image can neither redirect a write nor a
 * deletion to the host.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgtree.h"
#include "util.h"

/*
 * A tree unpacked from an image may be as deep as a path of PATH_MAX
 * bytes can reach, one byte and a slash a level: whatever was made must
 * be removable.  Each level holds a descriptor.
 */
#define IMAGE_RMTREE_DEPTH	(PATH_MAX / 2)

#define image_err	errfmt		/* util.c's */

/* Inside a rootfs image: what the bundle mounts over or binds onto. */
static const struct {
	const char	*path;
	mode_t		 mode;		/* S_IFDIR or S_IFREG, permissions */
} image_rootfs_need[] = {
	{ "proc", S_IFDIR | 0755 }, { "dev", S_IFDIR | 0755 },
	{ "sys", S_IFDIR | 0755 }, { "tmp", S_IFDIR | 01777 },
	{ "workspace", S_IFDIR | 0755 }, { ".mcpd", S_IFDIR | 0755 },
	{ ".mcpd/sandbox-init", S_IFREG | 0644 }, { "etc", S_IFDIR | 0755 },
	{ "etc/passwd", S_IFREG | 0644 }, { "etc/group", S_IFREG | 0644 },
	{ "etc/hosts", S_IFREG | 0644 }, { "etc/resolv.conf", S_IFREG | 0644 },
};

int
image_opendir(int dfd, const char *name)
{
	return openat(dfd, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Root owns everything in an image; a no-op when not running as root. */
int
image_own(int dfd, const char *name)
{
	if (geteuid() != 0)
		return 0;
	return fchownat(dfd, name, 0, 0, AT_SYMLINK_NOFOLLOW);
}

int
image_mkdir(int dfd, const char *name, mode_t mode)
{
	if (mkdirat(dfd, name, 0700) == -1 ||
	    fchmodat(dfd, name, mode, 0) == -1)
		return -1;
	return image_own(dfd, name);
}

/*
 * Remove dfd/name and everything below it.  Never follows a link, and
 * never descends into another mount: something mounted in a tree of ours
 * is not ours to delete.
 */
static int
image_rmtree_at(int dfd, const char *name, uint64_t mnt, int depth)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 fd, r = 0;

	if (depth > IMAGE_RMTREE_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	if ((fd = image_opendir(dfd, name)) == -1) {
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(dfd, name, 0);
		return errno == ENOENT ? 0 : -1;
	}
	if (fstat(fd, &st) == -1) {
		close(fd);
		return -1;
	}
	if (fd_mount_id(fd, &st) != mnt) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
			r = image_rmtree_at(dirfd(d), de->d_name, mnt,
			    depth + 1);
		else if (unlinkat(dirfd(d), de->d_name, 0) == -1 &&
		    errno != ENOENT)
			r = -1;
	}
	closedir(d);
	if (r == -1)
		return -1;
	if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

int
image_rmtree(int dfd, const char *name, uint64_t mnt)
{
	return image_rmtree_at(dfd, name, mnt, 0);
}

/* The real uid of process pid, from its status (no ptrace needed); -1. */
static long
image_proc_uid(int procfd, const char *pid)
{
	char	 path[NAME_MAX + 16], buf[1024];
	char	*u;
	ssize_t	 n;
	long	 uid = -1;
	int	 fd;

	snprintf(path, sizeof(path), "%s/status", pid);
	if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		if ((u = strstr(buf, "\nUid:")) != NULL)
			uid = strtol(u + 5, NULL, 10);
	}
	return uid;
}

/*
 * Whether any process has its root directory in tree/rootfs.  A process
 * that even root may not inspect counts as a user of the tree, unless it
 * runs as host root: no process of a container ever does.
 */
static int
image_in_use(int dfd, const char *tree)
{
	struct stat	 root, st;
	struct dirent	*de;
	DIR		*d;
	char		 path[NAME_MAX + 16];
	int		 fd, used = 0;

	if ((fd = image_opendir(dfd, tree)) == -1)
		return 0;
	if (fstatat(fd, "rootfs", &root, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(root.st_mode)) {
		close(fd);
		return 0;
	}
	close(fd);
	if ((d = opendir("/proc")) == NULL)
		return 1;		/* cannot tell: keep it */
	while (!used && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/root", de->d_name);
		if (fstatat(dirfd(d), path, &st, 0) == 0)
			used = st.st_dev == root.st_dev &&
			    st.st_ino == root.st_ino;
		else if (errno != ENOENT && errno != ESRCH)
			used = image_proc_uid(dirfd(d), de->d_name) != 0;
	}
	closedir(d);
	return used;
}

/*
 * Remove leftovers: trees of builds that never finished, and swapped-out
 * trees that no container uses any more.
 */
void
image_sweep(int dfd, uint64_t mnt)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	/* Not dup(): that would share, and exhaust, dfd's offset. */
	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, IMAGE_NEW, strlen(IMAGE_NEW)) == 0 ||
		    (strncmp(de->d_name, IMAGE_OLD, strlen(IMAGE_OLD)) == 0 &&
		    !image_in_use(dfd, de->d_name)))
			(void)image_rmtree(dfd, de->d_name, mnt);
	}
	closedir(d);
}

/* Make a missing entry of image_rootfs_need. */
static int
image_rootfs_make(int pfd, const char *name, mode_t mode)
{
	int	 fd, saved;

	if (S_ISDIR(mode))
		return image_mkdir(pfd, name, mode & 07777);
	fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if (fchmod(fd, mode & 07777) == -1 ||
	    (geteuid() == 0 && fchown(fd, 0, 0) == -1)) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/*
 * Check, or with create complete, each entry of image_rootfs_need.
 * Parents are opened with O_NOFOLLOW, entries looked at without following
 * links, and made with O_EXCL: a link is never written through.
 */
static int
image_rootfs_pass(int root, const char *path, int create, char *err,
    size_t errlen)
{
	struct stat	 st;
	const char	*name, *slash, *what;
	char		 parent[64];
	mode_t		 want;
	size_t		 i;
	int		 pfd, r;

	for (i = 0; i < nitems(image_rootfs_need); i++) {
		name = image_rootfs_need[i].path;
		want = image_rootfs_need[i].mode;
		what = S_ISDIR(want) ? "directory" : "regular file";
		pfd = root;
		if ((slash = strchr(name, '/')) != NULL) {
			snprintf(parent, sizeof(parent), "%.*s",
			    (int)(slash - name), name);
			pfd = openat(root, parent, O_PATH | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (pfd == -1 && errno == ENOENT && !create)
				continue;	/* made in the second pass */
			if (pfd == -1)
				return image_err(err, errlen, "%s/%s: %s",
				    path, parent, strerror(errno));
			name = slash + 1;
		}
		r = 0;
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISLNK(st.st_mode))
				r = image_err(err, errlen, "%s/%s: is a "
				    "symbolic link", path,
				    image_rootfs_need[i].path);
			else if ((st.st_mode & S_IFMT) != (want & S_IFMT))
				r = image_err(err, errlen, "%s/%s: not a %s",
				    path, image_rootfs_need[i].path, what);
			/* A tmp without the sticky bit would be a /tmp the
			 * sandbox user cannot write: runc copies the mode. */
			else if (create && (want & S_ISVTX) &&
			    (st.st_mode & 07777) != (want & 07777) &&
			    fchmodat(pfd, name, want & 07777, 0) == -1)
				r = image_err(err, errlen, "%s/%s: %s", path,
				    image_rootfs_need[i].path,
				    strerror(errno));
		} else if (errno != ENOENT)
			r = image_err(err, errlen, "%s/%s: %s", path,
			    image_rootfs_need[i].path, strerror(errno));
		else if (create && image_rootfs_make(pfd, name, want) == -1)
			r = image_err(err, errlen, "%s/%s: %s", path,
			    image_rootfs_need[i].path, strerror(errno));
		if (pfd != root)
			close(pfd);
		if (r == -1)
			return -1;
	}
	return 0;
}

int
image_rootfs_check(const char *path, char *err, size_t errlen)
{
	struct stat	 lst, st;
	int		 root, r;

	if (path == NULL || path[0] != '/')
		return image_err(err, errlen, "rootfs path must be absolute");
	if (lstat(path, &lst) == -1)
		return image_err(err, errlen, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(lst.st_mode))
		return image_err(err, errlen, "%s: not a directory", path);
	if ((root = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return image_err(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(root, &st) == -1 || st.st_dev != lst.st_dev ||
	    st.st_ino != lst.st_ino) {
		close(root);
		return image_err(err, errlen, "%s: changed while checked",
		    path);
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(root);
		return image_err(err, errlen, "%s: must be owned by root and "
		    "writable by no one else", path);
	}
	/* Refuse before changing anything, then complete. */
	r = image_rootfs_pass(root, path, 0, err, errlen);
	if (r == 0)
		r = image_rootfs_pass(root, path, 1, err, errlen);
	close(root);
	return r;
}
