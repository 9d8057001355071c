/*
 * Sandboxes: a container with a sandbox-init as PID 1, started through the
 * privileged helper, and the imsg channel to that init.  Requests ask for a
 * sandbox's container with sandbox_want() and are called back once it is
 * up.  Everything sandbox-init says is untrusted: a malformed word from it
 * ends its container.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "auditbody.h"
#include "log.h"
#include "job.h"
#include "sandboxd.h"
#include "util.h"

struct sandboxd	*sbd;

static void	sandbox_init_dispatch(struct imsgev *, struct imsg *);
static void	sandbox_init_closed(struct imsgev *, const char *);
static void	sandbox_up(struct sandbox *);

int
sandbox_id_valid(const char *id)
{
	size_t	 i;

	for (i = 0; i < SBX_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id[SBX_ID_LEN] == '\0';
}

void
sandbox_new_id(char id[SBX_ID_LEN + 1])
{
	uint8_t	 r[SBX_ID_LEN / 2];

	randombytes_buf(r, sizeof(r));
	sodium_bin2hex(id, SBX_ID_LEN + 1, r, sizeof(r));
}

int
sandbox_slot_alloc(uint32_t *slot)
{
	uint32_t	 i;

	for (i = 0; i < sbd->conf->uid_slots; i++)
		if (!sbd->slots[i]) {
			sbd->slots[i] = 1;
			*slot = i;
			return 0;
		}
	return -1;
}

uint32_t
sandbox_slots_free(void)
{
	uint32_t	 i, n = 0;

	for (i = 0; i < sbd->conf->uid_slots; i++)
		n += !sbd->slots[i];
	return n;
}

void
sandbox_slot_take(uint32_t slot)
{
	sbd->slots[slot] = 1;
}

void
sandbox_slot_free(uint32_t slot)
{
	sbd->slots[slot] = 0;
}

/*
 * The runtime a tenant's sandbox of an image runs under (mcpd.conf(5));
 * NULL if a reload named one sandboxd has not checked: a restart applies
 * it.  A warm container's tenant, "", has the file's.
 */
const struct runtime *
sandbox_runtime(const char *tenant, const char *image)
{
	const struct runtime	*rt;

	rt = policy_runtime_for(sbd->conf, tenant[0] != '\0' ?
	    policy_tenant(sbd->conf, tenant) : NULL, image);
	/* Named by a reload, but not in use at start: the helper lacks it. */
	if (rt != NULL && !sbd->runtime_used[rt - sbd->conf->runtimes])
		return NULL;
	return rt;
}

struct sandbox *
sandbox_new(const char *id, const char *tenant, const char *image,
    const struct limits *lim, int persistent, const char *name,
    const struct runtime *rt)
{
	struct sandbox	*sb;

	sb = xcalloc(1, sizeof(*sb));
	str_copy(sb->id, id, sizeof(sb->id));
	str_copy(sb->tenant, tenant, sizeof(sb->tenant));
	str_copy(sb->image, image, sizeof(sb->image));
	str_copy(sb->name, name, sizeof(sb->name));
	sb->lim = *lim;
	sb->persistent = persistent;
	str_copy(sb->runtime, rt->name, sizeof(sb->runtime));
	sb->guest = rt->kind == RUNTIME_RUNSC;
	sb->state = SB_IDLE;
	sb->created = sb->last_used = (int64_t)time(NULL);
	TAILQ_INIT(&sb->waiters);
	TAILQ_INIT(&sb->execs);
	TAILQ_INIT(&sb->fileops);
	return sb;
}

/*
 * Another tenant's sandbox is found exactly as an unknown one is not:
 * callers answer both with the same error.
 */
struct sandbox *
sandbox_find(const char *tenant, const char *id)
{
	struct sandbox	*sb;

	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (strcmp(sb->id, id) == 0 &&
		    (tenant == NULL || strcmp(sb->tenant, tenant) == 0))
			return sb;
	return NULL;
}

/*
 * sig to every process of the sandbox but its init: through its cgroups,
 * or under runsc, whose processes the host cannot see, by init.
 */
void
sandbox_signal(struct sandbox *sb, int sig)
{
	int32_t	 s = sig;

	if (!sb->guest)
		cgroup_sandbox_kill(sb->id, sig);
	else if (sb->iev_open && imsgev_compose(&sb->iev, IMSG_INIT_SIGNAL,
	    0, -1, &s, sizeof(s)) == -1)
		log_warn("sandbox %s: signal %d", sb->id, sig);
}

