/*
 * auditload: stream audit records to mcp-auditd as sandboxd would, for
 * the durability tests and the benchmark, and the same work done two
 * simpler ways as a baseline.
 *
 *	auditload [-f] [-b bytes] [-n count] [-o ackfile] [-w window] socket
 *		Send count records (default 1000), at most window of them
 *		unacknowledged (default 1), each body "n=I" and "pad=" of
 *		bytes 'x' (default 200); with -f, none after the first that
 *		auditd refuses (to fill a disk).  Every acknowledgement that carries
 *		a seq is written to ackfile, "I SEQ", by one write(2), so the
 *		file holds exactly what auditd acknowledged, whatever
 *		happens after.  Must run as root: auditd takes the role
 *		sandboxd only from uid 0.
 *	auditload -X kind [-r role] socket
 *		Hostile: send one malformed record, of kind short (a frame
 *		shorter than the header), bodylen (a length that is not the
 *		body's), event, outcome (unknown ones), tenant (a control
 *		character), sandbox (not an id), body (keys out of order),
 *		ctl (a raw control byte in the body), or none (a good one);
 *		print "acked SEQ", "refused WHY" or "closed".
 *	auditload -D db [-b bytes] [-n count]
 *		Baseline: insert the same records straight into a new SQLite
 *		database (WAL, synchronous=FULL), one transaction each, with
 *		no hash, chain or signature.
 *	auditload -S [-b bytes] [-n count]
 *		Baseline: only hash and sign each record (Ed25519), no
 *		database: the cryptography's ceiling.
 *
 * The last line is "sent N acked N refused N seconds S rate R" (records
 * acknowledged, or done, per second).  Exit status: 0 when every record
 * was acknowledged with a seq, 2 when auditd refused some (the first
 * reason is printed), 4 when auditd closed the connection, 1 on error.
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "auditbody.h"
#include "auditlog.h"
#include "imsg.h"
#include "log.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

static struct imsgbuf	 ib;
static uint64_t		 count = 1000, window = 1, padlen = 200;
static int		 fill;		/* -f: stop at the first refusal */
static uint32_t		 role = ROLE_SANDBOXD;

static void
make_body(struct audit_body *b, uint64_t i)
{
	char	*pad;

	pad = xmalloc(padlen + 1);
	memset(pad, 'x', padlen);
	pad[padlen] = '\0';
	audit_body_init(b);
	audit_body_u64(b, "n", i);
	audit_body_str(b, "pad", pad);
	free(pad);
}

static void
summary(uint64_t sent, uint64_t acked, uint64_t refused, uint64_t t0)
{
	double	 secs = (double)(mono_ns() - t0) / 1e9;

	printf("sent %llu acked %llu refused %llu seconds %.3f rate %.0f\n",
	    (unsigned long long)sent, (unsigned long long)acked,
	    (unsigned long long)refused, secs,
	    secs > 0 ? (double)(acked + refused) / secs : 0.0);
}

/* Wait for the next frame: 1 with it, 0 when auditd closed. */
static int
next_frame(struct imsg *imsg)
{
	struct pollfd	 pfd = { ib.fd, POLLIN, 0 };
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsg_get(&ib, imsg)) == 1) {
			if (imsg->hdr.type == IMSG_HELLO_REJECT) {
				printf("refused at the hello\n");
				exit(3);
			}
			return 1;
		}
		if (r == -1)
			errx(1, "auditd: %s", ib.err);
		if (poll(&pfd, 1, 30000) == 0)
			errx(1, "auditd did not answer in 30 s");
		n = imsgbuf_read(&ib);
		if (n == 0 || (n == -1 && (errno == ECONNRESET ||
		    errno == EPIPE)))
			return 0;
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			errx(1, "auditd: %s", ib.err ? ib.err :
			    strerror(errno));
	}
}

static void
send_record(uint64_t i)
{
	struct audit_record	 r;
	struct audit_body	 b;
	struct iovec		 iov[2];

	make_body(&b, i);
	memset(&r, 0, sizeof(r));
	r.event = AEV_EXEC;
	r.outcome = AOC_OK;
	str_copy(r.tenant, "load", sizeof(r.tenant));
	r.bodylen = (uint32_t)b.len;
	iov[0].iov_base = &r;
	iov[0].iov_len = sizeof(r);
	iov[1].iov_base = b.buf;
	iov[1].iov_len = b.len;
	/* peerid i + 1: the acknowledgement names the record. */
	if (imsg_composev(&ib, IMSG_AUDIT_RECORD, (uint32_t)(i + 1), -1,
	    iov, 2) == -1)
		err(1, "queue record");
	audit_body_free(&b);
}

