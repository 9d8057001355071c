/*
 * Jobs: requests carried out step by step.
 *
 * Each goes: an intent record to auditd (waited for when audit is
 * required), the sandbox's container (started if need be), the work, the
 * answer, a result record.  A client that goes away leaves its jobs to
 * finish quietly: running execs are killed, one-shot sandboxes destroyed.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "auditbody.h"
#include "job.h"
#include "log.h"
#include "mime.h"
#include "util.h"

static const char *const base_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/workspace",
	"LANG=C.UTF-8",
	"TMPDIR=/tmp",
	/*
	 * The image is read-only: pip --user installs into the workspace,
	 * which Debian's pip refuses without this (PEP 668).
	 */
	"PIP_BREAK_SYSTEM_PACKAGES=1",
};

static void	job_finish(struct job *);
static void	job_release(struct job *);
static void	run_files(struct job *, const char *);
static int	run_build(struct job *);
static int	run_main(struct job *);
static int	collect_early(struct job *, uint32_t *);
static int	collect_begin(struct job *);
static void	collect_next(struct job *);

/* Answers to the client, if it is still there. */

void
job_send(struct job *job, uint32_t type, const void *data, size_t len)
{
	if (job->cl != NULL)
		conn_compose(job->cl->c, type, job->reqid, -1, data, len);
}

size_t
job_client_queued(struct job *job)
{
	return job->cl != NULL ? imsgbuf_queued(&job->cl->c->iev.ibuf) : 0;
}

/* A digest of all the output sent, and its first bytes, for the record. */
static void
job_output_audit(struct job *job, uint32_t stream, const void *buf,
    size_t len)
{
	size_t	 i = stream == SBX_STREAM_STDERR, room;
	size_t	 max = sbd->conf->audit.excerpt;

	if (job->out_excerpt[i] == NULL) {
		crypto_hash_sha256_init(&job->out_hash[i]);
		job->out_excerpt[i] = xmalloc(max + 1);
	}
	crypto_hash_sha256_update(&job->out_hash[i], buf, len);
	room = max - job->out_excerpt_len[i];
	if (room > len)
		room = len;
	memcpy(job->out_excerpt[i] + job->out_excerpt_len[i], buf, room);
	job->out_excerpt_len[i] += room;
}

static void
job_output_record(struct job *job, struct audit_body *b, size_t i,
    const char *name)
{
	uint8_t	 h[crypto_hash_sha256_BYTES];
	char	 key[32], hex[sizeof(h) * 2 + 1];

	if (job->out_excerpt[i] == NULL)
		return;
	crypto_hash_sha256_final(&job->out_hash[i], h);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	snprintf(key, sizeof(key), "%s.excerpt", name);
	audit_body_bytes(b, key, job->out_excerpt[i], job->out_excerpt_len[i],
	    job->out_excerpt_len[i]);
	snprintf(key, sizeof(key), "%s.sha256", name);
	audit_body_str(b, key, hex);
	free(job->out_excerpt[i]);
	job->out_excerpt[i] = NULL;
}

void
job_output(struct job *job, uint32_t stream, uint32_t phase,
    const void *buf, size_t len)
{
	struct sbx_output	 o;
	struct iovec		 iov[2];

	if (job->logging)
		outlog_append(&job->sb->log, buf, len);
	job_output_audit(job, stream, buf, len);
	if (job->done != NULL && stream == SBX_STREAM_STDOUT &&
	    job->outlen < JOB_OUT_MAX) {
		if (len > JOB_OUT_MAX - job->outlen)
			len = JOB_OUT_MAX - job->outlen;
		if (job->out == NULL)
			job->out = xmalloc(JOB_OUT_MAX);
		memcpy(job->out + job->outlen, buf, len);
		job->outlen += len;
	}
	if (job->cl == NULL)
		return;
	o.stream = stream;
	o.phase = phase;
	iov[0].iov_base = &o;
	iov[0].iov_len = sizeof(o);
	iov[1].iov_base = (void *)(uintptr_t)buf;
	iov[1].iov_len = len;
	conn_composev(job->cl->c, IMSG_SBX_OUTPUT, job->reqid, -1, iov, 2);
}

static void
job_error(struct job *job, uint32_t code, int32_t err, const char *fmt, ...)
    __attribute__((__format__(printf, 4, 5)));

/* Remember the first error; job_finish() answers with it. */
static void
job_error(struct job *job, uint32_t code, int32_t err, const char *fmt, ...)
{
	va_list	 ap;

	if (job->err_code != 0)
		return;
	job->err_code = code;
	job->err_errno = err;
	va_start(ap, fmt);
	vsnprintf(job->error, sizeof(job->error), fmt, ap);
	va_end(ap);
}

static uint32_t
job_event(const struct job *job)
{
	switch (job->type) {
	case IMSG_SBX_CREATE:
		return AEV_SANDBOX_CREATE;
	case IMSG_SBX_RUN:
		return AEV_RUN;
	case IMSG_SBX_EXEC:
		return AEV_EXEC;
	case IMSG_SBX_WRITE:
		return AEV_FILE_WRITE;
	case IMSG_SBX_READ:
	case IMSG_SBX_OPEN:
		return AEV_FILE_READ;
	case IMSG_SBX_LIST_FILES:
		return AEV_FILE_LIST;
	case IMSG_SBX_DELETE:
		return AEV_FILE_DELETE;
	default:
		return AEV_SANDBOX_STOP;
	}
}

static const char *
job_sandbox_id(const struct job *job)
{
	return job->sb != NULL ? job->sb->id : job->sbid;
}

