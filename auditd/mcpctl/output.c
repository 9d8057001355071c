/*
 * Text output: for people at a terminal.  Everything read from the
 * database goes through str_vis() first, since a sandbox's code chose
 * some of it.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcpctl.h"
#include "util.h"

#define SUMMARY_VALUE	40	/* bytes of one value in a list line */
#define SUMMARY_MAX	100	/* bytes of a whole summary */
#define SHORT_ID	8

/* What a list line shows of a body first, when it has them. */
static const char *const summary_first[] = {
	"tool", "language", "image", "name", "command", "code.excerpt",
	"path", "exit", "signal", "error", "error.code", "reason",
	"new_keyid",
};

struct kv {
	char	*key;
	char	*val;	/* made safe */
	int	 shown;
};

static size_t
body_pairs(const struct record *r, struct kv **out)
{
	struct body_iter	 it;
	struct kv		*kv = NULL;
	char			*k, *val;
	size_t			 n = 0, vlen;

	body_iter_init(&it, r->body, r->bodylen);
	while (body_next(&it, &k, &val, &vlen)) {
		kv = xreallocarray(kv, n + 1, sizeof(*kv));
		kv[n].key = str_vis(k, strlen(k));
		kv[n].val = str_vis(val, vlen);
		kv[n].shown = 0;
		n++;
		free(k);
		free(val);
	}
	*out = kv;
	return n;
}

static void
pairs_free(struct kv *kv, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].val);
	}
	free(kv);
}

/* Cut s to at most max (> 3) bytes, never inside a UTF-8 sequence. */
static void
cut(char *s, size_t max)
{
	if (strlen(s) <= max)
		return;
	max -= 3;
	while (max > 0 && (s[max] & 0xc0) == 0x80)
		max--;
	memcpy(s + max, "...", 4);
}

static int
summary_add(char *buf, size_t len, struct kv *kv)
{
	size_t	 used = strlen(buf);
	int	 quote;

	if (kv->shown || used >= SUMMARY_MAX)
		return 0;
	kv->shown = 1;
	cut(kv->val, SUMMARY_VALUE);
	quote = kv->val[0] == '\0' || strpbrk(kv->val, " \"") != NULL;
	snprintf(buf + used, len - used, "%s%s=%s%s%s", used ? " " : "",
	    kv->key, quote ? "\"" : "", kv->val, quote ? "\"" : "");
	return 1;
}

static void
summary(const struct record *r, char *buf, size_t len)
{
	struct kv	*kv;
	size_t		 n, i, j;

	buf[0] = '\0';
	n = body_pairs(r, &kv);
	for (j = 0; j < nitems(summary_first); j++)
		for (i = 0; i < n; i++)
			if (strcmp(kv[i].key, summary_first[j]) == 0)
				summary_add(buf, len, &kv[i]);
	for (i = 0; i < n; i++)
		summary_add(buf, len, &kv[i]);
	pairs_free(kv, n);
	cut(buf, SUMMARY_MAX + SUMMARY_VALUE);
}

static void
text_record(const struct record *r)
{
	char	 t[64], who[128], sum[SUMMARY_MAX * 4 + SUMMARY_VALUE * 8];
	char	*role, *tenant, *sandbox, *event, *outcome;

	time_format(r->time, 3, t, sizeof(t));
	role = str_vis(r->role, strlen(r->role));
	tenant = str_vis(r->tenant, strlen(r->tenant));
	sandbox = str_vis(r->sandbox, strlen(r->sandbox));
	event = str_vis(r->event, strlen(r->event));
	outcome = str_vis(r->outcome, strlen(r->outcome));
	if (strlen(sandbox) > SHORT_ID)
		sandbox[SHORT_ID] = '\0';
	snprintf(who, sizeof(who), "%s[%lld]/%lld", role, (long long)r->pid,
	    (long long)r->uid);
	summary(r, sum, sizeof(sum));
	printf("%6lld %s %-20s %-14s %-7s %-10s %-8s %s\n",
	    (long long)r->seq, t, who, event, outcome,
	    tenant[0] != '\0' ? tenant : "-",
	    sandbox[0] != '\0' ? sandbox : "-", sum);
	free(role);
	free(tenant);
	free(sandbox);
	free(event);
	free(outcome);
}

