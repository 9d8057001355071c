/*
 * mcpd.conf(5) parser: values, defaults, includes and macros, the
 * canonical dump, and the exact message for each kind of mistake.
 *
 * Files are written to a temporary directory that the test changes into,
 * so that messages name them as "t.conf" and can be compared verbatim.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "policy.h"
#include "util.h"
#include "../tap.h"

#define H1	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"
#define H2	"FEDCBA9876543210FEDCBA9876543210" \
		"FEDCBA9876543210FEDCBA9876543210"

static char	 tmpdir[PATH_MAX];
static char	 shipped[PATH_MAX];
static char	 errbuf[1 << 20];

static void
write_file(const char *name, const void *data, size_t len)
{
	FILE	*fp;

	if ((fp = fopen(name, "w")) == NULL ||
	    fwrite(data, 1, len, fp) != len || fclose(fp) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", name, strerror(errno));
		exit(1);
	}
}

static void
put(const char *name, const char *text)
{
	write_file(name, text, strlen(text));
}

/* policy_load() with everything it logs caught in errbuf. */
static struct policy *
load(const char *path)
{
	struct policy	*p;
	ssize_t		 n;
	int		 saved, fd;

	if ((fd = open("stderr.out", O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    (saved = dup(STDERR_FILENO)) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1) {
		perror("capture");
		exit(1);
	}
	p = policy_load(path);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, errbuf, sizeof(errbuf) - 1, 0);
	errbuf[n > 0 ? n : 0] = '\0';
	close(fd);
	return p;
}

/* Expected lines, each prefixed as log_init() makes them. */
static const char *
logged(const char *lines)
{
	static char	 buf[8192];
	size_t		 len = 0;
	const char	*nl;

	buf[0] = '\0';
	while (*lines != '\0') {
		if ((nl = strchr(lines, '\n')) == NULL)
			nl = lines + strlen(lines);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		    "test: %.*s\n", (int)(nl - lines), lines);
		lines = *nl != '\0' ? nl + 1 : nl;
	}
	return buf;
}

/* The file must be refused with exactly these messages. */
static void
fails(const char *what, const char *text, const char *expect)
{
	struct policy	*p;
	const char	*want;

	put("t.conf", text);
	p = load("t.conf");
	want = logged(expect);
	if (!ok(p == NULL && strcmp(errbuf, want) == 0, "refused: %s", what)) {
		diag("want: %s", want);
		diag("got:  %s", errbuf);
	}
	policy_free(p);
}

/* The file must load without a word. */
static struct policy *
loads(const char *what, const char *text)
{
	struct policy	*p;

	put("t.conf", text);
	p = load("t.conf");
	if (!ok(p != NULL && errbuf[0] == '\0', "loads: %s", what))
		diag("got: %s", errbuf);
	return p;
}

static char *
dump_text(const struct policy *p)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*fp;

	if ((fp = open_memstream(&buf, &len)) == NULL) {
		perror("open_memstream");
		exit(1);
	}
	policy_dump(fp, p);
	fclose(fp);
	return buf;
}

static int
same_limits(const struct limits *a, const struct limits *b)
{
	return strcmp(a->name, b->name) == 0 && a->memory == b->memory &&
	    a->cpus == b->cpus && a->pids == b->pids &&
	    a->timeout == b->timeout && a->output == b->output &&
	    a->disk == b->disk && a->network == b->network &&
	    a->idle == b->idle && a->lifetime == b->lifetime &&
	    a->set == b->set;
}

static int
same_tenant(const struct tenant *a, const struct tenant *b)
{
	size_t	 i;

	if (strcmp(a->name, b->name) != 0 || a->ntokens != b->ntokens ||
	    a->nuids != b->nuids || strcmp(a->limits_name,
	    b->limits_name) != 0 || strcmp(a->limits->name,
	    b->limits->name) != 0 || a->max_sandboxes != b->max_sandboxes ||
	    a->max_requests != b->max_requests || a->npaths != b->npaths ||
	    strcmp(a->runtime, b->runtime) != 0 ||
	    a->share_expiry_max != b->share_expiry_max ||
	    a->share_downloads != b->share_downloads ||
	    a->share_rate != b->share_rate)
		return 0;
	for (i = 0; i < a->npaths; i++)
		if (strcmp(a->paths[i].path, b->paths[i].path) != 0 ||
		    a->paths[i].readonly != b->paths[i].readonly)
			return 0;
	for (i = 0; i < a->ntokens; i++)
		if (memcmp(a->tokens[i], b->tokens[i],
		    POLICY_TOKEN_HASH_LEN) != 0)
			return 0;
	for (i = 0; i < a->nuids; i++)
		if (strcmp(a->uids[i].name, b->uids[i].name) != 0)
			return 0;
	return 1;
}

