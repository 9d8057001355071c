/*
 * The memory guard of a container under runsc, in the privileged helper.
 *
 * Under gVisor the sandbox's memory lives in one file of its kernel's,
 * mapped by a stub process per program.  When a greedy program reaches
 * the container's limit, the kernel's OOM killer rightly takes that
 * program's stub; but the pages stay charged until gVisor notices and
 * frees them, and if anything needs memory in between, the next choice
 * is gVisor's kernel itself: the whole sandbox ends for one program.
 *
 * So the guard takes the choice over.  On cgroup v1 (oom_control), the
 * kernel kills nothing in the container's memory group and makes what
 * needs memory there wait; on v2, which cannot stop the kernel's
 * choice, memory.high a margin below the limit makes what asks for more
 * wait in reclaim before the kernel would choose.  The guard kills the
 * biggest program, once, then waits for gVisor to give its memory back
 * before it would choose again.  Should gVisor's kernel or gofer be the
 * biggest then, the victim's memory has not come back: gVisor has not
 * ended the task whose stub died (seen under emulation, where the task
 * then lived on to its timeout).  Once, sandboxd is told to end what
 * runs through gVisor's own kernel, and the guard waits again.  Should
 * they be the biggest still, or the wait last too long, the choice goes
 * back to the kernel (on v2, at the limit itself).
 *
 * A program here is a stub with every process beneath it: they share
 * its address space.  gVisor's own processes are the group's roots,
 * whose parents are outside it; a stub cannot change its parent.  What a
 * process holds, on v1, is its resident total, as the guard has always
 * measured it there.  On v2, where the guard acts at memory.high, it is
 * the anonymous and shared memory resident alone: a stub's mapped share
 * of gVisor's memory file, gVisor's own heap, not the pages of files it
 * maps, runsc's binary first, which a kill would not free; counted, they
 * made gVisor's kernel look the biggest in the Debian 13 guest.  (The
 * same measure on v1 made two CI runs in a row fail gvisor.sh's
 * two-program OOMs, for reasons not found yet.)
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"
#include "cgroup.h"

#define GUARD_MAX_PROCS	2048
#define GUARD_DEPTH	64	/* of stubs beneath stubs */
#define GUARD_CHECK_MS	20	/* while memory is short */
#define GUARD_FREE_MS	1000	/* for a victim's memory to come back */
#define GUARD_GIVE_MS	5000	/* short of memory, at the most */

struct guard {
	TAILQ_ENTRY(guard)	 entry;
	char			 id[SBX_ID_LEN + 1];
	int			 efd;		/* eventfd (v1), inotify (v2) */
	struct event		*ev;		/* the kernel's word */
	struct event		*ev_check;	/* ours, while it lasts */
	int64_t			 since;		/* ms: memory short since */
	int64_t			 killed_at;	/* ms: the last victim's, or 0 */
	int			 nudged;	/* sandboxd told to end it */
	int			 released;
};

struct proc {
	pid_t		 pid;
	pid_t		 ppid;
	uint64_t	 kib;		/* anonymous and shared, resident */
	int		 parent;	/* index, -1 for a root */
	int		 top;		/* the stub beneath a root, -1 root */
};

static TAILQ_HEAD(, guard)	 guards = TAILQ_HEAD_INITIALIZER(guards);
static struct event_base	*gbase;
static void			(*gkilled)(const char *);
static void			(*gstuck)(const char *);
static int			 guard_v2;	/* cgroup v2: proc_read() */

static void	guard_check(struct guard *);

static int64_t
guard_ms(void)
{
	return (int64_t)(mono_ns() / 1000000);
}

