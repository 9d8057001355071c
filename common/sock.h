/*
 * Unix socket helpers shared by the daemons and tools.
 */
#ifndef MCPD_SOCK_H
#define MCPD_SOCK_H

#include <sys/types.h>
#include <sys/socket.h>

/*
 * Bind a unix socket path, refusing to start when another process already
 * answers on it; a stale socket file is replaced.  The socket is created
 * under a tight umask and only then given its owner, group and mode.
 * (uid_t)-1 and (gid_t)-1 leave owner and group alone.  Returns the fd or
 * -1 after logging why.
 *
 * The socket is not listening yet: SO_PEERCRED, as clients see it, records
 * the credentials of whoever calls listen(2), so a daemon calls
 * sock_listen() once it has become the user it will serve as.
 */
int	 sock_unix_bind(const char *, mode_t, uid_t, gid_t);
int	 sock_in_use(const char *);
/*
 * listen(2), also on a socket systemd passed (listening again stamps our
 * own credentials on it).  0, or -1 after logging why.
 */
int	 sock_listen(int);

/* Non-blocking connect.  fd, or -1 with errno. */
int	 sock_unix_connect(const char *);

/* SO_PEERCRED of a connected unix socket.  0 or -1 with errno. */
int	 sock_peer_cred(int, struct ucred *);

#endif
