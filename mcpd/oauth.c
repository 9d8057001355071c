/*
 * mcpd as an OAuth 2.1 resource server (MCP authorization; RFC 9728,
 * 9068, 8707, 6750): the oauth block of mcpd.conf(5).
 *
 * An access token is a JWT of the configured issuer, checked here with
 * the issuer's public keys (jwt.c): its signature, "iss", "aud" holding
 * this server's resource URI, "exp" and "nbf" with the leeway, "typ",
 * and every scope the block names.  Its claims then choose a tenant: the
 * first, in file order, one of whose claim statements they satisfy.  A
 * token goes nowhere else; it is neither logged nor kept.
 *
 * The keys come from a file ("jwks /path", read as root at start and
 * again on SIGHUP) or over HTTP(S): a "jwks URL", or else the jwks_uri
 * of the issuer's metadata (RFC 8414, then OpenID Connect discovery),
 * whose "issuer" must be the configured one.  Fetched keys are refreshed
 * every hour, retried with a growing delay while they fail, and fetched
 * again when a token names a key id they lack, at most once every
 * KID_REFRESH_S: the bytes of a request alone never make mcpd fetch more.
 * Plain http is for a loopback issuer only (the parser refuses other);
 * https verifies the server's certificate against the system's trusted
 * ones (or SSL_CERT_FILE's) and its name.
 *
 * Fetching runs in mcpd's sandbox: the resolver's settings and the
 * trusted certificates are read before it, Landlock lets TCP connect to
 * the issuer's port (and a jwks URL's) alone, and seccomp lets mcpd make
 * TCP and UDP sockets only when keys are fetched at all.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sodium.h>

#include "jwt.h"
#include "log.h"
#include "mcpd.h"
#include "oauth.h"
#include "policy.h"
#include "url.h"
#include "util.h"

#define JWKS_FILE_MAX	(1024 * 1024)	/* bytes of a key set */
#define FETCH_BODY_MAX	(1024 * 1024)	/* of a document fetched */
#define FETCH_TIMEOUT_S	10
#define REFRESH_S	3600		/* keys fetched again */
#define RETRY_MIN_S	2		/* after a failure, doubling */
#define RETRY_MAX_S	300
#define KID_REFRESH_S	30		/* at most, for an unknown key id */
#define PRM_PATH	"/.well-known/oauth-protected-resource"
#define CHALLENGE_MAX	(3 * OAUTH_URL_MAX + 256)

/* What a fetch is for. */
enum step {
	STEP_METADATA,		/* the issuer's metadata, candidate meta_i */
	STEP_JWKS,
};

static struct {
	const struct policy	*conf;
	struct event_base	*base;
	struct jwks		*keys;
	int			 from_file;
	/* Fetching. */
	struct evdns_base	*dns;
	SSL_CTX			*ssl;
	uint16_t		 ports[OAUTH_PORTS_MAX];
	size_t			 nports;
	char			 jwks_uri[OAUTH_URL_MAX];	/* "" : unknown */
	enum step		 step;
	int			 meta_i;
	char			 url[OAUTH_URL_MAX + 64];	/* being fetched */
	int			 busy;
	uint64_t		 last_ms;	/* mono, of the last fetch */
	unsigned int		 failures;
	struct event		*ev_timer;
	/* What clients are told. */
	char			 prm_path[sizeof(PRM_PATH) + URL_PATH_MAX];
	char			 prm_url[OAUTH_URL_MAX + sizeof(PRM_PATH)];
	char			*prm_json;
	char			 scopes[OAUTH_URL_MAX];	/* space-separated */
	char			 challenge[CHALLENGE_MAX];
} oa;

static void	 fetch_next(void);

int
oauth_enabled(void)
{
	return oa.conf != NULL && oa.conf->oauth.enabled;
}

const char *
oauth_key_file(void)
{
	return oauth_enabled() && oa.from_file ? oa.conf->oauth.jwks : NULL;
}

