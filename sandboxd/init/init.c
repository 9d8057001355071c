/*
 * sandbox-init: main, the event loop and the control socket.
 *
 * It is PID 1 of a container, runs as the sandbox's unprivileged uid with
 * no capabilities, and shares that uid with the code it runs.  So it keeps
 * nothing worth stealing, trusts sandboxd alone, and treats any surprise
 * from sandboxd as the end: everything it started dies with it.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "init.h"
#include "scfilter.h"

struct imsgbuf	 ibuf;
int		 wsfd = -1;
static const char *wsdir = INIT_WORKSPACE;

static int	 sigfd = -1;
static int	 hello_done;

__attribute__((__noreturn__))
static void
usage(void)
{
	fprintf(stderr, "usage: sandbox-init [-c fd] [-s fd] [-w dir]\n");
	exit(1);
}

/*
 * Leave no one behind.  In a container we are PID 1 and kill(-1) reaches
 * exactly the container.  Anywhere else (the tests, run as root on a real
 * machine) kill(-1) would reach every process on the host, so only our
 * own execs' process groups are killed.
 */
__attribute__((__noreturn__))
static void
init_exit(int status)
{
	if (getpid() == 1)
		kill(-1, SIGKILL);
	else
		exec_killall();
	exit(status);
}

void
init_violation(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	init_exit(1);
}

void
init_sendv_fd(uint32_t type, uint32_t id, int fd, const struct iovec *iov,
    int iovcnt)
{
	if (imsg_composev(&ibuf, type, id, fd, iov, iovcnt) == -1) {
		warnx("cannot queue a message: %s", ibuf.err);
		init_exit(1);
	}
}

void
init_sendv(uint32_t type, uint32_t id, const struct iovec *iov, int iovcnt)
{
	init_sendv_fd(type, id, -1, iov, iovcnt);
}

void
init_send(uint32_t type, uint32_t id, const void *data, size_t len)
{
	struct iovec	 iov;

	iov.iov_base = (void *)(uintptr_t)data;
	iov.iov_len = len;
	init_sendv(type, id, &iov, 1);
}

#define WALK_DEPTH	64	/* directories below dirfd, for ".." */
#define WALK_LINKS	40	/* symlinks followed, as Linux's MAXSYMLINKS */

/*
 * Without openat2(2) (gVisor has none): RESOLVE_BENEATH by hand, a
 * component at a time from dirfd, each opened with O_NOFOLLOW.  ".." goes
 * back up the directories walked down, never above dirfd (EXDEV); a
 * symlink is read and its text walked instead, unless it is absolute
 * (EXDEV), RESOLVE_NO_SYMLINKS forbids it (ELOOP) or it is the last
 * component and flags have O_NOFOLLOW; no other filesystem is entered
 * (EXDEV).  No /proc magic link can be met: nothing absolute is walked.
 */
