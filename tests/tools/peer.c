/*
 * peer: a test client and server speaking the suite's protocol, able to
 * misbehave on purpose (wrong version, wrong role, other uid, frames
 * before the hello) so that the integration tests can check the daemons'
 * answers.  It prints one line per event, for the test to match.
 *
 *	peer [options] connect PATH [hello | ping | ping-audit | early]
 *	peer [options] serve PATH
 *	peer [options] flood PATH N idle|half|hello [keep]
 *
 * -u uid, -g gid, -G gid	become this uid/gid (with one supplementary
 *				group) before connecting; needs root
 * -r role			claim this role (mcpd, sandboxd, ...)
 * -V version, -M magic	put these in the hello
 * -w seconds			how long to wait for an answer (default 5)
 *
 * flood opens N connections and holds them for the -w seconds: idle ones
 * say nothing, half ones the first bytes of a hello, hello ones a whole
 * hello (as the -r role); with keep, each one closed or refused is opened
 * again 50 ms later.  It prints "connected N" once the first N connects
 * are done, and at the end what became of them: "flood opened= refused=
 * closed= open= close_ms=MIN-MAX", then "reason COUNT TEXT" per refusal.
 *
 * Exit status: 0 as expected, 1 error, 3 refused, 4 closed, 5 timed out.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "log.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

static int		 wait_ms = 5000;
static int		 quiet_is_fine;	/* a timeout means "still open" */
static struct imsgbuf	 ib;

static uint32_t
role_of(const char *name)
{
	uint32_t	 r;

	for (r = 1; r < ROLE_MAX; r++)
		if (strcmp(proto_role_name(r), name) == 0)
			return r;
	errx(1, "unknown role %s", name);
}

static void
print_reject(struct imsg *imsg)
{
	struct proto_reject	 rej;

	if (proto_payload(imsg->data, imsg->datalen, &rej, sizeof(rej)) == -1) {
		printf("error malformed refusal\n");
		exit(1);
	}
	rej.reason[sizeof(rej.reason) - 1] = '\0';
	printf("refused version=%u role=%s reason=%s\n", rej.version,
	    proto_role_name(rej.role), rej.reason);
	exit(3);
}

/* Next frame, or exit with a line saying why none came. */
static void
next_frame(struct imsg *imsg)
{
	struct pollfd	 pfd = { ib.fd, POLLIN, 0 };
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsg_get(&ib, imsg)) == 1) {
			if (imsg->hdr.type == IMSG_HELLO_REJECT)
				print_reject(imsg);
			return;
		}
		if (r == -1) {
			printf("error %s\n", ib.err);
			exit(1);
		}
		if ((r = poll(&pfd, 1, wait_ms)) == 0) {
			printf(quiet_is_fine ? "open\n" : "timeout\n");
			exit(quiet_is_fine ? 0 : 5);
		}
		if (r == -1 && errno != EINTR)
			err(1, "poll");
		n = imsgbuf_read(&ib);
		if (n == 0 || (n == -1 && errno == ECONNRESET)) {
			printf("closed\n");
			exit(4);
		}
		if (n == -1 && errno != EAGAIN) {
			printf("error %s\n", ib.err ? ib.err : strerror(errno));
			exit(1);
		}
	}
}

static void
send_hello(uint32_t role, uint32_t version, uint32_t magic)
{
	struct proto_hello	 h;

	proto_hello_init(&h, role);
	h.version = version;
	h.magic = magic;
	/* A peer that refuses us may close before our hello leaves: the
	 * refusal is still there to read. */
	if (imsg_compose(&ib, IMSG_HELLO, 0, -1, &h, sizeof(h)) == -1)
		err(1, "send hello");
	if (imsgbuf_flush(&ib) == -1 && errno != EPIPE && errno != ECONNRESET)
		err(1, "send hello");
}

