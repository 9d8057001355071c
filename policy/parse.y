/*
 * mcpd.conf(5) parser.
 *
 * Each file is read whole before it is tokenized: the digest then covers
 * exactly the bytes parsed, and a line can be checked for its length and
 * for NUL bytes before any of it reaches the lexer.  The parser is pure and
 * every piece of state lives in a struct parse_ctx, so nothing carries over
 * from one policy_load() to the next.
 */

%code requires {
#include "policy.h"

struct parse_ctx;

/* Where a token was read: the file as named in messages, and its line. */
struct ploc {
	const char	*file;
	int		 line;
};
}

%{
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "policy.h"
#include "url.h"
#include "util.h"

#define INCLUDE_MAX	8		/* nesting of include files */
#define CONF_LINE_MAX	8192		/* bytes in a line, without '\n' */
#define CONF_TOKEN_MAX	8192		/* bytes in a word or string */
#define CONF_FILE_MAX	(4 << 20)	/* bytes in one file */
#define PUSHBACK_MAX	4
#define TEXT_MAX	40		/* of a token quoted in a message */
#define EXPECT_MAX	4		/* tokens listed after "expecting" */
#define LEX_BADLINE	(-2)		/* lgetc(): the line was rejected */

#define MS_MINUTE	(60ULL * 1000)
#define MS_HOUR		(60ULL * MS_MINUTE)
#define CPUS_MIN	10ULL		/* thousandths */
#define CPUS_MAX	(1024ULL * 1000)
#define HOST_MAX	253		/* characters of an allowed host */
#define ORIGIN_MAX	300		/* characters of an allowed origin */

/* Top-level statements that may be given once. */
#define SEEN_USER	0x0001
#define SEEN_GROUP	0x0002
#define SEEN_RUN_DIR	0x0004
#define SEEN_STATE_DIR	0x0008
#define SEEN_RUNC	0x0010
#define SEEN_INIT	0x0020
#define SEEN_SOCKET	0x0040
#define SEEN_AUDIT	0x0080
#define SEEN_UIDS	0x0100
#define SEEN_RUNTIME	0x0200
#define SEEN_TLS_CERT	0x0400
#define SEEN_TLS_KEY	0x0800
#define SEEN_OAUTH	0x1000
#define SEEN_SHARE_URL	0x2000
#define SEEN_SHARE_EXPIRY 0x4000
#define SEEN_HOST_NAME	0x8000

/* Fields of a tenant, language or audit block that may be given once. */
#define FIELD_LIMITS	0x0001
#define FIELD_MAX	0x0002
#define FIELD_FILE	0x0004
#define FIELD_BUILD	0x0008
#define FIELD_RUN	0x0010
#define FIELD_IMAGE	0x0020
#define FIELD_VERSION	0x0040
#define FIELD_REQUIRED	0x0080
#define FIELD_SOCKET	0x0100
#define FIELD_DATABASE	0x0200
#define FIELD_USER	0x0400
#define FIELD_TOKEN	0x0800		/* may be repeated */
#define FIELD_UID	0x1000		/* may be repeated */
#define FIELD_REQUESTS	0x2000
#define FIELD_EXCERPT	0x4000
#define FIELD_PATH	0x8000
#define FIELD_KIND	0x10000
#define FIELD_PLATFORM	0x20000
#define FIELD_RUNTIME	0x40000
#define FIELD_NETWORK	0x80000
#define FIELD_ISSUER	0x100000
#define FIELD_AUDIENCE	0x200000
#define FIELD_JWKS	0x400000
#define FIELD_LEEWAY	0x800000
#define FIELD_TYPE	0x1000000
#define FIELD_CLAIM	0x2000000	/* may be repeated */
#define FIELD_SCOPE	0x4000000	/* may be repeated */
#define FIELD_SHARE_EXPIRY 0x8000000
#define FIELD_SHARE_DOWNLOADS 0x10000000
#define FIELD_SHARE_RATE 0x20000000
#define FIELD_REUSE	0x40000000

#define YYLLOC_DEFAULT(cur, rhs, n)					\
	do {								\
		if (n)							\
			(cur) = YYRHSLOC(rhs, 1);			\
		else							\
			(cur) = YYRHSLOC(rhs, 0);			\
	} while (0)
%}

%define api.pure full
%define parse.error custom
%define api.location.type {struct ploc}
%locations
%param {struct parse_ctx *ctx}

%union {
	char		*string;
	long long	 number;
}

