/*
 * What every daemon of the suite does the same way: the -d -v -f -n
 * options, loading the configuration, logging, signals, and telling
 * systemd about readiness and liveness.
 */
#ifndef MCPD_DAEMON_H
#define MCPD_DAEMON_H

#include <sys/types.h>

#include <limits.h>

#include <event2/event.h>

#include "sd.h"

struct policy;

struct daemon {
	const char		*name;		/* program name for logs */
	const char		*conffile;	/* absolute: read again on HUP */
	char			 confpath[PATH_MAX];
	char			 confdir[PATH_MAX];	/* its directory */
	int			 debug;		/* -d: stay in the foreground */
	int			 verbose;	/* -v, repeatable */
	int			 noaction;	/* -n: check the file, exit */
	int			 privileged;	/* started as root */
	int			 detached;
	struct policy		*conf;
	struct event_base	*base;
	struct event		*ev_sigterm;
	struct event		*ev_sigint;
	struct event		*ev_sighup;
	struct event		*ev_watchdog;
	struct sd_fds		 sdfds;		/* sockets from systemd */
	/*
	 * SIGHUP loads conffile again and merges it into conf
	 * (policy_reload) when reload_who gives the daemon's POLICY_* bits;
	 * reload_check may refuse the new policy first, reload_done acts on
	 * the merged one.  Without reload_who, SIGHUP logs no_reload.
	 */
	int			 reload_who;
	int			(*reload_check)(struct daemon *,
				    const struct policy *);
	void			(*reload_done)(struct daemon *);
	const char		*no_reload;
};

/*
 * Clear the signal mask inherited, parse the command line and load the
 * configuration; with -n, report and exit, after check(d) if not NULL
 * (what only that daemon can try; non-zero fails the check).  Returns
 * with the configuration loaded and logging set up.
 */
void	 daemon_init(struct daemon *, const char *, int, char *[],
	    int (*)(struct daemon *));
/* Detach unless -d; done once, also by daemon_start(). */
void	 daemon_detach(struct daemon *);
/*
 * Detach unless -d, create the event base, and handle SIGTERM and SIGINT
 * (stop the loop), SIGHUP, SIGPIPE and the systemd watchdog.
 */
void	 daemon_start(struct daemon *);
/* READY=1 with a status line for systemd; log it too. */
void	 daemon_ready(struct daemon *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
void	 daemon_status(struct daemon *, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));
/*
 * What SIGHUP does: load the file again, merge it in, and tell systemd
 * (RELOADING=1, then READY=1).  A file that does not load, or that
 * reload_check refuses, changes nothing.
 */
void	 daemon_reload(struct daemon *);
/* Run until a stop signal; then STOPPING=1. */
void	 daemon_loop(struct daemon *);
void	 daemon_free(struct daemon *);
/*
 * The daemon's unix socket: the one systemd passed under this name, or a
 * new one bound at path with the given mode, owner and group.  Call
 * sock_listen() on it after dropping privileges.  Fatal on error.
 */
int	 daemon_listen_unix(struct daemon *, const char *, const char *,
	    mode_t, uid_t, gid_t);
/*
 * mkdir -p with the last component's mode (the others 0755), whatever the
 * umask; what is there already is left as it is.  Fatal on failure.
 */
void	 daemon_mkdir(const char *, mode_t);
/*
 * daemon_mkdir() of a directory that is the suite's own (the run and
 * state directories, the audit log's): if it is there with bits mode does
 * not have, as an older version made it, they are taken away and the log
 * says so.  One that is sticky (shared, as /tmp), or that is another
 * user's when the caller is not root, is left as it is, with a warning.
 */
void	 daemon_mkdir_own(const char *, mode_t);

#endif
