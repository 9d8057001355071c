/*
 * The wire contract between the suite's processes: every message type and
 * payload, and the protocol version.
 *
 * Bump MCPD_PROTO_VERSION on EVERY change to this file that alters a type
 * number, a payload layout or the meaning of a field.  Peers exchange HELLO
 * first on every connection and drop a peer of another version.
 *
 * IMSG_HELLO and IMSG_HELLO_REJECT, and their payloads, are frozen forever:
 * they are how two versions learn that they differ.
 *
 * Payloads are fixed-size structs in host byte order (both ends are on the
 * same host), followed where noted by variable data.  Strings in payloads
 * are NUL-terminated within their array; a receiver checks that before use.
 */
#ifndef MCPD_PROTO_H
#define MCPD_PROTO_H

#include <stdint.h>

#define MCPD_VERSION		"0.1.0"
#define MCPD_PROTO_VERSION	1U
#define MCPD_PROTO_MAGIC	0x4d435044U	/* "MCPD" */

/* Largest frame on a connection between daemons. */
#define PROTO_MAX_FRAME		(256 * 1024)

enum proc_role {
	ROLE_NONE = 0,
	ROLE_MCPD = 1,		/* the MCP front */
	ROLE_SANDBOXD = 2,
	ROLE_AUDITD = 3,
	ROLE_MCPCTL = 4,	/* the admin CLI */
	ROLE_MAX
};

enum imsg_type {
	/* Frozen: never renumbered or changed. */
	IMSG_HELLO = 1,			/* struct proto_hello */
	IMSG_HELLO_REJECT = 2,		/* struct proto_reject */

	/* Version-dependent from here on. */
	IMSG_PING = 16,			/* struct proto_ping */
	IMSG_PONG = 17,			/* struct proto_ping */
};

/* Frozen. */
struct proto_hello {
	uint32_t	 magic;		/* MCPD_PROTO_MAGIC */
	uint32_t	 version;	/* MCPD_PROTO_VERSION */
	uint32_t	 role;		/* enum proc_role of the sender */
	uint32_t	 flags;		/* zero */
	char		 software[32];	/* "mcpd 0.1.0" */
};

/* Frozen: sent instead of going on, just before closing. */
struct proto_reject {
	uint32_t	 version;	/* the refusing side's version */
	uint32_t	 role;		/* the refusing side's role */
	char		 reason[120];
};

/*
 * A liveness probe.  The receiver answers IMSG_PONG with the same payload,
 * its role's bit added to path.  sandboxd forwards a ping flagged
 * PING_VIA_AUDITD to auditd and answers once auditd has, so one ping from
 * mcpd proves the whole chain.
 */
#define PING_VIA_AUDITD		0x01

#define PING_OK			0
#define PING_UNREACHABLE	1	/* the next hop is not connected */
#define PING_TIMEOUT		2	/* the next hop did not answer */

struct proto_ping {
	uint64_t	 cookie;
	uint64_t	 sent_ns;	/* sender's CLOCK_MONOTONIC */
	uint32_t	 flags;		/* PING_* */
	uint32_t	 path;		/* 1 << role of each hop answering */
	uint32_t	 status;	/* PING_OK ... */
	uint32_t	 pad;
};

const char	*proto_role_name(uint32_t);
void		 proto_hello_init(struct proto_hello *, enum proc_role);
/* NULL when the hello is acceptable, else why not. */
const char	*proto_hello_check(const void *, size_t, char *, size_t);
/* Copy a fixed-size payload; -1 if the size is wrong. */
int		 proto_payload(const void *, size_t, void *, size_t);

#endif
