/*
 * The warm pool: for each image, containers started ahead of need whose
 * sandbox-init waits for work, so that a one-shot run does not wait for
 * runc.  A run claims one, runs in it and destroys it as before: no
 * container ever serves two runs.
 *
 * Warm containers belong to no tenant (their tenant is "", which no
 * request names) and are started with the "default" limits.  A run whose
 * limits differ only in memory, CPU or fewer pids has them written to the
 * claimed container's cgroups before anything runs; one that differs in
 * disk or network, or finds no warm container ready, starts its own
 * container as it would without a pool.  A reload may change "default"
 * under the pool: each warm container is judged by the limits it was
 * started with, and one those no longer fit is replaced.
 *
 * Refills happen after runs end, when a start completes and on the
 * reaper's tick, at most POOL_STARTS at a time, so that a burst is served
 * by cold starts rather than queued behind refills.  A pool nobody has
 * claimed from for its image's idle time empties; the next run refills it.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define POOL_STARTS	2	/* warm containers starting at once */

static struct pool_stats	 stats;

static int64_t
now_ms(void)
{
	return (int64_t)(mono_ns() / 1000000);
}

static const struct limits *
pool_limits(void)
{
	return policy_limits(sbd->conf, "default");
}

/* The pool's books for an image, made on first use. */
static struct pool *
pool_get(const char *image)
{
	struct pool	*p;

	TAILQ_FOREACH(p, &sbd->pools, entry)
		if (strcmp(p->image, image) == 0)
			return p;
	p = xcalloc(1, sizeof(*p));
	str_copy(p->image, image, sizeof(p->image));
	p->last_claim = now_ms();
	TAILQ_INSERT_TAIL(&sbd->pools, p, entry);
	return p;
}

void
pool_init(void)
{
	struct image	*im;

	TAILQ_INIT(&sbd->pools);
	TAILQ_FOREACH(im, &sbd->conf->images, entry)
		(void)pool_get(im->name);
}

void
pool_free(void)
{
	struct pool	*p;

	while ((p = TAILQ_FIRST(&sbd->pools)) != NULL) {
		TAILQ_REMOVE(&sbd->pools, p, entry);
		free(p);
	}
}

/* How many warm containers an image wants now: 0 once it sat unclaimed. */
static uint32_t
pool_target(const struct image *im, const struct pool *p)
{
	if (im->pool == 0)
		return 0;
	if (im->pool_idle != 0 &&
	    now_ms() - p->last_claim >= (int64_t)im->pool_idle)
		return 0;
	return im->pool;
}

static void
pool_count(const char *image, uint32_t *ready, uint32_t *starting)
{
	struct sandbox	*sb;

	*ready = *starting = 0;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (!sb->pooled || (image != NULL &&
		    strcmp(sb->image, image) != 0))
			continue;
		if (sb->state == SB_RUNNING)
			(*ready)++;
		else if (sb->state == SB_STARTING || sb->state == SB_IDLE)
			(*starting)++;
	}
}

/* Start one warm container of an image: 0, or -1 if no slot is free. */
static int
pool_start(const struct image *im)
{
	struct sandbox	*sb;
	char		 id[SBX_ID_LEN + 1];
	uint32_t	 slot;

	if (sandbox_slot_alloc(&slot) == -1)
		return -1;
	sandbox_new_id(id);
	sb = sandbox_new(id, "", im->name, pool_limits(), 0, "");
	sb->slot = slot;
	sb->pooled = 1;
	TAILQ_INSERT_TAIL(&sbd->sandboxes, sb, entry);
	stats.started++;
	log_debug("pool %s: warm container %s starting", im->name, sb->id);
	sandbox_start(sb);
	return 0;
}

/*
 * Whether a container started with the pool's limits can serve a run with
 * lim, after cgroup writes: disk and network are fixed at start, and the
 * pids rlimit cannot be raised from outside.  Under runsc that rlimit is
 * the sandbox's only pids limit (its cgroup's holds gVisor's own): it
 * cannot be lowered either.
 */
static int
pool_fits(const struct limits *pl, const struct limits *lim)
{
	return lim->disk == pl->disk && lim->network == pl->network &&
	    (sbd->conf->runtime_kind == RUNTIME_RUNSC ?
	    lim->pids == pl->pids : lim->pids <= pl->pids);
}

