/*
 * sbx: drive mcp-sandboxd's requests from the command line, as mcpd (or
 * mcpctl) would, for the tests.
 *
 *	sbx [-C] [-u uid -g gid] [-r role] [-t tenant] -s socket command ...
 *
 * -C logs each output frame as it arrives, with its time, to stderr.
 *
 * Commands:
 *	run [-l lang] [-i image] [-c code] [-S id] [-T ms] [-m bytes]
 *	    [-d bytes] [-o bytes] [-p pids] [-P cpus] [-n none|egress]
 *	    [-I stdin] [-e K=V]... [-f path=content]... [-- args...]
 *	create [-N name] [-i image] [-l lang] [-m ...] [-e K=V]...
 *	exec -S id [-T ms] [-w cwd] [-I stdin] [-e K=V]... (-c cmdline | -- argv)
 *	write -S id [-M mode] [-F flags] [-D data] path
 *	read -S id [-X max] path
 *	ls -S id [-R] [-X max] path
 *	rm -S id [-R] path
 *	stop -S id
 *	kill -S id
 *	list
 *	status -S id
 *	logs -S id [-X max]
 *
 * -S takes a sandbox's id or its name.  Program output goes to stdout and
 * stderr as it streams, file content and logs to stdout; then one line
 * "sbx: result k=v ..." (or "sbx: done ...", "sbx: error ...") on stderr.
 * Exit status: 0 when the request completed, 2 on an error answer, 1 on
 * a usage or connection failure.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <err.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "imsgsync.h"
#include "log.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

struct buf {
	uint8_t		*p;
	size_t		 len;
};

static struct imsgsync	 is;
static int		 show_chunks;	/* -C: log each output frame */
static uint64_t		 t0;

static void
buf_add(struct buf *b, const void *d, size_t n)
{
	b->p = xreallocarray(b->p, 1, b->len + n + 1);
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void
buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s) + 1);
}

static uint64_t
size_arg(const char *s)
{
	char		*end;
	uint64_t	 v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K':
		return v << 10;
	case 'm': case 'M':
		return v << 20;
	case 'g': case 'G':
		return v << 30;
	case '\0':
		return v;
	}
	errx(1, "bad size %s", s);
}

static void
usage(void)
{
	fprintf(stderr, "usage: sbx [-u uid -g gid] [-r role] [-t tenant] "
	    "-s socket command ...\n");
	exit(1);
}

static void
next_frame(struct imsg *imsg)
{
	if (imsgsync_next(&is, imsg, -1) != 1)
		errx(1, "%s", is.err);
}

static void
connect_as(const char *path, uint32_t role)
{
	if (imsgsync_connect(&is, path, role) == -1)
		errx(1, "%s", is.err);
}

static void
send_req(uint32_t type, struct buf *b)
{
	if (imsgsync_send(&is, type, 1, b->p, b->len) == -1)
		errx(1, "%s", is.err);
	free(b->p);
	b->p = NULL;
	b->len = 0;
}

static void
print_flags(uint32_t f)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ SBX_R_TIMED_OUT, "timed_out" }, { SBX_R_OOM, "oom" },
		{ SBX_R_TRUNCATED, "truncated" },
		{ SBX_R_BUILD_FAILED, "build_failed" },
		{ SBX_R_EXEC_FAILED, "exec_failed" },
		{ SBX_R_CANCELLED, "cancelled" },
	};
	size_t	 i;
	int	 first = 1;

	fprintf(stderr, " flags=");
	for (i = 0; i < nitems(names); i++)
		if (f & names[i].bit) {
			fprintf(stderr, "%s%s", first ? "" : ",", names[i].name);
			first = 0;
		}
	if (first)
		fprintf(stderr, "none");
}

static void
print_info(const struct sbx_info *in)
{
	printf("id=%s name=%s tenant=%s image=%s runtime=%s state=%s "
	    "memory_limit=%llu disk=%llu timeout=%llu execs=%u memory=%llu\n",
	    in->id, in->name[0] ? in->name : "-", in->tenant, in->image,
	    in->runtime,
	    in->state == SBX_STATE_RUNNING ? "running" : "idle",
	    (unsigned long long)in->lim.memory,
	    (unsigned long long)in->lim.disk,
	    (unsigned long long)in->lim.timeout, in->execs,
	    (unsigned long long)in->memory);
}

