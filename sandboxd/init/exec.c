/*
 * sandbox-init: running commands for sandboxd.
 *
 * An exec's fds arrive first and wait here for its EXEC frame.  The child
 * becomes a session leader, so that its whole process group can be
 * killed, then waits on the sync socket until sandboxd has moved it into
 * the sandbox's cgroups (or audited its intent), and only then executes;
 * one started in the container's own groups, already audited, has no
 * sync socket and goes straight on.  A simple sh -c script is exec'd
 * without the shell (shword.c).  An execve(2) failure travels back over
 * a close-on-exec pipe: end of file on it means the exec succeeded.  An
 * exec flagged INIT_EXEC_LIST has the workspace listed as soon as its
 * EXITED is sent: a run's files, without sandboxd asking.
 */
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "init.h"

struct heldfd {
	uint32_t	 id;
	uint32_t	 which;		/* INIT_FD_* */
	int		 fd;
};

struct exec {
	TAILQ_ENTRY(exec) entry;
	uint32_t	 id;
	pid_t		 pid;		/* also its process group */
	int		 errfd;		/* read end of the error pipe, or -1 */
	int		 exec_errno;
	int		 reaped;	/* EXITED sent: the id is free again */
	int		 list;		/* INIT_EXEC_LIST */
	uint32_t	 list_id;
};

static struct heldfd	 held[INIT_HELD_FDS_MAX];
static int		 nheld;
static TAILQ_HEAD(, exec) execs = TAILQ_HEAD_INITIALIZER(execs);

#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

static struct exec *
exec_find(uint32_t id)
{
	struct exec	*e;

	TAILQ_FOREACH(e, &execs, entry)
		if (e->id == id && !e->reaped)
			return e;
	return NULL;
}

void
exec_fd(struct imsg *imsg)
{
	uint32_t	 which, id = imsg->hdr.peerid;
	int		 i;

	if (imsg->fd == -1)
		init_violation("INIT_FD without an fd");
	if (proto_payload(imsg->data, imsg->datalen, &which,
	    sizeof(which)) == -1 || which >= INIT_FD_MAX)
		init_violation("malformed INIT_FD");
	if (exec_find(id) != NULL)
		init_violation("INIT_FD for exec %u, which is running", id);
	for (i = 0; i < nheld; i++)
		if (held[i].id == id && held[i].which == which)
			init_violation("exec %u: fd %u sent twice", id, which);
	if (nheld == INIT_HELD_FDS_MAX)
		init_violation("more than %d fds waiting for their exec",
		    INIT_HELD_FDS_MAX);
	held[nheld].id = id;
	held[nheld].which = which;
	held[nheld].fd = imsg_take_fd(imsg);
	nheld++;
}

/*
 * Move the exec's held fds into fds[]; the caller owns them after.  One
 * that runs unsynced has no sync socket: fds[INIT_FD_SYNC] is -1.
 */
static void
exec_take_fds(uint32_t id, int fds[INIT_FD_MAX], int nfds)
{
	int	 i, which, n = 0;

	fds[INIT_FD_SYNC] = -1;
	for (which = 0; which < nfds; which++) {
		fds[which] = -1;
		for (i = 0; i < nheld; i++)
			if (held[i].id == id && held[i].which == (uint32_t)which)
				fds[which] = held[i].fd;
		if (fds[which] == -1)
			init_violation("exec %u without its fd %d", id, which);
	}
	for (i = 0; i < nheld; i++) {
		if (held[i].id != id)
			held[n++] = held[i];
		else if (held[i].which >= (uint32_t)nfds)
			init_violation("exec %u: fd %u it has no use for", id,
			    held[i].which);
	}
	nheld = n;
}

static void
exec_send_exited(uint32_t id, int status, int exec_errno,
    const struct rusage *ru)
{
	struct init_exited	 ex;

	memset(&ex, 0, sizeof(ex));
	ex.status = status;
	ex.exec_errno = exec_errno;
	if (ru != NULL) {
		ex.utime_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 +
		    (uint64_t)ru->ru_utime.tv_usec;
		ex.stime_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 +
		    (uint64_t)ru->ru_stime.tv_usec;
		ex.maxrss_kb = (uint64_t)ru->ru_maxrss;
	}
	init_send(IMSG_INIT_EXITED, id, &ex, sizeof(ex));
}

/*
 * execvpe(3) would search our own PATH; the command's environment is the
 * one that counts.  Returns the errno to report.
 */
