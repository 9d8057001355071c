/*
 * policy_reload(): a policy loaded again merged into the running one in
 * place.  Tenants and limits keep their addresses, whatever happens to
 * them; removed ones are found by no lookup; settings that need a restart
 * keep their old value and say so; and policy_resolve_reload() finds
 * users without the name service.
 */
#include <sys/types.h>

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

static char	 tmpdir[PATH_MAX];
static char	 errbuf[1 << 16];
static int	 saved_fd = -1, cap_fd = -1;

static void
put(const char *name, const char *text)
{
	FILE	*fp;

	if ((fp = fopen(name, "w")) == NULL || fputs(text, fp) == EOF ||
	    fclose(fp) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", name, strerror(errno));
		exit(1);
	}
}

/* What is logged between capture() and captured() lands in errbuf. */
static void
capture(void)
{
	if ((cap_fd = open("stderr.out", O_RDWR | O_CREAT | O_TRUNC,
	    0600)) == -1 || (saved_fd = dup(STDERR_FILENO)) == -1 ||
	    dup2(cap_fd, STDERR_FILENO) == -1) {
		perror("capture");
		exit(1);
	}
}

static const char *
captured(void)
{
	ssize_t	 n;

	dup2(saved_fd, STDERR_FILENO);
	close(saved_fd);
	n = pread(cap_fd, errbuf, sizeof(errbuf) - 1, 0);
	errbuf[n > 0 ? n : 0] = '\0';
	close(cap_fd);
	return errbuf;
}

static struct policy *
load(const char *text)
{
	struct policy	*p;

	put("t.conf", text);
	capture();
	p = policy_load("t.conf");
	captured();
	if (p == NULL) {
		fprintf(stderr, "t.conf not loaded: %s", errbuf);
		exit(1);
	}
	return p;
}

/* Token hashes as the file gives them: 64 hex digits. */
#define HA1	"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define HA2	"a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"
#define HB	"b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"
#define HC	"c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"

static void
hash(const char *hex, uint8_t out[POLICY_TOKEN_HASH_LEN])
{
	(void)sodium_hex2bin(out, POLICY_TOKEN_HASH_LEN, hex, strlen(hex),
	    NULL, NULL, NULL);
}

/* next resolved with passwd.txt, merged as who, its log in errbuf. */
static int
reload(struct policy *cur, const char *text, int who,
    struct policy_changes *ch, char *summary, size_t len)
{
	struct policy	*next = load(text);
	int		 rv;

	capture();
	if ((rv = policy_resolve_reload(next, cur, "passwd.txt")) == 0)
		policy_reload(cur, next, who, "mcpd", ch);
	captured();
	policy_free(next);
	if (rv == 0)
		policy_changes_str(ch, summary, len);
	return rv;
}

#define BASE \
	"listen on 127.0.0.1 port 8080\n" \
	"allow host \"a.example\"\n" \
	"limits small {\n\tmemory 64M\n\ttimeout 5s\n}\n" \
	"limits big {\n\tmemory 1G\n}\n"
#define ALICE(tok, lim) \
	"tenant alice {\n\ttoken \"sha256:" tok "\"\n\tuid alice\n" \
	"\tlimits " lim "\n}\n"
#define BOB \
	"tenant bob {\n\ttoken \"sha256:" HB "\"\n" \
	"\tlimits big\n\tmax sandboxes 2\n}\n"