static void
out(int fd, const void *buf, size_t len)
{
	if (write_all(fd, buf, len) == -1)
		err(1, "write");
}

/* Read answers until the one that ends the request. */
/* A RUN's entries are the files it made, and its DATA their pictures. */
static int	 running;

static int
answers(void)
{
	struct imsg		 imsg;
	struct sbx_output	 o;
	struct sbx_result	 r;
	struct sbx_error	 e;
	struct sbx_done		 d;
	struct sbx_info		 in;
	struct init_entry	 ent;
	const uint8_t		*p;
	size_t			 off;

	for (;;) {
		next_frame(&imsg);
		switch (imsg.hdr.type) {
		case IMSG_SBX_OUTPUT:
			if (imsg.datalen < sizeof(o))
				errx(1, "short output frame");
			memcpy(&o, imsg.data, sizeof(o));
			if (show_chunks)
				fprintf(stderr, "sbx: chunk stream=%u bytes=%zu "
				    "at_ms=%llu\n", o.stream,
				    imsg.datalen - sizeof(o),
				    (unsigned long long)(mono_ms() - t0));
			fflush(stdout);
			out(o.stream == SBX_STREAM_STDOUT ? 1 : 2,
			    (uint8_t *)imsg.data + sizeof(o),
			    imsg.datalen - sizeof(o));
			break;
		case IMSG_SBX_DATA:
			fflush(stdout);
			if (running)
				fprintf(stderr, "sbx: picture data %zu\n",
				    imsg.datalen);
			else
				out(1, imsg.data, imsg.datalen);
			break;
		case IMSG_SBX_PICTURE:
			if (imsg.datalen <= sizeof(struct sbx_picture))
				errx(1, "short picture frame");
			fprintf(stderr, "sbx: picture %s\n",
			    (const char *)imsg.data +
			    sizeof(struct sbx_picture));
			break;
		case IMSG_SBX_ENTRY:
			p = imsg.data;
			for (off = 0; off + sizeof(ent) <= imsg.datalen;) {
				memcpy(&ent, p + off, sizeof(ent));
				off += sizeof(ent);
				fprintf(running ? stderr : stdout,
				    "%s%06o %llu %s\n", running ?
				    "sbx: created " : "", ent.mode,
				    (unsigned long long)ent.size,
				    (const char *)p + off);
				off += ent.namelen;
			}
			break;
		case IMSG_SBX_INFO:
		case IMSG_SBX_CREATED:
			if (proto_payload(imsg.data, imsg.datalen, &in,
			    sizeof(in)) == -1)
				errx(1, "bad info");
			if (imsg.hdr.type == IMSG_SBX_CREATED) {
				printf("%s\n", in.id);
				fprintf(stderr, "sbx: created\n");
				imsg_free(&imsg);
				return 0;
			}
			print_info(&in);
			break;
		case IMSG_SBX_RESULT:
			if (proto_payload(imsg.data, imsg.datalen, &r,
			    sizeof(r)) == -1)
				errx(1, "bad result");
			fflush(stdout);
			fprintf(stderr, "\nsbx: result exit=%d signal=%d",
			    r.exit_code, r.signal);
			print_flags(r.flags);
			fprintf(stderr, " errno=%d wall_ms=%llu cpu_ms=%llu "
			    "peak=%llu stdout_bytes=%llu stderr_bytes=%llu\n",
			    r.exec_errno, (unsigned long long)r.wall_ms,
			    (unsigned long long)r.cpu_ms,
			    (unsigned long long)r.peak_memory,
			    (unsigned long long)r.stdout_bytes,
			    (unsigned long long)r.stderr_bytes);
			imsg_free(&imsg);
			return 0;
		case IMSG_SBX_DONE:
			if (proto_payload(imsg.data, imsg.datalen, &d,
			    sizeof(d)) == -1)
				errx(1, "bad done");
			fflush(stdout);
			fprintf(stderr, "\nsbx: done size=%llu mode=%o "
			    "truncated=%d mtime=%lld\n",
			    (unsigned long long)d.size, d.mode,
			    (d.flags & INIT_D_TRUNCATED) ? 1 : 0,
			    (long long)d.mtime);
			imsg_free(&imsg);
			return 0;
		case IMSG_SBX_ERROR:
			if (proto_payload(imsg.data, imsg.datalen, &e,
			    sizeof(e)) == -1)
				errx(1, "bad error");
			fflush(stdout);
			fprintf(stderr, "\nsbx: error code=%u errno=%d %.*s\n",
			    e.code, e.err, (int)sizeof(e.message), e.message);
			imsg_free(&imsg);
			return 2;
		default:
			errx(1, "unexpected frame %u", imsg.hdr.type);
		}
		imsg_free(&imsg);
	}
}

