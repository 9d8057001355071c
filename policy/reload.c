/*
 * The policy loaded again on SIGHUP, merged into the running one.
 *
 * As bgpd merges a new configuration into the old, the running policy is
 * updated in place and never replaced: mcpd's sessions and listeners,
 * sandboxd's jobs and the access checks hold pointers to its tenants and
 * limits.  A tenant or limits block the new file drops stays in its list,
 * emptied and marked gone, so that no pointer dangles and no lookup finds
 * it; one the file brings back later is the same object again.
 *
 * What a daemon set up at start from the file (sockets, users,
 * directories, images, the audit settings) cannot follow: a change there
 * is logged as needing a restart and the old value stays.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "log.h"
#include "policy.h"
#include "util.h"

#define POLICY_ALL	(POLICY_MCPD | POLICY_SANDBOXD | POLICY_AUDITD)

/*
 * Users.
 */

/* The name's uid in cur, resolved when the daemon started. */
static int
known_uid(const struct policy *cur, const char *name, uid_t *uid)
{
	const struct tenant	*t;
	size_t			 i;

	TAILQ_FOREACH(t, &cur->tenants, entry)
		for (i = 0; i < t->nuids; i++)
			if (t->uids[i].uid != (uid_t)-1 &&
			    strcmp(t->uids[i].name, name) == 0) {
				*uid = t->uids[i].uid;
				return 0;
			}
	return -1;
}

/* The passwd file read as a file: no name service module is loaded. */
static int
passwd_uid(FILE *fp, const char *name, uid_t *uid)
{
	struct passwd	*pw;

	if (fp == NULL)
		return -1;
	rewind(fp);
	while ((pw = fgetpwent(fp)) != NULL)
		if (strcmp(pw->pw_name, name) == 0) {
			*uid = pw->pw_uid;
			return 0;
		}
	return -1;
}

int
policy_resolve_reload(struct policy *next, const struct policy *cur,
    const char *passwd)
{
	struct tenant_uid	*u;
	struct tenant		*t;
	FILE			*fp;
	uint64_t		 n;
	size_t			 i;
	int			 rv = 0;

	if ((fp = fopen(passwd, "re")) == NULL)
		log_warnx("%s: %s", passwd, strerror(errno));
	TAILQ_FOREACH(t, &next->tenants, entry)
		for (i = 0; i < t->nuids; i++) {
			u = &t->uids[i];
			if (passwd_uid(fp, u->name, &u->uid) == 0 ||
			    known_uid(cur, u->name, &u->uid) == 0)
				continue;
			if (str_to_u64(u->name, 0, UINT32_MAX - 1, &n) ==
			    NULL) {
				u->uid = (uid_t)n;
				continue;
			}
			log_warnx("%s: tenant \"%s\": user \"%s\" is not in %s "
			    "(a reload looks nowhere else: restart to use a "
			    "user of another name service)", next->path,
			    t->name, u->name, passwd);
			rv = -1;
		}
	if (fp != NULL)
		fclose(fp);
	return rv;
}

/*
 * Limits.
 */

static struct limits *
limits_any(const struct policy *p, const char *name)
{
	struct limits	*l;

	TAILQ_FOREACH(l, &p->limits, entry)
		if (strcmp(l->name, name) == 0)
			return l;
	return NULL;
}

static int
limits_same(const struct limits *a, const struct limits *b)
{
	return a->memory == b->memory && a->cpus == b->cpus &&
	    a->pids == b->pids && a->timeout == b->timeout &&
	    a->output == b->output && a->disk == b->disk &&
	    a->network == b->network && a->idle == b->idle &&
	    a->lifetime == b->lifetime;
}

static void
limits_set(struct limits *l, const struct limits *from)
{
	l->memory = from->memory;
	l->cpus = from->cpus;
	l->pids = from->pids;
	l->timeout = from->timeout;
	l->output = from->output;
	l->disk = from->disk;
	l->network = from->network;
	l->idle = from->idle;
	l->lifetime = from->lifetime;
	l->set = from->set;
	l->gone = 0;
}

/* Jobs and sandboxes copy their limits: the blocks change under nobody. */
static void
reload_limits(struct policy *cur, struct policy *next,
    struct policy_changes *ch)
{
	struct limits	*l, *nl, *tmp;

