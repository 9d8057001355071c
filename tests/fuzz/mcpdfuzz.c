/*
 * mcpd as its fuzz targets run it: see mcpdfuzz.h.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "fuzz.h"
#include "imsg.h"
#include "log.h"
#include "policy.h"
#include "proc.h"
#include "proto.h"
#include "util.h"
#include "../../auditd/auditd.h"
#include "../../mcpd/mcp.h"
#include "../../mcpd/mcpd.h"
#include "../../mcpd/metrics.h"
#include "../../mcpd/sbxcall.h"
#include "../../mcpd/tasks.h"
#include "mcpdfuzz.h"

#define SBX_ID		"00112233445566778899aabbccddeeff"
#define HARNESS_FRAME	(256 * 1024)

/* mcpd.c's, main() left out. */
size_t			 mcpd_max_message = MCPD_MAX_MESSAGE;
const struct policy	*mcpd_conf;
struct event_base	*mcp_base;

struct event_base	*mcpdfuzz_base;

/* A sibling daemon: mcpd's connection to it, and the harness's end. */
struct sibling {
	struct conn	 conn;
	struct imsgbuf	 ib;
};

static const char	 conf_fmt[] =
	"run directory \"%s/run\"\n"
	"state directory \"%s/state\"\n"
	"allow host \"mcp.example.com\"\n"
	"allow origin \"https://app.example.com\"\n"
	"listen on unix \"%s/open.sock\" tenant alice\n"
	"listen on unix \"%s/auth.sock\"\n"
	"limits default {\n memory 512M\n timeout 30s\n}\n"
	"tenant alice {\n"
	" token sha256:9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732"
	    "affa5bd1dc\n"
	" max requests 8\n}\n"
	"tenant bob {\n"
	" token sha256:97dd3707015dcf069cf73022ed7173b1165db6eff24b441cb57fd0"
	    "69a8c4e525\n"
	"}\n"
	"tenant carol {\n uid %u\n}\n"
	/* printf %s metrics-token | sha256sum */
	"metrics token sha256:eb5a63e42b6b498364b3f10d5c3bb71cd8c7a7a9ad1652487"
	    "5557fa2e52f5d41\n"
	"metrics tenant alice\n"
	"audit {\n required no\n excerpt 64\n}\n";

static struct sibling	 sbx, aud;
static enum sbx_mode	 mode;

static void
noop_dispatch(struct imsgev *iev, struct imsg *imsg)
{
}

static void
noop_closed(struct imsgev *iev, const char *why)
{
}

void
mcpdfuzz_init(void)
{
	struct policy	*conf;
	char		*text;
	const char	*dir = fuzz_tmpdir();

	if (sodium_init() == -1)
		fatalx("sodium_init");
	/* The same order of keys in every run: inputs replay alike. */
	json_object_seed(1);
	xasprintf(&text, conf_fmt, dir, dir, dir, dir, (unsigned)getuid());
	conf = fuzz_policy(text);
	free(text);
	if (policy_resolve(conf, POLICY_RESOLVE_TENANTS) == -1)
		fatalx("policy_resolve");
	mcpd_conf = conf;
	if ((mcpdfuzz_base = event_base_new()) == NULL)
		fatalx("event_base_new");
	mcp_base = mcpdfuzz_base;
	tools_init();
}

static void
sibling_up(struct sibling *s, enum proc_role role)
{
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0, sv) == -1)
		fatal("socketpair");
	memset(&s->conn, 0, sizeof(s->conn));
	if (imsgev_init(&s->conn.iev, mcpdfuzz_base, sv[0], PROTO_MAX_FRAME,
	    0, noop_dispatch, noop_closed, &s->conn) == -1)
		fatalx("imsgev_init");
	s->conn.role = role;
	s->conn.up = 1;
	snprintf(s->conn.name, sizeof(s->conn.name), "%s",
	    proto_role_name(role));
	/* A small input makes small requests: a smaller buffer, faster. */
	imsgbuf_init(&s->ib, sv[1], HARNESS_FRAME, 0);
}

static void
sibling_down(struct sibling *s)
{
	imsgev_clear(&s->conn.iev);
	close(s->ib.fd);
	imsgbuf_clear(&s->ib);
}

