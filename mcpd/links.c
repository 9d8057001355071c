/*
 * Download links: the sandbox_share_file tool makes them, and
 * /files/<token>/<name> serves them.
 *
 * A link names a file of a persistent sandbox by its path beneath the
 * workspace and by what the file was when it was shared: its inode, size
 * and change time, sealed in the token (share.c) with a key only this
 * mcpd holds.  Serving one, mcpd asks sandboxd, which has sandbox-init
 * open the file beneath the workspace with no symlink on the way; the
 * open descriptor comes back to mcpd, which checks it is still the file
 * shared and streams it as the client takes it, never holding more than
 * a few hundred KiB.  The sandbox gone, the file changed, replaced or
 * deleted: the link is refused.  Each share and each download, refused
 * or not, is an audit record.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "args.h"
#include "auditbody.h"
#include "http.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "mime.h"
#include "policy.h"
#include "proto.h"
#include "share.h"
#include "tools.h"
#include "util.h"

#define LINKS_PREFIX		"/files/"
#define LINK_FILES_MAX		16	/* files one call shares */
#define LINK_CHUNK		(64 * 1024)
/* Hashing a file to share goes a slice at a time, between other work. */
#define HASH_SLICE		(1024 * 1024)
/* Refusals recorded one by one at most this often: a guesser is many. */
#define REFUSALS_PER_S		10

static struct event_base	*links_base;

/* --- Per tenant: downloads at once and bytes a minute ------------------ */

struct ltenant {
	TAILQ_ENTRY(ltenant)	 entry;
	char			 name[NAME_LEN];
	unsigned int		 active;
	double			 budget;	/* bytes that may go now */
	uint64_t		 at;		/* mono_ms() of budget */
};
static TAILQ_HEAD(, ltenant)	 ltenants = TAILQ_HEAD_INITIALIZER(ltenants);

static struct ltenant *
ltenant_get(const char *name)
{
	struct ltenant	*lt;

	TAILQ_FOREACH(lt, &ltenants, entry)
		if (strcmp(lt->name, name) == 0)
			return lt;
	lt = xcalloc(1, sizeof(*lt));
	str_copy(lt->name, name, sizeof(lt->name));
	lt->budget = -1;	/* full, at first use */
	TAILQ_INSERT_TAIL(&ltenants, lt, entry);
	return lt;
}

/* Bytes the tenant's links may send now, at rate bytes a minute. */
static uint64_t
ltenant_budget(struct ltenant *lt, uint64_t rate)
{
	uint64_t	 now = mono_ms();

	if (rate == 0)
		return UINT64_MAX;
	if (lt->budget < 0 || lt->budget > (double)rate)
		lt->budget = (double)rate;
	else
		lt->budget += (double)rate * (double)(now - lt->at) / 60000.0;
	if (lt->budget > (double)rate)
		lt->budget = (double)rate;
	lt->at = now;
	return (uint64_t)lt->budget;
}

/* --- Shared pieces ----------------------------------------------------- */

static int64_t
ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* Is the open file the one the claim describes? */
static int
same_file(const struct stat *st, const struct share_claim *c)
{
	return S_ISREG(st->st_mode) && (uint64_t)st->st_ino == c->ino &&
	    (uint64_t)st->st_size == c->size && ts_ns(&st->st_ctim) ==
	    c->ctime_ns;
}

/* The file's name in a URL: unreserved characters as they are. */
static void
pct_encode(struct evbuffer *b, const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~')
			evbuffer_add(b, p, 1);
		else
			evbuffer_add_printf(b, "%%%c%c", hex[*p >> 4],
			    hex[*p & 15]);
	}
}

