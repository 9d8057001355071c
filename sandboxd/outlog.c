/*
 * The output log of a persistent sandbox: the most recent SBX_LOG_MAX
 * bytes of what its execs wrote, each exec between a "$ command" line and
 * a line saying how it ended, for a client that lost the streamed output
 * or never saw it.
 *
 * It lives in sandboxd's memory only, as long as the sandbox does, and is
 * never written to the state database: a restart of sandboxd empties it.
 * The buffer grows as needed up to SBX_LOG_MAX, then turns into a ring
 * that drops its oldest bytes first.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define OUTLOG_MIN		4096
#define OUTLOG_CMD_MAX		4096	/* bytes of a command line shown */

/* Room for want bytes, up to the cap.  Below it nothing has wrapped. */
static void
outlog_grow(struct outlog *l, size_t want)
{
	size_t	 cap = l->cap;

	if (want <= cap || cap == SBX_LOG_MAX)
		return;
	if (cap < OUTLOG_MIN)
		cap = OUTLOG_MIN;
	while (cap < want && cap < SBX_LOG_MAX)
		cap *= 2;
	if (cap > SBX_LOG_MAX)
		cap = SBX_LOG_MAX;
	l->buf = xreallocarray(l->buf, 1, cap);
	l->cap = cap;
}

void
outlog_append(struct outlog *l, const void *data, size_t n)
{
	const uint8_t	*p = data;
	size_t		 excess, pos, k;

	if (n == 0)
		return;
	l->mtime = (int64_t)time(NULL);
	outlog_grow(l, l->len + n);
	if (n > l->cap) {
		p += n - l->cap;
		n = l->cap;
		l->dropped = 1;
	}
	if (l->len + n > l->cap) {
		excess = l->len + n - l->cap;
		l->start = (l->start + excess) % l->cap;
		l->len -= excess;
		l->dropped = 1;
	}
	pos = (l->start + l->len) % l->cap;
	k = n < l->cap - pos ? n : l->cap - pos;
	memcpy(l->buf + pos, p, k);
	memcpy(l->buf, p + k, n - k);
	l->len += n;
}

static void
outlog_printf(struct outlog *l, const char *fmt, ...)
    __attribute__((__format__(printf, 2, 3)));

static void
outlog_printf(struct outlog *l, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal("vasprintf");
	outlog_append(l, s, (size_t)n);
	free(s);
}

/* Lines begin where the output before them ended without a newline. */
static void
outlog_newline(struct outlog *l)
{
	if (l->len > 0 && l->buf[(l->start + l->len - 1) % l->cap] != '\n')
		outlog_append(l, "\n", 1);
}

/*
 * "$ " and the words joined by spaces, on one line: control characters
 * other than tab are escaped, and a very long command is cut.
 */
void
outlog_header(struct outlog *l, const char *first, const char *const *words,
    size_t n)
{
	char		 line[OUTLOG_CMD_MAX + 16];
	const char	*w;
	size_t		 o = 0, i;
	int		 cut = 0;

	for (i = 0; i <= n && !cut; i++) {
		if ((w = i == 0 ? first : words[i - 1]) == NULL)
			continue;
		if (o > 0)
			line[o++] = ' ';
		for (; *w != '\0'; w++) {
			if (o >= OUTLOG_CMD_MAX) {
				cut = 1;
				break;
			}
			if (((unsigned char)*w >= 0x20 && *w != 0x7f) ||
			    *w == '\t')
				line[o++] = *w;
			else if (*w == '\n') {
				line[o++] = '\\';
				line[o++] = 'n';
			} else
				o += (size_t)snprintf(line + o, 5, "\\x%02x",
				    (unsigned char)*w);
		}
	}
	line[o] = '\0';
	outlog_newline(l);
	outlog_printf(l, "$ %s%s\n", line, cut ? " ..." : "");
}

static void
outlog_signame(int sig, char *buf, size_t len)
{
	const char	*abbrev = sigabbrev_np(sig);

	if (abbrev != NULL)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "%d", sig);
}

/* How an exec ended, from its result, or the error that ended it. */
void
outlog_trailer(struct outlog *l, const struct sbx_result *r,
    const char *error)
{
	char		 sig[32];
	const char	*build;

	outlog_newline(l);
	if (r == NULL) {
		outlog_printf(l, "[failed: %s]\n", error);
		return;
	}
	build = (r->flags & SBX_R_BUILD_FAILED) ? "build failed: " : "";
	if (r->flags & SBX_R_CANCELLED)
		outlog_printf(l, "[cancelled]\n");
	else if (r->flags & SBX_R_TIMED_OUT)
		outlog_printf(l, "[%stimed out]\n", build);
	else if (r->flags & SBX_R_OOM)
		outlog_printf(l, "[%sout of memory]\n", build);
	else if (r->flags & SBX_R_EXEC_FAILED)
		outlog_printf(l, "[%scannot execute: %s]\n", build,
		    strerror(r->exec_errno));
	else if (r->signal != 0) {
		outlog_signame(r->signal, sig, sizeof(sig));
		outlog_printf(l, "[%skilled by signal %s]\n", build, sig);
	} else
		outlog_printf(l, "[%sexit %d]\n", build, r->exit_code);
}

/* The contiguous bytes from off, counted from the oldest kept. */
size_t
outlog_span(const struct outlog *l, size_t off, const uint8_t **p)
{
	size_t	 pos;

	if (off >= l->len) {
		*p = NULL;
		return 0;
	}
	pos = (l->start + off) % l->cap;
	*p = l->buf + pos;
	if (pos + (l->len - off) <= l->cap)
		return l->len - off;
	return l->cap - pos;
}

void
outlog_free(struct outlog *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}
