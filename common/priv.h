/*
 * Giving up privilege: change of user with every capability dropped
 * (libcap-ng), no_new_privs, a Landlock filesystem/network ruleset where
 * the kernel has Landlock, and a libseccomp allowlist.  Daemons call these
 * after opening what they need and before their event loop, in this order:
 * priv_drop(), priv_no_new_privs(), priv_landlock(), priv_seccomp().
 */
#ifndef MCPD_PRIV_H
#define MCPD_PRIV_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <seccomp.h>

/*
 * Become uid/gid for good: supplementary groups gone, every capability set
 * (effective, permitted, inheritable, bounding, ambient) empty, verified
 * afterwards.  Fatal on any failure.  A process not started as root can
 * only "become" its own uid; anything else is fatal.
 */
void	 priv_drop(uid_t, gid_t);
/* Drop every capability but stay root (for the privileged daemon's
 * helpers).  Fatal on failure. */
void	 priv_drop_caps(void);
/* Keep only the capabilities listed, in every set that matters:
 * effective, permitted and bounding.  Fatal on failure. */
void	 priv_keep_caps(const int *, size_t);
/* Add a supplementary group, for a process that keeps its uid but loses
 * the capabilities that let it past a group-only socket.  Fatal. */
void	 priv_join_group(gid_t);
void	 priv_no_new_privs(void);

#define LL_READ		0x01	/* read files, list directories */
#define LL_WRITE	0x02	/* write, create, remove, make sockets */
#define LL_EXEC		0x04	/* execute */

struct priv_path {
	const char	*path;
	int		 access;	/* LL_* */
};

/* Abstract unix sockets outside this process may still be reached. */
#define LL_ALLOW_ABSTRACT	0x01
/* Processes outside this one's domain may still be signalled. */
#define LL_ALLOW_SIGNALS	0x02

/*
 * Deny all filesystem access except the listed paths (beneath each, with the
 * access given), all TCP bind/connect except connecting to the listed ports
 * (mcpd fetching an OAuth issuer's keys), and,
 * on kernels with scoping, signals and abstract unix sockets outside the
 * process.  Returns the Landlock ABI version applied, or 0 when the kernel
 * has no Landlock (logged once).  Fatal on error.
 */
int	 priv_landlock(const struct priv_path *, size_t, const uint16_t *,
	    size_t, int);

/*
 * One allowlist entry: a system call, optionally restricted on up to three
 * arguments.  Several entries for one call are alternatives.
 */
struct priv_syscall {
	int			 nr;
	unsigned int		 nargs;
	struct scmp_arg_cmp	 arg[3];
};

#define SC(name)		{ SCMP_SYS(name), 0, { { 0, 0, 0, 0 } } }
#define SC_ARG(name, a)		{ SCMP_SYS(name), 1, { a } }
#define SC_ARG2(name, a, b)	{ SCMP_SYS(name), 2, { a, b } }

/*
 * Allow only the listed system calls (x86_64 only; other ABIs, including
 * 32-bit int 0x80 entry, are killed).  Anything else raises SIGSYS: the
 * handler names the call on stderr and the process dies.  Fatal on error.
 */
void	 priv_seccomp(const struct priv_syscall *, size_t);

/* The calls any daemon of the suite needs once in its event loop. */
extern const struct priv_syscall	priv_base_syscalls[];
extern const size_t			priv_nbase_syscalls;

#endif
