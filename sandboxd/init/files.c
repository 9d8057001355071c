/*
 * sandbox-init: file operations in the workspace for sandboxd.
 *
 * Every path is resolved by openat2(2) beneath the workspace, so neither
 * "..", an absolute symlink nor a mount leads out of it, whatever the
 * code in the sandbox planted there.  Errors are answers (DONE with an
 * errno), never the end of the program.
 *
 * WRITE takes its content from DATA frames that may come interleaved with
 * other requests.  READ and LIST answers are produced a frame at a time,
 * only while the write queue is short, so that a large one neither blocks
 * the loop nor fills our memory.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "init.h"

#define LIST_FRAME	(64 * 1024)
/* A name under INIT_LIST_DEPTH directories, each name at most NAME_MAX. */
#define LIST_NAME_MAX	((INIT_LIST_DEPTH + 1) * (NAME_MAX + 1))
#define LIST_REC_MAX	(sizeof(struct init_entry) + LIST_NAME_MAX)

struct listing {
	DIR		*dirs[INIT_LIST_DEPTH + 1];
	size_t		 plen[INIT_LIST_DEPTH + 1];	/* prefix length */
	int		 depth;				/* open dirs */
	char		 path[LIST_NAME_MAX];
	uint8_t		 frame[LIST_FRAME];
	size_t		 framelen;
	int		 full;		/* the entry limit is reached */
};

struct op {
	TAILQ_ENTRY(op)	 entry;
	uint32_t	 id;
	uint32_t	 type;		/* IMSG_INIT_WRITE, _READ or _LIST */
	uint32_t	 flags;		/* INIT_F_* asked, INIT_D_* found */
	int		 fd;
	int		 error;		/* the first one; the op goes on */
	uint64_t	 size;		/* the announced size or the limit */
	uint64_t	 done;		/* bytes taken or sent; entries sent */
	uint64_t	 written;
	struct stat	 st;		/* READ */
	struct listing	*ls;		/* LIST */
};

static TAILQ_HEAD(, op)	 ops = TAILQ_HEAD_INITIALIZER(ops);
static int		 nops;
static char		 readbuf[PROTO_CHUNK];

static struct op *
op_find(uint32_t id)
{
	struct op	*op;

	TAILQ_FOREACH(op, &ops, entry)
		if (op->id == id)
			return op;
	return NULL;
}

static struct op *
op_new(uint32_t id, uint32_t type)
{
	struct op	*op;

	if (nops == INIT_OPS_MAX)
		init_violation("more than %d file operations at once",
		    INIT_OPS_MAX);
	if ((op = calloc(1, sizeof(*op))) == NULL)
		init_violation("out of memory");
	op->id = id;
	op->type = type;
	op->fd = -1;
	TAILQ_INSERT_TAIL(&ops, op, entry);
	nops++;
	return op;
}

static void
file_done(uint32_t id, int error, uint32_t flags, uint64_t size,
    const struct stat *st)
{
	struct init_done	 d;

	memset(&d, 0, sizeof(d));
	d.error = error;
	d.flags = flags;
	d.size = size;
	if (st != NULL) {
		d.mode = st->st_mode;
		d.mtime = st->st_mtime;
	}
	init_send(IMSG_INIT_DONE, id, &d, sizeof(d));
}

/* Answer and forget an op. */
static void
op_finish(struct op *op)
{
	int	 i;

	file_done(op->id, op->error, op->flags & INIT_D_TRUNCATED,
	    op->type == IMSG_INIT_WRITE ? op->written : op->done,
	    op->type == IMSG_INIT_READ && op->error == 0 ? &op->st : NULL);
	if (op->fd != -1)
		close(op->fd);
	if (op->ls != NULL) {
		for (i = 0; i < op->ls->depth; i++)
			closedir(op->ls->dirs[i]);
		free(op->ls);
	}
	TAILQ_REMOVE(&ops, op, entry);
	nops--;
	free(op);
}

static int
path_check(const char *path, int root_ok)
{
	if (strlen(path) >= INIT_PATH_MAX || path[0] == '/')
		return EINVAL;
	if (path[0] == '\0' && !root_ok)
		return EINVAL;
	return 0;
}