static int
same_string(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static int
same_strings(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t	 i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

static int
same_language(const struct language *a, const struct language *b)
{
	size_t	 i;

	if (strcmp(a->name, b->name) != 0 || a->naliases != b->naliases ||
	    strcmp(a->file, b->file) != 0 || strcmp(a->image, b->image) != 0 ||
	    !same_string(a->build, b->build) || !same_string(a->run, b->run) ||
	    !same_string(a->version, b->version))
		return 0;
	for (i = 0; i < a->naliases; i++)
		if (strcmp(a->aliases[i], b->aliases[i]) != 0)
			return 0;
	return 1;
}

/* Everything but the path and digest, which depend on the file. */
static int
same_policy(const struct policy *a, const struct policy *b)
{
	const struct listen_addr	*la, *lb;
	const struct limits		*ma, *mb;
	const struct image		*ia, *ib;
	const struct tenant		*ta, *tb;
	const struct language		*ga, *gb;

	if (strcmp(a->user, b->user) != 0 || strcmp(a->group, b->group) != 0 ||
	    strcmp(a->run_dir, b->run_dir) != 0 ||
	    strcmp(a->state_dir, b->state_dir) != 0 ||
	    strcmp(a->runc, b->runc) != 0 ||
	    strcmp(a->runtime, b->runtime) != 0 ||
	    a->runtime_kind != b->runtime_kind ||
	    a->nruntimes != b->nruntimes ||
	    strcmp(a->sandbox_init, b->sandbox_init) != 0 ||
	    strcmp(a->sandbox_socket, b->sandbox_socket) != 0 ||
	    a->uid_base != b->uid_base || a->uid_slots != b->uid_slots ||
	    a->audit.required != b->audit.required ||
	    strcmp(a->audit.socket, b->audit.socket) != 0 ||
	    strcmp(a->audit.database, b->audit.database) != 0 ||
	    strcmp(a->audit.user, b->audit.user) != 0 ||
	    a->audit.excerpt != b->audit.excerpt)
		return 0;
	if (a->oauth.enabled != b->oauth.enabled ||
	    strcmp(a->oauth.issuer, b->oauth.issuer) != 0 ||
	    strcmp(a->oauth.audience, b->oauth.audience) != 0 ||
	    strcmp(a->oauth.jwks, b->oauth.jwks) != 0 ||
	    strcmp(a->oauth.type, b->oauth.type) != 0 ||
	    a->oauth.leeway != b->oauth.leeway ||
	    !same_strings(a->oauth.scopes, a->oauth.nscopes, b->oauth.scopes,
	    b->oauth.nscopes))
		return 0;
	if (strcmp(a->share_url, b->share_url) != 0 ||
	    a->share_expiry != b->share_expiry)
		return 0;
	if (!same_strings(a->allow_hosts, a->nallow_hosts, b->allow_hosts,
	    b->nallow_hosts) || !same_strings(a->allow_origins,
	    a->nallow_origins, b->allow_origins, b->nallow_origins))
		return 0;
	if (a->nmetrics_tokens != b->nmetrics_tokens ||
	    (a->nmetrics_tokens > 0 && memcmp(a->metrics_tokens,
	    b->metrics_tokens, a->nmetrics_tokens *
	    sizeof(*a->metrics_tokens)) != 0) ||
	    !same_strings(a->metrics_tenants, a->nmetrics_tenants,
	    b->metrics_tenants, b->nmetrics_tenants))
		return 0;
	for (la = TAILQ_FIRST(&a->listens), lb = TAILQ_FIRST(&b->listens);
	    la != NULL && lb != NULL;
	    la = TAILQ_NEXT(la, entry), lb = TAILQ_NEXT(lb, entry))
		if (la->type != lb->type || strcmp(la->host, lb->host) != 0 ||
		    la->port != lb->port || strcmp(la->path, lb->path) != 0 ||
		    la->mode != lb->mode || strcmp(la->tenant, lb->tenant) != 0)
			return 0;
	if (la != NULL || lb != NULL)
		return 0;
	for (ma = TAILQ_FIRST(&a->limits), mb = TAILQ_FIRST(&b->limits);
	    ma != NULL && mb != NULL;
	    ma = TAILQ_NEXT(ma, entry), mb = TAILQ_NEXT(mb, entry))
		if (!same_limits(ma, mb))
			return 0;
	if (ma != NULL || mb != NULL)
		return 0;
	for (ia = TAILQ_FIRST(&a->images), ib = TAILQ_FIRST(&b->images);
	    ia != NULL && ib != NULL;
	    ia = TAILQ_NEXT(ia, entry), ib = TAILQ_NEXT(ib, entry))
		if (strcmp(ia->name, ib->name) != 0 || ia->type != ib->type ||
		    strcmp(ia->path, ib->path) != 0 || ia->pool != ib->pool ||
		    ia->pool_idle != ib->pool_idle ||
		    strcmp(ia->runtime, ib->runtime) != 0)
			return 0;
	if (ia != NULL || ib != NULL)
		return 0;
	for (ta = TAILQ_FIRST(&a->tenants), tb = TAILQ_FIRST(&b->tenants);
	    ta != NULL && tb != NULL;
	    ta = TAILQ_NEXT(ta, entry), tb = TAILQ_NEXT(tb, entry))
		if (!same_tenant(ta, tb))
			return 0;
	if (ta != NULL || tb != NULL)
		return 0;
	for (ga = TAILQ_FIRST(&a->languages), gb = TAILQ_FIRST(&b->languages);
	    ga != NULL && gb != NULL;
	    ga = TAILQ_NEXT(ga, entry), gb = TAILQ_NEXT(gb, entry))
		if (!same_language(ga, gb))
			return 0;
	return ga == NULL && gb == NULL;
}

/* Dump, load the dump, dump again: both loads and both dumps agree. */
static void
round_trip(const char *what, const struct policy *p)
{
	struct policy	*q;
	char		*d1, *d2 = NULL;

	d1 = dump_text(p);
	put("dump.conf", d1);
	q = load("dump.conf");
	if (!ok(q != NULL && errbuf[0] == '\0', "%s: dump loads", what))
		diag("got: %s", errbuf);
	if (q != NULL) {
		d2 = dump_text(q);
		ok(same_policy(p, q), "%s: dump loads as the same policy",
		    what);
		if (!ok(strcmp(d1, d2) == 0, "%s: second dump is identical",
		    what))
			diag("first:\n%s\nsecond:\n%s", d1, d2);
	}
	free(d1);
	free(d2);
	policy_free(q);
}

/* The oauth block and tenants' claims. */
static void
test_oauth(void)
{
	struct policy		*p;
	const struct tenant	*t;
	char			*d;

	p = loads("oauth block and claims",
	    "oauth {\n"
	    "\tissuer https://auth.example.com/realms/x\n"
	    "\taudience \"https://mcp.example.com/mcp\"\n"
	    "\tjwks /etc/mcpd/jwks.json\n"
	    "\tscope mcp:tools\n"
	    "\tscope \"files.read\"\n"
	    "\tleeway 30s\n"
	    "\ttoken type application/at+jwt\n"
	    "}\n"
	    "tenant alice {\n"
	    "\tclaim sub \"alice@example.com\"\n"
	    "\tclaim groups eng\n"
	    "\tclaim email bob+mcp@example.com\n"
	    "}\n"
	    "tenant rest {\n"
	    "\tclaim client_id any\n"
	    "\tclaim scope \"any\"\n"
	    "}\n"
	    "tenant scope {\n"
	    "\tclaim issuer claim\n"
	    "}\n");
	if (p == NULL)
		return;
	ok(p->oauth.enabled && strcmp(p->oauth.issuer,
	    "https://auth.example.com/realms/x") == 0 &&
	    strcmp(p->oauth.audience, "https://mcp.example.com/mcp") == 0 &&
	    strcmp(p->oauth.jwks, "/etc/mcpd/jwks.json") == 0,
	    "oauth: issuer, audience, jwks");
	ok(p->oauth.nscopes == 2 && strcmp(p->oauth.scopes[0],
	    "mcp:tools") == 0 && strcmp(p->oauth.scopes[1], "files.read") == 0,
	    "oauth: two scopes, in order");
	ok(p->oauth.leeway == 30000 &&
	    strcmp(p->oauth.type, "application/at+jwt") == 0,
	    "oauth: leeway, token type");
	t = policy_tenant(p, "alice");
	ok(t != NULL && t->nclaims == 3 &&
	    strcmp(t->claims[0].name, "sub") == 0 &&
	    strcmp(t->claims[2].value, "bob+mcp@example.com") == 0 &&
	    strcmp(t->claims[0].value, "alice@example.com") == 0 &&
	    !t->claims[0].any && strcmp(t->claims[1].value, "eng") == 0,
	    "tenant claims with values");
	t = policy_tenant(p, "rest");
	ok(t != NULL && t->nclaims == 2 && t->claims[0].any &&
	    t->claims[0].value[0] == '\0' && !t->claims[1].any &&
	    strcmp(t->claims[1].value, "any") == 0,
	    "claim NAME any; a quoted \"any\" is a value");
	t = policy_tenant(p, "scope");
	ok(t != NULL && t->nclaims == 1 &&
	    strcmp(t->claims[0].name, "issuer") == 0 &&
	    strcmp(t->claims[0].value, "claim") == 0,
	    "the oauth block's words are still values");
	d = dump_text(p);
	ok(strstr(d, "\tclaim \"client_id\" any\n") != NULL &&
	    strstr(d, "\ttoken type \"application/at+jwt\"\n") != NULL &&
	    strstr(d, "\tleeway 30s\n") != NULL, "oauth dump");
	free(d);
	round_trip("oauth", p);
	policy_free(p);

	p = loads("oauth defaults, http issuer on the loopback",
	    "oauth {\n\tissuer http://127.0.0.1:4000\n"
	    "\taudience http://localhost:8080/mcp\n}\n"
	    "tenant t {\n\tclaim sub any\n}\n");
	ok(p != NULL && p->oauth.leeway == DEFAULT_OAUTH_LEEWAY &&
	    strcmp(p->oauth.type, "at+jwt") == 0 && p->oauth.jwks[0] == '\0' &&
	    p->oauth.nscopes == 0, "oauth defaults");
	if (p != NULL)
		round_trip("oauth defaults", p);
	policy_free(p);
	p = loads("token type any", "oauth {\n\tissuer https://a\n"
	    "\taudience https://b\n\ttoken type any\n}\n");
	ok(p != NULL && p->oauth.type[0] == '\0', "token type any: none");
	if (p != NULL)
		round_trip("token type any", p);
	policy_free(p);

	fails("oauth without issuer or audience", "oauth {\n}\n",
	    "t.conf:1: oauth: no issuer (the URL of the authorization server "
	    "whose tokens are taken)\n"
	    "t.conf:1: oauth: no audience (this server's own URL, such as "
	    "https://mcp.example.com/mcp, which tokens must be issued for)");
	fails("plain http issuer off the loopback",
	    "oauth {\n\tissuer http://auth.example.com\n"
	    "\taudience https://b\n}\n",
	    "t.conf:2: issuer \"http://auth.example.com\": https, or plain "
	    "http on the loopback only");
	fails("issuer with a fragment, audience with a query",
	    "oauth {\n\tissuer \"https://a/#x\"\n"
	    "\taudience \"https://b/?q\"\n}\n",
	    "t.conf:2: issuer \"https://a/#x\": no fragment (#) allowed\n"
	    "t.conf:3: audience \"https://b/?q\": no query (?) allowed");
	fails("user information in a URL, a bad port",
	    "oauth {\n\tissuer https://u@a\n\taudience https://b:0/\n}\n",
	    "t.conf:2: issuer \"https://u@a\": no user information (@) "
	    "allowed\n"
	    "t.conf:3: audience \"https://b:0/\": a bad port");
	fails("jwks neither a path nor a URL",
	    "oauth {\n\tissuer https://a\n\taudience https://b\n"
	    "\tjwks keys.json\n}\n",
	    "t.conf:4: jwks \"keys.json\": not an http:// or https:// URL");
	fails("oauth twice, issuer twice",
	    "oauth {\n\tissuer https://a\n\tissuer https://a\n"
	    "\taudience https://b\n}\n"
	    "oauth {\n\tissuer https://a\n\taudience https://b\n}\n",
	    "t.conf:3: issuer given twice\n"
	    "t.conf:6: oauth given twice");
	fails("bad scopes, a scope twice",
	    "oauth {\n\tissuer https://a\n\taudience https://b\n"
	    "\tscope \"a b\"\n\tscope \"\"\n\tscope x\n\tscope x\n}\n",
	    "t.conf:4: scope \"a b\": 1 to 127 printable characters, no "
	    "spaces, quotes or backslashes\n"
	    "t.conf:5: scope \"\": 1 to 127 printable characters, no spaces, "
	    "quotes or backslashes\n"
	    "t.conf:7: scope \"x\" given twice");
	fails("leeway out of range",
	    "oauth {\n\tissuer https://a\n\taudience https://b\n"
	    "\tleeway 11m\n}\n",
	    "t.conf:4: leeway \"11m\": whole seconds from 0 to 10m");
	fails("a claim without an oauth block",
	    "tenant t {\n\tuid 0\n\tclaim sub x\n}\n",
	    "t.conf:3: claim: there is no oauth block, so no token to read "
	    "claims from");
	fails("the same claim for two tenants; a bad claim name",
	    "oauth {\n\tissuer https://a\n\taudience https://b\n}\n"
	    "tenant t {\n\tclaim sub x\n}\n"
	    "tenant u {\n\tclaim sub x\n\tclaim \"a b\" y\n}\n",
	    "t.conf:9: claim sub \"x\" already used by tenant \"t\"\n"
	    "t.conf:10: claim \"a b\": a name of letters, digits and _-.:/, "
	    "at most 63 bytes");
}

static int
count_limits(const struct policy *p)
{
	struct limits	*l;
	int		 n = 0;

	TAILQ_FOREACH(l, &p->limits, entry)
		n++;
	return n;
}

static void
test_defaults(void)
{
	struct policy	*p;
	struct limits	*l;
	struct image	*im;
	uint8_t		 digest[32];

	p = loads("empty file", "");
	if (p == NULL)
		return;
	ok(strcmp(p->user, DEFAULT_USER) == 0, "default user");
	ok(p->group[0] == '\0', "default group: the user's");
	ok(strcmp(p->run_dir, DEFAULT_RUN_DIR) == 0, "default run directory");
	ok(strcmp(p->state_dir, DEFAULT_STATE_DIR) == 0,
	    "default state directory");
	ok(strcmp(p->runc, DEFAULT_RUNC) == 0, "default runc");
	ok(strcmp(p->sandbox_init, DEFAULT_SANDBOX_INIT) == 0,
	    "default sandbox-init");
	ok(strcmp(p->sandbox_socket, "/run/mcpd/sandboxd.sock") == 0,
	    "default sandbox socket in the run directory");
	ok(TAILQ_EMPTY(&p->listens), "no listeners by default");
	l = TAILQ_FIRST(&p->limits);
	ok(count_limits(p) == 1 && strcmp(l->name, "default") == 0,
	    "built-in limits \"default\"");
	ok(l->memory == DEFAULT_MEMORY && l->cpus == DEFAULT_CPUS &&
	    l->pids == DEFAULT_PIDS && l->timeout == DEFAULT_TIMEOUT &&
	    l->output == DEFAULT_OUTPUT && l->disk == DEFAULT_DISK &&
	    l->network == NET_NONE && l->set == 0,
	    "built-in limits have the DEFAULT_* values");
	im = TAILQ_FIRST(&p->images);
	ok(im != NULL && strcmp(im->name, HOST_IMAGE) == 0 &&
	    im->type == IMAGE_HOST && im->pool == DEFAULT_POOL &&
	    im->pool_idle == DEFAULT_POOL_IDLE && TAILQ_NEXT(im, entry) == NULL, "built-in image \"host\"");
	ok(TAILQ_EMPTY(&p->tenants), "no tenants by default");
	ok(p->nallow_hosts == 0 && p->allow_hosts == NULL &&
	    p->nallow_origins == 0 && p->allow_origins == NULL,
	    "no allowed hosts or origins by default");
	ok(policy_language(p, "python") != NULL &&
	    policy_language(p, "py") != NULL &&
	    policy_language(p, "javascript") != NULL &&
	    policy_language(p, "node") != NULL &&
	    policy_language(p, "sh") != NULL &&
	    policy_language(p, "bash") != NULL &&
	    policy_language(p, "c")->build != NULL &&
	    strcmp(policy_language(p, "python")->run, "python3 main.py") == 0,
	    "the default languages when the file has none");
	{
		static const char *const want[] = { "python", "javascript",
		    "typescript", "sh", "bash", "c", "cpp", "go", "rust",
		    "java", "ruby", "perl", "php" };
		size_t	 i, n = 0;

		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			n += policy_language(p, want[i]) != NULL &&
			    strcmp(policy_language(p, want[i])->image,
			    HOST_IMAGE) == 0;
		ok(n == sizeof(want) / sizeof(want[0]),
		    "the default table has the 13 mainstream languages, "
		    "on the host image");
	}
	ok(policy_language(p, "c++") == policy_language(p, "cpp") &&
	    policy_language(p, "ts") == policy_language(p, "typescript") &&
	    policy_language(p, "golang") == policy_language(p, "go"),
	    "default aliases: c++, ts, golang");
	ok(p->audit.required == 1, "audit required by default");
	ok(strcmp(p->audit.socket, "/run/mcpd/auditd.sock") == 0,
	    "default audit socket");
	ok(strcmp(p->audit.database, "/var/lib/mcpd/audit/audit.db") == 0,
	    "default audit database");
	ok(strcmp(p->audit.user, DEFAULT_AUDIT_USER) == 0,
	    "default audit user");
	ok(p->audit.excerpt == DEFAULT_AUDIT_EXCERPT,
	    "default audit excerpt");
	ok(p->share_url[0] == '\0' && p->share_expiry == 3600 &&
	    DEFAULT_SHARE_EXPIRY == 3600,
	    "no share url (the request's own origin), share expiry 1h");
	ok(strcmp(p->path, "t.conf") == 0, "path kept");
	crypto_hash_sha256(digest, (const unsigned char *)"", 0);
	ok(memcmp(p->digest, digest, sizeof(digest)) == 0,
	    "digest of an empty file");
	policy_free(p);

	p = loads("comments, blank lines, continuations and CRLF",
	    "# nothing but comments\n"
	    "\n"
	    "   \t# indented\n"
	    "user \\\n"
	    "  someone   # trailing comment\r\n"
	    "\r\n");
	ok(p != NULL && strcmp(p->user, "someone") == 0,
	    "continued line gives its value");
	policy_free(p);
}

static const char rich[] =
    "# every statement\n"
    "dir = \"/srv/mcpd\"\n"
    "alt = 8081\n"
    "user mcpuser\n"
    "group mcpgroup\n"
    "run directory /run/m\n"
    "state directory $dir/state\n"
    "runc /opt/runc\n"
    "sandbox-init \"/opt/sandbox init\"\n"
    "sandbox socket /run/m/sb.sock\n"
    "listen on 127.0.0.1 port 8080\n"
    "listen on ::1 port $alt\n"
    "listen on * port 9000 tenant bob plaintext\n"
    "listen on 192.0.2.7 port 8443 tls\n"
    "tls certificate /etc/m/chain.pem\n"
    "tls key \"/etc/m/key.pem\"\n"
    "listen on unix /run/m/a.sock\n"
    "listen on unix /run/m/b.sock mode 600 tenant alice\n"
    "listen on unix /run/m/c.sock tenant \"bob\"\n"
    "allow host Mcp.Example.COM\n"
    "allow host 192.0.2.1\n"
    "allow host \"[2001:DB8::1]\"\n"
    "allow origin https://App.Example.com\n"
    "allow origin \"http://[::1]:3000\"\n"
    "limits default {\n"
    "\tmemory 1G\n"
    "\tnetwork egress\n"
    "}\n"
    "limits small {\n"
    "\tmemory 64M\n"
    "\tcpus 0.5\n"
    "\tpids 32\n"
    "\ttimeout 500ms\n"
    "\toutput 64K\n"
    "\tdisk 32M\n"
    "\tnetwork none\n"
    "}\n"
    "limits mid {\n"
    "\tcpus 2.25\n"
    "\ttimeout 5m\n"
    "\tmemory 4194304\n"
    "}\n"
    "image host host pool 3\n"
    "image deb rootfs /srv/deb\n"
    "image alpine rootfs \"/srv/alpine\" pool 0\n"
    "image lazy rootfs /srv/lazy pool 4 idle 90s\n"
    "image eager rootfs /srv/eager pool 1 idle never\n"
    "tenant alice {\n"
    "\ttoken sha256:" H1 "\n"
    "\ttoken SHA256:" H2 "\n"
    "\tuid 1000\n"
    "\tuid alice\n"
    "\tlimits small\n"
    "\tmax sandboxes 8\n"
    "\tlocal path /srv/alice\n"
    "\tlocal path \"/home/alice/my docs\" read-only\n"
    "\tmax requests 32\n"
    "\tlocal path /\n"
    "}\n"
    "tenant bob {\n"
    "\tuid 1001\n"
    "\tlimits later\n"
    "}\n"
    "limits later {\n"
    "\tpids 7\n"
    "}\n"
    "language python {\n"
    "\talias py\n"
    "\talias python3\n"
    "\tfile main.py\n"
    "\tbuild \"python3 -m py_compile main.py\"\n"
    "\trun \"python3 \\\n"
    "main.py\"\n"
    "\timage deb\n"
    "\tversion \"python3 --version\"\n"
    "}\n"
    "language c {\n"
    "\tfile main.c\n"
    "\trun \"./main \\\"quoted\\\" back\\\\slash $HOME \\n\"\n"
    "\timage host\n"
    "}\n"
    "audit {\n"
    "\trequired no\n"
    "\tsocket /run/m/audit.sock\n"
    "\tdatabase /srv/mcpd/audit.db\n"
    "\tuser auditor\n"
    "\texcerpt 4K\n"
    "}\n";

static void
test_rich_globals(const struct policy *p)
{
	struct listen_addr	*la;

	ok(strcmp(p->user, "mcpuser") == 0, "user");
	ok(strcmp(p->group, "mcpgroup") == 0, "group");
	ok(strcmp(p->run_dir, "/run/m") == 0, "run directory");
	ok(strcmp(p->state_dir, "/srv/mcpd/state") == 0,
	    "state directory through a macro");
	ok(strcmp(p->runc, "/opt/runc") == 0, "runc");
	ok(strcmp(p->sandbox_init, "/opt/sandbox init") == 0,
	    "sandbox-init quoted with a space");
	ok(strcmp(p->sandbox_socket, "/run/m/sb.sock") == 0, "sandbox socket");
	la = TAILQ_FIRST(&p->listens);
	ok(la != NULL && la->type == LISTEN_TCP &&
	    strcmp(la->host, "127.0.0.1") == 0 && la->port == 8080,
	    "listen on an IPv4 address");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && la->type == LISTEN_TCP &&
	    strcmp(la->host, "::1") == 0 && la->port == 8081,
	    "listen on an IPv6 address, port from a macro");
	ok(la != NULL && la->tenant[0] == '\0', "no tenant on a listener");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && strcmp(la->host, "*") == 0 && la->port == 9000,
	    "listen on *");
	ok(la != NULL && strcmp(la->tenant, "bob") == 0,
	    "TCP listener with a tenant");
	ok(la != NULL && la->plaintext && !la->tls,
	    "plain HTTP off the loopback, said");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && la->tls && !la->plaintext && la->port == 8443 &&
	    strcmp(la->host, "192.0.2.7") == 0, "listen with tls");
	ok(strcmp(p->tls_cert, "/etc/m/chain.pem") == 0 &&
	    strcmp(p->tls_key, "/etc/m/key.pem") == 0, "tls certificate, key");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && la->type == LISTEN_UNIX &&
	    strcmp(la->path, "/run/m/a.sock") == 0 &&
	    la->mode == DEFAULT_UNIX_MODE && la->tenant[0] == '\0',
	    "listen on unix, default mode");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && la->type == LISTEN_UNIX && la->mode == 0600 &&
	    strcmp(la->tenant, "alice") == 0,
	    "listen on unix, mode in octal, tenant defined further down");
	la = la != NULL ? TAILQ_NEXT(la, entry) : NULL;
	ok(la != NULL && la->type == LISTEN_UNIX &&
	    la->mode == DEFAULT_UNIX_MODE && strcmp(la->tenant, "bob") == 0 &&
	    TAILQ_NEXT(la, entry) == NULL,
	    "listen on unix, default mode, quoted tenant");
	ok(p->nallow_hosts == 3 &&
	    strcmp(p->allow_hosts[0], "mcp.example.com") == 0 &&
	    strcmp(p->allow_hosts[1], "192.0.2.1") == 0 &&
	    strcmp(p->allow_hosts[2], "[2001:db8::1]") == 0,
	    "allowed hosts in order, in lower case");
	ok(p->nallow_origins == 2 &&
	    strcmp(p->allow_origins[0], "https://app.example.com") == 0 &&
	    strcmp(p->allow_origins[1], "http://[::1]:3000") == 0,
	    "allowed origins in order, in lower case");
	ok(p->audit.required == 0, "audit required no");
	ok(strcmp(p->audit.socket, "/run/m/audit.sock") == 0, "audit socket");
	ok(strcmp(p->audit.database, "/srv/mcpd/audit.db") == 0,
	    "audit database");
	ok(strcmp(p->audit.user, "auditor") == 0, "audit user");
	ok(p->audit.excerpt == 4096, "audit excerpt 4K");
}

