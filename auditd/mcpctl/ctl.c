/*
 * mcpctl status and sandbox list, inspect and kill: questions to the
 * running mcp-sandboxd over its socket, as root (sandboxd lets uid 0 alone
 * act as mcpctl), and a hello to mcp-auditd.  sandboxd answers for the
 * front as well: every mcpd connected to it is one of its peers.
 */
#include <sys/types.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "imsgsync.h"
#include "mcpctl.h"
#include "policy.h"
#include "util.h"

#define CTL_TIMEOUT_MS	10000

static void
ctl_connect(struct mcpctl *ctx, struct imsgsync *is)
{
	const struct policy	*conf = mcpctl_conf(ctx, EXIT_ERROR, "");

	if (imsgsync_connect(is, conf->sandbox_socket, ROLE_MCPCTL) == -1)
		errx(EXIT_ERROR, "mcp-sandboxd: %s", is->err);
}

/* The next frame of the answer to request 1, or exit. */
static void
ctl_next(struct imsgsync *is, struct imsg *imsg)
{
	int	 r;

	if ((r = imsgsync_next(is, imsg, CTL_TIMEOUT_MS)) == 1)
		return;
	errx(EXIT_ERROR, "mcp-sandboxd: %s", r == 0 ? "no answer in time" :
	    is->err);
}

static int
ctl_error(struct imsg *imsg, const char *what)
{
	struct sbx_error	 e;

	if (proto_payload(imsg->data, imsg->datalen, &e, sizeof(e)) == -1)
		errx(EXIT_ERROR, "mcp-sandboxd: a malformed error");
	e.message[sizeof(e.message) - 1] = '\0';
	warnx("%s: %s", what, e.message);
	return e.code;
}

/* An information frame as sent, its strings checked. */
static void
ctl_info(struct imsg *imsg, struct sbx_info *in)
{
	if (proto_payload(imsg->data, imsg->datalen, in, sizeof(*in)) == -1 ||
	    memchr(in->id, '\0', sizeof(in->id)) == NULL ||
	    memchr(in->name, '\0', sizeof(in->name)) == NULL ||
	    memchr(in->tenant, '\0', sizeof(in->tenant)) == NULL ||
	    memchr(in->image, '\0', sizeof(in->image)) == NULL ||
	    memchr(in->runtime, '\0', sizeof(in->runtime)) == NULL)
		errx(EXIT_ERROR, "mcp-sandboxd: a malformed sandbox");
}

/* Every tenant's sandboxes, runs' included: n of them in *out. */
static size_t
ctl_list(struct imsgsync *is, struct sbx_info **out)
{
	struct sbx_ref	 ref;
	struct imsg	 imsg;
	struct sbx_info	*v = NULL;
	size_t		 n = 0;

	memset(&ref, 0, sizeof(ref));
	if (imsgsync_send(is, IMSG_SBX_LIST, 1, &ref, sizeof(ref)) == -1)
		errx(EXIT_ERROR, "mcp-sandboxd: %s", is->err);
	for (;;) {
		ctl_next(is, &imsg);
		if (imsg.hdr.type == IMSG_SBX_DONE)
			break;
		if (imsg.hdr.type == IMSG_SBX_ERROR)
			exit(ctl_error(&imsg, "sandbox list") ? EXIT_ERROR : 0);
		if (imsg.hdr.type != IMSG_SBX_INFO)
			errx(EXIT_ERROR, "mcp-sandboxd: unexpected answer %u",
			    imsg.hdr.type);
		v = xreallocarray(v, n + 1, sizeof(*v));
		ctl_info(&imsg, &v[n++]);
		imsg_free(&imsg);
	}
	imsg_free(&imsg);
	*out = v;
	return n;
}

/*
 * The full id of the sandbox a command names by its id or a prefix of
 * it, of at least 4 digits and one sandbox's alone.
 */
