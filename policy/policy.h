/*
 * The in-memory policy: what mcpd.conf(5) says, after parsing and checking.
 *
 * policy_load() parses a file into a struct policy; every daemon loads the
 * same file and uses the parts it needs.  Names of users and groups are kept
 * as written and resolved by policy_resolve() at daemon start, so that
 * "-n" checks a file on a machine where the users do not exist yet.
 */
#ifndef MCPD_POLICY_H
#define MCPD_POLICY_H

#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR		"/etc"
#endif
#ifndef LIBEXECDIR
#define LIBEXECDIR		"/usr/libexec"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR		"/var"
#endif

#define MCPD_CONF		SYSCONFDIR "/mcpd/mcpd.conf"
/* Where a reload finds tenant users: see policy_resolve_reload(). */
#define POLICY_PASSWD		"/etc/passwd"
#define POLICY_NAME_MAX		NAME_LEN /* tenant, limits, image, language */
#define POLICY_HOST_NAME_MAX	25	/* "host name": 24 characters */
#define POLICY_USER_MAX		64	/* user and group names */
#define POLICY_SOCK_MAX		108	/* sizeof(sun_path) */
#define POLICY_TOKEN_HASH_LEN	32	/* SHA-256 */

/* Built-in defaults, used where the file is silent. */
#define DEFAULT_USER		"_mcpd"
#define DEFAULT_AUDIT_USER	"_mcpaudit"
#define DEFAULT_RUN_DIR		"/run/mcpd"
#define DEFAULT_STATE_DIR	LOCALSTATEDIR "/lib/mcpd"
#define DEFAULT_RUNC		"/usr/sbin/runc"
#define DEFAULT_CRUN		"/usr/bin/crun"
#define DEFAULT_RUNSC		"/usr/bin/runsc"
#define DEFAULT_RUNTIME		"runc"
#define DEFAULT_SANDBOX_INIT	LIBEXECDIR "/mcpd/sandbox-init"
#define DEFAULT_SANDBOX_SOCK	"sandboxd.sock"	/* in the run directory */
#define DEFAULT_AUDIT_SOCK	"auditd.sock"	/* in the run directory */
#define DEFAULT_AUDIT_DB	"audit/audit.db" /* in the state directory */
#define DEFAULT_UNIX_MODE	0660
#define DEFAULT_POOL		2
#define DEFAULT_POOL_IDLE	(10ULL * 60 * 1000)	/* ms */

#define DEFAULT_MEMORY		(512ULL << 20)
#define DEFAULT_CPUS		1000		/* thousandths of a CPU */
#define DEFAULT_PIDS		128
#define DEFAULT_TIMEOUT		30000		/* ms */
#define DEFAULT_OUTPUT		(1ULL << 20)
#define DEFAULT_DISK		(256ULL << 20)
#define DEFAULT_MAX_SANDBOXES	4
#define DEFAULT_MAX_REQUESTS	16	/* in flight at once, per tenant */
#define DEFAULT_IDLE		(30ULL * 60 * 1000)	/* ms */
#define DEFAULT_LIFETIME	(24ULL * 3600 * 1000)	/* ms */
/* Download links (mcpd's /files/<token>/<name>), in seconds and bytes. */
#define DEFAULT_SHARE_EXPIRY	3600U	/* when the tool call names none */
#define DEFAULT_SHARE_EXPIRY_MAX 86400U	/* per tenant */
#define DEFAULT_SHARE_DOWNLOADS	4	/* at once, per tenant */
#define DEFAULT_SHARE_RATE	(1ULL << 30)	/* a minute, per tenant */
#define POLICY_SHARE_EXPIRY_MIN	60U	/* bounds of either expiry */
#define POLICY_SHARE_EXPIRY_MAX	(30U * 24 * 3600)
#define POLICY_SHARE_DOWNLOADS_MAX 1024
/*
 * Each sandbox maps its 65536 container uids onto a range of host uids of
 * its own, starting at a multiple of 65536: by default from 2^28, for up to
 * 4096 sandboxes (and warm containers) at once.
 */
