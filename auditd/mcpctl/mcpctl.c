/*
 * mcpctl: the administrator's command line for the mcpd suite.  For now
 * it reads and verifies the audit log, and stages audit keys.
 *
 *	mcpctl [-j] [-f file] [-d db] audit command [argument ...]
 *
 * It never writes the database and needs no daemon running: it opens
 * the database read-only, where the configuration (or -d) says it is.
 */
#include <sys/types.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "mcpctl.h"
#include "policy.h"
#include "util.h"

#define PROGNAME	"mcpctl"

struct cmd {
	const char	*name;
	int		(*fn)(struct mcpctl *, int, char **);
	const char	*args;
	int		 filters;	/* takes the filter options */
};

static const struct cmd audit_cmds[] = {
	{ "verify",	audit_verify,	"[-q] [-c size:root] [-k pubkey]", 0 },
	{ "list",	audit_list,	"[-n count] [filter ...]", 1 },
	{ "show",	audit_show,	"seq", 0 },
	{ "tail",	audit_tail,	"[-f] [-n count] [filter ...]", 1 },
	{ "export",	audit_export,	"[filter ...]", 1 },
	{ "keygen",	audit_keygen,	"", 0 },
};

static const char filters_usage[] =
    "filter: --since time | --until time | --tenant name | --sandbox id |\n"
    "        --event event | --outcome outcome";

static const struct cmd *
cmd_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(audit_cmds); i++)
		if (strcmp(audit_cmds[i].name, name) == 0)
			return &audit_cmds[i];
	return NULL;
}

static __attribute__((__noreturn__)) void
usage(void)
{
	size_t	 i;

	fprintf(stderr, "usage: %s [-j] [-f file] [-d db] audit command "
	    "[argument ...]\n", PROGNAME);
	for (i = 0; i < nitems(audit_cmds); i++)
		fprintf(stderr, "       %s audit %s%s%s\n", PROGNAME,
		    audit_cmds[i].name, audit_cmds[i].args[0] ? " " : "",
		    audit_cmds[i].args);
	fprintf(stderr, "%s\n", filters_usage);
	exit(EXIT_USAGE);
}

void
usage_cmd(const char *name)
{
	const struct cmd	*c;

	if ((c = cmd_find(name)) == NULL)
		usage();
	fprintf(stderr, "usage: %s [-j] [-f file] [-d db] audit %s%s%s\n",
	    PROGNAME, c->name, c->args[0] ? " " : "", c->args);
	if (c->filters)
		fprintf(stderr, "%s\n", filters_usage);
	exit(EXIT_USAGE);
}

/*
 * The database: -d, or the configuration's.  The configuration is read
 * only when needed, so that -d works without it (it may be readable by
 * root alone).
 */
void
mcpctl_dbpath(struct mcpctl *ctx, int failure)
{
	if (ctx->dbpath != NULL)
		return;
	if ((ctx->conf = policy_load(ctx->conffile)) == NULL) {
		warnx("cannot load the configuration %s (-d names the audit "
		    "database directly)", ctx->conffile);
		exit(failure);
	}
	ctx->dbpath = ctx->conf->audit.database;
}

int
main(int argc, char *argv[])
{
	struct mcpctl		 ctx;
	const struct cmd	*c;
	char			*name;
	int			 ch, rv, fail;

	memset(&ctx, 0, sizeof(ctx));
	ctx.out = &text_output;
	ctx.conffile = MCPD_CONF;
	log_init(LOG_DEST_STDERR, 0, PROGNAME);
	while ((ch = getopt(argc, argv, "+d:f:j")) != -1) {
		switch (ch) {
		case 'd':
			ctx.dbpath = optarg;
			break;
		case 'f':
			ctx.conffile = optarg;
			break;
		case 'j':
			ctx.json = 1;
			ctx.out = &json_output;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || strcmp(argv[0], "audit") != 0)
		usage();
	if ((c = cmd_find(argv[1])) == NULL) {
		warnx("no such command: audit %s", argv[1]);
		usage();
	}
	/* verify's failures are 2: 1 means the log was tampered with. */
	fail = c->fn == audit_verify ? EXIT_UNVERIFIED : EXIT_ERROR;
	if (sodium_init() == -1)
		errx(fail, "cannot initialize libsodium");
	/* getopt(3) names the command in its messages. */
	xasprintf(&name, "%s audit %s", PROGNAME, c->name);
	argv[1] = name;
	rv = c->fn(&ctx, argc - 1, argv + 1);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		warn("standard output");
		if (rv == 0)
			rv = fail;
	}
	policy_free(ctx.conf);
	free(name);
	return rv;
}
