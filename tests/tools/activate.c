/*
 * activate: start a program the way systemd socket activation does, so
 * that the tests can show a daemon serving on sockets it was given.
 *
 *	activate [-l ADDR:PORT | -l /path/to.sock]... -- program [args...]
 *
 * Each listening socket is bound and made to listen here, moved to fds 3,
 * 4, ... in order, and described in LISTEN_FDS, LISTEN_PID (this process,
 * which then becomes the program) and LISTEN_FDNAMES ("mcpd" each).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXSOCKS	8

static int
bind_tcp(const char *spec)
{
	struct addrinfo	 hints, *res;
	char		 host[256], *colon;
	int		 fd, on = 1, e;

	if (strlen(spec) >= sizeof(host))
		errx(1, "%s: too long", spec);
	strcpy(host, spec);
	if ((colon = strrchr(host, ':')) == NULL)
		errx(1, "%s: not ADDR:PORT", spec);
	*colon = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if ((e = getaddrinfo(host, colon + 1, &hints, &res)) != 0)
		errx(1, "%s: %s", spec, gai_strerror(e));
	if ((fd = socket(res->ai_family, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, res->ai_addr, res->ai_addrlen) == -1)
		err(1, "bind %s", spec);
	freeaddrinfo(res);
	return fd;
}

static int
bind_unix(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		errx(1, "%s: too long", path);
	strcpy(sun.sun_path, path);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "bind %s", path);
	return fd;
}

int
main(int argc, char *argv[])
{
	int	 fds[MAXSOCKS], n = 0, i, ch, fd;
	char	 buf[64], names[MAXSOCKS * 5 + 1] = "";

	while ((ch = getopt(argc, argv, "l:")) != -1) {
		if (ch != 'l' || n == MAXSOCKS) {
			fprintf(stderr, "usage: activate [-l ADDR:PORT | -l "
			    "PATH]... -- program [args...]\n");
			return 1;
		}
		fd = optarg[0] == '/' ? bind_unix(optarg) : bind_tcp(optarg);
		if (listen(fd, 128) == -1)
			err(1, "listen %s", optarg);
		fds[n++] = fd;
	}
	if (optind >= argc)
		errx(1, "no program to run");
	/* Out of the way first, then into place from fd 3 on. */
	for (i = 0; i < n; i++)
		if ((fds[i] = fcntl(fds[i], F_DUPFD, 100)) == -1)
			err(1, "dup");
	for (i = 0; i < n; i++) {
		if (dup2(fds[i], 3 + i) == -1)
			err(1, "dup2");
		close(fds[i]);
		strcat(names, i > 0 ? ":mcpd" : "mcpd");
	}
	snprintf(buf, sizeof(buf), "%d", n);
	setenv("LISTEN_FDS", buf, 1);
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	setenv("LISTEN_PID", buf, 1);
	setenv("LISTEN_FDNAMES", names, 1);
	execvp(argv[optind], argv + optind);
	err(1, "%s", argv[optind]);
}
