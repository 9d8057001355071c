/*
 * The binary seeds of the fuzz targets whose input is frames: valid
 * messages built from the structs of proto.h, and a client's WebSocket
 * frames, in each target's input format, so that the fuzzers start from
 * what the peers really say.
 * Text seeds (HTTP, JSON-RPC, mcpd.conf) are committed as they are.
 *
 *	mkseeds DIR	writes DIR/{imsg,sandboxd,auditd,init,ws}/seed-*
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "proto.h"

struct buf {
	uint8_t		 d[65536];
	size_t		 len;
};

static const char	*outdir;

static void
put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > sizeof(b->d))
		errx(1, "seed too large");
	memcpy(b->d + b->len, p, n);
	b->len += n;
}

static void
put_u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

/* The harnesses' lengths are big-endian, 2 bytes. */
static void
put_u16(struct buf *b, size_t v)
{
	put_u8(b, (uint8_t)(v >> 8));
	put_u8(b, (uint8_t)v);
}

static void
put_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s) + 1);
}

/* An imsg frame: header and payload. */
static void
frame(struct buf *b, uint32_t type, uint32_t peerid, int fd,
    const void *p, size_t n)
{
	struct imsg_hdr	 h;

	h.type = type;
	h.len = (uint32_t)(IMSG_HEADER_SIZE + n) | (fd ? IMSG_FD_MARK : 0);
	h.peerid = peerid;
	h.pid = 4242;
	put(b, &h, sizeof(h));
	put(b, p, n);
}

/* A [ctl][len][bytes] step or chunk of a harness's input. */
static void
step(struct buf *b, uint8_t ctl, const struct buf *payload)
{
	put_u8(b, ctl);
	put_u16(b, payload != NULL ? payload->len : 0);
	if (payload != NULL)
		put(b, payload->d, payload->len);
}

static void
save(const char *target, const char *name, const struct buf *b)
{
	char	 path[1024];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		err(1, "%s", path);
	snprintf(path, sizeof(path), "%s/%s/seed-%s", outdir, target, name);
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(b->d, 1, b->len, f) != b->len || fclose(f) != 0)
		err(1, "%s", path);
}

static void
hello(struct buf *b, uint32_t role)
{
	struct proto_hello	 h;

	proto_hello_init(&h, role);
	frame(b, IMSG_HELLO, 0, 0, &h, sizeof(h));
}

/* --- imsg ------------------------------------------------------------- */

