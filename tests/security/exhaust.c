/*
 * Hostile code against the limits a whole host shares, run by
 * tests/security/hostlim.py inside one sandbox while another sandbox and
 * the host go on; built inside the sandbox with the image's cc, and on
 * the host for the host's side of each check.
 *
 *	exhaust hold KIND SECONDS
 *		Take as much of KIND as the kernel gives (each kind has a
 *		cap, so that a missing limit shows without harming the
 *		host), print "RESULT HELD <count> <word>", the word the
 *		errno that stopped it or CAP, and hold it until SECONDS
 *		have passed or /tmp/release exists.
 *	exhaust probe KIND
 *		Take one of KIND: "RESULT SUCCEEDED", or the errno's name.
 *
 * The kinds are in the table at the end, each with what one of it is.
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/aio_abi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MiB	(1L << 20)

static const struct {
	int		 e;
	const char	*name;
} errnames[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EACCES, "EACCES" },
	{ ENOSYS, "ENOSYS" }, { EINVAL, "EINVAL" }, { EMFILE, "EMFILE" },
	{ ENFILE, "ENFILE" }, { ENOSPC, "ENOSPC" }, { EAGAIN, "EAGAIN" },
	{ ENOMEM, "ENOMEM" }, { EEXIST, "EEXIST" }, { EIO, "EIO" },
	{ ETOOMANYREFS, "ETOOMANYREFS" }, { EROFS, "EROFS" },
	{ ENODEV, "ENODEV" }, { ENXIO, "ENXIO" }, { EBADF, "EBADF" },
	{ EFBIG, "EFBIG" }, { ENOBUFS, "ENOBUFS" },
};

static const char *
errname(int e)
{
	static char	 buf[32];
	size_t		 i;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* One of each kind; 0, or -1 with errno.  The caps bound a hold. */
static int	 counter;	/* a name per mqueue, per process */
static pid_t	 children[128];	/* killed and reaped when a hold ends */
static int	 nchildren;
/* System V objects outlive their process: removed when a hold ends. */
static struct {
	int	 type;		/* 's'hm, 'm'sg, se'M' */
	int	 id;
}		 ipcs[40000];
static int	 nipcs;

static int
ipc_keep(int type, int id)
{
	if (id == -1)
		return -1;
	if (nipcs < (int)(sizeof(ipcs) / sizeof(ipcs[0]))) {
		ipcs[nipcs].type = type;
		ipcs[nipcs++].id = id;
	}
	return 0;
}

static pid_t
child(void)
{
	pid_t	 p;

	if (nchildren == (int)(sizeof(children) / sizeof(children[0]))) {
		errno = EAGAIN;
		return -1;
	}
	if ((p = fork()) > 0)
		children[nchildren++] = p;
	return p;
}

static int
one_pty(void)
{
	return open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC) == -1 ? -1 : 0;
}

static int
one_aio(void)
{
	aio_context_t	 ctx = 0;

	/* The unit the host counts is an event; 1024 at a time. */
	return syscall(SYS_io_setup, 1024, &ctx) == -1 ? -1 : 0;
}

static int
one_inotify(void)
{
	return inotify_init1(IN_CLOEXEC) == -1 ? -1 : 0;
}

static int	 watch_fd = -1;
static long	 watch_n;

static int
watch_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	if (inotify_add_watch(watch_fd, path, IN_ATTRIB | IN_DONT_FOLLOW) ==
	    -1)
		return errno == EACCES || errno == ENOENT ? 0 : errno;
	return ++watch_n >= 400000 ? -1 : 0;
}

/*
 * Watches are taken a tree at a time: /usr holds some 200,000 inodes, and
 * each new instance may watch them all again.
 */
static long
hold_watch(int *err)
{
	for (;;) {
		int	 r;

		if ((watch_fd = inotify_init1(IN_CLOEXEC)) == -1) {
			*err = errno;
			return watch_n;
		}
		r = nftw("/usr", watch_one, 64, FTW_PHYS);
		if (r == -1) {
			*err = 0;
			return watch_n;
		}
		if (r != 0) {
			*err = r;
			return watch_n;
		}
	}
}