static void
text_nothing(void)
{
}

static void
field(const char *name, const char *val)
{
	char	*v;

	if (*val == '\0') {
		printf("%s\n", name);
		return;
	}
	v = str_vis(val, strlen(val));
	printf("%-9s %s\n", name, v);
	free(v);
}

static void
hexfield(const char *name, const uint8_t *p, size_t len)
{
	char	 hex[AUDIT_SIG_LEN * 2 + 1];

	audit_hex(p, len, hex);
	printf("%-9s %s\n", name, hex);
}

static void
text_show(const struct record *r)
{
	struct kv	*kv;
	size_t		 n, i, w = 0;
	char		 t[64];

	time_format(r->time, 9, t, sizeof(t));
	printf("%-9s %lld\n", "seq", (long long)r->seq);
	printf("%-9s %s (%lld)\n", "time", t, (long long)r->time);
	field("role", r->role);
	printf("%-9s %lld\n", "pid", (long long)r->pid);
	printf("%-9s %lld\n", "uid", (long long)r->uid);
	field("tenant", r->tenant);
	field("sandbox", r->sandbox);
	field("event", r->event);
	field("outcome", r->outcome);
	n = body_pairs(r, &kv);
	printf("body\n");
	for (i = 0; i < n; i++)
		if (strlen(kv[i].key) > w)
			w = strlen(kv[i].key);
	for (i = 0; i < n; i++)
		printf("    %-*s  %s\n", (int)w, kv[i].key, kv[i].val);
	pairs_free(kv, n);
	hexfield("hash", r->hash, sizeof(r->hash));
	hexfield("prev", r->prev, sizeof(r->prev));
	field("keyid", r->keyid);
	hexfield("sig", r->sig, sizeof(r->sig));
}

/* When the log ends and its last checkpoint was made, and its anchor. */
static void
text_verify_ends(const struct verify_result *res)
{
	char	 t[64];

	if (res->records > 0) {
		time_format(res->last_time, 3, t, sizeof(t));
		printf("last record %llu at %s", (unsigned long long)
		    res->records, t);
	} else
		printf("no record");
	if (res->has_last_checkpoint) {
		time_format(res->last_checkpoint_time, 3, t, sizeof(t));
		printf("; last checkpoint %llu at %s\n", (unsigned long long)
		    res->last_checkpoint, t);
	} else
		printf("; no checkpoint\n");
	if (!res->anchored) {
		printf("NOT ANCHORED: no checkpoint kept elsewhere was given "
		    "with -c\n");
		return;
	}
	printf("anchored by the checkpoint given with -c for records 1..%llu",
	    (unsigned long long)res->anchor);
	if (res->anchor_has_time) {
		time_format(res->anchor_time, 3, t, sizeof(t));
		printf(", made %s", t);
	}
	if (res->anchor < res->records)
		printf("; records %llu..%llu are newer than it",
		    (unsigned long long)res->anchor + 1,
		    (unsigned long long)res->records);
	printf("\n");
}

static void
text_verify(const struct verify_result *res)
{
	size_t	 i;

	if (res->host != NULL)
		printf("host %s (%s): %s\n", res->host, res->path,
		    res->status == EXIT_TAMPERED ? "TAMPERED" :
		    res->status == EXIT_UNVERIFIED ? "NOT VERIFIED" :
		    res->status == EXIT_UNANCHORED ? "whole, not anchored" :
		    "whole and anchored");
	if (res->status == EXIT_TAMPERED) {
		printf("FAILED at seq %lld (%s): %s\n",
		    (long long)res->first_bad, res->kind, res->error);
		printf("verified before it: %llu records, %llu checkpoints\n",
		    (unsigned long long)res->records,
		    (unsigned long long)res->checkpoints);
		return;
	}
	if (res->status != 0 && res->status != EXIT_UNANCHORED)
		return;
	printf("verified %llu record%s, %llu checkpoint%s, key%s",
	    (unsigned long long)res->records, res->records == 1 ? "" : "s",
	    (unsigned long long)res->checkpoints,
	    res->checkpoints == 1 ? "" : "s", res->nkeys == 1 ? "" : "s");
	for (i = 0; i < res->nkeys; i++)
		printf(" %s", res->keys[i]);
	if (res->nkeys == 0)
		printf(" (none)");
	if (res->has_last_checkpoint)
		printf("; last checkpoint size %llu\n",
		    (unsigned long long)res->last_checkpoint);
	else
		printf("; no checkpoint\n");
	text_verify_ends(res);
}

