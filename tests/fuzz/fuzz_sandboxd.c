/*
 * Fuzz target: mcp-sandboxd's main process, validate and act, with every
 * peer it has played by the harness: its clients (mcpd, mcpd --stdio and
 * mcpctl, whose requests go through job_dispatch()), the privileged
 * helper (which starts nothing: it hands over a socket and answers), and
 * the sandbox-init of each container it asks for, whose every word is
 * untrusted.  No container, process or cgroup is ever made.
 *
 * Input: steps, each [ctl][length, 2 bytes][payload]; ctl & 7 is what
 * happens:
 *	0  a request: payload [type - 128][client][peerid][request...]
 *	1  the payload, as bytes from sandbox-init (container ctl >> 3)
 *	2  the helper answers: STARTED (bit 3: failed) or DESTROYED; with
 *	   bit 4 each new container's init says hello
 *	3  the payload written to the last exec's stdout (bit 3: stderr) in
 *	   container ctl >> 5, each byte 0x01 replaced by the last probe's
 *	   nonce; with bit 4 both its ends close after, as at its exit
 *	4  the event loop runs
 *	5  a client (ctl >> 3) cancels request payload[0]
 *	6  container ctl >> 3's init goes away
 *	7  a client (ctl >> 3) goes away
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "fuzz.h"
#include "imsg.h"
#include "log.h"
#include "policy.h"
#include "proc.h"
#include "proto.h"
#include "util.h"
#include "../../sandboxd/job.h"
#include "../../sandboxd/sandboxd.h"

#define NCLIENTS	3
#define NPEERS		8
#define FAKE_PID	0x3ffffff0	/* above any pid_max: nobody's */
#define ROUNDS		4

/* The harness's end of one container's control socket. */
struct peer {
	struct imsgbuf	 ib;
	int		 open;
	int		 answered;	/* the helper said STARTED */
	int		 hello;		/* init said hello */
	int		 out[2];	/* the last exec's stdout, stderr */
	char		 id[SBX_ID_LEN + 1];
};

static const uint32_t	 roles[NCLIENTS] = {
	ROLE_MCPD, ROLE_MCPD_STDIO, ROLE_MCPCTL,
};
static const char	 conf_fmt[] =
	"run directory \"%s/run\"\n"
	"state directory \"%s/state\"\n"
	"sandbox uids 268435456 8\n"
	"limits default {\n memory 512M\n timeout 30s\n output 1M\n"
	    " idle 1h\n}\n"
	"limits wide {\n memory 1G\n cpus 2\n network egress\n"
	    " timeout 1m\n}\n"
	"image host host pool 0\n"
	"image data rootfs \"%s/rootfs\" pool 0\n"
	"tenant alice {\n uid 1000\n limits wide\n max sandboxes 4\n}\n"
	"tenant bob {\n uid 1001\n max sandboxes 2\n}\n"
	"language python {\n alias py\n file main.py\n"
	    " run \"python3 main.py\"\n version \"python3 --version\"\n}\n"
	"language c {\n file main.c\n build \"cc -o main main.c\"\n"
	    " run ./main\n image data\n}\n"
	"language sh {\n file main.sh\n run \"sh main.sh\"\n}\n"
	"audit {\n required no\n}\n";
/* The sandboxes every input starts with: persistent, idle. */
static const struct {
	const char	*id, *tenant, *name;
} fixed[] = {
	{ "00112233445566778899aabbccddeeff", "alice", "work" },
	{ "ffeeddccbbaa99887766554433221100", "bob", "data" },
};

static struct sandboxd	 state;
static int		 privfd = -1;	/* the helper's end */
static struct imsgbuf	 priv;
static struct conn	 conns[NCLIENTS];
static int		 connfd[NCLIENTS];
static int		 conn_up[NCLIENTS];
static struct peer	 peers[NPEERS];
static char		 nonce[17];
static char		 destroys[64][SBX_ID_LEN + 1];	/* to answer */
static size_t		 ndestroys;

