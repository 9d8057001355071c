#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		fatal("malloc %zu", n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if ((p = calloc(nmemb == 0 ? 1 : nmemb, size == 0 ? 1 : size)) == NULL)
		fatal("calloc %zu x %zu", nmemb, size);
	return p;
}

void *
xreallocarray(void *old, size_t nmemb, size_t size)
{
	void	*p;

	if ((p = reallocarray(old, nmemb == 0 ? 1 : nmemb, size)) == NULL)
		fatal("reallocarray %zu x %zu", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal("asprintf");
	return n;
}

int
str_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int
errfmt(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
str_copy(char *dst, const char *src, size_t size)
{
	size_t	 len = strlen(src);

	if (size == 0)
		return -1;
	if (len >= size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, len + 1);
	return 0;
}

const char *
str_to_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long	 v;
	char			*end;

	if (s == NULL || *s < '0' || *s > '9')
		return "invalid";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return "invalid";
	if (errno == ERANGE || v > max)
		return "too large";
	if (v < min)
		return "too small";
	*out = v;
	return NULL;
}

int
name_valid(const char *s)
{
	size_t	 len = strlen(s), i;
	char	 c;

	if (len == 0 || len >= NAME_LEN || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < len; i++) {
		c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-'))
			return 0;
	}
	return 1;
}

uint64_t
mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t
mono_ms(void)
{
	return mono_ns() / 1000000ULL;
}

int
user_lookup(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd	*pw;
	uint64_t	 n;

	if ((pw = getpwnam(name)) != NULL) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		return 0;
	}
	/* A bare number is a uid, its group the same number unless named. */
	if (str_to_u64(name, 0, UINT32_MAX - 1, &n) != NULL)
		return -1;
	*uid = (uid_t)n;
	if ((pw = getpwuid(*uid)) != NULL)
		*gid = pw->pw_gid;
	else
		*gid = (gid_t)n;
	return 0;
}

int
group_lookup(const char *name, gid_t *gid)
{
	struct group	*gr;
	uint64_t	 n;

	if ((gr = getgrnam(name)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	if (str_to_u64(name, 0, UINT32_MAX - 1, &n) != NULL)
		return -1;
	*gid = (gid_t)n;
	return 0;
}

/* All of buf to fd, through short writes and EINTR: 0, or -1 and errno. */
int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t
fd_mount_id(int fd, const struct stat *st)
{
	struct statx	 sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID))
		return sx.stx_mnt_id;
	return (uint64_t)st->st_dev | (1ULL << 63);
}

int
fd_set_nonblock(int fd)
{
	int	 fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
fd_set_cloexec(int fd)
{
	int	 fl;

	if ((fl = fcntl(fd, F_GETFD)) == -1)
		return -1;
	return fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

int
path_tighten(const char *path, mode_t mode)
{
	struct stat	 st;
	mode_t		 now, want;
	int		 fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		log_warn("%s", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		log_warnx("%s: neither a file nor a directory", path);
		goto done;
	}
	now = st.st_mode & 07777;
	want = now & (mode | 07000);
	if (want != now && fchmod(fd, want) == -1) {
		log_warn("%s: chmod %04o", path, (unsigned)want);
		goto done;
	}
	if (want != now)
		log_warnx("%s: mode %04o tightened to %04o", path,
		    (unsigned)now, (unsigned)want);
	rv = 0;
 done:
	close(fd);
	return rv;
}

static int
rm_tree_at(int dfd, const char *name)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, rv = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (rm_tree_at(dirfd(d), de->d_name) == -1)
			rv = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		rv = -1;
	return rv;
}

int
rm_tree(const char *path)
{
	return rm_tree_at(AT_FDCWD, path);
}

int
sigmask_clear(void)
{
	sigset_t	 none;

	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL);
}

pid_t
fork_for_exec(void)
{
	struct sigaction	 sa;
	sigset_t		 all, old;
	pid_t			 pid;
	int			 sig;

	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		for (sig = 1; sig < NSIG; sig++) {
			if (sigaction(sig, NULL, &sa) == -1 ||
			    sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
				continue;
			signal(sig, SIG_DFL);
		}
		sigemptyset(&old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}
