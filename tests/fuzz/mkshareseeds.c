/*
 * The seeds of the share fuzz target (fuzz_share.c): tokens sealed with
 * its key ring, so that the fuzzer starts past the tag, and claims'
 * encodings, which it decodes and seals.  The nonces are random: the
 * token seeds change bytes from run to run, not what they reach.
 *
 *	mkshareseeds DIR	writes DIR/share/seed-*
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "fuzz_share.h"
#include "../../mcpd/share.h"

static const uint8_t	 key[32] = FUZZ_SHARE_KEY;
static const char	*outdir;

static void
save(const char *name, const void *p, size_t len)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/share", outdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		err(1, "%s", path);
	snprintf(path, sizeof(path), "%s/share/seed-%s", outdir, name);
	if ((f = fopen(path, "w")) == NULL || fwrite(p, 1, len, f) != len ||
	    fclose(f) == EOF)
		err(1, "%s", path);
}

static void
seed(const char *name, const char *tenant, const char *path,
    int64_t ctime_ns, int64_t expires)
{
	struct share_claim	 c;
	uint8_t			 enc[SHARE_CLAIM_MAX];
	char			 tok[SHARE_TOKEN_MAX + 1], file[64];
	size_t			 len;

	memset(&c, 0, sizeof(c));
	snprintf(c.tenant, sizeof(c.tenant), "%s", tenant);
	snprintf(c.sandbox, sizeof(c.sandbox), "%s",
	    "0123456789abcdef0123456789abcdef");
	snprintf(c.path, sizeof(c.path), "%s", path);
	c.ino = 1234567;
	c.size = 4096;
	c.ctime_ns = ctime_ns;
	c.expires = expires;
	if (share_claim_encode(&c, enc, &len) == -1 ||
	    share_token_make(&c, FUZZ_SHARE_NAME, tok, sizeof(tok)) == -1)
		errx(1, "seed %s: a claim share.c refuses", name);
	snprintf(file, sizeof(file), "token-%s", name);
	save(file, tok, strlen(tok));
	snprintf(file, sizeof(file), "claim-%s", name);
	save(file, enc, len);
}

int
main(int argc, char *argv[])
{
	char	 tenant[NAME_LEN], path[SHARE_PATH_MAX + 1];

	if (argc != 2)
		errx(2, "usage: mkshareseeds dir");
	outdir = argv[1];
	if (sodium_init() == -1)
		errx(1, "sodium_init");
	share_keys_set_for_tests(key, FUZZ_SHARE_ID);
	memset(tenant, 't', sizeof(tenant) - 1);
	tenant[sizeof(tenant) - 1] = '\0';
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	path[1] = path[10] = path[100] = '/';

	seed("short", "acme", "out/report.csv", 1699999999123456789LL,
	    FUZZ_SHARE_NOW + 3600);
	seed("expired", "a.b_c-D9", "..a/.b/c..", 0, FUZZ_SHARE_NOW - 1);
	seed("extremes", "x", "\xc3\xa9t\xc3\xa9 r\xc3\xa9sum\xc3\xa9.pdf",
	    -1, INT64_MAX);
	seed("longest", tenant, path, INT64_MIN, FUZZ_SHARE_NOW);
	share_keys_free();
	return 0;
}