%code {
struct file {
	struct file	*parent;	/* the including file */
	struct file	*next;		/* every file opened, freed at the end */
	char		*name;
	char		*buf;
	size_t		 len;
	size_t		 pos;
	int		 lineno;
	int		 bol;		/* next byte starts a line */
	int		 eof;		/* the final end of line was returned */
	dev_t		 dev;
	ino_t		 ino;
};

struct macro {
	struct macro	*next;
	char		*name;
	char		*value;
};

/* A name checked once the whole file is read, and where it was given. */
struct ref {
	struct ploc	 loc;
	void		*obj;		/* struct tenant, language, listen_addr */
};

struct parse_ctx {
	struct policy	*p;
	struct file	*file;		/* being read */
	struct file	*files;		/* all files opened */
	int		 depth;		/* of include nesting */
	int		 errors;
	int		 pushback[PUSHBACK_MAX];
	size_t		 npushback;
	struct macro	*macros;
	char		*include;	/* to open after this line */
	struct ploc	 include_loc;
	crypto_hash_sha256_state sha;

	char		 tok[CONF_TOKEN_MAX + 1];
	int		 word;		/* last token was a bare word */
	char		 last[TEXT_MAX + 4];	/* text of the last token */
	char		 prev[TEXT_MAX + 4];	/* and of the one before */
	int		 last_word;
	int		 last_token;
	int		 prev_token;

	uint32_t	 seen;		/* SEEN_* */
	uint32_t	 fields;	/* FIELD_* of the current block */
	struct ploc	 block_loc;	/* of the current block's first line */
	int		 syntax_errors;	/* lines that could not be parsed */
	int		 block_syntax;	/* syntax_errors before this block */
	struct limits	*limits;
	struct tenant	*tenant;
	struct language	*language;
	struct runtime	*runtime;	/* the block being read */
	struct ploc	 runtime_loc;	/* of the runtime statement */
	struct ploc	 runtime_locs[POLICY_RUNTIMES_MAX];	/* blocks */
	struct ploc	 run_dir_loc;
	struct ploc	 tls_loc;	/* the first listener with tls */
	struct ploc	 claim_loc;	/* the first tenant claim */
	int		 nclaims;
	int		 tls_listens;
	struct ploc	 state_dir_loc;
	uint64_t	 pool_idle;	/* of the image being read */

	struct ref	*tenant_refs;	/* the limits each tenant names */
	size_t		 ntenant_refs;
	struct ref	*image_refs;	/* the image each language names */
	size_t		 nimage_refs;
	struct ref	*listen_refs;	/* listeners that name a tenant */
	size_t		 nlisten_refs;
	struct ref	*metrics_refs;	/* the tenants metrics names */
	size_t		 nmetrics_refs;
	struct ref	*runtime_refs;	/* tenants' and images' runtimes */
	size_t		 nruntime_refs;
};

static int	 yylex(YYSTYPE *, YYLTYPE *, struct parse_ctx *);
static void	 yyerror(YYLTYPE *, struct parse_ctx *, const char *);

static void	 perr(struct parse_ctx *, const struct ploc *, const char *,
		    ...) __attribute__((__format__(printf, 3, 4)));
static void	 macro_set(struct parse_ctx *, const struct ploc *, char *,
		    char *);
static void	 include_later(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 set_user(struct parse_ctx *, const struct ploc *,
		    uint32_t *, uint32_t, const char *, char *, char *);
static void	 set_path(struct parse_ctx *, const struct ploc *,
		    uint32_t *, uint32_t, const char *, char *, char *, size_t);
static long long number(struct parse_ctx *, const struct ploc *,
		    const char *, char *, uint64_t, uint64_t);
static long long mode(struct parse_ctx *, const struct ploc *, char *);
/* What a TCP listen statement says of its transport. */
enum { LISTEN_PLAIN, LISTEN_TLS, LISTEN_PLAINTEXT };

static void	 listen_tcp(struct parse_ctx *, const struct ploc *, char *,
		    long long, char *, long long);
static void	 listen_unix(struct parse_ctx *, const struct ploc *, char *,
		    long long, char *);
static void	 allow_host(struct parse_ctx *, const struct ploc *, char *);
static void	 allow_proxy(struct parse_ctx *, const struct ploc *, char *);
static void	 allow_origin(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 image_add(struct parse_ctx *, const struct ploc *, char *,
		    enum image_type, char *, long long, char *);
static void	 limits_begin(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 limits_size(struct parse_ctx *, const struct ploc *,
		    uint32_t, char *);
static void	 limits_cpus(struct parse_ctx *, const struct ploc *, char *);
static void	 limits_pids(struct parse_ctx *, const struct ploc *, char *);
static void	 limits_timeout(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 limits_idle(struct parse_ctx *, const struct ploc *, char *);
static void	 pool_idle(struct parse_ctx *, const struct ploc *, char *);
static void	 limits_lifetime(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 limits_duration(struct parse_ctx *, const struct ploc *,
		    uint32_t, const char *, char *, uint64_t, uint64_t,
		    const char *, uint64_t *);
static void	 set_uids(struct parse_ctx *, const struct ploc *, char *,
		    char *);
static void	 limits_network(struct parse_ctx *, const struct ploc *,
		    enum net_mode);
static void	 tenant_begin(struct parse_ctx *, const struct ploc *, char *);
static void	 tenant_token(struct parse_ctx *, const struct ploc *, char *);
static void	 tenant_uid(struct parse_ctx *, const struct ploc *, char *);
static void	 tenant_limits(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 tenant_max(struct parse_ctx *, const struct ploc *, char *);
static void	 tenant_runtime(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 tenant_requests(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 tenant_path(struct parse_ctx *, const struct ploc *, char *,
		    int);
static void	 tenant_share_expiry(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 tenant_share_downloads(struct parse_ctx *,
		    const struct ploc *, char *);
static void	 tenant_share_rate(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 tenant_reuse(struct parse_ctx *, const struct ploc *, int);
static void	 tenant_end(struct parse_ctx *);
static void	 language_begin(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 language_alias(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 language_file(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 language_cmd(struct parse_ctx *, const struct ploc *,
		    uint32_t, const char *, char *, char **);
static void	 language_image(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 language_end(struct parse_ctx *);
static void	 audit_begin(struct parse_ctx *, const struct ploc *);
static void	 audit_required(struct parse_ctx *, const struct ploc *,
		    int);
static void	 audit_excerpt(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 metrics_token(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 metrics_tenant(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 runtime_use(struct parse_ctx *, const struct ploc *, char *);
static void	 runtime_begin(struct parse_ctx *, const struct ploc *, char *);
static void	 runtime_path(struct parse_ctx *, const struct ploc *, char *);
static void	 runtime_kind(struct parse_ctx *, const struct ploc *, char *);
static void	 runtime_network(struct parse_ctx *, const struct ploc *,
		    enum runtime_net);
static void	 runtime_platform(struct parse_ctx *, const struct ploc *,
		    char *);
static void	 oauth_begin(struct parse_ctx *, const struct ploc *);
static void	 oauth_url(struct parse_ctx *, const struct ploc *, uint32_t,
		    const char *, char *, char *, size_t);
static void	 oauth_jwks(struct parse_ctx *, const struct ploc *, char *);
static void	 oauth_scope(struct parse_ctx *, const struct ploc *, char *);
static void	 oauth_leeway(struct parse_ctx *, const struct ploc *, char *);
static void	 oauth_type(struct parse_ctx *, const struct ploc *, char *);
static void	 oauth_end(struct parse_ctx *);
static void	 tenant_claim(struct parse_ctx *, const struct ploc *, char *,
		    char *);
static void	 share_url(struct parse_ctx *, const struct ploc *, char *);
static void	 host_name(struct parse_ctx *, const struct ploc *, char *);
static void	 share_expiry(struct parse_ctx *, const struct ploc *, char *);
}

%token	INCLUDE "include" USER "user" GROUP "group" RUN "run"
%token	DIRECTORY "directory" STATE "state" RUNC "runc"
%token	SANDBOXINIT "sandbox-init" SANDBOX "sandbox" SOCKET "socket"
%token	LISTEN "listen" ON "on" PORT "port" UNIX "unix" MODE "mode"
%token	LIMITS "limits" MEMORY "memory" CPUS "cpus" PIDS "pids"
%token	TIMEOUT "timeout" OUTPUT "output" DISK "disk" NETWORK "network"
%token	NONE "none" EGRESS "egress" IDLE "idle" LIFETIME "lifetime"
%token	UIDS "uids"
%token	IMAGE "image" HOST "host" ROOTFS "rootfs" POOL "pool"
%token	TENANT "tenant" TOKEN "token" UID "uid" MAXIMUM "max"
%token	SANDBOXES "sandboxes" REQUESTS "requests" LOCAL "local" PATH "path"
%token	READONLY "read-only" ALLOW "allow" ORIGIN "origin"
%token	LANGUAGE "language" ALIAS "alias" FILENAME "file" BUILD "build"
%token	VERSION "version" RUNTIME "runtime" KIND "kind" PLATFORM "platform"
%token	AUDIT "audit" REQUIRED "required" YES "yes" NO "no"
%token	DATABASE "database" EXCERPT "excerpt" METRICS "metrics"
%token	TLS "tls" CERTIFICATE "certificate" KEY "key" PLAINTEXT "plaintext"
%token	OAUTH "oauth" ISSUER "issuer" AUDIENCE "audience" JWKS "jwks"
%token	SCOPE "scope" LEEWAY "leeway" TYPE "type" CLAIM "claim" ANY "any"
%token	SHARE "share" URL "url" EXPIRY "expiry" DOWNLOADS "downloads"
%token	RATE "rate" NAME "name" PROXY "proxy" REUSE "reuse"
%token	NL "end of line" LBRACE "{" RBRACE "}" EQUAL "="
%token	<string> STRING "string" NUMBER "number"
%type	<string> string imgname rtname macroname listentenant imgruntime
%type	<number> pool unixmode yesno readonly listentls
%destructor { free($$); } <string>

%%

grammar		: %empty
		| grammar NL
		| grammar INCLUDE string NL	{ include_later(ctx, &@2, $3); }
		| grammar varset NL
		| grammar main NL
		| grammar limits NL
		| grammar tenant NL
		| grammar language NL
		| grammar runtime NL
		| grammar audit NL
		| grammar oauth NL
		| grammar error NL		{ yyerrok; }
		;

/*
 * "local" was a word like any other until "local path", and "metrics"
 * until the metrics statements, "runtime" and "kind" until runtime
 * blocks, and the words of the oauth block and of the share statements:
 * they remain values, so that files naming a tenant "local" or "metrics"
 * (or a macro "local") still load.  Only "any" is a keyword alone, for
 * "claim NAME any".
 */
string		: STRING
		| NUMBER
		| LOCAL				{ $$ = xstrdup("local"); }
		| METRICS			{ $$ = xstrdup("metrics"); }
		| RUNTIME			{ $$ = xstrdup("runtime"); }
		| KIND				{ $$ = xstrdup("kind"); }
		| PLATFORM			{ $$ = xstrdup("platform"); }
		| OAUTH				{ $$ = xstrdup("oauth"); }
		| ISSUER			{ $$ = xstrdup("issuer"); }
		| AUDIENCE			{ $$ = xstrdup("audience"); }
		| JWKS				{ $$ = xstrdup("jwks"); }
		| SCOPE				{ $$ = xstrdup("scope"); }
		| LEEWAY			{ $$ = xstrdup("leeway"); }
		| TYPE				{ $$ = xstrdup("type"); }
		| CLAIM				{ $$ = xstrdup("claim"); }
		| SHARE				{ $$ = xstrdup("share"); }
		| URL				{ $$ = xstrdup("url"); }
		| EXPIRY			{ $$ = xstrdup("expiry"); }
		| DOWNLOADS			{ $$ = xstrdup("downloads"); }
		| RATE				{ $$ = xstrdup("rate"); }
		| NAME				{ $$ = xstrdup("name"); }
		| PROXY				{ $$ = xstrdup("proxy"); }
		| REUSE				{ $$ = xstrdup("reuse"); }
		;

/* The built-in image's name is also a keyword. */
imgname		: string
		| HOST				{ $$ = xstrdup(HOST_IMAGE); }
		;

/* A runtime's name: "runc" is a keyword too. */
rtname		: string
		| RUNC				{ $$ = xstrdup("runc"); }
		;

macroname	: STRING
		| LOCAL				{ $$ = xstrdup("local"); }
		;

varset		: macroname EQUAL string	{ macro_set(ctx, &@1, $1, $3); }
		;

main		: USER string {
			set_user(ctx, &@1, &ctx->seen, SEEN_USER, "user", $2,
			    ctx->p->user);
		}
		| GROUP string {
			set_user(ctx, &@1, &ctx->seen, SEEN_GROUP, "group", $2,
			    ctx->p->group);
		}
		| RUN DIRECTORY string {
			ctx->run_dir_loc = @1;
			set_path(ctx, &@1, &ctx->seen, SEEN_RUN_DIR,
			    "run directory", $3, ctx->p->run_dir,
			    sizeof(ctx->p->run_dir));
		}
		| STATE DIRECTORY string {
			ctx->state_dir_loc = @1;
			set_path(ctx, &@1, &ctx->seen, SEEN_STATE_DIR,
			    "state directory", $3, ctx->p->state_dir,
			    sizeof(ctx->p->state_dir));
		}
		| RUNC string {
			set_path(ctx, &@1, &ctx->seen, SEEN_RUNC, "runc", $2,
			    ctx->p->runtimes[0].path,
			    sizeof(ctx->p->runtimes[0].path));
		}
		| RUNTIME rtname {
			runtime_use(ctx, &@1, $2);
		}
		| SANDBOXINIT string {
			set_path(ctx, &@1, &ctx->seen, SEEN_INIT,
			    "sandbox-init", $2, ctx->p->sandbox_init,
			    sizeof(ctx->p->sandbox_init));
		}
		| SANDBOX SOCKET string {
			set_path(ctx, &@1, &ctx->seen, SEEN_SOCKET,
			    "sandbox socket", $3, ctx->p->sandbox_socket,
			    sizeof(ctx->p->sandbox_socket));
		}
		| SANDBOX UIDS NUMBER NUMBER {
			set_uids(ctx, &@1, $3, $4);
		}
		| LISTEN ON string PORT NUMBER listentenant listentls {
			listen_tcp(ctx, &@1, $3,
			    number(ctx, &@1, "port", $5, 1, 65535), $6, $7);
		}
		| TLS CERTIFICATE string {
			set_path(ctx, &@1, &ctx->seen, SEEN_TLS_CERT,
			    "tls certificate", $3, ctx->p->tls_cert,
			    sizeof(ctx->p->tls_cert));
		}
		| TLS KEY string {
			set_path(ctx, &@1, &ctx->seen, SEEN_TLS_KEY,
			    "tls key", $3, ctx->p->tls_key,
			    sizeof(ctx->p->tls_key));
		}
		| LISTEN ON UNIX string unixmode listentenant {
			listen_unix(ctx, &@1, $4, $5, $6);
		}
		| ALLOW HOST string		{ allow_host(ctx, &@1, $3); }
		| ALLOW ORIGIN string		{ allow_origin(ctx, &@1, $3); }
		| ALLOW PROXY string		{ allow_proxy(ctx, &@1, $3); }
		| METRICS TOKEN string		{ metrics_token(ctx, &@1, $3); }
		| METRICS TENANT string		{ metrics_tenant(ctx, &@1, $3); }
		| IMAGE imgname HOST pool imgruntime {
			image_add(ctx, &@1, $2, IMAGE_HOST, NULL, $4, $5);
		}
		| IMAGE imgname ROOTFS string pool imgruntime {
			image_add(ctx, &@1, $2, IMAGE_ROOTFS, $4, $5, $6);
		}
		| SHARE URL string		{ share_url(ctx, &@1, $3); }
		| SHARE EXPIRY string		{ share_expiry(ctx, &@1, $3); }
		| HOST NAME string		{ host_name(ctx, &@1, $3); }
		;

listentenant	: %empty			{ $$ = NULL; }
		| TENANT string			{ $$ = $2; }
		;

listentls	: %empty			{ $$ = LISTEN_PLAIN; }
		| TLS				{ $$ = LISTEN_TLS; }
		| PLAINTEXT			{ $$ = LISTEN_PLAINTEXT; }
		;

unixmode	: %empty			{ $$ = DEFAULT_UNIX_MODE; }
		| MODE NUMBER			{ $$ = mode(ctx, &@1, $2); }
		;

pool		: %empty {
			$$ = DEFAULT_POOL;
			ctx->pool_idle = DEFAULT_POOL_IDLE;
		}
		| POOL NUMBER poolidle {
			$$ = number(ctx, &@1, "pool", $2, 0, 64);
		}
		;

imgruntime	: %empty			{ $$ = NULL; }
		| RUNTIME rtname		{ $$ = $2; }
		;

poolidle	: %empty		{ ctx->pool_idle = DEFAULT_POOL_IDLE; }
		| IDLE string		{ pool_idle(ctx, &@1, $2); }
		;

runtime		: runtimehead LBRACE runtimeopts RBRACE
		;

runtimehead	: RUNTIME rtname		{ runtime_begin(ctx, &@1, $2); }
		;

runtimeopts	: %empty
		| runtimeopts NL
		| runtimeopts runtimeopt NL
		| runtimeopts error NL		{ yyerrok; }
		;

runtimeopt	: PATH string			{ runtime_path(ctx, &@1, $2); }
		/* Its kind is a runtime's name: "runc" too. */
		| KIND rtname			{ runtime_kind(ctx, &@1, $2); }
		| PLATFORM string		{ runtime_platform(ctx, &@1, $2); }
		| NETWORK HOST			{
			runtime_network(ctx, &@1, RUNTIME_NET_HOST);
		}
		| NETWORK SANDBOX		{
			runtime_network(ctx, &@1, RUNTIME_NET_SANDBOX);
		}
		| NETWORK string		{
			perr(ctx, &@2, "network \"%s\": host or sandbox", $2);
			free($2);
		}
		;

limits		: limitshead LBRACE limitsopts RBRACE
		;

limitshead	: LIMITS string			{ limits_begin(ctx, &@1, $2); }
		;

limitsopts	: %empty
		| limitsopts NL
		| limitsopts limitsopt NL
		| limitsopts error NL		{ yyerrok; }
		;

limitsopt	: MEMORY string		{ limits_size(ctx, &@1, LIMIT_MEMORY, $2); }
		| CPUS string			{ limits_cpus(ctx, &@1, $2); }
		| PIDS NUMBER			{ limits_pids(ctx, &@1, $2); }
		| TIMEOUT string		{ limits_timeout(ctx, &@1, $2); }
		| OUTPUT string		{ limits_size(ctx, &@1, LIMIT_OUTPUT, $2); }
		| DISK string			{ limits_size(ctx, &@1, LIMIT_DISK, $2); }
		| NETWORK NONE		{ limits_network(ctx, &@1, NET_NONE); }
		| NETWORK EGRESS	{ limits_network(ctx, &@1, NET_EGRESS); }
		| IDLE string			{ limits_idle(ctx, &@1, $2); }
		| LIFETIME string		{ limits_lifetime(ctx, &@1, $2); }
		;

tenant		: tenanthead LBRACE tenantopts RBRACE	{ tenant_end(ctx); }
		;

tenanthead	: TENANT string			{ tenant_begin(ctx, &@1, $2); }
		;

tenantopts	: %empty
		| tenantopts NL
		| tenantopts tenantopt NL
		| tenantopts error NL		{ yyerrok; }
		;

tenantopt	: TOKEN string			{ tenant_token(ctx, &@1, $2); }
		| UID string			{ tenant_uid(ctx, &@1, $2); }
		| LIMITS string			{ tenant_limits(ctx, &@1, $2); }
		| MAXIMUM SANDBOXES NUMBER	{ tenant_max(ctx, &@1, $3); }
		| MAXIMUM REQUESTS NUMBER	{ tenant_requests(ctx, &@1, $3); }
		| LOCAL PATH string readonly	{ tenant_path(ctx, &@1, $3, $4); }
		| RUNTIME rtname		{ tenant_runtime(ctx, &@1, $2); }
		| CLAIM string string		{ tenant_claim(ctx, &@1, $2, $3); }
		| CLAIM string ANY		{ tenant_claim(ctx, &@1, $2, NULL); }
		| SHARE MAXIMUM EXPIRY string {
			tenant_share_expiry(ctx, &@1, $4);
		}
		| SHARE DOWNLOADS NUMBER {
			tenant_share_downloads(ctx, &@1, $3);
		}
		| SHARE RATE string		{ tenant_share_rate(ctx, &@1, $3); }
		| SHARE RATE NONE		{ tenant_share_rate(ctx, &@1, NULL); }
		| REUSE yesno			{ tenant_reuse(ctx, &@1, $2); }
		;

readonly	: %empty			{ $$ = 0; }
		| READONLY			{ $$ = 1; }
		;

language	: langhead LBRACE langopts RBRACE	{ language_end(ctx); }
		;

langhead	: LANGUAGE string		{ language_begin(ctx, &@1, $2); }
		;

langopts	: %empty
		| langopts NL
		| langopts langopt NL
		| langopts error NL		{ yyerrok; }
		;

langopt		: ALIAS string			{ language_alias(ctx, &@1, $2); }
		| FILENAME string		{ language_file(ctx, &@1, $2); }
		| BUILD string {
			language_cmd(ctx, &@1, FIELD_BUILD, "build", $2,
			    &ctx->language->build);
		}
		| RUN string {
			language_cmd(ctx, &@1, FIELD_RUN, "run", $2,
			    &ctx->language->run);
		}
		| VERSION string {
			language_cmd(ctx, &@1, FIELD_VERSION, "version", $2,
			    &ctx->language->version);
		}
		| IMAGE imgname			{ language_image(ctx, &@1, $2); }
		;

audit		: audithead LBRACE auditopts RBRACE
		;

audithead	: AUDIT				{ audit_begin(ctx, &@1); }
		;

auditopts	: %empty
		| auditopts NL
		| auditopts auditopt NL
		| auditopts error NL		{ yyerrok; }
		;

auditopt	: REQUIRED yesno		{ audit_required(ctx, &@1, $2); }
		| SOCKET string {
			set_path(ctx, &@1, &ctx->fields, FIELD_SOCKET,
			    "audit socket", $2, ctx->p->audit.socket,
			    sizeof(ctx->p->audit.socket));
		}
		| DATABASE string {
			set_path(ctx, &@1, &ctx->fields, FIELD_DATABASE,
			    "audit database", $2, ctx->p->audit.database,
			    sizeof(ctx->p->audit.database));
		}
		| USER string {
			set_user(ctx, &@1, &ctx->fields, FIELD_USER,
			    "audit user", $2, ctx->p->audit.user);
		}
		| EXCERPT string		{ audit_excerpt(ctx, &@1, $2); }
		;

oauth		: oauthhead LBRACE oauthopts RBRACE	{ oauth_end(ctx); }
		;

oauthhead	: OAUTH				{ oauth_begin(ctx, &@1); }
		;

oauthopts	: %empty
		| oauthopts NL
		| oauthopts oauthopt NL
		| oauthopts error NL		{ yyerrok; }
		;

oauthopt	: ISSUER string {
			oauth_url(ctx, &@1, FIELD_ISSUER, "issuer", $2,
			    ctx->p->oauth.issuer, sizeof(ctx->p->oauth.issuer));
		}
		| AUDIENCE string {
			oauth_url(ctx, &@1, FIELD_AUDIENCE, "audience", $2,
			    ctx->p->oauth.audience,
			    sizeof(ctx->p->oauth.audience));
		}
		| JWKS string			{ oauth_jwks(ctx, &@1, $2); }
		| SCOPE string			{ oauth_scope(ctx, &@1, $2); }
		| LEEWAY string			{ oauth_leeway(ctx, &@1, $2); }
		| TOKEN TYPE string		{ oauth_type(ctx, &@1, $3); }
		| TOKEN TYPE ANY		{ oauth_type(ctx, &@1, NULL); }
		;

yesno		: YES				{ $$ = 1; }
		| NO				{ $$ = 0; }
		;

%%

static const struct keyword {
	const char	*word;
	int		 token;
} keywords[] = {
	{ "alias",		ALIAS },
	{ "allow",		ALLOW },
	{ "any",		ANY },
	{ "audience",		AUDIENCE },
	{ "audit",		AUDIT },
	{ "build",		BUILD },
	{ "certificate",	CERTIFICATE },
	{ "claim",		CLAIM },
	{ "cpus",		CPUS },
	{ "database",		DATABASE },
	{ "directory",		DIRECTORY },
	{ "disk",		DISK },
	{ "downloads",		DOWNLOADS },
	{ "egress",		EGRESS },
	{ "excerpt",		EXCERPT },
	{ "expiry",		EXPIRY },
	{ "file",		FILENAME },
	{ "group",		GROUP },
	{ "host",		HOST },
	{ "idle",		IDLE },
	{ "image",		IMAGE },
	{ "include",		INCLUDE },
	{ "issuer",		ISSUER },
	{ "jwks",		JWKS },
	{ "key",		KEY },
	{ "kind",		KIND },
	{ "language",		LANGUAGE },
	{ "leeway",		LEEWAY },
	{ "lifetime",		LIFETIME },
	{ "limits",		LIMITS },
	{ "listen",		LISTEN },
	{ "local",		LOCAL },
	{ "max",		MAXIMUM },
	{ "memory",		MEMORY },
	{ "metrics",		METRICS },
	{ "mode",		MODE },
	{ "name",		NAME },
	{ "network",		NETWORK },
	{ "no",			NO },
	{ "none",		NONE },
	{ "oauth",		OAUTH },
	{ "on",			ON },
	{ "origin",		ORIGIN },
	{ "output",		OUTPUT },
	{ "path",		PATH },
	{ "pids",		PIDS },
	{ "plaintext",		PLAINTEXT },
	{ "platform",		PLATFORM },
	{ "pool",		POOL },
	{ "port",		PORT },
	{ "proxy",		PROXY },
	{ "rate",		RATE },
	{ "read-only",		READONLY },
	{ "requests",		REQUESTS },
	{ "required",		REQUIRED },
	{ "reuse",		REUSE },
	{ "rootfs",		ROOTFS },
	{ "run",		RUN },
	{ "runc",		RUNC },
	{ "runtime",		RUNTIME },
	{ "sandbox",		SANDBOX },
	{ "sandbox-init",	SANDBOXINIT },
	{ "sandboxes",		SANDBOXES },
	{ "scope",		SCOPE },
	{ "share",		SHARE },
	{ "socket",		SOCKET },
	{ "state",		STATE },
	{ "tenant",		TENANT },
	{ "timeout",		TIMEOUT },
	{ "tls",		TLS },
	{ "token",		TOKEN },
	{ "type",		TYPE },
	{ "uid",		UID },
	{ "uids",		UIDS },
	{ "unix",		UNIX },
	{ "url",		URL },
	{ "user",		USER },
	{ "version",		VERSION },
	{ "yes",		YES },
};

/* Sizes of resource limits, with their ranges as the man page gives them. */
static const struct size_field {
	uint32_t	 bit;
	const char	*name;
	uint64_t	 min;
	uint64_t	 max;
	const char	*range;
} size_fields[] = {
	{ LIMIT_MEMORY,	"memory",	4ULL << 20,	1ULL << 40,	"4M..1T" },
	{ LIMIT_OUTPUT,	"output",	1ULL << 10,	1ULL << 30,	"1K..1G" },
	{ LIMIT_DISK,	"disk",		1ULL << 20,	1ULL << 40,	"1M..1T" },
};

static void
perr(struct parse_ctx *ctx, const struct ploc *loc, const char *fmt, ...)
{
	char	 msg[1024];
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s:%d: %s", loc->file, loc->line, msg);
	ctx->errors++;
}

static void
yyerror(YYLTYPE *loc, struct parse_ctx *ctx, const char *msg)
{
	perr(ctx, loc, "%s", msg);
}

/* How a token reads in a syntax error. */
static const char *
describe(struct parse_ctx *ctx, yysymbol_kind_t sym, int with_text,
    char *buf, size_t size)
{
	switch (sym) {
	case YYSYMBOL_STRING:
		if (!with_text)
			return "string";
		(void)snprintf(buf, size, "string \"%s\"", ctx->last);
		return buf;
	case YYSYMBOL_NUMBER:
		if (!with_text)
			return "number";
		(void)snprintf(buf, size, "number %s", ctx->last);
		return buf;
	case YYSYMBOL_NL:
	case YYSYMBOL_YYEOF:
	case YYSYMBOL_YYUNDEF:
		return yysymbol_name(sym);
	default:
		(void)snprintf(buf, size, "\"%s\"", yysymbol_name(sym));
		return buf;
	}
}

/*
 * "local", "metrics", "runtime", "kind" and the words of the oauth block
 * and of the share statements may stand wherever a string may, and go
 * without saying.
 */
static int
unlist_local(yysymbol_kind_t *expected, int n)
{
	int	 i, j, string = 0;

	for (i = 0; i < n; i++)
		if (expected[i] == YYSYMBOL_STRING)
			string = 1;
	if (!string)
		return n;
	for (i = j = 0; i < n; i++)
		if (expected[i] != YYSYMBOL_LOCAL &&
		    expected[i] != YYSYMBOL_METRICS &&
		    expected[i] != YYSYMBOL_RUNTIME &&
		    expected[i] != YYSYMBOL_KIND &&
		    expected[i] != YYSYMBOL_PLATFORM &&
		    expected[i] != YYSYMBOL_RUNC &&
		    expected[i] != YYSYMBOL_OAUTH &&
		    expected[i] != YYSYMBOL_ISSUER &&
		    expected[i] != YYSYMBOL_AUDIENCE &&
		    expected[i] != YYSYMBOL_JWKS &&
		    expected[i] != YYSYMBOL_SCOPE &&
		    expected[i] != YYSYMBOL_LEEWAY &&
		    expected[i] != YYSYMBOL_TYPE &&
		    expected[i] != YYSYMBOL_CLAIM &&
		    expected[i] != YYSYMBOL_SHARE &&
		    expected[i] != YYSYMBOL_URL &&
		    expected[i] != YYSYMBOL_EXPIRY &&
		    expected[i] != YYSYMBOL_DOWNLOADS &&
		    expected[i] != YYSYMBOL_RATE &&
		    expected[i] != YYSYMBOL_NAME &&
		    expected[i] != YYSYMBOL_PROXY &&
		    expected[i] != YYSYMBOL_REUSE)
			expected[j++] = expected[i];
	return j;
}

/*
 * Bison's own messages neither show the offending text nor quote keywords;
 * a bare word where only keywords may stand is most likely a misspelt one.
 */
static int
yyreport_syntax_error(const yypcontext_t *yc, struct parse_ctx *ctx)
{
	yysymbol_kind_t	 expected[YYNTOKENS];
	yysymbol_kind_t	 sym = yypcontext_token(yc);
	const YYLTYPE	*loc = yypcontext_location(yc);
	char		 msg[512], buf[TEXT_MAX + 32];
	size_t		 len;
	int		 i, n;

	ctx->syntax_errors++;
	n = unlist_local(expected,
	    yypcontext_expected_tokens(yc, expected, YYNTOKENS));
	if (sym == YYSYMBOL_YYEOF && n > EXPECT_MAX) {
		/* The end of the file inside a block: say what is missing. */
		for (i = 0; i < n; i++)
			if (expected[i] == YYSYMBOL_RBRACE) {
				expected[0] = YYSYMBOL_RBRACE;
				n = 1;
				break;
			}
	}
	if (n > EXPECT_MAX)
		n = 0;
	if (n == 1 && expected[0] == YYSYMBOL_EQUAL &&
	    ctx->prev_token != LOCAL) {
		/* A top-level line that starts with an unknown word. */
		perr(ctx, loc, "syntax error, unknown keyword \"%s\"",
		    ctx->prev);
		return 0;
	}
	if (n == 0 && sym == YYSYMBOL_STRING && ctx->last_word) {
		perr(ctx, loc, "syntax error, unknown keyword \"%s\"",
		    ctx->last);
		return 0;
	}
	len = (size_t)snprintf(msg, sizeof(msg), "syntax error, unexpected %s",
	    describe(ctx, sym, 1, buf, sizeof(buf)));
	for (i = 0; i < n && len < sizeof(msg); i++)
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s",
		    i == 0 ? ", expecting " : " or ",
		    describe(ctx, expected[i], 0, buf, sizeof(buf)));
	perr(ctx, loc, "%s", msg);
	return 0;
}

/*
 * Input.
 */

/* Read a whole file, sized by fstat() but ready for it to have grown. */
static int
file_read(int fd, size_t hint, char **bufp, size_t *lenp)
{
	char	*buf;
	size_t	 len = 0, size;
	ssize_t	 n;

	size = (hint < CONF_FILE_MAX ? hint : CONF_FILE_MAX) + 1;
	buf = xmalloc(size);
	for (;;) {
		if (len == size) {
			if (size > CONF_FILE_MAX) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			size = size > CONF_FILE_MAX / 2 ? CONF_FILE_MAX + 1 :
			    size * 2;
			buf = xreallocarray(buf, size, 1);
		}
		n = read(fd, buf + len, size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

static void
file_error(struct parse_ctx *ctx, const struct ploc *from, const char *name,
    const char *why)
{
	if (from == NULL) {
		log_warnx("%s: %s", name, why);
		ctx->errors++;
	} else
		perr(ctx, from, "include \"%s\": %s", name, why);
}

/*
 * Open a file and make it the one read.  from is where it was included,
 * NULL for the main file.
 */
static int
file_push(struct parse_ctx *ctx, const char *name, const struct ploc *from)
{
	struct file	*f, *up;
	struct stat	 st;
	char		*buf;
	size_t		 len;
	int		 fd;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		file_error(ctx, from, name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		file_error(ctx, from, name, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		file_error(ctx, from, name, "not a regular file");
		close(fd);
		return -1;
	}
	for (up = ctx->file; up != NULL; up = up->parent)
		if (up->dev == st.st_dev && up->ino == st.st_ino) {
			file_error(ctx, from, name, "include cycle");
			close(fd);
			return -1;
		}
	if (file_read(fd, (size_t)st.st_size, &buf, &len) == -1) {
		file_error(ctx, from, name, errno == EFBIG ?
		    "file too large (more than 4 MB)" : strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	crypto_hash_sha256_update(&ctx->sha, (unsigned char *)buf, len);

	f = xcalloc(1, sizeof(*f));
	f->name = xstrdup(name);
	f->buf = buf;
	f->len = len;
	f->lineno = 1;
	f->bol = 1;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->parent = ctx->file;
	f->next = ctx->files;
	ctx->files = f;
	ctx->file = f;
	return 0;
}

/* Relative includes are found beside the file that includes them. */
static void
include_push(struct parse_ctx *ctx)
{
	char		*name = ctx->include, *path;
	const char	*dir = ctx->file->name, *slash;

	ctx->include = NULL;
	slash = strrchr(dir, '/');
	if (name[0] == '/' || slash == NULL)
		path = xstrdup(name);
	else
		(void)xasprintf(&path, "%.*s/%s", (int)(slash - dir), dir,
		    name);
	if (ctx->depth >= INCLUDE_MAX)
		perr(ctx, &ctx->include_loc,
		    "include \"%s\": nested too deeply (more than %d)", path,
		    INCLUDE_MAX);
	else if (file_push(ctx, path, &ctx->include_loc) == 0)
		ctx->depth++;
	free(path);
	free(name);
}

static void
lungetc(struct parse_ctx *ctx, int c)
{
	if (ctx->npushback >= PUSHBACK_MAX)
		fatalx("%s: pushback buffer full", __func__);
	ctx->pushback[ctx->npushback++] = c;
}

/*
 * Vet the line about to be read.  A line that is too long or holds a NUL
 * byte is reported and skipped up to its end of line, which still ends the
 * statement.
 */
static int
check_line(struct parse_ctx *ctx)
{
	struct file	*f = ctx->file;
	const char	*s = f->buf + f->pos, *nl;
	size_t		 n;

	f->bol = 0;
	nl = memchr(s, '\n', f->len - f->pos);
	n = nl != NULL ? (size_t)(nl - s) : f->len - f->pos;
	if (memchr(s, '\0', n) != NULL)
		log_warnx("%s:%d: NUL byte in line", f->name, f->lineno);
	else if (n > CONF_LINE_MAX)
		log_warnx("%s:%d: line too long (more than %d bytes)", f->name,
		    f->lineno, CONF_LINE_MAX);
	else
		return 0;
	ctx->errors++;
	ctx->syntax_errors++;
	f->pos += n;
	return -1;
}

/*
 * Next byte of input.  Outside quoted strings, a backslash before an end
 * of line joins the two lines.
 */
static int
lgetc(struct parse_ctx *ctx, int quoted)
{
	struct file	*f = ctx->file;
	int		 c;

	if (ctx->npushback > 0)
		return ctx->pushback[--ctx->npushback];
	for (;;) {
		if (f->bol && f->pos < f->len && check_line(ctx) == -1)
			return LEX_BADLINE;
		if (f->pos >= f->len)
			return EOF;
		c = (unsigned char)f->buf[f->pos++];
		f->bol = c == '\n';
		if (c != '\\' || quoted || f->pos >= f->len ||
		    f->buf[f->pos] != '\n')
			return c;
		f->pos++;
		f->lineno++;
		f->bol = 1;
	}
}

/* Report an error in the input and skip the rest of its line. */
static int __attribute__((__format__(printf, 2, 3)))
lex_error(struct parse_ctx *ctx, const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	int	 c;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s:%d: %s", ctx->file->name, ctx->file->lineno, msg);
	ctx->errors++;
	ctx->syntax_errors++;
	while ((c = lgetc(ctx, 1)) != '\n' && c != EOF && c != LEX_BADLINE)
		;
	lungetc(ctx, c);
	return YYerror;
}

static int
is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("._-/:*+@", c));
}

static int
is_macro_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static int
is_number(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static struct macro *
macro_find(struct parse_ctx *ctx, const char *name)
{
	struct macro	*m;

	for (m = ctx->macros; m != NULL; m = m->next)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

/* Append the value of the macro named after '$' to the word being read. */
static int
expand(struct parse_ctx *ctx, size_t *len)
{
	struct macro	*m;
	char		 name[POLICY_NAME_MAX];
	size_t		 n = 0, vlen;
	int		 c;

	while (is_macro_char(c = lgetc(ctx, 0))) {
		if (n + 1 >= sizeof(name)) {
			lex_error(ctx, "macro name too long");
			return -1;
		}
		name[n++] = (char)c;
	}
	lungetc(ctx, c);
	name[n] = '\0';
	if (n == 0) {
		lex_error(ctx, "'$' not followed by a macro name");
		return -1;
	}
	if ((m = macro_find(ctx, name)) == NULL) {
		lex_error(ctx, "macro \"%s\" is not defined", name);
		return -1;
	}
	vlen = strlen(m->value);
	if (*len + vlen > CONF_TOKEN_MAX) {
		lex_error(ctx, "word too long (more than %d bytes)",
		    CONF_TOKEN_MAX);
		return -1;
	}
	memcpy(ctx->tok + *len, m->value, vlen);
	*len += vlen;
	return 0;
}

/*
 * A bare word: a keyword unless it came from a macro, a number if it is
 * all digits, a string otherwise.
 */
static int
lex_word(struct parse_ctx *ctx, int c, YYSTYPE *lval)
{
	size_t	 len = 0, i;
	int	 expanded = 0;

	for (;; c = lgetc(ctx, 0)) {
		if (c == '$') {
			if (expand(ctx, &len) == -1)
				return YYerror;
			expanded = 1;
			continue;
		}
		if (c < 0 || !is_word(c))
			break;
		if (len >= CONF_TOKEN_MAX)
			return lex_error(ctx, "word too long (more than %d "
			    "bytes)", CONF_TOKEN_MAX);
		ctx->tok[len++] = (char)c;
	}
	lungetc(ctx, c);
	ctx->tok[len] = '\0';
	ctx->word = 1;
	if (!expanded)
		for (i = 0; i < nitems(keywords); i++)
			if (strcmp(ctx->tok, keywords[i].word) == 0)
				return keywords[i].token;
	lval->string = xstrdup(ctx->tok);
	return is_number(ctx->tok) ? NUMBER : STRING;
}

/* A string in double quotes; \" and \\ stand for " and \. */
static int
lex_quoted(struct parse_ctx *ctx, YYSTYPE *lval)
{
	size_t	 len = 0;
	int	 c, next;

	for (;;) {
		c = lgetc(ctx, 1);
		if (c == '"')
			break;
		if (c == '\n' || c == EOF || c == LEX_BADLINE) {
			lungetc(ctx, c);
			return lex_error(ctx, "unterminated quoted string");
		}
		if (c == '\\') {
			next = lgetc(ctx, 1);
			if (next == '\n') {
				ctx->file->lineno++;
				continue;
			}
			if (next == '"' || next == '\\')
				c = next;
			else
				lungetc(ctx, next);
		} else if ((c < 0x20 && c != '\t') || c == 0x7f)
			return lex_error(ctx, "control character 0x%02x in "
			    "quoted string", c);
		if (len >= CONF_TOKEN_MAX)
			return lex_error(ctx, "quoted string too long (more "
			    "than %d bytes)", CONF_TOKEN_MAX);
		ctx->tok[len++] = (char)c;
	}
	ctx->tok[len] = '\0';
	lval->string = xstrdup(ctx->tok);
	return STRING;
}

static int
lex(struct parse_ctx *ctx, YYSTYPE *lval, YYLTYPE *lloc)
{
	struct file	*f;
	int		 c;

 top:
	if (ctx->include != NULL)
		include_push(ctx);
	f = ctx->file;
	do {
		c = lgetc(ctx, 0);
	} while (c == ' ' || c == '\t' || c == '\r');
	lloc->file = f->name;
	lloc->line = f->lineno;
	if (c == '#')
		while ((c = lgetc(ctx, 1)) != '\n' && c != EOF &&
		    c != LEX_BADLINE)
			;
	switch (c) {
	case LEX_BADLINE:
		return YYerror;
	case '\n':
		f->lineno++;
		return NL;
	case EOF:
		/* Every file ends a line, so no statement spans two. */
		if (!f->eof) {
			f->eof = 1;
			return NL;
		}
		if (f->parent == NULL)
			return YYEOF;
		ctx->file = f->parent;
		ctx->depth--;
		goto top;
	case '{':
		return LBRACE;
	case '}':
		return RBRACE;
	case '=':
		return EQUAL;
	case '"':
		return lex_quoted(ctx, lval);
	}
	if (c == '$' || is_word(c))
		return lex_word(ctx, c, lval);
	if (c > 0x20 && c < 0x7f)
		return lex_error(ctx, "unexpected character '%c'", c);
	return lex_error(ctx, "unexpected character 0x%02x", c);
}

/* Keep the text of the last two tokens for syntax errors. */
static void
note_token(struct parse_ctx *ctx, int token, const YYSTYPE *lval)
{
	const char	*text = "";
	size_t		 len;

	if (token == STRING || token == NUMBER)
		text = lval->string;
	else if (ctx->word)
		text = ctx->tok;
	memcpy(ctx->prev, ctx->last, sizeof(ctx->prev));
	ctx->prev_token = ctx->last_token;
	ctx->last_token = token;
	if ((len = strlen(text)) > TEXT_MAX) {
		memcpy(ctx->last, text, TEXT_MAX);
		memcpy(ctx->last + TEXT_MAX, "...", 4);
	} else
		memcpy(ctx->last, text, len + 1);
	ctx->last_word = ctx->word;
}

static int
yylex(YYSTYPE *lval, YYLTYPE *lloc, struct parse_ctx *ctx)
{
	int	 token;

	ctx->word = 0;
	lval->string = NULL;
	token = lex(ctx, lval, lloc);
	note_token(ctx, token, lval);
	return token;
}

/*
 * Checks of single values.  Each reports what is wrong and returns -1.
 */

static int
once(struct parse_ctx *ctx, const struct ploc *loc, uint32_t *seen,
    uint32_t bit, const char *what)
{
	if (*seen & bit) {
		perr(ctx, loc, "%s given twice", what);
		return -1;
	}
	*seen |= bit;
	return 0;
}

static int
copy(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    char *dst, const char *src, size_t size)
{
	if (str_copy(dst, src, size) == -1) {
		perr(ctx, loc, "%s too long (at most %zu bytes)", what,
		    size - 1);
		return -1;
	}
	return 0;
}

static int
check_name(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    const char *name)
{
	const char	*why;

	if (name_valid(name))
		return 0;
	if (*name == '\0')
		why = "empty";
	else if (strlen(name) >= POLICY_NAME_MAX)
		why = "longer than 63 characters";
	else if (*name == '-' || *name == '.')
		why = "starts with '-' or '.'";
	else
		why = "only letters, digits, '.', '_' and '-' are allowed";
	if (strlen(name) > TEXT_MAX)
		perr(ctx, loc, "invalid %s: %s", what, why);
	else
		perr(ctx, loc, "invalid %s \"%s\": %s", what, name, why);
	return -1;
}

static int
check_path(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    const char *path, size_t size)
{
	if (strlen(path) >= size) {
		perr(ctx, loc, "%s too long (at most %zu bytes)", what,
		    size - 1);
		return -1;
	}
	if (path[0] != '/') {
		perr(ctx, loc, "%s \"%s\": not an absolute path", what, path);
		return -1;
	}
	return 0;
}

/* A decimal number in [min, max]; -1 after an error.  Frees s. */
static long long
number(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    char *s, uint64_t min, uint64_t max)
{
	uint64_t	 v;
	long long	 rv = -1;

	if (str_to_u64(s, min, max, &v) != NULL)
		perr(ctx, loc, "%s %s: out of range (%llu..%llu)", what, s,
		    (unsigned long long)min, (unsigned long long)max);
	else
		rv = (long long)v;
	free(s);
	return rv;
}

/* A file mode in octal, "660" as much as "0660". */
static long long
mode(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	long long	 v = 0;
	const char	*c;

	for (c = s; *c != '\0'; c++) {
		if (*c < '0' || *c > '7') {
			perr(ctx, loc, "mode %s: not an octal number", s);
			v = -1;
			break;
		}
		if ((v = v * 8 + (*c - '0')) > 0777) {
			perr(ctx, loc, "mode %s: out of range (0..0777)", s);
			v = -1;
			break;
		}
	}
	free(s);
	return v;
}

/* Digits with an optional K, M, G or T suffix, in powers of 1024. */
static int
parse_size(const char *s, uint64_t *out)
{
	uint64_t	 v = 0;
	unsigned int	 shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	switch (*s) {
	case '\0':
		break;
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'T': case 't':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*s != '\0' && s[1] != '\0')
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

/* "1", "0.5", "2.125": thousandths of a CPU. */
static int
parse_cpus(const char *s, uint64_t *out)
{
	uint64_t	 v = 0, scale = 1000;
	int		 digits = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (++digits > 9)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (digits == 0)
		return -1;
	v *= 1000;
	if (*s == '.') {
		if (s[1] == '\0')
			return -1;
		for (s++; *s >= '0' && *s <= '9'; s++) {
			if ((scale /= 10) == 0)
				return -1;
			v += (uint64_t)(*s - '0') * scale;
		}
	}
	if (*s != '\0')
		return -1;
	*out = v;
	return 0;
}

/* Digits with a unit of ms, s, m or h; seconds without one.  In ms. */
static int
parse_duration(const char *s, uint64_t *out)
{
	uint64_t	 v = 0, mult;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (strcmp(s, "ms") == 0)
		mult = 1;
	else if (*s == '\0' || strcmp(s, "s") == 0)
		mult = 1000;
	else if (strcmp(s, "m") == 0)
		mult = MS_MINUTE;
	else if (strcmp(s, "h") == 0)
		mult = MS_HOUR;
	else
		return -1;
	if (v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

/* "sha256:" and 64 hex digits. */
static int
parse_token(const char *s, uint8_t out[POLICY_TOKEN_HASH_LEN])
{
	static const char	 prefix[] = "sha256:";
	const char		*hex = "0123456789abcdef", *h, *l;
	size_t			 i;

	if (strncasecmp(s, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	s += sizeof(prefix) - 1;
	if (strlen(s) != POLICY_TOKEN_HASH_LEN * 2)
		return -1;
	for (i = 0; i < POLICY_TOKEN_HASH_LEN; i++) {
		/* strlen() above: no NUL here for strchr() to match. */
		h = strchr(hex, s[2 * i] | 0x20);
		l = strchr(hex, s[2 * i + 1] | 0x20);
		if (h == NULL || l == NULL)
			return -1;
		out[i] = (uint8_t)((h - hex) << 4 | (l - hex));
	}
	return 0;
}

/*
 * Statements.  The helpers own the strings they are given.
 */

static void
macro_set(struct parse_ctx *ctx, const struct ploc *loc, char *name,
    char *value)
{
	struct macro	*m;
	const char	*c;

	for (c = name; *c != '\0' && is_macro_char(*c); c++)
		;
	if (*c != '\0' || (*name >= '0' && *name <= '9') ||
	    strlen(name) >= POLICY_NAME_MAX) {
		perr(ctx, loc, "invalid macro name \"%s\"", name);
		free(name);
		free(value);
		return;
	}
	/* A later definition replaces an earlier one. */
	if ((m = macro_find(ctx, name)) != NULL) {
		free(m->value);
		m->value = value;
		free(name);
		return;
	}
	m = xcalloc(1, sizeof(*m));
	m->name = name;
	m->value = value;
	m->next = ctx->macros;
	ctx->macros = m;
}

/* The file is opened by the lexer once the include line has ended. */
static void
include_later(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	free(ctx->include);
	ctx->include = name;
	ctx->include_loc = *loc;
}

static void
set_user(struct parse_ctx *ctx, const struct ploc *loc, uint32_t *seen,
    uint32_t bit, const char *what, char *val, char *dst)
{
	char	 buf[64];

	(void)snprintf(buf, sizeof(buf), "%s name", what);
	if (once(ctx, loc, seen, bit, what) == 0 &&
	    check_name(ctx, loc, buf, val) == 0)
		(void)copy(ctx, loc, what, dst, val, POLICY_USER_MAX);
	free(val);
}

static void
set_path(struct parse_ctx *ctx, const struct ploc *loc, uint32_t *seen,
    uint32_t bit, const char *what, char *val, char *dst, size_t size)
{
	if (once(ctx, loc, seen, bit, what) == 0 &&
	    check_path(ctx, loc, what, val, size) == 0)
		(void)copy(ctx, loc, what, dst, val, size);
	free(val);
}

/* An address or host name, or "*" for every address. */
static int
check_host(const char *s)
{
	if (strcmp(s, "*") == 0)
		return 0;
	if (*s == '\0' || *s == '-')
		return -1;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(".-_:%", *s) != NULL))
			return -1;
	return 0;
}

/* Note a name to look up once the whole file is read. */
static void
ref_add(struct ref **refs, size_t *n, const struct ploc *loc, void *obj)
{
	struct ref	*r;

	*refs = xreallocarray(*refs, *n + 1, sizeof(**refs));
	r = &(*refs)[(*n)++];
	r->loc = *loc;
	r->obj = obj;
}

/* The tenant, if any, has a valid name; it may be defined further down. */
static void
listen_add(struct parse_ctx *ctx, const struct ploc *loc,
    struct listen_addr *la, const char *tenant)
{
	struct listen_addr	*l;

	TAILQ_FOREACH(l, &ctx->p->listens, entry) {
		if (l->type != la->type)
			continue;
		if ((la->type == LISTEN_TCP && l->port == la->port &&
		    strcmp(l->host, la->host) == 0) ||
		    (la->type == LISTEN_UNIX &&
		    strcmp(l->path, la->path) == 0)) {
			perr(ctx, loc, "listen address given twice");
			free(la);
			return;
		}
	}
	if (tenant != NULL) {
		(void)str_copy(la->tenant, tenant, sizeof(la->tenant));
		ref_add(&ctx->listen_refs, &ctx->nlisten_refs, loc, la);
	}
	TAILQ_INSERT_TAIL(&ctx->p->listens, la, entry);
}

static int
listen_tenant(struct parse_ctx *ctx, const struct ploc *loc,
    const char *tenant)
{
	if (tenant == NULL)
		return 0;
	return check_name(ctx, loc, "tenant name", tenant);
}

/*
 * Bearer tokens cross the network in the clear on plain HTTP: off the
 * loopback, only with tls, or plaintext said (a TLS proxy in front).
 */
static void
listen_tcp(struct parse_ctx *ctx, const struct ploc *loc, char *host,
    long long port, char *tenant, long long transport)
{
	struct listen_addr	*la;
	int			 bad = 0;

	if (transport == LISTEN_PLAIN && port != -1 &&
	    check_host(host) == 0 && !host_loopback(host)) {
		perr(ctx, loc, "listen on %s port %lld: plain HTTP off the "
		    "loopback would carry bearer tokens in the clear: add "
		    "\"tls\" (with tls certificate and tls key), or "
		    "\"plaintext\" if a TLS proxy sits in front", host, port);
		bad = 1;
	}

	if (strlen(host) >= sizeof(la->host)) {
		perr(ctx, loc, "listen address too long (at most %zu bytes)",
		    sizeof(la->host) - 1);
		bad = 1;
	} else if (check_host(host) == -1) {
		perr(ctx, loc, "listen address \"%s\": not an address or "
		    "host name", host);
		bad = 1;
	}
	if (listen_tenant(ctx, loc, tenant) == -1)
		bad = 1;
	if (!bad && port != -1) {
		la = xcalloc(1, sizeof(*la));
		la->type = LISTEN_TCP;
		(void)copy(ctx, loc, "listen address", la->host, host,
		    sizeof(la->host));
		la->port = (uint16_t)port;
		la->tls = transport == LISTEN_TLS;
		la->plaintext = transport == LISTEN_PLAINTEXT;
		if (la->tls && ctx->tls_listens++ == 0)
			ctx->tls_loc = *loc;
		listen_add(ctx, loc, la, tenant);
	}
	free(host);
	free(tenant);
}

static void
listen_unix(struct parse_ctx *ctx, const struct ploc *loc, char *path,
    long long m, char *tenant)
{
	struct listen_addr	*la;
	int			 bad = 0;

	if (check_path(ctx, loc, "listen socket", path,
	    sizeof(la->path)) == -1)
		bad = 1;
	if (listen_tenant(ctx, loc, tenant) == -1)
		bad = 1;
	if (!bad && m != -1) {
		la = xcalloc(1, sizeof(*la));
		la->type = LISTEN_UNIX;
		(void)copy(ctx, loc, "listen socket", la->path, path,
		    sizeof(la->path));
		la->mode = (mode_t)m;
		listen_add(ctx, loc, la, tenant);
	}
	free(path);
	free(tenant);
}

/*
 * Hosts and origins the HTTP server accepts.  Both are compared with what
 * a browser sends, which is in lower case and never names a default port.
 */

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* A label that browsers read as a number: decimal, or hex after "0x". */
static int
numeric_label(const char *s, size_t n)
{
	const char	*digits = "0123456789";

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
		digits = "0123456789abcdefABCDEF";
	}
	return strspn(s, digits) >= n;
}

/*
 * Labels of letters, digits and '-', not starting or ending with '-'.  A
 * name whose last label is a number would be read as an IPv4 address.
 */
static int
valid_dns_name(const char *s)
{
	size_t	 n, i;

	for (;;) {
		n = strcspn(s, ".");
		if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
			return 0;
		for (i = 0; i < n; i++)
			if (!is_alnum(s[i]) && s[i] != '-')
				return 0;
		if (s[n] == '\0')
			return !numeric_label(s, n);
		s += n + 1;
	}
}

/* A DNS name, an IPv4 address, or an IPv6 address in brackets. */
static int
valid_host(const char *s)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;
	char		 buf[INET6_ADDRSTRLEN];
	size_t		 len = strlen(s);

	if (len == 0 || len > HOST_MAX)
		return 0;
	if (s[0] == '[') {
		if (len < 2 || s[len - 1] != ']' || len - 2 >= sizeof(buf))
			return 0;
		memcpy(buf, s + 1, len - 2);
		buf[len - 2] = '\0';
		return inet_pton(AF_INET6, buf, &a6) == 1;
	}
	return inet_pton(AF_INET, s, &a4) == 1 || valid_dns_name(s);
}

/* Why an invalid host is, for the two likeliest mistakes. */
static const char *
host_error(const char *s)
{
	struct in6_addr	 a6;
	const char	*colon;
	char		 buf[HOST_MAX + 1];
	size_t		 n;

	if (inet_pton(AF_INET6, s, &a6) == 1)
		return "an IPv6 address must be in brackets";
	if ((colon = strrchr(s, ':')) != NULL && colon[1] != '\0' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
	    (n = (size_t)(colon - s)) < sizeof(buf)) {
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (valid_host(buf))
			return "a port is not allowed here";
	}
	return "not a host name or address";
}

/* After "http://host:", up to the end; *end is set past the digits. */
static const char *
origin_port(const char *p, const char *defport, const char **end)
{
	size_t		 n = strspn(p, "0123456789"), i;
	unsigned long	 v = 0;

	*end = p + n;
	if (n == 0 || (p[n] != '\0' && strchr("/?#", p[n]) == NULL))
		return "not a port";
	for (i = 0; i < n && i < 6; i++)
		v = v * 10 + (unsigned long)(p[i] - '0');
	if (n > 5 || v < 1 || v > 65535)
		return "port out of range (1..65535)";
	if (p[0] == '0')
		return "port with a leading zero";
	if (strlen(defport) == n && strncmp(p, defport, n) == 0)
		return "the default port of the scheme, which browsers leave out";
	return NULL;
}

/* Why s is not a scheme, a host and maybe a port; NULL if it is. */
static const char *
origin_error(const char *s)
{
	static const struct {
		const char	*scheme;
		const char	*port;
	} schemes[] = {
		{ "http://",	"80" },
		{ "https://",	"443" },
	};
	const char	*h = NULL, *end, *defport = NULL, *why;
	char		 host[HOST_MAX + 1];
	size_t		 i, n;

	for (i = 0; i < nitems(schemes); i++)
		if (strncasecmp(s, schemes[i].scheme,
		    strlen(schemes[i].scheme)) == 0) {
			h = s + strlen(schemes[i].scheme);
			defport = schemes[i].port;
		}
	if (h == NULL)
		return "not http:// or https://";
	if (*h == '[' && (end = strchr(h, ']')) != NULL)
		end++;
	else
		end = h + strcspn(h, ":/?#");
	if ((n = (size_t)(end - h)) >= sizeof(host))
		return "not a host name or address";
	memcpy(host, h, n);
	host[n] = '\0';
	if (!valid_host(host))
		return "not a host name or address";
	if (*end == ':' && (why = origin_port(end + 1, defport, &end)) != NULL)
		return why;
	if (*end != '\0' && strchr("/?#", *end) != NULL)
		return "has a path; an origin is a scheme, a host and a port";
	if (*end != '\0')
		return "not a host name or address";
	return NULL;
}

static void
allow_add(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    char *s, char ***list, size_t *n)
{
	char	*c;
	size_t	 i;

	for (c = s; *c != '\0'; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	for (i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0) {
			perr(ctx, loc, "%s \"%s\" given twice", what, s);
			free(s);
			return;
		}
	*list = xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = s;
}

static void
allow_host(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (strlen(s) > HOST_MAX)
		perr(ctx, loc, "allow host: longer than %d characters",
		    HOST_MAX);
	else if (!valid_host(s))
		perr(ctx, loc, "allow host \"%s\": %s", s, host_error(s));
	else {
		allow_add(ctx, loc, "allow host", s, &ctx->p->allow_hosts,
		    &ctx->p->nallow_hosts);
		return;
	}
	free(s);
}

static void
allow_origin(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	const char	*why;

	if (strlen(s) > ORIGIN_MAX)
		perr(ctx, loc, "allow origin: longer than %d characters",
		    ORIGIN_MAX);
	else if ((why = origin_error(s)) != NULL)
		perr(ctx, loc, "allow origin \"%s\": %s", s, why);
	else {
		allow_add(ctx, loc, "allow origin", s, &ctx->p->allow_origins,
		    &ctx->p->nallow_origins);
		return;
	}
	free(s);
}

/*
 * "allow proxy ADDRESS[/BITS]": a balancer whose X-Forwarded-For and
 * X-Forwarded-Proto mcpd believes.  Kept as inet_ntop() writes the
 * network, with its bits, so that one written two ways is one.
 */
static void
allow_proxy(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint8_t		 a[16];
	char		 buf[INET6_ADDRSTRLEN], *slash, *end, *canon;
	int		 af, max;
	long		 bits;
	size_t		 i;

	if ((slash = strchr(s, '/')) != NULL)
		*slash = '\0';
	af = strchr(s, ':') != NULL ? AF_INET6 : AF_INET;
	max = af == AF_INET6 ? 128 : 32;
	if (inet_pton(af, s, a) != 1) {
		if (slash != NULL)
			*slash = '/';
		perr(ctx, loc, "allow proxy \"%.*s\": not an IPv4 or IPv6 "
		    "address, with /BITS or without", TEXT_MAX, s);
		free(s);
		return;
	}
	bits = max;
	if (slash != NULL) {
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || errno != 0 ||
		    bits < 0 || bits > max) {
			*slash = '/';
			perr(ctx, loc, "allow proxy \"%.*s\": the bits after "
			    "'/' are 0 to %d", TEXT_MAX, s, max);
			free(s);
			return;
		}
	}
	/* The network: the bits past its length are nobody's. */
	for (i = 0; i < (size_t)max / 8; i++)
		if ((long)i * 8 >= bits)
			a[i] = 0;
		else if ((long)i * 8 + 8 > bits)
			a[i] &= (uint8_t)(0xff << (8 - (bits - (long)i * 8)));
	(void)inet_ntop(af, a, buf, sizeof(buf));
	(void)xasprintf(&canon, "%s/%ld", buf, bits);
	free(s);
	allow_add(ctx, loc, "allow proxy", canon, &ctx->p->allow_proxies,
	    &ctx->p->nallow_proxies);
}

static void
image_add(struct parse_ctx *ctx, const struct ploc *loc, char *name,
    enum image_type type, char *path, long long pool, char *runtime)
{
	struct image	*im;
	int		 bad = 0;

	if (check_name(ctx, loc, "image name", name) == -1)
		bad = 1;
	else if (policy_image(ctx->p, name) != NULL) {
		perr(ctx, loc, "image \"%s\" defined twice", name);
		bad = 1;
	} else if (type == IMAGE_ROOTFS && strcmp(name, HOST_IMAGE) == 0) {
		perr(ctx, loc, "image \"%s\" cannot be a rootfs", name);
		bad = 1;
	}
	if (path != NULL && check_path(ctx, loc, "rootfs", path,
	    PATH_MAX) == -1)
		bad = 1;
	if (runtime != NULL && check_name(ctx, loc, "runtime name",
	    runtime) == -1)
		bad = 1;
	if (!bad && pool != -1) {
		im = xcalloc(1, sizeof(*im));
		(void)copy(ctx, loc, "image name", im->name, name,
		    sizeof(im->name));
		im->type = type;
		if (path != NULL)
			(void)copy(ctx, loc, "rootfs", im->path, path,
			    sizeof(im->path));
		im->pool = (uint32_t)pool;
		im->pool_idle = ctx->pool_idle;
		if (runtime != NULL) {
			(void)str_copy(im->runtime, runtime,
			    sizeof(im->runtime));
			ref_add(&ctx->runtime_refs, &ctx->nruntime_refs, loc,
			    im->runtime);
		}
		TAILQ_INSERT_TAIL(&ctx->p->images, im, entry);
	}
	free(name);
	free(path);
	free(runtime);
}

static struct limits *
limits_new(const char *name)
{
	struct limits	*l;

	l = xcalloc(1, sizeof(*l));
	(void)str_copy(l->name, name, sizeof(l->name));
	l->memory = DEFAULT_MEMORY;
	l->cpus = DEFAULT_CPUS;
	l->pids = DEFAULT_PIDS;
	l->timeout = DEFAULT_TIMEOUT;
	l->output = DEFAULT_OUTPUT;
	l->disk = DEFAULT_DISK;
	l->network = NET_NONE;
	l->idle = DEFAULT_IDLE;
	l->lifetime = DEFAULT_LIFETIME;
	return l;
}

/*
 * The block is read even when its name is wrong, to report its fields.
 * fields records each field given, whether its value was right or not.
 */
static void
block_begin(struct parse_ctx *ctx, const struct ploc *loc)
{
	ctx->fields = 0;
	ctx->block_loc = *loc;
	ctx->block_syntax = ctx->syntax_errors;
}

/* The runtime of that name, or NULL. */
static struct runtime *
runtime_find(struct policy *p, const char *name)
{
	size_t	 i;

	for (i = 0; i < p->nruntimes; i++)
		if (strcmp(p->runtimes[i].name, name) == 0)
			return &p->runtimes[i];
	return NULL;
}

/* "runtime NAME": the runtime sandboxd uses, looked up at the end. */
static void
runtime_use(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	if (once(ctx, loc, &ctx->seen, SEEN_RUNTIME, "runtime") == 0 &&
	    check_name(ctx, loc, "runtime name", name) == 0) {
		(void)str_copy(ctx->p->runtime, name,
		    sizeof(ctx->p->runtime));
		ctx->runtime_loc = *loc;
	}
	free(name);
}

/*
 * "runtime NAME { ... }": a runtime of its own, or the binary of a
 * built-in one.
 */
static void
runtime_begin(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	struct policy	*p = ctx->p;
	struct runtime	*rt;

	block_begin(ctx, loc);
	ctx->runtime = NULL;
	if (check_name(ctx, loc, "runtime name", name) == -1) {
		free(name);
		return;
	}
	if ((rt = runtime_find(p, name)) != NULL && rt->defined)
		perr(ctx, loc, "runtime \"%s\" defined twice", name);
	else if (rt == NULL && p->nruntimes == POLICY_RUNTIMES_MAX)
		perr(ctx, loc, "runtime \"%s\": more than %d runtimes", name,
		    POLICY_RUNTIMES_MAX);
	else {
		if (rt == NULL) {
			rt = &p->runtimes[p->nruntimes++];
			(void)str_copy(rt->name, name, sizeof(rt->name));
			rt->path[0] = '\0';
			rt->kind = (enum runtime_kind)-1;
		}
		rt->defined = 1;
		ctx->runtime_locs[rt - p->runtimes] = *loc;
		ctx->runtime = rt;
	}
	free(name);
}

static void
runtime_path(struct parse_ctx *ctx, const struct ploc *loc, char *path)
{
	struct runtime	*rt = ctx->runtime;

	if (rt == NULL)
		free(path);
	else
		set_path(ctx, loc, &ctx->fields, FIELD_PATH, "path", path,
		    rt->path, sizeof(rt->path));
}

static void
runtime_kind(struct parse_ctx *ctx, const struct ploc *loc, char *kind)
{
	struct runtime	*rt = ctx->runtime;

	if (rt == NULL || once(ctx, loc, &ctx->fields, FIELD_KIND,
	    "kind") == -1)
		;
	else if (strcmp(kind, policy_runtime_kind(RUNTIME_RUNC)) == 0)
		rt->kind = RUNTIME_RUNC;
	else if (strcmp(kind, policy_runtime_kind(RUNTIME_CRUN)) == 0)
		rt->kind = RUNTIME_CRUN;
	else if (strcmp(kind, policy_runtime_kind(RUNTIME_RUNSC)) == 0)
		rt->kind = RUNTIME_RUNSC;
	else
		perr(ctx, loc, "kind \"%s\": runc, crun or runsc", kind);
	free(kind);
}

/* gVisor's platform: how its kernel takes the sandbox's system calls. */
static void
runtime_platform(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	static const char *const platforms[] = { "systrap", "ptrace", "kvm" };
	struct runtime	*rt = ctx->runtime;
	size_t		 i;

	if (rt == NULL || once(ctx, loc, &ctx->fields, FIELD_PLATFORM,
	    "platform") == -1) {
		free(name);
		return;
	}
	for (i = 0; i < nitems(platforms); i++)
		if (strcmp(name, platforms[i]) == 0)
			break;
	if (i == nitems(platforms))
		perr(ctx, loc, "platform \"%s\": systrap, ptrace or kvm", name);
	else
		(void)str_copy(rt->platform, name, sizeof(rt->platform));
	free(name);
}

static void
runtime_network(struct parse_ctx *ctx, const struct ploc *loc,
    enum runtime_net net)
{
	struct runtime	*rt = ctx->runtime;

	if (rt != NULL && once(ctx, loc, &ctx->fields, FIELD_NETWORK,
	    "network") == 0)
		rt->network = net;
}

/* Each runtime block is whole, and every runtime named exists. */
static void
finish_runtimes(struct parse_ctx *ctx)
{
	struct policy		*p = ctx->p;
	const struct runtime	*rt;
	size_t			 i;

	for (i = 0; i < p->nruntimes; i++) {
		rt = &p->runtimes[i];
		if (rt->path[0] == '\0' || rt->kind == (enum runtime_kind)-1)
			perr(ctx, &ctx->runtime_locs[i], "runtime \"%s\" has no "
			    "%s", rt->name, rt->path[0] == '\0' ? "path" :
			    "kind");
		else if (rt->platform[0] != '\0' && rt->kind != RUNTIME_RUNSC)
			perr(ctx, &ctx->runtime_locs[i], "runtime \"%s\": a "
			    "platform is for kind runsc only", rt->name);
		else if (rt->network != RUNTIME_NET_DEFAULT &&
		    rt->kind != RUNTIME_RUNSC)
			perr(ctx, &ctx->runtime_locs[i], "runtime \"%s\": a "
			    "network is for kind runsc only", rt->name);
	}
	if ((rt = policy_runtime(p, p->runtime)) == NULL) {
		perr(ctx, &ctx->runtime_loc, "runtime \"%s\": no such runtime "
		    "(runc, crun, or a runtime block)", p->runtime);
		return;
	}
	(void)str_copy(p->runc, rt->path, sizeof(p->runc));
	p->runtime_kind = rt->kind;
	(void)str_copy(p->runtime_platform, rt->platform,
	    sizeof(p->runtime_platform));
	for (i = 0; i < ctx->nruntime_refs; i++)
		if (policy_runtime(p, ctx->runtime_refs[i].obj) == NULL)
			perr(ctx, &ctx->runtime_refs[i].loc, "runtime \"%s\": "
			    "no such runtime (runc, crun, or a runtime block)",
			    (const char *)ctx->runtime_refs[i].obj);
}

static void
limits_begin(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	if (check_name(ctx, loc, "limits name", name) == 0 &&
	    policy_limits(ctx->p, name) != NULL)
		perr(ctx, loc, "limits \"%s\" defined twice", name);
	ctx->limits = limits_new(name);
	TAILQ_INSERT_TAIL(&ctx->p->limits, ctx->limits, entry);
	block_begin(ctx, loc);
	free(name);
}

static int
limits_once(struct parse_ctx *ctx, const struct ploc *loc, uint32_t bit,
    const char *what)
{
	return once(ctx, loc, &ctx->limits->set, bit, what);
}

static void
limits_size(struct parse_ctx *ctx, const struct ploc *loc, uint32_t bit,
    char *s)
{
	const struct size_field	*sf;
	uint64_t		 v;
	size_t			 i;

	for (i = 0, sf = size_fields; i < nitems(size_fields); i++, sf++)
		if (sf->bit == bit)
			break;
	if (i == nitems(size_fields))
		fatalx("%s: bad field 0x%x", __func__, bit);
	if (limits_once(ctx, loc, bit, sf->name) == -1)
		;
	else if (parse_size(s, &v) == -1)
		perr(ctx, loc, "%s \"%s\": not a size", sf->name, s);
	else if (v < sf->min || v > sf->max)
		perr(ctx, loc, "%s %s: out of range (%s)", sf->name, s,
		    sf->range);
	else if (bit == LIMIT_MEMORY)
		ctx->limits->memory = v;
	else if (bit == LIMIT_OUTPUT)
		ctx->limits->output = v;
	else
		ctx->limits->disk = v;
	free(s);
}

static void
limits_cpus(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint64_t	 v;

	if (limits_once(ctx, loc, LIMIT_CPUS, "cpus") == -1)
		;
	else if (parse_cpus(s, &v) == -1)
		perr(ctx, loc, "cpus \"%s\": not a number of CPUs with at most "
		    "3 decimals", s);
	else if (v < CPUS_MIN || v > CPUS_MAX)
		perr(ctx, loc, "cpus %s: out of range (0.01..1024)", s);
	else
		ctx->limits->cpus = (uint32_t)v;
	free(s);
}

static void
limits_pids(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	long long	 v;

	if (limits_once(ctx, loc, LIMIT_PIDS, "pids") == -1)
		free(s);
	else if ((v = number(ctx, loc, "pids", s, 1, 1000000)) != -1)
		ctx->limits->pids = (uint32_t)v;
}

/* A duration limit given in the file: timeout, idle or lifetime. */
static void
limits_duration(struct parse_ctx *ctx, const struct ploc *loc, uint32_t bit,
    const char *key, char *s, uint64_t min, uint64_t max, const char *range,
    uint64_t *out)
{
	uint64_t	 v;

	if (limits_once(ctx, loc, bit, key) == -1)
		;
	else if (parse_duration(s, &v) == -1)
		perr(ctx, loc, "%s \"%s\": not a duration", key, s);
	else if (v < min || v > max)
		perr(ctx, loc, "%s %s: out of range (%s)", key, s, range);
	else
		*out = v;
	free(s);
}

static void
limits_timeout(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	limits_duration(ctx, loc, LIMIT_TIMEOUT, "timeout", s, 1, 24 * MS_HOUR,
	    "1ms..24h", &ctx->limits->timeout);
}

static void
limits_idle(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	limits_duration(ctx, loc, LIMIT_IDLE, "idle", s, 1000, 30 * 24 * MS_HOUR,
	    "1s..720h", &ctx->limits->idle);
}

/* How long a pool may go unclaimed before it empties: 0 never. */
static void
pool_idle(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint64_t	 v;

	ctx->pool_idle = DEFAULT_POOL_IDLE;
	if (strcmp(s, "never") == 0)
		ctx->pool_idle = 0;
	else if (parse_duration(s, &v) == -1)
		perr(ctx, loc, "pool idle \"%s\": not a duration", s);
	else if (v < 1000 || v > 30 * 24 * MS_HOUR)
		perr(ctx, loc, "pool idle %s: out of range (1s..720h, or "
		    "never)", s);
	else
		ctx->pool_idle = v;
	free(s);
}

static void
limits_lifetime(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	limits_duration(ctx, loc, LIMIT_LIFETIME, "lifetime", s, 1000,
	    365 * 24 * MS_HOUR, "1s..8760h", &ctx->limits->lifetime);
}

static void
set_uids(struct parse_ctx *ctx, const struct ploc *loc, char *base,
    char *count)
{
	long long	 b, n;

	if (ctx->seen & SEEN_UIDS)
		perr(ctx, loc, "sandbox uids given twice");
	ctx->seen |= SEEN_UIDS;
	b = number(ctx, loc, "sandbox uids", base, UID_RANGE, UINT32_MAX);
	n = number(ctx, loc, "sandbox uids count", count, 1, 65535);
	if (b == -1 || n == -1)
		return;
	if (b % UID_RANGE != 0)
		perr(ctx, loc, "sandbox uids %lld: not a multiple of %u", b,
		    UID_RANGE);
	else if ((unsigned long long)b + (unsigned long long)n * UID_RANGE >
	    UINT32_MAX)
		perr(ctx, loc, "sandbox uids %lld count %lld: beyond the last "
		    "uid", b, n);
	else {
		ctx->p->uid_base = (uint32_t)b;
		ctx->p->uid_slots = (uint32_t)n;
	}
}

static void
limits_network(struct parse_ctx *ctx, const struct ploc *loc,
    enum net_mode net)
{
	if (limits_once(ctx, loc, LIMIT_NETWORK, "network") == 0)
		ctx->limits->network = net;
}

static void
tenant_begin(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	struct tenant	*t;

	if (check_name(ctx, loc, "tenant name", name) == 0 &&
	    policy_tenant(ctx->p, name) != NULL)
		perr(ctx, loc, "tenant \"%s\" defined twice", name);
	t = xcalloc(1, sizeof(*t));
	(void)str_copy(t->name, name, sizeof(t->name));
	(void)str_copy(t->limits_name, "default", sizeof(t->limits_name));
	t->max_sandboxes = DEFAULT_MAX_SANDBOXES;
	t->max_requests = DEFAULT_MAX_REQUESTS;
	t->share_expiry_max = DEFAULT_SHARE_EXPIRY_MAX;
	t->share_downloads = DEFAULT_SHARE_DOWNLOADS;
	t->share_rate = DEFAULT_SHARE_RATE;
	TAILQ_INSERT_TAIL(&ctx->p->tenants, t, entry);
	ctx->tenant = t;
	ref_add(&ctx->tenant_refs, &ctx->ntenant_refs, loc, t);
	block_begin(ctx, loc);
	free(name);
}

/* A token is one tenant's, or a metrics reader's: never two of them. */
static int
token_used(struct parse_ctx *ctx, const struct ploc *loc,
    const uint8_t hash[POLICY_TOKEN_HASH_LEN])
{
	const struct policy	*p = ctx->p;
	const struct tenant	*t;
	size_t			 i;

	TAILQ_FOREACH(t, &p->tenants, entry)
		for (i = 0; i < t->ntokens; i++)
			if (memcmp(t->tokens[i], hash,
			    POLICY_TOKEN_HASH_LEN) == 0) {
				perr(ctx, loc, "token already used by tenant "
				    "\"%s\"", t->name);
				return -1;
			}
	for (i = 0; i < p->nmetrics_tokens; i++)
		if (memcmp(p->metrics_tokens[i], hash,
		    POLICY_TOKEN_HASH_LEN) == 0) {
			perr(ctx, loc, "token already used by \"metrics "
			    "token\"");
			return -1;
		}
	return 0;
}

static void
tenant_token(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint8_t		 hash[POLICY_TOKEN_HASH_LEN];
	struct tenant	*t;

	ctx->fields |= FIELD_TOKEN;
	/* The value is not repeated: it may be a secret put here by mistake. */
	if (parse_token(s, hash) == -1) {
		perr(ctx, loc, "token: not \"sha256:\" and 64 hex digits");
		goto done;
	}
	if (token_used(ctx, loc, hash) == -1)
		goto done;
	t = ctx->tenant;
	t->tokens = xreallocarray(t->tokens, t->ntokens + 1,
	    sizeof(*t->tokens));
	memcpy(t->tokens[t->ntokens++], hash, sizeof(hash));
 done:
	free(s);
}

static void
tenant_uid(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct tenant		*t;
	struct tenant_uid	*u;
	size_t			 i;

	ctx->fields |= FIELD_UID;
	if (check_name(ctx, loc, "uid", s) == -1)
		goto done;
	TAILQ_FOREACH(t, &ctx->p->tenants, entry)
		for (i = 0; i < t->nuids; i++)
			if (strcmp(t->uids[i].name, s) == 0) {
				perr(ctx, loc, "uid \"%s\" already used by "
				    "tenant \"%s\"", s, t->name);
				goto done;
			}
	t = ctx->tenant;
	t->uids = xreallocarray(t->uids, t->nuids + 1, sizeof(*t->uids));
	u = &t->uids[t->nuids++];
	memset(u, 0, sizeof(*u));
	(void)copy(ctx, loc, "uid", u->name, s, sizeof(u->name));
	u->uid = (uid_t)-1;
 done:
	free(s);
}

static void
tenant_limits(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (once(ctx, loc, &ctx->fields, FIELD_LIMITS, "limits") == 0 &&
	    check_name(ctx, loc, "limits name", s) == 0 &&
	    copy(ctx, loc, "limits name", ctx->tenant->limits_name, s,
	    sizeof(ctx->tenant->limits_name)) == 0)
		ctx->tenant_refs[ctx->ntenant_refs - 1].loc = *loc;
	free(s);
}

/* "runtime NAME" in a tenant: the runtime of all its sandboxes. */
static void
tenant_runtime(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (once(ctx, loc, &ctx->fields, FIELD_RUNTIME, "runtime") == 0 &&
	    check_name(ctx, loc, "runtime name", s) == 0 &&
	    copy(ctx, loc, "runtime name", ctx->tenant->runtime, s,
	    sizeof(ctx->tenant->runtime)) == 0)
		ref_add(&ctx->runtime_refs, &ctx->nruntime_refs, loc,
		    ctx->tenant->runtime);
	free(s);
}

static void
tenant_max(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	long long	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_MAX, "max sandboxes") == -1)
		free(s);
	else if ((v = number(ctx, loc, "max sandboxes", s, 0, 10000)) != -1)
		ctx->tenant->max_sandboxes = (uint32_t)v;
}

static void
tenant_requests(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	long long	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_REQUESTS, "max requests") == -1)
		free(s);
	else if ((v = number(ctx, loc, "max requests", s, 1, 4096)) != -1)
		ctx->tenant->max_requests = (uint32_t)v;
}

/*
 * How long a download link lives: whole seconds, as its expiry is
 * sealed in it, from 1m to 720h.  0, or -1 after an error.
 */
static int
share_duration(struct parse_ctx *ctx, const struct ploc *loc,
    const char *what, const char *s, uint64_t *out)
{
	uint64_t	 v;

	if (parse_duration(s, &v) == -1)
		perr(ctx, loc, "%s \"%s\": not a duration", what, s);
	else if (v < POLICY_SHARE_EXPIRY_MIN * 1000ULL ||
	    v > POLICY_SHARE_EXPIRY_MAX * 1000ULL)
		perr(ctx, loc, "%s %s: out of range (1m..720h)", what, s);
	else if (v % 1000 != 0)
		perr(ctx, loc, "%s %s: not whole seconds", what, s);
	else {
		*out = v / 1000;
		return 0;
	}
	return -1;
}

static void
tenant_share_expiry(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (once(ctx, loc, &ctx->fields, FIELD_SHARE_EXPIRY,
	    "share max expiry") == 0)
		(void)share_duration(ctx, loc, "share max expiry", s,
		    &ctx->tenant->share_expiry_max);
	free(s);
}

/* 0: the tenant may not share files at all. */
static void
tenant_share_downloads(struct parse_ctx *ctx, const struct ploc *loc,
    char *s)
{
	long long	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_SHARE_DOWNLOADS,
	    "share downloads") == -1)
		free(s);
	else if ((v = number(ctx, loc, "share downloads", s, 0,
	    POLICY_SHARE_DOWNLOADS_MAX)) != -1)
		ctx->tenant->share_downloads = (uint32_t)v;
}

/*
 * Bytes a minute, or NULL for "none": no limit.  As "idle never" does,
 * a word says there is none; "0" would read as serving nothing.
 */
static void
tenant_share_rate(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint64_t	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_SHARE_RATE, "share rate") == -1)
		;
	else if (s == NULL)
		ctx->tenant->share_rate = 0;
	else if (parse_size(s, &v) == -1)
		perr(ctx, loc, "share rate \"%s\": not a size", s);
	else if (v < 1ULL << 10 || v > 1ULL << 40)
		perr(ctx, loc, "share rate %s: out of range (1K..1T, or none)",
		    s);
	else
		ctx->tenant->share_rate = v;
	free(s);
}

/* Its one-shot runs' containers serve its next runs (sandboxd/reuse.c). */
static void
tenant_reuse(struct parse_ctx *ctx, const struct ploc *loc, int yes)
{
	if (once(ctx, loc, &ctx->fields, FIELD_REUSE, "reuse") == 0)
		ctx->tenant->reuse = yes;
}

/*
 * Files are copied beneath the path by name, so it is kept the one way
 * it can be written: no "." or ".." to see past, no empty components.
 */
static const char *
path_abnormal(const char *path)
{
	const char	*c = path + 1;
	size_t		 n;

	if (*c == '\0')
		return NULL;
	for (;;) {
		n = strcspn(c, "/");
		if (n == 0)
			return *c == '\0' ? "ends with '/'" :
			    "has an empty component";
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return "has a \".\" or \"..\" component";
		if (c[n] == '\0')
			return NULL;
		c += n + 1;
	}
}

static void
tenant_path(struct parse_ctx *ctx, const struct ploc *loc, char *s,
    int readonly)
{
	struct tenant		*t = ctx->tenant;
	struct tenant_path	*tp;
	const char		*why;
	size_t			 i;

	if (check_path(ctx, loc, "local path", s, sizeof(tp->path)) == -1)
		goto done;
	if ((why = path_abnormal(s)) != NULL) {
		perr(ctx, loc, "local path \"%s\": %s", s, why);
		goto done;
	}
	for (i = 0; i < t->npaths; i++)
		if (strcmp(t->paths[i].path, s) == 0) {
			perr(ctx, loc, "local path \"%s\" given twice", s);
			goto done;
		}
	t->paths = xreallocarray(t->paths, t->npaths + 1, sizeof(*t->paths));
	tp = &t->paths[t->npaths++];
	memset(tp, 0, sizeof(*tp));
	(void)str_copy(tp->path, s, sizeof(tp->path));
	tp->readonly = readonly;
 done:
	free(s);
}

/*
 * Checks of a whole block.  A field given with a wrong value is not
 * missing, and after a line that could not be parsed nothing is known.
 */
static int
block_complete(struct parse_ctx *ctx, uint32_t field)
{
	return ctx->syntax_errors != ctx->block_syntax ||
	    (ctx->fields & field) != 0;
}

static void
tenant_end(struct parse_ctx *ctx)
{
	if (!block_complete(ctx, FIELD_TOKEN | FIELD_UID | FIELD_CLAIM))
		perr(ctx, &ctx->block_loc, "tenant \"%s\" has no token, uid "
		    "or claim", ctx->tenant->name);
}

/* A claim's name: JSON allows anything, real issuers use these. */
static int
claim_name_valid(const char *s)
{
	if (*s == '\0' || strlen(s) >= OAUTH_CLAIM_MAX)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_-.:/", *s) != NULL))
			return 0;
	return 1;
}

/*
 * "claim NAME VALUE" or "claim NAME any".  The same claim and value may
 * not make two tenants: a token would be the first's by file order, and
 * that is a mistake more often than a wish.
 */
static void
tenant_claim(struct parse_ctx *ctx, const struct ploc *loc, char *name,
    char *value)
{
	struct tenant		*t;
	struct tenant_claim	*c;
	size_t			 i;
	const char		*v = value != NULL ? value : "";

	ctx->fields |= FIELD_CLAIM;
	if (ctx->nclaims++ == 0)
		ctx->claim_loc = *loc;
	if (!claim_name_valid(name)) {
		perr(ctx, loc, "claim \"%.40s\": a name of letters, digits and "
		    "_-.:/, at most %d bytes", name, OAUTH_CLAIM_MAX - 1);
		goto done;
	}
	if (value != NULL && (*value == '\0' ||
	    strlen(value) >= OAUTH_VALUE_MAX)) {
		perr(ctx, loc, "claim %s: a value of 1 to %d bytes", name,
		    OAUTH_VALUE_MAX - 1);
		goto done;
	}
	TAILQ_FOREACH(t, &ctx->p->tenants, entry)
		for (i = 0; i < t->nclaims; i++)
			if (strcmp(t->claims[i].name, name) == 0 &&
			    t->claims[i].any == (value == NULL) &&
			    strcmp(t->claims[i].value, v) == 0) {
				perr(ctx, loc, "claim %s %s%.40s%s already "
				    "used by tenant \"%s\"", name,
				    value != NULL ? "\"" : "",
				    value != NULL ? value : "any",
				    value != NULL ? "\"" : "", t->name);
				goto done;
			}
	t = ctx->tenant;
	t->claims = xreallocarray(t->claims, t->nclaims + 1,
	    sizeof(*t->claims));
	c = &t->claims[t->nclaims++];
	memset(c, 0, sizeof(*c));
	(void)str_copy(c->name, name, sizeof(c->name));
	(void)str_copy(c->value, v, sizeof(c->value));
	c->any = value == NULL;
 done:
	free(name);
	free(value);
}

/*
 * A language is found by its name or any alias, so none of these may be
 * given twice across all languages.
 */
static int
language_clash(struct parse_ctx *ctx, const struct ploc *loc,
    const char *what, const char *name)
{
	struct language	*l;
	size_t		 i;

	TAILQ_FOREACH(l, &ctx->p->languages, entry) {
		if (strcmp(l->name, name) == 0) {
			if (strcmp(what, "language") == 0)
				perr(ctx, loc, "language \"%s\" defined twice",
				    name);
			else
				perr(ctx, loc, "%s \"%s\" is the name of "
				    "language \"%s\"", what, name, l->name);
			return -1;
		}
		for (i = 0; i < l->naliases; i++)
			if (strcmp(l->aliases[i], name) == 0) {
				perr(ctx, loc, "%s \"%s\" is an alias of "
				    "language \"%s\"", what, name, l->name);
				return -1;
			}
	}
	return 0;
}

static void
language_begin(struct parse_ctx *ctx, const struct ploc *loc, char *name)
{
	struct language	*l;

	if (check_name(ctx, loc, "language name", name) == 0)
		(void)language_clash(ctx, loc, "language", name);
	l = xcalloc(1, sizeof(*l));
	(void)str_copy(l->name, name, sizeof(l->name));
	(void)str_copy(l->image, HOST_IMAGE, sizeof(l->image));
	TAILQ_INSERT_TAIL(&ctx->p->languages, l, entry);
	ctx->language = l;
	ref_add(&ctx->image_refs, &ctx->nimage_refs, loc, l);
	block_begin(ctx, loc);
	free(name);
}

/* An alias is a name that may also hold '+' and '#', as c++ and c# do. */
static int
check_alias(struct parse_ctx *ctx, const struct ploc *loc, const char *s)
{
	char	 name[POLICY_NAME_MAX];
	size_t	 i;

	if (strlen(s) >= sizeof(name))
		return check_name(ctx, loc, "alias", s);
	for (i = 0; s[i] != '\0'; i++)
		name[i] = s[i] == '+' || s[i] == '#' ? '_' : s[i];
	name[i] = '\0';
	if (name_valid(name))
		return 0;
	if (*s != '\0' && *s != '-' && *s != '.' && strlen(s) <= TEXT_MAX) {
		perr(ctx, loc, "invalid alias \"%s\": only letters, digits, "
		    "'.', '_', '-', '+' and '#' are allowed", s);
		return -1;
	}
	return check_name(ctx, loc, "alias", s);
}

static void
language_alias(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct language	*l = ctx->language;

	if (check_alias(ctx, loc, s) == -1 ||
	    language_clash(ctx, loc, "alias", s) == -1) {
		free(s);
		return;
	}
	l->aliases = xreallocarray(l->aliases, l->naliases + 1,
	    sizeof(*l->aliases));
	l->aliases[l->naliases++] = s;
}

/* The name the source is saved under in the sandbox's work directory. */
static void
language_file(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	const char	*why = NULL;

	if (once(ctx, loc, &ctx->fields, FIELD_FILE, "file") == -1)
		goto done;
	if (*s == '\0')
		why = "empty";
	else if (strchr(s, '/') != NULL)
		why = "contains '/'";
	else if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		why = "not a file name";
	else if (*s == '-')
		why = "starts with '-'";
	if (why != NULL)
		perr(ctx, loc, "file \"%s\": %s", s, why);
	else
		(void)copy(ctx, loc, "file", ctx->language->file, s,
		    sizeof(ctx->language->file));
 done:
	free(s);
}

static void
language_cmd(struct parse_ctx *ctx, const struct ploc *loc, uint32_t bit,
    const char *what, char *s, char **dst)
{
	if (once(ctx, loc, &ctx->fields, bit, what) == -1)
		free(s);
	else if (*s == '\0') {
		perr(ctx, loc, "%s: empty command", what);
		free(s);
	} else
		*dst = s;
}

static void
language_image(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (once(ctx, loc, &ctx->fields, FIELD_IMAGE, "image") == 0 &&
	    check_name(ctx, loc, "image name", s) == 0 &&
	    copy(ctx, loc, "image name", ctx->language->image, s,
	    sizeof(ctx->language->image)) == 0)
		ctx->image_refs[ctx->nimage_refs - 1].loc = *loc;
	free(s);
}

static void
language_end(struct parse_ctx *ctx)
{
	struct language	*l = ctx->language;

	if (!block_complete(ctx, FIELD_FILE))
		perr(ctx, &ctx->block_loc, "language \"%s\" has no file",
		    l->name);
	if (!block_complete(ctx, FIELD_RUN))
		perr(ctx, &ctx->block_loc, "language \"%s\" has no run "
		    "command", l->name);
}

static void
audit_begin(struct parse_ctx *ctx, const struct ploc *loc)
{
	(void)once(ctx, loc, &ctx->seen, SEEN_AUDIT, "audit");
	block_begin(ctx, loc);
}

static void
audit_required(struct parse_ctx *ctx, const struct ploc *loc, int yes)
{
	if (once(ctx, loc, &ctx->fields, FIELD_REQUIRED, "required") == 0)
		ctx->p->audit.required = yes;
}

static void
audit_excerpt(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint64_t	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_EXCERPT, "excerpt") == 0) {
		if (parse_size(s, &v) == -1 || v > AUDIT_EXCERPT_MAX)
			perr(ctx, loc, "excerpt \"%s\": a size from 0 "
			    "to %dK", s, AUDIT_EXCERPT_MAX / 1024);
		else
			ctx->p->audit.excerpt = (uint32_t)v;
	}
	free(s);
}

/*
 * After the last line: defaults that depend on other settings, and names
 * that may refer to a definition further down.
 */

static void
finish_limits(struct parse_ctx *ctx)
{
	struct policy	*p = ctx->p;
	struct limits	*def, *l;
	struct tenant	*t;
	size_t		 i;

	if ((def = policy_limits(p, "default")) == NULL)
		def = limits_new("default");
	else
		TAILQ_REMOVE(&p->limits, def, entry);
	TAILQ_INSERT_HEAD(&p->limits, def, entry);

	TAILQ_FOREACH(l, &p->limits, entry) {
		if (l == def)
			continue;
		if (!(l->set & LIMIT_MEMORY))
			l->memory = def->memory;
		if (!(l->set & LIMIT_CPUS))
			l->cpus = def->cpus;
		if (!(l->set & LIMIT_PIDS))
			l->pids = def->pids;
		if (!(l->set & LIMIT_TIMEOUT))
			l->timeout = def->timeout;
		if (!(l->set & LIMIT_OUTPUT))
			l->output = def->output;
		if (!(l->set & LIMIT_DISK))
			l->disk = def->disk;
		if (!(l->set & LIMIT_NETWORK))
			l->network = def->network;
		if (!(l->set & LIMIT_IDLE))
			l->idle = def->idle;
		if (!(l->set & LIMIT_LIFETIME))
			l->lifetime = def->lifetime;
	}

	for (i = 0; i < ctx->ntenant_refs; i++) {
		t = ctx->tenant_refs[i].obj;
		if ((t->limits = policy_limits(p, t->limits_name)) == NULL)
			perr(ctx, &ctx->tenant_refs[i].loc, "tenant \"%s\": "
			    "unknown limits \"%s\"", t->name, t->limits_name);
	}
}

static void
finish_images(struct parse_ctx *ctx)
{
	struct policy	*p = ctx->p;
	struct image	*host;
	struct language	*l;
	size_t		 i;

	if ((host = policy_image(p, HOST_IMAGE)) == NULL) {
		host = xcalloc(1, sizeof(*host));
		(void)str_copy(host->name, HOST_IMAGE, sizeof(host->name));
		host->type = IMAGE_HOST;
		host->pool = DEFAULT_POOL;
		host->pool_idle = DEFAULT_POOL_IDLE;
	} else
		TAILQ_REMOVE(&p->images, host, entry);
	TAILQ_INSERT_HEAD(&p->images, host, entry);

	for (i = 0; i < ctx->nimage_refs; i++) {
		l = ctx->image_refs[i].obj;
		if (policy_image(p, l->image) == NULL)
			perr(ctx, &ctx->image_refs[i].loc, "language \"%s\": "
			    "unknown image \"%s\"", l->name, l->image);
	}
}

/*
 * metrics: a token that may read /metrics and do nothing else, or a
 * tenant whose clients may read it besides their own work.
 */
static void
metrics_token(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct policy	*p = ctx->p;
	uint8_t		 hash[POLICY_TOKEN_HASH_LEN];

	if (parse_token(s, hash) == -1)
		perr(ctx, loc, "metrics token: not \"sha256:\" and 64 hex "
		    "digits");
	else if (token_used(ctx, loc, hash) == 0) {
		p->metrics_tokens = xreallocarray(p->metrics_tokens,
		    p->nmetrics_tokens + 1, sizeof(*p->metrics_tokens));
		memcpy(p->metrics_tokens[p->nmetrics_tokens++], hash,
		    sizeof(hash));
	}
	sodium_memzero(hash, sizeof(hash));
	free(s);
}

static void
metrics_tenant(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct policy	*p = ctx->p;
	size_t		 i;

	if (check_name(ctx, loc, "tenant name", s) == -1)
		goto done;
	for (i = 0; i < p->nmetrics_tenants; i++)
		if (strcmp(p->metrics_tenants[i], s) == 0) {
			perr(ctx, loc, "metrics tenant \"%s\" given twice", s);
			goto done;
		}
	p->metrics_tenants = xreallocarray(p->metrics_tenants,
	    p->nmetrics_tenants + 1, sizeof(*p->metrics_tenants));
	p->metrics_tenants[p->nmetrics_tenants++] = s;
	/* It may be defined further down. */
	ref_add(&ctx->metrics_refs, &ctx->nmetrics_refs, loc, s);
	return;
 done:
	free(s);
}

static void
oauth_begin(struct parse_ctx *ctx, const struct ploc *loc)
{
	(void)once(ctx, loc, &ctx->seen, SEEN_OAUTH, "oauth");
	ctx->p->oauth.enabled = 1;
	block_begin(ctx, loc);
}

/*
 * An http or https URL.  Plain http only to the loopback: tokens and keys
 * come from these, and a network path could change them.
 */
static int
check_url(struct parse_ctx *ctx, const struct ploc *loc, const char *what,
    const char *s)
{
	struct url	 u;
	const char	*why;

	if (url_parse(s, &u, &why) == -1) {
		perr(ctx, loc, "%s \"%.*s\": %s", what, TEXT_MAX, s, why);
		return -1;
	}
	if (!url_secure(&u)) {
		perr(ctx, loc, "%s \"%.*s\": https, or plain http on the "
		    "loopback only", what, TEXT_MAX, s);
		return -1;
	}
	return 0;
}

static void
oauth_url(struct parse_ctx *ctx, const struct ploc *loc, uint32_t bit,
    const char *what, char *s, char *dst, size_t size)
{
	struct url	 u;
	const char	*why;

	if (once(ctx, loc, &ctx->fields, bit, what) == -1 ||
	    check_url(ctx, loc, what, s) == -1)
		goto done;
	/* RFC 8414 and 8707: an issuer and a resource have no query. */
	if (url_parse(s, &u, &why) == 0 && strchr(u.path, '?') != NULL) {
		perr(ctx, loc, "%s \"%.*s\": no query (?) allowed", what,
		    TEXT_MAX, s);
		goto done;
	}
	(void)copy(ctx, loc, what, dst, s, size);
 done:
	free(s);
}

/* "jwks PATH" or "jwks URL". */
static void
oauth_jwks(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct oauth_conf	*o = &ctx->p->oauth;

	if (once(ctx, loc, &ctx->fields, FIELD_JWKS, "jwks") == -1)
		;
	else if (*s == '/') {
		if (check_path(ctx, loc, "jwks", s, sizeof(o->jwks)) == 0)
			(void)copy(ctx, loc, "jwks", o->jwks, s,
			    sizeof(o->jwks));
	} else if (check_url(ctx, loc, "jwks", s) == 0)
		(void)copy(ctx, loc, "jwks", o->jwks, s, sizeof(o->jwks));
	free(s);
}

/* RFC 6749's scope-token: printable ASCII but space, " and \. */
static void
oauth_scope(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct oauth_conf	*o = &ctx->p->oauth;
	const char		*c;
	size_t			 i;

	ctx->fields |= FIELD_SCOPE;
	for (c = s; *c != '\0'; c++)
		if (*c <= 0x20 || *c >= 0x7f || *c == '"' || *c == '\\')
			break;
	if (*s == '\0' || *c != '\0' || strlen(s) >= OAUTH_SCOPE_MAX) {
		perr(ctx, loc, "scope \"%.*s\": 1 to %d printable characters, "
		    "no spaces, quotes or backslashes", TEXT_MAX, s,
		    OAUTH_SCOPE_MAX - 1);
		goto done;
	}
	for (i = 0; i < o->nscopes; i++)
		if (strcmp(o->scopes[i], s) == 0) {
			perr(ctx, loc, "scope \"%s\" given twice", s);
			goto done;
		}
	o->scopes = xreallocarray(o->scopes, o->nscopes + 1,
	    sizeof(*o->scopes));
	o->scopes[o->nscopes++] = s;
	return;
 done:
	free(s);
}

static void
oauth_leeway(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	uint64_t	 v;

	if (once(ctx, loc, &ctx->fields, FIELD_LEEWAY, "leeway") == -1)
		;
	else if (parse_duration(s, &v) == -1 || v > OAUTH_LEEWAY_MAX ||
	    v % 1000 != 0)
		perr(ctx, loc, "leeway \"%s\": whole seconds from 0 to 10m",
		    s);
	else
		ctx->p->oauth.leeway = v;
	free(s);
}

/* "token type TYPE", or "token type any" for issuers not of RFC 9068. */
static void
oauth_type(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct oauth_conf	*o = &ctx->p->oauth;
	const char		*c;

	if (once(ctx, loc, &ctx->fields, FIELD_TYPE, "token type") == -1)
		goto done;
	if (s == NULL) {
		o->type[0] = '\0';
		goto done;
	}
	for (c = s; *c != '\0'; c++)
		if (*c <= 0x20 || *c >= 0x7f || *c == '"')
			break;
	if (*s == '\0' || *c != '\0' || strlen(s) >= sizeof(o->type))
		perr(ctx, loc, "token type \"%.*s\": a media type such as "
		    "at+jwt, or any", TEXT_MAX, s);
	else
		(void)str_copy(o->type, s, sizeof(o->type));
 done:
	free(s);
}

static void
oauth_end(struct parse_ctx *ctx)
{
	if (!block_complete(ctx, FIELD_ISSUER))
		perr(ctx, &ctx->block_loc, "oauth: no issuer (the URL of the "
		    "authorization server whose tokens are taken)");
	if (!block_complete(ctx, FIELD_AUDIENCE))
		perr(ctx, &ctx->block_loc, "oauth: no audience (this "
		    "server's own URL, such as https://mcp.example.com/mcp, "
		    "which tokens must be issued for)");
}

/* Claims mean nothing without tokens to read them from. */
static void
finish_oauth(struct parse_ctx *ctx)
{
	if (!ctx->p->oauth.enabled && ctx->nclaims > 0)
		perr(ctx, &ctx->claim_loc, "claim: there is no oauth block, "
		    "so no token to read claims from");
}

/*
 * "share url URL": the origin download links are made with, as clients
 * will reach it; a link is a credential, so plain http only to the
 * loopback.  Kept as url_origin() writes it, with no trailing slash.
 */
static void
share_url(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	struct url	 u;
	const char	*why;
	char		 origin[OAUTH_URL_MAX];

	if (once(ctx, loc, &ctx->seen, SEEN_SHARE_URL, "share url") == -1 ||
	    check_url(ctx, loc, "share url", s) == -1 ||
	    url_parse(s, &u, &why) == -1)
		goto done;
	if (strchr(u.path, '?') != NULL)
		perr(ctx, loc, "share url \"%.*s\": no query (?) allowed",
		    TEXT_MAX, s);
	else if (strcmp(u.path, "/") != 0)
		perr(ctx, loc, "share url \"%.*s\": no path allowed: a scheme, "
		    "a host and a port, as in https://mcp.example.com",
		    TEXT_MAX, s);
	else if (url_origin(&u, origin, sizeof(origin)) == -1)
		perr(ctx, loc, "share url too long (at most %zu bytes)",
		    sizeof(origin) - 1);
	else
		(void)str_copy(ctx->p->share_url, origin,
		    sizeof(ctx->p->share_url));
 done:
	free(s);
}

/*
 * "host name NAME": this host's short name among several behind one
 * balancer, which mcpd puts in the sandbox and session ids it hands out
 * ("NAME~ID"), so that another host can say whose an id is.  A DNS
 * label's letters, short enough that a prefixed id fits a sandbox
 * reference.
 */
static void
host_name(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	size_t	 n = strlen(s);

	if (once(ctx, loc, &ctx->seen, SEEN_HOST_NAME, "host name") == -1)
		goto done;
	if (n == 0 || n >= sizeof(ctx->p->host_name) ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n ||
	    s[0] == '-' || s[n - 1] == '-')
		perr(ctx, loc, "host name \"%.*s\": 1 to %zu lower-case "
		    "letters, digits and '-' (not first or last), as in "
		    "\"mcp-2\"", TEXT_MAX, s, sizeof(ctx->p->host_name) - 1);
	else
		(void)str_copy(ctx->p->host_name, s,
		    sizeof(ctx->p->host_name));
 done:
	free(s);
}

/* Above a tenant's "share max expiry" is no error: that caps it. */
static void
share_expiry(struct parse_ctx *ctx, const struct ploc *loc, char *s)
{
	if (once(ctx, loc, &ctx->seen, SEEN_SHARE_EXPIRY,
	    "share expiry") == 0)
		(void)share_duration(ctx, loc, "share expiry", s,
		    &ctx->p->share_expiry);
	free(s);
}

static void
finish_metrics(struct parse_ctx *ctx)
{
	const char	*name;
	size_t		 i;

	for (i = 0; i < ctx->nmetrics_refs; i++) {
		name = ctx->metrics_refs[i].obj;
		if (policy_tenant(ctx->p, name) == NULL)
			perr(ctx, &ctx->metrics_refs[i].loc, "metrics tenant: "
			    "unknown tenant \"%s\"", name);
	}
}

static void
finish_listens(struct parse_ctx *ctx)
{
	struct listen_addr	*la;
	const struct ploc	*loc;
	size_t			 i;

	for (i = 0; i < ctx->nlisten_refs; i++) {
		la = ctx->listen_refs[i].obj;
		loc = &ctx->listen_refs[i].loc;
		if (policy_tenant(ctx->p, la->tenant) != NULL)
			continue;
		if (la->type == LISTEN_TCP)
			perr(ctx, loc, "listen on %s port %u: unknown tenant "
			    "\"%s\"", la->host, la->port, la->tenant);
		else
			perr(ctx, loc, "listen on unix %s: unknown tenant "
			    "\"%s\"", la->path, la->tenant);
	}
	if (ctx->tls_listens > 0 && (ctx->p->tls_cert[0] == '\0' ||
	    ctx->p->tls_key[0] == '\0'))
		perr(ctx, &ctx->tls_loc, "a listener with tls needs \"tls "
		    "certificate\" and \"tls key\": the files of its "
		    "certificate chain and private key (PEM)");
}

static void
default_path(struct parse_ctx *ctx, char *dst, size_t size, const char *dir,
    const char *file, const struct ploc *dirloc, const char *dirwhat,
    const char *what)
{
	int	 n;

	if (dst[0] != '\0')
		return;
	n = snprintf(dst, size, "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= size) {
		dst[0] = '\0';
		perr(ctx, dirloc, "%s too long for the default %s (at most "
		    "%zu bytes); set it explicitly", dirwhat, what, size - 1);
	}
}

static void
finish(struct parse_ctx *ctx)
{
	struct policy	*p = ctx->p;

	finish_listens(ctx);
	finish_metrics(ctx);
	finish_oauth(ctx);
	finish_limits(ctx);
	finish_images(ctx);
	finish_runtimes(ctx);
	if (TAILQ_EMPTY(&ctx->p->languages))
		policy_default_languages(ctx->p);
	default_path(ctx, p->sandbox_socket, sizeof(p->sandbox_socket),
	    p->run_dir, DEFAULT_SANDBOX_SOCK, &ctx->run_dir_loc,
	    "run directory", "sandbox socket");
	default_path(ctx, p->audit.socket, sizeof(p->audit.socket),
	    p->run_dir, DEFAULT_AUDIT_SOCK, &ctx->run_dir_loc,
	    "run directory", "audit socket");
	default_path(ctx, p->audit.database, sizeof(p->audit.database),
	    p->state_dir, DEFAULT_AUDIT_DB, &ctx->state_dir_loc,
	    "state directory", "audit database");
}

/* The runtimes every file has; "runc" first, as "runc PATH" moves it. */
static const struct runtime builtin_runtimes[] = {
	{ "runc", DEFAULT_RUNC, RUNTIME_RUNC, 0, "", RUNTIME_NET_DEFAULT },
	{ "crun", DEFAULT_CRUN, RUNTIME_CRUN, 0, "", RUNTIME_NET_DEFAULT },
	{ "runsc", DEFAULT_RUNSC, RUNTIME_RUNSC, 0, "",
	    RUNTIME_NET_DEFAULT },
};

static struct policy *
policy_new(void)
{
	struct policy	*p;
	size_t		 i;

	p = xcalloc(1, sizeof(*p));
	TAILQ_INIT(&p->listens);
	TAILQ_INIT(&p->limits);
	TAILQ_INIT(&p->tenants);
	TAILQ_INIT(&p->images);
	TAILQ_INIT(&p->languages);
	(void)str_copy(p->user, DEFAULT_USER, sizeof(p->user));
	(void)str_copy(p->run_dir, DEFAULT_RUN_DIR, sizeof(p->run_dir));
	(void)str_copy(p->state_dir, DEFAULT_STATE_DIR, sizeof(p->state_dir));
	/* p->runc is the path of the runtime in use: finish_runtimes(). */
	(void)str_copy(p->runtime, DEFAULT_RUNTIME, sizeof(p->runtime));
	for (i = 0; i < nitems(builtin_runtimes); i++)
		p->runtimes[p->nruntimes++] = builtin_runtimes[i];
	(void)str_copy(p->sandbox_init, DEFAULT_SANDBOX_INIT,
	    sizeof(p->sandbox_init));
	p->uid_base = DEFAULT_UID_BASE;
	p->uid_slots = DEFAULT_UID_SLOTS;
	p->oauth.leeway = DEFAULT_OAUTH_LEEWAY;
	p->share_expiry = DEFAULT_SHARE_EXPIRY;
	(void)str_copy(p->oauth.type, DEFAULT_OAUTH_TYPE,
	    sizeof(p->oauth.type));
	p->audit.required = 1;
	p->audit.excerpt = DEFAULT_AUDIT_EXCERPT;
	(void)str_copy(p->audit.user, DEFAULT_AUDIT_USER,
	    sizeof(p->audit.user));
	/* Not root by accident if policy_resolve() is never called. */
	p->uid = p->audit.uid = (uid_t)-1;
	p->gid = p->group_gid = p->audit.gid = (gid_t)-1;
	return p;
}

static void
ctx_free(struct parse_ctx *ctx)
{
	struct file	*f;
	struct macro	*m;

	while ((f = ctx->files) != NULL) {
		ctx->files = f->next;
		free(f->name);
		free(f->buf);
		free(f);
	}
	while ((m = ctx->macros) != NULL) {
		ctx->macros = m->next;
		free(m->name);
		free(m->value);
		free(m);
	}
	free(ctx->include);
	free(ctx->tenant_refs);
	free(ctx->runtime_refs);
	free(ctx->image_refs);
	free(ctx->listen_refs);
	free(ctx->metrics_refs);
	free(ctx);
}

struct policy *
policy_load(const char *path)
{
	struct parse_ctx	*ctx;
	struct policy		*p;
	int			 rv;

	if (sodium_init() == -1) {
		log_warnx("%s: libsodium cannot be initialized", path);
		return NULL;
	}
	ctx = xcalloc(1, sizeof(*ctx));
	ctx->p = p = policy_new();
	crypto_hash_sha256_init(&ctx->sha);
	if (str_copy(p->path, path, sizeof(p->path)) == -1) {
		log_warnx("%.64s...: path too long", path);
		ctx->errors++;
	} else if (file_push(ctx, path, NULL) == 0) {
		rv = yyparse(ctx);
		if (rv != 0 && ctx->errors == 0) {
			log_warnx("%s: cannot be parsed", path);
			ctx->errors++;
		}
		finish(ctx);
	}
	crypto_hash_sha256_final(&ctx->sha, p->digest);
	if (ctx->errors > 0) {
		policy_free(p);
		p = NULL;
	}
	ctx_free(ctx);
	return p;
}
