/*
 * Requests from mcpd and mcpctl, validated whole before any of them is
 * acted on: sizes, strings, paths, names, and every limit against the
 * tenant's policy.  Nothing from a request becomes a host path; paths are
 * for sandbox-init, beneath the workspace.
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "util.h"

/* A cursor over the variable part of a request. */
struct cursor {
	const uint8_t	*p;
	size_t		 left;
};

static int
req_fail(uint32_t *code, char *err, size_t len, uint32_t c,
    const char *fmt, ...) __attribute__((__format__(printf, 5, 6)));

static int
req_fail(uint32_t *code, char *err, size_t len, uint32_t c, const char *fmt,
    ...)
{
	va_list	 ap;

	*code = c;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
cur_strings(struct cursor *cur, size_t n, const char ***out)
{
	ssize_t	 used;

	*out = NULL;
	if (n == 0)
		return 0;
	*out = xcalloc(n, sizeof(**out));
	if ((used = proto_strings(cur->p, cur->left, n, *out, 0)) == -1)
		return -1;
	cur->p += used;
	cur->left -= (size_t)used;
	return 0;
}

/* The fixed head of a request into out; the cursor on what follows. */
static int
req_head(const struct imsg *imsg, void *out, size_t size, struct cursor *cur)
{
	if (imsg->datalen < size)
		return -1;
	memcpy(out, imsg->data, size);
	cur->p = (const uint8_t *)imsg->data + size;
	cur->left = imsg->datalen - size;
	return 0;
}

static const void *
cur_bytes(struct cursor *cur, size_t n)
{
	const void	*p = cur->p;

	if (n > cur->left)
		return NULL;
	cur->p += n;
	cur->left -= n;
	return p;
}

static int
fixed_str(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/*
 * A path beneath the workspace, normalised: relative, no "." or empty
 * parts; ".." and control characters refused; "/workspace/x" taken as "x".
 */
int
request_path(const char *in, char *out, size_t len, int allow_root)
{
	const char	*p = in, *end;
	size_t		 n, o = 0, wl = strlen(INIT_WORKSPACE);

	if (strlen(in) >= INIT_PATH_MAX)
		return -1;
	for (p = in; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -1;
	p = in;
	if (*p == '/') {
		if (strncmp(p, INIT_WORKSPACE, wl) != 0 ||
		    (p[wl] != '\0' && p[wl] != '/'))
			return -1;
		p += wl;
	}
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		end = strchr(p, '/');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (!(n == 1 && p[0] == '.')) {
			if (o + n + 2 > len)
				return -1;
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = '\0';
	return (o == 0 && !allow_root) ? -1 : 0;
}

static int
env_valid(const char *s)
{
	const char	*eq = strchr(s, '=');
	const char	*p;

	if (eq == NULL || eq == s || eq - s > 128)
		return 0;
	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	for (p = s; p < eq; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return 1;
}

static int
check_env(struct job *job, uint32_t *code, char *err, size_t len)
{
	size_t	 i, total = 0;

	if (job->nenv > JOB_ENV_MAX)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "too many environment variables (at most %d)",
		    JOB_ENV_MAX);
	for (i = 0; i < job->nenv; i++) {
		if (!env_valid(job->env[i]))
			return req_fail(code, err, len, SBX_E_INVALID,
			    "environment entry %zu is not NAME=value", i + 1);
		total += strlen(job->env[i]) + 1;
	}
	if (total > JOB_ENV_BYTES)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "environment too large (at most %d bytes)", JOB_ENV_BYTES);
	return 0;
}

static int
check_args(struct job *job, uint32_t *code, char *err, size_t len)
{
	size_t	 i, total = 0;

	if (job->nargs > JOB_ARGS_MAX)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "too many arguments (at most %d)", JOB_ARGS_MAX);
	for (i = 0; i < job->nargs; i++)
		total += strlen(job->args[i]) + 1;
	if (total > JOB_ARGS_BYTES)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "arguments too large (at most %d bytes)", JOB_ARGS_BYTES);
	return 0;
}

static void
fmt_bytes(char *buf, size_t len, uint64_t v)
{
	if (v % (1ULL << 30) == 0)
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v % (1ULL << 20) == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
}

/* Asked-for limits within the tenant's: 0 keeps the tenant's own. */
static int
check_limits(struct job *job, const struct sbx_limits *req, uint32_t *code,
    char *err, size_t len)
{
	const struct limits	*t = job->tenant->limits;
	char			 a[32], b[32];

	job->lim = *t;
#define LIM_BYTES(field, name, min) do {				\
	if (req->field != 0) {						\
		if (req->field > t->field) {				\
			fmt_bytes(a, sizeof(a), req->field);		\
			fmt_bytes(b, sizeof(b), t->field);		\
			return req_fail(code, err, len, SBX_E_DENIED,	\
			    name " %s exceeds the tenant's limit of %s",\
			    a, b);					\
		}							\
		if (req->field < (min))					\
			return req_fail(code, err, len, SBX_E_INVALID,	\
			    name " too small");				\
		job->lim.field = req->field;				\
	}								\
} while (0)
	LIM_BYTES(memory, "memory", 4ULL << 20);
	LIM_BYTES(disk, "disk", 1ULL << 20);
	LIM_BYTES(output, "output", 1024);
#undef LIM_BYTES
#define LIM_NUM(field, name, unit) do {					\
	if (req->field != 0) {						\
		if (req->field > t->field)				\
			return req_fail(code, err, len, SBX_E_DENIED,	\
			    name " %llu%s exceeds the tenant's limit of "\
			    "%llu%s", (unsigned long long)req->field,	\
			    unit, (unsigned long long)t->field, unit);	\
		job->lim.field = req->field;				\
	}								\
} while (0)
	LIM_NUM(timeout, "timeout", " ms");
	LIM_NUM(idle, "idle time", " ms");
	LIM_NUM(lifetime, "lifetime", " ms");
	LIM_NUM(pids, "pids", "");
