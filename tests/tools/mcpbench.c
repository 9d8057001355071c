/*
 * mcpbench: the load generator of the speed benchmark (tests/bench/speed.sh).
 * It times a program that prints "1", run directly, in a container, or
 * through mcpd, with no interpreter of its own in the measurement path.
 *
 *	mcpbench exec [-c conc] [-g gap] [-n count] [-o file] [-w warmup]
 *	    -- command [arg ...]
 *		Run command count times (default 100), conc at a time
 *		(default 1), after warmup runs (default 1) that are not
 *		counted, waiting gap milliseconds (default 0) after each.  In every word, %i becomes the run's index (unique,
 *		warm-up runs first) and %s the slot it runs in, 0 to conc-1,
 *		which no other run uses at the same time.  Stdout must be "1\n".
 *	mcpbench http -u url -t token [-c conc] [-g gap] [-n count]
 *	    [-o file] [-w warmup] run | exec
 *		Open conc keep-alive connections to a Streamable HTTP
 *		endpoint, each with its own session (initialize, then
 *		notifications/initialized), and call a tool count times in
 *		all, each connection waiting gap milliseconds (default 0)
 *		after an answer before its next request.  Each connection
 *		first makes warmup calls (default 1), not counted.  run calls
 *		run_code with python print(1); exec makes one sandbox per
 *		connection with sandbox_create, calls sandbox_exec running
 *		python3 -c 'print(1)' in it, and stops it at the end.
 *	mcpbench stdio [-g gap] [-n count] [-o file] [-w warmup] --
 *	    command [arg ...]
 *		Start command (mcpd --stdio) and call run_code as above over
 *		its standard input and output, one request at a time.
 *
 * A call succeeds when it is not an error and its stdout is "1\n".  The
 * last line is "n N errors E p50 X p99 Y mean Z seconds S rate R": the
 * latencies of the successful runs in milliseconds, the wall time of the
 * measured runs and successful runs per second.  With -o, each successful
 * run's latency is also appended to file, one per line, so that samples
 * taken in several rounds can be pooled.  Exit status 0, or 1 when a run
 * failed; the first failures are described on stderr.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "util.h"

#define BENCH_MAX_RUNS		1000000
#define BENCH_MAX_CONC		256
#define BENCH_MAX_GAP		60000		/* ms */
#define BENCH_MAX_ERRORS	3		/* failures described */
#define BENCH_OUT_MAX		4096		/* bytes of output kept */
#define BENCH_TIMEOUT		120		/* seconds a reply may take */
#define BENCH_HDR_MAX		16384
#define BENCH_BODY_MAX		(16 << 20)
#define BENCH_VERSION		"2025-11-25"
#define BENCH_CODE		"print(1)"
#define BENCH_COMMAND		"python3 -c 'print(1)'"

extern char	**environ;

/* The runs of one measurement, shared by its workers. */
static struct {
	pthread_mutex_t	 mtx;
	pthread_barrier_t start;
	uint64_t	 warmup;	/* per connection, or in all for exec */
	uint64_t	 count;		/* measured runs */
	uint64_t	 next;		/* the next to claim */
	uint64_t	 nok;
	uint64_t	 errors;
	uint64_t	 described;
	double		*ms;		/* latency of each successful run */
	unsigned int	 conc;
	unsigned int	 gap;		/* ms between an answer and a request */
	const char	*raw;		/* -o: each latency appended here */
} bench = { .mtx = PTHREAD_MUTEX_INITIALIZER, .count = 100, .warmup = 1,
    .conc = 1 };

/* ---- the measurement ---- */

/* The index of the next measured run, or -1 once all are claimed. */
static int64_t
bench_claim(void)
{
	int64_t	 i = -1;

	pthread_mutex_lock(&bench.mtx);
	if (bench.next < bench.count)
		i = (int64_t)bench.next++;
	pthread_mutex_unlock(&bench.mtx);
	return i;
}

static void
bench_ok(uint64_t ns)
{
	pthread_mutex_lock(&bench.mtx);
	bench.ms[bench.nok++] = (double)ns / 1e6;
	pthread_mutex_unlock(&bench.mtx);
}

static void
bench_fail(int64_t run, const char *why)
{
	pthread_mutex_lock(&bench.mtx);
	if (run >= 0)
		bench.errors++;
	if (bench.described++ < BENCH_MAX_ERRORS) {
		if (run >= 0)
			warnx("run %lld: %s", (long long)run, why);
		else
			warnx("%s", why);
	}
	pthread_mutex_unlock(&bench.mtx);
}

