/*
 * mcpctl audit verify: the algorithm of the Verification section of
 * auditd/FORMAT.md.  Records are walked in seq order, each checked
 * against the chain so far, and the walk stops at the first bad one.
 * When a record breaks the chain, its neighbours say how: a copy,
 * another record's content, or a record the next one skips over.
 *
 * Records cut from the end together with the checkpoints past them leave
 * a database that holds together: only a checkpoint kept elsewhere (-c)
 * tells.  A log that verifies with none is not anchored, and says so.
 * mcpctl audit anchor verifies the same way, then prints the checkpoint
 * of every record, for the admin to keep elsewhere.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auditlog.h"
#include "mcpctl.h"
#include "util.h"

/* How far from its place a moved record's own seq is looked for. */
#define ALT_WINDOW	1000

struct trusted {
	char		 keyid[AUDIT_KEYID_LEN + 1];
	uint8_t		 pk[AUDIT_PK_LEN];
};

struct checkpoint {
	int64_t		 size;
	int64_t		 time;
	uint8_t		 root[AUDIT_HASH_LEN];
	char		 keyid[AUDIT_KEYID_LEN + 1];
	uint8_t		 sig[AUDIT_SIG_LEN];
	int		 sizes_ok;
	int		 given;		/* by -c: a root alone */
	int		 has_time;	/* given with its time */
};

struct verify {
	struct auditdb		 adb;
	struct trusted		*keys;
	size_t			 nkeys;
	struct checkpoint	*cps;	/* by size */
	size_t			 ncps;
	size_t			 nextcp;
	struct audit_merkle	 tree;
	uint8_t			 head[AUDIT_HASH_LEN];	/* the last hash */
	int64_t			 n;			/* records good */
	char			 keyid[AUDIT_KEYID_LEN + 1];	/* last's */
	int			 rotated;	/* the last was a rotation */
	struct trusted		 next;		/* to this key */
	sqlite3_stmt		*by_seq;
	sqlite3_stmt		*by_hash;
	struct verify_result	*res;
};

__attribute__((__format__(printf, 4, 5)))
static int
fail(struct verify *v, int64_t seq, const char *kind, const char *fmt, ...)
{
	va_list	 ap;

	v->res->status = EXIT_TAMPERED;
	v->res->has_bad = 1;
	v->res->first_bad = seq;
	v->res->kind = kind;
	va_start(ap, fmt);
	vsnprintf(v->res->error, sizeof(v->res->error), fmt, ap);
	va_end(ap);
	return -1;
}

__attribute__((__format__(printf, 2, 3)))
static int
unverified(struct verify *v, const char *fmt, ...)
{
	va_list	 ap;

	v->res->status = EXIT_UNVERIFIED;
	v->res->kind = "error";
	va_start(ap, fmt);
	vsnprintf(v->res->error, sizeof(v->res->error), fmt, ap);
	va_end(ap);
	return -1;
}

static int
dberror(struct verify *v)
{
	return unverified(v, "%s: %s", v->adb.path,
	    sqlite3_errmsg(v->adb.db));
}

/* --- Trusted keys ----------------------------------------------------- */

static const struct trusted *
key_find(const struct verify *v, const char *keyid)
{
	size_t	 i;

	for (i = 0; i < v->nkeys; i++)
		if (strcmp(v->keys[i].keyid, keyid) == 0)
			return &v->keys[i];
	return NULL;
}

static int
key_add(struct verify *v, const char *path, char *why, size_t len)
{
	struct trusted	 k;

	if (audit_key_read_public(path, k.pk, why, len) == -1)
		return -1;
	audit_keyid(k.pk, k.keyid);
	if (key_find(v, k.keyid) != NULL)
		return 0;
	v->keys = xreallocarray(v->keys, v->nkeys + 1, sizeof(*v->keys));
	v->keys[v->nkeys++] = k;
	return 0;
}

/* audit.pub and audit.pub.KEYID: the current key and the rotated out. */
static int
key_file_name(const char *name)
{
	const char	*id;

	if (strcmp(name, AUDIT_PUB_FILE) == 0)
		return 1;
	if (strncmp(name, AUDIT_PUB_FILE ".", sizeof(AUDIT_PUB_FILE)) != 0)
		return 0;
	id = name + sizeof(AUDIT_PUB_FILE);
	return strlen(id) == AUDIT_KEYID_LEN &&
	    strspn(id, "0123456789abcdef") == AUDIT_KEYID_LEN;
}

