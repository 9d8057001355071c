/*
 * The policy once loaded: lookups, user resolution, and the canonical
 * printout that "mcpd -n -v" shows.  The parser is in parse.y.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "policy.h"
#include "util.h"

static void
free_strings(char **v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
policy_free(struct policy *p)
{
	struct listen_addr	*la;
	struct limits		*l;
	struct tenant		*t;
	struct image		*im;
	struct language		*lang;

	if (p == NULL)
		return;
	while ((la = TAILQ_FIRST(&p->listens)) != NULL) {
		TAILQ_REMOVE(&p->listens, la, entry);
		free(la);
	}
	free_strings(p->allow_hosts, p->nallow_hosts);
	free_strings(p->allow_origins, p->nallow_origins);
	free_strings(p->allow_proxies, p->nallow_proxies);
	if (p->metrics_tokens != NULL)
		sodium_memzero(p->metrics_tokens, p->nmetrics_tokens *
		    sizeof(*p->metrics_tokens));
	free(p->metrics_tokens);
	free_strings(p->metrics_tenants, p->nmetrics_tenants);
	while ((l = TAILQ_FIRST(&p->limits)) != NULL) {
		TAILQ_REMOVE(&p->limits, l, entry);
		free(l);
	}
	while ((t = TAILQ_FIRST(&p->tenants)) != NULL) {
		TAILQ_REMOVE(&p->tenants, t, entry);
		/* Hashes, not tokens, but there is no reason to leave them. */
		if (t->tokens != NULL)
			sodium_memzero(t->tokens,
			    t->ntokens * sizeof(*t->tokens));
		free(t->tokens);
		free(t->uids);
		free(t->claims);
		free(t->paths);
		free(t);
	}
	free_strings(p->oauth.scopes, p->oauth.nscopes);
	while ((im = TAILQ_FIRST(&p->images)) != NULL) {
		TAILQ_REMOVE(&p->images, im, entry);
		free(im);
	}
	while ((lang = TAILQ_FIRST(&p->languages)) != NULL) {
		TAILQ_REMOVE(&p->languages, lang, entry);
		free_strings(lang->aliases, lang->naliases);
		free(lang->build);
		free(lang->run);
		free(lang->version);
		free(lang);
	}
	free(p);
}

/*
 * Users and groups.
 */

static int
resolve_user(const struct policy *p, const char *name, uid_t *uid,
    gid_t *gid)
{
	if (user_lookup(name, uid, gid) == -1) {
		log_warnx("%s: user \"%s\" does not exist", p->path, name);
		return -1;
	}
	return 0;
}

int
policy_resolve(struct policy *p, int which)
{
	struct tenant	*t;
	gid_t		 gid;
	size_t		 i;
	int		 rv = 0;

	if (which & POLICY_RESOLVE_MCPD) {
		if (resolve_user(p, p->user, &p->uid, &p->gid) == -1)
			rv = -1;
		else if (p->group[0] == '\0')
			p->group_gid = p->gid;
		else if (group_lookup(p->group, &p->group_gid) == -1) {
			log_warnx("%s: group \"%s\" does not exist", p->path,
			    p->group);
			rv = -1;
		}
	}
	if (which & POLICY_RESOLVE_AUDIT)
		if (resolve_user(p, p->audit.user, &p->audit.uid,
		    &p->audit.gid) == -1)
			rv = -1;
	if (which & POLICY_RESOLVE_TENANTS)
		TAILQ_FOREACH(t, &p->tenants, entry)
			for (i = 0; i < t->nuids; i++)
				if (resolve_user(p, t->uids[i].name,
				    &t->uids[i].uid, &gid) == -1)
					rv = -1;
	return rv;
}

/*
 * Lookups.
 */

struct limits *
policy_limits(const struct policy *p, const char *name)
{
	struct limits	*l;

	TAILQ_FOREACH(l, &p->limits, entry)
		if (!l->gone && strcmp(l->name, name) == 0)
			return l;
	return NULL;
}

struct image *
policy_image(const struct policy *p, const char *name)
{
	struct image	*im;

	TAILQ_FOREACH(im, &p->images, entry)
		if (strcmp(im->name, name) == 0)
			return im;
	return NULL;
}

