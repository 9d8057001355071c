/*
 * The state database: one row per persistent sandbox, so that sandboxes
 * and their workspaces outlive a restart of sandboxd.  Containers do not:
 * a restarted sandboxd finds every sandbox idle, and starts its container
 * again, on the same workspace, at the next request.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "db.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

#define STATE_SCHEMA	1

static sqlite3	*db;

static const char state_ddl[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=NORMAL;"
	/* A stopped sandbox's environment is overwritten, not left free. */
	"PRAGMA secure_delete=ON;"
	"CREATE TABLE IF NOT EXISTS meta ("
	"  key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;"
	"CREATE TABLE IF NOT EXISTS sandboxes ("
	"  id TEXT PRIMARY KEY,"
	"  tenant TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  image TEXT NOT NULL,"
	"  slot INTEGER NOT NULL,"
	"  memory INTEGER NOT NULL, disk INTEGER NOT NULL,"
	"  output INTEGER NOT NULL, timeout INTEGER NOT NULL,"
	"  idle INTEGER NOT NULL, lifetime INTEGER NOT NULL,"
	"  cpus INTEGER NOT NULL, pids INTEGER NOT NULL,"
	"  network INTEGER NOT NULL,"
	"  env BLOB NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  last_used INTEGER NOT NULL) STRICT;"
	"INSERT OR IGNORE INTO meta VALUES ('schema', 1);";

int
state_open(const char *path)
{
	/* Root's alone: it holds the sandboxes' environments. */
	return (db = db_open(path, state_ddl, STATE_SCHEMA, 1000, 0600)) ==
	    NULL ? -1 : 0;
}

void
state_close(void)
{
	if (db != NULL)
		sqlite3_close(db);
	db = NULL;
}

/* The environment is stored as its strings, each with its NUL. */
static void
state_env_blob(const struct sandbox *sb, char **out, size_t *len)
{
	size_t	 i, n = 0, l;
	char	*p;

	for (i = 0; i < sb->nenv; i++)
		n += strlen(sb->env[i]) + 1;
	p = xmalloc(n);
	*out = p;
	*len = n;
	for (i = 0; i < sb->nenv; i++) {
		l = strlen(sb->env[i]) + 1;
		memcpy(p, sb->env[i], l);
		p += l;
	}
}

