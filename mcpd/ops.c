/*
 * Requests to sandboxd for tools and resources: a payload goes out as one
 * IMSG_SBX_* frame and what comes back is checked and collected.  The
 * frames are sandboxd's, a trusted sibling, but a malformed one still
 * ends only the request it belongs to.
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "imsg.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "metrics.h"
#include "proto.h"
#include "sbxcall.h"
#include "util.h"

#define OP_DATA_MAX	(SBX_FILE_MAX + PROTO_CHUNK)
#define OP_OUTPUT_MAX	(1024ULL * 1024 * 1024)

static const char *const op_image_types[] = {
	[SBX_IMAGE_HOST] = "host",
	[SBX_IMAGE_ROOTFS] = "rootfs",
	[SBX_IMAGE_STORED] = "stored",
};

/* An IMAGE frame, as JSON, into op->images. */
static int
op_image(struct op *op, const uint8_t *p, size_t len)
{
	struct sbx_image	 si;
	json_t			*o;

	if (proto_payload(p, len, &si, sizeof(si)) == -1 ||
	    si.type < SBX_IMAGE_HOST || si.type > SBX_IMAGE_STORED)
		return -1;
	si.name[sizeof(si.name) - 1] = '\0';
	si.digest[sizeof(si.digest) - 1] = '\0';
	si.source[sizeof(si.source) - 1] = '\0';
	si.probe_error[sizeof(si.probe_error) - 1] = '\0';
	si.runtime[sizeof(si.runtime) - 1] = '\0';
	o = json_pack("{s:s, s:s, s:s, s:i, s:o}", "name", si.name, "type",
	    op_image_types[si.type], "runtime", si.runtime, "pool",
	    (int)si.pool, "languages", json_array());
	if (si.digest[0] != '\0')
		json_object_set_new(o, "digest", json_string(si.digest));
	if (si.type == SBX_IMAGE_STORED) {
		json_object_set_new(o, "source", utf8_json((uint8_t *)si.source,
		    strlen(si.source)));
		json_object_set_new(o, "created", json_integer(si.created));
		json_object_set_new(o, "size", json_integer((json_int_t)
		    si.size));
	}
	if (si.probe_error[0] != '\0')
		json_object_set_new(o, "probe_error", utf8_json((uint8_t *)
		    si.probe_error, strlen(si.probe_error)));
	json_array_append_new(op->images, o);
	return 0;
}

/* A LANG frame: a language of the image just sent. */
static int
op_lang(struct op *op, const uint8_t *p, size_t len)
{
	struct sbx_lang	 sl;
	json_t		*img;

	if (proto_payload(p, len, &sl, sizeof(sl)) == -1)
		return -1;
	sl.image[sizeof(sl.image) - 1] = '\0';
	sl.language[sizeof(sl.language) - 1] = '\0';
	sl.version[sizeof(sl.version) - 1] = '\0';
	img = json_array_get(op->images, json_array_size(op->images) - 1);
	if (img == NULL || strcmp(json_string_value(json_object_get(img,
	    "name")), sl.image) != 0)
		return -1;
	json_array_append_new(json_object_get(img, "languages"),
	    json_pack("{s:s, s:o}", "name", sl.language, "version",
	    utf8_json((uint8_t *)sl.version, strlen(sl.version))));
	return 0;
}

/* The picture whose DATA came last is whole: into op->pictures. */
static void
op_picture_end(struct op *op)
{
	json_t	*pic;
	size_t	 n = evbuffer_get_length(op->data);
	char	*b64;

	pic = json_array_get(op->pictures, json_array_size(op->pictures) - 1);
	if (pic == NULL || json_object_get(pic, "data") != NULL)
		return;
	b64 = b64_encode(evbuffer_pullup(op->data, -1), n);
	json_object_set_new(pic, "data", json_string(b64));
	json_object_set_new(pic, "bytes", json_integer((json_int_t)n));
	free(b64);
	evbuffer_drain(op->data, n);
}

static int
op_picture(struct op *op, const uint8_t *p, size_t len)
{
	struct sbx_picture	 sp;

	if (len < sizeof(sp))
		return -1;
	memcpy(&sp, p, sizeof(sp));
	if (sp.pathlen < 2 || sp.pathlen != len - sizeof(sp) ||
	    p[len - 1] != '\0' || memchr(p + sizeof(sp), '\0',
	    sp.pathlen - 1) != NULL || sp.size > SBX_PICTURE_MAX ||
	    json_array_size(op->pictures) >= SBX_PICTURES_MAX)
		return -1;
	op_picture_end(op);
	json_array_append_new(op->pictures, json_pack("{s:o}", "path",
	    utf8_json(p + sizeof(sp), sp.pathlen - 1)));
	return 0;
}

