/*
 * imsg: framed messages over AF_UNIX stream sockets, with optional passing
 * of one file descriptor per message.
 *
 * A frame is a 16-byte header followed by the payload:
 *
 *	uint32_t type		message type (proto.h)
 *	uint32_t len		header + payload; IMSG_FD_MARK set when an fd
 *				travels with the frame
 *	uint32_t peerid		request id chosen by the sender
 *	uint32_t pid		sender's pid (informational; trust SO_PEERCRED)
 *
 * Fields are in host byte order: both ends are on the same host.  The fd is
 * sent with the frame's first byte, so that its owner is known on receipt.
 */
#ifndef MCPD_IMSG_H
#define MCPD_IMSG_H

#include <sys/queue.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#define IMSG_HEADER_SIZE	16
#define IMSG_FD_MARK		0x80000000U
#define IMSG_LEN_MASK		0x7fffffffU
#define IMSG_MAX_DEFAULT	(64 * 1024)
#define IMSG_MAX_LIMIT		(16 * 1024 * 1024)
#define IMSG_FDQ_MAX		8	/* received fds not yet claimed */
#define IMSG_WQ_MAX_DEFAULT	(32 * 1024 * 1024)

/* imsgbuf flags */
#define IMSGBUF_FDPASS		0x01	/* this channel may carry fds */
/* This end may send fds but takes none: a server handing descriptors to
 * clients it does not trust with its own fd table. */
#define IMSGBUF_FDSEND		0x02

struct imsg_hdr {
	uint32_t	 type;
	uint32_t	 len;
	uint32_t	 peerid;
	uint32_t	 pid;
};

struct imsg {
	struct imsg_hdr	 hdr;		/* len without IMSG_FD_MARK */
	int		 fd;		/* -1 when none */
	void		*data;		/* payload, NULL when empty */
	size_t		 datalen;
};

struct ibuf {
	TAILQ_ENTRY(ibuf) entry;
	uint8_t		*buf;
	size_t		 len;
	size_t		 sent;
	int		 fd;		/* sent with byte 0, then closed */
};

struct imsg_rfd {
	int		 fd;
	uint64_t	 from;		/* stream offsets of the read that */
	uint64_t	 to;		/* delivered it: [from, to) */
};

struct imsgbuf {
	int		 fd;
	int		 flags;
	size_t		 maxsize;	/* largest frame accepted or sent */
	size_t		 wqmax;		/* bytes allowed in the write queue */
	pid_t		 pid;

	uint8_t		*rbuf;		/* maxsize bytes */
	size_t		 roff;		/* first unconsumed byte in rbuf */
	size_t		 rlen;		/* unconsumed bytes from roff */
	uint64_t	 rpos;		/* stream offset of rbuf[roff] */
	struct imsg_rfd	 rfds[IMSG_FDQ_MAX];
	int		 nrfds;

	TAILQ_HEAD(, ibuf) wq;
	size_t		 wqbytes;

	const char	*err;		/* why the last call failed */
	int		 syserr;	/* ... and errno says more */
};

void	 imsgbuf_init(struct imsgbuf *, int, size_t, int);
void	 imsgbuf_clear(struct imsgbuf *);

/*
 * Read what the socket has.  Returns the number of bytes read, 0 when the
 * peer closed the connection between frames, or -1: errno EAGAIN when there
 * was nothing to read, otherwise the connection is unusable and ibuf->err
 * says why (a frame cut short by the peer closing reports EPIPE).
 */
ssize_t	 imsgbuf_read(struct imsgbuf *);

/*
 * Take the next whole frame.  Returns 1 and fills imsg, 0 when no whole
 * frame is buffered, -1 (errno EBADMSG, ibuf->err set) when the stream is
 * malformed: a length under the header size or over maxsize, an fd mark
 * without an fd, an fd without its mark.
 */
int	 imsg_get(struct imsgbuf *, struct imsg *);
void	 imsg_free(struct imsg *);
/* Take ownership of the message's fd (-1 if none). */
int	 imsg_take_fd(struct imsg *);

/*
 * Queue a frame.  The fd (or -1) is owned by the queue from here on, even
 * when the call fails.  Returns 0, or -1 with errno EMSGSIZE (too large),
 * EBADF (fd on a channel without IMSGBUF_FDPASS) or ENOBUFS (write queue
 * over wqmax: the peer is not reading).
 */
int	 imsg_compose(struct imsgbuf *, uint32_t, uint32_t, int,
	    const void *, size_t);
int	 imsg_composev(struct imsgbuf *, uint32_t, uint32_t, int,
	    const struct iovec *, int);

/* Send what the socket takes now: 0 (even if some remains), -1 on error. */
int	 imsgbuf_write(struct imsgbuf *);
/* Block until the queue is empty (poll(2) on EAGAIN).  0 or -1. */
int	 imsgbuf_flush(struct imsgbuf *);
size_t	 imsgbuf_queued(const struct imsgbuf *);

#endif
