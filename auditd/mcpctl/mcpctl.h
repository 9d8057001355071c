/*
 * mcpctl internals: the audit database read-only, verification, the
 * image store's writer, and the output formats (text and JSON) behind
 * one small table of functions.
 */
#ifndef MCPCTL_H
#define MCPCTL_H

#include <sys/types.h>

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <signal.h>

#include <sqlite3.h>

#include "auditlog.h"
#include "imgstore.h"
#include "proto.h"

#define MCPCTL_SCHEMA		2
#define AUDIT_PUB_NEXT		"audit.pub.next"

/* Exit statuses besides 0: every command but verify uses the first two. */
#define EXIT_ERROR		1
#define EXIT_USAGE		2
#define EXIT_TAMPERED		1	/* verify */
#define EXIT_UNVERIFIED		2	/* verify */
#define EXIT_UNANCHORED		3	/* verify: whole, but no -c given */

struct policy;
struct output;

/* What main() gathered for the command. */
struct mcpctl {
	const struct output	*out;
	const char		*conffile;	/* -f, or the default */
	const char		*dbpath;	/* -d, or the configuration's */
	struct policy		*conf;		/* NULL with -d */
	int			 json;		/* -j */
};

/* The database, opened read-only. */
struct auditdb {
	sqlite3			*db;
	char			 path[PATH_MAX];
	char			 dir[PATH_MAX];
	int			 immutable;	/* no -wal: the file alone */
};

/* One row of the records table, as stored (nothing here is trusted). */
struct record {
	int64_t			 seq;
	int64_t			 time;
	char			*role;
	int64_t			 pid;
	int64_t			 uid;
	char			*tenant;
	char			*sandbox;
	char			*event;
	char			*outcome;
	char			*body;
	size_t			 bodylen;
	uint8_t			 prev[AUDIT_HASH_LEN];
	uint8_t			 hash[AUDIT_HASH_LEN];
	uint8_t			 sig[AUDIT_SIG_LEN];
	char			*keyid;
	int			 sizes_ok;	/* prev, hash, sig, keyid */
};

/* Which records a listing wants. */
#define FILTER_EVENTS_MAX	32
struct filter {
	int			 has_since, has_until;
	int64_t			 since, until;		/* ns */
	const char		*tenant;
	const char		*sandbox;	/* an id or its prefix */
	const char		*events[FILTER_EVENTS_MAX];
	size_t			 nevents;
	const char		*outcome;
};

/* The outcome of a verification. */
struct verify_result {
	/* 0, EXIT_TAMPERED, EXIT_UNVERIFIED or EXIT_UNANCHORED */
	int			 status;
	/* verify over several hosts' logs: this one's name and path. */
	const char		*host;
	const char		*path;
	uint64_t		 records;	/* verified */
	int64_t			 last_time;	/* the last record's, ns */
	uint8_t			 root[AUDIT_HASH_LEN];	/* of them all */
	uint64_t		 checkpoints;	/* verified, -c included */
	int			 has_last_checkpoint;
	uint64_t		 last_checkpoint;
	int64_t			 last_checkpoint_time;
	int			 anchored;	/* by a -c that verified */
	uint64_t		 anchor;	/* the largest such size */
	int			 anchor_has_time;
	int64_t			 anchor_time;
	char			 (*keys)[AUDIT_KEYID_LEN + 1];	/* signers */
	size_t			 nkeys;
	int			 has_bad;
	int64_t			 first_bad;
	const char		*kind;		/* see verify.c */
	char			 error[512];
};

/* A key made by keygen. */
struct keygen_result {
	char			 keyid[AUDIT_KEYID_LEN + 1];
	char			 secret[PATH_MAX];
	char			 public[PATH_MAX];
	int			 staged;	/* .next: a rotation */
};

/* The outcome of image verify. */
struct image_check {
	const struct imgstore_image	*im;
	struct imgstore_sum		 sum;	/* as computed */
	int				 status; /* 0 or EXIT_TAMPERED */
	char				 error[256];	/* what differs */
};

/* What mcpctl status learnt from the daemons. */
struct ctl_status {
	const char		*conffile;
	char			 file_config[72];	/* the file's digest */
	int			 sandboxd_up;
	char			 sandboxd_error[256];
	struct sbx_server	 server;
	struct sbx_peer		*peers;
	size_t			 npeers;
	int			 auditd_up;
	char			 auditd_software[32];
	char			 auditd_error[256];
};

/* What config check found; the problems themselves went to stderr. */
/* mcp-sandboxd -n's container under one runtime. */
struct config_trial {
	char			 runtime[64];
	int			 started;
	unsigned long long	 ms;		/* to sandbox-init's hello */
	char			 error[SBX_MSG_MAX + 64];	/* why not */
};

#define CONFIG_TRIALS_MAX	8	/* POLICY_RUNTIMES_MAX */

struct config_report {
	const char		*file;
	int			 loaded;
	char			 digest[72];
	unsigned int		 problems;
	size_t			 tenants, tokens, limits, images, languages;
	size_t			 listens;
	const char		*runtime;	/* in use: name, kind, binary */
	const char		*runtime_kind;
	const char		*runtime_path;
	/* A container under each runtime used, or why none was tried. */
	struct config_trial	 trials[CONFIG_TRIALS_MAX];
	size_t			 ntrials;
	const char		*untried;
};

/* A new bearer token, and the hash mcpd.conf holds for it. */
struct token_result {
	char			 token[64];
	char			 hash[72];	/* "sha256:<hex>" */
	const char		*tenant;	/* the block to put it in */
};

/*
 * An output format, as bgpctl has them.  A listing is begin, a record
 * each, end; a stream (tail, export) is records alone, each complete.
 */
