/*
 * imsg framing and its libevent glue, over real socketpairs.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "imsg.h"
#include "imsgev.h"
#include "log.h"
#include "util.h"
#include "../tap.h"

static void
pair(int sv[2], int nonblock)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0, sv) == -1) {
		perror("socketpair");
		exit(2);
	}
}

/* Read until one frame is whole or the stream fails; -1 on failure. */
static int
recv_one(struct imsgbuf *ib, struct imsg *imsg)
{
	ssize_t	 n;
	int	 r;

	for (;;) {
		if ((r = imsg_get(ib, imsg)) != 0)
			return r == 1 ? 0 : -1;
		n = imsgbuf_read(ib);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			return -1;
		if (n == -1)
			usleep(1000);
	}
}

/* recv_one() and the reason it failed, in that order. */
static int
recv_fail(struct imsgbuf *ib, int code, const char **why)
{
	struct imsg	 m;
	int		 r;

	r = recv_one(ib, &m);
	if (r == 0)
		imsg_free(&m);
	*why = ib->err != NULL ? ib->err : "";
	return r == -1 && errno == code;
}

static void
raw_write(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len) {
		perror("write");
		exit(2);
	}
}

static void
raw_hdr(uint8_t *out, uint32_t type, uint32_t len, uint32_t peerid)
{
	struct imsg_hdr	 h = { type, len, peerid, 42 };

	memcpy(out, &h, sizeof(h));
}

static void
test_roundtrip(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2];

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 1024, 0);
	imsgbuf_init(&b, sv[1], 1024, 0);
	ok(imsg_compose(&a, 77, 1234, -1, "hello", 5) == 0, "compose");
	ok(imsg_compose(&a, 78, 0, -1, NULL, 0) == 0, "compose empty");
	ok(imsgbuf_flush(&a) == 0 && imsgbuf_queued(&a) == 0, "flush");
	ok(recv_one(&b, &m) == 0 && m.hdr.type == 77 && m.hdr.peerid == 1234 &&
	    m.hdr.pid == (uint32_t)getpid() && m.hdr.len == 21 &&
	    m.datalen == 5 && memcmp(m.data, "hello", 5) == 0 && m.fd == -1,
	    "header and payload arrive intact");
	imsg_free(&m);
	ok(recv_one(&b, &m) == 0 && m.hdr.type == 78 && m.datalen == 0 &&
	    m.data == NULL, "empty payload");
	imsg_free(&m);
	close(sv[0]);
	ok(imsgbuf_read(&b) == 0, "EOF between frames reads as 0");
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[1]);
}