static int
ctl_resolve(const struct sbx_info *v, size_t n, const char *arg,
    char id[SBX_ID_LEN + 1])
{
	size_t	 i, len = strlen(arg), found = 0;

	if (len < 4 || len > SBX_ID_LEN || strspn(arg, "0123456789abcdef") !=
	    len) {
		warnx("\"%s\": not a sandbox id (or 4 or more of its first "
		    "hex digits)", arg);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (strncmp(v[i].id, arg, len) == 0) {
			if (found++ == 0)
				str_copy(id, v[i].id, SBX_ID_LEN + 1);
		}
	if (found == 1)
		return 0;
	warnx(found == 0 ? "no sandbox %s" : "%s names more than one "
	    "sandbox: give more of its id", arg);
	return -1;
}

/* A request naming one sandbox; its INFO in *in when there is one. */
static int
ctl_request(struct imsgsync *is, uint32_t type, const char *id,
    struct sbx_info *in, const char *what)
{
	struct sbx_ref	 ref;
	struct imsg	 imsg;
	int		 rv = 0;

	memset(&ref, 0, sizeof(ref));
	str_copy(ref.id, id, sizeof(ref.id));
	if (imsgsync_send(is, type, 1, &ref, sizeof(ref)) == -1)
		errx(EXIT_ERROR, "mcp-sandboxd: %s", is->err);
	for (;;) {
		ctl_next(is, &imsg);
		if (imsg.hdr.type == IMSG_SBX_INFO && in != NULL) {
			ctl_info(&imsg, in);
			imsg_free(&imsg);
			continue;
		}
		if (imsg.hdr.type == IMSG_SBX_ERROR) {
			ctl_error(&imsg, what);
			rv = -1;
		} else if (imsg.hdr.type != IMSG_SBX_DONE)
			errx(EXIT_ERROR, "mcp-sandboxd: unexpected answer %u",
			    imsg.hdr.type);
		imsg_free(&imsg);
		return rv;
	}
}

/* status */

static void
status_server(struct imsgsync *is, struct ctl_status *st)
{
	struct imsg	 imsg;
	struct sbx_peer	 p;

	if (imsgsync_send(is, IMSG_SBX_SERVER, 1, NULL, 0) == -1)
		errx(EXIT_ERROR, "mcp-sandboxd: %s", is->err);
	for (;;) {
		ctl_next(is, &imsg);
		switch (imsg.hdr.type) {
		case IMSG_SBX_PEER:
			if (proto_payload(imsg.data, imsg.datalen, &p,
			    sizeof(p)) == -1 ||
			    memchr(p.software, '\0', sizeof(p.software)) ==
			    NULL)
				errx(EXIT_ERROR, "mcp-sandboxd: a malformed "
				    "peer");
			st->peers = xreallocarray(st->peers, st->npeers + 1,
			    sizeof(*st->peers));
			st->peers[st->npeers++] = p;
			break;
		case IMSG_SBX_SERVERINFO:
			if (proto_payload(imsg.data, imsg.datalen, &st->server,
			    sizeof(st->server)) == -1 ||
			    memchr(st->server.software, '\0',
			    sizeof(st->server.software)) == NULL ||
			    memchr(st->server.runc, '\0',
			    sizeof(st->server.runc)) == NULL ||
			    memchr(st->server.config, '\0',
			    sizeof(st->server.config)) == NULL)
				errx(EXIT_ERROR, "mcp-sandboxd: a malformed "
				    "answer");
			st->sandboxd_up = 1;
			break;
		case IMSG_SBX_DONE:
			imsg_free(&imsg);
			return;
		default:
			errx(EXIT_ERROR, "mcp-sandboxd: unexpected answer %u",
			    imsg.hdr.type);
		}
		imsg_free(&imsg);
	}
}

int
ctl_status(struct mcpctl *ctx, int argc, char **argv)
{
	struct ctl_status	 st;
	struct imsgsync		 is;
	struct policy		*conf;
	char			 hex[65];

	cmd_operands("status", &argc, &argv, 0, 0);
	conf = mcpctl_conf(ctx, EXIT_ERROR, "");
	memset(&st, 0, sizeof(st));
	st.conffile = ctx->conffile;
	sodium_bin2hex(hex, sizeof(hex), conf->digest, sizeof(conf->digest));
	(void)snprintf(st.file_config, sizeof(st.file_config), "sha256:%s",
	    hex);
	if (imsgsync_connect(&is, conf->sandbox_socket, ROLE_MCPCTL) == -1)
		str_copy(st.sandboxd_error, is.err, sizeof(st.sandboxd_error));
	else {
		status_server(&is, &st);
		imsgsync_close(&is);
	}
	/* auditd answers a hello even with sandboxd down. */
	if (imsgsync_connect(&is, conf->audit.socket, ROLE_MCPCTL) == -1)
		str_copy(st.auditd_error, is.err, sizeof(st.auditd_error));
	else {
		st.auditd_up = 1;
		str_copy(st.auditd_software, is.peer,
		    sizeof(st.auditd_software));
		imsgsync_close(&is);
	}
	ctx->out->status(&st);
	free(st.peers);
	return st.sandboxd_up && st.auditd_up && st.server.audit_connected ?
	    0 : EXIT_ERROR;
}

/* sandbox list, inspect and kill */

static int
cmp_info(const void *a, const void *b)
{
	const struct sbx_info	*x = a, *y = b;
	int			 c;

	if ((c = strcmp(x->tenant, y->tenant)) != 0)
		return c;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->id, y->id);
}