static void
bench_gap(void)
{
	struct timespec	 ts;

	if (bench.gap == 0)
		return;
	ts.tv_sec = bench.gap / 1000;
	ts.tv_nsec = (long)(bench.gap % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile p of the sorted successful runs. */
static double
bench_pct(double p)
{
	uint64_t	 rank;

	if (bench.nok == 0)
		return 0;
	rank = (uint64_t)(p / 100 * (double)bench.nok + 0.999999);
	if (rank < 1)
		rank = 1;
	return bench.ms[rank - 1];
}

static int
bench_report(uint64_t ns)
{
	double	 sum = 0, secs = (double)ns / 1e9;
	uint64_t i;
	FILE	*fp;

	/* Runs never claimed: every worker gave up. */
	bench.errors += bench.count - bench.next;
	if (bench.raw != NULL) {
		/* In the order measured, before the sort. */
		if ((fp = fopen(bench.raw, "a")) == NULL)
			err(1, "%s", bench.raw);
		for (i = 0; i < bench.nok; i++)
			fprintf(fp, "%.3f\n", bench.ms[i]);
		if (fclose(fp) == EOF)
			err(1, "%s", bench.raw);
	}
	qsort(bench.ms, bench.nok, sizeof(bench.ms[0]), cmp_double);
	for (i = 0; i < bench.nok; i++)
		sum += bench.ms[i];
	printf("n %llu errors %llu p50 %.2f p99 %.2f mean %.2f seconds %.3f "
	    "rate %.2f\n", (unsigned long long)bench.count,
	    (unsigned long long)bench.errors, bench_pct(50), bench_pct(99),
	    bench.nok > 0 ? sum / (double)bench.nok : 0, secs,
	    secs > 0 ? (double)bench.nok / secs : 0);
	fflush(stdout);
	return bench.errors == 0 ? 0 : 1;
}

/* Start the workers, time them from when all are ready, report. */
static int
bench_run(void *(*worker)(void *))
{
	pthread_t	*tids;
	uint64_t	 t0;
	unsigned int	 i;

	bench.ms = xcalloc(bench.count, sizeof(bench.ms[0]));
	tids = xcalloc(bench.conc, sizeof(tids[0]));
	if (pthread_barrier_init(&bench.start, NULL, bench.conc + 1) != 0)
		errx(1, "pthread_barrier_init");
	for (i = 0; i < bench.conc; i++)
		if (pthread_create(&tids[i], NULL, worker,
		    (void *)(uintptr_t)i) != 0)
			errx(1, "pthread_create");
	pthread_barrier_wait(&bench.start);
	t0 = mono_ns();
	for (i = 0; i < bench.conc; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return bench_report(mono_ns() - t0);
}

/* ---- exec: a program run directly ---- */

static char	**exec_argv;

/* word with %i and %s replaced. */
static char *
exec_subst(const char *word, uint64_t run, unsigned int slot)
{
	char	*s, *p;
	size_t	 cap = strlen(word) + 1;
	const char *w;

	for (w = word; (w = strchr(w, '%')) != NULL; w++)
		cap += 20;
	p = s = xmalloc(cap);
	for (w = word; *w != '\0'; w++) {
		if (w[0] == '%' && w[1] == 'i') {
			p += snprintf(p, cap - (p - s), "%llu",
			    (unsigned long long)run);
			w++;
		} else if (w[0] == '%' && w[1] == 's') {
			p += snprintf(p, cap - (p - s), "%u", slot);
			w++;
		} else
			*p++ = *w;
	}
	*p = '\0';
	return s;
}

/*
 * Read the child's stdout and stderr to their end: stdout into out, the
 * start of stderr into errs (both NUL-terminated, cut at their size).
 * -1 if the child kept them open too long.
 */
static int
exec_drain(int ofd, int efd, char *out, size_t outlen, char *errs,
    size_t errlen)
{
	struct pollfd	 pfd[2];
	size_t		 n[2] = { 0, 0 }, cap[2] = { outlen - 1, errlen - 1 };
	char		*dst[2] = { out, errs }, junk[512];
	ssize_t		 r;
	int		 i, left = 2;

	pfd[0].fd = ofd;
	pfd[1].fd = efd;
	pfd[0].events = pfd[1].events = POLLIN;
	while (left > 0) {
		if ((r = poll(pfd, 2, BENCH_TIMEOUT * 1000)) == 0)
			break;
		if (r == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (n[i] < cap[i])
				r = read(pfd[i].fd, dst[i] + n[i],
				    cap[i] - n[i]);
			else
				r = read(pfd[i].fd, junk, sizeof(junk));
			if (r <= 0) {
				if (r == -1 && errno == EINTR)
					continue;
				pfd[i].fd = -1;
				left--;
			} else if (n[i] < cap[i])
				n[i] += r;
		}
	}
	out[n[0]] = '\0';
	errs[n[1]] = '\0';
	return left == 0 ? 0 : -1;
}

/* One run: 0 and its duration, or -1 with why. */
static int
exec_once(uint64_t run, unsigned int slot, uint64_t *ns, char *why,
    size_t whylen)
{
	posix_spawn_file_actions_t	 fa;
	char				 out[BENCH_OUT_MAX], errs[512];
	char				**argv;
	uint64_t			 t0;
	size_t				 i, argc;
	pid_t				 pid;
	int				 o[2], e[2], st = 0, rc, late = 0;

	for (argc = 0; exec_argv[argc] != NULL; argc++)
		;
	argv = xcalloc(argc + 1, sizeof(argv[0]));
	for (i = 0; i < argc; i++)
		argv[i] = exec_subst(exec_argv[i], run, slot);
	/* Close-on-exec, so that no other run's child holds them open. */
	if (pipe2(o, O_CLOEXEC) == -1 || pipe2(e, O_CLOEXEC) == -1)
		err(1, "pipe2");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);

	t0 = mono_ns();
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	close(o[1]);
	close(e[1]);
	if (rc == 0) {
		if (exec_drain(o[0], e[0], out, sizeof(out), errs,
		    sizeof(errs)) == -1) {
			late = 1;
			kill(pid, SIGKILL);
		}
		while (waitpid(pid, &st, 0) == -1)
			if (errno != EINTR)
				err(1, "waitpid");
		*ns = mono_ns() - t0;
	}
	close(o[0]);
	close(e[0]);
	posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);

	if (rc != 0) {
		snprintf(why, whylen, "%s: %s", exec_argv[0], strerror(rc));
		return -1;
	}
	errs[strcspn(errs, "\n")] = '\0';
	if (late) {
		snprintf(why, whylen, "%s: no end after %d s", exec_argv[0],
		    BENCH_TIMEOUT);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(why, whylen, "%s %s %d: %s", exec_argv[0],
		    WIFEXITED(st) ? "exited" : "killed by signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), errs);
		return -1;
	}
	if (strcmp(out, "1\n") != 0) {
		snprintf(why, whylen, "stdout was \"%.40s\", not \"1\\n\"",
		    out);
		return -1;
	}
	return 0;
}

static void *
exec_worker(void *arg)
{
	unsigned int	 slot = (unsigned int)(uintptr_t)arg;
	char		 why[768];
	uint64_t	 ns;
	int64_t		 i;

	pthread_barrier_wait(&bench.start);
	while ((i = bench_claim()) != -1) {
		if (exec_once(bench.warmup + (uint64_t)i, slot, &ns, why,
		    sizeof(why)) == 0)
			bench_ok(ns);
		else
			bench_fail(i, why);
		bench_gap();
	}
	return NULL;
}

static int
exec_main(char *argv[])
{
	char		 why[768];
	uint64_t	 i, ns;

	exec_argv = argv;
	/* Warm caches, one at a time: the binaries, and runc's state. */
	for (i = 0; i < bench.warmup; i++) {
		if (exec_once(i, 0, &ns, why, sizeof(why)) == -1)
			bench_fail(-1, why);
		bench_gap();
	}
	return bench_run(exec_worker);
}

/* ---- MCP over a transport ---- */

struct conn;

struct transport {
	/* Send one JSON-RPC message; with id, its response in *reply. */
	int	(*exchange)(struct conn *, const char *, json_int_t,
		    json_t **);
	void	(*close)(struct conn *);
};

struct conn {
	const struct transport	*t;
	int			 fd;		/* socket, or mcpd's stdin */
	int			 rfd;		/* where replies come from */
	pid_t			 pid;		/* stdio: the server */
	char			*buf;		/* read, not yet consumed */
	size_t			 len;
	size_t			 cap;
	json_int_t		 id;		/* the last request's */
	int			 initialized;
	char			 sid[256];	/* Mcp-Session-Id */
	char			 sandbox[64];	/* exec: ours */
	char			 err[512];
};

static void
conn_init(struct conn *c, const struct transport *t)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->fd = c->rfd = -1;
	c->cap = 16384;
	c->buf = xmalloc(c->cap);
	c->buf[0] = '\0';
}

__attribute__((__format__(printf, 2, 3)))
static int
conn_err(struct conn *c, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Read more into the buffer: the bytes read, 0 at the end, or -1. */
static ssize_t
conn_fill(struct conn *c)
{
	ssize_t	 n;

	if (c->cap - c->len < 4096) {
		if (c->cap > BENCH_BODY_MAX)
			return conn_err(c, "reply too long");
		c->cap = c->cap == 0 ? 16384 : c->cap * 2;
		c->buf = xreallocarray(c->buf, c->cap, 1);
	}
	do
		n = read(c->rfd, c->buf + c->len, c->cap - c->len - 1);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return conn_err(c, "read: %s", strerror(errno));
	c->len += n;
	c->buf[c->len] = '\0';
	return n;
}

static int
conn_need(struct conn *c, size_t n)
{
	ssize_t	 r;

	while (c->len < n)
		if ((r = conn_fill(c)) <= 0)
			return r == 0 ? conn_err(c, "connection closed") : -1;
	return 0;
}

static void
conn_drop(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
	if (c->buf != NULL)
		c->buf[c->len] = '\0';
}

static int
conn_write(struct conn *c, const char *s, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(c->fd, s, len)) == -1) {
			if (errno == EINTR)
				continue;
			return conn_err(c, "write: %s", strerror(errno));
		}
		s += n;
		len -= n;
	}
	return 0;
}