/* What the intent record says of the request. */
static void
job_intent_body(struct job *job, struct audit_body *b)
{
	size_t	 i, fbytes = 0;

	switch (job->type) {
	case IMSG_SBX_RUN:
	case IMSG_SBX_EXEC:
		audit_body_u64(b, "args", job->nargs);
		if (job->type == IMSG_SBX_EXEC && job->nargs > 0)
			audit_body_bytes(b, "command", job->args[0],
			    strlen(job->args[0]), sbd->conf->audit.excerpt);
		if (job->codelen > 0) {
			audit_body_u64(b, "code.bytes", job->codelen);
			audit_body_bytes(b, "code.excerpt", job->code,
			    job->codelen, sbd->conf->audit.excerpt);
			audit_body_digest(b, "code.sha256", job->code,
			    job->codelen);
		}
		audit_body_u64(b, "cpus", job->lim.cpus);
		if (job->type == IMSG_SBX_EXEC)
			audit_body_str(b, "cwd", job->cwd);
		audit_body_u64(b, "disk", job->lim.disk);
		audit_body_u64(b, "env", job->nenv);
		for (i = 0; i < job->nfiles; i++)
			fbytes += job->files[i].size;
		audit_body_u64(b, "files", job->nfiles);
		audit_body_u64(b, "files.bytes", fbytes);
		audit_body_str(b, "image", job->image);
		if (job->lang != NULL)
			audit_body_str(b, "language", job->lang->name);
		audit_body_u64(b, "memory", job->lim.memory);
		audit_body_str(b, "network", job->lim.network == NET_EGRESS ?
		    "egress" : "none");
		audit_body_str(b, "oneshot", job->oneshot ? "yes" : "no");
		if (job->done != NULL)
			audit_body_str(b, "own", "probe");
		audit_body_u64(b, "stdin.bytes", job->stdin_len);
		audit_body_u64(b, "timeout", job->lim.timeout);
		break;
	case IMSG_SBX_CREATE:
		audit_body_u64(b, "cpus", job->lim.cpus);
		audit_body_u64(b, "disk", job->lim.disk);
		audit_body_u64(b, "env", job->nenv);
		audit_body_str(b, "image", job->image);
		audit_body_u64(b, "lifetime", job->lim.lifetime);
		audit_body_u64(b, "memory", job->lim.memory);
		audit_body_str(b, "name", job->name);
		audit_body_str(b, "network", job->lim.network == NET_EGRESS ?
		    "egress" : "none");
		break;
	case IMSG_SBX_WRITE:
		audit_body_digest(b, "content.sha256", job->content,
		    (size_t)job->fhdr.size);
		audit_body_u64(b, "flags", job->fhdr.flags);
		audit_body_u64(b, "mode", job->fhdr.mode);
		audit_body_str(b, "path", job->path);
		audit_body_u64(b, "size", job->fhdr.size);
		break;
	case IMSG_SBX_READ:
	case IMSG_SBX_LIST_FILES:
	case IMSG_SBX_DELETE:
	case IMSG_SBX_OPEN:
		audit_body_u64(b, "flags", job->fhdr.flags);
		if (job->type == IMSG_SBX_OPEN)
			audit_body_str(b, "for", "download");
		audit_body_str(b, "path", job->path);
		break;
	case IMSG_SBX_KILL:
		audit_body_str(b, "by", "mcpctl");
		audit_body_str(b, "signal", "KILL");
		if (job->cl != NULL)
			audit_body_u64(b, "uid", job->cl->c->cred.uid);
		break;
	}
}

static void
job_result_record(struct job *job)
{
	struct audit_body	 b;
	struct sbx_result	*r = &job->result;

	audit_body_init(&b);
	if (job->err_code != 0) {
		audit_body_str(&b, "error", job->error);
		audit_body_u64(&b, "error.code", job->err_code);
	} else if (job->type == IMSG_SBX_RUN || job->type == IMSG_SBX_EXEC) {
		audit_body_u64(&b, "cpu_ms", r->cpu_ms);
		audit_body_i64(&b, "exit", r->exit_code);
		audit_body_u64(&b, "flags", r->flags);
		audit_body_u64(&b, "peak_memory", r->peak_memory);
		/* In a container kept from its tenant's earlier runs. */
		if (job->oneshot && job->sb != NULL && job->sb->reused > 0)
			audit_body_u64(&b, "reused", job->sb->reused);
		audit_body_i64(&b, "signal", r->signal);
		audit_body_u64(&b, "stderr.bytes", r->stderr_bytes);
		job_output_record(job, &b, 1, "stderr");
		audit_body_u64(&b, "stdout.bytes", r->stdout_bytes);
		job_output_record(job, &b, 0, "stdout");
		audit_body_u64(&b, "wall_ms", r->wall_ms);
	}
	audit_send(job_event(job), job->err_code == 0 ? AOC_OK :
	    job->err_code == SBX_E_DENIED ? AOC_DENIED : AOC_FAILED,
	    job->tenant->name, job_sandbox_id(job), &b, NULL, NULL);
	audit_body_free(&b);
}

/* The line in the sandbox's log that says how its exec ended. */
static void
job_log_end(struct job *job)
{
	struct sbx_result	 r;

	if (!job->logging)
		return;
	job->logging = 0;
	if (job->err_code == 0)
		outlog_trailer(&job->sb->log, &job->result, NULL);
	else if (job->err_code == SBX_E_CANCELLED) {
		memset(&r, 0, sizeof(r));
		r.flags = SBX_R_CANCELLED;
		outlog_trailer(&job->sb->log, &r, NULL);
	} else
		outlog_trailer(&job->sb->log, NULL, job->error);
}

/* Did it end without error, timeout, OOM kill or cancellation? */
static int
job_clean(const struct job *job)
{
	return job->err_code == 0 && !job->cancelled &&
	    (job->result.flags & (SBX_R_TIMED_OUT | SBX_R_OOM |
	    SBX_R_CANCELLED)) == 0;
}

/* Answer, record the outcome, and let go of everything. */
static void
job_finish(struct job *job)
{
	struct sbx_error	 e;

	job_log_end(job);

	if (job->err_code != 0) {
		memset(&e, 0, sizeof(e));
		e.code = job->err_code;
		e.err = job->err_errno;
		str_copy(e.message, job->error, sizeof(e.message));
		job_send(job, IMSG_SBX_ERROR, &e, sizeof(e));
	} else if (job->type == IMSG_SBX_RUN || job->type == IMSG_SBX_EXEC)
		job_send(job, IMSG_SBX_RESULT, &job->result,
		    sizeof(job->result));
	job_result_record(job);
	if (job->sb != NULL) {
		sandbox_forget_job(job->sb, job);
		/* Writes still under way end without it. */
		fileop_forget_job(job->sb, job);
		if (job->oneshot) {
			if (!reuse_offer(job->sb, job_clean(job)))
				sandbox_destroy(job->sb, 0, "the run is over");
			pool_fill();
		}
		else if (job->sb->persistent && job->sb->state != SB_STOPPING)
			sandbox_touch(job->sb);
	}
	audit_cancel(job);
	if (job->cl != NULL)
		TAILQ_REMOVE(&job->cl->jobs, job, entry);
	if (job->done != NULL)
		job->done(job);
	job_free(job);
}