static int
keys_from_dir(struct verify *v)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], why[PATH_MAX + 64];

	if ((d = opendir(v->adb.dir)) == NULL)
		return unverified(v, "%s: cannot list the public keys: %s",
		    v->adb.dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!key_file_name(de->d_name))
			continue;
		if (str_fmt(path, sizeof(path), "%s/%s", v->adb.dir,
		    de->d_name) == -1 || key_add(v, path, why,
		    sizeof(why)) == -1)
			warnx("%s/%s: ignored: %s", v->adb.dir, de->d_name,
			    why);
	}
	closedir(d);
	return 0;
}

/* --- Checkpoints ------------------------------------------------------ */

static int
cp_cmp(const void *a, const void *b)
{
	const struct checkpoint	*x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->given - y->given;
}

static void
cp_add(struct verify *v, const struct checkpoint *cp)
{
	v->cps = xreallocarray(v->cps, v->ncps + 1, sizeof(*v->cps));
	v->cps[v->ncps++] = *cp;
}

/* The word at p, up to a blank or stop, into buf; -1 if it does not fit. */
static int
cp_word(const char *p, int stop, char *buf, size_t len)
{
	size_t	 n;

	for (n = 0; p[n] != '\0' && p[n] != stop && p[n] != ' ' &&
	    p[n] != '\t' && p[n] != '\n'; n++)
		;
	if (n >= len)
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

/* The value of "key=" in a line of words, or NULL. */
static const char *
cp_field(const char *line, const char *key)
{
	const char	*p = line;
	size_t		 n = strlen(key);

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
		    p[n] == '=')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

/*
 * A checkpoint kept elsewhere: "SIZE:ROOT" as mcpctl audit anchor prints
 * it (what follows a blank is ignored), or a checkpoint line of
 * mcp-auditd's log as it is, "... size=N root=HEX time=NS ...".
 */
static int
cp_parse(const char *arg, struct checkpoint *cp)
{
	const char	*size, *root, *t;
	char		 num[32], hex[AUDIT_HASH_LEN * 2 + 2];
	uint64_t	 n, tn;

	memset(cp, 0, sizeof(*cp));
	if ((size = cp_field(arg, "size")) != NULL) {
		if ((root = cp_field(arg, "root")) == NULL)
			return -1;
		if ((t = cp_field(arg, "time")) != NULL) {
			if (cp_word(t, ' ', num, sizeof(num)) == -1 ||
			    str_to_u64(num, 0, INT64_MAX, &tn) != NULL)
				return -1;
			cp->time = (int64_t)tn;
			cp->has_time = 1;
		}
	} else {
		size = arg + strspn(arg, " \t\n");
		if ((root = strchr(size, ':')) == NULL)
			return -1;
		root++;
	}
	if (cp_word(size, ':', num, sizeof(num)) == -1 ||
	    cp_word(root, ' ', hex, sizeof(hex)) == -1 ||
	    str_to_u64(num, 1, INT64_MAX, &n) != NULL ||
	    audit_unhex(hex, cp->root, sizeof(cp->root)) == -1)
		return -1;
	cp->size = (int64_t)n;
	cp->given = 1;
	return 0;
}

static int
cps_load(struct verify *v)
{
	sqlite3_stmt		*st;
	struct checkpoint	 cp;
	const char		*keyid;
	int			 rc, ok;

	if (sqlite3_prepare_v2(v->adb.db, "SELECT size, time, root, keyid, "
	    "sig FROM checkpoints ORDER BY size", -1, &st, NULL) != SQLITE_OK)
		return dberror(v);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&cp, 0, sizeof(cp));
		cp.size = sqlite3_column_int64(st, 0);
		cp.time = sqlite3_column_int64(st, 1);
		ok = sqlite3_column_bytes(st, 2) == AUDIT_HASH_LEN &&
		    sqlite3_column_bytes(st, 4) == AUDIT_SIG_LEN;
		if (ok) {
			memcpy(cp.root, sqlite3_column_blob(st, 2),
			    AUDIT_HASH_LEN);
			memcpy(cp.sig, sqlite3_column_blob(st, 4),
			    AUDIT_SIG_LEN);
		}
		keyid = (const char *)sqlite3_column_text(st, 3);
		cp.sizes_ok = ok && keyid != NULL &&
		    str_copy(cp.keyid, keyid, sizeof(cp.keyid)) == 0;
		cp_add(v, &cp);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return dberror(v);
	return 0;
}

