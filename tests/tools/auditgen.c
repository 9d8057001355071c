/*
 * auditgen: write audit databases in the format of auditd/FORMAT.md
 * (schema 2) with the shared primitives of common/auditlog.c, so that
 * mcpctl can be tested without mcp-auditd, and tampered with by hand.
 *
 *	auditgen create [-F] [-c every] [-n count] [-r at] [-s step]
 *	    [-t start] db
 *		A new database of count records (default 50), signed by
 *		audit.key beside it (made if missing), the first at start
 *		(seconds since the epoch, default 2026-11-21T15:00:00Z),
 *		each step seconds (default 60) after the one before.  A
 *		checkpoint every `every' records, and one at the end unless
 *		-F.  -r: a key rotation as mcp-auditd makes it, in record
 *		at + 1.  Each checkpoint is printed as auditd logs it.
 *	auditgen append [-X] [-H seconds] [-n count] [-w ms] db
 *		Append count records (default 1) to the chain, each in its
 *		own transaction, timed now, -w ms apart.  -H: then keep the
 *		database open, as auditd does.  -X: exit without closing
 *		it, as a crash would, leaving the -wal and -shm files.
 *	auditgen resign [-C] db seq secret-key-file
 *		Sign record seq with another key: its keyid, hash and
 *		signature.  -C: and every later record, keeping the chain
 *		whole (a key change with no rotation record).
 *	auditgen keygen secret-key-file public-key-file
 */
#include <sys/types.h>

#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "auditbody.h"
#include "auditlog.h"
#include "util.h"

#define NS		1000000000LL
#define START		1795273200LL	/* 2026-11-21T15:00:00Z */

static const char ddl[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) "
	"  STRICT;"
	"INSERT INTO meta VALUES ('schema', 2);"
	"CREATE TABLE records (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL,"
	"  role TEXT NOT NULL, pid INTEGER NOT NULL, uid INTEGER NOT NULL,"
	"  tenant TEXT NOT NULL, sandbox TEXT NOT NULL, event TEXT NOT NULL,"
	"  outcome TEXT NOT NULL, body TEXT NOT NULL, prev BLOB NOT NULL,"
	"  hash BLOB NOT NULL, keyid TEXT NOT NULL, sig BLOB NOT NULL) STRICT;"
	"CREATE INDEX records_time ON records(time);"
	"CREATE INDEX records_tenant ON records(tenant, seq);"
	"CREATE INDEX records_sandbox ON records(sandbox, seq);"
	"CREATE INDEX records_event ON records(event, seq);"
	"CREATE TABLE checkpoints (size INTEGER PRIMARY KEY,"
	"  time INTEGER NOT NULL, root BLOB NOT NULL, keyid TEXT NOT NULL,"
	"  sig BLOB NOT NULL) STRICT;"
	"CREATE TABLE keys (keyid TEXT PRIMARY KEY, pubkey BLOB NOT NULL,"
	"  since INTEGER NOT NULL) STRICT;";

struct gen {
	sqlite3			*db;
	char			 dir[PATH_MAX];
	uint8_t			 sk[AUDIT_SK_LEN];
	uint8_t			 pk[AUDIT_PK_LEN];
	char			 keyid[AUDIT_KEYID_LEN + 1];
	int64_t			 seq;		/* the last record's */
	uint8_t			 head[AUDIT_HASH_LEN];
	struct audit_merkle	 tree;
};

static __attribute__((__noreturn__)) void
usage(void)
{
	fprintf(stderr, "usage: auditgen create [-F] [-c every] [-n count] "
	    "[-r at] [-s step] [-t start] db\n"
	    "       auditgen append [-X] [-H seconds] [-n count] [-w ms] db\n"
	    "       auditgen resign [-C] db seq secret-key-file\n"
	    "       auditgen keygen secret-key-file public-key-file\n");
	exit(2);
}

