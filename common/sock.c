/*
 * Unix socket helpers: see sock.h.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sock.h"
#include "util.h"

#define LISTEN_BACKLOG	64

static int
sock_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (str_copy(sun->sun_path, path, sizeof(sun->sun_path)) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* 1 when a live process answers on path. */
int
sock_in_use(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, live;

	if (sock_addr(path, &sun) == -1)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	live = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return live;
}

int
sock_unix_bind(const char *path, mode_t mode, uid_t owner, gid_t group)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd;

	if (sock_addr(path, &sun) == -1) {
		log_warnx("%s: socket path too long", path);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s: exists and is not a socket", path);
			return -1;
		}
		if (sock_in_use(path)) {
			log_warnx("%s: another instance is already listening",
			    path);
			return -1;
		}
		if (unlink(path) == -1) {
			log_warn("%s: unlink stale socket", path);
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		log_warn("%s: bind", path);
		close(fd);
		return -1;
	}
	umask(old);
	if ((owner != (uid_t)-1 || group != (gid_t)-1) &&
	    chown(path, owner, group) == -1) {
		log_warn("%s: chown", path);
		goto fail;
	}
	if (chmod(path, mode) == -1) {
		log_warn("%s: chmod", path);
		goto fail;
	}
	return fd;
 fail:
	unlink(path);
	close(fd);
	return -1;
}

int
sock_listen(int fd)
{
	if (listen(fd, LISTEN_BACKLOG) == -1) {
		log_warn("listen");
		return -1;
	}
	return 0;
}

int
sock_unix_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, saved;

	if (sock_addr(path, &sun) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
sock_peer_cred(int fd, struct ucred *uc)
{
	socklen_t	 len = sizeof(*uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) == -1)
		return -1;
	if (len != sizeof(*uc)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
