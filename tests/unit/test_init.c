/*
 * sandbox-init, driven over its control socket the way sandboxd drives
 * it: the hello, execs with their pipes and sync socket, every file
 * operation, hostile paths, protocol violations, and the cleanup when it
 * exits.  These tests run as root on a real machine, outside any
 * container: the cleanup must never reach beyond what sandbox-init
 * started, and one test proves it.
 *
 * The binary is $B/sandbox-init (B is the build directory, as set by
 * tests/run.sh), else the one beside this test's directory, else
 * build/sandbox-init.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "imsg.h"
#include "proto.h"
#include "../tap.h"

#define WAIT_MS		10000

static char	 initbin[PATH_MAX];
static char	 base[PATH_MAX];	/* all test files live beneath */
static char	 ws[PATH_MAX];		/* base/ws: the workspace */
static uint32_t	 nextid = 100;

struct frame {
	struct frame	*next;
	struct imsg	 m;
};

/* One sandbox-init and our end of its control socket. */
struct sbx {
	pid_t		 pid;
	struct imsgbuf	 ib;
	struct frame	*q;		/* received, not yet claimed */
	int		 dead;		/* its socket is closed or broken */
};

/* One exec: our ends of its pipes and sync socket. */
struct job {
	uint32_t	 id;
	int		 in, out, err, sync;
	pid_t		 pid;		/* from INIT_STARTED */
	pid_t		 credpid;	/* from SO_PASSCRED on the sync byte */
	struct init_exited ex;
	char		 out_buf[8192];
	size_t		 outlen;
	char		 err_buf[1024];	/* what stderr held at the exit */
};

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
msleep(int ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
die(const char *what)
{
	perror(what);
	exit(2);
}

static void
path_join(char *out, const char *a, const char *b)
{
	if ((size_t)snprintf(out, PATH_MAX, "%s/%s", a, b) >= PATH_MAX)
		die("path too long");
}

static void
put_file(const char *rel, const char *content, mode_t mode)
{
	char	 p[PATH_MAX];
	int	 fd;

	path_join(p, ws, rel);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    mode)) == -1)
		die(p);
	if (write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		die("write");
	fchmod(fd, mode);
	close(fd);
}

