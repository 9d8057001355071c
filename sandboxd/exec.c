/*
 * One exec: a process tree started by sandbox-init in a sandbox.
 *
 * sandboxd makes the pipes, so output goes from the process straight to
 * sandboxd, never through init.  The child first writes a byte on its sync
 * socket; SO_PASSCRED gives sandboxd its host pid, from the kernel rather
 * than from anything the sandbox says, and sandboxd places it in the
 * exec's own cgroups before answering.  Only then does the child execute.
 * A timeout, or a cancel, freezes that group and kills all of it.
 *
 * A one-shot sandbox runs one exec at a time and is destroyed after, so
 * its execs use the container's own groups, whose counters are reset for
 * each: the child is there from its fork, and the hot path is spared the
 * cgroup migration, which waits for an RCU grace period (~10 ms).  So
 * does an exec in a persistent sandbox where nothing but init runs; what
 * it leaves running stays there, and the next exec gets groups of its
 * own.  Such an exec has no sync socket and executes at once, unless it
 * is held: its job's intent is not yet audited, and the child waits at
 * the sync point for exec_release(), with its fork and placement done
 * while auditd commits.  A kill freezes the container's groups and
 * signals the processes in the container's own group, init spared, not
 * those in an exec's.  cgroup v2 counters cannot be reset: there only a
 * container's first exec shares init's group, and on a kernel without
 * memory.peak an exec's memory is sampled while it runs.
 *
 * An exec is over when init reports its exit and the pipes are drained,
 * or EXEC_DRAIN_MS after the exit when a background process holds them.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define EXEC_READ_CHUNK		(64 * 1024)
#define EXEC_OUT_HIGHWATER	(4 * 1024 * 1024)	/* queued to client */
#define EXEC_PAUSE_MS		10
#define EXEC_SAMPLE_MS		20	/* memory, without memory.peak */

struct exec {
	TAILQ_ENTRY(exec)	 entry;
	struct sandbox		*sb;
	struct job		*job;
	uint32_t		 id;
	uint32_t		 phase;
	int			 fd_in, fd_out, fd_err, fd_sync;
	struct event		*ev_in, *ev_out, *ev_err, *ev_sync;
	struct event		*ev_timer;	/* timeout, drain, report */
	struct event		*ev_pause;	/* the client is slow */
	struct event		*ev_sample;	/* memory, if sampled */
	uint64_t		 sampled;	/* the most seen */
	uint8_t			*in_buf;
	size_t			 in_len, in_off;
	uint64_t		 cap;		/* bytes forwarded at most */
	uint64_t		 forwarded;
	uint64_t		 out_bytes, err_bytes;
	uint64_t		 start_ns;
	uint64_t		 wall_ms;
	uint64_t		 oom_before;
	pid_t			 host_pid;
	uint64_t		 timeout;	/* ms, from its go */
	int			 placed;	/* in its cgroups */
	int			 whole;		/* they are the container's */
	int			 held;		/* until exec_release() */
	int			 synced;	/* placed, waiting for its go */
	int			 exited;	/* init reported */
	int			 timed_out, cancelled, truncated, killed;
	struct init_exited	 ex;
};

static void	exec_finish(struct exec *, const char *);
static void	exec_io_arm(struct exec *);
static void	exec_synced(struct exec *);

static void
exec_close_fd(int *fd, struct event **ev)
{
	if (*ev != NULL) {
		event_free(*ev);
		*ev = NULL;
	}
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

static void
exec_free(struct exec *ex)
{
	exec_close_fd(&ex->fd_in, &ex->ev_in);
	exec_close_fd(&ex->fd_out, &ex->ev_out);
	exec_close_fd(&ex->fd_err, &ex->ev_err);
	exec_close_fd(&ex->fd_sync, &ex->ev_sync);
	if (ex->ev_timer != NULL)
		event_free(ex->ev_timer);
	if (ex->ev_pause != NULL)
		event_free(ex->ev_pause);
	if (ex->ev_sample != NULL)
		event_free(ex->ev_sample);
	free(ex->in_buf);
	free(ex);
}

static void
exec_timer(struct exec *ex, uint64_t ms)
{
	struct timeval	 tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(ex->ev_timer, &tv);
}

/* The exec's groups: its own, or 0 for the container's. */
static uint32_t
exec_cg(const struct exec *ex)
{
	return ex->whole ? 0 : ex->id;
}

/* Kill the whole tree: it is frozen first, so nothing escapes by forking. */
static void
exec_kill(struct exec *ex)
{
	if (ex->killed)
		return;
	ex->killed = 1;
	if (ex->sb->guest)
		sandbox_signal(ex->sb, SIGKILL);
	else if (ex->placed)
		cgroup_exec_kill(ex->sb->id, exec_cg(ex), ex->sb->init_pid);
	else if (ex->host_pid > 0)
		kill(ex->host_pid, SIGKILL);
}

static void
exec_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct exec	*ex = arg;

	if (ex->exited) {
		/* The drain grace is over: what was not read is lost. */
		exec_finish(ex, NULL);
		return;
	}
	if (ex->killed) {
		/* Killed, and init still says nothing: it is broken. */
		log_warnx("sandbox %s: init did not report exec %u after it "
		    "was killed", ex->sb->id, ex->id);
		sandbox_destroy(ex->sb, 0, "sandbox-init stopped answering");
		return;
	}
	ex->timed_out = 1;
	exec_kill(ex);
	exec_timer(ex, EXEC_REPORT_MS);
}

