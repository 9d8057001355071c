/*
 * The image store's reader and tree digest (common/imgstore.c,
 * imgdigest.c): the digest against its encoding written out by hand, the
 * same tree made in another order, every change that must show and the
 * timestamps that must not; then lookup and list over stores whose
 * names, info files and trees are malformed or hostile.  Runs as root:
 * the store wants root's files, and the trees root's owners.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "imgstore.h"
#include "log.h"
#include "util.h"
#include "../tap.h"

#define HEX_A	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HEX_C	"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static char	 tmp[64];

/* dir/name, in one of a few rotating buffers: enough for any one call. */
static const char *
at(const char *dir, const char *name)
{
	static char	 buf[4][PATH_MAX];
	static int	 n;
	char		*p = buf[n++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static int
put(const char *p, const char *s, mode_t mode)
{
	int	 fd, r;

	(void)unlink(p);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) ==
	    -1)
		return -1;
	r = write_all(fd, s, strlen(s));
	if (fchmod(fd, mode) == -1)
		r = -1;
	close(fd);
	return r;
}

static void
mkdir_m(const char *p, mode_t mode)
{
	if ((mkdir(p, mode) == -1 && errno != EEXIST) || chmod(p, mode) == -1)
		diag("mkdir %s: %s", p, strerror(errno));
}

/* The digest of dir, or "error: why". */
static const char *
digest(const char *dir, struct imgstore_sum *sum)
{
	static char		 out[PATH_MAX + 128];
	struct imgstore_sum	 s;
	int			 fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(out, sizeof(out), "error: %s", strerror(errno));
		return out;
	}
	if (imgstore_digest(fd, &s, out + 7, sizeof(out) - 7) == -1)
		memcpy(out, "error: ", 7);
	else
		(void)str_copy(out, s.digest, sizeof(out));
	close(fd);
	if (sum != NULL)
		*sum = s;
	return out;
}

/* ---- the digest ---- */

/* The encoding, by hand: a directory with a file and a link. */
static void
test_digest_encoding(void)
{
	static const char	 rec[] =
	    ".\0d 0755 0 0\n"
	    "a\0f 0644 0 0 3 "
	    "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"
	    "\n"
	    "l\0l 0777 0 0 1 a\n"
	    "s\0d 4750 0 0\n"
	    "s/x\0p 0600 0 0\n";
	unsigned char		 bin[crypto_hash_sha256_BYTES];
	char			 want[IMGSTORE_DIGEST_LEN + 1];
	struct imgstore_sum	 sum;

	mkdir_m("enc", 0755);
	put("enc/a", "hi\n", 0644);
	if (symlink("a", "enc/l") == -1)
		diag("symlink: %s", strerror(errno));
	mkdir_m("enc/s", 04750);
	if (mkfifo("enc/s/x", 0600) == -1 ||
	    chmod("enc/s/x", 0600) == -1)
		diag("mkfifo: %s", strerror(errno));
	crypto_hash_sha256(bin, (const unsigned char *)rec, sizeof(rec) - 1);
	memcpy(want, "sha256:", 7);
	sodium_bin2hex(want + 7, sizeof(want) - 7, bin, sizeof(bin));
	ok(strcmp(digest("enc", &sum), want) == 0,
	    "the digest is SHA-256 over the records as imgdigest.c has them");
	ok(sum.size == 3 && sum.files == 1 && sum.devices == 0,
	    "size and files count the regular files' bytes");
}

/* The same tree, its entries made in the order given (0 or 1). */
static void
make_tree(const char *dir, int reverse)
{
	static const char *const files[] = { "a", "b", "c", "B", "b.x",
	    "\xc3\xa9t\xc3\xa9" };
	size_t	 i, k;

	mkdir_m(dir, 0755);
	for (k = 0; k < nitems(files); k++) {
		i = reverse ? nitems(files) - 1 - k : k;
		put(at(dir, files[i]), files[i], 0644);
	}
	if (reverse) {
		mkdir_m(at(dir, "sub"), 0711);
		put(at(dir, "sub/deep"), "deep", 0600);
		if (symlink("../a", at(dir, "sub/up")) == -1)
			diag("symlink: %s", strerror(errno));
		put(at(dir, "run"), "#!/bin/sh\n", 04755);
		/* A hard link where the other tree has a copy. */
		put(at(dir, "h1"), "same", 0644);
		if (link(at(dir, "h1"), at(dir, "h2")) == -1)
			diag("link: %s", strerror(errno));
	} else {
		put(at(dir, "h1"), "same", 0644);
		put(at(dir, "h2"), "same", 0644);
		put(at(dir, "run"), "#!/bin/sh\n", 04755);
		mkdir_m(at(dir, "sub"), 0711);
		if (symlink("../a", at(dir, "sub/up")) == -1)
			diag("symlink: %s", strerror(errno));
		put(at(dir, "sub/deep"), "deep", 0600);
	}
}