static void
test_merge(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct tenant		*alice, *bob, *carol;
	struct limits		*small, *big;
	uint8_t			 h[POLICY_TOKEN_HASH_LEN], digest[32];
	char			 sum[256];
	int			 rv;

	cur = load(BASE ALICE(HA1, "small") BOB);
	capture();
	rv = policy_resolve_reload(cur, cur, "passwd.txt");
	captured();
	ok(rv == 0 && policy_tenant(cur, "alice")->uids[0].uid == 5001,
	    "alice's uid comes from the passwd file");
	alice = policy_tenant(cur, "alice");
	bob = policy_tenant(cur, "bob");
	small = policy_limits(cur, "small");
	big = policy_limits(cur, "big");
	memcpy(digest, cur->digest, sizeof(digest));

	/* alice: a new token, bigger limits; small gets longer; bob goes;
	 * carol comes; a second allowed host. */
	rv = reload(cur, "listen on 127.0.0.1 port 8080\n"
	    "allow host \"a.example\"\nallow host \"b.example\"\n"
	    "limits small {\n\tmemory 64M\n\ttimeout 9s\n}\n"
	    "limits big {\n\tmemory 1G\n}\n"
	    ALICE(HA2, "big")
	    "tenant carol {\n\ttoken \"sha256:" HC "\"\n"
	    "\tuid 5003\n\tlimits small\n\tmax requests 3\n}\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0, "the new file is resolved and merged");
	ok(policy_tenant(cur, "alice") == alice, "alice is where she was");
	ok(alice->limits == big && strcmp(alice->limits_name, "big") == 0,
	    "and now has the big limits");
	hash(HA2, h);
	ok(policy_tenant_by_token(cur, h) == alice, "her new token is hers");
	hash(HA1, h);
	ok(policy_tenant_by_token(cur, h) == NULL, "her old one is no one's");
	ok(policy_limits(cur, "small") == small && small->timeout == 9000 &&
	    small->memory == (64ULL << 20), "small changed in place");
	ok(bob->gone && policy_tenant(cur, "bob") == NULL,
	    "bob is gone, and not found by name");
	hash(HB, h);
	ok(policy_tenant_by_token(cur, h) == NULL && bob->ntokens == 0 &&
	    bob->tokens == NULL, "nor by his token, which is wiped");
	ok(strcmp(bob->name, "bob") == 0 && bob->limits == big,
	    "what points to bob still reads him");
	carol = policy_tenant(cur, "carol");
	hash(HC, h);
	ok(carol != NULL && policy_tenant_by_token(cur, h) == carol &&
	    policy_tenant_by_uid(cur, 5003) == carol &&
	    carol->limits == small && carol->max_requests == 3,
	    "carol is added, with her token, numeric uid and limits");
	ok(cur->nallow_hosts == 2 &&
	    strcmp(cur->allow_hosts[1], "b.example") == 0,
	    "the allowed hosts are the new ones");
	ok(memcmp(cur->digest, digest, sizeof(digest)) != 0,
	    "cur has the new file's digest");
	ok(ch.tenants_added == 1 && ch.tenants_changed == 1 &&
	    ch.tenants_removed == 1 && ch.limits_changed == 1 &&
	    ch.allow_changed && ch.ignored == 0, "the changes are counted");
	ok(strcmp(sum, "1 tenant added, 1 tenant changed, 1 tenant removed, "
	    "1 limits changed, allow lists changed") == 0, "summary: %s", sum);
	ok(strstr(errbuf, "tenant \"bob\" removed") != NULL &&
	    strstr(errbuf, "tenant \"carol\" added") != NULL,
	    "each tenant added or removed is logged");

	/* bob back, big removed (alice back on small), port changed. */
	rv = reload(cur, "listen on 127.0.0.1 port 9090\n"
	    "limits small {\n\tmemory 64M\n\ttimeout 9s\n}\n"
	    ALICE(HA2, "small")
	    "tenant bob {\n\ttoken \"sha256:" HB "\"\n"
	    "\tlimits small\n}\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && policy_tenant(cur, "bob") == bob && !bob->gone &&
	    bob->limits == small, "bob comes back as the same tenant");
	ok(big->gone && policy_limits(cur, "big") == NULL &&
	    alice->limits == small, "big is gone, no one live uses it");
	ok(carol->gone && policy_tenant_by_uid(cur, 5003) == NULL,
	    "carol's uid finds no one now");
	ok(TAILQ_FIRST(&cur->listens)->port == 8080,
	    "the listen port stays as it was");
	ok(strstr(errbuf, "\"listen on\" changed: restart mcpd to apply "
	    "it") != NULL, "and mcpd says it needs a restart");
	ok(strcmp(sum, "1 tenant added, 1 tenant changed, 1 tenant removed, "
	    "1 limits removed, allow lists changed, 1 setting needs a "
	    "restart") == 0, "summary: %s", sum);

	/* The same file again: nothing to do. */
	rv = reload(cur, "listen on 127.0.0.1 port 9090\n"
	    "limits small {\n\tmemory 64M\n\ttimeout 9s\n}\n"
	    ALICE(HA2, "small")
	    "tenant bob {\n\ttoken \"sha256:" HB "\"\n"
	    "\tlimits small\n}\n",
	    POLICY_SANDBOXD, &ch, sum, sizeof(sum));
	ok(rv == 0 && strcmp(sum, "nothing changed") == 0 &&
	    strstr(errbuf, "restart") == NULL,
	    "sandboxd does not listen: the port is not its business (%s)",
	    sum);
	policy_free(cur);
}

static void
test_fixed(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct image		*stored;
	char			 sum[256];
	int			 rv;

	cur = load("user \"u1\"\nrun directory \"/run/a\"\n"
	    "image py rootfs \"/srv/py\" pool 1\n"
	    "language python {\n\tfile main.py\n\trun \"python3 main.py\"\n"
	    "\timage py\n}\n");
	/* sandboxd's list also has what it found in the image store. */
	stored = xcalloc(1, sizeof(*stored));
	(void)str_copy(stored->name, "built", sizeof(stored->name));
	stored->stored = 1;
	TAILQ_INSERT_TAIL(&cur->images, stored, entry);
	rv = reload(cur, "user \"u1\"\nrun directory \"/run/a\"\n"
	    "image py rootfs \"/srv/py\" pool 1\n"
	    "language python {\n\tfile main.py\n\trun \"python3 main.py\"\n"
	    "\timage py\n}\n", POLICY_SANDBOXD, &ch, sum, sizeof(sum));
	ok(rv == 0 && ch.ignored == 0, "images of the store are not the "
	    "file's to change");
	rv = reload(cur, "user \"u2\"\nrun directory \"/run/b\"\n"
	    "image py rootfs \"/srv/py\" pool 3\n"
	    "language python {\n\tfile main.py\n\trun \"python main.py\"\n"
	    "\timage py\n}\n", POLICY_SANDBOXD, &ch, sum, sizeof(sum));
	ok(rv == 0 && ch.ignored == 6, "user, run directory, its sockets, "
	    "image and language need a restart (%u)", ch.ignored);
	ok(strstr(errbuf, "\"user\" changed: restart mcpd") != NULL &&
	    strstr(errbuf, "\"image\" changed") != NULL &&
	    strstr(errbuf, "\"language\" changed") != NULL &&
	    strstr(errbuf, "\"sandbox socket\" changed") != NULL,
	    "one warning each");
	ok(strcmp(cur->user, "u1") == 0 &&
	    strcmp(cur->run_dir, "/run/a") == 0 &&
	    policy_image(cur, "py")->pool == 1,
	    "and the old values stay");
	policy_free(cur);
}

/* Who may read /metrics changes at once, as the allow lists do. */
#define BIG	"limits big {\n}\n"

/* Tenants' claims change in place; the oauth block needs a restart. */
#define OAUTH(iss) \
	"oauth {\n\tissuer " iss "\n\taudience https://m.example/mcp\n}\n"

static void
test_oauth(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct tenant		*t;
	char			 sum[256];
	int			 rv;

	cur = load(OAUTH("https://a.example")
	    "tenant t {\n\tclaim sub alice\n}\n");
	t = policy_tenant(cur, "t");
	rv = reload(cur, OAUTH("https://a.example")
	    "tenant t {\n\tclaim sub bob\n\tclaim groups any\n}\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && t->nclaims == 2 && strcmp(t->claims[0].value, "bob") ==
	    0 && t->claims[1].any, "a tenant's claims change in place");
	ok(ch.tenants_changed == 1 && ch.ignored == 0, "summary: %s", sum);
	rv = reload(cur, OAUTH("https://b.example")
	    "tenant t {\n\tclaim sub bob\n\tclaim groups any\n}\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && ch.ignored == 1 && strcmp(cur->oauth.issuer,
	    "https://a.example") == 0 && strstr(errbuf, "\"oauth\" changed: "
	    "restart mcpd to apply it") != NULL,
	    "another issuer needs a restart, and the old one stays");
	rv = reload(cur, OAUTH("https://a.example") "tenant u {\n\tuid 5003\n}\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && t->gone && t->nclaims == 0 && t->claims == NULL,
	    "a removed tenant keeps no claim");
	policy_free(cur);
}

