/*
 * mcpctl: the administrator's command line for the mcpd suite.  It shows
 * what the daemons are doing and kills sandboxes, reads and verifies the
 * audit log, stages audit keys, keeps the store of root filesystem images,
 * checks the configuration and makes bearer tokens.
 *
 *	mcpctl [-j] [-f file] [-d db] group command [argument ...]
 *
 * status and sandbox ask the running mcp-sandboxd (ctl.c); audit never
 * writes the audit database and needs no daemon running: it opens the
 * database read-only, where the configuration (or -d) says it is.  The
 * image store is in the configuration's state directory.
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
	{ "verify",	audit_verify,	"[-q] [-c size:root] [-k pubkey] | [-q] "
	    "host-log ...", 0 },
	{ "anchor",	audit_anchor,	"[-c size:root] [-k pubkey]", 0 },
	{ "list",	audit_list,	"[-n count] [filter ...]", 1 },
	{ "show",	audit_show,	"seq", 0 },
	{ "tail",	audit_tail,	"[-f] [-n count] [filter ...]", 1 },
	{ "export",	audit_export,	"[filter ...]", 1 },
	{ "keygen",	audit_keygen,	"", 0 },
};

static const struct cmd image_cmds[] = {
	{ "build",	image_build,	"[-p preset] [-s suite] [-m mirror] "
	    "[-i package,...] name", 0 },
	{ "import",	image_import,	"name source[:tag]", 0 },
	{ "list",	image_list,	"", 0 },
	{ "rm",		image_rm,	"name ...", 0 },
	{ "verify",	image_verify,	"name | digest", 0 },
};

static const struct cmd status_cmds[] = {
	{ "",		ctl_status,	"", 0 },	/* the group alone */
};

static const struct cmd sandbox_cmds[] = {
	{ "list",	ctl_sandbox_list,	"[-t tenant]", 0 },
	{ "inspect",	ctl_sandbox_inspect,	"id", 0 },
	{ "kill",	ctl_sandbox_kill,	"id ...", 0 },
};

static const struct cmd config_cmds[] = {
	{ "check",	config_check,	"", 0 },
};

static const struct cmd token_cmds[] = {
	{ "new",	token_new,	"[tenant]", 0 },
};

static const struct group {
	const char		*name;
	const char		*opts;		/* global options it takes */
	const struct cmd	*cmds;
	size_t			 ncmds;
} groups[] = {
	{ "status", "[-j] [-f file]", status_cmds, nitems(status_cmds) },
	{ "sandbox", "[-j] [-f file]", sandbox_cmds, nitems(sandbox_cmds) },
	{ "audit", "[-j] [-f file] [-d db]", audit_cmds, nitems(audit_cmds) },
	{ "image", "[-j] [-f file]", image_cmds, nitems(image_cmds) },
	{ "config", "[-j] [-f file]", config_cmds, nitems(config_cmds) },
	{ "token", "[-j]", token_cmds, nitems(token_cmds) },
};

/* The group of the command being run, for usage_cmd(). */
static const struct group	*group;

static const char filters_usage[] =
    "filter: --since time | --until time | --tenant name | --sandbox id |\n"
    "        --event event | --outcome outcome";

static const struct group *
group_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(groups); i++)
		if (strcmp(groups[i].name, name) == 0)
			return &groups[i];
	return NULL;
}

/* A group that is a command itself, as status is. */
static int
group_alone(const struct group *g)
{
	return g->ncmds == 1 && g->cmds[0].name[0] == '\0';
}

static const struct cmd *
cmd_find(const struct group *g, const char *name)
{
	size_t	 i;

	if (group_alone(g))
		return &g->cmds[0];
	for (i = 0; i < g->ncmds; i++)
		if (strcmp(g->cmds[i].name, name) == 0)
			return &g->cmds[i];
	return NULL;
}

