/*
 * scprobe: what a running daemon's seccomp filter does to a system call,
 * asked of the kernel itself.
 *
 *	scprobe PID CALL...
 *
 * The filter is read from PID with PTRACE_SECCOMP_GET_FILTER (root, with
 * CAP_SYS_ADMIN), then loaded into a fresh child for each CALL, which
 * makes that call; how the child ends says what the daemon's filter
 * would do.  One line per call: "CALL killed" (SIGSYS), or "CALL allowed"
 * with the errno the kernel gave the harmless arguments, if any.  A daemon under more than one filter is refused:
 * the suite's daemons load exactly one.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER	0x420c
#endif

/* The outcome each call reports when the filter lets it through. */
#define ALLOWED	100

static long
c_int80(void)
{
	long	 r;

	/* getpid on i386 */
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	return r;
}

static long
c_execve(void)
{
	static char	 t[] = "true";
	char		*argv[] = { t, NULL };

	return execve("/bin/true", argv, argv + 1);
}

static long
c_fork(void)
{
	long	 r;

	/* A new process, not a thread: no CLONE_THREAD. */
	if ((r = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL)) == 0)
		_exit(0);
	return r;
}

static const struct call {
	const char	*name;
	long		(*fn)(void);
	long		 nr;
	long		 a[3];
} calls[] = {
	{ "getpid", NULL, SYS_getpid, { 0, 0, 0 } },
	{ "read", NULL, SYS_read, { -1, 0, 0 } },
	{ "execve", c_execve, 0, { 0, 0, 0 } },
	{ "fork", c_fork, 0, { 0, 0, 0 } },
	{ "ptrace", NULL, SYS_ptrace, { PTRACE_TRACEME, 0, 0 } },
	{ "process_vm_readv", NULL, SYS_process_vm_readv, { -1, 0, 0 } },
	{ "mount", NULL, SYS_mount, { 0, 0, 0 } },
	{ "umount2", NULL, SYS_umount2, { 0, 0, 0 } },
	{ "unshare", NULL, SYS_unshare, { CLONE_NEWNS, 0, 0 } },
	{ "setns", NULL, SYS_setns, { -1, 0, 0 } },
	{ "chroot", NULL, SYS_chroot, { 0, 0, 0 } },
	{ "pivot_root", NULL, SYS_pivot_root, { 0, 0, 0 } },
	{ "bpf", NULL, SYS_bpf, { 0, 0, 0 } },
	{ "perf_event_open", NULL, SYS_perf_event_open, { 0, 0, 0 } },
	{ "kexec_load", NULL, SYS_kexec_load, { 0, 0, 0 } },
	{ "init_module", NULL, SYS_init_module, { 0, 0, 0 } },
	{ "finit_module", NULL, SYS_finit_module, { -1, 0, 0 } },
	{ "keyctl", NULL, SYS_keyctl, { 0, 0, 0 } },
	{ "add_key", NULL, SYS_add_key, { 0, 0, 0 } },
	{ "userfaultfd", NULL, SYS_userfaultfd, { 0, 0, 0 } },
	{ "io_uring_setup", NULL, SYS_io_uring_setup, { 0, 0, 0 } },
	{ "setuid", NULL, SYS_setuid, { 0, 0, 0 } },
	{ "setgid", NULL, SYS_setgid, { 0, 0, 0 } },
	{ "capset", NULL, SYS_capset, { 0, 0, 0 } },
	{ "clock_settime", NULL, SYS_clock_settime, { 0, 0, 0 } },
	{ "settimeofday", NULL, SYS_settimeofday, { 0, 0, 0 } },
	{ "reboot", NULL, SYS_reboot, { 0, 0, 0 } },
	{ "swapon", NULL, SYS_swapon, { 0, 0, 0 } },
	{ "syslog", NULL, SYS_syslog, { 0, 0, 0 } },
	{ "personality", NULL, SYS_personality, { 0x0008, 0, 0 } },
	{ "mknodat", NULL, SYS_mknodat, { -1, 0, 0 } },
	{ "socket_inet", NULL, SYS_socket, { AF_INET, SOCK_STREAM, 0 } },
	{ "socket_packet", NULL, SYS_socket, { AF_PACKET, SOCK_RAW, 0 } },
	{ "socket_netlink", NULL, SYS_socket, { AF_NETLINK, SOCK_RAW, 0 } },
	{ "socket_unix", NULL, SYS_socket, { AF_UNIX, SOCK_STREAM, 0 } },
	{ "int80", c_int80, 0, { 0, 0, 0 } },
};

static struct sock_fprog *
get_filter(pid_t pid)
{
	struct sock_fprog	*prog;
	long			 n;
	int			 st;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == -1)
		err(1, "seize %d", (int)pid);
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) == -1)
		err(1, "interrupt %d", (int)pid);
	if (waitpid(pid, &st, __WALL) == -1)
		err(1, "waitpid");
	if ((n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, NULL)) <= 0)
		err(1, "no filter on %d", (int)pid);
	/* A second filter, index 1, would be stacked under the first. */
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 1, NULL) != -1)
		errx(1, "%d has more than one filter", (int)pid);
	if ((prog = calloc(1, sizeof(*prog))) == NULL ||
	    (prog->filter = calloc((size_t)n, sizeof(*prog->filter))) == NULL)
		err(1, NULL);
	prog->len = (unsigned short)n;
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, prog->filter) != n)
		err(1, "reading the filter of %d", (int)pid);
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) == -1)
		err(1, "detach %d", (int)pid);
	return prog;
}

static void
probe(const struct sock_fprog *prog, const struct call *c)
{
	pid_t	 pid;
	long	 r;
	int	 st;

	fflush(stdout);
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) == -1)
			_exit(99);
		errno = 0;
		r = c->fn != NULL ? c->fn() :
		    syscall(c->nr, c->a[0], c->a[1], c->a[2], 0, 0, 0);
		/* ERRNO actions come back as -1; int 0x80 as -errno. */
		if (c->fn == c_int80 && r < 0 && r > -4096) {
			errno = (int)-r;
			r = -1;
		}
		_exit(r == -1 && errno != 0 ? (errno < ALLOWED ? errno : 98) :
		    ALLOWED);
	}
	if (waitpid(pid, &st, 0) == -1)
		err(1, "waitpid");
	if (WIFSIGNALED(st))
		printf("%s %s\n", c->name, WTERMSIG(st) == SIGSYS ? "killed" :
		    strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st) == 99)
		errx(1, "cannot load the filter");
	else if (WEXITSTATUS(st) == ALLOWED || WEXITSTATUS(st) == 0)
		printf("%s allowed\n", c->name);
	else
		printf("%s allowed errno %d\n", c->name, WEXITSTATUS(st));
}

int
main(int argc, char *argv[])
{
	struct sock_fprog	*prog;
	size_t			 i;
	int			 a, found;

	if (argc < 3) {
		fprintf(stderr, "usage: scprobe pid call...\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	prog = get_filter((pid_t)atoi(argv[1]));
	for (a = 2; a < argc; a++) {
		found = 0;
		for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (strcmp(argv[a], "all") == 0 ||
			    strcmp(argv[a], calls[i].name) == 0) {
				probe(prog, &calls[i]);
				found = 1;
			}
		if (!found)
			errx(1, "unknown call %s", argv[a]);
	}
	free(prog->filter);
	free(prog);
	return 0;
}
