/*
 * The audit log's cryptography, shared by mcp-auditd (which writes it) and
 * mcpctl (which verifies it): record hashes, the chain, Ed25519 signatures,
 * key files, and RFC 9162 Merkle tree roots for checkpoints.
 *
 * A record's hash is SHA-256 over a domain prefix and every field, each
 * length-prefixed (8 bytes, big-endian), in a fixed order: seq, time,
 * role, pid, uid, tenant, sandbox, event, outcome, body, prev (the hash of
 * record seq - 1, or 32 zero bytes for seq 1) and the signing key's id.
 * Integers are 8 bytes, big-endian, two's complement.  The signature is
 * Ed25519 over a second domain prefix and the hash.
 *
 * A checkpoint covers records 1..size: the RFC 9162 Merkle tree hash of
 * their record hashes (as leaves), signed over a third prefix, the size,
 * the root and the time.
 */
#ifndef MCPD_AUDITLOG_H
#define MCPD_AUDITLOG_H

#include <stddef.h>
#include <stdint.h>

#define AUDIT_HASH_LEN		32
#define AUDIT_SIG_LEN		64
#define AUDIT_PK_LEN		32
#define AUDIT_SK_LEN		64
#define AUDIT_KEYID_LEN		16	/* hex digits: SHA-256(pk)[0..7] */
#define AUDIT_MERKLE_LEVELS	64

#define AUDIT_DOMAIN_RECORD	"mcpd audit record v1"
#define AUDIT_DOMAIN_SIG	"mcpd audit signature v1"
#define AUDIT_DOMAIN_CHECKPOINT	"mcpd audit checkpoint v1"
#define AUDIT_DOMAIN_ROTATION	"mcpd audit key rotation v1"

/* Key files beside the database. */
#define AUDIT_KEY_FILE		"audit.key"	/* the signing key, 0600 */
#define AUDIT_PUB_FILE		"audit.pub"	/* for verifiers */
#define AUDIT_KEY_NEXT		"audit.key.next" /* staged by keygen */

struct audit_entry {
	uint64_t	 seq;
	int64_t		 time;		/* ns since the epoch */
	const char	*role;
	int64_t		 pid;
	int64_t		 uid;
	const char	*tenant;
	const char	*sandbox;
	const char	*event;
	const char	*outcome;
	const uint8_t	*body;
	size_t		 bodylen;
	uint8_t		 prev[AUDIT_HASH_LEN];
	char		 keyid[AUDIT_KEYID_LEN + 1];
};

void	 audit_entry_hash(const struct audit_entry *,
	    uint8_t [AUDIT_HASH_LEN]);

void	 audit_keyid(const uint8_t [AUDIT_PK_LEN], char [AUDIT_KEYID_LEN + 1]);
void	 audit_sign_hash(const uint8_t [AUDIT_HASH_LEN],
	    const uint8_t [AUDIT_SK_LEN], uint8_t [AUDIT_SIG_LEN]);
int	 audit_verify_hash(const uint8_t [AUDIT_HASH_LEN],
	    const uint8_t [AUDIT_SIG_LEN], const uint8_t [AUDIT_PK_LEN]);

/* What a checkpoint's signature covers. */
void	 audit_checkpoint_hash(uint64_t, const uint8_t [AUDIT_HASH_LEN],
	    int64_t, uint8_t [AUDIT_HASH_LEN]);

/*
 * A key rotation: the new key signs the old key's id and its own public
 * key, so that the record announcing it (signed by the old key) carries
 * both keys' signatures.
 */
void	 audit_rotation_hash(const char *, const uint8_t [AUDIT_PK_LEN],
	    uint8_t [AUDIT_HASH_LEN]);

/*
 * An RFC 9162 Merkle tree, appended to leaf by leaf: only the roots of
 * its complete subtrees are kept (one per bit of the size).
 */
struct audit_merkle {
	uint64_t	 size;
	uint8_t		 node[AUDIT_MERKLE_LEVELS][AUDIT_HASH_LEN];
};
void	 audit_merkle_init(struct audit_merkle *);
/* Append an entry (a record hash): its leaf is SHA-256(0x00 || entry). */
void	 audit_merkle_add(struct audit_merkle *, const uint8_t *, size_t);
/* The tree hash of all entries so far; the empty tree's is SHA-256(""). */
void	 audit_merkle_root(const struct audit_merkle *,
	    uint8_t [AUDIT_HASH_LEN]);

/*
 * Key files.  A public key file is one line, "mcpd-audit-ed25519 KEYID
 * BASE64"; a secret key file the same with the 64-byte secret key.
 * 0, or -1 with the reason in why.
 */
int	 audit_key_read_secret(const char *, uint8_t [AUDIT_SK_LEN],
	    uint8_t [AUDIT_PK_LEN], char *, size_t);
int	 audit_key_read_public(const char *, uint8_t [AUDIT_PK_LEN],
	    char *, size_t);
/* A new key pair: secret file mode 0600, public file 0644, never over an
 * existing file. */
int	 audit_key_generate(const char *, const char *, char *, size_t);

void	 audit_hex(const uint8_t *, size_t, char *);
int	 audit_unhex(const char *, uint8_t *, size_t);

#endif
