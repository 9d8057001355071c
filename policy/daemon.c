/*
 * Daemon scaffolding: see daemon.h.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "daemon.h"
#include "log.h"
#include "policy.h"
#include "proto.h"
#include "sd.h"
#include "sock.h"
#include "util.h"

static void __attribute__((__noreturn__))
daemon_usage(const char *name)
{
	fprintf(stderr, "usage: %s [-dnv] [-f file]\n", name);
	if (strcmp(name, "mcpd") == 0)
		fprintf(stderr, "       mcpd --stdio [-v] [-f file]\n");
	exit(1);
}

/*
 * daemon(3) leaves the working directory for "/", and SIGHUP reads the file
 * again: a relative name is made absolute now.  Symbolic links are kept,
 * so that one retargeted between reloads is followed.
 */
static void
daemon_confpath(struct daemon *d)
{
	char	 cwd[PATH_MAX];

	if (d->conffile[0] == '/')
		return;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		fatal("getcwd");
	if (str_fmt(d->confpath, sizeof(d->confpath), "%s/%s", cwd,
	    d->conffile) == -1)
		fatalx("%s/%s: path too long", cwd, d->conffile);
	d->conffile = d->confpath;
}

/* -n: a runtime whose binary cannot be run. */
static void
daemon_runtime_missing(const struct runtime *rt, int err, void *arg)
{
	fprintf(stderr, "%s: runtime %s: %s: %s\n", (const char *)arg,
	    rt->name, rt->path, strerror(err));
}

void
daemon_init(struct daemon *d, const char *name, int argc, char *argv[],
    int (*check)(struct daemon *))
{
	int	 ch;

	/* As systemd does; before sandboxd's fork, for its helper too. */
	if (sigmask_clear() == -1)
		fatal("sigprocmask");
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->conffile = MCPD_CONF;
	d->privileged = geteuid() == 0;
	while ((ch = getopt(argc, argv, "df:nv")) != -1) {
		switch (ch) {
		case 'd':
			d->debug = 1;
			break;
		case 'f':
			d->conffile = optarg;
			break;
		case 'n':
			d->noaction = 1;
			break;
		case 'v':
			d->verbose++;
			break;
		default:
			daemon_usage(name);
		}
	}
	if (optind != argc)
		daemon_usage(name);

	log_init(LOG_DEST_STDERR, d->verbose, name);
	daemon_confpath(d);
	if ((d->conf = policy_load(d->conffile)) == NULL) {
		if (d->noaction)
			exit(1);
		fatalx("%s: configuration not loaded", d->conffile);
	}
	if (realpath(d->conffile, d->confdir) == NULL)
		fatal("%s", d->conffile);
	*strrchr(d->confdir, '/') = '\0';
	if (d->confdir[0] == '\0')
		strcpy(d->confdir, "/");
	if (d->noaction) {
		if (d->verbose)
			policy_dump(stdout, d->conf);
		/* sandboxd runs them: each runtime named must be there. */
		if (strcmp(name, "mcp-sandboxd") == 0 &&
		    policy_runtimes_check(d->conf, daemon_runtime_missing,
		    (void *)name) > 0) {
			policy_free(d->conf);
			exit(1);
		}
		if (check != NULL && check(d) != 0) {
			policy_free(d->conf);
			exit(1);
		}
		fprintf(stderr, "configuration OK\n");
		policy_free(d->conf);
		exit(0);
	}
	log_init(d->debug ? LOG_DEST_JOURNAL : LOG_DEST_SYSLOG, d->verbose,
	    name);
	if (systemd_listen_fds(&d->sdfds) == -1)
		fatalx("malformed LISTEN_FDS or LISTEN_PID from systemd");
}

static void
daemon_signal(evutil_socket_t sig, short events, void *arg)
{
	struct daemon	*d = arg;

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("%s received, shutting down", strsignal((int)sig));
		event_base_loopbreak(d->base);
		break;
	case SIGHUP:
		daemon_reload(d);
		break;
	}
}

void
daemon_reload(struct daemon *d)
{
	struct policy_changes	 ch;
	struct policy		*next;
	char			 hex[65], what[256];

	if (d->reload_who == 0) {
		log_info("SIGHUP: %s", d->no_reload != NULL ? d->no_reload :
		    "nothing to reload");
		return;
	}
	/* systemd(1) wants the time with it, to match this to its reload. */
	systemd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)(mono_ns() / 1000));
	log_info("SIGHUP: reloading %s", d->conffile);
	if ((next = policy_load(d->conffile)) == NULL ||
	    policy_resolve_reload(next, d->conf, POLICY_PASSWD) == -1 ||
	    (d->reload_check != NULL && d->reload_check(d, next) == -1)) {
		log_warnx("configuration reload failed: keeping the old one");
		policy_free(next);
		systemd_notify("READY=1");
		return;
	}
	policy_reload(d->conf, next, d->reload_who, d->name, &ch);
	policy_free(next);
	policy_changes_str(&ch, what, sizeof(what));
	sodium_bin2hex(hex, sizeof(hex), d->conf->digest,
	    sizeof(d->conf->digest));
	log_info("configuration reloaded (sha256 %s): %s", hex, what);
	if (d->reload_done != NULL)
		d->reload_done(d);
	systemd_notify("READY=1");
}