static void
seeds_imsg(void)
{
	struct buf		 b, c;
	struct proto_ping	 ping;
	struct audit_record	 ar;
	struct init_exec	 ie;
	uint32_t		 which = INIT_FD_STDOUT;
	const char		 body[] = "command=ls\nexit=0\n";
	size_t			 i;

	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	put_u8(&b, 5 << 1);			/* 64 KB frames */
	hello(&c, ROLE_MCPD);
	step(&b, 0, &c);
	save("imsg", "hello", &b);

	memset(&ping, 0, sizeof(ping));
	ping.cookie = 77;
	ping.flags = PING_VIA_AUDITD;
	c.len = 0;
	frame(&c, IMSG_PING, 1, 0, &ping, sizeof(ping));
	frame(&c, IMSG_PONG, 1, 0, &ping, sizeof(ping));
	step(&b, 0, &c);
	save("imsg", "hello-ping-pong", &b);

	/* Byte by byte, the reads deferred in between. */
	b.len = 0;
	put_u8(&b, 5 << 1);
	c.len = 0;
	hello(&c, ROLE_SANDBOXD);
	for (i = 0; i < c.len; i++) {
		put_u8(&b, i % 7 == 6 ? 0 : 4);
		put_u16(&b, 1);
		put_u8(&b, c.d[i]);
	}
	save("imsg", "hello-bytewise", &b);

	/* An exec's fd and its EXEC frame, with fd passing. */
	b.len = 0;
	put_u8(&b, 1 | 6 << 1);
	c.len = 0;
	frame(&c, IMSG_INIT_FD, 9, 1, &which, sizeof(which));
	step(&b, 1, &c);
	c.len = 0;
	memset(&ie, 0, sizeof(ie));
	ie.argc = 3;
	ie.envc = 1;
	ie.flags = INIT_EXEC_SH;
	{
		struct buf	 p;

		p.len = 0;
		put(&p, &ie, sizeof(ie));
		put_str(&p, "");
		put_str(&p, "/bin/sh");
		put_str(&p, "-c");
		put_str(&p, "python3 main.py");
		put_str(&p, "PATH=/usr/bin:/bin");
		frame(&c, IMSG_INIT_EXEC, 9, 0, p.d, p.len);
	}
	step(&b, 0, &c);
	save("imsg", "init-fd-exec", &b);

	/* An fd with no mark, and a mark with no fd. */
	b.len = 0;
	put_u8(&b, 1 | 4 << 1);
	c.len = 0;
	frame(&c, IMSG_INIT_FD, 1, 0, &which, sizeof(which));
	step(&b, 1, &c);
	c.len = 0;
	frame(&c, IMSG_INIT_FD, 2, 1, &which, sizeof(which));
	step(&b, 0, &c);
	save("imsg", "fd-mismatch", &b);

	/* An audit record, on a channel between daemons. */
	b.len = 0;
	put_u8(&b, 7 << 1);
	memset(&ar, 0, sizeof(ar));
	ar.event = AEV_EXEC;
	ar.outcome = AOC_OK;
	strcpy(ar.tenant, "alice");
	strcpy(ar.sandbox, "00112233445566778899aabbccddeeff");
	ar.bodylen = sizeof(body) - 1;
	c.len = 0;
	put(&c, &ar, sizeof(ar));
	put(&c, body, sizeof(body) - 1);
	{
		struct buf	 f;

		f.len = 0;
		frame(&f, IMSG_AUDIT_RECORD, 3, 0, c.d, c.len);
		step(&b, 0, &f);
	}
	save("imsg", "audit-record", &b);
}

/* --- auditd ----------------------------------------------------------- */

static void
record(struct buf *b, uint8_t ctl, uint32_t event, uint32_t outcome,
    const char *tenant, const char *sandbox, const char *body)
{
	struct audit_record	 ar;
	struct buf		 p;

	memset(&ar, 0, sizeof(ar));
	ar.event = event;
	ar.outcome = outcome;
	strcpy(ar.tenant, tenant);
	strcpy(ar.sandbox, sandbox);
	ar.bodylen = (uint32_t)strlen(body);
	p.len = 0;
	put(&p, &ar, sizeof(ar));
	put(&p, body, strlen(body));
	step(b, ctl, &p);
}

static void
seeds_auditd(void)
{
	struct buf	 b;
	const char	*sb = "00112233445566778899aabbccddeeff";

	b.len = 0;
	record(&b, 0x80, AEV_TOOL_CALL, AOC_OK, "alice", "",
	    "arguments.bytes=27\nname=run_code\n");
	save("auditd", "tool-call", &b);

	b.len = 0;
	record(&b, 1, AEV_RUN, AOC_INTENT, "alice", sb,
	    "args=0\ncode.bytes=9\ncode.excerpt=print(1)%0A\n"
	    "image=host\nlanguage=python\n");
	record(&b, 1, AEV_RUN, AOC_OK, "alice", sb,
	    "exit=0\nstdout.bytes=2\nstdout.excerpt=1%0A\nwall_ms=41\n");
	record(&b, 0x81, AEV_SANDBOX_STOP, AOC_OK, "alice", sb, "");
	save("auditd", "run-batch", &b);

	b.len = 0;
	record(&b, 2, AEV_AUTH_FAILURE, AOC_DENIED, "", "",
	    "peer=127.0.0.1:4711\nreason=unknown token\n");
	record(&b, 3, AEV_POLICY_DENIAL, AOC_DENIED, "bob", "",
	    "reason=memory 2G exceeds the tenant's limit\nrequest=129\n");
	record(&b, 0, AEV_DAEMON_START, AOC_OK, "", "",
	    "config=/etc/mcpd/mcpd.conf\nmode=http\nversion=0.1.0\n");
	save("auditd", "mixed-roles", &b);
}

