/*
 * stdio mode's copies between this machine and a sandbox: sandbox_upload
 * and sandbox_download.  mcpd --stdio runs as the user who started it, so
 * it reads and writes with that user's rights, and only beneath the
 * directories the tenant's "local path" statements name (Landlock holds
 * it to the same).  Names that come from a sandbox are untrusted: no
 * absolute paths, no "..", nothing followed through a symbolic link at
 * the end, and nothing replaced unless asked.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "args.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "policy.h"
#include "proto.h"
#include "tools.h"
#include "util.h"

#define COPY_FILES_MAX	1000
#define COPY_BYTES_MAX	(256ULL * 1024 * 1024)

/* Is resolved beneath dir (or dir itself)? */
static int
beneath(const char *resolved, const char *dir)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(resolved, dir, n) == 0 &&
	    (resolved[n] == '\0' || resolved[n] == '/');
}

/*
 * The real path of a local path the tenant may use, into out: an existing
 * path, or for writing one whose parent exists.  -1 with why.
 */
int
local_path_allowed(const char *path, int write, char *out, size_t outlen,
    char *why, size_t whylen)
{
	const struct tenant	*t = NULL;
	char			 tmp[PATH_MAX], parent[PATH_MAX];
	const char		*base;
	char			*slash;
	size_t			 i;
	int			 any = 0;

	t = policy_tenant_by_uid(mcpd_conf, getuid());
	if (t == NULL || t->npaths == 0) {
		snprintf(why, whylen, "no local directories are allowed for "
		    "copies; the operator can add 'local path' to the tenant "
		    "in mcpd.conf");
		return -1;
	}
	if (path[0] != '/') {
		snprintf(why, whylen, "'%.200s' is not an absolute path",
		    path);
		return -1;
	}
	if (realpath(path, tmp) == NULL) {
		if (errno != ENOENT || !write) {
			snprintf(why, whylen, "%.200s: %s", path,
			    strerror(errno));
			return -1;
		}
		/* A new file: its directory must exist. */
		if (str_copy(parent, path, sizeof(parent)) == -1 ||
		    (slash = strrchr(parent, '/')) == NULL) {
			snprintf(why, whylen, "%.200s: bad path", path);
			return -1;
		}
		base = path + (slash - parent) + 1;
		*slash = '\0';
		if (base[0] == '\0' || strcmp(base, ".") == 0 ||
		    strcmp(base, "..") == 0 || realpath(parent[0] != '\0' ?
		    parent : "/", tmp) == NULL) {
			snprintf(why, whylen, "%.200s: the directory it goes "
			    "in does not exist", path);
			return -1;
		}
		if (str_fmt(parent, sizeof(parent), "%s%s%s", tmp,
		    strcmp(tmp, "/") != 0 ? "/" : "", base) == -1) {
			snprintf(why, whylen, "%.200s: too long", path);
			return -1;
		}
		str_copy(tmp, parent, sizeof(tmp));
	}
	for (i = 0; i < t->npaths; i++) {
		if (!beneath(tmp, t->paths[i].path))
			continue;
		any = 1;
		if (!write || !t->paths[i].readonly)
			return str_copy(out, tmp, outlen);
	}
	snprintf(why, whylen, "%.200s is not %s", path, any ?
	    "writable here: its directory is read-only for copies" :
	    "inside a directory allowed for copies");
	return -1;
}

/* --- A sequence of requests to sandboxd ------------------------------- */

struct copy {
	struct mcp_req	*req;
	struct op	*op;
	char		 sandbox[SBX_NAME_MAX];
	char		 local[PATH_MAX];	/* resolved */
	char		 shown[PATH_MAX];	/* as the client gave it */
	char		 dest[INIT_PATH_MAX];	/* in the sandbox */
	int		 overwrite;
	json_t		*todo;		/* [{rel, dir}] still to copy */
	size_t		 next;
	uint64_t	 files;
	uint64_t	 bytes;
};

static void
copy_free(struct copy *c)
{
	if (c->op != NULL)
		op_cancel(c->op);
	json_decref(c->todo);
	free(c);
}

static void
copy_cancel(struct mcp_req *req)
{
	copy_free(req->hctx);
}

static void copy_fail(struct copy *, const char *, ...)
    __attribute__((__format__(printf, 2, 3)));

