/*
 * Privilege drop, Landlock and seccomp: see priv.h.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/landlock.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cap-ng.h>
#include <seccomp.h>

#include "log.h"
#include "priv.h"
#include "util.h"

/* Landlock ABI 3 and later, for older kernel headers. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif
#define LL_NET_BIND_TCP			(1ULL << 0)
#define LL_NET_CONNECT_TCP		(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX		(1ULL << 0)
#define LL_SCOPE_SIGNAL			(1ULL << 1)
#define LL_RULE_PATH_BENEATH		1
#define LL_RULE_NET_PORT		2

/* The ruleset attribute as of ABI 6; older kernels accept the zero tail. */
struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

struct ll_path_attr {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

struct ll_port_attr {
	uint64_t	allowed_access;
	uint64_t	port;
};

void
priv_drop(uid_t uid, gid_t gid)
{
	uid_t	 r, e, s;

	if (geteuid() != 0) {
		if (uid != geteuid())
			fatalx("cannot become uid %u: not started as root",
			    (unsigned)uid);
		/* Nothing to give up but capabilities we do not have. */
		return;
	}
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_change_id((int)uid, (int)gid,
	    CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING) != 0)
		fatalx("cannot become uid %u gid %u", (unsigned)uid,
		    (unsigned)gid);
	if (getresuid(&r, &e, &s) == -1 || r != uid || e != uid || s != uid)
		fatalx("uid change to %u did not take", (unsigned)uid);
	if (getgid() != gid || getegid() != gid)
		fatalx("gid change to %u did not take", (unsigned)gid);
	if (uid != 0 && (setuid(0) != -1 || seteuid(0) != -1))
		fatalx("could regain root after dropping it");
	if (capng_get_caps_process() != 0)
		fatalx("cannot read back the process's capabilities");
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		fatalx("capabilities remain after dropping privileges");
	if (capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE)
		fatalx("bounding set not empty after dropping privileges");
}

void
priv_drop_caps(void)
{
	priv_keep_caps(NULL, 0);
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		fatalx("capabilities remain after dropping them");
}

void
priv_keep_caps(const int *caps, size_t n)
{
	size_t	 i;

	capng_clear(CAPNG_SELECT_ALL);
	for (i = 0; i < n; i++)
		if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED |
		    CAPNG_BOUNDING_SET, (unsigned int)caps[i]) != 0)
			fatalx("cannot keep capability %d", caps[i]);
	if (capng_apply(CAPNG_SELECT_ALL) != 0)
		fatalx("cannot drop capabilities");
	if (capng_get_caps_process() != 0)
		fatalx("cannot read back the process's capabilities");
	for (i = 0; i < n; i++)
		if (!capng_have_capability(CAPNG_EFFECTIVE,
		    (unsigned int)caps[i]))
			fatalx("capability %d lost", caps[i]);
}

void
priv_join_group(gid_t gid)
{
	gid_t	 g[NGROUPS_MAX];
	int	 n;

	if ((n = getgroups(NGROUPS_MAX - 1, g)) == -1)
		fatal("getgroups");
	g[n++] = gid;
	if (setgroups((size_t)n, g) == -1)
		fatal("setgroups");
}

void
priv_no_new_privs(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl(PR_SET_NO_NEW_PRIVS)");
}

static uint64_t
ll_fs_rights(int abi)
{
	uint64_t	 all;

	all = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
	    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return all;
}

static uint64_t
ll_access(int access, int abi, int isdir)
{
	uint64_t	 a = 0;

	if (access & LL_READ)
		a |= LANDLOCK_ACCESS_FS_READ_FILE |
		    (isdir ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
	if (access & LL_WRITE) {
		a |= LANDLOCK_ACCESS_FS_WRITE_FILE;
		if (abi >= 3)
			a |= LANDLOCK_ACCESS_FS_TRUNCATE;
		if (isdir)
			a |= LANDLOCK_ACCESS_FS_REMOVE_DIR |
			    LANDLOCK_ACCESS_FS_REMOVE_FILE |
			    LANDLOCK_ACCESS_FS_MAKE_DIR |
			    LANDLOCK_ACCESS_FS_MAKE_REG |
			    LANDLOCK_ACCESS_FS_MAKE_SOCK;
	}
	if (access & LL_EXEC)
		a |= LANDLOCK_ACCESS_FS_EXECUTE;
	return a;
}

int
priv_landlock(const struct priv_path *paths, size_t npaths,
    const uint16_t *ports, size_t nports, int flags)
{
	struct ll_ruleset_attr	 ra;
	struct ll_path_attr	 pa;
	struct ll_port_attr	 na;
	struct stat		 st;
	size_t			 i;
	long			 abi;
	int			 rfd, fd;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		log_info("Landlock not available on this kernel; "
		    "relying on seccomp and file permissions");
		return 0;
	}
	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = ll_fs_rights((int)abi);
	if (abi >= 4)
		ra.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 6)
		ra.scoped = ((flags & LL_ALLOW_SIGNALS) ? 0 : LL_SCOPE_SIGNAL) |
		    ((flags & LL_ALLOW_ABSTRACT) ? 0 : LL_SCOPE_ABSTRACT_UNIX);
	if ((rfd = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra),
	    0)) == -1)
		fatal("landlock_create_ruleset");

	for (i = 0; i < npaths; i++) {
		if ((fd = open(paths[i].path, O_PATH | O_CLOEXEC)) == -1) {
			log_debug("landlock: %s: %s (skipped)", paths[i].path,
			    strerror(errno));
			continue;
		}
		if (fstat(fd, &st) == -1)
			fatal("landlock: fstat %s", paths[i].path);
		pa.allowed_access = ll_access(paths[i].access, (int)abi,
		    S_ISDIR(st.st_mode)) & ra.handled_access_fs;
		pa.parent_fd = fd;
		if (pa.allowed_access != 0 &&
		    syscall(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH,
		    &pa, 0) == -1)
			fatal("landlock_add_rule %s", paths[i].path);
		close(fd);
	}
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer lists the threads it stops in /proc. */
	if ((fd = open("/proc", O_PATH | O_CLOEXEC)) != -1) {
		pa.allowed_access = ll_access(LL_READ, (int)abi, 1);
		pa.parent_fd = fd;
		syscall(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pa, 0);
		close(fd);
	}