/* Forward what the process wrote, within the exec's output cap. */
static void
exec_forward(struct exec *ex, uint32_t stream, const uint8_t *buf, size_t n)
{
	size_t	 room;

	if (ex->truncated)
		return;
	room = ex->cap - ex->forwarded;
	if (n > room)
		n = room;
	if (n > 0 && ex->job != NULL)
		job_output(ex->job, stream, ex->phase, buf, n);
	ex->forwarded += n;
	if (ex->forwarded >= ex->cap && !ex->truncated) {
		/* Cut: closing the pipes gives the writer EPIPE. */
		ex->truncated = 1;
		exec_close_fd(&ex->fd_out, &ex->ev_out);
		exec_close_fd(&ex->fd_err, &ex->ev_err);
	}
}

static void
exec_resume(evutil_socket_t fd, short events, void *arg)
{
	exec_io_arm(arg);
}

static void
exec_sample_cb(evutil_socket_t fd, short events, void *arg)
{
	struct exec	*ex = arg;
	uint64_t	 m;

	if (!ex->placed || ex->exited)
		return;
	if ((m = cgroup_exec_memory(ex->sb->id, exec_cg(ex))) > ex->sampled)
		ex->sampled = m;
}

static void
exec_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct exec	*ex = arg;
	uint8_t		 buf[EXEC_READ_CHUNK];
	uint32_t	 stream;
	ssize_t		 n;
	struct timeval	 tv = { 0, EXEC_PAUSE_MS * 1000 };

	stream = fd == ex->fd_out ? SBX_STREAM_STDOUT : SBX_STREAM_STDERR;
	if (ex->job != NULL && job_client_queued(ex->job) > EXEC_OUT_HIGHWATER) {
		/* The client is slow: stop reading until it catches up. */
		if (ex->ev_out != NULL)
			event_del(ex->ev_out);
		if (ex->ev_err != NULL)
			event_del(ex->ev_err);
		evtimer_add(ex->ev_pause, &tv);
		return;
	}
	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (stream == SBX_STREAM_STDOUT)
			exec_close_fd(&ex->fd_out, &ex->ev_out);
		else
			exec_close_fd(&ex->fd_err, &ex->ev_err);
		if (ex->exited && ex->fd_out == -1 && ex->fd_err == -1)
			exec_finish(ex, NULL);
		return;
	}
	if (stream == SBX_STREAM_STDOUT)
		ex->out_bytes += (uint64_t)n;
	else
		ex->err_bytes += (uint64_t)n;
	exec_forward(ex, stream, buf, (size_t)n);
	if (ex->exited && ex->fd_out == -1 && ex->fd_err == -1)
		exec_finish(ex, NULL);
}

static void
exec_write_cb(evutil_socket_t fd, short events, void *arg)
{
	struct exec	*ex = arg;
	ssize_t		 n;

	n = write(ex->fd_in, ex->in_buf + ex->in_off, ex->in_len - ex->in_off);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		ex->in_off += (size_t)n;
	if (n <= 0 || ex->in_off == ex->in_len) {
		/* All given, or the process closed its stdin. */
		exec_close_fd(&ex->fd_in, &ex->ev_in);
	}
}

/* Placed, and released: the child executes. */
static void
exec_go(struct exec *ex)
{
	char	 byte = 'g';

	if (write(ex->fd_sync, &byte, 1) != 1)
		log_debug("sandbox %s: exec %u: go: %s", ex->sb->id, ex->id,
		    strerror(errno));
	exec_close_fd(&ex->fd_sync, &ex->ev_sync);
}

