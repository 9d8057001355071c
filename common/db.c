/*
 * SQLite databases: see db.h.
 */
#include <stdio.h>

#include <sqlite3.h>

#include "db.h"
#include "log.h"

sqlite3 *
db_open(const char *path, const char *ddl, int schema, int busy_ms)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*st;
	char		*err = NULL;
	int		 v = 0;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		log_warnx("%s: %s", path, sqlite3_errmsg(db));
		goto fail;
	}
	sqlite3_busy_timeout(db, busy_ms);
	if (sqlite3_exec(db, ddl, NULL, NULL, &err) != SQLITE_OK) {
		log_warnx("%s: %s", path, err);
		sqlite3_free(err);
		goto fail;
	}
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = "
	    "'schema'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v != schema) {
		log_warnx("%s: schema %d, expected %d", path, v, schema);
		goto fail;
	}
	return db;
 fail:
	sqlite3_close(db);
	return NULL;
}