/* --- sandboxd --------------------------------------------------------- */

/* A request step: [type - 128][client][peerid][payload]. */
static void
request(struct buf *b, uint32_t type, uint8_t client, uint8_t peerid,
    const struct buf *p)
{
	struct buf	 s;

	s.len = 0;
	put_u8(&s, (uint8_t)(type - IMSG_SBX_CREATE));
	put_u8(&s, client);
	put_u8(&s, peerid);
	if (p != NULL)
		put(&s, p->d, p->len);
	step(b, 0, &s);
}

static void
ref(struct sbx_ref *r, const char *tenant, const char *id)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->tenant, tenant);
	strcpy(r->id, id);
}

/* Helper answers, with init's hello: ctl 2 | 16. */
static void
started(struct buf *b)
{
	step(b, 2 | 16, NULL);
}

/* Bytes from the init of container n: frames. */
static void
from_init(struct buf *b, int n, const struct buf *frames)
{
	step(b, (uint8_t)(1 | n << 3), frames);
}

static void
file_req(struct buf *p, const char *tenant, const char *id, uint32_t flags,
    uint64_t size, const char *path, const char *content)
{
	struct sbx_file	 f;

	memset(&f, 0, sizeof(f));
	ref(&f.ref, tenant, id);
	f.flags = flags;
	f.size = size;
	f.pathlen = (uint32_t)strlen(path) + 1;
	p->len = 0;
	put(p, &f, sizeof(f));
	put_str(p, path);
	if (content != NULL)
		put(p, content, (size_t)size);
}

static void
done_frame(struct buf *b, uint32_t id, int32_t error, uint64_t size)
{
	struct init_done	 d;

	memset(&d, 0, sizeof(d));
	d.error = error;
	d.size = size;
	d.mode = 0100644;
	d.mtime = 1700000000;
	frame(b, IMSG_INIT_DONE, id, 0, &d, sizeof(d));
}

static void
entry(struct buf *b, const char *name, uint32_t mode, uint64_t size,
    int64_t mtime)
{
	struct init_entry	 e;

	memset(&e, 0, sizeof(e));
	e.size = size;
	e.mtime = mtime;
	e.mode = mode;
	e.namelen = (uint32_t)strlen(name) + 1;
	put(b, &e, sizeof(e));
	put_str(b, name);
}

static void
exited_frame(struct buf *b, uint32_t id, int32_t status)
{
	struct init_started	 st;
	struct init_exited	 ex;

	memset(&st, 0, sizeof(st));
	st.pid = 7;
	frame(b, IMSG_INIT_STARTED, id, 0, &st, sizeof(st));
	memset(&ex, 0, sizeof(ex));
	ex.status = status;
	ex.utime_us = 1200;
	ex.maxrss_kb = 9000;
	frame(b, IMSG_INIT_EXITED, id, 0, &ex, sizeof(ex));
}

static void
run_req(struct buf *p, const char *tenant, const char *id, const char *lang,
    const char *code, const char *file)
{
	struct sbx_run		 r;
	struct sbx_filehdr	 fh;

	memset(&r, 0, sizeof(r));
	ref(&r.ref, tenant, id);
	strcpy(r.language, lang);
	r.argc = 1;
	r.envc = 1;
	r.nfiles = file != NULL;
	r.codelen = (uint32_t)strlen(code);
	r.stdinlen = 3;
	p->len = 0;
	put(p, &r, sizeof(r));
	put_str(p, "arg1");
	put_str(p, "DEBUG=1");
	if (file != NULL) {
		memset(&fh, 0, sizeof(fh));
		fh.mode = 0600;
		fh.pathlen = (uint32_t)strlen(file) + 1;
		fh.size = 4;
		put(p, &fh, sizeof(fh));
		put_str(p, file);
		put(p, "data", 4);
	}
	put(p, code, strlen(code));
	put(p, "in\n", 3);
}

static void
exec_req(struct buf *p, const char *tenant, const char *id, uint32_t flags,
    const char *cmd)
{
	struct sbx_exec	 x;

	memset(&x, 0, sizeof(x));
	ref(&x.ref, tenant, id);
	x.argc = 1;
	x.cwdlen = 5;
	x.flags = flags;
	x.timeout = 5000;
	p->len = 0;
	put(p, &x, sizeof(x));
	put_str(p, "data");
	put_str(p, cmd);
}

