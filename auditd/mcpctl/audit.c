/*
 * mcpctl audit list, show, tail, export and keygen.  (verify has a file
 * of its own.)  The database is only ever read; keygen writes key files
 * beside it, for mcp-auditd to take up when it next starts.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"
#include "policy.h"
#include "util.h"

#define TAIL_DEFAULT	10
#define FOLLOW_MS	500		/* how often tail -f looks */

static volatile sig_atomic_t	 quit;

static void
open_db(struct mcpctl *ctx, struct auditdb *adb)
{
	char	 why[PATH_MAX + 256];

	mcpctl_dbpath(ctx, EXIT_ERROR);
	if (auditdb_open(adb, ctx->dbpath, why, sizeof(why)) == -1)
		errx(EXIT_ERROR, "%s", why);
}

/* The options of list, tail and export; count and follow when wanted. */
static void
listing_options(const char *cmd, int argc, char **argv, const char *opts,
    struct filter *f, int64_t *count, int *follow)
{
	const char	*e;
	char		 why[256];
	uint64_t	 n;
	int		 ch, rv;

	memset(f, 0, sizeof(*f));
	optind = 0;
	while ((ch = getopt_long(argc, argv, opts, filter_longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			*follow = 1;
			break;
		case 'n':
			if ((e = str_to_u64(optarg, 0, INT64_MAX,
			    &n)) != NULL) {
				warnx("-n %s: %s", optarg, e);
				usage_cmd(cmd);
			}
			*count = (int64_t)n;
			break;
		default:
			if ((rv = filter_option(f, ch, optarg, why,
			    sizeof(why))) == 1)
				break;
			if (rv == -1)
				warnx("%s", why);
			usage_cmd(cmd);
		}
	}
	if (optind != argc)
		usage_cmd(cmd);
}

/* Each record of a query to out; the last seq, or after if none. */
static int64_t
print_rows(struct auditdb *adb, sqlite3_stmt *st,
    void (*out)(const struct record *), int64_t after)
{
	struct record	 r;
	int		 rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		auditdb_row(st, &r);
		out(&r);
		after = r.seq;
		record_clear(&r);
	}
	if (rc != SQLITE_DONE)
		errx(EXIT_ERROR, "%s: %s", adb->path, sqlite3_errmsg(adb->db));
	sqlite3_finalize(st);
	return after;
}

static void
select_or_die(struct auditdb *adb, sqlite3_stmt **st, const struct filter *f,
    int64_t after, int64_t limit, int last)
{
	if (auditdb_select(adb, st, f, after, limit, last) == -1)
		errx(EXIT_ERROR, "%s: %s", adb->path, sqlite3_errmsg(adb->db));
}

int
audit_list(struct mcpctl *ctx, int argc, char **argv)
{
	struct auditdb	 adb;
	struct filter	 f;
	sqlite3_stmt	*st;
	int64_t		 count = -1;

	listing_options("list", argc, argv, "+n:", &f, &count, NULL);
	open_db(ctx, &adb);
	select_or_die(&adb, &st, &f, -1, count, 0);
	ctx->out->list_begin();
	print_rows(&adb, st, ctx->out->list_record, -1);
	ctx->out->list_end();
	auditdb_close(&adb);
	return 0;
}

int
audit_export(struct mcpctl *ctx, int argc, char **argv)
{
	struct auditdb	 adb;
	struct filter	 f;
	sqlite3_stmt	*st;

	listing_options("export", argc, argv, "+", &f, NULL, NULL);
	open_db(ctx, &adb);
	select_or_die(&adb, &st, &f, -1, -1, 0);
	print_rows(&adb, st, json_output.stream_record, -1);
	auditdb_close(&adb);
	return 0;
}