static void
daemon_watchdog(evutil_socket_t fd, short events, void *arg)
{
	systemd_notify("WATCHDOG=1");
}

void
daemon_detach(struct daemon *d)
{
	if (d->detached)
		return;
	d->detached = 1;
	if (!d->debug && daemon(0, 0) == -1)
		fatal("daemon");
}

void
daemon_start(struct daemon *d)
{
	struct timeval	 tv;
	uint64_t	 usec;

	daemon_detach(d);
	if (systemd_notify_init() == -1)
		log_warn("NOTIFY_SOCKET");
	signal(SIGPIPE, SIG_IGN);
	if ((d->base = event_base_new()) == NULL)
		fatalx("cannot create the event base");
	d->ev_sigterm = evsignal_new(d->base, SIGTERM, daemon_signal, d);
	d->ev_sigint = evsignal_new(d->base, SIGINT, daemon_signal, d);
	d->ev_sighup = evsignal_new(d->base, SIGHUP, daemon_signal, d);
	if (d->ev_sigterm == NULL || d->ev_sigint == NULL ||
	    d->ev_sighup == NULL || evsignal_add(d->ev_sigterm, NULL) == -1 ||
	    evsignal_add(d->ev_sigint, NULL) == -1 ||
	    evsignal_add(d->ev_sighup, NULL) == -1)
		fatalx("cannot set up signal events");
	if ((usec = systemd_watchdog_usec()) != 0) {
		/* Twice per interval, as sd_watchdog_enabled(3) advises. */
		usec /= 2;
		tv.tv_sec = (time_t)(usec / 1000000);
		tv.tv_usec = (suseconds_t)(usec % 1000000);
		d->ev_watchdog = event_new(d->base, -1, EV_PERSIST,
		    daemon_watchdog, d);
		if (d->ev_watchdog == NULL ||
		    event_add(d->ev_watchdog, &tv) == -1)
			fatalx("cannot set up the watchdog timer");
		systemd_notify("WATCHDOG=1");
	}
	log_info("%s %s starting (protocol %u, config %s)", d->name,
	    MCPD_VERSION, MCPD_PROTO_VERSION, d->conffile);
}

void
daemon_ready(struct daemon *d, const char *fmt, ...)
{
	char	 buf[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_info("ready: %s", buf);
	systemd_notifyf("READY=1\nSTATUS=%s", buf);
}

void
daemon_status(struct daemon *d, const char *fmt, ...)
{
	char	 buf[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	systemd_notifyf("STATUS=%s", buf);
}

void
daemon_loop(struct daemon *d)
{
	if (event_base_dispatch(d->base) == -1)
		fatalx("event loop failed");
	systemd_notify("STOPPING=1");
}

void
daemon_free(struct daemon *d)
{
	if (d->ev_watchdog != NULL)
		event_free(d->ev_watchdog);
	if (d->ev_sigterm != NULL)
		event_free(d->ev_sigterm);
	if (d->ev_sigint != NULL)
		event_free(d->ev_sigint);
	if (d->ev_sighup != NULL)
		event_free(d->ev_sighup);
	if (d->base != NULL)
		event_base_free(d->base);
	systemd_listen_fds_free(&d->sdfds);
	policy_free(d->conf);
	memset(d, 0, sizeof(*d));
}

int
daemon_listen_unix(struct daemon *d, const char *fdname, const char *path,
    mode_t mode, uid_t owner, gid_t group)
{
	int	 i, fd;

	for (i = 0; i < d->sdfds.n; i++) {
		if (strcmp(d->sdfds.name[i], fdname) == 0) {
			log_info("using the %s socket passed by systemd",
			    fdname);
			return d->sdfds.fd[i];
		}
	}
	if ((fd = sock_unix_bind(path, mode, owner, group)) == -1)
		fatalx("cannot listen on %s", path);
	return fd;
}

/* A new directory gets mode itself: under UMask=0077 mkdir would not. */
static void
daemon_mkdir_one(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0) {
		if (chmod(path, mode) == -1)
			fatal("chmod %s", path);
	} else if (errno != EEXIST)
		fatal("mkdir %s", path);
}

void
daemon_mkdir(const char *path, mode_t mode)
{
	char	 tmp[PATH_MAX], *p;

	if (str_copy(tmp, path, sizeof(tmp)) == -1)
		fatalx("%s: path too long", path);
	for (p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		daemon_mkdir_one(tmp, 0755);
		*p = '/';
	}
	daemon_mkdir_one(tmp, mode);
}

void
daemon_mkdir_own(const char *path, mode_t mode)
{
	struct stat	 st;

	daemon_mkdir(path, mode);
	if (lstat(path, &st) == -1)
		fatal("%s", path);
	if (!S_ISDIR(st.st_mode))
		fatalx("%s: not a directory", path);
	if ((st.st_mode & 0777 & ~mode) == 0)
		return;
	if ((geteuid() != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & S_ISVTX))
		log_warnx("%s: mode %04o, wider than %04o, left as it is: it "
		    "is %s", path, (unsigned)(st.st_mode & 07777),
		    (unsigned)mode, (st.st_mode & S_ISVTX) ? "sticky, a shared "
		    "directory" : "another user's");
	else if (path_tighten(path, mode) == -1)
		fatalx("cannot tighten the mode of %s", path);
}
