/*
 * The stdio transport: one client, newline-delimited JSON-RPC on stdin and
 * stdout.  Only MCP messages ever reach the real stdout: the protocol gets
 * a private copy of the descriptor and fd 1 becomes stderr, so a stray
 * write anywhere in the process lands in the log instead of the stream.
 * Reading stops while the client is not reading what we send.
 *
 * At the end of input, as a pipeline expects, what was asked is still
 * answered: mcpd ends once every request in flight has its answer (each
 * runs up to its own timeout) and the answers are written.  When the
 * reader of stdout goes away, nothing more can be said: mcpd ends at once.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "util.h"

#define STDIO_OUT_HIGH		(16 * 1024 * 1024)	/* stop reading */
#define STDIO_READ_CHUNK	65536

static struct {
	struct event_base	*base;
	struct bufferevent	*in;		/* a pipe, socket or tty */
	struct event		*ev_file;	/* stdin is a regular file */
	int			 infd;
	struct bufferevent	*out;
	struct event		*ev_gone;	/* out is a pipe: its reader */
	int			 outfd;		/* written directly: a file */
	struct evbuffer		*pending;	/* read, not yet a line */
	struct evbuffer		*own;		/* pending, if not in's */
	size_t			 scanned;	/* of it, known to hold no \n */
	struct mcp_session	*sess;
	struct mcp_peer		 peer;
	struct mcp_out		 mout;
	int			 skipping;	/* within an over-long line */
	int			 eof;		/* no more input */
	int			 ending_input;	/* telling the core of it */
	int			 input_ended;	/* told */
	int			 ended;		/* done() called */
	int			 paused;
	void			(*done)(void);
} io;

static void	stdio_read(void);
static void	stdio_finish(void);

/* A file or a device epoll cannot watch: blocking writes, in order. */
static void
out_direct(json_t *msg)
{
	char	*s = rpc_dump(msg);
	size_t	 n, off = 0;
	ssize_t	 w;

	n = strlen(s);
	s[n++] = '\n';		/* over the NUL: rpc_dump's is ours */
	while (off < n) {
		if ((w = write(io.outfd, s + off, n - off)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			log_warn("stdout");
			break;
		}
		off += (size_t)w;
	}
	free(s);
}

/* The client stopped reading us: nothing more can be said. */
static void
stdout_gone(void)
{
	if (io.ended)
		return;
	log_info("stdout closed: ending");
	io.ended = io.eof = 1;
	if (io.ev_gone != NULL) {
		event_free(io.ev_gone);
		io.ev_gone = NULL;
	}
	bufferevent_free(io.out);
	io.out = NULL;
	if (io.in != NULL)
		bufferevent_disable(io.in, EV_READ);
	mcp_shutdown();
	io.done();
}

static void
out_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	char	*s;

	if (io.outfd != -1)
		out_direct(msg);
	else if (io.out != NULL) {
		s = rpc_dump(msg);
		evbuffer_add(bufferevent_get_output(io.out), s, strlen(s));
		evbuffer_add(bufferevent_get_output(io.out), "\n", 1);
		free(s);
		if (!io.paused && evbuffer_get_length(
		    bufferevent_get_output(io.out)) > STDIO_OUT_HIGH) {
			io.paused = 1;
			if (io.in != NULL)
				bufferevent_disable(io.in, EV_READ);
		}
	}
	if (final)
		stdio_finish();
}

static void
out_abandon(struct mcp_out *out, struct mcp_req *req)
{
	stdio_finish();
}

static const struct mcp_out_ops stdio_ops = {
	.send = out_send,
	.abandon = out_abandon,
};

static void
reply_error(json_t *id, int code, const char *why)
{
	json_t	*msg = rpc_error(id, code, why, NULL);

	out_send(&io.mout, NULL, msg, 1, 0);
	json_decref(msg);
}

static void
stdio_message(const char *line, size_t len)
{
	struct mcp_input	 in;

	memset(&in, 0, sizeof(in));
	in.transport = MCP_T_STDIO;
	in.sess = io.sess;
	in.peer = &io.peer;
	in.out = &io.mout;
	mcp_input_line(&in, line, len);
}

