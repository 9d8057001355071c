/*
 * The systemd protocols of common/sd.c: socket activation variables and
 * notification datagrams, against real fds and a real datagram socket.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sd.h"
#include "../tap.h"

static void
setenvl(const char *name, long v)
{
	char	 buf[64];

	snprintf(buf, sizeof(buf), "%ld", v);
	setenv(name, buf, 1);
}

/* Make fds 3 and 4 open, as systemd would pass them. */
static void
two_fds(void)
{
	int	 p[2];

	if (pipe(p) == -1)
		exit(2);
	if (p[0] != 3)
		dup2(p[0], 3);
	if (p[1] != 4)
		dup2(p[1], 4);
	if (p[0] != 3 && p[0] != 4)
		close(p[0]);
	if (p[1] != 3 && p[1] != 4)
		close(p[1]);
}

static void
test_listen_fds(void)
{
	struct sd_fds	 s;
	int		 n;

	unsetenv("LISTEN_PID");
	ok(systemd_listen_fds(&s) == 0 && s.n == 0, "no variables: no fds");

	two_fds();
	setenvl("LISTEN_PID", (long)getpid());
	setenv("LISTEN_FDS", "2", 1);
	setenv("LISTEN_FDNAMES", "http:control", 1);
	n = systemd_listen_fds(&s);
	ok(n == 2 && s.fd[0] == 3 && s.fd[1] == 4, "two fds from 3");
	ok(n == 2 && strcmp(s.name[0], "http") == 0 &&
	    strcmp(s.name[1], "control") == 0, "named from LISTEN_FDNAMES");
	ok((fcntl(3, F_GETFD) & FD_CLOEXEC) && (fcntl(4, F_GETFD) & FD_CLOEXEC),
	    "passed fds made close-on-exec");
	ok(getenv("LISTEN_PID") == NULL && getenv("LISTEN_FDS") == NULL &&
	    getenv("LISTEN_FDNAMES") == NULL,
	    "the variables are gone, so children never see them");
	systemd_listen_fds_free(&s);

	setenvl("LISTEN_PID", (long)getpid());
	setenv("LISTEN_FDS", "2", 1);
	unsetenv("LISTEN_FDNAMES");
	n = systemd_listen_fds(&s);
	ok(n == 2 && strcmp(s.name[1], "unknown") == 0,
	    "fds without names are \"unknown\"");
	systemd_listen_fds_free(&s);

	setenvl("LISTEN_PID", (long)getpid() + 1);
	setenv("LISTEN_FDS", "2", 1);
	ok(systemd_listen_fds(&s) == 0 && getenv("LISTEN_FDS") == NULL,
	    "fds meant for another pid are ignored and the variables cleared");

	setenvl("LISTEN_PID", (long)getpid());
	setenv("LISTEN_FDS", "two", 1);
	ok(systemd_listen_fds(&s) == -1, "a malformed LISTEN_FDS is an error");
	setenv("LISTEN_PID", "-5", 1);
	setenv("LISTEN_FDS", "1", 1);
	ok(systemd_listen_fds(&s) == -1, "a malformed LISTEN_PID is an error");

	close(4);
	setenvl("LISTEN_PID", (long)getpid());
	setenv("LISTEN_FDS", "2", 1);
	ok(systemd_listen_fds(&s) == -1 && errno == EBADF && s.n == 0,
	    "an fd that is not open is an error");
	setenvl("LISTEN_PID", (long)getpid());
	setenv("LISTEN_FDS", "100000", 1);
	ok(systemd_listen_fds(&s) == -1, "an absurd LISTEN_FDS is an error");
	close(3);
}

static int
recv_text(int fd, char *buf, size_t len)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	ssize_t		 n;

	if (poll(&pfd, 1, 2000) != 1)
		return -1;
	if ((n = recv(fd, buf, len - 1, 0)) < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static void
test_notify(void)
{
	struct sockaddr_un	 sun;
	char			 path[] = "/tmp/test_sd.XXXXXX", buf[256];
	char			 sock[128];
	int			 fd;

	unsetenv("NOTIFY_SOCKET");
	ok(systemd_notify_init() == 0 && systemd_notify("READY=1") == 0,
	    "without NOTIFY_SOCKET, notifying is a no-op");

	if (mkdtemp(path) == NULL)
		exit(2);
	snprintf(sock, sizeof(sock), "%s/notify", path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		exit(2);
	setenv("NOTIFY_SOCKET", sock, 1);
	ok(systemd_notify_init() == 0 && getenv("NOTIFY_SOCKET") == NULL,
	    "NOTIFY_SOCKET opened and removed from the environment");
	systemd_notify("READY=1\nSTATUS=up");
	ok(recv_text(fd, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "READY=1\nSTATUS=up") == 0, "READY and STATUS arrive");
	systemd_notifyf("STATUS=%d peers", 2);
	ok(recv_text(fd, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "STATUS=2 peers") == 0, "a formatted status arrives");
	close(fd);
	unlink(sock);
	rmdir(path);
}

static void
test_watchdog(void)
{
	unsetenv("WATCHDOG_USEC");
	ok(systemd_watchdog_usec() == 0, "no watchdog asked for");
	setenv("WATCHDOG_USEC", "3000000", 1);
	unsetenv("WATCHDOG_PID");
	ok(systemd_watchdog_usec() == 3000000, "WATCHDOG_USEC read");
	setenvl("WATCHDOG_PID", (long)getpid());
	ok(systemd_watchdog_usec() == 3000000, "for our pid");
	setenvl("WATCHDOG_PID", (long)getpid() + 1);
	ok(systemd_watchdog_usec() == 0, "not for another pid");
	setenv("WATCHDOG_USEC", "soon", 1);
	unsetenv("WATCHDOG_PID");
	ok(systemd_watchdog_usec() == 0, "a malformed interval is ignored");
}

int
main(void)
{
	log_init(LOG_DEST_STDERR, 0, "test_sd");
	test_listen_fds();
	test_notify();
	test_watchdog();
	return tap_done();
}