/* Content of a workspace file, NUL-terminated; -1 if unreadable. */
static ssize_t
get_file(const char *rel, char *buf, size_t size)
{
	char	 p[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	path_join(p, ws, rel);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n;
}

static mode_t
mode_of(const char *rel)
{
	struct stat	 st;
	char		 p[PATH_MAX];

	path_join(p, ws, rel);
	if (lstat(p, &st) == -1)
		return 0;
	return st.st_mode;
}

/* A symlink at rel in the workspace, pointing to target. */
static void
plant(const char *target, const char *rel)
{
	char	 p[PATH_MAX];

	path_join(p, ws, rel);
	if (symlink(target, p) == -1)
		die(p);
}

static int
exists(const char *abs)
{
	struct stat	 st;

	return lstat(abs, &st) == 0;
}

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static void
rm_rf(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The state letter of /proc/pid/stat and the parent; 0 if gone. */
static char
proc_state(pid_t pid, pid_t *ppid)
{
	char	 p[64], buf[512], *s;
	char	 st = 0;
	int	 fd, pp = 0;
	ssize_t	 n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((s = strrchr(buf, ')')) == NULL ||
	    sscanf(s + 1, " %c %d", &st, &pp) != 2)
		return 0;
	if (ppid != NULL)
		*ppid = pp;
	return st;
}

/* Reap a child (ours, or an orphan handed to us) within ms; -1 if not. */
static int
reap(pid_t pid, int *status, int ms)
{
	int64_t	 end = now_ms() + ms;
	pid_t	 r;

	for (;;) {
		if ((r = waitpid(pid, status, WNOHANG)) == pid)
			return 0;
		if (r == -1 || now_ms() > end)
			return -1;
		msleep(5);
	}
}

/* Killed by SIGKILL and reaped by us (we are the subreaper). */
static int
reaped_killed(pid_t pid)
{
	int	 st;

	return reap(pid, &st, WAIT_MS) == 0 && WIFSIGNALED(st) &&
	    WTERMSIG(st) == SIGKILL;
}

/*
 * Control socket plumbing.
 */

/* Read what is there within ms and queue every whole frame. */
static int
sbx_fill(struct sbx *sb, int ms)
{
	struct pollfd	 pfd;
	struct frame	*f, **tail;
	struct imsg	 m;
	ssize_t		 n;
	int		 r, got = 0;

	if (sb->dead)
		return -1;
	pfd.fd = sb->ib.fd;
	pfd.events = POLLIN;
	if ((r = poll(&pfd, 1, ms)) <= 0)
		return r == 0 ? 0 : -1;
	n = imsgbuf_read(&sb->ib);
	if (n == 0 || (n == -1 && errno != EAGAIN)) {
		sb->dead = 1;
		return -1;
	}
	for (tail = &sb->q; *tail != NULL; tail = &(*tail)->next)
		;
	while ((r = imsg_get(&sb->ib, &m)) == 1) {
		if ((f = calloc(1, sizeof(*f))) == NULL)
			die("calloc");
		f->m = m;
		*tail = f;
		tail = &f->next;
		got++;
	}
	if (r == -1) {
		diag("bad stream from sandbox-init: %s", sb->ib.err);
		sb->dead = 1;
		return -1;
	}
	return got;
}

/* The first queued frame for id with that type (0: any); 0 or -1. */
static int
sbx_wait(struct sbx *sb, uint32_t type, uint32_t id, struct imsg *out,
    int ms)
{
	struct frame	**fp, *f;
	int64_t		 end = now_ms() + ms;
	int64_t		 left;

	for (;;) {
		for (fp = &sb->q; (f = *fp) != NULL; fp = &f->next) {
			if (f->m.hdr.peerid != id ||
			    (type != 0 && f->m.hdr.type != type))
				continue;
			*fp = f->next;
			*out = f->m;
			free(f);
			return 0;
		}
		if ((left = end - now_ms()) < 0)
			return -1;
		if (sbx_fill(sb, (int)left) == -1)
			return -1;
	}
}

/* Frames queued for id, of any type. */
static int
sbx_queued(struct sbx *sb, uint32_t id)
{
	struct frame	*f;
	int		 n = 0;

	for (f = sb->q; f != NULL; f = f->next)
		if (f->m.hdr.peerid == id)
			n++;
	return n;
}

static int
sbx_send(struct sbx *sb, uint32_t type, uint32_t id, int fd,
    const void *data, size_t len)
{
	if (imsg_compose(&sb->ib, type, id, fd, data, len) == -1)
		return -1;
	return imsgbuf_flush(&sb->ib);
}

static void
sbx_free_queue(struct sbx *sb)
{
	struct frame	*f;

	while ((f = sb->q) != NULL) {
		sb->q = f->next;
		imsg_free(&f->m);
		free(f);
	}
}

struct spawn_opts {
	const char	*wsdir;
	rlim_t		 fsize;		/* RLIMIT_FSIZE, or 0 */
	const char	*tmpfs;		/* mount a small tmpfs on wsdir */
	int		 newpid;	/* run as PID 1 of a new pid namespace */
	const char	*filter;	/* a file given as "-s 4" */
	int		 no_openat2;	/* ENOSYS, as under gVisor */
	int		 stdio;		/* the socket as fd 0, as runsc gives it */
};

/* A seccomp program: system call nr answers err, every other is allowed. */
#define ONE_CALL_LEN	4
static void
one_call_filter(struct sock_filter f[ONE_CALL_LEN], int nr, int err)
{
	const struct sock_filter prog[ONE_CALL_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	memcpy(f, prog, sizeof(prog));
}

/* openat2(2) answers ENOSYS from here on, as gVisor's kernel does. */
static int
deny_openat2(void)
{
	struct sock_filter	 f[ONE_CALL_LEN];
	struct sock_fprog	 prog = { ONE_CALL_LEN, f };

	one_call_filter(f, SYS_openat2, ENOSYS);

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == -1 ?
	    -1 : 0;
}

/* In the child, before sandbox-init starts: shape its world. */
static void
spawn_setup(const struct spawn_opts *o)
{
	struct rlimit	 rl;
	pid_t		 pid;
	int		 st;

	if (o->no_openat2 && deny_openat2() == -1)
		_exit(125);
	if (o->fsize != 0) {
		rl.rlim_cur = rl.rlim_max = o->fsize;
		if (setrlimit(RLIMIT_FSIZE, &rl) == -1)
			_exit(125);
	}
	if (o->tmpfs != NULL && (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount("tmpfs", o->wsdir, "tmpfs", MS_NOSUID | MS_NODEV,
	    o->tmpfs) == -1))
		_exit(125);
	if (o->newpid) {
		if (unshare(CLONE_NEWPID) == -1)
			_exit(125);
		if ((pid = fork()) == -1)
			_exit(125);
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			return;
		}
		/* Stand in for the namespace's init, holding no fds. */
		close_range(3, ~0U, 0);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
}

static int
sbx_spawn(struct sbx *sb, const struct spawn_opts *o)
{
	int	 sv[2];

	memset(sb, 0, sizeof(*sb));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		die("socketpair");
	if ((sb->pid = fork()) == -1)
		die("fork");
	if (sb->pid == 0) {
		if (o != NULL)
			spawn_setup(o);
		if (o != NULL && o->stdio) {
			if (dup2(sv[1], 0) == -1)
				_exit(126);
			execl(initbin, "sandbox-init", "-c", "0", "-w",
			    o->wsdir != NULL ? o->wsdir : ws, (char *)NULL);
			_exit(127);
		}
		if (sv[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(sv[1], 3) == -1)
			_exit(126);
		if (o != NULL && o->filter != NULL) {
			int	 fd;

			if ((fd = open(o->filter, O_RDONLY)) == -1 ||
			    dup2(fd, 4) == -1)
				_exit(126);
			execl(initbin, "sandbox-init", "-c", "3", "-s", "4",
			    "-w", o->wsdir != NULL ? o->wsdir : ws,
			    (char *)NULL);
			_exit(127);
		}
		execl(initbin, "sandbox-init", "-c", "3", "-w",
		    o != NULL && o->wsdir != NULL ? o->wsdir : ws, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	imsgbuf_init(&sb->ib, sv[0], PROTO_INIT_FRAME, IMSGBUF_FDPASS);
	return 0;
}

/* Its hello, checked; then ours.  0 when both went well. */
static int
sbx_hello(struct sbx *sb, uint32_t version, uint32_t role)
{
	struct proto_hello	 h;
	struct imsg		 m;
	char			 why[128];
	int			 good;

	if (sbx_wait(sb, IMSG_HELLO, 0, &m, WAIT_MS) == -1)
		return -1;
	good = proto_hello_check(m.data, m.datalen, why, sizeof(why)) == NULL;
	if (good) {
		memcpy(&h, m.data, sizeof(h));
		good = h.role == ROLE_SANDBOX_INIT;
	}
	imsg_free(&m);
	if (!good)
		return -1;
	proto_hello_init(&h, (enum proc_role)role);
	h.version = version;
	return sbx_send(sb, IMSG_HELLO, 0, -1, &h, sizeof(h));
}

static int
sbx_start(struct sbx *sb, const struct spawn_opts *o)
{
	sbx_spawn(sb, o);
	return sbx_hello(sb, MCPD_PROTO_VERSION, ROLE_SANDBOXD);
}

/* Its exit status within ms, or -1 (then it is killed). */
static int
sbx_exit_status(struct sbx *sb, int ms)
{
	int	 st;

	if (sb->pid <= 0)
		return -1;
	if (reap(sb->pid, &st, ms) == -1) {
		kill(sb->pid, SIGKILL);
		waitpid(sb->pid, &st, 0);
		sb->pid = 0;
		return -1;
	}
	sb->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Close the control socket (sandboxd's way to say goodbye); its status. */
static int
sbx_stop(struct sbx *sb)
{
	int	 st;

	close(sb->ib.fd);
	imsgbuf_clear(&sb->ib);
	sbx_free_queue(sb);
	st = sbx_exit_status(sb, WAIT_MS);
	return st;
}

/*
 * Execs.
 */

static int
count_strv(const char *const *v)
{
	int	 n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

/* An EXEC frame; list_id for INIT_EXEC_LIST. */
static int
send_exec_l(struct sbx *sb, uint32_t id, uint32_t flags, uint32_t list_id,
    uint32_t argc, const char *cwd, const char *const *argv,
    const char *const *env)
{
	struct init_exec	 ie;
	uint8_t			*buf;
	size_t			 len = sizeof(ie) + strlen(cwd) + 1, off;
	int			 i, r;

	for (i = 0; argv[i] != NULL; i++)
		len += strlen(argv[i]) + 1;
	for (i = 0; env != NULL && env[i] != NULL; i++)
		len += strlen(env[i]) + 1;
	if ((buf = malloc(len)) == NULL)
		die("malloc");
	memset(&ie, 0, sizeof(ie));
	ie.argc = argc;
	ie.envc = (uint32_t)count_strv(env);
	ie.flags = flags;
	ie.list_id = list_id;
	memcpy(buf, &ie, sizeof(ie));
	off = sizeof(ie);
	memcpy(buf + off, cwd, strlen(cwd) + 1);
	off += strlen(cwd) + 1;
	for (i = 0; argv[i] != NULL; i++) {
		memcpy(buf + off, argv[i], strlen(argv[i]) + 1);
		off += strlen(argv[i]) + 1;
	}
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		memcpy(buf + off, env[i], strlen(env[i]) + 1);
		off += strlen(env[i]) + 1;
	}
	r = sbx_send(sb, IMSG_INIT_EXEC, id, -1, buf, len);
	free(buf);
	return r;
}

static int
send_exec(struct sbx *sb, uint32_t id, uint32_t flags, uint32_t argc,
    const char *cwd, const char *const *argv, const char *const *env)
{
	return send_exec_l(sb, id, flags, 0, argc, cwd, argv, env);
}

static int
send_fd(struct sbx *sb, uint32_t id, uint32_t which, int fd)
{
	return sbx_send(sb, IMSG_INIT_FD, id, fd, &which, sizeof(which));
}

static void
job_init(struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->in = j->out = j->err = j->sync = -1;
}

/* Make the pipes and the sync socket (if sync), pass their far ends. */
static int
job_fds(struct sbx *sb, struct job *j, uint32_t id, int sync)
{
	int	 in[2], out[2], err[2], sp[2], one = 1;

	job_init(j);
	j->id = id;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		die("pipe");
	/* Before the child can write: its credentials come with the byte. */
	if (setsockopt(sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == -1)
		die("SO_PASSCRED");
	j->in = in[1];
	j->out = out[0];
	j->err = err[0];
	j->sync = sp[0];
	/* The queue owns the far ends: they are closed once sent. */
	if (send_fd(sb, id, INIT_FD_STDIN, in[0]) == -1 ||
	    send_fd(sb, id, INIT_FD_STDOUT, out[1]) == -1 ||
	    send_fd(sb, id, INIT_FD_STDERR, err[1]) == -1)
		return -1;
	if (!sync) {
		close(sp[0]);
		close(sp[1]);
		j->sync = -1;
		return 0;
	}
	return send_fd(sb, id, INIT_FD_SYNC, sp[1]);
}

static int
job_send(struct sbx *sb, struct job *j, uint32_t flags, const char *cwd,
    const char *const *argv, const char *const *env)
{
	if (job_fds(sb, j, nextid++, !(flags & INIT_EXEC_NOSYNC)) == -1)
		return -1;
	return send_exec(sb, j->id, flags, (uint32_t)count_strv(argv), cwd,
	    argv, env);
}

static void
job_close(struct job *j)
{
	if (j->in != -1)
		close(j->in);
	if (j->out != -1)
		close(j->out);
	if (j->err != -1)
		close(j->err);
	if (j->sync != -1)
		close(j->sync);
	j->in = j->out = j->err = j->sync = -1;
}

/* The sync byte, and the pid its credentials name; -1 on timeout. */
static int
job_sync(struct job *j)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(struct ucred))];
	}		 cm;
	struct pollfd	 pfd = { j->sync, POLLIN, 0 };
	struct msghdr	 msg;
	struct cmsghdr	*c;
	struct ucred	 uc;
	struct iovec	 iov;
	char		 b;

	j->credpid = -1;
	if (poll(&pfd, 1, WAIT_MS) != 1)
		return -1;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &b;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if (recvmsg(j->sync, &msg, 0) != 1)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			j->credpid = uc.pid;
		}
	}
	return 0;
}

static int
job_go(struct job *j)
{
	return write(j->sync, "g", 1) == 1 ? 0 : -1;
}

/* Read stdout until EOF (or a newline with line set); -1 on timeout. */
static int
job_read(struct job *j, int line)
{
	struct pollfd	 pfd = { j->out, POLLIN, 0 };
	int64_t		 end = now_ms() + WAIT_MS;
	ssize_t		 n;

	for (;;) {
		if (line && memchr(j->out_buf, '\n', j->outlen) != NULL)
			return 0;
		if (poll(&pfd, 1, (int)(end - now_ms())) != 1)
			return -1;
		n = read(j->out, j->out_buf + j->outlen,
		    sizeof(j->out_buf) - 1 - j->outlen);
		if (n <= 0)
			return n == 0 ? 0 : -1;
		j->outlen += (size_t)n;
		j->out_buf[j->outlen] = '\0';
	}
}

/* Whatever stderr holds, once the command is gone. */
static void
job_read_err(struct job *j)
{
	ssize_t	 n;
	size_t	 len = 0;

	fcntl(j->err, F_SETFL, O_NONBLOCK);
	while (len < sizeof(j->err_buf) - 1 &&
	    (n = read(j->err, j->err_buf + len,
	    sizeof(j->err_buf) - 1 - len)) > 0)
		len += (size_t)n;
	j->err_buf[len] = '\0';
}

/* STARTED, or -1 (an EXITED may have come instead). */
static int
job_started(struct sbx *sb, struct job *j)
{
	struct init_started	 st;
	struct imsg		 m;
	int			 r;

	if (sbx_wait(sb, 0, j->id, &m, WAIT_MS) == -1)
		return -1;
	if (m.hdr.type == IMSG_INIT_EXITED &&
	    proto_payload(m.data, m.datalen, &j->ex, sizeof(j->ex)) == 0) {
		imsg_free(&m);
		return 1;
	}
	r = m.hdr.type == IMSG_INIT_STARTED &&
	    proto_payload(m.data, m.datalen, &st, sizeof(st)) == 0 ? 0 : -1;
	j->pid = r == 0 ? st.pid : -1;
	imsg_free(&m);
	return r;
}

static int
job_exited(struct sbx *sb, struct job *j)
{
	struct imsg	 m;
	int		 r;

	if (sbx_wait(sb, IMSG_INIT_EXITED, j->id, &m, WAIT_MS) == -1)
		return -1;
	r = proto_payload(m.data, m.datalen, &j->ex, sizeof(j->ex));
	imsg_free(&m);
	return r;
}

/*
 * The whole of an exec: started, synced, fed input, read to EOF, exited.
 * 1 when it was refused (EXITED without STARTED), -1 when anything
 * failed, else 0.
 */
static int
job_run(struct sbx *sb, struct job *j, uint32_t flags, const char *cwd,
    const char *const *argv, const char *const *env, const char *input)
{
	int	 r;

	if (job_send(sb, j, flags, cwd, argv, env) == -1)
		return -1;
	if ((r = job_started(sb, j)) != 0) {
		job_close(j);
		return r;
	}
	if (!(flags & INIT_EXEC_NOSYNC) && (job_sync(j) == -1 ||
	    job_go(j) == -1))
		r = -1;
	if (input != NULL && write(j->in, input, strlen(input)) !=
	    (ssize_t)strlen(input))
		r = -1;
	close(j->in);
	j->in = -1;
	if (r == 0 && job_read(j, 0) == -1)
		r = -1;
	if (r == 0 && job_exited(sb, j) == -1)
		r = -1;
	if (r == 0)
		job_read_err(j);
	job_close(j);
	return r;
}

/* An exec of argv, straight through; its stdout in j. */
static int
run(struct sbx *sb, struct job *j, const char *const *argv)
{
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };

	return job_run(sb, j, 0, "", argv, env, NULL);
}

/* A sleeper, past its sync: its pid, or -1. */
static pid_t
start_sleeper(struct sbx *sb, struct job *j)
{
	static const char *const argv[] = { "/bin/sleep", "1000", NULL };

	if (job_send(sb, j, 0, "", argv, NULL) == -1 ||
	    job_started(sb, j) != 0 || job_sync(j) == -1 || job_go(j) == -1)
		return -1;
	return j->pid;
}

/*
 * File operations.
 */

static int
send_file(struct sbx *sb, uint32_t type, uint32_t id, uint32_t flags,
    uint32_t mode, uint64_t size, const char *path)
{
	struct init_file	 f;
	struct iovec		 iov[2];

	memset(&f, 0, sizeof(f));
	f.flags = flags;
	f.mode = mode;
	f.size = size;
	iov[0].iov_base = &f;
	iov[0].iov_len = sizeof(f);
	iov[1].iov_base = (void *)(uintptr_t)path;
	iov[1].iov_len = strlen(path) + 1;
	if (imsg_composev(&sb->ib, type, id, -1, iov, 2) == -1)
		return -1;
	return imsgbuf_flush(&sb->ib);
}

static int
wait_done(struct sbx *sb, uint32_t id, struct init_done *d)
{
	struct imsg	 m;
	int		 r;

	memset(d, 0, sizeof(*d));
	d->error = -1;
	if (sbx_wait(sb, IMSG_INIT_DONE, id, &m, WAIT_MS) == -1)
		return -1;
	r = proto_payload(m.data, m.datalen, d, sizeof(*d));
	imsg_free(&m);
	return r;
}

/* A request without data; the errno it got, or -1 on no answer. */
static int
simple_op(struct sbx *sb, uint32_t type, const char *path, uint32_t flags,
    uint32_t mode)
{
	struct init_done	 d;
	uint32_t		 id = nextid++;

	if (send_file(sb, type, id, flags, mode, 0, path) == -1 ||
	    wait_done(sb, id, &d) == -1)
		return -1;
	return d.error;
}

static int
send_data(struct sbx *sb, uint32_t id, const void *p, size_t len)
{
	return sbx_send(sb, IMSG_INIT_DATA, id, -1, p, len);
}

/* WRITE path with data, in PROTO_CHUNK frames; its DONE in d. */
static int
do_write(struct sbx *sb, const char *path, uint32_t flags, uint32_t mode,
    const void *data, size_t len, struct init_done *d)
{
	const uint8_t	*p = data;
	size_t		 off, n;
	uint32_t	 id = nextid++;

	if (send_file(sb, IMSG_INIT_WRITE, id, flags, mode, len, path) == -1)
		return -1;
	for (off = 0; off < len; off += n) {
		n = len - off > PROTO_CHUNK ? PROTO_CHUNK : len - off;
		if (send_data(sb, id, p + off, n) == -1)
			return -1;
	}
	return wait_done(sb, id, d);
}

static int
write_str(struct sbx *sb, const char *path, uint32_t flags, uint32_t mode,
    const char *s)
{
	struct init_done	 d;

	if (do_write(sb, path, flags, mode, s, strlen(s), &d) == -1)
		return -1;
	if (d.error == 0 && d.size != strlen(s))
		return -1;
	return d.error;
}

/*
 * READ path up to limit; the content (up to size) in buf.  Also checks
 * that no DATA frame exceeds PROTO_CHUNK (*bigframe set if one did).
 */
static int
do_read(struct sbx *sb, const char *path, uint64_t limit, void *buf,
    size_t size, uint64_t *got, struct init_done *d, int *bigframe)
{
	struct imsg	 m;
	uint32_t	 id = nextid++;

	*got = 0;
	*bigframe = 0;
	memset(d, 0, sizeof(*d));
	d->error = -1;
	if (send_file(sb, IMSG_INIT_READ, id, 0, 0, limit, path) == -1)
		return -1;
	for (;;) {
		if (sbx_wait(sb, 0, id, &m, WAIT_MS) == -1)
			return -1;
		if (m.hdr.type == IMSG_INIT_DONE) {
			memset(d, 0, sizeof(*d));
			if (proto_payload(m.data, m.datalen, d,
			    sizeof(*d)) == -1)
				d->error = -1;
			imsg_free(&m);
			return 0;
		}
		if (m.hdr.type != IMSG_INIT_DATA) {
			imsg_free(&m);
			return -1;
		}
		if (m.datalen > PROTO_CHUNK)
			*bigframe = 1;
		if (*got < size)
			memcpy((uint8_t *)buf + *got, m.data,
			    m.datalen < size - *got ? m.datalen :
			    size - *got);
		*got += m.datalen;
		imsg_free(&m);
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The answer to LIST id: the entries as "name:t" sorted and joined by ','
 * into out, t being d, f, l or p.  -1 on a malformed answer.
 */
static int
list_read(struct sbx *sb, uint32_t id, char *out, size_t outsize,
    struct init_done *d)
{
	struct init_entry	 e;
	struct imsg		 m;
	char			*names[512], *name;
	size_t			 off, n = 0, i;
	int			 bad = 0;
	char			 t;

	out[0] = '\0';
	for (;;) {
		if (sbx_wait(sb, 0, id, &m, WAIT_MS) == -1)
			return -1;
		if (m.hdr.type == IMSG_INIT_DONE)
			break;
		if (m.hdr.type != IMSG_INIT_ENTRY || m.datalen == 0 ||
		    m.datalen > PROTO_INIT_FRAME / 2)
			bad = 1;
		for (off = 0; !bad && off < m.datalen;) {
			if (m.datalen - off < sizeof(e)) {
				bad = 1;
				break;
			}
			memcpy(&e, (uint8_t *)m.data + off, sizeof(e));
			name = (char *)m.data + off + sizeof(e);
			if (e.namelen == 0 ||
			    e.namelen > m.datalen - off - sizeof(e) ||
			    name[e.namelen - 1] != '\0' || n == 512) {
				bad = 1;
				break;
			}
			t = S_ISDIR(e.mode) ? 'd' : S_ISREG(e.mode) ? 'f' :
			    S_ISLNK(e.mode) ? 'l' : 'p';
			if (asprintf(&names[n++], "%s:%c", name, t) == -1)
				die("asprintf");
			off += sizeof(e) + e.namelen;
		}
		imsg_free(&m);
	}
	memset(d, 0, sizeof(*d));
	if (proto_payload(m.data, m.datalen, d, sizeof(*d)) == -1)
		bad = 1;
	imsg_free(&m);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (strlen(out) + strlen(names[i]) + 2 < outsize) {
			if (i > 0)
				strcat(out, ",");
			strcat(out, names[i]);
		}
		free(names[i]);
	}
	if (!bad && d->size != n)
		bad = 1;
	return bad ? -1 : 0;
}

/* LIST path, answered as list_read() says. */
static int
do_list(struct sbx *sb, const char *path, uint32_t flags, uint64_t limit,
    char *out, size_t outsize, struct init_done *d)
{
	uint32_t	 id = nextid++;

	if (send_file(sb, IMSG_INIT_LIST, id, flags, 0, limit, path) == -1)
		return -1;
	return list_read(sb, id, out, outsize, d);
}

/* Answered at all: a LIST of the root that comes back. */
static int
alive(struct sbx *sb)
{
	return simple_op(sb, IMSG_INIT_LIST, "", 0, 0) == 0;
}

/*
 * The tests.
 */

static void
test_hello(void)
{
	struct proto_reject	 rej;
	struct imsg		 m;
	struct sbx		 sb;
	int			 gotrej, st;

	ok(sbx_start(&sb, NULL) == 0, "hello: it says hello as sandbox-init, "
	    "version %u", MCPD_PROTO_VERSION);
	ok(alive(&sb), "hello: after ours, it answers requests");
	ok(sbx_stop(&sb) == 0, "hello: EOF on the control socket: exit 0");

	sbx_spawn(&sb, NULL);
	sbx_hello(&sb, MCPD_PROTO_VERSION + 1, ROLE_SANDBOXD);
	st = sbx_exit_status(&sb, WAIT_MS);
	gotrej = sbx_wait(&sb, IMSG_HELLO_REJECT, 0, &m, WAIT_MS) == 0 &&
	    proto_payload(m.data, m.datalen, &rej, sizeof(rej)) == 0 &&
	    rej.version == MCPD_PROTO_VERSION &&
	    rej.role == ROLE_SANDBOX_INIT;
	if (gotrej)
		imsg_free(&m);
	ok(gotrej, "hello: another version is refused with HELLO_REJECT");
	ok(st == 1, "hello: ... and it exits 1");
	sbx_stop(&sb);

	/* Its exit status comes before our EOF could be the reason. */
	sbx_spawn(&sb, NULL);
	sbx_hello(&sb, MCPD_PROTO_VERSION, ROLE_MCPD);
	ok(sbx_exit_status(&sb, WAIT_MS) == 1,
	    "hello: a peer other than sandboxd: exit 1");
	sbx_stop(&sb);

	sbx_spawn(&sb, NULL);
	send_file(&sb, IMSG_INIT_LIST, 1, 0, 0, 10, "");
	ok(sbx_exit_status(&sb, WAIT_MS) == 1,
	    "hello: a request before hello: exit 1");
	sbx_stop(&sb);
}

static void
test_exec_basic(struct sbx *sb)
{
	static const char *const echo[] = { "/bin/echo", "hello", NULL };
	struct job	 j;
	pid_t		 ppid = 0;
	char		 st;
	int		 r;

	r = job_send(sb, &j, 0, "", echo, NULL);
	ok(r == 0 && job_started(sb, &j) == 0 && j.pid > 1,
	    "exec: STARTED names a pid (%d)", (int)j.pid);
	ok(job_sync(&j) == 0 && j.credpid == j.pid,
	    "exec: the sync byte's SO_PASSCRED pid is that pid (%d)",
	    (int)j.credpid);
	st = proc_state(j.pid, &ppid);
	ok(st != 0 && st != 'Z' && ppid == sb->pid,
	    "exec: it is a live process (%c), child of sandbox-init", st);
	job_go(&j);
	close(j.in);
	j.in = -1;
	ok(job_read(&j, 0) == 0 && strcmp(j.out_buf, "hello\n") == 0,
	    "exec: after the go byte, /bin/echo writes to the stdout pipe");
	ok(job_exited(sb, &j) == 0 && WIFEXITED(j.ex.status) &&
	    WEXITSTATUS(j.ex.status) == 0 && j.ex.exec_errno == 0,
	    "exec: EXITED with status 0 and no exec errno");
	ok(j.ex.maxrss_kb > 0 && j.ex.maxrss_kb < 1024 * 1024 &&
	    j.ex.utime_us + j.ex.stime_us < 5000000,
	    "exec: sane rusage (maxrss %llu kB, %llu+%llu us)",
	    (unsigned long long)j.ex.maxrss_kb,
	    (unsigned long long)j.ex.utime_us,
	    (unsigned long long)j.ex.stime_us);
	ok(proc_state(j.pid, NULL) == 0, "exec: it was reaped");
	job_close(&j);
}

/* INIT_EXEC_LIST: the workspace listed unasked once the command ends. */
static void
test_exec_list(struct sbx *sb)
{
	static const char *const mk[] = { "/bin/sh", "-c",
	    "echo x > made.txt", NULL };
	struct init_done	 d;
	struct job		 j;
	char			 out[4096];
	uint32_t		 lid;

	mkdir(ws, 0755);
	lid = nextid++;
	if (job_fds(sb, &j, nextid++, 0) == -1 || send_exec_l(sb, j.id,
	    INIT_EXEC_NOSYNC | INIT_EXEC_LIST, lid, 3, "", mk, NULL) == -1) {
		ok(0, "exec list: sent");
		return;
	}
	close(j.in);
	j.in = -1;
	ok(job_started(sb, &j) == 0 && job_exited(sb, &j) == 0 &&
	    WIFEXITED(j.ex.status) && WEXITSTATUS(j.ex.status) == 0,
	    "exec list: the command ran");
	ok(list_read(sb, lid, out, sizeof(out), &d) == 0 && d.error == 0 &&
	    strstr(out, "made.txt:f") != NULL,
	    "exec list: as it ended, the workspace was listed unasked, with "
	    "what it made (%.200s)", out);
	ok(alive(sb), "exec list: init goes on");
	job_close(&j);
}

/* sh -c 'echo $#' with 4100 arguments after $0. */
static int
many_args(struct sbx *sb, struct job *j)
{
	const char	**argv;
	int		  i, r;

	if ((argv = calloc(4 + 4100 + 1, sizeof(*argv))) == NULL)
		die("calloc");
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = "echo $#";
	argv[3] = "sh";
	for (i = 0; i < 4100; i++)
		argv[4 + i] = "arg";
	r = job_run(sb, j, 0, "", argv, NULL, NULL);
	free(argv);
	return r;
}

static void
test_exec_io(struct sbx *sb)
{
	static const char *const cat[] = { "/bin/cat", NULL };
	static const char *const ex3[] = { "/bin/sh", "-c", "exit 3", NULL };
	static const char *const term[] = { "/bin/sh", "-c", "kill -TERM $$",
	    NULL };
	static const char *const pipe_[] = { "/bin/sh", "-c", "kill -PIPE $$",
	    NULL };
	static const char *const sigs[] = { "/bin/sh", "-c",
	    "grep -E '^Sig(Blk|Ign)' /proc/self/status; umask", NULL };
	static const char *const fds[] = { "/bin/ls", "/proc/self/fd", NULL };
	static const char *const args[] = { "/bin/sh", "-c",
	    "printf '[%s]' \"$@\"", "sh", "a b", "", "c", NULL };
	static const char *const envp[] = { "/usr/bin/env", NULL };
	static const char *const envv[] = { "A=1", "B=two words", NULL };
	static const char *const burn[] = { "/bin/sh", "-c",
	    "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", NULL };
	struct job	 j;

	ok(job_run(sb, &j, 0, "", cat, NULL, "to stdin\n") == 0 &&
	    strcmp(j.out_buf, "to stdin\n") == 0,
	    "exec: stdin is passed through (cat)");
	ok(run(sb, &j, ex3) == 0 && WIFEXITED(j.ex.status) &&
	    WEXITSTATUS(j.ex.status) == 3, "exec: exit status 3 is reported");
	ok(run(sb, &j, term) == 0 && WIFSIGNALED(j.ex.status) &&
	    WTERMSIG(j.ex.status) == SIGTERM,
	    "exec: a death by SIGTERM is reported");
	ok(run(sb, &j, pipe_) == 0 && WIFSIGNALED(j.ex.status) &&
	    WTERMSIG(j.ex.status) == SIGPIPE,
	    "exec: SIGPIPE is back to its default in the child");
	ok(run(sb, &j, sigs) == 0 && strcmp(j.out_buf,
	    "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n0022\n") ==
	    0, "exec: no signal blocked or ignored, umask 022");
	ok(run(sb, &j, fds) == 0 && strcmp(j.out_buf, "0\n1\n2\n3\n") == 0,
	    "exec: the command gets fds 0-2 only (3 is ls's own)");
	ok(run(sb, &j, args) == 0 && strcmp(j.out_buf, "[a b][][c]") == 0,
	    "exec: argv arrives intact, empty strings too");
	ok(job_run(sb, &j, 0, "", envp, envv, NULL) == 0 &&
	    strcmp(j.out_buf, "A=1\nB=two words\n") == 0,
	    "exec: the environment is exactly the one sent");
	ok(many_args(sb, &j) == 0 && strcmp(j.out_buf, "4100\n") == 0,
	    "exec: 4100 arguments (sandboxd's most, with its own 4)");
	ok(run(sb, &j, burn) == 0 && WEXITSTATUS(j.ex.status) == 0 &&
	    j.ex.utime_us + j.ex.stime_us > 0,
	    "exec: CPU time is counted (%llu us user)",
	    (unsigned long long)j.ex.utime_us);
}

/* dir/name with text in it, mode mode; dies on failure. */
static void
put_bytes(const char *dir, const char *name, const void *data, size_t len,
    mode_t mode)
{
	char	 p[PATH_MAX];
	int	 fd;

	path_join(p, dir, name);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    mode)) == -1 || write(fd, data, len) != (ssize_t)len)
		die(p);
	close(fd);
}