	TAILQ_FOREACH(l, &cur->limits, entry)
		if (!l->gone && policy_limits(next, l->name) == NULL) {
			log_info("limits \"%s\" removed", l->name);
			l->gone = 1;
			ch->limits_removed++;
		}
	TAILQ_FOREACH_SAFE(nl, &next->limits, entry, tmp) {
		if ((l = limits_any(cur, nl->name)) == NULL) {
			TAILQ_REMOVE(&next->limits, nl, entry);
			TAILQ_INSERT_TAIL(&cur->limits, nl, entry);
			log_info("limits \"%s\" added", nl->name);
			ch->limits_added++;
			continue;
		}
		if (l->gone) {
			log_info("limits \"%s\" added", l->name);
			ch->limits_added++;
		} else if (!limits_same(l, nl)) {
			log_info("limits \"%s\" changed", l->name);
			ch->limits_changed++;
		}
		limits_set(l, nl);
	}
}

/*
 * Tenants.
 */

static struct tenant *
tenant_any(const struct policy *p, const char *name)
{
	struct tenant	*t;

	TAILQ_FOREACH(t, &p->tenants, entry)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

static int
tenant_same(const struct tenant *a, const struct tenant *b)
{
	size_t	 i;

	if (a->ntokens != b->ntokens || a->nuids != b->nuids ||
	    a->nclaims != b->nclaims ||
	    a->npaths != b->npaths || a->max_sandboxes != b->max_sandboxes ||
	    a->max_requests != b->max_requests ||
	    a->share_expiry_max != b->share_expiry_max ||
	    a->share_downloads != b->share_downloads ||
	    a->share_rate != b->share_rate || a->reuse != b->reuse ||
	    strcmp(a->limits_name, b->limits_name) != 0 ||
	    strcmp(a->runtime, b->runtime) != 0)
		return 0;
	if (a->ntokens > 0 && memcmp(a->tokens, b->tokens, a->ntokens *
	    sizeof(*a->tokens)) != 0)
		return 0;
	for (i = 0; i < a->nuids; i++)
		if (a->uids[i].uid != b->uids[i].uid ||
		    strcmp(a->uids[i].name, b->uids[i].name) != 0)
			return 0;
	for (i = 0; i < a->nclaims; i++)
		if (a->claims[i].any != b->claims[i].any ||
		    strcmp(a->claims[i].name, b->claims[i].name) != 0 ||
		    strcmp(a->claims[i].value, b->claims[i].value) != 0)
			return 0;
	for (i = 0; i < a->npaths; i++)
		if (a->paths[i].readonly != b->paths[i].readonly ||
		    strcmp(a->paths[i].path, b->paths[i].path) != 0)
			return 0;
	return 1;
}

/*
 * The arrays are swapped, not copied: next takes the old ones, and
 * policy_free() wipes the old token hashes with it.
 */
#define SWAP(a, b) do {							\
	__typeof__(a) swap_tmp = (a);					\
	(a) = (b);							\
	(b) = swap_tmp;							\
} while (0)

static void
tenant_take(struct policy *cur, struct tenant *t, struct tenant *nt)
{
	SWAP(t->tokens, nt->tokens);
	SWAP(t->ntokens, nt->ntokens);
	SWAP(t->uids, nt->uids);
	SWAP(t->nuids, nt->nuids);
	SWAP(t->claims, nt->claims);
	SWAP(t->nclaims, nt->nclaims);
	SWAP(t->paths, nt->paths);
	SWAP(t->npaths, nt->npaths);
	memcpy(t->limits_name, nt->limits_name, sizeof(t->limits_name));
	t->limits = policy_limits(cur, t->limits_name);
	memcpy(t->runtime, nt->runtime, sizeof(t->runtime));
	t->max_sandboxes = nt->max_sandboxes;
	t->max_requests = nt->max_requests;
	t->share_expiry_max = nt->share_expiry_max;
	t->share_downloads = nt->share_downloads;
	t->share_rate = nt->share_rate;
	t->reuse = nt->reuse;
	t->gone = 0;
}

/* Nothing left to authenticate with or be found by. */
static void
tenant_retire(struct tenant *t)
{
	if (t->tokens != NULL)
		sodium_memzero(t->tokens, t->ntokens * sizeof(*t->tokens));
	free(t->tokens);
	free(t->uids);
	free(t->claims);
	free(t->paths);
	t->tokens = NULL;
	t->uids = NULL;
	t->claims = NULL;
	t->paths = NULL;
	t->ntokens = t->nuids = t->nclaims = t->npaths = 0;
	t->gone = 1;
}

/* After the limits: a tenant's limits are found among cur's. */
static void
reload_tenants(struct policy *cur, struct policy *next,
    struct policy_changes *ch)
{
	struct tenant	*t, *nt, *tmp;

