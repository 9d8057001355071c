/*
 * SQLite databases: see db.h.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>

#include <sqlite3.h>

#include "db.h"
#include "log.h"
#include "util.h"

/* The files of a database besides its own, as SQLite names them. */
static const char *const db_suffixes[] = { "", "-wal", "-shm", "-journal" };

/*
 * Files an older version left with a wider mode are tightened before
 * SQLite opens them.  New ones are made under a umask that leaves mode
 * alone; SQLite gives its -wal, -shm and -journal the database's mode.
 */
static int
db_files_mode(const char *path, mode_t mode)
{
	char	 f[PATH_MAX];
	size_t	 i;

	for (i = 0; i < nitems(db_suffixes); i++) {
		if (str_fmt(f, sizeof(f), "%s%s", path, db_suffixes[i]) ==
		    -1) {
			log_warnx("%s: path too long", path);
			return -1;
		}
		if (path_tighten(f, mode) == -1)
			return -1;
	}
	return 0;
}

sqlite3 *
db_open(const char *path, const char *ddl, int schema, int busy_ms,
    mode_t mode)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*st;
	char		*err = NULL;
	mode_t		 mask;
	int		 v = 0;

	if (db_files_mode(path, mode) == -1)
		return NULL;
	mask = umask(~mode & 0777);
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
	umask(mask);
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
	umask(mask);
	sqlite3_close(db);
	return NULL;
}
