/*
 * Fuzz target: mcp-auditd's handling of records from its clients
 * (auditd/record.c) and the store they go to (auditd/store.c), a real
 * SQLite database in a private directory on a tmpfs.
 *
 * Input: frames, each [ctl][length, 2 bytes][payload], the payload an
 * IMSG_AUDIT_RECORD's.  ctl says which role sent it (mcpctl may send
 * none) and bit 7 ends the batch: the records so far commit together, as
 * those arriving in one turn of auditd's loop do.  What commits is read
 * back and must be exactly what was sent, chained, hashed and signed.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "../../auditd/auditd.h"
#include "auditlog.h"
#include "fuzz.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define BATCH_MAX	64
#define STORE_RECORDS	2000	/* then a fresh database */

static const uint32_t	 roles[4] = {
	ROLE_MCPD, ROLE_SANDBOXD, ROLE_MCPD_STDIO, ROLE_MCPCTL,
};
static char		*dbdir, *dbpath;
static sqlite3		*rdb;		/* reading back */
static uint8_t		 pk[AUDIT_PK_LEN];

static void
store_start(void)
{
	char	 why[512], pub[PATH_MAX];

	rm_tree(dbdir);
	if (mkdir(dbdir, 0700) == -1)
		fatal("%s", dbdir);
	if (store_open(dbpath, why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (str_fmt(pub, sizeof(pub), "%s/%s", dbdir, AUDIT_PUB_FILE) == -1 ||
	    audit_key_read_public(pub, pk, why, sizeof(why)) == -1)
		fatalx("%s", why);
	if (sqlite3_open_v2(dbpath, &rdb, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		fatalx("%s: %s", dbpath, sqlite3_errmsg(rdb));
}

static void
store_stop(void)
{
	sqlite3_close(rdb);
	rdb = NULL;
	store_close();
}

static void
stop_at_exit(void)
{
	store_stop();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (sodium_init() == -1)
		fatalx("sodium_init");
	dbdir = fuzz_path("audit");
	xasprintf(&dbpath, "%s/audit.db", dbdir);
	store_start();
	atexit(stop_at_exit);
	return 0;
}

static int
same_text(sqlite3_stmt *q, int col, const char *want, size_t len)
{
	return (size_t)sqlite3_column_bytes(q, col) == len &&
	    (len == 0 || memcmp(sqlite3_column_text(q, col), want, len) == 0);
}

/* The committed record r, read back: its fields, hash and signature. */
static void
check_row(sqlite3_stmt *q, const struct pending_record *r,
    uint8_t prev[AUDIT_HASH_LEN])
{
	struct audit_entry	 e;
	uint8_t			 hash[AUDIT_HASH_LEN];

	if (sqlite3_step(q) != SQLITE_ROW ||
	    (uint64_t)sqlite3_column_int64(q, 0) != r->seq ||
	    !same_text(q, 1, r->role, strlen(r->role)) ||
	    !same_text(q, 2, r->tenant, strlen(r->tenant)) ||
	    !same_text(q, 3, r->sandbox, strlen(r->sandbox)) ||
	    !same_text(q, 4, r->event, strlen(r->event)) ||
	    !same_text(q, 5, r->outcome, strlen(r->outcome)) ||
	    !same_text(q, 6, (const char *)r->body, r->bodylen) ||
	    sqlite3_column_bytes(q, 7) != AUDIT_HASH_LEN ||
	    sqlite3_column_bytes(q, 8) != AUDIT_HASH_LEN ||
	    sqlite3_column_bytes(q, 9) != AUDIT_SIG_LEN ||
	    sqlite3_column_bytes(q, 10) != AUDIT_KEYID_LEN)
		abort();
	memset(&e, 0, sizeof(e));
	e.seq = r->seq;
	e.time = sqlite3_column_int64(q, 11);
	e.role = r->role;
	e.pid = r->pid;
	e.uid = r->uid;
	e.tenant = r->tenant;
	e.sandbox = r->sandbox;
	e.event = r->event;
	e.outcome = r->outcome;
	e.body = r->body;
	e.bodylen = r->bodylen;
	memcpy(e.prev, prev, AUDIT_HASH_LEN);
	memcpy(e.keyid, sqlite3_column_text(q, 10), AUDIT_KEYID_LEN);
	audit_entry_hash(&e, hash);
	if (memcmp(sqlite3_column_blob(q, 7), prev, AUDIT_HASH_LEN) != 0 ||
	    memcmp(sqlite3_column_blob(q, 8), hash, AUDIT_HASH_LEN) != 0 ||
	    audit_verify_hash(hash, sqlite3_column_blob(q, 9), pk) != 0)
		abort();
	memcpy(prev, hash, AUDIT_HASH_LEN);
}

static void
check_batch(struct pending_record **batch, size_t n)
{
	sqlite3_stmt	*q;
	uint8_t		 prev[AUDIT_HASH_LEN];
	size_t		 i;

	if (sqlite3_prepare_v2(rdb, "SELECT seq, role, tenant, sandbox, "
	    "event, outcome, body, prev, hash, sig, keyid, time FROM records "
	    "WHERE seq >= ?1 - 1 ORDER BY seq", -1, &q, NULL) != SQLITE_OK)
		fatalx("%s", sqlite3_errmsg(rdb));
	sqlite3_bind_int64(q, 1, (sqlite3_int64)batch[0]->seq);
	memset(prev, 0, sizeof(prev));
	if (batch[0]->seq > 1) {
		if (sqlite3_step(q) != SQLITE_ROW ||
		    sqlite3_column_bytes(q, 8) != AUDIT_HASH_LEN)
			abort();
		memcpy(prev, sqlite3_column_blob(q, 8), sizeof(prev));
	}
	for (i = 0; i < n; i++)
		check_row(q, batch[i], prev);
	if (sqlite3_step(q) != SQLITE_DONE)
		abort();
	sqlite3_finalize(q);
}

static void
commit(struct pending_record **batch, size_t *n)
{
	char	 err[SBX_MSG_MAX];
	size_t	 i;

	if (*n == 0)
		return;
	if (store_commit(batch, *n, err, sizeof(err)) == -1)
		fatalx("store_commit: %s", err);
	check_batch(batch, *n);
	for (i = 0; i < *n; i++) {
		free(batch[i]->body);
		free(batch[i]);
	}
	*n = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in		 in = { data, size };
	struct pending_record	*batch[BATCH_MAX], *r;
	const uint8_t		*p;
	char			 why[160];
	size_t			 len, n = 0;
	uint8_t			 ctl;
	uint32_t		 role;

	while (in.left > 0) {
		ctl = fuzz_u8(&in);
		p = fuzz_bytes(&in, fuzz_u16(&in), &len);
		role = roles[ctl & 3];
		/* As auditd_dispatch(): mcpctl reads, never writes. */
		if (role == ROLE_MCPCTL)
			continue;
		if ((r = record_decode(p, len, why, sizeof(why))) != NULL) {
			str_copy(r->role, proto_role_name(role),
			    sizeof(r->role));
			r->pid = 1000 + (ctl >> 2 & 31);
			r->uid = ctl >> 2 & 1;
			batch[n++] = r;
		}
		if ((ctl & 0x80) || n == BATCH_MAX)
			commit(batch, &n);
	}
	commit(batch, &n);
	if (store_size() >= STORE_RECORDS) {
		store_stop();
		store_start();
	}
	return 0;
}