/* The response to id among the messages of text, or NULL. */
static json_t *
rpc_match(const char *text, size_t len, json_int_t id)
{
	json_t	*m, *v;

	if ((m = json_loadb(text, len, 0, NULL)) == NULL)
		return NULL;
	v = json_object_get(m, "id");
	if (json_is_integer(v) && json_integer_value(v) == id &&
	    (json_object_get(m, "result") != NULL ||
	    json_object_get(m, "error") != NULL))
		return m;
	json_decref(m);
	return NULL;
}

/* Call method; its result, or NULL with c->err. */
static json_t *
rpc_call(struct conn *c, const char *method, json_t *params)
{
	json_t	*msg, *reply = NULL, *res, *e;
	char	*text;
	int	 r;

	msg = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
	    ++c->id, "method", method, "params", params);
	if (msg == NULL || (text = json_dumps(msg, JSON_COMPACT)) == NULL)
		errx(1, "out of memory");
	json_decref(msg);
	r = c->t->exchange(c, text, c->id, &reply);
	free(text);
	if (r == -1)
		return NULL;
	if ((e = json_object_get(reply, "error")) != NULL) {
		conn_err(c, "%s: error %lld: %s", method,
		    (long long)json_integer_value(json_object_get(e, "code")),
		    json_string_value(json_object_get(e, "message")) ?
		    json_string_value(json_object_get(e, "message")) : "");
		json_decref(reply);
		return NULL;
	}
	res = json_incref(json_object_get(reply, "result"));
	json_decref(reply);
	if (!json_is_object(res)) {
		json_decref(res);
		conn_err(c, "%s: no result", method);
		return NULL;
	}
	return res;
}