static void
seeds_sandboxd_requests(void)
{
	struct buf		 b, p;
	struct sbx_create	 cr;
	struct sbx_ref		 r;
	struct sbx_logs		 lg;
	struct sbx_images	 im;
	const char		 probe_out[] =
	    "\x01 0 + Python 3.11.2\n\x01 1 -\n\x01 2 +\n";

	b.len = 0;
	memset(&cr, 0, sizeof(cr));
	ref(&cr.ref, "alice", "");
	strcpy(cr.name, "scratch");
	strcpy(cr.language, "python");
	cr.lim.memory = 256 << 20;
	cr.lim.network = SBX_NET_EGRESS;
	cr.envc = 1;
	p.len = 0;
	put(&p, &cr, sizeof(cr));
	put_str(&p, "HOME=/workspace");
	request(&b, IMSG_SBX_CREATE, 0, 1, &p);
	started(&b);
	save("sandboxd", "create", &b);

	/* mcpctl's view of it, then its kill; SERVER from both. */
	ref(&r, "", "");
	p.len = 0;
	put(&p, &r, sizeof(r));
	request(&b, IMSG_SBX_LIST, 2, 2, &p);
	request(&b, IMSG_SBX_SERVER, 2, 3, NULL);
	request(&b, IMSG_SBX_SERVER, 0, 4, NULL);
	ref(&r, "alice", "scratch");
	p.len = 0;
	put(&p, &r, sizeof(r));
	request(&b, IMSG_SBX_STATUS, 2, 5, &p);
	request(&b, IMSG_SBX_KILL, 0, 6, &p);	/* refused: mcpd's */
	request(&b, IMSG_SBX_KILL, 2, 7, &p);
	save("sandboxd", "admin", &b);

	b.len = 0;
	ref(&r, "", "work");
	p.len = 0;
	put(&p, &r, sizeof(r));
	request(&b, IMSG_SBX_STATUS, 1, 1, &p);	/* stdio: uid 1000 */
	request(&b, IMSG_SBX_LIST, 1, 2, &p);
	memset(&lg, 0, sizeof(lg));
	ref(&lg.ref, "alice", "work");
	p.len = 0;
	put(&p, &lg, sizeof(lg));
	request(&b, IMSG_SBX_LOGS, 0, 3, &p);
	ref(&r, "bob", "data");
	p.len = 0;
	put(&p, &r, sizeof(r));
	request(&b, IMSG_SBX_STOP, 2, 4, &p);	/* mcpctl */
	step(&b, 2, NULL);
	save("sandboxd", "status-list-logs-stop", &b);

	b.len = 0;
	file_req(&p, "alice", "work", INIT_F_MKDIRS, 5, "/workspace/a/b.txt",
	    "hello");
	request(&b, IMSG_SBX_WRITE, 0, 1, &p);
	started(&b);
	p.len = 0;
	done_frame(&p, 1, 0, 5);
	from_init(&b, 0, &p);
	save("sandboxd", "write", &b);

	b.len = 0;
	file_req(&p, "alice", "work", 0, 0, "a/b.txt", NULL);
	request(&b, IMSG_SBX_READ, 0, 1, &p);
	started(&b);
	p.len = 0;
	frame(&p, IMSG_INIT_DATA, 1, 0, "hello", 5);
	done_frame(&p, 1, 0, 5);
	from_init(&b, 0, &p);
	save("sandboxd", "read", &b);

	b.len = 0;
	file_req(&p, "alice", "work", INIT_F_RECURSIVE, 100, "", NULL);
	request(&b, IMSG_SBX_LIST_FILES, 0, 1, &p);
	started(&b);
	p.len = 0;
	{
		struct buf	 e;

		e.len = 0;
		entry(&e, "a", 040755, 4096, 1700000000);
		entry(&e, "a/b.txt", 0100644, 5, 1700000000);
		frame(&p, IMSG_INIT_ENTRY, 1, 0, e.d, e.len);
	}
	done_frame(&p, 1, 0, 2);
	from_init(&b, 0, &p);
	save("sandboxd", "list", &b);

	b.len = 0;
	file_req(&p, "alice", "work", INIT_F_RECURSIVE, 0, "a", NULL);
	request(&b, IMSG_SBX_DELETE, 0, 1, &p);
	started(&b);
	p.len = 0;
	done_frame(&p, 1, 2, 0);		/* ENOENT */
	from_init(&b, 0, &p);
	save("sandboxd", "delete-enoent", &b);

	b.len = 0;
	exec_req(&p, "alice", "work", SBX_EXEC_SHELL, "ls -l | wc -l");
	request(&b, IMSG_SBX_EXEC, 0, 1, &p);
	started(&b);
	p.len = 0;
	put(&p, "3\n", 2);
	step(&b, 3 | 16, &p);			/* stdout, then EOF */
	p.len = 0;
	exited_frame(&p, 1, 0);
	from_init(&b, 0, &p);
	step(&b, 4, NULL);
	save("sandboxd", "exec", &b);

	b.len = 0;
	memset(&im, 0, sizeof(im));
	ref(&im.ref, "alice", "");
	im.flags = SBX_IMAGES_LANGS;
	p.len = 0;
	put(&p, &im, sizeof(im));
	request(&b, IMSG_SBX_IMAGES, 0, 1, &p);
	started(&b);
	p.len = 0;
	put(&p, probe_out, sizeof(probe_out) - 1);
	step(&b, 3 | 16, &p);
	p.len = 0;
	exited_frame(&p, 1, 0);
	from_init(&b, 0, &p);
	step(&b, 4, NULL);
	save("sandboxd", "images-probe", &b);
}

