/*
 * Connections between the suite's processes.
 *
 * A listener accepts connections on a unix socket; a client connects to one
 * and reconnects with backoff when it goes away.  Either way the result is a
 * struct conn, on which both sides first send IMSG_HELLO.  The accepting
 * side checks the peer's SO_PEERCRED before reading anything, and again
 * against the role the peer claims; the connecting side checks that the
 * socket is served by the uid and role it expects.  Only then is the
 * connection "up" and its frames handed to the owner's dispatch function.
 */
#ifndef MCPD_PROC_H
#define MCPD_PROC_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "imsgev.h"
#include "proto.h"

struct conn;
struct listener;
struct client;

struct conn_ops {
	/*
	 * May this peer speak as this role?  role is ROLE_NONE at accept,
	 * before the hello is read: then only the uid is at stake.  NULL to
	 * allow, else the reason, written into why.
	 */
	const char	*(*allow)(const struct ucred *, uint32_t, char *,
			    size_t, void *);
	void		 (*up)(struct conn *);
	void		 (*dispatch)(struct conn *, struct imsg *);
	void		 (*down)(struct conn *, const char *);
	/*
	 * Listeners: is this uid one of the suite's own (a daemon, the
	 * administrator)?  Its connections take the reserved slots, which
	 * no other uid can fill.  NULL: none is.
	 */
	int		 (*reserved)(const struct ucred *, void *);
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	struct imsgev		 iev;
	struct listener		*listener;	/* accepted here, or NULL */
	struct client		*client;	/* connected by, or NULL */
	const struct conn_ops	*ops;
	void			*arg;		/* the ops' argument */
	struct ucred		 cred;		/* SO_PEERCRED */
	uint32_t		 role;		/* the peer's, after hello */
	char			 software[32];	/* the peer's, after hello */
	char			 name[64];	/* for log lines */
	int			 up;
	int			 reserved;	/* in a reserved slot */
	int			 refused;	/* on its way out, in no slot */
	struct event		*ev_hello;	/* its hello's deadline */
	void			*data;		/* the owner's */
};

/*
 * A listener's slots: maxconns for every uid but the reserved ones, at
 * most maxperuid of them any one uid's, and maxreserved more for the
 * reserved uids alone.  A connection that has not said hello within
 * hello_ms is closed.
 */
#define PROC_HELLO_MS		5000

struct proc_settings {
	enum proc_role		 self;
	size_t			 maxframe;
	int			 flags;		/* IMSGBUF_FDPASS */
	unsigned int		 maxconns;	/* listeners only, from here */
	unsigned int		 maxperuid;
	unsigned int		 maxreserved;
	unsigned int		 hello_ms;	/* 0: PROC_HELLO_MS */
};

struct listener	*listener_new(struct event_base *, int, const char *,
		    const struct proc_settings *, const struct conn_ops *,
		    void *);
void		 listener_free(struct listener *);
/* Every connection currently open on the listener. */
struct conn	*listener_first(struct listener *);
struct conn	*listener_next(struct conn *);

/* Connect to path, expecting a peer of the given role; retry forever. */
struct client	*client_new(struct event_base *, const char *, const char *,
		    enum proc_role, const struct proc_settings *,
		    const struct conn_ops *, void *);
void		 client_free(struct client *);
/* The connection when up, else NULL. */
struct conn	*client_conn(struct client *);
const char	*client_name(struct client *);

int		 conn_compose(struct conn *, uint32_t, uint32_t, int,
		    const void *, size_t);
int		 conn_composev(struct conn *, uint32_t, uint32_t, int,
		    const struct iovec *, int);
/*
 * Answer a ping with a pong carrying our role in its path.  Returns 0, or
 * -1 after closing the connection over a malformed ping.
 */
int		 conn_pong(struct conn *, struct imsg *, enum proc_role,
		    uint32_t);
/* Drop the connection after logging why (a client then reconnects). */
void		 conn_close(struct conn *, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));

#endif