static int
rpc_notify(struct conn *c, const char *method)
{
	char	 text[256];

	snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"%s\"}", method);
	return c->t->exchange(c, text, 0, NULL);
}

static int
mcp_initialize(struct conn *c)
{
	json_t	*res;

	res = rpc_call(c, "initialize", json_pack("{s:s, s:{}, s:{s:s, s:s}}",
	    "protocolVersion", BENCH_VERSION, "capabilities", "clientInfo",
	    "name", "mcpbench", "version", "1"));
	if (res == NULL)
		return -1;
	json_decref(res);
	c->initialized = 1;
	return rpc_notify(c, "notifications/initialized");
}

/* What a tool result says the program printed, or NULL. */
static const char *
tool_stdout(json_t *res, char *buf, size_t len)
{
	json_t		*sc, *v;
	const char	*t, *p, *e;
	size_t		 i;

	/* run_code's result, or sandbox_exec's one command's. */
	sc = json_object_get(res, "structuredContent");
	v = json_object_get(sc, "results");
	if (json_array_size(v) == 1)
		sc = json_array_get(v, 0);
	if ((t = json_string_value(json_object_get(sc, "stdout"))) != NULL)
		return t;
	/* Without structured content: the text block's stdout part. */
	json_array_foreach(json_object_get(res, "content"), i, v) {
		if ((t = json_string_value(json_object_get(v, "text"))) ==
		    NULL || (p = strstr(t, "--- stdout ---\n")) == NULL)
			continue;
		p += strlen("--- stdout ---\n");
		if ((e = strstr(p, "\n--- ")) != NULL)
			e++;
		else
			e = p + strlen(p);
		snprintf(buf, len, "%.*s", (int)(e - p), p);
		return buf;
	}
	return NULL;
}