static int
ws_walk(int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
	char		 buf[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
	char		*p, *rest;
	const char	*comp;
	struct stat	 st;
	dev_t		 dev;
	int		 stack[WALK_DEPTH], depth = 0, links = 0;
	int		 cur = dirfd, fd = -1, last, err = 0, nofollow;
	ssize_t		 n;

	nofollow = (flags & O_NOFOLLOW) != 0;
	if (*path == '/') {
		errno = EXDEV;
		return -1;
	}
	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (fstat(dirfd, &st) == -1)
		return -1;
	dev = st.st_dev;
	for (p = buf;;) {
		while (*p == '/')
			p++;
		comp = p;
		if ((rest = strchr(p, '/')) != NULL) {
			*rest++ = '\0';
			while (*rest == '/')
				rest++;
		}
		last = rest == NULL || *rest == '\0';
		p = rest;
		if (*comp == '\0' || strcmp(comp, ".") == 0) {
			if (!last)
				continue;
			comp = ".";
		} else if (strcmp(comp, "..") == 0) {
			if (depth == 0) {
				err = EXDEV;
				break;
			}
			close(cur);
			cur = stack[--depth];
			if (!last)
				continue;
			comp = ".";
		}
		if (last)
			fd = openat(cur, comp, flags | O_NOFOLLOW, mode);
		else
			fd = openat(cur, comp, O_PATH | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd != -1 && fstat(fd, &st) == -1) {
			err = errno;
			break;
		}
		/* A link: ELOOP, ENOTDIR with O_DIRECTORY, or with O_PATH
		 * the link itself. */
		if ((fd == -1 && (errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) || (fd != -1 && S_ISLNK(st.st_mode))) {
			if (fd != -1)
				close(fd);
			fd = -1;
			if ((resolve & RESOLVE_NO_SYMLINKS) ||
			    (last && nofollow) || ++links > WALK_LINKS) {
				err = ELOOP;
				break;
			}
			if ((n = readlinkat(cur, comp, link,
			    sizeof(link) - 1)) <= 0) {
				err = n == 0 ? ENOENT : errno;
				break;
			}
			link[n] = '\0';
			if (link[0] == '/') {
				err = EXDEV;
				break;
			}
			/* The link's text, then what was left of the path. */
			if ((size_t)snprintf(next, sizeof(next), "%s/%s", link,
			    last ? "" : p) >= sizeof(next)) {
				err = ENAMETOOLONG;
				break;
			}
			memcpy(buf, next, sizeof(buf));
			p = buf;
			continue;
		}
		if (fd == -1) {
			err = errno;
			break;
		}
		if (st.st_dev != dev) {
			err = EXDEV;
			break;
		}
		if (last)
			break;
		if (depth == WALK_DEPTH) {
			err = ENAMETOOLONG;
			break;
		}
		stack[depth++] = cur;
		cur = fd;
		fd = -1;
	}
	if (err != 0 && fd != -1) {
		close(fd);
		fd = -1;
	}
	if (cur != dirfd)
		close(cur);
	while (depth > 1)
		close(stack[--depth]);
	errno = err;
	return fd;
}

/*
 * openat2(2) beneath dirfd: no "..", absolute path or symlink may lead out
 * of it, nor may a /proc magic link or a mount crossing.  Where the kernel
 * has no openat2 (gVisor's), ws_walk() instead.
 */
int
ws_openat(int dirfd, const char *path, int flags, mode_t mode,
    uint64_t resolve)
{
	static int	 no_openat2;
	struct open_how	 how;
	int		 fd, tries = 0;

	if (no_openat2)
		return ws_walk(dirfd, path, flags | O_CLOEXEC |
		    (flags & O_PATH ? 0 : O_NOCTTY), mode, resolve);
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	if (!(flags & O_PATH))
		how.flags |= O_NOCTTY;
	if (flags & O_CREAT)
		how.mode = mode;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
	    RESOLVE_NO_XDEV | resolve;
	for (;;) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd != -1)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ENOSYS) {
			no_openat2 = 1;
			return ws_openat(dirfd, path, flags, mode, resolve);
		}
		/* EAGAIN: a concurrent rename raced a ".."; worth a retry. */
		if (errno != EAGAIN || ++tries == 8)
			break;
	}
	return fd;
}

