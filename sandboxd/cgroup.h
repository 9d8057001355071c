/*
 * Between cgroup.c, which finds the hierarchy the host mounts and serves
 * the rest of sandboxd, and its two backends: cgroup1.c for the v1
 * hierarchies (a hybrid boot) and cgroup2.c for the unified one.
 */
#ifndef MCPD_SANDBOXD_CGROUP_H
#define MCPD_SANDBOXD_CGROUP_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct limits;

/* A cgroup or cgroup2 line of /proc/self/mountinfo. */
struct cg_mount {
	char		 path[PATH_MAX];
	char		 opts[256];	/* super options: the v1 controllers */
	int		 v2;
};

#define CG_MAX_MOUNTS	16

/*
 * A backend.  An exec of 0 names the groups a container's execs share
 * when they have none of their own ("whole" execs, see exec.c).
 */
struct cg_backend {
	const char	*name;
	/* Can it serve this host?  If not, why not, in err. */
	int		(*probe)(const struct cg_mount *, int, char *, size_t);
	/* Make the parent groups: once, in the main process. */
	int		(*setup)(char *, size_t);
	/* The privileged helper's own view, in its mount namespace. */
	int		(*helper_view)(char *, size_t);
	void		(*describe)(char *, size_t);
	int		(*landlock_paths)(const char *[], size_t);
	int		(*proc_match)(const char *, char *, size_t);
	/* A container just started; guest: runsc's, whose processes stay. */
	int		(*settle)(const char *, pid_t, int);
	int		 resettable;	/* counters can start again at 0 */
	int		(*swap)(void);
	int		(*sampled)(void);
	int		(*exec_create)(const char *, uint32_t);
	int		(*exec_attach)(const char *, uint32_t, pid_t);
	void		(*exec_kill)(const char *, uint32_t, pid_t);
	int		(*exec_empty)(const char *, uint32_t);
	void		(*exec_remove)(const char *, uint32_t);
	void		(*exec_usage)(const char *, uint32_t, uint64_t *,
			    uint64_t *);
	uint64_t	(*exec_memory)(const char *, uint32_t);
	uint64_t	(*oom_kills)(const char *, uint32_t);
	/* OOM kills chosen by sandboxd (guard.c): NULL where it cannot. */
	int		(*oom_watch)(const char *);
	int		(*oom_waiting)(const char *);
	int		(*oom_release)(const char *);
	void		(*oom_procs)(const char *, char *, size_t);
	int		(*sandbox_quiet)(const char *, pid_t);
	void		(*sandbox_reset)(const char *);
	uint64_t	(*memory_now)(const char *);
	int		(*sandbox_limits)(const char *, const struct limits *,
			    const struct limits *);
	void		(*sandbox_kill)(const char *, int);
	void		(*sandbox_thaw)(const char *);
	int		(*sandbox_remove)(const char *);
	void		(*cleanup)(int);
	void		(*release)(void);	/* or NULL: nothing to undo */
};

extern const struct cg_backend	cgroup_v1, cgroup_v2;

/* cgroup.c: what both backends use. */
extern char	 cg_parent[32];
int		 cg_write(const char *, const char *);
ssize_t		 cg_read(const char *, char *, size_t);
uint64_t	 cg_read_u64(const char *);
uint64_t	 cg_read_key(const char *, const char *);
int		 cg_signal_procs(const char *, int, pid_t);
int		 cg_has_procs(const char *);
void		 cg_prune(const char *, int);
int		 cg_each_child(const char *, char,
		    int (*)(const char *, void *), void *);

#endif
