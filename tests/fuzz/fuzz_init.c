/*
 * Fuzz target: sandbox-init's side of its protocol (sandboxd/init/): the
 * hello, the fds an exec waits for, EXEC frames and their strings, the
 * shell words of sh -c scripts, file requests, paths and DATA, all read
 * from its control socket as sandboxd would send them, fds included.
 *
 * sandbox-init's sources, and the imsg code it links, are compiled into
 * this file, so that what a process would lose at its exit can be reset
 * between inputs, and its exit be the end of an input.  Its workspace is no directory at all
 * (-1): every open beneath it fails with EBADF, so no file is touched
 * and no process started (exec_start() forks only after opening the
 * exec's cwd); every request is still parsed, checked and answered.
 *
 * Input: chunks, each [ctl][length, 2 bytes][bytes] sent with one
 * sendmsg(2); ctl bits 0-1: how many descriptors go with it.  Then
 * sandboxd hangs up, and sandbox-init exits.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

/*
 * What sandbox-init allocates is counted, so that its exit can free it:
 * the process is gone then, and its memory with it.
 */
#define TRACK_MAX	4096

static void	*tracked[TRACK_MAX];
static size_t	 ntracked;
static jmp_buf	 init_gone;
static int	 init_status;

static void
track(void *p)
{
	if (p == NULL)
		return;
	if (ntracked == TRACK_MAX)
		abort();
	tracked[ntracked++] = p;
}

static void *
fuzz_calloc(size_t n, size_t size)
{
	void	*p = calloc(n, size);

	track(p);
	return p;
}

static void *
fuzz_malloc(size_t size)
{
	void	*p = malloc(size);

	track(p);
	return p;
}

static void
fuzz_free(void *p)
{
	size_t	 i;

	for (i = 0; i < ntracked; i++)
		if (tracked[i] == p) {
			tracked[i] = tracked[--ntracked];
			break;
		}
	free(p);
}

__attribute__((__noreturn__))
static void
fuzz_exit(int status)
{
	init_status = status;
	longjmp(init_gone, 1);
}

int	sandbox_init_main(int, char *[]);

#define main		sandbox_init_main
#define exit(s)		fuzz_exit(s)
#define calloc(n, s)	fuzz_calloc(n, s)
#define malloc(s)	fuzz_malloc(s)
#define free(p)		fuzz_free(p)
#include "../../common/imsg.c"
#include "../../sandboxd/init/init.c"
#include "../../sandboxd/init/exec.c"
#include "../../sandboxd/init/files.c"
#undef main
#undef exit
#undef calloc
#undef malloc
#undef free

static int	 devnull = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		err(1, "/dev/null");
	/* Writes to a closed socket come back as EPIPE, as in init. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* One turn of init_loop(): answers out, requests in. */
static void
init_turn(int peer)
{
	struct pollfd	 pfd;
	char		 buf[65536];

	file_step();
	if (imsgbuf_queued(&ibuf) > 0)
		(void)imsgbuf_write(&ibuf);
	while (read(peer, buf, sizeof(buf)) > 0)
		;
	pfd.fd = ibuf.fd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 0) == 1)
		init_read();
}

/*
 * What sandbox-init holds when it exits, it holds no more.  After a
 * violation that is anything, even what it had in hand; after sandboxd
 * hung up, what it allocated and still holds in its lists.
 */
static void
init_reset(void)
{
	struct op	*op;
	int		 i;

	if (init_status != 0) {
		for (i = 0; i < ibuf.nrfds; i++)
			close(ibuf.rfds[i].fd);
		while (ntracked > 0)
			free(tracked[--ntracked]);
		memset(&ibuf, 0, sizeof(ibuf));
		TAILQ_INIT(&ops);
	}
	while ((op = TAILQ_FIRST(&ops)) != NULL) {
		if (op->ls != NULL) {
			for (i = 0; i < op->ls->depth; i++)
				closedir(op->ls->dirs[i]);
			fuzz_free(op->ls);
		}
		TAILQ_REMOVE(&ops, op, entry);
		fuzz_free(op);
	}
	nops = 0;
	for (i = 0; i < nheld; i++)
		close(held[i].fd);
	nheld = 0;
	hello_done = 0;
	if (init_status == 0)
		imsgbuf_clear(&ibuf);
	if (ntracked != 0) {
		fprintf(stderr, "sandbox-init leaked %zu allocations\n",
		    ntracked);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_hello	 hello;
	struct fuzz_in		 in = { data, size };
	const uint8_t		*p;
	size_t			 len;
	uint8_t			 ctl;
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0, sv) == -1)
		err(1, "socketpair");
	wsfd = -1;
	imsgbuf_init(&ibuf, sv[1], PROTO_INIT_FRAME, IMSGBUF_FDPASS);
	init_status = 0;
	if (setjmp(init_gone) == 0) {
		proto_hello_init(&hello, ROLE_SANDBOX_INIT);
		init_send(IMSG_HELLO, 0, &hello, sizeof(hello));
		while (in.left > 0) {
			ctl = fuzz_u8(&in);
			p = fuzz_bytes(&in, fuzz_u16(&in), &len);
			/* What does not fit is lost: init stopped reading. */
			if (len > 0)
				(void)fuzz_send(sv[0], p, len, devnull, ctl & 3,
				    MSG_DONTWAIT);
			init_turn(sv[0]);
		}
		/* sandboxd is done with it. */
		shutdown(sv[0], SHUT_WR);
		for (;;)
			init_turn(sv[0]);
	}
	init_reset();
	close(sv[0]);
	close(sv[1]);
	return 0;
}