	TAILQ_FOREACH(t, &cur->tenants, entry)
		if (!t->gone && policy_tenant(next, t->name) == NULL) {
			log_info("tenant \"%s\" removed", t->name);
			tenant_retire(t);
			ch->tenants_removed++;
		}
	TAILQ_FOREACH_SAFE(nt, &next->tenants, entry, tmp) {
		if ((t = tenant_any(cur, nt->name)) == NULL) {
			TAILQ_REMOVE(&next->tenants, nt, entry);
			TAILQ_INSERT_TAIL(&cur->tenants, nt, entry);
			nt->limits = policy_limits(cur, nt->limits_name);
			log_info("tenant \"%s\" added", nt->name);
			ch->tenants_added++;
			continue;
		}
		if (t->gone) {
			log_info("tenant \"%s\" added", t->name);
			ch->tenants_added++;
		} else if (!tenant_same(t, nt)) {
			log_info("tenant \"%s\" changed", t->name);
			ch->tenants_changed++;
		}
		tenant_take(cur, t, nt);
	}
}

/*
 * The allow lists are read on each request, never kept.
 */

static int
strings_same(char **a, size_t na, char **b, size_t nb)
{
	size_t	 i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

static void
reload_allow(struct policy *cur, struct policy *next,
    struct policy_changes *ch)
{
	if (strings_same(cur->allow_hosts, cur->nallow_hosts,
	    next->allow_hosts, next->nallow_hosts) &&
	    strings_same(cur->allow_origins, cur->nallow_origins,
	    next->allow_origins, next->nallow_origins) &&
	    strings_same(cur->allow_proxies, cur->nallow_proxies,
	    next->allow_proxies, next->nallow_proxies))
		return;
	SWAP(cur->allow_hosts, next->allow_hosts);
	SWAP(cur->nallow_hosts, next->nallow_hosts);
	SWAP(cur->allow_origins, next->allow_origins);
	SWAP(cur->nallow_origins, next->nallow_origins);
	SWAP(cur->allow_proxies, next->allow_proxies);
	SWAP(cur->nallow_proxies, next->nallow_proxies);
	ch->allow_changed = 1;
}

/* Who may read /metrics: looked up on each scrape, as the allow lists. */
static void
reload_metrics(struct policy *cur, struct policy *next,
    struct policy_changes *ch)
{
	if (cur->nmetrics_tokens == next->nmetrics_tokens &&
	    (cur->nmetrics_tokens == 0 || memcmp(cur->metrics_tokens,
	    next->metrics_tokens, cur->nmetrics_tokens *
	    sizeof(*cur->metrics_tokens)) == 0) &&
	    strings_same(cur->metrics_tenants, cur->nmetrics_tenants,
	    next->metrics_tenants, next->nmetrics_tenants))
		return;
	SWAP(cur->metrics_tokens, next->metrics_tokens);
	SWAP(cur->nmetrics_tokens, next->nmetrics_tokens);
	SWAP(cur->metrics_tenants, next->metrics_tenants);
	SWAP(cur->nmetrics_tenants, next->nmetrics_tenants);
	ch->metrics_changed = 1;
}

/*
 * Download links are made and served with the values of the moment: the
 * keys that seal them are mcpd's own, not the file's.
 */
static void
reload_share(struct policy *cur, struct policy *next,
    struct policy_changes *ch)
{
	if (strcmp(cur->share_url, next->share_url) == 0 &&
	    cur->share_expiry == next->share_expiry)
		return;
	memcpy(cur->share_url, next->share_url, sizeof(cur->share_url));
	cur->share_expiry = next->share_expiry;
	ch->share_changed = 1;
}

/*
 * What needs a restart: each setting, and which daemons use it.
 */

static const struct {
	const char	*what;
	size_t		 off;
	int		 who;
} fixed_strings[] = {
	{ "user", offsetof(struct policy, user), POLICY_ALL },
	{ "group", offsetof(struct policy, group), POLICY_ALL },
	{ "run directory", offsetof(struct policy, run_dir),
	    POLICY_SANDBOXD | POLICY_AUDITD },
	{ "state directory", offsetof(struct policy, state_dir),
	    POLICY_SANDBOXD | POLICY_AUDITD },
	{ "runc", offsetof(struct policy, runc), POLICY_SANDBOXD },
	{ "runtime", offsetof(struct policy, runtime), POLICY_SANDBOXD },
	{ "sandbox-init", offsetof(struct policy, sandbox_init),
	    POLICY_SANDBOXD },
	{ "sandbox socket", offsetof(struct policy, sandbox_socket),
	    POLICY_MCPD | POLICY_SANDBOXD },
	{ "audit socket", offsetof(struct policy, audit.socket), POLICY_ALL },
	{ "audit database", offsetof(struct policy, audit.database),
	    POLICY_AUDITD },
	{ "audit user", offsetof(struct policy, audit.user), POLICY_ALL },
	/* Their contents are read again; the paths are Landlock's. */
	{ "tls certificate", offsetof(struct policy, tls_cert), POLICY_MCPD },
	{ "tls key", offsetof(struct policy, tls_key), POLICY_MCPD },
	/* Sandboxes keep the ids their clients were given. */
	{ "host name", offsetof(struct policy, host_name), POLICY_MCPD },
};

static int
listens_same(const struct policy *a, const struct policy *b)
{
	const struct listen_addr	*x, *y;

	for (x = TAILQ_FIRST(&a->listens), y = TAILQ_FIRST(&b->listens);
	    x != NULL && y != NULL;
	    x = TAILQ_NEXT(x, entry), y = TAILQ_NEXT(y, entry))
		if (x->type != y->type || x->port != y->port ||
		    x->mode != y->mode || strcmp(x->host, y->host) != 0 ||
		    strcmp(x->path, y->path) != 0 ||
		    strcmp(x->tenant, y->tenant) != 0 || x->tls != y->tls ||
		    x->plaintext != y->plaintext)
			return 0;
	return x == NULL && y == NULL;
}

/* sandboxd adds the images of the store to cur: those are not the file's. */
static const struct image *
image_next_own(const struct image *im)
{
	while (im != NULL && im->stored)
		im = TAILQ_NEXT(im, entry);
	return im;
}

static int
images_same(const struct policy *a, const struct policy *b)
{
	const struct image	*x, *y;

	for (x = image_next_own(TAILQ_FIRST(&a->images)),
	    y = TAILQ_FIRST(&b->images); x != NULL && y != NULL;
	    x = image_next_own(TAILQ_NEXT(x, entry)),
	    y = TAILQ_NEXT(y, entry))
		if (x->type != y->type || x->pool != y->pool ||
		    x->pool_idle != y->pool_idle ||
		    strcmp(x->name, y->name) != 0 ||
		    strcmp(x->path, y->path) != 0 ||
		    strcmp(x->runtime, y->runtime) != 0)
			return 0;
	return x == NULL && y == NULL;
}

/* The runtimes, built-in and blocks: sandboxd's helper checks them once. */
static int
runtimes_same(const struct policy *a, const struct policy *b)
{
	size_t	 i;

	if (a->nruntimes != b->nruntimes)
		return 0;
	for (i = 0; i < a->nruntimes; i++)
		if (a->runtimes[i].kind != b->runtimes[i].kind ||
		    strcmp(a->runtimes[i].name, b->runtimes[i].name) != 0 ||
		    strcmp(a->runtimes[i].path, b->runtimes[i].path) != 0 ||
		    strcmp(a->runtimes[i].platform,
		    b->runtimes[i].platform) != 0 ||
		    a->runtimes[i].network != b->runtimes[i].network)
			return 0;
	return 1;
}

static int
str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static int
languages_same(const struct policy *a, const struct policy *b)
{
	const struct language	*x, *y;

	for (x = TAILQ_FIRST(&a->languages), y = TAILQ_FIRST(&b->languages);
	    x != NULL && y != NULL;
	    x = TAILQ_NEXT(x, entry), y = TAILQ_NEXT(y, entry))
		if (strcmp(x->name, y->name) != 0 ||
		    strcmp(x->file, y->file) != 0 ||
		    strcmp(x->image, y->image) != 0 ||
		    !str_same(x->build, y->build) ||
		    !str_same(x->run, y->run) ||
		    !str_same(x->version, y->version) ||
		    !strings_same(x->aliases, x->naliases, y->aliases,
		    y->naliases))
			return 0;
	return x == NULL && y == NULL;
}

/* The oauth block is read once: its keys' source is Landlock's. */
static int
oauth_same(const struct oauth_conf *a, const struct oauth_conf *b)
{
	return a->enabled == b->enabled && a->leeway == b->leeway &&
	    strcmp(a->issuer, b->issuer) == 0 &&
	    strcmp(a->audience, b->audience) == 0 &&
	    strcmp(a->jwks, b->jwks) == 0 &&
	    strcmp(a->type, b->type) == 0 &&
	    strings_same(a->scopes, a->nscopes, b->scopes, b->nscopes);
}

static void
fixed_changed(const char *what, const char *daemon,
    struct policy_changes *ch)
{
	log_warnx("\"%s\" changed: restart %s to apply it", what, daemon);
	ch->ignored++;
}

static void
reload_fixed(const struct policy *cur, const struct policy *next, int who,
    const char *daemon, struct policy_changes *ch)
{
	const char	*a, *b;
	size_t		 i;

	for (i = 0; i < nitems(fixed_strings); i++) {
		a = (const char *)cur + fixed_strings[i].off;
		b = (const char *)next + fixed_strings[i].off;
		if ((fixed_strings[i].who & who) && strcmp(a, b) != 0)
			fixed_changed(fixed_strings[i].what, daemon, ch);
	}
	if ((who & POLICY_SANDBOXD) && (cur->uid_base != next->uid_base ||
	    cur->uid_slots != next->uid_slots))
		fixed_changed("sandbox uids", daemon, ch);
	if ((who & POLICY_SANDBOXD) &&
	    cur->audit.required != next->audit.required)
		fixed_changed("audit required", daemon, ch);
	if ((who & (POLICY_MCPD | POLICY_SANDBOXD)) &&
	    cur->audit.excerpt != next->audit.excerpt)
		fixed_changed("audit excerpt", daemon, ch);
	if ((who & POLICY_MCPD) && !listens_same(cur, next))
		fixed_changed("listen on", daemon, ch);
	if ((who & POLICY_MCPD) && !oauth_same(&cur->oauth, &next->oauth))
		fixed_changed("oauth", daemon, ch);
	if ((who & POLICY_SANDBOXD) && !images_same(cur, next))
		fixed_changed("image", daemon, ch);
	if ((who & POLICY_SANDBOXD) && !runtimes_same(cur, next))
		fixed_changed("runtime block", daemon, ch);
	if ((who & (POLICY_MCPD | POLICY_SANDBOXD)) &&
	    !languages_same(cur, next))
		fixed_changed("language", daemon, ch);
}

void
policy_reload(struct policy *cur, struct policy *next, int who,
    const char *daemon, struct policy_changes *ch)
{
	memset(ch, 0, sizeof(*ch));
	reload_fixed(cur, next, who, daemon, ch);
	reload_limits(cur, next, ch);
	reload_tenants(cur, next, ch);
	reload_allow(cur, next, ch);
	reload_metrics(cur, next, ch);
	reload_share(cur, next, ch);
	memcpy(cur->digest, next->digest, sizeof(cur->digest));
}

static void
changes_add(char *buf, size_t len, unsigned int n, const char *what,
    const char *how)
{
	size_t	 used = strlen(buf);

	if (n == 0 || used >= len)
		return;
	(void)snprintf(buf + used, len - used, "%s%u %s%s %s",
	    used > 0 ? ", " : "", n, what,
	    n != 1 && strcmp(what, "tenant") == 0 ? "s" : "", how);
}

void
policy_changes_str(const struct policy_changes *ch, char *buf, size_t len)
{
	size_t	 used;

	if (len == 0)
		return;
	buf[0] = '\0';
	changes_add(buf, len, ch->tenants_added, "tenant", "added");
	changes_add(buf, len, ch->tenants_changed, "tenant", "changed");
	changes_add(buf, len, ch->tenants_removed, "tenant", "removed");
	changes_add(buf, len, ch->limits_added, "limits", "added");
	changes_add(buf, len, ch->limits_changed, "limits", "changed");
	changes_add(buf, len, ch->limits_removed, "limits", "removed");
	used = strlen(buf);
	if (ch->allow_changed && used < len)
		(void)snprintf(buf + used, len - used, "%sallow lists changed",
		    used > 0 ? ", " : "");
	used = strlen(buf);
	if (ch->metrics_changed && used < len)
		(void)snprintf(buf + used, len - used, "%smetrics readers "
		    "changed", used > 0 ? ", " : "");
	used = strlen(buf);
	if (ch->share_changed && used < len)
		(void)snprintf(buf + used, len - used, "%sshare settings "
		    "changed", used > 0 ? ", " : "");
	used = strlen(buf);
	if (ch->ignored > 0 && used < len)
		(void)snprintf(buf + used, len - used, "%s%u setting%s "
		    "need%s a restart", used > 0 ? ", " : "", ch->ignored,
		    ch->ignored != 1 ? "s" : "", ch->ignored != 1 ? "" : "s");
	if (buf[0] == '\0')
		(void)snprintf(buf, len, "nothing changed");
}