/* A process's parent and resident pages, from /proc; -1 if gone. */
static int
proc_read(struct proc *p)
{
	char		 path[64], buf[2048], *s, *end;
	const char	*keys[] = { "RssAnon:", "RssShmem:" };
	size_t		 i;

	/* After the name, which may hold anything, in parentheses. */
	(void)str_fmt(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
	if (cg_read(path, buf, sizeof(buf)) <= 0 ||
	    (s = strrchr(buf, ')')) == NULL || strlen(s) < 4)
		return -1;
	p->ppid = (pid_t)strtol(s + 4, &end, 10);
	if (end == s + 4)
		return -1;
	if (!guard_v2) {
		/* Size, then resident, in pages; a zombie's are 0. */
		(void)str_fmt(path, sizeof(path), "/proc/%d/statm",
		    (int)p->pid);
		if (cg_read(path, buf, sizeof(buf)) <= 0)
			return -1;
		(void)strtoull(buf, &end, 10);
		s = end;
		p->kib = strtoull(s, &end, 10) * (uint64_t)getpagesize() /
		    1024;
		return end == s ? -1 : 0;
	}
	/*
	 * "RssAnon:	    3812 kB", a line each.  A zombie has none: it
	 * holds nothing, but stays, or its children would look like roots,
	 * gVisor's own.
	 */
	(void)str_fmt(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	if (cg_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	p->kib = 0;
	for (i = 0; i < nitems(keys); i++)
		if ((s = strstr(buf, keys[i])) != NULL)
			p->kib += strtoull(s + strlen(keys[i]), &end, 10);
	return 0;
}

/* The processes charged to the container, with their parents in it. */
static int
guard_procs(const struct guard *g, struct proc *ps, int max)
{
	char	 path[PATH_MAX], *buf, *p, *end;
	long	 pid;
	int	 n = 0, i, j, d;

	cgroup_oom_procs(g->id, path, sizeof(path));
	buf = xmalloc(GUARD_MAX_PROCS * 12);
	if (path[0] == '\0' ||
	    cg_read(path, buf, GUARD_MAX_PROCS * 12) <= 0) {
		free(buf);
		return 0;
	}
	for (p = buf; *p != '\0' && n < max; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		while (*end == '\n')
			end++;
		ps[n].pid = (pid_t)pid;
		if (pid > 1 && proc_read(&ps[n]) == 0)
			n++;
	}
	free(buf);
	for (i = 0; i < n; i++) {
		ps[i].parent = -1;
		for (j = 0; j < n; j++)
			if (ps[j].pid == ps[i].ppid)
				ps[i].parent = j;
	}
	for (i = 0; i < n; i++) {
		ps[i].top = -1;
		if (ps[i].parent == -1)
			continue;
		for (j = i, d = 0; ps[ps[j].parent].parent != -1 &&
		    d < GUARD_DEPTH; d++)
			j = ps[j].parent;
		ps[i].top = j;
	}
	return n;
}

/* Kill a program: its stub and every process beneath it. */
static void
guard_kill(struct guard *g, const struct proc *ps, int n, int top)
{
	int	 i;

	log_info("sandbox %s: out of memory: killing the program of "
	    "stub %d (%llu KiB resident)", g->id, (int)ps[top].pid,
	    (unsigned long long)ps[top].kib);
	/* sandboxd counts the kill before its exec can end. */
	gkilled(g->id);
	for (i = 0; i < n; i++)
		if (ps[i].top == top)
			(void)kill(ps[i].pid, SIGKILL);
	g->killed_at = guard_ms();
}

static void
guard_release(struct guard *g, const char *why)
{
	log_warnx("sandbox %s: out of memory: %s; the kernel chooses",
	    g->id, why);
	g->released = 1;
	if (cgroup_oom_release(g->id) == -1)
		log_warn("sandbox %s: oom_control", g->id);
	evtimer_del(g->ev_check);
}

static void
guard_choose(struct guard *g)
{
	struct proc	*ps;
	char		 why[128];
	int		 n, i, best = -1, prog = -1;
	uint64_t	 progs = 0;	/* KiB, every program's stub */

	ps = xcalloc(GUARD_MAX_PROCS, sizeof(*ps));
	n = guard_procs(g, ps, GUARD_MAX_PROCS);
	for (i = 0; i < n; i++) {
		if (best == -1 || ps[i].kib > ps[best].kib)
			best = i;
		if (ps[i].top != -1 && (prog == -1 || ps[i].kib > ps[prog].kib))
			prog = i;
		if (ps[i].top == i)	/* the rest share its memory */
			progs += ps[i].kib;
	}
	/*
	 * gVisor's kernel may be the biggest process while the programs,
	 * together, hold more: several of them sharing a small limit.
	 */
	if (best != -1 && ps[best].top == -1 && prog != -1 &&
	    progs >= ps[best].kib)
		best = prog;
	if (best == -1)
		guard_release(g, "no process to choose");
	else if (ps[best].top == -1 && g->killed_at != 0 && !g->nudged) {
		log_warnx("sandbox %s: out of memory: the killed program's "
		    "memory has not come back (gVisor's pid %d holds %llu "
		    "KiB); it is ended through gVisor's kernel", g->id,
		    (int)ps[best].pid, (unsigned long long)ps[best].kib);
		g->nudged = 1;
		g->killed_at = guard_ms();
		gstuck(g->id);
	} else if (ps[best].top == -1) {
		(void)str_fmt(why, sizeof(why), "gVisor's own processes are "
		    "the biggest (pid %d, %llu KiB; a program's, %llu KiB)",
		    (int)ps[best].pid, (unsigned long long)ps[best].kib,
		    prog == -1 ? 0ULL : (unsigned long long)ps[prog].kib);
		guard_release(g, why);
	} else
		guard_kill(g, ps, n, ps[best].top);
	free(ps);
}

static void
guard_check(struct guard *g)
{
	struct timeval	 tv = { 0, GUARD_CHECK_MS * 1000 };
	int64_t		 now = guard_ms();

	if (g->released)
		return;
	if (!cgroup_oom_waiting(g->id)) {
		g->since = 0;
		g->killed_at = 0;
		g->nudged = 0;
		return;
	}
	if (g->since == 0)
		g->since = now;
	if (now - g->since > GUARD_GIVE_MS) {
		guard_release(g, "still short after the biggest program went");
		return;
	}
	/*
	 * The last victim's memory comes back once gVisor sees it gone:
	 * give it that time before another, or every program would go.
	 */
	if (g->killed_at == 0 || now - g->killed_at > GUARD_FREE_MS)
		guard_choose(g);
	if (!g->released)
		evtimer_add(g->ev_check, &tv);
}

static void
guard_event(evutil_socket_t fd, short events, void *arg)
{
	/* An eventfd's count or inotify's events, of a name at most. */
	char	 buf[256 + NAME_MAX];

	/* Emptied, or it would wake us again at once. */
	errno = 0;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (errno != 0 && errno != EAGAIN)
		log_debug("guard: read: %s", strerror(errno));
	guard_check(arg);
}

static void
guard_timer(evutil_socket_t fd, short events, void *arg)
{
	guard_check(arg);
}

void
guard_init(struct event_base *base, void (*killed)(const char *),
    void (*stuck)(const char *))
{
	gbase = base;
	gkilled = killed;
	gstuck = stuck;
	guard_v2 = strcmp(cgroup_version(), "v2") == 0;
}

/* Guard a container that has just started; 0, or -1 with a warning. */
int
guard_start(const char *id)
{
	struct guard	*g;
	int		 efd;

	if ((efd = cgroup_oom_watch(id)) == -1) {
		log_warn("sandbox %s: cannot watch for OOM kills; the "
		    "kernel chooses, maybe gVisor's kernel", id);
		return -1;
	}
	g = xcalloc(1, sizeof(*g));
	str_copy(g->id, id, sizeof(g->id));
	g->efd = efd;
	if ((g->ev = event_new(gbase, efd, EV_READ | EV_PERSIST,
	    guard_event, g)) == NULL || event_add(g->ev, NULL) == -1 ||
	    (g->ev_check = evtimer_new(gbase, guard_timer, g)) == NULL)
		fatalx("priv: cannot watch a container's memory");
	TAILQ_INSERT_TAIL(&guards, g, entry);
	return 0;
}

void
guard_stop(const char *id)
{
	struct guard	*g;

	TAILQ_FOREACH(g, &guards, entry)
		if (strcmp(g->id, id) == 0)
			break;
	if (g == NULL)
		return;
	TAILQ_REMOVE(&guards, g, entry);
	event_free(g->ev);
	event_free(g->ev_check);
	close(g->efd);
	free(g);
}

void
guard_stop_all(void)
{
	while (!TAILQ_EMPTY(&guards))
		guard_stop(TAILQ_FIRST(&guards)->id);
}
