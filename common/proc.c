/*
 * Connections between the suite's processes: see proc.h.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "proc.h"
#include "sock.h"
#include "util.h"

#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		5000
#define ACCEPT_PAUSE_MS		1000
#define REFUSED_LOG_MS		10000	/* a line of refusals at most so often */

struct listener {
	struct event_base	*base;
	struct event		*ev_accept;
	struct event		*ev_pause;
	int			 fd;
	char			 name[108];
	struct proc_settings	 set;
	const struct conn_ops	*ops;
	void			*arg;
	TAILQ_HEAD(, conn)	 conns;
	uint64_t		 refused_at;	/* ms: the last one logged */
	unsigned int		 refused;	/* since, not logged */
};

struct client {
	struct event_base	*base;
	struct event		*ev_retry;
	char			 name[32];
	char			 path[108];
	enum proc_role		 expect;
	struct proc_settings	 set;
	const struct conn_ops	*ops;
	void			*arg;
	struct conn		*conn;
	unsigned int		 backoff;	/* ms before the next try */
	char			 lasterr[128];	/* logged once per streak */
};

static void	conn_dispatch(struct imsgev *, struct imsg *);
static void	conn_closed(struct imsgev *, const char *);
static void	client_schedule(struct client *);
static void	listener_refuse(struct listener *, struct conn *,
		    const char *, ...) __attribute__((__format__(printf, 3, 4)));

static void
tv_ms(struct timeval *tv, unsigned int ms)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

static struct conn *
conn_new(struct event_base *base, int fd, const struct proc_settings *set,
    const struct conn_ops *ops, void *arg)
{
	struct conn		*c;

	c = xcalloc(1, sizeof(*c));
	c->ops = ops;
	c->arg = arg;
	if (sock_peer_cred(fd, &c->cred) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		free(c);
		return NULL;
	}
	if (imsgev_init(&c->iev, base, fd, set->maxframe, set->flags,
	    conn_dispatch, conn_closed, c) == -1) {
		log_warnx("cannot set up a connection's events");
		close(fd);
		free(c);
		return NULL;
	}
	return c;
}

static void
conn_say_hello(struct conn *c, enum proc_role self)
{
	struct proto_hello	 hello;

	proto_hello_init(&hello, self);
	if (imsgev_compose(&c->iev, IMSG_HELLO, 0, -1, &hello,
	    sizeof(hello)) == -1)
		imsgev_shutdown(&c->iev, "cannot send hello");
}

static void
conn_reject(struct conn *c, uint32_t self, const char *reason)
{
	struct proto_reject	 rej;

	memset(&rej, 0, sizeof(rej));
	rej.version = MCPD_PROTO_VERSION;
	rej.role = self;
	str_copy(rej.reason, reason, sizeof(rej.reason));
	imsgev_compose(&c->iev, IMSG_HELLO_REJECT, 0, -1, &rej, sizeof(rej));
	log_warnx("refused %s: %s", c->name, reason);
	/* Already logged: close quietly. */
	imsgev_shutdown(&c->iev, "%s", "");
}

static void
conn_got_reject(struct conn *c, struct imsg *imsg)
{
	struct proto_reject	 rej;

	if (proto_payload(imsg->data, imsg->datalen, &rej, sizeof(rej)) == -1 ||
	    memchr(rej.reason, '\0', sizeof(rej.reason)) == NULL) {
		conn_close(c, "sent a malformed refusal");
		return;
	}
	if (rej.version != MCPD_PROTO_VERSION)
		conn_close(c, "refused us: it speaks protocol version %u, "
		    "we speak %u: %s", rej.version, MCPD_PROTO_VERSION,
		    rej.reason);
	else
		conn_close(c, "refused us: %s", rej.reason);
}