/* Call a tool; 0 when it printed "1\n", else -1 with c->err. */
static int
tool_call(struct conn *c, const char *name, json_t *args)
{
	json_t		*res;
	const char	*out, *text;
	char		 buf[64];
	int		 rc = 0;

	res = rpc_call(c, "tools/call", json_pack("{s:s, s:o}", "name", name,
	    "arguments", args));
	if (res == NULL)
		return -1;
	text = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "content"), 0), "text"));
	if (json_is_true(json_object_get(res, "isError")))
		rc = conn_err(c, "%s: isError: %.200s", name,
		    text != NULL ? text : "");
	else if ((out = tool_stdout(res, buf, sizeof(buf))) == NULL)
		rc = conn_err(c, "%s: no stdout in the result", name);
	else if (strcmp(out, "1\n") != 0)
		rc = conn_err(c, "%s: stdout was \"%.40s\"", name, out);
	json_decref(res);
	return rc;
}

static int
mcp_run(struct conn *c)
{
	if (c->sandbox[0] != '\0')
		return tool_call(c, "sandbox_exec", json_pack("{s:s, s:s}",
		    "sandbox", c->sandbox, "command", BENCH_COMMAND));
	return tool_call(c, "run_code", json_pack("{s:s, s:s}", "language",
	    "python", "code", BENCH_CODE));
}

static int
mcp_sandbox_create(struct conn *c)
{
	json_t		*res;
	const char	*id;

	res = rpc_call(c, "tools/call", json_pack("{s:s, s:{s:s}}", "name",
	    "sandbox_create", "arguments", "language", "python"));
	if (res == NULL)
		return -1;
	id = json_string_value(json_object_get(json_object_get(res,
	    "structuredContent"), "id"));
	if (json_is_true(json_object_get(res, "isError")) || id == NULL ||
	    str_copy(c->sandbox, id, sizeof(c->sandbox)) == -1) {
		json_decref(res);
		return conn_err(c, "sandbox_create: no sandbox id");
	}
	json_decref(res);
	return 0;
}

static void
mcp_sandbox_stop(struct conn *c)
{
	json_t	*res;

	res = rpc_call(c, "tools/call", json_pack("{s:s, s:{s:s}}", "name",
	    "sandbox_stop", "arguments", "sandbox", c->sandbox));
	if (res == NULL || json_is_true(json_object_get(res, "isError")))
		bench_fail(-1, res == NULL ? c->err : "sandbox_stop failed");
	json_decref(res);
}

/*
 * Make warmup calls, wait for every worker, then take runs until none is
 * left.  A broken connection is opened again once per failure.
 */
static void
mcp_worker(struct conn *c, int (*start)(struct conn *), int exec)
{
	uint64_t	 i, t0;
	int64_t		 run;
	int		 up;

	up = start(c) == 0 && (!exec || c->sandbox[0] != '\0' ||
	    mcp_sandbox_create(c) == 0);
	for (i = 0; up && i < bench.warmup; i++) {
		if (mcp_run(c) == -1)
			bench_fail(-1, c->err);
		bench_gap();
	}
	if (!up)
		bench_fail(-1, c->err);
	pthread_barrier_wait(&bench.start);
	while (up && (run = bench_claim()) != -1) {
		t0 = mono_ns();
		if (mcp_run(c) == 0)
			bench_ok(mono_ns() - t0);
		else {
			bench_fail(run, c->err);
			/* A transport error leaves the connection closed. */
			if (c->fd == -1 && start(c) == -1) {
				bench_fail(-1, c->err);
				up = 0;
			}
		}
		bench_gap();
	}
	if (up && exec)
		mcp_sandbox_stop(c);
	c->t->close(c);
}

/* ---- Streamable HTTP ---- */

static struct addrinfo	*http_addr;
static char		 http_host[NI_MAXHOST + 8];
static char		 http_path[1024];
static const char	*http_token;
static int		 http_exec;