static void
seeds_sandboxd_runs(void)
{
	struct buf	 b, p, e;

	/* One-shot: write main.py (op 1), run (op 2), collect (ops 3, 4). */
	b.len = 0;
	run_req(&p, "alice", "", "python", "print(1)\n", NULL);
	request(&b, IMSG_SBX_RUN, 0, 1, &p);
	started(&b);
	p.len = 0;
	done_frame(&p, 1, 0, 9);
	from_init(&b, 0, &p);
	p.len = 0;
	put(&p, "1\n", 2);
	step(&b, 3 | 16, &p);
	p.len = 0;
	exited_frame(&p, 2, 0);
	from_init(&b, 0, &p);
	step(&b, 4, NULL);
	p.len = 0;
	e.len = 0;
	entry(&e, "plot.png", 0100644, 4, 2000000000);
	entry(&e, "main.py", 0100644, 9, 2000000000);
	frame(&p, IMSG_INIT_ENTRY, 3, 0, e.d, e.len);
	done_frame(&p, 3, 0, 2);
	frame(&p, IMSG_INIT_DATA, 4, 0, "\x89PNG", 4);
	done_frame(&p, 4, 0, 4);
	from_init(&b, 0, &p);
	save("sandboxd", "run-oneshot", &b);

	/* In a persistent sandbox, with a file and a build. */
	b.len = 0;
	run_req(&p, "alice", "work", "c", "int main(void){return 0;}",
	    "in.txt");
	request(&b, IMSG_SBX_RUN, 0, 1, &p);
	started(&b);
	p.len = 0;
	done_frame(&p, 1, 0, 4);
	done_frame(&p, 2, 0, 25);
	exited_frame(&p, 3, 1 << 8);		/* the build fails */
	from_init(&b, 0, &p);
	step(&b, 4, NULL);
	save("sandboxd", "run-build-fails", &b);

	/* Hostile init: no hello, a frame nobody asked for. */
	b.len = 0;
	exec_req(&p, "alice", "work", 0, "true");
	request(&b, IMSG_SBX_EXEC, 0, 1, &p);
	p.len = 0;
	hello(&p, ROLE_SANDBOX_INIT);
	done_frame(&p, 99, 0, 0);
	from_init(&b, 0, &p);
	step(&b, 2, NULL);
	step(&b, 5, NULL);			/* cancel */
	save("sandboxd", "init-unasked", &b);
}