#define UID_RANGE		65536U
#define DEFAULT_UID_BASE	0x10000000U
#define DEFAULT_UID_SLOTS	4096U

enum net_mode {
	NET_NONE,		/* loopback only */
	NET_EGRESS,		/* outbound network allowed */
};

/* Bits of limits.set: which fields the file gave explicitly. */
#define LIMIT_MEMORY		0x01
#define LIMIT_CPUS		0x02
#define LIMIT_PIDS		0x04
#define LIMIT_TIMEOUT		0x08
#define LIMIT_OUTPUT		0x10
#define LIMIT_DISK		0x20
#define LIMIT_NETWORK		0x40
#define LIMIT_IDLE		0x80
#define LIMIT_LIFETIME		0x100

struct limits {
	TAILQ_ENTRY(limits)	 entry;
	char			 name[POLICY_NAME_MAX];
	uint64_t		 memory;	/* bytes; swap is the same */
	uint32_t		 cpus;		/* thousandths of a CPU */
	uint32_t		 pids;
	uint64_t		 timeout;	/* wall clock, ms */
	uint64_t		 output;	/* bytes of output per exec */
	uint64_t		 disk;		/* bytes of workspace */
	enum net_mode		 network;
	uint64_t		 idle;		/* ms a sandbox may sit unused */
	uint64_t		 lifetime;	/* ms a sandbox may exist */
	uint32_t		 set;		/* LIMIT_* given in the file */
	int			 gone;		/* removed by a reload */
};

enum listen_type {
	LISTEN_TCP,
	LISTEN_UNIX,
};

struct listen_addr {
	TAILQ_ENTRY(listen_addr) entry;
	enum listen_type	 type;
	char			 host[256];	/* TCP: address or name */
	uint16_t		 port;		/* TCP */
	char			 path[POLICY_SOCK_MAX];	/* UNIX */
	mode_t			 mode;		/* UNIX */
	char			 tenant[POLICY_NAME_MAX]; /* "": token or uid */
	int			 tls;		/* TCP: HTTPS */
	/* TCP: plain HTTP off the loopback, a TLS proxy in front. */
	int			 plaintext;
};

struct tenant_uid {
	char			 name[POLICY_USER_MAX];	/* as written */
	uid_t			 uid;		/* after policy_resolve() */
};

/*
 * An OAuth access token is a tenant's when its claim name has the value
 * (or, for a claim that is a list, holds it), or with any, when the claim
 * is there at all.
 */
#define OAUTH_CLAIM_MAX		64	/* bytes of a claim's name */
#define OAUTH_VALUE_MAX		256	/* of the value it is compared with */

struct tenant_claim {
	char			 name[OAUTH_CLAIM_MAX];
	char			 value[OAUTH_VALUE_MAX];	/* "" with any */
	int			 any;
};

/* A directory of this machine a tenant's stdio clients copy files under. */
struct tenant_path {
	char			 path[PATH_MAX];	/* absolute, normalized */
	int			 readonly;	/* only into sandboxes */
};

struct tenant {
	TAILQ_ENTRY(tenant)	 entry;
	char			 name[POLICY_NAME_MAX];
	uint8_t			(*tokens)[POLICY_TOKEN_HASH_LEN];
	size_t			 ntokens;
	struct tenant_uid	*uids;
	size_t			 nuids;
	struct tenant_claim	*claims;	/* OAuth tokens it takes */
	size_t			 nclaims;
	char			 limits_name[POLICY_NAME_MAX];
	struct limits		*limits;	/* never NULL after loading */
	uint32_t		 max_sandboxes;
	uint32_t		 max_requests;	/* MCP requests in flight */
	struct tenant_path	*paths;
	size_t			 npaths;
	char			 runtime[POLICY_NAME_MAX];	/* "" : none */
	/*
	 * Its download links: the longest one may live (seconds), how many
	 * are served at once (0: it may not share files), and the bytes a
	 * minute all of them serve together (0: no limit).
	 */
	uint64_t		 share_expiry_max;
	uint32_t		 share_downloads;
	uint64_t		 share_rate;
	/* Its one-shot containers, wiped, serve its next runs. */
	int			 reuse;
	/*
	 * Removed by a reload: kept for those who point to it, with no
	 * token or uid, and found by no lookup.
	 */
	int			 gone;
};