/* Close every fd from 3 up except keep1 and keep2 (either may be -1). */
void
close_fds_except(int keep1, int keep2)
{
	long	 max;
	int	 keep[2], i, fd, start = 3;

	keep[0] = keep1 < keep2 ? keep1 : keep2;
	keep[1] = keep1 < keep2 ? keep2 : keep1;
	for (i = 0; i < 2; i++) {
		if (keep[i] < start)
			continue;
		if (keep[i] > start &&
		    close_range((unsigned)start, (unsigned)keep[i] - 1, 0) == -1)
			goto slow;
		start = keep[i] + 1;
	}
	if (close_range((unsigned)start, ~0U, 0) == 0)
		return;
 slow:
	if ((max = sysconf(_SC_OPEN_MAX)) == -1 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
}

static void
init_hello(struct imsg *imsg)
{
	struct proto_hello	 h;
	struct proto_reject	 rej;
	const char		*why;
	char			 buf[120];

	if (imsg->hdr.type != IMSG_HELLO)
		init_violation("message type %u before hello", imsg->hdr.type);
	if ((why = proto_hello_check(imsg->data, imsg->datalen, buf,
	    sizeof(buf))) == NULL) {
		memcpy(&h, imsg->data, sizeof(h));
		if (h.role == ROLE_SANDBOXD) {
			hello_done = 1;
			return;
		}
		why = "only sandboxd may drive sandbox-init";
	}
	memset(&rej, 0, sizeof(rej));
	rej.version = MCPD_PROTO_VERSION;
	rej.role = ROLE_SANDBOX_INIT;
	snprintf(rej.reason, sizeof(rej.reason), "%s", why);
	/* Best effort: a peer this confused may not read it. */
	if (imsg_compose(&ibuf, IMSG_HELLO_REJECT, 0, -1, &rej,
	    sizeof(rej)) == 0)
		imsgbuf_write(&ibuf);
	init_violation("refused the peer: %s", why);
}

/*
 * A signal for everything in the container but us: how sandboxd ends
 * processes where it cannot reach them through cgroups, under a kernel
 * of the runtime's own (runsc), whose processes the host never sees.
 * kill(-1) there spares only PID 1 and cannot miss a process forked
 * meanwhile; a SIGKILL is sent twice all the same.
 */
static void
init_signal(struct imsg *imsg)
{
	int32_t	 sig;

	if (imsg->datalen != sizeof(sig))
		init_violation("bad signal message");
	memcpy(&sig, imsg->data, sizeof(sig));
	if (sig != SIGKILL && sig != SIGTERM)
		init_violation("signal %d refused", (int)sig);
	if (getpid() == 1) {
		kill(-1, sig);
		if (sig == SIGKILL)
			kill(-1, sig);
	} else
		exec_signalall(sig);
}

/*
 * Between two runs of one tenant (sandboxd/reuse.c), with nothing of
 * sandboxd's in progress: KILL ends every other process in the
 * container and waits for each (a SIGKILL cannot be caught, and a
 * process forked meanwhile is found by the second kill(-1) or was
 * killed by the first), then closes the workspace, whose mount the
 * helper replaces next; OPEN opens the new one.  Nothing the runs left
 * in our memory matters: we keep no state of theirs, and being
 * undumpable, with ptrace filtered, nobody else writes it.
 */
static void
init_wipe(struct imsg *imsg)
{
	struct init_wiped	 w;
	uint32_t		 step;
	pid_t			 pid;

	if (imsg->datalen != sizeof(step))
		init_violation("bad wipe message");
	memcpy(&step, imsg->data, sizeof(step));
	memset(&w, 0, sizeof(w));
	w.step = step;
	switch (step) {
	case INIT_WIPE_KILL:
		if (exec_busy() || file_busy())
			init_violation("a wipe while work is in progress");
		if (getpid() == 1) {
			kill(-1, SIGKILL);
			kill(-1, SIGKILL);
		} else
			exec_killall();
		for (;;) {
			pid = waitpid(-1, NULL, __WALL);
			if (pid == -1 && errno == EINTR)
				continue;
			if (pid == -1)
				break;
			w.reaped++;
		}
		if (errno != ECHILD)
			init_violation("waitpid: %s", strerror(errno));
		exec_forget();
		if (wsfd != -1)
			close(wsfd);
		wsfd = -1;
		break;
	case INIT_WIPE_OPEN:
		if (wsfd != -1)
			init_violation("a workspace open twice");
		if ((wsfd = open(wsdir, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
		    -1)
			init_violation("%s: %s", wsdir, strerror(errno));
		break;
	default:
		init_violation("wipe step %u refused", step);
	}
	init_send(IMSG_INIT_WIPED, imsg->hdr.peerid, &w, sizeof(w));
}

static void
init_dispatch(struct imsg *imsg)
{
	if (imsg->fd != -1 && imsg->hdr.type != IMSG_INIT_FD)
		init_violation("an fd came with message type %u",
		    imsg->hdr.type);
	if (!hello_done) {
		init_hello(imsg);
		return;
	}
	switch (imsg->hdr.type) {
	case IMSG_INIT_FD:
		exec_fd(imsg);
		break;
	case IMSG_INIT_EXEC:
		exec_start(imsg);
		break;
	case IMSG_INIT_WRITE:
	case IMSG_INIT_READ:
	case IMSG_INIT_LIST:
	case IMSG_INIT_DELETE:
	case IMSG_INIT_OPEN:
		file_dispatch(imsg);
		break;
	case IMSG_INIT_DATA:
		file_data(imsg);
		break;
	case IMSG_INIT_SIGNAL:
		init_signal(imsg);
		break;
	case IMSG_INIT_WIPE:
		init_wipe(imsg);
		break;
	default:
		init_violation("unexpected message type %u", imsg->hdr.type);
	}
}

static void
init_read(void)
{
	struct imsg	 imsg;
	ssize_t		 n;
	int		 r;

	if ((n = imsgbuf_read(&ibuf)) == 0)
		init_exit(0);		/* sandboxd is done with us */
	if (n == -1) {
		if (errno == EAGAIN)
			return;
		if (ibuf.syserr)
			warn("control socket: %s", ibuf.err);
		else
			warnx("control socket: %s", ibuf.err);
		init_exit(1);
	}
	while ((r = imsg_get(&ibuf, &imsg)) == 1) {
		init_dispatch(&imsg);
		imsg_free(&imsg);
	}
	if (r == -1)
		init_violation("control socket: %s", ibuf.err);
}

static void
init_sigchld(void)
{
	struct signalfd_siginfo	 si;

	/* Signals merge: one pass of wait4() reaps all that are ready. */
	while (read(sigfd, &si, sizeof(si)) > 0)
		;
	exec_reap();
}

static void
init_loop(void)
{
	struct pollfd	*pfd = NULL, *tmp;
	size_t		 npfd = 0, want;
	int		 n;

	for (;;) {
		file_step();
		want = 2 + (size_t)exec_npollfds();
		if (want > npfd) {
			if ((tmp = reallocarray(pfd, want, sizeof(*pfd))) ==
			    NULL) {
				warn("poll set");
				init_exit(1);
			}
			pfd = tmp;
			npfd = want;
		}
		pfd[0].fd = ibuf.fd;
		pfd[0].events = POLLIN;
		if (imsgbuf_queued(&ibuf) > 0)
			pfd[0].events |= POLLOUT;
		pfd[1].fd = sigfd;
		pfd[1].events = POLLIN;
		n = 2 + exec_pollfds(pfd + 2, (int)npfd - 2);

		if (poll(pfd, (nfds_t)n, -1) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			warn("poll");
			init_exit(1);
		}
		if ((pfd[0].revents & POLLOUT) && imsgbuf_write(&ibuf) == -1) {
			warn("control socket: %s", ibuf.err);
			init_exit(1);
		}
		if (pfd[1].revents & POLLIN)
			init_sigchld();
		exec_pollevents(pfd + 2, n - 2);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
			init_read();
	}
}

/*
 * A descriptor number from the command line.  Under runsc, which passes
 * a container no descriptor but its stdio, the control socket is 0 and
 * the filter 1.
 */
static int
fd_arg(const char *what, const char *s)
{
	char	*end;
	long	 l;

	errno = 0;
	l = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || l < 0 || l > INT_MAX)
		errx(1, "bad %s fd: %s", what, s);
	return (int)l;
}

/*
 * The control socket came as stdio: move it above 2, and give 0 to 2 to
 * /dev/null, as runc's containers have them.
 */
static int
stdio_off(int ctlfd)
{
	int	 fd, null;

	if ((fd = fcntl(ctlfd, F_DUPFD_CLOEXEC, 3)) == -1)
		err(1, "control socket");
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		err(1, "/dev/null");
	if (dup2(null, 0) == -1 || dup2(null, 1) == -1 || dup2(null, 2) == -1)
		err(1, "/dev/null");
	if (null > 2)
		close(null);
	return fd;
}

int
main(int argc, char *argv[])
{
	struct proto_hello	 hello;
	struct stat		 st;
	sigset_t		 mask;
	char			 why[256];
	int			 ch, ctlfd = 3, filterfd = -1;

	while ((ch = getopt(argc, argv, "c:s:w:")) != -1) {
		switch (ch) {
		case 'c':
			ctlfd = fd_arg("control", optarg);
			break;
		case 's':
			filterfd = fd_arg("filter", optarg);
			break;
		case 'w':
			wsdir = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/*
	 * The seccomp filter, when sandboxd passes it rather than have runc
	 * compile it: before anything else, and fatal if it cannot be.
	 */
	if (filterfd != -1) {
		if (seccomp_load_fd(filterfd, why, sizeof(why)) == -1)
			errx(1, "%s", why);
		close(filterfd);
	}

	/*
	 * The code we run has our uid: being undumpable keeps it from
	 * ptrace(2) and from our memory and fds under /proc.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) == -1)
		err(1, "PR_SET_DUMPABLE");
	if (ctlfd < 3)
		ctlfd = stdio_off(ctlfd);
	close_fds_except(ctlfd, -1);
	if (fstat(ctlfd, &st) == -1 || !S_ISSOCK(st.st_mode))
		errx(1, "fd %d is not the control socket", ctlfd);
	/* Modes from sandboxd are applied exactly; children get 022. */
	umask(0);
	if ((wsfd = open(wsdir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", wsdir);

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == -1 ||
	    (sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		err(1, "signalfd");
	/* Write errors come back as EPIPE or EFBIG, not as our death. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	/*
	 * As PID 1 we inherit orphans anyway; elsewhere this makes them
	 * ours too, so that they are reaped the same way.
	 */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if (fcntl(ctlfd, F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(ctlfd, F_SETFL, fcntl(ctlfd, F_GETFL) | O_NONBLOCK) == -1)
		err(1, "control socket");
	imsgbuf_init(&ibuf, ctlfd, PROTO_INIT_FRAME, IMSGBUF_FDPASS);
	proto_hello_init(&hello, ROLE_SANDBOX_INIT);
	init_send(IMSG_HELLO, 0, &hello, sizeof(hello));

	init_loop();
	return 0;
}