/* Warm containers a reload's "default" limits do not fit: replaced. */
static void
pool_retire(void)
{
	const struct limits	*pl = pool_limits();
	struct sandbox		*sb, *next;

	TAILQ_FOREACH_SAFE(sb, &sbd->sandboxes, entry, next)
		if (sb->pooled && sb->state == SB_RUNNING &&
		    !pool_fits(&sb->lim, pl)) {
			stats.shrunk++;
			sandbox_destroy(sb, 0, "the default limits changed");
		}
}

/* Bring every pool towards its target. */
void
pool_fill(void)
{
	struct image	*im;
	struct pool	*p;
	struct sandbox	*sb, *next;
	uint32_t	 ready, starting, all, target;

	if (!sbd->priv_ready || sbd->shutting_down)
		return;
	pool_retire();
	pool_count(NULL, &ready, &starting);
	all = starting;
	TAILQ_FOREACH(im, &sbd->conf->images, entry) {
		p = pool_get(im->name);
		target = pool_target(im, p);
		pool_count(im->name, &ready, &starting);
		if (ready + starting > target) {
			/* Idle for long: the ready ones go, newest first. */
			for (sb = TAILQ_LAST(&sbd->sandboxes, sandboxq);
			    sb != NULL && ready + starting > target;
			    sb = next) {
				next = TAILQ_PREV(sb, sandboxq, entry);
				if (!sb->pooled || sb->state != SB_RUNNING ||
				    strcmp(sb->image, im->name) != 0)
					continue;
				sb->pooled = 0;
				ready--;
				stats.shrunk++;
				sandbox_destroy(sb, 0, "the pool shrinks");
			}
			if (ready + starting == 0 && !p->emptied) {
				log_info("pool %s: emptied after %llu s "
				    "unclaimed", im->name, (unsigned long long)
				    im->pool_idle / 1000);
				p->emptied = 1;
			}
			continue;
		}
		if (p->retry_at > now_ms())
			continue;	/* after a failure: from the tick */
		while (ready + starting < target && all < POOL_STARTS) {
			if (pool_start(im) == -1) {
				if (!p->no_slot)
					log_warnx("pool %s: every sandbox uid "
					    "slot is in use; the pool waits",
					    im->name);
				p->no_slot = 1;
				return;
			}
			p->no_slot = 0;
			starting++;
			all++;
		}
	}
}

/* A warm container came up, or failed to: fill on, or note the failure. */
void
pool_started(struct sandbox *sb, const char *error)
{
	struct pool	*p = pool_get(sb->image);

	if (error != NULL) {
		stats.failed++;
		/* Once per run of failures; the reaper's tick retries. */
		if (!p->failing)
			log_warnx("pool %s: a warm container did not start: "
			    "%s", sb->image, error);
		p->failing = 1;
		p->retry_at = now_ms() + REAP_INTERVAL_MS;
		return;
	}
	if (p->failing)
		log_info("pool %s: warm containers start again", sb->image);
	p->failing = 0;
	pool_fill();
}

/*
 * A warm container of the image for a one-shot run of tenant with lim,
 * now the run's own; or NULL for a cold start.
 */
struct sandbox *
pool_claim(const char *image, const char *tenant, const struct limits *lim)
{
	struct sandbox		*sb;
	struct pool		*p = pool_get(image);

	p->last_claim = now_ms();
	if (p->emptied) {
		p->emptied = 0;
		pool_fill();
	}
	if (!pool_fits(pool_limits(), lim)) {
		stats.misfit++;
		return NULL;
	}
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (sb->pooled && sb->state == SB_RUNNING &&
		    strcmp(sb->image, image) == 0 && pool_fits(&sb->lim, lim))
			break;
	if (sb == NULL) {
		stats.empty++;
		return NULL;
	}
	sb->pooled = 0;
	/* From what it was started with, which a reload may have changed. */
	if (cgroup_sandbox_limits(sb->id, &sb->lim, lim) == -1) {
		stats.failed++;
		sandbox_destroy(sb, 0, "its limits could not be set");
		return NULL;
	}
	str_copy(sb->tenant, tenant, sizeof(sb->tenant));
	sb->lim = *lim;
	sb->created = sb->last_used = (int64_t)time(NULL);
	stats.claimed++;
	return sb;
}

void
pool_get_stats(struct pool_stats *s)
{
	*s = stats;
	pool_count(NULL, &s->ready, &s->starting);
}