int
audit_show(struct mcpctl *ctx, int argc, char **argv)
{
	struct auditdb	 adb;
	struct filter	 f;
	struct record	 r;
	sqlite3_stmt	*st;
	const char	*e;
	uint64_t	 seq;
	int		 rc;

	if (argc != 2)
		usage_cmd("show");
	if ((e = str_to_u64(argv[1], 1, INT64_MAX, &seq)) != NULL) {
		warnx("%s: %s", argv[1], e);
		usage_cmd("show");
	}
	memset(&f, 0, sizeof(f));
	open_db(ctx, &adb);
	select_or_die(&adb, &st, &f, (int64_t)seq - 1, 1, 0);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW && rc != SQLITE_DONE)
		errx(EXIT_ERROR, "%s: %s", adb.path, sqlite3_errmsg(adb.db));
	if (rc == SQLITE_DONE || sqlite3_column_int64(st, 0) !=
	    (int64_t)seq)
		errx(EXIT_ERROR, "%s: no record %llu", adb.path,
		    (unsigned long long)seq);
	auditdb_row(st, &r);
	ctx->out->show(&r);
	record_clear(&r);
	sqlite3_finalize(st);
	auditdb_close(&adb);
	return 0;
}

static void
on_signal(int sig)
{
	quit = 1;
}