void
exec_release(struct exec *ex)
{
	if (!ex->held || ex->killed)
		return;
	ex->held = 0;
	/* Its time starts now: the wait was sandboxd's, not the command's. */
	ex->start_ns = mono_ns();
	exec_timer(ex, ex->timeout);
	if (ex->synced)
		exec_go(ex);
}

/* The child says it exists: place it, then let it go on when released. */
static void
exec_sync_cb(evutil_socket_t fd, short events, void *arg)
{
	struct exec	*ex = arg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(struct ucred))];
	}		 cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	struct ucred	 uc;
	char		 byte;
	ssize_t		 n;
	int		 got = 0;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	n = recvmsg(ex->fd_sync, &msg, MSG_CMSG_CLOEXEC);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Under runsc the credentials are its kernel's: the byte will do. */
	if (ex->sb->guest && n == 1) {
		exec_synced(ex);
		return;
	}
	for (c = CMSG_FIRSTHDR(&msg); n == 1 && c != NULL;
	    c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(uc))) {
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			got = 1;
		}
	if (!got) {
		/* The child died, or never was: init will tell us. */
		exec_close_fd(&ex->fd_sync, &ex->ev_sync);
		return;
	}
	if (uc.pid <= 0 || uc.pid == ex->sb->init_pid) {
		log_warnx("sandbox %s: exec %u synced from pid %d", ex->sb->id,
		    ex->id, (int)uc.pid);
		exec_close_fd(&ex->fd_sync, &ex->ev_sync);
		sandbox_destroy(ex->sb, 0, "sandbox-init broke the protocol");
		return;
	}
	ex->host_pid = uc.pid;
	if (ex->whole || cgroup_exec_attach(ex->sb->id, ex->id, uc.pid) == 0)
		ex->placed = 1;
	else {
		/* Unplaced, it could not be killed whole: never start it. */
		kill(uc.pid, SIGKILL);
		ex->killed = 1;
		exec_close_fd(&ex->fd_sync, &ex->ev_sync);
		return;
	}
	if (ex->killed) {
		cgroup_exec_kill(ex->sb->id, exec_cg(ex), ex->sb->init_pid);
		exec_close_fd(&ex->fd_sync, &ex->ev_sync);
		return;
	}
	exec_synced(ex);
}

/* Placed (or under runsc, there): it goes once it is released. */
static void
exec_synced(struct exec *ex)
{
	if (ex->killed) {
		/* Under runsc, exec_kill() has had init kill it. */
		exec_close_fd(&ex->fd_sync, &ex->ev_sync);
		return;
	}
	ex->synced = 1;
	event_del(ex->ev_sync);
	if (!ex->held)
		exec_go(ex);
}

static void
exec_io_arm(struct exec *ex)
{
	if (ex->ev_out != NULL)
		event_add(ex->ev_out, NULL);
	if (ex->ev_err != NULL)
		event_add(ex->ev_err, NULL);
}

/* The exec's pipes, and its sync socket if it has one. */
static int
exec_pipes(int in[2], int out[2], int err[2], int sync[2], int want_sync)
{
	int	 one = 1;

	in[0] = in[1] = out[0] = out[1] = err[0] = err[1] = -1;
	sync[0] = sync[1] = -1;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1 || fd_set_nonblock(in[1]) == -1 ||
	    fd_set_nonblock(out[0]) == -1 || fd_set_nonblock(err[0]) == -1)
		return -1;
	if (want_sync && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sync) == -1 || setsockopt(sync[0], SOL_SOCKET, SO_PASSCRED, &one,
	    sizeof(one)) == -1 || fd_set_nonblock(sync[0]) == -1))
		return -1;
	return 0;
}

static void
exec_close_pipes(int in[2], int out[2], int err[2], int sync[2])
{
	int	*fds[] = { in, out, err, sync };
	size_t	 i;

	for (i = 0; i < nitems(fds); i++) {
		if (fds[i][0] != -1)
			close(fds[i][0]);
		if (fds[i][1] != -1)
			close(fds[i][1]);
	}
}