static int
exec_search(char *const argv[], char *const env[], uint32_t flags)
{
	const char	*path = DEFAULT_PATH, *p, *end;
	char		 buf[PATH_MAX];
	size_t		 dlen, flen;
	int		 i, saved = ENOENT;

	if (!(flags & INIT_EXEC_PATH) || strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, env);
		return errno;
	}
	if ((flen = strlen(argv[0])) == 0)
		return ENOENT;
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "PATH=", 5) == 0)
			path = env[i] + 5;
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		if (dlen == 0) {
			p = ".";	/* an empty entry means the cwd */
			dlen = 1;
		}
		if (dlen + 1 + flen < sizeof(buf)) {
			memcpy(buf, p, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, argv[0], flen + 1);
			execve(buf, argv, env);
			switch (errno) {
			case EACCES:
				saved = EACCES;
				break;
			case ENOENT:
			case ENOTDIR:
			case ENAMETOOLONG:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return errno;
			}
		}
		if (*end == '\0')
			break;
	}
	return saved;
}

/*
 * The environment with PWD, as the shell would have exported it: the
 * command may look for it.  On failure, the environment as it was.
 */
static char *const *
exec_pwd_env(char *const env[])
{
	char	 cwd[PATH_MAX], **v;
	size_t	 n;

	for (n = 0; env[n] != NULL; n++)
		if (strncmp(env[n], "PWD=", 4) == 0)
			return env;
	if (getcwd(cwd, sizeof(cwd)) == NULL ||
	    (v = calloc(n + 2, sizeof(*v))) == NULL)
		return env;
	if (asprintf(&v[0], "PWD=%s", cwd) == -1) {
		free(v);
		return env;
	}
	memcpy(v + 1, env, n * sizeof(*v));
	return v;
}

__attribute__((__noreturn__))
static void
exec_child_fail(int errfd, int error)
{
	ssize_t	 n;

	/* Nobody to tell if this fails: the exit status says enough. */
	n = write(errfd, &error, sizeof(error));
	(void)n;
	_exit(127);
}

__attribute__((__noreturn__))
static void
exec_child(int fds[INIT_FD_MAX], int cwdfd, int errfd, uint32_t flags,
    char *const argv[], char *const direct[], char *const env[])
{
	struct {
		void		*handler;	/* the kernel's sigaction */
		unsigned long	 flags;
		void		*restorer;
		uint64_t	 mask;
	}			 ksa;
	sigset_t		 none;
	char			 c = 0;
	ssize_t			 n;
	long			 max;
	int			 i, fl, sync, error, fallback;

	setsid();
	/*
	 * Every disposition back to the default, with the raw system call:
	 * glibc's sigaction() refuses its own signals 32 and 33, and an
	 * inherited "ignore" of those would survive execve.
	 */
	memset(&ksa, 0, sizeof(ksa));
	for (i = 1; i <= 64; i++)
		if (i != SIGKILL && i != SIGSTOP)
			syscall(SYS_rt_sigaction, i, &ksa, NULL, sizeof(uint64_t));
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/*
	 * Lift the fds above 2 first, in case one of them was given a
	 * number dup2() below would overwrite.  The command gets blocking
	 * ends whatever sandboxd made of them.
	 */
	for (i = 0; i < INIT_FD_MAX; i++) {
		if (fds[i] == -1)
			continue;	/* no sync socket */
		if ((fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) == -1)
			exec_child_fail(errfd, errno);
		if ((fl = fcntl(fds[i], F_GETFL)) != -1 && (fl & O_NONBLOCK))
			fcntl(fds[i], F_SETFL, fl & ~O_NONBLOCK);
	}
	for (i = 0; i < INIT_FD_SYNC; i++)
		if (dup2(fds[i], i) == -1)
			exec_child_fail(errfd, errno);
	if (fchdir(cwdfd) == -1)
		exec_child_fail(errfd, errno);
	umask(022);
	/*
	 * Our control socket, and other execs' pipes, must not stay open
	 * while this one waits for sandboxd, let alone reach the command.
	 */
	sync = fds[INIT_FD_SYNC];
	close_fds_except(sync, errfd);

	/*
	 * Stopping here until sandboxd answers is the point.  send(2), as
	 * SIGPIPE would kill us if sandboxd is gone.
	 */
	if (sync != -1) {
		while ((n = send(sync, &c, 1, MSG_NOSIGNAL)) == -1 &&
		    errno == EINTR)
			;
		if (n != 1)
			_exit(127);
		while ((n = read(sync, &c, 1)) == -1 && errno == EINTR)
			;
		if (n != 1)
			_exit(127);
		close(sync);
	}

	/* Whatever fd is left, the command must not inherit it. */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
		if ((max = sysconf(_SC_OPEN_MAX)) == -1 || max > 65536)
			max = 65536;
		for (i = 3; i < max; i++)
			fcntl(i, F_SETFD, FD_CLOEXEC);
	}
	/*
	 * What the shell would have run, without the shell.  If that
	 * fails, the shell runs after all and says why in its own words;
	 * if there is no shell, the command's own error is the one to tell.
	 */
	error = 0;
	if (direct != NULL)
		error = exec_search(direct, exec_pwd_env(env), INIT_EXEC_PATH);
	fallback = exec_search(argv, env, flags);
	exec_child_fail(errfd, error != 0 && fallback == ENOENT ? error :
	    fallback);
}