static void
test_rich_limits(const struct policy *p)
{
	struct limits	*l;

	l = TAILQ_FIRST(&p->limits);
	ok(count_limits(p) == 4 && strcmp(l->name, "default") == 0,
	    "four limits, \"default\" first");
	ok(l->memory == 1ULL << 30 && l->network == NET_EGRESS &&
	    l->cpus == DEFAULT_CPUS && l->pids == DEFAULT_PIDS &&
	    l->set == (LIMIT_MEMORY | LIMIT_NETWORK),
	    "\"default\" given fields, built-in others");
	l = policy_limits(p, "small");
	ok(l != NULL && l->memory == 64ULL << 20 && l->cpus == 500 &&
	    l->pids == 32 && l->timeout == 500 && l->output == 64 << 10 &&
	    l->disk == 32ULL << 20 && l->network == NET_NONE &&
	    l->set == 0x7f, "limits with every field");
	l = policy_limits(p, "mid");
	ok(l != NULL && l->cpus == 2250 && l->timeout == 300000 &&
	    l->memory == 4ULL << 20, "cpus with decimals, minutes, bytes");
	ok(l != NULL && l->pids == DEFAULT_PIDS && l->network == NET_EGRESS &&
	    l->output == DEFAULT_OUTPUT && l->disk == DEFAULT_DISK &&
	    l->set == (LIMIT_CPUS | LIMIT_TIMEOUT | LIMIT_MEMORY),
	    "unset fields inherited from \"default\"");
	ok(policy_limits(p, "nope") == NULL, "unknown limits not found");
}

static void
test_rich_tenants(const struct policy *p)
{
	struct tenant	*t;
	uint8_t		 h[POLICY_TOKEN_HASH_LEN];
	size_t		 i;

	t = policy_tenant(p, "alice");
	ok(t != NULL && t->ntokens == 2 && t->nuids == 2,
	    "tenant with two tokens and two uids");
	if (t == NULL || t->ntokens != 2 || t->nuids != 2)
		return;
	ok(t->tokens[0][0] == 0x01 && t->tokens[0][1] == 0x23 &&
	    t->tokens[0][31] == 0xef, "token decoded");
	ok(t->tokens[1][0] == 0xfe && t->tokens[1][31] == 0x10,
	    "upper-case token decoded");
	ok(strcmp(t->uids[0].name, "1000") == 0 &&
	    strcmp(t->uids[1].name, "alice") == 0, "uids as written");
	ok(t->uids[0].uid == (uid_t)-1, "uids unresolved after loading");
	ok(strcmp(t->limits_name, "small") == 0 && t->limits ==
	    policy_limits(p, "small"), "tenant limits resolved");
	ok(t->max_sandboxes == 8, "max sandboxes");
	ok(t->max_requests == 32, "max requests");
	ok(t->npaths == 3 && strcmp(t->paths[0].path, "/srv/alice") == 0 &&
	    !t->paths[0].readonly, "local path, read and write");
	ok(t->npaths == 3 &&
	    strcmp(t->paths[1].path, "/home/alice/my docs") == 0 &&
	    t->paths[1].readonly, "local path read-only, quoted");
	ok(t->npaths == 3 && strcmp(t->paths[2].path, "/") == 0 &&
	    !t->paths[2].readonly, "local path /, in file order");
	t = policy_tenant(p, "bob");
	ok(t != NULL && t->limits == policy_limits(p, "later") &&
	    t->limits->pids == 7, "limits defined after the tenant");
	ok(t != NULL && t->max_sandboxes == DEFAULT_MAX_SANDBOXES,
	    "default max sandboxes");
	ok(t != NULL && t->max_requests == DEFAULT_MAX_REQUESTS &&
	    DEFAULT_MAX_REQUESTS == 16, "default max requests is 16");
	ok(t != NULL && t->npaths == 0 && t->paths == NULL,
	    "no local paths by default");

	for (i = 0; i < sizeof(h); i++)
		h[i] = (uint8_t)(0xfe - (i % 8) * 0x22);
	ok(policy_tenant_by_token(p, h) == policy_tenant(p, "alice"),
	    "tenant by its second token");
	h[5] ^= 1;
	ok(policy_tenant_by_token(p, h) == NULL, "unknown token: no tenant");
	ok(policy_tenant_by_uid(p, (uid_t)-1) == NULL &&
	    policy_tenant_by_uid(p, 1000) == NULL,
	    "no tenant by uid before resolving");
}

static void
test_rich_images(const struct policy *p)
{
	struct image	*im;
	struct language	*l;

	im = TAILQ_FIRST(&p->images);
	ok(im != NULL && strcmp(im->name, "host") == 0 && im->pool == 3,
	    "image host with a pool");
	im = policy_image(p, "deb");
	ok(im != NULL && im->type == IMAGE_ROOTFS &&
	    strcmp(im->path, "/srv/deb") == 0 && im->pool == DEFAULT_POOL,
	    "rootfs image, default pool");
	im = policy_image(p, "alpine");
	ok(im != NULL && im->pool == 0, "pool 0");
	im = policy_image(p, "deb");
	ok(im != NULL && im->pool_idle == DEFAULT_POOL_IDLE,
	    "pool idle time by default");
	im = policy_image(p, "lazy");
	ok(im != NULL && im->pool == 4 && im->pool_idle == 90000,
	    "pool 4 idle 90s");
	im = policy_image(p, "eager");
	ok(im != NULL && im->pool == 1 && im->pool_idle == 0,
	    "pool idle never");

	l = policy_language(p, "python");
	ok(l != NULL && l->naliases == 2 && strcmp(l->aliases[0], "py") == 0 &&
	    strcmp(l->aliases[1], "python3") == 0, "aliases");
	ok(l != NULL && strcmp(l->file, "main.py") == 0 &&
	    strcmp(l->build, "python3 -m py_compile main.py") == 0 &&
	    strcmp(l->image, "deb") == 0 &&
	    strcmp(l->version, "python3 --version") == 0,
	    "file, build, image, version");
	ok(l != NULL && strcmp(l->run, "python3 main.py") == 0,
	    "quoted string continued on the next line");
	ok(policy_language(p, "py") == l && policy_language(p, "python3") == l,
	    "language by alias");
	l = policy_language(p, "c");
	ok(l != NULL && strcmp(l->run,
	    "./main \"quoted\" back\\slash $HOME \\n") == 0,
	    "escapes in quotes, no macros in quotes");
	ok(l != NULL && l->build == NULL && l->version == NULL &&
	    strcmp(l->image, "host") == 0, "optional commands left out");
	ok(policy_language(p, "cobol") == NULL, "unknown language");
}

/* How the dump writes listener tenants, hosts, origins and tenant fields. */
static void
test_rich_dump(const struct policy *p)
{
	static const char *const lines[] = {
		"listen on \"127.0.0.1\" port 8080\n",
		"listen on \"*\" port 9000 tenant \"bob\" plaintext\n",
		"listen on \"192.0.2.7\" port 8443 tls\n",
		"tls certificate \"/etc/m/chain.pem\"\ntls key \"/etc/m/key.pem\"\n",
		"listen on unix \"/run/m/a.sock\" mode 0660\n",
		"listen on unix \"/run/m/b.sock\" mode 0600 tenant \"alice\"\n",
		"\nallow host \"mcp.example.com\"\n",
		"allow host \"[2001:db8::1]\"\n",
		"allow origin \"https://app.example.com\"\n",
		"allow origin \"http://[::1]:3000\"\n",
		"\tmax requests 32\n",
		"\tlocal path \"/srv/alice\"\n",
		"\tlocal path \"/home/alice/my docs\" read-only\n",
		"\tlocal path \"/\"\n",
	};
	const char	*l;
	char		*d;
	size_t		 i;

	d = dump_text(p);
	for (i = 0; i < nitems(lines); i++) {
		l = lines[i] + strspn(lines[i], "\n\t");
		if (!ok(strstr(d, lines[i]) != NULL, "dump has %.*s",
		    (int)strcspn(l, "\n"), l))
			diag("dump:\n%s", d);
	}
	ok(strstr(d, "max requests 16") == NULL,
	    "max requests left out of the dump at its default");
	free(d);
}

static void
test_rich(void)
{
	struct policy	*p;

	if ((p = loads("every statement", rich)) == NULL)
		return;
	test_rich_globals(p);
	test_rich_limits(p);
	test_rich_tenants(p);
	test_rich_images(p);
	test_rich_dump(p);
	round_trip("rich config", p);
	policy_free(p);
}

/*
 * Listener tenants, allowed hosts and origins, local paths and max
 * requests: what is accepted, and that a file without them dumps as it
 * always did.
 */
static void
test_added_values(void)
{
	struct policy	*p;
	struct tenant	*t;
	char		 text[1024], label[64], name[320];
	char		*d;

	p = loads("hosts, origins and bounds",
	    "allow host localhost\n"
	    "allow host xn--bcher-kva.example\n"
	    "allow host a-b.c-d\n"
	    "allow host \"[::ffff:192.0.2.1]\"\n"
	    "allow host 0.0.0.0\n"
	    "allow origin http://localhost\n"
	    "allow origin \"http://LOCALHOST:8080\"\n"
	    "allow origin https://a.example:8443\n"
	    "allow origin http://127.0.0.1:65535\n"
	    "allow origin http://a.example:1\n"
	    "allow origin http://a.example:443\n"
	    "allow origin https://a.example:80\n"
	    "allow origin \"https://[2001:db8::1]:8443\"\n"
	    "tenant t {\n\tuid 1\n\tmax requests 1\n}\n"
	    "tenant u {\n\tuid 2\n\tmax requests 4096\n"
	    "\tlocal path /a/b.c/..d/.e\n}\n");
	if (p == NULL)
		return;
	ok(p->nallow_hosts == 5 && p->nallow_origins == 8,
	    "every host and origin kept");
	ok(p->nallow_origins == 8 &&
	    strcmp(p->allow_origins[1], "http://localhost:8080") == 0,
	    "origin in lower case, port kept");
	ok(policy_tenant(p, "t")->max_requests == 1 &&
	    policy_tenant(p, "u")->max_requests == 4096,
	    "max requests bounds");
	t = policy_tenant(p, "u");
	ok(t->npaths == 1 && strcmp(t->paths[0].path, "/a/b.c/..d/.e") == 0,
	    "dots inside names are not \".\" or \"..\"");
	round_trip("hosts, origins and bounds", p);
	policy_free(p);

	memset(label, 'a', 63);
	label[63] = '\0';
	(void)snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label, label,
	    label, label);
	(void)snprintf(text, sizeof(text), "allow host %s\n"
	    "allow origin \"https://%s\"\n", name, name);
	p = loads("labels of 63 and a name of 253 characters", text);
	policy_free(p);

	p = loads("max requests 16 given",
	    "tenant t {\n\tuid 1\n\tmax requests 16\n}\n");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "max requests") == NULL,
		    "max requests 16 is the default, left out of the dump");
		free(d);
		round_trip("max requests 16", p);
	}
	policy_free(p);

	p = loads("none of the added statements",
	    "listen on 127.0.0.1 port 80\nlisten on unix /s.sock\n"
	    "tenant t {\n\tuid 1\n}\n");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "allow") == NULL && strstr(d, " tenant ") ==
		    NULL && strstr(d, "local path") == NULL &&
		    strstr(d, "max requests") == NULL,
		    "their absence adds nothing to the dump");
		ok(strstr(d, "port 80\n") != NULL &&
		    strstr(d, "mode 0660\n") != NULL,
		    "listen lines end as they did");
		free(d);
	}
	policy_free(p);
}

/* "local" became a keyword; files using it as a name still load. */
static void
test_local_word(void)
{
	struct policy	*p;

	p = loads("\"local\" as a macro, tenant, uid and limits name",
	    "local = \"127.0.0.1\"\n"
	    "listen on $local port 8080 tenant local\n"
	    "limits local {\n}\n"
	    "tenant local {\n\tuid local\n\tlimits local\n"
	    "\tlocal path /srv\n}\n");
	ok(p != NULL && policy_tenant(p, "local") != NULL &&
	    policy_tenant(p, "local")->limits == policy_limits(p, "local") &&
	    strcmp(policy_tenant(p, "local")->uids[0].name, "local") == 0 &&
	    strcmp(TAILQ_FIRST(&p->listens)->host, "127.0.0.1") == 0 &&
	    strcmp(TAILQ_FIRST(&p->listens)->tenant, "local") == 0,
	    "\"local\" read as a value");
	if (p != NULL)
		round_trip("\"local\" as a name", p);
	policy_free(p);

	fails("local path outside a tenant", "local path /srv\n",
	    "t.conf:1: syntax error, unexpected \"path\", expecting \"=\"");
	fails("local without path", "tenant t {\n\tuid 1\n\tlocal /srv\n}\n",
	    "t.conf:3: syntax error, unexpected string \"/srv\", "
	    "expecting \"path\"");
	fails("\"local\" not listed among the values expected", "runc\n",
	    "t.conf:1: syntax error, unexpected end of line, "
	    "expecting string or number");
}

