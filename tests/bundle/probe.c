/*
 * A static probe that test_bundle runs inside a real container: it tries
 * system calls the seccomp profile must refuse or allow and prints one
 * line each, "<name> ok" or "<name> <ERRNO NAME>", or for the foreign
 * system call entry points how a child that used them ended.
 *
 * Built by the test with "cc -static -pthread", with sandbox-init's
 * filter loader (sandboxd/init/scfilter.c); not part of the suite.
 * "probe -f file" loads the seccomp program in file first.
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scfilter.h"

#ifndef AF_ALG
#define AF_ALG		38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif

extern const unsigned int __rseq_size;

static void
report(const char *name, long r)
{
	if (r == -1)
		printf("%s %s\n", name, strerrorname_np(errno));
	else
		printf("%s ok\n", name);
}

#define TRY(name, call)	do { errno = 0; report(name, (long)(call)); } while (0)

/* An fd-returning call: report it, close what it gave. */
static void
tryfd(const char *name, long fd)
{
	report(name, fd);
	if (fd >= 0)
		close((int)fd);
}

#define TRYFD(name, call) do { errno = 0; tryfd(name, (long)(call)); } while (0)

/* A raw clone: the child leaves at once; "ok" once it is reaped. */
static void
tryclone(const char *name, unsigned long flags)
{
	long	 pid;
	int	 st;

	errno = 0;
	pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, &st, 0) != pid)
		pid = -1;
	report(name, pid);
}

/* Run fn in a child and say how the child ended. */
static void
trychild(const char *name, void (*fn)(void))
{
	pid_t	 pid;
	int	 st;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		fn();
		_exit(0);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid)
		printf("%s fork-failed\n", name);
	else if (WIFSIGNALED(st))
		printf("%s killed-%s\n", name, sigabbrev_np(WTERMSIG(st)));
	else
		printf("%s exit-%d\n", name, WEXITSTATUS(st));
}

/* getpid through the i386 entry point: number 20 there. */
static void
int80(void)
{
	long	 r = 20;

	__asm__ volatile ("int $0x80" : "+a"(r) : :
	    "r8", "r9", "r10", "r11", "memory");
	printf("int80-returned %ld\n", r);
	fflush(stdout);
	_exit(r == getpid() ? 0 : 3);
}

/* getpid through the x32 numbering. */
static void
x32(void)
{
	long	 r = syscall(0x40000000 | SYS_getpid);

	printf("x32-returned %ld\n", r);
	fflush(stdout);
	_exit(r == getpid() ? 0 : 3);
}

static void *
thread(void *arg)
{
	return arg;
}

