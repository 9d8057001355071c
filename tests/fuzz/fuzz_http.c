/*
 * Fuzz target: mcpd's HTTP front, the strict HTTP/1.1 server (mcpd/http.c)
 * and Streamable HTTP and SSE on it (httpd.c), from a client's raw bytes
 * on a real connection: request lines, headers, Content-Length, chunked
 * bodies, pipelining, keep-alive, the Host, Origin and credential checks,
 * sessions, event streams, and behind them the MCP core as in the jsonrpc
 * target, with the same harness sandboxd and auditd (mcpdfuzz.c).
 *
 * Input: one byte of settings, then the bytes the client sends.  Bit 0:
 * the listener (0: one of tenant alice's, open; 1: one that asks for a
 * bearer token, or takes the peer's uid); bits 1-3: how sandboxd answers
 * (enum sbx_mode); bits 4-6: how the bytes are cut into writes (all at
 * once, or pieces of 1, 2, 5, 16, 100, 512 or 4096 bytes, each read
 * before the next is sent).  "@SID" in the bytes stands for the id of
 * the session made last, once what comes before it has been answered;
 * "@CONN" opens another connection, to the same listener, for the bytes
 * after it (the ones before stay open: an event stream, say).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz.h"
#include "log.h"
#include "policy.h"
#include "util.h"
#include "../../mcpd/mcp.h"
#include "../../mcpd/mcpd.h"
#include "mcpdfuzz.h"

#define NSOCKS		2
#define NCONNS		4
#define SID_MARK	"@SID"
#define CONN_MARK	"@CONN"

static const size_t	 pieces[8] = { 0, 1, 2, 5, 16, 100, 512, 4096 };
static const struct listen_addr *las[NSOCKS];
static unsigned int	 nlisten;
static char		 last_sid[SESS_ID_LEN + 1];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct listen_addr	*la;
	int				 i = 0;

	mcpdfuzz_init();
	/* The configuration's listeners, in order: open, then by token. */
	TAILQ_FOREACH(la, &mcpd_conf->listens, entry)
		if (i < NSOCKS)
			las[i++] = la;
	if (i != NSOCKS)
		fatalx("the target's configuration lacks a listener");
	return 0;
}

/* The abstract address of listener n: no file is made. */
static socklen_t
listen_addr(struct sockaddr_un *sun, int n)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
	    "mcpd-fuzz-http.%d.%u.%d", (int)getpid(), nlisten, n));
}

/* A listening socket in the abstract namespace. */
static int
listen_on(struct httpd_socket *hs, int n)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = listen_addr(&sun, n);
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sun, len) == -1 ||
	    listen(fd, 8) == -1)
		fatal("listen");
	memset(hs, 0, sizeof(*hs));
	hs->fd = fd;
	hs->is_unix = 1;
	hs->la = las[n];
	snprintf(hs->name, sizeof(hs->name), "fuzz-%d", n);
	return fd;
}

static int
connect_to(int n)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = listen_addr(&sun, n);
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || connect(fd, (struct sockaddr *)&sun, len) == -1)
		fatal("connect");
	return fd;
}

static void
newest_session(struct mcp_session *sess, void *arg)
{
	if (sess->id[0] != '\0')
		memcpy(last_sid, sess->id, sizeof(last_sid));
}

/* The loop runs; what the server says is read and dropped. */
static void
pump(int fd)
{
	char	 buf[65536];
	int	 i;

	for (i = 0; i < 4; i++) {
		mcpdfuzz_pump();
		while (read(fd, buf, sizeof(buf)) > 0)
			;
	}
	session_foreach(newest_session, NULL);
}

/* Send it all, in pieces of size piece (0: at once). */
static void
send_all(int fd, const uint8_t *p, size_t len, size_t piece)
{
	ssize_t	 n;
	size_t	 want;
	int	 tries = 0;

	while (len > 0 && tries < 64) {
		want = piece == 0 || piece > len ? len : piece;
		if ((n = send(fd, p, want, MSG_NOSIGNAL)) == -1) {
			if (errno != EAGAIN)
				return;		/* the server hung up */
			tries++;
			n = 0;
		}
		p += n;
		len -= (size_t)n;
		pump(fd);
	}
}

/* The next "@SID" or "@CONN" in p, or NULL. */
static const uint8_t *
next_mark(const uint8_t *p, size_t len, int *conn)
{
	const uint8_t	*sid, *c;

	sid = memmem(p, len, SID_MARK, strlen(SID_MARK));
	c = memmem(p, len, CONN_MARK, strlen(CONN_MARK));
	*conn = c != NULL && (sid == NULL || c < sid);
	return *conn ? c : sid;
}

/* The client's bytes, with its marks acted on. */
static void
client(int sock, const uint8_t *p, size_t len, size_t piece, int fds[],
    int *nfds)
{
	const uint8_t	*end = p + len, *mark;
	int		 conn;

	fds[(*nfds)++] = connect_to(sock);
	while ((mark = next_mark(p, (size_t)(end - p), &conn)) != NULL) {
		send_all(fds[*nfds - 1], p, (size_t)(mark - p), piece);
		if (conn) {
			if (*nfds < NCONNS)
				fds[(*nfds)++] = connect_to(sock);
			p = mark + strlen(CONN_MARK);
		} else {
			send_all(fds[*nfds - 1], (const uint8_t *)last_sid,
			    strlen(last_sid), piece);
			p = mark + strlen(SID_MARK);
		}
	}
	send_all(fds[*nfds - 1], p, (size_t)(end - p), piece);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct httpd_socket	 socks[NSOCKS];
	struct fuzz_in		 in = { data, size };
	uint8_t			 set;
	int			 i, j, fds[NCONNS], nfds = 0;

	set = fuzz_u8(&in);
	mcpdfuzz_begin();
	mcpdfuzz_mode((enum sbx_mode)((set >> 1) & 7));
	nlisten++;
	for (i = 0; i < NSOCKS; i++)
		listen_on(&socks[i], i);
	httpd_start(mcpdfuzz_base, mcpd_conf, socks, NSOCKS);
	last_sid[0] = '\0';
	client(set & 1, in.p, in.left, pieces[(set >> 4) & 7], fds, &nfds);
	/* The clients are done: the server sees the end, then the close. */
	for (j = 0; j < nfds; j++) {
		pump(fds[j]);
		shutdown(fds[j], SHUT_WR);
		for (i = 0; i < 4; i++)
			pump(fds[j]);
	}
	for (j = 0; j < nfds; j++)
		close(fds[j]);
	for (i = 0; i < 16 && httpd_conns() > 0; i++)
		pump(-1);
	httpd_stop();
	mcpdfuzz_end();
	return 0;
}