/* By name or by alias: the parser keeps them all distinct. */
struct language *
policy_language(const struct policy *p, const char *name)
{
	struct language	*l;
	size_t		 i;

	TAILQ_FOREACH(l, &p->languages, entry) {
		if (strcmp(l->name, name) == 0)
			return l;
		for (i = 0; i < l->naliases; i++)
			if (strcmp(l->aliases[i], name) == 0)
				return l;
	}
	return NULL;
}

/*
 * The languages a configuration without any gets, each on the host image
 * (a Debian system's /usr): list_languages shows those whose tools are
 * installed there.  TypeScript is type-checked by tsc; without Node's type
 * declarations, which Debian does not package, its globals are declared
 * loosely first.
 */
#define TS_NODE_DECLS \
	"printf 'declare var process: any, require: any, module: any, " \
	"exports: any, __dirname: string, __filename: string; " \
	"declare module \"*\";\\n' " \
	"> /tmp/node-globals.d.ts && "

static const struct {
	const char	*name;
	const char	*aliases[3];
	const char	*file;
	const char	*build;
	const char	*run;
	const char	*version;
} default_languages[] = {
	{ "python", { "py", "python3" }, "main.py", NULL, "python3 main.py",
	    "python3 --version" },
	{ "javascript", { "js", "node", "nodejs" }, "main.js", NULL,
	    "node main.js", "node --version" },
	{ "typescript", { "ts" }, "main.ts", TS_NODE_DECLS "tsc --target "
	    "es2020 --module commonjs --outDir . main.ts "
	    "/tmp/node-globals.d.ts", "node main.js", "tsc --version" },
	{ "sh", { "shell" }, "main.sh", NULL, "sh main.sh", NULL },
	{ "bash", { NULL }, "main.sh", NULL, "bash main.sh",
	    "bash --version" },
	{ "c", { NULL }, "main.c", "cc -O2 -o main main.c -lm", "./main",
	    "cc --version" },
	{ "cpp", { "c++", "cxx" }, "main.cpp", "c++ -O2 -o main main.cpp",
	    "./main", "c++ --version" },
	{ "go", { "golang" }, "main.go", "go build -o main main.go", "./main",
	    "go version" },
	{ "rust", { "rs" }, "main.rs", "rustc -O -o main main.rs", "./main",
	    "rustc --version" },
	{ "java", { NULL }, "Main.java", "javac Main.java", "java Main",
	    "javac -version" },
	{ "ruby", { "rb" }, "main.rb", NULL, "ruby main.rb",
	    "ruby --version" },
	{ "perl", { "pl" }, "main.pl", NULL, "perl main.pl",
	    "perl --version" },
	{ "php", { NULL }, "main.php", NULL, "php main.php", "php --version" },
};

/* The first word of a command, if it names a program to look up. */
static int
policy_cmd_tool(const char *cmd, char *tool, size_t len)
{
	size_t	 n;

	cmd += strspn(cmd, " \t");
	n = strcspn(cmd, " \t;&|()<>");
	if (n == 0 || n >= len || memchr(cmd, '/', n) != NULL ||
	    memchr(cmd, '=', n) != NULL)
		return 0;
	memcpy(tool, cmd, n);
	tool[n] = '\0';
	return 1;
}

size_t
policy_language_tools(const struct language *l,
    char tools[][POLICY_NAME_MAX], size_t max)
{
	const char	*cmds[2];
	size_t		 i, n = 0;

	cmds[0] = l->version != NULL ? l->version : l->build;
	cmds[1] = l->run;
	for (i = 0; i < 2 && n < max; i++)
		if (cmds[i] != NULL &&
		    policy_cmd_tool(cmds[i], tools[n], POLICY_NAME_MAX) &&
		    (n == 0 || strcmp(tools[0], tools[n]) != 0))
			n++;
	return n;
}

void
policy_default_languages(struct policy *p)
{
	struct language	*l;
	size_t		 i, j;

	for (i = 0; i < nitems(default_languages); i++) {
		l = xcalloc(1, sizeof(*l));
		(void)str_copy(l->name, default_languages[i].name,
		    sizeof(l->name));
		for (j = 0; j < 3 && default_languages[i].aliases[j]; j++) {
			l->aliases = xreallocarray(l->aliases, l->naliases + 1,
			    sizeof(*l->aliases));
			l->aliases[l->naliases++] =
			    xstrdup(default_languages[i].aliases[j]);
		}
		(void)str_copy(l->file, default_languages[i].file,
		    sizeof(l->file));
		if (default_languages[i].build != NULL)
			l->build = xstrdup(default_languages[i].build);
		l->run = xstrdup(default_languages[i].run);
		if (default_languages[i].version != NULL)
			l->version = xstrdup(default_languages[i].version);
		(void)str_copy(l->image, HOST_IMAGE, sizeof(l->image));
		TAILQ_INSERT_TAIL(&p->languages, l, entry);
	}
}

