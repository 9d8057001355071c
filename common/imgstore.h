/*
 * The image store: root filesystems that mcpctl(8) builds with debootstrap
 * or imports from OCI images, kept read-only under the state directory
 * and named by the digest of their tree.
 *
 *	<state>/images/store/<hex>/rootfs	the root filesystem
 *	<state>/images/store/<hex>/info		"key value" lines
 *	<state>/images/names/<NAME>		"sha256:<hex>\n"
 *
 * <hex> is the 64 lowercase hex digits of the tree digest (imgdigest.c).
 * A store directory never changes once it is in place; names are replaced
 * by rename.  Everything here is read with O_NOFOLLOW and checked, since
 * a root daemon reads it.
 */
#ifndef MCPD_IMGSTORE_H
#define MCPD_IMGSTORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define IMGSTORE_DIGEST_LEN	71	/* "sha256:" + 64 hex */
#define IMGSTORE_HEX_LEN	64
#define IMGSTORE_PREFIX		"sha256:"
#define IMGSTORE_DIR		"images"	/* in the state directory */
#define IMGSTORE_STORE		"store"		/* in IMGSTORE_DIR */
#define IMGSTORE_NAMES		"names"		/* in IMGSTORE_DIR */
#define IMGSTORE_LOCK		".lock"		/* in IMGSTORE_DIR */
#define IMGSTORE_ROOTFS		"rootfs"	/* in store/<hex> */
#define IMGSTORE_INFO		"info"		/* in store/<hex> */
#define IMGSTORE_INFO_MAX	4096		/* bytes of an info file */
#define IMGSTORE_SOURCE_MAX	256
#define IMGSTORE_DEPTH_MAX	256	/* directory levels in a rootfs */

struct imgstore_image {
	char	 name[NAME_LEN];
	char	 digest[IMGSTORE_DIGEST_LEN + 1];
	char	 rootfs[PATH_MAX];	/* absolute path of its root filesystem */
	char	 source[IMGSTORE_SOURCE_MAX];
	int64_t	 created;		/* unix seconds */
	uint64_t size;			/* bytes */
	/* Beyond what sandboxd needs, for listings: */
	char	 source_digest[IMGSTORE_DIGEST_LEN + 1];	/* or "" */
	uint64_t files;			/* regular files */
};

/*
 * Every named image of the store under state_dir, sorted by name; a
 * missing store is an empty list.  0, or -1 with a message in err.  Free
 * the array with free().  Names whose target is missing or malformed are
 * skipped with a log_warnx().
 */
int	 imgstore_list(const char *state_dir, struct imgstore_image **,
	    size_t *, char *err, size_t errlen);

/* One name: 0 found, 1 no such name, -1 error (message in err). */
int	 imgstore_lookup(const char *state_dir, const char *name,
	    struct imgstore_image *, char *err, size_t errlen);

/*
 * One store directory by digest ("sha256:<hex>"), named or not; name is
 * left empty.  0 found, 1 no such image, -1 error (message in err).
 */
int	 imgstore_lookup_digest(const char *state_dir, const char *digest,
	    struct imgstore_image *, char *err, size_t errlen);

/*
 * The digest a name points to, whether or not the store holds that
 * image: 0, 1 if there is no such name, -1 with a message in err.
 */
int	 imgstore_resolve(const char *state_dir, const char *name,
	    char digest[IMGSTORE_DIGEST_LEN + 1], char *err, size_t errlen);

/* A name an image may have: name_valid(), and not "host". */
int	 imgstore_valid_name(const char *);

/* "sha256:" and 64 lowercase hex digits, and nothing else. */
int	 imgstore_valid_digest(const char *);

/* The 64 lowercase hex digits alone, as store/ names its trees. */
int	 imgstore_valid_hex(const char *);

/* What a walk of a tree found: its digest and what it holds. */
struct imgstore_sum {
	char	 digest[IMGSTORE_DIGEST_LEN + 1];
	uint64_t size;			/* bytes of regular files */
	uint64_t files;			/* regular files */
	uint64_t devices;		/* character and block devices */
};

/*
 * The tree digest of the directory rootfd (imgdigest.c has the encoding).
 * Nothing is followed through a symbolic link, no device is opened, and a
 * tree with another filesystem mounted in it or deeper than
 * IMGSTORE_DEPTH_MAX is refused.  0, or -1 with a message in err.
 */
int	 imgstore_digest(int rootfd, struct imgstore_sum *, char *err,
	    size_t errlen);

#endif