void
mcpdfuzz_begin(void)
{
	mode = SBX_OK;
	mcp_init(0);
	sbx_calls_init(mcpdfuzz_base);
	session_expire_start(mcpdfuzz_base);
	sibling_up(&sbx, ROLE_SANDBOXD);
	sibling_up(&aud, ROLE_AUDITD);
	sbx_calls_up(&sbx.conn);
	maudit_up(&aud.conn);
	metrics_sandboxd(1, 1);
	metrics_auditd(1);
}

void
mcpdfuzz_end(void)
{
	/* As main() after its loop. */
	mcp_shutdown();
	tasks_shutdown();
	session_shutdown();
	sbx_calls_shutdown();
	mcpdfuzz_pump();
	maudit_down();
	metrics_sandboxd(0, 0);
	metrics_auditd(0);
	sibling_down(&sbx);
	sibling_down(&aud);
}

void
mcpdfuzz_mode(enum sbx_mode m)
{
	mode = m % SBX_NMODES;
}

void
mcpdfuzz_check_json(json_t *msg)
{
	json_t		*back;
	json_error_t	 e;
	char		*s;

	s = json_dumps(msg, JSON_COMPACT);
	if (s == NULL || strchr(s, '\n') != NULL ||
	    (back = json_loads(s, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    &e)) == NULL ||
	    (!json_is_object(back) && !json_is_array(back))) {
		fprintf(stderr, "mcpd wrote a message that is not JSON-RPC: "
		    "%s\n", s != NULL ? s : "(null)");
		abort();
	}
	json_decref(back);
	free(s);
}

/* --- sandboxd's answers ------------------------------------------------- */

static void
answer(uint32_t type, uint32_t id, const void *p, size_t len)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.hdr.peerid = id;
	m.hdr.len = (uint32_t)(IMSG_HEADER_SIZE + len);
	m.fd = -1;
	m.data = len > 0 ? (void *)(uintptr_t)p : NULL;
	m.datalen = len;
	sbx_calls_dispatch(&m);
}

static void
answer_done(uint32_t id, uint64_t size)
{
	struct sbx_done	 d;

	memset(&d, 0, sizeof(d));
	d.size = size;
	d.mode = 0100644;
	d.mtime = 1700000000;
	if (mode == SBX_ODD)
		d.flags = INIT_D_TRUNCATED;
	answer(IMSG_SBX_DONE, id, &d, sizeof(d));
}

static void
answer_info(uint32_t type, uint32_t id, const char *name)
{
	struct sbx_info	 in;

	memset(&in, 0, sizeof(in));
	memcpy(in.id, SBX_ID, sizeof(in.id));
	str_copy(in.name, name, sizeof(in.name));
	str_copy(in.tenant, "alice", sizeof(in.tenant));
	str_copy(in.image, "host", sizeof(in.image));
	in.lim.memory = 512 << 20;
	in.lim.timeout = 30000;
	in.lim.cpus = 1000;
	in.created = in.last_used = 1700000000;
	in.expires = mode == SBX_ODD ? INT64_MIN : 1700003600;
	in.state = SBX_STATE_RUNNING;
	answer(type, id, &in, sizeof(in));
}

static void
answer_output(uint32_t id, uint32_t stream, const char *text, size_t len)
{
	uint8_t			 buf[256];
	struct sbx_output	 o;

	memset(&o, 0, sizeof(o));
	o.stream = stream;
	memcpy(buf, &o, sizeof(o));
	memcpy(buf + sizeof(o), text, len);
	answer(IMSG_SBX_OUTPUT, id, buf, sizeof(o) + len);
}

static void
answer_entries(uint32_t id)
{
	static const char *const names[] = { "out.txt", "plot.png" };
	struct init_entry	 e;
	uint8_t			 buf[256];
	size_t			 i, off = 0;

	for (i = 0; i < nitems(names); i++) {
		memset(&e, 0, sizeof(e));
		e.size = 8;
		e.mtime = 1700000000;
		e.mode = 0100644;
		e.namelen = (uint32_t)strlen(names[i]) + 1;
		if (mode == SBX_MALFORMED && i == 1)
			e.namelen += 40;
		memcpy(buf + off, &e, sizeof(e));
		memcpy(buf + off + sizeof(e), names[i], strlen(names[i]) + 1);
		off += sizeof(e) + strlen(names[i]) + 1;
	}
	answer(IMSG_SBX_ENTRY, id, buf, off);
}