/* A persistent sandbox by the name it was created with, within a tenant. */
struct sandbox *
sandbox_find_name(const char *tenant, const char *name)
{
	struct sandbox	*sb;

	if (name[0] == '\0')
		return NULL;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry)
		if (sb->persistent && strcmp(sb->name, name) == 0 &&
		    strcmp(sb->tenant, tenant) == 0)
			return sb;
	return NULL;
}

/*
 * OOM kills in a container's groups so far: the kernel's, and under runsc
 * those of the helper's guard, which chooses for the kernel (guard.c).
 */
uint64_t
sandbox_oom_kills(const struct sandbox *sb)
{
	return cgroup_oom_kills(sb->id, 0) + sb->oom_killed;
}

uint32_t
sandbox_next_op(struct sandbox *sb)
{
	if (++sb->next_op == 0)
		sb->next_op = 1;
	return sb->next_op;
}

void
sandbox_touch(struct sandbox *sb)
{
	sb->last_used = (int64_t)time(NULL);
	state_touch(sb);
}

static void
sandbox_run_waiters(struct sandbox *sb, const char *error)
{
	struct waiter	*w;

	while ((w = TAILQ_FIRST(&sb->waiters)) != NULL) {
		TAILQ_REMOVE(&sb->waiters, w, entry);
		w->ready(w->job, error);
		free(w);
	}
}

static void
sandbox_start_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct sandbox	*sb = arg;

	log_warnx("sandbox %s: its container did not come up within %d ms",
	    sb->id, SANDBOX_START_TIMEOUT_MS);
	sandbox_destroy(sb, 0, "the container did not start in time");
}

void
sandbox_start(struct sandbox *sb)
{
	struct priv_start	 ps;
	struct proto_hello	 hello;
	struct timeval		 tv = { SANDBOX_START_TIMEOUT_MS / 1000, 0 };
	struct image		*im;
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("sandbox %s: socketpair", sb->id);
		sandbox_run_waiters(sb, "cannot start a container now");
		return;
	}
	/*
	 * Our end never blocks: a container whose PID 1 stops reading
	 * must not stall the loop every other sandbox is served from.
	 */
	if (fd_set_nonblock(sv[0]) == -1)
		fatal("sandbox %s: its channel", sb->id);
	im = policy_image(sbd->conf, sb->image);
	memset(&ps, 0, sizeof(ps));
	memcpy(ps.id, sb->id, sizeof(sb->id));
	str_copy(ps.image, im != NULL ? im->name : HOST_IMAGE,
	    sizeof(ps.image));
	if (im != NULL && im->stored)
		str_copy(ps.digest, im->digest, sizeof(ps.digest));
	ps.memory = sb->lim.memory;
	ps.disk = sb->lim.disk;
	ps.cpus = sb->lim.cpus;
	ps.pids = sb->lim.pids;
	ps.network = sb->lim.network;
	ps.slot = sb->slot;
	ps.persistent = sb->persistent ? 1 : 0;
	sb->start_pids = sb->lim.pids;
	str_copy(ps.runtime, sb->runtime, sizeof(ps.runtime));

	if (imsgev_init(&sb->iev, sbd->base, sv[0], PROTO_INIT_FRAME,
	    IMSGBUF_FDPASS, sandbox_init_dispatch, sandbox_init_closed,
	    sb) == -1)
		fatalx("sandbox %s: cannot set up its channel", sb->id);
	sb->iev_open = 1;
	proto_hello_init(&hello, ROLE_SANDBOXD);
	imsgev_compose(&sb->iev, IMSG_HELLO, 0, -1, &hello, sizeof(hello));
	sb->state = SB_STARTING;
	sb->init_pid = 0;
	sb->init_hello = 0;
	if (sb->ev_start == NULL &&
	    (sb->ev_start = evtimer_new(sbd->base, sandbox_start_timeout,
	    sb)) == NULL)
		fatalx("sandbox %s: cannot create a timer", sb->id);
	evtimer_add(sb->ev_start, &tv);
	if (imsgev_compose(&sbd->priv, IMSG_PRIV_START, 0, sv[1], &ps,
	    sizeof(ps)) == -1)
		fatalx("cannot reach the privileged helper");
	log_debug("sandbox %s: starting its container (image %s, runtime %s, "
	    "uids %u)", sb->id, ps.image, sb->runtime,
	    sbd->conf->uid_base + sb->slot * UID_RANGE);
}

