/*
 * File operations, done by sandbox-init inside the container's own mount
 * namespace so that no path, however crafted, reaches a host file.  What
 * init sends back is checked before it goes on: sizes within what was
 * asked, entries well formed.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandboxd.h"
#include "util.h"

struct fileop {
	TAILQ_ENTRY(fileop)	 entry;
	struct sandbox		*sb;
	struct job		*job;
	uint32_t		 id;
	uint32_t		 type;		/* IMSG_INIT_* */
	uint64_t		 limit;		/* READ: bytes; LIST: entries */
	uint64_t		 got;
	int			 sent;		/* else queued behind others */
	struct init_file	 hdr;
	char			*path;
	const void		*content;	/* the job's, until sent */
};

static void	fileop_send(struct fileop *);
static struct fileop *fileop_find(struct sandbox *, uint32_t);

static void
fileop_free(struct fileop *op)
{
	TAILQ_REMOVE(&op->sb->fileops, op, entry);
	free(op->path);
	free(op);
}

/* sb's operations sent to sandbox-init and not yet done. */
static int
fileop_in_flight(const struct sandbox *sb)
{
	const struct fileop	*op;
	int			 sent = 0;

	TAILQ_FOREACH(op, &sb->fileops, entry)
		sent += op->sent;
	return sent;
}

/* Operations in flight never exceed what sandbox-init allows. */
static void
fileop_next(struct sandbox *sb)
{
	struct fileop	*op;
	int		 sent = fileop_in_flight(sb);

	TAILQ_FOREACH(op, &sb->fileops, entry) {
		if (sent >= INIT_OPS_MAX || sb->state != SB_RUNNING)
			return;
		if (!op->sent) {
			fileop_send(op);
			sent++;
		}
	}
}

static void
fileop_broken(struct sandbox *sb)
{
	sandbox_destroy(sb, 0, "sandbox-init broke the protocol");
}

static void
fileop_send(struct fileop *op)
{
	struct sandbox	*sb = op->sb;
	struct iovec	 iov[2];
	const uint8_t	*p = op->content;
	uint64_t	 off;
	size_t		 n;

	op->sent = 1;
	iov[0].iov_base = &op->hdr;
	iov[0].iov_len = sizeof(op->hdr);
	iov[1].iov_base = op->path;
	iov[1].iov_len = strlen(op->path) + 1;
	if (imsgev_composev(&sb->iev, op->type, op->id, -1, iov, 2) == -1)
		goto fail;
	if (op->type != IMSG_INIT_WRITE || (op->hdr.flags & INIT_F_DIR))
		return;
	for (off = 0; off < op->hdr.size; off += n) {
		n = op->hdr.size - off > PROTO_CHUNK ? PROTO_CHUNK :
		    (size_t)(op->hdr.size - off);
		if (imsgev_compose(&sb->iev, IMSG_INIT_DATA, op->id, -1,
		    p + off, n) == -1)
			goto fail;
	}
	return;
 fail:
	log_warnx("sandbox %s: cannot queue a file operation", sb->id);
	sandbox_destroy(sb, 0, "the sandbox's channel is broken");
}

/* A new operation of sb's, last in line, not sent. */
static struct fileop *
fileop_new(struct sandbox *sb, struct job *job, uint32_t type,
    const struct init_file *hdr, const char *path)
{
	struct fileop	*op;

	op = xcalloc(1, sizeof(*op));
	op->sb = sb;
	op->job = job;
	op->id = sandbox_next_op(sb);
	op->type = type;
	op->limit = hdr->size;
	op->hdr = *hdr;
	op->path = xstrdup(path);
	TAILQ_INSERT_TAIL(&sb->fileops, op, entry);
	return op;
}

void
fileop_start(struct sandbox *sb, struct job *job, uint32_t type,
    const struct init_file *hdr, const char *path, const void *content)
{
	fileop_new(sb, job, type, hdr, path)->content = content;
	fileop_next(sb);
}

static struct fileop *
fileop_find(struct sandbox *sb, uint32_t id)
{
	struct fileop	*op;

	TAILQ_FOREACH(op, &sb->fileops, entry)
		if (op->id == id)
			return op;
	return NULL;
}

