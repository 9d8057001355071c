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

#include <sys/types.h>

#include <stdint.h>

#define MCPD_VERSION		"0.1.0"
#define MCPD_PROTO_VERSION	14U
#define MCPD_PROTO_MAGIC	0x4d435044U	/* "MCPD" */

/* Largest frame on a connection between daemons. */
#define PROTO_MAX_FRAME		(8 * 1024 * 1024)
/* Largest frame between sandboxd and a sandbox-init. */
#define PROTO_INIT_FRAME	(256 * 1024)
/* Bytes of file content per data frame. */
#define PROTO_CHUNK		(64 * 1024)

enum proc_role {
	ROLE_NONE = 0,
	ROLE_MCPD = 1,		/* the MCP front */
	ROLE_SANDBOXD = 2,
	ROLE_AUDITD = 3,
	ROLE_MCPCTL = 4,	/* the admin CLI */
	ROLE_SANDBOX_INIT = 5,	/* PID 1 of a container */
	ROLE_MCPD_STDIO = 6,	/* mcpd --stdio, run by a tenant's user */
	ROLE_MAX
};

enum imsg_type {
	/* Frozen: never renumbered or changed. */
	IMSG_HELLO = 1,			/* struct proto_hello */
	IMSG_HELLO_REJECT = 2,		/* struct proto_reject */

	/* Version-dependent from here on. */
	IMSG_PING = 16,			/* struct proto_ping */
	IMSG_PONG = 17,			/* struct proto_ping */

	/*
	 * sandboxd <-> sandbox-init, over the socket inherited as fd 3.
	 * The imsg peerid is the exec id or the file operation id chosen by
	 * sandboxd; every answer carries the same peerid.
	 */
	IMSG_INIT_FD = 64,		/* uint32_t INIT_FD_*, an fd attached */
	IMSG_INIT_EXEC,			/* struct init_exec + strings */
	IMSG_INIT_STARTED,		/* <- struct init_started */
	IMSG_INIT_EXITED,		/* <- struct init_exited */
	IMSG_INIT_WRITE,		/* struct init_file + path */
	IMSG_INIT_READ,			/* struct init_file + path */
	IMSG_INIT_LIST,			/* struct init_file + path */
	IMSG_INIT_DELETE,		/* struct init_file + path */
	IMSG_INIT_DATA,			/* <-> file content, <= PROTO_CHUNK */
	IMSG_INIT_ENTRY,		/* <- struct init_entry + name, repeated */
	IMSG_INIT_DONE,			/* <- struct init_done */
	IMSG_INIT_SIGNAL,		/* int32_t: every process but init */
	/*
	 * struct init_file + path: open a regular file for reading, no
	 * symlink followed; DONE answers with its descriptor attached
	 * (size its length, mode and mtime), or with an errno and none.
	 */
	IMSG_INIT_OPEN,
	/*
	 * uint32_t INIT_WIPE_*: between two runs of one tenant in one
	 * container (sandboxd/reuse.c).  WIPED answers each step.
	 */
	IMSG_INIT_WIPE,
	IMSG_INIT_WIPED,		/* <- struct init_wiped */