static int
differs(const char *what, const char *base)
{
	char	 d[IMGSTORE_DIGEST_LEN + 1];

	(void)str_copy(d, digest("t2", NULL), sizeof(d));
	if (strcmp(d, base) == 0 || strncmp(d, "error", 5) == 0) {
		diag("%s: %s", what, d);
		return 0;
	}
	return 1;
}

static int
same(const char *what, const char *base)
{
	const char	*d = digest("t2", NULL);

	if (strcmp(d, base) != 0) {
		diag("%s: %s, not %s", what, d, base);
		return 0;
	}
	return 1;
}

static void
test_digest_canonical(void)
{
	char			 base[IMGSTORE_DIGEST_LEN + 1];
	struct timespec		 ts[2] = { { 0, 0 }, { 1000000, 0 } };

	make_tree("t1", 0);
	make_tree("t2", 1);
	(void)str_copy(base, digest("t1", NULL), sizeof(base));
	ok(strncmp(base, "sha256:", 7) == 0, "a tree's digest: %s", base);
	ok(same("reverse", base), "the same tree made in the reverse order, "
	    "a hard link for a copy, has the same digest");

	utimensat(AT_FDCWD, "t2/a", ts, AT_SYMLINK_NOFOLLOW);
	utimensat(AT_FDCWD, "t2/sub", ts, AT_SYMLINK_NOFOLLOW);
	ok(same("times", base), "timestamps are left out");

	chmod("t2/a", 0640);
	ok(differs("mode", base), "a mode changed shows");
	chmod("t2/a", 0644);
	chmod("t2/run", 0755);
	ok(differs("setuid", base), "a setuid bit dropped shows");
	chmod("t2/run", 04755);
	if (chown("t2/sub/deep", 1000, 0) == -1)
		diag("chown: %s", strerror(errno));
	ok(differs("owner", base), "an owner changed shows");
	if (chown("t2/sub/deep", 0, 1000) == -1)
		diag("chown: %s", strerror(errno));
	ok(differs("group", base), "a group changed shows");
	if (chown("t2/sub/deep", 0, 0) == -1)
		diag("chown: %s", strerror(errno));
	put("t2/b", "B", 0644);
	ok(differs("content", base), "a byte changed shows");
	put("t2/b", "b", 0644);
	unlink("t2/sub/up");
	if (symlink("../b", "t2/sub/up") == -1)
		diag("symlink: %s", strerror(errno));
	ok(differs("link", base), "a link's target changed shows");
	unlink("t2/sub/up");
	if (symlink("../a", "t2/sub/up") == -1)
		diag("symlink: %s", strerror(errno));
	put("t2/sub/new", "", 0644);
	ok(differs("new file", base), "an empty file added shows");
	unlink("t2/sub/new");
	rename("t2/c", "t2/d");
	ok(differs("rename", base), "a file renamed shows");
	rename("t2/d", "t2/c");
	ok(same("restored", base), "undone, the digest is as before");

	if (setxattr("t2/a", "user.mcpd", "x", 1, 0) == 0) {
		ok(differs("xattr", base), "an extended attribute shows");
		removexattr("t2/a", "user.mcpd");
	} else
		ok(1, "# SKIP no user xattrs here: %s", strerror(errno));
	if (setxattr("t2/sub", "trusted.mcpd", "x", 1, 0) == 0) {
		ok(same("trusted xattr", base), "trusted.* attributes, which "
		    "only root sees, are left out");
		removexattr("t2/sub", "trusted.mcpd");
	} else
		ok(1, "# SKIP no trusted xattrs here: %s", strerror(errno));
}