static void
text_verify_hosts(int hosts, int ok, int tampered, int unverified,
    int unanchored)
{
	printf("%d host%s: %d whole and anchored, %d tampered, %d not "
	    "verified, %d not anchored\n", hosts, hosts == 1 ? "" : "s", ok,
	    tampered, unverified, unanchored);
}

/* SIZE:ROOT, which verify -c takes, then the last record's time. */
static void
text_anchor(const struct verify_result *res)
{
	char	 hex[AUDIT_HASH_LEN * 2 + 1], t[64];

	audit_hex(res->root, sizeof(res->root), hex);
	time_format(res->last_time, 3, t, sizeof(t));
	printf("%llu:%s %s\n", (unsigned long long)res->records, hex, t);
}

static void
text_keygen(const struct keygen_result *k)
{
	printf("new audit key %s: %s (public key %s)\n", k->keyid, k->secret,
	    k->public);
	if (k->staged)
		printf("mcp-auditd rotates to it when it next starts\n");
	else
		printf("mcp-auditd signs with it from its next start\n");
}

/* 1536 bytes as "1.5K": a column's worth. */
static void
size_human(uint64_t n, char *buf, size_t len)
{
	static const char	 units[] = "KMGTPE";
	double			 v = (double)n;
	int			 i = -1;

	if (n < 1024) {
		snprintf(buf, len, "%lluB", (unsigned long long)n);
		return;
	}
	while (v >= 1024 && i < (int)sizeof(units) - 2) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f%c", v, units[i]);
}

static void
text_image_list(const struct imgstore_image *v, size_t n)
{
	struct tm	 tm;
	time_t		 t;
	char		 size[16], created[32], *src;
	size_t		 i;

	printf("%-20s %-12s %7s %-16s %s\n", "NAME", "DIGEST", "SIZE",
	    "CREATED", "SOURCE");
	for (i = 0; i < n; i++) {
		t = (time_t)v[i].created;
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(created, sizeof(created), "%Y-%m-%d %H:%M",
		    &tm) == 0)
			snprintf(created, sizeof(created), "%lld",
			    (long long)v[i].created);
		size_human(v[i].size, size, sizeof(size));
		src = str_vis(v[i].source, strlen(v[i].source));
		printf("%-20s %.12s %7s %-16s %s\n", v[i].name,
		    v[i].digest + strlen(IMGSTORE_PREFIX), size, created, src);
		free(src);
	}
}

static void
text_image_added(const struct imgstore_image *im)
{
	printf("%s %s\n", im->name, im->digest);
}

static void
text_image_verify(const struct image_check *chk)
{
	const char	*what = chk->im->name[0] != '\0' ? chk->im->name :
			    chk->im->digest;
	char		 size[16];

	if (chk->status != 0) {
		printf("%s: ALTERED: %s\n", what, chk->error);
		return;
	}
	size_human(chk->sum.size, size, sizeof(size));
	printf("%s: verified %s (%llu files, %s)\n", what, chk->sum.digest,
	    (unsigned long long)chk->sum.files, size);
}

/* 3725 seconds as "1h 2m": how long something has been up. */
static void
duration_human(int64_t secs, char *buf, size_t len)
{
	if (secs < 0)
		secs = 0;
	if (secs < 60)
		snprintf(buf, len, "%llds", (long long)secs);
	else if (secs < 3600)
		snprintf(buf, len, "%lldm %llds", (long long)(secs / 60),
		    (long long)(secs % 60));
	else if (secs < 86400)
		snprintf(buf, len, "%lldh %lldm", (long long)(secs / 3600),
		    (long long)(secs / 60 % 60));
	else
		snprintf(buf, len, "%lldd %lldh", (long long)(secs / 86400),
		    (long long)(secs / 3600 % 24));
}

/* Seconds since the epoch as UTC "2026-11-22 01:02:03", or "-" for 0. */
static void
epoch_human(int64_t secs, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)secs;

	if (secs == 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "-");
}

