/*
 * Fuzz target: the mcpd.conf parser (policy/parse.y) on any text, and
 * what the daemons do with a policy it accepts that needs no real users:
 * every lookup by name, alias and token, and the canonical printout,
 * which must read back to the very same printout.
 *
 * The text is the main file; "inc.conf" beside it may be included.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "log.h"
#include "policy.h"
#include "util.h"

static char	*conf_path, *dump_path;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char inc[] =
	    "inc = \"included\"\n"
	    "limits small {\n\tmemory 64M\n\ttimeout 5s\n}\n";
	char	*path;

	conf_path = fuzz_path("fuzz.conf");
	dump_path = fuzz_path("dump.conf");
	path = fuzz_path("inc.conf");
	fuzz_write(path, inc, sizeof(inc) - 1);
	free(path);
	return 0;
}

static char *
dump(const struct policy *p, size_t *len)
{
	char	*text = NULL;
	FILE	*fp;

	if ((fp = open_memstream(&text, len)) == NULL)
		fatal("open_memstream");
	policy_dump(fp, p);
	if (fclose(fp) != 0)
		fatal("policy_dump");
	return text;
}

/* Each object is found again by its own name, aliases and tokens. */
static void
lookups(const struct policy *p)
{
	char			 tools[4][POLICY_NAME_MAX];
	const struct tenant	*t;
	const struct language	*l;
	const struct limits	*lim;
	const struct image	*im;
	size_t			 i;

	TAILQ_FOREACH(t, &p->tenants, entry) {
		if (policy_tenant(p, t->name) != t || t->limits == NULL ||
		    !name_valid(t->name))
			abort();
		for (i = 0; i < t->ntokens; i++)
			if (policy_tenant_by_token(p, t->tokens[i]) != t)
				abort();
	}
	TAILQ_FOREACH(l, &p->languages, entry) {
		if (policy_language(p, l->name) != l ||
		    policy_image(p, l->image) == NULL)
			abort();
		for (i = 0; i < l->naliases; i++)
			if (policy_language(p, l->aliases[i]) != l)
				abort();
		policy_language_tools(l, tools, nitems(tools));
	}
	TAILQ_FOREACH(lim, &p->limits, entry)
		if (policy_limits(p, lim->name) != lim)
			abort();
	TAILQ_FOREACH(im, &p->images, entry)
		if (policy_image(p, im->name) != im)
			abort();
}

/* The printout is a file that loads as the same policy. */
static void
roundtrip(const struct policy *p)
{
	struct policy	*again;
	char		*text, *text2;
	size_t		 len, len2;

	text = dump(p, &len);
	fuzz_write(dump_path, text, len);
	if ((again = policy_load(dump_path)) == NULL) {
		fprintf(stderr, "the printout does not load:\n%s", text);
		abort();
	}
	text2 = dump(again, &len2);
	if (len != len2 || memcmp(text, text2, len) != 0) {
		fprintf(stderr, "the printout changes when read back:\n%s\n"
		    "---\n%s", text, text2);
		abort();
	}
	lookups(again);
	policy_free(again);
	free(text);
	free(text2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy	*p;

	fuzz_write(conf_path, data, size);
	if ((p = policy_load(conf_path)) == NULL)
		return 0;
	lookups(p);
	roundtrip(p);
	policy_free(p);
	return 0;
}
