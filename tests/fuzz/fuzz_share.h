/*
 * The share target's key ring, clock and file name (fuzz_share.c), which
 * its seeds are made with (mkshareseeds.c).  Nothing here is secret.
 */
#ifndef MCPD_FUZZ_SHARE_H
#define MCPD_FUZZ_SHARE_H

#define FUZZ_SHARE_KEY	"fuzz_share.c: a key, not secret"	/* 32 bytes */
#define FUZZ_SHARE_ID	0x5a5a0001u
#define FUZZ_SHARE_NOW	1700000000LL
#define FUZZ_SHARE_NAME	"report.csv"

#endif