static void
text_status(const struct ctl_status *st)
{
	const struct sbx_server	*s = &st->server;
	char			 up[32], since[32], *sw;
	size_t			 i;

	if (!st->sandboxd_up)
		printf("mcp-sandboxd: NOT RUNNING: %s\n", st->sandboxd_error);
	else {
		duration_human(time(NULL) - s->started, up, sizeof(up));
		printf("mcp-sandboxd: %s, pid %u, protocol %u, up %s, runc "
		    "%s\n", s->software, s->pid, s->protocol, up,
		    s->runc[0] ? s->runc : "(not known yet)");
		printf("configuration: %s%s\n", s->config,
		    strcmp(s->config, st->file_config) == 0 ? "" :
		    " (not that of the file now: reload or restart)");
	}
	if (st->auditd_up)
		printf("mcp-auditd: %s, answering\n", st->auditd_software);
	else
		printf("mcp-auditd: NOT RUNNING: %s\n", st->auditd_error);
	if (!st->sandboxd_up)
		return;
	printf("audit: %s, %s; %llu records sent, %llu committed, %llu "
	    "failed, %llu waiting (oldest %llu ms)\n",
	    s->audit_required ? "required" : "not required",
	    s->audit_connected ? "sandboxd connected to auditd" :
	    "sandboxd NOT connected to auditd",
	    (unsigned long long)s->audit_sent,
	    (unsigned long long)s->audit_committed,
	    (unsigned long long)s->audit_failed,
	    (unsigned long long)s->audit_waiting,
	    (unsigned long long)s->audit_lag_ms);
	printf("pool: %u warm containers ready, %u starting, %u wanted; "
	    "%llu runs served warm, %llu found none, %llu starts failed\n",
	    s->pool_ready, s->pool_starting, s->pool_target,
	    (unsigned long long)s->pool_claimed,
	    (unsigned long long)s->pool_empty,
	    (unsigned long long)s->pool_failed);
	printf("reuse: %u containers kept for their tenants; %llu runs "
	    "served by one, %llu wipes, %llu failed\n", s->reuse_kept,
	    (unsigned long long)s->reuse_claimed,
	    (unsigned long long)s->reuse_wiped,
	    (unsigned long long)s->reuse_failed);
	printf("sandboxes: %u persistent (%u running), %u one-shot runs; "
	    "%u processes; %u requests in progress; uid ranges %u of %u\n",
	    s->sandboxes, s->sandboxes_running, s->oneshot, s->execs,
	    s->requests, s->slots_used, s->slots_total);
	printf("connected to mcp-sandboxd:\n");
	printf("  %-12s %7s %7s %-20s %-19s %s\n", "ROLE", "PID", "UID",
	    "SOFTWARE", "SINCE (UTC)", "REQUESTS");
	for (i = 0; i < st->npeers; i++) {
		epoch_human(st->peers[i].since, since, sizeof(since));
		sw = str_vis(st->peers[i].software,
		    strlen(st->peers[i].software));
		printf("  %-12s %7u %7u %-20s %-19s %u\n",
		    proto_role_name(st->peers[i].role), st->peers[i].pid,
		    st->peers[i].uid, sw, since, st->peers[i].requests);
		free(sw);
	}
}

static const char *
info_state(const struct sbx_info *in)
{
	return in->state == SBX_STATE_RUNNING ? "running" : "idle";
}

static void
text_sandbox_list(const struct sbx_info *v, size_t n)
{
	char	 mem[16], created[32];
	size_t	 i;

	printf("%-32s %-12s %-16s %-12s %-8s %7s %5s %s\n", "ID", "TENANT",
	    "NAME", "IMAGE", "STATE", "MEMORY", "PROCS", "CREATED (UTC)");
	for (i = 0; i < n; i++) {
		size_human(v[i].memory, mem, sizeof(mem));
		epoch_human(v[i].created, created, sizeof(created));
		printf("%-32s %-12s %-16s %-12s %-8s %7s %5u %s\n", v[i].id,
		    v[i].tenant[0] ? v[i].tenant : "-",
		    (v[i].flags & SBX_INFO_ONESHOT) ? "(a run)" :
		    v[i].name[0] ? v[i].name : "-", v[i].image,
		    info_state(&v[i]), mem, v[i].execs, created);
	}
}

