/*
 * The audit database, read-only.
 *
 * mcp-auditd keeps it in WAL mode.  While the -wal file exists (auditd
 * has it open, or stopped without a checkpoint), the newest records may
 * be in it alone, so SQLite must read it through the -shm index: this
 * works with read access to both files, as members of the audit group
 * have.  When there is no -wal file, every record is in the database file
 * itself, and it is opened "immutable": then SQLite needs to create
 * nothing, which a reader without write access to the directory could
 * not, and root leaves nothing behind.  A -wal without its -shm is never
 * read around: the records in it would be missed.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "mcpctl.h"
#include "util.h"

#define BUSY_MS		5000

const char auditdb_columns[] = "seq, time, role, pid, uid, tenant, sandbox, "
    "event, outcome, body, prev, hash, keyid, sig";

static int
file_exists(const char *base, const char *suffix, int *exists)
{
	struct stat	 sb;
	char		 path[PATH_MAX + 8];

	if (str_fmt(path, sizeof(path), "%s%s", base, suffix) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(path, &sb) == 0) {
		*exists = 1;
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	*exists = 0;
	return 0;
}

/* "file:PATH?immutable=1", the path percent-encoded. */
static char *
immutable_uri(const char *path)
{
	static const char	 safe[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/";
	char			*uri, *p;
	size_t			 i;

	uri = xmalloc(strlen(path) * 3 + sizeof("file:?immutable=1"));
	p = uri + sprintf(uri, "file:");
	for (i = 0; path[i] != '\0'; i++) {
		if (strchr(safe, path[i]) != NULL)
			*p++ = path[i];
		else
			p += sprintf(p, "%%%02X", (unsigned char)path[i]);
	}
	strcpy(p, "?immutable=1");
	return uri;
}

static int
check_schema(struct auditdb *adb, char *why, size_t len)
{
	sqlite3_stmt	*st;
	int		 rc, v;

	if (sqlite3_prepare_v2(adb->db, "SELECT value FROM meta WHERE key = "
	    "'schema'", -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, len, "%s: %s", adb->path,
		    sqlite3_errmsg(adb->db));
		return -1;
	}
	rc = sqlite3_step(st);
	v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(why, len, "%s: %s", adb->path,
		    sqlite3_errmsg(adb->db));
		return -1;
	}
	if (v != MCPCTL_SCHEMA) {
		snprintf(why, len, "%s: an audit database of schema %d, not "
		    "%d", adb->path, v, MCPCTL_SCHEMA);
		return -1;
	}
	return 0;
}

static int
db_connect(struct auditdb *adb, int immutable, char *why, size_t len)
{
	char	*uri = NULL;
	int	 rc;

	adb->immutable = immutable;
	if (immutable)
		uri = immutable_uri(adb->path);
	rc = sqlite3_open_v2(immutable ? uri : adb->path, &adb->db,
	    SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
	    (immutable ? SQLITE_OPEN_URI : 0), NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		snprintf(why, len, "%s: %s", adb->path,
		    sqlite3_errmsg(adb->db));
		return -1;
	}
	sqlite3_busy_timeout(adb->db, BUSY_MS);
	return check_schema(adb, why, len);
}

static void
disconnect(struct auditdb *adb)
{
	sqlite3_close(adb->db);
	adb->db = NULL;
}

int
auditdb_reopen(struct auditdb *adb, char *why, size_t len)
{
	int	 db = -1, wal, shm;

	if (adb->db != NULL)
		disconnect(adb);
	if (file_exists(adb->path, "", &db) == -1 || !db) {
		snprintf(why, len, "%s: %s", adb->path, db == 0 ?
		    strerror(ENOENT) : strerror(errno));
		return -1;
	}
	if (file_exists(adb->path, "-wal", &wal) == -1) {
		snprintf(why, len, "%s-wal: %s", adb->path, strerror(errno));
		return -1;
	}
	if (db_connect(adb, !wal, why, len) == 0)
		return 0;
	disconnect(adb);
	/* auditd may have just stopped, and removed the -wal. */
	if (file_exists(adb->path, "-wal", &wal) == 0 && !wal)
		return db_connect(adb, 1, why, len);
	if (file_exists(adb->path, "-shm", &shm) == 0 && !shm)
		snprintf(why + strlen(why), len - strlen(why), " (%s-wal "
		    "exists without its -shm file, and reading the records "
		    "in it needs the -shm file: start mcp-auditd, or read as "
		    "the audit user)", adb->path);
	return -1;
}

int
auditdb_open(struct auditdb *adb, const char *path, char *why, size_t len)
{
	char	*p;

	memset(adb, 0, sizeof(*adb));
	if (str_copy(adb->path, path, sizeof(adb->path)) == -1 ||
	    str_copy(adb->dir, path, sizeof(adb->dir)) == -1) {
		snprintf(why, len, "%s: path too long", path);
		return -1;
	}
	if ((p = strrchr(adb->dir, '/')) == NULL)
		(void)str_copy(adb->dir, ".", sizeof(adb->dir));
	else if (p == adb->dir)
		p[1] = '\0';
	else
		*p = '\0';
	return auditdb_reopen(adb, why, len);
}

void
auditdb_close(struct auditdb *adb)
{
	if (adb->db != NULL)
		disconnect(adb);
}