size_t
oauth_ports(uint16_t ports[OAUTH_PORTS_MAX])
{
	memcpy(ports, oa.ports, sizeof(oa.ports));
	return oa.nports;
}

/* --- Keys ---------------------------------------------------------------- */

static void
keys_take(struct jwks *keys, const char *from)
{
	log_info("oauth: %zu key%s from %s%s", jwks_count(keys),
	    jwks_count(keys) == 1 ? "" : "s", from,
	    jwks_skipped(keys) > 0 ? " (some of a kind mcpd does not use "
	    "left out)" : "");
	jwks_free(oa.keys);
	oa.keys = keys;
}

/* Read the key file: as root at start, as mcpd's user on SIGHUP. */
static int
keys_read(const char *path, char *err, size_t errlen)
{
	struct jwks	*keys;
	struct stat	 st;
	char		*buf = NULL, why[256];
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		(void)str_fmt(err, errlen, "jwks %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > JWKS_FILE_MAX) {
		(void)str_fmt(err, errlen, "jwks %s: not a regular file of at "
		    "most %d bytes", path, JWKS_FILE_MAX);
		goto done;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			(void)str_fmt(err, errlen, "jwks %s: %s", path,
			    n == 0 ? "shorter than it was" : strerror(errno));
			goto done;
		}
		len += (size_t)n;
	}
	if ((keys = jwks_parse(buf, len, why, sizeof(why))) == NULL) {
		(void)str_fmt(err, errlen, "jwks %s: %s", path, why);
		goto done;
	}
	keys_take(keys, path);
	rv = 0;
 done:
	free(buf);
	close(fd);
	return rv;
}

static void	 refetch(const char *);

void
oauth_reload(void)
{
	char	 err[PATH_MAX + 256];

	if (!oauth_enabled())
		return;
	if (!oa.from_file) {
		refetch("reload");
		return;
	}
	if (keys_read(oa.conf->oauth.jwks, err, sizeof(err)) == -1)
		log_warnx("reload: %s: the keys there were stay", err);
}

/* --- Fetching ------------------------------------------------------------ */

static void
timer_in(unsigned int s)
{
	struct timeval	 tv = { (time_t)s, 0 };

	evtimer_add(oa.ev_timer, &tv);
}

static void
fetch_failed(const char *fmt, ...) __attribute__((__format__(printf, 1, 2)));

static void
fetch_failed(const char *fmt, ...)
{
	char		 msg[512];
	va_list		 ap;
	unsigned int	 s;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oa.busy = 0;
	oa.failures++;
	s = oa.failures >= 8 ? RETRY_MAX_S : RETRY_MIN_S << (oa.failures - 1);
	if (s > RETRY_MAX_S)
		s = RETRY_MAX_S;
	log_warnx("oauth: %s; %s, again in %u s", msg, oa.keys != NULL ?
	    "the keys there are stay" : "no token can be checked yet", s);
	oa.step = oa.jwks_uri[0] != '\0' ? STEP_JWKS : STEP_METADATA;
	oa.meta_i = 0;
	timer_in(s);
}

/*
 * Where the issuer's metadata may be, in the order tried: RFC 8414's
 * well-known URI (the issuer's path after it), then OpenID Connect's
 * (after the issuer's path, then before it).  NULL past the last.
 */
static const char *
metadata_url(int i, char *buf, size_t len)
{
	const char	*iss = oa.conf->oauth.issuer;
	char		 origin[OAUTH_URL_MAX], path[URL_PATH_MAX];
	struct url	 u;
	const char	*why;
	size_t		 n;

	if (url_parse(iss, &u, &why) == -1 ||
	    url_origin(&u, origin, sizeof(origin)) == -1)
		return NULL;
	(void)str_copy(path, u.path, sizeof(path));
	n = strlen(path);
	if (n > 0 && path[n - 1] == '/')
		path[n - 1] = '\0';
	switch (i) {
	case 0:
		(void)str_fmt(buf, len, "%s/.well-known/oauth-authorization-"
		    "server%s", origin, path);
		return buf;
	case 1:
		(void)str_fmt(buf, len, "%s%s/.well-known/openid-configuration",
		    origin, path);
		return buf;
	case 2:
		if (path[0] == '\0')
			return NULL;
		(void)str_fmt(buf, len, "%s/.well-known/openid-configuration%s",
		    origin, path);
		return buf;
	default:
		return NULL;
	}
}

