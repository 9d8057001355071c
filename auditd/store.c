/*
 * The audit store: records appended to SQLite, in WAL mode with
 * synchronous=FULL, and acknowledged only once their transaction has
 * committed.  Records that arrive together are committed together (group
 * commit), so throughput does not pay one fsync per record.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "auditd.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define STORE_SCHEMA	1

static sqlite3		*db;
static sqlite3_stmt	*st_insert;

static const char store_ddl[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE IF NOT EXISTS meta ("
	"  key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;"
	"CREATE TABLE IF NOT EXISTS records ("
	"  seq INTEGER PRIMARY KEY,"
	"  time INTEGER NOT NULL,"		/* ns since the epoch */
	"  role TEXT NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  uid INTEGER NOT NULL,"
	"  tenant TEXT NOT NULL,"
	"  sandbox TEXT NOT NULL,"
	"  event TEXT NOT NULL,"
	"  outcome TEXT NOT NULL,"
	"  body TEXT NOT NULL) STRICT;"
	"INSERT OR IGNORE INTO meta VALUES ('schema', 1);";

int
store_open(const char *path)
{
	if ((db = db_open(path, store_ddl, STORE_SCHEMA, 5000)) == NULL)
		return -1;
	if (sqlite3_prepare_v3(db, "INSERT INTO records (time, role, pid, "
	    "uid, tenant, sandbox, event, outcome, body) VALUES "
	    "(?,?,?,?,?,?,?,?,?)", -1, SQLITE_PREPARE_PERSISTENT, &st_insert,
	    NULL) != SQLITE_OK) {
		log_warnx("%s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

void
store_close(void)
{
	if (st_insert != NULL)
		sqlite3_finalize(st_insert);
	if (db != NULL)
		sqlite3_close(db);
	st_insert = NULL;
	db = NULL;
}

static int64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
store_insert(struct pending_record *r)
{
	sqlite3_reset(st_insert);
	sqlite3_bind_int64(st_insert, 1, now_ns());
	sqlite3_bind_text(st_insert, 2, r->role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st_insert, 3, r->pid);
	sqlite3_bind_int64(st_insert, 4, r->uid);
	sqlite3_bind_text(st_insert, 5, r->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st_insert, 6, r->sandbox, -1, SQLITE_STATIC);
	sqlite3_bind_text(st_insert, 7, r->event, -1, SQLITE_STATIC);
	sqlite3_bind_text(st_insert, 8, r->outcome, -1, SQLITE_STATIC);
	/* Checked by audit_body_check(): printable ASCII lines. */
	sqlite3_bind_text(st_insert, 9, (const char *)r->body,
	    (int)r->bodylen, SQLITE_STATIC);
	if (sqlite3_step(st_insert) != SQLITE_DONE)
		return -1;
	r->seq = (uint64_t)sqlite3_last_insert_rowid(db);
	return 0;
}

/*
 * Commit a batch in one transaction.  On failure nothing of it is kept and
 * every record gets seq 0 and the reason.
 */
int
store_commit(struct pending_record **batch, size_t n, char *err,
    size_t errlen)
{
	size_t	 i;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < n; i++)
		if (store_insert(batch[i]) == -1) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			goto fail;
		}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto fail;
	}
	return 0;
 fail:
	snprintf(err, errlen, "audit database: %s", sqlite3_errmsg(db));
	for (i = 0; i < n; i++)
		batch[i]->seq = 0;
	return -1;
}
