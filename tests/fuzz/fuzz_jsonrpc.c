/*
 * Fuzz target: mcpd's JSON-RPC (mcpd/jsonrpc.c) and MCP request handling
 * (server.c, tools*.c, args.c, resources.c, tasks.c, ops.c) for one client,
 * as the stdio transport hands its lines over: initialize, tools/list,
 * tools/call with any arguments, batches, notifications, responses to
 * mcpd's own requests, both eras.  What would go to sandboxd goes to the
 * harness's sandboxd (mcpdfuzz.c), which answers at once.
 *
 * Input: lines, each a message.  A line "#N" makes sandboxd answer the
 * way enum sbx_mode N says from then on.  Every message mcpd writes must
 * be JSON, every audit record one auditd takes.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "../../mcpd/jsonrpc.h"
#include "mcpdfuzz.h"
#include "../../mcpd/mcp.h"
#include "../../mcpd/mcpd.h"

static struct mcp_session	*sess;
static struct mcp_peer		 peer;

static void
out_send(struct mcp_out *out, struct mcp_req *req, json_t *msg, int final,
    int status)
{
	mcpdfuzz_check_json(msg);
}

static void
out_abandon(struct mcp_out *out, struct mcp_req *req)
{
}

static const struct mcp_out_ops out_ops = {
	.send = out_send,
	.abandon = out_abandon,
};
static struct mcp_out	 out = { &out_ops, 0 };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	mcpdfuzz_init();
	memset(&peer, 0, sizeof(peer));
	peer.tenant = policy_tenant(mcpd_conf, "alice");
	memcpy(peer.principal, "uid:1000", 8);
	strcpy(peer.desc, "tenant alice (uid 1000)");
	return 0;
}

/* A line, as stdio.c's stdio_message() hands it over. */
static void
message(const char *line, size_t len)
{
	struct mcp_input	 in;

	memset(&in, 0, sizeof(in));
	in.transport = MCP_T_STDIO;
	in.sess = sess;
	in.peer = &peer;
	in.out = &out;
	mcp_input_line(&in, line, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *end = p + size, *nl;
	char		*line;
	size_t		 len;

	mcpdfuzz_begin();
	if ((sess = session_new(MCP_T_STDIO, &peer)) == NULL)
		abort();
	sess->chan = &out;
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		len = (size_t)(nl - p);
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len >= 2 && p[0] == '#' && p[1] >= '0' && p[1] <= '9') {
			mcpdfuzz_mode((enum sbx_mode)(p[1] - '0'));
			continue;
		}
		/* A copy with its NUL, as stdio.c makes. */
		line = malloc(len + 1);
		memcpy(line, p, len);
		line[len] = '\0';
		if (len > 0 && strspn(line, " \t") != len) {
			message(line, len);
			mcpdfuzz_pump();
		}
		free(line);
	}
	/* stdin closed: as stdio_eof(). */
	mcp_shutdown();
	mcpdfuzz_end();
	return 0;
}
