/*
 * Legacy-era sessions: the stdio process, each Streamable HTTP session and
 * each 2024-11-05 SSE connection.  Ids are 128 random bits in hex, looked
 * up in constant time; a session belongs to the credential that created
 * it.  Idle HTTP sessions expire, and each credential may keep only so
 * many: the least recently used idle one makes room for a new one.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "util.h"

#define SESS_IDLE_MS		(30ULL * 60 * 1000)
#define SESS_SWEEP_S		30
#define SESS_MAX		4096
#define SESS_MAX_PER_PEER	64

static TAILQ_HEAD(, mcp_session) sessions =
			    TAILQ_HEAD_INITIALIZER(sessions);
static unsigned int	 nsessions;
static struct event	*ev_sweep;

static void
session_free(struct mcp_session *sess)
{
	json_decref(sess->caps);
	json_decref(sess->client);
	json_decref(sess->subs);
	free(sess);
}

static int
session_idle(const struct mcp_session *sess)
{
	return sess->refs == 0 && sess->transport != MCP_T_STDIO;
}

/* Make room: the least recently used idle session (of this peer). */
static int
session_evict(const struct mcp_peer *peer)
{
	struct mcp_session	*sess, *old = NULL;

	TAILQ_FOREACH(sess, &sessions, entry) {
		if (!session_idle(sess))
			continue;
		if (peer != NULL && !mcp_peer_same(&sess->peer, peer))
			continue;
		if (old == NULL || sess->last_active < old->last_active)
			old = sess;
	}
	if (old == NULL)
		return -1;
	session_end(old, "evicted");
	return 0;
}

struct mcp_session *
session_new(enum mcp_transport transport, const struct mcp_peer *peer)
{
	struct mcp_session	*sess;
	unsigned char		 rnd[SESS_ID_LEN / 2];
	char			 hex[SESS_ID_LEN + 1], full[SESS_ID_MAX + 1];
	unsigned int		 mine = 0;

	TAILQ_FOREACH(sess, &sessions, entry)
		if (mcp_peer_same(&sess->peer, peer))
			mine++;
	if (mine >= SESS_MAX_PER_PEER && session_evict(peer) == -1)
		return NULL;
	if (nsessions >= SESS_MAX && session_evict(NULL) == -1)
		return NULL;
	sess = xcalloc(1, sizeof(*sess));
	if (transport != MCP_T_STDIO) {
		randombytes_buf(rnd, sizeof(rnd));
		sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
		str_copy(sess->id, host_id(hex, full, sizeof(full)),
		    sizeof(sess->id));
	}
	sess->transport = transport;
	sess->state = SESS_NEW;
	sess->version = MCP_LEGACY_LATEST;
	sess->caps = json_object();
	sess->level = -1;
	sess->peer = *peer;
	sess->started = mono_ms();
	sess->subs = json_object();
	sess->next_ask = 1;
	TAILQ_INIT(&sess->asks);
	sess->last_active = mono_ms();
	TAILQ_INSERT_TAIL(&sessions, sess, entry);
	nsessions++;
	return sess;
}

struct mcp_session *
session_find(const char *id)
{
	struct mcp_session	*sess, *found = NULL;
	size_t			 n = strlen(id);

	if (n > SESS_ID_MAX)
		return NULL;
	/* Every id is compared in full, so timing says nothing. */
	TAILQ_FOREACH(sess, &sessions, entry)
		if (sess->id[0] != '\0' && strlen(sess->id) == n &&
		    sodium_memcmp(sess->id, id, n) == 0)
			found = sess;
	return found;
}

/* One line as it opens (initialize answered) and one as it ends. */
void
session_log(const struct mcp_session *sess, const char *event,
    const char *extra)
{
	log_info("%s tenant=%s cred=%s session=%s transport=%s%s", event,
	    sess->peer.tenant != NULL ? sess->peer.tenant->name : "-",
	    sess->peer.cred[0] != '\0' ? sess->peer.cred : "-",
	    sess->id[0] != '\0' ? sess->id : "stdio",
	    mcp_transport_name(sess->transport), extra);
}

void
session_end(struct mcp_session *sess, const char *reason)
{
	char	 extra[96];

	if (sess->state == SESS_ENDED)
		return;
	/* A session no initialize was answered for was never opened. */
	if (sess->state != SESS_NEW) {
		(void)snprintf(extra, sizeof(extra), " reason=%s ms=%llu",
		    reason, (unsigned long long)(mono_ms() - sess->started));
		session_log(sess, "session_close", extra);
	}
	sess->state = SESS_ENDED;
	TAILQ_REMOVE(&sessions, sess, entry);
	nsessions--;
	session_ref(sess);
	mcp_session_cancel(sess);
	if (sess->end != NULL)
		sess->end(sess);
	sess->chan = NULL;
	session_unref(sess);
}

void
session_ref(struct mcp_session *sess)
{
	sess->refs++;
}

void
session_unref(struct mcp_session *sess)
{
	if (--sess->refs == 0) {
		if (sess->state == SESS_ENDED)
			session_free(sess);
		else
			sess->last_active = mono_ms();
	}
}

void
session_touch(struct mcp_session *sess)
{
	sess->last_active = mono_ms();
}

void
session_send(struct mcp_session *sess, json_t *msg)
{
	if (sess->chan != NULL && sess->state != SESS_ENDED)
		sess->chan->ops->send(sess->chan, NULL, msg, 0, 0);
}

unsigned int
session_count(void)
{
	return nsessions;
}

void
session_foreach(void (*fn)(struct mcp_session *, void *), void *arg)
{
	struct mcp_session	*sess, *tsess;

	TAILQ_FOREACH_SAFE(sess, &sessions, entry, tsess)
		fn(sess, arg);
}

static void
session_sweep(evutil_socket_t fd, short events, void *arg)
{
	struct mcp_session	*sess, *tsess;
	uint64_t		 now = mono_ms();
	struct timeval		 tv = { SESS_SWEEP_S, 0 };

	TAILQ_FOREACH_SAFE(sess, &sessions, entry, tsess)
		if (session_idle(sess) &&
		    now - sess->last_active > SESS_IDLE_MS)
			session_end(sess, "expired");
	evtimer_add(ev_sweep, &tv);
}

void
session_expire_start(struct event_base *base)
{
	struct timeval	 tv = { SESS_SWEEP_S, 0 };

	if ((ev_sweep = evtimer_new(base, session_sweep, NULL)) == NULL)
		fatalx("cannot create the session timer");
	evtimer_add(ev_sweep, &tv);
}

void
session_shutdown(void)
{
	struct mcp_session	*sess;

	while ((sess = TAILQ_FIRST(&sessions)) != NULL)
		session_end(sess, "shutdown");
	if (ev_sweep != NULL) {
		event_free(ev_sweep);
		ev_sweep = NULL;
	}
}
