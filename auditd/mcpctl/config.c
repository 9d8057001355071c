/*
 * mcpctl config check and token new: the configuration as the daemons
 * would take it, and a bearer token with the line that grants it.
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "mcpctl.h"
#include "policy.h"
#include "util.h"

#define TOKEN_BYTES	32
#define TOKEN_PREFIX	"mcpd_"

/* A program the daemons run: there and executable. */
static void
check_program(struct config_report *r, const char *what, const char *path)
{
	if (access(path, X_OK) == 0)
		return;
	warnx("%s %s: %s", what, path, strerror(errno));
	r->problems++;
}

static void
runtime_missing(const struct runtime *rt, int err, void *arg)
{
	warnx("runtime %s %s: %s", rt->name, rt->path, strerror(err));
}

/*
 * Every runtime the file uses (globally, for a tenant or an image) or
 * defines, used or not: a binary that is there and executable.
 */
static void
check_runtimes(struct config_report *r, const struct policy *p)
{
	r->runtime = p->runtime;
	r->runtime_kind = policy_runtime_kind(p->runtime_kind);
	r->runtime_path = p->runc;
	r->problems += (unsigned)policy_runtimes_check(p, runtime_missing,
	    NULL);
}

static void
check_counts(struct config_report *r, const struct policy *p)
{
	const struct tenant	*t;
	const struct limits	*l;
	const struct image	*im;
	const struct language	*lang;
	const struct listen_addr *la;

	TAILQ_FOREACH(t, &p->tenants, entry) {
		r->tenants++;
		r->tokens += t->ntokens;
	}
	TAILQ_FOREACH(l, &p->limits, entry)
		r->limits++;
	TAILQ_FOREACH(im, &p->images, entry)
		r->images++;
	TAILQ_FOREACH(lang, &p->languages, entry)
		r->languages++;
	TAILQ_FOREACH(la, &p->listens, entry)
		r->listens++;
}

int
config_check(struct mcpctl *ctx, int argc, char **argv)
{
	struct config_report	 r;
	struct policy		*p;
	const struct image	*im;
	char			 hex[65];

	cmd_operands("check", &argc, &argv, 0, 0);
	memset(&r, 0, sizeof(r));
	r.file = ctx->conffile;
	/* policy_load() and policy_resolve() say what is wrong. */
	if ((p = policy_load(ctx->conffile)) == NULL) {
		r.problems++;
		ctx->out->config_check(&r);
		return EXIT_ERROR;
	}
	sodium_bin2hex(hex, sizeof(hex), p->digest, sizeof(p->digest));
	(void)snprintf(r.digest, sizeof(r.digest), "sha256:%s", hex);
	r.loaded = 1;
	if (policy_resolve(p, POLICY_RESOLVE_MCPD | POLICY_RESOLVE_AUDIT |
	    POLICY_RESOLVE_TENANTS) == -1)
		r.problems++;
	check_runtimes(&r, p);
	check_program(&r, "sandbox-init", p->sandbox_init);
	TAILQ_FOREACH(im, &p->images, entry)
		if (im->type == IMAGE_ROOTFS && access(im->path, R_OK | X_OK) ==
		    -1) {
			warnx("image %s: rootfs %s: %s", im->name, im->path,
			    strerror(errno));
			r.problems++;
		}
	check_counts(&r, p);
	ctx->out->config_check(&r);
	policy_free(p);
	return r.problems == 0 ? 0 : EXIT_ERROR;
}

int
token_new(struct mcpctl *ctx, int argc, char **argv)
{
	struct token_result	 t;
	uint8_t			 raw[TOKEN_BYTES], sum[32];
	char			 hex[65];
	size_t			 plen = strlen(TOKEN_PREFIX);

	cmd_operands("new", &argc, &argv, 0, 1);
	memset(&t, 0, sizeof(t));
	if (argc == 1) {
		if (!name_valid(argv[0])) {
			warnx("\"%s\": not a tenant name", argv[0]);
			usage_cmd("new");
		}
		t.tenant = argv[0];
	}
	randombytes_buf(raw, sizeof(raw));
	memcpy(t.token, TOKEN_PREFIX, plen);
	sodium_bin2base64(t.token + plen, sizeof(t.token) - plen, raw,
	    sizeof(raw), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
	crypto_hash_sha256(sum, (const uint8_t *)t.token, strlen(t.token));
	sodium_bin2hex(hex, sizeof(hex), sum, sizeof(sum));
	(void)snprintf(t.hash, sizeof(t.hash), "sha256:%s", hex);
	ctx->out->token(&t);
	sodium_memzero(t.token, sizeof(t.token));
	return 0;
}
