/*
 * Helpers for the fuzz targets: see fuzz.h.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"
#include "policy.h"
#include "util.h"

static char	 tmpdir[PATH_MAX];

/*
 * As daemon_init() sets every daemon up: a write to a peer gone is EPIPE,
 * not death.  FUZZ_VERBOSE set: the daemons' debug lines too, to see the
 * path an input takes.
 */
__attribute__((constructor))
static void
fuzz_process_init(void)
{
	signal(SIGPIPE, SIG_IGN);
	log_init(LOG_DEST_STDERR, getenv("FUZZ_VERBOSE") != NULL, "fuzz");
}

static void
fuzz_cleanup(void)
{
	if (tmpdir[0] != '\0')
		rm_tree(tmpdir);
}

const char *
fuzz_tmpdir(void)
{
	const char	*base;

	if (tmpdir[0] != '\0')
		return tmpdir;
	/* A tmpfs where there is one: the targets sync their files. */
	if ((base = getenv("FUZZ_TMPDIR")) == NULL &&
	    access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	if (base == NULL && (base = getenv("TMPDIR")) == NULL)
		base = "/tmp";
	if (str_fmt(tmpdir, sizeof(tmpdir), "%s/mcpd-fuzz.XXXXXX", base) ==
	    -1 || mkdtemp(tmpdir) == NULL)
		fatal("mkdtemp %s", tmpdir);
	atexit(fuzz_cleanup);
	return tmpdir;
}

char *
fuzz_path(const char *name)
{
	char	*path;

	xasprintf(&path, "%s/%s", fuzz_tmpdir(), name);
	return path;
}

void
fuzz_write(const char *path, const void *data, size_t len)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || write_all(fd, data, len) == -1)
		fatal("%s", path);
	close(fd);
}

struct policy *
fuzz_policy(const char *text)
{
	struct policy	*conf;
	char		*path;

	path = fuzz_path("mcpd.conf");
	fuzz_write(path, text, strlen(text));
	if ((conf = policy_load(path)) == NULL)
		fatalx("the target's own configuration does not load");
	free(path);
	return conf;
}

uint8_t
fuzz_u8(struct fuzz_in *in)
{
	uint8_t	 v = 0;

	if (in->left > 0) {
		v = *in->p++;
		in->left--;
	}
	return v;
}

uint16_t
fuzz_u16(struct fuzz_in *in)
{
	uint16_t	 hi = fuzz_u8(in);

	return (uint16_t)(hi << 8 | fuzz_u8(in));
}

const uint8_t *
fuzz_bytes(struct fuzz_in *in, size_t n, size_t *len)
{
	const uint8_t	*p = in->p;

	if (n > in->left)
		n = in->left;
	in->p += n;
	in->left -= n;
	*len = n;
	return p;
}

ssize_t
fuzz_send(int fd, const uint8_t *p, size_t len, int passfd, int nfds,
    int flags)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(3 * sizeof(int))];
	}		 cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	int		 fds[3] = { passfd, passfd, passfd };

	if (nfds < 0 || nfds > 3)
		nfds = 0;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)(uintptr_t)p;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm.hdr.cmsg_level = SOL_SOCKET;
		cm.hdr.cmsg_type = SCM_RIGHTS;
		cm.hdr.cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(&cm.hdr), fds, (size_t)nfds * sizeof(int));
	}
	return sendmsg(fd, &msg, MSG_NOSIGNAL | flags);
}