/* The IMSG_INIT_EXEC frame: header, cwd, argv, env. */
static int
exec_send(struct sandbox *sb, uint32_t id, const struct exec_spec *spec,
    int nosync)
{
	struct init_exec	 ie;
	struct iovec		*iov;
	size_t			 i, n = 0;
	int			 rv;

	memset(&ie, 0, sizeof(ie));
	ie.argc = (uint32_t)spec->argc;
	ie.envc = (uint32_t)spec->envc;
	ie.flags = spec->path_lookup ? INIT_EXEC_PATH : 0;
	if (spec->shell)
		ie.flags |= INIT_EXEC_SH;
	if (nosync)
		ie.flags |= INIT_EXEC_NOSYNC;
	if (spec->list) {
		ie.flags |= INIT_EXEC_LIST;
		ie.list_id = spec->list_id;
	}
	iov = xcalloc(2 + spec->argc + spec->envc, sizeof(*iov));
	iov[n].iov_base = &ie;
	iov[n++].iov_len = sizeof(ie);
	iov[n].iov_base = (void *)(uintptr_t)spec->cwd;
	iov[n++].iov_len = strlen(spec->cwd) + 1;
	for (i = 0; i < spec->argc; i++) {
		iov[n].iov_base = (void *)(uintptr_t)spec->argv[i];
		iov[n++].iov_len = strlen(spec->argv[i]) + 1;
	}
	for (i = 0; i < spec->envc; i++) {
		iov[n].iov_base = (void *)(uintptr_t)spec->env[i];
		iov[n++].iov_len = strlen(spec->env[i]) + 1;
	}
	rv = imsgev_composev(&sb->iev, IMSG_INIT_EXEC, id, -1, iov, (int)n);
	free(iov);
	return rv;
}

struct exec *
exec_start(struct sandbox *sb, const struct exec_spec *spec, struct job *job)
{
	struct exec	*ex;
	int		 in[2], out[2], err[2], sync[2];
	uint32_t	 which[INIT_FD_MAX] = { INIT_FD_STDIN, INIT_FD_STDOUT,
			    INIT_FD_STDERR, INIT_FD_SYNC };
	int		 give[INIT_FD_MAX], whole, nosync;
	size_t		 i, nfds;

	/* Under runsc always: its processes cannot be placed. */
	whole = sb->guest || !sb->persistent || (TAILQ_EMPTY(&sb->execs) &&
	    cgroup_sandbox_quiet(sb->id, sb->init_pid));
	if (whole && !sb->guest && !cgroup_resettable() && sb->shared)
		whole = 0;
	if (whole)
		sb->shared = 1;
	/* In the container's groups from its fork, and free to go. */
	nosync = whole && !spec->hold;
	nfds = nosync ? INIT_FD_SYNC : INIT_FD_MAX;
	if (exec_pipes(in, out, err, sync, !nosync) == -1) {
		log_warn("sandbox %s: pipes", sb->id);
		exec_close_pipes(in, out, err, sync);
		return NULL;
	}
	ex = xcalloc(1, sizeof(*ex));
	ex->sb = sb;
	ex->job = job;
	ex->id = sandbox_next_op(sb);
	ex->phase = spec->phase;
	ex->cap = spec->output;
	ex->start_ns = mono_ns();
	ex->timeout = spec->timeout;
	ex->whole = whole;
	ex->held = spec->hold;
	if (whole && sb->fresh)
		/* A warm container's counters were reset when it came up. */
		sb->fresh = 0;
	else {
		ex->oom_before = sandbox_oom_kills(sb);
		if (sb->guest)
			;	/* init counts, not the groups */
		else if (whole)
			cgroup_sandbox_reset(sb->id);
		else if (cgroup_exec_create(sb->id, ex->id) == -1) {
			exec_close_pipes(in, out, err, sync);
			free(ex);
			return NULL;
		}
	}
	ex->placed = whole;
	/* Ours: stdin's write end, the read ends, one end of sync. */
	ex->fd_in = in[1];
	ex->fd_out = out[0];
	ex->fd_err = err[0];
	ex->fd_sync = sync[0];
	give[0] = in[0];
	give[1] = out[1];
	give[2] = err[1];
	give[3] = sync[1];
	for (i = 0; i < nfds; i++) {
		/* The imsg layer owns and closes each fd it is given. */
		if (imsgev_compose(&sb->iev, IMSG_INIT_FD, ex->id, give[i],
		    &which[i], sizeof(which[i])) == -1) {
			while (++i < nfds)
				close(give[i]);
			exec_free(ex);
			return NULL;
		}
	}
	if (exec_send(sb, ex->id, spec, nosync) == -1) {
		exec_free(ex);
		return NULL;
	}
	if (spec->stdin_len > 0) {
		ex->in_buf = xmalloc(spec->stdin_len);
		memcpy(ex->in_buf, spec->stdin_data, spec->stdin_len);
		ex->in_len = spec->stdin_len;
		ex->ev_in = event_new(sbd->base, ex->fd_in, EV_WRITE |
		    EV_PERSIST, exec_write_cb, ex);
		event_add(ex->ev_in, NULL);
	} else
		exec_close_fd(&ex->fd_in, &ex->ev_in);
	ex->ev_out = event_new(sbd->base, ex->fd_out, EV_READ | EV_PERSIST,
	    exec_read_cb, ex);
	ex->ev_err = event_new(sbd->base, ex->fd_err, EV_READ | EV_PERSIST,
	    exec_read_cb, ex);
	if (!nosync && (ex->ev_sync = event_new(sbd->base, ex->fd_sync,
	    EV_READ | EV_PERSIST, exec_sync_cb, ex)) == NULL)
		fatalx("cannot create exec events");
	ex->ev_timer = evtimer_new(sbd->base, exec_timer_cb, ex);
	ex->ev_pause = evtimer_new(sbd->base, exec_resume, ex);
	if (ex->ev_out == NULL || ex->ev_err == NULL ||
	    ex->ev_timer == NULL || ex->ev_pause == NULL)
		fatalx("cannot create exec events");
	if (cgroup_sampled()) {
		struct timeval	 tv = { 0, EXEC_SAMPLE_MS * 1000 };

		if ((ex->ev_sample = event_new(sbd->base, -1, EV_PERSIST,
		    exec_sample_cb, ex)) == NULL ||
		    event_add(ex->ev_sample, &tv) == -1)
			fatalx("cannot create exec events");
	}
	exec_io_arm(ex);
	if (ex->ev_sync != NULL)
		event_add(ex->ev_sync, NULL);
	exec_timer(ex, spec->timeout);
	TAILQ_INSERT_TAIL(&sb->execs, ex, entry);
	return ex;
}