static void
put_prog(const char *dir, const char *name, const char *text, mode_t mode)
{
	put_bytes(dir, name, text, strlen(text), mode);
}

#define HELLO_SCRIPT	"#!/bin/sh\necho from-path \"$@\"\n"

static void
test_exec_fail(struct sbx *sb)
{
	static const char *const none[] = { "/nonexistent/prog", NULL };
	static const char *const hello[] = { "hello", "x", NULL };
	static const char *const echo[] = { "echo", "default", NULL };
	static const char *const noexec[] = { "noexec", NULL };
	static const char *const nothere[] = { "nothere", NULL };
	char		 envpath[PATH_MAX + 32], dir[PATH_MAX];
	const char	*env[2] = { envpath, NULL };
	struct job	 j;

	ok(run(sb, &j, none) == 0 && WIFEXITED(j.ex.status) &&
	    WEXITSTATUS(j.ex.status) == 127 && j.ex.exec_errno == ENOENT,
	    "exec: a missing program: status 127, exec_errno ENOENT");

	path_join(dir, base, "bin");
	mkdir(dir, 0755);
	put_prog(dir, "hello", HELLO_SCRIPT, 0755);
	put_prog(dir, "noexec", "", 0644);
	snprintf(envpath, sizeof(envpath), "PATH=/nonexistent::%s", dir);

	ok(job_run(sb, &j, INIT_EXEC_PATH, "", hello, env, NULL) == 0 &&
	    strcmp(j.out_buf, "from-path x\n") == 0 && j.ex.status == 0,
	    "exec: INIT_EXEC_PATH looks argv[0] up in the PATH sent");
	ok(job_run(sb, &j, INIT_EXEC_PATH, "", noexec, env, NULL) == 0 &&
	    WEXITSTATUS(j.ex.status) == 127 && j.ex.exec_errno == EACCES,
	    "exec: a PATH match that is not executable: EACCES");
	ok(job_run(sb, &j, INIT_EXEC_PATH, "", nothere, env, NULL) == 0 &&
	    j.ex.exec_errno == ENOENT, "exec: no PATH match: ENOENT");
	ok(job_run(sb, &j, 0, "", hello, env, NULL) == 0 &&
	    j.ex.exec_errno == ENOENT,
	    "exec: without INIT_EXEC_PATH nothing is looked up");
	ok(job_run(sb, &j, INIT_EXEC_PATH, "", echo, NULL, NULL) == 0 &&
	    strcmp(j.out_buf, "default\n") == 0,
	    "exec: no PATH in env: a default PATH");
	rm_rf(dir);
}