static void
answer_run(uint32_t type, uint32_t id)
{
	static const uint8_t	 png[8] = { 0x89, 'P', 'N', 'G', 13, 10, 26,
				    10 };
	struct sbx_result	 r;
	struct sbx_picture	 sp;
	uint8_t			 buf[64];

	if (mode == SBX_ODD)
		answer_output(id, SBX_STREAM_STDOUT, "caf\xc3\xa9 \xff\xfe\0\n",
		    10);
	else
		answer_output(id, SBX_STREAM_STDOUT, "hello\n", 6);
	answer_output(id, SBX_STREAM_STDERR, "warning: x\n", 11);
	memset(&r, 0, sizeof(r));
	r.wall_ms = 41;
	r.stdout_bytes = 6;
	r.stderr_bytes = 11;
	if (mode == SBX_ODD) {
		r.exit_code = -1;
		r.signal = 9;
		r.flags = SBX_R_TIMED_OUT | SBX_R_OOM | SBX_R_TRUNCATED;
	}
	if (type == IMSG_SBX_RUN) {
		answer_entries(id);
		memset(&sp, 0, sizeof(sp));
		sp.size = sizeof(png);
		sp.pathlen = sizeof("plot.png");
		memcpy(buf, &sp, sizeof(sp));
		memcpy(buf + sizeof(sp), "plot.png", sp.pathlen);
		answer(IMSG_SBX_PICTURE, id, buf, sizeof(sp) + sp.pathlen);
		answer(IMSG_SBX_DATA, id, png, sizeof(png));
	}
	answer(IMSG_SBX_RESULT, id, &r, mode == SBX_MALFORMED ? 7 : sizeof(r));
}

static void
answer_images(uint32_t id)
{
	struct sbx_image	 im;
	struct sbx_lang		 sl;

	memset(&im, 0, sizeof(im));
	str_copy(im.name, "host", sizeof(im.name));
	im.type = SBX_IMAGE_HOST;
	im.pool = 2;
	answer(IMSG_SBX_IMAGE, id, &im, sizeof(im));
	memset(&sl, 0, sizeof(sl));
	str_copy(sl.image, "host", sizeof(sl.image));
	str_copy(sl.language, "python", sizeof(sl.language));
	str_copy(sl.version, "Python 3.11.2", sizeof(sl.version));
	answer(IMSG_SBX_LANG, id, &sl, sizeof(sl));
	memset(&im, 0, sizeof(im));
	str_copy(im.name, "data", sizeof(im.name));
	str_copy(im.digest, "sha256:0123", sizeof(im.digest));
	str_copy(im.source, "debootstrap bookworm", sizeof(im.source));
	im.type = SBX_IMAGE_STORED;
	im.size = 1 << 30;
	answer(IMSG_SBX_IMAGE, id, &im, sizeof(im));
	answer_done(id, 2);
}

static void
answer_fail(uint32_t id)
{
	struct sbx_error	 e;

	memset(&e, 0, sizeof(e));
	e.code = SBX_E_INVALID + id % SBX_E_CANCELLED;
	e.err = 2;
	str_copy(e.message, "the sandbox service says no",
	    sizeof(e.message));
	answer(IMSG_SBX_ERROR, id, &e, sizeof(e));
}

/* SERVER: a peer, the counts, DONE. */
static void
answer_server(uint32_t id)
{
	struct sbx_peer		 p;
	struct sbx_server	 s;

	memset(&p, 0, sizeof(p));
	str_copy(p.software, "mcpd 0.1.0", sizeof(p.software));
	p.role = ROLE_MCPD;
	answer(IMSG_SBX_PEER, id, &p, sizeof(p));
	memset(&s, 0, sizeof(s));
	str_copy(s.software, "mcp-sandboxd 0.1.0", sizeof(s.software));
	s.audit_sent = s.audit_committed = 42;
	s.audit_lag_ms = mode == SBX_ODD ? UINT64_MAX : 7;
	s.pool_ready = s.pool_target = 2;
	s.pool_claimed = mode == SBX_ODD ? UINT64_MAX : 9;
	s.slots_total = 4096;
	answer(IMSG_SBX_SERVERINFO, id, &s, sizeof(s));
	answer_done(id, 1);
}

