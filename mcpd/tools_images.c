/*
 * list_languages and list_images: which images sandboxes and runs can
 * start from, and which languages each can run, as sandboxd found out by
 * running their version commands there.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "args.h"
#include "mcp.h"
#include "mcpd.h"
#include "policy.h"
#include "proto.h"
#include "tools.h"
#include "util.h"

/* The image a language's entry lists as present, or NULL. */
static json_t *
lang_in_image(json_t *img, const char *name)
{
	json_t	*l;
	size_t	 i;

	json_array_foreach(json_object_get(img, "languages"), i, l)
		if (strcmp(json_string_value(json_object_get(l, "name")),
		    name) == 0)
			return l;
	return NULL;
}

/* One language, with the images that have it and its version in each. */
static json_t *
lang_json(const struct language *l, json_t *images)
{
	json_t	*aliases, *in, *img, *found, *o;
	size_t	 i;

	aliases = json_array();
	for (i = 0; i < l->naliases; i++)
		json_array_append_new(aliases, json_string(l->aliases[i]));
	in = json_array();
	o = json_pack("{s:s, s:o, s:s, s:b, s:s}", "name", l->name,
	    "aliases", aliases, "file", l->file, "compiled", l->build != NULL,
	    "image", l->image);
	json_array_foreach(images, i, img) {
		if ((found = lang_in_image(img, l->name)) == NULL)
			continue;
		json_array_append_new(in, json_pack("{s:O, s:O}", "image",
		    json_object_get(img, "name"), "version",
		    json_object_get(found, "version")));
		if (strcmp(json_string_value(json_object_get(img, "name")),
		    l->image) == 0)
			json_object_set(o, "version", json_object_get(found,
			    "version"));
	}
	json_object_set_new(o, "images", in);
	return o;
}

static void
image_text(struct evbuffer *b, json_t *img)
{
	json_t		*d = json_object_get(img, "digest");
	const char	*err;

	evbuffer_add_printf(b, "image %s (%s%s%.19s)",
	    json_string_value(json_object_get(img, "name")),
	    json_string_value(json_object_get(img, "type")),
	    json_is_string(d) ? ", " : "",
	    json_is_string(d) ? json_string_value(d) : "");
	err = json_string_value(json_object_get(img, "probe_error"));
	if (err != NULL)
		evbuffer_add_printf(b, ": languages unknown: %s", err);
	evbuffer_add(b, "\n", 1);
}

static void
languages_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct language	*l;
	struct evbuffer	*b;
	json_t		*list, *img, *found;
	size_t		 i, j;
	char		*text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "list_languages");
		op_free(op);
		free(s);
		return;
	}
	list = json_array();
	b = evbuffer_new();
	json_array_foreach(op->images, i, img) {
		image_text(b, img);
		TAILQ_FOREACH(l, &mcpd_conf->languages, entry) {
			if ((found = lang_in_image(img, l->name)) == NULL)
				continue;
			evbuffer_add_printf(b, "  %s: %s; saved as %s%s",
			    l->name, json_string_value(json_object_get(found,
			    "version")), l->file, l->build != NULL ?
			    ", compiled" : "");
			for (j = 0; j < l->naliases; j++)
				evbuffer_add_printf(b, "%s%s", j == 0 ?
				    "; also " : ", ", l->aliases[j]);
			evbuffer_add(b, "\n", 1);
		}
	}
	TAILQ_FOREACH(l, &mcpd_conf->languages, entry)
		json_array_append_new(list, lang_json(l, op->images));
	evbuffer_add_printf(b, "run_code runs a language in the first image "
	    "listed for it unless you name another with 'image'.\n");
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:o, s:O}",
	    "languages", list, "images", op->images), 0);
	free(text);
	op_free(op);
	free(s);
}

static void
images_start(struct mcp_req *req, json_t *jargs, uint32_t flags,
    op_fn done, const char *what)
{
	static const char *const none[] = { NULL };
	struct args		 a;
	struct sbx_images	 si;
	struct evbuffer		*b;

	if (args_init(&a, jargs, none) == -1) {
		args_tool_error(req, &a);
		return;
	}
	memset(&si, 0, sizeof(si));
	op_ref(&si.ref, req, NULL);
	si.flags = flags;
	b = evbuffer_new();
	evbuffer_add(b, &si, sizeof(si));
	simple_start(req, IMSG_SBX_IMAGES, b, done, what);
}

void
t_languages(struct mcp_req *req, json_t *jargs)
{
	images_start(req, jargs, SBX_IMAGES_LANGS, languages_done,
	    "list_languages");
}

static void
images_done(struct op *op)
{
	struct simple	*s = op->arg;
	struct mcp_req	*req = simple_end(s);
	struct evbuffer	*b;
	json_t		*img;
	size_t		 i;
	char		*text;

	if (op->final != IMSG_SBX_DONE) {
		op_tool_error(req, op, "list_images");
		op_free(op);
		free(s);
		return;
	}
	b = evbuffer_new();
	json_array_foreach(op->images, i, img) {
		json_object_del(img, "languages");
		image_text(b, img);
	}
	text = buf_text(b);
	evbuffer_free(b);
	tool_result(req, text_content(text), json_pack("{s:O}", "images",
	    op->images), 0);
	free(text);
	op_free(op);
	free(s);
}

void
t_images(struct mcp_req *req, json_t *jargs)
{
	images_start(req, jargs, 0, images_done, "list_images");
}