static void
hello(const char *path)
{
	struct proto_hello	 h;
	struct imsg		 imsg;
	int			 fd;

	if ((fd = sock_unix_connect(path)) == -1)
		err(1, "connect %s", path);
	imsgbuf_init(&ib, fd, PROTO_MAX_FRAME, 0);
	proto_hello_init(&h, role);
	if (imsg_compose(&ib, IMSG_HELLO, 0, -1, &h, sizeof(h)) == -1 ||
	    imsgbuf_flush(&ib) == -1)
		err(1, "send hello");
	if (!next_frame(&imsg))
		errx(4, "auditd closed the connection at the hello");
	if (imsg.hdr.type != IMSG_HELLO)
		errx(1, "auditd refused the hello (frame type %u)",
		    imsg.hdr.type);
	imsg_free(&imsg);
}

/* One record, made bad in the way kind says; what auditd made of it. */
static int
hostile(const char *path, const char *kind)
{
	struct audit_record	 r;
	struct audit_ack	 ack;
	struct imsg		 imsg;
	struct iovec		 iov[2];
	const char		*body = "a=1\nb=2\n";

	memset(&r, 0, sizeof(r));
	r.event = AEV_EXEC;
	r.outcome = AOC_OK;
	str_copy(r.tenant, "load", sizeof(r.tenant));
	if (strcmp(kind, "event") == 0)
		r.event = AEV_EVENT_MAX;
	else if (strcmp(kind, "outcome") == 0)
		r.outcome = 0;
	else if (strcmp(kind, "tenant") == 0)
		str_copy(r.tenant, "lo\033[2Jad", sizeof(r.tenant));
	else if (strcmp(kind, "sandbox") == 0)
		str_copy(r.sandbox, "../../not-a-sandbox-id-at-all-xx",
		    sizeof(r.sandbox));
	else if (strcmp(kind, "body") == 0)
		body = "b=1\na=2\n";
	else if (strcmp(kind, "ctl") == 0)
		body = "a=\033]0;pwned\007\n";
	else if (strcmp(kind, "short") != 0 &&
	    strcmp(kind, "bodylen") != 0 && strcmp(kind, "none") != 0)
		errx(1, "-X %s: no such kind", kind);
	r.bodylen = (uint32_t)strlen(body);
	if (strcmp(kind, "bodylen") == 0)
		r.bodylen += 100;
	iov[0].iov_base = &r;
	iov[0].iov_len = strcmp(kind, "short") == 0 ? sizeof(r) / 2 :
	    sizeof(r);
	iov[1].iov_base = (void *)(uintptr_t)body;
	iov[1].iov_len = strlen(body);
	hello(path);
	if (imsg_composev(&ib, IMSG_AUDIT_RECORD, 1, -1, iov, 2) == -1)
		err(1, "send record");
	/* A refusal may be on its way: read it before saying "closed". */
	if ((imsgbuf_flush(&ib) == -1 && errno != EPIPE &&
	    errno != ECONNRESET) || !next_frame(&imsg)) {
		printf("closed\n");
		return 4;
	}
	if (imsg.hdr.type != IMSG_AUDIT_ACK || proto_payload(imsg.data,
	    imsg.datalen, &ack, sizeof(ack)) == -1)
		errx(1, "unexpected frame type %u", imsg.hdr.type);
	ack.error[sizeof(ack.error) - 1] = '\0';
	if (ack.seq != 0)
		printf("acked %llu\n", (unsigned long long)ack.seq);
	else
		printf("refused %s\n", ack.error);
	imsg_free(&imsg);
	return ack.seq != 0 ? 0 : 2;
}