/* Who may read /metrics: scrape-only tokens and tenants by name. */
static void
test_metrics(void)
{
	struct policy	*p;
	uint8_t		 h[POLICY_TOKEN_HASH_LEN];

	p = loads("metrics token and tenant, a tenant named \"metrics\"",
	    "metrics token sha256:" H1 "\n"
	    "metrics tenant ops\n"
	    "metrics tenant metrics\n"
	    "tenant ops {\n\ttoken sha256:" H2 "\n}\n"
	    "tenant metrics {\n\tuid 1\n}\n");
	if (p == NULL)
		return;
	memset(h, 0, sizeof(h));
	(void)sodium_hex2bin(h, sizeof(h), H1, 64, NULL, NULL, NULL);
	ok(policy_metrics_token(p, h) && policy_tenant_by_token(p, h) == NULL,
	    "the metrics token reads metrics and is no tenant's");
	(void)sodium_hex2bin(h, sizeof(h), H2, 64, NULL, NULL, NULL);
	ok(!policy_metrics_token(p, h), "a tenant's token is no metrics token");
	ok(policy_metrics_tenant(p, policy_tenant(p, "ops")) &&
	    policy_metrics_tenant(p, policy_tenant(p, "metrics")),
	    "both tenants may read metrics");
	ok(!policy_metrics_tenant(p, NULL), "no tenant may not");
	round_trip("metrics", p);
	policy_free(p);

	p = loads("no metrics statement", "tenant t {\n\tuid 1\n}\n");
	ok(p != NULL && !policy_metrics_tenant(p, policy_tenant(p, "t")) &&
	    p->nmetrics_tokens == 0, "then no tenant and no token may");
	policy_free(p);

	fails("metrics tenant unknown", "metrics tenant nobody\n",
	    "t.conf:1: metrics tenant: unknown tenant \"nobody\"");
	fails("metrics tenant twice",
	    "tenant a {\n\tuid 1\n}\nmetrics tenant a\nmetrics tenant a\n",
	    "t.conf:5: metrics tenant \"a\" given twice");
	fails("metrics tenant with a bad name", "metrics tenant \"a b\"\n",
	    "t.conf:1: invalid tenant name \"a b\": only letters, digits, "
	    "'.', '_' and '-' are allowed");
	fails("metrics token not a hash", "metrics token secret\n",
	    "t.conf:1: metrics token: not \"sha256:\" and 64 hex digits");
	fails("a tenant's token as the metrics token",
	    "tenant a {\n\ttoken sha256:" H1 "\n}\n"
	    "metrics token sha256:" H1 "\n",
	    "t.conf:4: token already used by tenant \"a\"");
	fails("the metrics token as a tenant's",
	    "metrics token sha256:" H1 "\n"
	    "tenant a {\n\ttoken sha256:" H1 "\n}\n",
	    "t.conf:3: token already used by \"metrics token\"");
	fails("metrics token twice",
	    "metrics token sha256:" H1 "\nmetrics token sha256:" H1 "\n",
	    "t.conf:2: token already used by \"metrics token\"");
	fails("metrics alone", "metrics\n",
	    "t.conf:1: syntax error, unexpected end of line, expecting "
	    "\"tenant\" or \"token\"");
}

/*
 * Download links: share url and share expiry, and a tenant's share max
 * expiry, share downloads and share rate.
 */
/* "host name": the short name mcpd puts in the ids it hands out. */
/* reuse yes|no in a tenant: off by default, dumped when on. */
static void
test_reuse(void)
{
	struct policy	*p;
	char		*d;

	p = loads("reuse", "tenant a {\n\tuid 1\n\treuse yes\n}\n"
	    "tenant b {\n\tuid 2\n\treuse no\n}\n"
	    "tenant c {\n\tuid 3\n}\n"
	    "tenant reuse {\n\tuid 4\n}\n");
	if (p == NULL)
		return;
	ok(policy_tenant(p, "a")->reuse == 1 &&
	    policy_tenant(p, "b")->reuse == 0 &&
	    policy_tenant(p, "c")->reuse == 0,
	    "reuse yes, reuse no, and off by default");
	ok(policy_tenant(p, "reuse") != NULL,
	    "\"reuse\" is still a value: a tenant's name");
	d = dump_text(p);
	ok(strstr(d, "\treuse yes\n") != NULL &&
	    strstr(d, "reuse no") == NULL, "only reuse yes is dumped");
	free(d);
	round_trip("reuse", p);
	policy_free(p);
	fails("reuse twice, reuse of nothing",
	    "tenant a {\n\tuid 1\n\treuse yes\n\treuse no\n}\n"
	    "tenant b {\n\tuid 2\n\treuse\n}\n",
	    "t.conf:4: reuse given twice\n"
	    "t.conf:8: syntax error, unexpected end of line, expecting "
	    "\"yes\" or \"no\"");
}

static void
test_host_name(void)
{
	struct policy	*p;
	char		*d;

	p = loads("no host name", "user nobody\n");
	ok(p != NULL && p->host_name[0] == '\0', "no host name by default");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "host name") == NULL, "none dumped");
		free(d);
	}
	policy_free(p);

	p = loads("a host name", "host name mcp-2\n");
	ok(p != NULL && strcmp(p->host_name, "mcp-2") == 0, "host name read");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "\nhost name mcp-2\n") != NULL, "and dumped");
		free(d);
		round_trip("host name", p);
	}
	policy_free(p);

	p = loads("the longest host name",
	    "host name \"abcdefghijklmnopqrstuvwx\"\n");
	ok(p != NULL && strlen(p->host_name) == 24, "24 characters fit");
	policy_free(p);

	p = loads("\"name\" still a value",
	    "tenant name {\n\tuid name\n}\nlisten on unix /s.sock tenant "
	    "name\n");
	ok(p != NULL && policy_tenant(p, "name") != NULL,
	    "a tenant called \"name\"");
	policy_free(p);

	fails("host name too long", "host name abcdefghijklmnopqrstuvwxy\n",
	    "t.conf:1: host name \"abcdefghijklmnopqrstuvwxy\": 1 to 24 "
	    "lower-case letters, digits and '-' (not first or last), as in "
	    "\"mcp-2\"");
	fails("host name with '~', the separator in ids",
	    "host name \"a~b\"\n",
	    "t.conf:1: host name \"a~b\": 1 to 24 lower-case letters, digits "
	    "and '-' (not first or last), as in \"mcp-2\"");
	fails("host name in capitals", "host name MCP\n",
	    "t.conf:1: host name \"MCP\": 1 to 24 lower-case letters, digits "
	    "and '-' (not first or last), as in \"mcp-2\"");
	fails("host name ending in '-'", "host name mcp-\n",
	    "t.conf:1: host name \"mcp-\": 1 to 24 lower-case letters, digits "
	    "and '-' (not first or last), as in \"mcp-2\"");
	fails("host name empty", "host name \"\"\n",
	    "t.conf:1: host name \"\": 1 to 24 lower-case letters, digits "
	    "and '-' (not first or last), as in \"mcp-2\"");
	fails("host name twice", "host name a\nhost name b\n",
	    "t.conf:2: host name given twice");
}

/* "allow proxy": balancers whose forwarding headers mcpd believes. */
static void
test_allow_proxy(void)
{
	struct policy	*p;
	char		*d;

	p = loads("allow proxy forms",
	    "allow proxy 10.0.0.5\nallow proxy 10.1.2.3/8\n"
	    "allow proxy \"2001:DB8::1/64\"\nallow proxy \"::1\"\n"
	    "allow proxy 0.0.0.0/0\n");
	ok(p != NULL && p->nallow_proxies == 5 &&
	    strcmp(p->allow_proxies[0], "10.0.0.5/32") == 0 &&
	    strcmp(p->allow_proxies[1], "10.0.0.0/8") == 0 &&
	    strcmp(p->allow_proxies[2], "2001:db8::/64") == 0 &&
	    strcmp(p->allow_proxies[3], "::1/128") == 0 &&
	    strcmp(p->allow_proxies[4], "0.0.0.0/0") == 0,
	    "kept as networks with their bits, the host bits cleared");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "allow proxy \"10.0.0.0/8\"\n") != NULL,
		    "and dumped");
		free(d);
		round_trip("allow proxy", p);
	}
	policy_free(p);

	p = loads("\"proxy\" still a value",
	    "tenant proxy {\n\tuid 5\n}\n");
	ok(p != NULL && policy_tenant(p, "proxy") != NULL,
	    "a tenant called \"proxy\"");
	policy_free(p);

	fails("allow proxy not an address", "allow proxy balancer\n",
	    "t.conf:1: allow proxy \"balancer\": not an IPv4 or IPv6 address, "
	    "with /BITS or without");
	fails("allow proxy with a bad octet", "allow proxy 10.0.0.300\n",
	    "t.conf:1: allow proxy \"10.0.0.300\": not an IPv4 or IPv6 "
	    "address, with /BITS or without");
	fails("allow proxy with too many bits", "allow proxy 10.0.0.0/33\n",
	    "t.conf:1: allow proxy \"10.0.0.0/33\": the bits after '/' are 0 "
	    "to 32");
	fails("allow proxy with no bits after '/'", "allow proxy 10.0.0.0/\n",
	    "t.conf:1: allow proxy \"10.0.0.0/\": the bits after '/' are 0 "
	    "to 32");
	fails("allow proxy IPv6 with too many bits",
	    "allow proxy \"::1/129\"\n",
	    "t.conf:1: allow proxy \"::1/129\": the bits after '/' are 0 to "
	    "128");
	fails("allow proxy the same network twice, written two ways",
	    "allow proxy 10.0.0.5\nallow proxy 10.0.0.5/32\n",
	    "t.conf:2: allow proxy \"10.0.0.5/32\" given twice");
}

static void
test_share(void)
{
	struct policy		*p;
	const struct tenant	*t;
	char			*d;

	p = loads("tenant share defaults", "tenant t {\n\tuid 1\n}\n");
	if (p != NULL) {
		t = policy_tenant(p, "t");
		ok(t->share_expiry_max == 86400 && t->share_downloads == 4 &&
		    t->share_rate == 1073741824ULL,
		    "a tenant's links: 24h at most, 4 downloads at once, 1G a "
		    "minute");
		ok(DEFAULT_SHARE_EXPIRY_MAX == 86400 &&
		    DEFAULT_SHARE_DOWNLOADS == 4 &&
		    DEFAULT_SHARE_RATE == 1073741824ULL,
		    "the DEFAULT_SHARE_* values are those");
		d = dump_text(p);
		ok(strstr(d, "share") == NULL,
		    "no share statement, none in the dump");
		free(d);
	}
	policy_free(p);

	p = loads("every share statement",
	    "share url \"HTTPS://MCP.Example.com/\"\n"
	    "share expiry 90m\n"
	    "tenant a {\n\tuid 1\n\tshare max expiry 168h\n"
	    "\tshare downloads 0\n\tshare rate none\n}\n"
	    "tenant b {\n\tuid 2\n\tshare rate 512M\n"
	    "\tshare downloads 1024\n\tshare max expiry 60s\n}\n"
	    "tenant c {\n\tuid 3\n\tshare max expiry 720h\n"
	    "\tshare rate 1K\n}\n");
	if (p == NULL)
		return;
	ok(strcmp(p->share_url, "https://mcp.example.com") == 0,
	    "share url kept as an origin: lower case, no trailing slash");
	ok(p->share_expiry == 5400, "share expiry in seconds");
	t = policy_tenant(p, "a");
	ok(t->share_expiry_max == 7 * 86400 && t->share_downloads == 0 &&
	    t->share_rate == 0, "share max expiry 168h, share downloads 0 "
	    "(no sharing), share rate none (no limit)");
	t = policy_tenant(p, "b");
	ok(t->share_expiry_max == 60 && t->share_downloads == 1024 &&
	    t->share_rate == 512ULL << 20,
	    "the lowest max expiry, the most downloads, a rate");
	t = policy_tenant(p, "c");
	ok(t->share_expiry_max == 30 * 86400 && t->share_rate == 1024,
	    "the longest max expiry, the lowest rate");
	d = dump_text(p);
	ok(strstr(d, "share url \"https://mcp.example.com\"\n") != NULL &&
	    strstr(d, "share expiry 90m\n") != NULL &&
	    strstr(d, "\tshare max expiry 168h\n") != NULL &&
	    strstr(d, "\tshare downloads 0\n") != NULL &&
	    strstr(d, "\tshare rate none\n") != NULL &&
	    strstr(d, "\tshare rate 512M\n") != NULL &&
	    strstr(d, "\tshare max expiry 1m\n") != NULL, "share dump");
	free(d);
	round_trip("share", p);
	policy_free(p);

	p = loads("share url forms",
	    "share url http://127.0.0.1:8080\nshare expiry 1m\n");
	ok(p != NULL && strcmp(p->share_url, "http://127.0.0.1:8080") == 0 &&
	    p->share_expiry == 60, "plain http on the loopback, a port");
	policy_free(p);
	p = loads("share url with the default port",
	    "share url \"https://a.example:443\"\nshare expiry 720h\n");
	ok(p != NULL && strcmp(p->share_url, "https://a.example") == 0 &&
	    p->share_expiry == 30 * 86400, "the scheme's port left out");
	policy_free(p);
	p = loads("share url in IPv6", "share url \"https://[::1]:8443/\"\n");
	ok(p != NULL && strcmp(p->share_url, "https://[::1]:8443") == 0,
	    "an IPv6 host keeps its brackets");
	policy_free(p);

	p = loads("share expiry above a tenant's share max expiry",
	    "share expiry 48h\n"
	    "tenant t {\n\tuid 1\n\tshare max expiry 1h\n}\n");
	ok(p != NULL && p->share_expiry == 48 * 3600 &&
	    policy_tenant(p, "t")->share_expiry_max == 3600,
	    "is no error: the tenant's maximum caps it");
	policy_free(p);

	p = loads("the defaults given",
	    "share expiry 1h\n"
	    "tenant t {\n\tuid 1\n\tshare max expiry 24h\n"
	    "\tshare downloads 4\n\tshare rate 1G\n}\n");
	if (p != NULL) {
		d = dump_text(p);
		ok(strstr(d, "share") == NULL,
		    "share statements at their defaults are left out of "
		    "the dump");
		free(d);
	}
	policy_free(p);

	p = loads("the share words as names",
	    "tenant share {\n\tuid rate\n\tlimits expiry\n}\n"
	    "limits expiry {\n}\n"
	    "tenant url {\n\tuid downloads\n}\n"
	    "listen on unix /s.sock tenant share\n");
	ok(p != NULL && policy_tenant(p, "share") != NULL &&
	    strcmp(policy_tenant(p, "share")->uids[0].name, "rate") == 0 &&
	    policy_tenant(p, "share")->limits == policy_limits(p, "expiry") &&
	    policy_tenant(p, "url") != NULL,
	    "\"share\", \"url\", \"expiry\", \"downloads\" and \"rate\" "
	    "still read as values");
	if (p != NULL)
		round_trip("the share words as names", p);
	policy_free(p);

	fails("share url off the loopback in plain http",
	    "share url http://mcp.example.com\n",
	    "t.conf:1: share url \"http://mcp.example.com\": https, or plain "
	    "http on the loopback only");
	fails("share url with a path; again after an error",
	    "share url https://a.example/mcp\n"
	    "share url https://a.example\n",
	    "t.conf:1: share url \"https://a.example/mcp\": no path allowed: a "
	    "scheme, a host and a port, as in https://mcp.example.com\n"
	    "t.conf:2: share url given twice");
	fails("share url with a query",
	    "share url \"https://a.example?x=1\"\n",
	    "t.conf:1: share url \"https://a.example?x=1\": no query (?) "
	    "allowed");
	fails("share url with a fragment",
	    "share url \"https://a.example/#top\"\n",
	    "t.conf:1: share url \"https://a.example/#top\": no fragment (#) "
	    "allowed");
	fails("share url with user information",
	    "share url https://u@a.example\n",
	    "t.conf:1: share url \"https://u@a.example\": no user information "
	    "(@) allowed");
	fails("share url with a double slash", "share url https://a.example//\n",
	    "t.conf:1: share url \"https://a.example//\": no path allowed: a "
	    "scheme, a host and a port, as in https://mcp.example.com");
	fails("share url not a URL", "share url mcp.example.com\n",
	    "t.conf:1: share url \"mcp.example.com\": not an http:// or "
	    "https:// URL");
	fails("share url empty", "share url \"\"\n",
	    "t.conf:1: share url \"\": not an http:// or https:// URL");
	fails("share url twice",
	    "share url https://a.example\nshare url https://a.example\n",
	    "t.conf:2: share url given twice");

	fails("share expiry too short", "share expiry 59s\n",
	    "t.conf:1: share expiry 59s: out of range (1m..720h)");
	fails("share expiry too long", "share expiry 721h\n",
	    "t.conf:1: share expiry 721h: out of range (1m..720h)");
	fails("share expiry not whole seconds", "share expiry 60500ms\n",
	    "t.conf:1: share expiry 60500ms: not whole seconds");
	fails("share expiry not a duration", "share expiry soon\n",
	    "t.conf:1: share expiry \"soon\": not a duration");
	fails("share expiry in days, which durations do not have",
	    "share expiry 7d\n",
	    "t.conf:1: share expiry \"7d\": not a duration");
	fails("share expiry twice", "share expiry 1h\nshare expiry 2h\n",
	    "t.conf:2: share expiry given twice");

	fails("share max expiry out of range",
	    "tenant t {\n\tuid 1\n\tshare max expiry 30s\n}\n"
	    "tenant u {\n\tuid 2\n\tshare max expiry 2592001\n}\n",
	    "t.conf:3: share max expiry 30s: out of range (1m..720h)\n"
	    "t.conf:7: share max expiry 2592001: out of range (1m..720h)");
	fails("share max expiry not a duration",
	    "tenant t {\n\tuid 1\n\tshare max expiry 7d\n}\n",
	    "t.conf:3: share max expiry \"7d\": not a duration");
	fails("share max expiry twice",
	    "tenant t {\n\tuid 1\n\tshare max expiry 1h\n"
	    "\tshare max expiry 2h\n}\n",
	    "t.conf:4: share max expiry given twice");

	fails("share downloads out of range",
	    "tenant t {\n\tuid 1\n\tshare downloads 1025\n}\n",
	    "t.conf:3: share downloads 1025: out of range (0..1024)");
	fails("share downloads not a number",
	    "tenant t {\n\tuid 1\n\tshare downloads many\n}\n",
	    "t.conf:3: syntax error, unexpected string \"many\", "
	    "expecting number");
	fails("share downloads twice",
	    "tenant t {\n\tuid 1\n\tshare downloads 1\n"
	    "\tshare downloads 1\n}\n",
	    "t.conf:4: share downloads given twice");

	fails("share rate 0: none is the word for no limit",
	    "tenant t {\n\tuid 1\n\tshare rate 0\n}\n",
	    "t.conf:3: share rate 0: out of range (1K..1T, or none)");
	fails("share rate out of range",
	    "tenant t {\n\tuid 1\n\tshare rate 1023\n}\n"
	    "tenant u {\n\tuid 2\n\tshare rate 2T\n}\n",
	    "t.conf:3: share rate 1023: out of range (1K..1T, or none)\n"
	    "t.conf:7: share rate 2T: out of range (1K..1T, or none)");
	fails("share rate not a size",
	    "tenant t {\n\tuid 1\n\tshare rate fast\n}\n",
	    "t.conf:3: share rate \"fast\": not a size");
	fails("share rate twice",
	    "tenant t {\n\tuid 1\n\tshare rate none\n\tshare rate 1G\n}\n",
	    "t.conf:4: share rate given twice");

	fails("a tenant's share statement at the top level",
	    "share downloads 4\n",
	    "t.conf:1: syntax error, unexpected \"downloads\", expecting "
	    "\"url\" or \"expiry\"");
	fails("a global share statement in a tenant",
	    "tenant t {\n\tuid 1\n\tshare url https://a.example\n}\n",
	    "t.conf:3: syntax error, unexpected \"url\", expecting \"max\" "
	    "or \"downloads\" or \"rate\"");
	fails("share max without expiry",
	    "tenant t {\n\tuid 1\n\tshare max 1h\n}\n",
	    "t.conf:3: syntax error, unexpected string \"1h\", expecting "
	    "\"expiry\"");
}