/*
 * Without the sync socket; and sh -c scripts that need no shell run
 * without one (the "shell" here does not even exist), those that do, or
 * whose command cannot run, with the real one.
 */
static void
test_exec_shell(struct sbx *sb)
{
	static const char *const direct[] = { "/nonexistent/sh", "-c",
	    "hello x 'a (b)'", NULL };
	static const char *const args[] = { "/nonexistent/sh", "-c",
	    "exec hello \"$@\"", "sh", "1  2", "$3", NULL };
	static const char *const env_[] = { "/nonexistent/sh", "-c", "env",
	    NULL };
	static const char *const compound[] = { "/bin/sh", "-c",
	    "hello a; hello b", NULL };
	static const char *const missing[] = { "/bin/sh", "-c",
	    "nothere arg", NULL };
	static const char *const neither[] = { "/nonexistent/sh", "-c",
	    "nothere", NULL };
	static const char *const noexec[] = { "/bin/sh", "-c", "noscript",
	    NULL };
	static const char *const echo[] = { "/bin/echo", "unsynced", NULL };
	char		 envpath[PATH_MAX + 32], dir[PATH_MAX];
	char		 real[PATH_MAX], want[PATH_MAX + 8];
	const char	*env[2] = { envpath, NULL };
	struct job	 j;

	ok(job_run(sb, &j, INIT_EXEC_NOSYNC, "", echo, NULL, NULL) == 0 &&
	    strcmp(j.out_buf, "unsynced\n") == 0 && j.ex.status == 0,
	    "exec: INIT_EXEC_NOSYNC: three fds, no sync, it runs at once");

	path_join(dir, base, "bin");
	mkdir(dir, 0755);
	put_prog(dir, "hello", HELLO_SCRIPT, 0755);
	/* No #!: only a shell runs it, as a script. */
	put_prog(dir, "noscript", "echo as-script\n", 0755);
	snprintf(envpath, sizeof(envpath), "PATH=%s:/usr/bin:/bin", dir);

	ok(job_run(sb, &j, INIT_EXEC_SH, "", direct, env, NULL) == 0 &&
	    strcmp(j.out_buf, "from-path x a (b)\n") == 0 && j.ex.status == 0,
	    "exec: INIT_EXEC_SH: a simple script runs without the shell");
	ok(job_run(sb, &j, INIT_EXEC_SH, "", args, env, NULL) == 0 &&
	    strcmp(j.out_buf, "from-path 1  2 $3\n") == 0,
	    "exec: ... exec dropped, \"$@\" the arguments as they are");
	if (realpath(ws, real) == NULL)
		die("realpath");
	snprintf(want, sizeof(want), "PWD=%s\n", real);
	ok(job_run(sb, &j, INIT_EXEC_SH, "", env_, env, NULL) == 0 &&
	    strstr(j.out_buf, want) != NULL,
	    "exec: ... with PWD in its environment, as the shell exports it");
	ok(job_run(sb, &j, INIT_EXEC_SH, "", compound, env, NULL) == 0 &&
	    strcmp(j.out_buf, "from-path a\nfrom-path b\n") == 0,
	    "exec: INIT_EXEC_SH: a compound script runs in the shell");
	ok(job_run(sb, &j, INIT_EXEC_SH, "", missing, env, NULL) == 0 &&
	    WEXITSTATUS(j.ex.status) == 127 && j.ex.exec_errno == 0 &&
	    strstr(j.err_buf, "not found") != NULL,
	    "exec: a missing command: the shell's 127 and its message");
	ok(job_run(sb, &j, INIT_EXEC_SH, "", neither, env, NULL) == 0 &&
	    WEXITSTATUS(j.ex.status) == 127 && j.ex.exec_errno == ENOENT,
	    "exec: no command and no shell: the command's ENOENT");
	ok(job_run(sb, &j, INIT_EXEC_SH, "", noexec, env, NULL) == 0 &&
	    strcmp(j.out_buf, "as-script\n") == 0 && j.ex.status == 0,
	    "exec: a file without #! still runs, as the shell's script");
	rm_rf(dir);
}

static void
test_exec_cwd(struct sbx *sb)
{
	static const char *const pwd[] = { "/bin/pwd", NULL };
	char		 p[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 8];
	struct job	 j;
	int		 r;

	path_join(p, ws, "sub");
	mkdir(p, 0755);
	if (realpath(p, real) == NULL)
		die("realpath");
	snprintf(want, sizeof(want), "%s\n", real);
	ok(job_run(sb, &j, 0, "sub", pwd, NULL, NULL) == 0 &&
	    strcmp(j.out_buf, want) == 0, "exec: cwd is a subdirectory");
	if (realpath(ws, real) == NULL)
		die("realpath");
	snprintf(want, sizeof(want), "%s\n", real);
	ok(job_run(sb, &j, 0, "", pwd, NULL, NULL) == 0 &&
	    strcmp(j.out_buf, want) == 0, "exec: cwd \"\" is the workspace");

	r = job_run(sb, &j, 0, "..", pwd, NULL, NULL);
	ok(r == 1 && WEXITSTATUS(j.ex.status) == 127 &&
	    j.ex.exec_errno == EXDEV,
	    "exec: cwd \"..\" is refused (EXDEV), nothing started");
	r = job_run(sb, &j, 0, "/", pwd, NULL, NULL);
	ok(r == 1 && j.ex.exec_errno == EXDEV, "exec: cwd \"/\" is refused");
	plant("/tmp", "outlink");
	path_join(p, ws, "outlink");
	r = job_run(sb, &j, 0, "outlink", pwd, NULL, NULL);
	ok(r == 1 && j.ex.exec_errno == EXDEV,
	    "exec: cwd through a symlink out is refused");
	unlink(p);
	r = job_run(sb, &j, 0, "missing", pwd, NULL, NULL);
	ok(r == 1 && j.ex.exec_errno == ENOENT && sbx_queued(sb, j.id) == 0,
	    "exec: a missing cwd: ENOENT");
	path_join(p, ws, "sub");
	rmdir(p);
}

static void
test_exec_sync(struct sbx *sb)
{
	static const char *const echo[] = { "/bin/echo", "early", NULL };
	struct pollfd	 pfd;
	struct job	 j;
	int		 quiet;

	job_send(sb, &j, 0, "", echo, NULL);
	job_started(sb, &j);
	job_sync(&j);
	pfd.fd = j.out;
	pfd.events = POLLIN;
	quiet = poll(&pfd, 1, 300) == 0;
	sbx_fill(sb, 0);
	ok(quiet && sbx_queued(sb, j.id) == 0,
	    "exec: nothing runs before the go byte");
	job_go(&j);
	ok(job_read(&j, 0) == 0 && strcmp(j.out_buf, "early\n") == 0 &&
	    job_exited(sb, &j) == 0 && j.ex.status == 0,
	    "exec: ... and it runs after it");
	job_close(&j);

	job_send(sb, &j, 0, "", echo, NULL);
	job_started(sb, &j);
	job_sync(&j);
	close(j.sync);
	j.sync = -1;
	ok(job_read(&j, 0) == 0 && j.outlen == 0 &&
	    job_exited(sb, &j) == 0 && WEXITSTATUS(j.ex.status) == 127 &&
	    j.ex.exec_errno == 0,
	    "exec: the sync socket closed without an answer: exit 127");
	job_close(&j);
}

static void
test_exec_background(struct sbx *sb)
{
	static const char *const bg[] = { "/bin/sh", "-c",
	    "sleep 0.4 </dev/null >/dev/null 2>&1 & echo $!", NULL };
	struct job	 j;
	pid_t		 pid = 0, ppid = 0;
	int64_t		 end;
	char		 st;

	if (run(sb, &j, bg) == 0 && j.ex.status == 0)
		pid = atoi(j.out_buf);
	ok(pid > 1, "background: the exec exited, leaving pid %d", (int)pid);
	st = proc_state(pid, &ppid);
	ok(st != 0 && st != 'Z' && ppid == sb->pid,
	    "background: its orphan lives on, adopted by sandbox-init");
	end = now_ms() + WAIT_MS;
	while ((st = proc_state(pid, NULL)) != 0 && now_ms() < end)
		msleep(20);
	ok(st == 0, "background: once it exits it is reaped, no zombie");
	ok(alive(sb) && sbx_queued(sb, j.id) == 0,
	    "background: nothing is reported for it");
}

static void
test_exec_concurrent(struct sbx *sb)
{
	static const char *const rd[] = { "/bin/sh", "-c",
	    "read x; echo got$x", NULL };
	struct job	 a, b;
	int		 r;

	job_init(&a);
	job_init(&b);
	r = job_send(sb, &a, 0, "", rd, NULL) == 0 &&
	    job_send(sb, &b, 0, "", rd, NULL) == 0 &&
	    job_started(sb, &a) == 0 && job_started(sb, &b) == 0 &&
	    job_sync(&a) == 0 && job_sync(&b) == 0 &&
	    job_go(&a) == 0 && job_go(&b) == 0 && a.pid != b.pid;
	ok(r, "concurrent: two execs run at once");
	ok(write(b.in, "B\n", 2) == 2, "concurrent: input for the second");
	ok(job_read(&b, 0) == 0 && strcmp(b.out_buf, "gotB\n") == 0 &&
	    job_exited(sb, &b) == 0 && b.ex.status == 0,
	    "concurrent: the second ends first");
	sbx_fill(sb, 50);
	ok(sbx_queued(sb, a.id) == 0 && proc_state(a.pid, NULL) == 'S',
	    "concurrent: the first still runs");
	ok(write(a.in, "A\n", 2) == 2, "concurrent: input for the first");
	ok(job_read(&a, 0) == 0 && strcmp(a.out_buf, "gotA\n") == 0 &&
	    job_exited(sb, &a) == 0 && a.ex.status == 0,
	    "concurrent: then the first ends, each with its own id");
	job_close(&a);
	job_close(&b);
}

