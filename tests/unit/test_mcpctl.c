/*
 * mcpctl's pure parts (auditd/mcpctl/filter.c and body.c): the times and
 * filter options a listing takes, how times are shown, and how a record's
 * body, which a tampered database may have made anything, is decoded and
 * made safe for a terminal and for JSON.  (The commands themselves are
 * tested on real databases by tests/integration/mcpctl.sh.)
 */
#include <sys/types.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/mcpctl/mcpctl.h"
#include "../tap.h"

#define NS	1000000000LL
#define T0	1795273200LL		/* 2026-11-21T15:00:00Z */
#define NOW	(T0 * NS + 123)		/* relative times count from it */

static int
parses(const char *s, int64_t want)
{
	int64_t	 got = 0;

	if (time_parse(s, NOW, &got) == -1) {
		diag("\"%s\" refused", s);
		return 0;
	}
	if (got != want) {
		diag("\"%s\" is %lld, not %lld", s, (long long)got,
		    (long long)want);
		return 0;
	}
	return 1;
}

static int
refused(const char *s)
{
	int64_t	 got = 42;

	if (time_parse(s, NOW, &got) == 0) {
		diag("\"%s\" taken as %lld", s, (long long)got);
		return 0;
	}
	/* A refusal leaves the caller's value alone. */
	return got == 42;
}

static void
test_time_iso(void)
{
	ok(parses("2026-11-21T15:00:00Z", T0 * NS), "ISO 8601 with Z");
	ok(parses("2026-11-21T15:00:00", T0 * NS), "Z is optional: UTC");
	ok(parses("2026-11-21 15:00:00", T0 * NS), "a space for the T");
	ok(parses("2026-11-21 15:00", T0 * NS) &&
	    parses("2026-11-21T15:00Z", T0 * NS), "seconds are optional");
	ok(parses("2026-11-21", (T0 - 15 * 3600) * NS),
	    "a date alone is its midnight");
	ok(parses("2026-11-21T15:00:00.5Z", T0 * NS + 500000000) &&
	    parses("2026-11-21T15:00:00.000000001Z", T0 * NS + 1) &&
	    parses("2026-11-21 15:00:00.123456789", T0 * NS + 123456789),
	    "fractions of a second, down to the nanosecond");
	ok(parses("2026-11-21T15:00:00.1234567899Z", T0 * NS + 123456789),
	    "digits beyond the nanosecond are ignored");
	ok(parses("2024-02-29T12:34:56Z", 1709210096LL * NS),
	    "29 February of a leap year");
	ok(parses("1970-01-01T00:00:00Z", 0) &&
	    parses("1969-12-31T23:59:59Z", -NS) &&
	    parses("1969-12-31T23:59:59.25Z", -NS + 250000000),
	    "the epoch, and before it");
	ok(parses("2016-12-31T23:59:60Z", 1483228800LL * NS),
	    "a leap second is the second after it");
}

static void
test_time_other(void)
{
	ok(parses("1795273200", T0 * NS), "seconds since the epoch");
	ok(parses("0", 0), "the epoch itself");
	ok(parses("30s", NOW - 30 * NS), "30s is 30 seconds before now");
	ok(parses("10m", NOW - 600 * NS), "10m is 10 minutes before");
	ok(parses("2h", NOW - 2 * 3600 * NS), "2h");
	ok(parses("3d", NOW - 3 * 86400 * NS), "3d");
	ok(parses("1w", NOW - 7 * 86400 * NS), "1w");
	ok(parses("0m", NOW), "0m is now");
	ok(parses("9223372036", 9223372036LL * NS) &&
	    parses("15250w", NOW - 15250LL * 7 * 86400 * NS) &&
	    parses("2262-04-11T23:47:16.854775807Z", INT64_MAX) &&
	    parses("1677-09-21T00:12:44Z", -9223372036LL * NS),
	    "the ends of what nanoseconds in 64 bits hold");
}