int
state_save(const struct sandbox *sb)
{
	sqlite3_stmt	*st;
	char		*env;
	size_t		 envlen;
	int		 rc;

	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO sandboxes VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) !=
	    SQLITE_OK) {
		log_warnx("state: %s", sqlite3_errmsg(db));
		return -1;
	}
	state_env_blob(sb, &env, &envlen);
	sqlite3_bind_text(st, 1, sb->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, sb->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, sb->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, sb->image, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, sb->slot);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)sb->lim.memory);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)sb->lim.disk);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)sb->lim.output);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)sb->lim.timeout);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)sb->lim.idle);
	sqlite3_bind_int64(st, 11, (sqlite3_int64)sb->lim.lifetime);
	sqlite3_bind_int64(st, 12, sb->lim.cpus);
	sqlite3_bind_int64(st, 13, sb->lim.pids);
	sqlite3_bind_int64(st, 14, sb->lim.network);
	sqlite3_bind_blob(st, 15, env, (int)envlen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 16, sb->created);
	sqlite3_bind_int64(st, 17, sb->last_used);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	free(env);
	if (rc != SQLITE_DONE) {
		log_warnx("state: saving sandbox %s: %s", sb->id,
		    sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

void
state_touch(const struct sandbox *sb)
{
	sqlite3_stmt	*st;

	if (!sb->persistent || sqlite3_prepare_v2(db, "UPDATE sandboxes SET "
	    "last_used = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, sb->last_used);
	sqlite3_bind_text(st, 2, sb->id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		log_warnx("state: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

void
state_delete(const char *id)
{
	sqlite3_stmt	*st;

	if (sqlite3_prepare_v2(db, "DELETE FROM sandboxes WHERE id = ?", -1,
	    &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		log_warnx("state: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char	*t = sqlite3_column_text(st, i);

	return t != NULL ? (const char *)t : "";
}

/* One row back into a sandbox; NULL (after logging) if it is not sane. */
static struct sandbox *
state_row(sqlite3_stmt *st)
{
	struct sandbox		*sb;
	struct limits		 lim;
	const struct runtime	*rt;
	const char		*id = col_text(st, 0), *p, *end;
	sqlite3_int64		 slot;
	size_t			 n;

	slot = sqlite3_column_int64(st, 4);
	if (!sandbox_id_valid(id) || slot < 0 ||
	    slot >= (sqlite3_int64)sbd->conf->uid_slots) {
		log_warnx("state: ignoring a malformed row (id \"%s\")", id);
		return NULL;
	}
	memset(&lim, 0, sizeof(lim));
	lim.memory = (uint64_t)sqlite3_column_int64(st, 5);
	lim.disk = (uint64_t)sqlite3_column_int64(st, 6);
	lim.output = (uint64_t)sqlite3_column_int64(st, 7);
	lim.timeout = (uint64_t)sqlite3_column_int64(st, 8);
	lim.idle = (uint64_t)sqlite3_column_int64(st, 9);
	lim.lifetime = (uint64_t)sqlite3_column_int64(st, 10);
	lim.cpus = (uint32_t)sqlite3_column_int64(st, 11);
	lim.pids = (uint32_t)sqlite3_column_int64(st, 12);
	lim.network = sqlite3_column_int64(st, 13) == NET_EGRESS ?
	    NET_EGRESS : NET_NONE;
	/* Its runtime is the file's choice now, which may have changed. */
	if ((rt = sandbox_runtime(col_text(st, 1), col_text(st, 3))) == NULL)
		rt = policy_runtime(sbd->conf, sbd->conf->runtime);
	sb = sandbox_new(id, col_text(st, 1), col_text(st, 3), &lim, 1,
	    col_text(st, 2), rt);
	sb->slot = (uint32_t)slot;
	sandbox_slot_take(sb->slot);
	sb->created = sqlite3_column_int64(st, 15);
	sb->last_used = sqlite3_column_int64(st, 16);
	p = sqlite3_column_blob(st, 14);
	n = (size_t)sqlite3_column_bytes(st, 14);
	for (end = p + n; p != NULL && p < end; p += strlen(p) + 1) {
		if (memchr(p, '\0', (size_t)(end - p)) == NULL)
			break;
		sb->env = xreallocarray(sb->env, sb->nenv + 1,
		    sizeof(*sb->env));
		sb->env[sb->nenv++] = xstrdup(p);
	}
	return sb;
}

void
state_load(void)
{
	sqlite3_stmt	*st;
	struct sandbox	*sb;
	int		 n = 0;

	if (sqlite3_prepare_v2(db, "SELECT * FROM sandboxes ORDER BY created",
	    -1, &st, NULL) != SQLITE_OK)
		fatalx("state: %s", sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW) {
		if ((sb = state_row(st)) == NULL)
			continue;
		TAILQ_INSERT_TAIL(&sbd->sandboxes, sb, entry);
		n++;
	}
	sqlite3_finalize(st);
	if (n > 0)
		log_info("%d persistent sandboxes restored, idle until used",
		    n);
}

/* Disks of sandboxes the database no longer knows: a stop cut short. */
void
state_prune_disks(void)
{
	struct dirent	*de;
	DIR		*d;
	char		 dir[PATH_MAX], path[PATH_MAX];

	if (str_fmt(dir, sizeof(dir), "%s/%s", sbd->conf->state_dir,
	    SBX_DISKS) == -1 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!sandbox_id_valid(de->d_name) ||
		    sandbox_find(NULL, de->d_name) != NULL)
			continue;
		if (str_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) ==
		    -1)
			continue;
		log_info("removing the disk of deleted sandbox %s",
		    de->d_name);
		if (rm_tree(path) == -1)
			log_warn("%s", path);
	}
	closedir(d);
}