/* Being cleaned up after its container ended, not stopped nor deleted. */
static int
sandbox_coming_back(const struct sandbox *sb)
{
	return sb->persistent && sb->stopper == NULL &&
	    !(sb->destroy_flags & PRIV_DESTROY_WORKSPACE) &&
	    !(sb->redestroy & PRIV_DESTROY_WORKSPACE);
}

void
sandbox_want(struct sandbox *sb, struct job *job,
    void (*ready)(struct job *, const char *))
{
	struct waiter	*w;

	switch (sb->state) {
	case SB_RUNNING:
		ready(job, NULL);
		return;
	case SB_STOPPING:
		/*
		 * Its container ended under it: a persistent sandbox comes
		 * back with its workspace once that is cleaned up.
		 */
		if (!sandbox_coming_back(sb)) {
			ready(job, "the sandbox is being stopped");
			return;
		}
		break;
	case SB_IDLE:
	case SB_STARTING:
		break;
	}
	w = xcalloc(1, sizeof(*w));
	w->job = job;
	w->ready = ready;
	TAILQ_INSERT_TAIL(&sb->waiters, w, entry);
	if (sb->state == SB_IDLE)
		sandbox_start(sb);
}

void
sandbox_forget_job(struct sandbox *sb, struct job *job)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&sb->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->job == job) {
			TAILQ_REMOVE(&sb->waiters, w, entry);
			free(w);
		}
	}
}

/* Ask the channel to close; sandbox_init_closed() then clears it. */
static void
sandbox_close_channel(struct sandbox *sb)
{
	if (sb->iev_open)
		imsgev_shutdown(&sb->iev, "closed by sandboxd");
}

/*
 * Tear the container down.  A persistent sandbox whose disk stays becomes
 * idle once the helper is done; any other is freed then.
 */
void
sandbox_destroy(struct sandbox *sb, uint32_t flags, const char *why)
{
	struct priv_destroy	 pd;

	if (sb->state == SB_STOPPING) {
		/* A stop during a crash's clean-up: the disk goes after. */
		if ((flags & PRIV_DESTROY_WORKSPACE) &&
		    !(sb->destroy_flags & PRIV_DESTROY_WORKSPACE))
			sb->redestroy = flags;
		return;
	}
	if (sb->ev_start != NULL)
		evtimer_del(sb->ev_start);
	if (sb->ev_wipe != NULL)
		evtimer_del(sb->ev_wipe);
	if (sb->kept)
		log_info("sandbox %s of tenant %s: kept container ended (%s)",
		    sb->id, sb->tenant, why);
	sb->kept = sb->wiping = 0;
	if (sb->pooled) {
		/* Never claimed nor let go: it failed on its own. */
		sb->pooled = 0;
		if (sb->state == SB_RUNNING)
			log_info("pool %s: warm container %s ended (%s)",
			    sb->image, sb->id, why);
		else
			pool_started(sb, why);
	}
	sb->state = SB_STOPPING;
	sandbox_close_channel(sb);
	exec_sandbox_gone(sb, why);
	fileop_sandbox_gone(sb, why);
	sandbox_run_waiters(sb, why);
	memset(&pd, 0, sizeof(pd));
	memcpy(pd.id, sb->id, sizeof(sb->id));
	str_copy(pd.runtime, sb->runtime, sizeof(pd.runtime));
	pd.flags = flags;
	if (!sb->persistent)
		pd.flags |= PRIV_DESTROY_WORKSPACE;
	sb->destroy_flags = pd.flags;
	imsgev_compose(&sbd->priv, IMSG_PRIV_DESTROY, 0, -1, &pd, sizeof(pd));
}

void
sandbox_free(struct sandbox *sb)
{
	size_t	 i;

	job_sandbox_freed(sb);
	if (sb->ev_start != NULL)
		event_free(sb->ev_start);
	if (sb->ev_wipe != NULL)
		event_free(sb->ev_wipe);
	/* Never from the channel's own callbacks: it is closed by now or
	 * its close is still pending, and this cancels it. */
	if (sb->iev_open)
		imsgev_clear(&sb->iev);
	for (i = 0; i < sb->nenv; i++)
		free(sb->env[i]);
	free(sb->env);
	outlog_free(&sb->log);
	free(sb);
}