static int
cp_check(struct verify *v, const struct checkpoint *cp,
    const uint8_t root[AUDIT_HASH_LEN])
{
	const struct trusted	*k;
	uint8_t			 h[AUDIT_HASH_LEN];
	long long		 size = (long long)cp->size;

	if (!cp->given) {
		if (!cp->sizes_ok)
			return fail(v, cp->size, "checkpoint", "checkpoint "
			    "%lld is malformed (a field of the wrong size)",
			    size);
		if ((k = key_find(v, cp->keyid)) == NULL)
			return fail(v, cp->size, "checkpoint", "checkpoint "
			    "%lld is signed by key %s, which is not trusted",
			    size, cp->keyid);
		audit_checkpoint_hash((uint64_t)cp->size, cp->root, cp->time,
		    h);
		if (audit_verify_hash(h, cp->sig, k->pk) == -1)
			return fail(v, cp->size, "checkpoint", "checkpoint "
			    "%lld has a bad signature: it was modified", size);
	}
	if (root == NULL)
		return fail(v, v->n + 1, "truncated", "checkpoint %lld%s "
		    "covers records 1..%lld, but the log ends at %lld: "
		    "records %lld..%lld are missing (truncated)", size,
		    cp->given ? " (given with -c)" : "", size,
		    (long long)v->n, (long long)v->n + 1, size);
	if (memcmp(root, cp->root, AUDIT_HASH_LEN) != 0)
		return fail(v, cp->size, "checkpoint-mismatch", "%s %lld does "
		    "not match records 1..%lld: they are not the records it "
		    "was made for", cp->given ? "the checkpoint given with -c "
		    "for size" : "checkpoint", size, size);
	v->res->checkpoints++;
	if (!cp->given) {
		v->res->has_last_checkpoint = 1;
		v->res->last_checkpoint = (uint64_t)cp->size;
		v->res->last_checkpoint_time = cp->time;
	} else if (!v->res->anchored ||
	    (uint64_t)cp->size >= v->res->anchor) {
		v->res->anchored = 1;
		v->res->anchor = (uint64_t)cp->size;
		v->res->anchor_has_time = cp->has_time;
		v->res->anchor_time = cp->time;
	}
	return 0;
}

/* Every checkpoint of the tree's size, now that it has it. */
static int
cps_at(struct verify *v)
{
	uint8_t	 root[AUDIT_HASH_LEN];

	audit_merkle_root(&v->tree, root);
	for (; v->nextcp < v->ncps && v->cps[v->nextcp].size <= v->n;
	    v->nextcp++) {
		if (v->cps[v->nextcp].size < v->n)
			return fail(v, v->cps[v->nextcp].size, "checkpoint",
			    "checkpoint %lld has a bad size",
			    (long long)v->cps[v->nextcp].size);
		if (cp_check(v, &v->cps[v->nextcp], root) == -1)
			return -1;
	}
	return 0;
}

/* After the last record: whatever is left covers records not there. */
static int
cps_beyond(struct verify *v)
{
	if (v->nextcp < v->ncps)
		return cp_check(v, &v->cps[v->nextcp], NULL);
	return 0;
}

/* --- Records ---------------------------------------------------------- */

static void
entry_hash(const struct record *r, int64_t seq, uint8_t h[AUDIT_HASH_LEN])
{
	struct audit_entry	 e;

	memset(&e, 0, sizeof(e));
	e.seq = (uint64_t)seq;
	e.time = r->time;
	e.role = r->role;
	e.pid = r->pid;
	e.uid = r->uid;
	e.tenant = r->tenant;
	e.sandbox = r->sandbox;
	e.event = r->event;
	e.outcome = r->outcome;
	e.body = (const uint8_t *)r->body;
	e.bodylen = r->bodylen;
	memcpy(e.prev, r->prev, sizeof(e.prev));
	(void)str_copy(e.keyid, r->keyid, sizeof(e.keyid));
	audit_entry_hash(&e, h);
}

