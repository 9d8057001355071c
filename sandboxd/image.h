/*
 * The "host" image: a read-only view of the host's /usr under a skeleton
 * root with a synthetic /etc.  Its trees are kept, and rootfs images
 * checked, by common/imgtree.h, which mcpctl(8) shares for the store.
 */
#ifndef MCPD_IMAGE_H
#define MCPD_IMAGE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_BINDS	16

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

#endif
