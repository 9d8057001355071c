/*
 * A blocking imsg connection for the command-line tools: see imsgsync.h.
 */
#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "imsgsync.h"
#include "sock.h"
#include "util.h"

static int __attribute__((__format__(__printf__, 2, 3)))
sync_fail(struct imsgsync *is, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(is->err, sizeof(is->err), fmt, ap);
	va_end(ap);
	return -1;
}

int
imsgsync_connect(struct imsgsync *is, const char *path, enum proc_role role)
{
	struct proto_hello	 h;
	struct proto_reject	 rej;
	struct imsg		 imsg;
	char			 why[160];
	int			 fd, r;

	memset(is, 0, sizeof(*is));
	is->ib.fd = -1;
	if ((fd = sock_unix_connect(path)) == -1) {
		return sync_fail(is, "cannot connect to %s: %s", path,
		    strerror(errno));
	}
	fd_set_nonblock(fd);
	imsgbuf_init(&is->ib, fd, PROTO_MAX_FRAME, 0);
	proto_hello_init(&h, role);
	if (imsgsync_send(is, IMSG_HELLO, 0, &h, sizeof(h)) == -1)
		return -1;
	if ((r = imsgsync_next(is, &imsg, 10000)) != 1)
		return r == 0 ? sync_fail(is, "%s did not say hello", path) :
		    -1;
	if (imsg.hdr.type == IMSG_HELLO_REJECT &&
	    proto_payload(imsg.data, imsg.datalen, &rej, sizeof(rej)) == 0) {
		rej.reason[sizeof(rej.reason) - 1] = '\0';
		imsg_free(&imsg);
		return sync_fail(is, "%s refused us: %s", path, rej.reason);
	}
	if (imsg.hdr.type != IMSG_HELLO) {
		imsg_free(&imsg);
		return sync_fail(is, "%s said no hello", path);
	}
	if (proto_hello_check(imsg.data, imsg.datalen, why, sizeof(why)) !=
	    NULL) {
		imsg_free(&imsg);
		return sync_fail(is, "%s: %s", path, why);
	}
	memcpy(&h, imsg.data, sizeof(h));
	str_copy(is->peer, h.software, sizeof(is->peer));
	imsg_free(&imsg);
	return 0;
}

/*
 * The peer closed on us: if it said why first (it refuses a hello after
 * sending its own), that is the error.
 */
static int
sync_rejected(struct imsgsync *is)
{
	struct imsg	 imsg;
	char		 why[sizeof(is->err)];

	str_copy(why, is->err, sizeof(why));
	while (imsgsync_next(is, &imsg, 1000) == 1)
		imsg_free(&imsg);
	if (strncmp(is->err, "refused: ", 9) != 0)
		str_copy(is->err, why, sizeof(is->err));
	return -1;
}

void
imsgsync_open(struct imsgsync *is, int fd, size_t maxframe, int flags)
{
	memset(is, 0, sizeof(*is));
	imsgbuf_init(&is->ib, fd, maxframe, flags);
}

int
imsgsync_send(struct imsgsync *is, uint32_t type, uint32_t peerid,
    const void *data, size_t len)
{
	return imsgsync_send_fd(is, type, peerid, -1, data, len);
}

int
imsgsync_send_fd(struct imsgsync *is, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	struct pollfd	 pfd = { is->ib.fd, POLLOUT, 0 };

	if (imsg_compose(&is->ib, type, peerid, fd, data, len) == -1)
		return sync_fail(is, "cannot queue the frame: %s",
		    strerror(errno));
	while (imsgbuf_queued(&is->ib) > 0) {
		if (imsgbuf_write(&is->ib) == -1 && errno != EAGAIN) {
			sync_fail(is, "send: %s", strerror(errno));
			return sync_rejected(is);
		}
		if (imsgbuf_queued(&is->ib) > 0 && poll(&pfd, 1, -1) == -1 &&
		    errno != EINTR)
			return sync_fail(is, "poll: %s", strerror(errno));
	}
	return 0;
}

int
imsgsync_next(struct imsgsync *is, struct imsg *imsg, int timeout_ms)
{
	struct pollfd		 pfd = { is->ib.fd, POLLIN, 0 };
	struct proto_reject	 rej;
	uint64_t		 end = mono_ms() + (uint64_t)timeout_ms;
	ssize_t			 n;
	int			 r, wait = timeout_ms;

	for (;;) {
		if ((r = imsg_get(&is->ib, imsg)) == 1) {
			if (imsg->hdr.type != IMSG_HELLO_REJECT ||
			    is->peer[0] == '\0')
				return 1;
			/* After the hellos: our hello was refused. */
			if (proto_payload(imsg->data, imsg->datalen, &rej,
			    sizeof(rej)) == -1)
				rej.reason[0] = '\0';
			rej.reason[sizeof(rej.reason) - 1] = '\0';
			imsg_free(imsg);
			return sync_fail(is, "refused: %s", rej.reason);
		}
		if (r == -1)
			return sync_fail(is, "protocol error: %s",
			    is->ib.err != NULL ? is->ib.err : "bad frame");
		if (timeout_ms >= 0) {
			if (mono_ms() >= end)
				return 0;
			wait = (int)(end - mono_ms());
		}
		if ((r = poll(&pfd, 1, wait)) == -1 && errno != EINTR)
			return sync_fail(is, "poll: %s", strerror(errno));
		if (r <= 0)
			continue;
		n = imsgbuf_read(&is->ib);
		if (n == 0)
			return sync_fail(is, "the connection was closed");
		if (n == -1 && errno != EAGAIN)
			return sync_fail(is, "read: %s", is->ib.err != NULL ?
			    is->ib.err : strerror(errno));
	}
}

void
imsgsync_close(struct imsgsync *is)
{
	int	 fd = is->ib.fd;

	imsgbuf_clear(&is->ib);
	if (fd != -1)
		close(fd);
}