/* Gone: its client went away or cancelled it.  sandboxd's own never go. */
static int
job_gone(struct job *job)
{
	if ((job->cl != NULL || job->done != NULL) && !job->cancelled)
		return 0;
	job_error(job, SBX_E_CANCELLED, 0, "the request was cancelled");
	return 1;
}

/*
 * The sandbox's container is up, or could not come up: 1 to go on, or 0
 * once the job has been finished.
 */
static int
job_ready(struct job *job, const char *error)
{
	if (error != NULL) {
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
		job_finish(job);
		return 0;
	}
	if (job_gone(job)) {
		job_finish(job);
		return 0;
	}
	return 1;
}

static void
job_audited(void *arg, int ok, const char *error)
{
	struct job	*job = arg;

	if (!ok) {
		job_error(job, SBX_E_AUDIT, 0, "audit is required and the "
		    "record was not committed: %s", error);
		job_finish(job);
		return;
	}
	if (job_gone(job)) {
		job_finish(job);
		return;
	}
	if (job->sb_gone) {
		job_error(job, SBX_E_NOTFOUND, 0, "the sandbox was stopped "
		    "while this request waited");
		job_finish(job);
		return;
	}
	job->next(job);
}

/*
 * The intent of a job that went on meanwhile is committed, or refused: its
 * command, held at the sync point if it is started, may execute, or never
 * does, and the job ends with the refusal.
 */
static void
job_gate(void *arg, int ok, const char *error)
{
	struct job	*job = arg;

	if (!ok) {
		job->audit = JOB_AUDIT_REFUSED;
		job_error(job, SBX_E_AUDIT, 0, "audit is required and the "
		    "record was not committed: %s", error);
		if (job->exec != NULL)
			exec_cancel(job->exec);
		return;
	}
	job->audit = JOB_AUDIT_DONE;
	job_release(job);
}

/*
 * A held command executes once its intent is committed and its files
 * are written.
 */
static void
job_release(struct job *job)
{
	if (job->exec != NULL && job->audit != JOB_AUDIT_PENDING &&
	    job->pending == 0)
		exec_release(job->exec);
}

static void
job_send_intent(struct job *job, audit_done_fn done)
{
	struct audit_body	 b;

	audit_body_init(&b);
	job_intent_body(job, &b);
	audit_send(job_event(job), AOC_INTENT, job->tenant->name,
	    job_sandbox_id(job), &b, done, job);
	audit_body_free(&b);
}

/*
 * Send the intent and go on at once: 0, or -1 when it was refused then
 * and there (the job is finished).  Nothing in the sandbox executes
 * before the commit (job_exec()), and nothing it does outlives a refusal
 * but what goes with a one-shot container.
 */
static int
job_intent_early(struct job *job)
{
	job->audit = JOB_AUDIT_PENDING;
	job_send_intent(job, job_gate);
	if (job->audit != JOB_AUDIT_REFUSED)
		return 0;
	job_finish(job);
	return -1;
}

static void
job_intent(struct job *job, void (*next)(struct job *))
{
	job->next = next;
	job_send_intent(job, job_audited);
}

/* Execs. */

static uint64_t
job_time_left(struct job *job)
{
	uint64_t	 now = mono_ns();

	if (now >= job->deadline_ns)
		return 1;
	return (job->deadline_ns - now) / 1000000 + 1;
}

/* The environment of an exec: ours, the sandbox's, then the request's. */
static const char **
job_env(struct job *job, size_t *n)
{
	const char	**env, *eq;
	size_t		 i, j, k, cap;
	const char *const *srcs[3] = { base_env,
			    (const char *const *)(job->sb->env),
			    job->env };
	size_t		 counts[3] = { nitems(base_env), job->sb->nenv,
			    job->nenv };

	cap = counts[0] + counts[1] + counts[2];
	env = xcalloc(cap + 1, sizeof(*env));
	*n = 0;
	for (i = 0; i < 3; i++)
		for (j = 0; j < counts[i]; j++) {
			eq = strchr(srcs[i][j], '=');
			/* A later source replaces an earlier one's name. */
			for (k = 0; k < *n; k++)
				if (strncmp(env[k], srcs[i][j],
				    (size_t)(eq - srcs[i][j]) + 1) == 0)
					break;
			env[k] = srcs[i][j];
			if (k == *n)
				(*n)++;
		}
	return env;
}

/*
 * A persistent sandbox logs what its execs write, under the command as
 * the client gave it: a RUN's build and program under one header.
 */
static void
job_log_begin(struct job *job)
{
	char	*run = NULL;

	if (job->logging || !job->sb->persistent)
		return;
	job->logging = 1;
	if (job->type == IMSG_SBX_EXEC && (job->exec_flags & SBX_EXEC_SHELL))
		outlog_header(&job->sb->log, job->args[0], NULL, 0);
	else if (job->lang != NULL) {
		xasprintf(&run, "run %s", job->lang->name);
		outlog_header(&job->sb->log, run, job->args, job->nargs);
	} else
		outlog_header(&job->sb->log, NULL, job->args, job->nargs);
	free(run);
}

/* job_exec() flags */
#define JOB_X_LOOKUP	0x01	/* argv[0] in PATH */
#define JOB_X_SHELL	0x02	/* argv is /bin/sh -c SCRIPT [sh args...] */
#define JOB_X_COLLECT	0x04	/* a run's program: what it makes is listed */