static const char *
base_name(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static void
etag_of(const struct share_claim *c, char *buf, size_t len)
{
	snprintf(buf, len, "\"%llx-%llx-%llx\"", (unsigned long long)c->ino,
	    (unsigned long long)c->size, (unsigned long long)c->ctime_ns);
}

/* --- sandbox_share_file ------------------------------------------------ */

struct sfile {
	char		 path[SHARE_PATH_MAX + 1];
	json_t		*result;	/* its entry, once done */
};

struct sharing {
	struct mcp_req		*req;
	struct op		*op;
	struct event		*ev;		/* the next hashing slice */
	const struct tenant	*tenant;
	char			 sandbox[SBX_NAME_MAX];	/* as asked */
	char			 id[SBX_ID_LEN + 1];	/* found */
	char			 base[OAUTH_URL_MAX + 8];
	int64_t			 expires;
	struct sfile		 files[LINK_FILES_MAX];
	size_t			 nfiles, cur, nok;
	/* The file being hashed. */
	int			 fd;
	struct stat		 st;
	uint64_t		 off;
	crypto_hash_sha256_state sha;
	uint8_t			*buf;
	/* run_code's share: its result, to which the links are added. */
	json_t			*content;
	json_t			*result;
	int			 failed;
	size_t			 more;		/* files made past the first 16 */
};

static void	sharing_next(struct sharing *);

static void
sharing_free(struct sharing *sh)
{
	size_t	 i;

	if (sh->op != NULL)
		op_cancel(sh->op);
	if (sh->ev != NULL)
		event_free(sh->ev);
	if (sh->fd != -1)
		close(sh->fd);
	for (i = 0; i < sh->nfiles; i++)
		json_decref(sh->files[i].result);
	json_decref(sh->content);
	json_decref(sh->result);
	free(sh->buf);
	free(sh);
}

static void
sharing_cancel(struct mcp_req *req)
{
	sharing_free(req->hctx);
}

__attribute__((__format__(printf, 2, 3)))
static void
sharing_file_error(struct sharing *sh, const char *fmt, ...)
{
	struct sfile	*f = &sh->files[sh->cur];
	char		 msg[300];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->result = json_pack("{s:s, s:s}", "path", f->path, "error", msg);
	if (sh->fd != -1) {
		close(sh->fd);
		sh->fd = -1;
	}
	sh->cur++;
	sharing_next(sh);
}

static void
sharing_record(struct sharing *sh, const struct sfile *f,
    const char *hexsum)
{
	struct audit_body	 b;
	char			 when[32];

	iso_time(sh->expires, when, sizeof(when));
	audit_body_init(&b);
	audit_body_u64(&b, "ctime_ns", (uint64_t)ts_ns(&sh->st.st_ctim));
	audit_body_str(&b, "expires", when);
	audit_body_u64(&b, "ino", (uint64_t)sh->st.st_ino);
	audit_body_str(&b, "path", f->path);
	audit_body_str(&b, "principal", sh->req->peer.desc);
	audit_body_str(&b, "sha256", hexsum);
	audit_body_u64(&b, "size", (uint64_t)sh->st.st_size);
	maudit_send(AEV_FILE_SHARE, AOC_OK, sh->tenant->name, sh->id, &b);
	audit_body_free(&b);
}

/* The file is hashed: its link. */
static void
sharing_link(struct sharing *sh)
{
	struct sfile		*f = &sh->files[sh->cur];
	struct share_claim	 c;
	struct stat		 st;
	struct evbuffer		*url;
	uint8_t			 sum[crypto_hash_sha256_BYTES];
	char			 hexsum[65], token[SHARE_TOKEN_MAX + 1];
	char			 when[32], *u;
	char			 hosted[POLICY_HOST_NAME_MAX + SHARE_TOKEN_MAX + 2];
	const char		*name = base_name(f->path);
	const char		*mime = mime_guess(name);

	crypto_hash_sha256_final(&sh->sha, sum);
	sodium_bin2hex(hexsum, sizeof(hexsum), sum, sizeof(sum));
	/* The claim is of the file as opened; it must be so still. */
	memset(&c, 0, sizeof(c));
	str_copy(c.tenant, sh->tenant->name, sizeof(c.tenant));
	str_copy(c.sandbox, sh->id, sizeof(c.sandbox));
	str_copy(c.path, f->path, sizeof(c.path));
	c.ino = (uint64_t)sh->st.st_ino;
	c.size = (uint64_t)sh->st.st_size;
	c.ctime_ns = ts_ns(&sh->st.st_ctim);
	c.expires = sh->expires;
	if (fstat(sh->fd, &st) == -1 || !same_file(&st, &c)) {
		sharing_file_error(sh, "the file changed while it was read; "
		    "share it once it is written");
		return;
	}
	if (share_token_make(&c, name, token, sizeof(token)) == -1) {
		sharing_file_error(sh, "no link can name this file");
		return;
	}
	url = evbuffer_new();
	/* Among several hosts, the balancer sends it by the host's name. */
	evbuffer_add_printf(url, "%s" LINKS_PREFIX "%s/", sh->base,
	    host_id(token, hosted, sizeof(hosted)));
	pct_encode(url, name);
	u = buf_text(url);
	evbuffer_free(url);
	iso_time(sh->expires, when, sizeof(when));
	f->result = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}", "path",
	    f->path, "url", u, "size", (json_int_t)st.st_size, "mime_type",
	    mime != NULL ? mime : "application/octet-stream", "sha256", hexsum,
	    "expires", when);
	free(u);
	sharing_record(sh, f, hexsum);
	metrics_link_made();
	log_info("share tenant=%s sandbox=%s path_bytes=%zu size=%lld",
	    sh->tenant->name, sh->id, strlen(f->path),
	    (long long)st.st_size);
	close(sh->fd);
	sh->fd = -1;
	sh->nok++;
	sh->cur++;
	sharing_next(sh);
}

/* One slice of the file into the hash, then back to the loop. */
static void
sharing_hash_cb(evutil_socket_t fd, short events, void *arg)
{
	struct sharing	*sh = arg;
	uint64_t	 want = (uint64_t)sh->st.st_size - sh->off;
	ssize_t		 n;

	if (want == 0) {
		sharing_link(sh);
		return;
	}
	if (want > HASH_SLICE)
		want = HASH_SLICE;
	while ((n = pread(sh->fd, sh->buf, (size_t)want, (off_t)sh->off)) ==
	    -1 && errno == EINTR)
		;
	if (n == -1) {
		sharing_file_error(sh, "reading it: %s", strerror(errno));
		return;
	}
	if (n == 0) {
		sharing_file_error(sh, "the file shrank while it was read");
		return;
	}
	crypto_hash_sha256_update(&sh->sha, sh->buf, (size_t)n);
	sh->off += (uint64_t)n;
	event_active(sh->ev, EV_TIMEOUT, 0);
}