/* Options shared by run, create and exec. */
struct opts {
	struct sbx_limits	 lim;
	const char		*lang, *image, *code, *id, *in, *cwd, *name;
	const char		*shell;
	const char		*env[64];
	int			 nenv;
	const char		*files[64];
	int			 nfiles;
	uint32_t		 mode, flags;
	uint64_t		 max;
	const char		*data;
};

static int
get_opts(int argc, char *argv[], struct opts *o)
{
	int	 ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt(argc, argv, "c:D:d:e:F:f:I:i:l:M:m:N:n:o:P:p:RS:"
	    "T:w:X:")) != -1) {
		switch (ch) {
		case 'c': o->code = o->shell = optarg; break;
		case 'D': o->data = optarg; break;
		case 'd': o->lim.disk = size_arg(optarg); break;
		case 'e':
			if (o->nenv < 64)
				o->env[o->nenv++] = optarg;
			break;
		case 'F': o->flags = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'f':
			if (o->nfiles < 64)
				o->files[o->nfiles++] = optarg;
			break;
		case 'I': o->in = optarg; break;
		case 'i': o->image = optarg; break;
		case 'l': o->lang = optarg; break;
		case 'M': o->mode = (uint32_t)strtoul(optarg, NULL, 8); break;
		case 'm': o->lim.memory = size_arg(optarg); break;
		case 'N': o->name = optarg; break;
		case 'n':
			o->lim.network = strcmp(optarg, "egress") == 0 ?
			    SBX_NET_EGRESS : SBX_NET_NONE;
			break;
		case 'o': o->lim.output = size_arg(optarg); break;
		case 'P':
			o->lim.cpus = (uint32_t)(strtod(optarg, NULL) * 1000);
			break;
		case 'p': o->lim.pids = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'R': o->flags |= INIT_F_RECURSIVE; break;
		case 'S': o->id = optarg; break;
		case 'T': o->lim.timeout = strtoull(optarg, NULL, 10); break;
		case 'w': o->cwd = optarg; break;
		case 'X': o->max = size_arg(optarg); break;
		default: usage();
		}
	}
	return optind;
}

static void
ref_fill(struct sbx_ref *ref, const char *tenant, const char *id)
{
	memset(ref, 0, sizeof(*ref));
	str_copy(ref->tenant, tenant, sizeof(ref->tenant));
	if (id != NULL)
		str_copy(ref->id, id, sizeof(ref->id));
}