static void
noop_dispatch(struct imsgev *iev, struct imsg *imsg)
{
}

static void
noop_closed(struct imsgev *iev, const char *why)
{
}

static const char *
noop_allow(const struct ucred *uc, uint32_t role, char *why, size_t len,
    void *arg)
{
	return NULL;
}

static void
noop_conn(struct conn *c)
{
}

static void
noop_imsg(struct conn *c, struct imsg *imsg)
{
}

static void
noop_down(struct conn *c, const char *why)
{
}

static const struct conn_ops auditd_ops = {
	noop_allow, noop_conn, noop_imsg, noop_down, NULL,
};

static void
pair(int sv[2], int nonblock)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0, sv) == -1)
		fatal("socketpair");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct proc_settings	 set;
	char			*text, *path;
	const char		*dir = fuzz_tmpdir();
	int			 sv[2];

	if (sodium_init() == -1)
		fatalx("sodium_init");
	xasprintf(&text, conf_fmt, dir, dir, dir);
	sbd = &state;
	sbd->conf = fuzz_policy(text);
	free(text);
	/* Numeric uids: no user database is asked. */
	if (policy_resolve(sbd->conf, POLICY_RESOLVE_TENANTS) == -1)
		fatalx("policy_resolve");
	if ((sbd->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	TAILQ_INIT(&sbd->sandboxes);
	pool_init();
	sbd->slots = xcalloc(sbd->conf->uid_slots, 1);
	policy_runtimes_used(sbd->conf, sbd->runtime_used);
	path = fuzz_path("state.db");
	if (state_open(path) == -1)
		fatalx("state_open %s", path);
	free(path);
	/* The helper: we read what sandboxd asks of it. */
	pair(sv, 0);
	if (imsgev_init(&sbd->priv, sbd->base, sv[0], PROTO_MAX_FRAME,
	    IMSGBUF_FDPASS, noop_dispatch, noop_closed, NULL) == -1)
		fatalx("imsgev_init");
	privfd = sv[1];
	fd_set_nonblock(privfd);
	imsgbuf_init(&priv, privfd, PROTO_MAX_FRAME, IMSGBUF_FDPASS);
	/* auditd, never there: records find no one, as audit allows. */
	memset(&set, 0, sizeof(set));
	set.self = ROLE_SANDBOXD;
	set.maxframe = PROTO_MAX_FRAME;
	path = fuzz_path("auditd.sock");
	sbd->auditd = client_new(sbd->base, "auditd", path, ROLE_AUDITD, &set,
	    &auditd_ops, NULL);
	free(path);
	return 0;
}

/* --- The harness's side of each peer ----------------------------------- */

static void
peer_close(struct peer *p)
{
	int	 i;

	if (!p->open)
		return;
	for (i = 0; i < 2; i++)
		if (p->out[i] != -1)
			close(p->out[i]);
	close(p->ib.fd);
	imsgbuf_clear(&p->ib);
	p->open = 0;
}

/* An exec's fds: its output ends are kept for step 3, the rest closed. */
static void
peer_fd(struct peer *p, struct imsg *m)
{
	uint32_t	 which;
	int		 fd = imsg_take_fd(m);

	if (fd == -1 || proto_payload(m->data, m->datalen, &which,
	    sizeof(which)) == -1 || (which != INIT_FD_STDOUT &&
	    which != INIT_FD_STDERR)) {
		if (fd != -1)
			close(fd);
		return;
	}
	fd_set_nonblock(fd);
	if (p->out[which - 1] != -1)
		close(p->out[which - 1]);
	p->out[which - 1] = fd;
}

/* A probe's script begins "n=NONCE": the lines its output must start. */
static void
peer_exec(struct imsg *m)
{
	const char	*s, *end = (const char *)m->data + m->datalen;
	size_t		 n;

	for (s = (const char *)m->data + sizeof(struct init_exec); s < end;
	    s += n + 1) {
		n = strnlen(s, (size_t)(end - s));
		if (n > 18 && strncmp(s, "n=", 2) == 0) {
			memcpy(nonce, s + 2, 16);
			return;
		}
	}
}

/* Read what sandboxd sent this container's init. */
static void
peer_read(struct peer *p)
{
	struct imsg	 m;

	while (p->open && imsgbuf_read(&p->ib) > 0)
		while (imsg_get(&p->ib, &m) == 1) {
			if (m.hdr.type == IMSG_INIT_FD)
				peer_fd(p, &m);
			else if (m.hdr.type == IMSG_INIT_EXEC &&
			    m.datalen > sizeof(struct init_exec))
				peer_exec(&m);
			imsg_free(&m);
		}
}

static void
peer_write(struct peer *p, const void *data, size_t len)
{
	ssize_t	 n;

	if (p->open && len > 0 &&
	    (n = send(p->ib.fd, data, len, MSG_NOSIGNAL)) == -1 &&
	    errno != EAGAIN && errno != EPIPE && errno != ECONNRESET)
		fatal("send");
}

static void
peer_hello(struct peer *p)
{
	struct imsgbuf		 ib;
	struct proto_hello	 h;

	if (!p->open || p->hello)
		return;
	p->hello = 1;
	proto_hello_init(&h, ROLE_SANDBOX_INIT);
	imsgbuf_init(&ib, p->ib.fd, PROTO_INIT_FRAME, 0);
	if (imsg_compose(&ib, IMSG_HELLO, 0, -1, &h, sizeof(h)) == 0)
		(void)imsgbuf_write(&ib);
	imsgbuf_clear(&ib);
}

/* The helper's answer to a START: the container's init is up, or not. */
static void
priv_answer(uint32_t type, const char *id, int32_t pid)
{
	struct priv_result	 r;
	struct imsg		 m;

	memset(&r, 0, sizeof(r));
	str_copy(r.id, id, sizeof(r.id));
	r.pid = pid;
	if (pid <= 0)
		str_copy(r.message, "runc failed", sizeof(r.message));
	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.fd = -1;
	m.data = &r;
	m.datalen = sizeof(r);
	sandbox_priv_dispatch(&m);
}

/* A START hands over init's end of its socket: a new peer. */
static void
priv_start(struct imsg *m)
{
	struct priv_start	 ps;
	struct peer		*p;
	size_t			 i;
	int			 fd = imsg_take_fd(m);

	if (proto_payload(m->data, m->datalen, &ps, sizeof(ps)) == -1 ||
	    fd == -1)
		fatalx("a malformed PRIV_START");
	for (i = 0; i < NPEERS && peers[i].open; i++)
		;
	if (i == NPEERS) {
		close(fd);
		return;
	}
	p = &peers[i];
	memset(p, 0, sizeof(*p));
	p->open = 1;
	p->out[0] = p->out[1] = -1;
	fd_set_nonblock(fd);
	imsgbuf_init(&p->ib, fd, PROTO_INIT_FRAME, IMSGBUF_FDPASS);
	memcpy(p->id, ps.id, sizeof(p->id));
	p->id[SBX_ID_LEN] = '\0';
}

/* What sandboxd asks of the helper: containers to start and destroy. */
static void
priv_read(void)
{
	struct priv_destroy	 pd;
	struct imsg		 m;

	while (imsgbuf_read(&priv) > 0)
		;
	while (imsg_get(&priv, &m) == 1) {
		if (m.hdr.type == IMSG_PRIV_START)
			priv_start(&m);
		else if (m.hdr.type == IMSG_PRIV_DESTROY &&
		    proto_payload(m.data, m.datalen, &pd, sizeof(pd)) == 0 &&
		    ndestroys < nitems(destroys)) {
			memcpy(destroys[ndestroys], pd.id, SBX_ID_LEN);
			destroys[ndestroys++][SBX_ID_LEN] = '\0';
		}
		imsg_free(&m);
	}
}

/* The helper answers all it was asked, and init says hello if told. */
static void
priv_answer_all(int fail, int hello)
{
	char	 id[SBX_ID_LEN + 1];
	size_t	 i;

	while (ndestroys > 0) {
		memcpy(id, destroys[0], sizeof(id));
		memmove(destroys, destroys + 1, --ndestroys *
		    sizeof(destroys[0]));
		priv_answer(IMSG_PRIV_DESTROYED, id, 0);
	}
	for (i = 0; i < NPEERS; i++) {
		if (!peers[i].open || peers[i].answered)
			continue;
		peers[i].answered = 1;
		if (hello)
			peer_hello(&peers[i]);
		priv_answer(IMSG_PRIV_STARTED, peers[i].id,
		    fail ? 0 : FAKE_PID);
		if (fail)
			peer_close(&peers[i]);
	}
}

/* Clients' sockets: what sandboxd answers is read and dropped. */
static void
clients_drain(void)
{
	char	 buf[65536];
	int	 i;

	for (i = 0; i < NCLIENTS; i++)
		while (connfd[i] != -1 &&
		    read(connfd[i], buf, sizeof(buf)) > 0)
			;
}

/* Everything that can happen now, happens. */
static void
pump(void)
{
	int	 i, j;

	for (i = 0; i < ROUNDS; i++) {
		event_base_loop(sbd->base, EVLOOP_NONBLOCK);
		for (j = 0; j < NPEERS; j++)
			peer_read(&peers[j]);
		priv_read();
		clients_drain();
	}
}

/* --- Steps ---------------------------------------------------------------- */

static void
client_up(int i)
{
	struct client	*cl;
	int		 sv[2];

	pair(sv, 1);
	memset(&conns[i], 0, sizeof(conns[i]));
	if (imsgev_init(&conns[i].iev, sbd->base, sv[0], PROTO_MAX_FRAME, 0,
	    noop_dispatch, noop_closed, &conns[i]) == -1)
		fatalx("imsgev_init");
	connfd[i] = sv[1];
	conns[i].role = roles[i];
	conns[i].up = 1;
	conns[i].cred.uid = roles[i] == ROLE_MCPD_STDIO ? 1000 : 0;
	conns[i].cred.pid = 4242;
	snprintf(conns[i].name, sizeof(conns[i].name), "client %d", i);
	cl = xcalloc(1, sizeof(*cl));
	cl->c = &conns[i];
	TAILQ_INIT(&cl->jobs);
	conns[i].data = cl;
	conn_up[i] = 1;
}

static void
client_down(int i)
{
	if (!conn_up[i])
		return;
	job_conn_down(&conns[i]);
	imsgev_clear(&conns[i].iev);
	close(connfd[i]);
	connfd[i] = -1;
	conn_up[i] = 0;
}

static void
step_request(const uint8_t *p, size_t len)
{
	struct imsg	 m;
	int		 i;

	if (len < 3 || !conn_up[p[1] % NCLIENTS])
		return;
	i = p[1] % NCLIENTS;
	memset(&m, 0, sizeof(m));
	m.hdr.type = IMSG_SBX_CREATE + p[0];
	m.hdr.peerid = p[2];
	m.hdr.len = (uint32_t)(IMSG_HEADER_SIZE + len - 3);
	m.fd = -1;
	m.datalen = len - 3;
	/* The job keeps the payload, as from imsg_get(). */
	if (m.datalen > 0) {
		m.data = xmalloc(m.datalen);
		memcpy(m.data, p + 3, m.datalen);
	}
	/* As sandboxd_dispatch_mcpd() lets through. */
	if (m.hdr.type == IMSG_SBX_SERVER && control_allowed(conns[i].role))
		control_server(&conns[i], &m);
	else if (request_type(m.hdr.type))
		job_dispatch(&conns[i], &m);
	imsg_free(&m);
}

static void
step_output(struct peer *p, int which, int last, const uint8_t *data,
    size_t len)
{
	uint8_t	*buf, *q;
	size_t	 i;

	if (!p->open || p->out[which] == -1)
		return;
	q = buf = xmalloc(len * sizeof(nonce) + 1);
	for (i = 0; i < len; i++)
		if (data[i] == 0x01) {
			memcpy(q, nonce, 16);
			q += 16;
		} else
			*q++ = data[i];
	if (write(p->out[which], buf, (size_t)(q - buf)) == -1 &&
	    errno != EAGAIN && errno != EPIPE)
		fatal("write");
	free(buf);
	for (i = 0; last && i < 2; i++)
		if (p->out[i] != -1) {
			close(p->out[i]);
			p->out[i] = -1;
		}
}

static void
step_cancel(int i, uint32_t peerid)
{
	struct imsg	 m;

	if (!conn_up[i])
		return;
	memset(&m, 0, sizeof(m));
	m.hdr.type = IMSG_SBX_CANCEL;
	m.hdr.peerid = peerid;
	m.fd = -1;
	job_dispatch(&conns[i], &m);
}

static void
step(uint8_t ctl, const uint8_t *p, size_t len)
{
	switch (ctl & 7) {
	case 0:
		step_request(p, len);
		break;
	case 1:
		peer_write(&peers[(ctl >> 3) % NPEERS], p, len);
		break;
	case 2:
		priv_answer_all(ctl & 8, ctl & 16);
		break;
	case 3:
		step_output(&peers[(ctl >> 5) % NPEERS], (ctl >> 3) & 1,
		    ctl & 16, p, len);
		break;
	case 4:
		break;
	case 5:
		step_cancel((ctl >> 3) % NCLIENTS, len > 0 ? p[0] : 0);
		break;
	case 6:
		peer_close(&peers[(ctl >> 3) % NPEERS]);
		break;
	case 7:
		client_down((ctl >> 3) % NCLIENTS);
		break;
	}
	pump();
}

/* --- Each input from the same start -------------------------------------- */

static void
setup(void)
{
	struct sandbox	*sb;
	size_t		 i;
	int		 c;

	for (c = 0; c < NCLIENTS; c++)
		client_up(c);
	for (i = 0; i < nitems(fixed); i++) {
		sb = sandbox_new(fixed[i].id, fixed[i].tenant, HOST_IMAGE,
		    policy_tenant(sbd->conf, fixed[i].tenant)->limits, 1,
		    fixed[i].name, sandbox_runtime(fixed[i].tenant,
		    HOST_IMAGE));
		if (sandbox_slot_alloc(&sb->slot) == -1)
			fatalx("no slot");
		TAILQ_INSERT_TAIL(&sbd->sandboxes, sb, entry);
		state_save(sb);
	}
	nonce[0] = '\0';
}

/* Every sandbox goes, as the helper would have it, and every peer. */
static void
teardown(void)
{
	struct sandbox	*sb, *next;
	int		 i, c;

	for (c = 0; c < NCLIENTS; c++)
		client_down(c);
	for (i = 0; i < 16 && !TAILQ_EMPTY(&sbd->sandboxes); i++) {
		for (sb = TAILQ_FIRST(&sbd->sandboxes); sb != NULL; sb = next) {
			next = TAILQ_NEXT(sb, entry);
			state_delete(sb->id);
			sandbox_destroy(sb, PRIV_DESTROY_WORKSPACE, "the end");
		}
		priv_answer_all(1, 0);
		pump();
	}
	if (!TAILQ_EMPTY(&sbd->sandboxes))
		fatalx("sandboxes outlive the helper's answers");
	for (i = 0; i < NPEERS; i++)
		peer_close(&peers[i]);
	ndestroys = 0;
	pump();
	probe_free_all();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in	 in = { data, size };
	const uint8_t	*p;
	size_t		 len;
	uint8_t		 ctl;

	setup();
	while (in.left > 0) {
		ctl = fuzz_u8(&in);
		p = fuzz_bytes(&in, fuzz_u16(&in), &len);
		step(ctl, p, len);
	}
	teardown();
	return 0;
}
