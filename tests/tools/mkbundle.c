/*
 * mkbundle: OCI bundles made exactly as mcp-sandboxd makes a run_code
 * container's (sandboxd/bundle.c, with the host image and the default
 * limits), but running a command directly instead of sandbox-init, so
 * that `runc run` of it is the baseline the benchmark compares with.
 *
 *	mkbundle [-n count] -g cgparent -i init -u uidbase imagedir dir
 *	    command [arg ...]
 *		Build the host image in imagedir, then write count bundles
 *		(default 1), dir/0 to dir/count-1, each running command in
 *		the foreground with the cgroup /cgparent/<its own id>.
 *		Namespaces, uid mappings, seccomp, masked paths, mounts and
 *		limits are what sandboxd writes; only process.args differ.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy.h"
#include "util.h"
#include "../../sandboxd/bundle.h"
#include "../../sandboxd/image.h"

#define MKBUNDLE_MAX	1024

static void __attribute__((__noreturn__))
usage(void)
{
	fprintf(stderr, "usage: mkbundle [-n count] -g cgparent -i init "
	    "-u uidbase imagedir dir command [arg ...]\n");
	exit(1);
}

/* Write dir/config.json: b's configuration with args as the process. */
static void
write_one(const struct bundle *b, char *const args[])
{
	json_t	*c, *a;
	char	 why[256], path[PATH_MAX], tmp[PATH_MAX];
	size_t	 i;

	if ((c = bundle_config(b, why, sizeof(why))) == NULL)
		errx(1, "%s: %s", b->dir, why);
	if ((a = json_array()) == NULL)
		errx(1, "out of memory");
	for (i = 0; args[i] != NULL; i++)
		if (json_array_append_new(a, json_string(args[i])) == -1)
			errx(1, "out of memory");
	if (json_object_set_new(json_object_get(c, "process"), "args",
	    a) == -1)
		errx(1, "%s: no process", b->dir);
	if (str_fmt(path, sizeof(path), "%s/config.json", b->dir) == -1 ||
	    str_fmt(tmp, sizeof(tmp), "%s/.config.json", b->dir) == -1)
		errx(1, "%s: path too long", b->dir);
	if (json_dump_file(c, tmp, JSON_COMPACT) == -1 ||
	    chmod(tmp, 0600) == -1 || rename(tmp, path) == -1)
		err(1, "%s", path);
	json_decref(c);
}

int
main(int argc, char *argv[])
{
	struct image_host	 host;
	struct image		 img;
	struct limits		 lim;
	struct bundle		 b;
	uint64_t		 count = 1, base = 0;
	const char		*cgparent = NULL, *init = NULL, *e;
	char			 why[256], dir[PATH_MAX], id[33];
	char			 cg[128];
	uint64_t		 i;
	int			 ch;

	while ((ch = getopt(argc, argv, "+g:i:n:u:")) != -1) {
		switch (ch) {
		case 'g':
			cgparent = optarg;
			break;
		case 'i':
			init = optarg;
			break;
		case 'n':
			if ((e = str_to_u64(optarg, 1, MKBUNDLE_MAX,
			    &count)) != NULL)
				errx(1, "count %s: %s", optarg, e);
			break;
		case 'u':
			if ((e = str_to_u64(optarg, 65536,
			    UINT32_MAX - SBX_UID_RANGE, &base)) != NULL)
				errx(1, "uid base %s: %s", optarg, e);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 3 || cgparent == NULL || init == NULL || base == 0)
		usage();

	if (image_host_prepare(argv[0], &host, why, sizeof(why)) == -1)
		errx(1, "host image: %s", why);

	/* What sandboxd gives a run_code container of a tenant whose
	 * configuration sets no limits. */
	memset(&img, 0, sizeof(img));
	img.type = IMAGE_HOST;
	memset(&lim, 0, sizeof(lim));
	lim.memory = DEFAULT_MEMORY;
	lim.cpus = DEFAULT_CPUS;
	lim.pids = DEFAULT_PIDS;
	lim.disk = DEFAULT_DISK;
	lim.network = NET_NONE;

	memset(&b, 0, sizeof(b));
	b.id = id;
	b.dir = dir;
	b.image = &img;
	b.host = &host;
	b.init = init;
	b.uid_base = (uint32_t)base;
	b.limits = &lim;
	b.workspace = NULL;
	b.cgroup = cg;
	b.memsw = access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes",
	    F_OK) == 0;

	if (mkdir(argv[1], 0700) == -1 && errno != EEXIST)
		err(1, "%s", argv[1]);
	for (i = 0; i < count; i++) {
		snprintf(id, sizeof(id), "%032llx", (unsigned long long)i);
		if (str_fmt(dir, sizeof(dir), "%s/%llu", argv[1],
		    (unsigned long long)i) == -1 ||
		    str_fmt(cg, sizeof(cg), "/%s/%s", cgparent, id) == -1)
			errx(1, "path too long");
		if (mkdir(dir, 0700) == -1 && errno != EEXIST)
			err(1, "%s", dir);
		write_one(&b, argv + 2);
	}
	return 0;
}