static void
sharing_opened(struct op *op)
{
	struct sharing	*sh = op->arg;
	char		 err[SBX_MSG_MAX];

	sh->op = NULL;
	if (op->final != IMSG_SBX_DONE || op->fd == -1) {
		/* The op's words, before it goes. */
		str_copy(err, op->final == IMSG_SBX_DONE ? "the sandbox "
		    "service sent no file" : op_error(op), sizeof(err));
		op_free(op);
		sharing_file_error(sh, "%s", err);
		return;
	}
	sh->fd = op->fd;
	op->fd = -1;
	op_free(op);
	if (fstat(sh->fd, &sh->st) == -1 || !S_ISREG(sh->st.st_mode)) {
		sharing_file_error(sh, "not a regular file");
		return;
	}
	crypto_hash_sha256_init(&sh->sha);
	sh->off = 0;
	event_active(sh->ev, EV_TIMEOUT, 0);
}

/* run_code's result as it was, and why no link is in it. */
static void
run_unshared(struct mcp_req *req, json_t *content, json_t *st, int failed,
    const char *why)
{
	char	*text;

	json_object_set_new(st, "links", json_array());
	json_object_set_new(st, "links_error", json_string(why));
	xasprintf(&text, "No links to the files: %s.", why);
	json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text",
	    "text", text));
	free(text);
	tool_result(req, content, st, failed);
}

static void
sharing_done(struct sharing *sh)
{
	struct mcp_req	*req = sh->req;
	struct evbuffer	*b = evbuffer_new();
	json_t		*files = json_array(), *r;
	size_t		 i;
	char		*text;

	for (i = 0; i < sh->nfiles; i++) {
		r = sh->files[i].result;
		if (json_object_get(r, "url") != NULL)
			evbuffer_add_printf(b, "%s: %s (%lld bytes, %s, "
			    "sha256 %s), until %s\n", sh->files[i].path,
			    json_string_value(json_object_get(r, "url")),
			    (long long)json_integer_value(json_object_get(r,
			    "size")), json_string_value(json_object_get(r,
			    "mime_type")), json_string_value(json_object_get(r,
			    "sha256")), json_string_value(json_object_get(r,
			    "expires")));
		else
			evbuffer_add_printf(b, "%s: not shared: %s\n",
			    sh->files[i].path, json_string_value(
			    json_object_get(r, "error")));
		json_array_append(files, r);
	}
	if (sh->more > 0)
		evbuffer_add_printf(b, "%zu more files not shared: at most %d "
		    "at once; use sandbox_share_file.\n", sh->more,
		    LINK_FILES_MAX);
	if (sh->nok > 0)
		evbuffer_add_printf(b, "Anyone with a link can download the "
		    "file until it expires, while the sandbox runs and the "
		    "file is unchanged.");
	text = buf_text(b);
	evbuffer_free(b);
	req->cancel = NULL;
	req->hctx = NULL;
	if (sh->result != NULL) {
		/* run_code's result, with the links after it. */
		json_object_set_new(sh->result, "links", files);
		json_array_append_new(sh->content, json_pack("{s:s, s:s}",
		    "type", "text", "text", text));
		tool_result(req, json_incref(sh->content),
		    json_incref(sh->result), sh->failed);
	} else
		tool_result(req, text_content(text), json_pack("{s:o}",
		    "files", files), sh->nok == 0);
	free(text);
	sharing_free(sh);
}

static void
sharing_next(struct sharing *sh)
{
	struct sbx_file	 f;
	struct evbuffer	*b;
	const char	*why;

	if (sh->cur == sh->nfiles) {
		sharing_done(sh);
		return;
	}
	memset(&f, 0, sizeof(f));
	str_copy(f.ref.tenant, sh->tenant->name, sizeof(f.ref.tenant));
	str_copy(f.ref.id, sh->id, sizeof(f.ref.id));
	f.pathlen = (uint32_t)strlen(sh->files[sh->cur].path) + 1;
	b = evbuffer_new();
	evbuffer_add(b, &f, sizeof(f));
	add_str0(b, sh->files[sh->cur].path);
	sh->op = op_start(IMSG_SBX_OPEN, b, sharing_opened, sh, &why);
	evbuffer_free(b);
	if (sh->op == NULL)
		sharing_file_error(sh, "%s", why);
}

/* STATUS named the sandbox: its id goes in the links. */
static void
sharing_found(struct op *op)
{
	struct sharing	*sh = op->arg;
	struct mcp_req	*req = sh->req;

	sh->op = NULL;
	if (op->final != IMSG_SBX_DONE || op->info.id[0] == '\0') {
		req->cancel = NULL;
		req->hctx = NULL;
		if (sh->result != NULL) {
			run_unshared(req, json_incref(sh->content),
			    json_incref(sh->result), sh->failed, op_error(op));
		} else
			op_tool_error(req, op, "sandbox_share_file");
		op_free(op);
		sharing_free(sh);
		return;
	}
	str_copy(sh->id, op->info.id, sizeof(sh->id));
	op_free(op);
	sharing_next(sh);
}

