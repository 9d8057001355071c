/*
 * mcpctl image build: a Debian root filesystem made by debootstrap
 * --variant=minbase, with the packages of a preset and any named on the
 * command line, then cleared of apt's downloads and lists, which an
 * image never needs, and of the device nodes debootstrap made, which a
 * sandbox's own /dev replaces.  Every argument reaches debootstrap in
 * an argument vector, after checking its syntax: no shell ever sees it.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "imgtree.h"
#include "mcpctl.h"
#include "util.h"

#define DEFAULT_MIRROR	"http://deb.debian.org/debian"
#define OS_RELEASE	"/etc/os-release"
#define APT_SOURCES	"/etc/apt/sources.list"
#define LOG_TAIL	15		/* lines of debootstrap's log */

static const struct {
	const char	*name;
	const char	*packages;	/* for --include */
} presets[] = {
	{ "minimal", "" },
	{ "data", "python3,python3-numpy,python3-pandas,python3-matplotlib,"
	    "python3-pip" },
	{ "polyglot", "python3,nodejs,node-typescript,gcc,g++,golang-go,"
	    "rustc,default-jdk-headless,ruby,php-cli,perl,bash" },
};

/* What apt leaves that an image never needs: regular files in these. */
static const char *const apt_clean[] = {
	"var/cache/apt/archives", "var/cache/apt", "var/lib/apt/lists",
};

/* [a-z0-9-]+, as Debian names its suites and code names. */
static int
valid_suite(const char *s)
{
	size_t	 n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");

	return n > 0 && s[n] == '\0' && n < 64 && s[0] != '-';
}

/* Debian Policy 5.6.1: [a-z0-9][a-z0-9+.-]+ */
static int
valid_package(const char *s)
{
	size_t	 n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+.-");

	return n >= 2 && s[n] == '\0' && n < 128 && isalnum((unsigned char)s[0]);
}

/* An http or https URL of printable ASCII without spaces or quotes. */
static int
valid_mirror(const char *s)
{
	const char	*host;
	size_t		 n;

	if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else
		return 0;
	n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-._~:/?#[]@!$&()*+,;=%");
	return n < 512 && s[n] == '\0' && *host != '\0' && *host != '/';
}

/* The host's code name, from os-release: bookworm on Debian 12. */
static void
host_suite(char *buf, size_t size)
{
	FILE	*f;
	char	 line[256], *v;
	size_t	 n;

	buf[0] = '\0';
	if ((f = fopen(OS_RELEASE, "re")) == NULL)
		err(EXIT_ERROR, "%s (-s names the suite)", OS_RELEASE);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VERSION_CODENAME=", 17) != 0)
			continue;
		v = line + 17 + (line[17] == '"');
		n = strcspn(v, "\"\n");
		v[n] = '\0';
		(void)str_copy(buf, v, size);
	}
	fclose(f);
	if (!valid_suite(buf))
		errx(EXIT_ERROR, "%s gives no code name: name the suite with -s",
		    OS_RELEASE);
}

/* A Debian archive's URL: an http(s) URL whose path ends in /debian. */
static int
debian_uri(const char *u)
{
	size_t	 n = strlen(u);

	while (n > 0 && u[n - 1] == '/')
		n--;
	return valid_mirror(u) && n >= 7 && strncmp(u + n - 7, "/debian",
	    7) == 0;
}

/*
 * The first archive a sources file names: one-line ("deb [opts] URI
 * suite ...") or deb822 ("URIs: URI ...").
 */
static int
sources_mirror(const char *path, char *buf, size_t size)
{
	FILE	*f;
	char	 line[1024], *tok, *save;
	int	 deb822, found = 0, opts;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if ((tok = strtok_r(line, " \t\n", &save)) == NULL)
			continue;
		deb822 = strcasecmp(tok, "URIs:") == 0;
		if (!deb822 && strcmp(tok, "deb") != 0)
			continue;
		for (opts = 0; !found &&
		    (tok = strtok_r(NULL, " \t\n", &save)) != NULL;) {
			if (!deb822 && (opts || tok[0] == '[')) {
				opts = strchr(tok, ']') == NULL;
				continue;
			}
			if (debian_uri(tok))
				found = str_copy(buf, tok, size) == 0;
			if (!deb822)
				break;		/* only the first is a URI */
		}
	}
	fclose(f);
	return found;
}

static int
sources_filter(const struct dirent *de)
{
	size_t	 n = strlen(de->d_name);

	return de->d_name[0] != '.' && ((n > 5 &&
	    strcmp(de->d_name + n - 5, ".list") == 0) || (n > 8 &&
	    strcmp(de->d_name + n - 8, ".sources") == 0));
}

/* The mirror the host's apt uses, or deb.debian.org. */
static void
host_mirror(char *buf, size_t size)
{
	struct dirent	**v;
	char		 path[PATH_MAX];
	int		 i, n, found;

	if (sources_mirror(APT_SOURCES, buf, size))
		return;
	n = scandir(APT_SOURCES ".d", &v, sources_filter, alphasort);
	for (i = 0, found = 0; i < n; i++) {
		if (!found && str_fmt(path, sizeof(path), "%s.d/%s",
		    APT_SOURCES, v[i]->d_name) == 0)
			found = sources_mirror(path, buf, size);
		free(v[i]);
	}
	if (n >= 0)
		free(v);
	if (!found)
		(void)str_copy(buf, DEFAULT_MIRROR, size);
}