static void
sandbox_destroyed(struct sandbox *sb)
{
	struct job		*stopper = sb->stopper;
	struct priv_destroy	 pd;

	if (sb->redestroy != 0) {
		memset(&pd, 0, sizeof(pd));
		memcpy(pd.id, sb->id, sizeof(sb->id));
		str_copy(pd.runtime, sb->runtime, sizeof(pd.runtime));
		pd.flags = sb->destroy_flags = sb->redestroy;
		sb->redestroy = 0;
		imsgev_compose(&sbd->priv, IMSG_PRIV_DESTROY, 0, -1, &pd,
		    sizeof(pd));
		return;
	}
	sb->stopper = NULL;
	if (sb->persistent && !(sb->destroy_flags & PRIV_DESTROY_WORKSPACE)) {
		/* The disk stays: the sandbox waits for its next request,
		 * or starts for those that came while it was cleaned up. */
		sb->state = SB_IDLE;
		if (stopper != NULL) {
			sandbox_run_waiters(sb, "the sandbox was stopped");
			job_sandbox_stopped(stopper, NULL);
		} else if (!TAILQ_EMPTY(&sb->waiters))
			sandbox_start(sb);
		return;
	}
	sandbox_run_waiters(sb, "the sandbox was deleted");
	TAILQ_REMOVE(&sbd->sandboxes, sb, entry);
	sandbox_slot_free(sb->slot);
	sandbox_free(sb);
	if (stopper != NULL)
		job_sandbox_stopped(stopper, NULL);
	pool_fill();
}

void
sandbox_priv_dispatch(struct imsg *imsg)
{
	struct priv_result	 r;
	struct sandbox		*sb;
	const char		*why;

	if (imsg->hdr.type == IMSG_PRIV_READY) {
		struct priv_ready	 ready;

		if (proto_payload(imsg->data, imsg->datalen, &ready,
		    sizeof(ready)) == -1 ||
		    memchr(ready.runc, '\0', sizeof(ready.runc)) == NULL)
			fatalx("malformed message from the privileged helper");
		str_copy(sbd->runc_version, ready.runc,
		    sizeof(sbd->runc_version));
		sbd->priv_ready = 1;
		pool_fill();
		return;
	}
	if (proto_payload(imsg->data, imsg->datalen, &r, sizeof(r)) == -1 ||
	    memchr(r.id, '\0', sizeof(r.id)) == NULL ||
	    memchr(r.message, '\0', sizeof(r.message)) == NULL)
		fatalx("malformed message from the privileged helper");
	if ((sb = sandbox_find(NULL, r.id)) == NULL) {
		log_debug("helper answered for sandbox %s, now gone", r.id);
		return;
	}
	switch (imsg->hdr.type) {
	case IMSG_PRIV_STARTED:
		if (sb->state != SB_STARTING)
			return;
		if (r.pid <= 0) {
			why = r.message[0] != '\0' ? r.message :
			    "the container did not start";
			sandbox_close_channel(sb);
			evtimer_del(sb->ev_start);
			sb->state = SB_IDLE;
			sandbox_run_waiters(sb, why);
			/* The helper undid the start; a one-shot sandbox has
			 * no more use, if its job did not say so already. */
			if (!sb->persistent && sb->state != SB_STOPPING)
				sandbox_destroy(sb, 0, why);
			return;
		}
		sb->init_pid = r.pid;
		log_debug("sandbox %s: container up, init pid %d", sb->id,
		    (int)r.pid);
		if (!sb->iev_open) {
			/* Its init went while runc was still at work. */
			sandbox_destroy(sb, 0, "the sandbox's container ended");
			return;
		}
		if (sb->init_hello)
			sandbox_up(sb);
		break;
	case IMSG_PRIV_DESTROYED:
		if (sb->state == SB_STOPPING)
			sandbox_destroyed(sb);
		break;
	case IMSG_PRIV_OOM:
		sb->oom_killed++;
		break;
	case IMSG_PRIV_OOM_STUCK:
		exec_oom_stuck(sb);
		break;
	case IMSG_PRIV_WIPED:
		reuse_priv_wiped(sb, &r);
		break;
	default:
		fatalx("unexpected message %u from the privileged helper",
		    imsg->hdr.type);
	}
}

/*
 * Ready for work once both have spoken, in either order: sandbox-init with
 * its hello, and the helper with init's host pid (and, with egress, once
 * the network is up).
 */