/* A request, answered as a sandbox that works would. */
static void
answer_ok(const struct imsg *m)
{
	struct sbx_create	 cr;
	uint32_t		 id = m->hdr.peerid;

	switch (m->hdr.type) {
	case IMSG_SBX_CREATE:
		memset(&cr, 0, sizeof(cr));
		if (m->datalen >= sizeof(cr))
			memcpy(&cr, m->data, sizeof(cr));
		cr.name[sizeof(cr.name) - 1] = '\0';
		answer_info(IMSG_SBX_CREATED, id, cr.name);
		break;
	case IMSG_SBX_RUN:
	case IMSG_SBX_EXEC:
		answer_run(m->hdr.type, id);
		break;
	case IMSG_SBX_READ:
		if (mode == SBX_ODD)
			answer(IMSG_SBX_DATA, id, "\x89PNG\r\n\x1a\n\xff", 9);
		else
			answer(IMSG_SBX_DATA, id, "file content\n", 13);
		answer_done(id, 13);
		break;
	case IMSG_SBX_LIST_FILES:
		answer_entries(id);
		answer_done(id, 2);
		break;
	case IMSG_SBX_LIST:
	case IMSG_SBX_STATUS:
		answer_info(IMSG_SBX_INFO, id, "work");
		answer_done(id, 1);
		break;
	case IMSG_SBX_LOGS:
		answer(IMSG_SBX_DATA, id, "$ ls\nmain.py\n[exit 0]\n", 22);
		answer_done(id, 22);
		break;
	case IMSG_SBX_IMAGES:
		answer_images(id);
		break;
	case IMSG_SBX_SERVER:
		answer_server(id);
		break;
	default:
		answer_done(id, 0);
		break;
	}
}

static void
sbx_request(const struct imsg *m)
{
	if (m->hdr.type == IMSG_SBX_CANCEL) {
		/* Only a silent sandboxd still has the call running. */
		if (mode == SBX_SILENT)
			answer_fail(m->hdr.peerid);
		return;
	}
	switch (mode) {
	case SBX_FAIL:
		answer_fail(m->hdr.peerid);
		break;
	case SBX_MALFORMED:
		answer(IMSG_SBX_INFO, m->hdr.peerid, "x", 1);
		answer_ok(m);
		break;
	case SBX_SILENT:
		break;
	default:
		answer_ok(m);
		break;
	}
}

/* What mcpd sent: sandboxd answers it, auditd checks it. */
static int
sibling_read(struct sibling *s, void (*fn)(const struct imsg *))
{
	struct imsg	 m;
	int		 n = 0;

	while (imsgbuf_read(&s->ib) > 0)
		;
	while (imsg_get(&s->ib, &m) == 1) {
		fn(&m);
		imsg_free(&m);
		n++;
	}
	return n;
}

static void
audit_record(const struct imsg *m)
{
	struct pending_record	*r;
	char			 why[160];

	if (m->hdr.type != IMSG_AUDIT_RECORD)
		fatalx("mcpd sent auditd message type %u", m->hdr.type);
	if ((r = record_decode(m->data, m->datalen, why, sizeof(why))) ==
	    NULL) {
		fprintf(stderr, "mcp-auditd would refuse mcpd's record: %s\n",
		    why);
		abort();
	}
	free(r->body);
	free(r);
}

void
mcpdfuzz_pump(void)
{
	int	 i, n;

	for (i = 0; i < 64; i++) {
		event_base_loop(mcpdfuzz_base, EVLOOP_NONBLOCK);
		n = sibling_read(&sbx, sbx_request);
		n += sibling_read(&aud, audit_record);
		if (n == 0 && i >= 2)
			break;
	}
}
