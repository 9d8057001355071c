/*
 * mcpctl image import: a root filesystem from an OCI image layout or a
 * docker-archive tar.  skopeo copies the image, checking every blob
 * against its digest, into an OCI layout of our own in the stage; umoci
 * unpacks that, resolving every path of every layer inside the tree it
 * makes.  Neither ever works on the source in place, and nothing of the
 * stage is kept but the root filesystem.  Whatever either refuses, the
 * import refuses.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "imgtree.h"
#include "mcpctl.h"
#include "util.h"

#define INDEX_MAX	(1 << 20)	/* bytes of an index.json */
#define REF_KEY		"org.opencontainers.image.ref.name"
#define STAGE_REF	"import"

/* The characters of a tag, or of skopeo's docker-archive references. */
static int
valid_ref(const char *s)
{
	size_t	 n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-/:@+");

	return n > 0 && s[n] == '\0' && n < 128;
}

/* SOURCE[:TAG]: a layout directory or an archive file. */
void
import_options(struct import *im, const char *arg)
{
	struct stat	 st;
	char		*path, *colon;

	memset(im, 0, sizeof(*im));
	path = xstrdup(arg);
	/* skopeo splits at the first colon: a path cannot hold one. */
	if ((colon = strchr(path, ':')) != NULL) {
		*colon++ = '\0';
		if (!valid_ref(colon) ||
		    str_copy(im->ref, colon, sizeof(im->ref)) == -1)
			errx(EXIT_ERROR, "\"%s\": not a tag", colon);
	}
	if (realpath(path, im->path) == NULL)
		err(EXIT_ERROR, "%s", path);
	free(path);
	if (strchr(im->path, ':') != NULL)
		errx(EXIT_ERROR, "%s: a path with a colon cannot be imported",
		    im->path);
	if (stat(im->path, &st) == -1)
		err(EXIT_ERROR, "%s", im->path);
	if (S_ISREG(st.st_mode))
		im->archive = 1;
	else if (!S_ISDIR(st.st_mode))
		errx(EXIT_ERROR, "%s: neither an OCI image layout nor a "
		    "docker-archive file", im->path);
}

/* index.json of the layout dir, parsed: exits if it is not there. */
static json_t *
import_index(const char *dir)
{
	json_error_t	 jerr;
	struct stat	 st;
	json_t		*j;
	char		*buf;
	ssize_t		 n;
	int		 dfd, fd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(EXIT_ERROR, "%s", dir);
	if (faccessat(dfd, "oci-layout", F_OK, AT_SYMLINK_NOFOLLOW) == -1)
		errx(EXIT_ERROR, "%s: not an OCI image layout (no oci-layout "
		    "file)", dir);
	fd = openat(dfd, "index.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	close(dfd);
	if (fd == -1 || fstat(fd, &st) == -1)
		err(EXIT_ERROR, "%s/index.json", dir);
	if (!S_ISREG(st.st_mode) || st.st_size > INDEX_MAX)
		errx(EXIT_ERROR, "%s/index.json: not a file of at most %d "
		    "bytes", dir, INDEX_MAX);
	buf = xmalloc((size_t)st.st_size + 1);
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n != st.st_size)
		errx(EXIT_ERROR, "%s/index.json: short read", dir);
	j = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (j == NULL || !json_is_array(json_object_get(j, "manifests")))
		errx(EXIT_ERROR, "%s/index.json: not an OCI index", dir);
	return j;
}

static const char *
manifest_ref(json_t *m)
{
	return json_string_value(json_object_get(json_object_get(m,
	    "annotations"), REF_KEY));
}

/*
 * With no tag given, the layout's only image, or else the one tagged
 * "latest".
 */
static void
import_pick(struct import *im)
{
	json_t		*idx, *mf, *m;
	const char	*ref;
	size_t		 i, n;

	idx = import_index(im->path);
	mf = json_object_get(idx, "manifests");
	if ((n = json_array_size(mf)) == 0)
		errx(EXIT_ERROR, "%s holds no image", im->path);
	for (i = 0; i < n; i++) {
		ref = manifest_ref(json_array_get(mf, i));
		if (n == 1 || (ref != NULL && strcmp(ref, "latest") == 0))
			break;
	}
	if (i == n) {
		fprintf(stderr, "mcpctl: %s holds %zu images; its tags:",
		    im->path, n);
		json_array_foreach(mf, i, m)
			if ((ref = manifest_ref(m)) != NULL && valid_ref(ref))
				fprintf(stderr, " %s", ref);
		fprintf(stderr, "\n");
		errx(EXIT_ERROR, "name one as %s:TAG", im->path);
	}
	ref = manifest_ref(json_array_get(mf, i));
	if (ref != NULL && valid_ref(ref))
		(void)str_copy(im->ref, ref, sizeof(im->ref));
	json_decref(idx);
}