static void
sandbox_up(struct sandbox *sb)
{
	evtimer_del(sb->ev_start);
	sb->state = SB_RUNNING;
	if (sb->pooled) {
		/* What runc's start used is not the run's: off the hot path. */
		cgroup_sandbox_reset(sb->id);
		sb->fresh = 1;
		pool_started(sb, NULL);
	}
	sandbox_run_waiters(sb, NULL);
}

/* The hello that says sandbox-init is ready for work. */
static void
sandbox_init_hello(struct sandbox *sb, struct imsg *imsg)
{
	struct proto_hello	 h;
	char			 why[128];

	if (sb->init_hello || imsg->hdr.type != IMSG_HELLO ||
	    proto_hello_check(imsg->data, imsg->datalen, why,
	    sizeof(why)) != NULL ||
	    (memcpy(&h, imsg->data, sizeof(h)), h.role != ROLE_SANDBOX_INIT)) {
		sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
		return;
	}
	sb->init_hello = 1;
	if (sb->init_pid > 0)
		sandbox_up(sb);
}

static void
sandbox_init_dispatch(struct imsgev *iev, struct imsg *imsg)
{
	struct sandbox	*sb = iev->arg;

	if (sb->state == SB_STARTING) {
		sandbox_init_hello(sb, imsg);
		return;
	}
	if (sb->state != SB_RUNNING)
		return;
	switch (imsg->hdr.type) {
	case IMSG_INIT_STARTED:
	case IMSG_INIT_EXITED:
		exec_init_dispatch(sb, imsg);
		break;
	case IMSG_INIT_DATA:
	case IMSG_INIT_ENTRY:
	case IMSG_INIT_DONE:
		fileop_init_dispatch(sb, imsg);
		break;
	case IMSG_INIT_WIPED:
		reuse_init_wiped(sb, imsg);
		break;
	default:
		log_warnx("sandbox %s: init sent message type %u", sb->id,
		    imsg->hdr.type);
		sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
		break;
	}
}

static void
sandbox_init_closed(struct imsgev *iev, const char *why)
{
	struct sandbox	*sb = iev->arg;

	imsgev_clear(&sb->iev);
	sb->iev_open = 0;
	if (sb->state == SB_STOPPING)
		return;
	/* Before runc is done, the helper's word on the start says why. */
	if (sb->state == SB_STARTING && sb->init_pid == 0)
		return;
	/* Not our doing: the container ended under us. */
	log_info("sandbox %s: container ended (%s)", sb->id, why);
	sandbox_destroy(sb, 0, "the sandbox's container ended");
}

/* Persistent sandboxes past their idle time or lifetime. */
void
sandbox_reap(void)
{
	struct sandbox		*sb, *next;
	struct audit_body	 body;
	int64_t			 now = (int64_t)time(NULL);
	const char		*why;

	for (sb = TAILQ_FIRST(&sbd->sandboxes); sb != NULL; sb = next) {
		next = TAILQ_NEXT(sb, entry);
		if (!sb->persistent || sb->state == SB_STOPPING ||
		    sb->stopper != NULL)
			continue;
		if (now - sb->created >= (int64_t)(sb->lim.lifetime / 1000))
			why = "lifetime";
		else if (TAILQ_EMPTY(&sb->execs) &&
		    now - sb->last_used >= (int64_t)(sb->lim.idle / 1000))
			why = "idle";
		else
			continue;
		log_info("sandbox %s of tenant %s: reaped (%s)", sb->id,
		    sb->tenant, why);
		audit_body_init(&body);
		audit_body_str(&body, "reason", why);
		audit_send(AEV_SANDBOX_REAP, AOC_OK, sb->tenant, sb->id,
		    &body, NULL, NULL);
		audit_body_free(&body);
		state_delete(sb->id);
		sandbox_destroy(sb, PRIV_DESTROY_WORKSPACE,
		    "the sandbox expired");
	}
}

/* At exit: the helper kills every container; here only the books close. */
void
sandbox_shutdown(void)
{
	struct sandbox	*sb;

	while ((sb = TAILQ_FIRST(&sbd->sandboxes)) != NULL) {
		TAILQ_REMOVE(&sbd->sandboxes, sb, entry);
		sb->state = SB_STOPPING;
		exec_sandbox_gone(sb, "sandboxd is shutting down");
		fileop_sandbox_gone(sb, "sandboxd is shutting down");
		sandbox_run_waiters(sb, "sandboxd is shutting down");
		sandbox_free(sb);
	}
}