/*
 * The directory holding the last component of path, and that component.
 * Trailing slashes are cut off in path (a copy of the caller's).
 */
static int
parent_open(char *path, const char **name)
{
	char	*slash;
	size_t	 len = strlen(path);
	int	 fd;

	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if ((slash = strrchr(path, '/')) == NULL) {
		*name = path;
		return ws_openat(wsfd, ".", O_PATH | O_DIRECTORY, 0, 0);
	}
	*slash = '\0';
	fd = ws_openat(wsfd, path, O_PATH | O_DIRECTORY, 0, 0);
	*slash = '/';
	*name = slash + 1;
	return fd;
}

/* mkdir(2) the last component of path; 0 or an errno. */
static int
file_mkdir(const char *path, mode_t mode)
{
	char		 copy[INIT_PATH_MAX];
	const char	*name;
	int		 dfd, error = 0;

	memcpy(copy, path, strlen(path) + 1);
	if ((dfd = parent_open(copy, &name)) == -1)
		return errno;
	if (mkdirat(dfd, name, mode) == -1)
		error = errno;
	close(dfd);
	return error;
}

/*
 * Like mkdir -p: every directory leading to the last component of path,
 * and with whole that component too, made with mode.  Each step resolves
 * beneath the workspace again, so a symlink planted on the way leads
 * nowhere outside.
 */
static int
file_mkdirs(const char *path, int whole, mode_t mode)
{
	char	 buf[INIT_PATH_MAX];
	char	*p, *slash;
	size_t	 len = strlen(path);
	int	 error, fd;

	/* "a/b/" names b, which is to get mode. */
	while (len > 1 && path[len - 1] == '/')
		len--;
	memcpy(buf, path, len);
	buf[len] = '\0';
	for (p = buf;; p = slash + 1) {
		if ((slash = strchr(p, '/')) == NULL && !whole)
			return 0;
		if (slash != NULL)
			*slash = '\0';
		if (*p != '\0' && (error = file_mkdir(buf,
		    slash != NULL ? 0755 : mode)) != 0 && error != EEXIST)
			return error;
		if (slash == NULL)
			break;
		*slash = '/';
	}
	/* An existing last component must be a directory. */
	if ((fd = ws_openat(wsfd, path, O_PATH | O_DIRECTORY, 0, 0)) == -1)
		return errno == ENOTDIR ? EEXIST : errno;
	close(fd);
	return 0;
}

static int
file_open_write(const char *path, uint32_t flags, mode_t mode, int *error)
{
	struct stat	 st;
	int		 fd, oflags;

	if ((flags & INIT_F_MKDIRS) &&
	    (*error = file_mkdirs(path, 0, 0755)) != 0)
		return -1;
	/* O_NONBLOCK: a FIFO planted here must not stall us. */
	oflags = O_WRONLY | O_CREAT | O_NONBLOCK |
	    ((flags & INIT_F_APPEND) ? O_APPEND : O_TRUNC);
	/* umask is 0: a new file gets exactly mode. */
	if ((fd = ws_openat(wsfd, path, oflags, mode, 0)) == -1) {
		*error = errno;
		return -1;
	}
	if (fstat(fd, &st) == -1 || (S_ISREG(st.st_mode) &&
	    fcntl(fd, F_SETFL, oflags & O_APPEND) == -1))
		*error = errno;
	else if (!S_ISREG(st.st_mode))
		*error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	else
		return fd;
	close(fd);
	return -1;
}

static void
file_write(uint32_t id, const struct init_file *f, const char *path,
    int error)
{
	struct op	*op;
	int		 fd = -1;

	if (f->flags & INIT_F_DIR) {
		if (error == 0)
			error = (f->flags & INIT_F_MKDIRS) ?
			    file_mkdirs(path, 1, f->mode & 0777) :
			    file_mkdir(path, f->mode & 0777);
		file_done(id, error, 0, 0, NULL);
		return;
	}
	if (error == 0)
		fd = file_open_write(path, f->flags, f->mode & 0777, &error);
	if (f->size == 0) {
		if (fd != -1)
			close(fd);
		file_done(id, error, 0, 0, NULL);
		return;
	}
	/* Even a failed one waits for its DATA, to swallow it. */
	op = op_new(id, IMSG_INIT_WRITE);
	op->fd = fd;
	op->error = error;
	op->size = f->size;
}

