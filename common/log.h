/*
 * Logging shared by every program of the suite.
 *
 * Daemons in the foreground (-d) write to stderr with a journald "<N>"
 * priority prefix, so that the journal keeps the level when systemd runs
 * them; in the background they use syslog(3).  Command-line tools and
 * configuration checks (-n) write plain lines to stderr.
 */
#ifndef MCPD_LOG_H
#define MCPD_LOG_H

#include <stdarg.h>

enum log_dest {
	LOG_DEST_STDERR,	/* plain "prog: message" lines */
	LOG_DEST_JOURNAL,	/* "<N>prog: message" lines on stderr */
	LOG_DEST_SYSLOG,
};

void	log_init(enum log_dest, int verbose, const char *procname);
void	log_setverbose(int);
int	log_getverbose(void);
const char *log_procname(void);

void	log_warn(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
void	log_warnx(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
void	log_info(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
void	log_debug(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
void	vlog(int, const char *, va_list)
	    __attribute__((__format__(printf, 2, 0)));
__attribute__((__noreturn__))
void	fatal(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));
__attribute__((__noreturn__))
void	fatalx(const char *, ...)
	    __attribute__((__format__(printf, 1, 2)));

#endif