static int
job_exec(struct job *job, const char *const *argv, size_t argc, int flags,
    uint32_t phase, const void *in, size_t inlen)
{
	struct exec_spec	 spec;
	const char		**env;
	size_t			 nenv;

	/* Refused while the sandbox got ready: the error is set. */
	if (job->audit == JOB_AUDIT_REFUSED)
		return -1;
	job_log_begin(job);
	env = job_env(job, &nenv);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	spec.argc = argc;
	spec.env = env;
	spec.envc = nenv;
	spec.cwd = job->cwd;
	spec.stdin_data = in;
	spec.stdin_len = inlen;
	spec.timeout = job_time_left(job);
	spec.output = job->lim.output;
	spec.phase = phase;
	spec.path_lookup = (flags & JOB_X_LOOKUP) != 0;
	spec.shell = (flags & JOB_X_SHELL) != 0;
	spec.hold = job->audit == JOB_AUDIT_PENDING || job->pending > 0;
	if ((flags & JOB_X_COLLECT) && collect_early(job, &spec.list_id) == 0)
		spec.list = 1;
	job->exec = exec_start(job->sb, &spec, job);
	free(env);
	if (job->exec == NULL) {
		if (spec.list) {
			fileop_unexpect(job->sb, spec.list_id);
			job->collect = JOB_COLLECT_NONE;
		}
		job_error(job, SBX_E_INTERNAL, 0, "cannot start the command");
		return -1;
	}
	return 0;
}

static int
job_succeeded(const struct sbx_result *r)
{
	return r->exit_code == 0 && r->signal == 0 &&
	    !(r->flags & (SBX_R_TIMED_OUT | SBX_R_OOM | SBX_R_EXEC_FAILED |
	    SBX_R_CANCELLED));
}

void
job_exec_done(struct job *job, const struct sbx_result *r, const char *error)
{
	job->exec = NULL;
	if (r == NULL) {
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
		job_finish(job);
		return;
	}
	job->result = *r;
	if (job->cancelled)
		job->result.flags |= SBX_R_CANCELLED;
	if (job->pending > 0) {
		/* Killed or failed while held for its files: it never ran. */
		job_finish(job);
		return;
	}
	if (job->in_build) {
		job->in_build = 0;
		if (!job_succeeded(r)) {
			job->result.flags |= SBX_R_BUILD_FAILED;
			job_finish(job);
			return;
		}
		if (job_gone(job)) {
			job_finish(job);
			return;
		}
		run_main(job);
		return;
	}
	if (collect_begin(job) == 0)
		return;
	job_finish(job);
}

/*
 * RUN: files, then build, then the program, then what they made.  The
 * first command goes with the files rather than after them: sandbox-init
 * forks it while it writes them, and it waits at the sync point until
 * they are written (job_release()).  The run is spared a round trip to
 * sandbox-init, and the fork is done while auditd commits the intent.
 */

static void
run_ready(struct job *job, const char *error)
{
	struct init_file	 h;
	size_t			 i;

	struct timespec		 ts;

	if (!job_ready(job, error))
		return;
	job->deadline_ns = mono_ns() + job->lim.timeout * 1000000;
	/* The clock the kernel stamps files with. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	job->run_start = ts.tv_sec;
	job->pending = 1;	/* until every write is queued */
	memset(&h, 0, sizeof(h));
	h.flags = INIT_F_MKDIRS;
	for (i = 0; i < job->nfiles; i++) {
		h.mode = job->files[i].mode;
		h.size = job->files[i].size;
		job->pending++;
		fileop_start(job->sb, job, IMSG_INIT_WRITE, &h,
		    job->files[i].path, job->files[i].data);
	}
	if (job->lang != NULL) {
		h.mode = 0644;
		h.size = job->codelen;
		job->pending++;
		fileop_start(job->sb, job, IMSG_INIT_WRITE, &h,
		    job->lang->file, job->code);
	}
	/* pending counts one more until run_files() below. */
	if (job->pending > 1 && job->err_code == 0 && run_build(job) == -1)
		return;
	run_files(job, NULL);
}

/* One file written (or failed); the last one moves the run on. */
static void
run_files(struct job *job, const char *error)
{
	if (error != NULL)
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
	if (--job->pending > 0)
		return;
	if (job->err_code != 0 || job_gone(job)) {
		if (job->exec != NULL)
			exec_cancel(job->exec);	/* its end ends the job */
		else
			job_finish(job);
		return;
	}
	if (job->exec != NULL)
		job_release(job);
	else
		run_build(job);
}

/*
 * A policy command for sh -c.  A simple one is exec'd, so the program is
 * what ends the exec, with its own exit status or signal; a compound one
 * runs as written.
 */
static char *
job_command(const char *cmd, int with_args)
{
	char	*script;

	if (strpbrk(cmd, ";&|()<>`$\\\n'\"") == NULL)
		xasprintf(&script, "exec %s%s", cmd, with_args ? " \"$@\"" :
		    "");
	else
		xasprintf(&script, "%s%s", cmd, with_args ? " \"$@\"" : "");
	return script;
}

/* The build's command, or the program's: 0, or -1 once finished. */
static int
run_build(struct job *job)
{
	const char	*argv[3];
	char		*script;
	int		 rv;

	if (job->lang == NULL || job->lang->build == NULL)
		return run_main(job);
	script = job_command(job->lang->build, 0);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;
	job->in_build = 1;
	rv = job_exec(job, argv, 3, JOB_X_SHELL, SBX_PHASE_BUILD, NULL, 0);
	free(script);
	if (rv == -1)
		job_finish(job);
	return rv;
}

static int
run_main(struct job *job)
{
	const char	**argv;
	char		*script = NULL;
	size_t		 argc, i;
	int		 rv;

	if (job->lang != NULL) {
		/* The policy's command, the user's args as "$@": no
		 * argument is ever parsed by the shell. */
		script = job_command(job->lang->run, 1);
		argc = 4 + job->nargs;
		argv = xcalloc(argc, sizeof(*argv));
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = script;
		argv[3] = "sh";
		for (i = 0; i < job->nargs; i++)
			argv[4 + i] = job->args[i];
		rv = job_exec(job, argv, argc, JOB_X_SHELL | JOB_X_COLLECT,
		    SBX_PHASE_RUN, job->stdin_data, job->stdin_len);
	} else {
		argv = job->args;
		rv = job_exec(job, argv, job->nargs, JOB_X_LOOKUP,
		    SBX_PHASE_RUN, job->stdin_data, job->stdin_len);
		argv = NULL;
	}
	free(argv);
	free(script);
	if (rv == -1)
		job_finish(job);
	return rv;
}