enum image_type {
	IMAGE_HOST,		/* read-only view of the host's /usr, /lib... */
	IMAGE_ROOTFS,		/* a root filesystem directory */
};

struct image {
	TAILQ_ENTRY(image)	 entry;
	char			 name[POLICY_NAME_MAX];
	enum image_type		 type;
	char			 path[PATH_MAX];	/* IMAGE_ROOTFS */
	uint32_t		 pool;		/* warm containers kept */
	uint64_t		 pool_idle;	/* ms unclaimed; 0: never */
	char			 runtime[POLICY_NAME_MAX];	/* "" : none */
	/* An image of the store (mcpctl image), found by sandboxd. */
	int			 stored;
	int			 gone;		/* removed from the store since */
	char			 digest[72];	/* "sha256:<hex>"; "" : none */
	char			 source[240];	/* what built it */
	int64_t			 created;	/* seconds since the epoch */
	uint64_t		 size;		/* bytes */
};

struct language {
	TAILQ_ENTRY(language)	 entry;
	char			 name[POLICY_NAME_MAX];
	char			**aliases;
	size_t			 naliases;
	char			 file[POLICY_NAME_MAX];	/* source file name */
	char			*build;		/* NULL: interpreted */
	char			*run;
	char			 image[POLICY_NAME_MAX];
	char			*version;	/* NULL: no probe */
};

#define DEFAULT_AUDIT_EXCERPT	256	/* bytes of code, output, arguments */
#define AUDIT_EXCERPT_MAX	65536

/*
 * An OCI runtime sandboxd may start containers with: the built-in "runc"
 * and "crun", and those a runtime block defines.
 */
enum runtime_kind {
	RUNTIME_RUNC,
	RUNTIME_CRUN,
	RUNTIME_RUNSC,		/* gVisor: a kernel of its own */
};
#define RUNTIME_PLATFORM_MAX	16
#define POLICY_RUNTIMES_MAX	8

/*
 * The network stack a runsc sandbox with egress uses: the host's, in its
 * own namespace (--network=host, the default), or gVisor's own
 * (--network=sandbox).
 */
enum runtime_net {
	RUNTIME_NET_DEFAULT,
	RUNTIME_NET_HOST,
	RUNTIME_NET_SANDBOX,
};

struct runtime {
	char			 name[POLICY_NAME_MAX];
	char			 path[PATH_MAX];
	enum runtime_kind	 kind;
	int			 defined;	/* by a block of the file */
	char			 platform[RUNTIME_PLATFORM_MAX]; /* runsc; "" = its default */
	/* runsc, for sandboxes with egress: whose network stack. */
	enum runtime_net	 network;
};

struct audit_conf {
	int			 required;
	uint32_t		 excerpt;	/* bytes kept beside a digest */
	char			 socket[POLICY_SOCK_MAX];
	char			 database[PATH_MAX];
	char			 user[POLICY_USER_MAX];
	uid_t			 uid;		/* after policy_resolve() */
	gid_t			 gid;
};

/*
 * mcpd as an OAuth 2.1 resource server (the oauth block): JWT access
 * tokens of one issuer, for this server's resource URI, checked against
 * the issuer's keys.
 */
#define OAUTH_URL_MAX		512
#define OAUTH_SCOPE_MAX		128
#define OAUTH_TYPE_MAX		32
#define DEFAULT_OAUTH_LEEWAY	(60ULL * 1000)	/* ms */
#define OAUTH_LEEWAY_MAX	(10ULL * 60 * 1000)
#define DEFAULT_OAUTH_TYPE	"at+jwt"	/* RFC 9068 */