static void
conn_hello(struct conn *c, struct imsg *imsg)
{
	struct proto_hello	 hello;
	uint32_t		 self;
	char			 why[128];
	const char		*reason;

	self = c->listener != NULL ? c->listener->set.self :
	    c->client->set.self;
	if (imsg->hdr.type == IMSG_HELLO_REJECT) {
		conn_got_reject(c, imsg);
		return;
	}
	if (imsg->hdr.type != IMSG_HELLO) {
		conn_close(c, "sent message type %u before hello",
		    imsg->hdr.type);
		return;
	}
	if ((reason = proto_hello_check(imsg->data, imsg->datalen, why,
	    sizeof(why))) != NULL) {
		if (c->listener != NULL)
			conn_reject(c, self, reason);
		else
			conn_close(c, "%s: closing", reason);
		return;
	}
	memcpy(&hello, imsg->data, sizeof(hello));
	if (c->client != NULL && hello.role != c->client->expect) {
		conn_close(c, "%s is served by %s, not %s", c->client->path,
		    proto_role_name(hello.role),
		    proto_role_name(c->client->expect));
		return;
	}
	if ((reason = c->ops->allow(&c->cred, hello.role, why, sizeof(why),
	    c->arg)) != NULL) {
		if (c->listener != NULL)
			conn_reject(c, self, reason);
		else
			conn_close(c, "%s: closing", reason);
		return;
	}
	c->role = hello.role;
	str_copy(c->software, hello.software, sizeof(c->software));
	if (c->ev_hello != NULL)
		evtimer_del(c->ev_hello);
	if (c->listener != NULL)
		snprintf(c->name, sizeof(c->name), "%s[%d]",
		    proto_role_name(c->role), (int)c->cred.pid);
	c->up = 1;
	if (c->client != NULL) {
		c->client->backoff = BACKOFF_MIN_MS;
		c->client->lasterr[0] = '\0';
		log_info("connected to %s (%s, pid %d)", c->name, c->software,
		    (int)c->cred.pid);
	} else
		log_info("%s connected (%s, uid %u)", c->name, c->software,
		    (unsigned)c->cred.uid);
	c->ops->up(c);
}

static void
conn_dispatch(struct imsgev *iev, struct imsg *imsg)
{
	struct conn	*c = iev->arg;

	if (!c->up) {
		conn_hello(c, imsg);
		return;
	}
	/* The listener's hello comes first; its refusal of ours may follow. */
	if (imsg->hdr.type == IMSG_HELLO_REJECT && c->client != NULL) {
		conn_got_reject(c, imsg);
		return;
	}
	if (imsg->hdr.type == IMSG_HELLO ||
	    imsg->hdr.type == IMSG_HELLO_REJECT) {
		conn_close(c, "sent a second hello");
		return;
	}
	c->ops->dispatch(c, imsg);
}

static void
conn_free(struct conn *c)
{
	if (c->ev_hello != NULL)
		event_free(c->ev_hello);
	imsgev_clear(&c->iev);
	free(c);
}

static void
conn_closed(struct imsgev *iev, const char *why)
{
	struct conn	*c = iev->arg;
	struct client	*cl = c->client;
	struct listener	*l = c->listener;

	if (*why == '\0')
		;	/* already logged */
	else if (strcmp(why, "connection closed") == 0)
		log_info("%s: connection closed", c->name);
	else
		log_warnx("%s: %s", c->name, why);
	if (c->up)
		c->ops->down(c, why);
	if (l != NULL)
		TAILQ_REMOVE(&l->conns, c, entry);
	conn_free(c);
	if (cl != NULL) {
		cl->conn = NULL;
		client_schedule(cl);
	}
}

void
conn_close(struct conn *c, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	imsgev_vshutdown(&c->iev, fmt, ap);
	va_end(ap);
}

int
conn_compose(struct conn *c, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	return imsgev_compose(&c->iev, type, peerid, fd, data, len);
}

int
conn_composev(struct conn *c, uint32_t type, uint32_t peerid, int fd,
    const struct iovec *iov, int iovcnt)
{
	return imsgev_composev(&c->iev, type, peerid, fd, iov, iovcnt);
}

int
conn_pong(struct conn *c, struct imsg *imsg, enum proc_role self,
    uint32_t status)
{
	struct proto_ping	 ping;

	if (proto_payload(imsg->data, imsg->datalen, &ping,
	    sizeof(ping)) == -1) {
		conn_close(c, "malformed ping (%zu bytes)", imsg->datalen);
		return -1;
	}
	ping.path |= 1U << self;
	ping.status = status;
	return conn_compose(c, IMSG_PONG, imsg->hdr.peerid, -1, &ping,
	    sizeof(ping));
}

/* Listeners. */

/* A peer silent past its deadline holds a slot for nothing. */
static void
conn_hello_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	if (!c->up)
		conn_close(c, "no hello within %u ms: closing",
		    c->listener->set.hello_ms);
}