static void
test_time_refused(void)
{
	ok(refused("2026-02-31") && refused("2026-02-29") &&
	    refused("2026-04-31T10:00"), "days a month does not have");
	ok(refused("2026-13-01") && refused("2026-00-10") &&
	    refused("2026-11-00") && refused("2026-11-32"),
	    "months and days out of range");
	ok(refused("2026-11-21T24:00") && refused("2026-11-21T23:60") &&
	    refused("2026-11-21T23:59:61"), "24:00, and minutes past 59");
	ok(refused("garbage") && refused("") && refused("m") &&
	    refused("10x") && refused("10mm") && refused("-10m") &&
	    refused(" 10m") && refused("10 m") && refused("1.5h"),
	    "garbage, empty, and bad relative times");
	ok(refused("26-11-21") && refused("2026-1-21") &&
	    refused("2026-11-21T15") && refused("2026-11-21T15:") &&
	    refused("2026-11-21T15:0") && refused("2026-11-21T15:00:") &&
	    refused("2026-11-21T15:00:0") && refused("2026-11-21T15:00:00.") &&
	    refused("2026-11-21T15:00:00Zjunk") &&
	    refused("2026-11-21X15:00"), "ISO forms cut short or padded");
	ok(refused("2026-11-21T15:00.5Z"),
	    "a fraction only after the seconds");
	ok(refused("2026-11-21T15:00:00+01:00") &&
	    refused("2026-11-21T15:00:00-05"),
	    "no time zone but UTC");
	ok(refused("100000000001") && refused("99999999999999999999999") &&
	    refused("99999999999w") && refused("9223372037") &&
	    refused("15251w") && refused("106752d") &&
	    refused("2562048h") && refused("153722868m"),
	    "beyond what nanoseconds in 64 bits hold");
	ok(refused("2262-04-11T23:47:17Z") && refused("9999-12-31") &&
	    refused("1677-09-21T00:12:43Z") && refused("0000-01-01"),
	    "ISO times beyond that too");
}

static int
formats(int64_t ns, int digits, const char *want)
{
	char	 buf[64];

	time_format(ns, digits, buf, sizeof(buf));
	if (strcmp(buf, want) == 0)
		return 1;
	diag("%lld is \"%s\", not \"%s\"", (long long)ns, buf, want);
	return 0;
}

static void
test_time_format(void)
{
	char	 buf[10];

	ok(formats(T0 * NS + 123456789, 3, "2026-11-21T15:00:00.123Z"),
	    "milliseconds");
	ok(formats(T0 * NS + 123456789, 9, "2026-11-21T15:00:00.123456789Z"),
	    "nanoseconds");
	ok(formats(0, 3, "1970-01-01T00:00:00.000Z") &&
	    formats(1, 9, "1970-01-01T00:00:00.000000001Z"), "the epoch");
	ok(formats(-1, 9, "1969-12-31T23:59:59.999999999Z") &&
	    formats(-1, 3, "1969-12-31T23:59:59.999Z") &&
	    formats(-NS, 9, "1969-12-31T23:59:59.000000000Z") &&
	    formats(-1500000000, 3, "1969-12-31T23:59:58.500Z"),
	    "before 1970 the fraction still counts forwards");
	ok(formats(INT64_MAX, 9, "2262-04-11T23:47:16.854775807Z") &&
	    formats(INT64_MIN, 9, "1677-09-21T00:12:43.145224192Z"),
	    "the ends of int64_t");
	time_format(T0 * NS, 9, buf, sizeof(buf));
	ok(strcmp(buf, "2026-11-2") == 0, "cut to the buffer: %s", buf);
}