/* The digest of the manifest skopeo wrote into the stage's layout. */
static void
import_digest(struct import *im, const char *layout)
{
	json_t		*idx, *m;
	const char	*ref, *digest;
	size_t		 i;

	idx = import_index(layout);
	json_array_foreach(json_object_get(idx, "manifests"), i, m) {
		ref = manifest_ref(m);
		digest = json_string_value(json_object_get(m, "digest"));
		if (ref != NULL && strcmp(ref, STAGE_REF) == 0 &&
		    digest != NULL && imgstore_valid_digest(digest))
			(void)str_copy(im->digest, digest, sizeof(im->digest));
	}
	json_decref(idx);
	if (im->digest[0] == '\0')
		errx(EXIT_ERROR, "%s/index.json: no sha256 manifest digest",
		    layout);
}

/* Run a tool on the image; exits if it fails. */
static void
import_run(const char *const argv[], const char *tmpdir)
{
	int	 rc;

	if ((rc = spawn(argv, tmpdir)) != 0)
		errx(EXIT_ERROR, "refused: %s failed (status %d)", argv[0],
		    rc);
	if (spawn_quit)
		errx(EXIT_ERROR, "interrupted");
}

/* Make dir/rootfs from the image; its manifest's digest into im. */
void
import_rootfs(struct import *im, const char *dir)
{
	struct stat	 st;
	char		 src[PATH_MAX + 160], dst[PATH_MAX + 32];
	char		 layout[PATH_MAX], bundle[PATH_MAX], tmp[PATH_MAX];
	const char	*skopeo[] = { "skopeo", "--insecure-policy", "copy",
			    src, dst, NULL };
	const char	*umoci[] = { "umoci", "unpack", "--image", dst,
			    bundle, NULL };
	uint64_t	 mnt;
	int		 dfd;

	if (!im->archive && im->ref[0] == '\0')
		import_pick(im);
	(void)str_fmt(im->source, sizeof(im->source), "%s %s%s%s",
	    im->archive ? "docker-archive" : "oci-layout", im->path,
	    im->ref[0] != '\0' ? ":" : "", im->ref);
	if (str_fmt(src, sizeof(src), "%s:%s%s%s", im->archive ?
	    "docker-archive" : "oci", im->path, im->ref[0] != '\0' ? ":" : "",
	    im->ref) == -1 ||
	    str_fmt(layout, sizeof(layout), "%s/layout", dir) == -1 ||
	    str_fmt(dst, sizeof(dst), "oci:%s:%s", layout, STAGE_REF) == -1 ||
	    str_fmt(bundle, sizeof(bundle), "%s/bundle", dir) == -1 ||
	    str_fmt(tmp, sizeof(tmp), "%s/tmp", dir) == -1)
		errx(EXIT_ERROR, "%s: path too long", dir);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(dfd, &st) == -1)
		err(EXIT_ERROR, "%s", dir);
	/* skopeo's temporary files: in the stage, gone with it. */
	if (mkdirat(dfd, "tmp", 0700) == -1)
		err(EXIT_ERROR, "%s", tmp);

	fprintf(stderr, "mcpctl: copying %s\n", src);
	import_run(skopeo, tmp);
	import_digest(im, layout);
	/* umoci takes "layout:tag" where skopeo took "oci:layout:tag". */
	memmove(dst, dst + 4, strlen(dst + 4) + 1);
	fprintf(stderr, "mcpctl: unpacking %s\n", im->digest);
	import_run(umoci, tmp);
	if (renameat(dfd, "bundle/" IMGSTORE_ROOTFS, dfd, IMGSTORE_ROOTFS) ==
	    -1)
		err(EXIT_ERROR, "%s/%s", bundle, IMGSTORE_ROOTFS);
	mnt = fd_mount_id(dfd, &st);
	if (image_rmtree(dfd, "bundle", mnt) == -1 ||
	    image_rmtree(dfd, "layout", mnt) == -1 ||
	    image_rmtree(dfd, "tmp", mnt) == -1)
		err(EXIT_ERROR, "%s", dir);
	close(dfd);
}
