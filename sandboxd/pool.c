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
 * Each image has a pool per runtime its sandboxes run under (its tenants'
 * and its own choice, mcpd.conf(5)), of the image's size each: a warm
 * container serves only runs under the runtime it was started with.
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

/*
 * The pool's books for an image under a runtime, made on first use.  The
 * log names it by its image, and its runtime unless it is the file's.
 */
static struct pool *
pool_get(const char *image, const char *runtime)
{
	struct pool	*p;

	TAILQ_FOREACH(p, &sbd->pools, entry)
		if (strcmp(p->image, image) == 0 &&
		    strcmp(p->runtime, runtime) == 0)
			return p;
	p = xcalloc(1, sizeof(*p));
	str_copy(p->image, image, sizeof(p->image));
	str_copy(p->runtime, runtime, sizeof(p->runtime));
	if (strcmp(runtime, sbd->conf->runtime) == 0)
		str_copy(p->label, image, sizeof(p->label));
	else
		(void)str_fmt(p->label, sizeof(p->label), "%s@%s", image,
		    runtime);
	p->last_claim = now_ms();
	TAILQ_INSERT_TAIL(&sbd->pools, p, entry);
	return p;
}

void
pool_init(void)
{
	TAILQ_INIT(&sbd->pools);
}

/*
 * The runtimes an image's sandboxes run under: for each tenant, and for
 * the file's runtime when no tenant is left; each once, n of them.
 */
static size_t
pool_runtimes(const struct image *im, const struct runtime *out[],
    size_t max)
{
	const struct tenant	*t;
	const struct runtime	*rt;
	size_t			 n = 0, i;

	TAILQ_FOREACH(t, &sbd->conf->tenants, entry) {
		if (t->gone ||
		    (rt = sandbox_runtime(t->name, im->name)) == NULL)
			continue;
		for (i = 0; i < n && out[i] != rt; i++)
			;
		if (i == n && n < max)
			out[n++] = rt;
	}
	if (n == 0 && (rt = sandbox_runtime("", im->name)) != NULL)
		out[n++] = rt;
	return n;
}