/* Read the peer's hello and print it; exit if it refused us. */
static void
read_hello(void)
{
	struct imsg		 imsg;
	struct proto_hello	 h;

	next_frame(&imsg);
	if (imsg.hdr.type != IMSG_HELLO ||
	    proto_payload(imsg.data, imsg.datalen, &h, sizeof(h)) == -1) {
		printf("error unexpected frame type %u\n", imsg.hdr.type);
		exit(1);
	}
	h.software[sizeof(h.software) - 1] = '\0';
	printf("hello role=%s version=%u software=%s\n",
	    proto_role_name(h.role), h.version, h.software);
	imsg_free(&imsg);
}

static void
do_ping(uint32_t flags)
{
	struct proto_ping	 p;
	struct imsg		 imsg;
	uint32_t		 r;

	memset(&p, 0, sizeof(p));
	p.cookie = 0x1234abcdULL;
	p.sent_ns = mono_ns();
	p.flags = flags;
	if (imsg_compose(&ib, IMSG_PING, 7, -1, &p, sizeof(p)) == -1 ||
	    imsgbuf_flush(&ib) == -1)
		err(1, "send ping");
	next_frame(&imsg);
	if (imsg.hdr.type != IMSG_PONG || imsg.hdr.peerid != 7 ||
	    proto_payload(imsg.data, imsg.datalen, &p, sizeof(p)) == -1 ||
	    p.cookie != 0x1234abcdULL) {
		printf("error bad pong\n");
		exit(1);
	}
	printf("pong path=");
	for (r = 1; r < ROLE_MAX; r++)
		if (p.path & (1U << r))
			printf("%s,", proto_role_name(r));
	printf(" status=%u rtt_us=%llu\n", p.status,
	    (unsigned long long)((mono_ns() - p.sent_ns) / 1000));
	imsg_free(&imsg);
}

static void
become(uid_t uid, gid_t gid, gid_t supp)
{
	if (supp != (gid_t)-1) {
		if (setgroups(1, &supp) == -1)
			err(1, "setgroups");
	} else if (uid != (uid_t)-1 && setgroups(0, NULL) == -1)
		err(1, "setgroups");
	if (gid != (gid_t)-1 && setgid(gid) == -1)
		err(1, "setgid");
	if (uid != (uid_t)-1 && setuid(uid) == -1)
		err(1, "setuid");
}

/* Handle one accepted connection, in a child of its own. */
static void __attribute__((__noreturn__))
serve_one(int fd, uint32_t role, uint32_t version, uint32_t magic)
{
	struct imsg	 imsg;

	imsgbuf_init(&ib, fd, PROTO_MAX_FRAME, 0);
	send_hello(role, version, magic);
	read_hello();
	for (;;) {
		next_frame(&imsg);
		if (imsg.hdr.type == IMSG_PING) {
			imsg_compose(&ib, IMSG_PONG, imsg.hdr.peerid, -1,
			    imsg.data, imsg.datalen);
			imsgbuf_flush(&ib);
			printf("answered ping\n");
		}
		imsg_free(&imsg);
	}
}

/*
 * Serve on l, bound already; listen once we are who we pretend to be.
 * Every connection is served, until wait_ms pass without one.
 */