/* Did the request itself write the file? */
static int
run_wrote(const struct job *job, const char *path)
{
	size_t	 i;

	if (strcmp(path, job->lang->file) == 0)
		return 1;
	for (i = 0; i < job->nfiles; i++)
		if (strcmp(path, job->files[i].path) == 0)
			return 1;
	return 0;
}

/* The listing of a run's workspace, as init makes it unasked. */
static void
collect_listing(struct init_file *h)
{
	memset(h, 0, sizeof(*h));
	h->flags = INIT_F_RECURSIVE;
	h->size = SBX_LIST_MAX;
}

/*
 * The workspace is listed once the program has ended, for a client that
 * is still there.  sandbox-init does it unasked as the program ends
 * (INIT_EXEC_LIST), a round trip sooner, unless as many operations are
 * in flight as it takes: 0 with the listing's id, or -1 when it cannot.
 */
static int
collect_early(struct job *job, uint32_t *id)
{
	struct init_file	 h;

	if (job->type != IMSG_SBX_RUN || job->lang == NULL)
		return -1;
	collect_listing(&h);
	if (fileop_expect(job->sb, job, IMSG_INIT_LIST, &h, id) == -1)
		return -1;
	job->collect = JOB_COLLECT_LIST;
	return 0;
}

/* The program has ended: 0 if its files are collected, or -1. */
static int
collect_begin(struct job *job)
{
	struct init_file	 h;

	if (job->type != IMSG_SBX_RUN || job->lang == NULL ||
	    job->err_code != 0 || job->cl == NULL || job->cancelled ||
	    job->sb == NULL)
		return -1;	/* job_finish() lets go of an early listing */
	if (job->collect == JOB_COLLECT_LIST) {
		/* Listed by init as the program ended (collect_early()). */
		if (job->listed)
			collect_next(job);
		return 0;	/* else its DONE goes on */
	}
	collect_listing(&h);
	job->collect = JOB_COLLECT_LIST;
	fileop_start(job->sb, job, IMSG_INIT_LIST, &h, "", NULL);
	return 0;
}

/* Entries of the listing (checked by fileop.c): the run's own go on. */
static void
collect_entries(struct job *job, const uint8_t *p, size_t len)
{
	struct init_entry	 e;
	const char		*name;
	uint8_t			*out = xmalloc(len);
	size_t			 off, next, n = 0, i;

	for (off = 0; off < len; off = next) {
		memcpy(&e, p + off, sizeof(e));
		name = (const char *)p + off + sizeof(e);
		next = off + sizeof(e) + e.namelen;
		if (!S_ISREG(e.mode) || e.mtime < job->run_start ||
		    run_wrote(job, name) || job->ncreated >= SBX_CREATED_MAX)
			continue;
		memcpy(out + n, p + off, next - off);
		n += next - off;
		job->ncreated++;
		if (!mime_is_image(mime_guess(name)) || e.size == 0 ||
		    e.size > SBX_PICTURE_MAX ||
		    job->npics >= SBX_PICTURES_MAX ||
		    job->pic_bytes + e.size > SBX_PICTURES_BYTES)
			continue;
		i = job->npics++;
		job->pics[i] = xstrdup(name);
		job->pic_size[i] = e.size;
		job->pic_bytes += e.size;
	}
	if (n > 0)
		job_send(job, IMSG_SBX_ENTRY, out, n);
	free(out);
}

/* The next picture, whose DATA follows its PICTURE frame; or the end. */
static void
collect_next(struct job *job)
{
	struct sbx_picture	 sp;
	struct init_file	 h;
	const char		*path;
	uint8_t			*frame;

	if (job->pic_next >= job->npics || job->cl == NULL ||
	    job->cancelled) {
		job->collect = JOB_COLLECT_NONE;
		job_finish(job);
		return;
	}
	path = job->pics[job->pic_next];
	memset(&sp, 0, sizeof(sp));
	sp.size = job->pic_size[job->pic_next++];
	sp.pathlen = (uint32_t)strlen(path) + 1;
	frame = xmalloc(sizeof(sp) + sp.pathlen);
	memcpy(frame, &sp, sizeof(sp));
	memcpy(frame + sizeof(sp), path, sp.pathlen);
	job_send(job, IMSG_SBX_PICTURE, frame, sizeof(sp) + sp.pathlen);
	free(frame);
	memset(&h, 0, sizeof(h));
	h.size = sp.size;
	job->collect = JOB_COLLECT_READ;
	fileop_start(job->sb, job, IMSG_INIT_READ, &h, path, NULL);
}

/*
 * The runtime of the job's new sandbox; NULL, the job finished, if a
 * reload named one the helper never checked (the request was checked,
 * but a reload may have come since).
 */
static const struct runtime *
job_runtime(struct job *job)
{
	const struct runtime	*rt;

	if ((rt = sandbox_runtime(job->tenant->name, job->image)) == NULL) {
		job_error(job, SBX_E_DENIED, 0, "the runtime for tenant %s "
		    "and image %s was named by a reload: restart "
		    "mcp-sandboxd to use it", job->tenant->name, job->image);
		job_finish(job);
	}
	return rt;
}