static void
test_added_errors(void)
{
	static const struct {
		const char	*host;
		const char	*why;
	} hosts[] = {
		{ "a_b",		"not a host name or address" },
		{ "\"a b\"",		"not a host name or address" },
		{ "\"\"",		"not a host name or address" },
		{ "-a.example",		"not a host name or address" },
		{ "a-.example",		"not a host name or address" },
		{ "a..b",		"not a host name or address" },
		{ ".a",			"not a host name or address" },
		{ "a.example.",		"not a host name or address" },
		{ "1.2.3",		"not a host name or address" },
		{ "999.1.1.1",		"not a host name or address" },
		{ "01.2.3.4",		"not a host name or address" },
		{ "0x7f000001",		"not a host name or address" },
		{ "a.123",		"not a host name or address" },
		{ "\"[::1\"",		"not a host name or address" },
		{ "\"[]\"",		"not a host name or address" },
		{ "\"[zz::1]\"",	"not a host name or address" },
		{ "\"[127.0.0.1]\"",	"not a host name or address" },
		{ "*",			"not a host name or address" },
		{ "localhost:8080",	"a port is not allowed here" },
		{ "\"[::1]:8080\"",	"a port is not allowed here" },
		{ "::1",		"an IPv6 address must be in brackets" },
		{ "2001:db8::1",	"an IPv6 address must be in brackets" },
	};
	static const struct {
		const char	*origin;
		const char	*why;
	} origins[] = {
		{ "https://a.example/",		"has a path; an origin is a "
		    "scheme, a host and a port" },
		{ "https://a.example/app",	"has a path; an origin is a "
		    "scheme, a host and a port" },
		{ "https://a.example:8443/",	"has a path; an origin is a "
		    "scheme, a host and a port" },
		{ "\"https://a.example?x\"",	"has a path; an origin is a "
		    "scheme, a host and a port" },
		{ "a.example",			"not http:// or https://" },
		{ "//a.example",		"not http:// or https://" },
		{ "ftp://a.example",		"not http:// or https://" },
		{ "\"https:/a.example\"",	"not http:// or https://" },
		{ "\"null\"",			"not http:// or https://" },
		{ "http://a.example:0",		"port out of range "
		    "(1..65535)" },
		{ "http://a.example:70000",	"port out of range "
		    "(1..65535)" },
		{ "http://a.example:99999999999999999999",
		    "port out of range (1..65535)" },
		{ "http://a.example:080",	"port with a leading zero" },
		{ "http://a.example:",		"not a port" },
		{ "http://a.example:8o",	"not a port" },
		{ "http://a.example:80",	"the default port of the "
		    "scheme, which browsers leave out" },
		{ "https://a.example:443",	"the default port of the "
		    "scheme, which browsers leave out" },
		{ "http://",			"not a host name or address" },
		{ "\"http://user@a.example\"",	"not a host name or address" },
		{ "http://a_b.example",		"not a host name or address" },
		{ "\"http://[::1\"",		"not a host name or address" },
		{ "\"http://[::1]x\"",		"not a host name or address" },
		{ "http://::1",			"not a host name or address" },
	};
	char	 text[512], want[512], what[80], *big;
	size_t	 i;

	for (i = 0; i < nitems(hosts); i++) {
		(void)snprintf(text, sizeof(text), "allow host %s\n",
		    hosts[i].host);
		(void)snprintf(want, sizeof(want), "t.conf:1: allow host "
		    "\"%.*s\": %s", (int)strcspn(hosts[i].host +
		    (hosts[i].host[0] == '"'), "\""), hosts[i].host +
		    (hosts[i].host[0] == '"'), hosts[i].why);
		(void)snprintf(what, sizeof(what), "allow host %s",
		    hosts[i].host);
		fails(what, text, want);
	}
	for (i = 0; i < nitems(origins); i++) {
		(void)snprintf(text, sizeof(text), "allow origin %s\n",
		    origins[i].origin);
		(void)snprintf(want, sizeof(want), "t.conf:1: allow origin "
		    "\"%.*s\": %s", (int)strcspn(origins[i].origin +
		    (origins[i].origin[0] == '"'), "\""), origins[i].origin +
		    (origins[i].origin[0] == '"'), origins[i].why);
		(void)snprintf(what, sizeof(what), "allow origin %s",
		    origins[i].origin);
		fails(what, text, want);
	}

	big = xmalloc(400);
	memset(big, 'a', 399);
	big[399] = '\0';
	memcpy(big, "allow host ", 11);
	big[11 + 63] = big[11 + 127] = big[11 + 191] = '.';
	big[11 + 254] = '\n';
	big[11 + 255] = '\0';
	fails("host of 254 characters", big,
	    "t.conf:1: allow host: longer than 253 characters");
	memcpy(big + 11, "a.", 2);
	memset(big + 13, 'b', 64);
	memcpy(big + 77, "\n", 2);
	fails("label of 64 characters", big, "t.conf:1: allow host \"a."
	    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	    "\": not a host name or address");
	memset(big, 'a', 399);
	memcpy(big, "allow origin https://", 21);
	big[13 + 301] = '\n';
	big[13 + 302] = '\0';
	fails("origin of 301 characters", big,
	    "t.conf:1: allow origin: longer than 300 characters");
	free(big);

	fails("host given twice, in another case",
	    "allow host a.example\nallow host A.Example\n",
	    "t.conf:2: allow host \"a.example\" given twice");
	fails("origin given twice, in another case",
	    "allow origin https://a.example\n"
	    "allow origin HTTPS://A.EXAMPLE\n",
	    "t.conf:2: allow origin \"https://a.example\" given twice");
	fails("allow what", "allow a.example\n",
	    "t.conf:1: syntax error, unexpected string \"a.example\", "
	    "expecting \"host\" or \"origin\" or \"proxy\"");

	fails("plain HTTP on every address",
	    "listen on * port 80\n",
	    "t.conf:1: listen on * port 80: plain HTTP off the loopback "
	    "would carry bearer tokens in the clear: add \"tls\" (with tls "
	    "certificate and tls key), or \"plaintext\" if a TLS proxy sits "
	    "in front");
	fails("plain HTTP on a host name",
	    "listen on mcp.example.com port 80\n",
	    "t.conf:1: listen on mcp.example.com port 80: plain HTTP off the "
	    "loopback would carry bearer tokens in the clear: add \"tls\" "
	    "(with tls certificate and tls key), or \"plaintext\" if a TLS "
	    "proxy sits in front");
	fails("tls without the files",
	    "tls key /k.pem\n\nlisten on * port 443 tls\n",
	    "t.conf:3: a listener with tls needs \"tls certificate\" and "
	    "\"tls key\": the files of its certificate chain and private key "
	    "(PEM)");
	fails("tls certificate twice",
	    "tls certificate /a\ntls certificate /b\n",
	    "t.conf:2: tls certificate given twice");
	fails("tls and plaintext both",
	    "tls certificate /c\ntls key /k\nlisten on * port 1 tls plaintext\n",
	    "t.conf:3: syntax error, unexpected \"plaintext\", expecting "
	    "end of line");
	fails("unknown tenant on a TCP listener",
	    "listen on 127.0.0.1 port 80 tenant bob\n"
	    "tenant alice {\n\tuid 1\n}\n",
	    "t.conf:1: listen on 127.0.0.1 port 80: unknown tenant \"bob\"");
	fails("unknown tenant on a unix listener",
	    "\nlisten on unix /s.sock mode 600 tenant bob\n",
	    "t.conf:2: listen on unix /s.sock: unknown tenant \"bob\"");
	fails("invalid tenant name on a listener",
	    "listen on unix /s.sock tenant \"a b\"\n",
	    "t.conf:1: invalid tenant name \"a b\": only letters, digits, "
	    "'.', '_' and '-' are allowed");
	fails("tenant before the mode", "listen on unix /s tenant a mode 0\n"
	    "tenant a {\n\tuid 1\n}\n",
	    "t.conf:1: syntax error, unexpected \"mode\", "
	    "expecting end of line");
	fails("listener tenant without a name", "listen on * port 1 tenant\n",
	    "t.conf:1: syntax error, unexpected end of line, "
	    "expecting string or number");

	fails("relative local path",
	    "tenant t {\n\tuid 1\n\tlocal path home/alice\n}\n",
	    "t.conf:3: local path \"home/alice\": not an absolute path");
	fails("local path with ..",
	    "tenant t {\n\tuid 1\n\tlocal path /home/../etc\n}\n",
	    "t.conf:3: local path \"/home/../etc\": has a \".\" or \"..\" "
	    "component");
	fails("local path ending in ..",
	    "tenant t {\n\tuid 1\n\tlocal path /home/..\n}\n",
	    "t.conf:3: local path \"/home/..\": has a \".\" or \"..\" "
	    "component");
	fails("local path with .",
	    "tenant t {\n\tuid 1\n\tlocal path /home/./a\n}\n",
	    "t.conf:3: local path \"/home/./a\": has a \".\" or \"..\" "
	    "component");
	fails("local path with a trailing slash",
	    "tenant t {\n\tuid 1\n\tlocal path /home/\n}\n",
	    "t.conf:3: local path \"/home/\": ends with '/'");
	fails("local path with an empty component",
	    "tenant t {\n\tuid 1\n\tlocal path //home\n}\n",
	    "t.conf:3: local path \"//home\": has an empty component");
	fails("local path given twice",
	    "tenant t {\n\tuid 1\n\tlocal path /a\n"
	    "\tlocal path /a read-only\n}\n",
	    "t.conf:4: local path \"/a\" given twice");
	fails("read-only before the path",
	    "tenant t {\n\tuid 1\n\tlocal path read-only /a\n}\n",
	    "t.conf:3: syntax error, unexpected \"read-only\", "
	    "expecting string or number");
	big = xmalloc(PATH_MAX + 64);
	(void)snprintf(big, PATH_MAX + 64, "tenant t {\n\tuid 1\n"
	    "\tlocal path /%0*d\n}\n", PATH_MAX - 1, 0);
	fails("local path too long", big,
	    "t.conf:3: local path too long (at most 4095 bytes)");
	free(big);

	fails("max requests 0", "tenant t {\n\tuid 1\n\tmax requests 0\n}\n",
	    "t.conf:3: max requests 0: out of range (1..4096)");
	fails("max requests 5000",
	    "tenant t {\n\tuid 1\n\tmax requests 5000\n}\n",
	    "t.conf:3: max requests 5000: out of range (1..4096)");
	fails("max requests twice",
	    "tenant t {\n\tuid 1\n\tmax requests 1\n\tmax requests 2\n}\n",
	    "t.conf:4: max requests given twice");
	fails("max requests not a number",
	    "tenant t {\n\tuid 1\n\tmax requests many\n}\n",
	    "t.conf:3: syntax error, unexpected string \"many\", "
	    "expecting number");
	fails("max what", "tenant t {\n\tuid 1\n\tmax 3\n}\n",
	    "t.conf:3: syntax error, unexpected number 3, "
	    "expecting \"sandboxes\" or \"requests\"");
}