static void
test_write(struct sbx *sb)
{
	struct init_done	 d;
	char			 buf[256];

	ok(write_str(sb, "a/b/c.txt", INIT_F_MKDIRS, 0640, "hello") == 0 &&
	    get_file("a/b/c.txt", buf, sizeof(buf)) == 5 &&
	    strcmp(buf, "hello") == 0,
	    "write: MKDIRS creates a/b and the file, DONE counts 5 bytes");
	ok((mode_of("a/b/c.txt") & 07777) == 0640 &&
	    S_ISREG(mode_of("a/b/c.txt")) &&
	    (mode_of("a") & 07777) == 0755 && (mode_of("a/b") & 07777) == 0755,
	    "write: the file gets exactly its mode, new parents 0755");
	ok(write_str(sb, "a/b/c.txt", INIT_F_APPEND, 0600, " world") == 0 &&
	    get_file("a/b/c.txt", buf, sizeof(buf)) == 11 &&
	    strcmp(buf, "hello world") == 0, "write: APPEND appends");
	ok(write_str(sb, "a/b/c.txt", 0, 0600, "new") == 0 &&
	    get_file("a/b/c.txt", buf, sizeof(buf)) == 3 &&
	    strcmp(buf, "new") == 0 && (mode_of("a/b/c.txt") & 07777) == 0640,
	    "write: a rewrite truncates and leaves the mode alone");
	ok(write_str(sb, "x/y.txt", 0, 0644, "z") == ENOENT,
	    "write: a missing parent without MKDIRS: ENOENT");
	ok(write_str(sb, "empty", 0, 0604, "") == 0 &&
	    get_file("empty", buf, sizeof(buf)) == 0 &&
	    (mode_of("empty") & 07777) == 0604,
	    "write: size 0 makes an empty file");
	ok(write_str(sb, "a/b", 0, 0644, "x") == EISDIR,
	    "write: onto a directory: EISDIR");
	ok(simple_op(sb, IMSG_INIT_WRITE, "d1", INIT_F_DIR, 0700) == 0 &&
	    S_ISDIR(mode_of("d1")) && (mode_of("d1") & 07777) == 0700,
	    "write: DIR makes a directory with its mode");
	ok(simple_op(sb, IMSG_INIT_WRITE, "d1", INIT_F_DIR, 0700) == EEXIST,
	    "write: DIR on an existing one: EEXIST");
	ok(simple_op(sb, IMSG_INIT_WRITE, "d1/e/f/", INIT_F_DIR |
	    INIT_F_MKDIRS, 0750) == 0 && (mode_of("d1/e/f") & 07777) == 0750 &&
	    (mode_of("d1/e") & 07777) == 0755 &&
	    simple_op(sb, IMSG_INIT_WRITE, "d1/e/f", INIT_F_DIR |
	    INIT_F_MKDIRS, 0750) == 0,
	    "write: DIR with MKDIRS is mkdir -p, fine when it exists");
	ok(simple_op(sb, IMSG_INIT_WRITE, "a/b/c.txt/d", INIT_F_DIR |
	    INIT_F_MKDIRS, 0755) == ENOTDIR &&
	    simple_op(sb, IMSG_INIT_WRITE, "a/b/c.txt", INIT_F_DIR |
	    INIT_F_MKDIRS, 0755) == EEXIST,
	    "write: DIR through or onto a file fails");
	memset(&d, 0, sizeof(d));
}