struct oauth_conf {
	int			 enabled;	/* an oauth block was given */
	char			 issuer[OAUTH_URL_MAX];
	/* The resource (RFC 8707): what "aud" must hold. */
	char			 audience[OAUTH_URL_MAX];
	/* A file, a URL, or "": the jwks_uri of the issuer's metadata. */
	char			 jwks[PATH_MAX];
	char			**scopes;	/* every one required */
	size_t			 nscopes;
	char			 type[OAUTH_TYPE_MAX];	/* "typ"; "" : any */
	uint64_t		 leeway;	/* ms of clock skew */
};

struct policy {
	char			 path[PATH_MAX];	/* file loaded */
	uint8_t			 digest[32];	/* SHA-256 of all text read */

	char			 user[POLICY_USER_MAX];	/* mcpd runs as */
	char			 group[POLICY_USER_MAX];	/* "" = user's */
	uid_t			 uid;		/* after policy_resolve() */
	gid_t			 gid;
	gid_t			 group_gid;

	char			 run_dir[PATH_MAX];
	char			 state_dir[PATH_MAX];
	/* The runtime sandboxd uses: its name, binary and kind. */
	char			 runtime[POLICY_NAME_MAX];
	char			 runc[PATH_MAX];
	enum runtime_kind	 runtime_kind;
	char			 runtime_platform[RUNTIME_PLATFORM_MAX];
	struct runtime		 runtimes[POLICY_RUNTIMES_MAX];
	size_t			 nruntimes;
	char			 sandbox_init[PATH_MAX];
	char			 sandbox_socket[POLICY_SOCK_MAX];
	uint32_t		 uid_base;	/* host uid of slot 0's uid 0 */
	uint32_t		 uid_slots;	/* sandboxes at once */

	TAILQ_HEAD(, listen_addr) listens;
	/* The certificate chain and key of the listeners with tls. */
	char			 tls_cert[PATH_MAX];
	char			 tls_key[PATH_MAX];
	/* Lower case; the loopback names are always allowed as hosts. */
	char			**allow_hosts;	/* HTTP Host names */
	size_t			 nallow_hosts;
	char			**allow_origins;	/* browser Origins */
	size_t			 nallow_origins;
	/* Balancers whose forwarding headers count: "ADDRESS/BITS". */
	char			**allow_proxies;
	size_t			 nallow_proxies;
	/* Who may read mcpd's /metrics, beside root on a UNIX socket. */
	uint8_t			(*metrics_tokens)[POLICY_TOKEN_HASH_LEN];
	size_t			 nmetrics_tokens;
	char			**metrics_tenants;
	size_t			 nmetrics_tenants;
	TAILQ_HEAD(, limits)	 limits;
	TAILQ_HEAD(, tenant)	 tenants;
	TAILQ_HEAD(, image)	 images;
	TAILQ_HEAD(, language)	 languages;
	struct audit_conf	 audit;
	struct oauth_conf	 oauth;
	/*
	 * Download links: the origin they are made with, without a
	 * trailing slash ("" : the scheme and Host of the request that
	 * asks), and the seconds a link lives when the tool call names
	 * none, which a tenant's share_expiry_max caps (a larger value is
	 * no error).
	 */
	char			 share_url[OAUTH_URL_MAX];
	uint64_t		 share_expiry;
	/*
	 * This host's short name among several ("" : none), which mcpd
	 * puts in front of the sandbox and session ids it hands out.
	 */
	char			 host_name[POLICY_HOST_NAME_MAX];
};

/*
 * Parse and check a file.  Errors are logged with log_warnx() as
 * "file:line: message"; NULL is returned after the whole file has been read
 * so that every error in it is reported at once.
 */
struct policy	*policy_load(const char *);
/* "runc" or "crun". */
const char	*policy_runtime_kind(enum runtime_kind);
const struct runtime *policy_runtime(const struct policy *, const char *);
const struct runtime *policy_runtime_for(const struct policy *,
		    const struct tenant *, const char *);