	/*
	 * mcpd (or mcpctl) <-> sandboxd.  The peerid is the client's
	 * request id; every answer to a request carries it.  From an
	 * mcpd --stdio, sandboxd ignores the tenant a request names and uses
	 * the one its uid (SO_PEERCRED) belongs to.  A request ends
	 * with exactly one of IMSG_SBX_RESULT, IMSG_SBX_DONE, IMSG_SBX_CREATED
	 * or IMSG_SBX_ERROR, after any OUTPUT, DATA, ENTRY or INFO frames.
	 */
	IMSG_SBX_CREATE = 128,		/* struct sbx_create + env */
	IMSG_SBX_RUN,			/* struct sbx_run + ... */
	IMSG_SBX_EXEC,			/* struct sbx_exec + ... */
	IMSG_SBX_WRITE,			/* struct sbx_file + path + content */
	IMSG_SBX_READ,			/* struct sbx_file + path */
	IMSG_SBX_LIST_FILES,		/* struct sbx_file + path */
	IMSG_SBX_DELETE,		/* struct sbx_file + path */
	IMSG_SBX_STOP,			/* struct sbx_ref */
	IMSG_SBX_LIST,			/* struct sbx_ref, id empty */
	IMSG_SBX_STATUS,		/* struct sbx_ref */
	IMSG_SBX_CANCEL,		/* no payload: peerid is the request */
	IMSG_SBX_CREATED,		/* <- struct sbx_info */
	IMSG_SBX_OUTPUT,		/* <- struct sbx_output + bytes */
	IMSG_SBX_RESULT,		/* <- struct sbx_result */
	IMSG_SBX_DATA,			/* <- file content */
	IMSG_SBX_ENTRY,			/* <- packed struct init_entry + name */
	IMSG_SBX_INFO,			/* <- struct sbx_info */
	IMSG_SBX_DONE,			/* <- struct sbx_done */
	IMSG_SBX_ERROR,			/* <- struct sbx_error */
	IMSG_SBX_LOGS,			/* struct sbx_logs */
	IMSG_SBX_IMAGES,		/* struct sbx_images */
	IMSG_SBX_IMAGE,			/* <- struct sbx_image */
	IMSG_SBX_LANG,			/* <- struct sbx_lang */
	IMSG_SBX_PICTURE,		/* <- struct sbx_picture + path */
	/*
	 * The administrator's (mcpctl) and, for SERVER alone, mcpd's:
	 * SERVER answers a PEER frame per connection, then SERVERINFO, then
	 * DONE with size the number of peers.  KILL is mcpctl's alone.
	 */
	IMSG_SBX_SERVER,		/* no payload */
	IMSG_SBX_PEER,			/* <- struct sbx_peer */
	IMSG_SBX_SERVERINFO,		/* <- struct sbx_server */
	IMSG_SBX_KILL,			/* struct sbx_ref */
	/*
	 * mcpd's, for a download link: struct sbx_file + path.  DONE with
	 * the open file's descriptor attached (as IMSG_INIT_OPEN), or
	 * ERROR.  Not served from a sandbox under runsc, whose files are
	 * its own kernel's and cannot be handed to the host.
	 */
	IMSG_SBX_OPEN,

	/* sandboxd's main process <-> its privileged helper. */
	IMSG_PRIV_START = 192,		/* struct priv_start, fd for init */
	IMSG_PRIV_STARTED,		/* <- struct priv_result */
	IMSG_PRIV_DESTROY,		/* struct priv_destroy */
	IMSG_PRIV_DESTROYED,		/* <- struct priv_result */
	IMSG_PRIV_READY,		/* <- struct priv_ready: clean-up done */
	IMSG_PRIV_OOM,			/* <- struct priv_result: one killed */
	/*
	 * struct priv_wipe: a one-shot container's writable mounts made
	 * afresh and its IPC namespace emptied, between two runs of one
	 * tenant (sandboxd/reuse.c).  WIPED's pid is 1 when done, 0 and a
	 * message when not.
	 */
	IMSG_PRIV_WIPE,
	IMSG_PRIV_WIPED,		/* <- struct priv_result */
	/*
	 * <- struct priv_result: under runsc, the memory of the program the
	 * guard killed has not come back; sandboxd ends what runs in the
	 * sandbox through init, in the runtime's own kernel (guard.c).
	 */
	IMSG_PRIV_OOM_STUCK,