static int
one_watch(void)
{
	int	 fd;

	if ((fd = inotify_init1(IN_CLOEXEC)) == -1)
		return -1;
	return inotify_add_watch(fd, "/", IN_ATTRIB) == -1 ? -1 : 0;
}

static int
one_fanotify(void)
{
	/* FAN_CLASS_NOTIF | FAN_REPORT_FID: what an unprivileged user may. */
	return syscall(SYS_fanotify_init, 0x200, 0) == -1 ? -1 : 0;
}

static int
one_mq(void)
{
	char	 name[64];

	snprintf(name, sizeof(name), "/mcpd-exhaust-%d-%d", (int)getpid(),
	    counter++);
	if (mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, NULL) == (mqd_t)-1)
		return -1;
	/* Gone from the name space, kept while the descriptor is open. */
	mq_unlink(name);
	return 0;
}

static int
one_sigq(void)
{
	union sigval	 v = { 0 };
	sigset_t	 s;

	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &s, NULL);
	return sigqueue(getpid(), SIGRTMIN, v);
}

static int
one_timer(void)
{
	timer_t	 t;

	return timer_create(CLOCK_MONOTONIC, NULL, &t);
}

static int
one_shm(void)
{
	return ipc_keep('s', shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600));
}

static int
one_shmlock(void)
{
	int	 id;

	if ((id = shmget(IPC_PRIVATE, MiB, IPC_CREAT | 0600)) == -1)
		return -1;
	if (shmctl(id, SHM_LOCK, NULL) == -1) {
		int e = errno;

		shmctl(id, IPC_RMID, NULL);
		errno = e;
		return -1;
	}
	return ipc_keep('s', id);
}

static int
one_msg(void)
{
	return ipc_keep('m', msgget(IPC_PRIVATE, IPC_CREAT | 0600));
}

/* A message queue, full: 16 KiB of kernel memory each by default. */
static int
one_msgfill(void)
{
	static struct {
		/* cppcheck-suppress unusedStructMember */
		long	 mtype;
		char	 mtext[4096];
	}		 m = { 1, { 0 } };
	int		 id;

	if (ipc_keep('m', id = msgget(IPC_PRIVATE, IPC_CREAT | 0600)) == -1)
		return -1;
	while (msgsnd(id, &m, sizeof(m.mtext), IPC_NOWAIT) == 0)
		;
	return errno == EAGAIN ? 0 : -1;
}

/* A memory file of 1 MiB, written. */
static int
one_memfd(void)
{
	static char	 buf[65536];
	int		 fd, i;

	if ((fd = memfd_create("exhaust", MFD_CLOEXEC)) == -1)
		return -1;
	for (i = 0; i < 16; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	return 0;
}

static int
one_sem(void)
{
	return ipc_keep('M', semget(IPC_PRIVATE, 1, IPC_CREAT | 0600));
}

static int
one_file(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC) == -1 ? -1 : 0;
}

static int
one_fork(void)
{
	pid_t	 p;

	if ((p = child()) == -1)
		return -1;
	if (p == 0) {
		pause();
		_exit(0);
	}
	return 0;
}

static int
one_random(void)
{
	char	 buf[64];

	return getrandom(buf, sizeof(buf), GRND_RANDOM | GRND_NONBLOCK) ==
	    (ssize_t)sizeof(buf) ? 0 : -1;
}

/* Fill a pair of sockets both ways; the bytes queued go to *bytes. */
static int
fill_pair(int a, int b, long *bytes)
{
	static char	 buf[65536];
	int		 i, s[2] = { a, b };

	for (i = 0; i < 2; i++) {
		ssize_t	 n;

		fcntl(s[i], F_SETFL, O_NONBLOCK);
		while ((n = write(s[i], buf, sizeof(buf))) > 0)
			*bytes += n;
	}
	return 0;
}

static long	 sock_bytes;

/* Socket buffers stop at 1 GiB: four times a sandbox's memory. */
static int
sock_cap(void)
{
	if (sock_bytes < 1024 * MiB)
		return 0;
	errno = 0;
	return -1;
}

