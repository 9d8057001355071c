/*
 * Image trees on disk, for the two programs that keep them: mcp-sandboxd
 * (the host image) and mcpctl(8) (the image store).  A tree is built
 * under an IMAGE_NEW name and swapped in by rename; what a swap replaces
 * gets an IMAGE_OLD name and is removed once no process has its root in
 * it.  Every walk is relative to directory fds and never follows a
 * symbolic link.
 */
#ifndef MCPD_IMGTREE_H
#define MCPD_IMGTREE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define IMAGE_NEW	".new-"		/* a tree being built */
#define IMAGE_OLD	".old-"		/* a tree swapped out */

/* dfd/name as a directory, not through a symbolic link; -1 and errno. */
int	 image_opendir(int, const char *);
/* Owned by root, when running as root; 0, or -1 and errno. */
int	 image_own(int, const char *);
/* mkdirat() with the mode and root as owner; 0, or -1 and errno. */
int	 image_mkdir(int, const char *, mode_t);

/*
 * Check a rootfs image directory for use as a read-only root, creating
 * the mountpoints and files the bundle needs in it.  Nothing is followed
 * through a symbolic link.  0, or -1 with a message in err.
 */
int	 image_rootfs_check(const char *path, char *err, size_t errlen);

/*
 * Remove dfd/name and everything below it, never following a link and
 * never descending into a mount other than mnt (fd_mount_id()).  0, or
 * -1 and errno.
 */
int	 image_rmtree(int dfd, const char *name, uint64_t mnt);

/*
 * In the directory dfd, remove the IMAGE_NEW trees, whose builds never
 * finished, and the IMAGE_OLD ones in which no process has its root.
 * The caller makes sure no build of its own is under way.
 */
void	 image_sweep(int dfd, uint64_t mnt);

#endif