/*
 * Refuse c, with a reason the peer reads; the log says so once in a
 * while, not once for each of a flood.
 */
static void
listener_refuse(struct listener *l, struct conn *c, const char *fmt, ...)
{
	struct proto_reject	 rej;
	va_list			 ap;
	uint64_t		 now = mono_ms();

	c->refused = 1;
	memset(&rej, 0, sizeof(rej));
	rej.version = MCPD_PROTO_VERSION;
	rej.role = l->set.self;
	va_start(ap, fmt);
	vsnprintf(rej.reason, sizeof(rej.reason), fmt, ap);
	va_end(ap);
	imsgev_compose(&c->iev, IMSG_HELLO_REJECT, 0, -1, &rej, sizeof(rej));
	if (l->refused_at == 0 || now - l->refused_at >= REFUSED_LOG_MS) {
		if (l->refused > 0)
			log_warnx("%s: refused %s: %s (and %u more since the "
			    "last such line)", l->name, c->name, rej.reason,
			    l->refused);
		else
			log_warnx("%s: refused %s: %s", l->name, c->name,
			    rej.reason);
		l->refused_at = now;
		l->refused = 0;
	} else
		l->refused++;
	imsgev_shutdown(&c->iev, "%s", "");
}

/* Refuse a new connection that would take more than its slots. */
static int
listener_full(struct listener *l, struct conn *c)
{
	struct conn	*o;
	unsigned int	 ordinary = 0, reserved = 0, mine = 0;

	TAILQ_FOREACH(o, &l->conns, entry) {
		if (o == c || o->refused)
			continue;
		if (o->reserved)
			reserved++;
		else {
			ordinary++;
			if (o->cred.uid == c->cred.uid)
				mine++;
		}
	}
	if (c->reserved) {
		if (reserved < l->set.maxreserved)
			return 0;
		listener_refuse(l, c, "all %u connections of the suite's own "
		    "are taken", l->set.maxreserved);
	} else if (mine >= l->set.maxperuid)
		listener_refuse(l, c, "uid %u has %u connections here, its "
		    "most", (unsigned)c->cred.uid, mine);
	else if (ordinary >= l->set.maxconns)
		listener_refuse(l, c, "all %u connections are taken",
		    l->set.maxconns);
	else
		return 0;
	return 1;
}

static void
listener_accept(evutil_socket_t fd, short events, void *arg)
{
	struct listener	*l = arg;
	struct conn	*c;
	struct timeval	 tv;
	char		 why[128];
	const char	*reason;
	int		 s;

	if ((s = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE) {
			/* Out of fds: stop accepting for a while. */
			log_warn("%s: accept", l->name);
			event_del(l->ev_accept);
			tv_ms(&tv, ACCEPT_PAUSE_MS);
			evtimer_add(l->ev_pause, &tv);
		} else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: accept", l->name);
		return;
	}
	if ((c = conn_new(l->base, s, &l->set, l->ops, l->arg)) == NULL)
		return;
	/* Listed even when refused: it goes with the listener if need be. */
	c->listener = l;
	TAILQ_INSERT_TAIL(&l->conns, c, entry);
	snprintf(c->name, sizeof(c->name), "uid %u pid %d",
	    (unsigned)c->cred.uid, (int)c->cred.pid);
	if ((reason = l->ops->allow(&c->cred, ROLE_NONE, why, sizeof(why),
	    l->arg)) != NULL) {
		c->refused = 1;
		conn_reject(c, l->set.self, reason);
		return;
	}
	c->reserved = l->ops->reserved != NULL &&
	    l->ops->reserved(&c->cred, l->arg);
	if (listener_full(l, c))
		return;
	/*
	 * Only now: a peer that has our hello is in, and one refused has
	 * the refusal alone, so it never takes itself for connected.
	 */
	conn_say_hello(c, l->set.self);
	tv_ms(&tv, l->set.hello_ms);
	if ((c->ev_hello = evtimer_new(l->base, conn_hello_timeout, c)) ==
	    NULL || evtimer_add(c->ev_hello, &tv) == -1)
		fatalx("%s: cannot set up a hello deadline", l->name);
}

static void
listener_resume(evutil_socket_t fd, short events, void *arg)
{
	struct listener	*l = arg;

	event_add(l->ev_accept, NULL);
}

