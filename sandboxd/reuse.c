/*
 * Reuse: a one-shot run's container, wiped, serves the same tenant's next
 * run instead of being destroyed, for tenants whose policy says "reuse
 * yes" (mcpd.conf(5); SECURITY.md has the threat model).  A container
 * costs runc's whole start and teardown; a wipe costs a few system calls.
 *
 * The wipe, in three steps, each answered before the next:
 *  1. sandbox-init kills every other process in the container (kill(-1)
 *     as PID 1, which misses nothing forked meanwhile), waits for each
 *     and lets go of the workspace;
 *  2. the privileged helper, inside the container's mount and IPC
 *     namespaces, removes every SysV object and POSIX message queue and
 *     mounts /tmp, /workspace and /dev/shm afresh;
 *  3. sandbox-init opens the new workspace.
 * Then the container's cgroup must hold init alone, and its counters
 * start afresh.  Anything else, or a step that takes too long, and the
 * container is destroyed as it would have been without reuse.
 *
 * A wiped container belongs to its tenant: pool_claim() hands it to that
 * tenant's runs only; it is not the warm pool's ("kept", not "pooled").  Only
 * one-shot containers without network under runc or crun are reused
 * (gVisor's kernel holds a container's state where the host cannot wipe
 * it), a container serves REUSE_RUNS_MAX runs at most, a tenant keeps
 * REUSE_KEEP of them per image and runtime, none is kept while fewer than
 * a quarter of the uid slots are free (so that other tenants' new
 * containers always find one), and one unclaimed for its image's pool idle
 * time (REUSE_IDLE_S without one) goes.  A
 * reload that takes "reuse" from a tenant ends its wiped containers at
 * the next tick.
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

#define REUSE_WIPE_MS	5000	/* the three steps, at most; whole seconds */
#define REUSE_IDLE_S	60	/* unclaimed this long: destroyed */
#define REUSE_RUNS_MAX	256	/* runs one container serves */
#define REUSE_KEEP	16	/* wiped, per tenant, image and runtime */

static struct reuse_stats	 stats;

/* Does the tenant's policy want its containers reused? */
static int
reuse_wanted(const char *tenant)
{
	const struct tenant	*t;

	return (t = policy_tenant(sbd->conf, tenant)) != NULL && t->reuse;
}

/* A kept container let go; its slot is free once it is destroyed. */
static void
reuse_end(struct sandbox *sb, const char *why)
{
	sb->kept = 0;
	log_debug("sandbox %s of tenant %s: no longer kept: %s", sb->id,
	    sb->tenant, why);
	sandbox_destroy(sb, 0, why);
}

/* A container kept for its tenant, or one being wiped for it. */
int
reuse_held(const struct sandbox *sb)
{
	return sb->kept || sb->wiping;
}

/* Kept, and up: ready for its tenant's next run. */
static int
reuse_ready(const struct sandbox *sb)
{
	return sb->kept && sb->state == SB_RUNNING;
}

/* How many are held for sb's tenant, image and runtime. */
static uint32_t
reuse_count(const struct sandbox *like)
{
	const struct sandbox	*sb;
	uint32_t		 n = 0;

	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (!reuse_held(sb))
			continue;
		if (strcmp(sb->tenant, like->tenant) == 0 &&
		    strcmp(sb->image, like->image) == 0 &&
		    strcmp(sb->runtime, like->runtime) == 0)
			n++;
	}
	return n;
}

static void
reuse_fail(struct sandbox *sb, const char *why)
{
	log_warnx("sandbox %s: not reused: %s", sb->id, why);
	stats.failed++;
	sb->wiping = 0;
	if (sb->ev_wipe != NULL)
		evtimer_del(sb->ev_wipe);
	sandbox_destroy(sb, 0, why);
}

static void
reuse_timeout(evutil_socket_t fd, short events, void *arg)
{
	reuse_fail(arg, "its wipe took too long");
}

static void
reuse_step(struct sandbox *sb, uint32_t step)
{
	if (imsgev_compose(&sb->iev, IMSG_INIT_WIPE, 0, -1, &step,
	    sizeof(step)) == -1)
		reuse_fail(sb, "cannot reach its sandbox-init");
}

/*
 * The run in sb is over: 1 if its container is kept for the tenant's
 * next run (and its wipe begun), 0 if the caller destroys it.
 */
int
reuse_offer(struct sandbox *sb, int clean)
{
	struct timeval	 tv = { REUSE_WIPE_MS / 1000, 0 };
	const struct runtime	*rt;
	const char	*why = NULL;

	if (!reuse_wanted(sb->tenant))
		return 0;
	rt = policy_runtime(sbd->conf, sb->runtime);
	if (sb->persistent || sb->guest || rt == NULL ||
	    rt->kind == RUNTIME_RUNSC || sb->lim.network != NET_NONE)
		why = "not a one-shot container without network under runc "
		    "or crun";
	else if (!clean)
		why = "its run did not end cleanly";
	else if (sb->state != SB_RUNNING || !sb->iev_open ||
	    !TAILQ_EMPTY(&sb->execs) || !TAILQ_EMPTY(&sb->fileops) ||
	    !TAILQ_EMPTY(&sb->waiters))
		why = "it is not idle";
	else if (sb->reused + 1 >= REUSE_RUNS_MAX)
		why = "it served its last run";
	else if (reuse_count(sb) >= REUSE_KEEP)
		why = "the tenant keeps enough already";
	else if (sandbox_slots_free() < sbd->conf->uid_slots / 4)
		why = "fewer than a quarter of the uid slots are free";
	if (why != NULL) {
		log_debug("sandbox %s: not reused: %s", sb->id, why);
		return 0;
	}
	if (sb->ev_wipe == NULL &&
	    (sb->ev_wipe = evtimer_new(sbd->base, reuse_timeout, sb)) ==
	    NULL)
		fatalx("sandbox %s: cannot create a timer", sb->id);
	evtimer_add(sb->ev_wipe, &tv);
	sb->wiping = 1;
	sb->wipe_start = mono_ns();
	reuse_step(sb, INIT_WIPE_KILL);
	return 1;
}