/* The row at seq: 1, 0 if there is none, -1 on error. */
static int
row_at(struct verify *v, int64_t seq, struct record *r)
{
	int	 rc;

	sqlite3_reset(v->by_seq);
	sqlite3_bind_int64(v->by_seq, 1, seq);
	if ((rc = sqlite3_step(v->by_seq)) == SQLITE_ROW) {
		auditdb_row(v->by_seq, r);
		return 1;
	}
	return rc == SQLITE_DONE ? 0 : dberror(v);
}

/* Whether some row has this hash: 1, 0, or -1 on error. */
static int
hash_stored(struct verify *v, const uint8_t h[AUDIT_HASH_LEN])
{
	int	 rc;

	sqlite3_reset(v->by_hash);
	sqlite3_bind_blob(v->by_hash, 1, h, AUDIT_HASH_LEN, SQLITE_STATIC);
	if ((rc = sqlite3_step(v->by_hash)) == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : dberror(v);
}

/* The seq near n whose hash the record's content has, or 0. */
static int64_t
own_seq(const struct record *r, int64_t n)
{
	uint8_t	 h[AUDIT_HASH_LEN];
	int64_t	 s;

	for (s = n > ALT_WINDOW ? n - ALT_WINDOW : 1; s <= n + ALT_WINDOW;
	    s++) {
		if (s == n)
			continue;
		entry_hash(r, s, h);
		if (memcmp(h, r->hash, AUDIT_HASH_LEN) == 0)
			return s;
	}
	return 0;
}

/* Whether the record after n follows record n - 1 directly. */
static int
skipped(struct verify *v, int64_t n)
{
	struct record	 next;
	int		 found, rv;

	if ((found = row_at(v, n + 1, &next)) <= 0)
		return found;
	rv = next.sizes_ok && memcmp(next.prev, v->head, AUDIT_HASH_LEN) == 0;
	record_clear(&next);
	return rv;
}

/* A record at n whose content is record s's. */
static int
moved(struct verify *v, const struct record *r, int64_t n, int64_t s)
{
	struct record	 other;
	int		 found, copy, known;
	long long	 ln = (long long)n, ls = (long long)s;

	if ((found = row_at(v, s, &other)) == -1)
		return -1;
	copy = found && memcmp(other.hash, r->hash, AUDIT_HASH_LEN) == 0;
	if (found)
		record_clear(&other);
	if (copy)
		return fail(v, n, "inserted", "record %lld is a copy of record "
		    "%lld (inserted)", ln, ls);
	if ((known = hash_stored(v, r->prev)) == -1)
		return -1;
	if (known || (s == 1 && sodium_is_zero(r->prev, AUDIT_HASH_LEN)))
		return fail(v, n, "reordered", "record %lld holds what was "
		    "record %lld (records reordered)", ln, ls);
	if (s == n + 1)
		return fail(v, n, "deleted", "record %lld holds what was "
		    "record %lld: record %lld was deleted and the later ones "
		    "renumbered", ln, ls, ln);
	if (s > n)
		return fail(v, n, "deleted", "record %lld holds what was "
		    "record %lld: records %lld..%lld were deleted and the "
		    "later ones renumbered", ln, ls, ln, ls - 1);
	return fail(v, n, "inserted", "record %lld holds what was record "
	    "%lld: %lld record%s inserted before it and the later ones "
	    "renumbered", ln, ls, ln - ls, n - s > 1 ? "s were" : " was");
}

/* The record at n breaks the chain: say how. */
static int
broken(struct verify *v, const struct record *r, int64_t n, int content)
{
	int64_t		 s;
	int		 skip;
	long long	 ln = (long long)n;

	if (!content && (s = own_seq(r, n)) != 0)
		return moved(v, r, n, s);
	if ((skip = skipped(v, n)) == -1)
		return -1;
	if (skip)
		return fail(v, n, "inserted", "record %lld was inserted: "
		    "record %lld follows record %lld", ln, ln + 1, ln - 1);
	if (!content)
		return fail(v, n, "modified", "record %lld was modified: its "
		    "content does not match its hash", ln);
	return fail(v, n, "modified", "record %lld does not follow record "
	    "%lld (its prev is not that record's hash): one of them was "
	    "replaced", ln, ln - 1);
}

static int
b64_key(const char *s, uint8_t pk[AUDIT_PK_LEN])
{
	size_t	 n;

	return sodium_base642bin(pk, AUDIT_PK_LEN, s, strlen(s), NULL, &n,
	    NULL, sodium_base64_VARIANT_ORIGINAL) == 0 && n == AUDIT_PK_LEN ?
	    0 : -1;
}

struct rotation {
	char	*new_key, *new_keyid, *new_sig, *old_key, *old_keyid;
};

static void
rotation_parse(const struct record *r, struct rotation *rot)
{
	struct body_iter	 it;
	char			*k, *val, **slot;
	size_t			 vlen;

	memset(rot, 0, sizeof(*rot));
	body_iter_init(&it, r->body, r->bodylen);
	while (body_next(&it, &k, &val, &vlen)) {
		slot = strcmp(k, "new_key") == 0 ? &rot->new_key :
		    strcmp(k, "new_keyid") == 0 ? &rot->new_keyid :
		    strcmp(k, "new_sig") == 0 ? &rot->new_sig :
		    strcmp(k, "old_key") == 0 ? &rot->old_key :
		    strcmp(k, "old_keyid") == 0 ? &rot->old_keyid : NULL;
		free(k);
		if (slot != NULL && *slot == NULL)
			*slot = val;
		else
			free(val);
	}
}

static void
rotation_free(struct rotation *rot)
{
	free(rot->new_key);
	free(rot->new_keyid);
	free(rot->new_sig);
	free(rot->old_key);
	free(rot->old_keyid);
}

/* What a key-rotation record says, checked; NULL if it holds. */
static const char *
rotation_check(const struct record *r, const struct trusted *old,
    struct rotation *rot, struct trusted *next)
{
	uint8_t	 pk[AUDIT_PK_LEN], h[AUDIT_HASH_LEN], sig[AUDIT_SIG_LEN];
	char	 id[AUDIT_KEYID_LEN + 1];

	if (rot->new_key == NULL || rot->new_keyid == NULL ||
	    rot->new_sig == NULL || rot->old_key == NULL ||
	    rot->old_keyid == NULL)
		return "a field is missing";
	if (strcmp(rot->old_keyid, r->keyid) != 0)
		return "old_keyid is not the key that signed it";
	if (b64_key(rot->old_key, pk) == -1 ||
	    memcmp(pk, old->pk, AUDIT_PK_LEN) != 0)
		return "old_key is not the key that signed it";
	if (b64_key(rot->new_key, next->pk) == -1)
		return "new_key is not a public key";
	audit_keyid(next->pk, id);
	if (strcmp(id, rot->new_keyid) != 0)
		return "new_keyid is not new_key's id";
	memcpy(next->keyid, id, sizeof(next->keyid));
	if (audit_unhex(rot->new_sig, sig, sizeof(sig)) == -1)
		return "new_sig is not a signature";
	audit_rotation_hash(rot->old_keyid, next->pk, h);
	if (audit_verify_hash(h, sig, next->pk) == -1)
		return "new_sig does not verify under new_key";
	return NULL;
}

static int
rotation(struct verify *v, const struct record *r, const struct trusted *k)
{
	struct rotation	 rot;
	const char	*why;

	rotation_parse(r, &rot);
	why = rotation_check(r, k, &rot, &v->next);
	rotation_free(&rot);
	if (why != NULL)
		return fail(v, r->seq, "bad-rotation", "record %lld is a "
		    "key-rotation record that does not hold: %s",
		    (long long)r->seq, why);
	v->rotated = 1;
	return 0;
}

/* Which key may sign record n, given the one before. */
static int
key_allowed(struct verify *v, const struct record *r, int64_t n,
    const struct trusted *k)
{
	long long	 ln = (long long)n;

	if (v->n == 0)
		return 0;
	if (v->rotated) {
		if (strcmp(r->keyid, v->next.keyid) != 0 ||
		    memcmp(k->pk, v->next.pk, AUDIT_PK_LEN) != 0)
			return fail(v, n, "key-change", "record %lld is signed "
			    "by key %s, but record %lld rotated from %s to %s",
			    ln, r->keyid, ln - 1, v->keyid, v->next.keyid);
		return 0;
	}
	if (strcmp(r->keyid, v->keyid) != 0)
		return fail(v, n, "key-change", "record %lld is signed by key "
		    "%s, but record %lld by %s, with no key-rotation record "
		    "between them", ln, r->keyid, ln - 1, v->keyid);
	return 0;
}

static void
key_used(struct verify *v, const char *keyid)
{
	struct verify_result	*res = v->res;
	size_t			 i;

	for (i = 0; i < res->nkeys; i++)
		if (strcmp(res->keys[i], keyid) == 0)
			return;
	res->keys = xreallocarray(res->keys, res->nkeys + 1,
	    sizeof(*res->keys));
	(void)str_copy(res->keys[res->nkeys++], keyid, sizeof(*res->keys));
}

static int
record_check(struct verify *v, const struct record *r)
{
	const struct trusted	*k;
	uint8_t			 h[AUDIT_HASH_LEN];
	int64_t			 n = v->n + 1;
	int			 link, content, skip;
	long long		 ln = (long long)n;

	if (r->seq > n + 1)
		return fail(v, n, "deleted", "records %lld..%lld are missing "
		    "(deleted): seq %lld follows %lld", ln,
		    (long long)r->seq - 1, (long long)r->seq, ln - 1);
	if (r->seq > n)
		return fail(v, n, "deleted", "record %lld is missing "
		    "(deleted): seq %lld follows %lld", ln, (long long)r->seq,
		    ln - 1);
	if (r->seq < n)
		return fail(v, r->seq, "inserted", "record %lld is out of "
		    "sequence (inserted)", (long long)r->seq);
	if (!r->sizes_ok)
		return fail(v, n, "modified", "record %lld was modified: a "
		    "field has the wrong size", ln);
	entry_hash(r, n, h);
	content = memcmp(h, r->hash, AUDIT_HASH_LEN) == 0;
	link = memcmp(r->prev, v->head, AUDIT_HASH_LEN) == 0;
	if (!content || !link)
		return broken(v, r, n, content);
	if ((k = key_find(v, r->keyid)) == NULL)
		return fail(v, n, "untrusted-key", "record %lld is signed by "
		    "key %s, which is not trusted", ln, r->keyid);
	if (audit_verify_hash(r->hash, r->sig, k->pk) == -1) {
		if ((skip = skipped(v, n)) == -1)
			return -1;
		return fail(v, n, skip ? "inserted" : "bad-signature",
		    "record %lld has a bad signature%s", ln, skip ?
		    ", and the record after it follows the one before it "
		    "(inserted)" : ": it was modified, or forged");
	}
	if (key_allowed(v, r, n, k) == -1)
		return -1;
	v->rotated = 0;
	if (strcmp(r->event, "key-rotation") == 0 && rotation(v, r, k) == -1)
		return -1;
	memcpy(v->head, r->hash, AUDIT_HASH_LEN);
	audit_merkle_add(&v->tree, r->hash, AUDIT_HASH_LEN);
	(void)str_copy(v->keyid, r->keyid, sizeof(v->keyid));
	key_used(v, r->keyid);
	v->n = n;
	v->res->records = (uint64_t)n;
	v->res->last_time = r->time;
	return cps_at(v);
}

static int
walk(struct verify *v)
{
	sqlite3_stmt	*st;
	struct record	 r;
	char		*sql;
	int		 rc, bad = 0;

	xasprintf(&sql, "SELECT %s FROM records ORDER BY seq",
	    auditdb_columns);
	rc = sqlite3_prepare_v2(v->adb.db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return dberror(v);
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		auditdb_row(st, &r);
		bad = record_check(v, &r) == -1;
		record_clear(&r);
	}
	sqlite3_finalize(st);
	if (bad)
		return -1;
	if (rc != SQLITE_DONE)
		return dberror(v);
	return cps_beyond(v);
}

static int
prepare(struct verify *v)
{
	char	*sql;
	int	 rc;

	xasprintf(&sql, "SELECT %s FROM records WHERE seq = ?",
	    auditdb_columns);
	rc = sqlite3_prepare_v2(v->adb.db, sql, -1, &v->by_seq, NULL);
	free(sql);
	if (rc != SQLITE_OK || sqlite3_prepare_v2(v->adb.db, "SELECT seq "
	    "FROM records WHERE hash = ? LIMIT 1", -1, &v->by_hash, NULL) !=
	    SQLITE_OK)
		return dberror(v);
	return 0;
}

/* One read transaction: what auditd appends meanwhile is not seen. */
static void
verify_db(struct verify *v, const char *dbpath, char **keyfiles,
    size_t nkeyfiles)
{
	char	 why[PATH_MAX + 256];
	size_t	 i;

	if (auditdb_open(&v->adb, dbpath, why, sizeof(why)) == -1) {
		unverified(v, "%s", why);
		return;
	}
	for (i = 0; i < nkeyfiles; i++)
		if (key_add(v, keyfiles[i], why, sizeof(why)) == -1) {
			unverified(v, "%s", why);
			return;
		}
	if (nkeyfiles == 0 && keys_from_dir(v) == -1)
		return;
	if (v->nkeys == 0) {
		unverified(v, "no trusted public key: none in %s, and none "
		    "given with -k", v->adb.dir);
		return;
	}
	if (sqlite3_exec(v->adb.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    prepare(v) == -1 || cps_load(v) == -1) {
		if (v->res->status == 0)
			dberror(v);
		return;
	}
	if (v->ncps > 0)
		qsort(v->cps, v->ncps, sizeof(*v->cps), cp_cmp);
	audit_merkle_init(&v->tree);
	if (cps_at(v) == 0 && walk(v) == 0) {
		audit_merkle_root(&v->tree, v->res->root);
		if (!v->res->anchored)
			v->res->status = EXIT_UNANCHORED;
	}
	sqlite3_exec(v->adb.db, "COMMIT", NULL, NULL, NULL);
}

static void
verify_free(struct verify *v)
{
	sqlite3_finalize(v->by_seq);
	sqlite3_finalize(v->by_hash);
	auditdb_close(&v->adb);
	free(v->keys);
	free(v->cps);
}

static void
verify_warn_unanchored(const struct verify_result *res)
{
	char	 t[64];

	warnx("WARNING: not anchored: no checkpoint kept elsewhere was given "
	    "with -c, so records cut from the end of the log, with the "
	    "checkpoints past them, would go unnoticed");
	if (res->records > 0) {
		time_format(res->last_time, 3, t, sizeof(t));
		warnx("last record: %llu, at %s",
		    (unsigned long long)res->records, t);
	} else
		warnx("last record: none");
	if (res->has_last_checkpoint) {
		time_format(res->last_checkpoint_time, 3, t, sizeof(t));
		warnx("last checkpoint: records 1..%llu, made %s",
		    (unsigned long long)res->last_checkpoint, t);
	} else
		warnx("last checkpoint: none");
	warnx("keep mcp-auditd's \"audit checkpoint\" log lines, or what "
	    "\"mcpctl audit anchor\" prints, off this machine, and pass one "
	    "with -c");
}

/*
 * A host's exported log for verify over several: a directory holding its
 * audit.db, its public keys and, if the collector kept them, the
 * checkpoint lines its journal shipped ("checkpoints", one a line, as
 * -c takes them); or the database file itself, its keys beside it.
 */
#define HOST_DB		"audit.db"
#define HOST_CPS	"checkpoints"

static int
host_checkpoints(struct verify *v, const char *dir)
{
	FILE		*f;
	struct checkpoint cp;
	char		 path[PATH_MAX], line[1024];
	int		 n = 0;

	if (str_fmt(path, sizeof(path), "%s/" HOST_CPS, dir) == -1)
		return unverified(v, "%s: path too long", dir);
	if ((f = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : unverified(v, "%s: %s", path,
		    strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		if (cp_parse(line, &cp) == -1) {
			fclose(f);
			return unverified(v, "%s:%d: not a checkpoint line",
			    path, n);
		}
		cp_add(v, &cp);
	}
	fclose(f);
	return 0;
}

/* Worst first: a log tampered with, one unread, one not anchored. */
static int
status_rank(int status)
{
	switch (status) {
	case EXIT_TAMPERED:
		return 3;
	case EXIT_UNVERIFIED:
		return 2;
	case EXIT_UNANCHORED:
		return 1;
	default:
		return 0;
	}
}

/*
 * verify PATH...: each host's log on its own, with its own keys and
 * checkpoints, reported host by host; the status is the worst of them.
 */
static int
verify_hosts(struct mcpctl *ctx, char **paths, int npaths, int quiet)
{
	struct verify		 v;
	struct verify_result	 res;
	struct stat		 st;
	char			 db[PATH_MAX], dir[PATH_MAX], *slash;
	const char		*name;
	int			 i, worst = 0, count[4] = { 0, 0, 0, 0 };

	for (i = 0; i < npaths; i++) {
		memset(&v, 0, sizeof(v));
		memset(&res, 0, sizeof(res));
		v.res = &res;
		res.path = paths[i];
		(void)str_copy(dir, paths[i], sizeof(dir));
		while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
			dir[strlen(dir) - 1] = '\0';
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (str_fmt(db, sizeof(db), "%s/" HOST_DB, dir) == -1)
				unverified(&v, "%s: path too long", dir);
		} else {
			(void)str_copy(db, dir, sizeof(db));
			if ((slash = strrchr(dir, '/')) != NULL)
				*slash = '\0';
			else
				(void)str_copy(dir, ".", sizeof(dir));
		}
		/* The host is named by its directory. */
		name = strrchr(dir, '/') != NULL ? strrchr(dir, '/') + 1 : dir;
		res.host = name;
		if (res.status == 0 && host_checkpoints(&v, dir) == 0)
			verify_db(&v, db, NULL, 0);
		if (res.status == EXIT_UNVERIFIED)
			warnx("host %s: cannot verify: %s", name, res.error);
		if (!quiet || (res.status != 0 && res.status != EXIT_UNANCHORED))
			ctx->out->verify(&res);
		count[status_rank(res.status)]++;
		if (status_rank(res.status) > status_rank(worst))
			worst = res.status;
		verify_free(&v);
		free(res.keys);
	}
	if (!quiet || worst != 0)
		ctx->out->verify_hosts(npaths, count[0], count[3], count[2],
		    count[1]);
	return worst;
}

/* verify, or with anchor set, anchor: the same walk, then each's output. */
static int
verify_main(struct mcpctl *ctx, int argc, char **argv, int anchor)
{
	struct verify		 v;
	struct verify_result	 res;
	struct checkpoint	 cp;
	const char		*cmd = anchor ? "anchor" : "verify";
	char			**keyfiles = NULL;
	size_t			 nkeyfiles = 0;
	int			 ch, quiet = 0;

	memset(&v, 0, sizeof(v));
	memset(&res, 0, sizeof(res));
	v.res = &res;
	optind = 0;
	while ((ch = getopt(argc, argv, anchor ? "+c:k:" : "+c:k:q")) != -1) {
		switch (ch) {
		case 'c':
			if (cp_parse(optarg, &cp) == -1) {
				warnx("-c %s: not SIZE:ROOT (a size and 64 hex "
				    "digits), nor a checkpoint line of "
				    "mcp-auditd's log", optarg);
				usage_cmd(cmd);
			}
			cp_add(&v, &cp);
			break;
		case 'k':
			keyfiles = xreallocarray(keyfiles, nkeyfiles + 1,
			    sizeof(*keyfiles));
			keyfiles[nkeyfiles++] = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			usage_cmd(cmd);
		}
	}
	if (optind != argc && !anchor) {
		if (nkeyfiles > 0 || v.ncps > 0) {
			warnx("with hosts' logs, each directory holds its own "
			    "keys and checkpoints: no -k or -c");
			usage_cmd(cmd);
		}
		free(v.cps);
		return verify_hosts(ctx, argv + optind, argc - optind, quiet);
	}
	if (optind != argc)
		usage_cmd(cmd);
	mcpctl_dbpath(ctx, EXIT_UNVERIFIED);
	verify_db(&v, ctx->dbpath, keyfiles, nkeyfiles);
	if (anchor && res.status == EXIT_UNANCHORED)
		res.status = 0;
	if (anchor && res.status == 0 && res.records == 0)
		unverified(&v, "the log has no record to anchor");
	if (res.status == EXIT_UNVERIFIED)
		warnx("cannot verify: %s", res.error);
	if (anchor && res.status == 0)
		ctx->out->anchor(&res);
	else if (!quiet || (res.status != 0 && res.status != EXIT_UNANCHORED))
		ctx->out->verify(&res);
	if (res.status == EXIT_UNANCHORED)
		verify_warn_unanchored(&res);
	verify_free(&v);
	free(keyfiles);
	free(res.keys);
	return res.status;
}

int
audit_verify(struct mcpctl *ctx, int argc, char **argv)
{
	return verify_main(ctx, argc, argv, 0);
}

int
audit_anchor(struct mcpctl *ctx, int argc, char **argv)
{
	return verify_main(ctx, argc, argv, 1);
}
