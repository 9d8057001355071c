/*
 * mcp-sandboxd internals.
 *
 * The main process serves requests; every container it runs has a
 * sandbox-init as PID 1 reached over an imsg channel.  A privileged
 * helper, forked before the main process confines itself, alone builds
 * bundles, runs runc and mounts workspaces (priv.c).
 *
 *	sandboxd.c	main, the clients
 *	request.c	requests validated whole, before any is acted on
 *	job.c		requests in progress, step by step
 *	sandbox.c	sandbox objects, containers, the init channel
 *	exec.c		one process tree: pipes, cgroups, timeout, result
 *	fileop.c	file operations relayed to sandbox-init
 *	outlog.c	the output log of a persistent sandbox, in memory
 *	pool.c		warm containers for one-shot runs
 *	cgroup.c	per-exec cgroups: placement, kill, accounting, on
 *	cgroup1.c,	the v1 hierarchies of a hybrid boot or the unified
 *	cgroup2.c	v2 one (cgroup.h between them)
 *	state.c		the state database of persistent sandboxes
 *	stored.c	the store's images, served beside the configuration's
 *	probe.c		which languages an image can run
 *	control.c	SERVER: what sandboxd is doing
 *	audit.c		intent and result records, and waiting for them
 *	priv.c		the privileged helper
 *	bundle.c	OCI bundles from policy, with the container's seccomp
 *			profile
 *	image.c		the host image (common/imgtree.c keeps its trees)
 */
#ifndef MCPD_SANDBOXD_H
#define MCPD_SANDBOXD_H

#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>

#include <event2/event.h>

#include "imsgev.h"
#include "log.h"
#include "policy.h"
#include "proc.h"
#include "proto.h"

struct audit_body;
struct job;
struct exec;
struct fileop;

/* Where sandboxd keeps things, under the run and state directories. */
#define SBX_RUNC_ROOT		"runc"		/* run dir: runc's state */
#define SBX_BUNDLES		"bundles"	/* run dir: one per container */
#define SBX_DISKS		"sandboxes"	/* state dir: persistent disks */
#define SBX_IMAGES		"images"	/* state dir: prepared images */
#define SBX_STATE_DB		"state.db"	/* state dir */

#define SANDBOX_START_TIMEOUT_MS	30000
#define EXEC_DRAIN_MS		200	/* output after the process ended */
#define EXEC_REPORT_MS		5000	/* init's word after a kill */
#define STOP_GRACE_MS		2000	/* SIGTERM before SIGKILL */
#define REAP_INTERVAL_MS	1000

enum sandbox_state {
	SB_IDLE,		/* persistent, no container: starts on demand */
	SB_STARTING,		/* runc and sandbox-init on their way */
	SB_RUNNING,
	SB_STOPPING,		/* being destroyed */
};

/* A request waiting for its sandbox's container to come up. */
struct waiter {
	TAILQ_ENTRY(waiter)	 entry;
	void			(*ready)(struct job *, const char *);
	struct job		*job;
};

/* The tail of a persistent sandbox's exec output: a ring once full. */
struct outlog {
	uint8_t			*buf;
	size_t			 cap;		/* grows to SBX_LOG_MAX */
	size_t			 start;		/* the oldest byte */
	size_t			 len;
	int			 dropped;	/* bytes ever dropped */
	int64_t			 mtime;		/* last append, or 0 */
};