static int
port_allowed(uint16_t port)
{
	size_t	 i;

	for (i = 0; i < oa.nports; i++)
		if (oa.ports[i] == port)
			return 1;
	return 0;
}

/* The issuer's metadata: -1 if it is not (this issuer's). */
static int
metadata_take(const char *body, size_t len, char *why, size_t whylen)
{
	json_t		*doc, *v;
	const char	*uri, *bad;
	struct url	 u;
	int		 rv = -1;

	if ((doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || !json_is_object(doc)) {
		(void)str_copy(why, "not a JSON object", whylen);
		goto done;
	}
	v = json_object_get(doc, "issuer");
	if (!json_is_string(v) || strcmp(json_string_value(v),
	    oa.conf->oauth.issuer) != 0) {
		(void)str_copy(why, "its \"issuer\" is not the configured "
		    "issuer (RFC 8414 3.3)", whylen);
		goto done;
	}
	v = json_object_get(doc, "jwks_uri");
	if (!json_is_string(v)) {
		(void)str_copy(why, "no jwks_uri", whylen);
		goto done;
	}
	uri = json_string_value(v);
	if (url_parse(uri, &u, &bad) == -1 || strlen(uri) >=
	    sizeof(oa.jwks_uri)) {
		(void)str_fmt(why, whylen, "jwks_uri: %s", bad);
		goto done;
	}
	if (!url_secure(&u)) {
		(void)str_copy(why, "jwks_uri is plain http off the loopback",
		    whylen);
		goto done;
	}
	if (!port_allowed(u.port)) {
		(void)str_fmt(why, whylen, "jwks_uri is on port %u, not the "
		    "issuer's: name it with \"jwks\" in the oauth block",
		    u.port);
		goto done;
	}
	(void)str_copy(oa.jwks_uri, uri, sizeof(oa.jwks_uri));
	rv = 0;
 done:
	json_decref(doc);
	return rv;
}

static void
fetch_done(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*in;
	struct jwks	*keys;
	char		 why[256], next[sizeof(oa.url)], *body;
	size_t		 len;
	int		 code;

	(void)arg;
	if (req == NULL || (code = evhttp_request_get_response_code(req)) ==
	    0) {
		fetch_failed("%s: no answer (refused, timed out, no network "
		    "for mcpd, or TLS failed: is its certificate trusted?)",
		    oa.url);
		return;
	}
	if (code != 200) {
		/* Not there: the next place metadata may be. */
		if (oa.step == STEP_METADATA && metadata_url(oa.meta_i + 1,
		    next, sizeof(next)) != NULL) {
			log_debug("oauth: %s: HTTP status %d", oa.url, code);
			oa.meta_i++;
			oa.busy = 0;
			fetch_next();
			return;
		}
		fetch_failed("%s: HTTP status %d", oa.url, code);
		return;
	}
	in = evhttp_request_get_input_buffer(req);
	len = evbuffer_get_length(in);
	body = (char *)evbuffer_pullup(in, -1);
	if (oa.step == STEP_METADATA) {
		if (metadata_take(body, len, why, sizeof(why)) == -1) {
			fetch_failed("%s: %s", oa.url, why);
			return;
		}
		log_info("oauth: the issuer's keys are at %s", oa.jwks_uri);
		oa.busy = 0;
		oa.step = STEP_JWKS;
		fetch_next();
		return;
	}
	if ((keys = jwks_parse(body, len, why, sizeof(why))) == NULL) {
		fetch_failed("%s: %s", oa.url, why);
		return;
	}
	keys_take(keys, oa.url);
	oa.busy = 0;
	oa.failures = 0;
	timer_in(REFRESH_S);
}

/* A client TLS connection that checks the server's name or address. */
static struct bufferevent *
fetch_tls(const struct url *u)
{
	struct bufferevent	*bev;
	SSL			*ssl;

	if ((ssl = SSL_new(oa.ssl)) == NULL)
		return NULL;
	if (u->ipv6 || strspn(u->host, "0123456789.") == strlen(u->host)) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
		    u->host) != 1)
			goto bad;
	} else if (SSL_set_tlsext_host_name(ssl, u->host) != 1 ||
	    SSL_set1_host(ssl, u->host) != 1)
		goto bad;
	bev = bufferevent_openssl_socket_new(oa.base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (bev != NULL)
		return bev;	/* It owns ssl now. */
 bad:
	SSL_free(ssl);
	return NULL;
}