int
ctl_sandbox_list(struct mcpctl *ctx, int argc, char **argv)
{
	struct imsgsync	 is;
	struct sbx_info	*v;
	const char	*tenant = NULL;
	size_t		 n, i, k = 0;
	int		 ch;

	optind = 0;
	while ((ch = getopt(argc, argv, "+t:")) != -1) {
		if (ch != 't')
			usage_cmd("list");
		tenant = optarg;
	}
	if (argc != optind)
		usage_cmd("list");
	ctl_connect(ctx, &is);
	n = ctl_list(&is, &v);
	imsgsync_close(&is);
	for (i = 0; i < n; i++)
		if (tenant == NULL || strcmp(v[i].tenant, tenant) == 0)
			v[k++] = v[i];
	if (k > 0)	/* none: v is NULL, which qsort may not be given */
		qsort(v, k, sizeof(*v), cmp_info);
	ctx->out->sandbox_list(v, k);
	free(v);
	return 0;
}

int
ctl_sandbox_inspect(struct mcpctl *ctx, int argc, char **argv)
{
	struct imsgsync	 is;
	struct sbx_info	*v, in;
	char		 id[SBX_ID_LEN + 1];
	size_t		 n;
	int		 rv = EXIT_ERROR;

	cmd_operands("inspect", &argc, &argv, 1, 1);
	ctl_connect(ctx, &is);
	n = ctl_list(&is, &v);
	memset(&in, 0, sizeof(in));
	if (ctl_resolve(v, n, argv[0], id) == 0 &&
	    ctl_request(&is, IMSG_SBX_STATUS, id, &in, argv[0]) == 0 &&
	    in.id[0] != '\0') {
		ctx->out->sandbox_inspect(&in);
		rv = 0;
	}
	imsgsync_close(&is);
	free(v);
	return rv;
}

int
ctl_sandbox_kill(struct mcpctl *ctx, int argc, char **argv)
{
	struct imsgsync	 is;
	struct sbx_info	*v;
	char		 id[SBX_ID_LEN + 1];
	size_t		 n;
	int		 i, rv = 0;

	cmd_operands("kill", &argc, &argv, 1, -1);
	ctl_connect(ctx, &is);
	n = ctl_list(&is, &v);
	for (i = 0; i < argc; i++) {
		if (ctl_resolve(v, n, argv[i], id) == -1 ||
		    ctl_request(&is, IMSG_SBX_KILL, id, NULL, argv[i]) == -1) {
			rv = EXIT_ERROR;
			continue;
		}
		ctx->out->sandbox_killed(id);
	}
	imsgsync_close(&is);
	free(v);
	return rv;
}