#undef LIM_NUM
	if (req->cpus != 0) {
		if (req->cpus > t->cpus)
			return req_fail(code, err, len, SBX_E_DENIED,
			    "cpus %u.%03u exceeds the tenant's limit of "
			    "%u.%03u", req->cpus / 1000, req->cpus % 1000,
			    t->cpus / 1000, t->cpus % 1000);
		if (req->cpus < 10)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "cpus too small (at least 0.01)");
		job->lim.cpus = req->cpus;
	}
	switch (req->network) {
	case SBX_NET_DEFAULT:
		break;
	case SBX_NET_NONE:
		job->lim.network = NET_NONE;
		break;
	case SBX_NET_EGRESS:
		if (t->network != NET_EGRESS)
			return req_fail(code, err, len, SBX_E_DENIED,
			    "network egress is not allowed for this tenant");
		job->lim.network = NET_EGRESS;
		break;
	default:
		return req_fail(code, err, len, SBX_E_INVALID,
		    "unknown network mode %u", req->network);
	}
	return 0;
}

/*
 * The administrator's request for any tenant: every sandbox, or one by
 * its id, a one-shot run's included (a warm one no run has claimed yet
 * is nobody's).
 */
static int
check_ref_any(struct job *job, const struct sbx_ref *ref, int want_sandbox,
    uint32_t *code, char *err, size_t len)
{
	job->admin = 1;
	job->tenant = &job->owner;
	if (!want_sandbox)
		return 0;
	if (!sandbox_id_valid(ref->id) ||
	    (job->sb = sandbox_find(NULL, ref->id)) == NULL ||
	    job->sb->pooled || reuse_held(job->sb))
		return req_fail(code, err, len, SBX_E_NOTFOUND,
		    "no sandbox %s", ref->id);
	str_copy(job->owner.name, job->sb->tenant, sizeof(job->owner.name));
	return 0;
}