static int
cmd_run(const char *tenant, int argc, char *argv[])
{
	struct opts		 o;
	struct sbx_run		 r;
	struct sbx_filehdr	 fh;
	struct buf		 b = { NULL, 0 };
	const char		*eq;
	int			 i, first;

	first = get_opts(argc, argv, &o);
	memset(&r, 0, sizeof(r));
	ref_fill(&r.ref, tenant, o.id);
	if (o.lang)
		str_copy(r.language, o.lang, sizeof(r.language));
	if (o.image)
		str_copy(r.image, o.image, sizeof(r.image));
	r.lim = o.lim;
	r.argc = (uint32_t)(argc - first);
	r.envc = (uint32_t)o.nenv;
	r.nfiles = (uint32_t)o.nfiles;
	r.codelen = o.code ? (uint32_t)strlen(o.code) : 0;
	r.stdinlen = o.in ? (uint32_t)strlen(o.in) : 0;
	buf_add(&b, &r, sizeof(r));
	for (i = first; i < argc; i++)
		buf_str(&b, argv[i]);
	for (i = 0; i < o.nenv; i++)
		buf_str(&b, o.env[i]);
	for (i = 0; i < o.nfiles; i++) {
		if ((eq = strchr(o.files[i], '=')) == NULL)
			errx(1, "-f path=content");
		fh.mode = 0644;
		fh.pathlen = (uint32_t)(eq - o.files[i] + 1);
		fh.size = strlen(eq + 1);
		buf_add(&b, &fh, sizeof(fh));
		buf_add(&b, o.files[i], fh.pathlen - 1);
		buf_add(&b, "", 1);
		buf_add(&b, eq + 1, (size_t)fh.size);
	}
	if (o.code)
		buf_add(&b, o.code, r.codelen);
	if (o.in)
		buf_add(&b, o.in, r.stdinlen);
	running = 1;
	send_req(IMSG_SBX_RUN, &b);
	return answers();
}

static int
cmd_create(const char *tenant, int argc, char *argv[])
{
	struct opts		 o;
	struct sbx_create	 c;
	struct buf		 b = { NULL, 0 };
	int			 i;

	get_opts(argc, argv, &o);
	memset(&c, 0, sizeof(c));
	ref_fill(&c.ref, tenant, NULL);
	if (o.name)
		str_copy(c.name, o.name, sizeof(c.name));
	if (o.image)
		str_copy(c.image, o.image, sizeof(c.image));
	if (o.lang)
		str_copy(c.language, o.lang, sizeof(c.language));
	c.lim = o.lim;
	c.envc = (uint32_t)o.nenv;
	buf_add(&b, &c, sizeof(c));
	for (i = 0; i < o.nenv; i++)
		buf_str(&b, o.env[i]);
	send_req(IMSG_SBX_CREATE, &b);
	return answers();
}

static int
cmd_exec(const char *tenant, int argc, char *argv[])
{
	struct opts	 o;
	struct sbx_exec	 x;
	struct buf	 b = { NULL, 0 };
	int		 i, first;

	first = get_opts(argc, argv, &o);
	memset(&x, 0, sizeof(x));
	ref_fill(&x.ref, tenant, o.id);
	x.timeout = o.lim.timeout;
	x.envc = (uint32_t)o.nenv;
	x.cwdlen = (uint32_t)strlen(o.cwd ? o.cwd : "") + 1;
	x.stdinlen = o.in ? (uint32_t)strlen(o.in) : 0;
	if (o.shell) {
		x.flags = SBX_EXEC_SHELL;
		x.argc = 1;
	} else
		x.argc = (uint32_t)(argc - first);
	buf_add(&b, &x, sizeof(x));
	buf_str(&b, o.cwd ? o.cwd : "");
	if (o.shell)
		buf_str(&b, o.shell);
	else
		for (i = first; i < argc; i++)
			buf_str(&b, argv[i]);
	for (i = 0; i < o.nenv; i++)
		buf_str(&b, o.env[i]);
	if (o.in)
		buf_add(&b, o.in, x.stdinlen);
	send_req(IMSG_SBX_EXEC, &b);
	return answers();
}

static int
cmd_file(const char *tenant, uint32_t type, int argc, char *argv[])
{
	struct opts	 o;
	struct sbx_file	 f;
	struct buf	 b = { NULL, 0 };
	int		 first;

	first = get_opts(argc, argv, &o);
	if (first != argc - 1)
		usage();
	memset(&f, 0, sizeof(f));
	ref_fill(&f.ref, tenant, o.id);
	f.flags = o.flags;
	f.mode = o.mode;
	f.pathlen = (uint32_t)strlen(argv[first]) + 1;
	f.size = type == IMSG_SBX_WRITE ? (o.data ? strlen(o.data) : 0) :
	    o.max;
	buf_add(&b, &f, sizeof(f));
	buf_str(&b, argv[first]);
	if (type == IMSG_SBX_WRITE && o.data)
		buf_add(&b, o.data, strlen(o.data));
	send_req(type, &b);
	return answers();
}

