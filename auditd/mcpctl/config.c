/*
 * mcpctl config check and token new: the configuration as the daemons
 * would take it, and a bearer token with the line that grants it.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
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

/*
 * The line mcp-sandboxd -n prints for a runtime (sandboxd/trial.c):
 * "runtime NAME (KIND PATH): a container started in N ms", or "...: no
 * container started: WHY".  0, or -1 for any other line.
 */
static int
trial_line(struct config_trial *t, const char *line)
{
	const char	*name, *end, *rest;

	memset(t, 0, sizeof(*t));
	if (strncmp(line, "runtime ", 8) != 0 ||
	    (rest = strstr(line, "): ")) == NULL)
		return -1;
	name = line + 8;
	if ((end = strchr(name, ' ')) == NULL || end > rest ||
	    (size_t)(end - name) >= sizeof(t->runtime))
		return -1;
	memcpy(t->runtime, name, (size_t)(end - name));
	rest += 3;
	if (sscanf(rest, "a container started in %llu ms", &t->ms) == 1)
		t->started = 1;
	else if (strncmp(rest, "no container started: ", 22) == 0)
		str_copy(t->error, rest + 22, sizeof(t->error));
	else
		return -1;
	return 0;
}

/* What a failed mcp-sandboxd -n said, on our stderr. */
static void
trial_relay(FILE *errf)
{
	char	 line[1024];

	rewind(errf);
	while (fgets(line, sizeof(line), errf) != NULL)
		fputs(line, stderr);
}

/*
 * As root, a container under each runtime the file uses: mcp-sandboxd
 * -n, the one installed beside mcpctl, starts them as the daemon would
 * (mcp-sandboxd(8)).  Its lines on stdout are the report's; its stderr
 * is shown when it fails.
 */
static void
check_containers(struct config_report *r, const char *conffile)
{
	char	 self[PATH_MAX], prog[PATH_MAX], line[1024], *nl;
	ssize_t	 n;
	size_t	 i, failed = 0;
	int	 p[2], st, devnull;
	pid_t	 pid;
	FILE	*out, *errf;

	if (geteuid() != 0) {
		r->untried = "not root";
		return;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		err(EXIT_ERROR, "/proc/self/exe");
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	if (str_fmt(prog, sizeof(prog), "%s/mcp-sandboxd", self) == -1)
		errx(EXIT_ERROR, "%s: path too long", self);
	if (access(prog, X_OK) == -1) {
		r->untried = "no mcp-sandboxd beside mcpctl";
		return;
	}
	if ((errf = tmpfile()) == NULL || pipe2(p, O_CLOEXEC) == -1)
		err(EXIT_ERROR, "mcp-sandboxd -n");
	if ((pid = fork_for_exec()) == -1)
		err(EXIT_ERROR, "fork");
	if (pid == 0) {
		if ((devnull = open("/dev/null", O_RDONLY)) == -1 ||
		    dup2(devnull, 0) == -1 || dup2(p[1], 1) == -1 ||
		    dup2(fileno(errf), 2) == -1)
			_exit(127);
		execl(prog, prog, "-n", "-f", conffile, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if ((out = fdopen(p[0], "r")) == NULL)
		err(EXIT_ERROR, "fdopen");
	while (fgets(line, sizeof(line), out) != NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (r->ntrials < CONFIG_TRIALS_MAX &&
		    trial_line(&r->trials[r->ntrials], line) == 0)
			r->ntrials++;
	}
	fclose(out);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	for (i = 0; i < r->ntrials; i++)
		if (!r->trials[i].started)
			failed++;
	r->problems += (unsigned)failed;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		trial_relay(errf);
		if (failed == 0) {
			warnx("%s -n failed", prog);
			r->problems++;
		}
	}
	fclose(errf);
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
	/* Only a file that passes the rest would get as far as a runtime. */
	if (r.problems == 0)
		check_containers(&r, ctx->conffile);
	else
		r.untried = "the file has problems";
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