static void
test_metrics(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct tenant		*bob;
	uint8_t			 h[POLICY_TOKEN_HASH_LEN];
	char			 sum[256];
	int			 rv;

	cur = load(BIG BOB "metrics tenant bob\n");
	bob = policy_tenant(cur, "bob");
	ok(policy_metrics_tenant(cur, bob), "bob reads metrics");
	rv = reload(cur, BIG BOB "metrics token \"sha256:" HC "\"\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	hash(HC, h);
	ok(rv == 0 && !policy_metrics_tenant(cur, bob) &&
	    policy_metrics_token(cur, h), "then a token does, and bob not");
	ok(ch.metrics_changed && strcmp(sum, "metrics readers changed") == 0,
	    "summary: %s", sum);
	rv = reload(cur, BIG BOB "metrics token \"sha256:" HC "\"\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && strcmp(sum, "nothing changed") == 0,
	    "the same again: %s", sum);
	rv = reload(cur, "metrics tenant bob\n" BIG BOB, POLICY_MCPD, &ch, sum,
	    sizeof(sum));
	ok(rv == 0 && policy_metrics_tenant(cur, bob) &&
	    !policy_metrics_token(cur, h), "and back");
	rv = reload(cur, "metrics tenant carol\n"
	    "tenant carol {\n\tuid 5003\n}\n", POLICY_MCPD, &ch, sum,
	    sizeof(sum));
	ok(rv == 0 && bob->gone && !policy_metrics_tenant(cur, bob) &&
	    policy_metrics_tenant(cur, policy_tenant(cur, "carol")),
	    "a removed tenant reads metrics no more");
	policy_free(cur);
}

/*
 * Download links: a tenant's share statements change in place, as its
 * maxima do, and share url and share expiry with them, no restart.
 */
#define SHARE_T(stmts) "tenant t {\n\tuid 5003\n" stmts "}\n"

/* reuse changes in place, for sandboxd to act on at its next tick. */
static void
test_reuse(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct tenant		*t;
	char			 sum[256];
	int			 rv;

	cur = load(SHARE_T("\treuse yes\n"));
	t = policy_tenant(cur, "t");
	ok(t != NULL && t->reuse, "reuse yes loaded");
	rv = reload(cur, SHARE_T(""), POLICY_SANDBOXD, &ch, sum, sizeof(sum));
	ok(rv == 0 && policy_tenant(cur, "t") == t && !t->reuse &&
	    ch.tenants_changed == 1 && strstr(errbuf, "restart") == NULL,
	    "reuse taken away in place: %s", sum);
	rv = reload(cur, SHARE_T("\treuse no\n"), POLICY_SANDBOXD, &ch, sum,
	    sizeof(sum));
	ok(rv == 0 && strcmp(sum, "nothing changed") == 0,
	    "reuse no is the default: %s", sum);
	policy_free(cur);
}

static void
test_share(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	struct tenant		*t;
	char			 sum[256];
	int			 rv;

	cur = load("share url \"https://a.example\"\n"
	    SHARE_T("\tshare downloads 2\n"));
	t = policy_tenant(cur, "t");
	rv = reload(cur, "share url \"https://b.example:8443/\"\n"
	    "share expiry 2h\n"
	    SHARE_T("\tshare downloads 8\n\tshare rate 64M\n"
	    "\tshare max expiry 1h\n"),
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && policy_tenant(cur, "t") == t && t->share_downloads == 8 &&
	    t->share_rate == 64ULL << 20 && t->share_expiry_max == 3600,
	    "a tenant's share downloads, rate and max expiry change in place");
	ok(strcmp(cur->share_url, "https://b.example:8443") == 0 &&
	    cur->share_expiry == 7200, "share url and share expiry too");
	ok(ch.tenants_changed == 1 && ch.share_changed && ch.ignored == 0 &&
	    strstr(errbuf, "restart") == NULL &&
	    strcmp(sum, "1 tenant changed, share settings changed") == 0,
	    "summary: %s", sum);

	rv = reload(cur, "share url \"https://b.example:8443\"\n"
	    "share expiry 7200\n"
	    SHARE_T("\tshare downloads 8\n\tshare rate 64M\n"
	    "\tshare max expiry 60m\n"),
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && strcmp(sum, "nothing changed") == 0,
	    "the same values written otherwise: %s", sum);

	rv = reload(cur, SHARE_T("\tshare rate none\n\tshare downloads 0\n"),
	    POLICY_MCPD | POLICY_SANDBOXD, &ch, sum, sizeof(sum));
	ok(rv == 0 && t->share_rate == 0 && t->share_downloads == 0 &&
	    t->share_expiry_max == DEFAULT_SHARE_EXPIRY_MAX,
	    "no rate limit, no sharing, the default max expiry");
	ok(cur->share_url[0] == '\0' &&
	    cur->share_expiry == DEFAULT_SHARE_EXPIRY,
	    "share url and share expiry back to their defaults");
	ok(ch.tenants_changed == 1 && ch.share_changed && ch.ignored == 0,
	    "summary: %s", sum);
	policy_free(cur);
}

/* The balancers believed change in place, as the other allow lists. */
static void
test_allow_proxy(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	char			 sum[256];
	int			 rv;

	cur = load("allow proxy 10.0.0.5\n");
	rv = reload(cur, "allow proxy 10.0.0.0/24\nallow proxy \"::1\"\n",
	    POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && ch.allow_changed && ch.ignored == 0 &&
	    cur->nallow_proxies == 2 &&
	    strcmp(cur->allow_proxies[0], "10.0.0.0/24") == 0 &&
	    strcmp(cur->allow_proxies[1], "::1/128") == 0,
	    "allow proxy changes without a restart: %s", sum);
	rv = reload(cur, "", POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && ch.allow_changed && cur->nallow_proxies == 0,
	    "and goes: %s", sum);
	policy_free(cur);
}

/* The ids handed out carry the host name: another needs a restart. */
static void
test_host_name(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	char			 sum[256];
	int			 rv;

	cur = load("host name a\n");
	rv = reload(cur, "host name b\n", POLICY_MCPD, &ch, sum, sizeof(sum));
	ok(rv == 0 && strcmp(cur->host_name, "a") == 0 && ch.ignored == 1 &&
	    strstr(errbuf, "\"host name\" changed: restart mcpd to apply "
	    "it") != NULL, "another host name needs mcpd restarted: %s", sum);
	rv = reload(cur, "host name b\n", POLICY_SANDBOXD | POLICY_AUDITD, &ch,
	    sum, sizeof(sum));
	ok(rv == 0 && strcmp(sum, "nothing changed") == 0,
	    "sandboxd and auditd do not use it: %s", sum);
	policy_free(cur);
}

static void
test_resolve(void)
{
	struct policy_changes	 ch;
	struct policy		*cur;
	char			 sum[256];
	int			 rv;

	cur = load("tenant a {\n\tuid ghost\n}\n");
	/* As if the name service had found it at start. */
	policy_tenant(cur, "a")->uids[0].uid = 7007;
	rv = reload(cur, "tenant a {\n\tuid ghost\n}\n"
	    "tenant b {\n\tuid alice\n}\n", POLICY_MCPD, &ch, sum,
	    sizeof(sum));
	ok(rv == 0 && policy_tenant_by_uid(cur, 7007) ==
	    policy_tenant(cur, "a") && policy_tenant_by_uid(cur, 5001) ==
	    policy_tenant(cur, "b"), "a name known at start keeps its uid; "
	    "a new one is read from the passwd file");
	rv = reload(cur, "tenant a {\n\tuid ghost\n}\n"
	    "tenant b {\n\tuid nobody-here\n}\n", POLICY_MCPD, &ch, sum,
	    sizeof(sum));
	ok(rv == -1 && strstr(errbuf, "tenant \"b\": user \"nobody-here\" "
	    "is not in passwd.txt") != NULL,
	    "a name found nowhere refuses the reload");
	ok(policy_tenant_by_uid(cur, 5001) == policy_tenant(cur, "b"),
	    "and nothing changed");
	policy_free(cur);
}

int
main(void)
{
	const char	*tmp;

	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	(void)snprintf(tmpdir, sizeof(tmpdir), "%s/test_reload.XXXXXX", tmp);
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) == -1) {
		perror(tmpdir);
		return 1;
	}
	if (sodium_init() == -1)
		return 1;
	log_init(LOG_DEST_STDERR, 0, "test");
	put("passwd.txt", "root:x:0:0:root:/root:/bin/sh\n"
	    "alice:x:5001:5001::/home/alice:/bin/sh\n");

	test_merge();
	test_fixed();
	test_metrics();
	test_oauth();
	test_share();
	test_reuse();
	test_host_name();
	test_allow_proxy();
	test_resolve();

	(void)unlink("t.conf");
	(void)unlink("stderr.out");
	(void)unlink("passwd.txt");
	(void)rmdir(tmpdir);
	return tap_done();
}