/*
 * A path as a link keeps it: relative to the workspace, "/workspace/"
 * taken off, no empty, "." or ".." component.  0, or -1 with why.
 */
static int
share_path(const char *in, char *out, size_t outlen, char *why, size_t len)
{
	const char	*p = in, *c, *e;

	if (strncmp(p, INIT_WORKSPACE "/", sizeof(INIT_WORKSPACE)) == 0)
		p += sizeof(INIT_WORKSPACE);
	if (*p == '\0' || *p == '/') {
		snprintf(why, len, "\"%.64s\": give a file's path relative to "
		    "/workspace", in);
		return -1;
	}
	if (strlen(p) > SHARE_PATH_MAX || strlen(p) >= outlen) {
		snprintf(why, len, "\"%.64s...\": a path of at most %d bytes",
		    in, SHARE_PATH_MAX);
		return -1;
	}
	for (c = p; *c != '\0'; c = *e == '/' ? e + 1 : e) {
		e = strchr(c, '/');
		if (e == NULL)
			e = c + strlen(c);
		if (e == c || (e - c == 1 && c[0] == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.')) {
			snprintf(why, len, "\"%.64s\": no empty, \".\" or "
			    "\"..\" part, and no trailing slash", in);
			return -1;
		}
		if (*e == '\0')
			break;
		if (e[1] == '\0') {
			snprintf(why, len, "\"%.64s\": a file, not a "
			    "directory", in);
			return -1;
		}
	}
	str_copy(out, p, outlen);
	return 0;
}

/*
 * Checks that need no sandbox: a sharing of the tenant's, its links
 * living ttl seconds, or NULL with why.
 */
static struct sharing *
sharing_new(struct mcp_req *req, const char *sandbox, uint64_t ttl,
    char *why, size_t len)
{
	const struct policy	*conf = mcpd_conf;
	const struct tenant	*t = req->peer.tenant;
	struct sharing		*sh;

	if (mcp_stdio_mode) {
		snprintf(why, len, "this mcpd serves one client on stdio and "
		    "no HTTP, so it has nowhere to serve links from; read the "
		    "file with sandbox_read_file, or copy it out with "
		    "sandbox_download");
		return NULL;
	}
	if (t->share_downloads == 0) {
		snprintf(why, len, "the operator has not allowed this tenant "
		    "to share files (\"share downloads\" in mcpd.conf)");
		return NULL;
	}
	if (conf->share_url[0] == '\0' && req->peer.origin[0] == '\0') {
		snprintf(why, len, "no address to make links with: set "
		    "\"share url\" in mcpd.conf");
		return NULL;
	}
	sh = xcalloc(1, sizeof(*sh));
	sh->fd = -1;
	sh->req = req;
	sh->tenant = t;
	str_copy(sh->sandbox, sandbox, sizeof(sh->sandbox));
	sh->expires = (int64_t)time(NULL) + (int64_t)ttl;
	str_copy(sh->base, conf->share_url[0] != '\0' ? conf->share_url :
	    req->peer.origin, sizeof(sh->base));
	return sh;
}

/* Off it goes: the sandbox's id first, then each file. */
static int
sharing_start(struct sharing *sh, const char **why)
{
	struct sbx_ref	 ref;
	struct evbuffer	*b;

	if ((sh->ev = event_new(links_base, -1, 0, sharing_hash_cb, sh)) ==
	    NULL)
		fatalx("cannot create a hashing event");
	sh->buf = xmalloc(HASH_SLICE);
	op_ref(&ref, sh->req, sh->sandbox);
	b = evbuffer_new();
	evbuffer_add(b, &ref, sizeof(ref));
	sh->op = op_start(IMSG_SBX_STATUS, b, sharing_found, sh, why);
	evbuffer_free(b);
	if (sh->op == NULL)
		return -1;
	sh->req->hctx = sh;
	sh->req->cancel = sharing_cancel;
	return 0;
}

static uint64_t
default_ttl(const struct tenant *t)
{
	return mcpd_conf->share_expiry < t->share_expiry_max ?
	    mcpd_conf->share_expiry : t->share_expiry_max;
}

static const char *const share_args[] = {
	"sandbox", "path", "paths", "expires_in", NULL,
};

void
t_share(struct mcp_req *req, json_t *jargs)
{
	const struct tenant	*t = req->peer.tenant;
	struct args		 a;
	struct sharing		*sh;
	const char		*sandbox, *path, *why;
	json_t			*paths, *el;
	uint64_t		 ttl;
	size_t			 i;
	char			 err[300];

	args_init(&a, jargs, share_args);
	sandbox = args_sandbox(&a, 1);
	path = args_str(&a, "path", 0, INIT_PATH_MAX - 1);
	paths = args_strings(&a, "paths", 0, LINK_FILES_MAX,
	    INIT_PATH_MAX - 1);
	ttl = args_uint(&a, "expires_in", 1, POLICY_SHARE_EXPIRY_MAX,
	    default_ttl(t));
	if (!args_failed(&a) && (path == NULL) == (paths == NULL ||
	    json_array_size(paths) == 0))
		snprintf(a.err, sizeof(a.err), "give 'path' or 'paths' (not "
		    "both)");
	if (!args_failed(&a) && ttl > t->share_expiry_max)
		snprintf(a.err, sizeof(a.err), "'expires_in' is at most %llu "
		    "seconds for this tenant",
		    (unsigned long long)t->share_expiry_max);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if ((sh = sharing_new(req, sandbox, ttl, err, sizeof(err))) == NULL) {
		mcp_tool_error(req, "sandbox_share_file: %s.", err);
		return;
	}
	for (i = 0; i < (paths != NULL ? json_array_size(paths) : 1); i++) {
		el = paths != NULL ? json_array_get(paths, i) : NULL;
		if (share_path(el != NULL ? json_string_value(el) : path,
		    sh->files[i].path, sizeof(sh->files[i].path), err,
		    sizeof(err)) == -1) {
			sharing_free(sh);
			mcp_tool_error(req, "Invalid arguments: %s.", err);
			return;
		}
		sh->nfiles++;
	}
	if (sharing_start(sh, &why) == -1) {
		sharing_free(sh);
		mcp_tool_error(req, "sandbox_share_file failed: %s.", why);
	}
}

/*
 * run_code with share: links to the files it made in the sandbox, added
 * to its result (content and st, taken) as "links", before it is sent.
 * A file that cannot be shared has its error there; the run's result
 * stands whatever happens.
 */
void
links_share_run(struct mcp_req *req, const char *sandbox, json_t *made,
    json_t *content, json_t *st, int failed)
{
	struct sharing	*sh;
	json_t		*e;
	const char	*why;
	size_t		 i;
	char		 err[300];

	if ((sh = sharing_new(req, sandbox, default_ttl(req->peer.tenant),
	    err, sizeof(err))) == NULL) {
		run_unshared(req, content, st, failed, err);
		return;
	}
	sh->content = content;
	sh->result = st;
	sh->failed = failed;
	json_array_foreach(made, i, e) {
		if (sh->nfiles == LINK_FILES_MAX) {
			sh->more++;
			continue;
		}
		if (share_path(json_string_value(json_object_get(e, "path")),
		    sh->files[sh->nfiles].path,
		    sizeof(sh->files[sh->nfiles].path), err,
		    sizeof(err)) == -1) {
			sh->more++;
			continue;
		}
		sh->nfiles++;
	}
	if (sh->nfiles == 0) {
		sh->cur = 0;
		sharing_done(sh);
		return;
	}
	if (sharing_start(sh, &why) == -1) {
		sh->content = sh->result = NULL;
		sharing_free(sh);
		run_unshared(req, content, st, failed, why);
	}
}

/* --- /files/<token>/<name> --------------------------------------------- */

struct download {
	struct http_req	*r;
	struct op		*op;
	struct event		*ev;		/* paced: the budget refills */
	struct ltenant		*lt;
	const struct tenant	*tenant;
	struct share_claim	 c;
	int			 fd;
	uint64_t		 off, end;	/* the bytes to send */
	uint64_t		 sent;
	int			 partial;	/* a range */
	int			 head;
	crypto_hash_sha256_state sha;
	char			 peer[128];
	uint8_t			 buf[LINK_CHUNK];
};

static void
refusal_record(const char *peer, const struct share_claim *c,
    const char *reason)
{
	static struct maudit_gate gate;
	struct audit_body	 b;
	unsigned int		 missed;
	int			 pass;
	char			 msg[64], pv[160];

	pass = maudit_gate(&gate, REFUSALS_PER_S, &missed);
	if (missed > 0) {
		snprintf(msg, sizeof(msg), "%u more refusals not recorded one "
		    "by one", missed);
		refusal_record("many", NULL, msg);
	}
	if (!pass)
		return;
	log_info("download_refused peer=%s reason=\"%s\"",
	    log_value(peer, pv, sizeof(pv)), reason);
	audit_body_init(&b);
	if (c != NULL && c->path[0] != '\0')
		audit_body_str(&b, "path", c->path);
	audit_body_str(&b, "peer", peer);
	audit_body_str(&b, "reason", reason);
	maudit_send(AEV_FILE_DOWNLOAD, AOC_DENIED, c != NULL &&
	    c->tenant[0] != '\0' ? c->tenant : NULL, c != NULL &&
	    c->sandbox[0] != '\0' ? c->sandbox : NULL, &b);
	audit_body_free(&b);
}

static void
refuse(struct http_req *r, int code, const char *extra,
    const struct share_claim *c, const char *reason, const char *text)
{
	refusal_record(r->peer, c, reason);
	metrics_download(MX_DL_REFUSED, 0);
	http_reply(r, code, "text/plain; charset=utf-8", extra, text,
	    strlen(text));
}

static void
download_free(struct download *d)
{
	if (d->op != NULL)
		op_cancel(d->op);
	if (d->ev != NULL)
		event_free(d->ev);
	if (d->fd != -1)
		close(d->fd);
	if (d->lt != NULL)
		d->lt->active--;
	free(d);
}

/* The end of a download begun, whole or not: its record. */
static void
download_record(struct download *d, const char *outcome)
{
	struct audit_body	 b;
	uint8_t			 sum[crypto_hash_sha256_BYTES];
	char			 hexsum[65], range[64];
	int			 whole = d->head ||
				    d->sent == d->end - d->off;

	crypto_hash_sha256_final(&d->sha, sum);
	sodium_bin2hex(hexsum, sizeof(hexsum), sum, sizeof(sum));
	audit_body_init(&b);
	audit_body_u64(&b, "bytes", d->sent);
	audit_body_u64(&b, "ino", d->c.ino);
	audit_body_str(&b, "method", d->head ? "HEAD" : "GET");
	if (!whole)
		audit_body_str(&b, "outcome", outcome);
	audit_body_str(&b, "path", d->c.path);
	audit_body_str(&b, "peer", d->peer);
	if (d->partial) {
		snprintf(range, sizeof(range), "%llu-%llu",
		    (unsigned long long)d->off,
		    (unsigned long long)(d->end - 1));
		audit_body_str(&b, "range", range);
	}
	/* The bytes that left: the whole file's sum for a whole GET. */
	if (!d->head)
		audit_body_str(&b, "sent.sha256", hexsum);
	audit_body_u64(&b, "size", d->c.size);
	maudit_send(AEV_FILE_DOWNLOAD, whole ? AOC_OK : AOC_FAILED,
	    d->c.tenant, d->c.sandbox, &b);
	metrics_download(whole ? MX_DL_OK : MX_DL_CUT, d->sent);
	audit_body_free(&b);
	log_info("download tenant=%s sandbox=%s peer=%s bytes=%llu%s%s",
	    d->c.tenant, d->c.sandbox, d->peer,
	    (unsigned long long)d->sent, whole ? "" : " outcome=",
	    whole ? "" : outcome);
}

static void
download_gone(struct http_req *r)
{
	struct download	*d = r->data;

	if (d->fd != -1 || d->sent > 0)
		download_record(d, "the client went away");
	download_free(d);
	http_req_release(r);
}

/* The request no longer knows the download, which is freed. */
static void
download_drop(struct download *d)
{
	d->r->data = NULL;
	d->r->gone = NULL;
	download_free(d);
}

static void
download_done(struct download *d, const char *outcome)
{
	download_record(d, outcome);
	download_drop(d);
}

/* Send what the client has room for, as the budget allows. */
static void
download_pull(struct http_req *r, size_t room)
{
	struct download	*d = r->data;
	struct stat	 st;
	struct timeval	 tv;
	uint64_t	 budget, want, wait;
	ssize_t		 n;

	budget = ltenant_budget(d->lt, d->tenant->share_rate);
	while (room > 0 && d->off + d->sent < d->end) {
		want = d->end - d->off - d->sent;
		if (want > room)
			want = room;
		if (want > sizeof(d->buf))
			want = sizeof(d->buf);
		if (want > budget) {
			/* On again once a chunk's worth has come in. */
			wait = (uint64_t)((double)(want - budget) * 60000.0 /
			    (double)d->tenant->share_rate) + 1;
			tv.tv_sec = (time_t)(wait / 1000);
			tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
			evtimer_add(d->ev, &tv);
			return;
		}
		while ((n = pread(d->fd, d->buf, (size_t)want,
		    (off_t)(d->off + d->sent))) == -1 && errno == EINTR)
			;
		/* A file changed under us ends the download unfinished. */
		if (n <= 0 || fstat(d->fd, &st) == -1 ||
		    !same_file(&st, &d->c)) {
			download_done(d, "the file changed during the "
			    "download");
			http_stream_abort(r);
			return;
		}
		crypto_hash_sha256_update(&d->sha, d->buf, (size_t)n);
		d->lt->budget -= (double)n;
		budget -= (uint64_t)n;
		room -= (size_t)n;
		d->sent += (uint64_t)n;
		if (http_body_write(r, d->buf, (size_t)n) == -1)
			return;		/* gone() comes */
		if (d->off + d->sent == d->end) {
			/* That was the last byte: r is http's alone now. */
			download_done(d, "ok");
			return;
		}
	}
}

static void
download_paced(evutil_socket_t fd, short events, void *arg)
{
	struct download	*d = arg;

	download_pull(d->r, http_body_room(d->r));
}

/*
 * The Range header, if one range of bytes the file has: 1 with
 * [*off, *end), 0 to send it whole, -1 when no byte of it is there.
 */
static int
range_parse(const char *h, uint64_t size, uint64_t *off, uint64_t *end)
{
	unsigned long long	 a, b;
	char			*e;

	if (h == NULL || strncmp(h, "bytes=", 6) != 0 ||
	    strchr(h, ',') != NULL)
		return 0;	/* not bytes, or several: the whole */
	h += 6;
	if (*h == '-') {
		if (h[1] < '0' || h[1] > '9')
			return 0;
		errno = 0;
		b = strtoull(h + 1, &e, 10);
		if (*e != '\0' || errno != 0)
			return 0;
		if (b == 0 || size == 0)
			return -1;
		*off = b >= size ? 0 : size - b;
		*end = size;
		return 1;
	}
	if (*h < '0' || *h > '9')
		return 0;
	errno = 0;
	a = strtoull(h, &e, 10);
	if (*e != '-' || errno != 0)
		return 0;
	h = e + 1;
	if (*h == '\0')
		b = size > 0 ? size - 1 : 0;
	else {
		if (*h < '0' || *h > '9')
			return 0;
		b = strtoull(h, &e, 10);
		if (*e != '\0' || errno != 0 || b < a)
			return 0;
	}
	if (a >= size)
		return -1;
	if (b >= size)
		b = size - 1;
	*off = a;
	*end = b + 1;
	return 1;
}

/* Content-Disposition: the name as ASCII, and exactly as UTF-8. */
static void
disposition(struct evbuffer *b, const char *name)
{
	const unsigned char	*p;

	evbuffer_add_printf(b, "Content-Disposition: attachment; "
	    "filename=\"");
	for (p = (const unsigned char *)name; *p != '\0'; p++)
		evbuffer_add_printf(b, "%c", *p >= 0x20 && *p < 0x7f &&
		    *p != '"' && *p != '\\' && *p != '%' ? *p : '_');
	evbuffer_add_printf(b, "\"; filename*=UTF-8''");
	pct_encode(b, name);
	evbuffer_add(b, "\r\n", 2);
}

static void
download_opened(struct op *op)
{
	struct download	*d = op->arg;
	struct http_req	*r = d->r;
	struct stat	 st;
	struct evbuffer	*h;
	const char	*name = base_name(d->c.path), *mime;
	char		 etag[80], *extra;
	const char	*ir;
	uint64_t	 len;
	int		 rv, code = 200;

	d->op = NULL;
	if (op->final != IMSG_SBX_DONE || op->fd == -1) {
		if (op->final == IMSG_SBX_ERROR &&
		    op->error.code == SBX_E_NOTFOUND)
			refuse(r, 410, NULL, &d->c, "the sandbox is gone",
			    "410 Gone: this link's sandbox has stopped\n");
		else if (op->final == IMSG_SBX_ERROR &&
		    op->error.code == SBX_E_FILE)
			refuse(r, 410, NULL, &d->c, op_error(op), "410 Gone: "
			    "the file of this link was deleted, moved or "
			    "replaced\n");
		else
			refuse(r, 503, "Retry-After: 5\r\n", &d->c,
			    op_error(op), "503 Service Unavailable: the "
			    "sandbox service cannot serve this link now\n");
		op_free(op);
		download_drop(d);
		return;
	}
	d->fd = op->fd;
	op->fd = -1;
	op_free(op);
	if (fstat(d->fd, &st) == -1 || !same_file(&st, &d->c)) {
		refuse(r, 410, NULL, &d->c, "the file changed since it was "
		    "shared", "410 Gone: the file changed since this link "
		    "was made\n");
		download_drop(d);
		return;
	}
	etag_of(&d->c, etag, sizeof(etag));
	d->off = 0;
	d->end = d->c.size;
	rv = range_parse(http_header(r, "range"), d->c.size, &d->off,
	    &d->end);
	/* If-Range: the range of this very file, or the whole of it. */
	if (rv != 0 && (ir = http_header(r, "if-range")) != NULL &&
	    strcmp(ir, etag) != 0) {
		rv = 0;
		d->off = 0;
		d->end = d->c.size;
	}
	h = evbuffer_new();
	if (rv == -1) {
		evbuffer_add_printf(h, "Content-Range: bytes */%llu\r\n"
		    "ETag: %s\r\n", (unsigned long long)d->c.size, etag);
		extra = buf_text(h);
		evbuffer_free(h);
		refuse(r, 416, extra, &d->c, "a range outside the file",
		    "416 Range Not Satisfiable\n");
		free(extra);
		download_drop(d);
		return;
	}
	if (rv == 1) {
		code = 206;
		d->partial = 1;
		evbuffer_add_printf(h, "Content-Range: bytes %llu-%llu/%llu\r\n",
		    (unsigned long long)d->off,
		    (unsigned long long)(d->end - 1),
		    (unsigned long long)d->c.size);
	}
	/*
	 * The sandbox's file, never a page of this origin: a download,
	 * its type taken as given, and nothing in it allowed to run.
	 */
	disposition(h, name);
	evbuffer_add_printf(h, "ETag: %s\r\n"
	    "Accept-Ranges: bytes\r\n"
	    "Cache-Control: private, no-store\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "Content-Security-Policy: default-src 'none'; sandbox\r\n"
	    "Cross-Origin-Resource-Policy: same-origin\r\n"
	    "Referrer-Policy: no-referrer\r\n", etag);
	extra = buf_text(h);
	evbuffer_free(h);
	mime = mime_guess(name);
	d->head = strcmp(r->method, "HEAD") == 0;
	crypto_hash_sha256_init(&d->sha);
	len = d->end - d->off;
	if (d->head || len == 0) {
		/* Nothing to send: recorded, and done with, now. */
		download_done(d, "ok");
	}
	http_body_start(r, code, mime != NULL ? mime :
	    "application/octet-stream", extra, len, download_pull);
	free(extra);
}

int
links_path(const char *path)
{
	return strncmp(path, LINKS_PREFIX, sizeof(LINKS_PREFIX) - 1) == 0;
}

/*
 * A link another host made ("NAME~TOKEN"): the balancer sends those to
 * their host by its name, and here only while it is down.
 */
static int
link_elsewhere(struct http_req *r, const char *tok, size_t len)
{
	char		 owner[POLICY_HOST_NAME_MAX + 1], why[96], text[384];

	if (host_of_n(tok, len, owner, sizeof(owner)) != -1)
		return 0;
	/* One too long is cut to more than a host name may be. */
	if (strlen(owner) >= POLICY_HOST_NAME_MAX || !name_valid(owner)) {
		refuse(r, 404, NULL, NULL, "not a link's shape",
		    "404 Not Found: no such link\n");
		return 1;
	}
	snprintf(why, sizeof(why), "a link of host %s", owner);
	snprintf(text, sizeof(text), "503 Service Unavailable: this link is "
	    "served by host %s, which did not get this request: it is down, "
	    "or the balancer sends it no /files/%s~ links\n", owner, owner);
	refuse(r, 503, "Retry-After: 30\r\n", NULL, why, text);
	return 1;
}

/* A request for /files/...: anyone may ask; the link is the key. */
void
links_serve(struct http_req *r)
{
	const struct policy	*conf = mcpd_conf;
	const char		*tok = r->path + sizeof(LINKS_PREFIX) - 1;
	const char		*slash = strchr(tok, '/');
	struct share_claim	 c;
	struct download		*d;
	struct sbx_file		 f;
	struct evbuffer		*b;
	const struct tenant	*t;
	struct ltenant		*lt;
	enum share_error	 e;
	const char		*why;

	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
		http_reply(r, 405, "text/plain", "Allow: GET, HEAD\r\n",
		    "method not allowed\n", 19);
		return;
	}
	memset(&c, 0, sizeof(c));
	if (slash == NULL || slash[1] == '\0' || strchr(slash + 1, '/') !=
	    NULL || r->query != NULL) {
		refuse(r, 404, NULL, NULL, "not a link's shape",
		    "404 Not Found: no such link\n");
		return;
	}
	if (link_elsewhere(r, tok, (size_t)(slash - tok)))
		return;
	tok = host_local(tok);
	e = share_token_open(tok, (size_t)(slash - tok), slash + 1,
	    (int64_t)time(NULL), &c);
	if (e == SHARE_EXPIRED) {
		refuse(r, 410, NULL, &c, "the link expired",
		    "410 Gone: this link has expired\n");
		return;
	}
	if (e != SHARE_OK) {
		refuse(r, 404, NULL, NULL, share_error_str(e),
		    "404 Not Found: no such link\n");
		return;
	}
	if ((t = policy_tenant(conf, c.tenant)) == NULL || t->gone ||
	    t->share_downloads == 0) {
		refuse(r, 410, NULL, &c, "the tenant may no longer share "
		    "files", "410 Gone: this link is no longer served\n");
		return;
	}
	lt = ltenant_get(t->name);
	if (lt->active >= t->share_downloads) {
		refuse(r, 429, "Retry-After: 5\r\n", &c, "too many downloads "
		    "at once", "429 Too Many Requests: too many downloads "
		    "of this tenant's links at once; try again soon\n");
		return;
	}
	d = xcalloc(1, sizeof(*d));
	d->r = r;
	d->fd = -1;
	d->c = c;
	d->tenant = t;
	d->lt = lt;
	lt->active++;
	str_copy(d->peer, r->peer, sizeof(d->peer));
	if ((d->ev = evtimer_new(links_base, download_paced, d)) == NULL)
		fatalx("cannot create a download timer");
	memset(&f, 0, sizeof(f));
	str_copy(f.ref.tenant, c.tenant, sizeof(f.ref.tenant));
	str_copy(f.ref.id, c.sandbox, sizeof(f.ref.id));
	f.pathlen = (uint32_t)strlen(c.path) + 1;
	b = evbuffer_new();
	evbuffer_add(b, &f, sizeof(f));
	add_str0(b, c.path);
	d->op = op_start(IMSG_SBX_OPEN, b, download_opened, d, &why);
	evbuffer_free(b);
	if (d->op == NULL) {
		download_free(d);
		refuse(r, 503, "Retry-After: 5\r\n", &c, why,
		    "503 Service Unavailable: the sandbox service cannot "
		    "serve this link now\n");
		return;
	}
	r->data = d;
	r->gone = download_gone;
}

void
links_init(struct event_base *base)
{
	links_base = base;
	share_keys_init();
}

void
links_reload(void)
{
	share_keys_rotate((int64_t)time(NULL));
}