struct output {
	void	(*list_begin)(void);
	void	(*list_record)(const struct record *);
	void	(*list_end)(void);
	void	(*stream_record)(const struct record *);
	void	(*show)(const struct record *);
	void	(*verify)(const struct verify_result *);
	void	(*anchor)(const struct verify_result *);
	/* After verify over several hosts: how many, and how each went. */
	void	(*verify_hosts)(int, int, int, int, int);
	void	(*keygen)(const struct keygen_result *);
	void	(*image_list)(const struct imgstore_image *, size_t);
	void	(*image_added)(const struct imgstore_image *);
	void	(*image_verify)(const struct image_check *);
	void	(*status)(const struct ctl_status *);
	void	(*sandbox_list)(const struct sbx_info *, size_t);
	void	(*sandbox_inspect)(const struct sbx_info *);
	void	(*sandbox_killed)(const char *);
	void	(*config_check)(const struct config_report *);
	void	(*token)(const struct token_result *);
};

extern const struct output	text_output;
extern const struct output	json_output;

/* mcpctl.c */
__attribute__((__noreturn__)) void	usage_cmd(const char *);
void	 cmd_operands(const char *, int *, char ***, int, int);
struct policy *mcpctl_conf(struct mcpctl *, int, const char *);
void	 mcpctl_dbpath(struct mcpctl *, int);
const char *mcpctl_statedir(struct mcpctl *, int);

/* ctl.c: questions to the running daemons */
int	 ctl_status(struct mcpctl *, int, char **);
int	 ctl_sandbox_list(struct mcpctl *, int, char **);
int	 ctl_sandbox_inspect(struct mcpctl *, int, char **);
int	 ctl_sandbox_kill(struct mcpctl *, int, char **);

/* config.c */
int	 config_check(struct mcpctl *, int, char **);
int	 token_new(struct mcpctl *, int, char **);

/* image.c */
int	 image_build(struct mcpctl *, int, char **);
int	 image_import(struct mcpctl *, int, char **);
int	 image_list(struct mcpctl *, int, char **);
int	 image_rm(struct mcpctl *, int, char **);
int	 image_verify(struct mcpctl *, int, char **);

/* imgbuild.c: a Debian tree by debootstrap into dir/rootfs. */
struct build {
	const char	*preset;
	char		 suite[64];
	char		 mirror[512];
	char		*include;	/* the preset's packages and -i's */
	char		 source[IMGSTORE_SOURCE_MAX];	/* for the info */
};
void	 build_options(struct build *, const char *, const char *,
	    const char *, const char *);
void	 build_rootfs(const struct build *, const char *);

/* imgimport.c: an OCI image layout or docker-archive into dir/rootfs. */
struct import {
	char		 path[PATH_MAX];	/* absolute */
	char		 ref[128];		/* the tag, or "" */
	int		 archive;		/* docker-archive, not a layout */
	char		 source[IMGSTORE_SOURCE_MAX];	/* for the info */
	char		 digest[IMGSTORE_DIGEST_LEN + 1];	/* manifest's */
};
void	 import_options(struct import *, const char *);
void	 import_rootfs(struct import *, const char *);

/* imgstage.c: the store's writer, under its lock. */
struct imgw {
	char		 state[PATH_MAX];	/* the state directory */
	char		 images[PATH_MAX];	/* <state>/images */
	int		 store, names, lock;
	uint64_t	 mnt;			/* store/'s mount */
	char		 stage[NAME_MAX + 1];	/* in store/, or "" */
	char		 stagepath[PATH_MAX];
};
void	 imgw_open(struct imgw *, const char *);
void	 imgw_stage(struct imgw *);
void	 imgw_commit(struct imgw *, const char *, const char *,
	    const char *, struct imgstore_image *);
int	 imgw_unname(struct imgw *, const char *);
void	 imgw_close(struct imgw *);

/* spawn.c: a tool run without a shell, its output on stderr. */
extern volatile sig_atomic_t	 spawn_quit;
void	 spawn_signals(void);
int	 spawn(const char *const [], const char *);

/* audit.c */
int	 audit_list(struct mcpctl *, int, char **);
int	 audit_show(struct mcpctl *, int, char **);
int	 audit_tail(struct mcpctl *, int, char **);
int	 audit_export(struct mcpctl *, int, char **);
int	 audit_keygen(struct mcpctl *, int, char **);

/* verify.c */
int	 audit_verify(struct mcpctl *, int, char **);
int	 audit_anchor(struct mcpctl *, int, char **);

/* auditdb.c */
int	 auditdb_open(struct auditdb *, const char *, char *, size_t);
int	 auditdb_reopen(struct auditdb *, char *, size_t);
void	 auditdb_close(struct auditdb *);
int	 auditdb_select(struct auditdb *, sqlite3_stmt **,
	    const struct filter *, int64_t, int64_t, int);
void	 auditdb_row(sqlite3_stmt *, struct record *);
void	 record_clear(struct record *);
extern const char	 auditdb_columns[];

/* filter.c */
int	 time_parse(const char *, int64_t, int64_t *);
int64_t	 time_now_ns(void);
void	 time_format(int64_t, int, char *, size_t);
int	 filter_option(struct filter *, int, const char *, char *, size_t);
extern const struct option	filter_longopts[];

/* body.c */
struct body_iter {
	const char	*p;
	const char	*end;
};
void	 body_iter_init(struct body_iter *, const char *, size_t);
/* The next line as key and decoded value (malloc'd), or 0 at the end. */
int	 body_next(struct body_iter *, char **, char **, size_t *);
/* Bytes made safe for a terminal: C escapes, UTF-8 kept when valid. */
char	*str_vis(const char *, size_t);
/* Bytes as valid UTF-8 for JSON: a bad byte becomes U+FFFD. */
char	*str_utf8(const char *, size_t, size_t *);

#endif
