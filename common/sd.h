/*
 * The systemd protocols a daemon needs, without libsystemd: socket
 * activation (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES) and service
 * notification (NOTIFY_SOCKET: READY=1, STATUS=, WATCHDOG=1).
 */
#ifndef MCPD_SD_H
#define MCPD_SD_H

#include <stdint.h>

#define SD_LISTEN_FDS_START	3
#define SD_LISTEN_FDS_MAX	64

struct sd_fds {
	int	 n;
	int	 fd[SD_LISTEN_FDS_MAX];
	char	*name[SD_LISTEN_FDS_MAX];	/* "unknown" when unnamed */
};

/*
 * Collect the sockets systemd passed to this process.  Returns the number
 * of fds (0 when none were passed to us), or -1 when the variables are
 * malformed.  The variables are removed from the environment, so children
 * never see them, and the fds are made close-on-exec.
 */
int	 systemd_listen_fds(struct sd_fds *);
void	 systemd_listen_fds_free(struct sd_fds *);

/*
 * Open the notification socket named by NOTIFY_SOCKET, once, before any
 * sandboxing; later notifications only send on it.  0 when there is none.
 */
int	 systemd_notify_init(void);
/* Send a state such as "READY=1\nSTATUS=...".  -1 on error, else 0. */
int	 systemd_notify(const char *);
int	 systemd_notifyf(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
/* The watchdog interval asked of this process, in microseconds, or 0. */
uint64_t systemd_watchdog_usec(void);

#endif