static void
test_byte_by_byte(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 frame[16 + 300];
	size_t		 i;
	int		 sv[2], early = 0, r;

	pair(sv, 1);
	imsgbuf_init(&b, sv[1], 4096, 0);
	raw_hdr(frame, 9, sizeof(frame), 5);
	for (i = 16; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	for (i = 0; i < sizeof(frame); i++) {
		raw_write(sv[0], frame + i, 1);
		if (imsgbuf_read(&b) != 1)
			early = 1;
		r = imsg_get(&b, &m);
		if (i + 1 < sizeof(frame) && r != 0)
			early = 1;
	}
	ok(!early, "no frame before its last byte, one byte per read");
	ok(r == 1 && m.hdr.type == 9 && m.datalen == 300 &&
	    memcmp(m.data, frame + 16, 300) == 0,
	    "frame assembled from %zu one-byte reads", sizeof(frame));
	imsg_free(&m);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

static void
test_many_in_one_read(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	uint32_t	 i, got = 0, inorder = 1;
	ssize_t		 n;
	int		 sv[2];

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 4096, 0);
	imsgbuf_init(&b, sv[1], 65536, 0);
	for (i = 0; i < 500; i++)
		imsg_compose(&a, 3, i, -1, &i, sizeof(i));
	imsgbuf_flush(&a);
	n = imsgbuf_read(&b);
	ok(n == 500 * 20, "500 frames arrive in one read (%zd bytes)", n);
	while (imsg_get(&b, &m) == 1) {
		if (m.hdr.peerid != got ||
		    memcmp(m.data, &got, sizeof(got)) != 0)
			inorder = 0;
		got++;
		imsg_free(&m);
	}
	ok(got == 500 && inorder, "all 500 taken from it, in order");
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

static void
test_fd_passing(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2], p[2], i, fd, good = 1;
	char		 c;

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 4096, IMSGBUF_FDPASS);
	imsgbuf_init(&b, sv[1], 4096, IMSGBUF_FDPASS);
	/* Interleave frames with and without fds. */
	for (i = 0; i < 6; i++) {
		if (pipe(p) == -1)
			exit(2);
		c = (char)('a' + i);
		raw_write(p[1], &c, 1);
		close(p[1]);
		imsg_compose(&a, 20, (uint32_t)i, p[0], &i, sizeof(i));
		imsg_compose(&a, 21, (uint32_t)i, -1, &i, sizeof(i));
	}
	imsgbuf_flush(&a);
	for (i = 0; i < 6; i++) {
		if (recv_one(&b, &m) == -1 || m.hdr.type != 20 || m.fd == -1) {
			good = 0;
			break;
		}
		fd = imsg_take_fd(&m);
		if (read(fd, &c, 1) != 1 || c != 'a' + i)
			good = 0;
		close(fd);
		imsg_free(&m);
		if (recv_one(&b, &m) == -1 || m.hdr.type != 21 || m.fd != -1)
			good = 0;
		imsg_free(&m);
	}
	ok(good, "six fds each arrive with their own frame, in order");
	ok(b.nrfds == 0, "no fd left unclaimed");
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

static void
test_fd_refused(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2], p[2], r;

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 4096, IMSGBUF_FDPASS);
	imsgbuf_init(&b, sv[1], 4096, 0);
	if (pipe(p) == -1)
		exit(2);
	close(p[1]);
	ok(imsg_compose(&b, 1, 0, p[0], NULL, 0) == -1 && errno == EBADF,
	    "composing an fd on a channel without fd passing fails");
	if (pipe(p) == -1)
		exit(2);
	close(p[1]);
	imsg_compose(&a, 1, 0, p[0], "x", 1);
	imsgbuf_flush(&a);
	r = imsgbuf_read(&b) == -1 && errno == EBADMSG && b.nrfds == 0;
	ok(r, "an fd arriving on a channel without fd passing is an error "
	    "(%s)", b.err);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);

	/* A frame marked with an fd that never came. */
	pair(sv, 1);
	imsgbuf_init(&b, sv[1], 4096, IMSGBUF_FDPASS);
	{
		uint8_t	 f[16];

		raw_hdr(f, 5, 16 | IMSG_FD_MARK, 0);
		raw_write(sv[0], f, sizeof(f));
	}
	ok(recv_one(&b, &m) == -1 && errno == EBADMSG,
	    "a frame marked with an fd that did not arrive is an error");
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

/* IMSGBUF_FDSEND: sandboxd hands mcpd files and takes none back. */
static void
test_fd_send_only(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2], p[2], fd, r;
	char		 c = 0;

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 4096, IMSGBUF_FDSEND);
	imsgbuf_init(&b, sv[1], 4096, IMSGBUF_FDPASS);
	if (pipe(p) == -1)
		exit(2);
	raw_write(p[1], "z", 1);
	close(p[1]);
	ok(imsg_compose(&a, 7, 1, p[0], "x", 1) == 0 &&
	    imsgbuf_flush(&a) == 0, "a send-only channel sends an fd");
	r = recv_one(&b, &m) == 0 && (fd = imsg_take_fd(&m)) != -1 &&
	    read(fd, &c, 1) == 1 && c == 'z';
	ok(r, "and it arrives with its frame");
	if (r)
		close(fd);
	imsg_free(&m);
	if (pipe(p) == -1)
		exit(2);
	close(p[1]);
	imsg_compose(&b, 8, 2, p[0], "y", 1);
	imsgbuf_flush(&b);
	r = imsgbuf_read(&a) == -1 && errno == EBADMSG && a.nrfds == 0;
	ok(r, "an fd sent to a send-only channel is refused (%s)", a.err);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

