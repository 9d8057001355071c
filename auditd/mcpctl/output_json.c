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

/* A time as ISO 8601 in UTC, to the nanosecond. */
static json_t *
jtime(int64_t ns)
{
	char	 t[64];

	time_format(ns, 9, t, sizeof(t));
	return json_string(t);
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
	if (res->host != NULL) {
		set(o, "host", jstr(res->host, strlen(res->host)));
		set(o, "path", jstr(res->path, strlen(res->path)));
	}
	set(o, "ok", json_boolean(res->status == 0 ||
	    res->status == EXIT_UNANCHORED));
	set(o, "records", json_integer((json_int_t)res->records));
	set(o, "last_record_time", res->records > 0 && res->status !=
	    EXIT_UNVERIFIED ? jtime(res->last_time) : json_null());
	set(o, "checkpoints", json_integer((json_int_t)res->checkpoints));
	set(o, "last_checkpoint", res->has_last_checkpoint ?
	    json_integer((json_int_t)res->last_checkpoint) : json_null());
	set(o, "last_checkpoint_time", res->has_last_checkpoint ?
	    jtime(res->last_checkpoint_time) : json_null());
	set(o, "anchored", json_boolean(res->anchored));
	set(o, "anchor", res->anchored ? json_integer((json_int_t)res->anchor) :
	    json_null());
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
json_verify_hosts(int hosts, int ok, int tampered, int unverified,
    int unanchored)
{
	json_t	*o = json_object();

	set(o, "hosts", json_integer(hosts));
	set(o, "anchored", json_integer(ok));
	set(o, "tampered", json_integer(tampered));
	set(o, "unverified", json_integer(unverified));
	set(o, "unanchored", json_integer(unanchored));
	emit(o, JSON_INDENT(2));
}

static void
json_anchor(const struct verify_result *res)
{
	json_t	*o = json_object();
	char	 hex[AUDIT_HASH_LEN * 2 + 1], *a;

	audit_hex(res->root, sizeof(res->root), hex);
	xasprintf(&a, "%llu:%s", (unsigned long long)res->records, hex);
	set(o, "anchor", json_string(a));
	set(o, "size", json_integer((json_int_t)res->records));
	set(o, "root", json_string(hex));
	set(o, "last_record_time", jtime(res->last_time));
	emit(o, JSON_INDENT(2));
	free(a);
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
push(json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) == -1)
		errx(EXIT_ERROR, "out of memory");
}