static void
test_digest_refusals(void)
{
	struct imgstore_sum	 sum;
	const char		*d;
	char			 p[PATH_MAX];
	int			 i;

	mkdir_m("dev", 0755);
	if (mknod("dev/null", S_IFCHR | 0666, makedev(1, 3)) == -1)
		diag("mknod: %s", strerror(errno));
	d = digest("dev", &sum);
	ok(strncmp(d, "sha256:", 7) == 0 && sum.devices == 1,
	    "devices are digested, and counted: %s", d);

	(void)str_copy(p, "deep", sizeof(p));
	for (i = 0; i <= IMGSTORE_DEPTH_MAX + 1; i++) {
		mkdir_m(p, 0755);
		memcpy(p + strlen(p), "/d", 3);
	}
	d = digest("deep", NULL);
	ok(strstr(d, "levels deep") != NULL, "a tree deeper than %d levels "
	    "is refused: %s", IMGSTORE_DEPTH_MAX, strlen(d) > 40 ?
	    d + strlen(d) - 40 : d);

	/* A mount of our own, gone with this process's namespace. */
	mkdir_m("mnt", 0755);
	mkdir_m("mnt/m", 0755);
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount("tmpfs", "mnt/m", "tmpfs", 0, "size=1m") == -1) {
		ok(1, "# SKIP cannot mount: %s", strerror(errno));
		return;
	}
	d = digest("mnt", NULL);
	ok(strstr(d, "another filesystem") != NULL, "a mount in the tree is "
	    "refused: %s", d);
	(void)umount("mnt/m");
}

/* ---- lookup and list ---- */

static char	 state[PATH_MAX];	/* the state directory */

/* A good store entry for hex, named name if not NULL. */
static void
image(const char *hex, const char *name)
{
	char	 info[512];

	mkdir_m(at("state/images/store", hex), 0755);
	mkdir_m(at(at("state/images/store", hex), "rootfs"), 0755);
	snprintf(info, sizeof(info), "digest sha256:%s\nsource test %s\n"
	    "created 1795273200\nsize 42\nfiles 7\n", hex, hex);
	put(at(at("state/images/store", hex), "info"), info, 0644);
	if (name != NULL) {
		snprintf(info, sizeof(info), "sha256:%s\n", hex);
		put(at("state/images/names", name), info, 0644);
	}
}

static int
lookup(const char *name, struct imgstore_image *im, char *why, size_t len)
{
	why[0] = '\0';
	return imgstore_lookup(state, name, im, why, len);
}

/* Lookup of name refused, with a message that holds want. */
static int
refused(const char *name, const char *want)
{
	struct imgstore_image	 im;
	char			 why[PATH_MAX + 128];
	int			 r;

	r = lookup(name, &im, why, sizeof(why));
	if (r != -1 || strstr(why, want) == NULL || im.digest[0] != '\0') {
		diag("%s: %d, \"%s\"", name, r, why);
		return 0;
	}
	return 1;
}

static int
found(const char *name)
{
	struct imgstore_image	 im;
	char			 why[PATH_MAX + 128];

	if (lookup(name, &im, why, sizeof(why)) != 0) {
		diag("%s: %s", name, why);
		return 0;
	}
	return 1;
}

static void
put_info(const char *hex, const char *text)
{
	put(at(at("state/images/store", hex), "info"), text, 0644);
}