static int
check_ref(struct job *job, const struct sbx_ref *ref, int want_sandbox,
    uint32_t *code, char *err, size_t len)
{
	if (!fixed_str(ref->tenant, sizeof(ref->tenant)) ||
	    !fixed_str(ref->id, sizeof(ref->id)))
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (job->cl->c->role == ROLE_MCPCTL && ref->tenant[0] == '\0' &&
	    (job->type == IMSG_SBX_LIST || job->type == IMSG_SBX_STATUS ||
	    job->type == IMSG_SBX_KILL || job->type == IMSG_SBX_LOGS))
		return check_ref_any(job, ref, want_sandbox, code, err, len);
	if (job->cl->c->role == ROLE_MCPD_STDIO) {
		/* The uid is the tenant, whatever the request says. */
		if ((job->tenant = policy_tenant_by_uid(sbd->conf,
		    job->cl->c->cred.uid)) == NULL)
			return req_fail(code, err, len, SBX_E_DENIED,
			    "uid %u is no tenant's",
			    (unsigned)job->cl->c->cred.uid);
	} else if ((job->tenant = policy_tenant(sbd->conf, ref->tenant)) ==
	    NULL)
		return req_fail(code, err, len, SBX_E_DENIED,
		    "unknown tenant \"%s\"", ref->tenant);
	if (!want_sandbox)
		return 0;
	/*
	 * An id, else a name, and only among this tenant's: someone else's
	 * sandbox answers exactly as a missing one.
	 */
	if (sandbox_id_valid(ref->id))
		job->sb = sandbox_find(job->tenant->name, ref->id);
	else if (name_valid(ref->id))
		job->sb = sandbox_find_name(job->tenant->name, ref->id);
	/*
	 * A container kept for the tenant's next run is no sandbox of its:
	 * what an exec left there would meet that run, after the wipe.
	 */
	if (job->sb != NULL && reuse_held(job->sb))
		job->sb = NULL;
	if (job->sb == NULL)
		return req_fail(code, err, len, SBX_E_NOTFOUND,
		    "no sandbox %s", ref->id);
	return 0;
}

static int
check_image(struct job *job, const char *image, uint32_t *code, char *err,
    size_t len)
{
	if (image[0] == '\0')
		image = job->lang != NULL ? job->lang->image : HOST_IMAGE;
	if (stored_usable(image) == NULL)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "unknown image \"%s\"", image);
	if (sandbox_runtime(job->tenant->name, image) == NULL)
		return req_fail(code, err, len, SBX_E_DENIED, "the runtime "
		    "for tenant %s and image %s was named by a reload: "
		    "restart mcp-sandboxd to use it", job->tenant->name,
		    image);
	str_copy(job->image, image, sizeof(job->image));
	return 0;
}

static int
check_language(struct job *job, const char *name, uint32_t *code, char *err,
    size_t len)
{
	if (name[0] == '\0')
		return 0;
	if ((job->lang = policy_language(sbd->conf, name)) == NULL)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "unknown language \"%s\"", name);
	return 0;
}

/*
 * Every job, detached ones included: a job waiting for auditd still names
 * its sandbox, which a STOP may free meanwhile.
 */
static TAILQ_HEAD(, job)	 all_jobs = TAILQ_HEAD_INITIALIZER(all_jobs);

/*
 * The creates of job's tenant validated and not yet made (their intent on
 * its way to auditd): each holds its place in the tenant's count, and its
 * name, from its validation until create_acquire() makes its sandbox or
 * the job ends, whatever ends it.  -1 when one holds job's name.
 */
static int
create_pending(const struct job *job, uint32_t *n)
{
	const struct job	*o;

	*n = 0;
	TAILQ_FOREACH(o, &all_jobs, all) {
		if (!o->reserved ||
		    strcmp(o->tenant->name, job->tenant->name) != 0)
			continue;
		if (job->name[0] != '\0' && strcmp(o->name, job->name) == 0)
			return -1;
		(*n)++;
	}
	return 0;
}

