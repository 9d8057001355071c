/*
 * systemd protocols: see sd.h and sd_listen_fds(3), sd_notify(3).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sd.h"
#include "util.h"

static int			 notify_fd = -1;
static struct sockaddr_un	 notify_addr;
static socklen_t		 notify_len;

static int
env_number(const char *name, uint64_t max, uint64_t *out)
{
	const char	*v;

	if ((v = getenv(name)) == NULL)
		return 0;
	if (str_to_u64(v, 0, max, out) != NULL)
		return -1;
	return 1;
}

static void
listen_env_clear(void)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

int
systemd_listen_fds(struct sd_fds *s)
{
	const char	*names;
	char		*copy, *p, *tok;
	uint64_t	 pid, n;
	int		 i, r;

	memset(s, 0, sizeof(*s));
	if ((r = env_number("LISTEN_PID", UINT32_MAX, &pid)) <= 0) {
		listen_env_clear();
		return r;
	}
	if (pid != (uint64_t)getpid()) {
		/* Meant for another process (our parent, say). */
		listen_env_clear();
		return 0;
	}
	if ((r = env_number("LISTEN_FDS", SD_LISTEN_FDS_MAX, &n)) <= 0) {
		listen_env_clear();
		return r;
	}
	names = getenv("LISTEN_FDNAMES");
	copy = xstrdup(names != NULL ? names : "");
	listen_env_clear();
	p = copy;
	for (i = 0; i < (int)n; i++) {
		s->fd[i] = SD_LISTEN_FDS_START + i;
		if (fcntl(s->fd[i], F_GETFD) == -1) {
			free(copy);
			systemd_listen_fds_free(s);
			errno = EBADF;
			return -1;
		}
		fd_set_cloexec(s->fd[i]);
		tok = p != NULL ? strsep(&p, ":") : NULL;
		s->name[i] = xstrdup(tok != NULL && *tok != '\0' ? tok :
		    "unknown");
		s->n = i + 1;
	}
	free(copy);
	return s->n;
}

void
systemd_listen_fds_free(struct sd_fds *s)
{
	int	 i;

	for (i = 0; i < s->n; i++)
		free(s->name[i]);
	memset(s, 0, sizeof(*s));
}

int
systemd_notify_init(void)
{
	const char	*path;
	size_t		 len;

	if (notify_fd != -1)
		return 0;
	if ((path = getenv("NOTIFY_SOCKET")) == NULL || *path == '\0')
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') ||
	    len >= sizeof(notify_addr.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, path, len);
	if (path[0] == '@')
		notify_addr.sun_path[0] = '\0';	/* abstract namespace */
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (path[0] == '@' ? 0 : 1));
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsetenv("NOTIFY_SOCKET");
	return notify_fd == -1 ? -1 : 0;
}

int
systemd_notify(const char *state)
{
	ssize_t	 n;

	if (notify_fd == -1)
		return 0;
	do {
		n = sendto(notify_fd, state, strlen(state), MSG_NOSIGNAL,
		    (struct sockaddr *)&notify_addr, notify_len);
	} while (n == -1 && errno == EINTR);
	return n == -1 ? -1 : 0;
}

int
systemd_notifyf(const char *fmt, ...)
{
	char	 buf[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return systemd_notify(buf);
}

uint64_t
systemd_watchdog_usec(void)
{
	uint64_t	 usec, pid;

	if (env_number("WATCHDOG_USEC", UINT64_MAX, &usec) <= 0 || usec == 0)
		return 0;
	if (env_number("WATCHDOG_PID", UINT32_MAX, &pid) == 1 &&
	    pid != (uint64_t)getpid())
		return 0;
	return usec;
}