static void
test_lookup(void)
{
	struct imgstore_image	 im;
	char			 why[PATH_MAX + 128];

	ok(lookup("none", &im, why, sizeof(why)) == 1,
	    "no store at all: no such name");
	mkdir_m("state", 0755);
	mkdir_m("state/images", 0755);
	mkdir_m("state/images/store", 0755);
	mkdir_m("state/images/names", 0755);
	image(HEX_A, "alpha");
	ok(lookup("alpha", &im, why, sizeof(why)) == 0 &&
	    strcmp(im.name, "alpha") == 0 &&
	    strcmp(im.digest, "sha256:" HEX_A) == 0 &&
	    strcmp(im.rootfs, at(state, "images/store/" HEX_A "/rootfs")) ==
	    0 && strcmp(im.source, "test " HEX_A) == 0 &&
	    im.created == 1795273200 && im.size == 42 && im.files == 7 &&
	    im.source_digest[0] == '\0', "a good name: every field read");
	ok(lookup("nosuch", &im, why, sizeof(why)) == 1, "a missing name: 1");
	ok(refused("host", "not a valid image name") &&
	    refused("../alpha", "not a valid image name") &&
	    refused(".alpha", "not a valid image name") &&
	    refused("", "not a valid image name"), "invalid names are refused");
	ok(imgstore_lookup_digest(state, "sha256:" HEX_A, &im, why,
	    sizeof(why)) == 0 && im.name[0] == '\0' && im.size == 42,
	    "lookup by digest");
	ok(imgstore_lookup_digest(state, "sha256:" HEX_B, &im, why,
	    sizeof(why)) == 1, "lookup of a digest not in the store: 1");
	ok(imgstore_lookup_digest(state, "sha256:" HEX_A "0", &im, why,
	    sizeof(why)) == -1 && imgstore_lookup_digest(state, HEX_A, &im,
	    why, sizeof(why)) == -1, "a malformed digest is refused");

	/* Names files. */
	if (symlink("alpha", "state/images/names/link") == -1)
		diag("symlink: %s", strerror(errno));
	ok(refused("link", "names/link"), "a name that is a symbolic link, "
	    "even to a good name, is refused");
	put("state/images/names/upper", "sha256:" "AAAAAAAAAAAAAAAA"
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", 0644);
	put("state/images/names/short", "sha256:aaaa\n", 0644);
	put("state/images/names/nonl", "sha256:" HEX_A, 0644);
	put("state/images/names/extra", "sha256:" HEX_A "\n\n", 0644);
	put("state/images/names/md5", "md5:" HEX_A "\n", 0644);
	put("state/images/names/gone", "sha256:" HEX_C "\n", 0644);
	put("state/images/names/open", "sha256:" HEX_A "\n", 0644);
	ok(refused("upper", "not a digest") && refused("short", "not a digest")
	    && refused("nonl", "not a digest") && refused("extra", "") &&
	    refused("md5", "not a digest"), "malformed names files are "
	    "refused (upper case, short, no newline, extra bytes, md5)");
	ok(refused("gone", "is not in the store"), "a name of a tree not in "
	    "the store is refused");
	chmod("state/images/names/open", 0666);
	ok(refused("open", "not a regular file of root's"), "a names file "
	    "others may write is refused");
}

static void
test_lookup_info(void)
{
	char	 big[IMGSTORE_INFO_MAX + 64];

	image(HEX_B, "beta");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated 1\nsize 1\n"
	    "future stuff\n");
	ok(found("beta"), "an unknown key is for a later version");
	put_info(HEX_B, "digest sha256:" HEX_A "\nsource x\ncreated 1\nsize 1\n");
	ok(refused("beta", "not sha256:" HEX_B), "an info whose digest is "
	    "another tree's is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated 1\n");
	ok(refused("beta", "incomplete"), "an info with no size is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated 1\nsize 1\n"
	    "size 2\n");
	ok(refused("beta", ":5: malformed"), "a key given twice is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\x1b[2J\ncreated 1\n"
	    "size 1\n");
	ok(refused("beta", ":2: malformed"), "a control byte in the source "
	    "is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated -1\n"
	    "size 1\n");
	ok(refused("beta", ":3: malformed"), "a negative time is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated 1\n"
	    "size 99999999999999999999\n");
	ok(refused("beta", ":4: malformed"), "a size too large is refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsource x\ncreated 1\nsize 1");
	ok(refused("beta", "does not end a line"), "an info cut short is "
	    "refused");
	put_info(HEX_B, "digest sha256:" HEX_B "\nsourcex\ncreated 1\nsize 1\n");
	ok(refused("beta", ":2: malformed"), "a line with no value is "
	    "refused");
	memset(big, 'x', sizeof(big));
	memcpy(big, "source ", 7);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	put_info(HEX_B, big);
	ok(refused("beta", "under 4097 bytes"), "an oversized info is "
	    "refused");
	unlink("state/images/store/" HEX_B "/info");
	if (symlink("../" HEX_A "/info",
	    "state/images/store/" HEX_B "/info") == -1)
		diag("symlink: %s", strerror(errno));
	ok(refused("beta", "info"), "an info that is a symbolic link is "
	    "refused");
	unlink("state/images/store/" HEX_B "/info");
	ok(refused("beta", "missing"), "a missing info is refused");
}