static void
op_frame(void *arg, struct imsg *imsg)
{
	struct op		*op = arg;
	struct sbx_output	 so;
	struct init_entry	 e;
	const uint8_t		*p = imsg->data;
	size_t			 len = imsg->datalen, off;
	char			 name[INIT_PATH_MAX];

	switch (imsg->hdr.type) {
	case IMSG_SBX_OUTPUT:
		if (len < sizeof(so)) {
			op->broken = 1;
			break;
		}
		memcpy(&so, p, sizeof(so));
		if (so.stream != SBX_STREAM_STDOUT &&
		    so.stream != SBX_STREAM_STDERR) {
			op->broken = 1;
			break;
		}
		if (op->output != NULL)
			op->output(op, (int)so.stream, (int)so.phase,
			    p + sizeof(so), len - sizeof(so));
		else if (evbuffer_get_length(op->out[so.stream - 1]) <
		    OP_OUTPUT_MAX)
			evbuffer_add(op->out[so.stream - 1], p + sizeof(so),
			    len - sizeof(so));
		break;
	case IMSG_SBX_DATA:
		if (evbuffer_get_length(op->data) + len > OP_DATA_MAX)
			op->broken = 1;
		else
			evbuffer_add(op->data, p, len);
		break;
	case IMSG_SBX_ENTRY:
		for (off = 0; off < len; off += sizeof(e) + e.namelen) {
			if (len - off < sizeof(e)) {
				op->broken = 1;
				break;
			}
			memcpy(&e, p + off, sizeof(e));
			if (e.namelen == 0 || e.namelen > sizeof(name) ||
			    e.namelen > len - off - sizeof(e) ||
			    p[off + sizeof(e) + e.namelen - 1] != '\0') {
				op->broken = 1;
				break;
			}
			memcpy(name, p + off + sizeof(e), e.namelen);
			if (json_array_size(op->entries) < SBX_LIST_MAX)
				json_array_append_new(op->entries,
				    json_pack("{s:o, s:I, s:I, s:i}", "name",
				    utf8_json((uint8_t *)name, strlen(name)),
				    "size", (json_int_t)e.size, "mtime",
				    (json_int_t)e.mtime, "mode", (int)e.mode));
		}
		break;
	case IMSG_SBX_INFO:
	case IMSG_SBX_CREATED:
		if (proto_payload(p, len, &op->info, sizeof(op->info)) ==
		    -1) {
			op->broken = 1;
			break;
		}
		op->info.id[sizeof(op->info.id) - 1] = '\0';
		op->info.name[sizeof(op->info.name) - 1] = '\0';
		op->info.tenant[sizeof(op->info.tenant) - 1] = '\0';
		op->info.image[sizeof(op->info.image) - 1] = '\0';
		op->info.runtime[sizeof(op->info.runtime) - 1] = '\0';
		json_array_append_new(op->infos, op_info_json(&op->info));
		break;
	case IMSG_SBX_IMAGE:
		if (op_image(op, p, len) == -1)
			op->broken = 1;
		break;
	case IMSG_SBX_LANG:
		if (op_lang(op, p, len) == -1)
			op->broken = 1;
		break;
	case IMSG_SBX_PICTURE:
		if (op_picture(op, p, len) == -1)
			op->broken = 1;
		break;
	case IMSG_SBX_RESULT:
		if (proto_payload(p, len, &op->result,
		    sizeof(op->result)) == -1)
			op->broken = 1;
		break;
	case IMSG_SBX_DONE:
		if (proto_payload(p, len, &op->fdone, sizeof(op->fdone)) ==
		    -1)
			op->broken = 1;
		else if (op->fd == -1)
			op->fd = imsg_take_fd(imsg);
		break;
	case IMSG_SBX_ERROR:
		if (proto_payload(p, len, &op->error, sizeof(op->error)) ==
		    -1) {
			memset(&op->error, 0, sizeof(op->error));
			op->error.code = SBX_E_INTERNAL;
			str_copy(op->error.message, "malformed error",
			    sizeof(op->error.message));
		}
		op->error.message[sizeof(op->error.message) - 1] = '\0';
		break;
	default:
		op->broken = 1;
		break;
	}
	if (!sbx_frame_final(imsg->hdr.type))
		return;
	op->final = imsg->hdr.type;
	op->call = NULL;		/* sbxcall frees it after us */
	op_picture_end(op);
	if (op->broken && op->final != IMSG_SBX_ERROR) {
		log_warnx("sandboxd sent a malformed answer");
		metrics_error(MX_E_SBX_MALFORMED);
		op->final = IMSG_SBX_ERROR;
		memset(&op->error, 0, sizeof(op->error));
		op->error.code = SBX_E_INTERNAL;
		str_copy(op->error.message, "the sandbox service sent a "
		    "malformed answer", sizeof(op->error.message));
	}
	op->done(op);
}

