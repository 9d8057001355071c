/*
 * Requests to sandboxd: see sbxcall.h.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc.h"
#include "proto.h"
#include "sbxcall.h"
#include "util.h"

struct sbx_call {
	TAILQ_ENTRY(sbx_call)	 entry;
	uint32_t		 id;
	sbx_frame_fn		 fn;		/* NULL once detached */
	void			*arg;
};

static TAILQ_HEAD(, sbx_call)	 calls = TAILQ_HEAD_INITIALIZER(calls);
static struct conn		*sbxconn;
static uint32_t			 next_id;
static size_t			 ncalls;

void
sbx_calls_init(void)
{
	TAILQ_INIT(&calls);
}

void
sbx_calls_up(struct conn *c)
{
	sbxconn = c;
}

int
sbx_frame_final(uint32_t type)
{
	return type == IMSG_SBX_RESULT || type == IMSG_SBX_DONE ||
	    type == IMSG_SBX_CREATED || type == IMSG_SBX_ERROR;
}

static void
call_free(struct sbx_call *call)
{
	TAILQ_REMOVE(&calls, call, entry);
	ncalls--;
	free(call);
}

/* Every call in flight ends with an error frame of our own making. */
void
sbx_calls_down(const char *why)
{
	struct sbx_call		*call;
	struct sbx_error	 e;
	struct imsg		 imsg;

	sbxconn = NULL;
	while ((call = TAILQ_FIRST(&calls)) != NULL) {
		memset(&e, 0, sizeof(e));
		e.code = SBX_E_INTERNAL;
		snprintf(e.message, sizeof(e.message),
		    "the sandbox service went away (%s); try again", why);
		memset(&imsg, 0, sizeof(imsg));
		imsg.hdr.type = IMSG_SBX_ERROR;
		imsg.hdr.peerid = call->id;
		imsg.fd = -1;
		imsg.data = &e;
		imsg.datalen = sizeof(e);
		if (call->fn != NULL)
			call->fn(call->arg, &imsg);
		call_free(call);
	}
}

struct sbx_call *
sbx_call(uint32_t type, const struct iovec *iov, int iovcnt, sbx_frame_fn fn,
    void *arg, const char **why)
{
	struct sbx_call	*call;

	if (sbxconn == NULL) {
		*why = "the sandbox service is not reachable; try again "
		    "shortly";
		return NULL;
	}
	call = xcalloc(1, sizeof(*call));
	do {
		call->id = ++next_id;
	} while (call->id == 0);
	call->fn = fn;
	call->arg = arg;
	if (conn_composev(sbxconn, type, call->id, -1, iov, iovcnt) == -1) {
		free(call);
		*why = "the request is too large for the sandbox service";
		return NULL;
	}
	TAILQ_INSERT_TAIL(&calls, call, entry);
	ncalls++;
	return call;
}

void
sbx_call_cancel(struct sbx_call *call)
{
	if (sbxconn != NULL)
		conn_compose(sbxconn, IMSG_SBX_CANCEL, call->id, -1, NULL, 0);
}

void
sbx_call_detach(struct sbx_call *call)
{
	call->fn = NULL;
	call->arg = NULL;
	sbx_call_cancel(call);
}

void
sbx_calls_dispatch(struct imsg *imsg)
{
	struct sbx_call	*call;

	TAILQ_FOREACH(call, &calls, entry)
		if (call->id == imsg->hdr.peerid)
			break;
	if (call == NULL) {
		log_debug("sandboxd answered call %u, which is gone",
		    imsg->hdr.peerid);
		return;
	}
	if (call->fn != NULL)
		call->fn(call->arg, imsg);
	if (sbx_frame_final(imsg->hdr.type))
		call_free(call);
}

size_t
sbx_calls_pending(void)
{
	return ncalls;
}