/* Add the packages of list, checked, to b->include. */
static void
build_packages(struct build *b, const char *list)
{
	char	*copy, *p, *save, *s;

	copy = xstrdup(list);
	for (p = strtok_r(copy, ",", &save); p != NULL;
	    p = strtok_r(NULL, ",", &save)) {
		if (!valid_package(p)) {
			warnx("\"%s\": not a Debian package name", p);
			usage_cmd("build");
		}
		xasprintf(&s, "%s%s%s", b->include != NULL ? b->include : "",
		    b->include != NULL ? "," : "", p);
		free(b->include);
		b->include = s;
	}
	free(copy);
}

void
build_options(struct build *b, const char *preset, const char *suite,
    const char *mirror, const char *extra)
{
	size_t	 i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < nitems(presets); i++)
		if (strcmp(presets[i].name, preset) == 0)
			break;
	if (i == nitems(presets)) {
		warnx("no such preset: %s (minimal, data or polyglot)",
		    preset);
		usage_cmd("build");
	}
	b->preset = presets[i].name;
	build_packages(b, presets[i].packages);
	if (extra != NULL)
		build_packages(b, extra);
	if (suite != NULL && (!valid_suite(suite) ||
	    str_copy(b->suite, suite, sizeof(b->suite)) == -1)) {
		warnx("\"%s\": not a suite name", suite);
		usage_cmd("build");
	}
	if (mirror != NULL && (!valid_mirror(mirror) ||
	    str_copy(b->mirror, mirror, sizeof(b->mirror)) == -1)) {
		warnx("\"%s\": not an http or https URL", mirror);
		usage_cmd("build");
	}
	if (suite == NULL)
		host_suite(b->suite, sizeof(b->suite));
	if (mirror == NULL)
		host_mirror(b->mirror, sizeof(b->mirror));
	(void)str_fmt(b->source, sizeof(b->source), "debootstrap %s %s%s%s",
	    b->suite, b->preset, extra != NULL ? " +" : "",
	    extra != NULL ? extra : "");
}

/* dir under root, no link followed on the way: -1 if it is not there. */
static int
open_beneath(int root, const char *dir)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	return (int)syscall(SYS_openat2, root, dir, &how, sizeof(how));
}

/* Remove the regular files in root/dir, but apt's lock. */
static void
clean_files(int root, const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	struct stat	 st;
	int		 fd;

	if ((fd = open_beneath(root, dir)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, "lock") != 0 &&
		    fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    unlinkat(dirfd(d), de->d_name, 0) == -1)
			warn("%s/%s", dir, de->d_name);
	closedir(d);
}

static void
build_clean(const char *target)
{
	struct stat	 st;
	size_t		 i;
	int		 root;

	if ((root = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(root, &st) == -1)
		err(EXIT_ERROR, "%s", target);
	for (i = 0; i < nitems(apt_clean); i++)
		clean_files(root, apt_clean[i]);
	/* The check before the digest makes it again, empty. */
	if (image_rmtree(root, "dev", fd_mount_id(root, &st)) == -1)
		err(EXIT_ERROR, "%s/dev", target);
	close(root);
}

/* The end of debootstrap's log, which says why it failed. */
static void
build_log_tail(const char *target)
{
	char	 buf[4096], *p;
	off_t	 end;
	ssize_t	 n;
	int	 root, fd, lines = 0;

	if ((root = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	fd = openat(root, "debootstrap/debootstrap.log", O_RDONLY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(root);
	if (fd == -1)
		return;
	end = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1, end > (off_t)sizeof(buf) - 1 ?
	    end - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	p = buf + n;
	if (p[-1] == '\n')
		*--p = '\0';
	while (p > buf && lines < LOG_TAIL)
		if (*--p == '\n')
			lines++;
	fprintf(stderr, "mcpctl: the end of debootstrap's log:\n%s\n",
	    *p == '\n' ? p + 1 : p);
}

/* Make dir/rootfs. */
void
build_rootfs(const struct build *b, const char *dir)
{
	char		 target[PATH_MAX], *include = NULL;
	const char	*argv[8];
	int		 argc = 0, rc;

	if (str_fmt(target, sizeof(target), "%s/%s", dir, IMGSTORE_ROOTFS) ==
	    -1)
		errx(EXIT_ERROR, "%s: path too long", dir);
	argv[argc++] = "debootstrap";
	argv[argc++] = "--variant=minbase";
	if (b->include != NULL) {
		xasprintf(&include, "--include=%s", b->include);
		argv[argc++] = include;
	}
	argv[argc++] = b->suite;
	argv[argc++] = target;
	argv[argc++] = b->mirror;
	argv[argc] = NULL;
	fprintf(stderr, "mcpctl: debootstrap %s from %s%s%s\n", b->suite,
	    b->mirror, b->include != NULL ? " with " : "",
	    b->include != NULL ? b->include : "");
	rc = spawn(argv, NULL);
	free(include);
	if (rc != 0) {
		build_log_tail(target);
		errx(EXIT_ERROR, "debootstrap failed (status %d)", rc);
	}
	if (spawn_quit)
		errx(EXIT_ERROR, "interrupted");
	build_clean(target);
}