struct tenant *
policy_tenant(const struct policy *p, const char *name)
{
	struct tenant	*t;

	TAILQ_FOREACH(t, &p->tenants, entry)
		if (!t->gone && strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

/* Unresolved uids are (uid_t)-1 and match nothing. */
struct tenant *
policy_tenant_by_uid(const struct policy *p, uid_t uid)
{
	struct tenant	*t;
	size_t		 i;

	if (uid == (uid_t)-1)
		return NULL;
	TAILQ_FOREACH(t, &p->tenants, entry)
		for (i = 0; i < t->nuids; i++)
			if (t->uids[i].uid == uid)
				return t;
	return NULL;
}

/*
 * Every token of every tenant is compared and the match is picked without
 * a branch, so the time taken says nothing about which tenant, if any, a
 * presented token belongs to.
 */
struct tenant *
policy_tenant_by_token(const struct policy *p,
    const uint8_t hash[POLICY_TOKEN_HASH_LEN])
{
	struct tenant	*t;
	uintptr_t	 found = 0, mask;
	size_t		 i;

	TAILQ_FOREACH(t, &p->tenants, entry)
		for (i = 0; i < t->ntokens; i++) {
			mask = (uintptr_t)0 - (uintptr_t)(sodium_memcmp(
			    t->tokens[i], hash, POLICY_TOKEN_HASH_LEN) == 0);
			found = (found & ~mask) | ((uintptr_t)t & mask);
		}
	return (struct tenant *)found;
}

int
policy_metrics_token(const struct policy *p,
    const uint8_t hash[POLICY_TOKEN_HASH_LEN])
{
	size_t	 i;
	int	 found = 0;

	for (i = 0; i < p->nmetrics_tokens; i++)
		found |= sodium_memcmp(p->metrics_tokens[i], hash,
		    POLICY_TOKEN_HASH_LEN) == 0;
	return found;
}

/* By name: a tenant a reload removed is no longer found by it. */
int
policy_metrics_tenant(const struct policy *p, const struct tenant *t)
{
	size_t	 i;

	if (t == NULL || t->gone)
		return 0;
	for (i = 0; i < p->nmetrics_tenants; i++)
		if (strcmp(p->metrics_tenants[i], t->name) == 0)
			return 1;
	return 0;
}

/*
 * The canonical printout.  Every value is written in a form the lexer
 * reads back to the same bits: strings quoted, sizes and durations in the
 * largest unit that divides them exactly.
 */

static void
dump_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static void
dump_kv(FILE *fp, const char *indent, const char *key, const char *val)
{
	fprintf(fp, "%s%s ", indent, key);
	dump_string(fp, val);
	fputc('\n', fp);
}

static void
fmt_size(char *buf, size_t size, uint64_t v)
{
	static const char	 units[] = "TGMK";
	unsigned int		 shift;
	size_t			 i;

	for (i = 0, shift = 40; i < sizeof(units) - 1; i++, shift -= 10)
		if (v != 0 && v % (1ULL << shift) == 0) {
			(void)snprintf(buf, size, "%llu%c",
			    (unsigned long long)(v >> shift), units[i]);
			return;
		}
	(void)snprintf(buf, size, "%llu", (unsigned long long)v);
}

#define MS_MINUTE	(60ULL * 1000)
#define MS_HOUR		(60ULL * MS_MINUTE)

static void
fmt_duration(char *buf, size_t size, uint64_t ms)
{
	if (ms != 0 && ms % MS_HOUR == 0)
		(void)snprintf(buf, size, "%lluh",
		    (unsigned long long)(ms / MS_HOUR));
	else if (ms != 0 && ms % MS_MINUTE == 0)
		(void)snprintf(buf, size, "%llum",
		    (unsigned long long)(ms / MS_MINUTE));
	else if (ms % 1000 == 0)
		(void)snprintf(buf, size, "%llus",
		    (unsigned long long)(ms / 1000));
	else
		(void)snprintf(buf, size, "%llums", (unsigned long long)ms);
}

static void
fmt_cpus(char *buf, size_t size, uint32_t milli)
{
	size_t	 len;

	if (milli % 1000 == 0) {
		(void)snprintf(buf, size, "%u", milli / 1000);
		return;
	}
	(void)snprintf(buf, size, "%u.%03u", milli / 1000, milli % 1000);
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
}

const char *
policy_runtime_kind(enum runtime_kind kind)
{
	switch (kind) {
	case RUNTIME_CRUN:
		return "crun";
	case RUNTIME_RUNSC:
		return "runsc";
	default:
		return "runc";
	}
}

/* The runtime of that name, built-in or a block's; NULL if none. */
const struct runtime *
policy_runtime(const struct policy *p, const char *name)
{
	size_t	 i;

	for (i = 0; i < p->nruntimes; i++)
		if (strcmp(p->runtimes[i].name, name) == 0)
			return &p->runtimes[i];
	return NULL;
}

/*
 * The runtime a tenant's sandbox of an image runs under: the tenant's if
 * it names one (whom to trust is the tenant's matter, never undone by an
 * image), else the image's, else the file's.  NULL when the name is one
 * this policy lacks (a reload that named a new runtime block).
 */
const struct runtime *
policy_runtime_for(const struct policy *p, const struct tenant *t,
    const char *image)
{
	const struct image	*im;

	if (t != NULL && t->runtime[0] != '\0')
		return policy_runtime(p, t->runtime);
	if (image != NULL && (im = policy_image(p, image)) != NULL &&
	    im->runtime[0] != '\0')
		return policy_runtime(p, im->runtime);
	return policy_runtime(p, p->runtime);
}

/* Which runtimes the file names: globally, for a tenant, for an image. */
void
policy_runtimes_used(const struct policy *p, int used[POLICY_RUNTIMES_MAX])
{
	const struct tenant	*t;
	const struct image	*im;
	const struct runtime	*rt;
	size_t			 i;

	for (i = 0; i < POLICY_RUNTIMES_MAX; i++)
		used[i] = 0;
	if ((rt = policy_runtime(p, p->runtime)) != NULL)
		used[rt - p->runtimes] = 1;
	TAILQ_FOREACH(t, &p->tenants, entry)
		if (t->runtime[0] != '\0' &&
		    (rt = policy_runtime(p, t->runtime)) != NULL)
			used[rt - p->runtimes] = 1;
	TAILQ_FOREACH(im, &p->images, entry)
		if (im->runtime[0] != '\0' &&
		    (rt = policy_runtime(p, im->runtime)) != NULL)
			used[rt - p->runtimes] = 1;
}

/*
 * Each runtime the file uses or defines whose binary cannot be run:
 * fn(runtime, errno, arg) for it.  How many.
 */
int
policy_runtimes_check(const struct policy *p,
    void (*fn)(const struct runtime *, int, void *), void *arg)
{
	int	 used[POLICY_RUNTIMES_MAX], n = 0;
	size_t	 i;

	policy_runtimes_used(p, used);
	for (i = 0; i < p->nruntimes; i++)
		if ((used[i] || p->runtimes[i].defined) &&
		    access(p->runtimes[i].path, X_OK) == -1) {
			fn(&p->runtimes[i], errno, arg);
			n++;
		}
	return n;
}

static void
dump_global(FILE *fp, const struct policy *p)
{
	size_t	 i;

	dump_kv(fp, "", "user", p->user);
	if (p->group[0] != '\0')
		dump_kv(fp, "", "group", p->group);
	else
		fprintf(fp, "# group: the primary group of the user\n");
	dump_kv(fp, "", "run directory", p->run_dir);
	dump_kv(fp, "", "state directory", p->state_dir);
	dump_kv(fp, "", "runc", p->runtimes[0].path);
	for (i = 1; i < p->nruntimes; i++) {
		fprintf(fp, "runtime ");
		dump_string(fp, p->runtimes[i].name);
		fprintf(fp, " {\n");
		dump_kv(fp, "\t", "path", p->runtimes[i].path);
		fprintf(fp, "\tkind %s\n",
		    policy_runtime_kind(p->runtimes[i].kind));
		if (p->runtimes[i].platform[0] != '\0')
			fprintf(fp, "\tplatform %s\n", p->runtimes[i].platform);
		if (p->runtimes[i].network != RUNTIME_NET_DEFAULT)
			fprintf(fp, "\tnetwork %s\n", p->runtimes[i].network ==
			    RUNTIME_NET_SANDBOX ? "sandbox" : "host");
		fprintf(fp, "}\n");
	}
	dump_kv(fp, "", "runtime", p->runtime);
	fprintf(fp, "# runs %s\n", p->runc);
	dump_kv(fp, "", "sandbox-init", p->sandbox_init);
	dump_kv(fp, "", "sandbox socket", p->sandbox_socket);
	fprintf(fp, "sandbox uids %u %u\n", p->uid_base, p->uid_slots);
	if (p->host_name[0] != '\0')
		fprintf(fp, "host name %s\n", p->host_name);
}

static void
dump_listens(FILE *fp, const struct policy *p)
{
	struct listen_addr	*la;

	if (TAILQ_EMPTY(&p->listens))
		return;
	fputc('\n', fp);
	TAILQ_FOREACH(la, &p->listens, entry) {
		fprintf(fp, "listen on ");
		if (la->type == LISTEN_TCP) {
			dump_string(fp, la->host);
			fprintf(fp, " port %u", la->port);
		} else {
			fprintf(fp, "unix ");
			dump_string(fp, la->path);
			fprintf(fp, " mode %04o", (unsigned int)la->mode);
		}
		if (la->tenant[0] != '\0') {
			fprintf(fp, " tenant ");
			dump_string(fp, la->tenant);
		}
		if (la->tls)
			fprintf(fp, " tls");
		else if (la->plaintext)
			fprintf(fp, " plaintext");
		fputc('\n', fp);
	}
	if (p->tls_cert[0] != '\0') {
		fprintf(fp, "tls certificate ");
		dump_string(fp, p->tls_cert);
		fputc('\n', fp);
	}
	if (p->tls_key[0] != '\0') {
		fprintf(fp, "tls key ");
		dump_string(fp, p->tls_key);
		fputc('\n', fp);
	}
}

static void
dump_allow(FILE *fp, const struct policy *p)
{
	size_t	 i;

	if (p->nallow_hosts == 0 && p->nallow_origins == 0 &&
	    p->nallow_proxies == 0)
		return;
	fputc('\n', fp);
	for (i = 0; i < p->nallow_hosts; i++)
		dump_kv(fp, "", "allow host", p->allow_hosts[i]);
	for (i = 0; i < p->nallow_origins; i++)
		dump_kv(fp, "", "allow origin", p->allow_origins[i]);
	for (i = 0; i < p->nallow_proxies; i++)
		dump_kv(fp, "", "allow proxy", p->allow_proxies[i]);
}

/*
 * A field the file left out is shown as a comment, so that the printout
 * inherits from "default" exactly as the original did.
 */
static void
dump_field(FILE *fp, const struct limits *l, uint32_t bit, const char *key,
    const char *val)
{
	if (l->set & bit)
		fprintf(fp, "\t%s %s\n", key, val);
	else
		fprintf(fp, "\t# %s %s\t(%s)\n", key, val,
		    strcmp(l->name, "default") == 0 ? "built in" :
		    "from \"default\"");
}

static void
dump_limits(FILE *fp, const struct policy *p)
{
	struct limits	*l;
	char		 buf[32];

	TAILQ_FOREACH(l, &p->limits, entry) {
		if (l->gone)
			continue;
		fprintf(fp, "\nlimits ");
		dump_string(fp, l->name);
		fprintf(fp, " {\n");
		fmt_size(buf, sizeof(buf), l->memory);
		dump_field(fp, l, LIMIT_MEMORY, "memory", buf);
		fmt_cpus(buf, sizeof(buf), l->cpus);
		dump_field(fp, l, LIMIT_CPUS, "cpus", buf);
		(void)snprintf(buf, sizeof(buf), "%u", l->pids);
		dump_field(fp, l, LIMIT_PIDS, "pids", buf);
		fmt_duration(buf, sizeof(buf), l->timeout);
		dump_field(fp, l, LIMIT_TIMEOUT, "timeout", buf);
		fmt_size(buf, sizeof(buf), l->output);
		dump_field(fp, l, LIMIT_OUTPUT, "output", buf);
		fmt_size(buf, sizeof(buf), l->disk);
		dump_field(fp, l, LIMIT_DISK, "disk", buf);
		dump_field(fp, l, LIMIT_NETWORK, "network",
		    l->network == NET_EGRESS ? "egress" : "none");
		fmt_duration(buf, sizeof(buf), l->idle);
		dump_field(fp, l, LIMIT_IDLE, "idle", buf);
		fmt_duration(buf, sizeof(buf), l->lifetime);
		dump_field(fp, l, LIMIT_LIFETIME, "lifetime", buf);
		fprintf(fp, "}\n");
	}
}

static void
dump_images(FILE *fp, const struct policy *p)
{
	char		 buf[32];
	struct image	*im;

	fputc('\n', fp);
	TAILQ_FOREACH(im, &p->images, entry) {
		fprintf(fp, "image ");
		dump_string(fp, im->name);
		if (im->type == IMAGE_ROOTFS) {
			fprintf(fp, " rootfs ");
			dump_string(fp, im->path);
		} else
			fprintf(fp, " host");
		fprintf(fp, " pool %u", im->pool);
		if (im->pool_idle == 0)
			fprintf(fp, " idle never");
		else if (im->pool_idle != DEFAULT_POOL_IDLE) {
			fmt_duration(buf, sizeof(buf), im->pool_idle);
			fprintf(fp, " idle %s", buf);
		}
		if (im->runtime[0] != '\0') {
			fprintf(fp, " runtime ");
			dump_string(fp, im->runtime);
		}
		fprintf(fp, "\n");
	}
}

/* The share statements left out at their defaults, as max requests. */
static void
dump_share(FILE *fp, const struct policy *p)
{
	char	 buf[32];

	if (p->share_url[0] == '\0' && p->share_expiry == DEFAULT_SHARE_EXPIRY)
		return;
	fputc('\n', fp);
	if (p->share_url[0] != '\0')
		dump_kv(fp, "", "share url", p->share_url);
	if (p->share_expiry != DEFAULT_SHARE_EXPIRY) {
		fmt_duration(buf, sizeof(buf), p->share_expiry * 1000);
		fprintf(fp, "share expiry %s\n", buf);
	}
}

static void
dump_tenant_share(FILE *fp, const struct tenant *t)
{
	char	 buf[32];

	if (t->share_expiry_max != DEFAULT_SHARE_EXPIRY_MAX) {
		fmt_duration(buf, sizeof(buf), t->share_expiry_max * 1000);
		fprintf(fp, "\tshare max expiry %s\n", buf);
	}
	if (t->share_downloads != DEFAULT_SHARE_DOWNLOADS)
		fprintf(fp, "\tshare downloads %u\n", t->share_downloads);
	if (t->share_rate == 0)
		fprintf(fp, "\tshare rate none\n");
	else if (t->share_rate != DEFAULT_SHARE_RATE) {
		fmt_size(buf, sizeof(buf), t->share_rate);
		fprintf(fp, "\tshare rate %s\n", buf);
	}
	if (t->reuse)
		fprintf(fp, "\treuse yes\n");
}

static void
dump_tenants(FILE *fp, const struct policy *p)
{
	struct tenant	*t;
	size_t		 i, j;

	TAILQ_FOREACH(t, &p->tenants, entry) {
		if (t->gone)
			continue;
		fprintf(fp, "\ntenant ");
		dump_string(fp, t->name);
		fprintf(fp, " {\n");
		for (i = 0; i < t->ntokens; i++) {
			fprintf(fp, "\ttoken \"sha256:");
			for (j = 0; j < POLICY_TOKEN_HASH_LEN; j++)
				fprintf(fp, "%02x", t->tokens[i][j]);
			fprintf(fp, "\"\n");
		}
		for (i = 0; i < t->nuids; i++)
			dump_kv(fp, "\t", "uid", t->uids[i].name);
		for (i = 0; i < t->nclaims; i++) {
			fprintf(fp, "\tclaim ");
			dump_string(fp, t->claims[i].name);
			if (t->claims[i].any)
				fprintf(fp, " any");
			else {
				fputc(' ', fp);
				dump_string(fp, t->claims[i].value);
			}
			fputc('\n', fp);
		}
		dump_kv(fp, "\t", "limits", t->limits_name);
		if (t->runtime[0] != '\0')
			dump_kv(fp, "\t", "runtime", t->runtime);
		fprintf(fp, "\tmax sandboxes %u\n", t->max_sandboxes);
		/* Left out at its default: dumps of older files stay the same. */
		if (t->max_requests != DEFAULT_MAX_REQUESTS)
			fprintf(fp, "\tmax requests %u\n", t->max_requests);
		dump_tenant_share(fp, t);
		for (i = 0; i < t->npaths; i++) {
			fprintf(fp, "\tlocal path ");
			dump_string(fp, t->paths[i].path);
			fprintf(fp, "%s\n", t->paths[i].readonly ?
			    " read-only" : "");
		}
		fprintf(fp, "}\n");
	}
}

static void
dump_oauth(FILE *fp, const struct policy *p)
{
	const struct oauth_conf	*o = &p->oauth;
	char			 buf[32];
	size_t			 i;

	if (!o->enabled)
		return;
	fprintf(fp, "\noauth {\n");
	dump_kv(fp, "\t", "issuer", o->issuer);
	dump_kv(fp, "\t", "audience", o->audience);
	if (o->jwks[0] != '\0')
		dump_kv(fp, "\t", "jwks", o->jwks);
	for (i = 0; i < o->nscopes; i++)
		dump_kv(fp, "\t", "scope", o->scopes[i]);
	fmt_duration(buf, sizeof(buf), o->leeway);
	fprintf(fp, "\tleeway %s\n", buf);
	if (o->type[0] == '\0')
		fprintf(fp, "\ttoken type any\n");
	else
		dump_kv(fp, "\t", "token type", o->type);
	fprintf(fp, "}\n");
}

static void
dump_metrics(FILE *fp, const struct policy *p)
{
	size_t	 i, j;

	if (p->nmetrics_tokens == 0 && p->nmetrics_tenants == 0)
		return;
	fputc('\n', fp);
	for (i = 0; i < p->nmetrics_tokens; i++) {
		fprintf(fp, "metrics token \"sha256:");
		for (j = 0; j < POLICY_TOKEN_HASH_LEN; j++)
			fprintf(fp, "%02x", p->metrics_tokens[i][j]);
		fprintf(fp, "\"\n");
	}
	for (i = 0; i < p->nmetrics_tenants; i++)
		dump_kv(fp, "", "metrics tenant", p->metrics_tenants[i]);
}

static void
dump_languages(FILE *fp, const struct policy *p)
{
	struct language	*l;
	size_t		 i;

	TAILQ_FOREACH(l, &p->languages, entry) {
		fprintf(fp, "\nlanguage ");
		dump_string(fp, l->name);
		fprintf(fp, " {\n");
		for (i = 0; i < l->naliases; i++)
			dump_kv(fp, "\t", "alias", l->aliases[i]);
		dump_kv(fp, "\t", "file", l->file);
		if (l->build != NULL)
			dump_kv(fp, "\t", "build", l->build);
		if (l->run != NULL)
			dump_kv(fp, "\t", "run", l->run);
		dump_kv(fp, "\t", "image", l->image);
		if (l->version != NULL)
			dump_kv(fp, "\t", "version", l->version);
		fprintf(fp, "}\n");
	}
}

static void
dump_audit(FILE *fp, const struct policy *p)
{
	fprintf(fp, "\naudit {\n\trequired %s\n",
	    p->audit.required ? "yes" : "no");
	dump_kv(fp, "\t", "socket", p->audit.socket);
	dump_kv(fp, "\t", "database", p->audit.database);
	dump_kv(fp, "\t", "user", p->audit.user);
	if (p->audit.excerpt != DEFAULT_AUDIT_EXCERPT)
		fprintf(fp, "\texcerpt %u\n", p->audit.excerpt);
	fprintf(fp, "}\n");
}

void
policy_dump(FILE *fp, const struct policy *p)
{
	dump_global(fp, p);
	dump_listens(fp, p);
	dump_allow(fp, p);
	dump_share(fp, p);
	dump_limits(fp, p);
	dump_images(fp, p);
	dump_oauth(fp, p);
	dump_tenants(fp, p);
	dump_metrics(fp, p);
	dump_languages(fp, p);
	dump_audit(fp, p);
}
