/*
 * Fuzz target: imsg framing (common/imsg.c) as a peer's bytes reach it,
 * descriptors and all, and the payload checks of common/proto.c that every
 * receiver applies first.
 *
 * Input: one byte of channel settings (bit 0: fd passing; bits 1-3: the
 * largest frame), then chunks, each [ctl][length, 2 bytes][bytes] sent
 * with one sendmsg(2).  ctl bits 0-1: how many descriptors go with the
 * chunk; bit 2: read only after the next chunk too.  Every frame taken is
 * checked as its type says, and sent again through imsg_compose() to
 * come back the same.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auditbody.h"
#include "fuzz.h"
#include "imsg.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define CTL_NFDS	0x03
#define CTL_DEFER	0x04

static const size_t	 maxsizes[8] = {
	IMSG_HEADER_SIZE, 32, 64, 256, 4096, IMSG_MAX_DEFAULT,
	PROTO_INIT_FRAME, PROTO_MAX_FRAME,
};
static int		 devnull = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	return 0;
}

static void
pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0, sv) == -1)
		fatal("socketpair");
}

/* The checks a receiver makes of a payload before using it. */
static void
check_payload(const struct imsg *m)
{
	union {
		struct proto_reject	reject;
		struct proto_ping	ping;
		struct init_exec	exec;
		struct audit_record	rec;
		struct sbx_error	err;
	}		 u;
	const char	*strs[8];
	char		 why[128];
	size_t		 hl;

	(void)proto_role_name(m->hdr.pid);
	(void)audit_event_name(m->hdr.peerid);
	(void)audit_outcome_name(m->hdr.peerid);
	switch (m->hdr.type) {
	case IMSG_HELLO:
		(void)proto_hello_check(m->data, m->datalen, why, sizeof(why));
		break;
	case IMSG_HELLO_REJECT:
		(void)proto_payload(m->data, m->datalen, &u.reject,
		    sizeof(u.reject));
		break;
	case IMSG_PING:
	case IMSG_PONG:
		(void)proto_payload(m->data, m->datalen, &u.ping,
		    sizeof(u.ping));
		break;
	case IMSG_INIT_EXEC:
		if (m->datalen < (hl = sizeof(u.exec)))
			break;
		memcpy(&u.exec, m->data, hl);
		(void)proto_strings((const char *)m->data + hl,
		    m->datalen - hl, u.exec.argc % nitems(strs), strs,
		    u.exec.flags & 1);
		break;
	case IMSG_AUDIT_RECORD:
		if (m->datalen < (hl = sizeof(u.rec)))
			break;
		(void)audit_body_check((const char *)m->data + hl,
		    m->datalen - hl);
		break;
	case IMSG_SBX_ERROR:
		(void)proto_payload(m->data, m->datalen, &u.err,
		    sizeof(u.err));
		break;
	default:
		(void)proto_strings(m->data, m->datalen,
		    m->hdr.type % nitems(strs), strs, 0);
		break;
	}
}

/* The next frame of a stream we wrote ourselves: it must be whole. */
static void
take_own(struct imsgbuf *ib, struct imsg *m)
{
	int	 i, r;

	for (i = 0; i < 64; i++) {
		if ((r = imsg_get(ib, m)) == 1)
			return;
		if (r == -1 || (imsgbuf_read(ib) <= 0 && errno != EAGAIN))
			break;
	}
	abort();
}

/* Sent again, the frame must arrive as it was taken. */
static void
roundtrip(const struct imsg *m, int fdpass)
{
	struct imsgbuf	 a, b;
	struct imsg	 got;
	int		 sv[2], fd = -1;

	if (m->datalen > IMSG_MAX_DEFAULT)
		return;
	pair(sv);
	imsgbuf_init(&a, sv[0], IMSG_MAX_DEFAULT + IMSG_HEADER_SIZE, fdpass);
	imsgbuf_init(&b, sv[1], IMSG_MAX_DEFAULT + IMSG_HEADER_SIZE, fdpass);
	if (m->fd != -1 && (fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0)) == -1)
		fatal("dup");
	if (imsg_compose(&a, m->hdr.type, m->hdr.peerid, fd, m->data,
	    m->datalen) == -1 || imsgbuf_write(&a) == -1 ||
	    imsgbuf_queued(&a) != 0)
		abort();
	take_own(&b, &got);
	if (got.hdr.type != m->hdr.type || got.hdr.peerid != m->hdr.peerid ||
	    got.datalen != m->datalen || (got.fd == -1) != (m->fd == -1) ||
	    (m->datalen > 0 && memcmp(got.data, m->data, m->datalen) != 0))
		abort();
	imsg_free(&got);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

/* Every whole frame buffered: 0, or -1 once the stream is malformed. */
static int
take(struct imsgbuf *ib, int fdpass)
{
	struct imsg	 m;
	int		 r;

	while ((r = imsg_get(ib, &m)) == 1) {
		check_payload(&m);
		roundtrip(&m, fdpass);
		imsg_free(&m);
	}
	return r;
}

/* Read and take all there is: 0, or -1 once the stream is over. */
static int
drain(struct imsgbuf *ib, int fdpass)
{
	ssize_t	 n;

	for (;;) {
		if (take(ib, fdpass) == -1)
			return -1;
		if ((n = imsgbuf_read(ib)) == 0)
			return -1;
		if (n == -1)
			return errno == EAGAIN ? 0 : -1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in	 in = { data, size };
	struct imsgbuf	 ib;
	const uint8_t	*p;
	size_t		 len, off;
	ssize_t		 n;
	uint8_t		 set, ctl;
	int		 sv[2], fdpass, broken = 0;

	set = fuzz_u8(&in);
	fdpass = (set & 1) ? IMSGBUF_FDPASS : 0;
	pair(sv);
	imsgbuf_init(&ib, sv[1], maxsizes[(set >> 1) & 7], fdpass);
	while (in.left > 0 && !broken) {
		ctl = fuzz_u8(&in);
		p = fuzz_bytes(&in, fuzz_u16(&in), &len);
		for (off = 0; off < len && !broken; off += (size_t)n) {
			n = fuzz_send(sv[0], p + off, len - off, devnull,
			    off == 0 ? ctl & CTL_NFDS : 0, 0);
			if (n == -1 && errno != EAGAIN)
				fatal("sendmsg");
			if (n == -1) {
				n = 0;
				broken = drain(&ib, fdpass) == -1;
			}
		}
		if (!(ctl & CTL_DEFER) && !broken)
			broken = drain(&ib, fdpass) == -1;
	}
	/* The peer hangs up: what is left must be whole. */
	shutdown(sv[0], SHUT_WR);
	while (!broken)
		broken = drain(&ib, fdpass) == -1;
	imsgbuf_clear(&ib);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