struct http_resp {
	int	 status;
	int	 sse;
	char	*body;
	size_t	 bodylen;
};

static void
http_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = c->rfd = -1;
	c->len = 0;
}

/* A header line: name (lowercase) and value, in line. */
static int
http_header(const char *line, size_t len, const char *name, char *val,
    size_t vallen)
{
	size_t	 n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return 0;
	line += n + 1;
	len -= n + 1;
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	snprintf(val, vallen, "%.*s", (int)len, line);
	return 1;
}

/* The body after the headers, chunked or not. */
static int
http_body(struct conn *c, struct http_resp *r, int chunked, long long clen)
{
	char		*e;
	size_t		 have = 0;
	unsigned long	 n;

	if (!chunked && clen >= 0) {
		if (clen > BENCH_BODY_MAX || conn_need(c, clen) == -1)
			return conn_err(c, "body: %s", c->err);
		r->body = xmalloc(clen + 1);
		memcpy(r->body, c->buf, clen);
		r->body[clen] = '\0';
		r->bodylen = clen;
		conn_drop(c, clen);
		return 0;
	}
	if (!chunked)
		return conn_err(c, "a body without a length");
	r->body = xmalloc(1);
	for (;;) {
		while ((e = memmem(c->buf, c->len, "\r\n", 2)) == NULL)
			if (conn_need(c, c->len + 1) == -1)
				return -1;
		n = strtoul(c->buf, NULL, 16);
		conn_drop(c, e - c->buf + 2);
		if (n == 0)
			break;
		if (have + n > BENCH_BODY_MAX || conn_need(c, n + 2) == -1)
			return conn_err(c, "chunk: %s", c->err);
		r->body = xreallocarray(r->body, have + n + 1, 1);
		memcpy(r->body + have, c->buf, n);
		have += n;
		conn_drop(c, n + 2);
	}
	/* Trailers, up to the empty line. */
	do {
		while ((e = memmem(c->buf, c->len, "\r\n", 2)) == NULL)
			if (conn_need(c, c->len + 1) == -1)
				return -1;
		n = e - c->buf;
		conn_drop(c, n + 2);
	} while (n > 0);
	r->body[have] = '\0';
	r->bodylen = have;
	return 0;
}

static int
http_read(struct conn *c, struct http_resp *r)
{
	char		 val[256];
	char		*e, *line, *next;
	size_t		 hlen;
	long long	 clen = -1;
	int		 chunked = 0, closing = 0;

	memset(r, 0, sizeof(*r));
	while ((e = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
		if (c->len > BENCH_HDR_MAX)
			return conn_err(c, "headers too long");
		if (conn_need(c, c->len + 1) == -1)
			return -1;
	}
	hlen = e - c->buf + 4;
	if (sscanf(c->buf, "HTTP/1.%*d %d", &r->status) != 1)
		return conn_err(c, "not an HTTP response");
	for (line = strstr(c->buf, "\r\n") + 2; line < e; line = next + 2) {
		next = memmem(line, e + 2 - line, "\r\n", 2);
		if (http_header(line, next - line, "content-length", val,
		    sizeof(val)))
			clen = strtoll(val, NULL, 10);
		else if (http_header(line, next - line, "transfer-encoding",
		    val, sizeof(val)))
			chunked = strcasecmp(val, "chunked") == 0;
		else if (http_header(line, next - line, "content-type", val,
		    sizeof(val)))
			r->sse = strncasecmp(val, "text/event-stream", 17) == 0;
		else if (http_header(line, next - line, "connection", val,
		    sizeof(val)))
			closing = strcasecmp(val, "close") == 0;
		else if (http_header(line, next - line, "mcp-session-id", val,
		    sizeof(val)))
			str_copy(c->sid, val, sizeof(c->sid));
	}
	conn_drop(c, hlen);
	if (http_body(c, r, chunked, clen) == -1)
		return -1;
	if (closing)
		http_close(c);
	return 0;
}

/* The response to id in a text/event-stream body: its data lines. */
static json_t *
http_sse_match(const char *body, json_int_t id)
{
	json_t		*m = NULL;
	char		*data = NULL;
	const char	*p, *e;
	size_t		 len = 0, n;

	for (p = body; m == NULL; p = e + 1) {
		e = strchrnul(p, '\n');
		n = e - p;
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n >= 5 && strncmp(p, "data:", 5) == 0) {
			p += 5;
			n -= 5;
			if (n > 0 && *p == ' ') {
				p++;
				n--;
			}
			data = xreallocarray(data, len + n + 2, 1);
			memcpy(data + len, p, n);
			len += n;
			data[len++] = '\n';
		} else if (n == 0 && len > 0) {
			m = rpc_match(data, len, id);
			len = 0;
		}
		if (*e == '\0')
			break;
	}
	if (m == NULL && len > 0)
		m = rpc_match(data, len, id);
	free(data);
	return m;
}