	/* mcpd, sandboxd -> auditd. */
	IMSG_AUDIT_RECORD = 224,	/* struct audit_record + body */
	IMSG_AUDIT_ACK,			/* <- struct audit_ack */
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

/*
 * sandbox-init.  An exec is four IMSG_INIT_FD frames (stdin, stdout,
 * stderr, sync), then IMSG_INIT_EXEC, all with the exec id as peerid.
 * The child writes one byte on the sync socket (sandboxd learns its host
 * pid from SO_PASSCRED), waits for one byte back (sandboxd has placed it
 * in its cgroups, and its intent is audited), and only then executes.
 * With INIT_EXEC_NOSYNC there are three fds, no sync, and no wait.
 */
#define INIT_FD_STDIN		0
#define INIT_FD_STDOUT		1
#define INIT_FD_STDERR		2
#define INIT_FD_SYNC		3
#define INIT_FD_MAX		4

#define INIT_WORKSPACE		"/workspace"	/* file paths are beneath */
#define INIT_PATH_MAX		4096
/*
 * sandbox-init's limits: going past one is a protocol violation that ends
 * the container, so sandboxd queues rather than exceed them.  A READ or a
 * LIST counts until its DONE.
 */
#define INIT_OPS_MAX		16	/* file operations in flight */
#define INIT_HELD_FDS_MAX	64	/* IMSG_INIT_FD fds awaiting their EXEC */

#define INIT_EXEC_PATH		0x01	/* look argv[0] up in env's PATH */
/* argv is /bin/sh -c SCRIPT [name args...]: a simple script may be
 * exec'd without the shell, with the shell's result. */
#define INIT_EXEC_SH		0x02
/* No sync socket: the child executes at once. */
#define INIT_EXEC_NOSYNC	0x04
/*
 * Once the command has ended, right after its EXITED, list the workspace
 * as a LIST of id list_id would (recursive, SBX_LIST_MAX entries at most),
 * unasked: a run's files without a round trip.  sandboxd counts that
 * listing among the operations in flight from the EXEC on.
 */
#define INIT_EXEC_LIST		0x08

struct init_exec {
	uint32_t	 argc;		/* >= 1 */
	uint32_t	 envc;
	uint32_t	 flags;		/* INIT_EXEC_* */
	uint32_t	 list_id;	/* INIT_EXEC_LIST: the listing's op id */
	/* then: cwd (beneath the workspace, "" for it), argv, env: each a
	 * NUL-terminated string, nothing else after. */
};

struct init_started {
	int32_t		 pid;		/* in the container's pid namespace */
	uint32_t	 pad;
};

struct init_exited {
	int32_t		 status;	/* as from waitpid(2) */
	int32_t		 exec_errno;	/* execve(2) failed with this, or 0 */
	uint64_t	 utime_us;	/* rusage of the child and its reaped */
	uint64_t	 stime_us;	/* descendants */
	uint64_t	 maxrss_kb;
};

/* init_file.flags */
#define INIT_F_MKDIRS		0x01	/* WRITE: create missing parents */
#define INIT_F_APPEND		0x02	/* WRITE: append, do not truncate */
#define INIT_F_RECURSIVE	0x04	/* DELETE a directory tree; LIST deep */
#define INIT_F_DIR		0x08	/* WRITE: make a directory, no data */

struct init_file {
	uint32_t	 flags;		/* INIT_F_* */
	uint32_t	 mode;		/* WRITE: permission bits */
	uint64_t	 size;		/* WRITE: bytes that follow in DATA;
					   READ: most bytes to send;
					   LIST: most entries to send */
	/* then: the path, NUL-terminated, relative to the workspace. */
};

/* Packed one after another, unaligned: receivers copy them out. */
struct init_entry {
	uint64_t	 size;
	int64_t		 mtime;		/* seconds since the epoch */
	uint32_t	 mode;		/* st_mode: type and permissions */
	uint32_t	 namelen;	/* with its NUL */
	/* then: the name, relative to the listed directory */
};

/* init_done.flags */
#define INIT_D_TRUNCATED	0x01	/* READ/LIST stopped at the limit */

struct init_done {
	int32_t		 error;		/* 0, or an errno value */
	uint32_t	 flags;		/* INIT_D_* */
	uint64_t	 size;		/* bytes written or read; entries */
	uint32_t	 mode;		/* READ: st_mode of the file */
	uint32_t	 pad;
	int64_t		 mtime;		/* READ: seconds since the epoch */
};

/*
 * A wipe's two steps: KILL ends every process but init, waits for them
 * all and lets go of the workspace (whose mount the helper then
 * replaces); OPEN takes the new one.  Either fails only by init's exit.
 */
#define INIT_WIPE_KILL		1
#define INIT_WIPE_OPEN		2

struct init_wiped {
	uint32_t	 step;		/* INIT_WIPE_* */
	uint32_t	 reaped;	/* KILL: processes ended */
};

/*
 * Sandbox operations.  Every request starts with struct sbx_ref: the
 * tenant it acts for (asserted by an HTTP-mode mcpd or by root's mcpctl,
 * and checked against the policy) and the sandbox it names: by its id
 * or, when the string is not a valid id, by the name it was created with,
 * looked up among that tenant's sandboxes alone.
 */
#define SBX_NAME_MAX		64
#define SBX_ID_LEN		32		/* hex digits of 128 bits */
#define SBX_MSG_MAX		240

struct sbx_ref {
	char		 tenant[SBX_NAME_MAX];
	char		 id[SBX_NAME_MAX];	/* id or name; "" where none */
};

/* Limits a request asks for; 0 means the tenant's own. */
#define SBX_NET_DEFAULT		0
#define SBX_NET_NONE		1
#define SBX_NET_EGRESS		2

struct sbx_limits {
	uint64_t	 memory;
	uint64_t	 disk;
	uint64_t	 output;
	uint64_t	 timeout;	/* ms */
	uint64_t	 idle;		/* ms */
	uint64_t	 lifetime;	/* ms */
	uint32_t	 cpus;		/* thousandths */
	uint32_t	 pids;
	uint32_t	 network;	/* SBX_NET_* */
	uint32_t	 pad;
};

struct sbx_create {
	struct sbx_ref	 ref;
	char		 name[SBX_NAME_MAX];	/* optional, tenant-unique */
	char		 image[SBX_NAME_MAX];	/* "" : the language's */
	char		 language[SBX_NAME_MAX];	/* "" : none */
	struct sbx_limits lim;
	uint32_t	 envc;
	uint32_t	 pad;
	/* then: envc "KEY=value" strings, given to every exec */
};

/* A file carried in a request: header, path with NUL, content. */
struct sbx_filehdr {
	uint32_t	 mode;
	uint32_t	 pathlen;	/* with its NUL */
	uint64_t	 size;
};

#define SBX_RUN_STDIN_MAX	(1024 * 1024)

struct sbx_run {
	struct sbx_ref	 ref;		/* id "" : a fresh one-shot sandbox */
	char		 language[SBX_NAME_MAX];	/* "" : run argv */
	char		 image[SBX_NAME_MAX];	/* one-shot without language */
	struct sbx_limits lim;
	uint32_t	 argc;		/* args for the program, or argv */
	uint32_t	 envc;
	uint32_t	 nfiles;
	uint32_t	 codelen;	/* with a language: the program */
	uint32_t	 stdinlen;
	uint32_t	 flags;		/* zero */
	/* then: argc strings, envc strings, nfiles files, code, stdin */
};

/*
 * A RUN with a language, once its program has ended: ENTRY frames list the
 * regular files beneath the workspace that the build or the program made or
 * changed (modified in or after the second the run began; the files the
 * request wrote excepted), at most SBX_CREATED_MAX of them; then, for each
 * picture among them (.png .jpg .jpeg .gif .svg .webp) of at most
 * SBX_PICTURE_MAX bytes, up to SBX_PICTURES_MAX of them and
 * SBX_PICTURES_BYTES in all, a PICTURE frame and its content in DATA
 * frames; then RESULT.
 */
#define SBX_CREATED_MAX		100
#define SBX_PICTURE_MAX		(2 * 1024 * 1024)
#define SBX_PICTURES_MAX	8
#define SBX_PICTURES_BYTES	(8 * 1024 * 1024)

struct sbx_picture {
	uint64_t	 size;		/* bytes of DATA that follow */
	uint32_t	 pathlen;	/* with its NUL */
	uint32_t	 pad;
	/* then: the path, relative to the workspace */
};

#define SBX_EXEC_SHELL		0x01	/* argv[0] is a /bin/sh command line */

struct sbx_exec {
	struct sbx_ref	 ref;
	uint64_t	 timeout;	/* ms, 0 : the sandbox's */
	uint32_t	 argc;
	uint32_t	 envc;
	uint32_t	 cwdlen;	/* with its NUL */
	uint32_t	 stdinlen;
	uint32_t	 flags;		/* SBX_EXEC_* */
	uint32_t	 pad;
	/* then: cwd, argc strings, envc strings, stdin */
};

#define SBX_FILE_MAX		(16 * 1024 * 1024)	/* one read */
#define SBX_LIST_MAX		10000			/* entries */

struct sbx_file {
	struct sbx_ref	 ref;
	uint32_t	 flags;		/* INIT_F_* */
	uint32_t	 mode;
	uint64_t	 size;		/* WRITE: content; READ: most bytes;
					   LIST: most entries */
	uint32_t	 pathlen;	/* with its NUL */
	uint32_t	 pad;
	/* then: path, then (WRITE) size bytes of content */
};

/*
 * The most recent output of a persistent sandbox's execs, each between a
 * "$ command" line and a "[exit N]"-style line, kept in sandboxd's memory
 * alone: it is lost with the sandbox, or when sandboxd restarts.  LOGS
 * answers DATA frames of the last max bytes kept (0: all), then DONE: size
 * sent, mtime of the last append (0: none), INIT_D_TRUNCATED when older
 * bytes were dropped or max cut them.
 */
#define SBX_LOG_MAX		(256 * 1024)	/* bytes kept per sandbox */

struct sbx_logs {
	struct sbx_ref	 ref;
	uint64_t	 max;		/* most recent bytes wanted, 0 : all */
};

/*
 * The images a tenant may use.  IMAGES answers, for each, an IMAGE frame
 * and, with SBX_IMAGES_LANGS, a LANG frame for every language whose tools
 * the image holds (found by running each language's version command in a
 * container of the image, once per image and sandboxd start), then DONE
 * with size the number of images.
 */
#define SBX_IMAGES_LANGS	0x01

struct sbx_images {
	struct sbx_ref	 ref;
	uint32_t	 flags;		/* SBX_IMAGES_* */
	uint32_t	 pad;
};

#define SBX_IMAGE_HOST		1	/* the host's /usr, read-only */
#define SBX_IMAGE_ROOTFS	2	/* a directory the policy names */
#define SBX_IMAGE_STORED	3	/* built or imported by mcpctl */
#define SBX_DIGEST_MAX		72	/* "sha256:" and 64 hex digits */
#define SBX_VERSION_MAX		128

struct sbx_image {
	char		 name[SBX_NAME_MAX];
	char		 digest[SBX_DIGEST_MAX];	/* "" : none */
	char		 source[SBX_MSG_MAX];	/* stored: what made it */
	char		 probe_error[SBX_MSG_MAX];	/* "" : probed fine */
	int64_t		 created;	/* stored: seconds since the epoch */
	uint64_t	 size;		/* stored: bytes */
	char		 runtime[SBX_NAME_MAX];	/* its sandboxes' */
	uint32_t	 type;		/* SBX_IMAGE_* */
	uint32_t	 pool;		/* warm containers kept */
};

struct sbx_lang {
	char		 image[SBX_NAME_MAX];
	char		 language[SBX_NAME_MAX];
	char		 version[SBX_VERSION_MAX];	/* "" : no probe */
};

#define SBX_STREAM_STDOUT	1
#define SBX_STREAM_STDERR	2
#define SBX_PHASE_RUN		0
#define SBX_PHASE_BUILD		1

struct sbx_output {
	uint32_t	 stream;	/* SBX_STREAM_* */
	uint32_t	 phase;		/* SBX_PHASE_* */
};

/* sbx_result.flags */
#define SBX_R_TIMED_OUT		0x01
#define SBX_R_OOM		0x02
#define SBX_R_TRUNCATED		0x04
#define SBX_R_BUILD_FAILED	0x08	/* the result is the build's */
#define SBX_R_EXEC_FAILED	0x10	/* exec_errno says why */
#define SBX_R_CANCELLED		0x20

struct sbx_result {
	int32_t		 exit_code;	/* -1 when killed by a signal */
	int32_t		 signal;
	uint32_t	 flags;		/* SBX_R_* */
	int32_t		 exec_errno;
	uint64_t	 wall_ms;
	uint64_t	 cpu_ms;
	uint64_t	 peak_memory;	/* bytes */
	uint64_t	 stdout_bytes;	/* produced, before any cut */
	uint64_t	 stderr_bytes;
};

#define SBX_STATE_RUNNING	1	/* its container is up */
#define SBX_STATE_IDLE		2	/* no container: starts on demand */

/* sbx_info.flags */
#define SBX_INFO_ONESHOT	0x01	/* a run's own: mcpctl's listings */

struct sbx_info {
	char		 id[SBX_ID_LEN + 1];
	char		 pad[7];
	char		 name[SBX_NAME_MAX];
	char		 tenant[SBX_NAME_MAX];
	char		 image[SBX_NAME_MAX];
	char		 runtime[SBX_NAME_MAX];	/* the OCI runtime's name */
	struct sbx_limits lim;		/* in force */
	int64_t		 created;	/* seconds since the epoch */
	int64_t		 last_used;
	int64_t		 expires;	/* idle or lifetime, whichever first */
	uint64_t	 memory;	/* in use now */
	uint32_t	 state;		/* SBX_STATE_* */
	uint32_t	 execs;		/* running now */
	uint32_t	 flags;		/* SBX_INFO_* */
	int32_t		 init_pid;	/* host pid of its PID 1: mcpctl's */
};

/*
 * The administrator's view.  In mcpctl's LIST, STATUS and KILL, an empty
 * sbx_ref.tenant means any tenant's sandbox, one-shot ones included; KILL
 * ends a sandbox's processes and container at once (SIGKILL) and, as
 * STOP does, deletes a persistent one; a run whose sandbox it was ends
 * killed.
 */
struct sbx_peer {
	char		 software[32];	/* from its hello */
	uint32_t	 role;		/* ROLE_* */
	uint32_t	 pid;		/* SO_PEERCRED */
	uint32_t	 uid;
	uint32_t	 gid;
	int64_t		 since;		/* connected, seconds since the epoch */
	uint32_t	 requests;	/* in progress */
	uint32_t	 pad;
};

struct sbx_server {
	char		 software[32];	/* "mcp-sandboxd 0.1.0" */
	char		 runc[32];	/* runc's version, "" : not yet known */
	char		 config[72];	/* "sha256:" and the file's digest */
	int64_t		 started;	/* seconds since the epoch */
	uint32_t	 pid;
	uint32_t	 protocol;	/* MCPD_PROTO_VERSION */
	uint32_t	 audit_required;
	uint32_t	 audit_connected;
	uint64_t	 audit_sent;	/* records sent to auditd */
	uint64_t	 audit_committed;	/* acknowledged as committed */
	uint64_t	 audit_failed;	/* not committed, or never sent */
	uint64_t	 audit_waiting;	/* sent, no answer yet */
	uint64_t	 audit_lag_ms;	/* age of the oldest waiting */
	uint32_t	 pool_ready;	/* warm containers */
	uint32_t	 pool_starting;
	uint32_t	 pool_target;	/* the images' pool sizes, summed */
	uint32_t	 pad;
	uint64_t	 pool_claimed;	/* runs served warm */
	uint64_t	 pool_empty;	/* runs that found none ready */
	uint64_t	 pool_failed;	/* starts that failed */
	uint32_t	 sandboxes;	/* persistent */
	uint32_t	 sandboxes_running;	/* of those, with a container */
	uint32_t	 oneshot;	/* one-shot sandboxes of runs now */
	uint32_t	 execs;		/* processes running now */
	uint32_t	 requests;	/* in progress, all clients */
	uint32_t	 slots_used;	/* host uid ranges */
	uint32_t	 slots_total;
	uint32_t	 peers;
	/* Containers kept for their tenants' next runs (reuse yes). */
	uint32_t	 reuse_kept;	/* now, wiped or being wiped */
	uint32_t	 pad2;
	uint64_t	 reuse_claimed;	/* runs served by one */
	uint64_t	 reuse_wiped;	/* wipes done */
	uint64_t	 reuse_failed;	/* wipes or claims that failed */
};

struct sbx_done {
	uint32_t	 flags;		/* INIT_D_* */
	uint32_t	 mode;
	uint64_t	 size;
	int64_t		 mtime;
};

#define SBX_E_INVALID		1	/* malformed or impossible request */
#define SBX_E_NOTFOUND		2	/* no such sandbox (for this tenant) */
#define SBX_E_DENIED		3	/* policy refuses it */
#define SBX_E_AUDIT		4	/* the audit record was not committed */
#define SBX_E_BUSY		5	/* out of capacity */
#define SBX_E_INTERNAL		6	/* the runtime failed */
#define SBX_E_FILE		7	/* a file operation failed: errno */
#define SBX_E_CANCELLED		8

struct sbx_error {
	uint32_t	 code;		/* SBX_E_* */
	int32_t		 err;		/* SBX_E_FILE: errno */
	char		 message[SBX_MSG_MAX];
};

/*
 * sandboxd's main process and its privileged helper.  The helper builds
 * bundles from the policy and these typed fields alone.
 */
struct priv_start {
	char		 id[SBX_ID_LEN + 1];
	char		 pad[7];
	char		 image[SBX_NAME_MAX];
	/* A stored image: its digest, found again in the store by the
	 * helper; "" for the configuration's images. */
	char		 digest[SBX_DIGEST_MAX];
	char		 runtime[SBX_NAME_MAX];	/* mcpd.conf's name */
	uint64_t	 memory;
	uint64_t	 disk;
	uint32_t	 cpus;
	uint32_t	 pids;
	uint32_t	 network;	/* NET_NONE, NET_EGRESS */
	uint32_t	 slot;		/* uid range */
	uint32_t	 persistent;	/* workspace kept on disk */
	uint32_t	 pad2;
};

#define PRIV_DESTROY_WORKSPACE	0x01	/* delete the persistent disk too */

struct priv_destroy {
	char		 id[SBX_ID_LEN + 1];
	char		 pad[3];
	uint32_t	 flags;
	char		 runtime[SBX_NAME_MAX];	/* the one it started under */
};

struct priv_wipe {
	char		 id[SBX_ID_LEN + 1];
	char		 pad[3];
};

struct priv_ready {
	char		 runc[32];	/* its version */
};

struct priv_result {
	char		 id[SBX_ID_LEN + 1];
	char		 pad[3];
	int32_t		 pid;		/* STARTED: host pid of sandbox-init */
	char		 message[SBX_MSG_MAX];	/* "" on success */
};

/*
 * Audit records.  The sender's identity is taken by auditd from the
 * socket; the body is "key=value" lines in ascending key order, values
 * %-escaped outside printable ASCII (see audit_body_*).
 */
#define AUDIT_BODY_MAX		(64 * 1024)

enum audit_event {
	AEV_DAEMON_START = 1,
	AEV_DAEMON_STOP,
	AEV_SANDBOX_CREATE,
	AEV_SANDBOX_STOP,
	AEV_SANDBOX_REAP,
	AEV_RUN,
	AEV_EXEC,
	AEV_FILE_WRITE,
	AEV_FILE_READ,
	AEV_FILE_LIST,
	AEV_FILE_DELETE,
	AEV_TOOL_CALL,
	AEV_AUTH_FAILURE,
	AEV_POLICY_DENIAL,
	AEV_KEY_ROTATION,		/* auditd's own */
	AEV_FILE_SHARE,			/* mcpd: a download link made */
	AEV_FILE_DOWNLOAD,		/* mcpd: a link followed */
	AEV_EVENT_MAX
};

enum audit_outcome {
	AOC_INTENT = 1,	/* about to act */
	AOC_OK,
	AOC_FAILED,
	AOC_DENIED,
	AOC_OUTCOME_MAX
};

struct audit_record {
	uint32_t	 event;		/* enum audit_event */
	uint32_t	 outcome;	/* enum audit_outcome */
	char		 tenant[SBX_NAME_MAX];
	char		 sandbox[SBX_ID_LEN + 1];
	char		 pad[3];
	uint32_t	 bodylen;
	/* then: bodylen bytes of body */
};

struct audit_ack {
	uint64_t	 seq;		/* 0 when not committed */
	char		 error[SBX_MSG_MAX];	/* why not */
};

const char	*proto_role_name(uint32_t);
const char	*audit_event_name(uint32_t);
const char	*audit_outcome_name(uint32_t);
void		 proto_hello_init(struct proto_hello *, enum proc_role);
/* NULL when the hello is acceptable, else why not. */
const char	*proto_hello_check(const void *, size_t, char *, size_t);
/* Copy a fixed-size payload; -1 if the size is wrong. */
int		 proto_payload(const void *, size_t, void *, size_t);
/*
 * Split data into exactly n NUL-terminated strings that fill it; pointers
 * go into out (n entries).  Returns the bytes used, or -1 when the data
 * holds fewer strings, or when strict and bytes remain after the n-th.
 */
ssize_t		 proto_strings(const void *, size_t, size_t, const char **,
		    int);

#endif