/* --- init -------------------------------------------------------------- */

/* A chunk of frames from sandboxd, with nfds descriptors. */
static void
chunk(struct buf *b, int nfds, const struct buf *frames)
{
	step(b, (uint8_t)nfds, frames);
}

static void
init_hello(struct buf *b)
{
	struct buf	 f;

	f.len = 0;
	hello(&f, ROLE_SANDBOXD);
	chunk(b, 0, &f);
}

/* The fds of exec id, each in a chunk of its own, then its EXEC. */
static void
init_exec(struct buf *b, uint32_t id, uint32_t flags, const char *cwd,
    const char *const *argv, const char *const *env)
{
	struct init_exec	 ie;
	struct buf		 f, p;
	uint32_t		 which;

	for (which = 0; which < ((flags & INIT_EXEC_NOSYNC) ? 3U : 4U);
	    which++) {
		f.len = 0;
		frame(&f, IMSG_INIT_FD, id, 1, &which, sizeof(which));
		chunk(b, 1, &f);
	}
	memset(&ie, 0, sizeof(ie));
	ie.flags = flags;
	/* Listed, as a run's program is, under an id of its own. */
	if (flags & INIT_EXEC_LIST)
		ie.list_id = id + 100;
	p.len = 0;
	put(&p, &ie, sizeof(ie));
	put_str(&p, cwd);
	for (; *argv != NULL; argv++, ie.argc++)
		put_str(&p, *argv);
	for (; *env != NULL; env++, ie.envc++)
		put_str(&p, *env);
	memcpy(p.d, &ie, sizeof(ie));
	f.len = 0;
	frame(&f, IMSG_INIT_EXEC, id, 0, p.d, p.len);
	chunk(b, 0, &f);
}

static void
init_file(struct buf *b, uint32_t type, uint32_t id, uint32_t flags,
    uint64_t size, const char *path)
{
	struct init_file	 h;
	struct buf		 f, p;

	memset(&h, 0, sizeof(h));
	h.flags = flags;
	h.mode = 0644;
	h.size = size;
	p.len = 0;
	put(&p, &h, sizeof(h));
	put_str(&p, path);
	f.len = 0;
	frame(&f, type, id, 0, p.d, p.len);
	chunk(b, 0, &f);
}

static void
seeds_init(void)
{
	const char *const	 env[] = { "PATH=/usr/bin:/bin", "HOME=/",
				    NULL };
	const char *const	 noenv[] = { NULL };
	const char *const	 sh[] = { "/bin/sh", "-c",
				    "exec python3 main.py \"$@\"", "sh", "a b",
				    NULL };
	const char *const	 quoted[] = { "/bin/sh", "-c",
				    "printf '%s\\n' \"x y\" 'z' >out.txt",
				    NULL };
	const char *const	 plain[] = { "ls", "-l", NULL };
	struct buf		 b, f;

	b.len = 0;
	init_hello(&b);
	save("init", "hello", &b);

	init_exec(&b, 1, INIT_EXEC_SH, "", sh, env);
	save("init", "exec-sh", &b);

	b.len = 0;
	init_hello(&b);
	init_exec(&b, 2, INIT_EXEC_SH | INIT_EXEC_NOSYNC, "src", quoted,
	    noenv);
	init_exec(&b, 3, INIT_EXEC_PATH | INIT_EXEC_NOSYNC, "", plain, env);
	save("init", "exec-quoted-plain", &b);

	b.len = 0;
	init_hello(&b);
	init_exec(&b, 4, INIT_EXEC_SH | INIT_EXEC_LIST, "", sh, env);
	save("init", "exec-list", &b);

	b.len = 0;
	init_hello(&b);
	init_file(&b, IMSG_INIT_WRITE, 1, INIT_F_MKDIRS, 5, "a/b.txt");
	f.len = 0;
	frame(&f, IMSG_INIT_DATA, 1, 0, "hel", 3);
	frame(&f, IMSG_INIT_DATA, 1, 0, "lo", 2);
	chunk(&b, 0, &f);
	init_file(&b, IMSG_INIT_WRITE, 2, INIT_F_DIR | INIT_F_MKDIRS, 0,
	    "x/y/");
	save("init", "write", &b);

	b.len = 0;
	init_hello(&b);
	init_file(&b, IMSG_INIT_READ, 1, 0, 1024, "a/b.txt");
	init_file(&b, IMSG_INIT_LIST, 2, INIT_F_RECURSIVE, 100, "");
	init_file(&b, IMSG_INIT_DELETE, 3, INIT_F_RECURSIVE, 0, "a");
	save("init", "read-list-delete", &b);
}

