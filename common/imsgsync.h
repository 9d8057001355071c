/*
 * A blocking imsg connection for the command-line tools (mcpctl, and the
 * tests' sbx): connect to a daemon's socket, exchange hellos, then send
 * requests and read their answers one frame at a time.  The daemons never
 * block and use proc.h instead.
 */
#ifndef MCPD_IMSGSYNC_H
#define MCPD_IMSGSYNC_H

#include <stddef.h>
#include <stdint.h>

#include "imsg.h"
#include "proto.h"

struct imsgsync {
	struct imsgbuf	 ib;
	char		 peer[32];	/* the software its hello named */
	char		 err[256];	/* why the last call failed */
};

/* Connect to path as role and check the hello: 0, or -1 with is->err. */
int	 imsgsync_connect(struct imsgsync *, const char *, enum proc_role);
/*
 * A channel already connected, as a socketpair's end (non-blocking), with
 * no hellos exchanged: the frames are the caller's.
 */
void	 imsgsync_open(struct imsgsync *, int, size_t, int);
/* Queue a frame and write everything: 0, or -1 with is->err. */
int	 imsgsync_send(struct imsgsync *, uint32_t, uint32_t, const void *,
	    size_t);
/* The same with an fd (or -1), which is the channel's from here on. */
int	 imsgsync_send_fd(struct imsgsync *, uint32_t, uint32_t, int,
	    const void *, size_t);
/*
 * The next frame, waiting at most timeout_ms (-1: for ever): 1, 0 when
 * the time ran out, or -1 with is->err (closed, broken frame).
 */
int	 imsgsync_next(struct imsgsync *, struct imsg *, int);
void	 imsgsync_close(struct imsgsync *);

#endif