static int
parse_create(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_create	 r;
	struct cursor		 cur;
	struct sandbox		*sb;
	uint32_t		 n = 0, pending;

	if (req_head(imsg, &r, sizeof(r), &cur) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (check_ref(job, &r.ref, 0, code, err, len) == -1)
		return -1;
	if (!fixed_str(r.name, sizeof(r.name)) ||
	    !fixed_str(r.image, sizeof(r.image)) ||
	    !fixed_str(r.language, sizeof(r.language)) ||
	    r.envc > JOB_ENV_MAX || cur_strings(&cur, r.envc, &job->env) ==
	    -1 || cur.left != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	job->nenv = r.envc;
	if (r.name[0] != '\0' && !name_valid(r.name))
		return req_fail(code, err, len, SBX_E_INVALID,
		    "a sandbox name is letters, digits, '.', '_' and '-'");
	/* Requests take an id or a name: an id-shaped one is never a name. */
	if (sandbox_id_valid(r.name))
		return req_fail(code, err, len, SBX_E_INVALID,
		    "a sandbox name may not look like a sandbox id");
	str_copy(job->name, r.name, sizeof(job->name));
	if (check_language(job, r.language, code, err, len) == -1 ||
	    check_image(job, r.image, code, err, len) == -1 ||
	    check_limits(job, &r.lim, code, err, len) == -1 ||
	    check_env(job, code, err, len) == -1)
		return -1;
	TAILQ_FOREACH(sb, &sbd->sandboxes, entry) {
		if (!sb->persistent ||
		    strcmp(sb->tenant, job->tenant->name) != 0)
			continue;
		n++;
		if (job->name[0] != '\0' && strcmp(sb->name, job->name) == 0)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "a sandbox named \"%s\" exists", job->name);
	}
	if (create_pending(job, &pending) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "a sandbox named \"%s\" is being created", job->name);
	if (n + pending >= job->tenant->max_sandboxes)
		return req_fail(code, err, len, SBX_E_DENIED,
		    "the tenant is at its limit of %u sandboxes (%u made, %u "
		    "being made)", job->tenant->max_sandboxes, n, pending);
	job->reserved = 1;
	return 0;
}

static int
parse_files(struct job *job, struct cursor *cur, uint32_t nfiles,
    uint32_t *code, char *err, size_t len)
{
	struct sbx_filehdr	 fh;
	const char		*path;
	size_t			 i;

	if (nfiles > JOB_FILES_MAX)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "too many files (at most %d)", JOB_FILES_MAX);
	job->files = nfiles ? xcalloc(nfiles, sizeof(*job->files)) : NULL;
	job->nfiles = nfiles;
	for (i = 0; i < nfiles; i++) {
		if (cur->left < sizeof(fh))
			return req_fail(code, err, len, SBX_E_INVALID,
			    "malformed request");
		memcpy(&fh, cur_bytes(cur, sizeof(fh)), sizeof(fh));
		if (fh.pathlen < 2 || fh.pathlen > INIT_PATH_MAX ||
		    (path = cur_bytes(cur, fh.pathlen)) == NULL ||
		    path[fh.pathlen - 1] != '\0' ||
		    memchr(path, '\0', fh.pathlen - 1) != NULL ||
		    fh.size > cur->left)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "malformed request");
		if (request_path(path, job->files[i].path,
		    sizeof(job->files[i].path), 0) == -1)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "file path \"%.64s\": not a path beneath "
			    "/workspace", path);
		if ((fh.mode & ~0777U) != 0)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "file mode %o: permission bits only", fh.mode);
		job->files[i].mode = fh.mode != 0 ? fh.mode : 0644;
		job->files[i].size = fh.size;
		job->files[i].data = cur_bytes(cur, (size_t)fh.size);
	}
	return 0;
}

