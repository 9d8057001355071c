/*
 * The audit store: a hash chain of Ed25519-signed records in SQLite (WAL,
 * synchronous=FULL), with signed checkpoints over an RFC 9162 Merkle tree
 * of the record hashes.  The format is the one mcpctl verifies; see
 * common/auditlog.h.
 *
 * Records are acknowledged only once their transaction has committed, and
 * those that arrive together commit together (group commit), so throughput
 * does not pay one fsync per record.  The chain's head and the tree are
 * kept in memory and advance only when a commit succeeds; at start they
 * are read back from the database, so a restarted auditd continues the
 * same chain.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "auditbody.h"
#include "auditd.h"
#include "auditlog.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define STORE_SCHEMA		2
#define CHECKPOINT_RECORDS	1000

static struct {
	sqlite3			*db;
	sqlite3_stmt		*insert;
	sqlite3_stmt		*begin;		/* prepared once, like insert */
	sqlite3_stmt		*commit;
	char			 dir[PATH_MAX];
	uint8_t			 sk[AUDIT_SK_LEN];
	uint8_t			 pk[AUDIT_PK_LEN];
	char			 keyid[AUDIT_KEYID_LEN + 1];
	uint64_t		 seq;		/* the last record's */
	uint8_t			 head[AUDIT_HASH_LEN];	/* and its hash */
	struct audit_merkle	 tree;
	uint64_t		 checkpointed;	/* the last checkpoint's size */
	uint64_t		 refused;	/* records refused since the
						 * last commit that worked */
} st;

