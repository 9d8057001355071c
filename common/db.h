/*
 * Opening the suite's SQLite databases: create or open, apply the schema
 * (idempotent DDL that records its version in a "meta" table), and refuse
 * a database of another schema version.  The database and its -wal, -shm
 * and -journal files have the mode given, or one narrower: those an older
 * version made wider are tightened first, and the log says so.
 */
#ifndef MCPD_DB_H
#define MCPD_DB_H

#include <sys/types.h>

#include <sqlite3.h>

/* The handle, or NULL after logging why. */
sqlite3	*db_open(const char *, const char *, int, int, mode_t);

#endif
