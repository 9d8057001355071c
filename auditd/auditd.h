/*
 * mcp-auditd internals.
 */
#ifndef MCPD_AUDITD_H
#define MCPD_AUDITD_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>

#include "proto.h"

struct conn;

/* A record received, waiting for its commit. */
struct pending_record {
	TAILQ_ENTRY(pending_record) entry;
	struct conn	*from;		/* NULL once the sender left */
	uint32_t	 peerid;
	uint64_t	 seq;		/* given at commit */
	int64_t		 time;		/* ns since the epoch, at commit */
	char		 role[16];	/* from the connection, not the record */
	int64_t		 pid;
	int64_t		 uid;
	char		 tenant[SBX_NAME_MAX];
	char		 sandbox[SBX_ID_LEN + 1];
	const char	*event;
	const char	*outcome;
	uint8_t		*body;
	size_t		 bodylen;
};

/* record.c: a record from its payload, or NULL with why. */
struct pending_record *record_decode(const void *, size_t, char *, size_t);

/* store.c */
int	 store_open(const char *, char *, size_t);
void	 store_close(void);
int	 store_commit(struct pending_record **, size_t, char *, size_t);
/* A record of auditd's own (AEV_*), with this body. */
int	 store_event(int, const char *);
/* Sign a checkpoint of everything so far, if anything is new. */
int	 store_checkpoint(void);
uint64_t store_size(void);

#endif