/* An image's pool size, for each runtime its sandboxes run under. */
uint32_t
pool_wanted(const struct image *im)
{
	const struct runtime	*rts[POLICY_RUNTIMES_MAX];

	return im->pool * (uint32_t)pool_runtimes(im, rts, nitems(rts));
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

/* Is sb one of the pool's (warm, or on its way)? */
static int
pool_has(const struct pool *p, const struct sandbox *sb)
{
	return strcmp(sb->image, p->image) == 0 &&
	    strcmp(sb->runtime, p->runtime) == 0;
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

/* Warm containers of a pool, or of all with NULL. */
static void
pool_count(const struct pool *p, uint32_t *ready, uint32_t *starting)
{
	struct sandbox	*sb;

	*ready = *starting = 0;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (!sb->pooled || (p != NULL && !pool_has(p, sb)))
			continue;
		if (sb->state == SB_RUNNING)
			(*ready)++;
		else if (sb->state == SB_STARTING || sb->state == SB_IDLE)
			(*starting)++;
	}
}

/* Start one warm container of a pool: 0, or -1 if no slot is free. */
static int
pool_start(const struct pool *p, const struct runtime *rt)
{
	struct sandbox	*sb;
	char		 id[SBX_ID_LEN + 1];
	uint32_t	 slot;

	if (sandbox_slot_alloc(&slot) == -1)
		return -1;
	sandbox_new_id(id);
	sb = sandbox_new(id, "", p->image, pool_limits(), 0, "", rt);
	sb->slot = slot;
	sb->pooled = 1;
	TAILQ_INSERT_TAIL(&sbd->sandboxes, sb, entry);
	stats.started++;
	log_debug("pool %s: warm container %s starting", p->label, sb->id);
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
pool_fits(const struct limits *pl, const struct limits *lim, int guest)
{
	return lim->disk == pl->disk && lim->network == pl->network &&
	    (guest ? lim->pids == pl->pids : lim->pids <= pl->pids);
}

/*
 * Whether the container sb, as it was started, can serve a run with lim
 * once its cgroups are written: a warm one, or one kept for its tenant,
 * whose limits in force are its last run's.
 */
int
pool_serves(const struct sandbox *sb, const struct limits *lim)
{
	struct limits	 started = sb->lim;

	started.pids = sb->start_pids;
	return pool_fits(&started, lim, sb->guest);
}

/* Is the warm container under a runtime its image's tenants still use? */
static int
pool_wanted_runtime(const struct sandbox *sb)
{
	const struct runtime	*rts[POLICY_RUNTIMES_MAX];
	const struct image	*im;
	size_t			 i, n;

	if ((im = policy_image(sbd->conf, sb->image)) == NULL)
		return 0;
	n = pool_runtimes(im, rts, nitems(rts));
	for (i = 0; i < n; i++)
		if (strcmp(rts[i]->name, sb->runtime) == 0)
			return 1;
	return 0;
}

/*
 * Warm containers a reload's "default" limits do not fit, replaced; and
 * those under a runtime a reload moved every tenant of the image from.
 */
static void
pool_retire(void)
{
	const struct limits	*pl = pool_limits();
	struct sandbox		*sb, *next;

	TAILQ_FOREACH_SAFE(sb, &sbd->sandboxes, entry, next) {
		if (!sb->pooled || sb->state != SB_RUNNING)
			continue;
		if (!pool_fits(&sb->lim, pl, sb->guest)) {
			stats.shrunk++;
			sandbox_destroy(sb, 0, "the default limits changed");
		} else if (!pool_wanted_runtime(sb)) {
			stats.shrunk++;
			sandbox_destroy(sb, 0, "no tenant runs its image under "
			    "its runtime now");
		}
	}
}

/* One pool towards its target: -1 when out of slots, to stop there. */
static int
pool_fill_one(const struct image *im, const struct runtime *rt,
    uint32_t *all)
{
	struct pool	*p = pool_get(im->name, rt->name);
	struct sandbox	*sb, *next;
	uint32_t	 ready, starting, target;

	target = pool_target(im, p);
	pool_count(p, &ready, &starting);
	if (ready + starting > target) {
		/* Idle for long: the ready ones go, newest first. */
		for (sb = TAILQ_LAST(&sbd->sandboxes, sandboxq);
		    sb != NULL && ready + starting > target; sb = next) {
			next = TAILQ_PREV(sb, sandboxq, entry);
			if (!sb->pooled || sb->state != SB_RUNNING ||
			    !pool_has(p, sb))
				continue;
			sb->pooled = 0;
			ready--;
			stats.shrunk++;
			sandbox_destroy(sb, 0, "the pool shrinks");
		}
		if (ready + starting == 0 && !p->emptied) {
			log_info("pool %s: emptied after %llu s unclaimed",
			    p->label, (unsigned long long)im->pool_idle /
			    1000);
			p->emptied = 1;
		}
		return 0;
	}
	if (p->retry_at > now_ms())
		return 0;	/* after a failure: from the tick */
	while (ready + starting < target && *all < POOL_STARTS) {
		if (pool_start(p, rt) == -1) {
			if (!p->no_slot)
				log_warnx("pool %s: every sandbox uid slot is "
				    "in use; the pool waits", p->label);
			p->no_slot = 1;
			return -1;
		}
		p->no_slot = 0;
		starting++;
		(*all)++;
	}
	return 0;
}

/* Bring every pool towards its target. */
void
pool_fill(void)
{
	const struct runtime	*rts[POLICY_RUNTIMES_MAX];
	struct image		*im;
	uint32_t		 ready, all;
	size_t			 i, n;

	if (!sbd->priv_ready || sbd->shutting_down)
		return;
	pool_retire();
	pool_count(NULL, &ready, &all);
	TAILQ_FOREACH(im, &sbd->conf->images, entry) {
		n = pool_runtimes(im, rts, nitems(rts));
		for (i = 0; i < n; i++)
			if (pool_fill_one(im, rts[i], &all) == -1)
				return;
	}
}

/* A warm container came up, or failed to: fill on, or note the failure. */
void
pool_started(struct sandbox *sb, const char *error)
{
	struct pool	*p = pool_get(sb->image, sb->runtime);

	if (error != NULL) {
		stats.failed++;
		/* Once per run of failures; the reaper's tick retries. */
		if (!p->failing)
			log_warnx("pool %s: a warm container did not start: "
			    "%s", p->label, error);
		p->failing = 1;
		p->retry_at = now_ms() + REAP_INTERVAL_MS;
		return;
	}
	if (p->failing)
		log_info("pool %s: warm containers start again", p->label);
	p->failing = 0;
	pool_fill();
}

/*
 * A warm or kept container, now a run's, with the run's limits written
 * over those it has (which a reload may have changed since it started):
 * 0, or -1 once it is destroyed.
 */
int
pool_take(struct sandbox *sb, const char *tenant, const struct limits *lim)
{
	sb->pooled = sb->kept = 0;
	if (cgroup_sandbox_limits(sb->id, &sb->lim, lim) == -1) {
		sandbox_destroy(sb, 0, "its limits could not be set");
		return -1;
	}
	str_copy(sb->tenant, tenant, sizeof(sb->tenant));
	sb->lim = *lim;
	sb->created = sb->last_used = (int64_t)time(NULL);
	return 0;
}

/*
 * A warm container of the image for a one-shot run of tenant with lim,
 * now the run's own; or NULL for a cold start.
 */
struct sandbox *
pool_claim(const char *image, const char *tenant, const struct limits *lim,
    const struct runtime *rt)
{
	struct sandbox		*sb;
	struct pool		*p = pool_get(image, rt->name);
	int			 guest = rt->kind == RUNTIME_RUNSC;

	p->last_claim = now_ms();
	if (p->emptied) {
		p->emptied = 0;
		pool_fill();
	}
	/* The tenant's own kept container first; never another's. */
	if ((sb = reuse_claim(image, tenant, lim, rt)) != NULL)
		return sb;
	if (!pool_fits(pool_limits(), lim, guest)) {
		stats.misfit++;
		return NULL;
	}
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (sb->pooled && sb->state == SB_RUNNING &&
		    pool_has(p, sb) && pool_serves(sb, lim))
			break;
	if (sb == NULL) {
		stats.empty++;
		return NULL;
	}
	if (pool_take(sb, tenant, lim) == -1) {
		stats.failed++;
		return NULL;
	}
	stats.claimed++;
	return sb;
}

void
pool_get_stats(struct pool_stats *s)
{
	*s = stats;
	pool_count(NULL, &s->ready, &s->starting);
}
