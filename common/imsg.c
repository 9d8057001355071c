/*
 * imsg framing: see imsg.h.
 *
 * Received fds are kept in a small FIFO together with the stream range of
 * the read that delivered them.  A sender always attaches an fd to the first
 * byte of its frame, so a marked frame must start inside that range, and a
 * frame starting beyond it means the fd was stray: both are protocol errors.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

#define IMSG_IOV_MAX	64

void
imsgbuf_init(struct imsgbuf *ib, int fd, size_t maxsize, int flags)
{
	memset(ib, 0, sizeof(*ib));
	if (maxsize < IMSG_HEADER_SIZE)
		maxsize = IMSG_HEADER_SIZE;
	if (maxsize > IMSG_MAX_LIMIT)
		maxsize = IMSG_MAX_LIMIT;
	ib->fd = fd;
	ib->flags = flags;
	ib->maxsize = maxsize;
	ib->wqmax = IMSG_WQ_MAX_DEFAULT;
	ib->pid = getpid();
	TAILQ_INIT(&ib->wq);
}

static void
ibuf_free(struct ibuf *b)
{
	if (b->fd != -1)
		close(b->fd);
	free(b->buf);
	free(b);
}

void
imsgbuf_clear(struct imsgbuf *ib)
{
	struct ibuf	*b;
	int		 i;

	while ((b = TAILQ_FIRST(&ib->wq)) != NULL) {
		TAILQ_REMOVE(&ib->wq, b, entry);
		ibuf_free(b);
	}
	ib->wqbytes = 0;
	for (i = 0; i < ib->nrfds; i++)
		close(ib->rfds[i].fd);
	ib->nrfds = 0;
	free(ib->rbuf);
	ib->rbuf = NULL;
	ib->roff = ib->rlen = 0;
}

static ssize_t
imsg_fail(struct imsgbuf *ib, int code, const char *why)
{
	ib->err = why;
	ib->syserr = 0;
	errno = code;
	return -1;
}

/* Collect the fd of an SCM_RIGHTS message; -1 on a protocol violation. */
static int
imsgbuf_take_cmsg(struct imsgbuf *ib, struct msghdr *msg, ssize_t n)
{
	struct cmsghdr	*cm;
	int		*fds, nfds, i, bad = 0;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)CMSG_DATA(cm);
		nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < nfds; i++) {
			if (bad || !(ib->flags & IMSGBUF_FDPASS) ||
			    ib->nrfds == IMSG_FDQ_MAX) {
				close(fds[i]);
				bad = 1;
				continue;
			}
			ib->rfds[ib->nrfds].fd = fds[i];
			ib->rfds[ib->nrfds].from = ib->rpos + ib->rlen;
			ib->rfds[ib->nrfds].to = ib->rpos + ib->rlen +
			    (uint64_t)n;
			ib->nrfds++;
		}
	}
	if (bad) {
		imsg_fail(ib, EBADMSG, (ib->flags & IMSGBUF_FDPASS) ?
		    "peer sent more file descriptors than frames" :
		    "peer sent a file descriptor on a channel without fd "
		    "passing");
		return -1;
	}
	return 0;
}

ssize_t
imsgbuf_read(struct imsgbuf *ib)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	struct msghdr	 msg;
	struct iovec	 iov;
	ssize_t		 n;

	if (ib->rbuf == NULL && (ib->rbuf = malloc(ib->maxsize)) == NULL)
		return imsg_fail(ib, ENOMEM, "out of memory");
	if (ib->roff > 0) {
		/* Compact once per read, not once per frame taken. */
		memmove(ib->rbuf, ib->rbuf + ib->roff, ib->rlen);
		ib->roff = 0;
	}
	if (ib->rlen == ib->maxsize)	/* imsg_get() not called: no room */
		return imsg_fail(ib, ENOBUFS, "read buffer full");

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = ib->rbuf + ib->rlen;
	iov.iov_len = ib->maxsize - ib->rlen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);

	do {
		n = recvmsg(ib->fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			ib->err = NULL;
			errno = EAGAIN;
			return -1;
		}
		ib->err = "read failed";
		ib->syserr = 1;
		return -1;
	}
	if (msg.msg_flags & MSG_CTRUNC) {
		/* The kernel dropped descriptors we had no room for. */
		imsgbuf_take_cmsg(ib, &msg, n);
		return imsg_fail(ib, EBADMSG, (ib->flags & IMSGBUF_FDPASS) ?
		    "file descriptors lost: several on one frame, or the fd "
		    "limit reached" :
		    "peer sent a file descriptor on a channel without fd "
		    "passing");
	}
	if (imsgbuf_take_cmsg(ib, &msg, n) == -1)
		return -1;
	if (n == 0) {
		if (ib->rlen > 0)
			return imsg_fail(ib, EPIPE,
			    "connection closed in the middle of a frame");
		if (ib->nrfds > 0)
			return imsg_fail(ib, EBADMSG,
			    "connection closed with an unclaimed fd");
		return 0;
	}
	ib->rlen += (size_t)n;
	return n;
}