/*
 * Every whole line in the pending buffer.  What was searched once is not
 * searched again, so a long line costs its length, not its square; and
 * nothing of a line known to be too long is kept, however long it goes on.
 */
static void
stdio_lines(void)
{
	struct evbuffer_ptr	 start, p;
	size_t			 len;
	char			*line;

	for (;;) {
		evbuffer_ptr_set(io.pending, &start, io.scanned,
		    EVBUFFER_PTR_SET);
		p = evbuffer_search(io.pending, "\n", 1, &start);
		if (p.pos < 0) {
			io.scanned = evbuffer_get_length(io.pending);
			if (io.skipping || io.scanned > mcpd_max_message) {
				if (!io.skipping)
					reply_error(NULL, RPC_PARSE_ERROR,
					    "message too long");
				io.skipping = 1;
				evbuffer_drain(io.pending, io.scanned);
				io.scanned = 0;
			}
			return;
		}
		len = (size_t)p.pos;
		io.scanned = 0;
		if (io.skipping || len > mcpd_max_message) {
			if (!io.skipping)
				reply_error(NULL, RPC_PARSE_ERROR,
				    "message too long");
			io.skipping = 0;
			evbuffer_drain(io.pending, len + 1);
			continue;
		}
		line = xmalloc(len + 1);
		evbuffer_remove(io.pending, line, len + 1);
		line[len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len > 0 && strspn(line, " \t") != len)
			stdio_message(line, len);
		free(line);
		if (io.paused)
			return;
	}
}

/* At the end of input, a last line without its newline still counts. */
static void
stdio_last_line(void)
{
	if (io.skipping)
		evbuffer_drain(io.pending, evbuffer_get_length(io.pending));
	if (evbuffer_get_length(io.pending) == 0)
		return;
	if (io.own == NULL) {
		/* A bufferevent's input takes nothing added at its end. */
		io.own = evbuffer_new();
		evbuffer_add_buffer(io.own, io.pending);
		io.pending = io.own;
	}
	evbuffer_add(io.pending, "\n", 1);
	stdio_lines();
}

static void
stdio_eof(void)
{
	if (io.eof)
		return;
	io.eof = 1;
	if (io.in != NULL)
		bufferevent_disable(io.in, EV_READ);
	stdio_finish();
}

/*
 * After the end of input, at each step towards the end: the lines left
 * while the client was not reading are handled (out_write_cb), the core
 * is told that the client sends no more, then every answer is awaited,
 * then written.
 */
static void
stdio_finish(void)
{
	if (!io.eof || io.ended || io.ending_input ||
	    evbuffer_get_length(io.pending) > 0)
		return;
	/* SIGTERM: main cancels everything, with no loop to end. */
	if (event_base_got_break(io.base))
		return;
	if (!io.input_ended) {
		if (io.mout.nreqs > 0)
			log_info("stdin closed: finishing %u request%s in "
			    "flight", io.mout.nreqs, io.mout.nreqs == 1 ?
			    "" : "s");
		else
			log_debug("stdin closed: ending");
		/* What it answers comes back here: not yet. */
		io.ending_input = 1;
		mcp_input_ended(io.sess, &io.mout);
		io.ending_input = 0;
		io.input_ended = 1;
	}
	if (io.mout.nreqs > 0 || (io.out != NULL &&
	    evbuffer_get_length(bufferevent_get_output(io.out)) > 0))
		return;		/* the last answer, or its write, comes back */
	io.ended = 1;
	io.done();
}

/*
 * Lines are cut where they were read: moving what each read brought to
 * another buffer would move its half-empty chains too, and keep twice the
 * longest line's size.
 */
static void
in_read_cb(struct bufferevent *bev, void *arg)
{
	stdio_lines();
}

static void
in_event_cb(struct bufferevent *bev, short events, void *arg)
{
	if (events & BEV_EVENT_ERROR)
		log_warn("stdin");
	if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		stdio_last_line();
		stdio_eof();
	}
}

/* stdin is a file or /dev/null: epoll cannot watch it; read in turns. */
static void
file_cb(evutil_socket_t fd, short events, void *arg)
{
	ssize_t	 n;

	if (io.paused || io.eof)
		return;
	n = evbuffer_read(io.pending, io.infd, STDIO_READ_CHUNK);
	if (n < 0 && errno == EINTR)
		n = 1;
	if (n <= 0) {
		if (n < 0)
			log_warn("stdin");
		stdio_last_line();
		stdio_eof();
		return;
	}
	stdio_lines();
	stdio_read();
}