/* Fetch oa.url, or the next URL of the step. */
static void
fetch_next(void)
{
	struct evhttp_connection	*conn;
	struct evhttp_request		*req;
	struct bufferevent		*bev;
	struct evkeyvalq		*hdrs;
	struct url			 u;
	const char			*why;
	char				 host[URL_HOST_MAX + 16];

	if (oa.busy)
		return;
	if (oa.step == STEP_JWKS)
		(void)str_copy(oa.url, oa.jwks_uri, sizeof(oa.url));
	else if (metadata_url(oa.meta_i, oa.url, sizeof(oa.url)) == NULL) {
		fetch_failed("no metadata of issuer %s found",
		    oa.conf->oauth.issuer);
		return;
	}
	if (url_parse(oa.url, &u, &why) == -1) {
		fetch_failed("%s: %s", oa.url, why);
		return;
	}
	oa.busy = 1;
	oa.last_ms = mono_ms();
	bev = u.https ? fetch_tls(&u) : bufferevent_socket_new(oa.base, -1,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		fetch_failed("%s: cannot make a connection", oa.url);
		return;
	}
	if ((conn = evhttp_connection_base_bufferevent_new(oa.base, oa.dns,
	    bev, u.host, u.port)) == NULL) {
		bufferevent_free(bev);
		fetch_failed("%s: cannot make a connection", oa.url);
		return;
	}
	evhttp_connection_set_timeout(conn, FETCH_TIMEOUT_S);
	evhttp_connection_set_max_body_size(conn, FETCH_BODY_MAX);
	evhttp_connection_set_retries(conn, 0);
	evhttp_connection_free_on_completion(conn);
	if ((req = evhttp_request_new(fetch_done, NULL)) == NULL) {
		evhttp_connection_free(conn);
		fetch_failed("%s: out of memory", oa.url);
		return;
	}
	/* RFC 9110 7.2: the port too, unless it is the scheme's. */
	if (url_origin(&u, host, sizeof(host)) == -1) {
		evhttp_request_free(req);
		evhttp_connection_free(conn);
		fetch_failed("%s: host too long", oa.url);
		return;
	}
	hdrs = evhttp_request_get_output_headers(req);
	evhttp_add_header(hdrs, "Host", host + (u.https ? 8 : 7));
	evhttp_add_header(hdrs, "Accept", "application/json");
	evhttp_add_header(hdrs, "User-Agent", "mcpd/" MCPD_VERSION);
	evhttp_add_header(hdrs, "Connection", "close");
	if (evhttp_make_request(conn, req, EVHTTP_REQ_GET, u.path) == -1) {
		/* No socket: libevent gives both back, unqueued. */
		evhttp_request_free(req);
		evhttp_connection_free(conn);
		fetch_failed("%s: cannot connect (no socket)", oa.url);
		return;
	}
	log_debug("oauth: fetching %s", oa.url);
}

static void
timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	fetch_next();
}