static int
stream(const char *path, const char *ackpath)
{
	struct audit_ack	 ack;
	struct imsg		 imsg;
	char			 line[64], first[sizeof(ack.error) + 1] = "";
	uint64_t		 sent = 0, answered = 0, acked = 0, refused = 0;
	uint64_t		 t0;
	int			 afd = -1, n;

	if (ackpath != NULL && (afd = open(ackpath, O_WRONLY | O_CREAT |
	    O_TRUNC | O_APPEND | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", ackpath);
	hello(path);

	t0 = mono_ns();
	while (answered < count) {
		while (sent < count && sent - answered < window)
			send_record(sent++);
		if (imsgbuf_flush(&ib) == -1 || !next_frame(&imsg)) {
			summary(sent, acked, refused, t0);
			printf("auditd closed the connection\n");
			return 4;
		}
		if (imsg.hdr.type != IMSG_AUDIT_ACK ||
		    proto_payload(imsg.data, imsg.datalen, &ack,
		    sizeof(ack)) == -1 || imsg.hdr.peerid == 0 ||
		    imsg.hdr.peerid > sent)
			errx(1, "unexpected frame type %u peerid %u",
			    imsg.hdr.type, imsg.hdr.peerid);
		answered++;
		if (ack.seq != 0) {
			acked++;
			n = snprintf(line, sizeof(line), "%u %llu\n",
			    imsg.hdr.peerid - 1, (unsigned long long)ack.seq);
			if (afd != -1 && write(afd, line, (size_t)n) != n)
				err(1, "%s", ackpath);
		} else {
			if (refused++ == 0) {
				ack.error[sizeof(ack.error) - 1] = '\0';
				str_copy(first, ack.error, sizeof(first));
			}
			/* -f: what is on its way is answered, no more. */
			if (fill)
				count = sent;
		}
		imsg_free(&imsg);
	}
	summary(sent, acked, refused, t0);
	if (refused != 0) {
		printf("refused: %s\n", first);
		return 2;
	}
	return 0;
}

/* The naive way: one unsigned INSERT and COMMIT per record. */
static int
direct(const char *path)
{
	struct audit_body	 b;
	sqlite3			*db;
	sqlite3_stmt		*q;
	uint64_t		 i, t0;

	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL; "
	    "PRAGMA synchronous=FULL; CREATE TABLE records (seq INTEGER "
	    "PRIMARY KEY, time INTEGER NOT NULL, tenant TEXT NOT NULL, "
	    "event TEXT NOT NULL, body TEXT NOT NULL) STRICT",
	    NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO records VALUES "
	    "(?, ?, 'load', 'exec', ?)", -1, &q, NULL) != SQLITE_OK)
		errx(1, "%s: %s", path, sqlite3_errmsg(db));
	t0 = mono_ns();
	for (i = 0; i < count; i++) {
		make_body(&b, i);
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)mono_ns());
		sqlite3_bind_text(q, 3, b.buf, (int)b.len, SQLITE_TRANSIENT);
		if (sqlite3_step(q) != SQLITE_DONE)
			errx(1, "%s: %s", path, sqlite3_errmsg(db));
		audit_body_free(&b);
	}
	summary(count, count, 0, t0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return 0;
}

/* The cryptography alone: audit_entry_hash and an Ed25519 signature. */
static int
sign_only(void)
{
	struct audit_entry	 e;
	struct audit_body	 b;
	uint8_t			 pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t			 sk[crypto_sign_SECRETKEYBYTES];
	uint8_t			 hash[AUDIT_HASH_LEN], sig[AUDIT_SIG_LEN];
	uint64_t		 i, t0;

	crypto_sign_keypair(pk, sk);
	memset(&e, 0, sizeof(e));
	e.role = "sandboxd";
	e.tenant = "load";
	e.sandbox = "";
	e.event = "exec";
	e.outcome = "ok";
	audit_keyid(pk, e.keyid);
	t0 = mono_ns();
	for (i = 0; i < count; i++) {
		make_body(&b, i);
		e.seq = i + 1;
		e.time = (int64_t)mono_ns();
		e.body = (const uint8_t *)b.buf;
		e.bodylen = b.len;
		audit_entry_hash(&e, hash);
		audit_sign_hash(hash, sk, sig);
		memcpy(e.prev, hash, sizeof(e.prev));
		audit_body_free(&b);
	}
	summary(count, count, 0, t0);
	return 0;
}

int
main(int argc, char *argv[])
{
	const char	*db = NULL, *ackpath = NULL, *kind = NULL, *e;
	int		 ch, sign = 0;

	log_init(LOG_DEST_STDERR, 0, "auditload");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sodium_init() == -1)
		errx(1, "sodium_init failed");
	while ((ch = getopt(argc, argv, "b:D:fn:o:r:SX:w:")) != -1) {
		switch (ch) {
		case 'b':
			if ((e = str_to_u64(optarg, 0, 60000, &padlen)) != NULL)
				errx(1, "-b %s: %s", optarg, e);
			break;
		case 'D':
			db = optarg;
			break;
		case 'n':
			if ((e = str_to_u64(optarg, 1, UINT32_MAX - 1,
			    &count)) != NULL)
				errx(1, "-n %s: %s", optarg, e);
			break;
		case 'o':
			ackpath = optarg;
			break;
		case 'r':
			for (role = 1; role < ROLE_MAX; role++)
				if (strcmp(proto_role_name(role), optarg) == 0)
					break;
			if (role == ROLE_MAX)
				errx(1, "-r %s: no such role", optarg);
			break;
		case 'S':
			sign = 1;
			break;
		case 'X':
			kind = optarg;
			break;
		case 'f':
			fill = 1;
			break;
		case 'w':
			if ((e = str_to_u64(optarg, 1, 100000,
			    &window)) != NULL)
				errx(1, "-w %s: %s", optarg, e);
			break;
		default:
			errx(1, "usage: auditload [-b bytes] [-n count] "
			    "[-o ackfile] [-r role] [-w window] socket | "
			    "-X kind socket | -D db | -S");
		}
	}
	argc -= optind;
	argv += optind;
	if (db != NULL)
		return direct(db);
	if (sign)
		return sign_only();
	if (argc != 1)
		errx(1, "usage: auditload [options] socket");
	if (kind != NULL)
		return hostile(argv[0], kind);
	return stream(argv[0], ackpath);
}