struct sandbox {
	TAILQ_ENTRY(sandbox)	 entry;
	char			 id[SBX_ID_LEN + 1];
	char			 tenant[SBX_NAME_MAX];
	char			 name[SBX_NAME_MAX];
	char			 image[SBX_NAME_MAX];
	char			 runtime[SBX_NAME_MAX];	/* mcpd.conf's name */
	struct limits		 lim;		/* in force */
	char			**env;		/* for every exec */
	size_t			 nenv;
	int			 persistent;
	uint32_t		 slot;		/* host uid range */
	enum sandbox_state	 state;
	pid_t			 init_pid;	/* host pid of sandbox-init */
	int			 init_hello;	/* it said hello */
	struct imsgev		 iev;		/* to sandbox-init, when up */
	int			 iev_open;
	struct event		*ev_start;	/* start deadline */
	TAILQ_HEAD(, waiter)	 waiters;
	TAILQ_HEAD(, exec)	 execs;
	TAILQ_HEAD(, fileop)	 fileops;
	uint32_t		 next_op;	/* exec and file op ids */
	int64_t			 created;	/* seconds since the epoch */
	int64_t			 last_used;
	struct job		*stopper;	/* the stop in progress */
	uint32_t		 destroy_flags;	/* of the destroy under way */
	uint32_t		 redestroy;	/* flags for one more after it */
	struct outlog		 log;		/* persistent: exec output */
	int			 pooled;	/* warm, waiting to be claimed */
	int			 fresh;		/* its counters reset, unused */
	int			 shared;	/* an exec ran in its own groups */
	/*
	 * Under a kernel of its runtime's own (runsc): the host sees that
	 * kernel, not the sandbox's processes, so none is placed, counted
	 * or signalled from here.  Its execs share the container's groups;
	 * init kills for us, and reports each exec's CPU and memory.
	 */
	int			 guest;
	uint64_t		 oom_killed;	/* by the helper's guard */
	/* Reuse (reuse.c): wiped and kept for its tenant's next run, or
	 * its wipe under way; runs it served since its first; the pids
	 * limit its container started with. */
	int			 kept;
	int			 wiping;
	uint64_t		 wipe_start;	/* ns, monotonic */
	struct event		*ev_wipe;
	uint32_t		 reused;
	uint32_t		 start_pids;
};

TAILQ_HEAD(sandboxq, sandbox);

/* The warm pool of one image. */
struct pool {
	TAILQ_ENTRY(pool)	 entry;
	char			 image[SBX_NAME_MAX];
	char			 runtime[SBX_NAME_MAX];
	char			 label[2 * SBX_NAME_MAX];	/* for the log */
	int64_t			 last_claim;	/* ms, monotonic */
	int64_t			 retry_at;	/* after a failed start */
	int			 failing;	/* said so once */
	int			 no_slot;	/* said so once */
	int			 emptied;	/* after its idle time */
};

struct pool_stats {
	uint64_t		 started;	/* warm containers */
	uint64_t		 claimed;	/* runs served warm */
	uint64_t		 empty;		/* runs that found none ready */
	uint64_t		 misfit;	/* runs whose limits did not fit */
	uint64_t		 failed;	/* starts or claims that failed */
	uint64_t		 shrunk;	/* let go after the idle time */
	uint32_t		 ready;
	uint32_t		 starting;
};

struct reuse_stats {
	uint64_t		 wiped;		/* containers kept for a tenant */
	uint64_t		 claimed;	/* runs served by one */
	uint64_t		 failed;	/* wipes or claims that failed */
	uint32_t		 kept;		/* now, wiped or being wiped */
};

/* Everything the main process shares between its files. */
struct sandboxd {
	struct policy		*conf;
	struct event_base	*base;
	struct imsgev		 priv;		/* the privileged helper */
	int			 priv_ready;
	/* The runtimes the helper checked at start: those it can use. */
	int			 runtime_used[POLICY_RUNTIMES_MAX];
	struct client		*auditd;
	struct listener		*listener;	/* mcpd's and mcpctl's */
	struct sandboxq		 sandboxes;
	TAILQ_HEAD(, pool)	 pools;
	uint8_t			*slots;		/* uid ranges in use */
	char			 runc_root[PATH_MAX];
	char			 runc_version[32];	/* the helper's word */
	int64_t			 started;	/* seconds since the epoch */
	int64_t			 auditd_since;	/* connected to it */
	int			 shutting_down;
};

extern struct sandboxd	*sbd;

/* sandbox.c */
struct sandbox	*sandbox_new(const char *, const char *, const char *,
		    const struct limits *, int, const char *,
		    const struct runtime *);
const struct runtime *sandbox_runtime(const char *, const char *);
struct sandbox	*sandbox_find(const char *, const char *);
void		 sandbox_signal(struct sandbox *, int);
struct sandbox	*sandbox_find_name(const char *, const char *);
/* Run ready(job, NULL) once the container is up, or ready(job, error). */
void		 sandbox_want(struct sandbox *, struct job *,
		    void (*)(struct job *, const char *));
