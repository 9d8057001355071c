#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"
#include "util.h"

int
host_loopback(const char *host)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;

	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* A DNS name's characters, or an IPv4 address's. */
static int
host_chars(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return 1;
}

static int
url_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int
url_parse(const char *s, struct url *u, const char **why)
{
	struct in6_addr	 a6;
	const char	*p, *auth, *end, *colon;
	size_t		 n, i;

	memset(u, 0, sizeof(*u));
	for (p = s; *p != '\0'; p++)
		if (*p <= 0x20 || *p >= 0x7f) {
			*why = "only printable ASCII, no spaces";
			return -1;
		}
	if (strncasecmp(s, "https://", 8) == 0) {
		u->https = 1;
		auth = s + 8;
	} else if (strncasecmp(s, "http://", 7) == 0)
		auth = s + 7;
	else {
		*why = "not an http:// or https:// URL";
		return -1;
	}
	if (strchr(s, '#') != NULL) {
		*why = "no fragment (#) allowed";
		return -1;
	}
	end = auth + strcspn(auth, "/?");
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL) {
		*why = "no user information (@) allowed";
		return -1;
	}
	if (*auth == '[') {
		if ((p = memchr(auth, ']', (size_t)(end - auth))) == NULL) {
			*why = "an IPv6 address without its ]";
			return -1;
		}
		n = (size_t)(p - auth - 1);
		if (n >= sizeof(u->host)) {
			*why = "host too long";
			return -1;
		}
		memcpy(u->host, auth + 1, n);
		if (inet_pton(AF_INET6, u->host, &a6) != 1) {
			*why = "not an IPv6 address between [ and ]";
			return -1;
		}
		u->ipv6 = 1;
		colon = p + 1 < end ? p + 1 : NULL;
		if (colon != NULL && *colon != ':') {
			*why = "a bad port";
			return -1;
		}
	} else {
		colon = memchr(auth, ':', (size_t)(end - auth));
		n = (size_t)((colon != NULL ? colon : end) - auth);
		if (n >= sizeof(u->host) || !host_chars(auth, n)) {
			*why = "no host name or address";
			return -1;
		}
		for (i = 0; i < n; i++)
			u->host[i] = (char)tolower((unsigned char)auth[i]);
	}
	if (colon != NULL) {
		if (url_port(colon + 1, (size_t)(end - colon - 1),
		    &u->port) == -1) {
			*why = "a bad port";
			return -1;
		}
		u->port_given = 1;
	} else
		u->port = u->https ? 443 : 80;
	if (*end == '\0')
		(void)str_copy(u->path, "/", sizeof(u->path));
	else if (*end == '?') {
		if (snprintf(u->path, sizeof(u->path), "/%s", end) >=
		    (int)sizeof(u->path)) {
			*why = "path too long";
			return -1;
		}
	} else if (str_copy(u->path, end, sizeof(u->path)) == -1) {
		*why = "path too long";
		return -1;
	}
	return 0;
}

int
url_secure(const struct url *u)
{
	return u->https || host_loopback(u->host);
}

int
url_origin(const struct url *u, char *buf, size_t len)
{
	char	 port[8] = "";
	int	 n;

	if (u->port_given && u->port != (u->https ? 443 : 80))
		(void)snprintf(port, sizeof(port), ":%u", u->port);
	n = snprintf(buf, len, "%s://%s%s%s%s", u->https ? "https" : "http",
	    u->ipv6 ? "[" : "", u->host, u->ipv6 ? "]" : "", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