static void
test_include(void)
{
	struct policy				*p;
	crypto_hash_sha256_state		 st;
	uint8_t					 digest[32];
	static const char			 inc[] =
	    "mem = 256M\n"
	    "limits fromfile {\n\tmemory $mem\n}\n";
	static const char			 top[] =
	    "include \"sub/inc.conf\"\n"
	    "limits again {\n\tdisk $mem\n}\n";

	mkdir("sub", 0700);
	put("sub/inc.conf", inc);
	p = loads("include and a macro from it", top);
	ok(p != NULL && policy_limits(p, "fromfile") != NULL &&
	    policy_limits(p, "fromfile")->memory == 256ULL << 20,
	    "included block read");
	ok(p != NULL && policy_limits(p, "again") != NULL &&
	    policy_limits(p, "again")->disk == 256ULL << 20,
	    "macro from the included file");
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)top,
	    strlen(top));
	crypto_hash_sha256_update(&st, (const unsigned char *)inc,
	    strlen(inc));
	crypto_hash_sha256_final(&st, digest);
	ok(p != NULL && memcmp(p->digest, digest, 32) == 0,
	    "digest covers both files in read order");
	policy_free(p);

	/* Relative to the including file, bare word path, no final NL. */
	put("sub/a.conf", "include b.conf\nuser fromsub\n");
	put("sub/b.conf", "group fromb");
	p = load("sub/a.conf");
	ok(p != NULL && strcmp(p->user, "fromsub") == 0 &&
	    strcmp(p->group, "fromb") == 0,
	    "relative include beside the includer");
	policy_free(p);

	p = loads("redefined macro", "a = x\na = y\nuser $a\n");
	ok(p != NULL && strcmp(p->user, "y") == 0, "later definition wins");
	policy_free(p);
	p = loads("macros concatenated", "a = ab\nb = cd\nuser $a$b.e\n");
	ok(p != NULL && strcmp(p->user, "abcd.e") == 0,
	    "macros in one word");
	policy_free(p);
	fails("macros do not outlive a load", "user $a\n",
	    "t.conf:1: macro \"a\" is not defined");
}

static void
test_shipped(void)
{
	struct policy	*p;

	p = load(shipped);
	if (!ok(p != NULL && errbuf[0] == '\0', "policy/mcpd.conf loads"))
		diag("got: %s", errbuf);
	if (p == NULL)
		return;
	ok(policy_tenant(p, "local") != NULL &&
	    policy_language(p, "py") != NULL &&
	    !TAILQ_EMPTY(&p->listens), "policy/mcpd.conf has content");
	{
		struct policy	*d = loads("empty file", "");
		struct language	*a, *b;
		int		 same = 1;

		for (a = TAILQ_FIRST(&p->languages),
		    b = TAILQ_FIRST(&d->languages); a != NULL || b != NULL;
		    a = TAILQ_NEXT(a, entry), b = TAILQ_NEXT(b, entry))
			if (a == NULL || b == NULL || !same_language(a, b)) {
				diag("differs at %s", a != NULL ? a->name :
				    b->name);
				same = 0;
				break;
			}
		ok(same, "policy/mcpd.conf's languages are the built-in "
		    "table");
		policy_free(d);
	}
	round_trip("policy/mcpd.conf", p);
	policy_free(p);
}