struct listener *
listener_new(struct event_base *base, int fd, const char *name,
    const struct proc_settings *set, const struct conn_ops *ops, void *arg)
{
	struct listener	*l;

	l = xcalloc(1, sizeof(*l));
	l->base = base;
	l->fd = fd;
	l->set = *set;
	l->ops = ops;
	l->arg = arg;
	if (l->set.hello_ms == 0)
		l->set.hello_ms = PROC_HELLO_MS;
	str_copy(l->name, name, sizeof(l->name));
	TAILQ_INIT(&l->conns);
	if (fd_set_nonblock(fd) == -1)
		fatal("%s: fcntl", name);
	l->ev_accept = event_new(base, fd, EV_READ | EV_PERSIST,
	    listener_accept, l);
	l->ev_pause = evtimer_new(base, listener_resume, l);
	if (l->ev_accept == NULL || l->ev_pause == NULL ||
	    event_add(l->ev_accept, NULL) == -1)
		fatalx("%s: cannot set up accept events", name);
	return l;
}

void
listener_free(struct listener *l)
{
	struct conn	*c;

	if (l == NULL)
		return;
	while ((c = TAILQ_FIRST(&l->conns)) != NULL) {
		TAILQ_REMOVE(&l->conns, c, entry);
		conn_free(c);
	}
	event_free(l->ev_accept);
	event_free(l->ev_pause);
	close(l->fd);
	free(l);
}

struct conn *
listener_first(struct listener *l)
{
	return TAILQ_FIRST(&l->conns);
}

struct conn *
listener_next(struct conn *c)
{
	return TAILQ_NEXT(c, entry);
}

/* Clients. */

static void
client_connect(evutil_socket_t unused, short events, void *arg)
{
	struct client	*cl = arg;
	int		 fd;
	char		 err[128];

	if ((fd = sock_unix_connect(cl->path)) == -1) {
		snprintf(err, sizeof(err), "%s", strerror(errno));
		if (strcmp(err, cl->lasterr) != 0) {
			log_warnx("cannot connect to %s at %s: %s; retrying",
			    cl->name, cl->path, err);
			str_copy(cl->lasterr, err, sizeof(cl->lasterr));
		} else
			log_debug("cannot connect to %s: %s", cl->name, err);
		client_schedule(cl);
		return;
	}
	if ((cl->conn = conn_new(cl->base, fd, &cl->set, cl->ops,
	    cl->arg)) == NULL) {
		client_schedule(cl);
		return;
	}
	cl->conn->client = cl;
	str_copy(cl->conn->name, cl->name, sizeof(cl->conn->name));
	conn_say_hello(cl->conn, cl->set.self);
}

static void
client_schedule(struct client *cl)
{
	struct timeval	 tv;

	tv_ms(&tv, cl->backoff);
	evtimer_add(cl->ev_retry, &tv);
	cl->backoff = cl->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    cl->backoff * 2;
}

struct client *
client_new(struct event_base *base, const char *name, const char *path,
    enum proc_role expect, const struct proc_settings *set,
    const struct conn_ops *ops, void *arg)
{
	struct client	*cl;
	struct timeval	 tv = { 0, 0 };

	cl = xcalloc(1, sizeof(*cl));
	cl->base = base;
	str_copy(cl->name, name, sizeof(cl->name));
	if (str_copy(cl->path, path, sizeof(cl->path)) == -1)
		fatalx("%s: socket path too long", path);
	cl->expect = expect;
	cl->set = *set;
	cl->ops = ops;
	cl->arg = arg;
	cl->backoff = BACKOFF_MIN_MS;
	if ((cl->ev_retry = evtimer_new(base, client_connect, cl)) == NULL)
		fatalx("cannot set up a reconnect timer");
	evtimer_add(cl->ev_retry, &tv);
	return cl;
}

void
client_free(struct client *cl)
{
	if (cl == NULL)
		return;
	if (cl->conn != NULL)
		conn_free(cl->conn);
	event_free(cl->ev_retry);
	free(cl);
}

struct conn *
client_conn(struct client *cl)
{
	if (cl->conn == NULL || !cl->conn->up)
		return NULL;
	return cl->conn;
}

const char *
client_name(struct client *cl)
{
	return cl->name;
}