static int
http_exchange(struct conn *c, const char *msg, json_int_t id,
    json_t **reply)
{
	struct http_resp r;
	char		*req;
	int		 n, rc = 0;

	if (c->fd == -1)
		return conn_err(c, "not connected");
	n = xasprintf(&req, "POST %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "%s%s%s"
	    "%s%s%s"
	    "Content-Length: %zu\r\n"
	    "\r\n%s", http_path, http_host, http_token,
	    c->initialized ? "MCP-Protocol-Version: " : "",
	    c->initialized ? BENCH_VERSION : "", c->initialized ? "\r\n" : "",
	    c->sid[0] != '\0' ? "Mcp-Session-Id: " : "", c->sid,
	    c->sid[0] != '\0' ? "\r\n" : "", strlen(msg), msg);
	if (conn_write(c, req, n) == -1 || http_read(c, &r) == -1) {
		free(req);
		http_close(c);
		return -1;
	}
	free(req);
	if (id == 0) {
		if (r.status != 202 && r.status != 200)
			rc = conn_err(c, "notification: HTTP %d", r.status);
	} else if (r.status != 200)
		rc = conn_err(c, "HTTP %d: %.200s", r.status, r.body);
	else if ((*reply = r.sse ? http_sse_match(r.body, id) :
	    rpc_match(r.body, r.bodylen, id)) == NULL)
		rc = conn_err(c, "no response to request %lld in \"%.200s\"",
		    (long long)id, r.body);
	free(r.body);
	return rc;
}

static const struct transport http_transport = {
	http_exchange, http_close
};

static int
http_open(struct conn *c)
{
	struct timeval	 tv = { BENCH_TIMEOUT, 0 };
	int		 one = 1;

	http_close(c);
	c->initialized = 0;
	c->sid[0] = '\0';
	c->id = 0;
	if ((c->fd = socket(http_addr->ai_family, http_addr->ai_socktype |
	    SOCK_CLOEXEC, http_addr->ai_protocol)) == -1)
		return conn_err(c, "socket: %s", strerror(errno));
	c->rfd = c->fd;
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, http_addr->ai_addr, http_addr->ai_addrlen) == -1) {
		conn_err(c, "connect %s: %s", http_host, strerror(errno));
		http_close(c);
		return -1;
	}
	return mcp_initialize(c);
}

static void *
http_worker(void *arg)
{
	struct conn	 c;

	conn_init(&c, &http_transport);
	mcp_worker(&c, http_open, http_exec);
	free(c.buf);
	return NULL;
}

/* http://host:port/path */
static void
http_url(const char *url)
{
	struct addrinfo	 hints;
	char		 host[NI_MAXHOST], port[16] = "80";
	const char	*p, *slash, *colon;
	int		 rc;

	if (strncmp(url, "http://", 7) != 0)
		errx(1, "%s: not an http:// URL", url);
	p = url + 7;
	slash = strchrnul(p, '/');
	if ((colon = memchr(p, ':', slash - p)) == NULL)
		colon = slash;
	else if (slash - colon - 1 <= 0 ||
	    (size_t)(slash - colon - 1) >= sizeof(port))
		errx(1, "%s: bad port", url);
	else
		snprintf(port, sizeof(port), "%.*s", (int)(slash - colon - 1),
		    colon + 1);
	if (colon == p || (size_t)(colon - p) >= sizeof(host))
		errx(1, "%s: bad host", url);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - p), p);
	snprintf(http_host, sizeof(http_host), "%.*s", (int)(slash - p), p);
	snprintf(http_path, sizeof(http_path), "%s", *slash ? slash : "/");

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &http_addr)) != 0)
		errx(1, "%s: %s", host, gai_strerror(rc));
}

/* ---- stdio ---- */

static char	**stdio_argv;

static void
stdio_close(struct conn *c)
{
	int	 st;

	if (c->fd != -1)
		close(c->fd);
	if (c->rfd != -1)
		close(c->rfd);
	c->fd = c->rfd = -1;
	if (c->pid > 0)
		while (waitpid(c->pid, &st, 0) == -1 && errno == EINTR)
			;
	c->pid = 0;
	c->len = 0;
}

