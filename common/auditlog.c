/*
 * The audit log's cryptography: see auditlog.h.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "auditlog.h"
#include "util.h"

#define KEY_MAGIC_PUB		"mcpd-audit-ed25519"
#define KEY_MAGIC_SECRET	"mcpd-audit-ed25519-secret"

static void
put_u64(crypto_hash_sha256_state *st, uint64_t v)
{
	uint8_t	 b[8];
	int	 i;

	for (i = 7; i >= 0; i--) {
		b[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
	crypto_hash_sha256_update(st, b, sizeof(b));
}

static void
put_field(crypto_hash_sha256_state *st, const void *p, size_t len)
{
	put_u64(st, len);
	crypto_hash_sha256_update(st, p, len);
}

static void
put_str(crypto_hash_sha256_state *st, const char *s)
{
	put_field(st, s, strlen(s));
}

static void
put_int(crypto_hash_sha256_state *st, uint64_t v)
{
	put_u64(st, 8);
	put_u64(st, v);
}

void
audit_entry_hash(const struct audit_entry *e, uint8_t out[AUDIT_HASH_LEN])
{
	crypto_hash_sha256_state	 st;

	crypto_hash_sha256_init(&st);
	put_str(&st, AUDIT_DOMAIN_RECORD);
	put_int(&st, e->seq);
	put_int(&st, (uint64_t)e->time);
	put_str(&st, e->role);
	put_int(&st, (uint64_t)e->pid);
	put_int(&st, (uint64_t)e->uid);
	put_str(&st, e->tenant);
	put_str(&st, e->sandbox);
	put_str(&st, e->event);
	put_str(&st, e->outcome);
	put_field(&st, e->body, e->bodylen);
	put_field(&st, e->prev, AUDIT_HASH_LEN);
	put_str(&st, e->keyid);
	crypto_hash_sha256_final(&st, out);
}

void
audit_hex(const uint8_t *p, size_t len, char *out)
{
	sodium_bin2hex(out, len * 2 + 1, p, len);
}

int
audit_unhex(const char *s, uint8_t *out, size_t len)
{
	size_t	 n;

	if (strlen(s) != len * 2 || sodium_hex2bin(out, len, s, len * 2,
	    NULL, &n, NULL) != 0 || n != len)
		return -1;
	return 0;
}

void
audit_keyid(const uint8_t pk[AUDIT_PK_LEN], char out[AUDIT_KEYID_LEN + 1])
{
	uint8_t	 h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, pk, AUDIT_PK_LEN);
	audit_hex(h, AUDIT_KEYID_LEN / 2, out);
}

/* What is signed: a domain prefix and a hash. */
static void
sig_message(const char *domain, const uint8_t hash[AUDIT_HASH_LEN],
    uint8_t out[AUDIT_HASH_LEN])
{
	crypto_hash_sha256_state	 st;

	crypto_hash_sha256_init(&st);
	put_str(&st, domain);
	put_field(&st, hash, AUDIT_HASH_LEN);
	crypto_hash_sha256_final(&st, out);
}

void
audit_sign_hash(const uint8_t hash[AUDIT_HASH_LEN],
    const uint8_t sk[AUDIT_SK_LEN], uint8_t sig[AUDIT_SIG_LEN])
{
	uint8_t	 m[AUDIT_HASH_LEN];

	sig_message(AUDIT_DOMAIN_SIG, hash, m);
	crypto_sign_detached(sig, NULL, m, sizeof(m), sk);
}

int
audit_verify_hash(const uint8_t hash[AUDIT_HASH_LEN],
    const uint8_t sig[AUDIT_SIG_LEN], const uint8_t pk[AUDIT_PK_LEN])
{
	uint8_t	 m[AUDIT_HASH_LEN];

	sig_message(AUDIT_DOMAIN_SIG, hash, m);
	return crypto_sign_verify_detached(sig, m, sizeof(m), pk) == 0 ? 0 :
	    -1;
}

void
audit_checkpoint_hash(uint64_t size, const uint8_t root[AUDIT_HASH_LEN],
    int64_t time, uint8_t out[AUDIT_HASH_LEN])
{
	crypto_hash_sha256_state	 st;

	crypto_hash_sha256_init(&st);
	put_str(&st, AUDIT_DOMAIN_CHECKPOINT);
	put_int(&st, size);
	put_field(&st, root, AUDIT_HASH_LEN);
	put_int(&st, (uint64_t)time);
	crypto_hash_sha256_final(&st, out);
}

void
audit_rotation_hash(const char *oldkeyid, const uint8_t newpk[AUDIT_PK_LEN],
    uint8_t out[AUDIT_HASH_LEN])
{
	crypto_hash_sha256_state	 st;

	crypto_hash_sha256_init(&st);
	put_str(&st, AUDIT_DOMAIN_ROTATION);
	put_str(&st, oldkeyid);
	put_field(&st, newpk, AUDIT_PK_LEN);
	crypto_hash_sha256_final(&st, out);
}

/* --- RFC 9162 Merkle tree hash ------------------------------------------ */

void
audit_merkle_init(struct audit_merkle *m)
{
	memset(m, 0, sizeof(*m));
}

static void
merkle_node(const uint8_t left[AUDIT_HASH_LEN],
    const uint8_t right[AUDIT_HASH_LEN], uint8_t out[AUDIT_HASH_LEN])
{
	crypto_hash_sha256_state	 st;
	uint8_t				 one = 0x01;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &one, 1);
	crypto_hash_sha256_update(&st, left, AUDIT_HASH_LEN);
	crypto_hash_sha256_update(&st, right, AUDIT_HASH_LEN);
	crypto_hash_sha256_final(&st, out);
}