/* Send bytes with an fd attached, bypassing imsg (a misbehaving peer). */
static void
raw_send_fd(int s, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cb;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cb.buf;
	msg.msg_controllen = sizeof(cb.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(s, &msg, 0) != (ssize_t)len)
		exit(2);
}

static void
test_fd_stray(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 f[16];
	const char	*why;
	int		 sv[2], p[2], r;

	/* An fd attached to a frame without the mark, then another frame. */
	pair(sv, 1);
	imsgbuf_init(&b, sv[1], 4096, IMSGBUF_FDPASS);
	if (pipe(p) == -1)
		exit(2);
	raw_hdr(f, 5, 16, 0);
	raw_send_fd(sv[0], f, sizeof(f), p[0]);
	raw_hdr(f, 6, 16, 0);
	raw_write(sv[0], f, sizeof(f));
	close(p[0]);
	close(p[1]);
	ok(recv_one(&b, &m) == 0 && m.hdr.type == 5, "unmarked frame read");
	imsg_free(&m);
	r = recv_fail(&b, EBADMSG, &why);
	ok(r, "an fd without its frame's mark is an error (%s)", why);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

static void
test_maxsize(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	uint8_t		*big, f[16];
	const char	*why;
	int		 sv[2], r;

	big = xcalloc(1, 8192);
	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 8192, 0);
	imsgbuf_init(&b, sv[1], 8192, 0);
	ok(imsg_compose(&a, 1, 0, -1, big, 8192 - 16) == 0,
	    "a frame of exactly the maximum size is accepted");
	ok(imsg_compose(&a, 1, 0, -1, big, 8192 - 15) == -1 &&
	    errno == EMSGSIZE, "one byte over the maximum is refused");
	imsgbuf_flush(&a);
	ok(recv_one(&b, &m) == 0 && m.datalen == 8192 - 16,
	    "the maximum-size frame arrives");
	imsg_free(&m);

	/* A header announcing more than the maximum, with no payload. */
	raw_hdr(f, 1, 8193, 0);
	raw_write(sv[0], f, sizeof(f));
	r = recv_fail(&b, EBADMSG, &why);
	ok(r, "an oversized header fails at once, without waiting for its "
	    "payload (%s)", why);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	free(big);
}

static void
test_garbage(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 f[64];
	uint32_t	 lens[] = { 0, 1, 15, 0xffffffffU, IMSG_LEN_MASK };
	size_t		 i;
	int		 sv[2], r, failed;

	for (i = 0; i < nitems(lens); i++) {
		pair(sv, 1);
		imsgbuf_init(&b, sv[1], 4096, 0);
		raw_hdr(f, 1, lens[i], 0);
		raw_write(sv[0], f, 16);
		ok(recv_one(&b, &m) == -1 && errno == EBADMSG,
		    "header length %#x is refused", lens[i]);
		imsgbuf_clear(&b);
		close(sv[0]);
		close(sv[1]);
	}

	/* Random bytes: an error or frames, never a crash or a hang. */
	srandom(1);
	failed = 0;
	for (i = 0; i < 200; i++) {
		size_t	 j;

		pair(sv, 1);
		imsgbuf_init(&b, sv[1], 4096, IMSGBUF_FDPASS);
		for (j = 0; j < sizeof(f); j++)
			f[j] = (uint8_t)random();
		raw_write(sv[0], f, sizeof(f));
		close(sv[0]);
		while ((r = recv_one(&b, &m)) == 0)
			imsg_free(&m);
		if (r != -1)
			failed = 1;
		imsgbuf_clear(&b);
		close(sv[1]);
	}
	ok(!failed, "200 random 64-byte streams end in a clean error");
}

