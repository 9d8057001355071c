/*
 * The audit log's cryptography (common/auditlog.c): record hashes cover
 * every field, signatures verify only for their key and hash, key files
 * round-trip and refuse what they are not, and the incremental Merkle
 * root is RFC 9162's tree hash, checked against a direct recursive
 * computation for every size up to 300.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "auditlog.h"
#include "../tap.h"

/* RFC 9162 section 2.1.1, as written: MTH(D[n]). */
static void
mth(uint8_t (*leaves)[AUDIT_HASH_LEN], size_t n, uint8_t out[32])
{
	crypto_hash_sha256_state	 st;
	uint8_t				 l[32], r[32], b;
	size_t				 k;

	if (n == 0) {
		crypto_hash_sha256(out, (const uint8_t *)"", 0);
		return;
	}
	if (n == 1) {
		b = 0x00;
		crypto_hash_sha256_init(&st);
		crypto_hash_sha256_update(&st, &b, 1);
		crypto_hash_sha256_update(&st, leaves[0], AUDIT_HASH_LEN);
		crypto_hash_sha256_final(&st, out);
		return;
	}
	for (k = 1; k * 2 < n; k *= 2)
		;
	mth(leaves, k, l);
	mth(leaves + k, n - k, r);
	b = 0x01;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &b, 1);
	crypto_hash_sha256_update(&st, l, 32);
	crypto_hash_sha256_update(&st, r, 32);
	crypto_hash_sha256_final(&st, out);
}

static void
entry_init(struct audit_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->seq = 7;
	e->time = 1795276716678510137LL;
	e->role = "sandboxd";
	e->pid = 1234;
	e->uid = 0;
	e->tenant = "alice";
	e->sandbox = "0123456789abcdef0123456789abcdef";
	e->event = "run";
	e->outcome = "ok";
	e->body = (const uint8_t *)"exit=0\n";
	e->bodylen = 7;
	memset(e->prev, 0xab, sizeof(e->prev));
	strcpy(e->keyid, "0011223344556677");
}

static int
differs(const struct audit_entry *e, const uint8_t h[32])
{
	uint8_t	 h2[32];

	audit_entry_hash(e, h2);
	return memcmp(h, h2, 32) != 0;
}

static void
test_hash(void)
{
	struct audit_entry	 e;
	uint8_t			 h[32], h2[32];

	entry_init(&e);
	audit_entry_hash(&e, h);
	audit_entry_hash(&e, h2);
	ok(memcmp(h, h2, 32) == 0, "a record's hash is deterministic");
	entry_init(&e); e.seq = 8;
	ok(differs(&e, h), "the hash covers seq");
	entry_init(&e); e.time++;
	ok(differs(&e, h), "the hash covers the time");
	entry_init(&e); e.role = "mcpd";
	ok(differs(&e, h), "the hash covers the role");
	entry_init(&e); e.pid++;
	ok(differs(&e, h), "the hash covers the pid");
	entry_init(&e); e.uid = 1;
	ok(differs(&e, h), "the hash covers the uid");
	entry_init(&e); e.tenant = "bob";
	ok(differs(&e, h), "the hash covers the tenant");
	entry_init(&e); e.sandbox = "";
	ok(differs(&e, h), "the hash covers the sandbox");
	entry_init(&e); e.event = "exec";
	ok(differs(&e, h), "the hash covers the event");
	entry_init(&e); e.outcome = "failed";
	ok(differs(&e, h), "the hash covers the outcome");
	entry_init(&e); e.body = (const uint8_t *)"exit=1\n";
	ok(differs(&e, h), "the hash covers the body");
	entry_init(&e); e.prev[31] ^= 1;
	ok(differs(&e, h), "the hash covers prev");
	entry_init(&e); e.keyid[0] = '1';
	ok(differs(&e, h), "the hash covers the key id");
	/* Length prefixes: moving a byte across a field boundary shows. */
	entry_init(&e); e.tenant = "alic"; e.sandbox =
	    "e0123456789abcdef0123456789abcdef";
	ok(differs(&e, h), "field boundaries are part of the hash");
}