struct op *
op_start(uint32_t type, struct evbuffer *payload, op_fn done, void *arg,
    const char **why)
{
	struct op	*op;
	struct iovec	 iov;

	op = xcalloc(1, sizeof(*op));
	op->done = done;
	op->arg = arg;
	op->fd = -1;
	op->data = evbuffer_new();
	op->out[0] = evbuffer_new();
	op->out[1] = evbuffer_new();
	op->entries = json_array();
	op->infos = json_array();
	op->images = json_array();
	op->pictures = json_array();
	iov.iov_len = evbuffer_get_length(payload);
	iov.iov_base = evbuffer_pullup(payload, -1);
	if ((op->call = sbx_call(type, &iov, 1, op_frame, op, why)) ==
	    NULL) {
		op_free(op);
		return NULL;
	}
	return op;
}

void
op_free(struct op *op)
{
	if (op == NULL)
		return;
	if (op->fd != -1)
		close(op->fd);
	evbuffer_free(op->data);
	evbuffer_free(op->out[0]);
	evbuffer_free(op->out[1]);
	json_decref(op->entries);
	json_decref(op->infos);
	json_decref(op->images);
	json_decref(op->pictures);
	free(op);
}

void
op_cancel(struct op *op)
{
	if (op->call != NULL)
		sbx_call_detach(op->call);
	op_free(op);
}

/* --- Host names in ids --------------------------------------------- */

const char *
host_id(const char *id, char *buf, size_t len)
{
	if (mcpd_conf->host_name[0] == '\0' || id[0] == '\0')
		return id;
	snprintf(buf, len, "%s%c%s", mcpd_conf->host_name, HOST_SEP, id);
	return buf;
}

int
host_of_n(const char *id, size_t idlen, char *owner, size_t len)
{
	const char	*sep = memchr(id, HOST_SEP, idlen);
	size_t		 n;

	if (sep == NULL)
		return 0;
	n = (size_t)(sep - id);
	if (n == strlen(mcpd_conf->host_name) &&
	    strncmp(id, mcpd_conf->host_name, n) == 0)
		return 1;
	snprintf(owner, len, "%.*s", (int)n, id);
	return -1;
}

int
host_of(const char *id, char *owner, size_t len)
{
	return host_of_n(id, strlen(id), owner, len);
}

int
host_id_valid(const char *id)
{
	const char	*sep = strchr(id, HOST_SEP);
	char		 host[SBX_NAME_MAX];

	if (sep == NULL)
		return name_valid(id);
	if (sep == id || (size_t)(sep - id) >= sizeof(host))
		return 0;
	snprintf(host, sizeof(host), "%.*s", (int)(sep - id), id);
	return name_valid(host) && name_valid(sep + 1);
}

const char *
host_local(const char *id)
{
	size_t	 n = strlen(mcpd_conf->host_name);

	if (n > 0 && strncmp(id, mcpd_conf->host_name, n) == 0 &&
	    id[n] == HOST_SEP)
		return id + n + 1;
	return id;
}

const char *
host_this(char *buf, size_t len)
{
	if (mcpd_conf->host_name[0] == '\0')
		return "this host";
	snprintf(buf, len, "this host (%s)", mcpd_conf->host_name);
	return buf;
}

void
op_ref(struct sbx_ref *ref, const struct mcp_req *req, const char *id)
{
	memset(ref, 0, sizeof(*ref));
	str_copy(ref->tenant, req->peer.tenant->name, sizeof(ref->tenant));
	if (id != NULL)
		str_copy(ref->id, host_local(id), sizeof(ref->id));
}

static json_t *
limits_json(const struct sbx_limits *l)
{
	return json_pack("{s:I, s:f, s:i, s:I, s:I, s:I, s:s, s:I, s:I}",
	    "memory_bytes", (json_int_t)l->memory,
	    "cpus", l->cpus / 1000.0,
	    "pids", (int)l->pids,
	    "timeout_ms", (json_int_t)l->timeout,
	    "output_bytes", (json_int_t)l->output,
	    "disk_bytes", (json_int_t)l->disk,
	    "network", l->network == SBX_NET_EGRESS ? "egress" : "none",
	    "idle_ms", (json_int_t)l->idle,
	    "lifetime_ms", (json_int_t)l->lifetime);
}

json_t *
op_info_json(const struct sbx_info *in)
{
	char	 created[32], used[32], expires[32], id[SBX_NAME_MAX];
	json_t	*o;

	iso_time(in->created, created, sizeof(created));
	iso_time(in->last_used, used, sizeof(used));
	iso_time(in->expires, expires, sizeof(expires));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:o}",
	    "id", host_id(in->id, id, sizeof(id)),
	    "image", in->image,
	    "runtime", in->runtime,
	    "state", in->state == SBX_STATE_RUNNING ? "running" : "idle",
	    "created", created,
	    "last_used", used,
	    "expires", expires,
	    "memory_bytes", (json_int_t)in->memory,
	    "running_execs", (int)in->execs,
	    "limits", limits_json(&in->lim));
	json_object_set_new(o, "name", in->name[0] != '\0' ?
	    json_string(in->name) : json_null());
	return o;
}

const char *
op_error(const struct op *op)
{
	if (op->final != IMSG_SBX_ERROR)
		return "unexpected answer from the sandbox service";
	return op->error.message[0] != '\0' ? op->error.message :
	    "the sandbox service failed";
}
