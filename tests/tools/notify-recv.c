/*
 * notify-recv: stand in for systemd's notification socket.  Bind a
 * datagram socket at PATH and print each message received, one per line
 * with newlines inside it shown as "|", until SECONDS pass.
 *
 *	notify-recv PATH SECONDS
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int
main(int argc, char *argv[])
{
	struct sockaddr_un	 sun;
	struct pollfd		 pfd;
	char			 buf[4096];
	uint64_t		 end;
	ssize_t			 n, i;
	int			 fd, left;

	if (argc != 3)
		errx(1, "usage: notify-recv PATH SECONDS");
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (str_copy(sun.sun_path, argv[1], sizeof(sun.sun_path)) == -1)
		errx(1, "path too long");
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		err(1, "socket");
	unlink(argv[1]);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "bind");
	end = mono_ms() + (uint64_t)atoi(argv[2]) * 1000;
	while ((left = (int)(end - mono_ms())) > 0 && mono_ms() < end) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		if ((n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = '|';
		buf[n] = '\0';
		printf("%s\n", buf);
	}
	unlink(argv[1]);
	return 0;
}