static void
stdio_read(void)
{
	if (io.ev_file != NULL && !io.paused && !io.eof)
		event_active(io.ev_file, EV_TIMEOUT, 0);
}

static void
out_write_cb(struct bufferevent *bev, void *arg)
{
	if (io.paused) {
		io.paused = 0;
		if (io.in != NULL && !io.eof)
			bufferevent_enable(io.in, EV_READ);
		stdio_lines();
		stdio_read();
	}
	stdio_finish();
}

static void
out_event_cb(struct bufferevent *bev, short events, void *arg)
{
	stdout_gone();
}

/*
 * The write end of a pipe, open for writing only, turns "readable"
 * (EPOLLERR) only when its reader has gone: noticed at once, not at the
 * next answer, which a long run may not give for minutes.
 */
static void
out_gone_cb(evutil_socket_t fd, short events, void *arg)
{
	stdout_gone();
}

static mode_t
fd_type(int fd)
{
	struct stat	 st;

	return fstat(fd, &st) == -1 ? 0 : st.st_mode & S_IFMT;
}

/* Can epoll watch it?  Pipes, sockets and terminals, yes. */
static int
pollable(int fd)
{
	mode_t	 t = fd_type(fd);

	return t == S_IFIFO || t == S_IFSOCK || (t == S_IFCHR && isatty(fd));
}

void
stdio_start(struct event_base *base, struct mcp_session *sess,
    void (*done)(void))
{
	int		 outfd;

	memset(&io, 0, sizeof(io));
	io.base = base;
	io.sess = sess;
	io.peer = sess->peer;
	io.done = done;
	io.mout.ops = &stdio_ops;
	sess->chan = &io.mout;

	/* The protocol's own stdout; fd 1 then points at stderr. */
	if ((outfd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) == -1)
		fatal("stdout");
	if (dup2(STDERR_FILENO, STDOUT_FILENO) == -1)
		fatal("dup2");
	io.outfd = -1;
	if (!pollable(outfd))
		io.outfd = outfd;
	else {
		if (fd_set_nonblock(outfd) == -1)
			log_warn("stdout: non-blocking");
		if ((io.out = bufferevent_socket_new(base, outfd,
		    BEV_OPT_CLOSE_ON_FREE)) == NULL)
			fatalx("stdout: bufferevent");
		bufferevent_setcb(io.out, NULL, out_write_cb, out_event_cb,
		    NULL);
		bufferevent_enable(io.out, EV_WRITE);
		if (fd_type(outfd) == S_IFIFO &&
		    (fcntl(outfd, F_GETFL) & O_ACCMODE) == O_WRONLY &&
		    ((io.ev_gone = event_new(base, outfd, EV_READ | EV_PERSIST,
		    out_gone_cb, NULL)) == NULL ||
		    event_add(io.ev_gone, NULL) == -1))
			fatalx("stdout: event");
	}

	io.infd = STDIN_FILENO;
	if (!pollable(io.infd)) {
		io.pending = io.own = evbuffer_new();
		io.ev_file = event_new(base, -1, 0, file_cb, NULL);
		stdio_read();
		return;
	}
	if (fd_set_nonblock(io.infd) == -1)
		log_warn("stdin: non-blocking");
	if ((io.in = bufferevent_socket_new(base, io.infd, 0)) == NULL)
		fatalx("stdin: bufferevent");
	bufferevent_setcb(io.in, in_read_cb, NULL, in_event_cb, NULL);
	io.pending = bufferevent_get_input(io.in);
	bufferevent_enable(io.in, EV_READ);
}

void
stdio_stop(void)
{
	if (io.in != NULL)
		bufferevent_free(io.in);
	if (io.ev_file != NULL)
		event_free(io.ev_file);
	if (io.ev_gone != NULL)
		event_free(io.ev_gone);
	if (io.out != NULL)
		bufferevent_free(io.out);
	if (io.outfd != -1)
		close(io.outfd);
	if (io.own != NULL)
		evbuffer_free(io.own);
	memset(&io, 0, sizeof(io));
}