static int
parse_run(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_run	 r;
	struct cursor	 cur;

	if (req_head(imsg, &r, sizeof(r), &cur) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	job->oneshot = r.ref.id[0] == '\0';
	if (check_ref(job, &r.ref, !job->oneshot, code, err, len) == -1)
		return -1;
	if (!fixed_str(r.language, sizeof(r.language)) ||
	    !fixed_str(r.image, sizeof(r.image)) || r.flags != 0 ||
	    r.argc > JOB_ARGS_MAX || r.envc > JOB_ENV_MAX ||
	    cur_strings(&cur, r.argc, &job->args) == -1 ||
	    cur_strings(&cur, r.envc, &job->env) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	job->nargs = r.argc;
	job->nenv = r.envc;
	if (parse_files(job, &cur, r.nfiles, code, err, len) == -1)
		return -1;
	if (r.stdinlen > SBX_RUN_STDIN_MAX)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "stdin too large (at most %d bytes)", SBX_RUN_STDIN_MAX);
	if ((job->code = cur_bytes(&cur, r.codelen)) == NULL ||
	    (job->stdin_data = cur_bytes(&cur, r.stdinlen)) == NULL ||
	    cur.left != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	job->codelen = r.codelen;
	job->stdin_len = r.stdinlen;
	if (check_language(job, r.language, code, err, len) == -1)
		return -1;
	if (job->lang == NULL && job->nargs == 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "give a language or a command");
	if (job->lang == NULL && job->codelen != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "code needs a language");
	if (job->oneshot) {
		if (check_image(job, r.image, code, err, len) == -1 ||
		    check_limits(job, &r.lim, code, err, len) == -1)
			return -1;
		if (job->lang != NULL && probe_lacks(policy_image(sbd->conf,
		    job->image), job->lang))
			return req_fail(code, err, len, SBX_E_INVALID,
			    "image %s has no %s: call list_languages to see "
			    "what it runs", job->image, job->lang->name);
	} else {
		job->lim = job->sb->lim;
		if (r.lim.timeout != 0) {
			if (r.lim.timeout > job->sb->lim.timeout)
				return req_fail(code, err, len, SBX_E_DENIED,
				    "timeout %llu ms exceeds the sandbox's "
				    "limit of %llu ms",
				    (unsigned long long)r.lim.timeout,
				    (unsigned long long)job->sb->lim.timeout);
			job->lim.timeout = r.lim.timeout;
		}
		str_copy(job->image, job->sb->image, sizeof(job->image));
	}
	return check_args(job, code, err, len) == -1 ||
	    check_env(job, code, err, len) == -1 ? -1 : 0;
}

static int
parse_exec(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_exec	 r;
	struct cursor	 cur;
	const char	*cwd;

	if (req_head(imsg, &r, sizeof(r), &cur) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (check_ref(job, &r.ref, 1, code, err, len) == -1)
		return -1;
	if (r.cwdlen < 1 || r.cwdlen > INIT_PATH_MAX ||
	    (cwd = cur_bytes(&cur, r.cwdlen)) == NULL ||
	    cwd[r.cwdlen - 1] != '\0' ||
	    memchr(cwd, '\0', r.cwdlen - 1) != NULL ||
	    (r.flags & ~SBX_EXEC_SHELL) != 0 || r.argc < 1 ||
	    r.argc > JOB_ARGS_MAX || r.envc > JOB_ENV_MAX ||
	    cur_strings(&cur, r.argc, &job->args) == -1 ||
	    cur_strings(&cur, r.envc, &job->env) == -1 ||
	    r.stdinlen > SBX_RUN_STDIN_MAX ||
	    (job->stdin_data = cur_bytes(&cur, r.stdinlen)) == NULL ||
	    cur.left != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	job->nargs = r.argc;
	job->nenv = r.envc;
	job->stdin_len = r.stdinlen;
	job->exec_flags = r.flags;
	if ((r.flags & SBX_EXEC_SHELL) && r.argc != 1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "a shell command is one string");
	if (request_path(cwd, job->cwd, sizeof(job->cwd), 1) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "cwd \"%.64s\": not a directory beneath /workspace", cwd);
	job->lim = job->sb->lim;
	if (r.timeout != 0) {
		if (r.timeout > job->sb->lim.timeout)
			return req_fail(code, err, len, SBX_E_DENIED,
			    "timeout %llu ms exceeds the sandbox's limit of "
			    "%llu ms", (unsigned long long)r.timeout,
			    (unsigned long long)job->sb->lim.timeout);
		job->lim.timeout = r.timeout;
	}
	return check_args(job, code, err, len) == -1 ||
	    check_env(job, code, err, len) == -1 ? -1 : 0;
}

static int
parse_file(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_file	 r;
	struct cursor	 cur;
	const char	*path;
	int		 root;

	if (req_head(imsg, &r, sizeof(r), &cur) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (check_ref(job, &r.ref, 1, code, err, len) == -1)
		return -1;
	if (r.pathlen < 1 || r.pathlen > INIT_PATH_MAX ||
	    (path = cur_bytes(&cur, r.pathlen)) == NULL ||
	    path[r.pathlen - 1] != '\0' ||
	    memchr(path, '\0', r.pathlen - 1) != NULL ||
	    (r.flags & ~(INIT_F_MKDIRS | INIT_F_APPEND | INIT_F_RECURSIVE |
	    INIT_F_DIR)) != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	memset(&job->fhdr, 0, sizeof(job->fhdr));
	job->fhdr.flags = r.flags;
	root = 0;
	switch (imsg->hdr.type) {
	case IMSG_SBX_WRITE:
		job->init_type = IMSG_INIT_WRITE;
		if ((r.mode & ~0777U) != 0)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "mode %o: permission bits only", r.mode);
		job->fhdr.mode = r.mode != 0 ? r.mode :
		    (r.flags & INIT_F_DIR) ? 0755 : 0644;
		if ((r.flags & INIT_F_DIR) && r.size != 0)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "a directory has no content");
		if ((job->content = cur_bytes(&cur, r.size)) == NULL)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "malformed request");
		job->fhdr.size = r.size;
		break;
	case IMSG_SBX_READ:
		job->init_type = IMSG_INIT_READ;
		job->fhdr.size = r.size == 0 || r.size > SBX_FILE_MAX ?
		    SBX_FILE_MAX : r.size;
		break;
	case IMSG_SBX_LIST_FILES:
		job->init_type = IMSG_INIT_LIST;
		job->fhdr.size = r.size == 0 || r.size > SBX_LIST_MAX ?
		    SBX_LIST_MAX : r.size;
		root = 1;
		break;
	case IMSG_SBX_DELETE:
		job->init_type = IMSG_INIT_DELETE;
		break;
	case IMSG_SBX_OPEN:
		if (job->sb->guest)
			return req_fail(code, err, len, SBX_E_INVALID,
			    "a sandbox under %s keeps its files in its own "
			    "kernel: they cannot be handed out as links",
			    job->sb->runtime);
		job->init_type = IMSG_INIT_OPEN;
		break;
	}
	if (cur.left != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (request_path(path, job->path, sizeof(job->path), root) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "path \"%.64s\": not a path beneath /workspace (no \"..\", "
		    "no control characters)", path);
	job->lim = job->sb->lim;
	return 0;
}

static int
parse_ref(struct job *job, struct imsg *imsg, int want_sandbox,
    uint32_t *code, char *err, size_t len)
{
	struct sbx_ref	 r;

	if (proto_payload(imsg->data, imsg->datalen, &r, sizeof(r)) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	return check_ref(job, &r, want_sandbox, code, err, len);
}

static int
parse_logs(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_logs	 r;

	if (proto_payload(imsg->data, imsg->datalen, &r, sizeof(r)) == -1)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (check_ref(job, &r.ref, 1, code, err, len) == -1)
		return -1;
	/* A one-shot sandbox keeps no log, and is nobody's to name. */
	if (!job->sb->persistent)
		return req_fail(code, err, len, SBX_E_NOTFOUND,
		    "no sandbox %s", r.ref.id);
	job->log_max = r.max;
	return 0;
}

static int
parse_images(struct job *job, struct imsg *imsg, uint32_t *code, char *err,
    size_t len)
{
	struct sbx_images	 r;

	if (proto_payload(imsg->data, imsg->datalen, &r, sizeof(r)) == -1 ||
	    (r.flags & ~SBX_IMAGES_LANGS) != 0)
		return req_fail(code, err, len, SBX_E_INVALID,
		    "malformed request");
	if (check_ref(job, &r.ref, 0, code, err, len) == -1)
		return -1;
	job->images_flags = r.flags;
	return 0;
}

/* Done with the sandbox; its id stays, for the result's record. */
void
job_forget_sandbox(struct job *job)
{
	if (job->sb != NULL)
		str_copy(job->sbid, job->sb->id, sizeof(job->sbid));
	job->sb = NULL;
}

void
job_sandbox_freed(struct sandbox *sb)
{
	struct job	*job;

	TAILQ_FOREACH(job, &all_jobs, all)
		if (job->sb == sb) {
			job_forget_sandbox(job);
			job->sb_gone = 1;
		}
}

void
job_free(struct job *job)
{
	size_t	 i;

	TAILQ_REMOVE(&all_jobs, job, all);
	free(job->out_excerpt[0]);
	free(job->out_excerpt[1]);
	if (job->ev_grace != NULL)
		event_free(job->ev_grace);
	free(job->args);
	free(job->env);
	free(job->files);
	free(job->data);
	free(job->out);
	for (i = 0; i < job->npics; i++)
		free(job->pics[i]);
	free(job);
}

struct job *
job_alloc(void)
{
	struct job	*job;

	job = xcalloc(1, sizeof(*job));
	TAILQ_INSERT_TAIL(&all_jobs, job, all);
	job->start_ns = mono_ns();
	return job;
}

/* A client's request that request_parse() takes (CANCEL too). */
int
request_type(uint32_t type)
{
	return (type >= IMSG_SBX_CREATE && type <= IMSG_SBX_CANCEL) ||
	    type == IMSG_SBX_LOGS || type == IMSG_SBX_IMAGES ||
	    type == IMSG_SBX_KILL || type == IMSG_SBX_OPEN;
}

/*
 * A new job from a request frame, or NULL with the error code and message
 * to answer with.
 */
struct job *
request_parse(struct client *cl, struct imsg *imsg, uint32_t *code,
    char *err, size_t len, char *tenant, size_t tlen)
{
	struct job	*job;
	int		 rv = -1;

	job = job_alloc();
	job->cl = cl;
	job->reqid = imsg->hdr.peerid;
	job->type = imsg->hdr.type;
	/* Keep the payload: the job's strings point into it. */
	job->data = imsg->data;
	job->datalen = imsg->datalen;
	imsg->data = NULL;
	imsg->datalen = 0;
	{
		struct imsg	 view = *imsg;

		view.data = job->data;
		view.datalen = job->datalen;
		switch (imsg->hdr.type) {
		case IMSG_SBX_CREATE:
			rv = parse_create(job, &view, code, err, len);
			break;
		case IMSG_SBX_RUN:
			rv = parse_run(job, &view, code, err, len);
			break;
		case IMSG_SBX_EXEC:
			rv = parse_exec(job, &view, code, err, len);
			break;
		case IMSG_SBX_WRITE:
		case IMSG_SBX_READ:
		case IMSG_SBX_LIST_FILES:
		case IMSG_SBX_DELETE:
		case IMSG_SBX_OPEN:
			rv = parse_file(job, &view, code, err, len);
			break;
		case IMSG_SBX_STOP:
		case IMSG_SBX_STATUS:
			rv = parse_ref(job, &view, 1, code, err, len);
			break;
		case IMSG_SBX_KILL:
			if (cl->c->role != ROLE_MCPCTL)
				rv = req_fail(code, err, len, SBX_E_DENIED,
				    "only mcpctl may kill sandboxes");
			else
				rv = parse_ref(job, &view, 1, code, err, len);
			break;
		case IMSG_SBX_LIST:
			rv = parse_ref(job, &view, 0, code, err, len);
			break;
		case IMSG_SBX_LOGS:
			rv = parse_logs(job, &view, code, err, len);
			break;
		case IMSG_SBX_IMAGES:
			rv = parse_images(job, &view, code, err, len);
			break;
		default:
			req_fail(code, err, len, SBX_E_INVALID,
			    "unknown request type %u", imsg->hdr.type);
		}
	}
	if (rv == -1) {
		str_copy(tenant, job->tenant != NULL ? job->tenant->name : "",
		    tlen);
		job_free(job);
		return NULL;
	}
	return job;
}
