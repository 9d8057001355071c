/*
 * Minimal TAP output for the C tests.  tests/run.sh counts "ok" and
 * "not ok" lines across every test program and script.
 */
#ifndef MCPD_TAP_H
#define MCPD_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

__attribute__((__format__(printf, 4, 5), unused))
static int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list	 ap;

	tap_count++;
	printf("%s %d - ", pass ? "ok" : "not ok", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return pass;
}

#define ok(cond, ...)	tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...)	do { printf("# "); printf(__VA_ARGS__); \
			    printf("\n"); } while (0)

__attribute__((unused))
static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