/* The fd for a marked frame starting at stream offset pos, or -1. */
static int
imsg_claim_fd(struct imsgbuf *ib, uint64_t pos)
{
	int	 fd;

	if (ib->nrfds == 0 || pos < ib->rfds[0].from || pos >= ib->rfds[0].to)
		return -1;
	fd = ib->rfds[0].fd;
	ib->nrfds--;
	memmove(&ib->rfds[0], &ib->rfds[1], ib->nrfds * sizeof(ib->rfds[0]));
	return fd;
}

int
imsg_get(struct imsgbuf *ib, struct imsg *imsg)
{
	struct imsg_hdr	 hdr;
	size_t		 len;
	int		 fd = -1;

	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	if (ib->rlen < IMSG_HEADER_SIZE)
		return 0;
	memcpy(&hdr, ib->rbuf + ib->roff, sizeof(hdr));
	len = hdr.len & IMSG_LEN_MASK;
	if (len < IMSG_HEADER_SIZE)
		return (int)imsg_fail(ib, EBADMSG,
		    "frame length shorter than its header");
	if (len > ib->maxsize)
		return (int)imsg_fail(ib, EBADMSG,
		    "frame length over the channel's maximum");
	if ((hdr.len & IMSG_FD_MARK) && !(ib->flags & IMSGBUF_FDPASS))
		return (int)imsg_fail(ib, EBADMSG,
		    "frame marked with an fd on a channel without fd passing");
	if (ib->nrfds > 0 && ib->rpos >= ib->rfds[0].to)
		return (int)imsg_fail(ib, EBADMSG,
		    "file descriptor sent without its frame mark");
	if (ib->rlen < len)
		return 0;
	if (hdr.len & IMSG_FD_MARK) {
		if ((fd = imsg_claim_fd(ib, ib->rpos)) == -1)
			return (int)imsg_fail(ib, EBADMSG,
			    "frame marked with an fd that did not arrive");
	}

	imsg->hdr = hdr;
	imsg->hdr.len = (uint32_t)len;
	imsg->fd = fd;
	imsg->datalen = len - IMSG_HEADER_SIZE;
	if (imsg->datalen > 0) {
		if ((imsg->data = malloc(imsg->datalen)) == NULL) {
			if (fd != -1)
				close(fd);
			imsg->fd = -1;
			return (int)imsg_fail(ib, ENOMEM, "out of memory");
		}
		memcpy(imsg->data, ib->rbuf + ib->roff + IMSG_HEADER_SIZE,
		    imsg->datalen);
	}
	ib->rlen -= len;
	ib->rpos += len;
	ib->roff = ib->rlen == 0 ? 0 : ib->roff + len;
	return 1;
}

void
imsg_free(struct imsg *imsg)
{
	if (imsg->fd != -1)
		close(imsg->fd);
	imsg->fd = -1;
	free(imsg->data);
	imsg->data = NULL;
	imsg->datalen = 0;
}

int
imsg_take_fd(struct imsg *imsg)
{
	int	 fd = imsg->fd;

	imsg->fd = -1;
	return fd;
}

