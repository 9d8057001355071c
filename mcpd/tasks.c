/*
 * Tasks: a tools/call answered at once with a handle, run in the
 * background, polled and cancelled.  Both flavours are served: the
 * experimental tasks of 2025-11-25 (the client asks with params.task) and
 * the io.modelcontextprotocol/tasks extension of 2026-07-28 (the server
 * decides, for clients that declare the extension).
 *
 * A task belongs to the credential that created it; anyone else asking
 * for it is told it does not exist.  Tasks live in memory for their ttl
 * and are lost when mcpd restarts.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <sodium.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "mcpd.h"
#include "tasks.h"
#include "tools.h"
#include "util.h"

#define TASK_TTL_DEFAULT	(60ULL * 60 * 1000)
#define TASK_TTL_MAX		(24ULL * 60 * 60 * 1000)
#define TASK_POLL_MS		500
#define TASKS_PER_PEER		64
#define TASKS_MAX		4096

enum task_status {
	TS_WORKING,
	TS_INPUT_REQUIRED,
	TS_COMPLETED,
	TS_FAILED,
	TS_CANCELLED,
};

static const char *const status_names[] = {
	"working", "input_required", "completed", "failed", "cancelled",
};

/* A legacy tasks/result waiting for the end. */
struct waiter {
	TAILQ_ENTRY(waiter)	 entry;
	struct mcp_req		*req;
	struct mcp_task		*task;
};

struct mcp_task {
	TAILQ_ENTRY(mcp_task)	 entry;
	char			 id[33];
	struct mcp_peer		 peer;
	int			 modern;
	enum task_status	 status;
	char			*message;
	uint64_t		 created_ms;	/* wall clock */
	uint64_t		 updated_ms;
	uint64_t		 ttl;
	json_t			*result;
	json_t			*error;
	struct mcp_req		*run;
	struct mcp_out		 out;
	struct mcp_session	*sess;		/* legacy: for progress */
	struct event		*ev_expire;
	TAILQ_HEAD(, waiter)	 waiters;
	/* Input the task waits for (modern): key -> request. */
	json_t			*inputs;
	json_t			*answers;	/* what came for them */
	task_input_fn		 on_input;
	unsigned int		 nkeys;		/* keys ever asked */
};

static TAILQ_HEAD(, mcp_task)	 tasks = TAILQ_HEAD_INITIALIZER(tasks);
static unsigned int		 ntasks;

static uint64_t
wall_ms(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void
iso_ms(uint64_t ms, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)(ms / 1000);
	char		 s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", s, (unsigned)(ms % 1000));
}

static int
terminal(const struct mcp_task *t)
{
	return t->status >= TS_COMPLETED;
}

static json_t *
task_json(const struct mcp_task *t, int detailed)
{
	char	 created[40], updated[40];
	json_t	*o;

	iso_ms(t->created_ms, created, sizeof(created));
	iso_ms(t->updated_ms, updated, sizeof(updated));
	o = json_pack("{s:s, s:s, s:s, s:s}", "taskId", t->id, "status",
	    status_names[t->status], "createdAt", created, "lastUpdatedAt",
	    updated);
	if (t->message != NULL)
		json_object_set_new(o, "statusMessage",
		    json_string(t->message));
	if (t->modern) {
		json_object_set_new(o, "ttlMs", json_integer((json_int_t)
		    t->ttl));
		json_object_set_new(o, "pollIntervalMs",
		    json_integer(TASK_POLL_MS));
	} else {
		json_object_set_new(o, "ttl", json_integer((json_int_t)
		    t->ttl));
		json_object_set_new(o, "pollInterval",
		    json_integer(TASK_POLL_MS));
	}
	if (!detailed || !t->modern)
		return o;
	if (t->status == TS_COMPLETED && t->result != NULL)
		json_object_set(o, "result", t->result);
	if (t->status == TS_FAILED && t->error != NULL)
		json_object_set(o, "error", t->error);
	if (t->status == TS_INPUT_REQUIRED && t->inputs != NULL)
		json_object_set(o, "inputRequests", t->inputs);
	return o;
}

static void
task_set(struct mcp_task *t, enum task_status st, const char *msg)
{
	json_t	*j;

	t->status = st;
	t->updated_ms = wall_ms();
	free(t->message);
	t->message = msg != NULL ? xstrdup(msg) : NULL;
	if (t->modern) {
		j = task_json(t, 1);
		mcp_task_status(&t->peer, t->id, j);
		json_decref(j);
	} else if (t->sess != NULL && t->sess->state == SESS_READY) {
		j = rpc_notification("notifications/tasks/status",
		    task_json(t, 0));
		session_send(t->sess, j);
		json_decref(j);
	}
}