/* policy_resolve() with what it logs caught in errbuf. */
static int
resolve(struct policy *p, int which)
{
	ssize_t	 n;
	int	 saved, fd, rv;

	if ((fd = open("stderr.out", O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1 ||
	    (saved = dup(STDERR_FILENO)) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1) {
		perror("capture");
		exit(1);
	}
	rv = policy_resolve(p, which);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, errbuf, sizeof(errbuf) - 1, 0);
	errbuf[n > 0 ? n : 0] = '\0';
	close(fd);
	return rv;
}

static void
test_resolve(void)
{
	struct policy	*p;
	int		 rv;

	p = loads("users to resolve",
	    "user root\ngroup 0\n"
	    "tenant t {\n\tuid root\n\tuid 4242\n}\n"
	    "audit {\n\tuser root\n}\n");
	if (p == NULL)
		return;
	rv = resolve(p, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT |
	    POLICY_RESOLVE_TENANTS);
	ok(rv == 0 && p->uid == 0 && p->gid == 0 && p->group_gid == 0 &&
	    p->audit.uid == 0, "root and group 0 resolved");
	ok(policy_tenant_by_uid(p, 4242) == policy_tenant(p, "t") &&
	    policy_tenant_by_uid(p, 0) == policy_tenant(p, "t") &&
	    policy_tenant_by_uid(p, 4243) == NULL, "tenant by uid");
	policy_free(p);

	p = loads("unknown users",
	    "user nosuchuser-mcpd\naudit {\n\tuser nosuch-audit\n}\n");
	if (p == NULL)
		return;
	rv = resolve(p, POLICY_RESOLVE_TENANTS);
	ok(rv == 0 && errbuf[0] == '\0', "nothing to resolve for tenants");
	rv = resolve(p, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT);
	ok(rv == -1 && strcmp(errbuf, logged(
	    "t.conf: user \"nosuchuser-mcpd\" does not exist\n"
	    "t.conf: user \"nosuch-audit\" does not exist")) == 0,
	    "every missing user named");
	policy_free(p);
}

static void
test_names(void)
{
	char	 longname[80];

	ok(name_valid("a") && name_valid("py3.11_x-y") &&
	    name_valid("_mcpd") && name_valid("0"),
	    "valid names");
	memset(longname, 'a', sizeof(longname));
	longname[63] = '\0';
	ok(name_valid(longname), "63 characters allowed");
	longname[63] = 'a';
	longname[64] = '\0';
	ok(!name_valid(longname), "64 characters refused");
	ok(!name_valid("") && !name_valid("-a") &&
	    !name_valid(".a") && !name_valid("a b") &&
	    !name_valid("a/b") && !name_valid("caf\xc3\xa9"),
	    "invalid names");
}

static void
test_values(void)
{
	struct policy		*p;
	struct limits		*l;
	struct listen_addr	*la;

	p = loads("units and bounds",
	    "limits a {\n\tmemory 4M\n\tcpus 0.01\n\tpids 1\n"
	    "\ttimeout 1ms\n\toutput 1K\n\tdisk 1M\n}\n"
	    "limits b {\n\tmemory 1T\n\tcpus 1024\n\tpids 1000000\n"
	    "\ttimeout 24h\n\toutput 1G\n\tdisk 1t\n}\n"
	    "limits c {\n\tmemory 3g\n\ttimeout 90\n\tcpus 1.5\n"
	    "\toutput 1536k\n}\n"
	    "tenant t {\n\tuid 1\n\tmax sandboxes 0\n}\n"
	    "tenant u {\n\tuid 2\n\tmax sandboxes 10000\n}\n"
	    "image big host pool 64\n"
	    "listen on localhost port 1\n"
	    "listen on 0.0.0.0 port 65535 plaintext\n"
	    "listen on unix /x.sock mode 0\n"
	    "listen on unix /y.sock mode 0777\n");
	if (p == NULL)
		return;
	l = policy_limits(p, "a");
	ok(l->memory == 4ULL << 20 && l->cpus == 10 && l->pids == 1 &&
	    l->timeout == 1 && l->output == 1024 && l->disk == 1ULL << 20,
	    "lower bounds accepted");
	l = policy_limits(p, "b");
	ok(l->memory == 1ULL << 40 && l->cpus == 1024000 &&
	    l->pids == 1000000 && l->timeout == 86400000 &&
	    l->output == 1ULL << 30 && l->disk == 1ULL << 40,
	    "upper bounds accepted");
	l = policy_limits(p, "c");
	ok(l->memory == 3ULL << 30 && l->timeout == 90000 && l->cpus == 1500 &&
	    l->output == 1536 << 10, "lower-case units, bare seconds");
	ok(policy_tenant(p, "t")->max_sandboxes == 0 &&
	    policy_tenant(p, "u")->max_sandboxes == 10000,
	    "max sandboxes bounds");
	ok(policy_image(p, "big")->pool == 64, "pool 64");
	la = TAILQ_FIRST(&p->listens);
	while (TAILQ_NEXT(la, entry) != NULL)
		la = TAILQ_NEXT(la, entry);
	ok(la->mode == 0777, "mode 0777");
	round_trip("bounds", p);
	policy_free(p);
}

/* Sandbox lifetimes and the host uids sandboxes map to. */
static void
test_language_tools(void)
{
	struct language	 l;
	char		 t[2][POLICY_NAME_MAX];
	size_t		 n;

	memset(&l, 0, sizeof(l));
	l.version = (char *)"javac -version";
	l.build = (char *)"javac Main.java";
	l.run = (char *)"java Main";
	n = policy_language_tools(&l, t, 2);
	ok(n == 2 && strcmp(t[0], "javac") == 0 && strcmp(t[1], "java") == 0,
	    "tools: the version's and the run's first words");
	l.version = NULL;
	l.build = (char *)"  cc -O2 -o main main.c";
	l.run = (char *)"./main";
	n = policy_language_tools(&l, t, 2);
	ok(n == 1 && strcmp(t[0], "cc") == 0,
	    "tools: the build's without a version; a path is no tool");
	l.version = (char *)"python3 --version";
	l.build = NULL;
	l.run = (char *)"python3 main.py";
	n = policy_language_tools(&l, t, 2);
	ok(n == 1 && strcmp(t[0], "python3") == 0, "tools: once each");
	l.version = (char *)"FOO=1 x";
	l.run = (char *)"/usr/bin/env python3";
	n = policy_language_tools(&l, t, 2);
	ok(n == 0, "tools: neither an assignment nor a path");
	n = policy_language_tools(&l, t, 0);
	ok(n == 0, "tools: none when none are wanted");
}

static void
test_languages_replace_defaults(void)
{
	struct policy	*p;

	p = loads("one language", "language ruby {\n\tfile main.rb\n"
	    "\trun \"ruby main.rb\"\n}\n");
	if (p == NULL)
		return;
	ok(policy_language(p, "ruby") != NULL &&
	    policy_language(p, "python") == NULL,
	    "a file's own languages replace the defaults");
	policy_free(p);
}

static void
test_sandbox_settings(void)
{
	struct policy	*p;
	struct limits	*l;

	p = loads("sandbox defaults", "");
	if (p != NULL) {
		l = policy_limits(p, "default");
		ok(l->idle == DEFAULT_IDLE && l->lifetime == DEFAULT_LIFETIME,
		    "idle 30m and lifetime 24h by default");
		ok(p->uid_base == DEFAULT_UID_BASE &&
		    p->uid_slots == DEFAULT_UID_SLOTS,
		    "sandbox uids from 2^28, 4096 of them, by default");
		policy_free(p);
	}
	p = loads("sandbox settings",
	    "sandbox uids 65536 10\n"
	    "limits default {\n\tidle 10m\n\tlifetime 2h\n}\n"
	    "limits short {\n\tidle 1s\n\tlifetime 1s\n}\n"
	    "limits long {\n\tidle 720h\n\tlifetime 8760h\n}\n"
	    "limits heir {\n\tmemory 1G\n}\n");
	if (p == NULL)
		return;
	ok(p->uid_base == 65536 && p->uid_slots == 10, "sandbox uids read");
	l = policy_limits(p, "short");
	ok(l->idle == 1000 && l->lifetime == 1000, "idle and lifetime minima");
	l = policy_limits(p, "long");
	ok(l->idle == 720ULL * 3600000 && l->lifetime == 8760ULL * 3600000,
	    "idle and lifetime maxima");
	l = policy_limits(p, "heir");
	ok(l->idle == 600000 && l->lifetime == 7200000 &&
	    !(l->set & (LIMIT_IDLE | LIMIT_LIFETIME)),
	    "idle and lifetime inherited from \"default\"");
	round_trip("sandbox settings", p);
	policy_free(p);

	p = loads("audit excerpt bounds",
	    "audit {\n\texcerpt 64K\n}\n");
	ok(p != NULL && p->audit.excerpt == AUDIT_EXCERPT_MAX,
	    "excerpt 64K, the maximum");
	if (p != NULL)
		round_trip("excerpt 64K", p);
	policy_free(p);
	p = loads("no excerpt", "audit {\n\texcerpt 0\n}\n");
	ok(p != NULL && p->audit.excerpt == 0, "excerpt 0 keeps digests only");
	if (p != NULL)
		round_trip("excerpt 0", p);
	policy_free(p);
	fails("excerpt too big", "audit {\n\texcerpt 65537\n}\n",
	    "t.conf:2: excerpt \"65537\": a size from 0 to 64K");
	fails("excerpt malformed", "audit {\n\texcerpt lots\n}\n",
	    "t.conf:2: excerpt \"lots\": a size from 0 to 64K");
	fails("idle out of range", "limits x {\n\tidle 500ms\n}\n",
	    "t.conf:2: idle 500ms: out of range (1s..720h)");
	fails("lifetime out of range", "limits x {\n\tlifetime 999ms\n}\n",
	    "t.conf:2: lifetime 999ms: out of range (1s..8760h)");
	fails("lifetime malformed", "limits x {\n\tlifetime forever\n}\n",
	    "t.conf:2: lifetime \"forever\": not a duration");
	fails("idle twice", "limits x {\n\tidle 1m\n\tidle 2m\n}\n",
	    "t.conf:3: idle given twice");
	fails("uids not aligned", "sandbox uids 100000 4\n",
	    "t.conf:1: sandbox uids 100000: not a multiple of 65536");
	fails("uids below the first range", "sandbox uids 0 4\n",
	    "t.conf:1: sandbox uids 0: out of range (65536..4294967295)");
	fails("uids past the last uid", "sandbox uids 4294901760 2\n",
	    "t.conf:1: sandbox uids 4294901760 count 2: beyond the last uid");
	fails("uids count zero", "sandbox uids 65536 0\n",
	    "t.conf:1: sandbox uids count 0: out of range (1..65535)");
	fails("uids twice", "sandbox uids 65536 1\nsandbox uids 131072 1\n",
	    "t.conf:2: sandbox uids given twice");
}

static void
test_syntax_errors(void)
{
	fails("unknown keyword", "user a\nusr b\n",
	    "t.conf:2: syntax error, unknown keyword \"usr\"");
	fails("unknown field in a block", "limits x {\n\tmemroy 1G\n}\n",
	    "t.conf:2: syntax error, unknown keyword \"memroy\"");
	fails("missing brace", "limits x\n\tmemory 1G\n}\n",
	    "t.conf:1: syntax error, unexpected end of line, expecting \"{\"\n"
	    "t.conf:2: syntax error, unexpected \"memory\"\n"
	    "t.conf:3: syntax error, unexpected \"}\"");
	fails("extra word", "user a b\n",
	    "t.conf:1: syntax error, unexpected string \"b\", "
	    "expecting end of line");
	fails("missing value", "runc\n",
	    "t.conf:1: syntax error, unexpected end of line, "
	    "expecting string or number");
	fails("keyword as a value", "user tenant\n",
	    "t.conf:1: syntax error, unexpected \"tenant\", "
	    "expecting string or number");
	fails("bad network", "limits x {\n\tnetwork all\n}\n",
	    "t.conf:2: syntax error, unexpected string \"all\", "
	    "expecting \"none\" or \"egress\"");
	fails("bad image type", "image x docker\n",
	    "t.conf:1: syntax error, unexpected string \"docker\", "
	    "expecting \"host\" or \"rootfs\"");
	fails("quoted number", "listen on * port \"80\"\n",
	    "t.conf:1: syntax error, unexpected string \"80\", "
	    "expecting number");
	fails("unclosed block", "tenant t {\n\tuid 1\n",
	    "t.conf:3: syntax error, unexpected end of file, "
	    "expecting \"}\"");
	fails("unexpected character", "user a;\n",
	    "t.conf:1: unexpected character ';'");
	fails("unterminated quote", "user \"abc\nuser x\n",
	    "t.conf:1: unterminated quoted string");
	fails("control character in quotes", "user \"a\033b\"\n",
	    "t.conf:1: control character 0x1b in quoted string");
	fails("invalid group name", "user a\ngroup \"x y\"\n",
	    "t.conf:2: invalid group name \"x y\": only letters, digits, "
	    "'.', '_' and '-' are allowed");
}

static void
test_value_errors(void)
{
	fails("relative path", "state directory var/mcpd\n",
	    "t.conf:1: state directory \"var/mcpd\": not an absolute path");
	fails("unix socket too long", "listen on unix /"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaa\n",
	    "t.conf:1: listen socket too long (at most 107 bytes)");
	fails("sandbox socket too long", "sandbox socket /"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaa\n",
	    "t.conf:1: sandbox socket too long (at most 107 bytes)");
	fails("run directory too long for the sockets", "run directory /"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
	    "sandbox socket /s.sock\n",
	    "t.conf:1: run directory too long for the default audit socket "
	    "(at most 107 bytes); set it explicitly");
	fails("invalid tenant name", "tenant -t {\n\tuid 1\n}\n",
	    "t.conf:1: invalid tenant name \"-t\": starts with '-' or '.'");
	fails("invalid limits name", "limits \"a b\" {\n}\n",
	    "t.conf:1: invalid limits name \"a b\": only letters, digits, "
	    "'.', '_' and '-' are allowed");
	fails("memory malformed", "limits x {\n\tmemory 12Q\n}\n",
	    "t.conf:2: memory \"12Q\": not a size");
	fails("memory out of range", "limits x {\n\tmemory 3M\n}\n",
	    "t.conf:2: memory 3M: out of range (4M..1T)");
	fails("output out of range", "limits x {\n\toutput 2G\n}\n",
	    "t.conf:2: output 2G: out of range (1K..1G)");
	fails("disk overflow", "limits x {\n\tdisk 99999999999999999T\n}\n",
	    "t.conf:2: disk \"99999999999999999T\": not a size");
	fails("cpus decimals", "limits x {\n\tcpus 0.0005\n}\n",
	    "t.conf:2: cpus \"0.0005\": not a number of CPUs with at most 3 "
	    "decimals");
	fails("cpus out of range", "limits x {\n\tcpus 0.005\n}\n",
	    "t.conf:2: cpus 0.005: out of range (0.01..1024)");
	fails("pids out of range", "limits x {\n\tpids 0\n}\n",
	    "t.conf:2: pids 0: out of range (1..1000000)");
	fails("timeout out of range", "limits x {\n\ttimeout 25h\n}\n",
	    "t.conf:2: timeout 25h: out of range (1ms..24h)");
	fails("timeout malformed", "limits x {\n\ttimeout 5d\n}\n",
	    "t.conf:2: timeout \"5d\": not a duration");
	fails("port 0", "listen on * port 0\n",
	    "t.conf:1: port 0: out of range (1..65535)");
	fails("port too large", "listen on * port 99999999999999999999999\n",
	    "t.conf:1: port 99999999999999999999999: out of range "
	    "(1..65535)");
	fails("mode not octal", "listen on unix /s mode 0680\n",
	    "t.conf:1: mode 0680: not an octal number");
	fails("mode too large", "listen on unix /s mode 1777\n",
	    "t.conf:1: mode 1777: out of range (0..0777)");
	fails("bad listen address", "listen on \"a b\" port 1\n",
	    "t.conf:1: listen address \"a b\": not an address or host name");
	fails("pool out of range", "image x host pool 65\n",
	    "t.conf:1: pool 65: out of range (0..64)");
	fails("pool idle not a duration", "image x host pool 1 idle soon\n",
	    "t.conf:1: pool idle \"soon\": not a duration");
	fails("pool idle too short", "image x host pool 1 idle 500ms\n",
	    "t.conf:1: pool idle 500ms: out of range (1s..720h, or never)");
	fails("pool idle without a pool", "image x host idle 5m\n",
	    "t.conf:1: syntax error, unexpected \"idle\", expecting end of "
	    "line");
	fails("max sandboxes out of range",
	    "tenant t {\n\tuid 1\n\tmax sandboxes 10001\n}\n",
	    "t.conf:3: max sandboxes 10001: out of range (0..10000)");
	fails("token malformed", "tenant t {\n\ttoken sha256:abc\n}\n",
	    "t.conf:2: token: not \"sha256:\" and 64 hex digits");
	fails("token not hex", "tenant t {\n\ttoken sha256:"
	    "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdeg\n}\n",
	    "t.conf:2: token: not \"sha256:\" and 64 hex digits");
	fails("file with a slash", "language x {\n\tfile a/b\n\trun x\n}\n",
	    "t.conf:2: file \"a/b\": contains '/'");
	fails("file ..", "language x {\n\tfile ..\n\trun x\n}\n",
	    "t.conf:2: file \"..\": not a file name");
	fails("file with a dash", "language x {\n\tfile -x\n\trun x\n}\n",
	    "t.conf:2: file \"-x\": starts with '-'");
	fails("empty command", "language x {\n\tfile f\n\trun \"\"\n}\n",
	    "t.conf:3: run: empty command");
	fails("image host as rootfs", "image host rootfs /srv\n",
	    "t.conf:1: image \"host\" cannot be a rootfs");
	fails("invalid macro name", "a-b = 1\n",
	    "t.conf:1: invalid macro name \"a-b\"");
	fails("lone dollar", "user $\n",
	    "t.conf:1: '$' not followed by a macro name");
}

static void
test_duplicates(void)
{
	fails("user twice", "user a\n\nuser b\n",
	    "t.conf:3: user given twice");
	fails("run directory twice", "run directory /a\nrun directory /a\n",
	    "t.conf:2: run directory given twice");
	fails("audit twice", "audit {\n}\naudit {\n}\n",
	    "t.conf:3: audit given twice");
	fails("audit field twice",
	    "audit {\n\trequired yes\n\trequired no\n}\n",
	    "t.conf:3: required given twice");
	fails("excerpt twice",
	    "audit {\n\texcerpt 1K\n\texcerpt 0\n}\n",
	    "t.conf:3: excerpt given twice");
	fails("limits field twice", "limits x {\n\tpids 1\n\tpids 2\n}\n",
	    "t.conf:3: pids given twice");
	fails("tenant field twice",
	    "tenant t {\n\tuid 1\n\tlimits default\n\tlimits default\n}\n",
	    "t.conf:4: limits given twice");
	fails("language field twice",
	    "language x {\n\tfile a\n\trun a\n\trun b\n}\n",
	    "t.conf:4: run given twice");
	fails("limits defined twice", "limits x {\n}\nlimits x {\n}\n",
	    "t.conf:3: limits \"x\" defined twice");
	fails("tenant defined twice",
	    "tenant t {\n\tuid 1\n}\ntenant t {\n\tuid 2\n}\n",
	    "t.conf:4: tenant \"t\" defined twice");
	fails("image defined twice", "image a host\nimage a rootfs /a\n",
	    "t.conf:2: image \"a\" defined twice");
	fails("language defined twice",
	    "language x {\n\tfile a\n\trun a\n}\n"
	    "language x {\n\tfile a\n\trun a\n}\n",
	    "t.conf:5: language \"x\" defined twice");
	fails("same token in two tenants",
	    "tenant a {\n\ttoken sha256:" H1 "\n}\n"
	    "tenant b {\n\ttoken sha256:" H1 "\n}\n",
	    "t.conf:5: token already used by tenant \"a\"");
	fails("same uid in two tenants",
	    "tenant a {\n\tuid 1000\n}\ntenant b {\n\tuid 1000\n}\n",
	    "t.conf:5: uid \"1000\" already used by tenant \"a\"");
	fails("alias with a space",
	    "language a {\n\talias \"a b\"\n\tfile a\n\trun a\n}\n",
	    "t.conf:2: invalid alias \"a b\": only letters, digits, '.', "
	    "'_', '-', '+' and '#' are allowed");
	fails("alias is another language's name",
	    "language a {\n\tfile a\n\trun a\n}\n"
	    "language b {\n\talias a\n\tfile b\n\trun b\n}\n",
	    "t.conf:6: alias \"a\" is the name of language \"a\"");
	fails("alias is another language's alias",
	    "language a {\n\talias x\n\tfile a\n\trun a\n}\n"
	    "language b {\n\talias x\n\tfile b\n\trun b\n}\n",
	    "t.conf:7: alias \"x\" is an alias of language \"a\"");
	fails("name is an earlier alias",
	    "language a {\n\talias b\n\tfile a\n\trun a\n}\n"
	    "language b {\n\tfile b\n\trun b\n}\n",
	    "t.conf:6: language \"b\" is an alias of language \"a\"");
	fails("listen twice",
	    "listen on * port 1 plaintext\nlisten on * port 1 plaintext\n",
	    "t.conf:2: listen address given twice");
}

static void
test_reference_errors(void)
{
	fails("tenant without token or uid",
	    "tenant t {\n\tlimits default\n}\n",
	    "t.conf:1: tenant \"t\" has no token, uid or claim");
	fails("unknown limits", "tenant t {\n\tuid 1\n\tlimits big\n}\n",
	    "t.conf:3: tenant \"t\": unknown limits \"big\"");
	fails("language without run", "language x {\n\tfile a\n}\n",
	    "t.conf:1: language \"x\" has no run command");
	fails("language without file or run", "\nlanguage x {\n}\n",
	    "t.conf:2: language \"x\" has no file\n"
	    "t.conf:2: language \"x\" has no run command");
	fails("unknown image",
	    "language x {\n\tfile a\n\trun a\n\timage deb\n}\n",
	    "t.conf:4: language \"x\": unknown image \"deb\"");
	fails("wrong file and missing run both reported",
	    "language x {\n\tfile a/b\n}\n",
	    "t.conf:2: file \"a/b\": contains '/'\n"
	    "t.conf:1: language \"x\" has no run command");
	fails("no missing-field error after a syntax error",
	    "language x {\n\tfile a\n\trun\n}\n",
	    "t.conf:3: syntax error, unexpected end of line, "
	    "expecting string or number");
	fails("a malformed token is not a missing one",
	    "tenant t {\n\ttoken abc\n}\n",
	    "t.conf:2: token: not \"sha256:\" and 64 hex digits");
	fails("multiple errors, all reported",
	    "user a\nuser b\nlimits x {\n\tmemory 1\n\tbogus\n}\n"
	    "tenant t {\n\tuid 1\n\tlimits nope\n}\n",
	    "t.conf:2: user given twice\n"
	    "t.conf:4: memory 1: out of range (4M..1T)\n"
	    "t.conf:5: syntax error, unknown keyword \"bogus\"\n"
	    "t.conf:9: tenant \"t\": unknown limits \"nope\"");
}

static void
test_include_errors(void)
{
	int	 i;
	char	 name[32], text[64];

	fails("missing include", "user a\ninclude \"nope.conf\"\nuser b\n",
	    "t.conf:2: include \"nope.conf\": No such file or directory\n"
	    "t.conf:3: user given twice");
	put("bad.conf", "\n\nrunc x\n");
	fails("error in an included file",
	    "include bad.conf\nrunc y\n",
	    "bad.conf:3: runc \"x\": not an absolute path\n"
	    "t.conf:2: runc given twice");
	put("a.conf", "include b.conf\n");
	put("b.conf", "\ninclude a.conf\n");
	fails("include cycle", "include a.conf\n",
	    "b.conf:2: include \"a.conf\": include cycle");
	fails("include itself", "include \"t.conf\"\n",
	    "t.conf:1: include \"t.conf\": include cycle");
	for (i = 1; i <= 9; i++) {
		(void)snprintf(name, sizeof(name), "i%d.conf", i);
		(void)snprintf(text, sizeof(text), "include i%d.conf\n", i + 1);
		put(name, text);
	}
	put("i10.conf", "");
	fails("include nested too deeply", "include i1.conf\n",
	    "i8.conf:1: include \"i9.conf\": nested too deeply (more than 8)");
	put("i8.conf", "");
	{
		struct policy *p = load("t.conf");

		ok(p != NULL && errbuf[0] == '\0', "8 levels of include allowed");
		policy_free(p);
	}
	mkdir("adir", 0700);
	fails("include a directory", "include adir\n",
	    "t.conf:1: include \"adir\": not a regular file");
	{
		struct policy *p = load("nonexistent.conf");

		ok(p == NULL && strcmp(errbuf, logged("nonexistent.conf: No "
		    "such file or directory")) == 0, "missing main file");
	}
}

/* Nothing here may crash, hang or leak; all must be refused. */
static void
test_garbage(void)
{
	struct policy	*p;
	char		*buf, *big;
	size_t		 i, len = 1 << 17;

	buf = xmalloc(len + 1);
	srandom(1);
	for (i = 0; i < len; i++)
		buf[i] = (char)(random() & 0xff);
	write_file("t.conf", buf, len);
	p = load("t.conf");
	ok(p == NULL && strstr(errbuf, "t.conf:1: ") != NULL,
	    "random bytes refused");
	policy_free(p);

	write_file("t.conf", "user a\0b\nlimits x {\n}\n", 22);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:1: NUL byte in line")) ==
	    0, "NUL byte refused");
	policy_free(p);

	memset(buf, 'a', len);
	memcpy(buf, "user ", 5);
	buf[100 * 1024] = '\n';
	write_file("t.conf", buf, 100 * 1024 + 1);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:1: line too long (more "
	    "than 8192 bytes)")) == 0, "100 KB line refused");
	policy_free(p);

	memset(buf, 'x', len);
	buf[0] = '#';
	buf[8192] = '\n';
	write_file("t.conf", buf, 8193);
	p = load("t.conf");
	ok(p != NULL && errbuf[0] == '\0', "line of 8192 bytes accepted");
	policy_free(p);
	buf[8192] = 'x';
	buf[8193] = '\n';
	write_file("t.conf", buf, 8194);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:1: line too long (more "
	    "than 8192 bytes)")) == 0, "line of 8193 bytes refused");
	policy_free(p);

	memset(buf, 'a', len);
	memcpy(buf, "a = \"", 5);
	memcpy(buf + 5000, "\"\nuser $a$a\n", 12);
	write_file("t.conf", buf, 5012);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:2: word too long (more "
	    "than 8192 bytes)")) == 0, "macro expanded past the word limit");
	policy_free(p);

	memset(buf, '{', len);
	for (i = 100; i < len; i += 101)
		buf[i] = '\n';
	write_file("t.conf", buf, len);
	p = load("t.conf");
	ok(p == NULL && errbuf[0] != '\0', "nested braces refused");
	policy_free(p);

	buf[0] = '\0';
	for (i = 0; i < 2000; i++)
		strcat(buf, "tenant x {\n");
	put("t.conf", buf);
	p = load("t.conf");
	ok(p == NULL && errbuf[0] != '\0', "nested blocks refused");
	policy_free(p);

	put("t.conf", "user \"\\\nrunc \"\"\"\"\"\n\"");
	p = load("t.conf");
	ok(p == NULL && errbuf[0] != '\0', "unbalanced quotes refused");
	policy_free(p);

	memset(buf, 'a', len);
	memcpy(buf, "state directory /", 17);
	memcpy(buf + 5000, "\n", 2);
	put("t.conf", buf);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:1: state directory too "
	    "long (at most 4095 bytes)")) == 0, "path too long refused");
	policy_free(p);

	big = xcalloc(1, (4 << 20) + 1);
	memset(big, '\n', (4 << 20) + 1);
	write_file("t.conf", big, 4 << 20);
	p = load("t.conf");
	ok(p != NULL && errbuf[0] == '\0', "file of 4 MB accepted");
	policy_free(p);
	write_file("t.conf", big, (4 << 20) + 1);
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf: file too large (more "
	    "than 4 MB)")) == 0, "file over 4 MB refused");
	policy_free(p);
	free(big);

	mkfifo("fifo", 0600);
	p = load("fifo");
	ok(p == NULL && strcmp(errbuf, logged("fifo: not a regular file")) ==
	    0, "FIFO refused without waiting for a writer");
	policy_free(p);

	put("t.conf", "\\");
	p = load("t.conf");
	ok(p == NULL && strcmp(errbuf, logged("t.conf:1: unexpected "
	    "character '\\'")) == 0, "lone backslash at the end refused");
	policy_free(p);
	free(buf);
}