static int
cmd_ref(const char *tenant, uint32_t type, int argc, char *argv[])
{
	struct opts	 o;
	struct sbx_ref	 ref;
	struct buf	 b = { NULL, 0 };

	get_opts(argc, argv, &o);
	ref_fill(&ref, tenant, o.id);
	buf_add(&b, &ref, sizeof(ref));
	send_req(type, &b);
	return answers();
}

static int
cmd_logs(const char *tenant, int argc, char *argv[])
{
	struct opts	 o;
	struct sbx_logs	 l;
	struct buf	 b = { NULL, 0 };

	get_opts(argc, argv, &o);
	memset(&l, 0, sizeof(l));
	ref_fill(&l.ref, tenant, o.id);
	l.max = o.max;
	buf_add(&b, &l, sizeof(l));
	send_req(IMSG_SBX_LOGS, &b);
	return answers();
}

int
main(int argc, char *argv[])
{
	const char	*sock = NULL, *tenant = "local", *cmd;
	uint32_t	 role = ROLE_MCPD;
	uid_t		 uid = (uid_t)-1;
	gid_t		 gid = (gid_t)-1;
	int		 ch, rv = 1;

	log_init(LOG_DEST_STDERR, 0, "sbx");
	t0 = mono_ms();
	while ((ch = getopt(argc, argv, "+Cg:r:s:t:u:")) != -1) {
		switch (ch) {
		case 'C': show_chunks = 1; break;
		case 'g': gid = (gid_t)strtoul(optarg, NULL, 10); break;
		case 'r':
			role = strcmp(optarg, "mcpctl") == 0 ? ROLE_MCPCTL :
			    ROLE_MCPD;
			break;
		case 's': sock = optarg; break;
		case 't': tenant = optarg; break;
		case 'u': uid = (uid_t)strtoul(optarg, NULL, 10); break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (sock == NULL || argc < 1)
		usage();
	if (gid != (gid_t)-1 && (setgroups(0, NULL) == -1 ||
	    setgid(gid) == -1))
		err(1, "setgid");
	if (uid != (uid_t)-1 && setuid(uid) == -1)
		err(1, "setuid");
	connect_as(sock, role);
	cmd = argv[0];
	if (strcmp(cmd, "run") == 0)
		rv = cmd_run(tenant, argc, argv);
	else if (strcmp(cmd, "create") == 0)
		rv = cmd_create(tenant, argc, argv);
	else if (strcmp(cmd, "exec") == 0)
		rv = cmd_exec(tenant, argc, argv);
	else if (strcmp(cmd, "write") == 0)
		rv = cmd_file(tenant, IMSG_SBX_WRITE, argc, argv);
	else if (strcmp(cmd, "read") == 0)
		rv = cmd_file(tenant, IMSG_SBX_READ, argc, argv);
	else if (strcmp(cmd, "ls") == 0)
		rv = cmd_file(tenant, IMSG_SBX_LIST_FILES, argc, argv);
	else if (strcmp(cmd, "rm") == 0)
		rv = cmd_file(tenant, IMSG_SBX_DELETE, argc, argv);
	else if (strcmp(cmd, "stop") == 0)
		rv = cmd_ref(tenant, IMSG_SBX_STOP, argc, argv);
	else if (strcmp(cmd, "kill") == 0)
		rv = cmd_ref(tenant, IMSG_SBX_KILL, argc, argv);
	else if (strcmp(cmd, "list") == 0)
		rv = cmd_ref(tenant, IMSG_SBX_LIST, argc, argv);
	else if (strcmp(cmd, "status") == 0)
		rv = cmd_ref(tenant, IMSG_SBX_STATUS, argc, argv);
	else if (strcmp(cmd, "logs") == 0)
		rv = cmd_logs(tenant, argc, argv);
	else
		usage();
	imsgsync_close(&is);
	return rv;
}