static void
copy_fail(struct copy *c, const char *fmt, ...)
{
	struct mcp_req	*req = c->req;
	char		 msg[600];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	req->cancel = NULL;
	copy_free(c);
	mcp_tool_error(req, "%s", msg);
}

static void
copy_done(struct copy *c, const char *verb)
{
	struct mcp_req	*req = c->req;
	char		*text;
	json_t		*st;

	xasprintf(&text, "%s %llu file%s (%llu bytes): %s %s /workspace/%s",
	    verb, (unsigned long long)c->files, c->files == 1 ? "" : "s",
	    (unsigned long long)c->bytes, c->shown,
	    strcmp(verb, "Uploaded") == 0 ? "->" : "<-", c->dest);
	st = json_pack("{s:s, s:s, s:I, s:I}", "local_path", c->shown, "path",
	    c->dest, "files", (json_int_t)c->files, "bytes",
	    (json_int_t)c->bytes);
	req->cancel = NULL;
	copy_free(c);
	tool_result(req, json_pack("[{s:s, s:s}]", "type", "text", "text",
	    text), st, 0);
	free(text);
}

static struct copy *
copy_new(struct mcp_req *req)
{
	struct copy	*c = xcalloc(1, sizeof(*c));

	c->req = req;
	c->todo = json_array();
	req->hctx = c;
	req->cancel = copy_cancel;
	return c;
}

static void
copy_start(struct copy *c, uint32_t type, struct evbuffer *b, op_fn fn)
{
	const char	*why;

	c->op = op_start(type, b, fn, c, &why);
	evbuffer_free(b);
	if (c->op == NULL)
		copy_fail(c, "The copy failed: %s", why);
}

static struct evbuffer *
file_msg(struct copy *c, const char *path, uint32_t flags, uint32_t mode,
    uint64_t size)
{
	struct sbx_file	 f;
	struct evbuffer	*b = evbuffer_new();

	memset(&f, 0, sizeof(f));
	op_ref(&f.ref, c->req, c->sandbox);
	f.flags = flags;
	f.mode = mode;
	f.size = size;
	f.pathlen = (uint32_t)strlen(path) + 1;
	evbuffer_add(b, &f, sizeof(f));
	evbuffer_add(b, path, f.pathlen);
	return b;
}

/* --- Upload ------------------------------------------------------------ */