static int
serve(int l, const char *path, uint32_t role, uint32_t version,
    uint32_t magic)
{
	struct pollfd	 pfd;
	int		 fd;

	if (sock_listen(l) == -1)
		exit(1);
	signal(SIGCHLD, SIG_IGN);
	printf("listening\n");
	for (;;) {
		pfd.fd = l;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, wait_ms) == 0) {
			printf("timeout\n");
			unlink(path);
			return 5;
		}
		if ((fd = accept4(l, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		if (fork() == 0) {
			close(l);
			serve_one(fd, role, version, magic);
		}
		close(fd);
	}
}

/* One connection of a flood. */
struct flooder {
	struct imsgbuf	 ib;
	int		 open;
	uint64_t	 since;		/* ms: connected, or closed */
};

struct flood_stats {
	unsigned int	 opened, refused, closed;
	uint64_t	 close_min, close_max;	/* ms after connecting */
	char		 reasons[8][128];
	unsigned int	 nreason[8];
};

static void
flood_open(struct flooder *f, const char *path, int mode, uint32_t role,
    struct flood_stats *st)
{
	struct proto_hello	 h;
	struct imsg_hdr		 hdr;
	int			 fd, tries = 0;

	/* A full backlog makes us wait for the daemon to take some. */
	while ((fd = sock_unix_connect(path)) == -1 && errno == EAGAIN &&
	    ++tries < 1000)
		usleep(2000);
	if (fd == -1)
		return;
	imsgbuf_init(&f->ib, fd, 4096, 0);
	f->open = 1;
	f->since = mono_ms();
	st->opened++;
	if (mode == 0)
		return;
	proto_hello_init(&h, role);
	if (mode == 1) {
		/* A frame begun and never finished. */
		memset(&hdr, 0, sizeof(hdr));
		hdr.type = IMSG_HELLO;
		hdr.len = IMSG_HEADER_SIZE + sizeof(h);
		if (write(fd, &hdr, 10) != 10)
			warn("flood: a half hello");
		return;
	}
	imsg_compose(&f->ib, IMSG_HELLO, 0, -1, &h, sizeof(h));
	(void)imsgbuf_flush(&f->ib);
}

static void
flood_gone(struct flooder *f, struct flood_stats *st, const char *reason)
{
	uint64_t	 ms = mono_ms() - f->since;
	int		 i;

	imsgbuf_clear(&f->ib);
	close(f->ib.fd);
	f->open = 0;
	f->since = mono_ms();
	if (reason == NULL) {
		st->closed++;
		if (st->close_min == 0 || ms < st->close_min)
			st->close_min = ms;
		if (ms > st->close_max)
			st->close_max = ms;
		return;
	}
	st->refused++;
	for (i = 0; i < 8; i++)
		if (st->nreason[i] == 0 || strcmp(st->reasons[i], reason) == 0)
			break;
	if (i == 8)
		return;
	snprintf(st->reasons[i], sizeof(st->reasons[i]), "%s", reason);
	st->nreason[i]++;
}

/* What came on an open connection: a refusal, the end, or nothing. */
static void
flood_read(struct flooder *f, struct flood_stats *st)
{
	struct proto_reject	 rej;
	struct imsg		 imsg;
	ssize_t			 n;

	n = imsgbuf_read(&f->ib);
	if (n == -1 && errno == EAGAIN)
		return;
	while (n > 0 && imsg_get(&f->ib, &imsg) == 1) {
		if (imsg.hdr.type == IMSG_HELLO_REJECT &&
		    proto_payload(imsg.data, imsg.datalen, &rej,
		    sizeof(rej)) == 0) {
			rej.reason[sizeof(rej.reason) - 1] = '\0';
			imsg_free(&imsg);
			flood_gone(f, st, rej.reason);
			return;
		}
		imsg_free(&imsg);
	}
	if (n <= 0)
		flood_gone(f, st, NULL);
}

static int
flood(const char *path, int n, const char *how, int keep, uint32_t role)
{
	struct flooder		*fl;
	struct flood_stats	 st;
	struct pollfd		*pfd;
	uint64_t		 end = mono_ms() + (uint64_t)wait_ms;
	int			 mode, i, open = 0;

	mode = strcmp(how, "idle") == 0 ? 0 : strcmp(how, "half") == 0 ? 1 :
	    strcmp(how, "hello") == 0 ? 2 : -1;
	if (n < 1 || n > 4096 || mode == -1)
		errx(1, "flood: N from 1 to 4096, and idle, half or hello");
	memset(&st, 0, sizeof(st));
	fl = calloc((size_t)n, sizeof(*fl));
	pfd = calloc((size_t)n, sizeof(*pfd));
	if (fl == NULL || pfd == NULL)
		err(1, "calloc");
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < n; i++)
		flood_open(&fl[i], path, mode, role, &st);
	printf("connected %u\n", st.opened);
	while (mono_ms() < end) {
		for (i = 0; i < n; i++) {
			if (!fl[i].open && keep &&
			    mono_ms() - fl[i].since >= 50)
				flood_open(&fl[i], path, mode, role, &st);
			pfd[i].fd = fl[i].open ? fl[i].ib.fd : -1;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, 50) == -1 && errno != EINTR)
			err(1, "poll");
		for (i = 0; i < n; i++)
			if (fl[i].open && (pfd[i].revents & (POLLIN | POLLHUP |
			    POLLERR)))
				flood_read(&fl[i], &st);
	}
	for (i = 0; i < n; i++)
		open += fl[i].open;
	printf("flood opened=%u refused=%u closed=%u open=%d "
	    "close_ms=%llu-%llu\n", st.opened, st.refused, st.closed, open,
	    (unsigned long long)st.close_min,
	    (unsigned long long)st.close_max);
	for (i = 0; i < 8 && st.nreason[i] > 0; i++)
		printf("reason %u %s\n", st.nreason[i], st.reasons[i]);
	return 0;
}