/* A one-shot run's container: warm, or a new one.  -1 once finished. */
static int
run_claim(struct job *job)
{
	char	 id[SBX_ID_LEN + 1];
	uint32_t slot;

	const struct runtime	*rt;

	if ((rt = job_runtime(job)) == NULL)
		return -1;
	if ((job->sb = pool_claim(job->image, job->tenant->name,
	    &job->lim, rt)) != NULL) {
		if (job->sb->reused > 0)
			log_debug("sandbox %s: reused (run %u), for a run of "
			    "tenant %s (runtime %s)", job->sb->id,
			    job->sb->reused + 1, job->tenant->name, rt->name);
		else
			log_debug("sandbox %s: warm, for a run of tenant %s "
			    "(runtime %s)", job->sb->id, job->tenant->name,
			    rt->name);
		return 0;
	}
	if (sandbox_slot_alloc(&slot) == -1) {
		job_error(job, SBX_E_BUSY, 0, "all %u sandbox slots are "
		    "in use; try again shortly", sbd->conf->uid_slots);
		job_finish(job);
		return -1;
	}
	sandbox_new_id(id);
	job->sb = sandbox_new(id, job->tenant->name, job->image, &job->lim, 0,
	    "", rt);
	job->sb->slot = slot;
	TAILQ_INSERT_TAIL(&sbd->sandboxes, job->sb, entry);
	return 0;
}

/* A run in a persistent sandbox, its intent committed. */
static void
run_acquire(struct job *job)
{
	sandbox_want(job->sb, job, run_ready);
}

/* EXEC in a persistent sandbox. */

static void
exec_ready(struct job *job, const char *error)
{
	const char	*argv[3];

	if (!job_ready(job, error))
		return;
	job->deadline_ns = mono_ns() + job->lim.timeout * 1000000;
	if (job->exec_flags & SBX_EXEC_SHELL) {
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = job->args[0];
		if (job_exec(job, argv, 3, JOB_X_SHELL, SBX_PHASE_RUN,
		    job->stdin_data, job->stdin_len) == -1)
			job_finish(job);
	} else if (job_exec(job, job->args, job->nargs, JOB_X_LOOKUP,
	    SBX_PHASE_RUN, job->stdin_data, job->stdin_len) == -1)
		job_finish(job);
}

static void
exec_acquire(struct job *job)
{
	sandbox_want(job->sb, job, exec_ready);
}

/* File operations. */

void
job_file_data(struct job *job, uint32_t type, const void *data, size_t len)
{
	if (job->collect == JOB_COLLECT_LIST)
		collect_entries(job, data, len);
	else
		job_send(job, type, data, len);
}

void
job_file_done(struct job *job, uint32_t type, const struct init_done *d,
    const char *error, int fd)
{
	struct sbx_done	 done;

	if (job->type == IMSG_SBX_RUN && type == IMSG_INIT_WRITE) {
		if (error == NULL && d->error != 0)
			job_error(job, SBX_E_FILE, d->error, "writing a file: "
			    "%s", strerror(d->error));
		run_files(job, error);
		return;
	}
	if (job->type == IMSG_SBX_RUN) {
		/* The listing or a picture.  A file gone meanwhile is only
		 * not shown; a sandbox gone ends the run with the result it
		 * has (its exec ended first, and with it the job). */
		if (error != NULL) {
			job->collect = JOB_COLLECT_NONE;
			job_finish(job);
		} else if (job->exec != NULL)
			job->listed = 1;	/* the program's end goes on */
		else
			collect_next(job);
		return;
	}
	if (error != NULL)
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
	else if (d->error != 0)
		job_error(job, SBX_E_FILE, d->error, "%s: %s",
		    job->path[0] ? job->path : "/workspace",
		    d->error == EXDEV ? "leads outside the workspace" :
		    d->error == ELOOP ? "a symbolic link leads outside the "
		    "workspace" : strerror(d->error));
	else {
		memset(&done, 0, sizeof(done));
		done.flags = d->flags;
		done.mode = d->mode;
		done.size = d->size;
		done.mtime = d->mtime;
		if (fd != -1 && job->cl != NULL)
			conn_compose(job->cl->c, IMSG_SBX_DONE, job->reqid, fd,
			    &done, sizeof(done));
		else
			job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
		fd = -1;	/* conn_compose() owns it, sent or not */
	}
	if (fd != -1)
		close(fd);
	job_finish(job);
}

static void
file_ready(struct job *job, const char *error)
{
	if (!job_ready(job, error))
		return;
	fileop_start(job->sb, job, job->init_type, &job->fhdr, job->path,
	    job->content);
}

static void
file_acquire(struct job *job)
{
	sandbox_want(job->sb, job, file_ready);
}

/* CREATE, STOP, LIST, STATUS. */

static void
job_info(struct job *job, const struct sandbox *sb, uint32_t type)
{
	struct sbx_info	 in;
	int64_t		 idle, life;

	memset(&in, 0, sizeof(in));
	memcpy(in.id, sb->id, sizeof(sb->id));
	str_copy(in.name, sb->name, sizeof(in.name));
	str_copy(in.tenant, sb->tenant, sizeof(in.tenant));
	str_copy(in.image, sb->image, sizeof(in.image));
	str_copy(in.runtime, sb->runtime, sizeof(in.runtime));
	in.lim.memory = sb->lim.memory;
	in.lim.disk = sb->lim.disk;
	in.lim.output = sb->lim.output;
	in.lim.timeout = sb->lim.timeout;
	in.lim.idle = sb->lim.idle;
	in.lim.lifetime = sb->lim.lifetime;
	in.lim.cpus = sb->lim.cpus;
	in.lim.pids = sb->lim.pids;
	in.lim.network = sb->lim.network == NET_EGRESS ? SBX_NET_EGRESS :
	    SBX_NET_NONE;
	in.created = sb->created;
	in.last_used = sb->last_used;
	idle = sb->last_used + (int64_t)(sb->lim.idle / 1000);
	life = sb->created + (int64_t)(sb->lim.lifetime / 1000);
	in.expires = idle < life ? idle : life;
	in.state = sb->state == SB_RUNNING ? SBX_STATE_RUNNING :
	    SBX_STATE_IDLE;
	if (sb->state == SB_RUNNING)
		in.memory = cgroup_memory_now(sb->id);
	in.execs = exec_count(sb);
	if (!sb->persistent)
		in.flags |= SBX_INFO_ONESHOT;
	/* A host pid is the administrator's business alone. */
	if (job->cl != NULL && job->cl->c->role == ROLE_MCPCTL)
		in.init_pid = sb->init_pid;
	job_send(job, type, &in, sizeof(in));
}