static void
test_lookup_tree(void)
{
	image(HEX_B, "beta");
	ok(found("beta"), "the tree made good again");
	rmdir("state/images/store/" HEX_B "/rootfs");
	ok(refused("beta", "not a directory of root's"), "a tree with no "
	    "rootfs is refused");
	if (symlink("/", "state/images/store/" HEX_B "/rootfs") == -1)
		diag("symlink: %s", strerror(errno));
	ok(refused("beta", "not a directory of root's"), "a rootfs that is "
	    "a link to / is refused");
	unlink("state/images/store/" HEX_B "/rootfs");
	mkdir_m("state/images/store/" HEX_B "/rootfs", 0775);
	ok(refused("beta", "only root may write"), "a rootfs its group may "
	    "write is refused");
	chmod("state/images/store/" HEX_B "/rootfs", 0755);
	if (chown("state/images/store/" HEX_B "/rootfs", 1000, 0) == -1)
		diag("chown: %s", strerror(errno));
	ok(refused("beta", "not a directory of root's"), "a rootfs of "
	    "another user's is refused");
	rm_tree("state/images/store/" HEX_B);
	if (symlink(HEX_A, "state/images/store/" HEX_B) == -1)
		diag("symlink: %s", strerror(errno));
	ok(refused("beta", HEX_B), "a store directory that is a link to "
	    "another is refused");
	unlink("state/images/store/" HEX_B);
	image(HEX_B, "beta");
}

static void
test_list(void)
{
	struct imgstore_image	*v;
	char			 why[PATH_MAX + 128];
	size_t			 n = 99;
	int			 r;

	image(HEX_A, "zulu");
	put("state/images/names/bad name", "sha256:" HEX_A "\n", 0644);
	put("state/images/names/.tmp-123", "sha256:" HEX_A "\n", 0644);
	r = imgstore_list(state, &v, &n, why, sizeof(why));
	ok(r == 0 && n == 3 && strcmp(v[0].name, "alpha") == 0 &&
	    strcmp(v[1].name, "beta") == 0 && strcmp(v[2].name, "zulu") == 0 &&
	    strcmp(v[0].digest, v[2].digest) == 0, "list: the good names, "
	    "sorted; the bad, links and temporaries skipped");
	free(v);
	chmod("state/images/names", 0777);
	r = imgstore_list(state, &v, &n, why, sizeof(why));
	ok(r == -1 && v == NULL && n == 0 && strstr(why, "writable by others"),
	    "a names directory anyone may write is refused: %s", why);
	chmod("state/images/names", 0755);
	rm_tree("state/images");
	r = imgstore_list(state, &v, &n, why, sizeof(why));
	ok(r == 0 && n == 0 && v == NULL, "no store: an empty list");
	ok(imgstore_list("relative", &v, &n, why, sizeof(why)) == -1,
	    "a relative state directory is refused");
}

static void
test_names(void)
{
	char	 long_name[NAME_LEN + 1];

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ok(imgstore_valid_name("data") && imgstore_valid_name("py-3.11_x") &&
	    imgstore_valid_name("Host"), "good names");
	ok(!imgstore_valid_name("host") && !imgstore_valid_name("") &&
	    !imgstore_valid_name(".x") && !imgstore_valid_name("-x") &&
	    !imgstore_valid_name("a/b") && !imgstore_valid_name("a b") &&
	    !imgstore_valid_name(long_name), "bad names: host, empty, "
	    "hidden, an option, a path, a space, too long");
	ok(imgstore_valid_digest("sha256:" HEX_A) &&
	    !imgstore_valid_digest("sha256:" HEX_A "a") &&
	    !imgstore_valid_digest("sha512:" HEX_A) &&
	    !imgstore_valid_digest("sha256:" HEX_A "\n") &&
	    imgstore_valid_hex(HEX_A) && !imgstore_valid_hex("sha256:" HEX_A),
	    "digests and hex");
}

int
main(void)
{
	if (geteuid() != 0) {
		ok(1, "# SKIP the store is root's: run as root");
		return tap_done();
	}
	if (sodium_init() == -1)
		return 1;
	log_init(LOG_DEST_STDERR, 0, "test_imgstore");
	umask(022);
	(void)str_copy(tmp, "/tmp/mcpd-imgstore.XXXXXX", sizeof(tmp));
	if (mkdtemp(tmp) == NULL)
		return 1;
	/* Relative paths from here on; the store's must be absolute. */
	if (chdir(tmp) == -1)
		return 1;
	(void)str_copy(state, at(tmp, "state"), sizeof(state));
	test_names();
	test_digest_encoding();
	test_digest_canonical();
	test_lookup();
	test_lookup_info();
	test_lookup_tree();
	test_list();
	test_digest_refusals();
	if (chdir("/") == -1 || rm_tree(tmp) == -1)
		diag("cannot remove %s", tmp);
	return tap_done();
}
