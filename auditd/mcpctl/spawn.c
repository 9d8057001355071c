/*
 * The tools that make images (debootstrap, skopeo, umoci), run as root
 * without a shell: an argument vector, a fixed PATH, stdin from
 * /dev/null, and their output on stderr so that stdout holds only the
 * result.  Each runs in a mount namespace of its own, so that what it
 * mounts (debootstrap mounts /proc and /sys in the tree it builds) goes
 * away with it however it ends, and nothing of ours is ever deleted
 * through a mount left behind.  Each is the leader of a process group,
 * which is killed once the leader is done: no helper of a tool outlives
 * it to write into a tree being removed.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"
#include "util.h"

#define SPAWN_PATH	"/usr/sbin:/usr/bin:/sbin:/bin"
#define SPAWN_REAP_MS	2000	/* for the group's last processes to go */

volatile sig_atomic_t	 spawn_quit;

static void
spawn_onsignal(int sig)
{
	spawn_quit = sig;
}

/* Only to end sigsuspend() when the tool ends. */
static void
spawn_onchild(int sig)
{
}

/* What spawn() waits for: a stop signal or a child's end. */
static void
spawn_waitset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
}

/*
 * SIGINT, SIGTERM and SIGHUP are passed on to the tool at work, and the
 * command then fails, cleaning up after itself.
 */
void
spawn_signals(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = spawn_onsignal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGHUP, &sa, NULL) == -1)
		err(EXIT_ERROR, "sigaction");
	/* An orphan's end must not break off a read elsewhere. */
	sa.sa_handler = spawn_onchild;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGCHLD, &sa, NULL) == -1)
		err(EXIT_ERROR, "sigaction");
	/* A tool's orphans become ours, for spawn_reap() to wait for. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		err(EXIT_ERROR, "PR_SET_CHILD_SUBREAPER");
}

/* The rest of a tool's process group killed, and its orphans reaped. */
static void
spawn_reap(pid_t pgid)
{
	pid_t	 r;
	int	 i = 0;

	(void)kill(-pgid, SIGKILL);
	while (i < SPAWN_REAP_MS / 20) {
		if ((r = waitpid(-1, NULL, WNOHANG)) == -1 && errno == ECHILD)
			return;
		if (r == 0) {
			usleep(20000);
			i++;
		}
	}
	warnx("a process the tool started outlived it");
}

static __attribute__((__noreturn__)) void
spawn_child(const char *const argv[], const char *tmpdir)
{
	int	 fd;

	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		warn("%s: a mount namespace of its own", argv[0]);
		_exit(127);
	}
	if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(fd, STDIN_FILENO) == -1 ||
	    dup2(STDERR_FILENO, STDOUT_FILENO) == -1) {
		warn("%s: standard input and output", argv[0]);
		_exit(127);
	}
	if (setenv("PATH", SPAWN_PATH, 1) == -1 ||
	    setenv("LC_ALL", "C.UTF-8", 1) == -1 ||
	    setenv("DEBIAN_FRONTEND", "noninteractive", 1) == -1 ||
	    (tmpdir != NULL && setenv("TMPDIR", tmpdir, 1) == -1)) {
		warn("%s: environment", argv[0]);
		_exit(127);
	}
	execvp(argv[0], (char *const *)(uintptr_t)argv);
	warn("%s", argv[0]);
	_exit(127);
}

/*
 * Run argv, with TMPDIR set to tmpdir unless it is NULL, and wait for
 * it: its exit status, or 128 and the signal that ended it.
 */
int
spawn(const char *const argv[], const char *tmpdir)
{
	sigset_t	 set, old;
	pid_t		 pid, r;
	int		 status, sent = 0;

	fflush(stdout);
	fflush(stderr);
	/*
	 * Held back between the look at spawn_quit and the wait, which
	 * sigsuspend() joins: a signal in between would otherwise be seen
	 * only when the tool ended on its own.
	 */
	spawn_waitset(&set);
	if (sigprocmask(SIG_BLOCK, &set, &old) == -1)
		err(EXIT_ERROR, "sigprocmask");
	if ((pid = fork_for_exec()) == -1)
		err(EXIT_ERROR, "fork");
	if (pid == 0)
		spawn_child(argv, tmpdir);
	(void)setpgid(pid, pid);
	for (;;) {
		if (spawn_quit && !sent) {
			(void)kill(-pid, SIGTERM);
			sent = 1;
		}
		if ((r = waitpid(pid, &status, WNOHANG)) == pid)
			break;
		if (r == -1 && errno != EINTR)
			err(EXIT_ERROR, "waitpid");
		sigsuspend(&old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	spawn_reap(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
