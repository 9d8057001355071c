/*
 * mcpd's requests to sandboxd.  A call sends one IMSG_SBX_* request; every
 * frame answering it (output, data, entries, info) goes to its callback,
 * the last being one of RESULT, DONE, CREATED or ERROR, after which the
 * call is gone.
 */
#ifndef MCPD_SBXCALL_H
#define MCPD_SBXCALL_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#include "imsg.h"

struct conn;
struct event_base;
struct sbx_call;

typedef void	(*sbx_frame_fn)(void *, struct imsg *);

void		 sbx_calls_init(struct event_base *);
/* Every call ends, with an error. */
void		 sbx_calls_shutdown(void);
/* The connection to sandboxd came up or went away. */
void		 sbx_calls_up(struct conn *);
void		 sbx_calls_down(const char *);
/*
 * Calls wait for auditd too, as for sandboxd, and fail with SBX_E_AUDIT
 * when it does not come: for mcpd --stdio, whose tool calls must not run
 * unrecorded where audit is required.  sbx_calls_audit() says whether
 * mcpd is connected to auditd.
 */
void		 sbx_calls_audit_gate(void);
void		 sbx_calls_audit(int);
/*
 * NULL (with why) only when the request is too large.  While sandboxd is
 * away the call waits for it, failing after a while like any call.
 */
struct sbx_call	*sbx_call(uint32_t, const struct iovec *, int, sbx_frame_fn,
		    void *, const char **);
/* Ask sandboxd to stop it; frames still come, ending as usual. */
void		 sbx_call_cancel(struct sbx_call *);
/* The caller is gone: drop its frames, and cancel what is running. */
void		 sbx_call_detach(struct sbx_call *);
void		 sbx_calls_dispatch(struct imsg *);
size_t		 sbx_calls_pending(void);
/* Is sandboxd connected: does a call leave now, rather than wait? */
int		 sbx_calls_connected(void);
/* Is this frame the last of its call? */
int		 sbx_frame_final(uint32_t);

#endif