static void
text_sandbox_inspect(const struct sbx_info *in)
{
	char	 b[64];

	printf("id: %s\n", in->id);
	printf("tenant: %s\n", in->tenant[0] ? in->tenant : "-");
	printf("kind: %s\n", (in->flags & SBX_INFO_ONESHOT) ?
	    "one-shot (a run's own)" : "persistent");
	printf("name: %s\n", in->name[0] ? in->name : "-");
	printf("image: %s\n", in->image);
	printf("runtime: %s\n", in->runtime);
	printf("state: %s\n", info_state(in));
	printf("init pid: %d\n", (int)in->init_pid);
	printf("processes: %u\n", in->execs);
	size_human(in->memory, b, sizeof(b));
	printf("memory in use: %s\n", b);
	epoch_human(in->created, b, sizeof(b));
	printf("created: %s UTC\n", b);
	epoch_human(in->last_used, b, sizeof(b));
	printf("last used: %s UTC\n", b);
	if (!(in->flags & SBX_INFO_ONESHOT)) {
		epoch_human(in->expires, b, sizeof(b));
		printf("expires: %s UTC\n", b);
	}
	size_human(in->lim.memory, b, sizeof(b));
	printf("limit memory: %s\n", b);
	printf("limit cpus: %u.%03u\n", in->lim.cpus / 1000,
	    in->lim.cpus % 1000);
	printf("limit pids: %u\n", in->lim.pids);
	size_human(in->lim.disk, b, sizeof(b));
	printf("limit disk: %s\n", b);
	size_human(in->lim.output, b, sizeof(b));
	printf("limit output: %s\n", b);
	printf("limit timeout: %llu ms\n",
	    (unsigned long long)in->lim.timeout);
	printf("limit network: %s\n", in->lim.network == SBX_NET_EGRESS ?
	    "egress" : "none");
}

static void
text_sandbox_killed(const char *id)
{
	printf("killed %s\n", id);
}

static void
text_config_check(const struct config_report *r)
{
	const struct config_trial	*t;
	size_t				 i;

	if (!r->loaded) {
		printf("%s: NOT OK: it does not parse\n", r->file);
		return;
	}
	for (i = 0; i < r->ntrials; i++) {
		t = &r->trials[i];
		if (t->started)
			printf("runtime %s: a container started in %llu ms\n",
			    t->runtime, t->ms);
		else
			printf("runtime %s: NO container started: %s\n",
			    t->runtime, t->error);
	}
	if (r->untried != NULL)
		printf("runtimes: no container tried: %s\n", r->untried);
	printf("%s: %s%s: %zu tenants (%zu tokens), %zu limits, %zu images, "
	    "%zu languages, %zu listen statements; runtime %s (%s, %s); %s\n",
	    r->file, r->problems == 0 ? "OK" : "NOT OK", r->problems == 0 ?
	    "" : " (see above)", r->tenants, r->tokens, r->limits, r->images,
	    r->languages, r->listens, r->runtime, r->runtime_kind,
	    r->runtime_path, r->digest);
}

static void
text_token(const struct token_result *t)
{
	printf("%s\n", t->token);
	if (t->tenant != NULL)
		printf("# in mcpd.conf, in the block \"tenant %s { ... }\":"
		    "\n", t->tenant);
	else
		printf("# in mcpd.conf, in the tenant's block:\n");
	printf("\ttoken \"%s\"\n", t->hash);
}

const struct output text_output = {
	.list_begin = text_nothing,
	.list_record = text_record,
	.list_end = text_nothing,
	.stream_record = text_record,
	.show = text_show,
	.verify = text_verify,
	.verify_hosts = text_verify_hosts,
	.anchor = text_anchor,
	.keygen = text_keygen,
	.image_list = text_image_list,
	.image_added = text_image_added,
	.image_verify = text_image_verify,
	.status = text_status,
	.sandbox_list = text_sandbox_list,
	.sandbox_inspect = text_sandbox_inspect,
	.sandbox_killed = text_sandbox_killed,
	.config_check = text_config_check,
	.token = text_token,
};
