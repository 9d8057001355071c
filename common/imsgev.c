/*
 * imsg over libevent: see imsgev.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "imsgev.h"
#include "log.h"

static void	imsgev_read_cb(evutil_socket_t, short, void *);
static void	imsgev_write_cb(evutil_socket_t, short, void *);

int
imsgev_init(struct imsgev *iev, struct event_base *base, int fd,
    size_t maxsize, int flags, imsgev_dispatch_fn dispatch,
    imsgev_close_fn closed, void *arg)
{
	memset(iev, 0, sizeof(*iev));
	imsgbuf_init(&iev->ibuf, fd, maxsize, flags);
	iev->dispatch = dispatch;
	iev->closed = closed;
	iev->arg = arg;
	iev->ev_read = event_new(base, fd, EV_READ | EV_PERSIST,
	    imsgev_read_cb, iev);
	iev->ev_write = event_new(base, fd, EV_WRITE | EV_PERSIST,
	    imsgev_write_cb, iev);
	if (iev->ev_read == NULL || iev->ev_write == NULL ||
	    event_add(iev->ev_read, NULL) == -1) {
		imsgev_clear(iev);
		return -1;
	}
	return 0;
}

void
imsgev_clear(struct imsgev *iev)
{
	if (iev->in_callback && !iev->dying)
		fatalx("bug: imsgev cleared from its own dispatch");
	if (iev->ev_read != NULL)
		event_free(iev->ev_read);
	if (iev->ev_write != NULL)
		event_free(iev->ev_write);
	iev->ev_read = iev->ev_write = NULL;
	imsgbuf_clear(&iev->ibuf);
	if (iev->ibuf.fd != -1)
		close(iev->ibuf.fd);
	iev->ibuf.fd = -1;
}

void
imsgev_vshutdown(struct imsgev *iev, const char *fmt, va_list ap)
{
	if (iev->dying)
		return;
	iev->dying = 1;
	vsnprintf(iev->why, sizeof(iev->why), fmt, ap);
	/* Close from the read callback, never from inside a caller. */
	event_active(iev->ev_read, EV_READ, 0);
}

void
imsgev_shutdown(struct imsgev *iev, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	imsgev_vshutdown(iev, fmt, ap);
	va_end(ap);
}

static void
imsgev_io_error(struct imsgev *iev)
{
	if (iev->ibuf.err != NULL && iev->ibuf.syserr)
		imsgev_shutdown(iev, "%s: %s", iev->ibuf.err, strerror(errno));
	else if (iev->ibuf.err != NULL)
		imsgev_shutdown(iev, "%s", iev->ibuf.err);
	else
		imsgev_shutdown(iev, "%s", strerror(errno));
}

static void
imsgev_update(struct imsgev *iev)
{
	if (iev->dying)
		return;
	if (imsgbuf_queued(&iev->ibuf) > 0) {
		if (!event_pending(iev->ev_write, EV_WRITE, NULL))
			event_add(iev->ev_write, NULL);
	} else if (event_pending(iev->ev_write, EV_WRITE, NULL))
		event_del(iev->ev_write);
}

static void
imsgev_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct imsgev	*iev = arg;
	struct imsg	 imsg;
	ssize_t		 n;
	int		 r;

	if (!iev->dying) {
		n = imsgbuf_read(&iev->ibuf);
		if (n == 0)
			imsgev_shutdown(iev, "connection closed");
		else if (n == -1 && errno != EAGAIN)
			imsgev_io_error(iev);
	}
	while (!iev->dying) {
		if ((r = imsg_get(&iev->ibuf, &imsg)) == -1) {
			imsgev_io_error(iev);
			break;
		}
		if (r == 0)
			break;
		iev->in_callback = 1;
		iev->dispatch(iev, &imsg);
		iev->in_callback = 0;
		imsg_free(&imsg);
	}
	if (iev->dying) {
		/* Give queued frames (a refusal, say) one chance to leave. */
		imsgbuf_write(&iev->ibuf);
		event_del(iev->ev_read);
		event_del(iev->ev_write);
		iev->closed(iev, iev->why);
		return;
	}
	imsgev_update(iev);
}

static void
imsgev_write_cb(evutil_socket_t fd, short events, void *arg)
{
	struct imsgev	*iev = arg;

	if (imsgbuf_write(&iev->ibuf) == -1)
		imsgev_io_error(iev);
	imsgev_update(iev);
}

int
imsgev_composev(struct imsgev *iev, uint32_t type, uint32_t peerid, int fd,
    const struct iovec *iov, int iovcnt)
{
	if (iev->dying) {
		if (fd != -1)
			close(fd);
		errno = EPIPE;
		return -1;
	}
	if (imsg_composev(&iev->ibuf, type, peerid, fd, iov, iovcnt) == -1)
		return -1;
	/* Try at once: most frames leave without waiting for the loop. */
	if (imsgbuf_write(&iev->ibuf) == -1)
		imsgev_io_error(iev);
	imsgev_update(iev);
	return 0;
}

int
imsgev_compose(struct imsgev *iev, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	struct iovec	 iov;

	iov.iov_base = (void *)(uintptr_t)data;
	iov.iov_len = len;
	return imsgev_composev(iev, type, peerid, fd, &iov, data ? 1 : 0);
}
