/*
 * Container images on the host side: the "host" image, a read-only view
 * of the host's /usr under a skeleton root with a synthetic /etc, and the
 * checks a rootfs image directory must pass before it becomes a root.
 * The store of rootfs images that mcpctl(8) builds and imports replaces
 * and removes its trees with the same helpers as the host image.
 */
#ifndef MCPD_IMAGE_H
#define MCPD_IMAGE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_BINDS	16
#define IMAGE_NEW	".new-"		/* a tree being built */
#define IMAGE_OLD	".old-"		/* a tree swapped out */

struct image_host {
	char	 rootfs[PATH_MAX];	/* read-only skeleton root */
	char	 etc[PATH_MAX];		/* synthetic /etc */
	/* Host directories bound read-only at the same path, e.g. "/usr". */
	char	 binds[IMAGE_MAX_BINDS][64];
	int	 nbinds;
};

/*
 * (Re)build the host image under dir ("<state>/images/host"): dir/rootfs
 * and dir/etc.  Trees replaced by a rebuild are removed once no process
 * has its root in them any more.  0, or -1 with a message in err.
 */
int	 image_host_prepare(const char *dir, struct image_host *,
	    char *err, size_t errlen);

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