static void
test_sign(void)
{
	uint8_t	 pk[32], sk[64], pk2[32], sk2[64], h[32], sig[64];
	char	 id[AUDIT_KEYID_LEN + 1];

	crypto_sign_keypair(pk, sk);
	crypto_sign_keypair(pk2, sk2);
	randombytes_buf(h, sizeof(h));
	audit_sign_hash(h, sk, sig);
	ok(audit_verify_hash(h, sig, pk) == 0, "a signature verifies");
	ok(audit_verify_hash(h, sig, pk2) == -1,
	    "not under another key");
	h[0] ^= 1;
	ok(audit_verify_hash(h, sig, pk) == -1, "nor for another hash");
	audit_keyid(pk, id);
	ok(strlen(id) == AUDIT_KEYID_LEN && strspn(id, "0123456789abcdef") ==
	    AUDIT_KEYID_LEN, "a key id is 16 hex digits (%s)", id);
}

static void
test_keys(void)
{
	char	 dir[] = "/tmp/test_auditlog.XXXXXX", sec[128], pub[128];
	char	 why[256];
	uint8_t	 pk[32], sk[64], pk2[32];
	struct stat st;
	FILE	*fp;

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(sec, sizeof(sec), "%s/k", dir);
	snprintf(pub, sizeof(pub), "%s/k.pub", dir);
	umask(077);
	ok(audit_key_generate(sec, pub, why, sizeof(why)) == 0,
	    "a key pair is generated");
	ok(stat(sec, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "the secret key is 0600");
	ok(stat(pub, &st) == 0 && (st.st_mode & 0777) == 0644,
	    "the public key is 0644 whatever the umask");
	ok(audit_key_generate(sec, pub, why, sizeof(why)) == -1,
	    "an existing key is never overwritten (%s)", why);
	ok(audit_key_read_secret(sec, sk, pk, why, sizeof(why)) == 0 &&
	    audit_key_read_public(pub, pk2, why, sizeof(why)) == 0 &&
	    memcmp(pk, pk2, 32) == 0, "the files read back as one key pair");
	ok(audit_key_read_public(sec, pk2, why, sizeof(why)) == -1,
	    "a secret key file is not a public one");
	if ((fp = fopen(pub, "w")) != NULL) {
		fprintf(fp, "mcpd-audit-ed25519 0000000000000000 "
		    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
		fclose(fp);
	}
	ok(audit_key_read_public(pub, pk2, why, sizeof(why)) == -1,
	    "a key whose id is not its own is refused (%s)", why);
	unlink(sec);
	unlink(pub);
	rmdir(dir);
}

static void
test_merkle(void)
{
	struct audit_merkle	 m;
	uint8_t			 (*leaves)[AUDIT_HASH_LEN], want[32], got[32];
	size_t			 n, bad = 0;

	leaves = calloc(300, AUDIT_HASH_LEN);
	audit_merkle_init(&m);
	audit_merkle_root(&m, got);
	mth(leaves, 0, want);
	ok(memcmp(got, want, 32) == 0, "the empty tree's root");
	for (n = 1; n <= 300; n++) {
		randombytes_buf(leaves[n - 1], AUDIT_HASH_LEN);
		audit_merkle_add(&m, leaves[n - 1], AUDIT_HASH_LEN);
		audit_merkle_root(&m, got);
		mth(leaves, n, want);
		if (memcmp(got, want, 32) != 0) {
			diag("size %zu differs", n);
			bad++;
		}
	}
	ok(bad == 0, "the incremental root is RFC 9162's for sizes 1..300");
	free(leaves);
}

int
main(void)
{
	if (sodium_init() == -1)
		return 1;
	test_hash();
	test_sign();
	test_keys();
	test_merkle();
	return tap_done();
}