void
exec_cancel(struct exec *ex)
{
	ex->cancelled = 1;
	exec_kill(ex);
	evtimer_del(ex->ev_timer);
	exec_timer(ex, EXEC_REPORT_MS);
}

static void
exec_result(struct exec *ex, struct sbx_result *r)
{
	uint64_t	 cpu_ns = 0, peak = 0;
	int		 st = ex->ex.status;

	memset(r, 0, sizeof(*r));
	if (WIFEXITED(st))
		r->exit_code = WEXITSTATUS(st);
	else if (WIFSIGNALED(st)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(st);
	}
	if (ex->placed && !ex->sb->guest)
		cgroup_exec_usage(ex->sb->id, exec_cg(ex), &cpu_ns, &peak);
	if (cpu_ns == 0)
		cpu_ns = (ex->ex.utime_us + ex->ex.stime_us) * 1000;
	if (peak == 0)
		/* No memory.peak: what sampling saw, or the biggest process. */
		peak = ex->sampled > ex->ex.maxrss_kb * 1024 ? ex->sampled :
		    ex->ex.maxrss_kb * 1024;
	r->cpu_ms = cpu_ns / 1000000;
	r->peak_memory = peak;
	r->wall_ms = ex->wall_ms;
	r->stdout_bytes = ex->out_bytes;
	r->stderr_bytes = ex->err_bytes;
	r->exec_errno = ex->ex.exec_errno;
	if (ex->timed_out)
		r->flags |= SBX_R_TIMED_OUT;
	if (ex->cancelled)
		r->flags |= SBX_R_CANCELLED;
	if (ex->truncated)
		r->flags |= SBX_R_TRUNCATED;
	if (ex->ex.exec_errno != 0)
		r->flags |= SBX_R_EXEC_FAILED;
	/*
	 * The kernel killed for memory in this sandbox while the exec ran:
	 * whichever process it chose, a shell above it may have lived on.
	 */
	if ((ex->placed && !ex->whole &&
	    cgroup_oom_kills(ex->sb->id, ex->id) > 0) ||
	    sandbox_oom_kills(ex->sb) > ex->oom_before)
		r->flags |= SBX_R_OOM;
}