void		 policy_runtimes_used(const struct policy *,
		    int [POLICY_RUNTIMES_MAX]);
int		 policy_runtimes_check(const struct policy *,
		    void (*)(const struct runtime *, int, void *), void *);
void		 policy_free(struct policy *);

/*
 * Look up users and groups named in the policy.  Returns 0, or -1 after
 * logging which name does not exist.  which: POLICY_RESOLVE_* bits.
 */
#define POLICY_RESOLVE_MCPD	0x01	/* user, group */
#define POLICY_RESOLVE_AUDIT	0x02	/* audit user */
#define POLICY_RESOLVE_TENANTS	0x04	/* tenant uids */
int		 policy_resolve(struct policy *, int);

/*
 * The tenant uids of next, a policy loaded again while cur runs, in a
 * daemon whose confinement the name service's modules may not work in:
 * names are looked up in the passwd file (/etc/passwd) alone, else taken
 * from cur if it knows them, else read as numbers.  Returns 0, or -1 after
 * logging a name found nowhere.
 */
int		 policy_resolve_reload(struct policy *, const struct policy *,
		    const char *);

/* Which daemon reloads: policy_reload() warns about what it uses. */
#define POLICY_MCPD		0x01
#define POLICY_SANDBOXD		0x02
#define POLICY_AUDITD		0x04

struct policy_changes {
	unsigned int		 tenants_added;
	unsigned int		 tenants_changed;
	unsigned int		 tenants_removed;
	unsigned int		 limits_added;
	unsigned int		 limits_changed;
	unsigned int		 limits_removed;
	int			 allow_changed;	/* allow host, origin, proxy */
	int			 metrics_changed;	/* metrics statements */
	int			 share_changed;	/* share url, share expiry */
	unsigned int		 ignored;	/* need a restart */
};

/*
 * SIGHUP: merge next (loaded and resolved) into cur in place.  Sessions,
 * jobs and sandboxes hold pointers to tenants and limits, so those are
 * updated where they are: new ones are added, removed ones are kept but
 * marked gone.  Tenants' tokens, uids, limits, maxima and share
 * statements, limits values, the allow lists, the metrics readers, share
 * url and share expiry change; every other setting the daemon (named,
 * its POLICY_* bits in who) uses is logged as needing a restart and left
 * as it was.  cur takes the new digest.  next is left to be freed.
 */
void		 policy_reload(struct policy *, struct policy *, int,
		    const char *, struct policy_changes *);
/* "1 tenant added, 2 limits changed", or "nothing changed". */
void		 policy_changes_str(const struct policy_changes *, char *,
		    size_t);

/* Print the policy as a file that policy_load() reads back unchanged. */
void		 policy_dump(FILE *, const struct policy *);

/* Tenants and limits gone in a reload are not found. */
struct limits	*policy_limits(const struct policy *, const char *);
struct image	*policy_image(const struct policy *, const char *);
struct language	*policy_language(const struct policy *, const char *);
struct tenant	*policy_tenant(const struct policy *, const char *);
struct tenant	*policy_tenant_by_uid(const struct policy *, uid_t);
/* Compares against every token of every tenant in constant time. */
struct tenant	*policy_tenant_by_token(const struct policy *,
		    const uint8_t [POLICY_TOKEN_HASH_LEN]);

/* A "metrics token" (in constant time), a "metrics tenant": 1 or 0. */
int		 policy_metrics_token(const struct policy *,
		    const uint8_t [POLICY_TOKEN_HASH_LEN]);
int		 policy_metrics_tenant(const struct policy *,
		    const struct tenant *);

/*
 * Python, JavaScript, sh, bash and C on the host image: what a file with
 * no language statement gets.
 */
void		 policy_default_languages(struct policy *);

/*
 * The programs a language needs: the first word of its version command
 * (else of its build command) and of its run command, unless that word is
 * a path (./main) or the same.  Returns how many, at most max.
 */
size_t		 policy_language_tools(const struct language *,
		    char [][POLICY_NAME_MAX], size_t);

#endif