/* Packed entries: each header, then a name with its NUL, nothing else. */
static int
fileop_entries_ok(const uint8_t *p, size_t len, uint64_t *count)
{
	struct init_entry	 e;
	size_t			 off = 0;

	*count = 0;
	while (off < len) {
		if (len - off < sizeof(e))
			return 0;
		memcpy(&e, p + off, sizeof(e));
		off += sizeof(e);
		if (e.namelen < 2 || e.namelen > INIT_PATH_MAX ||
		    e.namelen > len - off ||
		    p[off + e.namelen - 1] != '\0' ||
		    memchr(p + off, '\0', e.namelen - 1) != NULL)
			return 0;
		off += e.namelen;
		(*count)++;
	}
	return *count > 0;
}

void
fileop_init_dispatch(struct sandbox *sb, struct imsg *imsg)
{
	struct init_done	 d;
	struct fileop		*op;
	struct job		*job;
	uint64_t		 n;
	uint32_t		 type;
	int			 fd;

	if ((op = fileop_find(sb, imsg->hdr.peerid)) == NULL || !op->sent) {
		fileop_broken(sb);
		return;
	}
	switch (imsg->hdr.type) {
	case IMSG_INIT_DATA:
		if (op->type != IMSG_INIT_READ || imsg->datalen == 0 ||
		    imsg->datalen > PROTO_CHUNK ||
		    op->got + imsg->datalen > op->limit) {
			fileop_broken(sb);
			return;
		}
		op->got += imsg->datalen;
		if (op->job != NULL)
			job_file_data(op->job, IMSG_SBX_DATA, imsg->data,
			    imsg->datalen);
		break;
	case IMSG_INIT_ENTRY:
		if (op->type != IMSG_INIT_LIST ||
		    !fileop_entries_ok(imsg->data, imsg->datalen, &n) ||
		    op->got + n > op->limit) {
			fileop_broken(sb);
			return;
		}
		op->got += n;
		if (op->job != NULL)
			job_file_data(op->job, IMSG_SBX_ENTRY, imsg->data,
			    imsg->datalen);
		break;
	case IMSG_INIT_DONE:
		/* An OPEN that worked, and it alone, comes with its file. */
		fd = imsg_take_fd(imsg);
		if (proto_payload(imsg->data, imsg->datalen, &d,
		    sizeof(d)) == -1 || d.error < 0 || d.error > 4095 ||
		    (d.flags & ~INIT_D_TRUNCATED) != 0 ||
		    ((op->type == IMSG_INIT_READ ||
		    op->type == IMSG_INIT_LIST) && d.error == 0 &&
		    d.size != op->got) ||
		    (fd != -1) != (op->type == IMSG_INIT_OPEN &&
		    d.error == 0)) {
			if (fd != -1)
				close(fd);
			fileop_broken(sb);
			return;
		}
		job = op->job;
		type = op->type;
		fileop_free(op);
		fileop_next(sb);
		if (job != NULL)
			job_file_done(job, type, &d, NULL, fd);
		else if (fd != -1)
			close(fd);
		break;
	}
}

/*
 * An operation sandbox-init starts unasked, as an exec flagged
 * INIT_EXEC_LIST ends: in flight from now on, so that init never has
 * more than it allows.  0 and its id, or -1 when as many are in flight
 * already (the caller asks the usual way instead).
 */
int
fileop_expect(struct sandbox *sb, struct job *job, uint32_t type,
    const struct init_file *hdr, uint32_t *id)
{
	struct fileop	*op;

	if (fileop_in_flight(sb) >= INIT_OPS_MAX || sb->state != SB_RUNNING)
		return -1;
	op = fileop_new(sb, job, type, hdr, "");
	op->sent = 1;
	*id = op->id;
	return 0;
}

/* An expected operation whose exec was never sent. */
void
fileop_unexpect(struct sandbox *sb, uint32_t id)
{
	struct fileop	*op;

	if ((op = fileop_find(sb, id)) != NULL)
		fileop_free(op);
	fileop_next(sb);
}

/* The job is over: its operations still under way end without it. */
void
fileop_forget_job(struct sandbox *sb, const struct job *job)
{
	struct fileop	*op;

	TAILQ_FOREACH(op, &sb->fileops, entry)
		if (op->job == job)
			op->job = NULL;
}

void
fileop_sandbox_gone(struct sandbox *sb, const char *why)
{
	struct fileop	*op;
	struct job	*job;
	uint32_t	 type;

	while ((op = TAILQ_FIRST(&sb->fileops)) != NULL) {
		job = op->job;
		type = op->type;
		fileop_free(op);
		if (job != NULL)
			job_file_done(job, type, NULL, why, -1);
	}
}