static void
exec_finish(struct exec *ex, const char *error)
{
	struct sbx_result	 r;
	struct job		*job = ex->job;

	TAILQ_REMOVE(&ex->sb->execs, ex, entry);
	if (error == NULL)
		exec_result(ex, &r);
	if (ex->placed && !ex->whole &&
	    cgroup_exec_empty(ex->sb->id, ex->id))
		cgroup_exec_remove(ex->sb->id, ex->id);
	/* Left-over processes keep a persistent sandbox's group. */
	exec_free(ex);
	if (job != NULL)
		job_exec_done(job, error == NULL ? &r : NULL, error);
}

static struct exec *
exec_find(struct sandbox *sb, uint32_t id)
{
	struct exec	*ex;

	TAILQ_FOREACH(ex, &sb->execs, entry)
		if (ex->id == id)
			return ex;
	return NULL;
}

void
exec_init_dispatch(struct sandbox *sb, struct imsg *imsg)
{
	struct init_exited	 ie;
	struct init_started	 is;
	struct exec		*ex;

	if ((ex = exec_find(sb, imsg->hdr.peerid)) == NULL) {
		/* Ours are all known: init made this up. */
		sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
		return;
	}
	if (imsg->hdr.type == IMSG_INIT_STARTED) {
		if (proto_payload(imsg->data, imsg->datalen, &is,
		    sizeof(is)) == -1)
			sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
		return;
	}
	if (proto_payload(imsg->data, imsg->datalen, &ie, sizeof(ie)) == -1 ||
	    ex->exited || ie.exec_errno < 0 || ie.exec_errno > 4095 ||
	    ie.utime_us > (1ULL << 50) || ie.stime_us > (1ULL << 50) ||
	    ie.maxrss_kb > (1ULL << 40) ||
	    (!WIFEXITED(ie.status) && !WIFSIGNALED(ie.status))) {
		sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
		return;
	}
	ex->ex = ie;
	ex->exited = 1;
	ex->wall_ms = (mono_ns() - ex->start_ns) / 1000000;
	exec_close_fd(&ex->fd_in, &ex->ev_in);
	exec_close_fd(&ex->fd_sync, &ex->ev_sync);
	if (ex->fd_out == -1 && ex->fd_err == -1) {
		exec_finish(ex, NULL);
		return;
	}
	evtimer_del(ex->ev_timer);
	exec_timer(ex, EXEC_DRAIN_MS);
}

/*
 * Under runsc, should the host's OOM killer take gVisor's kernel rather
 * than a program's stub process (bundle.c makes that unlikely), the
 * sandbox ends with it: for an exec that was running, that is how it
 * ended, killed for memory.  Its peak is the group's, gVisor's own
 * memory included.  One whose exit init had reported has its result.
 */
static int
exec_guest_oom(struct exec *ex)
{
	uint64_t	 cpu_ns = 0;

	if (!ex->sb->guest)
		return 0;
	if (ex->exited)
		return 1;	/* init's word came first */
	if (sandbox_oom_kills(ex->sb) <= ex->oom_before)
		return 0;
	ex->ex.status = SIGKILL;
	ex->ex.exec_errno = 0;
	ex->wall_ms = (mono_ns() - ex->start_ns) / 1000000;
	cgroup_exec_usage(ex->sb->id, 0, &cpu_ns, &ex->sampled);
	ex->ex.utime_us = cpu_ns / 1000;
	return 1;
}

/*
 * Under runsc, the guard killed a program's stub process from the host,
 * and a second later its memory had not come back: gVisor's kernel had
 * not ended the task (seen under emulation, where the exec then ran to
 * its timeout).  What runs is ended from inside instead, as a timeout
 * ends it there: every process but init (exec_kill()).  Each exec that
 * was running is flagged for memory, as the guard's kill counts.
 */
void
exec_oom_stuck(struct sandbox *sb)
{
	struct exec	*ex;

	if (!sb->guest)
		return;
	TAILQ_FOREACH(ex, &sb->execs, entry) {
		if (ex->exited || ex->killed)
			continue;
		log_info("sandbox %s: exec %u: the memory of the program "
		    "killed for it has not come back; ending it through "
		    "gVisor's kernel", sb->id, ex->id);
		exec_kill(ex);
	}
}

void
exec_sandbox_gone(struct sandbox *sb, const char *why)
{
	struct exec	*ex;

	while ((ex = TAILQ_FIRST(&sb->execs)) != NULL)
		exec_finish(ex, exec_guest_oom(ex) ? NULL : why);
}

uint32_t
exec_count(const struct sandbox *sb)
{
	const struct exec	*ex;
	uint32_t		 n = 0;

	TAILQ_FOREACH(ex, &sb->execs, entry)
		n++;
	return n;
}