int
main(int argc, char *argv[])
{
	uint32_t	 role = ROLE_MCPD, version = MCPD_PROTO_VERSION;
	uint32_t	 magic = MCPD_PROTO_MAGIC;
	uid_t		 uid = (uid_t)-1;
	gid_t		 gid = (gid_t)-1, supp = (gid_t)-1;
	const char	*action;
	struct imsg	 imsg;
	int		 ch, fd;

	log_init(LOG_DEST_STDERR, 0, "peer");
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "G:g:M:r:u:V:w:")) != -1) {
		switch (ch) {
		case 'G':
			supp = (gid_t)strtoul(optarg, NULL, 10);
			break;
		case 'g':
			gid = (gid_t)strtoul(optarg, NULL, 10);
			break;
		case 'M':
			magic = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			role = role_of(optarg);
			break;
		case 'u':
			uid = (uid_t)strtoul(optarg, NULL, 10);
			break;
		case 'V':
			version = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			wait_ms = atoi(optarg) * 1000;
			break;
		default:
			errx(1, "bad option");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2)
		errx(1, "usage: peer [options] connect|serve PATH [action]");
	if (strcmp(argv[0], "serve") == 0) {
		/* Bind with our rights, in a directory the new uid may not
		 * write to, as the daemons do. */
		if ((fd = sock_unix_bind(argv[1], 0666, (uid_t)-1,
		    (gid_t)-1)) == -1)
			exit(1);
		become(uid, gid, supp);
		return serve(fd, argv[1], role, version, magic);
	}
	become(uid, gid, supp);
	if (strcmp(argv[0], "flood") == 0) {
		if (argc < 4)
			errx(1, "usage: peer [options] flood PATH N "
			    "idle|half|hello [keep]");
		return flood(argv[1], atoi(argv[2]), argv[3], argc > 4 &&
		    strcmp(argv[4], "keep") == 0, role);
	}

	action = argc > 2 ? argv[2] : "hello";
	if ((fd = sock_unix_connect(argv[1])) == -1) {
		printf("connect failed: %s\n", strerror(errno));
		return errno == EACCES ? 3 : 1;
	}
	imsgbuf_init(&ib, fd, PROTO_MAX_FRAME, 0);
	if (strcmp(action, "early") == 0) {
		/* A frame before the hello is a protocol violation. */
		imsg_compose(&ib, IMSG_PING, 0, -1, NULL, 0);
		imsgbuf_flush(&ib);
		read_hello();
		next_frame(&imsg);
		printf("error still open\n");
		return 1;
	}
	send_hello(role, version, magic);
	read_hello();
	if (strcmp(action, "ping") == 0)
		do_ping(0);
	else if (strcmp(action, "ping-audit") == 0)
		do_ping(PING_VIA_AUDITD);
	else if (strcmp(action, "hello") != 0)
		errx(1, "unknown action %s", action);
	else {
		/* A peer that refuses us says so right after its hello. */
		wait_ms = 500;
		quiet_is_fine = 1;
		next_frame(&imsg);
		printf("error unexpected frame type %u\n", imsg.hdr.type);
		return 1;
	}
	return 0;
}
