/*
 * Opening the suite's SQLite databases: create or open, apply the schema
 * (idempotent DDL that records its version in a "meta" table), and refuse
 * a database of another schema version.
 */
#ifndef MCPD_DB_H
#define MCPD_DB_H

#include <sqlite3.h>

/* The handle, or NULL after logging why. */
sqlite3	*db_open(const char *, const char *, int, int);

#endif