/* A filter option's value, for getopt_long(), by its name. */
static int
opt(const char *name)
{
	const struct option	*o;

	for (o = filter_longopts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			return o->val;
	return -1;
}

static int
filter(struct filter *f, const char *name, const char *arg, char *why)
{
	why[0] = '\0';
	return filter_option(f, opt(name), arg, why, 256);
}

static void
test_filter(void)
{
	struct filter	 f;
	char		 why[256];
	int64_t		 before, after;
	int		 i, rv;

	memset(&f, 0, sizeof(f));
	ok(opt("since") > 255 && opt("until") > 255 && opt("tenant") > 255 &&
	    opt("sandbox") > 255 && opt("event") > 255 &&
	    opt("outcome") > 255, "six long options, none a letter");
	ok(filter_option(&f, 'n', "5", why, sizeof(why)) == 0 &&
	    filter_option(&f, 'f', NULL, why, sizeof(why)) == 0,
	    "another option is left to the command");

	ok(filter(&f, "since", "2026-11-21T15:00:00Z", why) == 1 &&
	    f.has_since && f.since == T0 * NS && !f.has_until, "--since");
	ok(filter(&f, "until", "1795273200", why) == 1 && f.has_until &&
	    f.until == T0 * NS, "--until");
	before = time_now_ns();
	rv = filter(&f, "since", "10m", why);
	after = time_now_ns();
	ok(rv == 1 && f.since >= before - 600 * NS &&
	    f.since <= after - 600 * NS, "--since 10m counts from now");
	ok(filter(&f, "until", "yesterday", why) == -1 &&
	    strncmp(why, "yesterday: not a time (", 23) == 0,
	    "a bad time is named: %s", why);

	ok(filter(&f, "tenant", "acme", why) == 1 &&
	    strcmp(f.tenant, "acme") == 0, "--tenant");

	ok(filter(&f, "sandbox", "5bd1", why) == 1 &&
	    strcmp(f.sandbox, "5bd1") == 0 &&
	    filter(&f, "sandbox", "0123456789abcdef0123456789abcdef",
	    why) == 1, "--sandbox takes an id or a prefix of one");
	ok(filter(&f, "sandbox", "5BD1", why) == -1 &&
	    strcmp(why, "5BD1: not a sandbox id (up to 32 lowercase hex "
	    "digits)") == 0, "not uppercase: %s", why);
	ok(filter(&f, "sandbox", "", why) == -1 &&
	    filter(&f, "sandbox", "0123456789abcdef0123456789abcdef0",
	    why) == -1 && filter(&f, "sandbox", "5bd1%", why) == -1 &&
	    strcmp(f.sandbox, "0123456789abcdef0123456789abcdef") == 0,
	    "not empty, too long, or with a wildcard; the last good one "
	    "stays");

	ok(filter(&f, "outcome", "denied", why) == 1 &&
	    strcmp(f.outcome, "denied") == 0 &&
	    filter(&f, "outcome", "intent", why) == 1 &&
	    filter(&f, "outcome", "ok", why) == 1 &&
	    filter(&f, "outcome", "failed", why) == 1, "--outcome");
	ok(filter(&f, "outcome", "maybe", why) == -1 &&
	    strcmp(why, "maybe: no such outcome (intent, ok, failed, "
	    "denied)") == 0 && strcmp(f.outcome, "failed") == 0,
	    "an unknown outcome: %s", why);

	ok(filter(&f, "event", "run", why) == 1 &&
	    filter(&f, "event", "key-rotation", why) == 1 &&
	    filter(&f, "event", "daemon-start", why) == 1 && f.nevents == 3 &&
	    strcmp(f.events[0], "run") == 0 &&
	    strcmp(f.events[2], "daemon-start") == 0, "--event repeats");
	ok(filter(&f, "event", "runn", why) == -1 &&
	    strcmp(why, "runn: no such event") == 0 && f.nevents == 3,
	    "an unknown event: %s", why);
	ok(filter(&f, "event", "", why) == -1 &&
	    filter(&f, "event", "RUN", why) == -1, "nor an empty one");
	for (i = 3, rv = 1; i < FILTER_EVENTS_MAX && rv == 1; i++)
		rv = filter(&f, "event", "exec", why);
	ok(rv == 1 && f.nevents == FILTER_EVENTS_MAX,
	    "up to %d --event options", FILTER_EVENTS_MAX);
	ok(filter(&f, "event", "exec", why) == -1 &&
	    strcmp(why, "too many --event options") == 0 &&
	    f.nevents == FILTER_EVENTS_MAX, "but not one more: %s", why);
}

/* The next line of a body is key and val, val vlen bytes. */
static int
next_is(struct body_iter *it, const char *key, const char *val,
    size_t vlen)
{
	char	*k, *v;
	size_t	 n;
	int	 good;

	if (!body_next(it, &k, &v, &n)) {
		diag("no line where \"%s\" was wanted", key);
		return 0;
	}
	good = strcmp(k, key) == 0 && n == vlen && memcmp(v, val, n) == 0 &&
	    v[n] == '\0';
	if (!good)
		diag("\"%s\" = \"%.*s\" (%zu), not \"%s\" = \"%s\"", k,
		    (int)n, v, n, key, val);
	free(k);
	free(v);
	return good;
}

static int
ended(struct body_iter *it)
{
	char	*k, *v;
	size_t	 n;

	if (!body_next(it, &k, &v, &n))
		return 1;
	diag("a line after the end: \"%s\"", k);
	free(k);
	free(v);
	return 0;
}

static void
body_is(struct body_iter *it, const char *body)
{
	body_iter_init(it, body, strlen(body));
}

static void
test_body(void)
{
	static const char	 nul[] = "a=1\0b\nc=2";
	struct body_iter	 it;

	body_is(&it, "exit=0\ntool=run\n");
	ok(next_is(&it, "exit", "0", 1) && next_is(&it, "tool", "run", 3) &&
	    ended(&it), "key=value lines");

	body_is(&it, "code=a%20b%0A%25%2f%2F%e2%82%AC%00z\n");
	ok(next_is(&it, "code", "a b\n%//\xe2\x82\xac\0z", 12) && ended(&it),
	    "%%XX decoded, either case, NUL and UTF-8 bytes too");

	body_is(&it, "a=100%\nb=%4\nc=%zz%4g\nd=%%41\ne=x%4");
	ok(next_is(&it, "a", "100%", 4) && next_is(&it, "b", "%4", 2) &&
	    next_is(&it, "c", "%zz%4g", 6) && next_is(&it, "d", "%A", 2) &&
	    next_is(&it, "e", "x%4", 3) && ended(&it),
	    "a malformed escape is kept as it is");

	body_is(&it, "k=a=b\n=v\nnoval\nempty=\n");
	ok(next_is(&it, "k", "a=b", 3) && next_is(&it, "", "v", 1) &&
	    next_is(&it, "noval", "", 0) && next_is(&it, "empty", "", 0) &&
	    ended(&it), "the first '=' splits; a line without one is a key");

	body_is(&it, "k%41=v\n");
	ok(next_is(&it, "k%41", "v", 1) && ended(&it),
	    "keys are not decoded");

	body_is(&it, "a=1\nlast=x");
	ok(next_is(&it, "a", "1", 1) && next_is(&it, "last", "x", 1) &&
	    ended(&it), "a last line without a newline");

	body_is(&it, "");
	ok(ended(&it), "an empty body has no line");
	body_is(&it, "\n\n");
	ok(next_is(&it, "", "", 0) && next_is(&it, "", "", 0) && ended(&it),
	    "empty lines are empty keys");

	body_iter_init(&it, nul, sizeof(nul) - 1);
	ok(next_is(&it, "a", "1\0b", 3) && next_is(&it, "c", "2", 1) &&
	    ended(&it), "a NUL inside a line does not end it");

	body_iter_init(&it, "a=1\nb=2", 4);
	ok(next_is(&it, "a", "1", 1) && ended(&it),
	    "nothing is read past the given length");
}

static int
vis_is(const char *in, size_t len, const char *want)
{
	char	*s = str_vis(in, len);
	int	 good = strcmp(s, want) == 0;

	if (!good)
		diag("\"%s\", not \"%s\"", s, want);
	free(s);
	return good;
}

#define VIS(in, want)	vis_is(in, sizeof(in) - 1, want)

static void
test_str_vis(void)
{
	ok(VIS("plain text, 100% ~", "plain text, 100% ~"),
	    "printable ASCII is kept");
	ok(VIS("a\\b\nc\td\re", "a\\\\b\\nc\\td\\re"),
	    "backslash, newline, tab and return as C escapes");
	ok(VIS("\x01\x1b[31mred\x7f", "\\x01\\x1b[31mred\\x7f") &&
	    VIS("a\0b", "a\\x00b"), "other controls, DEL and NUL as \\xNN");
	ok(VIS("\xc2\x80\xc2\x9b" "2J\xc2\x9f", "\\xc2\\x80\\xc2\\x9b" "2J"
	    "\\xc2\\x9f"), "C1 controls (U+0080..U+009F) escaped");
	ok(VIS("\xc2\xa0\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
	    "\xf4\x8f\xbf\xbf", "\xc2\xa0\xc3\xa9t\xc3\xa9 \xe2\x82\xac "
	    "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
	    "valid UTF-8 is kept, U+00A0 to U+10FFFF");
	ok(VIS("\x80\xbf\xfe\xff", "\\x80\\xbf\\xfe\\xff") &&
	    VIS("\xc2", "\\xc2") && VIS("\xe2\x82", "\\xe2\\x82") &&
	    VIS("\xe2\x82" "A", "\\xe2\\x82" "A"),
	    "stray and cut sequences escaped byte by byte");
	ok(VIS("\xc0\xaf\xc1\xbf", "\\xc0\\xaf\\xc1\\xbf") &&
	    VIS("\xe0\x80\xaf", "\\xe0\\x80\\xaf") &&
	    VIS("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"),
	    "overlong forms escaped");
	ok(VIS("\xed\xa0\x80\xed\xbf\xbf", "\\xed\\xa0\\x80\\xed\\xbf\\xbf") &&
	    VIS("\xed\x9f\xbf", "\xed\x9f\xbf"),
	    "surrogates escaped, U+D7FF kept");
	ok(VIS("\xf4\x90\x80\x80\xf5\x80\x80\x80",
	    "\\xf4\\x90\\x80\\x80\\xf5\\x80\\x80\\x80"),
	    "beyond U+10FFFF escaped");
	ok(vis_is("", 0, "") && vis_is("abc", 1, "a"),
	    "empty, and only len bytes");
}

static int
utf8_is(const char *in, size_t len, const char *want, size_t wantlen)
{
	char	*s;
	size_t	 n;
	int	 good;

	s = str_utf8(in, len, &n);
	good = n == wantlen && memcmp(s, want, n) == 0 && s[n] == '\0';
	if (!good)
		diag("%zu bytes \"%.*s\", not %zu", n, (int)n, s, wantlen);
	free(s);
	return good;
}

#define UTF8(in, want)	utf8_is(in, sizeof(in) - 1, want, sizeof(want) - 1)
#define FFFD		"\xef\xbf\xbd"

static void
test_str_utf8(void)
{
	ok(UTF8("ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	    "ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "valid UTF-8 is kept");
	ok(UTF8("a\0\n\x1b\x7f\xc2\x9b", "a\0\n\x1b\x7f\xc2\x9b"),
	    "controls too, C1 and NUL included: JSON escapes them");
	ok(UTF8("a\xffz", "a" FFFD "z") && UTF8("\x80", FFFD),
	    "a bad byte becomes U+FFFD");
	ok(UTF8("\xe2\x82", FFFD FFFD) && UTF8("\xe2\x82" "A", FFFD FFFD "A"),
	    "each byte of a cut sequence does");
	ok(UTF8("\xc0\xaf", FFFD FFFD) &&
	    UTF8("\xed\xa0\x80", FFFD FFFD FFFD) &&
	    UTF8("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD),
	    "overlong forms, surrogates, beyond U+10FFFF");
	ok(utf8_is("", 0, "", 0), "empty");
}

int
main(void)
{
	test_time_iso();
	test_time_other();
	test_time_refused();
	test_time_format();
	test_filter();
	test_body();
	test_str_vis();
	test_str_utf8();
	return tap_done();
}
