/*
 * Logging: see log.h.  Each line is formatted into one buffer and written
 * with a single write(2), so lines of daemons sharing a terminal never
 * interleave mid-line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static enum log_dest	 log_dest = LOG_DEST_STDERR;
static int		 log_verbose;
static const char	*log_name = "mcpd";

void
log_init(enum log_dest dest, int verbose, const char *procname)
{
	log_dest = dest;
	log_verbose = verbose;
	if (procname != NULL)
		log_name = procname;
	if (dest == LOG_DEST_SYSLOG)
		openlog(log_name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	tzset();
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return log_verbose;
}

const char *
log_procname(void)
{
	return log_name;
}

/*
 * A message may quote a client (a header, a client's name): a newline in
 * it would forge a line of its own, so control characters become '?'.
 */
static void
log_clean(char *msg)
{
	unsigned char	*p;

	for (p = (unsigned char *)msg; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static void
log_write(int pri, char *msg)
{
	char	 line[2048];
	int	 n;
	ssize_t	 w;

	log_clean(msg);
	if (log_dest == LOG_DEST_SYSLOG) {
		syslog(pri, "%s", msg);
		return;
	}
	if (log_dest == LOG_DEST_JOURNAL)
		n = snprintf(line, sizeof(line), "<%d>%s: %s\n", pri, log_name,
		    msg);
	else
		n = snprintf(line, sizeof(line), "%s: %s\n", log_name, msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	do {
		w = write(STDERR_FILENO, line, (size_t)n);
	} while (w == -1 && errno == EINTR);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 msg[1536];
	int	 saved = errno;

	if (pri == LOG_DEBUG && log_verbose < 1)
		goto out;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_write(pri, msg);
 out:
	errno = saved;
}

static void	vlog_errno(int, int, const char *, va_list)
		    __attribute__((__format__(printf, 3, 0)));

static void
vlog_errno(int pri, int code, const char *fmt, va_list ap)
{
	char	 msg[1536];
	int	 n = 0;

	if (fmt != NULL)
		n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	snprintf(msg + n, sizeof(msg) - (size_t)n, "%s%s",
	    fmt != NULL ? ": " : "", strerror(code));
	log_write(pri, msg);
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