static void	waiters_answer(struct mcp_task *);

static void
task_free(struct mcp_task *t)
{
	struct waiter	*w;

	if (t->run != NULL)
		mcp_cancel(t->run, "its task ended");
	while ((w = TAILQ_FIRST(&t->waiters)) != NULL) {
		w->req->cancel = NULL;
		TAILQ_REMOVE(&t->waiters, w, entry);
		mcp_error(w->req, RPC_INVALID_PARAMS, NULL,
		    "Failed to retrieve task: Task has expired");
		free(w);
	}
	TAILQ_REMOVE(&tasks, t, entry);
	ntasks--;
	if (t->sess != NULL)
		session_unref(t->sess);
	event_free(t->ev_expire);
	json_decref(t->result);
	json_decref(t->error);
	json_decref(t->inputs);
	json_decref(t->answers);
	free(t->message);
	free(t);
}

static void
task_expire(evutil_socket_t fd, short events, void *arg)
{
	struct mcp_task	*t = arg;

	log_debug("%s: task %s expired", t->peer.desc, t->id);
	task_free(t);
}

/* The running request's messages. */
static void
task_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	struct mcp_task	*t = (struct mcp_task *)((char *)out -
			    offsetof(struct mcp_task, out));
	json_t		*res, *err;

	if (!final) {
		/* 2025-11-25: progress keeps its token for the task's life. */
		if (!t->modern && t->sess != NULL)
			session_send(t->sess, msg);
		return;
	}
	t->run = NULL;
	if (t->status == TS_CANCELLED)
		return;
	res = json_object_get(msg, "result");
	err = json_object_get(msg, "error");
	if (res != NULL) {
		t->result = json_incref(res);
		task_set(t, TS_COMPLETED, json_is_true(json_object_get(res,
		    "isError")) ? "The tool reported an error." : NULL);
	} else {
		t->error = json_incref(err);
		task_set(t, TS_FAILED, json_string_value(json_object_get(err,
		    "message")));
	}
	waiters_answer(t);
}

static void
task_abandon(struct mcp_out *out, struct mcp_req *req)
{
	struct mcp_task	*t = (struct mcp_task *)((char *)out -
			    offsetof(struct mcp_task, out));

	t->run = NULL;
	if (!terminal(t))
		task_set(t, TS_CANCELLED, "Cancelled.");
	waiters_answer(t);
}

static const struct mcp_out_ops task_ops = {
	.send = task_send,
	.abandon = task_abandon,
};

static struct mcp_task *
task_find(const struct mcp_req *req, json_t *id)
{
	struct mcp_task	*t;

	if (!json_is_string(id))
		return NULL;
	TAILQ_FOREACH(t, &tasks, entry)
		if (strcmp(t->id, json_string_value(id)) == 0 &&
		    mcp_peer_same(&t->peer, &req->peer) &&
		    t->modern == req->modern)
			return t;
	return NULL;
}

static int
peer_tasks(const struct mcp_peer *peer)
{
	struct mcp_task	*t;
	int		 n = 0;

	TAILQ_FOREACH(t, &tasks, entry)
		if (mcp_peer_same(&t->peer, peer) && !terminal(t))
			n++;
	return n;
}