static void
cleanup(void)
{
	static const char *const files[] = {
		"t.conf", "dump.conf", "stderr.out", "bad.conf", "a.conf",
		"b.conf", "sub/inc.conf", "sub/a.conf", "sub/b.conf", "fifo",
	};
	char	 name[32];
	size_t	 i;

	for (i = 0; i < nitems(files); i++)
		unlink(files[i]);
	for (i = 1; i <= 10; i++) {
		(void)snprintf(name, sizeof(name), "i%zu.conf", i);
		unlink(name);
	}
	rmdir("sub");
	rmdir("adir");
	if (chdir("/") == 0)
		rmdir(tmpdir);
}

/* Runtimes per tenant and per image: the tenant's stands over the image's. */
static void
test_tier_runtimes(void)
{
	struct policy		*p;
	const struct runtime	*rt;
	int			 used[POLICY_RUNTIMES_MAX];
	const char		*conf =
	    "runtime g {\n\tpath /opt/runsc\n\tkind runsc\n}\n"
	    "image fast host pool 3 runtime crun\n"
	    "image slow host pool 1 idle 5m runtime g\n"
	    "tenant plain {\n\tuid 1000\n}\n"
	    "tenant wary {\n\tuid 1001\n\truntime g\n}\n";

	if ((p = loads("tenant and image runtimes", conf)) != NULL) {
		rt = policy_runtime_for(p, policy_tenant(p, "plain"), "host");
		ok(rt != NULL && strcmp(rt->name, "runc") == 0,
		    "no choice: the file's runtime (%s)", rt ? rt->name : "-");
		rt = policy_runtime_for(p, policy_tenant(p, "plain"), "fast");
		ok(rt != NULL && rt->kind == RUNTIME_CRUN,
		    "an image's runtime (%s)", rt ? rt->name : "-");
		rt = policy_runtime_for(p, policy_tenant(p, "wary"), "fast");
		ok(rt != NULL && strcmp(rt->name, "g") == 0,
		    "a tenant's stands over the image's (%s)",
		    rt ? rt->name : "-");
		rt = policy_runtime_for(p, policy_tenant(p, "wary"), NULL);
		ok(rt != NULL && rt->kind == RUNTIME_RUNSC,
		    "a stored image under the tenant's");
		rt = policy_runtime_for(p, NULL, "slow");
		ok(rt != NULL && strcmp(rt->name, "g") == 0,
		    "a warm container (no tenant) under its image's");
		policy_runtimes_used(p, used);
		ok(used[0] && used[1] && used[p->nruntimes - 1] &&
		    p->nruntimes == 4 && !used[2],
		    "runc, crun and g in use; runsc not");
		round_trip("tenant and image runtimes", p);
	}
	policy_free(p);
	fails("a tenant's unknown runtime", "tenant t {\n\tuid 1000\n"
	    "\truntime kata\n}\n",
	    "t.conf:3: runtime \"kata\": no such runtime (runc, crun, or a "
	    "runtime block)");
	fails("an image's unknown runtime", "\nimage x host runtime kata\n",
	    "t.conf:2: runtime \"kata\": no such runtime (runc, crun, or a "
	    "runtime block)");
	fails("a tenant's runtime twice", "tenant t {\n\tuid 1000\n"
	    "\truntime crun\n\truntime runc\n}\n",
	    "t.conf:4: runtime given twice");
	if ((p = loads("egress for a tenant under runsc by an image's choice",
	    "limits open {\n\tnetwork egress\n}\n"
	    "image g host runtime runsc\n"
	    "tenant t {\n\tuid 1000\n\tlimits open\n}\n")) != NULL)
		ok(policy_runtime_for(p, policy_tenant(p, "t"), "g")->kind ==
		    RUNTIME_RUNSC, "runsc gives egress too");
	policy_free(p);
}

/* The OCI runtime sandboxd uses: runc unless the file names another. */
static void
test_runtimes(void)
{
	struct policy	*p;

	if ((p = loads("no runtime statement", "user u\n")) != NULL) {
		ok(strcmp(p->runtime, "runc") == 0 &&
		    strcmp(p->runc, DEFAULT_RUNC) == 0 &&
		    p->runtime_kind == RUNTIME_RUNC, "runc by default");
		round_trip("default runtime", p);
	}
	policy_free(p);
	if ((p = loads("the built-in crun", "runtime crun\n")) != NULL)
		ok(strcmp(p->runc, DEFAULT_CRUN) == 0 &&
		    p->runtime_kind == RUNTIME_CRUN, "crun: %s", p->runc);
	policy_free(p);
	if ((p = loads("a runtime block, and runc elsewhere",
	    "runc /opt/runc\n"
	    "runtime fast {\n\tpath \"/opt/crun 1.21\"\n\tkind crun\n}\n"
	    "runtime fast\n")) != NULL) {
		ok(strcmp(p->runc, "/opt/crun 1.21") == 0 &&
		    p->runtime_kind == RUNTIME_CRUN &&
		    strcmp(p->runtimes[0].path, "/opt/runc") == 0,
		    "runtime fast runs /opt/crun 1.21; runc is /opt/runc");
		round_trip("runtime block", p);
	}
	policy_free(p);
	if ((p = loads("a second runc: kind runc, though \"runc\" is a keyword",
	    "runtime newer {\n\tpath /opt/runc-1.3\n\tkind runc\n}\n"
	    "runtime newer\n")) != NULL) {
		ok(strcmp(p->runc, "/opt/runc-1.3") == 0 &&
		    p->runtime_kind == RUNTIME_RUNC, "runtime newer is runc "
		    "at %s", p->runc);
		round_trip("a second runc", p);
	}
	policy_free(p);
	if ((p = loads("a built-in's binary moved by a block",
	    "runtime crun {\n\tpath /opt/crun\n}\nruntime crun\n")) != NULL)
		ok(strcmp(p->runc, "/opt/crun") == 0 &&
		    p->runtime_kind == RUNTIME_CRUN, "crun at /opt/crun");
	policy_free(p);
	if ((p = loads("\"runtime\" and \"kind\" are still names",
	    "limits runtime {\n\tpids 9\n}\n"
	    "tenant kind {\n\tuid 1000\n\tlimits runtime\n}\n")) != NULL)
		ok(policy_tenant(p, "kind") != NULL, "tenant kind");
	policy_free(p);
	fails("an unknown runtime", "\nruntime gvisor\n",
	    "t.conf:2: runtime \"gvisor\": no such runtime (runc, crun, or "
	    "a runtime block)");
	if ((p = loads("gVisor, with a platform", "runtime g {\n"
	    "\tpath /opt/runsc\n\tkind runsc\n\tplatform systrap\n}\n"
	    "runtime g\n")) != NULL) {
		ok(strcmp(p->runc, "/opt/runsc") == 0 &&
		    p->runtime_kind == RUNTIME_RUNSC &&
		    strcmp(p->runtime_platform, "systrap") == 0,
		    "runtime g runs /opt/runsc on systrap");
		round_trip("runsc block", p);
	}
	policy_free(p);
	if ((p = loads("the built-in runsc", "runtime runsc\n")) != NULL)
		ok(strcmp(p->runc, DEFAULT_RUNSC) == 0 &&
		    p->runtime_kind == RUNTIME_RUNSC &&
		    p->runtime_platform[0] == '\0',
		    "runsc: %s, its own default platform", p->runc);
	policy_free(p);
	if ((p = loads("\"platform\" is still a name",
	    "tenant platform {\n\tuid 1000\n}\n")) != NULL)
		ok(policy_tenant(p, "platform") != NULL, "tenant platform");
	policy_free(p);
	fails("a platform of no gVisor", "runtime g {\n\tpath /x\n"
	    "\tkind runsc\n\tplatform hvf\n}\n",
	    "t.conf:4: platform \"hvf\": systrap, ptrace or kvm");
	fails("a platform for crun", "runtime c {\n\tpath /x\n"
	    "\tkind crun\n\tplatform kvm\n}\n",
	    "t.conf:1: runtime \"c\": a platform is for kind runsc only");
	if ((p = loads("gVisor's own network stack for egress",
	    "runtime g {\n\tpath /opt/runsc\n\tkind runsc\n"
	    "\tnetwork sandbox\n}\nruntime h {\n\tpath /opt/runsc\n"
	    "\tkind runsc\n\tnetwork host\n}\nruntime g\n")) != NULL) {
		ok(policy_runtime(p, "g")->network == RUNTIME_NET_SANDBOX &&
		    policy_runtime(p, "h")->network == RUNTIME_NET_HOST &&
		    policy_runtime(p, "runsc")->network == RUNTIME_NET_DEFAULT,
		    "g: sandbox, h: host, runsc: the default");
		round_trip("runsc network", p);
	}
	policy_free(p);
	fails("a network of no gVisor", "runtime g {\n\tpath /x\n"
	    "\tkind runsc\n\tnetwork bridge\n}\n",
	    "t.conf:4: network \"bridge\": host or sandbox");
	fails("a network twice", "runtime g {\n\tpath /x\n"
	    "\tkind runsc\n\tnetwork host\n\tnetwork sandbox\n}\n",
	    "t.conf:5: network given twice");
	fails("a network for runc", "runtime c {\n\tpath /x\n"
	    "\tkind runc\n\tnetwork host\n}\n",
	    "t.conf:1: runtime \"c\": a network is for kind runsc only");
	if ((p = loads("egress under runsc", "limits open {\n\tnetwork "
	    "egress\n}\nruntime runsc\ntenant t {\n\tuid 1000\n\tlimits "
	    "open\n}\n")) != NULL)
		ok(p->runtime_kind == RUNTIME_RUNSC, "loads");
	policy_free(p);
	if ((p = loads("egress limits no tenant uses under runsc",
	    "limits open {\n\tnetwork egress\n}\nruntime runsc\n"
	    "tenant t {\n\tuid 1000\n}\n")) != NULL)
		ok(p->runtime_kind == RUNTIME_RUNSC, "loads");
	policy_free(p);
	test_tier_runtimes();
	fails("a kind of no runtime", "runtime x {\n\tpath /x\n"
	    "\tkind docker\n}\n",
	    "t.conf:3: kind \"docker\": runc, crun or runsc\n"
	    "t.conf:1: runtime \"x\" has no kind");
	fails("a block without a path", "runtime x {\n\tkind crun\n}\n",
	    "t.conf:1: runtime \"x\" has no path");
	fails("a relative path", "runtime x {\n\tpath bin/crun\n"
	    "\tkind crun\n}\n",
	    "t.conf:2: path \"bin/crun\": not an absolute path\n"
	    "t.conf:1: runtime \"x\" has no path");
	fails("a runtime defined twice", "runtime x {\n\tpath /x\n"
	    "\tkind crun\n}\nruntime x {\n\tpath /y\n\tkind crun\n}\n",
	    "t.conf:5: runtime \"x\" defined twice");
	fails("two runtimes in use", "runtime crun\nruntime runc\n",
	    "t.conf:2: runtime given twice");
	if ((p = loads("runc named as a runtime",
	    "runtime runc {\n\tpath /opt/runc\n}\nruntime runc\n")) != NULL)
		ok(strcmp(p->runc, "/opt/runc") == 0 &&
		    p->runtime_kind == RUNTIME_RUNC, "runc at /opt/runc");
	policy_free(p);
	fails("a field given twice", "runtime x {\n\tpath /x\n"
	    "\tpath /y\n\tkind crun\n}\n",
	    "t.conf:3: path given twice");
}

int
main(void)
{
	const char	*tmp;

	if (realpath("policy/mcpd.conf", shipped) == NULL) {
		fprintf(stderr, "policy/mcpd.conf: %s (run from the top "
		    "directory)\n", strerror(errno));
		return 1;
	}
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	(void)snprintf(tmpdir, sizeof(tmpdir), "%s/test_parse.XXXXXX", tmp);
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) == -1) {
		perror(tmpdir);
		return 1;
	}
	log_init(LOG_DEST_STDERR, 0, "test");

	test_names();
	test_defaults();
	test_rich();
	test_values();
	test_added_values();
	test_local_word();
	test_metrics();
	test_oauth();
	test_share();
	test_reuse();
	test_host_name();
	test_allow_proxy();
	test_runtimes();
	test_added_errors();
	test_sandbox_settings();
	test_languages_replace_defaults();
	test_language_tools();
	test_include();
	test_shipped();
	test_resolve();
	test_syntax_errors();
	test_value_errors();
	test_duplicates();
	test_reference_errors();
	test_include_errors();
	test_garbage();
	cleanup();
	return tap_done();
}