static void
usage_line(const char *head, const char *opts, const struct group *g,
    const struct cmd *c)
{
	fprintf(stderr, "%s %s%s%s %s%s%s%s%s\n", head, PROGNAME,
	    opts[0] ? " " : "", opts, g->name, c->name[0] ? " " : "",
	    c->name, c->args[0] ? " " : "", c->args);
}

static __attribute__((__noreturn__)) void
usage(void)
{
	size_t	 i, j;

	fprintf(stderr, "usage: %s [-j] [-f file] [-d db] group command "
	    "[argument ...]\n", PROGNAME);
	for (i = 0; i < nitems(groups); i++)
		for (j = 0; j < groups[i].ncmds; j++)
			usage_line("      ", "", &groups[i],
			    &groups[i].cmds[j]);
	fprintf(stderr, "%s\n", filters_usage);
	exit(EXIT_USAGE);
}

void
usage_cmd(const char *name)
{
	const struct cmd	*c;

	if (group == NULL || (c = cmd_find(group, name)) == NULL)
		usage();
	usage_line("usage:", group->opts, group, c);
	if (c->filters)
		fprintf(stderr, "%s\n", filters_usage);
	exit(EXIT_USAGE);
}

/*
 * A command that takes no options: its operands, from min to max of them
 * (max -1: any number), left in argc and argv.
 */
void
cmd_operands(const char *cmd, int *argc, char ***argv, int min, int max)
{
	optind = 0;
	if (getopt(*argc, *argv, "+") != -1)
		usage_cmd(cmd);
	*argc -= optind;
	*argv += optind;
	if (*argc < min || (max >= 0 && *argc > max))
		usage_cmd(cmd);
}

/*
 * The configuration, read once and only when a command needs it (it may
 * be readable by root alone); failure is the exit status when it cannot
 * be, hint what to say besides.
 */
struct policy *
mcpctl_conf(struct mcpctl *ctx, int failure, const char *hint)
{
	if (ctx->conf == NULL &&
	    (ctx->conf = policy_load(ctx->conffile)) == NULL) {
		warnx("cannot load the configuration %s%s", ctx->conffile,
		    hint);
		exit(failure);
	}
	return ctx->conf;
}

/* The database: -d, or the configuration's. */
void
mcpctl_dbpath(struct mcpctl *ctx, int failure)
{
	if (ctx->dbpath == NULL)
		ctx->dbpath = mcpctl_conf(ctx, failure, " (-d names the "
		    "audit database directly)")->audit.database;
}

/* The state directory, which holds the image store. */
const char *
mcpctl_statedir(struct mcpctl *ctx, int failure)
{
	return mcpctl_conf(ctx, failure, "")->state_dir;
}

int
main(int argc, char *argv[])
{
	struct mcpctl		 ctx;
	const struct cmd	*c;
	char			*name;
	int			 ch, rv, fail;

	/* tail -f and image build wait on SIGTERM: a mask left would hide it. */
	if (sigmask_clear() == -1)
		err(EXIT_ERROR, "sigprocmask");
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
	if (argc < 1 || (group = group_find(argv[0])) == NULL)
		usage();
	if (group_alone(group)) {
		/* Its operands start where a command's name would be. */
		c = &group->cmds[0];
		argc++;
		argv--;
	} else if (argc < 2)
		usage();
	else if ((c = cmd_find(group, argv[1])) == NULL) {
		warnx("no such command: %s %s", group->name, argv[1]);
		usage();
	}
	/* verify's failures are 2: 1 means tampering was found. */
	fail = c->fn == audit_verify || c->fn == audit_anchor ||
	    c->fn == image_verify ? EXIT_UNVERIFIED : EXIT_ERROR;
	if (sodium_init() == -1)
		errx(fail, "cannot initialize libsodium");
	/* getopt(3) names the command in its messages. */
	xasprintf(&name, "%s %s%s%s", PROGNAME, group->name,
	    c->name[0] ? " " : "", c->name);
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