void		 sandbox_forget_job(struct sandbox *, struct job *);
/* Tear the container down; persistent disks go too with PRIV_DESTROY_*. */
void		 sandbox_destroy(struct sandbox *, uint32_t, const char *);
void		 sandbox_free(struct sandbox *);
void		 sandbox_priv_dispatch(struct imsg *);
uint64_t	 sandbox_oom_kills(const struct sandbox *);
uint32_t	 sandbox_next_op(struct sandbox *);
int		 sandbox_slot_alloc(uint32_t *);
void		 sandbox_slot_take(uint32_t);
void		 sandbox_slot_free(uint32_t);
void		 sandbox_touch(struct sandbox *);
int		 sandbox_id_valid(const char *);
void		 sandbox_new_id(char [SBX_ID_LEN + 1]);
void		 sandbox_reap(void);
uint32_t	 sandbox_slots_free(void);
void		 sandbox_shutdown(void);
/* Start a sandbox's container; sandbox_want() does it on demand. */
void		 sandbox_start(struct sandbox *);

/* pool.c */
void		 pool_init(void);
void		 pool_free(void);
void		 pool_fill(void);
void		 pool_started(struct sandbox *, const char *);
uint32_t	 pool_wanted(const struct image *);
struct sandbox	*pool_claim(const char *, const char *, const struct limits *,
		    const struct runtime *);
void		 pool_get_stats(struct pool_stats *);
int		 pool_take(struct sandbox *, const char *,
		    const struct limits *);
int		 pool_serves(const struct sandbox *, const struct limits *);

/* reuse.c */
int		 reuse_held(const struct sandbox *);
int		 reuse_offer(struct sandbox *, int);
void		 reuse_init_wiped(struct sandbox *, struct imsg *);
void		 reuse_priv_wiped(struct sandbox *, const struct priv_result *);
struct sandbox	*reuse_claim(const char *, const char *, const struct limits *,
		    const struct runtime *);
void		 reuse_reap(void);
void		 reuse_get_stats(struct reuse_stats *);

/* exec.c */
struct exec_spec {
	const char *const	*argv;
	size_t			 argc;
	const char *const	*env;
	size_t			 envc;
	const char		*cwd;		/* beneath the workspace */
	const void		*stdin_data;
	size_t			 stdin_len;
	uint64_t		 timeout;	/* ms */
	uint64_t		 output;	/* bytes, stdout and stderr */
	uint32_t		 phase;		/* SBX_PHASE_* */
	int			 path_lookup;	/* INIT_EXEC_PATH */
	int			 shell;		/* /bin/sh -c: INIT_EXEC_SH */
	int			 hold;		/* until exec_release() */
	int			 list;		/* INIT_EXEC_LIST, as list_id */
	uint32_t		 list_id;	/* from fileop_expect() */
};

struct exec	*exec_start(struct sandbox *, const struct exec_spec *,
		    struct job *);
void		 exec_cancel(struct exec *);
/* A held exec's child may execute now. */
void		 exec_release(struct exec *);
void		 exec_init_dispatch(struct sandbox *, struct imsg *);
/* The container went away: every exec ends now. */
void		 exec_sandbox_gone(struct sandbox *, const char *);
/* Under runsc: the guard's victim has not gone; end the sandbox's execs. */
void		 exec_oom_stuck(struct sandbox *);
uint32_t	 exec_count(const struct sandbox *);

/* fileop.c */
void		 fileop_start(struct sandbox *, struct job *, uint32_t,
		    const struct init_file *, const char *, const void *);
void		 fileop_init_dispatch(struct sandbox *, struct imsg *);
void		 fileop_sandbox_gone(struct sandbox *, const char *);
void		 fileop_forget_job(struct sandbox *, const struct job *);
int		 fileop_expect(struct sandbox *, struct job *, uint32_t,
		    const struct init_file *, uint32_t *);
void		 fileop_unexpect(struct sandbox *, uint32_t);

/* outlog.c */
void		 outlog_append(struct outlog *, const void *, size_t);
/* "$ first words...": first or words may be NULL. */
void		 outlog_header(struct outlog *, const char *,
		    const char *const *, size_t);
/* The exec's end from its result, or with r NULL from the error. */
void		 outlog_trailer(struct outlog *, const struct sbx_result *,
		    const char *);
size_t		 outlog_span(const struct outlog *, size_t, const uint8_t **);
void		 outlog_free(struct outlog *);

/* job.c: called by exec.c and fileop.c as work completes. */
void		 job_output(struct job *, uint32_t, uint32_t, const void *,
		    size_t);
void		 job_exec_done(struct job *, const struct sbx_result *,
		    const char *);
void		 job_file_data(struct job *, uint32_t, const void *, size_t);
/* type: the operation's IMSG_INIT_*; fd: an OPEN's file, handed over
 * (or -1). */
void		 job_file_done(struct job *, uint32_t, const struct init_done *,
		    const char *, int);