/* Start the request as a task; the creation is answered. */
static struct mcp_task *
task_start(struct mcp_req *req, const struct tool *tool)
{
	struct mcp_task	*t;
	struct mcp_req	*run;
	struct timeval	 tv;
	unsigned char	 rnd[16];
	json_t		*ttl, *res, *args;

	if (peer_tasks(&req->peer) >= TASKS_PER_PEER ||
	    ntasks >= TASKS_MAX) {
		mcp_tool_error(req, "Too many tasks: wait for some to finish "
		    "(at most %d at once).", TASKS_PER_PEER);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(t->id, sizeof(t->id), rnd, sizeof(rnd));
	t->peer = req->peer;
	t->modern = req->modern;
	t->created_ms = t->updated_ms = wall_ms();
	t->ttl = TASK_TTL_DEFAULT;
	ttl = json_object_get(json_object_get(req->params, "task"), "ttl");
	if (!req->modern && json_is_integer(ttl) && json_integer_value(ttl) >
	    0)
		t->ttl = (uint64_t)json_integer_value(ttl) < TASK_TTL_MAX ?
		    (uint64_t)json_integer_value(ttl) : TASK_TTL_MAX;
	t->out.ops = &task_ops;
	TAILQ_INIT(&t->waiters);
	if (!req->modern && req->sess != NULL) {
		t->sess = req->sess;
		session_ref(t->sess);
	}
	if ((t->ev_expire = evtimer_new(mcp_base, task_expire, t)) == NULL)
		fatalx("cannot create a timer");
	tv.tv_sec = (time_t)(t->ttl / 1000);
	tv.tv_usec = (suseconds_t)(t->ttl % 1000) * 1000;
	evtimer_add(t->ev_expire, &tv);
	TAILQ_INSERT_TAIL(&tasks, t, entry);
	ntasks++;

	run = mcp_req_clone(req, &t->out);
	run->task = t;
	if (req->modern)
		run->progress = NULL;	/* not carried on tasks */
	t->run = run;
	log_info("%s: task %s: %s", t->peer.desc, t->id, tool->name);

	/* Durable before it is announced: tasks/get finds it from now. */
	if (req->modern) {
		res = task_json(t, 0);
		json_object_set_new(res, "resultType", json_string("task"));
	} else
		res = json_pack("{s:o}", "task", task_json(t, 0));
	mcp_result(req, res);
	args = json_object_get(run->params, "arguments");
	tool->fn(run, json_is_object(args) ? args : NULL);
	return t;
}

int
task_maybe(struct mcp_req *req, const struct tool *tool, json_t *args)
{
	int	 can = (tool->flags & (T_TASK | T_TASK_ONLY)) != 0;

	if (!req->modern) {
		if (req->version != MCP_V20251125)
			return 0;
		if (json_is_object(json_object_get(req->params, "task"))) {
			if (!can) {
				mcp_error(req, RPC_METHOD_NOT_FOUND, NULL,
				    "Tool %s does not run as a task",
				    tool->name);
				return -1;
			}
			task_start(req, tool);
			return 1;
		}
		if (tool->flags & T_TASK_ONLY) {
			mcp_error(req, RPC_METHOD_NOT_FOUND, NULL, "Tool %s "
			    "must run as a task: add params.task",
			    tool->name);
			return -1;
		}
		return 0;
	}
	if (!can)
		return 0;
	if (!mcp_client_has_tasks(req)) {
		if (tool->flags & T_TASK_ONLY) {
			mcp_missing_tasks(req);
			return -1;
		}
		return 0;
	}
	if ((tool->flags & (T_TASK_ONLY | T_TASK_AUTO)) ||
	    tool_wants_task(req, args)) {
		if ((tool->flags & T_TASK_AUTO) && tool->decide != NULL &&
		    !tool->decide(req, args))
			return 0;
		task_start(req, tool);
		return 1;
	}
	return 0;
}

/* --- Input a task waits for (2026-07-28) --------------------------- */

void
task_input(struct mcp_req *run, json_t *requests, task_input_fn fn)
{
	struct mcp_task	*t = run->task;
	const char	*k;
	json_t		*v;

	if (t == NULL) {
		json_decref(requests);
		return;
	}
	json_decref(t->inputs);
	t->inputs = json_object();
	json_decref(t->answers);
	t->answers = json_object();
	json_object_foreach(requests, k, v)
		json_object_set(t->inputs, k, v);
	t->nkeys += (unsigned int)json_object_size(requests);
	json_decref(requests);
	t->on_input = fn;
	task_set(t, TS_INPUT_REQUIRED, "Waiting for input.");
}

/* --- Methods -------------------------------------------------------- */

static struct mcp_task *
method_task(struct mcp_req *req)
{
	struct mcp_task	*t;

	if (req->modern && !mcp_client_has_tasks(req)) {
		mcp_missing_tasks(req);
		return NULL;
	}
	if ((t = task_find(req, json_object_get(req->params, "taskId"))) ==
	    NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Failed to retrieve task: Task not found");
		return NULL;
	}
	return t;
}

void
tasks_get(struct mcp_req *req)
{
	struct mcp_task	*t;

	if ((t = method_task(req)) != NULL)
		mcp_result(req, task_json(t, 1));
}

static void
waiter_cancel(struct mcp_req *req)
{
	struct waiter	*w = req->hctx;

	TAILQ_REMOVE(&w->task->waiters, w, entry);
	free(w);
}

static void
result_answer(struct mcp_req *req, struct mcp_task *t)
{
	json_t	*res, *meta;

	if (t->status == TS_FAILED && t->error != NULL) {
		mcp_error(req, (int)json_integer_value(json_object_get(
		    t->error, "code")), json_incref(json_object_get(t->error,
		    "data")), "%s", json_string_value(json_object_get(
		    t->error, "message")));
		return;
	}
	if (t->status == TS_CANCELLED || t->result == NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL, "Task %s was "
		    "cancelled: it has no result", t->id);
		return;
	}
	res = json_deep_copy(t->result);
	if ((meta = json_object_get(res, "_meta")) == NULL) {
		meta = json_object();
		json_object_set_new(res, "_meta", meta);
	}
	json_object_set_new(meta, META_RELATED_TASK, json_pack("{s:s}",
	    "taskId", t->id));
	mcp_result(req, res);
}