static void
test_read(struct sbx *sb)
{
	struct init_done	 d;
	struct stat		 st;
	static uint8_t		 big[3 * 1024 * 1024 + 17], back[sizeof(big)];
	char			 buf[64], p[PATH_MAX];
	uint64_t		 got;
	int64_t			 t0;
	size_t			 i;
	int			 fd, bigframe;

	put_file("r.txt", "0123456789", 0640);
	path_join(p, ws, "r.txt");
	stat(p, &st);
	ok(do_read(sb, "r.txt", 1 << 20, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && d.error == 0 && got == 10 && d.size == 10 &&
	    memcmp(buf, "0123456789", 10) == 0 && d.flags == 0,
	    "read: the whole file, not truncated");
	ok(d.mode == st.st_mode && d.mtime == st.st_mtime,
	    "read: DONE carries st_mode and st_mtime");
	ok(do_read(sb, "r.txt", 4, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && got == 4 && d.size == 4 &&
	    memcmp(buf, "0123", 4) == 0 && d.flags == INIT_D_TRUNCATED,
	    "read: a limit of 4 sends 4 bytes, TRUNCATED");
	ok(do_read(sb, "r.txt", 10, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && got == 10 && d.flags == 0,
	    "read: a limit equal to the size is not truncated");
	ok(simple_op(sb, IMSG_INIT_READ, "r.txt", INIT_F_MKDIRS |
	    INIT_F_APPEND | INIT_F_RECURSIVE | INIT_F_DIR, 0) == 0 &&
	    alive(sb), "read: known flags that mean nothing to READ are "
	    "ignored");
	ok(do_read(sb, "r.txt", 0, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && got == 0 && d.flags == INIT_D_TRUNCATED,
	    "read: a limit of 0 says only whether there is content");

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + i / 4096);
	path_join(p, ws, "big");
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || write(fd, big, sizeof(big)) != sizeof(big))
		die(p);
	close(fd);
	ok(do_read(sb, "big", 16 << 20, back, sizeof(back), &got, &d,
	    &bigframe) == 0 && d.error == 0 && got == sizeof(big) &&
	    d.size == sizeof(big) && !bigframe &&
	    memcmp(big, back, sizeof(big)) == 0,
	    "read: 3 MiB arrive intact, in frames of at most PROTO_CHUNK");

	path_join(p, ws, "sparse");
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || ftruncate(fd, (off_t)1 << 40) == -1)
		die(p);
	close(fd);
	t0 = now_ms();
	ok(do_read(sb, "sparse", 1 << 20, NULL, 0, &got, &d, &bigframe) ==
	    0 && d.error == 0 && got == 1 << 20 && d.size == 1 << 20 &&
	    d.flags == INIT_D_TRUNCATED && now_ms() - t0 < 5000,
	    "read: a sparse 1 TB file with a 1 MiB limit: %lld ms",
	    (long long)(now_ms() - t0));
	unlink(p);

	path_join(p, ws, "fifo");
	mkfifo(p, 0644);
	t0 = now_ms();
	ok(do_read(sb, "fifo", 100, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && d.error == EINVAL && got == 0 &&
	    now_ms() - t0 < 2000, "read: a FIFO is refused (EINVAL) at once");
	ok(write_str(sb, "fifo", 0, 0644, "x") != 0 && now_ms() - t0 < 4000,
	    "write: a FIFO is refused at once too");
	unlink(p);
	ok(do_read(sb, "a", 100, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && d.error == EISDIR,
	    "read: a directory: EISDIR");
	ok(do_read(sb, "nope", 100, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && d.error == ENOENT, "read: a missing file: ENOENT");
}

/*
 * OPEN: the errno, and with 0 the descriptor in *fd and DONE in *d; -1
 * when no answer came.  An fd on a refusal fails the test.
 */
static int
do_open(struct sbx *sb, const char *path, int *fd, struct init_done *d)
{
	struct imsg	 m;
	uint32_t	 id = nextid++;
	int		 r;

	*fd = -1;
	memset(d, 0, sizeof(*d));
	if (send_file(sb, IMSG_INIT_OPEN, id, 0, 0, 0, path) == -1 ||
	    sbx_wait(sb, IMSG_INIT_DONE, id, &m, WAIT_MS) == -1)
		return -1;
	*fd = imsg_take_fd(&m);
	r = proto_payload(m.data, m.datalen, d, sizeof(*d));
	imsg_free(&m);
	if (r == -1 || (d->error != 0) == (*fd != -1)) {
		if (*fd != -1)
			close(*fd);
		*fd = -1;
		return -1;
	}
	return d->error;
}

/* The file a download link serves: opened in here, handed out. */
static void
test_open(struct sbx *sb)
{
	struct init_done	 d;
	struct stat		 st, fst;
	char			 p[PATH_MAX], buf[16];
	int			 fd;

	put_file("o.txt", "hello", 0600);
	path_join(p, ws, "o.txt");
	stat(p, &st);
	ok(do_open(sb, "o.txt", &fd, &d) == 0 && fd != -1 &&
	    fstat(fd, &fst) == 0 && fst.st_ino == st.st_ino &&
	    fst.st_dev == st.st_dev && d.size == 5 &&
	    d.mode == st.st_mode && pread(fd, buf, sizeof(buf), 0) == 5 &&
	    memcmp(buf, "hello", 5) == 0,
	    "open: a regular file comes back as its descriptor, DONE with "
	    "its size and mode");
	ok(fd == -1 || (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	    "open: the descriptor is read-only");
	if (fd != -1)
		close(fd);
	path_join(p, ws, "osub");
	if (mkdir(p, 0755) == -1)
		die(p);
	put_file("osub/in.txt", "x", 0644);
	plant("o.txt", "olink");
	plant("osub", "odir");
	plant("/etc/passwd", "oabs");
	ok(do_open(sb, "olink", &fd, &d) == ELOOP,
	    "open: a symlink within the workspace is refused (ELOOP)");
	ok(do_open(sb, "odir/in.txt", &fd, &d) == ELOOP,
	    "open: a symlink on the way is refused (ELOOP)");
	ok(do_open(sb, "oabs", &fd, &d) == ELOOP,
	    "open: a symlink to /etc/passwd is refused, no fd");
	ok(do_open(sb, "osub/in.txt", &fd, &d) == 0 && fd != -1,
	    "open: a file in a subdirectory opens");
	if (fd != -1)
		close(fd);
	ok(do_open(sb, "../o.txt", &fd, &d) == EXDEV,
	    "open: .. out of the workspace is refused (EXDEV)");
	ok(do_open(sb, "/etc/passwd", &fd, &d) == EINVAL,
	    "open: an absolute path is refused (EINVAL)");
	ok(do_open(sb, "osub", &fd, &d) == EISDIR,
	    "open: a directory is refused (EISDIR)");
	path_join(p, ws, "ofifo");
	if (mkfifo(p, 0644) == -1)
		die(p);
	ok(do_open(sb, "ofifo", &fd, &d) == EINVAL && alive(sb),
	    "open: a FIFO is refused at once, init not stalled");
	ok(do_open(sb, "missing", &fd, &d) == ENOENT,
	    "open: a missing file is ENOENT");
}

static void
test_list(struct sbx *sb)
{
	struct init_done	 d;
	char			 out[2048], p[PATH_MAX];

	mkdir(ws, 0755);
	path_join(p, ws, "l");
	mkdir(p, 0755);
	put_file("l/f1", "1", 0644);
	put_file("l/f2", "22", 0644);
	path_join(p, ws, "l/sub");
	mkdir(p, 0755);
	put_file("l/sub/deep", "3", 0644);
	plant("sub", "l/lnk");
	path_join(p, ws, "l/fifo");
	mkfifo(p, 0600);

	ok(do_list(sb, "l", 0, 100, out, sizeof(out), &d) == 0 &&
	    d.error == 0 && d.flags == 0 && strcmp(out,
	    "f1:f,f2:f,fifo:p,lnk:l,sub:d") == 0,
	    "list: flat, without . and .., symlinks not followed: %s", out);
	ok(do_list(sb, "l", INIT_F_RECURSIVE, 100, out, sizeof(out), &d) ==
	    0 && d.error == 0 && d.flags == 0 && strcmp(out,
	    "f1:f,f2:f,fifo:p,lnk:l,sub/deep:f,sub:d") == 0,
	    "list: recursive, names relative, never via a symlink: %s", out);
	ok(do_list(sb, "l", INIT_F_RECURSIVE, 2, out, sizeof(out), &d) == 0 &&
	    d.size == 2 && d.flags == INIT_D_TRUNCATED,
	    "list: a limit of 2: two entries, TRUNCATED");
	ok(do_list(sb, "l", 0, 5, out, sizeof(out), &d) == 0 &&
	    d.size == 5 && d.flags == 0, "list: a limit equal to the count");
	ok(do_list(sb, "", 0, 100, out, sizeof(out), &d) == 0 &&
	    strstr(out, "l:d") != NULL && do_list(sb, ".", 0, 100, out,
	    sizeof(out), &d) == 0 && strstr(out, "l:d") != NULL,
	    "list: \"\" and \".\" are the workspace");
	ok(do_list(sb, "l/f1", 0, 100, out, sizeof(out), &d) == 0 &&
	    d.error == ENOTDIR, "list: a file: ENOTDIR");
	ok(do_list(sb, "l/lnk", 0, 100, out, sizeof(out), &d) == 0 &&
	    d.error == 0 && strcmp(out, "deep:f") == 0,
	    "list: a symlink to a directory inside is followed when named");
}

static void
test_list_deep(struct sbx *sb)
{
	struct init_done	 d;
	char			 rel[PATH_MAX], p[PATH_MAX];
	char			*out;
	int			 i;

	strcpy(rel, "deep");
	for (i = 0; i < 40; i++) {
		path_join(p, ws, rel);
		mkdir(p, 0755);
		strcat(rel, "/d");
	}
	if ((out = malloc(65536)) == NULL)
		die("malloc");
	i = do_list(sb, "deep", INIT_F_RECURSIVE, 1000, out, 65536, &d);
	ok(i == 0 && d.error == 0 && d.size == 33 &&
	    d.flags == INIT_D_TRUNCATED,
	    "list: recursion stops at depth 32, TRUNCATED (%llu entries)",
	    (unsigned long long)d.size);
	free(out);
	ok(simple_op(sb, IMSG_INIT_DELETE, "deep", INIT_F_RECURSIVE, 0) == 0 &&
	    mode_of("deep") == 0, "delete: a tree 40 deep");
}

static void
test_delete(struct sbx *sb)
{
	char	 p[PATH_MAX];

	put_file("del1", "x", 0644);
	ok(simple_op(sb, IMSG_INIT_DELETE, "del1", 0, 0) == 0 &&
	    mode_of("del1") == 0, "delete: a file");
	path_join(p, ws, "dd");
	mkdir(p, 0755);
	ok(simple_op(sb, IMSG_INIT_DELETE, "dd", 0, 0) == 0 &&
	    mode_of("dd") == 0, "delete: an empty directory");
	ok(simple_op(sb, IMSG_INIT_DELETE, "a", 0, 0) == ENOTEMPTY &&
	    mode_of("a/b/c.txt") != 0,
	    "delete: a full directory without RECURSIVE: ENOTEMPTY");
	plant("../../l", "a/b/lnk");
	ok(simple_op(sb, IMSG_INIT_DELETE, "a", INIT_F_RECURSIVE, 0) == 0 &&
	    mode_of("a") == 0 && mode_of("l/f1") != 0,
	    "delete: RECURSIVE takes the tree, not what its symlinks name");
	ok(simple_op(sb, IMSG_INIT_DELETE, "l/lnk", INIT_F_RECURSIVE, 0) ==
	    0 && mode_of("l/lnk") == 0 && mode_of("l/sub/deep") != 0,
	    "delete: a symlink to a directory removes the link only");
	ok(simple_op(sb, IMSG_INIT_DELETE, "gone", 0, 0) == ENOENT,
	    "delete: a missing name: ENOENT");
	ok(simple_op(sb, IMSG_INIT_DELETE, "", INIT_F_RECURSIVE, 0) == EINVAL &&
	    simple_op(sb, IMSG_INIT_DELETE, ".", INIT_F_RECURSIVE, 0) ==
	    EINVAL && simple_op(sb, IMSG_INIT_DELETE, "l/..",
	    INIT_F_RECURSIVE, 0) == EINVAL && mode_of("l/f1") != 0,
	    "delete: the workspace itself never (\"\", \".\", \"l/..\")");
}

/* Symlinks and paths planted to lead out of the workspace. */
static void
test_escape(struct sbx *sb)
{
	struct init_done	 d;
	struct stat		 pw0, pw1, v0, v1;
	char			 p[PATH_MAX], victim[PATH_MAX], out[1024];
	char			 buf[64], longp[INIT_PATH_MAX + 10];
	uint64_t		 got;
	int			 bigframe;

	path_join(victim, base, "victim");
	if ((bigframe = open(victim, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || write(bigframe, "precious", 8) != 8)
		die(victim);
	close(bigframe);
	stat(victim, &v0);
	stat("/etc/passwd", &pw0);
	plant("/etc/passwd", "pw");
	plant(victim, "vic");
	plant("../victim", "vic2");
	plant("..", "up");

	ok(write_str(sb, "../victim", 0, 0644, "gotcha") == EXDEV,
	    "escape: writing \"../victim\": EXDEV");
	ok(write_str(sb, "/etc/passwd", 0, 0644, "x") == EINVAL &&
	    do_read(sb, "/etc/passwd", 100, buf, sizeof(buf), &got, &d,
	    &bigframe) == 0 && d.error == EINVAL && got == 0,
	    "escape: absolute paths: EINVAL");
	ok(do_read(sb, "pw", 100, buf, sizeof(buf), &got, &d, &bigframe) ==
	    0 && d.error == EXDEV && got == 0,
	    "escape: reading a symlink to /etc/passwd: EXDEV, nothing sent");
	ok(write_str(sb, "vic", 0, 0644, "gotcha") == EXDEV &&
	    write_str(sb, "vic2", INIT_F_APPEND, 0644, "gotcha") == EXDEV &&
	    write_str(sb, "up/victim", 0, 0644, "gotcha") == EXDEV,
	    "escape: writes via symlinks out (absolute, \"..\", dir): EXDEV");
	ok(write_str(sb, "up/newdir/f", INIT_F_MKDIRS, 0644, "x") == EXDEV &&
	    simple_op(sb, IMSG_INIT_WRITE, "up/newdir", INIT_F_DIR |
	    INIT_F_MKDIRS, 0755) == EXDEV,
	    "escape: MKDIRS through a symlink to \"..\": EXDEV");
	path_join(p, base, "newdir");
	ok(!exists(p), "escape: ... and no directory appeared outside");
	ok(do_list(sb, "up", 0, 100, out, sizeof(out), &d) == 0 &&
	    d.error == EXDEV && do_list(sb, "..", 0, 100, out, sizeof(out),
	    &d) == 0 && d.error == EXDEV,
	    "escape: listing \"up\" or \"..\": EXDEV");
	ok(simple_op(sb, IMSG_INIT_DELETE, "up/victim", 0, 0) == EXDEV &&
	    simple_op(sb, IMSG_INIT_DELETE, "vic2/", 0, 0) == 0 &&
	    simple_op(sb, IMSG_INIT_DELETE, "up", INIT_F_RECURSIVE, 0) == 0 &&
	    exists(ws) && exists(victim),
	    "escape: delete goes no further than the symlink itself");
	stat(victim, &v1);
	stat("/etc/passwd", &pw1);
	ok(v1.st_size == 8 && v1.st_mtime == v0.st_mtime &&
	    v1.st_ino == v0.st_ino && pw1.st_size == pw0.st_size &&
	    pw1.st_mtime == pw0.st_mtime,
	    "escape: the targets are untouched");
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	ok(write_str(sb, longp, 0, 0644, "x") == EINVAL,
	    "escape: a path longer than INIT_PATH_MAX: EINVAL");
	ok(write_str(sb, "", 0, 0644, "x") == EINVAL &&
	    simple_op(sb, IMSG_INIT_READ, "", 0, 0) == EINVAL,
	    "escape: an empty path for WRITE or READ: EINVAL");
	path_join(p, ws, "pw");
	unlink(p);
	path_join(p, ws, "vic");
	unlink(p);
	unlink(victim);
}

static void
test_write_interleaved(struct sbx *sb)
{
	static const char *const cat[] = { "/bin/cat", NULL };
	struct init_done	 d, d2;
	struct job		 j;
	char			 a[1000], b[1000], buf[4096];
	uint32_t		 w1 = nextid++, w2 = nextid++;
	int			 r;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	send_file(sb, IMSG_INIT_WRITE, w1, 0, 0644, 2000, "inter");
	send_data(sb, w1, a, sizeof(a));
	r = job_send(sb, &j, 0, "", cat, NULL) == 0 &&
	    job_started(sb, &j) == 0;
	send_data(sb, w1, b, sizeof(b));
	ok(r && wait_done(sb, w1, &d) == 0 && d.error == 0 && d.size == 2000,
	    "interleaved: a write's DATA around an exec's frames");
	ok(job_sync(&j) == 0 && job_go(&j) == 0 &&
	    write(j.in, "x", 1) == 1 && close(j.in) == 0 &&
	    (j.in = -1) == -1 && job_read(&j, 0) == 0 &&
	    strcmp(j.out_buf, "x") == 0 && job_exited(sb, &j) == 0 &&
	    j.ex.status == 0, "interleaved: ... and the exec ran as well");
	job_close(&j);
	ok(get_file("inter", buf, sizeof(buf)) == 2000 &&
	    memcmp(buf, a, 1000) == 0 && memcmp(buf + 1000, b, 1000) == 0,
	    "interleaved: the file holds what was sent, in order");

	send_file(sb, IMSG_INIT_WRITE, w1, 0, 0644, 2000, "w1");
	send_file(sb, IMSG_INIT_WRITE, w2, 0, 0644, 2000, "w2");
	send_data(sb, w1, a, sizeof(a));
	send_data(sb, w2, b, sizeof(b));
	send_data(sb, w2, a, sizeof(a));
	send_data(sb, w1, b, sizeof(b));
	ok(wait_done(sb, w1, &d) == 0 && wait_done(sb, w2, &d2) == 0 &&
	    d.error == 0 && d2.error == 0 &&
	    get_file("w1", buf, sizeof(buf)) == 2000 &&
	    memcmp(buf, a, 1000) == 0 && memcmp(buf + 1000, b, 1000) == 0 &&
	    get_file("w2", buf, sizeof(buf)) == 2000 &&
	    memcmp(buf, b, 1000) == 0 && memcmp(buf + 1000, a, 1000) == 0,
	    "interleaved: two writes at once keep their data apart");

	w1 = nextid++;
	send_file(sb, IMSG_INIT_WRITE, w1, 0, 0644, 2000, "nodir/x");
	send_data(sb, w1, a, sizeof(a));
	ok(alive(sb) && sbx_queued(sb, w1) == 0,
	    "write: a failed open waits for all its DATA");
	send_data(sb, w1, b, sizeof(b));
	ok(wait_done(sb, w1, &d) == 0 && d.error == ENOENT && d.size == 0 &&
	    alive(sb), "write: ... then DONE with its error (ENOENT)");
}

static void
test_write_full(void)
{
	struct spawn_opts	 o;
	struct init_done	 d;
	struct sbx		 sb;
	static char		 chunk[PROTO_CHUNK];
	char			 small[PATH_MAX];
	uint32_t		 id;
	int			 i, early;

	memset(&o, 0, sizeof(o));
	o.wsdir = ws;
	o.fsize = 65536;
	memset(chunk, 'q', sizeof(chunk));
	ok(sbx_start(&sb, &o) == 0, "full: started with RLIMIT_FSIZE 64 KiB");
	id = nextid++;
	send_file(&sb, IMSG_INIT_WRITE, id, 0, 0644, 4 * sizeof(chunk),
	    "fsz");
	send_data(&sb, id, chunk, sizeof(chunk));
	send_data(&sb, id, chunk, sizeof(chunk));
	sbx_fill(&sb, 200);
	early = sbx_queued(&sb, id);
	send_data(&sb, id, chunk, sizeof(chunk));
	send_data(&sb, id, chunk, sizeof(chunk));
	ok(!early && wait_done(&sb, id, &d) == 0 && d.error == EFBIG &&
	    d.size == sizeof(chunk),
	    "full: EFBIG midway, DONE only after the rest was swallowed");
	ok(alive(&sb), "full: ... and it goes on");
	ok(sbx_stop(&sb) == 0, "full: it survived SIGXFSZ");
	path_join(small, ws, "fsz");
	unlink(small);

	if (geteuid() != 0) {
		ok(1, "# SKIP ENOSPC on a small tmpfs needs root");
		return;
	}
	path_join(small, base, "small");
	mkdir(small, 0755);
	memset(&o, 0, sizeof(o));
	o.wsdir = small;
	o.tmpfs = "size=128k,mode=0755";
	ok(sbx_start(&sb, &o) == 0, "full: started on a 128 KiB tmpfs");
	id = nextid++;
	send_file(&sb, IMSG_INIT_WRITE, id, 0, 0644, 16 * sizeof(chunk),
	    "big");
	for (i = 0; i < 16; i++)
		send_data(&sb, id, chunk, sizeof(chunk));
	ok(wait_done(&sb, id, &d) == 0 && d.error == ENOSPC &&
	    d.size > 0 && d.size < 16 * sizeof(chunk) && alive(&sb),
	    "full: ENOSPC after %llu bytes, and it goes on",
	    (unsigned long long)d.size);
	sbx_stop(&sb);
	rmdir(small);
}

enum bad {
	BAD_TYPE, BAD_DATA_NO_OP, BAD_EXEC_NO_FDS, BAD_FD_ON_WRITE,
	BAD_PATH_NO_NUL, BAD_DATA_TOO_MUCH, BAD_DATA_TOO_BIG, BAD_HELD_FDS,
	BAD_OPS, BAD_EXEC_DUP, BAD_FD_TWICE, BAD_FD_MISSING, BAD_HELLO_AGAIN,
	BAD_ARGC0, BAD_ARGC_HUGE, BAD_STRINGS, BAD_FLAGS, BAD_DIR_DATA, BAD_EXEC_FLAGS,
	BAD_FRAME, BAD_SH_NO_C, BAD_NOSYNC_FD, BAD_LIST_SELF, BAD_LIST_BUSY,
	BAD_MAX
};

static const char *const bad_names[BAD_MAX] = {
	"an unknown message type", "DATA for no operation",
	"EXEC without its fds", "an fd on a WRITE",
	"a path without its NUL", "more DATA than announced",
	"a DATA frame over PROTO_CHUNK", "65 fds waiting for their EXEC",
	"17 file operations at once", "a second exec with a running id",
	"one fd slot sent twice", "INIT_FD without an fd",
	"a second hello", "argc 0", "argc 2^32-1 in a small frame",
	"fewer strings than argc + envc",
	"unknown file flags", "DATA announced for a DIR",
	"unknown exec flags", "a frame over PROTO_INIT_FRAME",
	"INIT_EXEC_SH without sh -c", "a sync fd for an unsynced exec",
	"an exec listed under its own id",
	"an exec's listing under the id of an operation in progress",
};

static void
bad_send(struct sbx *sb, enum bad which, uint32_t running)
{
	static const char *const tru[] = { "/bin/true", NULL };
	static const char *const two[] = { "/bin/true", "x", NULL };
	static char		 big[PROTO_CHUNK + 1];
	struct proto_hello	 h;
	struct init_file	 f;
	struct imsg_hdr		 hdr;
	uint8_t			 buf[sizeof(f) + 3];
	uint32_t		 id = nextid++, w = 0;
	int			 i;

	memset(&f, 0, sizeof(f));
	switch (which) {
	case BAD_TYPE:
		sbx_send(sb, 999, id, -1, "junk", 4);
		break;
	case BAD_DATA_NO_OP:
		send_data(sb, id, "x", 1);
		break;
	case BAD_EXEC_NO_FDS:
		send_exec(sb, id, 0, 1, "", tru, NULL);
		break;
	case BAD_FD_ON_WRITE:
		f.size = 1;
		memcpy(buf, &f, sizeof(f));
		memcpy(buf + sizeof(f), "ab", 3);
		sbx_send(sb, IMSG_INIT_WRITE, id, open("/dev/null",
		    O_RDONLY | O_CLOEXEC), buf, sizeof(buf));
		break;
	case BAD_PATH_NO_NUL:
		memcpy(buf, &f, sizeof(f));
		memcpy(buf + sizeof(f), "abc", 3);
		sbx_send(sb, IMSG_INIT_READ, id, -1, buf, sizeof(buf));
		break;
	case BAD_DATA_TOO_MUCH:
		send_file(sb, IMSG_INIT_WRITE, id, 0, 0644, 2, "toomuch");
		send_data(sb, id, "xyz", 3);
		break;
	case BAD_DATA_TOO_BIG:
		send_file(sb, IMSG_INIT_WRITE, id, 0, 0644, 1 << 20, "toobig");
		send_data(sb, id, big, sizeof(big));
		break;
	case BAD_HELD_FDS:
		for (i = 0; i < 65; i++)
			send_fd(sb, nextid++, INIT_FD_STDIN, open("/dev/null",
			    O_RDONLY | O_CLOEXEC));
		break;
	case BAD_OPS:
		for (i = 0; i < 17; i++)
			send_file(sb, IMSG_INIT_WRITE, nextid++, 0, 0644, 1,
			    "many");
		break;
	case BAD_EXEC_DUP:
		send_exec(sb, running, 0, 1, "", tru, NULL);
		break;
	case BAD_FD_TWICE:
		send_fd(sb, id, INIT_FD_STDOUT, open("/dev/null",
		    O_RDONLY | O_CLOEXEC));
		send_fd(sb, id, INIT_FD_STDOUT, open("/dev/null",
		    O_RDONLY | O_CLOEXEC));
		break;
	case BAD_FD_MISSING:
		sbx_send(sb, IMSG_INIT_FD, id, -1, &w, sizeof(w));
		break;
	case BAD_HELLO_AGAIN:
		proto_hello_init(&h, ROLE_SANDBOXD);
		sbx_send(sb, IMSG_HELLO, 0, -1, &h, sizeof(h));
		break;
	case BAD_ARGC0:
	case BAD_ARGC_HUGE:
	case BAD_STRINGS:
		for (w = 0; w < INIT_FD_MAX; w++)
			send_fd(sb, id, w, open("/dev/null",
			    O_RDONLY | O_CLOEXEC));
		if (which == BAD_ARGC0)
			send_exec(sb, id, 0, 0, "", tru + 1, NULL);
		else if (which == BAD_ARGC_HUGE)
			send_exec(sb, id, 0, UINT32_MAX, "", tru, NULL);
		else
			send_exec(sb, id, 0, 3, "", two, NULL);
		break;
	case BAD_FLAGS:
		send_file(sb, IMSG_INIT_READ, id, 0x100, 0, 1, "r.txt");
		break;
	case BAD_DIR_DATA:
		send_file(sb, IMSG_INIT_WRITE, id, INIT_F_DIR, 0755, 1, "dd");
		break;
	case BAD_EXEC_FLAGS:
		for (w = 0; w < INIT_FD_MAX; w++)
			send_fd(sb, id, w, open("/dev/null",
			    O_RDONLY | O_CLOEXEC));
		send_exec(sb, id, 0x10, 1, "", tru, NULL);
		break;
	case BAD_FRAME:
		hdr.type = IMSG_INIT_READ;
		hdr.len = PROTO_INIT_FRAME * 2;
		hdr.peerid = id;
		hdr.pid = 0;
		if (write(sb->ib.fd, &hdr, sizeof(hdr)) != sizeof(hdr))
			diag("short write");
		break;
	case BAD_SH_NO_C:
	case BAD_NOSYNC_FD:
		for (w = 0; w < INIT_FD_MAX; w++)
			send_fd(sb, id, w, open("/dev/null",
			    O_RDONLY | O_CLOEXEC));
		send_exec(sb, id, which == BAD_SH_NO_C ? INIT_EXEC_SH :
		    INIT_EXEC_NOSYNC, 2, "", two, NULL);
		break;
	case BAD_LIST_SELF:
	case BAD_LIST_BUSY:
		/* A WRITE still waiting for its DATA is in progress. */
		w = nextid++;
		if (which == BAD_LIST_BUSY)
			send_file(sb, IMSG_INIT_WRITE, w, 0, 0644, 5, "busy");
		for (i = 0; i < INIT_FD_SYNC; i++)
			send_fd(sb, id, (uint32_t)i, open("/dev/null",
			    O_RDONLY | O_CLOEXEC));
		send_exec_l(sb, id, INIT_EXEC_NOSYNC | INIT_EXEC_LIST,
		    which == BAD_LIST_SELF ? id : w, 1, "", tru, NULL);
		break;
	case BAD_MAX:
		break;
	}
}

/* Each violation: exit 1, and what it started dies with it. */
static void
test_violations(void)
{
	struct sbx	 sb;
	struct job	 j;
	pid_t		 pid;
	int		 st, killed, which;

	for (which = 0; which < BAD_MAX; which++) {
		if (sbx_start(&sb, NULL) == -1) {
			ok(0, "violation: %s: no hello", bad_names[which]);
			continue;
		}
		pid = start_sleeper(&sb, &j);
		bad_send(&sb, (enum bad)which, j.id);
		st = sbx_exit_status(&sb, WAIT_MS);
		killed = pid > 0 && reaped_killed(pid);
		ok(st == 1 && killed, "violation: %s: exit 1, its exec killed",
		    bad_names[which]);
		close(sb.ib.fd);
		imsgbuf_clear(&sb.ib);
		sbx_free_queue(&sb);
		job_close(&j);
	}
}

static void
test_eof(void)
{
	static const char *const bg[] = { "/bin/sh", "-c",
	    "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 1000",
	    NULL };
	static const char *const echo[] = { "/bin/echo", NULL };
	struct sbx	 sb;
	struct job	 j, k;
	pid_t		 bgpid = -1, waiting = -1;

	sbx_start(&sb, NULL);
	if (job_send(&sb, &j, 0, "", bg, NULL) == 0 &&
	    job_started(&sb, &j) == 0 && job_sync(&j) == 0 &&
	    job_go(&j) == 0 && job_read(&j, 1) == 0)
		bgpid = atoi(j.out_buf);
	if (job_send(&sb, &k, 0, "", echo, NULL) == 0 &&
	    job_started(&sb, &k) == 0 && job_sync(&k) == 0)
		waiting = k.pid;
	ok(bgpid > 1 && waiting > 1, "eof: an exec with a background child, "
	    "another waiting for its go byte");
	ok(sbx_stop(&sb) == 0, "eof: EOF on the control socket: exit 0");
	ok(reaped_killed(j.pid) && reaped_killed(bgpid),
	    "eof: the exec and its background child were killed");
	ok(reaped_killed(waiting), "eof: so was the one still waiting");
	job_close(&j);
	job_close(&k);
}

/*
 * Outside a container sandbox-init must not kill(-1): as root that would
 * take every process on the machine.  Two bystanders, one in its own
 * process group and one in ours, must outlive it however it exits.
 */
static void
test_guard(void)
{
	struct sbx	 sb;
	struct job	 j;
	pid_t		 other, same, pid;
	int		 st;

	if ((other = fork()) == 0) {
		setpgid(0, 0);
		execl("/bin/sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	if ((same = fork()) == 0) {
		execl("/bin/sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	msleep(50);
	ok(getpid() != 1, "guard: this test is not PID 1 (pid %d)",
	    (int)getpid());

	sbx_start(&sb, NULL);
	pid = start_sleeper(&sb, &j);
	bad_send(&sb, BAD_TYPE, 0);
	ok(sbx_exit_status(&sb, WAIT_MS) == 1 && reaped_killed(pid),
	    "guard: after a violation its exec is dead");
	ok(waitpid(other, &st, WNOHANG) == 0 && kill(other, 0) == 0 &&
	    waitpid(same, &st, WNOHANG) == 0 && kill(same, 0) == 0,
	    "guard: ... but unrelated processes live on");
	close(sb.ib.fd);
	imsgbuf_clear(&sb.ib);
	sbx_free_queue(&sb);
	job_close(&j);

	sbx_start(&sb, NULL);
	pid = start_sleeper(&sb, &j);
	ok(sbx_stop(&sb) == 0 && reaped_killed(pid) &&
	    waitpid(other, &st, WNOHANG) == 0 && kill(other, 0) == 0 &&
	    waitpid(same, &st, WNOHANG) == 0 && kill(same, 0) == 0,
	    "guard: the same after EOF");
	job_close(&j);
	kill(other, SIGKILL);
	kill(same, SIGKILL);
	waitpid(other, &st, 0);
	waitpid(same, &st, 0);
}

/*
 * "-s fd": the seccomp program sandboxd compiled, loaded before anything
 * else and fatal when it cannot be.  Here a small one that refuses
 * uname(2), so that its reach to what init runs shows.
 */
static void
test_filter(void)
{
	static const char *const un[] = { "/bin/uname", "-s", NULL };
	static const struct {
		const char	*text;
		const char	*what;
	} bad[] = {
		{ "abc", "a file that is no BPF program" },
		{ "", "an empty file" },
	};
	struct sock_filter	 prog[ONE_CALL_LEN];
	struct spawn_opts	 o;
	struct sbx		 sb;
	struct job		 j;
	char			 f[PATH_MAX + 32], line[256];
	FILE			*st;
	size_t			 i;
	int			 seccomp = -1, filters = -1, r;

	memset(&o, 0, sizeof(o));
	o.filter = f;
	path_join(f, base, "filter.bpf");
	one_call_filter(prog, SYS_uname, EPERM);
	put_bytes(base, "filter.bpf", prog, sizeof(prog), 0644);
	ok(sbx_start(&sb, &o) == 0, "filter: hello after loading it");
	snprintf(line, sizeof(line), "/proc/%d/status", (int)sb.pid);
	if ((st = fopen(line, "r")) != NULL) {
		while (fgets(line, sizeof(line), st) != NULL) {
			sscanf(line, "Seccomp: %d", &seccomp);
			sscanf(line, "Seccomp_filters: %d", &filters);
		}
		fclose(st);
	}
	ok(seccomp == 2 && filters == 1, "filter: sandbox-init runs under "
	    "it (Seccomp %d, filters %d)", seccomp, filters);
	memset(&j, 0, sizeof(j));
	r = run(&sb, &j, un);
	ok(r == 0 && WIFEXITED(j.ex.status) &&
	    WEXITSTATUS(j.ex.status) != 0 && j.outlen == 0,
	    "filter: and so does what it runs (uname refused, status %#x)",
	    j.ex.status);
	ok(sbx_stop(&sb) == 0, "filter: EOF: exit 0");

	/* Not a program: no hello, exit 1. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_prog(base, "filter.bpf", bad[i].text, 0644);
		sbx_spawn(&sb, &o);
		ok(sbx_exit_status(&sb, WAIT_MS) == 1, "filter: %s is fatal",
		    bad[i].what);
		close(sb.ib.fd);
		imsgbuf_clear(&sb.ib);
	}
	unlink(f);
}

/* As PID 1 of its own pid namespace, as in a container. */
static void
test_pidns(void)
{
	static const char *const pid[] = { "/bin/sh", "-c", "echo $$", NULL };
	struct spawn_opts	 o;
	struct sbx		 sb;
	struct job		 j;
	int			 r;

	if (geteuid() != 0) {
		ok(1, "# SKIP a pid namespace needs root");
		return;
	}
	memset(&o, 0, sizeof(o));
	o.newpid = 1;
	ok(sbx_start(&sb, &o) == 0, "pidns: hello from PID 1");
	r = job_send(&sb, &j, 0, "", pid, NULL) == 0 &&
	    job_started(&sb, &j) == 0 && job_sync(&j) == 0 &&
	    job_go(&j) == 0 && close(j.in) == 0 && (j.in = -1) == -1 &&
	    job_read(&j, 0) == 0 && job_exited(&sb, &j) == 0;
	ok(r && j.ex.status == 0 && atoi(j.out_buf) == j.pid && j.pid > 1 &&
	    j.pid < 10, "pidns: STARTED gives the pid inside (%d)",
	    (int)j.pid);
	ok(j.credpid > 1 && j.credpid != j.pid,
	    "pidns: SO_PASSCRED gives sandboxd the host pid (%d)",
	    (int)j.credpid);
	job_close(&j);
	ok(sbx_stop(&sb) == 0, "pidns: EOF: exit 0");
}

/* A wipe step, answered: how many processes KILL reaped, or -1. */
static int
wipe(struct sbx *sb, uint32_t step)
{
	struct init_wiped	 w;
	struct imsg		 m;
	int			 r;

	if (sbx_send(sb, IMSG_INIT_WIPE, 7, -1, &step, sizeof(step)) == -1 ||
	    sbx_wait(sb, IMSG_INIT_WIPED, 7, &m, WAIT_MS) == -1)
		return -1;
	r = proto_payload(m.data, m.datalen, &w, sizeof(w));
	imsg_free(&m);
	return r == -1 || w.step != step ? -1 : (int)w.reaped;
}

/*
 * A wipe between two runs (sandboxd/reuse.c), as PID 1 of a pid
 * namespace: KILL ends the processes a run left and reaps them, then the
 * workspace is let go until OPEN.  A wipe while an exec runs, or OPEN
 * twice, is a violation.
 */
static void
test_wipe(void)
{
	static const char *const bg[] = { "/bin/sh", "-c",
	    "sleep 1000 </dev/null >/dev/null 2>&1 & "
	    "sleep 1001 </dev/null >/dev/null 2>&1 & echo $!", NULL };
	const char		*ps[] = { "/bin/sh", "-c", NULL, NULL };
	char			 script[64];
	struct spawn_opts	 o;
	struct sbx		 sb;
	struct job		 j;
	pid_t			 pid, left = 0;
	int			 i, n;

	if (geteuid() != 0) {
		ok(1, "# SKIP a pid namespace needs root");
		return;
	}
	memset(&o, 0, sizeof(o));
	o.newpid = 1;
	if (sbx_start(&sb, &o) == -1) {
		ok(0, "wipe: hello from PID 1");
		return;
	}
	if (run(&sb, &j, bg) == 0 && j.ex.status == 0)
		left = atoi(j.out_buf);
	ok(left > 1, "wipe: a run leaves two sleepers behind");
	job_close(&j);
	n = wipe(&sb, INIT_WIPE_KILL);
	ok(n == 2, "wipe: KILL ends and reaps both (%d)", n);
	ok(write_str(&sb, "f", 0, 0644, "x") == EBADF,
	    "wipe: no workspace until OPEN: EBADF");
	ok(wipe(&sb, INIT_WIPE_OPEN) == 0, "wipe: OPEN");
	ok(write_str(&sb, "f", 0, 0644, "x") == 0, "wipe: the workspace again");
	(void)snprintf(script, sizeof(script), "kill -0 %d 2>/dev/null && "
	    "echo alive || echo gone", (int)left);
	ps[2] = script;
	ok(run(&sb, &j, ps) == 0 && strcmp(j.out_buf, "gone\n") == 0,
	    "wipe: the next run finds no sleeper");
	job_close(&j);
	ok(wipe(&sb, INIT_WIPE_KILL) == 0 && wipe(&sb, INIT_WIPE_OPEN) == 0,
	    "wipe: a wipe with nothing left: 0 reaped");
	(void)sbx_send(&sb, IMSG_INIT_WIPE, 7, -1,
	    &(uint32_t){ INIT_WIPE_OPEN }, sizeof(uint32_t));
	ok(sbx_exit_status(&sb, WAIT_MS) == 1,
	    "wipe: OPEN with the workspace open: a violation, exit 1");
	sbx_free_queue(&sb);
	close(sb.ib.fd);
	imsgbuf_clear(&sb.ib);

	if (sbx_start(&sb, &o) == -1)
		return;
	/* Its host pid: the one STARTED gives is the namespace's. */
	pid = start_sleeper(&sb, &j) > 0 ? j.credpid : -1;
	(void)sbx_send(&sb, IMSG_INIT_WIPE, 7, -1,
	    &(uint32_t){ INIT_WIPE_KILL }, sizeof(uint32_t));
	n = sbx_exit_status(&sb, WAIT_MS);
	/* Its namespace's end kills it; the kernel reaps it, not us. */
	for (i = 0; i < WAIT_MS / 5 && pid > 0 && kill(pid, 0) == 0; i++)
		msleep(5);
	ok(n == 1 && pid > 0 && kill(pid, 0) == -1 && errno == ESRCH,
	    "wipe: KILL while an exec runs: a violation, exit 1, it killed");
	job_close(&j);
	sbx_free_queue(&sb);
	close(sb.ib.fd);
	imsgbuf_clear(&sb.ib);
}

/*
 * The file operations and every escape again where openat2(2) answers
 * ENOSYS, as in gVisor, whose runsc also gives the socket as stdin: the
 * component walk must refuse what RESOLVE_BENEATH refuses.
 */
static const char *
ws_path(char *out, const char *rel)
{
	path_join(out, ws, rel);
	return out;
}

static void
test_no_openat2(void)
{
	static const char *const echo[] = { "/bin/echo", "hi", NULL };
	struct spawn_opts	 o = { .no_openat2 = 1, .stdio = 1 };
	struct sbx		 sb;
	struct job		 j;
	char			 p[PATH_MAX], fd0[PATH_MAX];
	ssize_t			 n;
	int			 i, null = 1;

	rm_rf(ws);
	if (mkdir(ws, 0755) == -1)
		die(ws);
	if (sbx_start(&sb, &o) == -1) {
		ok(0, "no openat2: sandbox-init says hello over stdin");
		return;
	}
	ok(1, "no openat2: sandbox-init says hello over stdin");
	for (i = 0; i < 3; i++) {
		(void)snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)sb.pid, i);
		n = readlink(p, fd0, sizeof(fd0) - 1);
		fd0[n > 0 ? n : 0] = '\0';
		if (strcmp(fd0, "/dev/null") != 0)
			null = 0;
	}
	ok(null, "no openat2: its stdio is /dev/null once it has the socket");
	ok(job_run(&sb, &j, 0, "", echo, NULL, NULL) == 0 &&
	    strcmp(j.out_buf, "hi\n") == 0, "no openat2: a command runs");
	job_close(&j);
	test_write(&sb);
	test_read(&sb);
	test_open(&sb);
	test_list(&sb);
	test_list_deep(&sb);
	test_delete(&sb);
	test_escape(&sb);
	ok(write_str(&sb, "a/../b", INIT_F_MKDIRS, 0644, "x") == 0 &&
	    exists(ws_path(p, "b")),
	    "no openat2: \"..\" within the workspace is walked");
	ok(write_str(&sb, "a/../../b", 0, 0644, "x") == EXDEV &&
	    write_str(&sb, "a/../a/../..", 0, 0644, "x") == EXDEV,
	    "no openat2: \"..\" above it: EXDEV");
	plant("a", "in");
	plant("self", "self");
	ok(write_str(&sb, "in/f", 0, 0644, "x") == 0 &&
	    exists(ws_path(p, "a/f")),
	    "no openat2: a relative symlink within is followed");
	ok(write_str(&sb, "self/f", 0, 0644, "x") == ELOOP,
	    "no openat2: a symlink loop: ELOOP");
	ok(sbx_stop(&sb) == 0, "no openat2: it exits 0 on EOF");
}

int
main(int argc, char *argv[])
{
	struct sbx	 sb;
	const char	*b;
	char		*slash;

	signal(SIGPIPE, SIG_IGN);
	if ((b = getenv("B")) != NULL && *b != '\0')
		path_join(initbin, b, "sandbox-init");
	else {
		/* Beside our own directory: build-san/tests/.. */
		snprintf(initbin, sizeof(initbin), "%s", argv[0]);
		if ((slash = strrchr(initbin, '/')) != NULL) {
			*slash = '\0';
			strncat(initbin, "/../sandbox-init",
			    sizeof(initbin) - strlen(initbin) - 1);
		}
		if (slash == NULL || access(initbin, X_OK) == -1)
			snprintf(initbin, sizeof(initbin),
			    "build/sandbox-init");
	}
	if (access(initbin, X_OK) == -1) {
		printf("Bail out! %s: %s\n", initbin, strerror(errno));
		return 1;
	}
	diag("testing %s", initbin);
	/* Orphans of sandbox-init come to us, to be reaped and checked. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(600);
	snprintf(base, sizeof(base), "/tmp/test_init.XXXXXX");
	if (mkdtemp(base) == NULL)
		die("mkdtemp");
	path_join(ws, base, "ws");
	if (mkdir(ws, 0755) == -1)
		die(ws);

	test_hello();
	if (sbx_start(&sb, NULL) == -1) {
		printf("Bail out! sandbox-init did not say hello\n");
		rm_rf(base);
		return 1;
	}
	test_exec_basic(&sb);
	test_exec_list(&sb);
	test_exec_io(&sb);
	test_exec_fail(&sb);
	test_exec_shell(&sb);
	test_exec_cwd(&sb);
	test_exec_sync(&sb);
	test_exec_background(&sb);
	test_exec_concurrent(&sb);
	test_write(&sb);
	test_read(&sb);
	test_open(&sb);
	test_list(&sb);
	test_list_deep(&sb);
	test_delete(&sb);
	test_escape(&sb);
	test_write_interleaved(&sb);
	ok(sbx_stop(&sb) == 0, "the long-lived instance exits 0 on EOF");

	test_no_openat2();
	test_write_full();
	test_violations();
	test_eof();
	test_guard();
	test_pidns();
	test_wipe();
	test_filter();

	rm_rf(base);
	ok(!exists(base), "cleanup: the temporary tree is gone");
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return tap_done();
}
