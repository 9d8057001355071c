/*
 * Turning sandbox bytes into what JSON and MCP can carry: valid UTF-8,
 * base64, MIME types, times and signal names; and client text into a
 * value of a key=value log line.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sodium.h>

#include "mcpd.h"
#include "util.h"

/* The length of the valid UTF-8 sequence at p, or 0. */
static size_t
utf8_seq(const uint8_t *p, size_t len)
{
	uint32_t	 cp;
	size_t		 n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int
utf8_valid(const uint8_t *p, size_t len)
{
	size_t	 i, n;

	for (i = 0; i < len; i += n)
		if ((n = utf8_seq(p + i, len - i)) == 0)
			return 0;
	return 1;
}

json_t *
utf8_json(const uint8_t *p, size_t len)
{
	uint8_t	*buf;
	size_t	 i, n, o = 0;
	json_t	*s;

	if (len == 0)
		return json_string("");
	if (utf8_valid(p, len))
		return json_stringn((const char *)p, len);
	buf = xmalloc(len * 3 + 1);
	for (i = 0; i < len; i += n) {
		if ((n = utf8_seq(p + i, len - i)) == 0) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			n = 1;
		} else {
			memcpy(buf + o, p + i, n);
			o += n;
		}
	}
	s = json_stringn((const char *)buf, o);
	free(buf);
	return s;
}

char *
b64_encode(const uint8_t *p, size_t len)
{
	size_t	 n = sodium_base64_encoded_len(len,
		    sodium_base64_VARIANT_ORIGINAL);
	char	*s = xmalloc(n);

	sodium_bin2base64(s, n, p, len, sodium_base64_VARIANT_ORIGINAL);
	return s;
}

uint8_t *
b64_decode(const char *s, size_t len, size_t *outlen)
{
	uint8_t		*buf;
	const char	*end;

	buf = xmalloc(len / 4 * 3 + 3);
	if (sodium_base642bin(buf, len / 4 * 3 + 3, s, len, "\n\r ", outlen,
	    &end, sodium_base64_VARIANT_ORIGINAL) != 0 || end != s + len) {
		free(buf);
		return NULL;
	}
	return buf;
}

void
iso_time(int64_t t, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL) {
		str_copy(buf, "", len);
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *
signal_name(int sig)
{
	static const struct {
		int		 sig;
		const char	*name;
	} names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" }, { SIGXCPU, "SIGXCPU" },
		{ SIGXFSZ, "SIGXFSZ" }, { SIGSYS, "SIGSYS" },
	};
	static char	 buf[16];
	size_t		 i;

	for (i = 0; i < nitems(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/*
 * A value for a "key=value" log line: as it is when it is printable ASCII
 * with no space, quote or backslash, else in double quotes with those
 * escaped and other bytes as \xNN, so that one value is always one word
 * and a line always parses the same.  Cut to fit buf.
 */
const char *
log_value(const char *s, char *buf, size_t len)
{
	const unsigned char	*p;
	size_t			 n = 0;
	int			 plain = *s != '\0';

	for (p = (const unsigned char *)s; *p != '\0' && plain; p++)
		plain = *p > 0x20 && *p < 0x7f && *p != '"' && *p != '\\';
	if (plain) {
		(void)snprintf(buf, len, "%s", s);
		return buf;
	}
	if (len < 3)
		return "\"\"";
	buf[n++] = '"';
	for (p = (const unsigned char *)s; *p != '\0' && n + 5 < len; p++) {
		if (*p == '"' || *p == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)*p;
		} else if (*p < 0x20 || *p >= 0x7f)
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", *p);
		else
			buf[n++] = (char)*p;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}
