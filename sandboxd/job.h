/*
 * A client request in progress.  request.c turns a frame into a job,
 * checking every field against the policy; job.c carries it out, step by
 * step, with callbacks from sandbox.c, exec.c, fileop.c and audit.c.
 */
#ifndef MCPD_JOB_H
#define MCPD_JOB_H

#include <sys/queue.h>

#include <stdint.h>

#include <sodium.h>

#include "proto.h"
#include "sandboxd.h"

#define JOB_ARGS_MAX		4096
#define JOB_ARGS_BYTES		(1024 * 1024)
#define JOB_ENV_MAX		256
#define JOB_ENV_BYTES		(64 * 1024)
#define JOB_FILES_MAX		1000
#define JOB_OUT_MAX		(64 * 1024)	/* kept of an own run's stdout */
#define JOB_OWN_TIMEOUT		60000		/* ms, for an own run */

#define JOB_COLLECT_NONE	0
#define JOB_COLLECT_LIST	1	/* listing the workspace */
#define JOB_COLLECT_READ	2	/* reading pictures[pic_next - 1] */

/*
 * Where a job's intent record is, for a job that goes on while auditd
 * commits it: a one-shot run, or an exec.  Its command waits for DONE.
 */
#define JOB_AUDIT_AWAITED	0	/* acknowledged before it began */
#define JOB_AUDIT_PENDING	1
#define JOB_AUDIT_DONE		2
#define JOB_AUDIT_REFUSED	3

struct client {
	struct conn		*c;
	TAILQ_HEAD(, job)	 jobs;
	int64_t			 since;		/* connected, seconds */
};

struct jfile {
	char			 path[INIT_PATH_MAX];
	uint32_t		 mode;
	const uint8_t		*data;
	uint64_t		 size;
};

struct job {
	TAILQ_ENTRY(job)	 entry;
	TAILQ_ENTRY(job)	 all;		/* every job, for sandbox_free() */
	struct client		*cl;		/* NULL once it went away */
	uint32_t		 reqid;
	uint32_t		 type;		/* IMSG_SBX_* */
	void			*data;		/* the request frame's payload */
	size_t			 datalen;
	const struct tenant	*tenant;
	/*
	 * mcpctl's requests for any tenant: the sandbox's tenant, by name,
	 * is job->tenant.
	 */
	int			 admin;
	struct tenant		 owner;
	struct sandbox		*sb;
	char			 sbid[SBX_ID_LEN + 1];	/* sb's, once it is gone */
	int			 oneshot;	/* a sandbox of its own */
	int			 reserved;	/* CREATE: a place held */
	struct limits		 lim;		/* in force for this job */
	const struct language	*lang;
	char			 image[SBX_NAME_MAX];
	char			 name[SBX_NAME_MAX];

	/* RUN and EXEC */
	const char		**args;
	size_t			 nargs;
	const char		**env;
	size_t			 nenv;
	struct jfile		*files;
	size_t			 nfiles;
	const uint8_t		*code;
	size_t			 codelen;
	const uint8_t		*stdin_data;
	size_t			 stdin_len;
	char			 cwd[INIT_PATH_MAX];
	uint32_t		 exec_flags;	/* SBX_EXEC_* */
	uint64_t		 deadline_ns;
	int			 logging;	/* into the sandbox's log */
	/* What the audit record says of the output: digests, excerpts. */
	crypto_hash_sha256_state out_hash[2];
	char			*out_excerpt[2];
	size_t			 out_excerpt_len[2];

	/* LOGS */
	uint64_t		 log_max;	/* bytes, 0 : all */

	/* RUN, after the program: what it made (SBX_CREATED_MAX) */
	int			 collect;	/* JOB_COLLECT_* */
	int			 listed;	/* LIST done before the end */
	int64_t			 run_start;	/* seconds since the epoch */
	uint32_t		 ncreated;
	char			*pics[SBX_PICTURES_MAX];
	uint64_t		 pic_size[SBX_PICTURES_MAX];
	size_t			 npics;
	size_t			 pic_next;
	uint64_t		 pic_bytes;

	/* IMAGES */
	uint32_t		 images_flags;	/* SBX_IMAGES_* */
	TAILQ_ENTRY(job)	 wait;		/* for probes to end */

	/* sandboxd's own runs: no client; done() has the result */
	void			(*done)(struct job *);
	void			*done_arg;
	char			*out;		/* stdout, up to JOB_OUT_MAX */
	size_t			 outlen;

	/* file operations */
	uint32_t		 init_type;	/* IMSG_INIT_* */
	struct init_file	 fhdr;
	char			 path[INIT_PATH_MAX];
	const uint8_t		*content;

	/* progress */
	void			(*next)(struct job *);
	int			 audit;		/* JOB_AUDIT_*: the intent */
	struct exec		*exec;
	int			 pending;	/* file writes under way */
	int			 cancelled;
	int			 sb_gone;	/* its sandbox was freed meanwhile */
	int			 in_build;
	struct sbx_result	 result;
	uint32_t		 err_code;	/* SBX_E_*, 0 while fine */
	int32_t			 err_errno;
	char			 error[SBX_MSG_MAX];
	uint64_t		 start_ns;
	struct event		*ev_grace;	/* STOP */
};

/* job.c */
/* A frame answering the job's request, if its client is still there. */
void		 job_send(struct job *, uint32_t, const void *, size_t);
/*
 * A run of sandboxd's own: sh -c script in a fresh one-shot container of
 * image, under the default limits and no network, recorded in the audit
 * log like any run.  done(job) is called as it ends, with job->result,
 * job->err_code and job->error, and job->out, then the job is freed.
 */
void		 job_own_run(const char *image, const char *script,
		    void (*)(struct job *), void *);
/* The images of an IMAGES job are probed: answer it. */
void		 job_images_answer(struct job *);

/* request.c */
int		 request_type(uint32_t);
struct job	*job_alloc(void);
/* On failure, tenant names the tenant the request was resolved to, if any. */
struct job	*request_parse(struct client *, struct imsg *, uint32_t *,
		    char *, size_t, char *, size_t);
int		 request_path(const char *, char *, size_t, int);
void		 job_free(struct job *);
/* Done with its sandbox: the id stays, for the result's record. */
void		 job_forget_sandbox(struct job *);
/* A sandbox is being freed: jobs still naming it let go of it. */
void		 job_sandbox_freed(struct sandbox *);

#endif
