/*
 * GET /healthz and GET /metrics, once httpd.c has let the request in.
 *
 * /healthz answers from what mcpd already knows of its siblings (the
 * connections, and the pings that go through sandboxd to auditd), so a
 * probe never waits on them.  /metrics asks sandboxd for its counts on
 * every scrape and answers when they come, or after SCRAPE_WAIT_MS
 * without them: a stuck sandboxd shows as mcpd_sandboxd_up 0, not as a
 * scrape that hangs.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "http.h"
#include "imsg.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "policy.h"
#include "proto.h"
#include "sbxcall.h"
#include "util.h"

#define SCRAPE_WAIT_MS		2000
#define METRICS_TYPE		"text/plain; version=0.0.4; charset=utf-8"
#define NO_STORE		"Cache-Control: no-store\r\n"

/* A scrape waiting for sandboxd's answer. */
struct scrape {
	struct http_req		*r;
	struct sbx_call		*call;		/* NULL once it ended */
	struct event		*ev_wait;
	struct mx_gauges	 gauges;
	struct sbx_server	 srv;
	int			 have;		/* SERVERINFO came, whole */
};

void
observe_healthz(struct http_req *r)
{
	struct evbuffer	*b = evbuffer_new();
	int		 ok, req = mcpd_conf->audit.required;

	if (b == NULL)
		fatalx("out of memory");
	ok = metrics_healthy(req, NULL, 0);
	metrics_health_text(b, req);
	http_reply(r, ok ? 200 : 503, "text/plain; charset=utf-8", NO_STORE,
	    evbuffer_pullup(b, -1), evbuffer_get_length(b));
	evbuffer_free(b);
}

static void
scrape_gauges(struct mx_gauges *g)
{
	memset(g, 0, sizeof(*g));
	g->sessions = session_count();
	g->conns = httpd_conns();
	g->inflight = mcp_inflight(NULL);
	g->calls = sbx_calls_pending();
	g->audit_required = mcpd_conf->audit.required != 0;
	maudit_stats(&g->audit);
}

static void
scrape_reply(struct http_req *r, const struct mx_gauges *g,
    const struct sbx_server *srv)
{
	struct evbuffer	*b = evbuffer_new();

	if (b == NULL)
		fatalx("out of memory");
	metrics_render(b, g, srv);
	http_reply(r, 200, METRICS_TYPE, NO_STORE, evbuffer_pullup(b, -1),
	    evbuffer_get_length(b));
	evbuffer_free(b);
}

static void
scrape_free(struct scrape *sc)
{
	if (sc->call != NULL)
		sbx_call_detach(sc->call);
	event_free(sc->ev_wait);
	free(sc);
}

static void
scrape_answer(struct scrape *sc)
{
	sc->r->gone = NULL;
	scrape_reply(sc->r, &sc->gauges, sc->have ? &sc->srv : NULL);
	scrape_free(sc);
}

static void
scrape_frame(void *arg, struct imsg *imsg)
{
	struct scrape	*sc = arg;

	switch (imsg->hdr.type) {
	case IMSG_SBX_PEER:
		break;		/* who is connected: not for /metrics */
	case IMSG_SBX_SERVERINFO:
		sc->have = proto_payload(imsg->data, imsg->datalen, &sc->srv,
		    sizeof(sc->srv)) == 0;
		if (!sc->have)
			metrics_error(MX_E_SBX_MALFORMED);
		break;
	default:
		break;
	}
	if (!sbx_frame_final(imsg->hdr.type))
		return;
	sc->call = NULL;	/* sbxcall frees it after us */
	scrape_answer(sc);
}

static void
scrape_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct scrape	*sc = arg;

	log_info("metrics: sandboxd did not answer in %d ms",
	    SCRAPE_WAIT_MS);
	sc->have = 0;
	scrape_answer(sc);
}

static void
scrape_gone(struct http_req *r)
{
	struct scrape	*sc = r->data;

	http_req_release(r);
	scrape_free(sc);
}

void
observe_metrics(struct http_req *r)
{
	struct scrape	*sc;
	struct timeval	 tv = { SCRAPE_WAIT_MS / 1000,
			    (SCRAPE_WAIT_MS % 1000) * 1000 };
	const char	*why;

	sc = xcalloc(1, sizeof(*sc));
	sc->r = r;
	scrape_gauges(&sc->gauges);
	if ((sc->ev_wait = evtimer_new(mcp_base, scrape_timeout, sc)) == NULL)
		fatalx("cannot create a timer");
	/* sandboxd away: say so now, rather than wait for it to come back. */
	if (!sbx_calls_connected() || (sc->call = sbx_call(IMSG_SBX_SERVER,
	    NULL, 0, scrape_frame, sc, &why)) == NULL) {
		scrape_answer(sc);
		return;
	}
	evtimer_add(sc->ev_wait, &tv);
	r->data = sc;
	r->gone = scrape_gone;
}