/*
 * The records a filter wants, in seq order: after a seq if after >= 0,
 * and at most limit of them if limit >= 0, the last ones if last.
 */
int
auditdb_select(struct auditdb *adb, sqlite3_stmt **stp,
    const struct filter *f, int64_t after, int64_t limit, int last)
{
	char		*sql, *w, name[32];
	size_t		 i;
	int		 rc;

	xasprintf(&w, "%s%s%s%s%s%s",
	    f->has_since ? " AND time >= :since" : "",
	    f->has_until ? " AND time <= :until" : "",
	    f->tenant != NULL ? " AND tenant = :tenant" : "",
	    f->sandbox != NULL ? " AND substr(sandbox, 1, length(:sandbox)) "
	    "= :sandbox" : "",
	    f->outcome != NULL ? " AND outcome = :outcome" : "",
	    after >= 0 ? " AND seq > :after" : "");
	if (f->nevents > 0) {
		sql = w;
		xasprintf(&w, "%s AND event IN (:e0", sql);
		free(sql);
		for (i = 1; i < f->nevents; i++) {
			sql = w;
			xasprintf(&w, "%s, :e%zu", sql, i);
			free(sql);
		}
		sql = w;
		xasprintf(&w, "%s)", sql);
		free(sql);
	}
	if (limit >= 0 && last)
		xasprintf(&sql, "SELECT * FROM (SELECT %s FROM records WHERE 1"
		    "%s ORDER BY seq DESC LIMIT :limit) ORDER BY seq",
		    auditdb_columns, w);
	else
		xasprintf(&sql, "SELECT %s FROM records WHERE 1%s ORDER BY "
		    "seq%s", auditdb_columns, w, limit >= 0 ? " LIMIT :limit" :
		    "");
	free(w);
	rc = sqlite3_prepare_v2(adb->db, sql, -1, stp, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(*stp, sqlite3_bind_parameter_index(*stp,
	    ":since"), f->since);
	sqlite3_bind_int64(*stp, sqlite3_bind_parameter_index(*stp,
	    ":until"), f->until);
	sqlite3_bind_text(*stp, sqlite3_bind_parameter_index(*stp,
	    ":tenant"), f->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(*stp, sqlite3_bind_parameter_index(*stp,
	    ":sandbox"), f->sandbox, -1, SQLITE_STATIC);
	sqlite3_bind_text(*stp, sqlite3_bind_parameter_index(*stp,
	    ":outcome"), f->outcome, -1, SQLITE_STATIC);
	sqlite3_bind_int64(*stp, sqlite3_bind_parameter_index(*stp,
	    ":after"), after);
	sqlite3_bind_int64(*stp, sqlite3_bind_parameter_index(*stp,
	    ":limit"), limit);
	for (i = 0; i < f->nevents; i++) {
		snprintf(name, sizeof(name), ":e%zu", i);
		sqlite3_bind_text(*stp, sqlite3_bind_parameter_index(*stp,
		    name), f->events[i], -1, SQLITE_STATIC);
	}
	return 0;
}

static char *
column_str(sqlite3_stmt *st, int i, size_t *lenp)
{
	const unsigned char	*t;
	char			*s;
	size_t			 len;

	if ((t = sqlite3_column_text(st, i)) == NULL)
		t = (const unsigned char *)"";
	len = (size_t)sqlite3_column_bytes(st, i);
	s = xmalloc(len + 1);
	memcpy(s, t, len);
	s[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return s;
}

static int
column_blob(sqlite3_stmt *st, int i, uint8_t *out, size_t len)
{
	const void	*p = sqlite3_column_blob(st, i);

	memset(out, 0, len);
	if (p == NULL || (size_t)sqlite3_column_bytes(st, i) != len)
		return 0;
	memcpy(out, p, len);
	return 1;
}

/* A row of auditdb_columns; what a tampered row lacks is left empty. */
void
auditdb_row(sqlite3_stmt *st, struct record *r)
{
	int	 ok;

	memset(r, 0, sizeof(*r));
	r->seq = sqlite3_column_int64(st, 0);
	r->time = sqlite3_column_int64(st, 1);
	r->role = column_str(st, 2, NULL);
	r->pid = sqlite3_column_int64(st, 3);
	r->uid = sqlite3_column_int64(st, 4);
	r->tenant = column_str(st, 5, NULL);
	r->sandbox = column_str(st, 6, NULL);
	r->event = column_str(st, 7, NULL);
	r->outcome = column_str(st, 8, NULL);
	r->body = column_str(st, 9, &r->bodylen);
	ok = column_blob(st, 10, r->prev, sizeof(r->prev));
	ok &= column_blob(st, 11, r->hash, sizeof(r->hash));
	r->keyid = column_str(st, 12, NULL);
	ok &= column_blob(st, 13, r->sig, sizeof(r->sig));
	r->sizes_ok = ok && strlen(r->keyid) == AUDIT_KEYID_LEN;
}

void
record_clear(struct record *r)
{
	free(r->role);
	free(r->tenant);
	free(r->sandbox);
	free(r->event);
	free(r->outcome);
	free(r->body);
	free(r->keyid);
	memset(r, 0, sizeof(*r));
}