static void
create_ready(struct job *job, const char *error)
{
	if (error != NULL) {
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
		state_delete(job->sb->id);
		sandbox_destroy(job->sb, PRIV_DESTROY_WORKSPACE, error);
		job_forget_sandbox(job);
		job_finish(job);
		return;
	}
	job_info(job, job->sb, IMSG_SBX_CREATED);
	job_finish(job);
}

static void
create_acquire(struct job *job)
{
	const struct runtime	*rt;
	char	 id[SBX_ID_LEN + 1];
	uint32_t slot;
	size_t	 i;

	if ((rt = job_runtime(job)) == NULL)
		return;
	if (sandbox_slot_alloc(&slot) == -1) {
		job_error(job, SBX_E_BUSY, 0, "all %u sandbox slots are in "
		    "use", sbd->conf->uid_slots);
		job_finish(job);
		return;
	}
	sandbox_new_id(id);
	job->sb = sandbox_new(id, job->tenant->name, job->image, &job->lim, 1,
	    job->name, rt);
	job->sb->slot = slot;
	for (i = 0; i < job->nenv; i++) {
		job->sb->env = xreallocarray(job->sb->env, job->sb->nenv + 1,
		    sizeof(*job->sb->env));
		job->sb->env[job->sb->nenv++] = xstrdup(job->env[i]);
	}
	TAILQ_INSERT_TAIL(&sbd->sandboxes, job->sb, entry);
	/* The sandbox holds the place its validation reserved. */
	job->reserved = 0;
	if (state_save(job->sb) == -1) {
		TAILQ_REMOVE(&sbd->sandboxes, job->sb, entry);
		sandbox_slot_free(slot);
		sandbox_free(job->sb);
		job_forget_sandbox(job);
		job_error(job, SBX_E_INTERNAL, 0, "cannot record the sandbox");
		job_finish(job);
		return;
	}
	log_info("sandbox %s created for tenant %s (image %s)", id,
	    job->tenant->name, job->image);
	sandbox_want(job->sb, job, create_ready);
}

void
job_sandbox_stopped(struct job *job, const char *error)
{
	struct sbx_done	 done;

	if (error != NULL)
		job_error(job, SBX_E_INTERNAL, 0, "%s", error);
	else {
		memset(&done, 0, sizeof(done));
		job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
	}
	/* The sandbox is gone: do not touch it again. */
	job_forget_sandbox(job);
	job_finish(job);
}

static void
stop_kill(evutil_socket_t fd, short events, void *arg)
{
	struct job	*job = arg;

	state_delete(job->sb->id);
	sandbox_destroy(job->sb, PRIV_DESTROY_WORKSPACE, "stopped");
}

static void
stop_begin(struct job *job)
{
	struct timeval	 tv = { STOP_GRACE_MS / 1000,
			    (STOP_GRACE_MS % 1000) * 1000 };

	if (job->sb->stopper != NULL || job->sb->state == SB_STOPPING) {
		job_error(job, SBX_E_NOTFOUND, 0, "no sandbox %s",
		    job->sb->id);
		job_forget_sandbox(job);
		job_finish(job);
		return;
	}
	job->sb->stopper = job;
	log_info("sandbox %s of tenant %s: stopping", job->sb->id,
	    job->tenant->name);
	if (job->sb->state != SB_RUNNING || TAILQ_EMPTY(&job->sb->execs)) {
		stop_kill(-1, 0, job);
		return;
	}
	/* Running processes get SIGTERM and a grace period first. */
	sandbox_signal(job->sb, SIGTERM);
	if ((job->ev_grace = evtimer_new(sbd->base, stop_kill, job)) == NULL)
		fatalx("cannot create a timer");
	evtimer_add(job->ev_grace, &tv);
}

/*
 * LOGS: the last bytes of the sandbox's log.  Not audited, as LIST and
 * STATUS are not: it reads only what sandboxd holds, never the sandbox.
 */
static void
logs_run(struct job *job)
{
	const struct outlog	*l = &job->sb->log;
	const uint8_t		*p;
	struct sbx_done		 done;
	size_t			 n, off, k;

	n = l->len;
	if (job->log_max != 0 && job->log_max < n)
		n = (size_t)job->log_max;
	for (off = l->len - n; off < l->len; off += k) {
		if ((k = outlog_span(l, off, &p)) > PROTO_CHUNK)
			k = PROTO_CHUNK;
		job_send(job, IMSG_SBX_DATA, p, k);
	}
	memset(&done, 0, sizeof(done));
	done.flags = l->dropped || n < l->len ? INIT_D_TRUNCATED : 0;
	done.size = n;
	done.mtime = l->mtime;
	job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
}

/* A tenant's persistent sandboxes; mcpctl's for any tenant, runs' too. */
static void
list_run(struct job *job)
{
	struct sandbox	*sb;
	struct sbx_done	 done;

	memset(&done, 0, sizeof(done));
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (sb->state == SB_STOPPING || sb->pooled || reuse_held(sb))
			continue;
		if (job->admin ? 1 : sb->persistent &&
		    strcmp(sb->tenant, job->tenant->name) == 0) {
			job_info(job, sb, IMSG_SBX_INFO);
			done.size++;
		}
	}
	job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
}

/*
 * KILL: the sandbox's processes and container go at once, and a persistent
 * one's disk with them; a run whose sandbox it was ends with the error.
 * A stop in its grace period is hurried on, and answered as usual.
 */
static void
kill_begin(struct job *job)
{
	struct sandbox	*sb = job->sb;
	struct job	*stopper = sb->stopper;
	struct sbx_done	 done;

	log_info("sandbox %s of tenant %s: killed by the administrator",
	    sb->id, sb->tenant[0] != '\0' ? sb->tenant : "(sandboxd's own)");
	if (stopper != NULL && stopper->ev_grace != NULL &&
	    evtimer_pending(stopper->ev_grace, NULL)) {
		evtimer_del(stopper->ev_grace);
		stop_kill(-1, 0, stopper);
	}
	if (sb->stopper != NULL || sb->state == SB_STOPPING) {
		/* On its way out already. */
		memset(&done, 0, sizeof(done));
		job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
		job_forget_sandbox(job);
		job_finish(job);
		return;
	}
	sb->stopper = job;
	if (sb->persistent)
		state_delete(sb->id);
	sandbox_destroy(sb, sb->persistent ? PRIV_DESTROY_WORKSPACE : 0,
	    "killed by the administrator");
}