static int
one_unixbuf(void)
{
	int	 sv[2];

	if (sock_cap() == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	return fill_pair(sv[0], sv[1], &sock_bytes);
}

static int
one_tcpbuf(void)
{
	static int		 l = -1;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 c, a;

	if (sock_cap() == -1)
		return -1;
	if (l == -1) {
		if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			return -1;
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(l, 64) == -1)
			return -1;
	}
	if (getsockname(l, (struct sockaddr *)&sin, &len) == -1 ||
	    (c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(c, (struct sockaddr *)&sin, len) == -1 ||
	    (a = accept4(l, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return -1;
	return fill_pair(c, a, &sock_bytes);
}

/* A loopback UDP socket that never reads, sent to until its queue is full. */
static int
one_udpbuf(void)
{
	static char		 buf[60000];
	static int		 tx = -1;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 rx, i;

	if (tx == -1 && (tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if ((rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(rx, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    getsockname(rx, (struct sockaddr *)&sin, &len) == -1)
		return -1;
	/* A full queue drops what comes next; 16 datagrams overfill it. */
	for (i = 0; i < 16; i++)
		(void)sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&sin,
		    len);
	return 0;
}

/* A pipe as large as it may be, full. */
static int
one_pipe(void)
{
	static char	 buf[65536];
	int		 p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	(void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	while (write(p[1], buf, sizeof(buf)) > 0)
		;
	return 0;
}

/* A descriptor in flight over a unix socket, never received. */
static int
one_inflight(void)
{
	static int	 sv[2] = { -1, -1 };
	struct msghdr	 m;
	struct cmsghdr	*cm;
	struct iovec	 io;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	}		 u;
	char		 c = 'x';
	int		 fd = 0;

	if (sv[0] == -1 && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0,
	    sv) == -1)
		return -1;
	memset(&m, 0, sizeof(m));
	io.iov_base = &c;
	io.iov_len = 1;
	m.msg_iov = &io;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sv[0], &m, MSG_DONTWAIT) == -1) {
		/* A full queue: a new pair, the same user. */
		if (errno != EAGAIN)
			return -1;
		sv[0] = sv[1] = -1;
		return one_inflight();
	}
	return 0;
}

static int
one_epoll(void)
{
	static int	 ep = -1, fds[1024], nfds;
	struct epoll_event ev = { .events = EPOLLIN };
	int		 p[2], i;

	if (nfds == 0) {
		if (pipe2(p, O_CLOEXEC) == -1)
			return -1;
		for (fds[nfds++] = p[0]; nfds < 1024; nfds++)
			if ((fds[nfds] = dup(p[0])) == -1)
				return -1;
	}
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return -1;
	/* A thousand watches an instance: the unit is 1024. */
	for (i = 0; i < nfds; i++)
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) == -1)
			return -1;
	return 0;
}

/* The descriptor limit past its hard limit, up to fs.nr_open. */
static int
one_nofile(void)
{
	struct rlimit	 rl = { 1 << 20, 1 << 20 };

	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* Processes, each holding as many descriptors as its rlimit allows. */
static long
hold_files(int *err)
{
	long		 n = 0, got;
	int		 p[2], i;
	pid_t		 pid;

	if (pipe(p) == -1) {
		*err = errno;
		return 0;
	}
	for (i = 0; i < 56; i++) {
		if ((pid = child()) == -1) {
			*err = errno;
			break;
		}
		if (pid == 0) {
			got = 0;
			close(p[0]);
			while (open("/dev/null", O_RDONLY) != -1)
				got++;
			if (write(p[1], &got, sizeof(got)) != sizeof(got))
				_exit(1);
			pause();
			_exit(0);
		}
		if (read(p[0], &got, sizeof(got)) == sizeof(got))
			n += got;
	}
	close(p[0]);
	close(p[1]);
	if (i == 56)
		*err = 0;
	return n;
}

static const struct kind {
	const char	*name;
	int		(*one)(void);
	long		(*hold)(int *);	/* instead of one() in a loop */
	long		 cap;		/* of one() calls in a hold */
	const char	*unit;
} kinds[] = {
	{ "pty", one_pty, NULL, 4000, "ptys" },
	{ "aio", one_aio, NULL, 256, "contexts of 1024 events" },
	{ "inotify", one_inotify, NULL, 4000, "instances" },
	{ "watch", one_watch, hold_watch, 0, "watches" },
	{ "fanotify", one_fanotify, NULL, 4000, "groups" },
	{ "mq", one_mq, NULL, 4000, "queues" },
	{ "sigq", one_sigq, NULL, 200000, "signals" },
	{ "timer", one_timer, NULL, 200000, "timers" },
	{ "shm", one_shm, NULL, 100000, "segments" },
	{ "shmlock", one_shmlock, NULL, 1024, "MiB locked" },
	{ "msg", one_msg, NULL, 100000, "queues" },
	{ "msgfill", one_msgfill, NULL, 100000, "full queues" },
	{ "sem", one_sem, NULL, 100000, "sets" },
	{ "memfd", one_memfd, NULL, 4000, "MiB in memory files" },
	{ "file", one_file, hold_files, 0, "files" },
	{ "fork", one_fork, NULL, 100000, "processes" },
	{ "random", one_random, NULL, 100000, "reads of 64 bytes" },
	{ "unixbuf", one_unixbuf, NULL, 2000, "socket pairs" },
	{ "tcpbuf", one_tcpbuf, NULL, 500, "connections" },
	{ "udpbuf", one_udpbuf, NULL, 2000, "sockets" },
	{ "pipe", one_pipe, NULL, 2000, "pipes" },
	{ "inflight", one_inflight, NULL, 200000, "descriptors" },
	{ "epoll", one_epoll, NULL, 500, "instances of 1024 watches" },
	{ "nofile", one_nofile, NULL, 1, "raises" },
};

static const struct kind *
kind_of(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	fprintf(stderr, "exhaust: no kind %s\n", name);
	exit(2);
}

static void
release(void)
{
	int	 i;

	for (i = 0; i < nchildren; i++)
		kill(children[i], SIGKILL);
	for (i = 0; i < nchildren; i++)
		waitpid(children[i], NULL, 0);
	nchildren = 0;
	for (i = 0; i < nipcs; i++)
		if (ipcs[i].type == 's')
			shmctl(ipcs[i].id, IPC_RMID, NULL);
		else if (ipcs[i].type == 'm')
			msgctl(ipcs[i].id, IPC_RMID, NULL);
		else
			semctl(ipcs[i].id, 0, IPC_RMID);
	nipcs = 0;
}

static void
hold(const struct kind *k, int secs)
{
	time_t	 end = time(NULL) + secs;
	long	 n = 0;
	int	 err = 0;

	if (k->hold != NULL)
		n = k->hold(&err);
	else {
		while (n < k->cap && k->one() == 0)
			n++;
		err = n < k->cap ? errno : 0;	/* 0 at a cap of its own */
	}
	/* Processes: a few back, or the test could not look at the hold. */
	if (k->one == one_fork)
		while (nchildren > 0 && n - nchildren < 4) {
			nchildren--;
			kill(children[nchildren], SIGKILL);
			waitpid(children[nchildren], NULL, 0);
		}
	printf("RESULT HELD %ld %s", n, err != 0 ? errname(err) : "CAP");
	if (sock_bytes > 0)
		printf(" %ld MiB", sock_bytes / MiB);
	printf(" (%s)\n", k->unit);
	fflush(stdout);
	while (time(NULL) < end && access("/tmp/release", F_OK) == -1)
		usleep(100000);
	release();
}

int
main(int argc, char *argv[])
{
	const struct kind	*k;

	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		hold(kind_of(argv[2]), atoi(argv[3]));
	else if (argc == 3 && strcmp(argv[1], "probe") == 0) {
		k = kind_of(argv[2]);
		printf("RESULT %s\n", k->one() == 0 ? "SUCCEEDED" :
		    errname(errno));
		release();
	} else {
		fprintf(stderr, "usage: exhaust hold kind seconds | "
		    "exhaust probe kind\n");
		return 2;
	}
	return 0;
}
