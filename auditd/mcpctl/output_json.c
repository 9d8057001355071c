/*
 * JSON output (-j, and export): one object per record, verification or
 * key.  A listing is one array; a stream (tail, export) is one object per
 * line, each complete as it is written.  Strings are made valid UTF-8,
 * as JSON needs: a byte that is not becomes U+FFFD.
 */
#include <sys/types.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcpctl.h"
#include "util.h"

static int	 list_count;

static json_t *
jstr(const char *s, size_t len)
{
	json_t	*j;
	char	*u;
	size_t	 ulen;

	u = str_utf8(s, len, &ulen);
	j = json_stringn(u, ulen);
	free(u);
	if (j == NULL)
		errx(EXIT_ERROR, "out of memory");
	return j;
}

static json_t *
jhex(const uint8_t *p, size_t len)
{
	char	 hex[AUDIT_SIG_LEN * 2 + 1];

	audit_hex(p, len, hex);
	return json_string(hex);
}

static void
set(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) == -1)
		errx(EXIT_ERROR, "out of memory");
}

static json_t *
json_body(const struct record *r)
{
	struct body_iter	 it;
	json_t			*o = json_object();
	char			*k, *val, *uk;
	size_t			 vlen, klen;

	body_iter_init(&it, r->body, r->bodylen);
	while (body_next(&it, &k, &val, &vlen)) {
		uk = str_utf8(k, strlen(k), &klen);
		set(o, uk, jstr(val, vlen));
		free(uk);
		free(k);
		free(val);
	}
	return o;
}

static json_t *
json_record(const struct record *r)
{
	json_t	*o = json_object();
	char	 t[64];

	time_format(r->time, 9, t, sizeof(t));
	set(o, "seq", json_integer(r->seq));
	set(o, "time", json_string(t));
	set(o, "time_ns", json_integer(r->time));
	set(o, "role", jstr(r->role, strlen(r->role)));
	set(o, "pid", json_integer(r->pid));
	set(o, "uid", json_integer(r->uid));
	set(o, "tenant", jstr(r->tenant, strlen(r->tenant)));
	set(o, "sandbox", jstr(r->sandbox, strlen(r->sandbox)));
	set(o, "event", jstr(r->event, strlen(r->event)));
	set(o, "outcome", jstr(r->outcome, strlen(r->outcome)));
	set(o, "body", json_body(r));
	set(o, "hash", jhex(r->hash, sizeof(r->hash)));
	set(o, "prev", jhex(r->prev, sizeof(r->prev)));
	set(o, "keyid", jstr(r->keyid, strlen(r->keyid)));
	set(o, "sig", jhex(r->sig, sizeof(r->sig)));
	return o;
}

static void
emit(json_t *o, size_t flags)
{
	if (json_dumpf(o, stdout, flags) == -1)
		errx(EXIT_ERROR, "cannot write JSON");
	putchar('\n');
	json_decref(o);
}

static void
json_list_begin(void)
{
	list_count = 0;
	printf("[");
}

static void
json_list_record(const struct record *r)
{
	json_t	*o = json_record(r);

	printf("%s\n", list_count++ ? "," : "");
	if (json_dumpf(o, stdout, JSON_COMPACT) == -1)
		errx(EXIT_ERROR, "cannot write JSON");
	json_decref(o);
}

static void
json_list_end(void)
{
	printf("%s]\n", list_count ? "\n" : "");
}

static void
json_stream_record(const struct record *r)
{
	emit(json_record(r), JSON_COMPACT);
}

static void
json_show(const struct record *r)
{
	emit(json_record(r), JSON_INDENT(2));
}

static void
json_verify(const struct verify_result *res)
{
	json_t	*o = json_object(), *keys = json_array();
	size_t	 i;

	for (i = 0; i < res->nkeys; i++)
		if (json_array_append_new(keys, json_string(res->keys[i])) ==
		    -1)
			errx(EXIT_ERROR, "out of memory");
	set(o, "ok", json_boolean(res->status == 0));
	set(o, "records", json_integer((json_int_t)res->records));
	set(o, "checkpoints", json_integer((json_int_t)res->checkpoints));
	set(o, "last_checkpoint", res->has_last_checkpoint ?
	    json_integer((json_int_t)res->last_checkpoint) : json_null());
	set(o, "keys", keys);
	set(o, "first_bad_seq", res->has_bad ? json_integer(res->first_bad) :
	    json_null());
	set(o, "kind", res->kind != NULL ? json_string(res->kind) :
	    json_null());
	set(o, "error", res->status != 0 ? jstr(res->error,
	    strlen(res->error)) : json_null());
	emit(o, JSON_INDENT(2));
}

static void
json_keygen(const struct keygen_result *k)
{
	json_t	*o = json_object();

	set(o, "keyid", json_string(k->keyid));
	set(o, "secret_key", jstr(k->secret, strlen(k->secret)));
	set(o, "public_key", jstr(k->public, strlen(k->public)));
	set(o, "staged", json_boolean(k->staged));
	emit(o, JSON_INDENT(2));
}

/* A string of the store, or null when it is empty. */
static json_t *
jstr_or_null(const char *s)
{
	return s[0] != '\0' ? jstr(s, strlen(s)) : json_null();
}

static json_t *
json_image(const struct imgstore_image *im)
{
	json_t	*o = json_object();

	set(o, "name", jstr_or_null(im->name));
	set(o, "digest", json_string(im->digest));
	set(o, "rootfs", jstr(im->rootfs, strlen(im->rootfs)));
	set(o, "source", jstr(im->source, strlen(im->source)));
	set(o, "source_digest", jstr_or_null(im->source_digest));
	set(o, "created", json_integer(im->created));
	set(o, "size", json_integer((json_int_t)im->size));
	set(o, "files", json_integer((json_int_t)im->files));
	return o;
}

static void
json_image_list(const struct imgstore_image *v, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		if (json_array_append_new(a, json_image(&v[i])) == -1)
			errx(EXIT_ERROR, "out of memory");
	emit(a, JSON_INDENT(2));
}

static void
json_image_added(const struct imgstore_image *im)
{
	emit(json_image(im), JSON_INDENT(2));
}

static void
json_image_verify(const struct image_check *chk)
{
	json_t	*o = json_object();

	set(o, "name", jstr_or_null(chk->im->name));
	set(o, "digest", json_string(chk->im->digest));
	set(o, "computed", json_string(chk->sum.digest));
	set(o, "size", json_integer((json_int_t)chk->sum.size));
	set(o, "files", json_integer((json_int_t)chk->sum.files));
	set(o, "ok", json_boolean(chk->status == 0));
	set(o, "error", jstr_or_null(chk->error));
	emit(o, JSON_INDENT(2));
}

const struct output json_output = {
	.list_begin = json_list_begin,
	.list_record = json_list_record,
	.list_end = json_list_end,
	.stream_record = json_stream_record,
	.show = json_show,
	.verify = json_verify,
	.keygen = json_keygen,
	.image_list = json_image_list,
	.image_added = json_image_added,
	.image_verify = json_image_verify,
};