/* Every file and directory beneath dir, depth first, into todo. */
static int
walk(struct copy *c, const char *dir, const char *rel, char *why,
    size_t len)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 path[PATH_MAX], sub[PATH_MAX];

	if ((d = opendir(dir)) == NULL) {
		snprintf(why, len, "%.200s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (str_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) ==
		    -1 || str_fmt(sub, sizeof(sub), "%s%s%s", rel,
		    rel[0] != '\0' ? "/" : "", de->d_name) == -1 ||
		    strlen(sub) >= INIT_PATH_MAX - strlen(c->dest) - 2) {
			snprintf(why, len, "%.200s: path too long", path);
			closedir(d);
			return -1;
		}
		if (lstat(path, &st) == -1)
			continue;
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue;	/* links and devices stay behind */
		if (json_array_size(c->todo) >= COPY_FILES_MAX) {
			snprintf(why, len, "more than %d files and directories",
			    COPY_FILES_MAX);
			closedir(d);
			return -1;
		}
		c->bytes += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
		if (c->bytes > COPY_BYTES_MAX) {
			snprintf(why, len, "more than %llu MiB in all",
			    COPY_BYTES_MAX >> 20);
			closedir(d);
			return -1;
		}
		json_array_append_new(c->todo, json_pack("{s:s, s:b, s:i}",
		    "rel", sub, "dir", S_ISDIR(st.st_mode), "mode",
		    (int)(st.st_mode & 0777)));
		if (S_ISDIR(st.st_mode) && walk(c, path, sub, why, len) == -1) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static void	upload_next(struct copy *);

static void
upload_step(struct op *op)
{
	struct copy	*c = op->arg;

	c->op = NULL;
	if (op->final != IMSG_SBX_DONE) {
		copy_fail(c, "The upload failed: %s", op_error(op));
		op_free(op);
		return;
	}
	op_free(op);
	c->next++;
	upload_next(c);
}

static void
upload_next(struct copy *c)
{
	json_t		*e;
	char		 local[PATH_MAX], dest[INIT_PATH_MAX];
	const char	*rel;
	struct evbuffer	*b;
	struct stat	 st;
	int		 fd, dir;
	uint32_t	 mode;

	if (c->next == json_array_size(c->todo)) {
		copy_done(c, "Uploaded");
		return;
	}
	e = json_array_get(c->todo, c->next);
	rel = json_string_value(json_object_get(e, "rel"));
	dir = json_is_true(json_object_get(e, "dir"));
	mode = (uint32_t)json_integer_value(json_object_get(e, "mode"));
	if (str_fmt(local, sizeof(local), "%s%s%s", c->local,
	    rel[0] != '\0' ? "/" : "", rel) == -1 || str_fmt(dest,
	    sizeof(dest), "%s%s%s", c->dest, rel[0] != '\0' ? "/" : "",
	    rel) == -1) {
		copy_fail(c, "Cannot upload %.200s: path too long", rel);
		return;
	}
	if (dir) {
		copy_start(c, IMSG_SBX_WRITE, file_msg(c, dest, INIT_F_DIR |
		    INIT_F_MKDIRS, 0755, 0), upload_step);
		return;
	}
	if ((fd = open(local, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SBX_FILE_MAX) {
		if (fd != -1)
			close(fd);
		copy_fail(c, "Cannot upload %s: %s", local, fd == -1 ?
		    strerror(errno) : "not a regular file of at most 16 MiB");
		return;
	}
	b = file_msg(c, dest, INIT_F_MKDIRS, mode & 0100 ? 0755 : 0644,
	    (uint64_t)st.st_size);
	if (evbuffer_read(b, fd, (int)st.st_size) != st.st_size &&
	    st.st_size > 0) {
		close(fd);
		evbuffer_free(b);
		copy_fail(c, "Cannot read %s: short read", local);
		return;
	}
	close(fd);
	c->files++;
	copy_start(c, IMSG_SBX_WRITE, b, upload_step);
}

static const char *const upload_args[] = {
	"sandbox", "local_path", "path", NULL,
};

void
t_upload(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *local, *dest, *base;
	char		 why[512], resolved[PATH_MAX];
	struct copy	*c;
	struct stat	 st;

	args_init(&a, jargs, upload_args);
	sandbox = args_sandbox(&a, 1);
	local = args_str(&a, "local_path", 1, PATH_MAX - 1);
	dest = args_str(&a, "path", 0, INIT_PATH_MAX - 1);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if (local_path_allowed(local, 0, resolved, sizeof(resolved), why,
	    sizeof(why)) == -1) {
		mcp_tool_error(req, "Cannot upload: %s.", why);
		return;
	}
	if (stat(resolved, &st) == -1 || (!S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode))) {
		mcp_tool_error(req, "Cannot upload %s: not a file or a "
		    "directory.", local);
		return;
	}
	c = copy_new(req);
	str_copy(c->sandbox, sandbox, sizeof(c->sandbox));
	str_copy(c->local, resolved, sizeof(c->local));
	str_copy(c->shown, local, sizeof(c->shown));
	base = strrchr(resolved, '/') + 1;
	str_copy(c->dest, dest != NULL ? dest : base[0] != '\0' ? base : ".",
	    sizeof(c->dest));
	if (S_ISDIR(st.st_mode)) {
		json_array_append_new(c->todo, json_pack("{s:s, s:b, s:i}",
		    "rel", "", "dir", 1, "mode", 0755));
		if (walk(c, resolved, "", why, sizeof(why)) == -1) {
			copy_fail(c, "Cannot upload %s: %s", local, why);
			return;
		}
		c->bytes = 0;
	} else
		json_array_append_new(c->todo, json_pack("{s:s, s:b, s:i}",
		    "rel", "", "dir", 0, "mode", (int)(st.st_mode & 0777)));
	upload_next(c);
}

/* --- Download ------------------------------------------------------- */

/* A name from the sandbox, safe to put beneath a local directory. */
static int
safe_rel(const char *rel)
{
	const char	*p = rel, *end;
	size_t		 n;

	if (rel[0] == '/' || rel[0] == '\0')
		return 0;
	while (*p != '\0') {
		end = strchr(p, '/');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return 1;
}

/* Write a whole file, by a temporary name and a rename. */
static int
write_local(const char *path, const uint8_t *p, size_t n, int exe,
    int overwrite, char *why, size_t len)
{
	char	 tmp[PATH_MAX];
	int	 fd;
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (!overwrite) {
			snprintf(why, len, "%.200s exists; pass overwrite to "
			    "replace it", path);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(why, len, "%.200s exists and is not a "
			    "regular file", path);
			return -1;
		}
	}
	if (str_fmt(tmp, sizeof(tmp), "%s.mcpd-%d", path, (int)getpid()) ==
	    -1) {
		snprintf(why, len, "%.200s: path too long", path);
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, exe ? 0755 : 0644)) == -1) {
		snprintf(why, len, "%.200s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write_all(fd, p, n) == -1) {
		snprintf(why, len, "%.200s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (fsync(fd) == -1 || close(fd) == -1 || rename(tmp, path) == -1) {
		snprintf(why, len, "%.200s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void	download_next(struct copy *);

static void
download_file_done(struct op *op)
{
	struct copy	*c = op->arg;
	json_t		*e = json_array_get(c->todo, c->next);
	const char	*rel = json_string_value(json_object_get(e, "rel"));
	char		 local[PATH_MAX], why[512];
	size_t		 n = evbuffer_get_length(op->data);

	c->op = NULL;
	if (op->final != IMSG_SBX_DONE) {
		copy_fail(c, "The download failed: %s", op_error(op));
		op_free(op);
		return;
	}
	if (op->fdone.flags & INIT_D_TRUNCATED) {
		op_free(op);
		copy_fail(c, "Cannot download %s: it is larger than 16 MiB",
		    rel[0] != '\0' ? rel : c->dest);
		return;
	}
	if (str_fmt(local, sizeof(local), "%s%s%s", c->local,
	    rel[0] != '\0' ? "/" : "", rel) == -1) {
		op_free(op);
		copy_fail(c, "Cannot download %.200s: path too long", rel);
		return;
	}
	if (write_local(local, n > 0 ? evbuffer_pullup(op->data, -1) :
	    (uint8_t *)"", n,
	    (op->fdone.mode & 0100) != 0, c->overwrite, why,
	    sizeof(why)) == -1) {
		op_free(op);
		copy_fail(c, "Cannot download: %s", why);
		return;
	}
	op_free(op);
	c->files++;
	c->bytes += n;
	c->next++;
	download_next(c);
}

static void
download_next(struct copy *c)
{
	json_t		*e;
	const char	*rel;
	char		 local[PATH_MAX], src[INIT_PATH_MAX];

	for (;;) {
		if (c->next == json_array_size(c->todo)) {
			copy_done(c, "Downloaded");
			return;
		}
		e = json_array_get(c->todo, c->next);
		rel = json_string_value(json_object_get(e, "rel"));
		if (!json_is_true(json_object_get(e, "dir")))
			break;
		if (str_fmt(local, sizeof(local), "%s/%s", c->local, rel) ==
		    -1 || (mkdir(local, 0755) == -1 && errno != EEXIST)) {
			copy_fail(c, "Cannot make %s: %s", local,
			    strerror(errno));
			return;
		}
		c->next++;
	}
	if (str_fmt(src, sizeof(src), "%s%s%s", c->dest, rel[0] != '\0' ?
	    "/" : "", rel) == -1) {
		copy_fail(c, "Cannot download %.200s: path too long", rel);
		return;
	}
	copy_start(c, IMSG_SBX_READ, file_msg(c, src, 0, 0, SBX_FILE_MAX),
	    download_file_done);
}

static int
rel_cmp(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a,
	    "rel")), json_string_value(json_object_get(*(json_t *const *)b,
	    "rel")));
}

/* By name, so that a directory comes before what is in it. */
static void
sort_entries(json_t *list)
{
	size_t	 i, n = json_array_size(list);
	json_t	**v;

	if (n < 2)
		return;
	v = xcalloc(n, sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(list, i));
	qsort(v, n, sizeof(*v), rel_cmp);
	json_array_clear(list);
	for (i = 0; i < n; i++)
		json_array_append_new(list, v[i]);
	free(v);
}

static void
download_list_done(struct op *op)
{
	struct copy	*c = op->arg;
	json_t		*e, *list;
	const char	*name;
	size_t		 i;
	int		 mode;

	c->op = NULL;
	if (op->final != IMSG_SBX_DONE) {
		copy_fail(c, "The download failed: %s", op_error(op));
		op_free(op);
		return;
	}
	if (op->fdone.flags & INIT_D_TRUNCATED) {
		op_free(op);
		copy_fail(c, "Cannot download /workspace/%s: more than %d "
		    "entries", c->dest, COPY_FILES_MAX);
		return;
	}
	list = json_array();
	json_array_foreach(op->entries, i, e) {
		name = json_string_value(json_object_get(e, "name"));
		mode = (int)json_integer_value(json_object_get(e, "mode"));
		if (!safe_rel(name)) {
			json_decref(list);
			op_free(op);
			copy_fail(c, "Refused a name from the sandbox: "
			    "'%.200s'", name);
			return;
		}
		if ((mode & 0170000) == 0040000 || (mode & 0170000) ==
		    0100000)
			json_array_append_new(list, json_pack("{s:s, s:b}",
			    "rel", name, "dir", (mode & 0170000) == 0040000));
	}
	op_free(op);
	sort_entries(list);
	json_array_extend(c->todo, list);
	json_decref(list);
	if (mkdir(c->local, 0755) == -1 && errno != EEXIST) {
		copy_fail(c, "Cannot make %s: %s", c->local, strerror(errno));
		return;
	}
	download_next(c);
}

/* The first read says whether it is a file or a directory. */
static void
download_probe_done(struct op *op)
{
	struct copy	*c = op->arg;

	c->op = NULL;
	if (op->final == IMSG_SBX_ERROR && op->error.code == SBX_E_FILE &&
	    op->error.err == EISDIR) {
		op_free(op);
		copy_start(c, IMSG_SBX_LIST_FILES, file_msg(c, c->dest,
		    INIT_F_RECURSIVE, 0, COPY_FILES_MAX), download_list_done);
		return;
	}
	json_array_append_new(c->todo, json_pack("{s:s, s:b}", "rel", "",
	    "dir", 0));
	download_file_done(op);
}

static const char *const download_args[] = {
	"sandbox", "path", "local_path", "overwrite", NULL,
};

void
t_download(struct mcp_req *req, json_t *jargs)
{
	struct args	 a;
	const char	*sandbox, *local, *src, *base;
	char		 why[512], resolved[PATH_MAX], full[PATH_MAX];
	struct copy	*c;
	struct stat	 st;
	int		 overwrite;

	args_init(&a, jargs, download_args);
	sandbox = args_sandbox(&a, 1);
	src = args_str(&a, "path", 1, INIT_PATH_MAX - 1);
	local = args_str(&a, "local_path", 1, PATH_MAX - 1);
	overwrite = args_bool(&a, "overwrite", 0);
	if (args_failed(&a)) {
		args_tool_error(req, &a);
		return;
	}
	if (local_path_allowed(local, 1, resolved, sizeof(resolved), why,
	    sizeof(why)) == -1) {
		mcp_tool_error(req, "Cannot download: %s.", why);
		return;
	}
	/* Into an existing directory: under the sandbox file's name. */
	if (stat(resolved, &st) == 0 && S_ISDIR(st.st_mode)) {
		base = strrchr(src, '/') != NULL ? strrchr(src, '/') + 1 : src;
		if (base[0] == '\0' || !safe_rel(base) ||
		    str_fmt(full, sizeof(full), "%s/%s", resolved, base) ==
		    -1) {
			mcp_tool_error(req, "Cannot download %s into %s: name "
			    "the local file in local_path.", src, local);
			return;
		}
		str_copy(resolved, full, sizeof(resolved));
	}
	c = copy_new(req);
	str_copy(c->sandbox, sandbox, sizeof(c->sandbox));
	str_copy(c->local, resolved, sizeof(c->local));
	str_copy(c->shown, local, sizeof(c->shown));
	str_copy(c->dest, src, sizeof(c->dest));
	c->overwrite = overwrite;
	copy_start(c, IMSG_SBX_READ, file_msg(c, src, 0, 0, SBX_FILE_MAX),
	    download_probe_done);
}
