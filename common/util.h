/*
 * Small helpers used across the suite.
 */
#ifndef MCPD_UTIL_H
#define MCPD_UTIL_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* glibc's sys/queue.h lacks the BSDs' safe traversal. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

/* Allocation that cannot fail: out of memory ends a daemon via fatal(). */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));

/* snprintf that says whether it all fit: 0, or -1 when cut. */
int	 str_fmt(char *, size_t, const char *, ...)
	    __attribute__((__format__(printf, 3, 4)));

/*
 * A message into err, when there is room for one; always -1, for the
 * "return errfmt(err, errlen, ...)" of a function failing with one.
 */
int	 errfmt(char *, size_t, const char *, ...)
	    __attribute__((__format__(printf, 3, 4)));

/* Copy with truncation check: 0 when all of src fit, -1 when cut. */
int	 str_copy(char *, const char *, size_t);

/*
 * Parse a decimal integer in [min, max]; NULL on success, otherwise a short
 * reason ("too large", "invalid", ...), as OpenBSD's strtonum(3) does.
 */
const char *str_to_u64(const char *, uint64_t, uint64_t, uint64_t *);

/*
 * Every name in the suite (a tenant's, a limits block's, an image's, a
 * language's, a sandbox's): 1 to NAME_LEN - 1 letters, digits, '.', '_'
 * and '-', the first neither '.' nor '-', so that a name is safe as a
 * file name and in a log line.  HOST_IMAGE names the built-in image, a
 * name no image of the store may take.
 */
#define NAME_LEN	64		/* with its NUL */
#define HOST_IMAGE	"host"
int	 name_valid(const char *);

/* Monotonic clock in nanoseconds and milliseconds. */
uint64_t mono_ns(void);
uint64_t mono_ms(void);

/* Resolve a user or group given by name or number. -1 if unknown. */
int	 user_lookup(const char *, uid_t *, gid_t *);
int	 group_lookup(const char *, gid_t *);

/*
 * Remove a file or a directory tree, never following a symbolic link:
 * every step is relative to an fd opened with O_NOFOLLOW.  A missing path
 * is not an error.  0, or -1 if anything could not be removed.
 */
int	 rm_tree(const char *);

/*
 * Take away the permission bits of path that mode does not have (what an
 * older version made open to others), and log it; never through a
 * symbolic link, and only of a regular file or a directory.  0 when the
 * mode was fine, is now, or there is no such path; -1 after logging why.
 */
int	 path_tighten(const char *, mode_t);

/*
 * The mount an open file is on, st its fstat(2): a bind mount of a
 * directory of the same filesystem has an id of its own.
 */
struct stat;
uint64_t fd_mount_id(int, const struct stat *);

/* fcntl helpers; -1 with errno on failure. */
int	 write_all(int, const void *, size_t);
int	 fd_set_nonblock(int);
int	 fd_set_cloexec(int);

/*
 * Unblock every signal: a mask survives exec, and one a parent left (a
 * supervisor's thread, a wrapper) would hold SIGTERM pending for ever.
 * 0, or -1 with errno.
 */
int	 sigmask_clear(void);

/*
 * fork(2) for a child that will exec: it starts with no signal blocked
 * and every caught signal back to its default before it can take one,
 * as the exec would leave them.  Otherwise a signal in between runs the
 * parent's handler in the child (libevent's writes to the parent's own
 * pipe, as if the parent had it) and the exec forgets it.
 */
pid_t	 fork_for_exec(void);

#endif