int
imsg_composev(struct imsgbuf *ib, uint32_t type, uint32_t peerid, int fd,
    const struct iovec *iov, int iovcnt)
{
	struct imsg_hdr	 hdr;
	struct ibuf	*b;
	size_t		 len = IMSG_HEADER_SIZE, off;
	int		 i;

	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > ib->maxsize) {
			len = SIZE_MAX;
			break;
		}
		len += iov[i].iov_len;
	}
	if (len > ib->maxsize) {
		if (fd != -1)
			close(fd);
		return (int)imsg_fail(ib, EMSGSIZE, "message too large");
	}
	if (fd != -1 && !(ib->flags & (IMSGBUF_FDPASS | IMSGBUF_FDSEND))) {
		close(fd);
		return (int)imsg_fail(ib, EBADF,
		    "fd on a channel without fd passing");
	}
	if (ib->wqbytes + len > ib->wqmax) {
		if (fd != -1)
			close(fd);
		return (int)imsg_fail(ib, ENOBUFS,
		    "write queue full: the peer is not reading");
	}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->buf = malloc(len)) == NULL) {
		free(b);
		if (fd != -1)
			close(fd);
		return (int)imsg_fail(ib, ENOMEM, "out of memory");
	}
	hdr.type = type;
	hdr.len = (uint32_t)len | (fd != -1 ? IMSG_FD_MARK : 0);
	hdr.peerid = peerid;
	hdr.pid = (uint32_t)ib->pid;
	memcpy(b->buf, &hdr, sizeof(hdr));
	off = IMSG_HEADER_SIZE;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len == 0)
			continue;
		memcpy(b->buf + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	b->len = len;
	b->fd = fd;
	TAILQ_INSERT_TAIL(&ib->wq, b, entry);
	ib->wqbytes += len;
	return 0;
}

int
imsg_compose(struct imsgbuf *ib, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t datalen)
{
	struct iovec	 iov;

	iov.iov_base = (void *)(uintptr_t)data;
	iov.iov_len = datalen;
	return imsg_composev(ib, type, peerid, fd, &iov, data ? 1 : 0);
}

int
imsgbuf_write(struct imsgbuf *ib)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	struct iovec	 iov[IMSG_IOV_MAX];
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	struct ibuf	*b, *next;
	ssize_t		 n;
	size_t		 left;
	int		 cnt = 0;

	memset(&msg, 0, sizeof(msg));
	TAILQ_FOREACH(b, &ib->wq, entry) {
		/* An fd travels with its frame's first byte and alone. */
		if (cnt > 0 && b->fd != -1)
			break;
		if (cnt == IMSG_IOV_MAX)
			break;
		iov[cnt].iov_base = b->buf + b->sent;
		iov[cnt].iov_len = b->len - b->sent;
		if (cnt == 0 && b->fd != -1 && b->sent == 0) {
			msg.msg_control = cmsgbuf.buf;
			msg.msg_controllen = sizeof(cmsgbuf.buf);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(cm), &b->fd, sizeof(int));
		}
		cnt++;
	}
	if (cnt == 0)
		return 0;
	msg.msg_iov = iov;
	msg.msg_iovlen = (size_t)cnt;

	do {
		n = sendmsg(ib->fd, &msg, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			return 0;
		ib->err = "write failed";
		ib->syserr = 1;
		return -1;
	}

	left = (size_t)n;
	for (b = TAILQ_FIRST(&ib->wq); b != NULL && left > 0; b = next) {
		next = TAILQ_NEXT(b, entry);
		if (b->fd != -1) {
			/* Sent with this call's first byte: our copy goes. */
			close(b->fd);
			b->fd = -1;
		}
		if (left < b->len - b->sent) {
			b->sent += left;
			break;
		}
		left -= b->len - b->sent;
		ib->wqbytes -= b->len;
		TAILQ_REMOVE(&ib->wq, b, entry);
		ibuf_free(b);
	}
	return 0;
}

int
imsgbuf_flush(struct imsgbuf *ib)
{
	struct pollfd	 pfd;

	while (!TAILQ_EMPTY(&ib->wq)) {
		if (imsgbuf_write(ib) == -1)
			return -1;
		if (TAILQ_EMPTY(&ib->wq))
			break;
		pfd.fd = ib->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR) {
			ib->err = "poll failed";
		ib->syserr = 1;
			return -1;
		}
	}
	return 0;
}

size_t
imsgbuf_queued(const struct imsgbuf *ib)
{
	return ib->wqbytes;
}