void
file_data(struct imsg *imsg)
{
	struct op	*op;
	const uint8_t	*p = imsg->data;
	size_t		 len = imsg->datalen, off = 0;
	ssize_t		 n;

	if ((op = op_find(imsg->hdr.peerid)) == NULL ||
	    op->type != IMSG_INIT_WRITE)
		init_violation("DATA for no write (op %u)", imsg->hdr.peerid);
	if (len > PROTO_CHUNK || len > op->size - op->done)
		init_violation("op %u: more DATA than announced",
		    imsg->hdr.peerid);
	op->done += len;
	while (op->error == 0 && off < len) {
		if ((n = write(op->fd, p + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			op->error = errno;
			break;
		}
		off += (size_t)n;
		op->written += (uint64_t)n;
	}
	if (op->done == op->size)
		op_finish(op);
}

/*
 * A regular file beneath the workspace, to read, with its stat; or -1
 * with *error set (unless it was already, when nothing is tried).
 * O_NONBLOCK: a FIFO planted under its name must not stall us.
 */
static int
open_regular(const char *path, int oflags, uint64_t resolve,
    struct stat *st, int *error)
{
	int	 fd;

	if (*error != 0)
		return -1;
	if ((fd = ws_openat(wsfd, path, O_RDONLY | O_NONBLOCK | oflags, 0,
	    resolve)) == -1) {
		*error = errno;
		return -1;
	}
	if (fstat(fd, st) == -1)
		*error = errno;
	else if (!S_ISREG(st->st_mode))
		*error = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
	else
		return fd;
	close(fd);
	return -1;
}

static void
file_read(uint32_t id, const struct init_file *f, const char *path,
    int error)
{
	struct op	*op;
	struct stat	 st;
	int		 fd;

	if ((fd = open_regular(path, 0, 0, &st, &error)) == -1) {
		file_done(id, error, 0, 0, NULL);
		return;
	}
	op = op_new(id, IMSG_INIT_READ);
	op->fd = fd;
	op->size = f->size;
	op->st = st;
}

/*
 * A file for a download link, handed over open: a regular file reached
 * without a symlink anywhere on its way.  Answered at once; the
 * descriptor leaves with the DONE and is closed here once sent.
 */
static void
file_open(uint32_t id, const char *path, int error)
{
	struct init_done	 d;
	struct stat		 st;
	struct iovec		 iov;
	int			 fd;

	if ((fd = open_regular(path, O_NOFOLLOW, RESOLVE_NO_SYMLINKS, &st,
	    &error)) == -1) {
		file_done(id, error, 0, 0, NULL);
		return;
	}
	memset(&d, 0, sizeof(d));
	d.size = (uint64_t)st.st_size;
	d.mode = st.st_mode;
	d.mtime = st.st_mtime;
	iov.iov_base = &d;
	iov.iov_len = sizeof(d);
	init_sendv_fd(IMSG_INIT_DONE, id, fd, &iov, 1);
}

/* One DATA frame, or the end. */
static void
read_step(struct op *op)
{
	uint64_t	 want = op->size - op->done;
	ssize_t		 n;

	if (want > sizeof(readbuf))
		want = sizeof(readbuf);
	/* At the limit, one byte more tells whether the file has more. */
	while ((n = read(op->fd, readbuf, want > 0 ? want : 1)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1)
		op->error = errno;
	else if (n > 0 && want == 0)
		op->flags |= INIT_D_TRUNCATED;
	if (n <= 0 || want == 0) {
		op_finish(op);
		return;
	}
	init_send(IMSG_INIT_DATA, op->id, readbuf, (size_t)n);
	op->done += (uint64_t)n;
}

static void
list_flush(struct op *op)
{
	if (op->ls->framelen == 0)
		return;
	init_send(IMSG_INIT_ENTRY, op->id, op->ls->frame, op->ls->framelen);
	op->ls->framelen = 0;
}

static int
list_push(struct listing *ls, int fd, size_t plen)
{
	DIR	*d;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	ls->dirs[ls->depth] = d;
	ls->plen[ls->depth] = plen;
	ls->depth++;
	return 0;
}

static void
file_list(uint32_t id, const struct init_file *f, const char *path,
    int error)
{
	struct op	*op;
	int		 fd;

	if (error == 0 && (fd = ws_openat(wsfd, *path == '\0' ? "." : path,
	    O_RDONLY | O_DIRECTORY, 0, 0)) == -1)
		error = errno;
	if (error != 0) {
		file_done(id, error, 0, 0, NULL);
		return;
	}
	op = op_new(id, IMSG_INIT_LIST);
	op->flags = f->flags;
	op->size = f->size;
	if ((op->ls = calloc(1, sizeof(*op->ls))) == NULL ||
	    list_push(op->ls, fd, 0) == -1) {
		op->error = errno;
		op_finish(op);
	}
}

/*
 * The listing an exec asked for (INIT_EXEC_LIST), as it ends: the whole
 * workspace, as sandboxd lists a run's.
 */
void
file_list_run(uint32_t id)
{
	struct init_file	 f;

	if (op_find(id) != NULL)
		init_violation("op %u is already in progress", id);
	memset(&f, 0, sizeof(f));
	f.flags = INIT_F_RECURSIVE;
	f.size = SBX_LIST_MAX;
	file_list(id, &f, "", 0);
}

/* A subdirectory found while listing: go into it, never via a symlink. */
static void
list_descend(struct op *op, DIR *parent, const char *name, size_t plen)
{
	struct listing	*ls = op->ls;
	int		 fd;

	if (ls->depth == INIT_LIST_DEPTH + 1) {
		op->flags |= INIT_D_TRUNCATED;
		return;
	}
	/* A mount point (EXDEV) or an unreadable one is listed, not entered. */
	if ((fd = ws_openat(dirfd(parent), name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS)) == -1)
		return;
	ls->path[plen] = '/';
	list_push(ls, fd, plen + 1);
}

/* Fill one ENTRY frame, or finish. */
static void
list_step(struct op *op)
{
	struct listing		*ls = op->ls;
	struct init_entry	 e;
	struct dirent		*de;
	struct stat		 st;
	DIR			*d;
	size_t			 plen, nlen;

	while (ls->depth > 0 && ls->framelen + LIST_REC_MAX <= LIST_FRAME) {
		d = ls->dirs[ls->depth - 1];
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0) {
				op->error = errno;
				break;
			}
			closedir(d);
			ls->depth--;
			continue;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* Gone since readdir(): as if never there. */
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (op->done == op->size) {
			op->flags |= INIT_D_TRUNCATED;
			ls->full = 1;
			break;
		}
		plen = ls->plen[ls->depth - 1];
		nlen = strlen(de->d_name);
		memcpy(ls->path + plen, de->d_name, nlen + 1);

		memset(&e, 0, sizeof(e));
		e.size = (uint64_t)st.st_size;
		e.mtime = st.st_mtime;
		e.mode = st.st_mode;
		e.namelen = (uint32_t)(plen + nlen + 1);
		memcpy(ls->frame + ls->framelen, &e, sizeof(e));
		memcpy(ls->frame + ls->framelen + sizeof(e), ls->path,
		    e.namelen);
		ls->framelen += sizeof(e) + e.namelen;
		op->done++;

		if ((op->flags & INIT_F_RECURSIVE) && S_ISDIR(st.st_mode))
			list_descend(op, d, de->d_name, plen + nlen);
	}
	list_flush(op);
	if (ls->depth == 0 || op->error != 0 || ls->full)
		op_finish(op);
}

static int	delete_at(int, const char *, int, int);

/* Empty the directory name in dfd; 0 or the first errno met. */
static int
delete_tree(int dfd, const char *name, int depth)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, error = 0, e;

	if (depth == INIT_DELETE_DEPTH)
		return ELOOP;
	/* EXDEV: a mount point is never descended into. */
	if ((fd = ws_openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
	    0, RESOLVE_NO_SYMLINKS)) == -1)
		return errno;
	if ((d = fdopendir(fd)) == NULL) {
		e = errno;
		close(fd);
		return e;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0 && error == 0)
				error = errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((e = delete_at(dirfd(d), de->d_name, 1, depth + 1)) != 0 &&
		    error == 0)
			error = e;
	}
	closedir(d);
	return error;
}