void
audit_merkle_add(struct audit_merkle *m, const uint8_t *entry, size_t len)
{
	crypto_hash_sha256_state	 st;
	uint8_t				 h[AUDIT_HASH_LEN], zero = 0x00;
	int				 i;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &zero, 1);
	crypto_hash_sha256_update(&st, entry, len);
	crypto_hash_sha256_final(&st, h);
	/* Like adding one to a binary counter: complete pairs merge. */
	for (i = 0; i < AUDIT_MERKLE_LEVELS && (m->size >> i & 1); i++)
		merkle_node(m->node[i], h, h);
	memcpy(m->node[i], h, AUDIT_HASH_LEN);
	m->size++;
}

void
audit_merkle_root(const struct audit_merkle *m, uint8_t out[AUDIT_HASH_LEN])
{
	uint8_t	 r[AUDIT_HASH_LEN];
	int	 i, have = 0;

	if (m->size == 0) {
		crypto_hash_sha256(out, (const uint8_t *)"", 0);
		return;
	}
	/* The smallest subtree is the rightmost: fold leftwards. */
	for (i = 0; i < AUDIT_MERKLE_LEVELS; i++) {
		if (!(m->size >> i & 1))
			continue;
		if (!have) {
			memcpy(r, m->node[i], AUDIT_HASH_LEN);
			have = 1;
		} else
			merkle_node(m->node[i], r, r);
	}
	memcpy(out, r, AUDIT_HASH_LEN);
}

/* --- Key files ------------------------------------------------------- */

static int
key_read(const char *path, const char *magic, uint8_t *key, size_t len,
    char *keyid, char *why, size_t whylen)
{
	FILE	*fp;
	char	 line[512], m[64], id[AUDIT_KEYID_LEN + 2], b64[200];
	size_t	 n;

	if ((fp = fopen(path, "re")) == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fgets(line, sizeof(line), fp) == NULL ||
	    sscanf(line, "%63s %17s %199s", m, id, b64) != 3 ||
	    strcmp(m, magic) != 0 || strlen(id) != AUDIT_KEYID_LEN ||
	    sodium_base642bin(key, len, b64, strlen(b64), NULL, &n, NULL,
	    sodium_base64_VARIANT_ORIGINAL) != 0 || n != len) {
		fclose(fp);
		snprintf(why, whylen, "%s: not a %s key file", path, magic);
		return -1;
	}
	fclose(fp);
	str_copy(keyid, id, AUDIT_KEYID_LEN + 1);
	return 0;
}

/* The id a key file gives is the one its public key has. */
static int
key_id_matches(const char *path, const char *id,
    const uint8_t pk[AUDIT_PK_LEN], char *why, size_t whylen)
{
	char	 want[AUDIT_KEYID_LEN + 1];

	audit_keyid(pk, want);
	if (strcmp(id, want) == 0)
		return 0;
	snprintf(why, whylen, "%s: the key id does not match the key", path);
	return -1;
}

int
audit_key_read_secret(const char *path, uint8_t sk[AUDIT_SK_LEN],
    uint8_t pk[AUDIT_PK_LEN], char *why, size_t whylen)
{
	char	 id[AUDIT_KEYID_LEN + 1];

	if (key_read(path, KEY_MAGIC_SECRET, sk, AUDIT_SK_LEN, id, why,
	    whylen) == -1)
		return -1;
	crypto_sign_ed25519_sk_to_pk(pk, sk);
	return key_id_matches(path, id, pk, why, whylen);
}

int
audit_key_read_public(const char *path, uint8_t pk[AUDIT_PK_LEN],
    char *why, size_t whylen)
{
	char	 id[AUDIT_KEYID_LEN + 1];

	if (key_read(path, KEY_MAGIC_PUB, pk, AUDIT_PK_LEN, id, why,
	    whylen) == -1)
		return -1;
	return key_id_matches(path, id, pk, why, whylen);
}

static int
key_write(const char *path, mode_t mode, const char *magic,
    const char *keyid, const uint8_t *key, size_t len, char *why,
    size_t whylen)
{
	char	 b64[200], line[300];
	int	 fd, n;

	sodium_bin2base64(b64, sizeof(b64), key, len,
	    sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(line, sizeof(line), "%s %s %s\n", magic, keyid, b64);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) == -1) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* The mode asked for, whatever the umask. */
	if (fchmod(fd, mode) == -1 || write(fd, line, (size_t)n) != n ||
	    fsync(fd) == -1 ||
	    close(fd) == -1) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	sodium_memzero(line, sizeof(line));
	sodium_memzero(b64, sizeof(b64));
	return 0;
}

int
audit_key_generate(const char *secpath, const char *pubpath, char *why,
    size_t whylen)
{
	uint8_t	 pk[AUDIT_PK_LEN], sk[AUDIT_SK_LEN];
	char	 id[AUDIT_KEYID_LEN + 1];
	int	 rv = -1;

	crypto_sign_keypair(pk, sk);
	audit_keyid(pk, id);
	if (key_write(secpath, 0600, KEY_MAGIC_SECRET, id, sk, sizeof(sk),
	    why, whylen) == 0) {
		if (key_write(pubpath, 0644, KEY_MAGIC_PUB, id, pk, sizeof(pk),
		    why, whylen) == 0)
			rv = 0;
		else
			unlink(secpath);
	}
	sodium_memzero(sk, sizeof(sk));
	return rv;
}
