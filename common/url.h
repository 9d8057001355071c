/*
 * Absolute http and https URLs, as mcpd.conf names an OAuth issuer, its
 * keys and this server's own resource URI: parsed strictly, never
 * resolved.
 */
#ifndef MCPD_URL_H
#define MCPD_URL_H

#include <stdint.h>

#define URL_HOST_MAX	256
#define URL_PATH_MAX	1024

struct url {
	int		 https;		/* else http */
	char		 host[URL_HOST_MAX];	/* lower case, no brackets */
	int		 ipv6;		/* host is an IPv6 address */
	uint16_t	 port;		/* given, else 443 or 80 */
	int		 port_given;
	char		 path[URL_PATH_MAX];	/* "/" at least, query kept */
};

/*
 * "http[s]://host[:port][/path[?query]]": no user information, no
 * fragment, nothing but printable ASCII without spaces.  0, or -1 with
 * why set to a phrase ("no fragment allowed").
 */
int	 url_parse(const char *, struct url *, const char **);
/* "localhost", or an address of the loopback: 127/8 or ::1. */
int	 host_loopback(const char *);
/* https, or plain http to the loopback: what keys and tokens may cross. */
int	 url_secure(const struct url *);
/*
 * The origin of u, as it would be written: "https://host[:port]", the
 * port only when given and not the scheme's default.  -1 if too long.
 */
int	 url_origin(const struct url *, char *, size_t);

#endif
