/*
 * Record bodies decoded for people and for JSON.  A body is "key=value"
 * lines with %XX escapes (common/auditbody.h), but a tampered one may be
 * anything, so decoding here never assumes it is well formed.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "util.h"

void
body_iter_init(struct body_iter *it, const char *buf, size_t len)
{
	it->p = buf;
	it->end = buf + len;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* %XX decoded; a malformed escape is kept as it is. */
static char *
body_decode(const char *s, size_t len, size_t *outlen)
{
	char	*out = xmalloc(len + 1);
	size_t	 i, n = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len &&
		    (hi = hexval((unsigned char)s[i + 1])) != -1 &&
		    (lo = hexval((unsigned char)s[i + 2])) != -1) {
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[n++] = s[i];
	}
	out[n] = '\0';
	*outlen = n;
	return out;
}

int
body_next(struct body_iter *it, char **key, char **val, size_t *vlen)
{
	const char	*nl, *eq;
	size_t		 klen;

	if (it->p >= it->end)
		return 0;
	if ((nl = memchr(it->p, '\n', (size_t)(it->end - it->p))) == NULL)
		nl = it->end;
	if ((eq = memchr(it->p, '=', (size_t)(nl - it->p))) == NULL)
		eq = nl;
	klen = (size_t)(eq - it->p);
	*key = xmalloc(klen + 1);
	memcpy(*key, it->p, klen);
	(*key)[klen] = '\0';
	if (eq < nl)
		*val = body_decode(eq + 1, (size_t)(nl - eq - 1), vlen);
	else
		*val = body_decode("", 0, vlen);
	it->p = nl < it->end ? nl + 1 : nl;
	return 1;
}

/* The length of a valid UTF-8 sequence at s, or 0. */
static size_t
utf8_len(const unsigned char *s, size_t left)
{
	uint32_t	 cp;
	size_t		 n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * What a sandbox's code put in a record reaches an admin's terminal: no
 * control character may pass, C1 ones (U+0080..U+009F) included.
 */
char *
str_vis(const char *s, size_t len)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			*out = xmalloc(len * 4 + 1);
	size_t			 i, n = 0, k;

	for (i = 0; i < len; i += k) {
		k = 1;
		if (u[i] == '\\' || u[i] == '\n' || u[i] == '\t' ||
		    u[i] == '\r') {
			out[n++] = '\\';
			out[n++] = u[i] == '\\' ? '\\' : u[i] == '\n' ? 'n' :
			    u[i] == '\t' ? 't' : 'r';
		} else if (u[i] >= 0x20 && u[i] < 0x7f)
			out[n++] = (char)u[i];
		else if (u[i] >= 0x80 && (k = utf8_len(u + i, len - i)) > 1 &&
		    !(u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			memcpy(out + n, u + i, k);
			n += k;
		} else {
			k = 1;
			n += (size_t)snprintf(out + n, 5, "\\x%02x", u[i]);
		}
	}
	out[n] = '\0';
	return out;
}

char *
str_utf8(const char *s, size_t len, size_t *outlen)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			*out = xmalloc(len * 3 + 1);
	size_t			 i, n = 0, k;

	for (i = 0; i < len; i += k) {
		if ((k = utf8_len(u + i, len - i)) > 0) {
			memcpy(out + n, u + i, k);
			n += k;
		} else {
			memcpy(out + n, "\xef\xbf\xbd", 3);
			n += 3;
			k = 1;
		}
	}
	out[n] = '\0';
	*outlen = n;
	return out;
}