size_t		 job_client_queued(struct job *);
void		 job_dispatch(struct conn *, struct imsg *);
void		 job_conn_down(struct conn *);
void		 job_sandbox_stopped(struct job *, const char *);

/* stored.c */
void		 stored_refresh(void);
struct image	*stored_usable(const char *);

/* probe.c */
/* IMAGES: answered once the probes it needs have ended. */
void		 probe_images(struct job *);
/* An IMAGE frame for img, then a LANG frame per language present. */
void		 probe_answer(struct job *, const struct image *);
/* Is img known to lack lang's tools? */
int		 probe_lacks(const struct image *, const struct language *);
void		 probe_free_all(void);

/* cgroup.c */
/* guard.c: in the privileged helper, for containers under runsc. */
void		 guard_init(struct event_base *, void (*)(const char *),
		    void (*)(const char *));
int		 guard_start(const char *);
void		 guard_stop(const char *);
void		 guard_stop_all(void);

int		 cgroup_init(const char *, char *, size_t);
const char	*cgroup_parent(void);
const char	*cgroup_version(void);
void		 cgroup_describe(char *, size_t);
int		 cgroup_helper_view(char *, size_t);
int		 cgroup_proc_match(const char *, char *, size_t);
int		 cgroup_sandbox_settle(const char *, pid_t, int);
int		 cgroup_resettable(void);
int		 cgroup_swap(void);
int		 cgroup_sampled(void);
uint64_t	 cgroup_exec_memory(const char *, uint32_t);
int		 cgroup_exec_create(const char *, uint32_t);
int		 cgroup_exec_attach(const char *, uint32_t, pid_t);
void		 cgroup_exec_kill(const char *, uint32_t, pid_t);
void		 cgroup_sandbox_reset(const char *);
int		 cgroup_sandbox_quiet(const char *, pid_t);
int		 cgroup_exec_empty(const char *, uint32_t);
void		 cgroup_exec_remove(const char *, uint32_t);
void		 cgroup_exec_usage(const char *, uint32_t, uint64_t *,
		    uint64_t *);
uint64_t	 cgroup_oom_kills(const char *, uint32_t);
int		 cgroup_oom_watch(const char *);
int		 cgroup_oom_waiting(const char *);
int		 cgroup_oom_release(const char *);
void		 cgroup_oom_procs(const char *, char *, size_t);
uint64_t	 cgroup_memory_now(const char *);
int		 cgroup_sandbox_limits(const char *, const struct limits *,
		    const struct limits *);
void		 cgroup_sandbox_kill(const char *, int);
void		 cgroup_sandbox_thaw(const char *);
int		 cgroup_sandbox_remove(const char *);
void		 cgroup_cleanup(int);
/* What cgroup_init() changed above our groups, undone (-n's run). */
void		 cgroup_release(void);
int		 cgroup_landlock_paths(const char *[], size_t);

/* state.c */
int		 state_open(const char *);
void		 state_close(void);
void		 state_load(void);
int		 state_save(const struct sandbox *);
void		 state_touch(const struct sandbox *);
void		 state_delete(const char *);
void		 state_prune_disks(void);

/* audit.c */
struct audit_stats {
	uint64_t		 sent;
	uint64_t		 committed;
	uint64_t		 failed;	/* refused, lost or unsent */
	uint64_t		 waiting;	/* sent, not answered yet */
	uint64_t		 lag_ms;	/* age of the oldest waiting */
};

typedef void	(*audit_done_fn)(void *, int, const char *);
/*
 * Send a record.  With done set, done(arg, ok, error) runs once auditd
 * has committed it, or failed to; when the policy does not require audit,
 * done runs at once with ok.
 */
void		 audit_send(uint32_t, uint32_t, const char *, const char *,
		    const struct audit_body *, audit_done_fn, void *);
void		 audit_cancel(void *);
void		 audit_auditd_up(struct conn *);
void		 audit_flush(void);
void		 audit_auditd_down(void);
void		 audit_dispatch(struct conn *, struct imsg *);
void		 audit_get_stats(struct audit_stats *);

/* control.c */
/* SERVER: what sandboxd is doing, and who is connected. */
int		 control_allowed(uint32_t);
void		 control_server(struct conn *, struct imsg *);

/* priv.c */
int		 priv_fork(struct policy *, enum log_dest, pid_t *);

struct daemon;

/* trial.c: mcp-sandboxd -n starts a container under each runtime used. */
int		 trial_runtimes(struct daemon *);

#endif