static const char store_ddl[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE IF NOT EXISTS meta ("
	"  key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;"
	"INSERT OR IGNORE INTO meta VALUES ('schema', 2);"
	"CREATE TABLE IF NOT EXISTS records ("
	"  seq INTEGER PRIMARY KEY,"
	"  time INTEGER NOT NULL,"
	"  role TEXT NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  uid INTEGER NOT NULL,"
	"  tenant TEXT NOT NULL,"
	"  sandbox TEXT NOT NULL,"
	"  event TEXT NOT NULL,"
	"  outcome TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  prev BLOB NOT NULL,"
	"  hash BLOB NOT NULL,"
	"  keyid TEXT NOT NULL,"
	"  sig BLOB NOT NULL) STRICT;"
	"CREATE INDEX IF NOT EXISTS records_time ON records(time);"
	"CREATE INDEX IF NOT EXISTS records_tenant ON records(tenant, seq);"
	"CREATE INDEX IF NOT EXISTS records_sandbox ON records(sandbox, seq);"
	"CREATE INDEX IF NOT EXISTS records_event ON records(event, seq);"
	"CREATE TABLE IF NOT EXISTS checkpoints ("
	"  size INTEGER PRIMARY KEY,"
	"  time INTEGER NOT NULL,"
	"  root BLOB NOT NULL,"
	"  keyid TEXT NOT NULL,"
	"  sig BLOB NOT NULL) STRICT;"
	"CREATE TABLE IF NOT EXISTS keys ("
	"  keyid TEXT PRIMARY KEY,"
	"  pubkey BLOB NOT NULL,"
	"  since INTEGER NOT NULL) STRICT;";

static int64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
path_in_dir(char *buf, size_t len, const char *name)
{
	return str_fmt(buf, len, "%s/%s", st.dir, name);
}

/* --- The chain's state, read back at start ---------------------------- */

static int
store_load_chain(char *why, size_t len)
{
	sqlite3_stmt	*q;
	int		 rc;

	audit_merkle_init(&st.tree);
	st.seq = 0;
	memset(st.head, 0, sizeof(st.head));
	if (sqlite3_prepare_v2(st.db, "SELECT seq, hash FROM records ORDER "
	    "BY seq", -1, &q, NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((uint64_t)sqlite3_column_int64(q, 0) != st.seq + 1 ||
		    sqlite3_column_bytes(q, 1) != AUDIT_HASH_LEN) {
			snprintf(why, len, "the chain is broken at seq %llu: "
			    "run mcpctl audit verify",
			    (unsigned long long)st.seq + 1);
			sqlite3_finalize(q);
			return -1;
		}
		st.seq++;
		memcpy(st.head, sqlite3_column_blob(q, 1), AUDIT_HASH_LEN);
		audit_merkle_add(&st.tree, st.head, AUDIT_HASH_LEN);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		goto fail;
	if (sqlite3_prepare_v2(st.db, "SELECT max(size) FROM checkpoints",
	    -1, &q, NULL) != SQLITE_OK)
		goto fail;
	st.checkpointed = sqlite3_step(q) == SQLITE_ROW ?
	    (uint64_t)sqlite3_column_int64(q, 0) : 0;
	sqlite3_finalize(q);
	return 0;
 fail:
	snprintf(why, len, "reading the chain: %s", sqlite3_errmsg(st.db));
	return -1;
}

/* --- Appending -------------------------------------------------------- */

static int
store_insert(struct pending_record *r, const uint8_t prev[AUDIT_HASH_LEN],
    uint8_t hash[AUDIT_HASH_LEN])
{
	struct audit_entry	 e;
	uint8_t			 sig[AUDIT_SIG_LEN];
	sqlite3_stmt		*q = st.insert;

	memset(&e, 0, sizeof(e));
	e.seq = r->seq;
	e.time = r->time;
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
	memcpy(e.keyid, st.keyid, sizeof(e.keyid));
	audit_entry_hash(&e, hash);
	audit_sign_hash(hash, st.sk, sig);

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, (sqlite3_int64)r->seq);
	sqlite3_bind_int64(q, 2, r->time);
	sqlite3_bind_text(q, 3, r->role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 4, r->pid);
	sqlite3_bind_int64(q, 5, r->uid);
	sqlite3_bind_text(q, 6, r->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 7, r->sandbox, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 8, r->event, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 9, r->outcome, -1, SQLITE_STATIC);
	/* Checked by audit_body_check(): printable ASCII lines. */
	sqlite3_bind_text(q, 10, (const char *)r->body, (int)r->bodylen,
	    SQLITE_STATIC);
	sqlite3_bind_blob(q, 11, prev, AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(q, 12, hash, AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_text(q, 13, st.keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(q, 14, sig, AUDIT_SIG_LEN, SQLITE_TRANSIENT);
	return sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
}

/*
 * Commit a batch in one transaction.  On failure nothing of it is kept,
 * the chain stays where it was, and every record gets seq 0 and the
 * reason.  The first failure is logged, and the recovery with the count
 * of what was refused meanwhile, not every batch in between.
 */
/* A prepared statement without results, run and made ready again. */
static int
store_step(sqlite3_stmt *s)
{
	int	 rc = sqlite3_step(s);

	/* The message stays for sqlite3_errmsg(); reset repeats the code. */
	(void)sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_commit(struct pending_record **batch, size_t n, char *err,
    size_t errlen)
{
	uint8_t			 prev[AUDIT_HASH_LEN], hash[AUDIT_HASH_LEN];
	uint8_t			(*hashes)[AUDIT_HASH_LEN];
	size_t			 i;

	hashes = xcalloc(n, AUDIT_HASH_LEN);
	if (store_step(st.begin) == -1)
		goto fail;
	memcpy(prev, st.head, sizeof(prev));
	for (i = 0; i < n; i++) {
		batch[i]->seq = st.seq + 1 + i;
		batch[i]->time = now_ns();
		if (store_insert(batch[i], prev, hash) == -1)
			goto fail;
		memcpy(hashes[i], hash, AUDIT_HASH_LEN);
		memcpy(prev, hash, sizeof(prev));
	}
	if (store_step(st.commit) == -1)
		goto fail;
	/* Committed: the chain and the tree move on. */
	for (i = 0; i < n; i++)
		audit_merkle_add(&st.tree, hashes[i], AUDIT_HASH_LEN);
	st.seq += n;
	memcpy(st.head, prev, sizeof(st.head));
	free(hashes);
	if (st.refused != 0) {
		log_info("the audit database takes records again (%llu "
		    "refused meanwhile)", (unsigned long long)st.refused);
		st.refused = 0;
	}
	if (st.seq - st.checkpointed >= CHECKPOINT_RECORDS)
		store_checkpoint();
	return 0;
 fail:
	/* The reason first: a ROLLBACK replaces the error message. */
	snprintf(err, errlen, "audit database: %s", sqlite3_errmsg(st.db));
	if (!sqlite3_get_autocommit(st.db))
		sqlite3_exec(st.db, "ROLLBACK", NULL, NULL, NULL);
	if (st.refused == 0)
		log_warnx("%s: refusing records until it takes them again",
		    err);
	st.refused += n;
	for (i = 0; i < n; i++)
		batch[i]->seq = 0;
	free(hashes);
	return -1;
}

/* A record of auditd's own, committed at once. */
static int
store_own(const char *event, const char *outcome, const char *body,
    char *why, size_t len)
{
	struct pending_record	 r, *batch[1] = { &r };

	memset(&r, 0, sizeof(r));
	str_copy(r.role, "auditd", sizeof(r.role));
	r.pid = getpid();
	r.uid = getuid();
	r.event = event;
	r.outcome = outcome;
	r.body = (uint8_t *)(uintptr_t)body;
	r.bodylen = strlen(body);
	return store_commit(batch, 1, why, len);
}

int
store_event(int event, const char *body)
{
	char	 why[256];

	if (store_own(audit_event_name((uint32_t)event), "ok", body, why,
	    sizeof(why)) == -1) {
		log_warnx("cannot record %s: %s",
		    audit_event_name((uint32_t)event), why);
		return -1;
	}
	return 0;
}

uint64_t
store_size(void)
{
	return st.seq;
}

/* --- Checkpoints ------------------------------------------------------ */

int
store_checkpoint(void)
{
	sqlite3_stmt	*q;
	uint8_t		 root[AUDIT_HASH_LEN], h[AUDIT_HASH_LEN];
	uint8_t		 sig[AUDIT_SIG_LEN];
	char		 rhex[AUDIT_HASH_LEN * 2 + 1];
	char		 shex[AUDIT_SIG_LEN * 2 + 1];
	int64_t		 t = now_ns();
	int		 rc;

	if (st.seq == st.checkpointed)
		return 0;
	audit_merkle_root(&st.tree, root);
	audit_checkpoint_hash(st.seq, root, t, h);
	audit_sign_hash(h, st.sk, sig);
	if (sqlite3_prepare_v2(st.db, "INSERT INTO checkpoints (size, time, "
	    "root, keyid, sig) VALUES (?,?,?,?,?)", -1, &q, NULL) !=
	    SQLITE_OK) {
		log_warnx("checkpoint: %s", sqlite3_errmsg(st.db));
		return -1;
	}
	sqlite3_bind_int64(q, 1, (sqlite3_int64)st.seq);
	sqlite3_bind_int64(q, 2, t);
	sqlite3_bind_blob(q, 3, root, sizeof(root), SQLITE_STATIC);
	sqlite3_bind_text(q, 4, st.keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(q, 5, sig, sizeof(sig), SQLITE_STATIC);
	rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		log_warnx("checkpoint: %s", sqlite3_errmsg(st.db));
		return -1;
	}
	st.checkpointed = st.seq;
	audit_hex(root, sizeof(root), rhex);
	audit_hex(sig, sizeof(sig), shex);
	/* A copy outside the database, for mcpctl audit verify -c. */
	log_info("audit checkpoint size=%llu root=%s time=%lld keyid=%s "
	    "sig=%s", (unsigned long long)st.seq, rhex, (long long)t,
	    st.keyid, shex);
	return 0;
}

/* --- Keys ------------------------------------------------------------- */

static int
store_key_row(const char *why_ctx)
{
	sqlite3_stmt	*q;
	int		 rc;

	if (sqlite3_prepare_v2(st.db, "INSERT OR IGNORE INTO keys (keyid, "
	    "pubkey, since) VALUES (?,?,?)", -1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(q, 1, st.keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(q, 2, st.pk, sizeof(st.pk), SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, (sqlite3_int64)st.seq + 1);
	rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		log_warnx("%s: %s", why_ctx, sqlite3_errmsg(st.db));
		return -1;
	}
	return 0;
}

/* The key that signed the last record, if any. */
static void
store_last_keyid(char *out, size_t len)
{
	sqlite3_stmt	*q;

	out[0] = '\0';
	if (sqlite3_prepare_v2(st.db, "SELECT keyid FROM records ORDER BY "
	    "seq DESC LIMIT 1", -1, &q, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
		str_copy(out, (const char *)sqlite3_column_text(q, 0), len);
	sqlite3_finalize(q);
}

static void
b64(const uint8_t *p, size_t len, char *out, size_t outlen)
{
	sodium_bin2base64(out, outlen, p, len,
	    sodium_base64_VARIANT_ORIGINAL);
}

/*
 * Whether the last record is the rotation to key nid: then an earlier
 * start committed it and stopped before the key files were all renamed.
 */
static int
store_rotated_to(const char *nid)
{
	sqlite3_stmt	*q;
	char		 want[64];
	const char	*body;
	int		 rv = 0;

	if (str_fmt(want, sizeof(want), "\nnew_keyid=%s\n", nid) == -1 ||
	    sqlite3_prepare_v2(st.db, "SELECT event, body FROM records "
	    "ORDER BY seq DESC LIMIT 1", -1, &q, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(q) == SQLITE_ROW &&
	    sqlite3_column_text(q, 0) != NULL &&
	    strcmp((const char *)sqlite3_column_text(q, 0),
	    audit_event_name(AEV_KEY_ROTATION)) == 0 &&
	    (body = (const char *)sqlite3_column_text(q, 1)) != NULL)
		rv = strstr(body, want) != NULL;
	sqlite3_finalize(q);
	return rv;
}

/* path exists: 1, else 0. */
static int
present(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * A staged key (mcpctl audit keygen): a record signed by the old key and
 * the new one says so, then the new key signs from the next record on.
 * The record commits before the key files are renamed; a start that
 * finds the record already there only finishes the renaming, so that a
 * failure in between never leads to a second rotation from the old key.
 */
static int
store_rotate(char *why, size_t len)
{
	char		 next[PATH_MAX], pubnext[PATH_MAX], key[PATH_MAX];
	char		 pub[PATH_MAX], old[PATH_MAX];
	char		 nid[AUDIT_KEYID_LEN + 1], nkey[64], okey[64];
	char		 shex[AUDIT_SIG_LEN * 2 + 1];
	uint8_t		 nsk[AUDIT_SK_LEN], npk[AUDIT_PK_LEN];
	uint8_t		 h[AUDIT_HASH_LEN], nsig[AUDIT_SIG_LEN];
	struct audit_body b;
	int		 rv = -1;

	if (path_in_dir(next, sizeof(next), AUDIT_KEY_NEXT) == -1 ||
	    access(next, F_OK) == -1)
		return 0;
	if (audit_key_read_secret(next, nsk, npk, why, len) == -1)
		return -1;
	audit_keyid(npk, nid);
	audit_rotation_hash(st.keyid, npk, h);
	audit_sign_hash(h, nsk, nsig);
	audit_hex(nsig, sizeof(nsig), shex);
	b64(npk, sizeof(npk), nkey, sizeof(nkey));
	b64(st.pk, sizeof(st.pk), okey, sizeof(okey));
	audit_body_init(&b);
	audit_body_str(&b, "new_key", nkey);
	audit_body_str(&b, "new_keyid", nid);
	audit_body_str(&b, "new_sig", shex);
	audit_body_str(&b, "old_key", okey);
	audit_body_str(&b, "old_keyid", st.keyid);
	if (store_rotated_to(nid))
		log_info("the rotation to key %s is recorded already: "
		    "finishing it", nid);
	else if (store_own(audit_event_name(AEV_KEY_ROTATION), "ok", b.buf,
	    why, len) == -1)
		goto out;
	/*
	 * The old public key stays, under its id, for old records.  Each
	 * step is skipped when done already, so that this can be resumed.
	 */
	if (path_in_dir(key, sizeof(key), AUDIT_KEY_FILE) == -1 ||
	    path_in_dir(pub, sizeof(pub), AUDIT_PUB_FILE) == -1 ||
	    path_in_dir(pubnext, sizeof(pubnext), "audit.pub.next") == -1 ||
	    str_fmt(old, sizeof(old), "%s.%s", pub, st.keyid) == -1) {
		snprintf(why, len, "%s: path too long", st.dir);
		goto out;
	}
	if ((present(pubnext) && present(pub) && rename(pub, old) == -1) ||
	    (present(pubnext) && rename(pubnext, pub) == -1) ||
	    rename(next, key) == -1) {
		snprintf(why, len, "rotating the key files in %s: %s (the "
		    "rotation is recorded; mcp-auditd finishes it when it "
		    "next starts)", st.dir, strerror(errno));
		goto out;
	}
	log_info("audit key rotated: %s -> %s (at seq %llu)", st.keyid, nid,
	    (unsigned long long)st.seq);
	memcpy(st.sk, nsk, sizeof(st.sk));
	memcpy(st.pk, npk, sizeof(st.pk));
	memcpy(st.keyid, nid, sizeof(st.keyid));
	rv = store_key_row("recording the new key");
 out:
	audit_body_free(&b);
	sodium_memzero(nsk, sizeof(nsk));
	return rv;
}

static int
store_keys(char *why, size_t len)
{
	char	 key[PATH_MAX], pub[PATH_MAX], last[AUDIT_KEYID_LEN + 1];

	if (path_in_dir(key, sizeof(key), AUDIT_KEY_FILE) == -1 ||
	    path_in_dir(pub, sizeof(pub), AUDIT_PUB_FILE) == -1) {
		snprintf(why, len, "%s: path too long", st.dir);
		return -1;
	}
	if (access(key, F_OK) == -1) {
		if (audit_key_generate(key, pub, why, len) == -1)
			return -1;
		log_info("created the audit signing key %s (public key in %s)",
		    key, pub);
	}
	if (audit_key_read_secret(key, st.sk, st.pk, why, len) == -1)
		return -1;
	audit_keyid(st.pk, st.keyid);
	store_last_keyid(last, sizeof(last));
	if (last[0] != '\0' && strcmp(last, st.keyid) != 0)
		log_warnx("the audit chain was signed by key %s and %s holds "
		    "key %s, with no rotation: mcpctl audit verify will report "
		    "it (use mcpctl audit keygen to change keys)", last, key,
		    st.keyid);
	if (store_key_row("recording the key") == -1) {
		snprintf(why, len, "cannot record the key");
		return -1;
	}
	return store_rotate(why, len);
}

/* --- Opening and closing --------------------------------------------- */

int
store_open(const char *path, char *why, size_t len)
{
	char	*p;

	memset(&st, 0, sizeof(st));
	if (str_copy(st.dir, path, sizeof(st.dir)) == -1 ||
	    (p = strrchr(st.dir, '/')) == NULL) {
		snprintf(why, len, "%s: bad path", path);
		return -1;
	}
	*p = '\0';
	/* The audit user's group reads it (mcpctl): see auditd_sandbox(). */
	if ((st.db = db_open(path, store_ddl, STORE_SCHEMA, 5000, 0640)) ==
	    NULL) {
		snprintf(why, len, "%s: cannot open it as a schema %d audit "
		    "database (an older one must be moved aside)", path,
		    STORE_SCHEMA);
		return -1;
	}
	if (sqlite3_prepare_v3(st.db, "INSERT INTO records (seq, time, role, "
	    "pid, uid, tenant, sandbox, event, outcome, body, prev, hash, "
	    "keyid, sig) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
	    SQLITE_PREPARE_PERSISTENT, &st.insert, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(st.db, "BEGIN IMMEDIATE", -1,
	    SQLITE_PREPARE_PERSISTENT, &st.begin, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(st.db, "COMMIT", -1,
	    SQLITE_PREPARE_PERSISTENT, &st.commit, NULL) != SQLITE_OK) {
		snprintf(why, len, "%s: %s", path, sqlite3_errmsg(st.db));
		return -1;
	}
	if (store_load_chain(why, len) == -1 || store_keys(why, len) == -1)
		return -1;
	/* Records a crash left unchecked get their checkpoint now. */
	store_checkpoint();
	log_info("audit chain at seq %llu, signing with key %s",
	    (unsigned long long)st.seq, st.keyid);
	return 0;
}

void
store_close(void)
{
	if (st.db != NULL)
		store_checkpoint();
	if (st.insert != NULL)
		sqlite3_finalize(st.insert);
	if (st.begin != NULL)
		sqlite3_finalize(st.begin);
	if (st.commit != NULL)
		sqlite3_finalize(st.commit);
	if (st.db != NULL)
		sqlite3_close(st.db);
	sodium_memzero(st.sk, sizeof(st.sk));
	memset(&st, 0, sizeof(st));
}
