/*
 * Which records a listing shows: the filter options, and the times they
 * take.  Times are UTC throughout, as the records' are.
 */
#include <sys/types.h>

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcpctl.h"
#include "proto.h"
#include "util.h"

#define NS		1000000000LL
/* Times are nanoseconds in an int64_t: seconds beyond this (2262) overflow. */
#define SECONDS_MAX	(INT64_MAX / NS)

enum {
	OPT_SINCE = 256,
	OPT_UNTIL,
	OPT_TENANT,
	OPT_SANDBOX,
	OPT_EVENT,
	OPT_OUTCOME,
};

const struct option filter_longopts[] = {
	{ "since",	required_argument,	NULL,	OPT_SINCE },
	{ "until",	required_argument,	NULL,	OPT_UNTIL },
	{ "tenant",	required_argument,	NULL,	OPT_TENANT },
	{ "sandbox",	required_argument,	NULL,	OPT_SANDBOX },
	{ "event",	required_argument,	NULL,	OPT_EVENT },
	{ "outcome",	required_argument,	NULL,	OPT_OUTCOME },
	{ NULL,		0,			NULL,	0 },
};

int64_t
time_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* Exactly n digits at *s, moving past them; -1 if not. */
static int
digits(const char **s, int n, int *out)
{
	int	 v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/* ".fff" at *s in ns, moving past it; digits past the ninth are ignored. */
static int
fraction(const char **s, int64_t *out)
{
	const char	*p = *s + 1;
	int64_t		 v = 0, scale = NS;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++)
		if (scale > 1) {
			scale /= 10;
			v += (*p - '0') * scale;
		}
	*s = p;
	*out = v;
	return 0;
}

/* "YYYY-MM-DD", then optionally "[T ]HH:MM[:SS[.fff]]" and "Z". */
static int
time_iso(const char *s, int64_t *out)
{
	struct tm	 tm;
	time_t		 t;
	int		 y, mo, d, h = 0, mi = 0, sec = 0;
	int64_t		 frac = 0, ns;

	if (digits(&s, 4, &y) == -1 || *s++ != '-' ||
	    digits(&s, 2, &mo) == -1 || *s++ != '-' ||
	    digits(&s, 2, &d) == -1)
		return -1;
	if (*s == 'T' || *s == ' ') {
		s++;
		if (digits(&s, 2, &h) == -1 || *s++ != ':' ||
		    digits(&s, 2, &mi) == -1)
			return -1;
		if (*s == ':' && (s++, digits(&s, 2, &sec) == -1 ||
		    (*s == '.' && fraction(&s, &frac) == -1)))
			return -1;
	}
	if (*s == 'Z')
		s++;
	if (*s != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	t = timegm(&tm);
	/*
	 * timegm() moves 31 February on to March: refuse it instead.  The
	 * seconds are added after, or a leap second (23:59:60 on the last
	 * day of a month) would be refused too.
	 */
	if (tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -1;
	if (__builtin_mul_overflow((int64_t)t + sec, NS, &ns) ||
	    __builtin_add_overflow(ns, frac, &ns))
		return -1;
	*out = ns;
	return 0;
}

/*
 * An absolute time (ISO 8601 in UTC, or seconds since the epoch), or one
 * relative to now ("10m": ten minutes ago).  0, or -1 if not a time.
 */
int
time_parse(const char *s, int64_t now, int64_t *out)
{
	const char	*p;
	long long	 n = 0;
	int64_t		 unit;

	for (p = s; isdigit((unsigned char)*p); p++) {
		n = n * 10 + (*p - '0');
		if (n > SECONDS_MAX)
			return -1;
	}
	if (p == s)
		return -1;
	if (*p == '\0') {
		*out = n * NS;
		return 0;
	}
	if (p[1] == '\0' && strchr("smhdw", *p) != NULL) {
		unit = *p == 's' ? 1 : *p == 'm' ? 60 : *p == 'h' ? 3600 :
		    *p == 'd' ? 86400 : 7 * 86400;
		if (n > SECONDS_MAX / unit)
			return -1;
		*out = now - n * unit * NS;
		return 0;
	}
	return time_iso(s, out);
}

/* "2026-11-21T15:00:00.123Z", with 3 or 9 digits of the second. */
void
time_format(int64_t ns, int fracdigits, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t;
	int64_t		 frac;
	char		 date[32];

	t = (time_t)(ns / NS);
	frac = ns % NS;
	if (frac < 0) {
		frac += NS;
		t--;
	}
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		snprintf(buf, len, "@%lld", (long long)ns);
		return;
	}
	if (fracdigits == 3)
		snprintf(buf, len, "%s.%03lldZ", date, (long long)(frac /
		    1000000));
	else
		snprintf(buf, len, "%s.%09lldZ", date, (long long)frac);
}

static int
known_event(const char *e)
{
	const char	*name;
	uint32_t	 i;

	for (i = 1; i < AEV_EVENT_MAX; i++)
		if ((name = audit_event_name(i)) != NULL &&
		    strcmp(name, e) == 0)
			return 1;
	return 0;
}

static int
known_outcome(const char *o)
{
	uint32_t	 i;

	for (i = 1; i < AOC_OUTCOME_MAX; i++)
		if (strcmp(audit_outcome_name(i), o) == 0)
			return 1;
	return 0;
}

static int
hex_prefix(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= 32 &&
	    strspn(s, "0123456789abcdef") == len;
}

/*
 * One filter option of getopt_long(): 1 if it was one and is valid, 0 if
 * opt is not a filter option, -1 with the reason if its value is bad.
 */
int
filter_option(struct filter *f, int opt, const char *arg, char *why,
    size_t len)
{
	switch (opt) {
	case OPT_SINCE:
	case OPT_UNTIL:
		if (time_parse(arg, time_now_ns(), opt == OPT_SINCE ?
		    &f->since : &f->until) == -1) {
			snprintf(why, len, "%s: not a time "
			    "(2026-11-21T15:00:00Z, \"2026-11-21 15:00:00\", "
			    "10m, 2h, 3d, or seconds since the epoch)", arg);
			return -1;
		}
		if (opt == OPT_SINCE)
			f->has_since = 1;
		else
			f->has_until = 1;
		return 1;
	case OPT_TENANT:
		f->tenant = arg;
		return 1;
	case OPT_SANDBOX:
		if (!hex_prefix(arg)) {
			snprintf(why, len, "%s: not a sandbox id (up to 32 "
			    "lowercase hex digits)", arg);
			return -1;
		}
		f->sandbox = arg;
		return 1;
	case OPT_EVENT:
		if (!known_event(arg)) {
			snprintf(why, len, "%s: no such event", arg);
			return -1;
		}
		if (f->nevents == FILTER_EVENTS_MAX) {
			snprintf(why, len, "too many --event options");
			return -1;
		}
		f->events[f->nevents++] = arg;
		return 1;
	case OPT_OUTCOME:
		if (!known_outcome(arg)) {
			snprintf(why, len, "%s: no such outcome (intent, ok, "
			    "failed, denied)", arg);
			return -1;
		}
		f->outcome = arg;
		return 1;
	}
	return 0;
}