static void
exec_sql(sqlite3 *db, const char *sql)
{
	char	*e = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
		errx(1, "%s: %s", sql, e);
}

static void
dir_of(const char *path, char *dir, size_t len)
{
	char	*p;

	if (str_copy(dir, path, len) == -1)
		errx(1, "%s: path too long", path);
	if ((p = strrchr(dir, '/')) == NULL)
		(void)str_copy(dir, ".", len);
	else
		*p = '\0';
}

static void
in_dir(const struct gen *g, const char *name, char *out, size_t len)
{
	if (str_fmt(out, len, "%s/%s", g->dir, name) == -1)
		errx(1, "%s/%s: path too long", g->dir, name);
}

static void
key_load(struct gen *g, const char *path)
{
	char	 why[PATH_MAX + 64];

	if (audit_key_read_secret(path, g->sk, g->pk, why, sizeof(why)) == -1)
		errx(1, "%s", why);
	audit_keyid(g->pk, g->keyid);
}

static void
key_row(struct gen *g)
{
	sqlite3_stmt	*st;

	if (sqlite3_prepare_v2(g->db, "INSERT OR IGNORE INTO keys VALUES "
	    "(?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		errx(1, "keys: %s", sqlite3_errmsg(g->db));
	sqlite3_bind_text(st, 1, g->keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, g->pk, sizeof(g->pk), SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, g->seq + 1);
	if (sqlite3_step(st) != SQLITE_DONE)
		errx(1, "keys: %s", sqlite3_errmsg(g->db));
	sqlite3_finalize(st);
}

static void
gen_record(struct gen *g, int64_t t, const char *role, int64_t pid,
    int64_t uid, const char *tenant, const char *sandbox, const char *event,
    const char *outcome, const char *body)
{
	struct audit_entry	 e;
	sqlite3_stmt		*st;
	uint8_t			 h[AUDIT_HASH_LEN], sig[AUDIT_SIG_LEN];

	memset(&e, 0, sizeof(e));
	e.seq = (uint64_t)g->seq + 1;
	e.time = t;
	e.role = role;
	e.pid = pid;
	e.uid = uid;
	e.tenant = tenant;
	e.sandbox = sandbox;
	e.event = event;
	e.outcome = outcome;
	e.body = (const uint8_t *)body;
	e.bodylen = strlen(body);
	memcpy(e.prev, g->head, sizeof(e.prev));
	memcpy(e.keyid, g->keyid, sizeof(e.keyid));
	audit_entry_hash(&e, h);
	audit_sign_hash(h, g->sk, sig);
	if (sqlite3_prepare_v2(g->db, "INSERT INTO records VALUES (?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		errx(1, "insert: %s", sqlite3_errmsg(g->db));
	sqlite3_bind_int64(st, 1, (sqlite3_int64)e.seq);
	sqlite3_bind_int64(st, 2, t);
	sqlite3_bind_text(st, 3, role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, pid);
	sqlite3_bind_int64(st, 5, uid);
	sqlite3_bind_text(st, 6, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, sandbox, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, event, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, outcome, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, body, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 11, g->head, AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(st, 12, h, AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, g->keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 14, sig, AUDIT_SIG_LEN, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		errx(1, "insert: %s", sqlite3_errmsg(g->db));
	sqlite3_finalize(st);
	g->seq++;
	memcpy(g->head, h, sizeof(g->head));
	audit_merkle_add(&g->tree, h, sizeof(h));
}

static void
gen_checkpoint(struct gen *g, int64_t t)
{
	sqlite3_stmt	*st;
	uint8_t		 root[AUDIT_HASH_LEN], h[AUDIT_HASH_LEN];
	uint8_t		 sig[AUDIT_SIG_LEN];
	char		 rhex[AUDIT_HASH_LEN * 2 + 1];
	char		 shex[AUDIT_SIG_LEN * 2 + 1];

	audit_merkle_root(&g->tree, root);
	audit_checkpoint_hash((uint64_t)g->seq, root, t, h);
	audit_sign_hash(h, g->sk, sig);
	if (sqlite3_prepare_v2(g->db, "INSERT INTO checkpoints VALUES (?, ?, "
	    "?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		errx(1, "checkpoint: %s", sqlite3_errmsg(g->db));
	sqlite3_bind_int64(st, 1, g->seq);
	sqlite3_bind_int64(st, 2, t);
	sqlite3_bind_blob(st, 3, root, sizeof(root), SQLITE_STATIC);
	sqlite3_bind_text(st, 4, g->keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 5, sig, sizeof(sig), SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		errx(1, "checkpoint: %s", sqlite3_errmsg(g->db));
	sqlite3_finalize(st);
	audit_hex(root, sizeof(root), rhex);
	audit_hex(sig, sizeof(sig), shex);
	printf("audit checkpoint size=%lld root=%s time=%lld keyid=%s sig=%s\n",
	    (long long)g->seq, rhex, (long long)t, g->keyid, shex);
}

/* The rotation as mcp-auditd makes it: the old key signs the record. */
static void
gen_rotation(struct gen *g, int64_t t)
{
	char		 next[PATH_MAX], pubnext[PATH_MAX], key[PATH_MAX];
	char		 pub[PATH_MAX], old[PATH_MAX], why[PATH_MAX + 64];
	char		 nkey[64], okey[64], shex[AUDIT_SIG_LEN * 2 + 1];
	char		 nid[AUDIT_KEYID_LEN + 1];
	uint8_t		 nsk[AUDIT_SK_LEN], npk[AUDIT_PK_LEN];
	uint8_t		 h[AUDIT_HASH_LEN], nsig[AUDIT_SIG_LEN];
	struct audit_body b;

	in_dir(g, AUDIT_KEY_NEXT, next, sizeof(next));
	in_dir(g, "audit.pub.next", pubnext, sizeof(pubnext));
	in_dir(g, AUDIT_KEY_FILE, key, sizeof(key));
	in_dir(g, AUDIT_PUB_FILE, pub, sizeof(pub));
	if (str_fmt(old, sizeof(old), "%s.%s", pub, g->keyid) == -1)
		errx(1, "path too long");
	if (audit_key_generate(next, pubnext, why, sizeof(why)) == -1 ||
	    audit_key_read_secret(next, nsk, npk, why, sizeof(why)) == -1)
		errx(1, "%s", why);
	audit_keyid(npk, nid);
	audit_rotation_hash(g->keyid, npk, h);
	audit_sign_hash(h, nsk, nsig);
	audit_hex(nsig, sizeof(nsig), shex);
	sodium_bin2base64(nkey, sizeof(nkey), npk, sizeof(npk),
	    sodium_base64_VARIANT_ORIGINAL);
	sodium_bin2base64(okey, sizeof(okey), g->pk, sizeof(g->pk),
	    sodium_base64_VARIANT_ORIGINAL);
	audit_body_init(&b);
	audit_body_str(&b, "new_key", nkey);
	audit_body_str(&b, "new_keyid", nid);
	audit_body_str(&b, "new_sig", shex);
	audit_body_str(&b, "old_key", okey);
	audit_body_str(&b, "old_keyid", g->keyid);
	gen_record(g, t, "auditd", 999, 64102, "", "", "key-rotation", "ok",
	    b.buf);
	audit_body_free(&b);
	if (rename(pub, old) == -1 || rename(pubnext, pub) == -1 ||
	    rename(next, key) == -1)
		err(1, "rotating the key files");
	key_load(g, key);
	key_row(g);
}

/* Record i of a made-up history: runs, execs, tools, files, refusals. */
static void
gen_sample(struct gen *g, int64_t i, int64_t t)
{
	static const char *const events[] = { "tool-call", "run", "run",
	    "exec", "file-write", "sandbox-create", "auth-failure",
	    "policy-denial" };
	static const char *const tenants[] = { "alice", "bob", "" };
	const char	*ev = events[i % nitems(events)];
	const char	*tenant = tenants[i % nitems(tenants)];
	const char	*outcome = "ok", *role = "sandboxd";
	char		 sbx[48] = "", v[128];
	struct audit_body b;

	audit_body_init(&b);
	if (strcmp(ev, "tool-call") == 0 || strcmp(ev, "auth-failure") == 0) {
		role = "mcpd";
		if (*ev == 'a') {
			outcome = "denied";
			audit_body_str(&b, "reason", "bad token");
		}
		audit_body_str(&b, "tool", "run_code");
	} else {
		snprintf(sbx, sizeof(sbx), "%08x%024x",
		    (unsigned)(0x5bd10000 + i / 8), (unsigned)(i / 8));
		if (strcmp(ev, "run") == 0) {
			outcome = i % 8 == 1 ? "intent" : "ok";
			snprintf(v, sizeof(v), "print('h\xc3\xa9 %lld')\n"
			    "\x1b[31m100%%", (long long)i);
			audit_body_u64(&b, "code.bytes", strlen(v));
			audit_body_str(&b, "code.excerpt", v);
			if (i % 8 == 2)
				audit_body_i64(&b, "exit", i % 3);
			audit_body_str(&b, "language", "python");
		} else if (strcmp(ev, "exec") == 0) {
			snprintf(v, sizeof(v), "ls -l /workspace/%lld",
			    (long long)i);
			audit_body_str(&b, "command", v);
			audit_body_i64(&b, "exit", 0);
		} else if (strcmp(ev, "file-write") == 0) {
			outcome = "failed";
			snprintf(v, sizeof(v), "/workspace/f%lld.txt",
			    (long long)i);
			audit_body_str(&b, "error", "quota exceeded");
			audit_body_str(&b, "path", v);
		} else if (strcmp(ev, "policy-denial") == 0) {
			outcome = "denied";
			audit_body_str(&b, "reason", "network egress");
		} else
			audit_body_str(&b, "image", "host");
	}
	gen_record(g, t, role, 4000 + i % 7, *role == 'm' ? 64101 : 0,
	    tenant, sbx, ev, outcome, b.buf != NULL ? b.buf : "");
	audit_body_free(&b);
}

static int64_t
num(const char *s, int64_t min, int64_t max)
{
	const char	*e;
	uint64_t	 v;

	if ((e = str_to_u64(s, (uint64_t)min, (uint64_t)max, &v)) != NULL)
		errx(2, "%s: %s", s, e);
	return (int64_t)v;
}

static int
cmd_create(int argc, char **argv)
{
	struct gen	 g;
	char		 key[PATH_MAX], pub[PATH_MAX], why[PATH_MAX + 64];
	int64_t		 n = 50, every = 0, at = -1, step = 60, start = START;
	int64_t		 i, t = 0;
	int		 ch, final = 1;

	while ((ch = getopt(argc, argv, "Fc:n:r:s:t:")) != -1) {
		switch (ch) {
		case 'F':
			final = 0;
			break;
		case 'c':
			every = num(optarg, 1, INT32_MAX);
			break;
		case 'n':
			n = num(optarg, 0, INT32_MAX);
			break;
		case 'r':
			at = num(optarg, 0, INT32_MAX);
			break;
		case 's':
			step = num(optarg, 0, 86400);
			break;
		case 't':
			start = num(optarg, 0, 4000000000LL);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1)
		usage();
	memset(&g, 0, sizeof(g));
	audit_merkle_init(&g.tree);
	dir_of(argv[optind], g.dir, sizeof(g.dir));
	in_dir(&g, AUDIT_KEY_FILE, key, sizeof(key));
	in_dir(&g, AUDIT_PUB_FILE, pub, sizeof(pub));
	if (access(key, F_OK) == -1 &&
	    audit_key_generate(key, pub, why, sizeof(why)) == -1)
		errx(1, "%s", why);
	key_load(&g, key);
	if (access(argv[optind], F_OK) == 0)
		errx(1, "%s exists", argv[optind]);
	if (sqlite3_open(argv[optind], &g.db) != SQLITE_OK)
		errx(1, "%s: %s", argv[optind], sqlite3_errmsg(g.db));
	exec_sql(g.db, ddl);
	exec_sql(g.db, "BEGIN");
	key_row(&g);
	for (i = 0; i < n; i++) {
		t = (start + i * step) * NS + i * 1000000;
		if (g.seq == at)
			gen_rotation(&g, t);
		else
			gen_sample(&g, i, t);
		if (every > 0 && g.seq % every == 0)
			gen_checkpoint(&g, t);
	}
	if (final && every > 0 && g.seq % every != 0)
		gen_checkpoint(&g, t);
	exec_sql(g.db, "COMMIT");
	sqlite3_close(g.db);
	return 0;
}

/* The chain's head: the last record's seq, hash and time. */
static int64_t
chain_head(struct gen *g)
{
	sqlite3_stmt	*st;
	int64_t		 t = 0;

	if (sqlite3_prepare_v2(g->db, "SELECT seq, hash, time FROM records "
	    "ORDER BY seq DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		errx(1, "%s", sqlite3_errmsg(g->db));
	if (sqlite3_step(st) == SQLITE_ROW) {
		g->seq = sqlite3_column_int64(st, 0);
		if (sqlite3_column_bytes(st, 1) != AUDIT_HASH_LEN)
			errx(1, "the last record has no hash");
		memcpy(g->head, sqlite3_column_blob(st, 1), AUDIT_HASH_LEN);
		t = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return t;
}

static int
cmd_append(int argc, char **argv)
{
	struct gen		 g;
	struct timespec		 ts;
	char			 key[PATH_MAX], body[64];
	int64_t			 n = 1, wait_ms = 0, hold = 0, i;
	int			 ch, crash = 0;

	while ((ch = getopt(argc, argv, "H:Xn:w:")) != -1) {
		switch (ch) {
		case 'H':
			hold = num(optarg, 0, 3600);
			break;
		case 'X':
			crash = 1;
			break;
		case 'n':
			n = num(optarg, 0, INT32_MAX);
			break;
		case 'w':
			wait_ms = num(optarg, 0, 60000);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1)
		usage();
	memset(&g, 0, sizeof(g));
	dir_of(argv[optind], g.dir, sizeof(g.dir));
	in_dir(&g, AUDIT_KEY_FILE, key, sizeof(key));
	key_load(&g, key);
	if (sqlite3_open_v2(argv[optind], &g.db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK)
		errx(1, "%s: %s", argv[optind], sqlite3_errmsg(g.db));
	sqlite3_busy_timeout(g.db, 5000);
	exec_sql(g.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL");
	chain_head(&g);
	for (i = 0; i < n; i++) {
		if (i > 0 && wait_ms > 0)
			usleep((useconds_t)wait_ms * 1000);
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(body, sizeof(body), "command=appended %lld\nexit=0\n",
		    (long long)g.seq + 1);
		exec_sql(g.db, "BEGIN IMMEDIATE");
		gen_record(&g, (int64_t)ts.tv_sec * NS + ts.tv_nsec, "sandboxd",
		    getpid(), 0, "carol", "", "exec", "ok", body);
		exec_sql(g.db, "COMMIT");
	}
	printf("appended %lld, last seq %lld\n", (long long)n,
	    (long long)g.seq);
	fflush(stdout);
	if (hold > 0)
		sleep((unsigned)hold);
	if (crash)
		_exit(0);
	sqlite3_close(g.db);
	return 0;
}

static void
resign_one(struct gen *g, int64_t seq, int relink)
{
	struct audit_entry	 e;
	sqlite3_stmt		*st;
	uint8_t			 h[AUDIT_HASH_LEN], sig[AUDIT_SIG_LEN];

	if (sqlite3_prepare_v2(g->db, "SELECT time, role, pid, uid, tenant, "
	    "sandbox, event, outcome, body, prev FROM records WHERE seq = ?",
	    -1, &st, NULL) != SQLITE_OK)
		errx(1, "%s", sqlite3_errmsg(g->db));
	sqlite3_bind_int64(st, 1, seq);
	if (sqlite3_step(st) != SQLITE_ROW)
		errx(1, "no record %lld", (long long)seq);
	memset(&e, 0, sizeof(e));
	e.seq = (uint64_t)seq;
	e.time = sqlite3_column_int64(st, 0);
	e.role = (const char *)sqlite3_column_text(st, 1);
	e.pid = sqlite3_column_int64(st, 2);
	e.uid = sqlite3_column_int64(st, 3);
	e.tenant = (const char *)sqlite3_column_text(st, 4);
	e.sandbox = (const char *)sqlite3_column_text(st, 5);
	e.event = (const char *)sqlite3_column_text(st, 6);
	e.outcome = (const char *)sqlite3_column_text(st, 7);
	e.body = sqlite3_column_text(st, 8);
	e.bodylen = (size_t)sqlite3_column_bytes(st, 8);
	if (relink)
		memcpy(e.prev, g->head, sizeof(e.prev));
	else
		memcpy(e.prev, sqlite3_column_blob(st, 9), sizeof(e.prev));
	memcpy(e.keyid, g->keyid, sizeof(e.keyid));
	audit_entry_hash(&e, h);
	audit_sign_hash(h, g->sk, sig);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(g->db, "UPDATE records SET prev = ?, hash = ?, "
	    "keyid = ?, sig = ? WHERE seq = ?", -1, &st, NULL) != SQLITE_OK)
		errx(1, "%s", sqlite3_errmsg(g->db));
	sqlite3_bind_blob(st, 1, e.prev, AUDIT_HASH_LEN, SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, 2, h, AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, g->keyid, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 4, sig, AUDIT_SIG_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, seq);
	if (sqlite3_step(st) != SQLITE_DONE)
		errx(1, "%s", sqlite3_errmsg(g->db));
	sqlite3_finalize(st);
	memcpy(g->head, h, sizeof(g->head));
}

static int
cmd_resign(int argc, char **argv)
{
	struct gen	 g;
	int64_t		 seq, last, s;
	int		 ch, chain = 0;

	while ((ch = getopt(argc, argv, "C")) != -1) {
		switch (ch) {
		case 'C':
			chain = 1;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 3)
		usage();
	memset(&g, 0, sizeof(g));
	seq = num(argv[optind + 1], 1, INT64_MAX);
	key_load(&g, argv[optind + 2]);
	if (sqlite3_open_v2(argv[optind], &g.db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK)
		errx(1, "%s: %s", argv[optind], sqlite3_errmsg(g.db));
	exec_sql(g.db, "BEGIN IMMEDIATE");
	chain_head(&g);
	last = chain ? g.seq : seq;
	for (s = seq; s <= last; s++)
		resign_one(&g, s, s > seq);
	exec_sql(g.db, "COMMIT");
	sqlite3_close(g.db);
	return 0;
}

int
main(int argc, char *argv[])
{
	char	 why[PATH_MAX + 64];

	if (sodium_init() == -1)
		errx(1, "sodium_init");
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "create") == 0)
		return cmd_create(argc - 1, argv + 1);
	if (strcmp(argv[1], "append") == 0)
		return cmd_append(argc - 1, argv + 1);
	if (strcmp(argv[1], "resign") == 0)
		return cmd_resign(argc - 1, argv + 1);
	if (strcmp(argv[1], "keygen") == 0 && argc == 4) {
		if (audit_key_generate(argv[2], argv[3], why,
		    sizeof(why)) == -1)
			errx(1, "%s", why);
		return 0;
	}
	usage();
}