/* Remove name in dfd, never following it if it is a symlink. */
static int
delete_at(int dfd, const char *name, int recursive, int depth)
{
	struct stat	 st;
	int		 error;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) == -1 ? errno : 0;
	if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
		return 0;
	if ((errno != ENOTEMPTY && errno != EEXIST) || !recursive)
		return errno;
	if ((error = delete_tree(dfd, name, depth)) != 0)
		return error;
	return unlinkat(dfd, name, AT_REMOVEDIR) == -1 ? errno : 0;
}

static void
file_delete(uint32_t id, const struct init_file *f, const char *path,
    int error)
{
	char		 copy[INIT_PATH_MAX];
	const char	*name;
	int		 dfd;

	if (error == 0) {
		memcpy(copy, path, strlen(path) + 1);
		if ((dfd = parent_open(copy, &name)) == -1)
			error = errno;
		else {
			/* The workspace itself stays, under any name. */
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				error = EINVAL;
			else
				error = delete_at(dfd, name,
				    f->flags & INIT_F_RECURSIVE, 0);
			close(dfd);
		}
	}
	file_done(id, error, 0, 0, NULL);
}

void
file_dispatch(struct imsg *imsg)
{
	struct init_file	 f;
	const char		*path;
	uint32_t		 id = imsg->hdr.peerid;
	int			 error;

	if (imsg->datalen < sizeof(f))
		init_violation("op %u: short request", id);
	memcpy(&f, imsg->data, sizeof(f));
	if (proto_strings((const char *)imsg->data + sizeof(f),
	    imsg->datalen - sizeof(f), 1, &path, 1) == -1)
		init_violation("op %u: malformed path", id);
	if (op_find(id) != NULL)
		init_violation("op %u is already in progress", id);
	/* A known flag that means nothing to this request is ignored. */
	if ((f.flags & ~(INIT_F_MKDIRS | INIT_F_APPEND | INIT_F_RECURSIVE |
	    INIT_F_DIR)) != 0)
		init_violation("op %u: unknown flags %#x", id, f.flags);
	if (imsg->hdr.type == IMSG_INIT_WRITE && (f.flags & INIT_F_DIR) &&
	    f.size != 0)
		init_violation("op %u: DATA announced for a directory", id);

	error = path_check(path, imsg->hdr.type == IMSG_INIT_LIST);
	switch (imsg->hdr.type) {
	case IMSG_INIT_WRITE:
		file_write(id, &f, path, error);
		break;
	case IMSG_INIT_READ:
		file_read(id, &f, path, error);
		break;
	case IMSG_INIT_LIST:
		file_list(id, &f, path, error);
		break;
	case IMSG_INIT_DELETE:
		file_delete(id, &f, path, error);
		break;
	case IMSG_INIT_OPEN:
		file_open(id, path, error);
		break;
	}
}

/* A file operation not yet DONE. */
int
file_busy(void)
{
	return nops > 0;
}

/* Produce READ and LIST answers, in turn, while the queue is short. */
void
file_step(void)
{
	struct op	*op;

	while (imsgbuf_queued(&ibuf) < INIT_QUEUE_LOWAT) {
		TAILQ_FOREACH(op, &ops, entry)
			if (op->type != IMSG_INIT_WRITE)
				break;
		if (op == NULL)
			return;
		TAILQ_REMOVE(&ops, op, entry);
		TAILQ_INSERT_TAIL(&ops, op, entry);
		if (op->type == IMSG_INIT_READ)
			read_step(op);
		else
			list_step(op);
	}
}
