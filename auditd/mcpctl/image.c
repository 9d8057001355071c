/*
 * mcpctl image build, import, list, rm and verify: the image store that
 * common/imgstore.h describes.  Building and importing happen here, in a
 * command an administrator runs as root, and never in a daemon: mcp-
 * sandboxd only reads the store.  list and verify only read it too, and
 * anyone who may read the store may run them.
 */
#include <sys/types.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"
#include "util.h"

static void
need_root(const char *cmd)
{
	if (geteuid() != 0)
		errx(EXIT_ERROR, "image %s: only root may change the image "
		    "store", cmd);
}

static void
need_name(const char *cmd, const char *name)
{
	if (imgstore_valid_name(name))
		return;
	warnx("\"%s\": not an image name (letters, digits, '.', '_' and "
	    "'-', not \"%s\")", name, HOST_IMAGE);
	usage_cmd(cmd);
}

int
image_build(struct mcpctl *ctx, int argc, char **argv)
{
	struct build		 b;
	struct imgw		 w;
	struct imgstore_image	 im;
	const char		*preset = "minimal", *suite = NULL;
	const char		*mirror = NULL;
	char			*extra = NULL, *s;
	int			 ch;

	optind = 0;
	while ((ch = getopt(argc, argv, "+i:m:p:s:")) != -1) {
		switch (ch) {
		case 'i':
			xasprintf(&s, "%s%s%s", extra != NULL ? extra : "",
			    extra != NULL ? "," : "", optarg);
			free(extra);
			extra = s;
			break;
		case 'm':
			mirror = optarg;
			break;
		case 'p':
			preset = optarg;
			break;
		case 's':
			suite = optarg;
			break;
		default:
			usage_cmd("build");
		}
	}
	if (argc - optind != 1)
		usage_cmd("build");
	need_name("build", argv[optind]);
	need_root("build");
	build_options(&b, preset, suite, mirror, extra);
	imgw_open(&w, mcpctl_statedir(ctx, EXIT_ERROR));
	spawn_signals();
	imgw_stage(&w);
	build_rootfs(&b, w.stagepath);
	imgw_commit(&w, argv[optind], b.source, NULL, &im);
	imgw_close(&w);
	ctx->out->image_added(&im);
	free(b.include);
	free(extra);
	return 0;
}

int
image_import(struct mcpctl *ctx, int argc, char **argv)
{
	struct import		 imp;
	struct imgw		 w;
	struct imgstore_image	 im;

	cmd_operands("import", &argc, &argv, 0, -1);
	if (argc != 2)
		usage_cmd("import");
	need_name("import", argv[0]);
	need_root("import");
	import_options(&imp, argv[1]);
	imgw_open(&w, mcpctl_statedir(ctx, EXIT_ERROR));
	spawn_signals();
	imgw_stage(&w);
	import_rootfs(&imp, w.stagepath);
	imgw_commit(&w, argv[0], imp.source, imp.digest, &im);
	imgw_close(&w);
	ctx->out->image_added(&im);
	return 0;
}

int
image_list(struct mcpctl *ctx, int argc, char **argv)
{
	struct imgstore_image	*v;
	char			 why[PATH_MAX + 128];
	size_t			 n;

	cmd_operands("list", &argc, &argv, 0, -1);
	if (argc != 0)
		usage_cmd("list");
	if (imgstore_list(mcpctl_statedir(ctx, EXIT_ERROR), &v, &n, why,
	    sizeof(why)) == -1)
		errx(EXIT_ERROR, "%s", why);
	ctx->out->image_list(v, n);
	free(v);
	return 0;
}

int
image_rm(struct mcpctl *ctx, int argc, char **argv)
{
	struct imgw	 w;
	int		 i, rv = 0;

	cmd_operands("rm", &argc, &argv, 0, -1);
	if (argc == 0)
		usage_cmd("rm");
	need_root("rm");
	imgw_open(&w, mcpctl_statedir(ctx, EXIT_ERROR));
	for (i = 0; i < argc; i++)
		if (imgw_unname(&w, argv[i]) == -1)
			rv = EXIT_ERROR;
	imgw_close(&w);
	return rv;
}

/* A name, a digest, or a digest's 64 hex digits alone. */
static void
verify_lookup(const char *state, const char *arg, struct imgstore_image *im)
{
	char	 digest[IMGSTORE_DIGEST_LEN + 1], why[PATH_MAX + 128];
	int	 r;

	if (imgstore_valid_hex(arg)) {
		(void)str_fmt(digest, sizeof(digest), "%s%s", IMGSTORE_PREFIX,
		    arg);
		r = imgstore_lookup_digest(state, digest, im, why,
		    sizeof(why));
	} else if (imgstore_valid_digest(arg))
		r = imgstore_lookup_digest(state, arg, im, why, sizeof(why));
	else
		r = imgstore_lookup(state, arg, im, why, sizeof(why));
	if (r == 1)
		errx(EXIT_UNVERIFIED, "%s: no such image", arg);
	if (r == -1)
		errx(EXIT_UNVERIFIED, "%s", why);
}

int
image_verify(struct mcpctl *ctx, int argc, char **argv)
{
	struct imgstore_image	 im;
	struct image_check	 chk;
	char			 why[PATH_MAX + 128];
	int			 root;

	cmd_operands("verify", &argc, &argv, 0, -1);
	if (argc != 1)
		usage_cmd("verify");
	verify_lookup(mcpctl_statedir(ctx, EXIT_UNVERIFIED), argv[0], &im);
	memset(&chk, 0, sizeof(chk));
	chk.im = &im;
	if ((root = open(im.rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		err(EXIT_UNVERIFIED, "%s", im.rootfs);
	if (imgstore_digest(root, &chk.sum, why, sizeof(why)) == -1)
		errx(EXIT_UNVERIFIED, "%s", why);
	close(root);
	if (strcmp(chk.sum.digest, im.digest) != 0) {
		chk.status = EXIT_TAMPERED;
		(void)str_fmt(chk.error, sizeof(chk.error), "the tree's digest "
		    "is %s, not %s", chk.sum.digest, im.digest);
	} else if (chk.sum.size != im.size || chk.sum.files != im.files) {
		chk.status = EXIT_TAMPERED;
		(void)str_fmt(chk.error, sizeof(chk.error), "its info says "
		    "%llu files of %llu bytes, the tree holds %llu of %llu",
		    (unsigned long long)im.files, (unsigned long long)im.size,
		    (unsigned long long)chk.sum.files,
		    (unsigned long long)chk.sum.size);
	}
	ctx->out->image_verify(&chk);
	return chk.status;
}