void
exec_start(struct imsg *imsg)
{
	struct init_exec	 ie;
	struct exec		*e;
	struct init_started	 st;
	const char		*cwd, **argv = NULL, **env = NULL;
	char			**direct = NULL;
	const char		*p;
	size_t			 len;
	ssize_t			 n;
	pid_t			 pid;
	int			 fds[INIT_FD_MAX], cwdfd, errpipe[2], i, error;
	uint32_t		 id = imsg->hdr.peerid;

	if (imsg->datalen < sizeof(ie))
		init_violation("exec %u: short INIT_EXEC", id);
	memcpy(&ie, imsg->data, sizeof(ie));
	/*
	 * Every string takes at least its NUL: the frame bounds the counts,
	 * before they size anything.
	 */
	if (ie.argc < 1 || (uint64_t)ie.argc + ie.envc + 1 >
	    imsg->datalen - sizeof(ie) || (ie.flags & ~(INIT_EXEC_PATH |
	    INIT_EXEC_SH | INIT_EXEC_NOSYNC | INIT_EXEC_LIST)) != 0)
		init_violation("exec %u: bad argc, envc or flags", id);
	if ((ie.flags & INIT_EXEC_LIST) && ie.list_id == id)
		init_violation("exec %u: listed under its own id", id);
	if ((argv = calloc(ie.argc + 1, sizeof(*argv))) == NULL ||
	    (env = calloc(ie.envc + 1, sizeof(*env))) == NULL)
		init_violation("exec %u: out of memory", id);
	p = (const char *)imsg->data + sizeof(ie);
	len = imsg->datalen - sizeof(ie);
	if ((n = proto_strings(p, len, 1, &cwd, 0)) == -1)
		init_violation("exec %u: malformed strings", id);
	p += n, len -= (size_t)n;
	if ((n = proto_strings(p, len, ie.argc, argv, 0)) == -1)
		init_violation("exec %u: malformed strings", id);
	p += n, len -= (size_t)n;
	if (proto_strings(p, len, ie.envc, env, 1) == -1)
		init_violation("exec %u: malformed strings", id);
	if (exec_find(id) != NULL)
		init_violation("exec %u is already running", id);
	if ((ie.flags & INIT_EXEC_SH) && (ie.argc < 3 ||
	    strcmp(argv[1], "-c") != 0 || (ie.flags & INIT_EXEC_PATH)))
		init_violation("exec %u: INIT_EXEC_SH without sh -c", id);
	exec_take_fds(id, fds, (ie.flags & INIT_EXEC_NOSYNC) ?
	    INIT_FD_SYNC : INIT_FD_MAX);
	/* Failing to allocate only means the shell runs. */
	if (ie.flags & INIT_EXEC_SH)
		direct = sh_simple(argv[2], (char *const *)argv + 4,
		    ie.argc > 4 ? ie.argc - 4 : 0);

	pid = -1;
	errpipe[0] = errpipe[1] = -1;
	if ((cwdfd = ws_openat(wsfd, *cwd == '\0' ? "." : cwd,
	    O_PATH | O_DIRECTORY, 0, 0)) == -1 ||
	    pipe2(errpipe, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (pid = fork()) == -1)
		error = errno;
	else if (pid == 0)
		exec_child(fds, cwdfd, errpipe[1], ie.flags,
		    (char *const *)argv, direct, (char *const *)env);
	else
		error = 0;

	for (i = 0; i < INIT_FD_MAX; i++)
		if (fds[i] != -1)
			close(fds[i]);
	free(direct);
	if (cwdfd != -1)
		close(cwdfd);
	if (errpipe[1] != -1)
		close(errpipe[1]);
	free(argv);
	free(env);
	if (error != 0) {
		if (errpipe[0] != -1)
			close(errpipe[0]);
		exec_send_exited(id, W_EXITCODE(127, 0), error, NULL);
		if (ie.flags & INIT_EXEC_LIST)
			file_list_run(ie.list_id);
		return;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		/* Unreportable: better the container dies than hangs. */
		init_violation("exec %u: out of memory", id);
	}
	e->id = id;
	e->pid = pid;
	e->errfd = errpipe[0];
	e->list = (ie.flags & INIT_EXEC_LIST) != 0;
	e->list_id = ie.list_id;
	TAILQ_INSERT_TAIL(&execs, e, entry);
	memset(&st, 0, sizeof(st));
	st.pid = pid;
	init_send(IMSG_INIT_STARTED, id, &st, sizeof(st));
}

/* Take what the error pipe holds: an errno, or the end of file. */
static void
exec_read_errpipe(struct exec *e)
{
	ssize_t	 n;
	int	 v;

	while ((n = read(e->errfd, &v, sizeof(v))) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return;
	if (n == (ssize_t)sizeof(v))
		e->exec_errno = v;
	close(e->errfd);
	e->errfd = -1;
}

void
exec_reap(void)
{
	struct rusage	 ru;
	struct exec	*e, *next;
	pid_t		 pid;
	int		 status;

	for (;;) {
		pid = wait4(-1, &status, WNOHANG, &ru);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		TAILQ_FOREACH(e, &execs, entry)
			if (e->pid == pid && !e->reaped)
				break;
		if (e == NULL)
			continue;	/* an orphan: reaping is all it needs */
		/* The child wrote before it died: the pipe is final now. */
		if (e->errfd != -1)
			exec_read_errpipe(e);
		exec_send_exited(e->id, status, e->exec_errno, &ru);
		e->reaped = 1;
		if (e->list)
			file_list_run(e->list_id);
	}

	/*
	 * Outside a container exec_killall() needs the process groups
	 * that may still have members; as PID 1, kill(-1) needs none.
	 */
	for (e = TAILQ_FIRST(&execs); e != NULL; e = next) {
		next = TAILQ_NEXT(e, entry);
		if (!e->reaped || (getpid() != 1 && kill(-e->pid, 0) == 0))
			continue;
		TAILQ_REMOVE(&execs, e, entry);
		free(e);
	}
}

int
exec_npollfds(void)
{
	struct exec	*e;
	int		 n = 0;

	TAILQ_FOREACH(e, &execs, entry)
		if (e->errfd != -1)
			n++;
	return n;
}

int
exec_pollfds(struct pollfd *pfd, int max)
{
	struct exec	*e;
	int		 n = 0;

	TAILQ_FOREACH(e, &execs, entry) {
		if (e->errfd == -1 || n == max)
			continue;
		pfd[n].fd = e->errfd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

void
exec_pollevents(const struct pollfd *pfd, int n)
{
	struct exec	*e;
	int		 i;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		TAILQ_FOREACH(e, &execs, entry)
			if (e->errfd == pfd[i].fd)
				break;
		if (e != NULL)
			exec_read_errpipe(e);
	}
}

/*
 * Outside a container only.  Every exec leads its own process group, and
 * the number of a group with members cannot be reused; exec_reap() forgets
 * empty groups, so a stale number is rare and would need the pid space to
 * wrap as well.  A child not reaped may not have called setsid() yet: it
 * is killed by pid too (while unreaped, its pid is still its own).
 */
void
exec_killall(void)
{
	exec_signalall(SIGKILL);
}

/* An exec not yet reaped, or fds waiting for one. */
int
exec_busy(void)
{
	struct exec	*e;

	if (nheld > 0)
		return 1;
	TAILQ_FOREACH(e, &execs, entry)
		if (!e->reaped)
			return 1;
	return 0;
}

/* After a wipe: every process is gone, and so are the groups. */
void
exec_forget(void)
{
	struct exec	*e;

	while ((e = TAILQ_FIRST(&execs)) != NULL) {
		TAILQ_REMOVE(&execs, e, entry);
		if (e->errfd != -1)
			close(e->errfd);
		free(e);
	}
}

/* Outside a container: sig to our execs' process groups. */
void
exec_signalall(int sig)
{
	struct exec	*e;

	TAILQ_FOREACH(e, &execs, entry) {
		kill(-e->pid, sig);
		if (!e->reaped)
			kill(e->pid, sig);
	}
}