static void
refused(void)
{
	struct clone_args	 ca;
	struct perf_event_attr	 pa;
	struct io_uring_params	 up;
	aio_context_t		 aio = 0;
	struct timespec		 ts = { 0, 0 };
	struct timeval		 tv = { 0, 0 };
	struct timex		 tx;
	struct iovec		 l, r;
	char			 buf[64], fh[64];
	long			 pid;
	int			 mnt;

	TRY("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
	TRY("umount2", umount2("/tmp", MNT_DETACH));
	TRY("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	TRY("chroot", chroot("/tmp"));
	TRYFD("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/tmp", 0));
	TRY("move_mount", syscall(SYS_move_mount, -1, "", -1, "", 0));
	TRYFD("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	TRYFD("fspick", syscall(SYS_fspick, AT_FDCWD, "/tmp", 0));
	TRY("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
	TRYFD("fsmount", syscall(SYS_fsmount, -1, 0, 0));
	TRY("mount_setattr", syscall(SYS_mount_setattr, -1, "", 0, NULL, 0));

	TRY("unshare-user", unshare(CLONE_NEWUSER));
	TRY("unshare-mount", unshare(CLONE_NEWNS));
	TRY("setns", setns(0, 0));
	tryclone("clone-newns", CLONE_NEWNS);
	tryclone("clone-newuser", CLONE_NEWUSER);
	tryclone("clone-newnet", CLONE_NEWNET);
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	errno = 0;
	if ((pid = syscall(SYS_clone3, &ca, sizeof(ca))) == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	report("clone3", pid);
	/*
	 * A call newer than any the profile names (mseal, Linux 6.10):
	 * ENOSYS from the filter's ENOSYS prologue, or from an older kernel.
	 */
	errno = 0;
	report("newer-than-profile", syscall(462, NULL, 0UL, 0UL));

	TRY("ptrace", ptrace(PTRACE_TRACEME, 0, 0, 0));
	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	r.iov_base = fh;
	r.iov_len = sizeof(buf);
	TRY("process_vm_readv", process_vm_readv(getpid(), &l, 1, &r, 1, 0));
	TRY("process_vm_writev", process_vm_writev(getpid(), &l, 1, &r, 1,
	    0));
	TRY("kcmp", syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0));
	TRYFD("pidfd_getfd", syscall(SYS_pidfd_getfd, -1, 0, 0));

	TRY("keyctl", syscall(SYS_keyctl, 0, -3, 0));
	TRY("add_key", syscall(SYS_add_key, "user", "probe", "x", 1, -3));
	TRY("request_key", syscall(SYS_request_key, "user", "probe", NULL,
	    0));
	TRYFD("bpf", syscall(SYS_bpf, 0, NULL, 0));
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	pa.exclude_kernel = 1;
	TRYFD("perf_event_open", syscall(SYS_perf_event_open, &pa, 0, -1, -1,
	    0));
	TRYFD("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
	memset(&up, 0, sizeof(up));
	TRYFD("io_uring_setup", syscall(SYS_io_uring_setup, 1, &up));
	TRY("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL,
	    0));
	TRY("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL,
	    0));
	/* Linux AIO and inotify draw on counters the whole host shares. */
	TRY("io_setup", syscall(SYS_io_setup, 1, &aio));
	TRY("io_submit", syscall(SYS_io_submit, 0, 0, NULL));
	TRY("io_getevents", syscall(SYS_io_getevents, 0, 0, 0, NULL, NULL));
	TRY("io_destroy", syscall(SYS_io_destroy, 0));
	TRYFD("inotify_init", syscall(SYS_inotify_init));
	TRYFD("inotify_init1", inotify_init1(IN_CLOEXEC));
	TRY("inotify_add_watch", inotify_add_watch(-1, "/tmp", IN_CREATE));

	TRY("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	TRY("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, "",
	    0));
	TRY("init_module", syscall(SYS_init_module, NULL, 0, ""));
	TRY("finit_module", syscall(SYS_finit_module, -1, "", 0));
	TRY("delete_module", syscall(SYS_delete_module, "probe", 0));
	memset(fh, 0, sizeof(fh));
	TRY("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD,
	    "/", fh, &mnt, 0));
	TRYFD("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD,
	    fh, O_RDONLY));

	TRY("personality-addr-no-randomize", personality(ADDR_NO_RANDOMIZE));
	TRY("personality-read-implies-exec", personality(READ_IMPLIES_EXEC));
	TRY("personality-mmap-page-zero", personality(MMAP_PAGE_ZERO));

	TRY("clock_settime", clock_settime(CLOCK_REALTIME, &ts));
	TRY("settimeofday", settimeofday(&tv, NULL));
	memset(&tx, 0, sizeof(tx));
	TRY("adjtimex", adjtimex(&tx));
	TRY("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));

	TRYFD("socket-packet", socket(AF_PACKET, SOCK_RAW, 0));
	TRYFD("socket-alg", socket(AF_ALG, SOCK_SEQPACKET, 0));
	TRYFD("socket-vsock", socket(AF_VSOCK, SOCK_STREAM, 0));
	TRYFD("socket-key", socket(AF_KEY, SOCK_RAW, 2));
	TRYFD("socket-bluetooth", socket(AF_BLUETOOTH, SOCK_STREAM, 0));
	TRY("socketpair-packet", socketpair(AF_PACKET, SOCK_RAW, 0,
	    (int *)buf));

	TRY("acct", acct(NULL));
	TRY("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
	TRY("swapon", syscall(SYS_swapon, "/nonexistent", 0));
	TRY("swapoff", syscall(SYS_swapoff, "/nonexistent"));
	TRY("syslog", syscall(SYS_syslog, 10, NULL, 0));
	TRY("quotactl", syscall(SYS_quotactl, 0, "/", 0, NULL));
	TRY("vhangup", syscall(SYS_vhangup));
	TRY("iopl", syscall(SYS_iopl, 0));
	TRY("ioperm", syscall(SYS_ioperm, 0, 0, 0));
	TRY("uselib", syscall(SYS_uselib, "/nonexistent"));
	TRY("ustat", syscall(SYS_ustat, 0, buf));
	TRY("sysfs", syscall(SYS_sysfs, 3));
	TRY("lookup_dcookie", syscall(SYS_lookup_dcookie, 0, NULL, 0));
	TRYFD("fanotify_init", syscall(SYS_fanotify_init, 0, 0));
	TRY("mbind", syscall(SYS_mbind, 0, 0, 0, NULL, 0, 0));
	TRY("set_mempolicy", syscall(SYS_set_mempolicy, 0, NULL, 0));
	TRY("migrate_pages", syscall(SYS_migrate_pages, 0, 0, NULL, NULL));
	TRY("move_pages", syscall(SYS_move_pages, 0, 0, NULL, NULL, NULL, 0));
	TRY("sethostname", sethostname("x", 1));

	trychild("int80", int80);
	trychild("x32", x32);
}

static void
allowed(void)
{
	struct open_how		 how;
	struct sockaddr_in	 sin;
	struct epoll_event	 ev;
	struct statx		 sx;
	struct rlimit		 rl;
	struct timespec		 ts = { 0, 0 };
	pthread_t		 t;
	posix_spawnattr_t	 sa;
	cpu_set_t		 cpus;
	socklen_t		 len;
	sigset_t		 ss;
	pid_t			 pid;
	size_t			 rlen;
	void			*head, *p;
	char			 *spawn_argv[] = { (char *)"true", NULL };
	int			 s, c, a, fd, fd2, pfd[2], st, futexword = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(7);
	report("fork", pid > 0 && waitpid(pid, &st, 0) == pid &&
	    WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : -1);
	tryclone("clone", 0);
	report("pthread_create", (errno = pthread_create(&t, NULL, thread,
	    NULL)) == 0 && pthread_join(t, NULL) == 0 ? 0 : -1);
	posix_spawnattr_init(&sa);
	report("posix_spawn", (errno = posix_spawn(&pid, "/bin/true", NULL,
	    &sa, spawn_argv, NULL)) == 0 && waitpid(pid, &st, 0) == pid &&
	    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1);
	posix_spawnattr_destroy(&sa);
	errno = 0;
	if ((pid = fork()) == 0)
		_exit(setsid() == -1);
	report("setsid", pid > 0 && waitpid(pid, &st, 0) == pid &&
	    WEXITSTATUS(st) == 0 ? 0 : -1);
	if ((pid = fork()) == 0)
		_exit(0);
	report("waitid", waitid(P_PID, pid, NULL, WEXITED) == -1 &&
	    errno != EFAULT ? -1 : 0);

	TRYFD("socket-inet", socket(AF_INET, SOCK_STREAM, 0));
	TRYFD("socket-inet6", socket(AF_INET6, SOCK_DGRAM, 0));
	TRYFD("socket-unix", socket(AF_UNIX, SOCK_STREAM, 0));
	TRYFD("socket-netlink", socket(AF_NETLINK, SOCK_RAW, 0));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pfd) == 0) {
		report("socketpair", 0);
		close(pfd[0]);
		close(pfd[1]);
	} else
		report("socketpair", -1);

	/* A TCP round trip over loopback. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = sizeof(sin);
	s = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	a = -1;
	errno = 0;
	if (s != -1 && c != -1 &&
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    listen(s, 1) == 0 &&
	    getsockname(s, (struct sockaddr *)&sin, &len) == 0 &&
	    connect(c, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    (a = accept(s, NULL, NULL)) != -1 && write(c, "x", 1) == 1 &&
	    read(a, &st, 1) == 1)
		report("loopback-tcp", 0);
	else
		report("loopback-tcp", -1);
	close(s);
	close(c);
	if (a != -1)
		close(a);

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS;
	TRYFD("openat2", syscall(SYS_openat2, AT_FDCWD, "/tmp", &how,
	    sizeof(how)));
	fd = open("/", O_RDONLY | O_CLOEXEC);
	fd2 = dup(fd);
	TRY("close_range", close_range(fd, fd2, 0));
	TRY("statx", statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &sx));
	TRY("faccessat2", syscall(SYS_faccessat2, AT_FDCWD, "/", R_OK,
	    AT_EACCESS));
	fd = epoll_create1(EPOLL_CLOEXEC);
	TRY("epoll_pwait2", syscall(SYS_epoll_pwait2, fd, &ev, 1, &ts, NULL,
	    0));
	close(fd);
	fd = syscall(SYS_pidfd_open, getpid(), 0);
	report("pidfd_open", fd);
	TRY("pidfd_send_signal", syscall(SYS_pidfd_send_signal, fd, 0, NULL,
	    0));
	if (fd != -1)
		close(fd);
	TRY("getrandom", getrandom(&st, sizeof(st), 0));
	TRYFD("memfd_create", memfd_create("probe", MFD_CLOEXEC));
	/* Both in /tmp: copy_file_range may refuse to cross filesystems. */
	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	TRY("fallocate", fallocate(fd, 0, 0, 4096));
	fd2 = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	TRY("copy_file_range", copy_file_range(fd, NULL, fd2, NULL, 4096, 0));
	TRY("sendfile", sendfile(fd2, fd, &(off_t){ 0 }, 16));
	if (pipe2(pfd, O_CLOEXEC) == 0) {
		TRY("splice", splice(fd, &(off_t){ 0 }, pfd[1], NULL, 16, 0));
		close(pfd[0]);
		close(pfd[1]);
	}
	close(fd);
	close(fd2);
	TRYFD("timerfd_create", timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
	TRYFD("eventfd2", eventfd(0, EFD_CLOEXEC));
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	TRYFD("signalfd4", signalfd(-1, &ss, SFD_CLOEXEC));
	TRY("sched_getaffinity", sched_getaffinity(0, sizeof(cpus), &cpus));
	TRY("sched_yield", sched_yield());
	TRY("prlimit64", prlimit(0, RLIMIT_NOFILE, NULL, &rl));
	TRY("get_robust_list", syscall(SYS_get_robust_list, 0, &head, &rlen));
	TRY("membarrier", syscall(SYS_membarrier, 0, 0, 0));
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TRY("mprotect", mprotect(p, 4096, PROT_READ));
	TRY("madvise", madvise(p, 8192, MADV_DONTNEED));
	munmap(p, 8192);
	errno = 0;
	fd = syscall(SYS_pkey_alloc, 0, 0);
	/* No protection keys in this CPU is not a refusal. */
	report("pkey_alloc", fd == -1 && errno != EPERM ? 0 : fd);
	if (fd >= 0)
		syscall(SYS_pkey_free, fd);
	TRY("arch_prctl", syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */,
	    &head));
	TRY("futex", syscall(SYS_futex, &futexword, 1 /* FUTEX_WAKE */, 1,
	    NULL, NULL, 0));
	errno = 0;
	report("futex_waitv", syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) ==
	    -1 && errno == EINVAL ? 0 : -1);
	TRY("prctl", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	report("rseq", __rseq_size > 0 ? 0 : -1);
	TRY("personality-query", personality(0xffffffff));
	TRY("personality-linux32", personality(PER_LINUX32));
	personality(PER_LINUX);
	TRY("setfsuid", setfsuid(-1));
	errno = 0;
	st = ioctl(1, FIONREAD, &a);
	report("ioctl", st == -1 && errno != EPERM ? 0 : st);
}

/* "probe cat FILE...": print files, for images without a cat. */
static int
cat(char **files)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd, r = 0;

	for (; *files != NULL; files++) {
		if ((fd = open(*files, O_RDONLY | O_CLOEXEC)) == -1) {
			printf("%s: %s\n", *files, strerrorname_np(errno));
			r = 1;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, n, stdout);
		close(fd);
	}
	return r;
}

int
main(int argc, char **argv)
{
	/* Some of these calls would do real harm if they worked. */
	if (getuid() == 0 || geteuid() == 0) {
		fprintf(stderr, "probe: not as root\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "cat") == 0)
		return cat(argv + 2);
	/* -f file: load that program first, as sandbox-init does. */
	if (argc == 3 && strcmp(argv[1], "-f") == 0) {
		char	 why[256];
		int	 fd;

		if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) == -1 ||
		    seccomp_load_fd(fd, why, sizeof(why)) == -1) {
			fprintf(stderr, "probe: %s: %s\n", argv[2],
			    fd == -1 ? strerror(errno) : why);
			return 2;
		}
		close(fd);
	}
	allowed();
	refused();
	printf("done\n");
	return 0;
}