/* --- ws ---------------------------------------------------------------- */

/*
 * A client's frame: masked, its length in the shortest encoding (7 or 16
 * bits: a seed is never long enough for 64).
 */
static void
ws_frame(struct buf *b, uint8_t b0, const void *p, size_t n)
{
	static uint8_t	 seq;
	const uint8_t	*s = p;
	uint8_t		 mask[4];
	size_t		 i;

	if (n > 0xffff)
		errx(1, "ws seed frame too long");
	put_u8(b, b0);
	if (n < 126)
		put_u8(b, (uint8_t)(0x80 | n));
	else {
		put_u8(b, 0x80 | 126);
		put_u16(b, n);
	}
	/* Masks that differ from frame to frame, and not from run to run. */
	for (i = 0; i < 4; i++)
		mask[i] = (uint8_t)(0x37 + 73 * seq++);
	put(b, mask, sizeof(mask));
	for (i = 0; i < n; i++)
		put_u8(b, s[i] ^ mask[i & 3]);
}

static void
ws_text(struct buf *b, uint8_t b0, const char *s)
{
	ws_frame(b, b0, s, strlen(s));
}

/* The target's four piece sizes (0: all that is left). */
static void
ws_pieces(struct buf *b, uint8_t s0, uint8_t s1, uint8_t s2, uint8_t s3)
{
	b->len = 0;
	put_u8(b, s0);
	put_u8(b, s1);
	put_u8(b, s2);
	put_u8(b, s3);
}

static void
seeds_ws(void)
{
	static const uint8_t	 hello[] = { 0x81, 0x85, 0x37, 0xfa, 0x21,
				    0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58 };
	static const char	 call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
				    "\"method\":\"tools/call\",\"params\":"
				    "{\"name\":\"run_code\",\"arguments\":"
				    "{\"language\":\"python\",\"code\":";
	char			 code[512];
	struct buf		 b;

	ws_pieces(&b, 0, 0, 0, 0);
	put(&b, hello, sizeof(hello));
	ws_text(&b, 0x81, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}");
	save("ws", "text", &b);

	ws_pieces(&b, 1, 2, 3, 5);
	ws_text(&b, 0x01, "{\"jsonrpc\":\"2.0\",");
	ws_text(&b, 0x89, "are you there");
	ws_text(&b, 0x00, "\"method\":\"notifications/");
	ws_text(&b, 0x8a, "");
	ws_text(&b, 0x80, "initialized\"} caf\xc3\xa9");
	save("ws", "fragmented", &b);

	ws_pieces(&b, 7, 0, 16, 1);
	ws_text(&b, 0x89, "");
	ws_text(&b, 0x89, "0123456789");
	ws_text(&b, 0x8a, "unsolicited");
	save("ws", "ping-pong", &b);

	ws_pieces(&b, 64, 64, 64, 64);
	snprintf(code, sizeof(code), "%s\"print('%0300d')\"}}}", call, 7);
	ws_text(&b, 0x81, code);
	ws_text(&b, 0x88, "\x03\xe8going away, d\xc3\xa9j\xc3\xa0 vu");
	save("ws", "long-close", &b);

	ws_pieces(&b, 3, 0, 0, 0);
	ws_text(&b, 0x81, "");
	ws_text(&b, 0x88, "");
	save("ws", "close-empty", &b);
}

int
main(int argc, char *argv[])
{
	if (argc != 2)
		errx(2, "usage: mkseeds dir");
	outdir = argv[1];
	seeds_imsg();
	seeds_auditd();
	seeds_sandboxd_requests();
	seeds_sandboxd_runs();
	seeds_init();
	seeds_ws();
	return 0;
}