static void
test_truncated(void)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	uint8_t		 f[40];
	const char	*why;
	int		 sv[2], r;

	pair(sv, 1);
	imsgbuf_init(&b, sv[1], 4096, 0);
	raw_hdr(f, 1, sizeof(f), 0);
	raw_write(sv[0], f, 25);
	close(sv[0]);
	r = recv_fail(&b, EPIPE, &why);
	ok(r, "peer closing mid-frame is reported (%s)", why);
	imsgbuf_clear(&b);
	close(sv[1]);

	pair(sv, 1);
	imsgbuf_init(&b, sv[1], 4096, 0);
	raw_write(sv[0], f, 7);
	close(sv[0]);
	ok(recv_one(&b, &m) == -1 && errno == EPIPE,
	    "peer closing mid-header is reported");
	imsgbuf_clear(&b);
	close(sv[1]);
}

static void
test_partial_writes(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	uint8_t		*buf;
	int		 sv[2], sz = 4096, i, sent = 0, got = 0, good = 1, r;

	pair(sv, 1);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	imsgbuf_init(&a, sv[0], 65536, 0);
	imsgbuf_init(&b, sv[1], 65536, 0);
	buf = xmalloc(60000);
	for (i = 0; i < 20; i++) {
		memset(buf, i, 60000);
		imsg_compose(&a, 1, (uint32_t)i, -1, buf, 60000);
	}
	while (got < 20) {
		if (imsgbuf_write(&a) == -1) {
			good = 0;
			break;
		}
		if (imsgbuf_queued(&a) > 0 && a.wq.tqh_first->sent > 0)
			sent = 1;
		if (imsgbuf_read(&b) == 0)
			break;
		while ((r = imsg_get(&b, &m)) == 1) {
			memset(buf, got, 60000);
			if (m.hdr.peerid != (uint32_t)got ||
			    m.datalen != 60000 ||
			    memcmp(m.data, buf, 60000) != 0)
				good = 0;
			got++;
			imsg_free(&m);
		}
		if (r == -1) {
			good = 0;
			break;
		}
	}
	ok(sent, "frames left the queue in partial writes");
	ok(good && got == 20, "20 frames of 60000 bytes through a 4 KiB "
	    "socket buffer arrive intact");
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	free(buf);
}

static void
test_queue_cap(void)
{
	struct imsgbuf	 a;
	uint8_t		 buf[1000];
	int		 sv[2], i, r = 0;

	pair(sv, 1);
	imsgbuf_init(&a, sv[0], 4096, 0);
	a.wqmax = 100000;
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 200 && r == 0; i++)
		r = imsg_compose(&a, 1, 0, -1, buf, sizeof(buf));
	ok(r == -1 && errno == ENOBUFS && imsgbuf_queued(&a) <= 100000,
	    "a peer that does not read cannot grow the queue past its cap");
	imsgbuf_clear(&a);
	close(sv[0]);
	close(sv[1]);
}

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	alarms++;
}

