/*
 * imsgev: an imsgbuf driven by libevent.  The read event is always armed;
 * the write event only while frames are queued.  Whatever ends the
 * connection (EOF, a socket error, a malformed frame, imsgev_shutdown())
 * is reported once through the close callback, from the read callback's
 * context, after which the owner calls imsgev_clear() and may free it.
 * An owner never clears an imsgev from inside its own callbacks: it calls
 * imsgev_shutdown() and clears it when the close callback comes.
 */
#ifndef MCPD_IMSGEV_H
#define MCPD_IMSGEV_H

#include <stdarg.h>

#include <event2/event.h>

#include "imsg.h"

struct imsgev;
typedef void	(*imsgev_dispatch_fn)(struct imsgev *, struct imsg *);
typedef void	(*imsgev_close_fn)(struct imsgev *, const char *);

struct imsgev {
	struct imsgbuf		 ibuf;
	struct event		*ev_read;
	struct event		*ev_write;
	imsgev_dispatch_fn	 dispatch;
	imsgev_close_fn		 closed;
	void			*arg;
	char			 why[128];	/* set once the end is known */
	int			 dying;
	int			 in_callback;	/* clearing now would be a bug */
};

int	 imsgev_init(struct imsgev *, struct event_base *, int, size_t, int,
	    imsgev_dispatch_fn, imsgev_close_fn, void *);
void	 imsgev_clear(struct imsgev *);
int	 imsgev_compose(struct imsgev *, uint32_t, uint32_t, int,
	    const void *, size_t);
int	 imsgev_composev(struct imsgev *, uint32_t, uint32_t, int,
	    const struct iovec *, int);
/* End the connection after this dispatch; queued frames get one try. */
void	 imsgev_shutdown(struct imsgev *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 imsgev_vshutdown(struct imsgev *, const char *, va_list)
	    __attribute__((__format__(printf, 2, 0)));

#endif