/* Requests from a client. */

static void
job_begin(struct job *job)
{
	struct sbx_done	 done;

	switch (job->type) {
	case IMSG_SBX_CREATE:
		job_intent(job, create_acquire);
		break;
	case IMSG_SBX_RUN:
		if (!job->oneshot) {
			/* Its files go into a sandbox that stays. */
			job_intent(job, run_acquire);
			break;
		}
		/* The container first, so that the intent names it. */
		if (run_claim(job) == 0 && job_intent_early(job) == 0)
			sandbox_want(job->sb, job, run_ready);
		break;
	case IMSG_SBX_EXEC:
		if (job_intent_early(job) == 0)
			exec_acquire(job);
		break;
	case IMSG_SBX_WRITE:
	case IMSG_SBX_READ:
	case IMSG_SBX_LIST_FILES:
	case IMSG_SBX_DELETE:
	case IMSG_SBX_OPEN:
		job_intent(job, file_acquire);
		break;
	case IMSG_SBX_STOP:
		job_intent(job, stop_begin);
		break;
	case IMSG_SBX_KILL:
		job_intent(job, kill_begin);
		break;
	case IMSG_SBX_LIST:
		list_run(job);
		TAILQ_REMOVE(&job->cl->jobs, job, entry);
		job_free(job);
		break;
	case IMSG_SBX_LOGS:
		logs_run(job);
		TAILQ_REMOVE(&job->cl->jobs, job, entry);
		job_free(job);
		break;
	case IMSG_SBX_IMAGES:
		probe_images(job);
		break;
	case IMSG_SBX_STATUS:
		if (job->sb->persistent || job->admin) {
			job_info(job, job->sb, IMSG_SBX_INFO);
			memset(&done, 0, sizeof(done));
			done.size = 1;
			job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
		} else {
			struct sbx_error e;

			memset(&e, 0, sizeof(e));
			e.code = SBX_E_NOTFOUND;
			snprintf(e.message, sizeof(e.message), "no sandbox %s",
			    job->sb->id);
			job_send(job, IMSG_SBX_ERROR, &e, sizeof(e));
		}
		TAILQ_REMOVE(&job->cl->jobs, job, entry);
		job_free(job);
		break;
	}
}

void
job_own_run(const char *image, const char *script,
    void (*done)(struct job *), void *arg)
{
	static struct tenant	 own;	/* no tenant's: sandboxd's */
	struct job		*job;

	job = job_alloc();
	job->type = IMSG_SBX_RUN;
	job->tenant = &own;
	job->oneshot = 1;
	job->done = done;
	job->done_arg = arg;
	str_copy(job->image, image, sizeof(job->image));
	job->lim = *policy_limits(sbd->conf, "default");
	job->lim.network = NET_NONE;
	job->lim.timeout = JOB_OWN_TIMEOUT;
	job->data = xstrdup(script);
	job->nargs = 3;
	job->args = xcalloc(job->nargs, sizeof(*job->args));
	job->args[0] = "/bin/sh";
	job->args[1] = "-c";
	job->args[2] = job->data;
	job_begin(job);
}

/* IMAGES: each image, and with SBX_IMAGES_LANGS its languages. */
void
job_images_answer(struct job *job)
{
	struct image	*img;
	struct sbx_done	 done;

	memset(&done, 0, sizeof(done));
	TAILQ_FOREACH(img, &sbd->conf->images, entry) {
		if (img->gone)
			continue;
		probe_answer(job, img);
		done.size++;
	}
	job_send(job, IMSG_SBX_DONE, &done, sizeof(done));
	if (job->cl != NULL)
		TAILQ_REMOVE(&job->cl->jobs, job, entry);
	job_free(job);
}

static void
job_cancel(struct client *cl, uint32_t reqid)
{
	struct job	*job;

	TAILQ_FOREACH(job, &cl->jobs, entry)
		if (job->reqid == reqid) {
			job->cancelled = 1;
			if (job->exec != NULL)
				exec_cancel(job->exec);
			return;
		}
}

void
job_dispatch(struct conn *c, struct imsg *imsg)
{
	struct client		*cl = c->data;
	struct job		*job;
	struct sbx_error	 e;
	struct audit_body	 b;
	char			 tenant[SBX_NAME_MAX];
	uint32_t		 code;

	if (imsg->hdr.type == IMSG_SBX_CANCEL) {
		job_cancel(cl, imsg->hdr.peerid);
		return;
	}
	memset(&e, 0, sizeof(e));
	if ((job = request_parse(cl, imsg, &code, e.message,
	    sizeof(e.message), tenant, sizeof(tenant))) == NULL) {
		e.code = code;
		conn_compose(c, IMSG_SBX_ERROR, imsg->hdr.peerid, -1, &e,
		    sizeof(e));
		if (code == SBX_E_DENIED) {
			audit_body_init(&b);
			audit_body_str(&b, "reason", e.message);
			audit_body_u64(&b, "request", imsg->hdr.type);
			audit_send(AEV_POLICY_DENIAL, AOC_DENIED, tenant,
			    NULL, &b, NULL, NULL);
			audit_body_free(&b);
		}
		return;
	}
	TAILQ_INSERT_TAIL(&cl->jobs, job, entry);
	job_begin(job);
}

void
job_conn_down(struct conn *c)
{
	struct client	*cl = c->data;
	struct job	*job;

	/* Jobs finish on their own; their processes are killed now. */
	while ((job = TAILQ_FIRST(&cl->jobs)) != NULL) {
		TAILQ_REMOVE(&cl->jobs, job, entry);
		job->cl = NULL;
		if (job->exec != NULL)
			exec_cancel(job->exec);
	}
	free(cl);
	c->data = NULL;
}