#endif
	for (i = 0; abi >= 4 && i < nports; i++) {
		na.allowed_access = LL_NET_CONNECT_TCP;
		na.port = ports[i];
		if (syscall(SYS_landlock_add_rule, rfd, LL_RULE_NET_PORT, &na,
		    0) == -1)
			fatal("landlock_add_rule port %u", ports[i]);
	}
	if (syscall(SYS_landlock_restrict_self, rfd, 0) == -1)
		fatal("landlock_restrict_self");
	close(rfd);
	log_debug("Landlock ABI %ld applied", abi);
	return (int)abi;
}

static void
priv_sigsys(int sig, siginfo_t *si, void *ctx)
{
	char	 msg[96];
	int	 n;

	n = snprintf(msg, sizeof(msg),
	    "%s: seccomp: forbidden system call %d; exiting\n",
	    log_procname(), si->si_syscall);
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n);
	signal(SIGSYS, SIG_DFL);
	raise(SIGSYS);
}

#if defined(__SANITIZE_ADDRESS__)
/*
 * Sanitizer builds only (make SANITIZE=1, for tests): LeakSanitizer checks
 * for leaks at exit by stopping the process with a ptrace'd helper thread,
 * and the runtime reads /proc.  Release builds never admit these.
 */
static const struct priv_syscall priv_sanitizer_syscalls[] = {
	SC(prctl), SC(clone), SC(ptrace), SC(wait4), SC(sched_yield),
	SC(getdents), SC(getdents64), SC(open), SC(openat), SC(readlink), SC(sigaltstack),
	SC(getppid), SC(kill), SC(mprotect), SC(set_robust_list),
	SC(rseq), SC(getrlimit), SC(prlimit64), SC(pipe2), SC(ioctl),
};
#endif

void
priv_seccomp(const struct priv_syscall *list, size_t n)
{
	struct sigaction	 sa;
	scmp_filter_ctx		 ctx;
	size_t			 i;
	int			 r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = priv_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) == -1)
		fatal("sigaction SIGSYS");

	if ((ctx = seccomp_init(SCMP_ACT_TRAP)) == NULL)
		fatalx("seccomp_init failed");
	/* Native x86_64 only: x32 and the 32-bit ABI hit the bad-arch kill. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS) != 0)
		fatalx("seccomp: cannot set the bad-arch action");
	for (i = 0; i < n; i++) {
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, list[i].nr,
		    list[i].nargs, list[i].arg);
		if (r != 0)
			fatalx("seccomp: cannot allow system call %d: %s",
			    list[i].nr, strerror(-r));
	}
#if defined(__SANITIZE_ADDRESS__)
	for (i = 0; i < nitems(priv_sanitizer_syscalls); i++)
		if (seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW,
		    priv_sanitizer_syscalls[i].nr, 0, NULL) != 0)
			fatalx("seccomp: sanitizer system call %d",
			    priv_sanitizer_syscalls[i].nr);
#endif
	if ((r = seccomp_load(ctx)) != 0)
		fatalx("seccomp_load: %s", strerror(-r));
	seccomp_release(ctx);
}

/*
 * An event loop over sockets, with logging and the clock.  Daemons add what
 * their own work needs.
 */
const struct priv_syscall priv_base_syscalls[] = {
	SC(read), SC(readv), SC(write), SC(writev), SC(close),
	SC(recvmsg), SC(sendmsg), SC(recvfrom), SC(sendto),
	SC(epoll_wait), SC(epoll_pwait), SC(epoll_ctl),
	SC(poll), SC(ppoll),
	SC(accept4), SC(getsockopt), SC(getpeername), SC(getsockname),
	SC(shutdown),
	SC_ARG(socket, SCMP_A0(SCMP_CMP_EQ, AF_UNIX)),
	SC(connect),
	SC(fcntl), SC(fstat), SC(newfstatat), SC(lseek),
	SC(clock_gettime), SC(clock_nanosleep), SC(nanosleep),
	SC(gettimeofday), SC(time),
	SC(brk), SC(mmap), SC(munmap), SC(mremap), SC(madvise),
	SC(rt_sigaction), SC(rt_sigprocmask), SC(rt_sigreturn),
	SC(getpid), SC(gettid), SC(tgkill), SC(getuid), SC(geteuid),
	SC(getrandom), SC(futex),
	SC(exit), SC(exit_group), SC(restart_syscall),
};
const size_t priv_nbase_syscalls = nitems(priv_base_syscalls);