static int
stdio_exchange(struct conn *c, const char *msg, json_int_t id,
    json_t **reply)
{
	char	*e;

	if (c->fd == -1)
		return conn_err(c, "not running");
	if (conn_write(c, msg, strlen(msg)) == -1 ||
	    conn_write(c, "\n", 1) == -1) {
		stdio_close(c);
		return -1;
	}
	if (id == 0)
		return 0;
	/* Skip notifications and anything else not the answer. */
	for (;;) {
		while ((e = memchr(c->buf, '\n', c->len)) == NULL)
			if (conn_need(c, c->len + 1) == -1) {
				stdio_close(c);
				return -1;
			}
		*reply = rpc_match(c->buf, e - c->buf, id);
		conn_drop(c, e - c->buf + 1);
		if (*reply != NULL)
			return 0;
	}
}

static const struct transport stdio_transport = {
	stdio_exchange, stdio_close
};

static int
stdio_open(struct conn *c)
{
	posix_spawn_file_actions_t	 fa;
	int				 in[2], out[2], rc;

	stdio_close(c);
	c->initialized = 0;
	c->id = 0;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		err(1, "pipe2");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	rc = posix_spawnp(&c->pid, stdio_argv[0], &fa, NULL, stdio_argv,
	    environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	c->fd = in[1];
	c->rfd = out[0];
	if (rc != 0) {
		c->pid = 0;
		stdio_close(c);
		return conn_err(c, "%s: %s", stdio_argv[0], strerror(rc));
	}
	return mcp_initialize(c);
}

static void *
stdio_worker(void *arg)
{
	struct conn	 c;

	conn_init(&c, &stdio_transport);
	mcp_worker(&c, stdio_open, 0);
	free(c.buf);
	return NULL;
}

/* ---- main ---- */

static void __attribute__((__noreturn__))
usage(void)
{
	fprintf(stderr,
	    "usage: mcpbench exec [-c conc] [-g gap] [-n count] [-o file] "
	    "[-w warmup]\n"
	    "           -- command [arg ...]\n"
	    "       mcpbench http -u url -t token [-c conc] [-g gap] "
	    "[-n count]\n"
	    "           [-o file] [-w warmup] run | exec\n"
	    "       mcpbench stdio [-g gap] [-n count] [-o file] [-w warmup] "
	    "-- command [arg ...]\n");
	exit(1);
}

static uint64_t
number(const char *s, const char *what, uint64_t min, uint64_t max)
{
	const char	*e;
	uint64_t	 v;

	if ((e = str_to_u64(s, min, max, &v)) != NULL)
		errx(1, "%s %s: %s", what, s, e);
	return v;
}

int
main(int argc, char *argv[])
{
	const char	*mode, *url = NULL;
	int		 ch;

	if (argc < 2)
		usage();
	mode = argv[1];
	argc--;
	argv++;
	/* A broken connection is an error to count, not a reason to die. */
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "+c:g:n:o:t:u:w:")) != -1) {
		switch (ch) {
		case 'c':
			bench.conc = (unsigned int)number(optarg,
			    "concurrency", 1, BENCH_MAX_CONC);
			break;
		case 'g':
			bench.gap = (unsigned int)number(optarg, "gap", 0,
			    BENCH_MAX_GAP);
			break;
		case 'n':
			bench.count = number(optarg, "count", 1,
			    BENCH_MAX_RUNS);
			break;
		case 'o':
			bench.raw = optarg;
			break;
		case 't':
			http_token = optarg;
			break;
		case 'u':
			url = optarg;
			break;
		case 'w':
			bench.warmup = number(optarg, "warmup", 0,
			    BENCH_MAX_RUNS);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;

	if (strcmp(mode, "exec") == 0) {
		if (argc < 1 || url != NULL || http_token != NULL)
			usage();
		return exec_main(argv);
	}
	if (strcmp(mode, "http") == 0) {
		if (argc != 1 || url == NULL || http_token == NULL)
			usage();
		if (strcmp(argv[0], "exec") == 0)
			http_exec = 1;
		else if (strcmp(argv[0], "run") != 0)
			usage();
		http_url(url);
		return bench_run(http_worker);
	}
	if (strcmp(mode, "stdio") == 0) {
		if (argc < 1 || url != NULL || http_token != NULL ||
		    bench.conc != 1)
			usage();
		stdio_argv = argv;
		return bench_run(stdio_worker);
	}
	usage();
}