/* sandbox-init's answer to a step. */
void
reuse_init_wiped(struct sandbox *sb, struct imsg *imsg)
{
	struct init_wiped	 w;
	struct priv_wipe	 pw;

	if (!sb->wiping || proto_payload(imsg->data, imsg->datalen, &w,
	    sizeof(w)) == -1) {
		reuse_fail(sb, "sandbox-init broke the protocol");
		return;
	}
	switch (w.step) {
	case INIT_WIPE_KILL:
		if (w.reaped > 0)
			log_debug("sandbox %s: %u processes left by the run "
			    "ended", sb->id, w.reaped);
		memset(&pw, 0, sizeof(pw));
		memcpy(pw.id, sb->id, sizeof(sb->id));
		imsgev_compose(&sbd->priv, IMSG_PRIV_WIPE, 0, -1, &pw,
		    sizeof(pw));
		break;
	case INIT_WIPE_OPEN:
		if (!cgroup_sandbox_quiet(sb->id, sb->init_pid)) {
			reuse_fail(sb, "its cgroup holds more than its init");
			return;
		}
		cgroup_sandbox_reset(sb->id);
		evtimer_del(sb->ev_wipe);
		sb->wiping = 0;
		sb->fresh = 1;
		sb->kept = 1;
		sb->last_used = (int64_t)time(NULL);
		stats.wiped++;
		log_debug("sandbox %s: wiped in %llu us, kept for tenant %s",
		    sb->id, (unsigned long long)(mono_ns() - sb->wipe_start) /
		    1000, sb->tenant);
		break;
	default:
		reuse_fail(sb, "sandbox-init broke the protocol");
		break;
	}
}

/* The helper's answer: the mounts and IPC are fresh, or not. */
void
reuse_priv_wiped(struct sandbox *sb, const struct priv_result *r)
{
	if (!sb->wiping || sb->state != SB_RUNNING)
		return;
	if (r->pid != 1) {
		reuse_fail(sb, r->message[0] != '\0' ? r->message :
		    "the helper could not wipe it");
		return;
	}
	reuse_step(sb, INIT_WIPE_OPEN);
}

/*
 * A wiped container of the tenant for a run with lim, now the run's own;
 * or NULL.  Its limits are set as a warm container's are.
 */
struct sandbox *
reuse_claim(const char *image, const char *tenant, const struct limits *lim,
    const struct runtime *rt)
{
	struct sandbox	*sb;

	if (!reuse_wanted(tenant))
		return NULL;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (reuse_ready(sb) && strcmp(sb->tenant, tenant) == 0 &&
		    strcmp(sb->image, image) == 0 &&
		    strcmp(sb->runtime, rt->name) == 0 && pool_serves(sb, lim))
			break;
	if (sb == NULL)
		return NULL;
	if (pool_take(sb, tenant, lim) == -1) {
		stats.failed++;
		return NULL;
	}
	sb->reused++;
	stats.claimed++;
	return sb;
}

/* The kept container claimed longest ago, or NULL. */
static struct sandbox *
reuse_oldest(void)
{
	struct sandbox	*sb, *old = NULL;

	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (reuse_ready(sb) &&
		    (old == NULL || sb->last_used < old->last_used))
			old = sb;
	return old;
}

/*
 * Wiped containers unclaimed for long, or of tenants reuse no more; and
 * the oldest while fewer than a quarter of the uid slots are free, which
 * other containers took since: kept ones never stand in a new one's way
 * for long.
 */
void
reuse_reap(void)
{
	const struct image	*im;
	struct sandbox		*sb, *next;
	int64_t			 now = (int64_t)time(NULL), idle;
	const char		*why;
	uint32_t		 nfree;

	TAILQ_FOREACH_SAFE(sb, &sbd->sandboxes, entry, next) {
		if (!reuse_ready(sb))
			continue;
		im = policy_image(sbd->conf, sb->image);
		idle = im != NULL && im->pool_idle != 0 ?
		    (int64_t)(im->pool_idle / 1000) : REUSE_IDLE_S;
		if (!reuse_wanted(sb->tenant))
			why = "its tenant no longer reuses containers";
		else if (now - sb->last_used >= idle)
			why = "it was not claimed in time";
		else
			continue;
		reuse_end(sb, why);
	}
	/* Slots come free as the destroys end: count them now. */
	for (nfree = sandbox_slots_free(); nfree < sbd->conf->uid_slots / 4 &&
	    (sb = reuse_oldest()) != NULL; nfree++)
		reuse_end(sb, "other containers need its uid slot");
}

void
reuse_get_stats(struct reuse_stats *s)
{
	const struct sandbox	*sb;

	*s = stats;
	s->kept = 0;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (reuse_held(sb))
			s->kept++;
}