static void
waiters_answer(struct mcp_task *t)
{
	struct waiter	*w;

	while ((w = TAILQ_FIRST(&t->waiters)) != NULL) {
		TAILQ_REMOVE(&t->waiters, w, entry);
		w->req->cancel = NULL;
		result_answer(w->req, t);
		free(w);
	}
}

void
tasks_result(struct mcp_req *req)
{
	struct mcp_task	*t;
	struct waiter	*w;

	if ((t = method_task(req)) == NULL)
		return;
	if (terminal(t)) {
		result_answer(req, t);
		return;
	}
	/* It blocks until the task ends. */
	w = xcalloc(1, sizeof(*w));
	w->req = req;
	w->task = t;
	TAILQ_INSERT_TAIL(&t->waiters, w, entry);
	req->hctx = w;
	req->cancel = waiter_cancel;
}

void
tasks_list(struct mcp_req *req)
{
	struct mcp_task	*t;
	json_t		*list;

	if (json_object_get(req->params, "cursor") != NULL) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: unknown cursor");
		return;
	}
	list = json_array();
	TAILQ_FOREACH(t, &tasks, entry)
		if (mcp_peer_same(&t->peer, &req->peer) && !t->modern)
			json_array_append_new(list, task_json(t, 0));
	mcp_result(req, json_pack("{s:o}", "tasks", list));
}

static void
task_cancel(struct mcp_task *t, const char *msg, const char *why)
{
	log_info("%s: task %s cancelled %s", t->peer.desc, t->id, why);
	task_set(t, TS_CANCELLED, msg);
	if (t->run != NULL)
		mcp_cancel(t->run, "its task was cancelled");
	waiters_answer(t);
}

void
tasks_cancel(struct mcp_req *req)
{
	struct mcp_task	*t;

	if ((t = method_task(req)) == NULL)
		return;
	if (terminal(t)) {
		if (req->modern)
			mcp_result(req, json_object());
		else
			mcp_error(req, RPC_INVALID_PARAMS, NULL, "Cannot "
			    "cancel task: already in terminal status '%s'",
			    status_names[t->status]);
		return;
	}
	task_cancel(t, "Cancelled by the client.", "by the client");
	mcp_result(req, req->modern ? json_object() : task_json(t, 0));
}

/*
 * The client sends no more (stdio at EOF).  A tasks/result in flight is a
 * request like any other and is answered when its task ends; but a task
 * nothing waits for could only be polled, and one that waits for input
 * would wait for ever: both are cancelled.
 */
void
tasks_input_ended(const struct mcp_peer *peer)
{
	struct mcp_task	*t;

	TAILQ_FOREACH(t, &tasks, entry) {
		if (terminal(t) || !mcp_peer_same(&t->peer, peer))
			continue;
		if (!TAILQ_EMPTY(&t->waiters) &&
		    t->status != TS_INPUT_REQUIRED)
			continue;
		task_cancel(t, "Cancelled: the client's input ended.",
		    "at the end of the client's input");
	}
}

void
tasks_update(struct mcp_req *req)
{
	struct mcp_task	*t;
	json_t		*resp, *v;
	const char	*k;
	task_input_fn	 fn;

	if ((t = method_task(req)) == NULL)
		return;
	resp = json_object_get(req->params, "inputResponses");
	if (!json_is_object(resp)) {
		mcp_error(req, RPC_INVALID_PARAMS, NULL,
		    "Invalid params: inputResponses must be an object");
		return;
	}
	if (t->status == TS_INPUT_REQUIRED && t->inputs != NULL) {
		/* Keys not outstanding are ignored. */
		json_object_foreach(resp, k, v)
			if (json_object_get(t->inputs, k) != NULL &&
			    json_is_object(v)) {
				json_object_set(t->answers, k, v);
				json_object_del(t->inputs, k);
			}
		if (json_object_size(t->inputs) == 0 && t->run != NULL) {
			fn = t->on_input;
			t->on_input = NULL;
			json_decref(t->inputs);
			t->inputs = NULL;
			task_set(t, TS_WORKING, NULL);
			v = t->answers;
			t->answers = NULL;
			mcp_result(req, json_object());
			if (fn != NULL)
				fn(t->run, v);
			json_decref(v);
			return;
		}
		t->updated_ms = wall_ms();
	}
	mcp_result(req, json_object());
}

void
tasks_shutdown(void)
{
	struct mcp_task	*t;

	while ((t = TAILQ_FIRST(&tasks)) != NULL)
		task_free(t);
}