/* Fetch the keys now (the metadata first if it failed before). */
static void
refetch(const char *why)
{
	if (oa.busy)
		return;
	log_info("oauth: %s: fetching the issuer's keys again", why);
	evtimer_del(oa.ev_timer);
	oa.step = oa.jwks_uri[0] != '\0' ? STEP_JWKS : STEP_METADATA;
	oa.meta_i = 0;
	fetch_next();
}

/* A token named a key id the keys lack: the issuer may have rotated. */
static void
kid_unknown(void)
{
	if (oa.from_file || oa.jwks_uri[0] == '\0' ||
	    mono_ms() - oa.last_ms < KID_REFRESH_S * 1000ULL)
		return;
	refetch("a token names a key the issuer's lack");
}

void
oauth_start(void)
{
	if (!oauth_enabled() || oa.from_file)
		return;
	fetch_next();
}

/* libevent's resolver says what it cannot do in our log, not on stderr. */
static void
dns_log(int is_warn, const char *msg)
{
	log_debug("oauth: resolver: %s", msg);
}

/* Where keys are fetched from: the TCP ports Landlock lets mcpd reach. */
static int
fetch_init(char *err, size_t errlen)
{
	const struct oauth_conf	*o = &oa.conf->oauth;
	struct url		 u;
	const char		*why;

	if (url_parse(o->issuer, &u, &why) == -1) {
		(void)str_fmt(err, errlen, "issuer: %s", why);
		return -1;
	}
	oa.ports[oa.nports++] = u.port;
	if (o->jwks[0] != '\0') {
		if (url_parse(o->jwks, &u, &why) == -1 ||
		    strlen(o->jwks) >= sizeof(oa.jwks_uri)) {
			(void)str_fmt(err, errlen, "jwks: %s", why);
			return -1;
		}
		if (u.port != oa.ports[0])
			oa.ports[oa.nports++] = u.port;
		(void)str_copy(oa.jwks_uri, o->jwks, sizeof(oa.jwks_uri));
		oa.step = STEP_JWKS;
	} else
		oa.step = STEP_METADATA;
	if ((oa.ssl = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(oa.ssl, TLS1_2_VERSION) != 1) {
		(void)str_copy(err, "oauth: cannot make a TLS context", errlen);
		return -1;
	}
	SSL_CTX_set_verify(oa.ssl, SSL_VERIFY_PEER, NULL);
	/* Read now: the sandbox will not let mcpd open them later. */
	if (SSL_CTX_set_default_verify_paths(oa.ssl) != 1)
		log_warnx("oauth: the system's trusted certificates cannot be "
		    "read: an https issuer will not be trusted");
	ERR_clear_error();
	/*
	 * No name server is no reason to stop serving: static tokens go on,
	 * and an issuer named by its address needs none.  (Where the unit
	 * keeps mcpd off the network, none can be added.)
	 */
	evdns_set_log_fn(dns_log);
	if ((oa.dns = evdns_base_new(oa.base,
	    EVDNS_BASE_DISABLE_WHEN_INACTIVE)) == NULL) {
		(void)str_copy(err, "oauth: cannot make a resolver", errlen);
		return -1;
	}
	if (evdns_base_resolv_conf_parse(oa.dns, DNS_OPTIONS_ALL,
	    "/etc/resolv.conf") != 0 || evdns_base_count_nameservers(oa.dns) ==
	    0)
		log_warnx("oauth: no name server can be used (/etc/resolv.conf, "
		    "or no network here): an issuer named by a host name "
		    "cannot be reached");
	(void)evdns_base_load_hosts(oa.dns, NULL);
	if ((oa.ev_timer = evtimer_new(oa.base, timer_cb, NULL)) == NULL) {
		(void)str_copy(err, "oauth: cannot make a timer", errlen);
		return -1;
	}
	return 0;
}

/* --- What clients are told ----------------------------------------------- */

static void
metadata_init(void)
{
	const struct oauth_conf	*o = &oa.conf->oauth;
	char			 origin[OAUTH_URL_MAX];
	json_t			*doc, *scopes;
	struct url		 u;
	const char		*why;
	size_t			 i, n;

	/* The parser checked it. */
	if (url_parse(o->audience, &u, &why) == -1 ||
	    url_origin(&u, origin, sizeof(origin)) == -1)
		fatalx("oauth: audience: %s", why);
	/* RFC 9728 3.1: the resource's path after the well-known one. */
	n = strlen(u.path);
	while (n > 1 && u.path[n - 1] == '/')
		u.path[--n] = '\0';
	(void)str_fmt(oa.prm_path, sizeof(oa.prm_path), "%s%s", PRM_PATH,
	    strcmp(u.path, "/") == 0 ? "" : u.path);
	(void)str_fmt(oa.prm_url, sizeof(oa.prm_url), "%s%s", origin,
	    oa.prm_path);
	scopes = json_array();
	oa.scopes[0] = '\0';
	for (i = 0; i < o->nscopes; i++) {
		json_array_append_new(scopes, json_string(o->scopes[i]));
		n = strlen(oa.scopes);
		(void)str_fmt(oa.scopes + n, sizeof(oa.scopes) - n, "%s%s",
		    i > 0 ? " " : "", o->scopes[i]);
	}
	doc = json_pack("{s:s, s:[s], s:o, s:[s], s:s}",
	    "resource", o->audience,
	    "authorization_servers", o->issuer,
	    "scopes_supported", scopes,
	    "bearer_methods_supported", "header",
	    "resource_name", "mcpd");
	if (doc == NULL)
		fatalx("oauth: cannot make the resource metadata");
	oa.prm_json = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (oa.prm_json == NULL)
		fatalx("oauth: cannot make the resource metadata");
}

const char *
oauth_challenge(const char *error)
{
	int	 n;

	n = snprintf(oa.challenge, sizeof(oa.challenge),
	    "WWW-Authenticate: Bearer resource_metadata=\"%s\"", oa.prm_url);
	if (oa.scopes[0] != '\0' && n > 0 && (size_t)n < sizeof(oa.challenge))
		n += snprintf(oa.challenge + n, sizeof(oa.challenge) - (size_t)n,
		    ", scope=\"%s\"", oa.scopes);
	if (error != NULL && n > 0 && (size_t)n < sizeof(oa.challenge))
		n += snprintf(oa.challenge + n, sizeof(oa.challenge) - (size_t)n,
		    ", error=\"%s\"", error);
	if (n > 0 && (size_t)n < sizeof(oa.challenge))
		(void)snprintf(oa.challenge + n, sizeof(oa.challenge) -
		    (size_t)n, "\r\n");
	return oa.challenge;
}

int
oauth_metadata_path(const char *path)
{
	return oauth_enabled() && (strcmp(path, PRM_PATH) == 0 ||
	    strcmp(path, oa.prm_path) == 0);
}

const char *
oauth_metadata(void)
{
	return oa.prm_json;
}

/* --- Tokens -------------------------------------------------------------- */

int
oauth_token_shaped(const char *s, size_t n)
{
	size_t	 i, dots = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '.')
			dots++;
		else if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '_'))
			return 0;
	}
	return dots == 2;
}