static void
json_image_list(const struct imgstore_image *v, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		push(a, json_image(&v[i]));
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

static json_t *
json_info(const struct sbx_info *in)
{
	json_t	*o = json_object(), *l = json_object();

	set(o, "id", json_string(in->id));
	set(o, "tenant", jstr(in->tenant, strlen(in->tenant)));
	set(o, "name", jstr_or_null(in->name));
	set(o, "image", jstr(in->image, strlen(in->image)));
	set(o, "runtime", jstr(in->runtime, strlen(in->runtime)));
	set(o, "oneshot", json_boolean(in->flags & SBX_INFO_ONESHOT));
	set(o, "state", json_string(in->state == SBX_STATE_RUNNING ?
	    "running" : "idle"));
	set(o, "init_pid", json_integer(in->init_pid));
	set(o, "processes", json_integer(in->execs));
	set(o, "memory", json_integer((json_int_t)in->memory));
	set(o, "created", json_integer(in->created));
	set(o, "last_used", json_integer(in->last_used));
	set(o, "expires", json_integer(in->expires));
	set(l, "memory", json_integer((json_int_t)in->lim.memory));
	set(l, "cpus", json_real(in->lim.cpus / 1000.0));
	set(l, "pids", json_integer(in->lim.pids));
	set(l, "disk", json_integer((json_int_t)in->lim.disk));
	set(l, "output", json_integer((json_int_t)in->lim.output));
	set(l, "timeout_ms", json_integer((json_int_t)in->lim.timeout));
	set(l, "network", json_string(in->lim.network == SBX_NET_EGRESS ?
	    "egress" : "none"));
	set(o, "limits", l);
	return o;
}

#define JU64(v)	json_integer((json_int_t)(v))

static json_t *
json_server(const struct sbx_server *s)
{
	json_t	*o = json_object(), *a = json_object(), *p = json_object();
	json_t	*b = json_object(), *r = json_object();

	set(o, "software", jstr(s->software, strlen(s->software)));
	set(o, "pid", JU64(s->pid));
	set(o, "protocol", JU64(s->protocol));
	set(o, "started", json_integer(s->started));
	set(o, "runc", jstr_or_null(s->runc));
	set(o, "config", json_string(s->config));
	set(a, "required", json_boolean(s->audit_required));
	set(a, "connected", json_boolean(s->audit_connected));
	set(a, "sent", JU64(s->audit_sent));
	set(a, "committed", JU64(s->audit_committed));
	set(a, "failed", JU64(s->audit_failed));
	set(a, "waiting", JU64(s->audit_waiting));
	set(a, "lag_ms", JU64(s->audit_lag_ms));
	set(o, "audit", a);
	set(p, "ready", JU64(s->pool_ready));
	set(p, "starting", JU64(s->pool_starting));
	set(p, "wanted", JU64(s->pool_target));
	set(p, "claimed", JU64(s->pool_claimed));
	set(p, "empty", JU64(s->pool_empty));
	set(p, "failed", JU64(s->pool_failed));
	set(o, "pool", p);
	set(r, "kept", JU64(s->reuse_kept));
	set(r, "claimed", JU64(s->reuse_claimed));
	set(r, "wiped", JU64(s->reuse_wiped));
	set(r, "failed", JU64(s->reuse_failed));
	set(o, "reuse", r);
	set(b, "persistent", JU64(s->sandboxes));
	set(b, "persistent_running", JU64(s->sandboxes_running));
	set(b, "oneshot", JU64(s->oneshot));
	set(b, "processes", JU64(s->execs));
	set(b, "requests", JU64(s->requests));
	set(b, "uid_ranges_used", JU64(s->slots_used));
	set(b, "uid_ranges", JU64(s->slots_total));
	set(o, "sandboxes", b);
	return o;
}

static void
json_status(const struct ctl_status *st)
{
	json_t		*o = json_object(), *sd, *ad = json_object();
	json_t		*peers = json_array(), *p;
	size_t		 i;

	if (st->sandboxd_up) {
		sd = json_server(&st->server);
		set(sd, "running", json_true());
		set(sd, "config_is_the_file", json_boolean(strcmp(
		    st->server.config, st->file_config) == 0));
		for (i = 0; i < st->npeers; i++) {
			p = json_object();
			set(p, "role", json_string(proto_role_name(
			    st->peers[i].role)));
			set(p, "pid", JU64(st->peers[i].pid));
			set(p, "uid", JU64(st->peers[i].uid));
			set(p, "software", jstr(st->peers[i].software,
			    strlen(st->peers[i].software)));
			set(p, "since", json_integer(st->peers[i].since));
			set(p, "requests", JU64(st->peers[i].requests));
			push(peers, p);
		}
		set(sd, "peers", peers);
	} else {
		json_decref(peers);
		sd = json_object();
		set(sd, "running", json_false());
		set(sd, "error", jstr(st->sandboxd_error,
		    strlen(st->sandboxd_error)));
	}
	set(ad, "running", json_boolean(st->auditd_up));
	if (st->auditd_up)
		set(ad, "software", jstr(st->auditd_software,
		    strlen(st->auditd_software)));
	else
		set(ad, "error", jstr(st->auditd_error,
		    strlen(st->auditd_error)));
	set(o, "sandboxd", sd);
	set(o, "auditd", ad);
	set(o, "config_file", jstr(st->conffile, strlen(st->conffile)));
	set(o, "config_file_digest", json_string(st->file_config));
	emit(o, JSON_INDENT(2));
}

static void
json_sandbox_list(const struct sbx_info *v, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		push(a, json_info(&v[i]));
	emit(a, JSON_INDENT(2));
}

static void
json_sandbox_inspect(const struct sbx_info *in)
{
	emit(json_info(in), JSON_INDENT(2));
}

static void
json_sandbox_killed(const char *id)
{
	json_t	*o = json_object();

	set(o, "killed", json_string(id));
	emit(o, JSON_COMPACT);
}

/* mcp-sandboxd -n's container under each runtime. */
static json_t *
json_config_trials(const struct config_report *r)
{
	const struct config_trial	*t;
	json_t				*a = json_array();
	size_t				 i;

	for (i = 0; i < r->ntrials; i++) {
		t = &r->trials[i];
		json_array_append_new(a, t->started ?
		    json_pack("{s:s, s:b, s:I}", "runtime", t->runtime,
		    "started", 1, "ms", (json_int_t)t->ms) :
		    json_pack("{s:s, s:b, s:s}", "runtime", t->runtime,
		    "started", 0, "error", t->error));
	}
	return a;
}

static void
json_config_check(const struct config_report *r)
{
	json_t	*o = json_object();

	set(o, "file", jstr(r->file, strlen(r->file)));
	set(o, "ok", json_boolean(r->loaded && r->problems == 0));
	set(o, "parsed", json_boolean(r->loaded));
	set(o, "problems", JU64(r->problems));
	if (r->loaded) {
		set(o, "sha256", json_string(r->digest));
		set(o, "tenants", JU64(r->tenants));
		set(o, "tokens", JU64(r->tokens));
		set(o, "limits", JU64(r->limits));
		set(o, "images", JU64(r->images));
		set(o, "languages", JU64(r->languages));
		set(o, "listens", JU64(r->listens));
		set(o, "runtime", json_pack("{s:s, s:s, s:s}", "name",
		    r->runtime, "kind", r->runtime_kind, "path",
		    r->runtime_path));
		set(o, "containers", json_config_trials(r));
		set(o, "containers_untried", r->untried != NULL ?
		    json_string(r->untried) : json_null());
	}
	emit(o, JSON_INDENT(2));
}

static void
json_token(const struct token_result *t)
{
	json_t	*o = json_object();
	char	 line[128];

	snprintf(line, sizeof(line), "token \"%s\"", t->hash);
	set(o, "token", json_string(t->token));
	set(o, "hash", json_string(t->hash));
	set(o, "line", json_string(line));
	set(o, "tenant", t->tenant != NULL ? json_string(t->tenant) :
	    json_null());
	emit(o, JSON_INDENT(2));
}

const struct output json_output = {
	.list_begin = json_list_begin,
	.list_record = json_list_record,
	.list_end = json_list_end,
	.stream_record = json_stream_record,
	.show = json_show,
	.verify = json_verify,
	.verify_hosts = json_verify_hosts,
	.anchor = json_anchor,
	.keygen = json_keygen,
	.image_list = json_image_list,
	.image_added = json_image_added,
	.image_verify = json_image_verify,
	.status = json_status,
	.sandbox_list = json_sandbox_list,
	.sandbox_inspect = json_sandbox_inspect,
	.sandbox_killed = json_sandbox_killed,
	.config_check = json_config_check,
	.token = json_token,
};