/* For tail -f: stop on a signal, and on a reader gone (EPIPE). */
static void
follow_signals(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the sleep between looks ends at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* 0, or -1 if the reader is gone. */
static int
flush_out(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (errno == EPIPE)
		return -1;
	err(EXIT_ERROR, "standard output");
}

static int64_t
max_seq(struct auditdb *adb)
{
	sqlite3_stmt	*st;
	int64_t		 max = 0;

	if (sqlite3_prepare_v2(adb->db, "SELECT max(seq) FROM records", -1,
	    &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		errx(EXIT_ERROR, "%s: %s", adb->path, sqlite3_errmsg(adb->db));
	max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return max;
}

/*
 * Wait between looks, and see meanwhile whether the reader of a pipe on
 * standard output has gone: then there is no one to write for.
 */
static int
output_gone(void)
{
	struct pollfd	 pfd;

	memset(&pfd, 0, sizeof(pfd));
	pfd.fd = STDOUT_FILENO;
	return poll(&pfd, 1, FOLLOW_MS) == 1 &&
	    (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
}

static void
follow(struct mcpctl *ctx, struct auditdb *adb, const struct filter *f,
    int64_t last)
{
	sqlite3_stmt		*st;
	char			 why[PATH_MAX + 256];

	while (!quit) {
		if (output_gone() || quit)
			break;
		/* With no -wal before, auditd may have started since. */
		if (adb->immutable && auditdb_reopen(adb, why,
		    sizeof(why)) == -1)
			errx(EXIT_ERROR, "%s", why);
		select_or_die(adb, &st, f, last, -1, 0);
		last = print_rows(adb, st, ctx->out->stream_record, last);
		if (flush_out() == -1)
			break;
	}
}

int
audit_tail(struct mcpctl *ctx, int argc, char **argv)
{
	struct auditdb	 adb;
	struct filter	 f;
	sqlite3_stmt	*st;
	int64_t		 count = TAIL_DEFAULT, last;
	int		 dofollow = 0;

	listing_options("tail", argc, argv, "+fn:", &f, &count, &dofollow);
	open_db(ctx, &adb);
	if (dofollow)
		follow_signals();
	/* One snapshot: what tail -f shows next comes after it. */
	if (sqlite3_exec(adb.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		errx(EXIT_ERROR, "%s: %s", adb.path, sqlite3_errmsg(adb.db));
	last = max_seq(&adb);
	select_or_die(&adb, &st, &f, -1, count, 1);
	print_rows(&adb, st, ctx->out->stream_record, -1);
	sqlite3_exec(adb.db, "COMMIT", NULL, NULL, NULL);
	if (flush_out() == 0 && dofollow)
		follow(ctx, &adb, &f, last);
	auditdb_close(&adb);
	return 0;
}

/* --- keygen ----------------------------------------------------------- */

/*
 * Give a file just made to the audit user.  As root in a directory that
 * user owns, make sure it is still the file made, not a link put there.
 */
static int
give(const char *path, uid_t uid, gid_t gid)
{
	struct stat	 sb;
	int		 fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_uid == geteuid() && sb.st_nlink == 1)
		rv = fchown(fd, uid, gid);
	else
		errno = EPERM;
	close(fd);
	return rv;
}

/* Who the key files are for: the audit user, or the directory's owner. */
static void
key_owner(struct mcpctl *ctx, const struct stat *dir, uid_t *uid, gid_t *gid)
{
	if (ctx->conf != NULL) {
		if (policy_resolve(ctx->conf, POLICY_RESOLVE_AUDIT) == -1)
			exit(EXIT_ERROR);
		*uid = ctx->conf->audit.uid;
		*gid = ctx->conf->audit.gid;
	} else {
		*uid = dir->st_uid;
		*gid = dir->st_gid;
	}
}

static void
key_paths(struct keygen_result *k, const char *dir)
{
	char	 cur[PATH_MAX];

	if (str_fmt(cur, sizeof(cur), "%s/%s", dir, AUDIT_KEY_FILE) == -1)
		errx(EXIT_ERROR, "%s: path too long", dir);
	k->staged = access(cur, F_OK) == 0;
	if (str_fmt(k->secret, sizeof(k->secret), "%s/%s", dir, k->staged ?
	    AUDIT_KEY_NEXT : AUDIT_KEY_FILE) == -1 ||
	    str_fmt(k->public, sizeof(k->public), "%s/%s", dir, k->staged ?
	    AUDIT_PUB_NEXT : AUDIT_PUB_FILE) == -1)
		errx(EXIT_ERROR, "%s: path too long", dir);
	if (k->staged && (access(k->secret, F_OK) == 0 ||
	    access(k->public, F_OK) == 0))
		errx(EXIT_ERROR, "a key is staged already in %s (mcp-auditd "
		    "rotates to it when it next starts): remove %s and %s to "
		    "stage another", dir, AUDIT_KEY_NEXT, AUDIT_PUB_NEXT);
}

int
audit_keygen(struct mcpctl *ctx, int argc, char **argv)
{
	struct keygen_result	 k;
	struct stat		 sb;
	char			 dir[PATH_MAX], why[PATH_MAX + 64], *p;
	uint8_t			 pk[AUDIT_PK_LEN];
	uid_t			 uid;
	gid_t			 gid;
	mode_t			 mask;

	if (argc != 1)
		usage_cmd("keygen");
	mcpctl_dbpath(ctx, EXIT_ERROR);
	if (str_copy(dir, ctx->dbpath, sizeof(dir)) == -1)
		errx(EXIT_ERROR, "%s: path too long", ctx->dbpath);
	if ((p = strrchr(dir, '/')) == NULL)
		(void)str_copy(dir, ".", sizeof(dir));
	else if (p == dir)
		p[1] = '\0';
	else
		*p = '\0';
	if (stat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
		errx(EXIT_ERROR, "%s: no such directory (mcp-auditd makes it "
		    "when it first starts)", dir);
	memset(&k, 0, sizeof(k));
	key_paths(&k, dir);
	key_owner(ctx, &sb, &uid, &gid);
	/* The public key is for every verifier, whatever the umask. */
	mask = umask(022);
	if (audit_key_generate(k.secret, k.public, why, sizeof(why)) == -1)
		errx(EXIT_ERROR, "%s", why);
	umask(mask);
	if (geteuid() == 0 && (give(k.secret, uid, gid) == -1 ||
	    give(k.public, uid, gid) == -1)) {
		warn("cannot give the new key to uid %u", (unsigned)uid);
		unlink(k.secret);
		unlink(k.public);
		exit(EXIT_ERROR);
	}
	if (geteuid() != 0 && geteuid() != uid)
		warnx("the new key belongs to uid %u: mcp-auditd, as uid %u, "
		    "may not read it", (unsigned)geteuid(), (unsigned)uid);
	if (audit_key_read_public(k.public, pk, why, sizeof(why)) == -1)
		errx(EXIT_ERROR, "%s", why);
	audit_keyid(pk, k.keyid);
	ctx->out->keygen(&k);
	return 0;
}