/* The first tenant, in file order, one of whose claims the token has. */
static const struct tenant *
tenant_of(const json_t *claims)
{
	const struct tenant		*t;
	const struct tenant_claim	*c;
	const json_t			*v;
	size_t				 i;

	TAILQ_FOREACH(t, &oa.conf->tenants, entry) {
		if (t->gone)
			continue;
		for (i = 0; i < t->nclaims; i++) {
			c = &t->claims[i];
			if (c->any) {
				v = json_object_get(claims, c->name);
				if (v != NULL && !json_is_null(v))
					return t;
			} else if (jwt_claim_has(claims, c->name, c->value))
				return t;
		}
	}
	return NULL;
}

/* What names the client in logs: printable, short, never the token. */
static void
sub_print(char *dst, size_t len, const char *sub)
{
	size_t	 i;

	for (i = 0; sub[i] != '\0' && i + 1 < len; i++)
		dst[i] = sub[i] > 0x20 && sub[i] < 0x7f && sub[i] != '"' &&
		    sub[i] != '\\' ? sub[i] : '?';
	dst[i] = '\0';
}

enum oauth_verdict
oauth_check(const char *tok, size_t len, struct oauth_who *who)
{
	const struct oauth_conf	*o = &oa.conf->oauth;
	struct jwt_want		 want;
	crypto_hash_sha256_state st;
	enum jwt_error		 e;
	json_t			*claims = NULL;
	const json_t		*sub;
	char			 kid[128];
	size_t			 i;
	enum oauth_verdict	 v;

	memset(who, 0, sizeof(*who));
	if (oa.keys == NULL) {
		who->why = "the issuer's keys are not known yet";
		return OAUTH_NO_KEYS;
	}
	memset(&want, 0, sizeof(want));
	want.issuer = o->issuer;
	want.audience = o->audience;
	want.typ = o->type[0] != '\0' ? o->type : NULL;
	want.now = (int64_t)time(NULL);
	want.leeway = (int64_t)(o->leeway / 1000);
	e = jwt_verify(tok, len, oa.keys, &want, &claims, kid, sizeof(kid));
	if (e != JWT_OK) {
		if (e == JWT_KEY_UNKNOWN && kid[0] != '\0')
			kid_unknown();
		who->why = jwt_error_str(e);
		return OAUTH_INVALID;
	}
	/* RFC 9068 2.2: every access token names its subject. */
	sub = json_object_get(claims, "sub");
	if (!json_is_string(sub) || json_string_length(sub) == 0) {
		who->why = "no sub claim";
		v = OAUTH_INVALID;
		goto done;
	}
	sub_print(who->sub, sizeof(who->sub), json_string_value(sub));
	/* jwt_verify() checked it is a number. */
	who->expires = (int64_t)json_number_value(json_object_get(claims,
	    "exp")) + (int64_t)(o->leeway / 1000);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)"oauth\n", 6);
	crypto_hash_sha256_update(&st, (const unsigned char *)o->issuer,
	    strlen(o->issuer) + 1);
	crypto_hash_sha256_update(&st,
	    (const unsigned char *)json_string_value(sub),
	    json_string_length(sub));
	crypto_hash_sha256_final(&st, who->principal);
	for (i = 0; i < o->nscopes; i++)
		if (!jwt_has_scope(claims, o->scopes[i])) {
			who->why = "a scope missing";
			v = OAUTH_SCOPE;
			goto done;
		}
	if ((who->tenant = tenant_of(claims)) == NULL) {
		who->why = "no tenant's claim matches";
		v = OAUTH_NO_TENANT;
		goto done;
	}
	v = OAUTH_OK;
 done:
	json_decref(claims);
	return v;
}

/* --- Start and end ------------------------------------------------------- */

int
oauth_init(struct event_base *base, const struct policy *conf, char *err,
    size_t errlen)
{
	const struct oauth_conf	*o = &conf->oauth;

	oa.conf = conf;
	oa.base = base;
	if (!o->enabled)
		return 0;
	metadata_init();
	if (o->jwks[0] == '/') {
		oa.from_file = 1;
		return keys_read(o->jwks, err, errlen);
	}
	return fetch_init(err, errlen);
}

void
oauth_free(void)
{
	jwks_free(oa.keys);
	if (oa.ev_timer != NULL)
		event_free(oa.ev_timer);
	if (oa.dns != NULL)
		evdns_base_free(oa.dns, 0);
	SSL_CTX_free(oa.ssl);
	free(oa.prm_json);
	memset(&oa, 0, sizeof(oa));
}
