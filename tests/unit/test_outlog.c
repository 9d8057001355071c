/*
 * A persistent sandbox's output log: the ring that keeps its last
 * SBX_LOG_MAX bytes, and the lines around each command.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "../../sandboxd/sandboxd.h"
#include "../tap.h"

/* The log's bytes, oldest first, as LOGS would send them. */
static size_t
flat(const struct outlog *l, uint8_t *out)
{
	const uint8_t	*p;
	size_t		 off, k;

	for (off = 0; off < l->len; off += k) {
		k = outlog_span(l, off, &p);
		memcpy(out + off, p, k);
	}
	return l->len;
}

static int
log_is(const struct outlog *l, const char *want)
{
	static uint8_t	 buf[SBX_LOG_MAX];
	size_t		 n = flat(l, buf);

	if (n == strlen(want) && memcmp(buf, want, n) == 0)
		return 1;
	diag("log is \"%.*s\"", (int)n, buf);
	return 0;
}

static void
test_lines(void)
{
	struct outlog		 l;
	struct sbx_result	 r;
	const char		*argv[] = { "printf", "%s\n", "a b" };
	char			 big[5000];
	static uint8_t		 buf[SBX_LOG_MAX];
	size_t			 n;

	memset(&l, 0, sizeof(l));
	ok(l.len == 0 && l.mtime == 0 && !l.dropped, "a new log is empty");
	outlog_header(&l, "echo hi; echo there >&2", NULL, 0);
	outlog_append(&l, "hi\n", 3);
	outlog_append(&l, "there\n", 6);
	memset(&r, 0, sizeof(r));
	outlog_trailer(&l, &r, NULL);
	ok(log_is(&l, "$ echo hi; echo there >&2\nhi\nthere\n[exit 0]\n"),
	    "a shell command, its output and its exit");
	ok(l.mtime > 0 && !l.dropped, "with the time of the last append");

	outlog_free(&l);
	outlog_header(&l, NULL, argv, 3);
	outlog_append(&l, "no newline", 10);
	r.exit_code = 3;
	outlog_trailer(&l, &r, NULL);
	outlog_header(&l, "run c", argv + 2, 1);
	outlog_append(&l, "half", 4);
	ok(log_is(&l, "$ printf %s\\n a b\nno newline\n[exit 3]\n"
	    "$ run c a b\nhalf"),
	    "argv joined by spaces, a newline before each line that needs "
	    "one");

	outlog_free(&l);
	outlog_header(&l, "a\nb\001c\td", NULL, 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	outlog_header(&l, big, NULL, 0);
	n = flat(&l, buf);
	ok(n > 19 && memcmp(buf, "$ a\\nb\\x01c\td\n$ xxx", 19) == 0,
	    "control characters in a command are escaped, tab kept");
	ok(n < 4200 && memcmp(buf + n - 5, " ...\n", 5) == 0,
	    "a very long command is cut, and says so (%zu bytes)", n);
	outlog_free(&l);
}

static void
test_trailers(void)
{
	struct outlog		 l;
	struct sbx_result	 r;

	memset(&l, 0, sizeof(l));
#define END(flags_, sig_, code_, errno_) do {				\
	memset(&r, 0, sizeof(r));					\
	r.flags = (flags_);						\
	r.signal = (sig_);						\
	r.exit_code = (code_);						\
	r.exec_errno = (errno_);					\
	outlog_trailer(&l, &r, NULL);					\
} while (0)
	END(0, SIGKILL, -1, 0);
	END(SBX_R_TIMED_OUT, SIGKILL, -1, 0);
	END(SBX_R_OOM, SIGKILL, -1, 0);
	END(SBX_R_OOM | SBX_R_TIMED_OUT | SBX_R_CANCELLED, SIGKILL, -1, 0);
	END(SBX_R_EXEC_FAILED, 0, 127, 2);
	END(SBX_R_BUILD_FAILED, 0, 1, 0);
	END(SBX_R_TRUNCATED, SIGPIPE, -1, 0);
	END(0, 200, -1, 0);
#undef END
	outlog_trailer(&l, NULL, "the sandbox's container ended");
	ok(log_is(&l, "[killed by signal SIGKILL]\n[timed out]\n"
	    "[out of memory]\n[cancelled]\n"
	    "[cannot execute: No such file or directory]\n"
	    "[build failed: exit 1]\n[killed by signal SIGPIPE]\n"
	    "[killed by signal 200]\n"
	    "[failed: the sandbox's container ended]\n"),
	    "each way an exec ends has its line");
	outlog_free(&l);
}

static void
test_ring(void)
{
	struct outlog	 l;
	static uint8_t	 in[2 * SBX_LOG_MAX], out[SBX_LOG_MAX];
	size_t		 i, n, total = 0;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + i / 251);
	memset(&l, 0, sizeof(l));
	/* Odd sizes, so the ring wraps mid-append. */
	for (i = 0; total + 9973 <= SBX_LOG_MAX; i++) {
		outlog_append(&l, in + total, 9973);
		total += 9973;
	}
	ok(l.len == total && !l.dropped && l.cap <= SBX_LOG_MAX,
	    "below the cap nothing is dropped (%zu bytes, cap %zu)", l.len,
	    l.cap);
	outlog_append(&l, in + total, 9973);
	total += 9973;
	outlog_append(&l, in + total, 3);
	total += 3;
	n = flat(&l, out);
	ok(n == SBX_LOG_MAX && l.dropped && l.start != 0,
	    "past it the log keeps SBX_LOG_MAX bytes, flagged");
	ok(memcmp(out, in + total - SBX_LOG_MAX, SBX_LOG_MAX) == 0,
	    "the newest ones, oldest first, across the wrap");

	outlog_append(&l, in, sizeof(in));
	n = flat(&l, out);
	ok(n == SBX_LOG_MAX && memcmp(out, in + sizeof(in) - SBX_LOG_MAX,
	    SBX_LOG_MAX) == 0, "one append past the cap keeps its tail");
	outlog_free(&l);

	outlog_append(&l, in, sizeof(in));
	n = flat(&l, out);
	ok(n == SBX_LOG_MAX && l.dropped && memcmp(out, in + sizeof(in) -
	    SBX_LOG_MAX, SBX_LOG_MAX) == 0,
	    "the same on an empty log, which then says bytes were dropped");
	outlog_free(&l);
}

int
main(void)
{
	test_lines();
	test_trailers();
	test_ring();
	return tap_done();
}