static void
test_eintr(void)
{
	struct imsgbuf	 a;
	struct sigaction sa;
	struct itimerval it;
	uint8_t		*buf;
	pid_t		 pid;
	int		 sv[2], st, i;

	pair(sv, 0);
	if ((pid = fork()) == 0) {
		struct imsgbuf	 b;
		struct imsg	 m;
		int		 n = 0, bad = 0;

		close(sv[0]);
		imsgbuf_init(&b, sv[1], 65536, 0);
		while (n < 64) {
			if (recv_one(&b, &m) == -1)
				_exit(1);
			if (m.datalen != 32768 || ((uint8_t *)m.data)[100] !=
			    (uint8_t)n)
				bad = 1;
			imsg_free(&m);
			n++;
			usleep(500);
		}
		_exit(bad);
	}
	close(sv[1]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: calls see EINTR */
	sigaction(SIGALRM, &sa, NULL);
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = 200;
	it.it_value = it.it_interval;
	setitimer(ITIMER_REAL, &it, NULL);
	imsgbuf_init(&a, sv[0], 65536, 0);
	buf = xmalloc(32768);
	for (i = 0; i < 64; i++) {
		memset(buf, i, 32768);
		imsg_compose(&a, 1, 0, -1, buf, 32768);
	}
	i = imsgbuf_flush(&a);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	waitpid(pid, &st, 0);
	ok(i == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "2 MiB flushed intact while %d signals interrupted it",
	    (int)alarms);
	imsgbuf_clear(&a);
	close(sv[0]);
	free(buf);
}

/* libevent glue. */

struct evtest {
	struct event_base	*base;
	int			 received;
	int			 closed;
	char			 why[128];
};

static void
ev_dispatch(struct imsgev *iev, struct imsg *imsg)
{
	struct evtest	*t = iev->arg;

	t->received++;
	if (imsg->hdr.type == 99)
		imsgev_shutdown(iev, "told to stop");
}

static void
ev_closed(struct imsgev *iev, const char *why)
{
	struct evtest	*t = iev->arg;

	t->closed++;
	snprintf(t->why, sizeof(t->why), "%s", why);
	event_base_loopbreak(t->base);
}

static void
test_imsgev(void)
{
	struct event_base	*base;
	struct imsgev		 a, b;
	struct evtest		 ta, tb;
	uint8_t			*buf;
	int			 sv[2], sz = 4096, i, armed, drained;

	base = event_base_new();
	pair(sv, 1);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	memset(&ta, 0, sizeof(ta));
	memset(&tb, 0, sizeof(tb));
	ta.base = tb.base = base;
	imsgev_init(&a, base, sv[0], 65536, 0, ev_dispatch, ev_closed, &ta);
	imsgev_init(&b, base, sv[1], 65536, 0, ev_dispatch, ev_closed, &tb);

	ok(event_pending(a.ev_read, EV_READ, NULL) &&
	    !event_pending(a.ev_write, EV_WRITE, NULL),
	    "idle: read armed, write not");
	imsgev_compose(&a, 1, 0, -1, "x", 1);
	ok(!event_pending(a.ev_write, EV_WRITE, NULL),
	    "a frame the socket takes at once leaves write unarmed");

	buf = xcalloc(1, 60000);
	for (i = 0; i < 10; i++)
		imsgev_compose(&a, 1, 0, -1, buf, 60000);
	armed = event_pending(a.ev_write, EV_WRITE, NULL) &&
	    imsgbuf_queued(&a.ibuf) > 0;
	ok(armed, "a blocked queue arms the write event");
	while (tb.received < 11 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	drained = imsgbuf_queued(&a.ibuf) == 0 &&
	    !event_pending(a.ev_write, EV_WRITE, NULL);
	ok(tb.received == 11 && drained,
	    "the loop delivers all 11 frames and disarms write once drained");
	ok(event_pending(b.ev_read, EV_READ, NULL),
	    "read stays armed after delivery");

	imsgev_compose(&a, 99, 0, -1, NULL, 0);
	imsgev_compose(&a, 1, 0, -1, NULL, 0);
	event_base_dispatch(base);
	ok(tb.closed == 1 && strcmp(tb.why, "told to stop") == 0 &&
	    tb.received == 12,
	    "shutdown from dispatch closes once, after the current frame");
	imsgev_clear(&b);
	event_base_dispatch(base);
	ok(ta.closed == 1 && strcmp(ta.why, "connection closed") == 0,
	    "the other side sees the close (%s)", ta.why);
	imsgev_clear(&a);
	event_base_free(base);
	free(buf);
}

int
main(void)
{
	log_init(LOG_DEST_STDERR, 0, "test_imsg");
	signal(SIGPIPE, SIG_IGN);
	test_roundtrip();
	test_byte_by_byte();
	test_many_in_one_read();
	test_fd_passing();
	test_fd_refused();
	test_fd_send_only();
	test_fd_stray();
	test_maxsize();
	test_garbage();
	test_truncated();
	test_partial_writes();
	test_queue_cap();
	test_eintr();
	test_imsgev();
	return tap_done();
}
